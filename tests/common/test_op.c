/*
 * test_op.c - the op semantics in common/cudis_op.h (cudis_plan_op and
 * cudis_plan_build), checked without any store: every store relies on them.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cudis_hd.h"
#include "cudis_op.h"

#define NOW 1000000
#define MAXV 64

static cudis_plan plan;
static cudis_result res;
static uint8_t in[256];

/* An op over key "k" with value `val` placed in `in`. */
static cudis_op mk(uint8_t code, uint16_t flags, const char *val, int64_t arg, int64_t exp)
{
    cudis_op op;
    memset(&op, 0, sizeof(op));
    op.code = code;
    op.flags = flags;
    in[0] = 'k';
    op.key_off = 0;
    op.key_len = 1;
    op.val_off = 8;
    op.val_len = val ? (uint32_t)strlen(val) : 0;
    if (val) {
        memcpy(in + 8, val, op.val_len);
    }
    op.arg = arg;
    op.expire_ms = exp;
    return op;
}

static cudis_cur present(const char *val, int64_t exp)
{
    cudis_cur c = {true, (const uint8_t *)val, (uint32_t)strlen(val), exp, CUDIS_TYPE_STRING};
    return c;
}

static const cudis_cur absent = {false, NULL, 0, 0, 0};

static int run(cudis_op op, cudis_cur cur)
{
    return cudis_plan_op(&op, in + op.val_off, &cur, NOW, MAXV, &plan, &res);
}

/* The new value a WRITE plan builds, as a C string. */
static const char *built(const char *old)
{
    static char buf[MAXV + 1];
    cr_assert_eq(plan.action, CUDIS_ACT_WRITE);
    cudis_plan_build(&plan, (const uint8_t *)old, in + 8, (uint8_t *)buf);
    buf[plan.new_len] = '\0';
    return buf;
}

Test(str2ll, accepts_redis_integers)
{
    int64_t v;
    cr_assert(cudis_str2ll((const uint8_t *)"0", 1, &v) && v == 0);
    cr_assert(cudis_str2ll((const uint8_t *)"-17", 3, &v) && v == -17);
    cr_assert(cudis_str2ll((const uint8_t *)"9223372036854775807", 19, &v) && v == INT64_MAX);
    cr_assert(cudis_str2ll((const uint8_t *)"-9223372036854775808", 20, &v) && v == INT64_MIN);
}

Test(str2ll, rejects_what_redis_rejects)
{
    int64_t v;
    const char *bad[] = {"", "-", "-0", "01", "+1", " 1", "1 ", "1a", "9223372036854775808",
                         "-9223372036854775809", "18446744073709551616", "1.0", "123456789012345678901"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_not(cudis_str2ll((const uint8_t *)bad[i], (uint32_t)strlen(bad[i]), &v), "%s",
                      bad[i]);
    }
}

Test(ll2str, round_trips_limits)
{
    char buf[24];
    int64_t vals[] = {0, 1, -1, 42, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < 6; i++) {
        uint32_t n = cudis_ll2str(vals[i], buf);
        int64_t back;
        cr_assert(cudis_str2ll((const uint8_t *)buf, n, &back));
        cr_assert_eq(back, vals[i]);
    }
}

Test(get, miss_and_hit)
{
    cr_assert_eq(run(mk(CUDIS_OP_GET, 0, NULL, 0, 0), absent), CUDIS_OK);
    cr_assert_eq(res.flags, 0);
    cr_assert(plan.lookup && !plan.return_old && plan.action == CUDIS_ACT_NONE);
    cr_assert_eq(res.num, -1);

    cr_assert_eq(run(mk(CUDIS_OP_GET, 0, NULL, 0, 0), present("v", NOW + 5)), CUDIS_OK);
    cr_assert_eq(res.flags, CUDIS_R_FOUND);
    cr_assert(plan.return_old && plan.touch && plan.action == CUDIS_ACT_NONE);
    cr_assert_eq(res.num, NOW + 5);
}

Test(get, notouch_reads_without_refreshing)
{
    /* CLIENT NO-TOUCH: the value comes back, the recency stays (a hit still counts) */
    cr_assert_eq(run(mk(CUDIS_OP_GET, CUDIS_F_NOTOUCH, NULL, 0, 0), present("v", 0)), CUDIS_OK);
    cr_assert_eq(res.flags, CUDIS_R_FOUND);
    cr_assert(plan.return_old && plan.lookup && !plan.touch && plan.action == CUDIS_ACT_NONE);
}

