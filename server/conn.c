/*
 * conn.c - connections: a socket accepted into a loop (options, addresses),
 * reading and parsing its requests into commands, writing its replies,
 * its limits (query buffer, output buffer soft and hard, idle timeout,
 * CLIENT KILL from another loop), error replies with their statistics, and
 * closing it. A connection belongs to one loop and only that loop's thread
 * touches it; a closed one is freed by loop_drain once no reply is pending.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cudis_fault.h"
#include "cudis_time.h"
#include "server_internal.h"

static void conn_read_cb(evutil_socket_t fd, short what, void *arg);
static void conn_write_cb(evutil_socket_t fd, short what, void *arg);

/* ------------------------------------------------------------------------
 * Lifecycle
 * ---------------------------------------------------------------------- */

void conn_want_write(conn *c)
{
    if (c->flags & (CONN_IN_WLIST | CONN_FAKE)) {
        return;
    }
    c->flags |= CONN_IN_WLIST;
    c->wnext = c->lp->wlist;
    c->lp->wlist = c;
}

void conn_free(conn *c)
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
    if (c->flags & CONN_PAUSED) {
        lp->npaused--;
    }
    if (atomic_load(&c->flags) & CONN_BLOCKED) {
        clients_block_gone(c);
        (void)blocking_end(c, true); /* before it is freed: no queue holds it after */
    }
    multi_discard(c);      /* and its watched keys */
    tracking_conn_gone(c); /* before its queued messages go: none comes after */
    pubsub_conn_gone(c);
    resp_parser_deinit(&c->rp);
    free(c->qbuf);
    sbuf_free(&c->out);
    free(c->name);
    free(c->lib_name);
    free(c->lib_ver);
    acl_unref(c->user);
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
    if (c->ssl != NULL) {
        tls_close(c);
    }
    close(c->fd);
    c->fd = -1;
    atomic_store_explicit(&c->pub.fd, -1, memory_order_relaxed); /* CLIENT LIST elsewhere */
    atomic_fetch_sub(&srv.connected, 1);
    conn_want_write(c);
}

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

/* Local as Redis 7 counts it (islocalClient, protected mode): 127.0.0.1
 * and ::1 (or 127.0.0.1 mapped into IPv6), not the rest of 127/8. */
bool conn_addr_is_local(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
        return ntohl(s->sin_addr.s_addr) == INADDR_LOOPBACK;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
        if (IN6_IS_ADDR_LOOPBACK(&s->sin6_addr)) {
            return true;
        }
        if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr)) {
            const uint8_t *a = s->sin6_addr.s6_addr;
            return a[12] == 127 && a[13] == 0 && a[14] == 0 && a[15] == 1;
        }
        return false;
    }
    return true; /* unix socket */
}

