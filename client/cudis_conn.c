/*
 * cudis_conn.c - one client connection: connect over TCP or a unix socket
 * (hiredis does the connecting), AUTH, then all I/O ourselves on a
 * non-blocking socket with poll(), so every wait is bounded by the
 * connection's timeout. Requests are RESP-encoded into one output buffer;
 * replies are parsed by a hiredis reader. Writing and reading interleave, so
 * arbitrarily long pipelines cannot deadlock on full socket buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cudis_internal.h"
#include "cudis_time.h"

#define CUDIS_IBUF_BYTES (256 * 1024)
/* The longest array a reply may announce: hiredis 0.14 allocates what
 * "*N" says before any element arrives, so a broken or hostile server
 * could make the client allocate gigabytes with a few bytes (fuzz_reply
 * found "*777777775"). 16M elements (128 MB of pointers) is more than any
 * reply cudis or Redis sends a client of this library. */
#define CUDIS_REPLY_MAX_ELEMENTS (1 << 24)
#define CUDIS_PRODUCE_LOW (256 * 1024) /* encode more while less than this is pending */

/* hiredis's own reply objects, with the array length checked first. */
static redisReplyObjectFunctions plain_fns;
static void *(*hiredis_array)(const redisReadTask *, int);
static pthread_once_t plain_once = PTHREAD_ONCE_INIT;
static bool plain_ready;

static void *checked_array(const redisReadTask *task, int elements)
{
    if (elements > CUDIS_REPLY_MAX_ELEMENTS) {
        return NULL; /* the reader fails: the connection reports an error */
    }
    return hiredis_array(task, elements);
}

static void plain_fns_init(void)
{
    redisReader *r = redisReaderCreate(); /* its table is hiredis's (static) */
    if (r != NULL) {
        plain_fns = *r->fn;
        hiredis_array = plain_fns.createArray;
        plain_fns.createArray = checked_array;
        plain_ready = true;
        redisReaderFree(r);
    }
}

static redisReader *plain_reader_create(void)
{
    pthread_once(&plain_once, plain_fns_init);
    return plain_ready ? redisReaderCreateWithFunctions(&plain_fns) : NULL;
}

const char *cudis_client_strerror(int err)
{
    switch (err) {
    case CUDIS_E_SERVER: return "the server answered with an error";
    case CUDIS_E_AUTH: return "authentication failed or required";
    default: return cudis_strerror(err);
    }
}

void cudis_options_default(cudis_options *o)
{
    memset(o, 0, sizeof(*o));
    o->host = "127.0.0.1";
    o->port = 6379;
    o->connect_timeout_ms = 1000;
    o->timeout_ms = 1000;
}

int cudis_conn_fail(cudis_conn *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->errstr, sizeof(c->errstr), fmt, ap);
    va_end(ap);
    return code;
}

const char *cudis_conn_errstr(const cudis_conn *c)
{
    return c->errstr;
}

bool cudis_conn_broken(const cudis_conn *c)
{
    return c->broken;
}

/* ===================================================================== */
/* Output buffer                                                         */
/* ===================================================================== */

int cudis_ob_reserve(cudis_conn *c, size_t more)
{
    if (c->ooff > 0 && c->ooff == c->olen) {
        c->ooff = c->olen = 0;
    }
    if (c->olen + more <= c->ocap) {
        return 0;
    }
    if (c->ooff > 0) { /* slide pending bytes to the front first */
        memmove(c->obuf, c->obuf + c->ooff, c->olen - c->ooff);
        c->olen -= c->ooff;
        c->ooff = 0;
        if (c->olen + more <= c->ocap) {
            return 0;
        }
    }
    size_t cap = c->ocap ? c->ocap : 4096;
    while (cap < c->olen + more) {
        cap *= 2;
    }
    char *nb = realloc(c->obuf, cap);
    if (!nb) {
        return CUDIS_E_NOMEM;
    }
    c->obuf = nb;
    c->ocap = cap;
    return 0;
}

void cudis_ob_put(cudis_conn *c, const void *p, size_t n)
{
    memcpy(c->obuf + c->olen, p, n);
    c->olen += n;
}

