/*
 * load_bench.c - the cudis-bench load generator (see load_bench.h): worker
 * threads on libevent with raw non-blocking sockets, pipelined requests,
 * streaming reply parsing, per-thread histograms merged at the end, and a
 * progress line from the main thread.
 */
#include "load_bench.h"

#include "cudis_err.h"
#include "cudis_time.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RBUF_SIZE (256 * 1024)
#define LOAD_DEPTH_MIN 32 /* load phase keeps at least this many SETs in flight */

/* REQ_CTL: the +OK of MULTI or a +QUEUED (no statistics); REQ_TX: the
 * EXEC that completes a transaction (nkeys commands, key = GETs in it). */
enum req_kind { REQ_GET, REQ_SET, REQ_MGET, REQ_LOAD, REQ_FILL, REQ_CTL, REQ_TX };

struct req {
    uint64_t t_send;
    uint64_t key;
    uint32_t nkeys;
    uint8_t kind;
    uint8_t measured; /* issued after the warm-up (by count and by time) */
};

struct worker;

struct conn {
    struct worker *w;
    int fd;
    struct event *ev_read, *ev_write;
    struct load_parser parser;
    struct load_buf out;
    size_t out_off;
    struct req *ring;
    unsigned ring_cap, head, count;
    uint64_t load_next, load_end;
    bool done;
};

/* Shared between the main thread and the workers. */
struct run_shared {
    atomic_int phase; /* 0 load, 1 workload */
    atomic_int load_done;
    atomic_int finished;
    uint64_t warm_end_ns, end_ns; /* written before phase = 1 (release) */
};

struct worker {
    const struct load_opts *o;
    struct run_shared *sh;
    int id;
    pthread_t th;
    struct event_base *base;
    struct event *tick;
    struct conn *conns;
    int nconns;
    int live; /* conns not yet done in this phase */
    bool loading;
    struct load_rng rng;
    struct load_keygen kg;
    char *val;
    char *mkeybuf;
    const char **mkeys;
    size_t *mklens;
    size_t plen;
    char *rbuf;
    uint64_t quota, issued_measured;
    uint64_t warm_quota, issued_total; /* warm-up by request count */
    uint64_t first_measured_ns;
    uint64_t last_reply_ns, last_done_ns;
    uint64_t load_errors;
    uint64_t all_done; /* workload replies, warm-up included (progress) */
    uint64_t all_hits, all_misses;
    int err;
    struct load_result r;
    /* published for the progress line (single writer, relaxed) */
    _Atomic uint64_t pub_done, pub_hits, pub_misses, pub_errors, pub_loaded;
};

void load_opts_default(struct load_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->host = "127.0.0.1";
    o->port = 6379;
    o->proto = LOAD_PROTO_RESP;
    o->threads = 1;
    o->conns = 50;
    o->pipeline = 1;
    o->keys = 100000;
    o->zipf = 0.99;
    load_vsize_parse(&o->vsize, "32");
    o->get_ratio = 0.9;
    o->duration_s = 10.0;
    o->load = true;
    o->seed = 1;
    o->key_prefix = "key:";
    o->timeout_s = 10.0;
}

size_t load_format_key(char *out, const char *prefix, size_t plen, uint64_t id)
{
    memcpy(out, prefix, plen);
    char *d = out + plen;
    for (int i = 11; i >= 0; i--) {
        d[i] = (char)('0' + id % 10);
        id /= 10;
    }
    d[12] = '\0';
    return plen + 12;
}

/* ------------------------------------------------------------ sockets */

static int connect_to(const char *host, int port)
{
    struct addrinfo hints, *res = NULL;
    char ps[16];
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ps, sizeof(ps), "%d", port);
    if (getaddrinfo(host, ps, &hints, &res) != 0 || !res) {
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) {
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            break;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    return fd;
}

/* ------------------------------------------------------------ requests */

static void fail(struct worker *w, int err, const char *msg)
{
    if (!w->err) {
        w->err = err;
        fprintf(stderr, "cudis-bench: thread %d: %s\n", w->id, msg);
    }
    event_base_loopbreak(w->base);
}

