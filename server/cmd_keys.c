/*
 * cmd_keys.c - the key commands (strings, expiry, generic keyspace). Most
 * become ops in the loop's open batch and reply when the batch has run;
 * the multi-step and keyspace-wide ones (MSETNX, INCRBYFLOAT, RENAME, KEYS,
 * SCAN, RANDOMKEY, DBSIZE, FLUSH*) run alone between batches. Replies and
 * errors follow Redis 7.0 word for word.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_time.h"
#include "server_internal.h"

#define RES(b, p, k) (&(b)->res[(p)->op0 + (k)])

static const char *E_NOTINT = "ERR value is not an integer or out of range";
static const char *E_SYNTAX = "ERR syntax error";
static const char *E_BIGSTR = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/* ------------------------------------------------------------------------
 * Helpers
 * ---------------------------------------------------------------------- */

bool arg_ll(conn *c, const char *s, uint32_t len, long long *out)
{
    if (!util_str2ll(s, len, out)) {
        conn_error(c, E_NOTINT);
        return false;
    }
    return true;
}

void reply_ok(conn *c)
{
    sbuf_add(&c->out, "+OK\r\n", 5);
}

void reply_engine_error(conn *c, int status)
{
    switch (status) {
    case CUDIS_E_NOTINT: conn_error(c, E_NOTINT); break;
    case CUDIS_E_OVERFLOW: conn_error(c, "ERR increment or decrement would overflow"); break;
    case CUDIS_E_VALTOOBIG: conn_error(c, E_BIGSTR); break;
    case CUDIS_E_KEYTOOBIG: conn_error(c, "ERR key is too long for the engine"); break;
    case CUDIS_E_EMPTYKEY: conn_error(c, "ERR empty keys are not supported by the engine"); break;
    case CUDIS_E_NOFIT: conn_error(c, "OOM the value is larger than 'maxmemory' can hold"); break;
    case CUDIS_E_WRONGTYPE:
        conn_error(c, "WRONGTYPE Operation against a key holding the wrong kind of value");
        break;
    case CUDIS_E_NAN: conn_error(c, "ERR resulting score is not a number (NaN)"); break;
    case CUDIS_E_FULL:
    case CUDIS_E_NOMEM:
        conn_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
        break;
    case CUDIS_E_DEVFAIL: {
        const char *why = engine_failure(srv.eng);
        conn_errorf(c, "ERR %s", why ? why : "the engine's device failed");
        break;
    }
    default: conn_errorf(c, "ERR engine error: %s", cudis_strerror(status)); break;
    }
}

/* One op on argv[1], queued with its reply function. (The dispatcher has
 * already sealed the open batch if the command's keys conflict with it.) */
static pend *queue1(conn *c, uint8_t code, uint16_t flags, char **argv, uint32_t *lens,
                    const char *val, uint32_t vlen, int64_t arg, int64_t exp, bool write,
                    reply_fn fn)
{
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, code, flags, argv[1], lens[1], val, vlen, arg, exp, write);
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

static void reply_value(conn *c, const cudis_batch *b, const cudis_result *r)
{
    if (r->flags & CUDIS_R_VALUE) {
        resp_bulk(&c->out, b->out + r->val_off, r->val_len);
    } else {
        resp_null(&c->out, c->proto);
    }
}

/* Run ops already in the (drained) batch right now; the dispatcher holds
 * the engine lock for CMD_EXCL commands. */
int run_alone(conn *c)
{
    batcher *b = &c->lp->b;
    return batch_exec(b, srv.eng, cudis_now_ms());
}

/* ------------------------------------------------------------------------
 * GET family
 * ---------------------------------------------------------------------- */

static void rp_get(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (!res_failed(c, r)) {
        reply_value(c, b, r);
    }
}

void cmd_get(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    queue1(c, CUDIS_OP_GET, 0, argv, lens, NULL, 0, 0, 0, false, rp_get);
}

void cmd_getdel(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    c->lp->b.ev = KEV_READ; /* a miss is a keymiss, as for GET */
    queue1(c, CUDIS_OP_GET, CUDIS_F_DEL, argv, lens, NULL, 0, 0, 0, true, rp_get);
}

static void rp_strlen(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (!res_failed(c, r)) {
        resp_int(&c->out, (r->flags & CUDIS_R_VALUE) ? r->val_len : 0);
    }
}

void cmd_strlen(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    queue1(c, CUDIS_OP_GET, 0, argv, lens, NULL, 0, 0, 0, false, rp_strlen);
}

static void rp_getrange(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (res_failed(c, r)) {
        return;
    }
    long long start = p->a, end = p->b;
    if (!(r->flags & CUDIS_R_VALUE)) {
        sbuf_add(&c->out, "$0\r\n\r\n", 6);
        return;
    }
    long long len = r->val_len;
    if (start < 0) {
        start = len + start;
    }
    if (end < 0) {
        end = len + end;
    }
    if (start < 0) {
        start = 0;
    }
    if (end < 0) {
        end = 0;
    }
    if (end >= len) {
        end = len - 1;
    }
    if (start > end || len == 0) {
        sbuf_add(&c->out, "$0\r\n\r\n", 6);
        return;
    }
    resp_bulk(&c->out, b->out + r->val_off + start, (size_t)(end - start + 1));
}

void cmd_getrange(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    long long start, end;
    if (!arg_ll(c, argv[2], lens[2], &start) || !arg_ll(c, argv[3], lens[3], &end)) {
        return;
    }
    if (start < 0 && end < 0 && start > end) {
        sbuf_add(&c->out, "$0\r\n\r\n", 6);
        return;
    }
    pend *p = queue1(c, CUDIS_OP_GET, 0, argv, lens, NULL, 0, 0, 0, false, rp_getrange);
    p->a = start;
    p->b = end;
}

