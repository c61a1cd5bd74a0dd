/*
 * cmd_hash.c - the hash commands. A hash is one engine item of type
 * CUDIS_TYPE_HASH holding its fields (common/cudis_hash.h): HSET, HDEL,
 * HGET, HINCRBY and HLEN are one engine op each, applied by the store to
 * the item (so the gpu engine edits it in device memory); the commands
 * that read many fields (HMGET, HGETALL, HKEYS, HVALS, HRANDFIELD, HSCAN)
 * fetch the encoded hash with one typed GET and answer from it;
 * HINCRBYFLOAT reads, then writes the field, alone between batches.
 * A hash longer than hash-max-item-size is kept in chunks (bighash.c):
 * each command first offers itself to bighash_cmd, and the whole-hash
 * reads answer from the chunks gathered (whole_op, whole_go).
 * Replies and errors follow Redis 7.0 word for word.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudis_rng.h"
#include "server_internal.h"

#define RES(b, p, k) (&(b)->res[(p)->op0 + (k)])

static const char *E_SYNTAX = "ERR syntax error";

bool hash_is_small(const uint8_t *h, uint32_t n)
{
    long long max_n = srv.cfg.hash_max_listpack_entries, max_len = srv.cfg.hash_max_listpack_value;
    if (cudis_hash_count(h, n) > max_n) {
        return false;
    }
    cudis_hentry e;
    for (uint32_t at = CUDIS_HASH_HDR; at < n && cudis_hentry_at(h + at, n - at, true, &e);
         at += e.size) {
        if (e.flen > max_len || e.vlen > max_len) {
            return false;
        }
    }
    return true;
}

/* One hash op on argv[1] with its reply function. */
static pend *hash_op(conn *c, uint8_t code, uint16_t flags, char **argv, uint32_t *lens,
                     const void *val, uint32_t vlen, int64_t arg, bool write, reply_fn fn)
{
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, code, flags, argv[1], lens[1], val, vlen, arg, 0, write);
    b->ops[i].type = CUDIS_TYPE_HASH;
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

/* Append field/value entries of argv[from..argc) (pairs; fields alone when
 * !vals) to an edit buffer (cudis_hash.h). */
void coll_edits(sbuf *e, int argc, char **argv, uint32_t *lens, int from, bool vals)
{
    uint8_t lb[5];
    for (int j = from; j < argc; j += vals ? 2 : 1) {
        sbuf_add(e, (const char *)lb, cudis_varint_put(lb, lens[j]));
        sbuf_add(e, argv[j], lens[j]);
        if (vals) {
            sbuf_add(e, (const char *)lb, cudis_varint_put(lb, lens[j + 1]));
            sbuf_add(e, argv[j + 1], lens[j + 1]);
        }
    }
}

/* Bytes a reply function needs, kept in p->aux (freed once answered) as
 * a uint32 length and the bytes. */
void coll_aux_bytes(pend *p, const void *data, uint32_t len)
{
    uint8_t *a = xmalloc(4 + (size_t)len);
    memcpy(a, &len, 4);
    if (len) {
        memcpy(a + 4, data, len);
    }
    p->aux = a;
}

const uint8_t *coll_aux_get(const pend *p, uint32_t *len)
{
    memcpy(len, p->aux, 4);
    return (const uint8_t *)p->aux + 4;
}

/* ------------------------------------------------------------------------
 * HSET HSETNX HMSET HDEL HINCRBY
 * ---------------------------------------------------------------------- */

void coll_rp_num(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (!res_failed(c, r)) {
        resp_int(&c->out, r->num);
    }
}

static void rp_ok(conn *c, pend *p, const cudis_batch *b)
{
    if (!res_failed(c, RES(b, p, 0))) {
        reply_ok(c);
    }
}

/* HSET's arg: the length past which the op reports CUDIS_R_BIG. */
static int64_t big_at(void)
{
    return srv.cfg.hash_max_item_size > 0 ? srv.cfg.hash_max_item_size : 0;
}

