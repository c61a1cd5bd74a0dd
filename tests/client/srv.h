/*
 * srv.h - test helper: start a real server (cudis-server, or redis-server
 * with CUDIS_CLIENT_SERVER=/usr/bin/redis-server) on a free loopback port
 * and a unix socket, wait until it answers, and stop it.
 */
#ifndef TESTS_CLIENT_SRV_H
#define TESTS_CLIENT_SRV_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct srv {
    pid_t pid;
    int port;
    char sock[108];
    char bin[512];
    bool is_redis;
} srv;

/* Start the server with optional password and maxmemory (e.g. "64mb");
 * 0 on success. */
int srv_start(srv *s, const char *password, const char *maxmemory);

/* Stop (SIGKILL) and reap it; safe to call twice. */
void srv_stop(srv *s);

/* A loopback port with nothing listening on it (for connect failures). */
int srv_free_port(void);

#endif
