/*
 * gpu_dev.h - what the kernels of the gpu engine do per thread, as CUDIS_HD
 * functions over a ccht_table (cuckoo/ccht_layout.h) in device memory: the
 * launch arguments and the loop bodies of the batch and fixed-width
 * kernels. Each body is the one executor of cuckoo/ccht_exec.h plus the
 * per-launch duties (clamping stamps, validating the batch's offsets).
 *
 * The host compiler builds this file too: the host simulation of the
 * kernels (tests/kernels, bench/gpu/gpu_selftest --host-sim) runs exactly
 * these bodies on host threads over a table in host memory.
 */
#ifndef GPU_DEV_H
#define GPU_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "ccht_exec.h"
#include "ccht_layout.h"
#include "cudis_hd.h"
#include "cudis_op.h"

/* What every launch carries besides its own arguments: the recency stamps
 * of its ops (stamp_base + i + 1) and the buckets whose stamps it clamps
 * (ccht_clamp_range), both decided by the host in launch order. */
typedef struct gpu_launch {
    uint64_t stamp_base;
    uint64_t clamp_first;
    uint64_t clamp_n;
    uint32_t clamp_now;
    uint32_t pad_;
    uint64_t seed; /* ccht_batch_seed */
} gpu_launch;

/* A mixed batch already in device memory. */
typedef struct gpu_batch_args {
    const cudis_op *ops;
    const uint8_t *in;
    uint64_t in_len; /* bytes at `in`: every op's key and value must lie inside */
    cudis_result *res;
    uint8_t *out;
    uint64_t out_cap;
    uint64_t *out_len;
    uint32_t n_ops;
    uint32_t pad_;
    int64_t now_ms;
    gpu_launch l;
} gpu_batch_args;

/* Fixed-width gets/sets (gpu_engine_get_dev / set_dev). */
typedef struct gpu_fixed_args {
    const uint8_t *keys;
    uint32_t key_len;
    uint32_t n;
    uint8_t *vals;       /* get: output rows; set: input rows */
    uint32_t val_stride; /* get: row bytes; set: value length */
    uint32_t pad_;
    uint32_t *val_lens; /* get: lengths or GPU_DEV_MISS (may be NULL) */
    uint32_t *miss;     /* get: miss list (may be NULL) */
    uint32_t *n_miss;
    int32_t *status;   /* set: per-op status (may be NULL) */
    int64_t expire_ms; /* set */
    int64_t now_ms;
    gpu_launch l;
} gpu_fixed_args;

/* One record of gpu_k_collect's output, 8-byte aligned, key bytes follow. */
typedef struct gpu_key_rec {
    uint32_t key_len;
    uint32_t rec_len; /* bytes of this record, header included */
    int64_t expire_ms;
    uint32_t db; /* the key's database */
    uint32_t pad_;
} gpu_key_rec;

/* d_val_lens value of a miss (gpu_engine.h). */
#ifndef GPU_DEV_MISS
#define GPU_DEV_MISS UINT32_MAX
#endif

/* Host code: the stamps, randomness and clamp work of a launch of n ops
 * whose clock starts at `base` (the engine advances its clock by n per
 * launch, in launch order). */
static inline void gpu_launch_at(uint64_t base, uint64_t n, uint64_t n_buckets, gpu_launch *l)
{
    l->stamp_base = base;
    ccht_clamp_range(n_buckets, base, base + n, &l->clamp_first, &l->clamp_n);
    l->seed = ccht_batch_seed(base, base + n);
    l->clamp_now = (uint32_t)(base + n);
    l->pad_ = 0;
}

/* Threads a launch needs: one per op, and enough for its clamp work. */
CUDIS_HD static inline uint64_t gpu_launch_threads(const gpu_launch *l, uint64_t n)
{
    return l->clamp_n > n ? l->clamp_n : n;
}

/* Thread i's share of the launch's stamp clamping. */
CUDIS_HD static inline void gpu_launch_clamp(const ccht_table *T, const gpu_launch *l, uint64_t i)
{
    if (i < l->clamp_n) {
        ccht_bkt_clamp(&T->v, (l->clamp_first + i) % T->v.n_buckets, l->clamp_now);
    }
}

