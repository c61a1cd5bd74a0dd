/*
 * gpu_dev.h - the device side of the CCHT that is not the bucket algorithm:
 * the table descriptor passed by value to every kernel, the launch
 * arguments, the statistics counters, and the value-arena allocator
 * (size classes, sharded lock-free free lists, page bump).
 *
 * Everything here is CUDIS_HD over plain memory, so the host compiler
 * builds it too and tests/kernels/ checks the allocator on the CPU. The
 * bucket algorithm itself (probe, lock, insert, evict) is cuckoo/'s
 * ccht_bucket.h, shared with the CPU engine.
 *
 * Arena allocator: size classes grow by ~1.25x from 64 bytes (multiples of
 * 16) up to the largest item. A class takes a page (page_bytes, or one chunk
 * when the chunk is larger) from the arena's bump pointer and carves it into
 * chunks; freed chunks go to the class's free list. Each class has
 * GPU_SHARDS lock-free stacks (tagged heads against ABA) so that thousands
 * of threads allocating at once spread over several words. Chunk layout
 * follows ccht_layout.h: a free chunk has h0 = 0 and its link at offset 8.
 * When the bump pointer reaches the end of the arena and the class's lists
 * are empty, allocation fails and the caller evicts (second LRU level).
 * page_class records each page's class, so a chunk's true size is known
 * even when it holds a smaller item (an item may use a chunk up to
 * GPU_CLASS_SLACK classes larger than its own: no class starves while
 * larger chunks are free).
 */
#ifndef GPU_DEV_H
#define GPU_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "ccht_layout.h"
#include "cudis_hd.h"
#include "cudis_op.h"

/* ------------------------------------------------------------------------
 * Counters (device memory; kernels add per block)
 * ---------------------------------------------------------------------- */

enum gpu_counter {
    GPU_C_HITS = 0,
    GPU_C_MISSES,
    GPU_C_EVICT_BUCKET,
    GPU_C_EVICT_MEMORY,
    GPU_C_EVICT_EXPIRED,
    GPU_C_ITEMS, /* gauges below: signed deltas added as uint64 */
    GPU_C_KEY_BYTES,
    GPU_C_VAL_BYTES,
    GPU_C_CHUNK_BYTES, /* chunk bytes held by live items */
    GPU_C_FULL,        /* writes that failed for lack of memory */
    GPU_C__COUNT
};

typedef struct gpu_counters {
    uint64_t c[GPU_C__COUNT];
} gpu_counters;

/* ------------------------------------------------------------------------
 * Allocator state (device memory)
 * ---------------------------------------------------------------------- */

#define GPU_MAX_CLASSES 64
#define GPU_SHARDS 64     /* at most 64: one bit each in gpu_alloc.nonempty */
#define GPU_HEAD_STRIDE 4 /* uint64 words per head: 32 bytes, one L2 sector each */
#define GPU_REF_BITS 40   /* head = tag << 40 | (offset / 8 + 1) */
#define GPU_REF_MASK ((1ull << GPU_REF_BITS) - 1)
#define GPU_NO_CHUNK UINT64_MAX
#define GPU_CLASS_SLACK 3u /* an item may take a chunk this many classes larger */

typedef struct gpu_alloc {
    uint64_t bump; /* arena bytes handed to classes so far */
    uint64_t pad_[7];
    /* per class, a hint of which shards' lists are non-empty (set after a
     * push onto an empty list, cleared after a pop empties one; a stale
     * clear only hides chunks until that shard's own threads pop them) */
    uint64_t nonempty[GPU_MAX_CLASSES];
    uint64_t head[GPU_MAX_CLASSES * GPU_SHARDS * GPU_HEAD_STRIDE];
} gpu_alloc;

/* ------------------------------------------------------------------------
 * The table descriptor: by value to every kernel
 * ---------------------------------------------------------------------- */

typedef struct gpu_table {
    ccht_view v;          /* buckets + arena in device memory */
    gpu_alloc *alloc;     /* device */
    gpu_counters *cnt;    /* device */
    uint32_t *page_class; /* device: class of the chunks carved from each page
                           * (a chunk larger than a page starts a run of whole
                           * pages; its first page holds the class) */
    uint64_t n_pages;
    uint32_t n_classes;
    uint32_t page_bytes;
    uint32_t class_size[GPU_MAX_CLASSES]; /* chunk bytes, ascending */
    uint32_t max_key_len;
    uint32_t max_val_len;
    uint32_t allow_empty_key;
    uint32_t stamp; /* recency stamp of this launch (logical clock) */
} gpu_table;

