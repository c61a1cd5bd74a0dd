/*
 * watch.c - WATCHed keys (optimistic locking for MULTI/EXEC). One registry
 * for every loop: a hash table of (key, watching connection) nodes under a
 * mutex, looked at only while some key is watched. Every op a batch
 * applied (CUDIS_R_DONE: written, deleted, expiry changed) marks the
 * connections watching its key dirty, whoever ran it, as Redis's
 * signalModifiedKey does. What happens inside the engine (expiry,
 * eviction, FLUSHALL, a failover to an empty store) is seen at EXEC: each
 * watched key is read again and a key that was live at WATCH and is not
 * now fails the transaction, one already stale at WATCH does not.
 */
#include <stdlib.h>
#include <string.h>

#include "cudis_hd.h"
#include "server_internal.h"

#define WSEED 0x2545f4914f6cdd1dull

struct watch_node {
    watch_node *next, *prev; /* the bucket's chain */
    conn *c;
    uint64_t hash;
    uint32_t len;
    uint8_t db; /* the engine's database (SWAPDB moves it with the SELECTed one) */
    char key[];
};

static struct {
    pthread_mutex_t mu;
    watch_node **tab;
    size_t cap; /* a power of two, or 0 */
    size_t n;
} reg = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Atomic size_t nwatched; /* reg.n, read without the lock */

bool watch_active(void)
{
    return atomic_load_explicit(&nwatched, memory_order_relaxed) > 0;
}

static uint64_t key_hash(const void *key, uint32_t len)
{
    return cudis_hash(key, len, WSEED);
}

static void reg_link(watch_node *n)
{
    watch_node **head = &reg.tab[n->hash & (reg.cap - 1)];
    n->prev = NULL;
    n->next = *head;
    if (*head != NULL) {
        (*head)->prev = n;
    }
    *head = n;
}

static void reg_grow(void)
{
    size_t ocap = reg.cap;
    watch_node **old = reg.tab;
    reg.cap = ocap ? ocap * 2 : 64;
    reg.tab = xcalloc(reg.cap, sizeof(*reg.tab));
    for (size_t i = 0; i < ocap; i++) {
        for (watch_node *n = old[i], *next; n != NULL; n = next) {
            next = n->next;
            reg_link(n);
        }
    }
    free(old);
}

static bool watching(const conn *c, uint8_t db, const char *key, uint32_t len)
{
    for (int i = 0; i < c->nwatched; i++) {
        const watch_node *n = c->watched[i].node;
        if (n->db == db && n->len == len && memcmp(n->key, key, len) == 0) {
            return true;
        }
    }
    return false;
}

void watch_keys(conn *c, int nkeys, char **keys, uint32_t *lens)
{
    batcher *b = &c->lp->b;
    int *fresh = xmalloc(sizeof(int) * (size_t)(nkeys > 0 ? nkeys : 1));
    int nf = 0;
    for (int i = 0; i < nkeys; i++) {
        bool dup = watching(c, b->db, keys[i], lens[i]);
        for (int j = 0; j < nf && !dup; j++) {
            dup = lens[fresh[j]] == lens[i] && memcmp(keys[fresh[j]], keys[i], lens[i]) == 0;
        }
        if (!dup) {
            fresh[nf++] = i;
            batch_add_op(b, CUDIS_OP_EXISTS, 0, keys[i], lens[i], NULL, 0, 0, 0, false);
        }
    }
    run_alone(c);
    pthread_mutex_lock(&reg.mu);
    for (int k = 0; k < nf; k++) {
        int i = fresh[k];
        if ((reg.n + 1) * 2 > reg.cap) {
            reg_grow();
        }
        watch_node *n = xmalloc(sizeof(*n) + lens[i]);
        n->c = c;
        n->hash = key_hash(keys[i], lens[i]);
        n->len = lens[i];
        n->db = b->db;
        memcpy(n->key, keys[i], lens[i]);
        reg_link(n);
        reg.n++;
        if (c->nwatched == c->cap_watched) {
            c->cap_watched = c->cap_watched ? c->cap_watched * 2 : 4;
            c->watched = xrealloc(c->watched, (size_t)c->cap_watched * sizeof(*c->watched));
        }
        /* an engine failure reads as absent: the key cannot be relied on */
        const cudis_result *r = &b->res[k];
        c->watched[c->nwatched++] =
            (watched_key){.node = n, .found = r->status == CUDIS_OK && (r->flags & CUDIS_R_FOUND)};
    }
    atomic_store_explicit(&nwatched, reg.n, memory_order_relaxed);
    pthread_mutex_unlock(&reg.mu);
    batch_reset(b);
    free(fresh);
}

