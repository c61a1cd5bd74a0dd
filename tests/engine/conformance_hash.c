/*
 * conformance_hash.c - the conformance suite's tests of typed keys and
 * hashes (CUDIS_OP_H*, cudis_hash.h) over every engine of conf.h: field
 * edits and their counts, the slice HGET returns, WRONGTYPE both ways, the
 * type kept through an expiry change and a rewrite, the last field
 * removing the key, the whole hash read and written as a value of its
 * type (DUMP, RENAME), and a randomised model test against a reference
 * written apart from cudis_plan_op (fields in order, strings beside
 * hashes, expiry, a tight budget: a hash the store drops goes whole);
 * sorted sets' ZADD and ZRANGE ops against a model of their own, the
 * same way (zset_add_range, zset_model_tight).
 */
#include <inttypes.h>
#include <math.h>

#include "conf.h"

/* ------------------------------------------------------------------------
 * Helpers
 * ---------------------------------------------------------------------- */

/* Edits of n fields (HDEL shape when vals is NULL) into buf; the length. */
static uint32_t edits(uint8_t *buf, int n, const char *const *fields, const char *const *vals)
{
    uint32_t at = 0;
    for (int i = 0; i < n; i++) {
        uint32_t fl = (uint32_t)strlen(fields[i]);
        at += cudis_varint_put(buf + at, fl);
        memcpy(buf + at, fields[i], fl);
        at += fl;
        if (vals) {
            uint32_t vl = (uint32_t)strlen(vals[i]);
            at += cudis_varint_put(buf + at, vl);
            memcpy(buf + at, vals[i], vl);
            at += vl;
        }
    }
    return at;
}

/* One op on a collection of `type` with its value bytes given raw (and
 * an expiry: EXPIRE's). */
static tres typed_op_exp(engine *e, int64_t now, uint8_t type, uint8_t code, uint16_t flags,
                         const char *k, const void *v, uint32_t vlen, int64_t arg, int64_t exp)
{
    tbatch t;
    tb_init(&t, 8192);
    uint32_t i = tb_op(&t, code, flags, k, (uint32_t)strlen(k), v, vlen, arg, exp);
    t.ops[i].type = type;
    tb_run(e, &t, now);
    tres r;
    memset(&r, 0, sizeof(r));
    r.r = t.res[0];
    if (r.r.status == CUDIS_OK && (r.r.flags & CUDIS_R_VALUE)) {
        cr_assert_lt(r.r.val_len, sizeof(r.val));
        memcpy(r.val, tb_val(&t, 0), r.r.val_len);
    }
    tb_free(&t);
    return r;
}

static tres typed_op(engine *e, int64_t now, uint8_t type, uint8_t code, uint16_t flags,
                     const char *k, const void *v, uint32_t vlen, int64_t arg)
{
    return typed_op_exp(e, now, type, code, flags, k, v, vlen, arg, 0);
}

static tres h_op(engine *e, int64_t now, uint8_t code, uint16_t flags, const char *k, const void *v,
                 uint32_t vlen, int64_t arg)
{
    return typed_op(e, now, CUDIS_TYPE_HASH, code, flags, k, v, vlen, arg);
}

static tres h_set(engine *e, const char *k, int n, const char *const *f, const char *const *v)
{
    uint8_t buf[1024];
    return h_op(e, T_NOW, CUDIS_OP_HSET, 0, k, buf, edits(buf, n, f, v), 0);
}

static tres h_get(engine *e, int64_t now, const char *k, const char *f)
{
    return h_op(e, now, CUDIS_OP_HGET, 0, k, f, (uint32_t)strlen(f), 0);
}

/* GET of the whole hash: its fields and values as "f=v,f=v". */
static const char *h_all(engine *e, int64_t now, const char *k)
{
    static char out[4096];
    tres r = h_op(e, now, CUDIS_OP_GET, 0, k, NULL, 0, 0);
    cr_assert_eq(r.r.status, CUDIS_OK, "GET %s: %d", k, r.r.status);
    out[0] = '\0';
    if (!(r.r.flags & CUDIS_R_VALUE)) {
        return "(none)";
    }
    const uint8_t *h = (const uint8_t *)r.val;
    uint32_t n = r.r.val_len, k2 = 0, at = CUDIS_HASH_HDR;
    cr_assert(cudis_hash_valid(h, n), "a well-formed hash");
    cudis_hentry x;
    size_t o = 0;
    for (; at < n && cudis_hentry_at(h + at, n - at, true, &x); at += x.size, k2++) {
        o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%.*s=%.*s", k2 ? "," : "", (int)x.flen,
                              (const char *)x.f, (int)x.vlen, (const char *)x.v);
    }
    return out;
}

/* ------------------------------------------------------------------------
 * Fixed cases
 * ---------------------------------------------------------------------- */

