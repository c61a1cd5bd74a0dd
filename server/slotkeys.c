/*
 * slotkeys.c - the keys of each hash slot, in cluster mode: what CLUSTER
 * GETKEYSINSLOT and COUNTKEYSINSLOT read (resharding asks for every slot
 * it moves), as Redis 7 keeps its slot-to-keys lists. The engine's table
 * is ordered by hash, not by slot, and a walk of it costs its whole index.
 *
 * The index is a superset of the keys: every key an applied write op
 * created in database 0 is added (keyspace_batch_done; a key live before
 * the op is in already); keys the engine reports evicted or expired, and
 * DELs that found their key, are removed.
 * Paths that remove a key otherwise (a collection emptied, an EXPIRE in
 * the past) may leave a name behind: readers check each candidate against
 * the engine and drop the ones gone, so replies are exact and the stale
 * names do not pile up. One mutex; touched only in cluster mode.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_time.h"
#include "server_internal.h"

typedef struct sk_entry {
    struct sk_entry *hnext;        /* bucket chain */
    struct sk_entry *sprev, *snext; /* the slot's list */
    uint64_t h;
    uint32_t len;
    uint16_t slot;
    char key[];
} sk_entry;

static pthread_mutex_t sk_mu = PTHREAD_MUTEX_INITIALIZER;
static sk_entry **buckets;
static size_t nbuckets, nentries;
static sk_entry *slot_head[CLUSTER_SLOTS];
static long long slot_n[CLUSTER_SLOTS];

static uint64_t hash(const char *k, uint32_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (uint32_t i = 0; i < len; i++) {
        h = (h ^ (uint8_t)k[i]) * 1099511628211ULL;
    }
    return h;
}

static sk_entry **find(const char *k, uint32_t len, uint64_t h)
{
    if (nbuckets == 0) {
        return NULL;
    }
    sk_entry **pp = &buckets[h & (nbuckets - 1)];
    while (*pp && !((*pp)->h == h && (*pp)->len == len && memcmp((*pp)->key, k, len) == 0)) {
        pp = &(*pp)->hnext;
    }
    return pp;
}

static void grow(void)
{
    size_t nb = nbuckets ? nbuckets * 2 : 1024;
    sk_entry **nbk = xcalloc(nb, sizeof(*nbk));
    for (size_t i = 0; i < nbuckets; i++) {
        for (sk_entry *e = buckets[i], *next; e; e = next) {
            next = e->hnext;
            e->hnext = nbk[e->h & (nb - 1)];
            nbk[e->h & (nb - 1)] = e;
        }
    }
    free(buckets);
    buckets = nbk;
    nbuckets = nb;
}

static void add_locked(const char *k, uint32_t len)
{
    uint64_t h = hash(k, len);
    sk_entry **pp = find(k, len, h);
    if (pp != NULL && *pp != NULL) {
        return;
    }
    if (nentries >= nbuckets) {
        grow();
        pp = find(k, len, h);
    }
    sk_entry *e = xmalloc(sizeof(*e) + len);
    e->h = h;
    e->len = len;
    e->slot = (uint16_t)cluster_keyslot(k, len);
    memcpy(e->key, k, len);
    e->hnext = NULL;
    *pp = e;
    e->sprev = NULL;
    e->snext = slot_head[e->slot];
    if (e->snext) {
        e->snext->sprev = e;
    }
    slot_head[e->slot] = e;
    slot_n[e->slot]++;
    nentries++;
}

static void del_locked(const char *k, uint32_t len)
{
    sk_entry **pp = find(k, len, hash(k, len));
    if (pp == NULL || *pp == NULL) {
        return;
    }
    sk_entry *e = *pp;
    *pp = e->hnext;
    if (e->sprev) {
        e->sprev->snext = e->snext;
    } else {
        slot_head[e->slot] = e->snext;
    }
    if (e->snext) {
        e->snext->sprev = e->sprev;
    }
    slot_n[e->slot]--;
    nentries--;
    free(e);
}

static bool op_writes(const cudis_op *op)
{
    switch (op->code) {
    case CUDIS_OP_GET:
    case CUDIS_OP_EXISTS:
    case CUDIS_OP_TTL:
    case CUDIS_OP_HGET:
    case CUDIS_OP_HLEN:
    case CUDIS_OP_ZRANGE:
    case CUDIS_OP_DEL:
        return false;
    default:
        return true;
    }
}

void slotkeys_batch(const cudis_batch *cb)
{
    uint8_t db0 = db_phys(0);
    pthread_mutex_lock(&sk_mu);
    /* what the engine removed first: a key expired and written anew by an
     * op of the same batch must stay (a name left over is harmless, a key
     * missing from the index is not) */
    if (cb->ev != NULL) {
        uint32_t n = cb->ev->len < cb->ev->cap ? cb->ev->len : cb->ev->cap;
        for (uint32_t i = 0; i < n; i++) {
            const cudis_event *e = &cb->ev->recs[i];
            if (e->kind != 0 && e->db == db0) {
                del_locked((const char *)cb->ev->keys + e->key_off, e->key_len);
            }
        }
    }
    for (uint32_t i = 0; i < cb->n_ops; i++) {
        const cudis_op *op = &cb->ops[i];
        const cudis_result *r = &cb->res[i];
        if (op->db != db0 || r->status != CUDIS_OK) {
            continue;
        }
        const char *key = (const char *)cb->in + op->key_off;
        if (op->code == CUDIS_OP_DEL) {
            if (r->flags & CUDIS_R_FOUND) {
                del_locked(key, op->key_len);
            }
        } else if ((r->flags & (CUDIS_R_DONE | CUDIS_R_FOUND)) == CUDIS_R_DONE && op_writes(op)) {
            add_locked(key, op->key_len); /* a key the op created (a live one is in already) */
        }
    }
    pthread_mutex_unlock(&sk_mu);
}

