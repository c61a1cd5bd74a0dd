/*
 * gk_checks.c - backends, random operation streams, the gold comparison and
 * the eviction model check of gk_checks.h.
 */
#include "gk_checks.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccht.h"
#include "ccht_store.h"
#include "gpu_dev.h"

/* ------------------------------------------------------------------------
 * Small helpers
 * ---------------------------------------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void say(char *msg, size_t len, const char *fmt, ...)
{
    if (msg == NULL || len == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
}

void gk_config(engine_config *cfg, uint64_t memory, uint64_t max_items)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->memory_bytes = memory;
    cfg->max_items = max_items;
    cfg->ways = 8;
    cfg->threads = 1;
    cfg->max_key_len = 65535;
    cfg->max_val_len = 1u << 20;
    cfg->expected_item_bytes = 64;
    cfg->allow_empty_key = true;
    cfg->seed = 12345;
    cfg->device = -1;
}

/* ------------------------------------------------------------------------
 * Store backends
 * ---------------------------------------------------------------------- */

typedef struct store_ctx {
    const engine_store_ops *ops;
    void *s;
} store_ctx;

static int store_exec(void *c, cudis_batch *b)
{
    store_ctx *x = c;
    return x->ops->execute(x->s, b);
}

static void store_stats(void *c, cudis_stats *st)
{
    store_ctx *x = c;
    x->ops->stats(x->s, st);
}

static void store_destroy(void *c)
{
    store_ctx *x = c;
    x->ops->destroy(x->s);
    free(x);
}

int gk_backend_store(gk_backend *b, const engine_store_ops *ops, const engine_config *cfg,
                     char *why, size_t why_len)
{
    memset(b, 0, sizeof(*b));
    store_ctx *x = calloc(1, sizeof(*x));
    if (x == NULL) {
        say(why, why_len, "out of memory");
        return -1;
    }
    x->ops = ops;
    x->s = ops->create(cfg, why, why_len);
    if (x->s == NULL) {
        free(x);
        return -1;
    }
    b->name = ops->name;
    b->ctx = x;
    b->exec = store_exec;
    b->stats = store_stats;
    b->destroy = store_destroy;
    return 0;
}

void *gk_backend_store_handle(gk_backend *b)
{
    return ((store_ctx *)b->ctx)->s;
}

