/*
 * cmd_admin.c - connection and server commands (PING ECHO QUIT HELLO AUTH
 * SELECT CLIENT CONFIG COMMAND INFO TIME SHUTDOWN MEMORY), the command
 * table that drives dispatch, arity/auth checks and COMMAND output, and
 * the dispatcher itself.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "cudis_time.h"
#include "server_internal.h"

#define H(name) void name(conn *c, int argc, char **argv, uint32_t *lens)

/* ------------------------------------------------------------------------
 * Connection commands
 * ---------------------------------------------------------------------- */

H(cmd_ping)
{
    if (argc > 2) {
        conn_errorf(c, "ERR wrong number of arguments for '%s' command", cmd_fullname(c->cur_cmd));
        return;
    }
    if (c->proto == 2 && pubsub_subscribed(c)) { /* subscribed mode: ["pong", message] */
        resp_array(&c->out, 2);
        resp_bulks(&c->out, "pong");
        resp_bulk(&c->out, argc == 2 ? argv[1] : "", argc == 2 ? lens[1] : 0);
    } else if (argc == 2) {
        resp_bulk(&c->out, argv[1], lens[1]);
    } else {
        sbuf_add(&c->out, "+PONG\r\n", 7);
    }
}

H(cmd_echo)
{
    (void)argc;
    resp_bulk(&c->out, argv[1], lens[1]);
}

H(cmd_quit)
{
    UNUSED3;
    reply_ok(c);
    c->flags |= CONN_CLOSE_AFTER_REPLY;
}

H(cmd_auth)
{
    if (argc > 3) {
        conn_error(c, "ERR syntax error");
        return;
    }
    if (argc == 2 && acl_default_open()) {
        conn_error(c, "ERR AUTH <password> called without any password configured for the "
                      "default user. Are you sure your configuration is correct?");
        return;
    }
    bool ok = argc == 2 ? acl_authenticate(c, "default", 7, argv[1], lens[1], argv[0], lens[0])
                        : acl_authenticate(c, argv[1], lens[1], argv[2], lens[2], argv[0], lens[0]);
    if (!ok) {
        conn_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
        return;
    }
    reply_ok(c);
}

static bool valid_name(const char *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (s[i] < '!' || s[i] > '~') {
            return false;
        }
    }
    return true;
}

/* Names are read by CLIENT LIST from other loops under the owner's lock. */
static void set_str(conn *c, char **dst, const char *s, uint32_t n)
{
    char *v = n > 0 ? strndup(s, n) : NULL;
    pthread_mutex_lock(&c->lp->lock);
    char *old = *dst;
    *dst = v;
    pthread_mutex_unlock(&c->lp->lock);
    free(old);
}

