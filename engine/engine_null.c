/*
 * engine_null.c - the "null" store: accepts every op, stores nothing and
 * answers as an always-empty cache would (GET misses, SET reports DONE,
 * INCRBY returns the delta). For measuring the front end alone. Op results
 * come from cudis_plan_op with the key absent, so they are what every other
 * engine answers on an empty keyspace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_hd.h"
#include "engine_internal.h"

typedef struct null_store {
    uint32_t max_key_len, max_val_len;
    bool allow_empty_key;
    uint64_t budget;
    uint64_t misses; /* atomic */
} null_store;

static void *null_create(const engine_config *cfg, char *why, size_t why_len)
{
    null_store *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(why, why_len, "null: out of memory");
        return NULL;
    }
    s->max_key_len = cfg->max_key_len ? cfg->max_key_len : 65535u;
    s->max_val_len = cfg->max_val_len ? cfg->max_val_len : (1u << 20);
    s->allow_empty_key = cfg->allow_empty_key;
    s->budget = cfg->memory_bytes;
    snprintf(why, why_len, "null: stores nothing, every lookup misses");
    return s;
}

static void null_destroy(void *store)
{
    free(store);
}

static int null_execute(void *store, cudis_batch *b)
{
    null_store *s = store;
    uint64_t misses = 0;
    cudis_cur cur = {.found = false};
    for (uint32_t i = 0; i < b->n_ops; i++) {
        const cudis_op *op = &b->ops[i];
        cudis_result *res = &b->res[i];
        if (op->key_len > s->max_key_len || (op->key_len == 0 && !s->allow_empty_key)) {
            memset(res, 0, sizeof(*res));
            res->status = op->key_len == 0 ? CUDIS_E_EMPTYKEY : CUDIS_E_KEYTOOBIG;
            continue;
        }
        cudis_plan plan;
        int rc =
            cudis_plan_op(op, b->in + op->val_off, &cur, b->now_ms, s->max_val_len, &plan, res);
        if (rc < 0) {
            res->status = rc;
            continue;
        }
        misses += plan.lookup;
    }
    if (misses) {
        cudis_fetch_add_u64(&s->misses, misses);
    }
    return CUDIS_OK;
}

static int null_scan(void *store, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                     cudis_scan_fn fn, void *arg, uint64_t *next)
{
    (void)store, (void)db, (void)cursor, (void)count, (void)now_ms, (void)fn, (void)arg;
    *next = 0;
    return CUDIS_OK;
}

static int null_random_key(void *store, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                           uint32_t *len)
{
    (void)store, (void)db, (void)now_ms, (void)buf, (void)cap;
    *len = 0;
    return 0;
}

static int null_flush(void *store, int db)
{
    (void)store, (void)db;
    return CUDIS_OK;
}

static uint64_t null_db_size(void *store, uint8_t db)
{
    (void)store, (void)db;
    return 0;
}

static void null_stats(void *store, cudis_stats *out)
{
    null_store *s = store;
    memset(out, 0, sizeof(*out));
    out->bytes_budget = __atomic_load_n(&s->budget, __ATOMIC_RELAXED);
    out->misses = cudis_load_relaxed_u64(&s->misses);
}

static void null_reset_stats(void *store)
{
    null_store *s = store;
    cudis_store_relaxed_u64(&s->misses, 0);
}

static int null_set_policy(void *store, uint32_t policy, uint32_t lfu_log_factor,
                           uint32_t lfu_decay_time)
{
    (void)store, (void)policy, (void)lfu_log_factor, (void)lfu_decay_time;
    return CUDIS_OK; /* it never holds anything to evict */
}

static uint64_t null_set_memory(void *store, uint64_t bytes)
{
    null_store *s = store;
    __atomic_store_n(&s->budget, bytes, __ATOMIC_RELAXED);
    return bytes;
}

const engine_store_ops null_store_ops = {
    .name = "null",
    .description = "stores nothing, answers miss (measures the front end alone)",
    .concurrent = true,
    .create = null_create,
    .destroy = null_destroy,
    .execute = null_execute,
    .scan = null_scan,
    .random_key = null_random_key,
    .flush = null_flush,
    .db_size = null_db_size,
    .sweep = NULL,
    .set_policy = null_set_policy,
    .set_memory = null_set_memory,
    .stats = null_stats,
    .reset_stats = null_reset_stats,
    .info = NULL,
};
