/*
 * e2e_basic.c - connection and keyspace commands over the wire: PING, ECHO,
 * SELECT, unknown commands and arity errors, inline commands, QUIT, TIME,
 * DEL/UNLINK/EXISTS/TOUCH/TYPE/RENAME/RENAMENX, DBSIZE/FLUSHDB/FLUSHALL,
 * KEYS/SCAN/RANDOMKEY, INFO, CONFIG, COMMAND, CLIENT, MEMORY USAGE,
 * SHUTDOWN. Every expected reply is Redis 7.0's (checked against it).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(basic, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);
TestSuite(cudis_only, .init = e2e_setup_cudis, .fini = e2e_teardown, .timeout = 60);

Test(basic, ping_echo)
{
    redisContext *c = e2e_connect();
    CHECK_STATUS(c, "PONG", "PING");
    CHECK_STR(c, "hello world", "PING %s", "hello world");
    CHECK_ERR(c, "ERR wrong number of arguments for 'ping' command", "PING a b");
    CHECK_STR(c, "x y", "ECHO %s", "x y");
    CHECK_STR(c, "", "ECHO %s", "");
    CHECK_ERR(c, "ERR wrong number of arguments for 'echo' command", "ECHO");
    CHECK_ERR(c, "ERR wrong number of arguments for 'echo' command", "ECHO a b");
    redisFree(c);
}

Test(basic, unix_socket)
{
    redisContext *c = e2e_connect_unix();
    CHECK_STATUS(c, "PONG", "PING");
    CHECK_OK(c, "SET %s %s", "u", "1");
    redisFree(c);
    c = e2e_connect();
    CHECK_STR(c, "1", "GET u");
    redisFree(c);
}

Test(basic, unknown_and_arity)
{
    redisContext *c = e2e_connect();
    CHECK_ERR(c, "ERR unknown command 'FOO', with args beginning with: 'a' 'b' ", "FOO a b");
    CHECK_ERR(c, "ERR unknown command 'NoSuchCmd', with args beginning with: ", "NoSuchCmd");
    /* the command name is reported as typed, lower case in arity errors */
    CHECK_ERR(c, "ERR wrong number of arguments for 'get' command", "GET");
    CHECK_ERR(c, "ERR wrong number of arguments for 'get' command", "gEt a b");
    CHECK_ERR(c, "ERR wrong number of arguments for 'set' command", "SET a");
    CHECK_ERR(c, "ERR wrong number of arguments for 'mset' command", "MSET a b c");
    CHECK_ERR(c, "ERR wrong number of arguments for 'mset' command", "MSET");
    CHECK_ERR(c, "ERR wrong number of arguments for 'msetnx' command", "MSETNX a");
    CHECK_ERR(c, "ERR wrong number of arguments for 'del' command", "DEL");
    CHECK_ERR(c, "ERR wrong number of arguments for 'exists' command", "EXISTS");
    CHECK_ERR(c, "ERR wrong number of arguments for 'incrby' command", "INCRBY a");
    CHECK_ERR(c, "ERR wrong number of arguments for 'expire' command", "EXPIRE a");
    CHECK_ERR(c, "ERR wrong number of arguments for 'dbsize' command", "DBSIZE x");
    CHECK_ERR(c, "ERR wrong number of arguments for 'rename' command", "RENAME a");
    CHECK_ERR(c, "ERR wrong number of arguments for 'config|get' command", "CONFIG GET");
    CHECK_ERR(c, "ERR unknown subcommand 'foo'. Try CONFIG HELP.", "CONFIG foo");
    CHECK_ERR(c, "ERR unknown subcommand 'Foo'. Try CLIENT HELP.", "CLIENT Foo");
    CHECK_ERR(c, "ERR wrong number of arguments for 'client' command", "CLIENT");
    /* the connection still works after errors */
    CHECK_STATUS(c, "PONG", "PING");
    redisFree(c);
}

Test(basic, select)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SELECT 0");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "SELECT abc");
    CHECK_ERR(c, "ERR DB index is out of range", "SELECT -1");
    CHECK_ERR(c, "ERR DB index is out of range", "SELECT 100000");
    CHECK_ERR(c, "ERR wrong number of arguments for 'select' command", "SELECT");
    redisFree(c);
}

/* With "databases 1", SELECT 1 fails as in Redis. */
Test(basic, select_one_database)
{
    e2e_stop(&e2e_srv);
    const char *o[] = {"--databases", "1", NULL};
    cr_assert(e2e_start(&e2e_srv, o) == 0);
    redisContext *c = e2e_connect();
    CHECK_ERR(c, "ERR DB index is out of range", "SELECT 1");
    CHECK_OK(c, "SELECT 0");
    redisFree(c);
}

