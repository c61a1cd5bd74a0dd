/*
 * bighash.c - hashes too big for one engine item, kept in chunks.
 *
 * A hash whose encoding grows past hash-max-item-size bytes (the HSET op
 * that made it so reports CUDIS_R_BIG) is converted, alone between
 * batches, into
 *   - its head: the key's own item, of type CUDIS_TYPE_BIGHASH, holding a
 *     bh_head (the chunking's level and split, the field count), with the
 *     key's expiry and recency: TYPE, EXISTS, EXPIRE, TTL, DEL, SCAN,
 *     DBSIZE and RANDOMKEY see it as they see any key;
 *   - chunks: items of engine database (the key's | BH_HIDDEN), so no
 *     command that lists keys sees them, keyed by the key and a 4-byte
 *     big-endian chunk number, each an ordinary encoded hash
 *     (cudis_hash.h) of the fields that hash there, so the stores apply
 *     HSET, HDEL, HGET to a chunk as to any hash (in GPU memory on the gpu
 *     engine), and the chunks count against the memory budget.
 * A field's chunk is linear hashing over cudis_hash(field): at level L
 * with split s there are 2^L + s chunks, and a field whose hash is x goes
 * to x mod 2^L, or to x mod 2^(L+1) when the former is below s. When the
 * count passes BH_FIELDS per chunk, chunk s splits (its fields with bit L
 * set move to chunk s + 2^L) and s advances. So a field's HGET, HSET or
 * HDEL is one op on a chunk of about BH_FIELDS fields whatever the size
 * of the hash, and HMGET of N fields is one batch of N + 1 ops.
 *
 * Registry: the server keeps every big hash (engine database, key, head)
 * in a host table. A hash command looks its key up there to choose its
 * path, and the chunks of a head that went (deleted, overwritten,
 * expired, evicted, flushed) are found from it and deleted. Invariant:
 * every head in the engine is in the registry; an entry leaves only once
 * its head was seen gone and its chunks deleted. Writes to a registered
 * key (keyspace_batch_done), the engine's events for it, and the
 * eviction of any chunk mark the entry; bighash_tend settles the marks
 * alone before the next command runs (and from loop 0's cron). Eviction
 * removes a whole hash, as Redis's does: a chunk evicted takes its head
 * and the other chunks with it ("evicted" for the key), so HLEN and
 * HGETALL always agree with what HGET finds.
 *
 * Every command on a big hash runs alone (the loop's batch drained, the
 * engine held exclusively with io-threads > 1); the head's op shares the
 * batch of the chunk ops, which use the registry's copy of the head (it
 * is exact: only this file writes heads, alone). Whole-hash reads
 * (HGETALL...) gather every chunk; DUMP, RENAME, COPY, MOVE first turn the
 * hash back into one item (bighash_unchunk) and go on as for any hash.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bighash.h"
#include "cudis_time.h"
#include "server_internal.h"

#define BH_MAGIC 0x31484243u /* "CBH1" */
/* Mean fields per chunk past which one splits: a field read walks its
 * chunk from the start, so small chunks read fastest. HMGET of 1,000 of
 * 1,000,000 fields against cudis's MGET (bench/server/hashes.sh with
 * cudis-bench): 0.5x at 16 and 8, 0.73x at 4 (2: the same) with a
 * one-line item prefetch; with the batch loop prefetching 640 bytes of
 * each item, 0.74-0.83x at 4 and 0.87-0.94x at 2, whose chunks (1 or 2
 * fields of 256 bytes) the prefetch covers whole (prefetching 1,280 bytes
 * at 4 did not help: 0.73-0.80x); builds compared by
 * bench/server/hmget_ab.sh (bench/results/server/hmget-ab-20261203-124355:
 * HMGET 1.87M and 2.16M rows/s at 2, 1.64M and 1.62M at 4). Memory:
 * 1.02x the strings' at 2, 0.99x at 4 (hashes.sh). */
#define BH_FIELDS 2u
#define BH_SEED 0x62696768617368ull
#define BH_OPS 4096u /* chunk ops per alone batch in whole-hash passes */

typedef struct bh_head {
    uint32_t magic, level, split, reserved;
    uint64_t count;
} bh_head;

enum { TODO_CHECK = 1, TODO_EVICT = 2 };

typedef struct bh_ent {
    struct bh_ent *next;
    uint64_t h;
    bh_head head;
    uint8_t pdb;
    uint8_t todo;
    uint32_t klen;
    char key[];
} bh_ent;

typedef struct bh_req { /* a hash to convert */
    struct bh_req *next;
    uint8_t pdb;
    uint32_t klen;
    char key[];
} bh_req;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static bh_ent **reg_tab;
static uint32_t reg_cap;       /* power of two */
static _Atomic uint32_t reg_n; /* entries */
static _Atomic bool reg_work;  /* an entry is marked, or a conversion waits */
static bh_req *reqs;

static uint64_t key_hash(uint8_t pdb, const char *key, uint32_t klen)
{
    return cudis_hash(key, klen, 0x9e3779b97f4a7c15ull * (pdb + 1u));
}

/* Under reg_lock. */
static bh_ent **reg_slot(uint8_t pdb, const char *key, uint32_t klen, uint64_t h)
{
    if (reg_cap == 0) {
        return NULL;
    }
    bh_ent **pp = &reg_tab[h & (reg_cap - 1)];
    while (*pp != NULL && !((*pp)->h == h && (*pp)->pdb == pdb && (*pp)->klen == klen &&
                            memcmp((*pp)->key, key, klen) == 0)) {
        pp = &(*pp)->next;
    }
    return pp;
}

static void reg_grow(void)
{
    uint32_t cap = reg_cap ? reg_cap * 2 : 64;
    bh_ent **t = xcalloc(cap, sizeof(*t));
    for (uint32_t i = 0; i < reg_cap; i++) {
        for (bh_ent *e = reg_tab[i], *nx; e != NULL; e = nx) {
            nx = e->next;
            e->next = t[e->h & (cap - 1)];
            t[e->h & (cap - 1)] = e;
        }
    }
    free(reg_tab);
    reg_tab = t;
    reg_cap = cap;
}

