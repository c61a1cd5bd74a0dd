/*
 * gpu_selftest.c - the GPU engine's correctness checks as one plain program
 * (no Criterion: the device machine may not have it). Runs the gold test
 * (gpu against cpu on random streams), the eviction model check, the
 * device-pointer API round trip and the host-side simulation, printing
 * PASS/FAIL per check. --small runs a short stream for compute-sanitizer.
 * Exit status: 0 all passed, 1 a check failed, 0 with "SKIPPED" when no
 * usable GPU is present.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "ccht_store.h"
#include "gk_checks.h"
#include "gpu_engine.h"
#include "gpu_store.h"

static int failed;

static void report(const char *name, int rc, const char *msg)
{
    printf("%s %s%s%s\n", rc == 0 ? "PASS" : "FAIL", name, rc == 0 ? "" : ": ", rc ? msg : "");
    fflush(stdout);
    if (rc != 0) {
        failed++;
    }
}

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
                        .max_val = max_val};
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
        cudaDeviceSynchronize() != cudaSuccess) {
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

int main(int argc, char **argv)
{
    int small = argc > 1 && strcmp(argv[1], "--small") == 0;
    char why[512] = "";
    if (gpu_engine_probe(-1, why, sizeof(why)) != 0) {
        printf("SKIPPED: no usable GPU: %s\n", why);
        return 0;
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
        device_api("device_api", 100000);
        evict("evict_model", 60, true);
    }
    printf("%s: %d check(s) failed\n", failed ? "FAILED" : "OK", failed);
    return failed ? 1 : 0;
}
