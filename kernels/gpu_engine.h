/*
 * gpu_engine.h - the CCHT in GPU memory: the public API of kernels/.
 *
 * A gpu_engine owns one CUDA device's share of the cache: the bucket index
 * and the value arena live in device memory (plain cudaMalloc, sized from
 * the memory budget and the card's free memory), and every batch runs as one
 * kernel launch over all its operations (gets, sets, deletes, incr, expiry
 * together) using the same bucket code as the CPU engine (cuckoo/).
 *
 * Two ways in:
 *   - host batches (gpu_engine_execute): a cudis_batch in host memory is
 *     copied to the device through pinned staging buffers (3 slots, each
 *     with its own CUDA stream), run, and its results and values copied
 *     back. The copy-in of batch n+1 overlaps the kernel of batch n, and
 *     kernels run in the order batches were enqueued (each launch waits on
 *     an event recorded after the previous one). Overlap comes from several
 *     threads calling execute at once, or from one thread using
 *     gpu_engine_submit / gpu_engine_complete.
 *   - device pointers (gpu_engine_*_dev): for in-process users whose keys
 *     and values already live in GPU memory (an inference service fetching
 *     embedding rows). Arguments are device pointers; the work is enqueued
 *     on the caller's CUDA stream (a cudaStream_t passed as void *, NULL =
 *     the legacy default stream) after every batch enqueued before it, and
 *     the call returns without waiting: synchronise that stream before
 *     reading the outputs. No host round trip, no staging copies.
 *
 *     Main use, fixed-width rows by 64-bit id:
 *         uint64_t *d_ids;            n ids, 8-byte keys (any byte order,
 *                                     as long as writers and readers agree)
 *         float    *d_rows;           n rows of 128 floats (512 bytes)
 *         uint32_t *d_lens, *d_miss, *d_nmiss;
 *         gpu_engine_set_dev(g, d_ids, 8, n, d_rows, 512, 0, NULL, now, s);
 *         ...
 *         gpu_engine_get_dev(g, d_ids, 8, n, d_rows, 512, d_lens,
 *                            d_miss, d_nmiss, now, s);
 *         cudaStreamSynchronize(s);   rows of hits are in d_rows; the first
 *                                     *d_nmiss entries of d_miss are the
 *                                     indices of the misses (any order):
 *                                     compute those rows and set them.
 *
 * CUDA is initialised lazily in gpu_engine_create (never at load time), so
 * a process may fork (Criterion, daemonize) before creating an engine. Every
 * CUDA failure is logged with file:line; this code never aborts the
 * process.
 *
 * Faults: after creation, a failed allocation is CUDIS_E_NOMEM and the
 * engine goes on; any other CUDA error, or a launch still running after
 * cfg->watchdog_ms, fails the engine: from then on every call returns
 * CUDIS_E_DEVFAIL at once (gpu_engine_failure says why) and nothing waits
 * on the device. No call blocks on the device without that deadline.
 *
 * Functions return 0 or a negative CUDIS_E_* (cudis_err.h).
 */
#ifndef GPU_ENGINE_H
#define GPU_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cudis_op.h"
#include "cudis_stats.h"
#include "engine_store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpu_engine gpu_engine;

/* d_val_lens value of a miss in gpu_engine_get_dev. */
#define GPU_DEV_MISS UINT32_MAX

/*
 * Whether a usable CUDA device exists (device = ordinal, -1 = first usable).
 * Returns 0, CUDIS_E_NODEV (no device, driver too old, device not usable)
 * or CUDIS_E_CUDA; the reason is written to why[why_len]. Initialises CUDA
 * in the calling process.
 */
int gpu_engine_probe(int device, char *why, size_t why_len);

/*
 * Create an engine on cfg->device with cfg->memory_bytes of device memory
 * for index + items (clamped to what the card has free, keeping room for
 * staging buffers). NULL on failure with the reason in why (no device,
 * driver too old, out of device memory, CUDA error...).
 */
gpu_engine *gpu_engine_create(const engine_config *cfg, char *why, size_t why_len);

/* Wait for all enqueued work, free device and pinned memory. NULL is fine.
 * A failed engine frees its host memory only (its device resources go with
 * the process: freeing them could wait for a hung kernel). */
void gpu_engine_destroy(gpu_engine *g);

/* NULL while the engine works; after a device fault, why it failed. */
const char *gpu_engine_failure(gpu_engine *g);

/* Fault injection for tests: the nth_call-th checked CUDA call from now
 * fails as a sticky device error would (cudaErrorIllegalAddress), and the
 * nth_wait-th wait for the device from now never sees its work finish (a
 * hung kernel: the watchdog fires). 0 disarms. Process-wide. */
void gpu_engine_inject_fault(int nth_call, int nth_wait);

/*
 * Run a host batch (cudis_op.h) and wait for its results. Thread-safe; see
 * the pipelining note at the top. Returns CUDIS_OK when every op has a
 * result, or a negative code when the batch as a whole failed. With
 * batch->ev set, the kernels report into a mirror of it in device memory
 * (room for what the sink has left, staged with the batch) whose events
 * are appended to batch->ev when the batch completes; a failed batch
 * reports none.
 */
int gpu_engine_execute(gpu_engine *g, cudis_batch *batch);

/* A host batch in flight (gpu_engine_submit). */
typedef struct gpu_pending gpu_pending;

/*
 * The two halves of gpu_engine_execute, for a caller that pipelines batches
 * from one thread: submit copies the batch into pinned staging and enqueues
 * copy-in, kernel and copy-back, then returns at once; complete waits for
 * it and fills batch->res / out / out_len. Submit batch n+1 before
 * completing batch n and its copy-in overlaps n's kernel; kernels still run
 * in submission order. The batch's memory must stay valid until complete.
 * At most 3 batches may be pending per engine: submit returns
 * CUDIS_E_BUSY (nothing enqueued) when all staging slots are in flight.
 * Every successful submit must be completed exactly once (any order).
 */
