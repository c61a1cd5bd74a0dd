/*
 * net.c - event loops, listeners (TCP and unix), connections: reading and
 * parsing input, writing replies, limits (query and output buffers, idle
 * timeout, maxclients, protected mode), the adaptive batch flush, the cron
 * and a graceful shutdown on SIGTERM/SIGINT/SHUTDOWN.
 *
 * Flush policy (loop_run): each round waits for events once, runs the
 * callbacks of every connection with input ready, then executes the batch
 * they filled and writes the replies, so a lone request on an idle server
 * goes at once (no timer), while under load one batch gathers the requests
 * of all ready connections. A batch also closes when full (batch-max-ops) or when its
 * first request has waited batch-max-wait-us.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cudis_time.h"
#include "server_internal.h"

server srv;

static const char *DENIED_MSG =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same host "
    "the server is running, however MAKE SURE Redis is not publicly accessible from internet if "
    "you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the "
    "protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    "authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.\r\n";

static void conn_write(conn *c);
static void loop_drain(loop *lp);
static struct event *shutdown_ev;

int64_t server_now_ms(void)
{
    return cudis_now_ms();
}

/* ------------------------------------------------------------------------
 * Connection lifecycle
 * ---------------------------------------------------------------------- */

static void wlist_add(conn *c)
{
    if (c->flags & CONN_IN_WLIST) {
        return;
    }
    c->flags |= CONN_IN_WLIST;
    c->wnext = c->lp->wlist;
    c->lp->wlist = c;
}

static void conn_free(conn *c)
{
    loop *lp = c->lp;
    pthread_mutex_lock(&lp->lock);
    if (c->prev) {
        c->prev->next = c->next;
    } else {
        lp->clients = c->next;
    }
    if (c->next) {
        c->next->prev = c->prev;
    }
    lp->nclients--;
    pthread_mutex_unlock(&lp->lock);
    resp_parser_deinit(&c->rp);
    free(c->qbuf);
    sbuf_free(&c->out);
    free(c->name);
    free(c->lib_name);
    free(c->lib_ver);
    free(c);
}

void conn_close(conn *c, const char *why)
{
    if (c->flags & CONN_CLOSING) {
        return;
    }
    if (why) {
        log_msg(LL_VERBOSE, "Client id=%llu addr=%s closed: %s", (unsigned long long)c->id, c->addr,
                why);
    }
    c->flags |= CONN_CLOSING;
    event_free(c->rev);
    event_free(c->wev);
    c->rev = c->wev = NULL;
    close(c->fd);
    c->fd = -1;
    atomic_fetch_sub(&srv.connected, 1);
    wlist_add(c);
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg);
static void conn_write_cb(evutil_socket_t fd, short what, void *arg);

static void format_addr(char *buf, size_t cap, const struct sockaddr_storage *ss)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &s->sin_addr, ip, sizeof(ip));
        port = ntohs(s->sin_port);
        snprintf(buf, cap, "%s:%d", ip, port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof(ip));
        port = ntohs(s->sin6_port);
        snprintf(buf, cap, "[%s]:%d", ip, port);
    } else {
        snprintf(buf, cap, "%s:0", srv.cfg.unixsocket ? srv.cfg.unixsocket : "");
    }
}

static bool addr_is_local(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
        return (ntohl(s->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
        if (IN6_IS_ADDR_LOOPBACK(&s->sin6_addr)) {
            return true;
        }
        if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr)) {
            return s->sin6_addr.s6_addr[12] == 127;
        }
        return false;
    }
    return true; /* unix socket */
}

