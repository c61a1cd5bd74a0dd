/*
 * conformance_events.c - the conformance suite's tests of events (the keys
 * a store removes on its own, cudis_evbuf in cudis_op.h), over every engine
 * of conf.h: evictions of a full store (index slots, then memory with page
 * moves, on one thread and split over two), expired keys met by ops and
 * reclaimed by sweeps and expiry ticks, a sink too small, and reruns of
 * ops that ran out of out buffer. Every test checks that the events
 * match what became absent, key by key, and the store's eviction counters.
 */
#include "conf.h"

/* ------------------------------------------------------------------------
 * A sink and what it holds
 * ---------------------------------------------------------------------- */

/* Guard bytes after a sink's arrays: nothing may be written past cap. */
#define EV_GUARD 64
#define EV_FILL 0xEE

static void ev_init(cudis_evbuf *ev, uint32_t cap, uint64_t keys_cap)
{
    memset(ev, 0, sizeof(*ev));
    ev->cap = cap;
    ev->keys_cap = keys_cap;
    ev->recs = malloc((cap + EV_GUARD) * sizeof(cudis_event));
    ev->keys = malloc(keys_cap + EV_GUARD);
    cr_assert(ev->recs && ev->keys);
    memset(ev->recs, EV_FILL, (cap + EV_GUARD) * sizeof(cudis_event));
    memset(ev->keys, EV_FILL, keys_cap + EV_GUARD);
}

static void ev_free(cudis_evbuf *ev)
{
    free(ev->recs);
    free(ev->keys);
    memset(ev, 0, sizeof(*ev));
}

/* Nothing written past the caps. */
static void ev_check_guard(const cudis_evbuf *ev)
{
    const uint8_t *r = (const uint8_t *)(ev->recs + ev->cap);
    for (size_t i = 0; i < EV_GUARD * sizeof(cudis_event); i++) {
        cr_assert_eq(r[i], EV_FILL, "a record written past cap (byte %zu)", i);
    }
    for (size_t i = 0; i < EV_GUARD; i++) {
        cr_assert_eq(ev->keys[ev->keys_cap + i], EV_FILL, "key bytes written past keys_cap");
    }
}

/* Keys of these tests: "ev:<i>" in database i % 3 (0, 1 or 2). */
static uint32_t ev_key(char *buf, size_t cap, uint32_t i)
{
    return (uint32_t)snprintf(buf, cap, "ev:%u", i);
}

static uint8_t ev_db(uint32_t i)
{
    return (uint8_t)(i % 3);
}

/* Tally a sink's records into per-key counts of `kind` (n keys): each
 * record must be whole (nothing lost), name one of the keys with its
 * database, and be of that kind. */
static void ev_tally(const cudis_evbuf *ev, uint8_t kind, uint32_t *count, uint32_t n)
{
    cr_assert(!cudis_ev_lost(ev), "events lost: %u of %u records, %llu of %llu bytes", ev->len,
              ev->cap, (unsigned long long)ev->keys_len, (unsigned long long)ev->keys_cap);
    ev_check_guard(ev);
    for (uint32_t r = 0; r < ev->len; r++) {
        const cudis_event *e = &ev->recs[r];
        cr_assert_eq(e->kind, kind, "record %u: kind %u, want %u", r, e->kind, kind);
        cr_assert_leq(e->key_off + e->key_len, ev->keys_len);
        char k[32];
        cr_assert_lt(e->key_len, sizeof(k));
        memcpy(k, ev->keys + e->key_off, e->key_len);
        k[e->key_len] = 0;
        unsigned i = 0;
        cr_assert_eq(sscanf(k, "ev:%u", &i), 1, "record %u names '%s'", r, k);
        cr_assert_lt(i, n, "record %u names '%s'", r, k);
        char want[32];
        cr_assert_eq(e->key_len, ev_key(want, sizeof(want), i));
        cr_assert_str_eq(k, want);
        cr_assert_eq(e->db, ev_db(i), "record %u: %s in db %u, want %u", r, k, e->db, ev_db(i));
        count[i]++;
    }
}

/* The engine of test p, small: max_items (0: by memory), memory_bytes (0:
 * the suite's default), threads. */
static engine *ev_open(const eng_param *p, uint64_t max_items, uint64_t memory, uint32_t threads)
{
    engine_config cfg;
    conf_default(&cfg);
    cfg.max_items = max_items;
    if (memory != 0) {
        cfg.memory_bytes = memory;
    }
    cfg.threads = threads;
    return open_cfg(p, &cfg);
}

