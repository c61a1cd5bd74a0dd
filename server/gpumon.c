/*
 * gpumon.c - INFO gpu: each GPU's state from NVIDIA's management library
 * (NVML), loaded at run time (dlopen of libnvidia-ml.so.1, the driver's),
 * so the server starts and says gpu_available:0 where there is none. A
 * thread of its own samples every device once a second (and counts Xid
 * errors between samples through NVML's events); INFO only formats the
 * last sample, so no request ever waits on the driver.
 *
 * The NVML declarations (nvml_lite.h) are the few this file calls, as
 * NVML's documentation defines them (nvml.h is not on machines without
 * the CUDA toolkit). CUDIS_NVML_LIBRARY names another library to load (the tests'
 * stand-in, tests/server/fake_nvml.c).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudis_time.h"
#include "nvml_lite.h"
#include "server_internal.h"

static struct {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*driver_version)(char *, unsigned int);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long *);
    nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*event_set_create)(nvmlEventSet_t *);
    nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
    nvmlReturn_t (*event_wait)(nvmlEventSet_t, nvmlEventData_t *, unsigned int);
    nvmlReturn_t (*event_set_free)(nvmlEventSet_t);
} N;

/* ---- samples ---------------------------------------------------------- */

#define GPUMON_MAX 16

/* What one device said; a field NVML would not give (not supported, no
 * permission) has its bit in `missing` and is left out of INFO. */
enum {
    M_MEM = 1 << 0,
    M_UTIL = 1 << 1,
    M_TEMP = 1 << 2,
    M_POWER = 1 << 3,
    M_LIMIT = 1 << 4,
    M_CLK_SM = 1 << 5,
    M_CLK_MEM = 1 << 6,
    M_PCIE = 1 << 7,
    M_ECC = 1 << 8,
    M_THROTTLE = 1 << 9
};

typedef struct gpu_sample {
    char name[96], uuid[96], pci[32];
    nvmlMemory_t mem;
    nvmlUtilization_t util;
    unsigned int temp, power_mw, limit_mw, clk_sm, clk_mem, pcie_tx_kbs, pcie_rx_kbs;
    unsigned long long ecc_corr, ecc_uncorr, throttle;
    uint64_t xids;
    unsigned long long last_xid;
    uint32_t missing;
} gpu_sample;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static gpu_sample samples[GPUMON_MAX]; /* under lock */
static unsigned ndev;
static int64_t sampled_ms;
static char why[256] = "not started";
static char driver[80];
static bool available, stop;
static pthread_t thread;
static bool started;
static void *lib;
static nvmlDevice_t dev[GPUMON_MAX];
static nvmlEventSet_t events;

static void sample_one(unsigned i, gpu_sample *s)
{
    nvmlDevice_t d = dev[i];
    uint32_t miss = 0;
    if (N.name(d, s->name, sizeof(s->name)) != NVML_SUCCESS) {
        snprintf(s->name, sizeof(s->name), "unknown");
    }
    if (N.uuid(d, s->uuid, sizeof(s->uuid)) != NVML_SUCCESS) {
        snprintf(s->uuid, sizeof(s->uuid), "unknown");
    }
    nvmlPciInfo_t p;
    memset(&p, 0, sizeof(p));
    if (N.pci(d, &p) == NVML_SUCCESS) {
        snprintf(s->pci, sizeof(s->pci), "%.31s", p.busId);
    } else {
        snprintf(s->pci, sizeof(s->pci), "unknown");
    }
    miss |= N.memory(d, &s->mem) == NVML_SUCCESS ? 0 : M_MEM;
    miss |= N.utilization(d, &s->util) == NVML_SUCCESS ? 0 : M_UTIL;
    miss |= N.temperature(d, NVML_TEMPERATURE_GPU, &s->temp) == NVML_SUCCESS ? 0 : M_TEMP;
    miss |= N.power(d, &s->power_mw) == NVML_SUCCESS ? 0 : M_POWER;
    miss |= N.power_limit(d, &s->limit_mw) == NVML_SUCCESS ? 0 : M_LIMIT;
    miss |= N.clock(d, NVML_CLOCK_SM, &s->clk_sm) == NVML_SUCCESS ? 0 : M_CLK_SM;
    miss |= N.clock(d, NVML_CLOCK_MEM, &s->clk_mem) == NVML_SUCCESS ? 0 : M_CLK_MEM;
    miss |= N.pcie(d, NVML_PCIE_UTIL_TX_BYTES, &s->pcie_tx_kbs) == NVML_SUCCESS &&
                    N.pcie(d, NVML_PCIE_UTIL_RX_BYTES, &s->pcie_rx_kbs) == NVML_SUCCESS
                ? 0
                : M_PCIE;
    miss |= N.ecc(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &s->ecc_corr) ==
                        NVML_SUCCESS &&
                    N.ecc(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
                          &s->ecc_uncorr) == NVML_SUCCESS
                ? 0
                : M_ECC;
    miss |= N.throttle(d, &s->throttle) == NVML_SUCCESS ? 0 : M_THROTTLE;
    s->missing = miss;
}

