/*
 * gpu_kernels.cu - the CUDA kernels of the gpu engine and their launch
 * wrappers (C linkage, declared in gpu_internal.h).
 *
 * Kernels are thin loops: k_batch runs one whole mixed batch, one thread per
 * op, through gpu_exec_op (gpu_exec.h: the shared bucket algorithm of
 * cuckoo/ccht_bucket.h plus cudis_plan_op). k_get_fixed is the fast path of
 * the device-pointer API: a tile of 8 threads per key reads the bucket's
 * slot words together (one coalesced 64-byte read), compares fingerprints
 * in parallel and copies the value cooperatively with 16-byte loads, the
 * layout and validation protocol being ccht_bucket.h's. Counters are summed
 * per block in shared memory, then added to device memory once per block.
 *
 * One translation unit, no relocatable device code: keeps nvcc time down.
 */
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "gpu_exec.h"
#include "gpu_internal.h"

namespace cg = cooperative_groups;

#define GPU_BLOCK 256
#define GPU_MAX_BLOCKS 8192
#define GPU_TILE 8

static unsigned grid_for(uint64_t threads)
{
    uint64_t b = (threads + GPU_BLOCK - 1) / GPU_BLOCK;
    if (b == 0) {
        b = 1;
    }
    return (unsigned)(b < GPU_MAX_BLOCKS ? b : GPU_MAX_BLOCKS);
}

/* Add the block's counter deltas to device memory. All threads call it. */
__device__ static void tally_flush(const gpu_table &t, const gpu_tally &ty)
{
    __shared__ unsigned long long s[GPU_C__COUNT];
    if (threadIdx.x < GPU_C__COUNT) {
        s[threadIdx.x] = 0;
    }
    __syncthreads();
    for (int i = 0; i < GPU_C__COUNT; i++) {
        if (ty.c[i] != 0) {
            atomicAdd(&s[i], (unsigned long long)ty.c[i]);
        }
    }
    __syncthreads();
    if (threadIdx.x < GPU_C__COUNT && s[threadIdx.x] != 0) {
        atomicAdd((unsigned long long *)&t.cnt->c[threadIdx.x], s[threadIdx.x]);
    }
}

__device__ static uint64_t mix_seed(uint64_t i, uint32_t stamp)
{
    return cudis_mix64(i ^ 0x94d049bb133111ebull, (uint64_t)stamp * 0x9e3779b97f4a7c15ull + 1);
}

/* ------------------------------------------------------------------------
 * Mixed batches
 * ---------------------------------------------------------------------- */

__global__ void k_batch(const gpu_table t, const gpu_batch_args a)
{
    gpu_tally ty;
    gpu_tally_zero(&ty);
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.n_ops; i += stride) {
        const cudis_op *op = &a.ops[i];
        gpu_op_ctx x;
        x.op = op;
        x.key = a.in + op->key_off;
        x.arg = a.in + op->val_off;
        x.res = &a.res[i];
        x.out = a.out;
        x.out_cap = a.out_cap;
        x.out_len = a.out_len;
        x.now_ms = a.now_ms;
        x.shard = (uint32_t)i;
        x.seed = mix_seed(i, t.stamp);
        gpu_exec_op(&t, &x, &ty);
    }
    tally_flush(t, ty);
}

/* ------------------------------------------------------------------------
 * Fixed-width device-pointer API
 * ---------------------------------------------------------------------- */

__device__ static inline uint64_t ld_cg_u64(const void *p)
{
    return __ldcg((const unsigned long long *)p);
}

/* Key compare with wide loads (item keys start 8-aligned). */
__device__ static bool key_eq(const uint8_t *item_key, const uint8_t *key, uint32_t n)
{
    uint32_t i = 0;
    if ((((uintptr_t)item_key | (uintptr_t)key) & 7) == 0) {
        for (; i + 8 <= n; i += 8) {
            if (ld_cg_u64(item_key + i) != *(const uint64_t *)(key + i)) {
                return false;
            }
        }
    }
    for (; i < n; i++) {
        if (__ldcg(item_key + i) != key[i]) {
            return false;
        }
    }
    return true;
}

/* Copy n bytes with the tile's threads, as wide as alignment allows. */
template <typename Tile>
__device__ static void tile_copy(const Tile &tile, uint8_t *dst, const uint8_t *src, uint32_t n)
{
    unsigned lane = tile.thread_rank();
    uintptr_t al = (uintptr_t)dst | (uintptr_t)src | n;
    if ((al & 15) == 0) {
        for (uint32_t k = lane; k < n / 16; k += tile.size()) {
            ((uint4 *)dst)[k] = __ldcg((const uint4 *)src + k);
        }
    } else if ((al & 7) == 0) {
        for (uint32_t k = lane; k < n / 8; k += tile.size()) {
            ((unsigned long long *)dst)[k] = __ldcg((const unsigned long long *)src + k);
        }
    } else if ((al & 3) == 0) {
        for (uint32_t k = lane; k < n / 4; k += tile.size()) {
            ((unsigned *)dst)[k] = __ldcg((const unsigned *)src + k);
        }
    } else {
        for (uint32_t k = lane; k < n; k += tile.size()) {
            dst[k] = __ldcg(src + k);
        }
    }
}

