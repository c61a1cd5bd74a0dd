/*
 * engine_queue.c - asynchronous batches (engine_queue_* of engine.h).
 *
 * A queue belongs to one caller (an event loop) and keeps at most
 * ENGINE_QUEUE_MAX batches in flight, completed in submission order. Each
 * queue has one worker thread:
 *   - a store with submit/complete (the gpu: enqueue copies and kernel,
 *     return) is submitted to on the caller's thread, and the worker waits
 *     for the batches in order;
 *   - any other store's batches are executed by the worker (engine_execute:
 *     the worker pool and failover included) while the caller goes on.
 * When a batch is done the worker wakes the caller's event loop through an
 * eventfd. A device failure met by a submitted batch is handled as
 * engine_execute handles it: failover (under auto), then the batch runs
 * again on the fresh store, in order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine_internal.h"

typedef struct qentry {
    cudis_batch *batch;
    uint64_t out_len0;       /* batch->out_len at submit (a rerun starts there again) */
    engine_backend *backend; /* the store a native submit went to (NULL: run by the worker) */
    void *ticket;
    int rc;
} qentry;

struct engine_queue {
    engine *e;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    pthread_t worker;
    bool started, stop;
    qentry q[ENGINE_QUEUE_MAX];
    uint32_t head;  /* oldest entry */
    uint32_t count; /* entries submitted and not yet completed */
    uint32_t ndone; /* of those, the first ndone are finished (in order) */
    int fd;         /* eventfd: written once per finished batch */
};

/* The worker's part of one entry: wait for a native batch, or run it. */
static int run_entry(engine_queue *q, qentry *x)
{
    if (x->backend != NULL) {
        int rc = x->backend->ops->complete(x->backend->store, x->ticket);
        if (rc != CUDIS_E_DEVFAIL) {
            return rc;
        }
        /* the device died under this batch: engine_execute fails over and
         * runs it again (from the same place in its out buffer) */
        x->batch->out_len = x->out_len0;
        ev_mark_lost(x->batch->ev); /* even when another call failed over first */
    }
    return engine_execute(q->e, x->batch);
}

static void *worker(void *arg)
{
    engine_queue *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->stop && q->ndone == q->count) {
            pthread_cond_wait(&q->work, &q->mu);
        }
        if (q->ndone == q->count) {
            break; /* stopping, nothing left */
        }
        qentry *x = &q->q[(q->head + q->ndone) % ENGINE_QUEUE_MAX];
        pthread_mutex_unlock(&q->mu);
        int rc = run_entry(q, x);
        pthread_mutex_lock(&q->mu);
        x->rc = rc;
        q->ndone++;
        uint64_t one = 1;
        ssize_t w = write(q->fd, &one, sizeof(one));
        (void)w; /* a full counter still wakes the loop */
        pthread_cond_broadcast(&q->done);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

engine_queue *engine_queue_create(engine *e)
{
    engine_queue *q = calloc(1, sizeof(*q));
    if (q == NULL) {
        return NULL;
    }
    q->e = e;
    q->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (q->fd < 0) {
        free(q);
        return NULL;
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->done, NULL);
    if (pthread_create(&q->worker, NULL, worker, q) != 0) {
        engine_queue_destroy(q);
        return NULL;
    }
    q->started = true;
    return q;
}

void engine_queue_destroy(engine_queue *q)
{
    if (q == NULL) {
        return;
    }
    while (engine_queue_depth(q) > 0) {
        (void)engine_queue_complete(q, NULL);
    }
    if (q->started) {
        pthread_mutex_lock(&q->mu);
        q->stop = true;
        pthread_cond_broadcast(&q->work);
        pthread_mutex_unlock(&q->mu);
        pthread_join(q->worker, NULL);
    }
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->done);
    pthread_mutex_destroy(&q->mu);
    close(q->fd);
    free(q);
}

int engine_queue_submit(engine_queue *q, cudis_batch *b)
{
    pthread_mutex_lock(&q->mu);
    bool full = q->count == ENGINE_QUEUE_MAX;
    /* a batch the worker runs itself may not have started: a later batch
     * enqueued on the device now could run before it */
    bool behind_worker = false;
    for (uint32_t i = q->ndone; i < q->count; i++) {
        behind_worker = behind_worker || q->q[(q->head + i) % ENGINE_QUEUE_MAX].backend == NULL;
    }
    pthread_mutex_unlock(&q->mu);
    if (full) {
        return CUDIS_E_BUSY;
    }
    qentry x;
    memset(&x, 0, sizeof(x));
    x.batch = b;
    x.out_len0 = b->out_len;
    engine_backend *be = __atomic_load_n(&q->e->cur, __ATOMIC_ACQUIRE);
    if (b->n_ops > 0 && !behind_worker && be->ops->submit != NULL && be->ops->complete != NULL &&
        be->ops->submit(be->store, b, &x.ticket) == CUDIS_OK) {
        x.backend = be; /* enqueued on the device; the worker waits for it */
    }
    pthread_mutex_lock(&q->mu);
    q->q[(q->head + q->count) % ENGINE_QUEUE_MAX] = x;
    q->count++;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    return CUDIS_OK;
}

int engine_queue_complete(engine_queue *q, cudis_batch **b)
{
    pthread_mutex_lock(&q->mu);
    if (q->count == 0) {
        pthread_mutex_unlock(&q->mu);
        return CUDIS_E_INVAL;
    }
    while (q->ndone == 0) {
        pthread_cond_wait(&q->done, &q->mu);
    }
    qentry *x = &q->q[q->head];
    int rc = x->rc;
    if (b != NULL) {
        *b = x->batch;
    }
    memset(x, 0, sizeof(*x));
    q->head = (q->head + 1) % ENGINE_QUEUE_MAX;
    q->count--;
    q->ndone--;
    pthread_mutex_unlock(&q->mu);
    return rc;
}

bool engine_queue_ready(engine_queue *q)
{
    pthread_mutex_lock(&q->mu);
    bool r = q->ndone > 0;
    pthread_mutex_unlock(&q->mu);
    return r;
}

uint32_t engine_queue_depth(engine_queue *q)
{
    pthread_mutex_lock(&q->mu);
    uint32_t n = q->count;
    pthread_mutex_unlock(&q->mu);
    return n;
}

int engine_queue_fd(engine_queue *q)
{
    return q->fd;
}

void engine_queue_clear_fd(engine_queue *q)
{
    uint64_t v;
    while (read(q->fd, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
    }
}