Test(basic, inline_commands)
{
    int fd = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(fd, "PING\r\n", "+PONG\r\n");
    RAW_EXPECT(fd, "ping\n", "+PONG\r\n");
    RAW_EXPECT(fd, "SET ik hello\r\n", "+OK\r\n");
    RAW_EXPECT(fd, "GET ik\r\n", "$5\r\nhello\r\n");
    RAW_EXPECT(fd, "SET ik \"a b\\r\\n\"\r\n", "+OK\r\n");
    RAW_EXPECT(fd, "STRLEN ik\r\n", ":5\r\n");
    RAW_EXPECT(fd, "  EXISTS   ik   nope \r\n", ":1\r\n");
    /* empty lines are ignored */
    RAW_EXPECT(fd, "\r\n\r\nPING\r\n", "+PONG\r\n");
    RAW_EXPECT(fd, "GET\r\n", "-ERR wrong number of arguments for 'get' command\r\n");
    /* inline and multibulk mixed in one write */
    RAW_EXPECT(fd, "PING\r\n*1\r\n$4\r\nPING\r\n", "+PONG\r\n");
    RAW_EXPECT(fd, "", "+PONG\r\n");
    /* unbalanced quotes are a protocol error: reply then close */
    RAW_EXPECT(fd, "SET a \"b\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n");
    cr_assert(e2e_raw_closed(fd, 3000), "connection not closed after a protocol error");
    close(fd);
}

Test(basic, quit_discards_rest)
{
    int fd = e2e_raw_open(e2e_srv.port);
    const char *req = "*3\r\n$3\r\nSET\r\n$2\r\nq1\r\n$1\r\n1\r\n"
                      "*1\r\n$4\r\nQUIT\r\n"
                      "*3\r\n$3\r\nSET\r\n$2\r\nq2\r\n$1\r\n2\r\n";
    RAW_EXPECT(fd, req, "+OK\r\n");
    RAW_EXPECT(fd, "", "+OK\r\n");
    cr_assert(e2e_raw_closed(fd, 3000), "connection not closed after QUIT");
    close(fd);
    redisContext *c = e2e_connect();
    CHECK_STR(c, "1", "GET q1");
    CHECK_NIL(c, "GET q2");
    redisFree(c);
}

Test(basic, time)
{
    redisContext *c = e2e_connect();
    redisReply *r = e2e_cmd(c, "TIME");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 2);
    cr_assert_eq(r->element[0]->type, REDIS_REPLY_STRING);
    cr_assert_eq(r->element[1]->type, REDIS_REPLY_STRING);
    long long s = atoll(r->element[0]->str), us = atoll(r->element[1]->str);
    long long now = e2e_now_ms();
    cr_assert(llabs(s * 1000 + us / 1000 - now) < 2000, "TIME %lld.%06lld far from now %lld ms", s,
              us, now);
    cr_assert(us >= 0 && us < 1000000);
    freeReplyObject(r);
    CHECK_ERR(c, "ERR wrong number of arguments for 'time' command", "TIME x");
    redisFree(c);
}

Test(basic, del_exists_touch_type)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "MSET a 1 b 2 c 3");
    CHECK_INT(c, 3, "EXISTS a b c");
    CHECK_INT(c, 4, "EXISTS a a b nope c");
    CHECK_INT(c, 3, "TOUCH a b c nope");
    CHECK_STATUS(c, "string", "TYPE a");
    CHECK_STATUS(c, "none", "TYPE nope");
    CHECK_INT(c, 2, "DEL a b nope");
    CHECK_INT(c, 0, "DEL a");
    CHECK_INT(c, 1, "UNLINK c");
    CHECK_INT(c, 0, "UNLINK c x");
    CHECK_INT(c, 0, "EXISTS a b c");
    CHECK_OK(c, "SET d 1");
    /* a key repeated in DEL counts once */
    CHECK_INT(c, 1, "DEL d d");
    CHECK_ERR(c, "ERR wrong number of arguments for 'type' command", "TYPE");
    CHECK_ERR(c, "ERR wrong number of arguments for 'touch' command", "TOUCH");
    CHECK_ERR(c, "ERR wrong number of arguments for 'unlink' command", "UNLINK");
    redisFree(c);
}

Test(basic, rename)
{
    redisContext *c = e2e_connect();
    CHECK_ERR(c, "ERR no such key", "RENAME nope x");
    CHECK_ERR(c, "ERR no such key", "RENAMENX nope x");
    CHECK_OK(c, "SET a 1");
    CHECK_OK(c, "RENAME a b");
    CHECK_NIL(c, "GET a");
    CHECK_STR(c, "1", "GET b");
    CHECK_OK(c, "SET c 3");
    CHECK_INT(c, 0, "RENAMENX b c");
    CHECK_STR(c, "1", "GET b");
    CHECK_INT(c, 1, "RENAMENX b d");
    CHECK_STR(c, "1", "GET d");
    CHECK_INT(c, 0, "EXISTS b");
    /* rename onto itself */
    CHECK_OK(c, "RENAME d d");
    CHECK_INT(c, 0, "RENAMENX d d");
    /* RENAME overwrites and carries the TTL */
    CHECK_OK(c, "SET e v PX 100000");
    CHECK_OK(c, "RENAME e c");
    CHECK_STR(c, "v", "GET c");
    redisReply *r = e2e_cmd(c, "PTTL c");
    cr_assert(r->type == REDIS_REPLY_INTEGER && r->integer > 90000 && r->integer <= 100000,
              "PTTL after RENAME: %s", e2e_reply_str(r));
    freeReplyObject(r);
    redisFree(c);
}

