/*
 * gk_checks.h - checks of the GPU engine's logic that do not depend on a
 * test framework: used by the Criterion suites in tests/kernels/ and by the
 * plain self-test program of bench/gpu/ (the device machine has no
 * Criterion).
 *
 * A backend is anything that executes batches: an engine_store_ops store
 * ("gpu", "cpu"), or the host simulation of the GPU engine (gk_hostsim_*,
 * which runs kernels/gpu_dev.h, the exact per-thread code of the kernels,
 * on the CPU with optional worker threads). The gold check runs the same
 * random operation stream (expiry, conditional writes, INCR/APPEND/
 * SETRANGE, duplicate reads inside one batch) through two backends and
 * compares every result; the eviction check runs a stream larger than the
 * budget against a reference model (a hit must return the latest written
 * value); the long stream (gk_long) does both for millions of ops with
 * eviction, expiry and shifting value sizes.
 */
#ifndef GK_CHECKS_H
#define GK_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccht_exec.h"
#include "cudis_op.h"
#include "cudis_stats.h"
#include "engine_store.h"

typedef struct gk_backend {
    const char *name;
    void *ctx;
    int (*exec)(void *ctx, cudis_batch *b);
    void (*stats)(void *ctx, cudis_stats *st);
    void (*destroy)(void *ctx);
} gk_backend;

/* A backend over a store (create with cfg). Returns 0, or -1 with why. */
int gk_backend_store(gk_backend *b, const engine_store_ops *ops, const engine_config *cfg,
                     char *why, size_t why_len);

/* The store a gk_backend_store backend runs (a ccht *, a gpu_engine *...). */
void *gk_backend_store_handle(gk_backend *b);

/* The host simulation of the GPU engine over cfg (memory_bytes, max_items,
 * ways, max_key_len, max_val_len, allow_empty_key, seed), splitting each
 * batch over `threads` threads. Returns 0, or -1 with why. */
int gk_backend_hostsim(gk_backend *b, const engine_config *cfg, uint32_t threads, char *why,
                       size_t why_len);

/* The host simulation as an engine store ("hostsim": cfg->threads host
 * threads, 4 when 0 or 1), for engine_create_store: the conformance suite
 * runs the kernels' code this way. */
extern const engine_store_ops gk_hostsim_store_ops;

/* Fault injection: the next hostsim store created fails its nth_batch-th
 * batch, and every one after it, with CUDIS_E_DEVFAIL (as a gpu store does
 * after a device fault). 0 disarms. */
void gk_hostsim_inject(uint64_t nth_batch);

/* Host simulation only: its table (host memory: ccht_audit_table works on
 * it). */
struct ccht_table;
const struct ccht_table *gk_hostsim_table(gk_backend *b);

void gk_backend_destroy(gk_backend *b);

typedef struct gk_stream_opts {
    uint64_t seed;
    uint32_t batches;
    uint32_t batch_ops;
    uint32_t n_keys;
    uint32_t max_val; /* values are 0..max_val bytes */
    bool events;      /* gk_gold: also compare each batch's events (cudis_evbuf) */
    uint64_t *events_seen; /* gk_gold adds the events compared here (may be NULL) */
} gk_stream_opts;

/* Run the same random stream through a and ref; compare every result and,
 * with o->events, the keys each batch reported expired (as multisets: the
 * order means nothing). Both must be large enough not to evict. Returns 0,
 * or -1 with the first difference in msg. */
int gk_gold(gk_backend *a, gk_backend *ref, const gk_stream_opts *o, char *msg, size_t msg_len);

/* Run SET/GET/DEL/EXISTS over more data than `a` can hold; a hit must
 * return the latest written value, a SET must never fail, and the budget
 * must hold. Returns 0, or -1 with msg. `evictions` gets the eviction
 * count seen in stats. */
int gk_evict_model(gk_backend *a, const gk_stream_opts *o, uint64_t *evictions, char *msg,
                   size_t msg_len);

/* The long mixed stream (gk_long.c). */
typedef struct gk_long_opts {
    uint64_t seed;
    uint64_t ops;        /* at least this many ops in all */
    uint32_t max_batch;  /* ops per batch: 1..max_batch */
    uint32_t n_keys;     /* half the ops go to the hottest 1/16 of them */
    uint32_t small_max;  /* value bytes in the small phases */
    uint32_t large_max;  /* ... in the large phase */
    uint32_t huge_max;   /* now and then in the last phase (bigger than a page) */
    uint64_t phase_ops;  /* ops per phase: small, large, small, mixed with huge */
    uint32_t max_val;    /* the backends' max_val_len */
    bool exact;          /* a's results must equal ref's bit for bit */
} gk_long_opts;

typedef struct gk_long_report {
    uint64_t ops, batches;
    uint64_t hits[2];    /* a, ref: lookups that returned a value */
    uint64_t evicted[2]; /* keys the model saw dropped */
} gk_long_report;

/* Defaults: 512-op batches, 40,000 keys, values 0..64 / 64..3000 /
 * up to 40,000 bytes, four phases per ops/2. */
void gk_long_defaults(gk_long_opts *o, uint64_t seed, uint64_t ops);

/* Run the stream through a and ref, each checked against its own model
 * (may evict, never lose a write it acknowledged as the latest, never fail
 * with CUDIS_E_FULL, never exceed its budget); with o->exact also a
 * against ref. Returns 0, or -1 with the first failure in msg. */
int gk_long(gk_backend *a, gk_backend *ref, const gk_long_opts *o, gk_long_report *rep, char *msg,
            size_t msg_len);

/* Key i of the streams into buf (at least 64 bytes): 8 binary bytes for a
 * third of them, text of varied length else. Returns its length. */
uint32_t gk_key(uint32_t i, uint8_t *buf);

/* A default configuration for these checks (64 MiB, 8 ways, max_items). */
void gk_config(engine_config *cfg, uint64_t memory, uint64_t max_items);

#endif /* GK_CHECKS_H */