H(cmd_hello)
{
    long long ver = 0;
    int j = 1;
    if (argc >= 2) {
        if (!util_str2ll(argv[1], lens[1], &ver)) {
            conn_error(c, "ERR Protocol version is not an integer or out of range");
            return;
        }
        j = 2;
        if (ver < 2 || ver > 3) {
            conn_error(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    int user = -1, name = -1;
    for (; j < argc; j++) {
        int more = argc - 1 - j;
        if (util_eq(argv[j], lens[j], "auth") && more >= 2) {
            user = j + 1;
            j += 2;
        } else if (util_eq(argv[j], lens[j], "setname") && more >= 1) {
            name = j + 1;
            if (!valid_name(argv[name], lens[name])) {
                conn_error(c, "ERR Client names cannot contain spaces, newlines or special "
                              "characters.");
                return;
            }
            j++;
        } else {
            conn_errorf(c, "ERR Syntax error in HELLO option '%.*s'", (int)lens[j], argv[j]);
            return;
        }
    }
    if (user >= 0) {
        if (!acl_authenticate(c, argv[user], lens[user], argv[user + 1], lens[user + 1], argv[0],
                              lens[0])) {
            conn_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
            return;
        }
    }
    if (conn_auth_required(c)) {
        conn_error(c, "NOAUTH HELLO must be called with the client already authenticated, "
                      "otherwise the HELLO AUTH <user> <pass> option can be used to "
                      "authenticate the client and select the RESP protocol version at the same "
                      "time");
        return;
    }
    if (name >= 0) {
        set_str(c, &c->name, argv[name], lens[name]);
    }
    if (ver) {
        c->proto = (int)ver;
    }
    sbuf *o = &c->out;
    resp_map(o, 7, c->proto);
    resp_bulks(o, "server");
    resp_bulks(o, "redis");
    resp_bulks(o, "version");
    resp_bulks(o, REDIS_COMPAT_VERSION);
    resp_bulks(o, "proto");
    resp_int(o, c->proto);
    resp_bulks(o, "id");
    resp_int(o, (long long)c->id);
    resp_bulks(o, "mode");
    resp_bulks(o, "standalone");
    resp_bulks(o, "role");
    resp_bulks(o, "master");
    resp_bulks(o, "modules");
    resp_array(o, 0);
}

H(cmd_select)
{
    (void)argc;
    long long id;
    if (!util_str2ll(argv[1], lens[1], &id) || id < INT32_MIN || id > INT32_MAX) {
        conn_error(c, "ERR value is not an integer or out of range");
        return;
    }
    if (srv.cfg.cluster_enabled && id != 0) {
        conn_error(c, "ERR SELECT is not allowed in cluster mode");
        return;
    }
    if (id < 0 || id >= srv.cfg.databases) {
        conn_error(c, "ERR DB index is out of range");
        return;
    }
    c->db = (int)id;
    reply_ok(c);
}

H(cmd_time)
{
    UNUSED3;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    resp_array(&c->out, 2);
    resp_bulk_ll(&c->out, tv.tv_sec);
    resp_bulk_ll(&c->out, tv.tv_usec);
}

H(cmd_info)
{
    sbuf s = {0};
    info_build(&s, argc - 1, argv + 1, lens + 1);
    resp_verbatim(&c->out, s.p ? s.p : "", s.len, c->proto);
    sbuf_free(&s);
}

H(cmd_shutdown)
{
    bool abort_ = false, save = false, nosave = false;
    for (int j = 1; j < argc; j++) {
        if (util_eq(argv[j], lens[j], "nosave")) {
            nosave = true;
            continue;
        }
        if (util_eq(argv[j], lens[j], "save")) {
            save = true;
            continue;
        }
        if (util_eq(argv[j], lens[j], "now") || util_eq(argv[j], lens[j], "force")) {
            continue;
        }
        if (util_eq(argv[j], lens[j], "abort")) {
            abort_ = true;
            continue;
        }
        conn_error(c, "ERR syntax error");
        return;
    }
    if (abort_) {
        conn_error(c, "ERR No shutdown in progress.");
        return;
    }
    if (save && nosave) {
        conn_error(c, "ERR syntax error");
        return;
    }
    if (rdb_loading()) { /* as Redis: a dataset half loaded is never saved */
        save = false;
        nosave = true;
    }
    if (rdb_shutdown_save(c->lp, save, nosave) != 0) {
        conn_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    log_msg(LL_WARNING, "User requested shutdown (SHUTDOWN from id=%llu addr=%s)",
            (unsigned long long)c->id, c->addr);
    conn_close(c, NULL);
    server_request_shutdown();
}

H(cmd_role)
{
    UNUSED3;
    resp_array(&c->out, 3);
    resp_bulks(&c->out, "master");
    resp_int(&c->out, 0);
    resp_array(&c->out, 0);
}

/* Now plus ms milliseconds, without overflow (a huge timeout is for ever). */
static int64_t deadline_after(long long ms)
{
    int64_t now = cudis_now_ms();
    return ms > INT64_MAX - now ? INT64_MAX : now + ms;
}

/* A timeout argument (WAIT, CLIENT PAUSE): replies the error when not. */
static bool arg_timeout(conn *c, const char *s, uint32_t len, long long *out)
{
    if (!util_str2ll(s, len, out)) {
        conn_error(c, "ERR timeout is not an integer or out of range");
        return false;
    }
    if (*out < 0) {
        conn_error(c, "ERR timeout is negative");
        return false;
    }
    return true;
}

H(cmd_wait)
{
    (void)argc;
    long long n, t;
    if (!arg_ll(c, argv[1], lens[1], &n)) {
        return;
    }
    if (!arg_timeout(c, argv[2], lens[2], &t)) {
        return;
    }
    /* no replica ever acknowledges: asked for none (or inside EXEC), 0 at
     * once; else 0 when the timeout ends (never, with 0) or CLIENT UNBLOCK */
    if (n <= 0 || c->in_exec || (c->flags & CONN_FAKE)) {
        resp_int(&c->out, 0);
        return;
    }
    clients_block(c, t == 0 ? INT64_MAX : deadline_after(t));
}

H(cmd_swapdb)
{
    (void)argc;
    if (srv.cfg.cluster_enabled) {
        conn_error(c, "ERR SWAPDB is not allowed in cluster mode");
        return;
    }
    long long a, b;
    if (!util_str2ll(argv[1], lens[1], &a) || a < INT32_MIN || a > INT32_MAX) {
        conn_error(c, "ERR invalid first DB index");
        return;
    }
    if (!util_str2ll(argv[2], lens[2], &b) || b < INT32_MIN || b > INT32_MAX) {
        conn_error(c, "ERR invalid second DB index");
        return;
    }
    if (a < 0 || a >= srv.cfg.databases || b < 0 || b >= srv.cfg.databases) {
        conn_error(c, "ERR DB index is out of range");
        return;
    }
    if (a != b) {
        uint8_t x = db_phys((int)a), y = db_phys((int)b);
        watch_swapdb(c, x, y);
        blocking_swapdb(c->lp, x, y);
        atomic_store(&srv.db_map[a], y);
        atomic_store(&srv.db_map[b], x);
    }
    reply_ok(c);
}

H(cmd_reset)
{
    UNUSED3;
    multi_discard(c); /* and UNWATCH */
    pubsub_unsubscribe_all(c);
    pubsub_monitor_stop(c);
    tracking_disable(c);
    c->reply_off = c->reply_skip = c->reply_skip_next = false;
    c->silent = false; /* RESET answers (NO-EVICT and NO-TOUCH stay, as in Redis 7.0) */
    c->proto = 2;
    c->db = 0;
    set_str(c, &c->name, NULL, 0);
    acl_user *old = c->user, *def = acl_default_user();
    pthread_mutex_lock(&c->lp->lock); /* CLIENT LIST reads c->user */
    c->user = def;
    pthread_mutex_unlock(&c->lp->lock);
    acl_unref(old);
    c->authed = acl_default_open();
    resp_status(&c->out, "RESET");
}

void help_reply(conn *c, const char *name, const char *const *lines)
{
    int n = 0;
    while (lines[n]) {
        n++;
    }
    resp_array(&c->out, n + 1);
    char first[128];
    snprintf(first, sizeof(first), "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
             name);
    resp_status(&c->out, first);
    for (int i = 0; i < n; i++) {
        resp_status(&c->out, lines[i]);
    }
}

/* ------------------------------------------------------------------------
 * CLIENT
 * ---------------------------------------------------------------------- */

H(cmd_client_id)
{
    UNUSED3;
    resp_int(&c->out, (long long)c->id);
}

H(cmd_client_getname)
{
    UNUSED3;
    if (c->name) {
        resp_bulks(&c->out, c->name);
    } else {
        resp_null(&c->out, c->proto);
    }
}

H(cmd_client_setname)
{
    (void)argc;
    if (!valid_name(argv[2], lens[2])) {
        conn_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
        return;
    }
    set_str(c, &c->name, argv[2], lens[2]);
    reply_ok(c);
}

H(cmd_client_setinfo)
{
    (void)argc;
    bool lib = util_eq(argv[2], lens[2], "lib-name");
    if (!lib && !util_eq(argv[2], lens[2], "lib-ver")) {
        conn_errorf(c, "ERR Unrecognized option '%.*s'", (int)lens[2], argv[2]);
        return;
    }
    if (!valid_name(argv[3], lens[3])) {
        conn_errorf(c, "ERR %s cannot contain spaces, newlines or special characters.",
                    lib ? "lib-name" : "lib-ver");
        return;
    }
    set_str(c, lib ? &c->lib_name : &c->lib_ver, argv[3], lens[3]);
    reply_ok(c);
}

H(cmd_client_list)
{
    long id = -1;
    sbuf s = {0};
    for (int j = 2; j < argc; j++) {
        if (util_eq(argv[j], lens[j], "type") && j + 1 < argc) {
            j++;
            if (!util_eq(argv[j], lens[j], "normal") && !util_eq(argv[j], lens[j], "master") &&
                !util_eq(argv[j], lens[j], "replica") && !util_eq(argv[j], lens[j], "slave") &&
                !util_eq(argv[j], lens[j], "pubsub")) {
                conn_errorf(c, "ERR Unknown client type '%.*s'", (int)lens[j], argv[j]);
                return;
            }
            if (!util_eq(argv[j], lens[j], "normal")) {
                id = -2; /* no client of the other types */
            }
        } else if (util_eq(argv[j], lens[j], "id") && j + 1 < argc) {
            long long v;
            for (j = j + 1; j < argc; j++) {
                if (!util_str2ll(argv[j], lens[j], &v) || v <= 0) {
                    conn_error(c, "ERR Invalid client ID");
                    sbuf_free(&s);
                    return;
                }
                server_client_list(&s, c->lp, NULL, (long)v);
            }
            resp_verbatim(&c->out, s.p ? s.p : "", s.len, c->proto);
            sbuf_free(&s);
            return;
        } else {
            conn_error(c, "ERR syntax error");
            return;
        }
    }
    if (id != -2) {
        server_client_list(&s, c->lp, NULL, -1);
    }
    resp_verbatim(&c->out, s.p ? s.p : "", s.len, c->proto);
    sbuf_free(&s);
}

/* CLIENT REPLY ON|OFF|SKIP: OFF drops the replies until ON; SKIP drops the
 * next command's. Neither of them answers; pushes still go out. */
H(cmd_client_reply)
{
    (void)argc;
    if (util_eq(argv[2], lens[2], "on")) {
        c->reply_off = c->reply_skip = c->reply_skip_next = false;
        c->silent = false; /* ON itself answers */
        reply_ok(c);
    } else if (util_eq(argv[2], lens[2], "off")) {
        c->reply_off = true;
        c->silent = true;
    } else if (util_eq(argv[2], lens[2], "skip")) {
        if (!c->reply_off) {
            c->reply_skip_next = true;
        }
        c->silent = true;
    } else {
        conn_error(c, "ERR syntax error");
    }
}

static bool arg_onoff(conn *c, const char *s, uint32_t len, bool *out)
{
    if (util_eq(s, len, "on")) {
        *out = true;
    } else if (util_eq(s, len, "off")) {
        *out = false;
    } else {
        conn_error(c, "ERR syntax error");
        return false;
    }
    return true;
}

/* CLIENT NO-EVICT: recorded and shown (flag e); cudis never evicts
 * clients (there is no maxmemory-clients), so every client is safe. */
H(cmd_client_no_evict)
{
    (void)argc;
    if (arg_onoff(c, argv[2], lens[2], &c->no_evict)) {
        reply_ok(c);
    }
}

/* CLIENT NO-TOUCH (Redis 7.2): this client's reads leave the keys'
 * recency as it was (TOUCH still touches). */
H(cmd_client_no_touch)
{
    (void)argc;
    if (arg_onoff(c, argv[2], lens[2], &c->no_touch)) {
        reply_ok(c);
    }
}

/* CLIENT UNBLOCK: a client blocked in WAIT gets 0 (TIMEOUT) or the
 * UNBLOCKED error; 1 when there was one. */
H(cmd_client_unblock)
{
    long long id;
    if (!arg_ll(c, argv[2], lens[2], &id)) {
        return;
    }
    if (argc == 4 && !util_eq(argv[3], lens[3], "timeout") && !util_eq(argv[3], lens[3], "error")) {
        conn_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
        return;
    }
    if (argc > 4) {
        conn_error(c, "ERR syntax error");
        return;
    }
    resp_int(&c->out,
             clients_unblock(c, (uint64_t)id, argc == 4 && util_eq(argv[3], lens[3], "error")));
}

H(cmd_client_pause)
{
    long long ms;
    if (!arg_timeout(c, argv[2], lens[2], &ms)) {
        return;
    }
    bool all = true;
    if (argc == 4) {
        if (util_eq(argv[3], lens[3], "write")) {
            all = false;
        } else if (!util_eq(argv[3], lens[3], "all")) {
            conn_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    } else if (argc > 4) {
        conn_error(c, "ERR syntax error");
        return;
    }
    clients_pause(deadline_after(ms), all);
    reply_ok(c);
}

H(cmd_client_unpause)
{
    UNUSED3;
    clients_unpause();
    reply_ok(c);
}

H(cmd_client_info)
{
    UNUSED3;
    sbuf s = {0};
    server_client_list(&s, c->lp, c, -1);
    resp_verbatim(&c->out, s.p, s.len, c->proto);
    sbuf_free(&s);
}

H(cmd_client_kill)
{
    if (argc == 3) {
        char addr[128];
        snprintf(addr, sizeof(addr), "%.*s", (int)lens[2], argv[2]);
        if (server_client_kill(c, addr, NULL, 0, false, NULL) == 0) {
            conn_error(c, "ERR No such client");
            return;
        }
        reply_ok(c);
        return;
    }
    char addr[128] = "", laddr[128] = "";
    uint64_t id = 0;
    bool skipme = true, none = false;
    acl_user *user = NULL; /* a reference while the filters are read */
    if ((argc - 2) % 2 != 0) {
        conn_error(c, "ERR syntax error");
        return;
    }
    int n = 0;
    for (int j = 2; j + 1 < argc; j += 2) {
        const char *v = argv[j + 1];
        uint32_t vl = lens[j + 1];
        if (util_eq(argv[j], lens[j], "id")) {
            long long x;
            if (!util_str2ll(v, vl, &x) || x <= 0) {
                conn_error(c, "ERR client-id should be greater than 0");
                goto out;
            }
            id = (uint64_t)x;
        } else if (util_eq(argv[j], lens[j], "addr")) {
            snprintf(addr, sizeof(addr), "%.*s", (int)vl, v);
        } else if (util_eq(argv[j], lens[j], "laddr")) {
            snprintf(laddr, sizeof(laddr), "%.*s", (int)vl, v);
        } else if (util_eq(argv[j], lens[j], "type")) {
            if (!util_eq(v, vl, "normal")) {
                if (util_eq(v, vl, "master") || util_eq(v, vl, "replica") ||
                    util_eq(v, vl, "slave") || util_eq(v, vl, "pubsub")) {
                    none = true;
                } else {
                    conn_errorf(c, "ERR Unknown client type '%.*s'", (int)vl, v);
                    goto out;
                }
            }
        } else if (util_eq(argv[j], lens[j], "user")) {
            acl_unref(user);
            user = acl_find_user(c, v, vl);
            if (user == NULL) {
                conn_errorf(c, "ERR No such user '%.*s'", (int)vl, v);
                goto out;
            }
        } else if (util_eq(argv[j], lens[j], "skipme")) {
            if (util_eq(v, vl, "yes")) {
                skipme = true;
            } else if (util_eq(v, vl, "no")) {
                skipme = false;
            } else {
                conn_error(c, "ERR syntax error");
                goto out;
            }
        } else {
            conn_error(c, "ERR syntax error");
            goto out;
        }
    }
    n = none ? 0
             : server_client_kill(c, addr[0] ? addr : NULL, laddr[0] ? laddr : NULL, id, skipme,
                                  user);
    resp_int(&c->out, n);
out:
    acl_unref(user);
}

H(cmd_client_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "CACHING (YES|NO)",
        "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        "GETREDIR",
        "    Return the client ID we are redirecting to when tracking is enabled.",
        "ID",
        "    Return the ID of the current connection.",
        "GETNAME",
        "    Return the name of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are: ID, ADDR, LADDR, TYPE, USER, SKIPME.",
        "LIST [TYPE (NORMAL|MASTER|REPLICA|PUBSUB)] [ID <id> [...]]",
        "    Return information about client connections.",
        "SETINFO <option> <value>",
        "    Set LIB-NAME or LIB-VER of the current connection.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
        "         [OPTIN] [OPTOUT] [NOLOOP]",
        "    Control server assisted client side caching.",
        "TRACKINGINFO",
        "    Report tracking status for the current connection.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        "NO-TOUCH (ON|OFF)",
        "    Will not touch LRU/LFU stats when this mode is on.",
        "HELP",
        "    Prints this help.",
        NULL};
    help_reply(c, "CLIENT", lines);
}

/* ------------------------------------------------------------------------
 * CONFIG
 * ---------------------------------------------------------------------- */

H(cmd_config_get)
{
    bool *seen = xcalloc(config_table_len, sizeof(bool));
    sbuf body = {0};
    long n = 0;
    for (int j = 2; j < argc; j++) {
        for (size_t i = 0; i < config_table_len; i++) {
            const config_option *o = &config_table[i];
            if (seen[i] || !util_glob_match(argv[j], lens[j], o->name, strlen(o->name), true)) {
                continue;
            }
            seen[i] = true;
            resp_bulks(&body, o->name);
            sbuf v = {0};
            config_get(&srv.cfg, o, &v);
            resp_bulk(&body, v.p ? v.p : "", v.len);
            sbuf_free(&v);
            n++;
        }
    }
    free(seen);
    resp_map(&c->out, n, c->proto);
    sbuf_add(&c->out, body.p, body.len);
    sbuf_free(&body);
}

/* What an option set at runtime needs beyond its field: false with why
 * when the server cannot do it (the caller puts the old value back). */
static bool apply_runtime(const config_option *o, char *err, size_t errlen)
{
    if (!strcmp(o->name, "requirepass")) {
        acl_set_requirepass(srv.cfg.requirepass);
        return true;
    }
    if (!strcmp(o->name, "tls-auth-clients")) {
        tls_auth_update(); /* for connections accepted from now on */
        return true;
    }
    if (!strcmp(o->name, "maxclients")) {
        return server_fd_room(srv.cfg.maxclients, err, errlen);
    }
    if (!strcmp(o->name, "maxmemory")) {
        uint64_t in_force = 0;
        int rc = engine_set_memory(srv.eng, (uint64_t)srv.cfg.maxmemory, &in_force);
        if (rc != CUDIS_OK) {
            log_msg(LL_NOTICE,
                    "maxmemory %lld: the %s engine's budget is fixed until the next start",
                    srv.cfg.maxmemory, engine_name(srv.eng));
        } else if (in_force != (uint64_t)srv.cfg.maxmemory) {
            /* above its block, or below what its index alone takes */
            log_msg(LL_NOTICE,
                    "maxmemory %lld: the %s engine holds %llu bytes until the next start",
                    srv.cfg.maxmemory, engine_name(srv.eng), (unsigned long long)in_force);
        }
        return true;
    }
    if (!strcmp(o->name, "maxmemory-policy") || !strcmp(o->name, "lfu-log-factor") ||
        !strcmp(o->name, "lfu-decay-time")) {
        uint32_t code;
        if (server_policy(srv.cfg.maxmemory_policy, engine_name(srv.eng), &code, err, errlen) !=
            0) {
            return false;
        }
        int rc = engine_set_policy(srv.eng, code, (uint32_t)srv.cfg.lfu_log_factor,
                                   (uint32_t)srv.cfg.lfu_decay_time);
        if (rc != CUDIS_OK) {
            snprintf(err, errlen, "the %s engine cannot evict by %s: %s", engine_name(srv.eng),
                     srv.cfg.maxmemory_policy, cudis_strerror(rc));
            return false;
        }
    }
    return true;
}

/* The tls-* options whose change rebuilds the TLS context (Redis's
 * applyTlsCfg): once, after every option of the command is set, so that a
 * certificate and its key change together. */
static bool tls_rebuilds(const config_option *o)
{
    return !strncmp(o->name, "tls-", 4) && strcmp(o->name, "tls-auth-clients") != 0;
}

H(cmd_config_set)
{
    if ((argc - 2) % 2 != 0) {
        conn_errorf(c, "ERR wrong number of arguments for '%s' command", cmd_fullname(c->cur_cmd));
        return;
    }
    int npairs = (argc - 2) / 2;
    const config_option **opts = xcalloc((size_t)npairs, sizeof(*opts));
    char **old = xcalloc((size_t)npairs, sizeof(char *));
    char err[256];
    int done = 0;
    bool failed = false;
    for (int k = 0; k < npairs && !failed; k++) {
        char name[128];
        snprintf(name, sizeof(name), "%.*s", (int)lens[2 + 2 * k], argv[2 + 2 * k]);
        const config_option *o = config_find(name);
        if (o == NULL) {
            conn_errorf(c, "ERR Unknown option or number of arguments for CONFIG SET - '%s'", name);
            failed = true;
            break;
        }
        for (int q = 0; q < k; q++) {
            if (opts[q] == o) {
                conn_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - "
                               "duplicate parameter", name);
                failed = true;
            }
        }
        if (failed) {
            break;
        }
        opts[k] = o;
        if (!o->runtime) {
            char why[64];
            (void)config_set(&srv.cfg, o, "", true, why, sizeof(why)); /* says which kind */
            conn_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", name,
                        why);
            failed = true;
            break;
        }
    }
    for (int k = 0; k < npairs && !failed; k++) {
        sbuf v = {0};
        config_get(&srv.cfg, opts[k], &v);
        sbuf_add(&v, "", 1);
        old[k] = v.p;
        char val[4096];
        snprintf(val, sizeof(val), "%.*s", (int)lens[3 + 2 * k], argv[3 + 2 * k]);
        bool ok = config_set(&srv.cfg, opts[k], val, true, err, sizeof(err)) == 0;
        if (ok && !tls_rebuilds(opts[k]) && !apply_runtime(opts[k], err, sizeof(err))) {
            char e2[256]; /* the server cannot do it: the old value back */
            config_set(&srv.cfg, opts[k], old[k], false, e2, sizeof(e2));
            apply_runtime(opts[k], e2, sizeof(e2));
            ok = false;
        }
        if (!ok) {
            conn_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s",
                        opts[k]->name, err);
            failed = true;
            break;
        }
        done++;
    }
    for (int k = 0; k < npairs && !failed; k++) {
        if (tls_rebuilds(opts[k])) {
            if (tls_reconfigure(err, sizeof(err)) != 0) { /* the old context stays */
                log_msg(LL_WARNING,
                        "Failed applying new configuration. Possibly related to new %s setting. "
                        "Restoring previous settings.",
                        opts[k]->name);
                conn_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s",
                            opts[k]->name, err);
                failed = true;
            }
            break;
        }
    }
    if (failed) {
        for (int k = done - 1; k >= 0; k--) {
            config_set(&srv.cfg, opts[k], old[k] ? old[k] : "", false, err, sizeof(err));
        }
        tls_auth_update();
    } else {
        for (int k = 0; k < npairs; k++) {
            log_msg(LL_NOTICE, "CONFIG SET %s by client id=%llu addr=%s", opts[k]->name,
                    (unsigned long long)c->id, c->addr);
        }
        reply_ok(c);
    }
    for (int k = 0; k < npairs; k++) {
        free(old[k]);
    }
    free(old);
    free(opts);
}

