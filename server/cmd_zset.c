/*
 * cmd_zset.c - the sorted set commands. A sorted set is one engine item of
 * type CUDIS_TYPE_ZSET in the collections' encoding (common/cudis_hash.h):
 * each member is a field whose value is its score, 8 bytes of an IEEE
 * double (little-endian), and the entries are kept in Redis's order,
 * ascending by score, then by member bytes. So ZCARD, ZSCORE, ZMSCORE and
 * ZREM are the hash field ops on a zset (one engine op each; removal keeps
 * the order); the commands that read by rank, score or lex range (ZRANGE
 * and its forms, ZRANK, ZCOUNT, ZLEXCOUNT, ZRANDMEMBER, ZSCAN) fetch the
 * whole set with one typed GET and answer from it; the writes that place
 * members (ZADD, ZINCRBY) and the range removals and pops read, then
 * write, alone between batches, as LSET does. Replies and errors follow
 * Redis 7.0.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

#define RES(b, p, k) (&(b)->res[(p)->op0 + (k)])

static const char *E_SYNTAX = "ERR syntax error";
static const char *E_NOTINT = "ERR value is not an integer or out of range";
static const char *E_FLOAT = "ERR value is not a valid float";
static const char *E_MINMAX = "ERR min or max is not a float";
static const char *E_LEX = "ERR min or max not valid string range item";

/* ------------------------------------------------------------------------
 * The set in memory: entries in order
 * ---------------------------------------------------------------------- */

typedef struct zent {
    double s;
    const uint8_t *m;
    uint32_t len;
} zent;

typedef struct zs {
    zent *e;
    uint32_t n, cap;
} zs;

static double score_of(const cudis_hentry *e)
{
    double s = 0;
    if (e->vlen == sizeof(s)) {
        memcpy(&s, e->v, sizeof(s));
    }
    return s;
}

static void zs_push(zs *z, double s, const uint8_t *m, uint32_t len)
{

    if (z->n == z->cap) {
        z->cap = z->cap ? z->cap * 2 : 16;
        z->e = xrealloc(z->e, (size_t)z->cap * sizeof(*z->e));
    }
    z->e[z->n++] = (zent){s, m, len};
}

/* The entries of an encoded zset (h may be NULL), in its order. */
static void zs_of(zs *z, const uint8_t *h, uint32_t n)
{
    z->n = 0;
    cudis_hentry e;
    COLL_FOREACH(h, n, at, e)
    {
        zs_push(z, score_of(&e), e.f, e.flen);
    }
}

static void zs_free(zs *z)
{
    free(z->e);
    z->e = NULL;
    z->n = z->cap = 0;
}

/* Redis's sdscmp: bytes, then length. */
static int mcmp(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
    int d = memcmp(a, b, alen < blen ? alen : blen);
    return d != 0 ? d : (alen > blen) - (alen < blen);
}

static int zcmp(const void *pa, const void *pb)
{
    const zent *a = pa, *b = pb;
    if (a->s != b->s) {
        return a->s < b->s ? -1 : 1;
    }
    return mcmp(a->m, a->len, b->m, b->len);
}

/* qsort of n entries (none: nothing, and no NULL handed to it). */
static void zsort(zent *e, size_t n, int (*cmp)(const void *, const void *))
{
    if (n > 1) {
        qsort(e, n, sizeof(*e), cmp);
    }
}

static long zs_find(const zs *z, const uint8_t *m, uint32_t len)
{
    for (uint32_t i = 0; i < z->n; i++) {
        if (z->e[i].len == len && memcmp(z->e[i].m, m, len) == 0) {
            return (long)i;
        }
    }
    return -1;
}

