/*
 * test_ccht_stress.c - concurrency stress (label "stress", also run under
 * TSan): several threads hammer a few hundred hot keys with mixed batches on
 * a table small enough to evict all the time (bucket, memory and expiry
 * evictions, page moves between size classes). Every value carries its key
 * id, its length and a checksum: a torn or misdirected value fails the test.
 * A second test overwrites keys in place while a scanner checks that every
 * full scan reports every key exactly once.
 */
#ifdef CCHT_NO_CRITERION
#include "plain_test.h" /* TSan builds: see plain_test.h */
#else
#include <criterion/criterion.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccht.h"
#include "ccht_audit.h"
#include "cudis_err.h"
#include "cudis_time.h"

#define N_KEYS 300
#define MAXV 1500
#define BATCH 8

static ccht *T;
static atomic_int stop_flag;
static atomic_ullong checked, torn, bad_status, scan_bad;

/* Checks on the scanner thread: counted, asserted by the main thread. */
#define SCAN_CHECK(cond)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            atomic_fetch_add_explicit(&scan_bad, 1, memory_order_relaxed);                      \
        }                                                                                       \
    } while (0)

static uint64_t fnv(const uint8_t *p, uint32_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

static uint32_t key_name(uint32_t id, uint8_t *buf)
{
    return (uint32_t)snprintf((char *)buf, 32, "hot:%u", id);
}

/* value: [id u32][len u32][payload][fnv u64], len = total length (>= 16) */
static uint32_t make_val(uint32_t id, uint64_t seed, uint32_t len, uint8_t *v)
{
    if (len < 16) {
        len = 16;
    }
    memcpy(v, &id, 4);
    memcpy(v + 4, &len, 4);
    uint64_t x = seed | 1;
    for (uint32_t i = 8; i < len - 8; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v[i] = (uint8_t)x;
    }
    uint64_t h = fnv(v, len - 8);
    memcpy(v + len - 8, &h, 8);
    return len;
}

static bool val_ok(uint32_t id, const uint8_t *v, uint32_t len)
{
    if (len < 16) {
        return false;
    }
    uint32_t vid, vlen;
    uint64_t h;
    memcpy(&vid, v, 4);
    memcpy(&vlen, v + 4, 4);
    memcpy(&h, v + len - 8, 8);
    return vid == id && vlen == len && h == fnv(v, len - 8);
}

typedef struct worker {
    uint32_t seed;
    bool deletes; /* phase 1: every kind of op; phase 2: in-place overwrites only */
    pthread_t th;
} worker;

static uint32_t xr(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void *work(void *arg)
{
    worker *w = arg;
    static _Thread_local cudis_op ops[BATCH];
    static _Thread_local cudis_result res[BATCH];
    static _Thread_local uint8_t in[BATCH * (MAXV + 64)];
    static _Thread_local uint8_t out[BATCH * MAXV];
    uint32_t ids[BATCH];
    while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
        uint32_t n = 1 + xr(&w->seed) % BATCH;
        uint64_t in_len = 0;
        int64_t now = cudis_now_ms();
        for (uint32_t i = 0; i < n; i++) {
            uint32_t id;
            bool dup;
            do {
                id = xr(&w->seed) % N_KEYS;
                dup = false;
                for (uint32_t j = 0; j < i; j++) {
                    dup |= ids[j] == id;
                }
            } while (dup);
            ids[i] = id;
            cudis_op *op = &ops[i];
            memset(op, 0, sizeof(*op));
            op->key_off = in_len;
            op->key_len = key_name(id, in + in_len);
            in_len += op->key_len;
            uint32_t c = xr(&w->seed) % 100;
            if (!w->deletes && c >= 50) {
                c = 50; /* SET */
            }
            if (c < 50) {
                op->code = CUDIS_OP_GET;
            } else if (c < 80) {
                op->code = CUDIS_OP_SET;
                op->flags = c < 55 ? CUDIS_F_GET : 0;
                op->val_off = in_len;
                op->val_len = make_val(id, xr(&w->seed), 16 + xr(&w->seed) % (MAXV - 16),
                                       in + in_len);
                in_len += op->val_len;
                if (w->deletes && c >= 77) {
                    op->expire_ms = now + 1 + xr(&w->seed) % 20;
                }
            } else if (c < 85) {
                op->code = CUDIS_OP_DEL;
            } else if (c < 90) {
                op->code = CUDIS_OP_GET;
                op->flags = CUDIS_F_DEL;
            } else if (c < 95) {
                op->code = CUDIS_OP_EXPIRE;
                op->expire_ms = now + xr(&w->seed) % 50;
            } else {
                op->code = c < 97 ? CUDIS_OP_PERSIST : CUDIS_OP_EXISTS;
            }
        }
        cudis_batch b = {ops, n, in, res, out, sizeof(out), 0, now, NULL};
        if (ccht_execute(T, &b) != 0) {
            atomic_fetch_add_explicit(&bad_status, 1, memory_order_relaxed);
        }
        for (uint32_t i = 0; i < n; i++) {
            if (res[i].status != CUDIS_OK) {
                /* asserted by the main thread (Criterion asserts must not
                 * fire on other threads) */
                atomic_fetch_add_explicit(&bad_status, 1, memory_order_relaxed);
            }
            if (res[i].flags & CUDIS_R_VALUE) {
                atomic_fetch_add_explicit(&checked, 1, memory_order_relaxed);
                if (!val_ok(ids[i], out + res[i].val_off, res[i].val_len)) {
                    atomic_fetch_add_explicit(&torn, 1, memory_order_relaxed);
                }
            }
        }
    }
    return NULL;
}

typedef struct scanner {
    bool unique;          /* every full scan must see each key exactly once */
    uint64_t full_scans;
    pthread_t th;
} scanner;

static int on_key(void *arg, uint8_t db, const uint8_t *key, uint32_t len, int64_t exp)
{
    (void)db;
    (void)exp;
    uint8_t *seen = arg;
    char k[40];
    if (len <= 4 || len >= sizeof(k)) {
        SCAN_CHECK(false);
        return 0;
    }
    memcpy(k, key, len);
    k[len] = 0;
    SCAN_CHECK(strncmp(k, "hot:", 4) == 0);
    int id = atoi(k + 4);
    if (id < 0 || id >= N_KEYS) {
        SCAN_CHECK(false);
        return 0;
    }
    seen[id]++;
    return 0;
}

static void *scan_loop(void *arg)
{
    scanner *s = arg;
    uint8_t seen[N_KEYS];
    while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
        memset(seen, 0, sizeof(seen));
        uint64_t cur = 0;
        do {
            SCAN_CHECK(ccht_scan(T, CUDIS_DB_ALL, cur, 16, cudis_now_ms(), on_key, seen, &cur) ==
                       0);
        } while (cur != 0);
        for (int i = 0; i < N_KEYS; i++) {
            if (s->unique) {
                SCAN_CHECK(seen[i] == 1); /* every key exactly once */
            }
        }
        uint8_t buf[40];
        uint32_t len;
        int rc = ccht_random_key(T, 0, cudis_now_ms(), buf, sizeof(buf), &len);
        SCAN_CHECK(rc == 0 || rc == 1);
        s->full_scans++;
    }
    return NULL;
}

