/*
 * gpu_exec.h - one operation of a batch on the device-resident CCHT: the
 * body of the per-thread loop of the batch kernels (gpu_kernels.cu).
 *
 * It composes cuckoo/ccht_bucket.h (hashing, bucket locks, optimistic reads,
 * probe, victim choice, publish) with cudis_plan_op (the semantics of every
 * op) and the arena allocator of gpu_dev.h. CUDIS_HD throughout, so the host
 * compiler builds it as well: tests/kernels/ runs this exact code on the
 * CPU against the cpu engine, which is how its logic is checked on machines
 * without a GPU.
 *
 * Concurrency (one launch runs all ops of a batch at once):
 * - readers (GET without side effects, EXISTS, TTL) are optimistic: read
 *   both bucket versions, probe, copy the value into the out buffer,
 *   validate both versions, retry on change. Torn values are never
 *   reported: a copy made while a writer held either bucket is redone.
 * - writers lock the key's two buckets in index order (ccht_pair_lock),
 *   probe both, plan, write, publish the slot word with one release store,
 *   unlock. Duplicates are impossible: whoever inserts holds both buckets
 *   the key can live in.
 * - an update that keeps the item's chunk class (and expiry field) rewrites
 *   the value in place under the pair lock; readers of that bucket retry.
 *   Otherwise a new chunk is taken: the victim's own chunk when the bucket
 *   pair is full and it has the right class, else the allocator, else a
 *   sampled global-LRU victim of the same class (second LRU level,
 *   gpu_evict_for), else CUDIS_E_FULL with the old value kept.
 */
#ifndef GPU_EXEC_H
#define GPU_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "ccht_bucket.h"
#include "ccht_layout.h"
#include "cudis_hd.h"
#include "cudis_op.h"
#include "gpu_dev.h"

/* Batches between stamp refreshes of a hit (keeps hot bucket lines clean). */
#define GPU_TOUCH_SLACK 2u
/* Looking for a memory victim: stop after this many candidates, or this
 * many buckets scanned; try-lock rounds. */
#define GPU_EVICT_CANDIDATES 8u
#define GPU_EVICT_MAX_SCAN 4096u
#define GPU_EVICT_ROUNDS 4u

/* ------------------------------------------------------------------------
 * Byte helpers: ccht_bucket.h's semantics (racy reads are validated by the
 * caller), with 8-byte accesses on the device when both sides are aligned
 * (ccht_bytes_* go byte by byte there).
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline bool gpu_bytes_eq(const uint8_t *a, const uint8_t *b, uint32_t n)
{
#if CUDIS_DEVICE_CODE
    uint32_t i = 0;
    if ((((uintptr_t)a | (uintptr_t)b) & 7) == 0) {
        for (; i + 8 <= n; i += 8) {
            if (*(const volatile uint64_t *)(a + i) != *(const uint64_t *)(b + i)) {
                return false;
            }
        }
    }
    return ccht_bytes_eq(a + i, b + i, n - i);
#else
    return ccht_bytes_eq(a, b, n);
#endif
}

CUDIS_HD static inline void gpu_bytes_read(uint8_t *dst, const uint8_t *src, uint64_t n)
{
#if CUDIS_DEVICE_CODE
    uint64_t i = 0;
    if ((((uintptr_t)dst | (uintptr_t)src) & 7) == 0) {
        for (; i + 8 <= n; i += 8) {
            *(uint64_t *)(dst + i) = *(const volatile uint64_t *)(src + i);
        }
    }
    ccht_bytes_read(dst + i, src + i, n - i);
#else
    ccht_bytes_read(dst, src, n);
#endif
}

CUDIS_HD static inline void gpu_bytes_write(uint8_t *dst, const uint8_t *src, uint64_t n)
{
#if CUDIS_DEVICE_CODE
    uint64_t i = 0;
    if ((((uintptr_t)dst | (uintptr_t)src) & 7) == 0) {
        for (; i + 8 <= n; i += 8) {
            *(uint64_t *)(dst + i) = *(const uint64_t *)(src + i);
        }
    }
    ccht_bytes_write(dst + i, src + i, n - i);
#else
    ccht_bytes_write(dst, src, n);
#endif
}

/*
 * ccht_probe with a choice of loads: under the pair lock the buckets cannot
 * change (only stamps move), so relaxed loads do (on the device,
 * ccht_probe's acquire loads cost a fence per slot); optimistic readers use
 * acquire loads. Item checks are ccht_item_is_key's, with wide compares.
 */