/*
 * Fixed-width gets. Every launch of an engine waits for the one before it
 * (gpu_engine.c chains them with events), and this kernel only reads (and
 * refreshes stamps), so no writer can run while it does: the bucket
 * versions are read with plain L2 loads and compared after the copy as a
 * guard, without the fences of ccht_read_begin/ccht_read_valid, which a
 * concurrent writer would require.
 */
__global__ void k_get_fixed(const gpu_table t, const gpu_fixed_args a)
{
    cg::thread_block_tile<GPU_TILE> tile = cg::tiled_partition<GPU_TILE>(cg::this_thread_block());
    const ccht_view *v = &t.v;
    unsigned lane = tile.thread_rank();
    gpu_tally ty;
    gpu_tally_zero(&ty);
    uint64_t first = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / GPU_TILE;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x / GPU_TILE;
    for (uint64_t i = first; i < a.n; i += stride) {
        const uint8_t *key = a.keys + i * a.key_len;
        ccht_hkey hk = ccht_hash_key(v, key, a.key_len);
        int nb = hk.b2 != hk.b1 ? 2 : 1;
        for (;;) {
            uint64_t ver[2] = {0, 0};
            bool hit = false, torn = false, stop = false;
            uint32_t vlen = 0, hit_way = 0;
            uint64_t hit_b = 0;
            int probed = 0;
            for (int bi = 0; bi < nb && !stop; bi++) {
                uint64_t b = bi ? hk.b2 : hk.b1;
                uint64_t x = lane == 0 ? ld_cg_u64(ccht_bkt_version(v, b)) : 0;
                ver[bi] = tile.shfl(x, 0);
                if (ver[bi] & CCHT_VER_LOCK) {
                    torn = true; /* cannot happen (see above); retry if it does */
                    break;
                }
                probed = bi + 1;
                int my_way = -1;
                uint64_t my_word = 0;
                uint32_t my_h0 = 0;
                for (uint32_t w = lane; w < v->ways; w += GPU_TILE) {
                    uint64_t word = ld_cg_u64(ccht_bkt_slot(v, b, w));
                    if (word == 0 || ccht_slot_fp(word) != hk.fp) {
                        continue;
                    }
                    uint64_t off = ccht_slot_off(word);
                    if (off + CCHT_ITEM_HDR_EXP > v->arena_bytes) {
                        continue;
                    }
                    uint64_t hv = ld_cg_u64(v->arena + off);
                    uint32_t h0 = (uint32_t)hv;
                    if (!(h0 & CCHT_ITEM_LIVE) || (h0 & CCHT_ITEM_KLEN_MASK) != a.key_len ||
                        off + ccht_item_hdr((h0 & CCHT_ITEM_EXP) != 0) + a.key_len >
                            v->arena_bytes) {
                        continue;
                    }
                    if (key_eq(ccht_item_key(v, off, h0), key, a.key_len)) {
                        my_way = (int)w;
                        my_word = word;
                        my_h0 = h0;
                    }
                }
                unsigned m = tile.ballot(my_way >= 0);
                if (m == 0) {
                    continue;
                }
                int src = __ffs(m) - 1;
                uint64_t word = tile.shfl(my_word, src);
                uint32_t h0 = tile.shfl(my_h0, src);
                uint32_t way = (uint32_t)tile.shfl(my_way, src);
                uint64_t off = ccht_slot_off(word);
                /* one key lives in one slot: stop after this bucket */
                stop = true;
                int state = 0; /* 0 torn, 1 expired, 2 live */
                uint32_t n = 0;
                if (lane == 0) {
                    if (ccht_item_vlen_ok(v, off, h0, &n)) {
                        int64_t e = ccht_item_expire(v, off, h0);
                        state = (e != 0 && e <= a.now_ms) ? 1 : 2;
                    }
                }
                state = tile.shfl(state, 0);
                n = tile.shfl(n, 0);
                if (state == 0) {
                    torn = true;
                } else if (state == 2) {
                    uint32_t c = n < a.val_stride ? n : a.val_stride;
                    if (c > 0) {
                        tile_copy(tile, a.vals + i * (uint64_t)a.val_stride,
                                  ccht_item_val(v, off, h0), c);
                    }
                    hit = true;
                    vlen = n;
                    hit_b = b;
                    hit_way = way;
                }
            }
            tile.sync();
            bool valid = !torn;
            if (lane == 0 && valid) {
                for (int bi = 0; bi < probed; bi++) {
                    valid = valid && ld_cg_u64(ccht_bkt_version(v, bi ? hk.b2 : hk.b1)) == ver[bi];
                }
            }
            valid = tile.shfl(valid, 0);
            if (!valid) {
                continue;
            }
            if (lane == 0) {
                if (hit) {
                    if (a.val_lens != NULL) {
                        a.val_lens[i] = vlen;
                    }
                    ccht_touch(v, hit_b, hit_way, t.stamp, GPU_TOUCH_SLACK);
                    ty.c[GPU_C_HITS] += 1;
                } else {
                    if (a.val_lens != NULL) {
                        a.val_lens[i] = GPU_DEV_MISS;
                    }
                    if (a.miss != NULL) {
                        a.miss[atomicAdd(a.n_miss, 1u)] = (uint32_t)i;
                    }
                    ty.c[GPU_C_MISSES] += 1;
                }
            }
            break;
        }
    }
    tally_flush(t, ty);
}

