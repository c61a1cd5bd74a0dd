/*
 * cudis_fault.c - the counters of cudis_fault.h (built with CUDIS_FAULTS).
 */
#include "cudis_fault.h"

#ifdef CUDIS_FAULTS
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const site_names[CUDIS_FAULT__N] = {"alloc", "engine", "write"};
static uint64_t at[CUDIS_FAULT__N], every[CUDIS_FAULT__N], calls[CUDIS_FAULT__N];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void parse(void)
{
    const char *s = getenv("CUDIS_FAULT");
    if (s == NULL) {
        return;
    }
    for (int i = 0; i < CUDIS_FAULT__N; i++) {
        size_t n = strlen(site_names[i]);
        if (strncmp(s, site_names[i], n) == 0 && s[n] == '=') {
            char *end;
            at[i] = strtoull(s + n + 1, &end, 10);
            every[i] = *end == '/' ? strtoull(end + 1, NULL, 10) : 0;
            fprintf(stderr, "cudis fault injection: %s call %llu fails (then every %llu)\n",
                    site_names[i], (unsigned long long)at[i], (unsigned long long)every[i]);
        }
    }
}

bool cudis_fault(enum cudis_fault_site site)
{
    pthread_once(&once, parse);
    if (at[site] == 0) {
        return false;
    }
    uint64_t k = __atomic_add_fetch(&calls[site], 1, __ATOMIC_RELAXED);
    if (k < at[site]) {
        return false;
    }
    return k == at[site] || (every[site] != 0 && (k - at[site]) % every[site] == 0);
}
#else
typedef int cudis_fault_unused; /* an empty translation unit is not ISO C */
#endif
