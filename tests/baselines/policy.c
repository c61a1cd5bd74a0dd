/*
 * policy.c - the exact baselines evict exactly as their policy says.
 *
 * Hand-made sequences for LRU, FIFO and LFU (object capacity and byte
 * budget), a randomised comparison with tiny reference implementations
 * written the obvious O(n) way, and the reference hit ratios of
 * ../shared/traces/README.md reproduced to 4 decimals (skipped when the
 * traces are not on this machine; CUDIS_TRACES overrides the folder).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "butil.h"

/* Assert exactly the keys in `want` (space separated) of `all` are present. */
static void expect_keys(engine *e, const char *all, const char *want)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", all);
    for (char *k = strtok(buf, " "); k; k = strtok(NULL, " ")) {
        char w[258];
        snprintf(w, sizeof(w), " %s ", want);
        char needle[32];
        snprintf(needle, sizeof(needle), " %s ", k);
        bool should = strstr(w, needle) != NULL;
        cr_assert_eq(present(e, k), should, "key %s should be %s (want: %s)", k,
                     should ? "present" : "evicted", want);
    }
}

/* ------------------------------------------------------------------------
 * Hand-made sequences
 * ---------------------------------------------------------------------- */

Test(lru, hit_moves_to_front)
{
    engine *e = open_items("lru", 3);
    set(e, "a"), set(e, "b"), set(e, "c");
    get(e, "a");
    set(e, "d");
    expect_keys(e, "a b c d", "a c d");
    get(e, "c");
    set(e, "e");
    expect_keys(e, "a b c d e", "c d e");
    cudis_stats s;
    engine_stats(e, &s);
    cr_assert_eq(s.evict_memory, 2, "capacity evictions are counted");
    cr_assert_eq(s.items, 3);
    engine_destroy(e);
}

Test(lru, write_and_touch_refresh_exists_does_not)
{
    engine *e = open_items("lru", 3);
    set(e, "a"), set(e, "b"), set(e, "c");
    set(e, "a"); /* overwrite refreshes */
    set(e, "d");
    expect_keys(e, "a b c d", "a c d");
    t_op(e, T_NOW, CUDIS_OP_EXISTS, CUDIS_F_TOUCH, "c", NULL, 0, 0); /* TOUCH refreshes */
    present(e, "a");                                                 /* EXISTS does not */
    set(e, "e");
    expect_keys(e, "a b c d e", "c d e");
    t_op(e, T_NOW, CUDIS_OP_INCRBY, 0, "n", NULL, 1, 0);
    expect_keys(e, "c d e n", "c e n");
    engine_destroy(e);
}

Test(lru, notouch_get_keeps_the_order)
{
    engine *e = open_items("lru", 3);
    set(e, "a"), set(e, "b"), set(e, "c");
    tres r = t_op(e, T_NOW, CUDIS_OP_GET, CUDIS_F_NOTOUCH, "a", NULL, 0, 0);
    cr_assert(r.r.flags & CUDIS_R_VALUE, "the value is read");
    set(e, "d"); /* a is still the least recent */
    expect_keys(e, "a b c d", "b c d");
    engine_destroy(e);
}

Test(lfu, notouch_get_does_not_count)
{
    engine *e = open_items("lfu", 3);
    set(e, "a"), set(e, "b"), set(e, "c");
    get(e, "b"), get(e, "c");
    t_op(e, T_NOW, CUDIS_OP_GET, CUDIS_F_NOTOUCH, "a", NULL, 0, 0);
    t_op(e, T_NOW, CUDIS_OP_GET, CUDIS_F_NOTOUCH, "a", NULL, 0, 0);
    set(e, "d"); /* a still counts 1 */
    expect_keys(e, "a b c d", "b c d");
    engine_destroy(e);
}

