/*
 * ccht_bucket.h - the CCHT bucket algorithm, written once for the host
 * compiler and nvcc (CUDIS_HD static inline functions over a ccht_view).
 *
 * No allocation, no pthread, no pointers stored in memory: only the view's
 * base pointers and the atomics of cudis_hd.h. The executor (ccht_exec.h)
 * and the arena (ccht_arena.h), run by the host engine (ccht.c) and the
 * CUDA kernels (kernels/) alike, are built on these functions.
 *
 * Protocol (DESIGN.md section 2):
 * - A key hashes (cudis_hash with the view's seed) to two buckets b1 != b2
 *   (fastrange over n_buckets) and a 15-bit fingerprint.
 * - Writers lock both buckets in index order (ccht_pair_lock), probe both,
 *   decide (cudis_plan_op), write the value (in place, or into a new chunk
 *   published with one release store of its slot word, the old chunk freed
 *   while still holding the lock), then unlock (ccht_pair_unlock): the
 *   version moves by 2.
 * - Readers are optimistic: v = ccht_read_begin() for both buckets, probe,
 *   copy what they need, then ccht_read_valid() on both; any change (a
 *   writer published, or freed a chunk the reader may have been copying)
 *   means retry. A reader never trusts item bytes it read before validation:
 *   lengths are bound-checked against the arena, so a torn read can only
 *   cause a retry, never an out-of-bounds access.
 * - Inserting a new key: an empty slot (in the emptier bucket), else an
 *   expired item's slot in b1 then b2; else the slot with the oldest stamp
 *   of the two buckets (each bucket's LRU tail; the older one loses). No
 *   displacement chains.
 * - Hits refresh the slot's 32-bit stamp (racy relaxed store, skipped when
 *   the stamp is recent enough: `slack`). Stamps are the low bits of a
 *   64-bit per-op clock; ccht_bkt_clamp, run over a few buckets by every
 *   batch, keeps each within 2^30 ticks of the clock, so ages (ccht_age)
 *   never wrap.
 *
 * Thread-safety of item bytes under ThreadSanitizer: optimistic readers may
 * read a chunk a writer is refilling (the validation discards that read).
 * Under TSan the byte helpers below use relaxed atomics so this benign race
 * is not reported; normal builds use memcpy/memcmp.
 */
#ifndef CCHT_BUCKET_H
#define CCHT_BUCKET_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ccht_layout.h"
#include "cudis_hd.h"
#include "cudis_op.h"
#include "cudis_vmap.h"

#if !CUDIS_DEVICE_CODE
#include <sched.h>
#endif

#if defined(__SANITIZE_THREAD__)
#define CCHT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CCHT_TSAN 1
#endif
#endif
#ifndef CCHT_TSAN
#define CCHT_TSAN 0
#endif

/* Prefetch helpers must be inlined early: gcc otherwise finds a function
 * of prefetches "const" and deletes its calls (measured: no bucket
 * prefetch at all in ccht_execute, 3x slower out of cache). */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define CCHT_ALWAYS_INLINE __attribute__((always_inline))
#else
#define CCHT_ALWAYS_INLINE
#endif

#if CUDIS_DEVICE_CODE
#define CCHT_PREFETCH(p) ((void)(p))
#define CCHT_PAUSE() __nanosleep(64)
#else
#define CCHT_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 3)
#if defined(__x86_64__) || defined(__i386__)
#define CCHT_PAUSE() __builtin_ia32_pause()
#else
#define CCHT_PAUSE() ((void)0)
#endif
#endif

/* ------------------------------------------------------------------------
 * Addressing
 * ---------------------------------------------------------------------- */

/* Bucket b: one of the index's n_buckets, or during a resize one of the
 * new index's (numbered after them). */
CUDIS_HD static inline uint8_t *ccht_bkt(const ccht_view *v, uint64_t b)
{
    return b < v->n_buckets ? v->buckets + b * v->bucket_bytes
                            : v->rs_buckets + (b - v->n_buckets) * v->bucket_bytes;
}

/* Bucket numbers a walk over the whole index goes through: during a
 * resize both indexes' (see ccht_bkt_live). */
CUDIS_HD static inline uint64_t ccht_extent(const ccht_view *v)
{
    return v->n_buckets + v->rs_n;
}

/* Whether bucket number b (below ccht_extent) is in use: an old bucket not
 * moved yet, or a new one that has received the items of old ones (its
 * stretch of hash space lies in the moved part). A halving runs in place
 * (new bucket k is old bucket k's memory), so a walk over the index must
 * skip the others: they are empty, or another number's memory. */
CUDIS_HD static inline bool ccht_bkt_live(const ccht_view *v, uint64_t b)
{
    if (b < v->n_buckets) {
        return b >= v->rs_done;
    }
    uint64_t k = b - v->n_buckets;
    return k < (v->rs_n > v->n_buckets ? 2 * v->rs_done : (v->rs_done + 1) / 2);
}

CUDIS_HD static inline uint64_t *ccht_bkt_version(const ccht_view *v, uint64_t b)
{
    return (uint64_t *)(ccht_bkt(v, b) + CCHT_BKT_VERSION_OFF);
}

CUDIS_HD static inline uint64_t *ccht_bkt_slot(const ccht_view *v, uint64_t b, uint32_t way)
{
    return (uint64_t *)(ccht_bkt(v, b) + CCHT_BKT_SLOTS_OFF) + way;
}

CUDIS_HD static inline uint32_t *ccht_bkt_stamp(const ccht_view *v, uint64_t b, uint32_t way)
{
    return (uint32_t *)(ccht_bkt(v, b) + CCHT_BKT_STAMPS_OFF(v->ways)) + way;
}

/* (x * n) >> 64: maps a 64-bit hash onto [0, n) for any n. */
CUDIS_HD static inline uint64_t ccht_fastrange(uint64_t x, uint64_t n)
{
#if CUDIS_DEVICE_CODE
    return __umul64hi(x, n);
#else
    return (uint64_t)(((__uint128_t)x * n) >> 64);
#endif
}

/* Age of a stamp at clock `now`: stamps are the low 32 bits of a 64-bit
 * logical clock, and ccht_bkt_clamp keeps every stamp within 2^31 ticks of
 * the clock, so the difference read as signed is the true age; a stamp
 * slightly ahead of `now` (an op later in the same batch) is age 0. */
CUDIS_HD static inline uint32_t ccht_age(uint32_t now, uint32_t stamp)
{
    int32_t d = (int32_t)(now - stamp);
    return d > 0 ? (uint32_t)d : 0;
}

/* The bucket a 64-bit candidate hash names. During a resize the old
 * bucket, or when that one's items have moved, the new index's bucket for
 * the same hash: it covers the same stretch of hash space (fastrange over
 * twice as many buckets splits old bucket b into 2b and 2b + 1; over half
 * as many merges 2k and 2k + 1 into k), so an item moves only with its own
 * old bucket. */
