/*
 * blocking.c - clients blocked on keys (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
 * BLMPOP), as Redis's blocked.c: a client that found all its keys empty
 * waits in one queue per key, oldest first, until a write to one of them
 * lets it take something, its timeout ends (clients.c) or CLIENT UNBLOCK.
 *
 * One registry for every loop: a hash table of (database, key) -> queue
 * under a mutex, looked at only while some client waits. Every op a batch
 * applied (CUDIS_R_DONE) on a key with a queue makes that key ready, as
 * Redis's signalKeyAsReady, and flags the loop that ran the batch: at its
 * next safe point (before its next command is dispatched, after a command
 * that ran alone, at the end of a round; Redis: after each command) it
 * runs blocking_serve, which tries the command of the client at the head
 * of each ready key's queue on that key, alone like LMOVE, under the
 * engine lock. Served, the client leaves every queue and the key stays
 * ready for the next in line; nothing to take (or another type), the key
 * is not ready any more. So a writer's next command sees the waiters
 * served, on whichever loop they are, and clients are served in the order
 * they blocked.
 *
 * A waiter of another loop is tried for it: the try "claims" its state
 * (under the mutex), runs with a stand-in connection of the serving loop
 * (the waiter's protocol and database), and the answer goes to the
 * waiter's loop as a message (blocking_take_done), which writes it and
 * lets the client read again. While claimed, or answered and not yet
 * delivered, the waiter's own loop neither times it out nor answers it;
 * if the waiter's connection goes meanwhile, the state is left to the try
 * to free (what it took went to a client that hung up, as in Redis when
 * the reply's write fails).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_hd.h"
#include "cudis_time.h"
#include "server_internal.h"

#define BSEED 0x9e3779b97f4a7c15ull

typedef struct bkey bkey;

struct bwait {
    bwait *prev, *next; /* the key's queue, oldest first */
    bkey *k;
    conn *c; /* valid while queued: conn_free leaves the queues first */
    blk_state *s;
};

/* A waiter of another loop served: its answer, for its loop. */
typedef struct blk_done {
    struct blk_done *next;
    loop *owner;
    uint64_t id;
    blk_state *s;
    size_t len;
    char bytes[];
} blk_done;

struct bkey {
    bkey *hnext;         /* the hash bucket's chain */
    bkey *rprev, *rnext; /* the ready list, when ready */
    bwait *head, *tail;
    uint64_t hash;
    uint64_t mark; /* bumped by each write seen: a try that found nothing
                    * makes the key not ready only if none came since */
    bool ready;
    uint8_t db;
    uint32_t len;
    char key[];
};

static struct {
    pthread_mutex_t mu;
    bkey **tab;
    size_t cap; /* a power of two, or 0 */
    size_t n;
    bkey *rhead, *rtail; /* ready keys, in the order they became ready */
    blk_done *done;      /* answers not yet taken by their loops */
} reg = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Atomic size_t nwaiting; /* clients registered, read without the lock */
static _Atomic size_t ndone;    /* reg.done's messages, likewise */

bool blocking_active(void)
{
    return atomic_load_explicit(&nwaiting, memory_order_relaxed) > 0;
}

static uint64_t key_hash(uint8_t db, const void *key, uint32_t len)
{
    return cudis_hash(key, len, BSEED ^ db);
}

static bkey *reg_find(uint8_t db, const char *key, uint32_t len, uint64_t h)
{
    if (reg.cap == 0) {
        return NULL;
    }
    for (bkey *k = reg.tab[h & (reg.cap - 1)]; k != NULL; k = k->hnext) {
        if (k->hash == h && k->db == db && k->len == len && memcmp(k->key, key, len) == 0) {
            return k;
        }
    }
    return NULL;
}

static void reg_grow(void)
{
    size_t cap = reg.cap ? reg.cap * 2 : 64;
    bkey **tab = xcalloc(cap, sizeof(*tab));
    for (size_t i = 0; i < reg.cap; i++) {
        for (bkey *k = reg.tab[i], *nx; k != NULL; k = nx) {
            nx = k->hnext;
            k->hnext = tab[k->hash & (cap - 1)];
            tab[k->hash & (cap - 1)] = k;
        }
    }
    free(reg.tab);
    reg.tab = tab;
    reg.cap = cap;
}

