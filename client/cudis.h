/*
 * cudis.h - libcudis, the C client for cudis (and any Redis-protocol server)
 * with a batched vector API for feature / embedding caching.
 *
 * Layers, bottom up:
 *   cudis_conn   one connection (TCP or unix socket), connect and I/O
 *                timeouts, AUTH; plain commands and pipelined batches.
 *   cudis_table  a named table of fixed-width rows keyed by uint64 ids;
 *                cudis_vget()/cudis_vset() move N rows in pipelined
 *                MGET/MSET chunks straight into/out of caller buffers.
 *   cudis_pool   a thread-safe pool of connections.
 *   cudis_rt     read-through: a registered loader fills misses, with the
 *                policies "fill", "default" and "auto" (HPS-style).
 *
 * Key scheme (documented, stable): the key of id `id` in table `name` is
 * the bytes of name, then ':', then the 8 bytes of id in big-endian order.
 * E.g. table "emb", id 258 -> "emb:" 00 00 00 00 00 00 01 02 (12 bytes).
 * Big-endian keeps one table's keys in id order under byte comparison; the
 * prefix lets several tables share one server.
 *
 * Errors: functions return 0 or a negative code: the project's CUDIS_E_*
 * (cudis_err.h: CUDIS_E_IO, CUDIS_E_TIMEOUT, CUDIS_E_PROTO, ...) or the
 * client's own CUDIS_E_SERVER / CUDIS_E_AUTH below; cudis_client_strerror()
 * names any of them, cudis_conn_errstr() gives the detailed message of the
 * last failure on a connection. Constructors return NULL and explain in a
 * caller buffer.
 *
 * Timeouts: connect_timeout_ms bounds connecting (and AUTH); timeout_ms
 * bounds every wait for the server: a call fails with CUDIS_E_TIMEOUT when no
 * byte moved in either direction for timeout_ms, so a dead or stopped
 * (SIGSTOP) server gives an error within the timeout, never a hang. After an
 * I/O error, a timeout or a protocol error the connection is marked broken
 * and the next call on it reconnects first (a failed reconnect is reported).
 *
 * Threads: a cudis_conn is used by one thread at a time; cudis_pool and
 * cudis_rt may be used from any number of threads at once.
 */
#ifndef CUDIS_H
#define CUDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "cudis_err.h"

/* Client-specific error codes (the shared ones are in cudis_err.h). */
#define CUDIS_E_SERVER (-101) /* the server answered with an error reply */
#define CUDIS_E_AUTH (-102)   /* AUTH was refused or required */

/* Text for any code a libcudis function returns; never NULL. */
const char *cudis_client_strerror(int err);

/* ===================================================================== */
/* Connections                                                           */
/* ===================================================================== */

typedef struct cudis_options {
    const char *host;       /* TCP host (default "127.0.0.1") */
    int port;               /* TCP port (default 6379) */
    const char *unix_path;  /* if set, connect to this unix socket instead */
    const char *password;   /* if set, AUTH with it after connecting */
    int connect_timeout_ms; /* default 1000 */
    int timeout_ms;         /* no-progress limit for every call, default 1000 */
} cudis_options;

/* Fill *o with the defaults above. */
void cudis_options_default(cudis_options *o);

typedef struct cudis_conn cudis_conn;

/* Connect (and AUTH). The strings in *o are copied. NULL on failure, with the
 * reason in err (may be NULL). Blocks up to connect_timeout_ms. */
cudis_conn *cudis_connect(const cudis_options *o, char *err, size_t err_len);

/* Close and free; NULL is a no-op. */
void cudis_close(cudis_conn *c);

/* Detailed message of the last failure on c ("" if none). Owned by c. */
const char *cudis_conn_errstr(const cudis_conn *c);

/* True when the last call left the connection unusable (it reconnects on
 * the next call). */
bool cudis_conn_broken(const cudis_conn *c);

/* Change the connection's timeout_ms (> 0) for the calls that follow. */
int cudis_conn_set_timeout(cudis_conn *c, int timeout_ms);

/* Close and reopen the connection now. 0 or a negative code. */
int cudis_reconnect(cudis_conn *c);

/* One command given as argv (binary-safe; argvlen NULL means strlen).
 * On success *reply is the hiredis reply (caller frees it with
 * freeReplyObject); an error *reply from the server still returns 0 -
 * check (*reply)->type == REDIS_REPLY_ERROR. Blocks up to the timeout. */
