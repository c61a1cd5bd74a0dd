/*
 * engine_shards.c - several stores behind one engine (engine_config.shards
 * > 1, the server's engine-shards): shard k of n owns the Redis Cluster
 * hash slots [k * 16384 / n, (k + 1) * 16384 / n) (cudis_slot.h: the CRC16
 * of the key or its {hash tag}), so the node's slot map and its shards
 * agree. With the gpu store each shard is one device (engine_config
 * .devices); with the host stores n independent tables (NUMA, tests).
 *
 * A batch is split by shard: its ops are put in shard order (stable: ops
 * of one key stay in order), each shard runs its part on its own thread
 * (the caller's runs the first) with a private slice of the out buffer,
 * then the slices are packed to the front, the results go back to the
 * batch's order, and the ops that ran out of their slice (CUDIS_E_OUTBUF)
 * run again against the room left (engine_outbuf.c): the outcome is that
 * of one store running the batch (ops of a batch on different keys may
 * run in any order, cudis_op.h). A batch whose ops are all one shard's
 * goes to it whole. The memory budget is split evenly; statistics add up;
 * SCAN's cursor carries the shard in its top byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_slot.h"
#include "engine_internal.h"

typedef struct shards {
    engine_store_ops ops; /* this wrapper's table, named after the store it shards */
    const engine_store_ops *in;
    uint32_t n;
    void *st[CUDIS_MAX_SHARDS];
    engine_pool *pool; /* n threads (the caller's one of them) */
    uint64_t rnd;      /* RANDOMKEY's pick of a shard */
} shards;

static uint32_t shard_of(const shards *s, const cudis_batch *b, const cudis_op *op)
{
    unsigned slot = cudis_keyslot(b->in + op->key_off, op->key_len);
    return (uint32_t)((uint64_t)slot * s->n / CUDIS_SLOTS);
}

static void sh_destroy(void *store)
{
    shards *s = store;
    engine_pool_destroy(s->pool);
    for (uint32_t k = 0; k < s->n; k++) {
        if (s->st[k] != NULL) {
            s->in->destroy(s->st[k]);
        }
    }
    free(s);
}

/* The ops of b in shard order (stable): ops[p] is b->ops[idx[p]]; shard
 * k's run from start[k], cnt[k] of them. False when out of memory. */
typedef struct split {
    cudis_op *ops;
    cudis_result *res;
    uint32_t *idx;
    uint32_t cnt[CUDIS_MAX_SHARDS], start[CUDIS_MAX_SHARDS];
} split;

static bool split_make(const shards *s, const cudis_batch *b, const uint8_t *which, split *sp)
{
    uint32_t n = b->n_ops;
    sp->ops = malloc(sizeof(*sp->ops) * n);
    sp->res = calloc(n, sizeof(*sp->res));
    sp->idx = malloc(sizeof(*sp->idx) * n);
    if (sp->ops == NULL || sp->res == NULL || sp->idx == NULL) {
        free(sp->ops), free(sp->res), free(sp->idx);
        return false;
    }
    memset(sp->cnt, 0, sizeof(sp->cnt));
    for (uint32_t i = 0; i < n; i++) {
        sp->cnt[which[i]]++;
    }
    uint32_t at[CUDIS_MAX_SHARDS], run = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        sp->start[k] = at[k] = run;
        run += sp->cnt[k];
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = at[which[i]]++;
        sp->ops[p] = b->ops[i];
        sp->idx[p] = i;
    }
    return true;
}

static void split_done(split *sp, cudis_batch *b)
{
    for (uint32_t p = 0; p < b->n_ops; p++) {
        b->res[sp->idx[p]] = sp->res[p];
    }
    free(sp->ops), free(sp->res), free(sp->idx);
}

/* The ops that ran out of room, again (outbuf_rerun): shard after shard,
 * each given all the room the ones before it left, so that what fits the
 * buffer fits (a split by slices could fail them again). */