/* The registry's head of (pdb, key): false when it is not a big hash. */
static bool reg_get(uint8_t pdb, const char *key, uint32_t klen, bh_head *out)
{
    uint64_t h = key_hash(pdb, key, klen);
    pthread_mutex_lock(&reg_lock);
    bh_ent **pp = reg_slot(pdb, key, klen, h);
    bool ok = pp != NULL && *pp != NULL;
    if (ok && out != NULL) {
        *out = (*pp)->head;
    }
    pthread_mutex_unlock(&reg_lock);
    return ok;
}

static void reg_put(uint8_t pdb, const char *key, uint32_t klen, const bh_head *head)
{
    uint64_t h = key_hash(pdb, key, klen);
    pthread_mutex_lock(&reg_lock);
    if (reg_n >= reg_cap) {
        reg_grow();
    }
    bh_ent **pp = reg_slot(pdb, key, klen, h);
    if (*pp == NULL) {
        bh_ent *e = xcalloc(1, sizeof(*e) + klen);
        e->h = h;
        e->pdb = pdb;
        e->klen = klen;
        memcpy(e->key, key, klen);
        *pp = e;
        atomic_fetch_add(&reg_n, 1);
    }
    (*pp)->head = *head;
    pthread_mutex_unlock(&reg_lock);
}

static void reg_del(uint8_t pdb, const char *key, uint32_t klen)
{
    uint64_t h = key_hash(pdb, key, klen);
    pthread_mutex_lock(&reg_lock);
    bh_ent **pp = reg_slot(pdb, key, klen, h);
    if (pp != NULL && *pp != NULL) {
        bh_ent *e = *pp;
        *pp = e->next;
        free(e);
        atomic_fetch_sub(&reg_n, 1);
    }
    pthread_mutex_unlock(&reg_lock);
}

/* The entry's marks in *todo; false when there is no entry. */
static bool reg_todo(uint8_t pdb, const char *key, uint32_t klen, uint8_t *todo)
{
    uint64_t h = key_hash(pdb, key, klen);
    pthread_mutex_lock(&reg_lock);
    bh_ent **pp = reg_slot(pdb, key, klen, h);
    bool ok = pp != NULL && *pp != NULL;
    *todo = ok ? (*pp)->todo : 0;
    pthread_mutex_unlock(&reg_lock);
    return ok;
}

static void reg_mark(uint8_t pdb, const char *key, uint32_t klen, uint8_t todo)
{
    uint64_t h = key_hash(pdb, key, klen);
    pthread_mutex_lock(&reg_lock);
    bh_ent **pp = reg_slot(pdb, key, klen, h);
    if (pp != NULL && *pp != NULL) {
        (*pp)->todo |= todo;
        atomic_store(&reg_work, true);
    }
    pthread_mutex_unlock(&reg_lock);
}

bool bighash_any(void)
{
    return atomic_load_explicit(&reg_n, memory_order_relaxed) != 0;
}

bool bighash_known(uint8_t pdb, const char *key, uint32_t klen)
{
    return bighash_any() && reg_get(pdb, key, klen, NULL);
}

bool bighash_work(void)
{
    return atomic_load_explicit(&reg_work, memory_order_relaxed);
}

void bighash_note_big(uint8_t pdb, const char *key, uint32_t klen)
{
    if (bighash_known(pdb, key, klen)) {
        return;
    }
    bh_req *r = xmalloc(sizeof(*r) + klen);
    r->pdb = pdb;
    r->klen = klen;
    memcpy(r->key, key, klen);
    pthread_mutex_lock(&reg_lock);
    r->next = reqs;
    reqs = r;
    atomic_store(&reg_work, true);
    pthread_mutex_unlock(&reg_lock);
}

void bighash_note_write(uint8_t pdb, const char *key, uint32_t klen)
{
    if (bighash_any()) {
        reg_mark(pdb, key, klen, TODO_CHECK);
    }
}

void bighash_note_event(uint8_t db, const char *key, uint32_t klen)
{
    if (!bighash_any()) {
        return;
    }
    if (db & BH_HIDDEN) { /* a chunk left: its hash goes with it */
        if (klen >= 4) {
            reg_mark(db & (uint8_t)~BH_HIDDEN, key, klen - 4, TODO_EVICT);
        }
    } else {
        reg_mark(db, key, klen, TODO_CHECK);
    }
}

void bighash_note_lost(void)
{
    if (!bighash_any()) {
        return;
    }
    pthread_mutex_lock(&reg_lock);
    for (uint32_t i = 0; i < reg_cap; i++) {
        for (bh_ent *e = reg_tab[i]; e != NULL; e = e->next) {
            e->todo |= TODO_CHECK;
        }
    }
    atomic_store(&reg_work, true);
    pthread_mutex_unlock(&reg_lock);
}

void bighash_flushed(int pdb)
{
    pthread_mutex_lock(&reg_lock);
    for (uint32_t i = 0; i < reg_cap; i++) {
        for (bh_ent **pp = &reg_tab[i]; *pp != NULL;) {
            bh_ent *e = *pp;
            if (pdb < 0 || e->pdb == pdb) {
                *pp = e->next;
                free(e);
                atomic_fetch_sub(&reg_n, 1);
            } else {
                pp = &e->next;
            }
        }
    }
    for (bh_req **pp = &reqs; *pp != NULL;) {
        bh_req *r = *pp;
        if (pdb < 0 || r->pdb == pdb) {
            *pp = r->next;
            free(r);
        } else {
            pp = &r->next;
        }
    }
    pthread_mutex_unlock(&reg_lock);
}

/* ------------------------------------------------------------------------
 * Chunks and ops
 * ---------------------------------------------------------------------- */

static uint32_t chunk_count(const bh_head *h)
{
    return (1u << h->level) + h->split;
}

static uint32_t chunk_of(const bh_head *h, const void *f, uint32_t flen)
{
    uint64_t x = cudis_hash(f, flen, BH_SEED);
    uint32_t i = (uint32_t)(x & ((1ull << h->level) - 1));
    if (i < h->split) {
        i = (uint32_t)(x & ((2ull << h->level) - 1));
    }
    return i;
}

/* Scratch for chunk keys: the key, then 4 bytes of chunk number. */
typedef struct ckey {
    char *p;
    uint32_t klen;
} ckey;