/* A mixed batch already in device memory. */
typedef struct gpu_batch_args {
    const cudis_op *ops;
    const uint8_t *in;
    cudis_result *res;
    uint8_t *out;
    uint64_t out_cap;
    uint64_t *out_len;
    uint32_t n_ops;
    int64_t now_ms;
} gpu_batch_args;

/* Fixed-width gets/sets (gpu_engine_get_dev / set_dev). */
typedef struct gpu_fixed_args {
    const uint8_t *keys;
    uint32_t key_len;
    uint32_t n;
    uint8_t *vals;       /* get: output rows; set: input rows */
    uint32_t val_stride; /* get: row bytes; set: value length */
    uint32_t *val_lens;  /* get: lengths or GPU_DEV_MISS (may be NULL) */
    uint32_t *miss;      /* get: miss list (may be NULL) */
    uint32_t *n_miss;
    int32_t *status;   /* set: per-op status (may be NULL) */
    int64_t expire_ms; /* set */
    int64_t now_ms;
} gpu_fixed_args;

/* One record of gpu_k_collect's output, 8-byte aligned, key bytes follow. */
typedef struct gpu_key_rec {
    uint32_t key_len;
    uint32_t rec_len; /* bytes of this record, header included */
    int64_t expire_ms;
} gpu_key_rec;

/* ------------------------------------------------------------------------
 * Size classes (host side fills gpu_table.class_size)
 * ---------------------------------------------------------------------- */

/*
 * Fill class sizes for items up to max_item bytes: 64, 80, 96 ... growing by
 * ~1.25x, multiples of 16. Returns the number of classes, or 0 when more
 * than GPU_MAX_CLASSES would be needed.
 */
CUDIS_HD static inline uint32_t gpu_classes_init(uint32_t *class_size, uint64_t max_item)
{
    uint64_t s = 64;
    uint32_t n = 0;
    for (;;) {
        if (n == GPU_MAX_CLASSES) {
            return 0;
        }
        if (s >= max_item) {
            class_size[n++] = (uint32_t)((max_item + 15) & ~15ull);
            return n;
        }
        class_size[n++] = (uint32_t)s;
        uint64_t next = (s * 5 / 4 + 15) & ~15ull;
        s = next > s + 16 ? next : s + 16;
    }
}

