/*
 * observe.c - watching the server as Redis is watched: the slow log
 * (SLOWLOG GET/LEN/RESET/HELP), the latency monitor (LATENCY LATEST,
 * HISTORY, RESET, DOCTOR, HISTOGRAM, HELP), the per-command latency
 * percentiles of INFO latencystats, and the engine clock's samples that
 * date keys for OBJECT IDLETIME.
 *
 * A command's duration is what it cost the server: the handler's time for
 * a command that runs alone, and for a batched command its share of the
 * batch's execution (the batch's time over its ops, times the command's
 * ops). A batched command's slow log entry names the command (upper case)
 * and the keys and values its ops carried (its other arguments are not
 * kept past the batch). Both logs are shared by the loops, each under a mutex taken only
 * when something is recorded or read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_time.h"
#include "server_internal.h"

#define SLOWLOG_MAX_ARGC 32
#define SLOWLOG_MAX_STRING 128
#define LATENCY_SAMPLES 160
#define LATENCY_EVENTS 8

typedef struct slow_entry {
    uint64_t id;
    int64_t time; /* unix seconds */
    uint64_t usec;
    int argc;
    char **argv; /* copies, truncated as Redis truncates them */
    uint32_t *lens;
    char peer[64];
    char *name;
} slow_entry;

static struct {
    pthread_mutex_t mu;
    slow_entry *ring; /* newest at head - 1 */
    size_t cap, n, head;
    uint64_t next_id;
} slow = {.mu = PTHREAD_MUTEX_INITIALIZER};

typedef struct lat_sample {
    int64_t time; /* unix seconds */
    uint32_t ms;
} lat_sample;

typedef struct lat_event {
    char name[32];
    lat_sample s[LATENCY_SAMPLES];
    int idx; /* next slot */
    uint32_t max;
} lat_event;

static struct {
    pthread_mutex_t mu;
    lat_event ev[LATENCY_EVENTS];
    int n;
} lat = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------------------
 * Recording
 * ---------------------------------------------------------------------- */

static void entry_free(slow_entry *e)
{
    for (int i = 0; i < e->argc; i++) {
        free(e->argv[i]);
    }
    free(e->argv);
    free(e->lens);
    free(e->name);
    memset(e, 0, sizeof(*e));
}

static void set_arg(slow_entry *e, int i, const char *s, uint32_t n)
{
    char tmp[SLOWLOG_MAX_STRING + 48];
    if (n > SLOWLOG_MAX_STRING) {
        memcpy(tmp, s, SLOWLOG_MAX_STRING);
        int k = snprintf(tmp + SLOWLOG_MAX_STRING, sizeof(tmp) - SLOWLOG_MAX_STRING,
                         "... (%u more bytes)", n - SLOWLOG_MAX_STRING);
        s = tmp;
        n = SLOWLOG_MAX_STRING + (uint32_t)k;
    }
    e->argv[i] = xmalloc(n ? n : 1);
    memcpy(e->argv[i], s, n);
    e->lens[i] = n;
}

