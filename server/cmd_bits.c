/*
 * cmd_bits.c - the bit and string-algorithm commands of Redis 7: SETBIT
 * (an engine op, so it batches on every engine), GETBIT, BITCOUNT, BITPOS,
 * BITFIELD_RO and LCS (a GET in the batch, the work in the reply), BITFIELD
 * with writes and BITOP (read, compute, write while running alone).
 * Argument errors come in Redis's order: where Redis looks the key up
 * before it parses the rest (BITCOUNT, BITPOS's range), so does the reply
 * function here.
 */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

#define RES(b, p, k) (&(b)->res[(p)->op0 + (k)])

static const char *E_OFFSET = "ERR bit offset is not an integer or out of range";
static const char *E_NOTINT = "ERR value is not an integer or out of range";
static const char *E_SYNTAX = "ERR syntax error";

/* A copy of argv[0..n) in one allocation (argv, lens, bytes), for a reply
 * function that parses arguments after the key was read. */
typedef struct args {
    int n;
    char **v;
    uint32_t *l;
} args;

static args *args_copy(int n, char **argv, uint32_t *lens)
{
    size_t bytes = sizeof(args) + (size_t)n * (sizeof(char *) + sizeof(uint32_t));
    for (int i = 0; i < n; i++) {
        bytes += lens[i] + 1;
    }
    args *a = xmalloc(bytes);
    a->n = n;
    a->v = (char **)(a + 1);
    a->l = (uint32_t *)(a->v + n);
    char *p = (char *)(a->l + n);
    for (int i = 0; i < n; i++) {
        memcpy(p, argv[i], lens[i]);
        p[lens[i]] = '\0';
        a->v[i] = p;
        a->l[i] = lens[i];
        p += lens[i] + 1;
    }
    return a;
}

/* The value a GET op found (len 0 when absent); false after an error reply. */
static bool value_of(conn *c, const cudis_batch *b, const cudis_result *r, const uint8_t **v,
                     uint64_t *len, bool *found)
{
    if (r->status != CUDIS_OK) {
        reply_engine_error(c, r->status);
        return false;
    }
    *found = (r->flags & CUDIS_R_VALUE) != 0;
    *v = *found ? b->out + r->val_off : NULL;
    *len = *found ? r->val_len : 0;
    return true;
}

/* A bit offset argument, as Redis's getBitOffsetFromArgument (bits: a
 * BITFIELD type's width for "#n" offsets, 0 for a plain one). */
static bool bit_offset(conn *c, const char *s, uint32_t n, int bits, uint64_t *out)
{
    long long v;
    bool mul = bits > 0 && n > 0 && s[0] == '#';
    if (!util_str2ll(mul ? s + 1 : s, mul ? n - 1 : n, &v) || v < 0) {
        conn_error(c, E_OFFSET);
        return false;
    }
    if (mul) {
        if (v > (long long)(UINT64_MAX >> 8) / bits) {
            conn_error(c, E_OFFSET);
            return false;
        }
        v *= bits;
    }
    if ((unsigned long long)(v >> 3) >= (unsigned long long)srv.cfg.proto_max_bulk_len) {
        conn_error(c, E_OFFSET);
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

/* ------------------------------------------------------------------------
 * SETBIT, GETBIT
 * ---------------------------------------------------------------------- */

static void rp_setbit(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (r->status != CUDIS_OK) {
        reply_engine_error(c, r->status);
        return;
    }
    resp_int(&c->out, r->num);
}

void cmd_setbit(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    uint64_t off;
    if (!bit_offset(c, argv[2], lens[2], 0, &off)) {
        return;
    }
    if (lens[3] != 1 || (argv[3][0] != '0' && argv[3][0] != '1')) {
        conn_error(c, "ERR bit is not an integer or out of range");
        return;
    }
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, CUDIS_OP_SETBIT, argv[3][0] == '1' ? CUDIS_F_BIT1 : 0, argv[1],
                              lens[1], NULL, 0, (int64_t)off, 0, true);
    batch_add_pend(b, c, rp_setbit, i, 1);
}

static void rp_getbit(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *v;
    uint64_t len;
    bool found;
    if (!value_of(c, b, RES(b, p, 0), &v, &len, &found)) {
        return;
    }
    uint64_t off = (uint64_t)p->a;
    resp_int(&c->out, (off >> 3) < len ? (v[off >> 3] >> (7 - (off & 7))) & 1 : 0);
}

/* One GET of argv[1] whose reply is fn (p->a, p->b, p->aux set by the caller). */
static pend *get_then(conn *c, char **argv, uint32_t *lens, reply_fn fn)
{
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, 0, 0, false);
    return batch_add_pend(b, c, fn, i, 1);
}

