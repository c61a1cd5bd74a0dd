/*
 * test_ccht_model.c - randomised model test: millions of mixed operations in
 * batches on small tables that force every kind of eviction (bucket pair
 * full, value memory full with shifting value sizes, expiry), checked against
 * a reference map driven by the same op semantics (cudis_plan_op).
 *
 * A cache may drop a key at any time, but:
 *   - a key it reports as present (CUDIS_R_FOUND) must be present in the
 *     reference, and every result (value bytes, lengths, TTLs, INCRBY sums)
 *     must equal what the reference computes;
 *   - a deleted or expired key is never reported;
 *   - bytes_used never exceeds the budget and items never the capacity.
 * When the cache reports a key absent that the reference holds, the key was
 * evicted: the reference drops it and the result must equal the "absent"
 * outcome.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccht.h"
#include "cudis_err.h"
#include "cudis_op.h"

#define MAXV 1024
#define BATCH 16

typedef struct ref {
    bool present;
    uint32_t len;
    int64_t exp;
    uint8_t *val;
} ref;

typedef struct model {
    ccht *t;
    ref *keys;
    uint32_t n_keys;
    uint64_t rng;
    int64_t now;
    uint64_t ops, hits, evicted_seen;
} model;

static uint64_t rnd(model *m)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return m->rng;
}

static uint32_t key_of(uint32_t id, uint8_t *buf)
{
    int n = snprintf((char *)buf, 64, "key:%u:", id);
    uint32_t pad = id % 29;
    memset(buf + n, 'x', pad);
    return (uint32_t)n + pad;
}

static bool ref_live(const model *m, const ref *r)
{
    return r->present && !(r->exp != 0 && r->exp <= m->now);
}

/* A random op on key id into the batch (values placed in `in` at *in_len). */
static void gen_op(model *m, cudis_op *op, uint32_t id, uint8_t *in, uint64_t *in_len)
{
    memset(op, 0, sizeof(*op));
    op->key_off = *in_len;
    op->key_len = key_of(id, in + *in_len);
    *in_len += op->key_len;
    op->val_off = *in_len;
    uint32_t c = (uint32_t)(rnd(m) % 100);
    uint32_t vlen = 0;
    /* value sizes drift over time so memory moves between size classes */
    uint32_t phase = (uint32_t)((m->ops / 200000) % 3);
    uint32_t vmax = phase == 0 ? 64 : phase == 1 ? 600 : MAXV;
    if (c < 35) {
        op->code = CUDIS_OP_GET;
    } else if (c < 62) {
        op->code = CUDIS_OP_SET;
        uint32_t f = (uint32_t)(rnd(m) % 16);
        op->flags = (f == 0 ? CUDIS_F_NX : f == 1 ? CUDIS_F_XX : 0) |
                    (f == 2 || f == 3 ? CUDIS_F_GET : 0) | (f == 4 ? CUDIS_F_KEEPTTL : 0);
        vlen = (uint32_t)(rnd(m) % (vmax + 1));
        if (rnd(m) % 5 == 0) {
            op->expire_ms = m->now + 1 + (int64_t)(rnd(m) % 3000);
        }
        if (rnd(m) % 10 == 0) {
            /* numbers for INCRBY */
            int64_t x = (int64_t)(rnd(m) % 2000) - 1000;
            if (rnd(m) % 50 == 0) {
                x = rnd(m) % 2 ? INT64_MAX - 2 : INT64_MIN + 2;
            }
            char s[32];
            vlen = (uint32_t)snprintf(s, sizeof(s), "%lld", (long long)x);
            memcpy(in + *in_len, s, vlen);
            op->val_len = vlen;
            *in_len += vlen;
            return;
        }
    } else if (c < 67) {
        op->code = CUDIS_OP_DEL;
    } else if (c < 71) {
        op->code = CUDIS_OP_EXISTS;
        op->flags = rnd(m) % 2 ? CUDIS_F_TOUCH : 0;
    } else if (c < 77) {
        op->code = CUDIS_OP_INCRBY;
        op->arg = (int64_t)(rnd(m) % 21) - 10;
    } else if (c < 81) {
        op->code = CUDIS_OP_APPEND;
        vlen = (uint32_t)(rnd(m) % 40);
    } else if (c < 84) {
        op->code = CUDIS_OP_SETRANGE;
        op->arg = (int64_t)(rnd(m) % 200);
        vlen = (uint32_t)(rnd(m) % 20);
    } else if (c < 89) {
        op->code = CUDIS_OP_EXPIRE;
        static const uint16_t fl[] = {0, CUDIS_F_NX, CUDIS_F_XX, CUDIS_F_GT, CUDIS_F_LT};
        op->flags = fl[rnd(m) % 5];
        op->expire_ms = m->now - 5 + (int64_t)(rnd(m) % 3000);
    } else if (c < 91) {
        op->code = CUDIS_OP_PERSIST;
    } else if (c < 95) {
        op->code = CUDIS_OP_TTL;
    } else if (c < 97) {
        op->code = CUDIS_OP_GET;
        op->flags = CUDIS_F_DEL;
    } else {
        op->code = CUDIS_OP_GET;
        op->flags = rnd(m) % 3 == 0 ? CUDIS_F_PERSIST : CUDIS_F_SETEXP;
        op->expire_ms = m->now - 2 + (int64_t)(rnd(m) % 3000);
    }
    for (uint32_t i = 0; i < vlen; i++) {
        in[*in_len + i] = (uint8_t)rnd(m);
    }
    op->val_len = vlen;
    *in_len += vlen;
}

