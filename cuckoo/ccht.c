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
#define CCHT_RS_HALVINGS_MAX 16 /* the index shrinks to a 16th of its first size at most */
#define CCHT_GROW_MAX 4         /* a resizable table's budget may be raised to 4x its first */
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

static void *map_zero(uint64_t bytes, bool huge)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    /* Random probes over a big index miss the TLB on 4 KiB pages (and a
     * prefetch that misses the TLB may be dropped): ask for huge pages. */
    if (huge && bytes >= (2u << 20)) {
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
    t->min_buckets = t->max_buckets = t->g.n_buckets;
    t->mem_max = o.memory_bytes;
    if (o.resizable && o.max_items == 0 && t->g.n_buckets >= 2 * CCHT_RS_HALVINGS_MAX) {
        /* a whole number of buckets after each of the halvings allowed */
        uint64_t nb = t->g.n_buckets / CCHT_RS_HALVINGS_MAX * CCHT_RS_HALVINGS_MAX;
        if (ccht_geom_plan(&t->g, o.memory_bytes, nb * o.ways, o.ways, 0, &gwhy) != 0) {
            fail(why, why_len, gwhy);
            free(t);
            return NULL;
        }
        t->min_buckets = nb / CCHT_RS_HALVINGS_MAX;
        /* room in address space for a raised budget (CONFIG SET maxmemory):
         * only the pages' metadata, 20 bytes a page, costs memory */
        if (o.memory_bytes <= UINT64_MAX / CCHT_GROW_MAX) {
            t->mem_max = o.memory_bytes * CCHT_GROW_MAX;
        }
        t->max_buckets = t->mem_max / 2 / t->g.bucket_bytes;
        if (t->max_buckets < nb) {
            t->max_buckets = nb;
        }
        ccht_geom_widen(&t->g, t->mem_max, t->min_buckets);
    }
    t->idx_bytes = t->g.index_bytes;
    t->opt = o;
    t->mem_bytes = t->g.total;
    t->mem = map_zero(t->mem_bytes, true);
    if (!t->mem) {
        fail(why, why_len, "cannot map memory");
        free(t);
        return NULL;
    }
    ccht_geom_bind(&t->g, &t->T, t->mem, o.max_key_len, o.max_val_len, o.allow_empty_key, o.seed);
    ccht_geom_meta_init(&t->g, t->mem + t->g.meta_off, false);
    t->budget = o.memory_bytes;
    ccht_set_memory(t, o.memory_bytes); /* the page limit with the meta as laid out */
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
    uint64_t fixed = __atomic_load_n(&t->idx_bytes, __ATOMIC_RELAXED) +
                     __atomic_load_n(&t->rs_reserve, __ATOMIC_RELAXED) + t->g.meta_bytes +
                     8 * __atomic_load_n(&t->vmap_own_words, __ATOMIC_RELAXED);
    if (bytes > t->mem_max) {
        bytes = t->mem_max;
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
    if (t->idx_map) {
        munmap(t->idx_map, t->idx_map_bytes);
    }
    if (t->rs_map) {
        munmap(t->rs_map, t->rs_map_bytes);
    }
    free(t->vmap_own);
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
    s->index_bytes = __atomic_load_n(&t->idx_bytes, __ATOMIC_RELAXED) + t->g.meta_bytes +
                     8 * __atomic_load_n(&t->vmap_own_words, __ATOMIC_RELAXED);
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
    s->capacity = ccht_buckets(t) * t->g.ways;
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
    int n = snprintf(
        buf, cap,
        "ccht_ways:%u\r\nccht_buckets:%llu\r\nccht_page_bytes:%llu\r\n"
        "ccht_pages:%u\r\nccht_pages_limit:%u\r\nccht_pages_used:%u\r\nccht_size_classes:%u\r\n"
        "ccht_writes_full:%llu\r\nccht_index_resizable:%d\r\nccht_index_resizing:%d\r\n"
        "ccht_index_resizes:%llu\r\nccht_index_resize_step_max_us:%llu\r\n",
        t->g.ways, (unsigned long long)ccht_buckets(t), (unsigned long long)t->g.page_bytes,
        t->g.n_pages, __atomic_load_n(&t->T.a.pool->limit, __ATOMIC_RELAXED),
        __atomic_load_n(&t->T.a.pool->pages_used, __ATOMIC_RELAXED), t->g.n_classes,
        (unsigned long long)ld64(&t->T.cnt[CCHT_C_FULL]), t->min_buckets != t->max_buckets,
        __atomic_load_n(&t->T.v.rs_n, __ATOMIC_RELAXED) != 0,
        (unsigned long long)__atomic_load_n(&t->resizes, __ATOMIC_RELAXED),
        (unsigned long long)(__atomic_load_n(&t->rs_ns_max, __ATOMIC_RELAXED) / 1000));
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
    uint64_t c_first, c_n, ext = ccht_extent(&T->v);
    ccht_clamp_range(ext, base, base + n, &c_first, &c_n);
    if (ccht_policy_lfu(ccht_policy_of(T))) {
        c_n = 0; /* the stamps hold LFU counters */
    }
    for (uint64_t k = 0; k < c_n; k++) {
        ccht_bkt_clamp(&T->v, (c_first + k) % ext, (uint32_t)(base + n));
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
                ccht_prefetch_items(&T->v, &T->a, &ring[k % CCHT_PIPE]);
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
            ccht_env_place(&x, base, (uint32_t)(base + n), seed, i);
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

static void rs_finish(ccht *t);

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

/* Scan cursors are places in hash space: the top CCHT_CUR_BITS bits of a
 * 64-bit hash, rounded up to the start of a bucket. */
#define CCHT_CUR_BITS 48
#define CCHT_CUR_END (1ull << CCHT_CUR_BITS)

/* The bucket that holds the hashes at cursor place c. */
static uint64_t cur_bucket(const ccht_view *v, uint64_t c)
{
    return ccht_bucket_of(v, c << (64 - CCHT_CUR_BITS));
}

/* The place where the bucket after bucket b begins (CCHT_CUR_END: b is
 * the last): bucket k of N begins at hash ceil(k * 2^64 / N). */
static uint64_t cur_after(const ccht_view *v, uint64_t b)
{
    uint64_t n = v->n_buckets, k = b + 1;
    if (b >= v->n_buckets) {
        n = v->rs_n;
        k = b - v->n_buckets + 1;
    }
    return (uint64_t)((((unsigned __int128)k << CCHT_CUR_BITS) + n - 1) / n);
}

int ccht_scan(ccht *t, int db, uint64_t cursor, uint32_t count, int64_t now_ms, cudis_scan_fn fn,
              void *arg, uint64_t *next)
{
    const ccht_view *v = &t->T.v;
    if (count == 0) {
        count = 1;
    }
    if (cursor >= CCHT_CUR_END) {
        *next = 0;
        return CUDIS_OK;
    }
    uint32_t cap = t->opt.max_key_len;
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf) {
        return CUDIS_E_NOMEM;
    }
    uint64_t c = cursor;
    for (uint32_t i = 0; i < count && c < CCHT_CUR_END; i++) {
        uint64_t b = cur_bucket(v, c);
        c = cur_after(v, b);
        for (uint32_t w = 0; w < v->ways; w++) {
            uint32_t len;
            int64_t e;
            uint8_t kdb;
            if (slot_key(t, db, b, w, now_ms, buf, cap, &len, &e, &kdb) == 1 &&
                fn(arg, kdb, buf, len, e) != 0) {
                free(buf);
                *next = c < CCHT_CUR_END ? c : 0;
                return CUDIS_OK;
            }
        }
    }
    free(buf);
    *next = c < CCHT_CUR_END ? c : 0;
    return CUDIS_OK;
}

/* Items of database d (or with an expiry: vol) from the table's counter
 * and the other databases': database 0 keeps none of its own. */
static uint64_t db_counted(ccht *t, uint8_t db, bool vol)
{
    const uint64_t *dn = vol ? t->T.v.db_volatile : t->T.v.db_items;
    if (db != 0) {
        return ld64(&dn[db]);
    }
    uint64_t n = ld64(&t->T.cnt[vol ? CCHT_C_VOLATILE : CCHT_C_ITEMS]);
    for (int i = 1; i < CCHT_DBS; i++) {
        n -= ld64(&dn[i]);
    }
    return n;
}

void ccht_expires(ccht *t, int64_t now_ms, uint32_t max_buckets, cudis_expires *out)
{
    const ccht_view *v = &t->T.v;
    memset(out, 0, sizeof(*out));
    uint64_t seen[CCHT_DBS] = {0};
    uint64_t ext = ccht_extent(v), words = v->vmap_words, read = 0, wi = 0;
    for (; wi < words && read < max_buckets; wi++) {
        uint64_t bits = cudis_load_relaxed_u64(&v->vmap[wi]);
        while (bits != 0) {
            uint64_t b = wi * 64 + (uint64_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            if (b >= ext || !ccht_bkt_live(v, b)) {
                continue;
            }
            read++;
            for (uint32_t w = 0; w < v->ways; w++) {
                if (!(cudis_load_relaxed_u64(ccht_bkt_slot(v, b, w)) & CCHT_SLOT_EXP)) {
                    continue;
                }
                uint8_t none, db;
                uint32_t len;
                int64_t e;
                /* no room for the key: found or not is all that is asked */
                if (slot_key(t, CUDIS_DB_ALL, b, w, now_ms, &none, 0, &len, &e, &db) != 0 &&
                    e > 0) {
                    seen[db]++;
                    out->ttl_ms[db] += (double)(e - now_ms);
                }
            }
        }
    }
    out->exact = wi >= words;
    for (int d = 0; d < CUDIS_MAX_DBS; d++) {
        out->keys[d] = db_counted(t, (uint8_t)d, true);
        out->ttl_ms[d] = seen[d] ? out->ttl_ms[d] / (double)seen[d] : 0.0;
    }
}

int ccht_random_key(ccht *t, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap, uint32_t *len)
{
    uint64_t n = ccht_extent(&t->T.v);
    uint32_t ways = t->T.v.ways;
    uint64_t r = cudis_mix64(cudis_mono_ns() ^ (uintptr_t)len, 0x9e3779b97f4a7c15ull);
    int64_t e;
    uint8_t kdb;
    if (ccht_db_size(t, db) == 0) {
        return 0;
    }
    for (int tries = 0; tries < 64; tries++) {
        r = cudis_mix64(r, 0xd6e8feb86659fd93ull) + (uint64_t)tries;
        uint64_t b = ccht_bucket_of(&t->T.v, r); /* even over hash space, resizing or not */
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
        if (!ccht_bkt_live(&t->T.v, b)) {
            continue;
        }
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
        ccht_view *v = &t->T.v;
        memset(v->buckets, 0, v->n_buckets * v->bucket_bytes);
        if (v->rs_n && v->rs_buckets != v->buckets) {
            memset(v->rs_buckets, 0, v->rs_n * v->bucket_bytes);
        }
        if (t->vmap_own) {
            memset(t->vmap_own, 0, 8 * t->vmap_own_words);
        }
        ccht_geom_meta_init(&t->g, t->mem + t->g.meta_off, true);
        if (v->rs_n) {
            rs_finish(t); /* nothing is left to move */
        }
        ccht_set_memory(t, t->budget); /* the limit meta_init reset */
        return CUDIS_OK;
    }
    /* one database: its items leave bucket by bucket, under each lock */
    ccht_tally ty;
    ccht_tally_zero(&ty);
    uint32_t shard = (uint32_t)cudis_mono_ns();
    uint64_t ext = ccht_extent(&t->T.v);
    for (uint64_t b = 0; b < ext; b++) {
        if (ccht_bkt_live(&t->T.v, b)) {
            ccht_drop_db_bucket(&t->T, b, (uint32_t)db, shard + (uint32_t)b, &ty);
        }
    }
    ccht_tally_flush(&t->T, &ty);
    return CUDIS_OK;
}

uint64_t ccht_db_size(ccht *t, uint8_t db)
{
    return db_counted(t, db, false);
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
    int reclaimed = cudis_vmap_walk(v->vmap, v->vmap_words, ccht_extent(v), &t->sweep_cursor,
                                    max_work, sweep_visit, &c);
    release_pages(t, now_ms, &c.ty, ev);
    ccht_tally_flush(&t->T, &c.ty);
    return reclaimed;
}

void ccht_clock_tick(ccht *t)
{
    (void)clock_advance(&t->T, (uint64_t)t->T.stamp_slack + 1);
}

/* ------------------------------------------------------------------------
 * Resizing the index (ccht_resize_tick)
 * ---------------------------------------------------------------------- */

#define CCHT_RS_STEP_NS 2000000ull /* about this much work per call */
#define CCHT_RS_MIN_ITEMS 1024     /* fewer items say nothing about their size */

uint64_t ccht_buckets(const ccht *t)
{
    uint64_t rs = __atomic_load_n(&t->T.v.rs_n, __ATOMIC_RELAXED);
    return rs ? rs : __atomic_load_n(&t->T.v.n_buckets, __ATOMIC_RELAXED);
}

static uint64_t index_bytes_for(const ccht *t, uint64_t n_buckets)
{
    return ccht_align(n_buckets * t->g.bucket_bytes, 4096);
}

int ccht_resize_start(ccht *t, uint64_t m)
{
    ccht_view *v = &t->T.v;
    uint64_t n = v->n_buckets;
    if (v->rs_n != 0 || (m != 2 * n && 2 * m != n) || m < t->min_buckets || m > t->max_buckets) {
        return CUDIS_E_INVAL;
    }
    /* a doubling gets a new mapping; a halving runs in place (new bucket k
     * takes old 2k and 2k + 1, k <= 2k: old bucket k has moved by then) */
    uint64_t bytes = m > n ? index_bytes_for(t, m) : 0;
    /* no huge-page advice yet: a fault would compact memory on the spot
     * (defrag "madvise"), a stall of milliseconds in the middle of a slice;
     * rs_finish gives the advice once the new index is filled */
    uint8_t *map = m > n ? map_zero(bytes, false) : v->buckets;
    if (map == NULL) {
        return CUDIS_E_NOMEM;
    }
    /* one volatile map over both indexes: the old buckets' bits as they are */
    uint64_t words = cudis_vmap_alloc_words(n + m);
    uint64_t *vm = calloc(words, 8);
    if (vm == NULL) {
        if (bytes) {
            munmap(map, bytes);
        }
        return CUDIS_E_NOMEM;
    }
    memcpy(vm, v->vmap, 8 * v->vmap_words);
    vm[words - 1] = v->vmap[v->vmap_words];
    free(t->vmap_own);
    t->vmap_own = vm;
    __atomic_store_n(&t->vmap_own_words, words, __ATOMIC_RELAXED);
    t->rs_map = bytes ? map : NULL;
    t->rs_map_bytes = bytes;
    v->vmap = vm;
    v->vmap_words = words - 1;
    v->rs_buckets = map;
    v->rs_done = 0;
    __atomic_store_n(&v->rs_n, m, __ATOMIC_RELAXED);
    __atomic_store_n(&t->rs_reserve, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->idx_bytes, index_bytes_for(t, n) + bytes, __ATOMIC_RELAXED);
    ccht_set_memory(t, t->budget);
    return CUDIS_OK;
}

/* Whether bucket c of the new index covers hash space of old bucket b. */
static bool rs_covers(const ccht_view *v, uint64_t c, uint64_t b)
{
    if (c < v->n_buckets) {
        return false;
    }
    uint64_t k = c - v->n_buckets;
    return v->rs_n > v->n_buckets ? k >> 1 == b : k == b >> 1;
}

/* Put slot word `word` with its stamp into a free slot of bucket c. */
static bool rs_put(ccht_view *v, uint64_t c, uint64_t word, uint32_t stamp)
{
    for (uint32_t x = 0; x < v->ways; x++) {
        if (*ccht_bkt_slot(v, c, x) == 0) {
            *ccht_bkt_stamp(v, c, x) = stamp;
            *ccht_bkt_slot(v, c, x) = word;
            if (word & CCHT_SLOT_EXP) {
                cudis_vmap_mark(v->vmap, v->vmap_words, c);
            }
            return true;
        }
    }
    return false;
}

/* Make room in full bucket c: move one of its items to that item's other
 * bucket (one cuckoo step; nothing runs beside a resize). */
static bool rs_displace(ccht_view *v, uint64_t c)
{
    for (uint32_t x = 0; x < v->ways; x++) {
        uint64_t word = *ccht_bkt_slot(v, c, x);
        ccht_hkey hk;
        if (word == 0 || !ccht_chunk_hkey(v, ccht_slot_off(word), &hk)) {
            continue;
        }
        uint64_t alt = hk.b1 == c ? hk.b2 : hk.b1;
        if (alt != c && rs_put(v, alt, word, *ccht_bkt_stamp(v, c, x))) {
            *ccht_bkt_slot(v, c, x) = 0;
            return true;
        }
    }
    return false;
}

/* Move the items of old bucket b to where the new index puts them: the
 * new bucket over the same stretch of hash space (the item leaves b with
 * the hash that placed it there), else its other bucket, else room made
 * by moving an item of either to its other bucket (an item moved to its
 * other bucket may be missed by a scan going on). A
 * doubling never lacks room (new bucket 2b + i takes only old bucket b's
 * items); a halving merges two old buckets, and when all that fails the
 * item is evicted. */
static void rs_move_bucket(ccht *t, uint64_t b, uint32_t shard, ccht_tally *ty, cudis_evbuf *ev)
{
    ccht_view *v = &t->T.v;
    const ccht_table *T = &t->T;
    v->rs_done = b + 1; /* keys of b now look in the new index */
    for (uint32_t w = 0; w < v->ways; w++) {
        uint64_t word = *ccht_bkt_slot(v, b, w);
        if (word == 0) {
            continue;
        }
        uint32_t stamp = *ccht_bkt_stamp(v, b, w);
        *ccht_bkt_slot(v, b, w) = 0;
        *ccht_bkt_stamp(v, b, w) = 0;
        uint64_t off = ccht_slot_off(word);
        ccht_hkey hk;
        /* a halving knows the bucket without the key: old b's stretch of
         * hash space is new b / 2's */
        bool placed = v->rs_n < v->n_buckets && rs_put(v, v->n_buckets + (b >> 1), word, stamp);
        if (!placed && ccht_chunk_hkey(v, off, &hk)) {
            /* the new bucket over the stretch of hash space b covered
             * first: a scan that has passed it has passed b too */
            uint64_t cand[2] = {hk.b1, hk.b2};
            if (!rs_covers(v, hk.b1, b) && rs_covers(v, hk.b2, b)) {
                cand[0] = hk.b2;
                cand[1] = hk.b1;
            }
            placed = rs_put(v, cand[0], word, stamp) || rs_put(v, cand[1], word, stamp);
            for (int i = 0; i < 2 && !placed; i++) {
                placed = rs_displace(v, cand[i]) && rs_put(v, cand[i], word, stamp);
            }
        }
        if (!placed) {
            ccht_gone(ty, CCHT_C_EVICT_BUCKET, ev, CUDIS_EV_EVICTED, v, off);
            ccht_tally_drop(ty, T, off);
            ccht_arena_free(&T->a, off, shard + w);
        }
    }
    if (cudis_vmap_test(v->vmap, b)) {
        cudis_vmap_unmark(v->vmap, v->vmap_words, b);
    }
}

/* Every old bucket has moved: the new index becomes the index. Its
 * buckets' bits in the volatile map (n + k) move down to k, in place
 * (word by word, ascending: a word is read before it is overwritten). */
static void rs_finish(ccht *t)
{
    ccht_view *v = &t->T.v;
    uint64_t n = v->n_buckets, m = v->rs_n;
    uint64_t *vm = v->vmap;
    uint64_t bit_words = v->vmap_words, new_words = cudis_vmap_alloc_words(m) - 1;
    uint64_t w0 = n >> 6, sh = n & 63, marked = 0;
    for (uint64_t i = 0; i < new_words; i++) {
        uint64_t lo = w0 + i < bit_words ? vm[w0 + i] : 0;
        uint64_t hi = sh && w0 + i + 1 < bit_words ? vm[w0 + i + 1] : 0;
        uint64_t x = sh ? (lo >> sh) | (hi << (64 - sh)) : lo;
        if (i == new_words - 1 && (m & 63)) {
            x &= (1ull << (m & 63)) - 1;
        }
        vm[i] = x;
        marked += (uint64_t)__builtin_popcountll(x);
    }
    vm[new_words] = marked;
    uint64_t *small = realloc(vm, 8 * (new_words + 1));
    if (small != NULL) {
        vm = small;
    }
    t->vmap_own = vm;
    __atomic_store_n(&t->vmap_own_words, small ? new_words + 1 : bit_words + 1, __ATOMIC_RELAXED);
    /* the old index's memory (a halving's: the tail) goes back to the system */
    if (t->rs_map == NULL) {
        uint64_t keep = index_bytes_for(t, m), had = index_bytes_for(t, n);
        if (had > keep) {
            madvise(v->buckets + keep, had - keep, MADV_DONTNEED);
        }
    } else {
        if (t->idx_map != NULL) {
            munmap(t->idx_map, t->idx_map_bytes);
        } else {
            madvise(t->mem, t->g.index_bytes, MADV_DONTNEED);
        }
#ifdef MADV_HUGEPAGE
        madvise(t->rs_map, t->rs_map_bytes, MADV_HUGEPAGE); /* khugepaged may collapse it */
#endif
        t->idx_map = t->rs_map;
        t->idx_map_bytes = t->rs_map_bytes;
        t->rs_map = NULL;
        t->rs_map_bytes = 0;
    }
    v->vmap = vm;
    v->vmap_words = new_words;
    v->buckets = v->rs_buckets;
    v->rs_buckets = NULL;
    v->rs_done = 0;
    __atomic_store_n(&v->rs_n, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&v->n_buckets, m, __ATOMIC_RELAXED);
    t->sweep_cursor = 0;
    __atomic_store_n(&t->idx_bytes, index_bytes_for(t, m), __ATOMIC_RELAXED);
    __atomic_fetch_add(&t->resizes, 1, __ATOMIC_RELAXED);
    ccht_set_memory(t, t->budget);
}

int ccht_resize_step(ccht *t, uint32_t max_buckets, cudis_evbuf *ev)
{
    ccht_view *v = &t->T.v;
    if (v->rs_n == 0) {
        return 0;
    }
    uint64_t t0 = cudis_mono_ns();
    ccht_tally ty;
    ccht_tally_zero(&ty);
    uint32_t shard = (uint32_t)t0;
    for (uint32_t k = 0; k < max_buckets && v->rs_done < v->n_buckets; k++) {
        if (v->rs_done + 16 < v->n_buckets) {
            const uint8_t *ahead = ccht_bkt(v, v->rs_done + 16);
            CCHT_PREFETCH(ahead);
            CCHT_PREFETCH(ahead + v->bucket_bytes - 8);
        }
        if (v->rs_n > v->n_buckets && v->rs_done + 4 < v->n_buckets) {
            /* a doubling hashes each key: its item's first bytes, ahead */
            for (uint32_t w = 0; w < v->ways; w++) {
                uint64_t word = *ccht_bkt_slot(v, v->rs_done + 4, w);
                if (word != 0) {
                    CCHT_PREFETCH(v->arena + ccht_slot_off(word));
                }
            }
        }
        rs_move_bucket(t, v->rs_done, shard + k * v->ways, &ty, ev);
        if ((k & 15) == 15 && cudis_mono_ns() - t0 > CCHT_RS_STEP_NS) {
            break;
        }
    }
    ccht_tally_flush(&t->T, &ty);
    bool done = v->rs_done >= v->n_buckets;
    if (done) {
        rs_finish(t);
    }
    uint64_t ns = cudis_mono_ns() - t0;
    if (ns > __atomic_load_n(&t->rs_ns_max, __ATOMIC_RELAXED)) {
        __atomic_store_n(&t->rs_ns_max, ns, __ATOMIC_RELAXED);
    }
    return done ? 0 : 1;
}

/* Items a store of `avail` bytes holds with an index of `slots` slots
 * when they take `avg` bytes each: what the index holds (90% of its
 * slots) or what the memory beside it holds, whichever is less. */
static double rs_held(double slots, double slot_bytes, double avail, double avg)
{
    double by_index = 0.9 * slots, by_memory = (avail - slots * slot_bytes) / avg;
    return by_index < by_memory ? by_index : by_memory;
}

/* The index size `items` items of `avg` chunk bytes each call for: twice
 * or half today's, when that holds 2% more such items in the budget, or 0
 * for this one. A doubling waits until the index is half full; a halving
 * needs a policy that may evict (a merge that finds both buckets full
 * does) and an index at most 40% full. */
static uint64_t rs_wanted_for(const ccht *t, uint64_t items, double avg)
{
    const ccht_view *v = &t->T.v;
    uint64_t n = v->n_buckets;
    uint64_t budget = __atomic_load_n(&t->budget, __ATOMIC_RELAXED);
    if (items < CCHT_RS_MIN_ITEMS || budget <= t->g.meta_bytes) {
        return 0;
    }
    double slots = (double)n * v->ways;
    double slot_bytes = (double)v->bucket_bytes / v->ways;
    double avail = (double)(budget - t->g.meta_bytes);
    double now = rs_held(slots, slot_bytes, avail, avg);
    if (2 * n <= t->max_buckets && (double)items >= 0.5 * slots &&
        rs_held(2 * slots, slot_bytes, avail, avg) > 1.02 * now) {
        return 2 * n;
    }
    uint32_t pol = ccht_policy_of(&t->T);
    bool evicts_any = pol == CUDIS_POL_ALLKEYS_LRU || pol == CUDIS_POL_ALLKEYS_LFU ||
                      pol == CUDIS_POL_ALLKEYS_RANDOM || pol == CUDIS_POL_ALLKEYS_CUDIS ||
                      pol == CUDIS_POL_ALLKEYS_RRIP;
    if (evicts_any && n % 2 == 0 && n / 2 >= t->min_buckets && (double)items <= 0.4 * slots &&
        rs_held(slots / 2, slot_bytes, avail, avg) > 1.02 * now) {
        return n / 2;
    }
    return 0;
}

/* The index size the items held now call for (rs_wanted_for). */
static uint64_t rs_wanted(const ccht *t)
{
    uint64_t items = ld64(&t->T.cnt[CCHT_C_ITEMS]);
    uint64_t chunk = ld64(&t->T.cnt[CCHT_C_CHUNK_BYTES]);
    return rs_wanted_for(t, items, items ? (double)chunk / (double)items : 0.0);
}

int ccht_index_expect(ccht *t, uint64_t items, uint64_t item_bytes)
{
    int halvings = 0;
    /* no page in use: no item in any database, every slot empty */
    if (t->min_buckets == t->max_buckets || t->T.v.rs_n != 0 ||
        __atomic_load_n(&t->T.a.pool->pages_used, __ATOMIC_RELAXED) != 0) {
        return 0;
    }
    /* an item's chunk: its header and key + value, in 8-byte steps */
    double avg = (double)((CCHT_ITEM_HDR + item_bytes + 7) & ~7ull);
    /* no more than the budget holds of them: the rest would be evicted */
    uint64_t budget = __atomic_load_n(&t->budget, __ATOMIC_RELAXED);
    double fit = budget > t->g.meta_bytes ? (double)(budget - t->g.meta_bytes) / avg : 0.0;
    if ((double)items > fit) {
        items = (uint64_t)fit;
    }
    for (;;) {
        uint64_t m = rs_wanted_for(t, items, avg);
        if (m == 0 || m > t->T.v.n_buckets || ccht_resize_start(t, m) != CUDIS_OK) {
            return halvings;
        }
        t->T.v.rs_done = t->T.v.n_buckets; /* nothing to move: the step just finishes */
        (void)ccht_resize_step(t, 0, NULL);
        halvings++;
    }
}

int ccht_resize_tick(ccht *t, int64_t now_ms, uint32_t max_buckets, cudis_evbuf *ev)
{
    if (t->min_buckets == t->max_buckets) {
        return 0;
    }
    if (t->T.v.rs_n != 0) {
        return ccht_resize_step(t, max_buckets, ev);
    }
    uint64_t m = rs_wanted(t);
    uint64_t reserve = m > t->T.v.n_buckets ? index_bytes_for(t, m) : 0; /* a halving needs none */
    const ccht_pool *pl = t->T.a.pool;
    if (reserve && !ccht_policy_takes(ccht_policy_of(&t->T), false)) {
        /* under a policy that keeps items (noeviction, volatile-*) the
         * arena gives no page for the new index: only free ones */
        uint32_t lim = __atomic_load_n(&pl->limit, __ATOMIC_RELAXED);
        uint32_t used = __atomic_load_n(&pl->pages_used, __ATOMIC_RELAXED);
        uint64_t free_pages = used < lim ? lim - used : 0;
        uint64_t had = __atomic_load_n(&t->rs_reserve, __ATOMIC_RELAXED);
        if ((free_pages * t->g.page_bytes + had) < reserve) {
            m = 0;
            reserve = 0;
        }
    }
    if (reserve != __atomic_load_n(&t->rs_reserve, __ATOMIC_RELAXED)) {
        __atomic_store_n(&t->rs_reserve, reserve, __ATOMIC_RELAXED);
        ccht_set_memory(t, t->budget);
    }
    if (m == 0) {
        return 0;
    }
    if (__atomic_load_n(&pl->pages_used, __ATOMIC_RELAXED) >
        __atomic_load_n(&pl->limit, __ATOMIC_RELAXED)) {
        /* room for the new index first: the coldest pages go */
        ccht_tally ty;
        ccht_tally_zero(&ty);
        release_pages(t, now_ms, &ty, ev);
        ccht_tally_flush(&t->T, &ty);
        return 0;
    }
    if (ccht_resize_start(t, m) != CUDIS_OK) {
        __atomic_store_n(&t->rs_reserve, 0, __ATOMIC_RELAXED);
        ccht_set_memory(t, t->budget);
        return 0;
    }
    return ccht_resize_step(t, max_buckets, ev);
}