void cmd_getbit(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    uint64_t off;
    if (!bit_offset(c, argv[2], lens[2], 0, &off)) {
        return;
    }
    get_then(c, argv, lens, rp_getbit)->a = (int64_t)off;
}

/* ------------------------------------------------------------------------
 * BITCOUNT, BITPOS
 * ---------------------------------------------------------------------- */

static const uint8_t popcnt8[256] = {
#define B2(n) n, n + 1, n + 1, n + 2
#define B4(n) B2(n), B2(n + 1), B2(n + 1), B2(n + 2)
#define B6(n) B4(n), B4(n + 1), B4(n + 1), B4(n + 2)
    B6(0), B6(1), B6(1), B6(2)
#undef B2
#undef B4
#undef B6
};

static uint64_t bit_count(const uint8_t *v, uint64_t from, uint64_t to) /* bytes [from, to] */
{
    uint64_t n = 0;
    for (uint64_t i = from; i <= to; i++) {
        n += popcnt8[v[i]];
    }
    return n;
}

/* Redis's range rules: negative from the end, clamped; false when empty. */
static bool clamp_range(long long *start, long long *end, long long len)
{
    if (*start < 0) {
        *start = len + *start;
    }
    if (*end < 0) {
        *end = len + *end;
    }
    if (*start < 0) {
        *start = 0;
    }
    if (*end < 0) {
        *end = 0;
    }
    if (*end >= len) {
        *end = len - 1;
    }
    return *start <= *end && len > 0;
}

/* "BYTE" (false) or "BIT" (true) at a->v[i]; false after a syntax error. */
static bool unit_arg(conn *c, const args *a, int i, bool *bits)
{
    *bits = false;
    if (i >= a->n) {
        return true;
    }
    if (util_eq(a->v[i], a->l[i], "bit")) {
        *bits = true;
    } else if (!util_eq(a->v[i], a->l[i], "byte")) {
        conn_error(c, E_SYNTAX);
        return false;
    }
    return true;
}

static void rp_bitcount(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *v;
    uint64_t len;
    bool found;
    if (!value_of(c, b, RES(b, p, 0), &v, &len, &found)) {
        return;
    }
    if (!found) {
        resp_int(&c->out, 0); /* Redis looks the key up before the range */
        return;
    }
    const args *a = p->aux; /* start end [BYTE|BIT] */
    long long start = 0, end = -1;
    bool bits = false;
    if (a->n == 1 || a->n > 3) {
        conn_error(c, E_SYNTAX);
        return;
    }
    if (a->n >= 2) {
        if (!util_str2ll(a->v[0], a->l[0], &start) || !util_str2ll(a->v[1], a->l[1], &end)) {
            conn_error(c, E_NOTINT);
            return;
        }
        if (!unit_arg(c, a, 2, &bits)) {
            return;
        }
    }
    long long total = bits ? (long long)len * 8 : (long long)len;
    if (!clamp_range(&start, &end, total)) {
        resp_int(&c->out, 0);
        return;
    }
    if (!bits) {
        resp_int(&c->out, (long long)bit_count(v, (uint64_t)start, (uint64_t)end));
        return;
    }
    uint64_t fb = (uint64_t)start >> 3, lb = (uint64_t)end >> 3;
    uint64_t n = bit_count(v, fb, lb);
    /* drop the bits of the first and last bytes outside the range */
    uint8_t head = (uint8_t)(0xff << (8 - (start & 7)));
    uint8_t tail = (uint8_t)((1u << (7 - (end & 7))) - 1);
    n -= popcnt8[v[fb] & head];
    n -= popcnt8[v[lb] & tail];
    resp_int(&c->out, (long long)n);
}

