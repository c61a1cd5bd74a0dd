/* test_resp.c - the RESP parser: fragmented input, inline commands with
 * quoting, binary arguments, Redis's protocol errors and limits; and the
 * reply writer's RESP2/RESP3 encodings. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp.h"

/* Parse all of `in`, fed in chunks of `step` bytes; returns commands seen,
 * their args joined with '|' into out. Stops at an error (returns -1). */
static int feed(const char *in, size_t len, size_t step, char *out, size_t cap, const char **err)
{
    resp_parser p;
    resp_parser_init(&p);
    char *buf = malloc(len + 1);
    size_t have = 0, pos = 0;
    int ncmd = 0;
    out[0] = '\0';
    while (have < len || pos < have) {
        size_t n = len - have < step ? len - have : step;
        memcpy(buf + have, in + have, n);
        have += n;
        for (;;) {
            int r = resp_parse(&p, buf, have, &pos);
            if (r == RESP_ERR) {
                *err = p.err;
                free(buf);
                resp_parser_deinit(&p);
                return -1;
            }
            if (r == RESP_MORE) {
                break;
            }
            ncmd++;
            for (int i = 0; i < p.argc; i++) {
                size_t l = strlen(out);
                snprintf(out + l, cap - l, "%s%.*s", i ? "|" : (ncmd > 1 ? ";" : ""),
                         (int)p.arg_len[i], p.argv[i]);
            }
        }
        if (n == 0) {
            break;
        }
    }
    free(buf);
    resp_parser_deinit(&p);
    return ncmd;
}

static void check_all_steps(const char *in, int want_n, const char *want)
{
    size_t len = strlen(in);
    for (size_t step = 1; step <= len; step++) {
        char out[4096];
        const char *err = NULL;
        int n = feed(in, len, step, out, sizeof(out), &err);
        cr_assert_eq(n, want_n, "step %zu: %d commands (err %s)", step, n, err ? err : "-");
        cr_assert_str_eq(out, want, "step %zu", step);
    }
}

Test(resp, multibulk_fragmented)
{
    check_all_steps("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n*1\r\n$4\r\nPING\r\n", 2, "GET|key;PING");
}

Test(resp, inline_commands)
{
    check_all_steps("PING\r\nSET a \"b c\"\n\r\n  GET   'x y'  \r\n", 3, "PING;SET|a|b c;GET|x y");
    check_all_steps("SET k \"\\x41\\n\\\"q\"\r\n", 1, "SET|k|A\n\"q");
}

Test(resp, empty_multibulk_skipped)
{
    check_all_steps("*0\r\n*-1\r\nPING\r\n", 1, "PING");
}

Test(resp, binary_args)
{
    const char in[] = "*2\r\n$3\r\nSET\r\n$6\r\na\r\n\0b\n\r\n";
    resp_parser p;
    resp_parser_init(&p);
    char buf[64];
    memcpy(buf, in, sizeof(in) - 1);
    size_t pos = 0;
    cr_assert_eq(resp_parse(&p, buf, sizeof(in) - 1, &pos), RESP_CMD);
    cr_assert_eq(p.argc, 2);
    cr_assert_eq(p.arg_len[1], 6);
    cr_assert(memcmp(p.argv[1], "a\r\n\0b\n", 6) == 0);
    cr_assert_eq(pos, sizeof(in) - 1);
    resp_parser_deinit(&p);
}

static const char *parse_err(const char *in, size_t len, bool unauth, long long max_bulk)
{
    resp_parser p;
    resp_parser_init(&p);
    p.unauth = unauth;
    if (max_bulk) {
        p.max_bulk = max_bulk;
    }
    char *buf = malloc(len + 1);
    memcpy(buf, in, len);
    size_t pos = 0;
    int r;
    while ((r = resp_parse(&p, buf, len, &pos)) == RESP_CMD) {
    }
    static char err[128];
    snprintf(err, sizeof(err), "%s", r == RESP_ERR ? p.err : "(none)");
    free(buf);
    resp_parser_deinit(&p);
    return err;
}

