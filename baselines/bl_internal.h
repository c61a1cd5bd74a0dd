/*
 * bl_internal.h - private structures of the exact baselines: the item, the
 * cache (map + accounting + policy state) and the policy vtable that is the
 * only thing LRU, FIFO, LFU, SIEVE and S3-FIFO do differently. See
 * baselines_store.h.
 */
#ifndef BL_INTERNAL_H
#define BL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine_store.h"

#define BL_MAX_KEY_LEN 0xffffffu

/* One key/value pair: one malloc holding the header, the key, the value.
 * The key is (db, key bytes). */
typedef struct bl_item {
    struct bl_item *hnext;       /* hash chain */
    struct bl_item *prev, *next; /* policy list (toward head = newer/hotter) */
    struct bl_freq *freq;        /* LFU: the frequency bucket holding the item */
    uint64_t hash;
    int64_t expire_ms; /* 0 = none */
    uint32_t key_len : 24; /* up to BL_MAX_KEY_LEN */
    uint32_t db : 8;       /* the key's database */
    uint32_t val_len;
    uint8_t type;   /* enum cudis_type */
    uint8_t pbits;  /* policy bits: SIEVE's visited bit; S3-FIFO's queue and counter */
    uint8_t data[]; /* key bytes, then value bytes */
} bl_item;

/* S3-FIFO's ghost queue: the hashes of keys evicted from the small queue,
 * oldest first (a ring of entries with their sizes), and an open-addressing
 * index of the live ones (hash -> ring sequence number). bl_fifo2.c. */
typedef struct bl_ghost {
    uint64_t *hash;     /* ring: key hash, 0 = removed (a hit) */
    uint64_t *units;    /* ring: the entry's size (1, or its bytes under a byte budget) */
    uint64_t ring_mask; /* ring capacity - 1 */
    uint64_t first, end; /* sequence numbers: the oldest entry, one past the newest */
    uint64_t live, units_live;
    uint64_t *ix_hash, *ix_seq; /* index, 0 = empty slot */
    uint64_t ix_mask;
} bl_ghost;

/* LFU: all items with one access count, most recent at head. */
typedef struct bl_freq {
    struct bl_freq *prev, *next; /* ascending count */
    uint64_t count;
    bl_item *head, *tail;
} bl_freq;

typedef struct bl_cache bl_cache;

/* What a policy does to its ordering; the core calls these with the lock held. */
typedef struct bl_policy {
    const char *name;
    uint32_t item_extra;                      /* bytes charged per item for policy nodes */
    bool (*insert)(bl_cache *c, bl_item *it); /* a new key enters; false: no memory */
    void (*remove)(bl_cache *c, bl_item *it); /* a key leaves */
    void (*replace)(bl_cache *c, bl_item *old, bl_item *nit); /* nit takes old's place */
    void (*touch)(bl_cache *c, bl_item *it);                  /* hit / write / TOUCH */
    bl_item *(*victim)(bl_cache *c, const bl_item *skip);     /* next to evict, not skip */
    void (*clear)(bl_cache *c);                               /* every item is gone */
} bl_policy;

struct bl_cache {
    pthread_mutex_t lock;
    const bl_policy *pol;

    /* map: power-of-two bucket array of chains */
    bl_item **buckets;
    uint64_t mask;
    uint64_t *vmap; /* chains that may hold an item with an expiry (cudis_vmap.h) */

    /* limits */
    uint64_t budget;
    uint64_t max_items;
    uint32_t max_key_len, max_val_len;
    bool allow_empty_key;
    bool noevict; /* maxmemory-policy noeviction: a write that needs room fails */
    uint64_t seed;

    /* accounting */
    uint64_t items;
    uint64_t bytes_used;  /* fixed + table + item charges */
    uint64_t fixed_bytes; /* this struct */
    uint64_t key_bytes, value_bytes;
    uint64_t hits, misses, evict_memory, evict_expired;
    uint32_t expected_item_bytes;

    uint64_t *db_items; /* CUDIS_MAX_DBS counts (a calloc beside the budget: 2 KiB) */
    uint64_t rng;       /* random_key */
    uint64_t sweep_pos; /* next word of the volatile map for sweep */

    /* policy state */
    bl_item *head, *tail; /* LRU / FIFO list */
    bl_freq *fhead;       /* LFU: lowest count first */
    bl_item *hand;        /* SIEVE: the next item to look at (NULL: the tail) */
    /* S3-FIFO: head/tail above are the main queue; the small queue here */
    bl_item *s_head, *s_tail;
    uint64_t s_units, m_units; /* their sizes: items, or bytes under a byte budget */
    bool s3_evicted;           /* the first eviction happened */
    bl_ghost ghost;
};

extern const bl_policy bl_policy_lru, bl_policy_fifo, bl_policy_lfu;
extern const bl_policy bl_policy_sieve, bl_policy_s3fifo;

/* The shared core's store entry points, parameterised by policy. */
void *bl_create(const bl_policy *pol, const engine_config *cfg, char *why, size_t why_len);
void bl_destroy(void *store);
int bl_execute(void *store, cudis_batch *batch);
int bl_scan(void *store, int db, uint64_t cursor, uint32_t count, int64_t now_ms, cudis_scan_fn fn,
            void *arg, uint64_t *next);
int bl_random_key(void *store, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                  uint32_t *len);
int bl_flush(void *store, int db);
uint64_t bl_db_size(void *store, uint8_t db);
int bl_sweep(void *store, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev);
/* CUDIS_POL_ALLKEYS_LRU (the default: evict by the policy's own exact
 * order) or CUDIS_POL_NOEVICTION; others are CUDIS_E_UNSUPPORTED. */
/* Any budget, at least the table and 64 KiB for items; when lowered,
 * writes and the sweep evict down to it. */
uint64_t bl_set_memory(void *store, uint64_t bytes);
int bl_set_policy(void *store, uint32_t policy, uint32_t lfu_log_factor, uint32_t lfu_decay_time);
uint64_t bl_sweep_units(void *store); /* one pass of bl_sweep (cudis_vmap_units) */
void bl_stats(void *store, cudis_stats *out);
void bl_reset_stats(void *store);
size_t bl_info(void *store, char *buf, size_t cap);

/* Bytes glibc malloc hands out for a request of n bytes (chunk size). */
static inline uint64_t bl_malloc_size(uint64_t n)
{
    uint64_t s = (n + 8 + 15) & ~(uint64_t)15;
    return s < 32 ? 32 : s;
}

/* What an item of these lengths is charged under policy pol. */
static inline uint64_t bl_charge(const bl_policy *pol, uint32_t key_len, uint32_t val_len)
{
    return bl_malloc_size(sizeof(bl_item) + (uint64_t)key_len + val_len) + pol->item_extra;
}

/* The policy list helpers (bl_policy.c): newest at head, prev toward it. */
void bl_list_push_head(bl_item **head, bl_item **tail, bl_item *it);
void bl_list_unlink(bl_item **head, bl_item **tail, bl_item *it);
void bl_list_replace(bl_item **head, bl_item **tail, bl_item *old, bl_item *nit);

#endif /* BL_INTERNAL_H */