void cmd_bitcount(conn *c, int argc, char **argv, uint32_t *lens)
{
    get_then(c, argv, lens, rp_bitcount)->aux = args_copy(argc - 2, argv + 2, lens + 2);
}

static void rp_bitpos(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *v;
    uint64_t len;
    bool found;
    if (!value_of(c, b, RES(b, p, 0), &v, &len, &found)) {
        return;
    }
    int bit = (int)p->a;
    if (!found) {
        resp_int(&c->out, bit ? -1 : 0);
        return;
    }
    const args *a = p->aux; /* [start [end [BYTE|BIT]]] */
    long long start = 0, end = -1;
    bool bits = false, end_given = false;
    if (a->n > 3) {
        conn_error(c, E_SYNTAX);
        return;
    }
    if (a->n >= 1 && !util_str2ll(a->v[0], a->l[0], &start)) {
        conn_error(c, E_NOTINT);
        return;
    }
    if (a->n >= 2) {
        if (!util_str2ll(a->v[1], a->l[1], &end)) {
            conn_error(c, E_NOTINT);
            return;
        }
        end_given = true;
        if (!unit_arg(c, a, 2, &bits)) {
            return;
        }
    }
    long long total = bits ? (long long)len * 8 : (long long)len;
    if (!clamp_range(&start, &end, total)) {
        resp_int(&c->out, -1);
        return;
    }
    long long first = bits ? start : start * 8, last = bits ? end : end * 8 + 7;
    for (long long i = first; i <= last; i++) {
        if (((v[i >> 3] >> (7 - (i & 7))) & 1) == bit) {
            resp_int(&c->out, i);
            return;
        }
    }
    /* no such bit: looking for a 0 without an end, the string goes on with 0s */
    resp_int(&c->out, bit == 0 && !end_given ? last + 1 : -1);
}

void cmd_bitpos(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (lens[2] != 1 || (argv[2][0] != '0' && argv[2][0] != '1')) {
        long long x;
        conn_error(c, util_str2ll(argv[2], lens[2], &x) ? "ERR The bit argument must be 1 or 0."
                                                        : E_NOTINT);
        return;
    }
    pend *p = get_then(c, argv, lens, rp_bitpos);
    p->a = argv[2][0] - '0';
    p->aux = args_copy(argc - 3, argv + 3, lens + 3);
}

/* ------------------------------------------------------------------------
 * BITFIELD, BITFIELD_RO
 * ---------------------------------------------------------------------- */

enum { BF_GET, BF_SET, BF_INCRBY };
enum { OV_WRAP, OV_SAT, OV_FAIL };

typedef struct bf_op {
    uint8_t kind, sign, bits, overflow;
    uint64_t offset;
    int64_t arg;
} bf_op;

typedef struct bf_ops {
    int n;
    bool writes;
    bf_op op[];
} bf_ops;

static uint64_t get_unsigned(const uint8_t *v, uint64_t len, uint64_t off, int bits)
{
    uint64_t x = 0;
    for (int i = 0; i < bits; i++) {
        uint64_t pos = off + (uint64_t)i;
        int bit = (pos >> 3) < len ? (v[pos >> 3] >> (7 - (pos & 7))) & 1 : 0;
        x = (x << 1) | (uint64_t)bit;
    }
    return x;
}

static int64_t get_signed(const uint8_t *v, uint64_t len, uint64_t off, int bits)
{
    uint64_t x = get_unsigned(v, len, off, bits);
    if (bits < 64 && (x & ((uint64_t)1 << (bits - 1)))) {
        x |= UINT64_MAX << bits; /* sign extension */
    }
    return (int64_t)x;
}

static void set_bits(uint8_t *v, uint64_t off, int bits, uint64_t x)
{
    for (int i = 0; i < bits; i++) {
        uint64_t pos = off + (uint64_t)i;
        int bit = (int)((x >> (bits - 1 - i)) & 1);
        uint8_t mask = (uint8_t)(1u << (7 - (pos & 7)));
        v[pos >> 3] = bit ? (uint8_t)(v[pos >> 3] | mask) : (uint8_t)(v[pos >> 3] & ~mask);
    }
}

