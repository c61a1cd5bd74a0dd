/*
 * cudis_op.h - the batch every store executes, and the semantics of each
 * operation, written once.
 *
 * A batch is an array of cudis_op records whose key and value bytes live in
 * one packed input buffer; the store writes one cudis_result per op and packs
 * returned values into one output buffer. Multi-key commands become several
 * ops. Operations in one batch may run in any order and concurrently: the
 * caller (the server's batcher) never puts two ops on the same key into one
 * batch when either of them writes. Several reads of one key may share a
 * batch.
 *
 * What an op does to one key is decided by cudis_plan_op(), a pure function
 * of (op, the key's current value and expiry, the clock). Every store (the
 * CCHT on host and device, the exact baselines) calls it while it holds the
 * key (lock, or optimistic read), then carries out the returned plan. So
 * every engine has the same semantics by construction, and the CUDA kernels
 * compile the same code (CUDIS_HD).
 *
 * A store executes an op like this:
 *   1. look the key up; expired entries count as absent (cur.found = false);
 *   2. cudis_plan_op(op, arg, &cur, now, max_val_len, &plan, &res);
 *      a negative return is the op's error: store it in res.status, stop;
 *   3. if plan.return_old: reserve plan.ret_len bytes of the out buffer
 *      (atomically add to batch->out_len); if that passes out_cap, set
 *      res.status = CUDIS_E_OUTBUF, res.val_len = needed length, and do
 *      NOTHING else (the caller re-runs the op with a bigger buffer);
 *      otherwise copy those bytes of the old value (from plan.ret_off:
 *      all of it but for HGET) there, set res.val_off/val_len and
 *      CUDIS_R_VALUE;
 *   4. carry out plan.action: WRITE a new value of plan.new_len bytes built
 *      by cudis_plan_build(), of type plan.new_type (the store keeps each
 *      key's type and gives it back in cur.type), with expiry
 *      plan.expire_ms, SETEXP (only the expiry changes), DELETE; if the
 *      write cannot get memory,
 *      res.status = CUDIS_E_FULL (or CUDIS_E_NOMEM) and the old value stays.
 *      The write policy (one for every engine): a store that keeps items in
 *      place while holding the key may rewrite the value in its own memory
 *      when it still fits, keeps its type, is built from segments (not a
 *      hash edit) and every CUDIS_SEG_OLD segment stays where it is (the
 *      CCHT: same chunk class and header shape); otherwise the new
 *      value goes to new memory, made visible in one step, and the old is
 *      freed. Either way no reader ever sees a mix of old and new bytes;
 *   5. if plan.touch (or the op wrote), refresh the key's recency; count a
 *      hit or a miss when plan.lookup is set (cudis_plan_op leaves it unset
 *      under CUDIS_F_NOSTATS and in internal databases, CUDIS_DB_INTERNAL).
 *
 * Events: when batch->ev is not NULL, the store reports there every key it
 * removes on its own while running the batch (cudis_ev_add): EVICTED for a
 * key evicted to make room (a full bucket pair, memory, a page move, a
 * baseline's policy), EXPIRED for a key found expired and reclaimed (an op
 * meeting its own key expired, whether it then writes the key anew or
 * not; an expired slot or chunk taken for another key). Keys the ops
 * remove themselves (DEL, GETDEL, EXPIRE in the past, a SET replacing or
 * expiring a value) are not events: the op results say so. A key is
 * reported once per removal; the order of a batch's events means nothing.
 * An op that returned CUDIS_E_OUTBUF did not change its key, but memory
 * eviction done for it before the out-buffer check is real and reported
 * (its rerun reports only what it removes then).
 */
#ifndef CUDIS_OP_H
#define CUDIS_OP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cudis_err.h"
#include "cudis_hash.h"
#include "cudis_hd.h"

/* ------------------------------------------------------------------------
 * Operations
 * ---------------------------------------------------------------------- */

enum cudis_op_code {
    CUDIS_OP_GET = 1,  /* value; F_DEL (GETDEL), F_SETEXP/F_PERSIST (GETEX) */
    CUDIS_OP_SET,      /* F_NX F_XX F_KEEPTTL F_GET; expire_ms (0 = none) */
    CUDIS_OP_DEL,      /* remove */
    CUDIS_OP_EXISTS,   /* presence; F_TOUCH also refreshes recency (TOUCH); res.num =
                        * the access frequency under an LFU policy (OBJECT FREQ);
                        * F_STAMP: else the key's recency stamp when the store keeps
                        * one (OBJECT IDLETIME); else 0 */
    CUDIS_OP_INCRBY,   /* arg = delta; missing key counts as 0; keeps expiry */
    CUDIS_OP_APPEND,   /* append value; creates the key; keeps expiry */
    CUDIS_OP_SETRANGE, /* arg = offset; overwrite from offset, zero-padding; keeps expiry */
    CUDIS_OP_EXPIRE,   /* expire_ms absolute; F_NX F_XX F_GT F_LT; past time deletes */
    CUDIS_OP_PERSIST,  /* remove the expiry */
    CUDIS_OP_TTL,      /* report the expiry in res.num */
    CUDIS_OP_SETBIT,   /* arg = bit offset; F_BIT1 sets it, else clears; res.num = old bit */
    /* Hashes and sets (cudis_hash.h): the key is one item of type
     * CUDIS_TYPE_HASH, or CUDIS_TYPE_SET when op->type says so (a set's
     * members are fields without values; HINCRBY is for hashes only). */
    CUDIS_OP_HSET,    /* value = HSET edits; F_NX: fields that exist stay (HSETNX);
                       * res.num = fields added; creates the key, keeps its expiry;
                       * arg > 0: R_BIG when the value it writes is longer */
    CUDIS_OP_HDEL,    /* value = HDEL edits; res.num = fields removed; the last one
                       * removed deletes the key */
    CUDIS_OP_HGET,    /* value = the field; its value is returned, res.num = 1 when
                       * the field exists */
    CUDIS_OP_HINCRBY, /* value = the field, arg = delta (a missing field counts as
                       * 0); res.num = the new value */
    CUDIS_OP_HLEN,    /* res.num = the number of fields */
    /* Lists: one item of type CUDIS_TYPE_LIST in the same encoding, the
     * elements as fields without values, head first (HLEN is LLEN). */
    CUDIS_OP_LPUSH, /* value = the elements as encoded entries, in the order they end up
                     * (the caller reverses LPUSH's); F_RIGHT: at the tail; F_XX: only
                     * onto a list there (LPUSHX); res.num = the new length */
    CUDIS_OP_LPOP,  /* arg = count >= 1; F_RIGHT: from the tail. Returns the popped
                     * entries as they lie in the list (a tail pop: last one last);
                     * res.num = how many; the last one popped deletes the key */
    /* Sorted sets: one item of type CUDIS_TYPE_ZSET in the same encoding,
     * each member a field whose value is its score (8 bytes, an IEEE
     * double as the host stores it; -0 is stored as 0), entries in
     * (score, member bytes) order (cudis_zcmp). HSET HDEL HGET HLEN with
     * op->type ZSET read and remove members; these two keep the order. */
    CUDIS_OP_ZADD,   /* value = one entry: varint(len) member varint(8) score;
                      * F_NX F_XX F_GT F_LT as ZADD's options; F_INCR: the score
                      * is an increment. res.num = 1 when the member was added
                      * (F_INCR: the new score's bits); R_DONE when written;
                      * R_SKIPPED when NX/XX/GT/LT said no; CUDIS_E_NAN when an
                      * increment makes a NaN. Creates the key, keeps its expiry */
    CUDIS_OP_ZRANGE, /* value = cudis_zrange_arg; F_BYSCORE: [min, max] with
                      * arg's CUDIS_ZR_MINEX / MAXEX, then LIMIT off, count
                      * (count < 0: all; off < 0: none); else ranks start..stop
                      * as ZRANGE's (negative from the end); F_RIGHT: REV (ranks
                      * and LIMIT count from the top). Returns the entries
                      * selected as one run of the value in set order (a REV
                      * reply reads it backwards); res.num = how many */
    CUDIS_OP__COUNT
};

