/*
 * e2e_script.c - Lua scripting as Redis 7 has it: EVAL/EVALSHA/EVAL_RO,
 * KEYS and ARGV, the conversions both ways (RESP2 and RESP3 callers), the
 * error texts (runtime, compile, redis.call's, globals), redis.pcall,
 * SCRIPT LOAD/EXISTS/FLUSH/KILL, the cjson, bit and struct libraries,
 * SELECT inside a script, commands that run alone (KEYS) from a script,
 * and atomicity under concurrency (one loop and four).
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(script, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

/* The error of EVAL body numkeys=0: its text up to " script: " (the sha
 * and line follow). */
static void check_script_error(redisContext *c, const char *body, const char *want)
{
    redisReply *r = e2e_cmd(c, "EVAL %s 0", body);
    cr_assert_eq(r->type, REDIS_REPLY_ERROR, "%s: %s", body, e2e_reply_str(r));
    char *tail = strstr(r->str, " script: ");
    cr_assert_not_null(tail, "%s: %s", body, r->str);
    cr_assert(strncmp(r->str, want, strlen(want)) == 0 && tail - r->str == (long)strlen(want),
              "%s: got '%s', wanted '%s script: ...'", body, r->str, want);
    cr_assert_not_null(strstr(tail, ", on @user_script:1."), "%s", r->str);
    freeReplyObject(r);
}

Test(script, conversions)
{
    redisContext *c = e2e_connect();
    CHECK_INT(c, 3, "EVAL %s 0", "return 3.99");
    /* NaN and numbers beyond long long: Redis 7.0's answer on x86-64 (found
     * by fuzz_dispatch, corpus lua_number_beyond_ll: the cast was undefined) */
    CHECK_INT(c, LLONG_MIN, "EVAL %s 0", "return 1/0");
    CHECK_INT(c, LLONG_MIN, "EVAL %s 0", "return 0/0");
    CHECK_INT(c, LLONG_MIN, "EVAL %s 0", "return -1e300");
    CHECK_INT(c, LLONG_MIN, "EVAL %s 0", "return 2^63");
    CHECK_INT(c, LLONG_MIN, "EVAL %s 0", "return -2^63");
    CHECK_ERR_PREFIX(c, "ERR user_script:1: RESP version must be 2 or 3.", "EVAL %s 0",
                     "return redis.setresp(2^40)");
    CHECK_STR(c, "hi", "EVAL %s 0", "return 'hi'");
    CHECK_INT(c, 1, "EVAL %s 0", "return true");
    CHECK_NIL(c, "EVAL %s 0", "return false");
    CHECK_NIL(c, "EVAL %s 0", "return nil");
    CHECK_STATUS(c, "fine", "EVAL %s 0", "return {ok='fine'}");
    CHECK_ERR(c, "bad thing", "EVAL %s 0", "return {err='bad thing'}");
    CHECK_ERR(c, "My Error", "EVAL %s 0", "return redis.error_reply('My Error')");
    CHECK_STATUS(c, "OK2", "EVAL %s 0", "return redis.status_reply('OK2')");
    redisReply *r = e2e_cmd(c, "EVAL %s 0", "return {1, 'two', {3, 'x'}, nil, 5}");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 3, "an array stops at its first nil");
    cr_assert_eq(r->element[0]->integer, 1);
    cr_assert_str_eq(r->element[1]->str, "two");
    cr_assert_eq(r->element[2]->elements, 2);
    freeReplyObject(r);
    /* the reply of redis.call, seen by the script */
    CHECK_OK(c, "SET k v");
    CHECK_STR(c, "string", "EVAL %s 1 k", "return type(redis.call('get', KEYS[1]))");
    CHECK_STR(c, "boolean", "EVAL %s 0", "return type(redis.call('get', 'nosuch'))");
    CHECK_STR(c, "OK", "EVAL %s 0", "return redis.call('set', 'a', 'b').ok");
    CHECK_STR(c, "number", "EVAL %s 0", "return type(redis.call('incr', 'n'))");
    CHECK_INT(c, 2, "EVAL %s 0", "return #redis.call('mget', 'k', 'nosuch')");
    CHECK_STR(c, "v", "EVAL %s 1 k", "return redis.call('mget', KEYS[1], 'nosuch')[1]");
    /* KEYS, ARGV, numbers as arguments */
    r = e2e_cmd(c, "EVAL %s 2 k1 k2 a1 a2 a3",
                "return {KEYS[1], KEYS[2], ARGV[1], ARGV[3], #ARGV}");
    cr_assert_eq(r->elements, 5);
    cr_assert_str_eq(r->element[0]->str, "k1");
    cr_assert_str_eq(r->element[3]->str, "a3");
    cr_assert_eq(r->element[4]->integer, 3);
    freeReplyObject(r);
    CHECK_INT(c, 11, "EVAL %s 0",
              "redis.call('set', 'num', 10) return redis.call('incrby', 'num', 1)");
    redisFree(c);
}

