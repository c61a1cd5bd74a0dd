/*
 * loop.c - the event loops: one per I/O thread, each with its connections,
 * its open batch and the flusher that runs it, its cron, and the fds the
 * listener hands it.
 *
 * Flush policy (loop_run): each round waits for events once, runs the
 * callbacks of every connection with input ready, then executes the batch
 * they filled and writes the replies, so a lone request on an idle server
 * goes at once (no timer), while under load one batch gathers the requests
 * of all ready connections. A batch also closes when full (batch-max-ops)
 * or when its first request has waited batch-max-wait-us.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cudis_time.h"
#include "server_internal.h"

/* Write (or free) every connection on the loop's write list. */
void loop_drain(loop *lp)
{
    while (lp->wlist) {
        conn *list = lp->wlist;
        lp->wlist = NULL;
        while (list) {
            conn *c = list;
            list = c->wnext;
            c->flags &= ~CONN_IN_WLIST;
            if (c->flags & CONN_CLOSING) {
                if (c->pending == 0 && !lp->final && c != lp->running) {
                    conn_free(c);
                }
                continue;
            }
            if (c->out.len - c->out_sent > 0 && !conn_check_obuf(c)) {
                continue;
            }
            conn_write(c);
        }
    }
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

/* ------------------------------------------------------------------------
 * Fds from the listener, CLIENT KILL from other loops, shutdown
 * ---------------------------------------------------------------------- */

void loop_wake(loop *lp)
{
    char one = 1;
    ssize_t w = write(lp->notify_fd[1], &one, 1);
    (void)w;
}

/* Fds the listener handed over, CLIENT KILL flags, messages from other
 * loops (notify_cb, and a busy script's rounds). */
static void loop_take_work(loop *lp)
{
    int fds[256];
    int nf;
    pthread_mutex_lock(&lp->lock);
    nf = lp->npending_fds;
    memcpy(fds, lp->pending_fds, (size_t)nf * sizeof(int));
    lp->npending_fds = 0;
    pthread_mutex_unlock(&lp->lock);
    pubsub_drain_inbox(lp);
    blocking_take_done(lp); /* waiters another loop served */
    clients_resume(lp); /* CLIENT UNPAUSE wakes every loop */
    clients_unblock_due(lp, cudis_now_ms()); /* and CLIENT UNBLOCK this one */
    for (int i = 0; i < nf; i++) {
        conn_create(lp, fds[i] >> 2, fds[i] & 3); /* fd and kind (loop_hand_fd) */
    }
    for (conn *c = lp->clients; c; c = c->next) {
        if (!(c->flags & CONN_CLOSING) && (atomic_load(&c->flags) & CONN_KILL) &&
            c != lp->running) {
            conn_close(c, "killed by CLIENT KILL");
        }
        if (!(c->flags & CONN_CLOSING) && (atomic_load(&c->flags) & CONN_ACL_CHECK) &&
            c != lp->running) {
            atomic_fetch_and(&c->flags, ~(uint32_t)CONN_ACL_CHECK);
            if (!acl_subscriptions_ok(c)) { /* Redis frees it too */
                conn_close(c, "its user may no longer use a channel it subscribes to");
            }
        }
    }
}

static void notify_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    loop *lp = arg;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf));
    (void)n;
    loop_take_work(lp);
    loop_drain(lp);
    if (atomic_load(&srv.shutdown)) {
        event_base_loopexit(lp->base, NULL);
    }
}

/* An accepted fd (on loop 0's thread) to the next loop, round robin. */
void loop_hand_fd(int fd, int kind)
{
    /* (while the file loads only loop 0 runs: it answers -LOADING) */
    loop *lp = rdb_loading() ? &srv.loops[0] : &srv.loops[srv.rr++ % (uint64_t)srv.nloops];
    if (lp->idx == 0) {
        conn_create(lp, fd, kind);
        return;
    }
    pthread_mutex_lock(&lp->lock);
    bool full = lp->npending_fds >= 256;
    if (!full) {
        lp->pending_fds[lp->npending_fds++] = fd << 2 | kind;
    }
    pthread_mutex_unlock(&lp->lock);
    if (full) {
        conn_create(&srv.loops[0], fd, kind);
        return;
    }
    loop_wake(lp);
}

