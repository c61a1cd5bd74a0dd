/*
 * sim_trace.h - request traces for the hit-ratio simulator (cudis-sim):
 * readers for the one-key-per-line text format and libCacheSim's
 * oracleGeneral binary format, synthetic generators (Zipf, uniform, scans
 * mixed into Zipf, YCSB "latest"), the distinct-key count and the capacity
 * rule of ../shared/traces/README.md.
 *
 * A trace is two arrays: 64-bit object ids (the simulator stores each id as
 * an 8-byte binary key) and, when the format has them, object sizes. Nothing
 * here touches an engine; the functions are single-threaded and own nothing
 * global.
 */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim_trace {
    char name[64];         /* short name: file name without extensions, or the generator spec */
    char source[512];      /* where it came from (path or spec) */
    uint64_t *keys;        /* n object ids, in request order */
    uint32_t *sizes;       /* n object sizes in bytes, or NULL when the format has none */
    size_t n;              /* requests */
    size_t unique;         /* distinct ids */
    uint32_t max_size;     /* largest object size (0 without sizes) */
    uint64_t unique_bytes; /* sum of each distinct object's size at its first request */
} sim_trace;

/* ------------------------------------------------------------------------
 * Readers. Each fills *t (which it zeroes first) and returns 0, or a
 * negative CUDIS_E_* with a reason in why[why_len] (CUDIS_E_IO: cannot read,
 * CUDIS_E_PROTO: malformed content, CUDIS_E_NOMEM). Free with
 * sim_trace_free().
 * ---------------------------------------------------------------------- */

/* One key per line. A line that is a decimal number below 2^64 is that id;
 * any other line is hashed (FNV-1a, 64 bits) to an id. "\r\n" endings are
 * accepted; empty lines are skipped. No sizes. */
int sim_trace_read_keys(const char *path, sim_trace *t, char *why, size_t why_len);

/* libCacheSim oracleGeneral: little-endian 24-byte records
 * (uint32 time, uint64 obj_id, uint32 obj_size, int64 next_access_vtime).
 * A file whose length is not a multiple of 24 is rejected. */
int sim_trace_read_oracle(const char *path, sim_trace *t, char *why, size_t why_len);

/* Resolve `spec` and load it:
 *   - a generator spec "zipf:...", "uniform:...", "scanzipf:...", "latest:..."
 *     (see sim_gen_parse);
 *   - an existing path (".bin" or ".oracleGeneral" in the name selects the
 *     binary reader, anything else the text reader);
 *   - otherwise a name inside trace_dir: NAME, NAME.keys,
 *     NAME.oracleGeneral.bin, NAME.bin, in that order. */
int sim_trace_load(const char *spec, const char *trace_dir, sim_trace *t, char *why,
                   size_t why_len);

/* Names of the traces in dir (files ending in .keys or .bin), sorted, each
 * malloc'd; *out is a malloc'd array. Returns the count or a negative code. */
int sim_trace_list(const char *dir, char ***out);

void sim_trace_free(sim_trace *t);

/* Set t->unique, t->unique_bytes and t->max_size from keys/sizes. */
int sim_trace_finish(sim_trace *t);

/* ------------------------------------------------------------------------
 * Synthetic traces
 * ---------------------------------------------------------------------- */

enum sim_gen_kind {
    SIM_GEN_ZIPF = 1, /* key rank r drawn with P(r) ~ 1/(r+1)^s over `keys` keys */
    SIM_GEN_UNIFORM,  /* every key equally likely */
    SIM_GEN_SCANZIPF, /* Zipf, with a fraction `scan` of requests in sequential scans
                       * of `scan_len` keys over a separate cold range */
    SIM_GEN_LATEST    /* YCSB "latest": a fraction `insert` of requests ask for a new
                       * key; the rest ask for newest - r, r drawn from the Zipf law */
};

