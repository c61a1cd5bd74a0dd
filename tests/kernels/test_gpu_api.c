/*
 * test_gpu_api.c - argument checking of the GPU engine's API and its
 * no-device path. Runs on every CUDA build, with or without a GPU: without
 * one, creation must fail with CUDIS_E_NODEV / NULL and a reason; with one,
 * bad arguments to the device-pointer API must return the documented codes.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "gpu_engine.h"
#include "gpu_store.h"

static void config(engine_config *c)
{
    memset(c, 0, sizeof(*c));
    c->memory_bytes = 16u << 20;
    c->ways = 8;
    c->max_key_len = 256;
    c->max_val_len = 4096;
    c->device = -1;
}

Test(gpu_api, null_engine_is_rejected)
{
    uint8_t buf[16];
    uint32_t u = 0;
    cudis_batch b;
    memset(&b, 0, sizeof(b));
    cr_assert_eq(gpu_engine_execute(NULL, &b), CUDIS_E_INVAL);
    cr_assert_eq(gpu_engine_get_dev(NULL, buf, 8, 1, buf, 8, &u, NULL, NULL, 0, NULL),
                 CUDIS_E_INVAL);
    cr_assert_eq(gpu_engine_set_dev(NULL, buf, 8, 1, buf, 8, 0, NULL, 0, NULL), CUDIS_E_INVAL);
    cr_assert_eq(gpu_engine_execute_dev(NULL, NULL, 1, NULL, 0, NULL, NULL, 0, NULL, 0, NULL),
                 CUDIS_E_INVAL);
    cr_assert_eq(gpu_engine_sync(NULL), CUDIS_E_INVAL);
    gpu_pending *p = NULL;
    cr_assert_eq(gpu_engine_submit(NULL, &b, &p), CUDIS_E_INVAL);
    cr_assert_eq(gpu_engine_complete(NULL, p), CUDIS_E_INVAL);
    cr_assert_eq(gpu_engine_flush(NULL, CUDIS_DB_ALL), CUDIS_E_INVAL);
    cr_assert_eq(gpu_engine_random_key(NULL, 0, 0, buf, sizeof(buf), &u), CUDIS_E_INVAL);
    cudis_stats st;
    gpu_engine_stats(NULL, &st);
    cr_assert_eq(st.items, 0);
    cr_assert_eq(gpu_engine_info(NULL, (char *)buf, sizeof(buf)), 0);
    gpu_engine_destroy(NULL);
}

Test(gpu_api, store_ops_table)
{
    cr_assert_str_eq(gpu_store_ops.name, "gpu");
    cr_assert(gpu_store_ops.concurrent);
    cr_assert_not_null(gpu_store_ops.create);
    cr_assert_not_null(gpu_store_ops.destroy);
    cr_assert_not_null(gpu_store_ops.execute);
    cr_assert_not_null(gpu_store_ops.scan);
    cr_assert_not_null(gpu_store_ops.random_key);
    cr_assert_not_null(gpu_store_ops.flush);
    cr_assert_not_null(gpu_store_ops.stats);
    cr_assert_not_null(gpu_store_ops.info);
}

Test(gpu_api, missing_device_ordinal)
{
    char why[256] = "";
    cr_assert_eq(gpu_engine_probe(1000, why, sizeof(why)), CUDIS_E_NODEV);
    cr_assert_gt(strlen(why), 0);
    engine_config c;
    config(&c);
    c.device = 1000;
    why[0] = 0;
    cr_assert_null(gpu_store_ops.create(&c, why, sizeof(why)));
    cr_assert_gt(strlen(why), 0, "create must say why it failed");
}

Test(gpu_api, no_device_path_or_argument_checks)
{
    char why[256] = "";
    engine_config c;
    config(&c);
    int rc = gpu_engine_probe(-1, why, sizeof(why));
    if (rc != 0) {
        /* No usable GPU here: the documented failure, with a reason. */
        cr_assert_eq(rc, CUDIS_E_NODEV, "probe: %d (%s)", rc, why);
        cr_assert_gt(strlen(why), 0);
        char why2[256] = "";
        cr_assert_null(gpu_engine_create(&c, why2, sizeof(why2)));
        cr_assert_gt(strlen(why2), 0);
        cr_assert_null(gpu_store_ops.create(&c, why2, sizeof(why2)));
        return;
    }
    gpu_engine *g = gpu_engine_create(&c, why, sizeof(why));
    cr_assert_not_null(g, "probe succeeded but create failed: %s", why);
    uint8_t host[64];
    uint32_t lens[4];
    /* host pointers are not device memory */
    cr_assert_eq(gpu_engine_get_dev(g, host, 8, 4, host, 8, NULL, NULL, NULL, 0, NULL),
                 CUDIS_E_INVAL);
    cr_assert_eq(gpu_engine_set_dev(g, host, 8, 4, host, 8, 0, NULL, 0, NULL), CUDIS_E_INVAL);
    /* zero key length, key longer than the maximum, value too long */
    cr_assert_eq(gpu_engine_get_dev(g, host, 0, 4, host, 8, NULL, NULL, NULL, 0, NULL),
                 CUDIS_E_INVAL);
    cr_assert_eq(gpu_engine_get_dev(g, host, 1000, 4, host, 8, NULL, NULL, NULL, 0, NULL),
                 CUDIS_E_KEYTOOBIG);
    cr_assert_eq(gpu_engine_set_dev(g, host, 1000, 4, host, 8, 0, NULL, 0, NULL),
                 CUDIS_E_KEYTOOBIG);
    /* miss list without its counter */
    cr_assert_eq(gpu_engine_get_dev(g, host, 8, 4, host, 8, lens, lens, NULL, 0, NULL),
                 CUDIS_E_INVAL);
    /* nothing to do */
    cr_assert_eq(gpu_engine_get_dev(g, host, 8, 0, host, 8, NULL, NULL, NULL, 0, NULL), 0);
    cr_assert_eq(gpu_engine_sync(g), 0);
    gpu_engine_destroy(g);
}