static void rp_mget(conn *c, pend *p, const cudis_batch *b);
static void rp_mget_fwd(conn *c, pend *p, const cudis_batch *b)
{
    rp_mget(c, p, b);
}

void cmd_mget(conn *c, int argc, char **argv, uint32_t *lens)
{
    batcher *b = &c->lp->b;
    uint32_t op0 = b->nops;
    for (int i = 1; i < argc; i++) {
        batch_add_op(b, CUDIS_OP_GET, 0, argv[i], lens[i], NULL, 0, 0, 0, false);
    }
    if (argc > 2) {
        b->exclusive = true;
    }
    batch_add_pend(b, c, rp_mget_fwd, op0, (uint32_t)(argc - 1));
}

static void rp_mget(conn *c, pend *p, const cudis_batch *b)
{
    resp_array(&c->out, p->nops);
    for (uint32_t k = 0; k < p->nops; k++) {
        const cudis_result *r = RES(b, p, k);
        if (r->status == CUDIS_OK && (r->flags & CUDIS_R_VALUE)) {
            resp_bulk(&c->out, b->out + r->val_off, r->val_len);
        } else {
            resp_null(&c->out, c->proto);
        }
    }
}

/* ------------------------------------------------------------------------
 * SET family
 * ---------------------------------------------------------------------- */

enum { SETF_NX = 1, SETF_XX = 2, SETF_GET = 4, SETF_KEEPTTL = 8, SETF_PERSIST = 16, SETF_EX = 32,
       SETF_PX = 64, SETF_EXAT = 128, SETF_PXAT = 256 };
#define SETF_ANYEXP (SETF_EX | SETF_PX | SETF_EXAT | SETF_PXAT)

/* Redis's parseExtendedStringArgumentsOrReply + getExpireMillisecondsOrReply.
 * is_set: SET (NX XX GET KEEPTTL) vs GETEX (PERSIST). Returns false after
 * replying an error. *exp_ms = absolute expiry or 0. */
static bool parse_set_opts(conn *c, int argc, char **argv, uint32_t *lens, int from, bool is_set,
                           int *flags, int64_t *exp_ms)
{
    int f = 0;
    int exp_i = -1;
    for (int j = from; j < argc; j++) {
        const char *o = argv[j];
        uint32_t n = lens[j];
        bool next = j + 1 < argc;
        if (util_eq(o, n, "nx") && !(f & SETF_XX) && is_set) {
            f |= SETF_NX;
        } else if (util_eq(o, n, "xx") && !(f & SETF_NX) && is_set) {
            f |= SETF_XX;
        } else if (util_eq(o, n, "get") && is_set) {
            f |= SETF_GET;
        } else if (util_eq(o, n, "keepttl") && !(f & SETF_PERSIST) && !(f & SETF_ANYEXP) &&
                   is_set) {
            f |= SETF_KEEPTTL;
        } else if (util_eq(o, n, "persist") && !is_set && !(f & SETF_ANYEXP) &&
                   !(f & SETF_KEEPTTL)) {
            f |= SETF_PERSIST;
        } else if (util_eq(o, n, "ex") && !(f & SETF_KEEPTTL) && !(f & SETF_PERSIST) &&
                   !(f & SETF_EXAT) && !(f & SETF_PX) && !(f & SETF_PXAT) && next) {
            f |= SETF_EX;
            exp_i = ++j;
        } else if (util_eq(o, n, "px") && !(f & SETF_KEEPTTL) && !(f & SETF_PERSIST) &&
                   !(f & SETF_EX) && !(f & SETF_EXAT) && !(f & SETF_PXAT) && next) {
            f |= SETF_PX;
            exp_i = ++j;
        } else if (util_eq(o, n, "exat") && !(f & SETF_KEEPTTL) && !(f & SETF_PERSIST) &&
                   !(f & SETF_EX) && !(f & SETF_PX) && !(f & SETF_PXAT) && next) {
            f |= SETF_EXAT;
            exp_i = ++j;
        } else if (util_eq(o, n, "pxat") && !(f & SETF_KEEPTTL) && !(f & SETF_PERSIST) &&
                   !(f & SETF_EX) && !(f & SETF_EXAT) && !(f & SETF_PX) && next) {
            f |= SETF_PXAT;
            exp_i = ++j;
        } else {
            conn_error(c, E_SYNTAX);
            return false;
        }
    }
    *flags = f;
    *exp_ms = 0;
    if (exp_i >= 0) {
        long long ms;
        if (!arg_ll(c, argv[exp_i], lens[exp_i], &ms)) {
            return false;
        }
        bool secs = (f & (SETF_EX | SETF_EXAT)) != 0;
        if (ms <= 0 || (secs && ms > LLONG_MAX / 1000)) {
            conn_errorf(c, "ERR invalid expire time in '%s' command", cmd_fullname(c->cur_cmd));
            return false;
        }
        if (secs) {
            ms *= 1000;
        }
        if (f & (SETF_EX | SETF_PX)) {
            int64_t now = cudis_now_ms();
            if (ms > LLONG_MAX - now) {
                conn_errorf(c, "ERR invalid expire time in '%s' command", cmd_fullname(c->cur_cmd));
                return false;
            }
            ms += now;
        }
        *exp_ms = ms;
    }
    return true;
}

static void rp_set(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (res_failed(c, r)) {
        return;
    }
    if (p->a & SETF_GET) {
        reply_value(c, b, r);
    } else if (r->flags & CUDIS_R_DONE) {
        reply_ok(c);
    } else {
        resp_null(&c->out, c->proto);
    }
}

static uint16_t op_set_flags(int f)
{
    uint16_t o = 0;
    if (f & SETF_NX) {
        o |= CUDIS_F_NX;
    }
    if (f & SETF_XX) {
        o |= CUDIS_F_XX;
    }
    if (f & SETF_GET) {
        o |= CUDIS_F_GET;
    }
    if (f & SETF_KEEPTTL) {
        o |= CUDIS_F_KEEPTTL;
    }
    return o;
}

