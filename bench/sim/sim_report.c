/*
 * sim_report.c - the simulator's table, CSV and gnuplot output, and the
 * reference hit ratios from ../shared/traces/README.md. See sim_report.h.
 */
#include "sim_report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cudis_err.h"

/* ------------------------------------------------------------------------
 * References (../shared/traces/README.md, "Reference hit ratios")
 * ---------------------------------------------------------------------- */

static const struct {
    const char *trace;
    double fraction;
    double lru, fifo;
} sim_refs[] = {
    {"lirs-sprite", 0.05, 0.6551, 0.6172},   {"lirs-sprite", 0.10, 0.8638, 0.8178},
    {"cache2k-web12", 0.10, 0.6822, 0.6426}, {"cache2k-web12", 0.25, 0.7765, 0.7429},
    {"lirs-2pools", 0.10, 0.5437, 0.4989},   {"lirs-2pools", 0.25, 0.6147, 0.5996},
    {"cloudphysics", 0.25, 0.3277, 0.3152},
};

double sim_reference(const char *trace, double fraction, const char *engine)
{
    for (size_t i = 0; i < sizeof(sim_refs) / sizeof(sim_refs[0]); i++) {
        if (strcmp(sim_refs[i].trace, trace) == 0 && fabs(sim_refs[i].fraction - fraction) < 1e-9) {
            if (strcmp(engine, "lru") == 0) {
                return sim_refs[i].lru;
            }
            if (strcmp(engine, "fifo") == 0) {
                return sim_refs[i].fifo;
            }
        }
    }
    return NAN;
}

static const struct {
    const char *trace;
    uint64_t bytes;
    const char *engine;
    double miss;
} sim_refs_bytes[] = {
    {"cloudphysics", 128ull << 20, "lru", 0.820},  {"cloudphysics", 1ull << 30, "lru", 0.630},
    {"cloudphysics", 128ull << 20, "fifo", 0.820}, {"cloudphysics", 1ull << 30, "fifo", 0.634},
    {"cloudphysics", 128ull << 20, "lfu", 0.805},  {"cloudphysics", 1ull << 30, "lfu", 0.565},
};

double sim_reference_bytes(const char *trace, uint64_t bytes, const char *engine)
{
    for (size_t i = 0; i < sizeof(sim_refs_bytes) / sizeof(sim_refs_bytes[0]); i++) {
        if (strcmp(sim_refs_bytes[i].trace, trace) == 0 && sim_refs_bytes[i].bytes == bytes &&
            strcmp(sim_refs_bytes[i].engine, engine) == 0) {
            return 1.0 - sim_refs_bytes[i].miss;
        }
    }
    return NAN;
}

static double ratio(uint64_t a, uint64_t b)
{
    return b > 0 ? (double)a / (double)b : 0.0;
}

static const char *fmt_bytes(uint64_t v, char *buf, size_t cap)
{
    return sim_format_bytes(v, buf, cap);
}

static void fmt_capacity(const sim_row *r, char *buf, size_t cap)
{
    if (r->bytes_mode) {
        fmt_bytes(r->capacity, buf, cap);
    } else {
        snprintf(buf, cap, "%llu (%g%%)", (unsigned long long)r->capacity, r->fraction * 100);
    }
}

/* ------------------------------------------------------------------------
 * Table
 * ---------------------------------------------------------------------- */

void sim_table_header(FILE *f, const uint32_t *threads, uint32_t nthreads, bool bytes_mode)
{
    fprintf(f, "%-16s %-14s %-20s %7s %7s %7s %8s %3s", "trace", bytes_mode ? "budget" : "capacity",
            "engine", "hit", "miss", "ref", "dLRU(pt)", "b1");
    if (nthreads > 0) {
        fprintf(f, " %8s", "hit-la");
    }
    for (uint32_t i = 0; i < nthreads; i++) {
        char h[24];
        snprintf(h, sizeof(h), "Mreq/s@%u", threads[i]);
        fprintf(f, " %9s", h);
    }
    if (nthreads > 0) {
        char h[24];
        snprintf(h, sizeof(h), "xLRU@%u", threads[nthreads - 1]);
        fprintf(f, " %7s", h);
    }
    for (uint32_t i = 0; i < nthreads; i++) {
        char h[24];
        snprintf(h, sizeof(h), "cpu-ns@%u", threads[i]);
        fprintf(f, " %9s", h);
    }
    fprintf(f, "\n");
}

