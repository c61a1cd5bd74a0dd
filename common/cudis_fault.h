/*
 * cudis_fault.h - fault injection for the test build (cmake -DCUDIS_FAULTS=ON):
 * the N-th call through a site fails as the real call would, so the code
 * that handles the failure runs for real (no mocks). The environment
 * variable CUDIS_FAULT picks the site and N: "alloc=N", "engine=N" or
 * "write=N", optionally "/P" for every P-th call after the N-th too
 * ("write=100/37"). In other builds cudis_fault() is a constant false.
 *
 * Sites:
 *   alloc  - a client's query buffer growing (the allocation a client
 *            drives; reply buffers are bounded by client-output-buffer-
 *            limit first; every other allocation keeps the checked
 *            allocator's log-and-abort policy, cudis_alloc.h);
 *   engine - engine_execute (the batch fails: each op gets the error);
 *   write  - a socket write of replies (as ECONNRESET).
 */
#ifndef CUDIS_FAULT_H
#define CUDIS_FAULT_H

#include <stdbool.h>

enum cudis_fault_site { CUDIS_FAULT_ALLOC, CUDIS_FAULT_ENGINE, CUDIS_FAULT_WRITE, CUDIS_FAULT__N };

#ifdef CUDIS_FAULTS
/* True when this call through `site` is to fail (thread-safe). */
bool cudis_fault(enum cudis_fault_site site);
#else
static inline bool cudis_fault(enum cudis_fault_site site)
{
    (void)site;
    return false;
}
#endif

#endif /* CUDIS_FAULT_H */
