/*
 * gk_long.c - the long mixed stream of gk_checks.h (gk_long): millions of
 * operations in batches through two backends, each checked against its own
 * reference model, and, with `exact`, against each other bit for bit.
 *
 * The reference model applies the op semantics (cudis_plan_op) to a map of
 * the keys. A cache may drop a key at any time, so when a backend reports a
 * key absent that the model holds, the model drops it too (an eviction);
 * everything else must be what the model computes: a reported key present
 * and live in the model, its value and expiry the latest written, INCR
 * sums, lengths, TTLs, error codes. CUDIS_E_FULL is always a failure: every
 * value of the stream fits the budget, and a cache makes room by evicting.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk_checks.h"

static void say(char *msg, size_t len, const char *fmt, ...)
{
    if (msg == NULL || len == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* ------------------------------------------------------------------------
 * The reference model
 * ---------------------------------------------------------------------- */

typedef struct mkey {
    bool present;
    int64_t exp;
    uint32_t len;
    uint8_t *val;
} mkey;

typedef struct model {
    mkey *k;
    uint32_t n;
    uint64_t evicted, hits;
} model;

static bool m_live(const mkey *k, int64_t now)
{
    return k->present && !(k->exp != 0 && k->exp <= now);
}

static const char *op_name(uint8_t c)
{
    static const char *n[] = {"?",      "GET",      "SET",    "DEL",     "EXISTS", "INCRBY",
                              "APPEND", "SETRANGE", "EXPIRE", "PERSIST", "TTL"};
    return c < sizeof(n) / sizeof(n[0]) ? n[c] : "?";
}

/* Check r (the backend's result of op on key k at `now`) and apply it.
 * Reads of one key may share a batch and run at once with an eviction of
 * that key: each sees the key or not, so a read's miss of a live key drops
 * it only after the batch (*drop set), and the batch's other reads are
 * checked against the state before it. */
static int m_check(model *m, uint32_t k, const cudis_op *op, const uint8_t *in,
                   const cudis_result *r, const uint8_t *out, int64_t now, uint32_t max_val,
                   bool *drop, char *msg, size_t len)
{
    mkey *mk = &m->k[k];
    bool live = m_live(mk, now);
    bool found = (r->flags & CUDIS_R_FOUND) != 0;
    bool read = ccht_op_is_read(op);
    if (r->status == CUDIS_E_FULL) {
        say(msg, len, "%s on key %u: CUDIS_E_FULL (a cache evicts to make room)", op_name(op->code),
            k);
        return -1;
    }
    if (found && !live) {
        say(msg, len, "%s on key %u: reported a key that is %s", op_name(op->code), k,
            mk->present ? "expired" : "deleted or never written");
        return -1;
    }
    if (live && !found) {
        if (!*drop) {
            m->evicted++;
        }
        if (read) {
            *drop = true;
        } else {
            mk->present = false;
        }
        live = false;
    }
    cudis_cur cur = {live, live ? mk->val : NULL, live ? mk->len : 0, live ? mk->exp : 0,
                     CUDIS_TYPE_STRING};
    cudis_plan plan;
    cudis_result want;
    int rc = cudis_plan_op(op, in + op->val_off, &cur, now, max_val, &plan, &want);
    if (rc < 0) {
        want.status = rc; /* the flags and num planned so far stay, as every store reports them */
    } else if (plan.return_old) {
        want.flags |= CUDIS_R_VALUE;
        want.val_len = cur.val_len;
    }
    if (r->status != want.status || r->flags != want.flags || r->num != want.num ||
        ((want.flags & CUDIS_R_VALUE) && r->val_len != want.val_len)) {
        say(msg, len,
            "%s (flags 0x%x) on key %u: status %d flags 0x%x num %lld val_len %u; the model says "
            "status %d flags 0x%x num %lld val_len %u",
            op_name(op->code), op->flags, k, r->status, r->flags, (long long)r->num, r->val_len,
            want.status, want.flags, (long long)want.num, want.val_len);
        return -1;
    }
    if ((want.flags & CUDIS_R_VALUE) && want.val_len > 0) {
        m->hits++;
        if (memcmp(out + r->val_off, cur.val, want.val_len) != 0) {
            say(msg, len, "%s on key %u: the value (%u bytes) is not the latest written",
                op_name(op->code), k, want.val_len);
            return -1;
        }
    }
    if (rc < 0) {
        return 0;
    }
    switch (plan.action) {
    case CUDIS_ACT_WRITE: {
        uint8_t *nv = malloc(plan.new_len ? plan.new_len : 1);
        if (nv == NULL) {
            say(msg, len, "out of memory");
            return -1;
        }
        cudis_plan_build(&plan, cur.val, in + op->val_off, nv);
        free(mk->val);
        mk->val = nv;
        mk->len = plan.new_len;
        mk->exp = plan.expire_ms;
        mk->present = true;
        break;
    }
    case CUDIS_ACT_SETEXP: mk->exp = plan.expire_ms; break;
    case CUDIS_ACT_DELETE: mk->present = false; break;
    default: break;
    }
    return 0;
}