CUDIS_HD static inline uint64_t ccht_bucket_of(const ccht_view *v, uint64_t h)
{
    uint64_t b = ccht_fastrange(h, v->n_buckets);
    if (b < v->rs_done) {
        b = v->n_buckets + ccht_fastrange(h, v->rs_n);
    }
    return b;
}

/* The second candidate hash of a key whose cudis_hash is h. */
CUDIS_HD static inline uint64_t ccht_hash2(uint64_t h)
{
    return cudis_mix64(h ^ 0x9e3779b97f4a7c15ull, 0xd6e8feb86659fd93ull);
}

/* Candidate buckets and fingerprint of a key whose cudis_hash is h. The
 * two may be the same bucket (1 key in n_buckets has one). */
CUDIS_HD static inline ccht_hkey ccht_hkey_of(const ccht_view *v, uint64_t h)
{
    ccht_hkey hk;
    hk.b1 = ccht_bucket_of(v, h);
    hk.b2 = ccht_bucket_of(v, ccht_hash2(h));
    hk.fp = (uint32_t)(h & CCHT_SLOT_FP_MASK);
    return hk;
}

/* The hash seed of database db: the same key in two databases lands in
 * unrelated buckets (database 0 keeps the table's seed). */
CUDIS_HD static inline uint64_t ccht_db_seed(const ccht_view *v, uint32_t db)
{
    return v->seed ^ ((uint64_t)db * 0x9e3779b97f4a7c15ull);
}

/* Candidate buckets and fingerprint of a key of database db. */
CUDIS_HD static inline ccht_hkey ccht_hash_key(const ccht_view *v, uint32_t db, const uint8_t *key,
                                               uint32_t key_len)
{
    return ccht_hkey_of(v, cudis_hash(key, key_len, ccht_db_seed(v, db)));
}

/* The database of an item (from its header word). */
CUDIS_HD static inline uint32_t ccht_item_db(uint32_t h0)
{
    return (h0 & CCHT_ITEM_DB_MASK) >> CCHT_ITEM_DB_SHIFT;
}

/* Items per database: database 0's are the table's total minus the others,
 * so the common case touches no extra counter. */
CUDIS_HD static inline void ccht_db_count(const ccht_view *v, uint32_t db, int64_t delta)
{
    if (db != 0 && v->db_items != 0) {
        cudis_fetch_add_u64(&v->db_items[db], (uint64_t)delta);
    }
}

/* Items with an expiry: the table's (a thread's tally, ty->c[CCHT_C_VOLATILE]
 * += delta by the caller) and database db's, as ccht_db_count splits it. */
CUDIS_HD static inline void ccht_db_count_volatile(const ccht_view *v, uint32_t db, int64_t delta)
{
    if (db != 0 && v->db_volatile != 0) {
        cudis_fetch_add_u64(&v->db_volatile[db], (uint64_t)delta);
    }
}

/* ------------------------------------------------------------------------
 * Bucket locks (writers) and versions (optimistic readers)
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline bool ccht_bkt_trylock(const ccht_view *v, uint64_t b)
{
    uint64_t *ver = ccht_bkt_version(v, b);
    uint64_t x = cudis_load_relaxed_u64(ver);
    return (x & CCHT_VER_LOCK) == 0 && cudis_cas_u64(ver, x, x | CCHT_VER_LOCK);
}

/* One step of a spin wait. On the host, after 256 steps let a preempted
 * lock holder run; on the device just pause. */
CUDIS_HD static inline void ccht_backoff(unsigned *spins)
{
    CCHT_PAUSE();
#if !CUDIS_DEVICE_CODE
    if (++*spins >= 256) {
        sched_yield();
        *spins = 0;
    }
#else
    (void)spins;
#endif
}

/* Spin until the bucket is ours. The caller must hold no bucket with a
 * higher index (lock order), or use ccht_pair_lock. */
CUDIS_HD static inline void ccht_bkt_lock(const ccht_view *v, uint64_t b)
{
    unsigned spins = 0;
    while (!ccht_bkt_trylock(v, b)) {
        ccht_backoff(&spins);
    }
}

/* Release a bucket we hold; the version ends 2 above where it started. */
CUDIS_HD static inline void ccht_bkt_unlock(const ccht_view *v, uint64_t b)
{
    uint64_t *ver = ccht_bkt_version(v, b);
    uint64_t x = cudis_load_relaxed_u64(ver);
    cudis_store_rel_u64(ver, x + 1);
}

/* Lock both candidate buckets of a key, lower index first. */
CUDIS_HD static inline void ccht_pair_lock(const ccht_view *v, const ccht_hkey *hk)
{
    uint64_t lo = hk->b1 < hk->b2 ? hk->b1 : hk->b2;
    uint64_t hi = hk->b1 < hk->b2 ? hk->b2 : hk->b1;
    ccht_bkt_lock(v, lo);
    if (hi != lo) {
        ccht_bkt_lock(v, hi);
    }
}

CUDIS_HD static inline void ccht_pair_unlock(const ccht_view *v, const ccht_hkey *hk)
{
    ccht_bkt_unlock(v, hk->b1);
    if (hk->b2 != hk->b1) {
        ccht_bkt_unlock(v, hk->b2);
    }
}

/* Start an optimistic read of bucket b: waits while a writer holds it and
 * returns the (even) version to pass to ccht_read_valid. */
CUDIS_HD static inline uint64_t ccht_read_begin(const ccht_view *v, uint64_t b)
{
    uint64_t x;
    unsigned spins = 0;
    while ((x = cudis_load_acq_u64(ccht_bkt_version(v, b))) & CCHT_VER_LOCK) {
        ccht_backoff(&spins);
    }
    return x;
}

/* True when bucket b still has version `ver` (everything read since
 * ccht_read_begin is consistent). Orders the data reads before the check. */
CUDIS_HD static inline bool ccht_read_valid(const ccht_view *v, uint64_t b, uint64_t ver)
{
#if CCHT_TSAN
    /* gcc rejects fences under -fsanitize=thread (-Wtsan): a no-op RMW
     * orders the data reads before the check instead. */
    return __atomic_fetch_add(ccht_bkt_version(v, b), 0, __ATOMIC_ACQ_REL) == ver;
#else
    cudis_fence_acq();
    return cudis_load_relaxed_u64(ccht_bkt_version(v, b)) == ver;
#endif
}

/* ------------------------------------------------------------------------
 * Item bytes (see the TSan note at the top)
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline uint32_t ccht_item_h0(const ccht_view *v, uint64_t off)
{
    return cudis_load_relaxed_u32((const uint32_t *)(v->arena + off));
}

CUDIS_HD static inline uint32_t ccht_item_vlen(const ccht_view *v, uint64_t off)
{
    return cudis_load_relaxed_u32((const uint32_t *)(v->arena + off + 4));
}

/* Expiry of an item whose h0 has CCHT_ITEM_EXP (0 otherwise). */
CUDIS_HD static inline int64_t ccht_item_expire(const ccht_view *v, uint64_t off, uint32_t h0)
{
    if (!(h0 & CCHT_ITEM_EXP)) {
        return 0;
    }
    return (int64_t)cudis_load_relaxed_u64((const uint64_t *)(v->arena + off + 8));
}

