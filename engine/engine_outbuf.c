/*
 * engine_outbuf.c - the one place where ops that returned CUDIS_E_OUTBUF
 * (their value did not fit the out buffer; not applied) run again. The
 * worker pool uses it without growing (the ops that ran out of their
 * thread's slice get the room left in the whole buffer, so the outcome is
 * that of one thread); engine_rerun_outbuf grows the buffer until every
 * value fits (the server's batches).
 */
#include <stdlib.h>
#include <string.h>

#include "cudis_alloc.h"
#include "engine_internal.h"

/* A little more than asked for, so a value that grew between the runs
 * (another caller wrote it) usually fits the same round. */
#define OUTBUF_SLACK 4096u
#define OUTBUF_ROUNDS 8

uint64_t outbuf_used(const cudis_batch *b)
{
    uint64_t used = 0;
    for (uint32_t i = 0; i < b->n_ops; i++) {
        const cudis_result *r = &b->res[i];
        if (r->status == CUDIS_OK && (r->flags & CUDIS_R_VALUE)) {
            uint64_t end = r->val_off + r->val_len;
            used = end > used ? end : used;
        }
    }
    return used;
}

int outbuf_rerun(outbuf_exec_fn exec, void *ctx, cudis_batch *b, uint64_t used, bool grow,
                 uint32_t *reruns)
{
    uint32_t total = 0;
    int rc = CUDIS_OK;
    for (int round = 0; round < (grow ? OUTBUF_ROUNDS : 1); round++) {
        uint64_t needed = 0;
        uint32_t n = 0;
        for (uint32_t i = 0; i < b->n_ops; i++) {
            if (b->res[i].status == CUDIS_E_OUTBUF) {
                needed += b->res[i].val_len;
                n++;
            }
        }
        if (n == 0) {
            break;
        }
        total += n;
        if (grow && b->out_cap - (used < b->out_cap ? used : b->out_cap) < needed) {
            b->out_cap = used + needed + OUTBUF_SLACK;
            b->out = xrealloc(b->out, b->out_cap);
        }
        cudis_op *ops = xmalloc(n * sizeof(cudis_op));
        cudis_result *res = xmalloc(n * sizeof(cudis_result));
        uint32_t *map = xmalloc(n * sizeof(uint32_t));
        uint32_t k = 0;
        for (uint32_t i = 0; i < b->n_ops; i++) {
            if (b->res[i].status == CUDIS_E_OUTBUF) {
                ops[k] = b->ops[i];
                map[k++] = i;
            }
        }
        uint64_t room = b->out_cap > used ? b->out_cap - used : 0;
        cudis_batch sub = {.ops = ops,
                           .n_ops = n,
                           .in = b->in,
                           .res = res,
                           .out = room ? b->out + used : NULL,
                           .out_cap = room,
                           .out_len = 0,
                           .now_ms = b->now_ms,
                           .ev = b->ev};
        rc = exec(ctx, &sub);
        for (uint32_t j = 0; j < n; j++) {
            cudis_result *r = &b->res[map[j]];
            if (rc != CUDIS_OK) {
                memset(r, 0, sizeof(*r));
                r->status = rc;
                continue;
            }
            *r = res[j];
            if (r->status == CUDIS_OK && (r->flags & CUDIS_R_VALUE)) {
                r->val_off += used;
            }
        }
        uint64_t sub_used = rc == CUDIS_OK ? outbuf_used(&sub) : 0;
        free(ops);
        free(res);
        free(map);
        used += sub_used;
        if (rc != CUDIS_OK) {
            break;
        }
    }
    /* what the values take, plus what the ops still out of room asked for */
    uint64_t missing = 0;
    for (uint32_t i = 0; i < b->n_ops; i++) {
        if (b->res[i].status == CUDIS_E_OUTBUF) {
            missing += b->res[i].val_len;
        }
    }
    b->out_len = used + missing;
    if (reruns != NULL) {
        *reruns = total;
    }
    return rc;
}

static int exec_engine(void *ctx, cudis_batch *b)
{
    return engine_execute(ctx, b);
}

int engine_rerun_outbuf(engine *e, cudis_batch *b, uint32_t *reruns)
{
    uint64_t used = outbuf_used(b);
    return outbuf_rerun(exec_engine, e, b, used, true, reruns);
}