ENGINE_TEST(hash_fields)
{
    T_NEED_STORE(p);
    engine *e = open_default(p);
    const char *f[] = {"a", "b", "c", "a"}, *v[] = {"1", "2", "3", "9"};
    tres r = h_set(e, "h", 4, f, v);
    cr_assert_eq(r.r.status, CUDIS_OK, "%s: %d", p->name, r.r.status);
    cr_assert_eq(r.r.flags, CUDIS_R_DONE);
    cr_assert_eq(r.r.num, 3, "a field given twice counts once");
    cr_assert_str_eq(h_all(e, T_NOW, "h"), "a=9,b=2,c=3");
    const char *f2[] = {"b", "d"}, *v2[] = {"22", ""};
    r = h_set(e, "h", 2, f2, v2);
    cr_assert_eq(r.r.flags, CUDIS_R_FOUND | CUDIS_R_DONE);
    cr_assert_eq(r.r.num, 1);
    cr_assert_str_eq(h_all(e, T_NOW, "h"), "a=9,b=22,c=3,d=");
    /* HSETNX */
    uint8_t buf[256];
    const char *f3[] = {"a"}, *v3[] = {"x"};
    r = h_op(e, T_NOW, CUDIS_OP_HSET, CUDIS_F_NX, "h", buf, edits(buf, 1, f3, v3), 0);
    cr_assert_eq(r.r.num, 0);
    cr_assert_eq(r.r.flags & CUDIS_R_DONE, 0, "HSETNX of a field there changes nothing");
    /* HGET: the value's bytes only; num says whether the field exists */
    r = h_get(e, T_NOW, "h", "b");
    cr_assert_eq(r.r.flags, CUDIS_R_FOUND | CUDIS_R_VALUE);
    cr_assert_str_eq(r.val, "22");
    cr_assert_eq(r.r.num, 1);
    r = h_get(e, T_NOW, "h", "d");
    cr_assert_eq(r.r.val_len, 0);
    cr_assert_eq(r.r.num, 1, "an empty value exists");
    r = h_get(e, T_NOW, "h", "zz");
    cr_assert_eq(r.r.flags, CUDIS_R_FOUND);
    cr_assert_eq(r.r.num, 0);
    r = h_get(e, T_NOW, "nokey", "a");
    cr_assert_eq(r.r.flags, 0);
    r = h_op(e, T_NOW, CUDIS_OP_HLEN, 0, "h", NULL, 0, 0);
    cr_assert_eq(r.r.num, 4);
    /* HINCRBY */
    r = h_op(e, T_NOW, CUDIS_OP_HINCRBY, 0, "h", "n", 1, -4);
    cr_assert_eq(r.r.num, -4);
    r = h_op(e, T_NOW, CUDIS_OP_HINCRBY, 0, "h", "n", 1, 10);
    cr_assert_eq(r.r.num, 6);
    r = h_op(e, T_NOW, CUDIS_OP_HINCRBY, 0, "h", "b", 1, 1);
    cr_assert_eq(r.r.num, 23);
    r = h_op(e, T_NOW, CUDIS_OP_HINCRBY, 0, "h", "d", 1, 1);
    cr_assert_eq(r.r.status, CUDIS_E_NOTINT, "an empty value is not an integer");
    cr_assert_str_eq(h_all(e, T_NOW, "h"), "a=9,b=23,c=3,d=,n=6");
    /* HDEL, down to nothing: the key goes */
    const char *f4[] = {"a", "zz", "a", "c"};
    r = h_op(e, T_NOW, CUDIS_OP_HDEL, 0, "h", buf, edits(buf, 4, f4, NULL), 0);
    cr_assert_eq(r.r.num, 2);
    cr_assert_eq(r.r.flags, CUDIS_R_FOUND | CUDIS_R_DONE);
    cr_assert_str_eq(h_all(e, T_NOW, "h"), "b=23,d=,n=6");
    const char *f5[] = {"b", "d", "n"};
    r = h_op(e, T_NOW, CUDIS_OP_HDEL, 0, "h", buf, edits(buf, 3, f5, NULL), 0);
    cr_assert_eq(r.r.num, 3);
    cr_assert_eq(r.r.flags, CUDIS_R_FOUND | CUDIS_R_DONE | CUDIS_R_GONE);
    r = t_op(e, T_NOW, CUDIS_OP_EXISTS, 0, "h", NULL, 0, 0);
    cr_assert_eq(r.r.flags & CUDIS_R_FOUND, 0, "the last field removed the key");
    cr_assert_eq(stats_of(e).items, 0);
    /* malformed edits are the op's error, and change nothing */
    r = h_set(e, "g", 1, f3, v3);
    uint8_t bad[] = {5, 'a', 'b'};
    r = h_op(e, T_NOW, CUDIS_OP_HSET, 0, "g", bad, sizeof(bad), 0);
    cr_assert_eq(r.r.status, CUDIS_E_INVAL);
    cr_assert_str_eq(h_all(e, T_NOW, "g"), "a=x");
    engine_destroy(e);
}

ENGINE_TEST(hash_types)
{
    T_NEED_STORE(p);
    engine *e = open_default(p);
    const char *f[] = {"a"}, *v[] = {"1"};
    h_set(e, "h", 1, f, v);
    T_SET(e, "s", "str");
    /* hash ops on a string, string ops on a hash */
    tres r = h_get(e, T_NOW, "s", "a");
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    r = h_set(e, "s", 1, f, v);
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    t_expect(e, T_NOW, "s", "str");
    static const uint8_t str_ops[] = {CUDIS_OP_GET, CUDIS_OP_INCRBY, CUDIS_OP_APPEND,
                                      CUDIS_OP_SETRANGE, CUDIS_OP_SETBIT};
    for (size_t i = 0; i < sizeof(str_ops); i++) {
        r = t_op(e, T_NOW, str_ops[i], 0, "h", "x", 1, 0);
        cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE, "%s: op %u on a hash: %d", p->name, str_ops[i],
                     r.r.status);
    }
    r = t_op(e, T_NOW, CUDIS_OP_SET, CUDIS_F_GET, "h", "x", 0, 0);
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE, "SET ... GET on a hash");
    cr_assert_str_eq(h_all(e, T_NOW, "h"), "a=1", "nothing changed");
    /* EXISTS reports the type; TTL, EXPIRE, PERSIST take any */
    r = t_op(e, T_NOW, CUDIS_OP_EXISTS, 0, "h", NULL, 0, 0);
    cr_assert_eq(r.r.type, CUDIS_TYPE_HASH);
    r = t_op(e, T_NOW, CUDIS_OP_EXISTS, 0, "s", NULL, 0, 0);
    cr_assert_eq(r.r.type, CUDIS_TYPE_STRING);
    r = t_op(e, T_NOW, CUDIS_OP_EXPIRE, 0, "h", NULL, 0, T_NOW + 50);
    cr_assert_eq(r.r.flags & CUDIS_R_DONE, CUDIS_R_DONE);
    r = t_op(e, T_NOW, CUDIS_OP_EXISTS, 0, "h", NULL, 0, 0);
    cr_assert_eq(r.r.type, CUDIS_TYPE_HASH, "an expiry added keeps the type");
    const char *f2[] = {"b"}, *v2[] = {"2"};
    h_set(e, "h", 1, f2, v2);
    r = t_op(e, T_NOW, CUDIS_OP_TTL, 0, "h", NULL, 0, 0);
    cr_assert_eq(r.r.num, T_NOW + 50, "a field write keeps the key's expiry");
    cr_assert_str_eq(h_all(e, T_NOW + 49, "h"), "a=1,b=2");
    cr_assert_str_eq(h_all(e, T_NOW + 50, "h"), "(none)", "the expiry covers every field");
    r = h_op(e, T_NOW + 50, CUDIS_OP_HLEN, 0, "h", NULL, 0, 0);
    cr_assert_eq(r.r.num, 0);
    /* the whole value moves with its type (RENAME, DUMP/RESTORE) */
    h_set(e, "h", 1, f, v);
    tbatch t;
    tb_init(&t, 4096);
    uint32_t i = tb_op(&t, CUDIS_OP_GET, 0, "h", 1, NULL, 0, 0, 0);
    t.ops[i].type = CUDIS_TYPE_ANY;
    i = tb_op(&t, CUDIS_OP_GET, 0, "s", 1, NULL, 0, 0, 0);
    t.ops[i].type = CUDIS_TYPE_ANY;
    tb_run(e, &t, T_NOW);
    cr_assert_eq(t.res[0].type, CUDIS_TYPE_HASH);
    cr_assert_eq(t.res[1].type, CUDIS_TYPE_STRING);
    cr_assert_eq(t.res[1].val_len, 3);
    uint8_t copy[256];
    uint32_t clen = t.res[0].val_len;
    memcpy(copy, tb_val(&t, 0), clen);
    tb_reset(&t);
    i = tb_op(&t, CUDIS_OP_SET, 0, "h2", 2, copy, clen, 0, 0);
    t.ops[i].type = CUDIS_TYPE_HASH;
    i = tb_op(&t, CUDIS_OP_SET, 0, "s", 1, "plain", 5, 0, 0); /* SET replaces a hash too */
    tb_run(e, &t, T_NOW);
    tb_free(&t);
    cr_assert_str_eq(h_all(e, T_NOW, "h2"), "a=1");
    t_op(e, T_NOW, CUDIS_OP_SET, 0, "h", "now a string", 0, 0);
    t_expect(e, T_NOW, "h", "now a string");
    r = t_op(e, T_NOW, CUDIS_OP_EXISTS, 0, "h", NULL, 0, 0);
    cr_assert_eq(r.r.type, CUDIS_TYPE_STRING);
    engine_destroy(e);
}

