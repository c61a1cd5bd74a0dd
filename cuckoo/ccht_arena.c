/*
 * ccht_arena.c - the CCHT's value arena: pages carved into size-classed
 * chunks, and the second LRU level that frees memory when a class runs out.
 *
 * Pages (page_bytes each) come from a pool; a class carves its pages lazily
 * into chunks and keeps freed chunks on a free list linked through the
 * chunks (link at offset 8, h0 = 0 marks a free chunk). When a class has no
 * free chunk and the pool no page:
 *   - sampled eviction: take CCHT_SAMPLE consecutive chunks at the class's
 *     clock hand, look up each one's recency stamp in the index and evict the
 *     oldest (expired items count as oldest). The hand sweeps the class's
 *     pages, so over time every chunk is sampled: an approximation of global
 *     LRU within the class;
 *   - page moves: when the class owns no page, or every CCHT_DRAIN_EVERY
 *     evictions, sample pages of other classes and, if one looks colder than
 *     the class's own victims, evict everything in it and return it to the
 *     pool. So a shift in value sizes never wedges the table, and memory
 *     follows the workload.
 *
 * Locks: one spinlock per class (guards its free list, carve position, page
 * list and hand), one for the pool, one "drain" lock (one page move at a
 * time). Order: drain > bucket pairs > class > pool. Callers of the slow path
 * hold no bucket lock, so evictions may lock any bucket pair.
 */
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ccht_internal.h"
#include "cudis_err.h"
#include "cudis_time.h"

/* ------------------------------------------------------------------------
 * Spinlocks
 * ---------------------------------------------------------------------- */

