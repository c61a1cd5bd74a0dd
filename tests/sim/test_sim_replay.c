/*
 * test_sim_replay.c - the simulator's replay harness against real engines:
 * the README's reference hit ratio for LRU on lirs-sprite (skipped when
 * ../shared/traces is absent), exact batched replay equal to one request at
 * a time, and the threaded replay counting every request.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudis_err.h"
#include "sim_model.h"
#include "sim_replay.h"
#include "sim_trace.h"

#ifndef CUDIS_SOURCE_DIR
#define CUDIS_SOURCE_DIR "."
#endif

static const char *trace_dir(void)
{
    static char buf[1024];
    const char *env = getenv("CUDIS_TRACE_DIR");
    if (env != NULL && env[0] != '\0') {
        return env;
    }
    snprintf(buf, sizeof(buf), "%s/../shared/traces", CUDIS_SOURCE_DIR);
    return buf;
}

static double run_hit(const sim_trace *t, const char *engine, uint64_t cap, uint32_t batch,
                      sim_replay_mode mode, uint32_t threads, sim_run_result *r)
{
    sim_run_cfg c;
    sim_run_cfg_default(&c);
    c.engine = engine;
    c.max_items = cap;
    c.batch = batch;
    c.mode = mode;
    c.threads = threads;
    char why[256];
    int rc = sim_run(t, &c, r, why, sizeof(why));
    cr_assert_eq(rc, CUDIS_OK, "%s: %s", engine, why);
    cr_assert_eq(r->requests, t->n, "every request counted");
    return (double)r->hits / (double)r->requests;
}

Test(sim_replay, lirs_sprite_lru_reference, .timeout = 60)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/lirs-sprite.keys", trace_dir());
    if (access(path, R_OK) != 0) {
        cr_skip_test("%s is absent (set CUDIS_TRACE_DIR to the shared traces)", path);
    }
    sim_trace t;
    char why[512];
    cr_assert_eq(sim_trace_read_keys(path, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    cr_assert_eq(t.n, 133996);
    cr_assert_eq(t.unique, 7075);
    uint64_t cap = sim_capacity_objects(t.unique, 0.05);
    cr_assert_eq(cap, 352);
    sim_run_result r;
    double h = run_hit(&t, "lru", cap, 256, SIM_REPLAY_EXACT, 1, &r);
    cr_assert_lt(fabs(h - 0.6551), 0.00005, "LRU hit ratio %.6f, reference 0.6551", h);
    cr_assert_eq(r.stats.items, cap, "the item limit, not the byte budget, bounds the cache");
    sim_trace_free(&t);
}

/* Exact batched replay must equal batch size 1 for every exact baseline;
 * look-aside batching (GET batch, then SETs) is allowed to differ. */
