/*
 * pubsub.c - publish/subscribe as Redis 7 has it: SUBSCRIBE, UNSUBSCRIBE,
 * PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, the sharded SSUBSCRIBE, SUNSUBSCRIBE,
 * SPUBLISH (a namespace of their own outside cluster mode), PUBSUB
 * CHANNELS/NUMSUB/NUMPAT/SHARDCHANNELS/SHARDNUMSUB, and the keyspace
 * notifications built on it.
 *
 * One registry for every loop, under one mutex: per namespace a hash of
 * channels, each with its subscribers, and a list of patterns. A message
 * is framed once per protocol (RESP2 array, RESP3 push). A subscriber of
 * the publishing loop gets it at once (behind its pending replies); one of
 * another loop gets it through that loop's inbox, in publish order, and
 * the loop is woken. Slow subscribers meet client-output-buffer-limit's
 * pubsub class (conn.c).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "cudis_hd.h"
#include "server_internal.h"

#define PSEED 0x7f4a7c159e3779b9ull

typedef struct ps_sub {
    conn *c;
    struct ps_sub *next;
} ps_sub;

struct ps_chan {
    struct ps_chan *next; /* hash chain */
    uint64_t hash;
    ps_sub *subs;
    long nsubs;
    uint32_t len;
    char name[];
};

struct ps_pat {
    struct ps_pat *next;
    conn *c;
    uint32_t len;
    char pat[];
};

typedef struct ps_space {
    ps_chan **tab;
    size_t cap, n; /* buckets (power of two), channels */
} ps_space;

static struct {
    pthread_mutex_t mu;
    ps_space ns[2]; /* 0: SUBSCRIBE, 1: SSUBSCRIBE */
    ps_pat *pats;
    long npats;
} ps = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------------------
 * Delivery
 * ---------------------------------------------------------------------- */

/* A message for loop lp's client c, queued by another loop. */
typedef struct ps_msg {
    struct ps_msg *next;
    conn *c;
    size_t len;
    char data[];
} ps_msg;

static void deliver_here(conn *c, const char *bytes, size_t n)
{
    if (c->flags & CONN_CLOSING) {
        return;
    }
    if (c->pending > 0) {
        batch_add_literal(&c->lp->b, c, bytes, n); /* behind its pending replies */
    } else {
        sbuf_add(&c->out, bytes, n);
        conn_want_write(c);
    }
}

/* Called with ps.mu held, from the publishing loop `from`. */
static void deliver(loop *from, conn *c, const char *bytes, size_t n)
{
    if (c->lp == from) {
        deliver_here(c, bytes, n);
        return;
    }
    ps_msg *m = xmalloc(sizeof(*m) + n);
    m->next = NULL;
    m->c = c;
    m->len = n;
    memcpy(m->data, bytes, n);
    loop *lp = c->lp;
    pthread_mutex_lock(&lp->lock);
    bool wake = lp->inbox == NULL;
    if (lp->inbox_tail != NULL) {
        lp->inbox_tail->next = m;
    } else {
        lp->inbox = m;
    }
    lp->inbox_tail = m;
    pthread_mutex_unlock(&lp->lock);
    if (wake) {
        loop_wake(lp);
    }
}

void pubsub_deliver(loop *from, conn *c, const char *bytes, size_t n)
{
    deliver(from, c, bytes, n);
}

bool pubsub_subscribed_any(conn *c)
{
    pthread_mutex_lock(&ps.mu);
    bool sub = pubsub_subscribed(c);
    pthread_mutex_unlock(&ps.mu);
    return sub;
}

void pubsub_drain_inbox(loop *lp)
{
    pthread_mutex_lock(&lp->lock);
    ps_msg *m = lp->inbox;
    lp->inbox = lp->inbox_tail = NULL;
    pthread_mutex_unlock(&lp->lock);
    while (m != NULL) {
        ps_msg *next = m->next;
        deliver_here(m->c, m->data, m->len);
        free(m);
        m = next;
    }
}