static void ckey_init(ckey *k, const char *key, uint32_t klen)
{
    k->p = xmalloc((size_t)klen + 4);
    memcpy(k->p, key, klen);
    k->klen = klen;
}

static const char *ckey_at(ckey *k, uint32_t idx)
{
    uint8_t *q = (uint8_t *)k->p + k->klen;
    q[0] = (uint8_t)(idx >> 24);
    q[1] = (uint8_t)(idx >> 16);
    q[2] = (uint8_t)(idx >> 8);
    q[3] = (uint8_t)idx;
    return k->p;
}

/* An op of the big-hash machinery on engine database db (its ops send no
 * keyspace event and mark nothing: KEV_BIGHASH). */
static uint32_t bh_op(batcher *b, uint8_t db, uint8_t code, uint16_t flags, const char *key,
                      uint32_t klen, const void *val, uint32_t vlen, int64_t arg, uint8_t type,
                      bool write)
{
    uint8_t sdb = b->db, sev = b->ev;
    b->db = db;
    b->ev = KEV_BIGHASH;
    uint32_t i = batch_add_op(b, code, flags, key, klen, val, vlen, arg, 0, write);
    b->db = sdb;
    b->ev = sev;
    b->ops[i].type = type;
    return i;
}

static uint32_t chunk_op(batcher *b, uint8_t pdb, ckey *k, uint32_t idx, uint8_t code,
                         const void *val, uint32_t vlen, int64_t arg, bool write)
{
    return bh_op(b, pdb | BH_HIDDEN, code, 0, ckey_at(k, idx), k->klen + 4, val, vlen, arg,
                 CUDIS_TYPE_HASH, write);
}

/* The head's op of a command: flags 0 for a read command's (a hit or a
 * miss, as Redis counts them), CUDIS_F_NOSTATS for a write command's,
 * LOOK_ONLY for this file's own looks. */
#define LOOK_ONLY (CUDIS_F_NOTOUCH | CUDIS_F_NOSTATS)
static uint32_t head_read(batcher *b, uint8_t pdb, const char *key, uint32_t klen, uint16_t flags)
{
    return bh_op(b, pdb, CUDIS_OP_GET, flags, key, klen, NULL, 0, 0, CUDIS_TYPE_ANY, false);
}

static uint32_t head_write(batcher *b, uint8_t pdb, const char *key, uint32_t klen,
                           const bh_head *h)
{
    return bh_op(b, pdb, CUDIS_OP_SET, CUDIS_F_KEEPTTL, key, klen, h, sizeof(*h), 0,
                 CUDIS_TYPE_BIGHASH, true);
}

static int run(loop *lp)
{
    return batch_exec(&lp->b, srv.eng, cudis_now_ms());
}

/* Whether a head op's result is a live big hash (its head in *h). */
static bool head_of(const cudis_result *r, const uint8_t *out, bh_head *h)
{
    if (r->status != CUDIS_OK || !(r->flags & CUDIS_R_FOUND) || r->type != CUDIS_TYPE_BIGHASH ||
        !(r->flags & CUDIS_R_VALUE) || r->val_len != sizeof(bh_head)) {
        return false;
    }
    memcpy(h, out + r->val_off, sizeof(*h));
    return h->magic == BH_MAGIC && h->level < 31;
}

static bool head_live(const batcher *b, uint32_t i, bh_head *h)
{
    return head_of(&b->res[i], b->out, h);
}

/* Delete chunks [0, n) of a hash. */
static void reclaim(loop *lp, uint8_t pdb, const char *key, uint32_t klen, uint32_t n)
{
    batcher *b = &lp->b;
    ckey k;
    ckey_init(&k, key, klen);
    for (uint32_t at = 0; at < n; at += BH_OPS) {
        for (uint32_t i = at; i < n && i < at + BH_OPS; i++) {
            chunk_op(b, pdb, &k, i, CUDIS_OP_DEL, NULL, 0, 0, true);
        }
        (void)run(lp);
        batch_reset(b);
    }
    free(k.p);
}

/* ------------------------------------------------------------------------
 * Settling marks, converting
 * ---------------------------------------------------------------------- */

/* An entry marked: its head looked at (without touching it); a head gone
 * (or no longer big) has its chunks deleted and leaves the registry; an
 * evicted chunk takes its live head with it. */
static void settle(loop *lp, uint8_t pdb, const char *key, uint32_t klen, uint8_t todo,
                   const bh_head *known)
{
    batcher *b = &lp->b;
    uint32_t i = head_read(b, pdb, key, klen, LOOK_ONLY);
    (void)run(lp);
    bh_head h;
    bool live = head_live(b, i, &h);
    bool failed = b->res[i].status != CUDIS_OK;
    batch_reset(b);
    if (failed) {
        return; /* the engine failed: the mark stays for the next try */
    }
    if (live && !(todo & TODO_EVICT)) {
        reg_put(pdb, key, klen, &h);
        return;
    }
    if (live) {
        i = bh_op(b, pdb, CUDIS_OP_DEL, 0, key, klen, NULL, 0, 0, CUDIS_TYPE_ANY, true);
        (void)run(lp);
        bool gone = b->res[i].status == CUDIS_OK && (b->res[i].flags & CUDIS_R_DONE);
        batch_reset(b);
        if (gone) {
            atomic_fetch_add(&srv.bh_evicted, 1); /* the engine counted no chunk */
            keyspace_notify(lp, NOTIFY_EVICTED, "evicted", pdb, key, klen);
            if (tracking_active()) {
                tracking_invalidate(lp, key, klen, 0);
                tracking_flush_bcast(lp);
            }
        }
    }
    uint32_t n = chunk_count(known);
    if (live && chunk_count(&h) > n) {
        n = chunk_count(&h);
    }
    reclaim(lp, pdb, key, klen, n);
    reg_del(pdb, key, klen);
}

/* Turn the one-item hash at (pdb, key) into a head and chunks, when it is
 * still longer than hash-max-item-size. A failure (memory) leaves it one
 * item. */
