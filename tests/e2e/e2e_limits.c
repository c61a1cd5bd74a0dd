/*
 * e2e_limits.c - limits, bad input and security over the wire: protocol
 * errors (bulk/multibulk length, inline size) answered with Redis's text and
 * a closed connection, query and output buffer limits, maxclients, idle
 * timeout, requirepass/AUTH/HELLO AUTH and the unauthenticated size limits,
 * SIGTERM/SIGINT (answer, then exit 0), SIGPIPE, daemonize + pidfile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "e2e.h"

static void no_setup(void)
{
    if (!e2e_binary()) {
        cr_skip_test("no server under test: build cudis-server or set CUDIS_E2E_SERVER");
    }
}

TestSuite(limits, .init = no_setup, .fini = e2e_teardown, .timeout = 60);
TestSuite(proto, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);
TestSuite(auth, .init = no_setup, .fini = e2e_teardown, .timeout = 60);
TestSuite(lifecycle, .init = no_setup, .fini = e2e_teardown, .timeout = 60);

static void start(const char *const *opts)
{
    cr_assert(e2e_start(&e2e_srv, opts) == 0, "server did not start");
}

/* A fresh connection still works. */
static void still_serving(void)
{
    redisContext *c = e2e_connect();
    CHECK_STATUS(c, "PONG", "PING");
    redisFree(c);
}

/* Send raw bytes on a new connection; expect one error reply, then close. */
static void proto_error(const char *file, int line, const void *data, size_t len, const char *want)
{
    int fd = e2e_raw_open(e2e_srv.port);
    e2e_raw_send(fd, data, len); /* may fail half-way when the server closes first */
    size_t n = 0;
    char *got = e2e_raw_reply(fd, &n, 5000);
    cr_assert(got && strcmp(got, want) == 0, "%s:%d: expected \"%s\", got \"%s\"", file, line, want,
              got ? got : "(no reply)");
    free(got);
    cr_assert(e2e_raw_closed(fd, 3000), "%s:%d: connection not closed after a protocol error", file,
              line);
    close(fd);
}
#define PROTO_ERROR(data, len, want) proto_error(__FILE__, __LINE__, data, len, want)

/* ------------------------------------------------------------------------
 * Protocol errors
 * ---------------------------------------------------------------------- */

Test(proto, bad_lengths)
{
    const char *s;
    s = "*1\r\n$abc\r\n";
    PROTO_ERROR(s, strlen(s), "-ERR Protocol error: invalid bulk length\r\n");
    s = "*1\r\n$-5\r\n";
    PROTO_ERROR(s, strlen(s), "-ERR Protocol error: invalid bulk length\r\n");
    s = "*1\r\nfoo\r\n";
    PROTO_ERROR(s, strlen(s), "-ERR Protocol error: expected '$', got 'f'\r\n");
    s = "*abc\r\n";
    PROTO_ERROR(s, strlen(s), "-ERR Protocol error: invalid multibulk length\r\n");
    s = "*3000000000\r\n";
    PROTO_ERROR(s, strlen(s), "-ERR Protocol error: invalid multibulk length\r\n");
    s = "*2\r\n$3\r\nGET\r\n$600000000\r\n";
    PROTO_ERROR(s, strlen(s), "-ERR Protocol error: invalid bulk length\r\n");
    /* commands before the bad one in the same write are answered */
    s = "*1\r\n$4\r\nPING\r\n*1\r\n$x\r\n";
    int fd = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(fd, s, "+PONG\r\n");
    RAW_EXPECT(fd, "", "-ERR Protocol error: invalid bulk length\r\n");
    cr_assert(e2e_raw_closed(fd, 3000));
    close(fd);
    /* empty and negative multibulk counts are ignored */
    fd = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(fd, "*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n", "+PONG\r\n");
    close(fd);
    still_serving();
}

