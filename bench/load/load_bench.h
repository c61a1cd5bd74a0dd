/*
 * load_bench.h - the cudis-bench load generator as a library: options, the
 * run, and its results, so the program (cudis_bench_main.c) stays a thin
 * command-line wrapper and tests can drive a run against a live server.
 *
 * A run: T threads, each with its own libevent base and a share of the
 * connections; each connection keeps `pipeline` requests outstanding.
 * Phases: load (SET every key once, unless disabled), warm-up (the workload,
 * not recorded), measure (the workload for a duration or a request count).
 */
#ifndef LOAD_BENCH_H
#define LOAD_BENCH_H

#include "load_hist.h"
#include "load_keys.h"
#include "load_proto.h"

#include <stdbool.h>
#include <stdint.h>

struct load_opts {
    const char *host;
    int port;
    enum load_protocol proto;
    int threads;
    int conns;          /* total connections */
    int pipeline;       /* outstanding requests per connection */
    uint64_t keys;      /* key range [0, keys) */
    double zipf;        /* 0 = uniform */
    struct load_vsize vsize;
    double get_ratio;   /* fraction of requests that read */
    int mget;           /* > 0: reads are multi-key gets of this many keys */
    int multi;          /* > 0: each request is MULTI, this many GET/SET, EXEC (RESP) */
    double duration_s;  /* measure time (when requests == 0) */
    uint64_t requests;  /* measure this many requests instead (0 = use duration) */
    double warmup_s;    /* workload time before measuring */
    uint64_t warmup_requests; /* and/or this many requests (needs requests > 0) */
    bool load;          /* SET every key once first */
    bool fill_on_miss;  /* cache-aside: a GET miss is followed by a SET of the key */
    uint64_t seed;
    const char *key_prefix;
    const char *hash;   /* non-NULL: keys are fields of this hash (HGET/HSET/HMGET) */
    bool quiet;         /* no progress lines */
    double timeout_s;   /* give up when no reply comes for this long */
};

/* Fills opts with the defaults (127.0.0.1:6379, RESP, 1 thread, 50 conns,
 * pipeline 1, 100000 keys, Zipf 0.99, 32-byte values, 90% gets, 10 s). */
void load_opts_default(struct load_opts *o);

struct load_result {
    double elapsed_s;       /* measure window */
    uint64_t requests;      /* completed in the window */
    uint64_t gets, sets;    /* requests by kind (an MGET, a transaction count once; a
                             * transaction with a GET in it is a get) */
    uint64_t key_reads;     /* keys read (MGET of K counts K) */
    uint64_t commands;      /* commands completed (a transaction of N counts N) */
    uint64_t hits, misses;  /* per key read */
    uint64_t errors;        /* error replies */
    uint64_t loaded;        /* keys SET by the load phase */
    double load_s;          /* load phase time */
    struct load_hist hist;  /* latency of every request in the window, ns */
};

/* Runs the benchmark. Blocks; prints progress to stderr unless quiet.
 * Returns 0 or a negative CUDIS_E_* (connect failure, protocol error,
 * timeout), with a message on stderr. res is heap-sized (histogram). */
int load_run(const struct load_opts *o, struct load_result *res);

/* Asks the server how many items it holds (RESP DBSIZE, memcached
 * "stats" curr_items). Returns the count or -1. Blocking, own connection. */
int64_t load_query_items(const struct load_opts *o);

/* Writes a key's text ("<prefix><12 digits>") into out (>= prefix + 13
 * bytes); returns its length. */
size_t load_format_key(char *out, const char *prefix, size_t plen, uint64_t id);

#endif /* LOAD_BENCH_H */