/* ------------------------------------------------------------------------
 * Randomised model: strings and hashes on shared keys
 * ---------------------------------------------------------------------- */

#define HM_FIELDS 6
#define HM_VLEN 12

typedef struct hm_field {
    uint8_t f, vlen; /* field "f<f>" */
    char v[HM_VLEN];
} hm_field;

typedef struct hm_key {
    bool live, is_hash;
    int64_t exp;
    uint8_t n;
    hm_field fl[HM_FIELDS]; /* in HGETALL's order */
    uint8_t slen;
    char s[HM_VLEN]; /* a string's value */
} hm_key;

static bool hm_live(const hm_key *m, int64_t now)
{
    return m->live && (m->exp == 0 || m->exp > now);
}

static int hm_find(const hm_key *m, int f)
{
    for (int i = 0; i < m->n; i++) {
        if (m->fl[i].f == f) {
            return i;
        }
    }
    return -1;
}

/* HSET of field f = v: 1 when added. */
static int hm_set(hm_key *m, int f, const char *v, uint8_t vlen)
{
    int i = hm_find(m, f);
    int added = i < 0;
    if (i < 0) {
        i = m->n++;
        m->fl[i].f = (uint8_t)f;
    }
    memcpy(m->fl[i].v, v, vlen);
    m->fl[i].vlen = vlen;
    return added;
}

static void hm_rand_val(uint64_t *rng, char *v, uint8_t *vlen)
{
    uint64_t r = t_rand(rng);
    if (r & 1) {
        *vlen = (uint8_t)snprintf(v, HM_VLEN, "%d", (int)(r >> 8) % 2000 - 1000);
    } else {
        *vlen = (uint8_t)((r >> 8) % HM_VLEN);
        for (uint8_t x = 0; x < *vlen; x++) {
            v[x] = (char)('a' + (t_rand(rng) % 26));
        }
    }
}

/* The expected outcome of one op, applied to the model. */
typedef struct hm_want {
    int status;
    bool value;
    char val[256];
    uint32_t vlen;
    int64_t num;
} hm_want;

/* An engine of budget bytes for a model run; strict: an exact engine with
 * room to spare, which must drop nothing. */
static engine *open_budget(const eng_param *p, uint64_t budget, bool *strict)
{
    engine_config cfg;
    conf_default(&cfg);
    cfg.memory_bytes = budget;
    *strict = (p->caps & CAP_EXACT) && budget >= (1u << 20);
    return open_cfg(p, &cfg);
}

