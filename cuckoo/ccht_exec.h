/*
 * ccht_exec.h - the one executor: what the CCHT does for one operation of a
 * batch, written once for the host compiler and nvcc.
 *
 * The cpu engine (ccht.c) calls ccht_exec_read / ccht_exec_write from its
 * prefetching batch loop; the gpu engine's kernels (kernels/) call
 * ccht_exec_op from one thread per op; the host simulation of the kernels
 * (tests/kernels) runs the kernels' loop body on host threads. All of them
 * execute this code over a ccht_table (ccht_layout.h) whose memory is host
 * or device memory; the seam between the two sides is only where that
 * memory lives. The pieces:
 *   - probe both buckets, decide with cudis_plan_op (common/cudis_op.h),
 *     carry the plan out (ccht_bucket.h: locks, probe, victim slot,
 *     publish, touch);
 *   - memory from the arena (ccht_arena.h): a chunk without eviction while
 *     the key's pair is locked; when memory is full, the pair is unlocked
 *     first, the slow path evicts and returns a spare chunk, and the op
 *     starts over with it;
 *   - counters into a per-thread tally (ccht_tally_flush adds it).
 *
 * Concurrency: readers (GET without side effects, EXISTS, TTL) are
 * optimistic (read both versions, probe, copy, validate, retry); every
 * other op locks the key's two buckets. The batch rule (no two ops on one
 * key in a batch when one writes) makes any execution order give the
 * outcome of running the batch's ops one at a time.
 *
 * Write policy (cudis_op.h): a new value is written in place when it keeps
 * the item's chunk (same allocator class, same header shape) and its old
 * bytes stay where they are (SET, INCR, APPEND and SETRANGE within the
 * chunk); otherwise into a new chunk (the victim's when a full pair evicts
 * one of the same class), published with one slot-word store, and the old
 * chunk is freed. Either way under the pair lock, so readers of the key
 * see the old value or the new one, never a mix.
 */
#ifndef CCHT_EXEC_H
#define CCHT_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "ccht_arena.h"
#include "ccht_bucket.h"
#include "ccht_layout.h"
#include "cudis_hd.h"
#include "cudis_op.h"

/* Rounds of "unlock, find memory, relock" one write may take before it
 * reports CUDIS_E_FULL (each round ends with a chunk in hand; a round is
 * lost only when the key's value changed size meanwhile). */
#define CCHT_WRITE_ROUNDS 64

/* One op as the thread running it sees it. */
typedef struct ccht_env {
    const cudis_op *op;
    const uint8_t *key; /* the op's key bytes */
    const uint8_t *arg; /* the op's value bytes (SET, APPEND, SETRANGE) */
    cudis_result *res;
    uint8_t *out; /* the batch's out buffer (NULL with out_cap 0) */
    uint64_t out_cap;
    uint64_t *out_len; /* reservations, atomically (cudis_op.h); NULL: no out
                        * buffer (a value to return is CUDIS_E_OUTBUF) */
    bool truncate;     /* copy min(value, out_cap) to out itself, no reservation
                        * (the fixed-width row gets of the device API) */
    int64_t now_ms;
    uint32_t stamp; /* this op's recency stamp (low bits of the logical clock) */
    uint32_t stamp_end; /* its batch's last op's: no op of the batch stamps later */
    uint32_t shard; /* allocator shard */
    uint64_t seed;  /* the batch's randomness (ccht_batch_seed) */
    uint64_t index; /* the op's index in its batch */
    uint64_t rng;   /* victim sampling state: 0 until the slow path first needs it */
    cudis_evbuf *ev; /* the batch's event sink (cudis_op.h); NULL: none */
} ccht_env;

/* The randomness of a batch that moves the clock from c0 to c1 (both
 * engines derive it the same way, so one thread running a batch on either
 * makes the same choices). */
CUDIS_HD static inline uint64_t ccht_batch_seed(uint64_t c0, uint64_t c1)
{
    return cudis_mix64(c1 ^ 0x94d049bb133111ebull, c0 + 1);
}

/* Fill the parts of x that depend on the op's place: op i of a batch whose
 * clock starts at `base` and whose last op stamps `stamp_end`. */
CUDIS_HD static inline void ccht_env_place(ccht_env *x, uint64_t base, uint32_t stamp_end,
                                           uint64_t seed, uint64_t i)
{
    x->stamp = (uint32_t)(base + i + 1);
    x->stamp_end = stamp_end;
    x->shard = (uint32_t)(base + i);
    x->seed = seed;
    x->index = i;
    x->rng = 0;
}