CUDIS_HD static inline bool gpu_probe(const ccht_view *v, const ccht_hkey *hk, const uint8_t *key,
                                      uint32_t key_len, bool locked, ccht_loc *loc,
                                      uint32_t *h0_out)
{
    for (int i = 0; i < 2; i++) {
        uint64_t b = i == 0 ? hk->b1 : hk->b2;
        if (i == 1 && b == hk->b1) {
            break;
        }
        for (uint32_t w = 0; w < v->ways; w++) {
            uint64_t *sp = ccht_bkt_slot(v, b, w);
            uint64_t word = locked ? cudis_load_relaxed_u64(sp) : cudis_load_acq_u64(sp);
            if (word == 0 || ccht_slot_fp(word) != hk->fp) {
                continue;
            }
            uint64_t off = ccht_slot_off(word);
            if (off + CCHT_ITEM_HDR_EXP > v->arena_bytes) {
                continue;
            }
            uint32_t h0 = ccht_item_h0(v, off);
            if (!(h0 & CCHT_ITEM_LIVE) || (h0 & CCHT_ITEM_KLEN_MASK) != key_len ||
                off + ccht_item_hdr((h0 & CCHT_ITEM_EXP) != 0) + key_len > v->arena_bytes) {
                continue;
            }
            if (gpu_bytes_eq(ccht_item_key(v, off, h0), key, key_len)) {
                loc->bucket = b;
                loc->way = w;
                loc->word = word;
                *h0_out = h0;
                return true;
            }
        }
    }
    return false;
}

/* Per-thread counter deltas, added to gpu_table.cnt once per block. */
typedef struct gpu_tally {
    int64_t c[GPU_C__COUNT];
} gpu_tally;

CUDIS_HD static inline void gpu_tally_zero(gpu_tally *ty)
{
    for (int i = 0; i < GPU_C__COUNT; i++) {
        ty->c[i] = 0;
    }
}

/* True when a chunk of class `chunk_cls` may hold an item of class `cls`. */
CUDIS_HD static inline bool gpu_class_fits(uint32_t chunk_cls, uint32_t cls)
{
    return chunk_cls >= cls && chunk_cls <= cls + GPU_CLASS_SLACK;
}

/* Account for an item leaving the index; free its chunk unless the caller
 * reuses it. The caller holds the item's bucket. */
CUDIS_HD static inline void gpu_item_drop(const gpu_table *t, uint64_t off, bool free_chunk,
                                          uint32_t shard, gpu_tally *ty)
{
    uint32_t h0 = ccht_item_h0(&t->v, off);
    uint32_t vlen = ccht_item_vlen(&t->v, off);
    uint32_t cls = gpu_chunk_class(t, off);
    ty->c[GPU_C_ITEMS] -= 1;
    ty->c[GPU_C_KEY_BYTES] -= (int64_t)(h0 & CCHT_ITEM_KLEN_MASK);
    ty->c[GPU_C_VAL_BYTES] -= (int64_t)vlen;
    if (cls < t->n_classes) {
        ty->c[GPU_C_CHUNK_BYTES] -= (int64_t)t->class_size[cls];
        if (free_chunk) {
            gpu_free_chunk(t, off, cls, shard);
        }
    }
}

/*
 * Second LRU level: among live items whose chunk fits class `cls` (found by
 * scanning buckets from a random start until GPU_EVICT_CANDIDATES of them,
 * or GPU_EVICT_MAX_SCAN buckets), unlink the one with the oldest stamp
 * (try-lock only: never blocks, so no deadlock with the pair we hold) and
 * return its chunk for reuse, or GPU_NO_CHUNK.
 */