/* What a key holds. An op names the type it works on (cudis_op.type): a
 * key of another type fails it with CUDIS_E_WRONGTYPE, except for the ops
 * that take any type (DEL, EXISTS, EXPIRE, PERSIST, TTL, SET without
 * F_GET, which replaces any value) and GET with CUDIS_TYPE_ANY (the value
 * as stored, whatever its type: DUMP, RENAME, COPY). SET writes an item
 * of the op's type; the other writes keep the key's type, or create their
 * own (string ops a string, hash ops a hash). */
enum cudis_type {
    CUDIS_TYPE_STRING = 0,
    CUDIS_TYPE_HASH = 1,
    CUDIS_TYPE_SET = 2,
    CUDIS_TYPE_LIST = 3,
    CUDIS_TYPE_ZSET = 4,
    /* The head of a hash the server keeps in chunks (server/bighash.c): a
     * store keeps it as any other type; the hash ops fail on it
     * (WRONGTYPE), which routes nothing wrongly. */
    CUDIS_TYPE_BIGHASH = 5,
    CUDIS_TYPE__COUNT,
    CUDIS_TYPE_ANY = 0xff
};

/* Which live items a store may evict to make room: Redis's maxmemory-policy.
 * Expired items always go first, whatever the policy. With none to evict,
 * a write of a new key fails with CUDIS_E_FULL (reads and deletes work on).
 * The LFU ones rank by Redis's logarithmic access counter with decay
 * (lfu-log-factor, lfu-decay-time). allkeys-cudis is cudis's own, beside
 * Redis's: recency with quick demotion of keys not read since they came, a
 * ghost of such keys and two-bit reuse counters, inside the CCHT's bucket
 * pair (S3-FIFO's ideas at bucket scale; cuckoo/ccht_bucket.h);
 * allkeys-rrip, the other design measured beside it, SRRIP with hit
 * promotion with the pair as the set. */
enum cudis_policy {
    CUDIS_POL_ALLKEYS_LRU = 0, /* the least recently used (the default) */
    CUDIS_POL_NOEVICTION,      /* none */
    CUDIS_POL_VOLATILE_LRU,    /* the least recently used of those with an expiry */
    CUDIS_POL_ALLKEYS_RANDOM,  /* any */
    CUDIS_POL_VOLATILE_RANDOM, /* any with an expiry */
    CUDIS_POL_VOLATILE_TTL,    /* the one with the nearest expiry */
    CUDIS_POL_ALLKEYS_LFU,     /* the least frequently used */
    CUDIS_POL_VOLATILE_LFU,    /* the least frequently used of those with an expiry */
    CUDIS_POL_ALLKEYS_CUDIS,   /* recency, one-hit wonders first (cudis's own) */
    CUDIS_POL_ALLKEYS_RRIP,    /* 2-bit re-reference prediction in the pair (cudis's own) */
    CUDIS_POL__COUNT
};

#define CUDIS_F_NX 0x0001      /* SET: only if absent. EXPIRE: only if no expiry */
#define CUDIS_F_XX 0x0002      /* SET: only if present. EXPIRE: only if it has one */
#define CUDIS_F_GT 0x0004      /* EXPIRE: only if later than the current (none = infinite) */
#define CUDIS_F_LT 0x0008      /* EXPIRE: only if earlier than the current */
#define CUDIS_F_KEEPTTL 0x0010 /* SET: keep the existing expiry */
#define CUDIS_F_GET 0x0020     /* SET: also return the old value */
#define CUDIS_F_DEL 0x0040     /* GET: delete after reading (GETDEL) */
#define CUDIS_F_SETEXP 0x0080  /* GET: set expiry to expire_ms (GETEX EX/PX/EXAT/PXAT) */
#define CUDIS_F_PERSIST 0x0100 /* GET: remove the expiry (GETEX PERSIST) */
#define CUDIS_F_TOUCH 0x0200   /* EXISTS: refresh recency (TOUCH) */
#define CUDIS_F_BIT1 0x0400    /* SETBIT: the bit becomes 1 */
#define CUDIS_F_AGED                                                                               \
    0x0400                     /* SET: arg dates the key written, as RESTORE's IDLETIME or         \
                                * FREQ and dump.rdb do: under an LFU policy its counter            \
                                * (0..255), else the clock ticks since its last access; a          \
                                * store that keeps neither ignores it */
#define CUDIS_F_NOTOUCH 0x0800 /* GET: leave the key's recency as it is (CLIENT NO-TOUCH) */
#define CUDIS_F_RIGHT 0x2000   /* LPUSH, LPOP: the list's tail. ZRANGE: REV */
#define CUDIS_F_INCR 0x4000    /* ZADD: the score is an increment (ZADD INCR, ZINCRBY) */
#define CUDIS_F_BYSCORE 0x4000 /* ZRANGE: a score range (else ranks) */
#define CUDIS_F_NOSTATS 0x8000 /* any op: no hit or miss counted (a caller's own look, not a read) */
#define CUDIS_F_STAMP                                                                              \
    0x1000 /* EXISTS: res.num = the key's recency stamp (the low 32 bits                           \
            * of engine_clock at its last access) */

/* Numbered databases: an op names its key's database; keys of different
 * databases never meet (a store keeps (db, key) as the key). */
#define CUDIS_MAX_DBS 256
#define CUDIS_DB_ALL (-1) /* scan, flush: every database */
/* Databases with this bit hold a caller's internal items (the server's
 * big-hash chunks), not keys: the keyspace statistics (hits, misses,
 * evictions, expirations) leave them out; the caller counts what their
 * removal means (a whole hash evicted is one key). */
#define CUDIS_DB_INTERNAL 0x80u
CUDIS_HD static inline bool cudis_db_counted(uint32_t db)
{
    return (db & CUDIS_DB_INTERNAL) == 0;
}

typedef struct cudis_op {
    uint8_t code;      /* enum cudis_op_code */
    uint8_t db;        /* the key's database, 0..CUDIS_MAX_DBS-1 */
    uint16_t flags;    /* CUDIS_F_* */
    uint32_t key_len;
    uint64_t key_off;  /* key bytes at batch->in + key_off */
    uint64_t val_off;  /* value bytes (SET, APPEND, SETRANGE) at batch->in + val_off */
    uint32_t val_len;
    uint8_t type; /* enum cudis_type the op works on (0: string) */
    uint8_t reserved2[3];
    int64_t arg;       /* INCRBY delta; SETRANGE offset (>= 0) */
    int64_t expire_ms; /* absolute Unix ms; 0 = no expiry */
} cudis_op;