Test(proto, too_big_inline_and_count)
{
    size_t n = 70000;
    char *b = malloc(n);
    memset(b, 'a', n);
    PROTO_ERROR(b, n, "-ERR Protocol error: too big inline request\r\n");
    b[0] = '*';
    memset(b + 1, '1', n - 1);
    PROTO_ERROR(b, n, "-ERR Protocol error: too big mbulk count string\r\n");
    b[0] = '*';
    b[1] = '1';
    b[2] = '\r';
    b[3] = '\n';
    b[4] = '$';
    memset(b + 5, '1', n - 5);
    PROTO_ERROR(b, n, "-ERR Protocol error: too big bulk count string\r\n");
    free(b);
    still_serving();
}

Test(limits, proto_max_bulk_len)
{
    const char *o[] = {"--proto-max-bulk-len", "1mb", NULL};
    start(o);
    const char *s = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n";
    PROTO_ERROR(s, strlen(s), "-ERR Protocol error: invalid bulk length\r\n");
    /* exactly the limit is fine */
    redisContext *c = e2e_connect();
    size_t n = 1048576;
    char *v = malloc(n);
    memset(v, 'v', n);
    CHECK_OK(c, "SET k %b", v, n);
    CHECK_INT(c, (long long)n, "STRLEN k");
    /* values built by APPEND/SETRANGE are held to the same limit */
    CHECK_ERR(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)", "APPEND k x");
    CHECK_ERR(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
              "SETRANGE k 1048576 x");
    CHECK_INT(c, (long long)n, "STRLEN k");
    free(v);
    redisFree(c);
}

Test(limits, query_buffer_limit)
{
    const char *o[] = {"--client-query-buffer-limit", "1mb", NULL};
    start(o);
    int fd = e2e_raw_open(e2e_srv.port);
    const char *h = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n";
    e2e_raw_send(fd, h, strlen(h));
    size_t n = 2000000;
    char *v = malloc(n + 2);
    memset(v, 'q', n);
    memcpy(v + n, "\r\n", 2);
    e2e_raw_send(fd, v, n + 2); /* may fail once the server has closed */
    free(v);
    size_t rl;
    char *r = e2e_raw_reply(fd, &rl, 3000);
    cr_assert(r == NULL, "a request over client-query-buffer-limit was answered: %s", r);
    cr_assert(e2e_raw_closed(fd, 3000), "connection over client-query-buffer-limit not closed");
    close(fd);
    redisContext *c = e2e_connect();
    CHECK_INT(c, 0, "EXISTS k");
    /* under the limit is fine */
    CHECK_OK(c, "SET k %b", "0123456789", (size_t)10);
    redisFree(c);
}

/* A client that does not read its replies is disconnected at the hard
 * output buffer limit; the others are not affected. */
Test(limits, output_buffer_limit)
{
    const char *o[] = {"--client-output-buffer-limit", "normal 1mb 1mb 0", NULL};
    start(o);
    redisContext *c = e2e_connect();
    size_t n = 100000;
    char *v = malloc(n);
    memset(v, 'o', n);
    CHECK_OK(c, "SET big %b", v, n);
    free(v);
    int fd = e2e_raw_open(e2e_srv.port);
    int small = 0;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small,
               sizeof(small)); /* the kernel rounds up to its minimum */
    const char *get = "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n";
    int sent = 0;
    for (int i = 0; i < 500; i++) {
        if (!e2e_raw_send(fd, get, strlen(get))) {
            break;
        }
        sent++;
    }
    e2e_sleep_ms(500);
    CHECK_STATUS(c, "PONG", "PING");
    /* drain what the kernel held; the server must have closed before 500 replies */
    size_t total = 0;
    char buf[65536];
    bool closed = false;
    for (;;) {
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET)) {
            closed = true;
            break;
        }
        if (r < 0) {
            break; /* receive timeout: still open */
        }
        total += (size_t)r;
    }
    cr_assert(closed, "slow reader not disconnected (%d requests sent, %zu bytes read)", sent,
              total);
    cr_assert(total < (size_t)500 * n, "all %zu bytes arrived: no limit applied", total);
    close(fd);
    CHECK_INT(c, (long long)n, "STRLEN big");
    redisFree(c);
}

