/*
 * resp.c - incremental RESP request parser and RESP2/RESP3 reply writer.
 * The parser follows Redis 7.0's processMultibulkBuffer/processInlineBuffer
 * checks and error texts in the same order.
 */
#include "resp.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_op.h"

void resp_parser_init(resp_parser *p)
{
    memset(p, 0, sizeof(*p));
    p->max_bulk = 512LL * 1024 * 1024;
    p->bulk_len = -1;
}

void resp_parser_deinit(resp_parser *p)
{
    free(p->arg_off);
    free(p->arg_len);
    free(p->argv);
    p->arg_off = NULL;
    p->arg_len = NULL;
    p->argv = NULL;
    p->argv_cap = 0;
}

static void reserve_args(resp_parser *p, long long n)
{
    if (n <= p->argv_cap) {
        return;
    }
    long long cap = p->argv_cap ? p->argv_cap : 8;
    while (cap < n) {
        cap *= 2;
    }
    p->arg_off = xrealloc(p->arg_off, (size_t)cap * sizeof(*p->arg_off));
    p->arg_len = xrealloc(p->arg_len, (size_t)cap * sizeof(*p->arg_len));
    p->argv = xrealloc(p->argv, (size_t)cap * sizeof(*p->argv));
    p->argv_cap = (int)cap;
}

bool resp_parser_trim(resp_parser *p)
{
    if (p->state != 0 || p->argv_cap <= 1024) {
        return false;
    }
    resp_parser_deinit(p);
    return true;
}

bool resp_parser_busy(const resp_parser *p)
{
    return p->state != 0;
}

void resp_parser_shift(resp_parser *p, size_t delta)
{
    if (p->state == 0) {
        return;
    }
    p->cmd_start -= delta;
    for (int i = 0; i < p->argc; i++) {
        p->arg_off[i] -= delta;
    }
}

static int proto_err(resp_parser *p, const char *msg)
{
    p->err = msg;
    p->state = 0;
    p->argc = 0;
    return RESP_ERR;
}

static int parse_inline(resp_parser *p, char *buf, size_t len, size_t *pos)
{
    char *line = buf + *pos;
    char *nl = memchr(line, '\n', len - *pos);
    if (nl == NULL) {
        if (len - *pos > RESP_INLINE_MAX) {
            return proto_err(p, "Protocol error: too big inline request");
        }
        return RESP_MORE;
    }
    size_t ll = (size_t)(nl - line);
    if (ll > 0 && line[ll - 1] == '\r') {
        ll--;
    }
    reserve_args(p, (long long)(ll / 2 + 2));
    int n = util_split_inline(line, ll, p->argv, p->arg_len, p->argv_cap, NULL);
    if (n < 0) {
        return proto_err(p, "Protocol error: unbalanced quotes in request");
    }
    *pos = (size_t)(nl + 1 - buf);
    p->argc = n;
    return n > 0 ? RESP_CMD : RESP_MORE;
}

int resp_parse(resp_parser *p, char *buf, size_t len, size_t *pos)
{
    p->big_need = 0;
    for (;;) {
        if (p->state == 0) {
            if (*pos >= len) {
                return RESP_MORE;
            }
            p->cmd_start = *pos;
            p->argc = 0;
            if (buf[*pos] != '*') {
                int r = parse_inline(p, buf, len, pos);
                if (r == RESP_MORE && *pos > p->cmd_start) {
                    continue; /* an empty line was consumed */
                }
                return r;
            }
            char *cr = memchr(buf + *pos, '\r', len - *pos);
            if (cr == NULL) {
                if (len - *pos > RESP_INLINE_MAX) {
                    return proto_err(p, "Protocol error: too big mbulk count string");
                }
                return RESP_MORE;
            }
            if ((size_t)(cr - buf) + 2 > len) {
                return RESP_MORE;
            }
            int64_t ll;
            const uint8_t *d = (const uint8_t *)buf + *pos + 1;
            bool ok = cudis_str2ll(d, (uint32_t)(cr - (char *)d), &ll);
            if (!ok || ll > INT_MAX) {
                return proto_err(p, "Protocol error: invalid multibulk length");
            }
            if (ll > RESP_UNAUTH_MAX_ARGS && p->unauth) {
                return proto_err(p, "Protocol error: unauthenticated multibulk length");
            }
            *pos = (size_t)(cr - buf) + 2;
            if (ll <= 0) {
                continue;
            }
            reserve_args(p, ll < 1024 ? ll : 1024);
            p->mb_left = ll;
            p->bulk_len = -1;
            p->state = 1;
        }
        while (p->mb_left > 0) {
            if (p->bulk_len == -1) {
                if (*pos >= len) {
                    return RESP_MORE;
                }
                char *cr = memchr(buf + *pos, '\r', len - *pos);
                if (cr == NULL) {
                    if (len - *pos > RESP_INLINE_MAX) {
                        return proto_err(p, "Protocol error: too big bulk count string");
                    }
                    return RESP_MORE;
                }
                if ((size_t)(cr - buf) + 2 > len) {
                    return RESP_MORE;
                }
                if (buf[*pos] != '$') {
                    snprintf(p->errbuf, sizeof(p->errbuf), "Protocol error: expected '$', got '%c'",
                             buf[*pos]);
                    return proto_err(p, p->errbuf);
                }
                int64_t ll;
                const uint8_t *d = (const uint8_t *)buf + *pos + 1;
                bool ok = cudis_str2ll(d, (uint32_t)(cr - (char *)d), &ll);
                if (!ok || ll < 0 || ll > p->max_bulk) {
                    return proto_err(p, "Protocol error: invalid bulk length");
                }
                if (ll > RESP_UNAUTH_MAX_BULK && p->unauth) {
                    return proto_err(p, "Protocol error: unauthenticated bulk length");
                }
                *pos = (size_t)(cr - buf) + 2;
                p->bulk_len = ll;
            }
            if ((long long)(len - *pos) < p->bulk_len + 2) {
                p->big_need = (size_t)(p->bulk_len + 2) - (len - *pos);
                return RESP_MORE;
            }
            reserve_args(p, p->argc + 1);
            p->arg_off[p->argc] = *pos;
            p->arg_len[p->argc] = (uint32_t)p->bulk_len;
            p->argc++;
            *pos += (size_t)p->bulk_len + 2;
            p->bulk_len = -1;
            p->mb_left--;
        }
        p->state = 0;
        for (int i = 0; i < p->argc; i++) {
            p->argv[i] = buf + p->arg_off[i];
        }
        return RESP_CMD;
    }
}