Test(get, getdel_and_getex)
{
    run(mk(CUDIS_OP_GET, CUDIS_F_DEL, NULL, 0, 0), present("v", 0));
    cr_assert(plan.return_old && plan.action == CUDIS_ACT_DELETE);
    cr_assert_eq(res.flags, CUDIS_R_FOUND | CUDIS_R_DONE);

    run(mk(CUDIS_OP_GET, CUDIS_F_SETEXP, NULL, 0, NOW + 100), present("v", 0));
    cr_assert(plan.action == CUDIS_ACT_SETEXP && plan.expire_ms == NOW + 100);

    run(mk(CUDIS_OP_GET, CUDIS_F_SETEXP, NULL, 0, NOW - 1), present("v", 0));
    cr_assert_eq(plan.action, CUDIS_ACT_DELETE, "GETEX with a past time deletes");

    run(mk(CUDIS_OP_GET, CUDIS_F_PERSIST, NULL, 0, 0), present("v", NOW + 9));
    cr_assert(plan.action == CUDIS_ACT_SETEXP && plan.expire_ms == 0);

    run(mk(CUDIS_OP_GET, CUDIS_F_DEL, NULL, 0, 0), absent);
    cr_assert(plan.action == CUDIS_ACT_NONE && res.flags == 0);
}

Test(set, conditions)
{
    run(mk(CUDIS_OP_SET, CUDIS_F_NX, "a", 0, 0), present("old", 0));
    cr_assert(plan.action == CUDIS_ACT_NONE && !(res.flags & CUDIS_R_DONE));
    run(mk(CUDIS_OP_SET, CUDIS_F_NX, "a", 0, 0), absent);
    cr_assert_str_eq(built(""), "a");
    cr_assert(res.flags & CUDIS_R_DONE);
    run(mk(CUDIS_OP_SET, CUDIS_F_XX, "a", 0, 0), absent);
    cr_assert(plan.action == CUDIS_ACT_NONE && !(res.flags & CUDIS_R_DONE));
    run(mk(CUDIS_OP_SET, CUDIS_F_XX | CUDIS_F_GET, "a", 0, 0), present("old", 0));
    cr_assert(plan.return_old);
    cr_assert_str_eq(built("old"), "a");
    run(mk(CUDIS_OP_SET, CUDIS_F_NX | CUDIS_F_GET, "a", 0, 0), present("old", 0));
    cr_assert(plan.return_old && plan.action == CUDIS_ACT_NONE,
              "SET NX GET returns the old value and writes nothing");
}

Test(set, expiry_and_keepttl)
{
    run(mk(CUDIS_OP_SET, 0, "a", 0, NOW + 50), present("old", NOW + 9));
    cr_assert_eq(plan.expire_ms, NOW + 50);
    run(mk(CUDIS_OP_SET, 0, "a", 0, 0), present("old", NOW + 9));
    cr_assert_eq(plan.expire_ms, 0, "a plain SET clears the TTL");
    run(mk(CUDIS_OP_SET, CUDIS_F_KEEPTTL, "a", 0, 0), present("old", NOW + 9));
    cr_assert_eq(plan.expire_ms, NOW + 9);
    run(mk(CUDIS_OP_SET, 0, "a", 0, NOW - 1), present("old", 0));
    cr_assert(plan.action == CUDIS_ACT_DELETE && (res.flags & CUDIS_R_DONE),
              "a SET already expired is acknowledged and removes the key");
    run(mk(CUDIS_OP_SET, 0, "a", 0, NOW), absent);
    cr_assert(plan.action == CUDIS_ACT_NONE && (res.flags & CUDIS_R_DONE));
}

Test(set, too_big)
{
    char big[MAXV + 2];
    memset(big, 'x', MAXV + 1);
    big[MAXV + 1] = '\0';
    cr_assert_eq(run(mk(CUDIS_OP_SET, 0, big, 0, 0), absent), CUDIS_E_VALTOOBIG);
    big[MAXV] = '\0';
    cr_assert_eq(run(mk(CUDIS_OP_SET, 0, big, 0, 0), absent), CUDIS_OK);
    cr_assert_eq(plan.new_len, MAXV);
}

