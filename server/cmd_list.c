/*
 * cmd_list.c - the list commands. A list is one
 * engine item of type CUDIS_TYPE_LIST in the collections' encoding
 * (common/cudis_hash.h: the elements are fields without values, head
 * first), so LPUSH/RPUSH(X) and LPOP/RPOP are one engine op each (the
 * store splices the value), LLEN is the count op; LRANGE, LINDEX and LPOS
 * read the whole list; LSET, LINSERT, LREM, LTRIM, LMOVE, RPOPLPUSH and
 * LMPOP read, then write, alone between batches. The blocking forms
 * (BLPOP BRPOP BLMPOP BLMOVE BRPOPLPUSH) try the same, key by key, and
 * else wait in blocking.c's queues, which try them again when a key is
 * written. Replies and errors follow Redis 7.0.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

#define RES(b, p, k) (&(b)->res[(p)->op0 + (k)])

static const char *E_SYNTAX = "ERR syntax error";
static const char *E_NOTINT = "ERR value is not an integer or out of range";
static const char *E_POSITIVE = "ERR value is out of range, must be positive";

static uint32_t list_op(batcher *b, uint8_t code, uint16_t flags, const char *key, uint32_t klen,
                        const void *val, uint32_t vlen, int64_t arg, bool write)
{
    uint32_t i = batch_add_op(b, code, flags, key, klen, val, vlen, arg, 0, write);
    b->ops[i].type = CUDIS_TYPE_LIST;
    return i;
}

/* One element as an encoded entry (a field without value). */
static void put_elem(sbuf *e, const void *v, uint32_t len)
{
    uint8_t lb[5];
    sbuf_add(e, lb, cudis_varint_put(lb, len));
    sbuf_add(e, v, len);
    sbuf_add(e, "\0", 1);
}

/* The elements of an encoded list, for the commands that compute on it. */
typedef struct elems {
    const uint8_t **v;
    uint32_t *len;
    uint32_t n;
} elems;

static void elems_of(elems *l, const uint8_t *h, uint32_t n)
{
    uint32_t cnt = h ? cudis_hash_count(h, n) : 0;
    l->v = xmalloc((cnt ? cnt : 1) * sizeof(*l->v));
    l->len = xmalloc((cnt ? cnt : 1) * sizeof(*l->len));
    l->n = 0;
    cudis_hentry e;
    COLL_FOREACH(h, n, at, e)
    {
        if (l->n < cnt) {
            l->v[l->n] = e.f;
            l->len[l->n++] = e.flen;
        }
    }
}

static void elems_free(elems *l)
{
    free(l->v);
    free(l->len);
}

/* Redis's index arithmetic: a negative index counts from the tail. */
static long long norm_index(long long i, uint32_t n)
{
    return i < 0 ? (long long)n + i : i;
}

/* ------------------------------------------------------------------------
 * LPUSH RPUSH LPUSHX RPUSHX LLEN
 * ---------------------------------------------------------------------- */

static void push_generic(conn *c, int argc, char **argv, uint32_t *lens, bool right, bool xx)
{
    sbuf e = {0};
    if (right) {
        for (int j = 2; j < argc; j++) {
            put_elem(&e, argv[j], lens[j]);
        }
    } else { /* each goes to the head in turn: the last ends up first */
        for (int j = argc - 1; j >= 2; j--) {
            put_elem(&e, argv[j], lens[j]);
        }
    }
    batcher *b = &c->lp->b;
    uint16_t f = (uint16_t)((right ? CUDIS_F_RIGHT : 0) | (xx ? CUDIS_F_XX : 0));
    uint32_t i = list_op(b, CUDIS_OP_LPUSH, f, argv[1], lens[1], e.p, (uint32_t)e.len, 0, true);
    batch_add_pend(b, c, coll_rp_num, i, 1);
    sbuf_free(&e);
}

void cmd_lpush(conn *c, int argc, char **argv, uint32_t *lens)
{
    push_generic(c, argc, argv, lens, false, false);
}

void cmd_rpush(conn *c, int argc, char **argv, uint32_t *lens)
{
    push_generic(c, argc, argv, lens, true, false);
}

