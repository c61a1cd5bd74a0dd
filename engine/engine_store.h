/*
 * engine_store.h - what a store implements to become an engine.
 *
 * Header only, depends on common/ alone: cuckoo/, kernels/ and baselines/
 * include it and export one `const engine_store_ops` each; engine/'s registry
 * (engine.c) is the only place that lists them. Adding an engine is one row
 * in the registry and one line in the conformance suite.
 *
 * Threading: execute/scan/random_key/stats may be called from several
 * threads at once when `concurrent` is true (the CCHT); otherwise the engine
 * layer still may call them from several threads and the store must be
 * thread-safe the simple way (a lock). flush/destroy are never concurrent
 * with anything else.
 */
#ifndef ENGINE_STORE_H
#define ENGINE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cudis_op.h"
#include "cudis_stats.h"

#define CUDIS_MAX_SHARDS 16

typedef struct engine_config {
    uint64_t memory_bytes;    /* budget: index + items + metadata never exceed it */
    uint64_t max_items;       /* 0 = bounded by memory only. Otherwise also hold at most
                               * this many items (simulation "capacity in objects"; the
                               * CCHT then has exactly this many index slots, rounded up
                               * to a whole bucket) */
    uint32_t ways;            /* CCHT slots per bucket: 4, 8 or 16 (0 = 8) */
    uint32_t threads;         /* worker threads that split a batch (0 or 1 = caller's thread) */
    uint32_t max_key_len;     /* 0 = default (65535) */
    uint32_t max_val_len;     /* 0 = default (1 MiB) */
    uint32_t expected_item_bytes; /* sizing hint for the index: key+value bytes (0 = 64) */
    bool allow_empty_key;     /* Redis allows "" as a key */
    uint64_t seed;            /* hash seed (0 = fixed default) */
    int device;               /* CUDA device ordinal for gpu (-1 = first usable) */
    uint32_t watchdog_ms;     /* gpu: a batch still running after this long fails the
                               * engine (0 = 10000) */
    uint32_t policy;          /* which live items a full store may evict: enum cudis_policy
                               * (0 = allkeys-lru; see set_policy) */
    uint32_t lfu_log_factor;  /* the LFU policies' counters: Redis's lfu-log-factor (10) */
    uint32_t lfu_decay_time;  /* and lfu-decay-time: minutes per decrement (1; 0: none) */
    bool index_resize;        /* the index may follow what is stored (index_tick): the
                               * CCHT in host memory resizes it; expected_item_bytes
                               * is then only where it starts */
    uint32_t shards;          /* > 1: that many stores, each owning a range of the
                               * 16,384 cluster hash slots (engine_shards.c); 0, 1: one */
    int devices[CUDIS_MAX_SHARDS]; /* shard k's device: devices[k % ndevices] (gpu) */
    uint32_t ndevices;        /* 0: shard k gets device + k (or k when device is -1) */
} engine_config;

