/*
 * cmd_dump.c - DUMP, RESTORE and OBJECT: values move between Redis and
 * cudis in Redis's serialization (an RDB string object, the RDB version,
 * its CRC-64), and OBJECT says what Redis would say of a string.
 *
 * DUMP writes a string as Redis does: an integer that fits 32 bits in its
 * integer encoding, one over 20 bytes LZF-compressed when rdbcompression
 * is yes and that saves 4 bytes or more, anything else raw; a hash as
 * RDB_TYPE_HASH (its length, then field and value strings), a set as
 * RDB_TYPE_SET (its members), a list as RDB_TYPE_LIST (its elements),
 * which every Redis reads.
 * RESTORE reads raw, integer and LZF-compressed strings, hashes as
 * RDB_TYPE_HASH and as the listpack Redis 7 DUMPs a small hash to, sets as
 * RDB_TYPE_SET, intsets and 7.2's set listpacks, lists as RDB_TYPE_LIST
 * and Redis 7's quicklists of listpacks, RDB versions up to 11
 * (Redis 7.2 writes 11; these formats did not change), and answers other
 * types with "Bad data format".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crc64.h"
#include "cudis_time.h"
#include "lzf.h"
#include "server_internal.h"

#define RES(b, p, k) (&(b)->res[(p)->op0 + (k)])
#define RDB_VERSION 10 /* Redis 7.0's */
#define RDB_VERSION_MAX 11
#define RDB_TYPE_STRING 0
#define RDB_TYPE_LIST 1
#define RDB_TYPE_SET 2
#define RDB_TYPE_ZSET_2 5
#define RDB_TYPE_HASH 4
#define RDB_TYPE_SET_INTSET 11
#define RDB_TYPE_HASH_LISTPACK 16
#define RDB_TYPE_ZSET_LISTPACK 17
#define RDB_TYPE_LIST_QUICKLIST_2 18
#define RDB_TYPE_SET_LISTPACK 20

static uint64_t crc64(const uint8_t *p, size_t n)
{
    return rdb_crc64(0, p, n);
}

/* ------------------------------------------------------------------------
 * DUMP
 * ---------------------------------------------------------------------- */

void rdb_put_len(sbuf *o, uint64_t n)
{
    uint8_t b[9];
    if (n < 64) {
        b[0] = (uint8_t)n;
        sbuf_add(o, b, 1);
    } else if (n < 16384) {
        b[0] = (uint8_t)(0x40 | (n >> 8));
        b[1] = (uint8_t)n;
        sbuf_add(o, b, 2);
    } else if (n <= UINT32_MAX) {
        b[0] = 0x80;
        for (int i = 0; i < 4; i++) {
            b[1 + i] = (uint8_t)(n >> (24 - 8 * i)); /* big endian */
        }
        sbuf_add(o, b, 5);
    } else {
        b[0] = 0x81;
        for (int i = 0; i < 8; i++) {
            b[1 + i] = (uint8_t)(n >> (56 - 8 * i));
        }
        sbuf_add(o, b, 9);
    }
}

/* The integer encoding Redis gives a string that is the canonical text of
 * an integer fitting 32 bits; false otherwise. */
static bool put_int(sbuf *o, const uint8_t *v, uint32_t n)
{
    long long x;
    char canon[24];
    if (n == 0 || n > 11 || !util_str2ll((const char *)v, n, &x)) {
        return false;
    }
    int cl = snprintf(canon, sizeof(canon), "%lld", x);
    if ((uint32_t)cl != n || memcmp(canon, v, n) != 0) {
        return false;
    }
    uint8_t b[5];
    if (x >= -128 && x <= 127) {
        b[0] = 0xc0;
        b[1] = (uint8_t)(int8_t)x;
        sbuf_add(o, b, 2);
    } else if (x >= -32768 && x <= 32767) {
        b[0] = 0xc1;
        b[1] = (uint8_t)x;
        b[2] = (uint8_t)(x >> 8);
        sbuf_add(o, b, 3);
    } else if (x >= INT32_MIN && x <= INT32_MAX) {
        b[0] = 0xc2;
        for (int i = 0; i < 4; i++) {
            b[1 + i] = (uint8_t)((uint32_t)x >> (8 * i));
        }
        sbuf_add(o, b, 5);
    } else {
        return false;
    }
    return true;
}

/* A string as Redis saves one: integer-encoded when it can be, else raw. */
static void put_str(sbuf *o, const uint8_t *v, uint32_t n)
{
    if (!put_int(o, v, n)) {
        rdb_put_string(o, v, n);
    }
}

