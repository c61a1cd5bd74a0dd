/*
 * e2e_db.c - numbered databases as Redis 7 has them (databases 16): SELECT
 * and its errors, keys kept apart, DBSIZE/KEYS/SCAN/RANDOMKEY per database,
 * FLUSHDB against FLUSHALL, SWAPDB (contents, the clients that SELECTed
 * them, WATCHed keys), MOVE, COPY ... DB, INFO keyspace's lines, CLIENT
 * LIST's db field, SELECT inside MULTI, and WATCH remembering the database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(db, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

Test(db, select_and_keys_apart)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET k zero");
    CHECK_OK(c, "SELECT 1");
    CHECK_NIL(c, "GET k");
    CHECK_OK(c, "SET k one");
    CHECK_OK(c, "SELECT 15");
    CHECK_OK(c, "SET k fifteen");
    CHECK_OK(c, "SELECT 0");
    CHECK_STR(c, "zero", "GET k");
    CHECK_OK(c, "SELECT 1");
    CHECK_STR(c, "one", "GET k");
    CHECK_INT(c, 1, "DEL k");
    CHECK_OK(c, "SELECT 15");
    CHECK_STR(c, "fifteen", "GET k");
    CHECK_ERR(c, "ERR DB index is out of range", "SELECT 16");
    CHECK_ERR(c, "ERR DB index is out of range", "SELECT -1");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "SELECT x");
    CHECK_STR(c, "fifteen", "GET k"); /* a failed SELECT keeps the database */
    /* a new connection starts in database 0 */
    redisContext *o = e2e_connect();
    CHECK_STR(o, "zero", "GET k");
    redisFree(o);
    redisFree(c);
}

Test(db, dbsize_keys_scan_randomkey)
{
    redisContext *c = e2e_connect();
    for (int i = 0; i < 30; i++) {
        CHECK_OK(c, "SET zero:%d v", i);
    }
    CHECK_OK(c, "SELECT 3");
    CHECK_INT(c, 0, "DBSIZE");
    CHECK_NIL(c, "RANDOMKEY");
    redisReply *r = e2e_cmd(c, "KEYS *");
    cr_assert_eq(r->elements, 0);
    freeReplyObject(r);
    for (int i = 0; i < 5; i++) {
        CHECK_OK(c, "SET three:%d v", i);
    }
    CHECK_INT(c, 5, "DBSIZE");
    r = e2e_cmd(c, "KEYS *");
    cr_assert_eq(r->elements, 5);
    for (size_t i = 0; i < r->elements; i++) {
        cr_assert_eq(strncmp(r->element[i]->str, "three:", 6), 0, "%s", r->element[i]->str);
    }
    freeReplyObject(r);
    int seen = 0;
    char cur[32] = "0";
    do {
        r = e2e_cmd(c, "SCAN %s COUNT 3", cur);
        snprintf(cur, sizeof(cur), "%s", r->element[0]->str);
        for (size_t i = 0; i < r->element[1]->elements; i++) {
            cr_assert_eq(strncmp(r->element[1]->element[i]->str, "three:", 6), 0);
            seen++;
        }
        freeReplyObject(r);
    } while (strcmp(cur, "0") != 0);
    cr_assert_eq(seen, 5);
    for (int i = 0; i < 10; i++) {
        r = e2e_cmd(c, "RANDOMKEY");
        cr_assert_eq(strncmp(r->str, "three:", 6), 0, "%s", r->str);
        freeReplyObject(r);
    }
    CHECK_OK(c, "SELECT 0");
    CHECK_INT(c, 30, "DBSIZE");
    redisFree(c);
}

Test(db, flushdb_and_flushall)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET a 1");
    CHECK_OK(c, "SELECT 2");
    CHECK_OK(c, "SET b 2");
    CHECK_OK(c, "FLUSHDB");
    CHECK_INT(c, 0, "DBSIZE");
    CHECK_OK(c, "SELECT 0");
    CHECK_STR(c, "1", "GET a");
    CHECK_OK(c, "SELECT 2");
    CHECK_OK(c, "SET b 2");
    CHECK_OK(c, "FLUSHALL");
    CHECK_INT(c, 0, "DBSIZE");
    CHECK_OK(c, "SELECT 0");
    CHECK_INT(c, 0, "DBSIZE");
    redisFree(c);
}