Test(fifo, hits_and_overwrites_keep_order)
{
    engine *e = open_items("fifo", 3);
    set(e, "a"), set(e, "b"), set(e, "c");
    get(e, "a");
    set(e, "d");
    expect_keys(e, "a b c d", "b c d");
    set(e, "b"); /* overwrite keeps its place */
    get(e, "b");
    set(e, "e");
    expect_keys(e, "a b c d e", "c d e");
    /* a deleted and re-inserted key goes to the back */
    t_op(e, T_NOW, CUDIS_OP_DEL, 0, "c", NULL, 0, 0);
    set(e, "c");
    set(e, "f");
    expect_keys(e, "c d e f", "c e f");
    engine_destroy(e);
}

Test(lfu, least_frequent_then_least_recent)
{
    engine *e = open_items("lfu", 3);
    set(e, "a"), set(e, "b"), set(e, "c");
    get(e, "a"), get(e, "a"), get(e, "b");
    set(e, "d"); /* counts a=3 b=2 c=1: c goes */
    expect_keys(e, "a b c d", "a b d");
    set(e, "e"); /* d=1 is the only count-1 key */
    expect_keys(e, "a b d e", "a b e");
    get(e, "e"); /* e=2, b=2: b is older at count 2 */
    set(e, "f");
    expect_keys(e, "a b e f", "a e f");
    /* ties at count 1 go by recency */
    engine_destroy(e);
    e = open_items("lfu", 3);
    set(e, "x"), set(e, "y"), set(e, "z");
    set(e, "w");
    expect_keys(e, "w x y z", "w y z");
    /* an evicted key comes back with count 1 */
    get(e, "y"), get(e, "y"), get(e, "z"), get(e, "w");
    set(e, "x"); /* y=3, z=2 and w=2 with z older: z goes */
    expect_keys(e, "w x y z", "w x y");
    engine_destroy(e);
}

Test(lru, byte_budget_order)
{
    /* learn this build's per-item charge, then size a budget for 4 items */
    engine_config cfg;
    engine_config_default(&cfg);
    cfg.memory_bytes = 8192;
    char why[256];
    engine *e = engine_create("lru", &cfg, why, sizeof(why));
    cr_assert_not_null(e, "%s", why);
    cudis_stats s0, s1;
    engine_stats(e, &s0);
    set(e, "k0");
    engine_stats(e, &s1);
    uint64_t per = s1.bytes_used - s0.bytes_used;
    cr_assert_gt(per, 2 + 2, "metadata is charged");
    uint64_t cap = (cfg.memory_bytes - s0.bytes_used) / per;
    for (uint64_t i = 1; i < cap; i++) {
        char k[32];
        snprintf(k, sizeof(k), "k%llu", (unsigned long long)i);
        set(e, k);
    }
    engine_stats(e, &s1);
    cr_assert_eq(s1.items, cap);
    cr_assert_eq(s1.evict_memory, 0);
    get(e, "k0");
    char k[32];
    snprintf(k, sizeof(k), "k%llu", (unsigned long long)cap);
    set(e, k); /* evicts k1, the least recent after k0's hit */
    engine_stats(e, &s1);
    cr_assert_eq(s1.items, cap);
    cr_assert_eq(s1.evict_memory, 1);
    cr_assert(present(e, "k0"));
    cr_assert(!present(e, "k1"));
    cr_assert(present(e, "k2"));
    cr_assert_leq(s1.bytes_used, cfg.memory_bytes);
    /* a value of ~3 items' size evicts the 3 least recent others */
    char big[512];
    memset(big, 'x', sizeof(big));
    uint32_t bl = (uint32_t)(per * 2 + 4);
    cr_assert_lt(bl, sizeof(big));
    big[bl] = 0;
    T_SET(e, "k0", big); /* grows k0 in place of its entry */
    engine_stats(e, &s1);
    cr_assert_leq(s1.bytes_used, cfg.memory_bytes);
    cr_assert(!present(e, "k2"));
    cr_assert(!present(e, "k3"));
    cr_assert(present(e, "k0"));
    engine_destroy(e);
}

/* ------------------------------------------------------------------------
 * Randomised comparison with reference implementations
 * ---------------------------------------------------------------------- */

#define R_CAP 8
#define R_KEYS 24

typedef struct ref_cache {
    int policy; /* 0 lru, 1 fifo, 2 lfu */
    int n;
    int key[R_CAP];
    uint64_t inserted[R_CAP], last[R_CAP], count[R_CAP];
} ref_cache;