int cudis_command_argv(cudis_conn *c, int argc, const char **argv, const size_t *argvlen,
                       redisReply **reply);

/* printf-style convenience wrapper (hiredis format: %s, %b, %d...). */
int cudis_command(cudis_conn *c, redisReply **reply, const char *fmt, ...);

/* One command of a pipelined batch. */
typedef struct cudis_cmd {
    int argc;
    const char **argv;
    const size_t *argvlen; /* NULL: strlen of each argv */
} cudis_cmd;

/* Send n commands in one pipeline and read their n replies into
 * replies[0..n-1] (caller frees each with freeReplyObject). On failure
 * midway the replies that did arrive are kept and the rest are NULL, so the
 * caller sees which commands completed; the return value is the error. */
int cudis_pipeline(cudis_conn *c, size_t n, const cudis_cmd *cmds, redisReply **replies);

/* ===================================================================== */
/* Tables of fixed-width rows (the vector API)                           */
/* ===================================================================== */

/* How cudis_vset() applies a TTL. */
enum cudis_ttl_mode {
    CUDIS_TTL_MSET_PEXPIRE = 0, /* MSET per chunk, then PEXPIRE per row, pipelined */
    CUDIS_TTL_SET_PX = 1,       /* SET key row PX ttl per row, pipelined */
};

typedef struct cudis_table_options {
    size_t chunk_rows; /* ids per MGET/MSET command (default 256) */
    int ttl_mode;      /* enum cudis_ttl_mode (default CUDIS_TTL_SET_PX) */
} cudis_table_options;

void cudis_table_options_default(cudis_table_options *o);

typedef struct cudis_table cudis_table;

/* A table named `name` (1..200 bytes, no NUL) of rows of row_bytes bytes
 * (1..512 MiB). opt may be NULL for the defaults. NULL on bad arguments or
 * out of memory. A table is immutable and may be shared by threads. */
cudis_table *cudis_table_create(const char *name, size_t row_bytes, const cudis_table_options *opt);
void cudis_table_destroy(cudis_table *t);
size_t cudis_table_row_bytes(const cudis_table *t);

/* Write the key of id into buf (capacity cap); returns its length, or 0 if
 * it does not fit. */
size_t cudis_table_key(const cudis_table *t, uint64_t id, uint8_t *buf, size_t cap);

/* Values of found[i] after cudis_vget(). */
enum cudis_row_state {
    CUDIS_ROW_MISS = 0,   /* the server answered: no such key (or wrong length) */
    CUDIS_ROW_HIT = 1,    /* rows[i] holds the stored row */
    CUDIS_ROW_FAILED = 2, /* no answer for this row (the call failed first) */
};

/* Counters of one cudis_vget()/cudis_vset() call. */
typedef struct cudis_vresult {
    size_t answered; /* rows the server answered for */
    size_t hits;     /* found rows */
    size_t misses;   /* missing rows, including bad_len */
    size_t bad_len;  /* stored values whose length != row_bytes (treated as misses) */
    size_t failed;   /* rows without an answer (or, for vset, not confirmed) */
} cudis_vresult;

/* Get n rows: for each i, rows + i*row_bytes receives the row of ids[i] and
 * found[i] a cudis_row_state. Rows of misses are left untouched. The ids
 * travel as ceil(n / chunk_rows) MGET commands in one pipeline. Returns 0
 * when every row was answered, else the error; found[] and *res (res may be
 * NULL) say which rows are valid even then. */
int cudis_vget(cudis_conn *c, const cudis_table *t, size_t n, const uint64_t *ids, void *rows,
               uint8_t *found, cudis_vresult *res);

/* Set n rows (rows + i*row_bytes for ids[i]); ttl_ms > 0 sets an expiry in
 * milliseconds, 0 none. ok (may be NULL) receives 1 per row the server
 * confirmed, 0 otherwise. Returns 0 when all were confirmed. */
int cudis_vset(cudis_conn *c, const cudis_table *t, size_t n, const uint64_t *ids, const void *rows,
               int64_t ttl_ms, uint8_t *ok, cudis_vresult *res);

/* ===================================================================== */
/* Connection pool                                                       */
/* ===================================================================== */

typedef struct cudis_pool cudis_pool;

/* A pool of up to max_conns connections made with *o (copied), opened
 * lazily. NULL on failure with the reason in err. */
cudis_pool *cudis_pool_create(const cudis_options *o, int max_conns, char *err, size_t err_len);