void gk_backend_destroy(gk_backend *b)
{
    if (b->destroy != NULL) {
        b->destroy(b->ctx);
    }
    memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------------------
 * Host simulation of the GPU engine: the kernels' per-thread bodies
 * (kernels/gpu_dev.h) on host threads, over a table laid out by the same
 * geometry (a ccht of cuckoo/, whose whole-table calls serve the rest)
 * ---------------------------------------------------------------------- */

static uint64_t sim_fault_next; /* the next store fails at this batch (0 = never) */

typedef struct sim_ctx {
    ccht *t;
    uint32_t threads;
    uint64_t fail_at; /* fault injection: the batch that fails (0 = none) */
    uint64_t batches; /* atomic */
    int failed;
} sim_ctx;

typedef struct sim_job {
    const ccht_table *t;
    const gpu_batch_args *a;
    uint32_t first, step;
} sim_job;

static void *sim_worker(void *arg)
{
    sim_job *j = arg;
    ccht_tally ty;
    ccht_tally_zero(&ty);
    uint64_t n = gpu_launch_threads(&j->a->l, j->a->n_ops);
    for (uint64_t i = j->first; i < n; i += j->step) {
        gpu_batch_op(j->t, j->a, i, &ty);
    }
    ccht_tally_flush(j->t, &ty);
    return NULL;
}

/* Append the mirror's events to the batch's sink (the engine's copy back). */
static int sim_ev_finish(cudis_evbuf *ev, const cudis_evbuf *mirror, uint8_t *area)
{
    if (ev != NULL) {
        gpu_ev_merge(ev, mirror, mirror->recs, mirror->keys);
        free(area);
    }
    return 0;
}

static int sim_exec(void *c, cudis_batch *b)
{
    sim_ctx *s = c;
    uint64_t nb = __atomic_add_fetch(&s->batches, 1, __ATOMIC_RELAXED);
    if (s->failed || (s->fail_at != 0 && nb >= s->fail_at)) {
        s->failed = 1; /* an injected device fault: dead from here on */
        return CUDIS_E_DEVFAIL;
    }
    const ccht_table *T = ccht_table_of(s->t);
    gpu_batch_args a;
    memset(&a, 0, sizeof(a));
    a.ops = b->ops;
    a.in = b->in;
    for (uint32_t i = 0; i < b->n_ops; i++) {
        const cudis_op *op = &b->ops[i];
        uint64_t e = op->key_off + op->key_len;
        uint64_t f = op->val_off + op->val_len;
        a.in_len = e > a.in_len ? e : a.in_len;
        a.in_len = f > a.in_len ? f : a.in_len;
    }
    a.res = b->res;
    a.out = b->out;
    a.out_cap = b->out != NULL ? b->out_cap : 0;
    a.out_len = &b->out_len;
    a.n_ops = b->n_ops;
    a.now_ms = b->now_ms;
    /* events go to a mirror of the sink, appended afterwards (as on the device) */
    cudis_evbuf mirror;
    uint8_t *area = NULL;
    if (b->ev != NULL) {
        gpu_ev_mirror(b->ev, &mirror, NULL);
        area = malloc(gpu_ev_area_bytes(&mirror) + 1);
        if (area == NULL) {
            return CUDIS_E_NOMEM;
        }
        gpu_ev_mirror(b->ev, &mirror, area);
        a.ev = &mirror;
    }
    uint64_t base = __atomic_fetch_add(T->clock, b->n_ops, __ATOMIC_RELAXED);
    gpu_launch_at(base, b->n_ops, T->v.n_buckets, &a.l);
    uint32_t n = s->threads > 1 ? s->threads : 1;
    sim_job jobs[64];
    pthread_t th[64];
    if (n > 64) {
        n = 64;
    }
    for (uint32_t i = 0; i < n; i++) {
        jobs[i].t = T;
        jobs[i].a = &a;
        jobs[i].first = i;
        jobs[i].step = n;
    }
    if (n == 1) {
        sim_worker(&jobs[0]);
        return sim_ev_finish(b->ev, &mirror, area);
    }
    uint32_t started = 0;
    for (; started < n; started++) {
        if (pthread_create(&th[started], NULL, sim_worker, &jobs[started]) != 0) {
            break;
        }
    }
    for (uint32_t i = started; i < n; i++) {
        sim_worker(&jobs[i]); /* the ops of threads that did not start run here */
    }
    for (uint32_t i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
    }
    return sim_ev_finish(b->ev, &mirror, area);
}

static void *sim_create(const engine_config *cfg, char *why, size_t why_len)
{
    sim_ctx *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        say(why, why_len, "out of memory");
        return NULL;
    }
    s->t = ccht_store_ops.create(cfg, why, why_len);
    if (s->t == NULL) {
        free(s);
        return NULL;
    }
    s->threads = cfg->threads > 1 ? cfg->threads : 4;
    s->fail_at = __atomic_exchange_n(&sim_fault_next, 0, __ATOMIC_RELAXED);
    say(why, why_len, "hostsim: the gpu engine's kernels on %u host threads", s->threads);
    return s;
}

static void sim_destroy_store(void *c)
{
    sim_ctx *s = c;
    ccht_destroy(s->t);
    free(s);
}

static int sim_scan(void *c, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                    cudis_scan_fn fn, void *arg, uint64_t *next)
{
    return ccht_scan(((sim_ctx *)c)->t, db, cursor, count, now_ms, fn, arg, next);
}

static int sim_random_key(void *c, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                          uint32_t *len)
{
    return ccht_random_key(((sim_ctx *)c)->t, db, now_ms, buf, cap, len);
}

static int sim_flush(void *c, int db)
{
    return ccht_flush(((sim_ctx *)c)->t, db);
}

static uint64_t sim_db_size(void *c, uint8_t db)
{
    return ccht_db_size(((sim_ctx *)c)->t, db);
}

