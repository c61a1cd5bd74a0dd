/*
 * cudis_rt.c - read-through caching over a pool and a table. A call gets
 * the rows with cudis_vget(); its misses are then handled per policy:
 *   FILL     the loader runs now, rows are written back (cudis_vset), the
 *            caller gets complete rows;
 *   DEFAULT  misses get the default row at once and their ids go to a
 *            bounded queue (deduplicated) that a worker thread loads and
 *            writes back;
 *   AUTO     DEFAULT once the hit ratio of the last window_ids ids reaches
 *            hit_threshold, FILL again when it drops below hit_threshold -
 *            hysteresis (NVIDIA HPS's scheme: when
 *            the cache is warm, a miss must not cost a loader round trip).
 * If the cache itself fails (server down), the rows of the failed part are
 * treated as misses, so the caller still gets rows from the loader.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_internal.h"
#include "cudis_time.h"

#define RT_WORKER_BATCH 1024

typedef struct rt_counters {
    _Atomic uint64_t calls, ids, hits, misses, bad_len;
    _Atomic uint64_t loader_calls, loader_ids, loader_errors, loader_ns;
    _Atomic uint64_t filled_sync, defaulted, filled_async, queue_dropped, writeback_errors;
    _Atomic uint64_t mode_switches;
} rt_counters;

struct cudis_rt {
    cudis_pool *pool;
    const cudis_table *t;
    cudis_loader_fn loader;
    void *loader_arg;
    cudis_rt_options opt;
    uint8_t *default_row;
    rt_counters st;

    /* AUTO: two half-windows of recent ids and hits */
    pthread_mutex_t win_mu;
    uint64_t win_ids[2], win_hits[2];
    int mode; /* effective: CUDIS_MISS_FILL or CUDIS_MISS_DEFAULT */

    /* background queue of ids, deduplicated by a set of pending ids */
    pthread_mutex_t q_mu;
    pthread_cond_t q_cv;    /* work arrived / stop */
    pthread_cond_t idle_cv; /* queue drained and worker idle */
    uint64_t *q;
    size_t q_cap, q_head, q_len;
    uint64_t *set_keys; /* open addressing, linear probing */
    uint8_t *set_used;
    size_t set_mask;
    bool busy, stop;
    pthread_t worker;
};

/* ===================================================================== */
/* Pending-id set (caller holds q_mu)                                    */
/* ===================================================================== */

static size_t set_slot(uint64_t id, size_t mask)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return (size_t)id & mask;
}

/* Insert; false if already present. The set is sized for the queue plus a
 * worker batch, so it never fills. */
static bool do_set_add(cudis_rt *rt, uint64_t id)
{
    size_t i = set_slot(id, rt->set_mask);
    while (rt->set_used[i]) {
        if (rt->set_keys[i] == id) {
            return false;
        }
        i = (i + 1) & rt->set_mask;
    }
    rt->set_used[i] = 1;
    rt->set_keys[i] = id;
    return true;
}

static void do_set_del(cudis_rt *rt, uint64_t id)
{
    size_t m = rt->set_mask, i = set_slot(id, m);
    while (rt->set_used[i] && rt->set_keys[i] != id) {
        i = (i + 1) & m;
    }
    if (!rt->set_used[i]) {
        return;
    }
    /* backward-shift deletion keeps probe chains intact */
    size_t j = i;
    for (;;) {
        j = (j + 1) & m;
        if (!rt->set_used[j]) {
            break;
        }
        size_t home = set_slot(rt->set_keys[j], m);
        bool move = (i <= j) ? (home <= i || home > j) : (home <= i && home > j);
        if (move) {
            rt->set_keys[i] = rt->set_keys[j];
            i = j;
        }
    }
    rt->set_used[i] = 0;
}

/* ===================================================================== */
/* Loader + write-back                                                   */
/* ===================================================================== */

