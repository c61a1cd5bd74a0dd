/*
 * dispatch.c - from a parsed request to its command: lookup (subcommands
 * included), arity, authentication and ACL checks, sealing the open batch when
 * the command's keys conflict with it (the table's key positions), and
 * keeping replies in order: an error or an immediate reply of a client
 * whose earlier commands are still in a batch goes behind them as a
 * pending reply of its own. Commands that must run between batches
 * (CMD_EXCL) run after the batches are answered, under the engine lock.
 */
#include <stdlib.h>
#include <string.h>

#include "cudis_time.h"
#include "server_internal.h"

static void dispatch_one(conn *c, int argc, char **argv, uint32_t *lens);

static void reply_unknown(conn *c, int argc, char **argv, uint32_t *lens)
{
    char args[256];
    size_t n = 0;
    args[0] = '\0';
    for (int i = 1; i < argc && n < 128; i++) {
        int room = 128 - (int)n;
        int w = snprintf(args + n, sizeof(args) - n, "'%.*s' ",
                         (int)(lens[i] < (uint32_t)room ? lens[i] : (uint32_t)room), argv[i]);
        if (w < 0) {
            break;
        }
        n += (size_t)w;
        if (n >= sizeof(args)) {
            n = sizeof(args) - 1;
        }
    }
    conn_errorf(c, "ERR unknown command '%.*s', with args beginning with: %s",
                (int)(lens[0] < 128 ? lens[0] : 128), argv[0], args);
}

/* What was written to c->out from `before` on: while earlier commands of
 * c are still in a batch, it goes behind their replies as a pending reply
 * of its own (server_internal.h). */
void reply_in_order(conn *c, size_t before)
{
    if (c->silent) { /* CLIENT REPLY OFF / SKIP */
        c->out.len = before;
        return;
    }
    if (c->pending > 0 && c->out.len > before) {
        batch_add_literal(&c->lp->b, c, c->out.p + before, c->out.len - before);
        c->out.len = before;
    }
}

/* Whether a batch command's keys (the table's key positions) conflict with
 * the open batch: then it must start a new one. */
static bool keys_conflict(batcher *b, const command *cmd, int argc, char **argv, uint32_t *lens)
{
    if (b->nops == 0 || cmd->first_key <= 0 || cmd->step <= 0) {
        return false;
    }
    bool write = (cmd->flags & CMD_WRITE) != 0;
    int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
    for (int i = cmd->first_key; i <= last && i < argc; i += cmd->step) {
        if (batch_conflicts(b, argv[i], lens[i], write)) {
            return true;
        }
    }
    return false;
}

/* A command dispatch refuses (Redis's rejectCommand): counted, the
 * transaction being queued aborts at EXEC, and an EXEC refused aborts it
 * now ("EXECABORT ... because of: ..."). */
static void reject(conn *c, const command *cmd, const char *code, const char *msg, size_t before)
{
    STAT_INC(c->lp->st.cmds[cmd_idx(cmd)].rejected);
    if (cmd->fn == cmd_exec) {
        multi_discard(c);
        conn_errorf(c, "EXECABORT Transaction discarded because of: %s%s%s",
                    strcmp(code, "ERR") ? code : "", strcmp(code, "ERR") ? " " : "", msg);
    } else {
        conn_errorf(c, "%s %s", code, msg);
        multi_reject(c);
    }
    reply_in_order(c, before);
}

void dispatch_redirect(conn *c, const command *cmd, const char *code, const char *msg)
{
    if (cmd->fn != cmd_exec) {
        reject(c, cmd, code, msg, c->out.len);
        return;
    }
    size_t before = c->out.len;
    STAT_INC(c->lp->st.cmds[cmd_idx(cmd)].rejected);
    multi_discard(c);
    conn_errorf(c, "%s %s", code, msg);
    reply_in_order(c, before);
}

bool excl_begin(loop *lp)
{
    batch_flush(&lp->bf, srv.eng, SEAL_DRAIN);
    if (lp->exec_locked) {
        return false;
    }
    pthread_rwlock_wrlock(&srv.eng_lock);
    lp->bf.eng_lock = NULL;
    lp->exec_locked = true;
    return true;
}

void excl_end(loop *lp, bool locked)
{
    if (!locked) {
        return;
    }
    batch_flush(&lp->bf, srv.eng, SEAL_DRAIN);
    lp->exec_locked = false;
    lp->bf.eng_lock = &srv.eng_lock;
    pthread_rwlock_unlock(&srv.eng_lock);
}