Test(db, swapdb)
{
    redisContext *c = e2e_connect(), *o = e2e_connect();
    CHECK_OK(c, "SET where zero");
    CHECK_OK(c, "SELECT 1");
    CHECK_OK(c, "SET where one");
    CHECK_OK(c, "SET only1 x");
    CHECK_OK(o, "SWAPDB 0 1");
    /* c stayed on database 1: it now holds what 0 held */
    CHECK_STR(c, "zero", "GET where");
    CHECK_NIL(c, "GET only1");
    CHECK_STR(o, "one", "GET where");
    CHECK_STR(o, "x", "GET only1");
    CHECK_INT(o, 2, "DBSIZE");
    CHECK_OK(o, "SWAPDB 1 1");
    CHECK_OK(o, "SWAPDB 1 0");
    CHECK_STR(o, "zero", "GET where");
    CHECK_ERR(o, "ERR invalid first DB index", "SWAPDB x 1");
    CHECK_ERR(o, "ERR invalid second DB index", "SWAPDB 1 y");
    CHECK_ERR(o, "ERR DB index is out of range", "SWAPDB 0 16");
    CHECK_ERR(o, "ERR DB index is out of range", "SWAPDB -1 0");
    /* writes after a swap go where the SELECTed database now is */
    CHECK_OK(o, "SWAPDB 0 5");
    CHECK_OK(o, "SET after swap");
    CHECK_OK(o, "SELECT 5");
    CHECK_NIL(o, "GET after");
    CHECK_STR(o, "zero", "GET where");
    redisFree(o);
    redisFree(c);
}

Test(db, swapdb_and_watch)
{
    redisContext *c = e2e_connect(), *o = e2e_connect();
    CHECK_OK(c, "SET x 30");
    CHECK_OK(c, "WATCH x");
    CHECK_OK(o, "SWAPDB 0 1");
    cr_assert_not(e2e_tx_ran(c), "SWAPDB touches a watched key that exists");
    /* x is in database 1 now, c on database 0 where no x is: swapping
     * databases without it leaves the watch alone */
    CHECK_OK(c, "WATCH nosuch");
    CHECK_OK(o, "SWAPDB 2 3");
    CHECK_OK(o, "SWAPDB 0 2");
    cr_assert(e2e_tx_ran(c));
    /* the watch follows its database: a write to it after the swap counts */
    CHECK_OK(c, "SELECT 7");
    CHECK_OK(c, "WATCH y");
    CHECK_OK(o, "SWAPDB 7 8");
    CHECK_OK(o, "SELECT 7");
    CHECK_OK(o, "SET y 1");
    cr_assert_not(e2e_tx_ran(c));
    redisFree(o);
    redisFree(c);
}

Test(db, move)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET m v EX 100");
    CHECK_INT(c, 1, "MOVE m 1");
    CHECK_NIL(c, "GET m");
    CHECK_INT(c, 0, "MOVE m 1"); /* gone from here */
    CHECK_OK(c, "SELECT 1");
    CHECK_STR(c, "v", "GET m");
    redisReply *r = e2e_cmd(c, "TTL m");
    cr_assert(r->integer > 90 && r->integer <= 100, "the expiry moves too: %lld", r->integer);
    freeReplyObject(r);
    CHECK_OK(c, "SELECT 0");
    CHECK_OK(c, "SET m other");
    CHECK_INT(c, 0, "MOVE m 1"); /* there already */
    CHECK_STR(c, "other", "GET m");
    CHECK_ERR(c, "ERR source and destination objects are the same", "MOVE m 0");
    CHECK_ERR(c, "ERR DB index is out of range", "MOVE m 16");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "MOVE m x");
    CHECK_INT(c, 0, "MOVE nosuch 2");
    redisFree(c);
}

