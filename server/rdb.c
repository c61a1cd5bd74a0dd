/*
 * rdb.c - persistence in Redis's RDB format: SAVE, BGSAVE, LASTSAVE, the
 * `save` schedule, SHUTDOWN SAVE, and dir/dbfilename loaded at start.
 *
 * The file is RDB version 10 (Redis 7.0's; every later Redis reads it):
 * the header, aux fields, the function libraries (FUNCTION2 records), then
 * each key as [SELECTDB when the database changes] [EXPIRETIME_MS] type key
 * object, in the encodings DUMP writes (cmd_dump.c: strings, RDB_TYPE_HASH,
 * _SET, _LIST, _ZSET_2; a big hash as one hash), EOF, and the CRC-64 of it
 * all. Loading reads what Redis 7.0 to 7.2 write (listpacks, intsets,
 * quicklists: rdb_get_object) and refuses the types cudis has not (streams,
 * modules) with the type named, as a corrupt file is refused: the server
 * does not start on a file it cannot load whole.
 *
 * A snapshot walks the engine (engine_scan, database by database), reads
 * the keys it finds (GET of any type, without touching them) and appends
 * them to dir/temp-<pid>.rdb, renamed over dbfilename once complete and
 * fsync'd. SAVE walks to the end at once, the engine held. BGSAVE walks
 * on a thread of its own while the loops serve (no fork: the store may be
 * in GPU memory), the engine read-locked as a batch has it (the stores run
 * scans and batches concurrently; walker_main), and the file still holds
 * every key as it was when BGSAVE started, by copy-on-write at the key
 * level (S.lock orders the walk's steps and the guards):
 *   - before a batch that writes runs (batch_exec, and the submit of a
 *     pipelined one), rdb_guard reads each key it writes that the snapshot
 *     has not had yet and appends it first (a key that did not exist is
 *     only noted: it was created after the start);
 *   - the walk skips keys already had, and every key had is remembered (its
 *     name: about its length plus 20 bytes while the BGSAVE runs), so none
 *     is written twice (Redis refuses a file with a key twice);
 *   - the index does not resize while a snapshot runs (a resize moves keys
 *     across the walk's cursor), FLUSHDB lets the walk finish first and
 *     FLUSHALL stops the BGSAVE (as Redis's kills its child); SWAPDB moves
 *     nothing the walk reads (its databases were named at the start).
 * Keys the engine evicts or expires during the walk are not in the file,
 * as if it had removed them just before the start.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "crc64.h"
#include "cudis_time.h"
#include "server_internal.h"

#define RDB_VERSION_OUT 10
#define RDB_VERSION_IN_MAX 11
#define OP_FUNCTION2 245
#define OP_MODULE_AUX 247
#define OP_IDLE 248
#define OP_FREQ 249
#define OP_AUX 250
#define OP_RESIZEDB 251
#define OP_EXPIRETIME_MS 252
#define OP_EXPIRETIME 253
#define OP_SELECTDB 254
#define OP_EOF 255

#define WALK_BUCKETS 256          /* index buckets a walk step scans */
#define SLICE_NS (500 * 1000)     /* BGSAVE's walk holds the engine's read lock this long */
#define WALK_WAIT_US 200          /* and tries again after this, when held or the disk lags */
#define POLL_US 10000             /* loop 0 looks for the end of the walk, and of the file */
#define FLUSH_BYTES (1024 * 1024) /* write() the file in pieces this big */

/* ------------------------------------------------------------------------
 * The keys a snapshot has had: names in an arena, an open-addressing table
 * of their offsets + 1.
 * ---------------------------------------------------------------------- */

typedef struct keyset {
    uint64_t *slot;
    uint64_t mask, n;
    sbuf arena; /* db, varint length, bytes */
} keyset;

static uint64_t ks_hash(uint8_t db, const void *key, uint32_t klen)
{
    return cudis_hash(key, klen, 0x51ed270b27f3c4a5ull ^ db);
}

static bool ks_match(const keyset *s, uint64_t off, uint8_t db, const void *key, uint32_t klen)
{
    const uint8_t *p = (const uint8_t *)s->arena.p + off;
    if (p[0] != db) {
        return false;
    }
    uint32_t len = 0;
    uint32_t hl = cudis_varint_get(p + 1, 5, &len);
    return len == klen && memcmp(p + 1 + hl, key, klen) == 0;
}

static uint64_t *ks_find(keyset *s, uint8_t db, const void *key, uint32_t klen, bool *found)
{
    uint64_t i = ks_hash(db, key, klen) & s->mask;
    while (s->slot[i] != 0 && !ks_match(s, s->slot[i] - 1, db, key, klen)) {
        i = (i + 1) & s->mask;
    }
    *found = s->slot[i] != 0;
    return &s->slot[i];
}

/* Room for about `expect` names without growing (a rehash of millions of
 * names would stall the loop). */
static void ks_init(keyset *s, uint64_t expect)
{
    s->mask = 4095;
    while ((s->mask + 1) / 2 < expect + expect / 8) {
        s->mask = s->mask * 2 + 1;
    }
    s->n = 0;
    s->slot = xcalloc(s->mask + 1, sizeof(*s->slot));
    s->arena = (sbuf){0};
}

static void ks_free(keyset *s)
{
    free(s->slot);
    sbuf_free(&s->arena);
    *s = (keyset){0};
}

/* Adds the name; false when it was there already. */
static bool ks_add(keyset *s, uint8_t db, const void *key, uint32_t klen)
{
    if ((s->n + 1) * 2 > s->mask + 1) {
        uint64_t *old = s->slot, cap = s->mask + 1;
        s->mask = cap * 2 - 1;
        s->slot = xcalloc(cap * 2, sizeof(*s->slot));
        for (uint64_t i = 0; i < cap; i++) {
            if (old[i] != 0) {
                const uint8_t *p = (const uint8_t *)s->arena.p + old[i] - 1;
                uint32_t len = 0;
                uint32_t hl = cudis_varint_get(p + 1, 5, &len);
                uint64_t j = ks_hash(p[0], p + 1 + hl, len) & s->mask;
                while (s->slot[j] != 0) {
                    j = (j + 1) & s->mask;
                }
                s->slot[j] = old[i];
            }
        }
        free(old);
    }
    bool found;
    uint64_t *at = ks_find(s, db, key, klen, &found);
    if (found) {
        return false;
    }
    *at = s->arena.len + 1;
    uint8_t hdr[6] = {db};
    uint32_t hl = cudis_varint_put(hdr + 1, klen);
    sbuf_add(&s->arena, hdr, 1 + hl);
    sbuf_add(&s->arena, key, klen);
    s->n++;
    return true;
}

/* ------------------------------------------------------------------------
 * The snapshot in progress
 * ---------------------------------------------------------------------- */

typedef struct snapshot {
    pthread_mutex_t lock; /* the guards of several loops, and the walk */
    atomic_bool on;       /* a snapshot runs (rdb_guard's cheap test) */
    bool bg;              /* BGSAVE (else SAVE: nothing else runs) */
    int fd;
    char tmp[4096];
    sbuf buf;
    uint64_t crc, bytes;
    bool checksum;        /* rdbchecksum at the start: CRC the file (else its CRC is 0) */
    atomic_ullong keys;   /* written so far (INFO reads it from any loop) */
    atomic_bool active;   /* a SAVE or BGSAVE holds this state: one at a time */
    int sel;              /* the database of the last SELECTDB written, -1 none */
    int ndb;
    uint8_t phys[CUDIS_MAX_DBS];  /* engine database of each logical one, at the start */
    int16_t logical[CUDIS_MAX_DBS]; /* and back; -1 for none */
    int walk_db;
    uint64_t cursor;
    keyset had;
    batcher rb, gb; /* reads (S.lock held); a big hash's chunks (S.lock held) */
    batcher wb, wgb; /* BGSAVE's walk's reads, its big hashes' chunks (its thread's) */
    sbuf wbuf;       /* and its stream of records (buf, sel: the guards') */
    int wsel;
    uint8_t *wmark; /* per read of a step: to be put */
    sbuf *wall;     /* and a big hash's fields */
    uint32_t wmark_cap;
    atomic_bool failed;
    int64_t start_ms;
    int dating;            /* DATE_*: what a key's records carry beside it (set at the start) */
    struct event *ev;      /* loop 0 waits for the BGSAVE's walk and file to end */
    pthread_t walker;      /* BGSAVE's walk (walker_main) */
    bool walker_live;      /* started, not yet joined */
    atomic_bool walk_stop; /* FLUSHALL, shutdown: the walker ends */
    atomic_bool walked;    /* the walker ended */
    bool stopped;          /* bgsave_stop ended it (not a failure) */
    /* BGSAVE's file is written by a thread of its own (write, CRC, fsync,
     * rename: none of it in a loop): buffers queued in order */
    atomic_bool busy; /* a BGSAVE runs: walking, or its file being finished */
    pthread_t writer;
    pthread_mutex_t wlock;
    pthread_cond_t wcv;
    struct wbuf *wq, *wq_tail;
    uint64_t wq_bytes; /* queued, not yet written (the walk waits above WQ_MAX) */
    bool wq_finish;
    atomic_bool wdone;
    int wrc;
} snapshot;