static void ready_unlink(bkey *k)
{
    if (!k->ready) {
        return;
    }
    if (k->rprev) {
        k->rprev->rnext = k->rnext;
    } else {
        reg.rhead = k->rnext;
    }
    if (k->rnext) {
        k->rnext->rprev = k->rprev;
    } else {
        reg.rtail = k->rprev;
    }
    k->rprev = k->rnext = NULL;
    k->ready = false;
}

static void ready_link(bkey *k)
{
    if (k->ready) {
        return;
    }
    k->ready = true;
    k->rnext = NULL;
    k->rprev = reg.rtail;
    if (reg.rtail) {
        reg.rtail->rnext = k;
    } else {
        reg.rhead = k;
    }
    reg.rtail = k;
}

/* A key whose queue emptied leaves the registry. */
static void key_drop(bkey *k)
{
    ready_unlink(k);
    bkey **pp = &reg.tab[k->hash & (reg.cap - 1)];
    while (*pp != k) {
        pp = &(*pp)->hnext;
    }
    *pp = k->hnext;
    reg.n--;
    free(k);
}

/* ------------------------------------------------------------------------
 * Blocking and leaving
 * ---------------------------------------------------------------------- */

blk_state *blocking_state(int argc, char **argv, uint32_t *lens, int first_key, int nkeys)
{
    size_t bytes = 0;
    for (int i = 0; i < argc; i++) {
        bytes += lens[i] + 1;
    }
    blk_state *s = xcalloc(1, sizeof(*s) + (size_t)argc * (sizeof(char *) + sizeof(uint32_t)) +
                                  (size_t)nkeys * sizeof(bwait) + bytes);
    char *p = (char *)(s + 1);
    s->argv = (char **)p;
    p += (size_t)argc * sizeof(char *);
    s->w = (bwait *)p;
    p += (size_t)nkeys * sizeof(bwait);
    s->lens = (uint32_t *)p;
    p += (size_t)argc * sizeof(uint32_t);
    for (int i = 0; i < argc; i++) {
        s->argv[i] = p;
        s->lens[i] = lens[i];
        memcpy(p, argv[i], lens[i]);
        p[lens[i]] = '\0';
        p += lens[i] + 1;
    }
    s->argc = argc;
    s->first_key = first_key;
    s->nkeys = nkeys;
    return s;
}

void blocking_block(conn *c, blk_state *s, int64_t deadline_ms)
{
    s->db = db_phys(c->db);
    s->proto = c->proto;
    s->id = c->id;
    s->owner = c->lp;
    c->blk = s;
    pthread_mutex_lock(&reg.mu);
    for (int i = 0; i < s->nkeys; i++) {
        const char *key = s->argv[s->first_key + i];
        uint32_t len = s->lens[s->first_key + i];
        uint64_t h = key_hash(s->db, key, len);
        bkey *k = reg_find(s->db, key, len, h);
        bwait *w = &s->w[i];
        w->c = c;
        w->s = s;
        w->k = NULL;
        if (k != NULL && k->tail != NULL && k->tail->s == s) {
            continue; /* BLPOP k k: one place in the queue */
        }
        if (k == NULL) {
            if (reg.n + 1 > reg.cap / 2) {
                reg_grow();
            }
            k = xcalloc(1, sizeof(*k) + len + 1);
            k->hash = h;
            k->db = s->db;
            k->len = len;
            memcpy(k->key, key, len);
            k->hnext = reg.tab[h & (reg.cap - 1)];
            reg.tab[h & (reg.cap - 1)] = k;
            reg.n++;
        }
        w->k = k;
        w->next = NULL;
        w->prev = k->tail;
        if (k->tail) {
            k->tail->next = w;
        } else {
            k->head = w;
        }
        k->tail = w;
    }
    atomic_fetch_add(&nwaiting, 1);
    pthread_mutex_unlock(&reg.mu);
    clients_block(c, deadline_ms);
}

/* s leaves its queues (reg.mu held; once). A ready key it headed gets a
 * new head to try: cur (the loop running this) is flagged to try it. */
