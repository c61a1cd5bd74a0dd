/*
 * cmd_admin.c - connection and server commands (PING ECHO QUIT HELLO AUTH
 * SELECT CLIENT CONFIG COMMAND INFO TIME SHUTDOWN MEMORY), the command
 * table that drives dispatch, arity/auth checks and COMMAND output, and
 * the dispatcher itself.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "cudis_time.h"
#include "server_internal.h"

#define H(name) void name(conn *c, int argc, char **argv, uint32_t *lens)
H(cmd_get); H(cmd_getdel); H(cmd_strlen); H(cmd_getrange); H(cmd_mget); H(cmd_set);
H(cmd_setnx); H(cmd_setex); H(cmd_psetex); H(cmd_getset); H(cmd_getex); H(cmd_mset);
H(cmd_msetnx); H(cmd_append); H(cmd_setrange); H(cmd_incr); H(cmd_decr); H(cmd_incrby);
H(cmd_decrby); H(cmd_incrbyfloat); H(cmd_del); H(cmd_exists); H(cmd_touch); H(cmd_type);
H(cmd_expire); H(cmd_pexpire); H(cmd_expireat); H(cmd_pexpireat); H(cmd_ttl); H(cmd_pttl);
H(cmd_expiretime); H(cmd_pexpiretime); H(cmd_persist); H(cmd_memory_usage); H(cmd_rename);
H(cmd_renamenx); H(cmd_copy); H(cmd_dbsize); H(cmd_flushall); H(cmd_keys); H(cmd_scan); H(cmd_randomkey);

#define UNUSED3 (void)argc, (void)argv, (void)lens

/* ------------------------------------------------------------------------
 * Connection commands
 * ---------------------------------------------------------------------- */

static H(cmd_ping)
{
    if (argc > 2) {
        conn_errorf(c, "ERR wrong number of arguments for '%s' command", c->cur_cmd->fullname);
        return;
    }
    if (argc == 2) {
        resp_bulk(&c->out, argv[1], lens[1]);
    } else {
        sbuf_add(&c->out, "+PONG\r\n", 7);
    }
}

static H(cmd_echo)
{
    (void)argc;
    resp_bulk(&c->out, argv[1], lens[1]);
}

static H(cmd_quit)
{
    UNUSED3;
    reply_ok(c);
    c->flags |= CONN_CLOSE_AFTER_REPLY;
}

static bool check_pass(const char *user, uint32_t ulen, const char *pass, uint32_t plen)
{
    if (user && !util_eq(user, ulen, "default")) {
        return false;
    }
    const char *rp = srv.cfg.requirepass;
    if (rp == NULL || rp[0] == '\0') {
        return true; /* default user has nopass */
    }
    return strlen(rp) == plen && memcmp(rp, pass, plen) == 0;
}

