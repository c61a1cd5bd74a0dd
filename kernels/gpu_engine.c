/*
 * gpu_engine.c - host side of the CUDA engine: device choice and lazy CUDA
 * initialisation, sizing and allocating device memory from the budget, the
 * pinned staging slots and streams of the host-batch pipeline, the
 * device-pointer API, whole-keyspace operations, statistics and INFO.
 *
 * Plain C over the CUDA runtime API; the kernels are in gpu_kernels.cu.
 * Every CUDA call goes through GPU_CK (gpu_internal.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_internal.h"

/* ------------------------------------------------------------------------
 * Errors
 * ---------------------------------------------------------------------- */

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static char err_text[256];

int gpu_check_fail(int err, const char *expr, const char *file, int line)
{
    cudaError_t e = (cudaError_t)err;
    pthread_mutex_lock(&err_lock);
    snprintf(err_text, sizeof(err_text), "%s:%d: %s: %s: %s", file, line, expr, cudaGetErrorName(e),
             cudaGetErrorString(e));
    fprintf(stderr, "cudis gpu: %s\n", err_text);
    pthread_mutex_unlock(&err_lock);
    (void)cudaGetLastError(); /* clear a non-sticky error so later calls may work */
    return CUDIS_E_CUDA;
}

const char *gpu_last_error(void)
{
    return err_text;
}

static void set_why(char *why, size_t why_len, const char *fmt, ...)
{
    if (why == NULL || why_len == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------------
 * Device choice
 * ---------------------------------------------------------------------- */

/* Pick the device: `want` or the first one this build can run on. */
static int pick_device(int want, int *out, char *why, size_t why_len)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorInsufficientDriver) {
        int drv = 0, rt = 0;
        (void)cudaDriverGetVersion(&drv);
        (void)cudaRuntimeGetVersion(&rt);
        (void)cudaGetLastError();
        if (drv == 0) {
            set_why(why, why_len, "no CUDA driver found (no NVIDIA GPU or driver installed)");
        } else {
            set_why(why, why_len,
                    "CUDA driver too old: driver supports CUDA %d.%d, this build needs %d.%d",
                    drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
        }
        return CUDIS_E_NODEV;
    }
    if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
        (void)cudaGetLastError();
        set_why(why, why_len, "no CUDA device found");
        return CUDIS_E_NODEV;
    }
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        set_why(why, why_len, "CUDA initialisation failed: %s (%s)", cudaGetErrorName(e),
                cudaGetErrorString(e));
        return CUDIS_E_NODEV;
    }
    int first = want >= 0 ? want : 0;
    int last = want >= 0 ? want : n - 1;
    if (want >= n) {
        set_why(why, why_len, "CUDA device %d requested but only %d present", want, n);
        return CUDIS_E_NODEV;
    }
    char reason[512] = "";
    for (int d = first; d <= last; d++) {
        struct cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, d) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        if (cudaSetDevice(d) != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(reason, sizeof(reason), "device %d (%s) cannot be used", d, p.name);
            continue;
        }
        if (gpu_k_probe() != 0) {
            snprintf(reason, sizeof(reason),
                     "device %d (%s, compute capability %d.%d) is not supported by this build "
                     "(sm_90 code + compute_90 PTX; rebuild with -DCMAKE_CUDA_ARCHITECTURES)",
                     d, p.name, p.major, p.minor);
            continue;
        }
        *out = d;
        return 0;
    }
    set_why(why, why_len, "%s", reason[0] ? reason : "no usable CUDA device");
    return CUDIS_E_NODEV;
}

int gpu_engine_probe(int device, char *why, size_t why_len)
{
    int d = 0;
    int rc = pick_device(device, &d, why, why_len);
    if (rc == 0) {
        struct cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, d) == cudaSuccess) {
            set_why(why, why_len, "CUDA device %d: %s (compute capability %d.%d, %zu MiB)", d,
                    p.name, p.major, p.minor, (size_t)(p.totalGlobalMem >> 20));
        }
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Create / destroy
 * ---------------------------------------------------------------------- */

#define GPU_SLOT_MIN_CAP (1u << 20)
#define GPU_SCRATCH_MIN (1u << 20)
#define GPU_RESERVE_BYTES (256ull << 20) /* left free on the card: context, staging, others */
#define GPU_MIN_BUDGET (256ull << 10)

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static void slot_free_buffers(gpu_slot *s)
{
    if (s->h_buf != NULL) {
        (void)GPU_CK(cudaFreeHost(s->h_buf));
    }
    if (s->d_buf != NULL) {
        (void)GPU_CK(cudaFree(s->d_buf));
    }
    s->h_buf = NULL;
    s->d_buf = NULL;
    s->cap = 0;
}

static int slot_reserve(gpu_engine *g, gpu_slot *s, size_t need)
{
    if (s->cap >= need) {
        return 0;
    }
    size_t cap = align_up(need + need / 4, 1u << 20);
    pthread_mutex_lock(&g->lock);
    g->staging_bytes -= 2 * s->cap;
    pthread_mutex_unlock(&g->lock);
    slot_free_buffers(s);
    int rc = GPU_CK(cudaHostAlloc((void **)&s->h_buf, cap, cudaHostAllocDefault));
    if (rc == 0) {
        rc = GPU_CK(cudaMalloc((void **)&s->d_buf, cap));
    }
    if (rc != 0) {
        slot_free_buffers(s);
        return CUDIS_E_NOMEM;
    }
    s->cap = cap;
    pthread_mutex_lock(&g->lock);
    g->staging_bytes += 2 * cap;
    pthread_mutex_unlock(&g->lock);
    return 0;
}