void cmd_lpushx(conn *c, int argc, char **argv, uint32_t *lens)
{
    push_generic(c, argc, argv, lens, false, true);
}

void cmd_rpushx(conn *c, int argc, char **argv, uint32_t *lens)
{
    push_generic(c, argc, argv, lens, true, true);
}

void cmd_llen(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    batcher *b = &c->lp->b;
    uint32_t i = list_op(b, CUDIS_OP_HLEN, 0, argv[1], lens[1], NULL, 0, 0, false);
    batch_add_pend(b, c, coll_rp_num, i, 1);
}

/* ------------------------------------------------------------------------
 * LPOP RPOP
 * ---------------------------------------------------------------------- */

/* Reply popped entries (as they lay in the list; a tail pop reversed). */
static void reply_popped(conn *c, const uint8_t *v, uint32_t n, bool right, bool array)
{
    elems l = {0};
    uint8_t hdr[4] = {0};
    /* the popped run has no count header: parse it as entries */
    sbuf tmp = {0};
    sbuf_add(&tmp, hdr, 4);
    sbuf_add(&tmp, v, n);
    uint32_t cnt = 0;
    cudis_hentry e;
    COLL_FOREACH((const uint8_t *)tmp.p, (uint32_t)tmp.len, at, e)
    {
        cnt++;
    }
    for (int i = 0; i < 4; i++) {
        tmp.p[i] = (char)(uint8_t)(cnt >> (8 * i));
    }
    elems_of(&l, (const uint8_t *)tmp.p, (uint32_t)tmp.len);
    if (array) {
        resp_array(&c->out, l.n);
    }
    for (uint32_t k = 0; k < l.n; k++) {
        uint32_t i = right ? l.n - 1 - k : k;
        resp_bulk(&c->out, l.v[i], l.len[i]);
        if (!array) {
            break;
        }
    }
    elems_free(&l);
    sbuf_free(&tmp);
}

enum { POP_RIGHT = 1, POP_COUNT = 2, POP_ZERO = 4 };

static void rp_pop(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    int how = (int)p->a;
    if (r->status != CUDIS_OK) {
        reply_engine_error(c, r->status);
    } else if (!(r->flags & CUDIS_R_FOUND)) {
        if (how & POP_COUNT) {
            resp_null_array(&c->out, c->proto);
        } else {
            resp_null(&c->out, c->proto);
        }
    } else if (how & POP_ZERO) {
        resp_array(&c->out, 0); /* LPOP key 0 of a list there */
    } else {
        reply_popped(c, b->out + r->val_off, r->val_len, how & POP_RIGHT, how & POP_COUNT);
    }
}

static void pop_generic(conn *c, int argc, char **argv, uint32_t *lens, bool right)
{
    long long count = 1;
    int how = right ? POP_RIGHT : 0;
    if (argc > 3) {
        conn_errorf(c, "ERR wrong number of arguments for '%s' command", c->cur_cmd->name);
        return;
    }
    if (argc == 3) {
        if (!util_str2ll(argv[2], lens[2], &count) || count < 0) {
            conn_error(c, E_POSITIVE); /* Redis's words for both */
            return;
        }
        how |= POP_COUNT | (count == 0 ? POP_ZERO : 0);
    }
    batcher *b = &c->lp->b;
    uint32_t i = count == 0 ? list_op(b, CUDIS_OP_HLEN, 0, argv[1], lens[1], NULL, 0, 0, false)
                            : list_op(b, CUDIS_OP_LPOP, right ? CUDIS_F_RIGHT : 0, argv[1], lens[1],
                                      NULL, 0, count, true);
    batch_add_pend(b, c, rp_pop, i, 1)->a = how;
}

void cmd_lpop(conn *c, int argc, char **argv, uint32_t *lens)
{
    pop_generic(c, argc, argv, lens, false);
}

void cmd_rpop(conn *c, int argc, char **argv, uint32_t *lens)
{
    pop_generic(c, argc, argv, lens, true);
}

/* ------------------------------------------------------------------------
 * LRANGE LINDEX LPOS (whole-list reads)
 * ---------------------------------------------------------------------- */