static void ring_push(struct conn *c, const struct req *r)
{
    if (c->count == c->ring_cap) { /* grow (fill-on-miss can add one) */
        unsigned cap = c->ring_cap * 2;
        struct req *n = malloc(sizeof(*n) * cap);
        if (!n) {
            abort();
        }
        for (unsigned i = 0; i < c->count; i++) {
            n[i] = c->ring[(c->head + i) % c->ring_cap];
        }
        free(c->ring);
        c->ring = n;
        c->ring_cap = cap;
        c->head = 0;
    }
    c->ring[(c->head + c->count) % c->ring_cap] = *r;
    c->count++;
}

static struct req ring_pop(struct conn *c)
{
    struct req r = c->ring[c->head];
    c->head = (c->head + 1) % c->ring_cap;
    c->count--;
    return r;
}

static int encode_set(struct worker *w, struct conn *c, uint64_t key)
{
    char kb[128];
    size_t kl = load_format_key(kb, w->o->key_prefix, w->plen, key);
    uint32_t vl = load_vsize_next(&w->o->vsize, &w->rng);
    if (w->o->hash) {
        const char *f = kb;
        return load_encode_hash(&c->out, "HSET", w->o->hash, &f, &kl, 1, w->val, vl);
    }
    return load_encode_set(&c->out, w->o->proto, kb, kl, w->val, vl);
}

/* Queues one request; kind REQ_FILL/REQ_LOAD take the given key. */
static int issue(struct conn *c, uint64_t now, int kind, uint64_t key, bool measured)
{
    struct worker *w = c->w;
    const struct load_opts *o = w->o;
    struct req r = {.t_send = now, .key = key, .nkeys = 1, .kind = (uint8_t)kind,
                    .measured = measured};
    int rc;
    if (kind == REQ_LOAD || kind == REQ_FILL) {
        rc = encode_set(w, c, key);
    } else if (o->multi > 0) {
        struct req ctl = r;
        ctl.kind = REQ_CTL;
        rc = load_encode_word(&c->out, "MULTI");
        ring_push(c, &ctl);
        uint64_t ngets = 0;
        for (int i = 0; i < o->multi && rc == 0; i++) {
            uint64_t k = load_keygen_next(&w->kg, &w->rng);
            if (load_rng_double(&w->rng) < o->get_ratio) {
                char kb[128];
                size_t kl = load_format_key(kb, o->key_prefix, w->plen, k);
                rc = load_encode_get(&c->out, o->proto, kb, kl);
                ngets++;
            } else {
                rc = encode_set(w, c, k);
            }
            ring_push(c, &ctl);
        }
        if (rc == 0) {
            rc = load_encode_word(&c->out, "EXEC");
        }
        r.kind = REQ_TX;
        r.nkeys = (uint32_t)o->multi;
        r.key = ngets;
    } else if (load_rng_double(&w->rng) < o->get_ratio) {
        if (o->mget > 0) {
            r.kind = REQ_MGET;
            r.nkeys = (uint32_t)o->mget;
            size_t stride = w->plen + 13;
            for (int i = 0; i < o->mget; i++) {
                char *kb = w->mkeybuf + (size_t)i * stride;
                w->mklens[i] = load_format_key(kb, o->key_prefix, w->plen,
                                               load_keygen_next(&w->kg, &w->rng));
                w->mkeys[i] = kb;
            }
            rc = o->hash ? load_encode_hash(&c->out, "HMGET", o->hash, w->mkeys, w->mklens,
                                            (size_t)o->mget, NULL, 0)
                         : load_encode_mget(&c->out, o->proto, w->mkeys, w->mklens, (size_t)o->mget);
        } else {
            char kb[128];
            r.kind = REQ_GET;
            r.key = load_keygen_next(&w->kg, &w->rng);
            size_t kl = load_format_key(kb, o->key_prefix, w->plen, r.key);
            const char *f = kb;
            rc = o->hash ? load_encode_hash(&c->out, "HGET", o->hash, &f, &kl, 1, NULL, 0)
                         : load_encode_get(&c->out, o->proto, kb, kl);
        }
    } else {
        r.kind = REQ_SET;
        r.key = load_keygen_next(&w->kg, &w->rng);
        rc = encode_set(w, c, r.key);
    }
    if (rc != 0) {
        return rc;
    }
    ring_push(c, &r);
    return 0;
}

