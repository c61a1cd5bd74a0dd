/*
 * e2e_strings.c - string commands over the wire: GET, SET with every option
 * and its syntax errors, SETNX, SETEX, PSETEX, GETSET, GETDEL, GETEX, MGET,
 * MSET, MSETNX, APPEND, STRLEN, GETRANGE, SETRANGE, the INCR family and
 * INCRBYFLOAT; binary-safe keys and values; big values; pipelining of
 * 100,000 commands on one connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(strings, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

static long long pttl(redisContext *c, const char *key)
{
    redisReply *r = e2e_cmd(c, "PTTL %s", key);
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER, "PTTL %s: %s", key, e2e_reply_str(r));
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

Test(strings, get_set)
{
    redisContext *c = e2e_connect();
    CHECK_NIL(c, "GET k");
    CHECK_OK(c, "SET k v1");
    CHECK_STR(c, "v1", "GET k");
    CHECK_OK(c, "SET k v2");
    CHECK_STR(c, "v2", "GET k");
    CHECK_OK(c, "SET %b %b", "", (size_t)0, "", (size_t)0);
    CHECK_STR(c, "", "GET %b", "", (size_t)0);
    CHECK_INT(c, 1, "EXISTS %b", "", (size_t)0);
    CHECK_OK(c, "set lower case");
    CHECK_STR(c, "case", "get lower");
    redisFree(c);
}

Test(strings, set_options)
{
    redisContext *c = e2e_connect();
    /* NX / XX */
    CHECK_NIL(c, "SET k v XX");
    CHECK_NIL(c, "GET k");
    CHECK_OK(c, "SET k v NX");
    CHECK_NIL(c, "SET k w NX");
    CHECK_STR(c, "v", "GET k");
    CHECK_OK(c, "SET k w XX");
    CHECK_STR(c, "w", "GET k");
    /* GET */
    CHECK_STR(c, "w", "SET k x GET");
    CHECK_NIL(c, "SET new y GET");
    CHECK_STR(c, "y", "GET new");
    CHECK_STR(c, "x", "SET k z NX GET"); /* exists: not set, old value returned */
    CHECK_STR(c, "x", "GET k");
    CHECK_NIL(c, "SET absent1 z XX GET");
    CHECK_INT(c, 0, "EXISTS absent1");
    CHECK_NIL(c, "SET absent2 z NX GET");
    CHECK_STR(c, "z", "GET absent2");
    CHECK_STR(c, "x", "SET k v2 XX GET");
    /* EX / PX / EXAT / PXAT */
    CHECK_OK(c, "SET e v EX 100");
    long long t = pttl(c, "e");
    cr_assert(t > 98000 && t <= 100000, "PTTL after EX 100: %lld", t);
    CHECK_OK(c, "SET e v PX 5000");
    t = pttl(c, "e");
    cr_assert(t > 3000 && t <= 5000, "PTTL after PX 5000: %lld", t);
    long long now = e2e_now_ms();
    CHECK_OK(c, "SET e v EXAT %lld", now / 1000 + 200);
    t = pttl(c, "e");
    cr_assert(t > 195000 && t <= 200000, "PTTL after EXAT: %lld", t);
    CHECK_OK(c, "SET e v PXAT %lld", now + 300000);
    t = pttl(c, "e");
    cr_assert(t > 295000 && t <= 300000, "PTTL after PXAT: %lld", t);
    /* a plain SET clears the TTL, KEEPTTL keeps it */
    CHECK_OK(c, "SET e v2 KEEPTTL");
    t = pttl(c, "e");
    cr_assert(t > 295000 && t <= 300000, "PTTL after KEEPTTL: %lld", t);
    CHECK_STR(c, "v2", "GET e");
    CHECK_OK(c, "SET e v3");
    CHECK_INT(c, -1, "PTTL e");
    CHECK_OK(c, "SET e v4 KEEPTTL");
    CHECK_INT(c, -1, "PTTL e");
    /* combinations */
    CHECK_OK(c, "SET f v NX PX 100000");
    t = pttl(c, "f");
    cr_assert(t > 90000, "PTTL after NX PX: %lld", t);
    CHECK_STR(c, "v", "SET f w XX EX 50 GET");
    t = pttl(c, "f");
    cr_assert(t > 45000 && t <= 50000, "PTTL after XX EX GET: %lld", t);
    CHECK_STR(c, "w", "SET f x KEEPTTL GET");
    t = pttl(c, "f");
    cr_assert(t > 45000 && t <= 50000, "PTTL after KEEPTTL GET: %lld", t);
    /* options are case-insensitive and in any order */
    CHECK_OK(c, "SET g v px 100000 nx");
    CHECK_STR(c, "v", "SET g w get keepttl xx");
    /* past EXAT/PXAT: the key is set and gone at once */
    CHECK_OK(c, "SET h v PXAT %lld", now - 10000);
    CHECK_NIL(c, "GET h");
    CHECK_INT(c, 0, "EXISTS h");
    redisFree(c);
}