int gpu_engine_submit(gpu_engine *g, cudis_batch *batch, gpu_pending **pending);
int gpu_engine_complete(gpu_engine *g, gpu_pending *pending);

/*
 * Run a batch whose records already live in device memory: d_ops[n_ops],
 * packed key/value bytes d_in (in_len bytes; an op whose key or value lies
 * outside them gets CUDIS_E_INVAL), results to d_res[n_ops], values packed
 * into d_out (out_cap bytes) with the reserved length accumulated in
 * *d_out_len (the caller zeroes it first, as batch->out_len). Enqueued on
 * `stream` in order after earlier work; does not wait. The caller must not
 * put two ops on one key into a batch when one of them writes (cudis_op.h).
 */
int gpu_engine_execute_dev(gpu_engine *g, const cudis_op *d_ops, uint32_t n_ops,
                           const uint8_t *d_in, uint64_t in_len, cudis_result *d_res,
                           uint8_t *d_out, uint64_t out_cap, uint64_t *d_out_len, int64_t now_ms,
                           void *stream);

/*
 * Fixed-width lookups (GET semantics: expired = miss, a hit refreshes
 * recency). Key i is the key_len bytes at d_keys + i * key_len. A hit copies
 * min(length, val_stride) bytes of the value to d_vals + i * val_stride and
 * stores the value's full length in d_val_lens[i]; a miss stores
 * GPU_DEV_MISS there and appends i to d_miss, counting in *d_n_miss (zeroed
 * by this call). d_val_lens, d_miss and d_n_miss may be NULL (d_miss and
 * d_n_miss together). Returns CUDIS_E_INVAL for a NULL engine or keys, a
 * zero key_len, host (non-device) pointers; CUDIS_E_KEYTOOBIG past the
 * maximum key length. n = 0 does nothing.
 */
int gpu_engine_get_dev(gpu_engine *g, const void *d_keys, uint32_t key_len, uint32_t n,
                       void *d_vals, uint32_t val_stride, uint32_t *d_val_lens, uint32_t *d_miss,
                       uint32_t *d_n_miss, int64_t now_ms, void *stream);

/*
 * Fixed-width stores (SET semantics, expire_ms absolute or 0). Key i as
 * above, value i the val_len bytes at d_vals + i * val_len. d_status[i]
 * (may be NULL) gets CUDIS_OK or the op's error (CUDIS_E_FULL when memory
 * could not be found, CUDIS_E_VALTOOBIG). Keys in one call must be
 * distinct (one write per key per batch); with duplicates one write wins.
 */
int gpu_engine_set_dev(gpu_engine *g, const void *d_keys, uint32_t key_len, uint32_t n,
                       const void *d_vals, uint32_t val_len, int64_t expire_ms, int32_t *d_status,
                       int64_t now_ms, void *stream);

/* Wait until everything enqueued on the engine has finished. */
int gpu_engine_sync(gpu_engine *g);

/* Whole-keyspace operations: same contracts as engine_store_ops. They wait
 * for enqueued work first and are not concurrent with batches. */
int gpu_engine_scan(gpu_engine *g, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                    cudis_scan_fn fn, void *arg, uint64_t *next);
int gpu_engine_random_key(gpu_engine *g, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                          uint32_t *len);
int gpu_engine_flush(gpu_engine *g, int db);
uint64_t gpu_engine_db_size(gpu_engine *g, uint8_t db);
/* gpu_engine_sweep reports what it reclaims to ev (NULL: no events). */
int gpu_engine_sweep(gpu_engine *g, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev);
uint64_t gpu_engine_sweep_units(gpu_engine *g);
/* Keys with an expiry per database (engine_store_ops.expires): counted on
 * the device; the mean TTL from the keys of the first max_work buckets. */
int gpu_engine_expires(gpu_engine *g, int64_t now_ms, uint32_t max_work, cudis_expires *out);
/* The logical clock: ops launched so far (recency stamps are its low bits). */
uint64_t gpu_engine_clock(gpu_engine *g);
/* The eviction policy (enum cudis_policy) and LFU parameters of the
 * launches that follow. */
int gpu_engine_set_policy(gpu_engine *g, uint32_t policy, uint32_t lfu_log_factor,
                          uint32_t lfu_decay_time); /* one pass: a unit per 64 buckets */
void gpu_engine_stats(gpu_engine *g, cudis_stats *out);
void gpu_engine_reset_stats(gpu_engine *g);

/* INFO lines: gpu_device, gpu_memory_total, gpu_memory_cache, gpu_batches,
 * gpu_kernel_us_per_batch, gpu_ops_per_batch... Returns bytes written
 * (snprintf-style). */
size_t gpu_engine_info(gpu_engine *g, char *buf, size_t cap);

/* Kernel time of the last host batch in microseconds (CUDA events). */
double gpu_engine_last_kernel_us(gpu_engine *g);

/* The table's memory for audits (cuckoo/ccht_audit.h): gpu_engine_table_bytes
 * returns its size and copies its ccht_geom into geom_out (may be NULL);
 * gpu_engine_table_image copies all of it (after every launch so far) to
 * host memory dst of at least that size. */
uint64_t gpu_engine_table_bytes(gpu_engine *g, void *geom_out);
int gpu_engine_table_image(gpu_engine *g, void *dst, uint64_t cap);

#ifdef __cplusplus
}
#endif

#endif /* GPU_ENGINE_H */
