/*
 * ccht_audit.h - a full consistency check of a quiescent CCHT (no batch
 * running): the index, the arena's pages and free lists, and the counters,
 * for tests and for the device check (bench/gpu: the gpu engine's table is
 * copied to host memory and audited here).
 *
 * Checks: every slot refers to a live item whose key hashes to that bucket,
 * inside a chunk of a page of its class (or a large run); no key is stored
 * twice; every chunk on a free list is free, of its list's class, on one
 * list only and not indexed; the pool's stack and the page states agree;
 * items and key/value bytes equal the counters.
 */
#ifndef CCHT_AUDIT_H
#define CCHT_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "ccht_layout.h"

typedef struct ccht_audit {
    uint64_t slots;       /* non-empty index slots */
    uint64_t duplicates;  /* keys found more than once */
    uint64_t free_chunks; /* chunks on free lists */
    uint64_t large_items; /* items in runs of pages */
    uint32_t pages_free;
    uint32_t pages_large;  /* pages held by large items */
    uint32_t pages_moving; /* claimed by a move (must be 0 when quiescent) */
    uint32_t n_classes;
    uint32_t class_pages[CCHT_MAX_CLASSES]; /* pages per size class */
    uint32_t class_size[CCHT_MAX_CLASSES];
    uint64_t writes_full; /* the CCHT_C_FULL counter */
    uint64_t errors;      /* inconsistencies found */
    char first_error[256];
} ccht_audit;

/* Audit T, whose pointers must all be host memory. Returns 0 when
 * consistent, -1 otherwise (a->first_error says where). */
int ccht_audit_table(const ccht_table *T, ccht_audit *a);

/* Print the audit as lines (pages per class, E_FULL count, errors). */
void ccht_audit_print(const ccht_audit *a, void *file);

#endif /* CCHT_AUDIT_H */
