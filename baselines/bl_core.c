/*
 * bl_core.c - the core the exact baselines share: a chained hash map that
 * grows, memory accounting against the byte budget (items charged as glibc
 * malloc chunks, plus the bucket array and this struct), max_items, lazy and
 * swept expiry, batch execution through cudis_plan_op/cudis_plan_build, scan
 * with a reverse-binary cursor, random_key, flush and statistics. The
 * replacement policy (LRU, FIFO, LFU, SIEVE, S3-FIFO) is a vtable
 * (bl_policy.c, bl_fifo2.c). One mutex
 * per cache guards everything.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bl_internal.h"
#include "cudis_hd.h"
#include "cudis_op.h"
#include "cudis_vmap.h"

#define BL_DEFAULT_KEY_LEN 65535u
#define BL_DEFAULT_VAL_LEN (1u << 20)
#define BL_MIN_BUCKETS 16u
#define BL_INIT_BUCKETS 1024u
#define BL_LEAST_ITEMS (64u << 10) /* bl_set_memory: the least room for items it leaves */

/* ------------------------------------------------------------------------
 * Accounting helpers
 * ---------------------------------------------------------------------- */

/* The bucket array and its volatile map. */
static uint64_t table_bytes(uint64_t nbuckets)
{
    return bl_malloc_size(nbuckets * sizeof(bl_item *)) +
           bl_malloc_size(cudis_vmap_alloc_words(nbuckets) * sizeof(uint64_t));
}

static uint64_t item_charge(const bl_cache *c, uint32_t key_len, uint32_t val_len)
{
    return bl_charge(c->pol, key_len, val_len);
}

static inline const uint8_t *item_key(const bl_item *it)
{
    return it->data;
}

static inline uint8_t *item_val(bl_item *it)
{
    return it->data + it->key_len;
}

static inline bool item_expired(const bl_item *it, int64_t now_ms)
{
    return it->expire_ms != 0 && it->expire_ms <= now_ms;
}

/* ------------------------------------------------------------------------
 * Map
 * ---------------------------------------------------------------------- */

static uint64_t key_hash(const bl_cache *c, uint8_t db, const uint8_t *key, uint32_t key_len)
{
    return cudis_hash(key, key_len, c->seed ^ ((uint64_t)db * 0x9e3779b97f4a7c15ull));
}

static bl_item *do_find(bl_cache *c, uint8_t db, const uint8_t *key, uint32_t key_len, uint64_t h)
{
    for (bl_item *it = c->buckets[h & c->mask]; it != NULL; it = it->hnext) {
        if (it->hash == h && it->key_len == key_len && it->db == db &&
            memcmp(item_key(it), key, key_len) == 0) {
            return it;
        }
    }
    return NULL;
}

/* The words of the volatile map's bits (its count follows them). */
static uint64_t vmap_words(const bl_cache *c)
{
    return cudis_vmap_alloc_words(c->mask + 1) - 1;
}

/* An item with an expiry is in its chain: the sweep must visit it. */
static void vmap_note(bl_cache *c, const bl_item *it)
{
    if (it->expire_ms != 0) {
        cudis_vmap_mark(c->vmap, vmap_words(c), it->hash & c->mask);
    }
}

static void map_unlink(bl_cache *c, bl_item *it)
{
    bl_item **pp = &c->buckets[it->hash & c->mask];
    while (*pp != it) {
        pp = &(*pp)->hnext;
    }
    *pp = it->hnext;
}

/* Double the bucket array when it fits the budget; otherwise chains grow. */
static void do_maybe_grow(bl_cache *c)
{
    uint64_t n = c->mask + 1;
    if (c->items <= n) {
        return;
    }
    uint64_t extra = table_bytes(2 * n) - table_bytes(n);
    if (c->bytes_used + extra > c->budget) {
        return;
    }
    bl_item **nb = calloc(2 * n, sizeof(bl_item *));
    uint64_t *nv = calloc(cudis_vmap_alloc_words(2 * n), sizeof(uint64_t));
    if (nb == NULL || nv == NULL) {
        free(nb);
        free(nv);
        return;
    }
    uint64_t nmask = 2 * n - 1;
    for (uint64_t i = 0; i < n; i++) {
        bl_item *it = c->buckets[i];
        while (it != NULL) {
            bl_item *nx = it->hnext;
            it->hnext = nb[it->hash & nmask];
            nb[it->hash & nmask] = it;
            it = nx;
        }
    }
    free(c->buckets);
    free(c->vmap);
    c->buckets = nb;
    c->vmap = nv;
    c->mask = nmask;
    c->bytes_used += extra;
    for (uint64_t i = 0; i <= nmask; i++) {
        for (bl_item *it = nb[i]; it != NULL; it = it->hnext) {
            vmap_note(c, it);
        }
    }
}

