/*
 * ccht_arena.h - the CCHT's value arena and its second LRU level, written
 * once for the host compiler and nvcc (CUDIS_HD over the plain words of
 * ccht_layout.h). The cpu engine runs it over host memory, the gpu engine
 * over device memory: the same algorithm on both sides.
 *
 * Pages and classes. The arena is n_pages pages of page_bytes. A free page
 * sits on the pool's stack. A size class takes a page when all its free
 * lists are empty (one thread at a time: grow_lock), carves it into chunks
 * at once and spreads them over its CCHT_SHARDS free lists; callers pass a
 * shard (their thread or op index) so that concurrent allocations touch
 * different locks. An item bigger than a page takes a run of whole pages
 * (a "large" chunk, class CCHT_CLS_LARGE + n).
 *
 * When memory is full (no free chunk of the class, no free page), the slow
 * path, which the caller enters holding NO bucket lock, frees memory:
 *   - reclaim first: when the classes' free lists have grown by a few
 *     pages' worth since the last look, the pages whose chunks are all
 *     free go back to the pool (values that grew or shrank into another
 *     class leave such pages behind; without this they stayed with their
 *     old class while the new one evicted);
 *   - memory eviction: sample chunks of the class on random pages (half of
 *     the probes on pages the class received lately), look up each one's
 *     recency stamp through the index, unlink the oldest (expired items
 *     count as oldest) and take its chunk: approximate global LRU within
 *     the class;
 *   - page moves: when the class owns no page, or every CCHT_MOVE_EVERY
 *     evictions, sample pages of other classes and, when one looks colder
 *     than the class's own victim, empty it (evict its items) and return it
 *     to the pool. So a shift in value sizes never wedges the table; memory
 *     follows the workload;
 *   - large items: find a run of free pages, else empty a window of pages
 *     whatever they hold.
 * Page moves and large-run assembly run one at a time (pool.move_lock).
 *
 * Chunk states (h0, ccht_layout.h): 0 free, CCHT_ITEM_RESV allocated and
 * being written by its owner, CCHT_ITEM_LIVE published. Emptying a page:
 * set its drain flag, take its free chunks off every free list of its
 * class (each list under its lock; a chunk freed after that sees the flag
 * and is left to the mover), unlink its live items, wait for chunks being
 * written; if that takes too long, give the page back to its class.
 *
 * Locks: pool.move_lock > bucket pairs > class grow_lock > shard locks >
 * pool.lock. A thread holding a bucket pair may allocate (fast path) and
 * free; only the slow path evicts.
 */
#ifndef CCHT_ARENA_H
#define CCHT_ARENA_H

#include <stdbool.h>
#include <stdint.h>

#include "ccht_bucket.h"
#include "ccht_layout.h"
#include "cudis_hd.h"
#include "cudis_op.h"

#define CCHT_SAMPLE 8                   /* memory-eviction candidates per choice */
#define CCHT_SAMPLE_PROBES 32           /* random chunk positions tried to find them */
#define CCHT_MOVE_EVERY 32              /* consider a page move every this many evictions */
#define CCHT_WAIT_NS 2000000000ull      /* the slow path gives up (CUDIS_E_FULL) after this */
#define CCHT_DRAIN_WAIT_NS 500000000ull /* a page move waits this long for a chunk in use */
#define CCHT_RUN_SCAN 16384u            /* pages searched for a free run per attempt */
#define CCHT_KEPT_TRIES 16u  /* barren attempts before a policy that keeps items says full */
#define CCHT_RECLAIM_MAX 64u /* wholly free pages one class gives back per reclaim */
#define CCHT_RECLAIM_MIN 4u  /* pages of new free-chunk slack that make a reclaim worth a try */

/* page_drain values */
#define CCHT_DRAIN_NONE 0u
#define CCHT_DRAIN_MOVING 1u  /* a move is emptying the page */
#define CCHT_DRAIN_CARVING 2u /* its class is putting its chunks on the lists */

/* The table's eviction policy (enum cudis_policy): set between batches
 * (CONFIG SET), read once per write. */
CUDIS_HD static inline uint32_t ccht_policy_of(const ccht_table *T)
{
    return cudis_load_relaxed_u32(&T->policy);
}

CUDIS_HD static inline uint32_t ccht_lfu_decay_of(const ccht_table *T)
{
    return cudis_load_relaxed_u32(&T->lfu_decay_time);
}

/* ------------------------------------------------------------------------
 * Counter deltas of one thread (added to ccht_table.cnt later)
 * ---------------------------------------------------------------------- */

typedef struct ccht_tally {
    int64_t c[CCHT_C__COUNT];
} ccht_tally;

CUDIS_HD static inline void ccht_tally_zero(ccht_tally *ty)
{
    for (int i = 0; i < CCHT_C__COUNT; i++) {
        ty->c[i] = 0;
    }
}

CUDIS_HD static inline uint32_t ccht_arena_chunk_class(const ccht_arena *a, uint64_t off);

/* The arena bytes the chunk at off takes (its class's size, or its pages). */
CUDIS_HD static inline uint64_t ccht_chunk_bytes(const ccht_arena *a, uint64_t off)
{
    uint32_t c = ccht_arena_chunk_class(a, off);
    return c >= CCHT_CLS_LARGE ? (uint64_t)(c - CCHT_CLS_LARGE) * a->page_bytes
                               : (uint64_t)a->class_size[c];
}

/* An item leaves the index (the caller holds its bucket and its chunk). */
CUDIS_HD static inline void ccht_tally_drop(ccht_tally *ty, const ccht_table *T, uint64_t off)
{
    const ccht_view *v = &T->v;
    uint32_t h0 = ccht_item_h0(v, off);
    ty->c[CCHT_C_CHUNK_BYTES] -= (int64_t)ccht_chunk_bytes(&T->a, off);
    ty->c[CCHT_C_ITEMS] -= 1;
    ty->c[CCHT_C_KEY_BYTES] -= (int64_t)(h0 & CCHT_ITEM_KLEN_MASK);
    ty->c[CCHT_C_VAL_BYTES] -= (int64_t)ccht_item_vlen(v, off);
    ccht_db_count(v, ccht_item_db(h0), -1);
    if (ccht_item_expire(v, off, h0) != 0) {
        ty->c[CCHT_C_VOLATILE] -= 1;
        ccht_db_count_volatile(v, ccht_item_db(h0), -1);
    }
}

/* The expiry of an item with the field changes from was to now (the caller
 * holds its bucket): count a key that gains or loses one. */
CUDIS_HD static inline void ccht_tally_expiry(ccht_tally *ty, const ccht_view *v, uint32_t db,
                                              int64_t was, int64_t now)
{
    int64_t d = (now != 0) - (was != 0);
    if (d != 0) {
        ty->c[CCHT_C_VOLATILE] += d;
        ccht_db_count_volatile(v, db, d);
    }
}

/* Report the item in chunk off as removed on its own (cudis_op.h) when
 * the batch wants events (ev not NULL). The caller holds its bucket and
 * has not freed the chunk, so the key bytes are still there. The report
 * itself is out of line: without a sink the cost is one branch. */
