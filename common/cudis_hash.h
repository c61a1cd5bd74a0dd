/*
 * cudis_hash.h - how a hash's fields are encoded in one engine value, and
 * the field edits every store applies to it (through cudis_plan_op and
 * cudis_plan_build, cudis_op.h). Host compiler and nvcc (CUDIS_HD).
 *
 * A hash is one item of type CUDIS_TYPE_HASH whose value is
 *     count    uint32, little-endian: the number of fields
 *     entry*   varint(flen) field varint(vlen) value      (count of them)
 * with varints in LEB128 (7 bits a byte, low first, at most 5 bytes). A
 * field set again keeps its place; new fields go to the end (the order
 * HGETALL shows, as Redis's listpack does). Per field this costs 2 bytes
 * of lengths below 128 bytes, about what Redis's listpack costs.
 *
 * Every parse is bounded by the lengths it is given: a malformed value or
 * argument makes the functions return false / 0, never read out of range.
 *
 * Edits (the op's value argument, built by the server):
 *     HSET   entry*  (same entry shape, no count; a field given twice: the
 *            last value wins, counted once)
 *     HDEL   (varint(flen) field)*
 *     HINCR  the raw field bytes; the new value is the plan's number text
 */
#ifndef CUDIS_HASH_H
#define CUDIS_HASH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cudis_hd.h"

#if !CUDIS_DEVICE_CODE
#include <stdlib.h>
#endif

#define CUDIS_HASH_HDR 4u

/* Which edit a hash write applies. */
enum { CUDIS_HEDIT_SET = 1, CUDIS_HEDIT_DEL, CUDIS_HEDIT_INCR };

/* ------------------------------------------------------------------------
 * Varints and entries
 * ---------------------------------------------------------------------- */

