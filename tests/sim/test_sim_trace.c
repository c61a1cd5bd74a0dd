/*
 * test_sim_trace.c - the simulator's trace readers (text and oracleGeneral
 * binary, on fixtures written here), the capacity rule of
 * ../shared/traces/README.md, key sets, byte sizes, and the synthetic
 * generators (Zipf law checked against its formula).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudis_err.h"
#include "sim_trace.h"

/* A fresh temporary directory per test (Criterion forks each test). */
static char tmpdir[256];

static void mk_tmpdir(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/cudis-sim-test-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void rm_tmpdir(void)
{
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(sim_trace, .init = mk_tmpdir, .fini = rm_tmpdir);

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

Test(sim_trace, keys_reader)
{
    char path[400];
    snprintf(path, sizeof(path), "%s/small.keys", tmpdir);
    const char *text = "7\n42\r\n\n7\nuser:1\n18446744073709551615\n18446744073709551616\n0";
    write_file(path, text, strlen(text));
    sim_trace t;
    char why[256];
    cr_assert_eq(sim_trace_read_keys(path, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    cr_assert_str_eq(t.name, "small");
    cr_assert_eq(t.n, 7, "empty line skipped, last line without newline kept: %zu", t.n);
    cr_assert_eq(t.keys[0], 7);
    cr_assert_eq(t.keys[1], 42, "CRLF accepted");
    cr_assert_eq(t.keys[2], 7);
    cr_assert_eq(t.keys[3], fnv1a("user:1"), "non-numeric lines are hashed");
    cr_assert_eq(t.keys[4], UINT64_MAX);
    cr_assert_eq(t.keys[5], fnv1a("18446744073709551616"), "2^64 does not fit: hashed");
    cr_assert_eq(t.keys[6], 0);
    cr_assert_eq(t.unique, 6);
    cr_assert_null(t.sizes);
    sim_trace_free(&t);
}

static void put_rec(unsigned char *r, uint32_t time, uint64_t id, uint32_t size, int64_t next)
{
    for (int i = 0; i < 4; i++) {
        r[i] = (unsigned char)(time >> (8 * i));
        r[12 + i] = (unsigned char)(size >> (8 * i));
    }
    for (int i = 0; i < 8; i++) {
        r[4 + i] = (unsigned char)(id >> (8 * i));
        r[16 + i] = (unsigned char)((uint64_t)next >> (8 * i));
    }
}

Test(sim_trace, oracle_reader)
{
    unsigned char buf[4 * 24 + 1];
    put_rec(buf + 0, 100, 0x0102030405060708ull, 4096, 2);
    put_rec(buf + 24, 101, 5, 512, -1);
    put_rec(buf + 48, 102, 0x0102030405060708ull, 4096, -1);
    put_rec(buf + 72, 103, 0xffffffffffffffffull, 0xfffffff0u, -1);
    char path[400];
    snprintf(path, sizeof(path), "%s/cp.oracleGeneral.bin", tmpdir);
    write_file(path, buf, 4 * 24);
    sim_trace t;
    char why[256];
    cr_assert_eq(sim_trace_read_oracle(path, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    cr_assert_str_eq(t.name, "cp");
    cr_assert_eq(t.n, 4);
    cr_assert_eq(t.keys[0], 0x0102030405060708ull, "little-endian obj_id at offset 4");
    cr_assert_eq(t.keys[1], 5);
    cr_assert_eq(t.keys[3], UINT64_MAX);
    cr_assert_not_null(t.sizes);
    cr_assert_eq(t.sizes[0], 4096, "obj_size at offset 12");
    cr_assert_eq(t.sizes[1], 512);
    cr_assert_eq(t.sizes[3], 0xfffffff0u);
    cr_assert_eq(t.unique, 3);
    cr_assert_eq(t.max_size, 0xfffffff0u);
    cr_assert_eq(t.unique_bytes, 4096ull + 512 + 0xfffffff0u);
    sim_trace_free(&t);

    /* a truncated file is rejected, not half-read */
    write_file(path, buf, 2 * 24 + 5);
    cr_assert_eq(sim_trace_read_oracle(path, &t, why, sizeof(why)), CUDIS_E_PROTO);
    cr_assert(strstr(why, "24-byte") != NULL, "%s", why);
    /* an empty file is an empty trace */
    write_file(path, buf, 0);
    cr_assert_eq(sim_trace_read_oracle(path, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    cr_assert_eq(t.n, 0);
    sim_trace_free(&t);
}

Test(sim_trace, load_resolves_names_paths_generators)
{
    char path[400];
    snprintf(path, sizeof(path), "%s/tiny.keys", tmpdir);
    write_file(path, "1\n2\n1\n", 6);
    unsigned char rec[24];
    put_rec(rec, 1, 9, 100, -1);
    snprintf(path, sizeof(path), "%s/bin1.oracleGeneral.bin", tmpdir);
    write_file(path, rec, 24);

    sim_trace t;
    char why[512];
    cr_assert_eq(sim_trace_load("tiny", tmpdir, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    cr_assert_eq(t.n, 3);
    cr_assert_eq(t.unique, 2);
    sim_trace_free(&t);

    cr_assert_eq(sim_trace_load("bin1", tmpdir, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    cr_assert_eq(t.n, 1);
    cr_assert_eq(t.keys[0], 9);
    cr_assert_eq(t.sizes[0], 100);
    sim_trace_free(&t);

    cr_assert_eq(sim_trace_load(path, NULL, &t, why, sizeof(why)), CUDIS_OK, "a path: %s", why);
    cr_assert_not_null(t.sizes, "a .bin path is read as oracleGeneral");
    sim_trace_free(&t);

    cr_assert_eq(sim_trace_load("nosuch", tmpdir, &t, why, sizeof(why)), CUDIS_E_IO);

    cr_assert_eq(sim_trace_load("uniform:keys=50,n=1000", tmpdir, &t, why, sizeof(why)), CUDIS_OK,
                 "%s", why);
    cr_assert_eq(t.n, 1000);
    cr_assert_eq(t.unique, 50, "1000 uniform draws over 50 keys hit them all");
    sim_trace_free(&t);

    char **names;
    int n = sim_trace_list(tmpdir, &names);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(names[0], "bin1.oracleGeneral.bin");
    cr_assert_str_eq(names[1], "tiny.keys");
    for (int i = 0; i < n; i++) {
        free(names[i]);
    }
    free(names);
}

Test(sim_trace, capacity_formula)
{
    /* The README's table. */
    cr_assert_eq(sim_capacity_objects(7075, 0.05), 352);
    cr_assert_eq(sim_capacity_objects(7075, 0.10), 704);
    cr_assert_eq(sim_capacity_objects(13756, 0.10), 1344);
    cr_assert_eq(sim_capacity_objects(13756, 0.25), 3424);
    cr_assert_eq(sim_capacity_objects(9939, 0.10), 992);
    cr_assert_eq(sim_capacity_objects(9939, 0.25), 2464);
    cr_assert_eq(sim_capacity_objects(48974, 0.25), 12224);
    /* minimum 32; floors to a multiple of 32 */
    cr_assert_eq(sim_capacity_objects(1011, 0.05), 32);
    cr_assert_eq(sim_capacity_objects(10, 0.5), 32);
    cr_assert_eq(sim_capacity_objects(1011, 0.10), 96);
    /* exact multiples stay (6400 * 0.05 = 320 is not exact in binary) */
    cr_assert_eq(sim_capacity_objects(6400, 0.05), 320);
    cr_assert_eq(sim_capacity_objects(1000, 0.064), 64);
    cr_assert_eq(sim_capacity_objects(100000, 1.0), 100000);
    cr_assert_eq(sim_capacity_objects(100001, 1.0), 100000);
}

Test(sim_trace, kset_and_bytes)
{
    sim_kset s;
    cr_assert_eq(sim_kset_init(&s, 100), CUDIS_OK);
    for (uint64_t i = 0; i < 100; i++) {
        cr_assert(sim_kset_add(&s, i * 0x100000000ull));
    }
    for (uint64_t i = 0; i < 100; i++) {
        cr_assert_not(sim_kset_add(&s, i * 0x100000000ull));
    }
    cr_assert_eq(s.count, 100);
    sim_kset_clear(&s);
    cr_assert_eq(s.count, 0);
    cr_assert(sim_kset_add(&s, 0), "cleared set forgets");
    sim_kset_deinit(&s);

    uint64_t keys[] = {5, 5, 0, 7, 0, UINT64_MAX};
    cr_assert_eq(sim_count_unique(keys, 6), 4);

    uint64_t v;
    cr_assert_eq(sim_parse_bytes("128M", &v), CUDIS_OK);
    cr_assert_eq(v, 128ull << 20);
    cr_assert_eq(sim_parse_bytes("1GiB", &v), CUDIS_OK);
    cr_assert_eq(v, 1ull << 30);
    cr_assert_eq(sim_parse_bytes("1.5k", &v), CUDIS_OK);
    cr_assert_eq(v, 1536);
    cr_assert_eq(sim_parse_bytes("4096", &v), CUDIS_OK);
    cr_assert_eq(v, 4096);
    cr_assert_eq(sim_parse_bytes("12X", &v), CUDIS_E_INVAL);
    char b[32];
    cr_assert_str_eq(sim_format_bytes(128ull << 20, b, sizeof(b)), "128MiB");
    cr_assert_str_eq(sim_format_bytes(1ull << 30, b, sizeof(b)), "1GiB");
}

/* ------------------------------------------------------------------------
 * Generators
 * ---------------------------------------------------------------------- */

Test(sim_trace, zipf_sampler_matches_law)
{
    const uint64_t n = 1000;
    const double s = 0.99;
    sim_zipf z;
    cr_assert_eq(sim_zipf_init(&z, n, s), CUDIS_OK);
    double h = 0;
    for (uint64_t i = 1; i <= n; i++) {
        h += pow((double)i, -s);
    }
    uint32_t *cnt = calloc(n, sizeof(uint32_t));
    cr_assert_not_null(cnt);
    sim_rng r;
    sim_rng_seed(&r, 42);
    const uint32_t draws = 2000000;
    for (uint32_t i = 0; i < draws; i++) {
        uint64_t k = sim_zipf_draw(&z, sim_rng_double(&r), sim_rng_double(&r));
        cr_assert_lt(k, n);
        cnt[k]++;
    }
    /* ranks 0..9 and 99 within 5 standard deviations of their expectation */
    const uint64_t check[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 99, 999};
    for (size_t i = 0; i < sizeof(check) / sizeof(check[0]); i++) {
        uint64_t k = check[i];
        double p = pow((double)(k + 1), -s) / h;
        double mean = p * draws, sd = sqrt(draws * p * (1 - p));
        cr_assert_lt(fabs(cnt[k] - mean), 5 * sd + 1, "rank %llu: %u draws, expected %.0f",
                     (unsigned long long)k, cnt[k], mean);
    }
    /* the law's shape: f(1)/f(2) ~ 2^s */
    cr_assert_lt(fabs((double)cnt[0] / cnt[1] - pow(2, s)), 0.05);
    free(cnt);
    sim_zipf_deinit(&z);

    /* exponent 0 is uniform */
    cr_assert_eq(sim_zipf_init(&z, 10, 0.0), CUDIS_OK);
    uint32_t u[10] = {0};
    for (uint32_t i = 0; i < 100000; i++) {
        u[sim_zipf_draw(&z, sim_rng_double(&r), sim_rng_double(&r))]++;
    }
    for (int i = 0; i < 10; i++) {
        cr_assert_lt(fabs(u[i] - 10000.0), 500, "bucket %d: %u", i, u[i]);
    }
    sim_zipf_deinit(&z);
    cr_assert_eq(sim_zipf_init(&z, 0, 1.0), CUDIS_E_INVAL);
}

Test(sim_trace, zipf_trace_sane_and_seeded)
{
    sim_gen_cfg g;
    char why[256];
    cr_assert_eq(sim_gen_parse("zipf:s=1.2,keys=10K,n=200K,seed=7", &g, why, sizeof(why)), CUDIS_OK,
                 "%s", why);
    cr_assert_eq(g.kind, SIM_GEN_ZIPF);
    cr_assert_eq(g.keys, 10000);
    cr_assert_eq(g.requests, 200000);
    cr_assert_float_eq(g.exponent, 1.2, 1e-12);
    sim_trace a, b, c;
    cr_assert_eq(sim_trace_generate(&g, &a, why, sizeof(why)), CUDIS_OK, "%s", why);
    cr_assert_eq(sim_trace_generate(&g, &b, why, sizeof(why)), CUDIS_OK, "%s", why);
    g.seed = 8;
    cr_assert_eq(sim_trace_generate(&g, &c, why, sizeof(why)), CUDIS_OK, "%s", why);
    cr_assert_eq(a.n, 200000);
    cr_assert(memcmp(a.keys, b.keys, a.n * sizeof(uint64_t)) == 0, "same seed, same trace");
    cr_assert(memcmp(a.keys, c.keys, a.n * sizeof(uint64_t)) != 0, "other seed, other trace");
    cr_assert_leq(a.unique, 10000);
    cr_assert_gt(a.unique, 3000, "a skewed law still reaches many keys: %zu", a.unique);
    /* the hottest key takes about 1/H(10000, 1.2) of the requests */
    double h = 0;
    for (int i = 1; i <= 10000; i++) {
        h += pow(i, -1.2);
    }
    sim_kset s;
    cr_assert_eq(sim_kset_init(&s, a.n), CUDIS_OK);
    uint64_t top = 0, best = 0;
    for (size_t i = 0; i < 2000 && i < a.n; i++) { /* the hottest key shows up early */
        uint64_t k = a.keys[i], n = 0;
        if (!sim_kset_add(&s, k)) {
            continue;
        }
        for (size_t j = 0; j < a.n; j++) {
            n += a.keys[j] == k;
        }
        if (n > best) {
            best = n;
            top = k;
        }
    }
    (void)top;
    double share = (double)best / a.n;
    cr_assert_lt(fabs(share - 1 / h), 0.01, "hottest share %.4f, expected %.4f", share, 1 / h);
    sim_kset_deinit(&s);
    sim_trace_free(&a);
    sim_trace_free(&b);
    sim_trace_free(&c);

    cr_assert_eq(sim_gen_parse("zipf:q=1", &g, why, sizeof(why)), CUDIS_E_INVAL);
    cr_assert_eq(sim_gen_parse("zipfx", &g, why, sizeof(why)), CUDIS_E_INVAL);
    cr_assert_eq(sim_gen_parse("zipf:keys=0", &g, why, sizeof(why)), CUDIS_E_INVAL);
}

Test(sim_trace, scan_and_latest_generators)
{
    sim_gen_cfg g;
    char why[256];
    sim_trace t;
    cr_assert_eq(
        sim_gen_parse("scanzipf:s=0.9,keys=5000,n=300K,scan=0.2,len=500", &g, why, sizeof(why)),
        CUDIS_OK, "%s", why);
    cr_assert_eq(sim_trace_generate(&g, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    /* scan keys live in their own id range (top byte 1) and come in runs */
    size_t scan = 0, runs = 0;
    for (size_t i = 0; i < t.n; i++) {
        bool is_scan = (t.keys[i] >> 56) == 1;
        scan += is_scan;
        runs += is_scan && (i == 0 || (t.keys[i - 1] >> 56) != 1);
    }
    double frac = (double)scan / t.n;
    cr_assert_lt(fabs(frac - 0.2), 0.03, "scan fraction %.3f", frac);
    cr_assert_lt(fabs((double)scan / runs - 500), 50, "scan length %.1f", (double)scan / runs);
    sim_trace_free(&t);

    cr_assert_eq(sim_gen_parse("latest:s=0.99,keys=1000,n=100K,insert=0.05", &g, why, sizeof(why)),
                 CUDIS_OK, "%s", why);
    cr_assert_eq(sim_trace_generate(&g, &t, why, sizeof(why)), CUDIS_OK, "%s", why);
    /* about 5% of requests create keys, so ~5000 new keys on top of (a part of) 1000 */
    cr_assert_gt(t.unique, 1000 + 4000);
    cr_assert_lt(t.unique, 1000 + 6000);
    /* reads favour what was just inserted: repeats within a short window are common */
    sim_kset s;
    cr_assert_eq(sim_kset_init(&s, 64), CUDIS_OK);
    size_t near = 0;
    for (size_t i = 64; i < t.n; i += 64) {
        sim_kset_clear(&s);
        for (size_t j = i - 64; j < i; j++) {
            sim_kset_add(&s, t.keys[j]);
        }
        near += !sim_kset_add(&s, t.keys[i]);
    }
    cr_assert_gt((double)near / (t.n / 64), 0.3, "recent keys are re-read");
    sim_kset_deinit(&s);
    sim_trace_free(&t);
}
