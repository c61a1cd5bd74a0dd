/*
 * ccht.c - the host CCHT (engine "cpu"): creation over one block of host
 * memory, the batch loop (hash and prefetch ahead, then the one executor of
 * ccht_exec.h for each op), single-key wrappers, scan, random key, flush,
 * sweep and statistics. The algorithm itself (buckets, arena, second LRU
 * level, the per-op code) lives in the CUDIS_HD headers that the GPU
 * kernels compile too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ccht_internal.h"
#include "cudis_err.h"
#include "cudis_time.h"

#define CCHT_DEFAULT_SEED 0x5bd1e9955bd1e995ull
#define CCHT_PIPE 16 /* ops hashed and bucket-prefetched ahead in a batch */
#define CCHT_PIPE_ITEM 6 /* ops whose items are prefetched ahead */

/* ------------------------------------------------------------------------
 * Creation
 * ---------------------------------------------------------------------- */

void ccht_options_default(ccht_options *o)
{
    memset(o, 0, sizeof(*o));
    o->memory_bytes = 64ull << 20;
    o->ways = 8;
    o->max_key_len = 65535;
    o->max_val_len = 1u << 20;
    o->expected_item_bytes = 64;
    o->allow_empty_key = true;
    o->lfu_log_factor = 10;
    o->lfu_decay_time = 1;
}

static void *map_zero(uint64_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    /* Random probes over a big index miss the TLB on 4 KiB pages (and a
     * prefetch that misses the TLB may be dropped): ask for huge pages. */
    if (bytes >= (2u << 20)) {
        madvise(p, bytes, MADV_HUGEPAGE);
    }
#endif
    return p;
}

static void fail(char *why, size_t why_len, const char *msg)
{
    if (why && why_len) {
        snprintf(why, why_len, "ccht: %s", msg);
    }
}

ccht *ccht_create(const ccht_options *opt, char *why, size_t why_len)
{
    ccht_options o = *opt;
    if (o.ways == 0) {
        o.ways = 8;
    }
    if (o.max_key_len == 0) {
        o.max_key_len = 65535;
    }
    if (o.max_val_len == 0) {
        o.max_val_len = 1u << 20;
    }
    if (o.max_key_len > CCHT_ITEM_KLEN_MASK) {
        o.max_key_len = CCHT_ITEM_KLEN_MASK;
    }
    if (o.expected_item_bytes == 0) {
        o.expected_item_bytes = 64;
    }
    if (o.seed == 0) {
        o.seed = CCHT_DEFAULT_SEED;
    }
    ccht *t = calloc(1, sizeof(*t));
    if (!t) {
        fail(why, why_len, "out of memory");
        return NULL;
    }
    const char *gwhy = NULL;
    if (ccht_geom_plan(&t->g, o.memory_bytes, o.max_items, o.ways, o.expected_item_bytes, &gwhy) !=
        0) {
        fail(why, why_len, gwhy);
        free(t);
        return NULL;
    }
    t->opt = o;
    t->mem_bytes = t->g.total;
    t->mem = map_zero(t->mem_bytes);
    if (!t->mem) {
        fail(why, why_len, "cannot map memory");
        free(t);
        return NULL;
    }
    ccht_geom_bind(&t->g, &t->T, t->mem, o.max_key_len, o.max_val_len, o.allow_empty_key, o.seed);
    ccht_geom_meta_init(&t->g, t->mem + t->g.meta_off, false);
    t->budget = o.memory_bytes;
    if (ccht_set_policy(t, o.policy, o.lfu_log_factor, o.lfu_decay_time) != CUDIS_OK) {
        fail(why, why_len, "unknown eviction policy");
        ccht_destroy(t);
        return NULL;
    }
    return t;
}

uint64_t ccht_clock(const ccht *t)
{
    return __atomic_load_n(t->T.clock, __ATOMIC_RELAXED);
}