Test(basic, dbsize_flush)
{
    redisContext *c = e2e_connect();
    CHECK_INT(c, 0, "DBSIZE");
    CHECK_OK(c, "MSET a 1 b 2 c 3");
    CHECK_INT(c, 3, "DBSIZE");
    CHECK_OK(c, "FLUSHDB");
    CHECK_INT(c, 0, "DBSIZE");
    CHECK_OK(c, "MSET a 1 b 2");
    CHECK_OK(c, "FLUSHALL");
    CHECK_INT(c, 0, "DBSIZE");
    CHECK_OK(c, "SET a 1");
    CHECK_OK(c, "FLUSHALL SYNC");
    CHECK_NIL(c, "GET a");
    CHECK_OK(c, "SET a 1");
    CHECK_OK(c, "FLUSHALL ASYNC");
    CHECK_NIL(c, "GET a");
    CHECK_OK(c, "FLUSHDB ASYNC");
    CHECK_OK(c, "FLUSHDB sync");
    CHECK_ERR(c, "ERR syntax error", "FLUSHALL foo");
    CHECK_ERR(c, "ERR syntax error", "FLUSHDB foo");
    CHECK_ERR(c, "ERR syntax error", "FLUSHALL SYNC ASYNC");
    redisFree(c);
}

static int has_elem(const redisReply *arr, const char *s)
{
    int n = 0;
    for (size_t i = 0; i < arr->elements; i++) {
        if (arr->element[i]->type == REDIS_REPLY_STRING && strcmp(arr->element[i]->str, s) == 0) {
            n++;
        }
    }
    return n;
}

Test(basic, keys_randomkey)
{
    redisContext *c = e2e_connect();
    CHECK_NIL(c, "RANDOMKEY");
    CHECK_OK(c, "MSET user:1 a user:2 b item:1 c h?llo d");
    redisReply *r = e2e_cmd(c, "KEYS user:*");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 2);
    cr_assert(has_elem(r, "user:1") == 1 && has_elem(r, "user:2") == 1);
    freeReplyObject(r);
    r = e2e_cmd(c, "KEYS *");
    cr_assert_eq(r->elements, 4);
    freeReplyObject(r);
    r = e2e_cmd(c, "KEYS h\\?llo");
    cr_assert_eq(r->elements, 1);
    cr_assert(has_elem(r, "h?llo"));
    freeReplyObject(r);
    r = e2e_cmd(c, "KEYS [iu]*:1");
    cr_assert_eq(r->elements, 2);
    freeReplyObject(r);
    r = e2e_cmd(c, "KEYS nomatch*");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 0);
    freeReplyObject(r);
    for (int i = 0; i < 10; i++) {
        r = e2e_cmd(c, "RANDOMKEY");
        cr_assert_eq(r->type, REDIS_REPLY_STRING);
        cr_assert(strcmp(r->str, "user:1") == 0 || strcmp(r->str, "user:2") == 0 ||
                      strcmp(r->str, "item:1") == 0 || strcmp(r->str, "h?llo") == 0,
                  "RANDOMKEY returned %s", r->str);
        freeReplyObject(r);
    }
    CHECK_ERR(c, "ERR wrong number of arguments for 'keys' command", "KEYS");
    CHECK_ERR(c, "ERR wrong number of arguments for 'randomkey' command", "RANDOMKEY x");
    redisFree(c);
}

/* Full SCAN iteration: every key seen at least once, cursor ends at 0. */
static int scan_all(redisContext *c, const char *extra, char seen[][16], int nseen_max)
{
    char cursor[32] = "0";
    int n = 0, rounds = 0;
    do {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "SCAN %s %s", cursor, extra);
        redisReply *r = e2e_cmd(c, cmd);
        cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2, "SCAN reply %s",
                  e2e_reply_str(r));
        cr_assert_eq(r->element[0]->type, REDIS_REPLY_STRING);
        cr_assert_eq(r->element[1]->type, REDIS_REPLY_ARRAY);
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        for (size_t i = 0; i < r->element[1]->elements; i++) {
            const char *k = r->element[1]->element[i]->str;
            int dup = 0;
            for (int j = 0; j < n; j++) {
                dup |= strcmp(seen[j], k) == 0;
            }
            if (!dup && n < nseen_max) {
                snprintf(seen[n++], 16, "%s", k);
            }
        }
        freeReplyObject(r);
        cr_assert(++rounds < 100000, "SCAN does not terminate");
    } while (strcmp(cursor, "0") != 0);
    return n;
}

