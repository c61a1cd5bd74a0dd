/*
 * load_hist.c - log-linear latency histogram with bounded relative error
 * (see load_hist.h for the bucket layout and the error bound).
 */
#include "load_hist.h"

#include <math.h>
#include <string.h>

#define SUB (1u << LOAD_HIST_SUB_BITS)

void load_hist_reset(struct load_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

static unsigned msb64(uint64_t v)
{
    return 63u - (unsigned)__builtin_clzll(v);
}

unsigned load_hist_index(uint64_t v)
{
    if (v < SUB) {
        return (unsigned)v;
    }
    if (v >> LOAD_HIST_MAX_BITS) {
        return LOAD_HIST_NBUCKETS - 1;
    }
    /* v in [2^(S+e), 2^(S+e+1)): bucket width 2^e, index e*2^S + (v >> e) */
    unsigned e = msb64(v) - LOAD_HIST_SUB_BITS;
    return (e << LOAD_HIST_SUB_BITS) + (unsigned)(v >> e);
}

static unsigned bucket_shift(unsigned idx)
{
    if (idx < 2 * SUB) {
        return 0;
    }
    return (idx >> LOAD_HIST_SUB_BITS) - 1;
}

uint64_t load_hist_bucket_lo(unsigned idx)
{
    if (idx < SUB) {
        return idx;
    }
    unsigned e = bucket_shift(idx);
    uint64_t m = idx - ((uint64_t)e << LOAD_HIST_SUB_BITS); /* in [SUB, 2*SUB) */
    return m << e;
}

uint64_t load_hist_bucket_hi(unsigned idx)
{
    return load_hist_bucket_lo(idx) + (((uint64_t)1 << bucket_shift(idx)) - 1);
}

void load_hist_record_n(struct load_hist *h, uint64_t v, uint64_t n)
{
    if (n == 0) {
        return;
    }
    h->buckets[load_hist_index(v)] += n;
    h->count += n;
    h->sum += (double)v * (double)n;
    if (v < h->min) {
        h->min = v;
    }
    if (v > h->max) {
        h->max = v;
    }
}

void load_hist_record(struct load_hist *h, uint64_t v)
{
    load_hist_record_n(h, v, 1);
}

void load_hist_merge(struct load_hist *dst, const struct load_hist *src)
{
    if (src->count == 0) {
        return;
    }
    for (unsigned i = 0; i < LOAD_HIST_NBUCKETS; i++) {
        dst->buckets[i] += src->buckets[i];
    }
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->min < dst->min) {
        dst->min = src->min;
    }
    if (src->max > dst->max) {
        dst->max = src->max;
    }
}

static uint64_t bucket_value(const struct load_hist *h, unsigned idx)
{
    uint64_t lo = load_hist_bucket_lo(idx);
    uint64_t hi = load_hist_bucket_hi(idx);
    uint64_t mid = lo + (hi - lo + 1) / 2;
    if (mid < h->min) {
        mid = h->min;
    }
    if (mid > h->max) {
        mid = h->max;
    }
    return mid;
}

uint64_t load_hist_percentile(const struct load_hist *h, double p)
{
    if (h->count == 0) {
        return 0;
    }
    if (p >= 100.0) {
        return h->max;
    }
    if (p <= 0.0) {
        return h->min;
    }
    /* rank of the order statistic: ceil(p/100 * n), at least 1 */
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
    if (rank < 1) {
        rank = 1;
    }
    uint64_t cum = 0;
    for (unsigned i = 0; i < LOAD_HIST_NBUCKETS; i++) {
        cum += h->buckets[i];
        if (cum >= rank) {
            return bucket_value(h, i);
        }
    }
    return h->max;
}

double load_hist_mean(const struct load_hist *h)
{
    return h->count ? h->sum / (double)h->count : 0.0;
}

double load_hist_rel_error(void)
{
    return 1.0 / (double)(2u * SUB);
}

int load_hist_write_spectrum(const struct load_hist *h, FILE *f, double divisor)
{
    uint64_t cum = 0;
    if (fprintf(f, "value_us,percentile,count\n") < 0) {
        return -1;
    }
    for (unsigned i = 0; i < LOAD_HIST_NBUCKETS; i++) {
        if (h->buckets[i] == 0) {
            continue;
        }
        cum += h->buckets[i];
        double pct = 100.0 * (double)cum / (double)h->count;
        if (fprintf(f, "%.3f,%.6f,%llu\n", (double)bucket_value(h, i) / divisor, pct,
                    (unsigned long long)h->buckets[i]) < 0) {
            return -1;
        }
    }
    return 0;
}