void cmd_set(conn *c, int argc, char **argv, uint32_t *lens)
{
    int f;
    int64_t exp;
    if (!parse_set_opts(c, argc, argv, lens, 3, true, &f, &exp)) {
        return;
    }
    pend *p = queue1(c, CUDIS_OP_SET, op_set_flags(f), argv, lens, argv[2], lens[2], 0, exp, true,
                     rp_set);
    p->a = f;
}

static void rp_setnx(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (!res_failed(c, r)) {
        resp_int(&c->out, (r->flags & CUDIS_R_DONE) ? 1 : 0);
    }
}

void cmd_setnx(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    queue1(c, CUDIS_OP_SET, CUDIS_F_NX, argv, lens, argv[2], lens[2], 0, 0, true, rp_setnx);
}

static void setex_generic(conn *c, char **argv, uint32_t *lens, bool secs)
{
    long long ms;
    if (!arg_ll(c, argv[2], lens[2], &ms)) {
        return;
    }
    if (ms <= 0 || (secs && ms > LLONG_MAX / 1000)) {
        conn_errorf(c, "ERR invalid expire time in '%s' command", cmd_fullname(c->cur_cmd));
        return;
    }
    if (secs) {
        ms *= 1000;
    }
    int64_t now = cudis_now_ms();
    if (ms > LLONG_MAX - now) {
        conn_errorf(c, "ERR invalid expire time in '%s' command", cmd_fullname(c->cur_cmd));
        return;
    }
    pend *p = queue1(c, CUDIS_OP_SET, 0, argv, lens, argv[3], lens[3], 0, ms + now, true, rp_set);
    p->a = 0;
}

void cmd_setex(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    setex_generic(c, argv, lens, true);
}

void cmd_psetex(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    setex_generic(c, argv, lens, false);
}

void cmd_getset(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    pend *p =
        queue1(c, CUDIS_OP_SET, CUDIS_F_GET, argv, lens, argv[2], lens[2], 0, 0, true, rp_set);
    p->a = SETF_GET;
}

void cmd_getex(conn *c, int argc, char **argv, uint32_t *lens)
{
    int f;
    int64_t exp;
    if (!parse_set_opts(c, argc, argv, lens, 2, false, &f, &exp)) {
        return;
    }
    uint16_t of = 0;
    if (f & SETF_PERSIST) {
        of = CUDIS_F_PERSIST;
    } else if (f & SETF_ANYEXP) {
        of = CUDIS_F_SETEXP;
    }
    c->lp->b.ev = KEV_READ;
    queue1(c, CUDIS_OP_GET, of, argv, lens, NULL, 0, 0, exp, of != 0, rp_get);
}

/* Indices of the keys of a key/value list, keeping the last of duplicates. */
static int unique_pairs(int argc, char **argv, uint32_t *lens, int *idx)
{
    /* a hash set of the keys seen, from the last pair back: linear (an MSET
     * of 10,000 pairs compared 50 million pairs of keys before) */
    size_t cap = 16;
    while (cap < (size_t)argc) {
        cap *= 2;
    }
    int *set = xcalloc(cap, sizeof(int)); /* argv index + 1, 0 = free */
    int n = 0;
    for (int i = argc - 2; i >= 1; i -= 2) {
        size_t h = (size_t)cudis_hash(argv[i], lens[i], 0x51ed27095e8e3a7bull) & (cap - 1);
        bool dup = false;
        while (set[h] != 0) {
            int j = set[h] - 1;
            if (lens[j] == lens[i] && !memcmp(argv[j], argv[i], lens[i])) {
                dup = true;
                break;
            }
            h = (h + 1) & (cap - 1);
        }
        if (!dup) {
            set[h] = i + 1;
            idx[n++] = i;
        }
    }
    free(set);
    return n;
}

static void rp_ok_all(conn *c, pend *p, const cudis_batch *b)
{
    for (uint32_t k = 0; k < p->nops; k++) {
        if (RES(b, p, k)->status != CUDIS_OK) {
            reply_engine_error(c, RES(b, p, k)->status);
            return;
        }
    }
    reply_ok(c);
}

void cmd_mset(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (argc % 2 == 0) {
        conn_errorf(c, "ERR wrong number of arguments for '%s' command", cmd_fullname(c->cur_cmd));
        return;
    }
    int *idx = xmalloc(sizeof(int) * (size_t)argc);
    int n = unique_pairs(argc, argv, lens, idx);
    batcher *b = &c->lp->b;
    uint32_t op0 = b->nops;
    for (int k = n - 1; k >= 0; k--) {
        int i = idx[k];
        batch_add_op(b, CUDIS_OP_SET, 0, argv[i], lens[i], argv[i + 1], lens[i + 1], 0, 0, true);
    }
    if (n > 1) {
        b->exclusive = true;
    }
    free(idx);
    batch_add_pend(b, c, rp_ok_all, op0, (uint32_t)n);
}

void cmd_msetnx(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (argc % 2 == 0) {
        conn_errorf(c, "ERR wrong number of arguments for '%s' command", cmd_fullname(c->cur_cmd));
        return;
    }
    int *idx = xmalloc(sizeof(int) * (size_t)argc);
    int n = unique_pairs(argc, argv, lens, idx);
    batcher *b = &c->lp->b;
    for (int k = 0; k < n; k++) {
        batch_add_op(b, CUDIS_OP_EXISTS, 0, argv[idx[k]], lens[idx[k]], NULL, 0, 0, 0, false);
    }
    run_alone(c);
    bool any = false;
    for (int k = 0; k < n; k++) {
        any = any || (b->res[k].flags & CUDIS_R_FOUND);
    }
    batch_reset(b);
    if (any) {
        free(idx);
        resp_int(&c->out, 0);
        return;
    }
    for (int k = n - 1; k >= 0; k--) {
        int i = idx[k];
        batch_add_op(b, CUDIS_OP_SET, 0, argv[i], lens[i], argv[i + 1], lens[i + 1], 0, 0, true);
    }
    free(idx);
    run_alone(c);
    int err = 0;
    for (int k = 0; k < n; k++) {
        if (b->res[k].status != CUDIS_OK) {
            err = b->res[k].status;
        }
    }
    batch_reset(b);
    if (err) {
        reply_engine_error(c, err);
    } else {
        resp_int(&c->out, 1);
    }
}