static void hm_run(const eng_param *p, uint64_t budget, uint64_t seed, int rounds, int nkeys)
{
    bool strict;
    engine *e = open_budget(p, budget, &strict);
    hm_key *m = calloc((size_t)nkeys, sizeof(*m));
    int *key_of = calloc((size_t)nkeys, sizeof(int));
    hm_want *want = calloc((size_t)nkeys, sizeof(*want));
    unsigned char *used = malloc((size_t)nkeys);
    tbatch t;
    tb_init(&t, 1 << 16);
    uint64_t rng = seed, dropped = 0, checked = 0;
    int64_t now = T_NOW;
    for (int round = 0; round < rounds; round++) {
        tb_reset(&t);
        now += (int64_t)(t_rand(&rng) % 4);
        memset(used, 0, (size_t)nkeys);
        int nk = 1 + (int)(t_rand(&rng) % 60);
        for (int j = 0; j < nk; j++) {
            int key = (int)(t_rand(&rng) % (uint64_t)nkeys);
            if (used[key]) {
                continue;
            }
            used[key] = 1;
            key_of[t.n] = key;
            char k[16];
            uint32_t kl = (uint32_t)snprintf(k, sizeof(k), "k%d", key);
            uint64_t r = t_rand(&rng);
            uint8_t buf[512];
            uint32_t bl = 0;
            char fname[4] = {'f', (char)('0' + (r >> 20) % HM_FIELDS), 0, 0};
            uint32_t i;
            switch (r % 14) {
            case 0:
            case 1:
            case 2:
            case 3: { /* HSET of 1-3 fields, a field maybe twice */
                int n = 1 + (int)((r >> 8) % 3);
                for (int x = 0; x < n; x++) {
                    char v[HM_VLEN];
                    uint8_t vl;
                    hm_rand_val(&rng, v, &vl);
                    char fn[3] = {'f', (char)('0' + t_rand(&rng) % HM_FIELDS), 0};
                    bl += cudis_varint_put(buf + bl, 2);
                    memcpy(buf + bl, fn, 2);
                    bl += 2;
                    bl += cudis_varint_put(buf + bl, vl);
                    memcpy(buf + bl, v, vl);
                    bl += vl;
                }
                /* HSETNX takes one field */
                i = tb_op(&t, CUDIS_OP_HSET, (n == 1 && (r & 0x800000)) ? CUDIS_F_NX : 0, k, kl,
                          buf, bl, 0, 0);
                break;
            }
            case 4: { /* HDEL of 1-2 fields */
                int n = 1 + (int)((r >> 8) % 2);
                for (int x = 0; x < n; x++) {
                    char fn[3] = {'f', (char)('0' + t_rand(&rng) % HM_FIELDS), 0};
                    bl += cudis_varint_put(buf + bl, 2);
                    memcpy(buf + bl, fn, 2);
                    bl += 2;
                }
                i = tb_op(&t, CUDIS_OP_HDEL, 0, k, kl, buf, bl, 0, 0);
                break;
            }
            case 5:
            case 6: i = tb_op(&t, CUDIS_OP_HGET, 0, k, kl, fname, 2, 0, 0); break;
            case 7: i = tb_op(&t, CUDIS_OP_HLEN, 0, k, kl, NULL, 0, 0, 0); break;
            case 8:
                i = tb_op(&t, CUDIS_OP_HINCRBY, 0, k, kl, fname, 2, (int64_t)(r >> 40) % 9 - 4, 0);
                break;
            case 9: i = tb_op(&t, CUDIS_OP_GET, 0, k, kl, NULL, 0, 0, 0); break; /* a string */
            case 10: { /* the whole hash */
                i = tb_op(&t, CUDIS_OP_GET, 0, k, kl, NULL, 0, 0, 0);
                t.ops[i].type = CUDIS_TYPE_HASH;
                break;
            }
            case 11: {
                char v[HM_VLEN];
                uint8_t vl;
                hm_rand_val(&rng, v, &vl);
                i = tb_op(&t, CUDIS_OP_SET, 0, k, kl, v, vl, 0, 0);
                break;
            }
            case 12:
                i = tb_op(&t, CUDIS_OP_EXPIRE, 0, k, kl, NULL, 0, 0,
                          now + 1 + (int64_t)((r >> 30) % 20));
                break;
            default: i = tb_op(&t, CUDIS_OP_EXISTS, 0, k, kl, NULL, 0, 0, 0); break;
            }
            (void)i;
        }
        tb_run(e, &t, now);
        for (uint32_t i = 0; i < t.n; i++) {
            const cudis_op *op = &t.ops[i];
            const cudis_result *res = &t.res[i];
            int key = key_of[i];
            hm_key *mk = &m[key];
            bool found = res->flags & CUDIS_R_FOUND;
            if (found) {
                cr_assert(hm_live(mk, now), "round %d: k%d found, the model has it gone", round,
                          key);
            } else if (hm_live(mk, now)) {
                cr_assert(!strict, "round %d: exact engine dropped k%d with room to spare", round,
                          key);
                dropped++;
                mk->live = false; /* the cache dropped it, as a whole: forget it */
            }
            if (!hm_live(mk, now)) {
                memset(mk, 0, sizeof(*mk));
            }
            bool live = mk->live;
            bool is_hash_op = op->code >= CUDIS_OP_HSET && op->code <= CUDIS_OP_HLEN;
            bool wants_hash =
                is_hash_op || (op->code == CUDIS_OP_GET && op->type == CUDIS_TYPE_HASH);
            bool wants_str = (op->code == CUDIS_OP_GET && op->type == CUDIS_TYPE_STRING);
            hm_want *w = &want[key];
            memset(w, 0, sizeof(*w));
            if (live && ((wants_hash && !mk->is_hash) || (wants_str && mk->is_hash))) {
                w->status = CUDIS_E_WRONGTYPE;
            } else {
                const uint8_t *a = t.in + op->val_off;
                switch (op->code) {
                case CUDIS_OP_HSET: {
                    hm_key nk = *mk;
                    if (!live) {
                        memset(&nk, 0, sizeof(nk));
                        nk.is_hash = true;
                    }
                    cudis_hentry x;
                    for (uint32_t at = 0; at < op->val_len; at += x.size) {
                        cr_assert(cudis_hentry_at(a + at, op->val_len - at, true, &x));
                        int f = x.f[1] - '0';
                        if ((op->flags & CUDIS_F_NX) && hm_find(&nk, f) >= 0) {
                            continue;
                        }
                        w->num += hm_set(&nk, f, (const char *)x.v, (uint8_t)x.vlen);
                    }
                    if (nk.n > 0) {
                        nk.live = true;
                    }
                    *mk = nk;
                    break;
                }
                case CUDIS_OP_HDEL: {
                    cudis_hentry x;
                    for (uint32_t at = 0; live && at < op->val_len; at += x.size) {
                        cr_assert(cudis_hentry_at(a + at, op->val_len - at, false, &x));
                        int j2 = hm_find(mk, x.f[1] - '0');
                        if (j2 >= 0) {
                            memmove(&mk->fl[j2], &mk->fl[j2 + 1],
                                    (size_t)(mk->n - j2 - 1) * sizeof(hm_field));
                            mk->n--;
                            w->num++;
                        }
                    }
                    if (live && mk->n == 0) {
                        memset(mk, 0, sizeof(*mk));
                    }
                    break;
                }
                case CUDIS_OP_HGET: {
                    int j2 = live ? hm_find(mk, a[1] - '0') : -1;
                    if (j2 >= 0) {
                        w->value = true;
                        w->num = 1;
                        w->vlen = mk->fl[j2].vlen;
                        memcpy(w->val, mk->fl[j2].v, w->vlen);
                    }
                    break;
                }
                case CUDIS_OP_HLEN: w->num = live ? mk->n : 0; break;
                case CUDIS_OP_HINCRBY: {
                    int j2 = live ? hm_find(mk, a[1] - '0') : -1;
                    int64_t v = 0;
                    if (j2 >= 0 &&
                        !cudis_str2ll((const uint8_t *)mk->fl[j2].v, mk->fl[j2].vlen, &v)) {
                        w->status = CUDIS_E_NOTINT;
                        break;
                    }
                    v += op->arg;
                    char txt[24];
                    uint8_t tl = (uint8_t)snprintf(txt, sizeof(txt), "%lld", (long long)v);
                    if (tl > HM_VLEN) {
                        w->status = -1000; /* not reached: values stay short */
                        break;
                    }
                    if (!live) {
                        memset(mk, 0, sizeof(*mk));
                        mk->is_hash = true;
                        mk->live = true;
                    }
                    hm_set(mk, a[1] - '0', txt, tl);
                    w->num = v;
                    break;
                }
                case CUDIS_OP_GET:
                    if (live && op->type == CUDIS_TYPE_STRING) {
                        w->value = true;
                        w->vlen = mk->slen;
                        memcpy(w->val, mk->s, mk->slen);
                    } else if (live) {
                        w->value = true;
                        uint32_t o = CUDIS_HASH_HDR;
                        w->val[0] = (char)mk->n;
                        w->val[1] = w->val[2] = w->val[3] = 0;
                        for (int j2 = 0; j2 < mk->n; j2++) {
                            char fn[2] = {'f', (char)('0' + mk->fl[j2].f)};
                            o += cudis_put_entry((uint8_t *)w->val + o, (const uint8_t *)fn, 2,
                                                 (const uint8_t *)mk->fl[j2].v, mk->fl[j2].vlen);
                        }
                        w->vlen = o;
                    }
                    w->num = live ? (mk->exp ? mk->exp : -1) : -1;
                    break;
                case CUDIS_OP_SET:
                    memset(mk, 0, sizeof(*mk));
                    mk->live = true;
                    mk->slen = (uint8_t)op->val_len;
                    memcpy(mk->s, a, op->val_len);
                    break;
                case CUDIS_OP_EXPIRE:
                    if (live) {
                        mk->exp = op->expire_ms;
                    }
                    break;
                default: /* EXISTS (num: an LFU store's counter) */
                    w->num = res->num;
                    if (live) {
                        cr_assert_eq(res->type, mk->is_hash ? CUDIS_TYPE_HASH : CUDIS_TYPE_STRING,
                                     "round %d k%d: type", round, key);
                    }
                    break;
                }
            }
            cr_assert_eq(res->status, w->status, "%s round %d k%d code %u: status %d, want %d",
                         p->name, round, key, op->code, res->status, w->status);
            if (w->status != CUDIS_OK) {
                continue;
            }
            cr_assert_eq(res->num, w->num, "round %d k%d code %u: num %lld, want %lld", round, key,
                         op->code, (long long)res->num, (long long)w->num);
            cr_assert_eq((res->flags & CUDIS_R_VALUE) != 0, w->value, "round %d k%d code %u: value",
                         round, key, op->code);
            if (w->value) {
                cr_assert_eq(res->val_len, w->vlen, "round %d k%d code %u: length", round, key,
                             op->code);
                cr_assert_eq(memcmp(tb_val(&t, i), w->val, w->vlen), 0,
                             "round %d k%d code %u: not the latest value", round, key, op->code);
                checked++;
            }
        }
        if (round % 64 == 0) {
            engine_sweep(e, now, 64, NULL);
        }
    }
    if (strict) {
        cr_assert_eq(dropped, 0);
    }
    if (budget < (1u << 20)) {
        cr_assert_gt(dropped, 0, "the tight budget must drop keys");
    }
    cr_assert_gt(checked, (uint64_t)rounds / 4, "values were compared");
    tb_free(&t);
    free(used);
    free(want);
    free(key_of);
    free(m);
    engine_destroy(e);
}

