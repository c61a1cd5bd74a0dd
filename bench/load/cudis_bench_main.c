/*
 * cudis_bench_main.c - cudis-bench, the load generator that measures cudis,
 * redis-server and memcached with one client: parses the command line,
 * runs load_run() (load_bench.h), prints a result table and appends a CSV
 * row. Run `cudis-bench --help` for the options.
 */
#include "load_bench.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cudis-bench [options]\n"
            "  -h, --host HOST          server address (127.0.0.1)\n"
            "  -p, --port N             server port (6379)\n"
            "  -P, --protocol P         resp (cudis, redis-server) or memcache (resp)\n"
            "  -t, --threads N          client threads, each its own event loop (1)\n"
            "  -c, --conns N            connections in all (50)\n"
            "  -d, --pipeline N         requests outstanding per connection (1)\n"
            "  -k, --keys N             key range: ids 0..N-1 (100000)\n"
            "      --dist D             uniform or zipf (zipf)\n"
            "      --zipf S             Zipf exponent (0.99; implies --dist zipf)\n"
            "  -v, --value-size SPEC    32 | 16-1024 (uniform) | 32:5,512:3,4096:2 (weights) (32)\n"
            "  -r, --get-ratio R        fraction of requests that read, 0..1 (0.9)\n"
            "  -m, --mget K             reads are MGET / multi-key get of K keys (off)\n"
            "      --multi N            each request is a transaction: MULTI, N GET/SET, EXEC\n"
            "  -D, --duration S         measure for S seconds (10)\n"
            "  -n, --requests N         measure N requests instead of a duration\n"
            "  -w, --warmup S           run the workload S seconds before measuring (0)\n"
            "  -W, --warmup-requests N  run N workload requests before measuring (with -n)\n"
            "      --no-load            skip the load phase (SET of every key first)\n"
            "      --fill-on-miss       cache-aside: a GET miss is followed by a SET of the key\n"
            "      --seed N             random seed (1)\n"
            "      --key-prefix S       key text prefix (\"key:\"), keys are prefix + 12 digits\n"
            "      --hash KEY           keys are fields of hash KEY: HGET, HSET, HMGET (with -m)\n"
            "      --timeout S          fail when no reply comes for S seconds (10)\n"
            "      --label S            server name for the table and CSV (the protocol)\n"
            "      --workload S         workload name for the table and CSV (custom)\n"
            "      --csv FILE           append a CSV row (header when the file is new)\n"
            "      --latency-out FILE   write the latency percentile spectrum as CSV\n"
            "      --items              ask the server for its item count after the run\n"
            "  -q, --quiet              no progress lines\n"
            "      --help               this text\n");
}

enum {
    OPT_DIST = 1000,
    OPT_ZIPF,
    OPT_NOLOAD,
    OPT_FILL,
    OPT_SEED,
    OPT_PREFIX,
    OPT_TIMEOUT,
    OPT_LABEL,
    OPT_WORKLOAD,
    OPT_CSV,
    OPT_LATOUT,
    OPT_ITEMS,
    OPT_HELP,
    OPT_MULTI,
    OPT_HASH,
};

static const char *csv_header =
    "server,workload,protocol,threads,conns,pipeline,keys,dist,zipf,value_size,get_ratio,mget,"
    "duration_s,requests,rps,keys_per_s,gets,sets,hits,misses,hit_ratio,errors,items,"
    "mean_us,p50_us,p90_us,p99_us,p999_us,max_us,load_s,multi,commands_per_s\n";

