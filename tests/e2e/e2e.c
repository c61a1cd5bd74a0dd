/*
 * e2e.c - the end-to-end harness (see e2e.h): server start/stop, hiredis
 * helpers with checked replies, and plain-socket RESP reading.
 */
#define _GNU_SOURCE
#include "e2e.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#ifndef CUDIS_E2E_SERVER_DEFAULT
#define CUDIS_E2E_SERVER_DEFAULT ""
#endif

e2e_server e2e_srv;

/* LeakSanitizer off in the test processes (not in the server): a test that
 * fails an assertion leaves through longjmp without freeing its hiredis
 * contexts, and those reports would only bury the real failure. The server's
 * own leaks still count: they make its exit status non-zero, which the
 * teardown checks. Unused in builds without ASan. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return 1;
}

/* ------------------------------------------------------------------------
 * Time
 * ---------------------------------------------------------------------- */

int64_t e2e_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void e2e_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ------------------------------------------------------------------------
 * Server process
 * ---------------------------------------------------------------------- */

const char *e2e_binary(void)
{
    const char *env = getenv("CUDIS_E2E_SERVER");
    if (env && *env) {
        return env;
    }
    if (CUDIS_E2E_SERVER_DEFAULT[0]) {
        return CUDIS_E2E_SERVER_DEFAULT;
    }
    return NULL;
}

bool e2e_is_redis(void)
{
    const char *b = e2e_binary();
    return b && strstr(b, "redis-server") != NULL;
}

/* A port that was free a moment ago (bind port 0, read it, close). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &al) == 0) {
        port = ntohs(a.sin_port);
    }
    if (fd >= 0) {
        close(fd);
    }
    return port;
}

int e2e_spawn(e2e_server *s, const char *const *extra)
{
    const char *bin = e2e_binary();
    if (!bin) {
        return -1;
    }
    if (!s->dir[0]) {
        snprintf(s->dir, sizeof(s->dir), "/tmp/cudis-e2e-XXXXXX");
        if (!mkdtemp(s->dir)) {
            s->dir[0] = 0;
            return -1;
        }
    }
    snprintf(s->sock, sizeof(s->sock), "%s/s.sock", s->dir);
    snprintf(s->log, sizeof(s->log), "%s/server.log", s->dir);
    s->port = free_port();
    char port[16];
    snprintf(port, sizeof(port), "%d", s->port);

    const char *argv[64];
    int n = 0;
    argv[n++] = bin;
    if (e2e_is_redis()) {
        argv[n++] = "--save";
        argv[n++] = "";
        argv[n++] = "--appendonly";
        argv[n++] = "no";
    } else {
        const char *eng = getenv("CUDIS_E2E_ENGINE");
        argv[n++] = "--engine";
        argv[n++] = eng && *eng ? eng : "cpu";
        const char *pl = getenv("CUDIS_E2E_PIPELINE");
        if (pl && *pl) {
            argv[n++] = "--engine-pipeline";
            argv[n++] = pl;
        }
    }
    argv[n++] = "--port";
    argv[n++] = port;
    argv[n++] = "--bind";
    argv[n++] = "127.0.0.1";
    argv[n++] = "--unixsocket";
    argv[n++] = s->sock;
    for (int i = 0; extra && extra[i] && n < 62; i++) {
        argv[n++] = extra[i];
    }
    argv[n] = NULL;

    pid_t pid = fork();
    if (pid < 0) {
        return -1;
    }
    if (pid == 0) {
        /* The server dies with the test process, whatever happens to it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) {
            dup2(nul, 0);
            close(nul);
        }
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;
    return 0;
}

bool e2e_wait_ping(int port, int ms)
{
    int64_t end = e2e_now_ms() + ms;
    while (e2e_now_ms() < end) {
        struct timeval tv = {1, 0};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
        if (c && !c->err) {
            redisSetTimeout(c, tv);
            redisReply *r = redisCommand(c, "PING");
            if (r) {
                freeReplyObject(r);
                redisFree(c);
                return true;
            }
        }
        if (c) {
            redisFree(c);
        }
        e2e_sleep_ms(10);
    }
    return false;
}

void e2e_print_log(const e2e_server *s)
{
    FILE *f = fopen(s->log, "r");
    if (!f) {
        return;
    }
    char buf[4096];
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, sz > (long)sizeof(buf) - 1 ? sz - (long)sizeof(buf) + 1 : 0, SEEK_SET);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    fclose(f);
    fprintf(stderr, "---- server log (%s), last bytes:\n%s\n----\n", s->log, buf);
}

int e2e_start(e2e_server *s, const char *const *extra)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        if (e2e_spawn(s, extra) != 0) {
            return -1;
        }
        int64_t end = e2e_now_ms() + 20000;
        while (e2e_now_ms() < end) {
            int st;
            if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
                s->pid = 0;
                break; /* exited: maybe the port was taken; retry */
            }
            if (e2e_wait_ping(s->port, 50)) {
                return 0;
            }
        }
        if (s->pid) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
            s->pid = 0;
        }
    }
    e2e_print_log(s);
    return -1;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        return;
    }
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