/* Result flags */
#define CUDIS_R_FOUND 0x1 /* the key was live before the op */
#define CUDIS_R_DONE 0x2  /* the op was applied (written, deleted, expiry changed) */
#define CUDIS_R_VALUE 0x4 /* a value is at batch->out + val_off, val_len bytes */
#define CUDIS_R_GONE 0x8  /* a hash op removed the key (its last field went) */
#define CUDIS_R_SKIPPED 0x10 /* ZADD: NX, XX, GT or LT kept the op from applying */
#define CUDIS_R_BIG 0x20     /* HSET: the value written is longer than op->arg bytes */

typedef struct cudis_result {
    int32_t status;    /* CUDIS_OK, or a negative CUDIS_E_* for this op alone */
    uint32_t flags;    /* CUDIS_R_* */
    uint64_t val_off;
    uint32_t val_len;  /* with CUDIS_E_OUTBUF: the length that did not fit */
    uint32_t type;     /* the key's enum cudis_type, when it was found */
    /* GET, TTL: the key's expiry before the op (abs ms) or -1 for none.
     * INCRBY: the new value. APPEND, SETRANGE: the new length. Else 0. */
    int64_t num;
} cudis_result;

/* A key a store removed on its own: evicted to make room, or expired and
 * reclaimed. A record whose key bytes did not fit has kind 0 (lost). */
enum { CUDIS_EV_EVICTED = 1, CUDIS_EV_EXPIRED = 2 };
typedef struct cudis_event {
    uint8_t kind; /* CUDIS_EV_*, 0: lost (its key bytes did not fit) */
    uint8_t db;   /* the key's database */
    uint16_t reserved;
    uint32_t key_len;
    uint64_t key_off; /* key bytes at evbuf->keys + key_off */
} cudis_event;

/* Where a store reports events: the caller owns it and its arrays, zeroes
 * len and keys_len (or leaves what earlier calls reported: stores append),
 * and reads it after the call. Stores reserve records and key bytes
 * atomically (cudis_ev_add), so the threads of one batch share one sink.
 * An event whose record or key bytes do not fit is lost, but its
 * reservation still counts: len > cap or keys_len > keys_cap afterwards
 * (cudis_ev_lost) means events were lost, and len / keys_len are what all
 * of them needed. Nothing is written past cap or keys_cap. */
typedef struct cudis_evbuf {
    cudis_event *recs;
    uint32_t cap;
    uint32_t len; /* records reserved (atomically); may end above cap: the rest were lost */
    uint8_t *keys;
    uint64_t keys_cap;
    uint64_t keys_len; /* bytes reserved (atomically); likewise */
} cudis_evbuf;

typedef struct cudis_batch {
    const cudis_op *ops;
    uint32_t n_ops;
    const uint8_t *in;   /* packed key and value bytes the ops point into */
    cudis_result *res;   /* n_ops results, filled by the store */
    uint8_t *out;        /* returned values, packed by the store */
    uint64_t out_cap;
    uint64_t out_len;    /* reserved so far; updated atomically by the store.
                          * Start at 0. May end above out_cap when some ops
                          * returned CUDIS_E_OUTBUF. */
    int64_t now_ms;      /* the clock every op of the batch uses for expiry */
    cudis_evbuf *ev;     /* keys the store removes on its own (see the top);
                          * NULL: the caller wants no events */
} cudis_batch;

/* Called by scan for each live key (with its database). Return non-zero to
 * stop early. */
typedef int (*cudis_scan_fn)(void *arg, uint8_t db, const uint8_t *key, uint32_t key_len,
                             int64_t expire_ms);

/* ------------------------------------------------------------------------
 * Events
 * ---------------------------------------------------------------------- */

/* Reserve one event of `kind` for a key of key_len bytes in database db
 * and write its record. Returns where the caller copies the key bytes, or
 * NULL when there is nothing to copy: the event is lost (its record or its
 * bytes do not fit; a record that fits without its bytes is written with
 * kind 0), or the key is empty. Any thread, host or device. */
CUDIS_HD static inline uint8_t *cudis_ev_add(cudis_evbuf *ev, uint8_t kind, uint8_t db,
                                             uint32_t key_len)
{
    uint32_t r = cudis_fetch_add_u32(&ev->len, 1);
    uint64_t k = cudis_fetch_add_u64(&ev->keys_len, key_len);
    if (r >= ev->cap) {
        return 0;
    }
    bool fits = k <= ev->keys_cap && key_len <= ev->keys_cap - k;
    cudis_event *e = &ev->recs[r];
    e->kind = fits ? kind : 0;
    e->db = db;
    e->reserved = 0;
    e->key_len = fits ? key_len : 0;
    e->key_off = fits ? k : 0;
    return fits ? ev->keys + k : 0;
}

/* Whether events were lost (the caller then assumes any key may be gone). */
CUDIS_HD static inline bool cudis_ev_lost(const cudis_evbuf *ev)
{
    return ev->len > ev->cap || ev->keys_len > ev->keys_cap;
}

/* ------------------------------------------------------------------------
 * Plans: what an op does to one key
 * ---------------------------------------------------------------------- */

/* The key as the store found it (under its lock or an optimistic read). */
typedef struct cudis_cur {
    bool found;           /* present and not expired */
    const uint8_t *val;   /* current value (when found) */
    uint32_t val_len;
    int64_t expire_ms;    /* 0 = none */
    uint8_t type;         /* enum cudis_type (when found) */
} cudis_cur;

enum cudis_action {
    CUDIS_ACT_NONE = 0,
    CUDIS_ACT_WRITE,  /* store a new value (plan.new_len bytes) with plan.expire_ms */
    CUDIS_ACT_SETEXP, /* keep the value, set the expiry to plan.expire_ms */
    CUDIS_ACT_DELETE  /* remove the key */
};

enum cudis_seg_src {
    CUDIS_SEG_OLD = 0, /* bytes of the current value */
    CUDIS_SEG_ARG,     /* bytes of the op's value argument */
    CUDIS_SEG_ZERO,    /* zero bytes (SETRANGE padding) */
    CUDIS_SEG_NUM      /* the plan's formatted number (INCRBY) */
};

typedef struct cudis_seg {
    uint8_t src;
    uint32_t off;
    uint32_t len;
} cudis_seg;

typedef struct cudis_plan {
    uint8_t action;      /* enum cudis_action */
    bool return_old;     /* copy ret_len bytes of the current value from ret_off
                          * to the out buffer */
    bool touch;          /* refresh recency */
    bool lookup;         /* counts as a lookup: hit if cur.found, else miss */
    uint8_t nseg;
    uint8_t num_len;
    uint8_t new_type;    /* WRITE: the item's enum cudis_type */
    uint8_t hedit;       /* WRITE: 0 = the segments; else a CUDIS_HEDIT_* of the op's
                          * value applied to the current hash (cudis_hash_apply) */
    bool hnx;            /* with hedit: HSETNX */
    int64_t expire_ms;   /* WRITE, SETEXP: the new expiry (0 = none) */
    uint32_t new_len;    /* WRITE: the new value's length */
    uint32_t ret_off, ret_len; /* return_old: the bytes returned */
    uint32_t old_len, arg_len; /* with hedit: the current value's and the edits' lengths */
    cudis_seg seg[6];    /* WRITE: the new value is these segments, in order */
    char num[24];        /* text of an INCRBY / HINCRBY result */
} cudis_plan;

/*
 * Redis's string2ll: a decimal int64 with an optional '-', no spaces, no '+',
 * no leading zeros ("0" itself is fine, "-0" is not). Returns true on success.
 */