ENGINE_TEST(hash_model_roomy)
{
    T_NEED_STORE(p);
    hm_run(p, 16ull << 20, 0x4a5b, 3000, 300);
}

ENGINE_TEST(hash_model_tight_budget)
{
    T_NEED_STORE(p);
    hm_run(p, 256u << 10, 0x77e1, 3000, 6000);
}

/* A set: the hash ops with op->type CUDIS_TYPE_SET, members without values. */
static tres s_op(engine *e, uint8_t code, uint16_t flags, const char *k, const void *v,
                 uint32_t vlen)
{
    return typed_op(e, T_NOW, CUDIS_TYPE_SET, code, flags, k, v, vlen, 0);
}

ENGINE_TEST(set_members)
{
    T_NEED_STORE(p);
    engine *e = open_default(p);
    const char *m[] = {"a", "b", "a"}, *empty[] = {"", "", ""};
    uint8_t buf[256];
    tres r = s_op(e, CUDIS_OP_HSET, CUDIS_F_NX, "s", buf, edits(buf, 3, m, empty));
    cr_assert_eq(r.r.status, CUDIS_OK, "%s: %d", p->name, r.r.status);
    cr_assert_eq(r.r.num, 2);
    r = s_op(e, CUDIS_OP_HSET, CUDIS_F_NX, "s", buf, edits(buf, 1, m, empty));
    cr_assert_eq(r.r.num, 0);
    cr_assert_eq(r.r.flags & CUDIS_R_DONE, 0, "SADD of a member there changes nothing");
    r = t_op(e, T_NOW, CUDIS_OP_EXISTS, 0, "s", NULL, 0, 0);
    cr_assert_eq(r.r.type, CUDIS_TYPE_SET);
    r = s_op(e, CUDIS_OP_HLEN, 0, "s", NULL, 0);
    cr_assert_eq(r.r.num, 2);
    r = s_op(e, CUDIS_OP_HGET, 0, "s", "b", 1);
    cr_assert_eq(r.r.num, 1);
    r = s_op(e, CUDIS_OP_HGET, 0, "s", "z", 1);
    cr_assert_eq(r.r.num, 0);
    /* a set is not a hash, nor the other way round */
    r = h_get(e, T_NOW, "s", "a");
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    r = s_op(e, CUDIS_OP_HINCRBY, 0, "s", "a", 1);
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE, "HINCRBY is for hashes");
    const char *f[] = {"a"}, *v[] = {"1"};
    h_set(e, "h", 1, f, v);
    r = s_op(e, CUDIS_OP_HLEN, 0, "h", NULL, 0);
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    r = s_op(e, CUDIS_OP_HDEL, 0, "s", buf, edits(buf, 2, m, NULL));
    cr_assert_eq(r.r.num, 2);
    cr_assert(r.r.flags & CUDIS_R_GONE);
    r = t_op(e, T_NOW, CUDIS_OP_EXISTS, 0, "s", NULL, 0, 0);
    cr_assert_eq(r.r.flags & CUDIS_R_FOUND, 0);
    engine_destroy(e);
}

/* A list: LPUSH/LPOP splice the value at either end; HLEN counts it. */
static tres l_op(engine *e, uint8_t code, uint16_t flags, const char *k, const void *v,
                 uint32_t vlen, int64_t arg)
{
    return typed_op(e, T_NOW, CUDIS_TYPE_LIST, code, flags, k, v, vlen, arg);
}

