/*
 * test_load_hist.c - the latency histogram: bucket geometry, the relative
 * error bound of its percentiles against exact order statistics, merging.
 */
#include "load_hist.h"
#include "load_keys.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

Test(load_hist, bucket_geometry)
{
    struct load_rng r;
    load_rng_seed(&r, 7);
    for (int i = 0; i < 200000; i++) {
        uint64_t v = load_rng_next(&r) >> (load_rng_next(&r) % 64);
        if (v >= (1ull << LOAD_HIST_MAX_BITS)) {
            continue;
        }
        unsigned idx = load_hist_index(v);
        cr_assert_lt(idx, LOAD_HIST_NBUCKETS);
        uint64_t lo = load_hist_bucket_lo(idx), hi = load_hist_bucket_hi(idx);
        cr_assert(lo <= v && v <= hi, "v %llu not in bucket %u [%llu, %llu]",
                  (unsigned long long)v, idx, (unsigned long long)lo, (unsigned long long)hi);
        /* width bounded by lo * 2^-SUB_BITS */
        cr_assert_leq((double)(hi - lo + 1), fmax(1.0, (double)lo / (1 << LOAD_HIST_SUB_BITS)));
    }
    /* buckets are contiguous and increasing */
    for (unsigned i = 1; i < LOAD_HIST_NBUCKETS; i++) {
        cr_assert_eq(load_hist_bucket_lo(i), load_hist_bucket_hi(i - 1) + 1, "gap at %u", i);
    }
    /* small values are exact */
    for (uint64_t v = 0; v < (1u << LOAD_HIST_SUB_BITS) * 2; v++) {
        cr_assert_eq(load_hist_bucket_lo(load_hist_index(v)), v);
        cr_assert_eq(load_hist_bucket_hi(load_hist_index(v)), v);
    }
}

static void check_percentiles(const uint64_t *vals, size_t n)
{
    struct load_hist *h = malloc(sizeof(*h));
    cr_assert_not_null(h);
    load_hist_reset(h);
    for (size_t i = 0; i < n; i++) {
        load_hist_record(h, vals[i]);
    }
    uint64_t *s = malloc(n * sizeof(*s));
    memcpy(s, vals, n * sizeof(*s));
    qsort(s, n, sizeof(*s), cmp_u64);
    const double ps[] = {0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        size_t rank = (size_t)ceil(ps[i] / 100.0 * (double)n);
        if (rank < 1) {
            rank = 1;
        }
        uint64_t exact = s[rank - 1];
        uint64_t got = load_hist_percentile(h, ps[i]);
        double err = fabs((double)got - (double)exact) / (double)(exact ? exact : 1);
        cr_assert_leq(err, load_hist_rel_error(), "p%g: got %llu exact %llu (err %g > %g)", ps[i],
                      (unsigned long long)got, (unsigned long long)exact, err,
                      load_hist_rel_error());
    }
    cr_assert_eq(load_hist_percentile(h, 100.0), s[n - 1]);
    cr_assert_eq(h->count, n);
    free(s);
    free(h);
}

Test(load_hist, percentile_error_bound_log_uniform)
{
    size_t n = 300000;
    uint64_t *v = malloc(n * sizeof(*v));
    struct load_rng r;
    load_rng_seed(&r, 11);
    for (size_t i = 0; i < n; i++) { /* 1 ns .. ~1000 s, log-uniform */
        v[i] = (uint64_t)exp(load_rng_double(&r) * log(1e12));
    }
    check_percentiles(v, n);
    free(v);
}

Test(load_hist, percentile_error_bound_latency_like)
{
    /* a bimodal, heavy-tailed shape like real request latencies */
    size_t n = 200000;
    uint64_t *v = malloc(n * sizeof(*v));
    struct load_rng r;
    load_rng_seed(&r, 12);
    for (size_t i = 0; i < n; i++) {
        double u = load_rng_double(&r);
        double base = u < 0.95 ? 20000.0 : 2000000.0;
        v[i] = (uint64_t)(base * (1.0 + 3.0 * load_rng_double(&r)) / (1.0 - 0.999 * load_rng_double(&r)));
    }
    check_percentiles(v, n);
    free(v);
}

Test(load_hist, merge_equals_recording_everything)
{
    struct load_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *all = malloc(sizeof(*all));
    load_hist_reset(a);
    load_hist_reset(b);
    load_hist_reset(all);
    struct load_rng r;
    load_rng_seed(&r, 3);
    for (int i = 0; i < 50000; i++) {
        uint64_t v = load_rng_below(&r, 10000000);
        load_hist_record(i % 3 ? a : b, v);
        load_hist_record(all, v);
    }
    load_hist_merge(a, b);
    cr_assert_eq(a->count, all->count);
    cr_assert_eq(a->min, all->min);
    cr_assert_eq(a->max, all->max);
    cr_assert_eq(memcmp(a->buckets, all->buckets, sizeof(a->buckets)), 0);
    cr_assert_float_eq(load_hist_mean(a), load_hist_mean(all), 1e-6);
    free(a);
    free(b);
    free(all);
}

Test(load_hist, empty_and_clamped)
{
    struct load_hist *h = malloc(sizeof(*h));
    load_hist_reset(h);
    cr_assert_eq(load_hist_percentile(h, 50.0), 0);
    cr_assert_eq(load_hist_mean(h), 0.0);
    load_hist_record(h, UINT64_MAX / 2); /* beyond the range: last bucket, exact max */
    cr_assert_eq(load_hist_index(UINT64_MAX / 2), LOAD_HIST_NBUCKETS - 1);
    cr_assert_eq(load_hist_percentile(h, 100.0), UINT64_MAX / 2);
    load_hist_record_n(h, 5, 3);
    cr_assert_eq(h->count, 4);
    cr_assert_eq(load_hist_percentile(h, 50.0), 5);
    free(h);
}
