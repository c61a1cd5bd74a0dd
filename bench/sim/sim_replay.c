/*
 * sim_replay.c - replays a trace through one engine in batches, on one or
 * several threads, and counts hits. See sim_replay.h for the two batching
 * modes and why the exact one equals one-request-at-a-time replay.
 */
#include "sim_replay.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudis_err.h"
#include "cudis_op.h"
#include "cudis_time.h"
#include "engine.h"

#define SIM_KEY_LEN 8
#define SIM_PROGRESS_EVERY 65536

typedef struct sim_worker {
    engine *e;
    const sim_trace *t;
    const sim_run_cfg *cfg;
    const uint32_t *idx; /* this thread's requests (trace positions); NULL = all */
    size_t n;
    uint32_t B;
    int64_t now_ms;
    bool reports; /* calls cfg->progress */
    uint32_t nthreads;
    uint64_t pass;
    pthread_barrier_t *start; /* threads > 1: all start a pass together */

    /* batch buffers */
    cudis_op *ops;
    cudis_result *res;
    uint8_t *in; /* [filler: value bytes every SET points into][keys: 8 * B] */
    size_t key_base;
    uint8_t *out;
    uint64_t out_cap;

    /* the current window of distinct upcoming requests */
    size_t *wreq; /* trace positions */
    uint32_t *miss;
    sim_kset set;
    double run_avg; /* exact mode: recent requests per step */

    /* look-aside mode: the whole stream is prepared before the clock starts
     * (batch boundaries do not depend on the engine's answers), so the timed
     * loop does little besides engine calls */
    cudis_op *pops; /* one GET per request of this thread */
    uint8_t *pin;   /* [filler][8 * n keys] */
    size_t *bstart; /* batch i = requests bstart[i] .. bstart[i + 1] - 1 */
    size_t nbatches;

    /* results of one pass */
    uint64_t requests, hits, calls, set_failed;
    int set_error;
    int err;
    char why[160];
    uint64_t t0, t1;
    uint64_t cpu0, cpu1; /* this thread's CPU time (ns) */
} sim_worker;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline size_t req_at(const sim_worker *w, size_t i)
{
    return w->idx != NULL ? w->idx[i] : i;
}

static int run_ops(sim_worker *w, const cudis_op *ops, const uint8_t *in, uint32_t n)
{
    cudis_batch b;
    memset(&b, 0, sizeof(b));
    b.ops = ops;
    b.n_ops = n;
    b.in = in;
    b.res = w->res;
    b.out = w->out;
    b.out_cap = w->out_cap;
    b.out_len = 0;
    b.now_ms = w->now_ms;
    w->calls++;
    int rc = engine_execute(w->e, &b);
    if (rc != CUDIS_OK) {
        snprintf(w->why, sizeof(w->why), "engine_execute failed: %s", cudis_strerror(rc));
        w->err = rc;
    }
    return rc;
}

static int run_batch(sim_worker *w, uint32_t n)
{
    return run_ops(w, w->ops, w->in, n);
}

static void set_op(sim_worker *w, uint32_t i, uint8_t code, uint32_t j)
{
    cudis_op *op = &w->ops[i];
    memset(op, 0, sizeof(*op));
    op->code = code;
    op->key_len = SIM_KEY_LEN;
    op->key_off = w->key_base + (uint64_t)SIM_KEY_LEN * j;
    if (code == CUDIS_OP_SET) {
        op->val_off = 0;
        op->val_len = w->cfg->use_sizes && w->t->sizes != NULL ? w->t->sizes[w->wreq[j]]
                                                               : (uint32_t)w->key_base;
    }
}

/* Up to W distinct requests from position pos (cut before the first repeat);
 * their keys go into the input buffer. Returns how many (>= 1). */
static uint32_t build_window(sim_worker *w, size_t pos, uint32_t W)
{
    sim_kset_clear(&w->set);
    uint32_t k = 0;
    while (k < W && pos + k < w->n) {
        size_t r = req_at(w, pos + k);
        uint64_t key = w->t->keys[r];
        if (!sim_kset_add(&w->set, key)) {
            break;
        }
        w->wreq[k] = r;
        uint8_t *kp = w->in + w->key_base + (size_t)SIM_KEY_LEN * k;
        for (int b = 0; b < 8; b++) {
            kp[b] = (uint8_t)(key >> (8 * b));
        }
        k++;
    }
    return k;
}