Test(limits, maxclients)
{
    const char *o[] = {"--maxclients", "3", NULL};
    start(o);
    redisContext *c[3];
    for (int i = 0; i < 3; i++) {
        /* the readiness probe's connection may not be gone yet: retry */
        for (int tries = 0;; tries++) {
            c[i] = e2e_connect();
            redisReply *r = e2e_cmd(c[i], "PING");
            bool full = r->type == REDIS_REPLY_ERROR && strstr(r->str, "max number of clients");
            cr_assert(full || (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0),
                      "PING on connection %d: %s", i, e2e_reply_str(r));
            freeReplyObject(r);
            if (!full) {
                break;
            }
            redisFree(c[i]);
            cr_assert(tries < 50, "connection %d of 3 refused for 5 s with maxclients 3", i);
            e2e_sleep_ms(100);
        }
    }
    int fd = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(fd, NULL, "-ERR max number of clients reached\r\n");
    cr_assert(e2e_raw_closed(fd, 3000), "over-limit connection not closed");
    close(fd);
    for (int i = 0; i < 3; i++) {
        CHECK_STATUS(c[i], "PONG", "PING");
    }
    redisFree(c[2]);
    e2e_sleep_ms(200);
    redisContext *d = e2e_connect();
    CHECK_STATUS(d, "PONG", "PING");
    redisFree(d);
    redisFree(c[0]);
    redisFree(c[1]);
}

Test(limits, idle_timeout)
{
    const char *o[] = {"--timeout", "1", NULL};
    start(o);
    int idle = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(idle, "PING\r\n", "+PONG\r\n");
    redisContext *busy = e2e_connect();
    int64_t t0 = e2e_now_ms();
    bool closed = false;
    while (e2e_now_ms() - t0 < 5000) {
        CHECK_STATUS(busy, "PONG", "PING");
        if (e2e_raw_closed(idle, 250)) {
            closed = true;
            break;
        }
    }
    int64_t took = e2e_now_ms() - t0;
    cr_assert(closed, "idle connection still open after 5 s with timeout 1");
    cr_assert(took >= 900, "idle connection closed too early (%lld ms)", (long long)took);
    close(idle);
    /* the busy one was kept */
    CHECK_STATUS(busy, "PONG", "PING");
    redisFree(busy);
}

Test(limits, many_connections)
{
    start(NULL);
    enum { N = 200 };
    redisContext *c[N];
    for (int i = 0; i < N; i++) {
        c[i] = i % 2 ? e2e_connect() : e2e_connect_unix();
        redisAppendCommand(c[i], "SET conn:%d %d", i, i);
    }
    for (int i = 0; i < N; i++) {
        redisReply *r;
        cr_assert(redisGetReply(c[i], (void **)&r) == REDIS_OK, "connection %d: %s", i,
                  c[i]->errstr);
        freeReplyObject(r);
    }
    for (int i = 0; i < N; i++) {
        CHECK_STR(c[i], "7", "GET conn:7");
        redisFree(c[i]);
    }
    redisContext *d = e2e_connect();
    CHECK_INT(d, N, "DBSIZE");
    redisFree(d);
}

/* A cache over its memory budget evicts: every write is acknowledged, some
 * keys go, and a key is either gone or has its latest value. */