static int scratch_reserve(gpu_engine *g, size_t need)
{
    if (g->scratch_cap >= need) {
        return 0;
    }
    size_t cap = align_up(need + need / 4, 1u << 20);
    if (g->h_scratch != NULL) {
        (void)GPU_CK(cudaFreeHost(g->h_scratch));
    }
    if (g->d_scratch != NULL) {
        (void)GPU_CK(cudaFree(g->d_scratch));
    }
    g->h_scratch = NULL;
    g->d_scratch = NULL;
    g->scratch_cap = 0;
    int rc = GPU_CK(cudaHostAlloc((void **)&g->h_scratch, cap, cudaHostAllocDefault));
    if (rc == 0) {
        rc = GPU_CK(cudaMalloc((void **)&g->d_scratch, cap));
    }
    if (rc != 0) {
        return CUDIS_E_NOMEM;
    }
    g->scratch_cap = cap;
    return 0;
}

gpu_engine *gpu_engine_create(const engine_config *cfg, char *why, size_t why_len)
{
    if (cfg == NULL) {
        set_why(why, why_len, "no configuration");
        return NULL;
    }
    engine_config c = *cfg;
    if (c.ways == 0) {
        c.ways = 8;
    }
    if (c.ways != 4 && c.ways != 8 && c.ways != 16) {
        set_why(why, why_len, "ways must be 4, 8 or 16 (got %u)", c.ways);
        return NULL;
    }
    if (c.max_key_len == 0) {
        c.max_key_len = 65535;
    }
    if (c.max_val_len == 0) {
        c.max_val_len = 1u << 20;
    }
    if (c.seed == 0) {
        c.seed = 0x9e3779b97f4a7c15ull;
    }
    int dev = 0;
    if (pick_device(c.device, &dev, why, why_len) != 0) {
        return NULL;
    }
    gpu_engine *g = calloc(1, sizeof(*g));
    if (g == NULL) {
        set_why(why, why_len, "out of host memory");
        return NULL;
    }
    g->cfg = c;
    g->device = dev;
    g->rand_state = 0x2545f4914f6cdd1dull ^ c.seed;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    pthread_mutex_init(&g->enq_lock, NULL);
    pthread_mutex_init(&g->ks_lock, NULL);

    struct cudaDeviceProp p;
    size_t free_b = 0, total_b = 0;
    if (GPU_CK(cudaSetDevice(dev)) != 0 || GPU_CK(cudaGetDeviceProperties(&p, dev)) != 0 ||
        GPU_CK(cudaMemGetInfo(&free_b, &total_b)) != 0) {
        set_why(why, why_len, "CUDA error while opening device %d: %s", dev, gpu_last_error());
        goto fail;
    }
    snprintf(g->dev_name, sizeof(g->dev_name), "%s", p.name);
    g->cc_major = p.major;
    g->cc_minor = p.minor;
    g->mem_total = total_b;

    /* Budget: what was asked, clamped to what the card has free. */
    uint64_t avail = free_b > GPU_RESERVE_BYTES ? (free_b - GPU_RESERVE_BYTES) / 20 * 19 : 0;
    uint64_t budget = c.memory_bytes ? c.memory_bytes : (64ull << 20);
    if (budget > avail) {
        if (avail < GPU_MIN_BUDGET) {
            set_why(why, why_len, "out of device memory: %zu MiB free of %zu MiB on %s",
                    free_b >> 20, total_b >> 20, g->dev_name);
            goto fail;
        }
        fprintf(stderr, "cudis gpu: memory budget %llu MiB clamped to %llu MiB (free on %s)\n",
                (unsigned long long)(budget >> 20), (unsigned long long)(avail >> 20), g->dev_name);
        budget = avail;
        g->clamped = true;
    }
    g->budget = budget;
    gpu_layout lay;
    const char *lwhy = NULL;
    if (gpu_layout_plan(&g->t, &lay, budget, c.ways, c.max_items, c.expected_item_bytes,
                        c.max_key_len, c.max_val_len, c.allow_empty_key, c.seed, &lwhy) != 0) {
        set_why(why, why_len, "%s (%llu bytes)", lwhy, (unsigned long long)budget);
        goto fail;
    }
    g->d_mem_bytes = lay.total;
    if (GPU_CK(cudaMalloc(&g->d_mem, g->d_mem_bytes)) != 0) {
        set_why(why, why_len, "out of device memory: cudaMalloc of %llu MiB failed on %s",
                (unsigned long long)(g->d_mem_bytes >> 20), g->dev_name);
        g->d_mem = NULL;
        goto fail;
    }
    gpu_layout_bind(&g->t, &lay, g->d_mem);
    if (GPU_CK(cudaMemset(g->d_mem, 0, g->d_mem_bytes)) != 0) {
        set_why(why, why_len, "CUDA error clearing device memory: %s", gpu_last_error());
        goto fail;
    }
    if (GPU_CK(cudaStreamCreateWithFlags(&g->aux, cudaStreamNonBlocking)) != 0 ||
        GPU_CK(cudaEventCreateWithFlags(&g->ev_dev, cudaEventDisableTiming)) != 0) {
        set_why(why, why_len, "CUDA error creating streams: %s", gpu_last_error());
        goto fail;
    }
    for (int i = 0; i < GPU_SLOTS; i++) {
        gpu_slot *s = &g->slot[i];
        if (GPU_CK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking)) != 0 ||
            GPU_CK(cudaEventCreate(&s->ev_k0)) != 0 || GPU_CK(cudaEventCreate(&s->ev_k1)) != 0 ||
            slot_reserve(g, s, GPU_SLOT_MIN_CAP) != 0) {
            set_why(why, why_len, "CUDA error creating staging buffers: %s", gpu_last_error());
            goto fail;
        }
    }
    if (scratch_reserve(g, GPU_SCRATCH_MIN) != 0) {
        set_why(why, why_len, "CUDA error creating scratch buffers: %s", gpu_last_error());
        goto fail;
    }
    set_why(why, why_len, "gpu: %s (device %d, compute capability %d.%d), %llu MiB of %zu MiB%s",
            g->dev_name, dev, p.major, p.minor, (unsigned long long)(budget >> 20), total_b >> 20,
            g->clamped ? " (clamped to free memory)" : "");
    return g;