Test(db, copy_to_another_database)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET src hello");
    CHECK_INT(c, 1, "COPY src src DB 2");
    CHECK_INT(c, 0, "COPY src src DB 2");
    CHECK_INT(c, 1, "COPY src src DB 2 REPLACE");
    CHECK_INT(c, 1, "COPY src dst DB 2");
    CHECK_ERR(c, "ERR source and destination objects are the same", "COPY src src");
    CHECK_ERR(c, "ERR source and destination objects are the same", "COPY src src DB 0");
    CHECK_ERR(c, "ERR DB index is out of range", "COPY src x DB 99");
    CHECK_OK(c, "SELECT 2");
    CHECK_STR(c, "hello", "GET src");
    CHECK_STR(c, "hello", "GET dst");
    CHECK_OK(c, "SELECT 0");
    CHECK_NIL(c, "GET dst");
    redisFree(c);
}

Test(db, info_keyspace_lines)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET a 1");
    CHECK_OK(c, "SET b 1 EX 1000");
    CHECK_OK(c, "SELECT 3");
    CHECK_OK(c, "SET c 1");
    redisReply *r = e2e_cmd(c, "INFO keyspace");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_not_null(strstr(r->str, "db0:keys=2,expires=1,avg_ttl="), "%s", r->str);
    cr_assert_not_null(strstr(r->str, "db3:keys=1,expires=0,avg_ttl=0"), "%s", r->str);
    cr_assert_null(strstr(r->str, "db1:"), "%s", r->str);
    freeReplyObject(r);
    r = e2e_cmd(c, "CLIENT INFO");
    cr_assert_not_null(strstr(r->str, " db=3 "), "%s", r->str);
    freeReplyObject(r);
    redisFree(c);
}

Test(db, select_in_multi_and_watch_remembers_the_database)
{
    redisContext *c = e2e_connect(), *o = e2e_connect();
    CHECK_OK(c, "MULTI");
    CHECK_STATUS(c, "QUEUED", "SELECT 2");
    CHECK_STATUS(c, "QUEUED", "SET q 1");
    redisReply *r = e2e_cmd(c, "EXEC");
    cr_assert_eq(r->elements, 2);
    freeReplyObject(r);
    CHECK_STR(c, "1", "GET q"); /* still on database 2 */
    CHECK_OK(c, "SELECT 5");
    CHECK_OK(c, "WATCH x");
    CHECK_OK(c, "SELECT 1");
    CHECK_OK(c, "SET x 1"); /* database 1's x, not the watched one */
    cr_assert(e2e_tx_ran(c));
    CHECK_OK(c, "SELECT 5");
    CHECK_OK(c, "WATCH x");
    CHECK_OK(o, "SELECT 5");
    CHECK_OK(o, "SET x 2");
    cr_assert_not(e2e_tx_ran(c));
    redisFree(o);
    redisFree(c);
}

/* Pipelined commands to several databases, answered in order. */
Test(db, pipelined_across_databases)
{
    redisContext *c = e2e_connect();
    const int n = 2000;
    for (int i = 0; i < n; i++) {
        redisAppendCommand(c, "SELECT %d", i % 16);
        redisAppendCommand(c, "SET k%d %d", i / 16, i);
        redisAppendCommand(c, "GET k%d", i / 16);
    }
    for (int i = 0; i < n; i++) {
        redisReply *r[3];
        for (int k = 0; k < 3; k++) {
            cr_assert_eq(redisGetReply(c, (void **)&r[k]), REDIS_OK);
        }
        char want[16];
        snprintf(want, sizeof(want), "%d", i);
        cr_assert_str_eq(r[2]->str, want, "round %d", i);
        for (int k = 0; k < 3; k++) {
            freeReplyObject(r[k]);
        }
    }
    for (int d = 0; d < 16; d++) {
        CHECK_OK(c, "SELECT %d", d);
        CHECK_INT(c, n / 16, "DBSIZE");
    }
    redisFree(c);
}
