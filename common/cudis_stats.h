/*
 * cudis_stats.h - the statistics every store reports, with the same meaning
 * for the CCHT (cpu, gpu) and the exact baselines (lru, fifo, lfu).
 */
#ifndef CUDIS_STATS_H
#define CUDIS_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "cudis_op.h" /* CUDIS_MAX_DBS */

typedef struct cudis_stats {
    uint64_t items;          /* live entries (expired-but-unreclaimed ones included, as Redis's DBSIZE) */
    uint64_t bytes_used;     /* index + item memory in use, metadata included */
    uint64_t bytes_budget;   /* the configured memory budget; bytes_used never exceeds it */
    uint64_t index_bytes;    /* part of bytes_used that is index/metadata independent of items */
    uint64_t key_bytes;      /* sum of stored key lengths */
    uint64_t value_bytes;    /* sum of stored value lengths */
    /* hits, misses and the evictions leave out CUDIS_F_NOSTATS reads and
     * items of internal databases (CUDIS_DB_INTERNAL, cudis_op.h) */
    uint64_t hits;           /* lookups (GET family) that found a live key */
    uint64_t misses;         /* lookups that did not */
    uint64_t evict_bucket;   /* CCHT: evicted because both candidate buckets were full */
    uint64_t evict_memory;   /* evicted because value memory was full (second LRU level) */
    uint64_t evict_expired;  /* expired items reclaimed (lazily or by a sweep) */
    uint64_t capacity;       /* index slots (CCHT) or the most items the budget admits (baselines) */
    double load_factor;      /* items / capacity */
} cudis_stats;

/* Keys with an expiry, per database (engine_store_ops.expires): what
 * INFO keyspace's expires= and avg_ttl= report. */
typedef struct cudis_expires {
    uint64_t keys[CUDIS_MAX_DBS]; /* keys with an expiry: the CCHT's counters (exact;
                                   * expired ones not yet reclaimed count, as in Redis
                                   * and in items); a store counted by scan: the live
                                   * ones, scaled from those read when !exact */
    double ttl_ms[CUDIS_MAX_DBS]; /* the mean time the live ones read have left, ms */
    bool exact;                   /* every place that may hold one was read */
} cudis_expires;

#endif /* CUDIS_STATS_H */
