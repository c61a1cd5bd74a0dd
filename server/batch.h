/*
 * batch.h - the batcher and who runs it. One open batch per event loop
 * gathers the engine ops of many commands (key set: an op never shares a
 * batch with another op on its key when either writes) with, per command,
 * a pending reply (pend) that renders its reply from the results. A
 * batch_flusher owns running a batch: the engine lock, execute (inline, or
 * submitted to an engine queue while the loop goes on: engine-pipeline),
 * out-buffer reruns, statistics, then the replies in the order the
 * commands came. Command handlers only add ops and pends; they never run a
 * batch or touch the event loop.
 */
#ifndef BATCH_H
#define BATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "commands.h"
#include "cudis_op.h"
#include "engine.h"

typedef struct pend pend;

typedef void (*reply_fn)(conn *c, pend *p, const cudis_batch *b);

struct pend {
    conn *c;
    const command *cmd;
    reply_fn fn;
    uint32_t op0, nops;
    int64_t a, b; /* the reply function's parameters */
    int32_t k;
    void *aux; /* more of them (malloc'd; freed once answered) */
    bool track;  /* client-side caching remembers the keys of its ops */
    bool silent; /* CLIENT REPLY OFF / SKIP: the reply is dropped */
};

/* The keyspace event an op sends when applied (keyspace.c): KEV_AUTO
 * derives it from the op; the others name it for the command that added
 * the op; KEV_QUIET sends none (the command sends its own). KEV_READ
 * marks an op of a read command (a GET that misses is a "keymiss"). */
enum {
    KEV_AUTO = 0,
    KEV_QUIET,
    KEV_INCRBYFLOAT,
    KEV_RESTORE,
    KEV_SETBIT,
    KEV_SET,
    KEV_COPY_TO,
    KEV_HINCRBYFLOAT,
    KEV_BIGHASH, /* an op of bighash.c's: no event, no mark (it sends its own) */
    KEV__COUNT
};
#define KEV_READ 0x80

/* Beside each op: the client whose command added it (tracking's NOLOOP)
 * and its keyspace event. */
typedef struct op_meta {
    uint64_t who;
    uint8_t ev;
    bool write; /* the op may change its key (a BGSAVE saves the key first: rdb_guard) */
} op_meta;

#define HIST_BUCKETS 24

/* Statistics counters: written by their loop's thread only, read by INFO
 * and reset by CONFIG RESETSTAT from any: relaxed atomics (plain moves on
 * x86, no locked instruction). */
#define STAT_ADD(x, n)                                                                             \
    __atomic_store_n(&(x), __atomic_load_n(&(x), __ATOMIC_RELAXED) + (n), __ATOMIC_RELAXED)
#define STAT_INC(x) STAT_ADD(x, 1)
#define STAT_GET(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STAT_SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

typedef struct batch_stats {
    uint64_t batches, ops, cmds;
    uint64_t size_hist[HIST_BUCKETS]; /* bucket i: sizes in [2^i, 2^(i+1)) */
    uint64_t wait_hist[HIST_BUCKETS]; /* microseconds, same bucketing */
    uint64_t exec_ns;
    uint64_t wait_us_sum;
    uint64_t sealed_conflict, sealed_full, sealed_deadline, sealed_drain;
    uint64_t outbuf_reruns;
    uint64_t failed;
} batch_stats;

typedef struct batcher {
    cudis_op *ops;
    cudis_result *res;
    op_meta *meta;
    uint32_t nops, cap_ops;
    uint8_t *in;
    size_t in_len, in_cap;
    uint8_t *out;
    size_t out_cap;
    pend *pends;
    uint32_t npend, cap_pend;
    /* keys of the open batch: open addressing, entries valid when gen matches */
    uint32_t *kent; /* op index | 0x80000000 when a write */
    uint32_t *kgen;
    uint32_t kcap;
    uint32_t gen;
    bool exclusive; /* a multi-key command is in the batch */
    uint64_t seq;   /* pends ever added (monotonic) */
    /* the last batch_conflicts() lookup, reused by the next batch_add_op() */
    const char *lk_key;
    uint32_t lk_len, lk_slot, lk_nops, lk_gen;
    bool lk_found;
    char *lit; /* the bytes of literal replies (batch_add_literal) */
    uint8_t db; /* the engine's database of the ops batch_add_op adds next */
    uint8_t ev; /* and their KEV_* (dispatch sets it per command) */
    uint64_t who; /* and the client id whose command adds them */
    bool notouch; /* and whether their reads leave recency alone (CLIENT NO-TOUCH) */
    void *owner;  /* the loop whose batches these are */
    bool quiet;   /* reads of a BGSAVE's walk, off any loop: batch_exec leaves the
                   * keyspace's machinery alone (no events, watch, tracking, counts) */
    cudis_evbuf evb; /* keys the engine removed on its own (keyspace.c wants them) */
    size_t lit_len, lit_cap;
    uint64_t open_ns; /* when the first op arrived */
    int64_t now_ms;
    batch_stats st;
} batcher;

