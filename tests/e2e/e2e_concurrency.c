/*
 * e2e_concurrency.c - many clients at once: N threads each INCR one key M
 * times end at exactly N*M (no lost update); writers MSET a full set of keys
 * to one value while readers MGET them and must never see a mix of two
 * MSETs (MSET/MGET are atomic); SET/GET from many clients on distinct keys
 * all read back. Half the clients use TCP, half the unix socket.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(concurrency, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

/* Threads must not call cr_assert (it longjmps in the main thread's
 * context); they record failures here and the test checks them. */
static atomic_int failures;
static char first_failure[512];
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *msg, const redisReply *r)
{
    pthread_mutex_lock(&fail_lock);
    if (atomic_fetch_add(&failures, 1) == 0) {
        snprintf(first_failure, sizeof(first_failure), "%s: %s", msg, e2e_reply_str(r));
    }
    pthread_mutex_unlock(&fail_lock);
}

static redisContext *thread_connect(int i)
{
    struct timeval tv = {10, 0};
    redisContext *c = i % 2 ? redisConnectWithTimeout("127.0.0.1", e2e_srv.port, tv)
                            : redisConnectUnixWithTimeout(e2e_srv.sock, tv);
    if (!c || c->err) {
        fail("connect failed", NULL);
        if (c) {
            redisFree(c);
        }
        return NULL;
    }
    redisSetTimeout(c, tv);
    return c;
}

enum { INCR_THREADS = 8, INCR_EACH = 2000 };

static void *incr_worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    redisContext *c = thread_connect(id);
    if (!c) {
        return NULL;
    }
    /* mix single commands and small pipelines */
    for (int i = 0; i < INCR_EACH;) {
        int batch = (i / 100) % 2 ? 10 : 1;
        for (int j = 0; j < batch; j++) {
            redisAppendCommand(c, "INCR counter");
        }
        for (int j = 0; j < batch; j++) {
            redisReply *r = NULL;
            if (redisGetReply(c, (void **)&r) != REDIS_OK) {
                fail("INCR: connection error", NULL);
                redisFree(c);
                return NULL;
            }
            if (r->type != REDIS_REPLY_INTEGER) {
                fail("INCR reply", r);
            }
            freeReplyObject(r);
        }
        i += batch;
    }
    redisFree(c);
    return NULL;
}