Test(strings, set_errors)
{
    redisContext *c = e2e_connect();
    const char *syntax[] = {"SET k v NX XX",         "SET k v EX 10 PX 100",
                            "SET k v EX 10 PXAT 10", "SET k v KEEPTTL EX 10",
                            "SET k v PX 10 KEEPTTL", "SET k v EXAT 10 PXAT 10",
                            "SET k v FOO",           "SET k v EX",
                            "SET k v NX NX FOO",     "SET k v GET GET FOO",
                            "SET k v XX NX"};
    for (size_t i = 0; i < sizeof(syntax) / sizeof(*syntax); i++) {
        CHECK_ERR(c, "ERR syntax error", syntax[i]);
    }
    const char *expire[] = {"SET k v EX 0",
                            "SET k v EX -1",
                            "SET k v PX 0",
                            "SET k v PX -5",
                            "SET k v EXAT 0",
                            "SET k v PXAT -1",
                            "SET k v EX 9999999999999999",
                            "SET k v PX 9223372036854775807"};
    for (size_t i = 0; i < sizeof(expire) / sizeof(*expire); i++) {
        CHECK_ERR(c, "ERR invalid expire time in 'set' command", expire[i]);
    }
    CHECK_ERR(c, "ERR value is not an integer or out of range", "SET k v EX abc");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "SET k v PX 1.5");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "SET k v EX 99999999999999999999");
    /* nothing was written by the failed commands */
    CHECK_INT(c, 0, "EXISTS k");
    redisFree(c);
}

Test(strings, setnx_setex_psetex_getset)
{
    redisContext *c = e2e_connect();
    CHECK_INT(c, 1, "SETNX a 1");
    CHECK_INT(c, 0, "SETNX a 2");
    CHECK_STR(c, "1", "GET a");
    CHECK_OK(c, "SETEX b 100 v");
    long long t = pttl(c, "b");
    cr_assert(t > 98000 && t <= 100000, "PTTL after SETEX: %lld", t);
    CHECK_STR(c, "v", "GET b");
    CHECK_OK(c, "PSETEX p 100000 v");
    t = pttl(c, "p");
    cr_assert(t > 98000 && t <= 100000, "PTTL after PSETEX: %lld", t);
    CHECK_ERR(c, "ERR invalid expire time in 'setex' command", "SETEX b 0 v");
    CHECK_ERR(c, "ERR invalid expire time in 'setex' command", "SETEX b -10 v");
    CHECK_ERR(c, "ERR invalid expire time in 'psetex' command", "PSETEX b -1 v");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "SETEX b x v");
    CHECK_ERR(c, "ERR wrong number of arguments for 'setex' command", "SETEX b 10");
    CHECK_ERR(c, "ERR wrong number of arguments for 'setnx' command", "SETNX b");
    CHECK_NIL(c, "GETSET g 1");
    CHECK_STR(c, "1", "GETSET g 2");
    CHECK_STR(c, "2", "GET g");
    /* GETSET clears the TTL */
    CHECK_STR(c, "v", "GETSET b w");
    CHECK_INT(c, -1, "TTL b");
    CHECK_ERR(c, "ERR wrong number of arguments for 'getset' command", "GETSET g");
    redisFree(c);
}