static void leave_locked(blk_state *s, loop *cur)
{
    if (s->left) {
        return;
    }
    s->left = true;
    for (int i = 0; i < s->nkeys; i++) {
        bwait *w = &s->w[i];
        bkey *k = w->k;
        if (k == NULL) {
            continue;
        }
        bool was_head = k->head == w;
        if (w->prev) {
            w->prev->next = w->next;
        } else {
            k->head = w->next;
        }
        if (w->next) {
            w->next->prev = w->prev;
        } else {
            k->tail = w->prev;
        }
        w->k = NULL;
        if (k->head == NULL) {
            key_drop(k);
        } else if (was_head && k->ready && cur != NULL) {
            atomic_store(&cur->blk_ready, true);
        }
    }
    atomic_fetch_sub(&nwaiting, 1);
}

void blocking_forget(conn *c)
{
    if (c->blk == NULL) {
        return;
    }
    pthread_mutex_lock(&reg.mu);
    leave_locked(c->blk, c->lp);
    pthread_mutex_unlock(&reg.mu);
    free(c->blk);
    c->blk = NULL;
}

bool blocking_end(conn *c, bool freeing)
{
    blk_state *s = c->blk;
    if (s == NULL) {
        return true;
    }
    pthread_mutex_lock(&reg.mu);
    bool busy = s->claimed || s->served;
    if (busy && freeing) {
        if (s->claimed) {
            s->orphan = true; /* the try frees it */
            leave_locked(s, c->lp);
        } else {
            free(s); /* answered, out of the queues: its message finds no client */
        }
        c->blk = NULL;
    }
    pthread_mutex_unlock(&reg.mu);
    if (busy) {
        return false;
    }
    blocking_forget(c);
    return true;
}

void blocking_timeout_reply(conn *c, bool null_array)
{
    if (null_array) {
        resp_null_array(&c->out, c->proto);
    } else {
        resp_null(&c->out, c->proto);
    }
}

/* ------------------------------------------------------------------------
 * The blocking commands' common part
 * ---------------------------------------------------------------------- */

/* The blocking commands' timeout (seconds, a float, 0: none) as a
 * deadline; false with Redis 7.0's error replied (it also calls a timeout
 * too big for its milliseconds "negative"). */
bool blocking_timeout_arg(conn *c, const char *arg, uint32_t len, int64_t *deadline)
{
    long double t;
    if (!util_str2ld(arg, len, &t)) {
        conn_error(c, "ERR timeout is not a float or out of range");
        return false;
    }
    t = ceill(t * 1000.0L);
    if (!(t >= 0) || t >= 9.2e18L) {
        conn_error(c, "ERR timeout is negative");
        return false;
    }
    long long ms = (long long)t;
    int64_t now = cudis_now_ms();
    if (ms == 0) {
        *deadline = INT64_MAX;
    } else if (ms > INT64_MAX - 1 - now) {
        conn_error(c, "ERR timeout is out of range");
        return false;
    } else {
        *deadline = now + ms;
    }
    return true;
}

/* Try s on each key in order; block when all are empty (never inside EXEC
 * or a script: there the timeout's answer comes at once). Takes s. */
void blocking_try(conn *c, blk_state *s, int64_t deadline)
{
    for (int k = 0; k < s->nkeys; k++) {
        const char *key = s->argv[s->first_key + k];
        uint32_t klen = s->lens[s->first_key + k];
        int r = s->serve(c, s, key, klen);
        if (r == BLK_WRONGTYPE) {
            reply_engine_error(c, CUDIS_E_WRONGTYPE);
        }
        if (r != BLK_EMPTY) {
            free(s);
            return;
        }
    }
    if (c->in_exec || (c->flags & CONN_FAKE)) {
        blocking_timeout_reply(c, s->null_array);
        free(s);
        return;
    }
    blocking_block(c, s, deadline);
}

/* ------------------------------------------------------------------------
 * Keys made ready
 * ---------------------------------------------------------------------- */

