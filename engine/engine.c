/*
 * engine.c - the registry of engines by name, "auto" selection, and the thin
 * layer every call goes through (worker pool for cfg.threads > 1).
 *
 * The registry is the one place that lists the stores. "cpu" (cuckoo/) and
 * "gpu" (kernels/) are compiled in when their libraries exist in this build
 * (CMake defines CUDIS_ENGINE_HAVE_CPU / CUDIS_ENGINE_HAVE_GPU); asking for
 * one that is not built fails with a reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines_store.h"
#include "engine_internal.h"
#if CUDIS_ENGINE_HAVE_CPU
#include "ccht_store.h"
#endif
#if CUDIS_ENGINE_HAVE_GPU
#include "gpu_store.h"
#endif

/* ------------------------------------------------------------------------
 * Registry
 * ---------------------------------------------------------------------- */

typedef struct engine_row {
    const char *name;
    const engine_store_ops *ops; /* NULL: not built here */
    const char *missing;         /* why, when ops is NULL */
} engine_row;

static const engine_row engine_rows[] = {
#if CUDIS_ENGINE_HAVE_CPU
    {"cpu", &ccht_store_ops, NULL},
#else
    {"cpu", NULL, "the CCHT library (cuckoo/) is not part of this build"},
#endif
#if CUDIS_ENGINE_HAVE_GPU
    {"gpu", &gpu_store_ops, NULL},
#else
    {"gpu", NULL, "this build has no CUDA engine (nvcc not found or CUDA disabled at build time)"},
#endif
    {"lru", &lru_store_ops, NULL},  {"fifo", &fifo_store_ops, NULL},
    {"lfu", &lfu_store_ops, NULL},  {"null", &null_store_ops, NULL},
};

#define N_ROWS (sizeof(engine_rows) / sizeof(engine_rows[0]))

static const char *const engine_name_list[] = {
#if CUDIS_ENGINE_HAVE_CPU
    "cpu",
#endif
#if CUDIS_ENGINE_HAVE_GPU
    "gpu",
#endif
    "lru", "fifo", "lfu", "null", "auto", NULL,
};

const char *const *engine_names(void)
{
    return engine_name_list;
}

void engine_config_default(engine_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->memory_bytes = 64ull << 20;
    cfg->max_items = 0;
    cfg->ways = 8;
    cfg->threads = 1;
    cfg->max_key_len = 65535;
    cfg->max_val_len = 1u << 20;
    cfg->expected_item_bytes = 64;
    cfg->allow_empty_key = true;
    cfg->seed = 0;
    cfg->device = -1;
}

static const engine_row *find_row(const char *name)
{
    for (size_t i = 0; i < N_ROWS; i++) {
        if (strcmp(engine_rows[i].name, name) == 0) {
            return &engine_rows[i];
        }
    }
    return NULL;
}

/* Create the store of one row; NULL with why on failure. */
static void *row_create(const engine_row *row, const engine_config *cfg, char *why, size_t why_len)
{
    if (row->ops == NULL) {
        snprintf(why, why_len, "%s: %s", row->name, row->missing);
        return NULL;
    }
    why[0] = '\0';
    void *s = row->ops->create(cfg, why, why_len);
    if (s == NULL && why[0] == '\0') {
        snprintf(why, why_len, "%s: create failed", row->name);
    } else if (s != NULL && why[0] == '\0') {
        snprintf(why, why_len, "%s: %s", row->name, row->ops->description);
    }
    return s;
}

static engine *engine_wrap(const engine_store_ops *ops, void *store, const engine_config *cfg)
{
    engine *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        ops->destroy(store);
        return NULL;
    }
    e->ops = ops;
    e->store = store;
    /* The gpu store parallelises on the device; every other store may split
     * a batch over host threads. */
    if (cfg->threads > 1 && strcmp(ops->name, "gpu") != 0) {
        e->pool = engine_pool_create(cfg->threads);
        if (e->pool == NULL) {
            ops->destroy(store);
            free(e);
            return NULL;
        }
    }
    return e;
}

