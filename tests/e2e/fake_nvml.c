/*
 * fake_nvml.c - a stand-in for NVIDIA's libnvidia-ml.so.1, for the tests of
 * INFO gpu on machines without a GPU (test_gpumon.py loads it through
 * CUDIS_NVML_LIBRARY). Two devices with fixed readings; device 1 has no
 * temperature sensor (NVML_ERROR_NOT_SUPPORTED); the event set reports one
 * Xid 79 on device 0, then only waits its timeout out.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nvml_lite.h"

static char devs[2];
static char set;
static int xid_sent;
#define DEV(d) ((int)((char *)(d) - devs))

nvmlReturn_t nvmlInit_v2(void) { return 0; }
nvmlReturn_t nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(nvmlReturn_t r) { return r ? "Not Supported" : "Success"; }
nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int n)
{
    snprintf(v, n, "550.00-fake");
    return 0;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
    *n = 2;
    return 0;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
    if (i > 1) {
        return 2;
    }
    *d = (nvmlDevice_t)(void *)&devs[i];
    return 0;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int n)
{
    snprintf(s, n, "NVIDIA H200 stand-in %d", DEV(d));
    return 0;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned int n)
{
    snprintf(s, n, "GPU-00000000-0000-0000-0000-00000000000%d", DEV(d));
    return 0;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->busId, sizeof(p->busId), "00000000:%02X:00.0", 0x18 + DEV(d));
    return 0;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    m->total = 150351020032ull;
    m->used = 1073741824ull * (unsigned)(1 + DEV(d));
    m->free = m->total - m->used;
    return 0;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    u->gpu = 37 + (unsigned)DEV(d);
    u->memory = 12;
    return 0;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *t)
{
    if (DEV(d) == 1 || sensor != 0) {
        return 3; /* NVML_ERROR_NOT_SUPPORTED */
    }
    *t = 41;
    return 0;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
    (void)d;
    *mw = 123456;
    return 0;
}
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw)
{
    (void)d;
    *mw = 700000;
    return 0;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
    (void)d;
    *mhz = type == 1 ? 1980 : 2619;
    return 0;
}
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int *kbs)
{
    (void)d;
    *kbs = counter == 0 ? 1000 : 2000;
    return 0;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *n)
{
    (void)d;
    (void)counter;
    *n = type == 0 ? 3 : 0;
    return 0;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r)
{
    (void)d;
    *r = 0x1;
    return 0;
}
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *s)
{
    *s = (nvmlEventSet_t)(void *)&set;
    return 0;
}
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t s)
{
    (void)d;
    (void)types;
    (void)s;
    return 0;
}
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t s, nvmlEventData_t *e, unsigned int ms)
{
    (void)s;
    if (!xid_sent) {
        xid_sent = 1;
        memset(e, 0, sizeof(*e));
        e->device = (nvmlDevice_t)(void *)&devs[0];
        e->eventType = 0x8;
        e->eventData = 79;
        return 0;
    }
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    return 10; /* NVML_ERROR_TIMEOUT */
}
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t s)
{
    (void)s;
    return 0;
}
