/*
 * nvml_lite.h - the part of NVIDIA's NVML (libnvidia-ml.so.1) that gpumon.c
 * calls, as NVML's documentation defines it: nvml.h itself is only on
 * machines with the CUDA toolkit. The tests' stand-in library
 * (tests/e2e/fake_nvml.c) implements the same.
 */
#ifndef NVML_LITE_H
#define NVML_LITE_H

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_TIMEOUT 10
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType, eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
enum { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum { NVML_VOLATILE_ECC = 0 };
#define NVML_EVENT_XID 0x0000000000000008ULL

#endif /* NVML_LITE_H */
