/*
 * cmd_set.c - the set commands. A set is one engine item of type
 * CUDIS_TYPE_SET in the hashes' encoding (common/cudis_hash.h: members are
 * fields without values), so SADD, SREM, SISMEMBER and SCARD are the hash
 * field ops on a set (one engine op each, applied by the store); the
 * commands that read a whole set (SMEMBERS, SMISMEMBER, SRANDMEMBER,
 * SSCAN, SINTER, SUNION, SDIFF, SINTERCARD) fetch it with one typed GET
 * per key and answer from it; SPOP, SMOVE and the STORE forms read, then
 * write, alone between batches. Replies and errors follow Redis 7.0.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

#define RES(b, p, k) (&(b)->res[(p)->op0 + (k)])

static const char *E_SYNTAX = "ERR syntax error";

/* One set op on key with its reply function. */
static pend *set_op(conn *c, uint8_t code, uint16_t flags, const char *key, uint32_t klen,
                    const void *val, uint32_t vlen, bool write, reply_fn fn)
{
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, code, flags, key, klen, val, vlen, 0, 0, write);
    b->ops[i].type = CUDIS_TYPE_SET;
    return batch_add_pend(b, c, fn, i, 1);
}

/* Members of argv[from..argc) as SADD's edits (empty values). */
static void member_edits(sbuf *e, int argc, char **argv, uint32_t *lens, int from)
{
    uint8_t lb[5];
    for (int j = from; j < argc; j++) {
        sbuf_add(e, (const char *)lb, cudis_varint_put(lb, lens[j]));
        sbuf_add(e, argv[j], lens[j]);
        sbuf_add(e, "\0", 1);
    }
}