/* GET window positions 0..g-1, then SET the misses. */
static int get_then_set(sim_worker *w, uint32_t g)
{
    for (uint32_t j = 0; j < g; j++) {
        set_op(w, j, CUDIS_OP_GET, j);
    }
    if (run_batch(w, g) != CUDIS_OK) {
        return w->err;
    }
    uint32_t nm = 0;
    for (uint32_t j = 0; j < g; j++) {
        if (w->res[j].status != CUDIS_OK) {
            snprintf(w->why, sizeof(w->why), "GET failed: %s", cudis_strerror(w->res[j].status));
            return w->err = w->res[j].status;
        }
        if (w->res[j].flags & CUDIS_R_FOUND) {
            w->hits++;
        } else {
            w->miss[nm++] = j;
        }
    }
    w->requests += g;
    if (nm == 0) {
        return CUDIS_OK;
    }
    for (uint32_t i = 0; i < nm; i++) {
        set_op(w, i, CUDIS_OP_SET, w->miss[i]);
    }
    if (run_batch(w, nm) != CUDIS_OK) {
        return w->err;
    }
    for (uint32_t i = 0; i < nm; i++) {
        if (w->res[i].status != CUDIS_OK) {
            if (w->set_error == 0) {
                w->set_error = w->res[i].status;
            }
            w->set_failed++;
        }
    }
    return CUDIS_OK;
}

/* Exact mode, one step: probe, then GET up to and including the first
 * absent key. Returns the requests consumed, 0 on error. */
static uint32_t step_exact(sim_worker *w, size_t pos)
{
    double want = 2.0 * w->run_avg + 1.0;
    uint32_t W = want >= (double)w->B ? w->B : (uint32_t)want;
    if (W < 1) {
        W = 1;
    }
    uint32_t k = build_window(w, pos, W);
    uint32_t g = k;
    if (k > 1) {
        for (uint32_t j = 0; j < k; j++) {
            set_op(w, j, CUDIS_OP_EXISTS, j);
        }
        if (run_batch(w, k) != CUDIS_OK) {
            return 0;
        }
        for (uint32_t j = 0; j < k; j++) {
            if (!(w->res[j].flags & CUDIS_R_FOUND)) {
                g = j + 1;
                break;
            }
        }
    }
    if (get_then_set(w, g) != CUDIS_OK) {
        return 0;
    }
    w->run_avg = 0.875 * w->run_avg + 0.125 * (double)g;
    return g;
}

/* Look-aside: cut this thread's stream into batches of up to B distinct
 * keys and build every GET op (outside the timed loop). */
static int prepare_lookaside(sim_worker *w)
{
    size_t filler = w->key_base;
    w->pops = malloc((w->n > 0 ? w->n : 1) * sizeof(cudis_op));
    w->pin = malloc(filler + (size_t)SIM_KEY_LEN * (w->n > 0 ? w->n : 1));
    w->bstart = malloc((w->n + 2) * sizeof(size_t));
    if (w->pops == NULL || w->pin == NULL || w->bstart == NULL) {
        return CUDIS_E_NOMEM;
    }
    memcpy(w->pin, w->in, filler);
    size_t nb = 0;
    sim_kset_clear(&w->set);
    for (size_t i = 0; i < w->n; i++) {
        uint64_t key = w->t->keys[req_at(w, i)];
        if (i == 0 || w->set.count == w->B || !sim_kset_add(&w->set, key)) {
            w->bstart[nb++] = i;
            sim_kset_clear(&w->set);
            sim_kset_add(&w->set, key);
        }
        uint8_t *kp = w->pin + filler + (size_t)SIM_KEY_LEN * i;
        for (int b = 0; b < 8; b++) {
            kp[b] = (uint8_t)(key >> (8 * b));
        }
        cudis_op *op = &w->pops[i];
        memset(op, 0, sizeof(*op));
        op->code = CUDIS_OP_GET;
        op->key_len = SIM_KEY_LEN;
        op->key_off = filler + (uint64_t)SIM_KEY_LEN * i;
    }
    w->bstart[nb] = w->n;
    w->nbatches = nb;
    return CUDIS_OK;
}