static uint64_t evictions(engine *e)
{
    cudis_stats s = stats_of(e);
    return s.evict_bucket + s.evict_memory + s.evict_expired;
}

/* Whether key i is present at time now. */
static bool ev_present(engine *e, uint32_t i, int64_t now)
{
    tbatch t;
    tb_init(&t, 0);
    char k[32];
    uint32_t n = ev_key(k, sizeof(k), i);
    tb_op(&t, CUDIS_OP_EXISTS, 0, k, n, NULL, 0, 0, 0);
    t.ops[0].db = ev_db(i);
    tb_run(e, &t, now);
    bool found = (t.res[0].flags & CUDIS_R_FOUND) != 0;
    tb_free(&t);
    return found;
}

/* Append SET ev:<i> (a value of vlen bytes, expiry exp) to t. */
static void ev_set(tbatch *t, uint32_t i, uint32_t vlen, int64_t exp)
{
    static uint8_t val[12000];
    char k[32];
    uint32_t n = ev_key(k, sizeof(k), i);
    cr_assert_leq(vlen, sizeof(val));
    uint32_t at = tb_op(t, CUDIS_OP_SET, 0, k, n, val, vlen, 0, exp);
    t->ops[at].db = ev_db(i);
}

static void ev_op(tbatch *t, uint8_t code, uint16_t flags, uint32_t i)
{
    char k[32];
    uint32_t n = ev_key(k, sizeof(k), i);
    uint32_t at = tb_op(t, code, flags, k, n, "v", code == CUDIS_OP_SET ? 1 : 0, 0, 0);
    t->ops[at].db = ev_db(i);
}

/* Every key of [0, n) that is absent was reported exactly once (unless
 * `deleted` says an op removed it), every present key never, besides
 * `ended[i]` earlier lives of key i (removed on the store's own, then
 * written anew by an op); the number of events is what the eviction
 * counters say. deleted and ended may be NULL. Returns how many were. */
static uint32_t ev_match(engine *e, const uint32_t *count, const bool *deleted,
                         const uint32_t *ended, uint32_t n, int64_t now, uint64_t events,
                         uint64_t counted)
{
    uint32_t absent = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t want = ended != NULL ? ended[i] : 0;
        bool present = ev_present(e, i, now);
        bool del = deleted != NULL && deleted[i];
        if (!present && !del) {
            want++;
            absent++;
        }
        cr_assert_eq(count[i], want, "ev:%u (%s) was reported %u times, want %u", i,
                     present ? "present"
                     : del   ? "deleted by an op"
                             : "absent",
                     count[i], want);
    }
    cr_assert_eq(events, counted, "%llu events, the counters say %llu", (unsigned long long)events,
                 (unsigned long long)counted);
    return absent;
}

/* ------------------------------------------------------------------------
 * Evictions
 * ---------------------------------------------------------------------- */

/* A store of 256 items given 2,000 keys in one batch: every key gone
 * (and not deleted by an op) is one EVICTED event with its bytes and
 * database; a DEL of a present key is not an event. */
ENGINE_TEST(ev_evicted_reports_each_once)
{
    engine *e = ev_open(p, 256, 0, 1);
    enum { N = 2000 };
    cudis_evbuf ev;
    ev_init(&ev, 4 * N, 64 * N);
    tbatch t;
    tb_init(&t, 0);
    for (uint32_t i = 0; i < N; i++) {
        ev_set(&t, i, 8, 0);
    }
    uint64_t ev0 = evictions(e);
    t.b.ev = &ev;
    tb_run(e, &t, T_NOW);
    if (!(p->caps & CAP_STORES)) {
        cr_assert_eq(ev.len, 0, "%s stores nothing, so it removes nothing", p->name);
        cr_assert_eq(ev.keys_len, 0);
        ev_free(&ev);
        tb_free(&t);
        engine_destroy(e);
        return;
    }
    static uint32_t count[N];
    memset(count, 0, sizeof(count));
    ev_tally(&ev, CUDIS_EV_EVICTED, count, N);
    uint32_t gone = ev_match(e, count, NULL, NULL, N, T_NOW, ev.len, evictions(e) - ev0);
    cr_assert_geq(gone, N - 256 - 8, "a store of 256 items keeps at most 256 (+ a bucket)");

    /* DEL of present keys (with a sink): not events */
    static bool deleted[N];
    memset(deleted, 0, sizeof(deleted));
    tb_reset(&t);
    uint32_t dels = 0;
    for (uint32_t i = 0; i < N && dels < 20; i++) {
        if (count[i] == 0) {
            ev_op(&t, CUDIS_OP_DEL, 0, i);
            deleted[i] = true;
            dels++;
        }
    }
    cr_assert_eq(dels, 20);
    ev.len = 0;
    ev.keys_len = 0;
    t.b.ev = &ev;
    tb_run(e, &t, T_NOW);
    cr_assert_eq(ev.len, 0, "DEL removes keys itself: no events");
    for (uint32_t i = 0; i < t.n; i++) {
        cr_assert_eq(t.res[i].flags, CUDIS_R_FOUND | CUDIS_R_DONE);
    }
    ev_match(e, count, deleted, NULL, N, T_NOW, 0, 0);
    ev_free(&ev);
    tb_free(&t);
    engine_destroy(e);
}

