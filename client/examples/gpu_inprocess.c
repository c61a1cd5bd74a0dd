/*
 * gpu_inprocess.c - the in-process GPU path: an inference process links the
 * GPU engine (kernels/gpu_engine.h) directly, keeps its ids in device
 * memory, and gets embedding rows back in device memory plus the list of
 * misses - no server, no host round trip for the rows.
 *
 * Steps: probe the GPU (none: say why, exit 0); create an engine; store the
 * rows of ids 0..loaded-1 (64 floats each); then run `requests` lookups of
 * `batch` ids drawn Zipf(1.2) over 1.25 x loaded ids (so some miss), each:
 * ids to the device, gpu_engine_get_dev on a stream, synchronise; the miss
 * list drives a "loader" whose rows are written back with
 * gpu_engine_set_dev. Rows and miss lists are checked against the truth.
 * Prints p50/p99 lookup latency and rows/s.
 *
 * Keys on this path are the raw 8 bytes of each uint64 id as it sits in
 * device memory: an in-process engine has its own keyspace, so the client
 * library's "<table>:" prefix scheme is not needed here.
 *
 * Usage: cudis-gpu-inprocess [--loaded 200000] [--requests 500] [--batch 1000]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cudis_time.h"
#include "gpu_engine.h"

#define DIM 64
#define ROWB (DIM * sizeof(float))

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define CKE(call)                                                                                  \
    do {                                                                                           \
        int r_ = (call);                                                                           \
        if (r_ != 0) {                                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudis_strerror(r_));     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static float truth(uint64_t id, size_t j)
{
    return (float)(id % 1000003) * 0.25f + (float)j;
}

static void make_rows(size_t n, const uint64_t *ids, float *rows)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < DIM; j++) {
            rows[i * DIM + j] = truth(ids[i], j);
        }
    }
}

static uint64_t rs = 0x2545f4914f6cdd1dull;
static double urand(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) * (1.0 / 9007199254740992.0);
}

/* Zipf(s) rank in [1, n] by inverse transform on the continuous bound
 * (approximate, fine for a workload generator). */