void blocking_touch_batch(loop *from, const cudis_batch *cb)
{
    bool any = false;
    pthread_mutex_lock(&reg.mu);
    for (uint32_t i = 0; i < cb->n_ops && reg.n > 0; i++) {
        const cudis_result *r = &cb->res[i];
        if (r->status != CUDIS_OK || !(r->flags & CUDIS_R_DONE)) {
            continue;
        }
        const cudis_op *op = &cb->ops[i];
        const char *key = (const char *)cb->in + op->key_off;
        bkey *k = reg_find(op->db, key, op->key_len, key_hash(op->db, key, op->key_len));
        if (k != NULL) {
            k->mark++;
            ready_link(k);
            any = true;
        }
    }
    pthread_mutex_unlock(&reg.mu);
    if (any && from != NULL) {
        atomic_store(&from->blk_ready, true);
    }
}

void blocking_swapdb(loop *lp, uint8_t x, uint8_t y)
{
    if (!blocking_active()) {
        return;
    }
    /* the waiters follow the SELECTed database: their keys are now those
     * of the other engine database, each tried once (Redis's
     * scanDatabaseForReadyKeys after a swap) */
    pthread_mutex_lock(&reg.mu);
    bkey *moved = NULL;
    for (size_t i = 0; i < reg.cap; i++) {
        for (bkey **pp = &reg.tab[i]; *pp != NULL;) {
            bkey *k = *pp;
            if (k->db != x && k->db != y) {
                pp = &k->hnext;
                continue;
            }
            *pp = k->hnext;
            k->hnext = moved;
            moved = k;
        }
    }
    while (moved != NULL) {
        bkey *k = moved;
        moved = k->hnext;
        k->db = k->db == x ? y : x;
        k->hash = key_hash(k->db, k->key, k->len);
        k->hnext = reg.tab[k->hash & (reg.cap - 1)];
        reg.tab[k->hash & (reg.cap - 1)] = k;
        for (bwait *w = k->head; w != NULL; w = w->next) {
            w->s->db = k->db;
        }
        k->mark++;
        ready_link(k);
    }
    pthread_mutex_unlock(&reg.mu);
    atomic_store(&lp->blk_ready, true);
}

/* ------------------------------------------------------------------------
 * Serving
 * ---------------------------------------------------------------------- */

/* The first ready key whose head is not claimed (nor closing): its head
 * claimed, the key copied out with its mark. */
static bool next_ready(bwait *out, uint8_t *db, sbuf *key, uint64_t *mark)
{
    bool found = false;
    pthread_mutex_lock(&reg.mu);
    for (bkey *k = reg.rhead; k != NULL; k = k->rnext) {
        bwait *w = k->head;
        if (w->s->claimed || (atomic_load(&w->c->flags) & CONN_CLOSING)) {
            continue; /* another loop tries it; or its loop drops it and flags itself */
        }
        w->s->claimed = true;
        *out = *w;
        *db = k->db;
        key->len = 0;
        sbuf_add(key, k->key, k->len);
        *mark = k->mark;
        found = true;
        break;
    }
    pthread_mutex_unlock(&reg.mu);
    return found;
}

/* The try found nothing for s (reg.mu held): the key is not ready, unless
 * a write came since (mark) or s is not its head any more. */
static void not_ready_locked(const blk_state *s, uint8_t db, const sbuf *key, uint64_t mark)
{
    uint32_t len = (uint32_t)key->len;
    bkey *k = reg_find(db, key->p, len, key_hash(db, key->p, len));
    if (k != NULL && k->mark == mark && k->head->s == s) {
        ready_unlink(k);
    }
}

/* A stand-in for a waiter of another loop: the serving loop's, with the
 * waiter's protocol (answers render for it) and identity. */
static void stand_in(conn *f, loop *lp, const blk_state *s)
{
    memset(f, 0, sizeof(*f));
    f->lp = lp;
    f->proto = s->proto;
    f->authed = true;
    f->flags = CONN_FAKE;
    f->multi_len = -1;
    f->id = s->id;
}