typedef struct engine_store_ops {
    const char *name;         /* "cpu", "lru", ... */
    const char *description;  /* one line for --help / INFO */
    bool concurrent;          /* execute may run on several threads without a global lock */

    /* Create a store; NULL on failure with the reason in why[why_len]. */
    void *(*create)(const engine_config *cfg, char *why, size_t why_len);
    void (*destroy)(void *store);

    /* Run a batch (see cudis_op.h), reporting the keys it removes on its
     * own to batch->ev when that is set. Returns CUDIS_OK when every op has a
     * result (per-op errors are in res[i].status), or a negative code when
     * the batch as a whole failed. CUDIS_E_DEVFAIL means the store is dead
     * (a device fault or a hung kernel: the batch's effect is unknown) and
     * every later call fails the same way; `failure` then says why. */
    int (*execute)(void *store, cudis_batch *batch);

    /* Visit the live keys of database `db` (or of all: CUDIS_DB_ALL) from
     * `cursor` (0 = start), about `count` index units; *next = 0 when the
     * scan is complete. Never reports a key twice during a scan over an
     * unmodified store. */
    int (*scan)(void *store, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                cudis_scan_fn fn, void *arg, uint64_t *next);

    /* A random live key of database db copied to buf (cap bytes). Returns 1
     * if found, 0 if the database is empty, or a negative code
     * (CUDIS_E_OUTBUF: *len = needed). */
    int (*random_key)(void *store, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                      uint32_t *len);

    /* Remove every key of database db, or of all (CUDIS_DB_ALL). */
    int (*flush)(void *store, int db);

    /* Keys in database db (as stats' items: expired ones not yet
     * reclaimed count). The items of every database add up to stats'. */
    uint64_t (*db_size)(void *store, uint8_t db);

    /* Reclaim expired items, doing at most about max_work units of work,
     * reporting each as CUDIS_EV_EXPIRED to ev (NULL: no events; see
     * cudis_evbuf). Returns the number reclaimed. May be NULL. */
    int (*sweep)(void *store, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev);
    /* Keys with an expiry per database (cudis_stats.h): counted, with
     * their mean TTL from at most about max_work units of the store (a
     * CCHT: buckets its volatile map marks). May be NULL: the engine then
     * counts them with scan. */
    void (*expires)(void *store, int64_t now_ms, uint32_t max_work, cudis_expires *out);
    /* The units of sweep work one pass over the whole store takes. NULL:
     * the store's capacity. */
    uint64_t (*sweep_units)(void *store);
    /* Change the eviction policy (enum cudis_policy) and the LFU counters'
     * parameters (engine_config's) for the batches that follow;
     * CUDIS_E_UNSUPPORTED for a policy the store does not implement. create
     * applies cfg's the same way (failing on such a one). NULL: the store
     * evicts by its own order only (any other policy is refused). */
    int (*set_policy)(void *store, uint32_t policy, uint32_t lfu_log_factor,
                      uint32_t lfu_decay_time);
    /* Change the memory budget at runtime (lowering it evicts, as the
     * policy lets, over the following sweeps or at once). Returns the
     * budget in force: at most what the store can grow to (its creation
     * budget for the CCHT), at least what its index needs. NULL: the
     * budget is fixed at creation. */
    uint64_t (*set_memory)(void *store, uint64_t bytes);
    /* The store's logical clock: ops run so far (a key's recency stamp,
     * EXISTS's res.num, is its low 32 bits at the key's last access). NULL:
     * the store keeps no stamps. */
    uint64_t (*clock)(void *store);
    /* A second passed: move the clock past the store's stamp-refresh slack
     * (so a key read after a quiet spell is stamped anew). May be NULL. */
    void (*clock_tick)(void *store);
    /* Resize the index toward what is stored, a slice at a time (with
     * cfg.index_resize); not concurrent with execute or any other call.
     * Returns 1 while a resize is in progress. May be NULL (a fixed index). */
    int (*index_tick)(void *store, int64_t now_ms, cudis_evbuf *ev);
    /* An empty store is about to be filled with about `items` items of
     * `item_bytes` (key + value) each: size the index for them now (the
     * CCHT halves an index sized for the whole budget's worth of small
     * items). A hint; same threading rule as index_tick. May be NULL. */
    void (*index_expect)(void *store, uint64_t items, uint64_t item_bytes);

    void (*stats)(void *store, cudis_stats *out);
    void (*reset_stats)(void *store); /* zero hits/misses/evictions */

    /* Engine-specific INFO lines ("field:value\r\n"); returns bytes written
     * (snprintf-style, may exceed cap). May be NULL. */
    size_t (*info)(void *store, char *buf, size_t cap);

    /* NULL while the store works; once it returned CUDIS_E_DEVFAIL, one
     * line saying why. May be NULL (the store never fails that way). */
    const char *(*failure)(void *store);

    /* Asynchronous execution, both or neither (may be NULL: the engine's
     * queue then runs execute on a thread of its own). submit starts a
     * batch and returns at once with a ticket (CUDIS_OK), or fails and
     * starts nothing (CUDIS_E_BUSY when too much is in flight); batches
     * submitted from one thread execute in submission order. complete
     * waits for a ticket's batch and returns what execute would have;
     * every ticket is completed exactly once. */
    int (*submit)(void *store, cudis_batch *batch, void **ticket);
    int (*complete)(void *store, void *ticket);
} engine_store_ops;

#endif /* ENGINE_STORE_H */
