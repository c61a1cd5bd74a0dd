/*
 * gpu_bench.c - throughput of the GPU engine (the device check).
 *
 * First the target rows (kernel gets and sets of 8-byte keys and values at
 * 90% load in 1M-op batches, 512-byte fetches against copy bandwidth), each
 * printed with its target and whether it was met; then the matrix.
 * For 8/8 and 16/32-byte keys/values, tables of 2^26 slots (a 1 GiB index,
 * far beyond the 60 MB L2) filled to 50% and 90%, and batches of 1k, 16k,
 * 256k and 1M operations:
 *   - kernel: gets and sets through the device-pointer API with the batch
 *     already in device memory (gpu_engine_get_dev / set_dev), timed with
 *     CUDA events over many launches;
 *   - e2e: the same as host batches of cudis_op records through
 *     gpu_engine_execute (copy into pinned staging, copies both ways, copy
 *     out), three host threads keeping the pipeline full, timed by the wall
 *     clock from when all threads have built their batches.
 * Sets overwrite keys that are present (a cache refreshing its entries).
 * Then 512-byte vector fetches (kernel gets into 512-byte rows) in GB/s of
 * value bytes, against the card's device-to-device cudaMemcpy rate measured
 * here the same way (bytes copied per second).
 *
 * Prints a table and writes CSV (gpu_bench.csv, gpu_fetch.csv) into
 * --out DIR (default bench/results/gpu). --quick runs a reduced matrix
 * (2^22 slots). A verification pass before timing checks values (none may
 * be wrong, at least 98% of the keys inserted must hit), and every timed
 * get run must hit at least 98% of its keys: a table that lost its data
 * fails the bench instead of timing misses. --profile runs one fill and a
 * few get launches only (for a profiler). Exit 0 when nothing failed, 77
 * when no usable device exists.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "gpu_engine.h"

#define NOW 1700000000000ll
#define MIN_HIT 0.98 /* of the keys a timed get asks for */

static int failures;

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            failures++;                                                                            \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void make_key(uint64_t id, uint32_t klen, uint8_t *out)
{
    uint64_t a = mix(id), b = mix(id ^ 0x5555555555555555ull);
    memcpy(out, &a, 8);
    if (klen > 8) {
        memcpy(out + 8, &b, klen - 8);
    }
}

static void make_val(uint64_t id, uint32_t gen, uint32_t vlen, uint8_t *out)
{
    for (uint32_t j = 0; j < vlen; j += 8) {
        uint64_t x = mix(id * 31 + gen * 7 + j);
        memcpy(out + j, &x, vlen - j < 8 ? vlen - j : 8);
    }
}

typedef struct bench_cfg {
    FILE *csv;
    uint64_t slots; /* table capacity in items */
    int quick;
    int device;
} bench_cfg;

typedef struct table_run {
    gpu_engine *g;
    uint32_t klen, vlen;
    uint64_t n_keys; /* keys inserted */
    uint8_t *d_keys; /* n_keys keys, device */
    uint8_t *d_vals; /* values for one max batch, device */
    uint8_t *d_out;
    uint32_t *d_lens;
    double load; /* measured */
} table_run;

/* ------------------------------------------------------------------------
 * Kernel-only measurements (device-pointer API, CUDA events)
 * ---------------------------------------------------------------------- */

