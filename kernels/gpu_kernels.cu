/*
 * gpu_kernels.cu - the CUDA kernels of the gpu engine and their launch
 * wrappers (C linkage, declared in gpu_internal.h).
 *
 * Kernels are thin grid-stride loops over the per-thread bodies of
 * gpu_dev.h, which run the one executor of cuckoo/ccht_exec.h: k_batch
 * (a mixed batch, one thread per op), k_get_fixed and k_set_fixed (the
 * fast path of the device-pointer API: fixed-width keys and rows, no op
 * records to copy). Counters are summed per block in shared memory, then
 * added to device memory once per block. k_collect and k_sweep serve the
 * whole-keyspace operations.
 *
 * One translation unit, no relocatable device code: keeps nvcc time down.
 */
#include <cuda_runtime.h>

#include "gpu_dev.h"
#include "gpu_internal.h"

#define GPU_BLOCK 256
#define GPU_MAX_BLOCKS 8192

static unsigned grid_for(uint64_t threads)
{
    uint64_t b = (threads + GPU_BLOCK - 1) / GPU_BLOCK;
    if (b == 0) {
        b = 1;
    }
    return (unsigned)(b < GPU_MAX_BLOCKS ? b : GPU_MAX_BLOCKS);
}

/* Add the block's counter deltas to device memory. All threads call it. */
__device__ static void tally_flush(const ccht_table &t, const ccht_tally &ty)
{
    __shared__ unsigned long long s[CCHT_C__COUNT];
    if (threadIdx.x < CCHT_C__COUNT) {
        s[threadIdx.x] = 0;
    }
    __syncthreads();
    for (int i = 0; i < CCHT_C__COUNT; i++) {
        if (ty.c[i] != 0) {
            atomicAdd(&s[i], (unsigned long long)ty.c[i]);
        }
    }
    __syncthreads();
    if (threadIdx.x < CCHT_C__COUNT && s[threadIdx.x] != 0) {
        atomicAdd((unsigned long long *)&t.cnt[threadIdx.x], s[threadIdx.x]);
    }
}

#define GRID_LOOP(i, n)                                                                            \
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                    \
         i += (uint64_t)gridDim.x * blockDim.x)

__global__ void k_batch(const ccht_table t, const gpu_batch_args a)
{
    ccht_tally ty;
    ccht_tally_zero(&ty);
    GRID_LOOP(i, gpu_launch_threads(&a.l, a.n_ops))
    {
        gpu_batch_op(&t, &a, i, &ty);
    }
    tally_flush(t, ty);
}

__global__ void k_get_fixed(const ccht_table t, const gpu_fixed_args a)
{
    ccht_tally ty;
    ccht_tally_zero(&ty);
    GRID_LOOP(i, gpu_launch_threads(&a.l, a.n))
    {
        gpu_fixed_op(&t, &a, i, CUDIS_OP_GET, &ty);
    }
    tally_flush(t, ty);
}

__global__ void k_set_fixed(const ccht_table t, const gpu_fixed_args a)
{
    ccht_tally ty;
    ccht_tally_zero(&ty);
    GRID_LOOP(i, gpu_launch_threads(&a.l, a.n))
    {
        gpu_fixed_op(&t, &a, i, CUDIS_OP_SET, &ty);
    }
    tally_flush(t, ty);
}

/* ------------------------------------------------------------------------
 * Whole-keyspace work (launches are ordered: no batch runs concurrently)
 * ---------------------------------------------------------------------- */