typedef struct wbuf {
    struct wbuf *next;
    sbuf b;
} wbuf;

#define WQ_MAX (64u * 1024 * 1024)

static snapshot S = {.lock = PTHREAD_MUTEX_INITIALIZER,
                     .wlock = PTHREAD_MUTEX_INITIALIZER,
                     .wcv = PTHREAD_COND_INITIALIZER,
                     .fd = -1};
static bool final_saved; /* SHUTDOWN's save is done: none again at exit */
static atomic_bool bgsave_scheduled; /* BGSAVE inside EXEC: the cron starts it */

/* Saves and their outcome (INFO persistence, LASTSAVE). */
static atomic_uint_fast64_t dirty;
static uint64_t dirty_at_start; /* dirty when the running snapshot started */
static atomic_llong last_save_s = 0;
static atomic_llong last_try_ms = 0;
static atomic_bool last_bg_ok = true;
static atomic_llong last_bg_secs = -1;
static atomic_ullong saves = 0;
static atomic_llong loaded_keys = 0;
static atomic_llong loaded_expired = 0;
static atomic_llong load_ms = 0;
/* The load at start, for INFO and the LOADING replies while it runs */
static atomic_bool loading;
static atomic_llong loading_start_s, loading_total, loading_done, loading_used_mem;

void rdb_changed(uint64_t n)
{
    atomic_fetch_add_explicit(&dirty, n, memory_order_relaxed);
}

bool rdb_bgsave_running(void)
{
    return atomic_load(&S.busy);
}

static void path_of(char *buf, size_t cap, const char *name)
{
    const char *dir = srv.cfg.dir && srv.cfg.dir[0] ? srv.cfg.dir : ".";
    snprintf(buf, cap, "%s/%s", dir, name);
}

/* Bytes onto the file, in order, with the CRC (SAVE: the loop; BGSAVE:
 * the writer thread). */