typedef struct sim_gen_cfg {
    int kind;           /* enum sim_gen_kind */
    double exponent;    /* Zipf exponent s >= 0 (0.99 default) */
    uint64_t keys;      /* distinct keys of the Zipf/uniform law (100000) */
    uint64_t requests;  /* trace length (1000000) */
    double scan_frac;   /* scanzipf: fraction of requests in scans (0.1) */
    uint32_t scan_len;  /* scanzipf: keys per scan (1000) */
    uint64_t scan_keys; /* scanzipf: size of the cold range the scans walk (10 * keys) */
    double insert_frac; /* latest: fraction of requests that insert a new key (0.05) */
    uint64_t seed;      /* 1 */
} sim_gen_cfg;

/* Defaults for `kind` (values in the comments above). */
void sim_gen_default(sim_gen_cfg *g, int kind);

/* Parse "KIND[:k=v,k=v...]" with keys s (or alpha), keys, n (requests),
 * scan, len, scankeys, insert, seed. Numbers accept K/M/G suffixes (x1000).
 * Returns 0 or CUDIS_E_INVAL with the reason. */
int sim_gen_parse(const char *spec, sim_gen_cfg *g, char *why, size_t why_len);

/* Generate a trace (no sizes). The name is the canonical spec. */
int sim_trace_generate(const sim_gen_cfg *g, sim_trace *t, char *why, size_t why_len);

/* Zipf sampler (Walker's alias method: exact probabilities, O(1) draws). */
typedef struct sim_zipf {
    uint64_t n;
    double *prob;    /* n acceptance thresholds */
    uint32_t *alias; /* n alternatives */
} sim_zipf;

/* P(rank r) = (r+1)^-s / H(n,s), r in [0, n). n < 2^32. */
int sim_zipf_init(sim_zipf *z, uint64_t n, double s);
void sim_zipf_deinit(sim_zipf *z);
/* Rank drawn with two uniform doubles u1, u2 in [0,1). */
uint64_t sim_zipf_draw(const sim_zipf *z, double u1, double u2);

/* Random numbers (xoshiro256**), seeded with splitmix64. */
typedef struct sim_rng {
    uint64_t s[4];
} sim_rng;
void sim_rng_seed(sim_rng *r, uint64_t seed);
uint64_t sim_rng_next(sim_rng *r);
double sim_rng_double(sim_rng *r); /* [0, 1) */

/* A bijective 64-bit mixer (splitmix64's finaliser): rank -> scattered id. */
static inline uint64_t sim_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* ------------------------------------------------------------------------
 * Key sets and capacities
 * ---------------------------------------------------------------------- */

/* An open-addressed set of 64-bit keys; clear() is O(1) (generations). */
typedef struct sim_kset {
    uint64_t *keys;
    uint32_t *gen;
    uint64_t mask;
    uint32_t cur;
    size_t count;
} sim_kset;

/* Room for `expected` keys (the table is twice that, a power of two). */
int sim_kset_init(sim_kset *s, size_t expected);
void sim_kset_deinit(sim_kset *s);
void sim_kset_clear(sim_kset *s);
/* Adds key; true if it was not there. Never grows: at most `expected` adds
 * between clears. */
bool sim_kset_add(sim_kset *s, uint64_t key);

/* Distinct values among keys[0..n). Returns (size_t)-1 on allocation failure. */
size_t sim_count_unique(const uint64_t *keys, size_t n);

/* Capacity in objects as ../shared/traces/README.md defines it:
 * floor(unique * fraction / 32) * 32, at least 32. */
uint64_t sim_capacity_objects(uint64_t unique, double fraction);

/* "128M", "1G", "4096", "1.5G": bytes with binary K/M/G/T suffixes.
 * Returns 0 or CUDIS_E_INVAL. */
int sim_parse_bytes(const char *s, uint64_t *out);

/* "128MiB", "1GiB", "512KiB" or "123B" into buf. */
const char *sim_format_bytes(uint64_t v, char *buf, size_t cap);

#endif /* SIM_TRACE_H */