static int sim_sweep(void *c, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev)
{
    return ccht_sweep(((sim_ctx *)c)->t, now_ms, max_work, ev);
}

static uint64_t sim_clock(void *c)
{
    return ccht_clock(((sim_ctx *)c)->t);
}

static uint64_t sim_set_memory(void *c, uint64_t bytes)
{
    return ccht_set_memory(((sim_ctx *)c)->t, bytes);
}

static int sim_set_policy(void *c, uint32_t policy, uint32_t lfu_log_factor,
                          uint32_t lfu_decay_time)
{
    return ccht_set_policy(((sim_ctx *)c)->t, policy, lfu_log_factor, lfu_decay_time);
}

static uint64_t sim_sweep_units(void *c)
{
    return ccht_sweep_units(((sim_ctx *)c)->t);
}

static void sim_stats(void *c, cudis_stats *st)
{
    ccht_stats(((sim_ctx *)c)->t, st);
}

static void sim_reset_stats(void *c)
{
    ccht_reset_stats(((sim_ctx *)c)->t);
}

static const char *sim_failure(void *c)
{
    return ((sim_ctx *)c)->failed ? "injected device fault (host simulation)" : NULL;
}

const engine_store_ops gk_hostsim_store_ops = {
    .name = "hostsim",
    .description = "the gpu engine's kernels run on host threads (test double)",
    .concurrent = true,
    .create = sim_create,
    .destroy = sim_destroy_store,
    .execute = sim_exec,
    .scan = sim_scan,
    .random_key = sim_random_key,
    .flush = sim_flush,
    .db_size = sim_db_size,
    .sweep = sim_sweep,
    .sweep_units = sim_sweep_units,
    .set_policy = sim_set_policy,
    .set_memory = sim_set_memory,
    .clock = sim_clock,
    .stats = sim_stats,
    .reset_stats = sim_reset_stats,
    .failure = sim_failure,
};

void gk_hostsim_inject(uint64_t nth_batch)
{
    __atomic_store_n(&sim_fault_next, nth_batch, __ATOMIC_RELAXED);
}

int gk_backend_hostsim(gk_backend *b, const engine_config *cfg, uint32_t threads, char *why,
                       size_t why_len)
{
    engine_config c = *cfg;
    c.threads = threads;
    int rc = gk_backend_store(b, &gk_hostsim_store_ops, &c, why, why_len);
    if (rc == 0) {
        b->name = "hostsim";
        ((sim_ctx *)gk_backend_store_handle(b))->threads = threads > 1 ? threads : 1;
    }
    return rc;
}

const ccht_table *gk_hostsim_table(gk_backend *b)
{
    return ccht_table_of(((sim_ctx *)gk_backend_store_handle(b))->t);
}

/* ------------------------------------------------------------------------
 * Random streams
 * ---------------------------------------------------------------------- */

typedef struct gk_batch {
    cudis_op *ops;
    cudis_result *res;
    uint8_t *in;
    uint8_t *out;
    uint32_t n, cap;
    uint64_t in_len, in_cap, out_cap;
    int64_t now;
} gk_batch;

static int gb_init(gk_batch *g, uint32_t cap, uint64_t in_cap, uint64_t out_cap)
{
    memset(g, 0, sizeof(*g));
    g->ops = calloc(cap, sizeof(cudis_op));
    g->res = calloc(cap, sizeof(cudis_result));
    g->in = malloc(in_cap);
    g->out = malloc(out_cap);
    g->cap = cap;
    g->in_cap = in_cap;
    g->out_cap = out_cap;
    return (g->ops && g->res && g->in && g->out) ? 0 : -1;
}

static void gb_free(gk_batch *g)
{
    free(g->ops);
    free(g->res);
    free(g->in);
    free(g->out);
}

static void gb_add(gk_batch *g, uint8_t code, uint16_t flags, const uint8_t *key, uint32_t klen,
                   const uint8_t *val, uint32_t vlen, int64_t arg, int64_t exp)
{
    cudis_op *op = &g->ops[g->n++];
    memset(op, 0, sizeof(*op));
    op->code = code;
    op->flags = flags;
    op->key_off = g->in_len;
    op->key_len = klen;
    memcpy(g->in + g->in_len, key, klen);
    g->in_len += klen;
    op->val_off = g->in_len;
    op->val_len = vlen;
    if (vlen) {
        memcpy(g->in + g->in_len, val, vlen);
    }
    g->in_len += vlen;
    op->arg = arg;
    op->expire_ms = exp;
}

