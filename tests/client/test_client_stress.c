/*
 * test_client_stress.c - threads on the pool and the read-through cache at
 * once, against a real server: 4 threads write and read back their own rows
 * through a 3-connection pool while 4 threads share one cudis_rt in AUTO
 * mode (small window, so the mode flips while the worker fills in the
 * background). Checks every row. A plain program (no Criterion), so it also
 * runs under TSan, where Criterion 2.4 cannot start (Snaipe/Criterion#274).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudis.h"
#include "srv.h"

#define RB 48
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static srv S;
static cudis_pool *P;
static cudis_table *T, *T2;
static cudis_rt *RT;

static uint8_t val(uint64_t id, size_t j)
{
    return (uint8_t)(id * 13 + j * 3);
}

static int loader(void *arg, size_t n, const uint64_t *ids, void *rows)
{
    (void)arg;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < RB; j++) {
            ((uint8_t *)rows)[i * RB + j] = val(ids[i], j);
        }
    }
    return 0;
}

static void *writer(void *arg)
{
    uint64_t tid = (uint64_t)(uintptr_t)arg;
    uint64_t ids[100];
    uint8_t rows[100 * RB], out[100 * RB], found[100];
    for (int it = 0; it < 60; it++) {
        for (int i = 0; i < 100; i++) {
            ids[i] = tid << 40 | (uint64_t)(it * 100 + i);
            for (size_t j = 0; j < RB; j++) {
                rows[i * RB + j] = val(ids[i] + (uint64_t)it, j);
            }
        }
        cudis_conn *c;
        CHECK(cudis_pool_acquire(P, 20000, &c) == 0);
        int rc = cudis_vset(c, T2, 100, ids, rows, it % 2 ? 60000 : 0, NULL, NULL);
        if (rc) {
            fprintf(stderr, "vset: %s\n", cudis_conn_errstr(c));
        }
        CHECK(rc == 0);
        cudis_vresult vr;
        CHECK(cudis_vget(c, T2, 100, ids, out, found, &vr) == 0);
        CHECK(vr.hits == 100);
        CHECK(memcmp(rows, out, sizeof(rows)) == 0);
        cudis_pool_release(P, c);
    }
    return NULL;
}

static void *reader(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 7717u + 3;
    uint64_t ids[128];
    uint8_t rows[128 * RB], found[128];
    for (int it = 0; it < 150; it++) {
        /* hot set + a drifting cold tail: the hit ratio moves around */
        for (int i = 0; i < 128; i++) {
            ids[i] = (rand_r(&seed) % 4) ? (uint64_t)(rand_r(&seed) % 300)
                                         : (uint64_t)(1000 + it * 50 + rand_r(&seed) % 400);
        }
        CHECK(cudis_rt_get(RT, 128, ids, rows, found) == 0);
        for (int i = 0; i < 128; i++) {
            CHECK(found[i] == CUDIS_ROW_HIT || found[i] == CUDIS_ROW_MISS);
            bool real = true, zero = true;
            for (size_t j = 0; j < RB; j++) {
                real &= rows[i * RB + j] == val(ids[i], j);
                zero &= rows[i * RB + j] == 0;
            }
            CHECK(real || (found[i] == CUDIS_ROW_MISS && zero));
        }
        if (it % 10 == 0) {
            cudis_rt_stats st;
            cudis_rt_stats_get(RT, &st);
            CHECK(st.hits + st.misses == st.ids);
        }
    }
    return NULL;
}

static void stop_server(void)
{
    srv_stop(&S); /* also when a CHECK exits */
}

int main(void)
{
    CHECK(srv_start(&S, NULL, NULL) == 0);
    atexit(stop_server);
    cudis_options o;
    cudis_options_default(&o);
    o.port = S.port;
    o.timeout_ms = 5000;
    P = cudis_pool_create(&o, 3, NULL, 0);
    T = cudis_table_create("st", RB, NULL);
    cudis_table_options to;
    cudis_table_options_default(&to);
    to.chunk_rows = 16;
    T2 = cudis_table_create("st2", RB, &to);
    cudis_rt_options ro;
    cudis_rt_options_default(&ro);
    ro.window_ids = 600;
    ro.hit_threshold = 0.75;
    ro.pool_wait_ms = 20000; /* 9 threads share 3 connections on a possibly loaded machine */
    RT = cudis_rt_create(P, T, loader, NULL, &ro, NULL, 0);
    CHECK(P && T && T2 && RT);
    pthread_t th[8];
    for (uintptr_t i = 0; i < 8; i++) {
        CHECK(pthread_create(&th[i], NULL, i < 4 ? writer : reader, (void *)i) == 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
    }
    cudis_rt_flush(RT);
    cudis_rt_stats st;
    cudis_rt_stats_get(RT, &st);
    printf(
        "rt: %llu calls, hit ratio %.3f, %llu sync + %llu async fills, %llu defaulted, %llu mode "
        "switches, %llu write-back errors\n",
        (unsigned long long)st.calls, (double)st.hits / (double)st.ids,
        (unsigned long long)st.filled_sync, (unsigned long long)st.filled_async,
        (unsigned long long)st.defaulted, (unsigned long long)st.mode_switches,
        (unsigned long long)st.writeback_errors);
    CHECK(st.calls == 600);
    CHECK(st.writeback_errors == 0);
    CHECK(st.mode_switches >= 1);
    cudis_rt_destroy(RT);
    cudis_table_destroy(T);
    cudis_table_destroy(T2);
    cudis_pool_destroy(P);
    srv_stop(&S);
    printf("ok\n");
    return 0;
}