H(cmd_config_resetstat)
{
    UNUSED3;
    stats_reset_all();
    reply_ok(c);
}

H(cmd_config_rewrite)
{
    UNUSED3;
    if (srv.config_file == NULL) {
        conn_error(c, "ERR The server is running without a config file");
        return;
    }
    conn_error(c, "ERR CONFIG REWRITE is not supported by cudis; edit the config file");
}

H(cmd_config_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Not supported (the configuration file is never rewritten).",
        "HELP",
        "    Prints this help.",
        NULL};
    help_reply(c, "CONFIG", lines);
}

/* ------------------------------------------------------------------------
 * COMMAND
 * ---------------------------------------------------------------------- */

/* Redis's no_mandatory_keys: the scripts, which may name no key. */
static bool no_mandatory_keys(const command *cmd)
{
    return cmd->fn == cmd_eval || cmd->fn == cmd_evalsha || cmd->fn == cmd_eval_ro ||
           cmd->fn == cmd_evalsha_ro || cmd->fn == cmd_fcall || cmd->fn == cmd_fcall_ro;
}

/* The first key, last key and step COMMAND INFO reports, and whether the
 * command has keys they do not find (movablekeys): from the key specs,
 * as Redis's populateCommandLegacyRangeSpec derives them (the one range
 * spec of an index; else the run of consecutive step-1 range specs of
 * indexes, any other spec making the keys movable). A command Redis does
 * not have reports the table's own. */