static void flush_out(struct conn *c)
{
    while (c->out_off < c->out.len) {
        ssize_t n = write(c->fd, c->out.data + c->out_off, c->out.len - c->out_off);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            event_add(c->ev_write, NULL);
            return;
        }
        fail(c->w, CUDIS_E_IO, "write to server failed");
        return;
    }
    c->out.len = 0;
    c->out_off = 0;
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    flush_out(arg);
}

static void conn_finished(struct conn *c)
{
    if (!c->done) {
        c->done = true;
        if (--c->w->live == 0) {
            event_base_loopbreak(c->w->base);
        }
    }
}

/* Whether the workload may queue another request now. */
static bool may_issue(struct worker *w, uint64_t now)
{
    if (w->o->requests) {
        return w->issued_total < w->warm_quota || now < w->sh->warm_end_ns ||
               w->issued_measured < w->quota;
    }
    return now < w->sh->end_ns;
}

static int next_workload_req(struct conn *c, uint64_t now, int kind, uint64_t key)
{
    struct worker *w = c->w;
    bool m = w->issued_total >= w->warm_quota && now >= w->sh->warm_end_ns;
    w->issued_total++;
    if (m) {
        w->issued_measured++;
        if (w->first_measured_ns == UINT64_MAX) {
            w->first_measured_ns = now;
        }
    }
    return issue(c, now, kind, key, m);
}

static void on_reply(struct conn *c, const struct load_reply *rep, uint64_t now)
{
    struct worker *w = c->w;
    struct req rq = ring_pop(c);
    if (rq.kind == REQ_LOAD) {
        w->r.loaded++;
        if (rep->error) {
            w->load_errors++;
        }
        atomic_store_explicit(&w->pub_loaded, w->r.loaded, memory_order_relaxed);
        if (c->load_next < c->load_end) {
            issue(c, now, REQ_LOAD, c->load_next++, false);
        } else if (c->count == 0) {
            conn_finished(c);
        }
        return;
    }
    if (rq.kind == REQ_CTL) {
        if (rep->error && rq.measured) {
            w->r.errors++;
        }
        return;
    }
    uint32_t hits = rep->hits, misses = rep->misses;
    if (w->o->proto == LOAD_PROTO_MEMCACHE && (rq.kind == REQ_GET || rq.kind == REQ_MGET)) {
        misses = rq.nkeys > hits ? rq.nkeys - hits : 0;
    }
    w->all_done++;
    atomic_store_explicit(&w->pub_done, w->all_done, memory_order_relaxed);
    bool reads = rq.kind == REQ_GET || rq.kind == REQ_MGET || (rq.kind == REQ_TX && rq.key > 0);
    if (reads) {
        w->all_hits += hits;
        w->all_misses += misses;
        atomic_store_explicit(&w->pub_hits, w->all_hits, memory_order_relaxed);
        atomic_store_explicit(&w->pub_misses, w->all_misses, memory_order_relaxed);
    }
    bool measured = rq.measured && now >= w->sh->warm_end_ns && now < w->sh->end_ns;
    if (measured) {
        struct load_result *r = &w->r;
        r->requests++;
        load_hist_record(&r->hist, now - rq.t_send);
        r->commands += rq.kind == REQ_TX ? rq.nkeys : 1;
        if (reads) {
            r->gets++;
            r->key_reads += rq.kind == REQ_TX ? rq.key : rq.nkeys;
            r->hits += hits;
            r->misses += misses;
        } else {
            r->sets++;
        }
        if (rep->error) {
            r->errors++;
        }
        w->last_done_ns = now;
        atomic_store_explicit(&w->pub_errors, r->errors, memory_order_relaxed);
    }
    if (!may_issue(w, now)) {
        if (c->count == 0) {
            conn_finished(c);
        }
        return;
    }
    if (rq.kind == REQ_GET && misses > 0 && w->o->fill_on_miss) {
        next_workload_req(c, now, REQ_FILL, rq.key);
    } else {
        next_workload_req(c, now, REQ_GET, 0);
    }
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct conn *c = arg;
    struct worker *w = c->w;
    for (;;) {
        ssize_t n = read(fd, w->rbuf, RBUF_SIZE);
        if (n == 0) {
            fail(w, CUDIS_E_IO, "server closed the connection");
            return;
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                break;
            }
            fail(w, CUDIS_E_IO, "read from server failed");
            return;
        }
        uint64_t now = cudis_mono_ns();
        w->last_reply_ns = now;
        size_t off = 0;
        while (off < (size_t)n) {
            struct load_reply rep;
            int done;
            off += load_parser_feed(&c->parser, w->rbuf + off, (size_t)n - off, &rep, &done);
            if (done < 0) {
                fail(w, CUDIS_E_PROTO, "protocol error in a reply");
                return;
            }
            if (done == 1) {
                if (c->count == 0) {
                    fail(w, CUDIS_E_PROTO, "reply without a request");
                    return;
                }
                on_reply(c, &rep, now);
            }
        }
        if ((size_t)n < RBUF_SIZE) {
            break;
        }
    }
    flush_out(c);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct worker *w = arg;
    uint64_t now = cudis_mono_ns();
    if (now - w->last_reply_ns > (uint64_t)(w->o->timeout_s * 1e9)) {
        fail(w, CUDIS_E_TIMEOUT, "no reply from the server (timeout)");
    }
}