__global__ void k_collect(const ccht_table t, uint64_t first, uint64_t n, int64_t now_ms,
                          uint8_t *buf, uint64_t cap, unsigned long long *len)
{
    const ccht_view *v = &t.v;
    GRID_LOOP(k, n)
    {
        uint64_t b = first + k;
        for (uint32_t w = 0; w < v->ways; w++) {
            uint64_t word = cudis_load_relaxed_u64(ccht_bkt_slot(v, b, w));
            if (word == 0 || ccht_slot_expired(v, word, now_ms)) {
                continue;
            }
            uint64_t off = ccht_slot_off(word);
            uint32_t h0 = ccht_item_h0(v, off);
            uint32_t klen = h0 & CCHT_ITEM_KLEN_MASK;
            uint32_t rec = (uint32_t)((sizeof(gpu_key_rec) + klen + 7) & ~7ull);
            unsigned long long at = atomicAdd(len, (unsigned long long)rec);
            if (at + rec > cap) {
                continue;
            }
            gpu_key_rec *r = (gpu_key_rec *)(buf + at);
            r->key_len = klen;
            r->rec_len = rec;
            r->db = ccht_item_db(h0);
            r->pad_ = 0;
            r->expire_ms = ccht_item_expire(v, off, h0);
            ccht_bytes_read((uint8_t *)(r + 1), ccht_item_key(v, off, h0), klen);
        }
    }
}

__global__ void k_sweep(const ccht_table t, uint64_t first, uint64_t n, int64_t now_ms,
                        unsigned long long *count, cudis_evbuf *ev)
{
    ccht_tally ty;
    ccht_tally_zero(&ty);
    uint32_t got = 0;
    GRID_LOOP(k, n)
    {
        got += ccht_sweep_bucket(&t, first + k, now_ms, (uint32_t)k, &ty, ev);
    }
    if (got != 0) {
        atomicAdd(count, (unsigned long long)got);
    }
    tally_flush(t, ty);
}

__global__ void k_flush_db(const ccht_table t, uint64_t first, uint64_t n, uint32_t db)
{
    ccht_tally ty;
    ccht_tally_zero(&ty);
    GRID_LOOP(k, n)
    {
        ccht_drop_db_bucket(&t, first + k, db, (uint32_t)k, &ty);
    }
    tally_flush(t, ty);
}

/* ------------------------------------------------------------------------
 * Launch wrappers
 * ---------------------------------------------------------------------- */

extern "C" int gpu_k_probe(void)
{
    cudaFuncAttributes fa;
    return GPU_CK(cudaFuncGetAttributes(&fa, k_batch));
}

extern "C" int gpu_k_batch(const ccht_table *t, const gpu_batch_args *a, cudaStream_t s)
{
    k_batch<<<grid_for(gpu_launch_threads(&a->l, a->n_ops)), GPU_BLOCK, 0, s>>>(*t, *a);
    return GPU_CK(cudaGetLastError());
}

extern "C" int gpu_k_get_fixed(const ccht_table *t, const gpu_fixed_args *a, cudaStream_t s)
{
    k_get_fixed<<<grid_for(gpu_launch_threads(&a->l, a->n)), GPU_BLOCK, 0, s>>>(*t, *a);
    return GPU_CK(cudaGetLastError());
}

extern "C" int gpu_k_set_fixed(const ccht_table *t, const gpu_fixed_args *a, cudaStream_t s)
{
    k_set_fixed<<<grid_for(gpu_launch_threads(&a->l, a->n)), GPU_BLOCK, 0, s>>>(*t, *a);
    return GPU_CK(cudaGetLastError());
}

extern "C" int gpu_k_collect(const ccht_table *t, uint64_t first, uint64_t n, int64_t now_ms,
                             uint8_t *d_buf, uint64_t cap, uint64_t *d_len, cudaStream_t s)
{
    k_collect<<<grid_for(n), GPU_BLOCK, 0, s>>>(*t, first, n, now_ms, d_buf, cap,
                                                (unsigned long long *)d_len);
    return GPU_CK(cudaGetLastError());
}

extern "C" int gpu_k_sweep(const ccht_table *t, uint64_t first, uint64_t n, int64_t now_ms,
                           uint64_t *d_count, cudis_evbuf *d_ev, cudaStream_t s)
{
    k_sweep<<<grid_for(n), GPU_BLOCK, 0, s>>>(*t, first, n, now_ms, (unsigned long long *)d_count,
                                              d_ev);
    return GPU_CK(cudaGetLastError());
}

extern "C" int gpu_k_flush_db(const ccht_table *t, uint64_t first, uint64_t n, uint32_t db,
                              cudaStream_t s)
{
    k_flush_db<<<grid_for(n), GPU_BLOCK, 0, s>>>(*t, first, n, db);
    return GPU_CK(cudaGetLastError());
}
