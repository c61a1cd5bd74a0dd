/*
 * ccht_geom.h - how a memory budget becomes a CCHT: the number of buckets,
 * the page size, the size classes and where everything lies in one block
 * of memory, and the initial state of the arena's metadata. Host code,
 * shared by the cpu engine (ccht.c: the block is host memory), the gpu
 * engine (kernels/: device memory, the metadata written through a host
 * image) and the host simulation of the kernels (tests/kernels).
 *
 * Block: [index | arena | meta], each part 4096-aligned, total <= budget.
 * meta: [counters | clock | items per database | pool | classes | page_class | page_run |
 * page_drain | page_pos | pool_stack | volatile map].
 */
#ifndef CCHT_GEOM_H
#define CCHT_GEOM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ccht_layout.h"
#include "cudis_vmap.h"

typedef struct ccht_geom {
    uint64_t n_buckets;
    uint32_t ways;
    uint32_t bucket_bytes;
    uint64_t page_bytes;
    uint32_t page_shift;
    uint32_t n_pages;
    uint32_t limit_pages; /* of those, how many the budget lets be in use
                           * (= n_pages unless ccht_geom_widen made more) */
    uint32_t n_classes;
    uint32_t class_size[CCHT_MAX_CLASSES];
    /* offsets in the block */
    uint64_t index_bytes; /* buckets */
    uint64_t arena_off;
    uint64_t arena_bytes;
    uint64_t meta_off;
    uint64_t meta_bytes;
    uint64_t total;
    /* offsets inside meta */
    uint64_t m_cnt, m_clock, m_dbn, m_pool, m_cls, m_page_class, m_page_run, m_page_drain,
        m_page_pos, m_pool_stack, m_vmap;
} ccht_geom;

