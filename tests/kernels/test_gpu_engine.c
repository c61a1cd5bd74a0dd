/*
 * test_gpu_engine.c - the GPU engine on a real device (label gpu): host
 * batches, the device-pointer API, the multi-threaded pipeline, eviction
 * under a budget, whole-keyspace operations and INFO. Each test reports
 * itself skipped, with the reason, where no usable GPU is present.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "engine.h"
#include "gk_checks.h"
#include "gpu_engine.h"
#include "gpu_store.h"

#define NOW 1700000000000ll

static gpu_engine *open_or_skip(uint64_t memory, uint64_t max_items)
{
    char why[256] = "";
    if (gpu_engine_probe(-1, why, sizeof(why)) != 0) {
        cr_skip_test("no usable GPU: %s", why);
    }
    engine_config c;
    gk_config(&c, memory, max_items);
    gpu_engine *g = gpu_engine_create(&c, why, sizeof(why));
    cr_assert_not_null(g, "create: %s", why);
    return g;
}

/* A one-op batch helper. */
typedef struct one {
    cudis_op op;
    cudis_result res;
    uint8_t in[512];
    uint8_t out[512];
} one;

static cudis_result run1(gpu_engine *g, one *o, uint8_t code, uint16_t flags, const char *key,
                         const char *val, int64_t arg, int64_t exp, int64_t now)
{
    memset(o, 0, sizeof(*o));
    uint32_t kl = (uint32_t)strlen(key), vl = val ? (uint32_t)strlen(val) : 0;
    memcpy(o->in, key, kl);
    if (vl) {
        memcpy(o->in + kl, val, vl);
    }
    o->op.code = code;
    o->op.flags = flags;
    o->op.key_len = kl;
    o->op.val_off = kl;
    o->op.val_len = vl;
    o->op.arg = arg;
    o->op.expire_ms = exp;
    cudis_batch b = {.ops = &o->op,
                     .n_ops = 1,
                     .in = o->in,
                     .res = &o->res,
                     .out = o->out,
                     .out_cap = sizeof(o->out),
                     .now_ms = now};
    cr_assert_eq(gpu_engine_execute(g, &b), 0);
    return o->res;
}

Test(gpu_engine, basic_ops)
{
    gpu_engine *g = open_or_skip(16u << 20, 0);
    one o;
    cudis_result r = run1(g, &o, CUDIS_OP_GET, 0, "a", NULL, 0, 0, NOW);
    cr_assert_eq(r.flags & CUDIS_R_FOUND, 0);
    r = run1(g, &o, CUDIS_OP_SET, 0, "a", "hello", 0, 0, NOW);
    cr_assert_eq(r.status, 0);
    cr_assert(r.flags & CUDIS_R_DONE);
    r = run1(g, &o, CUDIS_OP_GET, 0, "a", NULL, 0, 0, NOW);
    cr_assert(r.flags & CUDIS_R_VALUE);
    cr_assert_eq(r.val_len, 5);
    cr_assert_eq(memcmp(o.out + r.val_off, "hello", 5), 0);
    r = run1(g, &o, CUDIS_OP_APPEND, 0, "a", " world", 0, 0, NOW);
    cr_assert_eq(r.num, 11);
    r = run1(g, &o, CUDIS_OP_GET, 0, "a", NULL, 0, 0, NOW);
    cr_assert_eq(memcmp(o.out + r.val_off, "hello world", 11), 0);
    r = run1(g, &o, CUDIS_OP_INCRBY, 0, "n", NULL, 41, 0, NOW);
    cr_assert_eq(r.num, 41);
    r = run1(g, &o, CUDIS_OP_INCRBY, 0, "n", NULL, 1, 0, NOW);
    cr_assert_eq(r.num, 42);
    r = run1(g, &o, CUDIS_OP_INCRBY, 0, "a", NULL, 1, 0, NOW);
    cr_assert_eq(r.status, CUDIS_E_NOTINT);
    r = run1(g, &o, CUDIS_OP_EXPIRE, 0, "a", NULL, 0, NOW + 100, NOW);
    cr_assert(r.flags & CUDIS_R_DONE);
    r = run1(g, &o, CUDIS_OP_TTL, 0, "a", NULL, 0, 0, NOW);
    cr_assert_eq(r.num, NOW + 100);
    r = run1(g, &o, CUDIS_OP_GET, 0, "a", NULL, 0, 0, NOW + 100);
    cr_assert_eq(r.flags & CUDIS_R_FOUND, 0, "expired at its expiry time");
    r = run1(g, &o, CUDIS_OP_DEL, 0, "n", NULL, 0, 0, NOW);
    cr_assert(r.flags & CUDIS_R_DONE);
    r = run1(g, &o, CUDIS_OP_EXISTS, 0, "n", NULL, 0, 0, NOW);
    cr_assert_eq(r.flags & CUDIS_R_FOUND, 0);
    char info[4096];
    size_t n = gpu_engine_info(g, info, sizeof(info));
    cr_assert_gt(n, 0);
    cr_assert_not_null(strstr(info, "gpu_device:"));
    cr_assert_not_null(strstr(info, "gpu_kernel_us_per_batch:"));
    gpu_engine_destroy(g);
}