static void convert(loop *lp, uint8_t pdb, const char *key, uint32_t klen)
{
    long long limit = srv.cfg.hash_max_item_size;
    if (limit <= 0 || reg_get(pdb, key, klen, NULL)) {
        return;
    }
    batcher *b = &lp->b;
    uint32_t i =
        bh_op(b, pdb, CUDIS_OP_GET, LOOK_ONLY, key, klen, NULL, 0, 0, CUDIS_TYPE_HASH, false);
    (void)run(lp);
    const cudis_result *r = &b->res[i];
    if (r->status != CUDIS_OK || !(r->flags & CUDIS_R_VALUE) || r->val_len <= limit) {
        batch_reset(b);
        return;
    }
    uint32_t n = r->val_len;
    uint8_t *h = xmalloc(n);
    memcpy(h, b->out + r->val_off, n);
    batch_reset(b);

    bh_head head = {.magic = BH_MAGIC, .count = cudis_hash_count(h, n)};
    while (((uint64_t)BH_FIELDS / 2 << head.level) < head.count && head.level < 24) {
        head.level++;
    }
    uint32_t nc = chunk_count(&head);
    sbuf *ed = xcalloc(nc, sizeof(*ed));
    cudis_hentry e;
    COLL_FOREACH(h, n, at, e)
    {
        sbuf_add(&ed[chunk_of(&head, e.f, e.flen)], h + at, e.size);
    }
    free(h);
    ckey k;
    ckey_init(&k, key, klen);
    bool ok = true;
    for (uint32_t at = 0; at < nc; at += BH_OPS) {
        for (uint32_t c = at; c < nc && c < at + BH_OPS; c++) {
            if (ed[c].len > 0) {
                chunk_op(b, pdb, &k, c, CUDIS_OP_HSET, ed[c].p, (uint32_t)ed[c].len, 0, true);
            }
        }
        (void)run(lp);
        for (uint32_t j = 0; j < b->nops; j++) {
            ok = ok && b->res[j].status == CUDIS_OK;
        }
        batch_reset(b);
    }
    for (uint32_t c = 0; c < nc; c++) {
        sbuf_free(&ed[c]);
    }
    free(ed);
    free(k.p);
    if (ok) {
        /* registered first: an event of the write below finds the entry */
        reg_put(pdb, key, klen, &head);
        i = head_write(b, pdb, key, klen, &head);
        (void)run(lp);
        ok = b->res[i].status == CUDIS_OK;
        batch_reset(b);
        if (!ok) {
            reg_del(pdb, key, klen);
        }
    }
    if (!ok) {
        reclaim(lp, pdb, key, klen, nc);
        log_msg(LL_VERBOSE, "A hash past hash-max-item-size stays one item: its chunks did not "
                            "fit");
    }
}

/* One marked entry or waiting conversion, taken off under the lock. */
typedef struct bh_job {
    uint8_t pdb, todo;
    bool convert;
    bh_head head;
    uint32_t klen;
    char *key;
} bh_job;

static bool next_job(bh_job *j)
{
    bool found = false;
    pthread_mutex_lock(&reg_lock);
    for (uint32_t i = 0; i < reg_cap && !found; i++) {
        for (bh_ent *e = reg_tab[i]; e != NULL; e = e->next) {
            if (e->todo) {
                *j = (bh_job){.pdb = e->pdb, .todo = e->todo, .head = e->head, .klen = e->klen};
                j->key = xmalloc(e->klen + 1u);
                memcpy(j->key, e->key, e->klen);
                e->todo = 0;
                found = true;
                break;
            }
        }
    }
    if (!found && reqs != NULL) {
        bh_req *r = reqs;
        reqs = r->next;
        *j = (bh_job){.pdb = r->pdb, .convert = true, .klen = r->klen};
        j->key = xmalloc(r->klen + 1u);
        memcpy(j->key, r->key, r->klen);
        free(r);
        found = true;
    }
    if (!found) {
        atomic_store(&reg_work, false);
    }
    pthread_mutex_unlock(&reg_lock);
    return found;
}

void bighash_tend(loop *lp)
{
    if (!bighash_work() || lp->busy) {
        return;
    }
    bool locked = excl_begin(lp);
    batcher *b = &lp->b;
    uint8_t db = b->db, ev = b->ev;
    bh_job j;
    for (int rounds = 0; rounds < 1024 && next_job(&j); rounds++) {
        if (j.convert) {
            convert(lp, j.pdb, j.key, j.klen);
        } else {
            settle(lp, j.pdb, j.key, j.klen, j.todo, &j.head);
        }
        free(j.key);
    }
    b->db = db;
    b->ev = ev;
    excl_end(lp, locked);
}

/* ------------------------------------------------------------------------
 * Commands
 * ---------------------------------------------------------------------- */

/* The head's op failed or found no big hash: settle the entry (a head
 * gone leaves the registry) and let the caller take the one-item path. */
static bool not_big(conn *c, uint8_t pdb, const char *key, uint32_t klen, const bh_head *known)
{
    batch_reset(&c->lp->b);
    settle(c->lp, pdb, key, klen, TODO_CHECK, known);
    return false;
}

/* Split chunks while the mean passes BH_FIELDS: *h changes, the caller
 * writes it. Stops (a chunk stays full, nothing lost) when an op fails. */
