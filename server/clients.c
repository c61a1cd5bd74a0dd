/*
 * clients.c - the clients of every loop, for CLIENT LIST and CLIENT KILL.
 * Another loop's client list is read under that loop's lock; a client of
 * another loop is killed by flagging it and waking its loop.
 */
#include <stdlib.h>
#include <string.h>

#include "cudis_time.h"
#include "server_internal.h"

/* One CLIENT LIST line. direct: c is the caller's loop's (its fields
 * are read as they are); else what c's loop published (c->pub). */
static void client_line(sbuf *out, conn *c, int64_t now, bool direct)
{
    const memory_order r = memory_order_relaxed;
    size_t qbuf, qfree, qcap, qlen, omem, mem;
    int64_t last_ms;
    int db, proto, fd;
    bool no_evict, no_touch;
    const command *last_cmd;
    if (direct) {
        qbuf = c->qlen - c->qpos;
        qfree = c->qcap - c->qlen;
        qcap = c->qcap;
        qlen = c->qlen;
        omem = c->out.len - c->out_sent;
        mem = c->qcap + c->out.cap + sizeof(*c);
        last_ms = c->last_ms;
        db = c->db;
        proto = c->proto;
        fd = c->fd;
        no_evict = c->no_evict;
        no_touch = c->no_touch;
        last_cmd = c->last_cmd;
    } else {
        qbuf = atomic_load_explicit(&c->pub.qbuf, r);
        qfree = atomic_load_explicit(&c->pub.qfree, r);
        qcap = atomic_load_explicit(&c->pub.qcap, r);
        qlen = atomic_load_explicit(&c->pub.qlen, r);
        omem = atomic_load_explicit(&c->pub.omem, r);
        mem = atomic_load_explicit(&c->pub.mem, r);
        last_ms = atomic_load_explicit(&c->pub.last_ms, r);
        db = atomic_load_explicit(&c->pub.db, r);
        proto = atomic_load_explicit(&c->pub.proto, r);
        fd = atomic_load_explicit(&c->pub.fd, r);
        no_evict = atomic_load_explicit(&c->pub.no_evict, r);
        no_touch = atomic_load_explicit(&c->pub.no_touch, r);
        last_cmd = atomic_load_explicit(&c->pub.last_cmd, r);
    }
    uint32_t cf = atomic_load_explicit(&c->flags, r);
    char flags[16];
    size_t nf = 0;
    if (cf & CONN_CLOSE_AFTER_REPLY) {
        flags[nf++] = 'c';
    }
    int multi = atomic_load_explicit(&c->multi_len, memory_order_relaxed);
    if (multi >= 0) {
        flags[nf++] = 'x';
    }
    if (atomic_load(&c->watch_dirty)) {
        flags[nf++] = 'd';
    }
    uint32_t trk = tracking_flags_of(c);
    if (trk & TRK_ON) {
        flags[nf++] = 't';
    }
    if (trk & TRK_BROKEN) {
        flags[nf++] = 'R';
    }
    if (trk & TRK_BCAST) {
        flags[nf++] = 'B';
    }
    if (no_evict) {
        flags[nf++] = 'e';
    }
    if (no_touch) {
        flags[nf++] = 'T';
    }
    if (cf & CONN_BLOCKED) {
        flags[nf++] = 'b';
    }
    if (nf == 0) {
        flags[nf++] = 'N';
    }
    flags[nf] = '\0';
    const char *events = (cf & CONN_WRITE_WAIT) ? "rw" : "r";
    sbuf_printf(out,
                "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=0 "
                "psub=0 ssub=0 multi=%d qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=%zu "
                "rbp=%zu obl=0 oll=0 omem=%zu tot-mem=%zu events=%s cmd=%s user=%s redir=%lld "
                "resp=%d lib-name=%s lib-ver=%s\n",
                (unsigned long long)c->id, c->addr, c->laddr, fd, c->name ? c->name : "",
                (long long)((now - c->ctime_ms) / 1000), (long long)((now - last_ms) / 1000),
                flags, db, multi, qbuf, qfree, qcap, qlen, omem, mem, events,
                last_cmd ? cmd_fullname(last_cmd) : "NULL", acl_user_name(c->user),
                tracking_redirect_of(c), proto, c->lib_name ? c->lib_name : "",
                c->lib_ver ? c->lib_ver : "");
}