CUDIS_HD CUDIS_NOINLINE static void ccht_ev_put(cudis_evbuf *ev, uint8_t kind, const ccht_view *v,
                                                uint64_t off)
{
    uint32_t h0 = ccht_item_h0(v, off);
    uint32_t klen = h0 & CCHT_ITEM_KLEN_MASK;
    uint8_t *dst = cudis_ev_add(ev, kind, (uint8_t)ccht_item_db(h0), klen);
    if (dst != 0) {
        ccht_bytes_read(dst, ccht_item_key(v, off, h0), klen);
    }
}

CUDIS_HD static inline void ccht_ev_item(cudis_evbuf *ev, uint8_t kind, const ccht_view *v,
                                         uint64_t off)
{
    if (ev != 0) {
        ccht_ev_put(ev, kind, v, off);
    }
}

/* The item in chunk off was removed on its own (kind: CUDIS_EV_EVICTED,
 * or CUDIS_EV_EXPIRED): count it in counter k, a CCHT_C_EVICT_* (not when
 * it is internal: cudis_db_counted), and report it (ccht_ev_item). */
CUDIS_HD static inline void ccht_gone(ccht_tally *ty, int k, cudis_evbuf *ev, uint8_t kind,
                                      const ccht_view *v, uint64_t off)
{
    if (cudis_db_counted(ccht_item_db(ccht_item_h0(v, off)))) {
        ty->c[k] += 1;
    }
    ccht_ev_item(ev, kind, v, off);
}

