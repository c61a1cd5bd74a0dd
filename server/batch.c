/*
 * batch.c - the batcher and its flusher: gathers the ops of many commands
 * into one cudis_batch (a key already in the open batch seals it when either
 * side writes), runs it with one engine_execute (inline or through the
 * engine queue), lets the engine re-run the ops whose value did not fit the
 * out buffer (engine_rerun_outbuf), and answers the commands in order.
 */
#include <stdlib.h>
#include <string.h>

#include "cudis_hd.h"
#include "cudis_time.h"
#include "server_internal.h"

#define KWRITE 0x80000000u
#define BATCH_KEEP_OPS 65536u /* ops (and pends) a batcher keeps room for between batches */
#define HSEED 0x9e3779b97f4a7c15ull

void batch_init(batcher *b)
{
    memset(b, 0, sizeof(*b));
    b->gen = 1;
}

void batch_deinit(batcher *b)
{
    free(b->lit);
    free(b->ops);
    free(b->res);
    free(b->meta);
    free(b->evb.recs);
    free(b->evb.keys);
    free(b->in);
    free(b->out);
    free(b->pends);
    free(b->kent);
    free(b->kgen);
    memset(b, 0, sizeof(*b));
}

static const uint8_t *op_key(const batcher *b, uint32_t i)
{
    return b->in + b->ops[i].key_off;
}

/* Slot of key in the key set, or the empty slot where it would go. */
static uint32_t kfind(batcher *b, const char *key, uint32_t len, bool *found)
{
    uint32_t mask = b->kcap - 1;
    uint32_t h = (uint32_t)cudis_hash(key, len, HSEED) & mask;
    for (;;) {
        if (b->kgen[h] != b->gen) {
            *found = false;
            return h;
        }
        uint32_t i = b->kent[h] & ~KWRITE;
        if (b->ops[i].key_len == len && memcmp(op_key(b, i), key, len) == 0) {
            *found = true;
            return h;
        }
        h = (h + 1) & mask;
    }
}

static void kgrow(batcher *b)
{
    uint32_t ncap = b->kcap ? b->kcap * 2 : 256;
    uint32_t *ent = b->kent, *gen = b->kgen;
    uint32_t ocap = b->kcap, ogen = b->gen;
    b->kent = xcalloc(ncap, sizeof(uint32_t));
    b->kgen = xcalloc(ncap, sizeof(uint32_t));
    b->kcap = ncap;
    b->gen = 1;
    for (uint32_t s = 0; s < ocap; s++) {
        if (gen[s] == ogen) {
            uint32_t i = ent[s] & ~KWRITE;
            bool f;
            uint32_t h = kfind(b, (const char *)op_key(b, i), b->ops[i].key_len, &f);
            b->kent[h] = ent[s];
            b->kgen[h] = b->gen;
        }
    }
    free(ent);
    free(gen);
}

bool batch_conflicts(batcher *b, const char *key, uint32_t len, bool write)
{
    if (b->nops == 0 || b->kcap == 0) {
        return false;
    }
    bool found;
    uint32_t h = kfind(b, key, len, &found);
    b->lk_key = key;
    b->lk_len = len;
    b->lk_slot = h;
    b->lk_found = found;
    b->lk_nops = b->nops;
    b->lk_gen = b->gen;
    return found && (write || (b->kent[h] & KWRITE));
}

static void need(void **p, size_t elem, uint32_t *cap, uint32_t want)
{
    if (want <= *cap) {
        return;
    }
    uint32_t n = *cap ? *cap : 64;
    while (n < want) {
        n *= 2;
    }
    void *q = xrealloc(*p, (size_t)n * elem);
    *p = q;
    *cap = n;
}