typedef struct legacy_range {
    int first, last, step;
    bool movable;
} legacy_range;

static legacy_range legacy_of(const command *cmd)
{
    const acl_spec *sp = acl_cmd_spec(cmd);
    legacy_range r = {0, 0, 0, false};
    if (sp == NULL) {
        r.first = cmd->first_key;
        r.last = cmd->last_key;
        r.step = cmd->step;
        return r;
    }
    if (sp->nspecs == 1 && sp->ks[0].bs == KS_BS_INDEX && sp->ks[0].fk == KS_FK_RANGE) {
        const acl_keyspec *ks = &sp->ks[0];
        r.first = ks->index;
        r.last = ks->a >= 0 ? ks->index + ks->a : ks->a;
        r.step = ks->b;
        r.movable = (ks->flags & KS_INCOMPLETE) != 0;
        return r;
    }
    int first = INT_MAX, last = 0, prev = 0;
    for (int j = 0; j < sp->nspecs; j++) {
        const acl_keyspec *ks = &sp->ks[j];
        if (ks->bs != KS_BS_INDEX || ks->fk != KS_FK_RANGE || ks->b != 1 ||
            (prev != 0 && prev != ks->index - 1)) {
            r.movable = true;
            continue;
        }
        r.movable = r.movable || (ks->flags & KS_INCOMPLETE);
        first = ks->index < first ? ks->index : first;
        int end = ks->a >= 0 ? ks->index + ks->a : ks->a;
        last = (unsigned)end > (unsigned)last ? end : last; /* a negative one (from the end) wins */
        prev = last;
    }
    if (first == INT_MAX) {
        r.movable = sp->nspecs > 0;
        return r;
    }
    r.first = first;
    r.last = last;
    r.step = 1;
    return r;
}