bool set_is_intset(const uint8_t *h, uint32_t n)
{
    if (cudis_hash_count(h, n) > (uint64_t)srv.cfg.set_max_intset_entries) {
        return false;
    }
    cudis_hentry e;
    long long x;
    COLL_FOREACH(h, n, at, e)
    {
        if (!util_str2ll((const char *)e.f, e.flen, &x)) {
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------------
 * SADD SREM SCARD SISMEMBER
 * ---------------------------------------------------------------------- */

void cmd_sadd(conn *c, int argc, char **argv, uint32_t *lens)
{
    sbuf e = {0};
    member_edits(&e, argc, argv, lens, 2);
    /* NX: a member there is left as it is (no write, no event) */
    set_op(c, CUDIS_OP_HSET, CUDIS_F_NX, argv[1], lens[1], e.p, (uint32_t)e.len, true, coll_rp_num);
    sbuf_free(&e);
}

void cmd_srem(conn *c, int argc, char **argv, uint32_t *lens)
{
    sbuf e = {0};
    coll_edits(&e, argc, argv, lens, 2, false);
    set_op(c, CUDIS_OP_HDEL, 0, argv[1], lens[1], e.p, (uint32_t)e.len, true, coll_rp_num);
    sbuf_free(&e);
}

void cmd_scard(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    set_op(c, CUDIS_OP_HLEN, 0, argv[1], lens[1], NULL, 0, false, coll_rp_num);
}

void cmd_sismember(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    set_op(c, CUDIS_OP_HGET, 0, argv[1], lens[1], argv[2], lens[2], false, coll_rp_num);
}

/* ------------------------------------------------------------------------
 * A set in memory: the members of the encoded value, for the commands
 * that compute over whole sets
 * ---------------------------------------------------------------------- */

typedef struct mset {
    const uint8_t **m;
    uint32_t *len;
    uint32_t n, cap;
} mset;

static void mset_push(mset *s, const uint8_t *m, uint32_t len)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->m = xrealloc(s->m, s->cap * sizeof(*s->m));
        s->len = xrealloc(s->len, s->cap * sizeof(*s->len));
    }
    s->m[s->n] = m;
    s->len[s->n] = len;
    s->n++;
}

static void mset_free(mset *s)
{
    free(s->m);
    free(s->len);
    memset(s, 0, sizeof(*s));
}

static void mset_of(mset *s, const uint8_t *h, uint32_t n)
{
    cudis_hentry e;
    COLL_FOREACH(h, n, at, e)
    {
        mset_push(s, e.f, e.flen);
    }
}

/* Reply members as a set (RESP3 ~), an integer set in ascending order as
 * Redis 7.0's intset encoding gives it. */
static void reply_members(conn *c, const mset *s, const uint8_t *h, uint32_t n)
{
    resp_set(&c->out, s->n, c->proto);
    if (h != NULL && set_is_intset(h, n)) {
        long long *v = xmalloc((s->n ? s->n : 1) * sizeof(*v));
        for (uint32_t i = 0; i < s->n; i++) {
            (void)util_str2ll((const char *)s->m[i], s->len[i], &v[i]);
        }
        for (uint32_t i = 1; i < s->n; i++) { /* insertion sort: at most set-max-intset-entries */
            long long x = v[i];
            uint32_t j = i;
            for (; j > 0 && v[j - 1] > x; j--) {
                v[j] = v[j - 1];
            }
            v[j] = x;
        }
        for (uint32_t i = 0; i < s->n; i++) {
            resp_bulk_ll(&c->out, v[i]);
        }
        free(v);
        return;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        resp_bulk(&c->out, s->m[i], s->len[i]);
    }
}

/* A uniform choice of k distinct members into s[0..k) (partial
 * Fisher-Yates); k <= s->n. */
static void choose_first(mset *s, uint32_t k)
{
    for (uint32_t j = 0; j < k && k < s->n; j++) {
        uint32_t r = j + (uint32_t)(coll_rand64() % (s->n - j));
        const uint8_t *tm = s->m[j];
        uint32_t tl = s->len[j];
        s->m[j] = s->m[r];
        s->len[j] = s->len[r];
        s->m[r] = tm;
        s->len[r] = tl;
    }
}

/* Whether member m is in the encoded set h. */
static bool has(const uint8_t *h, uint32_t n, const uint8_t *m, uint32_t len)
{
    cudis_hentry e;
    return h != NULL && cudis_hash_find(h, n, m, len, &e);
}

/* ------------------------------------------------------------------------
 * SMEMBERS SMISMEMBER SRANDMEMBER SSCAN
 * ---------------------------------------------------------------------- */

static void rp_smembers(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    mset s = {0};
    mset_of(&s, h, n);
    reply_members(c, &s, h, n);
    mset_free(&s);
}

void cmd_smembers(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    set_op(c, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, false, rp_smembers);
}

static void rp_smismember(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n, wlen;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    const uint8_t *want = coll_aux_get(p, &wlen);
    resp_array(&c->out, p->k);
    cudis_hentry f;
    for (uint32_t at = 0; at < wlen && cudis_hentry_at(want + at, wlen - at, false, &f);
         at += f.size) {
        resp_int(&c->out, has(h, n, f.f, f.flen) ? 1 : 0);
    }
}

void cmd_smismember(conn *c, int argc, char **argv, uint32_t *lens)
{
    sbuf want = {0};
    coll_edits(&want, argc, argv, lens, 2, false);
    pend *p = set_op(c, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, false, rp_smismember);
    coll_aux_bytes(p, want.p, (uint32_t)want.len);
    sbuf_free(&want);
    p->k = argc - 2;
}

enum { RM_COUNT = 1 };

static void rp_srandmember(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    mset s = {0};
    mset_of(&s, h, n);
    long long count = p->a;
    if (!(p->b & RM_COUNT)) {
        if (s.n == 0) {
            resp_null(&c->out, c->proto);
        } else {
            uint32_t i = (uint32_t)(coll_rand64() % s.n);
            resp_bulk(&c->out, s.m[i], s.len[i]);
        }
    } else if (s.n == 0 || count == 0) {
        resp_array(&c->out, 0);
    } else if (count < 0) {
        unsigned long long k = (unsigned long long)(-(count + 1)) + 1;
        resp_array(&c->out, (long)k);
        for (unsigned long long j = 0; j < k; j++) {
            uint32_t i = (uint32_t)(coll_rand64() % s.n);
            resp_bulk(&c->out, s.m[i], s.len[i]);
        }
    } else {
        uint32_t k = (unsigned long long)count >= s.n ? s.n : (uint32_t)count;
        choose_first(&s, k);
        resp_array(&c->out, k);
        for (uint32_t j = 0; j < k; j++) {
            resp_bulk(&c->out, s.m[j], s.len[j]);
        }
    }
    mset_free(&s);
}

void cmd_srandmember(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long count = 0;
    int how = 0;
    if (argc > 3) {
        conn_error(c, E_SYNTAX);
        return;
    }
    if (argc == 3) {
        if (!arg_ll(c, argv[2], lens[2], &count)) {
            return;
        }
        if (count < -COLL_MAX_REPEAT) {
            conn_error(c, "ERR value is out of range");
            return;
        }
        how = RM_COUNT;
    }
    pend *p = set_op(c, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, false, rp_srandmember);
    p->a = count;
    p->b = how;
}

void cmd_sscan(conn *c, int argc, char **argv, uint32_t *lens)
{
    coll_scan_cmd(c, argc, argv, lens, CUDIS_TYPE_SET);
}

/* ------------------------------------------------------------------------
 * SINTER SUNION SDIFF SINTERCARD and the STORE forms
 * ---------------------------------------------------------------------- */

enum { OP_INTER, OP_UNION, OP_DIFF };

/* The result of an algebra over the encoded sets h[0..k) (NULL: missing,
 * an empty set), members pointing into them, at most limit (0: all). */
static void algebra(int what, const uint8_t *const *h, const uint32_t *n, int k, uint64_t limit,
                    mset *out)
{
    if (what == OP_INTER) {
        for (int j = 0; j < k; j++) {
            if (h[j] == NULL) {
                return; /* a missing key is an empty set */
            }
        }
    }
    for (int j = 0; j < k; j++) {
        if (h[j] == NULL || (what != OP_UNION && j > 0)) {
            continue;
        }
        cudis_hentry e;
        COLL_FOREACH(h[j], n[j], at, e)
        {
            bool keep = true;
            if (what == OP_UNION) {
                for (int i = 0; i < j && keep; i++) {
                    keep = !has(h[i], n[i], e.f, e.flen);
                }
            } else {
                for (int i = 1; i < k && keep; i++) {
                    bool in = has(h[i], n[i], e.f, e.flen);
                    keep = what == OP_INTER ? in : !in;
                }
            }
            if (keep) {
                mset_push(out, e.f, e.flen);
                if (limit != 0 && out->n >= limit) {
                    return;
                }
            }
        }
    }
}

/* Typed GETs of keys argv[from..from+k) added to the open batch. */
static uint32_t add_reads(conn *c, char **argv, uint32_t *lens, int from, int k)
{
    batcher *b = &c->lp->b;
    uint32_t op0 = b->nops;
    for (int j = 0; j < k; j++) {
        uint32_t i =
            batch_add_op(b, CUDIS_OP_GET, 0, argv[from + j], lens[from + j], NULL, 0, 0, 0, false);
        b->ops[i].type = CUDIS_TYPE_SET;
    }
    if (k > 1) {
        b->exclusive = true; /* the keys are read at one point in time */
    }
    return op0;
}

/* The sets a pend's reads returned: false (replied) on an error. */
static bool results_of(conn *c, const pend *p, const cudis_batch *b, const uint8_t **h, uint32_t *n)
{
    for (uint32_t j = 0; j < p->nops; j++) {
        const cudis_result *r = RES(b, p, j);
        if (r->status != CUDIS_OK) {
            reply_engine_error(c, r->status);
            return false;
        }
        h[j] = (r->flags & CUDIS_R_VALUE) ? b->out + r->val_off : NULL;
        n[j] = h[j] ? r->val_len : 0;
    }
    return true;
}

static void rp_algebra(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t **h = xmalloc(p->nops * sizeof(*h));
    uint32_t *n = xmalloc(p->nops * sizeof(*n));
    if (results_of(c, p, b, h, n)) {
        mset s = {0};
        algebra((int)p->a, h, n, (int)p->nops, p->b > 0 ? (uint64_t)p->b : 0, &s);
        if (p->k) { /* SINTERCARD */
            resp_int(&c->out, s.n);
        } else {
            resp_set(&c->out, s.n, c->proto);
            for (uint32_t i = 0; i < s.n; i++) {
                resp_bulk(&c->out, s.m[i], s.len[i]);
            }
        }
        mset_free(&s);
    }
    free(h);
    free(n);
}

static void algebra_cmd(conn *c, int argc, char **argv, uint32_t *lens, int what)
{
    uint32_t op0 = add_reads(c, argv, lens, 1, argc - 1);
    pend *p = batch_add_pend(&c->lp->b, c, rp_algebra, op0, (uint32_t)(argc - 1));
    p->a = what;
}

void cmd_sinter(conn *c, int argc, char **argv, uint32_t *lens)
{
    algebra_cmd(c, argc, argv, lens, OP_INTER);
}

void cmd_sunion(conn *c, int argc, char **argv, uint32_t *lens)
{
    algebra_cmd(c, argc, argv, lens, OP_UNION);
}

void cmd_sdiff(conn *c, int argc, char **argv, uint32_t *lens)
{
    algebra_cmd(c, argc, argv, lens, OP_DIFF);
}

void cmd_sintercard(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long numkeys, limit = 0;
    if (!util_str2ll(argv[1], lens[1], &numkeys) || numkeys <= 0) {
        conn_error(c, "ERR numkeys should be greater than 0");
        return;
    }
    if (numkeys > argc - 2) {
        conn_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < argc; j++) {
        if (util_eq(argv[j], lens[j], "limit") && j + 1 < argc) {
            if (!util_str2ll(argv[j + 1], lens[j + 1], &limit) || limit < 0) {
                conn_error(c, "ERR LIMIT can't be negative");
                return;
            }
            j++;
        } else {
            conn_error(c, E_SYNTAX);
            return;
        }
    }
    uint32_t op0 = add_reads(c, argv, lens, 2, (int)numkeys);
    pend *p = batch_add_pend(&c->lp->b, c, rp_algebra, op0, (uint32_t)numkeys);
    p->a = OP_INTER;
    p->b = limit;
    p->k = 1;
}

/* Write (or, empty, delete) dst as the set s, alone; the engine status. */
static int store_set(conn *c, const char *dst, uint32_t dlen, const mset *s, bool *existed)
{
    batcher *b = &c->lp->b;
    uint8_t ev = b->ev;
    b->ev = KEV_QUIET; /* the command sends its own event */
    if (s->n == 0) {
        batch_add_op(b, CUDIS_OP_DEL, 0, dst, dlen, NULL, 0, 0, 0, true);
    } else {
        sbuf v = {0};
        uint8_t cnt[4] = {(uint8_t)s->n, (uint8_t)(s->n >> 8), (uint8_t)(s->n >> 16),
                          (uint8_t)(s->n >> 24)};
        sbuf_add(&v, cnt, 4);
        uint8_t lb[5];
        for (uint32_t i = 0; i < s->n; i++) {
            sbuf_add(&v, lb, cudis_varint_put(lb, s->len[i]));
            sbuf_add(&v, s->m[i], s->len[i]);
            sbuf_add(&v, "\0", 1);
        }
        uint32_t i = batch_add_op(b, CUDIS_OP_SET, 0, dst, dlen, v.p, (uint32_t)v.len, 0, 0, true);
        b->ops[i].type = CUDIS_TYPE_SET;
        sbuf_free(&v);
    }
    b->ev = ev;
    run_alone(c);
    int st = b->res[0].status;
    *existed = b->res[0].flags & CUDIS_R_FOUND;
    batch_reset(b);
    return st;
}

static void store_cmd(conn *c, int argc, char **argv, uint32_t *lens, int what, const char *event)
{
    batcher *b = &c->lp->b;
    int k = argc - 2;
    add_reads(c, argv, lens, 2, k);
    run_alone(c);
    const uint8_t **h = xmalloc((size_t)k * sizeof(*h));
    uint32_t *n = xmalloc((size_t)k * sizeof(*n));
    int st = CUDIS_OK;
    for (int j = 0; j < k && st == CUDIS_OK; j++) {
        st = b->res[j].status;
        h[j] = (b->res[j].flags & CUDIS_R_VALUE) ? b->out + b->res[j].val_off : NULL;
        n[j] = h[j] ? b->res[j].val_len : 0;
    }
    mset s = {0};
    sbuf copy = {0};
    if (st == CUDIS_OK) {
        algebra(what, h, n, k, 0, &s);
        /* the members point into the batch's out buffer: keep them apart */
        for (uint32_t i = 0; i < s.n; i++) {
            sbuf_add(&copy, s.m[i], s.len[i]);
        }
        size_t at = 0;
        for (uint32_t i = 0; i < s.n; i++) {
            s.m[i] = (const uint8_t *)copy.p + at;
            at += s.len[i];
        }
    }
    batch_reset(b);
    free(h);
    free(n);
    bool existed = false;
    if (st == CUDIS_OK) {
        st = store_set(c, argv[1], lens[1], &s, &existed);
    }
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
    } else {
        if (s.n > 0) {
            keyspace_notify(c->lp, NOTIFY_SET, event, b->db, argv[1], lens[1]);
        } else if (existed) {
            keyspace_notify(c->lp, NOTIFY_GENERIC, "del", b->db, argv[1], lens[1]);
        }
        resp_int(&c->out, s.n);
    }
    mset_free(&s);
    sbuf_free(&copy);
}