static void hset_generic(conn *c, int argc, char **argv, uint32_t *lens, int kind, reply_fn fn)
{
    if (argc % 2 != 0) {
        conn_errorf(c, "ERR wrong number of arguments for '%s' command", c->cur_cmd->name);
        return;
    }
    if (bighash_cmd(c, kind, argc, argv, lens)) {
        return;
    }
    sbuf e = {0};
    coll_edits(&e, argc, argv, lens, 2, true);
    hash_op(c, CUDIS_OP_HSET, 0, argv, lens, e.p, (uint32_t)e.len, big_at(), true, fn);
    sbuf_free(&e);
}

void cmd_hset(conn *c, int argc, char **argv, uint32_t *lens)
{
    hset_generic(c, argc, argv, lens, BH_HSET, coll_rp_num);
}

void cmd_hmset(conn *c, int argc, char **argv, uint32_t *lens)
{
    hset_generic(c, argc, argv, lens, BH_HMSET, rp_ok);
}

void cmd_hsetnx(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (bighash_cmd(c, BH_HSETNX, argc, argv, lens)) {
        return;
    }
    sbuf e = {0};
    coll_edits(&e, argc, argv, lens, 2, true);
    hash_op(c, CUDIS_OP_HSET, CUDIS_F_NX, argv, lens, e.p, (uint32_t)e.len, big_at(), true,
            coll_rp_num);
    sbuf_free(&e);
}

void cmd_hdel(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (bighash_cmd(c, BH_HDEL, argc, argv, lens)) {
        return;
    }
    sbuf e = {0};
    coll_edits(&e, argc, argv, lens, 2, false);
    hash_op(c, CUDIS_OP_HDEL, 0, argv, lens, e.p, (uint32_t)e.len, 0, true, coll_rp_num);
    sbuf_free(&e);
}

static void rp_hincrby(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (r->status == CUDIS_E_NOTINT) {
        conn_error(c, "ERR hash value is not an integer");
    } else if (!res_failed(c, r)) {
        resp_int(&c->out, r->num);
    }
}

void cmd_hincrby(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    long long d;
    if (arg_ll(c, argv[3], lens[3], &d) && !bighash_cmd(c, BH_HINCRBY, argc, argv, lens)) {
        hash_op(c, CUDIS_OP_HINCRBY, 0, argv, lens, argv[2], lens[2], d, true, rp_hincrby);
    }
}

void cmd_hincrbyfloat(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    batcher *b = &c->lp->b;
    long double v = 0, incr;
    if (!util_str2ld(argv[3], lens[3], &incr)) {
        conn_error(c, "ERR value is not a valid float");
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        conn_error(c, "ERR value is NaN or Infinity");
        return;
    }
    if (bighash_cmd(c, BH_HINCRBYFLOAT, argc, argv, lens)) {
        return;
    }
    uint32_t i = batch_add_op(b, CUDIS_OP_HGET, 0, argv[1], lens[1], argv[2], lens[2], 0, 0, false);
    b->ops[i].type = CUDIS_TYPE_HASH;
    run_alone(c);
    cudis_result r = b->res[0];
    if (r.status != CUDIS_OK) {
        batch_reset(b);
        reply_engine_error(c, r.status);
        return;
    }
    bool ok = true;
    if (r.flags & CUDIS_R_VALUE) {
        ok = util_str2ld((const char *)b->out + r.val_off, r.val_len, &v);
    }
    batch_reset(b);
    if (!ok) {
        conn_error(c, "ERR hash value is not a float");
        return;
    }
    v += incr;
    if (isnan(v) || isinf(v)) {
        conn_error(c, "ERR increment would produce NaN or Infinity");
        return;
    }
    char buf[5 * 1024];
    int n = util_ld2str(buf, sizeof(buf), v);
    char *fv[4] = {argv[0], argv[1], argv[2], buf};
    uint32_t fl[4] = {lens[0], lens[1], lens[2], (uint32_t)n};
    sbuf e = {0};
    coll_edits(&e, 4, fv, fl, 2, true);
    b->ev = KEV_HINCRBYFLOAT;
    i = batch_add_op(b, CUDIS_OP_HSET, 0, argv[1], lens[1], e.p, (uint32_t)e.len, big_at(), 0,
                     true);
    b->ops[i].type = CUDIS_TYPE_HASH;
    sbuf_free(&e);
    run_alone(c);
    int st = b->res[0].status;
    batch_reset(b);
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
        return;
    }
    resp_bulk(&c->out, buf, (size_t)n);
}