engine *engine_create(const char *name, const engine_config *cfg_in, char *why, size_t why_len)
{
    char dummy[8];
    if (why == NULL || why_len == 0) {
        why = dummy;
        why_len = sizeof(dummy);
    }
    engine_config defcfg;
    if (cfg_in == NULL) {
        engine_config_default(&defcfg);
        cfg_in = &defcfg;
    }
    if (name == NULL) {
        name = "auto";
    }

    if (strcmp(name, "auto") == 0) {
        char gwhy[256], cwhy[256];
        const engine_row *gpu = find_row("gpu"), *cpu = find_row("cpu");
        void *s = row_create(gpu, cfg_in, gwhy, sizeof(gwhy));
        if (s != NULL) {
            snprintf(why, why_len, "auto: using gpu (%s)", gwhy);
            engine *e = engine_wrap(gpu->ops, s, cfg_in);
            if (e == NULL) {
                snprintf(why, why_len, "auto: out of memory");
            }
            return e;
        }
        const engine_row *fb = cpu->ops != NULL ? cpu : find_row("lru");
        s = row_create(fb, cfg_in, cwhy, sizeof(cwhy));
        if (s == NULL) {
            snprintf(why, why_len, "auto: gpu unavailable (%s); %s failed (%s)", gwhy, fb->name,
                     cwhy);
            return NULL;
        }
        if (fb == cpu) {
            snprintf(why, why_len, "auto: gpu unavailable (%s), using cpu", gwhy);
        } else {
            snprintf(why, why_len, "auto: gpu unavailable (%s) and %s, using lru", gwhy,
                     cpu->missing);
        }
        engine *e = engine_wrap(fb->ops, s, cfg_in);
        if (e == NULL) {
            snprintf(why, why_len, "auto: out of memory");
        }
        return e;
    }

    const engine_row *row = find_row(name);
    if (row == NULL) {
        snprintf(why, why_len, "unknown engine '%s' (known: cpu, gpu, lru, fifo, lfu, null, auto)",
                 name);
        return NULL;
    }
    void *s = row_create(row, cfg_in, why, why_len);
    if (s == NULL) {
        return NULL;
    }
    engine *e = engine_wrap(row->ops, s, cfg_in);
    if (e == NULL) {
        snprintf(why, why_len, "%s: out of memory", name);
    }
    return e;
}

void engine_destroy(engine *e)
{
    if (e == NULL) {
        return;
    }
    engine_pool_destroy(e->pool);
    e->ops->destroy(e->store);
    free(e);
}

const char *engine_name(const engine *e)
{
    return e->ops->name;
}

/* ------------------------------------------------------------------------
 * Calls
 * ---------------------------------------------------------------------- */

int engine_execute(engine *e, cudis_batch *batch)
{
    if (batch->n_ops == 0) {
        return CUDIS_OK;
    }
    if (e->pool != NULL) {
        return engine_pool_execute(e->pool, e->ops, e->store, batch);
    }
    return e->ops->execute(e->store, batch);
}

int engine_scan(engine *e, uint64_t cursor, uint32_t count, int64_t now_ms, cudis_scan_fn fn,
                void *arg, uint64_t *next)
{
    if (e->ops->scan == NULL) {
        *next = 0;
        return CUDIS_E_UNSUPPORTED;
    }
    return e->ops->scan(e->store, cursor, count, now_ms, fn, arg, next);
}

int engine_random_key(engine *e, int64_t now_ms, uint8_t *buf, uint32_t cap, uint32_t *len)
{
    if (e->ops->random_key == NULL) {
        return CUDIS_E_UNSUPPORTED;
    }
    return e->ops->random_key(e->store, now_ms, buf, cap, len);
}

int engine_flush(engine *e)
{
    if (e->ops->flush == NULL) {
        return CUDIS_E_UNSUPPORTED;
    }
    return e->ops->flush(e->store);
}

int engine_sweep(engine *e, int64_t now_ms, uint32_t max_work)
{
    if (e->ops->sweep == NULL) {
        return 0;
    }
    return e->ops->sweep(e->store, now_ms, max_work);
}

void engine_stats(engine *e, cudis_stats *out)
{
    if (e->ops->stats == NULL) {
        memset(out, 0, sizeof(*out));
        return;
    }
    e->ops->stats(e->store, out);
}

void engine_reset_stats(engine *e)
{
    if (e->ops->reset_stats != NULL) {
        e->ops->reset_stats(e->store);
    }
}

size_t engine_info(engine *e, char *buf, size_t cap)
{
    if (e->ops->info == NULL) {
        if (cap > 0) {
            buf[0] = '\0';
        }
        return 0;
    }
    return e->ops->info(e->store, buf, cap);
}