/* ------------------------------------------------------------------------
 * Read-modify-write
 * ---------------------------------------------------------------------- */

static void rp_num(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (!res_failed(c, r)) {
        resp_int(&c->out, r->num);
    }
}

void cmd_append(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    if (lens[2] > srv.cfg.proto_max_bulk_len) {
        conn_error(c, E_BIGSTR);
        return;
    }
    queue1(c, CUDIS_OP_APPEND, 0, argv, lens, argv[2], lens[2], 0, 0, true, rp_num);
}

void cmd_setrange(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    long long off;
    if (!arg_ll(c, argv[2], lens[2], &off)) {
        return;
    }
    if (off < 0) {
        conn_error(c, "ERR offset is out of range");
        return;
    }
    if (lens[3] > 0 && off > srv.cfg.proto_max_bulk_len - (long long)lens[3]) { /* no overflow */
        conn_error(c, E_BIGSTR);
        return;
    }
    queue1(c, CUDIS_OP_SETRANGE, 0, argv, lens, argv[3], lens[3], off, 0, true, rp_num);
}

static void incr_generic(conn *c, char **argv, uint32_t *lens, long long d)
{
    queue1(c, CUDIS_OP_INCRBY, 0, argv, lens, NULL, 0, d, 0, true, rp_num);
}

void cmd_incr(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    incr_generic(c, argv, lens, 1);
}

void cmd_decr(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    incr_generic(c, argv, lens, -1);
}

void cmd_incrby(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    long long d;
    if (arg_ll(c, argv[2], lens[2], &d)) {
        incr_generic(c, argv, lens, d);
    }
}