/* Out-buffer counter for ops that never return a value (SET without GET). */
__device__ unsigned long long g_no_out_len;

__global__ void k_set_fixed(const gpu_table t, const gpu_fixed_args a)
{
    gpu_tally ty;
    gpu_tally_zero(&ty);
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    cudis_op op;
    op.code = CUDIS_OP_SET;
    op.reserved = 0;
    op.flags = 0;
    op.key_len = a.key_len;
    op.key_off = 0;
    op.val_off = 0;
    op.val_len = a.val_stride;
    op.reserved2 = 0;
    op.arg = 0;
    op.expire_ms = a.expire_ms;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += stride) {
        cudis_result res;
        gpu_op_ctx x;
        x.op = &op;
        x.key = a.keys + i * a.key_len;
        x.arg = a.vals + i * (uint64_t)a.val_stride;
        x.res = &res;
        x.out = NULL;
        x.out_cap = 0;
        x.out_len = (uint64_t *)&g_no_out_len;
        x.now_ms = a.now_ms;
        x.shard = (uint32_t)i;
        x.seed = mix_seed(i, t.stamp);
        gpu_exec_op(&t, &x, &ty);
        if (a.status != NULL) {
            a.status[i] = res.status;
        }
    }
    tally_flush(t, ty);
}

/* ------------------------------------------------------------------------
 * Whole-keyspace work (launches are ordered: no batch runs concurrently)
 * ---------------------------------------------------------------------- */

__global__ void k_collect(const gpu_table t, uint64_t first, uint64_t n, int64_t now_ms,
                          uint8_t *buf, uint64_t cap, unsigned long long *len)
{
    const ccht_view *v = &t.v;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
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
            r->expire_ms = ccht_item_expire(v, off, h0);
            ccht_bytes_read((uint8_t *)(r + 1), ccht_item_key(v, off, h0), klen);
        }
    }
}

__global__ void k_sweep(const gpu_table t, uint64_t first, uint64_t n, int64_t now_ms,
                        unsigned long long *count)
{
    const ccht_view *v = &t.v;
    gpu_tally ty;
    gpu_tally_zero(&ty);
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
        uint64_t b = first + k;
        ccht_bkt_lock(v, b);
        for (uint32_t w = 0; w < v->ways; w++) {
            uint64_t word = cudis_load_relaxed_u64(ccht_bkt_slot(v, b, w));
            if (word != 0 && ccht_slot_expired(v, word, now_ms)) {
                cudis_store_rel_u64(ccht_bkt_slot(v, b, w), 0);
                gpu_item_drop(&t, ccht_slot_off(word), true, (uint32_t)k, &ty);
                ty.c[GPU_C_EVICT_EXPIRED] += 1;
            }
        }
        ccht_bkt_unlock(v, b);
    }
    if (ty.c[GPU_C_EVICT_EXPIRED] != 0) {
        atomicAdd(count, (unsigned long long)ty.c[GPU_C_EVICT_EXPIRED]);
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

extern "C" int gpu_k_batch(const gpu_table *t, const gpu_batch_args *a, cudaStream_t s)
{
    k_batch<<<grid_for(a->n_ops), GPU_BLOCK, 0, s>>>(*t, *a);
    return GPU_CK(cudaGetLastError());
}

extern "C" int gpu_k_get_fixed(const gpu_table *t, const gpu_fixed_args *a, cudaStream_t s)
{
    k_get_fixed<<<grid_for((uint64_t)a->n * GPU_TILE), GPU_BLOCK, 0, s>>>(*t, *a);
    return GPU_CK(cudaGetLastError());
}

extern "C" int gpu_k_set_fixed(const gpu_table *t, const gpu_fixed_args *a, cudaStream_t s)
{
    k_set_fixed<<<grid_for(a->n), GPU_BLOCK, 0, s>>>(*t, *a);
    return GPU_CK(cudaGetLastError());
}

extern "C" int gpu_k_collect(const gpu_table *t, uint64_t first, uint64_t n, int64_t now_ms,
                             uint8_t *d_buf, uint64_t cap, uint64_t *d_len, cudaStream_t s)
{
    k_collect<<<grid_for(n), GPU_BLOCK, 0, s>>>(*t, first, n, now_ms, d_buf, cap,
                                                (unsigned long long *)d_len);
    return GPU_CK(cudaGetLastError());
}

extern "C" int gpu_k_sweep(const gpu_table *t, uint64_t first, uint64_t n, int64_t now_ms,
                           uint64_t *d_count, cudaStream_t s)
{
    k_sweep<<<grid_for(n), GPU_BLOCK, 0, s>>>(*t, first, n, now_ms, (unsigned long long *)d_count);
    return GPU_CK(cudaGetLastError());
}
