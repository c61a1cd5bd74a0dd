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
#include <string.h>

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
    cudis_evbuf *ev; /* the device mirror of the batch's event sink (NULL: none) */
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
    x->ev = 0;
    ccht_env_place(x, l->stamp_base, l->clamp_now, l->seed, i); /* clamp_now: base + n */
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
    bool has_val = cudis_op_has_val(op->code);
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
    x.ev = a->ev;
    ccht_exec_op(T, &x, ty);
}

/* ------------------------------------------------------------------------
 * Events of a launch. The kernels report into a mirror of the caller's
 * sink (cudis_evbuf, cudis_op.h) in device memory, sized with the room the
 * caller's sink has left; after the launch its records and key bytes come
 * back and are appended to the caller's. Host code, used by the engine
 * and by the host simulation alike.
 * ---------------------------------------------------------------------- */

/* The mirror of host sink h: room for what h has left, empty, its records
 * then its key bytes at `area` (memory of the side the kernels run on, of
 * gpu_ev_area_bytes(m) bytes; NULL: only size it). */
static inline void gpu_ev_mirror(const cudis_evbuf *h, cudis_evbuf *m, uint8_t *area)
{
    m->cap = h->len < h->cap ? h->cap - h->len : 0;
    m->len = 0;
    m->keys_cap = h->keys_len < h->keys_cap ? h->keys_cap - h->keys_len : 0;
    m->keys_len = 0;
    m->recs = (cudis_event *)area;
    m->keys = area != 0 ? area + (uint64_t)m->cap * sizeof(cudis_event) : 0;
}

/* Bytes of a mirror's area (records, then key bytes). */
static inline uint64_t gpu_ev_area_bytes(const cudis_evbuf *m)
{
    return (uint64_t)m->cap * sizeof(cudis_event) + m->keys_cap;
}

/* Records and key bytes a finished mirror holds (what comes back: the
 * records from the start of its area, the bytes from m->keys on). */
static inline uint32_t gpu_ev_used_recs(const cudis_evbuf *m)
{
    return m->len < m->cap ? m->len : m->cap;
}

static inline uint64_t gpu_ev_used_keys(const cudis_evbuf *m)
{
    return m->keys_len < m->keys_cap ? m->keys_len : m->keys_cap;
}

/* Append what finished mirror m reported to host sink h: recs and keys
 * are host copies of its used records and key bytes. Reserves in h as the
 * stores do, so what no longer fits (another user of h took the room
 * meanwhile) is lost and counted, never written past h's caps. */
static inline void gpu_ev_merge(cudis_evbuf *h, const cudis_evbuf *m, const cudis_event *recs,
                                const uint8_t *keys)
{
    uint32_t r0 = cudis_fetch_add_u32(&h->len, m->len);
    uint64_t k0 = cudis_fetch_add_u64(&h->keys_len, m->keys_len);
    uint32_t n = gpu_ev_used_recs(m);
    for (uint32_t i = 0; i < n && (uint64_t)r0 + i < h->cap; i++) {
        cudis_event e = recs[i];
        if (e.kind != 0 && k0 + e.key_off + e.key_len > h->keys_cap) {
            e.kind = 0; /* its bytes no longer fit */
            e.key_len = 0;
            e.key_off = 0;
        } else if (e.kind != 0) {
            e.key_off += k0;
        }
        h->recs[r0 + i] = e;
    }
    uint64_t kn = gpu_ev_used_keys(m);
    uint64_t room = k0 < h->keys_cap ? h->keys_cap - k0 : 0;
    if (kn > room) {
        kn = room;
    }
    if (kn > 0) {
        memcpy(h->keys + k0, keys, kn);
    }
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
    op.type = CUDIS_TYPE_STRING;
    op.reserved2[0] = op.reserved2[1] = op.reserved2[2] = 0;
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