/* xorshift64 for victim sampling; *s must be non-zero. */
CUDIS_HD static inline uint64_t ccht_rng(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* ------------------------------------------------------------------------
 * Spinlocks over 32-bit words
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline bool ccht_spin_trylock(uint32_t *l)
{
    return cudis_load_relaxed_u32(l) == 0 && cudis_cas_u32(l, 0, 1);
}

CUDIS_HD static inline void ccht_spin_lock(uint32_t *l)
{
    unsigned spins = 0;
    while (!ccht_spin_trylock(l)) {
        ccht_backoff(&spins);
    }
}

CUDIS_HD static inline void ccht_spin_unlock(uint32_t *l)
{
    cudis_store_rel_u32(l, 0);
}

/* ------------------------------------------------------------------------
 * Addressing
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline uint32_t *ccht_chunk_h0(const ccht_arena *a, uint64_t off)
{
    return (uint32_t *)(a->base + off);
}

CUDIS_HD static inline uint64_t *ccht_chunk_link(const ccht_arena *a, uint64_t off)
{
    return (uint64_t *)(a->base + off + 8);
}

CUDIS_HD static inline uint32_t ccht_page_of(const ccht_arena *a, uint64_t off)
{
    return (uint32_t)(off >> a->page_shift);
}

CUDIS_HD static inline uint64_t ccht_page_off(const ccht_arena *a, uint32_t p)
{
    return (uint64_t)p << a->page_shift;
}

/* The allocator class of the chunk starting at off (a slab class, or
 * CCHT_CLS_LARGE + pages). Stable while the caller owns the chunk. */
CUDIS_HD static inline uint32_t ccht_arena_chunk_class(const ccht_arena *a, uint64_t off)
{
    uint32_t p = ccht_page_of(a, off);
    uint32_t c = cudis_load_relaxed_u32(&a->page_class[p]);
    if (c == CCHT_PG_LARGE) {
        return CCHT_CLS_LARGE + cudis_load_relaxed_u32(&a->page_run[p]);
    }
    return c;
}

/* The class for an item of `size` bytes: the smallest size class that
 * holds it, CCHT_CLS_LARGE + pages beyond a page, CCHT_NONE32 when it is
 * bigger than the whole arena. */
CUDIS_HD static inline uint32_t ccht_arena_class_for(const ccht_arena *a, uint64_t size)
{
    if (size > a->class_size[a->n_classes - 1]) {
        uint64_t n = (size + a->page_bytes - 1) >> a->page_shift;
        /* more pages than the budget lets be in use: it can never fit */
        return n > cudis_load_relaxed_u32(&a->pool->limit) ? CCHT_NONE32
                                                           : CCHT_CLS_LARGE + (uint32_t)n;
    }
    /* fine classes step by 8 bytes up to 128 (ccht_geom.h) */
    if (size <= 128) {
        uint32_t c = size <= 16 ? 0 : (uint32_t)((size + 7) / 8 - 2);
        if (c < a->n_classes && a->class_size[c] >= size &&
            (c == 0 || a->class_size[c - 1] < size)) {
            return c;
        }
    }
    uint32_t lo = 0, hi = a->n_classes - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (a->class_size[mid] >= size) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

/* ------------------------------------------------------------------------
 * The pool of free pages (pool.lock)
 * ---------------------------------------------------------------------- */

/* Whether the pool may hand out another page (its limit). */
CUDIS_HD static inline bool ccht_pool_room(const ccht_pool *pl)
{
    return cudis_load_relaxed_u32(&pl->pages_used) < cudis_load_relaxed_u32(&pl->limit);
}

/* With pool.lock held: page p is being taken (ccht_pool.high). */
CUDIS_HD static inline void ccht_pool_saw(ccht_pool *pl, uint32_t p)
{
    if (p + 1 > cudis_load_relaxed_u32(&pl->high)) {
        cudis_store_relaxed_u32(&pl->high, p + 1);
    }
}

/* The pages a sample of pages in use draws from: [0, ccht_pages_span). A
 * resizable host table's arena spans more pages than its budget lets it
 * use; drawing from all of them would waste most draws on pages never
 * used (and sample victims worse). */
CUDIS_HD static inline uint32_t ccht_pages_span(const ccht_arena *a)
{
    uint32_t h = cudis_load_relaxed_u32(&a->pool->high);
    return h > 0 && h < a->n_pages ? h : a->n_pages;
}

/* The pages a run of pages is looked for in: [0, ccht_run_span). The stack
 * hands out low pages first and takes freed ones back on top, so single
 * pages stay below the limit; runs must too, or a resizable table's wider
 * arena would touch (and keep resident) pages all over its address space. */
CUDIS_HD static inline uint32_t ccht_run_span(const ccht_arena *a)
{
    uint32_t lim = cudis_load_relaxed_u32(&a->pool->limit);
    uint32_t h = cudis_load_relaxed_u32(&a->pool->high);
    uint32_t s = lim > h ? lim : h;
    return s > 0 && s < a->n_pages ? s : a->n_pages;
}

/* Take the top free page (its class becomes CCHT_PG_MOVING: the caller's). */
CUDIS_HD static inline uint32_t ccht_pool_take(const ccht_arena *a)
{
    ccht_pool *pl = a->pool;
    if (cudis_load_relaxed_u32(&pl->nfree) == 0 || !ccht_pool_room(pl)) {
        return CCHT_NONE32;
    }
    uint32_t p = CCHT_NONE32;
    ccht_spin_lock(&pl->lock);
    uint32_t n = cudis_load_relaxed_u32(&pl->nfree);
    if (n > 0 && ccht_pool_room(pl)) {
        p = cudis_load_relaxed_u32(&a->pool_stack[n - 1]);
        ccht_pool_saw(pl, p);
        cudis_store_relaxed_u32(&pl->nfree, n - 1);
        cudis_store_relaxed_u32(&a->page_pos[p], CCHT_NONE32);
        cudis_store_relaxed_u32(&a->page_class[p], CCHT_PG_MOVING);
        cudis_fetch_add_u32(&pl->pages_used, 1);
    }
    ccht_spin_unlock(&pl->lock);
    return p;
}

/* With pool.lock held: take page p off the stack if it is free (and the
 * pool's limit allows another page in use). */
CUDIS_HD static inline bool ccht_do_pool_remove(const ccht_arena *a, uint32_t p)
{
    ccht_pool *pl = a->pool;
    if (cudis_load_relaxed_u32(&a->page_class[p]) != CCHT_PG_FREE || !ccht_pool_room(pl)) {
        return false;
    }
    uint32_t i = cudis_load_relaxed_u32(&a->page_pos[p]);
    uint32_t n = cudis_load_relaxed_u32(&pl->nfree) - 1;
    ccht_pool_saw(pl, p);
    uint32_t last = cudis_load_relaxed_u32(&a->pool_stack[n]);
    cudis_store_relaxed_u32(&a->pool_stack[i], last);
    cudis_store_relaxed_u32(&a->page_pos[last], i);
    cudis_store_relaxed_u32(&pl->nfree, n);
    cudis_store_relaxed_u32(&a->page_pos[p], CCHT_NONE32);
    cudis_store_relaxed_u32(&a->page_class[p], CCHT_PG_MOVING);
    cudis_fetch_add_u32(&pl->pages_used, 1);
    return true;
}

/* With pool.lock held: put page p (the caller's) back on the stack. */
CUDIS_HD static inline void ccht_do_pool_put(const ccht_arena *a, uint32_t p)
{
    ccht_pool *pl = a->pool;
    uint32_t n = cudis_load_relaxed_u32(&pl->nfree);
    cudis_store_relaxed_u32(&a->pool_stack[n], p);
    cudis_store_relaxed_u32(&a->page_pos[p], n);
    cudis_store_relaxed_u32(&a->page_run[p], 0);
    cudis_store_relaxed_u32(&a->page_class[p], CCHT_PG_FREE);
    cudis_store_relaxed_u32(&pl->nfree, n + 1);
    cudis_fetch_sub_u32(&pl->pages_used, 1);
}

/* Return pages [p, p + n) (the caller's) to the pool. */
CUDIS_HD static inline void ccht_pool_put_run(const ccht_arena *a, uint32_t p, uint32_t n)
{
    ccht_spin_lock(&a->pool->lock);
    for (uint32_t i = 0; i < n; i++) {
        ccht_do_pool_put(a, p + i);
    }
    ccht_spin_unlock(&a->pool->lock);
}

/* ------------------------------------------------------------------------
 * Free lists (one spinlock each)
 * ---------------------------------------------------------------------- */

/* With the shard's lock held: push the chain first..last of n chunks
 * (linked through offset 8; last's link is overwritten). */
CUDIS_HD static inline void ccht_do_push(const ccht_arena *a, uint32_t cls, uint32_t s,
                                         uint64_t first, uint64_t last, uint32_t n)
{
    ccht_shard *sh = &a->cls[cls].shard[s];
    uint64_t old = cudis_load_relaxed_u64(&sh->head);
    cudis_store_relaxed_u64(ccht_chunk_link(a, last), old);
    cudis_store_relaxed_u64(&sh->head, first + 1);
    cudis_store_relaxed_u32(&sh->nfree, cudis_load_relaxed_u32(&sh->nfree) + n);
    if (old == 0) {
        cudis_fetch_or_u64(&a->cls[cls].nonempty, 1ull << s);
    }
}

/* Pop a free chunk of shard s (it becomes RESV, the caller's), or
 * CCHT_NO_CHUNK. */
CUDIS_HD static inline uint64_t ccht_shard_take(const ccht_arena *a, uint32_t cls, uint32_t s)
{
    ccht_shard *sh = &a->cls[cls].shard[s];
    if (cudis_load_relaxed_u64(&sh->head) == 0) {
        return CCHT_NO_CHUNK;
    }
    uint64_t off = CCHT_NO_CHUNK;
    ccht_spin_lock(&sh->lock);
    uint64_t h = cudis_load_relaxed_u64(&sh->head);
    if (h != 0) {
        off = h - 1;
        uint64_t next = cudis_load_relaxed_u64(ccht_chunk_link(a, off));
        cudis_store_relaxed_u64(&sh->head, next);
        cudis_store_relaxed_u32(&sh->nfree, cudis_load_relaxed_u32(&sh->nfree) - 1);
        if (next == 0) {
            cudis_fetch_and_u64(&a->cls[cls].nonempty, ~(1ull << s));
        }
        cudis_store_relaxed_u32(ccht_chunk_h0(a, off), CCHT_ITEM_RESV);
    }
    ccht_spin_unlock(&sh->lock);
    return off;
}

/* With shard s's lock held: unlink the free chunk o that *link points to. */
CUDIS_HD static inline void ccht_do_unlink(const ccht_arena *a, ccht_shard *sh, uint64_t *link,
                                           uint64_t o)
{
    cudis_store_relaxed_u64(link, cudis_load_relaxed_u64(ccht_chunk_link(a, o)));
    cudis_store_relaxed_u32(&sh->nfree, cudis_load_relaxed_u32(&sh->nfree) - 1);
}

/* With shard s's lock held, after unlinks: its hint bit goes with its last chunk. */
CUDIS_HD static inline void ccht_do_hint(ccht_class *k, uint32_t s)
{
    if (cudis_load_relaxed_u64(&k->shard[s].head) == 0) {
        cudis_fetch_and_u64(&k->nonempty, ~(1ull << s));
    }
}

/* Record that class cls received page p (victim sampling looks there). */
CUDIS_HD static inline void ccht_class_note_page(const ccht_arena *a, uint32_t cls, uint32_t p)
{
    ccht_class *k = &a->cls[cls];
    uint32_t i = cudis_fetch_add_u32(&k->ring_pos, 1) % CCHT_RING;
    cudis_store_relaxed_u32(&k->ring[i], p);
    cudis_fetch_add_u32(&k->n_pages, 1);
}

/* Carve page p (the caller's) into chunks of class cls: chunk 0 is
 * returned to the caller (RESV), chunk i goes to shard (shard + i) mod
 * CCHT_SHARDS. */
CUDIS_HD static inline uint64_t ccht_carve(const ccht_arena *a, uint32_t cls, uint32_t p,
                                           uint32_t shard)
{
    ccht_class *k = &a->cls[cls];
    uint64_t size = k->size;
    uint32_t per = k->per_page;
    uint64_t base = ccht_page_off(a, p);
    for (uint32_t i = 1; i < per; i++) {
        uint64_t c = base + (uint64_t)i * size;
        cudis_store_relaxed_u32(ccht_chunk_h0(a, c), 0);
        uint64_t next = i + CCHT_SHARDS < per ? c + CCHT_SHARDS * size + 1 : 0;
        cudis_store_relaxed_u64(ccht_chunk_link(a, c), next);
    }
    cudis_store_relaxed_u32(ccht_chunk_h0(a, base), CCHT_ITEM_RESV);
    /* no move may empty the page before its chunks are on the lists */
    cudis_store_relaxed_u32(&a->page_drain[p], CCHT_DRAIN_CARVING);
    cudis_store_rel_u32(&a->page_class[p], cls);
    ccht_class_note_page(a, cls, p);
    for (uint32_t r = 0; r < CCHT_SHARDS; r++) {
        uint32_t first = r == 0 ? CCHT_SHARDS : r;
        if (first >= per) {
            continue;
        }
        uint32_t last = first + (per - 1 - first) / CCHT_SHARDS * CCHT_SHARDS;
        uint32_t s = (shard + r) % CCHT_SHARDS;
        ccht_spin_lock(&k->shard[s].lock);
        ccht_do_push(a, cls, s, base + (uint64_t)first * size, base + (uint64_t)last * size,
                     (last - first) / CCHT_SHARDS + 1);
        ccht_spin_unlock(&k->shard[s].lock);
    }
    cudis_store_rel_u32(&a->page_drain[p], CCHT_DRAIN_NONE);
    return base;
}

/* ------------------------------------------------------------------------
 * Allocation without eviction (a caller may hold a bucket pair)
 * ---------------------------------------------------------------------- */

/* A free chunk of size class cls: the caller's shard, the other shards the
 * hint mask names, else a new page from the pool. CCHT_NO_CHUNK when the
 * class has no free chunk and the pool no page. */
CUDIS_HD static inline uint64_t ccht_alloc_class(const ccht_arena *a, uint32_t cls, uint32_t shard)
{
    ccht_class *k = &a->cls[cls];
    shard %= CCHT_SHARDS;
    unsigned spins = 0;
    for (;;) {
        uint64_t off = ccht_shard_take(a, cls, shard);
        if (off != CCHT_NO_CHUNK) {
            return off;
        }
        uint64_t m = cudis_load_relaxed_u64(&k->nonempty);
        m = (m >> shard) | (shard ? m << (CCHT_SHARDS - shard) : 0);
        while (m != 0) {
            uint32_t j = 0;
            while (!((m >> j) & 1)) {
                j++;
            }
            m &= ~(1ull << j);
            off = ccht_shard_take(a, cls, (shard + j) % CCHT_SHARDS);
            if (off != CCHT_NO_CHUNK) {
                return off;
            }
        }
        if (cudis_load_relaxed_u32(&a->pool->nfree) == 0) {
            return CCHT_NO_CHUNK;
        }
        if (ccht_spin_trylock(&k->grow_lock)) {
            if (cudis_load_relaxed_u64(&k->nonempty) != 0) {
                ccht_spin_unlock(&k->grow_lock); /* someone refilled meanwhile */
                continue;
            }
            uint32_t p = ccht_pool_take(a);
            if (p != CCHT_NONE32) {
                off = ccht_carve(a, cls, p, shard);
            }
            ccht_spin_unlock(&k->grow_lock);
            return off;
        }
        ccht_backoff(&spins); /* another thread is carving a page for this class */
    }
}

/* n contiguous free pages as one large chunk (RESV), or CCHT_NO_CHUNK. */
CUDIS_HD static inline uint64_t ccht_alloc_run(const ccht_arena *a, uint32_t n)
{
    ccht_pool *pl = a->pool;
    if (cudis_load_relaxed_u32(&pl->nfree) < n) {
        return CCHT_NO_CHUNK;
    }
    uint64_t off = CCHT_NO_CHUNK;
    ccht_spin_lock(&pl->lock);
    /* the pool's limit must allow all n in use (every change to pages_used
     * is made under this lock): taking a page the limit refuses would
     * leave it on the stack, marked in use */
    if ((uint64_t)cudis_load_relaxed_u32(&pl->pages_used) + n >
        cudis_load_relaxed_u32(&pl->limit)) {
        ccht_spin_unlock(&pl->lock);
        return CCHT_NO_CHUNK;
    }
    uint32_t np = ccht_run_span(a);
    uint32_t start = cudis_load_relaxed_u32(&pl->hint) % np;
    uint32_t scan = np < CCHT_RUN_SCAN ? np : CCHT_RUN_SCAN;
    uint32_t run = 0, at = 0;
    for (uint32_t i = 0; i < scan + n && cudis_load_relaxed_u32(&pl->nfree) >= n; i++) {
        uint32_t p = (start + i) % np;
        if (p == 0) {
            run = 0; /* runs do not wrap around the end of the arena */
        }
        if (cudis_load_relaxed_u32(&a->page_class[p]) != CCHT_PG_FREE) {
            run = 0;
            continue;
        }
        if (run++ == 0) {
            at = p;
        }
        if (run == n) {
            for (uint32_t q = at; q < at + n; q++) {
                (void)ccht_do_pool_remove(a, q);
                cudis_store_relaxed_u32(&a->page_class[q], CCHT_PG_CONT);
            }
            off = ccht_page_off(a, at);
            cudis_store_relaxed_u32(ccht_chunk_h0(a, off), CCHT_ITEM_RESV);
            cudis_store_relaxed_u32(&a->page_run[at], n);
            cudis_store_relaxed_u32(&a->page_class[at], CCHT_PG_LARGE);
            cudis_store_relaxed_u32(&pl->hint, at + n);
            break;
        }
    }
    ccht_spin_unlock(&pl->lock);
    return off;
}

/* A chunk of allocator class cls (ccht_arena_class_for) without evicting. */
CUDIS_HD static inline uint64_t ccht_arena_alloc(const ccht_arena *a, uint32_t cls, uint32_t shard)
{
    if (cls >= CCHT_CLS_LARGE) {
        return ccht_alloc_run(a, cls - CCHT_CLS_LARGE);
    }
    return ccht_alloc_class(a, cls, shard);
}

/* Give back a chunk that no slot refers to any more (the caller's). */
CUDIS_HD static inline void ccht_arena_free(const ccht_arena *a, uint64_t off, uint32_t shard)
{
    uint32_t p = ccht_page_of(a, off);
    uint32_t c = cudis_load_relaxed_u32(&a->page_class[p]);
    if (c == CCHT_PG_LARGE) {
        cudis_store_relaxed_u32(ccht_chunk_h0(a, off), 0);
        ccht_pool_put_run(a, p, cudis_load_relaxed_u32(&a->page_run[p]));
        return;
    }
    uint32_t s = shard % CCHT_SHARDS;
    ccht_shard *sh = &a->cls[c].shard[s];
    ccht_spin_lock(&sh->lock);
    if (cudis_load_relaxed_u32(&a->page_drain[p]) == CCHT_DRAIN_MOVING) {
        cudis_store_rel_u32(ccht_chunk_h0(a, off), 0); /* the page's mover takes it */
    } else {
        cudis_store_relaxed_u32(ccht_chunk_h0(a, off), 0);
        ccht_do_push(a, c, s, off, off, 1);
    }
    ccht_spin_unlock(&sh->lock);
}

/* ------------------------------------------------------------------------
 * Items behind chunks (the index seen from the arena)
 * ---------------------------------------------------------------------- */

/* Coldness of the item in chunk off under the policy (ccht_coldness;
 * under volatile-ttl the nearer its expiry the colder, and one without an
 * expiry, which the policy keeps, as warm as can be; UINT32_MAX when
 * expired); false when no slot refers to the chunk. Racy: a hint for
 * choosing victims, also between the pages of different classes (a page
 * move must not take long-lived keys for short-lived ones). */
CUDIS_HD static inline bool ccht_chunk_age(const ccht_view *v, uint64_t off, uint32_t now_stamp,
                                           int64_t now_ms, uint32_t policy, uint32_t decay_time,
                                           uint32_t *age)
{
    ccht_hkey hk;
    ccht_loc loc;
    if (!ccht_chunk_hkey(v, off, &hk) || !ccht_find_ref(v, &hk, off, &loc)) {
        return false;
    }
    if (ccht_slot_expired(v, loc.word, now_ms)) {
        *age = UINT32_MAX;
    } else if (policy == CUDIS_POL_VOLATILE_TTL) {
        int64_t left = (loc.word & CCHT_SLOT_EXP)
                           ? ccht_item_expire(v, off, ccht_item_h0(v, off)) - now_ms
                           : INT64_MAX;
        *age = left >= (int64_t)UINT32_MAX - 1 ? 0 : UINT32_MAX - 1 - (uint32_t)left;
    } else {
        *age = ccht_coldness(policy, decay_time,
                             cudis_load_relaxed_u32(ccht_bkt_stamp(v, loc.bucket, loc.way)),
                             now_stamp, now_ms);
    }
    return true;
}

/* Take the item in chunk off out of the index if a slot still refers to it
 * and it has expired or the eviction policy lets it go (locks the pair;
 * the caller holds no bucket lock), counting and reporting (ev, may be
 * NULL) a memory eviction or an expired reclaim. Returns 1 when the chunk
 * is the caller's (h0 still LIVE), 0 when no slot refers to it, -1 when
 * the policy keeps the item. */
CUDIS_HD static inline int ccht_unlink_chunk(const ccht_table *T, uint64_t off, int64_t now_ms,
                                             uint32_t policy, ccht_tally *ty, cudis_evbuf *ev)
{
    const ccht_view *v = &T->v;
    ccht_hkey hk;
    if (!ccht_chunk_hkey(v, off, &hk)) {
        return 0;
    }
    ccht_pair_lock(v, &hk);
    ccht_loc loc;
    bool found = ccht_find_ref(v, &hk, off, &loc);
    if (found && !ccht_slot_expired(v, loc.word, now_ms) &&
        !ccht_policy_takes(policy, (loc.word & CCHT_SLOT_EXP) != 0)) {
        ccht_pair_unlock(v, &hk);
        return -1;
    }
    if (found) {
        bool expired = ccht_slot_expired(v, loc.word, now_ms);
        ccht_gone(ty, expired ? CCHT_C_EVICT_EXPIRED : CCHT_C_EVICT_MEMORY, ev,
                  expired ? CUDIS_EV_EXPIRED : CUDIS_EV_EVICTED, v, off);
        ccht_tally_drop(ty, T, off);
        cudis_store_rel_u64(ccht_bkt_slot(v, loc.bucket, loc.way), 0);
    }
    ccht_pair_unlock(v, &hk);
    return found ? 1 : 0;
}

/* What the slow path needs besides the table. */
typedef struct ccht_mem_ctx {
    int64_t now_ms;
    uint32_t now_stamp;
    uint32_t shard;
    uint32_t policy;    /* which live items may be evicted (enum cudis_policy) */
    uint32_t lfu_decay; /* the LFU counters' decay (ccht_lfu_count) */
    uint64_t *rng;
    ccht_tally *ty;
    cudis_evbuf *ev; /* the batch's event sink (NULL: none) */
} ccht_mem_ctx;

/* ------------------------------------------------------------------------
 * Memory eviction within a class
 * ---------------------------------------------------------------------- */

/* Evict the item the eviction policy picks (m->policy; LRU: the oldest)
 * of a sample of class cls's items it may take, expired ones first, and
 * keep its chunk (RESV). *age gets the victim's age; *none is set when
 * the sample held no item the policy takes. */
CUDIS_HD static inline bool ccht_evict_in_class(const ccht_table *T, uint32_t cls, ccht_mem_ctx *m,
                                                uint64_t *off, uint32_t *age, bool *none)
{
    const ccht_arena *a = &T->a;
    const ccht_class *k = &a->cls[cls];
    uint64_t size = k->size;
    uint32_t per = k->per_page;
    uint64_t best = 0;
    uint32_t best_age = 0, seen = 0;
    int64_t best_exp = 0;
    for (uint32_t probe = 0; probe < CCHT_SAMPLE_PROBES && seen < CCHT_SAMPLE; probe++) {
        uint64_t r = ccht_rng(m->rng);
        uint32_t p = (probe & 1) ? cudis_load_relaxed_u32(&k->ring[r % CCHT_RING])
                                 : (uint32_t)((r >> 32) % ccht_pages_span(a));
        if (p >= a->n_pages || cudis_load_relaxed_u32(&a->page_class[p]) != cls ||
            cudis_load_relaxed_u32(&a->page_drain[p])) {
            continue;
        }
        uint64_t c = ccht_page_off(a, p) + (uint64_t)((r >> 8) % per) * size;
        uint32_t ag;
        uint32_t h0 = cudis_load_acq_u32(ccht_chunk_h0(a, c));
        if (!(h0 & CCHT_ITEM_LIVE) ||
            !ccht_chunk_age(&T->v, c, m->now_stamp, m->now_ms, m->policy, m->lfu_decay, &ag)) {
            continue;
        }
        bool expired = ag == UINT32_MAX;
        if (!expired && !ccht_policy_takes(m->policy, (h0 & CCHT_ITEM_EXP) != 0)) {
            continue;
        }
        int64_t exp = m->policy == CUDIS_POL_VOLATILE_TTL && !expired
                          ? ccht_item_expire(&T->v, c, h0)
                          : 0; /* an expired one goes first: 0 is nearest */
        bool take;
        if (seen++ == 0) {
            take = true;
        } else if (best_age == UINT32_MAX) {
            take = false; /* an expired one is in hand */
        } else {
            take = expired || ccht_policy_prefers(m->policy, ag, exp, best_age, best_exp);
        }
        if (take) {
            best = c;
            best_age = ag;
            best_exp = exp;
        }
    }
    *age = best_age;
    *none = seen == 0;
    if (seen == 0 || ccht_unlink_chunk(T, best, m->now_ms, m->policy, m->ty, m->ev) != 1) {
        return false;
    }
    uint32_t p = ccht_page_of(a, best);
    if (cudis_load_acq_u32(&a->page_class[p]) != cls) {
        /* the page moved to another class after it was sampled: the item
         * evicted was in one of that class's chunks */
        ccht_arena_free(a, best, m->shard);
        return false;
    }
    if (cudis_load_relaxed_u32(&a->page_drain[p]) == CCHT_DRAIN_MOVING) {
        cudis_store_rel_u32(ccht_chunk_h0(a, best), 0); /* a mover empties this page: its chunk */
        return false;
    }
    cudis_store_relaxed_u32(ccht_chunk_h0(a, best), CCHT_ITEM_RESV);
    *off = best;
    return true;
}

/* ------------------------------------------------------------------------
 * Page moves (pool.move_lock held)
 * ---------------------------------------------------------------------- */

/* With every shard lock of class d held: give the free chunks of page p
 * back to the class (a move that gave up). */
CUDIS_HD static inline void ccht_undrain(const ccht_arena *a, uint32_t p, uint32_t d)
{
    ccht_class *k = &a->cls[d];
    for (uint32_t s = 0; s < CCHT_SHARDS; s++) {
        ccht_spin_lock(&k->shard[s].lock);
    }
    uint64_t base = ccht_page_off(a, p);
    for (uint32_t i = 0; i < k->per_page; i++) {
        uint64_t c = base + (uint64_t)i * k->size;
        if (cudis_load_acq_u32(ccht_chunk_h0(a, c)) == 0) {
            ccht_do_push(a, d, i % CCHT_SHARDS, c, c, 1);
        }
    }
    cudis_store_rel_u32(&a->page_drain[p], CCHT_DRAIN_NONE);
    for (uint32_t s = 0; s < CCHT_SHARDS; s++) {
        ccht_spin_unlock(&k->shard[s].lock);
    }
}

/* Empty slab page p of class d: its free chunks leave the free lists, its
 * items are evicted. True with the page the caller's (CCHT_PG_MOVING). */
CUDIS_HD static inline bool ccht_drain_page(const ccht_table *T, uint32_t p, uint32_t d,
                                            ccht_mem_ctx *m)
{
    const ccht_arena *a = &T->a;
    ccht_class *k = &a->cls[d];
    uint64_t lo = ccht_page_off(a, p), hi = lo + a->page_bytes;
    if (!cudis_cas_u32(&a->page_drain[p], CCHT_DRAIN_NONE, CCHT_DRAIN_MOVING)) {
        return false; /* being carved */
    }
    for (uint32_t s = 0; s < CCHT_SHARDS; s++) {
        /* under the lock even when empty: a free that did not see the flag
         * may be pushing right now */
        ccht_shard *sh = &k->shard[s];
        ccht_spin_lock(&sh->lock);
        uint64_t *link = &sh->head;
        uint64_t x;
        while ((x = cudis_load_relaxed_u64(link)) != 0) {
            uint64_t o = x - 1;
            if (o >= lo && o < hi) {
                ccht_do_unlink(a, sh, link, o);
            } else {
                link = ccht_chunk_link(a, o);
            }
        }
        ccht_do_hint(k, s);
        ccht_spin_unlock(&sh->lock);
    }
    uint64_t deadline = 0;
    unsigned spins = 0;
    for (uint32_t i = 0; i < k->per_page; i++) {
        uint64_t c = lo + (uint64_t)i * k->size;
        for (;;) {
            uint32_t h0 = cudis_load_acq_u32(ccht_chunk_h0(a, c));
            if ((h0 & (CCHT_ITEM_LIVE | CCHT_ITEM_RESV)) == 0) {
                break;
            }
            int u = (h0 & CCHT_ITEM_LIVE)
                        ? ccht_unlink_chunk(T, c, m->now_ms, m->policy, m->ty, m->ev)
                        : 0;
            if (u == 1) {
                cudis_store_rel_u32(ccht_chunk_h0(a, c), 0);
                break;
            }
            if (u < 0) { /* the policy keeps an item of this page */
                ccht_undrain(a, p, d);
                return false;
            }
            /* being written (or freed) by another thread right now */
            uint64_t t = cudis_hd_now_ns();
            if (deadline == 0) {
                deadline = t + CCHT_DRAIN_WAIT_NS;
            } else if (t > deadline) {
                ccht_undrain(a, p, d);
                return false;
            }
            ccht_backoff(&spins);
        }
    }
    cudis_fetch_sub_u32(&k->n_pages, 1);
    cudis_store_relaxed_u32(&a->page_class[p], CCHT_PG_MOVING);
    cudis_store_rel_u32(&a->page_drain[p], CCHT_DRAIN_NONE);
    return true;
}

/* Make page p the caller's (CCHT_PG_MOVING) whatever it holds: take it off
 * the pool, empty it, or evict the large item it belongs to (the rest of
 * that item's pages go to the pool). */
CUDIS_HD static inline bool ccht_claim_page(const ccht_table *T, uint32_t p, ccht_mem_ctx *m)
{
    const ccht_arena *a = &T->a;
    uint64_t deadline = 0;
    unsigned spins = 0;
    for (;;) {
        uint32_t c = cudis_load_acq_u32(&a->page_class[p]);
        if (c == CCHT_PG_FREE) {
            if (!ccht_pool_room(a->pool)) {
                return false; /* memory was lowered: no page more in use */
            }
            ccht_spin_lock(&a->pool->lock);
            bool got = ccht_do_pool_remove(a, p);
            ccht_spin_unlock(&a->pool->lock);
            if (got) {
                return true;
            }
        } else if (c < a->n_classes) {
            return ccht_drain_page(T, p, c, m);
        } else if (c == CCHT_PG_LARGE || c == CCHT_PG_CONT) {
            uint32_t h = p;
            while (h > 0 && cudis_load_relaxed_u32(&a->page_class[h]) == CCHT_PG_CONT) {
                h--;
            }
            uint64_t off = ccht_page_off(a, h);
            int u = 0;
            if (cudis_load_relaxed_u32(&a->page_class[h]) == CCHT_PG_LARGE &&
                (cudis_load_acq_u32(ccht_chunk_h0(a, off)) & CCHT_ITEM_LIVE)) {
                u = ccht_unlink_chunk(T, off, m->now_ms, m->policy, m->ty, m->ev);
            }
            if (u == 1) {
                ccht_arena_free(a, off, m->shard);
                continue; /* p is free now */
            }
            if (u < 0) {
                return false; /* the policy keeps the item */
            }
        } else if (c == CCHT_PG_MOVING) {
            return false;
        }
        /* a large item being written or freed: wait a little */
        uint64_t t = cudis_hd_now_ns();
        if (deadline == 0) {
            deadline = t + CCHT_DRAIN_WAIT_NS;
        } else if (t > deadline) {
            return false;
        }
        ccht_backoff(&spins);
    }
}

/* Sampled age of page p: the youngest of a few of its live items (a page
 * with none sampled is as old as can be). */
CUDIS_HD static inline uint32_t ccht_page_age(const ccht_table *T, uint32_t p, uint32_t c,
                                              ccht_mem_ctx *m)
{
    const ccht_arena *a = &T->a;
    uint32_t youngest = UINT32_MAX;
    uint32_t ag;
    if (c == CCHT_PG_LARGE) {
        uint64_t off = ccht_page_off(a, p);
        if ((cudis_load_acq_u32(ccht_chunk_h0(a, off)) & CCHT_ITEM_LIVE) &&
            ccht_chunk_age(&T->v, off, m->now_stamp, m->now_ms, m->policy, m->lfu_decay, &ag)) {
            youngest = ag;
        }
        return youngest;
    }
    const ccht_class *k = &a->cls[c];
    for (int i = 0; i < 4; i++) {
        uint64_t off = ccht_page_off(a, p) + (uint64_t)(ccht_rng(m->rng) % k->per_page) * k->size;
        if ((cudis_load_acq_u32(ccht_chunk_h0(a, off)) & CCHT_ITEM_LIVE) &&
            ccht_chunk_age(&T->v, off, m->now_stamp, m->now_ms, m->policy, m->lfu_decay, &ag) &&
            ag < youngest) {
            youngest = ag;
        }
    }
    return youngest;
}

/* Move a cold page of another class (or a cold large item) to the pool
 * for class cls. own_age is the age of cls's own eviction candidate
 * (UINT32_MAX: cls owns nothing, move whatever is coldest). True when a
 * page went to the pool. */
CUDIS_HD static inline bool ccht_move_page(const ccht_table *T, uint32_t cls, uint32_t own_age,
                                           ccht_mem_ctx *m)
{
    const ccht_arena *a = &T->a;
    if (!ccht_spin_trylock(&a->pool->move_lock)) {
        return false;
    }
    uint32_t victim = CCHT_NONE32, vage = 0, seen = 0;
    for (int tries = 0; tries < 32 && seen < 4; tries++) {
        uint32_t p = (uint32_t)(ccht_rng(m->rng) % ccht_pages_span(a));
        uint32_t d = cudis_load_acq_u32(&a->page_class[p]);
        if (d == cls || (d >= a->n_classes && d != CCHT_PG_LARGE)) {
            continue;
        }
        seen++;
        uint32_t ag = ccht_page_age(T, p, d, m);
        if (victim == CCHT_NONE32 || ag > vage) {
            victim = p;
            vage = ag;
        }
    }
    bool moved = false;
    if (victim != CCHT_NONE32 && (own_age == UINT32_MAX || vage >= own_age)) {
        uint32_t d = cudis_load_acq_u32(&a->page_class[victim]);
        if (d == CCHT_PG_LARGE) {
            uint64_t off = ccht_page_off(a, victim);
            if ((cudis_load_acq_u32(ccht_chunk_h0(a, off)) & CCHT_ITEM_LIVE) &&
                ccht_unlink_chunk(T, off, m->now_ms, m->policy, m->ty, m->ev) == 1) {
                ccht_arena_free(a, off, m->shard);
                moved = true;
            }
        } else if (d < a->n_classes && d != cls && ccht_drain_page(T, victim, d, m)) {
            ccht_pool_put_run(a, victim, 1);
            moved = true;
        }
    }
    ccht_spin_unlock(&a->pool->move_lock);
    return moved;
}

/* Assemble a run of n pages by claiming a random window (pool.move_lock
 * held). */
CUDIS_HD static inline uint64_t ccht_claim_run(const ccht_table *T, uint32_t n, ccht_mem_ctx *m)
{
    const ccht_arena *a = &T->a;
    uint32_t span = ccht_run_span(a);
    if (n > span) {
        return CCHT_NO_CHUNK;
    }
    uint32_t s = (uint32_t)(ccht_rng(m->rng) % (span - n + 1));
    uint32_t got = 0;
    while (got < n && ccht_claim_page(T, s + got, m)) {
        got++;
    }
    if (got < n) {
        ccht_pool_put_run(a, s, got);
        return CCHT_NO_CHUNK;
    }
    for (uint32_t q = s + 1; q < s + n; q++) {
        cudis_store_relaxed_u32(&a->page_class[q], CCHT_PG_CONT);
    }
    uint64_t off = ccht_page_off(a, s);
    cudis_store_relaxed_u32(ccht_chunk_h0(a, off), CCHT_ITEM_RESV);
    cudis_store_relaxed_u32(&a->page_run[s], n);
    cudis_store_rel_u32(&a->page_class[s], CCHT_PG_LARGE);
    return off;
}

/* ------------------------------------------------------------------------
 * Reclaiming wholly free pages (pool.move_lock held)
 * ---------------------------------------------------------------------- */

/* Give the wholly free slab pages of class d back to the pool, at most
 * CCHT_RECLAIM_MAX: with every shard lock of d held, count each page's
 * free chunks (in page_run, which slab pages do not use; zero again
 * after), unlink the chunks of the pages whose every chunk is free, and
 * return those pages. Three walks over d's free lists. Returns the pages
 * given back. */
CUDIS_HD static inline uint32_t ccht_reclaim_class(const ccht_arena *a, uint32_t d)
{
    ccht_class *k = &a->cls[d];
    uint32_t per = k->per_page;
    uint32_t got[CCHT_RECLAIM_MAX];
    uint32_t n = 0;
    for (uint32_t s = 0; s < CCHT_SHARDS; s++) {
        ccht_spin_lock(&k->shard[s].lock);
    }
    for (uint32_t s = 0; s < CCHT_SHARDS; s++) { /* count */
        for (uint64_t x = cudis_load_relaxed_u64(&k->shard[s].head); x != 0;
             x = cudis_load_relaxed_u64(ccht_chunk_link(a, x - 1))) {
            uint32_t p = ccht_page_of(a, x - 1);
            if (cudis_load_relaxed_u32(&a->page_drain[p]) == CCHT_DRAIN_NONE) {
                cudis_store_relaxed_u32(&a->page_run[p],
                                        cudis_load_relaxed_u32(&a->page_run[p]) + 1);
            }
        }
    }
    for (uint32_t s = 0; s < CCHT_SHARDS; s++) { /* unlink the chunks of free pages */
        ccht_shard *sh = &k->shard[s];
        uint64_t *link = &sh->head;
        uint64_t x;
        while ((x = cudis_load_relaxed_u64(link)) != 0) {
            uint64_t o = x - 1;
            uint32_t p = ccht_page_of(a, o);
            uint32_t c = cudis_load_relaxed_u32(&a->page_run[p]);
            if (c == per && n < CCHT_RECLAIM_MAX) {
                got[n++] = p;
                c = per + 1;
                cudis_store_relaxed_u32(&a->page_run[p], c);
            }
            if (c == per + 1) {
                ccht_do_unlink(a, sh, link, o);
            } else {
                link = ccht_chunk_link(a, o);
            }
        }
        ccht_do_hint(k, s);
    }
    for (uint32_t s = 0; s < CCHT_SHARDS; s++) { /* the pages kept: counts back to zero */
        for (uint64_t x = cudis_load_relaxed_u64(&k->shard[s].head); x != 0;
             x = cudis_load_relaxed_u64(ccht_chunk_link(a, x - 1))) {
            cudis_store_relaxed_u32(&a->page_run[ccht_page_of(a, x - 1)], 0);
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        cudis_fetch_sub_u32(&k->n_pages, 1);
        cudis_store_rel_u32(&a->page_class[got[i]], CCHT_PG_MOVING);
    }
    for (uint32_t s = 0; s < CCHT_SHARDS; s++) {
        ccht_spin_unlock(&k->shard[s].lock);
    }
    for (uint32_t i = 0; i < n; i++) {
        ccht_pool_put_run(a, got[i], 1); /* (page_run back to 0) */
    }
    return n;
}

/* Pages' worth of free chunks on the classes' lists: the pages classes and
 * large items hold less the chunk bytes live items take (the counter is
 * flushed per batch: an estimate). */
CUDIS_HD static inline uint32_t ccht_slack_pages(const ccht_table *T)
{
    const ccht_arena *a = &T->a;
    uint64_t held = (uint64_t)cudis_load_relaxed_u32(&a->pool->pages_used) << a->page_shift;
    int64_t live = (int64_t)cudis_load_relaxed_u64(&T->cnt[CCHT_C_CHUNK_BYTES]);
    uint64_t l = live > 0 ? (uint64_t)live : 0;
    return held > l ? (uint32_t)((held - l) >> a->page_shift) : 0;
}

/* Before the slow path evicts: when free chunks have grown by enough since
 * the last reclaim (CCHT_RECLAIM_MIN pages, or an eighth of what was left
 * then), give the wholly free pages of every class holding a page's worth
 * of free chunks back to the pool. So values that move to other classes
 * (growing values, a new mix of sizes) reuse the pages they left instead
 * of evicting while most of the budget sits on free lists. Returns 1 when
 * a page went back, -1 when a reclaim is due but another thread holds
 * pool.move_lock (it may be reclaiming: wait, do not evict), 0 when there
 * is nothing to reclaim. */
CUDIS_HD static inline int ccht_reclaim(const ccht_table *T)
{
    const ccht_arena *a = &T->a;
    ccht_pool *pl = a->pool;
    uint32_t slack = ccht_slack_pages(T);
    uint32_t at = cudis_load_relaxed_u32(&pl->reclaim_at);
    if (slack < at) {
        cudis_store_relaxed_u32(&pl->reclaim_at, slack); /* chunks were reused: a lower mark */
        return 0;
    }
    uint32_t step = at / 8 > CCHT_RECLAIM_MIN ? at / 8 : CCHT_RECLAIM_MIN;
    if (slack - at < step) {
        return 0;
    }
    if (!ccht_spin_trylock(&pl->move_lock)) {
        return -1;
    }
    uint32_t back = 0;
    bool more = false;
    for (uint32_t d = 0; d < a->n_classes; d++) {
        const ccht_class *k = &a->cls[d];
        uint64_t f = 0;
        for (uint32_t s = 0; s < CCHT_SHARDS; s++) {
            f += cudis_load_relaxed_u32(&k->shard[s].nfree);
        }
        if (f >= k->per_page) {
            uint32_t got = ccht_reclaim_class(a, d);
            back += got;
            more = more || got == CCHT_RECLAIM_MAX;
        }
    }
    /* the slack left is fragments of pages partly in use; a class that
     * gave back its most has more to give: no mark */
    cudis_store_relaxed_u32(&pl->reclaim_at, more ? 0 : (slack > back ? slack - back : 0));
    ccht_spin_unlock(&pl->move_lock);
    return back > 0 ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * The slow path: allocation that may evict (the caller holds NO bucket lock)
 * ---------------------------------------------------------------------- */

/* A chunk of allocator class cls, evicting what the policy lets go
 * (sampled) or moving pages when needed. Returns the chunk (RESV) or
 * CCHT_NO_CHUNK when memory could not be found within CCHT_WAIT_NS (chunks
 * pinned that long: none are, by construction), or, under a policy that
 * keeps some items (noeviction, volatile-*), after CCHT_KEPT_TRIES
 * attempts found nothing it lets go. */
CUDIS_HD static inline uint64_t ccht_arena_alloc_slow(const ccht_table *T, uint32_t cls,
                                                      ccht_mem_ctx *m)
{
    const ccht_arena *a = &T->a;
    uint64_t deadline = 0;
    unsigned spins = 0;
    bool keeps = !ccht_policy_takes(m->policy, false); /* noeviction, volatile-* */
    uint32_t barren = 0;                               /* attempts that found nothing to take */
    for (uint32_t attempt = 0;; attempt++) {
        uint64_t off = ccht_arena_alloc(a, cls, m->shard);
        if (off != CCHT_NO_CHUNK) {
            return off;
        }
        if (keeps && barren >= CCHT_KEPT_TRIES) {
            return CCHT_NO_CHUNK;
        }
        int rc = ccht_reclaim(T);
        if (rc != 0) {
            if (rc < 0) {
                ccht_backoff(&spins);
            }
            continue; /* pages went back to the pool, or may be going */
        }
        if (cls < CCHT_CLS_LARGE && cudis_load_relaxed_u32(&a->pool->nfree) > 0 &&
            ccht_pool_room(a->pool)) {
            continue; /* a page came back since the allocation above (another reclaim) */
        }
        if (attempt >= 8) {
            uint64_t t = cudis_hd_now_ns();
            if (deadline == 0) {
                deadline = t + CCHT_WAIT_NS;
            } else if (t > deadline) {
                return CCHT_NO_CHUNK;
            }
            ccht_backoff(&spins);
        }
        if (cls >= CCHT_CLS_LARGE) {
            if (ccht_spin_trylock(&a->pool->move_lock)) {
                off = ccht_claim_run(T, cls - CCHT_CLS_LARGE, m);
                ccht_spin_unlock(&a->pool->move_lock);
                if (off != CCHT_NO_CHUNK) {
                    return off;
                }
                barren++;
            }
            continue;
        }
        if (cudis_load_relaxed_u32(&a->cls[cls].n_pages) == 0) {
            barren += ccht_move_page(T, cls, UINT32_MAX, m) ? 0 : 1;
            continue;
        }
        uint32_t ev = cudis_fetch_add_u32(&a->cls[cls].evictions, 1);
        uint32_t age = 0;
        bool none = false;
        bool got = ccht_evict_in_class(T, cls, m, &off, &age, &none);
        bool moved = false;
        if (ev % CCHT_MOVE_EVERY == 0 || (!got && (attempt >= 8 || (keeps && none)))) {
            moved = ccht_move_page(T, cls, got ? age : 0, m);
        }
        if (got) {
            return off;
        }
        barren += none && !moved ? 1 : 0;
    }
}

#endif /* CCHT_ARENA_H */