/* Memory runs out (2 MB, values of 0 to 10,000 bytes: memory eviction,
 * pages moving between size classes, runs of pages for large values),
 * batch after batch, on one thread and with the batch split over two:
 * every key gone was reported once over all batches, none still there. */
static void ev_memory(const eng_param *p, uint32_t threads)
{
    T_NEED_STORE(p);
    engine *e = ev_open(p, 0, 2ull << 20, threads);
    enum { ROUNDS = 24, PER = 256, N = ROUNDS * PER };
    static uint32_t count[N];
    memset(count, 0, sizeof(count));
    cudis_evbuf ev;
    ev_init(&ev, 16 * N, 64 * 16 * N);
    tbatch t;
    tb_init(&t, 0);
    uint64_t rng = 99 + threads;
    uint64_t ev0 = evictions(e);
    for (uint32_t r = 0; r < ROUNDS; r++) {
        tb_reset(&t);
        for (uint32_t j = 0; j < PER; j++) {
            uint64_t x = t_rand(&rng);
            /* the sizes shift with the rounds, so pages change class */
            uint32_t vl = (x & 7) == 0 ? (uint32_t)(x >> 8) % 10000
                          : r % 2      ? (uint32_t)(x >> 8) % 64
                                       : 200 + (uint32_t)(x >> 8) % 2000;
            ev_set(&t, r * PER + j, vl, 0);
        }
        t.b.ev = &ev;
        tb_run(e, &t, T_NOW);
        for (uint32_t i = 0; i < t.n; i++) {
            cr_assert_eq(t.res[i].status, CUDIS_OK, "SET under pressure evicts: %d",
                         t.res[i].status);
        }
    }
    ev_tally(&ev, CUDIS_EV_EVICTED, count, N);
    uint32_t gone = ev_match(e, count, NULL, NULL, N, T_NOW, ev.len, evictions(e) - ev0);
    cr_assert_gt(gone, N / 2, "2 MB cannot hold them all (%u gone)", gone);
    ev_free(&ev);
    tb_free(&t);
    engine_destroy(e);
}

ENGINE_TEST(ev_memory_evictions)
{
    ev_memory(p, 1);
}

ENGINE_TEST(ev_memory_evictions_split_batch)
{
    ev_memory(p, 2);
}

/* ------------------------------------------------------------------------
 * Expiry
 * ---------------------------------------------------------------------- */

/* Keys past their expiry met by ops are EXPIRED once, whether the op then
 * writes the key anew (SET) or not (GET, EXISTS, TTL, INCRBY); meeting them
 * again reports nothing; a sweep reports the rest, a second sweep nothing;
 * expiry ticks report what they reclaim. */
