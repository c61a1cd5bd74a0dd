/*
 * e2e_observe.c - watching the server as Redis is watched: SLOWLOG (what an
 * entry holds, newest first, truncation of arguments and of the argument
 * list, slowlog-max-len, -1 and 0 thresholds, AUTH redacted), the latency
 * monitor (LATENCY LATEST/HISTORY/RESET/DOCTOR after a slow script),
 * LATENCY HISTOGRAM and INFO latencystats, and MONITOR's lines (database,
 * client, quoting, a script's calls, AUTH redacted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(observe, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

Test(observe, slowlog_entries)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "CONFIG SET slowlog-log-slower-than 0");
    CHECK_OK(c, "SLOWLOG RESET");
    CHECK_OK(c, "CLIENT SETNAME watcher");
    CHECK_OK(c, "SET foo bar");
    CHECK_STR(c, "bar", "GET foo");
    redisReply *r = e2e_cmd(c, "SLOWLOG GET 2");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 2);
    redisReply *e = r->element[0]; /* newest first: GET foo */
    cr_assert_eq(e->elements, 6);
    cr_assert_eq(e->element[0]->type, REDIS_REPLY_INTEGER);
    cr_assert_gt(e->element[1]->integer, 1700000000);
    cr_assert_eq(e->element[2]->type, REDIS_REPLY_INTEGER);
    cr_assert_eq(e->element[3]->elements, 2);
    cr_assert_str_eq(e->element[3]->element[0]->str, "GET"); /* as sent */
    cr_assert_str_eq(e->element[3]->element[1]->str, "foo");
    cr_assert_not_null(strstr(e->element[4]->str, "127.0.0.1:"));
    cr_assert_str_eq(e->element[5]->str, "watcher");
    redisReply *s = r->element[1];
    cr_assert_eq(s->element[3]->elements, 3);
    cr_assert_str_eq(s->element[3]->element[2]->str, "bar");
    cr_assert_eq(e->element[0]->integer, s->element[0]->integer + 1, "ids grow by one");
    freeReplyObject(r);
    /* long arguments and long argument lists */
    static char big[300];
    memset(big, 'x', 200);
    CHECK_STR(c, "1", "EVAL %s 0 %s", "return '1'", big);
    r = e2e_cmd(c, "SLOWLOG GET 1");
    const redisReply *args = r->element[0]->element[3];
    cr_assert_eq(args->elements, 4);
    cr_assert_eq(args->element[3]->len, strlen("... (72 more bytes)") + 128);
    cr_assert_not_null(strstr(args->element[3]->str, "... (72 more bytes)"));
    freeReplyObject(r);
    const char *av[45];
    size_t al[45];
    av[0] = "EVAL";
    av[1] = "return 1";
    av[2] = "0";
    for (int i = 3; i < 45; i++) {
        av[i] = "a";
    }
    for (int i = 0; i < 45; i++) {
        al[i] = strlen(av[i]);
    }
    freeReplyObject(e2e_cmd_argv(c, 45, av, al));
    r = e2e_cmd(c, "SLOWLOG GET 1");
    args = r->element[0]->element[3];
    cr_assert_eq(args->elements, 32);
    cr_assert_str_eq(args->element[31]->str, "... (14 more arguments)");
    freeReplyObject(r);
    /* AUTH's secret is not logged */
    freeReplyObject(e2e_cmd(c, "AUTH secret"));
    r = e2e_cmd(c, "SLOWLOG GET 1");
    args = r->element[0]->element[3];
    cr_assert_str_eq(args->element[0]->str, "AUTH");
    cr_assert_str_eq(args->element[1]->str, "(redacted)");
    freeReplyObject(r);
    /* slowlog-max-len, -1, RESET */
    CHECK_OK(c, "CONFIG SET slowlog-max-len 2");
    CHECK_INT(c, 2, "SLOWLOG LEN");
    CHECK_OK(c, "CONFIG SET slowlog-log-slower-than -1");
    CHECK_OK(c, "SLOWLOG RESET");
    CHECK_OK(c, "SET a b");
    CHECK_INT(c, 0, "SLOWLOG LEN");
    CHECK_ERR(c, "ERR count should be greater than or equal to -1", "SLOWLOG GET -2");
    CHECK_ERR(c, "ERR count should be greater than or equal to -1", "SLOWLOG GET x");
    redisFree(c);
}

