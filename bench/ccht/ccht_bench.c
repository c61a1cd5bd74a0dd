/*
 * ccht_bench.c - ccht-bench: throughput of the host CCHT (engine "cpu")
 * through its batch API, and its memory overhead per item.
 *
 * For each table size (default 100k items: in cache; 10M items: out of
 * cache), the table is created with exactly that many slots and filled to
 * 90% with 16-byte keys and 32-byte values; then for each mix (95/5 and
 * 50/50 get/set), key distribution (uniform, scrambled Zipf 0.99) and thread
 * count (1, 2) it runs batches of --batch ops for --seconds and reports
 * Mops/s. Sets overwrite loaded keys (a new chunk each time, as always).
 * Prints a table and writes CSV (default bench/results/ccht/ccht-bench.csv).
 *
 *   ccht-bench [--sizes 100000,10000000] [--seconds 1] [--batch 32]
 *              [--threads 1,2] [--ways 8] [--out FILE] [--pin]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ccht.h"
#include "cudis_time.h"

#define KEY_LEN 16
#define VAL_LEN 32
#define STREAM (1u << 20) /* pre-generated key ids per thread */

typedef struct cfg {
    uint64_t sizes[8];
    int n_sizes;
    int threads[4];
    int n_threads;
    double seconds;
    uint32_t batch;
    uint32_t ways;
    const char *out;
    bool pin;
} cfg;

typedef struct shared {
    ccht *t;
    const uint8_t *in; /* all keys, then one value */
    uint64_t n_keys;
    volatile int go, stop;
} shared;

typedef struct worker {
    shared *sh;
    const uint32_t *ids;
    uint32_t set_pct;
    uint32_t batch;
    int cpu;
    uint64_t ops, hits;
    uint64_t cpu_ns; /* CPU time this thread got (the machine may be shared) */
    uint64_t rng;
    pthread_t th;
} worker;

static uint64_t xs(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* ---- keys -------------------------------------------------------------- */

/* The 16-byte key of id: "key:" + 12 hex digits. */
static void key_of(uint64_t id, uint8_t *k)
{
    static const char hex[] = "0123456789abcdef";
    memcpy(k, "key:", 4);
    for (int i = 15; i >= 4; i--) {
        k[i] = (uint8_t)hex[id & 15];
        id >>= 4;
    }
}


/* Zipf(theta) ranks in [0, n) (Gray et al., as YCSB), scrambled by a hash so
 * hot keys are spread over the table. */
static void zipf_stream(uint32_t *ids, uint32_t len, uint64_t n, double theta, uint64_t seed)
{
    double zetan = 0;
    for (uint64_t i = 1; i <= n; i++) {
        zetan += 1.0 / pow((double)i, theta);
    }
    double zeta2 = 1.0 + 1.0 / pow(2.0, theta);
    double alpha = 1.0 / (1.0 - theta);
    double eta = (1.0 - pow(2.0 / (double)n, 1.0 - theta)) / (1.0 - zeta2 / zetan);
    uint64_t s = seed | 1;
    for (uint32_t i = 0; i < len; i++) {
        double u = (double)(xs(&s) >> 11) / 9007199254740992.0;
        double uz = u * zetan;
        uint64_t r;
        if (uz < 1.0) {
            r = 0;
        } else if (uz < zeta2) {
            r = 1;
        } else {
            r = (uint64_t)((double)n * pow(eta * u - eta + 1.0, alpha));
        }
        if (r >= n) {
            r = n - 1;
        }
        ids[i] = (uint32_t)(cudis_mix64(r ^ 0x51ed27u, 0x9e3779b97f4a7c15ull) % n);
    }
}

static void uniform_stream(uint32_t *ids, uint32_t len, uint64_t n, uint64_t seed)
{
    uint64_t s = seed | 1;
    for (uint32_t i = 0; i < len; i++) {
        ids[i] = (uint32_t)(xs(&s) % n);
    }
}

/* ---- workers ------------------------------------------------------------ */

static void *run_worker(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    if (w->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    cudis_op *ops = calloc(w->batch, sizeof(cudis_op));
    cudis_result *res = calloc(w->batch, sizeof(cudis_result));
    uint8_t *out = malloc((size_t)w->batch * VAL_LEN);
    /* the batch's input buffer, as a server would hand it over: this
     * batch's keys, then the value bytes */
    uint8_t *in = malloc((size_t)w->batch * KEY_LEN + VAL_LEN);
    uint64_t val_off = (uint64_t)w->batch * KEY_LEN;
    memset(in + val_off, 'v', VAL_LEN);
    uint32_t pos = (uint32_t)(w->rng % STREAM);
    while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE)) {
        sched_yield();
    }
    int64_t now = cudis_now_ms();
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
        for (uint32_t i = 0; i < w->batch; i++) {
            uint32_t id = w->ids[pos];
            pos = (pos + 1) & (STREAM - 1);
            cudis_op *op = &ops[i];
            op->key_off = (uint64_t)i * KEY_LEN;
            op->key_len = KEY_LEN;
            key_of(id, in + op->key_off);
            if ((uint32_t)(xs(&w->rng) % 100) < w->set_pct) {
                op->code = CUDIS_OP_SET;
                op->val_off = val_off;
                op->val_len = VAL_LEN;
            } else {
                op->code = CUDIS_OP_GET;
                op->val_len = 0;
            }
        }
        cudis_batch b = {ops, w->batch, in, res, out, (uint64_t)w->batch * VAL_LEN, 0, now, NULL};
        ccht_execute(sh->t, &b);
        for (uint32_t i = 0; i < w->batch; i++) {
            w->hits += (res[i].flags & CUDIS_R_VALUE) != 0;
        }
        w->ops += w->batch;
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    w->cpu_ns = (uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec));
    free(ops);
    free(res);
    free(out);
    free(in);
    return NULL;
}