void server_client_list(sbuf *out, const loop *mine, conn *only, long id_filter)
{
    int64_t now = cudis_now_ms();
    if (only) {
        client_line(out, only, now, true);
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
            client_line(out, c, now, lp == mine);
        }
        pthread_mutex_unlock(&lp->lock);
    }
}

int server_client_kill(conn *self, const char *addr, const char *laddr, uint64_t id, bool skipme,
                       const acl_user *user)
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
            if (user && c->user != user) {
                continue;
            }
            if (c == self && skipme) {
                continue;
            }
            if (c == self && self != NULL) {
                c->flags |= CONN_CLOSE_AFTER_REPLY;
            } else if (self != NULL && c->lp == self->lp) {
                conn_close(c, "killed by CLIENT KILL");
            } else {
                atomic_fetch_or(&c->flags, CONN_KILL);
                loop_wake(lp);
            }
            killed++;
        }
        pthread_mutex_unlock(&lp->lock);
    }
    return killed;
}

void server_clients_flag_user(const acl_user *user, uint32_t flag)
{
    for (int i = 0; i < srv.nloops; i++) {
        loop *lp = &srv.loops[i];
        bool any = false;
        pthread_mutex_lock(&lp->lock);
        for (conn *c = lp->clients; c; c = c->next) {
            if (c->user == user) {
                atomic_fetch_or(&c->flags, flag);
                any = true;
            }
        }
        pthread_mutex_unlock(&lp->lock);
        if (any) {
            loop_wake(lp);
        }
    }
}

/* ------------------------------------------------------------------------
 * CLIENT PAUSE
 * ---------------------------------------------------------------------- */

static pthread_mutex_t pause_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int64_t pause_end;
static _Atomic int pause_mode; /* as clients_paused */

bool clients_pause_set(void)
{
    return atomic_load_explicit(&pause_end, memory_order_relaxed) != 0;
}

int clients_paused(int64_t now_ms)
{
    int64_t end = atomic_load_explicit(&pause_end, memory_order_acquire);
    if (end == 0 || now_ms >= end) {
        return 0;
    }
    return atomic_load_explicit(&pause_mode, memory_order_relaxed);
}

static void wake_all(void)
{
    for (int i = 0; i < srv.nloops; i++) {
        loop_wake(&srv.loops[i]);
    }
}

void clients_pause(int64_t end_ms, bool all)
{
    pthread_mutex_lock(&pause_mu);
    bool on = clients_paused(cudis_now_ms()) != 0;
    int mode = all ? 2 : 1;
    if (!on || mode > atomic_load(&pause_mode)) {
        atomic_store(&pause_mode, mode);
    }
    if (!on || end_ms > atomic_load(&pause_end)) {
        atomic_store(&pause_end, end_ms);
    }
    pthread_mutex_unlock(&pause_mu);
}

void clients_unpause(void)
{
    pthread_mutex_lock(&pause_mu);
    atomic_store(&pause_end, 0);
    atomic_store(&pause_mode, 0);
    pthread_mutex_unlock(&pause_mu);
    wake_all();
}

void clients_resume(loop *lp)
{
    if (lp->npaused == 0) {
        return;
    }
    int mode = clients_paused(cudis_now_ms());
    for (conn *c = lp->clients; c != NULL; c = c->next) {
        if (!(c->flags & CONN_PAUSED) ||
            (mode != 0 && !(c->flags & CONN_CLOSING) &&
             dispatch_postponed(c, mode, c->rp.argc, c->rp.argv, c->rp.arg_len))) {
            continue;
        }
        c->flags &= ~CONN_PAUSED;
        lp->npaused--;
        if (!(c->flags & CONN_CLOSING)) {
            conn_resume(c);
        }
    }
}

/* ------------------------------------------------------------------------
 * Blocked clients (WAIT; on keys: blocking.c)
 * ---------------------------------------------------------------------- */

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    loop *lp = arg;
    lp->blk_ev_at = 0;
    clients_unblock_due(lp, cudis_now_ms()); /* re-arms for the next */
}