/* Change the expiry of an item that has an expiry field, in place (one
 * atomic store: readers see the old or the new expiry). */
CUDIS_HD static inline void ccht_item_set_expire(const ccht_view *v, uint64_t off, int64_t e)
{
    cudis_store_relaxed_u64((uint64_t *)(v->arena + off + 8), (uint64_t)e);
}

CUDIS_HD static inline uint8_t *ccht_item_key(const ccht_view *v, uint64_t off, uint32_t h0)
{
    return v->arena + off + ccht_item_hdr((h0 & CCHT_ITEM_EXP) != 0);
}

CUDIS_HD static inline uint8_t *ccht_item_val(const ccht_view *v, uint64_t off, uint32_t h0)
{
    return ccht_item_key(v, off, h0) + (h0 & CCHT_ITEM_KLEN_MASK);
}

/* Copy n bytes out of the arena (may race with a writer: validate after). */
CUDIS_HD static inline void ccht_bytes_read(uint8_t *dst, const uint8_t *src, uint64_t n)
{
#if CUDIS_DEVICE_CODE
    uint64_t i = 0;
    if ((((uintptr_t)dst | (uintptr_t)src) & 7) == 0) {
        for (; i + 8 <= n; i += 8) {
            *(uint64_t *)(dst + i) = *(const volatile uint64_t *)(src + i);
        }
    }
    for (; i < n; i++) {
        dst[i] = ((const volatile uint8_t *)src)[i];
    }
#elif CCHT_TSAN
    for (uint64_t i = 0; i < n; i++) {
        dst[i] = __atomic_load_n(src + i, __ATOMIC_RELAXED);
    }
#else
    if (n) {
        memcpy(dst, src, n);
    }
#endif
}

/* Copy n bytes into a chunk this thread owns (not yet published, or held
 * under its bucket pair lock). */
CUDIS_HD static inline void ccht_bytes_write(uint8_t *dst, const uint8_t *src, uint64_t n)
{
#if CUDIS_DEVICE_CODE
    uint64_t i = 0;
    if ((((uintptr_t)dst | (uintptr_t)src) & 7) == 0) {
        for (; i + 8 <= n; i += 8) {
            *(uint64_t *)(dst + i) = *(const uint64_t *)(src + i);
        }
    }
    for (; i < n; i++) {
        dst[i] = src[i];
    }
#elif CCHT_TSAN
    for (uint64_t i = 0; i < n; i++) {
        __atomic_store_n(dst + i, src[i], __ATOMIC_RELAXED);
    }
#else
    if (n) {
        memcpy(dst, src, n);
    }
#endif
}

/* Move n bytes within a chunk this thread holds under its bucket pair
 * lock: the ranges may overlap (memmove), readers may be reading it. */
CUDIS_HD static inline void ccht_bytes_move(uint8_t *dst, const uint8_t *src, uint64_t n)
{
#if CUDIS_DEVICE_CODE || CCHT_TSAN
    bool down = dst < src; /* copy forward when moving down, else backward */
    for (uint64_t k = 0; k < n; k++) {
        uint64_t i = down ? k : n - 1 - k;
#if CCHT_TSAN
        __atomic_store_n(dst + i, __atomic_load_n(src + i, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
#else
        dst[i] = src[i];
#endif
    }
#else
    if (n) {
        memmove(dst, src, n);
    }
#endif
}

/* Zero n bytes of a chunk this thread owns. */
CUDIS_HD static inline void ccht_bytes_zero(uint8_t *dst, uint64_t n)
{
#if CUDIS_DEVICE_CODE || CCHT_TSAN
    for (uint64_t i = 0; i < n; i++) {
#if CCHT_TSAN
        __atomic_store_n(dst + i, 0, __ATOMIC_RELAXED);
#else
        dst[i] = 0;
#endif
    }
#else
    if (n) {
        memset(dst, 0, n);
    }
#endif
}

/* Compare arena bytes a (may race) with b. True when equal. */
CUDIS_HD static inline bool ccht_bytes_eq(const uint8_t *a, const uint8_t *b, uint64_t n)
{
#if CUDIS_DEVICE_CODE
    uint64_t i = 0;
    if ((((uintptr_t)a | (uintptr_t)b) & 7) == 0) {
        for (; i + 8 <= n; i += 8) {
            if (*(const volatile uint64_t *)(a + i) != *(const uint64_t *)(b + i)) {
                return false;
            }
        }
    }
    for (; i < n; i++) {
        if (((const volatile uint8_t *)a)[i] != b[i]) {
            return false;
        }
    }
    return true;
#elif CCHT_TSAN
    for (uint64_t i = 0; i < n; i++) {
        if (__atomic_load_n(a + i, __ATOMIC_RELAXED) != b[i]) {
            return false;
        }
    }
    return true;
#else
    /* short keys dominate: word compares beat a libc call */
    while (n >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) {
            return false;
        }
        a += 8;
        b += 8;
        n -= 8;
    }
    while (n > 0) {
        if (*a++ != *b++) {
            return false;
        }
        n--;
    }
    return true;
#endif
}

/* Write an item header into a chunk this thread owns. h0 is written last
 * (LIVE); the caller then publishes the slot word with a release store. */
CUDIS_HD static inline void ccht_item_init(const ccht_view *v, uint64_t off, uint32_t db,
                                           uint32_t type, uint32_t key_len, uint32_t val_len,
                                           int64_t expire_ms)
{
    uint8_t *p = v->arena + off;
    cudis_store_relaxed_u32((uint32_t *)(p + 4), val_len);
    if (expire_ms != 0) {
        cudis_store_relaxed_u64((uint64_t *)(p + 8), (uint64_t)expire_ms);
    }
    cudis_store_relaxed_u32((uint32_t *)p,
                            CCHT_ITEM_LIVE | (expire_ms ? CCHT_ITEM_EXP : 0) |
                                ((db << CCHT_ITEM_DB_SHIFT) & CCHT_ITEM_DB_MASK) |
                                ((type << CCHT_ITEM_TYPE_SHIFT) & CCHT_ITEM_TYPE_MASK) |
                                (key_len & CCHT_ITEM_KLEN_MASK));
}

/* The enum cudis_type of an item by its header. */
CUDIS_HD static inline uint8_t ccht_item_type(uint32_t h0)
{
    return (uint8_t)((h0 & CCHT_ITEM_TYPE_MASK) >> CCHT_ITEM_TYPE_SHIFT);
}

/* ------------------------------------------------------------------------
 * Probing
 * ---------------------------------------------------------------------- */

/* True when the item at `off` is a consistent live item with this key of
 * database db. Safe on a chunk that is being rewritten (bounds-checked);
 * validate afterwards. */
CUDIS_HD static inline bool ccht_item_is_key(const ccht_view *v, uint64_t off, uint32_t db,
                                             const uint8_t *key, uint32_t key_len, uint32_t *h0_out)
{
    if (off + CCHT_ITEM_HDR_EXP > v->arena_bytes) {
        return false;
    }
    uint32_t h0 = ccht_item_h0(v, off);
    if (!(h0 & CCHT_ITEM_LIVE) || (h0 & (CCHT_ITEM_KLEN_MASK | CCHT_ITEM_DB_MASK)) !=
                                      (key_len | (db << CCHT_ITEM_DB_SHIFT))) {
        return false;
    }
    uint64_t end = off + ccht_item_hdr((h0 & CCHT_ITEM_EXP) != 0) + key_len;
    if (end > v->arena_bytes) {
        return false;
    }
    if (!ccht_bytes_eq(ccht_item_key(v, off, h0), key, key_len)) {
        return false;
    }
    *h0_out = h0;
    return true;
}

/* Value length of a (checked) item, clamped so header+key+value stays inside
 * the arena; returns false if it would not (torn read: retry). */
CUDIS_HD static inline bool ccht_item_vlen_ok(const ccht_view *v, uint64_t off, uint32_t h0,
                                              uint32_t *vlen)
{
    uint32_t n = ccht_item_vlen(v, off);
    uint64_t end = off + ccht_item_hdr((h0 & CCHT_ITEM_EXP) != 0) + (h0 & CCHT_ITEM_KLEN_MASK) + n;
    if (end > v->arena_bytes) {
        return false;
    }
    *vlen = n;
    return true;
}

/* Find `key` in its two buckets (both probed). Returns true with the slot in
 * *loc and the item's header in *h0. Under the pair lock (locked = true:
 * slot words cannot change, relaxed loads suffice) the answer is exact;
 * optimistically (acquire loads) it must be validated with ccht_read_valid. */
CUDIS_HD static inline bool ccht_probe(const ccht_view *v, const ccht_hkey *hk, uint32_t db,
                                       const uint8_t *key, uint32_t key_len, bool locked,
                                       ccht_loc *loc, uint32_t *h0)
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
            if (ccht_item_is_key(v, ccht_slot_off(word), db, key, key_len, h0)) {
                loc->bucket = b;
                loc->way = w;
                loc->word = word;
                return true;
            }
        }
    }
    return false;
}