uint64_t ccht_set_memory(ccht *t, uint64_t bytes)
{
    uint64_t fixed = t->g.index_bytes + t->g.meta_bytes;
    if (bytes > t->opt.memory_bytes) {
        bytes = t->opt.memory_bytes;
    }
    uint64_t pages = bytes > fixed ? (bytes - fixed) / t->g.page_bytes : 0;
    if (pages < 2) { /* the index stays whole: the least that holds items */
        pages = t->g.n_pages < 2 ? t->g.n_pages : 2;
        bytes = fixed + pages * t->g.page_bytes;
    }
    if (pages > t->g.n_pages) {
        pages = t->g.n_pages;
    }
    __atomic_store_n(&t->T.a.pool->limit, (uint32_t)pages, __ATOMIC_RELAXED);
    __atomic_store_n(&t->budget, bytes, __ATOMIC_RELAXED);
    return bytes;
}

int ccht_set_policy(ccht *t, uint32_t policy, uint32_t lfu_log_factor, uint32_t lfu_decay_time)
{
    if (policy >= CUDIS_POL__COUNT) {
        return CUDIS_E_INVAL;
    }
    __atomic_store_n(&t->T.lfu_log_factor, lfu_log_factor, __ATOMIC_RELAXED);
    __atomic_store_n(&t->T.lfu_decay_time, lfu_decay_time, __ATOMIC_RELAXED);
    __atomic_store_n(&t->T.policy, policy, __ATOMIC_RELAXED);
    return CUDIS_OK;
}

void ccht_destroy(ccht *t)
{
    if (!t) {
        return;
    }
    if (t->mem) {
        munmap(t->mem, t->mem_bytes);
    }
    free(t);
}

const ccht_table *ccht_table_of(const ccht *t)
{
    return &t->T;
}

/* ------------------------------------------------------------------------
 * Statistics
 * ---------------------------------------------------------------------- */

static uint64_t ld64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void ccht_stats(ccht *t, cudis_stats *s)
{
    const uint64_t *c = t->T.cnt;
    memset(s, 0, sizeof(*s));
    s->items = ld64(&c[CCHT_C_ITEMS]);
    s->index_bytes = t->g.index_bytes + t->g.meta_bytes;
    /* the chunks of live items: pages carved but free again are the
     * arena's to hand out (page moves give them to any class) */
    s->bytes_used = s->index_bytes + ld64(&c[CCHT_C_CHUNK_BYTES]);
    s->bytes_budget = __atomic_load_n(&t->budget, __ATOMIC_RELAXED);
    s->key_bytes = ld64(&c[CCHT_C_KEY_BYTES]);
    s->value_bytes = ld64(&c[CCHT_C_VAL_BYTES]);
    s->hits = ld64(&c[CCHT_C_HITS]);
    s->misses = ld64(&c[CCHT_C_MISSES]);
    s->evict_bucket = ld64(&c[CCHT_C_EVICT_BUCKET]);
    s->evict_memory = ld64(&c[CCHT_C_EVICT_MEMORY]);
    s->evict_expired = ld64(&c[CCHT_C_EVICT_EXPIRED]);
    s->capacity = t->g.n_buckets * t->g.ways;
    s->load_factor = s->capacity ? (double)s->items / (double)s->capacity : 0.0;
}

void ccht_reset_stats(ccht *t)
{
    for (int i = 0; i < CCHT_C_FIRST_GAUGE; i++) {
        __atomic_store_n(&t->T.cnt[i], 0, __ATOMIC_RELAXED);
    }
}

size_t ccht_info(ccht *t, char *buf, size_t cap)
{
    int n = snprintf(buf, cap,
                     "ccht_ways:%u\r\nccht_buckets:%llu\r\nccht_page_bytes:%llu\r\n"
                     "ccht_pages:%u\r\nccht_pages_used:%u\r\nccht_size_classes:%u\r\n"
                     "ccht_writes_full:%llu\r\n",
                     t->g.ways, (unsigned long long)t->g.n_buckets,
                     (unsigned long long)t->g.page_bytes, t->g.n_pages,
                     __atomic_load_n(&t->T.a.pool->pages_used, __ATOMIC_RELAXED), t->g.n_classes,
                     (unsigned long long)ld64(&t->T.cnt[CCHT_C_FULL]));
    return n < 0 ? 0 : (size_t)n;
}

/* ------------------------------------------------------------------------
 * The batch loop
 * ---------------------------------------------------------------------- */

/* Move the logical clock by n ticks and clamp the buckets those ticks are
 * due (ccht_bkt_clamp keeps every stamp within reach of the clock).
 * Returns the clock before. */