CUDIS_HD static inline bool cudis_str2ll(const uint8_t *s, uint32_t len, int64_t *out)
{
    if (len == 0 || len > 20) {
        return false;
    }
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return true;
    }
    uint32_t i = 0;
    bool neg = false;
    if (s[0] == '-') {
        neg = true;
        i = 1;
        if (len == 1) {
            return false;
        }
    }
    if (s[i] < '1' || s[i] > '9') {
        return false;
    }
    uint64_t v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) {
            return false;
        }
        *out = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX) {
            return false;
        }
        *out = (int64_t)v;
    }
    return true;
}

/* Decimal text of v into buf (at least 21 bytes); returns its length. */
CUDIS_HD static inline uint32_t cudis_ll2str(int64_t v, char *buf)
{
    char tmp[24];
    uint32_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    uint32_t len = 0;
    if (v < 0) {
        buf[len++] = '-';
    }
    while (n > 0) {
        buf[len++] = tmp[--n];
    }
    return len;
}

CUDIS_HD static inline void cudis_plan_seg(cudis_plan *p, uint8_t src, uint32_t off, uint32_t len)
{
    if (len > 0) {
        p->seg[p->nseg].src = src;
        p->seg[p->nseg].off = off;
        p->seg[p->nseg].len = len;
        p->nseg++;
    }
}

/* Whether an op reads value bytes (op->val_off, val_len) from the batch. */
CUDIS_HD static inline bool cudis_op_has_val(uint8_t code)
{
    return code == CUDIS_OP_SET || code == CUDIS_OP_APPEND || code == CUDIS_OP_SETRANGE ||
           code == CUDIS_OP_HSET || code == CUDIS_OP_HDEL || code == CUDIS_OP_HGET ||
           code == CUDIS_OP_HINCRBY || code == CUDIS_OP_LPUSH || code == CUDIS_OP_ZADD ||
           code == CUDIS_OP_ZRANGE;
}

/* The type an op works on: CUDIS_TYPE_ANY for those that take any key. */
CUDIS_HD static inline uint8_t cudis_op_wants(const cudis_op *op)
{
    switch (op->code) {
    case CUDIS_OP_GET: return op->type;
    case CUDIS_OP_SET: return (op->flags & CUDIS_F_GET) ? CUDIS_TYPE_STRING : CUDIS_TYPE_ANY;
    case CUDIS_OP_INCRBY:
    case CUDIS_OP_APPEND:
    case CUDIS_OP_SETRANGE:
    case CUDIS_OP_SETBIT: return CUDIS_TYPE_STRING;
    case CUDIS_OP_HSET:
    case CUDIS_OP_HDEL:
    case CUDIS_OP_HGET:
    case CUDIS_OP_HLEN:
        return op->type == CUDIS_TYPE_SET || op->type == CUDIS_TYPE_LIST ||
                       op->type == CUDIS_TYPE_ZSET
                   ? op->type
                   : (uint8_t)CUDIS_TYPE_HASH;
    case CUDIS_OP_HINCRBY: return CUDIS_TYPE_HASH;
    case CUDIS_OP_LPUSH:
    case CUDIS_OP_LPOP: return CUDIS_TYPE_LIST;
    case CUDIS_OP_ZADD:
    case CUDIS_OP_ZRANGE: return CUDIS_TYPE_ZSET;
    default: return CUDIS_TYPE_ANY;
    }
}

/* The 4-byte count header of a collection as the plan's number segment. */
CUDIS_HD static inline void cudis_plan_count(cudis_plan *p, uint32_t n)
{
    p->num[0] = (char)(uint8_t)n;
    p->num[1] = (char)(uint8_t)(n >> 8);
    p->num[2] = (char)(uint8_t)(n >> 16);
    p->num[3] = (char)(uint8_t)(n >> 24);
    p->num_len = CUDIS_HASH_HDR;
}

/* INCRBY's arithmetic: the current text (none: 0) plus d, as the plan's
 * number (p->num) and in *out; CUDIS_E_NOTINT / CUDIS_E_OVERFLOW. */
CUDIS_HD static inline int cudis_plan_incr(const uint8_t *val, uint32_t len, bool found, int64_t d,
                                           cudis_plan *p, int64_t *out)
{
    int64_t v = 0;
    if (found && !cudis_str2ll(val, len, &v)) {
        return CUDIS_E_NOTINT;
    }
    if ((d < 0 && v < 0 && d < INT64_MIN - v) || (d > 0 && v > 0 && d > INT64_MAX - v)) {
        return CUDIS_E_OVERFLOW;
    }
    *out = v + d;
    p->num_len = (uint8_t)cudis_ll2str(*out, p->num);
    return CUDIS_OK;
}

/* The hash ops' plans (cudis_hash.h). */
CUDIS_HD static inline int cudis_plan_hash(const cudis_op *op, const uint8_t *arg,
                                           const cudis_cur *cur, uint32_t max_val_len,
                                           cudis_plan *p, cudis_result *res)
{
    const uint8_t *old = cur->found ? cur->val : 0;
    uint32_t old_len = cur->found ? cur->val_len : 0;
    p->new_type = cudis_op_wants(op);
    cudis_hedits ed = {CUDIS_HEDIT_SET, arg, op->val_len, 0, 0};
    cudis_hentry e = {0, 0, 0, 0, 0};
    switch (op->code) {
    case CUDIS_OP_HGET:
    case CUDIS_OP_HLEN:
        p->lookup = true;
        if (!cur->found) {
            return CUDIS_OK;
        }
        p->touch = !(op->flags & CUDIS_F_NOTOUCH);
        if (op->code == CUDIS_OP_HLEN) {
            res->num = cudis_hash_count(old, old_len);
        } else if (cudis_hash_find(old, old_len, arg, op->val_len, &e)) {
            res->num = 1;
            p->return_old = true;
            p->ret_off = (uint32_t)(e.v - old);
            p->ret_len = e.vlen;
        }
        return CUDIS_OK;
    case CUDIS_OP_HINCRBY: {
        bool has = cur->found && cudis_hash_find(old, old_len, arg, op->val_len, &e);
        int64_t v;
        int rc = cudis_plan_incr(e.v, e.vlen, has, op->arg, p, &v);
        if (rc != CUDIS_OK) {
            return rc;
        }
        res->num = v;
        ed.kind = CUDIS_HEDIT_INCR;
        ed.num = (const uint8_t *)p->num;
        ed.num_len = p->num_len;
        break;
    }
    case CUDIS_OP_HDEL:
        if (!cur->found) {
            return CUDIS_OK;
        }
        ed.kind = CUDIS_HEDIT_DEL;
        break;
    default: break;
    }
    bool nx = op->code == CUDIS_OP_HSET && (op->flags & CUDIS_F_NX);
    cudis_happly a = cudis_hash_apply(&ed, nx, old, old_len, 0);
    if (a.bad) {
        return CUDIS_E_INVAL;
    }
    if (op->code == CUDIS_OP_HSET) {
        res->num = a.added;
    } else if (op->code == CUDIS_OP_HDEL) {
        res->num = a.removed;
    }
    if (a.added + a.removed + a.replaced == 0) {
        return CUDIS_OK;
    }
    res->flags |= CUDIS_R_DONE;
    if (a.count == 0) {
        p->action = CUDIS_ACT_DELETE; /* the last field went: so does the key */
        res->flags |= CUDIS_R_GONE;
        return CUDIS_OK;
    }
    if (a.len > max_val_len) {
        res->flags &= ~(uint32_t)CUDIS_R_DONE;
        return CUDIS_E_VALTOOBIG;
    }
    p->action = CUDIS_ACT_WRITE;
    p->touch = true;
    p->new_len = (uint32_t)a.len;
    if (op->code == CUDIS_OP_HSET && op->arg > 0 && a.len > (uint64_t)op->arg) {
        res->flags |= CUDIS_R_BIG;
    }
    if (op->code == CUDIS_OP_HSET && a.added == a.edits && a.replaced == 0) {
        /* only new, distinct fields: the edits are the entries to append
         * (the common SADD / HSET of a new field), so the value is built
         * from segments and may grow in place */
        cudis_plan_count(p, a.count);
        cudis_plan_seg(p, CUDIS_SEG_NUM, 0, CUDIS_HASH_HDR);
        if (old_len > CUDIS_HASH_HDR) {
            cudis_plan_seg(p, CUDIS_SEG_OLD, CUDIS_HASH_HDR, old_len - CUDIS_HASH_HDR);
        }
        cudis_plan_seg(p, CUDIS_SEG_ARG, 0, op->val_len);
        return CUDIS_OK;
    }
    p->hedit = ed.kind;
    p->hnx = nx;
    p->old_len = old_len;
    p->arg_len = op->val_len;
    return CUDIS_OK;
}