/* value + incr in a field of bits (signed or not) under the overflow
 * policy: false when it overflows with FAIL; *out the stored value. */
static bool field_add(const bf_op *o, int64_t value, int64_t incr, int64_t *out)
{
    if (!o->sign) {
        uint64_t max = o->bits == 64 ? UINT64_MAX : ((uint64_t)1 << o->bits) - 1;
        uint64_t v = (uint64_t)value;
        bool over = incr > 0 && (uint64_t)incr > max - v;
        bool under = incr < 0 && (uint64_t)(-(incr + 1)) + 1 > v;
        if (over || under) {
            if (o->overflow == OV_FAIL) {
                return false;
            }
            if (o->overflow == OV_SAT) {
                *out = (int64_t)(over ? max : 0);
                return true;
            }
        }
        *out = (int64_t)((v + (uint64_t)incr) & max);
        return true;
    }
    int64_t max = o->bits == 64 ? INT64_MAX : ((int64_t)1 << (o->bits - 1)) - 1;
    int64_t min = -max - 1;
    bool over = incr > 0 && value > max - incr;
    bool under = incr < 0 && value < min - incr;
    if (over || under) {
        if (o->overflow == OV_FAIL) {
            return false;
        }
        if (o->overflow == OV_SAT) {
            *out = over ? max : min;
            return true;
        }
    }
    uint64_t r = (uint64_t)value + (uint64_t)incr; /* wrap: the low bits, sign-extended */
    if (o->bits < 64) {
        uint64_t mask = ((uint64_t)1 << o->bits) - 1;
        r &= mask;
        if (r & ((uint64_t)1 << (o->bits - 1))) {
            r |= ~mask;
        }
    }
    *out = (int64_t)r;
    return true;
}

/* Parse the BITFIELD operations; NULL after an error reply. */
static bf_ops *bf_parse(conn *c, int argc, char **argv, uint32_t *lens, bool ro)
{
    bf_ops *ops = xcalloc(1, sizeof(bf_ops) + sizeof(bf_op) * (size_t)(argc / 2 + 1));
    uint8_t overflow = OV_WRAP;
    for (int j = 2; j < argc; j++) {
        int kind = -1;
        if (util_eq(argv[j], lens[j], "get") && j + 2 < argc) {
            kind = BF_GET;
        } else if (util_eq(argv[j], lens[j], "set") && j + 3 < argc) {
            kind = BF_SET;
        } else if (util_eq(argv[j], lens[j], "incrby") && j + 3 < argc) {
            kind = BF_INCRBY;
        } else if (util_eq(argv[j], lens[j], "overflow") && j + 1 < argc) {
            if (util_eq(argv[j + 1], lens[j + 1], "wrap")) {
                overflow = OV_WRAP;
            } else if (util_eq(argv[j + 1], lens[j + 1], "sat")) {
                overflow = OV_SAT;
            } else if (util_eq(argv[j + 1], lens[j + 1], "fail")) {
                overflow = OV_FAIL;
            } else {
                conn_error(c, "ERR Invalid OVERFLOW type specified");
                free(ops);
                return NULL;
            }
            j++;
            continue;
        } else {
            conn_error(c, E_SYNTAX);
            free(ops);
            return NULL;
        }
        bf_op *o = &ops->op[ops->n];
        const char *t = argv[j + 1];
        uint32_t tl = lens[j + 1];
        long long width = 0;
        bool ok = tl >= 2 && (t[0] == 'i' || t[0] == 'I' || t[0] == 'u' || t[0] == 'U') &&
                  util_str2ll(t + 1, tl - 1, &width);
        o->sign = t[0] == 'i' || t[0] == 'I';
        if (!ok || width < 1 || (o->sign && width > 64) || (!o->sign && width > 63)) {
            conn_error(c, "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 "
                          "is not supported but i64 is.");
            free(ops);
            return NULL;
        }
        o->bits = (uint8_t)width;
        if (!bit_offset(c, argv[j + 2], lens[j + 2], o->bits, &o->offset)) {
            free(ops);
            return NULL;
        }
        if (kind != BF_GET) {
            long long v;
            if (!util_str2ll(argv[j + 3], lens[j + 3], &v)) {
                conn_error(c, E_NOTINT);
                free(ops);
                return NULL;
            }
            o->arg = v;
            ops->writes = true;
        }
        if (ro && kind != BF_GET) {
            conn_error(c, "ERR BITFIELD_RO only supports the GET subcommand");
            free(ops);
            return NULL;
        }
        o->kind = (uint8_t)kind;
        o->overflow = overflow;
        ops->n++;
        j += kind == BF_GET ? 2 : 3;
    }
    return ops;
}

