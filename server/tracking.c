/*
 * tracking.c - client-side caching as Redis 7 has it (CLIENT TRACKING):
 * the keys a tracking client read are remembered, and a modification of
 * one (by any client, by expiry or eviction in the engine) sends that
 * client an invalidation message; BCAST clients instead get every key
 * that starts with one of their prefixes, gathered per batch. OPTIN and
 * OPTOUT with CLIENT CACHING, NOLOOP, REDIRECT (RESP3 push to the other
 * client, or RESP2 through its __redis__:invalidate subscription), a
 * flush invalidating everything (a null key list), CLIENT GETREDIR,
 * CLIENT TRACKINGINFO, tracking-table-max-keys.
 *
 * One registry for every loop, under one mutex: every client (by id, for
 * REDIRECT), the table of remembered keys (key -> the ids
 * that read it; databases are not told apart, as in Redis) and the BCAST
 * prefixes. A client leaves the registry before it is freed (conn_free),
 * so any client found in it may be sent to.
 */
#include <stdlib.h>
#include <string.h>

#include "cudis_hd.h"
#include "server_internal.h"

#define TSEED 0x9e3779b97f4a7c15ull

struct trk_client {
    struct trk_client *next; /* the registry's hash chain */
    uint64_t id;
    conn *c;
    _Atomic uint32_t flags; /* TRK_*; BROKEN is set by other loops */
    uint64_t redir;
    int nprefix; /* BCAST prefixes (sorted, for TRACKINGINFO) */
    char **prefix;
    uint32_t *plen;
};

typedef struct trk_key {
    struct trk_key *next;
    uint64_t hash;
    uint64_t *ids;
    uint32_t n, cap;
    uint32_t len;
    char key[];
} trk_key;

/* A BCAST prefix: its clients and the keys modified since the last send. */
typedef struct trk_prefix {
    struct trk_prefix *next;
    uint64_t *ids;
    uint32_t n, cap;
    sbuf keys;     /* the keys as RESP bulk strings */
    uint64_t *who; /* per pending key, the client that modified it */
    uint32_t npend, cappend;
    uint32_t len;
    char p[];
} trk_prefix;

static struct {
    pthread_mutex_t mu;
    trk_client **reg;
    size_t regcap, nreg;
    trk_key **tab;
    size_t cap, nkeys, nitems, cursor;
    trk_prefix *prefixes;
    size_t nprefixes;
    bool pending; /* some prefix has keys to send */
} tr = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Atomic long ntracking; /* clients with TRK_ON */

bool tracking_active(void)
{
    return atomic_load_explicit(&ntracking, memory_order_relaxed) > 0;
}

long tracking_clients(void)
{
    return atomic_load_explicit(&ntracking, memory_order_relaxed);
}

/* ------------------------------------------------------------------------
 * The registry of clients (tr.mu held)
 * ---------------------------------------------------------------------- */

static trk_client *reg_find(uint64_t id)
{
    if (tr.regcap == 0) {
        return NULL;
    }
    for (trk_client *t = tr.reg[id & (tr.regcap - 1)]; t != NULL; t = t->next) {
        if (t->id == id) {
            return t;
        }
    }
    return NULL;
}

static void reg_add(trk_client *t)
{
    if (tr.nreg + 1 > tr.regcap / 2) {
        size_t cap = tr.regcap ? tr.regcap * 2 : 64;
        trk_client **tab = xcalloc(cap, sizeof(*tab));
        for (size_t i = 0; i < tr.regcap; i++) {
            for (trk_client *x = tr.reg[i], *nx; x != NULL; x = nx) {
                nx = x->next;
                x->next = tab[x->id & (cap - 1)];
                tab[x->id & (cap - 1)] = x;
            }
        }
        free(tr.reg);
        tr.reg = tab;
        tr.regcap = cap;
    }
    t->next = tr.reg[t->id & (tr.regcap - 1)];
    tr.reg[t->id & (tr.regcap - 1)] = t;
    tr.nreg++;
}

static void reg_remove(trk_client *t)
{
    for (trk_client **pp = &tr.reg[t->id & (tr.regcap - 1)]; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            tr.nreg--;
            return;
        }
    }
}