/* The encoding of entries e[0..n), already in order. */
static void zs_encode(sbuf *out, const zent *e, uint32_t n)
{
    uint8_t cnt[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
    sbuf_add(out, cnt, 4);
    uint8_t lb[5];
    for (uint32_t i = 0; i < n; i++) {
        sbuf_add(out, lb, cudis_varint_put(lb, e[i].len));
        sbuf_add(out, e[i].m, e[i].len);
        double s = e[i].s == 0 ? 0 : e[i].s; /* -0 is stored as 0, as Redis's listpack does */
        sbuf_add(out, lb, cudis_varint_put(lb, (uint32_t)sizeof(double)));
        sbuf_add(out, &s, sizeof(double));
    }
}

void zset_normalize(sbuf *h)
{
    zs z = {0};
    zs_of(&z, (const uint8_t *)h->p, (uint32_t)h->len);
    zsort(z.e, z.n, zcmp);
    sbuf o = {0};
    zs_encode(&o, z.e, z.n);
    zs_free(&z);
    sbuf_free(h);
    *h = o;
}

bool zset_is_listpack(const uint8_t *h, uint32_t n)
{
    if (cudis_hash_count(h, n) > (uint64_t)srv.cfg.zset_max_listpack_entries) {
        return false;
    }
    cudis_hentry e;
    COLL_FOREACH(h, n, at, e)
    {
        if (e.flen > (uint64_t)srv.cfg.zset_max_listpack_value) {
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------------
 * Arguments: scores and ranges
 * ---------------------------------------------------------------------- */

/* A score as Redis's strtod-based parse takes it: false for text, NaN. */
static bool parse_score(const char *s, uint32_t len, double *out)
{
    char buf[128];
    if (len == 0 || len >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (end != buf + len || isspace((unsigned char)buf[0]) || isnan(v)) {
        return false;
    }
    *out = v;
    return true;
}

typedef struct srange {
    double min, max;
    bool minex, maxex;
} srange;

static bool parse_bound(const char *s, uint32_t len, double *v, bool *ex)
{
    *ex = len > 0 && s[0] == '(';
    if (*ex) {
        s++;
        len--;
    }
    return parse_score(s, len, v);
}

static bool score_range(const char *min, uint32_t minlen, const char *max, uint32_t maxlen,
                        srange *r)
{
    return parse_bound(min, minlen, &r->min, &r->minex) &&
           parse_bound(max, maxlen, &r->max, &r->maxex);
}

static bool gte_min(const srange *r, double s)
{
    return r->minex ? s > r->min : s >= r->min;
}

static bool lte_max(const srange *r, double s)
{
    return r->maxex ? s < r->max : s <= r->max;
}

/* A lex bound: '-' (below all), '+' (above all), '[x' or '(x'. */
typedef struct lbound {
    int inf; /* -1 '-', 1 '+', 0 a member */
    bool ex;
    const uint8_t *m;
    uint32_t len;
} lbound;

static bool parse_lex(const char *s, uint32_t len, lbound *b)
{
    b->inf = 0;
    b->ex = false;
    b->m = NULL;
    b->len = 0;
    if (len == 1 && (s[0] == '-' || s[0] == '+')) {
        b->inf = s[0] == '-' ? -1 : 1;
        return true;
    }
    if (len == 0 || (s[0] != '(' && s[0] != '[')) {
        return false;
    }
    b->ex = s[0] == '(';
    b->m = (const uint8_t *)s + 1;
    b->len = len - 1;
    return true;
}

/* m compared with a bound: <0 below it, >0 above. */
static int lex_cmp(const uint8_t *m, uint32_t len, const lbound *b)
{
    if (b->inf != 0) {
        return -b->inf;
    }
    return mcmp(m, len, b->m, b->len);
}

static bool lex_gte_min(const lbound *min, const uint8_t *m, uint32_t len)
{
    int d = lex_cmp(m, len, min);
    return min->ex ? d > 0 : d >= 0;
}

static bool lex_lte_max(const lbound *max, const uint8_t *m, uint32_t len)
{
    int d = lex_cmp(m, len, max);
    return max->ex ? d < 0 : d <= 0;
}

/* ------------------------------------------------------------------------
 * Replies
 * ---------------------------------------------------------------------- */

static void reply_score(conn *c, double s)
{
    resp_double(&c->out, s, c->proto);
}

/* The members e[i] for i in [from, to] (rev: from down to), as ZRANGE
 * answers them; with scores, RESP3 pairs. */
static void reply_members(sbuf *o, int proto, const zent *const *v, long n, bool withscores)
{
    bool pairs = withscores && proto >= 3;
    resp_array(o, withscores && !pairs ? n * 2 : n);
    for (long i = 0; i < n; i++) {
        if (pairs) {
            resp_array(o, 2);
        }
        resp_bulk(o, v[i]->m, v[i]->len);
        if (withscores) {
            resp_double(o, v[i]->s, proto);
        }
    }
}

/* ------------------------------------------------------------------------
 * Ops
 * ---------------------------------------------------------------------- */

static pend *z_op(conn *c, uint8_t code, uint16_t flags, const char *key, uint32_t klen,
                  const void *val, uint32_t vlen, bool write, reply_fn fn)
{
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, code, flags, key, klen, val, vlen, 0, 0, write);
    b->ops[i].type = CUDIS_TYPE_ZSET;
    return batch_add_pend(b, c, fn, i, 1);
}

static bool res_failed(conn *c, const cudis_result *r)
{
    if (r->status != CUDIS_OK) {
        reply_engine_error(c, r->status);
        return true;
    }
    return false;
}

/* Read key's zset alone: 1 found (entries into z, their bytes in store), 0
 * missing, -1 an error replied. */
static int read_alone(conn *c, const char *key, uint32_t klen, zs *z, sbuf *store)
{
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, CUDIS_OP_GET, 0, key, klen, NULL, 0, 0, 0, false);
    b->ops[i].type = CUDIS_TYPE_ZSET;
    run_alone(c);
    cudis_result r = b->res[0];
    if (r.status != CUDIS_OK) {
        batch_reset(b);
        reply_engine_error(c, r.status);
        return -1;
    }
    int found = (r.flags & CUDIS_R_VALUE) != 0;
    if (found) {
        sbuf_add(store, b->out + r.val_off, r.val_len);
    }
    batch_reset(b);
    zs_of(z, found ? (const uint8_t *)store->p : NULL, (uint32_t)store->len);
    return found;
}

/* Write key as the entries e[0..n) (in order; keeping its TTL; none: the
 * key goes), alone, sending event (and "del" when emptied). The engine
 * status (an error replied). */
static int write_alone(conn *c, const char *key, uint32_t klen, const zent *e, uint32_t n,
                       const char *event)
{
    batcher *b = &c->lp->b;
    uint8_t ev = b->ev;
    b->ev = KEV_QUIET;
    if (n == 0) {
        batch_add_op(b, CUDIS_OP_DEL, 0, key, klen, NULL, 0, 0, 0, true);
    } else {
        sbuf v = {0};
        zs_encode(&v, e, n);
        uint32_t i = batch_add_op(b, CUDIS_OP_SET, CUDIS_F_KEEPTTL, key, klen, v.p, (uint32_t)v.len,
                                  0, 0, true);
        b->ops[i].type = CUDIS_TYPE_ZSET;
        sbuf_free(&v);
    }
    b->ev = ev;
    run_alone(c);
    int st = b->res[0].status;
    batch_reset(b);
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
        return st;
    }
    if (event != NULL) {
        keyspace_notify(c->lp, NOTIFY_ZSET, event, b->db, key, klen);
    }
    if (n == 0) {
        keyspace_notify(c->lp, NOTIFY_GENERIC, "del", b->db, key, klen);
    }
    return st;
}

/* ------------------------------------------------------------------------
 * ZADD ZINCRBY
 * ---------------------------------------------------------------------- */

enum { ZA_NX = 1, ZA_XX = 2, ZA_GT = 4, ZA_LT = 8, ZA_CH = 16, ZA_INCR = 32 };

/* ZADD of several pairs argv[at..argc) of score, member: read, edit, write alone. */
static void zadd_generic(conn *c, int argc, char **argv, uint32_t *lens, int at, int fl)
{
    int npairs = (argc - at) / 2;
    double *sc = xmalloc((size_t)npairs * sizeof(*sc));
    for (int k = 0; k < npairs; k++) {
        if (!parse_score(argv[at + 2 * k], lens[at + 2 * k], &sc[k])) {
            free(sc);
            conn_error(c, E_FLOAT);
            return;
        }
    }
    zs z = {0};
    sbuf store = {0};
    int found = read_alone(c, argv[1], lens[1], &z, &store);
    if (found < 0) {
        free(sc);
        sbuf_free(&store);
        zs_free(&z);
        return;
    }
    long added = 0, changed = 0;
    bool have = false, nan_err = false;
    double last = 0;
    for (int k = 0; k < npairs; k++) {
        const uint8_t *m = (const uint8_t *)argv[at + 2 * k + 1];
        uint32_t len = lens[at + 2 * k + 1];
        long i = zs_find(&z, m, len);
        double s = sc[k];
        if (i >= 0) {
            if (fl & ZA_NX) {
                continue;
            }
            double cur = z.e[i].s;
            if (fl & ZA_INCR) {
                s = cur + s;
                if (isnan(s)) {
                    nan_err = true;
                    break;
                }
            }
            if (((fl & ZA_GT) && s <= cur) || ((fl & ZA_LT) && s >= cur)) {
                continue;
            }
            have = true;
            last = s;
            if (s != cur) {
                z.e[i].s = s;
                changed++;
            }
        } else {
            if (fl & ZA_XX) {
                continue;
            }
            zs_push(&z, s, m, len);
            added++;
            have = true;
            last = s;
        }
    }
    free(sc);
    if (nan_err) {
        conn_error(c, "ERR resulting score is not a number (NaN)");
    } else {
        int st = CUDIS_OK;
        if (added + changed > 0) {
            zsort(z.e, z.n, zcmp);
            st = write_alone(c, argv[1], lens[1], z.e, z.n, (fl & ZA_INCR) ? "zincr" : "zadd");
        }
        if (st == CUDIS_OK) {
            if (fl & ZA_INCR) {
                if (have) {
                    reply_score(c, last);
                } else {
                    resp_null(&c->out, c->proto); /* NX, XX, GT or LT said no */
                }
            } else {
                resp_int(&c->out, (fl & ZA_CH) ? added + changed : added);
            }
        }
    }
    zs_free(&z);
    sbuf_free(&store);
}

static void rp_zadd(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (res_failed(c, r)) {
        return;
    }
    if (p->k & ZA_INCR) {
        if (r->flags & CUDIS_R_SKIPPED) {
            resp_null(&c->out, c->proto); /* NX, XX, GT or LT said no */
        } else {
            reply_score(c, cudis_bits_double((uint64_t)r->num));
        }
    } else {
        resp_int(&c->out, (p->k & ZA_CH) ? (r->flags & CUDIS_R_DONE) != 0 : r->num);
    }
}

/* ZADD of one pair argv[at], argv[at + 1] (and ZINCRBY): the engine's op. */
static void zadd1(conn *c, char **argv, uint32_t *lens, int at, int fl)
{
    double s;
    if (!parse_score(argv[at], lens[at], &s)) {
        conn_error(c, E_FLOAT);
        return;
    }
    uint32_t mlen = lens[at + 1];
    uint8_t *e = xmalloc((size_t)mlen + 16);
    uint32_t n = cudis_put_entry(e, (const uint8_t *)argv[at + 1], mlen, (const uint8_t *)&s,
                                 sizeof(s));
    uint16_t f = ((fl & ZA_NX) ? CUDIS_F_NX : 0) | ((fl & ZA_XX) ? CUDIS_F_XX : 0) |
                 ((fl & ZA_GT) ? CUDIS_F_GT : 0) | ((fl & ZA_LT) ? CUDIS_F_LT : 0) |
                 ((fl & ZA_INCR) ? CUDIS_F_INCR : 0);
    pend *p = z_op(c, CUDIS_OP_ZADD, f, argv[1], lens[1], e, n, true, rp_zadd);
    p->k = fl;
    free(e);
}

void cmd_zadd(conn *c, int argc, char **argv, uint32_t *lens)
{
    int fl = 0, at = 2;
    for (; at < argc; at++) {
        const char *a = argv[at];
        uint32_t n = lens[at];
        int f = util_eq(a, n, "nx")     ? ZA_NX
                : util_eq(a, n, "xx")   ? ZA_XX
                : util_eq(a, n, "gt")   ? ZA_GT
                : util_eq(a, n, "lt")   ? ZA_LT
                : util_eq(a, n, "ch")   ? ZA_CH
                : util_eq(a, n, "incr") ? ZA_INCR
                                        : 0;
        if (f == 0) {
            break;
        }
        fl |= f;
    }
    int left = argc - at;
    if (left == 0 || left % 2 != 0) {
        conn_error(c, E_SYNTAX);
        return;
    }
    if ((fl & ZA_NX) && (fl & ZA_XX)) {
        conn_error(c, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if (((fl & ZA_GT) && (fl & ZA_NX)) || ((fl & ZA_LT) && (fl & ZA_NX)) ||
        ((fl & ZA_GT) && (fl & ZA_LT))) {
        conn_error(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if ((fl & ZA_INCR) && left > 2) {
        conn_error(c, "ERR INCR option supports a single increment-element pair");
        return;
    }
    if (left == 2) {
        zadd1(c, argv, lens, at, fl);
        return;
    }
    zadd_generic(c, argc, argv, lens, at, fl);
}

void cmd_zincrby(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    zadd1(c, argv, lens, 2, ZA_INCR);
}

/* ------------------------------------------------------------------------
 * ZREM ZCARD ZSCORE ZMSCORE (engine ops)
 * ---------------------------------------------------------------------- */

static void rp_zrem(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (!res_failed(c, r)) {
        resp_int(&c->out, r->num);
    }
}

void cmd_zrem(conn *c, int argc, char **argv, uint32_t *lens)
{
    sbuf e = {0};
    coll_edits(&e, argc, argv, lens, 2, false);
    z_op(c, CUDIS_OP_HDEL, 0, argv[1], lens[1], e.p, (uint32_t)e.len, true, rp_zrem);
    sbuf_free(&e);
}

void cmd_zcard(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    z_op(c, CUDIS_OP_HLEN, 0, argv[1], lens[1], NULL, 0, false, coll_rp_num);
}

static bool score_res(const cudis_batch *b, const cudis_result *r, double *s)
{
    if (!(r->flags & CUDIS_R_VALUE) || r->val_len != sizeof(*s)) {
        return false;
    }
    memcpy(s, b->out + r->val_off, sizeof(*s));
    return true;
}

static void rp_zscore(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    double s;
    if (res_failed(c, r)) {
        return;
    }
    if (score_res(b, r, &s)) {
        reply_score(c, s);
    } else {
        resp_null(&c->out, c->proto);
    }
}

void cmd_zscore(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    z_op(c, CUDIS_OP_HGET, 0, argv[1], lens[1], argv[2], lens[2], false, rp_zscore);
}

static void rp_zmscore(conn *c, pend *p, const cudis_batch *b)
{
    for (uint32_t k = 0; k < p->nops; k++) {
        if (RES(b, p, k)->status != CUDIS_OK) {
            reply_engine_error(c, RES(b, p, k)->status);
            return;
        }
    }
    resp_array(&c->out, p->nops);
    for (uint32_t k = 0; k < p->nops; k++) {
        double s;
        if (score_res(b, RES(b, p, k), &s)) {
            reply_score(c, s);
        } else {
            resp_null(&c->out, c->proto);
        }
    }
}

void cmd_zmscore(conn *c, int argc, char **argv, uint32_t *lens)
{
    batcher *b = &c->lp->b;
    uint32_t first = 0;
    for (int j = 2; j < argc; j++) {
        uint32_t i =
            batch_add_op(b, CUDIS_OP_HGET, 0, argv[1], lens[1], argv[j], lens[j], 0, 0, false);
        b->ops[i].type = CUDIS_TYPE_ZSET;
        if (j == 2) {
            first = i;
        }
    }
    batch_add_pend(b, c, rp_zmscore, first, (uint32_t)(argc - 2));
}

/* ------------------------------------------------------------------------
 * Ranges: ZRANGE and its forms, ZCOUNT, ZLEXCOUNT, ZRANK
 * ---------------------------------------------------------------------- */

enum { BY_RANK = 0, BY_SCORE, BY_LEX };

/* A parsed range request (ZRANGE's arguments), kept for the reply. */
typedef struct zreq {
    int by;
    bool rev, withscores, limit;
    long long start, stop; /* BY_RANK */
    long long offset, count;
    srange sr;
    lbound lmin, lmax; /* into argv, or (zreq_keep) the copy's tail */
} zreq;

/* Redis's sdscmplex of two lex bounds. */
static int lex_bounds_cmp(const lbound *a, const lbound *b)
{
    if (a->inf != 0 && a->inf == b->inf) {
        return 0;
    }
    if (a->inf == -1 || b->inf == 1) {
        return -1;
    }
    if (a->inf == 1 || b->inf == -1) {
        return 1;
    }
    return mcmp(a->m, a->len, b->m, b->len);
}

/* Where a lex range starts, as Redis's zzlFirstInLexRange (rev: Last),
 * counted from the end it walks from; -1: it selects nothing. */
static long lex_start(const zs *z, const zreq *q)
{
    const lbound *min = &q->lmin, *max = &q->lmax;
    int cmp = lex_bounds_cmp(min, max);
    long n = (long)z->n;
    if (n == 0 || cmp > 0 || (cmp == 0 && (min->ex || max->ex)) ||
        !lex_gte_min(min, z->e[n - 1].m, z->e[n - 1].len) ||
        !lex_lte_max(max, z->e[0].m, z->e[0].len)) {
        return -1;
    }
    for (long i = 0; i < n; i++) {
        const zent *x = &z->e[q->rev ? n - 1 - i : i];
        if (q->rev ? lex_lte_max(max, x->m, x->len) : lex_gte_min(min, x->m, x->len)) {
            bool in = q->rev ? lex_gte_min(min, x->m, x->len) : lex_lte_max(max, x->m, x->len);
            return in ? i : -1;
        }
    }
    return -1;
}

/* The entries a request selects, in reply order (pointers into z). */
static long zselect(const zs *z, const zreq *q, const zent ***out)
{
    long n = (long)z->n;
    const zent **v = xmalloc(((size_t)n + 1) * sizeof(*v));
    long k = 0;
    if (q->by == BY_RANK) {
        long long s = q->start, e = q->stop;
        if (s < 0) {
            s += n;
        }
        if (e < 0) {
            e += n;
        }
        if (s < 0) {
            s = 0;
        }
        if (e >= n) {
            e = n - 1;
        }
        for (long long i = s; i <= e && s < n; i++) {
            v[k++] = &z->e[q->rev ? n - 1 - i : i];
        }
    } else {
        long long skip = q->limit ? q->offset : 0;
        long long want = q->limit && q->count >= 0 ? q->count : LLONG_MAX;
        if (skip < 0) {
            want = 0; /* Redis: a negative offset selects nothing */
        }
        long i = q->by == BY_LEX ? lex_start(z, q) : 0;
        for (; i >= 0 && i < n && want > 0; i++) {
            const zent *x = &z->e[q->rev ? n - 1 - i : i];
            if (q->by == BY_LEX) {
                /* Redis walks on from the first member in range while the
                 * far bound holds (members of mixed scores are not in lex
                 * order: what it answers then is this walk's) */
                if (q->rev ? !lex_gte_min(&q->lmin, x->m, x->len)
                           : !lex_lte_max(&q->lmax, x->m, x->len)) {
                    break;
                }
            } else if (!gte_min(&q->sr, x->s) || !lte_max(&q->sr, x->s)) {
                continue;
            }
            if (skip > 0) {
                skip--;
                continue;
            }
            v[k++] = x;
            want--;
        }
    }
    *out = v;
    return k;
}

/* Parse the bounds argv[a], argv[b] (min, max in the order the request
 * reads them) into q: NULL, or the error. */
static const char *zreq_bounds(zreq *q, const char *a, uint32_t alen, const char *b, uint32_t blen)
{
    if (q->by == BY_RANK) {
        if (!util_str2ll(a, alen, &q->start) || !util_str2ll(b, blen, &q->stop)) {
            return E_NOTINT;
        }
        return NULL;
    }
    if (q->by == BY_SCORE) {
        return score_range(a, alen, b, blen, &q->sr) ? NULL : E_MINMAX;
    }
    if (!parse_lex(a, alen, &q->lmin) || !parse_lex(b, blen, &q->lmax)) {
        return E_LEX;
    }
    return NULL;
}

/* q for a reply function: one allocation with its lex bounds' bytes. */
static zreq *zreq_keep(const zreq *q)
{
    zreq *k = xmalloc(sizeof(*k) + q->lmin.len + q->lmax.len + 1);
    *k = *q;
    uint8_t *t = (uint8_t *)(k + 1);
    if (q->lmin.len) {
        memcpy(t, q->lmin.m, q->lmin.len);
    }
    k->lmin.m = t;
    if (q->lmax.len) {
        memcpy(t + q->lmin.len, q->lmax.m, q->lmax.len);
    }
    k->lmax.m = t + q->lmin.len;
    return k;
}

static void rp_range(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    zreq *q = p->aux;
    if (coll_whole(c, p, b, &h, &n)) {
        zs z = {0};
        zs_of(&z, h, n);
        const zent **v;
        long k = zselect(&z, q, &v);
        reply_members(&c->out, c->proto, v, k, q->withscores);
        free(v);
        zs_free(&z);
    }
}

/* Queue the whole-set read of key answered by fn with (a copy of) q. */
static void queue_req(conn *c, const char *key, uint32_t klen, const zreq *q, reply_fn fn)
{
    pend *p = z_op(c, CUDIS_OP_GET, 0, key, klen, NULL, 0, false, fn);
    p->aux = zreq_keep(q);
}

/* ZRANGE-family options from argv[from..): which the command allows. */
enum { OPT_BY = 1, OPT_REV = 2, OPT_LIMIT = 4, OPT_WITHSCORES = 8 };

static const char *zreq_opts(zreq *q, int argc, char **argv, uint32_t *lens, int from, int allow)
{
    for (int j = from; j < argc; j++) {
        const char *a = argv[j];
        uint32_t n = lens[j];
        if ((allow & OPT_WITHSCORES) && util_eq(a, n, "withscores")) {
            q->withscores = true;
        } else if ((allow & OPT_LIMIT) && util_eq(a, n, "limit") && j + 2 < argc) {
            if (!util_str2ll(argv[j + 1], lens[j + 1], &q->offset) ||
                !util_str2ll(argv[j + 2], lens[j + 2], &q->count)) {
                return E_NOTINT;
            }
            q->limit = true;
            j += 2;
        } else if ((allow & OPT_BY) && util_eq(a, n, "byscore")) {
            q->by = BY_SCORE;
        } else if ((allow & OPT_BY) && util_eq(a, n, "bylex")) {
            q->by = BY_LEX;
        } else if ((allow & OPT_REV) && util_eq(a, n, "rev")) {
            q->rev = true;
        } else {
            return E_SYNTAX;
        }
    }
    return NULL;
}

/* ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT o c] [WITHSCORES]
 * and the older forms (by: fixed, rev: fixed, allow: their options).
 * Parsed into q; false with the error replied. */
static bool range_args(conn *c, zreq *q, int argc, char **argv, uint32_t *lens, int by, bool rev,
                       int allow, bool store)
{
    memset(q, 0, sizeof(*q));
    q->by = by;
    q->rev = rev;
    const char *err = zreq_opts(q, argc, argv, lens, store ? 5 : 4, allow);
    if (err == NULL && q->limit && q->by == BY_RANK) {
        err = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
              "BYLEX";
    }
    if (err == NULL && q->withscores && q->by == BY_LEX) {
        err = "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
    }
    int a = store ? 3 : 2;
    if (err == NULL) {
        /* REV reads a score or lex range as max, min */
        bool swap = q->rev && q->by != BY_RANK;
        err = swap ? zreq_bounds(q, argv[a + 1], lens[a + 1], argv[a], lens[a])
                   : zreq_bounds(q, argv[a], lens[a], argv[a + 1], lens[a + 1]);
    }
    if (err != NULL) {
        conn_error(c, err);
        return false;
    }
    return true;
}

/* The ZRANGE op's answer: the run of entries selected, in set order. */
static void rp_zslice(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (res_failed(c, r)) {
        return;
    }
    const uint8_t *h = b->out + r->val_off;
    uint32_t len = (r->flags & CUDIS_R_VALUE) ? r->val_len : 0;
    long n = (long)r->num;
    zent *e = xmalloc(((size_t)n + 1) * sizeof(*e));
    const zent **v = xmalloc(((size_t)n + 1) * sizeof(*v));
    long k = 0;
    cudis_hentry x;
    for (uint32_t at = 0; k < n && at < len && cudis_hentry_at(h + at, len - at, true, &x);
         at += x.size) {
        e[k++] = (zent){score_of(&x), x.f, x.flen};
    }
    bool rev = (p->k & 1) != 0;
    for (long i = 0; i < k; i++) {
        v[i] = &e[rev ? k - 1 - i : i];
    }
    reply_members(&c->out, c->proto, v, k, (p->k & 2) != 0);
    free(v);
    free(e);
}

/* ZRANGE by rank or score as the engine's ZRANGE op (BYLEX reads the set:
 * its walk is Redis's listpack walk, cmd lex_start). */
static void range_cmd(conn *c, int argc, char **argv, uint32_t *lens, int by, bool rev, int allow)
{
    zreq q;
    if (!range_args(c, &q, argc, argv, lens, by, rev, allow, false)) {
        return;
    }
    if (q.by == BY_LEX) {
        queue_req(c, argv[1], lens[1], &q, rp_range);
        return;
    }
    cudis_zrange_arg za = {0, 0, q.start, q.stop};
    uint16_t fl = q.rev ? CUDIS_F_RIGHT : 0;
    int64_t ex = 0;
    if (q.by == BY_SCORE) {
        fl |= CUDIS_F_BYSCORE;
        za = (cudis_zrange_arg){q.sr.min, q.sr.max, q.limit ? q.offset : 0,
                                q.limit ? q.count : -1};
        ex = (q.sr.minex ? CUDIS_ZR_MINEX : 0) | (q.sr.maxex ? CUDIS_ZR_MAXEX : 0);
    }
    pend *p = z_op(c, CUDIS_OP_ZRANGE, fl, argv[1], lens[1], &za, sizeof(za), false, rp_zslice);
    c->lp->b.ops[p->op0].arg = ex;
    p->k = (q.rev ? 1 : 0) | (q.withscores ? 2 : 0);
}

void cmd_zrange(conn *c, int argc, char **argv, uint32_t *lens)
{
    range_cmd(c, argc, argv, lens, BY_RANK, false, OPT_BY | OPT_REV | OPT_LIMIT | OPT_WITHSCORES);
}

void cmd_zrevrange(conn *c, int argc, char **argv, uint32_t *lens)
{
    range_cmd(c, argc, argv, lens, BY_RANK, true, OPT_WITHSCORES);
}

void cmd_zrangebyscore(conn *c, int argc, char **argv, uint32_t *lens)
{
    range_cmd(c, argc, argv, lens, BY_SCORE, false, OPT_LIMIT | OPT_WITHSCORES);
}

void cmd_zrevrangebyscore(conn *c, int argc, char **argv, uint32_t *lens)
{
    range_cmd(c, argc, argv, lens, BY_SCORE, true, OPT_LIMIT | OPT_WITHSCORES);
}

void cmd_zrangebylex(conn *c, int argc, char **argv, uint32_t *lens)
{
    range_cmd(c, argc, argv, lens, BY_LEX, false, OPT_LIMIT);
}

void cmd_zrevrangebylex(conn *c, int argc, char **argv, uint32_t *lens)
{
    range_cmd(c, argc, argv, lens, BY_LEX, true, OPT_LIMIT);
}

static void rp_count(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    zreq *q = p->aux;
    if (coll_whole(c, p, b, &h, &n)) {
        zs z = {0};
        zs_of(&z, h, n);
        const zent **v;
        long k = zselect(&z, q, &v);
        resp_int(&c->out, k);
        free(v);
        zs_free(&z);
    }
}

static void count_cmd(conn *c, char **argv, uint32_t *lens, int by)
{
    zreq q;
    memset(&q, 0, sizeof(q));
    q.by = by;
    const char *err = zreq_bounds(&q, argv[2], lens[2], argv[3], lens[3]);
    if (err != NULL) {
        conn_error(c, err);
        return;
    }
    queue_req(c, argv[1], lens[1], &q, rp_count);
}

void cmd_zcount(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    count_cmd(c, argv, lens, BY_SCORE);
}

void cmd_zlexcount(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    count_cmd(c, argv, lens, BY_LEX);
}

static void rp_rank(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    uint32_t mlen;
    const uint8_t *m = coll_aux_get(p, &mlen);
    zs z = {0};
    zs_of(&z, h, n);
    long i = zs_find(&z, m, mlen);
    if (i < 0) {
        resp_null(&c->out, c->proto);
    } else {
        resp_int(&c->out, p->a ? (long)z.n - 1 - i : i);
    }
    zs_free(&z);
}

static void rank_cmd(conn *c, char **argv, uint32_t *lens, bool rev)
{
    pend *p = z_op(c, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, false, rp_rank);
    p->a = rev;
    coll_aux_bytes(p, argv[2], lens[2]);
}

void cmd_zrank(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    rank_cmd(c, argv, lens, false);
}

void cmd_zrevrank(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    rank_cmd(c, argv, lens, true);
}

/* ------------------------------------------------------------------------
 * ZREMRANGEBY* ZPOPMIN ZPOPMAX ZRANGESTORE (alone)
 * ---------------------------------------------------------------------- */

static void remrange_cmd(conn *c, int argc, char **argv, uint32_t *lens, int by, const char *event)
{
    (void)argc;
    zreq q;
    memset(&q, 0, sizeof(q));
    q.by = by;
    const char *err = zreq_bounds(&q, argv[2], lens[2], argv[3], lens[3]);
    if (err != NULL) {
        conn_error(c, err);
        return;
    }
    zs z = {0};
    sbuf store = {0};
    int found = read_alone(c, argv[1], lens[1], &z, &store);
    if (found == 0) {
        resp_int(&c->out, 0);
    } else if (found > 0) {
        const zent **v;
        long k = zselect(&z, &q, &v);
        /* keep what was not selected, in order (v is in order, ascending) */
        zent *keep = xmalloc(((size_t)z.n + 1) * sizeof(*keep));
        uint32_t nk = 0;
        long j = 0;
        for (uint32_t i = 0; i < z.n; i++) {
            if (j < k && v[j] == &z.e[i]) {
                j++;
                continue;
            }
            keep[nk++] = z.e[i];
        }
        if (k == 0 || write_alone(c, argv[1], lens[1], keep, nk, event) == CUDIS_OK) {
            resp_int(&c->out, k);
        }
        free(keep);
        free(v);
    }
    zs_free(&z);
    sbuf_free(&store);
}

void cmd_zremrangebyrank(conn *c, int argc, char **argv, uint32_t *lens)
{
    remrange_cmd(c, argc, argv, lens, BY_RANK, "zremrangebyrank");
}

void cmd_zremrangebyscore(conn *c, int argc, char **argv, uint32_t *lens)
{
    remrange_cmd(c, argc, argv, lens, BY_SCORE, "zremrangebyscore");
}

void cmd_zremrangebylex(conn *c, int argc, char **argv, uint32_t *lens)
{
    remrange_cmd(c, argc, argv, lens, BY_LEX, "zremrangebylex");
}

/* Pop up to count from key's low (max: high) end, alone: the popped in
 * *out (allocated; their bytes in *store), their number, or -1 with the
 * error replied. */
static long pop_alone(conn *c, const char *key, uint32_t klen, bool max, long long count,
                      zent **out, sbuf *store)
{
    zs z = {0};
    int found = read_alone(c, key, klen, &z, store);
    *out = NULL;
    if (found <= 0) {
        zs_free(&z);
        return found < 0 ? -1 : 0;
    }
    long k = count < (long long)z.n ? (long)count : (long)z.n;
    zent *popped = xmalloc(((size_t)k + 1) * sizeof(*popped));
    for (long i = 0; i < k; i++) {
        popped[i] = z.e[max ? z.n - 1 - (uint32_t)i : (uint32_t)i];
    }
    const zent *rest = max ? z.e : z.e + k;
    int st = k == 0
                 ? CUDIS_OK
                 : write_alone(c, key, klen, rest, z.n - (uint32_t)k, max ? "zpopmax" : "zpopmin");
    zs_free(&z);
    if (st != CUDIS_OK) {
        free(popped);
        return -1;
    }
    *out = popped;
    return k;
}

/* What ZPOPMIN/ZPOPMAX answer: member, score, ... (RESP3 with a count:
 * pairs). */
static void reply_popped(conn *c, const zent *e, long k, bool pairs)
{
    pairs = pairs && c->proto >= 3;
    resp_array(&c->out, pairs ? k : 2 * k);
    for (long i = 0; i < k; i++) {
        if (pairs) {
            resp_array(&c->out, 2);
        }
        resp_bulk(&c->out, e[i].m, e[i].len);
        reply_score(c, e[i].s);
    }
}

static void zpop_cmd(conn *c, int argc, char **argv, uint32_t *lens, bool max)
{
    long long count = 1;
    if (argc > 3) {
        conn_error(c, E_SYNTAX);
        return;
    }
    if (argc == 3 && (!util_str2ll(argv[2], lens[2], &count) || count < 0)) {
        conn_error(c, "ERR value is out of range, must be positive");
        return;
    }
    sbuf store = {0};
    zent *e;
    long k = pop_alone(c, argv[1], lens[1], max, count, &e, &store);
    if (k >= 0) {
        reply_popped(c, e, k, argc == 3);
    }
    free(e);
    sbuf_free(&store);
}

void cmd_zpopmin(conn *c, int argc, char **argv, uint32_t *lens)
{
    zpop_cmd(c, argc, argv, lens, false);
}

void cmd_zpopmax(conn *c, int argc, char **argv, uint32_t *lens)
{
    zpop_cmd(c, argc, argv, lens, true);
}

void cmd_zrangestore(conn *c, int argc, char **argv, uint32_t *lens)
{
    zreq q;
    if (!range_args(c, &q, argc, argv, lens, BY_RANK, false, OPT_BY | OPT_REV | OPT_LIMIT, true)) {
        return;
    }
    zs z = {0};
    sbuf store = {0};
    int found = read_alone(c, argv[2], lens[2], &z, &store);
    if (found >= 0) {
        const zent **v;
        long k = zselect(&z, &q, &v);
        zent *sel = xmalloc(((size_t)k + 1) * sizeof(*sel));
        for (long i = 0; i < k; i++) {
            sel[i] = *v[i];
        }
        zsort(sel, (size_t)k, zcmp); /* REV selects in reverse */
        /* the destination is replaced whatever it held (no TTL kept) */
        batcher *b = &c->lp->b;
        uint8_t ev = b->ev;
        b->ev = KEV_QUIET;
        batch_add_op(b, CUDIS_OP_DEL, 0, argv[1], lens[1], NULL, 0, 0, 0, true);
        b->ev = ev;
        run_alone(c);
        cudis_result r = b->res[0];
        batch_reset(b);
        if (r.status != CUDIS_OK) {
            reply_engine_error(c, r.status);
        } else if (k == 0) {
            if (r.flags & CUDIS_R_DONE) {
                keyspace_notify(c->lp, NOTIFY_GENERIC, "del", b->db, argv[1], lens[1]);
            }
            resp_int(&c->out, 0);
        } else if (write_alone(c, argv[1], lens[1], sel, (uint32_t)k, "zrangestore") == CUDIS_OK) {
            resp_int(&c->out, k);
        }
        free(sel);
        free(v);
    }
    zs_free(&z);
    sbuf_free(&store);
}

/* ------------------------------------------------------------------------
 * ZRANDMEMBER ZSCAN
 * ---------------------------------------------------------------------- */

static void rp_zrandmember(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    bool with_count = p->k != 0, withscores = p->a != 0;
    long long count = p->b;
    zs z = {0};
    zs_of(&z, h, n);
    if (!with_count) {
        if (z.n == 0) {
            resp_null(&c->out, c->proto);
        } else {
            const zent *x = &z.e[coll_rand64() % z.n];
            resp_bulk(&c->out, x->m, x->len);
        }
        zs_free(&z);
        return;
    }
    const zent **v = NULL;
    long k = 0;
    if (count >= 0) {
        /* distinct members: a partial shuffle */
        k = count < (long long)z.n ? (long)count : (long)z.n;
        v = xmalloc(((size_t)z.n + 1) * sizeof(*v));
        for (uint32_t i = 0; i < z.n; i++) {
            v[i] = &z.e[i];
        }
        for (long i = 0; i < k; i++) {
            long j = i + (long)(coll_rand64() % (z.n - (uint64_t)i));
            const zent *t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
    } else if (z.n > 0) {
        k = (long)-count;
        v = xmalloc((size_t)k * sizeof(*v));
        for (long i = 0; i < k; i++) {
            v[i] = &z.e[coll_rand64() % z.n];
        }
    }
    reply_members(&c->out, c->proto, v, k, withscores);
    free(v);
    zs_free(&z);
}

void cmd_zrandmember(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long count = 0;
    bool withscores = false;
    if (argc >= 3) {
        if (!util_str2ll(argv[2], lens[2], &count)) {
            conn_error(c, E_NOTINT);
            return;
        }
        if (argc == 4) {
            if (!util_eq(argv[3], lens[3], "withscores")) {
                conn_error(c, E_SYNTAX);
                return;
            }
            withscores = true;
        } else if (argc > 4) {
            conn_error(c, E_SYNTAX);
            return;
        }
        if (count < -COLL_MAX_REPEAT || (withscores && count < -COLL_MAX_REPEAT / 2)) {
            conn_error(c, "ERR value is out of range");
            return;
        }
    }
    pend *p = z_op(c, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, false, rp_zrandmember);
    p->k = argc >= 3;
    p->a = withscores;
    p->b = count;
}

static void rp_zscan(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    if (h == NULL) {
        sbuf_add(&c->out, "*2\r\n$1\r\n0\r\n*0\r\n", 15);
        return;
    }
    if (p->b != 0) {
        conn_error(c, (const char *)(intptr_t)p->b);
        return;
    }
    uint32_t plen = 0;
    const char *pat = p->aux ? (const char *)coll_aux_get(p, &plen) : NULL;
    sbuf items = {0};
    long k = 0;
    cudis_hentry e;
    COLL_FOREACH(h, n, at, e)
    {
        if (pat != NULL && !util_glob_match(pat, plen, (const char *)e.f, e.flen, false)) {
            continue;
        }
        resp_bulk(&items, e.f, e.flen);
        resp_double(&items, score_of(&e), 2); /* a bulk string, in RESP3 too */
        k += 2;
    }
    resp_array(&c->out, 2);
    resp_bulks(&c->out, "0");
    resp_array(&c->out, k);
    sbuf_add(&c->out, items.p, items.len);
    sbuf_free(&items);
}

void cmd_zscan(conn *c, int argc, char **argv, uint32_t *lens)
{
    coll_scan_prepare(c, argc, argv, lens, CUDIS_TYPE_ZSET, rp_zscan);
}

/* ------------------------------------------------------------------------
 * ZUNION ZINTER ZDIFF, their STORE forms, ZINTERCARD
 * ---------------------------------------------------------------------- */

enum { ZOP_UNION, ZOP_INTER, ZOP_DIFF };
enum { AGG_SUM, AGG_MIN, AGG_MAX };

typedef struct zalg {
    int op, agg;
    bool withscores;
    long long limit; /* ZINTERCARD */
    int nk;          /* the keys: argv[k0..k0+nk) */
    int k0;
    double *w; /* nk weights */
} zalg;

/* numkeys at argv[at], the keys, then the options the command takes;
 * false with Redis's error replied. */
static bool zalg_args(conn *c, int argc, char **argv, uint32_t *lens, int at, zalg *a, bool store,
                      bool card)
{
    long long nk;
    if (!util_str2ll(argv[at], lens[at], &nk) || nk < INT_MIN || nk > INT_MAX) {
        conn_error(c, E_NOTINT);
        return false;
    }
    if (nk < 1) {
        conn_errorf(c, "ERR at least 1 input key is needed for '%s' command",
                    cmd_fullname(c->cur_cmd));
        return false;
    }
    if (nk > argc - at - 1) {
        conn_error(c, E_SYNTAX);
        return false;
    }
    a->nk = (int)nk;
    a->k0 = at + 1;
    a->agg = AGG_SUM;
    a->withscores = false;
    a->limit = 0;
    a->w = xmalloc((size_t)nk * sizeof(*a->w));
    for (int i = 0; i < a->nk; i++) {
        a->w[i] = 1;
    }
    for (int j = a->k0 + a->nk; j < argc; j++) {
        int left = argc - j - 1;
        if (card) {
            if (util_eq(argv[j], lens[j], "limit") && left >= 1) {
                if (!util_str2ll(argv[j + 1], lens[j + 1], &a->limit) || a->limit < 0) {
                    conn_error(c, "ERR LIMIT can't be negative");
                    return false;
                }
                j++;
                continue;
            }
        } else if (a->op != ZOP_DIFF && util_eq(argv[j], lens[j], "weights") && left >= a->nk) {
            for (int i = 0; i < a->nk; i++) {
                if (!parse_score(argv[j + 1 + i], lens[j + 1 + i], &a->w[i])) {
                    conn_error(c, "ERR weight value is not a float");
                    return false;
                }
            }
            j += a->nk;
            continue;
        } else if (a->op != ZOP_DIFF && util_eq(argv[j], lens[j], "aggregate") && left >= 1) {
            const char *g = argv[j + 1];
            uint32_t gl = lens[j + 1];
            a->agg = util_eq(g, gl, "sum")   ? AGG_SUM
                     : util_eq(g, gl, "min") ? AGG_MIN
                     : util_eq(g, gl, "max") ? AGG_MAX
                                             : -1;
            if (a->agg < 0) {
                conn_error(c, E_SYNTAX);
                return false;
            }
            j++;
            continue;
        } else if (!store && util_eq(argv[j], lens[j], "withscores")) {
            a->withscores = true;
            continue;
        }
        conn_error(c, E_SYNTAX);
        return false;
    }
    return true;
}

static int by_member(const void *pa, const void *pb)
{
    const zent *a = pa, *b = pb;
    return mcmp(a->m, a->len, b->m, b->len);
}

static double agg(int how, double acc, double s)
{
    double r = how == AGG_SUM   ? acc + s
               : how == AGG_MIN ? (s < acc ? s : acc)
                                : (s > acc ? s : acc);
    return isnan(r) ? 0 : r; /* Redis: inf + -inf is 0 */
}

static bool member_in(const zs *z, const zent *x, double *s)
{
    if (z->n == 0) {
        return false;
    }
    const zent *f = bsearch(x, z->e, z->n, sizeof(*z->e), by_member);
    if (f != NULL && s != NULL) {
        *s = f->s;
    }
    return f != NULL;
}

/* The algebra over the inputs in[0..k) (sorted by member; a missing key
 * is empty), in Redis's order (score, member), at most limit (0: all). */
static void zalgebra(const zalg *a, zs *in, int k, zs *out)
{
    out->n = 0;
    /* Redis works on the inputs smallest first (sorted by size, stably,
     * for ZUNION and ZINTER), which orders a sum's additions */
    int *ord = xmalloc((size_t)k * sizeof(*ord));
    for (int j = 0; j < k; j++) {
        ord[j] = j;
    }
    for (int j = 1; a->op != ZOP_DIFF && j < k; j++) {
        for (int p = j; p > 0 && in[ord[p - 1]].n > in[ord[p]].n; p--) {
            int t = ord[p];
            ord[p] = ord[p - 1];
            ord[p - 1] = t;
        }
    }
    if (a->op == ZOP_UNION) {
        /* each member aggregates over the inputs in that order, from the
         * first that holds it (Redis's dict of the union) */
        for (int qj = 0; qj < k; qj++) {
            int j = ord[qj];
            for (uint32_t i = 0; i < in[j].n; i++) {
                const zent *x = &in[j].e[i];
                bool before = false;
                for (int q = 0; q < qj && !before; q++) {
                    before = member_in(&in[ord[q]], x, NULL);
                }
                if (before) {
                    continue;
                }
                double s = a->w[j] * x->s;
                s = isnan(s) ? 0 : s;
                for (int q = qj + 1; q < k; q++) {
                    double t;
                    if (member_in(&in[ord[q]], x, &t)) {
                        double wt = a->w[ord[q]] * t;
                        s = agg(a->agg, s, isnan(wt) ? 0 : wt);
                    }
                }
                zs_push(out, s, x->m, x->len);
            }
        }
    } else {
        const zs *first = &in[ord[0]];
        for (uint32_t i = 0; i < first->n; i++) {
            const zent *x = &first->e[i];
            double s = a->op == ZOP_DIFF ? x->s : a->w[ord[0]] * x->s;
            s = isnan(s) ? 0 : s;
            bool keep = true;
            for (int q = 1; q < k && keep; q++) {
                int p = ord[q];
                double t;
                bool in_p = member_in(&in[p], x, &t);
                if (a->op == ZOP_DIFF) {
                    keep = !in_p;
                } else if ((keep = in_p)) {
                    s = agg(a->agg, s, a->w[p] * t); /* NaN as Redis: MIN/MAX skip it */
                }
            }
            if (keep) {
                zs_push(out, s, x->m, x->len);
                if (a->limit > 0 && (long long)out->n >= a->limit) {
                    break;
                }
            }
        }
    }
    free(ord);
    zsort(out->e, out->n, zcmp);
}

/* The inputs as the reads returned them (zsets, or sets scored 1), each
 * sorted by member; false (replied) on an error or another type. */
static bool zalg_inputs(conn *c, const cudis_result *res, const uint8_t *out, int k, zs *in)
{
    for (int j = 0; j < k; j++) {
        const cudis_result *r = &res[j];
        if (r->status != CUDIS_OK) {
            reply_engine_error(c, r->status);
            return false;
        }
        if (!(r->flags & CUDIS_R_VALUE)) {
            continue;
        }
        if (r->type != CUDIS_TYPE_ZSET && r->type != CUDIS_TYPE_SET) {
            reply_engine_error(c, CUDIS_E_WRONGTYPE);
            return false;
        }
        const uint8_t *h = out + r->val_off;
        if (r->type == CUDIS_TYPE_ZSET) {
            zs_of(&in[j], h, r->val_len);
        } else {
            cudis_hentry e;
            COLL_FOREACH(h, r->val_len, at, e)
            {
                zs_push(&in[j], 1.0, e.f, e.flen);
            }
        }
        zsort(in[j].e, in[j].n, by_member);
    }
    return true;
}

/* The inputs of a read-only algebra, smallest first for ZINTER (Redis's
 * order of work; the answer is the same). */
static void add_alg_reads(conn *c, char **argv, uint32_t *lens, const zalg *a, uint32_t *op0)
{
    batcher *b = &c->lp->b;
    *op0 = b->nops;
    for (int j = 0; j < a->nk; j++) {
        uint32_t i = batch_add_op(b, CUDIS_OP_GET, 0, argv[a->k0 + j], lens[a->k0 + j], NULL, 0, 0,
                                  0, false);
        b->ops[i].type = CUDIS_TYPE_ANY;
    }
    if (a->nk > 1) {
        b->exclusive = true; /* the keys are read at one point in time */
    }
}

static void rp_zalgebra(conn *c, pend *p, const cudis_batch *b)
{
    zalg *a = p->aux;
    zs *in = xcalloc((size_t)a->nk, sizeof(*in));
    if (zalg_inputs(c, RES(b, p, 0), b->out, a->nk, in)) {
        zs r = {0};
        zalgebra(a, in, a->nk, &r);
        if (p->k) {
            resp_int(&c->out, r.n);
        } else {
            const zent **v = xmalloc(((size_t)r.n + 1) * sizeof(*v));
            for (uint32_t i = 0; i < r.n; i++) {
                v[i] = &r.e[i];
            }
            reply_members(&c->out, c->proto, v, r.n, a->withscores);
            free(v);
        }
        zs_free(&r);
    }
    for (int j = 0; j < a->nk; j++) {
        zs_free(&in[j]);
    }
    free(in);
}

static void zalg_cmd(conn *c, int argc, char **argv, uint32_t *lens, int op, bool card)
{
    zalg a = {.op = card ? ZOP_INTER : op};
    if (!zalg_args(c, argc, argv, lens, 1, &a, false, card)) {
        free(a.w);
        return;
    }
    uint32_t op0;
    add_alg_reads(c, argv, lens, &a, &op0);
    pend *p = batch_add_pend(&c->lp->b, c, rp_zalgebra, op0, (uint32_t)a.nk);
    zalg *keep = xmalloc(sizeof(*keep) + (size_t)a.nk * sizeof(double));
    *keep = a;
    memcpy(keep + 1, a.w, (size_t)a.nk * sizeof(double));
    free(a.w);
    keep->w = (double *)(keep + 1);
    p->aux = keep;
    p->k = card;
}

void cmd_zunion(conn *c, int argc, char **argv, uint32_t *lens)
{
    zalg_cmd(c, argc, argv, lens, ZOP_UNION, false);
}

void cmd_zinter(conn *c, int argc, char **argv, uint32_t *lens)
{
    zalg_cmd(c, argc, argv, lens, ZOP_INTER, false);
}

void cmd_zdiff(conn *c, int argc, char **argv, uint32_t *lens)
{
    zalg_cmd(c, argc, argv, lens, ZOP_DIFF, false);
}

void cmd_zintercard(conn *c, int argc, char **argv, uint32_t *lens)
{
    zalg_cmd(c, argc, argv, lens, ZOP_INTER, true);
}

static void zstore_cmd(conn *c, int argc, char **argv, uint32_t *lens, int op, const char *event)
{
    zalg a = {.op = op};
    if (!zalg_args(c, argc, argv, lens, 2, &a, true, false)) {
        free(a.w);
        return;
    }
    batcher *b = &c->lp->b;
    uint32_t op0;
    add_alg_reads(c, argv, lens, &a, &op0);
    run_alone(c);
    zs *in = xcalloc((size_t)a.nk, sizeof(*in));
    bool ok = zalg_inputs(c, b->res, b->out, a.nk, in);
    zs r = {0};
    sbuf enc = {0};
    if (ok) {
        zalgebra(&a, in, a.nk, &r);
        zs_encode(&enc, r.e, r.n); /* the members point into the batch's buffer */
    }
    batch_reset(b);
    for (int j = 0; j < a.nk; j++) {
        zs_free(&in[j]);
    }
    free(in);
    free(a.w);
    if (ok) {
        uint32_t n = r.n;
        uint8_t ev = b->ev;
        b->ev = KEV_QUIET;
        if (n == 0) {
            batch_add_op(b, CUDIS_OP_DEL, 0, argv[1], lens[1], NULL, 0, 0, 0, true);
        } else {
            uint32_t i = batch_add_op(b, CUDIS_OP_SET, 0, argv[1], lens[1], enc.p,
                                      (uint32_t)enc.len, 0, 0, true);
            b->ops[i].type = CUDIS_TYPE_ZSET;
        }
        b->ev = ev;
        run_alone(c);
        cudis_result w = b->res[0];
        batch_reset(b);
        if (w.status != CUDIS_OK) {
            reply_engine_error(c, w.status);
        } else {
            if (n > 0) {
                keyspace_notify(c->lp, NOTIFY_ZSET, event, b->db, argv[1], lens[1]);
            } else if (w.flags & CUDIS_R_DONE) {
                keyspace_notify(c->lp, NOTIFY_GENERIC, "del", b->db, argv[1], lens[1]);
            }
            resp_int(&c->out, n);
        }
    }
    zs_free(&r);
    sbuf_free(&enc);
}

void cmd_zunionstore(conn *c, int argc, char **argv, uint32_t *lens)
{
    zstore_cmd(c, argc, argv, lens, ZOP_UNION, "zunionstore");
}

void cmd_zinterstore(conn *c, int argc, char **argv, uint32_t *lens)
{
    zstore_cmd(c, argc, argv, lens, ZOP_INTER, "zinterstore");
}

void cmd_zdiffstore(conn *c, int argc, char **argv, uint32_t *lens)
{
    zstore_cmd(c, argc, argv, lens, ZOP_DIFF, "zdiffstore");
}

/* ------------------------------------------------------------------------
 * ZMPOP BZPOPMIN BZPOPMAX BZMPOP
 * ---------------------------------------------------------------------- */

/* [key, [[member, score], ...]]: ZMPOP's and BZMPOP's answer. */
static void reply_keyed(conn *c, const char *key, uint32_t klen, const zent *e, long k)
{
    resp_array(&c->out, 2);
    resp_bulk(&c->out, key, klen);
    resp_array(&c->out, k);
    for (long i = 0; i < k; i++) {
        resp_array(&c->out, 2);
        resp_bulk(&c->out, e[i].m, e[i].len);
        reply_score(c, e[i].s);
    }
}

/* ZMPOP's numkeys, keys, MIN|MAX [COUNT n] from argv[at]: false with the
 * error replied. */
static bool zmpop_args(conn *c, int argc, char **argv, uint32_t *lens, int at, long long *nk,
                       bool *max, long long *count)
{
    *count = 1;
    if (!util_str2ll(argv[at], lens[at], nk) || *nk <= 0 || *nk > INT_MAX) {
        conn_error(c, "ERR numkeys should be greater than 0");
        return false;
    }
    long long w = at + 1 + *nk;
    if (w >= argc || !(util_eq(argv[w], lens[w], "min") || util_eq(argv[w], lens[w], "max"))) {
        conn_error(c, E_SYNTAX);
        return false;
    }
    *max = util_eq(argv[w], lens[w], "max");
    bool counted = false;
    for (int j = (int)w + 1; j < argc; j++) {
        if (util_eq(argv[j], lens[j], "count") && j + 1 < argc && !counted) {
            if (!util_str2ll(argv[j + 1], lens[j + 1], count) || *count <= 0) {
                conn_error(c, "ERR count should be greater than 0");
                return false;
            }
            counted = true;
            j++;
        } else {
            conn_error(c, E_SYNTAX);
            return false;
        }
    }
    return true;
}

void cmd_zmpop(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long nk, count;
    bool max;
    if (!zmpop_args(c, argc, argv, lens, 1, &nk, &max, &count)) {
        return;
    }
    for (int k = 0; k < nk; k++) {
        sbuf store = {0};
        zent *e;
        long n = pop_alone(c, argv[2 + k], lens[2 + k], max, count, &e, &store);
        if (n != 0) {
            if (n > 0) {
                reply_keyed(c, argv[2 + k], lens[2 + k], e, n);
            }
            free(e);
            sbuf_free(&store);
            return;
        }
        free(e);
        sbuf_free(&store);
    }
    resp_null_array(&c->out, c->proto);
}

/* A pop from key for a blocked (or blocking) BZPOPMIN, BZPOPMAX, BZMPOP:
 * the set's type is checked first (a wrong type waits on). */
static int serve_zpop(conn *c, const blk_state *s, const char *key, uint32_t klen)
{
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, CUDIS_OP_HLEN, 0, key, klen, NULL, 0, 0, 0, false);
    b->ops[i].type = CUDIS_TYPE_ZSET;
    run_alone(c);
    cudis_result r = b->res[0];
    batch_reset(b);
    if (r.status == CUDIS_E_WRONGTYPE) {
        return BLK_WRONGTYPE;
    }
    if (r.status == CUDIS_OK && r.num == 0) {
        return BLK_EMPTY;
    }
    sbuf store = {0};
    zent *e;
    long n = r.status == CUDIS_OK ? pop_alone(c, key, klen, s->right, s->count, &e, &store) : -1;
    if (r.status != CUDIS_OK) {
        reply_engine_error(c, r.status);
        e = NULL;
    } else if (n > 0 && s->mpop) {
        reply_keyed(c, key, klen, e, n);
    } else if (n > 0) {
        resp_array(&c->out, 3);
        resp_bulk(&c->out, key, klen);
        resp_bulk(&c->out, e[0].m, e[0].len);
        reply_score(c, e[0].s);
    }
    free(e);
    sbuf_free(&store);
    return n == 0 ? BLK_EMPTY : BLK_SERVED;
}

static void bzpop_cmd(conn *c, int argc, char **argv, uint32_t *lens, bool max)
{
    int64_t deadline;
    if (!blocking_timeout_arg(c, argv[argc - 1], lens[argc - 1], &deadline)) {
        return;
    }
    blk_state *s = blocking_state(argc, argv, lens, 1, argc - 2);
    s->serve = serve_zpop;
    s->null_array = true;
    s->right = max;
    s->count = 1;
    blocking_try(c, s, deadline);
}

void cmd_bzpopmin(conn *c, int argc, char **argv, uint32_t *lens)
{
    bzpop_cmd(c, argc, argv, lens, false);
}

void cmd_bzpopmax(conn *c, int argc, char **argv, uint32_t *lens)
{
    bzpop_cmd(c, argc, argv, lens, true);
}

void cmd_bzmpop(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long nk, count;
    bool max;
    int64_t deadline;
    if (!zmpop_args(c, argc, argv, lens, 2, &nk, &max, &count) ||
        !blocking_timeout_arg(c, argv[1], lens[1], &deadline)) {
        return;
    }
    blk_state *s = blocking_state(argc, argv, lens, 3, (int)nk);
    s->serve = serve_zpop;
    s->null_array = true;
    s->right = max;
    s->count = count;
    s->mpop = true;
    blocking_try(c, s, deadline);
}
