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
#include "cudis_fault.h"
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
    {"lru", &lru_store_ops, NULL},       {"fifo", &fifo_store_ops, NULL},
    {"lfu", &lfu_store_ops, NULL},       {"sieve", &sieve_store_ops, NULL},
    {"s3fifo", &s3fifo_store_ops, NULL}, {"null", &null_store_ops, NULL},
};

#define N_ROWS (sizeof(engine_rows) / sizeof(engine_rows[0]))

static const char *const engine_name_list[] = {
#if CUDIS_ENGINE_HAVE_CPU
    "cpu",
#endif
#if CUDIS_ENGINE_HAVE_GPU
    "gpu",
#endif
    "lru", "fifo", "lfu", "sieve", "s3fifo", "null", "auto", NULL,
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
    cfg->lfu_log_factor = 10;
    cfg->lfu_decay_time = 1;
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

/* Create the store of one row (with cfg->shards > 1, that many of them
 * behind engine_shards.c, whose table *ops then is); NULL with why on
 * failure. */
static void *row_create(const engine_row *row, const engine_config *cfg,
                        const engine_store_ops **ops, char *why, size_t why_len)
{
    *ops = row->ops;
    if (row->ops == NULL) {
        snprintf(why, why_len, "%s: %s", row->name, row->missing);
        return NULL;
    }
    if (cfg->policy != 0 && row->ops->set_policy == NULL) {
        snprintf(why, why_len, "%s: evicts by its own order only (no eviction policy)", row->name);
        return NULL;
    }
    why[0] = '\0';
    if (cfg->shards > 1) {
        return engine_shards_create(row->ops, cfg, ops, why, why_len);
    }
    void *s = row->ops->create(cfg, why, why_len);
    if (s == NULL && why[0] == '\0') {
        snprintf(why, why_len, "%s: create failed", row->name);
    } else if (s != NULL && why[0] == '\0') {
        snprintf(why, why_len, "%s: %s", row->name, row->ops->description);
    }
    return s;
}

/* A backend over a created store (destroys the store on failure). */
static engine_backend *backend_new(const engine_store_ops *ops, void *store,
                                   const engine_config *cfg)
{
    engine_backend *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        ops->destroy(store);
        return NULL;
    }
    b->ops = ops;
    b->store = store;
    /* The gpu store parallelises on the device; every other store may split
     * a batch over host threads. */
    if (cfg->threads > 1 && strcmp(ops->name, "gpu") != 0) {
        b->pool = engine_pool_create(cfg->threads);
        if (b->pool == NULL) {
            ops->destroy(store);
            free(b);
            return NULL;
        }
    }
    return b;
}

static void backend_free(engine_backend *b)
{
    if (b != NULL) {
        engine_pool_destroy(b->pool);
        b->ops->destroy(b->store);
        free(b);
    }
}

static engine *engine_wrap(const engine_store_ops *ops, void *store, const engine_config *cfg,
                           const engine_store_ops *fallback)
{
    engine *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        ops->destroy(store);
        return NULL;
    }
    e->cur = backend_new(ops, store, cfg);
    if (e->cur == NULL) {
        free(e);
        return NULL;
    }
    e->cfg = *cfg;
    e->fallback = fallback;
    pthread_mutex_init(&e->fo_lock, NULL);
    return e;
}

/* NULL arguments replaced by defaults (a scratch why, the default config). */
static void fill_args(const engine_config **cfg, engine_config *defcfg, char **why,
                      size_t *why_len, char *dummy, size_t dummy_len)
{
    if (*why == NULL || *why_len == 0) {
        *why = dummy;
        *why_len = dummy_len;
    }
    if (*cfg == NULL) {
        engine_config_default(defcfg);
        *cfg = defcfg;
    }
}

/* Create the store of `row` and its engine. */
static engine *create_row_engine(const engine_row *row, const engine_config *cfg,
                                 const engine_store_ops *fallback, char *why, size_t why_len)
{
    const engine_store_ops *ops;
    void *s = row_create(row, cfg, &ops, why, why_len);
    if (s == NULL) {
        return NULL;
    }
    engine *e = engine_wrap(ops, s, cfg, fallback);
    if (e == NULL) {
        snprintf(why, why_len, "%s: out of memory", row->name);
    }
    return e;
}