Test(script, errors)
{
    redisContext *c = e2e_connect();
    check_script_error(
        c, "return x",
        "ERR user_script:1: Script attempted to access nonexistent global variable 'x'");
    check_script_error(c, "x = 1", "ERR user_script:1: Attempt to modify a readonly table");
    check_script_error(c, "error('boom')", "ERR user_script:1: boom");
    check_script_error(c, "error({err='X custom'})", "X custom");
    check_script_error(c, "return redis.call('nosuch')",
                       "ERR Unknown Redis command called from script");
    check_script_error(c, "return redis.call('get')",
                       "ERR Wrong number of args calling Redis command from script");
    check_script_error(c, "return redis.call('multi')",
                       "ERR This Redis command is not allowed from script");
    CHECK_OK(c, "SET s abc");
    check_script_error(c, "return redis.call('incr', 's')",
                       "ERR value is not an integer or out of range");
    /* pcall: the error is a value */
    CHECK_ERR(c, "ERR value is not an integer or out of range", "EVAL %s 0",
              "return redis.pcall('incr', 's')");
    CHECK_STR(c, "caught", "EVAL %s 0",
              "local ok = pcall(redis.call, 'incr', 's') if not ok then return 'caught' end");
    CHECK_ERR(c,
              "ERR Error compiling script (new function): user_script:1: '=' expected near 'error'",
              "EVAL %s 0", "syntax error here");
    CHECK_ERR(c, "ERR Number of keys can't be negative", "EVAL %s -1", "return 1");
    CHECK_ERR(c, "ERR Number of keys can't be greater than number of args", "EVAL %s 5 a",
              "return 1");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "EVAL %s x", "return 1");
    CHECK_ERR(c, "ERR wrong number of arguments for 'eval' command", "EVAL %s", "return 1");
    CHECK_ERR(c, "NOSCRIPT No matching script. Please use EVAL.", "EVALSHA %s 0",
              "ffffffffffffffffffffffffffffffffffffffff");
    CHECK_ERR(c, "NOSCRIPT No matching script. Please use EVAL.", "EVALSHA %s 0", "abc");
    CHECK_ERR(c, "NOTBUSY No scripts in execution right now.", "SCRIPT KILL");
    redisFree(c);
}