Test(incrby, arithmetic_and_errors)
{
    run(mk(CUDIS_OP_INCRBY, 0, NULL, 5, 0), absent);
    cr_assert_eq(res.num, 5);
    cr_assert_str_eq(built(""), "5");
    run(mk(CUDIS_OP_INCRBY, 0, NULL, -10, 0), present("3", NOW + 7));
    cr_assert_eq(res.num, -7);
    cr_assert_str_eq(built("3"), "-7");
    cr_assert_eq(plan.expire_ms, NOW + 7, "INCR keeps the TTL");
    cr_assert_eq(run(mk(CUDIS_OP_INCRBY, 0, NULL, 1, 0), present("abc", 0)), CUDIS_E_NOTINT);
    cr_assert_eq(run(mk(CUDIS_OP_INCRBY, 0, NULL, 1, 0), present(" 1", 0)), CUDIS_E_NOTINT);
    cr_assert_eq(run(mk(CUDIS_OP_INCRBY, 0, NULL, 1, 0), present("9223372036854775807", 0)),
                 CUDIS_E_OVERFLOW);
    cr_assert_eq(run(mk(CUDIS_OP_INCRBY, 0, NULL, -1, 0), present("-9223372036854775808", 0)),
                 CUDIS_E_OVERFLOW);
    cr_assert_eq(run(mk(CUDIS_OP_INCRBY, 0, NULL, INT64_MIN, 0), present("0", 0)), CUDIS_OK);
    cr_assert_str_eq(built("0"), "-9223372036854775808");
}

Test(append, creates_and_extends)
{
    run(mk(CUDIS_OP_APPEND, 0, "xy", 0, 0), absent);
    cr_assert_str_eq(built(""), "xy");
    cr_assert_eq(res.num, 2);
    run(mk(CUDIS_OP_APPEND, 0, "xy", 0, 0), present("ab", NOW + 3));
    cr_assert_str_eq(built("ab"), "abxy");
    cr_assert_eq(plan.expire_ms, NOW + 3);
    char big[MAXV];
    memset(big, 'x', MAXV - 1);
    big[MAXV - 1] = '\0';
    cr_assert_eq(run(mk(CUDIS_OP_APPEND, 0, "xy", 0, 0), present(big, 0)), CUDIS_E_VALTOOBIG);
}

Test(setrange, overwrite_pad_and_noop)
{
    run(mk(CUDIS_OP_SETRANGE, 0, "XY", 1, 0), present("abcd", 0));
    cr_assert_str_eq(built("abcd"), "aXYd");
    cr_assert_eq(res.num, 4);
    run(mk(CUDIS_OP_SETRANGE, 0, "XY", 3, 0), present("abcd", 0));
    cr_assert_str_eq(built("abcd"), "abcXY");
    run(mk(CUDIS_OP_SETRANGE, 0, "XY", 2, 0), absent);
    cr_assert_eq(plan.new_len, 4);
    uint8_t buf[8];
    cudis_plan_build(&plan, NULL, in + 8, buf);
    cr_assert(buf[0] == 0 && buf[1] == 0 && buf[2] == 'X' && buf[3] == 'Y');
    run(mk(CUDIS_OP_SETRANGE, 0, "", 5, 0), present("abc", 0));
    cr_assert(plan.action == CUDIS_ACT_NONE && res.num == 3);
    run(mk(CUDIS_OP_SETRANGE, 0, "", 5, 0), absent);
    cr_assert(plan.action == CUDIS_ACT_NONE && res.num == 0);
    cr_assert_eq(run(mk(CUDIS_OP_SETRANGE, 0, "x", MAXV, 0), absent), CUDIS_E_VALTOOBIG);
}