/* Xid errors NVML reported since the last look (waits up to ms for one). */
static void take_events(unsigned ms)
{
    if (events == NULL) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)ms * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_mutex_lock(&lock);
        if (!stop) {
            pthread_cond_timedwait(&wake, &lock, &ts);
        }
        pthread_mutex_unlock(&lock);
        return;
    }
    nvmlEventData_t e;
    memset(&e, 0, sizeof(e));
    if (N.event_wait(events, &e, ms) != NVML_SUCCESS || !(e.eventType & NVML_EVENT_XID)) {
        return;
    }
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < ndev; i++) {
        if (dev[i] == e.device) {
            samples[i].xids++;
            samples[i].last_xid = e.eventData;
        }
    }
    pthread_mutex_unlock(&lock);
    log_msg(LL_WARNING, "GPU Xid error %llu reported by the driver", e.eventData);
}

static void *sampler(void *arg)
{
    (void)arg;
    for (;;) {
        gpu_sample fresh[GPUMON_MAX];
        memset(fresh, 0, sizeof(fresh));
        for (unsigned i = 0; i < ndev; i++) {
            sample_one(i, &fresh[i]);
        }
        pthread_mutex_lock(&lock);
        for (unsigned i = 0; i < ndev; i++) {
            fresh[i].xids = samples[i].xids;
            fresh[i].last_xid = samples[i].last_xid;
            samples[i] = fresh[i];
        }
        sampled_ms = cudis_now_ms();
        bool done = stop;
        pthread_mutex_unlock(&lock);
        if (done) {
            break;
        }
        for (int k = 0; k < 5; k++) { /* a second, in slices: stopping is quick */
            take_events(200);
            pthread_mutex_lock(&lock);
            done = stop;
            pthread_mutex_unlock(&lock);
            if (done) {
                return NULL;
            }
        }
    }
    return NULL;
}

static void *sym(const char *name, bool *ok)
{
    void *p = dlsym(lib, name);
    if (p == NULL) {
        *ok = false;
        snprintf(why, sizeof(why), "the NVML library has no %s", name);
    }
    return p;
}