void tracking_conn_new(conn *c)
{
    trk_client *t = xcalloc(1, sizeof(*t));
    t->id = c->id;
    t->c = c;
    pthread_mutex_lock(&tr.mu);
    reg_add(t);
    pthread_mutex_unlock(&tr.mu);
    c->trk = t;
}

/* ------------------------------------------------------------------------
 * Sending invalidations (tr.mu held)
 * ---------------------------------------------------------------------- */

/* To tracking client t: the keys (a RESP array) or, with keys NULL, that
 * every key is invalid (a flush). Through its redirection if it has one:
 * RESP3 push, or RESP2 message on __redis__:invalidate to a subscribed
 * client; a RESP2 client without a redirection gets nothing (as Redis). */
static void send_invalidation(loop *from, trk_client *t, const char *keys, size_t klen)
{
    conn *dst = t->c;
    if (t->redir != 0) {
        trk_client *r = reg_find(t->redir);
        if (r == NULL) {
            atomic_fetch_or(&t->flags, TRK_BROKEN);
            if (t->c->proto >= 3) {
                char m[96];
                int n = snprintf(m, sizeof(m), ">2\r\n$21\r\ntracking-redir-broken\r\n:%llu\r\n",
                                 (unsigned long long)t->redir);
                tracking_deliver(from, t->c, m, (size_t)n);
            }
            return;
        }
        dst = r->c;
    }
    sbuf f = {0};
    if (dst->proto >= 3) {
        sbuf_adds(&f, ">2\r\n$10\r\ninvalidate\r\n");
        sbuf_adds(&f, keys ? "" : "_\r\n");
    } else if (t->redir != 0) {
        sbuf_adds(&f, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n");
        sbuf_adds(&f, keys ? "" : "$-1\r\n");
    } else {
        return;
    }
    if (keys != NULL) {
        sbuf_add(&f, keys, klen);
    }
    if (dst->proto >= 3 || pubsub_subscribed_any(dst)) {
        tracking_deliver(from, dst, f.p, f.len);
    }
    sbuf_free(&f);
}

void tracking_deliver(loop *from, conn *c, const char *bytes, size_t n)
{
    if (c->lp == from && from->running == c) {
        sbuf_add(&c->trk_defer, bytes, n); /* after the reply of what it runs now */
        return;
    }
    pubsub_deliver(from, c, bytes, n);
}

void tracking_after_command(conn *c)
{
    if (c->trk_defer.len == 0) {
        return;
    }
    if (c->pending > 0) { /* behind its pending replies */
        batch_add_literal(&c->lp->b, c, c->trk_defer.p, c->trk_defer.len);
    } else {
        sbuf_add(&c->out, c->trk_defer.p, c->trk_defer.len);
        conn_want_write(c);
    }
    c->trk_defer.len = 0;
}

/* ------------------------------------------------------------------------
 * The table of remembered keys (tr.mu held)
 * ---------------------------------------------------------------------- */

static uint64_t khash(const char *k, uint32_t len)
{
    return cudis_hash(k, len, TSEED);
}

static trk_key **key_slot(const char *k, uint32_t len, uint64_t h)
{
    trk_key **pp = &tr.tab[h & (tr.cap - 1)];
    while (*pp != NULL &&
           !((*pp)->hash == h && (*pp)->len == len && memcmp((*pp)->key, k, len) == 0)) {
        pp = &(*pp)->next;
    }
    return pp;
}

static void tab_grow(void)
{
    size_t cap = tr.cap ? tr.cap * 2 : 1024;
    trk_key **tab = xcalloc(cap, sizeof(*tab));
    for (size_t i = 0; i < tr.cap; i++) {
        for (trk_key *x = tr.tab[i], *nx; x != NULL; x = nx) {
            nx = x->next;
            x->next = tab[x->hash & (cap - 1)];
            tab[x->hash & (cap - 1)] = x;
        }
    }
    free(tr.tab);
    tr.tab = tab;
    tr.cap = cap;
}

static void key_free(trk_key *k)
{
    tr.nkeys--;
    tr.nitems -= k->n;
    free(k->ids);
    free(k);
}

static void one_key_array(sbuf *o, const char *k, uint32_t len)
{
    sbuf_adds(o, "*1\r\n");
    resp_bulk(o, k, len);
}

/* Key entry *pp is invalid: its clients are told (but `who` itself when
 * it asked for NOLOOP) and it is forgotten. */
static void key_invalidate(loop *from, trk_key **pp, uint64_t who)
{
    trk_key *k = *pp;
    *pp = k->next;
    sbuf msg = {0};
    for (uint32_t i = 0; i < k->n; i++) {
        trk_client *t = reg_find(k->ids[i]);
        if (t == NULL) {
            continue;
        }
        uint32_t fl = atomic_load(&t->flags);
        if (!(fl & TRK_ON) || (fl & TRK_BCAST) || ((fl & TRK_NOLOOP) && t->id == who)) {
            continue;
        }
        if (msg.len == 0) {
            one_key_array(&msg, k->key, k->len);
        }
        send_invalidation(from, t, msg.p, msg.len);
    }
    sbuf_free(&msg);
    key_free(k);
}

/* tracking-table-max-keys: forget (and invalidate) keys from a moving
 * cursor until the table is within the limit. */
static void table_limit(loop *from)
{
    long long max = srv.cfg.tracking_table_max_keys;
    while (max > 0 && tr.nkeys > (size_t)max) {
        tr.cursor &= tr.cap - 1;
        while (tr.tab[tr.cursor] == NULL) {
            tr.cursor = (tr.cursor + 1) & (tr.cap - 1);
        }
        key_invalidate(from, &tr.tab[tr.cursor], 0);
    }
}

static void remember(loop *from, uint64_t id, const char *key, uint32_t len)
{
    if (tr.nkeys + 1 > tr.cap) {
        tab_grow();
    }
    uint64_t h = khash(key, len);
    trk_key **pp = key_slot(key, len, h);
    trk_key *k = *pp;
    if (k == NULL) {
        k = xmalloc(sizeof(*k) + len);
        k->next = NULL;
        k->hash = h;
        k->ids = NULL;
        k->n = k->cap = 0;
        k->len = len;
        memcpy(k->key, key, len);
        *pp = k;
        tr.nkeys++;
    }
    for (uint32_t i = 0; i < k->n; i++) {
        if (k->ids[i] == id) {
            return;
        }
    }
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 2;
        k->ids = xrealloc(k->ids, k->cap * sizeof(*k->ids));
    }
    k->ids[k->n++] = id;
    tr.nitems++;
    table_limit(from);
}