int e2e_stop(e2e_server *s)
{
    int st = -1;
    bool had_pid = s->pid > 0;
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        int64_t end = e2e_now_ms() + 10000;
        bool done = false;
        while (e2e_now_ms() < end) {
            if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
                done = true;
                break;
            }
            e2e_sleep_ms(5);
        }
        if (!done) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
            st = -1;
        }
        s->pid = 0;
    }
    if (had_pid && st != 0 && s->dir[0]) {
        e2e_print_log(s);
    }
    if (s->dir[0]) {
        remove_dir(s->dir);
        s->dir[0] = 0;
    }
    return st;
}

void e2e_setup(void)
{
    if (!e2e_binary()) {
        cr_skip_test("no server under test: build cudis-server or set CUDIS_E2E_SERVER");
    }
    cr_assert(e2e_start(&e2e_srv, NULL) == 0, "server %s did not start", e2e_binary());
}

void e2e_setup_cudis(void)
{
    if (e2e_is_redis()) {
        cr_skip_test("cudis-specific");
    }
    e2e_setup();
}

void e2e_teardown(void)
{
    if (e2e_srv.pid > 0) {
        int st = e2e_stop(&e2e_srv);
        cr_expect(st == 0, "server did not exit 0 on SIGTERM (wait status %d)", st);
    }
}

/* ------------------------------------------------------------------------
 * hiredis helpers
 * ---------------------------------------------------------------------- */

redisContext *e2e_connect_port(int port)
{
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    cr_assert(c && !c->err, "connect to 127.0.0.1:%d failed: %s", port, c ? c->errstr : "oom");
    redisSetTimeout(c, tv);
    return c;
}

redisContext *e2e_connect(void)
{
    return e2e_connect_port(e2e_srv.port);
}

redisContext *e2e_connect_unix(void)
{
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectUnixWithTimeout(e2e_srv.sock, tv);
    cr_assert(c && !c->err, "connect to %s failed: %s", e2e_srv.sock, c ? c->errstr : "oom");
    redisSetTimeout(c, tv);
    return c;
}

redisReply *e2e_cmd(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    cr_assert(r != NULL, "command '%s': connection error: %s", fmt, c->errstr);
    return r;
}

redisReply *e2e_cmd_argv(redisContext *c, int argc, const char **argv, const size_t *lens)
{
    redisReply *r = redisCommandArgv(c, argc, argv, lens);
    cr_assert(r != NULL, "command '%s': connection error: %s", argv[0], c->errstr);
    return r;
}

static const char *type_name(int t)
{
    switch (t) {
    case REDIS_REPLY_STRING: return "bulk";
    case REDIS_REPLY_ARRAY: return "array";
    case REDIS_REPLY_INTEGER: return "integer";
    case REDIS_REPLY_NIL: return "nil";
    case REDIS_REPLY_STATUS: return "status";
    case REDIS_REPLY_ERROR: return "error";
    default: return "?";
    }
}

