/*
 * test_ccht_resize.c - the resizable index (ccht_resize_*): doubling and
 * halving online with ops between the slices, every key kept and the
 * table consistent (audit) at each step; a scan that spans a resize; keys
 * with a TTL still reclaimed after one; a flush in the middle of one; and
 * the tick's decisions: small items grow the index, big ones shrink it,
 * and both hold more than the fixed index sized by the default guess;
 * the size hint for an empty table (ccht_index_expect).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccht.h"
#include "ccht_audit.h"
#include "ccht_layout.h"
#include "cudis_err.h"
#include "cudis_time.h"

/* ccht_set and ccht_get run at the real clock: expiries are set from it */
static int64_t now0;
#define NOW (now0 ? now0 : (now0 = cudis_now_ms()))

static ccht *mk(uint64_t mem, bool resizable)
{
    ccht_options o;
    ccht_options_default(&o);
    o.memory_bytes = mem;
    o.max_val_len = 1 << 16;
    o.resizable = resizable;
    char why[128] = "";
    ccht *x = ccht_create(&o, why, sizeof(why));
    cr_assert_not_null(x, "create: %s", why);
    return x;
}

static void audit(ccht *t, const char *when)
{
    static ccht_audit au;
    cr_assert_eq(ccht_audit_table(ccht_table_of(t), &au), 0, "audit %s: %s", when, au.first_error);
}

static uint32_t key_of(char *buf, uint32_t i)
{
    return (uint32_t)snprintf(buf, 32, "key:%u", i);
}

static void put(ccht *t, uint32_t i, uint32_t vlen, int64_t exp)
{
    char k[32], v[2048];
    uint32_t kl = key_of(k, i);
    memset(v, 'a' + (int)(i % 26), vlen);
    cr_assert_eq(ccht_set(t, k, kl, v, vlen, exp, 0), 1, "set %u", i);
}

/* 1 when key i holds its value, 0 when missing; fails on a wrong value. */
static int has(ccht *t, uint32_t i, uint32_t vlen)
{
    char k[32], v[2048];
    uint32_t kl = key_of(k, i), got = 0;
    int rc = ccht_get(t, k, kl, v, sizeof(v), &got);
    cr_assert_geq(rc, 0);
    if (rc == 0) {
        return 0;
    }
    cr_assert_eq(got, vlen, "key %u: length %u", i, got);
    for (uint32_t j = 0; j < vlen; j++) {
        cr_assert_eq(v[j], 'a' + (int)(i % 26), "key %u: byte %u", i, j);
    }
    return 1;
}

static cudis_stats stats(ccht *t)
{
    cudis_stats s;
    ccht_stats(t, &s);
    return s;
}

/* Resize t to `to` buckets in slices of `slice` old buckets; between the
 * slices read 64 of the n keys held and write 16 new ones (numbered from
 * *next), auditing every 16th slice. */
static void resize_with_ops(ccht *t, uint64_t to, uint32_t slice, uint32_t n, uint32_t *next,
                            uint32_t vlen)
{
    cr_assert_eq(ccht_resize_start(t, to), CUDIS_OK);
    cr_assert_eq(ccht_resize_start(t, to), CUDIS_E_INVAL, "one resize at a time");
    uint32_t r = 12345, steps = 0;
    while (ccht_resize_step(t, slice, NULL) == 1) {
        for (int k = 0; k < 64; k++) {
            r = r * 1103515245u + 12345u;
            cr_assert_eq(has(t, r % n, vlen), 1, "key %u lost during the resize", r % n);
        }
        for (int k = 0; k < 16; k++) {
            put(t, (*next)++, vlen, 0);
        }
        if (++steps % 16 == 0) {
            audit(t, "during the resize");
        }
    }
    cr_assert_gt(steps, 4, "the resize took several slices");
    cr_assert_eq(ccht_buckets(t), to);
    audit(t, "after the resize");
}

Test(resize, doubling_keeps_every_key)
{
    ccht *t = mk(8 << 20, true);
    uint64_t nb = ccht_buckets(t);
    uint32_t n = (uint32_t)(nb * 8 / 2); /* half the slots */
    for (uint32_t i = 0; i < n; i++) {
        put(t, i, 8, 0);
    }
    uint32_t next = n;
    resize_with_ops(t, 2 * nb, 256, n, &next, 8);
    for (uint32_t i = 0; i < next; i++) {
        cr_assert_eq(has(t, i, 8), 1, "key %u", i);
    }
    cudis_stats s = stats(t);
    cr_assert_eq(s.items, next);
    cr_assert_eq(s.evict_bucket + s.evict_memory, 0, "a doubling evicts nothing");
    cr_assert_eq(s.capacity, 2 * nb * 8);
    ccht_destroy(t);
}