void sim_table_row(FILE *f, const sim_row *r)
{
    char cap[48];
    fmt_capacity(r, cap, sizeof(cap));
    if (r->error[0] != '\0') {
        fprintf(f, "%-16s %-14s %-20s error: %s\n", r->trace, cap, r->label, r->error);
        return;
    }
    double h = ratio(r->hit.hits, r->hit.requests);
    char ref[16] = "-", d[16] = "-", b1[8] = "-";
    if (!isnan(r->ref)) {
        /* '!' marks a reference not reproduced to 4 decimals */
        snprintf(ref, sizeof(ref), r->ref_tol > 0.0001 ? "%.3f%s" : "%.4f%s", r->ref,
                 fabs(h - r->ref) < r->ref_tol ? "" : "!");
    }
    if (!isnan(r->delta_lru)) {
        snprintf(d, sizeof(d), "%+.3f", r->delta_lru);
    }
    if (r->batch1 >= 0) {
        snprintf(b1, sizeof(b1), "%s", r->batch1 ? "=" : "!=");
    }
    fprintf(f, "%-16s %-14s %-20s %7.4f %7.4f %7s %8s %3s", r->trace, cap, r->label, h, 1 - h, ref,
            d, b1);
    if (r->nspeed > 0) {
        fprintf(f, " %8.4f", r->speed_hit[0]);
    }
    for (uint32_t i = 0; i < r->nspeed; i++) {
        fprintf(f, " %9.2f", r->speed_rps[i] / 1e6);
    }
    if (r->nspeed > 0) {
        if (isnan(r->speed_vs_lru)) {
            fprintf(f, " %7s", "-");
        } else {
            fprintf(f, " %7.2f", r->speed_vs_lru);
        }
    }
    for (uint32_t i = 0; i < r->nspeed; i++) {
        fprintf(f, " %9.1f", r->speed_cpu_ns[i]);
    }
    fprintf(f, "\n");
}

/* ------------------------------------------------------------------------
 * CSV
 * ---------------------------------------------------------------------- */

void sim_csv_header(FILE *f, const uint32_t *threads, uint32_t nthreads)
{
    fprintf(f,
            "trace,requests,unique,capacity_kind,fraction,capacity,engine,label,ways,replay,"
            "batch,hits,hit_ratio,miss_ratio,ref_hit_ratio,delta_lru_pt,batch1_equal,batch1_hits,"
            "items,bytes_used,bytes_budget,set_failed,engine_calls,exact_seconds");
    for (uint32_t i = 0; i < nthreads; i++) {
        fprintf(f, ",lookaside_hit_ratio_t%u,req_per_s_t%u,cpu_ns_per_req_t%u", threads[i],
                threads[i], threads[i]);
    }
    fprintf(f, ",speed_vs_lru,error\n");
}

void sim_csv_row(FILE *f, const sim_row *r)
{
    double h = ratio(r->hit.hits, r->hit.requests);
    fprintf(f, "%s,%llu,%llu,%s,%g,%llu,%s,%s,%u,%s,%u,%llu,%.6f,%.6f,", r->trace,
            (unsigned long long)r->requests, (unsigned long long)r->unique,
            r->bytes_mode ? "bytes" : "objects", r->bytes_mode ? 0.0 : r->fraction,
            (unsigned long long)r->capacity, r->hit.engine_name, r->label, r->ways,
            r->replay == SIM_REPLAY_EXACT ? "exact" : "lookaside", r->batch,
            (unsigned long long)r->hit.hits, h, 1 - h);
    if (isnan(r->ref)) {
        fprintf(f, ",");
    } else {
        fprintf(f, "%.4f,", r->ref);
    }
    if (isnan(r->delta_lru)) {
        fprintf(f, ",");
    } else {
        fprintf(f, "%.4f,", r->delta_lru);
    }
    if (r->batch1 < 0) {
        fprintf(f, ",,");
    } else {
        fprintf(f, "%d,%llu,", r->batch1, (unsigned long long)r->batch1_hits);
    }
    fprintf(f, "%llu,%llu,%llu,%llu,%llu,%.6f", (unsigned long long)r->hit.stats.items,
            (unsigned long long)r->hit.stats.bytes_used,
            (unsigned long long)r->hit.stats.bytes_budget, (unsigned long long)r->hit.set_failed,
            (unsigned long long)r->hit.calls, r->hit.seconds);
    for (uint32_t i = 0; i < r->nspeed; i++) {
        fprintf(f, ",%.6f,%.0f,%.1f", r->speed_hit[i], r->speed_rps[i], r->speed_cpu_ns[i]);
    }
    if (isnan(r->speed_vs_lru)) {
        fprintf(f, ",");
    } else {
        fprintf(f, ",%.3f", r->speed_vs_lru);
    }
    /* errors never contain commas we care about: replace them */
    char err[sizeof(r->error)];
    snprintf(err, sizeof(err), "%s", r->error);
    for (char *p = err; *p; p++) {
        if (*p == ',' || *p == '\n' || *p == '"') {
            *p = ';';
        }
    }
    fprintf(f, ",%s\n", err);
}

/* ------------------------------------------------------------------------
 * gnuplot
 * ---------------------------------------------------------------------- */

static bool have_gnuplot(void)
{
    int rc = system("command -v gnuplot >/dev/null 2>&1");
    return rc == 0;
}