/* Run the operations over value *v (*len bytes, grown as writes need);
 * their replies go to c. */
static void bf_run(conn *c, const bf_ops *ops, uint8_t **v, uint64_t *len)
{
    resp_array(&c->out, ops->n);
    for (int i = 0; i < ops->n; i++) {
        const bf_op *o = &ops->op[i];
        int64_t cur = o->sign ? get_signed(*v, *len, o->offset, o->bits)
                              : (int64_t)get_unsigned(*v, *len, o->offset, o->bits);
        if (o->kind == BF_GET) {
            resp_int(&c->out, cur);
            continue;
        }
        int64_t nv;
        if (o->kind == BF_SET) {
            nv = o->arg;
            int64_t w; /* the value as the field holds it (SAT / FAIL on overflow) */
            if (!field_add(o, 0, o->arg, &w) && o->overflow == OV_FAIL) {
                resp_null(&c->out, c->proto);
                continue;
            }
            nv = w;
        } else if (!field_add(o, cur, o->arg, &nv)) {
            resp_null(&c->out, c->proto);
            continue;
        }
        uint64_t need = (o->offset + o->bits + 7) / 8;
        if (need > *len) {
            *v = xrealloc(*v, need);
            memset(*v + *len, 0, need - *len);
            *len = need;
        }
        set_bits(*v, o->offset, o->bits, (uint64_t)nv);
        resp_int(&c->out, o->kind == BF_SET ? cur : nv);
    }
}

static void rp_bitfield_ro(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *v;
    uint64_t len;
    bool found;
    if (!value_of(c, b, RES(b, p, 0), &v, &len, &found)) {
        return;
    }
    uint8_t *copy = xcalloc(len ? len : 1, 1); /* bf_run may grow its value: a copy */
    if (len > 0) {
        memcpy(copy, v, len);
    }
    bf_run(c, p->aux, &copy, &len);
    free(copy);
}

/* BITFIELD runs alone: read, compute, write back (with the expiry the key
 * had), the value first grown to the furthest field written, as Redis does. */
void cmd_bitfield(conn *c, int argc, char **argv, uint32_t *lens)
{
    bf_ops *ops = bf_parse(c, argc, argv, lens, false);
    if (ops == NULL) {
        return;
    }
    batcher *b = &c->lp->b;
    batch_add_op(b, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, 0, 0, false);
    run_alone(c);
    cudis_result r = b->res[0];
    if (r.status != CUDIS_OK) {
        batch_reset(b);
        reply_engine_error(c, r.status);
        free(ops);
        return;
    }
    uint64_t len = (r.flags & CUDIS_R_VALUE) ? r.val_len : 0, need = len;
    for (int i = 0; i < ops->n; i++) {
        const bf_op *o = &ops->op[i];
        uint64_t end = (o->offset + o->bits + 7) / 8;
        need = o->kind != BF_GET && end > need ? end : need;
    }
    uint8_t *v = xcalloc(need ? need : 1, 1);
    if (len > 0) {
        memcpy(v, b->out + r.val_off, len);
    }
    int64_t exp = r.num == -1 ? 0 : r.num;
    batch_reset(b);
    len = need;
    size_t before = c->out.len;
    bf_run(c, ops, &v, &len);
    if (ops->writes) {
        b->ev = KEV_SETBIT;
        batch_add_op(b, CUDIS_OP_SET, 0, argv[1], lens[1], (const char *)v, (uint32_t)len, 0, exp,
                     true);
        run_alone(c);
        int st = b->res[0].status;
        batch_reset(b);
        if (st != CUDIS_OK) {
            c->out.len = before; /* the write failed: its error instead */
            reply_engine_error(c, st);
        }
    }
    free(v);
    free(ops);
}