/* ------------------------------------------------------------------------
 * Cron
 * ---------------------------------------------------------------------- */

/* The engine exclusively for the expiry tick, waiting at most 2 ms: a
 * cron that blocks starves the loop's other events (the cron has the
 * higher priority). */
static bool engine_lock_for_tick(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = ts.tv_nsec + 2000000L;
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    return pthread_rwlock_timedwrlock(&srv.eng_lock, &ts) == 0;
}

static void cron_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    loop *lp = arg;
    if (lp->busy) { /* inside a busy script: nothing of the engine, nothing closed */
        struct timeval tv = {0, (suseconds_t)(1000000 / srv.cfg.hz)};
        evtimer_add(lp->cron_ev, &tv);
        return;
    }
    int64_t now = cudis_now_ms();
    if (now / 1000 != lp->peak_sec) { /* a new second: its slot starts empty */
        lp->peak_sec = now / 1000;
        STAT_SET(lp->peak_out[lp->peak_sec % PEAK_SLOTS], 0);
        STAT_SET(lp->peak_in[lp->peak_sec % PEAK_SLOTS], 0);
    }
    pthread_mutex_lock(&lp->lock);
    conn *list = lp->clients;
    pthread_mutex_unlock(&lp->lock);
    for (conn *c = list; c; c = c->next) {
        conn_cron(c, now);
    }
    clients_resume(lp);           /* a CLIENT PAUSE that timed out */
    clients_unblock_due(lp, now); /* a WAIT that did */
    if (lp->b.npend > 0) {
        loop_flush(lp, SEAL_DEADLINE);
    }
    if (lp->idx == 0) {
        observe_clock_sample(now);
        uint64_t ns = cudis_mono_ns();
        uint64_t total = 0;
        for (int i = 0; i < srv.nloops; i++) {
            total += __atomic_load_n(&srv.loops[i].st.commands, __ATOMIC_RELAXED);
        }
        if (srv.ops_sample_ns) {
            double dt = (double)(ns - srv.ops_sample_ns) / 1e9;
            if (dt > 0) {
                double ops = (double)(total - srv.ops_sample_prev) / dt;
                __atomic_store(&srv.ops_per_sec, &ops, __ATOMIC_RELAXED); /* INFO reads it */
            }
        }
        srv.ops_sample_prev = total;
        srv.ops_sample_ns = ns;
        loop_complete(lp); /* expiry is not concurrent with batches */
        /* keys do not expire during CLIENT PAUSE; a tick is skipped when
         * the engine stays held (a long script on another loop): this loop
         * keeps accepting and seeing signals */
        if (clients_paused(now) == 0 && engine_lock_for_tick()) {
            uint64_t t0 = cudis_mono_ns();
            cudis_evbuf *ev = keyspace_wants_events() ? keyspace_evbuf(&lp->sweep_ev) : NULL;
            engine_expire_tick(srv.eng, now, (int)srv.cfg.hz, ev); /* counted by the engine */
            uint64_t t1 = cudis_mono_ns();
            if (!rdb_bgsave_running()) { /* a snapshot's walk wants keys kept in place */
                engine_index_tick(srv.eng, now, ev); /* evictions are counted there too */
            }
            observe_event("index-resize", (cudis_mono_ns() - t1) / 1000);
            observe_event("expire-cycle", (cudis_mono_ns() - t0) / 1000);
            if (ev != NULL) {
                keyspace_engine_events(lp, ev);
            }
            pthread_rwlock_unlock(&srv.eng_lock);
        }
        bighash_tend(lp); /* chunks of hashes that went; waiting conversions */
        rdb_cron(lp, now); /* the save schedule */
    }
    loop_drain(lp);
    struct timeval tv = {0, (suseconds_t)(1000000 / srv.cfg.hz)};
    evtimer_add(lp->cron_ev, &tv);
}