Test(strings, getdel_getex)
{
    redisContext *c = e2e_connect();
    CHECK_NIL(c, "GETDEL k");
    CHECK_OK(c, "SET k v");
    CHECK_STR(c, "v", "GETDEL k");
    CHECK_INT(c, 0, "EXISTS k");
    CHECK_NIL(c, "GETEX k");
    CHECK_NIL(c, "GETEX k EX 10");
    CHECK_INT(c, 0, "EXISTS k");
    CHECK_OK(c, "SET k v");
    CHECK_STR(c, "v", "GETEX k");
    CHECK_INT(c, -1, "TTL k");
    CHECK_STR(c, "v", "GETEX k EX 100");
    long long t = pttl(c, "k");
    cr_assert(t > 98000 && t <= 100000, "PTTL after GETEX EX: %lld", t);
    CHECK_STR(c, "v", "GETEX k PX 50000");
    t = pttl(c, "k");
    cr_assert(t > 48000 && t <= 50000, "PTTL after GETEX PX: %lld", t);
    long long now = e2e_now_ms();
    CHECK_STR(c, "v", "GETEX k EXAT %lld", now / 1000 + 300);
    t = pttl(c, "k");
    cr_assert(t > 295000 && t <= 300000, "PTTL after GETEX EXAT: %lld", t);
    CHECK_STR(c, "v", "GETEX k PXAT %lld", now + 400000);
    t = pttl(c, "k");
    cr_assert(t > 395000 && t <= 400000, "PTTL after GETEX PXAT: %lld", t);
    CHECK_STR(c, "v", "GETEX k PERSIST");
    CHECK_INT(c, -1, "PTTL k");
    /* GETEX with a past time returns the value and deletes the key */
    CHECK_STR(c, "v", "GETEX k PXAT %lld", now - 1000);
    CHECK_INT(c, 0, "EXISTS k");
    CHECK_OK(c, "SET k v");
    CHECK_ERR(c, "ERR invalid expire time in 'getex' command", "GETEX k EX 0");
    CHECK_ERR(c, "ERR invalid expire time in 'getex' command", "GETEX k PX -1");
    CHECK_ERR(c, "ERR syntax error", "GETEX k PERSIST EX 10");
    CHECK_ERR(c, "ERR syntax error", "GETEX k EX 10 PX 10");
    CHECK_ERR(c, "ERR syntax error", "GETEX k FOO");
    CHECK_ERR(c, "ERR syntax error", "GETEX k EX");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "GETEX k EX ten");
    CHECK_ERR(c, "ERR wrong number of arguments for 'getdel' command", "GETDEL");
    CHECK_ERR(c, "ERR wrong number of arguments for 'getex' command", "GETEX");
    CHECK_INT(c, -1, "TTL k");
    redisFree(c);
}

Test(strings, mget_mset_msetnx)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "MSET a 1 b 2 c 3");
    redisReply *r = e2e_cmd(c, "MGET a nope b c a");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 5, "MGET: %s", e2e_reply_str(r));
    const char *want[] = {"1", NULL, "2", "3", "1"};
    for (int i = 0; i < 5; i++) {
        if (want[i]) {
            cr_assert(r->element[i]->type == REDIS_REPLY_STRING &&
                          strcmp(r->element[i]->str, want[i]) == 0,
                      "MGET[%d] = %s", i, e2e_reply_str(r->element[i]));
        } else {
            cr_assert_eq(r->element[i]->type, REDIS_REPLY_NIL, "MGET[%d] = %s", i,
                         e2e_reply_str(r->element[i]));
        }
    }
    freeReplyObject(r);
    /* MSET with a repeated key: the last value wins */
    CHECK_OK(c, "MSET d 1 d 2 d 3");
    CHECK_STR(c, "3", "GET d");
    /* MSET clears TTLs */
    CHECK_OK(c, "SET t v EX 100");
    CHECK_OK(c, "MSET t w");
    CHECK_INT(c, -1, "TTL t");
    CHECK_INT(c, 0, "MSETNX x 1 a 9");
    CHECK_INT(c, 0, "EXISTS x");
    CHECK_STR(c, "1", "GET a");
    CHECK_INT(c, 1, "MSETNX x 1 y 2");
    CHECK_STR(c, "1", "GET x");
    CHECK_STR(c, "2", "GET y");
    CHECK_ERR(c, "ERR wrong number of arguments for 'mget' command", "MGET");
    CHECK_ERR(c, "ERR wrong number of arguments for 'msetnx' command", "MSETNX a 1 b");
    redisFree(c);
}

