/*
 * test_gpu_gold.c - the gold test: the same random operation streams (with
 * expiry, conditional writes, INCR/APPEND/SETRANGE, duplicate reads inside
 * one batch) through the gpu engine and the cpu engine; every result must
 * be equal. Skipped, with the reason, where no usable GPU is present.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ccht_store.h"
#include "gk_checks.h"
#include "gpu_engine.h"
#include "gpu_store.h"

static void gold(uint64_t seed, uint32_t batch_ops, uint32_t n_keys, uint32_t max_val)
{
    char why[256] = "";
    if (gpu_engine_probe(-1, why, sizeof(why)) != 0) {
        cr_skip_test("no usable GPU: %s", why);
    }
    engine_config cfg;
    gk_config(&cfg, 64ull << 20, 1u << 16);
    gk_backend gpu, cpu;
    cr_assert_eq(gk_backend_store(&gpu, &gpu_store_ops, &cfg, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(gk_backend_store(&cpu, &ccht_store_ops, &cfg, why, sizeof(why)), 0, "%s", why);
    gk_stream_opts o = {.seed = seed,
                        .batches = 300,
                        .batch_ops = batch_ops,
                        .n_keys = n_keys,
                        .max_val = max_val,
                        .events = true};
    char msg[512] = "";
    int rc = gk_gold(&gpu, &cpu, &o, msg, sizeof(msg));
    gk_backend_destroy(&gpu);
    gk_backend_destroy(&cpu);
    cr_assert_eq(rc, 0, "%s", msg);
}

Test(gpu_gold, small_batches)
{
    gold(101, 32, 200, 40);
}

Test(gpu_gold, large_batches_many_keys)
{
    gold(202, 2048, 5000, 100);
}

Test(gpu_gold, hot_keys_duplicate_reads)
{
    gold(303, 256, 40, 300);
}
