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
#if !defined(__CUDA_ARCH__)
#include <time.h>
#endif

#ifdef __CUDACC__
#define CUDIS_HD __host__ __device__
#else
#define CUDIS_HD
#endif

/* Keeps a rarely taken path out of line, so it does not grow a hot loop
 * it is called from: for a `static` (not inline) function in a header,
 * which then need not be used by every file that includes it. */
#ifdef __CUDACC__
#define CUDIS_NOINLINE __noinline__ __attribute__((unused))
#else
#define CUDIS_NOINLINE __attribute__((noinline, unused))
#endif

#if defined(__CUDA_ARCH__)
#define CUDIS_DEVICE_CODE 1
#else
#define CUDIS_DEVICE_CODE 0
#endif

/* Built with ThreadSanitizer (bytes optimistic readers may read are then
 * written with relaxed atomics). */
#if defined(__SANITIZE_THREAD__)
#define CUDIS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CUDIS_TSAN 1
#endif
#endif
#ifndef CUDIS_TSAN
#define CUDIS_TSAN 0
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

CUDIS_HD static inline uint64_t cudis_fetch_or_u64(uint64_t *p, uint64_t v)
{
#if CUDIS_DEVICE_CODE
    return atomicOr((unsigned long long *)p, (unsigned long long)v);
#else
    return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
#endif
}

CUDIS_HD static inline uint64_t cudis_fetch_and_u64(uint64_t *p, uint64_t v)
{
#if CUDIS_DEVICE_CODE
    return atomicAnd((unsigned long long *)p, (unsigned long long)v);
#else
    return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);
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

CUDIS_HD static inline uint32_t cudis_fetch_sub_u32(uint32_t *p, uint32_t v)
{
#if CUDIS_DEVICE_CODE
    return atomicSub(p, v);
#else
    return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
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
 * Time and waiting: a monotonic clock in nanoseconds (host: CLOCK_MONOTONIC;
 * device: the global timer), used for deadlines of waits that must not
 * spin forever, and one step of a polite spin.
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline uint64_t cudis_hd_now_ns(void)
{
#if CUDIS_DEVICE_CODE
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

/* The hash in three steps, so a caller that must copy the bytes first
 * (racy arena reads, ccht_bucket.h) computes exactly cudis_hash: start
 * with the total length, fold each 16-byte block while more than 16 bytes
 * remain, end with the last 1..16 bytes as two little-endian words. */
#define CUDIS_HASH_K0 0xa0761d6478bd642fULL
#define CUDIS_HASH_K1 0xe7037ed1a0b428dbULL
#define CUDIS_HASH_K2 0x8ebc6af09c88c6e3ULL

CUDIS_HD static inline uint64_t cudis_hash_start(uint64_t len, uint64_t seed)
{
    return seed ^ cudis_mix64(seed ^ CUDIS_HASH_K0, CUDIS_HASH_K1) ^ len;
}

CUDIS_HD static inline uint64_t cudis_hash_block(uint64_t h, uint64_t a, uint64_t b)
{
    return cudis_mix64(a ^ CUDIS_HASH_K1, b ^ h);
}

/* rest: bytes left (0..16); a, b: those bytes as cudis_read_le words. */
CUDIS_HD static inline uint64_t cudis_hash_end(uint64_t h, uint64_t rest, uint64_t a, uint64_t b)
{
    return cudis_mix64(CUDIS_HASH_K2 ^ rest, cudis_mix64(a ^ CUDIS_HASH_K1, b ^ h));
}

CUDIS_HD static inline uint64_t cudis_hash(const void *data, uint64_t len, uint64_t seed)
{
    const uint8_t *p = (const uint8_t *)data;
    uint64_t h = cudis_hash_start(len, seed);
    while (len > 16) {
        h = cudis_hash_block(h, cudis_read_le(p, 8), cudis_read_le(p + 8, 8));
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
    return cudis_hash_end(h, len, a, b);
}

#endif /* CUDIS_HD_H */
