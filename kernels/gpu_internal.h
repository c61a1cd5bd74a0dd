/*
 * gpu_internal.h - private to kernels/: the CUDA error macro and fault
 * injection, the engine object, the staging slots of the host pipeline,
 * and the launch wrappers that gpu_kernels.cu exports to the C host code.
 */
#ifndef GPU_INTERNAL_H
#define GPU_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ccht_geom.h"
#include "gpu_dev.h"
#include "gpu_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The one CUDA checking macro
 * ---------------------------------------------------------------------- */

/* Logs "cudis gpu: file:line: expr: cudaErrorName: text" to stderr, clears
 * the runtime's (non-sticky) last error, remembers the text for INFO, and
 * returns CUDIS_E_CUDA. */
int gpu_check_fail(int err, const char *expr, const char *file, int line);

/* Fault injection (gpu_engine_inject_fault): the result a checked call
 * reports, possibly replaced by an injected failure. */
int gpu_fault_filter(int err);

static inline int gpu_check_code(int err, const char *expr, const char *file, int line)
{
    err = gpu_fault_filter(err);
    return err == 0 ? 0 : gpu_check_fail(err, expr, file, line);
}

/* Evaluates a CUDA runtime call (or cudaGetLastError() after a launch):
 * 0 on success, CUDIS_E_CUDA (logged with file:line) on failure. Never
 * aborts. Use: `if ((rc = GPU_CK(cudaMalloc(&p, n))) != 0) goto fail;` */
#define GPU_CK(expr) gpu_check_code((int)(expr), #expr, __FILE__, __LINE__)

/* The text of the last CUDA failure this process saw ("" if none). */
const char *gpu_last_error(void);

/* ------------------------------------------------------------------------
 * Launch wrappers (gpu_kernels.cu). Each enqueues on `s` and returns 0 or
 * CUDIS_E_CUDA (launch failure); none waits.
 * ---------------------------------------------------------------------- */

/* Whether this build's kernels can run on the current device. */
int gpu_k_probe(void);

/* A mixed batch of cudis_op records in device memory. */
int gpu_k_batch(const ccht_table *t, const gpu_batch_args *a, cudaStream_t s);

/* Fixed-width gets / sets (gpu_engine_get_dev / set_dev). */
int gpu_k_get_fixed(const ccht_table *t, const gpu_fixed_args *a, cudaStream_t s);
int gpu_k_set_fixed(const ccht_table *t, const gpu_fixed_args *a, cudaStream_t s);

/* Copy the live keys of buckets [first, first + n) into d_buf as
 * gpu_key_rec records (see gpu_dev.h); *d_len (zeroed by the caller) gets
 * the bytes needed, which may exceed cap (then records past cap are not
 * written and the caller retries with a larger buffer). */
int gpu_k_collect(const ccht_table *t, uint64_t first, uint64_t n, int64_t now_ms, uint8_t *d_buf,
                  uint64_t cap, uint64_t *d_len, cudaStream_t s);

/* Remove expired items of buckets [first, first + n); adds the count to
 * *d_count and reports them to the device sink d_ev (NULL: none). */
int gpu_k_sweep(const ccht_table *t, uint64_t first, uint64_t n, int64_t now_ms, uint64_t *d_count,
                cudis_evbuf *d_ev, cudaStream_t s);

/* Remove the items of database db from buckets [first, first + n) (FLUSHDB). */
int gpu_k_flush_db(const ccht_table *t, uint64_t first, uint64_t n, uint32_t db, cudaStream_t s);

/* ------------------------------------------------------------------------
 * The engine
 * ---------------------------------------------------------------------- */

#define GPU_SLOTS 3    /* staging slots: batches in flight in the host pipeline */
#define GPU_RETIRED 64 /* pinned buffers outgrown, freed at destroy */

/* One in-flight host batch: pinned host buffer, device buffer of the same
 * layout [ops | in | hdr | res | out | ev], its stream and events (hdr
 * holds out_len and, when the batch wants events, the device mirror of
 * its sink, whose records and key bytes are the ev area). */
typedef struct gpu_slot {
    cudaStream_t stream;
    cudaEvent_t ev_k0;   /* before the kernel (after waiting for the previous launch) */
    cudaEvent_t ev_k1;   /* after the kernel: the next launch waits for it */
    cudaEvent_t ev_done; /* after a copy back */
    uint8_t *h_buf;      /* pinned host staging */
    uint8_t *d_buf;      /* device staging */
    size_t cap;          /* bytes of each */
    bool busy;
    /* the batch in flight (between submit and complete) */
    cudis_batch *batch;
    size_t lay_hdr, lay_res, lay_out, lay_ev;
    uint64_t out_cap;
    int rc; /* result of enqueueing it */
} gpu_slot;

struct gpu_engine {
    int device;
    char dev_name[256];
    int cc_major, cc_minor;
    size_t mem_total; /* the card's memory */
    engine_config cfg;

    ccht_geom geom;      /* layout of d_mem */
    ccht_table t;        /* device pointers and geometry, by value to kernels */
    void *d_mem;         /* one cudaMalloc: index + arena + metadata */
    uint8_t *meta_image; /* the initial metadata (host copy, for flush) */
    uint64_t budget;     /* effective budget (cfg clamped to free memory) */
    bool clamped;

    /* a device fault ends the engine: every call then returns
     * CUDIS_E_DEVFAIL at once and makes no CUDA call */
    int failed;
    char fail_why[256];
    uint64_t watchdog_ns;

    /* staging slots: `lock` guards busy flags; `cond` signals a free slot */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    gpu_slot slot[GPU_SLOTS];
    unsigned next_slot;
    void *retired[GPU_RETIRED];
    unsigned n_retired;

    /* order of kernels: enqueue under `enq_lock`; every launch waits for
     * `last_ev` (the previous launch's end) and becomes the new one; the
     * logical clock of stamps advances by each launch's op count */
    pthread_mutex_t enq_lock;
    cudaEvent_t last_ev; /* NULL before the first launch */
    cudaEvent_t ev_dev;  /* end of the last device-pointer call */
    uint64_t clock;

    /* the aux stream (keyspace work, counters) with its scratch buffers
     * (device + pinned host): ks_lock serialises their users */
    pthread_mutex_t ks_lock;
    cudaStream_t aux;
    cudaEvent_t ev_aux;
    uint8_t *d_scratch;
    uint8_t *h_scratch;
    size_t scratch_cap;
    uint64_t sweep_cursor;
    uint64_t rand_state;

    /* host-batch statistics, under `lock` */
    uint64_t batches;
    uint64_t batch_ops;
    uint64_t batch_max_ops;
    double kernel_us_total;
    double last_kernel_us;
    uint64_t staging_bytes;
};

#ifdef __cplusplus
}
#endif

#endif /* GPU_INTERNAL_H */