/* The op's victim sampling state, derived from its batch's seed and its
 * index the first time the slow path needs it. */
CUDIS_HD static inline uint64_t *ccht_env_rng(ccht_env *x)
{
    if (x->rng == 0) {
        x->rng =
            cudis_mix64(x->seed ^ (x->index * 0x9e3779b97f4a7c15ull), 0xbf58476d1ce4e5b9ull) | 1;
    }
    return &x->rng;
}

/* Whether the op dates the key it writes (CUDIS_F_AGED). */
CUDIS_HD static inline bool ccht_op_aged(const cudis_op *op)
{
    return op->code == CUDIS_OP_SET && (op->flags & CUDIS_F_AGED);
}

/* The stamp of a key SET with CUDIS_F_AGED at clock `stamp`: under the
 * LFU policies the counter `arg` (0..255) as of now; else the clock `arg`
 * ticks before (at most the clamp's age), with the policy's bits of a key
 * read since it came (no NEW under allkeys-cudis). */
CUDIS_HD static inline uint32_t ccht_aged_stamp(uint32_t pol, uint32_t stamp, int64_t now_ms,
                                                int64_t arg)
{
    if (ccht_policy_lfu(pol)) {
        uint32_t c = arg <= 0 ? 0u : arg >= 255 ? 255u : (uint32_t)arg;
        return (ccht_lfu_minutes(now_ms) << 8) | c;
    }
    uint32_t back = arg <= 0 ? 0u : arg >= CCHT_AGE_CLAMP ? CCHT_AGE_CLAMP : (uint32_t)arg;
    return ccht_policy_bits(pol) ? ccht_bits_new(pol, stamp - back, true) : stamp - back;
}

/* The stamp an op leaves on its key's slot: the op's clock under the
 * LRU-ranked policies; under the LFU ones the counter after one more
 * access; under allkeys-cudis and allkeys-rrip the clock with the
 * policy's bits after one more access, or as inserted (old: the slot's
 * stamp before; NULL for a new key). */
CUDIS_HD static inline uint32_t ccht_op_stamp(const ccht_table *T, const ccht_env *x,
                                              const uint32_t *old)
{
    uint32_t pol = ccht_policy_of(T);
    if (ccht_op_aged(x->op)) {
        return ccht_aged_stamp(pol, x->stamp, x->now_ms, x->op->arg);
    }
    if (ccht_policy_bits(pol)) {
        return old == 0 ? ccht_bits_new(pol, x->stamp, false)
                        : ccht_bits_hit(pol, *old, x->stamp, 0);
    }
    if (!ccht_policy_lfu(pol)) {
        return x->stamp;
    }
    uint32_t now_min = ccht_lfu_minutes(x->now_ms);
    if (old == 0) {
        return ccht_lfu_new(now_min);
    }
    return ccht_lfu_access(*old, now_min, cudis_load_relaxed_u32(&T->lfu_log_factor),
                           ccht_lfu_decay_of(T),
                           cudis_mix64(x->seed ^ 0x2545f4914f6cdd1dull, x->index + 1));
}

/* An access refreshes the key's slot: its recency (ccht_touch, with
 * `slack`), or its LFU counter. */
CUDIS_HD static inline void ccht_touch_op(const ccht_table *T, const ccht_env *x, uint64_t b,
                                          uint32_t way, uint32_t slack)
{
    uint32_t pol = ccht_policy_of(T);
    if (!ccht_policy_lfu(pol) && !ccht_policy_bits(pol)) {
        ccht_touch(&T->v, b, way, x->stamp, slack);
        return;
    }
    uint32_t *s = ccht_bkt_stamp(&T->v, b, way);
    uint32_t old = cudis_load_relaxed_u32(s);
    uint32_t now = ccht_policy_bits(pol) ? ccht_bits_hit(pol, old, x->stamp, slack)
                                         : ccht_op_stamp(T, x, &old);
    if (now != old) {
        cudis_store_relaxed_u32(s, now);
    }
}

/* Add a thread's counter deltas to the table. */
CUDIS_HD static inline void ccht_tally_flush(const ccht_table *T, const ccht_tally *ty)
{
    for (int i = 0; i < CCHT_C__COUNT; i++) {
        if (ty->c[i] != 0) {
            cudis_fetch_add_u64(&T->cnt[i], (uint64_t)ty->c[i]);
        }
    }
}