static int rt_load(cudis_rt *rt, size_t n, const uint64_t *ids, void *rows)
{
    uint64_t t0 = cudis_mono_ns();
    int rc = rt->loader(rt->loader_arg, n, ids, rows);
    atomic_fetch_add_explicit(&rt->st.loader_ns, cudis_mono_ns() - t0, memory_order_relaxed);
    atomic_fetch_add_explicit(&rt->st.loader_calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&rt->st.loader_ids, n, memory_order_relaxed);
    if (rc) {
        atomic_fetch_add_explicit(&rt->st.loader_errors, 1, memory_order_relaxed);
        return rc < 0 ? rc : CUDIS_E_IO;
    }
    return 0;
}

static void rt_writeback(cudis_rt *rt, size_t n, const uint64_t *ids, const void *rows)
{
    cudis_conn *c = NULL;
    int rc = cudis_pool_acquire(rt->pool, rt->opt.pool_wait_ms, &c);
    if (rc == 0) {
        rc = cudis_vset(c, rt->t, n, ids, rows, rt->opt.ttl_ms, NULL, NULL);
        cudis_pool_release(rt->pool, c);
    }
    if (rc) {
        atomic_fetch_add_explicit(&rt->st.writeback_errors, 1, memory_order_relaxed);
    }
}

static void *rt_worker(void *arg)
{
    cudis_rt *rt = arg;
    size_t rb = rt->t->row_bytes;
    uint64_t *ids = malloc(RT_WORKER_BATCH * sizeof(*ids));
    uint8_t *rows = malloc(RT_WORKER_BATCH * rb);
    pthread_mutex_lock(&rt->q_mu);
    for (;;) {
        while (rt->q_len == 0 && !rt->stop) {
            rt->busy = false;
            pthread_cond_broadcast(&rt->idle_cv);
            pthread_cond_wait(&rt->q_cv, &rt->q_mu);
        }
        if (rt->q_len == 0 && rt->stop) {
            break;
        }
        rt->busy = true;
        size_t n = 0;
        while (rt->q_len > 0 && n < RT_WORKER_BATCH) {
            ids[n++] = rt->q[rt->q_head];
            rt->q_head = (rt->q_head + 1) % rt->q_cap;
            rt->q_len--;
        }
        pthread_mutex_unlock(&rt->q_mu);
        if (ids && rows && rt_load(rt, n, ids, rows) == 0) {
            rt_writeback(rt, n, ids, rows);
            atomic_fetch_add_explicit(&rt->st.filled_async, n, memory_order_relaxed);
        }
        pthread_mutex_lock(&rt->q_mu);
        for (size_t i = 0; i < n; i++) {
            do_set_del(rt, ids[i]);
        }
    }
    rt->busy = false;
    pthread_cond_broadcast(&rt->idle_cv);
    pthread_mutex_unlock(&rt->q_mu);
    free(ids);
    free(rows);
    return NULL;
}

/* ===================================================================== */
/* Life cycle                                                            */
/* ===================================================================== */

void cudis_rt_options_default(cudis_rt_options *o)
{
    memset(o, 0, sizeof(*o));
    o->policy = CUDIS_MISS_AUTO;
    o->hit_threshold = 0.9;
    o->hysteresis = 0.02;
    o->window_ids = 10000;
    o->queue_ids = 65536;
    o->pool_wait_ms = 1000;
}