/* The environment of op i of a launch (stamp, shard, sampling state). */
CUDIS_HD static inline void gpu_env_init(ccht_env *x, const gpu_launch *l, uint64_t i,
                                         int64_t now_ms)
{
    x->truncate = false;
    x->now_ms = now_ms;
    ccht_env_place(x, l->stamp_base, l->seed, i);
}

/* Op i of a mixed batch (the body of k_batch). */
CUDIS_HD static inline void gpu_batch_op(const ccht_table *T, const gpu_batch_args *a, uint64_t i,
                                         ccht_tally *ty)
{
    gpu_launch_clamp(T, &a->l, i);
    if (i >= a->n_ops) {
        return;
    }
    const cudis_op *op = &a->ops[i];
    cudis_result *res = &a->res[i];
    /* offsets come from the caller: never read outside `in` */
    bool has_val =
        op->code == CUDIS_OP_SET || op->code == CUDIS_OP_APPEND || op->code == CUDIS_OP_SETRANGE;
    if (op->key_off > a->in_len || op->key_len > a->in_len - op->key_off ||
        (has_val && (op->val_off > a->in_len || op->val_len > a->in_len - op->val_off))) {
        ccht_res_clear(res, CUDIS_E_INVAL);
        return;
    }
    ccht_env x;
    gpu_env_init(&x, &a->l, i, a->now_ms);
    x.op = op;
    x.key = a->in != 0 ? a->in + op->key_off : (const uint8_t *)"";
    x.arg = a->in != 0 && has_val ? a->in + op->val_off : x.key;
    x.res = res;
    x.out = a->out;
    x.out_cap = a->out != 0 ? a->out_cap : 0;
    x.out_len = a->out_len;
    ccht_exec_op(T, &x, ty);
}

/* Key i of a fixed-width call (the body of k_get_fixed and k_set_fixed):
 * a GET whose value is copied into row i (at most val_stride bytes; its
 * length or GPU_DEV_MISS into val_lens, misses listed), or a SET of row i
 * (its status into status). */
CUDIS_HD static inline void gpu_fixed_op(const ccht_table *T, const gpu_fixed_args *a, uint64_t i,
                                         uint8_t code, ccht_tally *ty)
{
    gpu_launch_clamp(T, &a->l, i);
    if (i >= a->n) {
        return;
    }
    bool get = code == CUDIS_OP_GET;
    uint8_t *row = a->vals != 0 ? a->vals + i * (uint64_t)a->val_stride : 0;
    cudis_op op;
    op.code = code;
    op.db = 0; /* the fixed-width API addresses database 0 */
    op.flags = 0;
    op.key_len = a->key_len;
    op.key_off = 0;
    op.val_off = 0;
    op.val_len = get ? 0 : a->val_stride;
    op.reserved2 = 0;
    op.arg = 0;
    op.expire_ms = get ? 0 : a->expire_ms;
    cudis_result res;
    ccht_env x;
    gpu_env_init(&x, &a->l, i, a->now_ms);
    x.op = &op;
    x.key = a->keys + i * a->key_len;
    x.arg = row != 0 ? row : x.key;
    x.res = &res;
    x.out = get ? row : 0;
    x.out_cap = get && row != 0 ? a->val_stride : 0;
    x.out_len = 0;
    x.truncate = get;
    ccht_exec_op(T, &x, ty);
    if (!get) {
        if (a->status != 0) {
            a->status[i] = res.status;
        }
        return;
    }
    bool hit = res.status == CUDIS_OK && (res.flags & CUDIS_R_VALUE);
    if (a->val_lens != 0) {
        a->val_lens[i] = hit ? res.val_len : GPU_DEV_MISS;
    }
    if (!hit && a->miss != 0) {
        a->miss[cudis_fetch_add_u32(a->n_miss, 1)] = (uint32_t)i;
    }
}

#endif /* GPU_DEV_H */