/* Redis's LZF string (RDB_ENC_LZF: the compressed and the original
 * length, then the stream) when rdbcompression is yes, the string is over
 * 20 bytes and it compresses to at most n - 4 of them, as rdbSaveRawString
 * decides; false otherwise (nothing written). */
static bool put_lzf(sbuf *o, const void *s, size_t n)
{
    if (!srv.cfg.rdb_compression || n <= 20) {
        return false;
    }
    enum { HDR = 1 + 9 + 9 }; /* the most the encoding byte and two lengths take */
    sbuf_reserve(o, HDR + n); /* the stream goes HDR bytes past the end first */
    size_t start = o->len;
    size_t c = lzf_compress(s, n, (uint8_t *)o->p + start + HDR, n - 4);
    if (c == 0) {
        return false;
    }
    uint8_t enc = 0xc3; /* RDB_ENCVAL << 6 | RDB_ENC_LZF */
    sbuf_add(o, &enc, 1);
    rdb_put_len(o, c);
    rdb_put_len(o, n); /* within the room reserved: no move of o->p */
    memmove(o->p + o->len, o->p + start + HDR, c);
    o->len += c;
    return true;
}

void rdb_put_string(sbuf *o, const void *s, size_t n)
{
    if (put_lzf(o, s, n)) {
        return;
    }
    rdb_put_len(o, n);
    sbuf_add(o, s, n);
}

void rdb_put_footer(sbuf *o)
{
    uint8_t tail[8] = {RDB_VERSION & 0xff, RDB_VERSION >> 8};
    sbuf_add(o, tail, 2);
    uint64_t crc = crc64((const uint8_t *)o->p, o->len);
    for (int i = 0; i < 8; i++) {
        tail[i] = (uint8_t)(crc >> (8 * i));
    }
    sbuf_add(o, tail, 8);
}

/* The type byte, then (in a dump.rdb's record; not in DUMP's payload) the
 * key. */
static void put_type(sbuf *d, uint8_t t, const void *key, uint32_t klen)
{
    sbuf_add(d, &t, 1);
    if (key != NULL) {
        rdb_put_string(d, key, klen);
    }
}

void rdb_put_object(sbuf *d, uint32_t type, const void *key, uint32_t klen, const uint8_t *v,
                    uint32_t n)
{
    if (type == CUDIS_TYPE_ZSET) {
        /* RDB_TYPE_ZSET_2: members with 8-byte binary scores */
        put_type(d, RDB_TYPE_ZSET_2, key, klen);
        rdb_put_len(d, cudis_hash_count(v, n));
        cudis_hentry e;
        COLL_FOREACH(v, n, at, e)
        {
            put_str(d, e.f, e.flen);
            sbuf_add(d, e.v, e.vlen); /* the stored double, little-endian as RDB's */
        }
    } else if (type == CUDIS_TYPE_HASH || type == CUDIS_TYPE_SET ||
               type == CUDIS_TYPE_LIST) {
        bool set = type != CUDIS_TYPE_HASH; /* members (elements) alone */
        put_type(d, type == CUDIS_TYPE_LIST ? RDB_TYPE_LIST : set ? RDB_TYPE_SET : RDB_TYPE_HASH,
                 key, klen);
        rdb_put_len(d, cudis_hash_count(v, n));
        cudis_hentry e;
        COLL_FOREACH(v, n, at, e)
        {
            put_str(d, e.f, e.flen);
            if (!set) {
                put_str(d, e.v, e.vlen);
            }
        }
    } else {
        put_type(d, RDB_TYPE_STRING, key, klen);
        put_str(d, v, n);
    }
}

void dump_payload(sbuf *d, const cudis_result *r, const uint8_t *v)
{
    rdb_put_object(d, r->type, NULL, 0, v, r->val_len);
    rdb_put_footer(d);
}

static void rp_dump(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (r->status != CUDIS_OK) {
        reply_engine_error(c, r->status);
        return;
    }
    if (!(r->flags & CUDIS_R_VALUE)) {
        resp_null(&c->out, c->proto);
        return;
    }
    sbuf d = {0};
    dump_payload(&d, r, b->out + r->val_off);
    resp_bulk(&c->out, d.p, d.len);
    sbuf_free(&d);
}