Test(resp, protocol_errors)
{
#define E(in, want) cr_assert_str_eq(parse_err(in, strlen(in), false, 0), want, "%s", in)
    E("*abc\r\n", "Protocol error: invalid multibulk length");
    E("*3000000000\r\n", "Protocol error: invalid multibulk length");
    E("*1\r\nx3\r\nfoo\r\n", "Protocol error: expected '$', got 'x'");
    E("*1\r\n$-5\r\n", "Protocol error: invalid bulk length");
    E("*1\r\n$abc\r\n", "Protocol error: invalid bulk length");
    E("*1\r\n$9223372036854775808\r\n", "Protocol error: invalid bulk length");
    E("SET a \"b\r\n", "Protocol error: unbalanced quotes in request");
    E("SET a \"b\"c\r\n", "Protocol error: unbalanced quotes in request");
    E("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n", "(none)");
#undef E
    /* proto-max-bulk-len */
    cr_assert_str_eq(parse_err("*1\r\n$2000000\r\n", 15, false, 1024 * 1024),
                     "Protocol error: invalid bulk length");
    /* before AUTH */
    cr_assert_str_eq(parse_err("*11\r\n", 5, true, 0),
                     "Protocol error: unauthenticated multibulk length");
    cr_assert_str_eq(parse_err("*10\r\n", 5, true, 0), "(none)");
    cr_assert_str_eq(parse_err("*1\r\n$16385\r\n", 12, true, 0),
                     "Protocol error: unauthenticated bulk length");
    cr_assert_str_eq(parse_err("*1\r\n$16384\r\n", 12, true, 0), "(none)");
}

Test(resp, too_big_lines)
{
    size_t n = 70 * 1024;
    char *big = malloc(n);
    memset(big, 'a', n);
    cr_assert_str_eq(parse_err(big, n, false, 0), "Protocol error: too big inline request");
    big[0] = '*';
    cr_assert_str_eq(parse_err(big, n, false, 0), "Protocol error: too big mbulk count string");
    memcpy(big, "*1\r\n$", 5);
    cr_assert_str_eq(parse_err(big, n, false, 0), "Protocol error: too big bulk count string");
    free(big);
}

Test(resp, huge_bulk_is_not_preallocated_and_hints_the_read)
{
    resp_parser p;
    resp_parser_init(&p);
    char buf[] = "*2\r\n$3\r\nSET\r\n$100000000\r\nabc";
    size_t pos = 0;
    cr_assert_eq(resp_parse(&p, buf, strlen(buf), &pos), RESP_MORE);
    cr_assert(resp_parser_busy(&p));
    cr_assert_eq(p.big_need, 100000000 + 2 - 3);
    cr_assert_eq(p.cmd_start, 0);
    resp_parser_deinit(&p);
}

Test(resp, shift_keeps_partial_command)
{
    resp_parser p;
    resp_parser_init(&p);
    char buf[128] = "PING\r\n*2\r\n$3\r\nGET\r\n$3\r\nke";
    size_t len = strlen(buf), pos = 0;
    cr_assert_eq(resp_parse(&p, buf, len, &pos), RESP_CMD);
    cr_assert_eq(resp_parse(&p, buf, len, &pos), RESP_MORE);
    size_t keep = p.cmd_start;
    cr_assert_eq(keep, 6);
    memmove(buf, buf + keep, len - keep);
    len -= keep;
    pos -= keep;
    resp_parser_shift(&p, keep);
    memcpy(buf + len, "y\r\n", 3);
    len += 3;
    cr_assert_eq(resp_parse(&p, buf, len, &pos), RESP_CMD);
    cr_assert_eq(p.argc, 2);
    cr_assert(p.arg_len[0] == 3 && memcmp(p.argv[0], "GET", 3) == 0);
    cr_assert(p.arg_len[1] == 3 && memcmp(p.argv[1], "key", 3) == 0);
    resp_parser_deinit(&p);
}

static void eqn(sbuf *b, const char *want, size_t n)
{
    cr_assert_eq(b->len, n, "got %.*s", (int)b->len, b->p);
    cr_assert(memcmp(b->p, want, b->len) == 0, "got %.*s want %s", (int)b->len, b->p, want);
    b->len = 0;
}

static void eq(sbuf *b, const char *want)
{
    eqn(b, want, strlen(want));
}

Test(resp, writer)
{
    sbuf b = {0};
    resp_int(&b, -42);
    eq(&b, ":-42\r\n");
    resp_bulk(&b, "a\0b", 3);
    eqn(&b, "$3\r\na\0b\r\n", 9);
    resp_null(&b, 2);
    eq(&b, "$-1\r\n");
    resp_null(&b, 3);
    eq(&b, "_\r\n");
    resp_map(&b, 2, 2);
    eq(&b, "*4\r\n");
    resp_map(&b, 2, 3);
    eq(&b, "%2\r\n");
    resp_set(&b, 1, 3);
    eq(&b, "~1\r\n");
    resp_error(&b, "ERR bad\r\nthing");
    eq(&b, "-ERR bad  thing\r\n");
    resp_verbatim(&b, "x:1\r\n", 5, 3);
    eq(&b, "=9\r\ntxt:x:1\r\n\r\n");
    resp_verbatim(&b, "x:1\r\n", 5, 2);
    eq(&b, "$5\r\nx:1\r\n\r\n");
    sbuf_free(&b);
}