/* Close every connection and free. All connections must be released. */
void cudis_pool_destroy(cudis_pool *p);

/* Take a connection for exclusive use, waiting up to wait_ms (-1: forever)
 * for one to be free; opens one if the pool has room. *out is NULL on
 * failure: CUDIS_E_TIMEOUT (none free in time) or a connect error. */
int cudis_pool_acquire(cudis_pool *p, int wait_ms, cudis_conn **out);

/* Give a connection back (a broken one is closed and replaced later). */
void cudis_pool_release(cudis_pool *p, cudis_conn *c);

/* ===================================================================== */
/* Read-through with miss policies                                       */
/* ===================================================================== */

/* The slower tier: fill rows + i*row_bytes for each of the n ids. Called
 * from the calling thread (policy fill) or the background worker (policy
 * default); must be thread-safe. Return 0, or non-zero when it failed (the
 * rows then stay misses). */
typedef int (*cudis_loader_fn)(void *arg, size_t n, const uint64_t *ids, void *rows);

enum cudis_miss_policy {
    CUDIS_MISS_FILL = 0,    /* load misses now, write back, return complete rows */
    CUDIS_MISS_DEFAULT = 1, /* return the default row now, fill in the background */
    CUDIS_MISS_AUTO = 2,    /* DEFAULT while the recent hit ratio stays high, else FILL */
};

typedef struct cudis_rt_options {
    int policy;              /* enum cudis_miss_policy (default CUDIS_MISS_AUTO) */
    double hit_threshold;    /* AUTO: switch to DEFAULT at or above (default 0.9) */
    double hysteresis;       /* AUTO: back to FILL below threshold - this (default 0.02) */
    size_t window_ids;       /* AUTO: ids in the recent-hit-ratio window (default 10000) */
    const void *default_row; /* DEFAULT rows (row_bytes; NULL: zeros); copied */
    int64_t ttl_ms;          /* TTL of written-back rows (0: none) */
    size_t queue_ids;        /* background queue capacity in ids (default 65536) */
    int pool_wait_ms;        /* wait for a pool connection (default 1000) */
} cudis_rt_options;

void cudis_rt_options_default(cudis_rt_options *o);

/* Statistics (a consistent-enough snapshot of atomic counters). */
typedef struct cudis_rt_stats {
    uint64_t calls, ids, hits, misses;
    uint64_t bad_len; /* misses because of a wrong stored length */
    uint64_t loader_calls, loader_ids, loader_errors;
    uint64_t loader_ns;        /* total time inside the loader */
    uint64_t filled_sync;      /* misses filled before returning (FILL) */
    uint64_t defaulted;        /* misses answered with the default row */
    uint64_t filled_async;     /* ids loaded and written by the worker */
    uint64_t queue_dropped;    /* ids not queued: queue full */
    uint64_t writeback_errors; /* failed or skipped write-backs (rows not cached; FILL
                                * skips the write-back when the lookup itself failed) */
    uint64_t mode_switches;    /* AUTO: FILL<->DEFAULT transitions */
    int mode;                  /* current effective policy: FILL or DEFAULT */
    double recent_hit_ratio;   /* AUTO window ratio (or lifetime if unused) */
} cudis_rt_stats;

typedef struct cudis_rt cudis_rt;

/* A read-through cache over pool p and table t (both borrowed: they must
 * outlive it) with loader(arg, ...) for misses. Starts the worker thread.
 * NULL on failure with the reason in err. */
cudis_rt *cudis_rt_create(cudis_pool *p, const cudis_table *t, cudis_loader_fn loader, void *arg,
                          const cudis_rt_options *o, char *err, size_t err_len);

/* Stop the worker (after it drains its queue) and free. */
void cudis_rt_destroy(cudis_rt *rt);

/* Get n complete rows: hits from the cache, misses per the policy. found
 * (may be NULL) receives per row CUDIS_ROW_HIT (from cache), CUDIS_ROW_MISS
 * (loaded or defaulted: the row is still valid) or CUDIS_ROW_FAILED (no
 * valid row: the cache and the loader both failed for it). Returns 0 when
 * every row is valid, else the first error. Thread-safe. */
int cudis_rt_get(cudis_rt *rt, size_t n, const uint64_t *ids, void *rows, uint8_t *found);

/* Wait until the background queue is empty (tests, shutdown). */
void cudis_rt_flush(cudis_rt *rt);

void cudis_rt_stats_get(cudis_rt *rt, cudis_rt_stats *out);

#endif /* CUDIS_H */