CUDIS_HD static inline uint64_t gpu_evict_for(const gpu_table *t, uint32_t cls,
                                              const ccht_hkey *own, uint64_t seed, gpu_tally *ty)
{
    const ccht_view *v = &t->v;
    uint64_t scan = v->n_buckets < GPU_EVICT_MAX_SCAN ? v->n_buckets : GPU_EVICT_MAX_SCAN;
    for (uint32_t round = 0; round < GPU_EVICT_ROUNDS; round++) {
        uint64_t start = ccht_fastrange(
            cudis_mix64(seed + round * 0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull), v->n_buckets);
        uint32_t seen = 0;
        uint32_t best_age = 0;
        uint64_t best_b = 0, best_word = 0;
        uint32_t best_w = 0;
        for (uint64_t k = 0; k < scan && seen < GPU_EVICT_CANDIDATES; k++) {
            uint64_t b = (start + k) % v->n_buckets;
            if (b == own->b1 || b == own->b2) {
                continue;
            }
            for (uint32_t w = 0; w < v->ways; w++) {
                uint64_t word = cudis_load_acq_u64(ccht_bkt_slot(v, b, w));
                if (word == 0) {
                    continue;
                }
                uint64_t off = ccht_slot_off(word);
                if (off >= v->arena_bytes || !gpu_class_fits(gpu_chunk_class(t, off), cls)) {
                    continue;
                }
                uint32_t age = t->stamp - cudis_load_relaxed_u32(ccht_bkt_stamp(v, b, w));
                if (seen == 0 || age > best_age) {
                    best_age = age;
                    best_b = b;
                    best_w = w;
                    best_word = word;
                }
                seen++;
            }
        }
        if (seen == 0) {
            return GPU_NO_CHUNK; /* nothing of this size anywhere near: give up */
        }
        if (!ccht_bkt_trylock(v, best_b)) {
            continue;
        }
        uint64_t off = GPU_NO_CHUNK;
        if (cudis_load_relaxed_u64(ccht_bkt_slot(v, best_b, best_w)) == best_word) {
            off = ccht_slot_off(best_word);
            cudis_store_rel_u64(ccht_bkt_slot(v, best_b, best_w), 0);
            gpu_item_drop(t, off, false, 0, ty);
            ty->c[GPU_C_EVICT_MEMORY] += 1;
        }
        ccht_bkt_unlock(v, best_b);
        if (off != GPU_NO_CHUNK) {
            return off;
        }
    }
    return GPU_NO_CHUNK;
}

/* True when every OLD segment of a WRITE plan copies bytes onto themselves,
 * so the value can be rebuilt inside its current chunk. */
CUDIS_HD static inline bool gpu_plan_in_place_ok(const cudis_plan *p)
{
    uint32_t at = 0;
    for (uint8_t i = 0; i < p->nseg; i++) {
        if (p->seg[i].src == CUDIS_SEG_OLD && p->seg[i].off != at) {
            return false;
        }
        at += p->seg[i].len;
    }
    return true;
}

/* Rebuild a value in place: OLD segments are already where they belong. */
CUDIS_HD static inline void gpu_build_in_place(const cudis_plan *p, const uint8_t *arg,
                                               uint8_t *dst)
{
    uint32_t at = 0;
    for (uint8_t i = 0; i < p->nseg; i++) {
        const cudis_seg *s = &p->seg[i];
        if (s->src == CUDIS_SEG_ARG) {
            gpu_bytes_write(dst + at, arg + s->off, s->len);
        } else if (s->src == CUDIS_SEG_NUM) {
            ccht_bytes_write(dst + at, (const uint8_t *)p->num + s->off, s->len);
        } else if (s->src == CUDIS_SEG_ZERO) {
            for (uint32_t j = 0; j < s->len; j++) {
                dst[at + j] = 0;
            }
        }
        at += s->len;
    }
}

/* Everything one op needs besides the table. */
typedef struct gpu_op_ctx {
    const cudis_op *op;
    const uint8_t *key; /* key bytes */
    const uint8_t *arg; /* value argument bytes (SET, APPEND, SETRANGE) */
    cudis_result *res;
    uint8_t *out; /* out buffer (may be NULL with out_cap 0) */
    uint64_t out_cap;
    uint64_t *out_len;
    int64_t now_ms;
    uint32_t shard; /* allocator shard (thread index) */
    uint64_t seed;  /* randomness for victim sampling */
} gpu_op_ctx;

/* Read-only ops that take the optimistic path. */
CUDIS_HD static inline bool gpu_op_is_read(const cudis_op *op)
{
    if (op->code == CUDIS_OP_GET) {
        return !(op->flags & (CUDIS_F_DEL | CUDIS_F_SETEXP | CUDIS_F_PERSIST));
    }
    return op->code == CUDIS_OP_EXISTS || op->code == CUDIS_OP_TTL;
}