bool tracking_wants(conn *c, const command *cmd)
{
    if (c->trk == NULL || !(cmd->flags & CMD_READONLY)) {
        return false;
    }
    uint32_t fl = atomic_load_explicit(&c->trk->flags, memory_order_relaxed);
    if (!(fl & TRK_ON) || (fl & TRK_BCAST)) {
        return false;
    }
    if (fl & TRK_OPTIN) {
        return (fl & TRK_CACHING) != 0;
    }
    if (fl & TRK_OPTOUT) {
        return !(fl & TRK_CACHING);
    }
    return true;
}

void tracking_command_done(conn *c, const command *cmd)
{
    if (c->trk == NULL || c->multi != NULL ||
        !(atomic_load_explicit(&c->trk->flags, memory_order_relaxed) & TRK_CACHING)) {
        return;
    }
    const command *top = cmd_parent(cmd) ? cmd_parent(cmd) : cmd;
    if (strcmp(top->name, "client") != 0) { /* CLIENT CACHING itself, and the other
                                             * CLIENT subcommands, keep it */
        atomic_fetch_and(&c->trk->flags, ~(uint32_t)TRK_CACHING);
    }
}

void tracking_remember_ops(conn *c, const cudis_batch *b, uint32_t op0, uint32_t nops)
{
    pthread_mutex_lock(&tr.mu);
    for (uint32_t i = op0; i < op0 + nops; i++) {
        const cudis_op *op = &b->ops[i];
        remember(c->lp, c->id, (const char *)b->in + op->key_off, op->key_len);
    }
    pthread_mutex_unlock(&tr.mu);
}