Test(concurrency, incr_no_lost_updates)
{
    atomic_store(&failures, 0);
    pthread_t t[INCR_THREADS];
    for (int i = 0; i < INCR_THREADS; i++) {
        pthread_create(&t[i], NULL, incr_worker, (void *)(intptr_t)i);
    }
    for (int i = 0; i < INCR_THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    cr_assert_eq(atomic_load(&failures), 0, "%d failures, first: %s", atomic_load(&failures),
                 first_failure);
    redisContext *c = e2e_connect();
    CHECK_STR(c, "16000", "GET counter");
    redisFree(c);
}

enum { MSET_KEYS = 16, WRITERS = 4, READERS = 4, MSET_ROUNDS = 1500 };
static atomic_int writers_done;
static atomic_long reads_done;

static void *mset_writer(void *arg)
{
    int id = (int)(intptr_t)arg;
    redisContext *c = thread_connect(id);
    if (!c) {
        atomic_fetch_add(&writers_done, 1);
        return NULL;
    }
    const char *argv[1 + 2 * MSET_KEYS];
    size_t lens[1 + 2 * MSET_KEYS];
    char keys[MSET_KEYS][16], val[64];
    argv[0] = id % 2 ? "MSET" : "mset";
    lens[0] = 4;
    for (int k = 0; k < MSET_KEYS; k++) {
        snprintf(keys[k], sizeof(keys[k]), "m:%d", k);
    }
    for (int round = 0; round < MSET_ROUNDS; round++) {
        snprintf(val, sizeof(val), "writer%d-round%d", id, round);
        for (int k = 0; k < MSET_KEYS; k++) {
            argv[1 + 2 * k] = keys[k];
            lens[1 + 2 * k] = strlen(keys[k]);
            argv[2 + 2 * k] = val;
            lens[2 + 2 * k] = strlen(val);
        }
        redisReply *r = redisCommandArgv(c, 1 + 2 * MSET_KEYS, argv, lens);
        if (!r) {
            fail("MSET: connection error", NULL);
            break;
        }
        if (r->type != REDIS_REPLY_STATUS) {
            fail("MSET reply", r);
        }
        freeReplyObject(r);
    }
    redisFree(c);
    atomic_fetch_add(&writers_done, 1);
    return NULL;
}

static void *mget_reader(void *arg)
{
    int id = (int)(intptr_t)arg;
    redisContext *c = thread_connect(id);
    if (!c) {
        return NULL;
    }
    const char *argv[1 + MSET_KEYS];
    size_t lens[1 + MSET_KEYS];
    char keys[MSET_KEYS][16];
    argv[0] = "MGET";
    lens[0] = 4;
    for (int k = 0; k < MSET_KEYS; k++) {
        snprintf(keys[k], sizeof(keys[k]), "m:%d", k);
        argv[1 + k] = keys[k];
        lens[1 + k] = strlen(keys[k]);
    }
    for (long n = 0; n < 10 || atomic_load(&writers_done) < WRITERS; n++) {
        redisReply *r = redisCommandArgv(c, 1 + MSET_KEYS, argv, lens);
        if (!r) {
            fail("MGET: connection error", NULL);
            break;
        }
        if (r->type != REDIS_REPLY_ARRAY || r->elements != MSET_KEYS) {
            fail("MGET reply", r);
        } else {
            const redisReply *e0 = r->element[0];
            for (int k = 1; k < MSET_KEYS; k++) {
                const redisReply *e = r->element[k];
                bool same = e->type == e0->type &&
                            (e->type == REDIS_REPLY_NIL ||
                             (e->len == e0->len && memcmp(e->str, e0->str, e->len) == 0));
                if (!same) {
                    char msg[200];
                    snprintf(msg, sizeof(msg), "MGET saw a mix: m:0=%s", e2e_reply_str(e0));
                    fail(msg, e);
                    break;
                }
            }
        }
        freeReplyObject(r);
        atomic_fetch_add(&reads_done, 1);
    }
    redisFree(c);
    return NULL;
}

Test(concurrency, mset_mget_atomic)
{
    atomic_store(&failures, 0);
    atomic_store(&writers_done, 0);
    atomic_store(&reads_done, 0);
    pthread_t w[WRITERS], rd[READERS];
    for (int i = 0; i < READERS; i++) {
        pthread_create(&rd[i], NULL, mget_reader, (void *)(intptr_t)i);
    }
    for (int i = 0; i < WRITERS; i++) {
        pthread_create(&w[i], NULL, mset_writer, (void *)(intptr_t)i);
    }
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(w[i], NULL);
    }
    for (int i = 0; i < READERS; i++) {
        pthread_join(rd[i], NULL);
    }
    cr_assert_eq(atomic_load(&failures), 0, "%d failures, first: %s", atomic_load(&failures),
                 first_failure);
    cr_assert(atomic_load(&reads_done) >= READERS, "readers did not run");
    /* the final state is one writer's last round everywhere */
    redisContext *c = e2e_connect();
    redisReply *r = e2e_cmd(c, "MGET m:0 m:%d", MSET_KEYS - 1);
    cr_assert(r->element[0]->type == REDIS_REPLY_STRING && strstr(r->element[0]->str, "-round1499"),
              "final: %s", e2e_reply_str(r->element[0]));
    cr_assert_str_eq(r->element[0]->str, r->element[1]->str);
    freeReplyObject(r);
    redisFree(c);
}

enum { KV_THREADS = 8, KV_EACH = 1000 };

static void *kv_worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    redisContext *c = thread_connect(id);
    if (!c) {
        return NULL;
    }
    for (int i = 0; i < KV_EACH; i++) {
        redisAppendCommand(c, "SET kv:%d:%d val-%d-%d", id, i, id, i);
        redisAppendCommand(c, "GET kv:%d:%d", id, i);
    }
    for (int i = 0; i < KV_EACH; i++) {
        redisReply *r = NULL;
        if (redisGetReply(c, (void **)&r) != REDIS_OK) {
            fail("SET: connection error", NULL);
            break;
        }
        if (r->type != REDIS_REPLY_STATUS) {
            fail("SET reply", r);
        }
        freeReplyObject(r);
        if (redisGetReply(c, (void **)&r) != REDIS_OK) {
            fail("GET: connection error", NULL);
            break;
        }
        char want[64];
        snprintf(want, sizeof(want), "val-%d-%d", id, i);
        if (r->type != REDIS_REPLY_STRING || strcmp(r->str, want) != 0) {
            fail("GET after SET on the same connection", r);
        }
        freeReplyObject(r);
    }
    redisFree(c);
    return NULL;
}

Test(concurrency, set_get_many_clients)
{
    atomic_store(&failures, 0);
    pthread_t t[KV_THREADS];
    for (int i = 0; i < KV_THREADS; i++) {
        pthread_create(&t[i], NULL, kv_worker, (void *)(intptr_t)i);
    }
    for (int i = 0; i < KV_THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    cr_assert_eq(atomic_load(&failures), 0, "%d failures, first: %s", atomic_load(&failures),
                 first_failure);
    redisContext *c = e2e_connect();
    CHECK_INT(c, KV_THREADS * KV_EACH, "DBSIZE");
    redisFree(c);
}
