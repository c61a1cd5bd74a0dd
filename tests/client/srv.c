/*
 * srv.c - starts and stops the server the client tests talk to (srv.h).
 * The binary is $CUDIS_CLIENT_SERVER, else the built cudis-server
 * (CUDIS_SERVER_BIN, set by CMake when that target exists), else
 * /usr/bin/redis-server.
 */
#include "srv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CUDIS_SERVER_BIN
#define CUDIS_SERVER_BIN "/usr/bin/redis-server"
#endif

int srv_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

/* Ready when PING answers PONG (or NOAUTH: it is up, with a password). */
static bool is_ready(int port)
{
    struct timeval tv = {0, 200000};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    bool ok = false;
    if (c && !c->err) {
        redisSetTimeout(c, tv);
        redisReply *r = redisCommand(c, "PING");
        ok = r && ((r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0) ||
                   (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOAUTH", 6) == 0));
        if (r) {
            freeReplyObject(r);
        }
    }
    if (c) {
        redisFree(c);
    }
    return ok;
}

static int start_once(srv *s, const char *password, const char *maxmemory)
{
    static int seq;
    s->port = srv_free_port();
    if (s->port <= 0) {
        return -1;
    }
    snprintf(s->sock, sizeof(s->sock), "/tmp/cudis-ct-%d-%d.sock", (int)getpid(), seq++);
    unlink(s->sock);
    char port[16];
    snprintf(port, sizeof(port), "%d", s->port);
    const char *argv[40];
    int n = 0;
    argv[n++] = s->bin;
    argv[n++] = "--port";
    argv[n++] = port;
    argv[n++] = "--bind";
    argv[n++] = "127.0.0.1";
    argv[n++] = "--unixsocket";
    argv[n++] = s->sock;
    if (password) {
        argv[n++] = "--requirepass";
        argv[n++] = password;
    }
    if (maxmemory) {
        argv[n++] = "--maxmemory";
        argv[n++] = maxmemory;
    }
    if (s->is_redis) {
        argv[n++] = "--save";
        argv[n++] = "";
        argv[n++] = "--appendonly";
        argv[n++] = "no";
        argv[n++] = "--maxmemory-policy";
        argv[n++] = "allkeys-lru";
        argv[n++] = "--dir"; /* never load someone's dump.rdb from the cwd */
        argv[n++] = "/tmp";
        argv[n++] = "--dbfilename";
        argv[n++] = "cudis-client-test-none.rdb";
    } else {
        argv[n++] = "--engine";
        argv[n++] = "cpu";
    }
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0) {
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a crashed test */
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull && !getenv("CUDIS_CLIENT_SERVER_LOG")) {
            dup2(fileno(devnull), 1);
            dup2(fileno(devnull), 2);
        }
        execv(s->bin, (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;
    for (int i = 0; i < 500; i++) { /* up to 5 s */
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            s->pid = 0;
            return -1;
        }
        if (access(s->sock, F_OK) == 0 && is_ready(s->port)) {
            return 0;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    srv_stop(s);
    return -1;
}

int srv_start(srv *s, const char *password, const char *maxmemory)
{
    memset(s, 0, sizeof(*s));
    const char *bin = getenv("CUDIS_CLIENT_SERVER");
    snprintf(s->bin, sizeof(s->bin), "%s", bin && *bin ? bin : CUDIS_SERVER_BIN);
    const char *base = strrchr(s->bin, '/');
    s->is_redis = strstr(base ? base : s->bin, "redis") != NULL;
    for (int attempt = 0; attempt < 3; attempt++) { /* a port may be taken meanwhile */
        if (start_once(s, password, maxmemory) == 0) {
            return 0;
        }
    }
    fprintf(stderr, "srv: cannot start %s\n", s->bin);
    return -1;
}

void srv_stop(srv *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
    if (s->sock[0]) {
        unlink(s->sock);
    }
}