uint32_t batch_add_op(batcher *b, uint8_t code, uint16_t flags, const char *key, uint32_t klen,
                      const char *val, uint32_t vlen, int64_t arg, int64_t expire_ms, bool write)
{
    uint32_t cap = b->cap_ops;
    need((void **)&b->ops, sizeof(cudis_op), &cap, b->nops + 1);
    if (cap != b->cap_ops) {
        uint32_t c2 = b->cap_ops;
        need((void **)&b->res, sizeof(cudis_result), &c2, cap);
        c2 = b->cap_ops;
        need((void **)&b->meta, sizeof(op_meta), &c2, cap);
        b->cap_ops = cap;
    }
    size_t want = b->in_len + klen + vlen;
    if (want > b->in_cap) {
        size_t n = b->in_cap ? b->in_cap : 64 * 1024;
        while (n < want) {
            n *= 2;
        }
        uint8_t *q = xrealloc(b->in, n);
        b->in = q;
        b->in_cap = n;
    }
    uint32_t i = b->nops++;
    cudis_op *op = &b->ops[i];
    memset(op, 0, sizeof(*op));
    op->code = code;
    op->db = b->db;
    op->flags = flags | (b->notouch && code == CUDIS_OP_GET ? CUDIS_F_NOTOUCH : 0);
    op->key_len = klen;
    op->key_off = b->in_len;
    if (klen) {
        memcpy(b->in + b->in_len, key, klen);
    }
    b->in_len += klen;
    op->val_off = b->in_len;
    op->val_len = vlen;
    if (vlen) {
        memcpy(b->in + b->in_len, val, vlen);
    }
    b->in_len += vlen;
    op->arg = arg;
    op->expire_ms = expire_ms;
    b->meta[i].who = b->who;
    b->meta[i].ev = b->ev;
    b->meta[i].write = write;
    if (i == 0) {
        b->open_ns = cudis_mono_ns();
    }
    /* key set (reusing the lookup batch_conflicts just made, if any) */
    bool found;
    uint32_t h;
    if ((b->nops + 1) * 2 > b->kcap) {
        kgrow(b);
        b->lk_key = NULL;
    }
    if (b->lk_key == key && b->lk_len == klen && b->lk_nops == i && b->lk_gen == b->gen) {
        h = b->lk_slot;
        found = b->lk_found;
    } else {
        h = kfind(b, key, klen, &found);
    }
    b->lk_key = NULL;
    if (!found) {
        b->kent[h] = i | (write ? KWRITE : 0);
        b->kgen[h] = b->gen;
    } else if (write) {
        b->kent[h] |= KWRITE;
    }
    return i;
}

pend *batch_add_pend(batcher *b, conn *c, reply_fn fn, uint32_t op0, uint32_t nops)
{
    need((void **)&b->pends, sizeof(pend), &b->cap_pend, b->npend + 1);
    pend *p = &b->pends[b->npend++];
    p->c = c;
    p->cmd = c->cur_cmd;
    p->fn = fn;
    p->op0 = op0;
    p->nops = nops;
    p->a = p->b = 0;
    p->k = 0;
    p->aux = NULL;
    p->track = c->track_now;
    p->silent = c->silent;
    c->pending++;
    b->seq++;
    if (b->npend == 1 && nops == 0) {
        b->open_ns = cudis_mono_ns();
    }
    return p;
}

static void batch_view(batcher *b, int64_t now_ms, cudis_batch *cb)
{
    if (b->out_cap == 0) {
        b->out_cap = 256 * 1024;
        b->out = xmalloc(b->out_cap);
    }
    *cb =
        (cudis_batch){.ops = b->ops,
                      .n_ops = b->nops,
                      .in = b->in,
                      .res = b->res,
                      .out = b->out,
                      .out_cap = b->out_cap,
                      .out_len = 0,
                      .now_ms = now_ms,
                      .ev = !b->quiet && keyspace_wants_events() ? keyspace_evbuf(&b->evb) : NULL};
    b->now_ms = now_ms;
}

static int batch_after(batcher *b, batch_stats *st, engine *e, int64_t now_ms, int rc)
{
    if (rc != CUDIS_OK) {
        for (uint32_t i = 0; i < b->nops; i++) {
            memset(&b->res[i], 0, sizeof(b->res[i]));
            b->res[i].status = rc;
        }
        STAT_INC(st->failed);
        return rc;
    }
    /* values that did not fit the out buffer: the engine grows it */
    cudis_batch cb;
    batch_view(b, now_ms, &cb);
    uint32_t reruns = 0;
    (void)engine_rerun_outbuf(e, &cb, &reruns); /* a failure is in those ops' status */
    b->out = cb.out;
    b->out_cap = cb.out_cap;
    STAT_ADD(st->outbuf_reruns, reruns);
    if (b->quiet) {
        return CUDIS_OK;
    }
    /* INFO rdb_changes_since_last_save, the save schedule: keys written;
     * not a big hash's own machinery (its chunks, a conversion's head:
     * bighash_cmd counts the command) */
    uint64_t changes = 0;
    for (uint32_t i = 0; i < b->nops; i++) {
        changes += b->meta[i].write && (b->res[i].flags & CUDIS_R_DONE) &&
                   cudis_db_counted(b->ops[i].db) && (b->meta[i].ev & ~KEV_READ) != KEV_BIGHASH;
    }
    if (changes > 0) {
        rdb_changed(changes);
    }
    keyspace_batch_done(b, &cb);
    return CUDIS_OK;
}