/* Fill cur from a probed item; false when the read was torn (retry). */
CUDIS_HD static inline bool gpu_cur_from(const ccht_view *v, uint64_t off, uint32_t h0,
                                         int64_t now_ms, cudis_cur *cur)
{
    uint32_t vlen;
    if (!ccht_item_vlen_ok(v, off, h0, &vlen)) {
        return false;
    }
    int64_t e = ccht_item_expire(v, off, h0);
    if (e != 0 && e <= now_ms) {
        cur->found = false;
        return true;
    }
    cur->found = true;
    cur->val = ccht_item_val(v, off, h0);
    cur->val_len = vlen;
    cur->expire_ms = e;
    return true;
}

/* The optimistic read path. */
CUDIS_HD static inline void gpu_exec_read(const gpu_table *t, const gpu_op_ctx *x,
                                          const ccht_hkey *hk, gpu_tally *ty)
{
    const ccht_view *v = &t->v;
    cudis_result *res = x->res;
    bool reserved = false;
    uint64_t roff = 0, rlen = 0;
    for (;;) {
        uint64_t v1 = ccht_read_begin(v, hk->b1);
        uint64_t v2 = hk->b2 != hk->b1 ? ccht_read_begin(v, hk->b2) : v1;
        ccht_loc loc = {0, 0, 0};
        uint32_t h0 = 0;
        cudis_cur cur;
        cur.found = false;
        cur.val = 0;
        cur.val_len = 0;
        cur.expire_ms = 0;
        bool hit = gpu_probe(v, hk, x->key, x->op->key_len, false, &loc, &h0);
        if (hit && !gpu_cur_from(v, ccht_slot_off(loc.word), h0, x->now_ms, &cur)) {
            continue;
        }
        cudis_plan plan;
        int rc = cudis_plan_op(x->op, x->arg, &cur, x->now_ms, t->max_val_len, &plan, res);
        bool outbuf = false;
        if (rc == CUDIS_OK && plan.return_old) {
            uint64_t need = cur.val_len;
            if (!reserved || need > rlen) {
                roff = cudis_fetch_add_u64(x->out_len, need);
                rlen = need;
                reserved = true;
            }
            if (roff + need > x->out_cap) {
                outbuf = true;
            } else {
                gpu_bytes_read(x->out + roff, cur.val, need);
            }
        }
        if (!ccht_read_valid(v, hk->b1, v1) ||
            (hk->b2 != hk->b1 && !ccht_read_valid(v, hk->b2, v2))) {
            continue;
        }
        if (rc != CUDIS_OK) {
            res->status = rc;
            return;
        }
        if (outbuf) {
            res->status = CUDIS_E_OUTBUF;
            res->val_len = cur.val_len;
            return;
        }
        if (plan.return_old) {
            res->flags |= CUDIS_R_VALUE;
            res->val_off = roff;
            res->val_len = cur.val_len;
        }
        if (plan.touch && cur.found) {
            ccht_touch(v, loc.bucket, loc.way, t->stamp, GPU_TOUCH_SLACK);
        }
        if (plan.lookup) {
            ty->c[cur.found ? GPU_C_HITS : GPU_C_MISSES] += 1;
        }
        return;
    }
}

/*
 * Carry out a WRITE plan under the pair lock. `found`/`loc`/`h0` describe
 * the key's live item (if any). Returns CUDIS_OK or CUDIS_E_FULL (nothing
 * changed).
 */
