/*
 * e2e_multi.c - transactions as Redis 7 has them: MULTI/EXEC/DISCARD, the
 * errors of each, EXECABORT after a command refused while queued, runtime
 * errors inside the EXEC array, WATCH failing EXEC after a write by anyone
 * (the client itself too), an expiry, a FLUSHALL, and not after UNWATCH,
 * DISCARD or an EXEC; RESP3's null; CLIENT LIST's multi field; and
 * atomicity: many clients pipelining MULTI INCR GET EXEC never see another
 * client's INCR between theirs and their GET (one loop and four).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(multi, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

/* EXEC's reply: an array of n elements (fails otherwise). */
static redisReply *exec_array(redisContext *c, size_t n)
{
    redisReply *r = e2e_cmd(c, "EXEC");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY, "EXEC: %s", e2e_reply_str(r));
    cr_assert_eq(r->elements, n, "EXEC: %s", e2e_reply_str(r));
    return r;
}

Test(multi, exec_runs_the_queue)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "SET a 1");
    CHECK_STATUS(c, "QUEUED", "INCR a");
    CHECK_STATUS(c, "QUEUED", "GET a");
    CHECK_STATUS(c, "QUEUED", "PING");
    CHECK_STATUS(c, "QUEUED", "DEL a nosuch");
    redisReply *r = exec_array(c, 5);
    cr_assert_str_eq(r->element[0]->str, "OK");
    cr_assert_eq(r->element[1]->integer, 2);
    cr_assert_str_eq(r->element[2]->str, "2");
    cr_assert_str_eq(r->element[3]->str, "PONG");
    cr_assert_eq(r->element[4]->integer, 1);
    freeReplyObject(r);
    /* an empty transaction */
    CHECK_OK(c, "MULTI");
    freeReplyObject(exec_array(c, 0));
    CHECK_NIL(c, "GET a");
    redisFree(c);
}

Test(multi, errors_outside_and_nested)
{
    redisContext *c = e2e_connect();
    CHECK_ERR(c, "ERR EXEC without MULTI", "EXEC");
    CHECK_ERR(c, "ERR DISCARD without MULTI", "DISCARD");
    CHECK_OK(c, "MULTI");
    CHECK_ERR(c, "ERR MULTI calls can not be nested", "MULTI");
    CHECK_ERR(c, "ERR WATCH inside MULTI is not allowed", "WATCH x");
    CHECK_STATUS(c, "QUEUED", "SET n 1");
    /* neither error aborts the transaction */
    redisReply *r = exec_array(c, 1);
    cr_assert_str_eq(r->element[0]->str, "OK");
    freeReplyObject(r);
    CHECK_ERR(c, "ERR wrong number of arguments for 'multi' command", "MULTI x");
    /* EXEC refused by dispatch (arity) aborts a transaction, as Redis says */
    CHECK_ERR(c,
              "EXECABORT Transaction discarded because of: wrong number of arguments for "
              "'exec' command",
              "EXEC x");
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "SET n 2");
    CHECK_ERR(c,
              "EXECABORT Transaction discarded because of: wrong number of arguments for "
              "'exec' command",
              "EXEC x");
    CHECK_ERR(c, "ERR EXEC without MULTI", "EXEC");
    CHECK_STR(c, "1", "GET n");
    CHECK_ERR(c, "ERR wrong number of arguments for 'watch' command", "WATCH");
    redisFree(c);
}

/* A command refused while queued: EXECABORT, and nothing of it ran. */
Test(multi, execabort_after_queue_errors)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "SET x 1");
    CHECK_ERR_PREFIX(c, "ERR unknown command 'NOSUCH'", "NOSUCH a b");
    CHECK_STATUS(c, "QUEUED", "SET y 1");
    CHECK_ERR(c, "EXECABORT Transaction discarded because of previous errors.", "EXEC");
    CHECK_NIL(c, "GET x");
    CHECK_NIL(c, "GET y");
    CHECK_OK(c, "MULTI");
    CHECK_ERR(c, "ERR wrong number of arguments for 'get' command", "GET");
    CHECK_ERR_PREFIX(c, "ERR unknown subcommand 'NOSUCH'", "CONFIG NOSUCH");
    CHECK_ERR(c, "EXECABORT Transaction discarded because of previous errors.", "EXEC");
    /* and the connection is out of MULTI */
    CHECK_ERR(c, "ERR EXEC without MULTI", "EXEC");
    CHECK_STATUS(c, "PONG", "PING");
    redisFree(c);
}