/* Drop the queued messages of a client that goes away (its loop's thread). */
static void inbox_forget(conn *c)
{
    loop *lp = c->lp;
    pthread_mutex_lock(&lp->lock);
    ps_msg **pp = &lp->inbox, *last = NULL;
    while (*pp != NULL) {
        ps_msg *m = *pp;
        if (m->c == c) {
            *pp = m->next;
            free(m);
        } else {
            last = m;
            pp = &m->next;
        }
    }
    lp->inbox_tail = last;
    pthread_mutex_unlock(&lp->lock);
}

/* The frame of a message in c's protocol: kind ("message", "smessage",
 * "pmessage" with its pattern), channel, payload. */
static void frame(sbuf *o, int proto, const char *kind, const char *pat, uint32_t plen,
                  const char *ch, uint32_t clen, const char *msg, uint32_t mlen)
{
    sbuf_printf(o, "%c%d\r\n", proto >= 3 ? '>' : '*', pat ? 4 : 3);
    resp_bulks(o, kind);
    if (pat) {
        resp_bulk(o, pat, plen);
    }
    resp_bulk(o, ch, clen);
    resp_bulk(o, msg, mlen);
}

/* ------------------------------------------------------------------------
 * The registry (ps.mu held)
 * ---------------------------------------------------------------------- */

static uint64_t chash(const char *s, uint32_t n)
{
    return cudis_hash(s, n, PSEED);
}

static ps_chan *chan_find(ps_space *sp, const char *name, uint32_t len, uint64_t h)
{
    if (sp->cap == 0) {
        return NULL;
    }
    for (ps_chan *ch = sp->tab[h & (sp->cap - 1)]; ch != NULL; ch = ch->next) {
        if (ch->hash == h && ch->len == len && memcmp(ch->name, name, len) == 0) {
            return ch;
        }
    }
    return NULL;
}

static void space_grow(ps_space *sp)
{
    size_t ocap = sp->cap;
    ps_chan **old = sp->tab;
    sp->cap = ocap ? ocap * 2 : 64;
    sp->tab = xcalloc(sp->cap, sizeof(*sp->tab));
    for (size_t i = 0; i < ocap; i++) {
        for (ps_chan *ch = old[i], *next; ch != NULL; ch = next) {
            next = ch->next;
            ch->next = sp->tab[ch->hash & (sp->cap - 1)];
            sp->tab[ch->hash & (sp->cap - 1)] = ch;
        }
    }
    free(old);
}

static ps_chan *chan_get(ps_space *sp, const char *name, uint32_t len)
{
    uint64_t h = chash(name, len);
    ps_chan *ch = chan_find(sp, name, len, h);
    if (ch != NULL) {
        return ch;
    }
    if ((sp->n + 1) * 2 > sp->cap) {
        space_grow(sp);
    }
    ch = xcalloc(1, sizeof(*ch) + len + 1);
    ch->hash = h;
    ch->len = len;
    memcpy(ch->name, name, len);
    ch->next = sp->tab[h & (sp->cap - 1)];
    sp->tab[h & (sp->cap - 1)] = ch;
    sp->n++;
    return ch;
}

static void chan_drop_if_empty(ps_space *sp, ps_chan *ch)
{
    if (ch->subs != NULL) {
        return;
    }
    ps_chan **pp = &sp->tab[ch->hash & (sp->cap - 1)];
    while (*pp != ch) {
        pp = &(*pp)->next;
    }
    *pp = ch->next;
    sp->n--;
    free(ch);
}

/* Index of ch in c's list for namespace ns, or -1. */
static int conn_chan_idx(const conn *c, int ns, const ps_chan *ch)
{
    for (int i = 0; i < c->ps_n[ns]; i++) {
        if (c->ps_chans[ns][i] == ch) {
            return i;
        }
    }
    return -1;
}

