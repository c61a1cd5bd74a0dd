/*
 * engine_pool.c - the worker pool that splits one batch over several
 * threads. The batch is cut into contiguous chunks, one per thread (the
 * caller runs the first); results land in place in batch->res. Since a
 * cudis_batch carries its own out_len, each chunk gets a private slice of the
 * out buffer; afterwards the slices are packed to the front and the ops that
 * ran out of their slice (CUDIS_E_OUTBUF: not applied) are re-run against
 * the space left (engine_outbuf.c), so the outcome is that of one thread
 * running the whole batch (ops in a batch may run in any order, cudis_op.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

/* Fewer ops than this per thread are not worth a hand-off. */
#define POOL_MIN_CHUNK 64u

struct engine_pool {
    pthread_mutex_t busy; /* held by the one caller whose batch the pool runs */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    uint32_t nthreads; /* workers + the caller */
    pthread_t *tids;
    uint32_t started;
    uint64_t gen;
    uint32_t pending;
    uint32_t active; /* chunks in the current job */
    bool stop;
    const engine_store_ops *ops;
    void *store;
    void *const *stores;   /* engine_pool_run: sub-batch k's store */
    cudis_batch *sub; /* nthreads sub-batches */
    cudis_batch *ext; /* engine_pool_run: the caller's sub-batches */
    int *rc;
};

typedef struct worker_arg {
    engine_pool *p;
    uint32_t k;
} worker_arg;

static void *pool_worker(void *argp)
{
    worker_arg *wa = argp;
    engine_pool *p = wa->p;
    uint32_t k = wa->k;
    free(wa);
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen && !p->stop) {
            pthread_cond_wait(&p->go, &p->mu);
        }
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = p->gen;
        bool mine = k < p->active;
        const engine_store_ops *ops = p->ops;
        void *store = p->stores != NULL ? p->stores[k] : p->store;
        cudis_batch *sub = p->ext != NULL ? &p->ext[k] : &p->sub[k];
        pthread_mutex_unlock(&p->mu);
        if (mine) {
            int rc = sub->n_ops ? ops->execute(store, sub) : CUDIS_OK;
            pthread_mutex_lock(&p->mu);
            p->rc[k] = rc;
            if (--p->pending == 0) {
                pthread_cond_signal(&p->done);
            }
            pthread_mutex_unlock(&p->mu);
        }
    }
}

engine_pool *engine_pool_create(uint32_t nthreads)
{
    if (nthreads < 2) {
        return NULL;
    }
    engine_pool *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return NULL;
    }
    p->nthreads = nthreads;
    p->tids = calloc(nthreads, sizeof(pthread_t));
    p->sub = calloc(nthreads, sizeof(cudis_batch));
    p->rc = calloc(nthreads, sizeof(int));
    if (p->tids == NULL || p->sub == NULL || p->rc == NULL) {
        free(p->tids), free(p->sub), free(p->rc), free(p);
        return NULL;
    }
    pthread_mutex_init(&p->busy, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    for (uint32_t k = 1; k < nthreads; k++) {
        worker_arg *wa = malloc(sizeof(*wa));
        if (wa == NULL) {
            break;
        }
        wa->p = p;
        wa->k = k;
        if (pthread_create(&p->tids[k], NULL, pool_worker, wa) != 0) {
            free(wa);
            break;
        }
        p->started = k;
    }
    if (p->started + 1 < nthreads) {
        engine_pool_destroy(p);
        return NULL;
    }
    return p;
}

void engine_pool_destroy(engine_pool *p)
{
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (uint32_t k = 1; k <= p->started; k++) {
        pthread_join(p->tids[k], NULL);
    }
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->busy);
    free(p->tids);
    free(p->sub);
    free(p->rc);
    free(p);
}

static int exec_store(void *ctx, cudis_batch *b)
{
    engine_pool *p = ctx;
    return p->ops->execute(p->store, b);
}

/* Pack the chunks' slices to the front, then re-run the OUTBUF ops into
 * the room left (engine_outbuf.c). */
static int pool_finish(engine_pool *p, cudis_batch *batch, uint32_t n, uint64_t base)
{
    uint64_t pos = base;
    for (uint32_t k = 0; k < n; k++) {
        cudis_batch *s = &p->sub[k];
        uint64_t used = outbuf_used(s);
        if (used > 0 && batch->out + pos != s->out) {
            memmove(batch->out + pos, s->out, used);
        }
        for (uint32_t i = 0; i < s->n_ops; i++) {
            if (s->res[i].status == CUDIS_OK && (s->res[i].flags & CUDIS_R_VALUE)) {
                s->res[i].val_off += pos;
            }
        }
        pos += used;
    }
    return outbuf_rerun(exec_store, p, batch, pos, false, NULL);
}

int engine_pool_execute(engine_pool *p, const engine_store_ops *ops, void *store,
                        cudis_batch *batch)
{
    uint32_t n = batch->n_ops / POOL_MIN_CHUNK;
    if (n > p->nthreads) {
        n = p->nthreads;
    }
    if (n < 2 || pthread_mutex_trylock(&p->busy) != 0) {
        return ops->execute(store, batch);
    }
    uint64_t base = batch->out_len;
    uint64_t avail = batch->out_cap > base ? batch->out_cap - base : 0;
    uint64_t slice = avail / n;
    uint32_t per = batch->n_ops / n, extra = batch->n_ops % n, start = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t cnt = per + (k < extra ? 1 : 0);
        cudis_batch *s = &p->sub[k];
        *s = *batch;
        s->ops = batch->ops + start;
        s->res = batch->res + start;
        s->n_ops = cnt;
        s->out = batch->out ? batch->out + base + k * slice : NULL;
        s->out_cap = (k == n - 1) ? avail - k * slice : slice;
        s->out_len = 0;
        p->rc[k] = CUDIS_OK;
        start += cnt;
    }
    pthread_mutex_lock(&p->mu);
    p->ops = ops;
    p->store = store;
    p->stores = NULL;
    p->ext = NULL;
    p->active = n;
    p->pending = n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);

    p->rc[0] = ops->execute(store, &p->sub[0]);

    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) {
        pthread_cond_wait(&p->done, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);

    int rc = CUDIS_OK;
    for (uint32_t k = 0; k < n; k++) {
        if (p->rc[k] < 0) {
            rc = p->rc[k];
        }
    }
    if (rc == CUDIS_OK) {
        rc = pool_finish(p, batch, n, base);
    }
    pthread_mutex_unlock(&p->busy);
    return rc;
}

void engine_pool_run(engine_pool *p, const engine_store_ops *ops, void *const *stores,
                     cudis_batch *subs, uint32_t n, int *rcs)
{
    if (p == NULL || n < 2 || n > p->nthreads || pthread_mutex_trylock(&p->busy) != 0) {
        for (uint32_t k = 0; k < n; k++) {
            rcs[k] = subs[k].n_ops ? ops->execute(stores[k], &subs[k]) : CUDIS_OK;
        }
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->ops = ops;
    p->stores = stores;
    p->ext = subs;
    p->active = n;
    p->pending = n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);

    p->rc[0] = subs[0].n_ops ? ops->execute(stores[0], &subs[0]) : CUDIS_OK;

    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) {
        pthread_cond_wait(&p->done, &p->mu);
    }
    for (uint32_t k = 0; k < n; k++) {
        rcs[k] = p->rc[k];
    }
    p->stores = NULL;
    p->ext = NULL;
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->busy);
}