/* Look-aside replay of the prepared stream: GET batch, SET its misses. */
static void replay_lookaside(sim_worker *w)
{
    bool sizes = w->cfg->use_sizes && w->t->sizes != NULL;
    uint32_t vlen = (uint32_t)w->key_base;
    size_t next_report = SIM_PROGRESS_EVERY;
    for (size_t bi = 0; bi < w->nbatches; bi++) {
        size_t s = w->bstart[bi];
        uint32_t g = (uint32_t)(w->bstart[bi + 1] - s);
        if (run_ops(w, w->pops + s, w->pin, g) != CUDIS_OK) {
            return;
        }
        uint32_t nm = 0;
        for (uint32_t j = 0; j < g; j++) {
            const cudis_result *r = &w->res[j];
            if (r->status != CUDIS_OK) {
                snprintf(w->why, sizeof(w->why), "GET failed: %s", cudis_strerror(r->status));
                w->err = r->status;
                return;
            }
            if (r->flags & CUDIS_R_FOUND) {
                w->hits++;
            } else {
                cudis_op *op = &w->ops[nm++];
                *op = w->pops[s + j];
                op->code = CUDIS_OP_SET;
                op->val_len = sizes ? w->t->sizes[req_at(w, s + j)] : vlen;
            }
        }
        w->requests += g;
        if (nm > 0) {
            if (run_ops(w, w->ops, w->pin, nm) != CUDIS_OK) {
                return;
            }
            for (uint32_t i = 0; i < nm; i++) {
                if (w->res[i].status != CUDIS_OK) {
                    if (w->set_error == 0) {
                        w->set_error = w->res[i].status;
                    }
                    w->set_failed++;
                }
            }
        }
        if (w->reports && s + g >= next_report) {
            next_report = s + g + SIM_PROGRESS_EVERY;
            w->cfg->progress(w->cfg->progress_arg, w->pass, (uint64_t)(s + g) * w->nthreads,
                             w->t->n);
        }
    }
}

static void *worker_main(void *arg)
{
    sim_worker *w = arg;
    w->requests = w->hits = 0;
    w->run_avg = (double)w->B / 2;
    uint64_t next_report = SIM_PROGRESS_EVERY;
    if (w->start != NULL) {
        pthread_barrier_wait(w->start);
    }
    w->cpu0 = thread_cpu_ns();
    w->t0 = cudis_mono_ns();
    if (w->cfg->mode == SIM_REPLAY_LOOKASIDE) {
        replay_lookaside(w);
        w->t1 = cudis_mono_ns();
        w->cpu1 = thread_cpu_ns();
        return NULL;
    }
    size_t pos = 0;
    while (pos < w->n) {
        uint32_t g = step_exact(w, pos);
        if (g == 0) {
            break;
        }
        pos += g;
        if (w->reports && pos >= next_report) {
            next_report = pos + SIM_PROGRESS_EVERY;
            w->cfg->progress(w->cfg->progress_arg, w->pass, (uint64_t)pos * w->nthreads, w->t->n);
        }
    }
    w->t1 = cudis_mono_ns();
    w->cpu1 = thread_cpu_ns();
    return NULL;
}

static int worker_init(sim_worker *w, const sim_trace *t, const sim_run_cfg *cfg, engine *e,
                       uint32_t filler)
{
    memset(w, 0, sizeof(*w));
    w->e = e;
    w->t = t;
    w->cfg = cfg;
    w->B = cfg->batch >= 1 ? cfg->batch : 1;
    w->key_base = filler;
    w->ops = calloc(w->B, sizeof(cudis_op));
    w->res = calloc(w->B, sizeof(cudis_result));
    w->in = calloc(filler + (size_t)SIM_KEY_LEN * w->B, 1);
    w->out_cap = (uint64_t)(filler > 0 ? filler : 1) * w->B;
    w->out = malloc(w->out_cap);
    w->wreq = calloc(w->B, sizeof(size_t));
    w->miss = calloc(w->B, sizeof(uint32_t));
    if (w->ops == NULL || w->res == NULL || w->in == NULL || w->out == NULL || w->wreq == NULL ||
        w->miss == NULL || sim_kset_init(&w->set, w->B) != CUDIS_OK) {
        return CUDIS_E_NOMEM;
    }
    /* Values are this pattern (its bytes do not matter, but are defined). */
    for (uint32_t i = 0; i < filler; i++) {
        w->in[i] = (uint8_t)('a' + i % 26);
    }
    return CUDIS_OK;
}

