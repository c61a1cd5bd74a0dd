/*
 * lzf.c - LZF compression and decompression (the format of liblzf, which
 * Redis vendors as lzf_c.c/lzf_d.c; written here from the format).
 *
 * The stream is a sequence of
 *     000LLLLL <L+1 literal bytes>                 a literal run (1..32)
 *     LLLooooo oooooooo                            a back reference of L+2
 *     111ooooo LLLLLLLL oooooooo                   bytes (L < 7), or of
 *                                                  L+9 bytes (L: next byte)
 * where the offset o+1 counts back from the output's end (1..8192) and a
 * reference may overlap what it copies. The compressor finds matches of 3
 * or more bytes through a hash of the next 3 bytes (one position a slot,
 * the latest), as liblzf does.
 */
#include "lzf.h"

#include <string.h>

#define LZF_HLOG_MAX 14 /* at most 16,384 slots (64 KB) */
#define LZF_HLOG_MIN 8
#define LZF_MAX_LIT 32
#define LZF_MAX_OFF 8192
#define LZF_MAX_REF (264) /* (7 + 255) + 2 */

/* The slot of 3 bytes held in the low 24 bits of v. */
static inline uint32_t lzf_slot(uint32_t v, unsigned hlog)
{
    return ((v & 0xffffffu) * 2654435761u) >> (32 - hlog);
}

static inline uint32_t lzf_next3(uint32_t v, const uint8_t *in, size_t i, size_t n)
{
    return v << 8 | (i + 2 < n ? in[i + 2] : 0); /* the 3 bytes at i, from those at i - 1 */
}

/* Open a new literal run at op: its control byte's place is kept (when
 * input is left) and filled when the run closes. False: no room. */
static inline bool lzf_open_run(size_t *op, size_t *lit_at, uint32_t *lit, bool more, size_t cap)
{
    *lit = 0;
    *lit_at = *op;
    if (more) {
        if (*op >= cap) {
            return false;
        }
        (*op)++;
    }
    return true;
}

size_t lzf_compress(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    if (n == 0 || cap == 0 || n >= UINT32_MAX) {
        return 0;
    }
    /* position + 1 of the latest 3 bytes of a slot (0: none); no more
     * slots than about the input has positions, so a short string does
     * not pay for clearing 64 KB */
    uint32_t htab[1u << LZF_HLOG_MAX];
    unsigned hlog = LZF_HLOG_MIN;
    while (hlog < LZF_HLOG_MAX && ((size_t)1 << hlog) < n) {
        hlog++;
    }
    memset(htab, 0, sizeof(htab[0]) << hlog);
    size_t ip = 0, op = 1, lit_at = 0; /* op: past the first run's control byte, at lit_at */
    uint32_t lit = 0;                  /* bytes in the open literal run */
    uint32_t v = (uint32_t)in[0] << 8 | (n > 1 ? in[1] : 0); /* the bytes at ip - 1 */
    while (ip < n) {
        size_t ref = 0, len = 0;
        v = lzf_next3(v, in, ip, n);
        if (ip + 2 < n) {
            uint32_t h = lzf_slot(v, hlog);
            size_t cand = htab[h];
            htab[h] = (uint32_t)(ip + 1);
            if (cand != 0 && ip - (cand - 1) <= LZF_MAX_OFF && in[cand - 1] == in[ip] &&
                in[cand] == in[ip + 1] && in[cand + 1] == in[ip + 2]) {
                ref = cand - 1;
                len = 3;
                size_t most = n - ip < LZF_MAX_REF ? n - ip : LZF_MAX_REF;
                while (len < most && in[ref + len] == in[ip + len]) {
                    len++;
                }
            }
        }
        if (len == 0) { /* a literal */
            if (op >= cap) {
                return 0;
            }
            out[op++] = in[ip++];
            if (++lit == LZF_MAX_LIT) { /* close the run, open the next */
                out[lit_at] = (uint8_t)(lit - 1);
                if (!lzf_open_run(&op, &lit_at, &lit, ip < n, cap)) {
                    return 0;
                }
            }
            continue;
        }
        /* close the open run (or take back its unused control byte) */
        if (lit > 0) {
            out[lit_at] = (uint8_t)(lit - 1);
        } else {
            op--;
        }
        size_t off = ip - ref - 1, l = len - 2;
        if (op + (l >= 7 ? 3 : 2) > cap) {
            return 0;
        }
        if (l < 7) {
            out[op++] = (uint8_t)((l << 5) | (off >> 8));
        } else {
            out[op++] = (uint8_t)((7u << 5) | (off >> 8));
            out[op++] = (uint8_t)(l - 7);
        }
        out[op++] = (uint8_t)off;
        /* the positions inside the match go into the table too */
        size_t end = ip + len;
        for (ip++; ip < end; ip++) {
            v = lzf_next3(v, in, ip, n);
            if (ip + 2 < n) {
                htab[lzf_slot(v, hlog)] = (uint32_t)(ip + 1);
            }
        }
        if (!lzf_open_run(&op, &lit_at, &lit, ip < n, cap)) {
            return 0;
        }
    }
    if (lit > 0) {
        out[lit_at] = (uint8_t)(lit - 1);
    }
    return op;
}

bool lzf_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    const uint8_t *ip = in, *ie = in + n;
    uint8_t *op = out, *oe = out + cap;
    while (ip < ie) {
        unsigned ctrl = *ip++;
        if (ctrl < 32) { /* a literal run */
            size_t len = ctrl + 1;
            if ((size_t)(oe - op) < len || (size_t)(ie - ip) < len) {
                return false;
            }
            memcpy(op, ip, len);
            op += len;
            ip += len;
        } else { /* a back reference */
            size_t len = ctrl >> 5;
            if (len == 7) {
                if (ip >= ie) {
                    return false;
                }
                len += *ip++;
            }
            if (ip >= ie) {
                return false;
            }
            size_t back = ((size_t)(ctrl & 0x1f) << 8) + *ip++ + 1;
            len += 2;
            if (back > (size_t)(op - out) || (size_t)(oe - op) < len) {
                return false;
            }
            for (size_t i = 0; i < len; i++) { /* may overlap */
                op[i] = op[(ptrdiff_t)i - (ptrdiff_t)back];
            }
            op += len;
        }
    }
    return op == oe;
}
