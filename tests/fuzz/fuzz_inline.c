/*
 * fuzz_inline.c - the inline-command splitter (util_split_inline: Redis's
 * quoting rules, shared by inline requests and the config file) and the
 * inline path of the RESP parser. Checked for each input:
 *   - every argument lies inside the line, and the count is the same
 *     whatever room the caller gives (max_args only limits what is stored);
 *   - quoting the arguments again ("..." with \xHH escapes) and splitting
 *     that gives them back exactly (the unquoting is the inverse of the
 *     quoting a client library does);
 *   - the parser, given the input as inline lines, returns arguments inside
 *     its buffer and leaks nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp.h"
#include "util.h"

#define MAX_ARGS 256

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_inline: %s\n", what);
    abort();
}

static void check_inside(const char *line, size_t len, char **argv, const uint32_t *lens, int n)
{
    for (int i = 0; i < n; i++) {
        if (argv[i] < line || argv[i] > line + len || lens[i] > (size_t)(line + len - argv[i])) {
            fail("an argument points outside the line");
        }
    }
}

/* The arguments quoted as a client would write them. */
static void quote_args(sbuf *out, char **argv, const uint32_t *lens, int n)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < n; i++) {
        sbuf_adds(out, i ? " \"" : "\"");
        for (uint32_t k = 0; k < lens[i]; k++) {
            unsigned char ch = (unsigned char)argv[i][k];
            if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\') {
                sbuf_add(out, &ch, 1);
            } else {
                char esc[4] = {'\\', 'x', hex[ch >> 4], hex[ch & 15]};
                sbuf_add(out, esc, 4);
            }
        }
        sbuf_adds(out, "\"");
    }
}

static void check_split(const uint8_t *data, size_t size)
{
    char *line = malloc(size ? size : 1);
    char *line3 = malloc(size ? size : 1);
    memcpy(line, data, size);
    memcpy(line3, data, size);
    char *argv[MAX_ARGS], *argv3[3];
    uint32_t lens[MAX_ARGS], lens3[3];
    int total = -2, total3 = -2;
    int n = util_split_inline(line, size, argv, lens, MAX_ARGS, &total);
    int n3 = util_split_inline(line3, size, argv3, lens3, 3, &total3);
    if (n != n3) {
        fail("the count depends on max_args");
    }
    if (n >= 0) {
        if (total != n || total3 != n) {
            fail("*total differs from the count returned");
        }
        int kept = n < MAX_ARGS ? n : MAX_ARGS;
        check_inside(line, size, argv, lens, kept);
        check_inside(line3, size, argv3, lens3, n < 3 ? n : 3);
        for (int i = 0; i < n && i < 3; i++) {
            if (lens[i] != lens3[i] || memcmp(argv[i], argv3[i], lens[i]) != 0) {
                fail("an argument depends on max_args");
            }
        }
        if (n <= MAX_ARGS) {
            sbuf q = {0};
            quote_args(&q, argv, lens, n);
            char *qargv[MAX_ARGS];
            uint32_t qlens[MAX_ARGS];
            int qn = util_split_inline(q.p ? q.p : "", q.len, qargv, qlens, MAX_ARGS, NULL);
            if (qn != n) {
                fail("splitting the quoted arguments gives another count");
            }
            for (int i = 0; i < n; i++) {
                if (qlens[i] != lens[i] || memcmp(qargv[i], argv[i], lens[i]) != 0) {
                    fail("splitting the quoted arguments gives other arguments");
                }
            }
            sbuf_free(&q);
        }
    }
    free(line);
    free(line3);
}

/* The input as inline requests: a leading space keeps the first line off
 * the multibulk path (later lines may still start with '*'). */
static void check_parser(const uint8_t *data, size_t size)
{
    size_t len = size + 1;
    char *buf = malloc(len);
    buf[0] = ' ';
    memcpy(buf + 1, data, size);
    resp_parser p;
    resp_parser_init(&p);
    size_t pos = 0;
    while (resp_parse(&p, buf, len, &pos) == RESP_CMD) {
        if (p.argc < 1) {
            fail("a command without arguments was returned");
        }
        check_inside(buf, len, p.argv, p.arg_len, p.argc);
    }
    resp_parser_deinit(&p);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_split(data, size);
    check_parser(data, size);
    return 0;
}