void tracking_remember_argv(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens)
{
    if (cmd->first_key <= 0 || cmd->step <= 0) {
        return;
    }
    int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
    pthread_mutex_lock(&tr.mu);
    for (int i = cmd->first_key; i <= last && i < argc; i += cmd->step) {
        remember(c->lp, c->id, argv[i], lens[i]);
    }
    pthread_mutex_unlock(&tr.mu);
}

/* ------------------------------------------------------------------------
 * Modifications
 * ---------------------------------------------------------------------- */

static bool has_prefix(const char *k, uint32_t len, const char *p, uint32_t plen)
{
    return plen <= len && memcmp(k, p, plen) == 0;
}

void tracking_invalidate(loop *from, const char *key, uint32_t len, uint64_t who)
{
    pthread_mutex_lock(&tr.mu);
    if (tr.nkeys > 0) {
        trk_key **pp = key_slot(key, len, khash(key, len));
        if (*pp != NULL) {
            key_invalidate(from, pp, who);
        }
    }
    for (trk_prefix *p = tr.prefixes; p != NULL; p = p->next) {
        if (!has_prefix(key, len, p->p, p->len)) {
            continue;
        }
        resp_bulk(&p->keys, key, len);
        if (p->npend == p->cappend) {
            p->cappend = p->cappend ? p->cappend * 2 : 8;
            p->who = xrealloc(p->who, p->cappend * sizeof(*p->who));
        }
        p->who[p->npend++] = who;
        tr.pending = true;
    }
    pthread_mutex_unlock(&tr.mu);
}

/* The keys of prefix p for client id, as a RESP array: all of them, or
 * without those it modified itself (NOLOOP). Empty when none is left. */
static void prefix_keys_for(const trk_prefix *p, uint64_t id, bool noloop, sbuf *o)
{
    if (!noloop) {
        sbuf_printf(o, "*%u\r\n", p->npend);
        sbuf_add(o, p->keys.p, p->keys.len);
        return;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->npend; i++) {
        n += p->who[i] != id;
    }
    if (n == 0) {
        return;
    }
    sbuf_printf(o, "*%u\r\n", n);
    const char *s = p->keys.p;
    for (uint32_t i = 0; i < p->npend; i++) {
        /* one bulk string: $len\r\nbytes\r\n */
        const char *e = strchr(s, '\r');
        long blen = strtol(s + 1, NULL, 10);
        const char *next = e + 2 + blen + 2;
        if (p->who[i] != id) {
            sbuf_add(o, s, (size_t)(next - s));
        }
        s = next;
    }
}

void tracking_flush_bcast(loop *from)
{
    pthread_mutex_lock(&tr.mu);
    if (tr.pending) {
        tr.pending = false;
        for (trk_prefix *p = tr.prefixes; p != NULL; p = p->next) {
            if (p->npend == 0) {
                continue;
            }
            for (uint32_t i = 0; i < p->n; i++) {
                trk_client *t = reg_find(p->ids[i]);
                if (t == NULL) {
                    continue;
                }
                sbuf msg = {0};
                prefix_keys_for(p, t->id, (atomic_load(&t->flags) & TRK_NOLOOP) != 0, &msg);
                if (msg.len > 0) {
                    send_invalidation(from, t, msg.p, msg.len);
                }
                sbuf_free(&msg);
            }
            p->keys.len = 0;
            p->npend = 0;
        }
    }
    pthread_mutex_unlock(&tr.mu);
}

void tracking_flush_all(loop *from)
{
    if (!tracking_active()) {
        return;
    }
    pthread_mutex_lock(&tr.mu);
    for (size_t i = 0; i < tr.regcap; i++) {
        for (trk_client *t = tr.reg[i]; t != NULL; t = t->next) {
            if (atomic_load(&t->flags) & TRK_ON) {
                send_invalidation(from, t, NULL, 0);
            }
        }
    }
    for (size_t i = 0; i < tr.cap; i++) {
        for (trk_key *k = tr.tab[i], *nx; k != NULL; k = nx) {
            nx = k->next;
            key_free(k);
        }
        tr.tab[i] = NULL;
    }
    for (trk_prefix *p = tr.prefixes; p != NULL; p = p->next) {
        p->keys.len = 0;
        p->npend = 0;
    }
    tr.pending = false;
    pthread_mutex_unlock(&tr.mu);
}