static void conn_create(loop *lp, int fd, bool is_unix)
{
    conn *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        close(fd);
        atomic_fetch_sub(&srv.connected, 1);
        return;
    }
    evutil_make_socket_nonblocking(fd);
    if (!is_unix) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (srv.cfg.tcp_keepalive > 0) {
            int ka = (int)srv.cfg.tcp_keepalive;
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &ka, sizeof(ka));
            int intvl = ka / 3 > 0 ? ka / 3 : 1, cnt = 3;
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
        }
    }
    c->id = atomic_fetch_add(&srv.next_id, 1);
    c->fd = fd;
    c->lp = lp;
    c->proto = 2;
    c->authed = srv.cfg.requirepass == NULL || srv.cfg.requirepass[0] == '\0';
    resp_parser_init(&c->rp);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    if (is_unix) {
        ss.ss_family = AF_UNIX;
        c->flags |= CONN_UNIX | CONN_LOCAL;
    } else {
        getpeername(fd, (struct sockaddr *)&ss, &sl);
        if (addr_is_local(&ss)) {
            c->flags |= CONN_LOCAL;
        }
    }
    format_addr(c->addr, sizeof(c->addr), &ss);
    sl = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    if (is_unix) {
        ss.ss_family = AF_UNIX;
    } else {
        getsockname(fd, (struct sockaddr *)&ss, &sl);
    }
    format_addr(c->laddr, sizeof(c->laddr), &ss);
    c->ctime_ms = c->last_ms = cudis_now_ms();
    c->rev = event_new(lp->base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
    c->wev = event_new(lp->base, fd, EV_WRITE | EV_PERSIST, conn_write_cb, c);
    event_priority_set(c->rev, 0);
    event_priority_set(c->wev, 0);
    pthread_mutex_lock(&lp->lock);
    c->next = lp->clients;
    if (lp->clients) {
        lp->clients->prev = c;
    }
    lp->clients = c;
    lp->nclients++;
    pthread_mutex_unlock(&lp->lock);
    lp->st.conns++;
    event_add(c->rev, NULL);
    log_msg(LL_DEBUG, "Accepted %s", c->addr);
}

/* ------------------------------------------------------------------------
 * Output
 * ---------------------------------------------------------------------- */

static bool check_obuf(conn *c)
{
    size_t pending = c->out.len - c->out_sent;
    long long hard = srv.cfg.obuf_hard, soft = srv.cfg.obuf_soft;
    bool over = false;
    if (hard > 0 && (long long)pending > hard) {
        over = true;
    } else if (soft > 0 && (long long)pending > soft) {
        int64_t now = cudis_now_ms();
        if (c->soft_since_ms == 0) {
            c->soft_since_ms = now;
        } else if (now - c->soft_since_ms > srv.cfg.obuf_soft_secs * 1000) {
            over = true;
        }
    } else {
        c->soft_since_ms = 0;
    }
    if (over) {
        /* Drop what the kernel still holds: a reader this slow gets a reset. */
        struct linger lg = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        log_msg(LL_WARNING,
                "Client id=%llu addr=%s closed for overcoming of output buffer limits (%zu bytes "
                "pending).",
                (unsigned long long)c->id, c->addr, pending);
        conn_close(c, NULL);
        return false;
    }
    return true;
}

static void conn_write(conn *c)
{
    if (c->flags & CONN_CLOSING) {
        return;
    }
    while (c->out_sent < c->out.len) {
        ssize_t n = write(c->fd, c->out.p + c->out_sent, c->out.len - c->out_sent);
        if (n > 0) {
            c->out_sent += (size_t)n;
            c->lp->st.net_out += (uint64_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!check_obuf(c)) {
                return;
            }
            if (!(c->flags & CONN_WRITE_WAIT)) {
                c->flags |= CONN_WRITE_WAIT;
                event_add(c->wev, NULL);
            }
            return;
        } else {
            conn_close(c, "write error");
            return;
        }
    }
    c->out.len = c->out_sent = 0;
    c->soft_since_ms = 0;
    if (c->out.cap > 1024 * 1024) {
        sbuf_free(&c->out);
    }
    if (c->flags & CONN_WRITE_WAIT) {
        c->flags &= ~CONN_WRITE_WAIT;
        event_del(c->wev);
    }
    if (c->flags & CONN_CLOSE_AFTER_REPLY) {
        conn_close(c, NULL);
    }
}

static void conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    conn *c = arg;
    loop *lp = c->lp;
    conn_write(c);
    loop_drain(lp);
}

/* Write (or free) every connection on the loop's write list. */
static void loop_drain(loop *lp)
{
    while (lp->wlist) {
        conn *list = lp->wlist;
        lp->wlist = NULL;
        while (list) {
            conn *c = list;
            list = c->wnext;
            c->flags &= ~CONN_IN_WLIST;
            if (c->flags & CONN_CLOSING) {
                if (c->pending == 0 && !lp->final) {
                    conn_free(c);
                }
                continue;
            }
            if (c->out.len - c->out_sent > 0 && !check_obuf(c)) {
                continue;
            }
            conn_write(c);
        }
    }
}

/* ------------------------------------------------------------------------
 * Errors with statistics
 * ---------------------------------------------------------------------- */