uint32_t gk_key(uint32_t i, uint8_t *buf)
{
    if (i % 3 == 0) {
        uint64_t v = (uint64_t)i * 0x9e3779b97f4a7c15ull;
        memcpy(buf, &v, 8);
        return 8;
    }
    int n = snprintf((char *)buf, 64, "key:%u:", i);
    uint32_t pad = i % 23;
    for (uint32_t k = 0; k < pad; k++) {
        buf[n + k] = (uint8_t)('a' + (i + k) % 26);
    }
    return (uint32_t)n + pad;
}

static bool op_writes(const cudis_op *op)
{
    return !ccht_op_is_read(op);
}

/* One random op on key k (the stream of gk_gold). */
static void random_op(gk_batch *g, uint64_t *rs, const uint8_t *key, uint32_t klen,
                      uint32_t max_val, int64_t now, bool read_only)
{
    uint8_t val[4096];
    uint64_t r = rnd(rs) % 100;
    uint32_t vlen = max_val ? (uint32_t)(rnd(rs) % (max_val + 1)) : 0;
    if (vlen > sizeof(val)) {
        vlen = sizeof(val);
    }
    bool numeric = rnd(rs) % 3 == 0;
    if (numeric) {
        int64_t n = (int64_t)(rnd(rs) % 2000) - 1000;
        vlen = (uint32_t)snprintf((char *)val, sizeof(val), "%lld", (long long)n);
    } else {
        for (uint32_t i = 0; i < vlen; i++) {
            val[i] = (uint8_t)rnd(rs);
        }
    }
    int64_t exp = 0;
    if (rnd(rs) % 4 == 0) {
        exp = now + 1 + (int64_t)(rnd(rs) % 300);
    } else if (rnd(rs) % 50 == 0) {
        exp = now - 1;
    }
    if (read_only || r < 30) {
        uint64_t q = rnd(rs) % 10;
        if (q < 7 || read_only) {
            uint8_t c = q < 5 ? CUDIS_OP_GET : (q < 6 ? CUDIS_OP_EXISTS : CUDIS_OP_TTL);
            gb_add(g, c, c == CUDIS_OP_EXISTS && (rnd(rs) & 1) ? CUDIS_F_TOUCH : 0, key, klen, NULL,
                   0, 0, 0);
        } else if (q < 8) {
            gb_add(g, CUDIS_OP_GET, CUDIS_F_DEL, key, klen, NULL, 0, 0, 0);
        } else if (q < 9) {
            gb_add(g, CUDIS_OP_GET, CUDIS_F_SETEXP, key, klen, NULL, 0, 0, exp ? exp : now + 100);
        } else {
            gb_add(g, CUDIS_OP_GET, CUDIS_F_PERSIST, key, klen, NULL, 0, 0, 0);
        }
    } else if (r < 55) {
        static const uint16_t fl[] = {0,
                                      0,
                                      0,
                                      CUDIS_F_NX,
                                      CUDIS_F_XX,
                                      CUDIS_F_GET,
                                      CUDIS_F_KEEPTTL,
                                      CUDIS_F_GET | CUDIS_F_XX};
        gb_add(g, CUDIS_OP_SET, fl[rnd(rs) % 8], key, klen, val, vlen, 0, exp);
    } else if (r < 62) {
        gb_add(g, CUDIS_OP_DEL, 0, key, klen, NULL, 0, 0, 0);
    } else if (r < 72) {
        gb_add(g, CUDIS_OP_INCRBY, 0, key, klen, NULL, 0, (int64_t)(rnd(rs) % 200) - 100, 0);
    } else if (r < 78) {
        gb_add(g, CUDIS_OP_APPEND, 0, key, klen, val, vlen % 17, 0, 0);
    } else if (r < 83) {
        gb_add(g, CUDIS_OP_SETRANGE, 0, key, klen, val, vlen % 9, (int64_t)(rnd(rs) % 40), 0);
    } else if (r < 91) {
        static const uint16_t fl[] = {0, 0, CUDIS_F_NX, CUDIS_F_XX, CUDIS_F_GT, CUDIS_F_LT};
        gb_add(g, CUDIS_OP_EXPIRE, fl[rnd(rs) % 6], key, klen, NULL, 0, 0,
               now - 20 + (int64_t)(rnd(rs) % 400));
    } else if (r < 95) {
        gb_add(g, CUDIS_OP_PERSIST, 0, key, klen, NULL, 0, 0, 0);
    } else {
        gb_add(g, CUDIS_OP_TTL, 0, key, klen, NULL, 0, 0, 0);
    }
}