static int kernel_rate(table_run *t, int is_set, uint32_t batch, double *ops_s)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    uint64_t total_target = batch >= (1u << 18) ? (16u << 20) : (4u << 20);
    uint32_t reps = (uint32_t)(total_target / batch);
    if (reps < 5) {
        reps = 5;
    }
    uint64_t windows = t->n_keys / batch;
    if (windows == 0) {
        windows = 1;
    }
    int rc = 0;
    for (uint32_t r = 0; r < reps + 2 && rc == 0; r++) {
        if (r == 2) {
            CK(cudaEventRecord(e0, NULL));
        }
        const uint8_t *keys = t->d_keys + (mix(r) % windows) * batch * t->klen;
        uint32_t n = batch < t->n_keys ? batch : (uint32_t)t->n_keys;
        if (is_set) {
            rc = gpu_engine_set_dev(t->g, keys, t->klen, n, t->d_vals, t->vlen, 0, NULL, NOW, NULL);
        } else {
            rc = gpu_engine_get_dev(t->g, keys, t->klen, n, t->d_out, t->vlen, t->d_lens, NULL,
                                    NULL, NOW, NULL);
        }
    }
    CK(cudaEventRecord(e1, NULL));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (rc != 0) {
        fprintf(stderr, "kernel %s batch %u failed: %d\n", is_set ? "set" : "get", batch, rc);
        failures++;
        return -1;
    }
    uint32_t n = batch < t->n_keys ? batch : (uint32_t)t->n_keys;
    *ops_s = (double)reps * n / (ms * 1e-3);
    if (!is_set) {
        /* the lengths of the last launch: misses are GPU_DEV_MISS */
        uint32_t *lens = malloc((size_t)n * 4);
        if (lens == NULL) {
            return -1;
        }
        CK(cudaMemcpy(lens, t->d_lens, (size_t)n * 4, cudaMemcpyDeviceToHost));
        uint64_t hits = 0;
        for (uint32_t i = 0; i < n; i++) {
            hits += lens[i] != GPU_DEV_MISS;
        }
        free(lens);
        if ((double)hits < MIN_HIT * n) {
            fprintf(stderr, "kernel get batch %u: %llu of %u keys hit (below %.0f%%)\n", batch,
                    (unsigned long long)hits, n, MIN_HIT * 100);
            failures++;
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * End-to-end measurements (host batches, 3 threads)
 * ---------------------------------------------------------------------- */

typedef struct e2e_arg {
    pthread_barrier_t *start;
    table_run *t;
    int is_set;
    uint32_t batch;
    uint32_t reps;
    uint32_t seed;
    int rc;
    uint64_t hits;
} e2e_arg;

static void *e2e_thread(void *p)
{
    e2e_arg *a = p;
    table_run *t = a->t;
    uint32_t n = a->batch;
    cudis_op *ops = calloc(n, sizeof(cudis_op));
    cudis_result *res = calloc(n, sizeof(cudis_result));
    uint8_t *in = malloc((size_t)n * (t->klen + t->vlen));
    uint64_t out_cap = (uint64_t)n * t->vlen + 64;
    uint8_t *out = malloc(out_cap);
    if (!ops || !res || !in || !out) {
        a->rc = -1;
        pthread_barrier_wait(a->start);
        goto done;
    }
    uint64_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t id = mix((uint64_t)a->seed * 1000003 + i) % t->n_keys;
        ops[i].code = a->is_set ? CUDIS_OP_SET : CUDIS_OP_GET;
        ops[i].key_off = at;
        ops[i].key_len = t->klen;
        make_key(id, t->klen, in + at);
        at += t->klen;
        if (a->is_set) {
            ops[i].val_off = at;
            ops[i].val_len = t->vlen;
            make_val(id, 1, t->vlen, in + at);
            at += t->vlen;
        }
    }
    pthread_barrier_wait(a->start);
    for (uint32_t r = 0; r < a->reps; r++) {
        cudis_batch b = {.ops = ops,
                         .n_ops = n,
                         .in = in,
                         .res = res,
                         .out = out,
                         .out_cap = out_cap,
                         .now_ms = NOW};
        int rc = gpu_engine_execute(t->g, &b);
        if (rc != 0) {
            a->rc = rc;
            break;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        a->hits += (res[i].flags & CUDIS_R_FOUND) ? 1 : 0;
    }
done:
    free(ops);
    free(res);
    free(in);
    free(out);
    return NULL;
}

static int e2e_rate(table_run *t, int is_set, uint32_t batch, double *ops_s)
{
    enum { T = 3 };
    uint64_t total_target = batch >= (1u << 18) ? (6u << 20) : (1u << 20);
    uint32_t reps = (uint32_t)(total_target / batch / T);
    if (reps < 3) {
        reps = 3;
    }
    e2e_arg a[T];
    pthread_t th[T];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, T + 1);
    for (int i = 0; i < T; i++) {
        a[i] = (e2e_arg){.start = &start,
                         .t = t,
                         .is_set = is_set,
                         .batch = batch,
                         .reps = reps,
                         .seed = (uint32_t)i + 1};
        pthread_create(&th[i], NULL, e2e_thread, &a[i]);
    }
    pthread_barrier_wait(&start); /* batches built: time the executions only */
    double t0 = now_s();
    int rc = 0;
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        if (a[i].rc != 0) {
            rc = a[i].rc;
        }
    }
    double dt = now_s() - t0;
    pthread_barrier_destroy(&start);
    if (rc != 0) {
        fprintf(stderr, "e2e %s batch %u failed: %d\n", is_set ? "set" : "get", batch, rc);
        failures++;
        return -1;
    }
    for (int i = 0; i < T; i++) {
        if ((double)a[i].hits < MIN_HIT * batch) {
            fprintf(stderr, "e2e %s batch %u: %llu of %u keys found (below %.0f%%)\n",
                    is_set ? "set" : "get", batch, (unsigned long long)a[i].hits, batch,
                    MIN_HIT * 100);
            failures++;
            return -1;
        }
    }
    *ops_s = (double)T * reps * batch / dt;
    return 0;
}

