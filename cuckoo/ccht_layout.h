/*
 * ccht_layout.h - memory layout of the double-LRU cache cuckoo hash table
 * (CCHT), shared by the host engine (cuckoo/) and the CUDA engine (kernels/).
 *
 * Plain C, no pointers inside the structures: everything is addressed by an
 * offset from a base pointer held in a ccht_view, so the same bytes can live
 * in host memory or in device memory.
 *
 * Index: n_buckets buckets of CCHT_BUCKET_BYTES(ways) bytes each (ways = 4, 8
 * or 16 -> 64, 128, 256 bytes; while the host engine resizes it, a second
 * index beside it: ccht_view), laid out as
 *     uint64_t version;           lock bit 0 + counter (a seqlock)
 *     uint64_t slot[ways];        0 = empty, else a slot word (below)
 *     uint32_t stamp[ways];       recency stamp of each slot (logical clock)
 *     uint16_t ghost[ways];       allkeys-cudis's ghost tags (ccht_bucket.h)
 *     padding to the bucket size
 * The version is odd while a writer holds the bucket; unlocking adds one more,
 * so every write section moves it by 2 and an optimistic reader that saw an
 * even version v and sees v again afterwards read a stable bucket.
 *
 * Slot word (published with one atomic store):
 *     bits 63..49  fingerprint (15 bits of the key's hash)
 *     bit  48      the item has an expiry (so full buckets only read the
 *                  headers of items that can expire)
 *     bits 47..0   item reference: (chunk offset in the arena / 8) + 1
 *
 * Arena: arena_bytes bytes split into pages of page_bytes; each page is
 * either free, carved into equal chunks of one size class, or part of a
 * run of whole pages holding one large item (bigger than a page). A chunk
 * holds an item:
 *     uint32_t h0;                state + flags + database + type + key length (below)
 *     uint32_t val_len;
 *     int64_t  expire_ms;         only when CCHT_ITEM_EXP is set
 *     key bytes, then value bytes (no padding between them)
 * So an item without expiry costs 8 bytes of header, 16 with one. A free
 * chunk keeps h0 = 0 (state FREE) and the free-list link at offset 8.
 *
 * Arena metadata (ccht_arena.h runs the algorithm over it): one ccht_class
 * per size class (CCHT_SHARDS free lists, each behind its own spinlock),
 * one ccht_pool (free pages, the page-move lock, counters), and per page
 * its class (or CCHT_PG_*), a run length for large items, a draining flag
 * and its place in the pool's stack. The table's counters (CCHT_C_*)
 * follow. Everything is plain words: the same bytes work in host memory
 * (engine cpu) and device memory (engine gpu).
 */
#ifndef CCHT_LAYOUT_H
#define CCHT_LAYOUT_H

#include <stdint.h>

#include "cudis_hd.h"

/* ------------------------------------------------------------------------
 * Buckets
 * ---------------------------------------------------------------------- */

#define CCHT_MAX_WAYS 16
#define CCHT_BUCKET_BYTES(ways) ((uint32_t)(ways) * 16u) /* 4->64, 8->128, 16->256 */
#define CCHT_BKT_VERSION_OFF 0u
#define CCHT_BKT_SLOTS_OFF 8u
#define CCHT_BKT_STAMPS_OFF(ways) (8u + 8u * (uint32_t)(ways))
#define CCHT_BKT_GHOST_OFF(ways) (8u + 12u * (uint32_t)(ways)) /* 14 x ways + 8 <= 16 x ways */

#define CCHT_VER_LOCK 1ull /* version bit 0: a writer holds the bucket */

/* ------------------------------------------------------------------------
 * Slot words
 * ---------------------------------------------------------------------- */

#define CCHT_SLOT_FP_SHIFT 49
#define CCHT_SLOT_FP_MASK 0x7fffull
#define CCHT_SLOT_EXP (1ull << 48)
#define CCHT_SLOT_REF_MASK ((1ull << 48) - 1)

/* Slot word for the item at arena offset `off` (a multiple of 8). */
CUDIS_HD static inline uint64_t ccht_slot_make(uint32_t fp, uint64_t off, int has_exp)
{
    return ((uint64_t)(fp & CCHT_SLOT_FP_MASK) << CCHT_SLOT_FP_SHIFT) |
           (has_exp ? CCHT_SLOT_EXP : 0) | ((off >> 3) + 1);
}

CUDIS_HD static inline uint32_t ccht_slot_fp(uint64_t w)
{
    return (uint32_t)((w >> CCHT_SLOT_FP_SHIFT) & CCHT_SLOT_FP_MASK);
}

/* Arena offset of the item a (non-zero) slot word refers to. */
CUDIS_HD static inline uint64_t ccht_slot_off(uint64_t w)
{
    return ((w & CCHT_SLOT_REF_MASK) - 1) << 3;
}

