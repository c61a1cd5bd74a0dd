/*
 * e2e.h - harness for the end-to-end tests: starts the server under test on
 * a free 127.0.0.1 port and a unix socket in a fresh temporary folder, waits
 * until it answers PING, talks to it with hiredis 0.14 (RESP2) or a plain
 * socket (RESP3 and protocol-level checks), and stops it at the end.
 *
 * The server binary is $CUDIS_E2E_SERVER when set (e.g. /usr/bin/redis-server,
 * so the same suite checks itself against real Redis), else the path compiled
 * in from CMake (CUDIS_E2E_SERVER_DEFAULT, the cudis-server target). When a
 * binary whose name contains "redis-server" is under test, e2e_is_redis() is
 * true and redis-only options (--save "" --appendonly no) are added; otherwise
 * cudis-only ones are (--engine $CUDIS_E2E_ENGINE, default cpu).
 *
 * All functions run in the Criterion test process (one test per process).
 */
#ifndef E2E_H
#define E2E_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

/* One running server. */
typedef struct e2e_server {
    pid_t pid;      /* the process we forked (0 when none) */
    int port;       /* TCP port on 127.0.0.1 */
    char dir[128];  /* temporary folder: log, unix socket, pidfile */
    char sock[192]; /* unix socket path */
    char log[192];  /* stdout+stderr of the server */
} e2e_server;

/* The server the fixtures below start and stop. */
extern e2e_server e2e_srv;

/* The binary under test, or NULL when none is configured. */
const char *e2e_binary(void);
/* True when the binary under test is Redis (name contains "redis-server"). */
bool e2e_is_redis(void);

/* Start the server with extra options (NULL-terminated list, may be NULL) and
 * wait until it answers on TCP (any reply to PING counts: -NOAUTH too).
 * Returns 0, or -1 when it did not come up in 20 s (the log is printed). */
int e2e_start(e2e_server *s, const char *const *extra);
/* Fork and exec the server like e2e_start but do not wait for it. */
int e2e_spawn(e2e_server *s, const char *const *extra);
/* Wait until 127.0.0.1:port answers PING (any reply); false after ms. */
bool e2e_wait_ping(int port, int ms);
/* SIGTERM the server, wait up to 10 s (then SIGKILL), remove its folder.
 * Returns the wait status, or -1 when it had to be killed. */
int e2e_stop(e2e_server *s);
/* Print the last bytes of the server log on stderr. */
void e2e_print_log(const e2e_server *s);

/* Criterion fixtures: start e2e_srv with no extra options / stop it and
 * expect exit status 0. */
void e2e_setup(void);
void e2e_teardown(void);
/* Like e2e_setup, but skips the test unless cudis is under test (skip
 * before starting: a skipped test body does not run .fini). */
void e2e_setup_cudis(void);

/* hiredis connections to e2e_srv with 10 s timeouts; fail the test on error. */
redisContext *e2e_connect(void);
redisContext *e2e_connect_unix(void);
redisContext *e2e_connect_port(int port);

/* Send a command (hiredis format) and return the reply; fails the test when
 * the connection broke (reply NULL). Caller frees with freeReplyObject. */
redisReply *e2e_cmd(redisContext *c, const char *fmt, ...);
/* Same with an argv vector. */
redisReply *e2e_cmd_argv(redisContext *c, int argc, const char **argv, const size_t *lens);

/* Checked commands: run fmt, fail with file:line unless the reply matches. */
void e2e_check(const char *file, int line, redisContext *c, int type, const char *s, size_t slen,
               long long n, const char *fmt, ...);
void e2e_check_err_prefix(const char *file, int line, redisContext *c, const char *prefix,
                          const char *fmt, ...);
#define CHECK_OK(c, ...)                                                                           \
    e2e_check(__FILE__, __LINE__, c, REDIS_REPLY_STATUS, "OK", 2, 0, __VA_ARGS__)
#define CHECK_STATUS(c, want, ...)                                                                 \
    e2e_check(__FILE__, __LINE__, c, REDIS_REPLY_STATUS, want, strlen(want), 0, __VA_ARGS__)
#define CHECK_ERR(c, want, ...)                                                                    \
    e2e_check(__FILE__, __LINE__, c, REDIS_REPLY_ERROR, want, strlen(want), 0, __VA_ARGS__)
#define CHECK_ERR_PREFIX(c, prefix, ...)                                                           \
    e2e_check_err_prefix(__FILE__, __LINE__, c, prefix, __VA_ARGS__)
#define CHECK_STR(c, want, ...)                                                                    \
    e2e_check(__FILE__, __LINE__, c, REDIS_REPLY_STRING, want, strlen(want), 0, __VA_ARGS__)
#define CHECK_INT(c, want, ...)                                                                    \
    e2e_check(__FILE__, __LINE__, c, REDIS_REPLY_INTEGER, NULL, 0, want, __VA_ARGS__)
#define CHECK_NIL(c, ...) e2e_check(__FILE__, __LINE__, c, REDIS_REPLY_NIL, NULL, 0, 0, __VA_ARGS__)

/* The redis-cli style text of a reply, for messages (static buffer). */
const char *e2e_reply_str(const redisReply *r);
/* MULTI, PING, EXEC on c: true when the transaction ran (EXEC answered
 * [PONG]), false when a WATCH aborted it (nil); fails on anything else. */
bool e2e_tx_ran(redisContext *c);

/* ---- plain socket ---- */

/* Open a blocking TCP connection to 127.0.0.1:port (5 s send and receive
 * timeouts). */
int e2e_raw_open(int port);
/* Write all bytes; false when the peer is gone. */
bool e2e_raw_send(int fd, const void *buf, size_t len);
/* Read until one complete RESP2/RESP3 reply is buffered; returns it as a
 * malloc'd NUL-terminated string (bytes may contain NUL: *len tells), or NULL
 * on close/timeout. Leftover bytes stay in a per-fd buffer for the next call
 * (only one raw connection with leftovers at a time). */
char *e2e_raw_reply(int fd, size_t *len, int timeout_ms);
/* Send `req`, read one reply, fail unless it equals `want` byte for byte. */
void e2e_raw_expect(const char *file, int line, int fd, const char *req, const char *want);
#define RAW_EXPECT(fd, req, want) e2e_raw_expect(__FILE__, __LINE__, fd, req, want)
/* True when the peer closes the connection (EOF or reset) within ms;
 * bytes it sends before closing are discarded. */
bool e2e_raw_closed(int fd, int ms);
/* Length of the first complete RESP reply in buf, 0 if incomplete, -1 if
 * malformed. */
long e2e_resp_len(const char *buf, size_t len);

/* Milliseconds since the epoch. */
int64_t e2e_now_ms(void);
/* Sleep ms milliseconds. */
void e2e_sleep_ms(int ms);

#endif /* E2E_H */
