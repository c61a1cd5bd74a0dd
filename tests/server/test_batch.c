/* test_batch.c - the batcher: which ops may share a batch (reads of one key
 * may; a write and anything else on the same key may not), the key set
 * across growth and resets, and the re-run of ops whose value did not fit
 * the out buffer (CUDIS_E_OUTBUF), against a real engine. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_time.h"
#include "server_internal.h"


Test(batch, conflict_rules)
{
    batcher b;
    batch_init(&b);
    cr_assert(!batch_conflicts(&b, "k", 1, true));
    batch_add_op(&b, CUDIS_OP_GET, 0, "k", 1, NULL, 0, 0, 0, false);
    cr_assert(!batch_conflicts(&b, "k", 1, false), "two reads of one key may share");
    cr_assert(batch_conflicts(&b, "k", 1, true), "a write after a read must not");
    cr_assert(!batch_conflicts(&b, "k2", 2, true), "other keys are free");
    cr_assert(!batch_conflicts(&b, "K", 1, true), "keys are case-sensitive");
    batch_add_op(&b, CUDIS_OP_SET, 0, "w", 1, "v", 1, 0, 0, true);
    cr_assert(batch_conflicts(&b, "w", 1, false), "a read after a write must not");
    cr_assert(batch_conflicts(&b, "w", 1, true));
    cr_assert(!batch_conflicts(&b, "", 0, false));
    batch_add_op(&b, CUDIS_OP_GET, 0, "", 0, NULL, 0, 0, 0, false);
    cr_assert(batch_conflicts(&b, "", 0, true), "the empty key is a key");
    batch_reset(&b);
    cr_assert(!batch_conflicts(&b, "w", 1, true), "a new batch is empty");
    cr_assert(!batch_conflicts(&b, "k", 1, true));
    batch_deinit(&b);
}

Test(batch, many_keys_and_resets)
{
    batcher b;
    batch_init(&b);
    char key[32];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 5000; i++) {
            int n = snprintf(key, sizeof(key), "key:%d", i);
            cr_assert(!batch_conflicts(&b, key, (uint32_t)n, i % 2 == 0), "round %d key %d", round, i);
            batch_add_op(&b, i % 2 ? CUDIS_OP_GET : CUDIS_OP_SET, 0, key, (uint32_t)n, "v", 1, 0,
                         0, i % 2 == 0);
        }
        for (int i = 0; i < 5000; i++) {
            int n = snprintf(key, sizeof(key), "key:%d", i);
            cr_assert(batch_conflicts(&b, key, (uint32_t)n, true));
            cr_assert_eq(batch_conflicts(&b, key, (uint32_t)n, false), i % 2 == 0);
        }
        cr_assert_eq(b.nops, 5000);
        /* the packed input holds every key and value */
        cr_assert_eq(memcmp(b.in + b.ops[4999].key_off, "key:4999", 8), 0);
        batch_reset(&b);
    }
    batch_deinit(&b);
}

Test(batch, outbuf_rerun_returns_every_value)
{
    engine_config ec;
    engine_config_default(&ec);
    ec.memory_bytes = 64u << 20;
    ec.max_val_len = 4u << 20;
    char why[256];
    engine *e = engine_create("lru", &ec, why, sizeof(why));
    cr_assert(e != NULL, "%s", why);
    batcher b;
    batch_init(&b);
    size_t n = 300 * 1024; /* larger than the first out buffer */
    char *v = malloc(n);
    for (int k = 0; k < 4; k++) {
        memset(v, 'a' + k, n);
        char key[8];
        snprintf(key, sizeof(key), "big%d", k);
        batch_add_op(&b, CUDIS_OP_SET, 0, key, 4, v, (uint32_t)n, 0, 0, true);
    }
    cr_assert_eq(batch_exec(&b, e, cudis_now_ms()), CUDIS_OK);
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(b.res[k].status, CUDIS_OK);
    }
    batch_reset(&b);
    for (int k = 0; k < 4; k++) {
        char key[8];
        snprintf(key, sizeof(key), "big%d", k);
        batch_add_op(&b, CUDIS_OP_GET, 0, key, 4, NULL, 0, 0, 0, false);
        batch_add_op(&b, CUDIS_OP_GET, 0, key, 4, NULL, 0, 0, 0, false);
    }
    cr_assert_eq(batch_exec(&b, e, cudis_now_ms()), CUDIS_OK);
    cr_assert(b.st.outbuf_reruns > 0, "the test must exercise the re-run");
    for (uint32_t i = 0; i < b.nops; i++) {
        cudis_result *r = &b.res[i];
        cr_assert_eq(r->status, CUDIS_OK, "op %u status %d", i, r->status);
        cr_assert(r->flags & CUDIS_R_VALUE);
        cr_assert_eq(r->val_len, n);
        cr_assert(r->val_off + n <= b.out_cap);
        char want = (char)('a' + i / 2);
        cr_assert(b.out[r->val_off] == want && b.out[r->val_off + n - 1] == want, "op %u", i);
    }
    batch_reset(&b);
    batch_deinit(&b);
    free(v);
    engine_destroy(e);
}
