/*
 * gpu_store.h - the "gpu" engine: the CCHT in GPU memory behind the
 * engine_store_ops interface (engine/engine_store.h).
 *
 * Built only when CMake found nvcc (target cudis_kernels, which also defines
 * CUDIS_HAVE_CUDA=1 for its users). create() initialises CUDA lazily and
 * returns NULL with the reason (no CUDA device, driver too old, device not
 * supported by this build, out of device memory, CUDA error) so that "auto"
 * can fall back to "cpu".
 */
#ifndef GPU_STORE_H
#define GPU_STORE_H

#include "engine_store.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const engine_store_ops gpu_store_ops;

#ifdef __cplusplus
}
#endif

#endif /* GPU_STORE_H */