/* Key checks every op gets first: CUDIS_OK or the op's error. */
CUDIS_HD static inline int ccht_exec_check(const ccht_table *T, const cudis_op *op)
{
    if (op->key_len > T->max_key_len) {
        return CUDIS_E_KEYTOOBIG;
    }
    if (op->key_len == 0 && !T->allow_empty_key) {
        return CUDIS_E_EMPTYKEY;
    }
    if (op->code == 0 || op->code >= CUDIS_OP__COUNT) {
        return CUDIS_E_INVAL;
    }
    return CUDIS_OK;
}

/* Ops that take the optimistic path. */
CUDIS_HD static inline bool ccht_op_is_read(const cudis_op *op)
{
    if (op->code == CUDIS_OP_GET) {
        return !(op->flags & (CUDIS_F_DEL | CUDIS_F_SETEXP | CUDIS_F_PERSIST));
    }
    /* the hash ops read the value's bytes while planning: under the lock */
    return op->code == CUDIS_OP_EXISTS || op->code == CUDIS_OP_TTL;
}

CUDIS_HD static inline void ccht_res_clear(cudis_result *res, int status)
{
    res->status = status;
    res->flags = 0;
    res->val_off = 0;
    res->val_len = 0;
    res->type = 0;
    res->num = 0;
}

/* The key as a probe found it: fills cur (expired = absent). False when
 * the item's length is torn (optimistic read: retry). */
CUDIS_HD static inline bool ccht_cur_from(const ccht_view *v, uint64_t off, uint32_t h0,
                                          int64_t now_ms, cudis_cur *cur)
{
    uint32_t vlen;
    if (!ccht_item_vlen_ok(v, off, h0, &vlen)) {
        return false;
    }
    int64_t e = ccht_item_expire(v, off, h0);
    cur->found = !(e != 0 && e <= now_ms);
    cur->val = ccht_item_val(v, off, h0);
    cur->val_len = vlen;
    cur->expire_ms = e;
    cur->type = ccht_item_type(h0);
    return true;
}

CUDIS_HD static inline void ccht_count_lookup(ccht_tally *ty, const cudis_plan *plan, bool found)
{
    if (plan->lookup) {
        ty->c[found ? CCHT_C_HITS : CCHT_C_MISSES] += 1;
    }
}

/* ------------------------------------------------------------------------
 * Reads without a lock
 * ---------------------------------------------------------------------- */

/* Run a read op (ccht_op_is_read). Returns false, having done nothing,
 * when the op must run as a write instead (ccht_exec_write): with an event
 * sink, an expired item met is reclaimed under the pair lock, so that its
 * event is reported once. The caller calls ccht_exec_write itself, so that
 * function keeps one call site (inlined into the batch loop). */
