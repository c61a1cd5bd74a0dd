/*
 * cmd_sort.c - SORT and SORT_RO over a list, set or sorted set, with BY
 * (a key pattern, or a hash field `pattern->field`; one without `*` keeps
 * the native order), LIMIT, GET (patterns and `#`), ASC/DESC, ALPHA and
 * STORE (a list). It runs alone (engine lock held): one read of the key,
 * one batch reading every BY key, then one reading every GET key, then
 * the reply or the STORE write. Replies, errors and edge cases follow
 * Redis 7.0's sortCommandGeneric; ALPHA compares bytes (Redis's strcoll
 * in the C locale).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

typedef struct selem {
    const uint8_t *v; /* the element */
    uint32_t len;
    double score;
    const uint8_t *by; /* ALPHA with BY: the value compared (NULL: none) */
    uint32_t by_len;
} selem;

typedef struct sort_opts {
    bool desc, alpha, dontsort;
    long long start, count; /* LIMIT; count -1: all */
    const char *by;
    uint32_t by_len;
    int ngets;
    const char **gets;
    uint32_t *get_lens;
    const char *store;
    uint32_t store_len;
} sort_opts;

static bool by_pattern; /* sort_cmp's context (the loop thread's, engine held) */
static bool sort_desc, sort_alpha;

static int bcmp_bytes(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
    int d = memcmp(a, b, alen < blen ? alen : blen);
    return d != 0 ? d : (alen > blen) - (alen < blen);
}

static int sort_cmp(const void *pa, const void *pb)
{
    const selem *a = pa, *b = pb;
    int cmp;
    if (!sort_alpha) {
        cmp = a->score > b->score ? 1 : a->score < b->score ? -1 : 0;
        if (cmp == 0) {
            cmp = bcmp_bytes(a->v, a->len, b->v, b->len); /* deterministic, as Redis */
        }
    } else if (by_pattern) {
        if (a->by == NULL || b->by == NULL) {
            cmp = a->by == b->by ? 0 : a->by == NULL ? -1 : 1;
        } else {
            cmp = bcmp_bytes(a->by, a->by_len, b->by, b->by_len);
        }
    } else {
        cmp = bcmp_bytes(a->v, a->len, b->v, b->len);
    }
    return sort_desc ? -cmp : cmp;
}

/* A key (and hash field) from a pattern and an element, as Redis's
 * lookupKeyByPattern: false when the pattern has no '*' (nothing to
 * look up). *field NULL: the key's string value is wanted. */
static bool pattern_key(const char *pat, uint32_t plen, const uint8_t *el, uint32_t elen, sbuf *key,
                        const char **field, uint32_t *flen)
{
    const char *star = memchr(pat, '*', plen);
    if (star == NULL) {
        return false;
    }
    const char *end = pat + plen;
    *field = NULL;
    *flen = 0;
    for (const char *f = star + 1; f + 2 < end; f++) {
        if (f[0] == '-' && f[1] == '>') {
            *field = f + 2;
            *flen = (uint32_t)(end - f - 2);
            end = f;
            break;
        }
    }
    key->len = 0;
    sbuf_add(key, pat, (size_t)(star - pat));
    sbuf_add(key, el, elen);
    sbuf_add(key, star + 1, (size_t)(end - star - 1));
    return true;
}

/* Read the value a pattern names for each element (vals[i] NULL when
 * none: no '*', no key, the wrong type, no such field); their bytes stay
 * in *store. The engine status of a failed read (replied), else OK. */
