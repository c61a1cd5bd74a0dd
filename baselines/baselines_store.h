/*
 * baselines_store.h - exact host caches: LRU, FIFO, LFU, SIEVE, S3-FIFO.
 *
 * Written the straightforward way: a chained hash map that grows, one mutex
 * per cache, and an exact replacement policy:
 *   lru  - a recency list; every hit (and every write) moves the key to the
 *          front; the victim is the least recently used key;
 *   fifo - insertion order; hits change nothing and an overwrite keeps the
 *          key's place; the victim is the oldest inserted key;
 *   lfu  - O(1) frequency buckets (Shah/Mitra/Matani); a hit or a write adds
 *          one to the key's count; the victim is the least frequently used
 *          key, ties broken by recency (least recently used first);
 *   sieve, s3fifo - the FIFO-based policies of NSDI'24 and SOSP'23
 *          (bl_fifo2.c says exactly how).
 * All five share one core (map, memory accounting, expiry, batch execution
 * via cudis_plan_op) and differ only in the policy. They honour the engine's
 * byte budget counting their own metadata (items as malloc would size them,
 * the bucket array, the cache struct) and cfg.max_items ("capacity in
 * objects", used by the hit-ratio simulator).
 *
 * Thread-safety: every entry point takes the cache's mutex, so any thread may
 * call any function (the ops' `concurrent` is false). scan's callback runs
 * under that mutex and must not call back into the cache.
 */
#ifndef BASELINES_STORE_H
#define BASELINES_STORE_H

#include "engine_store.h"

extern const engine_store_ops lru_store_ops;
extern const engine_store_ops fifo_store_ops;
extern const engine_store_ops lfu_store_ops;
extern const engine_store_ops sieve_store_ops;
extern const engine_store_ops s3fifo_store_ops;

#endif /* BASELINES_STORE_H */