/* ------------------------------------------------------------ workers */

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    const struct load_opts *o = w->o;
    uint64_t now = cudis_mono_ns();
    w->last_reply_ns = now;

    /* phase 1: load */
    if (o->load) {
        w->loading = true;
        w->live = 0;
        for (int i = 0; i < w->nconns; i++) {
            struct conn *c = &w->conns[i];
            c->done = false;
            w->live++;
            int depth = o->pipeline > LOAD_DEPTH_MIN ? o->pipeline : LOAD_DEPTH_MIN;
            for (int d = 0; d < depth && c->load_next < c->load_end; d++) {
                issue(c, now, REQ_LOAD, c->load_next++, false);
            }
            if (c->count == 0) {
                c->done = true;
                w->live--;
            }
            flush_out(c);
        }
        if (w->live > 0 && !w->err) {
            event_base_dispatch(w->base);
        }
        w->loading = false;
    }
    atomic_fetch_add(&w->sh->load_done, 1);
    while (atomic_load_explicit(&w->sh->phase, memory_order_acquire) == 0) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    /* phase 2: warm-up and measure */
    if (!w->err) {
        now = cudis_mono_ns();
        w->last_reply_ns = now;
        w->live = 0;
        for (int i = 0; i < w->nconns; i++) {
            struct conn *c = &w->conns[i];
            c->done = false;
            w->live++;
            for (int d = 0; d < o->pipeline && may_issue(w, now); d++) {
                next_workload_req(c, now, REQ_GET, 0);
            }
            if (c->count == 0) {
                c->done = true;
                w->live--;
            }
            flush_out(c);
        }
        if (w->live > 0 && !w->err) {
            event_base_dispatch(w->base);
        }
    }
    atomic_fetch_add(&w->sh->finished, 1);
    return NULL;
}

static void worker_free(struct worker *w)
{
    for (int i = 0; i < w->nconns; i++) {
        struct conn *c = &w->conns[i];
        if (c->ev_read) {
            event_free(c->ev_read);
        }
        if (c->ev_write) {
            event_free(c->ev_write);
        }
        if (c->fd >= 0) {
            close(c->fd);
        }
        load_buf_free(&c->out);
        free(c->ring);
    }
    free(w->conns);
    if (w->tick) {
        event_free(w->tick);
    }
    if (w->base) {
        event_base_free(w->base);
    }
    free(w->val);
    free(w->mkeybuf);
    free(w->mkeys);
    free(w->mklens);
    free(w->rbuf);
}