Test(resize, halving_keeps_every_key_at_low_load)
{
    ccht *t = mk(8 << 20, true);
    uint64_t nb = ccht_buckets(t);
    uint32_t n = (uint32_t)(nb * 8 / 4); /* a quarter of the slots: half after */
    for (uint32_t i = 0; i < n; i++) {
        put(t, i, 8, 0);
    }
    uint32_t next = n;
    resize_with_ops(t, nb / 2, 256, n, &next, 8);
    cudis_stats s = stats(t);
    for (uint32_t i = 0; i < next; i++) {
        cr_assert_eq(has(t, i, 8), 1, "key %u (of %u; %llu evicted)", i, next,
                     (unsigned long long)s.evict_bucket);
    }
    cr_assert_eq(s.items, next);
    cr_assert_eq(s.capacity, nb / 2 * 8);
    /* and back up */
    resize_with_ops(t, nb, 256, next, &next, 8);
    cr_assert_eq(stats(t).items, next);
    ccht_destroy(t);
}

Test(resize, sizes_outside_the_range_are_refused)
{
    ccht *t = mk(8 << 20, true);
    uint64_t nb = ccht_buckets(t);
    cr_assert_eq(ccht_resize_start(t, nb + 1), CUDIS_E_INVAL);
    cr_assert_eq(ccht_resize_start(t, nb * 4), CUDIS_E_INVAL);
    cr_assert_eq(ccht_resize_start(t, nb), CUDIS_E_INVAL);
    ccht_destroy(t);
    ccht *f = mk(8 << 20, false);
    cr_assert_eq(ccht_resize_start(f, 2 * ccht_buckets(f)), CUDIS_E_INVAL, "fixed index");
    cr_assert_eq(ccht_resize_tick(f, NOW, 1024, NULL), 0);
    ccht_destroy(f);
}

typedef struct seen {
    uint32_t n;
    uint8_t *count;
} seen;

static int on_key(void *arg, uint8_t db, const uint8_t *key, uint32_t len, int64_t exp)
{
    (void)db;
    (void)exp;
    seen *s = arg;
    char buf[32];
    cr_assert_lt(len, sizeof(buf));
    memcpy(buf, key, len);
    buf[len] = 0;
    uint32_t i = (uint32_t)strtoul(buf + 4, NULL, 10);
    cr_assert_lt(i, s->n);
    s->count[i]++;
    return 0;
}

/* Scan half the table, resize it (to `to`) with the scan going on between
 * slices, finish the scan: every key was reported, none twice. */
static void scan_across(uint64_t (*to)(uint64_t), uint32_t fill_div)
{
    ccht *t = mk(8 << 20, true);
    uint64_t nb = ccht_buckets(t);
    uint32_t n = (uint32_t)(nb * 8 / fill_div);
    for (uint32_t i = 0; i < n; i++) {
        put(t, i, 8, 0);
    }
    seen s = {.n = n, .count = calloc(n, 1)};
    uint64_t cur = 0;
    int calls = 0;
    do {
        cr_assert_eq(ccht_scan(t, CUDIS_DB_ALL, cur, 64, NOW, on_key, &s, &cur), 0);
        calls++;
    } while (cur != 0 && calls < (int)(nb / 64 / 2));
    cr_assert_neq(cur, 0);
    cr_assert_eq(ccht_resize_start(t, to(nb)), CUDIS_OK);
    while (cur != 0) {
        ccht_resize_step(t, 100, NULL);
        cr_assert_eq(ccht_scan(t, CUDIS_DB_ALL, cur, 64, NOW, on_key, &s, &cur), 0);
    }
    while (ccht_resize_step(t, 1 << 20, NULL) == 1) {
    }
    for (uint32_t i = 0; i < n; i++) {
        cr_assert_eq(s.count[i], 1, "key %u reported %u times", i, s.count[i]);
    }
    cr_assert_eq(stats(t).evict_bucket, 0);
    free(s.count);
    ccht_destroy(t);
}

static uint64_t twice(uint64_t n)
{
    return 2 * n;
}

static uint64_t half(uint64_t n)
{
    return n / 2;
}

Test(resize, scan_goes_on_across_a_doubling)
{
    scan_across(twice, 2);
}

Test(resize, scan_goes_on_across_a_halving)
{
    scan_across(half, 5);
}

