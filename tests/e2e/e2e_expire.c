/*
 * e2e_expire.c - expiry over the wire: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT
 * with NX XX GT LT, TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, keys that
 * vanish on time (lazy and active), and their errors. Times are short
 * (tens of ms) so the suite stays fast.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(expire, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

static long long num(redisContext *c, const char *fmt, const char *key)
{
    redisReply *r = e2e_cmd(c, fmt, key);
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER, "%s %s: %s", fmt, key, e2e_reply_str(r));
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

Test(expire, ttl_basics)
{
    redisContext *c = e2e_connect();
    CHECK_INT(c, -2, "TTL nope");
    CHECK_INT(c, -2, "PTTL nope");
    CHECK_INT(c, -2, "EXPIRETIME nope");
    CHECK_INT(c, -2, "PEXPIRETIME nope");
    CHECK_OK(c, "SET k v");
    CHECK_INT(c, -1, "TTL k");
    CHECK_INT(c, -1, "PTTL k");
    CHECK_INT(c, -1, "EXPIRETIME k");
    CHECK_INT(c, -1, "PEXPIRETIME k");
    CHECK_INT(c, 0, "EXPIRE nope 10");
    CHECK_INT(c, 0, "PEXPIRE nope 10");
    CHECK_INT(c, 1, "EXPIRE k 100");
    long long t = num(c, "TTL %s", "k");
    cr_assert(t == 100 || t == 99, "TTL %lld", t);
    t = num(c, "PTTL %s", "k");
    cr_assert(t > 98000 && t <= 100000, "PTTL %lld", t);
    long long now = e2e_now_ms();
    t = num(c, "EXPIRETIME %s", "k");
    cr_assert(llabs(t - (now / 1000 + 100)) <= 1, "EXPIRETIME %lld vs now %lld", t, now);
    t = num(c, "PEXPIRETIME %s", "k");
    cr_assert(llabs(t - (now + 100000)) <= 1500, "PEXPIRETIME %lld vs now %lld", t, now);
    CHECK_INT(c, 1, "PEXPIRE k 5000");
    t = num(c, "PTTL %s", "k");
    cr_assert(t > 3000 && t <= 5000, "PTTL %lld", t);
    CHECK_INT(c, 1, "EXPIREAT k %lld", now / 1000 + 1000);
    CHECK_INT(c, now / 1000 + 1000, "EXPIRETIME k");
    CHECK_INT(c, 1, "PEXPIREAT k %lld", now + 777777);
    CHECK_INT(c, now + 777777, "PEXPIRETIME k");
    CHECK_INT(c, 1, "PERSIST k");
    CHECK_INT(c, 0, "PERSIST k");
    CHECK_INT(c, 0, "PERSIST nope");
    CHECK_INT(c, -1, "TTL k");
    redisFree(c);
}

Test(expire, options)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET k v");
    /* no TTL: XX and GT fail, NX and LT succeed */
    CHECK_INT(c, 0, "EXPIRE k 100 XX");
    CHECK_INT(c, 0, "EXPIRE k 100 GT");
    CHECK_INT(c, -1, "TTL k");
    CHECK_INT(c, 1, "EXPIRE k 100 LT");
    CHECK_INT(c, 1, "PERSIST k");
    CHECK_INT(c, 1, "EXPIRE k 100 NX");
    /* TTL 100 */
    CHECK_INT(c, 0, "EXPIRE k 200 NX");
    CHECK_INT(c, 0, "EXPIRE k 50 GT");
    CHECK_INT(c, 0, "EXPIRE k 200 LT");
    CHECK_INT(c, 1, "EXPIRE k 200 GT");
    CHECK_INT(c, 1, "EXPIRE k 150 LT");
    CHECK_INT(c, 1, "EXPIRE k 120 XX");
    CHECK_INT(c, 1, "EXPIRE k 110 XX LT");
    CHECK_INT(c, 0, "EXPIRE k 100 XX GT");
    long long t = num(c, "TTL %s", "k");
    cr_assert(t == 110 || t == 109, "TTL %lld", t);
    CHECK_INT(c, 1, "PEXPIRE k 500000 gt");
    CHECK_INT(c, 0, "PEXPIRE k 600000 nx");
    long long now = e2e_now_ms();
    CHECK_INT(c, 0, "PEXPIREAT k %lld LT", now + 900000);
    CHECK_INT(c, 1, "PEXPIREAT k %lld LT", now + 400000);
    CHECK_INT(c, 1, "EXPIREAT k %lld GT", now / 1000 + 1000);
    CHECK_INT(c, 0, "EXPIRE nope 100 XX");
    CHECK_INT(c, 0, "EXPIRE nope 100 NX");
    /* errors */
    CHECK_ERR(c, "ERR NX and XX, GT or LT options at the same time are not compatible",
              "EXPIRE k 100 NX XX");
    CHECK_ERR(c, "ERR NX and XX, GT or LT options at the same time are not compatible",
              "EXPIRE k 100 NX GT");
    CHECK_ERR(c, "ERR NX and XX, GT or LT options at the same time are not compatible",
              "PEXPIRE k 100 LT NX");
    CHECK_ERR(c, "ERR GT and LT options at the same time are not compatible", "EXPIRE k 100 GT LT");
    CHECK_ERR(c, "ERR Unsupported option foo", "EXPIRE k 100 foo");
    CHECK_ERR(c, "ERR Unsupported option BAR", "PEXPIREAT k 100 BAR");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "EXPIRE k abc");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "PEXPIRE k 1.5");
    CHECK_ERR(c, "ERR invalid expire time in 'expire' command", "EXPIRE k 9223372036854775807");
    CHECK_ERR(c, "ERR invalid expire time in 'pexpire' command", "PEXPIRE k 9223372036854775807");
    CHECK_ERR(c, "ERR invalid expire time in 'expireat' command", "EXPIREAT k 9223372036854775807");
    CHECK_ERR(c, "ERR wrong number of arguments for 'expire' command", "EXPIRE k");
    CHECK_ERR(c, "ERR wrong number of arguments for 'ttl' command", "TTL");
    CHECK_ERR(c, "ERR wrong number of arguments for 'persist' command", "PERSIST");
    CHECK_ERR(c, "ERR wrong number of arguments for 'pexpiretime' command", "PEXPIRETIME a b");
    /* the key still has its TTL after the errors */
    t = num(c, "TTL %s", "k");
    cr_assert(t > 900, "TTL after errors %lld", t);
    redisFree(c);
}