void slotkeys_events(const cudis_evbuf *ev)
{
    uint8_t db0 = db_phys(0);
    uint32_t n = ev->len < ev->cap ? ev->len : ev->cap;
    pthread_mutex_lock(&sk_mu);
    for (uint32_t i = 0; i < n; i++) {
        const cudis_event *e = &ev->recs[i];
        if (e->kind != 0 && e->db == db0) {
            del_locked((const char *)ev->keys + e->key_off, e->key_len);
        }
    }
    pthread_mutex_unlock(&sk_mu);
}

void slotkeys_clear(void)
{
    pthread_mutex_lock(&sk_mu);
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        while (slot_head[s] != NULL) {
            sk_entry *e = slot_head[s];
            del_locked(e->key, e->len);
        }
    }
    free(buckets);
    buckets = NULL;
    nbuckets = 0;
    pthread_mutex_unlock(&sk_mu);
}

/* Up to max of the slot's keys that exist (max < 0: all), checked with
 * the engine (the caller holds it: CMD_EXCL); names gone are dropped.
 * Returns how many; their RESP bulks go to out when it is not NULL. */
long long slotkeys_get(conn *c, int slot, long long max, sbuf *out)
{
    long long found = 0;
    loop *lp = c->lp;
    batcher *b = &lp->b;
    uint8_t saved_db = b->db;
    b->db = db_phys(0);
    sk_entry *from = NULL; /* where the next round starts */
    bool first = true;
    while (max < 0 || found < max) {
        /* a round: copies of the next candidates (the engine may not run
         * with the index locked: its batch feeds the index) */
        sbuf names = {0};
        uint32_t *lens = NULL;
        int n = 0;
        pthread_mutex_lock(&sk_mu);
        sk_entry *e = first ? slot_head[slot] : from;
        int want = max < 0 ? 4096 : (int)((max - found) < 4096 ? (max - found) : 4096);
        for (; e != NULL && n < want; e = e->snext) {
            lens = xrealloc(lens, sizeof(*lens) * (size_t)(n + 1));
            lens[n++] = e->len;
            sbuf_add(&names, e->key, e->len);
        }
        from = e;
        /* keep a copy of the resume point's key: it may go meanwhile */
        char *resume = NULL;
        uint32_t rlen = 0;
        if (from != NULL) {
            rlen = from->len;
            resume = xmalloc(rlen ? rlen : 1);
            memcpy(resume, from->key, rlen);
        }
        pthread_mutex_unlock(&sk_mu);
        first = false;
        size_t off = 0;
        for (int k = 0; k < n; k++) {
            batch_add_op(b, CUDIS_OP_EXISTS, CUDIS_F_NOSTATS, names.p + off, lens[k], NULL, 0, 0,
                         0, false);
            off += lens[k];
        }
        if (n > 0) {
            batch_exec(b, srv.eng, cudis_now_ms());
        }
        off = 0;
        pthread_mutex_lock(&sk_mu);
        for (int k = 0; k < n; k++) {
            if (b->res[k].flags & CUDIS_R_FOUND) {
                if (out != NULL) {
                    resp_bulk(out, names.p + off, lens[k]);
                }
                found++;
            } else {
                del_locked(names.p + off, lens[k]);
            }
            off += lens[k];
        }
        if (resume != NULL) {
            sk_entry **pp = find(resume, rlen, hash(resume, rlen));
            from = pp != NULL ? *pp : NULL;
        }
        pthread_mutex_unlock(&sk_mu);
        batch_reset(b);
        free(resume);
        free(lens);
        sbuf_free(&names);
        if (from == NULL) {
            break;
        }
    }
    b->db = saved_db;
    return found;
}

void slotkeys_drop_slot(loop *lp, int slot)
{
    bool locked = excl_begin(lp);
    batcher *b = &lp->b;
    uint8_t saved_db = b->db;
    b->db = db_phys(0);
    for (;;) {
        sbuf names = {0};
        uint32_t lens[1024];
        int n = 0;
        pthread_mutex_lock(&sk_mu);
        for (sk_entry *e = slot_head[slot]; e != NULL && n < 1024; e = e->snext) {
            lens[n++] = e->len;
            sbuf_add(&names, e->key, e->len);
        }
        pthread_mutex_unlock(&sk_mu);
        size_t off = 0;
        for (int k = 0; k < n; k++) {
            batch_add_op(b, CUDIS_OP_DEL, 0, names.p + off, lens[k], NULL, 0, 0, 0, true);
            off += lens[k];
        }
        if (n > 0) {
            batch_exec(b, srv.eng, cudis_now_ms()); /* DELs found: out of the index */
            batch_reset(b);
        }
        /* names the DELs did not find (gone already) leave the index too */
        pthread_mutex_lock(&sk_mu);
        off = 0;
        for (int k = 0; k < n; k++) {
            del_locked(names.p + off, lens[k]);
            off += lens[k];
        }
        pthread_mutex_unlock(&sk_mu);
        sbuf_free(&names);
        if (n < 1024) {
            break;
        }
    }
    b->db = saved_db;
    excl_end(lp, locked);
}

bool slotkeys_any(int slot)
{
    pthread_mutex_lock(&sk_mu);
    bool any = slot_head[slot] != NULL;
    pthread_mutex_unlock(&sk_mu);
    return any;
}

uint64_t slotkeys_names(void)
{
    pthread_mutex_lock(&sk_mu);
    uint64_t n = nentries;
    pthread_mutex_unlock(&sk_mu);
    return n;
}