/* ------------------------------------------------------------------------
 * Turning it on and off (c's own thread; tr.mu held)
 * ---------------------------------------------------------------------- */

static trk_prefix **prefix_slot(const char *s, uint32_t len)
{
    trk_prefix **pp = &tr.prefixes;
    while (*pp != NULL && !((*pp)->len == len && memcmp((*pp)->p, s, len) == 0)) {
        pp = &(*pp)->next;
    }
    return pp;
}

static void prefix_add(trk_client *t, const char *s, uint32_t len)
{
    for (int i = 0; i < t->nprefix; i++) {
        if (t->plen[i] == len && memcmp(t->prefix[i], s, len) == 0) {
            return;
        }
    }
    trk_prefix **pp = prefix_slot(s, len);
    trk_prefix *p = *pp;
    if (p == NULL) {
        p = xcalloc(1, sizeof(*p) + len + 1);
        p->len = len;
        memcpy(p->p, s, len);
        *pp = p;
        tr.nprefixes++;
    }
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 4;
        p->ids = xrealloc(p->ids, p->cap * sizeof(*p->ids));
    }
    p->ids[p->n++] = t->id;
    /* the client's own list, kept sorted as Redis's rax lists it */
    t->prefix = xrealloc(t->prefix, (size_t)(t->nprefix + 1) * sizeof(*t->prefix));
    t->plen = xrealloc(t->plen, (size_t)(t->nprefix + 1) * sizeof(*t->plen));
    int at = t->nprefix;
    while (at > 0) {
        uint32_t m = t->plen[at - 1] < len ? t->plen[at - 1] : len;
        int cmp = memcmp(t->prefix[at - 1], s, m);
        if (cmp < 0 || (cmp == 0 && t->plen[at - 1] < len)) {
            break;
        }
        t->prefix[at] = t->prefix[at - 1];
        t->plen[at] = t->plen[at - 1];
        at--;
    }
    t->prefix[at] = xmalloc(len + 1);
    memcpy(t->prefix[at], s, len);
    t->prefix[at][len] = '\0';
    t->plen[at] = len;
    t->nprefix++;
}

static void prefixes_drop(trk_client *t)
{
    for (int i = 0; i < t->nprefix; i++) {
        trk_prefix **pp = prefix_slot(t->prefix[i], t->plen[i]);
        trk_prefix *p = *pp;
        if (p != NULL) {
            for (uint32_t j = 0; j < p->n; j++) {
                if (p->ids[j] == t->id) {
                    p->ids[j] = p->ids[--p->n];
                    break;
                }
            }
            if (p->n == 0) {
                *pp = p->next;
                sbuf_free(&p->keys);
                free(p->who);
                free(p->ids);
                free(p);
                tr.nprefixes--;
            }
        }
        free(t->prefix[i]);
    }
    free(t->prefix);
    free(t->plen);
    t->prefix = NULL;
    t->plen = NULL;
    t->nprefix = 0;
}

static void disable(trk_client *t)
{
    uint32_t fl = atomic_load(&t->flags);
    if (fl & TRK_BCAST) {
        prefixes_drop(t);
    }
    if (fl & TRK_ON) {
        atomic_fetch_sub(&ntracking, 1);
    }
    atomic_store(&t->flags, 0);
    t->redir = 0;
}

void tracking_disable(conn *c)
{
    if (c->trk == NULL) {
        return;
    }
    pthread_mutex_lock(&tr.mu);
    disable(c->trk);
    pthread_mutex_unlock(&tr.mu);
}

void tracking_conn_gone(conn *c)
{
    if (c->trk == NULL) {
        return;
    }
    pthread_mutex_lock(&tr.mu);
    disable(c->trk);
    reg_remove(c->trk);
    pthread_mutex_unlock(&tr.mu);
    free(c->trk);
    c->trk = NULL;
    sbuf_free(&c->trk_defer);
}

static bool overlaps(const char *a, uint32_t al, const char *b, uint32_t bl)
{
    uint32_t m = al < bl ? al : bl;
    return memcmp(a, b, m) == 0;
}