static void split_while_full(loop *lp, uint8_t pdb, const char *key, uint32_t klen, bh_head *h)
{
    batcher *b = &lp->b;
    ckey k;
    ckey_init(&k, key, klen);
    while (h->count > (uint64_t)BH_FIELDS * chunk_count(h) && h->level < 30) {
        uint32_t s = h->split, to = s + (1u << h->level);
        uint32_t i = chunk_op(b, pdb, &k, s, CUDIS_OP_GET, NULL, 0, 0, false);
        b->ops[i].flags |= CUDIS_F_NOTOUCH;
        (void)run(lp);
        const cudis_result *r = &b->res[i];
        if (r->status != CUDIS_OK) {
            batch_reset(b);
            break;
        }
        sbuf mv = {0}, del = {0};
        if (r->flags & CUDIS_R_VALUE) {
            const uint8_t *v = b->out + r->val_off;
            uint32_t n = r->val_len;
            cudis_hentry e;
            bh_head next = *h;
            next.split = s + 1;
            if (next.split == (1u << h->level)) {
                next.level++;
                next.split = 0;
            }
            COLL_FOREACH(v, n, at, e)
            {
                if (chunk_of(&next, e.f, e.flen) == to) {
                    uint8_t lb[5];
                    sbuf_add(&mv, v + at, e.size);
                    sbuf_add(&del, lb, cudis_varint_put(lb, e.flen));
                    sbuf_add(&del, e.f, e.flen);
                }
            }
        }
        batch_reset(b);
        bool ok = true;
        if (mv.len > 0) {
            uint32_t a = chunk_op(b, pdb, &k, to, CUDIS_OP_HSET, mv.p, (uint32_t)mv.len, 0, true);
            (void)run(lp);
            ok = b->res[a].status == CUDIS_OK;
            batch_reset(b);
            if (ok) {
                uint32_t d =
                    chunk_op(b, pdb, &k, s, CUDIS_OP_HDEL, del.p, (uint32_t)del.len, 0, true);
                (void)run(lp);
                ok = b->res[d].status == CUDIS_OK;
                batch_reset(b);
                if (!ok) { /* the copies go again: chunk s keeps every field */
                    uint32_t x =
                        chunk_op(b, pdb, &k, to, CUDIS_OP_HDEL, del.p, (uint32_t)del.len, 0, true);
                    (void)x;
                    (void)run(lp);
                    batch_reset(b);
                }
            }
        }
        sbuf_free(&mv);
        sbuf_free(&del);
        if (!ok) {
            break;
        }
        h->split++;
        if (h->split == (1u << h->level)) {
            h->level++;
            h->split = 0;
        }
    }
    free(k.p);
}

/* The head after a write: written (with the key's recency), registered. */
static int head_commit(loop *lp, uint8_t pdb, const char *key, uint32_t klen, const bh_head *h)
{
    batcher *b = &lp->b;
    reg_put(pdb, key, klen, h);
    uint32_t i = head_write(b, pdb, key, klen, h);
    (void)run(lp);
    int st = b->res[i].status;
    batch_reset(b);
    return st;
}

/* The whole hash gone with its last field: head and chunks deleted. */
static void drop_all(conn *c, uint8_t pdb, const char *key, uint32_t klen, const bh_head *h)
{
    batcher *b = &c->lp->b;
    bh_op(b, pdb, CUDIS_OP_DEL, 0, key, klen, NULL, 0, 0, CUDIS_TYPE_ANY, true);
    (void)run(c->lp);
    batch_reset(b);
    reclaim(c->lp, pdb, key, klen, chunk_count(h));
    reg_del(pdb, key, klen);
}

static void reply_status(conn *c, int st)
{
    if (st == CUDIS_E_NOTINT) {
        conn_error(c, "ERR hash value is not an integer");
    } else {
        reply_engine_error(c, st);
    }
}

/* Edits grouped by chunk: one HSET (pairs) or HDEL (fields) op per chunk
 * touched, in the order the chunks are first met. The grouping is sized
 * by the edits, not by the hash (an open-addressing table of the chunks
 * touched): a write of one field costs the same in a hash of millions.
 * Returns the first op's index; *nops ops follow it. */
static uint32_t add_edits(batcher *b, uint8_t pdb, ckey *k, const bh_head *h, int argc, char **argv,
                          uint32_t *lens, int from, bool vals, uint8_t code, uint16_t flags,
                          uint32_t *nops)
{
    int step = vals ? 2 : 1;
    int n = (argc - from) / step;
    size_t m = (size_t)(n > 0 ? n : 1);
    uint32_t cap = 8;
    while (cap < 2 * m) {
        cap <<= 1;
    }
    uint32_t *tab_ci = xmalloc(sizeof(uint32_t) * cap); /* chunk of the slot */
    int32_t *tab_g = xmalloc(sizeof(int32_t) * cap);    /* its group, -1: free */
    memset(tab_g, 0xff, sizeof(int32_t) * cap);
    int32_t *nxt = xmalloc(sizeof(int32_t) * m);
    uint32_t *order = xmalloc(sizeof(uint32_t) * m); /* group -> chunk */
    int32_t *first = xmalloc(sizeof(int32_t) * m);   /* group -> its first edit */
    int32_t *last = xmalloc(sizeof(int32_t) * m);    /* group -> its last edit */
    uint32_t norder = 0;
    for (int j = 0; j < n; j++) {
        int a = from + j * step;
        uint32_t ci = chunk_of(h, argv[a], lens[a]);
        uint32_t at = (ci * 0x9e3779b1u) & (cap - 1);
        while (tab_g[at] >= 0 && tab_ci[at] != ci) {
            at = (at + 1) & (cap - 1);
        }
        nxt[j] = -1;
        if (tab_g[at] < 0) {
            tab_ci[at] = ci;
            tab_g[at] = (int32_t)norder;
            order[norder] = ci;
            first[norder] = j;
            last[norder] = j;
            norder++;
        } else {
            int32_t g = tab_g[at];
            nxt[last[g]] = j;
            last[g] = j;
        }
    }
    free(tab_ci);
    free(tab_g);
    uint32_t op0 = b->nops;
    sbuf e = {0};
    for (uint32_t o = 0; o < norder; o++) {
        uint32_t ci = order[o];
        e.len = 0;
        for (int32_t j = first[o]; j >= 0; j = nxt[j]) {
            int a = from + j * step;
            uint8_t lb[5];
            sbuf_add(&e, lb, cudis_varint_put(lb, lens[a]));
            sbuf_add(&e, argv[a], lens[a]);
            if (vals) {
                sbuf_add(&e, lb, cudis_varint_put(lb, lens[a + 1]));
                sbuf_add(&e, argv[a + 1], lens[a + 1]);
            }
        }
        uint32_t i = chunk_op(b, pdb, k, ci, code, e.p, (uint32_t)e.len, 0, true);
        b->ops[i].flags = flags;
    }
    sbuf_free(&e);
    free(first);
    free(nxt);
    free(order);
    free(last);
    *nops = norder;
    return op0;
}

/* The reply of a read (HGET HEXISTS HSTRLEN HMGET: nf fields' HGET
 * results; HLEN: the head's count); h NULL: the hash is gone. */