CUDIS_HD static inline bool ccht_exec_read(const ccht_table *T, ccht_env *x, const ccht_hkey *hk,
                                           ccht_tally *ty)
{
    const ccht_view *v = &T->v;
    cudis_result *res = x->res;
    uint64_t rsv_off = 0;
    uint32_t rsv_len = 0;
    bool have_rsv = false;
    for (;;) {
        uint64_t v1 = ccht_read_begin(v, hk->b1);
        uint64_t v2 = hk->b2 != hk->b1 ? ccht_read_begin(v, hk->b2) : v1;
        ccht_loc loc = {0, 0, 0};
        uint32_t h0 = 0;
        cudis_cur cur = {false, 0, 0, 0, 0};
        if (ccht_probe(v, hk, x->op->db, x->key, x->op->key_len, false, &loc, &h0)) {
            if (!ccht_cur_from(v, ccht_slot_off(loc.word), h0, x->now_ms, &cur)) {
                continue;
            }
            if (!cur.found && x->ev != 0) {
                return false; /* expired: the write path reclaims and reports it */
            }
        }
        cudis_plan plan;
        int rc = cudis_plan_op(x->op, x->arg, &cur, x->now_ms, T->max_val_len, &plan, res);
        bool outbuf = false;
        uint64_t at = 0;
        uint32_t need = rc == CUDIS_OK ? plan.ret_len : 0;
        if (rc == CUDIS_OK && plan.return_old) {
            if (x->truncate) {
                ccht_bytes_read(x->out, cur.val + plan.ret_off,
                                need < x->out_cap ? need : x->out_cap);
            } else if (x->out_len == 0) {
                outbuf = true; /* no out buffer at all */
            } else {
                if (!have_rsv || need > rsv_len) {
                    rsv_off = cudis_fetch_add_u64(x->out_len, need);
                    rsv_len = need;
                    have_rsv = true;
                }
                at = rsv_off;
                if (at + need > x->out_cap) {
                    outbuf = true;
                } else {
                    ccht_bytes_read(x->out + at, cur.val + plan.ret_off, need);
                }
            }
        }
        if (!ccht_read_valid(v, hk->b1, v1) ||
            (hk->b2 != hk->b1 && !ccht_read_valid(v, hk->b2, v2))) {
            continue;
        }
        if (rc != CUDIS_OK) {
            res->status = rc;
            return true;
        }
        if (outbuf) {
            res->status = CUDIS_E_OUTBUF;
            res->val_len = need;
            res->flags &= ~(uint32_t)CUDIS_R_VALUE;
            return true;
        }
        if (plan.return_old) {
            res->flags |= CUDIS_R_VALUE;
            res->val_off = at;
            res->val_len = need;
        }
        if (x->op->code == CUDIS_OP_EXISTS && cur.found) { /* OBJECT FREQ / IDLETIME */
            uint32_t st = cudis_load_relaxed_u32(ccht_bkt_stamp(v, loc.bucket, loc.way));
            if (ccht_policy_lfu(ccht_policy_of(T))) {
                res->num = ccht_lfu_count(st, ccht_lfu_minutes(x->now_ms), ccht_lfu_decay_of(T));
            } else if (x->op->flags & CUDIS_F_STAMP) {
                res->num = ccht_policy_bits(ccht_policy_of(T)) ? st & ~CCHT_CUDIS_LOW : st;
            }
        }
        if (plan.touch && cur.found) {
            ccht_touch_op(T, x, loc.bucket, loc.way, T->stamp_slack);
        }
        ccht_count_lookup(ty, &plan, cur.found);
        return true;
    }
}

/* ------------------------------------------------------------------------
 * Writes under the key's pair lock
 * ---------------------------------------------------------------------- */

/* True when a WRITE plan's value can be rebuilt inside its current chunk:
 * every OLD segment copies bytes onto themselves but at most one, which
 * moves (ZADD's shift of the entries between a member's old and new
 * places, an insert's shift of the tail) and whose bytes no other OLD
 * segment reads. ccht_build_value moves that one first, then writes the
 * rest over bytes no OLD segment still needs. */
CUDIS_HD static inline bool ccht_plan_in_place(const cudis_plan *p)
{
    if (p->hedit != 0) {
        return false; /* a hash edit reads the old value while writing the new */
    }
    uint32_t at = 0;
    int moved = -1;
    for (uint8_t i = 0; i < p->nseg; i++) {
        if (p->seg[i].src == CUDIS_SEG_OLD && p->seg[i].off != at) {
            if (moved >= 0) {
                return false;
            }
            moved = i;
        }
        at += p->seg[i].len;
    }
    if (moved >= 0) {
        const cudis_seg *m = &p->seg[moved];
        for (uint8_t i = 0; i < p->nseg; i++) {
            const cudis_seg *s = &p->seg[i];
            if ((int)i != moved && s->src == CUDIS_SEG_OLD && s->off < m->off + m->len &&
                m->off < s->off + s->len) {
                return false;
            }
        }
    }
    return true;
}

/* Build a WRITE plan's value at dst: a fresh chunk (in_place = false), or
 * the current value's own bytes (in_place: OLD segments are already there).
 * Through the byte helpers: under TSan optimistic readers may be reading
 * the chunk, on the device the copies go 8 bytes at a time. */