/* Command flags in Redis's order (addReplyFlagsForCommand). */
static void flags_reply(sbuf *o, const command *cmd, int proto)
{
    const char *names[24];
    int n = 0;
    uint32_t f = cmd->flags;
    if (f & CMD_WRITE) {
        names[n++] = "write";
    }
    if (f & CMD_READONLY) {
        names[n++] = "readonly";
    }
    if (f & CMD_DENYOOM) {
        names[n++] = "denyoom";
    }
    if (f & CMD_ADMIN) {
        names[n++] = "admin";
    }
    if (acl_cmd_cats(cmd) & ACLC_PUBSUB) { /* Redis's pubsub flag (cluster clients route by it) */
        names[n++] = "pubsub";
    }
    if (f & CMD_NOSCRIPT) {
        names[n++] = "noscript";
    }
    if (f & CMD_BLOCKING) {
        names[n++] = "blocking";
    }
    if (f & CMD_LOADING) {
        names[n++] = "loading";
    }
    if (f & CMD_STALE) {
        names[n++] = "stale";
    }
    if (f & CMD_SKIP_MONITOR) {
        names[n++] = "skip_monitor";
    }
    if (f & CMD_SKIP_SLOWLOG) {
        names[n++] = "skip_slowlog";
    }
    if (f & CMD_ASKING) {
        names[n++] = "asking";
    }
    if (f & CMD_FAST) {
        names[n++] = "fast";
    }
    if (f & CMD_NOAUTH) {
        names[n++] = "no_auth";
    }
    if (no_mandatory_keys(cmd)) {
        names[n++] = "no_mandatory_keys";
    }
    if (f & CMD_NO_ASYNC_LOADING) {
        names[n++] = "no_async_loading";
    }
    if (f & CMD_NOMULTI) {
        names[n++] = "no_multi";
    }
    if (legacy_of(cmd).movable) {
        names[n++] = "movablekeys";
    }
    if (f & CMD_ALLOW_BUSY) {
        names[n++] = "allow_busy";
    }
    resp_set(o, n, proto);
    for (int i = 0; i < n; i++) {
        resp_status(o, names[i]);
    }
}