#define CMD_LAT_BUCKETS 32 /* latency histogram: bucket i holds calls of [2^i, 2^(i+1)) us */

typedef struct cmd_stat {
    uint64_t calls, usec, rejected, failed;
    uint64_t lat[CMD_LAT_BUCKETS]; /* latency-tracking */
} cmd_stat;

/* One call of a command that took `usec` microseconds. */
static inline void cmd_stat_call(cmd_stat *cs, uint64_t usec, bool track)
{
    STAT_INC(cs->calls);
    STAT_ADD(cs->usec, usec);
    if (track) {
        int b = usec > 1 ? 63 - __builtin_clzll(usec) : 0;
        STAT_INC(cs->lat[b < CMD_LAT_BUCKETS ? b : CMD_LAT_BUCKETS - 1]);
    }
}

/* Why a batch was sealed (statistics). */
enum { SEAL_IDLE = 0, SEAL_CONFLICT, SEAL_FULL, SEAL_DEADLINE, SEAL_DRAIN };

/* Runs one loop's batches; the loop fills `open`. */
typedef struct batch_flusher {
    batcher *open;  /* the loop's open batch */
    batcher flight; /* submitted, not yet answered (engine-pipeline) */
    cudis_batch fcb;
    engine_queue *q;            /* NULL: every batch runs inline */
    pthread_rwlock_t *eng_lock; /* srv.eng_lock; NULL while the loop holds it (excl_begin) */
    cmd_stat *cmd_stats;        /* the loop's per-command counters */
    void (*answered)(conn *c);  /* c got replies: write them */
    bool in_flight, flight_locked;
    int flight_reason;
    uint64_t flight_t0, flight_wait_us;
    int64_t flight_now;
} batch_flusher;

/* Run the open batch and answer it. The batch in flight, if any, is
 * answered first (so replies keep their order and it is done before this
 * one starts). With a queue, a batch that needs no exclusive engine is
 * submitted and answered later (batch_complete, when the queue's fd says
 * so, or the next flush); SEAL_DRAIN answers everything before returning. */
void batch_flush(batch_flusher *f, engine *e, int reason);
/* Wait for the batch in flight, if any, and answer it. */
void batch_complete(batch_flusher *f, engine *e);

void batch_init(batcher *b);
void batch_deinit(batcher *b);
/* Whether a key conflicts with the open batch (write: the new op writes). */
bool batch_conflicts(batcher *b, const char *key, uint32_t len, bool write);
/* Append an op on database b->db; key/value are copied. Returns its index. */
uint32_t batch_add_op(batcher *b, uint8_t code, uint16_t flags, const char *key, uint32_t klen,
                      const char *val, uint32_t vlen, int64_t arg, int64_t expire_ms, bool write);
pend *batch_add_pend(batcher *b, conn *c, reply_fn fn, uint32_t op0, uint32_t nops);
/* A reply already rendered (n bytes, copied) that must wait for c's
 * earlier pending replies: answered in its place in the batch. */
void batch_add_literal(batcher *b, conn *c, const char *bytes, size_t n);
/* Execute the ops in the batch (no replies); handles CUDIS_E_OUTBUF. The
 * caller holds the engine lock. Returns the engine's return code. */
int batch_exec(batcher *b, engine *e, int64_t now_ms);
void batch_reset(batcher *b);
void batch_record(batch_stats *st, uint32_t nops, uint64_t wait_us, uint64_t exec_ns);
uint64_t hist_quantile(const uint64_t *h, double q);

#endif /* BATCH_H */