/* LPUSH and LPOP: segments around the current value (no field search). */
CUDIS_HD static inline int cudis_plan_list(const cudis_op *op, const uint8_t *arg,
                                           const cudis_cur *cur, uint32_t max_val_len,
                                           cudis_plan *p, cudis_result *res)
{
    const uint8_t *old = cur->found ? cur->val : 0;
    uint32_t old_len = cur->found ? cur->val_len : 0;
    uint32_t n = cur->found ? cudis_hash_count(old, old_len) : 0;
    bool right = op->flags & CUDIS_F_RIGHT;
    p->new_type = CUDIS_TYPE_LIST;
    if (cur->found && old_len < CUDIS_HASH_HDR) {
        return CUDIS_E_INVAL;
    }
    uint32_t body = cur->found ? old_len - CUDIS_HASH_HDR : 0;
    cudis_hentry e;
    if (op->code == CUDIS_OP_LPUSH) {
        uint32_t m = 0;
        for (uint32_t at = 0; at < op->val_len; at += e.size, m++) {
            if (!cudis_hentry_at(arg + at, op->val_len - at, true, &e)) {
                return CUDIS_E_INVAL;
            }
        }
        res->num = cur->found ? n : 0;
        if ((op->flags & CUDIS_F_XX) && !cur->found) {
            return CUDIS_OK; /* LPUSHX onto nothing */
        }
        uint64_t len = (uint64_t)CUDIS_HASH_HDR + body + op->val_len;
        if (len > max_val_len) {
            return CUDIS_E_VALTOOBIG;
        }
        res->num = (int64_t)n + m;
        if (m == 0) {
            return CUDIS_OK;
        }
        cudis_plan_count(p, n + m);
        cudis_plan_seg(p, CUDIS_SEG_NUM, 0, CUDIS_HASH_HDR);
        if (right) {
            cudis_plan_seg(p, CUDIS_SEG_OLD, CUDIS_HASH_HDR, body);
            cudis_plan_seg(p, CUDIS_SEG_ARG, 0, op->val_len);
        } else {
            cudis_plan_seg(p, CUDIS_SEG_ARG, 0, op->val_len);
            cudis_plan_seg(p, CUDIS_SEG_OLD, CUDIS_HASH_HDR, body);
        }
        p->new_len = (uint32_t)len;
        p->action = CUDIS_ACT_WRITE;
        p->touch = true;
        res->flags |= CUDIS_R_DONE;
        return CUDIS_OK;
    }
    /* LPOP: the first (or last) k entries, a contiguous run of the value */
    p->lookup = true;
    if (!cur->found) {
        return CUDIS_OK;
    }
    if (op->arg < 1) {
        return CUDIS_E_INVAL;
    }
    uint32_t k = (uint64_t)op->arg >= n ? n : (uint32_t)op->arg;
    uint32_t skip = right ? n - k : k; /* entries before the cut */
    uint32_t cut = CUDIS_HASH_HDR;
    for (uint32_t i = 0; i < skip; i++, cut += e.size) {
        if (!cudis_hentry_at(old + cut, old_len - cut, true, &e)) {
            return CUDIS_E_INVAL;
        }
    }
    res->num = k;
    res->flags |= CUDIS_R_DONE;
    p->return_old = true;
    p->ret_off = right ? cut : CUDIS_HASH_HDR;
    p->ret_len = right ? old_len - cut : cut - CUDIS_HASH_HDR;
    p->touch = true;
    if (k == n) {
        p->action = CUDIS_ACT_DELETE;
        res->flags |= CUDIS_R_GONE;
        return CUDIS_OK;
    }
    cudis_plan_count(p, n - k);
    cudis_plan_seg(p, CUDIS_SEG_NUM, 0, CUDIS_HASH_HDR);
    if (right) {
        cudis_plan_seg(p, CUDIS_SEG_OLD, CUDIS_HASH_HDR, cut - CUDIS_HASH_HDR);
    } else {
        cudis_plan_seg(p, CUDIS_SEG_OLD, cut, old_len - cut);
    }
    p->new_len = CUDIS_HASH_HDR + (right ? cut - CUDIS_HASH_HDR : old_len - cut);
    p->action = CUDIS_ACT_WRITE;
    return CUDIS_OK;
}

/* ------------------------------------------------------------------------
 * Sorted sets
 * ---------------------------------------------------------------------- */

/* ZRANGE's value argument (read byte by byte: the batch need not align it). */
typedef struct cudis_zrange_arg {
    double min, max; /* F_BYSCORE: the score range */
    int64_t a, b;    /* F_BYSCORE: LIMIT offset, count; else start, stop ranks */
} cudis_zrange_arg;

#define CUDIS_ZR_MINEX 1 /* ZRANGE op->arg: the min bound is exclusive */
#define CUDIS_ZR_MAXEX 2 /* ZRANGE op->arg: the max bound is exclusive */

CUDIS_HD static inline double cudis_bits_double(uint64_t u)
{
    union {
        uint64_t u;
        double d;
    } x;
    x.u = u;
    return x.d;
}

CUDIS_HD static inline uint64_t cudis_double_bits(double d)
{
    union {
        uint64_t u;
        double d;
    } x;
    x.d = d;
    return x.u;
}

/* An entry's score (one that is not 8 bytes reads as 0). */
CUDIS_HD static inline double cudis_zscore(const cudis_hentry *e)
{
    return e->vlen == 8 ? cudis_bits_double(cudis_read_le(e->v, 8)) : 0;
}

/* Redis's order of a zset: by score, then by member bytes (the shorter
 * first where one is the other's prefix). */
CUDIS_HD static inline int cudis_zcmp(double as, const uint8_t *am, uint32_t alen, double bs,
                                      const uint8_t *bm, uint32_t blen)
{
    if (as != bs) {
        return as < bs ? -1 : 1;
    }
    uint32_t n = alen < blen ? alen : blen;
#if CUDIS_DEVICE_CODE
    for (uint32_t i = 0; i < n; i++) {
        if (am[i] != bm[i]) {
            return am[i] < bm[i] ? -1 : 1;
        }
    }
#else
    int d = n ? memcmp(am, bm, n) : 0;
    if (d != 0) {
        return d < 0 ? -1 : 1;
    }
#endif
    return (alen > blen) - (alen < blen);
}

