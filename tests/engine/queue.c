/*
 * queue.c - asynchronous batches (engine_queue_* of engine.h): two batches
 * in flight give the same outcome as engine_execute one batch after the
 * other, the queue's fd wakes a poller, a full queue says so, and a device
 * failure under a batch in flight fails over and still answers it. Label
 * "stress" (the queue has a worker thread): also run under TSan, where it
 * is a plain program (tests/cuckoo/plain_test.h).
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CONF_NO_CRITERION
#include "plain_test.h"
#else
#include <criterion/criterion.h>
#endif

#include "ccht_store.h"
#include "engine.h"
#include "gk_checks.h"

#define NB 200  /* batches */
#define NOPS 64 /* ops per batch (distinct keys) */

typedef struct qbatch {
    cudis_op ops[NOPS];
    cudis_result res[NOPS];
    uint8_t in[NOPS * 64];
    uint8_t out[NOPS * 64];
    cudis_batch b;
} qbatch;

static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 17;
}

/* Batch i of a stream over 200 keys: SET, GET, INCRBY, APPEND, DEL, GET
 * with DEL; keys distinct within a batch. */
static void make_batch(qbatch *q, uint64_t *rs)
{
    memset(q, 0, sizeof(*q));
    uint8_t used[200] = {0};
    uint64_t at = 0;
    uint32_t n = 0;
    while (n < NOPS) {
        uint32_t k = (uint32_t)(rnd(rs) % 200);
        if (used[k]) {
            continue;
        }
        used[k] = 1;
        cudis_op *op = &q->ops[n++];
        int kl = snprintf((char *)q->in + at, 16, "k%u", k);
        op->key_off = at;
        op->key_len = (uint32_t)kl;
        at += (uint64_t)kl;
        uint32_t c = (uint32_t)(rnd(rs) % 6);
        op->code = c == 0   ? CUDIS_OP_SET
                   : c == 1 ? CUDIS_OP_INCRBY
                   : c == 2 ? CUDIS_OP_APPEND
                   : c == 3 ? CUDIS_OP_DEL
                            : CUDIS_OP_GET;
        op->flags = c == 5 ? CUDIS_F_DEL : 0;
        op->arg = (int64_t)(rnd(rs) % 9) - 4;
        if (c == 0 || c == 2) {
            int vl = snprintf((char *)q->in + at, 16, "%llu", (unsigned long long)(rnd(rs) % 100));
            op->val_off = at;
            op->val_len = (uint32_t)vl;
            at += (uint64_t)vl;
        }
    }
    q->b = (cudis_batch){.ops = q->ops,
                         .n_ops = n,
                         .in = q->in,
                         .res = q->res,
                         .out = q->out,
                         .out_cap = sizeof(q->out),
                         .now_ms = 1700000000000ll};
}

static engine *open_engine(const char *name)
{
    engine_config cfg;
    engine_config_default(&cfg);
    cfg.memory_bytes = 16u << 20;
    char why[256] = "";
    engine *e = engine_create(name, &cfg, why, sizeof(why));
    cr_assert_not_null(e, "%s: %s", name, why);
    return e;
}

static void same_results(const qbatch *a, const qbatch *b, int i)
{
    (void)i; /* only in messages, which plain_test.h drops */
    for (uint32_t j = 0; j < a->b.n_ops; j++) {
        const cudis_result *x = &a->res[j], *y = &b->res[j];
        cr_assert_eq(x->status, y->status, "batch %d op %u", i, j);
        cr_assert_eq(x->flags, y->flags, "batch %d op %u", i, j);
        cr_assert_eq(x->num, y->num, "batch %d op %u", i, j);
        cr_assert_eq(x->val_len, y->val_len, "batch %d op %u", i, j);
        if (x->flags & CUDIS_R_VALUE) {
            cr_assert(memcmp(a->out + x->val_off, b->out + y->val_off, x->val_len) == 0,
                      "batch %d op %u: values differ", i, j);
        }
    }
}