static void reply_reads(conn *c, int kind, int nf, const cudis_result *res, const uint8_t *out,
                        const bh_head *h)
{
    if (kind == BH_HLEN) {
        resp_int(&c->out, h ? (long long)h->count : 0);
        return;
    }
    if (kind == BH_HMGET) {
        resp_array(&c->out, nf);
    }
    for (int j = 0; j < nf; j++) {
        const cudis_result *r = &res[j];
        bool has = h != NULL && r->status == CUDIS_OK && (r->flags & CUDIS_R_VALUE);
        if (h != NULL && r->status != CUDIS_OK && kind != BH_HMGET) {
            reply_engine_error(c, r->status);
        } else if (kind == BH_HEXISTS) {
            resp_int(&c->out, has ? 1 : 0);
        } else if (kind == BH_HSTRLEN) {
            resp_int(&c->out, has ? (long long)r->val_len : 0);
        } else if (has) {
            resp_bulk(&c->out, out + r->val_off, r->val_len);
        } else {
            resp_null(&c->out, c->proto);
        }
    }
}

/* A read in the open batch (one loop, batches run in order: the
 * registry's head is the head those ops will meet, as every write of a
 * big hash drains the batch first): the head's op and the fields' HGETs
 * share the batch with other clients' ops. Answered by rp_read. */
static void rp_read(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *hr = &b->res[p->op0];
    const cudis_op *op = &b->ops[p->op0];
    const char *key = (const char *)b->in + op->key_off;
    bh_head h;
    if (hr->status != CUDIS_OK) {
        reply_engine_error(c, hr->status);
        return;
    }
    uint8_t todo = 0;
    bool known = reg_todo(op->db, key, op->key_len, &todo);
    /* a chunk evicted in this very batch: the hash went before */
    bool live = head_of(hr, b->out, &h) && known && !(todo & TODO_EVICT);
    if (!live) {
        reg_mark(op->db, key, op->key_len, TODO_CHECK);
        if ((hr->flags & CUDIS_R_FOUND) && hr->type != CUDIS_TYPE_BIGHASH && !(todo & TODO_EVICT)) {
            reply_engine_error(c, CUDIS_E_WRONGTYPE);
            return;
        }
    }
    reply_reads(c, (int)p->k, (int)p->nops - 1, &b->res[p->op0 + 1], b->out, live ? &h : NULL);
}

static void batched_read(conn *c, int kind, int argc, char **argv, uint32_t *lens,
                         const bh_head *known)
{
    batcher *b = &c->lp->b;
    uint8_t pdb = b->db;
    ckey k;
    ckey_init(&k, argv[1], lens[1]);
    uint32_t ih = head_read(b, pdb, argv[1], lens[1], 0);
    for (int j = 2; kind != BH_HLEN && j < argc; j++) {
        chunk_op(b, pdb, &k, chunk_of(known, argv[j], lens[j]), CUDIS_OP_HGET, argv[j], lens[j], 0,
                 false);
    }
    free(k.p);
    pend *p = batch_add_pend(b, c, rp_read, ih, b->nops - ih);
    p->k = kind;
    p->track = false; /* (its chunks are no keys): the key alone is remembered */
    if (c->track_now) {
        tracking_remember_argv(c, c->cur_cmd, 2, argv, lens);
    }
}