int batch_exec(batcher *b, engine *e, int64_t now_ms)
{
    if (b->nops == 0) {
        return CUDIS_OK;
    }
    if (!b->quiet) {
        rdb_guard(b); /* a snapshot running saves the keys this batch writes first */
    }
    cudis_batch cb;
    batch_view(b, now_ms, &cb);
    return batch_after(b, &b->st, e, now_ms, engine_execute(e, &cb));
}

/* Exchange two batchers' batches; statistics, the pend sequence and the
 * database of the next op stay. */
static void batch_swap(batcher *a, batcher *b)
{
    batch_stats st = a->st;
    uint64_t seq = a->seq;
    uint8_t db = a->db, ev = a->ev;
    bool notouch = a->notouch;
    uint64_t who = a->who;
    batcher t = *a;
    *a = *b;
    *b = t;
    b->st = a->st;
    b->seq = a->seq;
    b->db = a->db;
    b->ev = a->ev;
    b->who = a->who;
    b->notouch = a->notouch;
    a->notouch = notouch;
    a->st = st;
    a->seq = seq;
    a->db = db;
    a->ev = ev;
    a->who = who;
}

void batch_add_literal(batcher *b, conn *c, const char *bytes, size_t n)
{
    if (b->lit_len + n > b->lit_cap) {
        size_t cap = b->lit_cap ? b->lit_cap : 4096;
        while (cap < b->lit_len + n) {
            cap *= 2;
        }
        char *q = xrealloc(b->lit, cap);
        b->lit = q;
        b->lit_cap = cap;
    }
    memcpy(b->lit + b->lit_len, bytes, n);
    pend *p = batch_add_pend(b, c, NULL, 0, 0); /* fn NULL: a literal */
    p->cmd = NULL;                              /* answered as is: no command statistics */
    p->track = false;
    p->silent = false; /* a message, or a reply reply_in_order kept */
    p->a = (int64_t)b->lit_len;
    p->b = (int64_t)n;
    b->lit_len += n;
}

/* ------------------------------------------------------------------------
 * Running a batch (the flusher)
 * ---------------------------------------------------------------------- */

/* Statistics of a finished batch, then its replies, in the order the
 * commands came; the batcher is reset. */
static void batch_answer(batch_flusher *f, batcher *b, int reason, int64_t now, uint64_t wait_us,
                         uint64_t exec_ns)
{
    batch_stats *st = &f->open->st;
    batch_record(st, b->nops, wait_us, exec_ns);
    STAT_ADD(st->cmds, b->npend);
    switch (reason) {
    case SEAL_CONFLICT: STAT_INC(st->sealed_conflict); break;
    case SEAL_FULL: STAT_INC(st->sealed_full); break;
    case SEAL_DEADLINE: STAT_INC(st->sealed_deadline); break;
    case SEAL_DRAIN: STAT_INC(st->sealed_drain); break;
    default: break;
    }
    uint64_t per_op_ns = b->nops ? exec_ns / b->nops : 0;
    cudis_batch view = {.ops = b->ops,
                        .n_ops = b->nops,
                        .in = b->in,
                        .res = b->res,
                        .out = b->out,
                        .out_cap = b->out_cap,
                        .now_ms = now};
    for (uint32_t i = 0; i < b->npend; i++) {
        pend *p = &b->pends[i];
        conn *c = p->c;
        c->pending--;
        if (p->fn == NULL) {
            sbuf_add(&c->out, b->lit + p->a, (size_t)p->b);
            f->answered(c);
            continue;
        }
        const command *saved = c->cur_cmd;
        c->cur_cmd = p->cmd;
        size_t mark = c->out.len;
        p->fn(c, p, &view);
        if (p->silent) {
            c->out.len = mark;
        }
        c->cur_cmd = saved;
        if (p->track) {
            tracking_remember_ops(c, &view, p->op0, p->nops);
        }
        free(p->aux);
        uint64_t usec = (per_op_ns * (p->nops ? p->nops : 1)) / 1000;
        cmd_stat_call(&f->cmd_stats[cmd_idx(p->cmd)], usec, srv.cfg.latency_tracking);
        observe_batched(c, p->cmd, &view, p->op0, p->nops, usec);
        f->answered(c);
    }
    batch_reset(b);
}

void batch_complete(batch_flusher *f, engine *e)
{
    if (!f->in_flight) {
        return;
    }
    int rc = engine_queue_complete(f->q, NULL);
    (void)batch_after(&f->flight, &f->open->st, e, f->flight_now, rc);
    if (f->flight_locked) {
        pthread_rwlock_unlock(f->eng_lock);
    }
    f->in_flight = false;
    f->flight_locked = false;
    batch_answer(f, &f->flight, f->flight_reason, f->flight_now, f->flight_wait_us,
                 cudis_mono_ns() - f->flight_t0);
}