Test(limits, eviction)
{
    const char *redis_o[] = {"--maxmemory", "16mb", "--maxmemory-policy", "allkeys-lru", NULL};
    const char *cudis_o[] = {"--maxmemory", "16mb", NULL};
    start(e2e_is_redis() ? redis_o : cudis_o);
    redisContext *c = e2e_connect();
    enum { KEYS = 64000, VLEN = 1000 };
    static char v[VLEN];
    for (int round = 0; round < KEYS / 1000; round++) {
        for (int i = round * 1000; i < (round + 1) * 1000; i++) {
            memset(v, 'a' + i % 26, sizeof(v));
            snprintf(v, 16, "%d:", i);
            redisAppendCommand(c, "SET ev:%d %b", i, v, sizeof(v));
        }
        for (int i = 0; i < 1000; i++) {
            redisReply *r;
            cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK, "SET: %s", c->errstr);
            cr_assert(r->type == REDIS_REPLY_STATUS, "SET over maxmemory: %s", e2e_reply_str(r));
            freeReplyObject(r);
        }
    }
    redisReply *r = e2e_cmd(c, "DBSIZE");
    cr_assert(r->integer > 1000 && r->integer < KEYS,
              "DBSIZE %lld after writing %d x %d B into 16mb", r->integer, KEYS, VLEN);
    freeReplyObject(r);
    int present = 0;
    for (int i = 0; i < KEYS; i += 16) {
        r = e2e_cmd(c, "GET ev:%d", i);
        if (r->type == REDIS_REPLY_STRING) {
            memset(v, 'a' + i % 26, sizeof(v));
            snprintf(v, 16, "%d:", i);
            cr_assert(r->len == VLEN && memcmp(r->str, v, VLEN) == 0, "ev:%d has a wrong value", i);
            present++;
        } else {
            cr_assert_eq(r->type, REDIS_REPLY_NIL, "GET ev:%d: %s", i, e2e_reply_str(r));
        }
        freeReplyObject(r);
    }
    cr_assert(present > 0, "no key survived");
    CHECK_OK(c, "SET after-eviction ok");
    CHECK_STR(c, "ok", "GET after-eviction");
    redisFree(c);
}

/* ------------------------------------------------------------------------
 * AUTH
 * ---------------------------------------------------------------------- */

static const char *const auth_opts[] = {"--requirepass", "secret", NULL};