/* Remove an item from map and policy and free it. */
static void do_remove(bl_cache *c, bl_item *it)
{
    map_unlink(c, it);
    c->pol->remove(c, it);
    c->items--;
    c->db_items[it->db]--;
    c->bytes_used -= item_charge(c, it->key_len, it->val_len);
    c->key_bytes -= it->key_len;
    c->value_bytes -= it->val_len;
    free(it);
}

/* Report an item the cache removes on its own (before it is freed). */
static void report(cudis_evbuf *ev, uint8_t kind, const bl_item *it)
{
    if (ev != NULL) {
        uint8_t *dst = cudis_ev_add(ev, kind, (uint8_t)it->db, it->key_len);
        if (dst != NULL) {
            memcpy(dst, item_key(it), it->key_len);
        }
    }
}

/* Reclaim an expired item: counted, reported, removed. */
static void do_reclaim(bl_cache *c, bl_item *it, cudis_evbuf *ev)
{
    c->evict_expired += cudis_db_counted(it->db);
    report(ev, CUDIS_EV_EXPIRED, it);
    do_remove(c, it);
}

/* Evict one victim (not `skip`) for capacity; false when there is none. */
static bool do_evict_one(bl_cache *c, const bl_item *skip, int64_t now_ms, cudis_evbuf *ev)
{
    bl_item *v = c->pol->victim(c, skip);
    if (v == NULL) {
        return false;
    }
    if (item_expired(v, now_ms)) {
        do_reclaim(c, v, ev);
    } else {
        c->evict_memory += cudis_db_counted(v->db);
        report(ev, CUDIS_EV_EVICTED, v);
        do_remove(c, v);
    }
    return true;
}

/* ------------------------------------------------------------------------
 * Create / destroy
 * ---------------------------------------------------------------------- */

void *bl_create(const bl_policy *pol, const engine_config *cfg, char *why, size_t why_len)
{
    if (cfg->policy != CUDIS_POL_ALLKEYS_LRU && cfg->policy != CUDIS_POL_NOEVICTION) {
        snprintf(why, why_len, "%s: evicts by its own exact order (or not at all: noeviction)",
                 pol->name);
        return NULL;
    }
    uint64_t fixed = bl_malloc_size(sizeof(bl_cache));
    uint64_t nb = BL_INIT_BUCKETS;
    if (cfg->max_items != 0) {
        nb = BL_MIN_BUCKETS;
        while (nb < cfg->max_items && nb < (1ull << 40)) {
            nb <<= 1;
        }
    }
    /* The table may use at most a quarter of the budget at creation. */
    while (nb > BL_MIN_BUCKETS && table_bytes(nb) > cfg->memory_bytes / 4) {
        nb >>= 1;
    }
    if (cfg->memory_bytes < fixed + table_bytes(nb) + bl_malloc_size(sizeof(bl_item) + 2)) {
        snprintf(why, why_len,
                 "%s: memory budget of %" PRIu64 " bytes is too small (needs at least %" PRIu64 ")",
                 pol->name, cfg->memory_bytes,
                 fixed + table_bytes(nb) + bl_malloc_size(sizeof(bl_item) + 2));
        return NULL;
    }
    bl_cache *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        snprintf(why, why_len, "%s: out of memory", pol->name);
        return NULL;
    }
    c->buckets = calloc(nb, sizeof(bl_item *));
    c->vmap = calloc(cudis_vmap_alloc_words(nb), sizeof(uint64_t));
    c->db_items = calloc(CUDIS_MAX_DBS, sizeof(uint64_t));
    if (c->buckets == NULL || c->vmap == NULL || c->db_items == NULL) {
        free(c->buckets);
        free(c->vmap);
        free(c->db_items);
        free(c);
        snprintf(why, why_len, "%s: out of memory for %" PRIu64 " buckets", pol->name, nb);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->pol = pol;
    c->mask = nb - 1;
    c->budget = cfg->memory_bytes;
    c->max_items = cfg->max_items;
    c->max_key_len = cfg->max_key_len ? cfg->max_key_len : BL_DEFAULT_KEY_LEN;
    if (c->max_key_len > BL_MAX_KEY_LEN) {
        c->max_key_len = BL_MAX_KEY_LEN;
    }
    c->max_val_len = cfg->max_val_len ? cfg->max_val_len : BL_DEFAULT_VAL_LEN;
    c->allow_empty_key = cfg->allow_empty_key;
    c->seed = cfg->seed ? cfg->seed : 0x9e3779b97f4a7c15ull;
    c->noevict = cfg->policy == CUDIS_POL_NOEVICTION;
    c->expected_item_bytes = cfg->expected_item_bytes ? cfg->expected_item_bytes : 64;
    c->fixed_bytes = fixed;
    c->bytes_used = fixed + table_bytes(nb);
    c->rng = c->seed ^ 0x2545f4914f6cdd1dull;
    snprintf(why, why_len, "%s: exact %s cache", pol->name, pol->name);
    return c;
}