static H(cmd_auth)
{
    if (argc > 3) {
        conn_error(c, "ERR syntax error");
        return;
    }
    if (argc == 2 && (srv.cfg.requirepass == NULL || srv.cfg.requirepass[0] == '\0')) {
        conn_error(c, "ERR AUTH <password> called without any password configured for the "
                      "default user. Are you sure your configuration is correct?");
        return;
    }
    bool ok = argc == 2 ? check_pass(NULL, 0, argv[1], lens[1])
                        : check_pass(argv[1], lens[1], argv[2], lens[2]);
    if (!ok) {
        log_msg(LL_VERBOSE, "Failed AUTH from client id=%llu addr=%s", (unsigned long long)c->id,
                c->addr);
        conn_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
        return;
    }
    c->authed = true;
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

static H(cmd_hello)
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
        if (!check_pass(argv[user], lens[user], argv[user + 1], lens[user + 1])) {
            conn_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
            return;
        }
        c->authed = true;
    }
    if (!c->authed) {
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

static H(cmd_select)
{
    (void)argc;
    long long id;
    if (!util_str2ll(argv[1], lens[1], &id) || id < INT32_MIN || id > INT32_MAX) {
        conn_error(c, "ERR value is not an integer or out of range");
        return;
    }
    if (id != 0) {
        conn_error(c, "ERR DB index is out of range");
        return;
    }
    reply_ok(c);
}

static H(cmd_time)
{
    UNUSED3;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    resp_array(&c->out, 2);
    resp_bulk_ll(&c->out, tv.tv_sec);
    resp_bulk_ll(&c->out, tv.tv_usec);
}

static H(cmd_info)
{
    sbuf s = {0};
    info_build(&s, argc - 1, argv + 1, lens + 1);
    resp_verbatim(&c->out, s.p ? s.p : "", s.len, c->proto);
    sbuf_free(&s);
}

static H(cmd_shutdown)
{
    bool abort_ = false;
    for (int j = 1; j < argc; j++) {
        if (util_eq(argv[j], lens[j], "nosave") || util_eq(argv[j], lens[j], "save") ||
            util_eq(argv[j], lens[j], "now") || util_eq(argv[j], lens[j], "force")) {
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
    log_msg(LL_WARNING, "User requested shutdown (SHUTDOWN from id=%llu addr=%s)",
            (unsigned long long)c->id, c->addr);
    conn_close(c, NULL);
    server_request_shutdown();
}

static H(cmd_lastsave)
{
    UNUSED3;
    resp_int(&c->out, srv.start_ms / 1000);
}

static H(cmd_role)
{
    UNUSED3;
    resp_array(&c->out, 3);
    resp_bulks(&c->out, "master");
    resp_int(&c->out, 0);
    resp_array(&c->out, 0);
}

static H(cmd_wait)
{
    (void)argc;
    long long n, t;
    if (!arg_ll(c, argv[1], lens[1], &n)) {
        return;
    }
    if (!util_str2ll(argv[2], lens[2], &t)) {
        conn_error(c, "ERR timeout is not an integer or out of range");
        return;
    }
    if (t < 0) {
        conn_error(c, "ERR timeout is negative");
        return;
    }
    resp_int(&c->out, 0);
}

static H(cmd_swapdb)
{
    (void)argc;
    long long a, b;
    if (!util_str2ll(argv[1], lens[1], &a) || a < INT32_MIN || a > INT32_MAX) {
        conn_error(c, "ERR invalid first DB index");
        return;
    }
    if (!util_str2ll(argv[2], lens[2], &b) || b < INT32_MIN || b > INT32_MAX) {
        conn_error(c, "ERR invalid second DB index");
        return;
    }
    if (a != 0 || b != 0) {
        conn_error(c, "ERR DB index is out of range");
        return;
    }
    reply_ok(c);
}

static H(cmd_reset)
{
    UNUSED3;
    c->proto = 2;
    set_str(c, &c->name, NULL, 0);
    c->authed = srv.cfg.requirepass == NULL || srv.cfg.requirepass[0] == '\0';
    resp_status(&c->out, "RESET");
}

static void help_reply(conn *c, const char *name, const char *const *lines)
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

static H(cmd_client_id)
{
    UNUSED3;
    resp_int(&c->out, (long long)c->id);
}

static H(cmd_client_getname)
{
    UNUSED3;
    if (c->name) {
        resp_bulks(&c->out, c->name);
    } else {
        resp_null(&c->out, c->proto);
    }
}

static H(cmd_client_setname)
{
    (void)argc;
    if (!valid_name(argv[2], lens[2])) {
        conn_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
        return;
    }
    set_str(c, &c->name, argv[2], lens[2]);
    reply_ok(c);
}

static H(cmd_client_setinfo)
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

static H(cmd_client_list)
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
                server_client_list(&s, NULL, (long)v);
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
        server_client_list(&s, NULL, -1);
    }
    resp_verbatim(&c->out, s.p ? s.p : "", s.len, c->proto);
    sbuf_free(&s);
}

static H(cmd_client_info)
{
    UNUSED3;
    sbuf s = {0};
    server_client_list(&s, c, -1);
    resp_verbatim(&c->out, s.p, s.len, c->proto);
    sbuf_free(&s);
}

static H(cmd_client_kill)
{
    if (argc == 3) {
        char addr[128];
        snprintf(addr, sizeof(addr), "%.*s", (int)lens[2], argv[2]);
        if (server_client_kill(c, addr, NULL, 0, false) == 0) {
            conn_error(c, "ERR No such client");
            return;
        }
        reply_ok(c);
        return;
    }
    char addr[128] = "", laddr[128] = "";
    uint64_t id = 0;
    bool skipme = true, none = false;
    if ((argc - 2) % 2 != 0) {
        conn_error(c, "ERR syntax error");
        return;
    }
    for (int j = 2; j + 1 < argc; j += 2) {
        const char *v = argv[j + 1];
        uint32_t vl = lens[j + 1];
        if (util_eq(argv[j], lens[j], "id")) {
            long long x;
            if (!util_str2ll(v, vl, &x) || x <= 0) {
                conn_error(c, "ERR client-id should be greater than 0");
                return;
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
                    return;
                }
            }
        } else if (util_eq(argv[j], lens[j], "user")) {
            if (!util_eq(v, vl, "default")) {
                conn_errorf(c, "ERR No such user '%.*s'", (int)vl, v);
                return;
            }
        } else if (util_eq(argv[j], lens[j], "skipme")) {
            if (util_eq(v, vl, "yes")) {
                skipme = true;
            } else if (util_eq(v, vl, "no")) {
                skipme = false;
            } else {
                conn_error(c, "ERR syntax error");
                return;
            }
        } else {
            conn_error(c, "ERR syntax error");
            return;
        }
    }
    int n = none ? 0
                 : server_client_kill(c, addr[0] ? addr : NULL, laddr[0] ? laddr : NULL, id,
                                      skipme);
    resp_int(&c->out, n);
}

static H(cmd_client_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "ID", "    Return the ID of the current connection.", "GETNAME",
        "    Return the name of the current connection.", "INFO",
        "    Return information about the current client connection.", "KILL <ip:port>",
        "    Kill connection made from <ip:port>.", "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are: ID, ADDR, LADDR, TYPE, USER, SKIPME.",
        "LIST [TYPE (NORMAL|MASTER|REPLICA|PUBSUB)] [ID <id> [...]]",
        "    Return information about client connections.", "SETINFO <option> <value>",
        "    Set LIB-NAME or LIB-VER of the current connection.", "SETNAME <name>",
        "    Assign the name <name> to the current connection.", "HELP",
        "    Print this help.", NULL};
    help_reply(c, "CLIENT", lines);
}