static void count_error(loop *lp, const char *msg)
{
    char code[32];
    size_t n = 0;
    while (msg[n] && msg[n] != ' ' && n < sizeof(code) - 1) {
        code[n] = msg[n];
        n++;
    }
    code[n] = '\0';
    lp->st.errors++;
    for (int i = 0; i < lp->st.nerr; i++) {
        if (!strcmp(lp->st.err_names[i], code)) {
            lp->st.err_counts[i]++;
            return;
        }
    }
    if (lp->st.nerr < ERRSTAT_MAX) {
        memcpy(lp->st.err_names[lp->st.nerr], code, n + 1);
        lp->st.err_counts[lp->st.nerr++] = 1;
    }
}

void conn_error(conn *c, const char *msg)
{
    resp_error(&c->out, msg);
    count_error(c->lp, msg);
    if (c->cur_cmd) {
        c->lp->st.cmds[cmd_idx(c->cur_cmd)].failed++;
    }
}

void conn_errorf(conn *c, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    conn_error(c, tmp);
}

/* ------------------------------------------------------------------------
 * Batches
 * ---------------------------------------------------------------------- */

void loop_flush(loop *lp, int reason)
{
    batch_flush(&lp->bf, srv.eng, reason);
}

void loop_complete(loop *lp)
{
    batch_complete(&lp->bf, srv.eng);
}

bool server_pipelined(void)
{
    const char *p = srv.cfg.engine_pipeline;
    return strcmp(p, "yes") == 0 || (strcmp(p, "auto") == 0 && strcmp(engine_name(srv.eng), "gpu") == 0);
}

/* The queue's fd: a batch finished. */
static void done_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    loop *lp = arg;
    engine_queue_clear_fd(lp->bf.q);
    if (lp->bf.in_flight && engine_queue_ready(lp->bf.q)) {
        loop_complete(lp);
    }
    loop_drain(lp);
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    loop *lp = arg;
    lp->flush_scheduled = false;
    loop_flush(lp, SEAL_IDLE);
    loop_drain(lp);
}

void loop_schedule_flush(loop *lp)
{
    /* loop_run flushes after every round of callbacks; nothing to arm. */
    lp->flush_scheduled = true;
}

/* ------------------------------------------------------------------------
 * Input
 * ---------------------------------------------------------------------- */

static void process_input(conn *c)
{
    loop *lp = c->lp;
    while (!(c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSING))) {
        c->rp.max_bulk = srv.cfg.proto_max_bulk_len;
        c->rp.unauth = !c->authed && srv.cfg.requirepass && srv.cfg.requirepass[0];
        int r = resp_parse(&c->rp, c->qbuf, c->qlen, &c->qpos);
        if (r == RESP_MORE) {
            break;
        }
        if (r == RESP_ERR) {
            if (c->pending) {
                loop_flush(lp, SEAL_DRAIN);
            }
            char msg[128];
            snprintf(msg, sizeof(msg), "ERR %s", c->rp.err);
            conn_error(c, msg);
            log_msg(LL_VERBOSE, "Protocol error (%s) from client: id=%llu addr=%s", c->rp.err,
                    (unsigned long long)c->id, c->addr);
            c->flags |= CONN_CLOSE_AFTER_REPLY;
            break;
        }
        /* read by loop 0's cron for instantaneous_ops_per_sec */
        __atomic_store_n(&lp->st.commands, lp->st.commands + 1, __ATOMIC_RELAXED);
        cmd_dispatch(c, c->rp.argc, c->rp.argv, c->rp.arg_len);
        batcher *b = &lp->b;
        if (b->nops >= (uint32_t)srv.cfg.batch_max_ops) {
            loop_flush(lp, SEAL_FULL);
        } else if (b->npend > 0 && (b->npend & 15) == 0 &&
                   cudis_mono_ns() - b->open_ns > (uint64_t)srv.cfg.batch_max_wait_us * 1000) {
            /* the clock is read every 16 commands: a deadline, not a timer */
            loop_flush(lp, SEAL_DEADLINE);
        }
    }
}

/* Read once and run what arrived. Returns false when the connection closed.
 * Never frees a connection (loop_drain does). */
