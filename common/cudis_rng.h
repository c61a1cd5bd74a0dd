/*
 * cudis_rng.h - the pseudo-random generator the benchmarks and tests share:
 * xoshiro256** over a caller-owned state of four words, seeded with
 * splitmix64 (any seed, 0 included). Not for anything secret.
 */
#ifndef CUDIS_RNG_H
#define CUDIS_RNG_H

#include <stdint.h>

static inline uint64_t cudis_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void cudis_rng_seed(uint64_t s[4], uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        s[i] = cudis_splitmix64(&seed);
    }
}

static inline uint64_t cudis_rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* Next 64 random bits. */
static inline uint64_t cudis_rng_next(uint64_t s[4])
{
    uint64_t result = cudis_rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = cudis_rotl64(s[3], 45);
    return result;
}

/* Uniform double in [0, 1). */
static inline double cudis_rng_double(uint64_t s[4])
{
    return (double)(cudis_rng_next(s) >> 11) * 0x1.0p-53;
}

#endif /* CUDIS_RNG_H */