static uint64_t zipf_approx(uint64_t n, double s)
{
    double u = urand();
    double a = 1 - s, hn = (pow((double)n + 0.5, a) - pow(0.5, a)) / a;
    double x = pow(u * hn * a + pow(0.5, a), 1 / a);
    uint64_t k = (uint64_t)(x + 0.5);
    return k < 1 ? 1 : (k > n ? n : k);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t loaded = 200000, requests = 500, batch = 1000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--loaded")) {
            loaded = strtoull(argv[i + 1], NULL, 10);
        } else if (!strcmp(argv[i], "--requests")) {
            requests = strtoull(argv[i + 1], NULL, 10);
        } else if (!strcmp(argv[i], "--batch")) {
            batch = strtoull(argv[i + 1], NULL, 10);
        }
    }
    if (loaded == 0 || batch == 0) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    char why[256] = "";
    int rc = gpu_engine_probe(-1, why, sizeof(why));
    if (rc != 0) {
        printf("gpu_inprocess: no usable GPU (%s): %s; nothing to do\n", cudis_strerror(rc), why);
        return 0;
    }
    engine_config cfg;
    memset(&cfg, 0, sizeof(cfg)); /* zeros = defaults (engine_store.h) */
    cfg.memory_bytes = 512ull << 20;
    cfg.device = -1;
    gpu_engine *g = gpu_engine_create(&cfg, why, sizeof(why));
    if (!g) {
        printf("gpu_inprocess: cannot create the GPU engine: %s\n", why);
        return 0;
    }
    printf("gpu_inprocess: %s\n", why);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));

    /* device buffers: ids, rows, lens, miss list */
    const size_t load_chunk = 65536;
    size_t cap = 2 * batch > load_chunk ? 2 * batch : load_chunk;
    uint64_t *d_ids, *h_ids = malloc(cap * sizeof(uint64_t));
    float *d_rows, *h_rows = malloc(cap * ROWB);
    uint32_t *d_lens, *d_miss, *d_nmiss, *h_miss = malloc(batch * sizeof(uint32_t));
    CK(cudaMalloc((void **)&d_ids, cap * sizeof(uint64_t)));
    CK(cudaMalloc((void **)&d_rows, cap * ROWB));
    CK(cudaMalloc((void **)&d_lens, batch * sizeof(uint32_t)));
    CK(cudaMalloc((void **)&d_miss, batch * sizeof(uint32_t)));
    CK(cudaMalloc((void **)&d_nmiss, sizeof(uint32_t)));

    /* load ids 0..loaded-1 */
    uint64_t t0 = cudis_mono_ns();
    for (size_t b = 0; b < loaded; b += load_chunk) {
        size_t n = loaded - b < load_chunk ? loaded - b : load_chunk;
        for (size_t i = 0; i < n; i++) {
            h_ids[i] = b + i;
        }
        make_rows(n, h_ids, h_rows);
        CK(cudaMemcpyAsync(d_ids, h_ids, n * 8, cudaMemcpyHostToDevice, s));
        CK(cudaMemcpyAsync(d_rows, h_rows, n * ROWB, cudaMemcpyHostToDevice, s));
        CKE(gpu_engine_set_dev(g, d_ids, 8, (uint32_t)n, d_rows, ROWB, 0, NULL, cudis_now_ms(), s));
    }
    CK(cudaStreamSynchronize(s));
    printf("loaded %zu rows of %zu B in %.1f ms\n", loaded, ROWB,
           (double)(cudis_mono_ns() - t0) / 1e6);

    double *lat = malloc(requests * sizeof(double));
    uint64_t hits = 0, misses = 0, bad = 0, filled = 0;
    uint64_t universe = loaded + loaded / 4;
    double busy = 0;
    for (size_t r = 0; r < requests; r++) {
        for (size_t i = 0; i < batch; i++) {
            h_ids[i] = zipf_approx(universe, 1.2) - 1;
        }
        /* the ids are "already on the device" (e.g. from a GPU feature step) */
        CK(cudaMemcpyAsync(d_ids, h_ids, batch * 8, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s));
        uint64_t a = cudis_mono_ns();
        CKE(gpu_engine_get_dev(g, d_ids, 8, (uint32_t)batch, d_rows, ROWB, d_lens, d_miss, d_nmiss,
                               cudis_now_ms(), s));
        CK(cudaStreamSynchronize(s));
        double us = (double)(cudis_mono_ns() - a) / 1e3;
        lat[r] = us;
        busy += us / 1e6;
        /* check: the miss list and the rows (copied back only to verify) */
        uint32_t nmiss = 0;
        CK(cudaMemcpy(&nmiss, d_nmiss, sizeof(nmiss), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h_miss, d_miss, nmiss * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h_rows, d_rows, batch * ROWB, cudaMemcpyDeviceToHost));
        uint8_t *is_miss = calloc(batch, 1);
        for (uint32_t k = 0; k < nmiss; k++) {
            if (h_miss[k] < batch) {
                is_miss[h_miss[k]] = 1;
            }
        }
        for (size_t i = 0; i < batch; i++) {
            if (is_miss[i]) {
                misses++;
                bad += h_ids[i] < loaded && r == 0; /* loaded ids must hit at first */
            } else {
                hits++;
                bad += h_rows[i * DIM] != truth(h_ids[i], 0) ||
                       h_rows[i * DIM + DIM - 1] != truth(h_ids[i], DIM - 1);
            }
        }
        /* fill the misses (distinct ids: one write per key per call) */
        size_t m = 0;
        for (uint32_t k = 0; k < nmiss; k++) {
            uint64_t id = h_ids[h_miss[k]];
            bool dup = false;
            for (size_t q = 0; q < m && !dup; q++) {
                dup = h_ids[batch + q] == id;
            }
            if (!dup && batch + m < cap) {
                h_ids[batch + m++] = id;
            }
        }
        free(is_miss);
        if (m > 0) {
            make_rows(m, h_ids + batch, h_rows);
            CK(cudaMemcpyAsync(d_ids, h_ids + batch, m * 8, cudaMemcpyHostToDevice, s));
            CK(cudaMemcpyAsync(d_rows, h_rows, m * ROWB, cudaMemcpyHostToDevice, s));
            CKE(gpu_engine_set_dev(g, d_ids, 8, (uint32_t)m, d_rows, ROWB, 0, NULL, cudis_now_ms(),
                                   s));
            CK(cudaStreamSynchronize(s));
            filled += m;
        }
    }
    qsort(lat, requests, sizeof(double), cmp_double);
    printf("%zu lookups of %zu ids: hit ratio %.4f, p50 %.1f us, p99 %.1f us, %.0f rows/s "
           "(lookup time only); %llu misses filled; %llu wrong rows\n",
           requests, batch, (double)hits / (double)(hits + misses), lat[requests / 2],
           lat[(size_t)(0.99 * (double)(requests - 1))], (double)(hits + misses) / busy,
           (unsigned long long)filled, (unsigned long long)bad);
    cudaFree(d_ids);
    cudaFree(d_rows);
    cudaFree(d_lens);
    cudaFree(d_miss);
    cudaFree(d_nmiss);
    cudaStreamDestroy(s);
    gpu_engine_destroy(g);
    free(h_ids);
    free(h_rows);
    free(h_miss);
    free(lat);
    return bad ? 1 : 0;
}