void cmd_decrby(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    long long d;
    if (!arg_ll(c, argv[2], lens[2], &d)) {
        return;
    }
    if (d == LLONG_MIN) {
        conn_error(c, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, argv, lens, -d);
}

void cmd_incrbyfloat(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    batcher *b = &c->lp->b;
    batch_add_op(b, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, 0, 0, false);
    run_alone(c);
    cudis_result r = b->res[0];
    long double v = 0, incr;
    bool ok = true;
    if (r.status != CUDIS_OK) {
        batch_reset(b);
        reply_engine_error(c, r.status);
        return;
    }
    if (r.flags & CUDIS_R_VALUE) {
        ok = util_str2ld((const char *)b->out + r.val_off, r.val_len, &v);
    }
    batch_reset(b);
    if (!ok || !util_str2ld(argv[2], lens[2], &incr)) {
        conn_error(c, "ERR value is not a valid float");
        return;
    }
    v += incr;
    if (isnan(v) || isinf(v)) {
        conn_error(c, "ERR increment would produce NaN or Infinity");
        return;
    }
    char buf[5 * 1024];
    int n = util_ld2str(buf, sizeof(buf), v);
    b->ev = KEV_INCRBYFLOAT;
    batch_add_op(b, CUDIS_OP_SET, CUDIS_F_KEEPTTL, argv[1], lens[1], buf, (uint32_t)n, 0, 0, true);
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
 * DEL, EXISTS, TOUCH, TYPE
 * ---------------------------------------------------------------------- */

static void rp_count(conn *c, pend *p, const cudis_batch *b)
{
    long long n = 0;
    uint32_t flag = (uint32_t)p->a;
    for (uint32_t k = 0; k < p->nops; k++) {
        const cudis_result *r = RES(b, p, k);
        if (r->status != CUDIS_OK) {
            reply_engine_error(c, r->status);
            return;
        }
        if (r->flags & flag) {
            n++;
        }
    }
    resp_int(&c->out, n);
}

void cmd_del(conn *c, int argc, char **argv, uint32_t *lens)
{
    batcher *b = &c->lp->b;
    uint32_t op0 = b->nops, n = 0;
    for (int i = 1; i < argc; i++) {
        bool dup = false;
        for (int k = 1; k < i && !dup; k++) {
            dup = lens[k] == lens[i] && !memcmp(argv[k], argv[i], lens[i]);
        }
        if (!dup) {
            batch_add_op(b, CUDIS_OP_DEL, 0, argv[i], lens[i], NULL, 0, 0, 0, true);
            n++;
        }
    }
    if (n > 1) {
        b->exclusive = true;
    }
    pend *p = batch_add_pend(b, c, rp_count, op0, n);
    p->a = CUDIS_R_DONE;
}

static void exists_generic(conn *c, int argc, char **argv, uint32_t *lens, uint16_t flags)
{
    batcher *b = &c->lp->b;
    uint32_t op0 = b->nops;
    for (int i = 1; i < argc; i++) {
        batch_add_op(b, CUDIS_OP_EXISTS, flags, argv[i], lens[i], NULL, 0, 0, 0, false);
    }
    if (argc > 2) {
        b->exclusive = true;
    }
    pend *p = batch_add_pend(b, c, rp_count, op0, (uint32_t)(argc - 1));
    p->a = CUDIS_R_FOUND;
}

void cmd_exists(conn *c, int argc, char **argv, uint32_t *lens)
{
    exists_generic(c, argc, argv, lens, 0);
}

void cmd_touch(conn *c, int argc, char **argv, uint32_t *lens)
{
    exists_generic(c, argc, argv, lens, CUDIS_F_TOUCH);
}

const char *type_name(uint32_t type)
{
    static const char *const names[CUDIS_TYPE__COUNT] = {
        [CUDIS_TYPE_STRING] = "string", [CUDIS_TYPE_HASH] = "hash", [CUDIS_TYPE_SET] = "set",
        [CUDIS_TYPE_LIST] = "list",     [CUDIS_TYPE_ZSET] = "zset", [CUDIS_TYPE_BIGHASH] = "hash"};
    return type < CUDIS_TYPE__COUNT ? names[type] : "none";
}

static void rp_type(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (!res_failed(c, r)) {
        resp_status(&c->out, (r->flags & CUDIS_R_FOUND) ? type_name(r->type) : "none");
    }
}

void cmd_type(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    queue1(c, CUDIS_OP_EXISTS, 0, argv, lens, NULL, 0, 0, 0, false, rp_type);
}

/* ------------------------------------------------------------------------
 * Expiry
 * ---------------------------------------------------------------------- */

static void rp_done01(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (!res_failed(c, r)) {
        resp_int(&c->out, (r->flags & CUDIS_R_DONE) ? 1 : 0);
    }
}

static void expire_generic(conn *c, int argc, char **argv, uint32_t *lens, int64_t base, bool secs)
{
    uint16_t f = 0;
    for (int j = 3; j < argc; j++) {
        if (util_eq(argv[j], lens[j], "nx")) {
            f |= CUDIS_F_NX;
        } else if (util_eq(argv[j], lens[j], "xx")) {
            f |= CUDIS_F_XX;
        } else if (util_eq(argv[j], lens[j], "gt")) {
            f |= CUDIS_F_GT;
        } else if (util_eq(argv[j], lens[j], "lt")) {
            f |= CUDIS_F_LT;
        } else {
            conn_errorf(c, "ERR Unsupported option %.*s", (int)lens[j], argv[j]);
            return;
        }
    }
    if ((f & CUDIS_F_NX) && (f & (CUDIS_F_XX | CUDIS_F_GT | CUDIS_F_LT))) {
        conn_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((f & CUDIS_F_GT) && (f & CUDIS_F_LT)) {
        conn_error(c, "ERR GT and LT options at the same time are not compatible");
        return;
    }
    long long when;
    if (!arg_ll(c, argv[2], lens[2], &when)) {
        return;
    }
    if (secs) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
            conn_errorf(c, "ERR invalid expire time in '%s' command", cmd_fullname(c->cur_cmd));
            return;
        }
        when *= 1000;
    }
    if (when > LLONG_MAX - base) {
        conn_errorf(c, "ERR invalid expire time in '%s' command", cmd_fullname(c->cur_cmd));
        return;
    }
    when += base;
    /* 0 means "no expiry" to the engine; any time <= now deletes. */
    if (when <= 0) {
        when = -1;
    }
    queue1(c, CUDIS_OP_EXPIRE, f, argv, lens, NULL, 0, 0, when, true, rp_done01);
}

void cmd_expire(conn *c, int argc, char **argv, uint32_t *lens)
{
    expire_generic(c, argc, argv, lens, cudis_now_ms(), true);
}

void cmd_pexpire(conn *c, int argc, char **argv, uint32_t *lens)
{
    expire_generic(c, argc, argv, lens, cudis_now_ms(), false);
}

void cmd_expireat(conn *c, int argc, char **argv, uint32_t *lens)
{
    expire_generic(c, argc, argv, lens, 0, true);
}

void cmd_pexpireat(conn *c, int argc, char **argv, uint32_t *lens)
{
    expire_generic(c, argc, argv, lens, 0, false);
}

enum { TTL_S = 0, TTL_MS, TTL_AT_S, TTL_AT_MS };

static void rp_ttl(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (res_failed(c, r)) {
        return;
    }
    if (!(r->flags & CUDIS_R_FOUND)) {
        resp_int(&c->out, -2);
        return;
    }
    if (r->num == -1) {
        resp_int(&c->out, -1);
        return;
    }
    long long e = r->num, ttl = e - b->now_ms;
    if (ttl < 0) {
        ttl = 0;
    }
    switch (p->a) {
    case TTL_S: resp_int(&c->out, (ttl + 500) / 1000); break;
    case TTL_MS: resp_int(&c->out, ttl); break;
    case TTL_AT_S: resp_int(&c->out, e / 1000); break;
    default: resp_int(&c->out, e); break;
    }
}

static void ttl_generic(conn *c, char **argv, uint32_t *lens, int kind)
{
    pend *p = queue1(c, CUDIS_OP_TTL, 0, argv, lens, NULL, 0, 0, 0, false, rp_ttl);
    p->a = kind;
}

void cmd_ttl(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    ttl_generic(c, argv, lens, TTL_S);
}

void cmd_pttl(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    ttl_generic(c, argv, lens, TTL_MS);
}

void cmd_expiretime(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    ttl_generic(c, argv, lens, TTL_AT_S);
}

void cmd_pexpiretime(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    ttl_generic(c, argv, lens, TTL_AT_MS);
}

void cmd_persist(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    queue1(c, CUDIS_OP_PERSIST, 0, argv, lens, NULL, 0, 0, 0, true, rp_done01);
}

/* ------------------------------------------------------------------------
 * MEMORY USAGE (batched read)
 * ---------------------------------------------------------------------- */

static void rp_memusage(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (res_failed(c, r)) {
        return;
    }
    if (!(r->flags & CUDIS_R_VALUE)) {
        resp_null(&c->out, c->proto);
        return;
    }
    resp_int(&c->out, memory_item_bytes(b->ops[p->op0].key_len, r->val_len));
}

long long memory_item_bytes(uint32_t klen, uint64_t vlen)
{
    /* key + value + item header and index slot, rounded like an allocator */
    long long n = (long long)klen + (long long)vlen + 32;
    return (n + 15) & ~15LL;
}

void cmd_memory_usage(conn *c, int argc, char **argv, uint32_t *lens)
{
    for (int j = 3; j < argc; j++) {
        long long s;
        if (util_eq(argv[j], lens[j], "samples") && j + 1 < argc) {
            if (!arg_ll(c, argv[j + 1], lens[j + 1], &s)) {
                return;
            }
            if (s < 0) { /* as Redis: a count of samples is not negative */
                conn_error(c, E_SYNTAX);
                return;
            }
            j++;
        } else {
            conn_error(c, E_SYNTAX);
            return;
        }
    }
    long long big;
    int rc = bighash_memory(c, argv[2], lens[2], &big);
    if (rc != 0) { /* a big hash: its head and chunks, summed alone */
        if (rc < 0) {
            reply_engine_error(c, rc);
        } else {
            resp_int(&c->out, big);
        }
        return;
    }
    char *kv[2] = {argv[0], argv[2]};
    uint32_t kl[2] = {lens[0], lens[2]};
    /* as Redis's: no hit or miss counted, the key's recency left alone */
    pend *p = queue1(c, CUDIS_OP_GET, CUDIS_F_NOTOUCH | CUDIS_F_NOSTATS, kv, kl, NULL, 0, 0, 0,
                     false, rp_memusage);
    c->lp->b.ops[p->op0].type = CUDIS_TYPE_ANY;
}

/* ------------------------------------------------------------------------
 * RENAME, keyspace-wide commands (run alone)
 * ---------------------------------------------------------------------- */

static void rename_generic(conn *c, char **argv, uint32_t *lens, bool nx)
{
    bighash_unchunk(c, argv[1], lens[1]); /* a big hash moves as one item */
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, 0, 0, false);
    b->ops[i].type = CUDIS_TYPE_ANY;
    run_alone(c);
    cudis_result r = b->res[0];
    if (r.status != CUDIS_OK) {
        batch_reset(b);
        reply_engine_error(c, r.status);
        return;
    }
    if (!(r.flags & CUDIS_R_VALUE)) {
        batch_reset(b);
        conn_error(c, "ERR no such key");
        return;
    }
    if (lens[1] == lens[2] && !memcmp(argv[1], argv[2], lens[1])) {
        batch_reset(b);
        if (nx) {
            resp_int(&c->out, 0);
        } else {
            reply_ok(c);
        }
        return;
    }
    char *val = xmalloc(r.val_len ? r.val_len : 1);
    memcpy(val, b->out + r.val_off, r.val_len);
    uint32_t vlen = r.val_len;
    int64_t exp = r.num == -1 ? 0 : r.num;
    batch_reset(b);
    if (nx) {
        batch_add_op(b, CUDIS_OP_EXISTS, 0, argv[2], lens[2], NULL, 0, 0, 0, false);
        run_alone(c);
        bool found = b->res[0].flags & CUDIS_R_FOUND;
        batch_reset(b);
        if (found) {
            free(val);
            resp_int(&c->out, 0);
            return;
        }
    }
    b->ev = KEV_QUIET; /* notified below, in Redis's order */
    i = batch_add_op(b, CUDIS_OP_SET, 0, argv[2], lens[2], val, vlen, 0, exp, true);
    b->ops[i].type = (uint8_t)r.type;
    run_alone(c);
    int st = b->res[0].status;
    batch_reset(b);
    free(val);
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
        return;
    }
    batch_add_op(b, CUDIS_OP_DEL, 0, argv[1], lens[1], NULL, 0, 0, 0, true);
    run_alone(c);
    batch_reset(b);
    keyspace_notify(c->lp, NOTIFY_NEW, "new", b->db, argv[2], lens[2]);
    keyspace_notify(c->lp, NOTIFY_GENERIC, "rename_from", b->db, argv[1], lens[1]);
    keyspace_notify(c->lp, NOTIFY_GENERIC, "rename_to", b->db, argv[2], lens[2]);
    if (nx) {
        resp_int(&c->out, 1);
    } else {
        reply_ok(c);
    }
}