void cmd_sinterstore(conn *c, int argc, char **argv, uint32_t *lens)
{
    store_cmd(c, argc, argv, lens, OP_INTER, "sinterstore");
}

void cmd_sunionstore(conn *c, int argc, char **argv, uint32_t *lens)
{
    store_cmd(c, argc, argv, lens, OP_UNION, "sunionstore");
}

void cmd_sdiffstore(conn *c, int argc, char **argv, uint32_t *lens)
{
    store_cmd(c, argc, argv, lens, OP_DIFF, "sdiffstore");
}

/* ------------------------------------------------------------------------
 * SPOP SMOVE (alone)
 * ---------------------------------------------------------------------- */

/* Remove the members edits name from key, alone, sending "event" (and
 * "del" when the set went); the engine status. */
static int remove_alone(conn *c, const char *key, uint32_t klen, const sbuf *edits,
                        const char *event)
{
    batcher *b = &c->lp->b;
    uint8_t ev = b->ev;
    b->ev = KEV_QUIET;
    uint32_t i =
        batch_add_op(b, CUDIS_OP_HDEL, 0, key, klen, edits->p, (uint32_t)edits->len, 0, 0, true);
    b->ops[i].type = CUDIS_TYPE_SET;
    b->ev = ev;
    run_alone(c);
    cudis_result r = b->res[0];
    batch_reset(b);
    if (r.status == CUDIS_OK && r.num > 0) {
        keyspace_notify(c->lp, NOTIFY_SET, event, b->db, key, klen);
        if (r.flags & CUDIS_R_GONE) {
            keyspace_notify(c->lp, NOTIFY_GENERIC, "del", b->db, key, klen);
        }
    }
    return r.status;
}