/* Expected result of op on the reference; applies it when `apply`. */
static void expect(model *m, const cudis_op *op, const uint8_t *in, ref *r, bool present,
                   cudis_result *res, uint8_t *val_out, bool apply)
{
    cudis_cur cur = {0};
    if (present) {
        cur.found = true;
        cur.val = r->val;
        cur.val_len = r->len;
        cur.expire_ms = r->exp;
    }
    cudis_plan plan;
    int rc = cudis_plan_op(op, in + op->val_off, &cur, m->now, MAXV, &plan, res);
    if (rc < 0) {
        res->status = rc;
        return;
    }
    if (plan.return_old) {
        memcpy(val_out, cur.val, cur.val_len);
        res->val_len = cur.val_len;
        res->flags |= CUDIS_R_VALUE;
    }
    if (!apply) {
        return;
    }
    switch (plan.action) {
    case CUDIS_ACT_WRITE: {
        uint8_t *nv = malloc(plan.new_len ? plan.new_len : 1);
        cudis_plan_build(&plan, r->val, in + op->val_off, nv);
        free(r->val);
        r->val = nv;
        r->len = plan.new_len;
        r->exp = plan.expire_ms;
        r->present = true;
        break;
    }
    case CUDIS_ACT_SETEXP:
        r->exp = plan.expire_ms;
        break;
    case CUDIS_ACT_DELETE:
        r->present = false;
        break;
    default:
        break;
    }
}