ENGINE_TEST(list_ends)
{
    T_NEED_STORE(p);
    engine *e = open_default(p);
    const char *ab[] = {"a", "b"}, *e2[] = {"", ""}, *z[] = {"z"};
    uint8_t buf[256];
    tres r = l_op(e, CUDIS_OP_LPUSH, CUDIS_F_XX, "l", buf, edits(buf, 2, ab, e2), 0);
    cr_assert_eq(r.r.num, 0, "LPUSHX onto nothing");
    cr_assert_eq(r.r.flags & CUDIS_R_DONE, 0);
    r = l_op(e, CUDIS_OP_LPUSH, CUDIS_F_RIGHT, "l", buf, edits(buf, 2, ab, e2), 0);
    cr_assert_eq(r.r.status, CUDIS_OK, "%s: %d", p->name, r.r.status);
    cr_assert_eq(r.r.num, 2);
    r = l_op(e, CUDIS_OP_LPUSH, 0, "l", buf, edits(buf, 1, z, e2), 0);
    cr_assert_eq(r.r.num, 3);
    tbatch t;
    tb_init(&t, 4096);
    uint32_t i = tb_op(&t, CUDIS_OP_GET, 0, "l", 1, NULL, 0, 0, 0);
    t.ops[i].type = CUDIS_TYPE_LIST;
    tb_run(e, &t, T_NOW);
    const uint8_t want[] = {3, 0, 0, 0, 1, 'z', 0, 1, 'a', 0, 1, 'b', 0};
    cr_assert_eq(t.res[0].val_len, sizeof(want));
    cr_assert_eq(memcmp(tb_val(&t, 0), want, sizeof(want)), 0, "z a b");
    tb_free(&t);
    /* pops return the run of entries as it lies in the list */
    r = l_op(e, CUDIS_OP_LPOP, CUDIS_F_RIGHT, "l", NULL, 0, 2);
    cr_assert_eq(r.r.num, 2);
    cr_assert_eq(r.r.val_len, 6);
    cr_assert_eq(memcmp(r.val,
                        "\x01"
                        "a\0\x01"
                        "b\0",
                        6),
                 0);
    r = l_op(e, CUDIS_OP_HLEN, 0, "l", NULL, 0, 0);
    cr_assert_eq(r.r.num, 1);
    r = l_op(e, CUDIS_OP_LPOP, 0, "l", NULL, 0, 5);
    cr_assert_eq(r.r.num, 1);
    cr_assert(r.r.flags & CUDIS_R_GONE, "the last element removed the key");
    r = t_op(e, T_NOW, CUDIS_OP_EXISTS, 0, "l", NULL, 0, 0);
    cr_assert_eq(r.r.flags & CUDIS_R_FOUND, 0);
    r = l_op(e, CUDIS_OP_LPOP, 0, "l", NULL, 0, 1);
    cr_assert_eq(r.r.flags, 0, "a pop of nothing");
    /* a list is not a set, nor a string */
    l_op(e, CUDIS_OP_LPUSH, 0, "l", buf, edits(buf, 1, z, e2), 0);
    r = s_op(e, CUDIS_OP_HLEN, 0, "l", NULL, 0);
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    r = T_GET(e, "l");
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    T_SET(e, "s", "v");
    r = l_op(e, CUDIS_OP_LPOP, 0, "s", NULL, 0, 1);
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    engine_destroy(e);
}

/* A sorted set: an item of type CUDIS_TYPE_ZSET the server writes whole
 * (members in order, 8-byte scores); HLEN, HGET (the score's bytes) and
 * HDEL are its ZCARD, ZSCORE and ZREM, and removal keeps the order and
 * the type. */
static tres z_op(engine *e, uint8_t code, uint16_t flags, const char *k, const void *v,
                 uint32_t vlen)
{
    return typed_op(e, T_NOW, CUDIS_TYPE_ZSET, code, flags, k, v, vlen, 0);
}

ENGINE_TEST(zset_members)
{
    T_NEED_STORE(p);
    engine *e = open_default(p);
    double s1 = 1.5, s2 = 2, s3 = -7;
    char sc[3][8];
    memcpy(sc[0], &s3, 8);
    memcpy(sc[1], &s1, 8);
    memcpy(sc[2], &s2, 8);
    uint8_t z[64] = {3, 0, 0, 0};
    uint32_t n = 4;
    const char *m[] = {"c", "a", "b"};
    for (int i = 0; i < 3; i++) { /* ascending by score: c -7, a 1.5, b 2 */
        z[n++] = 1;
        z[n++] = (uint8_t)m[i][0];
        z[n++] = 8;
        memcpy(z + n, sc[i], 8);
        n += 8;
    }
    tres r = z_op(e, CUDIS_OP_SET, 0, "z", z, n);
    cr_assert_eq(r.r.status, CUDIS_OK, "%s: %d", p->name, r.r.status);
    r = t_op(e, T_NOW, CUDIS_OP_EXISTS, 0, "z", NULL, 0, 0);
    cr_assert_eq(r.r.type, CUDIS_TYPE_ZSET);
    r = z_op(e, CUDIS_OP_HLEN, 0, "z", NULL, 0);
    cr_assert_eq(r.r.num, 3);
    r = z_op(e, CUDIS_OP_HGET, 0, "z", "a", 1);
    cr_assert_eq(r.r.num, 1);
    cr_assert_eq(r.r.val_len, 8);
    cr_assert_eq(memcmp(r.val, &s1, 8), 0, "the score's bytes");
    uint8_t buf[64];
    const char *del[] = {"a"}, *none[] = {""};
    r = z_op(e, CUDIS_OP_HDEL, 0, "z", buf, edits(buf, 1, del, none));
    cr_assert_eq(r.r.num, 1);
    tbatch t;
    tb_init(&t, 4096);
    uint32_t i = tb_op(&t, CUDIS_OP_GET, 0, "z", 1, NULL, 0, 0, 0);
    t.ops[i].type = CUDIS_TYPE_ZSET;
    tb_run(e, &t, T_NOW);
    cr_assert_eq(t.res[0].status, CUDIS_OK);
    cr_assert_eq(t.res[0].type, CUDIS_TYPE_ZSET, "HDEL keeps the type");
    cr_assert_eq(t.res[0].val_len, 4 + 2 * 11);
    const uint8_t *v = tb_val(&t, 0);
    cr_assert_eq(v[0], 2);
    cr_assert_eq(v[5], 'c', "the order kept");
    cr_assert_eq(v[16], 'b');
    tb_free(&t);
    /* a zset is no hash, set or list; nor they one */
    r = h_get(e, T_NOW, "z", "b");
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    r = s_op(e, CUDIS_OP_HLEN, 0, "z", NULL, 0);
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    r = l_op(e, CUDIS_OP_LPOP, 0, "z", NULL, 0, 1);
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    T_SET(e, "str", "v");
    r = z_op(e, CUDIS_OP_HLEN, 0, "str", NULL, 0);
    cr_assert_eq(r.r.status, CUDIS_E_WRONGTYPE);
    r = z_op(e, CUDIS_OP_HDEL, 0, "z", buf, edits(buf, 1, m, none));
    r = z_op(e, CUDIS_OP_HDEL, 0, "z", buf, edits(buf, 1, m + 2, none));
    cr_assert(r.r.flags & CUDIS_R_GONE, "the last member removed the key");
    engine_destroy(e);
}

/* ZADD and ZRANGE, the sorted set's own ops, against a reference kept
 * here: a random stream of ZADDs (every option) and ranges (by rank and
 * by score, REV, LIMIT) on one key, each answer checked. Members m0..m11,
 * scores from a small set (ties are common: the member bytes order them). */
typedef struct zref {
    double s;
    char m[4];
} zref;

static int zref_cmp(const zref *a, const zref *b)
{
    if (a->s != b->s) {
        return a->s < b->s ? -1 : 1;
    }
    return strcmp(a->m, b->m); /* "m1" < "m10" < "m2": bytes, shorter first */
}