Test(expire, conditions)
{
    run(mk(CUDIS_OP_EXPIRE, 0, NULL, 0, NOW + 10), absent);
    cr_assert(!(res.flags & CUDIS_R_DONE));
    run(mk(CUDIS_OP_EXPIRE, CUDIS_F_NX, NULL, 0, NOW + 10), present("v", NOW + 5));
    cr_assert(!(res.flags & CUDIS_R_DONE));
    run(mk(CUDIS_OP_EXPIRE, CUDIS_F_XX, NULL, 0, NOW + 10), present("v", 0));
    cr_assert(!(res.flags & CUDIS_R_DONE));
    run(mk(CUDIS_OP_EXPIRE, CUDIS_F_GT, NULL, 0, NOW + 10), present("v", 0));
    cr_assert(!(res.flags & CUDIS_R_DONE), "GT: no TTL counts as infinite");
    run(mk(CUDIS_OP_EXPIRE, CUDIS_F_GT, NULL, 0, NOW + 10), present("v", NOW + 5));
    cr_assert(res.flags & CUDIS_R_DONE);
    run(mk(CUDIS_OP_EXPIRE, CUDIS_F_LT, NULL, 0, NOW + 10), present("v", 0));
    cr_assert(res.flags & CUDIS_R_DONE, "LT: no TTL counts as infinite");
    run(mk(CUDIS_OP_EXPIRE, CUDIS_F_LT, NULL, 0, NOW + 10), present("v", NOW + 5));
    cr_assert(!(res.flags & CUDIS_R_DONE));
    run(mk(CUDIS_OP_EXPIRE, 0, NULL, 0, NOW - 1), present("v", 0));
    cr_assert(plan.action == CUDIS_ACT_DELETE && (res.flags & CUDIS_R_DONE));
}

Test(persist_ttl_del_exists, basics)
{
    run(mk(CUDIS_OP_PERSIST, 0, NULL, 0, 0), present("v", 0));
    cr_assert(!(res.flags & CUDIS_R_DONE));
    run(mk(CUDIS_OP_PERSIST, 0, NULL, 0, 0), present("v", NOW + 1));
    cr_assert(plan.action == CUDIS_ACT_SETEXP && plan.expire_ms == 0);
    run(mk(CUDIS_OP_TTL, 0, NULL, 0, 0), present("v", NOW + 1));
    cr_assert_eq(res.num, NOW + 1);
    run(mk(CUDIS_OP_TTL, 0, NULL, 0, 0), present("v", 0));
    cr_assert_eq(res.num, -1);
    run(mk(CUDIS_OP_DEL, 0, NULL, 0, 0), present("v", 0));
    cr_assert(plan.action == CUDIS_ACT_DELETE && res.flags == (CUDIS_R_FOUND | CUDIS_R_DONE));
    run(mk(CUDIS_OP_EXISTS, CUDIS_F_TOUCH, NULL, 0, 0), present("v", 0));
    cr_assert(plan.touch && plan.action == CUDIS_ACT_NONE);
    run(mk(CUDIS_OP_EXISTS, 0, NULL, 0, 0), present("v", 0));
    cr_assert_not(plan.touch);
    cr_assert_eq(run(mk(99, 0, NULL, 0, 0), absent), CUDIS_E_INVAL);
}

Test(hash, deterministic_and_seeded)
{
    const char *k = "some key of 23 bytes..";
    uint64_t a = cudis_hash(k, strlen(k), 1), b = cudis_hash(k, strlen(k), 1);
    cr_assert_eq(a, b);
    cr_assert_neq(a, cudis_hash(k, strlen(k), 2));
    cr_assert_neq(cudis_hash("a", 1, 0), cudis_hash("b", 1, 0));
    cr_assert_neq(cudis_hash("", 0, 0), cudis_hash("\0", 1, 0));
}

/* cudis_hash as first written, one byte at a time: the word loads the host
 * uses must give the same bits (the GPU reads bytes). */
static uint64_t ref_read_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

static uint64_t ref_hash(const uint8_t *p, uint64_t len, uint64_t seed)
{
    const uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL,
                   k2 = 0x8ebc6af09c88c6e3ULL;
    uint64_t h = seed ^ cudis_mix64(seed ^ k0, k1) ^ len;
    while (len > 16) {
        h = cudis_mix64(ref_read_le(p, 8) ^ k1, ref_read_le(p + 8, 8) ^ h);
        p += 16;
        len -= 16;
    }
    uint64_t a = 0, b = 0;
    if (len > 8) {
        a = ref_read_le(p, 8);
        b = ref_read_le(p + 8, (int)len - 8);
    } else {
        a = ref_read_le(p, (int)len);
    }
    return cudis_mix64(k2 ^ len, cudis_mix64(a ^ k1, b ^ h));
}

