/*
 * sim_replay.h - replay a trace through an engine (engine/engine.h) and
 * count hits: every request is a GET; on a miss the key is SET (cold start,
 * every request counted), as ../shared/traces/README.md defines.
 *
 * Two ways to cut the request stream into batches:
 *
 *  SIM_REPLAY_EXACT - the outcome equals issuing GET / SET one request at a
 *    time, for any engine that applies a batch's operations in array order
 *    (the exact baselines do). Per step: EXISTS (read-only, no recency
 *    change) over a window of up to `batch` distinct upcoming keys finds the
 *    first absent one at position m; then one GET batch for positions 0..m
 *    (hits 0..m-1 refresh recency in request order, m misses) and a SET of
 *    key m. Nothing after m has been touched, so the next step starts there.
 *    The window adapts to about twice the recent run of hits.
 *
 *  SIM_REPLAY_LOOKASIDE - what a server sees from look-aside clients: a GET
 *    batch over up to `batch` consecutive distinct requests (cut at the first
 *    repeated key), then one SET batch for its misses. Each key appears at
 *    most once per batch, as cudis_op.h requires, but a SET may now evict a
 *    key the same GET batch already found, so hit ratios differ slightly from
 *    one-at-a-time replay (cudis-sim reports both). Used for speed.
 *
 * Threads: with threads = T > 1, T threads share one engine; thread i
 * replays, in trace order, the requests whose key hashes to i (disjoint key
 * sets, so no two threads ever write one key). The threads start each pass
 * together (a barrier) and then run at their own pace, so hit ratios with
 * T > 1 depend on scheduling (on a short trace one thread may finish before
 * the other gets going); T > 1 is for speed.
 */
#ifndef SIM_REPLAY_H
#define SIM_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "cudis_stats.h"
#include "sim_trace.h"

typedef enum { SIM_REPLAY_EXACT = 0, SIM_REPLAY_LOOKASIDE = 1 } sim_replay_mode;

/* Called about every 64K requests from the first replay thread, with the
 * pass number (from 0) and the requests of this pass done so far (estimated
 * over all threads) out of `total`. */
typedef void (*sim_progress_fn)(void *arg, uint64_t pass, uint64_t done, uint64_t total);

typedef struct sim_run_cfg {
    const char *engine;    /* registry name ("lru", "cpu", ...) */
    uint32_t ways;         /* CCHT ways (0 = engine default) */
    uint32_t policy;       /* engine_config.policy: enum cudis_policy (0 = allkeys-lru) */
    uint64_t max_items;    /* capacity in objects; 0 = bytes mode */
    uint64_t memory_bytes; /* budget; 0 in objects mode = generous (never binds) */
    uint32_t batch;        /* most requests per batch (>= 1) */
    sim_replay_mode mode;
    uint32_t threads;     /* replaying threads (>= 1) */
    uint32_t value_len;   /* objects mode: bytes per value (0 = 8) */
    bool use_sizes;       /* values take the trace's object sizes (bytes mode) */
    uint64_t seed;        /* engine hash seed (0 = the engine's default) */
    uint32_t max_val_len; /* engine_config.max_val_len (0 = the engine's default);
                           * raised to the largest value the replay writes */
    double min_seconds;   /* repeat whole passes (engine flushed between) until the
                           * replay time reaches this; 0 = one pass */
    uint32_t max_passes;  /* cap on passes (0 = 1000) */
    sim_progress_fn progress;
    void *progress_arg;
} sim_run_cfg;

typedef struct sim_run_result {
    char engine_name[32]; /* engine_name() of the created engine */
    uint64_t requests;    /* first pass */
    uint64_t hits;        /* first pass (cold start, fresh engine) */
    uint64_t passes;
    uint64_t total_requests; /* all passes */
    uint64_t total_hits;
    double seconds;      /* replay time, all passes (threads overlap: wall time) */
    double cpu_seconds;  /* CPU time of the replaying threads, all passes, summed */
    double req_per_s;    /* total_requests / seconds */
    uint64_t calls;      /* engine_execute calls, all passes */
    uint64_t set_failed; /* SETs the engine refused, all passes (object > budget...) */
    int set_error;       /* the first such status (0 = none) */
    cudis_stats stats;   /* engine statistics after the first pass */
} sim_run_result;

void sim_run_cfg_default(sim_run_cfg *cfg);

/* Generous budget for a capacity of `items` objects of `value_len` bytes, so
 * that the item limit, not the bytes, decides evictions. */
uint64_t sim_objects_budget(uint64_t items, uint32_t value_len);

/* Create the engine, replay, destroy it. Returns 0, or a negative code with
 * the reason in why (engine creation failed, a batch failed as a whole). */
int sim_run(const sim_trace *t, const sim_run_cfg *cfg, sim_run_result *out, char *why,
            size_t why_len);

#endif /* SIM_REPLAY_H */