/* The slot of the pair that refers to arena offset `off` (any key). */
CUDIS_HD static inline bool ccht_find_ref(const ccht_view *v, const ccht_hkey *hk, uint64_t off,
                                          ccht_loc *loc)
{
    for (int i = 0; i < 2; i++) {
        uint64_t b = i == 0 ? hk->b1 : hk->b2;
        if (i == 1 && b == hk->b1) {
            break;
        }
        for (uint32_t w = 0; w < v->ways; w++) {
            uint64_t word = cudis_load_acq_u64(ccht_bkt_slot(v, b, w));
            if (word != 0 && ccht_slot_off(word) == off) {
                loc->bucket = b;
                loc->way = w;
                loc->word = word;
                return true;
            }
        }
    }
    return false;
}

/* Candidate buckets of the item stored in the chunk at `off`, hashing its
 * key straight from the arena (racy: a torn key gives wrong buckets, which
 * ccht_find_ref then does not confirm). False when the chunk does not hold
 * a consistent live item. */
CUDIS_HD static inline bool ccht_chunk_hkey(const ccht_view *v, uint64_t off, ccht_hkey *hk)
{
    if (off + CCHT_ITEM_HDR_EXP > v->arena_bytes) {
        return false;
    }
    uint32_t h0 = cudis_load_acq_u32((const uint32_t *)(v->arena + off));
    if (!(h0 & CCHT_ITEM_LIVE)) {
        return false;
    }
    uint64_t len = h0 & CCHT_ITEM_KLEN_MASK;
    const uint8_t *p = ccht_item_key(v, off, h0);
    if ((uint64_t)(p - v->arena) + len > v->arena_bytes) {
        return false;
    }
    uint8_t buf[16];
    uint64_t h = cudis_hash_start(len, ccht_db_seed(v, ccht_item_db(h0)));
    while (len > 16) {
        ccht_bytes_read(buf, p, 16);
        h = cudis_hash_block(h, cudis_read_le(buf, 8), cudis_read_le(buf + 8, 8));
        p += 16;
        len -= 16;
    }
    ccht_bytes_read(buf, p, len);
    uint64_t a = len > 8 ? cudis_read_le(buf, 8) : cudis_read_le(buf, (int)len);
    uint64_t b = len > 8 ? cudis_read_le(buf + 8, (int)len - 8) : 0;
    *hk = ccht_hkey_of(v, cudis_hash_end(h, len, a, b));
    return true;
}

/* Prefetch hints for a key about to be probed (host only). */
CUDIS_HD static inline CCHT_ALWAYS_INLINE void ccht_prefetch_buckets(const ccht_view *v, const ccht_hkey *hk)
{
    CCHT_PREFETCH(ccht_bkt(v, hk->b1));
    CCHT_PREFETCH(ccht_bkt(v, hk->b2));
    if (v->bucket_bytes > 64) {
        CCHT_PREFETCH(ccht_bkt(v, hk->b1) + 64);
        CCHT_PREFETCH(ccht_bkt(v, hk->b2) + 64);
    }
}

/* Prefetch the items whose fingerprint matches (host only; no
 * validation): their first CCHT_PREFETCH_ITEM_BYTES bytes, or their chunk
 * when smaller (its class's size, from the page's class). A field read
 * walks a collection's entries from its start, and GET copies the whole
 * value: one line was not enough (HMGET of 1,000 fields from a big hash:
 * 1.24M rows/s with the first line, 1.71M with six;
 * bench/server/hashes.sh). */
#define CCHT_PREFETCH_ITEM_BYTES 640u
CUDIS_HD static inline CCHT_ALWAYS_INLINE void ccht_prefetch_items(const ccht_view *v,
                                                                   const ccht_arena *a,
                                                                   const ccht_hkey *hk)
{
    for (int i = 0; i < 2; i++) {
        uint64_t b = i == 0 ? hk->b1 : hk->b2;
        for (uint32_t w = 0; w < v->ways; w++) {
            uint64_t word = cudis_load_relaxed_u64(ccht_bkt_slot(v, b, w));
            if (word != 0 && ccht_slot_fp(word) == hk->fp) {
                uint64_t off = ccht_slot_off(word);
                if (off >= v->arena_bytes) {
                    continue;
                }
                uint32_t c = cudis_load_relaxed_u32(&a->page_class[off >> a->page_shift]);
                uint32_t n = c < a->n_classes && a->class_size[c] < CCHT_PREFETCH_ITEM_BYTES
                                 ? a->class_size[c]
                                 : CCHT_PREFETCH_ITEM_BYTES;
                for (uint32_t at = 0; at < n && off + at < v->arena_bytes; at += 64) {
                    CCHT_PREFETCH(v->arena + off + at);
                }
            }
        }
    }
}