/* ------------------------------------------------------------------------
 * HGET HEXISTS HSTRLEN HLEN
 * ---------------------------------------------------------------------- */

static void rp_hget(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (res_failed(c, r)) {
        return;
    }
    if (r->flags & CUDIS_R_VALUE) {
        resp_bulk(&c->out, b->out + r->val_off, r->val_len);
    } else {
        resp_null(&c->out, c->proto);
    }
}

static void rp_hstrlen(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (!res_failed(c, r)) {
        resp_int(&c->out, (r->flags & CUDIS_R_VALUE) ? (long long)r->val_len : 0);
    }
}

void cmd_hget(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (bighash_cmd(c, BH_HGET, argc, argv, lens)) {
        return;
    }
    hash_op(c, CUDIS_OP_HGET, 0, argv, lens, argv[2], lens[2], 0, false, rp_hget);
}

void cmd_hexists(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (bighash_cmd(c, BH_HEXISTS, argc, argv, lens)) {
        return;
    }
    hash_op(c, CUDIS_OP_HGET, 0, argv, lens, argv[2], lens[2], 0, false, coll_rp_num);
}

void cmd_hstrlen(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (bighash_cmd(c, BH_HSTRLEN, argc, argv, lens)) {
        return;
    }
    hash_op(c, CUDIS_OP_HGET, 0, argv, lens, argv[2], lens[2], 0, false, rp_hstrlen);
}

void cmd_hlen(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (bighash_cmd(c, BH_HLEN, argc, argv, lens)) {
        return;
    }
    hash_op(c, CUDIS_OP_HLEN, 0, argv, lens, NULL, 0, 0, false, coll_rp_num);
}

/* ------------------------------------------------------------------------
 * Commands answered from the whole hash
 * ---------------------------------------------------------------------- */

/* The encoded hash a typed GET returned: false (replied) on error; *h
 * NULL with *n 0 for a missing key. */
bool coll_whole(conn *c, pend *p, const cudis_batch *b, const uint8_t **h, uint32_t *n)
{
    const cudis_result *r = RES(b, p, 0);
    if (res_failed(c, r)) {
        return false;
    }
    *h = (r->flags & CUDIS_R_VALUE) ? b->out + r->val_off : NULL;
    *n = *h ? r->val_len : 0;
    return true;
}

/* A big hash's whole-hash read: its chunks gathered (bighash_whole) and
 * answered at once by whole_go, through a pend of its own. */
static __thread pend big_pend;
static __thread sbuf big_bytes;
static __thread int big_status;

/* The typed GET of the whole collection at argv[1] for a reply function;
 * the caller fills the pend in, then calls whole_go. */
static pend *coll_whole_op(conn *c, char **argv, uint32_t *lens, uint8_t type, reply_fn fn)
{
    if (type == CUDIS_TYPE_HASH) {
        int rc = bighash_whole(c, argv[1], lens[1], &big_bytes);
        if (rc != 0) {
            memset(&big_pend, 0, sizeof(big_pend));
            big_pend.c = c;
            big_pend.fn = fn;
            big_pend.nops = 1;
            big_status = rc < 0 ? rc : CUDIS_OK;
            if (c->track_now && rc > 0) { /* (no pend remembers it) */
                tracking_remember_argv(c, c->cur_cmd, 2, argv, lens);
            }
            return &big_pend;
        }
    }
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, 0, 0, false);
    b->ops[i].type = type;
    return batch_add_pend(b, c, fn, i, 1);
}

static pend *whole_op(conn *c, char **argv, uint32_t *lens, reply_fn fn)
{
    return coll_whole_op(c, argv, lens, CUDIS_TYPE_HASH, fn);
}