Test(gpu_engine, out_buffer_too_small)
{
    gpu_engine *g = open_or_skip(16u << 20, 0);
    one o;
    run1(g, &o, CUDIS_OP_SET, 0, "k", "0123456789", 0, 0, NOW);
    memset(&o.op, 0, sizeof(o.op));
    memcpy(o.in, "k", 1);
    o.op.code = CUDIS_OP_GET;
    o.op.key_len = 1;
    cudis_batch b = {.ops = &o.op,
                     .n_ops = 1,
                     .in = o.in,
                     .res = &o.res,
                     .out = o.out,
                     .out_cap = 4,
                     .now_ms = NOW};
    cr_assert_eq(gpu_engine_execute(g, &b), 0);
    cr_assert_eq(o.res.status, CUDIS_E_OUTBUF);
    cr_assert_eq(o.res.val_len, 10);
    gpu_engine_destroy(g);
}

Test(gpu_engine, device_pointer_api)
{
    gpu_engine *g = open_or_skip(64u << 20, 0);
    const uint32_t n = 20000, vl = 32;
    uint64_t *keys = malloc(n * 8);
    uint8_t *vals = malloc((size_t)n * vl), *back = malloc((size_t)n * vl);
    uint32_t *lens = malloc(n * 4);
    for (uint32_t i = 0; i < n; i++) {
        keys[i] = i * 2654435761ull + 1;
        for (uint32_t j = 0; j < vl; j++) {
            vals[(size_t)i * vl + j] = (uint8_t)(i + j);
        }
    }
    void *dk, *dv, *db, *dl, *dm, *dn;
    cr_assert_eq(cudaMalloc(&dk, n * 8), cudaSuccess);
    cr_assert_eq(cudaMalloc(&dv, (size_t)n * vl), cudaSuccess);
    cr_assert_eq(cudaMalloc(&db, (size_t)n * vl), cudaSuccess);
    cr_assert_eq(cudaMalloc(&dl, n * 4), cudaSuccess);
    cr_assert_eq(cudaMalloc(&dm, n * 4), cudaSuccess);
    cr_assert_eq(cudaMalloc(&dn, 4), cudaSuccess);
    cudaMemcpy(dk, keys, n * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(dv, vals, (size_t)n * vl, cudaMemcpyHostToDevice);
    /* set the first half, get all */
    cr_assert_eq(gpu_engine_set_dev(g, dk, 8, n / 2, dv, vl, 0, NULL, NOW, NULL), 0);
    cr_assert_eq(gpu_engine_get_dev(g, dk, 8, n, db, vl, dl, dm, dn, NOW, NULL), 0);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    uint32_t nmiss = 0;
    cudaMemcpy(&nmiss, dn, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(lens, dl, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(back, db, (size_t)n * vl, cudaMemcpyDeviceToHost);
    cr_assert_eq(nmiss, n - n / 2, "misses %u", nmiss);
    for (uint32_t i = 0; i < n; i++) {
        if (i < n / 2) {
            cr_assert_eq(lens[i], vl, "key %u: len %u", i, lens[i]);
            cr_assert_eq(memcmp(back + (size_t)i * vl, vals + (size_t)i * vl, vl), 0);
        } else {
            cr_assert_eq(lens[i], GPU_DEV_MISS);
        }
    }
    /* the miss list names exactly the second half */
    uint32_t *miss = malloc(n * 4);
    cudaMemcpy(miss, dm, nmiss * 4, cudaMemcpyDeviceToHost);
    uint8_t *seen = calloc(n, 1);
    for (uint32_t i = 0; i < nmiss; i++) {
        cr_assert_geq(miss[i], n / 2);
        cr_assert_lt(miss[i], n);
        cr_assert_eq(seen[miss[i]], 0);
        seen[miss[i]] = 1;
    }
    /* host batches see what the device API wrote */
    one o;
    memset(&o, 0, sizeof(o));
    memcpy(o.in, &keys[3], 8);
    o.op.code = CUDIS_OP_GET;
    o.op.key_len = 8;
    cudis_batch b = {.ops = &o.op,
                     .n_ops = 1,
                     .in = o.in,
                     .res = &o.res,
                     .out = o.out,
                     .out_cap = sizeof(o.out),
                     .now_ms = NOW};
    cr_assert_eq(gpu_engine_execute(g, &b), 0);
    cr_assert_eq(o.res.val_len, vl);
    cr_assert_eq(memcmp(o.out + o.res.val_off, vals + 3 * vl, vl), 0);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(db);
    cudaFree(dl);
    cudaFree(dm);
    cudaFree(dn);
    free(keys);
    free(vals);
    free(back);
    free(lens);
    free(miss);
    free(seen);
    gpu_engine_destroy(g);
}

typedef struct pipe_arg {
    gpu_engine *g;
    int id;
    int errors;
} pipe_arg;

static void *pipe_thread(void *p)
{
    pipe_arg *a = p;
    enum { N = 256 };
    cudis_op *ops = calloc(N, sizeof(cudis_op));
    cudis_result *res = calloc(N, sizeof(cudis_result));
    uint8_t *in = malloc(N * 64), *out = malloc(N * 64);
    for (int round = 0; round < 30; round++) {
        for (int pass = 0; pass < 2; pass++) {
            uint64_t at = 0;
            for (int i = 0; i < N; i++) {
                int kl = snprintf((char *)in + at, 32, "t%d:%d", a->id, i);
                ops[i] = (cudis_op){.code = pass ? CUDIS_OP_GET : CUDIS_OP_SET,
                                    .key_off = at,
                                    .key_len = (uint32_t)kl};
                at += (uint64_t)kl;
                if (!pass) {
                    int vl = snprintf((char *)in + at, 32, "v%d:%d:%d", a->id, i, round);
                    ops[i].val_off = at;
                    ops[i].val_len = (uint32_t)vl;
                    at += (uint64_t)vl;
                }
            }
            cudis_batch b = {.ops = ops,
                             .n_ops = N,
                             .in = in,
                             .res = res,
                             .out = out,
                             .out_cap = N * 64,
                             .now_ms = NOW};
            if (gpu_engine_execute(a->g, &b) != 0) {
                a->errors++;
                continue;
            }
            for (int i = 0; pass && i < N; i++) {
                char want[32];
                int wl = snprintf(want, sizeof(want), "v%d:%d:%d", a->id, i, round);
                if (!(res[i].flags & CUDIS_R_VALUE) || res[i].val_len != (uint32_t)wl ||
                    memcmp(out + res[i].val_off, want, (size_t)wl) != 0) {
                    a->errors++;
                }
            }
        }
    }
    free(ops);
    free(res);
    free(in);
    free(out);
    return NULL;
}

Test(gpu_engine, pipeline_threads)
{
    gpu_engine *g = open_or_skip(64u << 20, 0);
    pthread_t th[4];
    pipe_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (pipe_arg){.g = g, .id = i, .errors = 0};
        pthread_create(&th[i], NULL, pipe_thread, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(a[i].errors, 0, "thread %d saw %d wrong results", i, a[i].errors);
    }
    cudis_stats st;
    gpu_engine_stats(g, &st);
    cr_assert_eq(st.items, 4 * 256);
    gpu_engine_destroy(g);
}

Test(gpu_engine, eviction_under_budget)
{
    char why[256] = "";
    if (gpu_engine_probe(-1, why, sizeof(why)) != 0) {
        cr_skip_test("no usable GPU: %s", why);
    }
    engine_config c;
    gk_config(&c, 1u << 20, 0);
    c.expected_item_bytes = 200;
    gk_backend gb;
    cr_assert_eq(gk_backend_store(&gb, &gpu_store_ops, &c, why, sizeof(why)), 0, "%s", why);
    gk_stream_opts o = {
        .seed = 5, .batches = 60, .batch_ops = 512, .n_keys = 20000, .max_val = 1500};
    char msg[512] = "";
    uint64_t ev = 0;
    int rc = gk_evict_model(&gb, &o, &ev, msg, sizeof(msg));
    gk_backend_destroy(&gb);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_assert_gt(ev, 0);
}

static int count_key(void *arg, uint8_t db, const uint8_t *key, uint32_t len, int64_t exp)
{
    (void)db;
    (void)key;
    (void)len;
    (void)exp;
    (*(int *)arg)++;
    return 0;
}

Test(gpu_engine, scan_sweep_flush)
{
    gpu_engine *g = open_or_skip(16u << 20, 0);
    one o;
    for (int i = 0; i < 500; i++) {
        char k[32];
        snprintf(k, sizeof(k), "s%d", i);
        run1(g, &o, CUDIS_OP_SET, 0, k, "v", 0, i % 2 ? NOW + 10 : 0, NOW);
    }
    int n = 0;
    uint64_t cur = 0;
    do {
        cr_assert_eq(gpu_engine_scan(g, CUDIS_DB_ALL, cur, 100, NOW, count_key, &n, &cur), 0);
    } while (cur != 0);
    cr_assert_eq(n, 500);
    n = 0;
    do {
        cr_assert_eq(gpu_engine_scan(g, CUDIS_DB_ALL, cur, 1000, NOW + 20, count_key, &n, &cur), 0);
    } while (cur != 0);
    cr_assert_eq(n, 250, "expired keys are not reported");
    int reclaimed = 0;
    for (int i = 0; i < 1000; i++) {
        int r = gpu_engine_sweep(g, NOW + 20, 1u << 20, NULL);
        cr_assert_geq(r, 0);
        reclaimed += r;
        if (r == 0 && reclaimed > 0) {
            break;
        }
    }
    cr_assert_eq(reclaimed, 250);
    uint8_t kb[64];
    uint32_t kl = 0;
    cr_assert_eq(gpu_engine_random_key(g, 0, NOW + 20, kb, sizeof(kb), &kl), 1);
    cr_assert_eq(gpu_engine_flush(g, CUDIS_DB_ALL), 0);
    cudis_stats st;
    gpu_engine_stats(g, &st);
    cr_assert_eq(st.items, 0);
    cr_assert_eq(gpu_engine_random_key(g, 0, NOW, kb, sizeof(kb), &kl), 0);
    gpu_engine_destroy(g);
}

Test(gpu_engine, submit_complete_pipeline)
{
    gpu_engine *g = open_or_skip(16u << 20, 0);
    enum { B = 4, N = 64 };
    cudis_op ops[B][N];
    cudis_result res[B][N];
    uint8_t in[B][N * 16], out[B][N * 16];
    cudis_batch bt[B];
    gpu_pending *p[B];
    for (int k = 0; k < B; k++) {
        uint64_t at = 0;
        for (int i = 0; i < N; i++) {
            int kl = snprintf((char *)in[k] + at, 8, "p%d", i);
            /* batch 0 writes, later batches read what it wrote */
            ops[k][i] = (cudis_op){.code = k == 0 ? CUDIS_OP_SET : CUDIS_OP_GET,
                                   .key_off = at,
                                   .key_len = (uint32_t)kl};
            at += (uint64_t)kl;
            if (k == 0) {
                int vl = snprintf((char *)in[k] + at, 8, "v%d", i);
                ops[k][i].val_off = at;
                ops[k][i].val_len = (uint32_t)vl;
                at += (uint64_t)vl;
            }
        }
        bt[k] = (cudis_batch){.ops = ops[k],
                              .n_ops = N,
                              .in = in[k],
                              .res = res[k],
                              .out = out[k],
                              .out_cap = sizeof(out[k]),
                              .now_ms = NOW};
    }
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(gpu_engine_submit(g, &bt[k], &p[k]), 0);
    }
    cr_assert_eq(gpu_engine_submit(g, &bt[3], &p[3]), CUDIS_E_BUSY, "3 slots only");
    for (int k = 2; k >= 0; k--) { /* completion order is free */
        cr_assert_eq(gpu_engine_complete(g, p[k]), 0);
    }
    cr_assert_eq(gpu_engine_submit(g, &bt[3], &p[3]), 0);
    cr_assert_eq(gpu_engine_complete(g, p[3]), 0);
    for (int k = 1; k < B; k++) {
        for (int i = 0; i < N; i++) {
            char want[8];
            int wl = snprintf(want, sizeof(want), "v%d", i);
            cr_assert(res[k][i].flags & CUDIS_R_VALUE, "batch %d op %d: kernels ran in order", k,
                      i);
            cr_assert_eq(res[k][i].val_len, (uint32_t)wl);
            cr_assert_eq(memcmp(out[k] + res[k][i].val_off, want, (size_t)wl), 0);
        }
    }
    gpu_engine_destroy(g);
}

/* ------------------------------------------------------------------------
 * Device faults (gpu_engine_inject_fault)
 * ---------------------------------------------------------------------- */

/* A batch of one SET; returns engine_execute's / gpu_engine_execute's rc. */
static int set_one(gpu_engine *g, const char *key)
{
    one o;
    memset(&o, 0, sizeof(o));
    uint32_t kl = (uint32_t)strlen(key);
    memcpy(o.in, key, kl);
    o.op = (cudis_op){.code = CUDIS_OP_SET, .key_len = kl, .val_off = kl, .val_len = 0};
    cudis_batch b = {.ops = &o.op, .n_ops = 1, .in = o.in, .res = &o.res, .now_ms = NOW};
    return gpu_engine_execute(g, &b);
}

/* A CUDA call failing as a sticky error would: the engine fails, says why,
 * and every later call returns CUDIS_E_DEVFAIL at once. */
Test(gpu_engine, injected_cuda_error_fails_the_engine)
{
    gpu_engine *g = open_or_skip(16u << 20, 0);
    cr_assert_eq(set_one(g, "before"), 0);
    cr_assert_null(gpu_engine_failure(g));
    gpu_engine_inject_fault(2, 0);
    int rc = 0;
    for (int i = 0; i < 10 && rc == 0; i++) {
        rc = set_one(g, "during");
    }
    gpu_engine_inject_fault(0, 0);
    cr_assert_eq(rc, CUDIS_E_DEVFAIL);
    cr_assert_not_null(gpu_engine_failure(g));
    cr_assert_eq(set_one(g, "after"), CUDIS_E_DEVFAIL);
    cr_assert_eq(gpu_engine_flush(g, CUDIS_DB_ALL), CUDIS_E_DEVFAIL);
    char info[4096];
    gpu_engine_info(g, info, sizeof(info));
    cr_assert_neq(strstr(info, "gpu_failed:1\r\n"), NULL, "%s", info);
    gpu_engine_destroy(g);
}

/* A launch that never finishes (a hung kernel, simulated): the watchdog
 * fails the engine; nothing waits for ever. */
Test(gpu_engine, watchdog_ends_a_hung_launch, .timeout = 60)
{
    char why[256] = "";
    if (gpu_engine_probe(-1, why, sizeof(why)) != 0) {
        cr_skip_test("no usable GPU: %s", why);
    }
    engine_config c;
    gk_config(&c, 16u << 20, 0);
    c.watchdog_ms = 300;
    gpu_engine *g = gpu_engine_create(&c, why, sizeof(why));
    cr_assert_not_null(g, "%s", why);
    cr_assert_eq(set_one(g, "before"), 0);
    gpu_engine_inject_fault(0, 1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(set_one(g, "hung"), CUDIS_E_DEVFAIL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    gpu_engine_inject_fault(0, 0);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_lt(s, 5.0, "the watchdog took %.1f s", s);
    cr_assert_neq(strstr(gpu_engine_failure(g), "watchdog"), NULL, "%s", gpu_engine_failure(g));
    gpu_engine_destroy(g);
}

/* Under auto, a device fault switches to a fresh cpu engine and the batch
 * that met it still gets its results. */
Test(gpu_engine, auto_fails_over_to_cpu)
{
    char why[256] = "";
    if (gpu_engine_probe(-1, why, sizeof(why)) != 0) {
        cr_skip_test("no usable GPU: %s", why);
    }
    engine_config c;
    gk_config(&c, 16u << 20, 0);
    engine *e = engine_create("auto", &c, why, sizeof(why));
    cr_assert_not_null(e, "%s", why);
    cr_assert_str_eq(engine_name(e), "gpu");
    one o;
    memset(&o, 0, sizeof(o));
    memcpy(o.in, "kv", 2);
    o.op = (cudis_op){.code = CUDIS_OP_SET, .key_len = 1, .val_off = 1, .val_len = 1};
    cudis_batch b = {.ops = &o.op, .n_ops = 1, .in = o.in, .res = &o.res, .now_ms = NOW};
    gpu_engine_inject_fault(1, 0);
    cr_assert_eq(engine_execute(e, &b), CUDIS_OK);
    gpu_engine_inject_fault(0, 0);
    cr_assert_eq(o.res.status, CUDIS_OK);
    cr_assert_str_eq(engine_name(e), "cpu");
    cr_assert_eq(engine_failovers(e), 1);
    cr_assert_not_null(engine_failure(e));
    engine_destroy(e);
}