/* ------------------------------------------------------------------------
 * One table: fill, verify, measure
 * ---------------------------------------------------------------------- */

static int fill_table(table_run *t, const bench_cfg *bc, double load)
{
    t->n_keys = (uint64_t)(bc->slots * load);
    size_t kbytes = (size_t)t->n_keys * t->klen;
    uint8_t *h_keys = malloc(kbytes);
    const uint32_t chunk = 1u << 20;
    uint8_t *h_vals = malloc((size_t)chunk * t->vlen);
    if (!h_keys || !h_vals) {
        return -1;
    }
    for (uint64_t i = 0; i < t->n_keys; i++) {
        make_key(i, t->klen, h_keys + i * t->klen);
    }
    CK(cudaMalloc((void **)&t->d_keys, kbytes));
    CK(cudaMemcpy(t->d_keys, h_keys, kbytes, cudaMemcpyHostToDevice));
    CK(cudaMalloc((void **)&t->d_vals, (size_t)chunk * t->vlen));
    CK(cudaMalloc((void **)&t->d_out, (size_t)chunk * t->vlen));
    CK(cudaMalloc((void **)&t->d_lens, (size_t)chunk * 4));
    for (uint64_t first = 0; first < t->n_keys; first += chunk) {
        uint32_t n = (uint32_t)(t->n_keys - first < chunk ? t->n_keys - first : chunk);
        for (uint32_t i = 0; i < n; i++) {
            make_val(first + i, 0, t->vlen, h_vals + (size_t)i * t->vlen);
        }
        CK(cudaMemcpy(t->d_vals, h_vals, (size_t)n * t->vlen, cudaMemcpyHostToDevice));
        if (gpu_engine_set_dev(t->g, t->d_keys + first * t->klen, t->klen, n, t->d_vals, t->vlen, 0,
                               NULL, NOW, NULL) != 0) {
            failures++;
            return -1;
        }
        CK(cudaDeviceSynchronize());
    }
    /* verify: get the first chunk of keys, compare values */
    uint32_t n = (uint32_t)(t->n_keys < chunk ? t->n_keys : chunk);
    if (gpu_engine_get_dev(t->g, t->d_keys, t->klen, n, t->d_out, t->vlen, t->d_lens, NULL, NULL,
                           NOW, NULL) != 0) {
        failures++;
        return -1;
    }
    CK(cudaDeviceSynchronize());
    uint32_t *lens = malloc((size_t)n * 4);
    CK(cudaMemcpy(h_vals, t->d_out, (size_t)n * t->vlen, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(lens, t->d_lens, (size_t)n * 4, cudaMemcpyDeviceToHost));
    uint64_t hits = 0, wrong = 0;
    uint8_t *want = malloc(t->vlen + 8);
    if (lens == NULL || want == NULL) {
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (lens[i] == GPU_DEV_MISS) {
            continue;
        }
        hits++;
        make_val(i, 0, t->vlen, want);
        if (lens[i] != t->vlen || memcmp(h_vals + (size_t)i * t->vlen, want, t->vlen) != 0) {
            wrong++;
        }
    }
    cudis_stats st;
    gpu_engine_stats(t->g, &st);
    t->load = st.load_factor;
    printf("# table k%u v%u: %llu keys inserted, %llu items, load %.3f, verify hits %llu/%u, "
           "wrong %llu\n",
           t->klen, t->vlen, (unsigned long long)t->n_keys, (unsigned long long)st.items,
           st.load_factor, (unsigned long long)hits, n, (unsigned long long)wrong);
    if (wrong != 0) {
        fprintf(stderr, "VERIFY FAILED: %llu wrong values\n", (unsigned long long)wrong);
        failures++;
    }
    if ((double)hits < MIN_HIT * n) {
        fprintf(stderr, "VERIFY FAILED: %llu of %u keys inserted were found\n",
                (unsigned long long)hits, n);
        failures++;
    }
    bool bad = wrong != 0 || (double)hits < MIN_HIT * n;
    free(want);
    free(lens);
    free(h_keys);
    free(h_vals);
    return bad ? -1 : 0;
}

static void free_table(table_run *t)
{
    cudaFree(t->d_keys);
    cudaFree(t->d_vals);
    cudaFree(t->d_out);
    cudaFree(t->d_lens);
    gpu_engine_destroy(t->g);
    memset(t, 0, sizeof(*t));
}

static gpu_engine *open_engine(const bench_cfg *bc, uint64_t slots, uint32_t klen, uint32_t vlen)
{
    engine_config c;
    memset(&c, 0, sizeof(c));
    uint64_t item = (16 + klen + vlen + 15) / 16 * 16 + 16;
    c.memory_bytes = slots * (16 + item) * 5 / 4 + (64u << 20);
    c.max_items = slots;
    c.ways = 8;
    c.max_key_len = 64;
    c.max_val_len = 4096;
    c.device = bc->device;
    char why[256] = "";
    gpu_engine *g = gpu_engine_create(&c, why, sizeof(why));
    if (g == NULL) {
        fprintf(stderr, "gpu engine: %s\n", why);
        failures++;
    }
    return g;
}

static void row(const bench_cfg *bc, const char *mode, const char *op, uint32_t batch,
                const table_run *t, double target, double ops_s)
{
    printf("%-6s %-4s %8u %4u %4u %5.2f %5.3f %14.0f %9.3f\n", mode, op, batch, t->klen, t->vlen,
           target, t->load, ops_s, ops_s / 1e9);
    if (bc->csv != NULL) {
        fprintf(bc->csv, "%s,%s,%u,%u,%u,%.2f,%.4f,%.0f\n", mode, op, batch, t->klen, t->vlen,
                target, t->load, ops_s);
        fflush(bc->csv);
    }
}

/* A table of bc->slots slots for klen/vlen, filled to `load`. */
static int open_table(table_run *t, const bench_cfg *bc, uint32_t klen, uint32_t vlen, double load)
{
    memset(t, 0, sizeof(*t));
    t->klen = klen;
    t->vlen = vlen;
    t->g = open_engine(bc, bc->slots, klen, vlen);
    if (t->g == NULL) {
        return -1;
    }
    if (fill_table(t, bc, load) != 0) {
        free_table(t);
        return -1;
    }
    return 0;
}

static void header(void)
{
    printf("%-6s %-4s %8s %4s %4s %5s %5s %14s %9s\n", "mode", "op", "batch", "key", "val", "load",
           "real", "ops/s", "Gops/s");
}

static int run_matrix(const bench_cfg *bc)
{
    static const uint32_t batches[] = {1u << 10, 1u << 14, 1u << 18, 1u << 20};
    static const uint32_t kv[][2] = {{8, 8}, {16, 32}};
    static const double loads[] = {0.5, 0.9};
    header();
    for (int ki = 0; ki < 2; ki++) {
        for (int li = 0; li < 2; li++) {
            table_run t;
            if (open_table(&t, bc, kv[ki][0], kv[ki][1], loads[li]) != 0) {
                return -1;
            }
            for (int bi = 0; bi < 4; bi++) {
                double r;
                if (kernel_rate(&t, 0, batches[bi], &r) == 0) {
                    row(bc, "kernel", "get", batches[bi], &t, loads[li], r);
                }
                if (kernel_rate(&t, 1, batches[bi], &r) == 0) {
                    row(bc, "kernel", "set", batches[bi], &t, loads[li], r);
                }
                if (e2e_rate(&t, 0, batches[bi], &r) == 0) {
                    row(bc, "e2e", "get", batches[bi], &t, loads[li], r);
                }
                if (e2e_rate(&t, 1, batches[bi], &r) == 0) {
                    row(bc, "e2e", "set", batches[bi], &t, loads[li], r);
                }
            }
            free_table(&t);
        }
    }
    return 0;
}

static void target(const char *what, double got, double want)
{
    printf("TARGET %-44s %14.0f  target %.2e  %s\n", what, got, want,
           got >= want ? "met" : "MISSED");
}

/* The target rows, before everything else. */
static int run_targets(const bench_cfg *bc)
{
    table_run t;
    if (open_table(&t, bc, 8, 8, 0.9) != 0) {
        return -1;
    }
    double r;
    if (kernel_rate(&t, 0, 1u << 20, &r) == 0) {
        target("kernel get, 8 B keys/values, 90% load, 1M", r, 2e9);
    }
    if (kernel_rate(&t, 1, 1u << 20, &r) == 0) {
        target("kernel set, 8 B keys/values, 90% load, 1M", r, 1e9);
    }
    free_table(&t);
    return 0;
}

/* One fill and a few get launches: what a profiler looks at. */
static int run_profile(const bench_cfg *bc)
{
    table_run t;
    if (open_table(&t, bc, 8, 8, 0.9) != 0) {
        return -1;
    }
    double r;
    int rc = kernel_rate(&t, 0, 1u << 20, &r);
    if (rc == 0) {
        printf("profile: kernel get 1M at 90%% load: %.0f ops/s\n", r);
    }
    free_table(&t);
    return rc;
}

/* ------------------------------------------------------------------------
 * 512-byte vectors against cudaMemcpy device-to-device
 * ---------------------------------------------------------------------- */

static int copy_bandwidth(double *gbs)
{
    size_t n = 1ull << 30;
    void *a, *b;
    CK(cudaMalloc(&a, n));
    CK(cudaMalloc(&b, n));
    CK(cudaMemset(a, 1, n));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e0, NULL));
    for (int i = 0; i < 10; i++) {
        CK(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, n, cudaMemcpyDeviceToDevice, NULL));
    }
    CK(cudaEventRecord(e1, NULL));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    *gbs = 10.0 * (double)n / (ms * 1e-3) / 1e9;
    cudaFree(a);
    cudaFree(b);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 0;
}