static void run(int n_workers, bool deletes, double seconds)
{
    atomic_store(&stop_flag, 0);
    atomic_store(&checked, 0);
    atomic_store(&torn, 0);
    atomic_store(&bad_status, 0);
    atomic_store(&scan_bad, 0);
    worker w[8];
    scanner sc = {.unique = !deletes};
    for (int i = 0; i < n_workers; i++) {
        w[i].seed = 0x9e3779b9u * (uint32_t)(i + 1);
        w[i].deletes = deletes;
        pthread_create(&w[i].th, NULL, work, &w[i]);
    }
    pthread_create(&sc.th, NULL, scan_loop, &sc);
    uint64_t end = cudis_mono_ns() + (uint64_t)(seconds * 1e9);
    while (cudis_mono_ns() < end) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        cudis_stats s;
        ccht_stats(T, &s);
        cr_assert_leq(s.bytes_used, s.bytes_budget);
        if (deletes) {
            ccht_sweep(T, cudis_now_ms(), 64, NULL);
        }
    }
    atomic_store(&stop_flag, 1);
    for (int i = 0; i < n_workers; i++) {
        pthread_join(w[i].th, NULL);
    }
    pthread_join(sc.th, NULL);
    cudis_stats s;
    ccht_stats(T, &s);
    cr_log_info("stress deletes=%d: %llu values checked, %llu torn, %llu full scans, evictions "
                "bucket %llu memory %llu expired %llu",
                deletes, (unsigned long long)atomic_load(&checked),
                (unsigned long long)atomic_load(&torn), (unsigned long long)sc.full_scans,
                (unsigned long long)s.evict_bucket, (unsigned long long)s.evict_memory,
                (unsigned long long)s.evict_expired);
    cr_assert_eq(atomic_load(&torn), 0, "torn values read");
    cr_assert_eq(atomic_load(&bad_status), 0, "ops failed (e.g. CUDIS_E_FULL)");
    cr_assert_eq(atomic_load(&scan_bad), 0, "scan: a key reported twice, missing or malformed");
    cr_assert_gt(atomic_load(&checked), 100);
    cr_assert_gt(sc.full_scans, 0);
    cr_assert_leq(s.bytes_used, s.bytes_budget);
    /* quiescent now: index, free lists, pages and counters agree */
    ccht_audit au;
    cr_assert_eq(ccht_audit_table(ccht_table_of(T), &au), 0, "audit: %s", au.first_error);
    cr_assert_eq(au.slots, s.items);
    if (!deletes) {
        cr_assert_eq(s.evict_bucket + s.evict_memory + s.evict_expired, 0);
        cr_assert_eq(s.items, N_KEYS);
    } else {
        cr_assert_gt(s.evict_memory, 0);
    }
}

static ccht *mk(uint64_t mem, uint64_t max_items, uint32_t ways)
{
    ccht_options o;
    ccht_options_default(&o);
    o.memory_bytes = mem;
    o.max_items = max_items;
    o.ways = ways;
    o.max_key_len = 32;
    o.max_val_len = MAXV;
    char why[128];
    ccht *t = ccht_create(&o, why, sizeof(why));
    cr_assert_not_null(t, "%s", why);
    return t;
}

/* Hot keys, every op kind, constant eviction: no torn value. */
Test(ccht_stress, hot_keys_no_torn_values, .timeout = 120)
{
    /* 128 slots for 300 keys (bucket evictions) and ~120 KiB of pages for
     * up to 128 values of 16..1500 bytes (memory evictions, page moves). */
    T = mk(128 << 10, 128, 8);
    run(4, true, 3.0);
    ccht_destroy(T);
}

/* In-place overwrites while scanning: every full scan sees every key once. */
Test(ccht_stress, scan_never_twice_under_overwrites, .timeout = 120)
{
    T = mk(8 << 20, 0, 8);
    uint8_t k[32], v[64];
    for (uint32_t id = 0; id < N_KEYS; id++) {
        uint32_t kl = key_name(id, k);
        uint32_t vl = make_val(id, id, 40, v);
        cr_assert_eq(ccht_set(T, k, kl, v, vl, 0, 0), 1);
    }
    run(3, false, 2.0);
    ccht_destroy(T);
}