/* A slow log entry of argc arguments; fill(e, i) sets argument i. */
static void slow_push(conn *c, uint64_t usec, int argc,
                      void (*fill)(slow_entry *e, int i, const void *ctx), const void *ctx)
{
    pthread_mutex_lock(&slow.mu);
    size_t max = (size_t)srv.cfg.slowlog_max_len;
    if (max == 0) {
        pthread_mutex_unlock(&slow.mu);
        return;
    }
    if (slow.cap != max) { /* slowlog-max-len changed: keep the newest */
        slow_entry *ring = xcalloc(max, sizeof(*ring));
        size_t keep = slow.n < max ? slow.n : max;
        for (size_t k = 0; k < slow.n; k++) {
            slow_entry *e = &slow.ring[(slow.head + slow.cap - slow.n + k) % slow.cap];
            if (k >= slow.n - keep) {
                ring[k - (slow.n - keep)] = *e;
            } else {
                entry_free(e);
            }
        }
        free(slow.ring);
        slow.ring = ring;
        slow.cap = max;
        slow.n = keep;
        slow.head = keep % max;
    }
    slow_entry *e = &slow.ring[slow.head];
    if (slow.n == slow.cap) {
        entry_free(e);
    } else {
        slow.n++;
    }
    slow.head = (slow.head + 1) % slow.cap;
    e->id = slow.next_id++;
    e->time = cudis_now_ms() / 1000;
    e->usec = usec;
    int n = argc > SLOWLOG_MAX_ARGC ? SLOWLOG_MAX_ARGC : argc;
    e->argc = n;
    e->argv = xcalloc((size_t)n, sizeof(char *));
    e->lens = xcalloc((size_t)n, sizeof(uint32_t));
    for (int i = 0; i < n; i++) {
        if (i == SLOWLOG_MAX_ARGC - 1 && argc > SLOWLOG_MAX_ARGC) {
            char more[64];
            int k = snprintf(more, sizeof(more), "... (%d more arguments)", argc - n + 1);
            set_arg(e, i, more, (uint32_t)k);
        } else {
            fill(e, i, ctx);
        }
    }
    snprintf(e->peer, sizeof(e->peer), "%s", c->addr);
    e->name = xstrdup(c->name ? c->name : "");
    pthread_mutex_unlock(&slow.mu);
}

static void lat_add(const char *event, uint64_t ms)
{
    int64_t now = cudis_now_ms() / 1000;
    pthread_mutex_lock(&lat.mu);
    lat_event *ev = NULL;
    for (int i = 0; i < lat.n; i++) {
        if (strcmp(lat.ev[i].name, event) == 0) {
            ev = &lat.ev[i];
        }
    }
    if (ev == NULL && lat.n < LATENCY_EVENTS) {
        ev = &lat.ev[lat.n++];
        memset(ev, 0, sizeof(*ev));
        snprintf(ev->name, sizeof(ev->name), "%s", event);
    }
    if (ev != NULL) {
        uint32_t v = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
        int prev = (ev->idx + LATENCY_SAMPLES - 1) % LATENCY_SAMPLES;
        if (ev->s[prev].time == now) { /* one sample a second: the largest */
            if (v > ev->s[prev].ms) {
                ev->s[prev].ms = v;
            }
        } else {
            ev->s[ev->idx].time = now;
            ev->s[ev->idx].ms = v;
            ev->idx = (ev->idx + 1) % LATENCY_SAMPLES;
        }
        if (v > ev->max) {
            ev->max = v;
        }
    }
    pthread_mutex_unlock(&lat.mu);
}

static void lat_command(const command *cmd, uint64_t usec)
{
    long long thr = srv.cfg.latency_monitor_threshold;
    if (thr > 0 && usec / 1000 >= (uint64_t)thr) {
        lat_add((cmd->flags & CMD_FAST) ? "fast-command" : "command", usec / 1000);
    }
}

typedef struct call_ctx {
    const command *cmd;
    int argc;
    char **argv;
    uint32_t *lens;
} call_ctx;

static void fill_call(slow_entry *e, int i, const void *ctx)
{
    const call_ctx *x = ctx;
    if (arg_redacted(x->cmd, i, x->argc, x->argv, x->lens)) {
        set_arg(e, i, "(redacted)", 10);
    } else {
        set_arg(e, i, x->argv[i], x->lens[i]);
    }
}

void observe_call(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens, uint64_t usec)
{
    long long thr = srv.cfg.slowlog_log_slower_than;
    if (thr >= 0 && usec >= (uint64_t)thr && !(c->flags & CONN_FAKE)) {
        call_ctx x = {cmd, argc, argv, lens};
        slow_push(c, usec, argc, fill_call, &x);
    }
    lat_command(cmd, usec);
}

typedef struct ops_ctx {
    const command *cmd;
    const cudis_batch *b;
    uint32_t op0, nops;
} ops_ctx;

/* Argument i of a batched command: its name, then each op's key and, for
 * ops that carry one, its value. */