void watch_clear(conn *c)
{
    if (c->nwatched > 0) {
        pthread_mutex_lock(&reg.mu);
        for (int i = 0; i < c->nwatched; i++) {
            watch_node *n = c->watched[i].node;
            if (n->prev != NULL) {
                n->prev->next = n->next;
            } else {
                reg.tab[n->hash & (reg.cap - 1)] = n->next;
            }
            if (n->next != NULL) {
                n->next->prev = n->prev;
            }
            free(n);
            reg.n--;
        }
        atomic_store_explicit(&nwatched, reg.n, memory_order_relaxed);
        pthread_mutex_unlock(&reg.mu);
    }
    free(c->watched);
    c->watched = NULL;
    c->nwatched = c->cap_watched = 0;
    atomic_store(&c->watch_dirty, false);
}

void watch_touch_batch(const cudis_batch *b)
{
    pthread_mutex_lock(&reg.mu);
    if (reg.n > 0) {
        for (uint32_t i = 0; i < b->n_ops; i++) {
            if (!(b->res[i].flags & CUDIS_R_DONE)) {
                continue;
            }
            const cudis_op *op = &b->ops[i];
            const uint8_t *key = b->in + op->key_off;
            uint64_t h = key_hash(key, op->key_len);
            for (watch_node *n = reg.tab[h & (reg.cap - 1)]; n != NULL; n = n->next) {
                if (n->hash == h && n->db == op->db && n->len == op->key_len &&
                    memcmp(n->key, key, n->len) == 0) {
                    atomic_store(&n->c->watch_dirty, true);
                }
            }
        }
    }
    pthread_mutex_unlock(&reg.mu);
}

bool watch_changed(conn *c)
{
    if (atomic_load(&c->watch_dirty)) {
        return true;
    }
    if (c->nwatched == 0) {
        return false;
    }
    batcher *b = &c->lp->b;
    uint8_t db = b->db;
    for (int i = 0; i < c->nwatched; i++) {
        const watch_node *n = c->watched[i].node;
        b->db = n->db;
        batch_add_op(b, CUDIS_OP_EXISTS, 0, n->key, n->len, NULL, 0, 0, 0, false);
    }
    b->db = db;
    run_alone(c);
    bool changed = false;
    for (int i = 0; i < c->nwatched && !changed; i++) {
        const cudis_result *r = &b->res[i];
        bool found = r->status == CUDIS_OK && (r->flags & CUDIS_R_FOUND);
        changed = c->watched[i].found && !found;
    }
    batch_reset(b);
    return changed || atomic_load(&c->watch_dirty);
}

void watch_swapdb(conn *c, uint8_t x, uint8_t y)
{
    if (!watch_active()) {
        return;
    }
    /* the watched keys of either database (copied: the registry lock is
     * not held while the engine runs, batch_after takes it) */
    typedef struct {
        char *key;
        uint32_t len;
        bool there;
    } wk;
    wk *keys = NULL;
    size_t n = 0;
    pthread_mutex_lock(&reg.mu);
    for (size_t i = 0; i < reg.cap; i++) {
        for (watch_node *w = reg.tab[i]; w != NULL; w = w->next) {
            if (w->db == x || w->db == y) {
                keys = xrealloc(keys, (n + 1) * sizeof(*keys));
                keys[n].key = xmalloc(w->len ? w->len : 1);
                memcpy(keys[n].key, w->key, w->len);
                keys[n++].len = w->len;
            }
        }
    }
    pthread_mutex_unlock(&reg.mu);
    if (n == 0) {
        return;
    }
    /* a watched key that exists in either database is touched (Redis's
     * touchAllWatchedKeysInDb both ways) */
    batcher *b = &c->lp->b;
    uint8_t db = b->db;
    for (size_t k = 0; k < n; k++) {
        b->db = x;
        batch_add_op(b, CUDIS_OP_EXISTS, 0, keys[k].key, keys[k].len, NULL, 0, 0, 0, false);
        b->db = y;
        batch_add_op(b, CUDIS_OP_EXISTS, 0, keys[k].key, keys[k].len, NULL, 0, 0, 0, false);
    }
    b->db = db;
    run_alone(c);
    for (size_t k = 0; k < n; k++) {
        keys[k].there = ((b->res[2 * k].flags | b->res[2 * k + 1].flags) & CUDIS_R_FOUND) != 0;
    }
    batch_reset(b);
    /* then every watch follows its SELECTed database to the other one */
    pthread_mutex_lock(&reg.mu);
    for (size_t i = 0; i < reg.cap; i++) {
        for (watch_node *w = reg.tab[i]; w != NULL; w = w->next) {
            if (w->db != x && w->db != y) {
                continue;
            }
            for (size_t k = 0; k < n; k++) {
                if (keys[k].there && keys[k].len == w->len &&
                    memcmp(keys[k].key, w->key, w->len) == 0) {
                    atomic_store(&w->c->watch_dirty, true);
                    break;
                }
            }
            w->db = w->db == x ? y : x;
        }
    }
    pthread_mutex_unlock(&reg.mu);
    for (size_t k = 0; k < n; k++) {
        free(keys[k].key);
    }
    free(keys);
}