/* Errors found when a queued command runs are its own reply; the rest run. */
Test(multi, runtime_errors_inside_exec)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET s notanumber");
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "INCR s");
    CHECK_STATUS(c, "QUEUED", "SET t 1");
    CHECK_STATUS(c, "QUEUED", "INCRBY t notanumber");
    CHECK_STATUS(c, "QUEUED", "SET u 1 EX 0");
    CHECK_STATUS(c, "QUEUED", "INCR t");
    redisReply *r = exec_array(c, 5);
    cr_assert_eq(r->element[0]->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->element[0]->str, "ERR value is not an integer or out of range");
    cr_assert_str_eq(r->element[1]->str, "OK");
    cr_assert_eq(r->element[2]->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->element[2]->str, "ERR value is not an integer or out of range");
    cr_assert_eq(r->element[3]->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->element[3]->str, "ERR invalid expire time in 'set' command");
    cr_assert_eq(r->element[4]->integer, 2);
    freeReplyObject(r);
    redisFree(c);
}

Test(multi, discard)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "SET d 1");
    CHECK_OK(c, "DISCARD");
    CHECK_NIL(c, "GET d");
    CHECK_ERR(c, "ERR EXEC without MULTI", "EXEC");
    redisFree(c);
}

Test(multi, watch_fails_exec_after_a_write)
{
    redisContext *c = e2e_connect(), *o = e2e_connect();
    CHECK_OK(c, "SET w 1");
    CHECK_OK(c, "WATCH w nosuch w");
    CHECK_OK(o, "SET w 2");
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "SET w 3");
    redisReply *r = e2e_cmd(c, "EXEC");
    cr_assert_eq(r->type, REDIS_REPLY_NIL, "EXEC after a write: %s", e2e_reply_str(r));
    freeReplyObject(r);
    CHECK_STR(c, "2", "GET w");
    /* a watched key that does not exist, created by another client */
    CHECK_OK(c, "WATCH fresh");
    CHECK_OK(o, "SET fresh 1");
    cr_assert_not(e2e_tx_ran(c));
    /* the client's own write counts too */
    CHECK_OK(c, "WATCH w");
    CHECK_INT(c, 3, "INCR w");
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "INCR w");
    r = e2e_cmd(c, "EXEC");
    cr_assert_eq(r->type, REDIS_REPLY_NIL, "%s", e2e_reply_str(r));
    freeReplyObject(r);
    /* a DEL of another key, or a write that changes nothing, does not */
    CHECK_OK(c, "WATCH w");
    CHECK_INT(o, 0, "DEL nosuch");
    CHECK_INT(o, 0, "SETNX w 9");
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "INCR w");
    r = exec_array(c, 1);
    cr_assert_eq(r->element[0]->integer, 4);
    freeReplyObject(r);
    redisFree(o);
    redisFree(c);
}

Test(multi, watch_not_modified_and_unwatched)
{
    redisContext *c = e2e_connect(), *o = e2e_connect();
    CHECK_OK(c, "SET k 1");
    CHECK_OK(c, "WATCH k");
    CHECK_STR(o, "1", "GET k"); /* reads do not count */
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "INCR k");
    redisReply *r = exec_array(c, 1);
    cr_assert_eq(r->element[0]->integer, 2);
    freeReplyObject(r);
    /* after EXEC the key is no longer watched */
    CHECK_OK(o, "SET k 10");
    cr_assert(e2e_tx_ran(c));
    /* nor after a failed EXEC */
    CHECK_OK(c, "WATCH k");
    CHECK_OK(o, "SET k 11");
    CHECK_OK(c, "MULTI");
    r = e2e_cmd(c, "EXEC");
    cr_assert_eq(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    CHECK_OK(o, "SET k 12");
    CHECK_OK(c, "MULTI");
    freeReplyObject(exec_array(c, 0));
    /* UNWATCH */
    CHECK_OK(c, "WATCH k");
    CHECK_OK(o, "SET k 13");
    CHECK_OK(c, "UNWATCH");
    CHECK_OK(c, "UNWATCH");
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "GET k");
    r = exec_array(c, 1);
    cr_assert_str_eq(r->element[0]->str, "13");
    freeReplyObject(r);
    /* DISCARD unwatches and clears the dirty flag */
    CHECK_OK(c, "WATCH k");
    CHECK_OK(o, "SET k 20");
    CHECK_OK(c, "MULTI");
    CHECK_OK(c, "DISCARD");
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "INCR k");
    r = exec_array(c, 1);
    cr_assert_eq(r->element[0]->integer, 21);
    freeReplyObject(r);
    redisFree(o);
    redisFree(c);
}