/* ZADD of one member: the value rebuilt from segments around the old
 * entry (removed) and the new one (inserted where the order puts it). */
CUDIS_HD static inline int cudis_plan_zadd(const cudis_op *op, const uint8_t *arg,
                                           const cudis_cur *cur, uint32_t max_val_len,
                                           cudis_plan *p, cudis_result *res)
{
    const uint8_t *old = cur->found ? cur->val : 0;
    uint32_t old_len = cur->found ? cur->val_len : CUDIS_HASH_HDR;
    cudis_hentry ne, oe = {0, 0, 0, 0, 0}, e;
    if (!cudis_hentry_at(arg, op->val_len, true, &ne) || ne.size != op->val_len || ne.vlen != 8 ||
        (cur->found && old_len < CUDIS_HASH_HDR)) {
        return CUDIS_E_INVAL;
    }
    p->new_type = CUDIS_TYPE_ZSET;
    p->touch = cur->found; /* ZADD looks its key up, as Redis's lookupKeyWrite */
    double s = cudis_zscore(&ne);
    bool has = false;
    uint32_t oa = 0, ob = 0; /* the member's entry, when it has one */
    for (uint32_t at = CUDIS_HASH_HDR; cur->found && at < old_len; at += oe.size) {
        if (!cudis_hentry_at(old + at, old_len - at, true, &oe)) {
            return CUDIS_E_INVAL;
        }
        if (cudis_bytes_same(oe.f, oe.flen, ne.f, ne.flen)) {
            has = true;
            oa = at;
            ob = at + oe.size;
            break;
        }
    }
    bool incr = (op->flags & CUDIS_F_INCR) != 0;
    if (has) {
        double now = cudis_zscore(&oe);
        double ns = incr ? now + s : s;
        if (op->flags & CUDIS_F_NX) {
            res->flags |= CUDIS_R_SKIPPED;
            return CUDIS_OK;
        }
        if (ns != ns) {
            return CUDIS_E_NAN;
        }
        if (((op->flags & CUDIS_F_GT) && ns <= now) || ((op->flags & CUDIS_F_LT) && ns >= now)) {
            res->flags |= CUDIS_R_SKIPPED;
            return CUDIS_OK;
        }
        res->num = incr ? (int64_t)cudis_double_bits(ns) : 0;
        if (ns == now) {
            return CUDIS_OK; /* the same score: nothing to write */
        }
        s = ns;
    } else {
        if (op->flags & CUDIS_F_XX) {
            res->flags |= CUDIS_R_SKIPPED;
            return CUDIS_OK;
        }
        res->num = incr ? (int64_t)cudis_double_bits(s) : 1;
    }
    if (s == 0) {
        s = 0; /* -0 is stored as 0 */
    }
    uint32_t n = cur->found ? cudis_hash_count(old, old_len) : 0;
    /* where the new entry goes: before the first entry ordered after it */
    uint32_t ins = old_len;
    for (uint32_t at = CUDIS_HASH_HDR; at < old_len; at += e.size) {
        if (!cudis_hentry_at(old + at, old_len - at, true, &e)) {
            return CUDIS_E_INVAL;
        }
        if ((!has || at != oa) && cudis_zcmp(cudis_zscore(&e), e.f, e.flen, s, ne.f, ne.flen) > 0) {
            ins = at;
            break;
        }
    }
    uint64_t len = (uint64_t)old_len - (ob - oa) + ne.size;
    if (len > max_val_len) {
        return CUDIS_E_VALTOOBIG;
    }
    res->flags |= CUDIS_R_DONE;
    p->action = CUDIS_ACT_WRITE;
    p->touch = true;
    p->new_len = (uint32_t)len;
    cudis_plan_count(p, has ? n : n + 1);
    uint64_t bits = cudis_double_bits(s);
    for (int i = 0; i < 8; i++) {
        p->num[CUDIS_HASH_HDR + i] = (char)(uint8_t)(bits >> (8 * i));
    }
    p->num_len = CUDIS_HASH_HDR + 8;
    cudis_plan_seg(p, CUDIS_SEG_NUM, 0, CUDIS_HASH_HDR);
    /* the old entries before ins, less the old one, the new one, the rest */
    uint32_t cut = has && oa < ins ? oa : ins;
    cudis_plan_seg(p, CUDIS_SEG_OLD, CUDIS_HASH_HDR, cut - CUDIS_HASH_HDR);
    if (has && oa < ins) {
        cudis_plan_seg(p, CUDIS_SEG_OLD, ob, ins - ob);
    }
    cudis_plan_seg(p, CUDIS_SEG_ARG, 0, ne.size - 8);
    cudis_plan_seg(p, CUDIS_SEG_NUM, CUDIS_HASH_HDR, 8);
    if (has && oa >= ins) {
        cudis_plan_seg(p, CUDIS_SEG_OLD, ins, oa - ins);
        cudis_plan_seg(p, CUDIS_SEG_OLD, ob, old_len - ob);
    } else {
        cudis_plan_seg(p, CUDIS_SEG_OLD, ins, old_len - ins);
    }
    return CUDIS_OK;
}

/* ZRANGE by rank or score: the run of entries selected, as a slice. */
CUDIS_HD static inline int cudis_plan_zrange(const cudis_op *op, const uint8_t *arg,
                                             const cudis_cur *cur, cudis_plan *p,
                                             cudis_result *res)
{
    p->lookup = true;
    if (op->val_len != sizeof(cudis_zrange_arg)) {
        return CUDIS_E_INVAL;
    }
    if (!cur->found) {
        return CUDIS_OK;
    }
    const uint8_t *h = cur->val;
    uint32_t len = cur->val_len;
    if (len < CUDIS_HASH_HDR) {
        return CUDIS_E_INVAL;
    }
    double min = cudis_bits_double(cudis_read_le(arg, 8));
    double max = cudis_bits_double(cudis_read_le(arg + 8, 8));
    int64_t a = (int64_t)cudis_read_le(arg + 16, 8), b = (int64_t)cudis_read_le(arg + 24, 8);
    int64_t n = cudis_hash_count(h, len);
    bool rev = (op->flags & CUDIS_F_RIGHT) != 0;
    int64_t lo, hi; /* the entries selected, by forward index, inclusive */
    cudis_hentry e;
    if (op->flags & CUDIS_F_BYSCORE) {
        int64_t i0 = 0, i1 = 0; /* entries below min; entries up to max */
        for (uint32_t at = CUDIS_HASH_HDR; at < len; at += e.size) {
            if (!cudis_hentry_at(h + at, len - at, true, &e)) {
                return CUDIS_E_INVAL;
            }
            double s = cudis_zscore(&e);
            bool below = (op->arg & CUDIS_ZR_MINEX) ? s <= min : s < min;
            bool upto = (op->arg & CUDIS_ZR_MAXEX) ? s < max : s <= max;
            if (!upto) {
                break;
            }
            i0 += below;
            i1++;
            if (!rev && a >= 0 && b >= 0 && i1 - i0 - a >= b) {
                break; /* LIMIT's entries are counted: the rest is not wanted */
            }
        }
        /* matches are [i0, i1); LIMIT a, b counts from the end REV walks from */
        lo = i0;
        hi = i1 - 1;
        if (a < 0) {
            hi = lo - 1; /* Redis: a negative offset selects nothing */
        } else if (rev) {
            hi = a > hi - lo + 1 ? lo - 1 : hi - a;
            if (b >= 0 && hi - lo + 1 > b) {
                lo = hi - b + 1;
            }
        } else {
            lo = a > hi - lo + 1 ? hi + 1 : lo + a;
            if (b >= 0 && hi - lo + 1 > b) {
                hi = lo + b - 1;
            }
        }
    } else {
        int64_t s = a < 0 ? a + n : a, t = b < 0 ? b + n : b;
        if (s < 0) {
            s = 0;
        }
        if (t >= n) {
            t = n - 1;
        }
        lo = rev ? n - 1 - t : s;
        hi = rev ? n - 1 - s : t;
    }
    p->touch = !(op->flags & CUDIS_F_NOTOUCH);
    p->return_old = true;
    p->ret_off = CUDIS_HASH_HDR;
    p->ret_len = 0;
    if (lo > hi || lo >= n || hi < 0) {
        return CUDIS_OK;
    }
    uint32_t at = CUDIS_HASH_HDR;
    for (int64_t i = 0; i <= hi; i++, at += e.size) {
        if (i == lo) {
            p->ret_off = at;
        }
        if (!cudis_hentry_at(h + at, len - at, true, &e)) {
            return CUDIS_E_INVAL;
        }
    }
    p->ret_len = at - p->ret_off;
    res->num = hi - lo + 1;
    return CUDIS_OK;
}