static void fill_ops(slow_entry *e, int i, const void *ctx)
{
    const ops_ctx *x = ctx;
    const command *parent = cmd_parent(x->cmd);
    int first = parent != NULL ? 2 : 1; /* the command's words, upper case as clients send them */
    if (i < first) {
        const char *n = (parent != NULL && i == 0) ? parent->name : x->cmd->name;
        char up[32];
        size_t len = strlen(n) < sizeof(up) ? strlen(n) : sizeof(up);
        for (size_t j = 0; j < len; j++) {
            up[j] = (char)(n[j] >= 'a' && n[j] <= 'z' ? n[j] - 32 : n[j]);
        }
        set_arg(e, i, up, (uint32_t)len);
        return;
    }
    int k = first;
    for (uint32_t j = 0; j < x->nops; j++) {
        const cudis_op *op = &x->b->ops[x->op0 + j];
        if (k++ == i) {
            set_arg(e, i, (const char *)x->b->in + op->key_off, op->key_len);
            return;
        }
        if (op->val_len > 0 && k++ == i) {
            set_arg(e, i, (const char *)x->b->in + op->val_off, op->val_len);
            return;
        }
    }
}

void observe_batched(conn *c, const command *cmd, const cudis_batch *b, uint32_t op0, uint32_t nops,
                     uint64_t usec)
{
    long long thr = srv.cfg.slowlog_log_slower_than;
    if (thr >= 0 && usec >= (uint64_t)thr && !(c->flags & CONN_FAKE)) {
        int argc = cmd_parent(cmd) != NULL ? 2 : 1;
        for (uint32_t j = 0; j < nops; j++) {
            argc += 1 + (b->ops[op0 + j].val_len > 0);
        }
        ops_ctx x = {cmd, b, op0, nops};
        slow_push(c, usec, argc, fill_ops, &x);
    }
    lat_command(cmd, usec);
}

void observe_event(const char *event, uint64_t usec)
{
    long long thr = srv.cfg.latency_monitor_threshold;
    if (thr > 0 && usec / 1000 >= (uint64_t)thr) {
        lat_add(event, usec / 1000);
    }
}

/* ------------------------------------------------------------------------
 * SLOWLOG
 * ---------------------------------------------------------------------- */

void cmd_slowlog_get(conn *c, int argc, char **argv, uint32_t *lens)
{
    long long count = 10;
    if (argc == 3) {
        if (!util_str2ll(argv[2], lens[2], &count) || count < -1) {
            conn_error(c, "ERR count should be greater than or equal to -1");
            return;
        }
    }
    pthread_mutex_lock(&slow.mu);
    size_t n = count == -1 || (size_t)count > slow.n ? slow.n : (size_t)count;
    resp_array(&c->out, (long)n);
    for (size_t k = 0; k < n; k++) {
        const slow_entry *e = &slow.ring[(slow.head + slow.cap - 1 - k) % slow.cap];
        resp_array(&c->out, 6);
        resp_int(&c->out, (long long)e->id);
        resp_int(&c->out, e->time);
        resp_int(&c->out, (long long)e->usec);
        resp_array(&c->out, e->argc);
        for (int i = 0; i < e->argc; i++) {
            resp_bulk(&c->out, e->argv[i], e->lens[i]);
        }
        resp_bulks(&c->out, e->peer);
        resp_bulks(&c->out, e->name);
    }
    pthread_mutex_unlock(&slow.mu);
}

void cmd_slowlog_len(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    pthread_mutex_lock(&slow.mu);
    long long n = (long long)slow.n;
    pthread_mutex_unlock(&slow.mu);
    resp_int(&c->out, n);
}

void cmd_slowlog_reset(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    pthread_mutex_lock(&slow.mu);
    for (size_t k = 0; k < slow.cap; k++) {
        entry_free(&slow.ring[k]);
    }
    slow.n = 0;
    slow.head = 0;
    pthread_mutex_unlock(&slow.mu);
    reply_ok(c);
}

/* ------------------------------------------------------------------------
 * LATENCY
 * ---------------------------------------------------------------------- */

