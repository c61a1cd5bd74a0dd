/*
 * e2e_resp3.c - RESP3 (HELLO 3) and RESP2 replies checked byte for byte over
 * a plain socket (hiredis 0.14 cannot parse RESP3): the HELLO map, nulls as
 * "_", integers, doubles-as-bulk, maps from CONFIG GET and COMMAND DOCS, sets
 * in COMMAND INFO, verbatim strings from INFO and CLIENT INFO, and switching
 * back with HELLO 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(resp3, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* A RESP multibulk request from a space-separated word list. */
static char *req(const char *words)
{
    static char out[4096];
    char tmp[1024];
    snprintf(tmp, sizeof(tmp), "%s", words);
    char *argv[64];
    int n = 0;
    for (char *t = strtok(tmp, " "); t && n < 64; t = strtok(NULL, " ")) {
        argv[n++] = t;
    }
    size_t o = (size_t)snprintf(out, sizeof(out), "*%d\r\n", n);
    for (int i = 0; i < n; i++) {
        o += (size_t)snprintf(out + o, sizeof(out) - o, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    }
    return out;
}

static char *reply(int fd, const char *words, size_t *len)
{
    cr_assert(e2e_raw_send(fd, req(words), strlen(req(words))));
    char *r = e2e_raw_reply(fd, len, 5000);
    cr_assert(r, "no reply to %s", words);
    return r;
}

/* Send the words as one command; the reply must equal want byte for byte. */
#define expect(fd, words, want) e2e_raw_expect(__FILE__, __LINE__, fd, req(words), want)

static long long client_id(int fd)
{
    size_t n;
    char *r = reply(fd, "CLIENT ID", &n);
    cr_assert(r[0] == ':', "CLIENT ID: %s", r);
    long long id = atoll(r + 1);
    free(r);
    return id;
}

Test(resp3, hello3_map)
{
    int fd = e2e_raw_open(e2e_srv.port);
    long long id = client_id(fd);
    size_t n;
    char *r = reply(fd, "HELLO 3", &n);
    const char *head = "%7\r\n$6\r\nserver\r\n$";
    cr_assert(strncmp(r, head, strlen(head)) == 0, "HELLO 3 head: %s", r);
    cr_assert(strstr(r, "\r\n$7\r\nversion\r\n$"), "HELLO 3 lacks version: %s", r);
    char idpart[96];
    snprintf(idpart, sizeof(idpart), "\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:%lld\r\n", id);
    cr_assert(strstr(r, idpart), "HELLO 3 proto/id (want id %lld): %s", id, r);
    const char *tail =
        "$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n";
    cr_assert(n > strlen(tail) && strcmp(r + n - strlen(tail), tail) == 0, "HELLO 3 tail: %s", r);
    free(r);
    /* HELLO with no version replies in the current protocol */
    r = reply(fd, "HELLO", &n);
    cr_assert(strncmp(r, "%7\r\n", 4) == 0 && strstr(r, "proto\r\n:3\r\n"), "HELLO: %s", r);
    free(r);
    close(fd);
}

Test(resp3, hello2_array_and_back)
{
    int fd = e2e_raw_open(e2e_srv.port);
    expect(fd, "GET nope", "$-1\r\n");
    size_t n;
    char *r = reply(fd, "HELLO 2", &n);
    cr_assert(strncmp(r, "*14\r\n$6\r\nserver\r\n", 17) == 0 &&
                  strstr(r, "\r\n$5\r\nproto\r\n:2\r\n"),
              "HELLO 2: %s", r);
    free(r);
    r = reply(fd, "HELLO 3", &n);
    cr_assert(strncmp(r, "%7\r\n", 4) == 0);
    free(r);
    expect(fd, "GET nope", "_\r\n");
    r = reply(fd, "HELLO 2", &n);
    free(r);
    expect(fd, "GET nope", "$-1\r\n");
    expect(fd, "MGET nope", "*1\r\n$-1\r\n");
    expect(fd, "HELLO 4", "-NOPROTO unsupported protocol version\r\n");
    expect(fd, "HELLO 1", "-NOPROTO unsupported protocol version\r\n");
    expect(fd, "HELLO abc", "-ERR Protocol version is not an integer or out of range\r\n");
    /* still RESP2 after the failed HELLOs */
    expect(fd, "GET nope", "$-1\r\n");
    /* HELLO SETNAME */
    r = reply(fd, "HELLO 3 SETNAME myname", &n);
    free(r);
    expect(fd, "CLIENT GETNAME", "$6\r\nmyname\r\n");
    expect(fd, "HELLO 3 FOO", "-ERR Syntax error in HELLO option 'FOO'\r\n");
    close(fd);
}

Test(resp3, nulls_and_scalars)
{
    int fd = e2e_raw_open(e2e_srv.port);
    size_t n;
    free(reply(fd, "HELLO 3", &n));
    expect(fd, "GET nope", "_\r\n");
    expect(fd, "SET k v", "+OK\r\n");
    expect(fd, "GET k", "$1\r\nv\r\n");
    expect(fd, "SET k v NX", "_\r\n");
    expect(fd, "SET k w XX GET", "$1\r\nv\r\n");
    expect(fd, "SET n v XX GET", "_\r\n");
    expect(fd, "GETDEL nope", "_\r\n");
    expect(fd, "GETEX nope", "_\r\n");
    expect(fd, "GETSET nope2 x", "_\r\n");
    expect(fd, "MGET k nope", "*2\r\n$1\r\nw\r\n_\r\n");
    expect(fd, "TTL k", ":-1\r\n");
    expect(fd, "TTL nope", ":-2\r\n");
    expect(fd, "PTTL nope", ":-2\r\n");
    expect(fd, "EXPIRETIME k", ":-1\r\n");
    expect(fd, "EXISTS k nope", ":1\r\n");
    expect(fd, "INCR cnt", ":1\r\n");
    expect(fd, "INCRBY cnt -11", ":-10\r\n");
    expect(fd, "INCRBYFLOAT f 1.5", "$3\r\n1.5\r\n");
    expect(fd, "APPEND k xyz", ":4\r\n");
    expect(fd, "STRLEN k", ":4\r\n");
    expect(fd, "ECHO hi", "$2\r\nhi\r\n");
    expect(fd, "PING", "+PONG\r\n");
    expect(fd, "TYPE k", "+string\r\n");
    expect(fd, "CLIENT GETNAME", "_\r\n");
    expect(fd, "MEMORY USAGE nope", "_\r\n");
    expect(fd, "RENAMENX nope x", "-ERR no such key\r\n");
    expect(fd, "GET", "-ERR wrong number of arguments for 'get' command\r\n");
    expect(fd, "FLUSHALL", "+OK\r\n");
    expect(fd, "RANDOMKEY", "_\r\n");
    expect(fd, "KEYS *", "*0\r\n");
    /* SCAN: an array of [bulk cursor, array of keys] (COUNT is only a hint,
     * so the keys may come in any call of a full iteration) */
    expect(fd, "SET only 1", "+OK\r\n");
    char cursor[32] = "0";
    int found = 0;
    do {
        char cmd[64];
        snprintf(cmd, sizeof(cmd), "SCAN %s COUNT 100", cursor);
        char *r = reply(fd, cmd, &n);
        cr_assert(strncmp(r, "*2\r\n$", 5) == 0, "SCAN: %s", r);
        char *p = strstr(r + 5, "\r\n");
        snprintf(cursor, sizeof(cursor), "%.*s", (int)(strstr(p + 2, "\r\n") - (p + 2)), p + 2);
        const char *arr = strstr(p + 2, "\r\n") + 2;
        cr_assert(strcmp(arr, "*0\r\n") == 0 || strcmp(arr, "*1\r\n$4\r\nonly\r\n") == 0,
                  "SCAN keys: %s", arr);
        found += strcmp(arr, "*0\r\n") != 0;
        free(r);
    } while (strcmp(cursor, "0") != 0);
    cr_assert_eq(found, 1);
    expect(fd, "DBSIZE", ":1\r\n");
    close(fd);
}

Test(resp3, time_array)
{
    int fd = e2e_raw_open(e2e_srv.port);
    size_t n;
    free(reply(fd, "HELLO 3", &n));
    char *r = reply(fd, "TIME", &n);
    cr_assert(strncmp(r, "*2\r\n$10\r\n", 9) == 0, "TIME: %s", r);
    free(r);
    close(fd);
}

Test(resp3, config_get_map)
{
    int fd = e2e_raw_open(e2e_srv.port);
    size_t n;
    free(reply(fd, "HELLO 3", &n));
    expect(fd, "CONFIG GET maxclients", "%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
    expect(fd, "CONFIG GET nosuchoption", "%0\r\n");
    char *r = reply(fd, "CONFIG GET maxclients timeout", &n);
    cr_assert(strncmp(r, "%2\r\n", 4) == 0 && strstr(r, "$10\r\nmaxclients\r\n$5\r\n10000\r\n") &&
                  strstr(r, "$7\r\ntimeout\r\n$1\r\n0\r\n"),
              "CONFIG GET two: %s", r);
    free(r);
    /* RESP2: a flat array */
    free(reply(fd, "HELLO 2", &n));
    expect(fd, "CONFIG GET maxclients", "*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
    close(fd);
}

Test(resp3, verbatim_info)
{
    int fd = e2e_raw_open(e2e_srv.port);
    size_t n;
    free(reply(fd, "HELLO 3", &n));
    char *r = reply(fd, "INFO server", &n);
    cr_assert(r[0] == '=', "INFO in RESP3 is not a verbatim string: %.40s", r);
    char *p = strstr(r, "\r\n");
    cr_assert(p && strncmp(p + 2, "txt:# Server\r\n", 14) == 0, "INFO verbatim: %.60s", r);
    cr_assert_eq((size_t)atoll(r + 1), n - (size_t)(p + 2 - r) - 2, "verbatim length");
    free(r);
    r = reply(fd, "CLIENT INFO", &n);
    cr_assert(strncmp(r, "=", 1) == 0 && strstr(r, "\r\ntxt:id="), "CLIENT INFO in RESP3: %.60s",
              r);
    cr_assert(strstr(r, " resp=3"), "CLIENT INFO lacks resp=3: %s", r);
    free(r);
    free(reply(fd, "HELLO 2", &n));
    r = reply(fd, "INFO server", &n);
    cr_assert(strncmp(r, "$", 1) == 0 && strstr(r, "\r\n# Server\r\n"), "INFO in RESP2: %.60s", r);
    free(r);
    close(fd);
}

Test(resp3, command_info_and_docs)
{
    int fd = e2e_raw_open(e2e_srv.port);
    size_t n;
    free(reply(fd, "HELLO 3", &n));
    char *r = reply(fd, "COMMAND INFO get", &n);
    const char *head = "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n~";
    cr_assert(strncmp(r, head, strlen(head)) == 0, "COMMAND INFO get (flags as a set): %s", r);
    cr_assert(strstr(r, "+readonly\r\n"), "COMMAND INFO get flags: %s", r);
    cr_assert(strstr(r, ":1\r\n:1\r\n:1\r\n~"), "COMMAND INFO get key positions / categories: %s",
              r);
    free(r);
    expect(fd, "COMMAND INFO nosuch", "*1\r\n_\r\n");
    r = reply(fd, "COMMAND DOCS get", &n);
    head = "%1\r\n$3\r\nget\r\n%";
    cr_assert(strncmp(r, head, strlen(head)) == 0, "COMMAND DOCS get: %s", r);
    cr_assert(strstr(r, "$7\r\nsummary\r\n"), "COMMAND DOCS get: %s", r);
    free(r);
    close(fd);
}

Test(resp3, resp2_bytes)
{
    int fd = e2e_raw_open(e2e_srv.port);
    expect(fd, "SET k v", "+OK\r\n");
    expect(fd, "SET k v NX", "$-1\r\n");
    expect(fd, "GET nope", "$-1\r\n");
    expect(fd, "MGET k nope", "*2\r\n$1\r\nv\r\n$-1\r\n");
    expect(fd, "TTL nope", ":-2\r\n");
    expect(fd, "KEYS nomatch", "*0\r\n");
    expect(fd, "COMMAND INFO nosuch", "*1\r\n$-1\r\n");
    expect(fd, "CLIENT GETNAME", "$-1\r\n");
    expect(fd, "INCRBYFLOAT f 2.5", "$3\r\n2.5\r\n");
    expect(fd, "FOO", "-ERR unknown command 'FOO', with args beginning with: \r\n");
    close(fd);
}