CUDIS_HD static inline uint32_t cudis_varint_len(uint32_t v)
{
    uint32_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Write v at p (cudis_varint_len(v) bytes); returns the bytes written. */
CUDIS_HD static inline uint32_t cudis_varint_put(uint8_t *p, uint32_t v)
{
    uint32_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Read a varint from at most avail bytes: the bytes it took, 0 if malformed. */
CUDIS_HD static inline uint32_t cudis_varint_get(const uint8_t *p, uint32_t avail, uint32_t *v)
{
    uint32_t x = 0;
    for (uint32_t i = 0; i < 5 && i < avail; i++) {
        x |= (uint32_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    return 0;
}

/* One parsed entry: field and value, and the entry's total size. */
typedef struct cudis_hentry {
    const uint8_t *f, *v;
    uint32_t flen, vlen;
    uint32_t size;
} cudis_hentry;

/* Parse the entry at p (avail bytes left). with_val = false parses the
 * HDEL shape (a field alone). False when it does not fit. */
CUDIS_HD static inline bool cudis_hentry_at(const uint8_t *p, uint32_t avail, bool with_val,
                                            cudis_hentry *e)
{
    uint32_t n = cudis_varint_get(p, avail, &e->flen);
    if (n == 0 || e->flen > avail - n) {
        return false;
    }
    e->f = p + n;
    uint32_t at = n + e->flen;
    e->v = p + at;
    e->vlen = 0;
    if (with_val) {
        uint32_t m = cudis_varint_get(p + at, avail - at, &e->vlen);
        if (m == 0 || e->vlen > avail - at - m) {
            return false;
        }
        e->v = p + at + m;
        at += m + e->vlen;
    }
    e->size = at;
    return true;
}

CUDIS_HD static inline bool cudis_bytes_same(const uint8_t *a, uint32_t alen, const uint8_t *b,
                                             uint32_t blen)
{
    if (alen != blen) {
        return false;
    }
#if CUDIS_DEVICE_CODE
    for (uint32_t i = 0; i < alen; i++) {
        if (a[i] != b[i]) {
            return false;
        }
    }
    return true;
#else
    return alen == 0 || memcmp(a, b, alen) == 0;
#endif
}

/* The number of fields of an encoded hash (0 for one too short). */
CUDIS_HD static inline uint32_t cudis_hash_count(const uint8_t *h, uint32_t len)
{
    return len < CUDIS_HASH_HDR ? 0 : (uint32_t)cudis_read_le(h, 4);
}

/* Find a field: true with its entry in *e. */
CUDIS_HD static inline bool cudis_hash_find(const uint8_t *h, uint32_t len, const uint8_t *f,
                                            uint32_t flen, cudis_hentry *e)
{
    for (uint32_t at = CUDIS_HASH_HDR; at < len; at += e->size) {
        if (!cudis_hentry_at(h + at, len - at, true, e)) {
            return false;
        }
        if (cudis_bytes_same(e->f, e->flen, f, flen)) {
            return true;
        }
    }
    return false;
}

/* Whether an encoded hash is well-formed: its count entries fill it. */
CUDIS_HD static inline bool cudis_hash_valid(const uint8_t *h, uint32_t len)
{
    if (len < CUDIS_HASH_HDR) {
        return false;
    }
    uint32_t n = 0;
    cudis_hentry e;
    for (uint32_t at = CUDIS_HASH_HDR; at < len; at += e.size) {
        if (!cudis_hentry_at(h + at, len - at, true, &e)) {
            return false;
        }
        n++;
    }
    return n == cudis_hash_count(h, len);
}

/* ------------------------------------------------------------------------
 * Edits
 * ---------------------------------------------------------------------- */

/* An edit list: the op's argument, read one edit at a time. */
typedef struct cudis_hedits {
    uint8_t kind; /* CUDIS_HEDIT_* */
    const uint8_t *arg;
    uint32_t arg_len;
    const uint8_t *num; /* INCR: the new value's text */
    uint32_t num_len;
} cudis_hedits;

/* The edit at *at (advanced past it): false at the end or when malformed
 * (*bad set then). */
CUDIS_HD static inline bool cudis_hedit_next(const cudis_hedits *ed, uint32_t *at, cudis_hentry *e,
                                             bool *bad)
{
    if (*at >= ed->arg_len && !(ed->kind == CUDIS_HEDIT_INCR && *at == 0)) {
        return false;
    }
    if (ed->kind == CUDIS_HEDIT_INCR) {
        e->f = ed->arg;
        e->flen = ed->arg_len;
        e->v = ed->num;
        e->vlen = ed->num_len;
        e->size = ed->arg_len;
        *at = ed->arg_len + 1;
        return true;
    }
    if (!cudis_hentry_at(ed->arg + *at, ed->arg_len - *at, ed->kind == CUDIS_HEDIT_SET, e)) {
        *bad = true;
        return false;
    }
    *at += e->size;
    return true;
}

/* The last edit of field f (for SET: the value that wins). */
CUDIS_HD static inline bool cudis_hedit_find(const cudis_hedits *ed, const uint8_t *f,
                                             uint32_t flen, uint32_t from, cudis_hentry *out)
{
    bool found = false, bad = false;
    cudis_hentry e;
    uint32_t at = from;
    while (cudis_hedit_next(ed, &at, &e, &bad)) {
        if (cudis_bytes_same(e.f, e.flen, f, flen)) {
            *out = e;
            found = true;
        }
    }
    return found;
}

/* Whether field f has an edit before position `before`. */
CUDIS_HD static inline bool cudis_hedit_seen(const cudis_hedits *ed, const uint8_t *f,
                                             uint32_t flen, uint32_t before)
{
    bool bad = false;
    cudis_hentry e;
    uint32_t at = 0;
    while (at < before && cudis_hedit_next(ed, &at, &e, &bad)) {
        if (cudis_bytes_same(e.f, e.flen, f, flen)) {
            return true;
        }
    }
    return false;
}

/* Copy n bytes into a value being built: relaxed byte stores under TSan
 * (an optimistic reader may still read a victim's chunk), 8-byte words
 * on the device, memcpy on the host. */
CUDIS_HD static inline void cudis_put_bytes(uint8_t *dst, const uint8_t *src, uint32_t n)
{
#if CUDIS_DEVICE_CODE
    for (uint32_t i = 0; i < n; i++) {
        dst[i] = src[i];
    }
#elif CUDIS_TSAN
    for (uint32_t i = 0; i < n; i++) {
        __atomic_store_n(dst + i, src[i], __ATOMIC_RELAXED);
    }
#else
    if (n) {
        memcpy(dst, src, n);
    }
#endif
}

CUDIS_HD static inline uint32_t cudis_put_entry(uint8_t *dst, const uint8_t *f, uint32_t flen,
                                                const uint8_t *v, uint32_t vlen)
{
    uint8_t lb[10];
    uint32_t a = cudis_varint_put(lb, flen);
    uint32_t b = cudis_varint_put(lb + a, vlen);
    if (dst != 0) {
        cudis_put_bytes(dst, lb, a);
        cudis_put_bytes(dst + a, f, flen);
        cudis_put_bytes(dst + a + flen, lb + a, b);
        cudis_put_bytes(dst + a + flen + b, v, vlen);
    }
    return a + flen + b + vlen;
}

/* The outcome of applying edits: the new value's length and count, and
 * how many fields were added / removed / replaced. */
typedef struct cudis_happly {
    uint64_t len;
    uint32_t count;
    uint32_t added, removed, replaced;
    uint32_t edits; /* edits read */
    bool bad;       /* malformed value or edits: nothing may be written */
} cudis_happly;

/* Tables of fields for cudis_hash_apply's searches (host only: on the
 * device they stay walks). An index of entries by field: slot holds 1 +
 * the entry's number (0: empty), at[i] its offset in the bytes indexed;
 * for edits, last[i] the offset of the field's last edit (at[i] is its
 * first). With them a big edit of a big hash costs O(n + m), not O(n * m):
 * HSET of 1,000 fields into 20,000 compared each field with every other. */
typedef struct cudis_hix {
    uint32_t *slot;
    uint32_t *at, *last;
    uint32_t mask;
    const uint8_t *base;
    uint32_t base_len;
    bool vals; /* entries with values (a hash, HSET edits) */
} cudis_hix;

#if !CUDIS_DEVICE_CODE
#define CUDIS_HIX_MIN 2048u /* old + edit bytes below this: walks are cheaper */

/* Entry i's field (its bytes parsed again: they were well-formed). */
static inline bool cudis_hix_same(const cudis_hix *x, uint32_t i, const uint8_t *f, uint32_t flen)
{
    cudis_hentry e;
    return cudis_hentry_at(x->base + x->at[i], x->base_len - x->at[i], x->vals, &e) &&
           cudis_bytes_same(e.f, e.flen, f, flen);
}

/* The number of the entry with field f, or UINT32_MAX. */
static inline uint32_t cudis_hix_find(const cudis_hix *x, const uint8_t *f, uint32_t flen)
{
    for (uint32_t s = (uint32_t)cudis_hash(f, flen, 0) & x->mask; x->slot[s] != 0;
         s = (s + 1) & x->mask) {
        if (cudis_hix_same(x, x->slot[s] - 1, f, flen)) {
            return x->slot[s] - 1;
        }
    }
    return UINT32_MAX;
}

/* Index the entries of base[from, len) (edits: ed, from 0; else a hash).
 * False (nothing to free) when they are malformed or memory is short. */
static inline bool cudis_hix_build(cudis_hix *x, const cudis_hedits *ed, const uint8_t *base,
                                   uint32_t from, uint32_t len)
{
    bool vals = ed == 0 || ed->kind == CUDIS_HEDIT_SET;
    uint32_t n = 0;
    cudis_hentry e;
    for (uint32_t at = from; at < len; at += e.size, n++) {
        if (!cudis_hentry_at(base + at, len - at, vals, &e)) {
            return false;
        }
    }
    uint32_t cap = 16;
    while (cap < 2 * (uint64_t)n + 2) {
        cap *= 2;
    }
    *x = (cudis_hix){(uint32_t *)calloc(cap, sizeof(uint32_t)),
                     (uint32_t *)malloc(((size_t)n + 1) * sizeof(uint32_t)),
                     (uint32_t *)malloc(((size_t)n + 1) * sizeof(uint32_t)),
                     cap - 1,
                     base,
                     len,
                     vals};
    if (x->slot == 0 || x->at == 0 || x->last == 0) {
        free(x->slot);
        free(x->at);
        free(x->last);
        x->slot = 0;
        return false;
    }
    uint32_t k = 0;
    for (uint32_t at = from; at < len; at += e.size) {
        (void)cudis_hentry_at(base + at, len - at, vals, &e);
        uint32_t i = cudis_hix_find(x, e.f, e.flen);
        if (i != UINT32_MAX) {
            x->last[i] = at; /* an edit of a field seen: the later one wins */
            continue;
        }
        x->at[k] = x->last[k] = at;
        uint32_t s = (uint32_t)cudis_hash(e.f, e.flen, 0) & x->mask;
        while (x->slot[s] != 0) {
            s = (s + 1) & x->mask;
        }
        x->slot[s] = ++k;
    }
    return true;
}

static inline void cudis_hix_free(cudis_hix *x)
{
    if (x->slot != 0) {
        free(x->slot);
        free(x->at);
        free(x->last);
    }
}
#endif

/* cudis_hash_find, through the index when there is one. */
CUDIS_HD static inline bool cudis_hash_find_ix(const cudis_hix *x, const uint8_t *h, uint32_t len,
                                               const uint8_t *f, uint32_t flen, cudis_hentry *e)
{
#if !CUDIS_DEVICE_CODE
    if (x->slot != 0) {
        uint32_t i = cudis_hix_find(x, f, flen);
        return i != UINT32_MAX && cudis_hentry_at(h + x->at[i], len - x->at[i], true, e);
    }
#endif
    return cudis_hash_find(h, len, f, flen, e);
}

/* cudis_hedit_find from `from` (0, or an edit of f), through the index. */
CUDIS_HD static inline bool cudis_hedit_find_ix(const cudis_hix *x, const cudis_hedits *ed,
                                                const uint8_t *f, uint32_t flen, uint32_t from,
                                                cudis_hentry *out)
{
#if !CUDIS_DEVICE_CODE
    if (x->slot != 0) {
        uint32_t i = cudis_hix_find(x, f, flen);
        if (i == UINT32_MAX) {
            return false;
        }
        uint32_t at = x->last[i];
        bool bad = false;
        return cudis_hedit_next(ed, &at, out, &bad);
    }
#endif
    return cudis_hedit_find(ed, f, flen, from, out);
}

/* cudis_hedit_seen, through the index: an edit of f before `before`. */
CUDIS_HD static inline bool cudis_hedit_seen_ix(const cudis_hix *x, const cudis_hedits *ed,
                                                const uint8_t *f, uint32_t flen, uint32_t before)
{
#if !CUDIS_DEVICE_CODE
    if (x->slot != 0) {
        uint32_t i = cudis_hix_find(x, f, flen);
        return i != UINT32_MAX && x->at[i] < before;
    }
#endif
    return cudis_hedit_seen(ed, f, flen, before);
}

/* cudis_hash_apply's work, with its indexes (or none: slot NULL). */
CUDIS_HD static inline cudis_happly cudis_hash_apply_ix(const cudis_hedits *ed, bool nx,
                                                        const uint8_t *old, uint32_t old_len,
                                                        uint8_t *dst, const cudis_hix *ox,
                                                        const cudis_hix *ex)
{
    cudis_happly r = {CUDIS_HASH_HDR, 0, 0, 0, 0, 0, false};
    cudis_hentry e, w = {0, 0, 0, 0, 0};
    uint32_t n_old = 0;
    uint32_t from = old ? CUDIS_HASH_HDR : old_len;
    if (nx && ed->kind == CUDIS_HEDIT_SET && dst == 0 && old != 0 && old_len >= CUDIS_HASH_HDR) {
        /* measuring HSETNX / SADD: every old entry stays as it is */
        n_old = cudis_hash_count(old, old_len);
        r.count = n_old;
        r.len = old_len;
        from = old_len;
    }
    for (uint32_t at = from; at < old_len; at += e.size) {
        if (!cudis_hentry_at(old + at, old_len - at, true, &e)) {
            r.bad = true;
            return r;
        }
        n_old++;
        uint8_t *d = dst ? dst + r.len : 0;
        if (cudis_hedit_find_ix(ex, ed, e.f, e.flen, 0, &w)) {
            if (ed->kind == CUDIS_HEDIT_DEL) {
                r.removed++;
                continue;
            }
            if (!nx) {
                r.len += cudis_put_entry(d, e.f, e.flen, w.v, w.vlen);
                r.replaced++;
                r.count++;
                continue;
            }
        }
        if (d != 0) {
            cudis_put_bytes(d, old + at, e.size);
        }
        r.len += e.size;
        r.count++;
    }
    if (old != 0 && n_old != cudis_hash_count(old, old_len)) {
        r.bad = true;
        return r;
    }
    if (ed->kind != CUDIS_HEDIT_DEL) {
        uint32_t at = 0, here = 0;
        bool bad = false;
        while (here = at, cudis_hedit_next(ed, &at, &e, &bad)) {
            r.edits++;
            cudis_hentry o;
            if ((old != 0 && cudis_hash_find_ix(ox, old, old_len, e.f, e.flen, &o)) ||
                cudis_hedit_seen_ix(ex, ed, e.f, e.flen, here)) {
                continue;
            }
            w = e;
            (void)cudis_hedit_find_ix(ex, ed, e.f, e.flen, here, &w);
            r.len += cudis_put_entry(dst ? dst + r.len : 0, w.f, w.flen, w.v, w.vlen);
            r.added++;
            r.count++;
        }
        if (bad) {
            r.bad = true;
            return r;
        }
    } else {
        uint32_t at = 0;
        bool bad = false;
        while (cudis_hedit_next(ed, &at, &e, &bad)) {
            r.edits++;
        }
        if (bad) {
            r.bad = true;
            return r;
        }
    }
    if (dst != 0) {
        uint8_t c[4] = {(uint8_t)r.count, (uint8_t)(r.count >> 8), (uint8_t)(r.count >> 16),
                        (uint8_t)(r.count >> 24)};
        cudis_put_bytes(dst, c, 4);
    }
    return r;
}

/*
 * Apply edits to an encoded hash (old NULL / old_len 0: a new hash), into
 * dst (NULL: only measure). nx: SET leaves fields that exist as they are
 * (HSETNX). Fields kept or replaced keep their order; new fields follow
 * in the order of their first edit. dst must not overlap old.
 */
CUDIS_HD static inline cudis_happly cudis_hash_apply(const cudis_hedits *ed, bool nx,
                                                     const uint8_t *old, uint32_t old_len,
                                                     uint8_t *dst)
{
    cudis_hix ox, ex;
    ox.slot = ex.slot = 0;
#if !CUDIS_DEVICE_CODE
    if (ed->kind != CUDIS_HEDIT_INCR && (uint64_t)old_len + ed->arg_len >= CUDIS_HIX_MIN) {
        if (old != 0 && old_len >= CUDIS_HASH_HDR &&
            !cudis_hix_build(&ox, 0, old, CUDIS_HASH_HDR, old_len)) {
            ox.slot = 0;
        }
        if (!cudis_hix_build(&ex, ed, ed->arg, 0, ed->arg_len)) {
            ex.slot = 0;
        }
    }
#endif
    cudis_happly r = cudis_hash_apply_ix(ed, nx, old, old_len, dst, &ox, &ex);
#if !CUDIS_DEVICE_CODE
    cudis_hix_free(&ox);
    cudis_hix_free(&ex);
#endif
    return r;
}

#endif /* CUDIS_HASH_H */