Test(basic, scan)
{
    redisContext *c = e2e_connect();
    for (int i = 0; i < 300; i++) {
        redisAppendCommand(c, "SET key:%d %d", i, i);
    }
    for (int i = 0; i < 300; i++) {
        redisReply *r;
        cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK);
        freeReplyObject(r);
    }
    CHECK_OK(c, "SET other 1");
    static char seen[400][16];
    cr_assert_eq(scan_all(c, "", seen, 400), 301);
    cr_assert_eq(scan_all(c, "COUNT 7", seen, 400), 301);
    int n = scan_all(c, "MATCH key:1* COUNT 50", seen, 400);
    cr_assert_eq(n, 111); /* 1, 10-19, 100-199 */
    for (int i = 0; i < n; i++) {
        cr_assert(strncmp(seen[i], "key:1", 5) == 0, "MATCH returned %s", seen[i]);
    }
    cr_assert_eq(scan_all(c, "TYPE string", seen, 400), 301);
    cr_assert_eq(scan_all(c, "TYPE list", seen, 400), 0);
    cr_assert_eq(scan_all(c, "MATCH other TYPE string COUNT 1000", seen, 400), 1);
    CHECK_ERR(c, "ERR invalid cursor", "SCAN abc");
    CHECK_ERR(c, "ERR syntax error", "SCAN 0 FOO");
    CHECK_ERR(c, "ERR syntax error", "SCAN 0 COUNT 0");
    CHECK_ERR(c, "ERR value is not an integer or out of range", "SCAN 0 COUNT x");
    CHECK_ERR(c, "ERR syntax error", "SCAN 0 MATCH");
    CHECK_ERR(c, "ERR wrong number of arguments for 'scan' command", "SCAN");
    redisFree(c);
}

static char *info(redisContext *c, const char *section)
{
    /* section may hold several words: each is one argument */
    redisReply *r = section ? e2e_cmd(c, strchr(section, ' ') ? section : "INFO %s", section)
                            : e2e_cmd(c, "INFO");
    cr_assert_eq(r->type, REDIS_REPLY_STRING, "INFO reply %s", e2e_reply_str(r));
    char *s = strdup(r->str);
    freeReplyObject(r);
    return s;
}

/* The value of "field:" in an INFO text (static buffer), or NULL. */
static const char *info_field(const char *text, const char *field)
{
    static char v[256];
    char pat[128];
    snprintf(pat, sizeof(pat), "\r\n%s:", field);
    const char *p = strstr(text, pat);
    if (!p) {
        return NULL;
    }
    p += strlen(pat);
    size_t n = strcspn(p, "\r\n");
    snprintf(v, sizeof(v), "%.*s", (int)n, p);
    return v;
}

Test(basic, info)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET a 1");
    CHECK_OK(c, "SET b 2 PX 100000");
    CHECK_STR(c, "1", "GET a");
    CHECK_NIL(c, "GET nope");
    CHECK_ERR_PREFIX(c, "ERR wrong number", "GET");
    char *all = info(c, NULL);
    const char *sections[] = {"# Server", "# Clients",     "# Memory", "# Persistence",
                              "# Stats",  "# Replication", "# CPU",    "# Keyspace"};
    for (size_t i = 0; i < sizeof(sections) / sizeof(*sections); i++) {
        cr_assert(strstr(all, sections[i]), "INFO lacks section %s", sections[i]);
    }
    char port[16];
    snprintf(port, sizeof(port), "%d", e2e_srv.port);
    const char *v = info_field(all, "tcp_port");
    cr_assert(v && strcmp(v, port) == 0, "tcp_port: %s", v ? v : "(missing)");
    v = info_field(all, "process_id");
    cr_assert(v && atoi(v) == e2e_srv.pid, "process_id: %s", v ? v : "(missing)");
    cr_assert(info_field(all, "redis_version"), "INFO lacks redis_version");
    v = info_field(all, "connected_clients");
    cr_assert(v && atoi(v) >= 1, "connected_clients: %s", v ? v : "(missing)");
    cr_assert(info_field(all, "used_memory"), "INFO lacks used_memory");
    v = info_field(all, "role");
    cr_assert(v && strcmp(v, "master") == 0, "role: %s", v ? v : "(missing)");
    cr_assert(info_field(all, "used_cpu_sys") && info_field(all, "used_cpu_user"),
              "INFO lacks used_cpu_*");
    v = info_field(all, "keyspace_hits");
    cr_assert(v && atoi(v) == 1, "keyspace_hits: %s", v ? v : "(missing)");
    v = info_field(all, "keyspace_misses");
    cr_assert(v && atoi(v) == 1, "keyspace_misses: %s", v ? v : "(missing)");
    v = info_field(all, "total_commands_processed");
    cr_assert(v && atoi(v) >= 4, "total_commands_processed: %s", v ? v : "(missing)");
    v = info_field(all, "db0");
    cr_assert(v && strncmp(v, "keys=2,expires=1,", 17) == 0, "db0: %s", v ? v : "(missing)");
    free(all);

    char *s = info(c, "server");
    cr_assert(strstr(s, "# Server") && !strstr(s, "# Clients"), "INFO server: other sections");
    free(s);
    s = info(c, "commandstats");
    cr_assert(strstr(s, "# Commandstats"));
    cr_assert(strstr(s, "\r\ncmdstat_set:calls=2,"), "commandstats: %s", s);
    cr_assert(strstr(s, "\r\ncmdstat_get:calls=2,"), "commandstats: %s", s);
    free(s);
    s = info(c, "errorstats");
    cr_assert(strstr(s, "# Errorstats"));
    cr_assert(strstr(s, "\r\nerrorstat_ERR:count=1"), "errorstats: %s", s);
    free(s);
    s = info(c, "keyspace");
    cr_assert(strstr(s, "# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl="), "keyspace: %s", s);
    free(s);
    s = info(c, "INFO clients memory");
    cr_assert(strstr(s, "# Clients") && strstr(s, "# Memory") && !strstr(s, "# Server"),
              "INFO clients memory");
    free(s);
    s = info(c, "everything");
    cr_assert(strstr(s, "# Commandstats") && strstr(s, "# Server"));
    free(s);
    CHECK_OK(c, "FLUSHALL");
    s = info(c, "keyspace");
    cr_assert(!strstr(s, "db0:"), "empty keyspace still lists db0: %s", s);
    free(s);
    redisFree(c);
}

