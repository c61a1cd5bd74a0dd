/*
 * gpu_engine.c - host side of the CUDA engine: device choice and lazy CUDA
 * initialisation, laying the table out in device memory (cuckoo/
 * ccht_geom.h), the pinned staging slots and streams of the host-batch
 * pipeline, the device-pointer API, whole-keyspace operations, statistics,
 * INFO, and what happens when the device fails.
 *
 * Plain C over the CUDA runtime API; the kernels are in gpu_kernels.cu.
 * Every CUDA call goes through GPU_CK (gpu_internal.h).
 *
 * Faults. After creation, an allocation that fails is CUDIS_E_NOMEM (the
 * engine goes on); any other CUDA error, or a launch still running after
 * the watchdog (cfg.watchdog_ms), marks the engine failed: the reason is
 * kept (gpu_engine_failure, INFO), every later call returns
 * CUDIS_E_DEVFAIL without touching CUDA, and destroy frees host memory
 * only (device resources go with the process: freeing them could wait for
 * a hung kernel). No call ever waits on the device without a deadline:
 * completions are polled (cudaEventQuery), device memory is allocated and
 * freed stream-ordered, and outgrown pinned buffers are freed at destroy.
 */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudis_time.h"
#include "gpu_internal.h"

#define GPU_WATCHDOG_MS_DEFAULT 10000u

/* ------------------------------------------------------------------------
 * Errors and fault injection
 * ---------------------------------------------------------------------- */

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static char err_text[256];

/* injection: fail the n-th checked call from now (0 = off), hang the
 * n-th wait from now */
static int fault_calls, fault_waits;

int gpu_fault_filter(int err)
{
    if (__atomic_load_n(&fault_calls, __ATOMIC_RELAXED) > 0 &&
        __atomic_sub_fetch(&fault_calls, 1, __ATOMIC_RELAXED) == 0) {
        return (int)cudaErrorIllegalAddress;
    }
    return err;
}

static bool fault_hang(void)
{
    return __atomic_load_n(&fault_waits, __ATOMIC_RELAXED) > 0 &&
           __atomic_sub_fetch(&fault_waits, 1, __ATOMIC_RELAXED) == 0;
}

void gpu_engine_inject_fault(int nth_call, int nth_wait)
{
    __atomic_store_n(&fault_calls, nth_call > 0 ? nth_call : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fault_waits, nth_wait > 0 ? nth_wait : 0, __ATOMIC_RELAXED);
}

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

static bool is_failed(gpu_engine *g)
{
    return __atomic_load_n(&g->failed, __ATOMIC_ACQUIRE) != 0;
}

/* Mark the engine failed (the first reason stays); returns CUDIS_E_DEVFAIL. */
static int engine_fail(gpu_engine *g, const char *fmt, ...)
{
    pthread_mutex_lock(&err_lock);
    if (!g->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g->fail_why, sizeof(g->fail_why), fmt, ap);
        va_end(ap);
        fprintf(stderr, "cudis gpu: engine failed on %s: %s\n", g->dev_name, g->fail_why);
        __atomic_store_n(&g->failed, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&err_lock);
    return CUDIS_E_DEVFAIL;
}

/* A CUDA step of normal operation: rc from GPU_CK; any failure fails the
 * engine. */
static int op_ck(gpu_engine *g, int rc)
{
    return rc == 0 ? 0 : engine_fail(g, "CUDA error: %s", gpu_last_error());
}

#define OP_CK(g, expr) op_ck((g), GPU_CK(expr))

const char *gpu_engine_failure(gpu_engine *g)
{
    return g != NULL && is_failed(g) ? g->fail_why : NULL;
}

/* Wait for an event with the watchdog's deadline, polling (never blocks in
 * CUDA). 0, or the engine fails. */
static int wait_event(gpu_engine *g, cudaEvent_t ev)
{
    uint64_t deadline = cudis_mono_ns() + g->watchdog_ns;
    bool hang = fault_hang();
    for (unsigned n = 0;; n++) {
        cudaError_t e = hang ? cudaErrorNotReady : cudaEventQuery(ev);
        if (e == cudaSuccess) {
            return 0;
        }
        if (e != cudaErrorNotReady) {
            (void)cudaGetLastError();
            return engine_fail(g, "device error: %s (%s)", cudaGetErrorName(e),
                               cudaGetErrorString(e));
        }
        if (cudis_mono_ns() > deadline) {
            return engine_fail(g, "a launch ran past the %llu ms watchdog",
                               (unsigned long long)(g->watchdog_ns / 1000000));
        }
        if (n < 200) {
            sched_yield();
        } else {
            struct timespec ts = {0, n < 2000 ? 10000 : 200000};
            nanosleep(&ts, NULL);
        }
    }
}

