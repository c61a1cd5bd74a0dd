/*
 * test_gpu_exec_host.c - the GPU engine's per-thread code (kernels/
 * gpu_dev.h: the bodies of the kernels, running the one executor of
 * cuckoo/ccht_exec.h) and its arena, run on the CPU. Needs no GPU and no
 * CUDA: it checks the logic the kernels execute against the cpu engine on
 * random streams, against a model under eviction, and for duplicate-free
 * inserts with several threads (a full table audit).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccht.h"
#include "ccht_audit.h"
#include "ccht_geom.h"
#include "ccht_store.h"
#include "engine.h"
#include "gk_checks.h"
#include "gpu_dev.h"

/* The device code against the cpu engine on one random stream: every
 * result, and the keys each batch reported expired (through the device
 * mirror of the sink, gpu_ev_mirror/gpu_ev_merge). */
static void gold_vs_cpu(uint32_t threads, uint64_t seed, uint32_t max_val)
{
    uint64_t seen = 0;
    engine_config cfg;
    gk_config(&cfg, 64ull << 20, 1u << 16);
    char why[256] = "";
    gk_backend sim, cpu;
    cr_assert_eq(gk_backend_hostsim(&sim, &cfg, threads, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(gk_backend_store(&cpu, &ccht_store_ops, &cfg, why, sizeof(why)), 0, "%s", why);
    gk_stream_opts o = {.seed = seed,
                        .batches = 300,
                        .batch_ops = 64,
                        .n_keys = 300,
                        .max_val = max_val,
                        .events = true,
                        .events_seen = &seen};
    char msg[512] = "";
    int rc = gk_gold(&sim, &cpu, &o, msg, sizeof(msg));
    gk_backend_destroy(&sim);
    gk_backend_destroy(&cpu);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_assert_gt(seen, 50, "the stream's expired keys are events (%llu)", (unsigned long long)seen);
}

Test(gpu_exec_host, gold_single_thread)
{
    gold_vs_cpu(1, 1, 40);
    gold_vs_cpu(1, 2, 300);
}

Test(gpu_exec_host, gold_four_threads)
{
    gold_vs_cpu(4, 3, 40);
}

/* ------------------------------------------------------------------------
 * Events of the device code
 * ---------------------------------------------------------------------- */

/* A table of 256 items given a stream over 3,000 keys, on one thread (the
 * device code is then the cpu engine bit for bit): the same results and
 * the same EVICTED and EXPIRED events, batch by batch. */
Test(gpu_exec_host, events_gold_evicting)
{
    engine_config cfg;
    gk_config(&cfg, 16ull << 20, 256);
    char why[256] = "";
    gk_backend sim, cpu;
    cr_assert_eq(gk_backend_hostsim(&sim, &cfg, 1, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(gk_backend_store(&cpu, &ccht_store_ops, &cfg, why, sizeof(why)), 0, "%s", why);
    uint64_t seen = 0;
    gk_stream_opts o = {.seed = 77,
                        .batches = 200,
                        .batch_ops = 256,
                        .n_keys = 3000,
                        .max_val = 64,
                        .events = true,
                        .events_seen = &seen};
    char msg[512] = "";
    int rc = gk_gold(&sim, &cpu, &o, msg, sizeof(msg));
    cudis_stats st;
    sim.stats(sim.ctx, &st);
    gk_backend_destroy(&sim);
    gk_backend_destroy(&cpu);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_assert_gt(st.evict_bucket, 1000, "the stream evicts (%llu)",
                 (unsigned long long)st.evict_bucket);
    cr_assert_eq(seen, st.evict_bucket + st.evict_memory + st.evict_expired,
                 "one event per removal: %llu events", (unsigned long long)seen);
}

static void ev_put(cudis_evbuf *ev, uint8_t kind, const char *key)
{
    uint32_t n = (uint32_t)strlen(key);
    uint8_t *dst = cudis_ev_add(ev, kind, 7, n);
    if (dst != NULL) {
        memcpy(dst, key, n);
    }
}

/* The mirror of a sink that holds events already: room for the rest, its
 * records appended after the sink's with their key offsets moved, and a
 * mirror that overflowed, or a sink another user filled meanwhile, count
 * as lost without writing past the sink's caps. */
Test(gpu_exec_host, events_mirror_merge)
{
    cudis_event recs[8];
    uint8_t keys[40];
    memset(recs, 0xEE, sizeof(recs));
    memset(keys, 0xEE, sizeof(keys));
    cudis_evbuf h = {.recs = recs, .cap = 6, .keys = keys, .keys_cap = 32};
    ev_put(&h, CUDIS_EV_EVICTED, "first");
    cudis_evbuf m;
    uint8_t area[512];
    gpu_ev_mirror(&h, &m, area);
    cr_assert_eq(m.cap, 5);
    cr_assert_eq(m.keys_cap, 27);
    cr_assert_leq(gpu_ev_area_bytes(&m), sizeof(area));
    ev_put(&m, CUDIS_EV_EXPIRED, "second");
    ev_put(&m, CUDIS_EV_EVICTED, "third");
    gpu_ev_merge(&h, &m, m.recs, m.keys);
    cr_assert_eq(h.len, 3);
    cr_assert_eq(h.keys_len, 16);
    cr_assert(!cudis_ev_lost(&h));
    cr_assert_eq(h.recs[1].kind, CUDIS_EV_EXPIRED);
    cr_assert_eq(h.recs[1].db, 7);
    cr_assert_eq(h.recs[1].key_off, 5);
    cr_assert_eq(memcmp(keys + h.recs[1].key_off, "second", 6), 0);
    cr_assert_eq(h.recs[2].key_off, 11);
    cr_assert_eq(memcmp(keys + h.recs[2].key_off, "third", 5), 0);

    /* a mirror that runs out: 3 records of room, 16 bytes */
    gpu_ev_mirror(&h, &m, area);
    cr_assert_eq(m.cap, 3);
    cr_assert_eq(m.keys_cap, 16);
    ev_put(&m, CUDIS_EV_EVICTED, "0123456789");
    ev_put(&m, CUDIS_EV_EVICTED, "abcdefghij"); /* bytes lost: kind 0 */
    ev_put(&m, CUDIS_EV_EXPIRED, "xyz");        /* after lost bytes: lost too */
    ev_put(&m, CUDIS_EV_EXPIRED, "lost");       /* no record */
    /* meanwhile another user of h took one record */
    ev_put(&h, CUDIS_EV_EVICTED, "other");
    gpu_ev_merge(&h, &m, m.recs, m.keys);
    cr_assert(cudis_ev_lost(&h));
    cr_assert_eq(h.len, 4 + 4, "every reservation counts");
    cr_assert_eq(h.keys_len, 21 + 27);
    cr_assert_eq(memcmp(keys + h.recs[3].key_off, "other", 5), 0);
    cr_assert_eq(h.recs[4].kind, CUDIS_EV_EVICTED, "still fits after the other user's");
    cr_assert_eq(h.recs[4].key_off, 21);
    cr_assert_eq(memcmp(keys + 21, "0123456789", 10), 0);
    cr_assert_eq(h.recs[5].kind, 0, "lost in the mirror already");
    /* "xyz" would be record 6: past the sink's cap */
    for (size_t i = 6 * sizeof(cudis_event); i < sizeof(recs); i++) {
        cr_assert_eq(((uint8_t *)recs)[i], 0xEE, "a record past cap");
    }
    for (size_t i = 32; i < sizeof(keys); i++) {
        cr_assert_eq(keys[i], 0xEE, "key bytes past keys_cap");
    }
}

Test(gpu_exec_host, evict_model)
{
    engine_config cfg;
    gk_config(&cfg, 1u << 20, 0);
    cfg.expected_item_bytes = 200;
    char why[256] = "";
    gk_backend sim;
    cr_assert_eq(gk_backend_hostsim(&sim, &cfg, 2, why, sizeof(why)), 0, "%s", why);
    gk_stream_opts o = {
        .seed = 7, .batches = 60, .batch_ops = 512, .n_keys = 20000, .max_val = 1500};
    char msg[512] = "";
    uint64_t ev = 0;
    int rc = gk_evict_model(&sim, &o, &ev, msg, sizeof(msg));
    cudis_stats st;
    sim.stats(sim.ctx, &st);
    gk_backend_destroy(&sim);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_assert_gt(ev, 0, "the stream is larger than the budget: evictions expected");
    cr_assert_leq(st.bytes_used, st.bytes_budget);
    cr_assert_gt(st.items, 100, "the budget holds a useful number of items (%llu)",
                 (unsigned long long)st.items);
}

Test(gpu_exec_host, no_duplicates_with_threads)
{
    engine_config cfg;
    gk_config(&cfg, 8u << 20, 4096); /* few slots: many bucket evictions */
    char why[256] = "";
    gk_backend sim;
    cr_assert_eq(gk_backend_hostsim(&sim, &cfg, 4, why, sizeof(why)), 0, "%s", why);
    gk_stream_opts o = {
        .seed = 11, .batches = 80, .batch_ops = 1024, .n_keys = 8000, .max_val = 100};
    char msg[512] = "";
    uint64_t ev = 0;
    int rc = gk_evict_model(&sim, &o, &ev, msg, sizeof(msg));
    cr_assert_eq(rc, 0, "%s", msg);
    ccht_audit au;
    int bad = ccht_audit_table(gk_hostsim_table(&sim), &au);
    cudis_stats st;
    sim.stats(sim.ctx, &st);
    gk_backend_destroy(&sim);
    cr_assert_eq(bad, 0, "audit: %s", au.first_error);
    cr_assert_eq(au.duplicates, 0);
    cr_assert_eq(au.slots, st.items, "slots in the index %llu, items counted %llu",
                 (unsigned long long)au.slots, (unsigned long long)st.items);
    cr_assert_gt(ev, 0);
}

/* The arena without eviction: every chunk of a class comes out once, none
 * outside the arena, and all come back after being freed. */
Test(gpu_exec_host, allocator_round_trip)
{
    ccht_geom g;
    const char *why = NULL;
    cr_assert_eq(ccht_geom_plan(&g, 1u << 20, 1024, 8, 64, &why), 0, "%s", why);
    cr_assert_leq(g.total, 1u << 20);
    uint8_t *mem = aligned_alloc(4096, g.total);
    memset(mem, 0, g.total);
    ccht_table T;
    ccht_geom_bind(&g, &T, mem, 64, 4096, true, 1);
    ccht_geom_meta_init(&g, mem + g.meta_off, false);
    const ccht_arena *a = &T.a;
    uint32_t cls = ccht_arena_class_for(a, 100);
    cr_assert_lt(cls, a->n_classes);
    cr_assert_geq(a->class_size[cls], 100);
    cr_assert(cls == 0 || a->class_size[cls - 1] < 100);
    uint64_t size = a->class_size[cls];
    uint64_t want = (uint64_t)a->n_pages * (a->page_bytes / size);
    uint64_t *got = malloc(sizeof(uint64_t) * (want + 1));
    uint64_t n = 0;
    for (;;) {
        uint64_t off = ccht_arena_alloc(a, cls, (uint32_t)n);
        if (off == CCHT_NO_CHUNK) {
            break;
        }
        cr_assert_leq(off + size, T.v.arena_bytes);
        cr_assert_eq(off % 8, 0);
        cr_assert_eq(ccht_arena_chunk_class(a, off), cls);
        cr_assert_lt(n, want + 1, "more chunks than the arena holds");
        got[n++] = off;
    }
    cr_assert_eq(n, want, "allocated %llu chunks, arena holds %llu", (unsigned long long)n,
                 (unsigned long long)want);
    for (uint64_t i = 1; i < n; i++) {
        for (uint64_t j = i < 64 ? 0 : i - 64; j < i; j++) {
            cr_assert_neq(got[i], got[j]);
        }
    }
    /* a large item needs free pages: none are left */
    cr_assert_eq(ccht_arena_alloc(a, CCHT_CLS_LARGE + 2, 0), CCHT_NO_CHUNK);
    for (uint64_t i = 0; i < n; i++) {
        ccht_arena_free(a, got[i], (uint32_t)i);
    }
    ccht_audit au;
    cr_assert_eq(ccht_audit_table(&T, &au), 0, "%s", au.first_error);
    cr_assert_eq(au.free_chunks, n);
    uint64_t again = 0;
    while (ccht_arena_alloc(a, cls, (uint32_t)again) != CCHT_NO_CHUNK) {
        again++;
    }
    cr_assert_eq(again, n, "after freeing everything, %llu of %llu chunks came back",
                 (unsigned long long)again, (unsigned long long)n);
    free(got);
    free(mem);
}

/* The conformance suite's budget_never_exceeded workload (2 MiB, values of
 * 0..4000 or 0..64 bytes, new keys every round): every SET must evict
 * rather than fail, and the budget must hold. */
Test(gpu_exec_host, budget_pressure_mixed_sizes)
{
    engine_config cfg;
    gk_config(&cfg, 2u << 20, 0);
    char why[256] = "";
    gk_backend sim;
    cr_assert_eq(gk_backend_hostsim(&sim, &cfg, 1, why, sizeof(why)), 0, "%s", why);
    static uint8_t val[4096], in[1 << 20];
    static cudis_op ops[256];
    static cudis_result res[256];
    uint64_t rng = 42;
    uint32_t full = 0;
    for (int round = 0; round < 60; round++) {
        uint64_t at = 0;
        for (int i = 0; i < 256; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t r = rng >> 11;
            int n =
                snprintf((char *)in + at, 32, "b:%d:%llu", round, (unsigned long long)(r % 100000));
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t vl = (uint32_t)((rng >> 11) % 4000);
            if (r & 0x100000) {
                vl = (uint32_t)((rng >> 13) % 64);
            }
            ops[i] = (cudis_op){.code = CUDIS_OP_SET, .key_off = at, .key_len = (uint32_t)n};
            at += (uint64_t)n;
            memcpy(in + at, val, vl);
            ops[i].val_off = at;
            ops[i].val_len = vl;
            at += vl;
        }
        cudis_batch b = {.ops = ops, .n_ops = 256, .in = in, .res = res, .now_ms = 1};
        cr_assert_eq(sim.exec(sim.ctx, &b), 0);
        for (int i = 0; i < 256; i++) {
            full += res[i].status != CUDIS_OK;
        }
        cudis_stats st;
        sim.stats(sim.ctx, &st);
        cr_assert_leq(st.bytes_used, st.bytes_budget);
    }
    cudis_stats st;
    sim.stats(sim.ctx, &st);
    gk_backend_destroy(&sim);
    cr_assert_eq(full, 0, "%u SETs failed instead of evicting", full);
    cr_assert_gt(st.evict_memory + st.evict_bucket, 0);
    cr_assert_gt(st.items, 100, "items %llu", (unsigned long long)st.items);
}

/* ------------------------------------------------------------------------
 * Device faults, with the host simulation standing in for the device
 * ---------------------------------------------------------------------- */

/* One SET per key k0..k0+n-1 (value "v<k>"), then GETs of keys g0..g0+n-1;
 * returns the number of GET hits, asserting each hit's value. */
static uint32_t set_then_get(engine *e, int k0, int g0, int n, int *rc_out)
{
    static uint8_t in[1 << 16], out[1 << 16];
    static cudis_op ops[512];
    static cudis_result res[512];
    uint64_t at = 0;
    for (int i = 0; i < n; i++) {
        int kl = snprintf((char *)in + at, 32, "key:%d", k0 + i);
        int vl = snprintf((char *)in + at + kl, 32, "v%d", k0 + i);
        ops[i] = (cudis_op){.code = CUDIS_OP_SET,
                            .key_off = at,
                            .key_len = (uint32_t)kl,
                            .val_off = at + (uint64_t)kl,
                            .val_len = (uint32_t)vl};
        at += (uint64_t)(kl + vl);
    }
    cudis_batch b = {.ops = ops, .n_ops = (uint32_t)n, .in = in, .res = res, .now_ms = 1};
    *rc_out = engine_execute(e, &b);
    if (*rc_out != CUDIS_OK) {
        return 0;
    }
    for (int i = 0; i < n; i++) {
        cr_assert_eq(res[i].status, CUDIS_OK);
    }
    at = 0;
    for (int i = 0; i < n; i++) {
        int kl = snprintf((char *)in + at, 32, "key:%d", g0 + i);
        ops[i] = (cudis_op){.code = CUDIS_OP_GET, .key_off = at, .key_len = (uint32_t)kl};
        at += (uint64_t)kl;
    }
    cudis_batch g = {.ops = ops,
                     .n_ops = (uint32_t)n,
                     .in = in,
                     .res = res,
                     .out = out,
                     .out_cap = sizeof(out),
                     .now_ms = 1};
    *rc_out = engine_execute(e, &g);
    uint32_t hits = 0;
    for (int i = 0; *rc_out == CUDIS_OK && i < n; i++) {
        if (res[i].flags & CUDIS_R_VALUE) {
            char want[32];
            int wl = snprintf(want, sizeof(want), "v%d", g0 + i);
            cr_assert_eq(res[i].val_len, (uint32_t)wl);
            cr_assert_eq(memcmp(out + res[i].val_off, want, (size_t)wl), 0);
            hits++;
        }
    }
    return hits;
}

/* A hostsim engine whose nth batch meets a device fault, failing over to
 * a fresh cpu store. */
static engine *open_failing(uint64_t nth)
{
    engine_config cfg;
    gk_config(&cfg, 8u << 20, 0);
    char why[256] = "";
    gk_hostsim_inject(nth);
    engine *e = engine_create_store(&gk_hostsim_store_ops, &cfg, &ccht_store_ops, why, sizeof(why));
    cr_assert_not_null(e, "%s", why);
    return e;
}

/* Under "auto" semantics a device fault switches to a fresh cpu engine: the
 * batch that met it runs on the cpu, the cache restarts empty, the failure
 * is reported and counted. */
Test(gpu_exec_host, fault_fails_over_to_a_fresh_cpu_engine)
{
    engine *e = open_failing(5);
    int rc;
    cr_assert_eq(set_then_get(e, 0, 0, 100, &rc), 100);   /* batches 1, 2 */
    cr_assert_eq(set_then_get(e, 100, 0, 100, &rc), 100); /* 3, 4: the old keys are there */
    cr_assert_str_eq(engine_name(e), "hostsim");
    cr_assert_null(engine_failure(e));
    /* batch 5 meets the fault: it runs again on the new cpu engine */
    cr_assert_eq(set_then_get(e, 200, 200, 100, &rc), 100);
    cr_assert_eq(rc, CUDIS_OK);
    cr_assert_str_eq(engine_name(e), "cpu");
    cr_assert_eq(engine_failovers(e), 1);
    const char *f = engine_failure(e);
    cr_assert_not_null(f);
    cr_assert_neq(strstr(f, "hostsim engine failed: injected device fault"), NULL, "%s", f);
    cr_assert_neq(strstr(f, "switched to a fresh cpu engine"), NULL, "%s", f);
    /* the cache restarted empty: the keys of batches 1-4 are gone */
    cr_assert_eq(set_then_get(e, 300, 0, 100, &rc), 0);
    cr_assert_eq(rc, CUDIS_OK);
    char info[4096];
    engine_info(e, info, sizeof(info));
    cr_assert_neq(strstr(info, "engine_failovers:1\r\n"), NULL, "%s", info);
    engine_destroy(e);
}

/* Without a fallback (an explicit "gpu") the engine reports the failure on
 * every later call and never hangs. */
Test(gpu_exec_host, fault_without_fallback_fails_every_batch)
{
    engine_config cfg;
    gk_config(&cfg, 8u << 20, 0);
    char why[256] = "";
    gk_hostsim_inject(3);
    engine *e = engine_create_store(&gk_hostsim_store_ops, &cfg, NULL, why, sizeof(why));
    cr_assert_not_null(e, "%s", why);
    int rc;
    cr_assert_eq(set_then_get(e, 0, 0, 50, &rc), 50);
    (void)set_then_get(e, 50, 50, 50, &rc);
    cr_assert_eq(rc, CUDIS_E_DEVFAIL);
    (void)set_then_get(e, 50, 50, 50, &rc);
    cr_assert_eq(rc, CUDIS_E_DEVFAIL);
    cr_assert_str_eq(engine_name(e), "hostsim");
    cr_assert_eq(engine_failovers(e), 0);
    cr_assert_not_null(engine_failure(e));
    cr_assert_neq(strstr(engine_failure(e), "injected device fault"), NULL);
    engine_destroy(e);
}

/* A device fault under a batch with a sink: the batch runs again on the
 * fresh cpu store and the sink says events were lost (every key of the
 * failed store is gone). */
Test(gpu_exec_host, events_failover_marks_lost)
{
    engine *e = open_failing(2);
    cudis_event recs[4];
    uint8_t keys[64];
    cudis_evbuf ev = {.recs = recs, .cap = 4, .keys = keys, .keys_cap = sizeof(keys)};
    cudis_op op = {.code = CUDIS_OP_SET, .key_len = 1, .val_len = 1};
    cudis_result res;
    cudis_batch b = {
        .ops = &op, .n_ops = 1, .in = (const uint8_t *)"kv", .res = &res, .now_ms = 1, .ev = &ev};
    cr_assert_eq(engine_execute(e, &b), CUDIS_OK);
    cr_assert(!cudis_ev_lost(&ev));
    cr_assert_eq(ev.len, 0);
    cr_assert_eq(engine_execute(e, &b), CUDIS_OK); /* meets the fault */
    cr_assert_eq(engine_failovers(e), 1);
    cr_assert(cudis_ev_lost(&ev), "a failover drops every key: the sink must say so");
    engine_destroy(e);
}

/* ------------------------------------------------------------------------
 * Regressions of the device code, run on the host
 * ---------------------------------------------------------------------- */

/* Size-class calcification: after memory filled with 300-byte values, every
 * SET of a 3,000-byte value failed (CUDIS_E_FULL) at 8, 64 and 256 MB:
 * pages never changed class. Pages must move; none may fail. */
static void calcification(uint64_t budget)
{
    engine_config cfg;
    gk_config(&cfg, budget, 0);
    cfg.expected_item_bytes = 300;
    cfg.threads = 4;
    char why[256] = "";
    engine *e = engine_create_store(&gk_hostsim_store_ops, &cfg, NULL, why, sizeof(why));
    cr_assert_not_null(e, "%s", why);
    static uint8_t val[3000], in[2048 * 3100];
    static cudis_op ops[2048];
    static cudis_result res[2048];
    memset(val, 'x', sizeof(val));
    uint64_t fill = budget / 300 + budget / 1500;
    uint32_t failed = 0;
    for (int phase = 0; phase < 2; phase++) {
        uint64_t total = phase == 0 ? fill : 5120;
        uint32_t vlen = phase == 0 ? 300 : 3000;
        for (uint64_t done = 0; done < total;) {
            uint32_t n = total - done < 2048 ? (uint32_t)(total - done) : 2048;
            uint64_t at = 0;
            for (uint32_t i = 0; i < n; i++) {
                int kl = snprintf((char *)in + at, 32, "p%d:%llu", phase,
                                  (unsigned long long)(done + i));
                memcpy(in + at + kl, val, vlen);
                ops[i] = (cudis_op){.code = CUDIS_OP_SET,
                                    .key_off = at,
                                    .key_len = (uint32_t)kl,
                                    .val_off = at + (uint64_t)kl,
                                    .val_len = vlen};
                at += (uint64_t)kl + vlen;
            }
            cudis_batch b = {.ops = ops, .n_ops = n, .in = in, .res = res, .now_ms = 1};
            cr_assert_eq(engine_execute(e, &b), CUDIS_OK);
            for (uint32_t i = 0; i < n; i++) {
                failed += res[i].status != CUDIS_OK;
            }
            done += n;
        }
        cr_assert_eq(failed, 0, "%llu MiB, phase %d: %u SETs failed",
                     (unsigned long long)(budget >> 20), phase, failed);
    }
    cudis_stats st;
    engine_stats(e, &st);
    cr_assert_gt(st.evict_memory, 0);
    cr_assert_leq(st.bytes_used, st.bytes_budget);
    engine_destroy(e);
}

Test(gpu_exec_host, regress_calcification_300_then_3000_bytes, .timeout = 300)
{
    calcification(8ull << 20);
    calcification(64ull << 20);
    calcification(256ull << 20);
}

/* The gold stream of the old selftest (seed 202, 4096-op batches) met
 * CUDIS_E_FULL on a GETEX at batch 6 with 0.3% of a 64 MB arena live; seeds
 * 2-5 failed too. */
Test(gpu_exec_host, regress_gold_seed_202_getex_full, .timeout = 300)
{
    static const uint64_t seeds[] = {202, 2, 3, 4, 5};
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
        engine_config cfg;
        gk_config(&cfg, 64ull << 20, 1u << 16);
        char why[256] = "";
        gk_backend sim, cpu;
        cr_assert_eq(gk_backend_hostsim(&sim, &cfg, 4, why, sizeof(why)), 0, "%s", why);
        cr_assert_eq(gk_backend_store(&cpu, &ccht_store_ops, &cfg, why, sizeof(why)), 0, "%s", why);
        gk_stream_opts o = {
            .seed = seeds[i], .batches = 200, .batch_ops = 4096, .n_keys = 5000, .max_val = 100};
        char msg[512] = "";
        int rc = gk_gold(&sim, &cpu, &o, msg, sizeof(msg));
        gk_backend_destroy(&sim);
        gk_backend_destroy(&cpu);
        cr_assert_eq(rc, 0, "%s", msg);
    }
}

/* Values of any size up to the budget: the device code and the cpu engine
 * store and return values far bigger than a page (runs of pages), and a
 * big value finds room in a full table by evicting. */
static void big_values(engine *e)
{
    static const uint32_t sizes[] = {70000, 1u << 20, 5u << 20, 20u << 20};
    uint32_t max = 20u << 20;
    uint8_t *val = malloc(max), *out = malloc(max + 64);
    static uint8_t in_small[1 << 16];
    static cudis_op ops[256];
    static cudis_result res[256];
    cr_assert_not_null(val);
    cr_assert_not_null(out);
    for (uint32_t i = 0; i < max; i++) {
        val[i] = (uint8_t)(i * 131 + 7);
    }
    for (int round = 0; round < 2; round++) {
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            uint8_t *in = malloc(sizes[s] + 16);
            cr_assert_not_null(in);
            int kl = snprintf((char *)in, 16, "big%zu", s);
            memcpy(in + kl, val, sizes[s]);
            cudis_op op = {.code = CUDIS_OP_SET,
                           .key_len = (uint32_t)kl,
                           .val_off = (uint64_t)kl,
                           .val_len = sizes[s]};
            cudis_result r;
            cudis_batch b = {.ops = &op, .n_ops = 1, .in = in, .res = &r, .now_ms = 1};
            cr_assert_eq(engine_execute(e, &b), CUDIS_OK);
            cr_assert_eq(r.status, CUDIS_OK, "round %d: SET of %u bytes: %d", round, sizes[s],
                         r.status);
            cudis_op get = {.code = CUDIS_OP_GET, .key_len = (uint32_t)kl};
            cudis_batch g = {.ops = &get,
                             .n_ops = 1,
                             .in = in,
                             .res = &r,
                             .out = out,
                             .out_cap = max + 64,
                             .now_ms = 1};
            cr_assert_eq(engine_execute(e, &g), CUDIS_OK);
            cr_assert(r.flags & CUDIS_R_VALUE, "a %u-byte value was not kept", sizes[s]);
            cr_assert_eq(r.val_len, sizes[s]);
            cr_assert_eq(memcmp(out + r.val_off, val, sizes[s]), 0);
            free(in);
        }
        /* fill the rest of memory with small items: the next round's big
         * values must evict to find runs of pages */
        for (int k = 0; k < 1300 && round == 0; k++) {
            uint64_t at = 0;
            for (int i = 0; i < 256; i++) {
                int n = snprintf((char *)in_small + at, 32, "s%d:%d", k, i);
                ops[i] = (cudis_op){.code = CUDIS_OP_SET,
                                    .key_off = at,
                                    .key_len = (uint32_t)n,
                                    .val_off = at,
                                    .val_len = 200};
                at += (uint64_t)n + 200;
            }
            cudis_batch b = {.ops = ops, .n_ops = 256, .in = in_small, .res = res, .now_ms = 1};
            cr_assert_eq(engine_execute(e, &b), CUDIS_OK);
            for (int i = 0; i < 256; i++) {
                cr_assert_eq(res[i].status, CUDIS_OK);
            }
        }
    }
    cudis_stats st;
    engine_stats(e, &st);
    cr_assert_leq(st.bytes_used, st.bytes_budget);
    cr_assert_gt(st.evict_memory, 0);
    free(val);
    free(out);
}

Test(gpu_exec_host, values_far_bigger_than_a_page, .timeout = 300)
{
    engine_config cfg;
    gk_config(&cfg, 64ull << 20, 0);
    cfg.max_val_len = 32u << 20;
    char why[256] = "";
    engine *e = engine_create_store(&gk_hostsim_store_ops, &cfg, NULL, why, sizeof(why));
    cr_assert_not_null(e, "%s", why);
    big_values(e);
    engine_destroy(e);
    e = engine_create("cpu", &cfg, why, sizeof(why));
    cr_assert_not_null(e, "%s", why);
    big_values(e);
    engine_destroy(e);
}

/* The batch kernel's body never reads outside the batch's input: an op
 * whose key or value lies beyond in_len gets CUDIS_E_INVAL (the
 * device-pointer API passes caller-made records straight to it). */
Test(gpu_exec_host, batch_offsets_are_bounds_checked)
{
    engine_config cfg;
    gk_config(&cfg, 8u << 20, 0);
    char why[256] = "";
    ccht *t = ccht_store_ops.create(&cfg, why, sizeof(why));
    cr_assert_not_null(t, "%s", why);
    const ccht_table *T = ccht_table_of(t);
    static const uint8_t in[16] = "keyvaluekeyvalue";
    cudis_op ops[5] = {
        {.code = CUDIS_OP_SET, .key_len = 3, .val_off = 3, .val_len = 5}, /* fine */
        {.code = CUDIS_OP_GET, .key_off = 14, .key_len = 3},              /* past the end */
        {.code = CUDIS_OP_SET, .key_len = 3, .val_off = 8, .val_len = 9}, /* value past it */
        {.code = CUDIS_OP_GET, .key_off = UINT64_MAX - 1, .key_len = 3},  /* wraps */
        {.code = CUDIS_OP_DEL, .key_off = 16, .key_len = 0},              /* empty key at the end */
    };
    cudis_result res[5];
    gpu_batch_args a;
    memset(&a, 0, sizeof(a));
    a.ops = ops;
    a.in = in;
    a.in_len = sizeof(in);
    a.res = res;
    a.n_ops = 5;
    a.now_ms = 1;
    gpu_launch_at(0, 5, T->v.n_buckets, &a.l);
    ccht_tally ty;
    ccht_tally_zero(&ty);
    for (uint64_t i = 0; i < gpu_launch_threads(&a.l, a.n_ops); i++) {
        gpu_batch_op(T, &a, i, &ty);
    }
    ccht_tally_flush(T, &ty);
    cr_assert_eq(res[0].status, CUDIS_OK);
    cr_assert_eq(res[1].status, CUDIS_E_INVAL);
    cr_assert_eq(res[2].status, CUDIS_E_INVAL);
    cr_assert_eq(res[3].status, CUDIS_E_INVAL);
    cr_assert_eq(res[4].status, CUDIS_OK);
    ccht_destroy(t);
}

/* The fixed-width kernels' body (gpu_fixed_op: the device-pointer API's
 * fast path) against the cpu engine: rows set through it read back through
 * it and through ordinary batches of the cpu engine alike; misses listed. */
Test(gpu_exec_host, fixed_width_path_matches_the_cpu_engine)
{
    enum { N = 3000, VL = 24 };
    engine_config cfg;
    gk_config(&cfg, 16u << 20, 0);
    char why[256] = "";
    ccht *t = ccht_store_ops.create(&cfg, why, sizeof(why));
    cr_assert_not_null(t, "%s", why);
    const ccht_table *T = ccht_table_of(t);
    static uint64_t keys[N];
    static uint8_t vals[N * VL], rows[N * VL];
    static uint32_t lens[N], miss[N];
    static int32_t status[N];
    for (uint32_t i = 0; i < N; i++) {
        keys[i] = 0x9e3779b97f4a7c15ull * (i + 1);
        for (uint32_t j = 0; j < VL; j++) {
            vals[i * VL + j] = (uint8_t)(i * 13 + j);
        }
    }
    uint32_t n_miss = 0;
    gpu_fixed_args a;
    memset(&a, 0, sizeof(a));
    a.keys = (const uint8_t *)keys;
    a.key_len = 8;
    a.n = N / 2; /* set the first half */
    a.vals = vals;
    a.val_stride = VL;
    a.status = status;
    a.now_ms = 1;
    ccht_tally ty;
    ccht_tally_zero(&ty);
    gpu_launch_at(*T->clock, a.n, T->v.n_buckets, &a.l);
    *T->clock += a.n;
    for (uint64_t i = 0; i < gpu_launch_threads(&a.l, a.n); i++) {
        gpu_fixed_op(T, &a, i, CUDIS_OP_SET, &ty);
    }
    for (uint32_t i = 0; i < N / 2; i++) {
        cr_assert_eq(status[i], CUDIS_OK);
    }
    memset(&a, 0, sizeof(a));
    a.keys = (const uint8_t *)keys;
    a.key_len = 8;
    a.n = N;
    a.vals = rows;
    a.val_stride = VL;
    a.val_lens = lens;
    a.miss = miss;
    a.n_miss = &n_miss;
    a.now_ms = 1;
    gpu_launch_at(*T->clock, a.n, T->v.n_buckets, &a.l);
    *T->clock += a.n;
    for (uint64_t i = 0; i < gpu_launch_threads(&a.l, a.n); i++) {
        gpu_fixed_op(T, &a, i, CUDIS_OP_GET, &ty);
    }
    ccht_tally_flush(T, &ty);
    cr_assert_eq(n_miss, N - N / 2);
    for (uint32_t i = 0; i < N; i++) {
        /* the same key through an ordinary batch of the cpu engine */
        uint8_t out[64];
        uint32_t vl = 0;
        int rc = ccht_get(t, &keys[i], 8, out, sizeof(out), &vl);
        if (i < N / 2) {
            cr_assert_eq(lens[i], VL, "row %u", i);
            cr_assert_eq(memcmp(rows + i * VL, vals + i * VL, VL), 0, "row %u", i);
            cr_assert_eq(rc, 1);
            cr_assert_eq(vl, VL);
            cr_assert_eq(memcmp(out, vals + i * VL, VL), 0);
        } else {
            cr_assert_eq(lens[i], GPU_DEV_MISS, "row %u", i);
            cr_assert_eq(rc, 0);
        }
    }
    for (uint32_t k = 0; k < n_miss; k++) {
        cr_assert_geq(miss[k], N / 2, "miss list entry %u", miss[k]);
    }
    cudis_stats st;
    ccht_stats(t, &st);
    cr_assert_eq(st.items, N / 2);
    cr_assert_eq(st.hits, N / 2 * 2); /* fixed gets, then the batch gets */
    ccht_destroy(t);
}