static pend *whole_list(conn *c, char **argv, uint32_t *lens, reply_fn fn)
{
    batcher *b = &c->lp->b;
    uint32_t i = list_op(b, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, 0, false);
    return batch_add_pend(b, c, fn, i, 1);
}

static void rp_lrange(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    elems l;
    elems_of(&l, h, n);
    long long start = norm_index(p->a, l.n), end = norm_index(p->b, l.n);
    if (start < 0) {
        start = 0;
    }
    if (start > end || start >= (long long)l.n) {
        resp_array(&c->out, 0);
    } else {
        if (end >= (long long)l.n) {
            end = (long long)l.n - 1;
        }
        resp_array(&c->out, (long)(end - start + 1));
        for (long long i = start; i <= end; i++) {
            resp_bulk(&c->out, l.v[i], l.len[i]);
        }
    }
    elems_free(&l);
}

void cmd_lrange(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    long long s, e;
    if (!util_str2ll(argv[2], lens[2], &s) || !util_str2ll(argv[3], lens[3], &e)) {
        conn_error(c, E_NOTINT);
        return;
    }
    pend *p = whole_list(c, argv, lens, rp_lrange);
    p->a = s;
    p->b = e;
}

static void rp_lindex(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    elems l;
    elems_of(&l, h, n);
    long long i = norm_index(p->a, l.n);
    if (i < 0 || i >= (long long)l.n) {
        resp_null(&c->out, c->proto);
    } else {
        resp_bulk(&c->out, l.v[i], l.len[i]);
    }
    elems_free(&l);
}

void cmd_lindex(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    long long i;
    if (!util_str2ll(argv[2], lens[2], &i)) {
        conn_error(c, E_NOTINT);
        return;
    }
    whole_list(c, argv, lens, rp_lindex)->a = i;
}

/* LPOS: rank in a, count in b (-1: no COUNT), maxlen in k; the element in aux. */
static void rp_lpos(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *h;
    uint32_t n;
    if (!coll_whole(c, p, b, &h, &n)) {
        return;
    }
    uint32_t wl;
    const uint8_t *w = coll_aux_get(p, &wl);
    elems l;
    elems_of(&l, h, n);
    long long rank = p->a, count = p->b, maxlen = p->k;
    long long want = rank < 0 ? -rank : rank, seen = 0, found = 0;
    sbuf out = {0};
    for (uint32_t k = 0; k < l.n && (maxlen == 0 || k < (uint64_t)maxlen); k++) {
        uint32_t i = rank < 0 ? l.n - 1 - k : k;
        if (l.len[i] == wl && memcmp(l.v[i], w, wl) == 0 && ++seen >= want) {
            sbuf_printf(&out, ":%u\r\n", i);
            found++;
            if (count != 0 && found >= (count < 0 ? 1 : count)) {
                break;
            }
        }
    }
    if (count < 0) { /* no COUNT: the first match or nil */
        if (found) {
            sbuf_add(&c->out, out.p, out.len);
        } else {
            resp_null(&c->out, c->proto);
        }
    } else {
        resp_array(&c->out, (long)found);
        sbuf_add(&c->out, out.p, out.len);
    }
    sbuf_free(&out);
    elems_free(&l);
}

void cmd_lpos(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long rank = 1, count = -1, maxlen = 0;
    for (int j = 3; j < argc; j += 2) { /* option, value */
        bool more = j + 1 < argc;
        long long v;
        if (!more) {
            conn_error(c, E_SYNTAX);
            return;
        }
        if (!util_str2ll(argv[j + 1], lens[j + 1], &v)) {
            conn_error(c, E_NOTINT);
            return;
        }
        if (util_eq(argv[j], lens[j], "rank")) {
            if (v == 0) {
                conn_error(c, "ERR RANK can't be zero: use 1 to start from the first match, 2 "
                              "from the second ... or use negative to start from the end of the "
                              "list");
                return;
            }
            if (v == LLONG_MIN) {
                conn_error(c, "ERR value is out of range");
                return;
            }
            rank = v;
        } else if (util_eq(argv[j], lens[j], "count")) {
            if (v < 0) {
                conn_error(c, "ERR COUNT can't be negative");
                return;
            }
            count = v;
        } else if (util_eq(argv[j], lens[j], "maxlen")) {
            if (v < 0) {
                conn_error(c, "ERR MAXLEN can't be negative");
                return;
            }
            maxlen = v;
        } else {
            conn_error(c, E_SYNTAX);
            return;
        }
    }
    pend *p = whole_list(c, argv, lens, rp_lpos);
    p->a = rank;
    p->b = count;
    p->k = (int32_t)(maxlen > INT32_MAX ? INT32_MAX : maxlen);
    coll_aux_bytes(p, argv[2], lens[2]);
}

