/*
 * gpu_selftest.c - the GPU engine's correctness checks as one plain program
 * (no Criterion: the device machine may not have it), printing PASS/FAIL
 * per check.
 *
 *   gpu_selftest --host-sim [--seed N] [--ops N] [--threads N] [--budget B]
 *       The kernels' per-thread code (kernels/gpu_dev.h) on N host threads
 *       against the cpu engine: one long mixed stream (eviction, expiry,
 *       conditional writes, INCR/APPEND/SETRANGE, duplicate reads, value
 *       sizes small -> large -> small -> beyond a page), each side checked
 *       against its own model; with one thread the two must agree bit for
 *       bit. Both tables are audited at the end. Needs no device.
 *   gpu_selftest [--ops N] [--seed N]
 *       On a device: gold streams gpu vs cpu without eviction (bit for bit),
 *       the long stream gpu vs cpu with eviction (each against its model),
 *       the eviction model check, the device-pointer API round trip, and a
 *       full audit of the gpu table (E_FULL count, pages per class).
 *   gpu_selftest --small
 *       A short device run for compute-sanitizer.
 *
 * Exit status: 0 every check passed; 1 a check failed; 2 bad arguments;
 * 77 no usable device (device modes; the host simulation never skips).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccht.h"
#include "ccht_audit.h"
#include "ccht_geom.h"
#include "ccht_store.h"
#include "cudis_time.h"
#include "gk_checks.h"
#if CUDIS_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "gpu_engine.h"
#include "gpu_store.h"
#endif

static int failed;

static void report(const char *name, int rc, const char *msg)
{
    printf("%s %s%s%s\n", rc == 0 ? "PASS" : "FAIL", name, rc == 0 ? "" : ": ", rc ? msg : "");
    fflush(stdout);
    if (rc != 0) {
        failed++;
    }
}

/* Audit a table in host memory and report it. */
static void audit(const char *name, const ccht_table *T)
{
    ccht_audit a;
    int rc = ccht_audit_table(T, &a);
    ccht_audit_print(&a, stdout);
    report(name, rc, a.first_error);
}

/* The cpu engine's table (a gk_backend over ccht_store_ops). */
static const ccht_table *cpu_table(gk_backend *b)
{
    return ccht_table_of((const ccht *)gk_backend_store_handle(b));
}

static void long_stream(const char *name, gk_backend *a, gk_backend *ref, uint64_t seed,
                        uint64_t ops, bool exact)
{
    gk_long_opts o;
    gk_long_defaults(&o, seed, ops);
    o.exact = exact;
    gk_long_report r;
    char msg[1024] = "";
    uint64_t t0 = cudis_mono_ns();
    int rc = gk_long(a, ref, &o, &r, msg, sizeof(msg));
    double s = (double)(cudis_mono_ns() - t0) / 1e9;
    cudis_stats sa, sr;
    a->stats(a->ctx, &sa);
    ref->stats(ref->ctx, &sr);
    printf("# %s: seed %llu, %llu ops in %llu batches, %.1f s%s\n", name, (unsigned long long)seed,
           (unsigned long long)r.ops, (unsigned long long)r.batches, s,
           exact ? ", results compared bit for bit" : "");
    const gk_backend *be[2] = {a, ref};
    const cudis_stats *st[2] = {&sa, &sr};
    for (int k = 0; k < 2; k++) {
        printf("#   %-8s hits %llu, evictions seen %llu, evicted bucket %llu memory %llu expired "
               "%llu, %llu items, %llu/%llu bytes\n",
               be[k]->name, (unsigned long long)r.hits[k], (unsigned long long)r.evicted[k],
               (unsigned long long)st[k]->evict_bucket, (unsigned long long)st[k]->evict_memory,
               (unsigned long long)st[k]->evict_expired, (unsigned long long)st[k]->items,
               (unsigned long long)st[k]->bytes_used, (unsigned long long)st[k]->bytes_budget);
    }
    if (rc == 0 && (sa.evict_memory == 0 || sa.evict_expired == 0)) {
        snprintf(msg, sizeof(msg), "the stream must evict for memory and reclaim expired items");
        rc = -1;
    }
    if (rc == 0 && r.hits[0] == 0) {
        snprintf(msg, sizeof(msg), "no lookup ever hit");
        rc = -1;
    }
    report(name, rc, msg);
}

static void config(engine_config *cfg, uint64_t budget)
{
    gk_config(cfg, budget, 0);
    cfg->expected_item_bytes = 256;
}