/* ------------------------------------------------------------------------
 * Item headers
 * ---------------------------------------------------------------------- */

#define CCHT_ITEM_LIVE 0x80000000u   /* published (or about to be) item */
#define CCHT_ITEM_RESV 0x40000000u   /* allocated, being written, not yet published */
#define CCHT_ITEM_EXP 0x20000000u    /* an int64 expire_ms follows val_len */
#define CCHT_DBS 256                 /* databases (= CUDIS_MAX_DBS) */
#define CCHT_ITEM_DB_SHIFT 21        /* bits 28..21: the key's database */
#define CCHT_ITEM_DB_MASK 0x1fe00000u
#define CCHT_ITEM_TYPE_SHIFT 18 /* bits 20..18: the value's enum cudis_type */
#define CCHT_ITEM_TYPE_MASK 0x001c0000u
#define CCHT_ITEM_KLEN_MASK 0x0003ffffu /* keys up to 256 KiB - 1 */
#define CCHT_ITEM_HDR 8u             /* header bytes without expiry */
#define CCHT_ITEM_HDR_EXP 16u        /* with expiry */

/* Header bytes of an item, with or without expiry. */
CUDIS_HD static inline uint32_t ccht_item_hdr(int has_exp)
{
    return has_exp ? CCHT_ITEM_HDR_EXP : CCHT_ITEM_HDR;
}

/* Total chunk bytes an item needs. */
CUDIS_HD static inline uint64_t ccht_item_size(uint32_t key_len, uint32_t val_len, int has_exp)
{
    return (uint64_t)ccht_item_hdr(has_exp) + key_len + val_len;
}

/* ------------------------------------------------------------------------
 * The view: where a table's index and arena are. Host and device code take
 * it by value or const pointer; it holds no ownership.
 * ---------------------------------------------------------------------- */

typedef struct ccht_view {
    uint8_t *buckets;      /* n_buckets * bucket_bytes, 64-byte aligned */
    uint8_t *arena;        /* arena_bytes, 8-byte aligned chunks */
    uint64_t n_buckets;    /* any value >= 1 (fastrange, not a mask) */
    /* A resize in progress (host engine; ccht.c): the new index of rs_n
     * buckets (twice or half n_buckets), numbered n_buckets.. after the old
     * ones; the items of old buckets [0, rs_done) have moved to it. rs_n = 0
     * (and rs_done = 0): no resize. */
    uint8_t *rs_buckets;
    uint64_t rs_n;
    uint64_t rs_done;
    uint64_t arena_bytes;
    uint64_t seed;         /* cudis_hash seed (database 0; ccht_db_seed) */
    uint64_t *db_items;    /* items per database 1.. (database 0: the rest); NULL: none */
    uint64_t *db_volatile; /* and those with an expiry (CCHT_C_VOLATILE's split) */
    uint64_t *vmap;        /* buckets that may hold an item with an expiry (cudis_vmap.h) */
    uint64_t vmap_words;   /* its bit words (the count follows them) */
    uint32_t ways;         /* 4, 8 or 16 */
    uint32_t bucket_bytes; /* CCHT_BUCKET_BYTES(ways) */
} ccht_view;

/* Where a key may live: its two candidate buckets and its fingerprint. */
typedef struct ccht_hkey {
    uint64_t b1, b2; /* may be equal (a key with one bucket: 1 in n_buckets) */
    uint32_t fp;
} ccht_hkey;

/* A slot found by a probe. */
typedef struct ccht_loc {
    uint64_t bucket; /* bucket index */
    uint32_t way;    /* slot index in the bucket */
    uint64_t word;   /* the slot word seen */
} ccht_loc;

/* ------------------------------------------------------------------------
 * Arena metadata
 * ---------------------------------------------------------------------- */

#define CCHT_SHARDS 64        /* free lists per class (one bit each in nonempty) */
#define CCHT_MAX_CLASSES 160
#define CCHT_RING 16          /* pages a class received lately (victim sampling) */
#define CCHT_NONE32 0xffffffffu
#define CCHT_NO_CHUNK UINT64_MAX

/* page_class values that are not a size class */
#define CCHT_PG_FREE 0xffffffffu   /* in the pool */
#define CCHT_PG_LARGE 0xfffffffeu  /* first page of a large item (page_run = its pages) */
#define CCHT_PG_CONT 0xfffffffdu   /* a later page of a large item */
#define CCHT_PG_MOVING 0xfffffffcu /* claimed by a page move in progress */

/* A chunk's class as the allocator names it: a size class below
 * CCHT_CLS_LARGE, or CCHT_CLS_LARGE + n for a run of n pages. */