static void zref_sort(zref *z, int n)
{
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && zref_cmp(&z[j - 1], &z[j]) > 0; j--) {
            zref t = z[j];
            z[j] = z[j - 1];
            z[j - 1] = t;
        }
    }
}

static uint32_t zentry(uint8_t *buf, const char *m, double s)
{
    return cudis_put_entry(buf, (const uint8_t *)m, (uint32_t)strlen(m), (const uint8_t *)&s, 8);
}

/* The reference's ZADD: what the op must answer (num, done, skipped). */
static void zref_add(zref *z, int *n, const char *m, double s, uint16_t f, int64_t *num, bool *done,
                     bool *skipped, bool *nan)
{
    int i = 0;
    while (i < *n && strcmp(z[i].m, m) != 0) {
        i++;
    }
    bool incr = f & CUDIS_F_INCR;
    *done = *skipped = *nan = false;
    *num = 0;
    if (i < *n) {
        double ns = incr ? z[i].s + s : s;
        if (f & CUDIS_F_NX) {
            *skipped = true;
            return;
        }
        if (isnan(ns)) {
            *nan = true;
            return;
        }
        if (((f & CUDIS_F_GT) && ns <= z[i].s) || ((f & CUDIS_F_LT) && ns >= z[i].s)) {
            *skipped = true;
            return;
        }
        *num = incr ? (int64_t)cudis_double_bits(ns) : 0;
        if (ns != z[i].s) {
            z[i].s = ns == 0 ? 0 : ns;
            *done = true;
        }
    } else {
        if (f & CUDIS_F_XX) {
            *skipped = true;
            return;
        }
        *num = incr ? (int64_t)cudis_double_bits(s) : 1;
        z[*n].s = s == 0 ? 0 : s;
        snprintf(z[*n].m, sizeof(z[*n].m), "%s", m);
        (*n)++;
        *done = true;
    }
    zref_sort(z, *n);
}

/* The reference's selection [*lo, *hi] (forward indexes) of a range. */
static void zref_range(const zref *z, int n, bool byscore, bool rev, double min, double max,
                       int64_t ex, int64_t a, int64_t b, int64_t *lo, int64_t *hi)
{
    if (!byscore) {
        int64_t s = a < 0 ? a + n : a, t = b < 0 ? b + n : b;
        s = s < 0 ? 0 : s;
        t = t >= n ? n - 1 : t;
        *lo = rev ? n - 1 - t : s;
        *hi = rev ? n - 1 - s : t;
        return;
    }
    int64_t m[16], k = 0;
    for (int i = 0; i < n; i++) {
        bool in_min = (ex & CUDIS_ZR_MINEX) ? z[i].s > min : z[i].s >= min;
        bool in_max = (ex & CUDIS_ZR_MAXEX) ? z[i].s < max : z[i].s <= max;
        if (in_min && in_max) {
            m[k++] = i;
        }
    }
    *lo = 0;
    *hi = -1;
    if (a < 0 || a >= k) {
        return;
    }
    int64_t take = b < 0 || b > k - a ? k - a : b;
    if (take == 0) {
        return;
    }
    if (rev) {
        *hi = m[k - 1 - a];
        *lo = m[k - a - take];
    } else {
        *lo = m[a];
        *hi = m[a + take - 1];
    }
}

/* A sorted set of the model: its entries in order and its expiry. */
typedef struct zkey {
    zref z[16];
    int n;
    int64_t exp; /* 0: none */
} zkey;

static bool zkey_live(const zkey *k, int64_t now)
{
    return k->n > 0 && (k->exp == 0 || k->exp > now);
}

/* One op of the model on key k (EXPIRE's expiry too). */
static tres z_exec(engine *e, int64_t now, uint8_t code, uint16_t flags, const char *k,
                   const void *v, uint32_t vlen, int64_t arg, int64_t exp)
{
    return typed_op_exp(e, now, CUDIS_TYPE_ZSET, code, flags, k, v, vlen, arg, exp);
}

/* steps random ops over nkeys sorted sets: ZADD (every option), ZRANGE
 * (ranks, scores, REV, LIMIT), EXPIRE, ZREM, time moving on; each answer
 * checked against the model. A set the store drops goes whole (and an
 * exact engine with room to spare drops none). */