static uint64_t clock_advance(const ccht_table *T, uint64_t n)
{
    uint64_t base = __atomic_fetch_add(T->clock, n, __ATOMIC_RELAXED);
    uint64_t c_first, c_n;
    ccht_clamp_range(T->v.n_buckets, base, base + n, &c_first, &c_n);
    if (ccht_policy_lfu(ccht_policy_of(T))) {
        c_n = 0; /* the stamps hold LFU counters */
    }
    for (uint64_t k = 0; k < c_n; k++) {
        ccht_bkt_clamp(&T->v, (c_first + k) % T->v.n_buckets, (uint32_t)(base + n));
    }
    return base;
}

int ccht_execute(ccht *t, cudis_batch *b)
{
    const ccht_table *T = &t->T;
    ccht_tally ty;
    ccht_tally_zero(&ty);
    uint32_t n = b->n_ops;
    uint64_t base = clock_advance(T, n);
    uint64_t seed = ccht_batch_seed(base, base + n);
    ccht_env x;
    memset(&x, 0, sizeof(x));
    x.out = b->out;
    x.out_cap = b->out ? b->out_cap : 0;
    x.out_len = &b->out_len;
    x.now_ms = b->now_ms;
    x.ev = b->ev;
    ccht_hkey ring[CCHT_PIPE];
    int8_t err[CCHT_PIPE];
    /* Software pipeline: hash and prefetch the buckets CCHT_PIPE - 1 ops
     * ahead, prefetch the candidate items CCHT_PIPE_ITEM ops ahead (their
     * buckets have arrived by then). */
    for (uint32_t j = 0; j < n + CCHT_PIPE; j++) {
        if (j < n) {
            const cudis_op *op = &b->ops[j];
            int e = ccht_exec_check(T, op);
            err[j % CCHT_PIPE] = (int8_t)e;
            if (e == CUDIS_OK) {
                ring[j % CCHT_PIPE] =
                    ccht_hash_key(&T->v, op->db, b->in + op->key_off, op->key_len);
                ccht_prefetch_buckets(&T->v, &ring[j % CCHT_PIPE]);
            }
        }
        if (j >= CCHT_PIPE - 1 - CCHT_PIPE_ITEM && j - (CCHT_PIPE - 1 - CCHT_PIPE_ITEM) < n) {
            uint32_t k = j - (CCHT_PIPE - 1 - CCHT_PIPE_ITEM);
            if (err[k % CCHT_PIPE] == CUDIS_OK) {
                ccht_prefetch_items(&T->v, &ring[k % CCHT_PIPE]);
            }
        }
        if (j >= CCHT_PIPE - 1 && j - (CCHT_PIPE - 1) < n) {
            uint32_t i = j - (CCHT_PIPE - 1);
            const cudis_op *op = &b->ops[i];
            ccht_res_clear(&b->res[i], err[i % CCHT_PIPE]);
            if (err[i % CCHT_PIPE] != CUDIS_OK) {
                continue;
            }
            x.op = op;
            x.key = b->in + op->key_off;
            x.arg = b->in + op->val_off;
            x.res = &b->res[i];
            ccht_env_place(&x, base, seed, i);
            if (!ccht_op_is_read(op) || !ccht_exec_read(T, &x, &ring[i % CCHT_PIPE], &ty)) {
                ccht_exec_write(T, &x, &ring[i % CCHT_PIPE], &ty);
            }
        }
    }
    ccht_tally_flush(T, &ty);
    return CUDIS_OK;
}

/* ------------------------------------------------------------------------
 * Single-key wrappers
 * ---------------------------------------------------------------------- */

/* Run one op; returns its status. Key and value are packed into one input
 * buffer (ops address both by offsets from batch->in). */