static const lat_sample *latest(const lat_event *ev)
{
    return &ev->s[(ev->idx + LATENCY_SAMPLES - 1) % LATENCY_SAMPLES];
}

void cmd_latency_latest(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    pthread_mutex_lock(&lat.mu);
    resp_array(&c->out, lat.n);
    for (int i = 0; i < lat.n; i++) {
        const lat_event *ev = &lat.ev[i];
        resp_array(&c->out, 4);
        resp_bulks(&c->out, ev->name);
        resp_int(&c->out, latest(ev)->time);
        resp_int(&c->out, latest(ev)->ms);
        resp_int(&c->out, ev->max);
    }
    pthread_mutex_unlock(&lat.mu);
}

void cmd_latency_history(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    pthread_mutex_lock(&lat.mu);
    const lat_event *ev = NULL;
    for (int i = 0; i < lat.n; i++) {
        if (util_eq(argv[2], lens[2], lat.ev[i].name)) {
            ev = &lat.ev[i];
        }
    }
    if (ev == NULL) {
        resp_array(&c->out, 0);
    } else {
        int n = 0;
        for (int k = 0; k < LATENCY_SAMPLES; k++) {
            n += ev->s[k].time != 0;
        }
        resp_array(&c->out, n);
        for (int k = 0; k < LATENCY_SAMPLES; k++) {
            const lat_sample *s = &ev->s[(ev->idx + k) % LATENCY_SAMPLES];
            if (s->time != 0) {
                resp_array(&c->out, 2);
                resp_int(&c->out, s->time);
                resp_int(&c->out, s->ms);
            }
        }
    }
    pthread_mutex_unlock(&lat.mu);
}