Test(script, script_cache)
{
    redisContext *c = e2e_connect();
    CHECK_STR(c, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "SCRIPT LOAD %s", "return 1");
    CHECK_INT(c, 1, "EVALSHA %s 0", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
    CHECK_INT(c, 1, "EVALSHA %s 0", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB");
    redisReply *r = e2e_cmd(c, "SCRIPT EXISTS %s %s", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
                            "ffffffffffffffffffffffffffffffffffffffff");
    cr_assert_eq(r->elements, 2);
    cr_assert_eq(r->element[0]->integer, 1);
    cr_assert_eq(r->element[1]->integer, 0);
    freeReplyObject(r);
    /* EVAL caches what it runs */
    CHECK_INT(c, 2, "EVAL %s 0", "return 2");
    CHECK_STR(c, "7f923f79fe76194c868d7e1d0820de36700eb649", "EVAL %s 0",
              "return redis.sha1hex('return 2')");
    CHECK_INT(c, 2, "EVALSHA %s 0", "7f923f79fe76194c868d7e1d0820de36700eb649");
    CHECK_STR(c, "da39a3ee5e6b4b0d3255bfef95601890afd80709", "EVAL %s 0",
              "return redis.sha1hex('')");
    CHECK_OK(c, "SCRIPT FLUSH");
    CHECK_ERR(c, "NOSCRIPT No matching script. Please use EVAL.", "EVALSHA %s 0",
              "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
    CHECK_OK(c, "SCRIPT FLUSH ASYNC");
    CHECK_ERR(c,
              "ERR Error compiling script (new function): user_script:1: unexpected symbol near "
              "'!'",
              "SCRIPT LOAD %s", "!");
    redisFree(c);
}

Test(script, read_only_scripts)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET r 1");
    CHECK_STR(c, "1", "EVAL_RO %s 1 r", "return redis.call('get', KEYS[1])");
    redisReply *r = e2e_cmd(c, "EVAL_RO %s 0", "return redis.call('set', 'r', 2)");
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert_eq(
        strncmp(r->str, "ERR Write commands are not allowed from read-only scripts. script: ", 67),
        0, "%s", r->str);
    freeReplyObject(r);
    CHECK_STR(c, "1", "GET r");
    CHECK_STR(c, "1", "EVALSHA_RO %s 1 r", "4e6d8fc8bb01276962cce5371fa795a7763657ae");
    redisFree(c);
}

Test(script, libraries)
{
    redisContext *c = e2e_connect();
    CHECK_STR(c, "[1,2]", "EVAL %s 0", "return cjson.encode({1,2})");
    CHECK_INT(c, 3, "EVAL %s 0", "return cjson.decode('[1,2,{\"a\":3}]')[3].a");
    CHECK_INT(c, 3, "EVAL %s 0", "return bit.band(7, 3)");
    CHECK_STR(c, "000000ff", "EVAL %s 0", "return bit.tohex(255)");
    CHECK_INT(c, 258, "EVAL %s 0", "return struct.unpack('>I2', struct.pack('>I2', 258))");
    CHECK_INT(c, 6, "EVAL %s 0", "return struct.size('>hI')");
    redisReply *r = e2e_cmd(c, "EVAL %s 0", "return struct.pack('<h', 258)");
    cr_assert_eq(r->len, 2);
    cr_assert(r->str[0] == 2 && r->str[1] == 1);
    freeReplyObject(r);
    /* found by fuzz_dispatch (corpus struct_unpack_i0, struct_out_of_range):
     * each was undefined behaviour (UBSan aborted the server) */
    r = e2e_cmd(c, "EVAL %s 0", "return {struct.unpack('<i0b', 'ab')}");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY, "%s", e2e_reply_str(r));
    cr_assert_eq(r->elements, 3);
    cr_assert(r->element[0]->integer == 0 && r->element[1]->integer == 97 &&
              r->element[2]->integer == 2);
    freeReplyObject(r);
    r = e2e_cmd(c, "EVAL %s 0", "return struct.unpack('bc0', '\\255abc')");
    cr_assert_eq(r->type, REDIS_REPLY_ERROR, "%s", e2e_reply_str(r));
    cr_assert_not_null(strstr(r->str, "data string too short"), "%s", r->str);
    freeReplyObject(r);
    /* numbers no 64-bit integer holds: Redis 7.0's bytes on x86-64 */
    CHECK_INT(c, 1, "EVAL %s 0", "return struct.pack('<i8', 1e300) == '\\0\\0\\0\\0\\0\\0\\0\\0'");
    CHECK_INT(c, 1, "EVAL %s 0",
              "return struct.pack('<i8', -1e300) == '\\0\\0\\0\\0\\0\\0\\0\\128'");
    CHECK_INT(c, 1, "EVAL %s 0", "return struct.pack('<i8', 0/0) == '\\0\\0\\0\\0\\0\\0\\0\\128'");
    CHECK_STR(c, "7.0.15", "EVAL %s 0", "return redis.REDIS_VERSION");
    CHECK_STR(c, "function", "EVAL %s 0", "return type(loadstring)");
    check_script_error(
        c, "return type(os)",
        "ERR user_script:1: Script attempted to access nonexistent global variable 'os'");
    check_script_error(c, "return print",
                       "ERR user_script:1: Script attempted to access nonexistent global variable "
                       "'print'");
    redisFree(c);
}

/* RESP3 callers: nulls are RESP3 nulls, {double=..}, {map=..} and {set=..}
 * their RESP3 types; booleans stay 1 / null as in Redis 7.0. */
Test(script, resp3_caller)
{
    int fd = e2e_raw_open(e2e_srv.port);
    size_t n;
    e2e_raw_send(fd, "HELLO 3\r\n", 9);
    free(e2e_raw_reply(fd, &n, 5000));
    RAW_EXPECT(fd, "EVAL \"return true\" 0\r\n", ":1\r\n");
    RAW_EXPECT(fd, "EVAL \"return false\" 0\r\n", "_\r\n");
    RAW_EXPECT(fd, "EVAL \"return {double=3.5}\" 0\r\n", ",3.5\r\n");
    RAW_EXPECT(fd, "EVAL \"return {map={a=1}}\" 0\r\n", "%1\r\n$1\r\na\r\n:1\r\n");
    RAW_EXPECT(fd, "EVAL \"return {set={a=true}}\" 0\r\n", "~1\r\n$1\r\na\r\n");
    RAW_EXPECT(fd, "EVAL \"return {1,false,3}\" 0\r\n", "*3\r\n:1\r\n_\r\n:3\r\n");
    RAW_EXPECT(fd, "EVAL \"return redis.call('get','nosuch')\" 0\r\n", "_\r\n");
    close(fd);
    fd = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(fd, "EVAL \"return {double=3.5}\" 0\r\n", "$3\r\n3.5\r\n");
    RAW_EXPECT(fd, "EVAL \"return {map={a=1}}\" 0\r\n", "*2\r\n$1\r\na\r\n:1\r\n");
    RAW_EXPECT(fd, "EVAL \"return {1,false,3}\" 0\r\n", "*3\r\n:1\r\n$-1\r\n:3\r\n");
    /* the script's own protocol: a RESP3 null is Lua nil */
    RAW_EXPECT(fd, "EVAL \"redis.setresp(3) return type(redis.call('get','nosuch'))\" 0\r\n",
               "$3\r\nnil\r\n");
    close(fd);
}

Test(script, select_and_keyspace_commands_inside)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET here 0");
    CHECK_STR(c, "1", "EVAL %s 0",
              "redis.call('select', 1) redis.call('set', 'there', 1) return redis.call('get', "
              "'there')");
    CHECK_NIL(c, "GET there"); /* the caller stays on database 0 */
    CHECK_OK(c, "SELECT 1");
    CHECK_STR(c, "1", "GET there");
    CHECK_OK(c, "SELECT 0");
    CHECK_INT(c, 1, "EVAL %s 0", "return redis.call('dbsize')");
    CHECK_INT(c, 1, "EVAL %s 0", "return #redis.call('keys', '*')");
    /* many calls in one script, each seeing the one before */
    CHECK_INT(c, 1000, "EVAL %s 0",
              "for i = 1, 1000 do redis.call('incr', 'many') end return tonumber(redis.call('get', "
              "'many'))");
    redisFree(c);
}