/* ------------------------------------------------------------------------
 * Read-modify-write commands (alone)
 * ---------------------------------------------------------------------- */

/* Read key's list alone: 1 with its elements copied into *l / *store, 0
 * missing, -1 an error replied. */
static int read_list(conn *c, const char *key, uint32_t klen, elems *l, sbuf *store)
{
    batcher *b = &c->lp->b;
    list_op(b, CUDIS_OP_GET, 0, key, klen, NULL, 0, 0, false);
    run_alone(c);
    cudis_result r = b->res[0];
    if (r.status != CUDIS_OK) {
        batch_reset(b);
        reply_engine_error(c, r.status);
        return -1;
    }
    if (!(r.flags & CUDIS_R_VALUE)) {
        batch_reset(b);
        return 0;
    }
    sbuf_add(store, b->out + r.val_off, r.val_len);
    batch_reset(b);
    elems_of(l, (const uint8_t *)store->p, (uint32_t)store->len);
    return 1;
}

/* Write key as the list of the n elements v[i] (keeping its TTL; none: the
 * key goes), alone, sending `event` (and "del" when emptied). */
static int write_list(conn *c, const char *key, uint32_t klen, const uint8_t *const *v,
                      const uint32_t *len, uint32_t n, const char *event)
{
    batcher *b = &c->lp->b;
    uint8_t ev = b->ev;
    b->ev = KEV_QUIET;
    if (n == 0) {
        batch_add_op(b, CUDIS_OP_DEL, 0, key, klen, NULL, 0, 0, 0, true);
    } else {
        sbuf e = {0};
        uint8_t cnt[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
        sbuf_add(&e, cnt, 4);
        for (uint32_t i = 0; i < n; i++) {
            put_elem(&e, v[i], len[i]);
        }
        uint32_t i = batch_add_op(b, CUDIS_OP_SET, CUDIS_F_KEEPTTL, key, klen, e.p, (uint32_t)e.len,
                                  0, 0, true);
        b->ops[i].type = CUDIS_TYPE_LIST;
        sbuf_free(&e);
    }
    b->ev = ev;
    run_alone(c);
    int st = b->res[0].status;
    batch_reset(b);
    if (st == CUDIS_OK) {
        if (event != NULL) {
            keyspace_notify(c->lp, NOTIFY_LIST, event, b->db, key, klen);
        }
        if (n == 0) {
            keyspace_notify(c->lp, NOTIFY_GENERIC, "del", b->db, key, klen);
        }
    }
    return st;
}

void cmd_lset(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    long long idx;
    if (!util_str2ll(argv[2], lens[2], &idx)) {
        conn_error(c, E_NOTINT);
        return;
    }
    elems l = {0};
    sbuf store = {0};
    int got = read_list(c, argv[1], lens[1], &l, &store);
    if (got == 0) {
        conn_error(c, "ERR no such key");
    } else if (got > 0) {
        long long i = norm_index(idx, l.n);
        if (i < 0 || i >= (long long)l.n) {
            conn_error(c, "ERR index out of range");
        } else {
            l.v[i] = (const uint8_t *)argv[3];
            l.len[i] = lens[3];
            int st = write_list(c, argv[1], lens[1], l.v, l.len, l.n, "lset");
            if (st != CUDIS_OK) {
                reply_engine_error(c, st);
            } else {
                reply_ok(c);
            }
        }
        elems_free(&l);
    }
    sbuf_free(&store);
}

void cmd_linsert(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    bool after;
    if (util_eq(argv[2], lens[2], "after")) {
        after = true;
    } else if (util_eq(argv[2], lens[2], "before")) {
        after = false;
    } else {
        conn_error(c, E_SYNTAX);
        return;
    }
    elems l = {0};
    sbuf store = {0};
    int got = read_list(c, argv[1], lens[1], &l, &store);
    if (got == 0) {
        resp_int(&c->out, 0);
    } else if (got > 0) {
        uint32_t at = UINT32_MAX;
        for (uint32_t i = 0; i < l.n && at == UINT32_MAX; i++) {
            if (l.len[i] == lens[3] && memcmp(l.v[i], argv[3], lens[3]) == 0) {
                at = after ? i + 1 : i;
            }
        }
        if (at == UINT32_MAX) {
            resp_int(&c->out, -1);
        } else {
            const uint8_t **v = xmalloc((l.n + 1) * sizeof(*v));
            uint32_t *len = xmalloc((l.n + 1) * sizeof(*len));
            for (uint32_t i = 0, k = 0; i <= l.n; i++) {
                if (i == at) {
                    v[i] = (const uint8_t *)argv[4];
                    len[i] = lens[4];
                } else {
                    v[i] = l.v[k];
                    len[i] = l.len[k++];
                }
            }
            int st = write_list(c, argv[1], lens[1], v, len, l.n + 1, "linsert");
            if (st != CUDIS_OK) {
                reply_engine_error(c, st);
            } else {
                resp_int(&c->out, (long long)l.n + 1);
            }
            free(v);
            free(len);
        }
        elems_free(&l);
    }
    sbuf_free(&store);
}

void cmd_lrem(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    long long count;
    if (!util_str2ll(argv[2], lens[2], &count)) {
        conn_error(c, E_NOTINT);
        return;
    }
    elems l = {0};
    sbuf store = {0};
    int got = read_list(c, argv[1], lens[1], &l, &store);
    if (got == 0) {
        resp_int(&c->out, 0);
    } else if (got > 0) {
        bool *drop = xcalloc(l.n ? l.n : 1, sizeof(*drop));
        unsigned long long limit = count == 0  ? ULLONG_MAX
                                   : count < 0 ? (unsigned long long)(-(count + 1)) + 1
                                               : (unsigned long long)count;
        unsigned long long removed = 0;
        for (uint32_t k = 0; k < l.n && removed < limit; k++) {
            uint32_t i = count < 0 ? l.n - 1 - k : k;
            if (l.len[i] == lens[3] && memcmp(l.v[i], argv[3], lens[3]) == 0) {
                drop[i] = true;
                removed++;
            }
        }
        uint32_t m = 0;
        for (uint32_t i = 0; i < l.n; i++) {
            if (!drop[i]) {
                l.v[m] = l.v[i];
                l.len[m++] = l.len[i];
            }
        }
        int st = removed ? write_list(c, argv[1], lens[1], l.v, l.len, m, "lrem") : CUDIS_OK;
        if (st != CUDIS_OK) {
            reply_engine_error(c, st);
        } else {
            resp_int(&c->out, (long long)removed);
        }
        free(drop);
        elems_free(&l);
    }
    sbuf_free(&store);
}

void cmd_ltrim(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    long long s, e;
    if (!util_str2ll(argv[2], lens[2], &s) || !util_str2ll(argv[3], lens[3], &e)) {
        conn_error(c, E_NOTINT);
        return;
    }
    elems l = {0};
    sbuf store = {0};
    int got = read_list(c, argv[1], lens[1], &l, &store);
    if (got == 0) {
        reply_ok(c);
    } else if (got > 0) {
        long long start = norm_index(s, l.n), end = norm_index(e, l.n);
        if (start < 0) {
            start = 0;
        }
        if (end >= (long long)l.n) {
            end = (long long)l.n - 1;
        }
        uint32_t m = start > end || start >= (long long)l.n ? 0 : (uint32_t)(end - start + 1);
        int st = CUDIS_OK;
        if (m != l.n) {
            st = write_list(c, argv[1], lens[1], l.v + (m ? start : 0), l.len + (m ? start : 0), m,
                            "ltrim");
        } else {
            keyspace_notify(c->lp, NOTIFY_LIST, "ltrim", c->lp->b.db, argv[1], lens[1]);
        }
        if (st != CUDIS_OK) {
            reply_engine_error(c, st);
        } else {
            reply_ok(c);
        }
        elems_free(&l);
    }
    sbuf_free(&store);
}

/* ------------------------------------------------------------------------
 * LMOVE RPOPLPUSH LMPOP (alone)
 * ---------------------------------------------------------------------- */

/* The events of a pop (and of the key's removal when it emptied). */
static void notify_pop(conn *c, const char *key, uint32_t klen, bool right, bool gone)
{
    uint8_t db = c->lp->b.db;
    keyspace_notify(c->lp, NOTIFY_LIST, right ? "rpop" : "lpop", db, key, klen);
    if (gone) {
        keyspace_notify(c->lp, NOTIFY_GENERIC, "del", db, key, klen);
    }
}

/* Pop up to count from key's end, alone and quietly: the engine status;
 * the popped entries (in list order) appended to out, their number in *n,
 * whether the key went in *gone (for the caller's notify_pop). */
static int pop_quiet(conn *c, const char *key, uint32_t klen, bool right, long long count,
                     sbuf *out, long long *n, bool *gone)
{
    batcher *b = &c->lp->b;
    uint8_t ev = b->ev;
    b->ev = KEV_QUIET;
    list_op(b, CUDIS_OP_LPOP, right ? CUDIS_F_RIGHT : 0, key, klen, NULL, 0, count, true);
    b->ev = ev;
    run_alone(c);
    cudis_result r = b->res[0];
    if (r.status == CUDIS_OK && (r.flags & CUDIS_R_VALUE)) {
        sbuf_add(out, b->out + r.val_off, r.val_len);
    }
    batch_reset(b);
    *n = r.status == CUDIS_OK ? (long long)r.num : 0;
    *gone = r.status == CUDIS_OK && (r.flags & CUDIS_R_GONE);
    return r.status;
}

/* pop_quiet that replies an error (-1) and notifies at once when gone is
 * NULL. */
static long long pop_alone(conn *c, const char *key, uint32_t klen, bool right, long long count,
                           sbuf *out, bool *gone)
{
    long long n;
    bool went;
    int st = pop_quiet(c, key, klen, right, count, out, &n, &went);
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
        return -1;
    }
    if (gone != NULL) {
        *gone = went;
    } else if (n > 0) {
        notify_pop(c, key, klen, right, went);
    }
    return n;
}