fail:
    gpu_engine_destroy(g);
    return NULL;
}

void gpu_engine_destroy(gpu_engine *g)
{
    if (g == NULL) {
        return;
    }
    (void)cudaSetDevice(g->device);
    (void)cudaGetLastError();
    (void)cudaDeviceSynchronize();
    (void)cudaGetLastError();
    for (int i = 0; i < GPU_SLOTS; i++) {
        gpu_slot *s = &g->slot[i];
        slot_free_buffers(s);
        if (s->ev_k0 != NULL) {
            (void)GPU_CK(cudaEventDestroy(s->ev_k0));
        }
        if (s->ev_k1 != NULL) {
            (void)GPU_CK(cudaEventDestroy(s->ev_k1));
        }
        if (s->stream != NULL) {
            (void)GPU_CK(cudaStreamDestroy(s->stream));
        }
    }
    if (g->h_scratch != NULL) {
        (void)GPU_CK(cudaFreeHost(g->h_scratch));
    }
    if (g->d_scratch != NULL) {
        (void)GPU_CK(cudaFree(g->d_scratch));
    }
    if (g->ev_dev != NULL) {
        (void)GPU_CK(cudaEventDestroy(g->ev_dev));
    }
    if (g->aux != NULL) {
        (void)GPU_CK(cudaStreamDestroy(g->aux));
    }
    if (g->d_mem != NULL) {
        (void)GPU_CK(cudaFree(g->d_mem));
    }
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->enq_lock);
    pthread_mutex_destroy(&g->ks_lock);
    free(g);
}

/* ------------------------------------------------------------------------
 * Ordering: every launch waits for the previous one (under enq_lock)
 * ---------------------------------------------------------------------- */

/* Make `s` wait for the last launch and return the table for a new launch
 * (its own recency stamp). Caller holds enq_lock. */
static int order_begin(gpu_engine *g, cudaStream_t s, gpu_table *t)
{
    if (g->last_ev != NULL) {
        int rc = GPU_CK(cudaStreamWaitEvent(s, g->last_ev, 0));
        if (rc != 0) {
            return rc;
        }
    }
    *t = g->t;
    g->t.stamp++;
    if (g->t.stamp == 0) {
        g->t.stamp = 1;
    }
    return 0;
}

/* Record `ev` on `s` as the new last launch. Caller holds enq_lock. */
static int order_end(gpu_engine *g, cudaStream_t s, cudaEvent_t ev)
{
    int rc = GPU_CK(cudaEventRecord(ev, s));
    if (rc == 0) {
        g->last_ev = ev;
    }
    return rc;
}

/* Wait until all launches so far have finished (aux stream). */
static int drain(gpu_engine *g)
{
    int rc = 0;
    pthread_mutex_lock(&g->enq_lock);
    if (g->last_ev != NULL) {
        rc = GPU_CK(cudaEventSynchronize(g->last_ev));
    }
    pthread_mutex_unlock(&g->enq_lock);
    return rc;
}