static int worker_setup(struct worker *w, const struct load_opts *o, struct run_shared *sh, int id,
                        int nconns, int conn_base)
{
    w->o = o;
    w->sh = sh;
    w->id = id;
    w->nconns = nconns;
    w->plen = strlen(o->key_prefix);
    load_rng_seed(&w->rng, o->seed * 1000003u + (uint64_t)id);
    if (load_keygen_init(&w->kg, o->keys, o->zipf) != 0) {
        return CUDIS_E_INVAL;
    }
    w->base = event_base_new();
    w->conns = calloc((size_t)nconns, sizeof(*w->conns));
    w->val = malloc(o->vsize.max + 1);
    w->rbuf = malloc(RBUF_SIZE);
    int mk = o->mget > 0 ? o->mget : 1;
    w->mkeybuf = malloc((size_t)mk * (w->plen + 13));
    w->mkeys = calloc((size_t)mk, sizeof(*w->mkeys));
    w->mklens = calloc((size_t)mk, sizeof(*w->mklens));
    if (!w->base || !w->conns || !w->val || !w->rbuf || !w->mkeybuf || !w->mkeys || !w->mklens) {
        return CUDIS_E_NOMEM;
    }
    for (uint32_t i = 0; i < o->vsize.max; i++) {
        w->val[i] = (char)('a' + (i * 7 + (uint32_t)id) % 26);
    }
    w->tick = event_new(w->base, -1, EV_PERSIST, on_tick, w);
    struct timeval tv = {0, 200000};
    event_add(w->tick, &tv);
    for (int i = 0; i < nconns; i++) {
        w->conns[i].fd = -1;
    }
    for (int i = 0; i < nconns; i++) {
        struct conn *c = &w->conns[i];
        c->w = w;
        c->fd = connect_to(o->host, o->port);
        if (c->fd < 0) {
            fprintf(stderr, "cudis-bench: cannot connect to %s:%d: %s\n", o->host, o->port,
                    strerror(errno));
            return CUDIS_E_IO;
        }
        evutil_make_socket_nonblocking(c->fd);
        c->ev_read = event_new(w->base, c->fd, EV_READ | EV_PERSIST, on_read, c);
        c->ev_write = event_new(w->base, c->fd, EV_WRITE, on_write, c);
        event_add(c->ev_read, NULL);
        load_parser_init(&c->parser, o->proto);
        c->ring_cap = 16;
        while (c->ring_cap < (unsigned)o->pipeline + LOAD_DEPTH_MIN + 2) {
            c->ring_cap *= 2;
        }
        c->ring = malloc(sizeof(*c->ring) * c->ring_cap);
        if (!c->ring) {
            return CUDIS_E_NOMEM;
        }
        /* this connection's slice of the key range for the load phase */
        int gi = conn_base + i, nall = o->conns;
        c->load_next = o->keys * (uint64_t)gi / (uint64_t)nall;
        c->load_end = o->keys * (uint64_t)(gi + 1) / (uint64_t)nall;
    }
    return 0;
}

/* ------------------------------------------------------------ the run */

static void progress(const struct load_opts *o, struct worker *ws, int nw, const char *phase,
                     double t, uint64_t last[3], double *last_t, bool tty)
{
    uint64_t done = 0, hits = 0, misses = 0, errs = 0, loaded = 0;
    for (int i = 0; i < nw; i++) {
        done += atomic_load_explicit(&ws[i].pub_done, memory_order_relaxed);
        hits += atomic_load_explicit(&ws[i].pub_hits, memory_order_relaxed);
        misses += atomic_load_explicit(&ws[i].pub_misses, memory_order_relaxed);
        errs += atomic_load_explicit(&ws[i].pub_errors, memory_order_relaxed);
        loaded += atomic_load_explicit(&ws[i].pub_loaded, memory_order_relaxed);
    }
    if (!o->quiet) {
        if (strcmp(phase, "load") == 0) {
            fprintf(stderr, "[%6.1fs] load    %llu/%llu keys (%.0f%%)%s", t,
                    (unsigned long long)loaded, (unsigned long long)o->keys,
                    o->keys ? 100.0 * (double)loaded / (double)o->keys : 0.0, tty ? "   \r" : "\n");
        } else {
            /* per interval: requests/s and the hit ratio of the interval */
            double dt = t - *last_t;
            double rps = dt > 0 ? (double)(done - last[0]) / dt : 0.0;
            uint64_t dh = hits - last[1], dm = misses - last[2];
            double hr = dh + dm ? 100.0 * (double)dh / (double)(dh + dm) : 0.0;
            fprintf(stderr, "[%6.1fs] %-7s %10.0f req/s  hit %6.2f%%  errors %llu%s", t, phase, rps,
                    hr, (unsigned long long)errs, tty ? "   \r" : "\n");
        }
    }
    last[0] = done;
    last[1] = hits;
    last[2] = misses;
    *last_t = t;
}