Test(auth, noauth_and_wrongpass)
{
    start(auth_opts);
    redisContext *c = e2e_connect();
    CHECK_ERR(c, "NOAUTH Authentication required.", "GET k");
    CHECK_ERR(c, "NOAUTH Authentication required.", "PING");
    CHECK_ERR(c, "NOAUTH Authentication required.", "SET k v");
    CHECK_ERR(c, "NOAUTH Authentication required.", "CLIENT ID");
    /* Redis checks the command name before authentication */
    CHECK_ERR(c,
              "ERR unknown command 'NOSUCHCOMMAND', with args beginning with: ", "NOSUCHCOMMAND");
    CHECK_ERR(c, "WRONGPASS invalid username-password pair or user is disabled.", "AUTH wrong");
    CHECK_ERR(c, "WRONGPASS invalid username-password pair or user is disabled.",
              "AUTH default wrong");
    CHECK_ERR(c, "WRONGPASS invalid username-password pair or user is disabled.",
              "AUTH nobody secret");
    CHECK_ERR(c, "ERR syntax error", "AUTH a b c");
    CHECK_ERR(
        c,
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
        "AUTH "
        "<user> <pass> option can be used to authenticate the client and select the RESP protocol "
        "version at the same time",
        "HELLO 3");
    CHECK_OK(c, "AUTH secret");
    CHECK_OK(c, "SET k v");
    CHECK_STR(c, "v", "GET k");
    /* a failed AUTH later does not log the client out */
    CHECK_ERR(c, "WRONGPASS invalid username-password pair or user is disabled.", "AUTH wrong");
    CHECK_STR(c, "v", "GET k");
    redisFree(c);
    c = e2e_connect_unix();
    CHECK_ERR(c, "NOAUTH Authentication required.", "GET k");
    CHECK_OK(c, "AUTH default secret");
    CHECK_STR(c, "v", "GET k");
    redisFree(c);
    /* QUIT works before AUTH */
    int fd = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(fd, "*1\r\n$4\r\nQUIT\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "+OK\r\n");
    cr_assert(e2e_raw_closed(fd, 3000));
    close(fd);
}

Test(auth, hello_auth)
{
    start(auth_opts);
    int fd = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(fd, "*5\r\n$5\r\nHELLO\r\n$1\r\n2\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$5\r\nwrong\r\n",
               "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    RAW_EXPECT(fd, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "-NOAUTH Authentication required.\r\n");
    RAW_EXPECT(fd, "*4\r\n$5\r\nHELLO\r\n$1\r\n3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n",
               "-ERR Syntax error in HELLO option 'AUTH'\r\n");
    const char *hello =
        "*5\r\n$5\r\nHELLO\r\n$1\r\n3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$6\r\nsecret\r\n";
    cr_assert(e2e_raw_send(fd, hello, strlen(hello)));
    size_t n;
    char *r = e2e_raw_reply(fd, &n, 5000);
    cr_assert(r && strncmp(r, "%7\r\n$6\r\nserver\r\n", 16) == 0 && strstr(r, "proto\r\n:3\r\n"),
              "HELLO 3 AUTH: %s", r ? r : "(none)");
    free(r);
    RAW_EXPECT(fd, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "_\r\n");
    close(fd);
}

Test(auth, unauthenticated_size_limits)
{
    start(auth_opts);
    const char *s = "*20\r\n";
    PROTO_ERROR(s, strlen(s), "-ERR Protocol error: unauthenticated multibulk length\r\n");
    s = "*2\r\n$4\r\nAUTH\r\n$20000\r\n";
    PROTO_ERROR(s, strlen(s), "-ERR Protocol error: unauthenticated bulk length\r\n");
    /* the same sizes are fine once authenticated */
    redisContext *c = e2e_connect();
    CHECK_OK(c, "AUTH secret");
    CHECK_OK(c, "MSET a 1 b 2 c 3 d 4 e 5 f 6");
    static char v[20000];
    memset(v, 'x', sizeof(v));
    CHECK_OK(c, "SET big %b", v, sizeof(v));
    redisFree(c);
}

Test(auth, no_password_configured)
{
    start(NULL);
    redisContext *c = e2e_connect();
    CHECK_ERR(c,
              "ERR AUTH <password> called without any password configured for the default user. "
              "Are you sure "
              "your configuration is correct?",
              "AUTH foo");
    CHECK_OK(c, "AUTH default anything");
    /* requirepass set at run time applies to new connections */
    CHECK_OK(c, "CONFIG SET requirepass pw2");
    redisContext *d = e2e_connect();
    CHECK_ERR(d, "NOAUTH Authentication required.", "GET a");
    CHECK_OK(d, "AUTH pw2");
    CHECK_NIL(d, "GET a");
    redisFree(d);
    redisFree(c);
}

/* ------------------------------------------------------------------------
 * Signals, shutdown, daemonize
 * ---------------------------------------------------------------------- */

static int wait_exit(pid_t pid, int ms)
{
    int st = -1;
    int64_t end = e2e_now_ms() + ms;
    while (e2e_now_ms() < end) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            return st;
        }
        e2e_sleep_ms(5);
    }
    return -2;
}

static void signal_answers_then_exits(int sig)
{
    start(NULL);
    redisContext *c = e2e_connect();
    /* write 1000 commands without reading the replies */
    for (int i = 0; i < 1000; i++) {
        redisAppendCommand(c, "SET s:%d %d", i, i);
    }
    int done = 0;
    cr_assert(redisBufferWrite(c, &done) == REDIS_OK);
    while (!done) {
        cr_assert(redisBufferWrite(c, &done) == REDIS_OK);
    }
    /* wait until the server has taken them all (the replies may still be
     * queued), then signal */
    redisContext *watch = e2e_connect();
    long long n = 0;
    for (int tries = 0; tries < 500 && n < 1000; tries++) {
        redisReply *r = e2e_cmd(watch, "DBSIZE");
        n = r->integer;
        freeReplyObject(r);
        if (n < 1000) {
            e2e_sleep_ms(10);
        }
    }
    cr_assert_eq(n, 1000, "the server did not execute 1000 pipelined SETs in 5 s");
    redisFree(watch);
    kill(e2e_srv.pid, sig);
    for (int i = 0; i < 1000; i++) {
        redisReply *r;
        cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK, "reply %d lost at shutdown: %s", i,
                  c->errstr);
        cr_assert(r->type == REDIS_REPLY_STATUS, "reply %d: %s", i, e2e_reply_str(r));
        freeReplyObject(r);
    }
    int st = wait_exit(e2e_srv.pid, 10000);
    cr_assert(st != -2, "server still running 10 s after signal %d", sig);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status after signal %d: wait status %d",
              sig, st);
    e2e_srv.pid = 0;
    redisReply *r = redisCommand(c, "PING");
    cr_assert(r == NULL, "connection still answers after exit");
    redisFree(c);
    e2e_stop(&e2e_srv);
}