/* cudis only: INFO has an engine section naming the engine in use. */
Test(cudis_only, info_engine)
{
    redisContext *c = e2e_connect();
    char *s = info(c, "engine");
    cr_assert(strstr(s, "# Engine"), "INFO engine: %s", s);
    const char *eng = getenv("CUDIS_E2E_ENGINE");
    cr_assert(strstr(s, eng && *eng ? eng : "cpu"), "INFO engine does not name the engine: %s", s);
    free(s);
    redisFree(c);
}

static void check_config(redisContext *c, const char *name, const char *want)
{
    redisReply *r = e2e_cmd(c, "CONFIG GET %s", name);
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2, "CONFIG GET %s: %s", name,
              e2e_reply_str(r));
    cr_assert_str_eq(r->element[0]->str, name);
    cr_assert_str_eq(r->element[1]->str, want, "CONFIG GET %s = %s, want %s", name,
                     r->element[1]->str, want);
    freeReplyObject(r);
}

Test(basic, config)
{
    redisContext *c = e2e_connect();
    char port[16];
    snprintf(port, sizeof(port), "%d", e2e_srv.port);
    check_config(c, "port", port);
    check_config(c, "bind", "127.0.0.1");
    check_config(c, "maxclients", "10000");
    check_config(c, "timeout", "0");
    check_config(c, "proto-max-bulk-len", "536870912");
    check_config(c, "client-query-buffer-limit", "1073741824");
    check_config(c, "requirepass", "");
    check_config(c, "unixsocket", e2e_srv.sock);
    CHECK_OK(c, "CONFIG SET maxclients 50");
    check_config(c, "maxclients", "50");
    CHECK_OK(c, "CONFIG SET timeout 100");
    check_config(c, "timeout", "100");
    CHECK_OK(c, "CONFIG SET maxmemory 100mb");
    check_config(c, "maxmemory", "104857600");
    CHECK_OK(c, "CONFIG SET proto-max-bulk-len 2mb");
    check_config(c, "proto-max-bulk-len", "2097152");
    /* case-insensitive names, several at once */
    CHECK_OK(c, "CONFIG SET MaxClients 60 timeout 0");
    check_config(c, "maxclients", "60");
    check_config(c, "timeout", "0");
    /* a glob */
    redisReply *r = e2e_cmd(c, "CONFIG GET maxc*");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2, "CONFIG GET maxc*: %s",
              e2e_reply_str(r));
    freeReplyObject(r);
    r = e2e_cmd(c, "CONFIG GET nosuchoption");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 0);
    freeReplyObject(r);
    r = e2e_cmd(c, "CONFIG GET maxclients timeout");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 4, "CONFIG GET two: %s",
              e2e_reply_str(r));
    freeReplyObject(r);
    CHECK_ERR(c, "ERR Unknown option or number of arguments for CONFIG SET - 'nosuchoption'",
              "CONFIG SET nosuchoption 1");
    CHECK_ERR(
        c,
        "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be "
        "parsed into an integer",
        "CONFIG SET maxclients abc");
    CHECK_ERR(c, "ERR wrong number of arguments for 'config|set' command", "CONFIG SET maxclients");
    CHECK_ERR(c, "ERR wrong number of arguments for 'config|resetstat' command",
              "CONFIG RESETSTAT x");
    /* RESETSTAT clears the statistics */
    CHECK_STR(c, "", "ECHO %s", "");
    CHECK_OK(c, "CONFIG RESETSTAT");
    char *s = info(c, "stats");
    const char *v = info_field(s, "total_commands_processed");
    cr_assert(v && atoi(v) <= 1, "total_commands_processed after RESETSTAT: %s",
              v ? v : "(missing)");
    free(s);
    s = info(c, "commandstats");
    cr_assert(!strstr(s, "cmdstat_echo"), "commandstats after RESETSTAT: %s", s);
    free(s);
    redisFree(c);
}