cudis_rt *cudis_rt_create(cudis_pool *p, const cudis_table *t, cudis_loader_fn loader, void *arg,
                          const cudis_rt_options *o, char *err, size_t err_len)
{
    if (!p || !t || !loader) {
        if (err) {
            snprintf(err, err_len, "pool, table and loader are required");
        }
        return NULL;
    }
    cudis_rt *rt = calloc(1, sizeof(*rt));
    if (!rt) {
        goto nomem;
    }
    rt->pool = p;
    rt->t = t;
    rt->loader = loader;
    rt->loader_arg = arg;
    if (o) {
        rt->opt = *o;
    } else {
        cudis_rt_options_default(&rt->opt);
    }
    if (rt->opt.window_ids < 2) {
        rt->opt.window_ids = 10000;
    }
    if (rt->opt.queue_ids == 0) {
        rt->opt.queue_ids = 65536;
    }
    if (rt->opt.pool_wait_ms == 0) {
        rt->opt.pool_wait_ms = 1000;
    }
    rt->default_row = calloc(1, t->row_bytes);
    if (!rt->default_row) {
        goto nomem;
    }
    if (rt->opt.default_row) {
        memcpy(rt->default_row, rt->opt.default_row, t->row_bytes);
    }
    rt->opt.default_row = NULL;
    rt->mode = rt->opt.policy == CUDIS_MISS_DEFAULT ? CUDIS_MISS_DEFAULT : CUDIS_MISS_FILL;
    rt->q_cap = rt->opt.queue_ids;
    size_t sc = 16;
    while (sc < 2 * (rt->q_cap + RT_WORKER_BATCH)) {
        sc *= 2;
    }
    rt->set_mask = sc - 1;
    rt->q = malloc(rt->q_cap * sizeof(*rt->q));
    rt->set_keys = malloc(sc * sizeof(*rt->set_keys));
    rt->set_used = calloc(sc, 1);
    if (!rt->q || !rt->set_keys || !rt->set_used) {
        goto nomem;
    }
    pthread_mutex_init(&rt->win_mu, NULL);
    pthread_mutex_init(&rt->q_mu, NULL);
    pthread_cond_init(&rt->q_cv, NULL);
    pthread_cond_init(&rt->idle_cv, NULL);
    rt->busy = true; /* until the worker first waits */
    if (pthread_create(&rt->worker, NULL, rt_worker, rt) != 0) {
        pthread_mutex_destroy(&rt->win_mu);
        pthread_mutex_destroy(&rt->q_mu);
        pthread_cond_destroy(&rt->q_cv);
        pthread_cond_destroy(&rt->idle_cv);
        if (err) {
            snprintf(err, err_len, "cannot start the worker thread");
        }
        goto fail;
    }
    return rt;
nomem:
    if (err) {
        snprintf(err, err_len, "out of memory");
    }
fail:
    if (rt) {
        free(rt->default_row);
        free(rt->q);
        free(rt->set_keys);
        free(rt->set_used);
        free(rt);
    }
    return NULL;
}

void cudis_rt_destroy(cudis_rt *rt)
{
    if (!rt) {
        return;
    }
    pthread_mutex_lock(&rt->q_mu);
    rt->stop = true;
    pthread_cond_signal(&rt->q_cv);
    pthread_mutex_unlock(&rt->q_mu);
    pthread_join(rt->worker, NULL);
    pthread_mutex_destroy(&rt->win_mu);
    pthread_mutex_destroy(&rt->q_mu);
    pthread_cond_destroy(&rt->q_cv);
    pthread_cond_destroy(&rt->idle_cv);
    free(rt->default_row);
    free(rt->q);
    free(rt->set_keys);
    free(rt->set_used);
    free(rt);
}

void cudis_rt_flush(cudis_rt *rt)
{
    pthread_mutex_lock(&rt->q_mu);
    while (rt->q_len > 0 || rt->busy) {
        pthread_cond_wait(&rt->idle_cv, &rt->q_mu);
    }
    pthread_mutex_unlock(&rt->q_mu);
}

/* ===================================================================== */
/* Mode selection                                                        */
/* ===================================================================== */

static int rt_pick_mode(cudis_rt *rt)
{
    if (rt->opt.policy != CUDIS_MISS_AUTO) {
        return rt->opt.policy;
    }
    pthread_mutex_lock(&rt->win_mu);
    int m = rt->mode;
    pthread_mutex_unlock(&rt->win_mu);
    return m;
}

static void rt_record(cudis_rt *rt, uint64_t ids, uint64_t hits)
{
    pthread_mutex_lock(&rt->win_mu);
    rt->win_ids[0] += ids;
    rt->win_hits[0] += hits;
    uint64_t half = rt->opt.window_ids / 2;
    if (rt->win_ids[0] >= half) {
        rt->win_ids[1] = rt->win_ids[0];
        rt->win_hits[1] = rt->win_hits[0];
        rt->win_ids[0] = rt->win_hits[0] = 0;
    }
    if (rt->opt.policy == CUDIS_MISS_AUTO) {
        uint64_t wi = rt->win_ids[0] + rt->win_ids[1];
        uint64_t wh = rt->win_hits[0] + rt->win_hits[1];
        /* to DEFAULT at >= threshold, back to FILL below threshold - hysteresis */
        double bar = rt->opt.hit_threshold;
        if (rt->mode == CUDIS_MISS_DEFAULT) {
            bar -= rt->opt.hysteresis;
        }
        int want = CUDIS_MISS_FILL;
        if (wi >= half && (double)wh >= bar * (double)wi) {
            want = CUDIS_MISS_DEFAULT;
        }
        if (want != rt->mode) {
            rt->mode = want;
            atomic_fetch_add_explicit(&rt->st.mode_switches, 1, memory_order_relaxed);
        }
    }
    pthread_mutex_unlock(&rt->win_mu);
}

