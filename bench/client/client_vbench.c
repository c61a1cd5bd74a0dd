/*
 * client_vbench.c - libcudis vector-get benchmark, several servers side by
 * side in one run. For each target (NAME=PORT or NAME=unix:/path) it loads
 * `keys` rows of `row-bytes` bytes, then runs timed rounds of cudis_vget()
 * of `rows` uniformly random ids, alternating targets round by round so
 * machine noise hits all of them alike. It also times cudis_vset() with a
 * TTL in both TTL modes (MSET+PEXPIRE vs SET PX). Prints a table with
 * p50/p99/p99.9 latency and rows/s per target and the ratio of each to the
 * last target, plus CPU time per call of the server (from INFO cpu) and of
 * this client (a measure that machine noise hardly moves), and writes CSV.
 *
 * Usage: cudis-client-vbench --target cudis=PORT --target redis=PORT
 *        [--rows 1000] [--row-bytes 256] [--keys 100000] [--chunk 256]
 *        [--seconds 6] [--rounds 6] [--csv FILE] [--no-set]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cudis.h"
#include "cudis_time.h"

#define MAX_TARGETS 4

typedef struct target {
    char name[32];
    cudis_options o;
    char unix_path[256];
    cudis_conn *c;
    double *lat_us;
    size_t nlat, caplat;
    double busy_s;
    uint64_t rows_done, misses;
    double set_rows_s[2];
    double srv_cpu_s, cli_cpu_s; /* CPU seconds of the server (INFO) and this client */
} target;

/* used_cpu_sys + used_cpu_user from INFO cpu (Redis and cudis-server both
 * report them); -1 if unavailable. */
static double server_cpu(cudis_conn *c)
{
    redisReply *r = NULL;
    double v = -1;
    if (cudis_command(c, &r, "INFO cpu") == 0 && r->type == REDIS_REPLY_STRING) {
        const char *a = strstr(r->str, "used_cpu_sys:"), *b = strstr(r->str, "used_cpu_user:");
        if (a && b) {
            v = atof(a + 13) + atof(b + 14);
        }
    }
    if (r) {
        freeReplyObject(r);
    }
    return v;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *v, size_t n, double p)
{
    if (n == 0) {
        return 0;
    }
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

static void mkdirs(const char *path)
{
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    }
}

