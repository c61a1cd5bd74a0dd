/*
 * ccht_internal.h - private structures of the host CCHT: the table, the
 * size-classed slab arena (ccht_arena.c) and the per-call context that
 * gathers statistics.
 */
#ifndef CCHT_INTERNAL_H
#define CCHT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ccht.h"
#include "ccht_bucket.h"
#include "ccht_layout.h"

#define CCHT_NONE32 0xffffffffu
#define CCHT_MAX_CLASSES 160
#define CCHT_SAMPLE 8          /* chunks sampled per memory eviction */
#define CCHT_DRAIN_EVERY 32    /* consider moving a page every this many evictions */

/* One size class of the arena. Fields after `lock` are guarded by it
 * (n_pages and size/per_page may be read without it). */
typedef struct ccht_class {
    uint32_t lock;        /* spinlock */
    uint32_t size;        /* chunk bytes (multiple of 8) */
    uint32_t per_page;    /* chunks per page */
    uint32_t carve_page;  /* page being carved, or CCHT_NONE32 */
    uint32_t carve_next;  /* next chunk to carve in carve_page */
    uint32_t n_pages;     /* pages owned (atomic reads) */
    uint32_t page_head;   /* owned pages, linked by page_next */
    uint32_t hand_page;   /* sampling hand: page and chunk */
    uint32_t hand_chunk;
    uint32_t evictions;   /* memory evictions (pacing page moves) */
    uint64_t free_head;   /* arena offset + 1 of the first free chunk (0 = none) */
    uint8_t pad[16];
} ccht_class;

/* Statistics a call accumulates, added to the table at its end. */
typedef struct ccht_ctx {
    int64_t items, key_bytes, value_bytes;
    uint64_t hits, misses, evict_bucket, evict_memory, evict_expired;
    int64_t now_ms; /* the call's clock (expiry) */
    uint32_t rng;
} ccht_ctx;

struct ccht {
    ccht_view v;
    ccht_options opt;
    uint64_t page_bytes;
    uint32_t n_pages;
    uint32_t n_classes;
    uint32_t stamp_slack;
    uint64_t index_bytes;     /* buckets + metadata: always in use */
    uint64_t max_item;        /* largest item a chunk can hold */
    void *mem_index;          /* allocations backing v.buckets / v.arena */
    void *mem_arena;

    /* arena pages */
    uint32_t *page_class;     /* class of each page, CCHT_NONE32 if free */
    uint32_t *page_carved;    /* chunks carved in each page */
    uint32_t *page_next;      /* class page lists */
    uint8_t *page_draining;
    uint32_t pool_lock;
    uint32_t pool_next;       /* pages never used start here */
    uint32_t pool_nfree;      /* stack of returned pages */
    uint32_t *pool_free;
    uint32_t drain_lock;
    uint32_t pages_used;      /* pages owned by classes (atomic) */
    ccht_class classes[CCHT_MAX_CLASSES];

    /* shared counters (atomics) */
    uint64_t clock __attribute__((aligned(64)));
    uint64_t sweep_cursor;
    uint64_t items __attribute__((aligned(64)));
    uint64_t key_bytes, value_bytes;
    uint64_t hits __attribute__((aligned(64)));
    uint64_t misses;
    uint64_t evict_bucket, evict_memory, evict_expired;
};

/* ---- arena (ccht_arena.c) ---- */

/* Lay out pages and size classes; returns 0 or CUDIS_E_NOMEM. */
int ccht_arena_init(ccht *t);
void ccht_arena_deinit(ccht *t);
/* Forget every chunk (flush). */
void ccht_arena_reset(ccht *t);
/* Class for an item of `size` bytes, or -1 when bigger than a page. */
int ccht_arena_class(const ccht *t, uint64_t size);
/* A chunk of class cls without evicting (h0 = RESV). 0 or CUDIS_E_NOMEM. */
int ccht_arena_alloc(ccht *t, uint32_t cls, uint64_t *off);
/* A chunk of class cls, evicting by sampled recency or moving a page from
 * another class when needed. Caller holds NO bucket lock. 0 or CUDIS_E_FULL. */
int ccht_arena_alloc_slow(ccht *t, uint32_t cls, uint64_t *off, ccht_ctx *cx);
/* Return a chunk (its slot no longer refers to it). */
void ccht_arena_free(ccht *t, uint64_t off);
/* Bytes of the arena in use (whole pages). */
uint64_t ccht_arena_bytes_used(const ccht *t);

/* spinlock helpers shared by the arena and the table */
void ccht_spin_lock(uint32_t *l);
bool ccht_spin_trylock(uint32_t *l);
void ccht_spin_unlock(uint32_t *l);

/* Remove the item at `off` from the index if a slot still refers to it
 * (locks its bucket pair; caller holds no bucket lock). Counts it as a
 * memory eviction (or expired reclaim). Returns true if removed; the chunk
 * is then the caller's to free. */
bool ccht_unlink_chunk(ccht *t, uint64_t off, int64_t now_ms, ccht_ctx *cx);
/* Age (clock - stamp) of the item at `off`, or false when not indexed. */
bool ccht_chunk_age(ccht *t, uint64_t off, int64_t now_ms, uint32_t *age);
/* Current stamp of the logical clock. */
uint32_t ccht_now_stamp(ccht *t);

#endif /* CCHT_INTERNAL_H */