Test(resize, keys_with_a_ttl_are_still_reclaimed)
{
    ccht *t = mk(8 << 20, true);
    uint64_t nb = ccht_buckets(t);
    uint32_t n = (uint32_t)(nb * 8 / 4);
    for (uint32_t i = 0; i < n; i++) {
        put(t, i, 8, i % 3 == 0 ? NOW + 3600000 : 0); /* due in an hour: a slow build takes its time */
    }
    cr_assert_eq(ccht_resize_start(t, 2 * nb), CUDIS_OK);
    while (ccht_resize_step(t, 1000, NULL) == 1) {
    }
    audit(t, "after doubling");
    cr_assert_eq(ccht_resize_start(t, nb), CUDIS_OK);
    while (ccht_resize_step(t, 1000, NULL) == 1) {
    }
    audit(t, "after halving");
    uint64_t units = ccht_sweep_units(t);
    int got = ccht_sweep(t, NOW + 7200000, (uint32_t)units + 1000, NULL);
    cr_assert_eq(got, (int)((n + 2) / 3), "one pass reclaims every expired key");
    cr_assert_eq(stats(t).items, n - (n + 2) / 3);
    audit(t, "after the sweep");
    ccht_destroy(t);
}

Test(resize, flush_in_the_middle_of_a_resize)
{
    ccht *t = mk(8 << 20, true);
    uint64_t nb = ccht_buckets(t);
    for (uint32_t i = 0; i < 5000; i++) {
        put(t, i, 8, i % 2 ? NOW + 100000 : 0);
    }
    cr_assert_eq(ccht_resize_start(t, 2 * nb), CUDIS_OK);
    cr_assert_eq(ccht_resize_step(t, 100, NULL), 1);
    cr_assert_eq(ccht_flush(t, 3), CUDIS_OK);
    cr_assert_eq(stats(t).items, 5000, "another database's flush keeps them");
    cr_assert_eq(ccht_flush(t, CUDIS_DB_ALL), CUDIS_OK);
    cr_assert_eq(stats(t).items, 0);
    cr_assert_eq(ccht_buckets(t), 2 * nb, "an empty index needs no moving");
    cr_assert_eq(ccht_resize_step(t, 100, NULL), 0);
    audit(t, "after the flush");
    put(t, 7, 8, 0);
    cr_assert_eq(has(t, 7, 8), 1);
    ccht_destroy(t);
}

/* Fill t with keys of vlen-byte values, running the resize tick between
 * rounds as the server does, until the store is full and settled; returns
 * how many keys it holds (each read back whole). */
static uint64_t fill_and_settle(ccht *t, uint32_t vlen, uint32_t total)
{
    for (uint32_t i = 0; i < total; i++) {
        put(t, i, vlen, 0);
        if (i % 4096 == 4095) {
            for (int k = 0; k < 4; k++) {
                ccht_resize_tick(t, NOW, 65536, NULL);
            }
        }
    }
    for (int k = 0; k < 10000 && ccht_resize_tick(t, NOW, 65536, NULL) == 1; k++) {
    }
    audit(t, "after filling");
    uint64_t held = 0;
    for (uint32_t i = 0; i < total; i++) {
        held += (uint64_t)has(t, i, vlen);
    }
    cr_assert_eq(held, stats(t).items);
    cr_assert_leq(stats(t).bytes_used, stats(t).bytes_budget);
    return held;
}

Test(resize, small_items_grow_the_index_and_it_holds_more)
{
    ccht *fixed = mk(16 << 20, false), *t = mk(16 << 20, true);
    uint64_t nb = ccht_buckets(t);
    uint64_t a = fill_and_settle(fixed, 4, 1500000);
    uint64_t b = fill_and_settle(t, 4, 1500000);
    cr_assert_geq(ccht_buckets(t), 2 * nb, "the index grew");
    cr_assert_gt((double)b, 1.5 * (double)a, "resizable holds %llu keys, fixed %llu",
                 (unsigned long long)b, (unsigned long long)a);
    ccht_destroy(fixed);
    ccht_destroy(t);
}

Test(resize, big_items_shrink_the_index_and_it_holds_more)
{
    ccht *fixed = mk(32 << 20, false), *t = mk(32 << 20, true);
    uint64_t nb = ccht_buckets(t);
    uint64_t a = fill_and_settle(fixed, 1000, 60000);
    uint64_t b = fill_and_settle(t, 1000, 60000);
    cr_assert_leq(ccht_buckets(t), nb / 4, "the index shrank");
    cr_assert_gt((double)b, 1.15 * (double)a, "resizable holds %llu keys, fixed %llu",
                 (unsigned long long)b, (unsigned long long)a);
    ccht_destroy(fixed);
    ccht_destroy(t);
}

/* ccht_index_expect (a dump.rdb's RESIZEDB at start): an empty index is
 * halved at once as far as the tick would halve it once the items were
 * in, and filling it then starts no resize; a table that holds items, a
 * fixed index, or small items (a doubling) are left alone. */