/* ------------------------------------------------------------------------
 * CONFIG
 * ---------------------------------------------------------------------- */

static H(cmd_config_get)
{
    bool *seen = calloc(config_table_len, sizeof(bool));
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

static H(cmd_config_set)
{
    if ((argc - 2) % 2 != 0) {
        conn_errorf(c, "ERR wrong number of arguments for '%s' command", c->cur_cmd->fullname);
        return;
    }
    int npairs = (argc - 2) / 2;
    const config_option **opts = calloc((size_t)npairs, sizeof(*opts));
    char **old = calloc((size_t)npairs, sizeof(char *));
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
            conn_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - can't set "
                           "immutable config", name);
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
        if (config_set(&srv.cfg, opts[k], val, true, err, sizeof(err)) != 0) {
            conn_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s",
                        opts[k]->name, err);
            failed = true;
            break;
        }
        done++;
    }
    if (failed) {
        for (int k = done - 1; k >= 0; k--) {
            config_set(&srv.cfg, opts[k], old[k] ? old[k] : "", false, err, sizeof(err));
        }
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

static H(cmd_config_resetstat)
{
    UNUSED3;
    stats_reset_all();
    reply_ok(c);
}

static H(cmd_config_rewrite)
{
    UNUSED3;
    if (srv.config_file == NULL) {
        conn_error(c, "ERR The server is running without a config file");
        return;
    }
    conn_error(c, "ERR CONFIG REWRITE is not supported by cudis; edit the config file");
}

static H(cmd_config_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
        "RESETSTAT", "    Reset statistics reported by the INFO command.", "REWRITE",
        "    Not supported (the configuration file is never rewritten).", "HELP",
        "    Print this help.", NULL};
    help_reply(c, "CONFIG", lines);
}

/* ------------------------------------------------------------------------
 * COMMAND
 * ---------------------------------------------------------------------- */

static void flags_reply(sbuf *o, const command *cmd, int proto)
{
    const char *names[12];
    int n = 0;
    uint32_t f = cmd->flags;
    if (f & CMD_WRITE) {
        names[n++] = "write";
    }
    if (f & CMD_READONLY) {
        names[n++] = "readonly";
    }
    if (f & CMD_WRITE) {
        names[n++] = "denyoom";
    }
    if (f & CMD_ADMIN) {
        names[n++] = "admin";
    }
    if (f & CMD_NOSCRIPT) {
        names[n++] = "noscript";
    }
    if (f & CMD_LOADING) {
        names[n++] = "loading";
    }
    if (f & CMD_STALE) {
        names[n++] = "stale";
    }
    if (f & CMD_FAST) {
        names[n++] = "fast";
    }
    if (f & CMD_NOAUTH) {
        names[n++] = "no_auth";
    }
    resp_set(o, n, proto);
    for (int i = 0; i < n; i++) {
        resp_status(o, names[i]);
    }
}

static void acl_reply(sbuf *o, const command *cmd, int proto)
{
    const char *cats[6];
    int n = 0;
    const char *g = cmd->group;
    if (!strcmp(g, "string")) {
        cats[n++] = "@string";
    } else if (!strcmp(g, "generic")) {
        cats[n++] = "@keyspace";
    } else if (!strcmp(g, "connection")) {
        cats[n++] = "@connection";
    }
    cats[n++] = (cmd->flags & CMD_WRITE) ? "@write" : "@read";
    if (cmd->flags & CMD_FAST) {
        cats[n++] = "@fast";
    } else {
        cats[n++] = "@slow";
    }
    if (cmd->flags & CMD_ADMIN) {
        cats[n++] = "@admin";
        cats[n++] = "@dangerous";
    }
    resp_set(o, n, proto);
    for (int i = 0; i < n; i++) {
        resp_status(o, cats[i]);
    }
}

static void command_info(sbuf *o, const command *cmd, int proto)
{
    resp_array(o, 10);
    resp_bulks(o, cmd->fullname);
    resp_int(o, cmd->arity);
    flags_reply(o, cmd, proto);
    resp_int(o, cmd->first_key);
    resp_int(o, cmd->last_key);
    resp_int(o, cmd->step);
    acl_reply(o, cmd, proto);
    resp_set(o, 0, proto);  /* tips */
    if (cmd->first_key > 0) { /* key specs */
        resp_array(o, 1);
        resp_map(o, 3, proto);
        resp_bulks(o, "flags");
        resp_set(o, 1, proto);
        resp_status(o, (cmd->flags & CMD_WRITE) ? "RW" : "RO");
        resp_bulks(o, "begin_search");
        resp_map(o, 2, proto);
        resp_bulks(o, "type");
        resp_bulks(o, "index");
        resp_bulks(o, "spec");
        resp_map(o, 1, proto);
        resp_bulks(o, "index");
        resp_int(o, cmd->first_key);
        resp_bulks(o, "find_keys");
        resp_map(o, 2, proto);
        resp_bulks(o, "type");
        resp_bulks(o, "range");
        resp_bulks(o, "spec");
        resp_map(o, 3, proto);
        resp_bulks(o, "lastkey");
        resp_int(o, cmd->last_key < 0 ? cmd->last_key : cmd->last_key - cmd->first_key);
        resp_bulks(o, "keystep");
        resp_int(o, cmd->step);
        resp_bulks(o, "limit");
        resp_int(o, 0);
    } else {
        resp_array(o, 0);
    }
    int ns = 0;
    for (const command *s = cmd->subs; s && s->name; s++) {
        ns++;
    }
    resp_array(o, ns);
    for (const command *s = cmd->subs; s && s->name; s++) {
        command_info(o, s, proto);
    }
}