static void za_run(const eng_param *p, uint64_t budget, uint64_t seed, int steps, int nkeys)
{
    bool strict;
    engine *e = open_budget(p, budget, &strict);
    const double sc[] = {0, 1, -1, 2.5, 1000, -INFINITY, INFINITY, -0.0};
    const uint16_t opts[] = {0,          CUDIS_F_NX,   CUDIS_F_XX,
                             CUDIS_F_GT, CUDIS_F_LT,   CUDIS_F_INCR,
                             CUDIS_F_INCR | CUDIS_F_GT, CUDIS_F_INCR | CUDIS_F_XX};
    zkey *keys = calloc((size_t)nkeys, sizeof(*keys));
    uint64_t rng = seed, dropped = 0;
    int64_t now = T_NOW;
    uint8_t buf[64];
    for (int step = 0; step < steps; step++) {
        now += (int64_t)(t_rand(&rng) % 3);
        int ki = (int)(t_rand(&rng) % (uint64_t)nkeys);
        zkey *zk = &keys[ki];
        char key[16];
        snprintf(key, sizeof(key), "z%d", ki);
        uint64_t r = t_rand(&rng);
        char m[4];
        snprintf(m, sizeof(m), "m%d", (int)(t_rand(&rng) % 12));
        double s = sc[t_rand(&rng) % 8];
        int kind = (int)(r % 20); /* 0..11 ZADD, 12..16 ZRANGE, 17 EXPIRE, 18 ZREM, 19 HLEN */
        tres t;
        uint16_t f = 0;
        cudis_zrange_arg za = {0, 0, 0, 0};
        int64_t ex = 0;
        bool byscore = false, rev = false;
        int64_t exp_at = 0;
        if (kind < 12) {
            f = opts[t_rand(&rng) % 8];
            t = z_exec(e, now, CUDIS_OP_ZADD, f, key, buf, zentry(buf, m, s), 0, 0);
        } else if (kind < 17) {
            byscore = t_rand(&rng) & 1;
            rev = t_rand(&rng) & 1;
            za = (cudis_zrange_arg){sc[t_rand(&rng) % 7], sc[t_rand(&rng) % 7],
                                    (int64_t)(t_rand(&rng) % 17) - 8,
                                    (int64_t)(t_rand(&rng) % 17) - 8};
            ex = (int64_t)(t_rand(&rng) % 4);
            if (byscore) {
                za.a = (int64_t)(t_rand(&rng) % 5) - 1;
                za.b = (int64_t)(t_rand(&rng) % 6) - 1;
            }
            f = (byscore ? CUDIS_F_BYSCORE : 0) | (rev ? CUDIS_F_RIGHT : 0);
            t = z_exec(e, now, CUDIS_OP_ZRANGE, f, key, &za, sizeof(za), ex, 0);
        } else if (kind == 17) {
            exp_at = now + 1 + (int64_t)(t_rand(&rng) % 40);
            t = z_exec(e, now, CUDIS_OP_EXPIRE, 0, key, NULL, 0, 0, exp_at);
        } else if (kind == 18) {
            const char *del[] = {m}, *none[] = {""};
            t = z_exec(e, now, CUDIS_OP_HDEL, 0, key, buf, edits(buf, 1, del, none), 0, 0);
        } else {
            t = z_exec(e, now, CUDIS_OP_HLEN, 0, key, NULL, 0, 0, 0);
        }
        bool found = t.r.flags & CUDIS_R_FOUND;
        if (found) {
            cr_assert(zkey_live(zk, now), "%s step %d: %s found, the model has it gone", p->name,
                      step, key);
        } else if (zkey_live(zk, now)) {
            cr_assert(!strict, "%s step %d: exact engine dropped %s with room to spare", p->name,
                      step, key);
            dropped++;
            zk->n = 0; /* the cache dropped it, as a whole: forget it */
        }
        if (!zkey_live(zk, now)) {
            memset(zk, 0, sizeof(*zk));
        }
        if (t.r.status == CUDIS_E_FULL || t.r.status == CUDIS_E_NOFIT) {
            cr_assert(!strict, "%s step %d: no room with room to spare", p->name, step);
            continue; /* nothing was written */
        }
        if (kind < 12) {
            int64_t num;
            bool done, skipped, nan;
            zref_add(zk->z, &zk->n, m, s, f, &num, &done, &skipped, &nan);
            if (nan) {
                cr_assert_eq(t.r.status, CUDIS_E_NAN, "%s step %d", p->name, step);
                continue;
            }
            cr_assert_eq(t.r.status, CUDIS_OK, "%s step %d: %d", p->name, step, t.r.status);
            cr_assert_eq(t.r.num, num, "%s step %d: ZADD %s %g flags %x", p->name, step, m, s, f);
            cr_assert_eq((t.r.flags & CUDIS_R_DONE) != 0, done, "%s step %d", p->name, step);
            cr_assert_eq((t.r.flags & CUDIS_R_SKIPPED) != 0, skipped, "%s step %d", p->name, step);
        } else if (kind < 17) {
            cr_assert_eq(t.r.status, CUDIS_OK, "%s step %d: %d", p->name, step, t.r.status);
            if (zk->n == 0) {
                continue;
            }
            int64_t lo, hi;
            zref_range(zk->z, zk->n, byscore, rev, za.min, za.max, ex, za.a, za.b, &lo, &hi);
            int64_t want = lo <= hi && lo < zk->n && hi >= 0 ? hi - lo + 1 : 0;
            cr_assert_eq(t.r.num, want, "%s step %d: range of %" PRId64 " not %" PRId64, p->name,
                         step, t.r.num, want);
            cudis_hentry x;
            uint32_t at = 0;
            for (int64_t i = 0; i < want; i++, at += x.size) {
                cr_assert(cudis_hentry_at((const uint8_t *)t.val + at, t.r.val_len - at, true, &x));
                const zref *w = &zk->z[lo + i];
                cr_assert_eq(x.flen, strlen(w->m), "%s step %d", p->name, step);
                cr_assert_eq(memcmp(x.f, w->m, x.flen), 0, "%s step %d", p->name, step);
                cr_assert_eq(cudis_zscore(&x), w->s, "%s step %d", p->name, step);
            }
            cr_assert_eq(at, t.r.val_len, "%s step %d: the run holds just those", p->name, step);
        } else if (kind == 17) {
            cr_assert_eq(t.r.status, CUDIS_OK);
            cr_assert_eq((t.r.flags & CUDIS_R_DONE) != 0, zk->n > 0, "%s step %d", p->name, step);
            if (zk->n > 0) {
                zk->exp = exp_at;
            }
        } else if (kind == 18) {
            cr_assert_eq(t.r.status, CUDIS_OK);
            int i = 0;
            while (i < zk->n && strcmp(zk->z[i].m, m) != 0) {
                i++;
            }
            cr_assert_eq(t.r.num, i < zk->n, "%s step %d: ZREM %s", p->name, step, m);
            if (i < zk->n) {
                memmove(&zk->z[i], &zk->z[i + 1], (size_t)(zk->n - i - 1) * sizeof(zref));
                zk->n--;
                cr_assert_eq((t.r.flags & CUDIS_R_GONE) != 0, zk->n == 0);
            }
        } else {
            cr_assert_eq(t.r.num, zk->n, "%s step %d: ZCARD", p->name, step);
        }
    }
    if (!strict && dropped > 0) {
        fprintf(stderr, "  %s (budget %llu): %llu sorted sets dropped whole\n", p->name,
                (unsigned long long)budget, (unsigned long long)dropped);
    }
    free(keys);
    engine_destroy(e);
}

ENGINE_TEST(zset_add_range)
{
    T_NEED_STORE(p);
    za_run(p, 16ull << 20, 0x2a2a, 6000, 8);
    /* the value the ops built answers the field ops; a torn entry and a
     * string are refused */
    engine *e = open_default(p);
    uint8_t buf[64];
    tres t = z_op(e, CUDIS_OP_ZADD, 0, "z", buf, zentry(buf, "m", 1));
    cr_assert_eq(t.r.num, 1);
    t = z_op(e, CUDIS_OP_HLEN, 0, "z", NULL, 0);
    cr_assert_eq(t.r.num, 1);
    uint8_t bad[16];
    uint32_t bl = zentry(bad, "m", 1) - 1;
    t = z_op(e, CUDIS_OP_ZADD, 0, "z", bad, bl);
    cr_assert_eq(t.r.status, CUDIS_E_INVAL, "a torn entry");
    T_SET(e, "s", "v");
    t = z_op(e, CUDIS_OP_ZADD, 0, "s", buf, zentry(buf, "m", 1));
    cr_assert_eq(t.r.status, CUDIS_E_WRONGTYPE);
    engine_destroy(e);
}

/* The same model under a budget that holds a fraction of the sets. */
ENGINE_TEST(zset_model_tight)
{
    T_NEED_STORE(p);
    za_run(p, 256u << 10, 0x5e7, 20000, 3000);
}
