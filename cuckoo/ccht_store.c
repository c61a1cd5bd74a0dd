/*
 * ccht_store.c - engine "cpu": the CCHT behind the engine_store_ops table.
 * engine_config.threads is the engine layer's business (it splits batches);
 * every ccht call is already safe to run on several threads at once.
 */
#include "ccht_store.h"

#include "ccht.h"

static void *store_create(const engine_config *cfg, char *why, size_t why_len)
{
    ccht_options o;
    ccht_options_default(&o);
    o.memory_bytes = cfg->memory_bytes;
    o.max_items = cfg->max_items;
    o.ways = cfg->ways;
    o.max_key_len = cfg->max_key_len;
    o.max_val_len = cfg->max_val_len;
    o.expected_item_bytes = cfg->expected_item_bytes;
    o.allow_empty_key = cfg->allow_empty_key;
    o.seed = cfg->seed;
    o.policy = cfg->policy;
    o.lfu_log_factor = cfg->lfu_log_factor;
    o.lfu_decay_time = cfg->lfu_decay_time;
    o.resizable = cfg->index_resize;
    return ccht_create(&o, why, why_len);
}

/* Buckets of old index moved per tick, at most (ccht_resize_tick also
 * stops after about two milliseconds). */
#define STORE_RESIZE_BUCKETS 65536u

static int store_index_tick(void *s, int64_t now_ms, cudis_evbuf *ev)
{
    return ccht_resize_tick(s, now_ms, STORE_RESIZE_BUCKETS, ev);
}

static void store_index_expect(void *s, uint64_t items, uint64_t item_bytes)
{
    (void)ccht_index_expect(s, items, item_bytes);
}

static uint64_t store_clock(void *s)
{
    return ccht_clock(s);
}

static void store_clock_tick(void *s)
{
    ccht_clock_tick(s);
}

static uint64_t store_set_memory(void *s, uint64_t bytes)
{
    return ccht_set_memory(s, bytes);
}

static int store_set_policy(void *s, uint32_t policy, uint32_t lfu_log_factor,
                            uint32_t lfu_decay_time)
{
    return ccht_set_policy(s, policy, lfu_log_factor, lfu_decay_time);
}

static void store_destroy(void *s)
{
    ccht_destroy(s);
}

static int store_execute(void *s, cudis_batch *b)
{
    return ccht_execute(s, b);
}

static int store_scan(void *s, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                      cudis_scan_fn fn, void *arg, uint64_t *next)
{
    return ccht_scan(s, db, cursor, count, now_ms, fn, arg, next);
}

static int store_random_key(void *s, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                            uint32_t *len)
{
    return ccht_random_key(s, db, now_ms, buf, cap, len);
}

static int store_flush(void *s, int db)
{
    return ccht_flush(s, db);
}

static uint64_t store_db_size(void *s, uint8_t db)
{
    return ccht_db_size(s, db);
}

static int store_sweep(void *s, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev)
{
    return ccht_sweep(s, now_ms, max_work, ev);
}

static void store_expires(void *s, int64_t now_ms, uint32_t max_work, cudis_expires *out)
{
    ccht_expires(s, now_ms, max_work, out);
}

static uint64_t store_sweep_units(void *s)
{
    return ccht_sweep_units(s);
}

static void store_stats(void *s, cudis_stats *out)
{
    ccht_stats(s, out);
}

static void store_reset_stats(void *s)
{
    ccht_reset_stats(s);
}

static size_t store_info(void *s, char *buf, size_t cap)
{
    return ccht_info(s, buf, cap);
}

const engine_store_ops ccht_store_ops = {
    .name = "cpu",
    .description = "double-LRU cache cuckoo hash table in host memory (multi-threaded)",
    .concurrent = true,
    .create = store_create,
    .destroy = store_destroy,
    .execute = store_execute,
    .scan = store_scan,
    .random_key = store_random_key,
    .flush = store_flush,
    .db_size = store_db_size,
    .sweep = store_sweep,
    .sweep_units = store_sweep_units,
    .expires = store_expires,
    .set_policy = store_set_policy,
    .set_memory = store_set_memory,
    .clock = store_clock,
    .clock_tick = store_clock_tick,
    .index_tick = store_index_tick,
    .index_expect = store_index_expect,
    .stats = store_stats,
    .reset_stats = store_reset_stats,
    .info = store_info,
};