Test(strings, append_strlen_ranges)
{
    redisContext *c = e2e_connect();
    CHECK_INT(c, 0, "STRLEN k");
    CHECK_INT(c, 5, "APPEND k hello");
    CHECK_INT(c, 11, "APPEND k %s", " world");
    CHECK_STR(c, "hello world", "GET k");
    CHECK_INT(c, 11, "STRLEN k");
    CHECK_INT(c, 11, "APPEND k %b", "", (size_t)0);
    /* APPEND keeps the TTL */
    CHECK_OK(c, "SET t ab PX 100000");
    CHECK_INT(c, 4, "APPEND t cd");
    cr_assert(pttl(c, "t") > 90000);
    CHECK_STR(c, "hello", "GETRANGE k 0 4");
    CHECK_STR(c, "world", "GETRANGE k -5 -1");
    CHECK_STR(c, "hello world", "GETRANGE k 0 -1");
    CHECK_STR(c, "hello world", "GETRANGE k -100 100");
    CHECK_STR(c, "", "GETRANGE k 5 3");
    CHECK_STR(c, "", "GETRANGE k 20 30");
    CHECK_STR(c, "d", "GETRANGE k -1 -1");
    CHECK_STR(c, "", "GETRANGE nope 0 -1");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "GETRANGE k a 1");
    CHECK_ERR(c, "ERR wrong number of arguments for 'getrange' command", "GETRANGE k 1");
    CHECK_INT(c, 11, "SETRANGE k 6 WORLD");
    CHECK_STR(c, "hello WORLD", "GET k");
    CHECK_INT(c, 13, "SETRANGE k 11 !!");
    CHECK_STR(c, "hello WORLD!!", "GET k");
    /* zero padding */
    CHECK_INT(c, 5, "SETRANGE pad 3 ab");
    redisReply *r = e2e_cmd(c, "GET pad");
    cr_assert(r->type == REDIS_REPLY_STRING && r->len == 5 && memcmp(r->str, "\0\0\0ab", 5) == 0,
              "GET pad: %s", e2e_reply_str(r));
    freeReplyObject(r);
    /* an empty SETRANGE on a missing key creates nothing */
    CHECK_INT(c, 0, "SETRANGE none 5 %b", "", (size_t)0);
    CHECK_INT(c, 0, "EXISTS none");
    CHECK_INT(c, 13, "SETRANGE k 100 %b", "", (size_t)0);
    CHECK_ERR(c, "ERR offset is out of range", "SETRANGE k -1 x");
    CHECK_ERR(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
              "SETRANGE k 536870911 xx");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "SETRANGE k x y");
    CHECK_ERR(c, "ERR wrong number of arguments for 'append' command", "APPEND k");
    CHECK_ERR(c, "ERR wrong number of arguments for 'strlen' command", "STRLEN");
    redisFree(c);
}

Test(strings, incr_family)
{
    redisContext *c = e2e_connect();
    CHECK_INT(c, 1, "INCR n");
    CHECK_INT(c, 2, "INCR n");
    CHECK_INT(c, 1, "DECR n");
    CHECK_INT(c, 11, "INCRBY n 10");
    CHECK_INT(c, -9, "DECRBY n 20");
    CHECK_INT(c, -1, "DECR m");
    CHECK_INT(c, -5, "INCRBY o -5");
    CHECK_STR(c, "-9", "GET n");
    /* INCR keeps the TTL */
    CHECK_OK(c, "SET t 5 PX 100000");
    CHECK_INT(c, 6, "INCR t");
    cr_assert(pttl(c, "t") > 90000);
    CHECK_OK(c, "SET max 9223372036854775807");
    CHECK_ERR(c, "ERR increment or decrement would overflow", "INCR max");
    CHECK_ERR(c, "ERR increment or decrement would overflow", "INCRBY max 1");
    CHECK_INT(c, 9223372036854775806LL, "DECR max");
    CHECK_OK(c, "SET min -9223372036854775808");
    CHECK_ERR(c, "ERR increment or decrement would overflow", "DECR min");
    CHECK_ERR(c, "ERR increment or decrement would overflow", "DECRBY min 1");
    CHECK_ERR(c, "ERR decrement would overflow", "DECRBY n -9223372036854775808");
    CHECK_STR(c, "-9223372036854775808", "GET min");
    const char *bad[] = {"abc", " 12", "12 ", "012", "1.5", "", "99999999999999999999", "+1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        CHECK_OK(c, "SET s %s", bad[i]);
        CHECK_ERR(c, "ERR value is not an integer or out of range", "INCR s");
    }
    CHECK_OK(c, "SET s 0");
    CHECK_INT(c, 1, "INCR s");
    CHECK_OK(c, "SET s -0");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "INCR s");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "INCRBY n abc");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "INCRBY n 1.5");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "DECRBY n 99999999999999999999");
    CHECK_ERR(c, "ERR wrong number of arguments for 'incr' command", "INCR");
    CHECK_ERR(c, "ERR wrong number of arguments for 'decrby' command", "DECRBY n");
    redisFree(c);
}