int main(int argc, char **argv)
{
    struct load_opts o;
    load_opts_default(&o);
    const char *label = NULL, *workload = "custom", *csv = NULL, *latout = NULL;
    const char *vspec = "32";
    bool items = false;
    char *dist = NULL;
    static const struct option longopts[] = {
        {"host", required_argument, 0, 'h'},     {"port", required_argument, 0, 'p'},
        {"protocol", required_argument, 0, 'P'}, {"threads", required_argument, 0, 't'},
        {"conns", required_argument, 0, 'c'},    {"pipeline", required_argument, 0, 'd'},
        {"keys", required_argument, 0, 'k'},     {"dist", required_argument, 0, OPT_DIST},
        {"zipf", required_argument, 0, OPT_ZIPF}, {"value-size", required_argument, 0, 'v'},
        {"get-ratio", required_argument, 0, 'r'}, {"mget", required_argument, 0, 'm'},
        {"multi", required_argument, 0, OPT_MULTI},
        {"duration", required_argument, 0, 'D'}, {"requests", required_argument, 0, 'n'},
        {"warmup", required_argument, 0, 'w'},   {"warmup-requests", required_argument, 0, 'W'},   {"no-load", no_argument, 0, OPT_NOLOAD},
        {"fill-on-miss", no_argument, 0, OPT_FILL}, {"seed", required_argument, 0, OPT_SEED},
        {"key-prefix", required_argument, 0, OPT_PREFIX}, {"hash", required_argument, 0, OPT_HASH},
        {"timeout", required_argument, 0, OPT_TIMEOUT}, {"label", required_argument, 0, OPT_LABEL},
        {"workload", required_argument, 0, OPT_WORKLOAD}, {"csv", required_argument, 0, OPT_CSV},
        {"latency-out", required_argument, 0, OPT_LATOUT}, {"items", no_argument, 0, OPT_ITEMS},
        {"quiet", no_argument, 0, 'q'},          {"help", no_argument, 0, OPT_HELP},
        {0, 0, 0, 0},
    };
    int ch;
    double zipf = o.zipf;
    while ((ch = getopt_long(argc, argv, "h:p:P:t:c:d:k:v:r:m:D:n:w:W:q", longopts, NULL)) != -1) {
        switch (ch) {
        case 'h': o.host = optarg; break;
        case 'p': o.port = atoi(optarg); break;
        case 'P':
            if (strcmp(optarg, "resp") == 0 || strcmp(optarg, "redis") == 0) {
                o.proto = LOAD_PROTO_RESP;
            } else if (strncmp(optarg, "memcache", 8) == 0 || strcmp(optarg, "mc") == 0) {
                o.proto = LOAD_PROTO_MEMCACHE;
            } else {
                fprintf(stderr, "cudis-bench: unknown protocol '%s'\n", optarg);
                return 2;
            }
            break;
        case 't': o.threads = atoi(optarg); break;
        case 'c': o.conns = atoi(optarg); break;
        case 'd': o.pipeline = atoi(optarg); break;
        case 'k': o.keys = strtoull(optarg, NULL, 10); break;
        case OPT_DIST: dist = optarg; break;
        case OPT_ZIPF: zipf = atof(optarg); if (!dist) { dist = "zipf"; } break;
        case 'v': vspec = optarg; break;
        case 'r': o.get_ratio = atof(optarg); break;
        case 'm': o.mget = atoi(optarg); break;
        case OPT_MULTI: o.multi = atoi(optarg); break;
        case 'D': o.duration_s = atof(optarg); break;
        case 'n': o.requests = strtoull(optarg, NULL, 10); break;
        case 'w': o.warmup_s = atof(optarg); break;
        case 'W': o.warmup_requests = strtoull(optarg, NULL, 10); break;
        case OPT_NOLOAD: o.load = false; break;
        case OPT_FILL: o.fill_on_miss = true; break;
        case OPT_SEED: o.seed = strtoull(optarg, NULL, 10); break;
        case OPT_PREFIX: o.key_prefix = optarg; break;
        case OPT_HASH: o.hash = optarg; break;
        case OPT_TIMEOUT: o.timeout_s = atof(optarg); break;
        case OPT_LABEL: label = optarg; break;
        case OPT_WORKLOAD: workload = optarg; break;
        case OPT_CSV: csv = optarg; break;
        case OPT_LATOUT: latout = optarg; break;
        case OPT_ITEMS: items = true; break;
        case 'q': o.quiet = true; break;
        case OPT_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (dist && strcmp(dist, "uniform") == 0) {
        o.zipf = 0.0;
    } else if (!dist || strcmp(dist, "zipf") == 0) {
        o.zipf = zipf;
    } else {
        fprintf(stderr, "cudis-bench: --dist must be uniform or zipf\n");
        return 2;
    }
    if (load_vsize_parse(&o.vsize, vspec) != 0) {
        fprintf(stderr, "cudis-bench: bad --value-size '%s'\n", vspec);
        return 2;
    }
    if (strlen(o.key_prefix) > 100) {
        fprintf(stderr, "cudis-bench: --key-prefix too long\n");
        return 2;
    }
    if (!label) {
        label = o.proto == LOAD_PROTO_RESP ? "resp" : "memcache";
    }

    struct load_result *r = calloc(1, sizeof(*r));
    if (!r) {
        return 1;
    }
    int rc = load_run(&o, r);
    if (rc != 0) {
        fprintf(stderr, "cudis-bench: run failed (%d)\n", rc);
        free(r);
        return 1;
    }
    int64_t nitems = items ? load_query_items(&o) : -1;

    double rps = r->elapsed_s > 0 ? (double)r->requests / r->elapsed_s : 0.0;
    double kps = r->elapsed_s > 0 ? (double)(r->key_reads + r->sets) / r->elapsed_s : 0.0;
    double cps = r->elapsed_s > 0 ? (double)r->commands / r->elapsed_s : 0.0;
    if (o.multi > 0) {
        kps = cps; /* every command of a transaction touches one key */
    }
    double hr = r->hits + r->misses ? (double)r->hits / (double)(r->hits + r->misses) : 0.0;
    double us = 1000.0;
    double p50 = (double)load_hist_percentile(&r->hist, 50.0) / us;
    double p90 = (double)load_hist_percentile(&r->hist, 90.0) / us;
    double p99 = (double)load_hist_percentile(&r->hist, 99.0) / us;
    double p999 = (double)load_hist_percentile(&r->hist, 99.9) / us;
    double pmax = (double)r->hist.max / us;
    double mean = load_hist_mean(&r->hist) / us;
    if (r->hist.count == 0) {
        pmax = 0.0;
    }

    printf("%-10s %-12s conns %-4d pipe %-3d  %10.0f req/s %10.0f keys/s  hit %6.2f%%  "
           "p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f us  errors %llu",
           label, workload, o.conns, o.pipeline, rps, kps, 100.0 * hr, p50, p90, p99, p999, pmax,
           (unsigned long long)r->errors);
    if (o.multi > 0) {
        printf("  %.0f cmds/s", cps);
    }
    if (nitems >= 0) {
        printf("  items %lld", (long long)nitems);
    }
    printf("\n");

    if (csv) {
        struct stat st;
        bool fresh = stat(csv, &st) != 0 || st.st_size == 0;
        FILE *f = fopen(csv, "a");
        if (!f) {
            perror(csv);
            free(r);
            return 1;
        }
        if (fresh) {
            fputs(csv_header, f);
        }
        fprintf(f,
                "%s,%s,%s,%d,%d,%d,%llu,%s,%.3f,%s,%.3f,%d,%.3f,%llu,%.1f,%.1f,%llu,%llu,%llu,%llu,"
                "%.5f,%llu,%lld,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%d,%.1f\n",
                label, workload, o.proto == LOAD_PROTO_RESP ? "resp" : "memcache", o.threads,
                o.conns, o.pipeline, (unsigned long long)o.keys, o.zipf > 0 ? "zipf" : "uniform",
                o.zipf, vspec, o.get_ratio, o.mget, r->elapsed_s, (unsigned long long)r->requests,
                rps, kps, (unsigned long long)r->gets, (unsigned long long)r->sets,
                (unsigned long long)r->hits, (unsigned long long)r->misses, hr,
                (unsigned long long)r->errors, (long long)nitems, mean, p50, p90, p99, p999, pmax,
                r->load_s, o.multi, cps);
        fclose(f);
    }
    if (latout) {
        FILE *f = fopen(latout, "w");
        if (!f || load_hist_write_spectrum(&r->hist, f, us) != 0) {
            perror(latout);
            if (f) {
                fclose(f);
            }
            free(r);
            return 1;
        }
        fclose(f);
    }
    free(r);
    return 0;
}