static bool subscribe1(conn *c, int ns, const char *name, uint32_t len)
{
    ps_chan *ch = chan_get(&ps.ns[ns], name, len);
    if (conn_chan_idx(c, ns, ch) >= 0) {
        return false;
    }
    ps_sub *s = xmalloc(sizeof(*s));
    s->c = c;
    s->next = ch->subs;
    ch->subs = s;
    ch->nsubs++;
    if (c->ps_n[ns] == c->ps_cap[ns]) {
        c->ps_cap[ns] = c->ps_cap[ns] ? c->ps_cap[ns] * 2 : 4;
        c->ps_chans[ns] = xrealloc(c->ps_chans[ns], (size_t)c->ps_cap[ns] * sizeof(ps_chan *));
    }
    c->ps_chans[ns][c->ps_n[ns]++] = ch;
    return true;
}

static void unsubscribe_at(conn *c, int ns, int i)
{
    ps_chan *ch = c->ps_chans[ns][i];
    for (ps_sub **pp = &ch->subs; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->c == c) {
            ps_sub *s = *pp;
            *pp = s->next;
            free(s);
            ch->nsubs--;
            break;
        }
    }
    c->ps_chans[ns][i] = c->ps_chans[ns][--c->ps_n[ns]];
    chan_drop_if_empty(&ps.ns[ns], ch);
}

static ps_pat *conn_pat(const conn *c, const char *p, uint32_t len, int *idx)
{
    for (int i = 0; i < c->ps_npat; i++) {
        ps_pat *x = c->ps_pats[i];
        if (x->len == len && memcmp(x->pat, p, len) == 0) {
            *idx = i;
            return x;
        }
    }
    return NULL;
}

static void punsubscribe_at(conn *c, int i)
{
    ps_pat *x = c->ps_pats[i];
    for (ps_pat **pp = &ps.pats; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == x) {
            *pp = x->next;
            break;
        }
    }
    ps.npats--;
    c->ps_pats[i] = c->ps_pats[--c->ps_npat];
    free(x);
}

/* ------------------------------------------------------------------------
 * Commands
 * ---------------------------------------------------------------------- */

static int sub_count(const conn *c)
{
    return c->ps_n[0] + c->ps_npat;
}

/* ["subscribe", channel, count] and its kin (a push in RESP3). */
static void ack(conn *c, const char *kind, const char *name, uint32_t len, long count)
{
    sbuf_printf(&c->out, "%c3\r\n", c->proto >= 3 ? '>' : '*');
    resp_bulks(&c->out, kind);
    if (name != NULL) {
        resp_bulk(&c->out, name, len);
    } else {
        resp_null(&c->out, c->proto);
    }
    resp_int(&c->out, count);
}

static void subscribe_generic(conn *c, int argc, char **argv, uint32_t *lens, int ns)
{
    pthread_mutex_lock(&ps.mu);
    for (int i = 1; i < argc; i++) {
        subscribe1(c, ns, argv[i], lens[i]);
        ack(c, ns ? "ssubscribe" : "subscribe", argv[i], lens[i], ns ? c->ps_n[1] : sub_count(c));
    }
    pthread_mutex_unlock(&ps.mu);
}

void cmd_subscribe(conn *c, int argc, char **argv, uint32_t *lens)
{
    subscribe_generic(c, argc, argv, lens, 0);
}

void cmd_ssubscribe(conn *c, int argc, char **argv, uint32_t *lens)
{
    subscribe_generic(c, argc, argv, lens, 1);
}

static void unsubscribe_generic(conn *c, int argc, char **argv, uint32_t *lens, int ns)
{
    const char *kind = ns ? "sunsubscribe" : "unsubscribe";
    pthread_mutex_lock(&ps.mu);
    if (argc == 1) {
        if (c->ps_n[ns] == 0) {
            ack(c, kind, NULL, 0, ns ? 0 : sub_count(c));
        }
        while (c->ps_n[ns] > 0) {
            ps_chan *ch = c->ps_chans[ns][0];
            /* the name outlives the channel for the reply */
            char *name = xmalloc(ch->len + 1);
            uint32_t len = ch->len;
            memcpy(name, ch->name, len);
            unsubscribe_at(c, ns, 0);
            ack(c, kind, name, len, ns ? c->ps_n[1] : sub_count(c));
            free(name);
        }
    } else {
        for (int i = 1; i < argc; i++) {
            ps_chan *ch = chan_find(&ps.ns[ns], argv[i], lens[i], chash(argv[i], lens[i]));
            int at = ch != NULL ? conn_chan_idx(c, ns, ch) : -1;
            if (at >= 0) {
                unsubscribe_at(c, ns, at);
            }
            ack(c, kind, argv[i], lens[i], ns ? c->ps_n[1] : sub_count(c));
        }
    }
    pthread_mutex_unlock(&ps.mu);
}

