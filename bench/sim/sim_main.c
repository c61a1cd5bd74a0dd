/*
 * sim_main.c - cudis-sim, the hit-ratio simulator: replays traces (files or
 * synthetic) through engines at several cache sizes, prints a table of hit
 * ratios and replay speeds, writes CSV and draws miss-ratio curves with
 * gnuplot. `cudis-sim --help` lists the options; bench/sim/README.md has the
 * commands and results.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudis_err.h"
#include "cudis_time.h"
#include "engine.h"
#include "sim_model.h"
#include "sim_replay.h"
#include "sim_report.h"
#include "sim_trace.h"

#ifndef CUDIS_SOURCE_DIR
#define CUDIS_SOURCE_DIR "."
#endif

#define MAX_LIST 64

typedef struct sim_engine_spec {
    char label[40]; /* as given: "cpu8", "cpu8@allkeys-random" */
    char name[24];  /* registry name: "cpu" */
    uint32_t ways;  /* 0 = default */
    uint32_t policy; /* after '@': a maxmemory-policy name (default allkeys-lru) */
    bool broken;    /* creation failed once: skipped afterwards */
} sim_engine_spec;

typedef struct sim_opts {
    const char *traces[MAX_LIST];
    int ntraces;
    sim_engine_spec engines[MAX_LIST];
    int nengines;
    double fractions[MAX_LIST];
    int nfractions;
    uint64_t bytes[MAX_LIST];
    int nbytes;
    uint32_t threads[SIM_MAX_T];
    uint32_t nthreads;
    uint32_t batch;
    int replay;
    double min_time;
    uint32_t value_len;
    const char *out_dir;
    const char *name;
    const char *trace_dir;
    bool plot;
    bool check_batch1;
    bool quiet;
    uint64_t seed;
    uint64_t objects_budget; /* objects mode: memory budget (0 = generous) */
    uint32_t max_value;      /* max_val_len: 0 = engine default, UINT32_MAX = the trace's largest */
} sim_opts;

/* ------------------------------------------------------------------------
 * Progress line (stderr)
 * ---------------------------------------------------------------------- */

typedef struct sim_progress {
    bool quiet;
    bool tty;
    uint64_t last_ns;
    uint64_t start_ns;
    int run, runs;
    char what[160];
    bool shown;
} sim_progress;

static sim_progress g_prog;

static void progress_show(uint64_t pass, uint64_t done, uint64_t total)
{
    double el = (double)(cudis_mono_ns() - g_prog.start_ns) / 1e9;
    fprintf(stderr, "%s[cudis-sim %.0fs] run %d/%d %s pass %llu: %.0f%% of %llu requests%s",
            g_prog.tty ? "\r\033[K" : "", el, g_prog.run, g_prog.runs, g_prog.what,
            (unsigned long long)pass + 1, total > 0 ? 100.0 * (double)done / (double)total : 0.0,
            (unsigned long long)total, g_prog.tty ? "" : "\n");
    fflush(stderr);
    g_prog.shown = true;
}

static void on_progress(void *arg, uint64_t pass, uint64_t done, uint64_t total)
{
    (void)arg;
    if (g_prog.quiet) {
        return;
    }
    uint64_t now = cudis_mono_ns();
    /* a line per second on a terminal, one per 10 s into a file */
    uint64_t every = g_prog.tty ? 1000000000ull : 10000000000ull;
    if (now - g_prog.last_ns >= every) {
        g_prog.last_ns = now;
        progress_show(pass, done, total);
    }
}

static void progress_begin(const char *fmt, ...)
{
    g_prog.run++;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_prog.what, sizeof(g_prog.what), fmt, ap);
    va_end(ap);
    if (g_prog.last_ns == 0) {
        g_prog.last_ns = cudis_mono_ns();
    }
}

static void progress_clear(void)
{
    if (g_prog.shown && g_prog.tty) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    g_prog.shown = false;
}

