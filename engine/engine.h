/*
 * engine.h - the one interface the server and the benchmarks use to reach a
 * store. Engines are created by name from a registry: "cpu" (the CCHT in host
 * memory), "gpu" (the CCHT in device memory, where built and usable), "lru",
 * "fifo", "lfu", "sieve", "s3fifo" (exact baselines), "null" (stores nothing, answers miss) and
 * "auto" (gpu when a usable CUDA device is found, else cpu).
 *
 * All operations are batches (cudis_op.h). engine_execute() may be called
 * from several threads at once; with cfg.threads > 1 the engine also splits
 * one batch over its own worker threads and returns when all are done.
 *
 * A device fault (CUDIS_E_DEVFAIL from the gpu store: a sticky CUDA error,
 * a kernel past its watchdog) under "auto" makes the engine switch to a
 * fresh cpu store: the cache starts empty, the batch that met the fault
 * runs again on the cpu, the failure is logged to stderr and shown by
 * engine_failure / engine_info. Under an explicit "gpu" every later call
 * returns CUDIS_E_DEVFAIL (engine_failure says why).
 */
#ifndef ENGINE_H
#define ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cudis_op.h"
#include "cudis_stats.h"
#include "engine_store.h"

typedef struct engine engine;

/* Defaults: 64 MiB, 8 ways, 1 thread, keys up to 65535 B, values up to 1 MiB,
 * empty keys allowed, device -1. */
void engine_config_default(engine_config *cfg);

/* Create engine `name`. NULL on failure, with the reason in why. On success
 * why holds one line saying what was chosen and why (for "auto"). */
engine *engine_create(const char *name, const engine_config *cfg, char *why, size_t why_len);
void engine_destroy(engine *e);

/* Wrap a store given by its operations (tests, benchmarks, stores outside
 * the registry). With `fallback` non-NULL the engine behaves as "auto" does
 * with the gpu: when the store fails (CUDIS_E_DEVFAIL), a fresh `fallback`
 * store takes its place, empty, and the batch that met the failure runs
 * on it. NULL on failure with why. */
engine *engine_create_store(const engine_store_ops *ops, const engine_config *cfg,
                            const engine_store_ops *fallback, char *why, size_t why_len);

/* The concrete engine's name ("cpu" when "auto" chose it or failed over). */
const char *engine_name(const engine *e);

/* NULL while the engine works. After a device failure: one line saying what
 * failed and, under "auto", that the cpu engine took over (the cache then
 * restarted empty). Stays set after a failover. */
const char *engine_failure(engine *e);

/* Failovers so far (see engine_create_store). */
uint64_t engine_failovers(engine *e);

/* Names the registry knows, NULL-terminated (for --help and errors). */
const char *const *engine_names(void);

/* See engine_store_ops for the meaning of each. engine_execute reports the
 * keys the store removes on its own to batch->ev (cudis_op.h) when set,
 * also when worker threads split the batch; after a failover (the cache
 * restarted empty) the sink says events were lost (cudis_ev_lost), so the
 * caller assumes every key gone. engine_flush reports nothing. */
int engine_execute(engine *e, cudis_batch *batch);
/* After engine_execute (or engine_queue_complete) of a batch whose out
 * buffer came from malloc: the ops that returned CUDIS_E_OUTBUF run again
 * with batch->out grown (realloc) to what they need, so every value is
 * returned; batch->out, out_cap and out_len are updated. *reruns (may be
 * NULL) is how many ops ran again. Returns the engine's rc for the reruns;
 * on failure those ops carry it as their status. The reruns report their
 * events to batch->ev after the first run's (an op that returned
 * CUDIS_E_OUTBUF changed nothing, so no removal is reported twice). */
int engine_rerun_outbuf(engine *e, cudis_batch *batch, uint32_t *reruns);

/*
 * Asynchronous batches. A queue belongs to one caller (an event loop): it
 * holds at most ENGINE_QUEUE_MAX batches in flight, which execute in the
 * order submitted and complete in that order, while the caller goes on (it
 * parses the next batch while this one runs; on the gpu, the copy-in of
 * the next overlaps the kernel of this one). The outcome is what calling
 * engine_execute on each batch in turn gives, failover included. A batch
 * and its buffers belong to the queue from submit until its complete.
 *
 * engine_queue_create: NULL when out of memory or threads.
 * engine_queue_destroy: completes what is in flight first.
 * engine_queue_submit: CUDIS_OK, or CUDIS_E_BUSY when ENGINE_QUEUE_MAX are
 *   in flight (complete one first).
 * engine_queue_complete: waits for the oldest batch in flight; returns what
 *   engine_execute would have for it (and the batch in *b unless NULL);
 *   CUDIS_E_INVAL when nothing is in flight.
 * engine_queue_ready: the oldest batch is finished (complete will not wait).
 * engine_queue_fd: a file descriptor that becomes readable when a batch
 *   finishes, for the caller's event loop; engine_queue_clear_fd empties it
 *   (then complete every ready batch).
 * The queue's functions are for its owner's thread only.
 */