static void command_docs(sbuf *o, const command *cmd, int proto)
{
    int ns = 0;
    for (const command *s = cmd->subs; s && s->name; s++) {
        ns++;
    }
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
        for (const command *s = cmd->subs; s && s->name; s++) {
            resp_bulks(o, s->fullname);
            command_docs(o, s, proto);
        }
    }
}

static H(cmd_command)
{
    UNUSED3;
    int n = cmd_top_count();
    resp_array(&c->out, n);
    for (int i = 0; i < n; i++) {
        command_info(&c->out, cmd_top(i), c->proto);
    }
}

static H(cmd_command_count)
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

static H(cmd_command_info)
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

static H(cmd_command_docs)
{
    sbuf body = {0};
    long n = 0;
    if (argc == 2) {
        for (int i = 0; i < cmd_top_count(); i++) {
            resp_bulks(&body, cmd_top(i)->fullname);
            command_docs(&body, cmd_top(i), c->proto);
            n++;
        }
    } else {
        for (int j = 2; j < argc; j++) {
            const command *cmd = lookup_full(argv[j], lens[j]);
            if (cmd) {
                resp_bulks(&body, cmd->fullname);
                command_docs(&body, cmd, c->proto);
                n++;
            }
        }
    }
    resp_map(&c->out, n, c->proto);
    sbuf_add(&c->out, body.p, body.len);
    sbuf_free(&body);
}

static H(cmd_command_list)
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
        if (!pat || util_glob_match(pat, plen, cmd->fullname, strlen(cmd->fullname), true)) {
            resp_bulks(&body, cmd->fullname);
            n++;
        }
        for (const command *s = cmd->subs; s && s->name; s++) {
            if (!pat || util_glob_match(pat, plen, s->fullname, strlen(s->fullname), true)) {
                resp_bulks(&body, s->fullname);
                n++;
            }
        }
    }
    resp_array(&c->out, n);
    sbuf_add(&c->out, body.p, body.len);
    sbuf_free(&body);
}

static H(cmd_command_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "(no subcommand)", "    Return details about all commands.", "COUNT",
        "    Return the total number of commands in this server.", "LIST",
        "    Return a list of all commands in this server.", "INFO [<command-name> ...]",
        "    Return details about multiple commands.", "DOCS [<command-name> ...]",
        "    Return documentation details about multiple commands.", "HELP",
        "    Print this help.", NULL};
    help_reply(c, "COMMAND", lines);
}

static H(cmd_memory_help)
{
    UNUSED3;
    static const char *const lines[] = {
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value (an estimate).", "HELP",
        "    Print this help.", NULL};
    help_reply(c, "MEMORY", lines);
}

/* ------------------------------------------------------------------------
 * The table
 * ---------------------------------------------------------------------- */

#define RO (CMD_READONLY | CMD_BATCH)
#define RW (CMD_WRITE | CMD_BATCH)
#define RWF (CMD_WRITE | CMD_BATCH | CMD_FAST)
#define ROF (CMD_READONLY | CMD_BATCH | CMD_FAST)
#define CONN_F (CMD_FAST | CMD_LOADING | CMD_STALE)