bool arg_redacted(const command *cmd, int i, int argc, char **argv, uint32_t *lens)
{
    const command *top = cmd_parent(cmd) ? cmd_parent(cmd) : cmd;
    if (strcmp(top->name, "auth") == 0) {
        return i > 0;
    }
    if (strcmp(top->name, "hello") == 0) { /* HELLO ... AUTH user pass */
        for (int j = 1; j < i && j < argc; j++) {
            if (util_eq(argv[j], lens[j], "auth")) {
                return i == j + 1 || i == j + 2;
            }
        }
    }
    return false;
}

/* The command argv names, its subcommand resolved; NULL when unknown. */
static const command *lookup_full(int argc, char **argv, uint32_t *lens)
{
    const command *cmd = cmd_lookup(argv[0], lens[0]);
    if (cmd != NULL && (cmd->flags & CMD_CONTAINER)) {
        cmd = argc >= 2 ? cmd_lookup_sub(cmd, argv[1], lens[1]) : NULL;
    }
    return cmd;
}

/* Commands a WRITE pause holds besides the writes: those that may write
 * or propagate (Redis's may-replicate). */
static bool may_write(const conn *c, const command *cmd)
{
    if (cmd->flags & CMD_WRITE) {
        return true;
    }
    if (cmd->fn == cmd_eval || cmd->fn == cmd_evalsha || cmd->fn == cmd_fcall ||
        cmd->fn == cmd_publish || cmd->fn == cmd_spublish) {
        return true;
    }
    if (cmd->fn == cmd_exec && c->multi != NULL) {
        for (int i = 0; i < c->multi->n; i++) {
            if (may_write(c, c->multi->cmds[i].cmd)) {
                return true;
            }
        }
    }
    return false;
}

bool dispatch_postponed(conn *c, int mode, int argc, char **argv, uint32_t *lens)
{
    const command *cmd = lookup_full(argc, argv, lens);
    if (cmd == NULL || (cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        return false; /* refused at once */
    }
    return mode == 2 || may_write(c, cmd);
}

void cmd_dispatch(conn *c, int argc, char **argv, uint32_t *lens)
{
    c->silent = c->reply_off || c->reply_skip;
    dispatch_one(c, argc, argv, lens);
    /* ASKING lasts one command (or, before MULTI, the transaction) */
    if (c->asking_now) {
        c->asking_now = false;
    } else if (c->multi == NULL) {
        c->asking = false;
    }
    /* CLIENT REPLY SKIP drops the reply of the command after it */
    c->reply_skip = c->reply_skip_next;
    c->reply_skip_next = false;
    c->silent = false;
}

static void dispatch_one(conn *c, int argc, char **argv, uint32_t *lens)
{
    const command *cmd = cmd_lookup(argv[0], lens[0]);
    size_t before = c->out.len;
    c->cur_cmd = NULL;
    if (cmd == NULL) {
        if (util_eq(argv[0], lens[0], "post") || util_eq(argv[0], lens[0], "host:")) {
            log_msg(LL_WARNING, "Possible SECURITY ATTACK detected. It looks like somebody is "
                                "sending POST or Host: commands to Redis. Connection aborted.");
            conn_close(c, NULL);
            return;
        }
        reply_unknown(c, argc, argv, lens);
        multi_reject(c);
        reply_in_order(c, before);
        return;
    }
    if ((cmd->flags & CMD_CONTAINER) && (argc >= 2 || cmd->fn == NULL)) {
        const command *sub = argc >= 2 ? cmd_lookup_sub(cmd, argv[1], lens[1]) : NULL;
        if (sub == NULL) {
            if (argc < 2) {
                conn_errorf(c, "ERR wrong number of arguments for '%s' command", cmd_fullname(cmd));
            } else {
                char up[32];
                size_t i = 0;
                for (; cmd->name[i] && i < sizeof(up) - 1; i++) {
                    up[i] = (char)(cmd->name[i] & ~0x20);
                }
                up[i] = '\0';
                conn_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                            (int)(lens[1] < 128 ? lens[1] : 128), argv[1], up);
            }
            multi_reject(c);
            reply_in_order(c, before);
            return;
        }
        cmd = sub;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        char msg[160];
        snprintf(msg, sizeof(msg), "wrong number of arguments for '%s' command", cmd_fullname(cmd));
        reject(c, cmd, "ERR", msg, before);
        return;
    }
    if (conn_auth_required(c) && !(cmd->flags & CMD_NOAUTH)) {
        reject(c, cmd, "NOAUTH", "Authentication required.", before);
        return;
    }
    int pos = 0, acl = acl_check(c, cmd, argc, argv, lens, &pos);
    if (acl != ACL_OK) {
        char msg[256];
        acl_deny(c, cmd, acl, pos, c->multi ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, argv, lens, msg,
                 sizeof(msg));
        reject(c, cmd, "NOPERM", msg, before);
        return;
    }
    if (srv.cfg.cluster_enabled && !cluster_check(c, cmd, argc, argv, lens)) {
        return; /* a redirection (MOVED, ASK...) */
    }
    if (rdb_loading() && (!(cmd->flags & CMD_LOADING) || (cmd->flags & CMD_BATCH))) {
        reject(c, cmd, "LOADING", "Redis is loading the dataset in memory", before);
        return;
    }
    if (script_busy() && !(cmd->flags & CMD_ALLOW_BUSY)) {
        reject(c, cmd, "BUSY", script_busy_msg(), before);
        return;
    }
    if (c->proto == 2 && !(cmd->flags & CMD_PUBSUB) && pubsub_subscribed(c)) {
        char msg[200];
        snprintf(msg, sizeof(msg),
                 "Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
                 "RESET are allowed in this context",
                 cmd_fullname(cmd));
        reject(c, cmd, "ERR", msg, before);
        return;
    }
    if (c->multi != NULL && (cmd->flags & CMD_NOMULTI)) {
        reject(c, cmd, "ERR", "Command not allowed inside a transaction", before);
        return;
    }
    if (c->multi != NULL && !(cmd->flags & CMD_NOQUEUE)) {
        multi_queue(c, cmd, argc, argv, lens);
        reply_in_order(c, before);
        return;
    }
    dispatch_run(c, cmd, argc, argv, lens);
    tracking_command_done(c, cmd);
}