ENGINE_TEST(ev_expired_met_and_swept)
{
    T_NEED_STORE(p);
    engine *e = open_default(p);
    enum { N = 300, EXP = 200, MET = 60 };
    static uint32_t count[N];
    memset(count, 0, sizeof(count));
    tbatch t;
    tb_init(&t, 1 << 16);
    for (uint32_t i = 0; i < N; i++) {
        ev_set(&t, i, 5, i < EXP ? T_NOW + 10 : 0); /* ev:0..199 expire */
    }
    tb_run(e, &t, T_NOW);
    cr_assert_eq(stats_of(e).items, N);
    uint64_t ev0 = evictions(e);

    cudis_evbuf ev;
    ev_init(&ev, 4 * N, 64 * N);
    tb_reset(&t);
    for (uint32_t i = 0; i < MET; i++) {
        static const uint8_t codes[] = {CUDIS_OP_GET, CUDIS_OP_GET,    CUDIS_OP_EXISTS,
                                        CUDIS_OP_TTL, CUDIS_OP_INCRBY, CUDIS_OP_SET};
        ev_op(&t, codes[i % 6], 0, i);
    }
    for (uint32_t i = EXP; i < EXP + 20; i++) {
        ev_op(&t, CUDIS_OP_GET, 0, i); /* live: not events */
    }
    t.b.ev = &ev;
    tb_run(e, &t, T_NOW + 20);
    for (uint32_t i = 0; i < MET; i++) {
        cr_assert_eq(t.res[i].status, CUDIS_OK);
        cr_assert_eq(t.res[i].flags & CUDIS_R_FOUND, 0, "ev:%u expired", i);
    }
    ev_tally(&ev, CUDIS_EV_EXPIRED, count, N);
    cr_assert_eq(ev.len, MET, "the ops met %u expired keys", MET);
    for (uint32_t i = 0; i < MET; i++) {
        cr_assert_eq(count[i], 1, "ev:%u met expired: reported %u times", i, count[i]);
    }
    cr_assert_eq(evictions(e) - ev0, MET);

    /* met again: gone already (or written anew), nothing to report */
    ev.len = 0;
    ev.keys_len = 0;
    t.b.ev = &ev;
    tb_run(e, &t, T_NOW + 20);
    cr_assert_eq(ev.len, 0, "reported again: %u", ev.len);

    /* the sweep reclaims the other 140, each reported once */
    int got = 0;
    for (int i = 0; i < 1000 && got < EXP - MET; i++) {
        int n = engine_sweep(e, T_NOW + 20, 1 << 20, &ev);
        cr_assert_geq(n, 0);
        got += n;
    }
    cr_assert_eq(got, EXP - MET);
    cr_assert_eq(ev.len, (uint32_t)got, "one event per reclaimed key");
    ev_tally(&ev, CUDIS_EV_EXPIRED, count, N);
    for (uint32_t i = 0; i < N; i++) {
        cr_assert_eq(count[i], i < EXP ? 1u : 0u, "ev:%u reported %u times", i, count[i]);
    }
    cr_assert_eq(evictions(e) - ev0, EXP);
    ev.len = 0;
    ev.keys_len = 0;
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(engine_sweep(e, T_NOW + 20, 1 << 20, &ev), 0);
    }
    cr_assert_eq(ev.len, 0, "a second sweep reports nothing");

    /* expiry ticks: the live keys get an expiry, ticks reclaim them */
    tb_reset(&t);
    for (uint32_t i = EXP; i < N; i++) {
        char k[32];
        uint32_t n = ev_key(k, sizeof(k), i);
        uint32_t at = tb_op(&t, CUDIS_OP_EXPIRE, 0, k, n, NULL, 0, 0, T_NOW + 30);
        t.ops[at].db = ev_db(i);
    }
    for (uint32_t i = 0; i < MET; i += 6) {
        ev_op(&t, CUDIS_OP_DEL, 0, i + 4); /* the ones INCRBY and SET wrote anew */
        ev_op(&t, CUDIS_OP_DEL, 0, i + 5);
    }
    t.b.ev = &ev;
    tb_run(e, &t, T_NOW + 20);
    cr_assert_eq(ev.len, 0, "EXPIRE and DEL are the ops' own");
    memset(count, 0, sizeof(count));
    got = 0;
    for (int i = 0; i < 200 && got < N - EXP; i++) {
        got += engine_expire_tick(e, T_NOW + 40, 10, &ev);
    }
    cr_assert_eq(got, N - EXP);
    ev_tally(&ev, CUDIS_EV_EXPIRED, count, N);
    for (uint32_t i = 0; i < N; i++) {
        cr_assert_eq(count[i], i >= EXP ? 1u : 0u, "tick: ev:%u reported %u times", i, count[i]);
    }
    ev.len = 0;
    cr_assert_eq(engine_expire_tick(e, T_NOW + 40, 10, &ev), 0);
    cr_assert_eq(ev.len, 0);
    cr_assert_eq(stats_of(e).items, 0);
    ev_free(&ev);
    tb_free(&t);
    engine_destroy(e);
}

/* An expired slot taken by a new key in a full bucket pair, and expired
 * items found by memory eviction: EXPIRED, never EVICTED. */