void cmd_rename(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    rename_generic(c, argv, lens, false);
}

void cmd_renamenx(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    rename_generic(c, argv, lens, true);
}

void cmd_dbsize(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    (void)argv;
    (void)lens;
    resp_int(&c->out, (long long)engine_db_size(srv.eng, db_phys(c->db)));
}

void cmd_flushall(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (argc > 2 || (argc == 2 && !util_eq(argv[1], lens[1], "sync") &&
                     !util_eq(argv[1], lens[1], "async"))) {
        conn_error(c, E_SYNTAX);
        return;
    }
    bool all = strcmp(c->cur_cmd->name, "flushall") == 0;
    rdb_before_flush(c->lp, all);
    int rc = engine_flush(srv.eng, all ? CUDIS_DB_ALL : db_phys(c->db));
    if (srv.cfg.cluster_enabled && (all || c->db == 0)) {
        slotkeys_clear();
    }
    if (rc == CUDIS_OK && !all) { /* and the chunks of its big hashes */
        rc = engine_flush(srv.eng, db_phys(c->db) | BH_HIDDEN);
    }
    bighash_flushed(all ? -1 : db_phys(c->db));
    if (rc != CUDIS_OK) {
        reply_engine_error(c, rc);
        return;
    }
    tracking_flush_all(c->lp);
    if (all) {
        rdb_after_flushall(c->lp);
    }
    reply_ok(c);
}