#define ENGINE_QUEUE_MAX 2
typedef struct engine_queue engine_queue;
engine_queue *engine_queue_create(engine *e);
void engine_queue_destroy(engine_queue *q);
int engine_queue_submit(engine_queue *q, cudis_batch *batch);
int engine_queue_complete(engine_queue *q, cudis_batch **batch);
bool engine_queue_ready(engine_queue *q);
uint32_t engine_queue_depth(engine_queue *q);
int engine_queue_fd(engine_queue *q);
void engine_queue_clear_fd(engine_queue *q);
int engine_scan(engine *e, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                cudis_scan_fn fn, void *arg, uint64_t *next);
/* Keys with an expiry per database (cudis_stats.h): the cpu engine's are
 * counted (exact); their mean TTL is read from up to 2048 of the buckets
 * that hold them. A store without the op is scanned: up to about 10,000
 * keys, scaled from those read beyond. For INFO keyspace. */
void engine_expires(engine *e, int64_t now_ms, cudis_expires *out);
int engine_random_key(engine *e, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                      uint32_t *len);
int engine_flush(engine *e, int db);
uint64_t engine_db_size(engine *e, uint8_t db);
/* Reclaim expired items (about max_work units of work), each reported as
 * CUDIS_EV_EXPIRED to ev (NULL: no events). Returns the number reclaimed. */
int engine_sweep(engine *e, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev);
/* Active expiry for a caller that runs it `hz` times a second (as Redis's
 * active expire cycle): each tick sweeps a slice of the store's sweep units
 * (its buckets that hold keys with an expiry: cudis_vmap.h), a small one
 * while nothing expires, slices of a whole pass per half second once
 * expired items turn up, shrinking again only after a whole pass found
 * nothing (so a few expired keys scattered over a big store are all found
 * within that pass). Returns the number reclaimed. One caller at a time, and not
 * concurrent with batches (the pacing state lives in the engine). The keys
 * reclaimed are reported to ev as engine_sweep does. */
int engine_expire_tick(engine *e, int64_t now_ms, int hz, cudis_evbuf *ev);
/* The store's index follows what is stored (engine_store_ops.index_tick;
 * cfg.index_resize): a slice of a resize in progress, or the decision to
 * start one. Same rules as engine_expire_tick: one caller, not concurrent
 * with batches. Returns 1 while a resize is in progress. */
int engine_index_tick(engine *e, int64_t now_ms, cudis_evbuf *ev);
/* An empty engine is about to be filled with about `items` items of
 * `item_bytes` (key + value) each (a dump.rdb at start): its store may size
 * its index for them (engine_store_ops.index_expect). A hint; same rules
 * as engine_index_tick. */
void engine_index_expect(engine *e, uint64_t items, uint64_t item_bytes);
/* Change the eviction policy (enum cudis_policy) and the LFU counters'
 * lfu-log-factor / lfu-decay-time for the batches that follow
 * (engine_store_ops.set_policy): CUDIS_E_UNSUPPORTED when the store does
 * not implement the policy. Also what a failover's fresh store gets. */
int engine_set_policy(engine *e, uint32_t policy, uint32_t lfu_log_factor, uint32_t lfu_decay_time);
/* Change the memory budget at runtime (engine_store_ops.set_memory):
 * CUDIS_OK with the budget in force in *in_force (at most what the store
 * can grow to, at least what its index needs), CUDIS_E_UNSUPPORTED when
 * the store's budget is fixed at creation. */
int engine_set_memory(engine *e, uint64_t bytes, uint64_t *in_force);
/* The store's logical clock (engine_store_ops.clock); 0 when it keeps no
 * recency stamps. */
uint64_t engine_clock(engine *e);
/* A second passed (engine_store_ops.clock_tick). */
void engine_clock_tick(engine *e);
/* A policy by its Redis name ("allkeys-lru", "noeviction", "volatile-ttl"...):
 * 0 with *code, -1 for a name that is not one of enum cudis_policy. */
int engine_policy_code(const char *name, uint32_t *code);
void engine_stats(engine *e, cudis_stats *out);
void engine_reset_stats(engine *e);
size_t engine_info(engine *e, char *buf, size_t cap);

#endif /* ENGINE_H */