/* ------------------------------------------------------------------------
 * Options
 * ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: cudis-sim [options] [TRACE...]\n"
        "Replays traces through cache engines (each request a GET; a miss SETs the key;\n"
        "cold start, every request counted), prints hit ratios and replay speeds,\n"
        "writes CSV and draws miss ratio against cache size with gnuplot.\n"
        "\n"
        "TRACE: a name in the trace dir (lirs-sprite, cloudphysics, ...), a path to a\n"
        "  one-key-per-line file or a libCacheSim oracleGeneral .bin file, or a generator:\n"
        "    zipf:s=0.99,keys=100K,n=1M,seed=1     Zipf with exponent s\n"
        "    uniform:keys=100K,n=1M\n"
        "    scanzipf:s=0.99,scan=0.1,len=1000     scans over cold keys mixed into Zipf\n"
        "    latest:s=0.99,insert=0.05            YCSB 'latest': reads favour new keys\n"
        "  Default: every .keys and .bin file in the trace dir.\n"
        "\n"
        "  -e, --engines LIST     engines (default lru,fifo,lfu,sieve,s3fifo,cpu4,cpu8,cpu16); cpuN = the\n"
        "                         CCHT with N ways; any registry name works (%s);\n"
        "                         NAME@POLICY evicts by a maxmemory-policy (cpu8@allkeys-random)\n"
        "  -f, --fractions LIST   capacity in objects as fractions of the trace's unique keys:\n"
        "                         floor(unique*f/32)*32, min 32 (default 0.05,0.1,0.25)\n"
        "  -b, --bytes LIST       capacity in bytes instead (128M,1G): values take the trace's\n"
        "                         object sizes (traces without sizes: --value-size)\n"
        "  -B, --batch N          requests per batch (default 256)\n"
        "  -r, --replay MODE      hit-ratio replay: exact (default; equals one request at a\n"
        "                         time) or lookaside (GET batch, then SET its misses)\n"
        "  -T, --threads LIST     thread counts of the timed look-aside runs (default 1,2;\n"
        "                         0 = no timed runs). T threads replay disjoint key halves.\n"
        "  -s, --min-time SEC     timed runs repeat whole passes for at least this (0.3)\n"
        "      --value-size N     value bytes in objects mode (default 8)\n"
        "      --objects-budget B memory budget in objects mode (default 64MiB + 528 B per\n"
        "                         object: the item limit decides, never the bytes)\n"
        "      --seed N           engine hash seed (default 0: the engine's own)\n"
        "      --max-value N|trace the engines' max_val_len (default: the engine's, 1MiB);\n"
        "                         'trace' = the trace's largest object\n"
        "      --check-batch1     also replay with batch size 1 and compare hits\n"
        "  -o, --out DIR          CSV/PNG directory (default %s/bench/results/sim)\n"
        "  -n, --name NAME        file name stem: NAME.csv, NAME-TRACE.png (default sim)\n"
        "      --trace-dir DIR    where trace names are looked up (default $CUDIS_TRACE_DIR or\n"
        "                         %s/../shared/traces)\n"
        "      --no-plot          no gnuplot\n"
        "  -q, --quiet            no progress line on stderr\n"
        "  -h, --help\n"
        "\n"
        "In -e, modelW[s][e][cN][qP][g] is a reference model of the CCHT policy\n"
        "(sim_model.h): W ways, s = the CCHT's stamp slack, e = insert into the emptier\n"
        "bucket, cN = N candidate buckets (default 2), qP = quick demotion (a new key\n"
        "starts P%% of the victims' age old), g = a ghost of keys evicted before a hit.\n"
        "Hit ratio only, no timed runs.\n"
        "\n"
        "Exit status: 0; 2 when a reference hit ratio (../shared/traces/README.md) was\n"
        "not reproduced; 1 on errors.\n",
        "lru fifo lfu sieve s3fifo cpu gpu null auto", CUDIS_SOURCE_DIR, CUDIS_SOURCE_DIR);
}

static int split(char *s, char **parts, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *p = strtok_r(s, ",", &save); p != NULL && n < max; p = strtok_r(NULL, ",", &save)) {
        parts[n++] = p;
    }
    return n;
}

static int parse_engine(const char *s, sim_engine_spec *e)
{
    memset(e, 0, sizeof(*e));
    size_t l = strlen(s);
    if (l == 0 || l >= sizeof(e->label)) {
        return -1;
    }
    snprintf(e->label, sizeof(e->label), "%s", s);
    const char *at = strchr(s, '@');
    if (at != NULL) {
        if (engine_policy_code(at + 1, &e->policy) != 0) {
            return -1;
        }
        l = (size_t)(at - s);
    }
    size_t d = l;
    while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9') {
        d--;
    }
    snprintf(e->name, sizeof(e->name), "%.*s", (int)d, s);
    if (d < l) {
        e->ways = (uint32_t)strtoul(s + d, NULL, 10);
    }
    if (d == 0) {
        return -1;
    }
    return 0;
}

static int parse_opts(int argc, char **argv, sim_opts *o)
{
    static const struct option lo[] = {
        {"engines", required_argument, NULL, 'e'},
        {"fractions", required_argument, NULL, 'f'},
        {"bytes", required_argument, NULL, 'b'},
        {"batch", required_argument, NULL, 'B'},
        {"replay", required_argument, NULL, 'r'},
        {"threads", required_argument, NULL, 'T'},
        {"min-time", required_argument, NULL, 's'},
        {"out", required_argument, NULL, 'o'},
        {"name", required_argument, NULL, 'n'},
        {"trace-dir", required_argument, NULL, 1},
        {"no-plot", no_argument, NULL, 2},
        {"check-batch1", no_argument, NULL, 3},
        {"value-size", required_argument, NULL, 4},
        {"quiet", no_argument, NULL, 'q'},
        {"seed", required_argument, NULL, 5},
        {"objects-budget", required_argument, NULL, 6},
        {"max-value", required_argument, NULL, 7},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof(*o));
    static const char *const def_engines[] = {"lru",  "fifo", "lfu",  "sieve",
                                               "s3fifo", "cpu4", "cpu8", "cpu16"};
    for (size_t i = 0; i < sizeof(def_engines) / sizeof(def_engines[0]); i++) {
        parse_engine(def_engines[i], &o->engines[o->nengines++]);
    }
    o->fractions[0] = 0.05;
    o->fractions[1] = 0.10;
    o->fractions[2] = 0.25;
    o->nfractions = 3;
    o->threads[0] = 1;
    o->threads[1] = 2;
    o->nthreads = 2;
    o->batch = 256;
    o->replay = SIM_REPLAY_EXACT;
    o->min_time = 0.3;
    o->value_len = 8;
    o->name = "sim";
    o->plot = true;
    o->trace_dir = getenv("CUDIS_TRACE_DIR");
    static char def_out[1024], def_dir[1024];
    snprintf(def_out, sizeof(def_out), "%s/bench/results/sim", CUDIS_SOURCE_DIR);
    snprintf(def_dir, sizeof(def_dir), "%s/../shared/traces", CUDIS_SOURCE_DIR);
    o->out_dir = def_out;
    if (o->trace_dir == NULL || o->trace_dir[0] == '\0') {
        o->trace_dir = def_dir;
    }

    int c;
    char *parts[MAX_LIST];
    while ((c = getopt_long(argc, argv, "e:f:b:B:r:T:s:o:n:qh", lo, NULL)) != -1) {
        switch (c) {
        case 'e': {
            int n = split(optarg, parts, MAX_LIST);
            o->nengines = 0;
            for (int i = 0; i < n; i++) {
                if (parse_engine(parts[i], &o->engines[o->nengines]) != 0) {
                    fprintf(stderr, "cudis-sim: bad engine '%s'\n", parts[i]);
                    return -1;
                }
                o->nengines++;
            }
            break;
        }
        case 'f': {
            int n = split(optarg, parts, MAX_LIST);
            o->nfractions = 0;
            for (int i = 0; i < n; i++) {
                char *end;
                double v = strtod(parts[i], &end);
                if (*end != '\0' || !(v > 0 && v <= 1)) {
                    fprintf(stderr, "cudis-sim: bad fraction '%s' (0 < f <= 1)\n", parts[i]);
                    return -1;
                }
                o->fractions[o->nfractions++] = v;
            }
            break;
        }
        case 'b': {
            int n = split(optarg, parts, MAX_LIST);
            o->nbytes = 0;
            for (int i = 0; i < n; i++) {
                if (sim_parse_bytes(parts[i], &o->bytes[o->nbytes]) != CUDIS_OK ||
                    o->bytes[o->nbytes] == 0) {
                    fprintf(stderr, "cudis-sim: bad byte size '%s'\n", parts[i]);
                    return -1;
                }
                o->nbytes++;
            }
            break;
        }
        case 'B':
            o->batch = (uint32_t)strtoul(optarg, NULL, 10);
            if (o->batch < 1 || o->batch > 1000000) {
                fprintf(stderr, "cudis-sim: bad batch size '%s'\n", optarg);
                return -1;
            }
            break;
        case 'r':
            if (strcmp(optarg, "exact") == 0) {
                o->replay = SIM_REPLAY_EXACT;
            } else if (strcmp(optarg, "lookaside") == 0) {
                o->replay = SIM_REPLAY_LOOKASIDE;
            } else {
                fprintf(stderr, "cudis-sim: --replay is exact or lookaside\n");
                return -1;
            }
            break;
        case 'T': {
            int n = split(optarg, parts, SIM_MAX_T);
            o->nthreads = 0;
            for (int i = 0; i < n; i++) {
                unsigned long v = strtoul(parts[i], NULL, 10);
                if (v > 256) {
                    fprintf(stderr, "cudis-sim: bad thread count '%s'\n", parts[i]);
                    return -1;
                }
                if (v > 0) {
                    o->threads[o->nthreads++] = (uint32_t)v;
                }
            }
            break;
        }
        case 's': o->min_time = strtod(optarg, NULL); break;
        case 'o': o->out_dir = optarg; break;
        case 'n': o->name = optarg; break;
        case 1: o->trace_dir = optarg; break;
        case 2: o->plot = false; break;
        case 3: o->check_batch1 = true; break;
        case 4: o->value_len = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 5: o->seed = strtoull(optarg, NULL, 0); break;
        case 7:
            if (strcmp(optarg, "trace") == 0) {
                o->max_value = UINT32_MAX;
            } else {
                uint64_t v;
                if (sim_parse_bytes(optarg, &v) != CUDIS_OK || v == 0 || v >= UINT32_MAX) {
                    fprintf(stderr, "cudis-sim: bad --max-value '%s'\n", optarg);
                    return -1;
                }
                o->max_value = (uint32_t)v;
            }
            break;
        case 6:
            if (sim_parse_bytes(optarg, &o->objects_budget) != CUDIS_OK) {
                fprintf(stderr, "cudis-sim: bad byte size '%s'\n", optarg);
                return -1;
            }
            break;
        case 'q': o->quiet = true; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    for (int i = optind; i < argc && o->ntraces < MAX_LIST; i++) {
        o->traces[o->ntraces++] = argv[i];
    }
    return 0;
}

static int mkdir_p(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                return -1;
            }
            *p = '/';
        }
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Runs
 * ---------------------------------------------------------------------- */

