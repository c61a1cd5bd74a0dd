/*
 * bl_policy.c - the three classic exact replacement policies (the only part
 * of the baselines that differs between LRU, FIFO and LFU), the list
 * helpers every policy uses, and the store ops of all five (SIEVE and
 * S3-FIFO are in bl_fifo2.c).
 *
 * LRU and FIFO keep one doubly linked list, newest at head, victim at tail;
 * LRU moves a touched item to the head, FIFO leaves it. LFU keeps a list of
 * frequency buckets in ascending count, each with its items most recent
 * first: a touch moves the item to the bucket count+1 (created next to the
 * current one when missing), the victim is the tail of the lowest bucket.
 * Every function runs with the cache's lock held (called from bl_core.c).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "baselines_store.h"
#include "bl_internal.h"

/* ------------------------------------------------------------------------
 * One list of items (LRU/FIFO: the cache's list; LFU: a bucket's list)
 * ---------------------------------------------------------------------- */

void bl_list_push_head(bl_item **head, bl_item **tail, bl_item *it)
{
    it->prev = NULL;
    it->next = *head;
    if (*head != NULL) {
        (*head)->prev = it;
    } else {
        *tail = it;
    }
    *head = it;
}

void bl_list_unlink(bl_item **head, bl_item **tail, bl_item *it)
{
    if (it->prev != NULL) {
        it->prev->next = it->next;
    } else {
        *head = it->next;
    }
    if (it->next != NULL) {
        it->next->prev = it->prev;
    } else {
        *tail = it->prev;
    }
    it->prev = it->next = NULL;
}

/* nit takes old's place in the list. */
void bl_list_replace(bl_item **head, bl_item **tail, bl_item *old, bl_item *nit)
{
    nit->prev = old->prev;
    nit->next = old->next;
    if (old->prev != NULL) {
        old->prev->next = nit;
    } else {
        *head = nit;
    }
    if (old->next != NULL) {
        old->next->prev = nit;
    } else {
        *tail = nit;
    }
    old->prev = old->next = NULL;
}

/* ------------------------------------------------------------------------
 * LRU and FIFO
 * ---------------------------------------------------------------------- */

static bool q_insert(bl_cache *c, bl_item *it)
{
    bl_list_push_head(&c->head, &c->tail, it);
    return true;
}

static void q_remove(bl_cache *c, bl_item *it)
{
    bl_list_unlink(&c->head, &c->tail, it);
}

static void q_replace(bl_cache *c, bl_item *old, bl_item *nit)
{
    bl_list_replace(&c->head, &c->tail, old, nit);
}

static void lru_touch(bl_cache *c, bl_item *it)
{
    if (c->head != it) {
        bl_list_unlink(&c->head, &c->tail, it);
        bl_list_push_head(&c->head, &c->tail, it);
    }
}

static void fifo_touch(bl_cache *c, bl_item *it)
{
    (void)c;
    (void)it;
}

static bl_item *q_victim(bl_cache *c, const bl_item *skip)
{
    bl_item *v = c->tail;
    if (v != NULL && v == skip) {
        v = v->prev;
    }
    return v;
}

static void q_clear(bl_cache *c)
{
    c->head = c->tail = NULL;
}

const bl_policy bl_policy_lru = {
    .name = "lru",
    .item_extra = 0,
    .insert = q_insert,
    .remove = q_remove,
    .replace = q_replace,
    .touch = lru_touch,
    .victim = q_victim,
    .clear = q_clear,
};

const bl_policy bl_policy_fifo = {
    .name = "fifo",
    .item_extra = 0,
    .insert = q_insert,
    .remove = q_remove,
    .replace = q_replace,
    .touch = fifo_touch,
    .victim = q_victim,
    .clear = q_clear,
};

/* ------------------------------------------------------------------------
 * LFU: O(1) frequency buckets
 * ---------------------------------------------------------------------- */

/* A new bucket with `count` after `prev` (NULL = at the front); NULL when
 * malloc fails. */
static bl_freq *freq_new(bl_cache *c, bl_freq *prev, uint64_t count)
{
    bl_freq *f = malloc(sizeof(*f));
    if (f == NULL) {
        return NULL;
    }
    f->count = count;
    f->head = f->tail = NULL;
    f->prev = prev;
    f->next = prev ? prev->next : c->fhead;
    if (f->next != NULL) {
        f->next->prev = f;
    }
    if (prev != NULL) {
        prev->next = f;
    } else {
        c->fhead = f;
    }
    return f;
}

static void freq_free_if_empty(bl_cache *c, bl_freq *f)
{
    if (f->head != NULL) {
        return;
    }
    if (f->prev != NULL) {
        f->prev->next = f->next;
    } else {
        c->fhead = f->next;
    }
    if (f->next != NULL) {
        f->next->prev = f->prev;
    }
    free(f);
}