Test(basic, command)
{
    redisContext *c = e2e_connect();
    redisReply *r = e2e_cmd(c, "COMMAND COUNT");
    cr_assert(r->type == REDIS_REPLY_INTEGER && r->integer >= 55, "COMMAND COUNT %s",
              e2e_reply_str(r));
    long long count = r->integer;
    freeReplyObject(r);
    r = e2e_cmd(c, "COMMAND");
    cr_assert(r->type == REDIS_REPLY_ARRAY && (long long)r->elements == count,
              "COMMAND: %s vs COUNT %lld", e2e_reply_str(r), count);
    freeReplyObject(r);

    r = e2e_cmd(c, "COMMAND INFO get set nosuch");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 3, "COMMAND INFO %s",
              e2e_reply_str(r));
    redisReply *g = r->element[0];
    cr_assert(g->type == REDIS_REPLY_ARRAY && g->elements >= 6, "COMMAND INFO get: %s",
              e2e_reply_str(g));
    cr_assert_str_eq(g->element[0]->str, "get");
    cr_assert_eq(g->element[1]->integer, 2);              /* arity */
    cr_assert_eq(g->element[2]->type, REDIS_REPLY_ARRAY); /* flags */
    int ro = 0;
    for (size_t i = 0; i < g->element[2]->elements; i++) {
        ro |= g->element[2]->element[i]->type == REDIS_REPLY_STATUS &&
              strcmp(g->element[2]->element[i]->str, "readonly") == 0;
    }
    cr_assert(ro, "get lacks the readonly flag");
    cr_assert_eq(g->element[3]->integer, 1); /* first key */
    cr_assert_eq(g->element[4]->integer, 1); /* last key */
    cr_assert_eq(g->element[5]->integer, 1); /* step */
    redisReply *s = r->element[1];
    cr_assert_str_eq(s->element[0]->str, "set");
    cr_assert_eq(s->element[1]->integer, -3);
    cr_assert_eq(r->element[2]->type, REDIS_REPLY_NIL);
    freeReplyObject(r);

    r = e2e_cmd(c, "COMMAND INFO mset");
    cr_assert_eq(r->element[0]->element[1]->integer, -3);
    cr_assert_eq(r->element[0]->element[3]->integer, 1);
    cr_assert_eq(r->element[0]->element[4]->integer, -1);
    cr_assert_eq(r->element[0]->element[5]->integer, 2);
    freeReplyObject(r);

    r = e2e_cmd(c, "COMMAND LIST");
    cr_assert(r->type == REDIS_REPLY_ARRAY && (long long)r->elements >= count, "COMMAND LIST %s",
              e2e_reply_str(r));
    /* every command of issue 5 */
    const char *names[] = {
        "ping",   "echo",    "quit",       "hello",       "auth",        "select",    "get",
        "set",    "setnx",   "setex",      "psetex",      "getset",      "getdel",    "getex",
        "mget",   "mset",    "msetnx",     "append",      "strlen",      "getrange",  "setrange",
        "incr",   "decr",    "incrby",     "decrby",      "incrbyfloat", "del",       "unlink",
        "exists", "touch",   "type",       "expire",      "pexpire",     "expireat",  "pexpireat",
        "ttl",    "pttl",    "expiretime", "pexpiretime", "persist",     "rename",    "renamenx",
        "dbsize", "flushdb", "flushall",   "keys",        "scan",        "randomkey", "time",
        "info",   "config",  "command",    "client",      "memory",      "shutdown"};
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        cr_assert(has_elem(r, names[i]), "COMMAND LIST lacks %s", names[i]);
    }
    freeReplyObject(r);

    r = e2e_cmd(c, "COMMAND DOCS get");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2, "COMMAND DOCS get: %s",
              e2e_reply_str(r));
    cr_assert_str_eq(r->element[0]->str, "get");
    cr_assert_eq(r->element[1]->type, REDIS_REPLY_ARRAY);
    cr_assert(has_elem(r->element[1], "summary"), "COMMAND DOCS get lacks summary");
    freeReplyObject(r);
    r = e2e_cmd(c, "COMMAND DOCS nosuchcommand");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 0, "COMMAND DOCS nosuch: %s",
              e2e_reply_str(r));
    freeReplyObject(r);
    CHECK_ERR(c, "ERR unknown subcommand 'FOO'. Try COMMAND HELP.", "COMMAND FOO");
    redisFree(c);
}

