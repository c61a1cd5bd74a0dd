/*
 * test_load_keys.c - the Zipf key generator against the exact Zipf
 * probabilities, the uniform generator, the rank->id bijection and the
 * value-size specs.
 */
#include "load_keys.h"

#include "cudis_err.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

static void check_zipf(uint64_t n, double s, uint64_t draws)
{
    struct load_keygen g;
    cr_assert_eq(load_keygen_init(&g, n, s), 0);
    struct load_rng r;
    load_rng_seed(&r, 42);
    uint64_t *cnt = calloc(n + 1, sizeof(*cnt));
    for (uint64_t i = 0; i < draws; i++) {
        uint64_t k = load_keygen_rank(&g, &r);
        cr_assert(k >= 1 && k <= n, "rank %llu out of [1, %llu]", (unsigned long long)k,
                  (unsigned long long)n);
        cnt[k]++;
    }
    /* each of the top ranks within 5 standard deviations of its expectation */
    double chi2 = 0.0;
    for (uint64_t k = 1; k <= n; k++) {
        double p = load_keygen_prob(&g, k);
        double e = p * (double)draws;
        double sd = sqrt((double)draws * p * (1.0 - p));
        if (k <= 20) {
            cr_assert_leq(fabs((double)cnt[k] - e), 5.0 * sd + 1.0,
                          "s=%g rank %llu: %llu draws, expected %.1f", s, (unsigned long long)k,
                          (unsigned long long)cnt[k], e);
        }
        chi2 += ((double)cnt[k] - e) * ((double)cnt[k] - e) / e;
    }
    /* chi-square with n-1 degrees of freedom: mean n-1, sd sqrt(2(n-1)) */
    double df = (double)(n - 1);
    cr_assert_leq(chi2, df + 6.0 * sqrt(2.0 * df), "s=%g chi2 %.1f for %g dof", s, chi2, df);
    free(cnt);
}

Test(load_keys, zipf_099_matches_exact_distribution)
{
    check_zipf(1000, 0.99, 2000000);
}

Test(load_keys, zipf_exponent_one_and_steep)
{
    check_zipf(200, 1.0, 1000000);
    check_zipf(200, 1.5, 1000000);
    check_zipf(500, 0.5, 1000000);
}

Test(load_keys, uniform_is_flat)
{
    check_zipf(100, 0.0, 500000);
}

Test(load_keys, huge_range_is_cheap_and_in_range)
{
    struct load_keygen g;
    cr_assert_eq(load_keygen_init(&g, 4000000000ull, 0.99), 0);
    struct load_rng r;
    load_rng_seed(&r, 5);
    uint64_t top = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t id = load_keygen_next(&g, &r);
        cr_assert_lt(id, 4000000000ull);
        top += load_keygen_rank(&g, &r) == 1;
    }
    cr_assert_gt(top, 0); /* rank 1 is popular: p ~ 4% for s=0.99, n=4e9 */
}

Test(load_keys, rank_to_id_is_a_bijection)
{
    const uint64_t ns[] = {1, 2, 3, 10, 97, 1000, 1024, 65536, 100000};
    for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
        uint64_t n = ns[t];
        struct load_keygen g;
        cr_assert_eq(load_keygen_init(&g, n, 0.99), 0);
        unsigned char *seen = calloc(n, 1);
        for (uint64_t k = 1; k <= n; k++) {
            uint64_t id = load_keygen_id_of_rank(&g, k);
            cr_assert_lt(id, n);
            cr_assert_eq(seen[id], 0, "n=%llu: id %llu twice", (unsigned long long)n,
                         (unsigned long long)id);
            seen[id] = 1;
        }
        free(seen);
    }
}

Test(load_keys, bad_parameters)
{
    struct load_keygen g;
    cr_assert_eq(load_keygen_init(&g, 0, 0.99), CUDIS_E_INVAL);
    cr_assert_eq(load_keygen_init(&g, 10, -1.0), CUDIS_E_INVAL);
    cr_assert_eq(load_keygen_init(&g, 10, NAN), CUDIS_E_INVAL);
}

Test(load_keys, value_size_specs)
{
    struct load_vsize v;
    struct load_rng r;
    load_rng_seed(&r, 9);
    cr_assert_eq(load_vsize_parse(&v, "32"), 0);
    cr_assert_eq(load_vsize_next(&v, &r), 32);
    cr_assert_float_eq(load_vsize_mean(&v), 32.0, 1e-9);

    cr_assert_eq(load_vsize_parse(&v, "16-1024"), 0);
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t s = load_vsize_next(&v, &r);
        cr_assert(s >= 16 && s <= 1024);
        sum += s;
    }
    cr_assert_float_eq(sum / 100000, 520.0, 5.0);

    cr_assert_eq(load_vsize_parse(&v, "32:5,512:3,4096:2"), 0);
    cr_assert_eq(v.max, 4096);
    cr_assert_float_eq(load_vsize_mean(&v), 0.5 * 32 + 0.3 * 512 + 0.2 * 4096, 1e-6);
    int n4096 = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t s = load_vsize_next(&v, &r);
        cr_assert(s == 32 || s == 512 || s == 4096);
        n4096 += s == 4096;
    }
    cr_assert_float_eq(n4096 / 100000.0, 0.2, 0.01);

    const char *bad[] = {"", "x", "10-5", "32:", "32:0", "32:1,", "32;1", "1-"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(load_vsize_parse(&v, bad[i]), CUDIS_E_INVAL, "accepted '%s'", bad[i]);
    }
}