static int lookup_pattern(conn *c, const char *pat, uint32_t plen, const selem *e, uint32_t n,
                          const uint8_t **vals, uint32_t *lens, sbuf *store)
{
    batcher *b = &c->lp->b;
    sbuf key = {0};
    const char *field = NULL;
    uint32_t flen = 0;
    uint32_t *op = xmalloc(((size_t)n + 1) * sizeof(*op));
    bool any = false;
    for (uint32_t i = 0; i < n; i++) {
        op[i] = UINT32_MAX;
        if (pattern_key(pat, plen, e[i].v, e[i].len, &key, &field, &flen)) {
            op[i] =
                batch_add_op(b, CUDIS_OP_GET, 0, key.p, (uint32_t)key.len, NULL, 0, 0, 0, false);
            b->ops[op[i]].type = CUDIS_TYPE_ANY;
            any = true;
        }
    }
    int st = CUDIS_OK;
    if (any) {
        run_alone(c);
    }
    /* the values are copied out (the out buffer is the batch's), offsets first */
    size_t *off = xmalloc(((size_t)n + 1) * sizeof(*off));
    for (uint32_t i = 0; i < n; i++) {
        vals[i] = NULL;
        lens[i] = 0;
        off[i] = SIZE_MAX;
        if (op[i] == UINT32_MAX) {
            continue;
        }
        const cudis_result *r = &b->res[op[i]];
        if (r->status != CUDIS_OK) {
            st = r->status;
            break;
        }
        if (!(r->flags & CUDIS_R_VALUE)) {
            continue;
        }
        const uint8_t *v = b->out + r->val_off;
        if (field == NULL && r->type == CUDIS_TYPE_STRING) {
            off[i] = store->len;
            lens[i] = r->val_len;
            sbuf_add(store, v, r->val_len);
        } else if (field != NULL && r->type == CUDIS_TYPE_BIGHASH) {
            off[i] = SIZE_MAX - 1; /* its chunk is read below */
        } else if (field != NULL && r->type == CUDIS_TYPE_HASH) {
            cudis_hentry he;
            if (cudis_hash_find(v, r->val_len, (const uint8_t *)field, flen, &he)) {
                off[i] = store->len;
                lens[i] = he.vlen;
                sbuf_add(store, he.v, he.vlen);
            }
        }
    }
    batch_reset(b);
    for (uint32_t i = 0; st == CUDIS_OK && i < n; i++) {
        if (off[i] == SIZE_MAX - 1) { /* a big hash's field */
            off[i] = SIZE_MAX;
            size_t at = store->len;
            (void)pattern_key(pat, plen, e[i].v, e[i].len, &key, &field, &flen);
            int rc = bighash_field(c, key.p, (uint32_t)key.len, field, flen, store);
            if (rc < 0) {
                st = rc;
            } else if (rc > 0) {
                off[i] = at;
                lens[i] = (uint32_t)(store->len - at);
            }
        }
    }
    sbuf_free(&key);
    for (uint32_t i = 0; i < n; i++) {
        if (off[i] != SIZE_MAX) {
            vals[i] = (const uint8_t *)store->p + off[i];
        }
    }
    free(off);
    free(op);
    if (st != CUDIS_OK) {
        reply_engine_error(c, st);
    }
    return st;
}