static int run1(ccht *t, cudis_op *op, const void *key, const void *val, uint8_t *out,
                uint32_t cap, cudis_result *res)
{
    uint8_t small[512];
    uint64_t need = (uint64_t)op->key_len + (val ? op->val_len : 0);
    uint8_t *in = small;
    if (need > sizeof(small)) {
        in = malloc(need);
        if (!in) {
            ccht_res_clear(res, CUDIS_E_NOMEM);
            return CUDIS_E_NOMEM;
        }
    }
    if (op->key_len) {
        memcpy(in, key, op->key_len);
    }
    if (val && op->val_len) {
        memcpy(in + op->key_len, val, op->val_len);
    }
    op->key_off = 0;
    op->val_off = op->key_len;
    cudis_batch b = {0};
    b.ops = op;
    b.n_ops = 1;
    b.in = in;
    b.res = res;
    b.out = out;
    b.out_cap = cap;
    b.now_ms = cudis_now_ms();
    ccht_execute(t, &b);
    if (in != small) {
        free(in);
    }
    return res->status;
}

int ccht_get(ccht *t, const void *key, uint32_t key_len, void *buf, uint32_t cap,
             uint32_t *val_len)
{
    cudis_op op = {.code = CUDIS_OP_GET, .key_len = key_len};
    cudis_result r;
    int rc = run1(t, &op, key, NULL, buf, cap, &r);
    if (rc == CUDIS_E_OUTBUF) {
        *val_len = r.val_len;
    }
    if (rc < 0) {
        return rc;
    }
    if (!(r.flags & CUDIS_R_FOUND)) {
        return 0;
    }
    if (r.val_len && r.val_off != 0) {
        memmove(buf, (uint8_t *)buf + r.val_off, r.val_len);
    }
    *val_len = r.val_len;
    return 1;
}

int ccht_set(ccht *t, const void *key, uint32_t key_len, const void *val, uint32_t val_len,
             int64_t expire_ms, uint16_t flags)
{
    cudis_op op = {.code = CUDIS_OP_SET,
                   .flags = (uint16_t)(flags & ~CUDIS_F_GET),
                   .key_len = key_len,
                   .val_len = val_len,
                   .expire_ms = expire_ms};
    cudis_result r;
    int rc = run1(t, &op, key, val_len ? val : NULL, NULL, 0, &r);
    return rc < 0 ? rc : (r.flags & CUDIS_R_DONE) != 0;
}

static int simple(ccht *t, uint8_t code, const void *key, uint32_t key_len, int64_t expire_ms,
                  uint16_t flags, cudis_result *r)
{
    cudis_op op = {.code = code, .flags = flags, .key_len = key_len, .expire_ms = expire_ms};
    return run1(t, &op, key, NULL, NULL, 0, r);
}

int ccht_del(ccht *t, const void *key, uint32_t key_len)
{
    cudis_result r;
    int rc = simple(t, CUDIS_OP_DEL, key, key_len, 0, 0, &r);
    return rc < 0 ? rc : (r.flags & CUDIS_R_DONE) != 0;
}

int ccht_exists(ccht *t, const void *key, uint32_t key_len)
{
    cudis_result r;
    int rc = simple(t, CUDIS_OP_EXISTS, key, key_len, 0, 0, &r);
    return rc < 0 ? rc : (r.flags & CUDIS_R_FOUND) != 0;
}

int ccht_incrby(ccht *t, const void *key, uint32_t key_len, int64_t delta, int64_t *out)
{
    cudis_op op = {.code = CUDIS_OP_INCRBY, .key_len = key_len, .arg = delta};
    cudis_result r;
    int rc = run1(t, &op, key, NULL, NULL, 0, &r);
    if (rc == CUDIS_OK && out) {
        *out = r.num;
    }
    return rc;
}

int ccht_expire(ccht *t, const void *key, uint32_t key_len, int64_t expire_ms, uint16_t flags)
{
    cudis_result r;
    int rc = simple(t, CUDIS_OP_EXPIRE, key, key_len, expire_ms, flags, &r);
    return rc < 0 ? rc : (r.flags & CUDIS_R_DONE) != 0;
}

int ccht_persist(ccht *t, const void *key, uint32_t key_len)
{
    cudis_result r;
    int rc = simple(t, CUDIS_OP_PERSIST, key, key_len, 0, 0, &r);
    return rc < 0 ? rc : (r.flags & CUDIS_R_DONE) != 0;
}

int ccht_ttl(ccht *t, const void *key, uint32_t key_len, int64_t *expire_ms)
{
    cudis_result r;
    int rc = simple(t, CUDIS_OP_TTL, key, key_len, 0, 0, &r);
    if (rc < 0) {
        return rc;
    }
    if (expire_ms) {
        *expire_ms = r.num;
    }
    return (r.flags & CUDIS_R_FOUND) != 0;
}