Test(resize, expect_sizes_an_empty_index_as_the_tick_would)
{
    ccht *t = mk(32 << 20, true), *fixed = mk(32 << 20, false);
    uint64_t nb = ccht_buckets(t);
    cr_assert_eq(ccht_index_expect(fixed, 60000, 1009), 0, "a fixed index");
    cr_assert_eq(ccht_index_expect(t, 60000, 40), 0, "small items: no halving");
    cr_assert_eq(ccht_index_expect(t, 100, 1009), 0, "too few items to say");
    cr_assert_eq(ccht_buckets(t), nb);
    int h = ccht_index_expect(t, 60000, 1009);
    cr_assert_geq(h, 2, "halvings: %d", h);
    cr_assert_eq(ccht_buckets(t), nb >> h);
    audit(t, "after the halvings");
    uint64_t held = fill_and_settle(t, 1000, 60000);
    cr_assert_eq(ccht_buckets(t), nb >> h,
                 "the tick keeps the size the hint chose: %llu -> %llu (from %llu), held %llu",
                 (unsigned long long)(nb >> h), (unsigned long long)ccht_buckets(t),
                 (unsigned long long)nb, (unsigned long long)held);
    uint64_t a = fill_and_settle(fixed, 1000, 60000);
    cr_assert_gt((double)held, 1.15 * (double)a, "hinted holds %llu keys, fixed %llu",
                 (unsigned long long)held, (unsigned long long)a);
    cr_assert_eq(ccht_index_expect(t, 60000, 1009), 0, "a table with items");
    cr_assert_eq(ccht_buckets(t), nb >> h);
    ccht_destroy(t);
    ccht_destroy(fixed);
}

Test(resize, items_of_48_bytes_keep_the_first_size)
{
    /* 16-byte keys and 32-byte values: the default guess is near enough */
    ccht *t = mk(16 << 20, true);
    uint64_t nb = ccht_buckets(t);
    fill_and_settle(t, 37, 400000);
    cr_assert_eq(ccht_buckets(t), nb);
    ccht_destroy(t);
}

/* Under noeviction the index grows only into free arena pages, evicting
 * nothing: every write it acknowledged stays, and it takes more after. */
Test(resize, noeviction_grows_without_evicting)
{
    ccht_options o;
    ccht_options_default(&o);
    o.memory_bytes = 16 << 20;
    o.resizable = true;
    o.policy = CUDIS_POL_NOEVICTION;
    char why[128] = "";
    ccht *t = ccht_create(&o, why, sizeof(why));
    cr_assert_not_null(t, "create: %s", why);
    uint64_t nb = ccht_buckets(t);
    static uint8_t ok[4000000];
    char k[32], v[4];
    uint32_t i = 0, acked = 0, refused = 0;
    for (int round = 0; round < 2; round++) {
        for (refused = 0; refused < 1000 && i < sizeof(ok); i++) {
            uint32_t kl = key_of(k, i);
            memset(v, 'a' + (int)(i % 26), sizeof(v));
            int rc = ccht_set(t, k, kl, v, 4, 0, 0);
            cr_assert(rc == 1 || rc == CUDIS_E_FULL, "set %u: %d", i, rc);
            ok[i] = rc == 1;
            acked += rc == 1;
            refused += rc != 1;
            if (i % 4096 == 4095) {
                ccht_resize_tick(t, NOW, 65536, NULL);
            }
        }
        for (int n = 0; n < 1000 && ccht_resize_tick(t, NOW, 65536, NULL) == 1; n++) {
        }
    }
    cudis_stats s = stats(t);
    cr_assert_eq(s.evict_bucket + s.evict_memory, 0, "noeviction evicted");
    cr_assert_geq(ccht_buckets(t), 2 * nb, "the index grew");
    cr_assert_eq(s.items, acked);
    for (uint32_t j = 0; j < i; j++) {
        if (ok[j]) {
            cr_assert_eq(has(t, j, 4), 1, "acknowledged key %u lost", j);
        }
    }
    cr_assert_gt((double)acked, 1.2 * (double)(nb * 8 * 0.9), "%u acknowledged", acked);
    audit(t, "after");
    ccht_destroy(t);
}

/* A resizable table's budget may be raised to 4x its first (its block
 * spans that in address space) and holds about that much more. */
Test(resize, budget_raised_up_to_4x)
{
    ccht *t = mk(8 << 20, true);
    uint64_t first = fill_and_settle(t, 1000, 20000);
    cr_assert_eq(ccht_set_memory(t, 32 << 20), 32u << 20);
    cr_assert_eq(ccht_set_memory(t, 64 << 20), 32u << 20, "no more than 4x");
    uint64_t more = fill_and_settle(t, 1000, 60000);
    cr_assert_gt((double)more, 3.5 * (double)first, "%llu items at 32 MiB, %llu at 8 MiB",
                 (unsigned long long)more, (unsigned long long)first);
    cr_assert_leq(stats(t).bytes_used, 32u << 20);
    ccht_destroy(t);
}