void cmd_spop(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long count = 1;
    bool with_count = argc == 3;
    if (argc > 3) {
        conn_error(c, E_SYNTAX);
        return;
    }
    if (with_count && (!util_str2ll(argv[2], lens[2], &count) || count < 0)) {
        conn_error(c, "ERR value is out of range, must be positive");
        return;
    }
    batcher *b = &c->lp->b;
    add_reads(c, argv, lens, 1, 1);
    run_alone(c);
    cudis_result r = b->res[0];
    if (r.status != CUDIS_OK) {
        batch_reset(b);
        reply_engine_error(c, r.status);
        return;
    }
    const uint8_t *h = (r.flags & CUDIS_R_VALUE) ? b->out + r.val_off : NULL;
    mset s = {0};
    mset_of(&s, h, h ? r.val_len : 0);
    uint32_t k = (unsigned long long)count >= s.n ? s.n : (uint32_t)count;
    choose_first(&s, k);
    sbuf edits = {0}, reply = {0};
    uint8_t lb[5];
    for (uint32_t j = 0; j < k; j++) {
        sbuf_add(&edits, lb, cudis_varint_put(lb, s.len[j]));
        sbuf_add(&edits, s.m[j], s.len[j]);
        resp_bulk(&reply, s.m[j], s.len[j]);
    }
    mset_free(&s);
    batch_reset(b);
    int st = k > 0 ? remove_alone(c, argv[1], lens[1], &edits, "spop") : CUDIS_OK;
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
    } else if (!with_count) {
        if (k == 0) {
            resp_null(&c->out, c->proto);
        } else {
            sbuf_add(&c->out, reply.p, reply.len);
        }
    } else {
        resp_set(&c->out, k, c->proto);
        sbuf_add(&c->out, reply.p, reply.len);
    }
    sbuf_free(&edits);
    sbuf_free(&reply);
}