static void m_free(model *m)
{
    if (m->k != NULL) {
        for (uint32_t i = 0; i < m->n; i++) {
            free(m->k[i].val);
        }
    }
    free(m->k);
}

/* ------------------------------------------------------------------------
 * The stream
 * ---------------------------------------------------------------------- */

typedef struct lbatch {
    cudis_op *ops;
    cudis_result *res[2];
    uint8_t *out[2];
    uint32_t *key;
    uint8_t *in;
    uint32_t n;
    uint64_t in_len, in_cap, out_cap;
} lbatch;

static void add_op(lbatch *b, uint32_t k, uint8_t code, uint16_t flags, const uint8_t *val,
                   uint32_t vlen, int64_t arg, int64_t exp)
{
    cudis_op *op = &b->ops[b->n];
    memset(op, 0, sizeof(*op));
    op->code = code;
    op->flags = flags;
    op->key_off = b->in_len;
    op->key_len = gk_key(k, b->in + b->in_len);
    b->in_len += op->key_len;
    op->val_off = b->in_len;
    op->val_len = vlen;
    if (vlen > 0) {
        memcpy(b->in + b->in_len, val, vlen);
    }
    b->in_len += vlen;
    op->arg = arg;
    op->expire_ms = exp;
    b->key[b->n++] = k;
}

/* Value sizes of the stream's phases: small, large, small, mixed with
 * items bigger than a page. */
static uint32_t value_len(const gk_long_opts *o, uint64_t done, uint64_t *rs)
{
    uint64_t phase = (done / (o->phase_ops ? o->phase_ops : 1)) % 4;
    uint64_t r = rnd(rs);
    switch (phase) {
    case 0:
    case 2: return (uint32_t)(r % (o->small_max + 1));
    case 1: return (uint32_t)(o->small_max + r % (o->large_max - o->small_max + 1));
    default:
        if (r % 100 < 2) {
            return (uint32_t)(o->large_max + (r >> 8) % (o->huge_max - o->large_max + 1));
        }
        return (uint32_t)((r >> 8) % (o->large_max + 1));
    }
}

/* One random op on key k; read_only when the key already has a read in the
 * batch (the batcher's rule). */
static void random_op(lbatch *b, const gk_long_opts *o, uint64_t *rs, uint32_t k, uint64_t done,
                      int64_t now, bool read_only, uint8_t *val)
{
    uint64_t r = rnd(rs) % 100;
    uint32_t vlen = value_len(o, done, rs);
    bool numeric = rnd(rs) % 6 == 0;
    if (numeric) {
        int64_t x = (int64_t)(rnd(rs) % 2000) - 1000;
        if (rnd(rs) % 64 == 0) {
            x = rnd(rs) % 2 ? INT64_MAX - 3 : INT64_MIN + 3;
        }
        vlen = (uint32_t)snprintf((char *)val, 32, "%lld", (long long)x);
    } else {
        uint8_t c = (uint8_t)rnd(rs);
        for (uint32_t i = 0; i < vlen; i += 64) {
            val[i] = c++;
        }
    }
    int64_t exp = 0;
    if (rnd(rs) % 5 == 0) {
        exp = now + 1 + (int64_t)(rnd(rs) % 3000);
    } else if (rnd(rs) % 60 == 0) {
        exp = now - 1;
    }
    if (read_only || r < 38) {
        uint64_t q = rnd(rs) % 20;
        if (read_only || q < 14) {
            uint8_t c = q < 10 ? CUDIS_OP_GET : (q < 12 ? CUDIS_OP_EXISTS : CUDIS_OP_TTL);
            add_op(b, k, c, c == CUDIS_OP_EXISTS && (rnd(rs) & 1) ? CUDIS_F_TOUCH : 0, NULL, 0, 0,
                   0);
        } else if (q < 16) {
            add_op(b, k, CUDIS_OP_GET, CUDIS_F_DEL, NULL, 0, 0, 0);
        } else if (q < 18) {
            add_op(b, k, CUDIS_OP_GET, CUDIS_F_SETEXP, NULL, 0, 0, exp ? exp : now + 500);
        } else {
            add_op(b, k, CUDIS_OP_GET, CUDIS_F_PERSIST, NULL, 0, 0, 0);
        }
    } else if (r < 68) {
        static const uint16_t fl[] = {0,
                                      0,
                                      0,
                                      0,
                                      CUDIS_F_NX,
                                      CUDIS_F_XX,
                                      CUDIS_F_GET,
                                      CUDIS_F_KEEPTTL,
                                      CUDIS_F_GET | CUDIS_F_XX};
        add_op(b, k, CUDIS_OP_SET, fl[rnd(rs) % 9], val, vlen, 0, exp);
    } else if (r < 73) {
        add_op(b, k, CUDIS_OP_DEL, 0, NULL, 0, 0, 0);
    } else if (r < 82) {
        add_op(b, k, CUDIS_OP_INCRBY, 0, NULL, 0, (int64_t)(rnd(rs) % 200) - 100, 0);
    } else if (r < 87) {
        add_op(b, k, CUDIS_OP_APPEND, 0, val, vlen % 33, 0, 0);
    } else if (r < 90) {
        add_op(b, k, CUDIS_OP_SETRANGE, 0, val, vlen % 17, (int64_t)(rnd(rs) % 300), 0);
    } else if (r < 96) {
        static const uint16_t fl[] = {0, 0, CUDIS_F_NX, CUDIS_F_XX, CUDIS_F_GT, CUDIS_F_LT};
        add_op(b, k, CUDIS_OP_EXPIRE, fl[rnd(rs) % 6], NULL, 0, 0,
               now - 20 + (int64_t)(rnd(rs) % 3000));
    } else if (r < 98) {
        add_op(b, k, CUDIS_OP_PERSIST, 0, NULL, 0, 0, 0);
    } else {
        add_op(b, k, CUDIS_OP_TTL, 0, NULL, 0, 0, 0);
    }
}