static int sh_exec_seq(void *ctx, cudis_batch *b)
{
    shards *s = ctx;
    uint32_t n = b->n_ops;
    uint8_t *which = malloc(n ? n : 1);
    split sp;
    if (which == NULL) {
        return CUDIS_E_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        which[i] = (uint8_t)shard_of(s, b, &b->ops[i]);
    }
    if (!split_make(s, b, which, &sp)) {
        free(which);
        return CUDIS_E_NOMEM;
    }
    free(which);
    uint64_t pos = b->out_len;
    int rc = CUDIS_OK;
    for (uint32_t k = 0; k < s->n && rc == CUDIS_OK; k++) {
        if (sp.cnt[k] == 0) {
            continue;
        }
        cudis_batch sub = *b;
        sub.ops = sp.ops + sp.start[k];
        sub.res = sp.res + sp.start[k];
        sub.n_ops = sp.cnt[k];
        sub.out = b->out != NULL && pos < b->out_cap ? b->out + pos : NULL;
        sub.out_cap = b->out_cap > pos ? b->out_cap - pos : 0;
        sub.out_len = 0;
        rc = s->in->execute(s->st[k], &sub);
        uint64_t used = rc == CUDIS_OK ? outbuf_used(&sub) : 0;
        for (uint32_t i = 0; i < sub.n_ops; i++) {
            if (sub.res[i].status == CUDIS_OK && (sub.res[i].flags & CUDIS_R_VALUE)) {
                sub.res[i].val_off += pos;
            }
        }
        pos += used;
    }
    split_done(&sp, b);
    b->out_len = pos;
    return rc;
}

static int sh_execute(void *store, cudis_batch *b)
{
    shards *s = store;
    uint32_t n = b->n_ops;
    if (n == 0) {
        return s->in->execute(s->st[0], b);
    }
    uint8_t *which = malloc(n);
    if (which == NULL) {
        return CUDIS_E_NOMEM;
    }
    uint32_t first = shard_of(s, b, &b->ops[0]);
    bool one = true;
    for (uint32_t i = 0; i < n; i++) {
        which[i] = (uint8_t)shard_of(s, b, &b->ops[i]);
        one = one && which[i] == first;
    }
    if (one) { /* the whole batch is one shard's */
        free(which);
        return s->in->execute(s->st[first], b);
    }
    split sp;
    if (!split_make(s, b, which, &sp)) {
        free(which);
        return CUDIS_E_NOMEM;
    }
    free(which);
    /* each shard's part, with a slice of the out buffer in proportion */
    uint64_t base = b->out_len;
    uint64_t avail = b->out_cap > base ? b->out_cap - base : 0;
    cudis_batch sub[CUDIS_MAX_SHARDS];
    uint64_t off = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        uint64_t slice = k == s->n - 1 ? avail - off : avail * sp.cnt[k] / n;
        sub[k] = *b;
        sub[k].ops = sp.ops + sp.start[k];
        sub[k].res = sp.res + sp.start[k];
        sub[k].n_ops = sp.cnt[k];
        sub[k].out = b->out != NULL ? b->out + base + off : NULL;
        sub[k].out_cap = slice;
        sub[k].out_len = 0;
        off += slice;
    }
    int rcs[CUDIS_MAX_SHARDS];
    engine_pool_run(s->pool, s->in, s->st, sub, s->n, rcs);
    int rc = CUDIS_OK;
    for (uint32_t k = 0; k < s->n; k++) {
        if (rcs[k] < 0) {
            rc = rcs[k];
        }
    }
    if (rc == CUDIS_OK) {
        /* pack the slices to the front; results back in the batch's order */
        uint64_t pos = base;
        for (uint32_t k = 0; k < s->n; k++) {
            uint64_t used = sp.cnt[k] ? outbuf_used(&sub[k]) : 0;
            if (used > 0 && b->out + pos != sub[k].out) {
                memmove(b->out + pos, sub[k].out, used);
            }
            for (uint32_t i = 0; i < sp.cnt[k]; i++) {
                cudis_result *r = &sub[k].res[i];
                if (r->status == CUDIS_OK && (r->flags & CUDIS_R_VALUE)) {
                    r->val_off += pos;
                }
            }
            pos += used;
        }
        split_done(&sp, b);
        return outbuf_rerun(sh_exec_seq, s, b, pos, false, NULL);
    }
    free(sp.ops), free(sp.res), free(sp.idx);
    return rc;
}