Test(expire, past_times_delete)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "MSET a 1 b 2 c 3 d 4");
    CHECK_INT(c, 1, "EXPIRE a 0");
    CHECK_INT(c, 1, "PEXPIRE b -100");
    CHECK_INT(c, 1, "EXPIREAT c 1");
    CHECK_INT(c, 1, "PEXPIREAT d %lld", e2e_now_ms() - 1);
    CHECK_INT(c, 0, "EXISTS a b c d");
    CHECK_INT(c, 0, "DBSIZE");
    CHECK_OK(c, "SET e 5");
    CHECK_INT(c, 1, "PEXPIRE e -9223372036854775808");
    CHECK_INT(c, 0, "EXISTS e");
    redisFree(c);
}

Test(expire, keys_vanish)
{
    redisContext *c = e2e_connect();
    /* short TTLs; what "before" can be asserted depends on how fast the
     * (maybe loaded, maybe ASan) server answered */
    int64_t t0 = e2e_now_ms();
    CHECK_OK(c, "SET a v PX 300");
    CHECK_OK(c, "SET b v");
    CHECK_INT(c, 1, "PEXPIRE b 300");
    CHECK_OK(c, "SETEX c 20 v"); /* outlives the test, however slow (ASan) */
    CHECK_OK(c, "PSETEX d 300 v");
    CHECK_OK(c, "SET e v PXAT %lld", t0 + 300);
    CHECK_OK(c, "SET f v");
    CHECK_STR(c, "v", "GETEX f PX 300");
    int64_t t1 = e2e_now_ms();
    CHECK_OK(c, "SET keep v");
    redisReply *r = e2e_cmd(c, "EXISTS a b c d e f keep");
    if (e2e_now_ms() - t0 < 250) {
        cr_assert(r->type == REDIS_REPLY_INTEGER && r->integer == 7, "EXISTS before expiry: %s",
                  e2e_reply_str(r));
    }
    freeReplyObject(r);
    /* past the last 300 ms TTL (set at the latest just before t1) */
    e2e_sleep_ms((int)(t1 + 400 - e2e_now_ms() > 0 ? t1 + 400 - e2e_now_ms() : 0));
    CHECK_NIL(c, "GET a");
    CHECK_INT(c, 0, "EXISTS b");
    CHECK_INT(c, -2, "TTL d");
    CHECK_INT(c, -2, "PTTL e");
    CHECK_NIL(c, "GETDEL f");
    if (e2e_now_ms() - t0 < 19000) { /* else too slow to see the 20 s key alive */
        CHECK_STR(c, "v", "GET c");
        CHECK_INT(c, 2, "EXISTS c keep");
    } else {
        CHECK_OK(c, "SET c v"); /* the rest of the test wants c and keep only */
    }
    /* expired keys are not listed */
    r = e2e_cmd(c, "KEYS *");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2, "KEYS after expiry: %s",
              e2e_reply_str(r));
    freeReplyObject(r);
    /* a full SCAN iteration (COUNT is only a hint) */
    size_t seen = 0;
    char cursor[32] = "0";
    do {
        r = e2e_cmd(c, "SCAN %s COUNT 1000", cursor);
        cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2, "SCAN: %s", e2e_reply_str(r));
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        seen += r->element[1]->elements;
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    cr_assert(seen == 2, "SCAN after expiry: %zu keys (want c, keep)", seen);
    /* an expired key behaves as absent for writes too */
    CHECK_OK(c, "SET g 10 PX 30");
    e2e_sleep_ms(80);
    CHECK_INT(c, 1, "INCR g");
    CHECK_INT(c, -1, "TTL g");
    CHECK_OK(c, "SET h abc PX 30");
    e2e_sleep_ms(80);
    CHECK_INT(c, 2, "APPEND h xy");
    CHECK_INT(c, 1, "SETNX h2 v");
    CHECK_OK(c, "SET i v PX 30");
    e2e_sleep_ms(80);
    CHECK_OK(c, "SET i w NX");
    CHECK_INT(c, -1, "TTL i");
    CHECK_OK(c, "SET j v PX 30");
    e2e_sleep_ms(80);
    CHECK_ERR(c, "ERR no such key", "RENAME j j2");
    CHECK_INT(c, 0, "PERSIST j");
    redisFree(c);
}

/* Keys nobody reads are reclaimed in the background (DBSIZE drops). */
Test(expire, active_expiry)
{
    redisContext *c = e2e_connect();
    for (int i = 0; i < 200; i++) {
        redisAppendCommand(c, "SET ae:%d v PX 30", i);
    }
    for (int i = 0; i < 200; i++) {
        redisReply *r;
        cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK);
        freeReplyObject(r);
    }
    CHECK_OK(c, "SET keep v");
    long long n = 0;
    for (int i = 0; i < 40; i++) {
        e2e_sleep_ms(100);
        redisReply *r = e2e_cmd(c, "DBSIZE");
        n = r->integer;
        freeReplyObject(r);
        if (n == 1) {
            break;
        }
    }
    cr_assert_eq(n, 1, "DBSIZE %lld 4 s after 200 keys expired (want 1)", n);
    redisFree(c);
}