/* BITFIELD_RO: GETs only, batched. */
void cmd_bitfield_ro(conn *c, int argc, char **argv, uint32_t *lens)
{
    bf_ops *ops = bf_parse(c, argc, argv, lens, true);
    if (ops != NULL) {
        get_then(c, argv, lens, rp_bitfield_ro)->aux = ops;
    }
}

/* ------------------------------------------------------------------------
 * BITOP (runs alone)
 * ---------------------------------------------------------------------- */

void cmd_bitop(conn *c, int argc, char **argv, uint32_t *lens)
{
    enum { AND, OR, XOR, NOT } op;
    if (util_eq(argv[1], lens[1], "and")) {
        op = AND;
    } else if (util_eq(argv[1], lens[1], "or")) {
        op = OR;
    } else if (util_eq(argv[1], lens[1], "xor")) {
        op = XOR;
    } else if (util_eq(argv[1], lens[1], "not")) {
        op = NOT;
    } else {
        conn_error(c, E_SYNTAX);
        return;
    }
    int nsrc = argc - 3;
    if (op == NOT && nsrc != 1) {
        conn_error(c, "ERR BITOP NOT must be called with a single source key.");
        return;
    }
    batcher *b = &c->lp->b;
    b->ev = KEV_READ; /* the sources are read (a missing one is a keymiss) */
    for (int i = 0; i < nsrc; i++) {
        batch_add_op(b, CUDIS_OP_GET, 0, argv[3 + i], lens[3 + i], NULL, 0, 0, 0, false);
    }
    b->ev = KEV_AUTO;
    run_alone(c);
    uint64_t maxlen = 0;
    for (int i = 0; i < nsrc; i++) {
        if (b->res[i].status != CUDIS_OK) {
            int st = b->res[i].status;
            batch_reset(b);
            reply_engine_error(c, st);
            return;
        }
        uint64_t l = (b->res[i].flags & CUDIS_R_VALUE) ? b->res[i].val_len : 0;
        maxlen = l > maxlen ? l : maxlen;
    }
    uint8_t *res = xcalloc(maxlen ? maxlen : 1, 1);
    for (uint64_t k = 0; k < maxlen; k++) {
        uint8_t acc = 0;
        for (int i = 0; i < nsrc; i++) {
            const cudis_result *r = &b->res[i];
            uint64_t l = (r->flags & CUDIS_R_VALUE) ? r->val_len : 0;
            uint8_t x = k < l ? b->out[r->val_off + k] : 0; /* a missing byte is 0 */
            if (i == 0) {
                acc = op == NOT ? (uint8_t)~x : x;
            } else if (op == AND) {
                acc &= x;
            } else if (op == OR) {
                acc |= x;
            } else {
                acc ^= x;
            }
        }
        res[k] = acc;
    }
    batch_reset(b);
    if (maxlen == 0) {
        batch_add_op(b, CUDIS_OP_DEL, 0, argv[2], lens[2], NULL, 0, 0, 0, true);
    } else {
        batch_add_op(b, CUDIS_OP_SET, 0, argv[2], lens[2], (const char *)res, (uint32_t)maxlen, 0,
                     0, true);
    }
    run_alone(c);
    int st = b->res[0].status;
    batch_reset(b);
    free(res);
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
        return;
    }
    resp_int(&c->out, (long long)maxlen);
}

/* ------------------------------------------------------------------------
 * LCS
 * ---------------------------------------------------------------------- */

