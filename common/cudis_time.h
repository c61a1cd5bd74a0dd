/*
 * cudis_time.h - clocks. Expiry times are absolute Unix times in
 * milliseconds (as Redis's PEXPIREAT), read with cudis_now_ms(); durations
 * and latencies use the monotonic clock.
 */
#ifndef CUDIS_TIME_H
#define CUDIS_TIME_H

#include <stdint.h>
#include <time.h>

static inline int64_t cudis_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t cudis_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline uint64_t cudis_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* CUDIS_TIME_H */