static int host_sim(uint64_t seed, uint64_t ops, uint32_t threads, uint64_t budget)
{
    engine_config cfg;
    config(&cfg, budget);
    char why[512] = "";
    gk_backend sim, cpu;
    if (gk_backend_hostsim(&sim, &cfg, threads, why, sizeof(why)) != 0) {
        report("host_sim", -1, why);
        return 1;
    }
    if (gk_backend_store(&cpu, &ccht_store_ops, &cfg, why, sizeof(why)) != 0) {
        gk_backend_destroy(&sim);
        report("host_sim", -1, why);
        return 1;
    }
    printf("# host simulation of the kernels: %u thread(s), budget %llu bytes\n", threads,
           (unsigned long long)budget);
    long_stream("host_sim_vs_cpu", &sim, &cpu, seed, ops, threads == 1);
    audit("audit_host_sim", gk_hostsim_table(&sim));
    audit("audit_cpu", cpu_table(&cpu));
    gk_backend_destroy(&sim);
    gk_backend_destroy(&cpu);
    printf("%s: %d check(s) failed\n", failed ? "FAILED" : "OK", failed);
    return failed ? 1 : 0;
}

#if CUDIS_HAVE_CUDA
static void gold(const char *name, uint64_t seed, uint32_t batches, uint32_t batch_ops,
                 uint32_t n_keys, uint32_t max_val)
{
    engine_config cfg;
    gk_config(&cfg, 64ull << 20, 1u << 16);
    char why[512] = "";
    gk_backend gpu, cpu;
    if (gk_backend_store(&gpu, &gpu_store_ops, &cfg, why, sizeof(why)) != 0) {
        report(name, -1, why);
        return;
    }
    if (gk_backend_store(&cpu, &ccht_store_ops, &cfg, why, sizeof(why)) != 0) {
        gk_backend_destroy(&gpu);
        report(name, -1, why);
        return;
    }
    gk_stream_opts o = {.seed = seed,
                        .batches = batches,
                        .batch_ops = batch_ops,
                        .n_keys = n_keys,
                        .max_val = max_val,
                        .events = true};
    int rc = gk_gold(&gpu, &cpu, &o, why, sizeof(why));
    gk_backend_destroy(&gpu);
    gk_backend_destroy(&cpu);
    report(name, rc, why);
}

static void evict(const char *name, uint32_t batches, bool need_evictions)
{
    engine_config cfg;
    gk_config(&cfg, 1u << 20, 0);
    cfg.expected_item_bytes = 200;
    char why[512] = "";
    gk_backend gpu;
    if (gk_backend_store(&gpu, &gpu_store_ops, &cfg, why, sizeof(why)) != 0) {
        report(name, -1, why);
        return;
    }
    gk_stream_opts o = {
        .seed = 9, .batches = batches, .batch_ops = 512, .n_keys = 20000, .max_val = 1500};
    uint64_t ev = 0;
    int rc = gk_evict_model(&gpu, &o, &ev, why, sizeof(why));
    if (rc == 0 && need_evictions && ev == 0) {
        snprintf(why, sizeof(why), "no evictions although the stream exceeds the budget");
        rc = -1;
    }
    gk_backend_destroy(&gpu);
    report(name, rc, why);
}

/* The long stream on the device against the cpu engine, then the device
 * table audited on the host. */
static void device_long(uint64_t seed, uint64_t ops)
{
    engine_config cfg;
    config(&cfg, 16ull << 20);
    char why[512] = "";
    gk_backend gpu, cpu;
    if (gk_backend_store(&gpu, &gpu_store_ops, &cfg, why, sizeof(why)) != 0) {
        report("gpu_long_stream", -1, why);
        return;
    }
    if (gk_backend_store(&cpu, &ccht_store_ops, &cfg, why, sizeof(why)) != 0) {
        gk_backend_destroy(&gpu);
        report("gpu_long_stream", -1, why);
        return;
    }
    long_stream("gpu_long_stream", &gpu, &cpu, seed, ops, false);
    gpu_engine *g = gk_backend_store_handle(&gpu);
    ccht_geom geom;
    uint64_t bytes = gpu_engine_table_bytes(g, &geom);
    uint8_t *img = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (img == NULL || gpu_engine_table_image(g, img, bytes) != 0) {
        report("audit_gpu", -1, "could not copy the device table to the host");
    } else {
        ccht_table T;
        ccht_geom_bind(&geom, &T, img, cfg.max_key_len, cfg.max_val_len, true, cfg.seed);
        audit("audit_gpu", &T);
    }
    free(img);
    audit("audit_cpu", cpu_table(&cpu));
    gk_backend_destroy(&gpu);
    gk_backend_destroy(&cpu);
}