int load_run(const struct load_opts *o, struct load_result *res)
{
    if (o->threads < 1 || o->conns < o->threads || o->pipeline < 1 || o->keys < 1 ||
        o->get_ratio < 0.0 || o->get_ratio > 1.0 || o->mget < 0) {
        fprintf(stderr, "cudis-bench: bad options (need conns >= threads >= 1, pipeline >= 1)\n");
        return CUDIS_E_INVAL;
    }
    if (o->multi < 0 || (o->multi > 0 && (o->proto != LOAD_PROTO_RESP || o->mget > 0 ||
                                           o->fill_on_miss))) {
        fprintf(stderr, "cudis-bench: --multi needs RESP, and no --mget or --fill-on-miss\n");
        return CUDIS_E_INVAL;
    }
    if (o->hash && (o->proto != LOAD_PROTO_RESP || o->multi > 0 || o->fill_on_miss)) {
        fprintf(stderr, "cudis-bench: --hash needs RESP, and no --multi or --fill-on-miss\n");
        return CUDIS_E_INVAL;
    }
    if (o->warmup_requests && !o->requests) {
        fprintf(stderr, "cudis-bench: a warm-up by request count needs --requests too\n");
        return CUDIS_E_INVAL;
    }
    struct run_shared sh;
    memset(&sh, 0, sizeof(sh));
    atomic_init(&sh.phase, 0);
    atomic_init(&sh.load_done, 0);
    atomic_init(&sh.finished, 0);
    sh.warm_end_ns = UINT64_MAX;
    sh.end_ns = UINT64_MAX;
    int nw = o->threads;
    struct worker *ws = calloc((size_t)nw, sizeof(*ws));
    if (!ws) {
        return CUDIS_E_NOMEM;
    }
    int rc = 0, base = 0;
    for (int i = 0; i < nw && rc == 0; i++) {
        int n = o->conns / nw + (i < o->conns % nw ? 1 : 0);
        load_hist_reset(&ws[i].r.hist);
        ws[i].quota = o->requests / (uint64_t)nw + ((uint64_t)i < o->requests % (uint64_t)nw ? 1 : 0);
        ws[i].warm_quota = o->warmup_requests / (uint64_t)nw +
                           ((uint64_t)i < o->warmup_requests % (uint64_t)nw ? 1 : 0);
        ws[i].first_measured_ns = UINT64_MAX;
        rc = worker_setup(&ws[i], o, &sh, i, n, base);
        base += n;
    }
    int started = 0;
    if (rc == 0) {
        for (; started < nw; started++) {
            if (pthread_create(&ws[started].th, NULL, worker_main, &ws[started]) != 0) {
                rc = CUDIS_E_NOMEM;
                break;
            }
        }
    }
    bool tty = isatty(2);
    uint64_t t0 = cudis_mono_ns();
    uint64_t last_done[3] = {0, 0, 0};
    double last_t = 0.0;
    if (rc == 0) {
        /* load phase: progress until every worker is through */
        while (atomic_load(&sh.load_done) < nw) {
            struct timespec ts = {0, 20000000};
            nanosleep(&ts, NULL);
            double t = (double)(cudis_mono_ns() - t0) / 1e9;
            if (t - last_t >= 1.0) {
                progress(o, ws, nw, "load", t, last_done, &last_t, tty);
            }
        }
        uint64_t now = cudis_mono_ns();
        res->load_s = (double)(now - t0) / 1e9;
        sh.warm_end_ns = now + (uint64_t)(o->warmup_s * 1e9);
        sh.end_ns = o->requests ? UINT64_MAX : sh.warm_end_ns + (uint64_t)(o->duration_s * 1e9);
        atomic_store_explicit(&sh.phase, 1, memory_order_release);
        last_done[0] = last_done[1] = last_done[2] = 0;
        last_t = (double)(now - t0) / 1e9;
        double tick = last_t;
        while (atomic_load(&sh.finished) < nw) {
            struct timespec ts = {0, 20000000};
            nanosleep(&ts, NULL);
            uint64_t n2 = cudis_mono_ns();
            double t = (double)(n2 - t0) / 1e9;
            if (t - tick >= 1.0) {
                tick = t;
                progress(o, ws, nw, n2 < sh.warm_end_ns ? "warmup" : "run", t, last_done, &last_t,
                         tty);
            }
        }
        if (!o->quiet && tty) {
            fprintf(stderr, "\n");
        }
    }
    for (int i = 0; i < started; i++) {
        pthread_join(ws[i].th, NULL);
    }
    /* merge */
    uint64_t last = 0, first = UINT64_MAX, load_errors = 0;
    double load_s = rc == 0 ? res->load_s : 0.0;
    memset(res, 0, offsetof(struct load_result, hist));
    load_hist_reset(&res->hist);
    res->load_s = load_s;
    for (int i = 0; i < nw; i++) {
        struct load_result *r = &ws[i].r;
        res->requests += r->requests;
        res->gets += r->gets;
        res->sets += r->sets;
        res->key_reads += r->key_reads;
        res->commands += r->commands;
        res->hits += r->hits;
        res->misses += r->misses;
        res->errors += r->errors;
        res->loaded += r->loaded;
        load_hist_merge(&res->hist, &r->hist);
        if (ws[i].last_done_ns > last) {
            last = ws[i].last_done_ns;
        }
        if (ws[i].first_measured_ns < first) {
            first = ws[i].first_measured_ns;
        }
        load_errors += ws[i].load_errors;
        if (ws[i].err && rc == 0) {
            rc = ws[i].err;
        }
    }
    if (o->requests) {
        res->elapsed_s = last > first && first != UINT64_MAX ? (double)(last - first) / 1e9 : 0.0;
    } else {
        res->elapsed_s = o->duration_s;
    }
    if (load_errors && !o->quiet) {
        fprintf(stderr, "cudis-bench: %llu error replies during the load phase\n",
                (unsigned long long)load_errors);
    }
    for (int i = 0; i < nw; i++) {
        worker_free(&ws[i]);
    }
    free(ws);
    return rc;
}

/* ------------------------------------------------------------ items */

int64_t load_query_items(const struct load_opts *o)
{
    int fd = connect_to(o->host, o->port);
    if (fd < 0) {
        return -1;
    }
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    const char *q = o->proto == LOAD_PROTO_RESP ? "*1\r\n$6\r\nDBSIZE\r\n" : "stats\r\n";
    if (write(fd, q, strlen(q)) != (ssize_t)strlen(q)) {
        close(fd);
        return -1;
    }
    char buf[16384];
    size_t len = 0;
    int64_t items = -1;
    while (len < sizeof(buf) - 1) {
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n <= 0) {
            break;
        }
        len += (size_t)n;
        buf[len] = '\0';
        if (o->proto == LOAD_PROTO_RESP) {
            if (strstr(buf, "\r\n")) {
                if (buf[0] == ':') {
                    items = strtoll(buf + 1, NULL, 10);
                }
                break;
            }
        } else if (strstr(buf, "END\r\n")) {
            const char *p = strstr(buf, "STAT curr_items ");
            if (p) {
                items = strtoll(p + 16, NULL, 10);
            }
            break;
        }
    }
    close(fd);
    return items;
}
