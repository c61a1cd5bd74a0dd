/*
 * fifo2.c - the SIEVE and S3-FIFO baselines evict exactly as their papers
 * (and libCacheSim's S3FIFO.c) say: hand-made sequences whose every step is
 * worked out in the comments, and a randomised comparison with reference
 * implementations written the obvious O(n) way over arrays.
 */
#include <criterion/criterion.h>

#include "butil.h"

static void expect(engine *e, const char *k, bool want)
{
    cr_assert_eq(present(e, k), want, "key %s should be %s", k, want ? "present" : "evicted");
}

static void setn(engine *e, int from, int to)
{
    for (int i = from; i <= to; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        set(e, k);
    }
}

/* ------------------------------------------------------------------------
 * Hand-made sequences
 * ---------------------------------------------------------------------- */

Test(sieve, hand_skips_visited_and_stays)
{
    engine *e = open_items("sieve", 3);
    set(e, "a"), set(e, "b"), set(e, "c"); /* tail a b c head */
    get(e, "a");                           /* a visited */
    set(e, "d"); /* hand at a: clears it, b is the victim; hand -> c */
    expect(e, "a", true), expect(e, "b", false), expect(e, "c", true), expect(e, "d", true);
    set(e, "e"); /* hand at c, unvisited: c goes; hand -> d. a keeps its place (no move) */
    expect(e, "c", false), expect(e, "a", true), expect(e, "d", true), expect(e, "e", true);
    get(e, "d");
    set(e, "f"); /* hand at d: cleared; e, the newest, is the victim: the hand wraps to the tail */
    expect(e, "d", true), expect(e, "e", false), expect(e, "f", true), expect(e, "a", true);
    set(e, "g"); /* hand at the tail a, unvisited since its bit was cleared: a goes; hand -> d */
    expect(e, "a", false), expect(e, "g", true);
    set(e, "h"); /* hand at d, cleared when the hand passed it: d goes */
    expect(e, "d", false), expect(e, "f", true), expect(e, "g", true), expect(e, "h", true);
    cudis_stats s;
    engine_stats(e, &s);
    cr_assert_eq(s.evict_memory, 5);
    cr_assert_eq(s.items, 3);
    engine_destroy(e);
}

Test(sieve, deleting_the_hand_moves_it_on)
{
    engine *e = open_items("sieve", 3);
    set(e, "a"), set(e, "b"), set(e, "c");
    set(e, "d"); /* a goes; hand -> b */
    t_op(e, T_NOW, CUDIS_OP_DEL, 0, "b", NULL, 0, 0); /* hand -> c */
    set(e, "x");                                      /* room: nothing goes */
    get(e, "d");
    set(e, "y"); /* hand at c: c goes */
    expect(e, "c", false), expect(e, "d", true), expect(e, "x", true), expect(e, "y", true);
    engine_destroy(e);
}

Test(s3fifo, one_hit_wonders_leave_through_the_small_queue)
{
    /* capacity 10: small 1, main 9, ghost 9 */
    engine *e = open_items("s3fifo", 10);
    setn(e, 0, 9); /* k0 in S; S full before any eviction: k1..k9 into M */
    get(e, "k1");  /* k1: counter 1 */
    setn(e, 10, 10); /* M holds 9 = its share: S's tail k0 (no hit) goes, into G; k10 -> S */
    expect(e, "k0", false), expect(e, "k10", true);
    get(e, "k10"), get(e, "k10"); /* k10: counter 2, the move-to-main threshold */
    setn(e, 11, 11); /* S's tail k10 moves to M (counter 0): M 10 > 9, so from M: k1
                      * (counter 1) goes back to M's head with 0, k2 is the victim; k11 -> S */
    expect(e, "k10", true), expect(e, "k1", true), expect(e, "k2", false), expect(e, "k11", true);
    set(e, "k0"); /* S's tail k11 goes (into G); k0 is in G: it enters M, leaving G */
    expect(e, "k11", false), expect(e, "k0", true);
    setn(e, 12, 12); /* M is 10 > 9 again: M's tail k3 goes; k12 -> S */
    expect(e, "k3", false), expect(e, "k12", true), expect(e, "k0", true);
    set(e, "k11"); /* S's tail k12 goes; k11 is in G: it enters M */
    expect(e, "k12", false), expect(e, "k11", true);
    cudis_stats s;
    engine_stats(e, &s);
    cr_assert_eq(s.items, 10);
    cr_assert_eq(s.evict_memory, 5);
    engine_destroy(e);
}