static bool lfu_insert(bl_cache *c, bl_item *it)
{
    bl_freq *f = c->fhead;
    if (f == NULL || f->count != 1) {
        f = freq_new(c, NULL, 1);
    }
    if (f == NULL) {
        return false; /* host malloc failed: the core drops the write */
    }
    it->freq = f;
    bl_list_push_head(&f->head, &f->tail, it);
    return true;
}

static void lfu_remove(bl_cache *c, bl_item *it)
{
    bl_freq *f = it->freq;
    bl_list_unlink(&f->head, &f->tail, it);
    it->freq = NULL;
    freq_free_if_empty(c, f);
}

static void lfu_replace(bl_cache *c, bl_item *old, bl_item *nit)
{
    (void)c;
    bl_freq *f = old->freq;
    bl_list_replace(&f->head, &f->tail, old, nit);
    nit->freq = f;
    old->freq = NULL;
}

static void lfu_touch(bl_cache *c, bl_item *it)
{
    bl_freq *f = it->freq;
    bl_freq *g = f->next;
    if (g == NULL || g->count != f->count + 1) {
        if (f->head == it && f->tail == it) {
            /* alone in its bucket: just bump the count */
            f->count++;
            return;
        }
        g = freq_new(c, f, f->count + 1);
        if (g == NULL) {
            return; /* host malloc failed: the count stays (never observable otherwise) */
        }
    }
    bl_list_unlink(&f->head, &f->tail, it);
    bl_list_push_head(&g->head, &g->tail, it);
    it->freq = g;
    freq_free_if_empty(c, f);
}

static bl_item *lfu_victim(bl_cache *c, const bl_item *skip)
{
    for (bl_freq *f = c->fhead; f != NULL; f = f->next) {
        for (bl_item *v = f->tail; v != NULL; v = v->prev) {
            if (v != skip) {
                return v;
            }
        }
    }
    return NULL;
}

static void lfu_clear(bl_cache *c)
{
    bl_freq *f = c->fhead;
    while (f != NULL) {
        bl_freq *nx = f->next;
        free(f);
        f = nx;
    }
    c->fhead = NULL;
}

const bl_policy bl_policy_lfu = {
    .name = "lfu",
    /* at most one frequency node per item: charge it up front */
    .item_extra = (uint32_t)((sizeof(bl_freq) + 8 + 15) & ~(size_t)15),
    .insert = lfu_insert,
    .remove = lfu_remove,
    .replace = lfu_replace,
    .touch = lfu_touch,
    .victim = lfu_victim,
    .clear = lfu_clear,
};

/* ------------------------------------------------------------------------
 * Store ops
 * ---------------------------------------------------------------------- */

static void *lru_create(const engine_config *cfg, char *why, size_t why_len)
{
    return bl_create(&bl_policy_lru, cfg, why, why_len);
}

static void *fifo_create(const engine_config *cfg, char *why, size_t why_len)
{
    return bl_create(&bl_policy_fifo, cfg, why, why_len);
}

static void *lfu_create(const engine_config *cfg, char *why, size_t why_len)
{
    return bl_create(&bl_policy_lfu, cfg, why, why_len);
}

static void *sieve_create(const engine_config *cfg, char *why, size_t why_len)
{
    return bl_create(&bl_policy_sieve, cfg, why, why_len);
}

static void *s3fifo_create(const engine_config *cfg, char *why, size_t why_len)
{
    return bl_create(&bl_policy_s3fifo, cfg, why, why_len);
}

#define BL_OPS(NAME, DESC)                                                                         \
    {                                                                                              \
        .name = #NAME, .description = DESC, .concurrent = false, .create = NAME##_create,          \
        .destroy = bl_destroy, .execute = bl_execute, .scan = bl_scan,                             \
        .random_key = bl_random_key, .flush = bl_flush, .db_size = bl_db_size, .sweep = bl_sweep,  \
        .sweep_units = bl_sweep_units, .set_policy = bl_set_policy, .set_memory = bl_set_memory,   \
        .stats = bl_stats, .reset_stats = bl_reset_stats, .info = bl_info,                         \
    }

const engine_store_ops lru_store_ops =
    BL_OPS(lru, "exact LRU host cache (hash map + recency list, one lock)");
const engine_store_ops fifo_store_ops =
    BL_OPS(fifo, "exact FIFO host cache (hash map + insertion list, one lock)");
const engine_store_ops lfu_store_ops =
    BL_OPS(lfu, "exact LFU host cache (hash map + O(1) frequency buckets, one lock)");
const engine_store_ops sieve_store_ops =
    BL_OPS(sieve, "exact SIEVE host cache (hash map + FIFO list, visited bits, a hand, one lock)");
const engine_store_ops s3fifo_store_ops =
    BL_OPS(s3fifo, "exact S3-FIFO host cache (small, main and ghost FIFOs, one lock)");