static void do_free_all(bl_cache *c)
{
    for (uint64_t i = 0; i <= c->mask; i++) {
        bl_item *it = c->buckets[i];
        while (it != NULL) {
            bl_item *nx = it->hnext;
            free(it);
            it = nx;
        }
        c->buckets[i] = NULL;
    }
    memset(c->vmap, 0, cudis_vmap_alloc_words(c->mask + 1) * sizeof(uint64_t));
    c->pol->clear(c);
    c->items = 0;
    memset(c->db_items, 0, CUDIS_MAX_DBS * sizeof(uint64_t));
    c->key_bytes = 0;
    c->value_bytes = 0;
    c->bytes_used = c->fixed_bytes + table_bytes(c->mask + 1);
}

void bl_destroy(void *store)
{
    bl_cache *c = store;
    if (c == NULL) {
        return;
    }
    do_free_all(c);
    free(c->buckets);
    free(c->vmap);
    free(c->db_items);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* ------------------------------------------------------------------------
 * Batch execution (the 5 steps of cudis_op.h)
 * ---------------------------------------------------------------------- */

static void set_error(cudis_result *res, int err)
{
    memset(res, 0, sizeof(*res));
    res->status = err;
}

/* Make room for a write of `need` bytes replacing `old` (may be NULL),
 * reporting the evicted to ev (may be NULL). */
static int do_make_room(bl_cache *c, const bl_item *old, uint64_t need, int64_t now_ms,
                        cudis_evbuf *ev)
{
    uint64_t old_charge = old ? item_charge(c, old->key_len, old->val_len) : 0;
    /* Even with every other item gone, the new one must fit. */
    if (c->fixed_bytes + table_bytes(c->mask + 1) + need > c->budget) {
        return CUDIS_E_NOFIT;
    }
    while (c->bytes_used - old_charge + need > c->budget) {
        if (c->noevict || !do_evict_one(c, old, now_ms, ev)) {
            return CUDIS_E_FULL;
        }
    }
    if (old == NULL && c->max_items != 0) {
        while (c->items >= c->max_items) {
            if (c->noevict || !do_evict_one(c, NULL, now_ms, ev)) {
                return CUDIS_E_FULL;
            }
        }
    }
    return CUDIS_OK;
}

static void do_op(bl_cache *c, cudis_batch *b, uint32_t i)
{
    const cudis_op *op = &b->ops[i];
    cudis_result *res = &b->res[i];
    const uint8_t *key = b->in + op->key_off;

    if (op->key_len > c->max_key_len) {
        set_error(res, CUDIS_E_KEYTOOBIG);
        return;
    }
    if (op->key_len == 0 && !c->allow_empty_key) {
        set_error(res, CUDIS_E_EMPTYKEY);
        return;
    }

    /* 1. look up; an expired entry is reclaimed and counts as absent */
    uint64_t h = key_hash(c, op->db, key, op->key_len);
    bl_item *it = do_find(c, op->db, key, op->key_len, h);
    if (it != NULL && item_expired(it, b->now_ms)) {
        do_reclaim(c, it, b->ev);
        it = NULL;
    }
    cudis_cur cur = {.found = it != NULL};
    if (it != NULL) {
        cur.val = item_val(it);
        cur.val_len = it->val_len;
        cur.expire_ms = it->expire_ms;
        cur.type = it->type;
    }

    /* 2. plan */
    cudis_plan plan;
    int rc = cudis_plan_op(op, b->in + op->val_off, &cur, b->now_ms, c->max_val_len, &plan, res);
    if (rc < 0) {
        res->status = rc;
        return;
    }

    /* 3. the old value to the out buffer */
    if (plan.return_old) {
        uint64_t off = cudis_fetch_add_u64(&b->out_len, plan.ret_len);
        if (off + plan.ret_len > b->out_cap) {
            res->status = CUDIS_E_OUTBUF;
            res->flags &= ~(uint32_t)CUDIS_R_DONE;
            res->val_len = plan.ret_len;
            return;
        }
        memcpy(b->out + off, cur.val + plan.ret_off, plan.ret_len);
        res->val_off = off;
        res->val_len = plan.ret_len;
        res->flags |= CUDIS_R_VALUE;
    }

    /* 4. the action */
    bool touched = false;
    switch (plan.action) {
    case CUDIS_ACT_WRITE: {
        uint64_t need = item_charge(c, op->key_len, plan.new_len);
        rc = do_make_room(c, it, need, b->now_ms, b->ev);
        bl_item *nit = NULL;
        if (rc == CUDIS_OK) {
            nit = malloc(sizeof(bl_item) + (size_t)op->key_len + plan.new_len);
            if (nit == NULL) {
                rc = CUDIS_E_NOMEM;
            }
        }
        if (rc != CUDIS_OK) {
            res->status = rc;
            res->flags &= ~(uint32_t)CUDIS_R_DONE;
            break;
        }
        memset(nit, 0, sizeof(*nit));
        nit->hash = h;
        nit->expire_ms = plan.expire_ms;
        nit->key_len = op->key_len;
        nit->db = op->db;
        nit->type = plan.new_type;
        nit->val_len = plan.new_len;
        memcpy(nit->data, key, op->key_len);
        cudis_plan_build(&plan, cur.found ? cur.val : NULL, b->in + op->val_off, item_val(nit));
        if (it == NULL && !c->pol->insert(c, nit)) {
            free(nit);
            res->status = CUDIS_E_NOMEM;
            res->flags &= ~(uint32_t)CUDIS_R_DONE;
            break;
        }
        c->items++;
        c->db_items[nit->db]++;
        c->bytes_used += need;
        c->key_bytes += nit->key_len;
        c->value_bytes += nit->val_len;
        if (it != NULL) {
            /* publish: the new item takes the old one's chain and policy place */
            bl_item **pp = &c->buckets[h & c->mask];
            while (*pp != it) {
                pp = &(*pp)->hnext;
            }
            nit->hnext = it->hnext;
            *pp = nit;
            vmap_note(c, nit);
            c->pol->replace(c, it, nit);
            c->items--;
            c->db_items[it->db]--;
            c->bytes_used -= item_charge(c, it->key_len, it->val_len);
            c->key_bytes -= it->key_len;
            c->value_bytes -= it->val_len;
            free(it);
            if (plan.touch) {
                c->pol->touch(c, nit);
            }
        } else {
            nit->hnext = c->buckets[h & c->mask];
            c->buckets[h & c->mask] = nit;
            vmap_note(c, nit);
            do_maybe_grow(c);
        }
        it = nit;
        touched = true;
        break;
    }
    case CUDIS_ACT_SETEXP:
        it->expire_ms = plan.expire_ms;
        vmap_note(c, it);
        break;
    case CUDIS_ACT_DELETE:
        do_remove(c, it);
        it = NULL;
        touched = true;
        break;
    default: break;
    }

    /* 5. recency and hit/miss */
    if (plan.touch && !touched && it != NULL) {
        c->pol->touch(c, it);
    }
    if (op->code == CUDIS_OP_EXISTS && it != NULL && it->freq != NULL) {
        res->num = it->freq->count < 255 ? (int64_t)it->freq->count : 255; /* OBJECT FREQ */
    }
    if (plan.lookup) {
        if (cur.found) {
            c->hits++;
        } else {
            c->misses++;
        }
    }
}

int bl_execute(void *store, cudis_batch *batch)
{
    bl_cache *c = store;
    pthread_mutex_lock(&c->lock);
    for (uint32_t i = 0; i < batch->n_ops; i++) {
        do_op(c, batch, i);
    }
    pthread_mutex_unlock(&c->lock);
    return CUDIS_OK;
}

/* ------------------------------------------------------------------------
 * Keyspace: scan, random_key, flush, sweep
 * ---------------------------------------------------------------------- */

static uint64_t rev64(uint64_t v)
{
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0full) | ((v & 0x0f0f0f0f0f0f0f0full) << 4);
    v = ((v >> 8) & 0x00ff00ff00ff00ffull) | ((v & 0x00ff00ff00ff00ffull) << 8);
    v = ((v >> 16) & 0x0000ffff0000ffffull) | ((v & 0x0000ffff0000ffffull) << 16);
    return (v >> 32) | (v << 32);
}