static int run_fetch(const bench_cfg *bc, FILE *csv)
{
    double copy = 0;
    if (copy_bandwidth(&copy) != 0) {
        return -1;
    }
    table_run t;
    memset(&t, 0, sizeof(t));
    t.klen = 8;
    t.vlen = 512;
    uint64_t slots = bc->quick ? (1u << 21) : (1u << 22);
    bench_cfg fc = *bc;
    fc.slots = slots;
    t.g = open_engine(&fc, slots, 8, 512);
    if (t.g == NULL) {
        return -1;
    }
    if (fill_table(&t, &fc, 0.9) != 0) {
        free_table(&t);
        return -1;
    }
    printf("\n%-10s %8s %12s %12s %12s %8s\n", "op", "batch", "rows/s", "fetch GB/s", "copy GB/s",
           "ratio");
    static const uint32_t batches[] = {1u << 14, 1u << 18, 1u << 20};
    for (int bi = 0; bi < 3; bi++) {
        double r;
        if (kernel_rate(&t, 0, batches[bi], &r) != 0) {
            continue;
        }
        double gbs = r * 512 / 1e9;
        printf("%-10s %8u %12.0f %12.1f %12.1f %8.3f\n", "fetch512", batches[bi], r, gbs, copy,
               gbs / copy);
        if (batches[bi] == 1u << 20) {
            printf("TARGET %-44s %14.3f  target %.2e  %s\n",
                   "fetch512 GB/s over copy GB/s, 90% load, 1M", gbs / copy, 0.5,
                   gbs / copy >= 0.5 ? "met" : "MISSED");
        }
        if (csv != NULL) {
            fprintf(csv, "fetch512,%u,%.4f,%.0f,%.2f,%.2f,%.4f\n", batches[bi], t.load, r, gbs,
                    copy, gbs / copy);
        }
    }
    free_table(&t);
    return 0;
}