Test(strings, incrbyfloat)
{
    redisContext *c = e2e_connect();
    CHECK_STR(c, "1.5", "INCRBYFLOAT f 1.5");
    /* a number is the whole string: an embedded NUL makes it none */
    CHECK_OK(c, "SET nul %b", "1\0", (size_t)2);
    CHECK_ERR(c, "ERR value is not a valid float", "INCRBYFLOAT nul 1");
    CHECK_ERR(c, "ERR value is not a valid float", "INCRBYFLOAT f %b", "1\0", (size_t)2);
    CHECK_ERR(c, "ERR value is not an integer or out of range", "INCR nul");
    CHECK_OK(c, "SET f 10.50");
    CHECK_STR(c, "10.6", "INCRBYFLOAT f 0.1");
    CHECK_STR(c, "10.6", "GET f");
    CHECK_OK(c, "SET f 5.0e3");
    CHECK_STR(c, "5200", "INCRBYFLOAT f 2.0e2");
    CHECK_STR(c, "0", "INCRBYFLOAT f -5200");
    CHECK_OK(c, "SET i 3");
    CHECK_STR(c, "3.25", "INCRBYFLOAT i 0.25");
    CHECK_STR(c, "-1.75", "INCRBYFLOAT i -5");
    CHECK_STR(c, "3", "INCRBYFLOAT j 3");
    CHECK_ERR(c, "ERR value is not a valid float", "INCRBYFLOAT f abc");
    CHECK_ERR(c, "ERR value is not a valid float", "INCRBYFLOAT f nan");
    CHECK_OK(c, "SET s abc");
    CHECK_ERR(c, "ERR value is not a valid float", "INCRBYFLOAT s 1");
    CHECK_OK(c, "SET s %s", "1 ");
    CHECK_ERR(c, "ERR value is not a valid float", "INCRBYFLOAT s 1");
    CHECK_ERR(c, "ERR wrong number of arguments for 'incrbyfloat' command", "INCRBYFLOAT f");
    /* INCRBYFLOAT keeps the TTL */
    CHECK_OK(c, "SET t 1 PX 100000");
    CHECK_STR(c, "1.5", "INCRBYFLOAT t 0.5");
    cr_assert(pttl(c, "t") > 90000);
    redisFree(c);
}