static int run_one(gk_backend *be, lbatch *b, int side, int64_t now, uint64_t *out_len)
{
    cudis_batch bt;
    memset(&bt, 0, sizeof(bt));
    bt.ops = b->ops;
    bt.n_ops = b->n;
    bt.in = b->in;
    bt.res = b->res[side];
    bt.out = b->out[side];
    bt.out_cap = b->out_cap;
    bt.now_ms = now;
    int rc = be->exec(be->ctx, &bt);
    *out_len = bt.out_len;
    return rc;
}

int gk_long(gk_backend *a, gk_backend *ref, const gk_long_opts *o, gk_long_report *rep, char *msg,
            size_t msg_len)
{
    memset(rep, 0, sizeof(*rep));
    gk_backend *be[2] = {a, ref};
    model m[2];
    memset(m, 0, sizeof(m));
    lbatch b;
    memset(&b, 0, sizeof(b));
    uint32_t cap = o->max_batch ? o->max_batch : 1;
    uint64_t in_cap = (uint64_t)cap * 128 + (uint64_t)o->huge_max * 4 + (uint64_t)cap * 64 +
                      (uint64_t)(o->large_max + 64) * cap;
    b.out_cap = (uint64_t)cap * (2ull * o->huge_max + 64) + (1u << 16);
    if (b.out_cap > (512ull << 20)) {
        b.out_cap = 512ull << 20;
    }
    b.ops = calloc(cap, sizeof(cudis_op));
    b.key = calloc(cap, sizeof(uint32_t));
    b.in = malloc(in_cap);
    uint8_t *state = calloc(o->n_keys, 1);
    bool *drop[2] = {calloc(o->n_keys, sizeof(bool)), calloc(o->n_keys, sizeof(bool))};
    uint8_t *val = calloc(1, (size_t)o->huge_max + 64);
    int rc = 0;
    for (int s = 0; s < 2; s++) {
        b.res[s] = calloc(cap, sizeof(cudis_result));
        b.out[s] = malloc(b.out_cap);
        m[s].n = o->n_keys;
        m[s].k = calloc(o->n_keys, sizeof(mkey));
        if (b.res[s] == NULL || b.out[s] == NULL || m[s].k == NULL) {
            rc = -1;
        }
    }
    if (rc != 0 || b.ops == NULL || b.key == NULL || b.in == NULL || state == NULL || val == NULL ||
        drop[0] == NULL || drop[1] == NULL) {
        say(msg, msg_len, "out of memory");
        rc = -1;
        goto done;
    }
    uint64_t rs = o->seed;
    int64_t now = 1700000000000ll;
    uint64_t hot = o->n_keys / 16 ? o->n_keys / 16 : 1;
    while (rep->ops < o->ops && rc == 0) {
        b.n = 0;
        b.in_len = 0;
        memset(state, 0, o->n_keys);
        uint32_t want = 1 + (uint32_t)(rnd(&rs) % cap);
        uint64_t huge_in = 0;
        for (uint32_t t = 0; t < want && b.n < cap; t++) {
            uint32_t k = (uint32_t)(rnd(&rs) % 2 ? rnd(&rs) % hot : rnd(&rs) % o->n_keys);
            uint32_t at = b.n;
            uint64_t at_in = b.in_len;
            if (b.in_len + o->huge_max + 256 > in_cap) {
                break;
            }
            random_op(&b, o, &rs, k, rep->ops + b.n, now, state[k] == 1, val);
            bool w = !ccht_op_is_read(&b.ops[at]);
            /* the batcher's rule: no two ops on a key when one writes */
            if (state[k] == 2 || (w && state[k] == 1)) {
                b.n = at;
                b.in_len = at_in;
                continue;
            }
            if (b.ops[at].val_len > o->large_max) {
                if (huge_in > 0) { /* one item bigger than a page per batch */
                    b.n = at;
                    b.in_len = at_in;
                    continue;
                }
                huge_in++;
            }
            state[k] = w ? 2 : 1;
        }
        uint64_t ol[2];
        for (int s = 0; s < 2 && rc == 0; s++) {
            int e = run_one(be[s], &b, s, now, &ol[s]);
            if (e != 0) {
                say(msg, msg_len, "seed %llu batch %llu: %s failed the batch: %d",
                    (unsigned long long)o->seed, (unsigned long long)rep->batches, be[s]->name, e);
                rc = -1;
            }
        }
        for (uint32_t i = 0; i < b.n && rc == 0; i++) {
            for (int s = 0; s < 2 && rc == 0; s++) {
                char m1[400];
                if (m_check(&m[s], b.key[i], &b.ops[i], b.in, &b.res[s][i], b.out[s], now,
                            o->max_val, &drop[s][b.key[i]], m1, sizeof(m1)) != 0) {
                    say(msg, msg_len, "seed %llu batch %llu op %u (%s, op %llu of the stream): %s",
                        (unsigned long long)o->seed, (unsigned long long)rep->batches, i,
                        be[s]->name, (unsigned long long)(rep->ops + i), m1);
                    rc = -1;
                }
            }
            const cudis_result *x = &b.res[0][i], *y = &b.res[1][i];
            if (rc == 0 && o->exact &&
                (x->status != y->status || x->flags != y->flags || x->num != y->num ||
                 x->val_len != y->val_len ||
                 ((x->flags & CUDIS_R_VALUE) &&
                  memcmp(b.out[0] + x->val_off, b.out[1] + y->val_off, x->val_len) != 0))) {
                say(msg, msg_len,
                    "seed %llu batch %llu op %u (%s on key %u): %s and %s differ: status %d/%d "
                    "flags 0x%x/0x%x num %lld/%lld val_len %u/%u",
                    (unsigned long long)o->seed, (unsigned long long)rep->batches, i,
                    op_name(b.ops[i].code), b.key[i], be[0]->name, be[1]->name, x->status,
                    y->status, x->flags, y->flags, (long long)x->num, (long long)y->num, x->val_len,
                    y->val_len);
                rc = -1;
            }
        }
        for (uint32_t i = 0; i < b.n; i++) {
            for (int s = 0; s < 2; s++) {
                if (drop[s][b.key[i]]) {
                    drop[s][b.key[i]] = false;
                    m[s].k[b.key[i]].present = false; /* evicted while the batch ran */
                }
            }
        }
        cudis_stats st;
        for (int s = 0; s < 2 && rc == 0; s++) {
            be[s]->stats(be[s]->ctx, &st);
            if (st.bytes_used > st.bytes_budget) {
                say(msg, msg_len, "batch %llu: %s uses %llu bytes of a %llu-byte budget",
                    (unsigned long long)rep->batches, be[s]->name,
                    (unsigned long long)st.bytes_used, (unsigned long long)st.bytes_budget);
                rc = -1;
            }
        }
        rep->ops += b.n;
        rep->batches++;
        now += (int64_t)(rnd(&rs) % 6);
    }
    for (int s = 0; s < 2; s++) {
        rep->evicted[s] = m[s].evicted;
        rep->hits[s] = m[s].hits;
    }
done:
    for (int s = 0; s < 2; s++) {
        free(b.res[s]);
        free(b.out[s]);
        m_free(&m[s]);
    }
    free(b.ops);
    free(b.key);
    free(b.in);
    free(state);
    free(val);
    free(drop[0]);
    free(drop[1]);
    return rc;
}

void gk_long_defaults(gk_long_opts *o, uint64_t seed, uint64_t ops)
{
    memset(o, 0, sizeof(*o));
    o->seed = seed;
    o->ops = ops;
    o->max_batch = 512;
    o->n_keys = 40000;
    o->small_max = 64;
    o->large_max = 3000;
    o->huge_max = 40000;
    o->phase_ops = ops / 8 ? ops / 8 : 1;
    o->max_val = 1u << 20;
}