Test(basic, client)
{
    redisContext *c = e2e_connect();
    redisReply *r = e2e_cmd(c, "CLIENT ID");
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
    long long id = r->integer;
    freeReplyObject(r);
    CHECK_NIL(c, "CLIENT GETNAME");
    CHECK_OK(c, "CLIENT SETNAME alpha");
    CHECK_STR(c, "alpha", "CLIENT GETNAME");
    CHECK_ERR(c, "ERR Client names cannot contain spaces, newlines or special characters.",
              "CLIENT SETNAME %s", "a b");
    CHECK_ERR(c, "ERR wrong number of arguments for 'client|setname' command", "CLIENT SETNAME");
    r = e2e_cmd(c, "CLIENT INFO");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    char want[64];
    snprintf(want, sizeof(want), "id=%lld ", id);
    cr_assert(strncmp(r->str, want, strlen(want)) == 0, "CLIENT INFO: %s", r->str);
    cr_assert(strstr(r->str, " name=alpha "), "CLIENT INFO: %s", r->str);
    cr_assert(strstr(r->str, " cmd=client|info"), "CLIENT INFO: %s", r->str);
    freeReplyObject(r);

    redisContext *d = e2e_connect();
    r = e2e_cmd(d, "CLIENT ID");
    long long id2 = r->integer;
    cr_assert(id2 > id, "client ids not increasing: %lld then %lld", id, id2);
    freeReplyObject(r);
    r = e2e_cmd(c, "CLIENT LIST");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert(strstr(r->str, want), "CLIENT LIST lacks %s: %s", want, r->str);
    snprintf(want, sizeof(want), "id=%lld ", id2);
    cr_assert(strstr(r->str, want), "CLIENT LIST lacks %s: %s", want, r->str);
    cr_assert(strstr(r->str, "addr=127.0.0.1:"), "CLIENT LIST: %s", r->str);
    freeReplyObject(r);

    CHECK_INT(c, 1, "CLIENT KILL ID %lld", id2);
    CHECK_INT(c, 0, "CLIENT KILL ID %lld", id2);
    r = redisCommand(d, "PING");
    cr_assert(r == NULL, "killed client still answered: %s", e2e_reply_str(r));
    redisFree(d);
    CHECK_ERR(c, "ERR No such client", "CLIENT KILL 127.0.0.1:1");
    CHECK_ERR(c, "ERR syntax error", "CLIENT KILL FOO bar");
    CHECK_STATUS(c, "PONG", "PING");
    redisFree(c);
}

/* CLIENT SETINFO is Redis 7.2; cudis has it, Redis 7.0 does not. */
Test(cudis_only, client_setinfo)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "CLIENT SETINFO lib-name mylib");
    CHECK_OK(c, "CLIENT SETINFO lib-ver 1.2.3");
    redisReply *r = e2e_cmd(c, "CLIENT INFO");
    cr_assert(strstr(r->str, "lib-name=mylib") && strstr(r->str, "lib-ver=1.2.3"),
              "CLIENT INFO: %s", r->str);
    freeReplyObject(r);
    CHECK_ERR_PREFIX(c, "ERR", "CLIENT SETINFO nosuchattr x");
    redisFree(c);
}

Test(basic, memory_usage)
{
    redisContext *c = e2e_connect();
    CHECK_NIL(c, "MEMORY USAGE nope");
    static char big[10000];
    memset(big, 'x', sizeof(big));
    CHECK_OK(c, "SET small v");
    CHECK_OK(c, "SET big %b", big, sizeof(big));
    redisReply *r = e2e_cmd(c, "MEMORY USAGE small");
    cr_assert(r->type == REDIS_REPLY_INTEGER && r->integer > 0 && r->integer < 1000, "%s",
              e2e_reply_str(r));
    freeReplyObject(r);
    r = e2e_cmd(c, "MEMORY USAGE big");
    cr_assert(r->type == REDIS_REPLY_INTEGER && r->integer >= 10000 && r->integer < 40000, "%s",
              e2e_reply_str(r));
    freeReplyObject(r);
    CHECK_ERR(c, "ERR wrong number of arguments for 'memory|usage' command", "MEMORY USAGE");
    redisFree(c);
}

Test(basic, shutdown)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET a 1");
    redisReply *r = redisCommand(c, "SHUTDOWN");
    cr_assert(r == NULL || r->type == REDIS_REPLY_ERROR || r->type == REDIS_REPLY_STATUS);
    if (r) {
        freeReplyObject(r);
    }
    int st = 0;
    int64_t end = e2e_now_ms() + 10000;
    pid_t w = 0;
    while (e2e_now_ms() < end && (w = waitpid(e2e_srv.pid, &st, WNOHANG)) == 0) {
        e2e_sleep_ms(5);
    }
    cr_assert_eq(w, e2e_srv.pid, "server still running after SHUTDOWN");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "SHUTDOWN exit status %d", st);
    e2e_srv.pid = 0;
    e2e_stop(&e2e_srv);
    redisFree(c);
}

/* cudis only: its own options are in CONFIG GET/SET and INFO engine shows
 * the batch statistics. */