/* A script is atomic: INCR and GET inside one never see another client's
 * INCR between them. */
enum { SC_THREADS = 8, SC_ROUNDS = 300 };
static atomic_int sc_failures;
static char sc_failure[256];

static void *sc_worker(void *arg)
{
    (void)arg;
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", e2e_srv.port, tv);
    if (c == NULL || c->err) {
        atomic_fetch_add(&sc_failures, 1);
        return NULL;
    }
    const char *body = "local a = redis.call('incr', KEYS[1]) redis.call('set', 'other', a) "
                       "local b = tonumber(redis.call('get', KEYS[1])) return {a, b}";
    for (int round = 0; round < SC_ROUNDS / 10; round++) {
        for (int k = 0; k < 10; k++) {
            redisAppendCommand(c, "EVAL %s 1 shared", body);
        }
        for (int k = 0; k < 10; k++) {
            redisReply *r;
            if (redisGetReply(c, (void **)&r) != REDIS_OK) {
                atomic_fetch_add(&sc_failures, 1);
                redisFree(c);
                return NULL;
            }
            bool ok = r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                      r->element[0]->integer == r->element[1]->integer;
            if (!ok && atomic_fetch_add(&sc_failures, 1) == 0) {
                snprintf(sc_failure, sizeof(sc_failure), "%s", e2e_reply_str(r));
            }
            freeReplyObject(r);
        }
    }
    redisFree(c);
    return NULL;
}

static void run_sc_workers(void)
{
    pthread_t t[SC_THREADS];
    for (int i = 0; i < SC_THREADS; i++) {
        pthread_create(&t[i], NULL, sc_worker, NULL);
    }
    for (int i = 0; i < SC_THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    cr_assert_eq(atomic_load(&sc_failures), 0, "%d scripts were interleaved: %s",
                 atomic_load(&sc_failures), sc_failure);
    redisContext *c = e2e_connect();
    char want[32];
    snprintf(want, sizeof(want), "%d", SC_THREADS * SC_ROUNDS);
    CHECK_STR(c, want, "GET shared");
    redisFree(c);
}

Test(script, atomic_under_concurrency)
{
    run_sc_workers();
}

Test(script, atomic_under_concurrency_io_threads)
{
    e2e_stop(&e2e_srv);
    const char *o[] = {"--io-threads", "4", NULL};
    cr_assert(e2e_start(&e2e_srv, o) == 0);
    run_sc_workers();
}