static bool conn_read_once(conn *c)
{
    loop *lp = c->lp;
    size_t want = 16 * 1024;
    bool busy = resp_parser_busy(&c->rp);
    if (busy && c->rp.big_need > want) {
        want = c->rp.big_need;
    }
    size_t keep = busy ? c->rp.cmd_start : c->qpos;
    if (keep > 0 && (keep == c->qlen || c->qcap - c->qlen < want)) {
        memmove(c->qbuf, c->qbuf + keep, c->qlen - keep);
        c->qlen -= keep;
        c->qpos -= keep;
        resp_parser_shift(&c->rp, keep);
    }
    if (c->qcap - c->qlen < want) {
        size_t ncap = c->qcap ? c->qcap : 16 * 1024;
        while (ncap - c->qlen < want) {
            ncap *= 2;
        }
        char *q = realloc(c->qbuf, ncap);
        if (q == NULL) {
            conn_close(c, "out of memory");
            return false;
        }
        c->qbuf = q;
        c->qcap = ncap;
    }
    ssize_t n = read(c->fd, c->qbuf + c->qlen, c->qcap - c->qlen);
    if (n == 0) {
        conn_close(c, "client closed connection");
        return false;
    }
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            conn_close(c, "read error");
        }
        return false;
    }
    c->qlen += (size_t)n;
    lp->st.net_in += (uint64_t)n;
    c->last_ms = cudis_now_ms();
    size_t unparsed = c->qlen - (resp_parser_busy(&c->rp) ? c->rp.cmd_start : c->qpos);
    if ((long long)unparsed > srv.cfg.client_query_buffer_limit) {
        log_msg(LL_WARNING,
                "Closing client that reached max query buffer length: id=%llu addr=%s (qbuf "
                "initial bytes: %zu)",
                (unsigned long long)c->id, c->addr, unparsed);
        conn_close(c, NULL);
        return false;
    }
    process_input(c);
    if (lp->b.npend > 0) {
        loop_schedule_flush(lp);
    }
    if (!(c->flags & CONN_CLOSING) && c->out.len > c->out_sent && c->pending == 0) {
        wlist_add(c);
    } else if ((c->flags & CONN_CLOSE_AFTER_REPLY) && c->pending == 0) {
        wlist_add(c);
    }
    return n > 0;
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    conn *c = arg;
    loop *lp = c->lp;
    conn_read_once(c);
    loop_drain(lp);
}

/* ------------------------------------------------------------------------
 * Accept
 * ---------------------------------------------------------------------- */

static void loop_take_fd(loop *lp, int fd, bool is_unix)
{
    conn_create(lp, fd, is_unix);
}

static void notify_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    loop *lp = arg;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf));
    (void)n;
    int fds[256];
    int nf;
    pthread_mutex_lock(&lp->lock);
    nf = lp->npending_fds;
    memcpy(fds, lp->pending_fds, (size_t)nf * sizeof(int));
    lp->npending_fds = 0;
    pthread_mutex_unlock(&lp->lock);
    for (int i = 0; i < nf; i++) {
        bool is_unix = fds[i] < 0;
        loop_take_fd(lp, is_unix ? -fds[i] - 1 : fds[i], is_unix);
    }
    for (conn *c = lp->clients; c; c = c->next) {
        if (!(c->flags & CONN_CLOSING) && (atomic_load(&c->flags) & CONN_KILL)) {
            conn_close(c, "killed by CLIENT KILL");
        }
    }
    loop_drain(lp);
    if (atomic_load(&srv.shutdown)) {
        event_base_loopexit(lp->base, NULL);
    }
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int sl,
                      void *arg)
{
    (void)l;
    (void)sl;
    bool is_unix = arg != NULL;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    if (!is_unix) {
        memcpy(&ss, sa, (size_t)sl < sizeof(ss) ? (size_t)sl : sizeof(ss));
    }
    atomic_fetch_add(&srv.total_conns, 1);
    if (atomic_load(&srv.connected) >= srv.cfg.maxclients) {
        static const char msg[] = "-ERR max number of clients reached\r\n";
        ssize_t w = write(fd, msg, sizeof(msg) - 1);
        (void)w;
        close(fd);
        atomic_fetch_add(&srv.rejected_conns, 1);
        log_msg(LL_VERBOSE, "Rejected connection: max number of clients reached");
        return;
    }
    if (!is_unix && srv.cfg.protected_mode &&
        (srv.cfg.requirepass == NULL || srv.cfg.requirepass[0] == '\0') && !addr_is_local(&ss)) {
        ssize_t w = write(fd, DENIED_MSG, strlen(DENIED_MSG));
        (void)w;
        close(fd);
        atomic_fetch_add(&srv.rejected_conns, 1);
        log_msg(LL_WARNING, "Rejected a non-loopback connection: protected mode, no password");
        return;
    }
    atomic_fetch_add(&srv.connected, 1);
    loop *lp = &srv.loops[srv.rr++ % (uint64_t)srv.nloops];
    if (lp->idx == 0) {
        loop_take_fd(lp, fd, is_unix);
        return;
    }
    pthread_mutex_lock(&lp->lock);
    bool full = lp->npending_fds >= 256;
    if (!full) {
        lp->pending_fds[lp->npending_fds++] = is_unix ? -fd - 1 : fd;
    }
    pthread_mutex_unlock(&lp->lock);
    if (full) {
        loop_take_fd(&srv.loops[0], fd, is_unix);
        return;
    }
    char one = 1;
    ssize_t w = write(lp->notify_fd[1], &one, 1);
    (void)w;
}

