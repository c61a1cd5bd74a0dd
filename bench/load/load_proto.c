/*
 * load_proto.c - RESP2 and memcached text encoders and streaming reply
 * parsers (see load_proto.h).
 */
#include "load_proto.h"

#include "cudis_err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- buffer */

void load_buf_free(struct load_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static int buf_reserve(struct load_buf *b, size_t extra)
{
    if (b->len + extra <= b->cap) {
        return 0;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) {
        cap *= 2;
    }
    char *d = realloc(b->data, cap);
    if (!d) {
        return CUDIS_E_NOMEM;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

int load_buf_append(struct load_buf *b, const void *p, size_t n)
{
    if (buf_reserve(b, n) != 0) {
        return CUDIS_E_NOMEM;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static int buf_printf_hdr(struct load_buf *b, char kind, size_t n)
{
    char tmp[32];
    int k = snprintf(tmp, sizeof(tmp), "%c%zu\r\n", kind, n);
    return load_buf_append(b, tmp, (size_t)k);
}

static int resp_bulk(struct load_buf *b, const char *p, size_t n)
{
    if (buf_printf_hdr(b, '$', n) != 0 || load_buf_append(b, p, n) != 0 ||
        load_buf_append(b, "\r\n", 2) != 0) {
        return CUDIS_E_NOMEM;
    }
    return 0;
}

/* -------------------------------------------------------------- encoders */

int load_encode_get(struct load_buf *b, enum load_protocol proto, const char *key, size_t klen)
{
    if (proto == LOAD_PROTO_RESP) {
        if (load_buf_append(b, "*2\r\n$3\r\nGET\r\n", 13) != 0) {
            return CUDIS_E_NOMEM;
        }
        return resp_bulk(b, key, klen);
    }
    if (load_buf_append(b, "get ", 4) != 0 || load_buf_append(b, key, klen) != 0 ||
        load_buf_append(b, "\r\n", 2) != 0) {
        return CUDIS_E_NOMEM;
    }
    return 0;
}

int load_encode_set(struct load_buf *b, enum load_protocol proto, const char *key, size_t klen,
                    const char *val, size_t vlen)
{
    if (proto == LOAD_PROTO_RESP) {
        if (load_buf_append(b, "*3\r\n$3\r\nSET\r\n", 13) != 0 || resp_bulk(b, key, klen) != 0) {
            return CUDIS_E_NOMEM;
        }
        return resp_bulk(b, val, vlen);
    }
    char tmp[48];
    int k = snprintf(tmp, sizeof(tmp), " 0 0 %zu\r\n", vlen);
    if (load_buf_append(b, "set ", 4) != 0 || load_buf_append(b, key, klen) != 0 ||
        load_buf_append(b, tmp, (size_t)k) != 0 || load_buf_append(b, val, vlen) != 0 ||
        load_buf_append(b, "\r\n", 2) != 0) {
        return CUDIS_E_NOMEM;
    }
    return 0;
}

int load_encode_word(struct load_buf *b, const char *word)
{
    char hdr[32];
    size_t n = strlen(word);
    int len = snprintf(hdr, sizeof(hdr), "*1\r\n$%zu\r\n", n);
    if (load_buf_append(b, hdr, (size_t)len) != 0 || load_buf_append(b, word, n) != 0) {
        return CUDIS_E_NOMEM;
    }
    return load_buf_append(b, "\r\n", 2);
}

int load_encode_mget(struct load_buf *b, enum load_protocol proto, const char *const *keys,
                     const size_t *klens, size_t n)
{
    if (proto == LOAD_PROTO_RESP) {
        if (buf_printf_hdr(b, '*', n + 1) != 0 || load_buf_append(b, "$4\r\nMGET\r\n", 10) != 0) {
            return CUDIS_E_NOMEM;
        }
        for (size_t i = 0; i < n; i++) {
            if (resp_bulk(b, keys[i], klens[i]) != 0) {
                return CUDIS_E_NOMEM;
            }
        }
        return 0;
    }
    if (load_buf_append(b, "get", 3) != 0) {
        return CUDIS_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (load_buf_append(b, " ", 1) != 0 || load_buf_append(b, keys[i], klens[i]) != 0) {
            return CUDIS_E_NOMEM;
        }
    }
    return load_buf_append(b, "\r\n", 2);
}

int load_encode_hash(struct load_buf *b, const char *cmd, const char *hash,
                     const char *const *fields, const size_t *flens, size_t n, const char *val,
                     size_t vlen)
{
    if (buf_printf_hdr(b, '*', 2 + n + (val ? 1 : 0)) != 0 || resp_bulk(b, cmd, strlen(cmd)) != 0 ||
        resp_bulk(b, hash, strlen(hash)) != 0) {
        return CUDIS_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (resp_bulk(b, fields[i], flens[i]) != 0) {
            return CUDIS_E_NOMEM;
        }
    }
    return val ? resp_bulk(b, val, vlen) : 0;
}

/* --------------------------------------------------------------- parsers */

void load_parser_init(struct load_parser *p, enum load_protocol proto)
{
    memset(p, 0, sizeof(*p));
    p->proto = proto;
}

/* Parses a signed decimal integer that fills [s, e). */
static bool parse_i64(const char *s, const char *e, int64_t *out)
{
    bool neg = false;
    if (s < e && *s == '-') {
        neg = true;
        s++;
    }
    if (s == e || e - s > 18) {
        return false;
    }
    int64_t v = 0;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9') {
            return false;
        }
        v = v * 10 + (*s - '0');
    }
    *out = neg ? -v : v;
    return true;
}

/* Handles one complete RESP line (without CRLF). Returns 1 when the reply
 * is complete, 0 when more is needed, -1 on a protocol violation. */
static int resp_line(struct load_parser *p, const char *l, size_t n)
{
    if (n == 0) {
        return -1;
    }
    int64_t v;
    switch (l[0]) {
    case '+':
        break;
    case '-':
        p->cur.error = true;
        break;
    case ':':
        if (!parse_i64(l + 1, l + n, &v)) {
            return -1;
        }
        break;
    case '$':
        if (!parse_i64(l + 1, l + n, &v) || v < -1) {
            return -1;
        }
        if (v == -1) {
            p->cur.misses++;
            break;
        }
        p->cur.hits++;
        p->skip = (uint64_t)v + 2;
        p->pending--; /* counted now; the payload is skipped */
        return 0;
    case '*':
        if (!parse_i64(l + 1, l + n, &v) || v < -1) {
            return -1;
        }
        if (v > 0) {
            p->pending += v;
        }
        break;
    default:
        return -1;
    }
    p->pending--;
    return p->pending == 0 ? 1 : 0;
}

static bool line_is(const char *l, size_t n, const char *word)
{
    size_t w = strlen(word);
    return n >= w && memcmp(l, word, w) == 0 && (n == w || l[w] == ' ');
}

/* Handles one complete memcached line, as resp_line. */
static int mc_line(struct load_parser *p, const char *l, size_t n)
{
    if (line_is(l, n, "VALUE")) {
        /* VALUE <key> <flags> <bytes> [<cas>] */
        const char *f[5];
        size_t nf = 0;
        const char *s = l, *e = l + n;
        while (s < e && nf < 5) {
            while (s < e && *s == ' ') {
                s++;
            }
            if (s == e) {
                break;
            }
            f[nf++] = s;
            while (s < e && *s != ' ') {
                s++;
            }
        }
        if (nf < 4) {
            return -1;
        }
        const char *be = f[3];
        while (be < e && *be != ' ') {
            be++;
        }
        int64_t bytes;
        if (!parse_i64(f[3], be, &bytes) || bytes < 0) {
            return -1;
        }
        p->cur.hits++;
        p->skip = (uint64_t)bytes + 2;
        return 0;
    }
    if (line_is(l, n, "END") || line_is(l, n, "STORED") || line_is(l, n, "DELETED") ||
        line_is(l, n, "TOUCHED") || line_is(l, n, "OK") || line_is(l, n, "NOT_FOUND") ||
        line_is(l, n, "EXISTS")) {
        return 1;
    }
    if (line_is(l, n, "NOT_STORED") || line_is(l, n, "ERROR") || line_is(l, n, "CLIENT_ERROR") ||
        line_is(l, n, "SERVER_ERROR")) {
        p->cur.error = true;
        return 1;
    }
    /* a bare number answers incr/decr */
    int64_t v;
    if (parse_i64(l, l + n, &v)) {
        return 1;
    }
    return -1;
}

static int handle_line(struct load_parser *p, const char *l, size_t n)
{
    if (!p->in_reply) {
        p->in_reply = true;
        memset(&p->cur, 0, sizeof(p->cur));
        p->pending = 1;
    }
    return p->proto == LOAD_PROTO_RESP ? resp_line(p, l, n) : mc_line(p, l, n);
}

static size_t finish(struct load_parser *p, size_t used, struct load_reply *out, int *done)
{
    *out = p->cur;
    p->in_reply = false;
    *done = 1;
    return used;
}

size_t load_parser_feed(struct load_parser *p, const char *data, size_t len,
                        struct load_reply *out, int *done)
{
    size_t i = 0;
    *done = 0;
    while (i < len) {
        if (p->skip) {
            size_t take = len - i < p->skip ? len - i : (size_t)p->skip;
            /* the payload's trailing CRLF must really be CRLF */
            for (size_t j = 0; j < take; j++) {
                uint64_t left = p->skip - j;
                if ((left == 2 && data[i + j] != '\r') || (left == 1 && data[i + j] != '\n')) {
                    *done = -1;
                    return i + j;
                }
            }
            i += take;
            p->skip -= take;
            if (p->skip == 0 && p->proto == LOAD_PROTO_RESP && p->pending == 0) {
                return finish(p, i, out, done);
            }
            continue;
        }
        const char *nl = memchr(data + i, '\n', len - i);
        if (!nl) {
            size_t n = len - i;
            if (p->line_len + n > LOAD_PARSER_LINE_MAX) {
                *done = -1;
                return i;
            }
            memcpy(p->line + p->line_len, data + i, n);
            p->line_len += n;
            return len;
        }
        size_t n = (size_t)(nl - (data + i)) + 1; /* incl. '\n' */
        const char *l;
        size_t ll;
        if (p->line_len) {
            if (p->line_len + n > LOAD_PARSER_LINE_MAX) {
                *done = -1;
                return i;
            }
            memcpy(p->line + p->line_len, data + i, n);
            l = p->line;
            ll = p->line_len + n;
            p->line_len = 0;
        } else {
            l = data + i;
            ll = n;
        }
        i += n;
        if (ll < 2 || l[ll - 2] != '\r') {
            *done = -1;
            return i;
        }
        int r = handle_line(p, l, ll - 2);
        if (r < 0) {
            *done = -1;
            return i;
        }
        if (r == 1) {
            return finish(p, i, out, done);
        }
    }
    return i;
}