engine *engine_create_store(const engine_store_ops *ops, const engine_config *cfg,
                            const engine_store_ops *fallback, char *why, size_t why_len)
{
    char dummy[8];
    engine_config defcfg;
    fill_args(&cfg, &defcfg, &why, &why_len, dummy, sizeof(dummy));
    engine_row row = {ops->name, ops, NULL};
    return create_row_engine(&row, cfg, fallback, why, why_len);
}

engine *engine_create(const char *name, const engine_config *cfg_in, char *why, size_t why_len)
{
    char dummy[8];
    engine_config defcfg;
    fill_args(&cfg_in, &defcfg, &why, &why_len, dummy, sizeof(dummy));
    if (name == NULL) {
        name = "auto";
    }

    if (strcmp(name, "auto") == 0) {
        char gwhy[256], cwhy[256];
        const engine_row *gpu = find_row("gpu"), *cpu = find_row("cpu");
        const engine_row *fb = cpu->ops != NULL ? cpu : find_row("lru");
        const engine_store_ops *ops;
        void *s = row_create(gpu, cfg_in, &ops, gwhy, sizeof(gwhy));
        if (s != NULL) {
            snprintf(why, why_len, "auto: using gpu (%s)", gwhy);
            engine *e = engine_wrap(ops, s, cfg_in, fb->ops);
            if (e == NULL) {
                snprintf(why, why_len, "auto: out of memory");
            }
            return e;
        }
        s = row_create(fb, cfg_in, &ops, cwhy, sizeof(cwhy));
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
        engine *e = engine_wrap(ops, s, cfg_in, NULL);
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
    return create_row_engine(row, cfg_in, NULL, why, why_len);
}

void engine_destroy(engine *e)
{
    if (e == NULL) {
        return;
    }
    backend_free(e->cur);
    for (uint32_t i = 0; i < e->n_dead; i++) {
        backend_free(e->dead[i]);
    }
    pthread_mutex_destroy(&e->fo_lock);
    free(e);
}

/* ------------------------------------------------------------------------
 * Device failures
 * ---------------------------------------------------------------------- */

static engine_backend *cur_of(engine *e)
{
    return __atomic_load_n(&e->cur, __ATOMIC_ACQUIRE);
}

/* Backend b failed. Remember why and, with a fallback, put a fresh store in
 * its place (once, whoever sees the failure first). Returns the backend to
 * use now, or NULL when there is none. */
static engine_backend *failover(engine *e, engine_backend *b)
{
    const char *why = b->ops->failure != NULL ? b->ops->failure(b->store) : NULL;
    pthread_mutex_lock(&e->fo_lock);
    engine_backend *now = cur_of(e);
    if (now != b) {
        pthread_mutex_unlock(&e->fo_lock);
        return now; /* another thread already replaced it */
    }
    engine_backend *nb = NULL;
    if (e->failure[0] != '\0' && (e->fallback == NULL || e->n_dead >= ENGINE_MAX_DEAD)) {
        pthread_mutex_unlock(&e->fo_lock);
        return NULL; /* known and logged already */
    }
    snprintf(e->failure, sizeof(e->failure), "%s engine failed: %s", b->ops->name,
             why ? why : "device failure");
    if (e->fallback != NULL && e->n_dead < ENGINE_MAX_DEAD) {
        char fwhy[256] = "";
        engine_row row = {e->fallback->name, e->fallback, NULL};
        const engine_store_ops *fops;
        void *s = row_create(&row, &e->cfg, &fops, fwhy, sizeof(fwhy));
        nb = s != NULL ? backend_new(fops, s, &e->cfg) : NULL;
        size_t n = strlen(e->failure);
        if (nb != NULL) {
            e->dead[e->n_dead++] = b;
            __atomic_store_n(&e->cur, nb, __ATOMIC_RELEASE);
            __atomic_fetch_add(&e->failovers, 1, __ATOMIC_RELAXED);
            snprintf(e->failure + n, sizeof(e->failure) - n,
                     "; switched to a fresh %s engine (the cache restarted empty)",
                     e->fallback->name);
        } else {
            snprintf(e->failure + n, sizeof(e->failure) - n, "; %s fallback failed: %s",
                     e->fallback->name, fwhy);
        }
    }
    fprintf(stderr, "cudis engine: %s\n", e->failure);
    pthread_mutex_unlock(&e->fo_lock);
    return nb;
}

const char *engine_failure(engine *e)
{
    engine_backend *b = cur_of(e);
    if (e->failure[0] == '\0' && b->ops->failure != NULL && b->ops->failure(b->store) != NULL) {
        (void)failover(e, b);
    }
    return e->failure[0] ? e->failure : NULL;
}

uint64_t engine_failovers(engine *e)
{
    return __atomic_load_n(&e->failovers, __ATOMIC_RELAXED);
}

/* The backend to use for a whole-keyspace call: a failed one is replaced
 * first (when it can be). */
static engine_backend *live_of(engine *e)
{
    engine_backend *b = cur_of(e);
    if (b->ops->failure != NULL && b->ops->failure(b->store) != NULL) {
        engine_backend *nb = failover(e, b);
        if (nb != NULL) {
            return nb;
        }
    }
    return b;
}

const char *engine_name(const engine *e)
{
    return cur_of((engine *)e)->ops->name;
}

/* ------------------------------------------------------------------------
 * Calls
 * ---------------------------------------------------------------------- */

static int backend_execute(engine_backend *b, cudis_batch *batch)
{
    if (b->pool != NULL) {
        return engine_pool_execute(b->pool, b->ops, b->store, batch);
    }
    return b->ops->execute(b->store, batch);
}

int engine_execute(engine *e, cudis_batch *batch)
{
    if (batch->n_ops == 0) {
        return CUDIS_OK;
    }
    if (cudis_fault(CUDIS_FAULT_ENGINE)) {
        return CUDIS_E_NOMEM; /* the test build's injected failure: nothing ran */
    }
    engine_backend *b = cur_of(e);
    uint64_t out_len = batch->out_len;
    int rc = backend_execute(b, batch);
    if (rc == CUDIS_E_DEVFAIL) {
        engine_backend *nb = failover(e, b);
        if (nb != NULL) {
            batch->out_len = out_len; /* the batch again, on the fresh store */
            rc = backend_execute(nb, batch);
            ev_mark_lost(batch->ev); /* every key of the dead store is gone */
        }
    }
    return rc;
}

int engine_scan(engine *e, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                cudis_scan_fn fn, void *arg, uint64_t *next)
{
    engine_backend *b = live_of(e);
    if (b->ops->scan == NULL) {
        *next = 0;
        return CUDIS_E_UNSUPPORTED;
    }
    return b->ops->scan(b->store, db, cursor, count, now_ms, fn, arg, next);
}

/* Units of the store engine_expires reads, at most (a CCHT's marked
 * buckets, for the mean TTL), and the keys a store without the op has
 * scanned before its counts are scaled up instead. */
#define ENGINE_EXPIRES_WORK 2048u
#define ENGINE_EXPIRES_SCAN_KEYS 10000u

typedef struct exp_scan {
    cudis_expires *out;
    uint64_t keys[CUDIS_MAX_DBS], total;
    int64_t now;
} exp_scan;

static int exp_collect(void *arg, uint8_t db, const uint8_t *key, uint32_t len, int64_t exp)
{
    (void)key;
    (void)len;
    exp_scan *x = arg;
    x->keys[db]++;
    x->total++;
    if (exp > 0) {
        x->out->keys[db]++;
        x->out->ttl_ms[db] += (double)(exp - x->now);
    }
    return 0;
}

/* A store without the op: scan its first ~10,000 keys (all of them when it
 * holds fewer), scaled by each database's size. */
static void expires_by_scan(engine *e, int64_t now_ms, cudis_expires *out)
{
    exp_scan *x = calloc(1, sizeof(*x));
    if (x == NULL) {
        return; /* out stays zero, not exact */
    }
    x->out = out;
    x->now = now_ms;
    uint64_t cur = 0;
    do {
        uint64_t next = 0;
        if (engine_scan(e, CUDIS_DB_ALL, cur, 4096, now_ms, exp_collect, x, &next) != CUDIS_OK) {
            break;
        }
        cur = next;
    } while (cur != 0 && x->total < ENGINE_EXPIRES_SCAN_KEYS);
    out->exact = cur == 0;
    for (int d = 0; d < CUDIS_MAX_DBS; d++) {
        if (out->keys[d] == 0) {
            continue;
        }
        out->ttl_ms[d] /= (double)out->keys[d];
        if (!out->exact) {
            out->keys[d] = (uint64_t)((double)out->keys[d] * (double)engine_db_size(e, (uint8_t)d) /
                                      (double)x->keys[d]);
        }
    }
    free(x);
}

void engine_expires(engine *e, int64_t now_ms, cudis_expires *out)
{
    engine_backend *b = live_of(e);
    memset(out, 0, sizeof(*out));
    if (b->ops->expires != NULL) {
        b->ops->expires(b->store, now_ms, ENGINE_EXPIRES_WORK, out);
    } else {
        expires_by_scan(e, now_ms, out);
    }
}

int engine_random_key(engine *e, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                      uint32_t *len)
{
    engine_backend *b = live_of(e);
    if (b->ops->random_key == NULL) {
        return CUDIS_E_UNSUPPORTED;
    }
    return b->ops->random_key(b->store, db, now_ms, buf, cap, len);
}

int engine_flush(engine *e, int db)
{
    engine_backend *b = live_of(e);
    if (b->ops->flush == NULL) {
        return CUDIS_E_UNSUPPORTED;
    }
    return b->ops->flush(b->store, db);
}

uint64_t engine_db_size(engine *e, uint8_t db)
{
    engine_backend *b = live_of(e);
    if (b->ops->db_size != NULL) {
        return b->ops->db_size(b->store, db);
    }
    if (db != 0) {
        return 0;
    }
    cudis_stats st;
    engine_stats(e, &st);
    return st.items;
}

int engine_sweep(engine *e, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev)
{
    engine_backend *b = live_of(e);
    if (b->ops->sweep == NULL) {
        return 0;
    }
    return b->ops->sweep(b->store, now_ms, max_work, ev);
}

#define EXPIRE_MIN_SLICE 4096u
#define EXPIRE_MAX_SLICE 262144u

int engine_expire_tick(engine *e, int64_t now_ms, int hz, cudis_evbuf *ev)
{
    engine_backend *b = live_of(e);
    if (b->ops->sweep == NULL) {
        return 0;
    }
    uint64_t units;
    if (b->ops->sweep_units != NULL) {
        units = b->ops->sweep_units(b->store);
    } else {
        cudis_stats st;
        engine_stats(e, &st);
        units = st.capacity;
    }
    /* a pass every half second while expired items turn up, within a few
     * ms a tick; a pass is as long as it was when it began (the store's
     * units shrink as it reclaims) */
    if (e->exp_pass_done == 0 || units > e->exp_pass_units) {
        e->exp_pass_units = units;
    }
    units = e->exp_pass_units;
    uint64_t half = 2 * units / (uint64_t)(hz > 0 ? hz : 1);
    uint64_t cap = half < EXPIRE_MIN_SLICE   ? EXPIRE_MIN_SLICE
                   : half > EXPIRE_MAX_SLICE ? EXPIRE_MAX_SLICE
                                             : half;
    if (e->exp_work < EXPIRE_MIN_SLICE) {
        e->exp_work = EXPIRE_MIN_SLICE;
    }
    if (e->exp_work > cap) {
        e->exp_work = cap;
    }
    uint64_t work = e->exp_work;
    int n = b->ops->sweep(b->store, now_ms, (uint32_t)work, ev);
    if (n < 0) {
        n = 0;
    }
    e->exp_pass_done += work;
    e->exp_pass_found += (uint64_t)n;
    if (n > 0) {
        e->exp_work = cap;
    } else if (e->exp_pass_found == 0 && e->exp_last_found == 0) {
        e->exp_work /= 2;
    }
    if (e->exp_pass_done >= units) {
        e->exp_last_found = e->exp_pass_found;
        e->exp_pass_done = 0;
        e->exp_pass_found = 0;
    }
    return n;
}

int engine_policy_code(const char *name, uint32_t *code)
{
    static const char *const names[CUDIS_POL__COUNT] = {
        [CUDIS_POL_ALLKEYS_LRU] = "allkeys-lru",
        [CUDIS_POL_NOEVICTION] = "noeviction",
        [CUDIS_POL_VOLATILE_LRU] = "volatile-lru",
        [CUDIS_POL_ALLKEYS_RANDOM] = "allkeys-random",
        [CUDIS_POL_VOLATILE_RANDOM] = "volatile-random",
        [CUDIS_POL_VOLATILE_TTL] = "volatile-ttl",
        [CUDIS_POL_ALLKEYS_LFU] = "allkeys-lfu",
        [CUDIS_POL_VOLATILE_LFU] = "volatile-lfu",
        [CUDIS_POL_ALLKEYS_CUDIS] = "allkeys-cudis",
        [CUDIS_POL_ALLKEYS_RRIP] = "allkeys-rrip",
    };
    for (uint32_t i = 0; i < CUDIS_POL__COUNT; i++) {
        if (!strcmp(names[i], name)) {
            *code = i;
            return 0;
        }
    }
    return -1;
}

uint64_t engine_clock(engine *e)
{
    engine_backend *b = cur_of(e);
    return b->ops->clock != NULL ? b->ops->clock(b->store) : 0;
}

int engine_index_tick(engine *e, int64_t now_ms, cudis_evbuf *ev)
{
    engine_backend *b = live_of(e);
    if (b->ops->index_tick == NULL) {
        return 0;
    }
    return b->ops->index_tick(b->store, now_ms, ev);
}

void engine_index_expect(engine *e, uint64_t items, uint64_t item_bytes)
{
    engine_backend *b = live_of(e);
    if (b->ops->index_expect != NULL) {
        b->ops->index_expect(b->store, items, item_bytes);
    }
}

void engine_clock_tick(engine *e)
{
    engine_backend *b = cur_of(e);
    if (b->ops->clock_tick != NULL) {
        b->ops->clock_tick(b->store);
    }
}

int engine_set_memory(engine *e, uint64_t bytes, uint64_t *in_force)
{
    pthread_mutex_lock(&e->fo_lock); /* a failover's fresh store takes it too */
    engine_backend *b = live_of(e);
    int rc = CUDIS_E_UNSUPPORTED;
    if (b->ops->set_memory != NULL) {
        *in_force = b->ops->set_memory(b->store, bytes);
        e->cfg.memory_bytes = *in_force;
        rc = CUDIS_OK;
    }
    pthread_mutex_unlock(&e->fo_lock);
    return rc;
}

int engine_set_policy(engine *e, uint32_t policy, uint32_t lfu_log_factor, uint32_t lfu_decay_time)
{
    pthread_mutex_lock(&e->fo_lock); /* a failover's fresh store takes it too */
    engine_backend *b = live_of(e);
    int rc = b->ops->set_policy != NULL
                 ? b->ops->set_policy(b->store, policy, lfu_log_factor, lfu_decay_time)
             : policy == 0 ? CUDIS_OK
                           : CUDIS_E_UNSUPPORTED;
    if (rc == CUDIS_OK) {
        e->cfg.policy = policy;
        e->cfg.lfu_log_factor = lfu_log_factor;
        e->cfg.lfu_decay_time = lfu_decay_time;
    }
    pthread_mutex_unlock(&e->fo_lock);
    return rc;
}

void engine_stats(engine *e, cudis_stats *out)
{
    engine_backend *b = live_of(e);
    if (b->ops->stats == NULL) {
        memset(out, 0, sizeof(*out));
        return;
    }
    b->ops->stats(b->store, out);
}

void engine_reset_stats(engine *e)
{
    engine_backend *b = live_of(e);
    if (b->ops->reset_stats != NULL) {
        b->ops->reset_stats(b->store);
    }
}

size_t engine_info(engine *e, char *buf, size_t cap)
{
    engine_backend *b = live_of(e);
    const char *f = engine_failure(e);
    int n = snprintf(buf, cap, "engine_failovers:%llu\r\nengine_failure:%s\r\n",
                     (unsigned long long)engine_failovers(e), f ? f : "");
    size_t at = n < 0 ? 0 : (size_t)n;
    if (b->ops->info != NULL) {
        at += b->ops->info(b->store, at < cap ? buf + at : NULL, at < cap ? cap - at : 0);
    }
    return at;
}