/* The smallest class whose chunks hold `bytes`, or n_classes if none. */
CUDIS_HD static inline uint32_t gpu_class_of(const gpu_table *t, uint64_t bytes)
{
    uint32_t lo = 0, hi = t->n_classes;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (t->class_size[mid] < bytes) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* ------------------------------------------------------------------------
 * Free lists and the bump pointer
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline uint64_t *gpu_head(const gpu_table *t, uint32_t cls, uint32_t shard)
{
    return &t->alloc->head[((uint64_t)cls * GPU_SHARDS + shard) * GPU_HEAD_STRIDE];
}

CUDIS_HD static inline uint64_t *gpu_chunk_link(const gpu_table *t, uint64_t off)
{
    return (uint64_t *)(t->v.arena + off + 8);
}

/* Set or clear bits of a hint mask (CAS loop; only on empty/non-empty
 * transitions of a list). */
CUDIS_HD static inline void gpu_mask_update(uint64_t *m, uint64_t bits, bool set)
{
    for (;;) {
        uint64_t old = cudis_load_relaxed_u64(m);
        uint64_t neu = set ? (old | bits) : (old & ~bits);
        if (neu == old || cudis_cas_u64(m, old, neu)) {
            return;
        }
    }
}

/* Push the chain first..last (linked through offset 8, last's link is
 * overwritten) onto a free list. */
CUDIS_HD static inline void gpu_push_chain(const gpu_table *t, uint32_t cls, uint32_t shard,
                                           uint64_t first, uint64_t last)
{
    uint64_t *h = gpu_head(t, cls, shard);
    for (;;) {
        uint64_t old = cudis_load_acq_u64(h);
        cudis_store_relaxed_u64(gpu_chunk_link(t, last), old & GPU_REF_MASK);
#if CUDIS_DEVICE_CODE
        __threadfence(); /* the link before the head (atomicCAS does not order) */
#endif
        uint64_t tag = (old >> GPU_REF_BITS) + 1;
        uint64_t neu = (tag << GPU_REF_BITS) | ((first >> 3) + 1);
        if (cudis_cas_u64(h, old, neu)) {
            if ((old & GPU_REF_MASK) == 0) {
                gpu_mask_update(&t->alloc->nonempty[cls], 1ull << shard, true);
            }
            return;
        }
    }
}

/* Pop one chunk: its arena offset, or GPU_NO_CHUNK when the list is empty. */
CUDIS_HD static inline uint64_t gpu_pop(const gpu_table *t, uint32_t cls, uint32_t shard)
{
    uint64_t *h = gpu_head(t, cls, shard);
    for (;;) {
        uint64_t old = cudis_load_acq_u64(h);
        uint64_t ref = old & GPU_REF_MASK;
        if (ref == 0) {
            return GPU_NO_CHUNK;
        }
        uint64_t off = (ref - 1) << 3;
        /* May read a link that a concurrent pop already handed out and its
         * new owner overwrote: the tag makes the CAS below fail then. */
        uint64_t next = cudis_load_relaxed_u64(gpu_chunk_link(t, off)) & GPU_REF_MASK;
        uint64_t tag = (old >> GPU_REF_BITS) + 1;
        if (cudis_cas_u64(h, old, (tag << GPU_REF_BITS) | next)) {
            if (next == 0) {
                gpu_mask_update(&t->alloc->nonempty[cls], 1ull << shard, false);
            }
            return off;
        }
    }
}

/* The class of the chunk at arena offset off (a chunk start). */
CUDIS_HD static inline uint32_t gpu_chunk_class(const gpu_table *t, uint64_t off)
{
    return cudis_load_relaxed_u32(&t->page_class[off / t->page_bytes]);
}

/* Give one chunk back to its class. */
CUDIS_HD static inline void gpu_free_chunk(const gpu_table *t, uint64_t off, uint32_t cls,
                                           uint32_t shard)
{
    cudis_store_relaxed_u32((uint32_t *)(t->v.arena + off), 0); /* h0 = FREE */
    gpu_push_chain(t, cls, shard % GPU_SHARDS, off, off);
}

/*
 * Allocate one chunk of class `cls`: the shard's list, then a fresh page
 * from the bump pointer (carved, the rest pushed to the shard), then the
 * other shards. Returns the arena offset or GPU_NO_CHUNK (memory full: the
 * caller evicts).
 */
CUDIS_HD static inline uint64_t gpu_alloc_chunk(const gpu_table *t, uint32_t cls, uint32_t shard)
{
    shard %= GPU_SHARDS;
    uint64_t off = gpu_pop(t, cls, shard);
    if (off != GPU_NO_CHUNK) {
        return off;
    }
    uint64_t size = t->class_size[cls];
    uint64_t page = t->page_bytes;
    uint64_t grab = size >= page ? (size + page - 1) / page * page : page;
    if (cudis_load_relaxed_u64(&t->alloc->bump) + grab <= t->v.arena_bytes) {
        uint64_t start = cudis_fetch_add_u64(&t->alloc->bump, grab);
        if (start + grab <= t->v.arena_bytes) {
            uint64_t n = grab / size;
            cudis_store_relaxed_u32(&t->page_class[start / page], cls);
            if (n > 1) {
                for (uint64_t i = 1; i + 1 < n; i++) {
                    uint64_t c = start + i * size;
                    cudis_store_relaxed_u32((uint32_t *)(t->v.arena + c), 0);
                    cudis_store_relaxed_u64(gpu_chunk_link(t, c), ((c + size) >> 3) + 1);
                }
                cudis_store_relaxed_u32((uint32_t *)(t->v.arena + start + (n - 1) * size), 0);
                gpu_push_chain(t, cls, shard, start + size, start + (n - 1) * size);
            }
            return start;
        }
    }
    /* other shards of this class, then slightly larger chunks: only the
     * lists the hint says are non-empty */
    for (uint32_t c = cls; c < t->n_classes && c <= cls + GPU_CLASS_SLACK; c++) {
        uint64_t m = cudis_load_relaxed_u64(&t->alloc->nonempty[c]);
        /* rotate so that threads start at different shards */
        m = (m >> shard) | (shard ? m << (GPU_SHARDS - shard) : 0);
        while (m != 0) {
            uint32_t k = 0;
            while (!((m >> k) & 1)) {
                k++;
            }
            m &= ~(1ull << k);
            off = gpu_pop(t, c, (shard + k) % GPU_SHARDS);
            if (off != GPU_NO_CHUNK) {
                return off;
            }
        }
    }
    return GPU_NO_CHUNK;
}

/* ------------------------------------------------------------------------
 * Layout: how a budget splits into index, arena and metadata (host code;
 * gpu_engine.c for device memory, tests for a host-memory table)
 * ---------------------------------------------------------------------- */

typedef struct gpu_layout {
    uint64_t index; /* bucket bytes (256-aligned) */
    uint64_t arena; /* n_pages * page_bytes */
    uint64_t meta;  /* allocator state + counters + page classes */
    uint64_t total; /* index + arena + meta <= budget */
} gpu_layout;

static inline uint64_t gpu_align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

/*
 * Fill t's geometry (everything but the pointers) for `budget` bytes and
 * the table options. Returns 0, or -1 with a reason in why when the budget
 * cannot hold a table.
 */
static inline int gpu_layout_plan(gpu_table *t, gpu_layout *l, uint64_t budget, uint32_t ways,
                                  uint64_t max_items, uint32_t expected_item_bytes,
                                  uint32_t max_key_len, uint32_t max_val_len, int allow_empty_key,
                                  uint64_t seed, const char **why)
{
    uint64_t fixed = gpu_align_up(sizeof(gpu_alloc), 256) + gpu_align_up(sizeof(gpu_counters), 256);
    uint64_t max_item = ccht_item_size(max_key_len, max_val_len, 1);
    t->n_classes = gpu_classes_init(t->class_size, max_item);
    if (t->n_classes == 0) {
        *why = "too many size classes for the largest item";
        return -1;
    }
    uint64_t bucket_bytes = CCHT_BUCKET_BYTES(ways);
    uint64_t n_buckets;
    if (max_items != 0) {
        n_buckets = (max_items + ways - 1) / ways;
    } else {
        uint64_t item = expected_item_bytes ? expected_item_bytes : 64;
        uint64_t chunk = t->class_size[gpu_class_of(t, ccht_item_size(0, (uint32_t)item, 0))];
        uint64_t per_item = bucket_bytes / ways + chunk;
        n_buckets = (budget > fixed ? (budget - fixed) / per_item : 0) / ways;
    }
    if (n_buckets < 2) {
        n_buckets = 2;
    }
    uint64_t index = gpu_align_up(n_buckets * bucket_bytes, 256);
    if (index + fixed + 256 + 2 * 4096 > budget) {
        *why = "memory budget too small for the index";
        return -1;
    }
    uint64_t rest = budget - index - fixed - 256;
    uint64_t page = 1u << 20; /* enough pages that every class can hold some memory */
    while (page > 4096 && page * 4 * t->n_classes > rest) {
        page /= 2;
    }
    uint64_t n_pages = rest / (page + sizeof(uint32_t));
    t->v.n_buckets = n_buckets;
    t->v.arena_bytes = n_pages * page;
    t->v.ways = ways;
    t->v.bucket_bytes = (uint32_t)bucket_bytes;
    t->v.seed = seed;
    t->page_bytes = (uint32_t)page;
    t->n_pages = n_pages;
    t->max_key_len = max_key_len;
    t->max_val_len = max_val_len;
    t->allow_empty_key = allow_empty_key ? 1 : 0;
    t->stamp = 1;
    l->index = index;
    l->arena = t->v.arena_bytes;
    l->meta = fixed + gpu_align_up(n_pages * sizeof(uint32_t), 256);
    l->total = l->index + l->arena + l->meta;
    return 0;
}

/* Point t into one zeroed block of l->total bytes: [index | arena | meta]. */
static inline void gpu_layout_bind(gpu_table *t, const gpu_layout *l, uint8_t *base)
{
    t->v.buckets = base;
    t->v.arena = base + l->index;
    t->alloc = (gpu_alloc *)(base + l->index + l->arena);
    t->cnt = (gpu_counters *)((uint8_t *)t->alloc + gpu_align_up(sizeof(gpu_alloc), 256));
    t->page_class = (uint32_t *)((uint8_t *)t->cnt + gpu_align_up(sizeof(gpu_counters), 256));
}

#endif /* GPU_DEV_H */
