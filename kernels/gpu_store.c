/*
 * gpu_store.c - engine_store_ops for the "gpu" engine: a thin adapter from
 * the engine interface to gpu_engine.h.
 */
#include "gpu_store.h"

#include "gpu_engine.h"

static void *gs_create(const engine_config *cfg, char *why, size_t why_len)
{
    return gpu_engine_create(cfg, why, why_len);
}

static void gs_destroy(void *s)
{
    gpu_engine_destroy((gpu_engine *)s);
}

static int gs_execute(void *s, cudis_batch *b)
{
    return gpu_engine_execute((gpu_engine *)s, b);
}

static int gs_scan(void *s, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                   cudis_scan_fn fn, void *arg, uint64_t *next)
{
    return gpu_engine_scan((gpu_engine *)s, db, cursor, count, now_ms, fn, arg, next);
}

static int gs_random_key(void *s, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                         uint32_t *len)
{
    return gpu_engine_random_key((gpu_engine *)s, db, now_ms, buf, cap, len);
}

static int gs_flush(void *s, int db)
{
    return gpu_engine_flush((gpu_engine *)s, db);
}

static uint64_t gs_db_size(void *s, uint8_t db)
{
    return gpu_engine_db_size((gpu_engine *)s, db);
}

static int gs_sweep(void *s, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev)
{
    return gpu_engine_sweep((gpu_engine *)s, now_ms, max_work, ev);
}

static void gs_expires(void *s, int64_t now_ms, uint32_t max_work, cudis_expires *out)
{
    (void)gpu_engine_expires((gpu_engine *)s, now_ms, max_work, out); /* a failure: none */
}

static uint64_t gs_clock(void *s)
{
    return gpu_engine_clock((gpu_engine *)s);
}

static int gs_set_policy(void *s, uint32_t policy, uint32_t lfu_log_factor, uint32_t lfu_decay_time)
{
    return gpu_engine_set_policy((gpu_engine *)s, policy, lfu_log_factor, lfu_decay_time);
}

static uint64_t gs_sweep_units(void *s)
{
    return gpu_engine_sweep_units((gpu_engine *)s);
}

static void gs_stats(void *s, cudis_stats *out)
{
    gpu_engine_stats((gpu_engine *)s, out);
}

static void gs_reset_stats(void *s)
{
    gpu_engine_reset_stats((gpu_engine *)s);
}

static size_t gs_info(void *s, char *buf, size_t cap)
{
    return gpu_engine_info((gpu_engine *)s, buf, cap);
}

static const char *gs_failure(void *s)
{
    return gpu_engine_failure((gpu_engine *)s);
}

static int gs_submit(void *s, cudis_batch *b, void **ticket)
{
    return gpu_engine_submit((gpu_engine *)s, b, (gpu_pending **)ticket);
}

static int gs_complete(void *s, void *ticket)
{
    return gpu_engine_complete((gpu_engine *)s, (gpu_pending *)ticket);
}

const engine_store_ops gpu_store_ops = {
    .name = "gpu",
    .description = "double-LRU cuckoo hash table (CCHT) in CUDA device memory",
    .concurrent = true,
    .create = gs_create,
    .destroy = gs_destroy,
    .execute = gs_execute,
    .scan = gs_scan,
    .random_key = gs_random_key,
    .flush = gs_flush,
    .db_size = gs_db_size,
    .sweep = gs_sweep,
    .sweep_units = gs_sweep_units,
    .expires = gs_expires,
    .set_policy = gs_set_policy,
    .clock = gs_clock,
    .stats = gs_stats,
    .reset_stats = gs_reset_stats,
    .info = gs_info,
    .failure = gs_failure,
    .submit = gs_submit,
    .complete = gs_complete,
};