static int ref_find(ref_cache *c, int k)
{
    for (int i = 0; i < c->n; i++) {
        if (c->key[i] == k) {
            return i;
        }
    }
    return -1;
}

static void ref_access(ref_cache *c, int i, uint64_t now)
{
    c->last[i] = now;
    c->count[i]++;
}

static void ref_insert(ref_cache *c, int k, uint64_t now)
{
    if (c->n == R_CAP) {
        int v = 0;
        for (int i = 1; i < c->n; i++) {
            bool better;
            if (c->policy == 0) {
                better = c->last[i] < c->last[v];
            } else if (c->policy == 1) {
                better = c->inserted[i] < c->inserted[v];
            } else {
                better = c->count[i] < c->count[v] ||
                         (c->count[i] == c->count[v] && c->last[i] < c->last[v]);
            }
            if (better) {
                v = i;
            }
        }
        c->n--;
        c->key[v] = c->key[c->n];
        c->inserted[v] = c->inserted[c->n];
        c->last[v] = c->last[c->n];
        c->count[v] = c->count[c->n];
    }
    int i = c->n++;
    c->key[i] = k;
    c->inserted[i] = c->last[i] = now;
    c->count[i] = 1;
}

static void ref_delete(ref_cache *c, int i)
{
    c->n--;
    c->key[i] = c->key[c->n];
    c->inserted[i] = c->inserted[c->n];
    c->last[i] = c->last[c->n];
    c->count[i] = c->count[c->n];
}

static void random_vs_reference(const char *name, int policy)
{
    engine *e = open_items(name, R_CAP);
    ref_cache ref = {.policy = policy};
    uint64_t rng = 99 + (uint64_t)policy;
    for (uint64_t step = 1; step <= 20000; step++) {
        /* skewed keys so that hits and frequencies vary */
        uint64_t r = t_rand(&rng);
        int k = (int)((r % R_KEYS) * (r % R_KEYS) / R_KEYS);
        char key[16];
        snprintf(key, sizeof(key), "r%d", k);
        int i = ref_find(&ref, k);
        int what = (int)((r >> 32) % 10);
        if (what < 7) { /* GET, SET on miss (the simulator's request) */
            tres g = T_GET(e, key);
            cr_assert_eq((g.r.flags & CUDIS_R_FOUND) != 0, i >= 0, "%s step %llu key %s", name,
                         (unsigned long long)step, key);
            if (i >= 0) {
                ref_access(&ref, i, step);
            } else {
                set(e, key);
                ref_insert(&ref, k, step);
            }
        } else if (what < 9) { /* overwrite or insert */
            set(e, key);
            if (i >= 0) {
                if (policy != 1) {
                    ref_access(&ref, i, step);
                }
            } else {
                ref_insert(&ref, k, step);
            }
        } else { /* delete */
            t_op(e, T_NOW, CUDIS_OP_DEL, 0, key, NULL, 0, 0);
            if (i >= 0) {
                ref_delete(&ref, i);
            }
        }
    }
    cudis_stats s;
    engine_stats(e, &s);
    cr_assert_eq(s.items, (uint64_t)ref.n);
    engine_destroy(e);
}

Test(lru, random_vs_reference)
{
    random_vs_reference("lru", 0);
}

Test(fifo, random_vs_reference)
{
    random_vs_reference("fifo", 1);
}

Test(lfu, random_vs_reference)
{
    random_vs_reference("lfu", 2);
}

/* ------------------------------------------------------------------------
 * Reference hit ratios on the shared traces
 * ---------------------------------------------------------------------- */

typedef struct trace {
    uint64_t *keys;
    size_t n;
} trace;

static const char *trace_dir(void)
{
    const char *d = getenv("CUDIS_TRACES");
    return d ? d : "/work/shared/traces";
}