/* The cursor's top byte is the shard; the rest the shard's own cursor. */
#define CUR_SHIFT 56
#define CUR_MASK ((1ull << CUR_SHIFT) - 1)

static int sh_scan(void *store, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                   cudis_scan_fn fn, void *arg, uint64_t *next)
{
    shards *s = store;
    uint32_t k = (uint32_t)(cursor >> CUR_SHIFT);
    if (k >= s->n) {
        *next = 0;
        return CUDIS_OK;
    }
    uint64_t in_next = 0;
    int rc = s->in->scan(s->st[k], db, cursor & CUR_MASK, count, now_ms, fn, arg, &in_next);
    if (rc != CUDIS_OK) {
        return rc;
    }
    if (in_next > CUR_MASK) {
        return CUDIS_E_INVAL; /* a store whose cursors need the top byte */
    }
    if (in_next != 0) {
        *next = ((uint64_t)k << CUR_SHIFT) | in_next;
    } else {
        *next = k + 1 < s->n ? (uint64_t)(k + 1) << CUR_SHIFT : 0;
    }
    return CUDIS_OK;
}

static int sh_random_key(void *store, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                         uint32_t *len)
{
    shards *s = store;
    uint64_t r = __atomic_add_fetch(&s->rnd, 0x9E3779B97F4A7C15ull, __ATOMIC_RELAXED);
    uint32_t k0 = (uint32_t)((r >> 32) % s->n);
    for (uint32_t j = 0; j < s->n; j++) {
        int rc = s->in->random_key(s->st[(k0 + j) % s->n], db, now_ms, buf, cap, len);
        if (rc != 0) {
            return rc; /* found, or an error */
        }
    }
    return 0;
}

static int sh_flush(void *store, int db)
{
    shards *s = store;
    int rc = CUDIS_OK;
    for (uint32_t k = 0; k < s->n; k++) {
        int r = s->in->flush(s->st[k], db);
        rc = r < 0 ? r : rc;
    }
    return rc;
}

static uint64_t sh_db_size(void *store, uint8_t db)
{
    shards *s = store;
    uint64_t t = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        t += s->in->db_size(s->st[k], db);
    }
    return t;
}

static int sh_sweep(void *store, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev)
{
    shards *s = store;
    int t = 0;
    uint32_t part = max_work / s->n ? max_work / s->n : 1;
    for (uint32_t k = 0; k < s->n; k++) {
        int r = s->in->sweep(s->st[k], now_ms, part, ev);
        t += r > 0 ? r : 0;
    }
    return t;
}

static void sh_expires(void *store, int64_t now_ms, uint32_t max_work, cudis_expires *out)
{
    shards *s = store;
    cudis_expires one[1]; /* 4 KiB */
    memset(out, 0, sizeof(*out));
    out->exact = true;
    uint32_t part = max_work / s->n ? max_work / s->n : 1;
    for (uint32_t k = 0; k < s->n; k++) {
        s->in->expires(s->st[k], now_ms, part, one);
        out->exact = out->exact && one->exact;
        for (int d = 0; d < CUDIS_MAX_DBS; d++) { /* ttl_ms: a sum until the end */
            out->keys[d] += one->keys[d];
            out->ttl_ms[d] += one->ttl_ms[d] * (double)one->keys[d];
        }
    }
    for (int d = 0; d < CUDIS_MAX_DBS; d++) {
        out->ttl_ms[d] = out->keys[d] ? out->ttl_ms[d] / (double)out->keys[d] : 0.0;
    }
}