CUDIS_HD static inline int gpu_write_item(const gpu_table *t, const gpu_op_ctx *x,
                                          const ccht_hkey *hk, const cudis_plan *plan, bool found,
                                          const ccht_loc *loc, uint32_t h0, const cudis_cur *cur,
                                          gpu_tally *ty)
{
    const ccht_view *v = &t->v;
    uint32_t klen = x->op->key_len;
    bool has_exp = plan->expire_ms != 0;
    uint32_t cls = gpu_class_of(t, ccht_item_size(klen, plan->new_len, has_exp));
    if (cls >= t->n_classes) {
        return CUDIS_E_VALTOOBIG;
    }
    uint64_t old_off = found ? ccht_slot_off(loc->word) : 0;

    /* In place: the chunk fits, same header shape. */
    if (found && gpu_class_fits(gpu_chunk_class(t, old_off), cls) &&
        ((h0 & CCHT_ITEM_EXP) != 0) == has_exp && gpu_plan_in_place_ok(plan)) {
        gpu_build_in_place(plan, x->arg, ccht_item_val(v, old_off, h0));
        cudis_store_relaxed_u32((uint32_t *)(v->arena + old_off + 4), plan->new_len);
        if (has_exp) {
            ccht_item_set_expire(v, old_off, plan->expire_ms);
        }
        ty->c[GPU_C_VAL_BYTES] += (int64_t)plan->new_len - (int64_t)cur->val_len;
        cudis_store_relaxed_u32(ccht_bkt_stamp(v, loc->bucket, loc->way), t->stamp);
        return CUDIS_OK;
    }

    /* Where the new slot word goes, and whether a victim's chunk fits. */
    ccht_loc dst = {0, 0, 0};
    int victim = CCHT_VICTIM_EMPTY;
    uint64_t chunk = GPU_NO_CHUNK;
    bool reuse = false;
    if (found) {
        dst = *loc;
    } else {
        victim = ccht_pick_slot(v, hk, x->now_ms, t->stamp, &dst);
        if (victim != CCHT_VICTIM_EMPTY) {
            uint64_t vo = ccht_slot_off(dst.word);
            if (gpu_class_fits(gpu_chunk_class(t, vo), cls)) {
                chunk = vo;
                reuse = true;
            }
        }
    }
    if (chunk == GPU_NO_CHUNK) {
        chunk = gpu_alloc_chunk(t, cls, x->shard);
    }
    if (chunk == GPU_NO_CHUNK) {
        chunk = gpu_evict_for(t, cls, hk, x->seed, ty);
    }
    if (chunk == GPU_NO_CHUNK) {
        ty->c[GPU_C_FULL] += 1;
        return CUDIS_E_FULL;
    }
    /* The victim leaves before its chunk is overwritten (gauges read it). */
    if (victim != CCHT_VICTIM_EMPTY) {
        gpu_item_drop(t, ccht_slot_off(dst.word), !reuse, x->shard, ty);
        ty->c[victim == CCHT_VICTIM_EXPIRED ? GPU_C_EVICT_EXPIRED : GPU_C_EVICT_BUCKET] += 1;
    }
    /* Fill the chunk: key, value, then the header (h0 last), then publish. */
    uint8_t *p = v->arena + chunk;
    uint32_t hdr = ccht_item_hdr(has_exp);
    gpu_bytes_write(p + hdr, x->key, klen);
    cudis_plan_build(plan, found ? cur->val : (const uint8_t *)0, x->arg, p + hdr + klen);
    ccht_item_init(v, chunk, klen, plan->new_len, plan->expire_ms);
    ccht_slot_publish(v, dst.bucket, dst.way, ccht_slot_make(hk->fp, chunk, has_exp), t->stamp);
    if (found) {
        gpu_item_drop(t, old_off, true, x->shard, ty);
    }
    ty->c[GPU_C_ITEMS] += 1;
    ty->c[GPU_C_KEY_BYTES] += klen;
    ty->c[GPU_C_VAL_BYTES] += plan->new_len;
    ty->c[GPU_C_CHUNK_BYTES] += (int64_t)t->class_size[gpu_chunk_class(t, chunk)];
    return CUDIS_OK;
}

