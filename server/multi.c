/*
 * multi.c - transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
 *
 * Between MULTI and EXEC a command that passes dispatch's checks is copied
 * into the connection's queue and answered +QUEUED; one that does not
 * (unknown, wrong arity, NOAUTH) is answered with its error and makes EXEC
 * answer EXECABORT. EXEC runs the queue through the ordinary dispatch path
 * with nothing of another client in between: with one loop nothing else
 * runs while EXEC does, and the queued commands join the open batch like
 * any others (a key conflict seals it, as for any command); with several
 * loops EXEC first drains its loop and then holds the engine lock
 * exclusively until every queued command has run. Its reply is an array
 * of theirs (runtime errors inside, as Redis). With WATCHed keys the batch
 * is drained first and EXEC answers a null array when one changed
 * (watch.c).
 */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

void multi_queue(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens)
{
    multi_state *m = c->multi;
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 8;
        m->cmds = xrealloc(m->cmds, (size_t)m->cap * sizeof(*m->cmds));
    }
    size_t bytes = 0;
    for (int i = 0; i < argc; i++) {
        bytes += lens[i] + 1;
    }
    size_t head = (size_t)argc * (sizeof(char *) + sizeof(uint32_t));
    head = (head + 7) & ~(size_t)7;
    char *blk = xmalloc(head + bytes);
    char **av = (char **)blk;
    uint32_t *al = (uint32_t *)(blk + (size_t)argc * sizeof(char *));
    char *p = blk + head;
    for (int i = 0; i < argc; i++) {
        memcpy(p, argv[i], lens[i]);
        p[lens[i]] = '\0';
        av[i] = p;
        al[i] = lens[i];
        p += lens[i] + 1;
    }
    m->cmds[m->n++] = (multi_cmd){.cmd = cmd, .argc = argc, .argv = av, .lens = al};
    atomic_store_explicit(&c->multi_len, m->n, memory_order_relaxed);
    resp_status(&c->out, "QUEUED");
}

void multi_reject(conn *c)
{
    if (c->multi != NULL) {
        c->multi->dirty = true;
    }
}

static void multi_free(multi_state *m)
{
    if (m == NULL) {
        return;
    }
    for (int i = 0; i < m->n; i++) {
        free(m->cmds[i].argv);
    }
    free(m->cmds);
    free(m);
}

void multi_discard(conn *c)
{
    multi_free(c->multi);
    c->multi = NULL;
    atomic_store_explicit(&c->multi_len, -1, memory_order_relaxed);
    watch_clear(c);
}

void cmd_multi(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    if (c->multi != NULL) {
        conn_error(c, "ERR MULTI calls can not be nested");
        return;
    }
    c->multi = xcalloc(1, sizeof(*c->multi));
    atomic_store_explicit(&c->multi_len, 0, memory_order_relaxed);
    reply_ok(c);
}

void cmd_discard(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    if (c->multi == NULL) {
        conn_error(c, "ERR DISCARD without MULTI");
        return;
    }
    multi_discard(c);
    reply_ok(c);
}

void cmd_watch(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (c->multi != NULL) {
        conn_error(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    watch_keys(c, argc - 1, argv + 1, lens + 1);
    reply_ok(c);
}

void cmd_unwatch(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    watch_clear(c);
    reply_ok(c);
}

void cmd_exec(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    loop *lp = c->lp;
    size_t before = c->out.len;
    multi_state *m = c->multi;
    if (m == NULL) {
        conn_error(c, "ERR EXEC without MULTI");
        reply_in_order(c, before);
        return;
    }
    c->multi = NULL;
    atomic_store_explicit(&c->multi_len, -1, memory_order_relaxed);
    if (m->dirty) {
        multi_free(m);
        watch_clear(c);
        conn_error(c, "EXECABORT Transaction discarded because of previous errors.");
        reply_in_order(c, before);
        return;
    }
    /* with one loop nothing else runs meanwhile: no need to drain unless
     * the watched keys are to be read */
    bool locked = false;
    if (srv.nloops > 1 || c->nwatched > 0) {
        locked = excl_begin(lp);
    }
    bool changed = watch_changed(c);
    watch_clear(c);
    if (changed) {
        resp_null_array(&c->out, c->proto);
        reply_in_order(c, before);
    } else {
        resp_array(&c->out, m->n);
        reply_in_order(c, before);
        c->in_exec = true;
        for (int i = 0; i < m->n; i++) {
            multi_cmd *q = &m->cmds[i];
            /* the rules may have changed since it was queued (Redis checks again) */
            int pos = 0, acl = acl_check(c, q->cmd, q->argc, q->argv, q->lens, &pos);
            if (acl != ACL_OK) {
                char msg[256];
                acl_deny(c, q->cmd, acl, pos, ACL_CTX_MULTI, q->argv, q->lens, msg, sizeof(msg));
                size_t at = c->out.len;
                conn_errorf(c,
                            "NOPERM ACLs rules changed between the moment the transaction was "
                            "accumulated and the EXEC call. This command is no longer allowed for "
                            "the following reason: %s",
                            acl == ACL_DENIED_CMD ? "no permission to execute the command or "
                                                    "subcommand"
                            : acl == ACL_DENIED_KEY ? "no permission to touch the specified keys"
                                                    : "no permission to access one of the "
                                                      "channels used as arguments");
                reply_in_order(c, at);
                continue;
            }
            dispatch_run(c, q->cmd, q->argc, q->argv, q->lens);
        }
        c->in_exec = false;
    }
    excl_end(lp, locked);
    multi_free(m);
}
