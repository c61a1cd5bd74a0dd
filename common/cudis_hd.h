/*
 * cudis_hd.h - code shared by the host compiler and nvcc.
 *
 * CUDIS_HD marks a function that runs on both sides: `__host__ __device__`
 * under nvcc, nothing under a plain C compiler. The atomic helpers below are
 * the only way shared code (the CCHT bucket algorithm) touches memory other
 * threads may write concurrently: GCC/Clang __atomic builtins on the host
 * (understood by ThreadSanitizer, valid in C and C++), CUDA atomics and
 * volatile accesses plus fences on the device.
 */
#ifndef CUDIS_HD_H
#define CUDIS_HD_H

#include <stdint.h>

#ifdef __CUDACC__
#define CUDIS_HD __host__ __device__
#else
#define CUDIS_HD
#endif

#if defined(__CUDA_ARCH__)
#define CUDIS_DEVICE_CODE 1
#else
#define CUDIS_DEVICE_CODE 0
#endif

/* ------------------------------------------------------------------------
 * 64-bit words
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline uint64_t cudis_load_acq_u64(const uint64_t *p)
{
#if CUDIS_DEVICE_CODE
    uint64_t v = *(const volatile uint64_t *)p;
    __threadfence();
    return v;
#else
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

CUDIS_HD static inline uint64_t cudis_load_relaxed_u64(const uint64_t *p)
{
#if CUDIS_DEVICE_CODE
    return *(const volatile uint64_t *)p;
#else
    return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

CUDIS_HD static inline void cudis_store_rel_u64(uint64_t *p, uint64_t v)
{
#if CUDIS_DEVICE_CODE
    __threadfence();
    *(volatile uint64_t *)p = v;
#else
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

CUDIS_HD static inline void cudis_store_relaxed_u64(uint64_t *p, uint64_t v)
{
#if CUDIS_DEVICE_CODE
    *(volatile uint64_t *)p = v;
#else
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

/* Returns true and stores `desired` when *p == expected. */
CUDIS_HD static inline int cudis_cas_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{
#if CUDIS_DEVICE_CODE
    /* atomicCAS is relaxed: fence after it so a won lock orders the loads
     * that follow (acquire) as the host's ACQ_REL does. */
    int won = atomicCAS((unsigned long long *)p, (unsigned long long)expected,
                        (unsigned long long)desired) == (unsigned long long)expected;
    __threadfence();
    return won;
#else
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
#endif
}

CUDIS_HD static inline uint64_t cudis_fetch_add_u64(uint64_t *p, uint64_t v)
{
#if CUDIS_DEVICE_CODE
    return atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/* ------------------------------------------------------------------------
 * 32-bit words
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline uint32_t cudis_load_acq_u32(const uint32_t *p)
{
#if CUDIS_DEVICE_CODE
    uint32_t v = *(const volatile uint32_t *)p;
    __threadfence();
    return v;
#else
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

CUDIS_HD static inline uint32_t cudis_load_relaxed_u32(const uint32_t *p)
{
#if CUDIS_DEVICE_CODE
    return *(const volatile uint32_t *)p;
#else
    return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

CUDIS_HD static inline void cudis_store_rel_u32(uint32_t *p, uint32_t v)
{
#if CUDIS_DEVICE_CODE
    __threadfence();
    *(volatile uint32_t *)p = v;
#else
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

CUDIS_HD static inline void cudis_store_relaxed_u32(uint32_t *p, uint32_t v)
{
#if CUDIS_DEVICE_CODE
    *(volatile uint32_t *)p = v;
#else
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

CUDIS_HD static inline int cudis_cas_u32(uint32_t *p, uint32_t expected, uint32_t desired)
{
#if CUDIS_DEVICE_CODE
    int won = atomicCAS(p, expected, desired) == expected;
    __threadfence();
    return won;
#else
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
#endif
}

CUDIS_HD static inline uint32_t cudis_fetch_add_u32(uint32_t *p, uint32_t v)
{
#if CUDIS_DEVICE_CODE
    return atomicAdd(p, v);
#else
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/* Full fence between a seqlock's data reads and its version re-check. */
CUDIS_HD static inline void cudis_fence_acq(void)
{
#if CUDIS_DEVICE_CODE
    __threadfence();
#else
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
}

/* ------------------------------------------------------------------------
 * Hashing: one 64-bit hash of a byte string, identical on host and device.
 * (wyhash-style 64x64->128 folding; seed chosen by the table's options.)
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline uint64_t cudis_mix64(uint64_t a, uint64_t b)
{
#if CUDIS_DEVICE_CODE
    uint64_t lo = a * b;
    uint64_t hi = __umul64hi(a, b);
#else
    __uint128_t r = (__uint128_t)a * b;
    uint64_t lo = (uint64_t)r;
    uint64_t hi = (uint64_t)(r >> 64);
#endif
    return lo ^ hi;
}

/* The first n (0..8) bytes at p as a little-endian integer. The host reads
 * whole words (byte-at-a-time reads were a third of a host lookup). */
CUDIS_HD static inline uint64_t cudis_read_le(const uint8_t *p, int n)
{
#if !CUDIS_DEVICE_CODE && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n >= 8) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        return v;
    }
    if (n >= 4) { /* two overlapping 4-byte loads */
        uint32_t lo, hi;
        __builtin_memcpy(&lo, p, 4);
        __builtin_memcpy(&hi, p + n - 4, 4);
        return (uint64_t)lo | ((uint64_t)hi << (8 * (n - 4)));
    }
#endif
    uint64_t v = 0;
    for (int i = 0; i < n && i < 8; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

CUDIS_HD static inline uint64_t cudis_hash(const void *data, uint64_t len, uint64_t seed)
{
    const uint8_t *p = (const uint8_t *)data;
    const uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL,
                   k2 = 0x8ebc6af09c88c6e3ULL;
    uint64_t h = seed ^ cudis_mix64(seed ^ k0, k1) ^ len;
    while (len > 16) {
        h = cudis_mix64(cudis_read_le(p, 8) ^ k1, cudis_read_le(p + 8, 8) ^ h);
        p += 16;
        len -= 16;
    }
    uint64_t a = 0, b = 0;
    if (len > 8) {
        a = cudis_read_le(p, 8);
        b = cudis_read_le(p + 8, (int)len - 8);
    } else {
        a = cudis_read_le(p, (int)len);
    }
    return cudis_mix64(k2 ^ len, cudis_mix64(a ^ k1, b ^ h));
}

#endif /* CUDIS_HD_H */
