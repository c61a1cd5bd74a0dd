/*
 * ccht.h - the double-LRU cache cuckoo hash table (CCHT) in host memory.
 *
 * A cache of binary-safe keys and values within a fixed memory budget
 * (index + value arena never exceed it). Two candidate buckets per key; when
 * both are full the older of the two buckets' LRU entries is evicted (first
 * LRU level); when value memory runs out a victim is chosen by sampled global
 * recency (second LRU level). See ../shared/DESIGN.md section 2 and
 * ccht_bucket.h for the algorithm, ccht_layout.h for the memory layout.
 *
 * Threading: every function except ccht_destroy and ccht_flush may be called
 * from any number of threads at once, without a global lock (writers lock a
 * key's two buckets, readers are optimistic). ccht_flush and ccht_destroy
 * must not run concurrently with anything else. Nothing blocks on I/O.
 *
 * Semantics of every operation come from common/cudis_op.h (cudis_plan_op);
 * the single-key calls below are thin wrappers that build a one-op batch.
 */
#ifndef CCHT_H
#define CCHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cudis_op.h"
#include "cudis_stats.h"

typedef struct ccht ccht;

typedef struct ccht_options {
    uint64_t memory_bytes;        /* budget for index + arena + metadata (required) */
    uint64_t max_items;           /* 0 = sized from memory; else exactly this many slots
                                   * (rounded up to a whole bucket) */
    uint32_t ways;                /* slots per bucket: 4, 8 or 16 (0 = 8) */
    uint32_t max_key_len;         /* 0 = 65535 */
    uint32_t max_val_len;         /* 0 = 1 MiB */
    uint32_t expected_item_bytes; /* key+value bytes, sizes the index when max_items = 0
                                   * (0 = 64) */
    bool allow_empty_key;         /* accept "" as a key */
    uint64_t seed;                /* hash seed (0 = a fixed default) */
    uint32_t policy;              /* which live items may be evicted: enum cudis_policy
                                   * (0 = allkeys-lru) */
    uint32_t lfu_log_factor;      /* the LFU policies' counters: Redis's lfu-log-factor (10) */
    uint32_t lfu_decay_time;      /* and lfu-decay-time, minutes per decrement (1; 0: none) */
    bool resizable;               /* the index may be resized (ccht_resize_tick): from
                                   * expected_item_bytes' size down to a 16th and up to
                                   * half the largest budget, the arena taking what it
                                   * leaves;
                                   * and the budget may be raised up to 4x */
} ccht_options;

/* Fill `o` with the defaults above and memory_bytes = 64 MiB. */
void ccht_options_default(ccht_options *o);

/* Create a table. Returns NULL on failure with the reason in why[why_len]
 * (why may be NULL). Memory is reserved up front but touched lazily. */
ccht *ccht_create(const ccht_options *o, char *why, size_t why_len);

/* Change the eviction policy (enum cudis_policy) and the LFU counters'
 * lfu-log-factor and lfu-decay-time (minutes) for the ops that follow;
 * CUDIS_E_INVAL for a policy the table does not know. */
int ccht_set_policy(ccht *t, uint32_t policy, uint32_t lfu_log_factor, uint32_t lfu_decay_time);

/* Change the memory budget at runtime, up to the one the table was created
 * with (its block is that big; a resizable table's block spans 4x that in
 * address space, so up to 4x) and down to its index and two pages: the
 * arena may then hold fewer pages; the sweep gives the extra ones back
 * (evicting as the policy says, a few pages a call) and writes stop taking
 * new pages at once. Returns the budget in force (bytes). */
uint64_t ccht_set_memory(ccht *t, uint64_t bytes);

