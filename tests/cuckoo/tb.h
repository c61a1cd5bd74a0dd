/*
 * tb.h - a tiny batch builder for the CCHT tests: one op at a time with an
 * explicit clock, or several packed into one batch.
 */
#ifndef TB_H
#define TB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ccht.h"
#include "cudis_op.h"

typedef struct tb {
    cudis_op ops[64];
    cudis_result res[64];
    uint8_t in[1 << 16];
    uint8_t out[1 << 16];
    uint32_t n;
    uint64_t in_len;
    uint64_t out_cap;
    uint64_t out_len;
    int64_t now;
} tb;

static inline void tb_reset(tb *b, int64_t now)
{
    b->n = 0;
    b->in_len = 0;
    b->out_cap = sizeof(b->out);
    b->out_len = 0;
    b->now = now;
}

/* Append an op; returns its index. */
static inline uint32_t tb_add(tb *b, uint8_t code, uint16_t flags, const void *key,
                              uint32_t klen, const void *val, uint32_t vlen, int64_t arg,
                              int64_t exp)
{
    cudis_op *op = &b->ops[b->n];
    memset(op, 0, sizeof(*op));
    op->code = code;
    op->flags = flags;
    op->key_off = b->in_len;
    op->key_len = klen;
    if (klen) {
        memcpy(b->in + b->in_len, key, klen);
    }
    b->in_len += klen;
    op->val_off = b->in_len;
    op->val_len = vlen;
    if (vlen) {
        memcpy(b->in + b->in_len, val, vlen);
    }
    b->in_len += vlen;
    op->arg = arg;
    op->expire_ms = exp;
    return b->n++;
}

static inline int tb_run(ccht *t, tb *b)
{
    cudis_batch bt = {0};
    bt.ops = b->ops;
    bt.n_ops = b->n;
    bt.in = b->in;
    bt.res = b->res;
    bt.out = b->out;
    bt.out_cap = b->out_cap;
    bt.now_ms = b->now;
    int rc = ccht_execute(t, &bt);
    b->out_len = bt.out_len;
    return rc;
}

/* Run one op alone and return its result. */
static inline cudis_result tb_one(ccht *t, tb *b, int64_t now, uint8_t code, uint16_t flags,
                                  const char *key, const void *val, uint32_t vlen, int64_t arg,
                                  int64_t exp)
{
    tb_reset(b, now);
    tb_add(b, code, flags, key, (uint32_t)strlen(key), val, vlen, arg, exp);
    tb_run(t, b);
    return b->res[0];
}

#endif /* TB_H */