Test(cudis_only, engine_config_and_batches)
{
    redisContext *c = e2e_connect();
    const char *eng = getenv("CUDIS_E2E_ENGINE");
    eng = eng && *eng ? eng : "cpu";
    check_config(c, "engine", eng);
    redisReply *r = e2e_cmd(c, "CONFIG GET batch-max-ops");
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2 && atoll(r->element[1]->str) > 0,
              "CONFIG GET batch-max-ops: %s", e2e_reply_str(r));
    freeReplyObject(r);
    CHECK_OK(c, "CONFIG SET batch-max-ops 64");
    check_config(c, "batch-max-ops", "64");
    CHECK_OK(c, "CONFIG SET batch-max-wait-us 50");
    check_config(c, "batch-max-wait-us", "50");
    CHECK_ERR_PREFIX(c, "ERR CONFIG SET failed (possibly related to argument 'batch-max-ops')",
                     "CONFIG SET batch-max-ops abc");
    for (int i = 0; i < 1000; i++) {
        redisAppendCommand(c, i % 2 ? "GET b:%d" : "SET b:%d v", i / 2);
    }
    for (int i = 0; i < 1000; i++) {
        redisReply *r;
        cr_assert(redisGetReply(c, (void **)&r) == REDIS_OK);
        freeReplyObject(r);
    }
    char *s = info(c, "engine");
    const char *v = info_field(s, "engine");
    cr_assert(v && strcmp(v, eng) == 0, "INFO engine: engine:%s", v ? v : "(missing)");
    v = info_field(s, "batch_count");
    cr_assert(v && atoll(v) > 0, "INFO engine: batch_count:%s", v ? v : "(missing)");
    v = info_field(s, "batch_max_ops");
    cr_assert(v && strcmp(v, "64") == 0, "INFO engine: batch_max_ops:%s", v ? v : "(missing)");
    cr_assert(info_field(s, "batch_size_p99") && info_field(s, "batch_wait_us_p99"),
              "INFO engine: %s", s);
    free(s);
    redisFree(c);
}

/* cudis only: --engine picks the store; an unknown engine is refused. */
Test(cudis_only, engine_selection)
{
    e2e_stop(&e2e_srv);
    const char *null_eng[] = {"--engine", "null", NULL};
    cr_assert(e2e_start(&e2e_srv, null_eng) == 0);
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET k v");
    CHECK_NIL(c, "GET k"); /* the null engine stores nothing */
    redisFree(c);
    e2e_stop(&e2e_srv);
    const char *lru[] = {"--engine", "lru", NULL};
    cr_assert(e2e_start(&e2e_srv, lru) == 0);
    c = e2e_connect();
    CHECK_OK(c, "SET k v");
    CHECK_STR(c, "v", "GET k");
    char *s = info(c, "engine");
    cr_assert(strstr(s, "\r\nengine:lru\r\n"), "INFO engine: %s", s);
    free(s);
    redisFree(c);
    e2e_stop(&e2e_srv);
    const char *bad[] = {"--engine", "nosuchengine", NULL};
    cr_assert(e2e_spawn(&e2e_srv, bad) == 0);
    int st = 0;
    int64_t end = e2e_now_ms() + 10000;
    pid_t w = 0;
    while (e2e_now_ms() < end && (w = waitpid(e2e_srv.pid, &st, WNOHANG)) == 0) {
        e2e_sleep_ms(10);
    }
    cr_assert_eq(w, e2e_srv.pid, "server with an unknown engine keeps running");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "unknown engine: wait status %d", st);
    e2e_srv.pid = 0;
    e2e_stop(&e2e_srv);
}

/* cudis only: an explicit gpu engine that cannot be created refuses to
 * start and says why in its log (no device here), never falls back; where
 * a usable device exists it serves with INFO engine saying gpu. */
Test(cudis_only, explicit_gpu_refuses_without_a_device)
{
    e2e_stop(&e2e_srv);
    const char *gpu[] = {"--engine", "gpu", NULL};
    cr_assert(e2e_spawn(&e2e_srv, gpu) == 0);
    int st = 0;
    pid_t w = 0;
    int64_t end = e2e_now_ms() + 20000;
    bool serving = false;
    while (e2e_now_ms() < end && (w = waitpid(e2e_srv.pid, &st, WNOHANG)) == 0) {
        if (e2e_wait_ping(e2e_srv.port, 50)) {
            serving = true;
            break;
        }
    }
    if (serving) {
        redisContext *c = e2e_connect();
        char *s = info(c, "engine");
        cr_assert(strstr(s, "\r\nengine:gpu\r\n"), "a serving --engine gpu must be gpu: %s", s);
        free(s);
        redisFree(c);
        e2e_stop(&e2e_srv);
        return;
    }
    cr_assert_eq(w, e2e_srv.pid, "--engine gpu neither served nor exited");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "wait status %d", st);
    FILE *f = fopen(e2e_srv.log, "r");
    cr_assert_not_null(f);
    char line[1024];
    bool said = false;
    while (fgets(line, sizeof(line), f)) {
        const char *at = strstr(line, "Could not create engine 'gpu': ");
        said = said || (at != NULL && strlen(at) > strlen("Could not create engine 'gpu': ") + 4);
    }
    fclose(f);
    cr_assert(said, "the log must say why the gpu engine could not be created");
    e2e_srv.pid = 0;
    e2e_stop(&e2e_srv);
}
