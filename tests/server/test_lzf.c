/* test_lzf.c - LZF: what lzf_compress writes decodes back to the input
 * (runs at the format's limits: 32-byte literal runs, 264-byte references,
 * offsets of 8192, overlapping copies), a compressed size within its cap
 * or 0, and streams the decoder must refuse. Redis reading cudis's LZF is
 * tested end to end (tests/e2e/test_persistence.py, test_dump.py). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "lzf.h"

/* Compress in (cap: n - 4, as the RDB writer asks), decode, compare;
 * returns the compressed size (0: did not fit). */
static size_t round_trip(const uint8_t *in, size_t n)
{
    size_t cap = n > 4 ? n - 4 : 0;
    uint8_t *c = malloc(cap + 1);
    uint8_t *d = malloc(n + 1);
    size_t k = lzf_compress(in, n, c, cap);
    cr_assert_leq(k, cap);
    if (k > 0) {
        cr_assert(lzf_decompress(c, k, d, n), "decodes (n=%zu)", n);
        cr_assert_eq(memcmp(d, in, n), 0, "same bytes (n=%zu)", n);
        cr_assert_not(lzf_decompress(c, k, d, n - 1), "a shorter output is refused");
    }
    free(c);
    free(d);
    return k;
}

static uint64_t rng = 88172645463325252ull;
static uint8_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint8_t)rng;
}

Test(lzf, compressible_inputs_round_trip)
{
    static uint8_t b[1 << 20];
    memset(b, 'y', sizeof(b)); /* one long overlapping run: references of 264 */
    size_t k = round_trip(b, sizeof(b));
    cr_assert_gt(k, 0);
    cr_assert_lt(k, sizeof(b) / 60, "about 3 bytes a 264-byte reference");
    for (size_t n = 21; n < 600; n++) { /* every length around the small ones */
        for (size_t i = 0; i < n; i++) {
            b[i] = (uint8_t)("abcab"[i % 5]);
        }
        cr_assert_gt(round_trip(b, n), 0, "n=%zu", n);
    }
    /* repeats just inside and just past the reach of an offset (8192) */
    for (size_t period = 8180; period <= 8200; period++) {
        for (size_t i = 0; i < period; i++) {
            b[i] = rnd();
        }
        for (size_t i = period; i < 3 * period; i++) {
            b[i] = b[i - period];
        }
        k = round_trip(b, 3 * period);
        if (period <= 8192) {
            cr_assert(k > 0 && k < 2 * period, "period %zu: the repeats are references", period);
        }
    }
    /* literals and short matches mixed: words from a small alphabet */
    for (size_t i = 0; i < 200000; i++) {
        b[i] = (uint8_t)('a' + rnd() % 4);
    }
    cr_assert_gt(round_trip(b, 200000), 0);
}

Test(lzf, incompressible_input_does_not_fit)
{
    static uint8_t b[70000];
    for (size_t n = 5; n < 200; n++) {
        for (size_t i = 0; i < n; i++) {
            b[i] = rnd();
        }
        cr_assert_eq(round_trip(b, n), 0, "random bytes grow by a byte per 32: n=%zu", n);
    }
    for (size_t i = 0; i < sizeof(b); i++) {
        b[i] = rnd();
    }
    cr_assert_eq(round_trip(b, sizeof(b)), 0);
    uint8_t out[64];
    cr_assert_eq(lzf_compress(b, 0, out, sizeof(out)), 0, "empty input");
    cr_assert_eq(lzf_compress(b, 10, out, 0), 0, "no room");
    memset(b, 'z', 1000);
    for (size_t cap = 1; cap < 40; cap++) { /* caps around what 1000 z's take */
        uint8_t *o = malloc(cap);           /* exactly cap: ASan sees a write past it */
        size_t k = lzf_compress(b, 1000, o, cap);
        cr_assert(k == 0 || k <= cap, "cap %zu: %zu", cap, k);
        cr_assert(k == 0 || lzf_decompress(o, k, b + 1000, 1000));
        free(o);
    }
}

Test(lzf, bad_streams_are_refused)
{
    uint8_t out[16];
    const uint8_t lit_short[] = {4, 'a', 'b'};             /* a run of 5 with 2 bytes */
    const uint8_t ref_first[] = {0x20, 0x00};              /* a reference before any output */
    const uint8_t ref_far[] = {0, 'a', 0x20, 0x05};        /* back 6 of 1 byte written */
    const uint8_t ref_cut[] = {0, 'a', 0xe0};              /* long reference, no length byte */
    const uint8_t too_long[] = {0, 'a', 0xe0, 0xff, 0x00}; /* 264 bytes into 16 */
    cr_assert_not(lzf_decompress(lit_short, sizeof(lit_short), out, 5));
    cr_assert_not(lzf_decompress(ref_first, sizeof(ref_first), out, 3));
    cr_assert_not(lzf_decompress(ref_far, sizeof(ref_far), out, 4));
    cr_assert_not(lzf_decompress(ref_cut, sizeof(ref_cut), out, 10));
    cr_assert_not(lzf_decompress(too_long, sizeof(too_long), out, sizeof(out)));
    const uint8_t ok[] = {0, 'a', 0x20, 0x00}; /* 'a', then 3 copies of the last byte */
    cr_assert(lzf_decompress(ok, sizeof(ok), out, 4));
    cr_assert_eq(memcmp(out, "aaaa", 4), 0);
}