static void describe(const redisReply *r, char *buf, size_t cap)
{
    switch (r->type) {
    case REDIS_REPLY_INTEGER: snprintf(buf, cap, "(integer) %lld", r->integer); break;
    case REDIS_REPLY_NIL: snprintf(buf, cap, "(nil)"); break;
    case REDIS_REPLY_ARRAY: snprintf(buf, cap, "(array of %zu)", r->elements); break;
    default: {
        size_t n = r->len < 200 ? r->len : 200;
        char tmp[256];
        for (size_t i = 0; i < n; i++) {
            unsigned char ch = (unsigned char)r->str[i];
            tmp[i] = (ch >= 32 && ch < 127) ? (char)ch : '.';
        }
        tmp[n] = 0;
        snprintf(buf, cap, "(%s) \"%s\"%s", type_name(r->type), tmp, r->len > 200 ? "..." : "");
    }
    }
}

const char *e2e_reply_str(const redisReply *r)
{
    static char buf[320];
    if (!r) {
        return "(no reply)";
    }
    describe(r, buf, sizeof(buf));
    return buf;
}

void e2e_check(const char *file, int line, redisContext *c, int type, const char *s, size_t slen,
               long long n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    cr_assert(r != NULL, "%s:%d: '%s': connection error: %s", file, line, fmt, c->errstr);
    bool ok = r->type == type;
    if (ok && type == REDIS_REPLY_INTEGER) {
        ok = r->integer == n;
    } else if (ok && s) {
        ok = r->len == slen && memcmp(r->str, s, slen) == 0;
    }
    if (!ok) {
        char got[320];
        describe(r, got, sizeof(got));
        freeReplyObject(r);
        if (type == REDIS_REPLY_INTEGER) {
            cr_assert_fail("%s:%d: '%s': expected (integer) %lld, got %s", file, line, fmt, n, got);
        } else {
            cr_assert_fail("%s:%d: '%s': expected (%s) \"%s\", got %s", file, line, fmt,
                           type_name(type), s ? s : "", got);
        }
    }
    freeReplyObject(r);
}

void e2e_check_err_prefix(const char *file, int line, redisContext *c, const char *prefix,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    cr_assert(r != NULL, "%s:%d: '%s': connection error: %s", file, line, fmt, c->errstr);
    bool ok = r->type == REDIS_REPLY_ERROR && strncmp(r->str, prefix, strlen(prefix)) == 0;
    if (!ok) {
        char got[320];
        describe(r, got, sizeof(got));
        freeReplyObject(r);
        cr_assert_fail("%s:%d: '%s': expected an error starting \"%s\", got %s", file, line, fmt,
                       prefix, got);
    }
    freeReplyObject(r);
}

/* ------------------------------------------------------------------------
 * Plain socket
 * ---------------------------------------------------------------------- */

int e2e_raw_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "raw connect to port %d: %s",
              port, strerror(errno));
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
               sizeof(tv)); /* a server that stops reading fails the send */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

bool e2e_raw_send(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return false;
        }
        p += w;
        len -= (size_t)w;
    }
    return true;
}

/* Length of a CRLF-terminated line starting at buf (including CRLF), 0 if
 * not complete. */
static long line_len(const char *buf, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++) {
        if (buf[i] == '\r' && buf[i + 1] == '\n') {
            return (long)i + 2;
        }
    }
    return 0;
}

long e2e_resp_len(const char *buf, size_t len)
{
    if (len == 0) {
        return 0;
    }
    long l = line_len(buf, len);
    if (l == 0) {
        return 0;
    }
    char t = buf[0];
    long long n = strtoll(buf + 1, NULL, 10);
    switch (t) {
    case '+':
    case '-':
    case ':':
    case '_':
    case ',':
    case '#':
    case '(': return l;
    case '$':
    case '=':
    case '!':
        if (n < 0) {
            return l;
        }
        if ((size_t)l + (size_t)n + 2 > len) {
            return 0;
        }
        return l + (long)n + 2;
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
        if (n < 0) {
            return l;
        }
        long long items = (t == '%' || t == '|') ? 2 * n : n;
        long off = l;
        for (long long i = 0; i < items; i++) {
            long e = e2e_resp_len(buf + off, len - (size_t)off);
            if (e <= 0) {
                return e;
            }
            off += e;
        }
        if (t == '|') {
            /* attribute: the reply it annotates follows */
            long e = e2e_resp_len(buf + off, len - (size_t)off);
            return e <= 0 ? e : off + e;
        }
        return off;
    }
    default: return -1;
    }
}