static void run_model(uint64_t mem, uint64_t max_items, uint32_t ways, uint32_t n_keys,
                      uint64_t n_ops, uint64_t seed)
{
    model m = {0};
    ccht_options o;
    ccht_options_default(&o);
    o.memory_bytes = mem;
    o.max_items = max_items;
    o.ways = ways;
    o.max_key_len = 64;
    o.max_val_len = MAXV;
    o.expected_item_bytes = 200;
    char why[128];
    m.t = ccht_create(&o, why, sizeof(why));
    cr_assert_not_null(m.t, "%s", why);
    m.keys = calloc(n_keys, sizeof(ref));
    m.n_keys = n_keys;
    m.rng = seed | 1;
    m.now = 1700000000000LL;
    static cudis_op ops[BATCH];
    static cudis_result res[BATCH];
    static uint8_t in[BATCH * (MAXV + 128)];
    static uint8_t out[BATCH * MAXV + 64];
    static uint8_t want_val[MAXV];
    uint32_t ids[BATCH];
    cudis_stats s;
    while (m.ops < n_ops) {
        uint32_t n = 1 + (uint32_t)(rnd(&m) % BATCH);
        uint64_t in_len = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t id;
            bool dup;
            do {
                /* skewed: a hot tenth of the keys gets half of the ops */
                id = (uint32_t)(rnd(&m) % 2 ? rnd(&m) % (n_keys / 10) : rnd(&m) % n_keys);
                dup = false;
                for (uint32_t j = 0; j < i; j++) {
                    dup |= ids[j] == id;
                }
            } while (dup);
            ids[i] = id;
            gen_op(&m, &ops[i], id, in, &in_len);
        }
        cudis_batch b = {ops, n, in, res, out, sizeof(out), 0, m.now, NULL};
        cr_assert_eq(ccht_execute(m.t, &b), 0);
        for (uint32_t i = 0; i < n; i++) {
            ref *r = &m.keys[ids[i]];
            bool live = ref_live(&m, r);
            bool found = (res[i].flags & CUDIS_R_FOUND) != 0;
            cr_assert(!(found && !live), "op %llu code %u key %u: reported a key that is deleted "
                      "or expired", (unsigned long long)m.ops, ops[i].code, ids[i]);
            if (live && !found) {
                m.evicted_seen++;
            }
            if (res[i].status == CUDIS_E_FULL) {
                cr_assert_fail("op %llu: CUDIS_E_FULL on a table that can always evict",
                               (unsigned long long)m.ops);
            }
            cudis_result want;
            if (!found) {
                r->present = false; /* evicted (or never there / gone) */
            }
            expect(&m, &ops[i], in, r, found, &want, want_val, true);
            cr_assert_eq(res[i].status, want.status, "op %llu code %u: status %d want %d",
                         (unsigned long long)m.ops, ops[i].code, res[i].status, want.status);
            cr_assert_eq(res[i].flags, want.flags, "op %llu code %u flags %x want %x",
                         (unsigned long long)m.ops, ops[i].code, res[i].flags, want.flags);
            cr_assert_eq(res[i].num, want.num, "op %llu code %u num", (unsigned long long)m.ops,
                         ops[i].code);
            if (want.flags & CUDIS_R_VALUE) {
                m.hits++;
                cr_assert_eq(res[i].val_len, want.val_len);
                cr_assert_leq(res[i].val_off + res[i].val_len, b.out_len);
                cr_assert_eq(memcmp(out + res[i].val_off, want_val, want.val_len), 0,
                             "op %llu: value differs from the latest written",
                             (unsigned long long)m.ops);
            }
            m.ops++;
        }
        ccht_stats(m.t, &s);
        cr_assert_leq(s.bytes_used, s.bytes_budget);
        cr_assert_leq(s.items, s.capacity);
        m.now += (int64_t)(rnd(&m) % 4);
        if (rnd(&m) % 64 == 0) {
            ccht_sweep(m.t, m.now, 64, NULL);
        }
    }
    ccht_stats(m.t, &s);
    /* every kind of eviction happened and the reference saw them */
    cr_assert_gt(s.evict_expired, 0);
    cr_assert_gt(m.evicted_seen, 0);
    cr_assert_gt(m.hits, n_ops / 20);
    cr_log_info("model ways=%u: %llu ops, hits %llu, items %llu, evict bucket %llu memory %llu "
                "expired %llu, bytes %llu/%llu, kv bytes %llu",
                ways, (unsigned long long)m.ops, (unsigned long long)m.hits,
                (unsigned long long)s.items, (unsigned long long)s.evict_bucket,
                (unsigned long long)s.evict_memory, (unsigned long long)s.evict_expired,
                (unsigned long long)s.bytes_used, (unsigned long long)s.bytes_budget,
                (unsigned long long)(s.key_bytes + s.value_bytes));
    uint64_t ev_b = s.evict_bucket, ev_m = s.evict_memory;
    for (uint32_t i = 0; i < n_keys; i++) {
        free(m.keys[i].val);
    }
    free(m.keys);
    ccht_destroy(m.t);
    m.t = NULL;
    if (max_items) {
        cr_assert_gt(ev_b, 0);
    } else {
        cr_assert_gt(ev_m, 0);
    }
}

#ifndef CCHT_MODEL_SLOW
/* Value memory is the limit (shifting value sizes force page moves). */
Test(ccht_model, memory_bound_8way, .timeout = 300)
{
    run_model(3 << 20, 0, 8, 20000, 1000000, 0x1234567);
}

/* Index slots are the limit (bucket-pair evictions). */
Test(ccht_model, slot_bound_4way, .timeout = 300)
{
    run_model(8 << 20, 3000, 4, 20000, 700000, 0xabcdef);
}

Test(ccht_model, memory_bound_16way, .timeout = 300)
{
    run_model(2 << 20, 0, 16, 20000, 500000, 0x777);
}
#endif /* CCHT_MODEL_SLOW */
