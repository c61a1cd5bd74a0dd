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

#include "gpu_exec.h"

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

void gk_backend_destroy(gk_backend *b)
{
    if (b->destroy != NULL) {
        b->destroy(b->ctx);
    }
    memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------------------
 * Host simulation of the GPU engine: gpu_exec_op over host memory
 * ---------------------------------------------------------------------- */

typedef struct sim_ctx {
    gpu_table t;
    gpu_layout l;
    uint8_t *mem;
    uint32_t threads;
    uint64_t index_bytes;
    uint64_t budget;
} sim_ctx;

typedef struct sim_job {
    sim_ctx *s;
    const gpu_table *t;
    cudis_batch *b;
    uint32_t first, step;
} sim_job;

static void *sim_worker(void *arg)
{
    sim_job *j = arg;
    gpu_tally ty;
    gpu_tally_zero(&ty);
    for (uint32_t i = j->first; i < j->b->n_ops; i += j->step) {
        const cudis_op *op = &j->b->ops[i];
        gpu_op_ctx x;
        x.op = op;
        x.key = j->b->in + op->key_off;
        x.arg = j->b->in + op->val_off;
        x.res = &j->b->res[i];
        x.out = j->b->out;
        x.out_cap = j->b->out != NULL ? j->b->out_cap : 0;
        x.out_len = &j->b->out_len;
        x.now_ms = j->b->now_ms;
        x.shard = i;
        x.seed = cudis_mix64(i ^ 0x94d049bb133111ebull, j->t->stamp * 0x9e3779b97f4a7c15ull + 1);
        gpu_exec_op(j->t, &x, &ty);
    }
    for (int c = 0; c < GPU_C__COUNT; c++) {
        if (ty.c[c] != 0) {
            cudis_fetch_add_u64(&j->t->cnt->c[c], (uint64_t)ty.c[c]);
        }
    }
    return NULL;
}

static int sim_exec(void *c, cudis_batch *b)
{
    sim_ctx *s = c;
    gpu_table t = s->t;
    s->t.stamp++;
    uint32_t n = s->threads > 1 ? s->threads : 1;
    sim_job jobs[16];
    pthread_t th[16];
    if (n > 16) {
        n = 16;
    }
    for (uint32_t i = 0; i < n; i++) {
        jobs[i].s = s;
        jobs[i].t = &t;
        jobs[i].b = b;
        jobs[i].first = i;
        jobs[i].step = n;
    }
    if (n == 1) {
        sim_worker(&jobs[0]);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (pthread_create(&th[i], NULL, sim_worker, &jobs[i]) != 0) {
            return CUDIS_E_NOMEM;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
    }
    return 0;
}

static void sim_stats(void *c, cudis_stats *st)
{
    sim_ctx *s = c;
    const uint64_t *k = s->t.cnt->c;
    memset(st, 0, sizeof(*st));
    st->items = __atomic_load_n(&k[GPU_C_ITEMS], __ATOMIC_RELAXED);
    st->index_bytes = s->l.index + s->l.meta;
    st->bytes_used = st->index_bytes + __atomic_load_n(&k[GPU_C_CHUNK_BYTES], __ATOMIC_RELAXED);
    st->bytes_budget = s->budget;
    st->key_bytes = k[GPU_C_KEY_BYTES];
    st->value_bytes = k[GPU_C_VAL_BYTES];
    st->hits = k[GPU_C_HITS];
    st->misses = k[GPU_C_MISSES];
    st->evict_bucket = k[GPU_C_EVICT_BUCKET];
    st->evict_memory = k[GPU_C_EVICT_MEMORY];
    st->evict_expired = k[GPU_C_EVICT_EXPIRED];
    st->capacity = s->t.v.n_buckets * s->t.v.ways;
    st->load_factor = st->capacity ? (double)st->items / (double)st->capacity : 0;
}

static void sim_destroy(void *c)
{
    sim_ctx *s = c;
    free(s->mem);
    free(s);
}

int gk_backend_hostsim(gk_backend *b, const engine_config *cfg, uint32_t threads, char *why,
                       size_t why_len)
{
    memset(b, 0, sizeof(*b));
    sim_ctx *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        say(why, why_len, "out of memory");
        return -1;
    }
    const char *lwhy = NULL;
    uint32_t ways = cfg->ways ? cfg->ways : 8;
    if (gpu_layout_plan(&s->t, &s->l, cfg->memory_bytes, ways, cfg->max_items,
                        cfg->expected_item_bytes, cfg->max_key_len ? cfg->max_key_len : 65535,
                        cfg->max_val_len ? cfg->max_val_len : (1u << 20), cfg->allow_empty_key,
                        cfg->seed ? cfg->seed : 0x9e3779b97f4a7c15ull, &lwhy) != 0) {
        say(why, why_len, "%s", lwhy);
        free(s);
        return -1;
    }
    /* arena chunks are 16-aligned from a 256-aligned base */
    s->mem = aligned_alloc(256, gpu_align_up(s->l.total, 256));
    if (s->mem == NULL) {
        say(why, why_len, "out of memory");
        free(s);
        return -1;
    }
    memset(s->mem, 0, s->l.total);
    gpu_layout_bind(&s->t, &s->l, s->mem);
    s->threads = threads;
    s->budget = cfg->memory_bytes;
    b->name = "hostsim";
    b->ctx = s;
    b->exec = sim_exec;
    b->stats = sim_stats;
    b->destroy = sim_destroy;
    return 0;
}

int gk_hostsim_duplicates(gk_backend *b, uint64_t *slots)
{
    sim_ctx *s = b->ctx;
    const ccht_view *v = &s->t.v;
    uint64_t n = 0;
    int dups = 0;
    for (uint64_t bk = 0; bk < v->n_buckets; bk++) {
        for (uint32_t w = 0; w < v->ways; w++) {
            uint64_t word = *ccht_bkt_slot(v, bk, w);
            if (word == 0) {
                continue;
            }
            n++;
            uint64_t off = ccht_slot_off(word);
            uint32_t h0 = ccht_item_h0(v, off);
            uint32_t klen = h0 & CCHT_ITEM_KLEN_MASK;
            const uint8_t *key = ccht_item_key(v, off, h0);
            ccht_hkey hk = ccht_hash_key(v, key, klen);
            /* the key must live in one of its buckets, exactly once */
            int seen = 0;
            for (int i = 0; i < 2; i++) {
                uint64_t c = i ? hk.b2 : hk.b1;
                if (i == 1 && c == hk.b1) {
                    break;
                }
                for (uint32_t x = 0; x < v->ways; x++) {
                    uint64_t wd = *ccht_bkt_slot(v, c, x);
                    if (wd == 0) {
                        continue;
                    }
                    uint64_t o = ccht_slot_off(wd);
                    uint32_t h = ccht_item_h0(v, o);
                    if ((h & CCHT_ITEM_KLEN_MASK) == klen &&
                        memcmp(ccht_item_key(v, o, h), key, klen) == 0) {
                        seen++;
                    }
                }
            }
            if (seen != 1) {
                dups++;
            }
        }
    }
    *slots = n;
    return dups;
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

/* Key i: binary 8 bytes for a third of them, text of varied length else. */
static uint32_t key_of(uint32_t i, uint8_t *buf)
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
    return !gpu_op_is_read(op);
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

static int run_batch(gk_backend *b, gk_batch *g, cudis_result *res, uint8_t *out, uint64_t *out_len)
{
    cudis_batch bt;
    memset(&bt, 0, sizeof(bt));
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
    return c < CUDIS_OP__COUNT ? n[c] : "?";
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

int gk_gold(gk_backend *a, gk_backend *ref, const gk_stream_opts *o, char *msg, size_t msg_len)
{
    uint64_t rs = o->seed;
    uint32_t cap = o->batch_ops > o->n_keys ? o->batch_ops : o->n_keys;
    gk_batch g;
    uint64_t out_cap = (uint64_t)cap * (o->max_val + 64) + (1u << 16);
    cudis_result *rb = calloc(cap, sizeof(cudis_result));
    uint8_t *ob = malloc(out_cap);
    uint8_t *state = calloc(o->n_keys, 1);
    int rc = gb_init(&g, cap, (uint64_t)cap * (o->max_val + 128) + 4096, out_cap);
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
            uint32_t klen = key_of(ki, key);
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
        int ea = run_batch(a, &g, g.res, g.out, &la);
        int eb = run_batch(ref, &g, rb, ob, &lb);
        if (ea != 0 || eb != 0) {
            say(msg, msg_len, "batch %u failed: %s %d, %s %d", bn, a->name, ea, ref->name, eb);
            rc = -1;
            break;
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
done:
    gb_free(&g);
    free(rb);
    free(ob);
    free(state);
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
            uint32_t klen = key_of(ki, key);
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
        int e = run_batch(a, &g, g.res, g.out, &ol);
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