void cmd_dump(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    bighash_unchunk(c, argv[1], lens[1]); /* a big hash dumps as one item */
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, 0, 0, false);
    b->ops[i].type = CUDIS_TYPE_ANY;
    batch_add_pend(b, c, rp_dump, i, 1);
}

/* ------------------------------------------------------------------------
 * RESTORE (runs alone)
 * ---------------------------------------------------------------------- */

typedef rdb_reader rd;

/* An RDB length, or -1 for a special encoding (*enc set). */
bool rdb_get_len(rd *r, uint64_t *n, int *enc)
{
    if (r->p >= r->end) {
        return false;
    }
    uint8_t b = *r->p++;
    *enc = -1;
    switch (b >> 6) {
    case 0: *n = b & 0x3f; return true;
    case 1:
        if (r->p >= r->end) {
            return false;
        }
        *n = ((uint64_t)(b & 0x3f) << 8) | *r->p++;
        return true;
    case 2: {
        int k = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
        if (k == 0 || r->end - r->p < k) {
            return false;
        }
        uint64_t x = 0;
        for (int i = 0; i < k; i++) {
            x = (x << 8) | *r->p++;
        }
        *n = x;
        return true;
    }
    default: *enc = b & 0x3f; return true;
    }
}

uint8_t *rdb_get_string(rd *r, uint32_t *len)
{
    uint64_t n;
    int enc;
    if (!rdb_get_len(r, &n, &enc)) {
        return NULL;
    }
    if (enc >= 0) {
        long long x;
        int k = enc == 0 ? 1 : enc == 1 ? 2 : enc == 2 ? 4 : 0;
        if (k > 0) {
            if (r->end - r->p < k) {
                return NULL;
            }
            uint32_t u = 0;
            for (int i = 0; i < k; i++) {
                u |= (uint32_t)r->p[i] << (8 * i); /* little endian */
            }
            r->p += k;
            x = k == 1 ? (int8_t)u : k == 2 ? (int16_t)u : (int32_t)u;
            char *s = xmalloc(24);
            *len = (uint32_t)snprintf(s, 24, "%lld", x);
            return (uint8_t *)s;
        }
        if (enc != 3) {
            return NULL;
        }
        uint64_t clen, ulen;
        int e2;
        /* LZF expands at most 264 bytes from a 3-byte back reference: a
         * bigger claim is no LZF stream (and must not get its allocation) */
        if (!rdb_get_len(r, &clen, &e2) || e2 >= 0 || !rdb_get_len(r, &ulen, &e2) || e2 >= 0 ||
            (uint64_t)(r->end - r->p) < clen || ulen > UINT32_MAX || ulen > clen * 88 + 32) {
            return NULL;
        }
        uint8_t *s = xmalloc(ulen ? ulen : 1);
        if (!lzf_decompress(r->p, clen, s, ulen)) {
            free(s);
            return NULL;
        }
        r->p += clen;
        *len = (uint32_t)ulen;
        return s;
    }
    if ((uint64_t)(r->end - r->p) < n || n > UINT32_MAX) {
        return NULL;
    }
    uint8_t *s = xmalloc(n ? n : 1);
    memcpy(s, r->p, n);
    r->p += n;
    *len = (uint32_t)n;
    return s;
}

/* What a collection being restored is: fields with values, members, or
 * elements (which alone may repeat). */
enum { RD_HASH, RD_SET, RD_LIST };

/* A collection being restored: the encoded value (cudis_hash.h) in o.
 * A field (member) given twice is found once the whole collection is in
 * (fields_distinct: one pass, where a search per add made a big set's
 * load quadratic). */
static bool hash_add(sbuf *o, int what, const uint8_t *f, uint32_t flen, const uint8_t *v,
                     uint32_t vlen)
{
    (void)what;
    uint8_t lb[5];
    sbuf_add(o, lb, cudis_varint_put(lb, flen));
    sbuf_add(o, f, flen);
    sbuf_add(o, lb, cudis_varint_put(lb, vlen));
    sbuf_add(o, v, vlen);
    uint32_t n = cudis_hash_count((const uint8_t *)o->p, (uint32_t)o->len) + 1;
    for (int i = 0; i < 4; i++) {
        o->p[i] = (char)(uint8_t)(n >> (8 * i));
    }
    return true;
}

/* RDB_TYPE_HASH: a length, then field and value strings; RDB_TYPE_SET,
 * RDB_TYPE_LIST: member (element) strings alone. */
