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
    uint64_t sweep_cursor __attribute__((aligned(64)));
};

#endif /* CCHT_INTERNAL_H */