#define CCHT_CLS_LARGE 0x80000000u

/* One free list: 32 bytes (one device L2 sector). */
typedef struct ccht_shard {
    uint32_t lock;
    uint32_t nfree; /* chunks on the list (under lock) */
    uint64_t head;  /* arena offset + 1 of the first free chunk, 0 = empty */
    uint64_t pad2_[2];
} ccht_shard;

typedef struct ccht_class {
    uint32_t size;      /* chunk bytes (multiple of 8) */
    uint32_t per_page;  /* chunks per page */
    uint32_t grow_lock; /* one thread carves a new page at a time */
    uint32_t n_pages;   /* pages owned */
    uint64_t nonempty;  /* bit s: shard s probably has a free chunk */
    uint32_t evictions; /* memory evictions (paces page moves) */
    uint32_t ring_pos;
    uint32_t ring[CCHT_RING]; /* pages received lately (CCHT_NONE32 = none) */
    uint8_t pad_[32];
    ccht_shard shard[CCHT_SHARDS];
} ccht_class;

typedef struct ccht_pool {
    uint32_t lock;       /* guards the stack and page_pos */
    uint32_t move_lock;  /* one page move (drain, large-run assembly) at a time */
    uint32_t nfree;      /* pages on the stack */
    uint32_t pages_used; /* pages owned by classes, large items or moves */
    uint32_t hint;       /* where the next search for a free run starts */
    uint32_t limit;      /* most pages in use (CONFIG SET maxmemory below the
                          * creation budget lowers it; the sweep gives back
                          * pages while pages_used is above it) */
    uint32_t high;       /* 1 + the highest page ever taken (the stack hands out
                          * low pages first): samples of pages in use look below it */
    uint32_t reclaim_at; /* free-chunk slack in pages the last reclaim left (ccht_reclaim) */
    uint32_t pad_[24];
} ccht_pool;

/* Table counters (uint64 each; gauges are signed deltas added as uint64). */
enum ccht_counter {
    CCHT_C_HITS = 0,
    CCHT_C_MISSES,
    CCHT_C_EVICT_BUCKET,
    CCHT_C_EVICT_MEMORY,
    CCHT_C_EVICT_EXPIRED,
    CCHT_C_FULL, /* writes that failed for lack of memory */
    CCHT_C_ITEMS,
    CCHT_C_KEY_BYTES,
    CCHT_C_VAL_BYTES,
    CCHT_C_CHUNK_BYTES, /* arena bytes the live items' chunks take (class sizes, whole pages) */
    CCHT_C_VOLATILE,    /* items with an expiry (expired ones not yet reclaimed count) */
    CCHT_C__COUNT
};
#define CCHT_C_FIRST_GAUGE CCHT_C_ITEMS

/* Where the arena's metadata is (pointers into the table's memory) and its
 * geometry; by value in every ccht_table. */
typedef struct ccht_arena {
    uint8_t *base;        /* = the view's arena */
    uint64_t page_bytes;  /* a power of two */
    uint32_t page_shift;  /* log2(page_bytes) */
    uint32_t n_pages;
    uint32_t n_classes;
    uint32_t pad_;
    ccht_class *cls;      /* n_classes */
    ccht_pool *pool;
    uint32_t *page_class; /* n_pages: class or CCHT_PG_* */
    uint32_t *page_run;   /* n_pages: pages of the large item starting here */
    uint32_t *page_drain; /* n_pages: 1 while a move empties the page */
    uint32_t *page_pos;   /* n_pages: index on the pool's stack, CCHT_NONE32 if not there */
    uint32_t *pool_stack; /* n_pages: free pages, top at nfree - 1 */
    uint32_t class_size[CCHT_MAX_CLASSES]; /* copy of cls[i].size (no memory load to classify) */
} ccht_arena;

/* A whole table: index, arena, counters and limits. Passed by value to
 * kernels and by pointer on the host; it owns nothing. */
typedef struct ccht_table {
    ccht_view v;
    ccht_arena a;
    uint64_t *cnt;        /* CCHT_C__COUNT counters */
    uint64_t *clock;      /* the logical clock (host engine; the device engine keeps its own) */
    uint32_t max_key_len;
    uint32_t max_val_len;
    uint32_t allow_empty_key;
    uint32_t stamp_slack; /* skip a stamp refresh younger than this many ticks */
    uint32_t policy;      /* enum cudis_policy (ccht_policy_of reads it) */
    uint32_t lfu_log_factor; /* the LFU policies' counter: Redis's lfu-log-factor */
    uint32_t lfu_decay_time; /* and lfu-decay-time (minutes; 0: no decay) */
} ccht_table;

#endif /* CCHT_LAYOUT_H */