/* cudis_plan_op below, but for what it counts (CUDIS_F_NOSTATS, CUDIS_DB_INTERNAL). */
CUDIS_HD static inline int cudis_plan_key(const cudis_op *op, const uint8_t *arg,
                                          const cudis_cur *cur, int64_t now_ms,
                                          uint32_t max_val_len, cudis_plan *p, cudis_result *res);

/*
 * Decide what `op` does to a key in state `cur` at time `now_ms`. Fills
 * `plan` and the parts of `res` that do not depend on the store (flags
 * FOUND/DONE, num, type). Returns CUDIS_OK or the op's error
 * (CUDIS_E_NOTINT, CUDIS_E_OVERFLOW, CUDIS_E_VALTOOBIG, CUDIS_E_WRONGTYPE,
 * CUDIS_E_INVAL); on error nothing may change. `arg` is the op's value
 * bytes (batch->in + op->val_off); hash ops read them, the others only
 * reference them by segment (cudis_plan_build copies them).
 */
CUDIS_HD static inline int cudis_plan_op(const cudis_op *op, const uint8_t *arg,
                                         const cudis_cur *cur, int64_t now_ms, uint32_t max_val_len,
                                         cudis_plan *p, cudis_result *res)
{
    int rc = cudis_plan_key(op, arg, cur, now_ms, max_val_len, p, res);
    p->lookup = p->lookup && cudis_db_counted(op->db) && !(op->flags & CUDIS_F_NOSTATS);
    return rc;
}

