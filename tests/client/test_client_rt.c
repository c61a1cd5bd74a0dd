/*
 * test_client_rt.c - read-through (cudis_rt) against a real server: policy
 * fill, policy default with the background fill, the automatic switch on
 * the recent hit ratio, several threads at once, and the cache going away
 * (rows still come from the loader).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudis.h"
#include "cudis_time.h"
#include "srv.h"

#define RB 32

static srv S;
static cudis_pool *P;
static cudis_table *T;
static _Atomic int loader_fail;

static void setup(void)
{
    cr_assert_eq(srv_start(&S, NULL, NULL), 0, "server did not start");
    cudis_options o;
    cudis_options_default(&o);
    o.port = S.port;
    o.timeout_ms = 5000; /* generous: the machine may be loaded */
    P = cudis_pool_create(&o, 4, NULL, 0);
    T = cudis_table_create("rt", RB, NULL);
    cr_assert(P && T);
}

static void teardown(void)
{
    cudis_table_destroy(T);
    cudis_pool_destroy(P);
    srv_stop(&S);
}

static void expect_row(const uint8_t *row, uint64_t id)
{
    for (size_t j = 0; j < RB; j++) {
        if (row[j] != (uint8_t)(id * 7 + j)) {
            cr_assert_fail("row of id %llu wrong at byte %zu", (unsigned long long)id, j);
        }
    }
}

static int loader(void *arg, size_t n, const uint64_t *ids, void *rows)
{
    (void)arg;
    if (atomic_load(&loader_fail)) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < RB; j++) {
            ((uint8_t *)rows)[i * RB + j] = (uint8_t)(ids[i] * 7 + j);
        }
    }
    return 0;
}

TestSuite(rt, .init = setup, .fini = teardown, .timeout = 30);

Test(rt, policy_fill)
{
    cudis_rt_options o;
    cudis_rt_options_default(&o);
    o.policy = CUDIS_MISS_FILL;
    cudis_rt *rt = cudis_rt_create(P, T, loader, NULL, &o, NULL, 0);
    cr_assert_not_null(rt);
    uint64_t ids[100];
    uint8_t rows[100 * RB], found[100];
    for (int i = 0; i < 100; i++) {
        ids[i] = (uint64_t)i * 11;
    }
    cr_assert_eq(cudis_rt_get(rt, 100, ids, rows, found), 0);
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(found[i], CUDIS_ROW_MISS);
        expect_row(rows + i * RB, ids[i]);
    }
    memset(rows, 0, sizeof(rows));
    cr_assert_eq(cudis_rt_get(rt, 100, ids, rows, found), 0);
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(found[i], CUDIS_ROW_HIT, "row %d not written back", i);
        expect_row(rows + i * RB, ids[i]);
    }
    cudis_rt_stats st;
    cudis_rt_stats_get(rt, &st);
    cr_assert_eq(st.calls, 2);
    cr_assert_eq(st.ids, 200);
    cr_assert_eq(st.hits, 100);
    cr_assert_eq(st.misses, 100);
    cr_assert_eq(st.loader_calls, 1);
    cr_assert_eq(st.loader_ids, 100);
    cr_assert_eq(st.filled_sync, 100);
    cr_assert(st.loader_ns > 0);
    /* duplicate misses in one request: loaded and written once, all rows filled */
    uint64_t dup[4] = {5000, 5001, 5000, 5000};
    cr_assert_eq(cudis_rt_get(rt, 4, dup, rows, found), 0);
    cudis_rt_stats_get(rt, &st);
    cr_assert_eq(st.loader_ids, 102);
    cr_assert_eq(st.filled_sync, 104);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(found[i], CUDIS_ROW_MISS);
        expect_row(rows + i * RB, dup[i]);
    }
    /* a failing loader: misses have no valid row */
    atomic_store(&loader_fail, 1);
    uint64_t nid = 999999;
    cr_assert_neq(cudis_rt_get(rt, 1, &nid, rows, found), 0);
    cr_assert_eq(found[0], CUDIS_ROW_FAILED);
    cudis_rt_stats_get(rt, &st);
    cr_assert_eq(st.loader_errors, 1);
    atomic_store(&loader_fail, 0);
    cudis_rt_destroy(rt);
}

