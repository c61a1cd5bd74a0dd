/*
 * bl_fifo2.c - the two FIFO-based policies of recent cache research, exact,
 * as baselines for the in-bucket policies (bench/sim):
 *
 *   sieve   - SIEVE (Zhang et al., NSDI'24): one FIFO list, newest at head,
 *             a visited bit per item set by a hit, and a hand that walks
 *             from the tail toward the head: a visited item has its bit
 *             cleared and stays where it is, the first unvisited one is the
 *             victim; the hand stays at the victim's newer neighbour and
 *             wraps to the tail past the head.
 *   s3fifo  - S3-FIFO (Yang et al., SOSP'23), as libCacheSim's S3FIFO.c
 *             defines it: a small FIFO S (10% of the capacity), a main FIFO
 *             M (the rest) and a ghost FIFO G of evicted keys' hashes (90%
 *             of the capacity). A hit adds one to the item's 2-bit counter
 *             (at most 3). A new key enters M when G remembers it (and
 *             leaves G), else S (M while S is full before the first
 *             eviction). To evict: from M when M is over its share or S is
 *             empty, else from S. S's tail moves to M's head with its
 *             counter cleared when it was hit at least twice
 *             (move-to-main threshold 2), else it is the victim and its hash
 *             enters G. M's tail with a counter c > 0 is put back at M's
 *             head with c - 1, else it is the victim.
 *
 * Sizes are counted in items when the cache has a max_items (the
 * simulator's capacity in objects), else in bytes (items' charges) of the
 * budget. The ghost costs up to about 48 bytes per item (ring entry and
 * index slots), charged to every item up front.
 *
 * The victim hook changes the order as it looks (SIEVE's bits and hand,
 * S3-FIFO's moves between queues): the core calls it only to evict. An item
 * the core must keep (`skip`, the one an overwrite replaces) is passed over
 * as if it were visited. Every function runs with the cache's lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "bl_internal.h"

/* ------------------------------------------------------------------------
 * SIEVE
 * ---------------------------------------------------------------------- */

#define SIEVE_VISITED 1u

static bool sieve_insert(bl_cache *c, bl_item *it)
{
    it->pbits = 0;
    bl_list_push_head(&c->head, &c->tail, it);
    return true;
}

static void sieve_remove(bl_cache *c, bl_item *it)
{
    if (c->hand == it) {
        c->hand = it->prev;
    }
    bl_list_unlink(&c->head, &c->tail, it);
}

static void sieve_replace(bl_cache *c, bl_item *old, bl_item *nit)
{
    nit->pbits = old->pbits;
    if (c->hand == old) {
        c->hand = nit;
    }
    bl_list_replace(&c->head, &c->tail, old, nit);
}

static void sieve_touch(bl_cache *c, bl_item *it)
{
    (void)c;
    it->pbits |= SIEVE_VISITED;
}

static bl_item *sieve_victim(bl_cache *c, const bl_item *skip)
{
    bl_item *o = c->hand != NULL ? c->hand : c->tail;
    /* two laps clear every bit: more steps means only skip is left */
    for (uint64_t steps = 2 * c->items + 2; o != NULL && steps > 0; steps--) {
        if (o != skip && !(o->pbits & SIEVE_VISITED)) {
            c->hand = o->prev;
            return o;
        }
        o->pbits &= (uint8_t)~SIEVE_VISITED;
        o = o->prev != NULL ? o->prev : c->tail;
    }
    return NULL;
}

static void sieve_clear(bl_cache *c)
{
    c->head = c->tail = c->hand = NULL;
}

const bl_policy bl_policy_sieve = {
    .name = "sieve",
    .item_extra = 0,
    .insert = sieve_insert,
    .remove = sieve_remove,
    .replace = sieve_replace,
    .touch = sieve_touch,
    .victim = sieve_victim,
    .clear = sieve_clear,
};

/* ------------------------------------------------------------------------
 * S3-FIFO's ghost: a FIFO of hashes with an index
 * ---------------------------------------------------------------------- */

#define GHOST_MIN_RING 64u

static uint64_t ghost_slot(const bl_ghost *g, uint64_t h)
{
    return (h * 0x9e3779b97f4a7c15ull) >> 7 & g->ix_mask;
}

/* The index slot holding h, or the empty slot where it would go. */
static uint64_t ghost_find(const bl_ghost *g, uint64_t h)
{
    uint64_t i = ghost_slot(g, h);
    while (g->ix_hash[i] != 0 && g->ix_hash[i] != h) {
        i = (i + 1) & g->ix_mask;
    }
    return i;
}