void cmd_unsubscribe(conn *c, int argc, char **argv, uint32_t *lens)
{
    unsubscribe_generic(c, argc, argv, lens, 0);
}

void cmd_sunsubscribe(conn *c, int argc, char **argv, uint32_t *lens)
{
    unsubscribe_generic(c, argc, argv, lens, 1);
}

void cmd_psubscribe(conn *c, int argc, char **argv, uint32_t *lens)
{
    pthread_mutex_lock(&ps.mu);
    for (int i = 1; i < argc; i++) {
        int at;
        if (conn_pat(c, argv[i], lens[i], &at) == NULL) {
            ps_pat *x = xmalloc(sizeof(*x) + lens[i] + 1);
            x->c = c;
            x->len = lens[i];
            memcpy(x->pat, argv[i], lens[i]);
            x->pat[lens[i]] = '\0';
            x->next = ps.pats;
            ps.pats = x;
            ps.npats++;
            if (c->ps_npat == c->ps_patcap) {
                c->ps_patcap = c->ps_patcap ? c->ps_patcap * 2 : 4;
                c->ps_pats = xrealloc(c->ps_pats, (size_t)c->ps_patcap * sizeof(ps_pat *));
            }
            c->ps_pats[c->ps_npat++] = x;
        }
        ack(c, "psubscribe", argv[i], lens[i], sub_count(c));
    }
    pthread_mutex_unlock(&ps.mu);
}

void cmd_punsubscribe(conn *c, int argc, char **argv, uint32_t *lens)
{
    pthread_mutex_lock(&ps.mu);
    if (argc == 1) {
        if (c->ps_npat == 0) {
            ack(c, "punsubscribe", NULL, 0, sub_count(c));
        }
        while (c->ps_npat > 0) {
            ps_pat *x = c->ps_pats[0];
            char *pat = xmalloc(x->len + 1);
            uint32_t len = x->len;
            memcpy(pat, x->pat, len);
            punsubscribe_at(c, 0);
            ack(c, "punsubscribe", pat, len, sub_count(c));
            free(pat);
        }
    } else {
        for (int i = 1; i < argc; i++) {
            int at;
            if (conn_pat(c, argv[i], lens[i], &at) != NULL) {
                punsubscribe_at(c, at);
            }
            ack(c, "punsubscribe", argv[i], lens[i], sub_count(c));
        }
    }
    pthread_mutex_unlock(&ps.mu);
}

long pubsub_publish(loop *from, int ns, const char *ch, uint32_t clen, const char *msg,
                    uint32_t mlen)
{
    long n = 0;
    sbuf f2 = {0}, f3 = {0}; /* the frame in RESP2 and RESP3, made when needed */
    const char *kind = ns ? "smessage" : "message";
    pthread_mutex_lock(&ps.mu);
    ps_chan *c = chan_find(&ps.ns[ns], ch, clen, chash(ch, clen));
    for (ps_sub *s = c != NULL ? c->subs : NULL; s != NULL; s = s->next) {
        sbuf *f = s->c->proto >= 3 ? &f3 : &f2;
        if (f->len == 0) {
            frame(f, s->c->proto, kind, NULL, 0, ch, clen, msg, mlen);
        }
        deliver(from, s->c, f->p, f->len);
        n++;
    }
    if (ns == 0) {
        for (ps_pat *x = ps.pats; x != NULL; x = x->next) {
            if (!util_glob_match(x->pat, x->len, ch, clen, false)) {
                continue;
            }
            sbuf f = {0};
            frame(&f, x->c->proto, "pmessage", x->pat, x->len, ch, clen, msg, mlen);
            deliver(from, x->c, f.p, f.len);
            sbuf_free(&f);
            n++;
        }
    }
    pthread_mutex_unlock(&ps.mu);
    sbuf_free(&f2);
    sbuf_free(&f3);
    return n;
}