Test(hash, word_loads_equal_byte_loads)
{
    uint8_t buf[200];
    for (int i = 0; i < 200; i++) {
        buf[i] = (uint8_t)(i * 131 + 7);
    }
    for (uint32_t len = 0; len <= 100; len++) {
        for (uint32_t off = 0; off < 8; off++) {
            uint64_t seed = 0x1234567ull * (len + 1);
            cr_assert_eq(cudis_hash(buf + off, len, seed), ref_hash(buf + off, len, seed),
                         "len %u off %u", len, off);
        }
    }
}

/* ------------------------------------------------------------------------
 * Hash encoding and edits (cudis_hash.h)
 * ---------------------------------------------------------------------- */

/* An encoded hash of n fields "f<i>" with values of vlen bytes 'a'+i. */
static uint32_t mk_hash(uint8_t *h, int n, uint32_t flen, uint32_t vlen)
{
    uint32_t at = CUDIS_HASH_HDR;
    uint8_t f[512], v[512];
    for (int i = 0; i < n; i++) {
        memset(f, 'x', flen);
        f[0] = (uint8_t)('A' + i);
        memset(v, 'a' + i, vlen);
        at += cudis_put_entry(h + at, f, flen, v, vlen);
    }
    h[0] = (uint8_t)n;
    h[1] = h[2] = h[3] = 0;
    return at;
}

Test(hash_enc, varints_round_trip)
{
    static const uint32_t vals[] = {0, 1, 127, 128, 16383, 16384, 2097151, 2097152, UINT32_MAX};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        uint8_t b[8];
        uint32_t n = cudis_varint_put(b, vals[i]), got = 0;
        cr_assert_eq(n, cudis_varint_len(vals[i]));
        cr_assert_eq(cudis_varint_get(b, n, &got), n);
        cr_assert_eq(got, vals[i]);
        cr_assert_eq(cudis_varint_get(b, n - 1, &got), 0, "a truncated varint is malformed");
    }
    uint8_t six[6] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    uint32_t got;
    cr_assert_eq(cudis_varint_get(six, 6, &got), 0, "more than 5 bytes is malformed");
}

Test(hash_enc, long_fields_and_malformed_input)
{
    static uint8_t h[8192];
    uint32_t n = mk_hash(h, 5, 200, 300); /* 2-byte lengths */
    cr_assert(cudis_hash_valid(h, n));
    cr_assert_eq(cudis_hash_count(h, n), 5);
    uint8_t f[200];
    memset(f, 'x', 200);
    f[0] = 'C';
    cudis_hentry e;
    cr_assert(cudis_hash_find(h, n, f, 200, &e));
    cr_assert_eq(e.vlen, 300);
    cr_assert_eq(e.v[0], 'c');
    /* every truncation is found malformed, never read past its end */
    for (uint32_t cut = CUDIS_HASH_HDR; cut < n; cut++) {
        uint8_t *t = malloc(cut);
        memcpy(t, h, cut);
        cr_assert(!cudis_hash_valid(t, cut), "cut at %u", cut);
        cudis_hedits ed = {CUDIS_HEDIT_DEL, (const uint8_t *)"\x01Z", 2, NULL, 0};
        cudis_happly a = cudis_hash_apply(&ed, false, t, cut, NULL);
        cr_assert(a.bad, "cut at %u", cut);
        free(t);
    }
    /* a count that does not match its entries */
    h[0] = 6;
    cudis_hedits ed = {CUDIS_HEDIT_DEL, (const uint8_t *)"\x01Z", 2, NULL, 0};
    cr_assert(cudis_hash_apply(&ed, false, h, n, NULL).bad);
}