/* Remove index slot i, shifting back the run after it (linear probing). */
static void ghost_ix_delete(bl_ghost *g, uint64_t i)
{
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & g->ix_mask;
        if (g->ix_hash[j] == 0) {
            break;
        }
        uint64_t home = ghost_slot(g, g->ix_hash[j]);
        /* j's entry may move to i when i lies cyclically in [home, j) */
        if (((j - home) & g->ix_mask) >= ((j - i) & g->ix_mask)) {
            g->ix_hash[i] = g->ix_hash[j];
            g->ix_seq[i] = g->ix_seq[j];
            i = j;
        }
    }
    g->ix_hash[i] = 0;
}

static void ghost_free(bl_ghost *g)
{
    free(g->hash);
    free(g->units);
    free(g->ix_hash);
    free(g->ix_seq);
    memset(g, 0, sizeof(*g));
}

/* Rebuild with room for `ring` ring entries (a power of two, at least the
 * live ones), keeping the live entries in order. false: out of memory (the
 * ghost is unchanged). */
static bool ghost_rebuild(bl_ghost *g, uint64_t ring)
{
    uint64_t ix = ring * 2;
    uint64_t *nh = malloc(ring * sizeof(uint64_t)), *nu = malloc(ring * sizeof(uint64_t));
    uint64_t *xh = calloc(ix, sizeof(uint64_t)), *xs = malloc(ix * sizeof(uint64_t));
    if (nh == NULL || nu == NULL || xh == NULL || xs == NULL) {
        free(nh), free(nu), free(xh), free(xs);
        return false;
    }
    bl_ghost n = {.hash = nh,
                  .units = nu,
                  .ring_mask = ring - 1,
                  .ix_hash = xh,
                  .ix_seq = xs,
                  .ix_mask = ix - 1};
    for (uint64_t s = g->first; s < g->end; s++) {
        uint64_t h = g->hash[s & g->ring_mask];
        if (h == 0) {
            continue;
        }
        nh[n.end & n.ring_mask] = h;
        nu[n.end & n.ring_mask] = g->units[s & g->ring_mask];
        uint64_t i = ghost_find(&n, h);
        xh[i] = h;
        xs[i] = n.end++;
        n.live++;
        n.units_live += g->units[s & g->ring_mask];
    }
    ghost_free(g);
    *g = n;
    return true;
}

/* Drop the oldest entry (live or removed). */
static void ghost_pop(bl_ghost *g)
{
    uint64_t r = g->first & g->ring_mask;
    if (g->hash[r] != 0) {
        ghost_ix_delete(g, ghost_find(g, g->hash[r]));
        g->live--;
        g->units_live -= g->units[r];
    }
    g->first++;
}

/* Whether h is remembered; a remembered hash is forgotten (it is back). */
static bool ghost_take(bl_ghost *g, uint64_t h)
{
    if (g->live == 0) {
        return false;
    }
    h = h != 0 ? h : 1;
    uint64_t i = ghost_find(g, h);
    if (g->ix_hash[i] == 0) {
        return false;
    }
    uint64_t r = g->ix_seq[i] & g->ring_mask;
    g->hash[r] = 0;
    g->live--;
    g->units_live -= g->units[r];
    ghost_ix_delete(g, i);
    return true;
}

/* Remember h (size u), forgetting the oldest beyond `cap` units. An
 * allocation failure forgets instead of growing (the ghost is advisory). */
static void ghost_add(bl_ghost *g, uint64_t h, uint64_t u, uint64_t cap)
{
    if (u > cap) {
        return;
    }
    h = h != 0 ? h : 1;
    while (g->live > 0 && g->units_live + u > cap) {
        ghost_pop(g);
    }
    while (g->first < g->end && g->hash[g->first & g->ring_mask] == 0) {
        g->first++; /* removed entries at the front */
    }
    if (g->hash == NULL || g->end - g->first > g->ring_mask) {
        /* full ring: compact when half of it is removed entries, else grow */
        uint64_t ring = g->hash == NULL ? GHOST_MIN_RING : g->ring_mask + 1;
        if (g->hash != NULL && g->live * 2 > ring) {
            ring *= 2;
        }
        if (!ghost_rebuild(g, ring)) {
            if (g->live == 0) {
                return;
            }
            ghost_pop(g);
        }
    }
    uint64_t r = g->end & g->ring_mask;
    g->hash[r] = h;
    g->units[r] = u;
    uint64_t i = ghost_find(g, h);
    if (g->ix_hash[i] != 0) {
        g->hash[g->ix_seq[i] & g->ring_mask] = 0; /* one key twice: the older goes */
        g->units_live -= g->units[g->ix_seq[i] & g->ring_mask];
        g->live--;
    }
    g->ix_hash[i] = h;
    g->ix_seq[i] = g->end++;
    g->live++;
    g->units_live += u;
}

/* ------------------------------------------------------------------------
 * S3-FIFO
 * ---------------------------------------------------------------------- */