/* Redis's strtod check of a score: the whole text, no NaN, no range error. */
static bool sort_score(const uint8_t *v, uint32_t len, double *out)
{
    char buf[128];
    if (len >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, v, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    *out = strtod(buf, &end);
    return *end == '\0' && errno != ERANGE && !isnan(*out);
}

static bool parse_opts(conn *c, int argc, char **argv, uint32_t *lens, bool ro, sort_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->count = -1;
    o->gets = xmalloc((size_t)argc * sizeof(*o->gets));
    o->get_lens = xmalloc((size_t)argc * sizeof(*o->get_lens));
    for (int j = 2; j < argc; j++) {
        int left = argc - j - 1;
        const char *a = argv[j];
        uint32_t n = lens[j];
        if (util_eq(a, n, "asc")) {
            o->desc = false;
        } else if (util_eq(a, n, "desc")) {
            o->desc = true;
        } else if (util_eq(a, n, "alpha")) {
            o->alpha = true;
        } else if (util_eq(a, n, "limit") && left >= 2) {
            if (!util_str2ll(argv[j + 1], lens[j + 1], &o->start) ||
                !util_str2ll(argv[j + 2], lens[j + 2], &o->count)) {
                conn_error(c, "ERR value is not an integer or out of range");
                return false;
            }
            j += 2;
        } else if (!ro && util_eq(a, n, "store") && left >= 1) {
            o->store = argv[j + 1];
            o->store_len = lens[j + 1];
            j++;
        } else if (util_eq(a, n, "by") && left >= 1) {
            o->by = argv[j + 1];
            o->by_len = lens[j + 1];
            if (memchr(o->by, '*', o->by_len) == NULL) {
                o->dontsort = true; /* BY nosort: the native order */
            }
            j++;
        } else if (util_eq(a, n, "get") && left >= 1) {
            o->gets[o->ngets] = argv[j + 1];
            o->get_lens[o->ngets++] = lens[j + 1];
            j++;
        } else {
            conn_error(c, "ERR syntax error");
            return false;
        }
    }
    return true;
}

static void sort_generic(conn *c, int argc, char **argv, uint32_t *lens, bool ro)
{
    sort_opts o;
    if (!parse_opts(c, argc, argv, lens, ro, &o)) {
        free(o.gets);
        free(o.get_lens);
        return;
    }
    batcher *b = &c->lp->b;
    uint32_t i0 = batch_add_op(b, CUDIS_OP_GET, 0, argv[1], lens[1], NULL, 0, 0, 0, false);
    b->ops[i0].type = CUDIS_TYPE_ANY;
    run_alone(c);
    cudis_result r = b->res[0];
    sbuf val = {0};
    if (r.status == CUDIS_OK && (r.flags & CUDIS_R_VALUE)) {
        sbuf_add(&val, b->out + r.val_off, r.val_len);
    }
    batch_reset(b);
    uint8_t type = (r.flags & CUDIS_R_VALUE) ? r.type : CUDIS_TYPE_ANY;
    selem *e = NULL;
    uint32_t n = 0;
    sbuf byvals = {0};
    sbuf *getvals = xcalloc((size_t)o.ngets + 1, sizeof(*getvals)); /* one per GET */
    const uint8_t **gv = NULL;
    uint32_t *gl = NULL;
    if (r.status != CUDIS_OK) {
        reply_engine_error(c, r.status);
        goto out;
    }
    if (type != CUDIS_TYPE_ANY && type != CUDIS_TYPE_LIST && type != CUDIS_TYPE_SET &&
        type != CUDIS_TYPE_ZSET) {
        reply_engine_error(c, CUDIS_E_WRONGTYPE);
        goto out;
    }
    /* a set has no order of its own: STORE (and a script) sort it by
     * bytes, as Redis does so that the result is reproducible */
    if (o.dontsort && type == CUDIS_TYPE_SET && (o.store != NULL || (c->flags & CONN_FAKE))) {
        o.dontsort = false;
        o.alpha = true;
        o.by = NULL;
    }
    uint32_t total =
        type == CUDIS_TYPE_ANY ? 0 : cudis_hash_count((const uint8_t *)val.p, (uint32_t)val.len);
    e = xmalloc(((size_t)total + 1) * sizeof(*e));
    {
        cudis_hentry he;
        COLL_FOREACH(total ? (const uint8_t *)val.p : NULL, (uint32_t)val.len, at, he)
        {
            e[n++] = (selem){he.f, he.flen, 0, NULL, 0};
        }
    }
    /* the range LIMIT asks for, as Redis computes it */
    long long start = o.start < 0 ? 0 : o.start;
    long long end = o.count < 0 ? (long long)n - 1 : start + o.count - 1;
    if (start >= (long long)n) {
        start = (long long)n - 1;
        end = (long long)n - 2;
    }
    if (end >= (long long)n) {
        end = (long long)n - 1;
    }
    if (o.dontsort && (type == CUDIS_TYPE_ZSET || type == CUDIS_TYPE_LIST) && o.desc) {
        for (uint32_t i = 0; i < n / 2; i++) { /* the native order, reversed */
            selem t = e[i];
            e[i] = e[n - 1 - i];
            e[n - 1 - i] = t;
        }
    }
    if (!o.dontsort && n > 0) {
        const uint8_t **bv = NULL;
        uint32_t *bl = NULL;
        if (o.by != NULL) {
            bv = xmalloc((size_t)n * sizeof(*bv));
            bl = xmalloc((size_t)n * sizeof(*bl));
            if (lookup_pattern(c, o.by, o.by_len, e, n, bv, bl, &byvals) != CUDIS_OK) {
                free(bv);
                free(bl);
                goto out;
            }
        }
        bool bad = false;
        for (uint32_t i = 0; i < n; i++) {
            const uint8_t *w = o.by ? bv[i] : e[i].v;
            uint32_t wl = o.by ? bl[i] : e[i].len;
            if (w == NULL) {
                continue; /* no weight: 0, or none for ALPHA */
            }
            if (o.alpha) {
                if (o.by) {
                    e[i].by = w;
                    e[i].by_len = wl;
                }
            } else if (!sort_score(w, wl, &e[i].score)) {
                bad = true;
            }
        }
        free(bv);
        free(bl);
        if (bad) {
            conn_error(c, "ERR One or more scores can't be converted into double");
            goto out;
        }
        by_pattern = o.by != NULL;
        sort_desc = o.desc;
        sort_alpha = o.alpha;
        qsort(e, n, sizeof(*e), sort_cmp);
    }
    long long outn = end >= start ? end - start + 1 : 0;
    selem *sel = e + (outn > 0 ? start : 0);
    uint32_t k = (uint32_t)outn;
    /* GET: each pattern's value for each element in the range */
    if (o.ngets > 0 && k > 0) {
        gv = xmalloc((size_t)k * (size_t)o.ngets * sizeof(*gv));
        gl = xmalloc((size_t)k * (size_t)o.ngets * sizeof(*gl));
        for (int g = 0; g < o.ngets; g++) {
            const char *pat = o.gets[g];
            uint32_t plen = o.get_lens[g];
            if (plen == 1 && pat[0] == '#') {
                for (uint32_t i = 0; i < k; i++) {
                    gv[(size_t)g * k + i] = sel[i].v;
                    gl[(size_t)g * k + i] = sel[i].len;
                }
            } else if (lookup_pattern(c, pat, plen, sel, k, gv + (size_t)g * k, gl + (size_t)g * k,
                                      &getvals[g]) != CUDIS_OK) {
                goto out;
            }
        }
    }
    uint32_t per = o.ngets > 0 ? (uint32_t)o.ngets : 1;
    if (o.store == NULL) {
        resp_array(&c->out, (long)k * per);
        for (uint32_t i = 0; i < k; i++) {
            if (o.ngets == 0) {
                resp_bulk(&c->out, sel[i].v, sel[i].len);
                continue;
            }
            for (int g = 0; g < o.ngets; g++) {
                const uint8_t *v = gv[(size_t)g * k + i];
                if (v == NULL) {
                    resp_null(&c->out, c->proto);
                } else {
                    resp_bulk(&c->out, v, gl[(size_t)g * k + i]);
                }
            }
        }
        goto out;
    }
    /* STORE: dst becomes the list of the answers (a missing GET is "") */
    {
        sbuf lv = {0};
        uint32_t cnt = k * per;
        uint8_t hdr[4] = {(uint8_t)cnt, (uint8_t)(cnt >> 8), (uint8_t)(cnt >> 16),
                          (uint8_t)(cnt >> 24)};
        sbuf_add(&lv, hdr, 4);
        uint8_t vb[5];
        for (uint32_t i = 0; i < k; i++) {
            for (uint32_t g = 0; g < per; g++) {
                const uint8_t *v = o.ngets == 0 ? sel[i].v : gv[(size_t)g * k + i];
                uint32_t vl = o.ngets == 0 ? sel[i].len : gl[(size_t)g * k + i];
                if (v == NULL) {
                    vl = 0;
                }
                sbuf_add(&lv, vb, cudis_varint_put(vb, vl));
                if (vl) {
                    sbuf_add(&lv, v, vl);
                }
                sbuf_add(&lv, "\0", 1);
            }
        }
        uint8_t ev = b->ev;
        b->ev = KEV_QUIET;
        if (cnt == 0) {
            batch_add_op(b, CUDIS_OP_DEL, 0, o.store, o.store_len, NULL, 0, 0, 0, true);
        } else {
            uint32_t i = batch_add_op(b, CUDIS_OP_SET, 0, o.store, o.store_len, lv.p,
                                      (uint32_t)lv.len, 0, 0, true);
            b->ops[i].type = CUDIS_TYPE_LIST;
        }
        b->ev = ev;
        sbuf_free(&lv);
        run_alone(c);
        cudis_result w = b->res[0];
        batch_reset(b);
        if (w.status != CUDIS_OK) {
            reply_engine_error(c, w.status);
        } else {
            if (cnt > 0) {
                keyspace_notify(c->lp, NOTIFY_LIST, "sortstore", b->db, o.store, o.store_len);
            } else if (w.flags & CUDIS_R_DONE) {
                keyspace_notify(c->lp, NOTIFY_GENERIC, "del", b->db, o.store, o.store_len);
            }
            resp_int(&c->out, cnt);
        }
    }
out:
    free(gv);
    free(gl);
    free(e);
    sbuf_free(&val);
    sbuf_free(&byvals);
    for (int g = 0; g < o.ngets; g++) {
        sbuf_free(&getvals[g]);
    }
    free(getvals);
    free(o.gets);
    free(o.get_lens);
}

void cmd_sort(conn *c, int argc, char **argv, uint32_t *lens)
{
    sort_generic(c, argc, argv, lens, false);
}

void cmd_sort_ro(conn *c, int argc, char **argv, uint32_t *lens)
{
    sort_generic(c, argc, argv, lens, true);
}
