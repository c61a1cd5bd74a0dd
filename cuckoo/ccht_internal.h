/*
 * ccht_internal.h - the host CCHT object: a ccht_table (ccht_layout.h) over
 * one block of host memory laid out by ccht_geom.h, run by the executor of
 * ccht_exec.h.
 */
#ifndef CCHT_INTERNAL_H
#define CCHT_INTERNAL_H

#include <stdint.h>

#include "ccht.h"
#include "ccht_exec.h"
#include "ccht_geom.h"

struct ccht {
    ccht_table T;     /* what the executor works on */
    ccht_geom g;      /* the block's layout */
    ccht_options opt;
    uint8_t *mem;     /* the block (mmap) */
    uint64_t mem_bytes;
    uint64_t budget; /* the memory budget in force (ccht_set_memory) */
    uint64_t mem_max; /* the most it may be raised to (the block's address space) */
    /* the resizable index (ccht_resize_tick) */
    uint64_t min_buckets, max_buckets; /* what it may be resized to (equal: not resizable) */
    uint64_t idx_bytes;                /* bytes of the index (both during a resize), atomic */
    uint64_t rs_reserve;               /* bytes the arena keeps free for a resize about to start */
    uint8_t *idx_map; /* the index's own mapping after a resize (NULL: the block's start) */
    uint64_t idx_map_bytes;
    uint64_t *vmap_own;      /* its volatile map after a resize (NULL: the one in meta) */
    uint64_t vmap_own_words; /* allocated words of vmap_own */
    uint8_t *rs_map;         /* during a resize: the new index's mapping */
    uint64_t rs_map_bytes;
    uint64_t resizes;   /* resizes finished */
    uint64_t rs_ns_max; /* the longest call moving items (ns) */
    uint64_t sweep_cursor __attribute__((aligned(64)));
};

#endif /* CCHT_INTERNAL_H */