void loop_busy_round(loop *lp)
{
    /* libevent does not run a base from inside its own callback: each
     * client is read directly (non-blocking), at most every 10 ms */
    uint64_t now = cudis_mono_ns();
    if (lp->busy || now - lp->busy_ns < 10000000) {
        return;
    }
    lp->busy = true;
    lp->busy_ns = now;
    char buf[256];
    ssize_t n = read(lp->notify_fd[0], buf, sizeof(buf)); /* non-blocking: the wakes */
    (void)n;
    loop_take_work(lp);
    for (conn *c = lp->clients; c != NULL; c = c->next) {
        if (c != lp->running && !(c->flags & (CONN_CLOSING | CONN_PAUSED | CONN_FAKE))) {
            conn_read_once(c);
        }
    }
    if (lp->idx == 0) { /* the listeners and signals live on loop 0's base */
        listeners_poll();
        server_poll_signals();
    }
    loop_drain(lp);
    lp->busy = false;
}

/* ------------------------------------------------------------------------
 * Setup, run, shutdown
 * ---------------------------------------------------------------------- */

void loop_setup(loop *lp, int idx)
{
    memset(lp, 0, sizeof(*lp));
    lp->idx = idx;
    lp->base = event_base_new();
    if (lp->base == NULL) {
        log_msg(LL_WARNING, "event_base_new failed");
        exit(1);
    }
    event_base_priority_init(lp->base, 2);
    lp->cron_ev = evtimer_new(lp->base, cron_cb, lp);
    event_priority_set(lp->cron_ev, 0);
    if (pipe(lp->notify_fd) != 0) {
        exit(1);
    }
    evutil_make_socket_nonblocking(lp->notify_fd[0]);
    lp->notify_ev = event_new(lp->base, lp->notify_fd[0], EV_READ | EV_PERSIST, notify_cb, lp);
    event_add(lp->notify_ev, NULL);
    pthread_mutex_init(&lp->lock, NULL);
    pthread_mutex_init(&lp->acl_mu, NULL);
    batch_init(&lp->b);
    batch_init(&lp->bf.flight);
    lp->b.owner = lp->bf.flight.owner = lp;
    lp->bf.open = &lp->b;
    lp->bf.eng_lock = &srv.eng_lock;
    lp->bf.answered = conn_want_write;
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
    lp->st.cmds = xcalloc((size_t)cmd_count(), sizeof(cmd_stat));
    lp->bf.cmd_stats = lp->st.cmds;
    struct timeval tv = {0, (suseconds_t)(1000000 / srv.cfg.hz)};
    evtimer_add(lp->cron_ev, &tv);
}

/* Answer what every client of this loop already sent, then close them. */
void loop_final(loop *lp)
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
            ssize_t n = conn_sock_write(c, c->out.p + c->out_sent, c->out.len - c->out_sent);
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
void loop_run(loop *lp)
{
    while (!event_base_got_exit(lp->base) && !event_base_got_break(lp->base)) {
        if (event_base_loop(lp->base, EVLOOP_ONCE) < 0) {
            break;
        }
        loop_flush(lp, SEAL_IDLE);
        /* waiters on keys the round wrote; those served read again, and
         * what they send may serve others (bounded: the next round goes on) */
        for (int i = 0; i < 16; i++) {
            blocking_serve(lp);
            if (!blocking_resume(lp)) {
                break;
            }
            loop_flush(lp, SEAL_IDLE);
        }
        loop_drain(lp);
        if (atomic_load(&lp->blk_ready)) { /* a waiter freed by the drain headed a ready key */
            blocking_serve(lp);
            (void)blocking_resume(lp);
            loop_flush(lp, SEAL_IDLE);
            loop_drain(lp);
        }
    }
}

void *loop_thread(void *arg)
{
    loop *lp = arg;
    loop_run(lp);
    loop_final(lp);
    return NULL;
}

/* Free what loop_setup made (after loop_final). */
void loop_teardown(loop *lp)
{
    event_free(lp->cron_ev);
    event_free(lp->notify_ev);
    if (lp->blk_ev != NULL) {
        event_free(lp->blk_ev);
    }
    close(lp->notify_fd[0]);
    close(lp->notify_fd[1]);
    if (lp->done_ev != NULL) {
        event_free(lp->done_ev);
    }
    engine_queue_destroy(lp->bf.q); /* nothing is in flight: loop_final drained it */
    batch_deinit(&lp->b);
    batch_deinit(&lp->bf.flight);
    free(lp->sweep_ev.recs);
    free(lp->sweep_ev.keys);
    free(lp->st.cmds);
    event_base_free(lp->base);
}