static bool trace_load(const char *file, trace *t)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", trace_dir(), file);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return false;
    }
    size_t cap = 1 << 16;
    t->keys = malloc(cap * sizeof(uint64_t));
    t->n = 0;
    bool bin = strstr(file, ".bin") != NULL;
    for (;;) {
        uint64_t k;
        if (bin) {
            uint8_t rec[24];
            if (fread(rec, 1, 24, f) != 24) {
                break;
            }
            memcpy(&k, rec + 4, 8);
        } else {
            unsigned long long v;
            if (fscanf(f, "%llu", &v) != 1) {
                break;
            }
            k = v;
        }
        if (t->n == cap) {
            cap *= 2;
            t->keys = realloc(t->keys, cap * sizeof(uint64_t));
        }
        t->keys[t->n++] = k;
    }
    fclose(f);
    return t->n > 0;
}

/* Replay: GET, and SET on a miss; returns the hit ratio. With set_always,
 * every request is a SET (an overwrite when cached) and FOUND is the hit. */
static double replay(const char *name, const trace *t, uint64_t capacity, bool set_always)
{
    engine *e = open_items(name, capacity);
    tbatch b;
    tb_init(&b, 64);
    uint64_t hits = 0;
    for (size_t i = 0; i < t->n; i++) {
        tb_reset(&b);
        if (set_always) {
            tb_op(&b, CUDIS_OP_SET, 0, &t->keys[i], 8, "v", 1, 0, 0);
            tb_run(e, &b, T_NOW);
            cr_assert_eq(b.res[0].status, CUDIS_OK);
            hits += (b.res[0].flags & CUDIS_R_FOUND) != 0;
            continue;
        }
        tb_op(&b, CUDIS_OP_GET, 0, &t->keys[i], 8, NULL, 0, 0, 0);
        tb_run(e, &b, T_NOW);
        if (b.res[0].flags & CUDIS_R_FOUND) {
            hits++;
            continue;
        }
        tb_reset(&b);
        tb_op(&b, CUDIS_OP_SET, 0, &t->keys[i], 8, NULL, 0, 0, 0);
        tb_run(e, &b, T_NOW);
        cr_assert_eq(b.res[0].status, CUDIS_OK);
    }
    cudis_stats s;
    engine_stats(e, &s);
    cr_assert_eq(s.hits, set_always ? 0 : hits);
    cr_assert_leq(s.items, capacity);
    tb_free(&b);
    engine_destroy(e);
    return (double)hits / (double)t->n;
}

static void check_reference(const char *file, uint64_t cap, double lru, double fifo)
{
    trace t;
    if (!trace_load(file, &t)) {
        cr_skip_test("trace %s/%s not found", trace_dir(), file);
    }
    double l = replay("lru", &t, cap, false);
    double f = replay("fifo", &t, cap, false);
    /* an overwrite keeps a FIFO key's place: write-every-request gives the
     * same ratio (moving it to the back would make FIFO an LRU) */
    double fw = replay("fifo", &t, cap, true);
    cr_assert_lt(fabs(fw - fifo), 0.00005 + 1e-9, "%s cap %llu: FIFO by SET %.5f, reference %.4f",
                 file, (unsigned long long)cap, fw, fifo);
    cr_assert_lt(fabs(l - lru), 0.00005 + 1e-9, "%s cap %llu: LRU %.5f, reference %.4f", file,
                 (unsigned long long)cap, l, lru);
    cr_assert_lt(fabs(f - fifo), 0.00005 + 1e-9, "%s cap %llu: FIFO %.5f, reference %.4f", file,
                 (unsigned long long)cap, f, fifo);
    free(t.keys);
}

Test(reference, sprite)
{
    check_reference("lirs-sprite.keys", 352, 0.6551, 0.6172);
    check_reference("lirs-sprite.keys", 704, 0.8638, 0.8178);
}

Test(reference, web12)
{
    check_reference("cache2k-web12.keys", 1344, 0.6822, 0.6426);
    check_reference("cache2k-web12.keys", 3424, 0.7765, 0.7429);
}

Test(reference, twopools)
{
    check_reference("lirs-2pools.keys", 992, 0.5437, 0.4989);
    check_reference("lirs-2pools.keys", 2464, 0.6147, 0.5996);
}

Test(reference, cloudphysics)
{
    check_reference("cloudphysics.oracleGeneral.bin", 12224, 0.3277, 0.3152);
}