CUDIS_HD static inline int cudis_plan_key(const cudis_op *op, const uint8_t *arg,
                                          const cudis_cur *cur, int64_t now_ms,
                                          uint32_t max_val_len, cudis_plan *p, cudis_result *res)
{
    p->action = CUDIS_ACT_NONE;
    p->return_old = false;
    p->touch = false;
    p->lookup = false;
    p->nseg = 0;
    p->num_len = 0;
    p->expire_ms = cur->found ? cur->expire_ms : 0;
    p->new_len = 0;
    res->status = CUDIS_OK;
    res->flags = cur->found ? CUDIS_R_FOUND : 0;
    res->val_off = 0;
    res->val_len = 0;
    res->num = 0;
    res->type = cur->found ? cur->type : 0;
    uint32_t old_len = cur->found ? cur->val_len : 0;
    p->new_type = cur->found ? cur->type : (uint8_t)CUDIS_TYPE_STRING;
    p->hedit = 0;
    p->hnx = false;
    p->ret_off = 0;
    p->ret_len = old_len;
    p->old_len = old_len;
    p->arg_len = op->val_len;
    uint8_t want = cudis_op_wants(op);
    if (cur->found && want != CUDIS_TYPE_ANY && cur->type != want) {
        res->flags = CUDIS_R_FOUND;
        return CUDIS_E_WRONGTYPE;
    }

    switch (op->code) {
    case CUDIS_OP_GET:
        p->lookup = true;
        res->num = (cur->found && cur->expire_ms != 0) ? cur->expire_ms : -1;
        if (!cur->found) {
            return CUDIS_OK;
        }
        p->return_old = true;
        p->touch = !(op->flags & CUDIS_F_NOTOUCH);
        if (op->flags & CUDIS_F_DEL) {
            p->action = CUDIS_ACT_DELETE;
            res->flags |= CUDIS_R_DONE;
        } else if (op->flags & (CUDIS_F_SETEXP | CUDIS_F_PERSIST)) {
            int64_t e = (op->flags & CUDIS_F_PERSIST) ? 0 : op->expire_ms;
            p->action = (e != 0 && e <= now_ms) ? CUDIS_ACT_DELETE : CUDIS_ACT_SETEXP;
            p->expire_ms = e;
            res->flags |= CUDIS_R_DONE;
        }
        return CUDIS_OK;

    case CUDIS_OP_SET: {
        if (op->flags & CUDIS_F_GET) {
            p->return_old = cur->found;
        }
        if (((op->flags & CUDIS_F_NX) && cur->found) ||
            ((op->flags & CUDIS_F_XX) && !cur->found)) {
            return CUDIS_OK;
        }
        if (op->val_len > max_val_len) {
            return CUDIS_E_VALTOOBIG;
        }
        int64_t e = op->expire_ms;
        if ((op->flags & CUDIS_F_KEEPTTL) && cur->found) {
            e = cur->expire_ms;
        }
        res->flags |= CUDIS_R_DONE;
        if (e != 0 && e <= now_ms) {
            /* Already expired: the write is acknowledged and never visible. */
            p->action = cur->found ? CUDIS_ACT_DELETE : CUDIS_ACT_NONE;
            return CUDIS_OK;
        }
        p->action = CUDIS_ACT_WRITE;
        p->touch = true;
        p->expire_ms = e;
        p->new_len = op->val_len;
        p->new_type = op->type < CUDIS_TYPE__COUNT ? op->type : (uint8_t)CUDIS_TYPE_STRING;
        cudis_plan_seg(p, CUDIS_SEG_ARG, 0, op->val_len);
        return CUDIS_OK;
    }

    case CUDIS_OP_DEL:
        if (cur->found) {
            p->action = CUDIS_ACT_DELETE;
            res->flags |= CUDIS_R_DONE;
        }
        return CUDIS_OK;

    case CUDIS_OP_EXISTS:
        p->touch = cur->found && (op->flags & CUDIS_F_TOUCH);
        return CUDIS_OK;

    case CUDIS_OP_INCRBY: {
        int64_t v;
        int rc = cudis_plan_incr(cur->val, cur->val_len, cur->found, op->arg, p, &v);
        if (rc != CUDIS_OK) {
            return rc;
        }
        p->action = CUDIS_ACT_WRITE;
        p->touch = true;
        p->new_len = p->num_len;
        cudis_plan_seg(p, CUDIS_SEG_NUM, 0, p->num_len);
        res->flags |= CUDIS_R_DONE;
        res->num = v;
        return CUDIS_OK;
    }

    case CUDIS_OP_APPEND: {
        uint64_t n = (uint64_t)old_len + op->val_len;
        if (n > max_val_len) {
            return CUDIS_E_VALTOOBIG;
        }
        p->action = CUDIS_ACT_WRITE;
        p->touch = true;
        p->new_len = (uint32_t)n;
        cudis_plan_seg(p, CUDIS_SEG_OLD, 0, old_len);
        cudis_plan_seg(p, CUDIS_SEG_ARG, 0, op->val_len);
        res->flags |= CUDIS_R_DONE;
        res->num = (int64_t)n;
        return CUDIS_OK;
    }

    case CUDIS_OP_SETRANGE: {
        if (op->arg < 0) {
            return CUDIS_E_INVAL;
        }
        res->num = old_len;
        if (op->val_len == 0) {
            return CUDIS_OK; /* Redis: no change, reply the current length */
        }
        uint64_t off = (uint64_t)op->arg;
        uint64_t end = off + op->val_len;
        uint64_t n = end > old_len ? end : old_len;
        if (n > max_val_len) {
            return CUDIS_E_VALTOOBIG;
        }
        p->action = CUDIS_ACT_WRITE;
        p->touch = true;
        p->new_len = (uint32_t)n;
        if (off <= old_len) {
            cudis_plan_seg(p, CUDIS_SEG_OLD, 0, (uint32_t)off);
            cudis_plan_seg(p, CUDIS_SEG_ARG, 0, op->val_len);
            if (end < old_len) {
                cudis_plan_seg(p, CUDIS_SEG_OLD, (uint32_t)end, (uint32_t)(old_len - end));
            }
        } else {
            cudis_plan_seg(p, CUDIS_SEG_OLD, 0, old_len);
            cudis_plan_seg(p, CUDIS_SEG_ZERO, 0, (uint32_t)(off - old_len));
            cudis_plan_seg(p, CUDIS_SEG_ARG, 0, op->val_len);
        }
        res->flags |= CUDIS_R_DONE;
        res->num = (int64_t)n;
        return CUDIS_OK;
    }

    case CUDIS_OP_SETBIT: {
        if (op->arg < 0) {
            return CUDIS_E_INVAL;
        }
        uint64_t byte = (uint64_t)op->arg >> 3;
        uint32_t shift = 7 - (uint32_t)(op->arg & 7); /* bit 0 is the most significant */
        uint64_t n = byte + 1 > old_len ? byte + 1 : old_len;
        if (n > max_val_len) {
            return CUDIS_E_VALTOOBIG;
        }
        uint8_t ob = byte < old_len ? cur->val[byte] : 0;
        uint8_t nb = (op->flags & CUDIS_F_BIT1) ? (uint8_t)(ob | (1u << shift))
                                                : (uint8_t)(ob & ~(1u << shift));
        res->num = (ob >> shift) & 1;
        p->action = CUDIS_ACT_WRITE;
        p->touch = true;
        p->new_len = (uint32_t)n;
        p->num[0] = (char)nb;
        p->num_len = 1;
        if (byte < old_len) {
            cudis_plan_seg(p, CUDIS_SEG_OLD, 0, (uint32_t)byte);
            cudis_plan_seg(p, CUDIS_SEG_NUM, 0, 1);
            cudis_plan_seg(p, CUDIS_SEG_OLD, (uint32_t)byte + 1, old_len - (uint32_t)byte - 1);
        } else {
            cudis_plan_seg(p, CUDIS_SEG_OLD, 0, old_len);
            cudis_plan_seg(p, CUDIS_SEG_ZERO, 0, (uint32_t)(byte - old_len));
            cudis_plan_seg(p, CUDIS_SEG_NUM, 0, 1);
        }
        res->flags |= CUDIS_R_DONE;
        return CUDIS_OK;
    }

    case CUDIS_OP_EXPIRE: {
        if (!cur->found) {
            return CUDIS_OK;
        }
        int64_t e = op->expire_ms, c = cur->expire_ms;
        uint16_t f = op->flags;
        if ((f & CUDIS_F_NX) && c != 0) {
            return CUDIS_OK;
        }
        if ((f & CUDIS_F_XX) && c == 0) {
            return CUDIS_OK;
        }
        if ((f & CUDIS_F_GT) && (c == 0 || e <= c)) {
            return CUDIS_OK;
        }
        if ((f & CUDIS_F_LT) && c != 0 && e >= c) {
            return CUDIS_OK;
        }
        p->action = (e <= now_ms) ? CUDIS_ACT_DELETE : CUDIS_ACT_SETEXP;
        p->expire_ms = e;
        res->flags |= CUDIS_R_DONE;
        return CUDIS_OK;
    }

    case CUDIS_OP_PERSIST:
        if (cur->found && cur->expire_ms != 0) {
            p->action = CUDIS_ACT_SETEXP;
            p->expire_ms = 0;
            res->flags |= CUDIS_R_DONE;
        }
        return CUDIS_OK;

    case CUDIS_OP_TTL:
        res->num = (cur->found && cur->expire_ms != 0) ? cur->expire_ms : -1;
        return CUDIS_OK;

    case CUDIS_OP_HSET:
    case CUDIS_OP_HDEL:
    case CUDIS_OP_HGET:
    case CUDIS_OP_HINCRBY:
    case CUDIS_OP_HLEN: return cudis_plan_hash(op, arg, cur, max_val_len, p, res);
    case CUDIS_OP_LPUSH:
    case CUDIS_OP_LPOP: return cudis_plan_list(op, arg, cur, max_val_len, p, res);
    case CUDIS_OP_ZADD: return cudis_plan_zadd(op, arg, cur, max_val_len, p, res);
    case CUDIS_OP_ZRANGE: return cudis_plan_zrange(op, arg, cur, p, res);

    default:
        return CUDIS_E_INVAL;
    }
}

/*
 * Write the new value of a WRITE plan into dst (plan->new_len bytes). `old`
 * is the current value, `arg` the op's value bytes (batch->in + op->val_off).
 * dst must not overlap old.
 */
CUDIS_HD static inline void cudis_plan_build(const cudis_plan *p, const uint8_t *old,
                                             const uint8_t *arg, uint8_t *dst)
{
    if (p->hedit != 0) {
        cudis_hedits ed = {p->hedit, arg, p->arg_len, (const uint8_t *)p->num, p->num_len};
        (void)cudis_hash_apply(&ed, p->hnx, old, p->old_len, dst);
        return;
    }
    uint32_t at = 0;
    for (uint8_t i = 0; i < p->nseg; i++) {
        const cudis_seg *s = &p->seg[i];
#if !CUDIS_DEVICE_CODE
        if (s->src == CUDIS_SEG_ZERO) {
            memset(dst + at, 0, s->len);
        } else {
            const uint8_t *src = s->src == CUDIS_SEG_OLD   ? old
                                 : s->src == CUDIS_SEG_ARG ? arg
                                                           : (const uint8_t *)p->num;
            memcpy(dst + at, src + s->off, s->len);
        }
#else
        for (uint32_t j = 0; j < s->len; j++) {
            uint8_t b;
            switch (s->src) {
            case CUDIS_SEG_OLD: b = old[s->off + j]; break;
            case CUDIS_SEG_ARG: b = arg[s->off + j]; break;
            case CUDIS_SEG_NUM: b = (uint8_t)p->num[s->off + j]; break;
            default: b = 0; break;
            }
            dst[at + j] = b;
        }
#endif
        at += s->len;
    }
}

#endif /* CUDIS_OP_H */