static void acl_reply(sbuf *o, const command *cmd, int proto)
{
    uint32_t cats = acl_cmd_cats(cmd);
    resp_set(o, __builtin_popcount(cats), proto);
    for (int i = 0; i < ACLC_COUNT; i++) {
        if (cats & (1u << i)) {
            char name[32];
            snprintf(name, sizeof(name), "@%s", acl_cat_name(i));
            resp_status(o, name);
        }
    }
}

/* Key spec flags in Redis's order (addReplyFlagsForKeyArgs). */
static void keyflags_reply(sbuf *o, uint16_t f, int proto)
{
    static const struct {
        uint16_t bit;
        const char *name;
    } names[] = {{KS_RO, "RO"},
                 {KS_RW, "RW"},
                 {KS_OW, "OW"},
                 {KS_RM, "RM"},
                 {KS_ACCESS, "access"},
                 {KS_UPDATE, "update"},
                 {KS_INSERT, "insert"},
                 {KS_DELETE, "delete"},
                 {KS_NOT_KEY, "not_key"},
                 {KS_INCOMPLETE, "incomplete"},
                 {KS_VARIABLE_FLAGS, "variable_flags"}};
    int n = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        n += (f & names[i].bit) != 0;
    }
    resp_set(o, n, proto);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (f & names[i].bit) {
            resp_status(o, names[i].name);
        }
    }
}