int sim_plot(const char *dir, const char *name, const sim_row *rows, size_t nrows, char *msg,
             size_t msg_len)
{
    if (nrows == 0) {
        snprintf(msg, msg_len, "nothing to plot");
        return CUDIS_OK;
    }
    const char *trace = rows[0].trace;
    bool bytes = rows[0].bytes_mode;
    /* columns: engine labels in first-seen order; rows: capacities in order */
    const char *labels[32];
    size_t nl = 0;
    uint64_t caps[256];
    size_t nc = 0;
    for (size_t i = 0; i < nrows; i++) {
        bool seen = false;
        for (size_t j = 0; j < nl; j++) {
            seen = seen || strcmp(labels[j], rows[i].label) == 0;
        }
        if (!seen && nl < 32) {
            labels[nl++] = rows[i].label;
        }
        seen = false;
        for (size_t j = 0; j < nc; j++) {
            seen = seen || caps[j] == rows[i].capacity;
        }
        if (!seen && nc < 256) {
            caps[nc++] = rows[i].capacity;
        }
    }
    char dat[1024], gp[1024], png[1024];
    snprintf(dat, sizeof(dat), "%s/%s-%s.dat", dir, name, trace);
    snprintf(gp, sizeof(gp), "%s/%s-%s.gp", dir, name, trace);
    snprintf(png, sizeof(png), "%s/%s-%s.png", dir, name, trace);
    /* the script names its files relative to dir (gnuplot runs there) */
    const char *dat_base = dat + strlen(dir) + 1, *gp_base = gp + strlen(dir) + 1,
               *png_base = png + strlen(dir) + 1;
    FILE *f = fopen(dat, "w");
    if (f == NULL) {
        snprintf(msg, msg_len, "%s: %s", dat, strerror(errno));
        return CUDIS_E_IO;
    }
    fprintf(f, "%s", bytes ? "MiB" : "objects");
    for (size_t j = 0; j < nl; j++) {
        fprintf(f, " %s", labels[j]);
    }
    fprintf(f, "\n");
    for (size_t c = 0; c < nc; c++) {
        if (bytes) {
            fprintf(f, "%g", (double)caps[c] / (1024.0 * 1024));
        } else {
            fprintf(f, "%llu", (unsigned long long)caps[c]);
        }
        for (size_t j = 0; j < nl; j++) {
            const sim_row *hit = NULL;
            for (size_t i = 0; i < nrows; i++) {
                if (rows[i].capacity == caps[c] && strcmp(rows[i].label, labels[j]) == 0 &&
                    rows[i].error[0] == '\0') {
                    hit = &rows[i];
                }
            }
            if (hit != NULL) {
                fprintf(f, " %.6f", 1.0 - ratio(hit->hit.hits, hit->hit.requests));
            } else {
                fprintf(f, " NaN");
            }
        }
        fprintf(f, "\n");
    }
    fclose(f);

    uint64_t lo = caps[0], hi = caps[0];
    for (size_t c = 1; c < nc; c++) {
        lo = caps[c] < lo ? caps[c] : lo;
        hi = caps[c] > hi ? caps[c] : hi;
    }
    f = fopen(gp, "w");
    if (f == NULL) {
        snprintf(msg, msg_len, "%s: %s", gp, strerror(errno));
        return CUDIS_E_IO;
    }
    double unit = bytes ? 1024.0 * 1024 : 1.0, pad = hi >= 8 * lo ? 1.25 : 1.05;
    double xlo = (double)lo / unit / pad, xhi = (double)hi / unit * pad;
    if (lo == hi) {
        xlo = (double)lo / unit / 2;
        xhi = (double)hi / unit * 2;
    }
    fprintf(
        f,
        "# cudis-sim: miss ratio against cache size for %s (run: gnuplot %s)\n"
        "set terminal pngcairo size 900,600 noenhanced\n"
        "set output '%s'\n"
        "set title 'cudis-sim: %s (%llu requests, %llu unique keys)'\n"
        "set xlabel 'cache size (%s)'\n"
        "set ylabel 'miss ratio'\n"
        "set key top right\n"
        "set grid\n"
        "set yrange [0:*]\n"
        "set xrange [%g:%g]\n"
        "%s\n"
        "plot for [i=2:%zu] '%s' using 1:i with linespoints pointsize 1.2 title columnheader(i)\n",
        trace, gp_base, png_base, trace, (unsigned long long)rows[0].requests,
        (unsigned long long)rows[0].unique, bytes ? "MiB" : "objects", xlo, xhi,
        hi >= 8 * lo ? "set logscale x" : "", nl + 1, dat_base);
    fclose(f);
    if (!have_gnuplot()) {
        snprintf(msg, msg_len,
                 "gnuplot not found: no PNG drawn (install gnuplot-nox; the data is in %s, the "
                 "script in %s)",
                 dat, gp);
        return 1;
    }
    char cmd[2200];
    snprintf(cmd, sizeof(cmd), "cd '%s' && gnuplot '%s' 2>&1", dir, gp_base);
    int rc = system(cmd);
    if (rc != 0) {
        snprintf(msg, msg_len, "gnuplot failed on %s (status %d)", gp, rc);
        return CUDIS_E_IO;
    }
    snprintf(msg, msg_len, "%s", png);
    return CUDIS_OK;
}