void gpumon_start(void)
{
    const char *path = getenv("CUDIS_NVML_LIBRARY");
    if (path == NULL || *path == '\0') {
        path = "libnvidia-ml.so.1";
    }
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(why, sizeof(why), "no NVML library (%s): %s", path, e ? e : "not found");
        return;
    }
    bool ok = true;
    *(void **)&N.init = sym("nvmlInit_v2", &ok);
    *(void **)&N.shutdown = sym("nvmlShutdown", &ok);
    *(void **)&N.error_string = sym("nvmlErrorString", &ok);
    *(void **)&N.driver_version = sym("nvmlSystemGetDriverVersion", &ok);
    *(void **)&N.count = sym("nvmlDeviceGetCount_v2", &ok);
    *(void **)&N.handle = sym("nvmlDeviceGetHandleByIndex_v2", &ok);
    *(void **)&N.name = sym("nvmlDeviceGetName", &ok);
    *(void **)&N.uuid = sym("nvmlDeviceGetUUID", &ok);
    *(void **)&N.pci = sym("nvmlDeviceGetPciInfo_v3", &ok);
    *(void **)&N.memory = sym("nvmlDeviceGetMemoryInfo", &ok);
    *(void **)&N.utilization = sym("nvmlDeviceGetUtilizationRates", &ok);
    *(void **)&N.temperature = sym("nvmlDeviceGetTemperature", &ok);
    *(void **)&N.power = sym("nvmlDeviceGetPowerUsage", &ok);
    *(void **)&N.power_limit = sym("nvmlDeviceGetEnforcedPowerLimit", &ok);
    *(void **)&N.clock = sym("nvmlDeviceGetClockInfo", &ok);
    *(void **)&N.pcie = sym("nvmlDeviceGetPcieThroughput", &ok);
    *(void **)&N.ecc = sym("nvmlDeviceGetTotalEccErrors", &ok);
    *(void **)&N.throttle = sym("nvmlDeviceGetCurrentClocksThrottleReasons", &ok);
    *(void **)&N.event_set_create = sym("nvmlEventSetCreate", &ok);
    *(void **)&N.register_events = sym("nvmlDeviceRegisterEvents", &ok);
    *(void **)&N.event_wait = sym("nvmlEventSetWait_v2", &ok);
    *(void **)&N.event_set_free = sym("nvmlEventSetFree", &ok);
    nvmlReturn_t rc = ok ? N.init() : NVML_SUCCESS;
    if (ok && rc != NVML_SUCCESS) {
        snprintf(why, sizeof(why), "nvmlInit: %s", N.error_string(rc));
        ok = false;
    }
    unsigned n = 0;
    if (ok && (rc = N.count(&n)) != NVML_SUCCESS) {
        snprintf(why, sizeof(why), "nvmlDeviceGetCount: %s", N.error_string(rc));
        N.shutdown();
        ok = false;
    }
    if (!ok) {
        dlclose(lib);
        lib = NULL;
        return;
    }
    ndev = n < GPUMON_MAX ? n : GPUMON_MAX;
    if (N.driver_version(driver, sizeof(driver)) != NVML_SUCCESS) {
        snprintf(driver, sizeof(driver), "unknown");
    }
    if (N.event_set_create(&events) != NVML_SUCCESS) {
        events = NULL;
    }
    for (unsigned i = 0; i < ndev; i++) {
        if (N.handle(i, &dev[i]) != NVML_SUCCESS) {
            ndev = i;
            break;
        }
        if (events != NULL) {
            (void)N.register_events(dev[i], NVML_EVENT_XID, events); /* (not on every GPU) */
        }
    }
    available = ndev > 0;
    snprintf(why, sizeof(why), "%s", ndev > 0 ? "" : "NVML sees no device");
    stop = false;
    if (pthread_create(&thread, NULL, sampler, NULL) == 0) {
        started = true;
    }
    log_msg(LL_NOTICE, "GPU monitoring: %u device(s) through NVML (driver %s)", ndev, driver);
}

void gpumon_stop(void)
{
    if (started) {
        pthread_mutex_lock(&lock);
        stop = true;
        pthread_cond_broadcast(&wake);
        pthread_mutex_unlock(&lock);
        pthread_join(thread, NULL);
        started = false;
    }
    if (lib != NULL) {
        if (events != NULL) {
            N.event_set_free(events);
            events = NULL;
        }
        N.shutdown();
        dlclose(lib);
        lib = NULL;
    }
    available = false;
}

/* The cache's bytes on device i: the gpu engine's memory in use on it
 * (shard k runs on the k-th of engine-devices, cycling; by default on
 * device k), each shard an equal share of the budget. */