void blocking_serve(loop *lp)
{
    if (lp->blk_serving || lp->running != NULL || lp->busy ||
        !atomic_exchange(&lp->blk_ready, false)) {
        return;
    }
    lp->blk_serving = true;
    sbuf key = {0};
    bwait w;
    uint8_t db;
    uint64_t mark;
    while (next_ready(&w, &db, &key, &mark)) {
        blk_state *s = w.s;
        bool local = s->owner == lp;
        conn fake;
        conn *t = w.c;
        if (!local) {
            stand_in(&fake, lp, s);
            t = &fake; /* w.c is not ours to touch */
        }
        bool locked = excl_begin(lp);
        lp->running = t;
        uint8_t bdb = lp->b.db;
        lp->b.db = db;
        size_t before = t->out.len;
        int r = s->serve(t, s, key.p, (uint32_t)key.len);
        lp->b.db = bdb;
        lp->running = NULL;
        excl_end(lp, locked);
        if (r != BLK_SERVED) {
            t->out.len = before; /* a wrong type is no answer: it waits on */
        }
        bool drop = false;
        loop *post = NULL; /* the waiter's loop, given an answer */
        pthread_mutex_lock(&reg.mu);
        s->claimed = false;
        if (s->orphan) {
            drop = true; /* out of the queues already */
        } else if (r == BLK_SERVED) {
            leave_locked(s, lp);
            if (!local) {
                s->served = true;
                size_t n = fake.out.len - before;
                blk_done *msg = xmalloc(sizeof(*msg) + n);
                post = s->owner;
                msg->owner = s->owner;
                msg->id = s->id;
                msg->s = s;
                msg->len = n;
                memcpy(msg->bytes, fake.out.p + before, n);
                msg->next = reg.done;
                reg.done = msg;
                atomic_fetch_add(&ndone, 1);
            }
        } else {
            not_ready_locked(s, db, &key, mark);
        }
        pthread_mutex_unlock(&reg.mu);
        if (!local) {
            sbuf_free(&fake.out);
        }
        if (drop) {
            free(s);
        } else if (post != NULL) {
            loop_wake(post);
        } else if (r == BLK_SERVED) {
            reply_in_order(w.c, before);
            clients_unblock_now(w.c);
            atomic_fetch_or(&w.c->flags, CONN_RESUME);
            lp->blk_resume++;
        }
    }
    sbuf_free(&key);
    lp->blk_serving = false;
}

bool blocking_resume(loop *lp)
{
    if (lp->blk_resume == 0) {
        return false;
    }
    lp->blk_resume = 0;
    for (conn *c = lp->clients; c != NULL; c = c->next) {
        if (!(atomic_fetch_and(&c->flags, ~(uint32_t)CONN_RESUME) & CONN_RESUME)) {
            continue;
        }
        if (!(c->flags & (CONN_CLOSING | CONN_BLOCKED))) {
            conn_unblocked(c);
        }
    }
    return true;
}

void blocking_take_done(loop *lp)
{
    if (atomic_load(&ndone) == 0) {
        return; /* a message posted is counted before its loop is woken */
    }
    blk_done *mine = NULL;
    pthread_mutex_lock(&reg.mu);
    for (blk_done **pp = &reg.done; *pp != NULL;) {
        blk_done *m = *pp;
        if (m->owner == lp) {
            atomic_fetch_sub(&ndone, 1);
            *pp = m->next;
            m->next = mine;
            mine = m;
        } else {
            pp = &m->next;
        }
    }
    pthread_mutex_unlock(&reg.mu);
    /* oldest first (each was pushed at the front) */
    blk_done *rev = NULL;
    while (mine != NULL) {
        blk_done *m = mine;
        mine = m->next;
        m->next = rev;
        rev = m;
    }
    while (rev != NULL) {
        blk_done *m = rev;
        rev = m->next;
        conn *c = lp->clients;
        while (c != NULL && c->id != m->id) {
            c = c->next;
        }
        if (c != NULL && c->blk == m->s) { /* else it went: conn_free freed the state */
            size_t before = c->out.len;
            if (!(c->flags & CONN_CLOSING)) {
                sbuf_add(&c->out, m->bytes, m->len);
            }
            clients_unblock_now(c);
            if (!(c->flags & CONN_CLOSING)) {
                reply_in_order(c, before);
                conn_unblocked(c);
            }
        }
        free(m);
    }
}
