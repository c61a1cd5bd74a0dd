/*
 * crc64.c - Redis's CRC-64 (Jones polynomial, reflected), at memory speed.
 *
 * A dump.rdb of gigabytes is checked at load and summed at save, so the
 * CRC must not be what a load waits for. Slicing-by-8 tables give about
 * 1 GB/s, a third of a 1 GB load on one core (perf of the 4 KB-value file
 * of bench/server/rdbload.sh). On x86-64 with PCLMULQDQ the bulk of a
 * buffer is folded instead, four 16-byte lanes at a time, and the tables
 * finish the last 16 bytes of the fold and the tail.
 *
 * Why folding works. The CRC has initial value 0 and no final xor, so it
 * is linear: crc(M) = M(x) * x^64 mod P, and bytes of zeros before M do
 * not change it. Reflected, byte 0 bit 0 is M's highest coefficient; a
 * 16-byte block loaded little-endian as (lo, hi) is lo(x) * x^64 + hi(x),
 * each half's bit j standing for x^(63-j). A carry-less product of two
 * such halves, read as 128 bits the same way, is x * a(x) * b(x). So a
 * block V followed by D bits of data is replaced by one of the same CRC,
 * V' = clmul(lo, x^(D+63) mod P) ^ clmul(hi, x^(D-1) mod P), to which the
 * next block is added. What is left at the end is 16 bytes congruent to
 * the whole prefix, whose CRC the tables take. A CRC continued from crc
 * is the CRC of the data with crc xored into its first 8 bytes.
 */
#include "crc64.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CRC_CLMUL 1
#endif

#define CRC_POLY 0x95ac9329ac4bc9b5ull /* reflected; 0xad93d23594c935a9 as written */

/* Slicing by 8: table k maps a byte k places before the end of a word. */
static uint64_t crc_table[8][256];
#ifdef CRC_CLMUL
static bool crc_clmul;       /* the CPU has PCLMULQDQ */
static uint64_t crc_k[4][2]; /* fold by 512, 384, 256, 128 bits: (lo's, hi's) */
#endif

static uint64_t bit_reverse(uint64_t v)
{
    uint64_t r = 0;
    for (int i = 0; i < 64; i++) {
        r = (r << 1) | ((v >> i) & 1);
    }
    return r;
}

/* x^n mod P, reflected. */
static uint64_t x_pow_mod(unsigned n)
{
    const uint64_t poly = bit_reverse(CRC_POLY); /* bit i: x^i */
    uint64_t r = 1;
    for (unsigned i = 0; i < n; i++) {
        r = (r & (1ull << 63)) ? (r << 1) ^ poly : r << 1;
    }
    return bit_reverse(r);
}

static void crc_init(void)
{
    for (int i = 0; i < 256; i++) {
        uint64_t c = (uint64_t)i;
        for (int k = 0; k < 8; k++) {
            c = (c & 1) ? (c >> 1) ^ CRC_POLY : c >> 1;
        }
        crc_table[0][i] = c;
    }
    for (int i = 0; i < 256; i++) {
        for (int t = 1; t < 8; t++) {
            uint64_t c = crc_table[t - 1][i];
            crc_table[t][i] = crc_table[0][c & 0xff] ^ (c >> 8);
        }
    }
#ifdef CRC_CLMUL
    static const unsigned dist[4] = {512, 384, 256, 128};
    for (int i = 0; i < 4; i++) {
        crc_k[i][0] = x_pow_mod(dist[i] + 63);
        crc_k[i][1] = x_pow_mod(dist[i] - 1);
    }
    __builtin_cpu_init();
    crc_clmul = __builtin_cpu_supports("pclmul");
#else
    (void)x_pow_mod;
#endif
}

static void crc_once(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, crc_init);
}

static uint64_t crc_tables(uint64_t crc, const uint8_t *p, size_t n)
{
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8); /* little-endian hosts (x86-64, aarch64) */
        w ^= crc;
        crc = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
              crc_table[5][(w >> 16) & 0xff] ^ crc_table[4][(w >> 24) & 0xff] ^
              crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
              crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    for (size_t i = 0; i < n; i++) {
        crc = crc_table[0][(uint8_t)(crc ^ p[i])] ^ (crc >> 8);
    }
    return crc;
}

uint64_t rdb_crc64_table(uint64_t crc, const void *p, size_t n)
{
    crc_once();
    return crc_tables(crc, p, n);
}

#ifdef CRC_CLMUL
__attribute__((target("pclmul,sse2"))) static inline __m128i fold(__m128i v, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(v, k, 0x00), _mm_clmulepi64_si128(v, k, 0x11));
}

static inline __m128i load_k(int i)
{
    return _mm_set_epi64x((long long)crc_k[i][1], (long long)crc_k[i][0]);
}

/* n >= 64 */
__attribute__((target("pclmul,sse2"))) static uint64_t crc_fold(uint64_t crc, const uint8_t *p,
                                                                size_t n)
{
    __m128i v0 = _mm_loadu_si128((const __m128i *)p);
    __m128i v1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i v2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i v3 = _mm_loadu_si128((const __m128i *)(p + 48));
    v0 = _mm_xor_si128(v0, _mm_set_epi64x(0, (long long)crc));
    p += 64;
    n -= 64;
    const __m128i k512 = load_k(0);
    while (n >= 64) {
        v0 = _mm_xor_si128(fold(v0, k512), _mm_loadu_si128((const __m128i *)p));
        v1 = _mm_xor_si128(fold(v1, k512), _mm_loadu_si128((const __m128i *)(p + 16)));
        v2 = _mm_xor_si128(fold(v2, k512), _mm_loadu_si128((const __m128i *)(p + 32)));
        v3 = _mm_xor_si128(fold(v3, k512), _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        n -= 64;
    }
    const __m128i k128 = load_k(3);
    __m128i v = _mm_xor_si128(_mm_xor_si128(fold(v0, load_k(1)), fold(v1, load_k(2))),
                              _mm_xor_si128(fold(v2, k128), v3));
    while (n >= 16) {
        v = _mm_xor_si128(fold(v, k128), _mm_loadu_si128((const __m128i *)p));
        p += 16;
        n -= 16;
    }
    uint8_t last[16];
    _mm_storeu_si128((__m128i *)last, v);
    return crc_tables(crc_tables(0, last, sizeof(last)), p, n);
}
#endif

uint64_t rdb_crc64(uint64_t crc, const void *data, size_t n)
{
    crc_once();
#ifdef CRC_CLMUL
    if (crc_clmul && n >= 128) {
        return crc_fold(crc, data, n);
    }
#endif
    return crc_tables(crc, data, n);
}