/* ------------------------------------------------------------------------
 * Randomised comparison with reference implementations
 * ---------------------------------------------------------------------- */

#define R_CAP 20
#define R_KEYS 80
#define NONE (-1)

/* An array list, index 0 the oldest. */
typedef struct rlist {
    int n;
    int key[R_KEYS];
    int bits[R_KEYS];
} rlist;

static int rl_find(const rlist *l, int k)
{
    for (int i = 0; i < l->n; i++) {
        if (l->key[i] == k) {
            return i;
        }
    }
    return NONE;
}

static void rl_del(rlist *l, int i)
{
    memmove(&l->key[i], &l->key[i + 1], (size_t)(l->n - i - 1) * sizeof(int));
    memmove(&l->bits[i], &l->bits[i + 1], (size_t)(l->n - i - 1) * sizeof(int));
    l->n--;
}

static void rl_add(rlist *l, int k, int bits)
{
    l->key[l->n] = k;
    l->bits[l->n] = bits;
    l->n++;
}

typedef struct ref {
    bool s3;      /* false: SIEVE */
    rlist q, s, g; /* SIEVE: q; S3-FIFO: q is M, s is S, g is G */
    int hand;     /* SIEVE: the key the hand is at, NONE: the tail */
    bool evicted;
} ref;

static int ref_size(const ref *r)
{
    return r->q.n + r->s.n;
}

static bool ref_has(const ref *r, int k)
{
    return rl_find(&r->q, k) != NONE || rl_find(&r->s, k) != NONE;
}

static void ref_hit(ref *r, int k)
{
    int i = rl_find(&r->q, k);
    rlist *l = &r->q;
    if (i == NONE) {
        l = &r->s;
        i = rl_find(l, k);
    }
    if (r->s3) {
        l->bits[i] = l->bits[i] < 3 ? l->bits[i] + 1 : 3;
    } else {
        l->bits[i] = 1;
    }
}

static void ref_delete(ref *r, int k)
{
    int i = rl_find(&r->q, k);
    if (i != NONE) {
        if (!r->s3 && r->hand == k) {
            r->hand = i + 1 < r->q.n ? r->q.key[i + 1] : NONE;
        }
        rl_del(&r->q, i);
    } else if ((i = rl_find(&r->s, k)) != NONE) {
        rl_del(&r->s, i);
    }
}

static void ref_evict(ref *r)
{
    if (!r->s3) {
        int o = r->hand != NONE ? rl_find(&r->q, r->hand) : 0;
        while (r->q.bits[o]) {
            r->q.bits[o] = 0;
            o = o + 1 < r->q.n ? o + 1 : 0;
        }
        r->hand = o + 1 < r->q.n ? r->q.key[o + 1] : NONE;
        rl_del(&r->q, o);
        return;
    }
    r->evicted = true;
    int small = R_CAP * 10 / 100, ghost = R_CAP * 90 / 100;
    for (;;) {
        if (r->q.n > R_CAP - small || r->s.n == 0) {
            int k = r->q.key[0], f = r->q.bits[0];
            rl_del(&r->q, 0);
            if (f == 0) {
                return;
            }
            rl_add(&r->q, k, f - 1);
            continue;
        }
        int k = r->s.key[0], f = r->s.bits[0];
        rl_del(&r->s, 0);
        if (f >= 2) {
            rl_add(&r->q, k, 0);
            continue;
        }
        if (r->g.n == ghost) {
            rl_del(&r->g, 0);
        }
        rl_add(&r->g, k, 0);
        return;
    }
}