static long long cache_bytes(unsigned i)
{
    if (strcmp(engine_name(srv.eng), "gpu") != 0) {
        return 0;
    }
    unsigned shards = srv.cfg.engine_shards > 0 ? (unsigned)srv.cfg.engine_shards : 1, on = 0;
    for (unsigned k = 0; k < shards; k++) {
        int d = srv.ndevices > 0 ? srv.devices[k % (unsigned)srv.ndevices] : (int)k;
        on += d == (int)i;
    }
    cudis_stats st;
    engine_stats(srv.eng, &st);
    return (long long)(st.bytes_used / shards * on);
}

void gpumon_info(sbuf *o)
{
    pthread_mutex_lock(&lock);
    if (!available) {
        sbuf_printf(o, "gpu_available:0\r\ngpu_unavailable_reason:%s\r\n", why);
        pthread_mutex_unlock(&lock);
        return;
    }
    int64_t age = sampled_ms ? cudis_now_ms() - sampled_ms : -1;
    sbuf_printf(o, "gpu_available:1\r\ngpu_driver_version:%s\r\ngpu_count:%u\r\ngpu_sample_age_ms:%lld\r\n",
                driver, ndev, (long long)age);
    for (unsigned i = 0; i < ndev; i++) {
        const gpu_sample *s = &samples[i];
        sbuf_printf(o, "gpu%u_name:%s\r\ngpu%u_uuid:%s\r\ngpu%u_pci_bus_id:%s\r\n", i, s->name, i,
                    s->uuid, i, s->pci);
        if (!(s->missing & M_MEM)) {
            sbuf_printf(o,
                        "gpu%u_memory_total_bytes:%llu\r\ngpu%u_memory_used_bytes:%llu\r\n"
                        "gpu%u_memory_free_bytes:%llu\r\n",
                        i, s->mem.total, i, s->mem.used, i, s->mem.free);
        }
        sbuf_printf(o, "gpu%u_cache_bytes:%lld\r\n", i, cache_bytes(i));
        if (!(s->missing & M_UTIL)) {
            sbuf_printf(o, "gpu%u_utilization_sm_percent:%u\r\ngpu%u_utilization_memory_percent:%u\r\n",
                        i, s->util.gpu, i, s->util.memory);
        }
        if (!(s->missing & M_TEMP)) {
            sbuf_printf(o, "gpu%u_temperature_celsius:%u\r\n", i, s->temp);
        }
        if (!(s->missing & M_POWER)) {
            sbuf_printf(o, "gpu%u_power_draw_watts:%.3f\r\n", i, s->power_mw / 1000.0);
        }
        if (!(s->missing & M_LIMIT)) {
            sbuf_printf(o, "gpu%u_power_limit_watts:%.3f\r\n", i, s->limit_mw / 1000.0);
        }
        if (!(s->missing & M_CLK_SM)) {
            sbuf_printf(o, "gpu%u_clock_sm_mhz:%u\r\n", i, s->clk_sm);
        }
        if (!(s->missing & M_CLK_MEM)) {
            sbuf_printf(o, "gpu%u_clock_memory_mhz:%u\r\n", i, s->clk_mem);
        }
        if (!(s->missing & M_PCIE)) {
            sbuf_printf(o, "gpu%u_pcie_tx_bytes_per_sec:%llu\r\ngpu%u_pcie_rx_bytes_per_sec:%llu\r\n", i,
                        (unsigned long long)s->pcie_tx_kbs * 1024, i,
                        (unsigned long long)s->pcie_rx_kbs * 1024);
        }
        if (!(s->missing & M_ECC)) {
            sbuf_printf(o, "gpu%u_ecc_errors_corrected:%llu\r\ngpu%u_ecc_errors_uncorrected:%llu\r\n",
                        i, s->ecc_corr, i, s->ecc_uncorr);
        }
        if (!(s->missing & M_THROTTLE)) {
            sbuf_printf(o, "gpu%u_throttle_reasons:0x%llx\r\n", i, s->throttle);
        }
        sbuf_printf(o, "gpu%u_xid_errors:%llu\r\ngpu%u_last_xid:%llu\r\n", i,
                    (unsigned long long)s->xids, i, s->last_xid);
    }
    pthread_mutex_unlock(&lock);
}