Test(strings, binary_values)
{
    redisContext *c = e2e_connect();
    const char key[] = "k\0e\r\ny";
    const char val[] = "a\0b\r\nc\r\n\0$5\r\n*1\r\n";
    size_t kl = sizeof(key) - 1, vl = sizeof(val) - 1;
    CHECK_OK(c, "SET %b %b", key, kl, val, vl);
    redisReply *r = e2e_cmd(c, "GET %b", key, kl);
    cr_assert(r->type == REDIS_REPLY_STRING && r->len == vl && memcmp(r->str, val, vl) == 0,
              "binary GET: %s", e2e_reply_str(r));
    freeReplyObject(r);
    CHECK_INT(c, (long long)vl, "STRLEN %b", key, kl);
    CHECK_NIL(c, "GET %b", key, (size_t)1); /* "k" is another key */
    r = e2e_cmd(c, "KEYS *");
    cr_assert(r->elements == 1 && r->element[0]->len == kl &&
              memcmp(r->element[0]->str, key, kl) == 0);
    freeReplyObject(r);
    /* every byte value */
    char all[256];
    for (int i = 0; i < 256; i++) {
        all[i] = (char)i;
    }
    CHECK_OK(c, "SET %b %b", all, sizeof(all), all, sizeof(all));
    r = e2e_cmd(c, "MGET %b %b", all, sizeof(all), key, kl);
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    cr_assert(r->element[0]->len == 256 && memcmp(r->element[0]->str, all, 256) == 0);
    cr_assert(r->element[1]->len == vl && memcmp(r->element[1]->str, val, vl) == 0);
    freeReplyObject(r);
    CHECK_INT(c, 256 + 3, "APPEND %b %b", all, sizeof(all), "\0\r\n", (size_t)3);
    r = e2e_cmd(c, "GETRANGE %b 254 -1", all, sizeof(all));
    cr_assert(r->len == 5 && memcmp(r->str, "\xfe\xff\0\r\n", 5) == 0, "GETRANGE: %s",
              e2e_reply_str(r));
    freeReplyObject(r);
    redisFree(c);
}

static void big_roundtrip(size_t n)
{
    redisContext *c = e2e_connect();
    char *v = malloc(n);
    for (size_t i = 0; i < n; i++) {
        v[i] = (char)(i * 2654435761u >> 13);
    }
    CHECK_OK(c, "SET big %b", v, n);
    redisReply *r = e2e_cmd(c, "GET big");
    cr_assert(r->type == REDIS_REPLY_STRING && r->len == n && memcmp(r->str, v, n) == 0,
              "GET of %zu bytes: %s", n, e2e_reply_str(r));
    freeReplyObject(r);
    CHECK_INT(c, (long long)n, "STRLEN big");
    r = e2e_cmd(c, "GETRANGE big %lld %lld", (long long)n / 2, (long long)n / 2 + 99);
    cr_assert(r->len == 100 && memcmp(r->str, v + n / 2, 100) == 0);
    freeReplyObject(r);
    CHECK_INT(c, (long long)n + 3, "APPEND big abc");
    CHECK_INT(c, (long long)n + 3, "STRLEN big");
    free(v);
    redisFree(c);
}

Test(strings, value_512k)
{
    big_roundtrip(512 * 1024);
}

Test(strings, value_4m)
{
    big_roundtrip(4 * 1024 * 1024);
}

Test(strings, big_key)
{
    redisContext *c = e2e_connect();
    size_t n = 60000;
    char *k = malloc(n);
    memset(k, 'k', n);
    CHECK_OK(c, "SET %b v", k, n);
    CHECK_STR(c, "v", "GET %b", k, n);
    free(k);
    redisFree(c);
}

/* 100,000 commands written before any reply is read; replies in order. */
Test(strings, pipeline_100k)
{
    redisContext *c = e2e_connect();
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        switch (i % 4) {
        case 0: redisAppendCommand(c, "SET p:%d v%d", i, i); break;
        case 1: redisAppendCommand(c, "GET p:%d", i - 1); break;
        case 2: redisAppendCommand(c, "INCR counter"); break;
        default: redisAppendCommand(c, "GET p:%d", i); break;
        }
    }
    long long incrs = 0;
    for (int i = 0; i < n; i++) {
        redisReply *r = NULL;
        cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK, "reply %d: connection error %s", i,
                  c->errstr);
        bool ok;
        char want[32];
        switch (i % 4) {
        case 0: ok = r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0; break;
        case 1:
            snprintf(want, sizeof(want), "v%d", i - 1);
            ok = r->type == REDIS_REPLY_STRING && strcmp(r->str, want) == 0;
            break;
        case 2: ok = r->type == REDIS_REPLY_INTEGER && r->integer == ++incrs; break;
        default: ok = r->type == REDIS_REPLY_NIL; break;
        }
        cr_assert(ok, "pipeline reply %d (cmd kind %d) out of order or wrong: %s", i, i % 4,
                  e2e_reply_str(r));
        freeReplyObject(r);
    }
    CHECK_INT(c, n / 4 + 1, "DBSIZE"); /* p:0, p:4, ... and counter */
    redisFree(c);
}

