/*
 * engine_internal.h - private parts of engine/: the engine object, the null
 * store and the worker pool that splits one batch over several threads.
 */
#ifndef ENGINE_INTERNAL_H
#define ENGINE_INTERNAL_H

#include <pthread.h>

#include "engine.h"

/* The "null" store: accepts everything, stores nothing, answers miss. */
extern const engine_store_ops null_store_ops;

typedef struct engine_pool engine_pool;

/* Start nthreads-1 workers (the caller's thread is the last one). NULL when
 * nthreads < 2 or on failure. */
engine_pool *engine_pool_create(uint32_t nthreads);
void engine_pool_destroy(engine_pool *p);

/* Run `batch` on `store` split into contiguous chunks, one per thread, and
 * return when all are done. Each chunk writes its values into its own slice
 * of batch->out; the slices are then packed together, and ops that did not
 * fit their slice (CUDIS_E_OUTBUF, not applied) are re-run one by one
 * against the remaining space, so the outcome equals a single-threaded run.
 * When the pool is busy with another caller's batch, runs it inline. */
int engine_pool_execute(engine_pool *p, const engine_store_ops *ops, void *store,
                        cudis_batch *batch);

/* Run sub-batch k on stores[k] (same ops), n of them at once (n up to the
 * pool's threads; the caller's thread runs the first), and return when
 * all are done, rcs[k] their codes. Inline, one after another, when p is
 * NULL or busy. Sub-batches of no ops are not run (CUDIS_OK). */
void engine_pool_run(engine_pool *p, const engine_store_ops *ops, void *const *stores,
                     cudis_batch *subs, uint32_t n, int *rcs);

/* engine_shards.c: cfg->shards stores of `in` behind one (memory split
 * evenly, devices from cfg), the table to use them by in *ops; NULL with
 * why on failure. */
void *engine_shards_create(const engine_store_ops *in, const engine_config *cfg,
                           const engine_store_ops **ops, char *why, size_t why_len);

/* engine_outbuf.c: the ops of a finished batch that returned CUDIS_E_OUTBUF
 * run again through exec, as one sub-batch whose values go after the first
 * `used` bytes of b->out; results land in b->res and b->out_len becomes
 * the bytes used plus what ops still out of room asked for. With grow,
 * b->out (from malloc) is enlarged to what they ask for, in up to 8 rounds
 * (a value may grow between runs); without, they get the room left in
 * out_cap, once. *reruns (may be NULL): ops run again. Returns exec's rc
 * (on failure every op re-run carries it). */
typedef int (*outbuf_exec_fn)(void *ctx, cudis_batch *b);
int outbuf_rerun(outbuf_exec_fn exec, void *ctx, cudis_batch *b, uint64_t used, bool grow,
                 uint32_t *reruns);
/* The end of the last value a batch's results place in its out buffer. */
uint64_t outbuf_used(const cudis_batch *b);

/* Make a batch's event sink say events were lost: a failover dropped
 * every key of the store that failed. */
static inline void ev_mark_lost(cudis_evbuf *ev)
{
    if (ev != NULL && ev->len <= ev->cap) {
        ev->len = ev->cap + 1;
    }
}

/* One store and how batches reach it. */
typedef struct engine_backend {
    const engine_store_ops *ops;
    void *store;
    engine_pool *pool; /* NULL: run batches on the caller's thread */
} engine_backend;

#define ENGINE_MAX_DEAD 8 /* failed backends kept (not destroyed) until engine_destroy */

struct engine {
    engine_backend *cur;            /* the backend in use (atomic pointer) */
    const engine_store_ops *fallback; /* "auto": where to go when cur's device fails */
    engine_config cfg;
    pthread_mutex_t fo_lock;        /* one failover at a time */
    engine_backend *dead[ENGINE_MAX_DEAD];
    uint32_t n_dead;
    uint64_t failovers;             /* atomic */
    char failure[320];              /* the last device failure (under fo_lock) */
    /* engine_expire_tick's pacing: units of the next slice, of this pass so
     * far and in all, items found in this pass and in the last whole one */
    uint64_t exp_work, exp_pass_done, exp_pass_units, exp_pass_found, exp_last_found;
};

#endif /* ENGINE_INTERNAL_H */