Test(sim_replay, exact_batches_equal_one_at_a_time, .timeout = 60)
{
    sim_gen_cfg g;
    char why[256];
    cr_assert_eq(sim_gen_parse("zipf:s=0.9,keys=5000,n=60K,seed=3", &g, why, sizeof(why)),
                 CUDIS_OK);
    sim_trace t;
    cr_assert_eq(sim_trace_generate(&g, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    static const char *const engines[] = {"lru", "fifo", "lfu"};
    for (size_t i = 0; i < 3; i++) {
        sim_run_result a, b, c;
        run_hit(&t, engines[i], 256, 1, SIM_REPLAY_EXACT, 1, &a);
        run_hit(&t, engines[i], 256, 256, SIM_REPLAY_EXACT, 1, &b);
        run_hit(&t, engines[i], 256, 1, SIM_REPLAY_LOOKASIDE, 1, &c);
        cr_assert_eq(a.hits, b.hits, "%s: batch 256 %llu hits, batch 1 %llu", engines[i],
                     (unsigned long long)b.hits, (unsigned long long)a.hits);
        cr_assert_eq(a.hits, c.hits, "%s: look-aside with batch 1 is one at a time", engines[i]);
    }
    sim_trace_free(&t);
}

Test(sim_replay, threads_and_passes, .timeout = 60)
{
    sim_gen_cfg g;
    char why[256];
    cr_assert_eq(sim_gen_parse("uniform:keys=2000,n=50K", &g, why, sizeof(why)), CUDIS_OK);
    sim_trace t;
    cr_assert_eq(sim_trace_generate(&g, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    sim_run_cfg c;
    sim_run_cfg_default(&c);
    c.engine = "lru";
    c.max_items = 4096;
    c.mode = SIM_REPLAY_LOOKASIDE;
    c.threads = 2;
    c.max_passes = 3;
    c.min_seconds = 1e9; /* all three passes */
    sim_run_result r;
    cr_assert_eq(sim_run(&t, &c, &r, why, sizeof(why)), CUDIS_OK, "%s", why);
    cr_assert_eq(r.passes, 3);
    cr_assert_eq(r.requests, t.n);
    cr_assert_eq(r.total_requests, 3 * t.n);
    cr_assert_eq(r.hits, t.n - 2000, "everything fits: each key misses once per pass");
    cr_assert_eq(r.total_hits, 3 * (t.n - 2000), "each pass starts cold (flushed)");
    cr_assert_gt(r.req_per_s, 0);

    /* a cache too small for the keys: misses beyond the cold ones */
    c.max_items = 500;
    cr_assert_eq(sim_run(&t, &c, &r, why, sizeof(why)), CUDIS_OK, "%s", why);
    cr_assert_lt(r.hits, t.n - 2000);
    cr_assert_eq(r.stats.items, 500);

    c.engine = "no-such-engine";
    cr_assert_eq(sim_run(&t, &c, &r, why, sizeof(why)), CUDIS_E_NOENGINE);
    sim_trace_free(&t);
}

/* The CCHT model with a single bucket holding every slot evicts the oldest
 * item of the whole cache: exact LRU, so it must match the lru engine. */
Test(sim_replay, model_with_one_bucket_is_lru, .timeout = 60)
{
    sim_gen_cfg g;
    char why[256];
    cr_assert_eq(sim_gen_parse("zipf:s=0.8,keys=3000,n=40K,seed=5", &g, why, sizeof(why)),
                 CUDIS_OK);
    sim_trace t;
    cr_assert_eq(sim_trace_generate(&g, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    sim_run_result r;
    run_hit(&t, "lru", 320, 256, SIM_REPLAY_EXACT, 1, &r);
    sim_model_cfg mc = {.capacity = 320, .ways = 320, .slack = 0, .seed = 1};
    uint64_t items = 0;
    int64_t hits = sim_model_run(&t, &mc, &items);
    cr_assert_eq(hits, (int64_t)r.hits, "model %lld hits, lru %llu", (long long)hits,
                 (unsigned long long)r.hits);
    cr_assert_eq(items, 320);
    /* two buckets of 160: an approximation, close but not always equal */
    mc.ways = 160;
    hits = sim_model_run(&t, &mc, NULL);
    cr_assert_lt(llabs(hits - (int64_t)r.hits), (long long)(t.n / 100), "within 1 point of LRU");

    sim_model_cfg p = {0};
    bool s;
    cr_assert(sim_model_parse("model8", &p, &s));
    cr_assert(p.ways == 8 && !s && !p.emptier && p.choices == 2 && p.demote == 0 && !p.ghost);
    cr_assert(sim_model_parse("model16sec3", &p, &s));
    cr_assert(p.ways == 16 && s && p.emptier && p.choices == 3);
    cr_assert(sim_model_parse("model8eq75g", &p, &s));
    cr_assert(p.ways == 8 && !s && p.emptier && p.demote == 75 && p.ghost);
    cr_assert(sim_model_parse("model8q50gfa", &p, &s));
    cr_assert(p.demote == 50 && p.ghost && p.freq && p.adapt);
    cr_assert(sim_model_parse("model8eq90lgfa", &p, &s));
    cr_assert(p.demote == 90 && p.local && p.ghost && p.freq && p.adapt);
    cr_assert(sim_model_parse("model8eq90lgfw", &p, &s));
    cr_assert(p.admit && !p.sketch_guard && p.sketch_known == 0);
    p = (sim_model_cfg){0};
    cr_assert(sim_model_parse("model8eq90lgfwvwk3", &p, &s));
    cr_assert(!p.admit && p.sketch_guard && p.sketch_known == 3);
    cr_assert_not(sim_model_parse("model8q50wv", &p, &s), "wv needs l");
    cr_assert_not(sim_model_parse("model8wk2", &p, &s), "wk needs q");
    cr_assert_not(sim_model_parse("model8q50wk1", &p, &s), "wk counts from 2");
    cr_assert_not(sim_model_parse("model8l", &p, &s), "l needs q");
    cr_assert_not(sim_model_parse("model8q50a", &p, &s), "a needs the ghost");
    cr_assert_not(sim_model_parse("model", &p, &s));
    cr_assert_not(sim_model_parse("cpu8", &p, &s));
    cr_assert_not(sim_model_parse("model8x", &p, &s));
    cr_assert_not(sim_model_parse("model8q", &p, &s));
    cr_assert_not(sim_model_parse("model8q100", &p, &s));
    sim_trace_free(&t);
}
