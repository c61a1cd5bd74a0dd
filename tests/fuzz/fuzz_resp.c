/*
 * fuzz_resp.c - the RESP request parser (server/resp.h), multibulk and
 * inline. Each input is parsed twice per set of limits: whole, from one
 * buffer of exactly its size, and fed in pieces the way a connection reads
 * (conn_read_once: a fresh buffer of exactly the bytes held each time, the
 * parsed prefix dropped and resp_parser_shift told). Both must give the same
 * commands and end the same way (more input needed, or the same protocol
 * error), every argument must lie inside the buffer, and nothing may leak.
 * The limits: the defaults, then those of a client that has not
 * authenticated with a small proto-max-bulk-len.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp.h"

/* Inputs stay within RESP_INLINE_MAX (scripts/fuzz.sh sets -max_len), so
 * a limit that depends on how much is buffered is never met differently by
 * the two ways of feeding. */

typedef struct limits {
    long long max_bulk;
    bool unauth;
} limits;

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_resp: %s\n", what);
    abort();
}

/* Append the command p holds (pointers into buf[0..len)) to the record. */
static void record_cmd(sbuf *rec, const resp_parser *p, const char *buf, size_t len)
{
    if (p->argc < 1) {
        fail("a command without arguments was returned");
    }
    sbuf_printf(rec, "*%d", p->argc);
    for (int i = 0; i < p->argc; i++) {
        const char *a = p->argv[i];
        if (a < buf || a > buf + len || p->arg_len[i] > (size_t)(buf + len - a)) {
            fail("an argument points outside the input");
        }
        sbuf_printf(rec, "$%u:", p->arg_len[i]);
        sbuf_add(rec, a, p->arg_len[i]);
    }
}

static void record_end(sbuf *rec, int r, const resp_parser *p)
{
    if (r == RESP_ERR) {
        sbuf_printf(rec, "-%s", p->err);
    } else {
        sbuf_adds(rec, "+more");
    }
}

static void parse_whole(const uint8_t *data, size_t size, const limits *lim, sbuf *rec)
{
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    resp_parser p;
    resp_parser_init(&p);
    p.max_bulk = lim->max_bulk;
    p.unauth = lim->unauth;
    size_t pos = 0;
    int r;
    while ((r = resp_parse(&p, buf, size, &pos)) == RESP_CMD) {
        record_cmd(rec, &p, buf, size);
    }
    if (pos > size) {
        fail("the parse position ran past the input");
    }
    record_end(rec, r, &p);
    resp_parser_deinit(&p);
    free(buf);
}

/* The piece sizes: 1..64 bytes from a generator seeded by the input, so a
 * given input always splits the same way. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void parse_pieces(const uint8_t *data, size_t size, const limits *lim, sbuf *rec)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ size;
    for (size_t i = 0; i < size && i < 16; i++) {
        seed = (seed ^ data[i]) * 0x100000001b3ull;
    }
    seed |= 1;
    resp_parser p;
    resp_parser_init(&p);
    char *buf = NULL;
    size_t qlen = 0, qpos = 0, fed = 0;
    int r = RESP_MORE;
    while (fed < size && r != RESP_ERR) {
        /* drop what was parsed, as conn_read_once does before a read */
        size_t keep = resp_parser_busy(&p) ? p.cmd_start : qpos;
        size_t piece = 1 + (size_t)(next_rand(&seed) % 64);
        if (piece > size - fed) {
            piece = size - fed;
        }
        char *nb = malloc(qlen - keep + piece);
        if (qlen > keep) {
            memcpy(nb, buf + keep, qlen - keep);
        }
        memcpy(nb + qlen - keep, data + fed, piece);
        free(buf);
        buf = nb;
        qlen = qlen - keep + piece;
        qpos -= keep;
        resp_parser_shift(&p, keep);
        fed += piece;
        p.max_bulk = lim->max_bulk;
        p.unauth = lim->unauth;
        while ((r = resp_parse(&p, buf, qlen, &qpos)) == RESP_CMD) {
            record_cmd(rec, &p, buf, qlen);
        }
        if (qpos > qlen) {
            fail("the parse position ran past the input");
        }
        if (resp_parser_busy(&p) && p.cmd_start > qpos) {
            fail("a partial command starts after the parse position");
        }
    }
    record_end(rec, r, &p);
    resp_parser_deinit(&p);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const limits lims[] = {{512LL * 1024 * 1024, false}, {64, true}};
    for (size_t i = 0; i < sizeof(lims) / sizeof(lims[0]); i++) {
        sbuf whole = {0}, pieces = {0};
        parse_whole(data, size, &lims[i], &whole);
        parse_pieces(data, size, &lims[i], &pieces);
        if (whole.len != pieces.len || memcmp(whole.p, pieces.p, whole.len) != 0) {
            fprintf(stderr, "whole:  %.*s\npieces: %.*s\n", (int)whole.len, whole.p,
                    (int)pieces.len, pieces.p);
            fail("parsing in pieces differs from parsing whole");
        }
        sbuf_free(&whole);
        sbuf_free(&pieces);
    }
    return 0;
}