void cmd_publish(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    resp_int(&c->out, pubsub_publish(c->lp, 0, argv[1], lens[1], argv[2], lens[2]));
}

void cmd_spublish(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    resp_int(&c->out, pubsub_publish(c->lp, 1, argv[1], lens[1], argv[2], lens[2]));
}

/* PUBSUB CHANNELS / SHARDCHANNELS [pattern] */
static void list_channels(conn *c, int argc, char **argv, uint32_t *lens, int ns)
{
    sbuf names = {0};
    long n = 0;
    pthread_mutex_lock(&ps.mu);
    ps_space *sp = &ps.ns[ns];
    for (size_t i = 0; i < sp->cap; i++) {
        for (ps_chan *ch = sp->tab[i]; ch != NULL; ch = ch->next) {
            if (argc < 3 || util_glob_match(argv[2], lens[2], ch->name, ch->len, false)) {
                resp_bulk(&names, ch->name, ch->len);
                n++;
            }
        }
    }
    pthread_mutex_unlock(&ps.mu);
    resp_array(&c->out, n);
    sbuf_add(&c->out, names.p, names.len);
    sbuf_free(&names);
}

static void numsub(conn *c, int argc, char **argv, uint32_t *lens, int ns)
{
    resp_array(&c->out, (long)(argc - 2) * 2); /* a flat array in RESP3 too (Redis 7.0) */
    pthread_mutex_lock(&ps.mu);
    for (int i = 2; i < argc; i++) {
        ps_chan *ch = chan_find(&ps.ns[ns], argv[i], lens[i], chash(argv[i], lens[i]));
        resp_bulk(&c->out, argv[i], lens[i]);
        resp_int(&c->out, ch != NULL ? ch->nsubs : 0);
    }
    pthread_mutex_unlock(&ps.mu);
}

void cmd_pubsub_channels(conn *c, int argc, char **argv, uint32_t *lens)
{
    list_channels(c, argc, argv, lens, 0);
}

void cmd_pubsub_shardchannels(conn *c, int argc, char **argv, uint32_t *lens)
{
    list_channels(c, argc, argv, lens, 1);
}

void cmd_pubsub_numsub(conn *c, int argc, char **argv, uint32_t *lens)
{
    numsub(c, argc, argv, lens, 0);
}

void cmd_pubsub_shardnumsub(conn *c, int argc, char **argv, uint32_t *lens)
{
    numsub(c, argc, argv, lens, 1);
}

void cmd_pubsub_numpat(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    pthread_mutex_lock(&ps.mu);
    long n = ps.npats;
    pthread_mutex_unlock(&ps.mu);
    resp_int(&c->out, n);
}

void pubsub_unsubscribe_all(conn *c)
{
    if (c->ps_n[0] + c->ps_n[1] + c->ps_npat > 0) {
        pthread_mutex_lock(&ps.mu);
        for (int ns = 0; ns < 2; ns++) {
            while (c->ps_n[ns] > 0) {
                unsubscribe_at(c, ns, 0);
            }
        }
        while (c->ps_npat > 0) {
            punsubscribe_at(c, 0);
        }
        pthread_mutex_unlock(&ps.mu);
    }
    for (int ns = 0; ns < 2; ns++) {
        free(c->ps_chans[ns]);
        c->ps_chans[ns] = NULL;
        c->ps_cap[ns] = 0;
    }
    free(c->ps_pats);
    c->ps_pats = NULL;
    c->ps_patcap = 0;
}

void pubsub_conn_gone(conn *c)
{
    pubsub_unsubscribe_all(c);
    pubsub_monitor_stop(c);
    inbox_forget(c);
}

