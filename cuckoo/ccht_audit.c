/*
 * ccht_audit.c - the consistency check of ccht_audit.h.
 */
#include "ccht_audit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccht_arena.h"
#include "ccht_bucket.h"

static void bad(ccht_audit *a, const char *fmt, ...)
{
    if (a->errors++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->first_error, sizeof(a->first_error), fmt, ap);
        va_end(ap);
    }
}

/* Whether off starts a chunk (slab or large). */
static int chunk_ok(const ccht_arena *ar, uint64_t off)
{
    uint32_t p = ccht_page_of(ar, off);
    if (p >= ar->n_pages) {
        return 0;
    }
    uint32_t c = ar->page_class[p];
    if (c == CCHT_PG_LARGE) {
        return off == ccht_page_off(ar, p);
    }
    if (c >= ar->n_classes) {
        return 0;
    }
    uint64_t in = off - ccht_page_off(ar, p);
    return in % ar->cls[c].size == 0 && in / ar->cls[c].size < ar->cls[c].per_page;
}

int ccht_audit_table(const ccht_table *T, ccht_audit *a)
{
    memset(a, 0, sizeof(*a));
    const ccht_view *v = &T->v;
    const ccht_arena *ar = &T->a;
    a->n_classes = ar->n_classes;
    for (uint32_t c = 0; c < ar->n_classes; c++) {
        a->class_size[c] = ar->cls[c].size;
    }
    a->writes_full = T->cnt[CCHT_C_FULL];
    /* one mark per 8 bytes of arena: 1 indexed, 2 on a free list */
    uint8_t *mark = calloc(v->arena_bytes / 8 + 1, 1);
    if (mark == NULL) {
        bad(a, "out of memory");
        return -1;
    }

    /* pages */
    uint32_t counted[CCHT_MAX_CLASSES] = {0};
    for (uint32_t p = 0; p < ar->n_pages; p++) {
        uint32_t c = ar->page_class[p];
        if (c < ar->n_classes) {
            counted[c]++;
            if (ar->page_run[p] != 0) {
                bad(a, "slab page %u has a run count %u (a reclaim's left over)", p,
                    ar->page_run[p]);
            }
        } else if (c == CCHT_PG_FREE) {
            a->pages_free++;
            uint32_t i = ar->page_pos[p];
            if (i >= ar->pool->nfree || ar->pool_stack[i] != p) {
                bad(a, "free page %u is not at its place on the pool's stack", p);
            }
        } else if (c == CCHT_PG_LARGE) {
            uint32_t n = ar->page_run[p];
            a->pages_large += n;
            if (n == 0 || p + n > ar->n_pages) {
                bad(a, "large run at page %u has %u pages", p, n);
                continue;
            }
            for (uint32_t q = p + 1; q < p + n; q++) {
                if (ar->page_class[q] != CCHT_PG_CONT) {
                    bad(a, "page %u of the large run at %u is not a continuation", q, p);
                }
            }
        } else if (c == CCHT_PG_MOVING) {
            a->pages_moving++;
            bad(a, "page %u is still claimed by a move", p);
        } else if (c != CCHT_PG_CONT) {
            bad(a, "page %u has class %u", p, c);
        }
        if (ar->page_drain[p] != CCHT_DRAIN_NONE) {
            bad(a, "page %u still has drain state %u", p, ar->page_drain[p]);
        }
    }
    if (a->pages_free != ar->pool->nfree) {
        bad(a, "%u free pages but %u on the pool's stack", a->pages_free, ar->pool->nfree);
    }
    if (ar->pool->pages_used != ar->n_pages - ar->pool->nfree) {
        bad(a, "pages_used %u, but %u of %u pages are free", ar->pool->pages_used, ar->pool->nfree,
            ar->n_pages);
    }
    for (uint32_t c = 0; c < ar->n_classes; c++) {
        a->class_pages[c] = counted[c];
        if (counted[c] != ar->cls[c].n_pages) {
            bad(a, "class %u (%u B) owns %u pages, counts %u", c, ar->cls[c].size, counted[c],
                ar->cls[c].n_pages);
        }
    }

    /* index */
    int64_t items = 0, kbytes = 0, vbytes = 0, cbytes = 0;
    int64_t dbn[CCHT_DBS] = {0}; /* items per database */
    int64_t dbv[CCHT_DBS] = {0}; /* of them with an expiry */
    int64_t n_vol = 0;
    uint64_t marked = 0;         /* buckets the volatile map marks */
    for (uint64_t b = 0; b < ccht_extent(v); b++) {
        if (!ccht_bkt_live(v, b)) {
            continue;
        }
        if (*ccht_bkt_version(v, b) & CCHT_VER_LOCK) {
            bad(a, "bucket %llu is locked", (unsigned long long)b);
        }
        bool vol = cudis_vmap_test(v->vmap, b);
        marked += vol;
        for (uint32_t w = 0; w < v->ways; w++) {
            uint64_t word = *ccht_bkt_slot(v, b, w);
            if (word == 0) {
                continue;
            }
            if ((word & CCHT_SLOT_EXP) && !vol) {
                bad(a, "bucket %llu holds an item with an expiry, unmarked in the volatile map",
                    (unsigned long long)b);
            }
            a->slots++;
            uint64_t off = ccht_slot_off(word);
            if (off + CCHT_ITEM_HDR_EXP > v->arena_bytes || !chunk_ok(ar, off)) {
                bad(a, "slot %llu/%u refers to %llu, not a chunk", (unsigned long long)b, w,
                    (unsigned long long)off);
                continue;
            }
            if (mark[off / 8]) {
                bad(a, "chunk %llu is indexed twice", (unsigned long long)off);
            }
            mark[off / 8] = 1;
            uint32_t h0 = ccht_item_h0(v, off);
            ccht_hkey hk;
            if (!(h0 & CCHT_ITEM_LIVE) || !ccht_chunk_hkey(v, off, &hk)) {
                bad(a, "slot %llu/%u: item at %llu is not live (h0 %08x)", (unsigned long long)b, w,
                    (unsigned long long)off, h0);
                continue;
            }
            if ((hk.b1 != b && hk.b2 != b) || hk.fp != ccht_slot_fp(word) ||
                ((word & CCHT_SLOT_EXP) != 0) != ((h0 & CCHT_ITEM_EXP) != 0)) {
                bad(a, "slot %llu/%u: its item hashes to buckets %llu/%llu", (unsigned long long)b,
                    w, (unsigned long long)hk.b1, (unsigned long long)hk.b2);
            }
            if (ar->page_class[ccht_page_of(ar, off)] == CCHT_PG_LARGE) {
                a->large_items++;
            }
            uint32_t klen = h0 & CCHT_ITEM_KLEN_MASK;
            uint32_t vlen = ccht_item_vlen(v, off);
            uint32_t cls = ccht_arena_chunk_class(ar, off);
            uint64_t size = ccht_item_size(klen, vlen, (h0 & CCHT_ITEM_EXP) != 0);
            uint64_t room = cls >= CCHT_CLS_LARGE
                                ? (uint64_t)(cls - CCHT_CLS_LARGE) * ar->page_bytes
                                : ar->cls[cls].size;
            if (size > room) {
                bad(a, "item at %llu (%llu B) overflows its chunk (%llu B)",
                    (unsigned long long)off, (unsigned long long)size, (unsigned long long)room);
            }
            items++;
            cbytes += (int64_t)room;
            dbn[ccht_item_db(h0)]++;
            if (ccht_item_expire(v, off, h0) != 0) {
                dbv[ccht_item_db(h0)]++;
                n_vol++;
            }
            kbytes += klen;
            vbytes += vlen;
            /* the same key elsewhere in its pair? */
            uint32_t seen = 0;
            for (int i = 0; i < 2; i++) {
                uint64_t c = i ? hk.b2 : hk.b1;
                if (i == 1 && c == hk.b1) {
                    break;
                }
                for (uint32_t x = 0; x < v->ways; x++) {
                    uint64_t wd = *ccht_bkt_slot(v, c, x);
                    if (wd == 0) {
                        continue;
                    }
                    uint64_t o = ccht_slot_off(wd);
                    if (o + CCHT_ITEM_HDR_EXP > v->arena_bytes) {
                        continue;
                    }
                    uint32_t h = ccht_item_h0(v, o);
                    if ((h & (CCHT_ITEM_KLEN_MASK | CCHT_ITEM_DB_MASK)) ==
                            (h0 & (CCHT_ITEM_KLEN_MASK | CCHT_ITEM_DB_MASK)) &&
                        memcmp(ccht_item_key(v, o, h), ccht_item_key(v, off, h0), klen) == 0) {
                        seen++;
                    }
                }
            }
            if (seen != 1) {
                a->duplicates++;
                bad(a, "a key of %u bytes is stored %u times", klen, seen);
            }
        }
    }
    if (marked != v->vmap[v->vmap_words]) {
        bad(a, "the volatile map marks %llu buckets, counts %llu", (unsigned long long)marked,
            (unsigned long long)v->vmap[v->vmap_words]);
    }
    if (cbytes != (int64_t)T->cnt[CCHT_C_CHUNK_BYTES]) {
        bad(a, "live items take %lld chunk bytes, the counter says %lld", (long long)cbytes,
            (long long)T->cnt[CCHT_C_CHUNK_BYTES]);
    }
    if (items != (int64_t)T->cnt[CCHT_C_ITEMS] || kbytes != (int64_t)T->cnt[CCHT_C_KEY_BYTES] ||
        vbytes != (int64_t)T->cnt[CCHT_C_VAL_BYTES]) {
        bad(a,
            "index holds %lld items / %lld key / %lld value bytes, counters say %lld / %lld / "
            "%lld",
            (long long)items, (long long)kbytes, (long long)vbytes, (long long)T->cnt[CCHT_C_ITEMS],
            (long long)T->cnt[CCHT_C_KEY_BYTES], (long long)T->cnt[CCHT_C_VAL_BYTES]);
    }
    for (int d = 1; d < CCHT_DBS && v->db_items != NULL; d++) {
        if (dbn[d] != (int64_t)v->db_items[d]) {
            bad(a, "database %d holds %lld items, its counter says %lld", d, (long long)dbn[d],
                (long long)v->db_items[d]);
        }
        if (dbv[d] != (int64_t)v->db_volatile[d]) {
            bad(a, "database %d holds %lld items with an expiry, its counter says %lld", d,
                (long long)dbv[d], (long long)v->db_volatile[d]);
        }
    }
    if (n_vol != (int64_t)T->cnt[CCHT_C_VOLATILE]) {
        bad(a, "%lld items have an expiry, the counter says %lld", (long long)n_vol,
            (long long)T->cnt[CCHT_C_VOLATILE]);
    }

    /* free lists */
    for (uint32_t c = 0; c < ar->n_classes; c++) {
        uint64_t mask = ar->cls[c].nonempty;
        for (uint32_t s = 0; s < CCHT_SHARDS; s++) {
            const ccht_shard *sh = &ar->cls[c].shard[s];
            if (sh->lock) {
                bad(a, "class %u shard %u is locked", c, s);
            }
            if (sh->head != 0 && !((mask >> s) & 1)) {
                bad(a, "class %u shard %u has chunks but no hint bit", c, s);
            }
            uint64_t x = sh->head;
            uint32_t on_list = 0;
            while (x != 0) {
                on_list++;
                uint64_t o = x - 1;
                if (o >= v->arena_bytes || !chunk_ok(ar, o) ||
                    ar->page_class[ccht_page_of(ar, o)] != c) {
                    bad(a, "class %u shard %u: %llu is not a chunk of the class", c, s,
                        (unsigned long long)o);
                    break;
                }
                if (mark[o / 8] == 1) {
                    bad(a, "chunk %llu is indexed and free", (unsigned long long)o);
                    break;
                }
                if (mark[o / 8] == 2) {
                    bad(a, "chunk %llu is on the free lists twice", (unsigned long long)o);
                    break;
                }
                mark[o / 8] = 2;
                if (ccht_item_h0(v, o) != 0) {
                    bad(a, "free chunk %llu has h0 %08x", (unsigned long long)o,
                        ccht_item_h0(v, o));
                }
                a->free_chunks++;
                x = *(const uint64_t *)(v->arena + o + 8);
            }
            if (x == 0 && on_list != sh->nfree) {
                bad(a, "class %u shard %u counts %u free chunks, its list has %u", c, s, sh->nfree,
                    on_list);
            }
        }
    }
    free(mark);
    return a->errors ? -1 : 0;
}

void ccht_audit_print(const ccht_audit *a, void *file)
{
    FILE *f = file;
    fprintf(f, "audit: %llu slots, %llu duplicates, %llu free chunks, %llu large items\n",
            (unsigned long long)a->slots, (unsigned long long)a->duplicates,
            (unsigned long long)a->free_chunks, (unsigned long long)a->large_items);
    fprintf(f,
            "audit: pages free %u, large %u, moving %u; writes failed for memory (E_FULL) %llu\n",
            a->pages_free, a->pages_large, a->pages_moving, (unsigned long long)a->writes_full);
    fprintf(f, "audit: pages per class:");
    for (uint32_t c = 0; c < a->n_classes; c++) {
        if (a->class_pages[c]) {
            fprintf(f, " %u B:%u", a->class_size[c], a->class_pages[c]);
        }
    }
    fprintf(f, "\n");
    if (a->errors) {
        fprintf(f, "audit: %llu inconsistencies, first: %s\n", (unsigned long long)a->errors,
                a->first_error);
    } else {
        fprintf(f, "audit: consistent\n");
    }
}
