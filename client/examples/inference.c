/*
 * inference.c - an inference service's feature lookups through libcudis.
 *
 * Each request looks up `batch` ids (default 1,000) drawn Zipf(s=1.2) from
 * `ids` (default 10M) ids; a row is `dim` floats (default 64). The cache is
 * a cudis_rt (read-through) over a cudis-server or redis-server; the slower
 * tier is a loader that costs `loader-ms` (default 1 ms) per call. Every
 * `report` requests it prints the hit ratio of that interval, p50/p99 lookup
 * latency, rows/s and the read-through mode; at the end the totals. Rows
 * are checked: a hit or a loaded row must be the id's true row, a defaulted
 * row must be all zeros.
 *
 * Usage: cudis-inference [--port P | --unix PATH] [--password PW]
 *        [--requests 2000] [--batch 1000] [--ids 10000000] [--zipf 1.2]
 *        [--dim 64] [--loader-ms 1] [--policy auto|fill|default]
 *        [--threshold 0.9] [--report 200] [--label NAME] [--csv FILE]
 *        [--no-flush] [--seed N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudis.h"
#include "cudis_time.h"

/* ---- Zipf sampler: rejection-inversion (Hoermann & Derflinger 1996) ---- */

typedef struct zipf {
    double s, n, hx1, hn, sdiv;
} zipf;

static double helper1(double x)
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

static double helper2(double x)
{
    return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}

static double zh(const zipf *z, double x)
{
    return exp(-z->s * log(x));
}

static double zhi(const zipf *z, double x)
{
    double lx = log(x);
    return helper2((1 - z->s) * lx) * lx;
}

static double zhinv(const zipf *z, double x)
{
    double t = x * (1 - z->s);
    if (t < -1) {
        t = -1;
    }
    return exp(helper1(t) * x);
}

static void zipf_init(zipf *z, uint64_t n, double s)
{
    z->s = s;
    z->n = (double)n;
    z->hx1 = zhi(z, 1.5) - 1;
    z->hn = zhi(z, z->n + 0.5);
    z->sdiv = 2 - zhinv(z, zhi(z, 2.5) - zh(z, 2));
}

static uint64_t rng_s = 88172645463325252ull;
static double urand(void)
{
    rng_s ^= rng_s << 13;
    rng_s ^= rng_s >> 7;
    rng_s ^= rng_s << 17;
    return (double)(rng_s >> 11) * (1.0 / 9007199254740992.0);
}

/* Rank in 1..n, rank 1 the most frequent. */
static uint64_t zipf_draw(const zipf *z)
{
    for (;;) {
        double u = z->hn + urand() * (z->hx1 - z->hn);
        double x = zhinv(z, u);
        double k = floor(x + 0.5);
        if (k < 1) {
            k = 1;
        } else if (k > z->n) {
            k = z->n;
        }
        if (k - x <= z->sdiv || u >= zhi(z, k + 0.5) - zh(z, k)) {
            return (uint64_t)k;
        }
    }
}

/* ---- the slower tier ---- */

typedef struct loader_cfg {
    size_t dim;
    double ms;
} loader_cfg;

static float true_value(uint64_t id, size_t j)
{
    return (float)(id % 1000003) * 0.5f + (float)j;
}

static int loader(void *arg, size_t n, const uint64_t *ids, void *rows)
{
    const loader_cfg *lc = arg;
    struct timespec ts = {(time_t)(lc->ms / 1000), (long)(fmod(lc->ms, 1000.0) * 1e6)};
    nanosleep(&ts, NULL); /* the cost of one call to the slower tier */
    float *r = rows;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < lc->dim; j++) {
            r[i * lc->dim + j] = true_value(ids[i], j);
        }
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
    if (n == 0) {
        return 0;
    }
    qsort(v, n, sizeof(*v), cmp_double);
    return v[(size_t)(p * (double)(n - 1) + 0.5)];
}