void batch_flush(batch_flusher *f, engine *e, int reason)
{
    batcher *b = f->open;
    if (b->npend == 0) {
        if (reason == SEAL_DRAIN) {
            batch_complete(f, e);
        }
        return;
    }
    batch_complete(f, e);
    uint64_t t0 = cudis_mono_ns();
    uint64_t wait_us = (t0 - b->open_ns) / 1000;
    int64_t now = cudis_now_ms();
    pthread_rwlock_t *lock = f->eng_lock;
    if (f->q != NULL && reason != SEAL_DRAIN && !b->exclusive && b->nops > 0) {
        if (lock != NULL) {
            pthread_rwlock_rdlock(lock);
        }
        rdb_guard(b);
        batch_swap(&f->flight, b);
        batch_view(&f->flight, now, &f->fcb);
        if (engine_queue_submit(f->q, &f->fcb) == CUDIS_OK) {
            f->in_flight = true;
            f->flight_locked = lock != NULL;
            f->flight_reason = reason;
            f->flight_t0 = t0;
            f->flight_wait_us = wait_us;
            f->flight_now = now;
            return;
        }
        batch_swap(&f->flight, b); /* cannot happen (nothing in flight): run it here */
        if (lock != NULL) {
            pthread_rwlock_unlock(lock);
        }
    }
    if (lock != NULL) {
        if (b->exclusive) {
            pthread_rwlock_wrlock(lock);
        } else {
            pthread_rwlock_rdlock(lock);
        }
    }
    batch_exec(b, e, now);
    if (lock != NULL) {
        pthread_rwlock_unlock(lock);
    }
    batch_answer(f, b, reason, now, wait_us, cudis_mono_ns() - t0);
}

void batch_reset(batcher *b)
{
    b->evb.len = 0;
    b->evb.keys_len = 0;
    b->nops = 0;
    b->npend = 0;
    b->in_len = 0;
    b->lit_len = 0;
    b->exclusive = false;
    b->gen++;
    if (b->gen == 0) {
        memset(b->kgen, 0, (size_t)b->kcap * sizeof(uint32_t));
        b->gen = 1;
    }
    /* Give back what one huge value or command blew up (a 2M-key EXISTS
     * left 200 MB of arrays behind). */
    bool freed = false;
    if (b->out_cap > 64u * 1024 * 1024) {
        free(b->out);
        b->out = NULL;
        b->out_cap = 0;
        freed = true;
    }
    if (b->in_cap > 64u * 1024 * 1024) {
        free(b->in);
        b->in = NULL;
        b->in_cap = 0;
        freed = true;
    }
    if (b->cap_ops > BATCH_KEEP_OPS) {
        free(b->ops);
        free(b->res);
        free(b->meta);
        b->ops = NULL;
        b->res = NULL;
        b->meta = NULL;
        b->cap_ops = 0;
        freed = true;
    }
    if (b->cap_pend > BATCH_KEEP_OPS) {
        free(b->pends);
        b->pends = NULL;
        b->cap_pend = 0;
        freed = true;
    }
    if (b->kcap > 4 * BATCH_KEEP_OPS) {
        free(b->kent);
        free(b->kgen);
        b->kent = b->kgen = NULL;
        b->kcap = 0;
        b->lk_key = NULL; /* its slot was in the freed table */
        freed = true;
    }
    if (freed) {
        util_give_back_memory();
    }
}

static int bucket(uint64_t v)
{
    int i = 0;
    while (v > 1 && i < HIST_BUCKETS - 1) {
        v >>= 1;
        i++;
    }
    return i;
}

void batch_record(batch_stats *st, uint32_t nops, uint64_t wait_us, uint64_t exec_ns)
{
    STAT_INC(st->batches);
    STAT_ADD(st->ops, nops);
    STAT_INC(st->size_hist[bucket(nops)]);
    STAT_INC(st->wait_hist[bucket(wait_us)]);
    STAT_ADD(st->wait_us_sum, wait_us);
    STAT_ADD(st->exec_ns, exec_ns);
}

uint64_t hist_quantile(const uint64_t *h, double q)
{
    uint64_t total = 0;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        total += h[i];
    }
    if (total == 0) {
        return 0;
    }
    uint64_t want = (uint64_t)(q * (double)total);
    if (want >= total) {
        want = total - 1;
    }
    uint64_t acc = 0;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        acc += h[i];
        if (acc > want) {
            return (i == 0) ? 1 : (1ull << i); /* lower bound of the bucket */
        }
    }
    return 1ull << (HIST_BUCKETS - 1);
}