/* ------------------------------------------------------------------------
 * Cron
 * ---------------------------------------------------------------------- */

static void cron_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    loop *lp = arg;
    int64_t now = cudis_now_ms();
    pthread_mutex_lock(&lp->lock);
    conn *list = lp->clients;
    pthread_mutex_unlock(&lp->lock);
    for (conn *c = list; c; c = c->next) {
        if (c->flags & CONN_CLOSING) {
            continue;
        }
        if (atomic_load(&c->flags) & CONN_KILL) {
            conn_close(c, "killed by CLIENT KILL");
            continue;
        }
        if (srv.cfg.timeout > 0 && c->pending == 0 && c->out.len == c->out_sent &&
            now - c->last_ms > srv.cfg.timeout * 1000) {
            log_msg(LL_VERBOSE, "Closing idle client id=%llu addr=%s", (unsigned long long)c->id,
                    c->addr);
            conn_close(c, NULL);
            continue;
        }
        if (c->out.len > c->out_sent) {
            check_obuf(c);
        }
    }
    if (lp->b.npend > 0) {
        loop_flush(lp, SEAL_DEADLINE);
    }
    if (lp->idx == 0) {
        uint64_t ns = cudis_mono_ns();
        uint64_t total = 0;
        for (int i = 0; i < srv.nloops; i++) {
            total += __atomic_load_n(&srv.loops[i].st.commands, __ATOMIC_RELAXED);
        }
        if (srv.ops_sample_ns) {
            double dt = (double)(ns - srv.ops_sample_ns) / 1e9;
            if (dt > 0) {
                srv.ops_per_sec = (double)(total - srv.ops_sample_prev) / dt;
            }
        }
        srv.ops_sample_prev = total;
        srv.ops_sample_ns = ns;
        if (srv.nloops > 1) {
            loop_complete(lp); /* its read lock would block our write lock */
            pthread_rwlock_wrlock(&srv.eng_lock);
        }
        /* Adaptive sweep, like Redis's active expiry: a small slice of the
         * index per tick (a few hundred microseconds) while nothing expires;
         * once expired items turn up, slices of a full pass per second (at
         * most 256 Ki buckets a tick, a few milliseconds). It shrinks again
         * only after a whole pass found nothing: a few expired keys
         * scattered over a big index are all found within that pass, not
         * left to chance slices. */
        cudis_stats es;
        engine_stats(srv.eng, &es);
        uint64_t units = es.capacity / 8; /* buckets of an 8-way index */
        uint64_t full = units / (uint64_t)srv.cfg.hz;
        uint64_t cap = full < 262144 ? (full < 4096 ? 4096 : full) : 262144;
        static uint64_t work, pass_done, pass_found, last_pass_found;
        if (work < 4096) {
            work = 4096;
        }
        if (work > cap) {
            work = cap;
        }
        int n = engine_sweep(srv.eng, now, (uint32_t)(work > 1u << 30 ? 1u << 30 : work));
        pass_done += work;
        pass_found += n > 0 ? (uint64_t)n : 0;
        if (n > 0) {
            work = cap;
        } else if (pass_found == 0 && last_pass_found == 0) {
            work /= 2;
        }
        if (pass_done >= units) {
            last_pass_found = pass_found;
            pass_done = 0;
            pass_found = 0;
        }
        if (n > 0) {
            srv.expired_keys += (uint64_t)n;
        }
        if (srv.nloops > 1) {
            pthread_rwlock_unlock(&srv.eng_lock);
        }
    }
    loop_drain(lp);
    struct timeval tv = {0, (suseconds_t)(1000000 / srv.cfg.hz)};
    evtimer_add(lp->cron_ev, &tv);
}

/* ------------------------------------------------------------------------
 * Clients of every loop (CLIENT LIST / KILL)
 * ---------------------------------------------------------------------- */