/* ------------------------------------------------------------------------
 * Whole-table operations
 * ---------------------------------------------------------------------- */

/* Copy the key of slot (b, w) if it holds a live item of database db (or
 * of any: CUDIS_DB_ALL): 1 copied, 0 empty, expired or another database's,
 * CUDIS_E_OUTBUF when cap is too small (*len = needed). */
static int slot_key(ccht *t, int db, uint64_t b, uint32_t w, int64_t now_ms, uint8_t *buf,
                    uint32_t cap, uint32_t *len, int64_t *expire, uint8_t *db_out)
{
    const ccht_view *v = &t->T.v;
    for (;;) {
        uint64_t ver = ccht_read_begin(v, b);
        uint64_t word = cudis_load_acq_u64(ccht_bkt_slot(v, b, w));
        if (word == 0) {
            return 0;
        }
        uint64_t off = ccht_slot_off(word);
        uint32_t h0 = ccht_item_h0(v, off);
        uint32_t klen = h0 & CCHT_ITEM_KLEN_MASK;
        if (!(h0 & CCHT_ITEM_LIVE) ||
            off + ccht_item_hdr((h0 & CCHT_ITEM_EXP) != 0) + klen > v->arena_bytes) {
            if (ccht_read_valid(v, b, ver)) {
                return 0; /* cannot happen with a consistent table */
            }
            continue;
        }
        if (db != CUDIS_DB_ALL && ccht_item_db(h0) != (uint32_t)db) {
            if (ccht_read_valid(v, b, ver)) {
                return 0;
            }
            continue;
        }
        int64_t e = ccht_item_expire(v, off, h0);
        if (klen <= cap) {
            ccht_bytes_read(buf, ccht_item_key(v, off, h0), klen);
        }
        if (!ccht_read_valid(v, b, ver)) {
            continue;
        }
        if (e != 0 && e <= now_ms) {
            return 0;
        }
        *len = klen;
        *expire = e;
        *db_out = (uint8_t)ccht_item_db(h0);
        return klen <= cap ? 1 : CUDIS_E_OUTBUF;
    }
}

int ccht_scan(ccht *t, int db, uint64_t cursor, uint32_t count, int64_t now_ms, cudis_scan_fn fn,
              void *arg, uint64_t *next)
{
    uint64_t n = t->T.v.n_buckets;
    if (count == 0) {
        count = 1;
    }
    uint32_t cap = t->opt.max_key_len;
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf) {
        return CUDIS_E_NOMEM;
    }
    uint64_t b = cursor;
    uint64_t end = cursor + count < n ? cursor + count : n;
    for (; b < end; b++) {
        for (uint32_t w = 0; w < t->T.v.ways; w++) {
            uint32_t len;
            int64_t e;
            uint8_t kdb;
            if (slot_key(t, db, b, w, now_ms, buf, cap, &len, &e, &kdb) == 1 &&
                fn(arg, kdb, buf, len, e) != 0) {
                free(buf);
                *next = b + 1 < n ? b + 1 : 0;
                return CUDIS_OK;
            }
        }
    }
    free(buf);
    *next = b < n ? b : 0;
    return CUDIS_OK;
}