/* ---- one table ----------------------------------------------------------- */

typedef struct row {
    uint64_t items;
    const char *mix, *dist;
    int threads;
    double mops, gets_per_thread, hit_ratio;
} row;

static double measure(shared *sh, const cfg *c, uint32_t **streams, int threads, uint32_t set_pct,
                      double *hit_ratio, double *mops_cpu)
{
    worker w[4];
    sh->go = 0;
    sh->stop = 0;
    for (int i = 0; i < threads; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].sh = sh;
        w[i].ids = streams[i];
        w[i].set_pct = set_pct;
        w[i].batch = c->batch;
        w[i].cpu = c->pin ? i : -1;
        w[i].rng = 0x1234567ull * (uint64_t)(i + 1);
        pthread_create(&w[i].th, NULL, run_worker, &w[i]);
    }
    uint64_t t0 = cudis_mono_ns();
    __atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
    struct timespec ts = {(time_t)c->seconds, (long)((c->seconds - (double)(time_t)c->seconds) * 1e9)};
    nanosleep(&ts, NULL);
    __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
    uint64_t ops = 0, hits = 0, cpu_ns = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].th, NULL);
        ops += w[i].ops;
        hits += w[i].hits;
        cpu_ns += w[i].cpu_ns;
    }
    /* Mops per CPU-second of one thread: what a thread does when it runs */
    *mops_cpu = cpu_ns ? (double)ops / ((double)cpu_ns / 1e9) / 1e6 : 0;
    double secs = (double)(cudis_mono_ns() - t0) / 1e9;
    *hit_ratio = ops ? (double)hits / ((double)ops * (100 - set_pct) / 100.0) : 0;
    return (double)ops / secs / 1e6;
}

static int bench_size(const cfg *c, uint64_t size, FILE *csv)
{
    ccht_options o;
    ccht_options_default(&o);
    o.max_items = size;
    o.ways = c->ways;
    o.max_key_len = 250;
    o.max_val_len = 4096;
    /* index + 64 B per item + slack: memory is never the limit here */
    o.memory_bytes = size * 16 + size * 64 + (64ull << 20);
    char why[160];
    ccht *t = ccht_create(&o, why, sizeof(why));
    if (!t) {
        fprintf(stderr, "ccht-bench: %s\n", why);
        return 1;
    }
    uint64_t n_keys = size * 9 / 10;
    uint8_t *in = malloc(n_keys * KEY_LEN + VAL_LEN);
    for (uint64_t i = 0; i < n_keys; i++) {
        key_of(i, in + i * KEY_LEN);
    }
    memset(in + n_keys * KEY_LEN, 'v', VAL_LEN);

    /* fill */
    uint64_t t0 = cudis_mono_ns();
    cudis_op ops[256];
    cudis_result res[256];
    for (uint64_t i = 0; i < n_keys; i += 256) {
        uint32_t n = (uint32_t)(n_keys - i < 256 ? n_keys - i : 256);
        for (uint32_t j = 0; j < n; j++) {
            memset(&ops[j], 0, sizeof(ops[j]));
            ops[j].code = CUDIS_OP_SET;
            ops[j].key_off = (i + j) * KEY_LEN;
            ops[j].key_len = KEY_LEN;
            ops[j].val_off = n_keys * KEY_LEN;
            ops[j].val_len = VAL_LEN;
        }
        cudis_batch b = {ops, n, in, res, NULL, 0, 0, cudis_now_ms(), NULL};
        ccht_execute(t, &b);
    }
    double fill_s = (double)(cudis_mono_ns() - t0) / 1e9;
    cudis_stats s;
    ccht_stats(t, &s);
    double overhead = s.items ? (double)(s.bytes_used - s.key_bytes - s.value_bytes) / (double)s.items
                              : 0;
    printf("\ntable %llu slots (%u-way), filled %llu keys in %.2f s: items %llu, load %.3f, "
           "evictions %llu\n",
           (unsigned long long)s.capacity, c->ways, (unsigned long long)n_keys, fill_s,
           (unsigned long long)s.items, s.load_factor,
           (unsigned long long)(s.evict_bucket + s.evict_memory));
    printf("memory: %.1f MiB used (index %.1f MiB), %.1f B per item beyond its %d key+value "
           "bytes\n",
           (double)s.bytes_used / 1048576.0, (double)s.index_bytes / 1048576.0, overhead,
           KEY_LEN + VAL_LEN);
    printf("%-9s %-6s %-8s %7s %9s %14s %13s %12s %7s\n", "items", "mix", "dist", "threads",
           "Mops/s", "Mgets/s/thread", "x vs 1 thread", "Mops/cpu-s", "hit%");

    uint32_t *streams[2][4];
    const char *dists[2] = {"uniform", "zipf0.99"};
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < 2; i++) {
            streams[d][i] = malloc(STREAM * sizeof(uint32_t));
            if (d == 0) {
                uniform_stream(streams[d][i], STREAM, n_keys, 77 + (uint64_t)i);
            } else {
                zipf_stream(streams[d][i], STREAM, n_keys, 0.99, 99 + (uint64_t)i);
            }
        }
    }
    shared sh = {t, in, n_keys, 0, 0};
    const char *mixes[2] = {"95/5", "50/50"};
    uint32_t set_pct[2] = {5, 50};
    for (int m = 0; m < 2; m++) {
        for (int d = 0; d < 2; d++) {
            double one = 0;
            for (int k = 0; k < c->n_threads; k++) {
                int th = c->threads[k];
                double hr, mcpu;
                double mops = measure(&sh, c, streams[d], th, set_pct[m], &hr, &mcpu);
                if (k == 0) {
                    one = mops;
                }
                double gets = mops * (100 - set_pct[m]) / 100.0 / th;
                printf("%-9llu %-6s %-8s %7d %9.2f %14.2f %13.2f %12.2f %7.1f\n",
                       (unsigned long long)size, mixes[m], dists[d], th, mops, gets,
                       one > 0 ? mops / one : 0, mcpu, hr * 100);
                fprintf(csv, "%llu,%u,%s,%s,%d,%u,%.3f,%.3f,%.3f,%.3f,%.1f,%.4f\n",
                        (unsigned long long)size, c->ways, mixes[m], dists[d], th, c->batch, mops,
                        gets, one > 0 ? mops / one : 0, mcpu, overhead, hr);
                fflush(stdout);
            }
        }
    }
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < 2; i++) {
            free(streams[d][i]);
        }
    }
    free(in);
    ccht_destroy(t);
    return 0;
}