static void client_line(sbuf *out, conn *c, int64_t now)
{
    char flags[8] = "N";
    if (c->flags & CONN_CLOSE_AFTER_REPLY) {
        strcpy(flags, "c");
    }
    const char *events = (c->flags & CONN_WRITE_WAIT) ? "rw" : "r";
    sbuf_printf(out,
                "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=0 sub=0 "
                "psub=0 ssub=0 multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=%zu "
                "rbp=%zu obl=0 oll=0 omem=%zu tot-mem=%zu events=%s cmd=%s user=default redir=-1 "
                "resp=%d lib-name=%s lib-ver=%s\n",
                (unsigned long long)c->id, c->addr, c->laddr, c->fd, c->name ? c->name : "",
                (long long)((now - c->ctime_ms) / 1000), (long long)((now - c->last_ms) / 1000),
                flags, c->qlen - c->qpos, c->qcap - c->qlen, c->qcap, c->qlen,
                c->out.len - c->out_sent, c->qcap + c->out.cap + sizeof(*c), events,
                c->last_cmd ? cmd_fullname(c->last_cmd) : "NULL", c->proto,
                c->lib_name ? c->lib_name : "", c->lib_ver ? c->lib_ver : "");
}

void server_client_list(sbuf *out, conn *only, long id_filter)
{
    int64_t now = cudis_now_ms();
    if (only) {
        client_line(out, only, now);
        return;
    }
    for (int i = 0; i < srv.nloops; i++) {
        loop *lp = &srv.loops[i];
        pthread_mutex_lock(&lp->lock);
        for (conn *c = lp->clients; c; c = c->next) {
            if ((c->flags & CONN_CLOSING) || (atomic_load(&c->flags) & CONN_KILL)) {
                continue;
            }
            if (id_filter >= 0 && (long)c->id != id_filter) {
                continue;
            }
            client_line(out, c, now);
        }
        pthread_mutex_unlock(&lp->lock);
    }
}

int server_client_kill(conn *self, const char *addr, const char *laddr, uint64_t id, bool skipme)
{
    int killed = 0;
    for (int i = 0; i < srv.nloops; i++) {
        loop *lp = &srv.loops[i];
        pthread_mutex_lock(&lp->lock);
        for (conn *c = lp->clients; c; c = c->next) {
            if ((c->flags & CONN_CLOSING) || (atomic_load(&c->flags) & CONN_KILL)) {
                continue;
            }
            if (addr && strcmp(c->addr, addr)) {
                continue;
            }
            if (laddr && strcmp(c->laddr, laddr)) {
                continue;
            }
            if (id && c->id != id) {
                continue;
            }
            if (c == self && skipme) {
                continue;
            }
            if (c == self) {
                c->flags |= CONN_CLOSE_AFTER_REPLY;
            } else if (c->lp == self->lp) {
                conn_close(c, "killed by CLIENT KILL");
            } else {
                atomic_fetch_or(&c->flags, CONN_KILL);
                char one = 1;
                ssize_t w = write(lp->notify_fd[1], &one, 1);
                (void)w;
            }
            killed++;
        }
        pthread_mutex_unlock(&lp->lock);
    }
    return killed;
}

/* ------------------------------------------------------------------------
 * Listeners, loops, shutdown
 * ---------------------------------------------------------------------- */

static int listen_tcp(const char *addr, int port, bool optional)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    int rc = getaddrinfo(addr, ps, &hints, &res);
    if (rc != 0) {
        if (optional) {
            return 0;
        }
        log_msg(LL_WARNING, "Could not create server TCP listening socket %s:%d: %s", addr, port,
                gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) {
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (ai->ai_family == AF_INET6) {
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        }
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
            listen(fd, (int)srv.cfg.tcp_backlog) == 0) {
            break;
        }
        int e = errno;
        close(fd);
        fd = -1;
        errno = e;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        if (optional && (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT)) {
            return 0;
        }
        log_msg(LL_WARNING, "Warning: Could not create server TCP listening socket %s:%d: bind: %s",
                addr, port, strerror(errno));
        return -1;
    }
    evutil_make_socket_nonblocking(fd);
    struct evconnlistener *l =
        evconnlistener_new(srv.loops[0].base, accept_cb, NULL, LEV_OPT_CLOSE_ON_FREE, 0, fd);
    if (l == NULL) {
        close(fd);
        return -1;
    }
    srv.listeners[srv.nlisteners++] = l;
    return 0;
}

