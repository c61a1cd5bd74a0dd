/*
 * ccht_layout.h - memory layout of the double-LRU cache cuckoo hash table
 * (CCHT), shared by the host engine (cuckoo/) and the CUDA engine (kernels/).
 *
 * Plain C, no pointers inside the structures: everything is addressed by an
 * offset from a base pointer held in a ccht_view, so the same bytes can live
 * in host memory or in device memory.
 *
 * Index: n_buckets buckets of CCHT_BUCKET_BYTES(ways) bytes each (ways = 4, 8
 * or 16 -> 64, 128, 256 bytes), laid out as
 *     uint64_t version;           lock bit 0 + counter (a seqlock)
 *     uint64_t slot[ways];        0 = empty, else a slot word (below)
 *     uint32_t stamp[ways];       recency stamp of each slot (logical clock)
 *     padding to the bucket size
 * The version is odd while a writer holds the bucket; unlocking adds one more,
 * so every write section moves it by 2 and an optimistic reader that saw an
 * even version v and sees v again afterwards read a stable bucket.
 *
 * Slot word (published with one atomic store):
 *     bits 63..49  fingerprint (15 bits of the key's hash)
 *     bit  48      the item has an expiry (so full buckets only read the
 *                  headers of items that can expire)
 *     bits 47..0   item reference: (chunk offset in the arena / 8) + 1
 *
 * Arena: arena_bytes bytes split into pages of page_bytes; each page is
 * carved into equal chunks of one size class. A chunk holds an item:
 *     uint32_t h0;                state + flags + key length (below)
 *     uint32_t val_len;
 *     int64_t  expire_ms;         only when CCHT_ITEM_EXP is set
 *     key bytes, then value bytes (no padding between them)
 * So an item without expiry costs 8 bytes of header, 16 with one. A free
 * chunk keeps h0 = 0 (state FREE) and the free-list link at offset 8.
 */
#ifndef CCHT_LAYOUT_H
#define CCHT_LAYOUT_H

#include <stdint.h>

#include "cudis_hd.h"

/* ------------------------------------------------------------------------
 * Buckets
 * ---------------------------------------------------------------------- */

#define CCHT_MAX_WAYS 16
#define CCHT_BUCKET_BYTES(ways) ((uint32_t)(ways) * 16u) /* 4->64, 8->128, 16->256 */
#define CCHT_BKT_VERSION_OFF 0u
#define CCHT_BKT_SLOTS_OFF 8u
#define CCHT_BKT_STAMPS_OFF(ways) (8u + 8u * (uint32_t)(ways))

#define CCHT_VER_LOCK 1ull /* version bit 0: a writer holds the bucket */

/* ------------------------------------------------------------------------
 * Slot words
 * ---------------------------------------------------------------------- */

#define CCHT_SLOT_FP_SHIFT 49
#define CCHT_SLOT_FP_MASK 0x7fffull
#define CCHT_SLOT_EXP (1ull << 48)
#define CCHT_SLOT_REF_MASK ((1ull << 48) - 1)

/* Slot word for the item at arena offset `off` (a multiple of 8). */
CUDIS_HD static inline uint64_t ccht_slot_make(uint32_t fp, uint64_t off, int has_exp)
{
    return ((uint64_t)(fp & CCHT_SLOT_FP_MASK) << CCHT_SLOT_FP_SHIFT) |
           (has_exp ? CCHT_SLOT_EXP : 0) | ((off >> 3) + 1);
}

CUDIS_HD static inline uint32_t ccht_slot_fp(uint64_t w)
{
    return (uint32_t)((w >> CCHT_SLOT_FP_SHIFT) & CCHT_SLOT_FP_MASK);
}

/* Arena offset of the item a (non-zero) slot word refers to. */
CUDIS_HD static inline uint64_t ccht_slot_off(uint64_t w)
{
    return ((w & CCHT_SLOT_REF_MASK) - 1) << 3;
}

/* ------------------------------------------------------------------------
 * Item headers
 * ---------------------------------------------------------------------- */

#define CCHT_ITEM_LIVE 0x80000000u   /* published (or about to be) item */
#define CCHT_ITEM_RESV 0x40000000u   /* allocated, being written, not yet published */
#define CCHT_ITEM_EXP 0x20000000u    /* an int64 expire_ms follows val_len */
#define CCHT_ITEM_KLEN_MASK 0x1fffffffu
#define CCHT_ITEM_HDR 8u             /* header bytes without expiry */
#define CCHT_ITEM_HDR_EXP 16u        /* with expiry */

/* Header bytes of an item, with or without expiry. */
CUDIS_HD static inline uint32_t ccht_item_hdr(int has_exp)
{
    return has_exp ? CCHT_ITEM_HDR_EXP : CCHT_ITEM_HDR;
}

/* Total chunk bytes an item needs. */
CUDIS_HD static inline uint64_t ccht_item_size(uint32_t key_len, uint32_t val_len, int has_exp)
{
    return (uint64_t)ccht_item_hdr(has_exp) + key_len + val_len;
}

/* ------------------------------------------------------------------------
 * The view: where a table's index and arena are. Host and device code take
 * it by value or const pointer; it holds no ownership.
 * ---------------------------------------------------------------------- */

typedef struct ccht_view {
    uint8_t *buckets;      /* n_buckets * bucket_bytes, 64-byte aligned */
    uint8_t *arena;        /* arena_bytes, 8-byte aligned chunks */
    uint64_t n_buckets;    /* any value >= 1 (fastrange, not a mask) */
    uint64_t arena_bytes;
    uint64_t seed;         /* cudis_hash seed */
    uint32_t ways;         /* 4, 8 or 16 */
    uint32_t bucket_bytes; /* CCHT_BUCKET_BYTES(ways) */
} ccht_view;

/* Where a key may live: its two candidate buckets and its fingerprint. */
typedef struct ccht_hkey {
    uint64_t b1, b2; /* b1 != b2 unless n_buckets == 1 */
    uint32_t fp;
} ccht_hkey;

/* A slot found by a probe. */
typedef struct ccht_loc {
    uint64_t bucket; /* bucket index */
    uint32_t way;    /* slot index in the bucket */
    uint64_t word;   /* the slot word seen */
} ccht_loc;

#endif /* CCHT_LAYOUT_H */