void cmd_client_tracking(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long redir = 0;
    uint32_t opts = 0;
    int np = 0;
    int *pidx = xmalloc((size_t)argc * sizeof(int));
    for (int j = 3; j < argc; j++) {
        bool more = j + 1 < argc;
        if (util_eq(argv[j], lens[j], "redirect") && more) {
            j++;
            if (redir != 0) {
                conn_error(c, "ERR A client can only redirect to a single other client");
                goto out;
            }
            if (!arg_ll(c, argv[j], lens[j], &redir)) {
                goto out;
            }
            pthread_mutex_lock(&tr.mu);
            bool there = reg_find((uint64_t)redir) != NULL;
            pthread_mutex_unlock(&tr.mu);
            if (!there) {
                conn_error(c, "ERR The client ID you want redirect to does not exist");
                goto out;
            }
        } else if (util_eq(argv[j], lens[j], "bcast")) {
            opts |= TRK_BCAST;
        } else if (util_eq(argv[j], lens[j], "optin")) {
            opts |= TRK_OPTIN;
        } else if (util_eq(argv[j], lens[j], "optout")) {
            opts |= TRK_OPTOUT;
        } else if (util_eq(argv[j], lens[j], "noloop")) {
            opts |= TRK_NOLOOP;
        } else if (util_eq(argv[j], lens[j], "prefix") && more) {
            pidx[np++] = ++j;
        } else {
            conn_error(c, "ERR syntax error");
            goto out;
        }
    }
    if (util_eq(argv[2], lens[2], "off")) {
        tracking_disable(c);
        reply_ok(c);
        goto out;
    }
    if (!util_eq(argv[2], lens[2], "on")) {
        conn_error(c, "ERR syntax error");
        goto out;
    }
    if (c->trk == NULL) { /* a script's client */
        conn_error(c, "ERR This command is not allowed from script");
        goto out;
    }
    uint32_t cur = atomic_load(&c->trk->flags);
    if (!(opts & TRK_BCAST) && np > 0) {
        conn_error(c, "ERR PREFIX option requires BCAST mode to be enabled");
        goto out;
    }
    if ((cur & TRK_ON) && ((cur & TRK_BCAST) != 0) != ((opts & TRK_BCAST) != 0)) {
        conn_error(c, "ERR You can't switch BCAST mode on/off before disabling tracking for this "
                      "client, and then re-enabling it with a different mode.");
        goto out;
    }
    if ((opts & TRK_BCAST) && (opts & (TRK_OPTIN | TRK_OPTOUT))) {
        conn_error(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
        goto out;
    }
    if ((opts & TRK_OPTIN) && (opts & TRK_OPTOUT)) {
        conn_error(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
        goto out;
    }
    if (((opts & TRK_OPTIN) && (cur & TRK_OPTOUT)) || ((opts & TRK_OPTOUT) && (cur & TRK_OPTIN))) {
        conn_error(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this "
                      "client, and then re-enabling it with a different mode.");
        goto out;
    }
    pthread_mutex_lock(&tr.mu);
    trk_client *t = c->trk;
    if (opts & TRK_BCAST) {
        for (int i = 0; i < np; i++) {
            const char *p = argv[pidx[i]];
            uint32_t pl = lens[pidx[i]];
            for (int k = 0; k < t->nprefix; k++) {
                if (overlaps(t->prefix[k], t->plen[k], p, pl)) {
                    pthread_mutex_unlock(&tr.mu);
                    conn_errorf(c,
                                "ERR Prefix '%.*s' overlaps with an existing prefix '%s'. "
                                "Prefixes for a single client must not overlap.",
                                (int)pl, p, t->prefix[k]);
                    goto out;
                }
            }
            for (int k = i + 1; k < np; k++) {
                if (overlaps(p, pl, argv[pidx[k]], lens[pidx[k]])) {
                    pthread_mutex_unlock(&tr.mu);
                    conn_errorf(c,
                                "ERR Prefix '%.*s' overlaps with another provided prefix '%.*s'. "
                                "Prefixes for a single client must not overlap.",
                                (int)pl, p, (int)lens[pidx[k]], argv[pidx[k]]);
                    goto out;
                }
            }
        }
    }
    uint32_t fl = atomic_load(&t->flags);
    if (!(fl & TRK_ON)) {
        atomic_fetch_add(&ntracking, 1);
    }
    fl = (fl & TRK_CACHING) | TRK_ON | (opts & (TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP | TRK_BCAST));
    atomic_store(&t->flags, fl);
    t->redir = (uint64_t)redir;
    if (opts & TRK_BCAST) {
        if (np == 0) {
            prefix_add(t, "", 0);
        }
        for (int i = 0; i < np; i++) {
            prefix_add(t, argv[pidx[i]], lens[pidx[i]]);
        }
    }
    pthread_mutex_unlock(&tr.mu);
    reply_ok(c);
out:
    free(pidx);
}

void cmd_client_caching(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    uint32_t fl = c->trk ? atomic_load(&c->trk->flags) : 0;
    if (!(fl & TRK_ON)) {
        conn_error(c, "ERR CLIENT CACHING can be called only when the client is in tracking mode "
                      "with OPTIN or OPTOUT mode enabled");
        return;
    }
    if (util_eq(argv[2], lens[2], "yes")) {
        if (!(fl & TRK_OPTIN)) {
            conn_error(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN "
                          "mode.");
            return;
        }
    } else if (util_eq(argv[2], lens[2], "no")) {
        if (!(fl & TRK_OPTOUT)) {
            conn_error(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT "
                          "mode.");
            return;
        }
    } else {
        conn_error(c, "ERR syntax error");
        return;
    }
    atomic_fetch_or(&c->trk->flags, TRK_CACHING);
    reply_ok(c);
}

long long tracking_redirect_of(conn *c)
{
    uint32_t fl = c->trk ? atomic_load(&c->trk->flags) : 0;
    return (fl & TRK_ON) ? (long long)c->trk->redir : -1;
}

uint32_t tracking_flags_of(conn *c)
{
    return c->trk ? atomic_load(&c->trk->flags) : 0;
}

void cmd_client_getredir(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    (void)argv;
    (void)lens;
    resp_int(&c->out, tracking_redirect_of(c));
}

void cmd_client_trackinginfo(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    (void)argv;
    (void)lens;
    uint32_t fl = tracking_flags_of(c);
    static const struct {
        uint32_t bit, need;
        const char *name;
    } names[] = {{TRK_BCAST, 0, "bcast"},
                 {TRK_OPTIN, 0, "optin"},
                 {TRK_CACHING, TRK_OPTIN, "caching-yes"},
                 {TRK_OPTOUT, 0, "optout"},
                 {TRK_CACHING, TRK_OPTOUT, "caching-no"},
                 {TRK_NOLOOP, 0, "noloop"},
                 {TRK_BROKEN, 0, "broken_redirect"}};
    const char *out[8];
    int n = 0;
    out[n++] = (fl & TRK_ON) ? "on" : "off";
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if ((fl & names[i].bit) && (names[i].need == 0 || (fl & names[i].need))) {
            out[n++] = names[i].name;
        }
    }
    resp_map(&c->out, 3, c->proto);
    resp_bulks(&c->out, "flags");
    resp_set(&c->out, n, c->proto);
    for (int i = 0; i < n; i++) {
        resp_bulks(&c->out, out[i]);
    }
    resp_bulks(&c->out, "redirect");
    resp_int(&c->out, tracking_redirect_of(c));
    resp_bulks(&c->out, "prefixes");
    pthread_mutex_lock(&tr.mu);
    int np = c->trk ? c->trk->nprefix : 0;
    resp_array(&c->out, np);
    for (int i = 0; i < np; i++) {
        resp_bulk(&c->out, c->trk->prefix[i], c->trk->plen[i]);
    }
    pthread_mutex_unlock(&tr.mu);
}

void tracking_info(sbuf *o)
{
    pthread_mutex_lock(&tr.mu);
    sbuf_printf(o,
                "tracking_total_keys:%zu\r\ntracking_total_items:%zu\r\n"
                "tracking_total_prefixes:%zu\r\n",
                tr.nkeys, tr.nitems, tr.nprefixes);
    pthread_mutex_unlock(&tr.mu);
}