/* A key that expires between WATCH and EXEC fails it (Redis 7); one that
 * was already gone at WATCH does not. */
Test(multi, watch_and_expiry)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET e 1 PX 400");
    CHECK_OK(c, "WATCH e");
    redisReply *t = e2e_cmd(c, "PTTL e");
    cr_assert_gt(t->integer, 0, "the key must still live after WATCH (a slow machine?)");
    e2e_sleep_ms((int)t->integer + 150);
    freeReplyObject(t);
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "INCR e");
    redisReply *r = e2e_cmd(c, "EXEC");
    cr_assert_eq(r->type, REDIS_REPLY_NIL, "key expired after WATCH: %s", e2e_reply_str(r));
    freeReplyObject(r);
    CHECK_OK(c, "SET g 1 PX 20");
    e2e_sleep_ms(100);
    CHECK_OK(c, "WATCH g");
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "INCR g");
    r = exec_array(c, 1);
    cr_assert_eq(r->element[0]->integer, 1);
    freeReplyObject(r);
    redisFree(c);
}

Test(multi, watch_and_flushall)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET x 30");
    CHECK_OK(c, "WATCH x");
    CHECK_OK(c, "FLUSHALL");
    cr_assert_not(e2e_tx_ran(c), "FLUSHALL touches a watched key");
    CHECK_OK(c, "WATCH x");
    CHECK_OK(c, "FLUSHALL");
    cr_assert(e2e_tx_ran(c), "x did not exist: untouched");
    redisFree(c);
}

/* RESP3: a failed EXEC is a null; queued replies and the array as usual. */
Test(multi, resp3)
{
    int fd = e2e_raw_open(e2e_srv.port), o = e2e_raw_open(e2e_srv.port);
    size_t n;
    e2e_raw_send(fd, "HELLO 3\r\n", 9);
    char *hello = e2e_raw_reply(fd, &n, 5000);
    cr_assert_not_null(hello);
    free(hello);
    RAW_EXPECT(fd, "WATCH q\r\n", "+OK\r\n");
    RAW_EXPECT(o, "SET q 1\r\n", "+OK\r\n");
    RAW_EXPECT(fd, "MULTI\r\n", "+OK\r\n");
    RAW_EXPECT(fd, "GET q\r\n", "+QUEUED\r\n");
    RAW_EXPECT(fd, "EXEC\r\n", "_\r\n");
    RAW_EXPECT(fd, "MULTI\r\n", "+OK\r\n");
    RAW_EXPECT(fd, "GET q\r\n", "+QUEUED\r\n");
    RAW_EXPECT(fd, "GET nosuch\r\n", "+QUEUED\r\n");
    RAW_EXPECT(fd, "EXEC\r\n", "*2\r\n$1\r\n1\r\n_\r\n");
    close(fd);
    close(o);
}

/* A pipeline of commands around transactions, answered in order. */
Test(multi, pipelined_transactions)
{
    redisContext *c = e2e_connect();
    const int rounds = 500;
    for (int i = 0; i < rounds; i++) {
        redisAppendCommand(c, "SET pre:%d %d", i, i);
        redisAppendCommand(c, "MULTI");
        redisAppendCommand(c, "INCR ctr");
        redisAppendCommand(c, "GET pre:%d", i);
        redisAppendCommand(c, "EXEC");
        redisAppendCommand(c, "GET ctr");
    }
    for (int i = 0; i < rounds; i++) {
        redisReply *r[6];
        for (int k = 0; k < 6; k++) {
            cr_assert_eq(redisGetReply(c, (void **)&r[k]), REDIS_OK);
        }
        char want[32];
        snprintf(want, sizeof(want), "%d", i);
        cr_assert_str_eq(r[0]->str, "OK");
        cr_assert_str_eq(r[1]->str, "OK");
        cr_assert_str_eq(r[2]->str, "QUEUED");
        cr_assert_str_eq(r[3]->str, "QUEUED");
        cr_assert_eq(r[4]->type, REDIS_REPLY_ARRAY, "round %d: %s", i, e2e_reply_str(r[4]));
        cr_assert_eq(r[4]->elements, 2);
        cr_assert_eq(r[4]->element[0]->integer, i + 1);
        cr_assert_str_eq(r[4]->element[1]->str, want);
        snprintf(want, sizeof(want), "%d", i + 1);
        cr_assert_str_eq(r[5]->str, want);
        for (int k = 0; k < 6; k++) {
            freeReplyObject(r[k]);
        }
    }
    redisFree(c);
}

