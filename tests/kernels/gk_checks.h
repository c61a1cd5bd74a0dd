/*
 * gk_checks.h - checks of the GPU engine's logic that do not depend on a
 * test framework: used by the Criterion suites in tests/kernels/ and by the
 * plain self-test program of bench/gpu/ (the device machine has no
 * Criterion).
 *
 * A backend is anything that executes batches: an engine_store_ops store
 * ("gpu", "cpu"), or the host simulation of the GPU engine (gk_hostsim_*,
 * which runs kernels/gpu_exec.h, the exact per-op code of the kernels, on
 * the CPU with optional worker threads). The gold check runs the same random
 * operation stream (expiry, conditional writes, INCR/APPEND/SETRANGE,
 * duplicate reads inside one batch) through two backends and compares every
 * result; the eviction check runs a stream larger than the budget against a
 * reference model (a hit must return the latest written value).
 */
#ifndef GK_CHECKS_H
#define GK_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The host simulation of the GPU engine over cfg (memory_bytes, max_items,
 * ways, max_key_len, max_val_len, allow_empty_key, seed), splitting each
 * batch over `threads` threads. Returns 0, or -1 with why. */
int gk_backend_hostsim(gk_backend *b, const engine_config *cfg, uint32_t threads, char *why,
                       size_t why_len);

/* Host simulation only: count keys stored more than once (must be 0) and
 * the number of distinct live slots. */
int gk_hostsim_duplicates(gk_backend *b, uint64_t *slots);

void gk_backend_destroy(gk_backend *b);

typedef struct gk_stream_opts {
    uint64_t seed;
    uint32_t batches;
    uint32_t batch_ops;
    uint32_t n_keys;
    uint32_t max_val; /* values are 0..max_val bytes */
} gk_stream_opts;

/* Run the same random stream through a and ref; compare every result.
 * Both must be large enough not to evict. Returns 0, or -1 with the first
 * difference in msg. */
int gk_gold(gk_backend *a, gk_backend *ref, const gk_stream_opts *o, char *msg, size_t msg_len);

/* Run SET/GET/DEL/EXISTS over more data than `a` can hold; a hit must
 * return the latest written value, a SET must never fail, and the budget
 * must hold. Returns 0, or -1 with msg. `evictions` gets the eviction
 * count seen in stats. */
int gk_evict_model(gk_backend *a, const gk_stream_opts *o, uint64_t *evictions, char *msg,
                   size_t msg_len);

/* A default configuration for these checks (64 MiB, 8 ways, max_items). */
void gk_config(engine_config *cfg, uint64_t memory, uint64_t max_items);

#endif /* GK_CHECKS_H */