void conn_create(loop *lp, int fd, int kind)
{
    bool is_unix = kind == CONN_KIND_UNIX;
    conn *c = xcalloc(1, sizeof(*c));
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
    c->multi_len = -1;
    c->user = acl_default_user();
    c->authed = acl_default_open();
    resp_parser_init(&c->rp);
    tracking_conn_new(c);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    if (is_unix) {
        ss.ss_family = AF_UNIX;
        c->flags |= CONN_UNIX | CONN_LOCAL;
    } else {
        getpeername(fd, (struct sockaddr *)&ss, &sl);
        if (conn_addr_is_local(&ss)) {
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
    if (kind == CONN_KIND_TLS && tls_conn_init(c) != 0) {
        event_free(c->rev);
        event_free(c->wev);
        close(fd);
        atomic_fetch_sub(&srv.connected, 1);
        resp_parser_deinit(&c->rp);
        tracking_conn_gone(c);
        acl_unref(c->user);
        free(c);
        return;
    }
    conn_publish(c);
    pthread_mutex_lock(&lp->lock);
    c->next = lp->clients;
    if (lp->clients) {
        lp->clients->prev = c;
    }
    lp->clients = c;
    lp->nclients++;
    pthread_mutex_unlock(&lp->lock);
    STAT_INC(lp->st.conns);
    event_add(c->rev, NULL);
    log_msg(LL_DEBUG, "Accepted %s", c->addr);
}

#define QBUF_BYTES (16 * 1024) /* a connection's query buffer, and the room a read wants */
/* A tls-port client must finish its handshake within this (Redis has no
 * such limit; `timeout`, when set, closes it earlier as any idle client). */
#define TLS_HANDSHAKE_MS 10000
#define QBUF_IDLE_MS 2000      /* idle this long, a client's grown buffers go back */

/* Give back what a big command grew (as Redis's cron resizes an idle
 * client's query buffer): the query buffer beyond QBUF_BYTES when what is
 * left in it fits that, and the parser's argument arrays. */
static void conn_trim(conn *c)
{
    if (resp_parser_busy(&c->rp)) {
        return;
    }
    bool freed = resp_parser_trim(&c->rp);
    size_t left = c->qlen - c->qpos;
    if (c->qcap > QBUF_BYTES && left <= QBUF_BYTES) {
        char *nb = xmalloc(QBUF_BYTES);
        memcpy(nb, c->qbuf + c->qpos, left);
        free(c->qbuf);
        c->qbuf = nb;
        c->qcap = QBUF_BYTES;
        c->qlen = left;
        c->qpos = 0;
        freed = true;
    }
    if (freed) {
        util_give_back_memory();
    }
}

/* The checks of the loop's cron: CLIENT KILL from another loop, the idle
 * timeout, a soft output-buffer limit held too long, buffers to give back. */
void conn_cron(conn *c, int64_t now)
{
    if (c->flags & CONN_CLOSING) {
        return;
    }
    /* the biggest buffers of the last seconds (INFO client_recent_max_*) */
    loop *lp = c->lp;
    int slot = (int)((now / 1000) % PEAK_SLOTS);
    uint64_t out = c->out.len - c->out_sent;
    if (out > STAT_GET(lp->peak_out[slot])) {
        STAT_SET(lp->peak_out[slot], out);
    }
    if (c->qcap > STAT_GET(lp->peak_in[slot])) {
        STAT_SET(lp->peak_in[slot], (uint64_t)c->qcap);
    }
    if (atomic_load(&c->flags) & CONN_KILL) {
        conn_close(c, "killed by CLIENT KILL");
        return;
    }
    if ((c->flags & CONN_TLS_HS) && now - c->ctime_ms > TLS_HANDSHAKE_MS) {
        conn_close(c, "TLS handshake timed out");
        return;
    }
    if (srv.cfg.timeout > 0 && c->pending == 0 && c->out.len == c->out_sent &&
        now - c->last_ms > srv.cfg.timeout * 1000) {
        log_msg(LL_VERBOSE, "Closing idle client id=%llu addr=%s", (unsigned long long)c->id,
                c->addr);
        conn_close(c, NULL);
        return;
    }
    if (c->out.len > c->out_sent) {
        conn_check_obuf(c);
    }
    if (c->pending == 0 && c != lp->running && !(c->flags & (CONN_PAUSED | CONN_BLOCKED)) &&
        now - c->last_ms >= QBUF_IDLE_MS) {
        conn_trim(c);
    }
}

/* ------------------------------------------------------------------------
 * Output
 * ---------------------------------------------------------------------- */

/* Redis's reply buffer: what fits it is never counted against the
 * client-output-buffer-limit (a small reply always goes out). */
#define REPLY_CHUNK_BYTES (16 * 1024)
/* Beyond it, what a client that has not authenticated may have queued (as
 * Redis, which closes such a client at once). */
#define UNAUTH_OBUF_BYTES 1024

bool conn_check_obuf(conn *c)
{
    size_t queued = c->out.len - c->out_sent;
    size_t pending = queued > REPLY_CHUNK_BYTES ? queued - REPLY_CHUNK_BYTES : 0;
    bool ps = pubsub_subscribed(c); /* class pubsub, else normal */
    long long hard = ps ? STAT_GET(srv.cfg.obuf_ps_hard) : STAT_GET(srv.cfg.obuf_hard);
    long long soft = ps ? STAT_GET(srv.cfg.obuf_ps_soft) : STAT_GET(srv.cfg.obuf_soft);
    long long soft_secs =
        ps ? STAT_GET(srv.cfg.obuf_ps_soft_secs) : STAT_GET(srv.cfg.obuf_soft_secs);
    bool over = false;
    if (conn_auth_required(c) && pending > UNAUTH_OBUF_BYTES) {
        over = true; /* a client that has not authenticated may not queue replies */
    } else if (hard > 0 && (long long)pending > hard) {
        over = true;
    } else if (soft > 0 && (long long)pending > soft) {
        int64_t now = cudis_now_ms();
        if (c->soft_since_ms == 0) {
            c->soft_since_ms = now;
        } else if (now - c->soft_since_ms > soft_secs * 1000) {
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
                (unsigned long long)c->id, c->addr, queued);
        conn_close(c, NULL);
        return false;
    }
    return true;
}

ssize_t conn_sock_write(conn *c, const char *p, size_t n)
{
    return c->ssl != NULL ? tls_write(c, p, n) : write(c->fd, p, n);
}

void conn_write(conn *c)
{
    if (c->flags & (CONN_CLOSING | CONN_TLS_HS)) {
        return; /* (a handshake in progress has nothing to write yet) */
    }
    while (c->out_sent < c->out.len) {
        ssize_t n = cudis_fault(CUDIS_FAULT_WRITE)
                        ? (errno = ECONNRESET, -1)
                        : conn_sock_write(c, c->out.p + c->out_sent, c->out.len - c->out_sent);
        if (n > 0) {
            c->out_sent += (size_t)n;
            STAT_ADD(c->lp->st.net_out, (uint64_t)n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!conn_check_obuf(c)) {
                return;
            }
            if (!(c->flags & (CONN_WRITE_WAIT | CONN_TLS_WRITE_WANTS_READ))) {
                c->flags |= CONN_WRITE_WAIT;
                event_add(c->wev, NULL);
            }
            conn_publish(c);
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
    conn_publish(c);
    if (c->flags & CONN_WRITE_WAIT) {
        c->flags &= ~CONN_WRITE_WAIT;
        event_del(c->wev);
    }
    if ((c->flags & CONN_CLOSE_AFTER_REPLY) && c->pending == 0) {
        conn_close(c, NULL); /* after the last pending reply is written too */
    }
}

static void conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    conn *c = arg;
    loop *lp = c->lp;
    if (c->flags & (CONN_TLS_HS | CONN_TLS_READ_WANTS_WRITE)) {
        /* OpenSSL's handshake or read waited for the socket to be writable */
        atomic_fetch_and(&c->flags, ~(uint32_t)CONN_TLS_READ_WANTS_WRITE);
        if (c != lp->running) {
            conn_read_once(c);
        }
        if (c->flags & CONN_CLOSING) {
            loop_drain(lp);
            return;
        }
    }
    conn_write(c);
    loop_drain(lp);
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
    STAT_INC(lp->st.errors);
    int nerr = __atomic_load_n(&lp->st.nerr, __ATOMIC_RELAXED);
    for (int i = 0; i < nerr; i++) {
        if (!strcmp(lp->st.err_names[i], code)) {
            STAT_INC(lp->st.err_counts[i]);
            return;
        }
    }
    if (nerr < ERRSTAT_MAX) {
        memcpy(lp->st.err_names[nerr], code, n + 1);
        STAT_SET(lp->st.err_counts[nerr], 1);
        __atomic_store_n(&lp->st.nerr, nerr + 1, __ATOMIC_RELEASE); /* the name first */
    }
}

void conn_error(conn *c, const char *msg)
{
    resp_error(&c->out, msg);
    count_error(c->lp, msg);
    if (c->cur_cmd) {
        STAT_INC(c->lp->st.cmds[cmd_idx(c->cur_cmd)].failed);
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
 * Input
 * ---------------------------------------------------------------------- */

static void process_input(conn *c)
{
    loop *lp = c->lp;
    while (!(c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSING | CONN_BLOCKED))) {
        c->rp.max_bulk = srv.cfg.proto_max_bulk_len;
        c->rp.unauth = conn_auth_required(c);
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
        int paused = clients_pause_set() ? clients_paused(cudis_now_ms()) : 0;
        if (paused != 0 && dispatch_postponed(c, paused, c->rp.argc, c->rp.argv, c->rp.arg_len)) {
            /* CLIENT PAUSE: hold this command (and stop reading) until it ends */
            c->flags |= CONN_PAUSED;
            lp->npaused++;
            event_del(c->rev);
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

static void after_input(conn *c)
{
    if (!(c->flags & CONN_CLOSING) && c->out.len > c->out_sent && c->pending == 0) {
        conn_want_write(c);
    } else if ((c->flags & CONN_CLOSE_AFTER_REPLY) && c->pending == 0) {
        conn_want_write(c);
    }
}

void conn_unblocked(conn *c)
{
    process_input(c);
    after_input(c);
}

void conn_resume(conn *c)
{
    loop *lp = c->lp;
    event_add(c->rev, NULL);
    __atomic_store_n(&lp->st.commands, lp->st.commands + 1, __ATOMIC_RELAXED);
    cmd_dispatch(c, c->rp.argc, c->rp.argv, c->rp.arg_len);
    process_input(c);
    after_input(c);
}

/* One read of a TLS connection into its query buffer (from qlen on, at
 * least `cap` bytes of room): what OpenSSL already holds is taken whole
 * (the buffer grows for it), since the socket's read event does not fire
 * for bytes that left the kernel. As read(2). */
static ssize_t conn_tls_read(conn *c, size_t cap)
{
    ssize_t n = tls_read(c, c->qbuf + c->qlen, cap);
    size_t got = n > 0 ? (size_t)n : 0;
    while (n > 0 && tls_has_pending(c)) {
        if (c->qcap - c->qlen - got < QBUF_BYTES) {
            char *nb = cudis_fault(CUDIS_FAULT_ALLOC) ? NULL : realloc(c->qbuf, c->qcap * 2);
            if (nb == NULL) {
                errno = ENOMEM;
                return -1;
            }
            c->qbuf = nb;
            c->qcap *= 2;
        }
        n = tls_read(c, c->qbuf + c->qlen + got, c->qcap - c->qlen - got);
        if (n > 0) {
            got += (size_t)n;
        }
    }
    return got > 0 ? (ssize_t)got : n;
}

/* Read once and run what arrived. Returns false when the connection closed
 * (or holds a command for CLIENT PAUSE). Never frees a connection
 * (loop_drain does). */
bool conn_read_once(conn *c)
{
    loop *lp = c->lp;
    if (c->flags & (CONN_PAUSED | CONN_TLS_HS)) {
        if (c->flags & CONN_PAUSED) {
            return false;
        }
        int hs = tls_handshake(c);
        if (hs <= 0) {
            if (hs < 0) {
                conn_close(c, "TLS handshake failed");
            }
            return false;
        }
        if (listen_tls_refused(c)) {
            return false;
        }
        /* done: what the client sent behind its Finished is read below */
    }
    size_t want = QBUF_BYTES;
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
        size_t ncap = c->qcap ? c->qcap : QBUF_BYTES;
        while (ncap - c->qlen < want) {
            ncap *= 2;
        }
        /* the one buffer a client can grow at will: when it cannot grow,
         * that client goes (its arguments are parsed, pointing into it),
         * the server and the others stay */
        char *nb = cudis_fault(CUDIS_FAULT_ALLOC) ? NULL : realloc(c->qbuf, ncap);
        if (nb == NULL) {
            log_msg(LL_WARNING,
                    "Closing client id=%llu addr=%s: out of memory for its query buffer (%zu "
                    "bytes)",
                    (unsigned long long)c->id, c->addr, ncap);
            conn_close(c, NULL);
            return false;
        }
        c->qbuf = nb;
        c->qcap = ncap;
    }
    /* at most `want` (a big argument's rest, else 64 KB) a read, so the
     * query-buffer limit sees what arrived unparsed, not the room a big
     * command's parsed arguments made */
    if (want < 64 * 1024) {
        want = 64 * 1024;
    }
    size_t room = c->qcap - c->qlen;
    ssize_t n = c->ssl != NULL ? conn_tls_read(c, room < want ? room : want)
                               : read(c->fd, c->qbuf + c->qlen, room < want ? room : want);
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
    STAT_ADD(lp->st.net_in, (uint64_t)n);
    c->last_ms = cudis_now_ms();
    /* as Redis's query buffer: the bytes not yet parsed into arguments
     * (the parsed arguments of a command still arriving stay in qbuf,
     * zero-copy; Redis has moved them to argv), a read at a time */
    size_t unparsed = c->qlen - c->qpos;
    if ((long long)unparsed > srv.cfg.client_query_buffer_limit) {
        log_msg(LL_WARNING,
                "Closing client that reached max query buffer length: id=%llu addr=%s (qbuf "
                "initial bytes: %zu)",
                (unsigned long long)c->id, c->addr, unparsed);
        conn_close(c, NULL);
        return false;
    }
    process_input(c);
    after_input(c);
    conn_publish(c);
    return n > 0;
}

void conn_publish(conn *c)
{
    const memory_order r = memory_order_relaxed;
    atomic_store_explicit(&c->pub.qbuf, c->qlen - c->qpos, r);
    atomic_store_explicit(&c->pub.qfree, c->qcap - c->qlen, r);
    atomic_store_explicit(&c->pub.qcap, c->qcap, r);
    atomic_store_explicit(&c->pub.qlen, c->qlen, r);
    atomic_store_explicit(&c->pub.omem, c->out.len - c->out_sent, r);
    atomic_store_explicit(&c->pub.mem, c->qcap + c->out.cap + sizeof(*c), r);
    atomic_store_explicit(&c->pub.last_ms, c->last_ms, r);
    atomic_store_explicit(&c->pub.db, c->db, r);
    atomic_store_explicit(&c->pub.proto, c->proto, r);
    atomic_store_explicit(&c->pub.fd, c->fd, r);
    atomic_store_explicit(&c->pub.no_evict, c->no_evict, r);
    atomic_store_explicit(&c->pub.no_touch, c->no_touch, r);
    atomic_store_explicit(&c->pub.last_cmd, c->last_cmd, r);
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    conn *c = arg;
    if (c == c->lp->running) {
        return; /* its script is busy: the rest of its input waits for it */
    }
    /* replies (and messages to subscribers) are written once per round of
     * callbacks, by loop_run, as Redis's beforeSleep does */
    conn_read_once(c);
    if (c->flags & CONN_TLS_WRITE_WANTS_READ) {
        conn_want_write(c); /* SSL_write waited for this */
    }
}