Test(multi, client_list_shows_the_queue)
{
    redisContext *c = e2e_connect(), *o = e2e_connect();
    CHECK_OK(c, "CLIENT SETNAME tx");
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "PING");
    CHECK_STATUS(c, "QUEUED", "PING");
    redisReply *r = e2e_cmd(o, "CLIENT LIST");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    const char *line = strstr(r->str, "name=tx ");
    cr_assert_not_null(line, "%s", r->str);
    cr_assert_not_null(strstr(line, "flags=x "), "%s", line);
    cr_assert_not_null(strstr(line, "multi=2 "), "%s", line);
    freeReplyObject(r);
    CHECK_OK(c, "DISCARD");
    redisFree(o);
    redisFree(c);
}

/* Atomicity: each client's MULTI INCR GET EXEC reads its own INCR's value,
 * whatever the others do meanwhile. */
enum { TX_THREADS = 8, TX_ROUNDS = 300 };
static atomic_int tx_failures;
static char tx_failure[256];

static void *tx_worker(void *arg)
{
    (void)arg;
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", e2e_srv.port, tv);
    if (c == NULL || c->err) {
        atomic_fetch_add(&tx_failures, 1);
        return NULL;
    }
    for (int round = 0; round < TX_ROUNDS / 10; round++) {
        for (int k = 0; k < 10; k++) {
            redisAppendCommand(c, "MULTI");
            redisAppendCommand(c, "INCR shared");
            redisAppendCommand(c, "SET other %d", k);
            redisAppendCommand(c, "GET shared");
            redisAppendCommand(c, "EXEC");
        }
        for (int k = 0; k < 10; k++) {
            redisReply *r[5];
            for (int j = 0; j < 5; j++) {
                if (redisGetReply(c, (void **)&r[j]) != REDIS_OK) {
                    atomic_fetch_add(&tx_failures, 1);
                    redisFree(c);
                    return NULL;
                }
            }
            redisReply *x = r[4];
            bool ok = x->type == REDIS_REPLY_ARRAY && x->elements == 3 &&
                      x->element[0]->type == REDIS_REPLY_INTEGER &&
                      x->element[2]->type == REDIS_REPLY_STRING &&
                      x->element[0]->integer == atoll(x->element[2]->str);
            if (!ok && atomic_fetch_add(&tx_failures, 1) == 0) {
                snprintf(tx_failure, sizeof(tx_failure), "%s", e2e_reply_str(x));
            }
            for (int j = 0; j < 5; j++) {
                freeReplyObject(r[j]);
            }
        }
    }
    redisFree(c);
    return NULL;
}

static void run_tx_workers(void)
{
    pthread_t t[TX_THREADS];
    for (int i = 0; i < TX_THREADS; i++) {
        pthread_create(&t[i], NULL, tx_worker, NULL);
    }
    for (int i = 0; i < TX_THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    cr_assert_eq(atomic_load(&tx_failures), 0, "%d transactions saw another's INCR: %s",
                 atomic_load(&tx_failures), tx_failure);
    redisContext *c = e2e_connect();
    char want[32];
    snprintf(want, sizeof(want), "%d", TX_THREADS * (TX_ROUNDS / 10) * 10);
    CHECK_STR(c, want, "GET shared");
    redisFree(c);
}

Test(multi, atomic_under_concurrency)
{
    run_tx_workers();
}

Test(multi, atomic_under_concurrency_io_threads)
{
    e2e_stop(&e2e_srv);
    const char *o[] = {"--io-threads", "4", NULL};
    cr_assert(e2e_start(&e2e_srv, o) == 0);
    run_tx_workers();
}