CUDIS_HD static inline void ccht_build_value(const cudis_plan *p, const uint8_t *old,
                                             const uint8_t *arg, uint8_t *dst, bool in_place)
{
    if (p->hedit != 0) {
        cudis_plan_build(p, old, arg, dst); /* never in place (ccht_plan_in_place) */
        return;
    }
    uint32_t at = 0;
    for (uint8_t i = 0; in_place && i < p->nseg; i++) { /* the one OLD segment that moves */
        const cudis_seg *s = &p->seg[i];
        if (s->src == CUDIS_SEG_OLD && s->off != at) {
            ccht_bytes_move(dst + at, old + s->off, s->len);
        }
        at += s->len;
    }
    at = 0;
    for (uint8_t i = 0; i < p->nseg; i++) {
        const cudis_seg *s = &p->seg[i];
        if (s->src == CUDIS_SEG_ZERO) {
            ccht_bytes_zero(dst + at, s->len);
        } else if (s->src == CUDIS_SEG_ARG) {
            ccht_bytes_write(dst + at, arg + s->off, s->len);
        } else if (s->src == CUDIS_SEG_NUM) {
            ccht_bytes_write(dst + at, (const uint8_t *)p->num + s->off, s->len);
        } else if (!in_place) {
            ccht_bytes_write(dst + at, old + s->off, s->len);
        }
        at += s->len;
    }
}

/* Fill a chunk with key + the plan's value and return its slot word. */
CUDIS_HD static inline uint64_t ccht_fill_item(const ccht_view *v, uint64_t off,
                                               const ccht_hkey *hk, const ccht_env *x,
                                               const cudis_plan *plan, const uint8_t *old)
{
    int has_exp = plan->expire_ms != 0;
    uint8_t *p = v->arena + off + ccht_item_hdr(has_exp);
    ccht_bytes_write(p, x->key, x->op->key_len);
    ccht_build_value(plan, old, x->arg, p + x->op->key_len, false);
    ccht_item_init(v, off, x->op->db, plan->new_type, x->op->key_len, plan->new_len,
                   plan->expire_ms);
    return ccht_slot_make(hk->fp, off, has_exp);
}

