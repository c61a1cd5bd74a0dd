/*
 * test_gpu_exec_host.c - the GPU engine's per-op code (kernels/gpu_exec.h,
 * the body of the batch kernels) and its arena allocator, run on the CPU.
 * Needs no GPU and no CUDA: it checks the logic the kernels execute against
 * the cpu engine on random streams, against a model under eviction, and for
 * duplicate-free inserts with several threads.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccht_store.h"
#include "gk_checks.h"
#include "gpu_dev.h"

static void gold_vs_cpu(uint32_t threads, uint64_t seed, uint32_t max_val)
{
    engine_config cfg;
    gk_config(&cfg, 64ull << 20, 1u << 16);
    char why[256] = "";
    gk_backend sim, cpu;
    cr_assert_eq(gk_backend_hostsim(&sim, &cfg, threads, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(gk_backend_store(&cpu, &ccht_store_ops, &cfg, why, sizeof(why)), 0, "%s", why);
    gk_stream_opts o = {
        .seed = seed, .batches = 300, .batch_ops = 64, .n_keys = 300, .max_val = max_val};
    char msg[512] = "";
    int rc = gk_gold(&sim, &cpu, &o, msg, sizeof(msg));
    gk_backend_destroy(&sim);
    gk_backend_destroy(&cpu);
    cr_assert_eq(rc, 0, "%s", msg);
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
    uint64_t slots = 0;
    int dups = gk_hostsim_duplicates(&sim, &slots);
    cudis_stats st;
    sim.stats(sim.ctx, &st);
    gk_backend_destroy(&sim);
    cr_assert_eq(dups, 0, "%d keys stored twice or outside their buckets", dups);
    cr_assert_eq(slots, st.items, "slots in the index %llu, items counted %llu",
                 (unsigned long long)slots, (unsigned long long)st.items);
    cr_assert_gt(ev, 0);
}

Test(gpu_exec_host, allocator_round_trip)
{
    gpu_table t;
    gpu_layout l;
    memset(&t, 0, sizeof(t));
    const char *why = NULL;
    cr_assert_eq(gpu_layout_plan(&t, &l, 1u << 20, 8, 1024, 64, 64, 4096, 1, 1, &why), 0);
    cr_assert_leq(l.total, 1u << 20);
    uint8_t *mem = aligned_alloc(256, gpu_align_up(l.total, 256));
    memset(mem, 0, l.total);
    gpu_layout_bind(&t, &l, mem);
    uint32_t cls = gpu_class_of(&t, 100);
    cr_assert_lt(cls, t.n_classes);
    cr_assert_geq(t.class_size[cls], 100);
    cr_assert(cls == 0 || t.class_size[cls - 1] < 100);
    uint64_t size = t.class_size[cls];
    uint64_t want = t.n_pages * (t.page_bytes / size);
    uint64_t *got = malloc(sizeof(uint64_t) * (want + 1));
    uint64_t n = 0;
    for (;;) {
        uint64_t off = gpu_alloc_chunk(&t, cls, (uint32_t)n);
        if (off == GPU_NO_CHUNK) {
            break;
        }
        cr_assert_leq(off + size, t.v.arena_bytes);
        cr_assert_eq(off % 16, 0);
        cr_assert_eq(gpu_chunk_class(&t, off), cls);
        cr_assert_lt(n, want + 1, "more chunks than the arena holds");
        got[n++] = off;
    }
    cr_assert_eq(n, want, "allocated %llu chunks, arena holds %llu", (unsigned long long)n,
                 (unsigned long long)want);
    /* distinct */
    for (uint64_t i = 1; i < n; i++) {
        for (uint64_t j = i < 64 ? 0 : i - 64; j < i; j++) {
            cr_assert_neq(got[i], got[j]);
        }
    }
    for (uint64_t i = 0; i < n; i++) {
        gpu_free_chunk(&t, got[i], cls, (uint32_t)i);
    }
    uint64_t again = 0;
    while (gpu_alloc_chunk(&t, cls, (uint32_t)again) != GPU_NO_CHUNK) {
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