/* The type check LMOVE makes of both keys first: the engine status of the
 * source (CUDIS_OK with *src_found), else of the destination. */
static int check_lists(conn *c, const char *src, uint32_t slen, const char *dst, uint32_t dlen,
                       bool *src_found)
{
    batcher *b = &c->lp->b;
    list_op(b, CUDIS_OP_HLEN, 0, src, slen, NULL, 0, 0, false);
    list_op(b, CUDIS_OP_HLEN, 0, dst, dlen, NULL, 0, 0, false);
    run_alone(c);
    cudis_result s = b->res[0], d = b->res[1];
    batch_reset(b);
    *src_found = s.status == CUDIS_OK && (s.flags & CUDIS_R_FOUND);
    if (s.status == CUDIS_OK && !*src_found) {
        return CUDIS_OK;
    }
    return s.status != CUDIS_OK ? s.status : d.status;
}

/* LMOVE of src's end to dst's: BLK_EMPTY (src missing, nothing replied),
 * BLK_WRONGTYPE (src is no list, nothing replied), else BLK_SERVED with
 * the reply (the element, or an error such as dst's WRONGTYPE). */
static int lmove_try(conn *c, const char *src, uint32_t slen, const char *dst, uint32_t dlen,
                     bool from_right, bool to_right)
{
    bool found;
    int st = check_lists(c, src, slen, dst, dlen, &found);
    if (st == CUDIS_OK && !found) {
        return BLK_EMPTY;
    }
    if (st != CUDIS_OK) {
        if (st == CUDIS_E_WRONGTYPE && !found) {
            return BLK_WRONGTYPE;
        }
        reply_engine_error(c, st);
        return BLK_SERVED;
    }
    sbuf popped = {0};
    bool gone = false;
    if (pop_alone(c, src, slen, from_right, 1, &popped, &gone) < 0) {
        sbuf_free(&popped);
        return BLK_SERVED;
    }
    batcher *b = &c->lp->b;
    uint8_t ev = b->ev;
    b->ev = KEV_QUIET;
    list_op(b, CUDIS_OP_LPUSH, to_right ? CUDIS_F_RIGHT : 0, dst, dlen, popped.p,
            (uint32_t)popped.len, 0, true);
    b->ev = ev;
    run_alone(c);
    st = b->res[0].status;
    batch_reset(b);
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
    } else {
        /* Redis's order: the push, then the pop */
        keyspace_notify(c->lp, NOTIFY_LIST, to_right ? "rpush" : "lpush", b->db, dst, dlen);
        notify_pop(c, src, slen, from_right, gone);
        cudis_hentry e;
        if (cudis_hentry_at((const uint8_t *)popped.p, (uint32_t)popped.len, true, &e)) {
            resp_bulk(&c->out, e.f, e.flen);
        } else {
            resp_null(&c->out, c->proto); /* not reached: the pop returned one entry */
        }
    }
    sbuf_free(&popped);
    return BLK_SERVED;
}