/*
 * The index follows what is stored (a table created with o.resizable):
 * each call decides from the items held now (their count, their average
 * chunk size) whether an index twice or half as big would hold 2% more
 * such items in the budget (an index holds 90% of its slots' worth, the
 * memory beside it what it can); twice only once half the slots are used,
 * half only under the allkeys-* policies and with at most 40% of the slots
 * used. A doubling first makes room
 * for the new index in the arena (lowering its page limit; the pages above
 * it are given back, evicting, over the following calls; under a policy
 * that keeps items only free pages will do); a halving runs in place. Then
 * the items of the old index's buckets move into the new one, at most
 * max_buckets a call and about two milliseconds of work: slot words only,
 * item bytes stay. A halving may evict an item whose new buckets are full
 * even after one cuckoo step (rare at that load). Must not
 * run concurrently with any other call on the table (the server runs it
 * where it runs expiry, between batches). Returns 1 while a resize is in
 * progress, 0 when none is. No-op on a table that is not resizable.
 */
int ccht_resize_tick(ccht *t, int64_t now_ms, uint32_t max_buckets, cudis_evbuf *ev);
/* Before an empty table is filled with about `items` items of `item_bytes`
 * (key + value) each (a dump.rdb at start: its RESIZEDB record): halve the
 * index now, while it holds nothing, as often as ccht_resize_tick would
 * once those items were in, so that filling it touches only the index it
 * will keep (each first touch of fresh memory is a page the kernel
 * zeroes). Empty (no page of the arena in use), nothing moves: a halving
 * costs no pass over the buckets. Returns the halvings made; 0 on a table
 * that is not resizable, is resizing, or holds items. Same threading rule. */
int ccht_index_expect(ccht *t, uint64_t items, uint64_t item_bytes);
/* Start a resize to n_buckets buckets (twice or half today's) and move up
 * to max_buckets old buckets (tests, benchmarks): CUDIS_OK, CUDIS_E_INVAL
 * for another size or while one runs, CUDIS_E_NOMEM. Same threading rule. */
int ccht_resize_start(ccht *t, uint64_t n_buckets);
/* Move the items of up to max_buckets more old buckets; 1 while the resize
 * goes on, 0 when it is done (or none runs). Same threading rule. */
int ccht_resize_step(ccht *t, uint32_t max_buckets, cudis_evbuf *ev);
/* Buckets of the index (the new one's during a resize). */
uint64_t ccht_buckets(const ccht *t);

/* The logical clock: ops run so far (recency stamps are its low bits). */
uint64_t ccht_clock(const ccht *t);
/* Time passing (the server calls it once a second): the clock moves past
 * the stamp refresh's slack, so that a key read after a quiet spell gets a
 * new stamp (OBJECT IDLETIME dates stamps); recency order is unchanged. */
void ccht_clock_tick(ccht *t);

/* Free the table and everything in it. NULL is fine. */
void ccht_destroy(ccht *t);

/* Run a batch (see cudis_op.h): one result per op in batch->res, values
 * packed into batch->out, keys evicted or expired on the table's own into
 * batch->ev when set. Returns CUDIS_OK (per-op errors are in
 * res[i].status). Ops of one batch are run in order on the calling thread. */
int ccht_execute(ccht *t, cudis_batch *batch);

/* ---- single-key wrappers (clock: cudis_now_ms()) ---------------------- */

/* GET. Returns 1 and copies the value to buf (cap bytes) with its length in
 * *val_len, 0 when missing, CUDIS_E_OUTBUF (with *val_len = needed) when cap
 * is too small, or another negative code. */
int ccht_get(ccht *t, const void *key, uint32_t key_len, void *buf, uint32_t cap,
             uint32_t *val_len);

/* SET with CUDIS_F_NX/XX/KEEPTTL flags and an absolute expiry (0 = none).
 * Returns 1 when written, 0 when a condition kept it from being written,
 * or a negative code (CUDIS_E_KEYTOOBIG, CUDIS_E_VALTOOBIG, CUDIS_E_FULL...). */
int ccht_set(ccht *t, const void *key, uint32_t key_len, const void *val, uint32_t val_len,
             int64_t expire_ms, uint16_t flags);

/* DEL: 1 when the key was deleted, 0 when absent, or a negative code. */
int ccht_del(ccht *t, const void *key, uint32_t key_len);