static struct {
    int fd;
    char *buf;
    size_t len, cap;
} left = {-1, NULL, 0, 0};

char *e2e_raw_reply(int fd, size_t *len, int timeout_ms)
{
    if (left.fd != fd) {
        left.fd = fd;
        left.len = 0;
    }
    int64_t end = e2e_now_ms() + timeout_ms;
    for (;;) {
        long n = e2e_resp_len(left.buf ? left.buf : "", left.len);
        if (n < 0) {
            return NULL;
        }
        if (n > 0) {
            char *out = malloc((size_t)n + 1);
            memcpy(out, left.buf, (size_t)n);
            out[n] = 0;
            memmove(left.buf, left.buf + n, left.len - (size_t)n);
            left.len -= (size_t)n;
            if (len) {
                *len = (size_t)n;
            }
            return out;
        }
        int wait = (int)(end - e2e_now_ms());
        if (wait <= 0) {
            return NULL;
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, wait) <= 0) {
            return NULL;
        }
        if (left.cap - left.len < 65536) {
            left.cap = left.cap ? left.cap * 2 : 131072;
            left.buf = realloc(left.buf, left.cap);
        }
        ssize_t r = recv(fd, left.buf + left.len, left.cap - left.len, 0);
        if (r <= 0) {
            return NULL;
        }
        left.len += (size_t)r;
    }
}

static void printable(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\r') {
            out[o++] = '\\';
            out[o++] = 'r';
        } else if (ch == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else if (ch >= 32 && ch < 127) {
            out[o++] = (char)ch;
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
        }
    }
    out[o < cap ? o : cap - 1] = 0;
}

void e2e_raw_expect(const char *file, int line, int fd, const char *req, const char *want)
{
    if (req && *req) {
        cr_assert(e2e_raw_send(fd, req, strlen(req)), "%s:%d: send failed", file, line);
    }
    size_t n = 0;
    char *got = e2e_raw_reply(fd, &n, 5000);
    char a[600], b[600], q[300];
    printable(want, strlen(want), a, sizeof(a));
    printable(req ? req : "", req ? strlen(req) : 0, q, sizeof(q));
    if (!got) {
        cr_assert_fail("%s:%d: sent \"%s\": expected \"%s\", got no complete reply", file, line, q,
                       a);
    }
    printable(got, n, b, sizeof(b));
    bool ok = n == strlen(want) && memcmp(got, want, n) == 0;
    free(got);
    cr_assert(ok, "%s:%d: sent \"%s\": expected \"%s\", got \"%s\"", file, line, q, a, b);
}

bool e2e_raw_closed(int fd, int ms)
{
    if (left.fd == fd) {
        left.len = 0;
    }
    int64_t end = e2e_now_ms() + ms;
    char buf[4096];
    for (;;) {
        int wait = (int)(end - e2e_now_ms());
        if (wait <= 0) {
            return false;
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, wait) <= 0) {
            return false;
        }
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET)) {
            return true;
        }
        if (r < 0 && errno != EINTR && errno != EAGAIN) {
            return true;
        }
    }
}

bool e2e_tx_ran(redisContext *c)
{
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "PING");
    redisReply *r = e2e_cmd(c, "EXEC");
    bool ran = r->type == REDIS_REPLY_ARRAY;
    cr_assert(r->type == REDIS_REPLY_NIL ||
                  (ran && r->elements == 1 && r->element[0]->type == REDIS_REPLY_STATUS &&
                   strcmp(r->element[0]->str, "PONG") == 0),
              "EXEC: %s", e2e_reply_str(r));
    freeReplyObject(r);
    return ran;
}