static void lmove_generic(conn *c, char **argv, uint32_t *lens, bool from_right, bool to_right)
{
    int r = lmove_try(c, argv[1], lens[1], argv[2], lens[2], from_right, to_right);
    if (r == BLK_EMPTY) {
        resp_null(&c->out, c->proto);
    } else if (r == BLK_WRONGTYPE) {
        reply_engine_error(c, CUDIS_E_WRONGTYPE);
    }
}

static bool side(const char *s, uint32_t len, bool *right)
{
    if (util_eq(s, len, "left")) {
        *right = false;
    } else if (util_eq(s, len, "right")) {
        *right = true;
    } else {
        return false;
    }
    return true;
}

void cmd_lmove(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    bool from, to;
    if (!side(argv[3], lens[3], &from) || !side(argv[4], lens[4], &to)) {
        conn_error(c, E_SYNTAX);
        return;
    }
    lmove_generic(c, argv, lens, from, to);
}

void cmd_rpoplpush(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    lmove_generic(c, argv, lens, true, false);
}

/* LMPOP's numkeys, keys, LEFT|RIGHT [COUNT n] from argv[nk_at]: false
 * with the error replied. */
static bool mpop_args(conn *c, int argc, char **argv, uint32_t *lens, int nk_at, long long *numkeys,
                      bool *right, long long *count)
{
    *count = 1;
    if (!util_str2ll(argv[nk_at], lens[nk_at], numkeys) || *numkeys <= 0 || *numkeys > INT_MAX) {
        conn_error(c, "ERR numkeys should be greater than 0");
        return false;
    }
    long long at = nk_at + 1 + *numkeys;
    if (at >= argc || !side(argv[at], lens[at], right)) {
        conn_error(c, E_SYNTAX);
        return false;
    }
    bool counted = false;
    for (int j = (int)at + 1; j < argc; j++) {
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

/* What LMPOP (and BLPOP, BLMPOP) answer for a pop from key: [key, elems]
 * (as_array) or [key, elem]. */
static void reply_keyed_pop(conn *c, const char *key, uint32_t klen, const sbuf *popped, bool right,
                            bool as_array)
{
    resp_array(&c->out, 2);
    resp_bulk(&c->out, key, klen);
    reply_popped(c, (const uint8_t *)popped->p, (uint32_t)popped->len, right, as_array);
}

void cmd_lmpop(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long numkeys, count;
    bool right;
    if (!mpop_args(c, argc, argv, lens, 1, &numkeys, &right, &count)) {
        return;
    }
    for (int k = 0; k < numkeys; k++) {
        sbuf popped = {0};
        long long n = pop_alone(c, argv[2 + k], lens[2 + k], right, count, &popped, NULL);
        if (n < 0) {
            sbuf_free(&popped);
            return;
        }
        if (n > 0) {
            reply_keyed_pop(c, argv[2 + k], lens[2 + k], &popped, right, true);
            sbuf_free(&popped);
            return;
        }
        sbuf_free(&popped);
    }
    resp_null_array(&c->out, c->proto);
}

/* ------------------------------------------------------------------------
 * BLPOP BRPOP BLMPOP BLMOVE BRPOPLPUSH (blocking.c keeps the waiters)
 * ---------------------------------------------------------------------- */

/* A pop from key for a blocked (or blocking) BLPOP, BRPOP or BLMPOP. */
static int serve_pop(conn *c, const blk_state *s, const char *key, uint32_t klen)
{
    sbuf popped = {0};
    long long n;
    bool gone;
    int st = pop_quiet(c, key, klen, s->right, s->count, &popped, &n, &gone);
    int r = BLK_SERVED;
    if (st == CUDIS_E_WRONGTYPE) {
        r = BLK_WRONGTYPE;
    } else if (st != CUDIS_OK) {
        reply_engine_error(c, st); /* the engine failed: that is the answer */
    } else if (n == 0) {
        r = BLK_EMPTY;
    } else {
        notify_pop(c, key, klen, s->right, gone);
        reply_keyed_pop(c, key, klen, &popped, s->right, s->mpop);
    }
    sbuf_free(&popped);
    return r;
}

/* BLMOVE's move from key (its source) to the destination. */
static int serve_move(conn *c, const blk_state *s, const char *key, uint32_t klen)
{
    return lmove_try(c, key, klen, s->argv[2], s->lens[2], s->right, s->to_right);
}

static void bpop_generic(conn *c, int argc, char **argv, uint32_t *lens, bool right)
{
    int64_t deadline;
    if (!blocking_timeout_arg(c, argv[argc - 1], lens[argc - 1], &deadline)) {
        return;
    }
    blk_state *s = blocking_state(argc, argv, lens, 1, argc - 2);
    s->serve = serve_pop;
    s->null_array = true;
    s->right = right;
    s->count = 1;
    blocking_try(c, s, deadline);
}

void cmd_blpop(conn *c, int argc, char **argv, uint32_t *lens)
{
    bpop_generic(c, argc, argv, lens, false);
}

void cmd_brpop(conn *c, int argc, char **argv, uint32_t *lens)
{
    bpop_generic(c, argc, argv, lens, true);
}

void cmd_blmpop(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long numkeys, count;
    bool right;
    int64_t deadline;
    if (!mpop_args(c, argc, argv, lens, 2, &numkeys, &right, &count) ||
        !blocking_timeout_arg(c, argv[1], lens[1], &deadline)) {
        return;
    }
    blk_state *s = blocking_state(argc, argv, lens, 3, (int)numkeys);
    s->serve = serve_pop;
    s->null_array = true;
    s->right = right;
    s->count = count;
    s->mpop = true;
    blocking_try(c, s, deadline);
}

static void bmove_generic(conn *c, int argc, char **argv, uint32_t *lens, bool from, bool to)
{
    int64_t deadline;
    if (!blocking_timeout_arg(c, argv[argc - 1], lens[argc - 1], &deadline)) {
        return;
    }
    blk_state *s = blocking_state(argc, argv, lens, 1, 1);
    s->serve = serve_move;
    s->null_array = true; /* Redis 7.0 times a list block out with a null array */
    s->right = from;
    s->to_right = to;
    blocking_try(c, s, deadline);
}

void cmd_blmove(conn *c, int argc, char **argv, uint32_t *lens)
{
    bool from, to;
    if (!side(argv[3], lens[3], &from) || !side(argv[4], lens[4], &to)) {
        conn_error(c, E_SYNTAX);
        return;
    }
    bmove_generic(c, argc, argv, lens, from, to);
}

void cmd_brpoplpush(conn *c, int argc, char **argv, uint32_t *lens)
{
    bmove_generic(c, argc, argv, lens, true, false);
}