/* EXISTS: 1 when live, 0 when absent, or a negative code. */
int ccht_exists(ccht *t, const void *key, uint32_t key_len);

/* INCRBY: 0 with the new value in *out, or CUDIS_E_NOTINT/CUDIS_E_OVERFLOW/... */
int ccht_incrby(ccht *t, const void *key, uint32_t key_len, int64_t delta, int64_t *out);

/* EXPIRE at absolute ms with CUDIS_F_NX/XX/GT/LT: 1 when applied, 0 when not
 * (absent key or condition false), or a negative code. A past time deletes. */
int ccht_expire(ccht *t, const void *key, uint32_t key_len, int64_t expire_ms, uint16_t flags);

/* PERSIST: 1 when an expiry was removed, 0 otherwise, or a negative code. */
int ccht_persist(ccht *t, const void *key, uint32_t key_len);

/* TTL: 1 with the absolute expiry in *expire_ms (-1 = none), 0 when absent. */
int ccht_ttl(ccht *t, const void *key, uint32_t key_len, int64_t *expire_ms);

/* ---- whole-table operations ------------------------------------------- */

/* Visit the live keys of database db (CUDIS_DB_ALL: of every one) from
 * `cursor` (0 = start) over about `count` buckets; sets *next (0 when
 * done). A key is reported at most once per full scan when the table is not
 * modified. The cursor is a place in hash space (the top 48 bits of a
 * bucket's first hash), so a scan goes on across a resize of the index
 * (items move with the stretch of hash space that holds them). fn may call
 * back into the table. Returns 0. */
int ccht_scan(ccht *t, int db, uint64_t cursor, uint32_t count, int64_t now_ms, cudis_scan_fn fn,
              void *arg, uint64_t *next);

/* A random live key of database db into buf. 1 found, 0 empty, CUDIS_E_OUTBUF
 * (*len = needed). */
int ccht_random_key(ccht *t, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap, uint32_t *len);

/* Remove every key (CUDIS_DB_ALL: not concurrent with other calls) or the
 * keys of one database (bucket by bucket, under the bucket locks). */
int ccht_flush(ccht *t, int db);
/* Items of database db (live and expired-unreclaimed, as stats' items). */
uint64_t ccht_db_size(ccht *t, uint8_t db);

/* Reclaim expired items from an internal cursor over the buckets the
 * volatile map marks (cudis_vmap.h), about max_work units of work (a
 * marked bucket, or 512 unmarked ones skipped), reporting each as
 * CUDIS_EV_EXPIRED to ev (NULL: no events). Returns how many were
 * reclaimed (counted in evict_expired). While the arena holds more pages
 * than a lowered budget allows (ccht_set_memory), it also gives back a
 * few of the coldest, their items evicted (reported as CUDIS_EV_EVICTED). */
int ccht_sweep(ccht *t, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev);
/* Keys with an expiry per database into out: their counters (exact, and
 * as Redis's expires= counting the expired ones not yet reclaimed), and
 * the mean time left of the live ones in the buckets the volatile map
 * marks, read from the first until max_buckets marked buckets have been
 * read (out->exact: all were; the map's clear words cost a word read
 * each, so a big index with few such keys is read in full at little
 * cost). Safe beside ccht_execute, as ccht_scan. */
void ccht_expires(ccht *t, int64_t now_ms, uint32_t max_buckets, cudis_expires *out);
/* The units of work of one whole pass of ccht_sweep (cudis_vmap_units). */
uint64_t ccht_sweep_units(const ccht *t);

/* Statistics (cudis_stats.h); bytes_used never exceeds bytes_budget. */
void ccht_stats(ccht *t, cudis_stats *out);

/* Zero hits, misses and evictions. */
void ccht_reset_stats(ccht *t);

/* Engine-specific INFO lines ("field:value\r\n"), snprintf-style. */
size_t ccht_info(ccht *t, char *buf, size_t cap);

/* The table the executor runs on (ccht_layout.h; tests and audits read it). */
struct ccht_table;
const struct ccht_table *ccht_table_of(const ccht *t);

#endif /* CCHT_H */