/* Fields are read (HGET HEXISTS HSTRLEN HMGET HLEN), or written. */
static bool run_cmd(conn *c, int kind, int argc, char **argv, uint32_t *lens, const bh_head *known)
{
    loop *lp = c->lp;
    batcher *b = &lp->b;
    uint8_t pdb = b->db;
    const char *key = argv[1];
    uint32_t klen = lens[1];
    ckey k;
    ckey_init(&k, key, klen);
    uint32_t ih = head_read(b, pdb, key, klen, kind <= BH_HLEN ? 0 : CUDIS_F_NOSTATS);
    bh_head h;
    switch (kind) {
    case BH_HGET:
    case BH_HEXISTS:
    case BH_HSTRLEN:
    case BH_HMGET: {
        for (int j = 2; j < argc; j++) {
            chunk_op(b, pdb, &k, chunk_of(known, argv[j], lens[j]), CUDIS_OP_HGET, argv[j], lens[j],
                     0, false);
        }
        (void)run(lp);
        free(k.p);
        if (!head_live(b, ih, &h)) {
            return not_big(c, pdb, key, klen, known);
        }
        reply_reads(c, kind, argc - 2, &b->res[ih + 1], b->out, &h);
        batch_reset(b);
        return true;
    }
    case BH_HLEN:
        (void)run(lp);
        free(k.p);
        if (!head_live(b, ih, &h)) {
            return not_big(c, pdb, key, klen, known);
        }
        batch_reset(b);
        reply_reads(c, kind, 0, NULL, NULL, &h);
        return true;
    case BH_HSET:
    case BH_HMSET:
    case BH_HSETNX:
    case BH_HDEL: {
        bool del = kind == BH_HDEL;
        uint32_t nops;
        uint32_t op0 = add_edits(b, pdb, &k, known, argc, argv, lens, 2, !del,
                                 del ? CUDIS_OP_HDEL : CUDIS_OP_HSET,
                                 kind == BH_HSETNX ? CUDIS_F_NX : 0, &nops);
        (void)run(lp);
        free(k.p);
        if (!head_live(b, ih, &h)) {
            /* the head went (expired): the edits went to its orphans,
             * which settle() deletes; the one-item path starts anew */
            return not_big(c, pdb, key, klen, known);
        }
        int64_t changed = 0;
        int st = CUDIS_OK;
        for (uint32_t i = op0; i < op0 + nops; i++) {
            if (b->res[i].status == CUDIS_OK) {
                changed += b->res[i].num;
            } else if (st == CUDIS_OK) {
                st = b->res[i].status;
            }
        }
        batch_reset(b);
        h.count = del ? h.count - (uint64_t)changed : h.count + (uint64_t)changed;
        if (del && h.count == 0) {
            drop_all(c, pdb, key, klen, &h);
        } else {
            if (!del) {
                split_while_full(lp, pdb, key, klen, &h);
            }
            int hs = head_commit(lp, pdb, key, klen, &h);
            st = st != CUDIS_OK ? st : hs;
        }
        if (st != CUDIS_OK) {
            reply_engine_error(c, st);
        } else if (kind == BH_HMSET) {
            reply_ok(c);
        } else {
            resp_int(&c->out, changed);
        }
        if (changed > 0 || (!del && kind != BH_HSETNX)) {
            keyspace_notify(lp, NOTIFY_HASH, del ? "hdel" : "hset", pdb, key, klen);
            if (del && h.count == 0) {
                keyspace_notify(lp, NOTIFY_GENERIC, "del", pdb, key, klen);
            }
        }
        return true;
    }
    case BH_HINCRBY:
    case BH_HINCRBYFLOAT: {
        /* the field's value first: whether it is new, and for the float
         * the sum is made here (as for a one-item hash) */
        uint32_t ci = chunk_of(known, argv[2], lens[2]);
        uint32_t ig = chunk_op(b, pdb, &k, ci, CUDIS_OP_HGET, argv[2], lens[2], 0, false);
        (void)run(lp);
        if (!head_live(b, ih, &h)) {
            free(k.p);
            return not_big(c, pdb, key, klen, known);
        }
        const cudis_result *r = &b->res[ig];
        if (r->status != CUDIS_OK) {
            int st = r->status;
            batch_reset(b);
            free(k.p);
            reply_engine_error(c, st);
            return true;
        }
        bool existed = (r->flags & CUDIS_R_VALUE) != 0;
        char buf[5 * 1024];
        int n = 0;
        int st = CUDIS_OK;
        long long num = 0;
        if (kind == BH_HINCRBYFLOAT) {
            long double v = 0, incr = 0;
            (void)util_str2ld(argv[3], lens[3], &incr); /* checked by the caller */
            bool ok = !existed || util_str2ld((const char *)b->out + r->val_off, r->val_len, &v);
            batch_reset(b);
            if (!ok) {
                free(k.p);
                conn_error(c, "ERR hash value is not a float");
                return true;
            }
            v += incr;
            if (isnan(v) || isinf(v)) {
                free(k.p);
                conn_error(c, "ERR increment would produce NaN or Infinity");
                return true;
            }
            n = util_ld2str(buf, sizeof(buf), v);
            sbuf e = {0};
            uint8_t lb[5];
            sbuf_add(&e, lb, cudis_varint_put(lb, lens[2]));
            sbuf_add(&e, argv[2], lens[2]);
            sbuf_add(&e, lb, cudis_varint_put(lb, (uint32_t)n));
            sbuf_add(&e, buf, (size_t)n);
            uint32_t iw = chunk_op(b, pdb, &k, ci, CUDIS_OP_HSET, e.p, (uint32_t)e.len, 0, true);
            sbuf_free(&e);
            (void)run(lp);
            st = b->res[iw].status;
        } else {
            batch_reset(b);
            long long d;
            (void)util_str2ll(argv[3], lens[3], &d); /* checked by the caller */
            uint32_t iw = chunk_op(b, pdb, &k, ci, CUDIS_OP_HINCRBY, argv[2], lens[2], d, true);
            (void)run(lp);
            st = b->res[iw].status;
            num = b->res[iw].num;
        }
        batch_reset(b);
        free(k.p);
        if (st != CUDIS_OK) {
            reply_status(c, st);
            return true;
        }
        if (!existed) {
            h.count++;
            split_while_full(lp, pdb, key, klen, &h);
        }
        st = head_commit(lp, pdb, key, klen, &h);
        if (st != CUDIS_OK) {
            reply_engine_error(c, st);
            return true;
        }
        if (kind == BH_HINCRBYFLOAT) {
            resp_bulk(&c->out, buf, (size_t)n);
        } else {
            resp_int(&c->out, num);
        }
        keyspace_notify(lp, NOTIFY_HASH, kind == BH_HINCRBY ? "hincrby" : "hincrbyfloat", pdb, key,
                        klen);
        return true;
    }
    default:
        free(k.p);
        batch_reset(b);
        return false;
    }
}

/* Alone: this loop's batches answered, the engine held (unless the
 * dispatcher already holds it for a CMD_EXCL command). */
static bool alone_begin(conn *c)
{
    return (c->cur_cmd != NULL && (c->cur_cmd->flags & CMD_EXCL)) ? false : excl_begin(c->lp);
}

bool bighash_cmd(conn *c, int kind, int argc, char **argv, uint32_t *lens)
{
    if (!bighash_any()) {
        return false;
    }
    uint8_t pdb = c->lp->b.db;
    bh_head known;
    if (!reg_get(pdb, argv[1], lens[1], &known)) {
        return false;
    }
    if (kind <= BH_HLEN && srv.nloops == 1 && !server_pipelined() && !bighash_work() &&
        !(c->cur_cmd != NULL && (c->cur_cmd->flags & CMD_EXCL))) {
        batched_read(c, kind, argc, argv, lens, &known);
        return true;
    }
    bool locked = alone_begin(c);
    bighash_tend(c->lp);
    bool done = false;
    if (reg_get(pdb, argv[1], lens[1], &known)) {
        done = run_cmd(c, kind, argc, argv, lens, &known);
    }
    excl_end(c->lp, locked);
    if (done && kind > BH_HLEN) {
        rdb_changed(1); /* (its ops are the machinery's, which the batches do not count) */
    }
    if (done && c->track_now && kind <= BH_HLEN) {
        tracking_remember_argv(c, c->cur_cmd, argc, argv, lens);
        c->track_now = false;
    }
    return done;
}

/* Every chunk read: the fields, in chunk order, as one encoded hash into
 * out (unless NULL), and (bytes not NULL) the chunks' memory as MEMORY
 * USAGE counts an item added to *bytes. */