static uint64_t sh_sweep_units(void *store)
{
    shards *s = store;
    uint64_t t = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        if (s->in->sweep_units != NULL) {
            t += s->in->sweep_units(s->st[k]);
        } else {
            cudis_stats st;
            s->in->stats(s->st[k], &st);
            t += st.capacity;
        }
    }
    return t;
}

static int sh_set_policy(void *store, uint32_t policy, uint32_t lfu_log_factor,
                         uint32_t lfu_decay_time)
{
    shards *s = store;
    int rc = CUDIS_OK;
    for (uint32_t k = 0; k < s->n; k++) {
        int r = s->in->set_policy(s->st[k], policy, lfu_log_factor, lfu_decay_time);
        rc = r < 0 ? r : rc;
    }
    return rc;
}

static uint64_t sh_set_memory(void *store, uint64_t bytes)
{
    shards *s = store;
    uint64_t t = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        t += s->in->set_memory(s->st[k], bytes / s->n);
    }
    return t;
}

/* The first shard's clock: OBJECT IDLETIME dates a key's stamp by samples
 * of it, so keys of the other shards get an approximate idle time. */
static uint64_t sh_clock(void *store)
{
    shards *s = store;
    return s->in->clock(s->st[0]);
}

static void sh_clock_tick(void *store)
{
    shards *s = store;
    for (uint32_t k = 0; k < s->n; k++) {
        s->in->clock_tick(s->st[k]);
    }
}

static int sh_index_tick(void *store, int64_t now_ms, cudis_evbuf *ev)
{
    shards *s = store;
    int any = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        any |= s->in->index_tick(s->st[k], now_ms, ev) == 1;
    }
    return any;
}

static void sh_index_expect(void *store, uint64_t items, uint64_t item_bytes)
{
    shards *s = store;
    for (uint32_t k = 0; k < s->n; k++) { /* the slots, and so the keys, split evenly */
        s->in->index_expect(s->st[k], items / s->n + 1, item_bytes);
    }
}

static void sh_stats(void *store, cudis_stats *out)
{
    shards *s = store;
    memset(out, 0, sizeof(*out));
    for (uint32_t k = 0; k < s->n; k++) {
        cudis_stats st;
        s->in->stats(s->st[k], &st);
        out->items += st.items;
        out->bytes_used += st.bytes_used;
        out->bytes_budget += st.bytes_budget;
        out->index_bytes += st.index_bytes;
        out->key_bytes += st.key_bytes;
        out->value_bytes += st.value_bytes;
        out->hits += st.hits;
        out->misses += st.misses;
        out->evict_bucket += st.evict_bucket;
        out->evict_memory += st.evict_memory;
        out->evict_expired += st.evict_expired;
        out->capacity += st.capacity;
    }
    out->load_factor = out->capacity ? (double)out->items / (double)out->capacity : 0;
}

static void sh_reset_stats(void *store)
{
    shards *s = store;
    for (uint32_t k = 0; k < s->n; k++) {
        s->in->reset_stats(s->st[k]);
    }
}

/* engine_shards:n, then each shard's items, memory and hits, and its own
 * lines with "shard<k>_" before each field. */