void cmd_latency_reset(conn *c, int argc, char **argv, uint32_t *lens)
{
    pthread_mutex_lock(&lat.mu);
    int reset = 0;
    for (int i = 0; i < lat.n;) {
        bool drop = argc == 2;
        for (int j = 2; j < argc && !drop; j++) {
            drop = util_eq(argv[j], lens[j], lat.ev[i].name);
        }
        if (drop) {
            lat.ev[i] = lat.ev[--lat.n];
            reset++;
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&lat.mu);
    resp_int(&c->out, reset);
}

void cmd_latency_doctor(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    sbuf t = {0};
    pthread_mutex_lock(&lat.mu);
    if (srv.cfg.latency_monitor_threshold == 0) {
        sbuf_adds(&t, "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this "
                      "Redis instance. You may use \"CONFIG SET latency-monitor-threshold "
                      "<milliseconds>.\" in order to enable it. If we weren't in a deep space "
                      "mission I'd suggest to take a look at "
                      "https://redis.io/topics/latency-monitor.\n");
    } else if (lat.n == 0) {
        sbuf_adds(&t, "Dave, no latency spike was observed during the lifetime of this Redis "
                      "instance, not in the slightest bit. I honestly think you ought to sit "
                      "down calmly, take a stress pill, and think things over.\n");
    } else {
        sbuf_adds(&t, "Dave, I have observed latency spikes in this Redis instance. You don't "
                      "mind talking about it, do you Dave?\n\n");
        for (int i = 0; i < lat.n; i++) {
            const lat_event *ev = &lat.ev[i];
            uint64_t sum = 0;
            int n = 0;
            for (int k = 0; k < LATENCY_SAMPLES; k++) {
                if (ev->s[k].time != 0) {
                    sum += ev->s[k].ms;
                    n++;
                }
            }
            sbuf_printf(&t,
                        "%d. %s: %d latency spikes (average %llums, worst %ums, last %ums at "
                        "%lld).\n",
                        i + 1, ev->name, n, (unsigned long long)(n ? sum / (uint64_t)n : 0),
                        ev->max, latest(ev)->ms, (long long)latest(ev)->time);
        }
        sbuf_adds(&t, "\nI have a few advices for you:\n\n- Check the slow log (SLOWLOG GET): "
                      "keyspace-wide commands (KEYS, FLUSHALL, long scripts) run alone and "
                      "hold up the batches of every other client.\n");
    }
    pthread_mutex_unlock(&lat.mu);
    resp_verbatim(&c->out, t.p, t.len, c->proto);
    sbuf_free(&t);
}

/* The lower edge in microseconds of histogram bucket i. */
static uint64_t bucket_us(int i)
{
    return (uint64_t)1 << i;
}

static void sum_hist(int idx, uint64_t *calls, uint64_t h[CMD_LAT_BUCKETS])
{
    memset(h, 0, sizeof(uint64_t) * CMD_LAT_BUCKETS);
    *calls = 0;
    for (int l = 0; l < srv.nloops; l++) {
        const cmd_stat *s = &srv.loops[l].st.cmds[idx];
        *calls += STAT_GET(s->calls);
        for (int b = 0; b < CMD_LAT_BUCKETS; b++) {
            h[b] += STAT_GET(s->lat[b]);
        }
    }
}

static void histogram1(conn *c, int idx, uint64_t calls, const uint64_t *h)
{
    resp_bulks(&c->out, cmd_fullname(cmd_by_idx(idx)));
    resp_map(&c->out, 2, c->proto);
    resp_bulks(&c->out, "calls");
    resp_int(&c->out, (long long)calls);
    resp_bulks(&c->out, "histogram_usec");
    int nb = 0;
    for (int b = 0; b < CMD_LAT_BUCKETS; b++) {
        nb += h[b] != 0;
    }
    resp_map(&c->out, nb, c->proto);
    uint64_t acc = 0;
    for (int b = 0; b < CMD_LAT_BUCKETS; b++) {
        acc += h[b];
        if (h[b] != 0) { /* cumulative counts at each bucket's upper edge */
            resp_int(&c->out, (long long)bucket_us(b + 1));
            resp_int(&c->out, (long long)acc);
        }
    }
}

void cmd_latency_histogram(conn *c, int argc, char **argv, uint32_t *lens)
{
    int nc = cmd_count();
    uint64_t h[CMD_LAT_BUCKETS], calls;
    int *pick = xcalloc((size_t)nc, sizeof(int));
    int n = 0;
    for (int i = 0; i < nc; i++) {
        bool want = argc == 2;
        for (int j = 2; j < argc && !want; j++) {
            want = util_eq(argv[j], lens[j], cmd_fullname(cmd_by_idx(i)));
        }
        sum_hist(i, &calls, h);
        if (want && calls > 0) {
            pick[n++] = i;
        }
    }
    resp_map(&c->out, n, c->proto);
    for (int k = 0; k < n; k++) {
        sum_hist(pick[k], &calls, h);
        histogram1(c, pick[k], calls, h);
    }
    free(pick);
}

void observe_info_latencystats(sbuf *o)
{
    double pct[16];
    int np = 0;
    const char *p = srv.cfg.latency_tracking_info_percentiles;
    while (p != NULL && *p && np < 16) {
        char *end;
        double v = strtod(p, &end);
        if (end == p) {
            break;
        }
        if (v >= 0 && v <= 100) {
            pct[np++] = v;
        }
        p = end;
    }
    uint64_t h[CMD_LAT_BUCKETS], calls;
    for (int i = 0; i < cmd_count(); i++) {
        sum_hist(i, &calls, h);
        uint64_t tracked = 0;
        for (int b = 0; b < CMD_LAT_BUCKETS; b++) {
            tracked += h[b];
        }
        if (tracked == 0 || np == 0) {
            continue;
        }
        sbuf_printf(o, "latency_percentiles_usec_%s:", cmd_fullname(cmd_by_idx(i)));
        for (int k = 0; k < np; k++) {
            uint64_t want = (uint64_t)(pct[k] / 100.0 * (double)tracked + 0.5), acc = 0;
            if (want == 0) {
                want = 1;
            }
            int b = 0;
            for (; b < CMD_LAT_BUCKETS - 1; b++) {
                acc += h[b];
                if (acc >= want) {
                    break;
                }
            }
            char name[32];
            snprintf(name, sizeof(name), "%g", pct[k]);
            sbuf_printf(o, "%sp%s=%.3f", k ? "," : "", name, (double)bucket_us(b + 1));
        }
        sbuf_adds(o, "\r\n");
    }
}

/* ------------------------------------------------------------------------
 * The engine clock against wall time (OBJECT IDLETIME)
 * ---------------------------------------------------------------------- */

#define CLOCK_SAMPLES 8192 /* one a second: ~2.3 hours */
/* The ticks a second of the history before the start (observe_clock_seed):
 * its 8192 seconds span 2^29 ticks, the oldest age the CCHT keeps apart
 * (CCHT_AGE_CLAMP). */
#define CLOCK_SEED_RATE 65536

static struct {
    pthread_mutex_t lock;
    int64_t clock[CLOCK_SAMPLES]; /* before the start: below the clock's 0 */
    int64_t ms[CLOCK_SAMPLES];
    uint32_t n, head; /* samples held; the next slot */
    int64_t last_ms;
} clk = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The i-th sample held, oldest first (under clk.lock). */
static uint32_t clock_at(uint32_t i)
{
    return (clk.head + CLOCK_SAMPLES - clk.n + i) % CLOCK_SAMPLES;
}

void observe_clock_seed(int64_t now_ms)
{
    int64_t c0 = (int64_t)engine_clock(srv.eng);
    pthread_mutex_lock(&clk.lock);
    for (uint32_t i = 0; i < CLOCK_SAMPLES; i++) {
        int64_t back = CLOCK_SAMPLES - (int64_t)i; /* seconds before now */
        clk.clock[i] = c0 - back * CLOCK_SEED_RATE;
        clk.ms[i] = now_ms - back * 1000;
    }
    clk.n = CLOCK_SAMPLES;
    clk.head = 0;
    pthread_mutex_unlock(&clk.lock);
}

void observe_clock_sample(int64_t now_ms)
{
    if (now_ms - clk.last_ms < 1000) {
        return;
    }
    engine_clock_tick(srv.eng);
    uint64_t c = engine_clock(srv.eng);
    pthread_mutex_lock(&clk.lock);
    clk.last_ms = now_ms;
    clk.clock[clk.head] = c;
    clk.ms[clk.head] = now_ms;
    clk.head = (clk.head + 1) % CLOCK_SAMPLES;
    if (clk.n < CLOCK_SAMPLES) {
        clk.n++;
    }
    pthread_mutex_unlock(&clk.lock);
}

long long observe_idle_seconds(uint32_t stamp, int64_t now_ms)
{
    int64_t now = (int64_t)engine_clock(srv.eng);
    int64_t full = now - (uint32_t)((uint32_t)now - stamp); /* stamps are the clock's low bits */
    int64_t at = now_ms;
    pthread_mutex_lock(&clk.lock);
    /* the first sample (oldest to newest) whose clock had reached the stamp */
    uint32_t lo = 0, hi = clk.n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (clk.clock[clock_at(mid)] >= full) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    if (lo < clk.n) { /* the access fell between the sample before and this one */
        at = clk.ms[clock_at(lo > 0 ? lo - 1 : 0)];
    }
    pthread_mutex_unlock(&clk.lock);
    return at < now_ms ? (now_ms - at) / 1000 : 0;
}

int64_t observe_ticks_since(long long idle_s, int64_t now_ms)
{
    int64_t now = (int64_t)engine_clock(srv.eng);
    int64_t when =
        idle_s < (now_ms - INT64_MIN / 2) / 1000 ? now_ms - idle_s * 1000 : INT64_MIN / 2;
    pthread_mutex_lock(&clk.lock);
    /* the last sample taken at or before `when`, if any: a stamp just past
     * its clock is dated by it (observe_idle_seconds) */
    uint32_t lo = 0, hi = clk.n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (clk.ms[clock_at(mid)] <= when) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    int64_t ticks = lo == 0 ? (clk.n ? now - clk.clock[clock_at(0)] : 0) /* older than all */
                            : now - (clk.clock[clock_at(lo - 1)] + 1);
    pthread_mutex_unlock(&clk.lock);
    return ticks > 0 ? ticks : 0;
}