typedef struct scan_ctx {
    sbuf keys;
    long n;    /* keys in the reply */
    long seen; /* keys visited, whether MATCH/TYPE took them or not */
    const char *pat;
    uint32_t plen;
    bool all;
    int type;    /* TYPE: the enum cudis_type wanted; -1 any; -2 none (a name no type has) */
    batcher *bt; /* with TYPE: keys MATCH took become EXISTS ops here, for their types */
} scan_ctx;

static int scan_collect(void *arg, uint8_t db, const uint8_t *key, uint32_t len, int64_t exp)
{
    (void)db, (void)exp;
    scan_ctx *s = arg;
    s->seen++;
    if (s->type == -2) {
        return 0;
    }
    if (!s->all && !util_glob_match(s->pat, s->plen, (const char *)key, len, false)) {
        return 0;
    }
    if (s->type >= 0) {
        batch_add_op(s->bt, CUDIS_OP_EXISTS, 0, (const char *)key, len, NULL, 0, 0, 0, false);
        return 0;
    }
    resp_bulk(&s->keys, key, len);
    s->n++;
    return 0;
}

/* SCAN ... TYPE: of the keys collected as ops, those of the type wanted. */
static int scan_typed(conn *c, scan_ctx *s)
{
    batcher *b = s->bt;
    int rc = b->nops ? run_alone(c) : CUDIS_OK;
    for (uint32_t i = 0; rc == CUDIS_OK && i < b->nops; i++) {
        const cudis_result *r = &b->res[i];
        if (r->status == CUDIS_OK && (r->flags & CUDIS_R_FOUND) &&
            (int)(r->type == CUDIS_TYPE_BIGHASH ? CUDIS_TYPE_HASH : r->type) == s->type) {
            resp_bulk(&s->keys, b->in + b->ops[i].key_off, b->ops[i].key_len);
            s->n++;
        }
    }
    batch_reset(b);
    return rc;
}

void cmd_keys(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    scan_ctx s = {.pat = argv[1], .plen = lens[1], .type = -1};
    s.all = lens[1] == 1 && argv[1][0] == '*';
    uint64_t cur = 0;
    uint8_t db = db_phys(c->db);
    if (engine_db_size(srv.eng, db) == 0) { /* the walk costs the index size, not the key count */
        resp_array(&c->out, 0);
        return;
    }
    int64_t now = cudis_now_ms();
    do {
        uint64_t next = 0;
        if (engine_scan(srv.eng, db, cur, 4096, now, scan_collect, &s, &next) != CUDIS_OK) {
            break;
        }
        cur = next;
    } while (cur != 0);
    resp_array(&c->out, s.n);
    sbuf_add(&c->out, s.keys.p, s.keys.len);
    sbuf_free(&s.keys);
}

void cmd_scan(conn *c, int argc, char **argv, uint32_t *lens)
{
    char tmp[32];
    if (lens[1] >= sizeof(tmp)) {
        conn_error(c, "ERR invalid cursor");
        return;
    }
    memcpy(tmp, argv[1], lens[1]);
    tmp[lens[1]] = '\0';
    char *end;
    errno = 0;
    unsigned long long cur = strtoull(tmp, &end, 10);
    if (lens[1] == 0 || *end != '\0' || errno == ERANGE || tmp[0] == '-') {
        conn_error(c, "ERR invalid cursor");
        return;
    }
    long long count = 10;
    scan_ctx s = {.all = true, .type = -1, .bt = &c->lp->b};
    for (int j = 2; j < argc; j++) {
        bool more = j + 1 < argc;
        if (util_eq(argv[j], lens[j], "count") && more) {
            if (!arg_ll(c, argv[j + 1], lens[j + 1], &count)) {
                return;
            }
            if (count < 1) {
                conn_error(c, E_SYNTAX);
                return;
            }
            j++;
        } else if (util_eq(argv[j], lens[j], "match") && more) {
            s.pat = argv[j + 1];
            s.plen = lens[j + 1];
            s.all = s.plen == 1 && s.pat[0] == '*';
            j++;
        } else if (util_eq(argv[j], lens[j], "type") && more) {
            s.type = -2;
            for (uint32_t t = 0; t < CUDIS_TYPE_BIGHASH; t++) { /* (a big hash is a hash) */
                if (util_eq(argv[j + 1], lens[j + 1], type_name(t))) {
                    s.type = (int)t;
                }
            }
            j++;
        } else {
            conn_error(c, E_SYNTAX);
            return;
        }
    }
    /* Like Redis, visit about COUNT keys per call, whether MATCH or TYPE
     * keeps them: the index is sized for a full store, so keep walking it
     * (a bounded amount) until that many were seen or the scan is done. */
    uint8_t db = db_phys(c->db);
    if (engine_db_size(srv.eng, db) == 0) {
        sbuf_add(&c->out, "*2\r\n$1\r\n0\r\n*0\r\n", 15);
        return;
    }
    uint64_t next = cur;
    uint32_t step = (uint32_t)(count > 100000 ? 100000 : count);
    uint64_t work = 0;
    int64_t now = cudis_now_ms();
    int rc;
    do {
        rc = engine_scan(srv.eng, db, next, step, now, scan_collect, &s, &next);
        work += step;
    } while (rc == CUDIS_OK && next != 0 && s.seen < count && work < 4u * 1024 * 1024);
    if (rc == CUDIS_OK && s.type >= 0) {
        rc = scan_typed(c, &s);
    }
    if (rc != CUDIS_OK) {
        sbuf_free(&s.keys);
        reply_engine_error(c, rc);
        return;
    }
    resp_array(&c->out, 2);
    resp_bulk_ll(&c->out, (long long)next);
    resp_array(&c->out, s.n);
    sbuf_add(&c->out, s.keys.p, s.keys.len);
    sbuf_free(&s.keys);
}