void cmd_smove(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, CUDIS_OP_HGET, 0, argv[1], lens[1], argv[3], lens[3], 0, 0, false);
    b->ops[i].type = CUDIS_TYPE_SET;
    i = batch_add_op(b, CUDIS_OP_HLEN, 0, argv[2], lens[2], NULL, 0, 0, 0, false);
    b->ops[i].type = CUDIS_TYPE_SET;
    run_alone(c);
    cudis_result src = b->res[0], dst = b->res[1];
    batch_reset(b);
    if (src.status == CUDIS_OK && !(src.flags & CUDIS_R_FOUND)) {
        resp_int(&c->out, 0); /* Redis: a missing source first, whatever dst holds */
        return;
    }
    int st = src.status != CUDIS_OK ? src.status : dst.status;
    if (st != CUDIS_OK) { /* WRONGTYPE of either */
        reply_engine_error(c, st);
        return;
    }
    if (src.num == 0) {
        resp_int(&c->out, 0);
        return;
    }
    if (lens[1] == lens[2] && memcmp(argv[1], argv[2], lens[1]) == 0) {
        resp_int(&c->out, 1); /* the member is there: nothing moves */
        return;
    }
    sbuf e = {0};
    coll_edits(&e, 4, argv, lens, 3, false);
    st = remove_alone(c, argv[1], lens[1], &e, "srem");
    sbuf_free(&e);
    if (st == CUDIS_OK) {
        member_edits(&e, 4, argv, lens, 3);
        uint8_t ev = b->ev;
        b->ev = KEV_QUIET;
        i = batch_add_op(b, CUDIS_OP_HSET, CUDIS_F_NX, argv[2], lens[2], e.p, (uint32_t)e.len, 0, 0,
                         true);
        b->ops[i].type = CUDIS_TYPE_SET;
        b->ev = ev;
        sbuf_free(&e);
        run_alone(c);
        cudis_result w = b->res[0];
        batch_reset(b);
        st = w.status;
        if (st == CUDIS_OK && w.num > 0) {
            keyspace_notify(c->lp, NOTIFY_SET, "sadd", b->db, argv[2], lens[2]);
        }
    }
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
    } else {
        resp_int(&c->out, 1);
    }
}