/* ===================================================================== */
/* Lookups                                                               */
/* ===================================================================== */

static void rt_enqueue(cudis_rt *rt, size_t m, const uint64_t *ids)
{
    uint64_t dropped = 0;
    pthread_mutex_lock(&rt->q_mu);
    for (size_t i = 0; i < m; i++) {
        if (rt->q_len == rt->q_cap) {
            dropped += m - i;
            break;
        }
        if (!do_set_add(rt, ids[i])) {
            continue; /* already queued or loading */
        }
        rt->q[(rt->q_head + rt->q_len) % rt->q_cap] = ids[i];
        rt->q_len++;
    }
    pthread_cond_signal(&rt->q_cv);
    pthread_mutex_unlock(&rt->q_mu);
    if (dropped) {
        atomic_fetch_add_explicit(&rt->st.queue_dropped, dropped, memory_order_relaxed);
    }
}

/* Distinct ids of the misses: uids[0..*u) and, per miss j, slot[j] = its
 * index in uids. A request often names a hot id twice; the loader and the
 * write-back then see it once (and no MSET carries one key twice). */
static int dedupe(size_t m, const uint64_t *mids, uint64_t *uids, size_t *slot, size_t *u)
{
    size_t cap = 16;
    while (cap < 2 * m) {
        cap *= 2;
    }
    size_t *tab = calloc(cap, sizeof(*tab)); /* uids index + 1; 0 = empty */
    if (!tab) {
        return CUDIS_E_NOMEM;
    }
    *u = 0;
    for (size_t j = 0; j < m; j++) {
        size_t h = set_slot(mids[j], cap - 1);
        while (tab[h] && uids[tab[h] - 1] != mids[j]) {
            h = (h + 1) & (cap - 1);
        }
        if (!tab[h]) {
            uids[*u] = mids[j];
            tab[h] = ++*u;
        }
        slot[j] = tab[h] - 1;
    }
    free(tab);
    return 0;
}

/* The m misses of a call (found[i] != HIT) per the policy. */
static int rt_handle_misses(cudis_rt *rt, int mode, size_t n, const uint64_t *ids, void *rows,
                            uint8_t *found, size_t m, bool cache_ok)
{
    const size_t rb = rt->t->row_bytes;
    uint64_t *mids = malloc(m * sizeof(*mids)), *uids = malloc(m * sizeof(*uids));
    size_t *midx = malloc(m * sizeof(*midx)), *slot = malloc(m * sizeof(*slot)), u = 0;
    uint8_t *urows = NULL;
    int rc = CUDIS_E_NOMEM;
    if (!mids || !uids || !midx || !slot) {
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (found[i] != CUDIS_ROW_HIT) {
            mids[k] = ids[i];
            midx[k++] = i;
        }
    }
    if ((rc = dedupe(m, mids, uids, slot, &u)) != 0) {
        goto out;
    }
    if (mode == CUDIS_MISS_FILL) {
        if (!(urows = malloc(u * rb))) {
            rc = CUDIS_E_NOMEM;
            goto out;
        }
        rc = rt_load(rt, u, uids, urows);
        for (size_t j = 0; j < m; j++) {
            if (rc == 0) {
                memcpy((uint8_t *)rows + midx[j] * rb, urows + slot[j] * rb, rb);
                found[midx[j]] = CUDIS_ROW_MISS;
            } else {
                found[midx[j]] = CUDIS_ROW_FAILED;
            }
        }
        if (rc == 0) {
            if (cache_ok) {
                rt_writeback(rt, u, uids, urows);
            } else {
                /* the cache just failed: do not wait for it a second time */
                atomic_fetch_add_explicit(&rt->st.writeback_errors, 1, memory_order_relaxed);
            }
            atomic_fetch_add_explicit(&rt->st.filled_sync, m, memory_order_relaxed);
        }
    } else {
        for (size_t j = 0; j < m; j++) {
            memcpy((uint8_t *)rows + midx[j] * rb, rt->default_row, rb);
            found[midx[j]] = CUDIS_ROW_MISS;
        }
        atomic_fetch_add_explicit(&rt->st.defaulted, m, memory_order_relaxed);
        rt_enqueue(rt, u, uids);
        rc = 0;
    }
out:
    if (rc == CUDIS_E_NOMEM && !urows) { /* failed before any row was filled */
        for (size_t i = 0; i < n; i++) {
            if (found[i] != CUDIS_ROW_HIT) {
                found[i] = CUDIS_ROW_FAILED;
            }
        }
    }
    free(mids);
    free(uids);
    free(midx);
    free(slot);
    free(urows);
    return rc;
}