static void rp_lcs(conn *c, pend *p, const cudis_batch *b)
{
    const uint8_t *a, *bb;
    uint64_t alen, blen;
    bool fa, fb;
    if (!value_of(c, b, RES(b, p, 0), &a, &alen, &fa) ||
        !value_of(c, b, RES(b, p, 1), &bb, &blen, &fb)) {
        return;
    }
    bool getlen = p->k & 1, getidx = p->k & 2, withlen = p->k & 4;
    long long minlen = p->a;
    if ((unsigned long long)(alen + 1) * (blen + 1) * sizeof(uint32_t) >
        (unsigned long long)srv.cfg.proto_max_bulk_len) {
        conn_error(c, "ERR Insufficient memory, transient memory for LCS exceeds "
                      "proto-max-bulk-len");
        return;
    }
    /* dp[i][j]: LCS of a[0..i) and b[0..j) */
    uint32_t *dp = xcalloc((size_t)((alen + 1) * (blen + 1)), sizeof(uint32_t));
#define DP(i, j) dp[(size_t)(i) * (blen + 1) + (j)]
    for (uint64_t i = 1; i <= alen; i++) {
        for (uint64_t j = 1; j <= blen; j++) {
            DP(i, j) = a[i - 1] == bb[j - 1]         ? DP(i - 1, j - 1) + 1
                       : DP(i - 1, j) > DP(i, j - 1) ? DP(i - 1, j)
                                                     : DP(i, j - 1);
        }
    }
    uint32_t idx = DP(alen, blen);
    if (getlen && !getidx) {
        resp_int(&c->out, idx);
        free(dp);
        return;
    }
    /* walk back from the end (Redis's walk): the string and the ranges */
    char *str = xmalloc(idx + 1);
    sbuf m = {0};
    long nmatch = 0;
    uint64_t i = alen, j = blen;
    uint32_t k = idx;
    uint64_t as = alen, ae = 0, bs = 0, be = 0; /* as == alen: no range open */
    while (i > 0 && j > 0) {
        bool emit = false;
        if (a[i - 1] == bb[j - 1]) {
            str[--k] = (char)a[i - 1];
            if (as == alen) {
                as = ae = i - 1;
                bs = be = j - 1;
            } else if (as == i && bs == j) {
                as--;
                bs--;
            } else {
                emit = true;
            }
            if (as == 0 || bs == 0) {
                emit = true;
            }
            i--;
            j--;
        } else {
            if (DP(i - 1, j) > DP(i, j - 1)) {
                i--;
            } else {
                j--;
            }
            emit = as != alen;
        }
        uint64_t mlen = ae - as + 1;
        if (emit) {
            if (getidx && (minlen == 0 || (long long)mlen >= minlen)) {
                resp_array(&m, withlen ? 3 : 2);
                resp_array(&m, 2);
                resp_int(&m, (long long)as);
                resp_int(&m, (long long)ae);
                resp_array(&m, 2);
                resp_int(&m, (long long)bs);
                resp_int(&m, (long long)be);
                if (withlen) {
                    resp_int(&m, (long long)mlen);
                }
                nmatch++;
            }
            as = alen;
        }
    }
#undef DP
    if (getidx) {
        resp_map(&c->out, 2, c->proto);
        resp_bulks(&c->out, "matches");
        resp_array(&c->out, nmatch);
        sbuf_add(&c->out, m.p, m.len);
        resp_bulks(&c->out, "len");
        resp_int(&c->out, idx);
    } else {
        resp_bulk(&c->out, str, idx);
    }
    sbuf_free(&m);
    free(str);
    free(dp);
}

void cmd_lcs(conn *c, int argc, char **argv, uint32_t *lens)
{
    int k = 0;
    long long minlen = 0;
    for (int j = 3; j < argc; j++) {
        if (util_eq(argv[j], lens[j], "len")) {
            k |= 1;
        } else if (util_eq(argv[j], lens[j], "idx")) {
            k |= 2;
        } else if (util_eq(argv[j], lens[j], "withmatchlen")) {
            k |= 4;
        } else if (util_eq(argv[j], lens[j], "minmatchlen") && j + 1 < argc) {
            if (!util_str2ll(argv[j + 1], lens[j + 1], &minlen)) {
                conn_error(c, E_NOTINT);
                return;
            }
            if (minlen < 0) {
                minlen = 0;
            }
            j++;
        } else {
            conn_error(c, E_SYNTAX);
            return;
        }
    }
    if ((k & 1) && (k & 2)) {
        conn_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, 0, 0, false);
    batch_add_op(b, CUDIS_OP_GET, 0, argv[2], lens[2], NULL, 0, 0, 0, false);
    b->exclusive = true; /* both keys read at one instant */
    pend *p = batch_add_pend(b, c, rp_lcs, i, 2);
    p->k = k;
    p->a = minlen;
}