/* clang-format off */
static command client_subs[] = {
    {"id", 2, CONN_F, 0, 0, 0, cmd_client_id, "connection", "5.0.0", "Returns the unique client ID of the connection.", NULL, NULL, 0, "", NULL},
    {"getname", 2, CONN_F, 0, 0, 0, cmd_client_getname, "connection", "2.6.9", "Returns the name of the connection.", NULL, NULL, 0, "", NULL},
    {"setname", 3, CONN_F, 0, 0, 0, cmd_client_setname, "connection", "2.6.9", "Sets the connection name.", NULL, NULL, 0, "", NULL},
    {"setinfo", 4, CONN_F, 0, 0, 0, cmd_client_setinfo, "connection", "7.2.0", "Sets information specific to the client or connection.", NULL, NULL, 0, "", NULL},
    {"list", -2, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_client_list, "connection", "2.4.0", "Lists open connections.", "O(N)", NULL, 0, "", NULL},
    {"info", 2, CONN_F, 0, 0, 0, cmd_client_info, "connection", "6.2.0", "Returns information about the connection.", NULL, NULL, 0, "", NULL},
    {"kill", -3, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_client_kill, "connection", "2.4.0", "Terminates open connections.", "O(N)", NULL, 0, "", NULL},
    {"help", 2, CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_client_help, "connection", "5.0.0", "Returns helpful text about the different subcommands.", NULL, NULL, 0, "", NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, "", NULL},
};
static command config_subs[] = {
    {"get", -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_EXCL, 0, 0, 0, cmd_config_get, "server", "2.0.0", "Returns the effective values of configuration parameters.", "O(N)", NULL, 0, "", NULL},
    {"set", -4, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_EXCL, 0, 0, 0, cmd_config_set, "server", "2.0.0", "Sets configuration parameters in-flight.", "O(N)", NULL, 0, "", NULL},
    {"resetstat", 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_EXCL, 0, 0, 0, cmd_config_resetstat, "server", "2.0.0", "Resets the server's statistics.", NULL, NULL, 0, "", NULL},
    {"rewrite", 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_config_rewrite, "server", "2.8.0", "Persists the effective configuration to file.", NULL, NULL, 0, "", NULL},
    {"help", 2, CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_config_help, "server", "5.0.0", "Returns helpful text about the different subcommands.", NULL, NULL, 0, "", NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, "", NULL},
};
static command command_subs[] = {
    {"count", 2, CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_command_count, "server", "2.8.13", "Returns a count of commands.", NULL, NULL, 0, "", NULL},
    {"info", -2, CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_command_info, "server", "2.8.13", "Returns information about one, multiple or all commands.", "O(N)", NULL, 0, "", NULL},
    {"docs", -2, CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_command_docs, "server", "7.0.0", "Returns documentary information about one, multiple or all commands.", "O(N)", NULL, 0, "", NULL},
    {"list", -2, CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_command_list, "server", "7.0.0", "Returns a list of command names.", "O(N)", NULL, 0, "", NULL},
    {"help", 2, CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_command_help, "server", "5.0.0", "Returns helpful text about the different subcommands.", NULL, NULL, 0, "", NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, "", NULL},
};
static command memory_subs[] = {
    {"usage", -3, RO, 2, 2, 1, cmd_memory_usage, "server", "4.0.0", "Estimates the memory usage of a key.", NULL, NULL, 0, "", NULL},
    {"help", 2, CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_memory_help, "server", "4.0.0", "Returns helpful text about the different subcommands.", NULL, NULL, 0, "", NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, "", NULL},
};