/* Arm lp's timer for deadline_ms when it is earlier than the one armed. */
static void arm_timer(loop *lp, int64_t deadline_ms)
{
    if (deadline_ms == INT64_MAX || (lp->blk_ev_at != 0 && lp->blk_ev_at <= deadline_ms)) {
        return;
    }
    if (lp->blk_ev == NULL) {
        lp->blk_ev = evtimer_new(lp->base, timer_cb, lp);
    }
    int64_t ms = deadline_ms - cudis_now_ms();
    if (ms < 0) {
        ms = 0;
    }
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    evtimer_add(lp->blk_ev, &tv);
    lp->blk_ev_at = deadline_ms;
}

void clients_block(conn *c, int64_t deadline_ms)
{
    atomic_fetch_or(&c->flags, CONN_BLOCKED);
    c->block_until = deadline_ms; /* it is still read: a hang-up is seen */
    STAT_SET(c->lp->nblocked, c->lp->nblocked + 1);
    if (deadline_ms != INT64_MAX) {
        STAT_SET(c->lp->nblocked_timed, c->lp->nblocked_timed + 1);
        arm_timer(c->lp, deadline_ms);
    }
}

void clients_block_gone(conn *c)
{
    STAT_SET(c->lp->nblocked, c->lp->nblocked - 1);
    if (c->block_until != INT64_MAX) {
        STAT_SET(c->lp->nblocked_timed, c->lp->nblocked_timed - 1);
    }
}

void clients_unblock_now(conn *c)
{
    atomic_fetch_and(&c->flags, ~(uint32_t)(CONN_BLOCKED | CONN_UNBLOCK | CONN_UNBLOCK_ERR));
    clients_block_gone(c);
    blocking_forget(c);
}

/* End c's block with its answer; false (nothing done) while another
 * loop's try holds it: that try answers. */
static bool unblock(conn *c, bool error)
{
    bool on_keys = c->blk != NULL;
    bool null_array = on_keys && c->blk->null_array;
    if (on_keys && !blocking_end(c, false)) {
        return false;
    }
    clients_unblock_now(c);
    if (c->flags & CONN_CLOSING) {
        return true;
    }
    size_t before = c->out.len;
    if (error) {
        conn_error(c, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    } else if (on_keys) {
        blocking_timeout_reply(c, null_array);
    } else {
        resp_int(&c->out, 0); /* no replica acknowledged */
    }
    reply_in_order(c, before);
    conn_unblocked(c);
    return true;
}

void clients_unblock_due(loop *lp, int64_t now_ms)
{
    if (STAT_GET(lp->nblocked) == 0) {
        return;
    }
    int64_t next = INT64_MAX;
    for (conn *c = lp->clients; c != NULL; c = c->next) {
        uint32_t f = atomic_load(&c->flags);
        if (!(f & CONN_BLOCKED)) {
            continue;
        }
        if ((f & CONN_UNBLOCK) || now_ms >= c->block_until || (f & CONN_CLOSING)) {
            if (!unblock(c, (f & CONN_UNBLOCK_ERR) != 0)) {
                next = now_ms + 1; /* a try holds it: look again soon */
            }
        } else if (c->block_until < next) {
            next = c->block_until;
        }
    }
    arm_timer(lp, next);
}

int clients_unblock(conn *self, uint64_t id, bool error)
{
    for (int i = 0; i < srv.nloops; i++) {
        loop *lp = &srv.loops[i];
        pthread_mutex_lock(&lp->lock);
        for (conn *c = lp->clients; c; c = c->next) {
            uint32_t f = atomic_load(&c->flags);
            if (c->id != id || !(f & CONN_BLOCKED) || (f & (CONN_UNBLOCK | CONN_CLOSING))) {
                continue;
            }
            if (c->lp == self->lp) {
                pthread_mutex_unlock(&lp->lock);
                unblock(c, error);
            } else {
                atomic_fetch_or(&c->flags, CONN_UNBLOCK | (error ? CONN_UNBLOCK_ERR : 0));
                pthread_mutex_unlock(&lp->lock);
                loop_wake(lp);
            }
            return 1;
        }
        pthread_mutex_unlock(&lp->lock);
    }
    return 0;
}

long clients_blocked(bool timed_only)
{
    long n = 0;
    for (int i = 0; i < srv.nloops; i++) {
        n += timed_only ? STAT_GET(srv.loops[i].nblocked_timed) : STAT_GET(srv.loops[i].nblocked);
    }
    return n;
}