/* A pend of whole_op's answered now when it is a big hash's. */
static void whole_go(conn *c, pend *p)
{
    if (p != &big_pend) {
        return;
    }
    cudis_result r = {.status = big_status,
                      .flags = CUDIS_R_FOUND | CUDIS_R_VALUE,
                      .type = CUDIS_TYPE_HASH,
                      .val_len = (uint32_t)big_bytes.len};
    cudis_batch fb = {.res = &r, .n_ops = 1, .out = (uint8_t *)big_bytes.p};
    p->fn(c, p, &fb);
    free(p->aux);
    p->aux = NULL;
    sbuf_free(&big_bytes);
}

enum { HALL_KEYS = 1, HALL_VALS = 2 };

static void rp_hgetall(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    uint32_t cnt = h ? cudis_hash_count(h, n) : 0;
    int what = (int)p->a;
    if (what == (HALL_KEYS | HALL_VALS)) {
        resp_map(&c->out, cnt, c->proto);
    } else {
        resp_array(&c->out, cnt);
    }
    cudis_hentry e;
    COLL_FOREACH(h, n, at, e)
    {
        if (what & HALL_KEYS) {
            resp_bulk(&c->out, e.f, e.flen);
        }
        if (what & HALL_VALS) {
            resp_bulk(&c->out, e.v, e.vlen);
        }
    }
}

static void hall(conn *c, char **argv, uint32_t *lens, int what)
{
    pend *p = whole_op(c, argv, lens, rp_hgetall);
    p->a = what;
    whole_go(c, p);
}

void cmd_hgetall(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    hall(c, argv, lens, HALL_KEYS | HALL_VALS);
}

void cmd_hkeys(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    hall(c, argv, lens, HALL_KEYS);
}

void cmd_hvals(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    hall(c, argv, lens, HALL_VALS);
}

/* HMGET: the fields asked for, as edits (cudis_hash.h HDEL shape), in aux. */
static void rp_hmget(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    uint32_t wlen;
    const uint8_t *want = coll_aux_get(p, &wlen);
    uint32_t k = (uint32_t)p->k;
    cudis_hentry f, e;
    /* the fields asked for in a table (open addressing, a power of two at
     * least twice their number), so one walk of the hash finds them all */
    uint32_t cap = 16;
    while (cap < 2 * k) {
        cap *= 2;
    }
    cudis_hentry *ask = xmalloc(((size_t)k + 1) * sizeof(*ask));
    const cudis_hentry **got = xmalloc(((size_t)k + 1) * sizeof(*got));
    memset(got, 0, ((size_t)k + 1) * sizeof(*got));
    uint32_t *slot = xmalloc((size_t)cap * sizeof(*slot));
    memset(slot, 0xff, (size_t)cap * sizeof(*slot));
    uint32_t m = 0;
    for (uint32_t at = 0; m < k && at < wlen && cudis_hentry_at(want + at, wlen - at, false, &f);
         at += f.size) {
        ask[m] = f;
        uint32_t i = (uint32_t)cudis_hash(f.f, f.flen, 0) & (cap - 1);
        while (slot[i] != UINT32_MAX) {
            i = (i + 1) & (cap - 1);
        }
        slot[i] = m++;
    }
    cudis_hentry *ent = NULL;
    uint32_t nent = 0;
    if (h != NULL) {
        ent = xmalloc((size_t)k * sizeof(*ent) + 1);
        for (uint32_t at = CUDIS_HASH_HDR; at < n && nent < k; at += e.size) {
            if (!cudis_hentry_at(h + at, n - at, true, &e)) {
                break;
            }
            uint32_t i = (uint32_t)cudis_hash(e.f, e.flen, 0) & (cap - 1);
            bool kept = false;
            for (; slot[i] != UINT32_MAX; i = (i + 1) & (cap - 1)) {
                uint32_t j = slot[i];
                if (got[j] == NULL && cudis_bytes_same(ask[j].f, ask[j].flen, e.f, e.flen)) {
                    if (!kept) {
                        ent[nent++] = e;
                        kept = true;
                    }
                    got[j] = &ent[nent - 1]; /* every ask of this field */
                }
            }
        }
    }
    resp_array(&c->out, k);
    for (uint32_t j = 0; j < k; j++) {
        if (j < m && got[j] != NULL) {
            resp_bulk(&c->out, got[j]->v, got[j]->vlen);
        } else {
            resp_null(&c->out, c->proto);
        }
    }
    free(ent);
    free(slot);
    free(got);
    free(ask);
}