static int run_batch(gk_backend *b, gk_batch *g, cudis_result *res, uint8_t *out, uint64_t *out_len,
                     cudis_evbuf *ev)
{
    cudis_batch bt;
    memset(&bt, 0, sizeof(bt));
    bt.ev = ev;
    bt.ops = g->ops;
    bt.n_ops = g->n;
    bt.in = g->in;
    bt.res = res;
    bt.out = out;
    bt.out_cap = g->out_cap;
    bt.out_len = 0;
    bt.now_ms = g->now;
    int rc = b->exec(b->ctx, &bt);
    *out_len = bt.out_len;
    return rc;
}

static const char *op_name(uint8_t c)
{
    static const char *n[] = {"?",      "GET",      "SET",    "DEL",     "EXISTS", "INCRBY",
                              "APPEND", "SETRANGE", "EXPIRE", "PERSIST", "TTL"};
    return c < sizeof(n) / sizeof(n[0]) ? n[c] : "?";
}

/* Compare one result of a and ref. */
static int cmp_result(const gk_batch *g, uint32_t i, const cudis_result *ra, const uint8_t *oa,
                      const cudis_result *rb, const uint8_t *ob, char *msg, size_t len)
{
    const cudis_op *op = &g->ops[i];
    if (ra->status != rb->status || ra->flags != rb->flags || ra->num != rb->num ||
        ((ra->flags & CUDIS_R_VALUE) && ra->val_len != rb->val_len) ||
        (ra->status == CUDIS_E_OUTBUF && ra->val_len != rb->val_len)) {
        say(msg, len,
            "op %u (%s flags 0x%x key_len %u): status %d/%d flags 0x%x/0x%x num %lld/%lld "
            "val_len %u/%u",
            i, op_name(op->code), op->flags, op->key_len, ra->status, rb->status, ra->flags,
            rb->flags, (long long)ra->num, (long long)rb->num, ra->val_len, rb->val_len);
        return -1;
    }
    if ((ra->flags & CUDIS_R_VALUE) && ra->val_len > 0 &&
        memcmp(oa + ra->val_off, ob + rb->val_off, ra->val_len) != 0) {
        say(msg, len, "op %u (%s): values differ (%u bytes)", i, op_name(op->code), ra->val_len);
        return -1;
    }
    return 0;
}

/* One event of a batch, comparable across backends. */
typedef struct ev_key {
    uint8_t kind, db;
    uint32_t len;
    const uint8_t *key;
} ev_key;

static int ev_key_cmp(const void *pa, const void *pb)
{
    const ev_key *a = pa, *b = pb;
    if (a->kind != b->kind) {
        return a->kind < b->kind ? -1 : 1;
    }
    if (a->db != b->db) {
        return a->db < b->db ? -1 : 1;
    }
    if (a->len != b->len) {
        return a->len < b->len ? -1 : 1;
    }
    return a->len ? memcmp(a->key, b->key, a->len) : 0;
}

/* A sink's events, sorted (their order means nothing); NULL on failure. */
static ev_key *ev_sorted(const cudis_evbuf *ev)
{
    ev_key *k = malloc((ev->len + 1) * sizeof(ev_key));
    if (k == NULL) {
        return NULL;
    }
    for (uint32_t i = 0; i < ev->len; i++) {
        const cudis_event *e = &ev->recs[i];
        k[i] = (ev_key){e->kind, e->db, e->key_len, ev->keys + e->key_off};
    }
    qsort(k, ev->len, sizeof(ev_key), ev_key_cmp);
    return k;
}

