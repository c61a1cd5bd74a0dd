/*
 * test_load_proto.c - RESP and memcached request encoders (exact bytes) and
 * the streaming reply parsers: every reply kind, replies split at every
 * byte position, many replies in one buffer, protocol violations.
 */
#include "load_proto.h"

#include <criterion/criterion.h>
#include <string.h>

static void expect_buf(struct load_buf *b, const char *want, size_t wlen)
{
    cr_assert_eq(b->len, wlen, "length %zu, want %zu", b->len, wlen);
    cr_assert_eq(memcmp(b->data, want, wlen), 0, "bytes differ: got '%.*s'", (int)b->len, b->data);
    b->len = 0;
}
#define EXPECT(b, lit) expect_buf((b), (lit), sizeof(lit) - 1)

Test(load_proto, resp_encoders)
{
    struct load_buf b = {0};
    cr_assert_eq(load_encode_get(&b, LOAD_PROTO_RESP, "key:1", 5), 0);
    EXPECT(&b, "*2\r\n$3\r\nGET\r\n$5\r\nkey:1\r\n");
    cr_assert_eq(load_encode_set(&b, LOAD_PROTO_RESP, "k", 1, "a\r\nb", 4), 0);
    EXPECT(&b, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n");
    const char *keys[] = {"a", "bb", "ccc"};
    size_t lens[] = {1, 2, 3};
    cr_assert_eq(load_encode_mget(&b, LOAD_PROTO_RESP, keys, lens, 3), 0);
    EXPECT(&b, "*4\r\n$4\r\nMGET\r\n$1\r\na\r\n$2\r\nbb\r\n$3\r\nccc\r\n");
    cr_assert_eq(load_encode_set(&b, LOAD_PROTO_RESP, "e", 1, "", 0), 0);
    EXPECT(&b, "*3\r\n$3\r\nSET\r\n$1\r\ne\r\n$0\r\n\r\n");
    load_buf_free(&b);
}

Test(load_proto, memcached_encoders)
{
    struct load_buf b = {0};
    cr_assert_eq(load_encode_get(&b, LOAD_PROTO_MEMCACHE, "key:1", 5), 0);
    EXPECT(&b, "get key:1\r\n");
    cr_assert_eq(load_encode_set(&b, LOAD_PROTO_MEMCACHE, "k", 1, "hello", 5), 0);
    EXPECT(&b, "set k 0 0 5\r\nhello\r\n");
    const char *keys[] = {"a", "bb", "ccc"};
    size_t lens[] = {1, 2, 3};
    cr_assert_eq(load_encode_mget(&b, LOAD_PROTO_MEMCACHE, keys, lens, 3), 0);
    EXPECT(&b, "get a bb ccc\r\n");
    load_buf_free(&b);
}

struct expect_reply {
    uint32_t hits, misses;
    bool error;
};

/* Feeds stream in two pieces split at `split` and then byte by byte (when
 * bytewise), checking the replies come out as want[]. */
static void run_stream(enum load_protocol proto, const char *stream, size_t len,
                       const struct expect_reply *want, size_t nwant, size_t split, bool bytewise)
{
    struct load_parser p;
    load_parser_init(&p, proto);
    size_t got = 0;
    size_t pos = 0;
    while (pos < len) {
        size_t end = bytewise ? pos + 1 : (pos < split ? split : len);
        while (pos < end) {
            struct load_reply r;
            int done;
            size_t used = load_parser_feed(&p, stream + pos, end - pos, &r, &done);
            cr_assert_geq(done, 0, "protocol error at byte %zu (split %zu)", pos + used, split);
            cr_assert(used > 0 || pos == end, "no progress");
            pos += used;
            if (done == 1) {
                cr_assert_lt(got, nwant, "too many replies (split %zu)", split);
                cr_assert_eq(r.hits, want[got].hits, "reply %zu hits %u want %u (split %zu)", got,
                             r.hits, want[got].hits, split);
                cr_assert_eq(r.misses, want[got].misses, "reply %zu misses (split %zu)", got, split);
                cr_assert_eq(r.error, want[got].error, "reply %zu error flag (split %zu)", got,
                             split);
                got++;
            }
        }
    }
    cr_assert_eq(got, nwant, "%zu replies, want %zu (split %zu)", got, nwant, split);
}

static void check_all_splits(enum load_protocol proto, const char *stream,
                             const struct expect_reply *want, size_t nwant)
{
    size_t len = strlen(stream);
    for (size_t s = 0; s <= len; s++) {
        run_stream(proto, stream, len, want, nwant, s, false);
    }
    run_stream(proto, stream, len, want, nwant, 0, true);
}

Test(load_proto, resp_replies_fragmented_everywhere)
{
    const char *stream = "+OK\r\n"
                         "$-1\r\n"
                         "$5\r\nhello\r\n"
                         "$6\r\nab\r\ncd\r\n" /* CRLF inside a binary value */
                         "$0\r\n\r\n"
                         "*3\r\n$1\r\na\r\n$-1\r\n$2\r\nbc\r\n"
                         "-ERR wrong number of arguments for 'get' command\r\n"
                         ":42\r\n"
                         "*0\r\n"
                         "*-1\r\n"
                         "*2\r\n*2\r\n$1\r\nx\r\n$-1\r\n$1\r\ny\r\n";
    const struct expect_reply want[] = {
        {0, 0, false}, {0, 1, false}, {1, 0, false}, {1, 0, false}, {1, 0, false},
        {2, 1, false}, {0, 0, true},  {0, 0, false}, {0, 0, false}, {0, 0, false},
        {2, 1, false},
    };
    check_all_splits(LOAD_PROTO_RESP, stream, want, sizeof(want) / sizeof(want[0]));
}

Test(load_proto, resp_large_mget_reply)
{
    /* MGET of 100 keys with 512-byte values, half missing, fed in 1000-byte chunks */
    struct load_buf b = {0};
    char val[512];
    memset(val, 'v', sizeof(val));
    load_buf_append(&b, "*100\r\n", 6);
    for (int i = 0; i < 100; i++) {
        if (i % 2) {
            load_buf_append(&b, "$-1\r\n", 5);
        } else {
            load_buf_append(&b, "$512\r\n", 6);
            load_buf_append(&b, val, sizeof(val));
            load_buf_append(&b, "\r\n", 2);
        }
    }
    struct load_parser p;
    load_parser_init(&p, LOAD_PROTO_RESP);
    int replies = 0;
    for (size_t off = 0; off < b.len;) {
        size_t n = b.len - off < 1000 ? b.len - off : 1000;
        struct load_reply r;
        int done;
        size_t used = load_parser_feed(&p, b.data + off, n, &r, &done);
        cr_assert_geq(done, 0);
        off += used;
        if (done == 1) {
            replies++;
            cr_assert_eq(r.hits, 50);
            cr_assert_eq(r.misses, 50);
            cr_assert_eq(off, b.len);
        }
    }
    cr_assert_eq(replies, 1);
    load_buf_free(&b);
}

Test(load_proto, memcached_replies_fragmented_everywhere)
{
    const char *stream = "STORED\r\n"
                         "END\r\n"
                         "VALUE key:1 0 5\r\nhello\r\nEND\r\n"
                         "VALUE a 0 4 17\r\nx\r\ny\r\nVALUE bb 3 0\r\n\r\nEND\r\n"
                         "NOT_STORED\r\n"
                         "SERVER_ERROR out of memory storing object\r\n"
                         "ERROR\r\n"
                         "DELETED\r\n";
    const struct expect_reply want[] = {
        {0, 0, false}, {0, 0, false}, {1, 0, false}, {2, 0, false},
        {0, 0, true},  {0, 0, true},  {0, 0, true},  {0, 0, false},
    };
    check_all_splits(LOAD_PROTO_MEMCACHE, stream, want, sizeof(want) / sizeof(want[0]));
}

static int feed_all(enum load_protocol proto, const char *s)
{
    struct load_parser p;
    load_parser_init(&p, proto);
    size_t len = strlen(s), off = 0;
    while (off < len) {
        struct load_reply r;
        int done;
        off += load_parser_feed(&p, s + off, len - off, &r, &done);
        if (done < 0) {
            return -1;
        }
    }
    return 0;
}

Test(load_proto, protocol_violations_are_reported)
{
    cr_assert_eq(feed_all(LOAD_PROTO_RESP, "?what\r\n"), -1);
    cr_assert_eq(feed_all(LOAD_PROTO_RESP, "$abc\r\n"), -1);
    cr_assert_eq(feed_all(LOAD_PROTO_RESP, "$-2\r\n"), -1);
    cr_assert_eq(feed_all(LOAD_PROTO_RESP, "$3\r\nabcXY"), -1); /* payload not followed by CRLF */
    cr_assert_eq(feed_all(LOAD_PROTO_RESP, "+OK\n"), -1);       /* bare LF */
    cr_assert_eq(feed_all(LOAD_PROTO_MEMCACHE, "VALUE k 0\r\n"), -1);
    cr_assert_eq(feed_all(LOAD_PROTO_MEMCACHE, "BOGUS\r\n"), -1);
    char longline[LOAD_PARSER_LINE_MAX + 10];
    memset(longline, 'x', sizeof(longline) - 1);
    longline[0] = '+';
    longline[sizeof(longline) - 3] = '\r';
    longline[sizeof(longline) - 2] = '\n';
    longline[sizeof(longline) - 1] = '\0';
    cr_assert_eq(feed_all(LOAD_PROTO_RESP, longline), 0); /* fits in one feed: parsed in place */
    struct load_parser p;
    load_parser_init(&p, LOAD_PROTO_RESP);
    struct load_reply r;
    int done = 0;
    for (size_t i = 0; i < sizeof(longline) - 1 && done == 0; i++) { /* fragmented: bounded */
        load_parser_feed(&p, longline + i, 1, &r, &done);
    }
    cr_assert_eq(done, -1);
}