Test(hash_enc, apply_set_del_incr)
{
    static uint8_t h[4096], o[4096];
    uint32_t n = mk_hash(h, 3, 1, 2); /* A=aa B=bb C=cc */
    /* SET B=1, D=2, B=3, D=4: B replaced in place by its last value, D added once */
    const uint8_t ed_set[] = {1, 'B', 1, '1', 1, 'D', 1, '2', 1, 'B', 1, '3', 1, 'D', 1, '4'};
    cudis_hedits ed = {CUDIS_HEDIT_SET, ed_set, sizeof(ed_set), NULL, 0};
    cudis_happly m = cudis_hash_apply(&ed, false, h, n, NULL);
    cudis_happly a = cudis_hash_apply(&ed, false, h, n, o);
    cr_assert_eq(m.len, a.len, "measuring and building agree");
    cr_assert_eq(a.added, 1);
    cr_assert_eq(a.replaced, 1);
    cr_assert_eq(a.count, 4);
    const uint8_t want[] = {4, 0,   0, 0,   1, 'A', 2,   'a', 'a', 1, 'B',
                            1, '3', 1, 'C', 2, 'c', 'c', 1,   'D', 1, '4'};
    cr_assert_eq(a.len, sizeof(want));
    cr_assert_eq(memcmp(o, want, sizeof(want)), 0);
    /* NX leaves B, adds D with the value its last edit gives */
    a = cudis_hash_apply(&ed, true, h, n, o);
    cr_assert_eq(a.replaced, 0);
    cr_assert_eq(a.added, 1);
    /* DEL */
    const uint8_t ed_del[] = {1, 'A', 1, 'Z', 1, 'C', 1, 'A'};
    cudis_hedits dl = {CUDIS_HEDIT_DEL, ed_del, sizeof(ed_del), NULL, 0};
    a = cudis_hash_apply(&dl, false, h, n, o);
    cr_assert_eq(a.removed, 2);
    cr_assert_eq(a.count, 1);
    const uint8_t want2[] = {1, 0, 0, 0, 1, 'B', 2, 'b', 'b'};
    cr_assert_eq(memcmp(o, want2, sizeof(want2)), 0);
    /* INCR: the field's new text, an empty field name too */
    cudis_hedits in = {CUDIS_HEDIT_INCR, (const uint8_t *)"", 0, (const uint8_t *)"-12", 3};
    a = cudis_hash_apply(&in, false, NULL, 0, o);
    cr_assert_eq(a.added, 1);
    const uint8_t want3[] = {1, 0, 0, 0, 0, 3, '-', '1', '2'};
    cr_assert_eq(a.len, sizeof(want3));
    cr_assert_eq(memcmp(o, want3, sizeof(want3)), 0);
    /* truncated edits */
    cudis_hedits bad = {CUDIS_HEDIT_SET, ed_set, 3, NULL, 0};
    cr_assert(cudis_hash_apply(&bad, false, h, n, NULL).bad);
}

Test(hash_enc, plans)
{
    static uint8_t h[256];
    uint32_t n = mk_hash(h, 2, 1, 3); /* A=aaa B=bbb */
    cudis_cur cur = {true, h, n, 0, CUDIS_TYPE_HASH};
    cudis_op op = mk(CUDIS_OP_HGET, 0, "B", 0, 0);
    cr_assert_eq(run(op, cur), CUDIS_OK);
    cr_assert(plan.return_old);
    cr_assert_eq(plan.ret_len, 3);
    cr_assert_eq(h[plan.ret_off], 'b');
    cr_assert_eq(res.num, 1);
    op = mk(CUDIS_OP_HINCRBY, 0, "A", 1, 0);
    cr_assert_eq(run(op, cur), CUDIS_E_NOTINT);
    op = mk(CUDIS_OP_GET, 0, NULL, 0, 0);
    cr_assert_eq(run(op, cur), CUDIS_E_WRONGTYPE, "a string GET of a hash");
    op.type = CUDIS_TYPE_ANY;
    cr_assert_eq(run(op, cur), CUDIS_OK);
    cr_assert_eq(res.type, CUDIS_TYPE_HASH);
    cr_assert_eq(plan.ret_len, n);
    op = mk(CUDIS_OP_SET, 0, "v", 0, 0);
    cr_assert_eq(run(op, cur), CUDIS_OK, "SET replaces any type");
    cr_assert_eq(plan.new_type, CUDIS_TYPE_STRING);
    op = mk(CUDIS_OP_HLEN, 0, NULL, 0, 0);
    cr_assert_eq(run(op, present("abc", 0)), CUDIS_E_WRONGTYPE);
    /* the value limit applies to the hash that would result */
    char big[80];
    memset(big, 'x', sizeof(big));
    big[0] = 1;
    big[1] = 'Q';
    big[2] = 70;
    big[73] = '\0';
    op = mk(CUDIS_OP_HSET, 0, big, 0, 0);
    cr_assert_eq(run(op, cur), CUDIS_E_VALTOOBIG);
    cr_assert_eq(res.flags & CUDIS_R_DONE, 0);
    big[2] = 40;
    big[43] = '\0';
    op = mk(CUDIS_OP_HSET, 0, big, 0, 0);
    cr_assert_eq(run(op, absent), CUDIS_OK);
    cr_assert_eq(plan.new_len, CUDIS_HASH_HDR + 1 + 1 + 1 + 40);
    cr_assert_eq(plan.new_type, CUDIS_TYPE_HASH);
    cr_assert_eq(res.num, 1);
}