static void fill_cfg(const sim_opts *o, const sim_trace *t, const sim_engine_spec *es,
                     bool bytes_mode, uint64_t capacity, sim_run_cfg *c)
{
    sim_run_cfg_default(c);
    c->engine = es->name;
    c->ways = es->ways;
    c->policy = es->policy;
    c->batch = o->batch;
    c->value_len = o->value_len;
    c->progress = on_progress;
    c->seed = o->seed;
    c->max_val_len =
        o->max_value == UINT32_MAX ? (t->max_size > 0 ? t->max_size : 1) : o->max_value;
    if (bytes_mode) {
        c->max_items = 0;
        c->memory_bytes = capacity;
        c->use_sizes = t->sizes != NULL;
    } else {
        c->max_items = capacity;
        c->memory_bytes = o->objects_budget; /* 0: generous, see sim_objects_budget */
    }
}

/* One (trace, capacity, engine) row: the hit-ratio run, the optional
 * batch-1 check, and the timed runs. */
static void run_row(const sim_opts *o, const sim_trace *t, sim_engine_spec *es, bool bytes_mode,
                    double fraction, uint64_t capacity, sim_row *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->trace, sizeof(r->trace), "%s", t->name);
    r->requests = t->n;
    r->unique = t->unique;
    r->bytes_mode = bytes_mode;
    r->fraction = fraction;
    r->capacity = capacity;
    snprintf(r->label, sizeof(r->label), "%s", es->label);
    r->ways = es->ways;
    r->replay = o->replay;
    r->batch = o->batch;
    r->ref = bytes_mode ? sim_reference_bytes(t->name, capacity, es->label)
                        : sim_reference(t->name, fraction, es->label);
    r->ref_tol = bytes_mode ? 0.0005 : 0.00005;
    r->delta_lru = NAN;
    r->speed_vs_lru = NAN;
    r->batch1 = -1;
    if (es->broken) {
        snprintf(r->error, sizeof(r->error), "skipped (engine could not be created earlier)");
        return;
    }

    sim_model_cfg mc = {.capacity = capacity, .seed = o->seed};
    bool mslack;
    if (sim_model_parse(es->label, &mc, &mslack)) {
        if (bytes_mode) {
            snprintf(r->error, sizeof(r->error), "the model counts objects, not bytes");
            return;
        }
        uint32_t mways = mc.ways;
        uint64_t slots = (capacity + mways - 1) / mways * mways;
        mc.slack = mslack ? sim_model_ccht_slack(slots) : 0;
        progress_begin("%s cap %llu %s (model)", t->name, (unsigned long long)capacity, es->label);
        int64_t hits = sim_model_run(t, &mc, &r->hit.stats.items);
        if (hits < 0) {
            snprintf(r->error, sizeof(r->error), "out of memory");
            return;
        }
        snprintf(r->hit.engine_name, sizeof(r->hit.engine_name), "model");
        r->ways = mways;
        r->hit.hits = (uint64_t)hits;
        r->hit.requests = t->n;
        return;
    }
    sim_run_cfg c;
    fill_cfg(o, t, es, bytes_mode, capacity, &c);
    c.mode = o->replay;
    c.threads = 1;
    progress_begin("%s cap %llu %s (%s)", t->name, (unsigned long long)capacity, es->label,
                   o->replay == SIM_REPLAY_EXACT ? "exact" : "lookaside");
    char why[256] = "";
    int rc = sim_run(t, &c, &r->hit, why, sizeof(why));
    if (rc != CUDIS_OK) {
        snprintf(r->error, sizeof(r->error), "%s", why);
        if (rc == CUDIS_E_NOENGINE) {
            es->broken = true;
        }
        return;
    }
    if (o->check_batch1) {
        sim_run_result b1;
        c.batch = 1;
        progress_begin("%s cap %llu %s (batch 1)", t->name, (unsigned long long)capacity,
                       es->label);
        rc = sim_run(t, &c, &b1, why, sizeof(why));
        if (rc == CUDIS_OK) {
            r->batch1 = b1.hits == r->hit.hits;
            r->batch1_hits = b1.hits;
        }
        c.batch = o->batch;
    }
    for (uint32_t i = 0; i < o->nthreads; i++) {
        sim_run_result s;
        c.mode = SIM_REPLAY_LOOKASIDE;
        c.threads = o->threads[i];
        c.min_seconds = o->min_time;
        progress_begin("%s cap %llu %s (timed, %u threads)", t->name, (unsigned long long)capacity,
                       es->label, o->threads[i]);
        rc = sim_run(t, &c, &s, why, sizeof(why));
        if (rc != CUDIS_OK) {
            snprintf(r->error, sizeof(r->error), "timed run, %u threads: %s", o->threads[i], why);
            return;
        }
        r->speed_threads[r->nspeed] = o->threads[i];
        r->speed_rps[r->nspeed] = s.req_per_s;
        r->speed_cpu_ns[r->nspeed] =
            s.total_requests ? s.cpu_seconds * 1e9 / (double)s.total_requests : 0;
        r->speed_hit[r->nspeed] = s.total_requests ? (double)s.total_hits / s.total_requests : 0;
        r->nspeed++;
    }
}

