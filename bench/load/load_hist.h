/*
 * load_hist.h - a latency histogram with bounded relative error
 * (HdrHistogram-style log-linear buckets), used by cudis-bench.
 *
 * Values (nanoseconds, or any non-negative integer) below 2^LOAD_HIST_SUB_BITS
 * are counted exactly; above that each power-of-two range is split into
 * 2^LOAD_HIST_SUB_BITS equal buckets, so a bucket's width is at most
 * 2^-LOAD_HIST_SUB_BITS of its lower bound. A reported percentile is the
 * midpoint of its bucket (clamped to the recorded min/max), so its relative
 * error against the exact order statistic is at most
 * load_hist_rel_error() = 2^-(LOAD_HIST_SUB_BITS+1).
 * Values at or above 2^LOAD_HIST_MAX_BITS are clamped into the last bucket
 * (and still counted in max). A histogram is plain memory: not thread-safe;
 * give each thread its own and merge.
 */
#ifndef LOAD_HIST_H
#define LOAD_HIST_H

#include <stdint.h>
#include <stdio.h>

#define LOAD_HIST_SUB_BITS 7  /* 128 sub-buckets per octave: <= 0.39% error */
#define LOAD_HIST_MAX_BITS 42 /* 2^42 ns = 73 minutes */
#define LOAD_HIST_NBUCKETS \
    (((LOAD_HIST_MAX_BITS - LOAD_HIST_SUB_BITS) + 1) << LOAD_HIST_SUB_BITS)

struct load_hist {
    uint64_t count;
    uint64_t min;
    uint64_t max;
    double sum;
    uint64_t buckets[LOAD_HIST_NBUCKETS];
};

/* Empties the histogram. */
void load_hist_reset(struct load_hist *h);

/* Bucket index of value v (exposed for tests). */
unsigned load_hist_index(uint64_t v);

/* Smallest and largest value that fall into bucket idx. */
uint64_t load_hist_bucket_lo(unsigned idx);
uint64_t load_hist_bucket_hi(unsigned idx);

/* Counts one value. */
void load_hist_record(struct load_hist *h, uint64_t v);

/* Counts value v n times. */
void load_hist_record_n(struct load_hist *h, uint64_t v, uint64_t n);

/* Adds the counts of src to dst. */
void load_hist_merge(struct load_hist *dst, const struct load_hist *src);

/* The value at percentile p (0..100): the smallest recorded value v such
 * that at least p% of the values are <= v, to within load_hist_rel_error().
 * p >= 100 returns the exact max; an empty histogram returns 0. */
uint64_t load_hist_percentile(const struct load_hist *h, double p);

/* Mean of the recorded values (exact), 0 if empty. */
double load_hist_mean(const struct load_hist *h);

/* The bound on a percentile's relative error. */
double load_hist_rel_error(void);

/* Writes the percentile spectrum as CSV lines "value_us,percentile,count"
 * (one per non-empty bucket, cumulative percentile), divisor scales values
 * (1000 turns ns into us). Returns 0 or -1 on a write error. */
int load_hist_write_spectrum(const struct load_hist *h, FILE *f, double divisor);

#endif /* LOAD_HIST_H */