int main(int argc, char **argv)
{
    bench_cfg bc;
    memset(&bc, 0, sizeof(bc));
    bc.slots = 1u << 26;
    bc.device = -1;
    int profile = 0;
    const char *out_dir = "bench/results/gpu";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            bc.quick = 1;
            bc.slots = 1u << 22;
        } else if (strcmp(argv[i], "--profile") == 0) {
            profile = 1;
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out_dir = argv[++i];
        } else if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc) {
            bc.slots = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            bc.device = atoi(argv[++i]);
        } else {
            fprintf(stderr,
                    "usage: %s [--quick] [--profile] [--out DIR] [--slots N] [--device N]\n",
                    argv[0]);
            return 2;
        }
    }
    char why[512] = "";
    if (gpu_engine_probe(bc.device, why, sizeof(why)) != 0) {
        printf("SKIPPED: no usable GPU: %s\n", why);
        return 77;
    }
    printf("# %s\n# table capacity %llu slots, 8 ways (index %llu MiB)\n", why,
           (unsigned long long)bc.slots, (unsigned long long)(bc.slots * 16 >> 20));
    if (profile) {
        return run_profile(&bc) == 0 && failures == 0 ? 0 : 1;
    }
    mkdir(out_dir, 0755);
    char path[1024];
    snprintf(path, sizeof(path), "%s/gpu_fetch.csv", out_dir);
    FILE *fc = fopen(path, "w");
    if (fc != NULL) {
        fprintf(fc, "op,batch,load,rows_per_s,fetch_gbs,copy_gbs,ratio\n");
    }
    run_targets(&bc);
    run_fetch(&bc, fc);
    if (fc != NULL) {
        fclose(fc);
    }
    snprintf(path, sizeof(path), "%s/gpu_bench.csv", out_dir);
    bc.csv = fopen(path, "w");
    if (bc.csv != NULL) {
        fprintf(bc.csv, "mode,op,batch,key_bytes,val_bytes,target_load,load,ops_per_s\n");
    }
    printf("\n");
    run_matrix(&bc);
    if (bc.csv != NULL) {
        fclose(bc.csv);
    }
    printf("\n# CSV in %s; %d failure(s)\n", out_dir, failures);
    return failures ? 1 : 0;
}