/* The locked path: every op that may change the key. */
CUDIS_HD static inline void gpu_exec_write(const gpu_table *t, const gpu_op_ctx *x,
                                           const ccht_hkey *hk, gpu_tally *ty)
{
    const ccht_view *v = &t->v;
    cudis_result *res = x->res;
    ccht_pair_lock(v, hk);
    ccht_loc loc = {0, 0, 0};
    uint32_t h0 = 0;
    cudis_cur cur;
    cur.found = false;
    cur.val = 0;
    cur.val_len = 0;
    cur.expire_ms = 0;
    bool found = gpu_probe(v, hk, x->key, x->op->key_len, true, &loc, &h0);
    if (found) {
        uint64_t off = ccht_slot_off(loc.word);
        (void)gpu_cur_from(v, off, h0, x->now_ms, &cur); /* stable under the lock */
        if (!cur.found) {
            /* expired: reclaim it now, the key is absent */
            cudis_store_rel_u64(ccht_bkt_slot(v, loc.bucket, loc.way), 0);
            gpu_item_drop(t, off, true, x->shard, ty);
            ty->c[GPU_C_EVICT_EXPIRED] += 1;
            found = false;
        }
    }
    cudis_plan plan;
    int rc = cudis_plan_op(x->op, x->arg, &cur, x->now_ms, t->max_val_len, &plan, res);
    if (rc != CUDIS_OK) {
        res->status = rc;
        ccht_pair_unlock(v, hk);
        return;
    }
    if (plan.return_old) {
        uint64_t need = cur.val_len;
        uint64_t roff = cudis_fetch_add_u64(x->out_len, need);
        if (roff + need > x->out_cap) {
            res->status = CUDIS_E_OUTBUF;
            res->flags &= ~(uint32_t)CUDIS_R_DONE;
            res->val_len = cur.val_len;
            ccht_pair_unlock(v, hk);
            return;
        }
        gpu_bytes_read(x->out + roff, cur.val, need);
        res->flags |= CUDIS_R_VALUE;
        res->val_off = roff;
        res->val_len = cur.val_len;
    }
    if (plan.action == CUDIS_ACT_SETEXP && found && !(h0 & CCHT_ITEM_EXP) && plan.expire_ms != 0) {
        /* no expiry field in this item: rewrite it with one */
        int64_t e = plan.expire_ms;
        plan.action = CUDIS_ACT_WRITE;
        plan.nseg = 0;
        plan.new_len = cur.val_len;
        plan.expire_ms = e;
        cudis_plan_seg(&plan, CUDIS_SEG_OLD, 0, cur.val_len);
    }
    switch (plan.action) {
    case CUDIS_ACT_WRITE:
        rc = gpu_write_item(t, x, hk, &plan, found, &loc, h0, &cur, ty);
        if (rc != CUDIS_OK) {
            res->status = rc;
            res->flags &= ~(uint32_t)CUDIS_R_DONE;
        }
        break;
    case CUDIS_ACT_SETEXP:
        if (found && (h0 & CCHT_ITEM_EXP)) {
            ccht_item_set_expire(v, ccht_slot_off(loc.word), plan.expire_ms);
        }
        break;
    case CUDIS_ACT_DELETE:
        if (found) {
            cudis_store_rel_u64(ccht_bkt_slot(v, loc.bucket, loc.way), 0);
            gpu_item_drop(t, ccht_slot_off(loc.word), true, x->shard, ty);
        }
        break;
    default: break;
    }
    if (plan.touch && found && plan.action != CUDIS_ACT_WRITE && plan.action != CUDIS_ACT_DELETE) {
        ccht_touch(v, loc.bucket, loc.way, t->stamp, 0);
    }
    if (plan.lookup) {
        ty->c[cur.found ? GPU_C_HITS : GPU_C_MISSES] += 1;
    }
    ccht_pair_unlock(v, hk);
}

/* Run one op: key checks, then the read or the write path. */
CUDIS_HD static inline void gpu_exec_op(const gpu_table *t, const gpu_op_ctx *x, gpu_tally *ty)
{
    cudis_result *res = x->res;
    res->status = CUDIS_OK;
    res->flags = 0;
    res->val_off = 0;
    res->val_len = 0;
    res->reserved = 0;
    res->num = 0;
    uint32_t klen = x->op->key_len;
    if (klen > t->max_key_len) {
        res->status = CUDIS_E_KEYTOOBIG;
        return;
    }
    if (klen == 0 && !t->allow_empty_key) {
        res->status = CUDIS_E_EMPTYKEY;
        return;
    }
    if (x->op->code == 0 || x->op->code >= CUDIS_OP__COUNT) {
        res->status = CUDIS_E_INVAL;
        return;
    }
    ccht_hkey hk = ccht_hash_key(&t->v, x->key, klen);
    if (gpu_op_is_read(x->op)) {
        gpu_exec_read(t, x, &hk, ty);
    } else {
        gpu_exec_write(t, x, &hk, ty);
    }
}

#endif /* GPU_EXEC_H */