ENGINE_TEST(ev_expired_reclaimed_for_room)
{
    T_NEED_STORE(p);
    engine *e = ev_open(p, 128, 0, 1);
    enum { N = 1200 };
    static uint32_t expired[N], evicted[N];
    memset(expired, 0, sizeof(expired));
    memset(evicted, 0, sizeof(evicted));
    tbatch t;
    tb_init(&t, 0);
    for (uint32_t i = 0; i < 128; i++) {
        ev_set(&t, i, 8, T_NOW + 10);
    }
    tb_run(e, &t, T_NOW);
    uint64_t ev0 = evictions(e);
    uint32_t kept = (uint32_t)stats_of(e).items;
    cudis_evbuf ev;
    ev_init(&ev, 4 * N, 64 * N);
    tb_reset(&t);
    for (uint32_t i = 128; i < N; i++) {
        ev_set(&t, i, 8, 0);
    }
    t.b.ev = &ev;
    tb_run(e, &t, T_NOW + 20);
    cr_assert(!cudis_ev_lost(&ev));
    ev_check_guard(&ev);
    uint32_t n_exp = 0;
    for (uint32_t r = 0; r < ev.len; r++) {
        const cudis_event *x = &ev.recs[r];
        char k[32];
        memcpy(k, ev.keys + x->key_off, x->key_len);
        k[x->key_len] = 0;
        unsigned i = 0;
        cr_assert_eq(sscanf(k, "ev:%u", &i), 1);
        cr_assert_lt(i, N);
        cr_assert_eq(x->db, ev_db(i));
        if (i < 128) {
            cr_assert_eq(x->kind, CUDIS_EV_EXPIRED, "%s had expired: kind %u", k, x->kind);
            expired[i]++;
            n_exp++;
        } else {
            cr_assert_eq(x->kind, CUDIS_EV_EVICTED, "%s was live: kind %u", k, x->kind);
            evicted[i]++;
        }
    }
    for (uint32_t i = 0; i < N; i++) {
        cr_assert_leq(expired[i] + evicted[i], 1, "ev:%u reported twice", i);
    }
    /* the expired ones not reclaimed yet are left for the sweep */
    int swept = 0;
    for (int i = 0; i < 100; i++) {
        swept += engine_sweep(e, T_NOW + 20, 1 << 20, &ev);
    }
    cr_assert_eq(n_exp + (uint32_t)swept, kept, "every expired key reclaimed once");
    for (uint32_t r = 0; r < ev.len; r++) {
        cr_assert_leq(ev.recs[r].kind, CUDIS_EV_EXPIRED);
    }
    cr_assert_eq(ev.len, evictions(e) - ev0);
    ev_free(&ev);
    tb_free(&t);
    engine_destroy(e);
}

/* ------------------------------------------------------------------------
 * A sink too small, reruns
 * ---------------------------------------------------------------------- */

/* Two records for hundreds of evictions, then room for records but not
 * for their bytes: the loss shows (len > cap, keys_len > keys_cap), the
 * reservations count every event, nothing is written past the caps, the
 * records that fit are whole or marked lost (kind 0). */