static bool get_hash(rd *r, sbuf *o, int what)
{
    bool set = what != RD_HASH;
    uint64_t n;
    int enc;
    if (!rdb_get_len(r, &n, &enc) || enc >= 0 || n == 0) {
        return false;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint32_t fl, vl = 0;
        uint8_t *f = rdb_get_string(r, &fl);
        uint8_t *v = f == NULL ? NULL : set ? xmalloc(1) : rdb_get_string(r, &vl);
        bool ok = v != NULL && hash_add(o, what, f, fl, v, vl);
        free(f);
        free(v);
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* RDB_TYPE_ZSET_2: a length, then member strings each with an 8-byte
 * binary double; the entries are put in order after (zset_normalize). */
static bool get_zset2(rd *r, sbuf *o)
{
    uint64_t n;
    int enc;
    if (!rdb_get_len(r, &n, &enc) || enc >= 0 || n == 0) {
        return false;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint32_t fl;
        uint8_t *f = rdb_get_string(r, &fl);
        double s;
        bool ok = f != NULL && r->end - r->p >= 8;
        if (ok) {
            memcpy(&s, r->p, 8);
            r->p += 8;
            ok = !isnan(s) && hash_add(o, RD_HASH, f, fl, (const uint8_t *)&s, 8);
        }
        free(f);
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* One listpack entry at *p (before end): a string (*s, *n) or an integer
 * (*s NULL, *x). Advances past the entry and its back length. */
static bool lp_entry(const uint8_t **pp, const uint8_t *end, const uint8_t **s, uint32_t *n,
                     int64_t *x)
{
    const uint8_t *p = *pp;
    size_t avail = (size_t)(end - p);
    uint64_t len = 0, hdr = 1;
    *s = NULL;
    uint8_t b = p[0];
    if ((b & 0x80) == 0) {
        *x = b & 0x7f;
    } else if ((b & 0xc0) == 0x80) {
        len = b & 0x3f;
    } else if ((b & 0xe0) == 0xc0) {
        if (avail < 2) {
            return false;
        }
        uint32_t u = ((uint32_t)(b & 0x1f) << 8) | p[1];
        *x = u >= 4096 ? (int64_t)u - 8192 : (int64_t)u;
        hdr = 2;
    } else if ((b & 0xf0) == 0xe0) {
        if (avail < 2) {
            return false;
        }
        len = ((uint64_t)(b & 0x0f) << 8) | p[1];
        hdr = 2;
    } else if (b == 0xf0) {
        if (avail < 5) {
            return false;
        }
        len = (uint64_t)p[1] | (uint64_t)p[2] << 8 | (uint64_t)p[3] << 16 | (uint64_t)p[4] << 24;
        hdr = 5;
    } else if (b >= 0xf1 && b <= 0xf4) {
        int k = b == 0xf1 ? 2 : b == 0xf2 ? 3 : b == 0xf3 ? 4 : 8;
        if (avail < (size_t)k + 1) {
            return false;
        }
        uint64_t u = 0;
        for (int i = 0; i < k; i++) {
            u |= (uint64_t)p[1 + i] << (8 * i);
        }
        if (k < 8 && (u >> (8 * k - 1)) & 1) {
            u |= ~0ull << (8 * k); /* sign-extend */
        }
        *x = (int64_t)u;
        hdr = 1 + (uint64_t)k;
    } else {
        return false;
    }
    if ((b & 0xc0) == 0x80 || (b & 0xf0) == 0xe0 || b == 0xf0) {
        if (avail - hdr < len) {
            return false;
        }
        *s = p + hdr;
        *n = (uint32_t)len;
    }
    uint64_t elen = hdr + (*s ? len : 0);
    uint64_t blen = elen < 128         ? 1
                    : elen < 16384     ? 2
                    : elen < 2097152   ? 3
                    : elen < 268435456 ? 4
                                       : 5;
    if (avail < elen + blen) {
        return false;
    }
    *pp = p + elen + blen;
    return true;
}

/* RDB_TYPE_SET_INTSET: one string holding an intset (encoding 2, 4 or 8
 * bytes, length, the integers ascending, little-endian). */
static bool get_intset(rd *r, sbuf *o)
{
    uint32_t n;
    uint8_t *is = rdb_get_string(r, &n);
    bool ok = is != NULL && n >= 8;
    uint32_t enc = ok ? (uint32_t)cudis_read_le(is, 4) : 0,
             len = ok ? (uint32_t)cudis_read_le(is + 4, 4) : 0;
    ok = ok && (enc == 2 || enc == 4 || enc == 8) && len > 0 && (uint64_t)len * enc == n - 8;
    for (uint32_t i = 0; ok && i < len; i++) {
        uint64_t u = cudis_read_le(is + 8 + (size_t)i * enc, (int)enc);
        int64_t x = enc == 2 ? (int16_t)u : enc == 4 ? (int32_t)u : (int64_t)u;
        char num[24];
        int l = snprintf(num, sizeof(num), "%lld", (long long)x);
        ok = hash_add(o, RD_SET, (const uint8_t *)num, (uint32_t)l, (const uint8_t *)"", 0);
    }
    free(is);
    return ok;
}

/* RDB_TYPE_HASH_LISTPACK: one string holding a listpack of field, value,
 * field, value...; RDB_TYPE_SET_LISTPACK (set, Redis 7.2): of members. */
static bool get_hash_listpack(rd *r, sbuf *o, int what)
{
    bool set = what != RD_HASH;
    uint32_t n;
    uint8_t *lp = rdb_get_string(r, &n);
    bool ok = lp != NULL && n >= 7 && lp[n - 1] == 0xff &&
              (uint32_t)(lp[0] | lp[1] << 8 | lp[2] << 16 | (uint32_t)lp[3] << 24) == n;
    const uint8_t *p = lp ? lp + 6 : NULL, *end = lp ? lp + n - 1 : NULL;
    uint32_t k = 0;
    while (ok && p < end) {
        const uint8_t *s[2];
        uint32_t l[2];
        int64_t x[2];
        char num[2][24];
        s[1] = (const uint8_t *)"";
        l[1] = 0;
        for (int i = 0; i < (set ? 1 : 2) && ok; i++) {
            ok = p < end && lp_entry(&p, end, &s[i], &l[i], &x[i]);
            if (ok && s[i] == NULL) {
                l[i] = (uint32_t)snprintf(num[i], sizeof(num[i]), "%lld", (long long)x[i]);
                s[i] = (const uint8_t *)num[i];
            }
        }
        ok = ok && hash_add(o, what, s[0], l[0], s[1], l[1]);
        k++;
    }
    free(lp);
    return ok && k > 0;
}

/* RDB_TYPE_ZSET_LISTPACK: one string holding a listpack of member,
 * score (text or integer), member, score... */
static bool get_zset_listpack(rd *r, sbuf *o)
{
    sbuf pairs = {0};
    sbuf_add(&pairs, "\0\0\0\0", CUDIS_HASH_HDR);
    bool ok = get_hash_listpack(r, &pairs, RD_HASH);
    cudis_hentry e;
    COLL_FOREACH(ok ? (const uint8_t *)pairs.p : NULL, (uint32_t)pairs.len, at, e)
    {
        char buf[64];
        char *end;
        double s = 0;
        ok = e.vlen > 0 && e.vlen < sizeof(buf);
        if (ok) {
            memcpy(buf, e.v, e.vlen);
            buf[e.vlen] = '\0';
            s = strtod(buf, &end);
            ok = end == buf + e.vlen && !isnan(s);
        }
        ok = ok && hash_add(o, RD_HASH, e.f, e.flen, (const uint8_t *)&s, 8);
        if (!ok) {
            break;
        }
    }
    sbuf_free(&pairs);
    return ok;
}

/* RDB_TYPE_LIST_QUICKLIST_2: nodes, each a container (1 plain: one
 * element; 2 packed: a listpack of elements). */
static bool get_quicklist(rd *r, sbuf *o)
{
    uint64_t nodes;
    int enc;
    if (!rdb_get_len(r, &nodes, &enc) || enc >= 0 || nodes == 0) {
        return false;
    }
    for (uint64_t i = 0; i < nodes; i++) {
        uint64_t container;
        if (!rdb_get_len(r, &container, &enc) || enc >= 0) {
            return false;
        }
        if (container == 1) {
            uint32_t n;
            uint8_t *v = rdb_get_string(r, &n);
            bool ok = v != NULL && hash_add(o, RD_LIST, v, n, (const uint8_t *)"", 0);
            free(v);
            if (!ok) {
                return false;
            }
        } else if (container != 2 || !get_hash_listpack(r, o, RD_LIST)) {
            return false;
        }
    }
    return true;
}

/* Whether no field (member) of the encoded collection h stands twice. */
static bool fields_distinct(const uint8_t *h, uint32_t n)
{
    cudis_hix x;
    if (!cudis_hix_build(&x, NULL, h, CUDIS_HASH_HDR, n)) {
        return false;
    }
    uint32_t distinct = 0;
    for (uint32_t i = 0; i <= x.mask; i++) {
        distinct += x.slot[i] != 0;
    }
    cudis_hix_free(&x);
    return distinct == cudis_hash_count(h, n);
}

bool rdb_get_object(rd *r, uint8_t rdbtype, uint8_t *typep, uint8_t **vp, uint32_t *vlenp)
{
    uint32_t vlen = 0;
    uint8_t *v = NULL;
    uint8_t type = CUDIS_TYPE_STRING;
    if (rdbtype == RDB_TYPE_STRING) {
        v = rdb_get_string(r, &vlen);
    } else {
        sbuf h = {0};
        sbuf_add(&h, "\0\0\0\0", CUDIS_HASH_HDR);
        bool ok = false;
        type = CUDIS_TYPE_SET;
        switch (rdbtype) {
        case RDB_TYPE_HASH:
            type = CUDIS_TYPE_HASH;
            ok = get_hash(r, &h, RD_HASH);
            break;
        case RDB_TYPE_HASH_LISTPACK:
            type = CUDIS_TYPE_HASH;
            ok = get_hash_listpack(r, &h, RD_HASH);
            break;
        case RDB_TYPE_ZSET_2:
        case RDB_TYPE_ZSET_LISTPACK:
            type = CUDIS_TYPE_ZSET;
            ok = rdbtype == RDB_TYPE_ZSET_2 ? get_zset2(r, &h) : get_zset_listpack(r, &h);
            if (ok) {
                zset_normalize(&h);
            }
            break;
        case RDB_TYPE_SET: ok = get_hash(r, &h, RD_SET); break;
        case RDB_TYPE_SET_INTSET: ok = get_intset(r, &h); break;
        case RDB_TYPE_SET_LISTPACK: ok = get_hash_listpack(r, &h, RD_SET); break;
        case RDB_TYPE_LIST:
        case RDB_TYPE_LIST_QUICKLIST_2:
            type = CUDIS_TYPE_LIST;
            ok = rdbtype == RDB_TYPE_LIST ? get_hash(r, &h, RD_LIST) : get_quicklist(r, &h);
            break;
        default: break;
        }
        ok = ok && (type == CUDIS_TYPE_LIST || fields_distinct((const uint8_t *)h.p, (uint32_t)h.len));
        if (ok) {
            v = (uint8_t *)h.p;
            vlen = (uint32_t)h.len;
        } else {
            sbuf_free(&h);
        }
    }
    *typep = type;
    *vp = v;
    *vlenp = vlen;
    return v != NULL;
}

bool rdb_footer_ok(const uint8_t *p, size_t n)
{
    if (n < 10) {
        return false;
    }
    unsigned ver = p[n - 10] | (unsigned)p[n - 9] << 8;
    uint64_t crc = 0;
    for (int i = 0; i < 8; i++) {
        crc |= (uint64_t)p[n - 8 + i] << (8 * i);
    }
    return ver <= RDB_VERSION_MAX && crc64(p, n - 8) == crc;
}

/* Whether RESTORE's key is there (read alone). */
static bool key_there(conn *c, char **argv, uint32_t *lens)
{
    batcher *b = &c->lp->b;
    batch_add_op(b, CUDIS_OP_EXISTS, 0, argv[1], lens[1], NULL, 0, 0, 0, false);
    run_alone(c);
    bool there = b->res[0].flags & CUDIS_R_FOUND;
    batch_reset(b);
    return there;
}

/* RESTORE refused with err, unless BUSYKEY comes first (Redis's order). */
static void restore_refuse(conn *c, char **argv, uint32_t *lens, bool replace, const char *err)
{
    if (!replace && key_there(c, argv, lens)) {
        err = "BUSYKEY Target key name already exists.";
    }
    conn_error(c, err);
}

/* RESTORE as MIGRATE sends it in cluster mode: ASKING implied. */
void cmd_restore_asking(conn *c, int argc, char **argv, uint32_t *lens)
{
    cmd_restore(c, argc, argv, lens);
}

void cmd_restore(conn *c, int argc, char **argv, uint32_t *lens)
{
    bool replace = false, absttl = false;
    long long idle = -1, freq = -1, ttl;
    for (int j = 4; j < argc; j++) {
        bool more = j + 1 < argc;
        if (util_eq(argv[j], lens[j], "replace")) {
            replace = true;
        } else if (util_eq(argv[j], lens[j], "absttl")) {
            absttl = true;
        } else if (util_eq(argv[j], lens[j], "idletime") && more && freq == -1) {
            if (!arg_ll(c, argv[j + 1], lens[j + 1], &idle)) {
                return;
            }
            if (idle < 0) {
                conn_error(c, "ERR Invalid IDLETIME value, must be >= 0");
                return;
            }
            j++;
        } else if (util_eq(argv[j], lens[j], "freq") && more && idle == -1) {
            if (!arg_ll(c, argv[j + 1], lens[j + 1], &freq)) {
                return;
            }
            if (freq < 0 || freq > 255) {
                conn_error(c, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return;
            }
            j++;
        } else {
            conn_error(c, "ERR syntax error");
            return;
        }
    }
    batcher *b = &c->lp->b;
    /* Redis answers BUSYKEY before any error of the TTL or the payload; the
     * key's presence is read only when one of those needs the precedence,
     * and otherwise decided by the write itself (SET NX): one engine batch
     * a RESTORE, which resharding sends for every key */
    const char *err = NULL;
    if (!util_str2ll(argv[2], lens[2], &ttl)) {
        err = "ERR value is not an integer or out of range";
    } else if (ttl < 0) {
        err = "ERR Invalid TTL value, must be >= 0";
    }
    const uint8_t *pl = (const uint8_t *)argv[3];
    uint32_t n = lens[3];
    if (err == NULL && !rdb_footer_ok(pl, n)) {
        err = "ERR DUMP payload version or checksum are wrong";
    }
    if (err != NULL) {
        restore_refuse(c, argv, lens, replace, err);
        return;
    }
    rd r = {pl + 1, pl + n - 10};
    uint32_t vlen = 0;
    uint8_t *v = NULL;
    uint8_t type = CUDIS_TYPE_STRING;
    (void)rdb_get_object(&r, pl[0], &type, &v, &vlen);
    if (v == NULL || r.p != r.end) {
        free(v);
        restore_refuse(c, argv, lens, replace, "ERR Bad data format");
        return;
    }
    int64_t now = cudis_now_ms();
    int64_t exp = ttl == 0 ? 0 : absttl ? ttl : now + ttl;
    if (exp != 0 && exp <= now) { /* already expired: the key just goes */
        free(v);
        if (!replace && key_there(c, argv, lens)) {
            conn_error(c, "BUSYKEY Target key name already exists.");
            return;
        }
        batch_add_op(b, CUDIS_OP_DEL, 0, argv[1], lens[1], NULL, 0, 0, 0, true);
        run_alone(c);
        batch_reset(b);
        reply_ok(c);
        return;
    }
    b->ev = KEV_RESTORE;
    int64_t aged = server_aged_arg(idle, freq, now);
    uint32_t i =
        batch_add_op(b, CUDIS_OP_SET, (replace ? 0 : CUDIS_F_NX) | (aged >= 0 ? CUDIS_F_AGED : 0),
                     argv[1], lens[1], (const char *)v, vlen, aged >= 0 ? aged : 0, exp, true);
    b->ops[i].type = type;
    run_alone(c);
    int st = b->res[0].status;
    bool busy = st == CUDIS_OK && !replace && !(b->res[0].flags & CUDIS_R_DONE);
    batch_reset(b);
    free(v);
    if (busy) {
        conn_error(c, "BUSYKEY Target key name already exists.");
    } else if (st != CUDIS_OK) {
        reply_engine_error(c, st);
    } else {
        reply_ok(c);
    }
}

/* ------------------------------------------------------------------------
 * OBJECT
 * ---------------------------------------------------------------------- */

enum { OBJ_ENCODING, OBJ_REFCOUNT };

static void rp_object(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (r->status != CUDIS_OK) {
        reply_engine_error(c, r->status);
        return;
    }
    if (!(r->flags & CUDIS_R_VALUE)) {
        resp_null(&c->out, c->proto); /* Redis looks the key up first */
        return;
    }
    const char *v = (const char *)b->out + r->val_off;
    long long x;
    bool is_int =
        r->type == CUDIS_TYPE_STRING && r->val_len <= 20 && util_str2ll(v, r->val_len, &x);
    if (r->type == CUDIS_TYPE_LIST) {
        if (p->k == OBJ_ENCODING) {
            resp_bulks(&c->out, "quicklist"); /* Redis 7.0's only list encoding */
        } else {
            resp_int(&c->out, 1);
        }
        return;
    }
    if (r->type == CUDIS_TYPE_ZSET) {
        if (p->k == OBJ_ENCODING) {
            resp_bulks(&c->out,
                       zset_is_listpack((const uint8_t *)v, r->val_len) ? "listpack" : "skiplist");
        } else {
            resp_int(&c->out, 1);
        }
        return;
    }
    if (r->type == CUDIS_TYPE_BIGHASH) { /* kept in chunks (bighash.c) */
        if (p->k == OBJ_ENCODING) {
            resp_bulks(&c->out, "hashtable");
        } else {
            resp_int(&c->out, 1);
        }
        return;
    }
    if (r->type == CUDIS_TYPE_HASH || r->type == CUDIS_TYPE_SET) {
        const uint8_t *h = (const uint8_t *)v;
        if (p->k == OBJ_ENCODING) {
            bool small = r->type == CUDIS_TYPE_HASH ? hash_is_small(h, r->val_len)
                                                    : set_is_intset(h, r->val_len);
            resp_bulks(&c->out, !small                       ? "hashtable"
                                : r->type == CUDIS_TYPE_HASH ? "listpack"
                                                             : "intset");
        } else {
            resp_int(&c->out, 1);
        }
        return;
    }
    switch (p->k) {
    case OBJ_ENCODING:
        resp_bulks(&c->out, is_int ? "int" : r->val_len <= 44 ? "embstr" : "raw");
        break;
    case OBJ_REFCOUNT:
        /* Redis shares the integers 0..9999 */
        resp_int(&c->out, is_int && x >= 0 && x < 10000 ? 2147483647 : 1);
        break;
    }
}

static void object_generic(conn *c, char **argv, uint32_t *lens, int what)
{
    batcher *b = &c->lp->b;
    uint32_t i =
        batch_add_op(b, CUDIS_OP_GET, CUDIS_F_NOTOUCH, argv[2], lens[2], NULL, 0, 0, 0, false);
    b->ops[i].type = CUDIS_TYPE_ANY;
    batch_add_pend(b, c, rp_object, i, 1)->k = what;
}

void cmd_object_encoding(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    object_generic(c, argv, lens, OBJ_ENCODING);
}

void cmd_object_refcount(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    object_generic(c, argv, lens, OBJ_REFCOUNT);
}

/* The access counter the LFU policies keep (read without touching it). */
static void rp_object_freq(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (r->status != CUDIS_OK) {
        reply_engine_error(c, r->status);
    } else if (!(r->flags & CUDIS_R_FOUND)) {
        resp_null(&c->out, c->proto); /* Redis looks the key up first */
    } else if (strstr(server_policy_shown(), "lfu") == NULL) {
        conn_error(c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. "
                      "Please note that when switching between policies at runtime LRU and LFU "
                      "data will take some time to adjust.");
    } else {
        resp_int(&c->out, r->num);
    }
}

void cmd_object_freq(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    batcher *b = &c->lp->b;
    uint32_t i = batch_add_op(b, CUDIS_OP_EXISTS, 0, argv[2], lens[2], NULL, 0, 0, 0, false);
    batch_add_pend(b, c, rp_object_freq, i, 1);
}

/* Seconds since the key's last access, from its recency stamp. */
static void rp_object_idletime(conn *c, pend *p, const cudis_batch *b)
{
    const cudis_result *r = RES(b, p, 0);
    if (r->status != CUDIS_OK) {
        reply_engine_error(c, r->status);
    } else if (!(r->flags & CUDIS_R_FOUND)) {
        resp_null(&c->out, c->proto);
    } else if (strstr(server_policy_shown(), "lfu") != NULL) {
        conn_error(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. Please "
                      "note that when switching between policies at runtime LRU and LFU data "
                      "will take some time to adjust.");
    } else if (engine_clock(srv.eng) == 0) {
        conn_errorf(c,
                    "ERR OBJECT IDLETIME is not available: the %s engine keeps no access time "
                    "per key",
                    engine_name(srv.eng));
    } else {
        resp_int(&c->out, observe_idle_seconds((uint32_t)r->num, cudis_now_ms()));
    }
}

void cmd_object_idletime(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    batcher *b = &c->lp->b;
    uint32_t i =
        batch_add_op(b, CUDIS_OP_EXISTS, CUDIS_F_STAMP, argv[2], lens[2], NULL, 0, 0, 0, false);
    batch_add_pend(b, c, rp_object_idletime, i, 1);
}