static void device_api(const char *name, uint32_t n)
{
    engine_config cfg;
    gk_config(&cfg, 64ull << 20, 0);
    char why[512] = "";
    gpu_engine *g = gpu_engine_create(&cfg, why, sizeof(why));
    if (g == NULL) {
        report(name, -1, why);
        return;
    }
    const uint32_t vl = 24;
    uint64_t *keys = malloc((size_t)n * 8);
    uint8_t *vals = malloc((size_t)n * vl), *back = malloc((size_t)n * vl);
    uint32_t *lens = malloc((size_t)n * 4);
    void *dk = NULL, *dv = NULL, *db = NULL, *dl = NULL, *dm = NULL, *dn = NULL;
    int rc = -1;
    for (uint32_t i = 0; i < n; i++) {
        keys[i] = 0x1234567ull * i + 99;
        for (uint32_t j = 0; j < vl; j++) {
            vals[(size_t)i * vl + j] = (uint8_t)(i * 7 + j);
        }
    }
    if (cudaMalloc(&dk, (size_t)n * 8) != cudaSuccess ||
        cudaMalloc(&dv, (size_t)n * vl) != cudaSuccess ||
        cudaMalloc(&db, (size_t)n * vl) != cudaSuccess ||
        cudaMalloc(&dl, (size_t)n * 4) != cudaSuccess ||
        cudaMalloc(&dm, (size_t)n * 4) != cudaSuccess || cudaMalloc(&dn, 4) != cudaSuccess) {
        snprintf(why, sizeof(why), "cudaMalloc failed");
        goto out;
    }
    cudaMemcpy(dk, keys, (size_t)n * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(dv, vals, (size_t)n * vl, cudaMemcpyHostToDevice);
    if (gpu_engine_set_dev(g, dk, 8, n / 2, dv, vl, 0, NULL, 1, NULL) != 0 ||
        gpu_engine_get_dev(g, dk, 8, n, db, vl, dl, dm, dn, 1, NULL) != 0 ||
        gpu_engine_sync(g) != 0) {
        snprintf(why, sizeof(why), "device API call failed");
        goto out;
    }
    uint32_t nmiss = 0;
    cudaMemcpy(&nmiss, dn, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(lens, dl, (size_t)n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(back, db, (size_t)n * vl, cudaMemcpyDeviceToHost);
    if (nmiss != n - n / 2) {
        snprintf(why, sizeof(why), "%u misses, expected %u", nmiss, n - n / 2);
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        bool ok = i < n / 2 ? lens[i] == vl &&
                                  memcmp(back + (size_t)i * vl, vals + (size_t)i * vl, vl) == 0
                            : lens[i] == GPU_DEV_MISS;
        if (!ok) {
            snprintf(why, sizeof(why), "row %u wrong (len %u)", i, lens[i]);
            goto out;
        }
    }
    rc = 0;
out:
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
    gpu_engine_destroy(g);
    report(name, rc, why);
}

static int device(bool small, uint64_t seed, uint64_t ops)
{
    char why[512] = "";
    if (gpu_engine_probe(-1, why, sizeof(why)) != 0) {
        printf("SKIPPED: no usable GPU: %s\n", why);
        return 77;
    }
    printf("# %s\n", why);
    if (small) {
        gold("gold_small", 1, 12, 64, 100, 40);
        device_api("device_api_small", 1000);
        evict("evict_small", 6, false);
    } else {
        gold("gold_small_batches", 101, 300, 32, 200, 40);
        gold("gold_large_batches", 202, 200, 4096, 5000, 100);
        gold("gold_hot_keys", 303, 300, 256, 40, 300);
        device_long(seed, ops);
        device_api("device_api", 100000);
        evict("evict_model", 60, true);
    }
    printf("%s: %d check(s) failed\n", failed ? "FAILED" : "OK", failed);
    return failed ? 1 : 0;
}
#endif

static int usage(void)
{
    fprintf(stderr, "usage: gpu_selftest [--small] [--host-sim] [--seed N] [--ops N] "
                    "[--threads N] [--budget BYTES]\n");
    return 2;
}

int main(int argc, char **argv)
{
    bool small = false, sim = false;
    uint64_t seed = 1, ops = 1000000, budget = 8ull << 20;
    uint32_t threads = 4;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (strcmp(a, "--small") == 0) {
            small = true;
        } else if (strcmp(a, "--host-sim") == 0) {
            sim = true;
        } else if (strcmp(a, "--seed") == 0 && more) {
            seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(a, "--ops") == 0 && more) {
            ops = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(a, "--threads") == 0 && more) {
            threads = (uint32_t)strtoul(argv[++i], NULL, 0);
        } else if (strcmp(a, "--budget") == 0 && more) {
            budget = strtoull(argv[++i], NULL, 0);
        } else {
            return usage();
        }
    }
    if (threads < 1 || threads > 64 || ops == 0) {
        return usage();
    }
    if (sim) {
        return host_sim(seed, ops, threads, budget);
    }
#if CUDIS_HAVE_CUDA
    return device(small, seed, ops);
#else
    (void)small;
    printf("SKIPPED: this build has no CUDA engine (nvcc not found at build time)\n");
    return 77;
#endif
}