ENGINE_TEST(ev_overflow_signals_loss)
{
    T_NEED_STORE(p);
    engine *e = ev_open(p, 64, 0, 1);
    enum { N = 800 };
    tbatch t;
    tb_init(&t, 0);
    for (uint32_t i = 0; i < N / 2; i++) {
        ev_set(&t, i, 8, 0);
    }
    cudis_evbuf ev;
    ev_init(&ev, 2, 64 * N);
    uint64_t ev0 = evictions(e);
    t.b.ev = &ev;
    tb_run(e, &t, T_NOW);
    uint64_t n = evictions(e) - ev0;
    cr_assert_gt(n, 100);
    cr_assert(cudis_ev_lost(&ev));
    cr_assert_eq(ev.len, n, "every event reserved a record: %u, want %llu", ev.len,
                 (unsigned long long)n);
    cr_assert_geq(ev.keys_len, 4 * n, "and its key bytes");
    ev_check_guard(&ev);
    for (uint32_t r = 0; r < ev.cap; r++) {
        cr_assert_eq(ev.recs[r].kind, CUDIS_EV_EVICTED);
        cr_assert_eq(memcmp(ev.keys + ev.recs[r].key_off, "ev:", 3), 0);
    }
    ev_free(&ev);

    /* records to spare, 16 bytes of keys: two or three whole ones */
    ev_init(&ev, 4 * N, 16);
    tb_reset(&t);
    for (uint32_t i = N / 2; i < N; i++) {
        ev_set(&t, i, 8, 0);
    }
    ev0 = evictions(e);
    t.b.ev = &ev;
    tb_run(e, &t, T_NOW);
    n = evictions(e) - ev0;
    cr_assert(cudis_ev_lost(&ev));
    cr_assert_eq(ev.len, n);
    cr_assert_gt(ev.keys_len, ev.keys_cap);
    ev_check_guard(&ev);
    uint32_t whole = 0;
    for (uint32_t r = 0; r < ev.len; r++) {
        const cudis_event *x = &ev.recs[r];
        if (x->kind == 0) {
            continue; /* lost: its bytes did not fit */
        }
        cr_assert_eq(x->kind, CUDIS_EV_EVICTED);
        cr_assert_leq(x->key_off + x->key_len, ev.keys_cap);
        cr_assert_eq(memcmp(ev.keys + x->key_off, "ev:", 3), 0);
        whole++;
    }
    /* the first two reservations of key bytes (at most 6 each) fit in 16 */
    cr_assert_geq(whole, 2, "the first keys fit");
    cr_assert_leq(whole, 4, "no more than 16 bytes of keys (of 4 at least each)");
    ev_free(&ev);
    tb_free(&t);
    engine_destroy(e);
}

/* SET ... GET of big values into a small out buffer under memory pressure:
 * ops that ran out of out buffer, then their reruns (engine_rerun_outbuf),
 * with memory eviction before the out-buffer check. No key is reported
 * twice; what the batches removed on their own matches, key by key. */
ENGINE_TEST(ev_outbuf_reruns_report_once)
{
    T_NEED_STORE(p);
    engine *e = ev_open(p, 0, 2ull << 20, 1);
    enum { N = 3000, ROUNDS = 6, PER = 64 };
    static uint32_t count[N];
    memset(count, 0, sizeof(count));
    static uint32_t ended[N]; /* evicted before its SET ... GET wrote it anew */
    memset(ended, 0, sizeof(ended));
    cudis_evbuf ev;
    ev_init(&ev, 16 * N, 64 * 16 * N);
    tbatch t;
    tb_init(&t, 0);
    uint64_t ev0 = evictions(e);
    uint32_t next = 0, reruns_total = 0;
    for (uint32_t r = 0; r < ROUNDS; r++) {
        /* fill with values of one size */
        tb_reset(&t);
        for (uint32_t j = 0; j < 300; j++) {
            ev_set(&t, next++, r % 2 ? 3000 : 700, 0);
        }
        t.b.ev = &ev;
        tb_run(e, &t, T_NOW);
        /* replace recent keys with values of another size, asking for the
         * old ones into 1 KB: most must run again */
        tb_free(&t);
        tb_init(&t, 1024);
        for (uint32_t j = 0; j < PER; j++) {
            uint32_t i = next - 1 - j * 3;
            char k[32];
            uint32_t n = ev_key(k, sizeof(k), i);
            static uint8_t val[5000];
            uint32_t at = tb_op(&t, CUDIS_OP_SET, CUDIS_F_GET, k, n, val, r % 2 ? 900 : 4000, 0, 0);
            t.ops[at].db = ev_db(i);
        }
        t.b.ev = &ev;
        tb_run(e, &t, T_NOW);
        uint32_t reruns = 0;
        cr_assert_eq(engine_rerun_outbuf(e, &t.b, &reruns), CUDIS_OK);
        t.out = t.b.out; /* grown by the reruns */
        t.out_cap = t.b.out_cap;
        reruns_total += reruns;
        for (uint32_t j = 0; j < t.n; j++) {
            cr_assert_eq(t.res[j].status, CUDIS_OK, "op %u: %d", j, t.res[j].status);
            if (!(t.res[j].flags & CUDIS_R_FOUND)) {
                ended[next - 1 - j * 3]++;
            }
        }
    }
    cr_assert_gt(reruns_total, 0, "the out buffer was too small for some");
    ev_tally(&ev, CUDIS_EV_EVICTED, count, N);
    ev_match(e, count, NULL, ended, next, T_NOW, ev.len, evictions(e) - ev0);
    ev_free(&ev);
    tb_free(&t);
    engine_destroy(e);
}