/* Redis's reverse-binary cursor: a table that grows between calls never
 * makes the scan miss a key. */
int bl_scan(void *store, int db, uint64_t cursor, uint32_t count, int64_t now_ms, cudis_scan_fn fn,
            void *arg, uint64_t *next)
{
    bl_cache *c = store;
    if (count == 0) {
        count = 1;
    }
    pthread_mutex_lock(&c->lock);
    uint64_t v = cursor;
    bool stop = false;
    for (uint32_t n = 0; n < count && !stop; n++) {
        for (bl_item *it = c->buckets[v & c->mask]; it != NULL && !stop; it = it->hnext) {
            if (!item_expired(it, now_ms) && (db == CUDIS_DB_ALL || it->db == (uint32_t)db)) {
                stop = fn(arg, (uint8_t)it->db, item_key(it), it->key_len, it->expire_ms) != 0;
            }
        }
        v |= ~c->mask;
        v = rev64(v);
        v++;
        v = rev64(v);
        if (v == 0) {
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    *next = v;
    return CUDIS_OK;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

int bl_random_key(void *store, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                  uint32_t *len)
{
    bl_cache *c = store;
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    if (c->db_items[db] > 0) {
        uint64_t nb = c->mask + 1;
        uint64_t start = xorshift(&c->rng) & c->mask;
        for (uint64_t k = 0; k < nb && rc == 0; k++) {
            bl_item *b = c->buckets[(start + k) & c->mask];
            uint32_t live = 0;
            for (bl_item *it = b; it != NULL; it = it->hnext) {
                live += !item_expired(it, now_ms) && it->db == db;
            }
            if (live == 0) {
                continue;
            }
            uint32_t pick = (uint32_t)(xorshift(&c->rng) % live);
            for (bl_item *it = b; it != NULL; it = it->hnext) {
                if (item_expired(it, now_ms) || it->db != db) {
                    continue;
                }
                if (pick-- == 0) {
                    *len = it->key_len;
                    if (it->key_len > cap) {
                        rc = CUDIS_E_OUTBUF;
                    } else {
                        memcpy(buf, item_key(it), it->key_len);
                        rc = 1;
                    }
                    break;
                }
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int bl_flush(void *store, int db)
{
    bl_cache *c = store;
    pthread_mutex_lock(&c->lock);
    if (db == CUDIS_DB_ALL) {
        do_free_all(c);
    } else {
        for (uint64_t i = 0; i <= c->mask; i++) {
            for (bl_item *it = c->buckets[i], *nx; it != NULL; it = nx) {
                nx = it->hnext;
                if (it->db == (uint32_t)db) {
                    do_remove(c, it);
                }
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
    return CUDIS_OK;
}

uint64_t bl_db_size(void *store, uint8_t db)
{
    bl_cache *c = store;
    pthread_mutex_lock(&c->lock);
    uint64_t n = c->db_items[db];
    pthread_mutex_unlock(&c->lock);
    return n;
}

typedef struct sweep_ctx {
    bl_cache *c;
    int64_t now_ms;
    cudis_evbuf *ev;
} sweep_ctx;

/* Reclaim the expired items of chain b; unmark it when none with an
 * expiry stays. */
static uint32_t sweep_chain(void *arg, uint64_t b)
{
    sweep_ctx *x = arg;
    bl_cache *c = x->c;
    uint32_t n = 0;
    bool left = false;
    for (bl_item *it = c->buckets[b], *nx; it != NULL; it = nx) {
        nx = it->hnext;
        if (item_expired(it, x->now_ms)) {
            do_reclaim(c, it, x->ev);
            n++;
        } else if (it->expire_ms != 0) {
            left = true;
        }
    }
    if (!left) {
        cudis_vmap_unmark(c->vmap, vmap_words(c), b);
    }
    return n;
}

int bl_sweep(void *store, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev)
{
    bl_cache *c = store;
    sweep_ctx x = {.c = c, .now_ms = now_ms, .ev = ev};
    pthread_mutex_lock(&c->lock);
    int n = cudis_vmap_walk(c->vmap, vmap_words(c), c->mask + 1, &c->sweep_pos, max_work,
                            sweep_chain, &x);
    /* a lowered budget (bl_set_memory): evict toward it, a bounded amount */
    for (uint32_t k = 0; k < max_work && !c->noevict && c->bytes_used > c->budget; k++) {
        if (!do_evict_one(c, NULL, now_ms, ev)) {
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return n;
}

uint64_t bl_set_memory(void *store, uint64_t bytes)
{
    bl_cache *c = store;
    pthread_mutex_lock(&c->lock);
    uint64_t least = c->fixed_bytes + table_bytes(c->mask + 1) + BL_LEAST_ITEMS;
    if (bytes < least) {
        bytes = least;
    }
    c->budget = bytes; /* lowered: writes and the sweep evict down to it */
    pthread_mutex_unlock(&c->lock);
    return bytes;
}

int bl_set_policy(void *store, uint32_t policy, uint32_t lfu_log_factor, uint32_t lfu_decay_time)
{
    (void)lfu_log_factor, (void)lfu_decay_time; /* the lfu engine counts exactly */
    bl_cache *c = store;
    if (policy != CUDIS_POL_ALLKEYS_LRU && policy != CUDIS_POL_NOEVICTION) {
        return CUDIS_E_UNSUPPORTED; /* the baselines evict by their own exact order */
    }
    pthread_mutex_lock(&c->lock);
    c->noevict = policy == CUDIS_POL_NOEVICTION;
    pthread_mutex_unlock(&c->lock);
    return CUDIS_OK;
}

uint64_t bl_sweep_units(void *store)
{
    bl_cache *c = store;
    pthread_mutex_lock(&c->lock);
    uint64_t units = cudis_vmap_units(c->vmap, vmap_words(c));
    pthread_mutex_unlock(&c->lock);
    return units;
}

/* ------------------------------------------------------------------------
 * Statistics
 * ---------------------------------------------------------------------- */

void bl_stats(void *store, cudis_stats *out)
{
    bl_cache *c = store;
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&c->lock);
    out->items = c->items;
    out->bytes_used = c->bytes_used;
    out->bytes_budget = c->budget;
    out->index_bytes = c->fixed_bytes + table_bytes(c->mask + 1);
    out->key_bytes = c->key_bytes;
    out->value_bytes = c->value_bytes;
    out->hits = c->hits;
    out->misses = c->misses;
    out->evict_memory = c->evict_memory;
    out->evict_expired = c->evict_expired;
    uint64_t per = bl_malloc_size(sizeof(bl_item) + c->expected_item_bytes) + c->pol->item_extra +
                   sizeof(bl_item *);
    uint64_t cap = out->index_bytes < c->budget ? (c->budget - out->index_bytes) / per : 0;
    if (c->max_items != 0 && c->max_items < cap) {
        cap = c->max_items;
    }
    out->capacity = cap;
    out->load_factor = cap ? (double)c->items / (double)cap : 0.0;
    pthread_mutex_unlock(&c->lock);
}

void bl_reset_stats(void *store)
{
    bl_cache *c = store;
    pthread_mutex_lock(&c->lock);
    c->hits = c->misses = c->evict_memory = c->evict_expired = 0;
    pthread_mutex_unlock(&c->lock);
}

size_t bl_info(void *store, char *buf, size_t cap)
{
    bl_cache *c = store;
    pthread_mutex_lock(&c->lock);
    int n = snprintf(buf, cap,
                     "baseline_policy:%s\r\nbaseline_buckets:%" PRIu64
                     "\r\nbaseline_max_items:%" PRIu64 "\r\n",
                     c->pol->name, c->mask + 1, c->max_items);
    pthread_mutex_unlock(&c->lock);
    return n < 0 ? 0 : (size_t)n;
}