static void file_put(const char *p, size_t n)
{
    if (S.checksum) {
        S.crc = rdb_crc64(S.crc, p, n);
    }
    S.bytes += n;
    while (n > 0 && !atomic_load(&S.failed)) {
        ssize_t w = write(S.fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            log_msg(LL_WARNING, "Write error saving DB on disk: %s",
                    strerror(w < 0 ? errno : ENOSPC));
            atomic_store(&S.failed, true);
            break;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* The CRC after the EOF record, fsync, close, and the rename over
 * dbfilename; or (keep false, or a failure) the temp file removed. 0 when
 * the save landed. */
static int file_finish(bool keep)
{
    keep = keep && !atomic_load(&S.failed);
    if (keep) {
        uint8_t crc[8];
        for (int i = 0; i < 8; i++) {
            crc[i] = (uint8_t)(S.crc >> (8 * i));
        }
        file_put((const char *)crc, 8);
        if (!atomic_load(&S.failed) && fsync(S.fd) != 0) {
            log_msg(LL_WARNING, "Failed to fsync the RDB file: %s", strerror(errno));
            atomic_store(&S.failed, true);
        }
        keep = !atomic_load(&S.failed);
    }
    if (S.fd >= 0) {
        close(S.fd);
        S.fd = -1;
    }
    if (keep) {
        char final[4096];
        path_of(final, sizeof(final), srv.cfg.dbfilename);
        if (rename(S.tmp, final) == 0) {
            return 0;
        }
        log_msg(LL_WARNING, "Error moving temp DB file %s on the final destination %s: %s", S.tmp,
                final, strerror(errno));
    }
    unlink(S.tmp);
    return -1;
}

/* A BGSAVE's thread named, and onto bgsave_cpulist if set. */
static void bg_thread(const char *name)
{
    util_thread_name(name);
    int rc = util_cpulist_pin(srv.cfg.bgsave_cpulist);
    if (rc != 0) {
        log_msg(LL_WARNING, "Can't run on bgsave_cpulist %s: %s", srv.cfg.bgsave_cpulist,
                strerror(rc));
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    bg_thread("cudis-bgsave-wr");
    for (;;) {
        pthread_mutex_lock(&S.wlock);
        while (S.wq == NULL && !S.wq_finish) {
            pthread_cond_wait(&S.wcv, &S.wlock);
        }
        wbuf *q = S.wq;
        S.wq = S.wq_tail = NULL;
        pthread_mutex_unlock(&S.wlock);
        if (q == NULL) { /* finished, and everything queued is written */
            break;
        }
        while (q != NULL) {
            wbuf *next = q->next;
            file_put(q->b.p, q->b.len);
            pthread_mutex_lock(&S.wlock);
            S.wq_bytes -= q->b.len;
            pthread_mutex_unlock(&S.wlock);
            sbuf_free(&q->b);
            free(q);
            q = next;
        }
    }
    S.wrc = file_finish(true); /* (a stopped BGSAVE set failed: the file goes) */
    atomic_store(&S.wdone, true);
    return NULL;
}

/* The records of stream o onto the file (SAVE) or the writer's queue
 * (BGSAVE: the guards' stream and the walk's interleave there, so each
 * piece begins with its own SELECTDB: *sel is reset). */
static void out_flush(sbuf *o, int *sel)
{
    *sel = -1;
    if (!S.bg) {
        file_put(o->p, o->len);
        o->len = 0;
        return;
    }
    if (o->len == 0) {
        return;
    }
    wbuf *w = xmalloc(sizeof(*w));
    w->next = NULL;
    w->b = *o;
    *o = (sbuf){0};
    pthread_mutex_lock(&S.wlock);
    if (S.wq_tail != NULL) {
        S.wq_tail->next = w;
    } else {
        S.wq = w;
    }
    S.wq_tail = w;
    S.wq_bytes += w->b.len;
    pthread_cond_signal(&S.wcv);
    pthread_mutex_unlock(&S.wlock);
}

static uint64_t queued_bytes(void)
{
    pthread_mutex_lock(&S.wlock);
    uint64_t n = S.wq_bytes;
    pthread_mutex_unlock(&S.wlock);
    return n;
}

static void out_maybe_flush(sbuf *o, int *sel)
{
    if (o->len >= FLUSH_BYTES) {
        out_flush(o, sel);
    }
}

static void put_aux(sbuf *o, const char *k, const char *v)
{
    uint8_t op = OP_AUX;
    sbuf_add(o, &op, 1);
    rdb_put_string(o, k, strlen(k));
    rdb_put_string(o, v, strlen(v));
}

/* What dates each key in the file, as Redis's rdbSaveKeyValuePair writes
 * it: under an LRU policy its idle seconds (an IDLE record), under an LFU
 * one its counter (FREQ), else nothing. cudis's own policies keep a
 * recency, as LRU does; a store with no stamps (the exact baselines) gives
 * neither. */
enum { DATE_NONE, DATE_IDLE, DATE_FREQ };

static int snapshot_dating(void)
{
    const char *p = srv.cfg.maxmemory_policy;
    if (engine_clock(srv.eng) == 0) {
        return DATE_NONE;
    }
    if (strstr(p, "lfu") != NULL) {
        return DATE_FREQ;
    }
    return strstr(p, "lru") != NULL || !strcmp(p, "allkeys-cudis") || !strcmp(p, "allkeys-rrip")
               ? DATE_IDLE
               : DATE_NONE;
}

/* A key's date as written (-1: none). */
typedef struct key_date {
    long long idle;
    int freq;
} key_date;

/* One key as the snapshot had it onto stream o: its value v (n bytes) of
 * cudis type `type`, expiry exp (abs ms, <= 0 none), date d, engine
 * database pdb. */
static void put_key(sbuf *o, int *sel, uint8_t pdb, const uint8_t *key, uint32_t klen,
                    uint32_t type, const uint8_t *v, uint32_t n, int64_t exp, key_date d)
{
    int db = S.logical[pdb];
    if (db != *sel) {
        uint8_t op = OP_SELECTDB;
        sbuf_add(o, &op, 1);
        rdb_put_len(o, (uint64_t)db);
        *sel = db;
    }
    if (exp > 0) {
        uint8_t b[9] = {OP_EXPIRETIME_MS};
        for (int i = 0; i < 8; i++) {
            b[1 + i] = (uint8_t)((uint64_t)exp >> (8 * i));
        }
        sbuf_add(o, b, 9);
    }
    if (d.idle >= 0) {
        uint8_t op = OP_IDLE;
        sbuf_add(o, &op, 1);
        rdb_put_len(o, (uint64_t)d.idle);
    } else if (d.freq >= 0) {
        uint8_t b[2] = {OP_FREQ, (uint8_t)d.freq};
        sbuf_add(o, b, 2);
    }
    rdb_put_object(o, type, key, klen, v, n);
    atomic_fetch_add_explicit(&S.keys, 1, memory_order_relaxed);
}

/* Whether a GET (type ANY) result r is a value to put: false for a key
 * absent (expired, or created after the start), or a failed read (the
 * snapshot fails). */
static bool result_found(const cudis_result *r)
{
    if (r->status != CUDIS_OK) {
        log_msg(LL_WARNING, "Snapshot: reading a key failed: %s", cudis_strerror(r->status));
        atomic_store(&S.failed, true);
        return false;
    }
    return (r->flags & CUDIS_R_VALUE) != 0;
}

/* The fields of the big hash whose head r read, gathered on gb into all
 * (false: the read failed, the snapshot fails). */
static bool gather_big(batcher *gb, uint8_t pdb, const uint8_t *key, uint32_t klen,
                       const cudis_result *r, const uint8_t *out, sbuf *all)
{
    uint8_t head[64];
    uint32_t hn = r->val_len < sizeof(head) ? r->val_len : (uint32_t)sizeof(head);
    memcpy(head, out + r->val_off, hn);
    bool ok = bighash_gather(gb, pdb, (const char *)key, klen, head, hn, all);
    batch_reset(gb);
    if (!ok) {
        log_msg(LL_WARNING, "Snapshot: reading a big hash's chunks failed");
        atomic_store(&S.failed, true);
    }
    return ok;
}

/* A found key onto stream o; a big hash as one hash of its fields `all`
 * (none left: nothing). */
static void put_found(sbuf *o, int *sel, uint8_t pdb, const uint8_t *key, uint32_t klen,
                      const cudis_result *r, const uint8_t *out, const sbuf *all, key_date d)
{
    if (r->type != CUDIS_TYPE_BIGHASH) {
        put_key(o, sel, pdb, key, klen, r->type, out + r->val_off, r->val_len, r->num, d);
    } else if (cudis_hash_count((const uint8_t *)all->p, (uint32_t)all->len) > 0) {
        put_key(o, sel, pdb, key, klen, CUDIS_TYPE_HASH, (const uint8_t *)all->p,
                (uint32_t)all->len, r->num, d);
    }
    out_maybe_flush(o, sel);
}

/* A GET (type ANY) of key in pdb returned r: onto the guards' stream, a
 * big hash read whole first (S.lock held). */
static void put_result(uint8_t pdb, const uint8_t *key, uint32_t klen, const cudis_result *r,
                       const uint8_t *out, key_date d)
{
    if (!result_found(r)) {
        return;
    }
    sbuf all = {0};
    if (r->type != CUDIS_TYPE_BIGHASH || gather_big(&S.gb, pdb, key, klen, r, out, &all)) {
        put_found(&S.buf, &S.sel, pdb, key, klen, r, out, &all, d);
    }
    sbuf_free(&all);
}

/* The ops a read takes (add_read): a GET, then an EXISTS for its date. */
static uint32_t read_ops(void)
{
    return S.dating != DATE_NONE ? 2 : 1;
}

/* The date of the key read by op i (a GET) of b, run at now. */
static key_date read_date(const batcher *b, uint32_t i, int64_t now)
{
    key_date d = {-1, -1};
    const cudis_result *r = &b->res[i + 1];
    if (S.dating == DATE_NONE || r->status != CUDIS_OK || !(r->flags & CUDIS_R_FOUND)) {
        return d;
    }
    if (S.dating == DATE_FREQ) {
        d.freq = r->num < 0 ? 0 : r->num > 255 ? 255 : (int)r->num;
    } else {
        d.idle = observe_idle_seconds((uint32_t)r->num, now);
    }
    return d;
}

/* Read what rb holds (add_read's) and put each key found (S.lock held). */
static void put_reads(void)
{
    batcher *b = &S.rb;
    if (b->nops == 0) {
        return;
    }
    int64_t now = cudis_now_ms();
    int rc = batch_exec(b, srv.eng, now);
    for (uint32_t i = 0; i < b->nops; i += read_ops()) {
        const cudis_op *op = &b->ops[i];
        cudis_result r = b->res[i];
        if (rc != CUDIS_OK) {
            r.status = rc;
        }
        put_result(op->db, b->in + op->key_off, op->key_len, &r, b->out, read_date(b, i, now));
    }
    batch_reset(b);
}

/* A key's read: its value (GET, not an access), and its stamp or counter
 * when the file dates keys (EXISTS: not an access either). */
static int add_read(void *arg, uint8_t pdb, const uint8_t *key, uint32_t klen, int64_t exp)
{
    (void)exp;
    batcher *b = arg;
    b->db = pdb;
    uint32_t i = batch_add_op(b, CUDIS_OP_GET, CUDIS_F_NOTOUCH | CUDIS_F_NOSTATS, (const char *)key,
                              klen, NULL, 0, 0, 0, false);
    b->ops[i].type = CUDIS_TYPE_ANY;
    if (S.dating != DATE_NONE) {
        batch_add_op(b, CUDIS_OP_EXISTS,
                     (S.dating == DATE_IDLE ? CUDIS_F_STAMP : 0) | CUDIS_F_NOSTATS,
                     (const char *)key, klen, NULL, 0, 0, 0, false);
    }
    return 0;
}

/* A key the walk found on a loop (SAVE; FLUSHDB ending a BGSAVE's walk):
 * read unless had. */
static int walk_collect(void *arg, uint8_t db, const uint8_t *key, uint32_t klen, int64_t exp)
{
    if (!S.bg || ks_add(&S.had, db, key, klen)) {
        (void)add_read(arg, db, key, klen, exp);
    }
    return 0;
}

/* The next WALK_BUCKETS of the index scanned into b (fn: each key found),
 * at now. false when the scan failed (logged; the snapshot fails). */
static bool walk_scan(batcher *b, int64_t now, cudis_scan_fn fn, uint64_t *next)
{
    uint8_t pdb = S.phys[S.walk_db];
    *next = 0;
    if (S.cursor == 0 && engine_db_size(srv.eng, pdb) == 0) {
        return true;
    }
    int rc = engine_scan(srv.eng, pdb, S.cursor, WALK_BUCKETS, now, fn, b, next);
    if (rc != CUDIS_OK) {
        log_msg(LL_WARNING, "Snapshot: the engine's scan failed: %s", cudis_strerror(rc));
        atomic_store(&S.failed, true);
        batch_reset(b);
        return false;
    }
    return true;
}

static bool walk_advance(uint64_t next)
{
    S.cursor = next;
    if (next == 0) {
        S.walk_db++;
    }
    return S.walk_db >= S.ndb || atomic_load(&S.failed);
}

/* One step of the walk on a loop, S.lock held and the engine exclusively.
 * Returns true when the walk is done. */
static bool walk_step(void)
{
    if (S.walk_db >= S.ndb || atomic_load(&S.failed)) {
        return true;
    }
    uint64_t next;
    if (!walk_scan(&S.rb, cudis_now_ms(), walk_collect, &next)) {
        return true;
    }
    put_reads();
    return walk_advance(next);
}

/* One step of BGSAVE's walk on its thread, the engine read-locked, S.lock
 * not held: the keys found are read on wb (and a big hash's chunks on
 * wgb), quiet (no loop's keyspace machinery) and at the scan's time (none
 * of them expires in the read); then, under S.lock, each not had yet is
 * marked had, and those are put onto the walk's own stream. Such a read is
 * the key's value at the start: any write to the key since would have
 * passed a guard first, and the guard marks it had. S.lock is held only
 * to mark (a guard waits for little). Returns true when the walk is done
 * (or was ended: FLUSHDB walked to the end). */
static bool walk_step_bg(void)
{
    if (S.walk_db >= S.ndb || atomic_load(&S.failed)) {
        return true;
    }
    batcher *b = &S.wb;
    int64_t now = cudis_now_ms();
    uint64_t next;
    if (!walk_scan(b, now, add_read, &next)) {
        return true;
    }
    int rc = batch_exec(b, srv.eng, now);
    if (b->nops > S.wmark_cap) {
        S.wmark_cap = b->nops * 2;
        S.wmark = xrealloc(S.wmark, S.wmark_cap);
        S.wall = xrealloc(S.wall, S.wmark_cap * sizeof(sbuf));
    }
    uint32_t step = read_ops();
    for (uint32_t i = 0; i < b->nops; i += step) {
        cudis_result *r = &b->res[i];
        if (rc != CUDIS_OK) {
            r->status = rc;
        }
        const cudis_op *op = &b->ops[i];
        S.wmark[i] = result_found(r);
        S.wall[i] = (sbuf){0};
        if (S.wmark[i] && r->type == CUDIS_TYPE_BIGHASH) {
            S.wmark[i] =
                gather_big(&S.wgb, op->db, b->in + op->key_off, op->key_len, r, b->out, &S.wall[i]);
        }
    }
    pthread_mutex_lock(&S.lock);
    bool on = atomic_load(&S.on);
    for (uint32_t i = 0; on && i < b->nops; i += step) {
        const cudis_op *op = &b->ops[i];
        /* (absent ones too: a key gone since the start was had as gone) */
        bool mine = ks_add(&S.had, op->db, b->in + op->key_off, op->key_len);
        S.wmark[i] = S.wmark[i] && mine;
    }
    pthread_mutex_unlock(&S.lock);
    for (uint32_t i = 0; i < b->nops; i += step) {
        const cudis_op *op = &b->ops[i];
        if (on && S.wmark[i]) {
            put_found(&S.wbuf, &S.wsel, op->db, b->in + op->key_off, op->key_len, &b->res[i],
                      b->out, &S.wall[i], read_date(b, i, now));
        }
        sbuf_free(&S.wall[i]);
    }
    batch_reset(b);
    return !on || walk_advance(next);
}

/* The rest of the walk at once, on a loop (SAVE, FLUSHDB during a BGSAVE):
 * the engine held exclusively, S.lock taken. */
static void walk_all(void)
{
    while (!walk_step()) {
    }
}

/* BGSAVE's walk, on a thread of its own while the loops serve: steps with
 * the engine read-locked for about SLICE_NS at a time (batches run beside
 * it; what is not concurrent with them waits for the slice's end, at most
 * about that long: a try-lock, so the walk never queues in its way), S.lock
 * taken only to mark what a step read (walk_step_bg). It ends when the
 * walk is done, or someone else ended it (FLUSHDB walked to the end,
 * FLUSHALL or a shutdown stopped it: walk_stop). */
static void *walker_main(void *arg)
{
    (void)arg;
    bg_thread("cudis-bgsave");
    bool done = false;
    while (!done && !atomic_load(&S.walk_stop)) {
        if (queued_bytes() > WQ_MAX || pthread_rwlock_tryrdlock(&srv.eng_lock) != 0) {
            usleep(WALK_WAIT_US); /* the disk lags, or the engine is held */
            continue;
        }
        uint64_t t0 = cudis_mono_ns();
        do {
            done = walk_step_bg();
        } while (!done && cudis_mono_ns() - t0 < SLICE_NS && !atomic_load(&S.walk_stop));
        /* what it put goes before the engine does: a FLUSHDB, which then
         * ends the walk, puts EOF after it */
        out_flush(&S.wbuf, &S.wsel);
        pthread_rwlock_unlock(&srv.eng_lock);
        if (!done) {
            /* a writer of the engine waiting gets it; a loop sharing the
             * CPU runs (a sleep would wake to preempt it) */
            sched_yield();
        }
    }
    atomic_store(&S.walked, true);
    return NULL;
}

/* Open the temp file and write the header. 0, -1 (logged), or
 * SNAP_BUSY when a save runs already (a SAVE on another loop, a BGSAVE). */
#define SNAP_BUSY (-2)
static int snap_begin_(loop *lp, bool bg);
static int snap_begin(loop *lp, bool bg)
{
    bool idle = false;
    if (!atomic_compare_exchange_strong(&S.active, &idle, true)) {
        return SNAP_BUSY;
    }
    int rc = snap_begin_(lp, bg);
    if (rc != 0) {
        atomic_store(&S.active, false);
    }
    return rc;
}

static int snap_begin_(loop *lp, bool bg)
{
    char name[64];
    snprintf(name, sizeof(name), "temp-%d.rdb", (int)getpid());
    path_of(S.tmp, sizeof(S.tmp), name);
    S.fd = open(S.tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (S.fd < 0) {
        log_msg(LL_WARNING, "Failed opening the temp RDB file %s (in server root dir %s) for saving: %s",
                name, srv.cfg.dir, strerror(errno));
        return -1;
    }
    S.bg = bg;
    atomic_store(&S.failed, false);
    S.crc = 0;
    S.checksum = srv.cfg.rdb_checksum;
    S.bytes = 0;
    atomic_store(&S.keys, 0);
    S.sel = -1;
    S.walk_db = 0;
    S.cursor = 0;
    S.start_ms = cudis_now_ms();
    S.dating = snapshot_dating();
    S.ndb = (int)srv.cfg.databases;
    for (int i = 0; i < CUDIS_MAX_DBS; i++) {
        S.logical[i] = -1;
    }
    for (int i = 0; i < S.ndb; i++) {
        S.phys[i] = db_phys(i);
        S.logical[S.phys[i]] = (int16_t)i;
    }
    batch_init(&S.rb);
    batch_init(&S.gb);
    batch_init(&S.wb);
    batch_init(&S.wgb);
    S.wb.quiet = S.wgb.quiet = true;
    S.wb.ev = S.wgb.ev = KEV_QUIET;
    S.wsel = -1;
    S.rb.owner = S.gb.owner = lp;
    S.rb.ev = S.gb.ev = KEV_QUIET;
    if (bg) {
        uint64_t keys = 0;
        for (int i = 0; i < S.ndb; i++) {
            keys += engine_db_size(srv.eng, S.phys[i]);
        }
        ks_init(&S.had, keys);
    }
    dirty_at_start = atomic_load(&dirty);
    char hdr[16];
    snprintf(hdr, sizeof(hdr), "REDIS%04d", RDB_VERSION_OUT);
    sbuf_adds(&S.buf, hdr);
    char num[32];
    put_aux(&S.buf, "redis-ver", REDIS_COMPAT_VERSION);
    put_aux(&S.buf, "redis-bits", sizeof(void *) == 8 ? "64" : "32");
    snprintf(num, sizeof(num), "%lld", (long long)(S.start_ms / 1000));
    put_aux(&S.buf, "ctime", num);
    snprintf(num, sizeof(num), "%lld", info_rss_bytes());
    put_aux(&S.buf, "used-mem", num);
    put_aux(&S.buf, "aof-base", "0");
    function_rdb_put(&S.buf); /* the libraries as they are now */
    if (bg) {
        S.wq_finish = false;
        S.wq_bytes = 0;
        atomic_store(&S.wdone, false);
        if (pthread_create(&S.writer, NULL, writer_main, NULL) != 0) {
            log_msg(LL_WARNING, "Can't save in background: no thread for the file");
            close(S.fd);
            S.fd = -1;
            unlink(S.tmp);
            sbuf_free(&S.buf);
            batch_deinit(&S.rb);
            batch_deinit(&S.gb);
            batch_deinit(&S.wb);
            batch_deinit(&S.wgb);
            ks_free(&S.had);
            return -1;
        }
        atomic_store(&S.busy, true);
        out_flush(&S.buf, &S.sel); /* the header first, before either stream */
    }
    atomic_fetch_add(&saves, 1); /* (Redis counts a save when it starts) */
    atomic_store(&S.on, true);
    return 0;
}

/* The walk is over (every key is in the file's buffers, or the snapshot
 * is dropped): the guards stop and the EOF record goes last. */
static void walk_over(bool keep)
{
    pthread_mutex_lock(&S.lock);
    atomic_store(&S.on, false);
    pthread_mutex_unlock(&S.lock);
    if (keep) {
        uint8_t eof = OP_EOF;
        sbuf_add(&S.buf, &eof, 1);
    } else {
        atomic_store(&S.failed, true);
    }
    out_flush(&S.buf, &S.sel);
    if (S.bg) { /* the writer finishes the file once the queue is written */
        pthread_mutex_lock(&S.wlock);
        S.wq_finish = true;
        pthread_cond_signal(&S.wcv);
        pthread_mutex_unlock(&S.wlock);
    }
}

/* A snapshot's end, once its file is finished (rc 0: it landed). */
static int snap_close(int rc)
{
    sbuf_free(&S.buf);
    batch_deinit(&S.rb);
    batch_deinit(&S.gb);
    batch_deinit(&S.wb);
    batch_deinit(&S.wgb);
    sbuf_free(&S.wbuf);
    free(S.wmark);
    free(S.wall);
    S.wmark = NULL;
    S.wall = NULL;
    S.wmark_cap = 0;
    if (S.bg) {
        ks_free(&S.had);
    }
    int64_t now = cudis_now_ms();
    atomic_store(&last_try_ms, now);
    if (rc == 0) {
        atomic_store(&last_save_s, now / 1000);
        atomic_fetch_sub(&dirty, dirty_at_start);
        log_msg(LL_NOTICE, "DB saved on disk (%llu keys, %llu bytes, %lld ms)",
                (unsigned long long)atomic_load(&S.keys), (unsigned long long)S.bytes,
                (long long)(now - S.start_ms));
    }
    if (S.bg) {
        /* (a BGSAVE stopped leaves the status as it was: Redis's child
         * killed with SIGUSR1 is no error) */
        if (!S.stopped) {
            atomic_store(&last_bg_ok, rc == 0);
            log_msg(rc == 0 ? LL_NOTICE : LL_WARNING,
                    rc == 0 ? "Background saving terminated with success"
                            : "Background saving error");
        }
        atomic_store(&last_bg_secs, (now - S.start_ms) / 1000);
        S.stopped = false;
        atomic_store(&S.busy, false);
    }
    atomic_store(&S.active, false);
    return rc;
}

/* SAVE: the whole walk at once (the engine held by the caller), and the
 * file written here. */
static int save_now(loop *lp)
{
    int rc = snap_begin(lp, false);
    if (rc != 0) {
        return rc;
    }
    walk_all();
    walk_over(true);
    return snap_close(file_finish(true));
}

/* Loop 0 waits for a BGSAVE's end: the walker's (the guards stop, EOF
 * goes last), then the writer's (the file renamed, or removed). */
static void walk_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    struct timeval gap = {0, POLL_US};
    if (!atomic_load(&S.busy)) {
        return;
    }
    if (S.walker_live && atomic_load(&S.walked)) {
        pthread_join(S.walker, NULL);
        S.walker_live = false;
        if (atomic_load(&S.on)) { /* (else FLUSHDB ended the walk) */
            walk_over(!atomic_load(&S.failed));
        }
    }
    if (!S.walker_live && atomic_load(&S.wdone)) {
        pthread_join(S.writer, NULL);
        (void)snap_close(S.wrc);
        return;
    }
    evtimer_add(S.ev, &gap);
}

/* Joins the walker, asking it to end first (it only try-locks the
 * engine, so the caller may hold it). */
static void walker_stop(void)
{
    if (S.walker_live) {
        atomic_store(&S.walk_stop, true);
        pthread_join(S.walker, NULL);
        S.walker_live = false;
    }
}

static int bgsave_start(loop *lp)
{
    int rc = snap_begin(lp, true);
    if (rc == SNAP_BUSY) {
        return rc;
    }
    if (rc != 0) {
        atomic_store(&last_bg_ok, false);
        atomic_store(&last_try_ms, cudis_now_ms());
        return -1;
    }
    atomic_store(&S.walk_stop, false);
    atomic_store(&S.walked, false);
    if (pthread_create(&S.walker, NULL, walker_main, NULL) != 0) {
        log_msg(LL_WARNING, "Can't save in background: no thread for the walk");
        walk_over(false);
        pthread_join(S.writer, NULL);
        (void)snap_close(S.wrc);
        return -1;
    }
    S.walker_live = true;
    if (S.ev == NULL) {
        S.ev = evtimer_new(srv.loops[0].base, walk_cb, NULL);
    }
    struct timeval tv = {0, POLL_US};
    evtimer_add(S.ev, &tv);
    log_msg(LL_NOTICE, "Background saving started");
    return 0;
}

/* Stop a BGSAVE (FLUSHALL, shutdown): the temp file goes. */
static void bgsave_stop(void)
{
    if (!rdb_bgsave_running()) {
        return;
    }
    evtimer_del(S.ev); /* (from another loop: waits for a walk_cb running) */
    if (!rdb_bgsave_running()) {
        return; /* that walk_cb finished it */
    }
    log_msg(LL_WARNING, "Background saving stopped: the temp file is removed");
    S.stopped = true;
    walker_stop();
    if (atomic_load(&S.on)) {
        walk_over(false);
    } else {
        atomic_store(&S.failed, true); /* the file goes, unless already renamed */
    }
    pthread_join(S.writer, NULL);
    (void)snap_close(S.wrc);
}

/* ------------------------------------------------------------------------
 * The guard: keys a batch writes, saved as they were first
 * ---------------------------------------------------------------------- */

static _Thread_local bool in_guard;

void rdb_guard(batcher *b)
{
    if (!atomic_load_explicit(&S.on, memory_order_acquire) || in_guard) {
        return;
    }
    bool writes = false;
    for (uint32_t i = 0; i < b->nops && !writes; i++) {
        writes = b->meta[i].write;
    }
    if (!writes) {
        return;
    }
    pthread_mutex_lock(&S.lock);
    if (atomic_load(&S.on) && S.bg) {
        in_guard = true;
        /* the reads are this loop's (their keyspace events go out from it) */
        S.rb.owner = S.gb.owner = b->owner;
        for (uint32_t i = 0; i < b->nops; i++) {
            if (!b->meta[i].write) {
                continue;
            }
            const cudis_op *op = &b->ops[i];
            uint8_t pdb = op->db;
            uint32_t klen = op->key_len;
            if (pdb & BH_HIDDEN) { /* a big hash's chunk: the hash is the key */
                if (klen < 4) {
                    continue;
                }
                pdb &= (uint8_t)~BH_HIDDEN;
                klen -= 4;
            }
            const uint8_t *key = b->in + op->key_off;
            if (S.logical[pdb] >= 0 && ks_add(&S.had, pdb, key, klen)) {
                (void)add_read(&S.rb, pdb, key, klen, 0);
            }
        }
        put_reads();
        in_guard = false;
    }
    pthread_mutex_unlock(&S.lock);
}

/* ------------------------------------------------------------------------
 * Loading
 * ---------------------------------------------------------------------- */

/* A file is read through a window, a buffer refilled by read() as the
 * parser reaches its end (a record that does not fit is moved to the
 * window's start, or the window doubled for it), and its CRC summed over
 * each piece as it is read, while the piece is in the cache. (On this
 * project's VMs mapping a file's pages cost more than copying them: a first
 * pass over a mapped 1 GB dump.rdb ran at 2 GB/s, read() into a reused
 * buffer at 8 GB/s.) */
#define RDB_LOAD_WINDOW (4u << 20)

typedef struct loader {
    rdb_reader r; /* what the window holds of the body */
    uint8_t *buf; /* the window: the file's bytes [off, off + len) */
    size_t cap, len;
    uint64_t off;
    uint64_t body_end; /* where the body ends (before the CRC's 8 bytes) */
    int fd;
    bool crc_on;
    uint64_t crc; /* of the bytes read so far */
    loop *lp;
    int db;
    int64_t now;
    uint64_t keys, expired, failed;
    long long idle, freq; /* the next key's IDLE and FREQ records (-1: none) */
    sbuf bigs; /* pdb, varint klen, key: hashes past hash-max-item-size */
    bool functions; /* FUNCTION2 records load libraries (else: refused) */
    bool serve;     /* the load at start: clients are answered between batches */
    bool stopped;   /* a shutdown was asked for meanwhile */
    char err[256];
} loader;

/* Reads into the window until it is full or the body is all read. */
static bool load_fill(loader *L)
{
    while (L->len < L->cap && L->off + L->len < L->body_end) {
        uint64_t left = L->body_end - (L->off + L->len);
        size_t want = L->cap - L->len < left ? L->cap - L->len : (size_t)left;
        ssize_t k = read(L->fd, L->buf + L->len, want);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            snprintf(L->err, sizeof(L->err), "Short read or OOM loading DB: %s",
                     k < 0 ? strerror(errno) : "the file ended early");
            return false;
        }
        if (L->crc_on) {
            L->crc = rdb_crc64(L->crc, L->buf + L->len, (size_t)k);
        }
        L->len += (size_t)k;
    }
    L->r.end = L->buf + L->len;
    return true;
}

/* The record at mark did not parse within the window: moved to the
 * window's start (the window doubled when it starts there), the rest read
 * after it. false when the body is all read already (the record is short
 * or bad), or on a read error or no memory (L->err). */
static bool load_refill(loader *L, const uint8_t *mark)
{
    if (L->off + L->len >= L->body_end) {
        return false;
    }
    size_t at = (size_t)(mark - L->buf);
    if (at == 0) {
        uint64_t rest = L->body_end - L->off;
        size_t cap = (uint64_t)L->cap * 2 < rest ? L->cap * 2 : (size_t)rest;
        uint8_t *nb = realloc(L->buf, cap);
        if (nb == NULL) {
            snprintf(L->err, sizeof(L->err), "Short read or OOM loading DB.");
            return false;
        }
        L->buf = nb;
        L->cap = cap;
    } else {
        memmove(L->buf, mark, L->len - at);
        L->off += at;
        L->len -= at;
    }
    L->r.p = L->buf;
    return load_fill(L);
}

/* The file offset of the parser's place. */
static long long load_offset(const loader *L)
{
    return (long long)(L->off + (uint64_t)(L->r.p - L->buf));
}

/* Between two batches of the load at start (the batch empty, the engine
 * not held): the clients' commands are answered, -LOADING but for those
 * Redis runs while loading (INFO, CONFIG, CLIENT, SHUTDOWN...), new
 * connections accepted, signals seen; at most every 10 ms
 * (loop_busy_round). A shutdown asked for meanwhile stops the load. */
static void load_serve(loader *L)
{
    atomic_store(&loading_done, load_offset(L));
    loop_busy_round(L->lp);
    L->stopped = atomic_load(&srv.shutdown) != 0;
}

static void load_flush(loader *L)
{
    batcher *b = &L->lp->b;
    if (b->nops == 0) {
        return;
    }
    int rc = batch_exec(b, srv.eng, cudis_now_ms());
    for (uint32_t i = 0; i < b->nops; i++) {
        if (rc != CUDIS_OK || b->res[i].status != CUDIS_OK) {
            L->failed++;
        }
    }
    batch_reset(b);
}

static bool get_u(rdb_reader *r, int n, uint64_t *x)
{
    if (r->end - r->p < n) {
        return false;
    }
    *x = 0;
    for (int i = 0; i < n; i++) {
        *x |= (uint64_t)r->p[i] << (8 * i);
    }
    r->p += n;
    return true;
}

static bool load_len(loader *L, uint64_t *n)
{
    int enc;
    return rdb_get_len(&L->r, n, &enc) && enc < 0;
}

enum { REC_NEXT, REC_EOF, REC_SHORT, REC_FAIL };

/* One record at L->r.p: REC_NEXT (read, and what it holds done), REC_EOF,
 * REC_SHORT (it did not parse within the window: short or bad data; done
 * nothing), REC_FAIL (L->err). *exp: the expiry read for the next key. */
static int load_record(loader *L, int64_t *exp)
{
    batcher *b = &L->lp->b;
    if (L->r.p >= L->r.end) {
        return REC_SHORT;
    }
    uint8_t t = *L->r.p++;
    uint64_t x, y;
    switch (t) {
    case OP_EOF: return REC_EOF;
    case OP_SELECTDB:
        if (!load_len(L, &x)) {
            return REC_SHORT;
        }
        if (x >= (uint64_t)srv.cfg.databases) {
            snprintf(L->err, sizeof(L->err),
                     "FATAL: Data file was created with a Redis server configured to handle "
                     "more than %lld databases. Exiting",
                     srv.cfg.databases);
            return REC_FAIL;
        }
        L->db = (int)x;
        return REC_NEXT;
    case OP_RESIZEDB:
        if (!load_len(L, &x) || !load_len(L, &y)) {
            return REC_SHORT;
        }
        if (L->keys == 0 && b->nops == 0 && x > 0) {
            /* the first database's size, and the file's bytes a key:
             * the index is sized before the first key touches it */
            engine_index_expect(srv.eng, x, L->body_end / x);
        }
        return REC_NEXT;
    case OP_EXPIRETIME_MS:
        if (!get_u(&L->r, 8, &x)) {
            return REC_SHORT;
        }
        *exp = (int64_t)x;
        return REC_NEXT;
    case OP_EXPIRETIME:
        if (!get_u(&L->r, 4, &x)) {
            return REC_SHORT;
        }
        *exp = (int64_t)x * 1000;
        return REC_NEXT;
    case OP_FREQ:
        if (!get_u(&L->r, 1, &x)) {
            return REC_SHORT;
        }
        L->freq = (long long)x;
        return REC_NEXT;
    case OP_IDLE:
        if (!load_len(L, &x)) {
            return REC_SHORT;
        }
        L->idle = x > INT64_MAX / 1000 ? INT64_MAX / 1000 : (long long)x;
        return REC_NEXT;
    case OP_AUX: {
        uint32_t kl, vl;
        uint8_t *k = rdb_get_string(&L->r, &kl);
        uint8_t *v = k ? rdb_get_string(&L->r, &vl) : NULL;
        if (v != NULL && kl == 8 && memcmp(k, "used-mem", 8) == 0 && vl < 32) {
            char num[32];
            memcpy(num, v, vl);
            num[vl] = '\0';
            atomic_store(&loading_used_mem, strtoll(num, NULL, 10));
        }
        free(k);
        free(v);
        if (v == NULL) {
            return REC_SHORT;
        }
        return REC_NEXT;
    }
    case OP_FUNCTION2: {
        if (!L->functions) {
            snprintf(L->err, sizeof(L->err), "Function libraries are not loaded here");
            return REC_FAIL;
        }
        uint32_t n;
        uint8_t *code = rdb_get_string(&L->r, &n);
        if (code == NULL) {
            return REC_SHORT;
        }
        char ferr[200];
        int rc = function_rdb_load(code, n, ferr, sizeof(ferr));
        free(code);
        if (rc != 0) {
            snprintf(L->err, sizeof(L->err), "Failed loading library: %s", ferr);
            return REC_FAIL;
        }
        return REC_NEXT;
    }
    case OP_MODULE_AUX:
        snprintf(L->err, sizeof(L->err),
                 "The file holds module data (MODULE_AUX): cudis loads no modules");
        return REC_FAIL;
    default: break;
    }
    /* a key and its object */
    uint32_t kl, vl;
    uint8_t *key = rdb_get_string(&L->r, &kl);
    if (key == NULL) {
        return REC_SHORT;
    }
    uint8_t type, *v = NULL;
    if (t == 15 || t == 19 || t == 21 || t == 6 || t == 7) {
        free(key);
        snprintf(L->err, sizeof(L->err),
                 "The file holds a %s (RDB type %u), which cudis does not store",
                 t == 6 || t == 7 ? "module value" : "stream", t);
        return REC_FAIL;
    }
    if (!rdb_get_object(&L->r, t, &type, &v, &vl)) {
        free(key);
        /* (or the window ends in it: then read on, and this is forgotten) */
        snprintf(L->err, sizeof(L->err), "Bad data format of a value (RDB type %u)", t);
        return REC_SHORT;
    }
    if (*exp >= 0 && *exp <= L->now) {
        L->expired++; /* as a Redis master: an expired key is not loaded */
    } else {
        if (b->in_len > 64u * 1024 * 1024 || b->nops >= 4096) {
            load_flush(L);
            if (L->serve) {
                load_serve(L);
                if (L->stopped) {
                    free(key);
                    free(v);
                    snprintf(L->err, sizeof(L->err), "the load stopped for a shutdown");
                    return REC_FAIL;
                }
            }
        }
        b->db = db_phys(L->db);
        b->ev = KEV_QUIET;
        int64_t aged =
            L->idle >= 0 || L->freq >= 0 ? server_aged_arg(L->idle, L->freq, L->now) : -1;
        uint32_t i =
            batch_add_op(b, CUDIS_OP_SET, aged >= 0 ? CUDIS_F_AGED : 0, (const char *)key, kl,
                         (const char *)v, vl, aged >= 0 ? aged : 0, *exp > 0 ? *exp : 0, true);
        b->ops[i].type = type;
        L->keys++;
        if (type == CUDIS_TYPE_HASH && srv.cfg.hash_max_item_size > 0 &&
            vl > (uint64_t)srv.cfg.hash_max_item_size) {
            uint8_t hdr[6] = {b->db};
            uint32_t hl = cudis_varint_put(hdr + 1, kl);
            sbuf_add(&L->bigs, hdr, 1 + hl);
            sbuf_add(&L->bigs, key, kl);
        }
    }
    free(key);
    free(v);
    *exp = -1;
    L->idle = L->freq = -1; /* (they date one key) */
    return REC_NEXT;
}

/* The records after the header. false with L->err. */
static bool load_body(loader *L)
{
    int64_t exp = -1;
    for (;;) {
        const uint8_t *mark = L->r.p;
        int rc = load_record(L, &exp);
        if (rc == REC_NEXT) {
            continue;
        }
        if (rc != REC_SHORT) {
            return rc == REC_EOF;
        }
        char why[sizeof(L->err)];
        memcpy(why, L->err, sizeof(why));
        L->err[0] = '\0';
        L->r.p = mark;
        if (load_refill(L, mark)) {
            continue;
        }
        if (L->err[0] != '\0') {
            return false; /* a read error, or no memory */
        }
        if (why[0] != '\0') {
            memcpy(L->err, why, sizeof(why));
        } else if (mark >= L->r.end) {
            snprintf(L->err, sizeof(L->err), "Short read: the file ends before its EOF record");
        } else {
            snprintf(L->err, sizeof(L->err), "Short read or bad data near offset %lld",
                     load_offset(L));
        }
        return false;
    }
}

int rdb_load_fd(loop *lp, int fd, uint64_t n, size_t window, bool at_start, rdb_load_stats *st,
                char *err, size_t errlen)
{
    loader L = {.fd = fd,
                .lp = lp,
                .now = cudis_now_ms(),
                .idle = -1,
                .freq = -1,
                .functions = at_start,
                .serve = at_start};
    /* an 8-byte CRC follows EOF; 0: not computed; rdbchecksum no: unchecked.
     * As Redis, a file is checked once it has been read. */
    uint8_t tail[8] = {0};
    uint64_t want = 0;
    bool ok = n >= 9;
    L.body_end = n;
    L.cap = window < 64 ? 64 : window;
    if (L.cap > n) {
        L.cap = n > 0 ? (size_t)n : 1;
    }
    L.buf = malloc(L.cap);
    L.r.p = L.buf;
    if (L.buf == NULL || !ok || !load_fill(&L) || L.len < 9) {
        ok = false;
        snprintf(L.err, sizeof(L.err), "Short read or OOM loading DB.");
    }
    const uint8_t *h = L.buf;
    int ver = 0;
    if (ok) {
        ok = memcmp(h, "REDIS", 5) == 0;
        for (int i = 5; ok && i < 9; i++) {
            ok = h[i] >= '0' && h[i] <= '9';
            ver = ver * 10 + (h[i] - '0');
        }
        if (!ok) {
            snprintf(L.err, sizeof(L.err), "Wrong signature trying to load DB from file");
        } else if (ver < 1 || ver > RDB_VERSION_IN_MAX) {
            ok = false;
            snprintf(L.err, sizeof(L.err), "Can't handle RDB format version %d", ver);
        }
    }
    bool check = false;
    if (ok && ver >= 5) {
        ok = n >= 9 + 9 && pread(fd, tail, 8, (off_t)(n - 8)) == 8;
        for (int i = 0; ok && i < 8; i++) {
            want |= (uint64_t)tail[i] << (8 * i);
        }
        if (!ok) {
            snprintf(L.err, sizeof(L.err), "Short read or OOM loading DB.");
        } else {
            /* the window read as far as the body's end from here on */
            L.body_end = n - 8;
            if (L.len > L.body_end) {
                L.len = (size_t)L.body_end;
            }
            if (srv.cfg.rdb_checksum && want == 0) {
                log_msg(LL_WARNING,
                        "RDB file was saved with checksum disabled: no check performed.");
            } else if (srv.cfg.rdb_checksum) {
                check = L.crc_on = true;
                L.crc = rdb_crc64(0, L.buf, L.len);
            }
        }
    }
    if (ok) {
        L.r = (rdb_reader){L.buf + 9, L.buf + L.len};
        ok = load_body(&L);
        if (ok && (L.r.p != L.r.end || L.off + L.len < L.body_end)) {
            ok = false;
            snprintf(L.err, sizeof(L.err), "Data after the EOF record");
        }
    }
    load_flush(&L); /* (what was read before an error is in the engine, as Redis's) */
    if (ok && check && L.crc != want) { /* (the body is all read) */
        ok = false;
        snprintf(L.err, sizeof(L.err), "Wrong RDB checksum");
    }
    free(L.buf);
    for (size_t at = 0; ok && at < L.bigs.len;) { /* hashes to keep in chunks */
        const uint8_t *p = (const uint8_t *)L.bigs.p + at;
        uint32_t kl = 0;
        uint32_t hl = cudis_varint_get(p + 1, 5, &kl);
        bighash_note_big(p[0], (const char *)p + 1 + hl, kl);
        at += 1 + hl + kl;
    }
    sbuf_free(&L.bigs);
    *st = (rdb_load_stats){.keys = L.keys, .expired = L.expired, .failed = L.failed};
    if (!ok) {
        snprintf(err, errlen, "%s", L.err);
        return L.stopped ? 1 : -1;
    }
    return 0;
}

int rdb_load_at_start(loop *lp)
{
    char path[4096];
    path_of(path, sizeof(path), srv.cfg.dbfilename);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) {
            log_msg(LL_WARNING, "Fatal error loading the DB, check server logs. Exiting: %s: %s",
                    path, strerror(errno));
            return -1;
        }
        return 0;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 9) {
        close(fd);
        log_msg(LL_WARNING, "Short read or OOM loading DB. Unrecoverable error, aborting now.");
        return -1;
    }
    uint64_t n = (uint64_t)st.st_size;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    uint64_t t0 = cudis_mono_ns();
    rdb_load_stats ls;
    char err[256];
    atomic_store(&loading_start_s, cudis_now_ms() / 1000);
    atomic_store(&loading_total, (long long)n);
    atomic_store(&loading_done, 0);
    atomic_store(&loading, true);
    log_msg(LL_NOTICE, "Loading %s (%llu bytes)", path, (unsigned long long)n);
    int rc = rdb_load_fd(lp, fd, n, RDB_LOAD_WINDOW, true, &ls, err, sizeof(err));
    atomic_store(&loading, false);
    close(fd);
    if (rc == 1) {
        log_msg(LL_WARNING, "Loading %s stopped by a shutdown request (nothing saved)", path);
        return 1;
    }
    if (rc != 0) {
        log_msg(LL_WARNING, "Error loading %s: %s. The server does not start on a file it cannot "
                            "load whole.", path, err);
        return -1;
    }
    uint64_t ms = (cudis_mono_ns() - t0) / 1000000;
    atomic_store(&dirty, 0); /* what was loaded is what is on disk (Redis's dirty = 0) */
    atomic_store(&loaded_keys, (long long)ls.keys);
    atomic_store(&loaded_expired, (long long)ls.expired);
    atomic_store(&load_ms, (long long)ms);
    if (ls.failed > 0) {
        log_msg(LL_WARNING, "%llu keys of %s did not fit the engine (maxmemory, the policy)",
                (unsigned long long)ls.failed, path);
    }
    log_msg(LL_NOTICE,
            "DB loaded from disk: %.3f seconds (%llu keys, %llu expired skipped, %llu bytes)",
            (double)ms / 1000.0, (unsigned long long)ls.keys, (unsigned long long)ls.expired,
            (unsigned long long)n);
    return 0;
}

/* ------------------------------------------------------------------------
 * The schedule, flushes, shutdown, INFO
 * ---------------------------------------------------------------------- */

/* Whether `save` sets points and one of them is due now. */
static bool save_due(int64_t now_ms)
{
    const char *s = srv.cfg.save;
    if (s == NULL || *s == '\0') {
        return false;
    }
    uint64_t d = atomic_load(&dirty);
    long long since = now_ms / 1000 - atomic_load(&last_save_s);
    /* after a failure, retry no sooner than 5 s (Redis's CONFIG_BGSAVE_RETRY_DELAY) */
    bool retry_ok = atomic_load(&last_bg_ok) || now_ms - atomic_load(&last_try_ms) > 5000;
    char *end;
    while (*s) {
        long long secs = strtoll(s, &end, 10);
        if (end == s) {
            break;
        }
        s = end;
        long long changes = strtoll(s, &end, 10);
        if (end == s) {
            break;
        }
        s = end;
        if (d >= (uint64_t)changes && since >= secs && retry_ok) {
            log_msg(LL_NOTICE, "%lld changes in %lld seconds. Saving...", changes, secs);
            return true;
        }
    }
    return false;
}

void rdb_cron(loop *lp, int64_t now_ms)
{
    if (rdb_bgsave_running()) {
        return;
    }
    if (atomic_exchange(&bgsave_scheduled, false) || save_due(now_ms)) {
        (void)bgsave_start(lp);
    }
}

void rdb_before_flush(loop *lp, bool all)
{
    if (!rdb_bgsave_running()) {
        return;
    }
    if (all) {
        bgsave_stop();
        return;
    }
    if (!atomic_load(&S.on)) {
        return; /* the walk is over: the file is being finished */
    }
    /* FLUSHDB: the walk ends first, here (the engine is held: the walker
     * is between slices, and ends once it sees the walk over); the writer
     * then finishes the file while the timer waits for it */
    pthread_mutex_lock(&S.lock);
    S.rb.owner = S.gb.owner = lp;
    walk_all();
    pthread_mutex_unlock(&S.lock);
    walk_over(!atomic_load(&S.failed));
}

static bool save_points(void)
{
    return srv.cfg.save != NULL && srv.cfg.save[0] != '\0';
}

void rdb_after_flushall(loop *lp)
{
    if (save_points()) {
        (void)save_now(lp);
    }
}

int rdb_shutdown_save(loop *lp, bool save, bool nosave)
{
    if (rdb_bgsave_running()) {
        bgsave_stop();
    }
    if (nosave || (!save && !save_points())) {
        final_saved = true; /* SHUTDOWN decided: nothing more at exit */
        return 0;
    }
    log_msg(LL_NOTICE, "Saving the final RDB snapshot before exiting.");
    /* SHUTDOWN runs in the batch's flow: the engine is taken here (a
     * busy script's loop holds it already) */
    bool locked = lp->busy ? false : excl_begin(lp);
    int rc = save_now(lp);
    excl_end(lp, locked);
    if (rc != 0) {
        log_msg(LL_WARNING, "Error trying to save the DB, can't exit.");
        return -1;
    }
    final_saved = true;
    return 0;
}

void rdb_at_exit(loop *lp)
{
    bgsave_stop();
    if (!final_saved && save_points()) { /* SIGTERM / SIGINT: saved as Redis does */
        log_msg(LL_NOTICE, "Saving the final RDB snapshot before exiting.");
        if (save_now(lp) != 0) {
            log_msg(LL_WARNING, "Error trying to save the DB before exiting.");
        }
    }
}

bool rdb_loading(void)
{
    return atomic_load(&loading);
}

void rdb_info(sbuf *o)
{
    int64_t now = cudis_now_ms();
    bool bg = rdb_bgsave_running();
    bool ld = atomic_load(&loading);
    sbuf_printf(o,
                "loading:%d\r\nasync_loading:0\r\ncurrent_save_keys_processed:%llu\r\n"
                "rdb_changes_since_last_save:%llu\r\n"
                "rdb_bgsave_in_progress:%d\r\nrdb_last_save_time:%lld\r\n"
                "rdb_last_bgsave_status:%s\r\nrdb_last_bgsave_time_sec:%lld\r\n"
                "rdb_current_bgsave_time_sec:%lld\r\nrdb_saves:%llu\r\n"
                "rdb_last_load_keys_expired:%lld\r\nrdb_last_load_keys_loaded:%lld\r\n"
                "rdb_last_load_time_ms:%lld\r\n"
                "aof_enabled:0\r\naof_rewrite_in_progress:0\r\naof_last_write_status:ok\r\n",
                ld ? 1 : 0, bg ? (unsigned long long)atomic_load(&S.keys) : 0ULL,
                (unsigned long long)atomic_load(&dirty), bg ? 1 : 0,
                (long long)atomic_load(&last_save_s), atomic_load(&last_bg_ok) ? "ok" : "err",
                (long long)atomic_load(&last_bg_secs),
                bg ? (long long)(now - S.start_ms) / 1000 : -1LL,
                (unsigned long long)atomic_load(&saves), (long long)atomic_load(&loaded_expired),
                (long long)atomic_load(&loaded_keys), (long long)atomic_load(&load_ms));
    if (ld) { /* Redis's figures of a load in progress, and its ETA */
        long long total = atomic_load(&loading_total), done = atomic_load(&loading_done);
        long long elapsed = now / 1000 - atomic_load(&loading_start_s);
        long long eta = elapsed == 0 ? 1 : elapsed * (total - done) / (done + 1);
        sbuf_printf(o,
                    "loading_start_time:%lld\r\nloading_total_bytes:%lld\r\n"
                    "loading_rdb_used_mem:%lld\r\nloading_loaded_bytes:%lld\r\n"
                    "loading_loaded_perc:%.2f\r\nloading_eta_seconds:%lld\r\n",
                    (long long)atomic_load(&loading_start_s), total,
                    (long long)atomic_load(&loading_used_mem), done,
                    (double)done / (double)(total + 1) * 100.0, eta);
    }
}

/* ------------------------------------------------------------------------
 * Commands
 * ---------------------------------------------------------------------- */

void cmd_save(conn *c, int argc, char **argv, uint32_t *lens)
{
    UNUSED3;
    int rc = rdb_bgsave_running() ? SNAP_BUSY : save_now(c->lp);
    if (rc == SNAP_BUSY) {
        conn_error(c, "ERR Background save already in progress");
    } else if (rc != 0) {
        conn_error(c, "ERR");
    } else {
        reply_ok(c);
    }
}

void cmd_bgsave(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (argc > 1 && !(argc == 2 && util_eq(argv[1], lens[1], "schedule"))) {
        conn_error(c, "ERR syntax error");
        return;
    }
    if (c->in_exec && !rdb_bgsave_running()) { /* as Redis: after the transaction */
        atomic_store(&bgsave_scheduled, true);
        resp_status(&c->out, "Background saving scheduled");
        return;
    }
    int rc = rdb_bgsave_running() ? SNAP_BUSY : bgsave_start(c->lp);
    if (rc == SNAP_BUSY) {
        conn_error(c, "ERR Background save already in progress");
    } else if (rc != 0) {
        conn_error(c, "ERR");
    } else {
        resp_status(&c->out, "Background saving started");
    }
}

void cmd_lastsave(conn *c, int argc, char **argv, uint32_t *lens)
{
    UNUSED3;
    resp_int(&c->out, atomic_load(&last_save_s));
}

void rdb_setup(void)
{
    atomic_store(&last_save_s, srv.start_ms / 1000); /* as Redis: the start counts as a save */
}