static void ref_insert(ref *r, int k)
{
    while (ref_size(r) >= R_CAP) {
        ref_evict(r);
    }
    if (!r->s3) {
        rl_add(&r->q, k, 0);
        return;
    }
    int g = rl_find(&r->g, k);
    if (g != NONE) {
        rl_del(&r->g, g);
        rl_add(&r->q, k, 0);
    } else if (!r->evicted && r->s.n >= R_CAP * 10 / 100) {
        rl_add(&r->q, k, 0);
    } else {
        rl_add(&r->s, k, 0);
    }
}

static void random_vs_reference(const char *name, bool s3, uint64_t seed)
{
    engine *e = open_items(name, R_CAP);
    ref r = {.s3 = s3, .hand = NONE};
    uint64_t rng = seed;
    for (uint64_t step = 1; step <= 40000; step++) {
        uint64_t x = t_rand(&rng);
        /* skewed keys: hits, counters and ghost hits all happen */
        int k = (int)((x % R_KEYS) * ((x >> 8) % R_KEYS) / R_KEYS);
        char key[16];
        snprintf(key, sizeof(key), "r%d", k);
        bool have = ref_has(&r, k);
        int what = (int)((x >> 32) % 10);
        if (what < 8) { /* GET, SET on a miss (the simulator's request) */
            tres g = T_GET(e, key);
            cr_assert_eq((g.r.flags & CUDIS_R_FOUND) != 0, have, "%s step %llu key %s", name,
                         (unsigned long long)step, key);
            if (have) {
                ref_hit(&r, k);
            } else {
                set(e, key);
                ref_insert(&r, k);
            }
        } else if (what < 9) { /* a write: an overwrite counts as a hit */
            set(e, key);
            if (have) {
                ref_hit(&r, k);
            } else {
                ref_insert(&r, k);
            }
        } else {
            t_op(e, T_NOW, CUDIS_OP_DEL, 0, key, NULL, 0, 0);
            ref_delete(&r, k);
        }
    }
    for (int k = 0; k < R_KEYS; k++) {
        char key[16];
        snprintf(key, sizeof(key), "r%d", k);
        cr_assert_eq(present(e, key), ref_has(&r, k), "%s: key %s at the end", name, key);
    }
    cudis_stats s;
    engine_stats(e, &s);
    cr_assert_eq(s.items, (uint64_t)ref_size(&r));
    engine_destroy(e);
}

Test(sieve, random_vs_reference)
{
    random_vs_reference("sieve", false, 7);
    random_vs_reference("sieve", false, 8);
}

Test(s3fifo, random_vs_reference)
{
    random_vs_reference("s3fifo", true, 7);
    random_vs_reference("s3fifo", true, 8);
}

/* ------------------------------------------------------------------------
 * Under a byte budget: a value that grows evicts others, never itself
 * ---------------------------------------------------------------------- */

static void grow_keeps_the_key(const char *name)
{
    engine_config cfg;
    engine_config_default(&cfg);
    cfg.memory_bytes = 16384;
    char why[256];
    engine *e = engine_create(name, &cfg, why, sizeof(why));
    cr_assert_not_null(e, "%s", why);
    for (int i = 0; i < 400; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        set(e, k);
        if (i % 3 == 0) {
            get(e, k);
        }
    }
    char big[2048];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    tres r = T_SET(e, "k399", big);
    cr_assert_eq(r.r.status, CUDIS_OK);
    cr_assert(present(e, "k399"));
    cudis_stats s;
    engine_stats(e, &s);
    cr_assert_leq(s.bytes_used, cfg.memory_bytes);
    cr_assert_gt(s.evict_memory, 0);
    engine_destroy(e);
}

Test(sieve, byte_budget_grow)
{
    grow_keeps_the_key("sieve");
}

Test(s3fifo, byte_budget_grow)
{
    grow_keeps_the_key("s3fifo");
}