/* True when the slot word refers to an item that has expired at now_ms. */
CUDIS_HD static inline bool ccht_slot_expired(const ccht_view *v, uint64_t word, int64_t now_ms)
{
    if (!(word & CCHT_SLOT_EXP)) {
        return false;
    }
    uint64_t off = ccht_slot_off(word);
    if (off + CCHT_ITEM_HDR_EXP > v->arena_bytes) {
        return false;
    }
    uint32_t h0 = ccht_item_h0(v, off);
    int64_t e = ccht_item_expire(v, off, h0);
    return e != 0 && e <= now_ms;
}

/* What an insert slot held before. */
enum ccht_victim {
    CCHT_VICTIM_EMPTY = 0,   /* an empty slot */
    CCHT_VICTIM_EXPIRED = 1, /* an expired item: reclaim it */
    CCHT_VICTIM_LRU = 2,     /* a live item: evict it (bucket pair full) */
    CCHT_VICTIM_NONE = 3     /* the pair is full and the policy evicts none of it */
};

/* ------------------------------------------------------------------------
 * The LFU policies: a slot's 32-bit stamp holds Redis's LFU data instead of
 * a recency, (minutes << 8) | counter: when it was last decremented (24
 * bits of Unix minutes) and a logarithmic access counter (8 bits, new keys
 * start at 5), decremented by one per lfu-decay-time minutes without
 * access, incremented with probability 1 / ((c - 5) * log_factor + 1) per
 * access (Redis's evict.c). The clamp of LRU stamps does not run under
 * these policies; after a switch between LRU and LFU at runtime the stamps
 * mean the other thing for a while, as in Redis.
 * ---------------------------------------------------------------------- */

#define CCHT_LFU_INIT 5u

CUDIS_HD static inline bool ccht_policy_lfu(uint32_t policy)
{
    return policy == CUDIS_POL_ALLKEYS_LFU || policy == CUDIS_POL_VOLATILE_LFU;
}

CUDIS_HD static inline uint32_t ccht_lfu_minutes(int64_t now_ms)
{
    return (uint32_t)((uint64_t)(now_ms / 60000) & 0xffffffu);
}

/* The counter of LFU stamp s after its decay up to minute now_min. */
CUDIS_HD static inline uint32_t ccht_lfu_count(uint32_t s, uint32_t now_min, uint32_t decay_time)
{
    uint32_t c = s & 0xffu;
    if (decay_time == 0) {
        return c;
    }
    uint32_t periods = ((now_min - (s >> 8)) & 0xffffffu) / decay_time;
    return periods >= c ? 0 : c - periods;
}

/* The stamp of a new key. */
CUDIS_HD static inline uint32_t ccht_lfu_new(uint32_t now_min)
{
    return (now_min << 8) | CCHT_LFU_INIT;
}

/* Stamp s after one access at minute now_min (rnd: 64 random bits). */
CUDIS_HD static inline uint32_t ccht_lfu_access(uint32_t s, uint32_t now_min, uint32_t log_factor,
                                                uint32_t decay_time, uint64_t rnd)
{
    uint32_t c = ccht_lfu_count(s, now_min, decay_time);
    if (c < 255) {
        double r = (double)(rnd >> 11) * (1.0 / 9007199254740992.0);
        double base = c > CCHT_LFU_INIT ? (double)(c - CCHT_LFU_INIT) : 0.0;
        if (r < 1.0 / (base * (double)log_factor + 1.0)) {
            c++;
        }
    }
    return (now_min << 8) | c;
}

/* ------------------------------------------------------------------------
 * allkeys-cudis: recency with quick demotion, a ghost and reuse counters,
 * inside the bucket pair (S3-FIFO's small queue, ghost queue and CLOCK main
 * queue, at the scale of one insert's 2 x ways candidates; bench/sim's
 * model "model8eq90lgf" is the same policy written independently).
 *
 * A slot's stamp is still its item's last access (bits 31..3: the clock
 * with its low three bits cleared, so OBJECT IDLETIME and the clamp work as
 * under LRU) plus two fields in the low bits:
 *     bit 2     NEW: not read since it came (set when a key is inserted,
 *               cleared by its first hit)
 *     bits 1..0 reuse counter: hits after the first, at most 3
 * Victim choice in a full pair: each slot's age, a NEW one's plus
 * CCHT_CUDIS_DEMOTE% of the pair's oldest age (a key nobody read again
 * leaves long before the pair's LRU tail would: one-hit wonders go first),
 * the greatest loses; when it has reuse left, it gives one up and is
 * re-stamped as just used instead (a second chance), and the choice runs
 * again. A NEW item evicted leaves a ghost: 16 bits (valid bit + its 15-bit
 * fingerprint) at way fp % ways of its bucket's ghost array, in the bucket's
 * padding, so the policy costs no memory. A key inserted whose ghost is in
 * one of its buckets was evicted too early: it comes in without NEW. Ghost
 * words are read and written only under the pair lock.
 * ---------------------------------------------------------------------- */

#define CCHT_CUDIS_LOW 7u     /* the stamp bits the policy keeps */
#define CCHT_CUDIS_NEW 4u     /* not read since it came */
#define CCHT_CUDIS_CNT 3u     /* reuse counter: hits after the first */
#define CCHT_CUDIS_DEMOTE 90u /* a NEW item's head start, % of the pair's oldest age */
#define CCHT_GHOST_VALID 0x8000u

CUDIS_HD static inline bool ccht_policy_cudis(uint32_t policy)
{
    return policy == CUDIS_POL_ALLKEYS_CUDIS;
}

/* Age of a cudis stamp at clock now (the policy bits are not time). */
CUDIS_HD static inline uint32_t ccht_cudis_age(uint32_t now, uint32_t stamp)
{
    return ccht_age(now & ~CCHT_CUDIS_LOW, stamp & ~CCHT_CUDIS_LOW);
}

/* The stamp of a key inserted at clock now (`known`: its ghost was found). */
CUDIS_HD static inline uint32_t ccht_cudis_new(uint32_t now, bool known)
{
    return (now & ~CCHT_CUDIS_LOW) | (known ? 0u : CCHT_CUDIS_NEW);
}

/* Stamp s after a hit at clock now: a NEW item's first hit clears NEW, a
 * later one counts (at most 3). The time moves only when s is older than
 * `slack` ticks (or was NEW), as ccht_touch does. */