/* The same events (kind, database, key bytes) in both sinks, none lost,
 * each record inside its sink. */
static int cmp_events(const cudis_evbuf *a, const cudis_evbuf *b, char *msg, size_t len)
{
    if (cudis_ev_lost(a) || cudis_ev_lost(b)) {
        say(msg, len, "events lost: %u/%u and %u/%u records", a->len, a->cap, b->len, b->cap);
        return -1;
    }
    if (a->len != b->len) {
        say(msg, len, "%u events against %u", a->len, b->len);
        return -1;
    }
    for (int s = 0; s < 2; s++) {
        const cudis_evbuf *ev = s == 0 ? a : b;
        for (uint32_t i = 0; i < ev->len; i++) {
            const cudis_event *e = &ev->recs[i];
            if (e->kind != CUDIS_EV_EVICTED && e->kind != CUDIS_EV_EXPIRED) {
                say(msg, len, "record %u of %s: kind %u", i, s == 0 ? "a" : "ref", e->kind);
                return -1;
            }
            if (e->key_off + e->key_len > ev->keys_len) {
                say(msg, len, "record %u of %s: key bytes outside the sink", i,
                    s == 0 ? "a" : "ref");
                return -1;
            }
        }
    }
    ev_key *ka = ev_sorted(a), *kb = ev_sorted(b);
    int rc = ka != NULL && kb != NULL ? 0 : -1;
    if (rc != 0) {
        say(msg, len, "out of memory");
    }
    for (uint32_t i = 0; rc == 0 && i < a->len; i++) {
        if (ev_key_cmp(&ka[i], &kb[i]) != 0) {
            say(msg, len, "event %u of %u differs: kind %u/%u db %u/%u key_len %u/%u", i, a->len,
                ka[i].kind, kb[i].kind, ka[i].db, kb[i].db, ka[i].len, kb[i].len);
            rc = -1;
        }
    }
    free(ka);
    free(kb);
    return rc;
}