int main(int argc, char **argv)
{
    cudis_options co;
    cudis_options_default(&co);
    co.timeout_ms = 2000;
    size_t requests = 2000, batch = 1000, dim = 64, report = 200;
    uint64_t nids = 10000000, seed = 1;
    double zs = 1.2, loader_ms = 1.0, threshold = 0.9;
    int policy = CUDIS_MISS_AUTO;
    bool flush = true;
    const char *label = "cache", *csv = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v && strcmp(a, "--no-flush") != 0) {
            fprintf(stderr, "option %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--port")) {
            co.port = atoi(v);
        } else if (!strcmp(a, "--unix")) {
            co.unix_path = v;
        } else if (!strcmp(a, "--password")) {
            co.password = v;
        } else if (!strcmp(a, "--requests")) {
            requests = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--batch")) {
            batch = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--ids")) {
            nids = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--zipf")) {
            zs = atof(v);
        } else if (!strcmp(a, "--dim")) {
            dim = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--loader-ms")) {
            loader_ms = atof(v);
        } else if (!strcmp(a, "--policy")) {
            policy = !strcmp(v, "fill")      ? CUDIS_MISS_FILL
                     : !strcmp(v, "default") ? CUDIS_MISS_DEFAULT
                                             : CUDIS_MISS_AUTO;
        } else if (!strcmp(a, "--threshold")) {
            threshold = atof(v);
        } else if (!strcmp(a, "--report")) {
            report = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--label")) {
            label = v;
        } else if (!strcmp(a, "--csv")) {
            csv = v;
        } else if (!strcmp(a, "--seed")) {
            seed = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--no-flush")) {
            flush = false;
            continue;
        } else {
            fprintf(stderr, "unknown option %s (see the comment at the top of inference.c)\n", a);
            return 2;
        }
        i++;
    }
    if (batch == 0 || dim == 0 || nids == 0 || report == 0 || zs <= 1.0) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    rng_s ^= seed * 0x9e3779b97f4a7c15ull;
    char err[256];
    cudis_pool *pool = cudis_pool_create(&co, 3, err, sizeof(err));
    cudis_table *t = cudis_table_create("feat", dim * sizeof(float), NULL);
    loader_cfg lc = {.dim = dim, .ms = loader_ms};
    cudis_rt_options ro;
    cudis_rt_options_default(&ro);
    ro.policy = policy;
    ro.hit_threshold = threshold;
    ro.window_ids = 20 * batch;
    cudis_rt *rt = pool && t ? cudis_rt_create(pool, t, loader, &lc, &ro, err, sizeof(err)) : NULL;
    if (!rt) {
        fprintf(stderr, "setup: %s\n", err);
        return 1;
    }
    if (flush) {
        cudis_conn *c;
        redisReply *r = NULL;
        if (cudis_pool_acquire(pool, 2000, &c) != 0) {
            fprintf(stderr, "cannot connect to the cache\n");
            return 1;
        }
        if (cudis_command(c, &r, "FLUSHALL") == 0) {
            freeReplyObject(r);
        }
        cudis_pool_release(pool, c);
    }
    zipf z;
    zipf_init(&z, nids, zs);
    uint64_t *ids = malloc(batch * sizeof(*ids));
    float *rows = malloc(batch * dim * sizeof(float));
    uint8_t *found = malloc(batch);
    double *lat = malloc(requests * sizeof(double)), *win = malloc(report * sizeof(double));
    FILE *f = csv ? fopen(csv, "a") : NULL;
    if (csv && !f) {
        fprintf(stderr, "cannot open %s\n", csv);
        return 1;
    }
    if (f && ftell(f) == 0) {
        fprintf(f, "label,requests,hit_ratio,p50_us,p99_us,rows_per_s,mode,loader_calls\n");
    }
    printf("%s: %zu requests x %zu ids, Zipf(%.2f) over %llu ids, %zu floats/row, loader %.1f "
           "ms/call\n",
           label, requests, batch, zs, (unsigned long long)nids, dim, loader_ms);
    printf("%-9s %9s %9s %9s %11s %8s %8s\n", "requests", "hit_ratio", "p50_us", "p99_us", "rows/s",
           "mode", "loads");
    cudis_rt_stats prev, st;
    cudis_rt_stats_get(rt, &prev);
    uint64_t t_win = cudis_mono_ns(), t_all = t_win, bad = 0, failed_calls = 0;
    size_t nw = 0;
    for (size_t r = 0; r < requests; r++) {
        for (size_t i = 0; i < batch; i++) {
            ids[i] = zipf_draw(&z) - 1;
        }
        uint64_t t0 = cudis_mono_ns();
        int rc = cudis_rt_get(rt, batch, ids, rows, found);
        double us = (double)(cudis_mono_ns() - t0) / 1e3;
        lat[r] = us;
        win[nw++] = us;
        failed_calls += rc != 0;
        for (size_t i = 0; i < batch; i++) {
            const float *row = rows + i * dim;
            bool ok =
                row[0] == true_value(ids[i], 0) && row[dim - 1] == true_value(ids[i], dim - 1);
            if (!ok && found[i] == CUDIS_ROW_MISS) {
                ok = row[0] == 0.0f && row[dim - 1] == 0.0f; /* default row */
            }
            bad += !ok && found[i] != CUDIS_ROW_FAILED;
        }
        if (nw == report || r + 1 == requests) {
            cudis_rt_stats_get(rt, &st);
            uint64_t now = cudis_mono_ns();
            double hr =
                st.ids > prev.ids ? (double)(st.hits - prev.hits) / (double)(st.ids - prev.ids) : 0;
            double rps = (double)(st.ids - prev.ids) / ((double)(now - t_win) / 1e9);
            double p50 = pct(win, nw, 0.5), p99 = pct(win, nw, 0.99);
            const char *mode = st.mode == CUDIS_MISS_DEFAULT ? "default" : "fill";
            printf("%-9zu %9.4f %9.0f %9.0f %11.0f %8s %8llu\n", r + 1, hr, p50, p99, rps, mode,
                   (unsigned long long)(st.loader_calls - prev.loader_calls));
            if (f) {
                fprintf(f, "%s,%zu,%.4f,%.0f,%.0f,%.0f,%s,%llu\n", label, r + 1, hr, p50, p99, rps,
                        mode, (unsigned long long)(st.loader_calls - prev.loader_calls));
            }
            prev = st;
            t_win = now;
            nw = 0;
        }
    }
    double secs = (double)(cudis_mono_ns() - t_all) / 1e9;
    cudis_rt_flush(rt);
    cudis_rt_stats_get(rt, &st);
    double p50 = pct(lat, requests, 0.5), p99 = pct(lat, requests, 0.99);
    printf("total %s: hit ratio %.4f, p50 %.0f us, p99 %.0f us, %.0f rows/s; loader %llu calls "
           "%.1f ms total, %llu ids sync + %llu async, %llu defaulted, %llu dropped, %llu mode "
           "switches, %llu bad rows, %llu failed calls\n",
           label, st.ids ? (double)st.hits / (double)st.ids : 0, p50, p99, (double)st.ids / secs,
           (unsigned long long)st.loader_calls, (double)st.loader_ns / 1e6,
           (unsigned long long)st.filled_sync, (unsigned long long)st.filled_async,
           (unsigned long long)st.defaulted, (unsigned long long)st.queue_dropped,
           (unsigned long long)st.mode_switches, (unsigned long long)bad,
           (unsigned long long)failed_calls);
    if (f) {
        fprintf(f, "%s,total,%.4f,%.0f,%.0f,%.0f,%s,%llu\n", label,
                st.ids ? (double)st.hits / (double)st.ids : 0, p50, p99, (double)st.ids / secs,
                st.mode == CUDIS_MISS_DEFAULT ? "default" : "fill",
                (unsigned long long)st.loader_calls);
        fclose(f);
    }
    cudis_rt_destroy(rt);
    cudis_table_destroy(t);
    cudis_pool_destroy(pool);
    free(ids);
    free(rows);
    free(found);
    free(lat);
    free(win);
    return bad ? 1 : 0;
}