int main(int argc, char **argv)
{
    target tg[MAX_TARGETS];
    int nt = 0;
    size_t rows = 1000, rb = 256, keys = 100000, chunk = 256;
    double seconds = 6;
    int rounds = 6;
    bool do_set = true;
    const char *csv = "bench/results/client/vbench.csv";
    memset(tg, 0, sizeof(tg));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--target") && v && nt < MAX_TARGETS) {
            target *t = &tg[nt++];
            const char *eq = strchr(v, '=');
            if (!eq) {
                fprintf(stderr, "--target NAME=PORT or NAME=unix:/path\n");
                return 2;
            }
            snprintf(t->name, sizeof(t->name), "%.*s", (int)(eq - v), v);
            cudis_options_default(&t->o);
            t->o.timeout_ms = 5000;
            if (!strncmp(eq + 1, "unix:", 5)) {
                snprintf(t->unix_path, sizeof(t->unix_path), "%s", eq + 6);
                t->o.unix_path = t->unix_path;
            } else {
                t->o.port = atoi(eq + 1);
            }
            i++;
        } else if (!strcmp(a, "--rows") && v) {
            rows = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--row-bytes") && v) {
            rb = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--keys") && v) {
            keys = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--chunk") && v) {
            chunk = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--seconds") && v) {
            seconds = atof(argv[++i]);
        } else if (!strcmp(a, "--rounds") && v) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(a, "--csv") && v) {
            csv = argv[++i];
        } else if (!strcmp(a, "--no-set")) {
            do_set = false;
        } else {
            fprintf(stderr, "unknown or incomplete option %s (see the comment at the top)\n", a);
            return 2;
        }
    }
    if (nt == 0 || rows == 0 || rb == 0 || keys < rows || rounds < 1) {
        fprintf(stderr, "usage: %s --target NAME=PORT [--target ...] [options]\n", argv[0]);
        return 2;
    }
    cudis_table_options to;
    cudis_table_options_default(&to);
    to.chunk_rows = chunk;
    cudis_table *tab = cudis_table_create("vb", rb, &to);
    const size_t load_batch = 5000;
    uint64_t *ids = malloc(keys * sizeof(*ids));
    uint8_t *buf = malloc((rows > load_batch ? rows : load_batch) * rb);
    uint8_t *found = malloc(rows > load_batch ? rows : load_batch);
    if (!tab || !ids || !buf || !found) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < keys; i++) {
        ids[i] = i;
    }
    for (size_t j = 0; j < load_batch * rb; j++) {
        buf[j] = (uint8_t)(j * 31 + 7);
    }
    /* connect and load */
    for (int k = 0; k < nt; k++) {
        char err[256];
        tg[k].c = cudis_connect(&tg[k].o, err, sizeof(err));
        if (!tg[k].c) {
            fprintf(stderr, "%s: %s\n", tg[k].name, err);
            return 1;
        }
        redisReply *r = NULL;
        if (cudis_command(tg[k].c, &r, "FLUSHALL") == 0) {
            freeReplyObject(r);
        }
        for (size_t i = 0; i < keys; i += load_batch) {
            size_t n = keys - i < load_batch ? keys - i : load_batch;
            int rc = cudis_vset(tg[k].c, tab, n, ids + i, buf, 0, NULL, NULL);
            if (rc) {
                fprintf(stderr, "%s: load: %s\n", tg[k].name, cudis_conn_errstr(tg[k].c));
                return 1;
            }
        }
        tg[k].caplat = 1 << 16;
        tg[k].lat_us = malloc(tg[k].caplat * sizeof(double));
    }
    /* timed rounds, targets alternating */
    uint64_t *q = malloc(rows * sizeof(*q));
    double per = seconds / rounds / nt;
    for (int r = 0; r < rounds; r++) {
        for (int k0 = 0; k0 < nt; k0++) {
            int k = (k0 + r) % nt; /* rotate who goes first */
            target *t = &tg[k];
            uint64_t start = cudis_mono_ns(), end = start + (uint64_t)(per * 1e9);
            /* a few warm-up calls per round are not counted */
            for (int w = 0; w < 3; w++) {
                for (size_t i = 0; i < rows; i++) {
                    q[i] = rng() % keys;
                }
                cudis_vget(t->c, tab, rows, q, buf, found, NULL);
            }
            double scpu0 = server_cpu(t->c), ccpu0 = thread_cpu();
            start = cudis_mono_ns();
            uint64_t now = start;
            while (now < end) {
                for (size_t i = 0; i < rows; i++) {
                    q[i] = rng() % keys;
                }
                uint64_t t0 = cudis_mono_ns();
                cudis_vresult vr;
                int rc = cudis_vget(t->c, tab, rows, q, buf, found, &vr);
                now = cudis_mono_ns();
                if (rc) {
                    fprintf(stderr, "%s: vget: %s\n", t->name, cudis_conn_errstr(t->c));
                    return 1;
                }
                if (t->nlat == t->caplat) {
                    t->caplat *= 2;
                    t->lat_us = realloc(t->lat_us, t->caplat * sizeof(double));
                }
                t->lat_us[t->nlat++] = (double)(now - t0) / 1e3;
                t->rows_done += rows;
                t->misses += vr.misses;
            }
            t->busy_s += (double)(now - start) / 1e9;
            t->cli_cpu_s += thread_cpu() - ccpu0;
            double scpu1 = server_cpu(t->c);
            t->srv_cpu_s =
                (scpu0 < 0 || scpu1 < 0 || t->srv_cpu_s < 0) ? -1 : t->srv_cpu_s + scpu1 - scpu0;
        }
    }
    /* TTL write modes: rows/s of vset with a TTL, modes and targets
     * alternating over 4 passes so noise hits both modes alike */
    if (do_set) {
        double set_s[MAX_TARGETS][2] = {{0}};
        size_t set_rows[MAX_TARGETS][2] = {{0}};
        cudis_table *st[2];
        for (int mode = 0; mode < 2; mode++) {
            cudis_table_options so = to;
            so.ttl_mode = mode;
            st[mode] = cudis_table_create(mode ? "vs1" : "vs0", rb, &so);
        }
        const size_t n = load_batch;
        for (int pass = 0; pass < 4; pass++) {
            for (int m0 = 0; m0 < 2; m0++) {
                int mode = (m0 + pass) % 2;
                for (int k = 0; k < nt; k++) {
                    uint64_t t0 = cudis_mono_ns();
                    for (int rep = 0; rep < 5; rep++) {
                        uint64_t base = ((uint64_t)(pass * 5 + rep) * n) % (keys - n + 1);
                        if (cudis_vset(tg[k].c, st[mode], n, ids + base, buf, 60000, NULL, NULL)) {
                            fprintf(stderr, "%s: vset: %s\n", tg[k].name,
                                    cudis_conn_errstr(tg[k].c));
                            break;
                        }
                        set_rows[k][mode] += n;
                    }
                    set_s[k][mode] += (double)(cudis_mono_ns() - t0) / 1e9;
                }
            }
        }
        for (int k = 0; k < nt; k++) {
            for (int mode = 0; mode < 2; mode++) {
                tg[k].set_rows_s[mode] =
                    set_s[k][mode] > 0 ? (double)set_rows[k][mode] / set_s[k][mode] : 0;
            }
        }
        cudis_table_destroy(st[0]);
        cudis_table_destroy(st[1]);
    }
    /* report */
    mkdirs(csv);
    FILE *f = fopen(csv, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", csv, strerror(errno));
    } else {
        fprintf(
            f,
            "target,rows,row_bytes,chunk,calls,p50_us,p99_us,p999_us,rows_per_s,"
            "miss_rows,server_cpu_us_per_call,client_cpu_us_per_call,vset_ttl_mset_pexpire_rows_s,"
            "vset_ttl_set_px_rows_s\n");
    }
    printf("vector get: %zu rows x %zu B, %zu keys, chunk %zu, %d rounds\n", rows, rb, keys, chunk,
           rounds);
    printf("%-8s %7s %8s %8s %9s %10s %7s %9s %9s %14s %13s\n", "target", "calls", "p50_us",
           "p99_us", "p99.9_us", "rows/s", "ratio", "srvCPU/c", "cliCPU/c", "setTTL:MSET+PX",
           "setTTL:SETPX");
    double base_rps = tg[nt - 1].rows_done / tg[nt - 1].busy_s;
    for (int k = 0; k < nt; k++) {
        target *t = &tg[k];
        qsort(t->lat_us, t->nlat, sizeof(double), cmp_double);
        double rps = (double)t->rows_done / t->busy_s;
        double scpu = t->srv_cpu_s < 0 ? -1 : t->srv_cpu_s * 1e6 / (double)t->nlat;
        double ccpu = t->cli_cpu_s * 1e6 / (double)t->nlat;
        printf("%-8s %7zu %8.1f %8.1f %9.1f %10.0f %6.2fx %9.1f %9.1f %14.0f %13.0f\n", t->name,
               t->nlat, pct(t->lat_us, t->nlat, 0.5), pct(t->lat_us, t->nlat, 0.99),
               pct(t->lat_us, t->nlat, 0.999), rps, rps / base_rps, scpu, ccpu, t->set_rows_s[0],
               t->set_rows_s[1]);
        if (f) {
            fprintf(f, "%s,%zu,%zu,%zu,%zu,%.1f,%.1f,%.1f,%.0f,%llu,%.1f,%.1f,%.0f,%.0f\n", t->name,
                    rows, rb, chunk, t->nlat, pct(t->lat_us, t->nlat, 0.5),
                    pct(t->lat_us, t->nlat, 0.99), pct(t->lat_us, t->nlat, 0.999), rps,
                    (unsigned long long)t->misses, scpu, ccpu, t->set_rows_s[0], t->set_rows_s[1]);
        }
        if (t->misses) {
            printf("  note: %s missed %llu rows (evicted?)\n", t->name,
                   (unsigned long long)t->misses);
        }
        cudis_close(t->c);
    }
    if (nt >= 2) {
        double p99 = pct(tg[0].lat_us, tg[0].nlat, 0.99);
        double ratio = ((double)tg[0].rows_done / tg[0].busy_s) / base_rps;
        printf("targets (%s vs %s): p99 %.0f us %s 1000 us; rows/s ratio %.2fx %s 1.2x\n",
               tg[0].name, tg[nt - 1].name, p99, p99 < 1000 ? "<" : ">=", ratio,
               ratio >= 1.2 ? ">=" : "<");
    }
    if (f) {
        fclose(f);
        printf("csv: %s\n", csv);
    }
    for (int k = 0; k < nt; k++) {
        free(tg[k].lat_us);
    }
    free(q);
    free(ids);
    free(buf);
    free(found);
    cudis_table_destroy(tab);
    return 0;
}