int gk_gold(gk_backend *a, gk_backend *ref, const gk_stream_opts *o, char *msg, size_t msg_len)
{
    uint64_t rs = o->seed;
    uint32_t cap = o->batch_ops > o->n_keys ? o->batch_ops : o->n_keys;
    gk_batch g;
    uint64_t out_cap = (uint64_t)cap * (o->max_val + 64) + (1u << 16);
    cudis_result *rb = calloc(cap, sizeof(cudis_result));
    uint8_t *ob = malloc(out_cap);
    uint8_t *state = calloc(o->n_keys, 1);
    cudis_evbuf ev[2];
    memset(ev, 0, sizeof(ev));
    uint64_t n_events = 0;
    int rc = gb_init(&g, cap, (uint64_t)cap * (o->max_val + 128) + 4096, out_cap);
    for (int k = 0; k < 2 && rc == 0 && o->events; k++) {
        ev[k].cap = 4 * cap;
        ev[k].keys_cap = 4 * (uint64_t)cap * 64;
        ev[k].recs = malloc(ev[k].cap * sizeof(cudis_event));
        ev[k].keys = malloc(ev[k].keys_cap);
        rc = ev[k].recs != NULL && ev[k].keys != NULL ? 0 : -1;
    }
    if (rc != 0 || rb == NULL || ob == NULL || state == NULL) {
        say(msg, msg_len, "out of memory");
        rc = -1;
        goto done;
    }
    int64_t now = 1700000000000ll;
    for (uint32_t bn = 0; bn <= o->batches && rc == 0; bn++) {
        g.n = 0;
        g.in_len = 0;
        g.now = now;
        memset(state, 0, o->n_keys);
        bool last = bn == o->batches;
        uint32_t n = last ? o->n_keys : 1 + (uint32_t)(rnd(&rs) % o->batch_ops);
        for (uint32_t k = 0; k < n; k++) {
            uint8_t key[128];
            uint32_t ki = last ? k : (uint32_t)(rnd(&rs) % o->n_keys);
            uint32_t klen = gk_key(ki, key);
            if (last) {
                gb_add(&g, k % 2 ? CUDIS_OP_GET : CUDIS_OP_TTL, 0, key, klen, NULL, 0, 0, 0);
                continue;
            }
            uint32_t at = g.n;
            random_op(&g, &rs, key, klen, o->max_val, now, state[ki] == 1);
            bool w = op_writes(&g.ops[at]);
            /* the batcher's rule: no two ops on a key when one writes */
            if (state[ki] == 2 || (w && state[ki] == 1)) {
                g.n = at;
                g.in_len = g.ops[at].key_off;
                continue;
            }
            state[ki] = w ? 2 : 1;
        }
        uint64_t la = 0, lb = 0;
        for (int k = 0; k < 2 && o->events; k++) {
            ev[k].len = 0;
            ev[k].keys_len = 0;
        }
        int ea = run_batch(a, &g, g.res, g.out, &la, o->events ? &ev[0] : NULL);
        int eb = run_batch(ref, &g, rb, ob, &lb, o->events ? &ev[1] : NULL);
        if (ea != 0 || eb != 0) {
            say(msg, msg_len, "batch %u failed: %s %d, %s %d", bn, a->name, ea, ref->name, eb);
            rc = -1;
            break;
        }
        if (o->events) {
            char m[256];
            if (cmp_events(&ev[0], &ev[1], m, sizeof(m)) != 0) {
                say(msg, msg_len, "seed %llu batch %u (now %lld): events: %s [%s vs %s]",
                    (unsigned long long)o->seed, bn, (long long)now, m, a->name, ref->name);
                rc = -1;
                break;
            }
            n_events += ev[0].len;
        }
        for (uint32_t i = 0; i < g.n; i++) {
            char m[256];
            if (cmp_result(&g, i, &g.res[i], g.out, &rb[i], ob, m, sizeof(m)) != 0) {
                say(msg, msg_len, "seed %llu batch %u (now %lld): %s [%s vs %s]",
                    (unsigned long long)o->seed, bn, (long long)now, m, a->name, ref->name);
                rc = -1;
                break;
            }
        }
        now += (int64_t)(rnd(&rs) % 40);
    }
    if (o->events_seen != NULL) {
        *o->events_seen += n_events;
    }
done:
    gb_free(&g);
    free(rb);
    free(ob);
    free(state);
    for (int k = 0; k < 2; k++) {
        free(ev[k].recs);
        free(ev[k].keys);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Eviction against a model
 * ---------------------------------------------------------------------- */

typedef struct model_val {
    uint32_t len;
    uint32_t seq; /* 0 = absent; else the value is val_bytes(key, seq, len) */
} model_val;

static void val_bytes(uint32_t key, uint32_t seq, uint32_t len, uint8_t *out)
{
    uint64_t s = ((uint64_t)key << 32) | seq;
    for (uint32_t i = 0; i < len; i++) {
        if (i % 8 == 0) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
        }
        out[i] = (uint8_t)(s >> (8 * (i % 8)));
    }
}

int gk_evict_model(gk_backend *a, const gk_stream_opts *o, uint64_t *evictions, char *msg,
                   size_t msg_len)
{
    uint64_t rs = o->seed;
    model_val *m = calloc(o->n_keys, sizeof(model_val));
    uint8_t *state = calloc(o->n_keys, 1);
    uint32_t *kidx = calloc(o->batch_ops, sizeof(uint32_t));
    uint8_t *expect = malloc(o->max_val + 1);
    gk_batch g;
    int rc = gb_init(&g, o->batch_ops, (uint64_t)o->batch_ops * (o->max_val + 128) + 4096,
                     (uint64_t)o->batch_ops * (o->max_val + 16) + 4096);
    if (rc != 0 || m == NULL || state == NULL || kidx == NULL || expect == NULL) {
        say(msg, msg_len, "out of memory");
        rc = -1;
        goto done;
    }
    uint32_t seq = 1;
    uint64_t hits = 0;
    for (uint32_t bn = 0; bn < o->batches && rc == 0; bn++) {
        g.n = 0;
        g.in_len = 0;
        g.now = 1700000000000ll;
        memset(state, 0, o->n_keys);
        for (uint32_t k = 0; k < o->batch_ops; k++) {
            uint32_t ki = (uint32_t)(rnd(&rs) % o->n_keys);
            uint8_t key[128];
            uint32_t klen = gk_key(ki, key);
            uint64_t r = rnd(&rs) % 100;
            bool w = r < 45 || (r >= 90 && r < 95);
            if (state[ki] == 2 || (w && state[ki] == 1)) {
                continue;
            }
            state[ki] = w ? 2 : 1;
            kidx[g.n] = ki;
            if (r < 45) {
                uint32_t len = (uint32_t)(rnd(&rs) % (o->max_val + 1));
                uint8_t *v = malloc(len + 1);
                val_bytes(ki, seq, len, v);
                gb_add(&g, CUDIS_OP_SET, 0, key, klen, v, len, seq, 0);
                free(v);
                seq++;
            } else if (r < 85) {
                gb_add(&g, CUDIS_OP_GET, 0, key, klen, NULL, 0, 0, 0);
            } else if (r < 90) {
                gb_add(&g, CUDIS_OP_EXISTS, 0, key, klen, NULL, 0, 0, 0);
            } else if (r < 95) {
                gb_add(&g, CUDIS_OP_DEL, 0, key, klen, NULL, 0, 0, 0);
            } else {
                gb_add(&g, CUDIS_OP_GET, 0, key, klen, NULL, 0, 0, 0);
            }
        }
        uint64_t ol = 0;
        int e = run_batch(a, &g, g.res, g.out, &ol, NULL);
        if (e != 0) {
            say(msg, msg_len, "batch %u failed: %d", bn, e);
            rc = -1;
            break;
        }
        for (uint32_t i = 0; i < g.n && rc == 0; i++) {
            const cudis_op *op = &g.ops[i];
            const cudis_result *r = &g.res[i];
            model_val *mv = &m[kidx[i]];
            if (r->status != CUDIS_OK) {
                say(msg, msg_len, "batch %u op %u (%s): status %d", bn, i, op_name(op->code),
                    r->status);
                rc = -1;
                break;
            }
            switch (op->code) {
            case CUDIS_OP_SET:
                mv->seq = (uint32_t)op->arg;
                mv->len = op->val_len;
                break;
            case CUDIS_OP_DEL: mv->seq = 0; break;
            case CUDIS_OP_EXISTS:
                if ((r->flags & CUDIS_R_FOUND) && mv->seq == 0) {
                    say(msg, msg_len, "batch %u op %u: EXISTS found a deleted key", bn, i);
                    rc = -1;
                }
                break;
            case CUDIS_OP_GET:
                if (!(r->flags & CUDIS_R_VALUE)) {
                    break;
                }
                hits++;
                if (mv->seq == 0) {
                    say(msg, msg_len, "batch %u op %u: GET returned a deleted key's value", bn, i);
                    rc = -1;
                    break;
                }
                val_bytes(kidx[i], mv->seq, mv->len, expect);
                if (r->val_len != mv->len || memcmp(g.out + r->val_off, expect, mv->len) != 0) {
                    say(msg, msg_len,
                        "batch %u op %u: GET returned a value that is not the latest (len %u, "
                        "expected %u)",
                        bn, i, r->val_len, mv->len);
                    rc = -1;
                }
                break;
            default: break;
            }
        }
        cudis_stats st;
        a->stats(a->ctx, &st);
        if (rc == 0 && st.bytes_used > st.bytes_budget) {
            say(msg, msg_len, "batch %u: bytes_used %llu > budget %llu", bn,
                (unsigned long long)st.bytes_used, (unsigned long long)st.bytes_budget);
            rc = -1;
        }
    }
    if (rc == 0) {
        cudis_stats st;
        a->stats(a->ctx, &st);
        *evictions = st.evict_bucket + st.evict_memory;
        if (hits == 0) {
            say(msg, msg_len, "no GET ever hit");
            rc = -1;
        }
    }
done:
    gb_free(&g);
    free(m);
    free(state);
    free(kidx);
    free(expect);
    return rc;
}