bool ccht_spin_trylock(uint32_t *l)
{
    uint32_t e = 0;
    return __atomic_load_n(l, __ATOMIC_RELAXED) == 0 &&
           __atomic_compare_exchange_n(l, &e, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void ccht_spin_lock(uint32_t *l)
{
    unsigned n = 0;
    while (!ccht_spin_trylock(l)) {
        if (++n >= 128) {
            sched_yield();
            n = 0;
        } else {
            CCHT_PAUSE();
        }
    }
}

void ccht_spin_unlock(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------------
 * Layout
 * ---------------------------------------------------------------------- */

static uint32_t ld32(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void st32(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static uint32_t *chunk_h0(ccht *t, uint64_t off)
{
    return (uint32_t *)(t->v.arena + off);
}

static uint64_t *chunk_link(ccht *t, uint64_t off)
{
    return (uint64_t *)(t->v.arena + off + 8);
}

int ccht_arena_init(ccht *t)
{
    uint32_t n = 0;
    /* Fine classes (8-byte steps to 128, then x1.125) when pages are
     * plentiful; with few pages, fewer and coarser classes (at most a
     * quarter as many classes as pages, at least 8), so that the classes in
     * use do not outnumber the pages. */
    uint32_t target = t->n_pages / 4;
    if (target >= 100) {
        uint64_t sz = 16;
        while (sz <= 128 && sz <= t->page_bytes) {
            t->classes[n++].size = (uint32_t)sz;
            sz += 8;
        }
        sz = 128;
        while (n < CCHT_MAX_CLASSES - 1) {
            uint64_t next = (sz * 9 / 8 + 7) & ~7ull;
            if (next >= t->page_bytes) {
                break;
            }
            t->classes[n++].size = (uint32_t)next;
            sz = next;
        }
    } else {
        if (target < 8) {
            target = 8;
        }
        double f = pow((double)t->page_bytes / 16.0, 1.0 / (double)(target - 1));
        double x = 16;
        uint64_t prev = 0;
        while (n < CCHT_MAX_CLASSES - 1) {
            uint64_t sz = ((uint64_t)x + 7) & ~7ull;
            if (sz >= t->page_bytes) {
                break;
            }
            if (sz > prev) {
                t->classes[n++].size = (uint32_t)sz;
                prev = sz;
            }
            x *= f;
        }
    }
    if (n == 0 || t->classes[n - 1].size < t->page_bytes) {
        t->classes[n++].size = (uint32_t)t->page_bytes;
    }
    t->n_classes = n;
    size_t np = t->n_pages;
    t->page_class = malloc(np * sizeof(uint32_t));
    t->page_carved = calloc(np, sizeof(uint32_t));
    t->page_next = malloc(np * sizeof(uint32_t));
    t->page_draining = calloc(np, 1);
    t->pool_free = malloc(np * sizeof(uint32_t));
    if (!t->page_class || !t->page_carved || !t->page_next || !t->page_draining ||
        !t->pool_free) {
        ccht_arena_deinit(t);
        return CUDIS_E_NOMEM;
    }
    ccht_arena_reset(t);
    return CUDIS_OK;
}

void ccht_arena_deinit(ccht *t)
{
    free(t->page_class);
    free(t->page_carved);
    free(t->page_next);
    free(t->page_draining);
    free(t->pool_free);
    t->page_class = NULL;
    t->page_carved = NULL;
    t->page_next = NULL;
    t->page_draining = NULL;
    t->pool_free = NULL;
}

void ccht_arena_reset(ccht *t)
{
    for (uint32_t p = 0; p < t->n_pages; p++) {
        t->page_class[p] = CCHT_NONE32;
        t->page_carved[p] = 0;
        t->page_next[p] = CCHT_NONE32;
        t->page_draining[p] = 0;
    }
    t->pool_next = 0;
    t->pool_nfree = 0;
    t->pages_used = 0;
    for (uint32_t c = 0; c < t->n_classes; c++) {
        ccht_class *k = &t->classes[c];
        k->lock = 0;
        k->per_page = (uint32_t)(t->page_bytes / k->size);
        k->carve_page = CCHT_NONE32;
        k->carve_next = 0;
        k->n_pages = 0;
        k->page_head = CCHT_NONE32;
        k->hand_page = CCHT_NONE32;
        k->hand_chunk = 0;
        k->evictions = 0;
        k->free_head = 0;
    }
}

int ccht_arena_class(const ccht *t, uint64_t size)
{
    if (size > t->page_bytes) {
        return -1;
    }
    if (size <= 128) {
        uint32_t c = size <= 16 ? 0 : (uint32_t)((size + 7) / 8 - 2);
        if (c < t->n_classes && t->classes[c].size >= size &&
            (c == 0 || t->classes[c - 1].size < size)) {
            return (int)c;
        }
    }
    uint32_t lo = 0, hi = t->n_classes - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (t->classes[mid].size >= size) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return (int)lo;
}

uint64_t ccht_arena_bytes_used(const ccht *t)
{
    return (uint64_t)__atomic_load_n(&t->pages_used, __ATOMIC_RELAXED) * t->page_bytes;
}

/* ------------------------------------------------------------------------
 * Pool of pages
 * ---------------------------------------------------------------------- */

static uint32_t pool_take(ccht *t)
{
    uint32_t p = CCHT_NONE32;
    ccht_spin_lock(&t->pool_lock);
    if (t->pool_nfree > 0) {
        p = t->pool_free[--t->pool_nfree];
    } else if (ld32(&t->pool_next) < t->n_pages) {
        p = t->pool_next;
        st32(&t->pool_next, p + 1);
    }
    ccht_spin_unlock(&t->pool_lock);
    if (p != CCHT_NONE32) {
        __atomic_fetch_add(&t->pages_used, 1, __ATOMIC_RELAXED);
    }
    return p;
}

static void pool_put(ccht *t, uint32_t p)
{
    ccht_spin_lock(&t->pool_lock);
    t->pool_free[t->pool_nfree++] = p;
    ccht_spin_unlock(&t->pool_lock);
    __atomic_fetch_sub(&t->pages_used, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
 * Allocation and free
 * ---------------------------------------------------------------------- */

int ccht_arena_alloc(ccht *t, uint32_t cls, uint64_t *off)
{
    ccht_class *k = &t->classes[cls];
    uint64_t o;
    ccht_spin_lock(&k->lock);
    if (k->free_head != 0) {
        o = k->free_head - 1;
        k->free_head = cudis_load_relaxed_u64(chunk_link(t, o));
    } else if (k->carve_page != CCHT_NONE32 && k->carve_next < k->per_page) {
        o = (uint64_t)k->carve_page * t->page_bytes + (uint64_t)k->carve_next * k->size;
        k->carve_next++;
        st32(&t->page_carved[k->carve_page], k->carve_next);
    } else {
        uint32_t p = pool_take(t);
        if (p == CCHT_NONE32) {
            ccht_spin_unlock(&k->lock);
            return CUDIS_E_NOMEM;
        }
        st32(&t->page_class[p], cls);
        st32(&t->page_carved[p], 1);
        t->page_draining[p] = 0;
        t->page_next[p] = k->page_head;
        k->page_head = p;
        st32(&k->n_pages, k->n_pages + 1);
        k->carve_page = p;
        k->carve_next = 1;
        o = (uint64_t)p * t->page_bytes;
    }
    cudis_store_relaxed_u32(chunk_h0(t, o), CCHT_ITEM_RESV);
    ccht_spin_unlock(&k->lock);
    *off = o;
    return CUDIS_OK;
}

/* Free with the class lock held. */
static void do_free(ccht *t, ccht_class *k, uint32_t page, uint64_t off)
{
    if (t->page_draining[page]) {
        cudis_store_rel_u32(chunk_h0(t, off), 0); /* the drainer is waiting for this */
        return;
    }
    cudis_store_relaxed_u32(chunk_h0(t, off), 0);
    cudis_store_relaxed_u64(chunk_link(t, off), k->free_head);
    k->free_head = off + 1;
}

void ccht_arena_free(ccht *t, uint64_t off)
{
    uint32_t page = (uint32_t)(off / t->page_bytes);
    ccht_class *k = &t->classes[ld32(&t->page_class[page])];
    ccht_spin_lock(&k->lock);
    do_free(t, k, page, off);
    ccht_spin_unlock(&k->lock);
}

/* ------------------------------------------------------------------------
 * Second LRU level: sampled eviction within a class
 * ---------------------------------------------------------------------- */

static uint32_t rng_next(uint32_t *s)
{
    uint32_t x = *s ? *s : 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return x;
}

/* Up to n chunk offsets at the class's hand (advancing it). */
static uint32_t sample_hand(ccht *t, uint32_t cls, uint64_t *out, uint32_t n)
{
    ccht_class *k = &t->classes[cls];
    uint32_t got = 0, steps = 0;
    ccht_spin_lock(&k->lock);
    while (got < n && steps++ < 4 * n + 8) {
        if (k->hand_page == CCHT_NONE32) {
            k->hand_page = k->page_head;
            k->hand_chunk = 0;
            if (k->hand_page == CCHT_NONE32) {
                break;
            }
        }
        uint32_t p = k->hand_page;
        uint32_t carved = p == k->carve_page ? k->carve_next : ld32(&t->page_carved[p]);
        if (k->hand_chunk >= carved) {
            k->hand_page = t->page_next[p];
            k->hand_chunk = 0;
            continue;
        }
        out[got++] = (uint64_t)p * t->page_bytes + (uint64_t)k->hand_chunk * k->size;
        k->hand_chunk++;
    }
    ccht_spin_unlock(&k->lock);
    return got;
}

/* Evict the oldest of a sample of class cls and keep its chunk (h0 = RESV).
 * *age gets the victim's age. Returns true with *off on success. */
static bool sample_evict(ccht *t, uint32_t cls, uint64_t *off, uint32_t *age, ccht_ctx *cx)
{
    uint64_t cand[CCHT_SAMPLE];
    uint32_t n = sample_hand(t, cls, cand, CCHT_SAMPLE);
    uint64_t best = 0;
    uint32_t best_age = 0;
    bool have = false;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a;
        uint32_t h0 = cudis_load_acq_u32(chunk_h0(t, cand[i]));
        if ((h0 & CCHT_ITEM_LIVE) && ccht_chunk_age(t, cand[i], cx->now_ms, &a) &&
            (!have || a > best_age)) {
            have = true;
            best = cand[i];
            best_age = a;
        }
    }
    *age = best_age;
    if (!have || !ccht_unlink_chunk(t, best, cx->now_ms, cx)) {
        return false;
    }
    uint32_t page = (uint32_t)(best / t->page_bytes);
    ccht_class *k = &t->classes[ld32(&t->page_class[page])];
    bool mine = false;
    ccht_spin_lock(&k->lock);
    if (ld32(&t->page_class[page]) == cls && !t->page_draining[page]) {
        cudis_store_relaxed_u32(chunk_h0(t, best), CCHT_ITEM_RESV);
        mine = true;
    } else {
        do_free(t, k, page, best);
    }
    ccht_spin_unlock(&k->lock);
    *off = best;
    return mine;
}

/* ------------------------------------------------------------------------
 * Page moves
 * ---------------------------------------------------------------------- */

/* Sampled age of a page: the youngest of a few of its live items (a page
 * with no live item sampled is as old as can be). */
static uint32_t page_age(ccht *t, uint32_t page, uint32_t cls, ccht_ctx *cx)
{
    uint32_t carved = ld32(&t->page_carved[page]);
    uint32_t youngest = UINT32_MAX;
    if (carved == 0) {
        return youngest;
    }
    for (int i = 0; i < 4; i++) {
        uint64_t off = (uint64_t)page * t->page_bytes +
                       (uint64_t)(rng_next(&cx->rng) % carved) * t->classes[cls].size;
        uint32_t a;
        uint32_t h0 = cudis_load_acq_u32(chunk_h0(t, off));
        if ((h0 & CCHT_ITEM_LIVE) && ccht_chunk_age(t, off, cx->now_ms, &a) && a < youngest) {
            youngest = a;
        }
    }
    return youngest;
}

/* Put a partly drained page back into its class (a drain that gave up). */
static void undrain(ccht *t, uint32_t page, uint32_t d)
{
    ccht_class *k = &t->classes[d];
    ccht_spin_lock(&k->lock);
    t->page_draining[page] = 0;
    t->page_next[page] = k->page_head;
    k->page_head = page;
    st32(&k->n_pages, k->n_pages + 1);
    uint32_t carved = ld32(&t->page_carved[page]);
    for (uint32_t i = 0; i < carved; i++) {
        uint64_t off = (uint64_t)page * t->page_bytes + (uint64_t)i * k->size;
        if ((cudis_load_acq_u32(chunk_h0(t, off)) & (CCHT_ITEM_LIVE | CCHT_ITEM_RESV)) == 0) {
            do_free(t, k, page, off);
        }
    }
    ccht_spin_unlock(&k->lock);
}

/* Move a cold page of another class to the pool for class cls. `own_age`
 * is the age of cls's own eviction candidate (UINT32_MAX: cls owns nothing,
 * move whatever is coldest). Returns true when a page went to the pool. */
static bool drain_one(ccht *t, uint32_t cls, uint32_t own_age, ccht_ctx *cx)
{
    if (!ccht_spin_trylock(&t->drain_lock)) {
        return false;
    }
    uint32_t used = ld32(&t->pool_next);
    uint32_t victim = CCHT_NONE32, vage = 0, seen = 0;
    for (int tries = 0; tries < 32 && seen < 4 && used > 0; tries++) {
        uint32_t p = rng_next(&cx->rng) % used;
        uint32_t d = ld32(&t->page_class[p]);
        if (d == CCHT_NONE32 || d == cls) {
            continue;
        }
        seen++;
        uint32_t a = page_age(t, p, d, cx);
        if (victim == CCHT_NONE32 || a > vage) {
            victim = p;
            vage = a;
        }
    }
    if (victim == CCHT_NONE32 || (own_age != UINT32_MAX && vage < own_age)) {
        ccht_spin_unlock(&t->drain_lock);
        return false;
    }
    uint32_t d = ld32(&t->page_class[victim]);
    if (d == CCHT_NONE32 || d == cls) {
        ccht_spin_unlock(&t->drain_lock);
        return false;
    }
    ccht_class *k = &t->classes[d];

    /* Detach the page from its class. */
    ccht_spin_lock(&k->lock);
    if (ld32(&t->page_class[victim]) != d) {
        ccht_spin_unlock(&k->lock);
        ccht_spin_unlock(&t->drain_lock);
        return false;
    }
    t->page_draining[victim] = 1;
    uint32_t *pp = &k->page_head;
    while (*pp != victim) {
        pp = &t->page_next[*pp];
    }
    *pp = t->page_next[victim];
    st32(&k->n_pages, k->n_pages - 1);
    if (k->carve_page == victim) {
        st32(&t->page_carved[victim], k->carve_next);
        k->carve_page = CCHT_NONE32;
    }
    if (k->hand_page == victim) {
        k->hand_page = CCHT_NONE32;
    }
    uint64_t lo = (uint64_t)victim * t->page_bytes, hi = lo + t->page_bytes;
    uint64_t *link = &k->free_head;
    while (*link != 0) {
        uint64_t o = *link - 1;
        if (o >= lo && o < hi) {
            *link = cudis_load_relaxed_u64(chunk_link(t, o));
        } else {
            link = chunk_link(t, o);
        }
    }
    ccht_spin_unlock(&k->lock);

    /* Evict everything in it; wait for chunks other threads are writing. */
    uint32_t carved = ld32(&t->page_carved[victim]);
    for (uint32_t i = 0; i < carved; i++) {
        uint64_t off = lo + (uint64_t)i * k->size;
        uint32_t spins = 0;
        for (;;) {
            uint32_t h0 = cudis_load_acq_u32(chunk_h0(t, off));
            if ((h0 & (CCHT_ITEM_LIVE | CCHT_ITEM_RESV)) == 0) {
                break;
            }
            if ((h0 & CCHT_ITEM_LIVE) && ccht_unlink_chunk(t, off, cx->now_ms, cx)) {
                cudis_store_rel_u32(chunk_h0(t, off), 0);
                break;
            }
            if (++spins > 200000) {
                undrain(t, victim, d);
                ccht_spin_unlock(&t->drain_lock);
                return false;
            }
            sched_yield();
        }
    }
    st32(&t->page_class[victim], CCHT_NONE32);
    st32(&t->page_carved[victim], 0);
    t->page_draining[victim] = 0;
    pool_put(t, victim);
    ccht_spin_unlock(&t->drain_lock);
    return true;
}

int ccht_arena_alloc_slow(ccht *t, uint32_t cls, uint64_t *off, ccht_ctx *cx)
{
    /* Other threads may hold the drain lock, the candidates we sample, or
     * the chunks a page move waits for: keep trying (yielding) rather than
     * fail; give up only after about two seconds without success, which
     * takes chunks pinned for that long (none are, by construction). */
    ccht_class *k = &t->classes[cls];
    uint64_t deadline = 0;
    for (uint32_t attempt = 0;; attempt++) {
        if (ccht_arena_alloc(t, cls, off) == CUDIS_OK) {
            return CUDIS_OK;
        }
        if (attempt >= 8) {
            if (deadline == 0) {
                deadline = cudis_mono_ns() + 2000000000ull;
            } else if ((attempt & 63) == 0 && cudis_mono_ns() > deadline) {
                return CUDIS_E_FULL;
            }
            sched_yield();
        }
        if (ld32(&k->n_pages) == 0) {
            drain_one(t, cls, UINT32_MAX, cx);
            continue;
        }
        uint32_t ev = __atomic_fetch_add(&k->evictions, 1, __ATOMIC_RELAXED);
        uint32_t age = 0;
        bool got = sample_evict(t, cls, off, &age, cx);
        if (ev % CCHT_DRAIN_EVERY == 0 || (!got && attempt >= 8)) {
            drain_one(t, cls, got ? age : 0, cx);
        }
        if (got) {
            return CUDIS_OK;
        }
    }
}