int gpu_engine_sync(gpu_engine *g)
{
    if (g == NULL) {
        return CUDIS_E_INVAL;
    }
    if (GPU_CK(cudaSetDevice(g->device)) != 0) {
        return CUDIS_E_CUDA;
    }
    int rc = drain(g);
    if (rc == 0) {
        rc = GPU_CK(cudaDeviceSynchronize());
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Host batches through the staging slots
 * ---------------------------------------------------------------------- */

#define GPU_HDR_BYTES 128

/* Staging layout of one batch: [ops | in | hdr | res | out]. */
typedef struct stage_layout {
    size_t ops, in, hdr, res, out, total;
} stage_layout;

static stage_layout stage_plan(uint32_t n, uint64_t in_len, uint64_t out_cap)
{
    stage_layout l;
    l.ops = 0;
    l.in = align_up((uint64_t)n * sizeof(cudis_op), 16);
    l.hdr = align_up(l.in + in_len, 128);
    l.res = l.hdr + GPU_HDR_BYTES;
    l.out = align_up(l.res + (uint64_t)n * sizeof(cudis_result), 128);
    l.total = l.out + out_cap;
    return l;
}

/* A free staging slot; with wait = false, NULL when all are in flight. */
static gpu_slot *slot_acquire(gpu_engine *g, bool wait)
{
    pthread_mutex_lock(&g->lock);
    for (;;) {
        for (unsigned i = 0; i < GPU_SLOTS; i++) {
            gpu_slot *s = &g->slot[(g->next_slot + i) % GPU_SLOTS];
            if (!s->busy) {
                s->busy = true;
                g->next_slot = (g->next_slot + i + 1) % GPU_SLOTS;
                pthread_mutex_unlock(&g->lock);
                return s;
            }
        }
        if (!wait) {
            pthread_mutex_unlock(&g->lock);
            return NULL;
        }
        pthread_cond_wait(&g->cond, &g->lock);
    }
}

static void slot_release(gpu_engine *g, gpu_slot *s)
{
    pthread_mutex_lock(&g->lock);
    s->busy = false;
    pthread_cond_signal(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

/* Copy a batch into a slot and enqueue copy-in, kernel and copy-back. */
static int batch_submit(gpu_engine *g, cudis_batch *b, bool wait, gpu_slot **out)
{
    *out = NULL;
    if (g == NULL || b == NULL || (b->n_ops > 0 && (b->ops == NULL || b->res == NULL))) {
        return CUDIS_E_INVAL;
    }
    if (GPU_CK(cudaSetDevice(g->device)) != 0) {
        return CUDIS_E_CUDA;
    }
    /* Bytes of `in` the ops refer to. */
    uint64_t in_len = 0;
    for (uint32_t i = 0; i < b->n_ops; i++) {
        const cudis_op *op = &b->ops[i];
        uint64_t e = op->key_off + op->key_len;
        if (e > in_len) {
            in_len = e;
        }
        if (op->code == CUDIS_OP_SET || op->code == CUDIS_OP_APPEND ||
            op->code == CUDIS_OP_SETRANGE) {
            e = op->val_off + op->val_len;
            if (e > in_len) {
                in_len = e;
            }
        }
    }
    if (in_len > 0 && b->in == NULL) {
        return CUDIS_E_INVAL;
    }
    uint64_t out_cap = b->out != NULL ? b->out_cap : 0;
    stage_layout l = stage_plan(b->n_ops, in_len, out_cap);

    gpu_slot *s = slot_acquire(g, wait);
    if (s == NULL) {
        return CUDIS_E_BUSY;
    }
    int rc = slot_reserve(g, s, l.total);
    if (rc != 0) {
        slot_release(g, s);
        return rc;
    }
    s->batch = b;
    s->lay_hdr = l.hdr;
    s->lay_res = l.res;
    s->lay_out = l.out;
    s->out_cap = out_cap;
    if (b->n_ops == 0) {
        s->rc = 0;
        *out = s;
        return 0;
    }
    memcpy(s->h_buf + l.ops, b->ops, (size_t)b->n_ops * sizeof(cudis_op));
    if (in_len > 0) {
        memcpy(s->h_buf + l.in, b->in, in_len);
    }
    memset(s->h_buf + l.hdr, 0, GPU_HDR_BYTES);

    gpu_batch_args a;
    a.ops = (const cudis_op *)(s->d_buf + l.ops);
    a.in = s->d_buf + l.in;
    a.res = (cudis_result *)(s->d_buf + l.res);
    a.out = s->d_buf + l.out;
    a.out_cap = out_cap;
    a.out_len = (uint64_t *)(s->d_buf + l.hdr);
    a.n_ops = b->n_ops;
    a.now_ms = b->now_ms;

    gpu_table t;
    pthread_mutex_lock(&g->enq_lock);
    rc = GPU_CK(cudaMemcpyAsync(s->d_buf, s->h_buf, l.res, cudaMemcpyHostToDevice, s->stream));
    if (rc == 0) {
        rc = order_begin(g, s->stream, &t);
    }
    if (rc == 0) {
        rc = GPU_CK(cudaEventRecord(s->ev_k0, s->stream));
    }
    if (rc == 0) {
        rc = gpu_k_batch(&t, &a, s->stream);
    }
    if (rc == 0) {
        rc = order_end(g, s->stream, s->ev_k1);
    }
    if (rc == 0) {
        rc = GPU_CK(cudaMemcpyAsync(s->h_buf + l.hdr, s->d_buf + l.hdr, l.out - l.hdr,
                                    cudaMemcpyDeviceToHost, s->stream));
    }
    pthread_mutex_unlock(&g->enq_lock);
    s->rc = rc;
    *out = s;
    return 0;
}

/* Wait for a submitted batch, copy its results and values back, free the
 * slot. */
static int batch_complete(gpu_engine *g, gpu_slot *s)
{
    cudis_batch *b = s->batch;
    int rc = s->rc;
    if (b->n_ops == 0) {
        slot_release(g, s);
        return rc;
    }
    if (rc == 0) {
        rc = GPU_CK(cudaSetDevice(g->device));
    }
    if (rc == 0) {
        rc = GPU_CK(cudaStreamSynchronize(s->stream));
    }
    uint64_t out_len = 0;
    if (rc == 0) {
        memcpy(&out_len, s->h_buf + s->lay_hdr, sizeof(out_len));
        uint64_t n = out_len < s->out_cap ? out_len : s->out_cap;
        if (n > 0) {
            rc = GPU_CK(cudaMemcpyAsync(s->h_buf + s->lay_out, s->d_buf + s->lay_out, n,
                                        cudaMemcpyDeviceToHost, s->stream));
            if (rc == 0) {
                rc = GPU_CK(cudaStreamSynchronize(s->stream));
            }
            if (rc == 0) {
                memcpy(b->out, s->h_buf + s->lay_out, n);
            }
        }
    }
    float ms = 0;
    if (rc == 0) {
        memcpy(b->res, s->h_buf + s->lay_res, (size_t)b->n_ops * sizeof(cudis_result));
        b->out_len = out_len;
        if (cudaEventElapsedTime(&ms, s->ev_k0, s->ev_k1) != cudaSuccess) {
            (void)cudaGetLastError();
            ms = 0;
        }
    }
    pthread_mutex_lock(&g->lock);
    if (rc == 0) {
        g->batches++;
        g->batch_ops += b->n_ops;
        if (b->n_ops > g->batch_max_ops) {
            g->batch_max_ops = b->n_ops;
        }
        g->last_kernel_us = ms * 1000.0;
        g->kernel_us_total += ms * 1000.0;
    }
    pthread_mutex_unlock(&g->lock);
    s->batch = NULL;
    slot_release(g, s);
    return rc;
}

int gpu_engine_execute(gpu_engine *g, cudis_batch *b)
{
    if (b != NULL && b->n_ops == 0 && g != NULL) {
        return CUDIS_OK;
    }
    gpu_slot *s;
    int rc = batch_submit(g, b, true, &s);
    if (rc != 0) {
        return rc;
    }
    return batch_complete(g, s);
}

int gpu_engine_submit(gpu_engine *g, cudis_batch *batch, gpu_pending **pending)
{
    if (pending == NULL) {
        return CUDIS_E_INVAL;
    }
    gpu_slot *s;
    int rc = batch_submit(g, batch, false, &s);
    *pending = (gpu_pending *)s;
    return rc;
}

int gpu_engine_complete(gpu_engine *g, gpu_pending *pending)
{
    if (g == NULL || pending == NULL) {
        return CUDIS_E_INVAL;
    }
    return batch_complete(g, (gpu_slot *)pending);
}

double gpu_engine_last_kernel_us(gpu_engine *g)
{
    if (g == NULL) {
        return 0;
    }
    pthread_mutex_lock(&g->lock);
    double v = g->last_kernel_us;
    pthread_mutex_unlock(&g->lock);
    return v;
}

/* ------------------------------------------------------------------------
 * Device-pointer API
 * ---------------------------------------------------------------------- */

/* Whether p is device (or managed) memory of the engine's device. */
static bool is_device_ptr(const void *p)
{
    struct cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return at.type == cudaMemoryTypeDevice || at.type == cudaMemoryTypeManaged;
}

static int dev_launch_begin(gpu_engine *g, cudaStream_t s, gpu_table *t)
{
    if (GPU_CK(cudaSetDevice(g->device)) != 0) {
        return CUDIS_E_CUDA;
    }
    pthread_mutex_lock(&g->enq_lock);
    int rc = order_begin(g, s, t);
    if (rc != 0) {
        pthread_mutex_unlock(&g->enq_lock);
    }
    return rc;
}

static int dev_launch_end(gpu_engine *g, cudaStream_t s, int rc)
{
    if (rc == 0) {
        rc = order_end(g, s, g->ev_dev);
    }
    pthread_mutex_unlock(&g->enq_lock);
    return rc;
}

int gpu_engine_execute_dev(gpu_engine *g, const cudis_op *d_ops, uint32_t n_ops,
                           const uint8_t *d_in, cudis_result *d_res, uint8_t *d_out,
                           uint64_t out_cap, uint64_t *d_out_len, int64_t now_ms, void *stream)
{
    if (g == NULL || (n_ops > 0 && (d_ops == NULL || d_res == NULL || d_out_len == NULL))) {
        return CUDIS_E_INVAL;
    }
    if (n_ops == 0) {
        return CUDIS_OK;
    }
    if (!is_device_ptr(d_ops) || !is_device_ptr(d_res) || !is_device_ptr(d_out_len) ||
        (d_in != NULL && !is_device_ptr(d_in)) || (d_out != NULL && !is_device_ptr(d_out))) {
        return CUDIS_E_INVAL;
    }
    gpu_batch_args a;
    a.ops = d_ops;
    a.in = d_in;
    a.res = d_res;
    a.out = d_out;
    a.out_cap = d_out != NULL ? out_cap : 0;
    a.out_len = d_out_len;
    a.n_ops = n_ops;
    a.now_ms = now_ms;
    cudaStream_t s = (cudaStream_t)stream;
    gpu_table t;
    int rc = dev_launch_begin(g, s, &t);
    if (rc != 0) {
        return rc;
    }
    rc = gpu_k_batch(&t, &a, s);
    return dev_launch_end(g, s, rc);
}

static int check_fixed_keys(gpu_engine *g, const void *d_keys, uint32_t key_len)
{
    if (key_len == 0 || d_keys == NULL) {
        return CUDIS_E_INVAL;
    }
    if (key_len > g->t.max_key_len) {
        return CUDIS_E_KEYTOOBIG;
    }
    if (!is_device_ptr(d_keys)) {
        return CUDIS_E_INVAL;
    }
    return 0;
}

int gpu_engine_get_dev(gpu_engine *g, const void *d_keys, uint32_t key_len, uint32_t n,
                       void *d_vals, uint32_t val_stride, uint32_t *d_val_lens, uint32_t *d_miss,
                       uint32_t *d_n_miss, int64_t now_ms, void *stream)
{
    if (g == NULL || (d_miss == NULL) != (d_n_miss == NULL) || (d_vals == NULL && val_stride > 0)) {
        return CUDIS_E_INVAL;
    }
    if (n == 0) {
        return CUDIS_OK;
    }
    if (GPU_CK(cudaSetDevice(g->device)) != 0) {
        return CUDIS_E_CUDA;
    }
    int rc = check_fixed_keys(g, d_keys, key_len);
    if (rc != 0) {
        return rc;
    }
    if ((d_vals != NULL && !is_device_ptr(d_vals)) ||
        (d_val_lens != NULL && !is_device_ptr(d_val_lens)) ||
        (d_miss != NULL && (!is_device_ptr(d_miss) || !is_device_ptr(d_n_miss)))) {
        return CUDIS_E_INVAL;
    }
    gpu_fixed_args a;
    memset(&a, 0, sizeof(a));
    a.keys = d_keys;
    a.key_len = key_len;
    a.n = n;
    a.vals = d_vals;
    a.val_stride = d_vals != NULL ? val_stride : 0;
    a.val_lens = d_val_lens;
    a.miss = d_miss;
    a.n_miss = d_n_miss;
    a.now_ms = now_ms;
    cudaStream_t s = (cudaStream_t)stream;
    gpu_table t;
    rc = dev_launch_begin(g, s, &t);
    if (rc != 0) {
        return rc;
    }
    if (d_n_miss != NULL) {
        rc = GPU_CK(cudaMemsetAsync(d_n_miss, 0, sizeof(uint32_t), s));
    }
    if (rc == 0) {
        rc = gpu_k_get_fixed(&t, &a, s);
    }
    return dev_launch_end(g, s, rc);
}

int gpu_engine_set_dev(gpu_engine *g, const void *d_keys, uint32_t key_len, uint32_t n,
                       const void *d_vals, uint32_t val_len, int64_t expire_ms, int32_t *d_status,
                       int64_t now_ms, void *stream)
{
    if (g == NULL || (d_vals == NULL && val_len > 0)) {
        return CUDIS_E_INVAL;
    }
    if (n == 0) {
        return CUDIS_OK;
    }
    if (GPU_CK(cudaSetDevice(g->device)) != 0) {
        return CUDIS_E_CUDA;
    }
    int rc = check_fixed_keys(g, d_keys, key_len);
    if (rc != 0) {
        return rc;
    }
    if (val_len > g->t.max_val_len) {
        return CUDIS_E_VALTOOBIG;
    }
    if ((d_vals != NULL && !is_device_ptr(d_vals)) ||
        (d_status != NULL && !is_device_ptr(d_status))) {
        return CUDIS_E_INVAL;
    }
    gpu_fixed_args a;
    memset(&a, 0, sizeof(a));
    a.keys = d_keys;
    a.key_len = key_len;
    a.n = n;
    a.vals = (uint8_t *)d_vals;
    a.val_stride = val_len;
    a.status = d_status;
    a.expire_ms = expire_ms;
    a.now_ms = now_ms;
    cudaStream_t s = (cudaStream_t)stream;
    gpu_table t;
    rc = dev_launch_begin(g, s, &t);
    if (rc != 0) {
        return rc;
    }
    rc = gpu_k_set_fixed(&t, &a, s);
    return dev_launch_end(g, s, rc);
}

/* ------------------------------------------------------------------------
 * Whole-keyspace operations (between batches, on the aux stream)
 * ---------------------------------------------------------------------- */

/* Collect the keys of buckets [first, first + n) into h_scratch; returns the
 * bytes of records there (>= 0) or a negative code. */
static int64_t collect(gpu_engine *g, uint64_t first, uint64_t n, int64_t now_ms)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        uint64_t cap = g->scratch_cap - 8;
        gpu_table t;
        pthread_mutex_lock(&g->enq_lock);
        int rc = order_begin(g, g->aux, &t);
        if (rc == 0) {
            rc = GPU_CK(cudaMemsetAsync(g->d_scratch, 0, 8, g->aux));
        }
        if (rc == 0) {
            rc = gpu_k_collect(&t, first, n, now_ms, g->d_scratch + 8, cap,
                               (uint64_t *)g->d_scratch, g->aux);
        }
        if (rc == 0) {
            rc = order_end(g, g->aux, g->ev_dev);
        }
        pthread_mutex_unlock(&g->enq_lock);
        if (rc == 0) {
            rc = GPU_CK(
                cudaMemcpyAsync(g->h_scratch, g->d_scratch, 8, cudaMemcpyDeviceToHost, g->aux));
        }
        if (rc == 0) {
            rc = GPU_CK(cudaStreamSynchronize(g->aux));
        }
        if (rc != 0) {
            return rc;
        }
        uint64_t len;
        memcpy(&len, g->h_scratch, 8);
        if (len <= cap) {
            if (len > 0) {
                rc = GPU_CK(
                    cudaMemcpy(g->h_scratch + 8, g->d_scratch + 8, len, cudaMemcpyDeviceToHost));
                if (rc != 0) {
                    return rc;
                }
            }
            return (int64_t)len;
        }
        if (scratch_reserve(g, len + 8) != 0) {
            return CUDIS_E_NOMEM;
        }
    }
    return CUDIS_E_BUSY;
}

static int gpu_engine_scan_locked(gpu_engine *g, uint64_t cursor, uint32_t count, int64_t now_ms,
                                  cudis_scan_fn fn, void *arg, uint64_t *next)
{
    if (g == NULL || fn == NULL || next == NULL) {
        return CUDIS_E_INVAL;
    }
    if (GPU_CK(cudaSetDevice(g->device)) != 0) {
        return CUDIS_E_CUDA;
    }
    uint64_t nb = g->t.v.n_buckets;
    if (cursor >= nb) {
        *next = 0;
        return 0;
    }
    uint64_t n = count ? count : 1;
    if (n > nb - cursor) {
        n = nb - cursor;
    }
    int64_t len = collect(g, cursor, n, now_ms);
    if (len < 0) {
        return (int)len;
    }
    *next = cursor + n >= nb ? 0 : cursor + n;
    uint64_t at = 0;
    while (at + sizeof(gpu_key_rec) <= (uint64_t)len) {
        gpu_key_rec r;
        memcpy(&r, g->h_scratch + 8 + at, sizeof(r));
        if (r.rec_len == 0) {
            break;
        }
        if (fn(arg, g->h_scratch + 8 + at + sizeof(r), r.key_len, r.expire_ms) != 0) {
            break;
        }
        at += r.rec_len;
    }
    return 0;
}

static uint64_t rand_next(gpu_engine *g)
{
    pthread_mutex_lock(&g->lock);
    uint64_t x = g->rand_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    g->rand_state = x;
    pthread_mutex_unlock(&g->lock);
    return x;
}

static int read_counters(gpu_engine *g, gpu_counters *c)
{
    int rc = drain(g);
    if (rc == 0) {
        rc = GPU_CK(cudaMemcpy(c, g->t.cnt, sizeof(*c), cudaMemcpyDeviceToHost));
    }
    return rc;
}

static int gpu_engine_random_key_locked(gpu_engine *g, int64_t now_ms, uint8_t *buf, uint32_t cap,
                                        uint32_t *len)
{
    if (g == NULL || len == NULL || (buf == NULL && cap > 0)) {
        return CUDIS_E_INVAL;
    }
    if (GPU_CK(cudaSetDevice(g->device)) != 0) {
        return CUDIS_E_CUDA;
    }
    gpu_counters c;
    int rc = read_counters(g, &c);
    if (rc != 0) {
        return rc;
    }
    if (c.c[GPU_C_ITEMS] == 0) {
        return 0;
    }
    uint64_t nb = g->t.v.n_buckets;
    uint64_t window = 64;
    uint64_t covered = 0;
    uint64_t start = rand_next(g) % nb;
    while (covered < nb) {
        uint64_t n = window < nb - covered ? window : nb - covered;
        uint64_t first = (start + covered) % nb;
        if (n > nb - first) {
            n = nb - first;
        }
        int64_t got = collect(g, first, n, now_ms);
        if (got < 0) {
            return (int)got;
        }
        covered += n;
        if (got > 0) {
            /* count the records, pick one at random */
            uint32_t k = 0;
            for (uint64_t at = 0; at + sizeof(gpu_key_rec) <= (uint64_t)got;) {
                gpu_key_rec r;
                memcpy(&r, g->h_scratch + 8 + at, sizeof(r));
                if (r.rec_len == 0) {
                    break;
                }
                k++;
                at += r.rec_len;
            }
            uint32_t pick = k ? (uint32_t)(rand_next(g) % k) : 0;
            for (uint64_t at = 0; at + sizeof(gpu_key_rec) <= (uint64_t)got;) {
                gpu_key_rec r;
                memcpy(&r, g->h_scratch + 8 + at, sizeof(r));
                if (pick-- == 0) {
                    *len = r.key_len;
                    if (r.key_len > cap) {
                        return CUDIS_E_OUTBUF;
                    }
                    memcpy(buf, g->h_scratch + 8 + at + sizeof(r), r.key_len);
                    return 1;
                }
                at += r.rec_len;
            }
        }
        if (window < (1u << 20)) {
            window *= 4;
        }
    }
    return 0;
}

static int gpu_engine_flush_locked(gpu_engine *g)
{
    if (g == NULL) {
        return CUDIS_E_INVAL;
    }
    if (GPU_CK(cudaSetDevice(g->device)) != 0) {
        return CUDIS_E_CUDA;
    }
    int rc = drain(g);
    uint64_t index = (uint64_t)(g->t.v.arena - g->t.v.buckets);
    if (rc == 0) {
        rc = GPU_CK(cudaMemset(g->t.v.buckets, 0, index));
    }
    if (rc == 0) {
        rc = GPU_CK(cudaMemset(g->t.alloc, 0, sizeof(gpu_alloc)));
    }
    if (rc == 0) {
        rc = GPU_CK(cudaMemset(&g->t.cnt->c[GPU_C_ITEMS], 0,
                               sizeof(uint64_t) * (GPU_C_CHUNK_BYTES - GPU_C_ITEMS + 1)));
    }
    if (rc == 0) {
        rc = GPU_CK(cudaDeviceSynchronize());
    }
    return rc;
}

static int gpu_engine_sweep_locked(gpu_engine *g, int64_t now_ms, uint32_t max_work)
{
    if (g == NULL) {
        return CUDIS_E_INVAL;
    }
    if (GPU_CK(cudaSetDevice(g->device)) != 0) {
        return CUDIS_E_CUDA;
    }
    uint64_t nb = g->t.v.n_buckets;
    uint64_t first = g->sweep_cursor % nb;
    uint64_t n = max_work ? max_work : 1;
    if (n > nb - first) {
        n = nb - first;
    }
    gpu_table t;
    pthread_mutex_lock(&g->enq_lock);
    int rc = order_begin(g, g->aux, &t);
    if (rc == 0) {
        rc = GPU_CK(cudaMemsetAsync(g->d_scratch, 0, 8, g->aux));
    }
    if (rc == 0) {
        rc = gpu_k_sweep(&t, first, n, now_ms, (uint64_t *)g->d_scratch, g->aux);
    }
    if (rc == 0) {
        rc = order_end(g, g->aux, g->ev_dev);
    }
    pthread_mutex_unlock(&g->enq_lock);
    if (rc == 0) {
        rc = GPU_CK(cudaMemcpyAsync(g->h_scratch, g->d_scratch, 8, cudaMemcpyDeviceToHost, g->aux));
    }
    if (rc == 0) {
        rc = GPU_CK(cudaStreamSynchronize(g->aux));
    }
    if (rc != 0) {
        return rc;
    }
    g->sweep_cursor = (first + n) % nb;
    uint64_t count;
    memcpy(&count, g->h_scratch, 8);
    return count > (uint64_t)INT32_MAX ? INT32_MAX : (int)count;
}

/* The keyspace operations, one at a time (they share the scratch buffers). */
int gpu_engine_scan(gpu_engine *g, uint64_t cursor, uint32_t count, int64_t now_ms,
                    cudis_scan_fn fn, void *arg, uint64_t *next)
{
    if (g == NULL) {
        return CUDIS_E_INVAL;
    }
    pthread_mutex_lock(&g->ks_lock);
    int rc = gpu_engine_scan_locked(g, cursor, count, now_ms, fn, arg, next);
    pthread_mutex_unlock(&g->ks_lock);
    return rc;
}

int gpu_engine_random_key(gpu_engine *g, int64_t now_ms, uint8_t *buf, uint32_t cap, uint32_t *len)
{
    if (g == NULL) {
        return CUDIS_E_INVAL;
    }
    pthread_mutex_lock(&g->ks_lock);
    int rc = gpu_engine_random_key_locked(g, now_ms, buf, cap, len);
    pthread_mutex_unlock(&g->ks_lock);
    return rc;
}

int gpu_engine_sweep(gpu_engine *g, int64_t now_ms, uint32_t max_work)
{
    if (g == NULL) {
        return CUDIS_E_INVAL;
    }
    pthread_mutex_lock(&g->ks_lock);
    int rc = gpu_engine_sweep_locked(g, now_ms, max_work);
    pthread_mutex_unlock(&g->ks_lock);
    return rc;
}

int gpu_engine_flush(gpu_engine *g)
{
    if (g == NULL) {
        return CUDIS_E_INVAL;
    }
    pthread_mutex_lock(&g->ks_lock);
    int rc = gpu_engine_flush_locked(g);
    pthread_mutex_unlock(&g->ks_lock);
    return rc;
}

/* ------------------------------------------------------------------------
 * Statistics and INFO
 * ---------------------------------------------------------------------- */

static uint64_t meta_bytes(const gpu_engine *g)
{
    return g->d_mem_bytes - g->t.v.arena_bytes;
}

void gpu_engine_stats(gpu_engine *g, cudis_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (g == NULL) {
        return;
    }
    gpu_counters c;
    memset(&c, 0, sizeof(c));
    if (cudaSetDevice(g->device) != cudaSuccess || read_counters(g, &c) != 0) {
        (void)cudaGetLastError();
    }
    out->items = c.c[GPU_C_ITEMS];
    out->index_bytes = meta_bytes(g);
    out->bytes_used = out->index_bytes + c.c[GPU_C_CHUNK_BYTES];
    out->bytes_budget = g->budget;
    out->key_bytes = c.c[GPU_C_KEY_BYTES];
    out->value_bytes = c.c[GPU_C_VAL_BYTES];
    out->hits = c.c[GPU_C_HITS];
    out->misses = c.c[GPU_C_MISSES];
    out->evict_bucket = c.c[GPU_C_EVICT_BUCKET];
    out->evict_memory = c.c[GPU_C_EVICT_MEMORY];
    out->evict_expired = c.c[GPU_C_EVICT_EXPIRED];
    out->capacity = g->t.v.n_buckets * g->t.v.ways;
    out->load_factor = out->capacity ? (double)out->items / (double)out->capacity : 0;
}

void gpu_engine_reset_stats(gpu_engine *g)
{
    if (g == NULL || cudaSetDevice(g->device) != cudaSuccess || drain(g) != 0) {
        (void)cudaGetLastError();
        return;
    }
    (void)GPU_CK(cudaMemset(g->t.cnt, 0, sizeof(uint64_t) * (GPU_C_EVICT_EXPIRED + 1)));
    (void)GPU_CK(cudaMemset(&g->t.cnt->c[GPU_C_FULL], 0, sizeof(uint64_t)));
    (void)GPU_CK(cudaDeviceSynchronize());
    pthread_mutex_lock(&g->lock);
    g->batches = 0;
    g->batch_ops = 0;
    g->batch_max_ops = 0;
    g->kernel_us_total = 0;
    pthread_mutex_unlock(&g->lock);
}

size_t gpu_engine_info(gpu_engine *g, char *buf, size_t cap)
{
    if (g == NULL) {
        return 0;
    }
    cudis_stats st;
    gpu_engine_stats(g, &st);
    gpu_counters c;
    memset(&c, 0, sizeof(c));
    if (read_counters(g, &c) != 0) {
        (void)cudaGetLastError();
    }
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
    }
    uint64_t bump = 0;
    if (cudaMemcpy(&bump, &g->t.alloc->bump, sizeof(bump), cudaMemcpyDeviceToHost) != cudaSuccess) {
        (void)cudaGetLastError();
    }
    pthread_mutex_lock(&g->lock);
    uint64_t batches = g->batches, ops = g->batch_ops, maxops = g->batch_max_ops;
    double kus = g->kernel_us_total, last = g->last_kernel_us;
    uint64_t staging = g->staging_bytes + 2 * g->scratch_cap;
    pthread_mutex_unlock(&g->lock);
    if (bump > g->t.v.arena_bytes) {
        bump = g->t.v.arena_bytes;
    }
    int n = snprintf(buf, cap,
                     "gpu_device:%s\r\n"
                     "gpu_device_ordinal:%d\r\n"
                     "gpu_compute_capability:%d.%d\r\n"
                     "gpu_memory_total:%zu\r\n"
                     "gpu_memory_free:%zu\r\n"
                     "gpu_memory_budget:%llu\r\n"
                     "gpu_memory_budget_clamped:%d\r\n"
                     "gpu_memory_cache:%llu\r\n"
                     "gpu_memory_index:%llu\r\n"
                     "gpu_memory_arena:%llu\r\n"
                     "gpu_memory_arena_carved:%llu\r\n"
                     "gpu_memory_staging:%llu\r\n"
                     "gpu_buckets:%llu\r\n"
                     "gpu_ways:%u\r\n"
                     "gpu_size_classes:%u\r\n"
                     "gpu_page_bytes:%u\r\n"
                     "gpu_batches:%llu\r\n"
                     "gpu_batch_ops_avg:%.1f\r\n"
                     "gpu_batch_ops_max:%llu\r\n"
                     "gpu_kernel_us_per_batch:%.2f\r\n"
                     "gpu_kernel_us_last:%.2f\r\n"
                     "gpu_writes_full:%llu\r\n"
                     "gpu_last_cuda_error:%s\r\n",
                     g->dev_name, g->device, g->cc_major, g->cc_minor, total_b, free_b,
                     (unsigned long long)g->budget, g->clamped ? 1 : 0,
                     (unsigned long long)st.bytes_used, (unsigned long long)st.index_bytes,
                     (unsigned long long)g->t.v.arena_bytes, (unsigned long long)bump,
                     (unsigned long long)staging, (unsigned long long)g->t.v.n_buckets, g->t.v.ways,
                     g->t.n_classes, g->t.page_bytes, (unsigned long long)batches,
                     batches ? (double)ops / (double)batches : 0.0, (unsigned long long)maxops,
                     batches ? kus / (double)batches : 0.0, last,
                     (unsigned long long)c.c[GPU_C_FULL], gpu_last_error());
    return n < 0 ? 0 : (size_t)n;
}