static void worker_deinit(sim_worker *w)
{
    free(w->ops);
    free(w->res);
    free(w->in);
    free(w->out);
    free(w->wreq);
    free(w->miss);
    free(w->pops);
    free(w->pin);
    free(w->bstart);
    sim_kset_deinit(&w->set);
}

void sim_run_cfg_default(sim_run_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->engine = "lru";
    cfg->batch = 256;
    cfg->mode = SIM_REPLAY_EXACT;
    cfg->threads = 1;
    cfg->value_len = 8;
}

uint64_t sim_objects_budget(uint64_t items, uint32_t value_len)
{
    /* Far above any engine's per-item cost (item header, index slot, policy
     * node, allocator rounding): the item limit decides, never the bytes. */
    return (64ull << 20) + items * (uint64_t)(value_len + SIM_KEY_LEN + 512);
}

int sim_run(const sim_trace *t, const sim_run_cfg *cfg, sim_run_result *out, char *why,
            size_t why_len)
{
    memset(out, 0, sizeof(*out));
    if (why_len > 0) {
        why[0] = '\0';
    }
    uint32_t T = cfg->threads >= 1 ? cfg->threads : 1;
    if (t->n >= UINT32_MAX) {
        snprintf(why, why_len, "trace too long (%zu requests)", t->n);
        return CUDIS_E_INVAL;
    }
    bool sizes = cfg->use_sizes && t->sizes != NULL;
    uint32_t value_len = cfg->value_len > 0 ? cfg->value_len : 8;
    uint32_t filler = sizes ? (t->max_size > 0 ? t->max_size : 1) : value_len;

    engine_config ec;
    engine_config_default(&ec);
    ec.max_items = cfg->max_items;
    ec.memory_bytes = cfg->memory_bytes;
    if (ec.memory_bytes == 0) {
        ec.memory_bytes =
            sim_objects_budget(cfg->max_items > 0 ? cfg->max_items : t->unique, filler);
    }
    if (cfg->ways != 0) {
        ec.ways = cfg->ways;
    }
    ec.threads = 1;
    ec.seed = cfg->seed;
    ec.policy = cfg->policy;
    if (cfg->max_val_len != 0) {
        ec.max_val_len = cfg->max_val_len;
    }
    if (ec.max_val_len < filler) {
        ec.max_val_len = filler;
    }
    uint64_t avg = sizes && t->unique > 0 ? t->unique_bytes / t->unique : value_len;
    ec.expected_item_bytes = (uint32_t)(avg + SIM_KEY_LEN);

    char ewhy[256] = "";
    engine *e = engine_create(cfg->engine, &ec, ewhy, sizeof(ewhy));
    if (e == NULL) {
        snprintf(why, why_len, "engine '%s': %s", cfg->engine, ewhy);
        return CUDIS_E_NOENGINE;
    }
    snprintf(out->engine_name, sizeof(out->engine_name), "%s", engine_name(e));

    int rc = CUDIS_OK;
    sim_worker *ws = calloc(T, sizeof(sim_worker));
    uint32_t **idx = calloc(T, sizeof(uint32_t *));
    size_t *cnt = calloc(T, sizeof(size_t));
    pthread_t *tids = calloc(T, sizeof(pthread_t));
    pthread_barrier_t barrier;
    bool have_barrier = false;
    if (T > 1) {
        if (pthread_barrier_init(&barrier, NULL, T) != 0) {
            rc = CUDIS_E_NOMEM;
            goto done;
        }
        have_barrier = true;
    }
    if (ws == NULL || idx == NULL || cnt == NULL || tids == NULL) {
        rc = CUDIS_E_NOMEM;
        goto done;
    }
    /* Partition: thread i gets the requests whose key hashes to i. */
    if (T > 1) {
        for (size_t i = 0; i < t->n; i++) {
            cnt[(sim_mix64(t->keys[i]) >> 32) % T]++;
        }
        for (uint32_t k = 0; k < T; k++) {
            idx[k] = malloc((cnt[k] > 0 ? cnt[k] : 1) * sizeof(uint32_t));
            if (idx[k] == NULL) {
                rc = CUDIS_E_NOMEM;
                goto done;
            }
            cnt[k] = 0;
        }
        for (size_t i = 0; i < t->n; i++) {
            uint32_t k = (uint32_t)((sim_mix64(t->keys[i]) >> 32) % T);
            idx[k][cnt[k]++] = (uint32_t)i;
        }
    } else {
        cnt[0] = t->n;
    }
    for (uint32_t k = 0; k < T; k++) {
        if (worker_init(&ws[k], t, cfg, e, filler) != CUDIS_OK) {
            rc = CUDIS_E_NOMEM;
            for (uint32_t j = 0; j <= k; j++) {
                worker_deinit(&ws[j]);
            }
            goto done;
        }
        ws[k].idx = idx[k];
        ws[k].n = cnt[k];
        ws[k].now_ms = cudis_now_ms();
        ws[k].nthreads = T;
        ws[k].reports = k == 0 && cfg->progress != NULL;
        ws[k].start = have_barrier ? &barrier : NULL;
        if (cfg->mode == SIM_REPLAY_LOOKASIDE && prepare_lookaside(&ws[k]) != CUDIS_OK) {
            rc = CUDIS_E_NOMEM;
            for (uint32_t j = 0; j <= k; j++) {
                worker_deinit(&ws[j]);
            }
            goto done;
        }
    }

    uint32_t max_passes = cfg->max_passes > 0 ? cfg->max_passes : 1000;
    for (uint64_t pass = 0; pass < max_passes; pass++) {
        if (pass > 0) {
            engine_flush(e, CUDIS_DB_ALL);
        }
        for (uint32_t k = 0; k < T; k++) {
            ws[k].pass = pass;
        }
        if (T == 1) {
            worker_main(&ws[0]);
        } else {
            for (uint32_t k = 0; k < T; k++) {
                if (pthread_create(&tids[k], NULL, worker_main, &ws[k]) != 0) {
                    /* the started threads wait at the barrier for ever */
                    fprintf(stderr, "cudis-sim: cannot start %u threads\n", T);
                    abort();
                }
            }
            for (uint32_t k = 0; k < T; k++) {
                pthread_join(tids[k], NULL);
            }
        }
        uint64_t t0 = UINT64_MAX, t1 = 0, req = 0, hits = 0;
        for (uint32_t k = 0; k < T; k++) {
            if (ws[k].err != CUDIS_OK && rc == CUDIS_OK) {
                rc = ws[k].err;
                snprintf(why, why_len, "%s", ws[k].why);
            }
            t0 = ws[k].t0 < t0 ? ws[k].t0 : t0;
            t1 = ws[k].t1 > t1 ? ws[k].t1 : t1;
            req += ws[k].requests;
            hits += ws[k].hits;
        }
        if (rc != CUDIS_OK) {
            break;
        }
        if (pass == 0) {
            out->requests = req;
            out->hits = hits;
            engine_stats(e, &out->stats);
        }
        out->passes++;
        out->total_requests += req;
        out->total_hits += hits;
        out->seconds += (double)(t1 - t0) / 1e9;
        for (uint32_t k = 0; k < T; k++) {
            out->cpu_seconds += (double)(ws[k].cpu1 - ws[k].cpu0) / 1e9;
        }
        if (out->seconds >= cfg->min_seconds) {
            break;
        }
    }
    for (uint32_t k = 0; k < T; k++) {
        out->calls += ws[k].calls;
        out->set_failed += ws[k].set_failed;
        if (out->set_error == 0) {
            out->set_error = ws[k].set_error;
        }
        worker_deinit(&ws[k]);
    }
    out->req_per_s = out->seconds > 0 ? (double)out->total_requests / out->seconds : 0;

done:
    if (have_barrier) {
        pthread_barrier_destroy(&barrier);
    }
    if (idx != NULL) {
        for (uint32_t k = 0; k < T; k++) {
            free(idx[k]);
        }
    }
    free(idx);
    free(cnt);
    free(tids);
    free(ws);
    engine_destroy(e);
    if (rc == CUDIS_E_NOMEM && why[0] == '\0') {
        snprintf(why, why_len, "out of memory");
    }
    return rc;
}