Test(rt, policy_default_fills_in_background)
{
    cudis_rt_options o;
    cudis_rt_options_default(&o);
    o.policy = CUDIS_MISS_DEFAULT;
    uint8_t def[RB];
    memset(def, 0xAB, RB);
    o.default_row = def;
    cudis_rt *rt = cudis_rt_create(P, T, loader, NULL, &o, NULL, 0);
    cr_assert_not_null(rt);
    uint64_t ids[50];
    uint8_t rows[50 * RB], found[50];
    for (int i = 0; i < 50; i++) {
        ids[i] = (uint64_t)(i % 25) + 1000; /* duplicates are queued once */
    }
    cr_assert_eq(cudis_rt_get(rt, 50, ids, rows, found), 0);
    for (int i = 0; i < 50; i++) {
        cr_assert_eq(found[i], CUDIS_ROW_MISS);
        cr_assert(memcmp(rows + i * RB, def, RB) == 0, "row %d is not the default", i);
    }
    cudis_rt_flush(rt);
    cudis_rt_stats st;
    cudis_rt_stats_get(rt, &st);
    cr_assert_eq(st.defaulted, 50);
    cr_assert_eq(st.filled_sync, 0);
    cr_assert_eq(st.filled_async, 25, "filled_async %llu", (unsigned long long)st.filled_async);
    cr_assert_eq(cudis_rt_get(rt, 50, ids, rows, found), 0);
    for (int i = 0; i < 50; i++) {
        cr_assert_eq(found[i], CUDIS_ROW_HIT);
        expect_row(rows + i * RB, ids[i]);
    }
    cudis_rt_destroy(rt);
}

Test(rt, auto_switches_on_hit_ratio)
{
    cudis_rt_options o;
    cudis_rt_options_default(&o);
    o.policy = CUDIS_MISS_AUTO;
    o.hit_threshold = 0.8;
    o.window_ids = 400;
    cudis_rt *rt = cudis_rt_create(P, T, loader, NULL, &o, NULL, 0);
    cr_assert_not_null(rt);
    uint64_t ids[100];
    uint8_t rows[100 * RB], found[100];
    for (int i = 0; i < 100; i++) {
        ids[i] = (uint64_t)i;
    }
    /* cold: FILL */
    cr_assert_eq(cudis_rt_get(rt, 100, ids, rows, found), 0);
    cudis_rt_stats st;
    cudis_rt_stats_get(rt, &st);
    cr_assert_eq(st.mode, CUDIS_MISS_FILL);
    cr_assert_eq(st.filled_sync, 100);
    /* warm: repeated hits push the window ratio over 0.8 */
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(cudis_rt_get(rt, 100, ids, rows, found), 0);
    }
    cudis_rt_stats_get(rt, &st);
    cr_assert_eq(st.mode, CUDIS_MISS_DEFAULT, "ratio %.2f", st.recent_hit_ratio);
    cr_assert_eq(st.mode_switches, 1);
    /* a few misses now are defaulted, not loaded synchronously */
    uint64_t mixed[100];
    for (int i = 0; i < 100; i++) {
        mixed[i] = i < 90 ? (uint64_t)i : (uint64_t)(5000 + i);
    }
    cr_assert_eq(cudis_rt_get(rt, 100, mixed, rows, found), 0);
    cudis_rt_stats_get(rt, &st);
    cr_assert_eq(st.filled_sync, 100);
    cr_assert_eq(st.defaulted, 10);
    for (int i = 90; i < 100; i++) {
        cr_assert_eq(found[i], CUDIS_ROW_MISS);
    }
    /* a run of misses drops the ratio: back to FILL */
    uint64_t cold[100];
    for (int r = 0; r < 6 && st.mode == CUDIS_MISS_DEFAULT; r++) {
        for (int i = 0; i < 100; i++) {
            cold[i] = (uint64_t)(100000 + r * 100 + i);
        }
        cr_assert_eq(cudis_rt_get(rt, 100, cold, rows, found), 0);
        cudis_rt_stats_get(rt, &st);
    }
    cr_assert_eq(st.mode, CUDIS_MISS_FILL, "ratio %.2f", st.recent_hit_ratio);
    cr_assert_eq(st.mode_switches, 2);
    uint64_t before = st.filled_sync;
    for (int i = 0; i < 100; i++) {
        cold[i] = (uint64_t)(200000 + i);
    }
    cr_assert_eq(cudis_rt_get(rt, 100, cold, rows, found), 0);
    cudis_rt_stats_get(rt, &st);
    cr_assert_eq(st.filled_sync, before + 100);
    for (int i = 0; i < 100; i++) {
        expect_row(rows + i * RB, cold[i]);
    }
    cudis_rt_destroy(rt);
}

struct th_arg {
    cudis_rt *rt;
    int tid;
    int bad;
};