bool pubsub_subscriptions_pass(conn *c, bool (*ok)(conn *c, const char *s, size_t n, bool pattern))
{
    bool pass = true;
    pthread_mutex_lock(&ps.mu);
    for (int ns = 0; ns < 2 && pass; ns++) {
        for (int i = 0; i < c->ps_n[ns] && pass; i++) {
            pass = ok(c, c->ps_chans[ns][i]->name, c->ps_chans[ns][i]->len, false);
        }
    }
    for (int i = 0; i < c->ps_npat && pass; i++) {
        pass = ok(c, c->ps_pats[i]->pat, c->ps_pats[i]->len, true);
    }
    pthread_mutex_unlock(&ps.mu);
    return pass;
}

bool pubsub_subscribed(const conn *c)
{
    return c->ps_n[0] + c->ps_n[1] + c->ps_npat > 0;
}

/* ------------------------------------------------------------------------
 * MONITOR: every command, as it runs, to the monitoring clients
 * ---------------------------------------------------------------------- */

static struct {
    conn **c;
    int n, cap;
} mon; /* under ps.mu */
static _Atomic int nmon;

void cmd_monitor(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    if (c->flags & CONN_MONITOR) {
        return; /* already: no reply, as Redis */
    }
    pthread_mutex_lock(&ps.mu);
    if (mon.n == mon.cap) {
        mon.cap = mon.cap ? mon.cap * 2 : 4;
        mon.c = xrealloc(mon.c, (size_t)mon.cap * sizeof(conn *));
    }
    mon.c[mon.n++] = c;
    atomic_store(&nmon, mon.n);
    pthread_mutex_unlock(&ps.mu);
    c->flags |= CONN_MONITOR;
    reply_ok(c);
}

void pubsub_monitor_stop(conn *c)
{
    if (!(c->flags & CONN_MONITOR)) {
        return;
    }
    pthread_mutex_lock(&ps.mu);
    for (int i = 0; i < mon.n; i++) {
        if (mon.c[i] == c) {
            mon.c[i] = mon.c[--mon.n];
            break;
        }
    }
    atomic_store(&nmon, mon.n);
    pthread_mutex_unlock(&ps.mu);
    c->flags &= ~CONN_MONITOR;
}

/* An argument as Redis's sdscatrepr writes it. */
static void repr(sbuf *o, const char *s, uint32_t n)
{
    sbuf_add(o, "\"", 1);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '\\': sbuf_add(o, "\\\\", 2); break;
        case '"': sbuf_add(o, "\\\"", 2); break;
        case '\n': sbuf_add(o, "\\n", 2); break;
        case '\r': sbuf_add(o, "\\r", 2); break;
        case '\t': sbuf_add(o, "\\t", 2); break;
        case '\a': sbuf_add(o, "\\a", 2); break;
        case '\b': sbuf_add(o, "\\b", 2); break;
        default:
            if (ch >= 32 && ch < 127) {
                sbuf_add(o, (const char *)&ch, 1);
            } else {
                sbuf_printf(o, "\\x%02x", ch);
            }
        }
    }
    sbuf_add(o, "\"", 1);
}

void pubsub_monitor_feed(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens)
{
    if (atomic_load_explicit(&nmon, memory_order_relaxed) == 0) {
        return;
    }
    struct timeval tv;
    gettimeofday(&tv, NULL);
    sbuf line = {0};
    sbuf_printf(&line, "+%ld.%06ld [%d %s]", (long)tv.tv_sec, (long)tv.tv_usec, c->db,
                (c->flags & CONN_FAKE) ? "lua" : c->addr);
    for (int i = 0; i < argc; i++) {
        sbuf_add(&line, " ", 1);
        if (arg_redacted(cmd, i, argc, argv, lens)) {
            repr(&line, "(redacted)", 10);
        } else {
            repr(&line, argv[i], lens[i]);
        }
    }
    sbuf_add(&line, "\r\n", 2);
    pthread_mutex_lock(&ps.mu);
    for (int i = 0; i < mon.n; i++) {
        deliver(c->lp, mon.c[i], line.p, line.len);
    }
    pthread_mutex_unlock(&ps.mu);
    sbuf_free(&line);
}