/* Reply k of round i of a pipeline; fails the test when the connection broke. */
static redisReply *pipeline_reply(redisContext *c, int i, int k)
{
    redisReply *r = NULL;
    cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK, "round %d reply %d: %s", i, k, c->errstr);
    return r;
}

static bool is_error(const redisReply *r, const char *want)
{
    return r->type == REDIS_REPLY_ERROR && strcmp(r->str, want) == 0;
}

/* Errors found before the engine runs (unknown command, wrong arity, a bad
 * argument, an unknown subcommand) between batched commands of a pipeline:
 * every reply in the order the commands came. */
Test(strings, pipeline_errors_in_order)
{
    redisContext *c = e2e_connect();
    const int rounds = 2000;
    for (int i = 0; i < rounds; i++) {
        redisAppendCommand(c, "SET e:%d v%d", i, i);
        redisAppendCommand(c, "NOSUCHCMD %d", i);
        redisAppendCommand(c, "GET e:%d", i);
        redisAppendCommand(c, "INCRBY e:n notanumber");
        redisAppendCommand(c, "INCR e:n");
        redisAppendCommand(c, "GET");
        redisAppendCommand(c, "CONFIG NOSUCHSUB");
        redisAppendCommand(c, "PING p%d", i);
    }
    for (int i = 0; i < rounds; i++) {
        char want[128];
        for (int k = 0; k < 8; k++) {
            redisReply *r = pipeline_reply(c, i, k);
            bool ok = false;
            switch (k) {
            case 0: ok = r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0; break;
            case 1:
                snprintf(want, sizeof(want),
                         "ERR unknown command 'NOSUCHCMD', with args beginning with: '%d' ", i);
                ok = is_error(r, want);
                break;
            case 2:
                snprintf(want, sizeof(want), "v%d", i);
                ok = r->type == REDIS_REPLY_STRING && strcmp(r->str, want) == 0;
                break;
            case 3: ok = is_error(r, "ERR value is not an integer or out of range"); break;
            case 4: ok = r->type == REDIS_REPLY_INTEGER && r->integer == i + 1; break;
            case 5: ok = is_error(r, "ERR wrong number of arguments for 'get' command"); break;
            case 6:
                ok = r->type == REDIS_REPLY_ERROR &&
                     strncmp(r->str, "ERR unknown subcommand 'NOSUCHSUB'", 34) == 0;
                break;
            default:
                snprintf(want, sizeof(want), "p%d", i);
                ok = r->type == REDIS_REPLY_STRING && strcmp(r->str, want) == 0;
                break;
            }
            cr_assert(ok, "round %d reply %d out of order or wrong: %s", i, k, e2e_reply_str(r));
            freeReplyObject(r);
        }
    }
    redisFree(c);
}

/* Regression, found by bench/soak (engine-pipeline yes): a command whose key
 * conflicts with the open batch seals it, which first answers the batch in
 * flight into the client's output; when the command then failed its
 * arguments at once (SET k v EX 0), the dispatcher took everything written
 * since the command began, those earlier replies included, and queued it
 * behind the batch it had just sealed: SET's OK came after INCR's error. */
Test(strings, pipeline_conflict_then_argument_error_in_order)
{
    redisContext *c = e2e_connect();
    const int rounds = 500;
    for (int i = 0; i < rounds; i++) {
        redisAppendCommand(c, "SET ce:%d notanumber", i);
        redisAppendCommand(c, "INCR ce:%d", i);
        redisAppendCommand(c, "SET ce:%d x EX 0", i);
        redisAppendCommand(c, "GET ce:%d", i);
    }
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 4; k++) {
            redisReply *r = pipeline_reply(c, i, k);
            bool ok = false;
            switch (k) {
            case 0: ok = r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0; break;
            case 1: ok = is_error(r, "ERR value is not an integer or out of range"); break;
            case 2: ok = is_error(r, "ERR invalid expire time in 'set' command"); break;
            default: ok = r->type == REDIS_REPLY_STRING && strcmp(r->str, "notanumber") == 0; break;
            }
            cr_assert(ok, "round %d reply %d out of order or wrong: %s", i, k, e2e_reply_str(r));
            freeReplyObject(r);
        }
    }
    redisFree(c);
}