Test(observe, latency_monitor)
{
    redisContext *c = e2e_connect();
    redisReply *r = e2e_cmd(c, "LATENCY DOCTOR");
    cr_assert_not_null(strstr(r->str, "Latency monitoring is disabled"), "%s", r->str);
    freeReplyObject(r);
    r = e2e_cmd(c, "LATENCY LATEST");
    cr_assert_eq(r->elements, 0);
    freeReplyObject(r);
    /* 50 ms: a loaded (ASan) server has stray 1-4 ms commands */
    CHECK_OK(c, "CONFIG SET latency-monitor-threshold 50");
    r = e2e_cmd(c, "LATENCY DOCTOR");
    cr_assert_not_null(strstr(r->str, "no latency spike was observed"), "%s", r->str);
    freeReplyObject(r);
    /* a script busy for a few hundred milliseconds */
    freeReplyObject(
        e2e_cmd(c, "EVAL %s 0", "local t = 0 for i = 1, 60000000 do t = t + i end return 1"));
    r = e2e_cmd(c, "LATENCY LATEST");
    cr_assert_eq(r->elements, 1, "%s", e2e_reply_str(r));
    cr_assert_str_eq(r->element[0]->element[0]->str, "command");
    cr_assert_gt(r->element[0]->element[1]->integer, 1700000000);
    cr_assert_geq(r->element[0]->element[2]->integer, 1);
    cr_assert_geq(r->element[0]->element[3]->integer, r->element[0]->element[2]->integer);
    freeReplyObject(r);
    r = e2e_cmd(c, "LATENCY HISTORY command");
    cr_assert_eq(r->elements, 1);
    cr_assert_eq(r->element[0]->elements, 2);
    freeReplyObject(r);
    r = e2e_cmd(c, "LATENCY HISTORY nosuch");
    cr_assert_eq(r->elements, 0);
    freeReplyObject(r);
    r = e2e_cmd(c, "LATENCY DOCTOR");
    cr_assert_null(strstr(r->str, "no latency spike was observed"), "%s", r->str);
    freeReplyObject(r);
    CHECK_INT(c, 1, "LATENCY RESET");
    CHECK_INT(c, 0, "LATENCY RESET command");
    redisFree(c);
}

Test(observe, latency_histogram_and_info)
{
    redisContext *c = e2e_connect();
    for (int i = 0; i < 3; i++) {
        CHECK_OK(c, "SET h%d v", i);
    }
    redisReply *r = e2e_cmd(c, "LATENCY HISTOGRAM set");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY); /* a map in RESP2 */
    cr_assert_eq(r->elements, 2, "%s", e2e_reply_str(r));
    cr_assert_str_eq(r->element[0]->str, "set");
    const redisReply *m = r->element[1];
    cr_assert_str_eq(m->element[0]->str, "calls");
    cr_assert_eq(m->element[1]->integer, 3);
    cr_assert_str_eq(m->element[2]->str, "histogram_usec");
    const redisReply *h = m->element[3];
    cr_assert_geq(h->elements, 2);
    cr_assert_eq(h->element[h->elements - 1]->integer, 3, "cumulative counts end at the calls");
    freeReplyObject(r);
    r = e2e_cmd(c, "LATENCY HISTOGRAM nosuch");
    cr_assert_eq(r->elements, 0);
    freeReplyObject(r);
    r = e2e_cmd(c, "INFO latencystats");
    cr_assert_not_null(strstr(r->str, "# Latencystats"), "%s", r->str);
    cr_assert_not_null(strstr(r->str, "latency_percentiles_usec_set:p50="), "%s", r->str);
    cr_assert_not_null(strstr(r->str, ",p99.9="), "%s", r->str);
    freeReplyObject(r);
    redisFree(c);
}

/* The next line the monitor got; fails after 5 s. */
static char *monitor_line(int fd)
{
    size_t n;
    char *l = e2e_raw_reply(fd, &n, 5000);
    cr_assert_not_null(l, "no MONITOR line");
    return l;
}

/* "+<secs>.<usecs> " then want */
static void expect_line(int fd, const char *want)
{
    char *l = monitor_line(fd);
    char *sp = strchr(l, ' ');
    cr_assert(l[0] == '+' && sp != NULL && strchr(l, '.') < sp, "%s", l);
    cr_assert_str_eq(sp + 1, want, "MONITOR line %s", l);
    free(l);
}

Test(observe, monitor)
{
    int mon = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(mon, "MONITOR\r\n", "+OK\r\n");
    redisContext *c = e2e_connect();
    redisReply *r = e2e_cmd(c, "CLIENT INFO");
    char addr[64];
    cr_assert_eq(sscanf(strstr(r->str, "addr=") + 5, "%63s", addr), 1);
    freeReplyObject(r);
    free(monitor_line(mon)); /* the CLIENT INFO line */
    char want[256];
    CHECK_OK(c, "SET k v");
    snprintf(want, sizeof(want), "[0 %s] \"SET\" \"k\" \"v\"\r\n", addr);
    expect_line(mon, want);
    CHECK_OK(c, "SELECT 2");
    snprintf(want, sizeof(want), "[2 %s] \"SELECT\" \"2\"\r\n", addr);
    expect_line(mon, want);
    CHECK_NIL(c, "EVAL %s 0", "return redis.call('get', 'y')");
    snprintf(want, sizeof(want), "[2 %s] \"EVAL\" \"return redis.call('get', 'y')\" \"0\"\r\n",
             addr);
    expect_line(mon, want);
    expect_line(mon, "[2 lua] \"get\" \"y\"\r\n");
    freeReplyObject(e2e_cmd(c, "AUTH secret"));
    snprintf(want, sizeof(want), "[2 %s] \"AUTH\" \"(redacted)\"\r\n", addr);
    expect_line(mon, want);
    CHECK_OK(c, "SET %s %b", "q", "a \"b\"\n\x01", (size_t)7);
    snprintf(want, sizeof(want), "[2 %s] \"SET\" \"q\" \"a \\\"b\\\"\\n\\x01\"\r\n", addr);
    expect_line(mon, want);
    redisFree(c);
    close(mon);
}