static void kv_int(sbuf *o, const char *k, long long v)
{
    resp_bulks(o, k);
    resp_int(o, v);
}

/* A key spec part's type and the head of its spec, a map of n fields. */
static void spec_part(sbuf *o, const char *type, int n, int proto)
{
    resp_bulks(o, "type");
    resp_bulks(o, type);
    resp_bulks(o, "spec");
    resp_map(o, n, proto);
}

/* One key spec as COMMAND INFO's tenth element lists it (Redis's
 * addReplyCommandKeySpecs, less the notes, which cudis does not keep). */
static void keyspec_reply(sbuf *o, const acl_keyspec *ks, int proto)
{
    resp_map(o, 3, proto);
    resp_bulks(o, "flags");
    keyflags_reply(o, ks->flags, proto);
    resp_bulks(o, "begin_search");
    resp_map(o, 2, proto); /* type, spec */
    if (ks->bs == KS_BS_INDEX) {
        spec_part(o, "index", 1, proto);
        kv_int(o, "index", ks->index);
    } else if (ks->bs == KS_BS_KEYWORD) {
        spec_part(o, "keyword", 2, proto);
        resp_bulks(o, "keyword");
        resp_bulks(o, ks->keyword);
        kv_int(o, "startfrom", ks->startfrom);
    } else {
        spec_part(o, "unknown", 0, proto);
    }
    resp_bulks(o, "find_keys");
    resp_map(o, 2, proto); /* type, spec */
    if (ks->fk == KS_FK_RANGE) {
        spec_part(o, "range", 3, proto);
        kv_int(o, "lastkey", ks->a);
        kv_int(o, "keystep", ks->b);
        kv_int(o, "limit", ks->c);
    } else if (ks->fk == KS_FK_KEYNUM) {
        spec_part(o, "keynum", 3, proto);
        kv_int(o, "keynumidx", ks->a);
        kv_int(o, "firstkey", ks->b);
        kv_int(o, "keystep", ks->c);
    } else {
        spec_part(o, "unknown", 0, proto);
    }
}

static void command_info(sbuf *o, const command *cmd, int proto)
{
    legacy_range lr = legacy_of(cmd);
    resp_array(o, 10);
    resp_bulks(o, cmd_fullname(cmd));
    resp_int(o, cmd->arity);
    flags_reply(o, cmd, proto);
    resp_int(o, lr.first);
    resp_int(o, lr.last);
    resp_int(o, lr.step);
    acl_reply(o, cmd, proto);
    resp_set(o, 0, proto); /* tips */
    const acl_spec *sp = acl_cmd_spec(cmd);
    if (sp != NULL) {
        resp_array(o, sp->nspecs);
        for (int j = 0; j < sp->nspecs; j++) {
            keyspec_reply(o, &sp->ks[j], proto);
        }
    } else if (cmd->first_key > 0) { /* a command of cudis's own: its range */
        acl_keyspec ks = {
            .flags = (cmd->flags & CMD_WRITE) ? KS_RW : KS_RO,
            .bs = KS_BS_INDEX,
            .index = (int16_t)cmd->first_key,
            .fk = KS_FK_RANGE,
            .a = (int16_t)(cmd->last_key < 0 ? cmd->last_key : cmd->last_key - cmd->first_key),
            .b = (int16_t)cmd->step};
        resp_array(o, 1);
        keyspec_reply(o, &ks, proto);
    } else {
        resp_array(o, 0);
    }
    resp_array(o, cmd->nsubs);
    CMD_FOR_SUBS(s, cmd)
    {
        command_info(o, s, proto);
    }
}

static void command_docs(sbuf *o, const command *cmd, int proto)
{
    int ns = cmd->nsubs;
    resp_map(o, ns ? 5 : 4, proto);
    resp_bulks(o, "summary");
    resp_bulks(o, cmd->summary ? cmd->summary : "");
    resp_bulks(o, "since");
    resp_bulks(o, cmd->since ? cmd->since : "1.0.0");
    resp_bulks(o, "group");
    resp_bulks(o, cmd->group);
    resp_bulks(o, "complexity");
    resp_bulks(o, cmd->complexity ? cmd->complexity : "O(1)");
    if (ns) {
        resp_bulks(o, "subcommands");
        resp_map(o, ns, proto);
        CMD_FOR_SUBS(s, cmd)
        {
            resp_bulks(o, cmd_fullname(s));
            command_docs(o, s, proto);
        }
    }
}

H(cmd_command)
{
    UNUSED3;
    int n = cmd_top_count();
    resp_array(&c->out, n);
    for (int i = 0; i < n; i++) {
        command_info(&c->out, cmd_top(i), c->proto);
    }
}

H(cmd_command_count)
{
    UNUSED3;
    resp_int(&c->out, cmd_top_count());
}

static const command *lookup_full(const char *name, uint32_t len)
{
    const char *bar = memchr(name, '|', len);
    if (bar == NULL) {
        return cmd_lookup(name, len);
    }
    const command *p = cmd_lookup(name, (size_t)(bar - name));
    if (p == NULL) {
        return NULL;
    }
    return cmd_lookup_sub(p, bar + 1, len - (size_t)(bar - name) - 1);
}

H(cmd_command_info)
{
    if (argc == 2) {
        cmd_command(c, argc, argv, lens);
        return;
    }
    resp_array(&c->out, argc - 2);
    for (int j = 2; j < argc; j++) {
        const command *cmd = lookup_full(argv[j], lens[j]);
        if (cmd) {
            command_info(&c->out, cmd, c->proto);
        } else {
            resp_null(&c->out, c->proto);
        }
    }
}