static inline uint64_t ccht_align(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

/* Size classes for pages of page_bytes when n_pages of them exist: fine
 * classes when pages are plentiful (8-byte steps to 128, then x1.0625 up
 * to a 32nd of a page, then a whole number of chunks per page, 32 down to
 * 2: with a few big chunks per page geometric steps left up to a chunk's
 * worth at the end of each page: 4,024-byte items sat 7 to a 32 KiB page);
 * with few pages fewer and coarser classes (a quarter as many as pages, at
 * least 8), so that the classes in use do not outnumber the pages. The
 * last class is a whole page. Returns the count. */
static inline uint32_t ccht_geom_classes(uint64_t page_bytes, uint32_t n_pages, uint32_t *size)
{
    uint32_t n = 0;
    uint32_t target = n_pages / 4;
    if (target >= 100) {
        uint64_t sz = 16;
        while (sz <= 128 && sz < page_bytes) {
            size[n++] = (uint32_t)sz;
            sz += 8;
        }
        sz = 128;
        while (n < CCHT_MAX_CLASSES - 1) {
            uint64_t next = (sz * 17 / 16 + 7) & ~7ull;
            if (next >= page_bytes / 32) {
                break;
            }
            size[n++] = (uint32_t)next;
            sz = next;
        }
        for (uint64_t per = 32; per >= 2 && n < CCHT_MAX_CLASSES - 1; per--) {
            uint64_t s = (page_bytes / per) & ~7ull;
            if (s > size[n - 1] && s < page_bytes) {
                size[n++] = (uint32_t)s;
            }
        }
    } else {
        if (target < 8) {
            target = 8;
        }
        double f = pow((double)page_bytes / 16.0, 1.0 / (double)(target - 1));
        double x = 16;
        uint64_t prev = 0;
        while (n < CCHT_MAX_CLASSES - 1) {
            uint64_t sz = ((uint64_t)x + 7) & ~7ull;
            if (sz >= page_bytes) {
                break;
            }
            if (sz > prev) {
                size[n++] = (uint32_t)sz;
                prev = sz;
            }
            x *= f;
        }
    }
    size[n++] = (uint32_t)page_bytes;
    return n;
}

#define CCHT_GEOM_FIXED_META (256 + 64 + 16 * CCHT_DBS + sizeof(ccht_pool))
#define CCHT_GEOM_PAGE_META 20u /* page_class, page_run, page_drain, page_pos, pool_stack */

/* The meta bytes for n_classes classes, n_pages pages and n_buckets buckets. */
static inline uint64_t ccht_geom_meta_bytes(uint32_t n_classes, uint32_t n_pages,
                                            uint64_t n_buckets)
{
    return ccht_align(CCHT_GEOM_FIXED_META + (uint64_t)n_classes * sizeof(ccht_class) +
                          (uint64_t)n_pages * CCHT_GEOM_PAGE_META + 8 +
                          8 * cudis_vmap_alloc_words(n_buckets),
                      4096);
}

static inline void ccht_geom_layout(ccht_geom *g);

/*
 * Plan a table for `budget` bytes. max_items = 0 sizes the index so that
 * items of expected_item_bytes (key + value) fill about 90% of the slots
 * when value memory is full; otherwise the index has exactly max_items
 * slots, rounded up to a whole bucket. Pages are 1 MiB, halved (down to
 * 4 KiB) while there would be fewer than 1024. Returns 0, or -1 with a
 * reason in *why.
 */
static inline int ccht_geom_plan(ccht_geom *g, uint64_t budget, uint64_t max_items, uint32_t ways,
                                 uint32_t expected_item_bytes, const char **why)
{
    memset(g, 0, sizeof(*g));
    if (ways != 4 && ways != 8 && ways != 16) {
        *why = "ways must be 4, 8 or 16";
        return -1;
    }
    uint32_t bb = CCHT_BUCKET_BYTES(ways);
    uint64_t fixed = CCHT_GEOM_FIXED_META + 8 * sizeof(ccht_class) + 3 * 4096;
    if (budget < fixed + 2 * 4096 + bb) {
        *why = "memory budget too small";
        return -1;
    }
    uint64_t n_buckets;
    if (max_items > 0) {
        n_buckets = (max_items + ways - 1) / ways;
    } else {
        double item =
            (double)((8u + (expected_item_bytes ? expected_item_bytes : 64) + 7u) & ~7u) + 2.0;
        double slot = (double)bb / ways;
        double s = (double)(budget - fixed) / (slot + 0.9 * item);
        n_buckets = (uint64_t)(s / ways);
        if (n_buckets == 0) {
            n_buckets = 1;
        }
    }
    uint64_t index = ccht_align(n_buckets * bb, 4096);
    if (index + fixed >= budget) {
        *why = "memory budget too small for max_items";
        return -1;
    }
    uint64_t rest = budget - index;
    uint64_t page = 1u << 20;
    uint32_t n_pages = 0, n_classes = 0;
    for (;;) {
        uint64_t np = rest / (page + CCHT_GEOM_PAGE_META);
        n_classes =
            ccht_geom_classes(page, np > 0x7ffffff0u ? 0x7ffffff0u : (uint32_t)np, g->class_size);
        for (int k = 0; k < 4; k++) {
            uint64_t cls_meta = ccht_geom_meta_bytes(n_classes, 0, n_buckets) + 4096;
            np = rest > cls_meta ? (rest - cls_meta) / (page + CCHT_GEOM_PAGE_META) : 0;
            while (np > 0 &&
                   np * page + ccht_geom_meta_bytes(n_classes, (uint32_t)np, n_buckets) > rest) {
                np--;
            }
            if (np > 0x7ffffff0u) {
                np = 0x7ffffff0u;
            }
            /* fewer pages may call for other classes; fewer classes still fit */
            uint32_t nc = ccht_geom_classes(page, (uint32_t)np, g->class_size);
            bool fits = nc <= n_classes;
            n_classes = nc;
            if (fits) {
                break;
            }
        }
        n_pages = (uint32_t)np;
        if (n_pages >= 1024 || page <= 4096) {
            break;
        }
        page /= 2;
    }
    if (n_pages < 2 ||
        (uint64_t)n_pages * page + ccht_geom_meta_bytes(n_classes, n_pages, n_buckets) > rest) {
        *why = "memory budget too small for the value arena";
        return -1;
    }
    if ((uint64_t)n_pages * page > CCHT_SLOT_REF_MASK) {
        *why = "arena too large";
        return -1;
    }
    g->n_buckets = n_buckets;
    g->ways = ways;
    g->bucket_bytes = bb;
    g->page_bytes = page;
    g->page_shift = 0;
    while ((1ull << g->page_shift) < page) {
        g->page_shift++;
    }
    g->n_pages = n_pages;
    g->limit_pages = n_pages;
    g->n_classes = n_classes;
    g->index_bytes = index;
    ccht_geom_layout(g);
    return g->total <= budget ? 0 : (*why = "layout exceeds the budget", -1);
}

/*
 * Give the arena room for what an index of only min_buckets buckets would
 * leave of `budget` (the host engine's resizable index: shrinking it gives
 * its memory to items): more pages of the same size and classes, of which
 * only limit_pages (what the budget leaves beside today's index) may be in
 * use. The block then spans more than the budget, in address space only:
 * pages beyond the limit are never touched.
 */
static inline void ccht_geom_widen(ccht_geom *g, uint64_t budget, uint64_t min_buckets)
{
    uint64_t min_index = ccht_align(min_buckets * g->bucket_bytes, 4096);
    if (min_index >= budget) {
        return;
    }
    uint64_t np = (budget - min_index) / (g->page_bytes + CCHT_GEOM_PAGE_META);
    while (np > g->n_pages &&
           min_index + np * g->page_bytes +
                   ccht_geom_meta_bytes(g->n_classes, (uint32_t)np, g->n_buckets) >
               budget) {
        np--;
    }
    if (np > 0x7ffffff0u) {
        np = 0x7ffffff0u;
    }
    while (np > g->n_pages && np * g->page_bytes > CCHT_SLOT_REF_MASK) {
        np--;
    }
    if (np <= g->n_pages) {
        return;
    }
    g->n_pages = (uint32_t)np;
    ccht_geom_layout(g);
}

/* The offsets of arena and meta, and inside meta, for g's counts. */
static inline void ccht_geom_layout(ccht_geom *g)
{
    uint32_t n_pages = g->n_pages;
    g->arena_off = g->index_bytes;
    g->arena_bytes = (uint64_t)n_pages * g->page_bytes;
    g->meta_off = g->arena_off + g->arena_bytes;
    g->meta_bytes = ccht_geom_meta_bytes(g->n_classes, n_pages, g->n_buckets);
    g->total = g->meta_off + g->meta_bytes;
    uint64_t m = 0;
    g->m_cnt = m;
    m += 256;
    g->m_clock = m;
    m += 64;
    g->m_dbn = m;
    m += 16ull * CCHT_DBS; /* db_items, db_volatile */
    g->m_pool = m;
    m += sizeof(ccht_pool);
    g->m_cls = m;
    m += (uint64_t)g->n_classes * sizeof(ccht_class);
    g->m_page_class = m;
    m += 4ull * n_pages;
    g->m_page_run = m;
    m += 4ull * n_pages;
    g->m_page_drain = m;
    m += 4ull * n_pages;
    g->m_page_pos = m;
    m += 4ull * n_pages;
    g->m_pool_stack = m;
    m += 4ull * n_pages;
    g->m_vmap = (m + 7) & ~7ull;
}

/* Point T into a block laid out by g (host or device addresses). */
static inline void ccht_geom_bind(const ccht_geom *g, ccht_table *T, uint8_t *base,
                                  uint32_t max_key_len, uint32_t max_val_len, bool allow_empty_key,
                                  uint64_t seed)
{
    memset(T, 0, sizeof(*T));
    uint8_t *meta = base + g->meta_off;
    T->v.buckets = base;
    T->v.arena = base + g->arena_off;
    T->v.n_buckets = g->n_buckets;
    T->v.arena_bytes = g->arena_bytes;
    T->v.seed = seed;
    T->v.ways = g->ways;
    T->v.bucket_bytes = g->bucket_bytes;
    T->a.base = T->v.arena;
    T->a.page_bytes = g->page_bytes;
    T->a.page_shift = g->page_shift;
    T->a.n_pages = g->n_pages;
    T->a.n_classes = g->n_classes;
    T->a.cls = (ccht_class *)(meta + g->m_cls);
    T->a.pool = (ccht_pool *)(meta + g->m_pool);
    T->a.page_class = (uint32_t *)(meta + g->m_page_class);
    T->a.page_run = (uint32_t *)(meta + g->m_page_run);
    T->a.page_drain = (uint32_t *)(meta + g->m_page_drain);
    T->a.page_pos = (uint32_t *)(meta + g->m_page_pos);
    T->a.pool_stack = (uint32_t *)(meta + g->m_pool_stack);
    memcpy(T->a.class_size, g->class_size, sizeof(uint32_t) * g->n_classes);
    T->cnt = (uint64_t *)(meta + g->m_cnt);
    T->clock = (uint64_t *)(meta + g->m_clock);
    T->v.db_items = (uint64_t *)(meta + g->m_dbn);
    T->v.db_volatile = T->v.db_items + CCHT_DBS;
    T->v.vmap = (uint64_t *)(meta + g->m_vmap);
    T->v.vmap_words = cudis_vmap_alloc_words(g->n_buckets) - 1;
    T->max_key_len = max_key_len;
    T->max_val_len = max_val_len;
    T->allow_empty_key = allow_empty_key ? 1 : 0;
    uint64_t slots = g->n_buckets * g->ways;
    T->stamp_slack = slots / 256 > 1024 ? 1024 : (uint32_t)(slots / 256);
}

/*
 * Write the initial metadata into `meta` (g->meta_bytes of host memory: the
 * table's own meta part, or an image to copy to the device): every page
 * free on the pool's stack (page 0 on top), empty classes. Counters,
 * except the gauges, are kept when keep_counters is set (a flush).
 */
static inline void ccht_geom_meta_init(const ccht_geom *g, uint8_t *meta, bool keep_counters)
{
    uint64_t cnt[CCHT_C__COUNT];
    memcpy(cnt, meta + g->m_cnt, sizeof(cnt));
    uint64_t clock;
    memcpy(&clock, meta + g->m_clock, sizeof(clock));
    memset(meta, 0, g->meta_bytes);
    if (keep_counters) {
        for (int i = CCHT_C_FIRST_GAUGE; i < CCHT_C__COUNT; i++) {
            cnt[i] = 0;
        }
        memcpy(meta + g->m_cnt, cnt, sizeof(cnt));
        memcpy(meta + g->m_clock, &clock, sizeof(clock));
    }
    ccht_pool *pl = (ccht_pool *)(meta + g->m_pool);
    pl->nfree = g->n_pages;
    pl->limit = g->limit_pages;
    ccht_class *cls = (ccht_class *)(meta + g->m_cls);
    for (uint32_t c = 0; c < g->n_classes; c++) {
        cls[c].size = g->class_size[c];
        cls[c].per_page = (uint32_t)(g->page_bytes / g->class_size[c]);
        for (uint32_t i = 0; i < CCHT_RING; i++) {
            cls[c].ring[i] = CCHT_NONE32;
        }
    }
    uint32_t *pc = (uint32_t *)(meta + g->m_page_class);
    uint32_t *pos = (uint32_t *)(meta + g->m_page_pos);
    uint32_t *stack = (uint32_t *)(meta + g->m_pool_stack);
    for (uint32_t p = 0; p < g->n_pages; p++) {
        pc[p] = CCHT_PG_FREE;
        stack[g->n_pages - 1 - p] = p;
        pos[p] = g->n_pages - 1 - p;
    }
}

#endif /* CCHT_GEOM_H */