static int listen_unix(const char *path, int perm)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) {
        return -1;
    }
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        log_msg(LL_WARNING, "unixsocket path too long: %s", path);
        close(fd);
        return -1;
    }
    strcpy(sa.sun_path, path);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fd, (int)srv.cfg.tcp_backlog) != 0) {
        log_msg(LL_WARNING, "Failed opening Unix socket: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (perm) {
        chmod(path, (mode_t)perm);
    }
    evutil_make_socket_nonblocking(fd);
    struct evconnlistener *l = evconnlistener_new(srv.loops[0].base, accept_cb, (void *)1,
                                                  LEV_OPT_CLOSE_ON_FREE, 0, fd);
    if (l == NULL) {
        close(fd);
        return -1;
    }
    srv.listeners[srv.nlisteners++] = l;
    return 0;
}

static void loop_setup(loop *lp, int idx)
{
    memset(lp, 0, sizeof(*lp));
    lp->idx = idx;
    lp->base = event_base_new();
    if (lp->base == NULL) {
        log_msg(LL_WARNING, "event_base_new failed");
        exit(1);
    }
    event_base_priority_init(lp->base, 2);
    lp->flush_ev = event_new(lp->base, -1, 0, flush_cb, lp);
    event_priority_set(lp->flush_ev, 1);
    lp->cron_ev = evtimer_new(lp->base, cron_cb, lp);
    event_priority_set(lp->cron_ev, 0);
    if (pipe(lp->notify_fd) != 0) {
        exit(1);
    }
    evutil_make_socket_nonblocking(lp->notify_fd[0]);
    lp->notify_ev = event_new(lp->base, lp->notify_fd[0], EV_READ | EV_PERSIST, notify_cb, lp);
    event_add(lp->notify_ev, NULL);
    pthread_mutex_init(&lp->lock, NULL);
    batch_init(&lp->b);
    batch_init(&lp->bf.flight);
    lp->bf.open = &lp->b;
    lp->bf.eng_lock = srv.nloops > 1 ? &srv.eng_lock : NULL;
    lp->bf.answered = wlist_add;
    if (server_pipelined()) {
        lp->bf.q = engine_queue_create(srv.eng);
        if (lp->bf.q == NULL) {
            log_msg(LL_WARNING, "engine-pipeline: cannot start a queue thread; batches run inline");
        } else {
            lp->done_ev =
                event_new(lp->base, engine_queue_fd(lp->bf.q), EV_READ | EV_PERSIST, done_cb, lp);
            event_add(lp->done_ev, NULL);
        }
    }
    lp->st.cmds = calloc((size_t)cmd_count(), sizeof(cmd_stat));
    lp->bf.cmd_stats = lp->st.cmds;
    struct timeval tv = {0, (suseconds_t)(1000000 / srv.cfg.hz)};
    evtimer_add(lp->cron_ev, &tv);
}

/* Answer what every client of this loop already sent, then close them. */
static void loop_final(loop *lp)
{
    lp->final = true;
    for (conn *c = lp->clients; c; c = c->next) {
        for (int i = 0; i < 64 && !(c->flags & (CONN_CLOSING | CONN_CLOSE_AFTER_REPLY)); i++) {
            if (!conn_read_once(c)) {
                break;
            }
        }
    }
    loop_flush(lp, SEAL_DRAIN);
    loop_drain(lp);
    for (conn *c = lp->clients; c; c = c->next) {
        if ((c->flags & CONN_CLOSING) || c->out.len == c->out_sent) {
            continue;
        }
        int fl = fcntl(c->fd, F_GETFL);
        fcntl(c->fd, F_SETFL, fl & ~O_NONBLOCK);
        struct timeval tv = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        while (c->out_sent < c->out.len) {
            ssize_t n = write(c->fd, c->out.p + c->out_sent, c->out.len - c->out_sent);
            if (n <= 0) {
                break;
            }
            c->out_sent += (size_t)n;
        }
    }
    while (lp->clients) {
        conn *c = lp->clients;
        if (!(c->flags & CONN_CLOSING)) {
            conn_close(c, NULL);
        }
        c->pending = 0;
        c->flags &= ~CONN_IN_WLIST;
        conn_free(c);
    }
    lp->wlist = NULL;
}

/* The loop: wait for events, run every ready callback, then execute the
 * batch they filled and write the replies (as Redis's beforeSleep): one
 * epoll_wait per round, and a lone request never waits for a timer. */
static void loop_run(loop *lp)
{
    while (!event_base_got_exit(lp->base) && !event_base_got_break(lp->base)) {
        if (event_base_loop(lp->base, EVLOOP_ONCE) < 0) {
            break;
        }
        lp->flush_scheduled = false;
        loop_flush(lp, SEAL_IDLE);
        loop_drain(lp);
    }
}