H(cmd_command_docs)
{
    sbuf body = {0};
    long n = 0;
    if (argc == 2) {
        for (int i = 0; i < cmd_top_count(); i++) {
            resp_bulks(&body, cmd_fullname(cmd_top(i)));
            command_docs(&body, cmd_top(i), c->proto);
            n++;
        }
    } else {
        for (int j = 2; j < argc; j++) {
            const command *cmd = lookup_full(argv[j], lens[j]);
            if (cmd) {
                resp_bulks(&body, cmd_fullname(cmd));
                command_docs(&body, cmd, c->proto);
                n++;
            }
        }
    }
    resp_map(&c->out, n, c->proto);
    sbuf_add(&c->out, body.p, body.len);
    sbuf_free(&body);
}

H(cmd_command_list)
{
    const char *pat = NULL;
    uint32_t plen = 0;
    if (argc == 5 && util_eq(argv[2], lens[2], "filterby") && util_eq(argv[3], lens[3], "pattern")) {
        pat = argv[4];
        plen = lens[4];
    } else if (argc == 5 && util_eq(argv[2], lens[2], "filterby") &&
               (util_eq(argv[3], lens[3], "aclcat") || util_eq(argv[3], lens[3], "module"))) {
        resp_array(&c->out, 0);
        return;
    } else if (argc != 2) {
        conn_error(c, "ERR syntax error");
        return;
    }
    sbuf body = {0};
    long n = 0;
    for (int i = 0; i < cmd_top_count(); i++) {
        const command *cmd = cmd_top(i);
        if (!pat ||
            util_glob_match(pat, plen, cmd_fullname(cmd), strlen(cmd_fullname(cmd)), true)) {
            resp_bulks(&body, cmd_fullname(cmd));
            n++;
        }
        CMD_FOR_SUBS(s, cmd)
        {
            if (!pat || util_glob_match(pat, plen, cmd_fullname(s), strlen(cmd_fullname(s)), true)) {
                resp_bulks(&body, cmd_fullname(s));
                n++;
            }
        }
    }
    resp_array(&c->out, n);
    sbuf_add(&c->out, body.p, body.len);
    sbuf_free(&body);
}

/* Whether COMMAND GETKEYS has keys to find in cmd (Redis's
 * doesCommandHaveKeys: a key spec that is not not_key). */
static bool has_keys(const command *cmd)
{
    const acl_spec *sp = acl_cmd_spec(cmd);
    if (sp == NULL) {
        return cmd->first_key > 0;
    }
    for (int j = 0; j < sp->nspecs; j++) {
        if (!(sp->ks[j].flags & KS_NOT_KEY)) {
            return true;
        }
    }
    return false;
}

/* COMMAND GETKEYS / GETKEYSANDFLAGS <command> [arg ...]: the keys the
 * command line names, found as the ACL and the cluster find them (Redis's
 * getKeysSubcommandImpl, with its errors). */
static void getkeys(conn *c, int argc, char **argv, uint32_t *lens, bool with_flags)
{
    int n = argc - 2;
    char **av = argv + 2;
    uint32_t *al = lens + 2;
    const command *cmd = cmd_lookup(av[0], al[0]);
    if (cmd != NULL && cmd->nsubs > 0 && n > 1) {
        cmd = cmd_lookup_sub(cmd, av[1], al[1]);
    }
    if (cmd == NULL) {
        conn_error(c, "ERR Invalid command specified");
        return;
    }
    if (!has_keys(cmd)) {
        conn_error(c, "ERR The command has no key arguments");
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != n) || n < -cmd->arity) {
        conn_error(c, "ERR Invalid number of arguments specified for command");
        return;
    }
    acl_keyref small[ACL_KEYS_SMALL];
    acl_keyref *keys = small;
    int nk = acl_cmd_keys(cmd, n, av, al, small, &keys);
    if (nk == 0 && !no_mandatory_keys(cmd)) {
        conn_error(c, "ERR Invalid arguments specified for command");
    } else {
        resp_array(&c->out, nk);
        for (int j = 0; j < nk; j++) {
            if (with_flags) {
                resp_array(&c->out, 2);
            }
            resp_bulk(&c->out, av[keys[j].pos], al[keys[j].pos]);
            if (with_flags) {
                keyflags_reply(&c->out, keys[j].flags, c->proto);
            }
        }
    }
    if (keys != small) {
        free(keys);
    }
}

H(cmd_command_getkeys)
{
    getkeys(c, argc, argv, lens, false);
}

H(cmd_command_getkeysandflags)
{
    getkeys(c, argc, argv, lens, true);
}

H(cmd_command_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "(no subcommand)",
        "    Return details about all commands.",
        "COUNT",
        "    Return the total number of commands in this server.",
        "LIST",
        "    Return a list of all commands in this server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple commands.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple commands.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        "HELP",
        "    Prints this help.",
        NULL};
    help_reply(c, "COMMAND", lines);
}

H(cmd_pubsub_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        "HELP",
        "    Prints this help.",
        NULL};
    help_reply(c, "PUBSUB", lines);
}

H(cmd_script_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help.",
        NULL};
    help_reply(c, "SCRIPT", lines);
}

H(cmd_slowlog_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Prints this help.",
        NULL};
    help_reply(c, "SLOWLOG", lines);
}

H(cmd_latency_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the "
        "specified command names.",
        "    If no commands are specified then all histograms are replied.",
        "HELP",
        "    Prints this help.",
        NULL};
    help_reply(c, "LATENCY", lines);
}

H(cmd_object_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
        NULL};
    help_reply(c, "OBJECT", lines);
}