void cudis_ob_header(cudis_conn *c, char type, size_t n)
{
    char tmp[24];
    int k = 0;
    do {
        tmp[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    char *o = c->obuf + c->olen;
    *o++ = type;
    while (k) {
        *o++ = tmp[--k];
    }
    *o++ = '\r';
    *o++ = '\n';
    c->olen = (size_t)(o - c->obuf);
}

int cudis_ob_command(cudis_conn *c, int argc, const char **argv, const size_t *argvlen)
{
    size_t need = 24;
    for (int i = 0; i < argc; i++) {
        need += 24 + 2 + (argvlen ? argvlen[i] : strlen(argv[i]));
    }
    if (cudis_ob_reserve(c, need)) {
        return CUDIS_E_NOMEM;
    }
    cudis_ob_header(c, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) {
        size_t len = argvlen ? argvlen[i] : strlen(argv[i]);
        cudis_ob_header(c, '$', len);
        cudis_ob_put(c, argv[i], len);
        cudis_ob_put(c, "\r\n", 2);
    }
    return 0;
}

/* ===================================================================== */
/* Connecting                                                            */
/* ===================================================================== */

static void conn_drop(cudis_conn *c)
{
    if (c->ctx) {
        redisFree(c->ctx);
        c->ctx = NULL;
    }
    if (c->rd_plain) {
        redisReaderFree(c->rd_plain);
        c->rd_plain = NULL;
    }
    if (c->rd_vec) {
        redisReaderFree(c->rd_vec);
        c->rd_vec = NULL;
    }
    c->fd = -1;
    c->olen = c->ooff = 0;
}

redisReader *cudis_vec_reader_create(void); /* cudis_vec.c */

static int conn_open(cudis_conn *c)
{
    struct timeval tv = {.tv_sec = c->opt.connect_timeout_ms / 1000,
                         .tv_usec = (c->opt.connect_timeout_ms % 1000) * 1000};
    conn_drop(c);
    c->broken = true;
    if (c->unix_path) {
        c->ctx = redisConnectUnixWithTimeout(c->unix_path, tv);
    } else {
        c->ctx = redisConnectWithTimeout(c->host, c->opt.port, tv);
    }
    if (!c->ctx) {
        return cudis_conn_fail(c, CUDIS_E_NOMEM, "out of memory creating the hiredis context");
    }
    if (c->ctx->err) {
        int code = c->ctx->err == REDIS_ERR_IO && (errno == ETIMEDOUT || errno == EINPROGRESS)
                       ? CUDIS_E_TIMEOUT
                       : CUDIS_E_IO;
        if (strstr(c->ctx->errstr, "timed out")) {
            code = CUDIS_E_TIMEOUT;
        }
        if (c->unix_path) {
            cudis_conn_fail(c, code, "connect to %s: %s", c->unix_path, c->ctx->errstr);
        } else {
            cudis_conn_fail(c, code, "connect to %s:%d: %s", c->host, c->opt.port, c->ctx->errstr);
        }
        conn_drop(c);
        return code;
    }
    c->fd = c->ctx->fd;
    int fl = fcntl(c->fd, F_GETFL);
    if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        conn_drop(c);
        return cudis_conn_fail(c, CUDIS_E_IO, "fcntl: %s", strerror(errno));
    }
    c->rd_plain = plain_reader_create();
    c->rd_vec = cudis_vec_reader_create();
    if (!c->rd_plain || !c->rd_vec) {
        conn_drop(c);
        return cudis_conn_fail(c, CUDIS_E_NOMEM, "out of memory creating readers");
    }
    /* keep up to 1 MiB of read buffer between calls instead of freeing it */
    c->rd_plain->maxbuf = 1 << 20;
    c->rd_vec->maxbuf = 1 << 20;
    c->broken = false;
    if (c->password) {
        const char *argv[2] = {"AUTH", c->password};
        redisReply *r = NULL;
        int saved = c->opt.timeout_ms;
        c->opt.timeout_ms = c->opt.connect_timeout_ms;
        int rc = cudis_command_argv(c, 2, argv, NULL, &r);
        c->opt.timeout_ms = saved;
        if (rc) {
            conn_drop(c);
            c->broken = true;
            return rc;
        }
        if (r->type == REDIS_REPLY_ERROR) {
            cudis_conn_fail(c, CUDIS_E_AUTH, "AUTH: %s", r->str);
            freeReplyObject(r);
            conn_drop(c);
            c->broken = true;
            return CUDIS_E_AUTH;
        }
        freeReplyObject(r);
    }
    c->errstr[0] = '\0';
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

cudis_conn *cudis_connect(const cudis_options *o, char *err, size_t err_len)
{
    cudis_options d;
    if (!o) {
        cudis_options_default(&d);
        o = &d;
    }
    cudis_conn *c = calloc(1, sizeof(*c));
    char *ib = malloc(CUDIS_IBUF_BYTES);
    if (!c || !ib) {
        free(c);
        free(ib);
        if (err) {
            snprintf(err, err_len, "out of memory");
        }
        return NULL;
    }
    c->opt = *o;
    c->fd = -1;
    c->ibuf = ib;
    c->icap = CUDIS_IBUF_BYTES;
    c->host = dup_or_null(o->host ? o->host : "127.0.0.1");
    c->unix_path = dup_or_null(o->unix_path);
    c->password = dup_or_null(o->password);
    c->opt.host = c->host;
    c->opt.unix_path = c->unix_path;
    c->opt.password = c->password;
    if (c->opt.connect_timeout_ms <= 0) {
        c->opt.connect_timeout_ms = 1000;
    }
    if (c->opt.timeout_ms <= 0) {
        c->opt.timeout_ms = 1000;
    }
    if (conn_open(c)) {
        if (err) {
            snprintf(err, err_len, "%s", c->errstr);
        }
        cudis_close(c);
        return NULL;
    }
    return c;
}

void cudis_close(cudis_conn *c)
{
    if (!c) {
        return;
    }
    conn_drop(c);
    free(c->host);
    free(c->unix_path);
    free(c->password);
    free(c->obuf);
    free(c->ibuf);
    free(c);
}

int cudis_conn_set_timeout(cudis_conn *c, int timeout_ms)
{
    if (timeout_ms <= 0) {
        return CUDIS_E_INVAL;
    }
    c->opt.timeout_ms = timeout_ms;
    return 0;
}

int cudis_reconnect(cudis_conn *c)
{
    return conn_open(c);
}

int cudis_conn_begin(cudis_conn *c)
{
    if (c->broken || !c->ctx) {
        int rc = conn_open(c);
        if (rc) {
            return rc;
        }
    }
    c->olen = c->ooff = 0;
    return 0;
}

/* ===================================================================== */
/* The exchange loop                                                     */
/* ===================================================================== */

static int xfer_fail(cudis_conn *c, int code)
{
    c->broken = true;
    return code;
}

int cudis_conn_xfer(cudis_conn *c, cudis_xfer *x)
{
    size_t got = 0;
    int more = x->produce ? 1 : 0;
    uint64_t last = cudis_mono_ns();
    const uint64_t limit = (uint64_t)c->opt.timeout_ms * 1000000ull;

    while (got < x->expect) {
        bool progress = false;
        /* keep the output buffer topped up */
        while (more > 0 && cudis_ob_pending(c) < CUDIS_PRODUCE_LOW) {
            more = x->produce(x->arg, c);
        }
        if (more < 0) {
            cudis_conn_fail(c, more, "encoding the request: %s", cudis_client_strerror(more));
            return xfer_fail(c, more);
        }
        if (cudis_ob_pending(c) > 0) {
            ssize_t w = send(c->fd, c->obuf + c->ooff, cudis_ob_pending(c), MSG_NOSIGNAL);
            if (w > 0) {
                c->ooff += (size_t)w;
                progress = true;
            } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                cudis_conn_fail(c, CUDIS_E_IO, "send: %s", strerror(errno));
                return xfer_fail(c, CUDIS_E_IO);
            }
        }
        ssize_t r = recv(c->fd, c->ibuf, c->icap, 0);
        if (r > 0) {
            progress = true;
            if (redisReaderFeed(x->rd, c->ibuf, (size_t)r) != REDIS_OK) {
                cudis_conn_fail(c, CUDIS_E_NOMEM, "reader: %s", x->rd->errstr);
                return xfer_fail(c, CUDIS_E_NOMEM);
            }
            for (;;) {
                void *reply = NULL;
                if (redisReaderGetReply(x->rd, &reply) != REDIS_OK) {
                    cudis_conn_fail(c, CUDIS_E_PROTO, "protocol error: %s", x->rd->errstr);
                    return xfer_fail(c, CUDIS_E_PROTO);
                }
                if (!reply) {
                    break;
                }
                x->on_reply(x->arg, got, reply);
                if (++got == x->expect) {
                    break;
                }
            }
        } else if (r == 0) {
            cudis_conn_fail(c, CUDIS_E_IO, "connection closed by the server (%zu of %zu replies)",
                            got, x->expect);
            return xfer_fail(c, CUDIS_E_IO);
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            cudis_conn_fail(c, CUDIS_E_IO, "recv: %s", strerror(errno));
            return xfer_fail(c, CUDIS_E_IO);
        }
        if (got == x->expect) {
            break;
        }
        uint64_t now = cudis_mono_ns();
        if (progress) {
            last = now;
            continue;
        }
        if (now - last >= limit) {
            cudis_conn_fail(c, CUDIS_E_TIMEOUT, "no answer within %d ms (%zu of %zu replies)",
                            c->opt.timeout_ms, got, x->expect);
            return xfer_fail(c, CUDIS_E_TIMEOUT);
        }
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        if (cudis_ob_pending(c) > 0) {
            pfd.events |= POLLOUT;
        }
        int wait_ms = (int)((limit - (now - last) + 999999) / 1000000);
        int pr = poll(&pfd, 1, wait_ms);
        if (pr < 0 && errno != EINTR) {
            cudis_conn_fail(c, CUDIS_E_IO, "poll: %s", strerror(errno));
            return xfer_fail(c, CUDIS_E_IO);
        }
    }
    /* everything answered; stray bytes would desynchronise the next call */
    if (x->rd->len > x->rd->pos || cudis_ob_pending(c) > 0 || more > 0) {
        cudis_conn_fail(c, CUDIS_E_PROTO, "unexpected extra data from the server");
        return xfer_fail(c, CUDIS_E_PROTO);
    }
    c->olen = c->ooff = 0;
    return 0;
}

/* ===================================================================== */
/* Plain commands and pipelines                                          */
/* ===================================================================== */

struct plain_arg {
    redisReply **replies;
};

static void plain_on_reply(void *arg, size_t idx, void *reply)
{
    struct plain_arg *a = arg;
    a->replies[idx] = reply;
}

int cudis_pipeline(cudis_conn *c, size_t n, const cudis_cmd *cmds, redisReply **replies)
{
    for (size_t i = 0; i < n; i++) {
        replies[i] = NULL;
    }
    if (n == 0) {
        return 0;
    }
    int rc = cudis_conn_begin(c);
    if (rc) {
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        if (cmds[i].argc <= 0) {
            c->olen = 0;
            return cudis_conn_fail(c, CUDIS_E_INVAL, "command %zu has no arguments", i);
        }
        if (cudis_ob_command(c, cmds[i].argc, cmds[i].argv, cmds[i].argvlen)) {
            c->olen = 0;
            return cudis_conn_fail(c, CUDIS_E_NOMEM, "out of memory encoding the pipeline");
        }
    }
    struct plain_arg a = {.replies = replies};
    cudis_xfer x = {.rd = c->rd_plain, .expect = n, .on_reply = plain_on_reply, .arg = &a};
    return cudis_conn_xfer(c, &x);
}

int cudis_command_argv(cudis_conn *c, int argc, const char **argv, const size_t *argvlen,
                       redisReply **reply)
{
    cudis_cmd cmd = {.argc = argc, .argv = argv, .argvlen = argvlen};
    return cudis_pipeline(c, 1, &cmd, reply);
}

int cudis_command(cudis_conn *c, redisReply **reply, const char *fmt, ...)
{
    *reply = NULL;
    char *cmd = NULL;
    va_list ap;
    va_start(ap, fmt);
    int len = redisvFormatCommand(&cmd, fmt, ap);
    va_end(ap);
    if (len < 0) {
        return cudis_conn_fail(c, len == -2 ? CUDIS_E_INVAL : CUDIS_E_NOMEM,
                               "cannot format the command");
    }
    int rc = cudis_conn_begin(c);
    if (rc == 0 && cudis_ob_reserve(c, (size_t)len) != 0) {
        rc = cudis_conn_fail(c, CUDIS_E_NOMEM, "out of memory");
    }
    if (rc) {
        redisFreeCommand(cmd);
        return rc;
    }
    cudis_ob_put(c, cmd, (size_t)len);
    redisFreeCommand(cmd);
    struct plain_arg a = {.replies = reply};
    cudis_xfer x = {.rd = c->rd_plain, .expect = 1, .on_reply = plain_on_reply, .arg = &a};
    return cudis_conn_xfer(c, &x);
}