int cudis_rt_get(cudis_rt *rt, size_t n, const uint64_t *ids, void *rows, uint8_t *found)
{
    uint8_t *own_found = NULL;
    if (!found) {
        found = own_found = malloc(n ? n : 1);
        if (!found) {
            return CUDIS_E_NOMEM;
        }
    }
    int mode = rt_pick_mode(rt);
    cudis_conn *c = NULL;
    cudis_vresult vr = {0};
    int cache_rc = cudis_pool_acquire(rt->pool, rt->opt.pool_wait_ms, &c);
    if (cache_rc == 0) {
        cache_rc = cudis_vget(c, rt->t, n, ids, rows, found, &vr);
        cudis_pool_release(rt->pool, c);
    } else {
        memset(found, CUDIS_ROW_FAILED, n);
    }
    /* rows the cache did not answer are treated as misses below */

    size_t hits = 0;
    for (size_t i = 0; i < n; i++) {
        hits += found[i] == CUDIS_ROW_HIT;
    }
    size_t m = n - hits;
    atomic_fetch_add_explicit(&rt->st.calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&rt->st.ids, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&rt->st.hits, hits, memory_order_relaxed);
    atomic_fetch_add_explicit(&rt->st.misses, m, memory_order_relaxed);
    atomic_fetch_add_explicit(&rt->st.bad_len, vr.bad_len, memory_order_relaxed);
    rt_record(rt, n, hits);

    int rc = 0;
    if (m > 0) {
        rc = rt_handle_misses(rt, mode, n, ids, rows, found, m, cache_rc == 0);
    }
    free(own_found);
    return rc;
}

void cudis_rt_stats_get(cudis_rt *rt, cudis_rt_stats *o)
{
    memset(o, 0, sizeof(*o));
#define RT_LOAD(f) o->f = atomic_load_explicit(&rt->st.f, memory_order_relaxed)
    RT_LOAD(calls);
    RT_LOAD(ids);
    RT_LOAD(hits);
    RT_LOAD(misses);
    RT_LOAD(bad_len);
    RT_LOAD(loader_calls);
    RT_LOAD(loader_ids);
    RT_LOAD(loader_errors);
    RT_LOAD(loader_ns);
    RT_LOAD(filled_sync);
    RT_LOAD(defaulted);
    RT_LOAD(filled_async);
    RT_LOAD(queue_dropped);
    RT_LOAD(writeback_errors);
    RT_LOAD(mode_switches);
#undef RT_LOAD
    pthread_mutex_lock(&rt->win_mu);
    o->mode = rt->mode;
    uint64_t wi = rt->win_ids[0] + rt->win_ids[1];
    uint64_t wh = rt->win_hits[0] + rt->win_hits[1];
    pthread_mutex_unlock(&rt->win_mu);
    if (wi == 0) {
        wi = o->ids;
        wh = o->hits;
    }
    o->recent_hit_ratio = wi ? (double)wh / (double)wi : 0.0;
}