/* Big edits of big hashes take the host's field indexes (cudis_hix):
 * each must build exactly what the walks build (cudis_hash_apply_ix with
 * no index), for SET, SET NX and DEL, with fields repeated in the edits
 * and edits of fields there and not there. */
static uint32_t rand_entry(uint8_t *p, uint64_t *s, uint32_t nfields, bool val)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    char f[16], v[40];
    int fl = snprintf(f, sizeof(f), "f%u", (unsigned)((*s >> 33) % nfields));
    int vl = snprintf(v, sizeof(v), "v%llu", (unsigned long long)(*s >> 40));
    if (!val) {
        uint32_t at = cudis_varint_put(p, (uint32_t)fl);
        memcpy(p + at, f, (size_t)fl);
        return at + (uint32_t)fl;
    }
    return cudis_put_entry(p, (const uint8_t *)f, (uint32_t)fl, (const uint8_t *)v, (uint32_t)vl);
}

Test(hash_enc, indexed_apply_equals_walks)
{
    static uint8_t old[1 << 17], ed[1 << 16], a[1 << 18], b[1 << 18];
    uint64_t s = 99;
    /* a hash of 2,000 distinct fields */
    uint32_t olen = CUDIS_HASH_HDR;
    for (uint32_t i = 0; i < 2000; i++) {
        char f[16];
        int fl = snprintf(f, sizeof(f), "f%u", i * 2);
        olen +=
            cudis_put_entry(old + olen, (const uint8_t *)f, (uint32_t)fl, (const uint8_t *)"x", 1);
    }
    uint32_t n = 2000;
    memcpy(old, &n, 4);
    for (int round = 0; round < 12; round++) {
        uint8_t kind = round % 3 == 2 ? CUDIS_HEDIT_DEL : CUDIS_HEDIT_SET;
        bool nx = round % 3 == 1;
        uint32_t elen = 0;
        for (int k = 0; k < 600; k++) {
            elen += rand_entry(ed + elen, &s, 5000, kind == CUDIS_HEDIT_SET);
        }
        cudis_hedits e = {kind, ed, elen, 0, 0};
        cudis_hix none;
        none.slot = 0;
        cudis_happly ra = cudis_hash_apply(&e, nx, old, olen, 0);
        cudis_happly rb = cudis_hash_apply_ix(&e, nx, old, olen, 0, &none, &none);
        cr_assert(!ra.bad && !rb.bad);
        cr_assert_eq(ra.len, rb.len, "round %d", round);
        cr_assert_eq(ra.count, rb.count);
        cr_assert_eq(ra.added, rb.added);
        cr_assert_eq(ra.removed, rb.removed);
        cr_assert_eq(ra.replaced, rb.replaced);
        cr_assert(ra.added + ra.removed + ra.replaced > 0, "round %d edits something", round);
        cr_assert_leq(ra.len, sizeof(a));
        (void)cudis_hash_apply(&e, nx, old, olen, a);
        (void)cudis_hash_apply_ix(&e, nx, old, olen, b, &none, &none);
        cr_assert_eq(memcmp(a, b, ra.len), 0, "round %d: the same bytes", round);
        cr_assert(cudis_hash_valid(a, (uint32_t)ra.len));
        if (ra.len <= sizeof(old)) { /* the next round edits this one */
            memcpy(old, a, ra.len);
            olen = (uint32_t)ra.len;
        }
    }
}