Test(lifecycle, sigterm)
{
    signal_answers_then_exits(SIGTERM);
}

Test(lifecycle, sigint)
{
    signal_answers_then_exits(SIGINT);
}

/* A client that vanishes with replies pending must not kill the server. */
Test(lifecycle, sigpipe_ignored)
{
    start(NULL);
    redisContext *c = e2e_connect();
    size_t n = 200000;
    char *v = malloc(n);
    memset(v, 'p', n);
    CHECK_OK(c, "SET big %b", v, n);
    free(v);
    for (int k = 0; k < 5; k++) {
        int fd = e2e_raw_open(e2e_srv.port);
        const char *get = "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n";
        for (int i = 0; i < 50; i++) {
            e2e_raw_send(fd, get, strlen(get));
        }
        close(fd);
    }
    e2e_sleep_ms(200);
    CHECK_STATUS(c, "PONG", "PING");
    redisFree(c);
}

Test(lifecycle, daemonize_pidfile)
{
    cr_assert(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    char pidfile[600];
    e2e_server *s = &e2e_srv;
    snprintf(s->dir, sizeof(s->dir), "/tmp/cudis-e2e-XXXXXX");
    cr_assert(mkdtemp(s->dir));
    snprintf(pidfile, sizeof(pidfile), "%s/server.pid", s->dir);
    const char *o[] = {"--daemonize", "yes", "--pidfile", pidfile, NULL};
    cr_assert(e2e_spawn(s, o) == 0);
    /* the process we started returns at once with status 0 */
    int st = wait_exit(s->pid, 10000);
    cr_assert(st != -2, "daemonizing process did not return");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "daemonizing process wait status %d", st);
    s->pid = 0;
    pid_t daemon = 0;
    int64_t end = e2e_now_ms() + 10000;
    while (e2e_now_ms() < end && daemon == 0) {
        FILE *f = fopen(pidfile, "r");
        if (f) {
            int p = 0;
            if (fscanf(f, "%d", &p) == 1) {
                daemon = p;
            }
            fclose(f);
        }
        if (!daemon) {
            e2e_sleep_ms(10);
        }
    }
    cr_assert(daemon > 0, "pidfile %s not written", pidfile);
    s->pid = daemon; /* our child now (subreaper): teardown can reap it */
    cr_assert(e2e_wait_ping(s->port, 10000), "daemon does not answer");
    redisContext *c = e2e_connect();
    redisReply *r = e2e_cmd(c, "INFO server");
    char want[64];
    snprintf(want, sizeof(want), "\r\nprocess_id:%d\r\n", daemon);
    cr_assert(strstr(r->str, want), "INFO process_id is not the pidfile's %d", daemon);
    freeReplyObject(r);
    CHECK_OK(c, "SET d 1");
    redisFree(c);
    kill(daemon, SIGTERM);
    st = wait_exit(daemon, 10000);
    cr_assert(st != -2, "daemon still running after SIGTERM");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "daemon wait status %d", st);
    s->pid = 0;
    cr_assert(access(pidfile, F_OK) != 0, "pidfile not removed at exit");
    e2e_stop(s);
}