/* Deltas against the LRU row of the same capacity. */
static void fill_lru_deltas(sim_row *rows, size_t n)
{
    const sim_row *lru = NULL;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].label, "lru") == 0 && rows[i].error[0] == '\0') {
            lru = &rows[i];
        }
    }
    if (lru == NULL || lru->hit.requests == 0) {
        return;
    }
    double lh = (double)lru->hit.hits / (double)lru->hit.requests;
    for (size_t i = 0; i < n; i++) {
        sim_row *r = &rows[i];
        if (r->error[0] != '\0' || r->hit.requests == 0) {
            continue;
        }
        r->delta_lru = 100.0 * ((double)r->hit.hits / (double)r->hit.requests - lh);
        if (r->nspeed > 0 && lru->nspeed == r->nspeed && lru->speed_rps[r->nspeed - 1] > 0) {
            r->speed_vs_lru = r->speed_rps[r->nspeed - 1] / lru->speed_rps[lru->nspeed - 1];
        }
    }
}

int main(int argc, char **argv)
{
    sim_opts o;
    if (parse_opts(argc, argv, &o) != 0) {
        return 1;
    }
    g_prog.quiet = o.quiet;
    g_prog.tty = isatty(2);
    g_prog.start_ns = cudis_mono_ns();

    char **listed = NULL;
    int nlisted = 0;
    if (o.ntraces == 0) {
        nlisted = sim_trace_list(o.trace_dir, &listed);
        if (nlisted <= 0) {
            fprintf(stderr,
                    "cudis-sim: no traces given and none found in %s (use --trace-dir, "
                    "CUDIS_TRACE_DIR, a path, or a generator such as zipf:s=0.99)\n",
                    o.trace_dir);
            return 1;
        }
        for (int i = 0; i < nlisted && o.ntraces < MAX_LIST; i++) {
            o.traces[o.ntraces++] = listed[i];
        }
    }
    if (mkdir_p(o.out_dir) != 0) {
        fprintf(stderr, "cudis-sim: cannot create %s: %s\n", o.out_dir, strerror(errno));
        return 1;
    }
    char csv_path[1200];
    snprintf(csv_path, sizeof(csv_path), "%s/%s.csv", o.out_dir, o.name);
    FILE *csv = fopen(csv_path, "w");
    if (csv == NULL) {
        fprintf(stderr, "cudis-sim: cannot write %s: %s\n", csv_path, strerror(errno));
        return 1;
    }
    sim_csv_header(csv, o.threads, o.nthreads);

    bool bytes_mode = o.nbytes > 0;
    int ncap = bytes_mode ? o.nbytes : o.nfractions;
    g_prog.runs = o.ntraces * ncap * o.nengines * (1 + (o.check_batch1 ? 1 : 0) + (int)o.nthreads);
    double load[1] = {0};
    if (getloadavg(load, 1) < 1) {
        load[0] = -1;
    }
    printf("cudis-sim: replay %s, batch %u; timed runs: look-aside, >= %.2fs each; "
           "%ld CPUs, load average %.2f\n",
           o.replay == SIM_REPLAY_EXACT ? "exact (= one request at a time)" : "look-aside", o.batch,
           o.min_time, sysconf(_SC_NPROCESSORS_ONLN), load[0]);
    sim_table_header(stdout, o.threads, o.nthreads, bytes_mode);
    fflush(stdout);

    int status = 0;
    size_t nrows_max = (size_t)ncap * (size_t)o.nengines;
    sim_row *rows = calloc(nrows_max > 0 ? nrows_max : 1, sizeof(sim_row));
    if (rows == NULL) {
        fclose(csv);
        return 1;
    }
    for (int ti = 0; ti < o.ntraces; ti++) {
        sim_trace t;
        char why[512];
        if (!o.quiet) {
            fprintf(stderr, "%s[cudis-sim %.0fs] loading %s%s", g_prog.tty ? "\r\033[K" : "",
                    (double)(cudis_mono_ns() - g_prog.start_ns) / 1e9, o.traces[ti],
                    g_prog.tty ? "" : "\n");
            g_prog.shown = true;
        }
        if (sim_trace_load(o.traces[ti], o.trace_dir, &t, why, sizeof(why)) != CUDIS_OK) {
            fprintf(stderr, "cudis-sim: %s\n", why);
            status = 1;
            continue;
        }
        if (bytes_mode && t.sizes == NULL) {
            fprintf(stderr,
                    "cudis-sim: note: %s has no object sizes; every value is %u bytes "
                    "(--value-size)\n",
                    t.name, o.value_len);
        }
        size_t nrows = 0;
        for (int ci = 0; ci < ncap; ci++) {
            uint64_t cap =
                bytes_mode ? o.bytes[ci] : sim_capacity_objects(t.unique, o.fractions[ci]);
            double frac = bytes_mode ? 0 : o.fractions[ci];
            size_t first = nrows;
            for (int ei = 0; ei < o.nengines; ei++) {
                run_row(&o, &t, &o.engines[ei], bytes_mode, frac, cap, &rows[nrows]);
                nrows++;
            }
            fill_lru_deltas(&rows[first], nrows - first);
            progress_clear();
            for (size_t i = first; i < nrows; i++) {
                sim_table_row(stdout, &rows[i]);
                sim_csv_row(csv, &rows[i]);
                const sim_row *r = &rows[i];
                if (r->error[0] != '\0') {
                    status = status ? status : 1;
                } else if (!isnan(r->ref) && fabs((double)r->hit.hits / (double)r->hit.requests -
                                                  r->ref) >= r->ref_tol) {
                    status = 2;
                }
                if (r->hit.set_failed > 0) {
                    fprintf(stderr, "cudis-sim: note: %s %s: %llu SETs refused (%s)\n", r->trace,
                            r->label, (unsigned long long)r->hit.set_failed,
                            cudis_strerror(r->hit.set_error));
                }
            }
            fflush(stdout);
            fflush(csv);
        }
        if (o.plot && nrows > 0) {
            char msg[1400];
            int rc = sim_plot(o.out_dir, o.name, rows, nrows, msg, sizeof(msg));
            if (rc == CUDIS_OK) {
                printf("plot: %s\n", msg);
            } else {
                fprintf(stderr, "cudis-sim: %s\n", msg);
            }
        }
        sim_trace_free(&t);
    }
    progress_clear();
    fclose(csv);
    printf("csv: %s\n", csv_path);
    free(rows);
    for (int i = 0; i < nlisted; i++) {
        free(listed[i]);
    }
    free(listed);
    return status;
}