static int parse_list(const char *s, uint64_t *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        out[n++] = strtoull(s, &end, 10);
        s = *end == ',' ? end + 1 : end;
        if (end == s && *s) {
            break;
        }
    }
    return n;
}

static void mkdirs(const char *path)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            mkdir(buf, 0755);
            *p = '/';
        }
    }
}

int main(int argc, char **argv)
{
    cfg c = {.sizes = {100000, 10000000},
             .n_sizes = 2,
             .threads = {1, 2},
             .n_threads = 2,
             .seconds = 1.0,
             .batch = 32,
             .ways = 8,
             .out = "bench/results/ccht/ccht-bench.csv"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--sizes")) {
            c.n_sizes = parse_list(v, c.sizes, 8);
            i++;
        } else if (!strcmp(a, "--threads")) {
            uint64_t th[4];
            c.n_threads = parse_list(v, th, 4);
            for (int k = 0; k < c.n_threads; k++) {
                c.threads[k] = th[k] < 1 ? 1 : th[k] > 4 ? 4 : (int)th[k];
            }
            i++;
        } else if (!strcmp(a, "--seconds")) {
            c.seconds = atof(v);
            i++;
        } else if (!strcmp(a, "--batch")) {
            c.batch = (uint32_t)atoi(v);
            i++;
        } else if (!strcmp(a, "--ways")) {
            c.ways = (uint32_t)atoi(v);
            i++;
        } else if (!strcmp(a, "--out")) {
            c.out = v;
            i++;
        } else if (!strcmp(a, "--pin")) {
            c.pin = true;
        } else {
            fprintf(stderr,
                    "usage: ccht-bench [--sizes N,N] [--seconds S] [--batch B] [--threads 1,2] "
                    "[--ways W] [--out FILE] [--pin]\n");
            return 2;
        }
    }
    if (c.batch < 1) {
        c.batch = 1;
    }
    mkdirs(c.out);
    FILE *csv = fopen(c.out, "w");
    if (!csv) {
        fprintf(stderr, "ccht-bench: cannot write %s: %s\n", c.out, strerror(errno));
        return 1;
    }
    fprintf(csv, "items,ways,mix,dist,threads,batch,mops,mgets_per_thread,scaling,mops_per_cpu_s,"
                 "overhead_bytes_per_item,hit_ratio\n");
    printf("ccht-bench: %d-byte keys, %d-byte values, 90%% load, batches of %u, %.1f s per cell\n",
           KEY_LEN, VAL_LEN, c.batch, c.seconds);
    int rc = 0;
    for (int i = 0; i < c.n_sizes && rc == 0; i++) {
        rc = bench_size(&c, c.sizes[i], csv);
    }
    fclose(csv);
    printf("\nCSV: %s\n", c.out);
    return rc;
}