static void *loop_thread(void *arg)
{
    loop *lp = arg;
    loop_run(lp);
    loop_final(lp);
    return NULL;
}

static void shutdown_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    log_msg(LL_WARNING, "User requested shutdown...");
    for (int i = 0; i < srv.nlisteners; i++) {
        evconnlistener_free(srv.listeners[i]);
    }
    srv.nlisteners = 0;
    for (int i = 1; i < srv.nloops; i++) {
        char one = 1;
        ssize_t w = write(srv.loops[i].notify_fd[1], &one, 1);
        (void)w;
    }
    event_base_loopexit(srv.loops[0].base, NULL);
}

void server_request_shutdown(void)
{
    atomic_store(&srv.shutdown, 1);
    event_active(shutdown_ev, EV_TIMEOUT, 0);
}

static void sig_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    (void)arg;
    log_msg(LL_WARNING, "Received %s scheduling shutdown...", sig == SIGINT ? "SIGINT" : "SIGTERM");
    server_request_shutdown();
}

int server_start(void)
{
    if (srv.cfg.io_threads > 1) {
        evthread_use_pthreads();
    }
    srv.nloops = (int)srv.cfg.io_threads;
    srv.loops = calloc((size_t)srv.nloops, sizeof(loop));
    pthread_rwlock_init(&srv.eng_lock, NULL);
    for (int i = 0; i < srv.nloops; i++) {
        loop_setup(&srv.loops[i], i);
    }
    shutdown_ev = event_new(srv.loops[0].base, -1, 0, shutdown_cb, NULL);
    event_priority_set(shutdown_ev, 1);
    srv.sig_ev[0] = evsignal_new(srv.loops[0].base, SIGTERM, sig_cb, NULL);
    srv.sig_ev[1] = evsignal_new(srv.loops[0].base, SIGINT, sig_cb, NULL);
    event_add(srv.sig_ev[0], NULL);
    event_add(srv.sig_ev[1], NULL);

    if (srv.cfg.port > 0) {
        char *binds = strdup(srv.cfg.bind ? srv.cfg.bind : "");
        int ok = 0;
        for (char *a = strtok(binds, " "); a; a = strtok(NULL, " ")) {
            bool optional = a[0] == '-';
            if (listen_tcp(optional ? a + 1 : a, (int)srv.cfg.port, optional) != 0) {
                free(binds);
                return 1;
            }
            ok++;
        }
        free(binds);
        if (ok == 0) {
            log_msg(LL_WARNING, "No bind address to listen on");
            return 1;
        }
    }
    if (srv.cfg.unixsocket && srv.cfg.unixsocket[0]) {
        if (listen_unix(srv.cfg.unixsocket, (int)srv.cfg.unixsocketperm) != 0) {
            return 1;
        }
    }
    if (srv.nlisteners == 0) {
        log_msg(LL_WARNING, "Configured to not listen anywhere, exiting.");
        return 1;
    }
    log_msg(LL_NOTICE, "Ready to accept connections tcp port=%lld io-threads=%d", srv.cfg.port,
            srv.nloops);
    for (int i = 1; i < srv.nloops; i++) {
        pthread_create(&srv.loops[i].tid, NULL, loop_thread, &srv.loops[i]);
    }
    loop_run(&srv.loops[0]);
    loop_final(&srv.loops[0]);
    for (int i = 1; i < srv.nloops; i++) {
        pthread_join(srv.loops[i].tid, NULL);
    }
    if (srv.cfg.unixsocket && srv.cfg.unixsocket[0]) {
        unlink(srv.cfg.unixsocket);
    }
    event_free(shutdown_ev);
    shutdown_ev = NULL;
    for (int i = 0; i < 2; i++) {
        event_free(srv.sig_ev[i]);
        srv.sig_ev[i] = NULL;
    }
    for (int i = 0; i < srv.nloops; i++) {
        loop *lp = &srv.loops[i];
        event_free(lp->flush_ev);
        event_free(lp->cron_ev);
        event_free(lp->notify_ev);
        close(lp->notify_fd[0]);
        close(lp->notify_fd[1]);
        if (lp->done_ev != NULL) {
            event_free(lp->done_ev);
        }
        engine_queue_destroy(lp->bf.q); /* nothing is in flight: loop_final drained it */
        batch_deinit(&lp->b);
        batch_deinit(&lp->bf.flight);
        free(lp->st.cmds);
        event_base_free(lp->base);
    }
    free(srv.loops);
    srv.loops = NULL;
    log_msg(LL_WARNING, "cudis is now ready to exit, bye bye...");
    return 0;
}
