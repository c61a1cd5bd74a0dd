/*
 * e2e_bits.c - the bitmap and string-algorithm commands: SETBIT, GETBIT,
 * BITCOUNT, BITPOS, BITFIELD, BITFIELD_RO, BITOP, LCS. The table below was
 * recorded from Debian's redis-server 7.0.15 (each request's exact reply
 * bytes, in order, on one connection) and is replayed byte for byte; then
 * LCS IDX in RESP3, the expiry a bit write keeps, and a bitmap built by a
 * pipeline read back bit by bit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(bits, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

#define ROW(req, rep) {req, rep, sizeof(rep) - 1}

static const struct {
    const char *req, *rep;
    size_t rep_len; /* replies may hold NUL bytes */
} redis7_replies[] = {
    ROW("*4\r\n$8\r\nbitcount\r\n$6\r\nnosuch\r\n$1\r\na\r\n$1\r\nb\r\n", ":0\r\n"),
    ROW("*3\r\n$8\r\nbitcount\r\n$6\r\nnosuch\r\n$1\r\n0\r\n", ":0\r\n"),
    ROW("*3\r\n$3\r\nset\r\n$1\r\ns\r\n$6\r\nfoobar\r\n", "+OK\r\n"),
    ROW("*2\r\n$8\r\nbitcount\r\n$1\r\ns\r\n", ":26\r\n"),
    ROW("*5\r\n$8\r\nbitcount\r\n$1\r\ns\r\n$1\r\n1\r\n$1\r\n1\r\n$4\r\nbyte\r\n", ":6\r\n"),
    ROW("*5\r\n$8\r\nbitcount\r\n$1\r\ns\r\n$1\r\n5\r\n$2\r\n30\r\n$3\r\nbit\r\n", ":17\r\n"),
    ROW("*5\r\n$8\r\nbitcount\r\n$1\r\ns\r\n$1\r\n0\r\n$1\r\n1\r\n$1\r\nx\r\n", "-ERR syntax error\r\n"),
    ROW("*3\r\n$8\r\nbitcount\r\n$1\r\ns\r\n$1\r\n0\r\n", "-ERR syntax error\r\n"),
    ROW("*4\r\n$8\r\nbitcount\r\n$1\r\ns\r\n$2\r\n-2\r\n$2\r\n-1\r\n", ":7\r\n"),
    ROW("*4\r\n$8\r\nbitcount\r\n$1\r\ns\r\n$1\r\n1\r\n$1\r\n0\r\n", ":0\r\n"),
    ROW("*3\r\n$6\r\nbitpos\r\n$6\r\nnosuch\r\n$1\r\n0\r\n", ":0\r\n"),
    ROW("*3\r\n$6\r\nbitpos\r\n$6\r\nnosuch\r\n$1\r\n1\r\n", ":-1\r\n"),
    ROW("*3\r\n$6\r\nbitpos\r\n$1\r\ns\r\n$1\r\n2\r\n", "-ERR The bit argument must be 1 or 0.\r\n"),
    ROW("*3\r\n$6\r\nbitpos\r\n$1\r\ns\r\n$1\r\nx\r\n", "-ERR value is not an integer or out of range\r\n"),
    ROW("*4\r\n$6\r\nbitpos\r\n$6\r\nnosuch\r\n$1\r\n1\r\n$1\r\na\r\n", ":-1\r\n"),
    ROW("*3\r\n$6\r\nbitpos\r\n$1\r\ns\r\n$1\r\n1\r\n", ":1\r\n"),
    ROW("*3\r\n$6\r\nbitpos\r\n$1\r\ns\r\n$1\r\n0\r\n", ":0\r\n"),
    ROW("*4\r\n$6\r\nbitpos\r\n$1\r\ns\r\n$1\r\n1\r\n$1\r\n2\r\n", ":17\r\n"),
    ROW("*6\r\n$6\r\nbitpos\r\n$1\r\ns\r\n$1\r\n1\r\n$1\r\n2\r\n$2\r\n-1\r\n$3\r\nbit\r\n", ":2\r\n"),
    ROW("*6\r\n$6\r\nbitpos\r\n$1\r\ns\r\n$1\r\n0\r\n$1\r\n0\r\n$2\r\n-1\r\n$3\r\nbit\r\n", ":0\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nf\r\n$1\r\n0\r\n$1\r\n1\r\n", ":0\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\n1\r\n", ":0\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nf\r\n$1\r\n2\r\n$1\r\n1\r\n", ":0\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nf\r\n$1\r\n3\r\n$1\r\n1\r\n", ":0\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nf\r\n$1\r\n4\r\n$1\r\n1\r\n", ":0\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nf\r\n$1\r\n5\r\n$1\r\n1\r\n", ":0\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nf\r\n$1\r\n6\r\n$1\r\n1\r\n", ":0\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nf\r\n$1\r\n7\r\n$1\r\n1\r\n", ":0\r\n"),
    ROW("*3\r\n$6\r\nbitpos\r\n$1\r\nf\r\n$1\r\n0\r\n", ":8\r\n"),
    ROW("*5\r\n$6\r\nbitpos\r\n$1\r\nf\r\n$1\r\n0\r\n$1\r\n0\r\n$1\r\n0\r\n", ":-1\r\n"),
    ROW("*4\r\n$6\r\nbitpos\r\n$1\r\nf\r\n$1\r\n0\r\n$1\r\n0\r\n", ":8\r\n"),
    ROW("*3\r\n$6\r\ngetbit\r\n$1\r\nf\r\n$1\r\n3\r\n", ":1\r\n"),
    ROW("*3\r\n$6\r\ngetbit\r\n$1\r\nf\r\n$3\r\n100\r\n", ":0\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nx\r\n$2\r\n-1\r\n$1\r\n1\r\n", "-ERR bit offset is not an integer or out of range\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\n2\r\n", "-ERR bit is not an integer or out of range\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nx\r\n$10\r\n4294967296\r\n$1\r\n1\r\n", "-ERR bit offset is not an integer or out of range\r\n"),
    ROW("*3\r\n$6\r\ngetbit\r\n$1\r\nx\r\n$10\r\n4294967296\r\n", "-ERR bit offset is not an integer or out of range\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$1\r\nx\r\n$3\r\n100\r\n$1\r\n1\r\n", ":0\r\n"),
    ROW("*2\r\n$3\r\nget\r\n$1\r\nx\r\n", "$13\r\n\000\000\000\000\000\000\000\000\000\000\000\000\010\r\n"),
    ROW("*2\r\n$6\r\nstrlen\r\n$1\r\nx\r\n", ":13\r\n"),
    ROW("*19\r\n$8\r\nbitfield\r\n$6\r\nnosuch\r\n$3\r\nget\r\n$2\r\ni8\r\n$1\r\n0\r\n$3\r\nset\r\n$2\r\ni8\r\n$1\r\n0\r\n$3\r\n300\r\n$6\r\nincrby\r\n$2\r\nu2\r\n$3\r\n100\r\n$1\r\n1\r\n$8\r\noverflow\r\n$3\r\nsat\r\n$6\r\nincrby\r\n$2\r\nu2\r\n$3\r\n102\r\n$1\r\n1\r\n", "*4\r\n:0\r\n:0\r\n:1\r\n:1\r\n"),
    ROW("*2\r\n$3\r\nget\r\n$6\r\nnosuch\r\n", "$13\r\n,\000\000\000\000\000\000\000\000\000\000\000\005\r\n"),
    ROW("*5\r\n$8\r\nbitfield\r\n$1\r\nb\r\n$3\r\nget\r\n$3\r\nu64\r\n$1\r\n0\r\n", "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ROW("*5\r\n$8\r\nbitfield\r\n$1\r\nb\r\n$3\r\nget\r\n$2\r\ni8\r\n$2\r\n-1\r\n", "-ERR bit offset is not an integer or out of range\r\n"),
    ROW("*4\r\n$8\r\nbitfield\r\n$1\r\nb\r\n$8\r\noverflow\r\n$4\r\nnope\r\n", "-ERR Invalid OVERFLOW type specified\r\n"),
    ROW("*6\r\n$11\r\nbitfield_ro\r\n$1\r\nb\r\n$3\r\nset\r\n$2\r\ni8\r\n$1\r\n0\r\n$1\r\n1\r\n", "-ERR BITFIELD_RO only supports the GET subcommand\r\n"),
    ROW("*2\r\n$8\r\nbitfield\r\n$1\r\nb\r\n", "*0\r\n"),
    ROW("*5\r\n$11\r\nbitfield_ro\r\n$1\r\nb\r\n$3\r\nget\r\n$2\r\ni8\r\n$1\r\n0\r\n", "*1\r\n:0\r\n"),
    ROW("*31\r\n$8\r\nbitfield\r\n$2\r\nbf\r\n$3\r\nset\r\n$2\r\ni8\r\n$2\r\n#1\r\n$4\r\n-100\r\n$3\r\nget\r\n$2\r\ni8\r\n$2\r\n#1\r\n$3\r\nget\r\n$2\r\nu8\r\n$1\r\n8\r\n$6\r\nincrby\r\n$2\r\ni8\r\n$2\r\n#1\r\n$4\r\n-100\r\n$8\r\noverflow\r\n$4\r\nfail\r\n$6\r\nincrby\r\n$2\r\ni8\r\n$2\r\n#1\r\n$4\r\n-100\r\n$8\r\noverflow\r\n$3\r\nsat\r\n$6\r\nincrby\r\n$2\r\ni8\r\n$2\r\n#1\r\n$4\r\n-100\r\n$3\r\nget\r\n$2\r\ni8\r\n$2\r\n#1\r\n", "*7\r\n:0\r\n:-100\r\n:156\r\n:56\r\n:-44\r\n:-128\r\n:-128\r\n"),
    ROW("*8\r\n$8\r\nbitfield\r\n$3\r\nbf2\r\n$8\r\noverflow\r\n$4\r\nfail\r\n$6\r\nincrby\r\n$2\r\nu4\r\n$3\r\n100\r\n$2\r\n20\r\n", "*1\r\n$-1\r\n"),
    ROW("*2\r\n$6\r\nstrlen\r\n$3\r\nbf2\r\n", ":13\r\n"),
    ROW("*26\r\n$8\r\nbitfield\r\n$3\r\nbf3\r\n$3\r\nset\r\n$2\r\nu8\r\n$1\r\n0\r\n$3\r\n255\r\n$6\r\nincrby\r\n$2\r\nu8\r\n$1\r\n0\r\n$1\r\n1\r\n$8\r\noverflow\r\n$3\r\nsat\r\n$6\r\nincrby\r\n$2\r\nu8\r\n$1\r\n0\r\n$2\r\n10\r\n$3\r\nset\r\n$3\r\ni64\r\n$1\r\n8\r\n$2\r\n-1\r\n$3\r\nget\r\n$3\r\ni64\r\n$1\r\n8\r\n$3\r\nget\r\n$3\r\nu63\r\n$1\r\n8\r\n", "*6\r\n:0\r\n:0\r\n:10\r\n:0\r\n:-1\r\n:9223372036854775807\r\n"),
    ROW("*5\r\n$5\r\nbitop\r\n$3\r\nnot\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n", "-ERR BITOP NOT must be called with a single source key.\r\n"),
    ROW("*4\r\n$5\r\nbitop\r\n$2\r\nxx\r\n$1\r\nd\r\n$1\r\na\r\n", "-ERR syntax error\r\n"),
    ROW("*3\r\n$3\r\nset\r\n$2\r\na1\r\n$3\r\nabc\r\n", "+OK\r\n"),
    ROW("*3\r\n$3\r\nset\r\n$2\r\na2\r\n$4\r\nxyzw\r\n", "+OK\r\n"),
    ROW("*5\r\n$5\r\nbitop\r\n$3\r\nand\r\n$1\r\nd\r\n$2\r\na1\r\n$2\r\na2\r\n", ":4\r\n"),
    ROW("*2\r\n$3\r\nget\r\n$1\r\nd\r\n", "$4\r\n``b\000\r\n"),
    ROW("*5\r\n$5\r\nbitop\r\n$2\r\nor\r\n$1\r\nd\r\n$2\r\na1\r\n$2\r\na2\r\n", ":4\r\n"),
    ROW("*2\r\n$3\r\nget\r\n$1\r\nd\r\n", "$4\r\ny{{w\r\n"),
    ROW("*5\r\n$5\r\nbitop\r\n$3\r\nxor\r\n$1\r\nd\r\n$2\r\na1\r\n$6\r\nnosuch\r\n", ":13\r\n"),
    ROW("*2\r\n$3\r\nget\r\n$1\r\nd\r\n", "$13\r\nMbc\000\000\000\000\000\000\000\000\000\005\r\n"),
    ROW("*4\r\n$5\r\nbitop\r\n$3\r\nnot\r\n$1\r\nd\r\n$2\r\na1\r\n", ":3\r\n"),
    ROW("*2\r\n$3\r\nget\r\n$1\r\nd\r\n", "$3\r\n\236\235\234\r\n"),
    ROW("*5\r\n$5\r\nbitop\r\n$3\r\nand\r\n$1\r\nd\r\n$6\r\nnosuch\r\n$7\r\nnosuch2\r\n", ":13\r\n"),
    ROW("*2\r\n$6\r\nexists\r\n$1\r\nd\r\n", ":1\r\n"),
    ROW("*5\r\n$3\r\nlcs\r\n$1\r\ns\r\n$6\r\nnosuch\r\n$3\r\nlen\r\n$3\r\nidx\r\n", "-ERR If you want both the length and indexes, please just use IDX.\r\n"),
    ROW("*3\r\n$3\r\nset\r\n$2\r\nk1\r\n$8\r\nohmytext\r\n", "+OK\r\n"),
    ROW("*3\r\n$3\r\nset\r\n$2\r\nk2\r\n$9\r\nmynewtext\r\n", "+OK\r\n"),
    ROW("*3\r\n$3\r\nlcs\r\n$2\r\nk1\r\n$2\r\nk2\r\n", "$6\r\nmytext\r\n"),
    ROW("*4\r\n$3\r\nlcs\r\n$2\r\nk1\r\n$2\r\nk2\r\n$3\r\nlen\r\n", ":6\r\n"),
    ROW("*4\r\n$3\r\nlcs\r\n$2\r\nk1\r\n$2\r\nk2\r\n$3\r\nidx\r\n", "*4\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:6\r\n"),
    ROW("*7\r\n$3\r\nlcs\r\n$2\r\nk1\r\n$2\r\nk2\r\n$3\r\nidx\r\n$11\r\nminmatchlen\r\n$1\r\n4\r\n$12\r\nwithmatchlen\r\n", "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nlen\r\n:6\r\n"),
    ROW("*5\r\n$3\r\nlcs\r\n$2\r\nk1\r\n$2\r\nk2\r\n$3\r\nidx\r\n$12\r\nwithmatchlen\r\n", "*4\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:6\r\n"),
    ROW("*3\r\n$3\r\nlcs\r\n$6\r\nnosuch\r\n$7\r\nnosuch2\r\n", "$0\r\n\r\n"),
    ROW("*4\r\n$3\r\nlcs\r\n$2\r\nk1\r\n$2\r\nk2\r\n$3\r\nfoo\r\n", "-ERR syntax error\r\n"),
    ROW("*5\r\n$3\r\nset\r\n$3\r\nex1\r\n$11\r\nhello world\r\n$2\r\nex\r\n$3\r\n100\r\n", "+OK\r\n"),
    ROW("*4\r\n$6\r\nsetbit\r\n$3\r\nex1\r\n$1\r\n0\r\n$1\r\n1\r\n", ":0\r\n"),
};

Test(bits, replies_as_redis_7)
{
    int fd = e2e_raw_open(e2e_srv.port);
    for (size_t i = 0; i < sizeof(redis7_replies) / sizeof(redis7_replies[0]); i++) {
        const char *req = redis7_replies[i].req;
        cr_assert(e2e_raw_send(fd, req, strlen(req)));
        size_t n;
        char *got = e2e_raw_reply(fd, &n, 5000);
        cr_assert_not_null(got, "no reply to %s", req);
        cr_assert(n == redis7_replies[i].rep_len && memcmp(got, redis7_replies[i].rep, n) == 0,
                  "row %zu, sent %s: got %.*s, wanted %s", i, req, (int)n, got,
                  redis7_replies[i].rep);
        free(got);
    }
    close(fd);
}

Test(bits, lcs_idx_resp3_and_expiry_kept)
{
    int fd = e2e_raw_open(e2e_srv.port);
    size_t n;
    e2e_raw_send(fd, "HELLO 3\r\n", 9);
    free(e2e_raw_reply(fd, &n, 5000));
    RAW_EXPECT(fd, "SET k1 ohmytext\r\n", "+OK\r\n");
    RAW_EXPECT(fd, "SET k2 mynewtext\r\n", "+OK\r\n");
    RAW_EXPECT(fd, "LCS k1 k2 IDX MINMATCHLEN 4\r\n",
               "%2\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n"
               "$3\r\nlen\r\n:6\r\n");
    close(fd);
    redisContext *c = e2e_connect();
    CHECK_OK(c, "SET ex v EX 100");
    CHECK_INT(c, 0, "SETBIT ex 0 1");
    redisReply *f = e2e_cmd(c, "BITFIELD ex INCRBY u2 100 1");
    cr_assert(f->type == REDIS_REPLY_ARRAY && f->elements == 1 && f->element[0]->integer == 1);
    freeReplyObject(f);
    redisReply *r = e2e_cmd(c, "TTL ex");
    cr_assert(r->integer > 90 && r->integer <= 100, "a bit write keeps the expiry: %lld", r->integer);
    freeReplyObject(r);
    redisFree(c);
}

/* A bitmap of 10,000 bits set by a pipeline (every third bit), then read
 * back: GETBIT of each, BITCOUNT, BITPOS of the first 0. */
Test(bits, pipelined_bitmap)
{
    redisContext *c = e2e_connect();
    const int n = 10000;
    for (int i = 0; i < n; i += 3) {
        redisAppendCommand(c, "SETBIT bm %d 1", i);
    }
    for (int i = 0; i < n; i += 3) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        cr_assert_eq(r->integer, 0);
        freeReplyObject(r);
    }
    for (int i = 0; i < n; i++) {
        redisAppendCommand(c, "GETBIT bm %d", i);
    }
    for (int i = 0; i < n; i++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        cr_assert_eq(r->integer, i % 3 == 0, "bit %d", i);
        freeReplyObject(r);
    }
    CHECK_INT(c, (n + 2) / 3, "BITCOUNT bm");
    CHECK_INT(c, 1, "BITPOS bm 0");
    CHECK_INT(c, (n - 1) / 8 + 1, "STRLEN bm");
    redisFree(c);
}
