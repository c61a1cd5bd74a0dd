/*
 * memprobe.c - ccht-memprobe: what the machine's memory system gives a
 * random-access table, to read ccht-bench's figures against. For a buffer of
 * --mb MiB (2 MiB-aligned, huge pages requested like the CCHT's) it measures,
 * in ns per access of one thread's CPU time:
 *   dependent   - each address depends on the previous load (pure latency);
 *   prefetched  - random 128-byte blocks, 2 per "op" (like a CCHT bucket
 *                 pair), prefetched --ahead ops early, both 64-byte lines
 *                 read: the best a pipelined lookup can do per op.
 *   ccht-memprobe [--mb 600] [--ahead 16]
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t xs(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(int argc, char **argv)
{
    size_t mb = 600;
    int ahead = 16;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mb")) {
            mb = (size_t)atol(argv[i + 1]);
        } else if (!strcmp(argv[i], "--ahead")) {
            ahead = atoi(argv[i + 1]);
        }
    }
    size_t bytes = mb << 20;
    uint8_t *a = aligned_alloc(2u << 20, bytes);
    if (!a) {
        return 1;
    }
#ifdef MADV_HUGEPAGE
    madvise(a, bytes, MADV_HUGEPAGE);
#endif
    size_t n64 = bytes / 64, n128 = bytes / 128;
    uint64_t s = 88172645463325252ull;
    /* a random cycle through the lines for the dependent walk */
    uint32_t *perm = malloc(n64 * sizeof(uint32_t));
    for (size_t i = 0; i < n64; i++) {
        perm[i] = (uint32_t)i;
    }
    for (size_t i = n64 - 1; i > 0; i--) {
        size_t j = xs(&s) % (i + 1);
        uint32_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (size_t i = 0; i < n64; i++) {
        *(uint64_t *)(a + (size_t)perm[i] * 64) = (uint64_t)perm[(i + 1) % n64] * 64;
    }
    free(perm);
    const int N = 2000000;
    uint64_t p = 0;
    double t0 = cpu_s();
    for (int i = 0; i < N; i++) {
        p = *(uint64_t *)(a + p);
    }
    double dep = (cpu_s() - t0) / N * 1e9;

    uint32_t *idx = malloc((size_t)(N + ahead + 1) * 2 * sizeof(uint32_t));
    for (size_t i = 0; i < (size_t)(N + ahead + 1) * 2; i++) {
        idx[i] = (uint32_t)(xs(&s) % n128);
    }
    uint64_t v = 0;
    t0 = cpu_s();
    for (int i = 0; i < N; i++) {
        for (int b = 0; b < 2; b++) {
            const uint8_t *q = a + (size_t)idx[2 * (i + ahead) + b] * 128;
            __builtin_prefetch(q);
            __builtin_prefetch(q + 64);
        }
        for (int b = 0; b < 2; b++) {
            const uint8_t *q = a + (size_t)idx[2 * i + b] * 128 + (v >> 62);
            v += q[8] + q[72];
        }
    }
    double pre = (cpu_s() - t0) / N * 1e9;
    printf("ccht-memprobe: %zu MiB: dependent load %.1f ns; prefetched op of 4 lines %.1f ns "
           "(%.1f ns per line) [%llu %llu]\n",
           mb, dep, pre, pre / 4, (unsigned long long)p & 1, (unsigned long long)v & 1);
    free(idx);
    free(a);
    return 0;
}