static bool gather(batcher *b, uint8_t pdb, const char *key, uint32_t klen, const bh_head *h,
                   sbuf *out, long long *bytes)
{
    uint32_t nc = chunk_count(h);
    ckey k;
    ckey_init(&k, key, klen);
    uint8_t cnt[CUDIS_HASH_HDR] = {0};
    if (out != NULL) {
        out->len = 0;
        sbuf_add(out, cnt, sizeof(cnt));
    }
    uint64_t count = 0;
    bool ok = true;
    for (uint32_t at = 0; ok && at < nc; at += BH_OPS) {
        for (uint32_t i = at; i < nc && i < at + BH_OPS; i++) {
            uint32_t o = chunk_op(b, pdb, &k, i, CUDIS_OP_GET, NULL, 0, 0, false);
            b->ops[o].flags |= CUDIS_F_NOTOUCH;
        }
        (void)batch_exec(b, srv.eng, cudis_now_ms());
        for (uint32_t j = 0; j < b->nops; j++) {
            const cudis_result *r = &b->res[j];
            if (r->status != CUDIS_OK) {
                ok = false;
            } else if ((r->flags & CUDIS_R_VALUE) && r->val_len > CUDIS_HASH_HDR) {
                count += cudis_hash_count(b->out + r->val_off, r->val_len);
                if (out != NULL) {
                    sbuf_add(out, b->out + r->val_off + CUDIS_HASH_HDR,
                             r->val_len - CUDIS_HASH_HDR);
                }
                if (bytes != NULL) {
                    *bytes += memory_item_bytes(klen + 4, r->val_len);
                }
            }
        }
        batch_reset(b);
    }
    free(k.p);
    for (int i = 0; out != NULL && i < 4; i++) {
        out->p[i] = (char)(uint8_t)(count >> (8 * i));
    }
    return ok;
}

bool bighash_gather(batcher *b, uint8_t pdb, const char *key, uint32_t klen, const uint8_t *hv,
                    uint32_t hn, sbuf *out)
{
    cudis_result r = {.flags = CUDIS_R_FOUND | CUDIS_R_VALUE, .val_len = hn,
                      .type = CUDIS_TYPE_BIGHASH};
    bh_head h;
    return head_of(&r, hv, &h) && gather(b, pdb, key, klen, &h, out, NULL);
}

static int whole(conn *c, const char *key, uint32_t klen, sbuf *out, long long *bytes);

int bighash_whole(conn *c, const char *key, uint32_t klen, sbuf *out)
{
    return whole(c, key, klen, out, NULL);
}

int bighash_memory(conn *c, const char *key, uint32_t klen, long long *bytes)
{
    *bytes = memory_item_bytes(klen, sizeof(bh_head));
    return whole(c, key, klen, NULL, bytes);
}

static int whole(conn *c, const char *key, uint32_t klen, sbuf *out, long long *bytes)
{
    if (!bighash_any()) {
        return 0;
    }
    uint8_t pdb = c->lp->b.db;
    if (!reg_get(pdb, key, klen, NULL)) {
        return 0;
    }
    bool locked = alone_begin(c);
    bighash_tend(c->lp);
    bh_head known, h;
    int rc = 0;
    if (reg_get(pdb, key, klen, &known)) {
        batcher *b = &c->lp->b;
        /* MEMORY USAGE (bytes) neither counts nor touches, as Redis's */
        uint32_t ih = head_read(b, pdb, key, klen, bytes != NULL ? LOOK_ONLY : 0);
        (void)run(c->lp);
        bool live = head_live(b, ih, &h);
        if (b->res[ih].status != CUDIS_OK) {
            rc = b->res[ih].status;
            batch_reset(b);
        } else if (!live) {
            (void)not_big(c, pdb, key, klen, &known);
        } else {
            batch_reset(b);
            rc = gather(&c->lp->b, pdb, key, klen, &h, out, bytes) ? 1 : CUDIS_E_NOMEM;
        }
    }
    excl_end(c->lp, locked);
    return rc;
}

void bighash_unchunk(conn *c, const char *key, uint32_t klen)
{
    if (!bighash_any()) {
        return;
    }
    uint8_t pdb = c->lp->b.db;
    if (!reg_get(pdb, key, klen, NULL)) {
        return;
    }
    bool locked = alone_begin(c);
    bighash_tend(c->lp);
    bh_head known, h;
    if (reg_get(pdb, key, klen, &known)) {
        batcher *b = &c->lp->b;
        uint32_t ih = head_read(b, pdb, key, klen, LOOK_ONLY);
        (void)run(c->lp);
        bool live = head_live(b, ih, &h);
        if (!live) {
            (void)not_big(c, pdb, key, klen, &known);
        } else {
            batch_reset(b);
            sbuf all = {0};
            if (gather(&c->lp->b, pdb, key, klen, &h, &all, NULL)) {
                /* one item again, its expiry kept; then the chunks go */
                uint32_t i = bh_op(b, pdb, CUDIS_OP_SET, CUDIS_F_KEEPTTL, key, klen, all.p,
                                   (uint32_t)all.len, 0, CUDIS_TYPE_HASH, true);
                (void)run(c->lp);
                bool ok = b->res[i].status == CUDIS_OK;
                batch_reset(b);
                if (ok) {
                    reclaim(c->lp, pdb, key, klen, chunk_count(&h));
                    reg_del(pdb, key, klen);
                }
            }
            sbuf_free(&all);
        }
    }
    excl_end(c->lp, locked);
}

int bighash_field(conn *c, const char *key, uint32_t klen, const char *f, uint32_t flen, sbuf *out)
{
    uint8_t pdb = c->lp->b.db;
    bh_head known, h;
    if (!bighash_any() || !reg_get(pdb, key, klen, &known)) {
        return 0;
    }
    bool locked = alone_begin(c);
    batcher *b = &c->lp->b;
    ckey k;
    ckey_init(&k, key, klen);
    uint32_t ih = head_read(b, pdb, key, klen, 0);
    uint32_t ig = chunk_op(b, pdb, &k, chunk_of(&known, f, flen), CUDIS_OP_HGET, f, flen, 0, false);
    free(k.p);
    (void)run(c->lp);
    int rc = 0;
    if (b->res[ih].status != CUDIS_OK || b->res[ig].status != CUDIS_OK) {
        rc = b->res[ih].status != CUDIS_OK ? b->res[ih].status : b->res[ig].status;
        batch_reset(b);
    } else if (!head_live(b, ih, &h)) {
        (void)not_big(c, pdb, key, klen, &known);
    } else {
        if (b->res[ig].flags & CUDIS_R_VALUE) {
            sbuf_add(out, b->out + b->res[ig].val_off, b->res[ig].val_len);
            rc = 1;
        }
        batch_reset(b);
    }
    excl_end(c->lp, locked);
    return rc;
}