void cmd_randomkey(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    (void)argv;
    (void)lens;
    uint32_t cap = 4096, len = 0;
    uint8_t *buf = xmalloc(cap);
    uint8_t db = db_phys(c->db);
    int rc = engine_random_key(srv.eng, db, cudis_now_ms(), buf, cap, &len);
    if (rc == CUDIS_E_OUTBUF) {
        cap = len + 1;
        buf = xrealloc(buf, cap);
        rc = engine_random_key(srv.eng, db, cudis_now_ms(), buf, cap, &len);
    }
    if (rc == 1) {
        resp_bulk(&c->out, buf, len);
    } else if (rc == 0) {
        resp_null(&c->out, c->proto);
    } else {
        reply_engine_error(c, rc);
    }
    free(buf);
}

/* A DB index argument: its engine database, or false with Redis's reply. */
static bool arg_db(conn *c, const char *s, uint32_t len, uint8_t *out)
{
    long long db;
    if (!util_str2ll(s, len, &db) || db < INT32_MIN || db > INT32_MAX) {
        conn_error(c, E_NOTINT);
        return false;
    }
    if (db < 0 || db >= srv.cfg.databases) {
        conn_error(c, "ERR DB index is out of range");
        return false;
    }
    *out = db_phys((int)db);
    return true;
}

/* key (in the client's database) to dkey in engine database ddb, with its
 * expiry, unless dkey is there and not replace: 1 copied, 0 not (absent
 * source, or dkey there), -1 an error replied. Runs alone. */
static int copy_key(conn *c, char *key, uint32_t klen, uint8_t ddb, char *dkey, uint32_t dlen,
                    bool replace)
{
    batcher *b = &c->lp->b;
    uint8_t src = b->db;
    uint32_t i = batch_add_op(b, CUDIS_OP_GET, 0, key, klen, NULL, 0, 0, 0, false);
    b->ops[i].type = CUDIS_TYPE_ANY; /* (b->ops may move in batch_add_op) */
    b->db = ddb;
    batch_add_op(b, CUDIS_OP_EXISTS, 0, dkey, dlen, NULL, 0, 0, 0, false);
    b->db = src;
    run_alone(c);
    cudis_result r = b->res[0];
    int st = r.status != CUDIS_OK ? r.status : b->res[1].status;
    bool there = b->res[1].flags & CUDIS_R_FOUND;
    if (st != CUDIS_OK || !(r.flags & CUDIS_R_VALUE) || (there && !replace)) {
        batch_reset(b);
        if (st != CUDIS_OK) {
            reply_engine_error(c, st);
            return -1;
        }
        return 0;
    }
    char *val = xmalloc(r.val_len ? r.val_len : 1);
    memcpy(val, b->out + r.val_off, r.val_len);
    batch_reset(b);
    b->db = ddb;
    uint8_t ev = b->ev;
    b->ev = KEV_QUIET; /* COPY and MOVE notify in Redis's order */
    i = batch_add_op(b, CUDIS_OP_SET, 0, dkey, dlen, val, r.val_len, 0, r.num == -1 ? 0 : r.num,
                     true);
    b->ops[i].type = (uint8_t)r.type;
    b->ev = ev;
    b->db = src;
    run_alone(c);
    st = b->res[0].status;
    batch_reset(b);
    free(val);
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
        return -1;
    }
    return 1;
}

void cmd_copy(conn *c, int argc, char **argv, uint32_t *lens)
{
    bool replace = false;
    batcher *b = &c->lp->b;
    uint8_t src = b->db, dst_db = b->db;
    for (int j = 3; j < argc; j++) {
        if (util_eq(argv[j], lens[j], "replace")) {
            replace = true;
        } else if (util_eq(argv[j], lens[j], "db") && j + 1 < argc) {
            if (!arg_db(c, argv[j + 1], lens[j + 1], &dst_db)) {
                return;
            }
            j++;
        } else {
            conn_error(c, E_SYNTAX);
            return;
        }
    }
    if (src == dst_db && lens[1] == lens[2] && !memcmp(argv[1], argv[2], lens[1])) {
        conn_error(c, "ERR source and destination objects are the same");
        return;
    }
    bighash_unchunk(c, argv[1], lens[1]); /* a big hash is copied as one item */
    int n = copy_key(c, argv[1], lens[1], dst_db, argv[2], lens[2], replace);
    if (n == 1) {
        keyspace_notify(c->lp, NOTIFY_NEW, "new", dst_db, argv[2], lens[2]);
        keyspace_notify(c->lp, NOTIFY_GENERIC, "copy_to", dst_db, argv[2], lens[2]);
    }
    if (n >= 0) {
        resp_int(&c->out, n);
    }
}

/* MOVE key db: to another database unless the key is there already. */
void cmd_move(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    if (srv.cfg.cluster_enabled) {
        conn_error(c, "ERR MOVE is not allowed in cluster mode");
        return;
    }
    batcher *b = &c->lp->b;
    uint8_t src = b->db, dst;
    if (!arg_db(c, argv[2], lens[2], &dst)) {
        return;
    }
    if (dst == src) {
        conn_error(c, "ERR source and destination objects are the same");
        return;
    }
    bighash_unchunk(c, argv[1], lens[1]); /* a big hash moves as one item */
    int n = copy_key(c, argv[1], lens[1], dst, argv[1], lens[1], false);
    if (n == 1) {
        b->ev = KEV_QUIET;
        batch_add_op(b, CUDIS_OP_DEL, 0, argv[1], lens[1], NULL, 0, 0, 0, true);
        run_alone(c);
        batch_reset(b);
        keyspace_notify(c->lp, NOTIFY_NEW, "new", dst, argv[1], lens[1]);
        keyspace_notify(c->lp, NOTIFY_GENERIC, "move_from", src, argv[1], lens[1]);
        keyspace_notify(c->lp, NOTIFY_GENERIC, "move_to", dst, argv[1], lens[1]);
    }
    if (n >= 0) {
        resp_int(&c->out, n);
    }
}