/* Two batches in flight, in order, against engine_execute one at a time. */
static void outcome_equals_sequential(const char *name)
{
    qbatch *seq = calloc(NB, sizeof(qbatch)), *asy = calloc(NB, sizeof(qbatch));
    cr_assert_not_null(seq);
    cr_assert_not_null(asy);
    uint64_t rs = 7;
    for (int i = 0; i < NB; i++) {
        make_batch(&seq[i], &rs);
        asy[i] = seq[i];
        asy[i].b.ops = asy[i].ops;
        asy[i].b.in = asy[i].in;
        asy[i].b.res = asy[i].res;
        asy[i].b.out = asy[i].out;
    }
    engine *e1 = open_engine(name), *e2 = open_engine(name);
    for (int i = 0; i < NB; i++) {
        cr_assert_eq(engine_execute(e1, &seq[i].b), CUDIS_OK);
    }
    engine_queue *q = engine_queue_create(e2);
    cr_assert_not_null(q);
    int done = 0;
    for (int i = 0; i < NB; i++) {
        if (engine_queue_depth(q) == ENGINE_QUEUE_MAX) {
            cudis_batch *b = NULL;
            cr_assert_eq(engine_queue_complete(q, &b), CUDIS_OK);
            cr_assert(b == &asy[done].b, "completed out of order");
            done++;
        }
        cr_assert_eq(engine_queue_submit(q, &asy[i].b), CUDIS_OK);
    }
    while (engine_queue_depth(q) > 0) {
        cudis_batch *b = NULL;
        cr_assert_eq(engine_queue_complete(q, &b), CUDIS_OK);
        cr_assert(b == &asy[done].b, "completed out of order");
        done++;
    }
    cr_assert_eq(done, NB);
    for (int i = 0; i < NB; i++) {
        same_results(&asy[i], &seq[i], i);
    }
    engine_queue_destroy(q);
    engine_destroy(e1);
    engine_destroy(e2);
    free(seq);
    free(asy);
}

Test(engine_queue, outcome_equals_sequential_cpu)
{
    outcome_equals_sequential("cpu");
}

Test(engine_queue, outcome_equals_sequential_lru)
{
    outcome_equals_sequential("lru");
}

/* The fd wakes a poller when the batch is done; a full queue refuses. */
Test(engine_queue, fd_wakes_and_full_queue_refuses)
{
    engine *e = open_engine("cpu");
    engine_queue *q = engine_queue_create(e);
    cr_assert_not_null(q);
    uint64_t rs = 3;
    static qbatch a[3];
    for (int i = 0; i < 3; i++) {
        make_batch(&a[i], &rs);
        a[i].b.ops = a[i].ops;
        a[i].b.in = a[i].in;
        a[i].b.res = a[i].res;
        a[i].b.out = a[i].out;
    }
    cr_assert_eq(engine_queue_submit(q, &a[0].b), CUDIS_OK);
    struct pollfd p = {.fd = engine_queue_fd(q), .events = POLLIN};
    cr_assert_eq(poll(&p, 1, 10000), 1, "the queue's fd must become readable");
    cr_assert(engine_queue_ready(q));
    engine_queue_clear_fd(q);
    cr_assert_eq(engine_queue_submit(q, &a[1].b), CUDIS_OK);
    cr_assert_eq(engine_queue_submit(q, &a[2].b), CUDIS_E_BUSY);
    cr_assert_eq(engine_queue_depth(q), 2);
    cr_assert_eq(engine_queue_complete(q, NULL), CUDIS_OK);
    cr_assert_eq(engine_queue_complete(q, NULL), CUDIS_OK);
    cr_assert_eq(engine_queue_complete(q, NULL), CUDIS_E_INVAL);
    engine_queue_destroy(q);
    engine_destroy(e);
}

/* A device failure under a queued batch: failover to a fresh cpu store,
 * the batch (and the one behind it) still answered, in order. */
Test(engine_queue, failover_under_a_batch_in_flight)
{
    engine_config cfg;
    engine_config_default(&cfg);
    cfg.memory_bytes = 16u << 20;
    char why[256] = "";
    gk_hostsim_inject(3);
    engine *e = engine_create_store(&gk_hostsim_store_ops, &cfg, &ccht_store_ops, why, sizeof(why));
    cr_assert_not_null(e, "%s", why);
    engine_queue *q = engine_queue_create(e);
    static qbatch a[6];
    uint64_t rs = 11;
    for (int i = 0; i < 6; i++) {
        make_batch(&a[i], &rs);
        a[i].b.ops = a[i].ops;
        a[i].b.in = a[i].in;
        a[i].b.res = a[i].res;
        a[i].b.out = a[i].out;
        if (engine_queue_depth(q) == ENGINE_QUEUE_MAX) {
            cr_assert_eq(engine_queue_complete(q, NULL), CUDIS_OK);
        }
        cr_assert_eq(engine_queue_submit(q, &a[i].b), CUDIS_OK);
    }
    while (engine_queue_depth(q) > 0) {
        cr_assert_eq(engine_queue_complete(q, NULL), CUDIS_OK);
    }
    for (int i = 0; i < 6; i++) {
        for (uint32_t j = 0; j < a[i].b.n_ops; j++) {
            cr_assert(a[i].res[j].status == CUDIS_OK || a[i].res[j].status == CUDIS_E_NOTINT,
                      "batch %d op %u: %d", i, j, a[i].res[j].status);
        }
    }
    cr_assert(strcmp(engine_name(e), "cpu") == 0);
    cr_assert_eq(engine_failovers(e), 1);
    engine_queue_destroy(q);
    engine_destroy(e);
}
