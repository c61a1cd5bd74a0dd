/*
 * cudis_vmap.h - the volatile map: one bit per bucket of a store's index,
 * set while the bucket may hold an item with an expiry. Active expiry walks
 * the set bits instead of every bucket, so a few keys with a TTL in a big
 * store are reclaimed within one short pass (as Redis's separate `expires`
 * dictionary does), and a store where every key has a TTL costs what it
 * cost before. Written for the host compiler and nvcc (CUDIS_HD): the CCHT
 * keeps it beside its index on both sides, the baselines beside their
 * chains.
 *
 * Layout: words[0 .. n_words) the bits (bucket b is bit b % 64 of word
 * b / 64), words[n_words] how many bits are set. Marking and unmarking are
 * atomic (a concurrent mark and unmark of one bucket must be ordered by the
 * caller: both under the bucket's lock). A mark finds its bit set in the
 * common case and then writes nothing.
 *
 * The sweep's unit of work (cudis_vmap_units): visiting one marked bucket,
 * or skipping CUDIS_VMAP_SKIP clear words (512 buckets, one cache line of
 * the map).
 */
#ifndef CUDIS_VMAP_H
#define CUDIS_VMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "cudis_hd.h"

#define CUDIS_VMAP_SKIP 8u

/* Words of the map for n_buckets buckets, the count word included. */
CUDIS_HD static inline uint64_t cudis_vmap_alloc_words(uint64_t n_buckets)
{
    return (n_buckets + 63) / 64 + 1;
}

CUDIS_HD static inline bool cudis_vmap_test(const uint64_t *map, uint64_t b)
{
    return (cudis_load_relaxed_u64(&map[b >> 6]) >> (b & 63)) & 1u;
}

/* Bucket b may now hold an item with an expiry. */
CUDIS_HD static inline void cudis_vmap_mark(uint64_t *map, uint64_t n_words, uint64_t b)
{
    uint64_t bit = 1ull << (b & 63);
    uint64_t *w = &map[b >> 6];
    if ((cudis_load_relaxed_u64(w) & bit) == 0 && (cudis_fetch_or_u64(w, bit) & bit) == 0) {
        cudis_fetch_add_u64(&map[n_words], 1);
    }
}

/* Bucket b holds no item with an expiry any more. */
CUDIS_HD static inline void cudis_vmap_unmark(uint64_t *map, uint64_t n_words, uint64_t b)
{
    uint64_t bit = 1ull << (b & 63);
    if (cudis_fetch_and_u64(&map[b >> 6], ~bit) & bit) {
        cudis_fetch_add_u64(&map[n_words], (uint64_t)-1);
    }
}

/* The sweep work of one whole pass (see above). */
static inline uint64_t cudis_vmap_units(const uint64_t *map, uint64_t n_words)
{
    return (n_words + CUDIS_VMAP_SKIP - 1) / CUDIS_VMAP_SKIP +
           cudis_load_relaxed_u64(&map[n_words]);
}

/*
 * Visit marked buckets from *cursor (a word index, advanced atomically, so
 * concurrent walkers share the pass) for about max_work units, at most one
 * pass; visit(arg, b) returns what it reclaimed from bucket b. Returns the
 * sum. Host code.
 */
static inline int cudis_vmap_walk(uint64_t *map, uint64_t n_words, uint64_t n_buckets,
                                  uint64_t *cursor, uint32_t max_work,
                                  uint32_t (*visit)(void *arg, uint64_t b), void *arg)
{
    int got = 0;
    uint64_t work = 0, clear = 0;
    for (uint64_t k = 0; k < n_words && work < max_work; k++) {
        uint64_t wi = __atomic_fetch_add(cursor, 1, __ATOMIC_RELAXED) % n_words;
        uint64_t bits = cudis_load_relaxed_u64(&map[wi]);
        if (bits == 0) {
            if (++clear % CUDIS_VMAP_SKIP == 0) {
                work++;
            }
            continue;
        }
        while (bits != 0) {
            uint64_t b = wi * 64 + (uint64_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            if (b < n_buckets) {
                got += (int)visit(arg, b);
                work++;
            }
        }
    }
    return got;
}

#endif /* CUDIS_VMAP_H */