/* ------------------------------------------------------------------------
 * Replies
 * ---------------------------------------------------------------------- */

static inline void add_hdr(sbuf *b, char type, long long n)
{
    sbuf_reserve(b, 32);
    char *w = b->p + b->len;
    *w++ = type;
    w += cudis_ll2str(n, w);
    *w++ = '\r';
    *w++ = '\n';
    b->len = (size_t)(w - b->p);
}

void resp_status(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    sbuf_reserve(b, n + 3);
    b->p[b->len++] = '+';
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len++] = '\r';
    b->p[b->len++] = '\n';
}

void resp_error(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    sbuf_reserve(b, n + 3);
    b->p[b->len++] = '-';
    /* Newlines would break the protocol: replace them as Redis does. */
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        b->p[b->len++] = (c == '\r' || c == '\n') ? ' ' : c;
    }
    b->p[b->len++] = '\r';
    b->p[b->len++] = '\n';
}

void resp_errorf(sbuf *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    resp_error(b, tmp);
}

void resp_int(sbuf *b, long long v)
{
    add_hdr(b, ':', v);
}

void resp_bulk(sbuf *b, const void *p, size_t n)
{
    sbuf_reserve(b, n + 32);
    add_hdr(b, '$', (long long)n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len++] = '\r';
    b->p[b->len++] = '\n';
}

void resp_bulks(sbuf *b, const char *s)
{
    resp_bulk(b, s, strlen(s));
}

void resp_bulk_ll(sbuf *b, long long v)
{
    char t[24];
    uint32_t n = cudis_ll2str(v, t);
    resp_bulk(b, t, n);
}

void resp_null(sbuf *b, int proto)
{
    if (proto >= 3) {
        sbuf_add(b, "_\r\n", 3);
    } else {
        sbuf_add(b, "$-1\r\n", 5);
    }
}

void resp_null_array(sbuf *b, int proto)
{
    if (proto >= 3) {
        sbuf_add(b, "_\r\n", 3);
    } else {
        sbuf_add(b, "*-1\r\n", 5);
    }
}

void resp_array(sbuf *b, long n)
{
    add_hdr(b, '*', n);
}

void resp_map(sbuf *b, long n, int proto)
{
    if (proto >= 3) {
        add_hdr(b, '%', n);
    } else {
        add_hdr(b, '*', 2 * n);
    }
}

void resp_set(sbuf *b, long n, int proto)
{
    add_hdr(b, proto >= 3 ? '~' : '*', n);
}

void resp_double(sbuf *b, double v, int proto)
{
    char t[64];
    int n = snprintf(t, sizeof(t), "%.17g", v);
    if (proto >= 3) {
        sbuf_add(b, ",", 1);
        sbuf_add(b, t, (size_t)n);
        sbuf_add(b, "\r\n", 2);
    } else {
        resp_bulk(b, t, (size_t)n);
    }
}

void resp_verbatim(sbuf *b, const char *p, size_t n, int proto)
{
    if (proto < 3) {
        resp_bulk(b, p, n);
        return;
    }
    add_hdr(b, '=', (long long)n + 4);
    sbuf_add(b, "txt:", 4);
    sbuf_add(b, p, n);
    sbuf_add(b, "\r\n", 2);
}
