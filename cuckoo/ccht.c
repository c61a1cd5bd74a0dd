/*
 * ccht.c - the host CCHT: creation, the batch executor (optimistic reads,
 * locked writes, both through ccht_bucket.h and cudis_plan_op), single-key
 * wrappers, scan, random key, flush, sweep and statistics. The arena and
 * the second LRU level are in ccht_arena.c.
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
        snprintf(why, why_len, "%s", msg);
    }
}

#define PAGE_META_BYTES 17u /* page_class + carved + next + draining + pool slot */

ccht *ccht_create(const ccht_options *opt, char *why, size_t why_len)
{
    ccht_options o = *opt;
    if (o.ways == 0) {
        o.ways = 8;
    }
    if (o.ways != 4 && o.ways != 8 && o.ways != 16) {
        fail(why, why_len, "ccht: ways must be 4, 8 or 16");
        return NULL;
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
    uint32_t bb = CCHT_BUCKET_BYTES(o.ways);
    uint64_t fixed = sizeof(ccht);
    if (o.memory_bytes < fixed + 2 * 4096 + bb) {
        fail(why, why_len, "ccht: memory budget too small");
        return NULL;
    }
    uint64_t n_buckets;
    if (o.max_items > 0) {
        n_buckets = (o.max_items + o.ways - 1) / o.ways;
    } else {
        /* Slots such that items of the expected size fill ~90% of them when
         * value memory is full: S*slot + 0.9*S*item = budget. */
        double item = (double)((8u + o.expected_item_bytes + 7u) & ~7u) + 2.0;
        double slot = (double)bb / o.ways;
        double s = (double)(o.memory_bytes - fixed) / (slot + 0.9 * item);
        n_buckets = (uint64_t)(s / o.ways);
        if (n_buckets == 0) {
            n_buckets = 1;
        }
    }
    uint64_t index = n_buckets * bb;
    if (index + fixed >= o.memory_bytes) {
        fail(why, why_len, "ccht: memory budget too small for max_items");
        return NULL;
    }
    uint64_t rest = o.memory_bytes - fixed - index;
    uint64_t max_item = ccht_item_size(o.max_key_len, o.max_val_len, 1);
    /* Pages: 1 MiB, or the next power of two holding the largest item;
     * smaller (down to that item, at least 4 KiB) while there would be fewer
     * than 1024 of them. A budget that would hold fewer than 64 such pages
     * gets smaller pages instead (at least 64 of them, 4 KiB minimum), and
     * items bigger than a page are refused (CUDIS_E_FULL): with a handful of
     * pages, size classes outnumber pages and every allocation would move a
     * whole page (measured: 0.8% of a 2 MiB budget held data). */
    uint64_t page = 1u << 20;
    while (page < max_item) {
        page <<= 1;
    }
    while (page / 2 >= max_item && page / 2 >= 4096 && rest / (page + PAGE_META_BYTES) < 1024) {
        page >>= 1;
    }
    while (page > 4096 && rest / (page + PAGE_META_BYTES) < 64) {
        page >>= 1;
    }
    uint64_t n_pages = rest / (page + PAGE_META_BYTES);
    if (n_pages < 2) {
        fail(why, why_len, "ccht: memory budget too small for the value arena");
        return NULL;
    }
    if (n_pages > 0xfffffff0ull) {
        n_pages = 0xfffffff0ull;
    }
    if (n_pages * page > CCHT_SLOT_REF_MASK) {
        fail(why, why_len, "ccht: arena too large");
        return NULL;
    }

    ccht *t = aligned_alloc(64, (sizeof(ccht) + 63) & ~(size_t)63);
    if (!t) {
        fail(why, why_len, "ccht: out of memory");
        return NULL;
    }
    memset(t, 0, sizeof(*t));
    t->opt = o;
    t->page_bytes = page;
    t->n_pages = (uint32_t)n_pages;
    t->max_item = max_item;
    t->index_bytes = fixed + index + n_pages * PAGE_META_BYTES;
    t->mem_index = map_zero(index);
    t->mem_arena = map_zero(n_pages * page);
    if (!t->mem_index || !t->mem_arena) {
        fail(why, why_len, "ccht: cannot map memory");
        ccht_destroy(t);
        return NULL;
    }
    t->v.buckets = t->mem_index;
    t->v.arena = t->mem_arena;
    t->v.n_buckets = n_buckets;
    t->v.arena_bytes = n_pages * page;
    t->v.seed = o.seed;
    t->v.ways = o.ways;
    t->v.bucket_bytes = bb;
    uint64_t slots = n_buckets * o.ways;
    t->stamp_slack = slots / 256 > 1024 ? 1024 : (uint32_t)(slots / 256);
    if (ccht_arena_init(t) != CUDIS_OK) {
        fail(why, why_len, "ccht: out of memory");
        ccht_destroy(t);
        return NULL;
    }
    return t;
}

void ccht_destroy(ccht *t)
{
    if (!t) {
        return;
    }
    if (t->mem_index) {
        munmap(t->mem_index, t->v.n_buckets * t->v.bucket_bytes);
    }
    if (t->mem_arena) {
        munmap(t->mem_arena, (uint64_t)t->n_pages * t->page_bytes);
    }
    ccht_arena_deinit(t);
    free(t);
}

void ccht_get_view(const ccht *t, ccht_view *out)
{
    *out = t->v;
}

uint32_t ccht_now_stamp(ccht *t)
{
    return (uint32_t)__atomic_load_n(&t->clock, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
 * Statistics
 * ---------------------------------------------------------------------- */

static void ctx_init(ccht_ctx *cx, int64_t now_ms)
{
    memset(cx, 0, sizeof(*cx));
    cx->now_ms = now_ms;
    cx->rng = (uint32_t)(cudis_mono_ns() ^ (uintptr_t)cx) | 1u;
}

static void add_i(uint64_t *p, int64_t d)
{
    if (d != 0) {
        __atomic_fetch_add(p, (uint64_t)d, __ATOMIC_RELAXED);
    }
}

static void ctx_flush(ccht *t, ccht_ctx *cx)
{
    add_i(&t->items, cx->items);
    add_i(&t->key_bytes, cx->key_bytes);
    add_i(&t->value_bytes, cx->value_bytes);
    add_i(&t->hits, (int64_t)cx->hits);
    add_i(&t->misses, (int64_t)cx->misses);
    add_i(&t->evict_bucket, (int64_t)cx->evict_bucket);
    add_i(&t->evict_memory, (int64_t)cx->evict_memory);
    add_i(&t->evict_expired, (int64_t)cx->evict_expired);
}

/* The stats of an item leaving the index (slot cleared or replaced). */
static void ctx_drop(ccht *t, ccht_ctx *cx, uint64_t off)
{
    uint32_t h0 = ccht_item_h0(&t->v, off);
    cx->items--;
    cx->key_bytes -= h0 & CCHT_ITEM_KLEN_MASK;
    cx->value_bytes -= ccht_item_vlen(&t->v, off);
}

void ccht_stats(ccht *t, cudis_stats *s)
{
    memset(s, 0, sizeof(*s));
    s->items = __atomic_load_n(&t->items, __ATOMIC_RELAXED);
    s->index_bytes = t->index_bytes;
    s->bytes_used = t->index_bytes + ccht_arena_bytes_used(t);
    s->bytes_budget = t->opt.memory_bytes;
    s->key_bytes = __atomic_load_n(&t->key_bytes, __ATOMIC_RELAXED);
    s->value_bytes = __atomic_load_n(&t->value_bytes, __ATOMIC_RELAXED);
    s->hits = __atomic_load_n(&t->hits, __ATOMIC_RELAXED);
    s->misses = __atomic_load_n(&t->misses, __ATOMIC_RELAXED);
    s->evict_bucket = __atomic_load_n(&t->evict_bucket, __ATOMIC_RELAXED);
    s->evict_memory = __atomic_load_n(&t->evict_memory, __ATOMIC_RELAXED);
    s->evict_expired = __atomic_load_n(&t->evict_expired, __ATOMIC_RELAXED);
    s->capacity = t->v.n_buckets * t->v.ways;
    s->load_factor = s->capacity ? (double)s->items / (double)s->capacity : 0.0;
}

void ccht_reset_stats(ccht *t)
{
    __atomic_store_n(&t->hits, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->misses, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->evict_bucket, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->evict_memory, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->evict_expired, 0, __ATOMIC_RELAXED);
}

size_t ccht_info(ccht *t, char *buf, size_t cap)
{
    int n = snprintf(buf, cap,
                     "ccht_ways:%u\r\nccht_buckets:%llu\r\nccht_page_bytes:%llu\r\n"
                     "ccht_pages:%u\r\nccht_pages_used:%u\r\nccht_size_classes:%u\r\n",
                     t->v.ways, (unsigned long long)t->v.n_buckets,
                     (unsigned long long)t->page_bytes, t->n_pages,
                     __atomic_load_n(&t->pages_used, __ATOMIC_RELAXED), t->n_classes);
    return n < 0 ? 0 : (size_t)n;
}

/* ------------------------------------------------------------------------
 * Helpers used by the arena (second LRU level)
 * ---------------------------------------------------------------------- */

/* Copy the key of the chunk at off into buf (racy; caller validates).
 * Returns the key length or -1 when the header is not a live item. */
static int64_t chunk_key(ccht *t, uint64_t off, uint8_t *small, uint32_t small_cap,
                         uint8_t **key_out)
{
    uint32_t h0 = ccht_item_h0(&t->v, off);
    if (!(h0 & CCHT_ITEM_LIVE)) {
        return -1;
    }
    uint32_t klen = h0 & CCHT_ITEM_KLEN_MASK;
    if (klen > t->opt.max_key_len ||
        off + ccht_item_hdr((h0 & CCHT_ITEM_EXP) != 0) + klen > t->v.arena_bytes) {
        return -1;
    }
    uint8_t *k = small;
    if (klen > small_cap) {
        k = malloc(klen);
        if (!k) {
            return -1;
        }
    }
    ccht_bytes_read(k, ccht_item_key(&t->v, off, h0), klen);
    *key_out = k;
    return klen;
}

/* The slot in the key's pair that refers to off. */
static bool find_ref(ccht *t, const ccht_hkey *hk, uint64_t off, ccht_loc *loc)
{
    for (int i = 0; i < 2; i++) {
        uint64_t b = i == 0 ? hk->b1 : hk->b2;
        for (uint32_t w = 0; w < t->v.ways; w++) {
            uint64_t word = cudis_load_acq_u64(ccht_bkt_slot(&t->v, b, w));
            if (word != 0 && ccht_slot_off(word) == off) {
                loc->bucket = b;
                loc->way = w;
                loc->word = word;
                return true;
            }
        }
    }
    return false;
}

bool ccht_chunk_age(ccht *t, uint64_t off, int64_t now_ms, uint32_t *age)
{
    uint8_t small[256], *key = NULL;
    int64_t klen = chunk_key(t, off, small, sizeof(small), &key);
    if (klen < 0) {
        return false;
    }
    ccht_hkey hk = ccht_hash_key(&t->v, key, (uint32_t)klen);
    if (key != small) {
        free(key);
    }
    ccht_loc loc;
    if (!find_ref(t, &hk, off, &loc)) {
        return false;
    }
    if (ccht_slot_expired(&t->v, loc.word, now_ms)) {
        *age = UINT32_MAX;
    } else {
        *age = ccht_now_stamp(t) - cudis_load_relaxed_u32(ccht_bkt_stamp(&t->v, loc.bucket, loc.way));
    }
    return true;
}

bool ccht_unlink_chunk(ccht *t, uint64_t off, int64_t now_ms, ccht_ctx *cx)
{
    uint8_t small[256], *key = NULL;
    int64_t klen = chunk_key(t, off, small, sizeof(small), &key);
    if (klen < 0) {
        return false;
    }
    ccht_hkey hk = ccht_hash_key(&t->v, key, (uint32_t)klen);
    if (key != small) {
        free(key);
    }
    ccht_pair_lock(&t->v, &hk);
    ccht_loc loc;
    bool found = find_ref(t, &hk, off, &loc);
    if (found) {
        if (ccht_slot_expired(&t->v, loc.word, now_ms)) {
            cx->evict_expired++;
        } else {
            cx->evict_memory++;
        }
        ctx_drop(t, cx, off);
        cudis_store_rel_u64(ccht_bkt_slot(&t->v, loc.bucket, loc.way), 0);
    }
    ccht_pair_unlock(&t->v, &hk);
    return found;
}

/* ------------------------------------------------------------------------
 * The executor
 * ---------------------------------------------------------------------- */

static bool op_is_read_only(const cudis_op *op)
{
    switch (op->code) {
    case CUDIS_OP_GET:
        return !(op->flags & (CUDIS_F_DEL | CUDIS_F_SETEXP | CUDIS_F_PERSIST));
    case CUDIS_OP_EXISTS:
    case CUDIS_OP_TTL:
        return true;
    default:
        return false;
    }
}

static void res_error(cudis_result *res, int err)
{
    memset(res, 0, sizeof(*res));
    res->status = err;
}

/* Key checks common to every op; 0 or the op's error. */
static int check_key(const ccht *t, const cudis_op *op)
{
    if (op->key_len > t->opt.max_key_len) {
        return CUDIS_E_KEYTOOBIG;
    }
    if (op->key_len == 0 && !t->opt.allow_empty_key) {
        return CUDIS_E_EMPTYKEY;
    }
    if (op->code == 0 || op->code >= CUDIS_OP__COUNT) {
        return CUDIS_E_INVAL;
    }
    return CUDIS_OK;
}

static void count_lookup(ccht_ctx *cx, const cudis_plan *plan, bool found)
{
    if (plan->lookup) {
        if (found) {
            cx->hits++;
        } else {
            cx->misses++;
        }
    }
}

/* GET / EXISTS / TTL without a lock. */
static void exec_read(ccht *t, cudis_batch *b, const cudis_op *op, cudis_result *res,
                      const ccht_hkey *hk, uint32_t stamp, ccht_ctx *cx)
{
    const ccht_view *v = &t->v;
    const uint8_t *key = b->in + op->key_off;
    uint64_t rsv_off = 0;
    uint32_t rsv_len = 0;
    bool have_rsv = false;
    for (;;) {
        uint64_t v1 = ccht_read_begin(v, hk->b1);
        uint64_t v2 = ccht_read_begin(v, hk->b2);
        ccht_loc loc = {0};
        uint32_t h0 = 0;
        cudis_cur cur = {0};
        bool f = ccht_probe(v, hk, key, op->key_len, &loc, &h0);
        if (f) {
            uint64_t off = ccht_slot_off(loc.word);
            uint32_t vlen;
            if (!ccht_item_vlen_ok(v, off, h0, &vlen)) {
                continue;
            }
            int64_t e = ccht_item_expire(v, off, h0);
            cur.found = !(e != 0 && e <= b->now_ms);
            cur.val = ccht_item_val(v, off, h0);
            cur.val_len = vlen;
            cur.expire_ms = e;
        }
        cudis_plan plan;
        int rc = cudis_plan_op(op, b->in, &cur, b->now_ms, t->opt.max_val_len, &plan, res);
        if (!ccht_read_valid(v, hk->b1, v1) || !ccht_read_valid(v, hk->b2, v2)) {
            continue;
        }
        if (rc < 0) {
            res->status = rc;
            return;
        }
        if (plan.return_old) {
            uint32_t need = cur.val_len;
            if (!have_rsv || need > rsv_len) {
                uint64_t at = __atomic_fetch_add(&b->out_len, need, __ATOMIC_RELAXED);
                if (at + need > b->out_cap) {
                    res->status = CUDIS_E_OUTBUF;
                    res->val_len = need;
                    res->flags &= ~(uint32_t)CUDIS_R_VALUE;
                    return;
                }
                rsv_off = at;
                rsv_len = need;
                have_rsv = true;
            }
            ccht_bytes_read(b->out + rsv_off, cur.val, need);
            if (!ccht_read_valid(v, hk->b1, v1) || !ccht_read_valid(v, hk->b2, v2)) {
                continue;
            }
            res->val_off = rsv_off;
            res->val_len = need;
            res->flags |= CUDIS_R_VALUE;
        }
        if (plan.touch && cur.found) {
            ccht_touch(v, loc.bucket, loc.way, stamp, t->stamp_slack);
        }
        count_lookup(cx, &plan, cur.found);
        return;
    }
}

/* Fill a fresh chunk with key + the plan's value and return its slot word. */
static uint64_t build_item(ccht *t, uint64_t off, const ccht_hkey *hk, const uint8_t *key,
                           uint32_t klen, const cudis_plan *plan, const uint8_t *old,
                           const uint8_t *arg)
{
    const ccht_view *v = &t->v;
    int has_exp = plan->expire_ms != 0;
    uint8_t *p = v->arena + off + ccht_item_hdr(has_exp);
    ccht_bytes_write(p, key, klen);
#if CCHT_TSAN
    uint8_t *tmp = malloc(plan->new_len ? plan->new_len : 1);
    if (!tmp) {
        abort();
    }
    cudis_plan_build(plan, old, arg, tmp);
    ccht_bytes_write(p + klen, tmp, plan->new_len);
    free(tmp);
#else
    cudis_plan_build(plan, old, arg, p + klen);
#endif
    ccht_item_init(v, off, klen, plan->new_len, plan->expire_ms);
    return ccht_slot_make(hk->fp, off, has_exp);
}

/* Every op that may write: under the key's pair lock. */
static void exec_write(ccht *t, cudis_batch *b, const cudis_op *op, cudis_result *res,
                       const ccht_hkey *hk, uint32_t stamp, ccht_ctx *cx)
{
    const ccht_view *v = &t->v;
    const uint8_t *key = b->in + op->key_off;
    const uint8_t *arg = b->in + op->val_off;
    uint64_t spare = UINT64_MAX;
    int spare_cls = -1;
    for (;;) {
        ccht_pair_lock(v, hk);
        ccht_loc loc = {0};
        uint32_t h0 = 0;
        cudis_cur cur = {0};
        uint64_t old_off = 0;
        bool f = ccht_probe(v, hk, key, op->key_len, &loc, &h0);
        if (f) {
            old_off = ccht_slot_off(loc.word);
            int64_t e = ccht_item_expire(v, old_off, h0);
            cur.found = !(e != 0 && e <= b->now_ms);
            cur.val = ccht_item_val(v, old_off, h0);
            cur.val_len = ccht_item_vlen(v, old_off);
            cur.expire_ms = e;
        }
        bool expired = f && !cur.found;
        cudis_plan plan;
        int rc = cudis_plan_op(op, b->in, &cur, b->now_ms, t->opt.max_val_len, &plan, res);
        if (rc < 0) {
            ccht_pair_unlock(v, hk);
            res->status = rc;
            break;
        }

        /* A new chunk when the plan writes a value, or gives an expiry to an
         * item stored without one. */
        uint64_t new_off = UINT64_MAX;
        uint64_t size = 0;
        if (plan.action == CUDIS_ACT_WRITE) {
            size = ccht_item_size(op->key_len, plan.new_len, plan.expire_ms != 0);
        } else if (plan.action == CUDIS_ACT_SETEXP && !(h0 & CCHT_ITEM_EXP)) {
            size = ccht_item_size(op->key_len, cur.val_len, 1);
            plan.nseg = 0;
            plan.new_len = cur.val_len;
            cudis_plan_seg(&plan, CUDIS_SEG_OLD, 0, cur.val_len);
            plan.action = CUDIS_ACT_WRITE;
        }
        if (size > 0) {
            int cls = ccht_arena_class(t, size);
            if (cls < 0) {
                ccht_pair_unlock(v, hk);
                res->status = CUDIS_E_FULL;
                res->flags &= ~(uint32_t)CUDIS_R_DONE;
                break;
            }
            if (spare != UINT64_MAX && spare_cls == cls) {
                new_off = spare;
                spare = UINT64_MAX;
            } else if (ccht_arena_alloc(t, (uint32_t)cls, &new_off) != CUDIS_OK) {
                ccht_pair_unlock(v, hk);
                if (spare != UINT64_MAX) {
                    ccht_arena_free(t, spare);
                    spare = UINT64_MAX;
                }
                if (ccht_arena_alloc_slow(t, (uint32_t)cls, &spare, cx) != CUDIS_OK) {
                    res->status = CUDIS_E_FULL;
                    res->flags &= ~(uint32_t)CUDIS_R_DONE;
                    res->num = 0;
                    break;
                }
                spare_cls = cls;
                continue;
            }
        }

        if (plan.return_old) {
            uint32_t need = cur.val_len;
            uint64_t at = __atomic_fetch_add(&b->out_len, need, __ATOMIC_RELAXED);
            if (at + need > b->out_cap) {
                if (new_off != UINT64_MAX) {
                    ccht_arena_free(t, new_off);
                }
                ccht_pair_unlock(v, hk);
                res->status = CUDIS_E_OUTBUF;
                res->val_len = need;
                res->flags &= ~(uint32_t)(CUDIS_R_DONE | CUDIS_R_VALUE);
                break;
            }
            ccht_bytes_read(b->out + at, cur.val, need);
            res->val_off = at;
            res->val_len = need;
            res->flags |= CUDIS_R_VALUE;
        }

        bool wrote = false;
        switch (plan.action) {
        case CUDIS_ACT_WRITE: {
            uint64_t word = build_item(t, new_off, hk, key, op->key_len, &plan, cur.val, arg);
            if (f) {
                if (expired) {
                    cx->evict_expired++;
                }
                ctx_drop(t, cx, old_off);
                ccht_slot_publish(v, loc.bucket, loc.way, word, stamp);
                ccht_arena_free(t, old_off);
            } else {
                int kind = ccht_pick_slot(v, hk, b->now_ms, stamp, &loc);
                if (kind != CCHT_VICTIM_EMPTY) {
                    if (kind == CCHT_VICTIM_EXPIRED) {
                        cx->evict_expired++;
                    } else {
                        cx->evict_bucket++;
                    }
                    ctx_drop(t, cx, ccht_slot_off(loc.word));
                }
                ccht_slot_publish(v, loc.bucket, loc.way, word, stamp);
                if (kind != CCHT_VICTIM_EMPTY) {
                    ccht_arena_free(t, ccht_slot_off(loc.word));
                }
            }
            cx->items++;
            cx->key_bytes += op->key_len;
            cx->value_bytes += plan.new_len;
            wrote = true;
            break;
        }
        case CUDIS_ACT_SETEXP:
            ccht_item_set_expire(v, old_off, plan.expire_ms);
            wrote = true;
            break;
        case CUDIS_ACT_DELETE:
            ctx_drop(t, cx, old_off);
            cudis_store_rel_u64(ccht_bkt_slot(v, loc.bucket, loc.way), 0);
            ccht_arena_free(t, old_off);
            break;
        default:
            if (expired) {
                /* Reclaim the expired item we found. */
                cx->evict_expired++;
                ctx_drop(t, cx, old_off);
                cudis_store_rel_u64(ccht_bkt_slot(v, loc.bucket, loc.way), 0);
                ccht_arena_free(t, old_off);
            }
            break;
        }
        if (plan.touch && cur.found && plan.action != CUDIS_ACT_DELETE && !wrote) {
            ccht_touch(v, loc.bucket, loc.way, stamp, t->stamp_slack);
        } else if (wrote && plan.action == CUDIS_ACT_SETEXP) {
            ccht_touch(v, loc.bucket, loc.way, stamp, t->stamp_slack);
        }
        count_lookup(cx, &plan, cur.found);
        ccht_pair_unlock(v, hk);
        break;
    }
    if (spare != UINT64_MAX) {
        ccht_arena_free(t, spare);
    }
}

int ccht_execute(ccht *t, cudis_batch *b)
{
    ccht_ctx cx;
    ctx_init(&cx, b->now_ms);
    uint32_t n = b->n_ops;
    uint64_t base = __atomic_fetch_add(&t->clock, n, __ATOMIC_RELAXED);
    ccht_hkey ring[CCHT_PIPE];
    int8_t err[CCHT_PIPE];
    /* Software pipeline: hash and prefetch the buckets CCHT_PIPE - 1 ops
     * ahead, prefetch the candidate items CCHT_PIPE_ITEM ops ahead (their
     * buckets have arrived by then). */
    for (uint32_t j = 0; j < n + CCHT_PIPE; j++) {
        if (j < n) {
            const cudis_op *op = &b->ops[j];
            int e = check_key(t, op);
            err[j % CCHT_PIPE] = (int8_t)e;
            if (e == CUDIS_OK) {
                ring[j % CCHT_PIPE] = ccht_hash_key(&t->v, b->in + op->key_off, op->key_len);
                ccht_prefetch_buckets(&t->v, &ring[j % CCHT_PIPE]);
            }
        }
        if (j >= CCHT_PIPE - 1 - CCHT_PIPE_ITEM && j - (CCHT_PIPE - 1 - CCHT_PIPE_ITEM) < n) {
            uint32_t k = j - (CCHT_PIPE - 1 - CCHT_PIPE_ITEM);
            if (err[k % CCHT_PIPE] == CUDIS_OK) {
                ccht_prefetch_items(&t->v, &ring[k % CCHT_PIPE]);
            }
        }
        if (j >= CCHT_PIPE - 1 && j - (CCHT_PIPE - 1) < n) {
            uint32_t i = j - (CCHT_PIPE - 1);
            const cudis_op *op = &b->ops[i];
            cudis_result *res = &b->res[i];
            if (err[i % CCHT_PIPE] != CUDIS_OK) {
                res_error(res, err[i % CCHT_PIPE]);
                continue;
            }
            uint32_t stamp = (uint32_t)(base + i + 1);
            if (op_is_read_only(op)) {
                exec_read(t, b, op, res, &ring[i % CCHT_PIPE], stamp, &cx);
            } else {
                exec_write(t, b, op, res, &ring[i % CCHT_PIPE], stamp, &cx);
            }
        }
    }
    ctx_flush(t, &cx);
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
            res_error(res, CUDIS_E_NOMEM);
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

/* Copy the key of slot (b, w) if it holds a live item: 1 copied, 0 empty or
 * expired, CUDIS_E_OUTBUF when cap is too small (*len = needed). */
static int slot_key(ccht *t, uint64_t b, uint32_t w, int64_t now_ms, uint8_t *buf, uint32_t cap,
                    uint32_t *len, int64_t *expire)
{
    const ccht_view *v = &t->v;
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
        return klen <= cap ? 1 : CUDIS_E_OUTBUF;
    }
}

int ccht_scan(ccht *t, uint64_t cursor, uint32_t count, int64_t now_ms, cudis_scan_fn fn,
              void *arg, uint64_t *next)
{
    uint64_t n = t->v.n_buckets;
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
        for (uint32_t w = 0; w < t->v.ways; w++) {
            uint32_t len;
            int64_t e;
            if (slot_key(t, b, w, now_ms, buf, cap, &len, &e) == 1 && fn(arg, buf, len, e) != 0) {
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

int ccht_random_key(ccht *t, int64_t now_ms, uint8_t *buf, uint32_t cap, uint32_t *len)
{
    uint64_t n = t->v.n_buckets;
    uint64_t r = cudis_mix64(cudis_mono_ns() ^ (uintptr_t)len, 0x9e3779b97f4a7c15ull);
    int64_t e;
    for (int tries = 0; tries < 64; tries++) {
        r = cudis_mix64(r, 0xd6e8feb86659fd93ull) + (uint64_t)tries;
        uint64_t b = ccht_fastrange(r, n);
        uint32_t w0 = (uint32_t)(r % t->v.ways);
        for (uint32_t i = 0; i < t->v.ways; i++) {
            int rc = slot_key(t, b, (w0 + i) % t->v.ways, now_ms, buf, cap, len, &e);
            if (rc != 0) {
                return rc;
            }
        }
    }
    uint64_t start = ccht_fastrange(r, n);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t b = (start + k) % n;
        for (uint32_t w = 0; w < t->v.ways; w++) {
            int rc = slot_key(t, b, w, now_ms, buf, cap, len, &e);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

int ccht_flush(ccht *t)
{
    memset(t->v.buckets, 0, t->v.n_buckets * t->v.bucket_bytes);
    ccht_arena_reset(t);
    __atomic_store_n(&t->items, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->key_bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->value_bytes, 0, __ATOMIC_RELAXED);
    return CUDIS_OK;
}

int ccht_sweep(ccht *t, int64_t now_ms, uint32_t max_work)
{
    const ccht_view *v = &t->v;
    ccht_ctx cx;
    ctx_init(&cx, now_ms);
    uint64_t n = v->n_buckets;
    int reclaimed = 0;
    for (uint32_t k = 0; k < max_work && k < n; k++) {
        uint64_t b = __atomic_fetch_add(&t->sweep_cursor, 1, __ATOMIC_RELAXED) % n;
        bool any = false;
        for (uint32_t w = 0; w < v->ways; w++) {
            uint64_t word = cudis_load_acq_u64(ccht_bkt_slot(v, b, w));
            if (word != 0 && (word & CCHT_SLOT_EXP)) {
                any = true;
            }
        }
        if (!any) {
            continue;
        }
        ccht_bkt_lock(v, b);
        for (uint32_t w = 0; w < v->ways; w++) {
            uint64_t word = cudis_load_relaxed_u64(ccht_bkt_slot(v, b, w));
            if (word != 0 && ccht_slot_expired(v, word, now_ms)) {
                uint64_t off = ccht_slot_off(word);
                cx.evict_expired++;
                ctx_drop(t, &cx, off);
                cudis_store_rel_u64(ccht_bkt_slot(v, b, w), 0);
                ccht_arena_free(t, off);
                reclaimed++;
            }
        }
        ccht_bkt_unlock(v, b);
    }
    ctx_flush(t, &cx);
    return reclaimed;
}