CUDIS_HD static inline void ccht_exec_write(const ccht_table *T, ccht_env *x, const ccht_hkey *hk,
                                            ccht_tally *ty)
{
    const ccht_view *v = &T->v;
    const ccht_arena *a = &T->a;
    cudis_result *res = x->res;
    uint64_t spare = CCHT_NO_CHUNK;
    uint32_t spare_cls = 0;
    for (uint32_t round = 0;; round++) {
        ccht_pair_lock(v, hk);
        ccht_loc loc = {0, 0, 0};
        uint32_t h0 = 0;
        cudis_cur cur = {false, 0, 0, 0, 0};
        uint64_t old_off = 0;
        bool f = ccht_probe(v, hk, x->op->db, x->key, x->op->key_len, true, &loc, &h0);
        if (f) {
            old_off = ccht_slot_off(loc.word);
            (void)ccht_cur_from(v, old_off, h0, x->now_ms, &cur); /* stable under the lock */
        }
        bool expired = f && !cur.found;
        cudis_plan plan;
        int rc = cudis_plan_op(x->op, x->arg, &cur, x->now_ms, T->max_val_len, &plan, res);
        if (rc < 0) {
            ccht_pair_unlock(v, hk);
            res->status = rc;
            break;
        }
        /* an expiry given to an item stored without the field: rewrite it */
        if (plan.action == CUDIS_ACT_SETEXP && !(h0 & CCHT_ITEM_EXP) && plan.expire_ms != 0) {
            plan.action = CUDIS_ACT_WRITE;
            plan.nseg = 0;
            plan.hedit = 0;
            plan.new_type = cur.type;
            plan.new_len = cur.val_len;
            cudis_plan_seg(&plan, CUDIS_SEG_OLD, 0, cur.val_len);
        }

        /* Where a written value goes: in place, a victim's chunk, or a new one. */
        bool in_place = false;
        bool known = false; /* allkeys-cudis: the new key left a ghost */
        uint64_t chunk = CCHT_NO_CHUNK;
        ccht_loc dst = loc;
        int victim = CCHT_VICTIM_EMPTY;
        if (plan.action == CUDIS_ACT_WRITE) {
            int has_exp = plan.expire_ms != 0;
            uint32_t cls =
                ccht_arena_class_for(a, ccht_item_size(x->op->key_len, plan.new_len, has_exp));
            if (cls == CCHT_NONE32) {
                ccht_pair_unlock(v, hk);
                res->status = CUDIS_E_NOFIT; /* bigger than all memory */
                res->flags &= ~(uint32_t)CUDIS_R_DONE;
                ty->c[CCHT_C_FULL] += 1;
                break;
            }
            if (cur.found && ((h0 & CCHT_ITEM_EXP) != 0) == (has_exp != 0) &&
                cur.type == plan.new_type && ccht_arena_chunk_class(a, old_off) == cls &&
                ccht_plan_in_place(&plan)) {
                in_place = true;
            } else {
                if (!f) {
                    victim = ccht_pick_slot(v, hk, x->now_ms, x->stamp, ccht_policy_of(T),
                                            ccht_lfu_decay_of(T), &dst);
                    if (victim == CCHT_VICTIM_NONE) { /* full, and the policy evicts none */
                        ccht_pair_unlock(v, hk);
                        if (spare != CCHT_NO_CHUNK) {
                            ccht_arena_free(a, spare, x->shard);
                        }
                        res->status = CUDIS_E_FULL;
                        res->flags &= ~(uint32_t)CUDIS_R_DONE;
                        res->num = 0;
                        ty->c[CCHT_C_FULL] += 1;
                        break;
                    }
                    if (victim != CCHT_VICTIM_EMPTY &&
                        ccht_arena_chunk_class(a, ccht_slot_off(dst.word)) == cls) {
                        chunk = ccht_slot_off(dst.word);
                    }
                }
                if (chunk == CCHT_NO_CHUNK && spare != CCHT_NO_CHUNK && spare_cls == cls) {
                    chunk = spare;
                    spare = CCHT_NO_CHUNK;
                }
                if (chunk == CCHT_NO_CHUNK) {
                    chunk = ccht_arena_alloc(a, cls, x->shard);
                }
                if (chunk == CCHT_NO_CHUNK) {
                    /* memory is full: find some with no bucket held */
                    ccht_pair_unlock(v, hk);
                    if (spare != CCHT_NO_CHUNK) {
                        ccht_arena_free(a, spare, x->shard);
                    }
                    /* allkeys-cudis/-rrip rank by age: from the batch's end,
                     * so that keys of ops run earlier but stamped later (any
                     * order on the device) do not look brand new (LRU: ours) */
                    ccht_mem_ctx m = {
                        .now_ms = x->now_ms,
                        .now_stamp = ccht_policy_bits(ccht_policy_of(T)) ? x->stamp_end : x->stamp,
                        .shard = x->shard,
                        .policy = ccht_policy_of(T),
                        .lfu_decay = ccht_lfu_decay_of(T),
                        .rng = ccht_env_rng(x),
                        .ty = ty,
                        .ev = x->ev};
                    spare = round < CCHT_WRITE_ROUNDS ? ccht_arena_alloc_slow(T, cls, &m)
                                                      : CCHT_NO_CHUNK;
                    if (spare == CCHT_NO_CHUNK) {
                        res->status = CUDIS_E_FULL;
                        res->flags &= ~(uint32_t)CUDIS_R_DONE;
                        res->num = 0;
                        ty->c[CCHT_C_FULL] += 1;
                        break;
                    }
                    spare_cls = cls;
                    continue;
                }
            }
        }
        bool victim_chunk = f ? false
                              : (victim != CCHT_VICTIM_EMPTY && chunk != CCHT_NO_CHUNK &&
                                 chunk == ccht_slot_off(dst.word));

        if (plan.return_old) {
            uint32_t need = plan.ret_len;
            uint64_t at = x->out_len != 0 ? cudis_fetch_add_u64(x->out_len, need) : UINT64_MAX;
            if (at == UINT64_MAX || at + need > x->out_cap) {
                if (chunk != CCHT_NO_CHUNK && !victim_chunk) {
                    ccht_arena_free(a, chunk, x->shard);
                }
                ccht_pair_unlock(v, hk);
                res->status = CUDIS_E_OUTBUF;
                res->val_len = need;
                res->flags &= ~(uint32_t)(CUDIS_R_DONE | CUDIS_R_VALUE);
                break;
            }
            ccht_bytes_read(x->out + at, cur.val + plan.ret_off, need);
            res->val_off = at;
            res->val_len = need;
            res->flags |= CUDIS_R_VALUE;
        }

        switch (plan.action) {
        case CUDIS_ACT_WRITE:
            if (in_place) {
                ccht_build_value(&plan, cur.val, x->arg, (uint8_t *)cur.val, true);
                cudis_store_relaxed_u32((uint32_t *)(v->arena + old_off + 4), plan.new_len);
                if (plan.expire_ms != 0) {
                    ccht_tally_expiry(ty, v, x->op->db, ccht_item_expire(v, old_off, h0),
                                      plan.expire_ms);
                    ccht_item_set_expire(v, old_off, plan.expire_ms);
                }
                ty->c[CCHT_C_VAL_BYTES] += (int64_t)plan.new_len - (int64_t)cur.val_len;
                if (ccht_op_aged(x->op)) {
                    cudis_store_relaxed_u32(ccht_bkt_stamp(v, loc.bucket, loc.way),
                                            ccht_op_stamp(T, x, 0));
                } else {
                    ccht_touch_op(T, x, loc.bucket, loc.way, 0);
                }
                break;
            }
            if (!f && ccht_policy_cudis(ccht_policy_of(T))) {
                known = ccht_ghost_take(v, hk);
                if (victim == CCHT_VICTIM_LRU &&
                    (cudis_load_relaxed_u32(ccht_bkt_stamp(v, dst.bucket, dst.way)) &
                     CCHT_CUDIS_NEW)) {
                    ccht_ghost_put(v, dst.bucket, dst.word);
                }
            }
            if (victim != CCHT_VICTIM_EMPTY) {
                /* the victim leaves before its chunk may be overwritten */
                bool vexp = victim == CCHT_VICTIM_EXPIRED;
                ccht_gone(ty, vexp ? CCHT_C_EVICT_EXPIRED : CCHT_C_EVICT_BUCKET, x->ev,
                          vexp ? CUDIS_EV_EXPIRED : CUDIS_EV_EVICTED, v, ccht_slot_off(dst.word));
                ccht_tally_drop(ty, T, ccht_slot_off(dst.word));
            }
            if (f) {
                if (expired) {
                    ccht_gone(ty, CCHT_C_EVICT_EXPIRED, x->ev, CUDIS_EV_EXPIRED, v, old_off);
                }
                ccht_tally_drop(ty, T, old_off);
            }
            {
                uint64_t word = ccht_fill_item(v, chunk, hk, x, &plan, cur.found ? cur.val : 0);
                /* a key written over keeps its LFU counter (one more access) */
                uint32_t was = cudis_load_relaxed_u32(ccht_bkt_stamp(v, dst.bucket, dst.way));
                uint32_t st = ccht_op_stamp(T, x, f && !expired ? &was : 0);
                ccht_slot_publish(v, dst.bucket, dst.way, word,
                                  known ? st & ~(uint32_t)CCHT_CUDIS_NEW : st);
            }
            if (f) {
                ccht_arena_free(a, old_off, x->shard);
            } else if (victim != CCHT_VICTIM_EMPTY && !victim_chunk) {
                ccht_arena_free(a, ccht_slot_off(dst.word), x->shard);
            }
            ty->c[CCHT_C_ITEMS] += 1;
            ty->c[CCHT_C_CHUNK_BYTES] += (int64_t)ccht_chunk_bytes(a, chunk);
            ccht_db_count(v, x->op->db, 1);
            ccht_tally_expiry(ty, v, x->op->db, 0, plan.expire_ms);
            ty->c[CCHT_C_KEY_BYTES] += x->op->key_len;
            ty->c[CCHT_C_VAL_BYTES] += plan.new_len;
            break;
        case CUDIS_ACT_SETEXP:
            if (h0 & CCHT_ITEM_EXP) { /* else the expiry was none and stays none */
                ccht_tally_expiry(ty, v, x->op->db, ccht_item_expire(v, old_off, h0),
                                  plan.expire_ms);
                ccht_item_set_expire(v, old_off, plan.expire_ms);
            }
            ccht_touch_op(T, x, loc.bucket, loc.way, T->stamp_slack);
            break;
        case CUDIS_ACT_DELETE:
            ccht_tally_drop(ty, T, old_off);
            cudis_store_rel_u64(ccht_bkt_slot(v, loc.bucket, loc.way), 0);
            ccht_arena_free(a, old_off, x->shard);
            break;
        default:
            if (expired) {
                /* reclaim the expired item found */
                ccht_gone(ty, CCHT_C_EVICT_EXPIRED, x->ev, CUDIS_EV_EXPIRED, v, old_off);
                ccht_tally_drop(ty, T, old_off);
                cudis_store_rel_u64(ccht_bkt_slot(v, loc.bucket, loc.way), 0);
                ccht_arena_free(a, old_off, x->shard);
            } else if (plan.touch && cur.found) {
                ccht_touch_op(T, x, loc.bucket, loc.way, T->stamp_slack);
            }
            break;
        }
        ccht_count_lookup(ty, &plan, cur.found);
        ccht_pair_unlock(v, hk);
        break;
    }
    if (spare != CCHT_NO_CHUNK) {
        ccht_arena_free(a, spare, x->shard);
    }
}