static void *rt_thread(void *arg)
{
    struct th_arg *a = arg;
    uint64_t ids[64];
    uint8_t rows[64 * RB], found[64];
    unsigned seed = (unsigned)a->tid * 7919u + 1;
    for (int it = 0; it < 150; it++) {
        for (int i = 0; i < 64; i++) {
            ids[i] = (uint64_t)(rand_r(&seed) % 2000);
        }
        if (cudis_rt_get(a->rt, 64, ids, rows, found) != 0) {
            a->bad++;
            continue;
        }
        for (int i = 0; i < 64; i++) {
            if (found[i] == CUDIS_ROW_FAILED) {
                a->bad++;
            }
            if (found[i] == CUDIS_ROW_HIT || found[i] == CUDIS_ROW_MISS) {
                const uint8_t *r = rows + i * RB;
                bool is_default = true, is_real = true;
                for (int j = 0; j < RB; j++) {
                    is_default &= r[j] == 0;
                    is_real &= r[j] == (uint8_t)(ids[i] * 7 + (uint64_t)j);
                }
                if (!is_real && !(found[i] == CUDIS_ROW_MISS && is_default)) {
                    a->bad++;
                }
            }
        }
    }
    return NULL;
}

Test(rt, threads_auto)
{
    cudis_rt_options o;
    cudis_rt_options_default(&o);
    o.window_ids = 1000;
    o.hit_threshold = 0.5;
    cudis_rt *rt = cudis_rt_create(P, T, loader, NULL, &o, NULL, 0);
    pthread_t th[4];
    struct th_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (struct th_arg){.rt = rt, .tid = i};
        pthread_create(&th[i], NULL, rt_thread, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(a[i].bad, 0, "thread %d: %d bad rows", i, a[i].bad);
    }
    cudis_rt_flush(rt);
    cudis_rt_stats st;
    cudis_rt_stats_get(rt, &st);
    cr_assert_eq(st.calls, 600);
    cr_assert_eq(st.ids, 600 * 64);
    cr_assert_eq(st.hits + st.misses, st.ids);
    cr_assert(st.hits > st.misses, "hits %llu misses %llu", (unsigned long long)st.hits,
              (unsigned long long)st.misses);
    cudis_rt_destroy(rt);
}

Test(rt, cache_down_still_serves_from_loader)
{
    cudis_rt_options o;
    cudis_rt_options_default(&o);
    o.policy = CUDIS_MISS_FILL;
    o.pool_wait_ms = 200;
    cudis_rt *rt = cudis_rt_create(P, T, loader, NULL, &o, NULL, 0);
    srv_stop(&S);
    uint64_t ids[10];
    uint8_t rows[10 * RB], found[10];
    for (int i = 0; i < 10; i++) {
        ids[i] = (uint64_t)i + 77;
    }
    cr_assert_eq(cudis_rt_get(rt, 10, ids, rows, found), 0);
    for (int i = 0; i < 10; i++) {
        cr_assert_eq(found[i], CUDIS_ROW_MISS);
        expect_row(rows + i * RB, ids[i]);
    }
    cudis_rt_stats st;
    cudis_rt_stats_get(rt, &st);
    cr_assert_eq(st.writeback_errors, 1);
    cudis_rt_destroy(rt);
}

Test(rt, stalled_cache_costs_one_timeout)
{
    cudis_options co;
    cudis_options_default(&co);
    co.port = S.port;
    co.timeout_ms = 5000;
    cudis_pool *p = cudis_pool_create(&co, 1, NULL, 0);
    cudis_rt_options o;
    cudis_rt_options_default(&o);
    o.policy = CUDIS_MISS_FILL;
    cudis_rt *rt = cudis_rt_create(p, T, loader, NULL, &o, NULL, 0);
    uint64_t ids[10];
    uint8_t rows[10 * RB], found[10];
    for (int i = 0; i < 10; i++) {
        ids[i] = (uint64_t)i + 300;
    }
    cr_assert_eq(cudis_rt_get(rt, 10, ids, rows, found), 0); /* opens the connection */
    cudis_conn *c;
    cr_assert_eq(cudis_pool_acquire(p, 1000, &c), 0);
    cudis_conn_set_timeout(c, 1500);
    cudis_pool_release(p, c);
    kill(S.pid, SIGSTOP);
    uint64_t t0 = cudis_mono_ns();
    cr_assert_eq(cudis_rt_get(rt, 10, ids, rows, found), 0);
    double ms = (double)(cudis_mono_ns() - t0) / 1e6;
    kill(S.pid, SIGCONT);
    /* one 1.5 s timeout on the lookup, no second wait on the write-back
     * (two would take >= 3 s) */
    cr_assert(ms >= 1400 && ms < 3000, "took %.0f ms", ms);
    for (int i = 0; i < 10; i++) {
        cr_assert_eq(found[i], CUDIS_ROW_MISS);
        expect_row(rows + i * RB, ids[i]);
    }
    cudis_rt_destroy(rt);
    cudis_pool_destroy(p);
}