#define S3_SMALL 4u   /* pbits: in the small queue */
#define S3_FREQ 3u    /* pbits: the counter */
#define S3_TO_MAIN 2u /* hits in S that move an item to M */
#define S3_SMALL_PCT 10u
#define S3_GHOST_PCT 90u

/* The capacity in the units the queues are counted in: max_items, or the
 * budget less what is not items (the struct, the table). */
static uint64_t s3_cap(const bl_cache *c)
{
    if (c->max_items != 0) {
        return c->max_items;
    }
    uint64_t other = c->bytes_used - c->s_units - c->m_units;
    return c->budget > other ? c->budget - other : 0;
}

static uint64_t s3_units(const bl_cache *c, const bl_item *it)
{
    return c->max_items != 0 ? 1 : bl_charge(c->pol, it->key_len, it->val_len);
}

static void s3_push_main(bl_cache *c, bl_item *it)
{
    it->pbits &= (uint8_t)~S3_SMALL;
    bl_list_push_head(&c->head, &c->tail, it);
    c->m_units += s3_units(c, it);
}

static void s3_push_small(bl_cache *c, bl_item *it)
{
    it->pbits |= S3_SMALL;
    bl_list_push_head(&c->s_head, &c->s_tail, it);
    c->s_units += s3_units(c, it);
}

static void s3_unlink(bl_cache *c, bl_item *it)
{
    if (it->pbits & S3_SMALL) {
        bl_list_unlink(&c->s_head, &c->s_tail, it);
        c->s_units -= s3_units(c, it);
    } else {
        bl_list_unlink(&c->head, &c->tail, it);
        c->m_units -= s3_units(c, it);
    }
}

static bool s3_insert(bl_cache *c, bl_item *it)
{
    uint64_t small_cap = s3_cap(c) * S3_SMALL_PCT / 100;
    it->pbits = 0;
    if (ghost_take(&c->ghost, it->hash) || (!c->s3_evicted && c->s_units >= small_cap)) {
        s3_push_main(c, it);
    } else {
        s3_push_small(c, it);
    }
    return true;
}

static void s3_remove(bl_cache *c, bl_item *it)
{
    s3_unlink(c, it);
}

static void s3_replace(bl_cache *c, bl_item *old, bl_item *nit)
{
    nit->pbits = old->pbits;
    uint64_t ou = s3_units(c, old), nu = s3_units(c, nit);
    if (old->pbits & S3_SMALL) {
        bl_list_replace(&c->s_head, &c->s_tail, old, nit);
        c->s_units = c->s_units - ou + nu;
    } else {
        bl_list_replace(&c->head, &c->tail, old, nit);
        c->m_units = c->m_units - ou + nu;
    }
}

static void s3_touch(bl_cache *c, bl_item *it)
{
    (void)c;
    if ((it->pbits & S3_FREQ) < 3) {
        it->pbits++;
    }
}

static bl_item *s3_victim(bl_cache *c, const bl_item *skip)
{
    c->s3_evicted = true;
    uint64_t cap = s3_cap(c), main_cap = cap - cap * S3_SMALL_PCT / 100;
    /* each step lowers a counter or moves an item S -> M, except for skip:
     * more steps than that means only skip is left */
    for (uint64_t steps = 5 * c->items + 5; steps > 0; steps--) {
        if (c->m_units > main_cap || c->s_tail == NULL) {
            bl_item *t = c->tail;
            if (t == NULL) {
                return NULL;
            }
            uint8_t f = t->pbits & S3_FREQ;
            if (f == 0 && t != skip) {
                return t;
            }
            bl_list_unlink(&c->head, &c->tail, t);
            bl_list_push_head(&c->head, &c->tail, t);
            if (f > 0) {
                t->pbits = (uint8_t)(t->pbits - 1);
            }
            continue;
        }
        bl_item *t = c->s_tail;
        if ((t->pbits & S3_FREQ) >= S3_TO_MAIN || t == skip) {
            s3_unlink(c, t);
            t->pbits = 0;
            s3_push_main(c, t);
            continue;
        }
        ghost_add(&c->ghost, t->hash, s3_units(c, t), cap * S3_GHOST_PCT / 100);
        return t;
    }
    return NULL;
}

static void s3_clear(bl_cache *c)
{
    c->head = c->tail = c->s_head = c->s_tail = NULL;
    c->s_units = c->m_units = 0;
    c->s3_evicted = false;
    ghost_free(&c->ghost);
}

const bl_policy bl_policy_s3fifo = {
    .name = "s3fifo",
    /* the ghost: a ring entry (16 bytes) and two index slots (32) per item */
    .item_extra = 48,
    .insert = s3_insert,
    .remove = s3_remove,
    .replace = s3_replace,
    .touch = s3_touch,
    .victim = s3_victim,
    .clear = s3_clear,
};