void cmd_hmget(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (bighash_cmd(c, BH_HMGET, argc, argv, lens)) {
        return;
    }
    sbuf want = {0};
    coll_edits(&want, argc, argv, lens, 2, false);
    pend *p = whole_op(c, argv, lens, rp_hmget);
    coll_aux_bytes(p, want.p, (uint32_t)want.len);
    sbuf_free(&want);
    p->k = argc - 2;
    whole_go(c, p);
}

/* ------------------------------------------------------------------------
 * HRANDFIELD
 * ---------------------------------------------------------------------- */

uint64_t coll_rand64(void)
{
    static __thread uint64_t s[4];
    static __thread bool seeded;
    if (!seeded) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        cudis_rng_seed(s, (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uintptr_t)&seeded);
        seeded = true;
    }
    return cudis_rng_next(s);
}

enum { RF_COUNT = 1, RF_VALUES = 2 };

static void reply_field(conn *c, const cudis_hentry *e, bool vals)
{
    if (vals && c->proto >= 3) {
        resp_array(&c->out, 2);
    }
    resp_bulk(&c->out, e->f, e->flen);
    if (vals) {
        resp_bulk(&c->out, e->v, e->vlen);
    }
}

static void rp_hrandfield(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    long long count = p->a;
    int how = (int)p->b;
    bool vals = how & RF_VALUES;
    uint32_t size = h ? cudis_hash_count(h, n) : 0;
    if (!(how & RF_COUNT)) {
        if (size == 0) {
            resp_null(&c->out, c->proto);
            return;
        }
        count = 1;
    }
    if (size == 0 || count == 0) {
        resp_array(&c->out, 0);
        return;
    }
    /* entry offsets, to pick by index */
    uint32_t *off = xmalloc(size * sizeof(*off));
    uint32_t k = 0;
    cudis_hentry e = {0}; /* each offset was read once: the reads below succeed */
    COLL_FOREACH(h, n, at, e)
    {
        if (k < size) {
            off[k++] = at;
        }
    }
    size = k;
    if (!(how & RF_COUNT)) {
        uint32_t at = off[coll_rand64() % size];
        (void)cudis_hentry_at(h + at, n - at, true, &e);
        resp_bulk(&c->out, e.f, e.flen);
    } else if (count < 0) {
        /* repetitions allowed: -count picks */
        unsigned long long m = (unsigned long long)(-(count + 1)) + 1;
        resp_array(&c->out, (long)(vals && c->proto < 3 ? 2 * m : m));
        for (unsigned long long j = 0; j < m; j++) {
            uint32_t at = off[coll_rand64() % size];
            (void)cudis_hentry_at(h + at, n - at, true, &e);
            reply_field(c, &e, vals);
        }
    } else {
        /* distinct: a partial Fisher-Yates over the offsets */
        uint32_t m = (unsigned long long)count >= size ? size : (uint32_t)count;
        if (m < size) {
            for (uint32_t j = 0; j < m; j++) {
                uint32_t r = j + (uint32_t)(coll_rand64() % (size - j));
                uint32_t t = off[j];
                off[j] = off[r];
                off[r] = t;
            }
        }
        resp_array(&c->out, (long)(vals && c->proto < 3 ? 2 * m : m));
        for (uint32_t j = 0; j < m; j++) {
            (void)cudis_hentry_at(h + off[j], n - off[j], true, &e);
            reply_field(c, &e, vals);
        }
    }
    free(off);
}