static command cmd_table[] = {
    {"ping", -1, CONN_F, 0, 0, 0, cmd_ping, "connection", "1.0.0", "Returns the server's liveliness response.", NULL, NULL, 0, "", NULL},
    {"echo", 2, CONN_F, 0, 0, 0, cmd_echo, "connection", "1.0.0", "Returns the given string.", NULL, NULL, 0, "", NULL},
    {"quit", -1, CONN_F | CMD_NOAUTH, 0, 0, 0, cmd_quit, "connection", "1.0.0", "Closes the connection.", NULL, NULL, 0, "", NULL},
    {"hello", -1, CONN_F | CMD_NOAUTH, 0, 0, 0, cmd_hello, "connection", "6.0.0", "Handshakes with the server.", NULL, NULL, 0, "", NULL},
    {"auth", -2, CONN_F | CMD_NOAUTH | CMD_NOSCRIPT, 0, 0, 0, cmd_auth, "connection", "1.0.0", "Authenticates the connection.", "O(N)", NULL, 0, "", NULL},
    {"select", 2, CONN_F, 0, 0, 0, cmd_select, "connection", "1.0.0", "Changes the selected database.", NULL, NULL, 0, "", NULL},
    {"client", -2, CMD_CONTAINER, 0, 0, 0, NULL, "connection", "2.4.0", "A container for client connection commands.", "Depends on subcommand.", client_subs, 0, "", NULL},
    {"reset", 1, CONN_F | CMD_NOAUTH, 0, 0, 0, cmd_reset, "connection", "6.2.0", "Resets the connection.", NULL, NULL, 0, "", NULL},
    {"get", 2, ROF, 1, 1, 1, cmd_get, "string", "1.0.0", "Returns the string value of a key.", NULL, NULL, 0, "", NULL},
    {"set", -3, RW, 1, 1, 1, cmd_set, "string", "1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", NULL, NULL, 0, "", NULL},
    {"setnx", 3, RWF, 1, 1, 1, cmd_setnx, "string", "1.0.0", "Set the string value of a key only when the key doesn't exist.", NULL, NULL, 0, "", NULL},
    {"setex", 4, RW, 1, 1, 1, cmd_setex, "string", "2.0.0", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", NULL, NULL, 0, "", NULL},
    {"psetex", 4, RW, 1, 1, 1, cmd_psetex, "string", "2.6.0", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", NULL, NULL, 0, "", NULL},
    {"getset", 3, RWF, 1, 1, 1, cmd_getset, "string", "1.0.0", "Returns the previous string value of a key after setting it to a new value.", NULL, NULL, 0, "", NULL},
    {"getdel", 2, RWF, 1, 1, 1, cmd_getdel, "string", "6.2.0", "Returns the string value of a key after deleting the key.", NULL, NULL, 0, "", NULL},
    {"getex", -2, RWF, 1, 1, 1, cmd_getex, "string", "6.2.0", "Returns the string value of a key after setting its expiration time.", NULL, NULL, 0, "", NULL},
    {"mget", -2, ROF, 1, -1, 1, cmd_mget, "string", "1.0.0", "Atomically returns the string values of one or more keys.", "O(N)", NULL, 0, "", NULL},
    {"mset", -3, RW, 1, -1, 2, cmd_mset, "string", "1.0.1", "Atomically creates or modifies the string values of one or more keys.", "O(N)", NULL, 0, "", NULL},
    {"msetnx", -3, CMD_WRITE | CMD_EXCL, 1, -1, 2, cmd_msetnx, "string", "1.0.1", "Atomically modifies the string values of one or more keys only when all keys don't exist.", "O(N)", NULL, 0, "", NULL},
    {"append", 3, RWF, 1, 1, 1, cmd_append, "string", "2.0.0", "Appends a string to the value of a key. Creates the key if it doesn't exist.", NULL, NULL, 0, "", NULL},
    {"strlen", 2, ROF, 1, 1, 1, cmd_strlen, "string", "2.2.0", "Returns the length of a string value.", NULL, NULL, 0, "", NULL},
    {"getrange", 4, RO, 1, 1, 1, cmd_getrange, "string", "2.4.0", "Returns a substring of the string stored at a key.", "O(N)", NULL, 0, "", NULL},
    {"substr", 4, RO, 1, 1, 1, cmd_getrange, "string", "1.0.0", "Returns a substring from a string value.", "O(N)", NULL, 0, "", NULL},
    {"setrange", 4, RW, 1, 1, 1, cmd_setrange, "string", "2.2.0", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", NULL, NULL, 0, "", NULL},
    {"incr", 2, RWF, 1, 1, 1, cmd_incr, "string", "1.0.0", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", NULL, NULL, 0, "", NULL},
    {"decr", 2, RWF, 1, 1, 1, cmd_decr, "string", "1.0.0", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", NULL, NULL, 0, "", NULL},
    {"incrby", 3, RWF, 1, 1, 1, cmd_incrby, "string", "1.0.0", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", NULL, NULL, 0, "", NULL},
    {"decrby", 3, RWF, 1, 1, 1, cmd_decrby, "string", "1.0.0", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", NULL, NULL, 0, "", NULL},
    {"incrbyfloat", 3, CMD_WRITE | CMD_FAST | CMD_EXCL, 1, 1, 1, cmd_incrbyfloat, "string", "2.6.0", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", NULL, NULL, 0, "", NULL},
    {"del", -2, RW, 1, -1, 1, cmd_del, "generic", "1.0.0", "Deletes one or more keys.", "O(N)", NULL, 0, "", NULL},
    {"unlink", -2, RWF, 1, -1, 1, cmd_del, "generic", "4.0.0", "Asynchronously deletes one or more keys.", "O(N)", NULL, 0, "", NULL},
    {"exists", -2, ROF, 1, -1, 1, cmd_exists, "generic", "1.0.0", "Determines whether one or more keys exist.", "O(N)", NULL, 0, "", NULL},
    {"touch", -2, ROF, 1, -1, 1, cmd_touch, "generic", "3.2.1", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", "O(N)", NULL, 0, "", NULL},
    {"type", 2, ROF, 1, 1, 1, cmd_type, "generic", "1.0.0", "Determines the type of value stored at a key.", NULL, NULL, 0, "", NULL},
    {"expire", -3, RWF, 1, 1, 1, cmd_expire, "generic", "1.0.0", "Sets the expiration time of a key in seconds.", NULL, NULL, 0, "", NULL},
    {"pexpire", -3, RWF, 1, 1, 1, cmd_pexpire, "generic", "2.6.0", "Sets the expiration time of a key in milliseconds.", NULL, NULL, 0, "", NULL},
    {"expireat", -3, RWF, 1, 1, 1, cmd_expireat, "generic", "1.2.0", "Sets the expiration time of a key to a Unix timestamp.", NULL, NULL, 0, "", NULL},
    {"pexpireat", -3, RWF, 1, 1, 1, cmd_pexpireat, "generic", "2.6.0", "Sets the expiration time of a key to a Unix milliseconds timestamp.", NULL, NULL, 0, "", NULL},
    {"ttl", 2, ROF, 1, 1, 1, cmd_ttl, "generic", "1.0.0", "Returns the expiration time in seconds of a key.", NULL, NULL, 0, "", NULL},
    {"pttl", 2, ROF, 1, 1, 1, cmd_pttl, "generic", "2.6.0", "Returns the expiration time in milliseconds of a key.", NULL, NULL, 0, "", NULL},
    {"expiretime", 2, ROF, 1, 1, 1, cmd_expiretime, "generic", "7.0.0", "Returns the expiration time of a key as a Unix timestamp.", NULL, NULL, 0, "", NULL},
    {"pexpiretime", 2, ROF, 1, 1, 1, cmd_pexpiretime, "generic", "7.0.0", "Returns the expiration time of a key as a Unix milliseconds timestamp.", NULL, NULL, 0, "", NULL},
    {"persist", 2, RWF, 1, 1, 1, cmd_persist, "generic", "2.2.0", "Removes the expiration time of a key.", NULL, NULL, 0, "", NULL},
    {"rename", 3, CMD_WRITE | CMD_EXCL, 1, 2, 1, cmd_rename, "generic", "1.0.0", "Renames a key and overwrites the destination.", NULL, NULL, 0, "", NULL},
    {"renamenx", 3, CMD_WRITE | CMD_FAST | CMD_EXCL, 1, 2, 1, cmd_renamenx, "generic", "1.0.0", "Renames a key only when the target key name doesn't exist.", NULL, NULL, 0, "", NULL},
    {"copy", -3, CMD_WRITE | CMD_EXCL, 1, 2, 1, cmd_copy, "generic", "6.2.0", "Copies the value of a key to a new key.", NULL, NULL, 0, "", NULL},
    {"keys", 2, CMD_READONLY | CMD_EXCL, 0, 0, 0, cmd_keys, "generic", "1.0.0", "Returns all key names that match a pattern.", "O(N)", NULL, 0, "", NULL},
    {"scan", -2, CMD_READONLY | CMD_EXCL, 0, 0, 0, cmd_scan, "generic", "2.8.0", "Iterates over the key names in the database.", "O(1) for every call. O(N) for a complete iteration.", NULL, 0, "", NULL},
    {"randomkey", 1, CMD_READONLY | CMD_EXCL, 0, 0, 0, cmd_randomkey, "generic", "1.0.0", "Returns a random key name from the database.", NULL, NULL, 0, "", NULL},
    {"dbsize", 1, CMD_READONLY | CMD_FAST | CMD_EXCL, 0, 0, 0, cmd_dbsize, "server", "1.0.0", "Returns the number of keys in the database.", NULL, NULL, 0, "", NULL},
    {"flushdb", -1, CMD_WRITE | CMD_EXCL, 0, 0, 0, cmd_flushall, "server", "1.0.0", "Removes all keys from the current database.", "O(N)", NULL, 0, "", NULL},
    {"flushall", -1, CMD_WRITE | CMD_EXCL, 0, 0, 0, cmd_flushall, "server", "1.0.0", "Removes all keys from all databases.", "O(N)", NULL, 0, "", NULL},
    {"lastsave", 1, CONN_F, 0, 0, 0, cmd_lastsave, "server", "1.0.0", "Returns the Unix timestamp of the last successful save to disk.", NULL, NULL, 0, "", NULL},
    {"role", 1, CONN_F, 0, 0, 0, cmd_role, "server", "2.8.12", "Returns the replication role.", NULL, NULL, 0, "", NULL},
    {"wait", 3, 0, 0, 0, 0, cmd_wait, "generic", "3.0.0", "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.", NULL, NULL, 0, "", NULL},
    {"swapdb", 3, CMD_WRITE | CMD_FAST, 0, 0, 0, cmd_swapdb, "server", "4.0.0", "Swaps two Redis databases.", "O(N)", NULL, 0, "", NULL},
    {"time", 1, CONN_F, 0, 0, 0, cmd_time, "server", "2.6.0", "Returns the server time.", NULL, NULL, 0, "", NULL},
    {"info", -1, CMD_LOADING | CMD_STALE | CMD_EXCL, 0, 0, 0, cmd_info, "server", "1.0.0", "Returns information and statistics about the server.", "O(1)", NULL, 0, "", NULL},
    {"config", -2, CMD_CONTAINER, 0, 0, 0, NULL, "server", "2.0.0", "A container for server configuration commands.", "Depends on subcommand.", config_subs, 0, "", NULL},
    {"command", -1, CMD_CONTAINER | CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_command, "server", "2.8.13", "Returns detailed information about all commands.", "O(N)", command_subs, 0, "", NULL},
    {"memory", -2, CMD_CONTAINER, 0, 0, 0, NULL, "server", "4.0.0", "A container for memory diagnostics commands.", "Depends on subcommand.", memory_subs, 0, "", NULL},
    {"shutdown", -1, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, cmd_shutdown, "server", "1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server.", "O(N)", NULL, 0, "", NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, "", NULL},
};
/* clang-format on */

#define LOOKUP_SIZE 256
static command *lookup_tab[LOOKUP_SIZE];
static const command **all_cmds;
static int n_all, n_top;

static uint32_t name_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint32_t)(unsigned char)(s[i] | 0x20)) * 16777619u;
    }
    return h;
}

void cmd_table_setup(void)
{
    if (all_cmds) {
        return;
    }
    int total = 0;
    for (command *c = cmd_table; c->name; c++) {
        total++;
        for (command *s = c->subs; s && s->name; s++) {
            total++;
        }
    }
    all_cmds = calloc((size_t)total, sizeof(*all_cmds));
    for (command *c = cmd_table; c->name; c++) {
        c->idx = n_all;
        snprintf(c->fullname, sizeof(c->fullname), "%s", c->name);
        all_cmds[n_all++] = c;
        n_top++;
        uint32_t h = name_hash(c->name, strlen(c->name)) & (LOOKUP_SIZE - 1);
        while (lookup_tab[h]) {
            h = (h + 1) & (LOOKUP_SIZE - 1);
        }
        lookup_tab[h] = c;
        for (command *s = c->subs; s && s->name; s++) {
            s->idx = n_all;
            s->parent = c;
            snprintf(s->fullname, sizeof(s->fullname), "%s|%s", c->name, s->name);
            all_cmds[n_all++] = s;
        }
    }
}

int cmd_count(void)
{
    return n_all;
}

const command *cmd_by_idx(int i)
{
    return all_cmds[i];
}

int cmd_top_count(void)
{
    return n_top;
}

const command *cmd_top(int i)
{
    return &cmd_table[i];
}

const command *cmd_lookup(const char *name, size_t len)
{
    if (len == 0 || len > 32) {
        return NULL;
    }
    uint32_t h = name_hash(name, len) & (LOOKUP_SIZE - 1);
    while (lookup_tab[h]) {
        const command *c = lookup_tab[h];
        if (strlen(c->name) == len && !strncasecmp(c->name, name, len)) {
            return c;
        }
        h = (h + 1) & (LOOKUP_SIZE - 1);
    }
    return NULL;
}

const command *cmd_lookup_sub(const command *parent, const char *name, size_t len)
{
    for (const command *s = parent->subs; s && s->name; s++) {
        if (strlen(s->name) == len && !strncasecmp(s->name, name, len)) {
            return s;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Dispatch
 * ---------------------------------------------------------------------- */

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

void cmd_dispatch(conn *c, int argc, char **argv, uint32_t *lens)
{
    loop *lp = c->lp;
    const command *cmd = cmd_lookup(argv[0], lens[0]);
    c->cur_cmd = NULL;
    if (cmd == NULL) {
        if (util_eq(argv[0], lens[0], "post") || util_eq(argv[0], lens[0], "host:")) {
            log_msg(LL_WARNING, "Possible SECURITY ATTACK detected. It looks like somebody is "
                                "sending POST or Host: commands to Redis. Connection aborted.");
            conn_close(c, NULL);
            return;
        }
        if (c->pending) {
            loop_flush(lp, SEAL_DRAIN);
        }
        reply_unknown(c, argc, argv, lens);
        return;
    }
    if ((cmd->flags & CMD_CONTAINER) && (argc >= 2 || cmd->fn == NULL)) {
        const command *sub = argc >= 2 ? cmd_lookup_sub(cmd, argv[1], lens[1]) : NULL;
        if (sub == NULL) {
            if (c->pending) {
                loop_flush(lp, SEAL_DRAIN);
            }
            if (argc < 2) {
                conn_errorf(c, "ERR wrong number of arguments for '%s' command", cmd->fullname);
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
            return;
        }
        cmd = sub;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        if (c->pending) {
            loop_flush(lp, SEAL_DRAIN);
        }
        lp->st.cmds[cmd->idx].rejected++;
        conn_errorf(c, "ERR wrong number of arguments for '%s' command", cmd->fullname);
        return;
    }
    if (!c->authed && !(cmd->flags & CMD_NOAUTH)) {
        if (c->pending) {
            loop_flush(lp, SEAL_DRAIN);
        }
        lp->st.cmds[cmd->idx].rejected++;
        conn_error(c, "NOAUTH Authentication required.");
        return;
    }
    c->last_cmd = cmd;
    c->cur_cmd = cmd;
    if (cmd->flags & CMD_BATCH) {
        /* Errors found while parsing are replied at once: keep order. */
        size_t before = c->out.len;
        uint64_t pend_before = lp->b.seq;
        cmd->fn(c, argc, argv, lens);
        if (lp->b.seq == pend_before && c->out.len != before && c->pending) {
            /* The command replied at once (an argument error) while earlier
             * replies of this client are still in the batch: move its reply
             * behind them. */
            size_t n = c->out.len - before;
            char *tmp = malloc(n);
            memcpy(tmp, c->out.p + before, n);
            c->out.len = before;
            loop_flush(lp, SEAL_DRAIN);
            sbuf_add(&c->out, tmp, n);
            free(tmp);
        }
        if (lp->b.seq == pend_before) {
            lp->st.cmds[cmd->idx].calls++;
        }
        c->cur_cmd = NULL;
        return;
    }
    if (c->pending || (cmd->flags & CMD_EXCL)) {
        loop_flush(lp, SEAL_DRAIN);
    }
    uint64_t t0 = cudis_mono_ns();
    bool lock = (cmd->flags & CMD_EXCL) && srv.nloops > 1;
    if (lock) {
        pthread_rwlock_wrlock(&srv.eng_lock);
    }
    cmd->fn(c, argc, argv, lens);
    if (lock) {
        pthread_rwlock_unlock(&srv.eng_lock);
    }
    cmd_stat *cs = &lp->st.cmds[cmd->idx];
    cs->calls++;
    cs->usec += (cudis_mono_ns() - t0) / 1000;
    c->cur_cmd = NULL;
}