/* Record ev on s and wait for it. */
static int wait_stream(gpu_engine *g, cudaStream_t s, cudaEvent_t ev)
{
    int rc = OP_CK(g, cudaEventRecord(ev, s));
    return rc == 0 ? wait_event(g, ev) : rc;
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
 * Buffers
 * ---------------------------------------------------------------------- */

#define GPU_SLOT_MIN_CAP (1u << 20)
#define GPU_SCRATCH_MIN (1u << 20)
#define GPU_RESERVE_BYTES (256ull << 20) /* left free on the card: context, staging, others */
#define GPU_MIN_BUDGET (256ull << 10)

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

/* Keep an outgrown pinned buffer until destroy (freeing it now could wait
 * for the device); when the list is full, free it after all. */
static void retire_host(gpu_engine *g, void *h)
{
    if (h == NULL) {
        return;
    }
    pthread_mutex_lock(&g->lock);
    bool kept = g->n_retired < GPU_RETIRED;
    if (kept) {
        g->retired[g->n_retired++] = h;
    }
    pthread_mutex_unlock(&g->lock);
    if (!kept) {
        (void)GPU_CK(cudaFreeHost(h));
    }
}

/* A pinned host buffer and a device buffer of at least `need` bytes, the
 * device one stream-ordered on s. On failure the old ones stay. */
static int buffers_reserve(gpu_engine *g, cudaStream_t s, uint8_t **h, uint8_t **d, size_t *cap,
                           size_t need)
{
    if (*cap >= need) {
        return 0;
    }
    size_t ncap = align_up(need > *cap * 2 ? need : *cap * 2, 1u << 20);
    uint8_t *nh = NULL, *nd = NULL;
    if (GPU_CK(cudaHostAlloc((void **)&nh, ncap, cudaHostAllocDefault)) != 0) {
        return CUDIS_E_NOMEM;
    }
    if (GPU_CK(cudaMallocAsync((void **)&nd, ncap, s)) != 0) {
        retire_host(g, nh);
        return CUDIS_E_NOMEM;
    }
    if (*d != NULL && GPU_CK(cudaFreeAsync(*d, s)) != 0) {
        return engine_fail(g, "CUDA error: %s", gpu_last_error());
    }
    retire_host(g, *h);
    pthread_mutex_lock(&g->lock);
    g->staging_bytes += 2 * (ncap - *cap);
    pthread_mutex_unlock(&g->lock);
    *h = nh;
    *d = nd;
    *cap = ncap;
    return 0;
}

static int slot_reserve(gpu_engine *g, gpu_slot *s, size_t need)
{
    return buffers_reserve(g, s->stream, &s->h_buf, &s->d_buf, &s->cap, need);
}

static int scratch_reserve(gpu_engine *g, size_t need)
{
    return buffers_reserve(g, g->aux, &g->h_scratch, &g->d_scratch, &g->scratch_cap, need);
}

/* ------------------------------------------------------------------------
 * Create / destroy
 * ---------------------------------------------------------------------- */

static int upload_meta(gpu_engine *g)
{
    uint8_t *d_meta = (uint8_t *)g->d_mem + g->geom.meta_off;
    return GPU_CK(cudaMemcpy(d_meta, g->meta_image, g->geom.meta_bytes, cudaMemcpyHostToDevice));
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
    if (c.max_key_len == 0) {
        c.max_key_len = 65535;
    }
    if (c.max_key_len > CCHT_ITEM_KLEN_MASK) {
        c.max_key_len = CCHT_ITEM_KLEN_MASK;
    }
    if (c.max_val_len == 0) {
        c.max_val_len = 1u << 20;
    }
    if (c.seed == 0) {
        c.seed = 0x9e3779b97f4a7c15ull;
    }
    if (c.watchdog_ms == 0) {
        c.watchdog_ms = GPU_WATCHDOG_MS_DEFAULT;
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
    g->watchdog_ns = (uint64_t)c.watchdog_ms * 1000000ull;
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
    const char *gwhy = NULL;
    if (ccht_geom_plan(&g->geom, budget, c.max_items, c.ways, c.expected_item_bytes, &gwhy) != 0) {
        set_why(why, why_len, "%s (%llu bytes)", gwhy, (unsigned long long)budget);
        goto fail;
    }
    g->meta_image = calloc(1, g->geom.meta_bytes);
    if (g->meta_image == NULL) {
        set_why(why, why_len, "out of host memory");
        goto fail;
    }
    ccht_geom_meta_init(&g->geom, g->meta_image, false);
    if (GPU_CK(cudaMalloc(&g->d_mem, g->geom.total)) != 0) {
        set_why(why, why_len, "out of device memory: cudaMalloc of %llu MiB failed on %s",
                (unsigned long long)(g->geom.total >> 20), g->dev_name);
        g->d_mem = NULL;
        goto fail;
    }
    ccht_geom_bind(&g->geom, &g->t, g->d_mem, c.max_key_len, c.max_val_len, c.allow_empty_key,
                   c.seed);
    if (gpu_engine_set_policy(g, c.policy, c.lfu_log_factor, c.lfu_decay_time) != 0) {
        set_why(why, why_len, "unknown eviction policy %u", c.policy);
        goto fail;
    }
    if (GPU_CK(cudaMemset(g->d_mem, 0, g->geom.index_bytes)) != 0 || upload_meta(g) != 0) {
        set_why(why, why_len, "CUDA error clearing device memory: %s", gpu_last_error());
        goto fail;
    }
    if (GPU_CK(cudaStreamCreateWithFlags(&g->aux, cudaStreamNonBlocking)) != 0 ||
        GPU_CK(cudaEventCreateWithFlags(&g->ev_dev, cudaEventDisableTiming)) != 0 ||
        GPU_CK(cudaEventCreateWithFlags(&g->ev_aux, cudaEventDisableTiming)) != 0) {
        set_why(why, why_len, "CUDA error creating streams: %s", gpu_last_error());
        goto fail;
    }
    for (int i = 0; i < GPU_SLOTS; i++) {
        gpu_slot *s = &g->slot[i];
        if (GPU_CK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking)) != 0 ||
            GPU_CK(cudaEventCreate(&s->ev_k0)) != 0 || GPU_CK(cudaEventCreate(&s->ev_k1)) != 0 ||
            GPU_CK(cudaEventCreateWithFlags(&s->ev_done, cudaEventDisableTiming)) != 0 ||
            slot_reserve(g, s, GPU_SLOT_MIN_CAP) != 0) {
            set_why(why, why_len, "CUDA error creating staging buffers: %s", gpu_last_error());
            goto fail;
        }
    }
    if (scratch_reserve(g, GPU_SCRATCH_MIN) != 0 || GPU_CK(cudaDeviceSynchronize()) != 0) {
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
    if (!is_failed(g)) {
        (void)cudaSetDevice(g->device);
        (void)cudaGetLastError();
        (void)cudaDeviceSynchronize();
        (void)cudaGetLastError();
        for (int i = 0; i < GPU_SLOTS; i++) {
            gpu_slot *s = &g->slot[i];
            if (s->h_buf != NULL) {
                (void)GPU_CK(cudaFreeHost(s->h_buf));
            }
            if (s->d_buf != NULL) {
                (void)GPU_CK(cudaFree(s->d_buf));
            }
            if (s->ev_k0 != NULL) {
                (void)GPU_CK(cudaEventDestroy(s->ev_k0));
            }
            if (s->ev_k1 != NULL) {
                (void)GPU_CK(cudaEventDestroy(s->ev_k1));
            }
            if (s->ev_done != NULL) {
                (void)GPU_CK(cudaEventDestroy(s->ev_done));
            }
            if (s->stream != NULL) {
                (void)GPU_CK(cudaStreamDestroy(s->stream));
            }
        }
        for (unsigned i = 0; i < g->n_retired; i++) {
            (void)GPU_CK(cudaFreeHost(g->retired[i]));
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
        if (g->ev_aux != NULL) {
            (void)GPU_CK(cudaEventDestroy(g->ev_aux));
        }
        if (g->aux != NULL) {
            (void)GPU_CK(cudaStreamDestroy(g->aux));
        }
        if (g->d_mem != NULL) {
            (void)GPU_CK(cudaFree(g->d_mem));
        }
    }
    free(g->meta_image);
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->enq_lock);
    pthread_mutex_destroy(&g->ks_lock);
    free(g);
}

/* ------------------------------------------------------------------------
 * Ordering: every launch waits for the previous one (under enq_lock)
 * ---------------------------------------------------------------------- */

/* Make `s` wait for the last launch and fill the launch's stamps and clamp
 * work for n ops. Caller holds enq_lock. */
static int order_begin(gpu_engine *g, cudaStream_t s, uint64_t n, gpu_launch *l)
{
    if (g->last_ev != NULL) {
        int rc = OP_CK(g, cudaStreamWaitEvent(s, g->last_ev, 0));
        if (rc != 0) {
            return rc;
        }
    }
    gpu_launch_at(g->clock, n, g->t.v.n_buckets, l);
    if (ccht_policy_lfu(ccht_policy_of(&g->t))) {
        l->clamp_n = 0; /* the stamps hold LFU counters */
    }
    __atomic_store_n(&g->clock, g->clock + n, __ATOMIC_RELAXED); /* gpu_engine_clock reads it */
    return 0;
}

/* Record `ev` on `s` as the new last launch. Caller holds enq_lock. */
static int order_end(gpu_engine *g, cudaStream_t s, cudaEvent_t ev)
{
    int rc = OP_CK(g, cudaEventRecord(ev, s));
    if (rc == 0) {
        g->last_ev = ev;
    }
    return rc;
}

/* Make the aux stream wait for every launch so far. */
static int aux_after_launches(gpu_engine *g)
{
    int rc = 0;
    pthread_mutex_lock(&g->enq_lock);
    if (g->last_ev != NULL) {
        rc = OP_CK(g, cudaStreamWaitEvent(g->aux, g->last_ev, 0));
    }
    pthread_mutex_unlock(&g->enq_lock);
    return rc;
}

/* Wait until every launch so far has finished (caller holds ks_lock). */
static int drain(gpu_engine *g)
{
    int rc = aux_after_launches(g);
    return rc == 0 ? wait_stream(g, g->aux, g->ev_aux) : rc;
}

/* Copy n bytes of device memory to host memory after every launch so far
 * (caller holds ks_lock; n <= scratch). */
static int read_device(gpu_engine *g, void *dst, const void *d_src, size_t n)
{
    int rc = aux_after_launches(g);
    if (rc == 0) {
        rc = OP_CK(g, cudaMemcpyAsync(g->h_scratch, d_src, n, cudaMemcpyDeviceToHost, g->aux));
    }
    if (rc == 0) {
        rc = wait_stream(g, g->aux, g->ev_aux);
    }
    if (rc == 0) {
        memcpy(dst, g->h_scratch, n);
    }
    return rc;
}

/* Entry checks of every call: engine alive, device current. */
static int enter(gpu_engine *g)
{
    if (g == NULL) {
        return CUDIS_E_INVAL;
    }
    if (is_failed(g)) {
        return CUDIS_E_DEVFAIL;
    }
    return OP_CK(g, cudaSetDevice(g->device));
}

int gpu_engine_sync(gpu_engine *g)
{
    int rc = enter(g);
    if (rc != 0) {
        return rc;
    }
    pthread_mutex_lock(&g->ks_lock);
    rc = drain(g);
    pthread_mutex_unlock(&g->ks_lock);
    return rc;
}

/* ------------------------------------------------------------------------
 * Host batches through the staging slots
 * ---------------------------------------------------------------------- */

#define GPU_HDR_BYTES 128
#define GPU_HDR_EV 64 /* where in hdr (and in the sweep's scratch) the sink's mirror sits */

_Static_assert(GPU_HDR_EV + sizeof(cudis_evbuf) <= GPU_HDR_BYTES, "the mirror fits the header");

/* Staging layout of one batch: [ops | in | hdr | res | out | ev]. */
typedef struct stage_layout {
    size_t ops, in, hdr, res, out, ev, total;
} stage_layout;

static stage_layout stage_plan(uint32_t n, uint64_t in_len, uint64_t out_cap, uint64_t ev_bytes)
{
    stage_layout l;
    l.ops = 0;
    l.in = align_up((uint64_t)n * sizeof(cudis_op), 16);
    l.hdr = align_up(l.in + in_len, 128);
    l.res = l.hdr + GPU_HDR_BYTES;
    l.out = align_up(l.res + (uint64_t)n * sizeof(cudis_result), 128);
    l.ev = align_up(l.out + out_cap, 16);
    l.total = l.ev + ev_bytes;
    return l;
}

/* Copy the used part of a finished device mirror m (its area at offset
 * `area` of d, the same offset of h) to h. Enqueued on s; does not wait. */
static int ev_fetch(gpu_engine *g, const cudis_evbuf *m, uint8_t *h, const uint8_t *d, size_t area,
                    cudaStream_t s)
{
    uint64_t nr = (uint64_t)gpu_ev_used_recs(m) * sizeof(cudis_event), nk = gpu_ev_used_keys(m);
    uint64_t koff = area + (uint64_t)m->cap * sizeof(cudis_event);
    int rc = 0;
    if (nr > 0) {
        rc = OP_CK(g, cudaMemcpyAsync(h + area, d + area, nr, cudaMemcpyDeviceToHost, s));
    }
    if (rc == 0 && nk > 0) {
        rc = OP_CK(g, cudaMemcpyAsync(h + koff, d + koff, nk, cudaMemcpyDeviceToHost, s));
    }
    return rc;
}

/* After ev_fetch completed: append the mirror's events to the host sink. */
static void ev_finish(const cudis_evbuf *m, cudis_evbuf *hev, const uint8_t *h, size_t area)
{
    gpu_ev_merge(hev, m, (const cudis_event *)(h + area),
                 h + area + (uint64_t)m->cap * sizeof(cudis_event));
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

/* Bytes of `in` a batch's ops refer to (0 when it has none). */
static uint64_t batch_in_len(const cudis_batch *b)
{
    uint64_t in_len = 0;
    for (uint32_t i = 0; i < b->n_ops; i++) {
        const cudis_op *op = &b->ops[i];
        uint64_t e = op->key_off + op->key_len;
        if (e > in_len) {
            in_len = e;
        }
        if (cudis_op_has_val(op->code)) {
            e = op->val_off + op->val_len;
            if (e > in_len) {
                in_len = e;
            }
        }
    }
    return in_len;
}

/* Copy a batch into a slot and enqueue copy-in, kernel and copy-back. */
static int batch_submit(gpu_engine *g, cudis_batch *b, bool wait, gpu_slot **out)
{
    *out = NULL;
    if (g == NULL || b == NULL || (b->n_ops > 0 && (b->ops == NULL || b->res == NULL))) {
        return CUDIS_E_INVAL;
    }
    int rc = enter(g);
    if (rc != 0) {
        return rc;
    }
    uint64_t in_len = batch_in_len(b);
    if (in_len > 0 && b->in == NULL) {
        return CUDIS_E_INVAL;
    }
    uint64_t out_cap = b->out != NULL ? b->out_cap : 0;
    cudis_evbuf mirror;
    uint64_t ev_bytes = 0;
    if (b->ev != NULL) {
        gpu_ev_mirror(b->ev, &mirror, NULL);
        ev_bytes = gpu_ev_area_bytes(&mirror);
    }
    stage_layout l = stage_plan(b->n_ops, in_len, out_cap, ev_bytes);

    gpu_slot *s = slot_acquire(g, wait);
    if (s == NULL) {
        return CUDIS_E_BUSY;
    }
    rc = slot_reserve(g, s, l.total);
    if (rc != 0) {
        slot_release(g, s);
        return rc;
    }
    s->batch = b;
    s->lay_hdr = l.hdr;
    s->lay_res = l.res;
    s->lay_out = l.out;
    s->lay_ev = l.ev;
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
    if (b->ev != NULL) {
        gpu_ev_mirror(b->ev, &mirror, s->d_buf + l.ev); /* copied in with the header */
        memcpy(s->h_buf + l.hdr + GPU_HDR_EV, &mirror, sizeof(mirror));
    }

    gpu_batch_args a;
    memset(&a, 0, sizeof(a));
    a.ops = (const cudis_op *)(s->d_buf + l.ops);
    a.in = s->d_buf + l.in;
    a.in_len = in_len;
    a.res = (cudis_result *)(s->d_buf + l.res);
    a.out = s->d_buf + l.out;
    a.out_cap = out_cap;
    a.out_len = (uint64_t *)(s->d_buf + l.hdr);
    a.n_ops = b->n_ops;
    a.now_ms = b->now_ms;
    a.ev = b->ev != NULL ? (cudis_evbuf *)(s->d_buf + l.hdr + GPU_HDR_EV) : NULL;

    pthread_mutex_lock(&g->enq_lock);
    rc = OP_CK(g, cudaMemcpyAsync(s->d_buf, s->h_buf, l.res, cudaMemcpyHostToDevice, s->stream));
    if (rc == 0) {
        rc = order_begin(g, s->stream, b->n_ops, &a.l);
    }
    if (rc == 0) {
        rc = OP_CK(g, cudaEventRecord(s->ev_k0, s->stream));
    }
    if (rc == 0) {
        rc = op_ck(g, gpu_k_batch(&g->t, &a, s->stream));
    }
    if (rc == 0) {
        rc = order_end(g, s->stream, s->ev_k1);
    }
    if (rc == 0) {
        rc = OP_CK(g, cudaMemcpyAsync(s->h_buf + l.hdr, s->d_buf + l.hdr, l.out - l.hdr,
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
        rc = is_failed(g) ? CUDIS_E_DEVFAIL : OP_CK(g, cudaSetDevice(g->device));
    }
    if (rc == 0) {
        rc = wait_stream(g, s->stream, s->ev_done);
    }
    uint64_t out_len = 0;
    cudis_evbuf mirror;
    if (rc == 0) {
        memcpy(&out_len, s->h_buf + s->lay_hdr, sizeof(out_len));
        memcpy(&mirror, s->h_buf + s->lay_hdr + GPU_HDR_EV, sizeof(mirror));
        uint64_t n = out_len < s->out_cap ? out_len : s->out_cap;
        bool more = n > 0 || (b->ev != NULL && mirror.len > 0);
        if (n > 0) {
            rc = OP_CK(g, cudaMemcpyAsync(s->h_buf + s->lay_out, s->d_buf + s->lay_out, n,
                                          cudaMemcpyDeviceToHost, s->stream));
        }
        if (rc == 0 && b->ev != NULL) {
            rc = ev_fetch(g, &mirror, s->h_buf, s->d_buf, s->lay_ev, s->stream);
        }
        if (rc == 0 && more) {
            rc = wait_stream(g, s->stream, s->ev_done);
        }
        if (rc == 0 && n > 0) {
            memcpy(b->out, s->h_buf + s->lay_out, n);
        }
        if (rc == 0 && b->ev != NULL) {
            ev_finish(&mirror, b->ev, s->h_buf, s->lay_ev);
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
        return is_failed(g) ? CUDIS_E_DEVFAIL : CUDIS_OK;
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

static int dev_launch_begin(gpu_engine *g, cudaStream_t s, uint64_t n, gpu_launch *l)
{
    pthread_mutex_lock(&g->enq_lock);
    int rc = order_begin(g, s, n, l);
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
                           const uint8_t *d_in, uint64_t in_len, cudis_result *d_res,
                           uint8_t *d_out, uint64_t out_cap, uint64_t *d_out_len, int64_t now_ms,
                           void *stream)
{
    if (g == NULL || (n_ops > 0 && (d_ops == NULL || d_res == NULL || d_out_len == NULL)) ||
        (d_in == NULL && in_len > 0) || (d_out == NULL && out_cap > 0)) {
        return CUDIS_E_INVAL;
    }
    int rc = enter(g);
    if (rc != 0 || n_ops == 0) {
        return rc;
    }
    if (!is_device_ptr(d_ops) || !is_device_ptr(d_res) || !is_device_ptr(d_out_len) ||
        (d_in != NULL && !is_device_ptr(d_in)) || (d_out != NULL && !is_device_ptr(d_out))) {
        return CUDIS_E_INVAL;
    }
    gpu_batch_args a;
    memset(&a, 0, sizeof(a));
    a.ops = d_ops;
    a.in = d_in;
    a.in_len = d_in != NULL ? in_len : 0;
    a.res = d_res;
    a.out = d_out;
    a.out_cap = d_out != NULL ? out_cap : 0;
    a.out_len = d_out_len;
    a.n_ops = n_ops;
    a.now_ms = now_ms;
    cudaStream_t s = (cudaStream_t)stream;
    rc = dev_launch_begin(g, s, n_ops, &a.l);
    if (rc != 0) {
        return rc;
    }
    rc = op_ck(g, gpu_k_batch(&g->t, &a, s));
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
    int rc = enter(g);
    if (rc != 0 || n == 0) {
        return rc;
    }
    rc = check_fixed_keys(g, d_keys, key_len);
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
    rc = dev_launch_begin(g, s, n, &a.l);
    if (rc != 0) {
        return rc;
    }
    if (d_n_miss != NULL) {
        rc = OP_CK(g, cudaMemsetAsync(d_n_miss, 0, sizeof(uint32_t), s));
    }
    if (rc == 0) {
        rc = op_ck(g, gpu_k_get_fixed(&g->t, &a, s));
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
    int rc = enter(g);
    if (rc != 0 || n == 0) {
        return rc;
    }
    rc = check_fixed_keys(g, d_keys, key_len);
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
    rc = dev_launch_begin(g, s, n, &a.l);
    if (rc != 0) {
        return rc;
    }
    rc = op_ck(g, gpu_k_set_fixed(&g->t, &a, s));
    return dev_launch_end(g, s, rc);
}

/* ------------------------------------------------------------------------
 * Whole-keyspace operations (between batches, on the aux stream, ks_lock)
 * ---------------------------------------------------------------------- */

/* Launch a keyspace kernel on aux after every launch so far (it moves no
 * stamps). */
static int aux_launch_begin(gpu_engine *g)
{
    gpu_launch l;
    pthread_mutex_lock(&g->enq_lock);
    int rc = order_begin(g, g->aux, 0, &l);
    if (rc != 0) {
        pthread_mutex_unlock(&g->enq_lock);
    }
    return rc;
}

static int aux_launch_end(gpu_engine *g, int rc)
{
    if (rc == 0) {
        rc = order_end(g, g->aux, g->ev_dev);
    }
    pthread_mutex_unlock(&g->enq_lock);
    return rc;
}

/* Collect the keys of buckets [first, first + n) into h_scratch; returns the
 * bytes of records there (>= 0) or a negative code. */
static int64_t collect(gpu_engine *g, uint64_t first, uint64_t n, int64_t now_ms)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        uint64_t cap = g->scratch_cap - 8;
        int rc = aux_launch_begin(g);
        if (rc != 0) {
            return rc;
        }
        rc = OP_CK(g, cudaMemsetAsync(g->d_scratch, 0, 8, g->aux));
        if (rc == 0) {
            rc = op_ck(g, gpu_k_collect(&g->t, first, n, now_ms, g->d_scratch + 8, cap,
                                        (uint64_t *)g->d_scratch, g->aux));
        }
        rc = aux_launch_end(g, rc);
        if (rc == 0) {
            rc = OP_CK(
                g, cudaMemcpyAsync(g->h_scratch, g->d_scratch, 8, cudaMemcpyDeviceToHost, g->aux));
        }
        if (rc == 0) {
            rc = wait_stream(g, g->aux, g->ev_aux);
        }
        if (rc != 0) {
            return rc;
        }
        uint64_t len;
        memcpy(&len, g->h_scratch, 8);
        if (len <= cap) {
            if (len > 0) {
                rc = OP_CK(g, cudaMemcpyAsync(g->h_scratch + 8, g->d_scratch + 8, len,
                                              cudaMemcpyDeviceToHost, g->aux));
                if (rc == 0) {
                    rc = wait_stream(g, g->aux, g->ev_aux);
                }
                if (rc != 0) {
                    return rc;
                }
            }
            return (int64_t)len;
        }
        rc = scratch_reserve(g, len + 8);
        if (rc != 0) {
            return rc;
        }
    }
    return CUDIS_E_BUSY;
}

static int scan_locked(gpu_engine *g, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                       cudis_scan_fn fn, void *arg, uint64_t *next)
{
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
        if ((db == CUDIS_DB_ALL || r.db == (uint32_t)db) &&
            fn(arg, (uint8_t)r.db, g->h_scratch + 8 + at + sizeof(r), r.key_len, r.expire_ms) !=
                0) {
            break;
        }
        at += r.rec_len;
    }
    return 0;
}

static uint64_t rand_next(gpu_engine *g)
{
    uint64_t x = g->rand_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    g->rand_state = x;
    return x;
}

static int read_counters(gpu_engine *g, uint64_t *c)
{
    return read_device(g, c, g->t.cnt, sizeof(uint64_t) * CCHT_C__COUNT);
}

/* Items (vol: those with an expiry) of every database into n: their
 * counters, database 0's the table's total minus the rest. */
static int db_counts_locked(gpu_engine *g, bool vol, uint64_t n[CCHT_DBS])
{
    uint64_t c[CCHT_C__COUNT];
    int rc = read_counters(g, c);
    if (rc == 0) {
        rc = read_device(g, n, vol ? g->t.v.db_volatile : g->t.v.db_items,
                         sizeof(uint64_t) * CCHT_DBS);
    }
    if (rc != 0) {
        return rc;
    }
    n[0] = c[vol ? CCHT_C_VOLATILE : CCHT_C_ITEMS];
    for (int i = 1; i < CCHT_DBS; i++) {
        n[0] -= n[i];
    }
    return 0;
}

/* Items of database db. */
static int db_size_locked(gpu_engine *g, uint8_t db, uint64_t *out)
{
    uint64_t dn[CCHT_DBS];
    int rc = db_counts_locked(g, false, dn);
    if (rc == 0) {
        *out = dn[db];
    }
    return rc;
}

static int random_key_locked(gpu_engine *g, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                             uint32_t *len)
{
    uint64_t items = 0;
    int rc = db_size_locked(g, db, &items);
    if (rc != 0) {
        return rc;
    }
    if (items == 0) {
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
            /* count the records of db, pick one at random */
            uint32_t k = 0;
            for (uint64_t at = 0; at + sizeof(gpu_key_rec) <= (uint64_t)got;) {
                gpu_key_rec r;
                memcpy(&r, g->h_scratch + 8 + at, sizeof(r));
                if (r.rec_len == 0) {
                    break;
                }
                k += r.db == db;
                at += r.rec_len;
            }
            uint32_t pick = k ? (uint32_t)(rand_next(g) % k) : 0;
            for (uint64_t at = 0; k > 0 && at + sizeof(gpu_key_rec) <= (uint64_t)got;) {
                gpu_key_rec r;
                memcpy(&r, g->h_scratch + 8 + at, sizeof(r));
                if (r.rec_len == 0) {
                    break;
                }
                if (r.db == db && pick-- == 0) {
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

static int flush_locked(gpu_engine *g, int db)
{
    int rc = aux_launch_begin(g);
    if (rc != 0) {
        return rc;
    }
    if (db != CUDIS_DB_ALL) {
        rc = op_ck(g, gpu_k_flush_db(&g->t, 0, g->t.v.n_buckets, (uint32_t)db, g->aux));
        rc = aux_launch_end(g, rc);
        return rc == 0 ? wait_stream(g, g->aux, g->ev_aux) : rc;
    }
    const ccht_geom *m = &g->geom;
    uint8_t *d_meta = (uint8_t *)g->d_mem + m->meta_off;
    rc = OP_CK(g, cudaMemsetAsync(g->t.v.buckets, 0, m->index_bytes, g->aux));
    if (rc == 0) {
        /* gauges to zero; hits, misses, evictions and the clock stay */
        rc = OP_CK(g, cudaMemsetAsync(&g->t.cnt[CCHT_C_FIRST_GAUGE], 0,
                                      sizeof(uint64_t) * (CCHT_C__COUNT - CCHT_C_FIRST_GAUGE),
                                      g->aux));
    }
    if (rc == 0) {
        rc = OP_CK(g, cudaMemsetAsync(g->t.v.db_items, 0, 2 * sizeof(uint64_t) * CCHT_DBS, g->aux));
    }
    if (rc == 0) {
        rc = OP_CK(g, cudaMemcpyAsync(d_meta + m->m_pool, g->meta_image + m->m_pool,
                                      m->meta_bytes - m->m_pool, cudaMemcpyHostToDevice, g->aux));
    }
    rc = aux_launch_end(g, rc);
    return rc == 0 ? wait_stream(g, g->aux, g->ev_aux) : rc;
}

/* The sweep's scratch: [count | .. | mirror of the sink at GPU_HDR_EV |
 * its area from GPU_HDR_BYTES on]. */
/* A unit of sweep work on the device: the buckets of one word of the
 * volatile map (a thread each; one that is not marked returns at once). */
#define GPU_SWEEP_UNIT 64u

static int sweep_locked(gpu_engine *g, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev)
{
    uint64_t nb = g->t.v.n_buckets;
    uint64_t first = g->sweep_cursor % nb;
    uint64_t n = (uint64_t)(max_work ? max_work : 1) * GPU_SWEEP_UNIT;
    if (n > nb - first) {
        n = nb - first;
    }
    cudis_evbuf mirror;
    cudis_evbuf *d_ev = NULL;
    int rc = 0;
    if (ev != NULL) {
        gpu_ev_mirror(ev, &mirror, NULL);
        rc = scratch_reserve(g, GPU_HDR_BYTES + gpu_ev_area_bytes(&mirror));
        if (rc != 0) {
            return rc;
        }
        gpu_ev_mirror(ev, &mirror, g->d_scratch + GPU_HDR_BYTES);
        memcpy(g->h_scratch + GPU_HDR_EV, &mirror, sizeof(mirror));
        d_ev = (cudis_evbuf *)(g->d_scratch + GPU_HDR_EV);
    }
    rc = aux_launch_begin(g);
    if (rc != 0) {
        return rc;
    }
    if (ev != NULL) { /* the count (zero) and the mirror */
        memset(g->h_scratch, 0, 8);
        rc = OP_CK(g, cudaMemcpyAsync(g->d_scratch, g->h_scratch, GPU_HDR_BYTES,
                                      cudaMemcpyHostToDevice, g->aux));
    } else {
        rc = OP_CK(g, cudaMemsetAsync(g->d_scratch, 0, 8, g->aux));
    }
    if (rc == 0) {
        rc = op_ck(g, gpu_k_sweep(&g->t, first, n, now_ms, (uint64_t *)g->d_scratch, d_ev, g->aux));
    }
    rc = aux_launch_end(g, rc);
    if (rc == 0) {
        rc = OP_CK(g, cudaMemcpyAsync(g->h_scratch, g->d_scratch, ev != NULL ? GPU_HDR_BYTES : 8,
                                      cudaMemcpyDeviceToHost, g->aux));
    }
    if (rc == 0) {
        rc = wait_stream(g, g->aux, g->ev_aux);
    }
    if (rc == 0 && ev != NULL) {
        memcpy(&mirror, g->h_scratch + GPU_HDR_EV, sizeof(mirror));
        rc = ev_fetch(g, &mirror, g->h_scratch, g->d_scratch, GPU_HDR_BYTES, g->aux);
        if (rc == 0) {
            rc = wait_stream(g, g->aux, g->ev_aux);
        }
        if (rc == 0) {
            ev_finish(&mirror, ev, g->h_scratch, GPU_HDR_BYTES);
        }
    }
    if (rc != 0) {
        return rc;
    }
    g->sweep_cursor = (first + n) % nb;
    uint64_t count;
    memcpy(&count, g->h_scratch, 8);
    return count > (uint64_t)INT32_MAX ? INT32_MAX : (int)count;
}

/* The keyspace operations, one at a time (they share aux and scratch). */
#define KS_CALL(g, call)                                                                           \
    do {                                                                                           \
        int rc_ = enter(g);                                                                        \
        if (rc_ != 0) {                                                                            \
            return rc_;                                                                            \
        }                                                                                          \
        pthread_mutex_lock(&(g)->ks_lock);                                                         \
        rc_ = (call);                                                                              \
        pthread_mutex_unlock(&(g)->ks_lock);                                                       \
        return rc_;                                                                                \
    } while (0)

int gpu_engine_scan(gpu_engine *g, int db, uint64_t cursor, uint32_t count, int64_t now_ms,
                    cudis_scan_fn fn, void *arg, uint64_t *next)
{
    if (fn == NULL || next == NULL) {
        return CUDIS_E_INVAL;
    }
    KS_CALL(g, scan_locked(g, db, cursor, count, now_ms, fn, arg, next));
}

typedef struct ttl_acc {
    cudis_expires *out;
    uint64_t seen[CCHT_DBS];
    int64_t now;
} ttl_acc;

static int ttl_collect(void *arg, uint8_t db, const uint8_t *key, uint32_t len, int64_t exp)
{
    (void)key;
    (void)len;
    ttl_acc *a = arg;
    if (exp > 0) {
        a->seen[db]++;
        a->out->ttl_ms[db] += (double)(exp - a->now);
    }
    return 0;
}

/* Keys with an expiry per database: the device's counters (exact), and the
 * mean TTL of the live ones in the first max_work buckets. */
static int expires_locked(gpu_engine *g, int64_t now_ms, uint32_t max_work, cudis_expires *out)
{
    int rc = db_counts_locked(g, true, out->keys);
    if (rc != 0) {
        return rc;
    }
    ttl_acc *a = calloc(1, sizeof(*a));
    if (a == NULL) {
        return CUDIS_E_NOMEM;
    }
    a->out = out;
    a->now = now_ms;
    uint64_t next = 0;
    rc = scan_locked(g, CUDIS_DB_ALL, 0, max_work, now_ms, ttl_collect, a, &next);
    out->exact = rc == 0 && next == 0;
    for (int d = 0; d < CCHT_DBS; d++) {
        out->ttl_ms[d] = a->seen[d] ? out->ttl_ms[d] / (double)a->seen[d] : 0.0;
    }
    free(a);
    return rc;
}

int gpu_engine_expires(gpu_engine *g, int64_t now_ms, uint32_t max_work, cudis_expires *out)
{
    memset(out, 0, sizeof(*out));
    KS_CALL(g, expires_locked(g, now_ms, max_work, out));
}

int gpu_engine_random_key(gpu_engine *g, uint8_t db, int64_t now_ms, uint8_t *buf, uint32_t cap,
                          uint32_t *len)
{
    if (len == NULL || (buf == NULL && cap > 0)) {
        return CUDIS_E_INVAL;
    }
    KS_CALL(g, random_key_locked(g, db, now_ms, buf, cap, len));
}

uint64_t gpu_engine_db_size(gpu_engine *g, uint8_t db)
{
    uint64_t n = 0;
    if (enter(g) != 0) {
        return 0;
    }
    pthread_mutex_lock(&g->ks_lock);
    (void)db_size_locked(g, db, &n);
    pthread_mutex_unlock(&g->ks_lock);
    return n;
}

uint64_t gpu_engine_clock(gpu_engine *g)
{
    return __atomic_load_n(&g->clock, __ATOMIC_RELAXED);
}

int gpu_engine_set_policy(gpu_engine *g, uint32_t policy, uint32_t lfu_log_factor,
                          uint32_t lfu_decay_time)
{
    if (policy >= CUDIS_POL__COUNT) {
        return CUDIS_E_INVAL;
    }
    /* the next launch's copy of the table takes them */
    __atomic_store_n(&g->t.lfu_log_factor, lfu_log_factor, __ATOMIC_RELAXED);
    __atomic_store_n(&g->t.lfu_decay_time, lfu_decay_time, __ATOMIC_RELAXED);
    __atomic_store_n(&g->t.policy, policy, __ATOMIC_RELAXED);
    return CUDIS_OK;
}

uint64_t gpu_engine_sweep_units(gpu_engine *g)
{
    return (g->t.v.n_buckets + GPU_SWEEP_UNIT - 1) / GPU_SWEEP_UNIT;
}

int gpu_engine_sweep(gpu_engine *g, int64_t now_ms, uint32_t max_work, cudis_evbuf *ev)
{
    KS_CALL(g, sweep_locked(g, now_ms, max_work, ev));
}

int gpu_engine_flush(gpu_engine *g, int db)
{
    KS_CALL(g, flush_locked(g, db));
}

/* ------------------------------------------------------------------------
 * Statistics and INFO
 * ---------------------------------------------------------------------- */

/* Counters and the pages in use, read after every launch so far. */
static int read_state(gpu_engine *g, uint64_t *c, uint32_t *pages_used)
{
    memset(c, 0, sizeof(uint64_t) * CCHT_C__COUNT);
    *pages_used = 0;
    if (enter(g) != 0) {
        return CUDIS_E_DEVFAIL;
    }
    pthread_mutex_lock(&g->ks_lock);
    int rc = read_counters(g, c);
    ccht_pool pool;
    if (rc == 0) {
        rc = read_device(g, &pool, g->t.a.pool, sizeof(pool));
    }
    pthread_mutex_unlock(&g->ks_lock);
    if (rc == 0) {
        *pages_used = pool.pages_used;
    }
    return rc;
}

void gpu_engine_stats(gpu_engine *g, cudis_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (g == NULL) {
        return;
    }
    uint64_t c[CCHT_C__COUNT];
    uint32_t pages_used = 0;
    (void)read_state(g, c, &pages_used);
    out->items = c[CCHT_C_ITEMS];
    out->index_bytes = g->geom.index_bytes + g->geom.meta_bytes;
    out->bytes_used = out->index_bytes + c[CCHT_C_CHUNK_BYTES]; /* as ccht_stats */
    out->bytes_budget = g->budget;
    out->key_bytes = c[CCHT_C_KEY_BYTES];
    out->value_bytes = c[CCHT_C_VAL_BYTES];
    out->hits = c[CCHT_C_HITS];
    out->misses = c[CCHT_C_MISSES];
    out->evict_bucket = c[CCHT_C_EVICT_BUCKET];
    out->evict_memory = c[CCHT_C_EVICT_MEMORY];
    out->evict_expired = c[CCHT_C_EVICT_EXPIRED];
    out->capacity = g->geom.n_buckets * g->geom.ways;
    out->load_factor = out->capacity ? (double)out->items / (double)out->capacity : 0;
}

void gpu_engine_reset_stats(gpu_engine *g)
{
    if (enter(g) != 0) {
        return;
    }
    pthread_mutex_lock(&g->ks_lock);
    if (aux_launch_begin(g) == 0) {
        int rc =
            OP_CK(g, cudaMemsetAsync(g->t.cnt, 0, sizeof(uint64_t) * CCHT_C_FIRST_GAUGE, g->aux));
        if (aux_launch_end(g, rc) == 0) {
            (void)wait_stream(g, g->aux, g->ev_aux);
        }
    }
    pthread_mutex_unlock(&g->ks_lock);
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
    uint64_t c[CCHT_C__COUNT];
    uint32_t pages_used = 0;
    (void)read_state(g, c, &pages_used);
    size_t free_b = 0, total_b = 0;
    if (!is_failed(g) && cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
    }
    pthread_mutex_lock(&g->lock);
    uint64_t batches = g->batches, ops = g->batch_ops, maxops = g->batch_max_ops;
    double kus = g->kernel_us_total, last = g->last_kernel_us;
    uint64_t staging = g->staging_bytes;
    pthread_mutex_unlock(&g->lock);
    const ccht_geom *m = &g->geom;
    int n = snprintf(
        buf, cap,
        "gpu_device:%s\r\n"
        "gpu_device_ordinal:%d\r\n"
        "gpu_compute_capability:%d.%d\r\n"
        "gpu_memory_total:%zu\r\n"
        "gpu_memory_free:%zu\r\n"
        "gpu_memory_budget:%llu\r\n"
        "gpu_memory_budget_clamped:%d\r\n"
        "gpu_memory_index:%llu\r\n"
        "gpu_memory_arena:%llu\r\n"
        "gpu_memory_arena_used:%llu\r\n"
        "gpu_memory_staging:%llu\r\n"
        "gpu_buckets:%llu\r\n"
        "gpu_ways:%u\r\n"
        "gpu_size_classes:%u\r\n"
        "gpu_page_bytes:%llu\r\n"
        "gpu_batches:%llu\r\n"
        "gpu_batch_ops_avg:%.1f\r\n"
        "gpu_batch_ops_max:%llu\r\n"
        "gpu_kernel_us_per_batch:%.2f\r\n"
        "gpu_kernel_us_last:%.2f\r\n"
        "gpu_writes_full:%llu\r\n"
        "gpu_watchdog_ms:%llu\r\n"
        "gpu_failed:%d\r\n"
        "gpu_failure:%s\r\n"
        "gpu_last_cuda_error:%s\r\n",
        g->dev_name, g->device, g->cc_major, g->cc_minor, total_b, free_b,
        (unsigned long long)g->budget, g->clamped ? 1 : 0,
        (unsigned long long)(m->index_bytes + m->meta_bytes), (unsigned long long)m->arena_bytes,
        (unsigned long long)pages_used * m->page_bytes, (unsigned long long)staging,
        (unsigned long long)m->n_buckets, m->ways, m->n_classes, (unsigned long long)m->page_bytes,
        (unsigned long long)batches, batches ? (double)ops / (double)batches : 0.0,
        (unsigned long long)maxops, batches ? kus / (double)batches : 0.0, last,
        (unsigned long long)c[CCHT_C_FULL], (unsigned long long)(g->watchdog_ns / 1000000),
        is_failed(g) ? 1 : 0, is_failed(g) ? g->fail_why : "", gpu_last_error());
    return n < 0 ? 0 : (size_t)n;
}

int gpu_engine_table_image(gpu_engine *g, void *dst, uint64_t cap)
{
    if (g == NULL || dst == NULL || cap < g->geom.total) {
        return CUDIS_E_INVAL;
    }
    int rc = enter(g);
    if (rc != 0) {
        return rc;
    }
    pthread_mutex_lock(&g->ks_lock);
    rc = drain(g);
    if (rc == 0) {
        rc =
            OP_CK(g, cudaMemcpyAsync(dst, g->d_mem, g->geom.total, cudaMemcpyDeviceToHost, g->aux));
    }
    if (rc == 0) {
        rc = wait_stream(g, g->aux, g->ev_aux);
    }
    pthread_mutex_unlock(&g->ks_lock);
    return rc;
}

uint64_t gpu_engine_table_bytes(gpu_engine *g, void *geom_out)
{
    if (g == NULL) {
        return 0;
    }
    if (geom_out != NULL) {
        memcpy(geom_out, &g->geom, sizeof(g->geom));
    }
    return g->geom.total;
}
