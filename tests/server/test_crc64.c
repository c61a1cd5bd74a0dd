/* test_crc64.c - the RDB CRC-64: Redis's check value, and the folded
 * (carry-less multiply) path equal to a bit-at-a-time reference and to the
 * tables for every length around its block sizes, every alignment, and
 * CRCs continued from any value and split at any point. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "crc64.h"

/* One bit at a time, from the polynomial: shares nothing with crc64.c. */
static uint64_t crc_bits(uint64_t crc, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) {
            crc = (crc & 1) ? (crc >> 1) ^ 0x95ac9329ac4bc9b5ull : crc >> 1;
        }
    }
    return crc;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint8_t *random_bytes(size_t n)
{
    uint8_t *p = malloc(n + 64);
    for (size_t i = 0; i < n + 64; i++) {
        p[i] = (uint8_t)rnd();
    }
    return p;
}

Test(crc64, redis_check_value)
{
    /* Redis's src/crc64.c test: crc64(0, "123456789", 9) */
    cr_assert_eq(rdb_crc64(0, "123456789", 9), 0xe9c6d914c4b8d9caull);
    cr_assert_eq(rdb_crc64_table(0, "123456789", 9), 0xe9c6d914c4b8d9caull);
    static const char li[] = "This is a test of the emergency broadcast system.";
    uint8_t buf[4096];
    for (size_t i = 0; i < sizeof(buf); i++) {
        buf[i] = (uint8_t)li[i % (sizeof(li) - 1)];
    }
    cr_assert_eq(rdb_crc64(0, buf, sizeof(buf)), crc_bits(0, buf, sizeof(buf)));
    cr_assert_eq(rdb_crc64(0, "", 0), 0);
}

Test(crc64, every_length_and_alignment)
{
    uint8_t *p = random_bytes(1200);
    for (size_t off = 0; off < 16; off++) {
        for (size_t n = 0; n <= 1100; n++) {
            uint64_t want = crc_bits(0, p + off, n);
            cr_assert_eq(rdb_crc64(0, p + off, n), want, "n=%zu off=%zu", n, off);
            cr_assert_eq(rdb_crc64_table(0, p + off, n), want, "tables n=%zu", n);
        }
    }
    free(p);
}

Test(crc64, continued_and_split)
{
    size_t n = 1u << 20;
    uint8_t *p = random_bytes(n);
    uint64_t whole = rdb_crc64_table(0, p, n);
    cr_assert_eq(rdb_crc64(0, p, n), whole);
    for (int i = 0; i < 200; i++) {
        size_t cut = (size_t)(rnd() % n);
        uint64_t c = rdb_crc64(0, p, cut);
        cr_assert_eq(rdb_crc64(c, p + cut, n - cut), whole, "cut at %zu", cut);
        uint64_t from = rnd();
        size_t len = (size_t)(rnd() % 5000);
        cr_assert_eq(rdb_crc64(from, p + cut % 64, len), crc_bits(from, p + cut % 64, len),
                     "from %llx, %zu bytes", (unsigned long long)from, len);
    }
    free(p);
}

Test(crc64, zeros_and_ones)
{
    uint8_t z[512], o[512];
    memset(z, 0, sizeof(z));
    memset(o, 0xff, sizeof(o));
    for (size_t n = 0; n <= sizeof(z); n += 7) {
        cr_assert_eq(rdb_crc64(0, z, n), 0, "zeros leave 0");
        cr_assert_eq(rdb_crc64(0, o, n), crc_bits(0, o, n), "n=%zu", n);
        cr_assert_eq(rdb_crc64(~0ull, z, n), crc_bits(~0ull, z, n), "n=%zu", n);
    }
}