CUDIS_HD static inline uint32_t ccht_cudis_hit(uint32_t s, uint32_t now, uint32_t slack)
{
    if (s & CCHT_CUDIS_NEW) {
        return now & ~CCHT_CUDIS_LOW;
    }
    uint32_t c = s & CCHT_CUDIS_CNT;
    c += c < CCHT_CUDIS_CNT ? 1u : 0u;
    uint32_t t = ccht_cudis_age(now, s) > slack ? now : s;
    return (t & ~CCHT_CUDIS_LOW) | c;
}

/* The ghost array of bucket b (ways 16-bit words after the stamps). */
CUDIS_HD static inline uint16_t *ccht_bkt_ghost(const ccht_view *v, uint64_t b)
{
    return (uint16_t *)(ccht_bkt(v, b) + CCHT_BKT_GHOST_OFF(v->ways));
}

/* Remember the evicted NEW item of slot word `word`, in bucket b. */
CUDIS_HD static inline void ccht_ghost_put(const ccht_view *v, uint64_t b, uint64_t word)
{
    uint32_t fp = ccht_slot_fp(word);
    ccht_bkt_ghost(v, b)[fp & (v->ways - 1)] = (uint16_t)(CCHT_GHOST_VALID | fp);
}

/* Whether a key with these candidates left a ghost (forgetting it). */
CUDIS_HD static inline bool ccht_ghost_take(const ccht_view *v, const ccht_hkey *hk)
{
    uint16_t tag = (uint16_t)(CCHT_GHOST_VALID | hk->fp);
    for (int i = 0; i < 2; i++) {
        uint16_t *g = ccht_bkt_ghost(v, i == 0 ? hk->b1 : hk->b2) + (hk->fp & (v->ways - 1));
        if (*g == tag) {
            *g = 0;
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------------------
 * allkeys-rrip: SRRIP with hit promotion (Jaleel et al., ISCA'10; the
 * per-set 2-bit form RRIParoo uses in Kangaroo), the pair as the set. Bits
 * 1..0 of a slot's stamp are its re-reference prediction value: 2 ("long")
 * for a key inserted, 0 after a hit; bit 2 stays 0; bits 31..3 are still
 * the last access, as under allkeys-cudis. A full pair evicts a slot with
 * value 3, the oldest of those; with none at 3 every slot of the pair ages
 * by what the greatest lacks first (both buckets' stamps, under the pair
 * lock). A key inserted and never read again is out after one aging of its
 * pair; a key read since it came waits for three.
 * ---------------------------------------------------------------------- */

#define CCHT_RRIP_RRPV 3u /* the stamp bits of the prediction */
#define CCHT_RRIP_NEW 2u  /* a key inserted: re-reference "long" */

CUDIS_HD static inline bool ccht_policy_rrip(uint32_t policy)
{
    return policy == CUDIS_POL_ALLKEYS_RRIP;
}

/* Whether the policy keeps its own bits in the stamp's low three
 * (allkeys-cudis, allkeys-rrip): those are not time. */
CUDIS_HD static inline bool ccht_policy_bits(uint32_t policy)
{
    return ccht_policy_cudis(policy) || ccht_policy_rrip(policy);
}

/* Stamp s after a hit at clock now under allkeys-rrip: the prediction goes
 * to 0; the time moves when s is older than `slack` ticks or was not 0. */
CUDIS_HD static inline uint32_t ccht_rrip_hit(uint32_t s, uint32_t now, uint32_t slack)
{
    bool move = (s & CCHT_RRIP_RRPV) != 0 || ccht_cudis_age(now, s) > slack;
    return (move ? now : s) & ~CCHT_CUDIS_LOW;
}

/* The stamp a policy with its own bits (ccht_policy_bits) gives a key
 * inserted at clock now (`known`: allkeys-cudis found its ghost). */
CUDIS_HD static inline uint32_t ccht_bits_new(uint32_t policy, uint32_t now, bool known)
{
    if (ccht_policy_rrip(policy)) {
        return (now & ~CCHT_CUDIS_LOW) | CCHT_RRIP_NEW;
    }
    return ccht_cudis_new(now, known);
}

/* Stamp s after a hit, under a policy with its own bits. */
CUDIS_HD static inline uint32_t ccht_bits_hit(uint32_t policy, uint32_t s, uint32_t now,
                                              uint32_t slack)
{
    return ccht_policy_rrip(policy) ? ccht_rrip_hit(s, now, slack) : ccht_cudis_hit(s, now, slack);
}

/* How cold a slot's stamp makes its item for victim choice (higher goes
 * first): its age under the LRU-ranked policies, 255 - its counter under
 * the LFU ones. allkeys-cudis (the memory path's samples, which have no
 * pair): a NEW item's age counts 100 / (100 - CCHT_CUDIS_DEMOTE) times, so
 * it goes before an older one once it is that fraction of its age, the
 * rule ccht_pick_cudis applies against the pair's oldest. allkeys-rrip:
 * the prediction first, then the age (the pair's order; the samples do not
 * age, so a memory full of reused keys evicts them by age). */
CUDIS_HD static inline uint32_t ccht_coldness(uint32_t policy, uint32_t decay_time, uint32_t stamp,
                                              uint32_t now_stamp, int64_t now_ms)
{
    if (ccht_policy_lfu(policy)) {
        return 255u - ccht_lfu_count(stamp, ccht_lfu_minutes(now_ms), decay_time);
    }
    if (ccht_policy_cudis(policy)) {
        uint64_t a = ccht_cudis_age(now_stamp, stamp);
        if (stamp & CCHT_CUDIS_NEW) {
            a = a * 100u / (100u - CCHT_CUDIS_DEMOTE);
        }
        return a < UINT32_MAX ? (uint32_t)a : UINT32_MAX;
    }
    if (ccht_policy_rrip(policy)) {
        uint32_t a = ccht_cudis_age(now_stamp, stamp);
        return ((stamp & CCHT_RRIP_RRPV) << 30) | (a < (1u << 30) ? a : (1u << 30) - 1u);
    }
    return ccht_age(now_stamp, stamp);
}

/* Whether the eviction policy (enum cudis_policy) lets a live item go:
 * the volatile ones only take items with an expiry, noeviction none. */
CUDIS_HD static inline bool ccht_policy_takes(uint32_t policy, bool has_exp)
{
    switch (policy) {
    case CUDIS_POL_NOEVICTION: return false;
    case CUDIS_POL_VOLATILE_LRU:
    case CUDIS_POL_VOLATILE_RANDOM:
    case CUDIS_POL_VOLATILE_TTL:
    case CUDIS_POL_VOLATILE_LFU: return has_exp;
    default: return true;
    }
}

/* Among candidates the policy takes, whether one with coldness `age`
 * (ccht_coldness) and expiry `exp` beats the best so far (best_age,
 * best_exp). The random policies keep the first (the caller starts at a
 * random place). */
CUDIS_HD static inline bool ccht_policy_prefers(uint32_t policy, uint32_t age, int64_t exp,
                                                uint32_t best_age, int64_t best_exp)
{
    switch (policy) {
    case CUDIS_POL_ALLKEYS_RANDOM:
    case CUDIS_POL_VOLATILE_RANDOM: return false;
    case CUDIS_POL_VOLATILE_TTL: return exp < best_exp;
    default: return age > best_age;
    }
}

/* allkeys-rrip's victim in a full pair of nb buckets (see above); under
 * the pair lock. Ages the pair when no slot is at 3. Ages are ranked by
 * how far each stamp is ahead of ours (least: oldest), which is the order
 * from any clock at or past the pair's youngest stamp (see
 * ccht_pick_cudis). */
CUDIS_HD static inline void ccht_pick_rrip(const ccht_view *v, const ccht_hkey *hk, uint32_t nb,
                                           uint32_t now, ccht_loc *loc)
{
    uint32_t n = nb * v->ways;
    uint32_t base = now & ~CCHT_CUDIS_LOW, best_r = 0;
    int32_t best_d = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint64_t b = k < v->ways ? hk->b1 : hk->b2;
        uint32_t w = k % v->ways;
        uint32_t st = cudis_load_relaxed_u32(ccht_bkt_stamp(v, b, w));
        uint32_t r = st & CCHT_RRIP_RRPV;
        int32_t d = (int32_t)((st & ~CCHT_CUDIS_LOW) - base); /* the oldest: least ahead */
        if (k == 0 || r > best_r || (r == best_r && d < best_d)) {
            best_r = r;
            best_d = d;
            loc->bucket = b;
            loc->way = w;
        }
    }
    if (best_r < CCHT_RRIP_RRPV) {
        uint32_t add = CCHT_RRIP_RRPV - best_r; /* no slot passes 3: none is above best_r */
        for (uint32_t k = 0; k < n; k++) {
            uint32_t *sp = ccht_bkt_stamp(v, k < v->ways ? hk->b1 : hk->b2, k % v->ways);
            uint32_t st = cudis_load_relaxed_u32(sp);
            uint32_t r = (st & CCHT_RRIP_RRPV) + add;
            cudis_store_relaxed_u32(sp, (st & ~CCHT_RRIP_RRPV) |
                                            (r < CCHT_RRIP_RRPV ? r : CCHT_RRIP_RRPV));
        }
    }
    loc->word = cudis_load_relaxed_u64(ccht_bkt_slot(v, loc->bucket, loc->way));
}

/* allkeys-cudis's victim in a full pair of nb buckets (see above); under
 * the pair lock. Gives second chances (re-stamps) on the way. Each round
 * but the last takes one reuse from a slot, so it ends; a bound keeps
 * readers' concurrent hits from stretching it.
 *
 * Ages count from the pair's clock: the pair's youngest stamp when it is
 * ahead of ours. Ops of one batch run in any order on the device (and on
 * several host threads), so a slot may hold a later op's stamp; counted
 * from ours every such key would look brand new (one op at a time: no
 * change). One pass over the pair a round finds that clock and the victim
 * together (a miss into a full pair is the hot path of a cache that misses
 * often): with the clock at now + ahead (ahead: the most any stamp is past
 * ours), a slot d ticks past ours is (ahead - d) old, so the oldest slot of
 * each kind (NEW or not) is the one least ahead. The oldest NEW slot's age
 * plus the head start, against the oldest other slot's age, decides (the
 * lower slot on a tie: the order a slot-by-slot rule gives). */
CUDIS_HD static inline void ccht_pick_cudis(const ccht_view *v, const ccht_hkey *hk, uint32_t nb,
                                            uint32_t now, ccht_loc *loc)
{
    uint32_t n = nb * v->ways;
    uint32_t base = now & ~CCHT_CUDIS_LOW;
    int32_t ahead = 0;
    for (uint32_t round = 0;; round++) {
        int32_t least[2] = {0, 0};                  /* [NEW]: the least ahead of that kind */
        uint32_t at[2] = {n, n}, st_at[2] = {0, 0}; /* its slot (n: none of the kind) */
        for (uint32_t k = 0; k < n; k++) {
            uint32_t st = cudis_load_relaxed_u32(
                ccht_bkt_stamp(v, k < v->ways ? hk->b1 : hk->b2, k % v->ways));
            int32_t d = (int32_t)((st & ~CCHT_CUDIS_LOW) - base);
            int kind = (st & CCHT_CUDIS_NEW) != 0;
            ahead = d > ahead ? d : ahead;
            if (at[kind] == n || d < least[kind]) {
                least[kind] = d;
                at[kind] = k;
                st_at[kind] = st;
            }
        }
        int64_t age[2]; /* from the pair's clock; -1: no slot of the kind */
        for (int i = 0; i < 2; i++) {
            age[i] = at[i] == n ? -1 : (int64_t)ahead - least[i];
        }
        uint64_t oldest = (uint64_t)(age[0] > age[1] ? age[0] : age[1]);
        int64_t eff_new = age[1] < 0 ? -1 : age[1] + (int64_t)(oldest * CCHT_CUDIS_DEMOTE / 100u);
        int win = eff_new > age[0] || (eff_new == age[0] && at[1] < at[0]) ? 1 : 0;
        uint32_t k = at[win], best_st = st_at[win];
        loc->bucket = k < v->ways ? hk->b1 : hk->b2;
        loc->way = k % v->ways;
        loc->word = cudis_load_relaxed_u64(ccht_bkt_slot(v, loc->bucket, loc->way));
        if ((best_st & CCHT_CUDIS_CNT) == 0 || round >= 3 * n) {
            return;
        }
        cudis_store_relaxed_u32(ccht_bkt_stamp(v, loc->bucket, loc->way),
                                (base + (uint32_t)ahead) | ((best_st & CCHT_CUDIS_CNT) - 1u));
    }
}

/* Under the pair lock, for a key that is not present: choose the slot a new
 * item takes. An empty slot of the bucket with more empty slots (b1 on a
 * tie: "power of two choices", which keeps the pair from filling up early;
 * the paper's b1-then-b2 order evicts ~4% of keys already at 90% load,
 * measured in bench/ccht), then an expired item of b1 then b2, else the
 * live item the eviction policy picks (enum cudis_policy; LRU: the
 * oldest-stamped slot of the two buckets; LFU: the lowest counter), or
 * none. `now_stamp` is the current clock (ages: ccht_age); decay_time the
 * LFU counters' (ccht_lfu_count). Returns enum ccht_victim. */
CUDIS_HD static inline int ccht_pick_slot(const ccht_view *v, const ccht_hkey *hk, int64_t now_ms,
                                          uint32_t now_stamp, uint32_t policy, uint32_t decay_time,
                                          ccht_loc *loc)
{
    uint32_t n_empty[2] = {0, 0};
    int first_empty[2] = {-1, -1};
    int expired_way[2] = {-1, -1};
    int nb = hk->b2 == hk->b1 ? 1 : 2;
    for (int i = 0; i < nb; i++) {
        uint64_t b = i == 0 ? hk->b1 : hk->b2;
        for (uint32_t w = 0; w < v->ways; w++) {
            uint64_t word = cudis_load_relaxed_u64(ccht_bkt_slot(v, b, w));
            if (word == 0) {
                if (first_empty[i] < 0) {
                    first_empty[i] = (int)w;
                }
                n_empty[i]++;
            } else if (expired_way[i] < 0 && ccht_slot_expired(v, word, now_ms)) {
                expired_way[i] = (int)w;
            }
        }
    }
    if (n_empty[0] > 0 || n_empty[1] > 0) {
        int i = n_empty[0] >= n_empty[1] ? 0 : 1;
        loc->bucket = i == 0 ? hk->b1 : hk->b2;
        loc->way = (uint32_t)first_empty[i];
        loc->word = 0;
        return CCHT_VICTIM_EMPTY;
    }
    for (int i = 0; i < nb; i++) {
        if (expired_way[i] >= 0) {
            loc->bucket = i == 0 ? hk->b1 : hk->b2;
            loc->way = (uint32_t)expired_way[i];
            loc->word = cudis_load_relaxed_u64(ccht_bkt_slot(v, loc->bucket, loc->way));
            return CCHT_VICTIM_EXPIRED;
        }
    }
    if (policy == CUDIS_POL_NOEVICTION) {
        return CCHT_VICTIM_NONE;
    }
    if (ccht_policy_cudis(policy)) {
        ccht_pick_cudis(v, hk, (uint32_t)nb, now_stamp, loc);
        return CCHT_VICTIM_LRU;
    }
    if (ccht_policy_rrip(policy)) {
        ccht_pick_rrip(v, hk, (uint32_t)nb, now_stamp, loc);
        return CCHT_VICTIM_LRU;
    }
    /* the random policies start at a place drawn from the key and the clock */
    uint32_t n = (uint32_t)nb * v->ways;
    uint32_t start = (policy == CUDIS_POL_ALLKEYS_RANDOM || policy == CUDIS_POL_VOLATILE_RANDOM)
                         ? (uint32_t)(cudis_mix64(hk->b1 ^ hk->fp, now_stamp) % n)
                         : 0;
    uint32_t best_age = 0;
    int64_t best_exp = 0;
    bool have = false;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t s = (start + k) % n;
        uint64_t b = s < v->ways ? hk->b1 : hk->b2;
        uint32_t w = s % v->ways;
        uint64_t word = cudis_load_relaxed_u64(ccht_bkt_slot(v, b, w));
        if (!ccht_policy_takes(policy, (word & CCHT_SLOT_EXP) != 0)) {
            continue;
        }
        uint32_t age = ccht_coldness(
            policy, decay_time, cudis_load_relaxed_u32(ccht_bkt_stamp(v, b, w)), now_stamp, now_ms);
        int64_t exp = 0;
        if (policy == CUDIS_POL_VOLATILE_TTL) {
            uint64_t off = ccht_slot_off(word);
            exp = ccht_item_expire(v, off, ccht_item_h0(v, off));
        }
        if (!have || ccht_policy_prefers(policy, age, exp, best_age, best_exp)) {
            have = true;
            best_age = age;
            best_exp = exp;
            loc->bucket = b;
            loc->way = w;
            loc->word = word;
        }
    }
    return have ? CCHT_VICTIM_LRU : CCHT_VICTIM_NONE;
}

/* Refresh a slot's recency. Skips the store when the stamp is younger than
 * `slack` (keeps hot lines clean); slack 0 = always exact. Never moves a
 * stamp backwards. */
CUDIS_HD static inline void ccht_touch(const ccht_view *v, uint64_t b, uint32_t way, uint32_t stamp,
                                       uint32_t slack)
{
    uint32_t *s = ccht_bkt_stamp(v, b, way);
    uint32_t age = ccht_age(stamp, cudis_load_relaxed_u32(s));
    if (age > 0 && age > slack) {
        cudis_store_relaxed_u32(s, stamp);
    }
}

/* Age bound kept by ccht_bkt_clamp: a stamp older than this is moved up to
 * exactly this age (all such items are "very old" alike). */
#define CCHT_AGE_CLAMP (1u << 29)
/* The clamp visits every bucket once per this many clock ticks, so no stamp
 * gets more than 2^29 + 2^29 (+ one batch) ticks behind the clock: far
 * from 2^31, where ccht_age's signed difference would turn. */
#define CCHT_CLAMP_PERIOD_LOG2 29

/* Clamp the stamps of bucket b to at most CCHT_AGE_CLAMP ticks behind
 * `now` (CAS: a concurrent refresh wins). Needs no lock. */
CUDIS_HD static inline void ccht_bkt_clamp(const ccht_view *v, uint64_t b, uint32_t now)
{
    for (uint32_t w = 0; w < v->ways; w++) {
        uint32_t *s = ccht_bkt_stamp(v, b, w);
        uint32_t old = cudis_load_relaxed_u32(s);
        if (ccht_age(now, old) > CCHT_AGE_CLAMP) {
            /* allkeys-cudis's bits stay (under LRU: 7 ticks at most, at 2^29) */
            uint32_t to = ((now - CCHT_AGE_CLAMP) & ~CCHT_CUDIS_LOW) | (old & CCHT_CUDIS_LOW);
            (void)cudis_cas_u32(s, old, to);
        }
    }
}

/* The buckets a batch that moves the clock from c0 to c1 must clamp:
 * [*first, *first + *n) modulo n_buckets. A full pass every
 * 2^CCHT_CLAMP_PERIOD_LOG2 ticks, spread evenly over the ticks (host
 * code: both engines compute it before running a batch). */
static inline void ccht_clamp_range(uint64_t n_buckets, uint64_t c0, uint64_t c1, uint64_t *first,
                                    uint64_t *n)
{
    unsigned __int128 a = ((unsigned __int128)c0 * n_buckets) >> CCHT_CLAMP_PERIOD_LOG2;
    unsigned __int128 z = ((unsigned __int128)c1 * n_buckets) >> CCHT_CLAMP_PERIOD_LOG2;
    uint64_t cnt = (uint64_t)(z - a);
    *first = (uint64_t)(a % n_buckets);
    *n = cnt < n_buckets ? cnt : n_buckets;
}

/* Publish a slot (the caller holds the bucket's lock); an item with an
 * expiry marks its bucket in the volatile map for the sweep. */
CUDIS_HD static inline void ccht_slot_publish(const ccht_view *v, uint64_t b, uint32_t way,
                                              uint64_t word, uint32_t stamp)
{
    cudis_store_relaxed_u32(ccht_bkt_stamp(v, b, way), stamp);
    cudis_store_rel_u64(ccht_bkt_slot(v, b, way), word);
    if (word & CCHT_SLOT_EXP) {
        cudis_vmap_mark(v->vmap, v->vmap_words, b);
    }
}

#endif /* CCHT_BUCKET_H */