void cmd_hrandfield(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long count = 0;
    int how = 0;
    if (argc >= 3) {
        if (!arg_ll(c, argv[2], lens[2], &count)) {
            return;
        }
        how |= RF_COUNT;
        if (count < -COLL_MAX_REPEAT) {
            conn_error(c, "ERR value is out of range");
            return;
        }
        if (argc == 4) {
            if (!util_eq(argv[3], lens[3], "withvalues")) {
                conn_error(c, E_SYNTAX);
                return;
            }
            how |= RF_VALUES;
            if (count < -LONG_MAX / 2) {
                conn_error(c, "ERR value is out of range");
                return;
            }
        } else if (argc > 4) {
            conn_error(c, E_SYNTAX);
            return;
        }
    }
    pend *p = whole_op(c, argv, lens, rp_hrandfield);
    p->a = count;
    p->b = how;
    whole_go(c, p);
}

/* ------------------------------------------------------------------------
 * HSCAN
 * ---------------------------------------------------------------------- */

/* The whole collection in one reply, cursor 0 (as Redis answers its small
 * encodings; COUNT is a hint): fields with their values, or alone. The
 * options' error (Redis reads them once the key is found) is p->b, the
 * MATCH pattern p->aux. */
static void coll_scan_reply(conn *c, pend *p, const uint8_t *h, uint32_t n, bool values)
{
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
        k++;
        if (values) {
            resp_bulk(&items, e.v, e.vlen);
            k++;
        }
    }
    resp_array(&c->out, 2);
    resp_bulks(&c->out, "0");
    resp_array(&c->out, k);
    sbuf_add(&c->out, items.p, items.len);
    sbuf_free(&items);
}

static void rp_scan(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (coll_whole(c, p, b, &h, &n)) {
        coll_scan_reply(c, p, h, n, p->a != 0);
    }
}

/* SCAN-family arguments after the cursor: MATCH pattern (NULL: all) and
 * COUNT, checked as Redis does. Returns NULL, or the error to reply. */
static const char *coll_scan_args(int argc, char **argv, uint32_t *lens, int from, const char **pat,
                                  uint32_t *plen, long long *count)
{
    *pat = NULL;
    *plen = 0;
    *count = 10;
    for (int j = from; j < argc; j++) {
        bool more = j + 1 < argc;
        if (util_eq(argv[j], lens[j], "count") && more) {
            if (!util_str2ll(argv[j + 1], lens[j + 1], count)) {
                return "ERR value is not an integer or out of range";
            }
            if (*count < 1) {
                return E_SYNTAX;
            }
            j++;
        } else if (util_eq(argv[j], lens[j], "match") && more) {
            *pat = argv[j + 1];
            *plen = lens[j + 1];
            j++;
        } else {
            return E_SYNTAX;
        }
    }
    return NULL;
}

/* A SCAN cursor: an unsigned decimal that fits 64 bits. */
static bool coll_scan_cursor(const char *s, uint32_t len)
{
    if (len == 0 || len > 20) {
        return false;
    }
    unsigned long long v = 0;
    for (uint32_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    return true;
}

void coll_scan_cmd(conn *c, int argc, char **argv, uint32_t *lens, uint8_t type)
{
    coll_scan_prepare(c, argc, argv, lens, type, rp_scan);
}

void coll_scan_prepare(conn *c, int argc, char **argv, uint32_t *lens, uint8_t type, reply_fn fn)
{
    if (!coll_scan_cursor(argv[2], lens[2])) {
        conn_error(c, "ERR invalid cursor");
        return;
    }
    const char *pat;
    uint32_t plen;
    long long count;
    const char *err = coll_scan_args(argc, argv, lens, 3, &pat, &plen, &count);
    (void)count; /* a hint: the whole collection comes in one reply */
    pend *p = coll_whole_op(c, argv, lens, type, fn);
    p->a = type == CUDIS_TYPE_HASH; /* fields with their values */
    p->b = (int64_t)(intptr_t)err;
    if (pat != NULL && !(plen == 1 && pat[0] == '*')) {
        coll_aux_bytes(p, pat, plen);
    }
    whole_go(c, p);
}

void cmd_hscan(conn *c, int argc, char **argv, uint32_t *lens)
{
    coll_scan_cmd(c, argc, argv, lens, CUDIS_TYPE_HASH);
}
