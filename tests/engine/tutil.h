/*
 * tutil.h - helpers shared by the engine conformance suite, the engine stress
 * test and the baseline policy tests: a growable batch builder, one-op
 * shortcuts on an engine, and a tiny deterministic RNG. Header-only (static
 * functions), included by test programs only.
 */
#ifndef TUTIL_H
#define TUTIL_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_op.h"
#include "engine.h"

/* A fixed clock for tests: expiry moves by setting batch now_ms. */
#define T_NOW 1700000000000LL

typedef struct tbatch {
    cudis_op *ops;
    cudis_result *res;
    uint32_t n, cap;
    uint8_t *in;
    uint64_t in_len, in_cap;
    uint8_t *out;
    uint64_t out_cap;
    cudis_batch b;
} tbatch;

static inline void tb_init(tbatch *t, uint64_t out_cap)
{
    memset(t, 0, sizeof(*t));
    t->out_cap = out_cap;
    t->out = out_cap ? malloc(out_cap) : NULL;
}

static inline void tb_free(tbatch *t)
{
    free(t->ops);
    free(t->res);
    free(t->in);
    free(t->out);
    memset(t, 0, sizeof(*t));
}

static inline void tb_reset(tbatch *t)
{
    t->n = 0;
    t->in_len = 0;
}

static inline uint64_t tb_bytes(tbatch *t, const void *p, uint32_t len)
{
    if (t->in_len + len + 1 > t->in_cap) {
        uint64_t nc = t->in_cap ? t->in_cap * 2 : 4096;
        while (nc < t->in_len + len + 1) {
            nc *= 2;
        }
        t->in = realloc(t->in, nc);
        cr_assert_not_null(t->in);
        t->in_cap = nc;
    }
    uint64_t off = t->in_len;
    if (len) {
        memcpy(t->in + off, p, len);
    }
    t->in_len += len;
    return off;
}

/* Append an op; returns its index. */
static inline uint32_t tb_op(tbatch *t, uint8_t code, uint16_t flags, const void *key,
                             uint32_t klen, const void *val, uint32_t vlen, int64_t arg,
                             int64_t exp)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->ops = realloc(t->ops, t->cap * sizeof(cudis_op));
        t->res = realloc(t->res, t->cap * sizeof(cudis_result));
        cr_assert(t->ops && t->res);
    }
    cudis_op *op = &t->ops[t->n];
    memset(op, 0, sizeof(*op));
    op->code = code;
    op->flags = flags;
    op->key_len = klen;
    op->key_off = tb_bytes(t, key, klen);
    op->val_len = vlen;
    op->val_off = tb_bytes(t, val, vlen);
    op->arg = arg;
    op->expire_ms = exp;
    return t->n++;
}

/* Execute at time `now`; asserts the batch as a whole succeeded. */
static inline void tb_run(engine *e, tbatch *t, int64_t now)
{
    memset(t->res, 0xA5, t->n * sizeof(cudis_result));
    t->b.ops = t->ops;
    t->b.n_ops = t->n;
    t->b.in = t->in;
    t->b.res = t->res;
    t->b.out = t->out;
    t->b.out_cap = t->out_cap;
    t->b.out_len = 0;
    t->b.now_ms = now;
    int rc = engine_execute(e, &t->b);
    cr_assert_eq(rc, CUDIS_OK, "engine_execute failed: %d (%s)", rc, cudis_strerror(rc));
}

/* The value a result points at. */
static inline const uint8_t *tb_val(const tbatch *t, uint32_t i)
{
    return t->out + t->res[i].val_off;
}

/* ------------------------------------------------------------------------
 * One-op shortcuts: key and value as C strings (no NUL inside).
 * ---------------------------------------------------------------------- */

typedef struct tres {
    cudis_result r;
    char val[4096]; /* NUL-terminated copy of the value (when VALUE) */
} tres;

static inline tres t_op(engine *e, int64_t now, uint8_t code, uint16_t flags, const char *k,
                        const char *v, int64_t arg, int64_t exp)
{
    tbatch t;
    tb_init(&t, 8192);
    tb_op(&t, code, flags, k, (uint32_t)strlen(k), v, v ? (uint32_t)strlen(v) : 0, arg, exp);
    tb_run(e, &t, now);
    tres r;
    memset(&r, 0, sizeof(r));
    r.r = t.res[0];
    if (r.r.status == CUDIS_OK && (r.r.flags & CUDIS_R_VALUE)) {
        cr_assert_leq(r.r.val_off + r.r.val_len, t.b.out_len);
        cr_assert_lt(r.r.val_len, sizeof(r.val));
        memcpy(r.val, tb_val(&t, 0), r.r.val_len);
    }
    tb_free(&t);
    return r;
}

#define T_SET(e, k, v) t_op((e), T_NOW, CUDIS_OP_SET, 0, (k), (v), 0, 0)
#define T_GET(e, k) t_op((e), T_NOW, CUDIS_OP_GET, 0, (k), NULL, 0, 0)

/* Assert GET k returns exactly v at time now. */
static inline void t_expect(engine *e, int64_t now, const char *k, const char *v)
{
    tres r = t_op(e, now, CUDIS_OP_GET, 0, k, NULL, 0, 0);
    cr_assert_eq(r.r.status, CUDIS_OK, "GET %s: status %d", k, r.r.status);
    if (v == NULL) {
        cr_assert_eq(r.r.flags & (CUDIS_R_FOUND | CUDIS_R_VALUE), 0,
                     "GET %s: expected a miss, got '%s'", k, r.val);
    } else {
        cr_assert_eq(r.r.flags & (CUDIS_R_FOUND | CUDIS_R_VALUE), CUDIS_R_FOUND | CUDIS_R_VALUE,
                     "GET %s: expected '%s', got a miss", k, v);
        cr_assert_eq(r.r.val_len, strlen(v), "GET %s: length %u, want %zu", k, r.r.val_len,
                     strlen(v));
        cr_assert_str_eq(r.val, v, "GET %s", k);
    }
}

/* ------------------------------------------------------------------------
 * RNG (splitmix64)
 * ---------------------------------------------------------------------- */

static inline uint64_t t_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif /* TUTIL_H */