int ccht_random_key(ccht *t, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap, uint32_t *len)
{
    uint64_t n = t->T.v.n_buckets;
    uint32_t ways = t->T.v.ways;
    uint64_t r = cudis_mix64(cudis_mono_ns() ^ (uintptr_t)len, 0x9e3779b97f4a7c15ull);
    int64_t e;
    uint8_t kdb;
    if (ccht_db_size(t, db) == 0) {
        return 0;
    }
    for (int tries = 0; tries < 64; tries++) {
        r = cudis_mix64(r, 0xd6e8feb86659fd93ull) + (uint64_t)tries;
        uint64_t b = ccht_fastrange(r, n);
        uint32_t w0 = (uint32_t)(r % ways);
        for (uint32_t i = 0; i < ways; i++) {
            int rc = slot_key(t, db, b, (w0 + i) % ways, now_ms, buf, cap, len, &e, &kdb);
            if (rc != 0) {
                return rc;
            }
        }
    }
    uint64_t start = ccht_fastrange(r, n);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t b = (start + k) % n;
        for (uint32_t w = 0; w < ways; w++) {
            int rc = slot_key(t, db, b, w, now_ms, buf, cap, len, &e, &kdb);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

int ccht_flush(ccht *t, int db)
{
    if (db == CUDIS_DB_ALL) {
        memset(t->T.v.buckets, 0, t->g.index_bytes);
        ccht_geom_meta_init(&t->g, t->mem + t->g.meta_off, true);
        return CUDIS_OK;
    }
    /* one database: its items leave bucket by bucket, under each lock */
    ccht_tally ty;
    ccht_tally_zero(&ty);
    uint32_t shard = (uint32_t)cudis_mono_ns();
    for (uint64_t b = 0; b < t->T.v.n_buckets; b++) {
        ccht_drop_db_bucket(&t->T, b, (uint32_t)db, shard + (uint32_t)b, &ty);
    }
    ccht_tally_flush(&t->T, &ty);
    return CUDIS_OK;
}

uint64_t ccht_db_size(ccht *t, uint8_t db)
{
    const uint64_t *dn = t->T.v.db_items;
    if (db != 0) {
        return ld64(&dn[db]);
    }
    uint64_t n = ld64(&t->T.cnt[CCHT_C_ITEMS]);
    for (int i = 1; i < CCHT_DBS; i++) {
        n -= ld64(&dn[i]);
    }
    return n;
}

uint64_t ccht_sweep_units(const ccht *t)
{
    return cudis_vmap_units(t->T.v.vmap, t->T.v.vmap_words);
}

typedef struct sweep_ctx {
    const ccht_table *T;
    int64_t now_ms;
    uint32_t shard;
    ccht_tally ty;
    cudis_evbuf *ev;
} sweep_ctx;

static uint32_t sweep_visit(void *arg, uint64_t b)
{
    sweep_ctx *c = arg;
    return ccht_sweep_bucket(c->T, b, c->now_ms, c->shard++, &c->ty, c->ev);
}

/* While the arena holds more pages than its limit (a lowered budget):
 * give back up to CCHT_RELEASE_PAGES of the coldest, evicting their items
 * as the policy lets (a page it keeps items of stays). */
#define CCHT_RELEASE_PAGES 8

static void release_pages(ccht *t, int64_t now_ms, ccht_tally *ty, cudis_evbuf *ev)
{
    const ccht_table *T = &t->T;
    const ccht_pool *pl = T->a.pool;
    uint64_t rng = cudis_mono_ns() | 1;
    ccht_mem_ctx m = {.now_ms = now_ms,
                      .now_stamp = (uint32_t)__atomic_load_n(T->clock, __ATOMIC_RELAXED),
                      .shard = (uint32_t)rng,
                      .policy = ccht_policy_of(T),
                      .lfu_decay = ccht_lfu_decay_of(T),
                      .rng = &rng,
                      .ty = ty,
                      .ev = ev};
    int moved = 0;
    for (int k = 0; k < CCHT_RELEASE_PAGES * 4 && moved < CCHT_RELEASE_PAGES; k++) {
        if (__atomic_load_n(&pl->pages_used, __ATOMIC_RELAXED) <=
            __atomic_load_n(&pl->limit, __ATOMIC_RELAXED)) {
            return;
        }
        moved += ccht_move_page(T, CCHT_NONE32, UINT32_MAX, &m) ? 1 : 0;
    }
}

int ccht_sweep(ccht *t, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev)
{
    sweep_ctx c = {.T = &t->T, .now_ms = now_ms, .shard = (uint32_t)cudis_mono_ns(), .ev = ev};
    ccht_tally_zero(&c.ty);
    const ccht_view *v = &t->T.v;
    int reclaimed = cudis_vmap_walk(v->vmap, v->vmap_words, v->n_buckets, &t->sweep_cursor,
                                    max_work, sweep_visit, &c);
    release_pages(t, now_ms, &c.ty, ev);
    ccht_tally_flush(&t->T, &c.ty);
    return reclaimed;
}

void ccht_clock_tick(ccht *t)
{
    (void)clock_advance(&t->T, (uint64_t)t->T.stamp_slack + 1);
}