void dispatch_run(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens)
{
    loop *lp = c->lp;
    if (bighash_work()) {
        bighash_tend(lp); /* what the last batches left (bighash.c) */
    }
    size_t before = c->out.len;
    c->last_cmd = cmd;
    c->cur_cmd = cmd;
    lp->b.db = db_phys(c->db);
    lp->b.ev = (cmd->flags & CMD_READONLY) ? KEV_READ : KEV_AUTO;
    lp->b.who = c->id;
    lp->b.notouch = c->no_touch && cmd->fn != cmd_touch;
    c->track_now = tracking_wants(c, cmd);
    bool select = cmd->fn == cmd_select; /* shown with the database it selected */
    if (!select) {
        pubsub_monitor_feed(c, cmd, argc, argv, lens);
    }
    if (cmd->flags & CMD_BATCH) {
        if (keys_conflict(&lp->b, cmd, argc, argv, lens)) {
            batch_flush(&lp->bf, srv.eng, SEAL_CONFLICT);
            blocking_serve(lp); /* a key the flush wrote: its waiters first */
            /* the flush may have answered c's earlier commands (the batch in
             * flight): those replies are in order already, only what this
             * command writes may have to wait */
            before = c->out.len;
        }
        uint64_t pend_before = lp->b.seq;
        cmd->fn(c, argc, argv, lens);
        if (lp->b.seq == pend_before) {
            /* it replied at once (an argument error) */
            cmd_stat_call(&lp->st.cmds[cmd_idx(cmd)], 0, srv.cfg.latency_tracking);
            reply_in_order(c, before);
        }
        c->cur_cmd = NULL;
        return;
    }
    /* Commands that read the keyspace (CMD_EXCL) see every earlier batch,
     * and run alone; ones that change how replies render (CMD_DRAIN) wait
     * for the replies before them. The rest only answer, in order. */
    if (cmd->flags & (CMD_EXCL | CMD_DRAIN)) {
        batch_flush(&lp->bf, srv.eng, SEAL_DRAIN);
        blocking_serve(lp);
        before = c->out.len; /* as above */
    }
    uint64_t t0 = cudis_mono_ns();
    bool lock = (cmd->flags & CMD_EXCL) && !lp->exec_locked;
    if (lock) {
        pthread_rwlock_wrlock(&srv.eng_lock);
    }
    uint64_t pend_before = lp->b.seq;
    bool outer = lp->running == NULL; /* not a command EXEC or a script runs */
    if (outer) {
        lp->running = c;
    }
    cmd->fn(c, argc, argv, lens);
    if (lock) {
        pthread_rwlock_unlock(&srv.eng_lock);
    }
    if (lp->b.seq == pend_before) {
        reply_in_order(c, before);
    }
    if (c->track_now) {
        tracking_remember_argv(c, cmd, argc, argv, lens);
    }
    if (outer) {
        lp->running = NULL;
        tracking_after_command(c);
        blocking_serve(lp); /* what the command wrote (Redis: after each command) */
    }
    uint64_t usec = (cudis_mono_ns() - t0) / 1000;
    if (select) {
        pubsub_monitor_feed(c, cmd, argc, argv, lens);
    }
    cmd_stat_call(&lp->st.cmds[cmd_idx(cmd)], usec, srv.cfg.latency_tracking);
    if (strcmp(cmd->name, "exec") != 0) { /* its commands are logged one by one */
        observe_call(c, cmd, argc, argv, lens, usec);
    }
    c->cur_cmd = NULL;
}