static size_t sh_info(void *store, char *buf, size_t cap)
{
    shards *s = store;
    size_t w = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int m = snprintf(buf + (w < cap ? w : cap), w < cap ? cap - w : 0, __VA_ARGS__);           \
        w += m > 0 ? (size_t)m : 0;                                                                \
    } while (0)
    PUT("engine_shards:%u\r\n", s->n);
    char *tmp = malloc(8192);
    for (uint32_t k = 0; k < s->n; k++) {
        cudis_stats st;
        s->in->stats(s->st[k], &st);
        PUT("shard%u:slots=%u-%u,items=%llu,bytes_used=%llu,bytes_budget=%llu,hits=%llu,"
            "misses=%llu,evicted=%llu\r\n",
            k, (unsigned)((uint64_t)k * CUDIS_SLOTS + s->n - 1) / s->n,
            (unsigned)(((uint64_t)(k + 1) * CUDIS_SLOTS + s->n - 1) / s->n - 1),
            (unsigned long long)st.items, (unsigned long long)st.bytes_used,
            (unsigned long long)st.bytes_budget, (unsigned long long)st.hits,
            (unsigned long long)st.misses,
            (unsigned long long)(st.evict_bucket + st.evict_memory));
        if (s->in->info == NULL || tmp == NULL) {
            continue;
        }
        size_t got = s->in->info(s->st[k], tmp, 8192);
        tmp[got < 8192 ? got : 8191] = '\0';
        for (char *line = tmp, *nl; *line; line = nl) {
            nl = strstr(line, "\r\n");
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            PUT("shard%u_%.*s\r\n", k, (int)len, line);
            nl = nl ? nl + 2 : line + len;
        }
    }
    free(tmp);
#undef PUT
    return w;
}

static const char *sh_failure(void *store)
{
    shards *s = store;
    for (uint32_t k = 0; k < s->n; k++) {
        const char *f = s->in->failure(s->st[k]);
        if (f != NULL) {
            return f;
        }
    }
    return NULL;
}

/* The shards' store over `in`: n of them, each with memory/n and its own
 * device (cfg->devices[k], or cfg->device + k when the list is empty). */
void *engine_shards_create(const engine_store_ops *in, const engine_config *cfg,
                           const engine_store_ops **ops_out, char *why, size_t why_len)
{
    uint32_t n = cfg->shards;
    if (n < 2 || n > CUDIS_MAX_SHARDS) {
        snprintf(why, why_len, "%s: %u shards (2 to %d)", in->name, n, CUDIS_MAX_SHARDS);
        return NULL;
    }
    shards *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(why, why_len, "%s: out of memory", in->name);
        return NULL;
    }
    s->in = in;
    s->n = n;
    engine_config c = *cfg;
    c.shards = 1;
    c.threads = 1; /* each shard runs on one of the shards' threads */
    c.memory_bytes = cfg->memory_bytes / n;
    c.max_items = cfg->max_items ? (cfg->max_items + n - 1) / n : 0;
    for (uint32_t k = 0; k < n; k++) {
        c.device = cfg->ndevices ? cfg->devices[k % cfg->ndevices]
                   : cfg->device >= 0 ? cfg->device + (int)k
                                      : (int)k;
        char w[256] = "";
        s->st[k] = in->create(&c, w, sizeof(w));
        if (s->st[k] == NULL) {
            snprintf(why, why_len, "%s shard %u: %s", in->name, k, w[0] ? w : "create failed");
            sh_destroy(s);
            return NULL;
        }
    }
    s->pool = engine_pool_create(n);
    s->ops = (engine_store_ops){
        .name = in->name,
        .description = in->description,
        .concurrent = in->concurrent,
        .create = NULL,
        .destroy = sh_destroy,
        .execute = sh_execute,
        .scan = sh_scan,
        .random_key = sh_random_key,
        .flush = sh_flush,
        .db_size = sh_db_size,
        .sweep = in->sweep ? sh_sweep : NULL,
        .sweep_units = sh_sweep_units,
        .expires = in->expires ? sh_expires : NULL,
        .set_policy = in->set_policy ? sh_set_policy : NULL,
        .set_memory = in->set_memory ? sh_set_memory : NULL,
        .clock = in->clock ? sh_clock : NULL,
        .clock_tick = in->clock_tick ? sh_clock_tick : NULL,
        .index_tick = in->index_tick ? sh_index_tick : NULL,
        .index_expect = in->index_expect ? sh_index_expect : NULL,
        .stats = sh_stats,
        .reset_stats = sh_reset_stats,
        .info = sh_info,
        .failure = in->failure ? sh_failure : NULL,
        .submit = NULL,
        .complete = NULL,
    };
    *ops_out = &s->ops;
    snprintf(why, why_len, "%s: %u shards", in->name, n);
    return s;
}