/* One op, from its key checks on (the kernels' per-thread body). */
CUDIS_HD static inline void ccht_exec_op(const ccht_table *T, ccht_env *x, ccht_tally *ty)
{
    int rc = ccht_exec_check(T, x->op);
    ccht_res_clear(x->res, rc);
    if (rc != CUDIS_OK) {
        return;
    }
    ccht_hkey hk = ccht_hash_key(&T->v, x->op->db, x->key, x->op->key_len);
    if (!ccht_op_is_read(x->op) || !ccht_exec_read(T, x, &hk, ty)) {
        ccht_exec_write(T, x, &hk, ty);
    }
}

/* ------------------------------------------------------------------------
 * Whole-table helpers shared by both engines
 * ---------------------------------------------------------------------- */

/* Remove from bucket b (locking it) the items that have expired at now_ms
 * (db < 0: the sweep) or that belong to database db (FLUSHDB); the former
 * count as expired evictions and are reported to ev (may be NULL). The
 * sweep passes over a bucket the volatile map does not mark, and unmarks
 * one left with no item that has an expiry (under its lock, where marks
 * are made). Returns how many. */
CUDIS_HD static inline uint32_t ccht_drop_bucket(const ccht_table *T, uint64_t b, int64_t now_ms,
                                                 int db, uint32_t shard, ccht_tally *ty,
                                                 cudis_evbuf *ev)
{
    const ccht_view *v = &T->v;
    if (db < 0 && !cudis_vmap_test(v->vmap, b)) {
        return 0;
    }
    bool any = false;
    for (uint32_t w = 0; w < v->ways; w++) {
        uint64_t word = cudis_load_relaxed_u64(ccht_bkt_slot(v, b, w));
        any = any || (db < 0 ? (word & CCHT_SLOT_EXP) != 0 : word != 0);
    }
    if (!any && db >= 0) {
        return 0;
    }
    uint32_t n = 0;
    bool left = false; /* an item with an expiry stays */
    ccht_bkt_lock(v, b);
    for (uint32_t w = 0; w < v->ways; w++) {
        uint64_t word = cudis_load_relaxed_u64(ccht_bkt_slot(v, b, w));
        if (word == 0) {
            continue;
        }
        uint64_t off = ccht_slot_off(word);
        bool drop = db < 0 ? ccht_slot_expired(v, word, now_ms)
                           : ccht_item_db(ccht_item_h0(v, off)) == (uint32_t)db;
        if (drop) {
            if (db < 0) {
                ccht_gone(ty, CCHT_C_EVICT_EXPIRED, ev, CUDIS_EV_EXPIRED, v, off);
            }
            ccht_tally_drop(ty, T, off);
            cudis_store_rel_u64(ccht_bkt_slot(v, b, w), 0);
            ccht_arena_free(&T->a, off, shard);
            n++;
        } else if (word & CCHT_SLOT_EXP) {
            left = true;
        }
    }
    if (db < 0 && !left) {
        cudis_vmap_unmark(v->vmap, v->vmap_words, b);
    }
    ccht_bkt_unlock(v, b);
    return n;
}

/* Reclaim the expired items of bucket b (locks it), reporting them to ev
 * (may be NULL). Returns how many. */
CUDIS_HD static inline uint32_t ccht_sweep_bucket(const ccht_table *T, uint64_t b, int64_t now_ms,
                                                  uint32_t shard, ccht_tally *ty, cudis_evbuf *ev)
{
    return ccht_drop_bucket(T, b, now_ms, -1, shard, ty, ev);
}

/* Remove the items of database db from bucket b (locks it; FLUSHDB).
 * Returns how many. */
CUDIS_HD static inline uint32_t ccht_drop_db_bucket(const ccht_table *T, uint64_t b, uint32_t db,
                                                    uint32_t shard, ccht_tally *ty)
{
    return ccht_drop_bucket(T, b, 0, (int)db, shard, ty, 0);
}

#endif /* CCHT_EXEC_H */
