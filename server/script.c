/*
 * script.c - Lua scripting as Redis 7 has it, with Debian's Lua 5.1: EVAL,
 * EVALSHA, EVAL_RO, EVALSHA_RO; SCRIPT LOAD, EXISTS, FLUSH, KILL, HELP;
 * the redis.* API (call, pcall, error_reply, status_reply, sha1hex, log,
 * setresp, set_repl, replicate_commands, the LOG_ and REPL_ constants);
 * the cjson and bit libraries (Debian's lua-cjson and lua-bitop) and
 * struct (lua_struct.c); Redis's type conversions both ways; globals
 * guarded as Redis guards them (reading an unknown one or writing any is
 * an error).
 *
 * A script runs alone: its loop's batches are answered first, and with
 * several loops it holds the engine exclusively until it ends (excl_begin,
 * as EXEC). redis.call runs a command through the ordinary dispatch path
 * for a client of the script's own (not on any socket) and answers its
 * batch at once, so each call sees every earlier one; the reply that
 * client got is parsed into a Lua value.
 *
 * One Lua state for the server, made on first use; the compiled scripts
 * live in a table in its registry, by SHA-1. SCRIPT FLUSH starts a fresh
 * state.
 */
#include "script.h"

#include <lauxlib.h>
#include <limits.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_time.h"
#include "server_internal.h"
#include "sha1.h"

int luaopen_cjson(lua_State *L); /* lua-cjson */
int luaopen_bit(lua_State *L);   /* lua-bitop */

static struct {
    lua_State *L;
    int scripts_ref;  /* registry: sha -> function */
    int env_ref;      /* registry: the guarded environment scripts run in */
    conn *fake;       /* the client of the script running now */
    bool ro;          /* EVAL_RO / EVALSHA_RO, FCALL_RO, a no-writes function */
    int slot;         /* cluster mode: the hash slot the script's keys are in (-1: none yet) */
    bool fn;          /* what runs is a function (FCALL): FUNCTION KILL kills it (atomic:
                       * other loops read it) */
    bool loading;     /* a library's body runs (FUNCTION LOAD): at most 500 ms */
    uint64_t t0_ns;   /* when it started */
    const char *name; /* its SHA-1, or the function's name */
} S = {.scripts_ref = LUA_NOREF, .env_ref = LUA_NOREF};

#define LOAD_TIMEOUT_MS 500 /* Redis's for a library's body */

/* Read by every loop: SCRIPT KILL may come from any of them. */
static _Atomic bool running, busy, wrote, kill_req;

uint64_t script_memory(void)
{
    if (S.L == NULL) {
        return 0;
    }
    return (uint64_t)lua_gc(S.L, LUA_GCCOUNT, 0) * 1024 + (uint64_t)lua_gc(S.L, LUA_GCCOUNTB, 0);
}

bool script_busy(void)
{
    return atomic_load_explicit(&busy, memory_order_relaxed);
}

const char *script_busy_msg(void)
{
    return __atomic_load_n(&S.fn, __ATOMIC_RELAXED)
               ? "Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN "
                 "NOSAVE."
               : "Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
                 "NOSAVE.";
}

/* {err = msg} on the stack. */
static void push_error(lua_State *L, const char *msg)
{
    lua_newtable(L);
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "err");
}

/* Every 100000 instructions of a script: past busy-reply-threshold the
 * loop serves other clients (BUSY, SCRIPT KILL, SHUTDOWN) between them;
 * SCRIPT KILL or a shutdown ends the script with an error. */
static void busy_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (S.loading && (cudis_mono_ns() - S.t0_ns) / 1000000 > LOAD_TIMEOUT_MS) {
        push_error(L, "ERR FUNCTION LOAD timeout");
        lua_error(L);
    }
    if (!atomic_load(&running)) {
        return;
    }
    uint64_t ms = (cudis_mono_ns() - S.t0_ns) / 1000000;
    const char *kill = __atomic_load_n(&S.fn, __ATOMIC_RELAXED) ? "FUNCTION KILL" : "SCRIPT KILL";
    if (!atomic_load(&busy) && (long long)ms >= srv.cfg.busy_reply_threshold) {
        log_msg(LL_WARNING,
                "Slow script detected: still in execution after %llu milliseconds. You can try "
                "killing the script using the %s command. Script name is: %s.",
                (unsigned long long)ms, kill, S.name);
        atomic_store(&busy, true);
    }
    if (atomic_load(&busy)) {
        loop_busy_round(S.fake->lp);
    }
    if (atomic_load(&kill_req) || atomic_load(&srv.shutdown)) {
        if (atomic_load(&kill_req)) {
            log_msg(LL_WARNING, "Lua script killed by user with %s.", kill);
        } else {
            log_msg(LL_WARNING, "Lua script stopped: the server shuts down.");
        }
        lua_pushstring(L, "Script killed by user with SCRIPT KILL...");
        lua_error(L);
    }
}

/* ------------------------------------------------------------------------
 * RESP (the fake client's replies) -> Lua
 * ---------------------------------------------------------------------- */

static const char *line_end(const char *p, const char *end)
{
    const char *q = memchr(p, '\r', (size_t)(end - p));
    return q != NULL && q + 1 < end ? q : end;
}

/* Push the reply at p as a Lua value; returns where it ends. raise: an
 * error reply is pushed as {err=...} and *err set. */
static const char *resp_to_lua(lua_State *L, const char *p, const char *end, bool *err)
{
    if (p >= end) {
        lua_pushnil(L);
        return end;
    }
    const char *e = line_end(p + 1, end);
    size_t n = (size_t)(e - (p + 1));
    const char *body = p + 1;
    const char *next = e + 2 <= end ? e + 2 : end;
    char num[64];
    size_t nl = n < sizeof(num) - 1 ? n : sizeof(num) - 1;
    memcpy(num, body, nl);
    num[nl] = '\0';
    switch (*p) {
    case '+':
        lua_newtable(L);
        lua_pushlstring(L, body, n);
        lua_setfield(L, -2, "ok");
        return next;
    case '-':
        lua_newtable(L);
        lua_pushlstring(L, body, n);
        lua_setfield(L, -2, "err");
        if (err != NULL) {
            *err = true;
        }
        return next;
    case ':': lua_pushnumber(L, (lua_Number)strtoll(num, NULL, 10)); return next;
    case ',': {
        lua_newtable(L);
        lua_pushnumber(L, strtod(num, NULL));
        lua_setfield(L, -2, "double");
        return next;
    }
    case '(':
        lua_newtable(L);
        lua_pushlstring(L, body, n);
        lua_setfield(L, -2, "big_number");
        return next;
    case '#': lua_pushboolean(L, body[0] == 't'); return next;
    case '_': lua_pushnil(L); return next;
    case '$':
    case '=': {
        long long len = strtoll(num, NULL, 10);
        if (len < 0) {
            lua_pushboolean(L, 0);
            return next;
        }
        const char *s = next;
        if ((long long)(end - s) < len) {
            len = end - s;
        }
        if (*p == '=') { /* verbatim: "txt:..." */
            lua_newtable(L);
            lua_newtable(L);
            lua_pushlstring(L, s, len >= 3 ? 3 : (size_t)len);
            lua_setfield(L, -2, "format");
            lua_pushlstring(L, s + (len >= 4 ? 4 : len), (size_t)(len >= 4 ? len - 4 : 0));
            lua_setfield(L, -2, "string");
            lua_setfield(L, -2, "verbatim_string");
        } else {
            lua_pushlstring(L, s, (size_t)len);
        }
        return s + len + 2 <= end ? s + len + 2 : end;
    }
    case '*':
    case '~':
    case '%':
    case '>': {
        long long cnt = strtoll(num, NULL, 10);
        if (cnt < 0) {
            lua_pushboolean(L, 0);
            return next;
        }
        lua_checkstack(L, 8);
        const char *q = next;
        if (*p == '%') {
            lua_newtable(L);
            lua_newtable(L);
            for (long long i = 0; i < cnt; i++) {
                q = resp_to_lua(L, q, end, NULL);
                q = resp_to_lua(L, q, end, NULL);
                lua_settable(L, -3);
            }
            lua_setfield(L, -2, "map");
        } else if (*p == '~') {
            lua_newtable(L);
            lua_newtable(L);
            for (long long i = 0; i < cnt; i++) {
                q = resp_to_lua(L, q, end, NULL);
                lua_pushboolean(L, 1);
                lua_settable(L, -3);
            }
            lua_setfield(L, -2, "set");
        } else {
            lua_newtable(L);
            for (long long i = 0; i < cnt; i++) {
                q = resp_to_lua(L, q, end, NULL);
                lua_rawseti(L, -2, (int)i + 1);
            }
        }
        return q;
    }
    default: lua_pushnil(L); return end;
    }
}

/* ------------------------------------------------------------------------
 * Lua -> RESP (the script's reply)
 * ---------------------------------------------------------------------- */

/* The string field k of the table at idx, or NULL. */
static const char *str_field(lua_State *L, int idx, const char *k, size_t *len)
{
    lua_getfield(L, idx, k);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, len) : NULL;
    lua_pop(L, 1);
    return s;
}

/* Entries of the table on top of the stack. */
static long table_size(lua_State *L)
{
    long n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        n++;
        lua_pop(L, 1);
    }
    return n;
}

/* A Lua number as C's long long / int, as Redis's plain casts turn out on
 * x86-64: the value truncated, and NaN or a value out of range (where the
 * cast is undefined in C) the type's minimum, so "return 1/0" replies
 * -9223372036854775808 as Redis does. */
static long long number_ll(lua_Number v)
{
    return v > -9223372036854777856.0 && v < 9223372036854775808.0 ? (long long)v : LLONG_MIN;
}

static int number_int(lua_Number v)
{
    return v > (lua_Number)INT_MIN - 1 && v < (lua_Number)INT_MAX + 1 ? (int)v : INT_MIN;
}

static void lua_to_resp(lua_State *L, int idx, sbuf *o, int proto, int depth)
{
    if (idx < 0) {
        idx = lua_gettop(L) + idx + 1;
    }
    switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        resp_bulk(o, s, n);
        return;
    }
    case LUA_TBOOLEAN: /* as Redis 7.0 does for RESP2 and RESP3 callers alike */
        if (lua_toboolean(L, idx)) {
            resp_int(o, 1);
        } else {
            resp_null(o, proto);
        }
        return;
    case LUA_TNUMBER: resp_int(o, number_ll(lua_tonumber(L, idx))); return;
    case LUA_TTABLE: break;
    default: resp_null(o, proto); return;
    }
    size_t n;
    const char *s;
    if ((s = str_field(L, idx, "err", &n)) != NULL) {
        sbuf e = {0};
        sbuf_add(&e, s, n);
        sbuf_add(&e, "", 1);
        resp_error(o, e.p);
        sbuf_free(&e);
        return;
    }
    if ((s = str_field(L, idx, "ok", &n)) != NULL) {
        sbuf e = {0};
        sbuf_add(&e, s, n);
        sbuf_add(&e, "", 1);
        resp_status(o, e.p);
        sbuf_free(&e);
        return;
    }
    if (depth > 1000) { /* Redis's limit on nested replies */
        resp_error(o, "ERR reached lua stack limit");
        return;
    }
    lua_getfield(L, idx, "double");
    if (lua_type(L, -1) == LUA_TNUMBER) {
        resp_double(o, lua_tonumber(L, -1), proto);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    lua_getfield(L, idx, "map");
    if (lua_type(L, -1) == LUA_TTABLE) {
        resp_map(o, table_size(L), proto);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_to_resp(L, -2, o, proto, depth + 1);
            lua_to_resp(L, -1, o, proto, depth + 1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    lua_getfield(L, idx, "set");
    if (lua_type(L, -1) == LUA_TTABLE) {
        resp_set(o, table_size(L), proto);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_to_resp(L, -2, o, proto, depth + 1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    /* an array, up to its first nil */
    long cnt = 0;
    for (;;) {
        lua_rawgeti(L, idx, (int)cnt + 1);
        bool nil = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (nil) {
            break;
        }
        cnt++;
    }
    resp_array(o, cnt);
    for (long i = 1; i <= cnt; i++) {
        lua_rawgeti(L, idx, (int)i);
        lua_to_resp(L, -1, o, proto, depth + 1);
        lua_pop(L, 1);
    }
}

/* ------------------------------------------------------------------------
 * The redis.* API
 * ---------------------------------------------------------------------- */

static int redis_call_generic(lua_State *L, bool raise)
{
    int argc = lua_gettop(L);
    conn *f = S.fake;
    if (argc == 0) {
        push_error(L, "ERR Please specify at least one argument for this redis lib call");
        return raise ? lua_error(L) : 1;
    }
    char **argv = xmalloc(sizeof(char *) * (size_t)argc);
    uint32_t *lens = xmalloc(sizeof(uint32_t) * (size_t)argc);
    for (int i = 0; i < argc; i++) {
        int t = lua_type(L, i + 1);
        if (t != LUA_TSTRING && t != LUA_TNUMBER) {
            free(argv);
            free(lens);
            push_error(L, "ERR Lua redis lib command arguments must be strings or integers");
            return raise ? lua_error(L) : 1;
        }
        size_t n;
        argv[i] = (char *)lua_tolstring(L, i + 1, &n); /* numbers become strings in place */
        lens[i] = (uint32_t)n;
    }
    const char *err = NULL;
    char acl_msg[256];
    int acl, acl_pos = 0;
    const command *cmd = cmd_lookup(argv[0], lens[0]);
    if (cmd != NULL && (cmd->flags & CMD_CONTAINER) && (argc >= 2 || cmd->fn == NULL)) {
        cmd = argc >= 2 ? cmd_lookup_sub(cmd, argv[1], lens[1]) : NULL;
    }
    if (cmd == NULL) {
        err = "ERR Unknown Redis command called from script";
    } else if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        err = "ERR Wrong number of args calling Redis command from script";
    } else if (cmd->flags & CMD_NOSCRIPT) {
        err = "ERR This Redis command is not allowed from script";
    } else if (S.ro && (cmd->flags & CMD_WRITE)) {
        err = "ERR Write commands are not allowed from read-only scripts.";
    } else if ((acl = acl_check(f, cmd, argc, argv, lens, &acl_pos)) != ACL_OK) {
        acl_deny(f, cmd, acl, acl_pos, ACL_CTX_LUA, argv, lens, acl_msg + 4,
                 sizeof(acl_msg) - 4);
        memcpy(acl_msg, "ERR ", 4);
        err = acl_msg;
    } else if (srv.cfg.cluster_enabled) {
        err = cluster_script_check(cmd, argc, argv, lens, &S.slot);
    }
    if (err != NULL) {
        free(argv);
        free(lens);
        push_error(L, err);
        return raise ? lua_error(L) : 1;
    }
    loop *lp = f->lp;
    f->out.len = 0;
    if (cmd->flags & CMD_WRITE) {
        atomic_store(&wrote, true); /* SCRIPT KILL can no longer undo it */
    }
    dispatch_run(f, cmd, argc, argv, lens);
    batch_flush(&lp->bf, srv.eng, SEAL_DRAIN); /* its reply, now */
    free(argv);
    free(lens);
    bool is_err = false;
    resp_to_lua(L, f->out.p, f->out.p + f->out.len, &is_err);
    f->out.len = 0;
    if (is_err && raise) {
        return lua_error(L);
    }
    return 1;
}

static int l_call(lua_State *L)
{
    return redis_call_generic(L, true);
}

static int l_pcall(lua_State *L)
{
    return redis_call_generic(L, false);
}

static int l_error_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
        return luaL_error(L, "wrong number or type of arguments");
    }
    lua_newtable(L);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "err");
    return 1;
}

static int l_status_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
        return luaL_error(L, "wrong number or type of arguments");
    }
    lua_newtable(L);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "ok");
    return 1;
}

static int l_sha1hex(lua_State *L)
{
    if (lua_gettop(L) != 1) {
        return luaL_error(L, "wrong number of arguments");
    }
    size_t n;
    const char *s = lua_tolstring(L, 1, &n);
    char hex[41];
    sha1_hex(s != NULL ? s : "", s != NULL ? n : 0, hex);
    lua_pushstring(L, hex);
    return 1;
}

static int l_log(lua_State *L)
{
    int argc = lua_gettop(L);
    if (argc < 2) {
        return luaL_error(L, "redis.log() requires two arguments or more.");
    }
    if (!lua_isnumber(L, 1)) {
        return luaL_error(L, "First argument must be a number (log level).");
    }
    int level = number_int(lua_tonumber(L, 1));
    if (level < LL_DEBUG || level > LL_WARNING) {
        return luaL_error(L, "Invalid debug level.");
    }
    sbuf m = {0};
    for (int i = 2; i <= argc; i++) {
        size_t n;
        const char *s = lua_tolstring(L, i, &n);
        if (s != NULL) {
            if (i > 2) {
                sbuf_add(&m, " ", 1);
            }
            sbuf_add(&m, s, n);
        }
    }
    sbuf_add(&m, "", 1);
    log_msg(level, "%s", m.p);
    sbuf_free(&m);
    return 0;
}

static int l_setresp(lua_State *L)
{
    if (lua_gettop(L) != 1) {
        return luaL_error(L, "redis.setresp() requires one argument.");
    }
    int v = number_int(lua_tonumber(L, 1));
    if (v != 2 && v != 3) {
        return luaL_error(L, "RESP version must be 2 or 3.");
    }
    S.fake->proto = v;
    return 0;
}

static int l_true(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

static int l_nothing(lua_State *L)
{
    (void)L;
    return 0;
}

/* ------------------------------------------------------------------------
 * The state
 * ---------------------------------------------------------------------- */

/* Open a library; a module that only returns its table (lua-cjson) gets
 * the global `name` too. */
static void open_lib(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_pushcfunction(L, fn);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (name[0] != '\0' && lua_istable(L, -1)) {
        lua_setglobal(L, name);
    } else {
        lua_pop(L, 1);
    }
}

/* The guarded environment (reading an unknown global or writing any is an
 * error), and a function switching what it reads: the globals, or (LOAD,
 * a library's body at FUNCTION LOAD) only the load API, whose `redis` table
 * is guarded the same way. */
static const char GUARD[] =
    "local G, LOAD = ...\n"
    "local function guarded(get)\n"
    "  return setmetatable({}, {\n"
    "    __index = function(_, k)\n"
    "      local v = get(k)\n"
    "      if v == nil then\n"
    "        error(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. "
    "\"'\", 2)\n"
    "      end\n"
    "      return v\n"
    "    end,\n"
    "    __newindex = function() error('Attempt to modify a readonly table', 2) end,\n"
    "    __metatable = false,\n"
    "  })\n"
    "end\n"
    "local src = G\n"
    "local env = guarded(function(k) return rawget(src, k) end)\n"
    "if LOAD ~= nil then\n"
    "  local R = LOAD.redis\n"
    "  LOAD.redis = guarded(function(k) return rawget(R, k) end)\n"
    "end\n"
    "rawset(G, '_G', env)\n"
    "return env, function(loading) if loading then src = LOAD else src = G end end\n";

/* t.LOG_* and REDIS_VERSION(_NUM) into the table on top of the stack. */
static void set_log_and_version(lua_State *L)
{
    static const struct {
        const char *name;
        int v;
    } consts[] = {{"LOG_DEBUG", LL_DEBUG},
                  {"LOG_VERBOSE", LL_VERBOSE},
                  {"LOG_NOTICE", LL_NOTICE},
                  {"LOG_WARNING", LL_WARNING},
                  {NULL, 0}};
    for (int i = 0; consts[i].name != NULL; i++) {
        lua_pushnumber(L, consts[i].v);
        lua_setfield(L, -2, consts[i].name);
    }
    lua_pushcfunction(L, l_log);
    lua_setfield(L, -2, "log");
    lua_pushstring(L, REDIS_COMPAT_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    int a = 0, b = 0, c = 0;
    sscanf(REDIS_COMPAT_VERSION, "%d.%d.%d", &a, &b, &c);
    lua_pushnumber(L, (a << 16) | (b << 8) | c);
    lua_setfield(L, -2, "REDIS_VERSION_NUM");
}

lua_State *script_vm_create(int *env_ref, int *mode_ref, lua_CFunction register_fn)
{
    lua_State *L = luaL_newstate();
    if (L == NULL) {
        log_msg(LL_WARNING, "Out Of Memory creating the Lua state");
        abort();
    }
    lua_sethook(L, busy_hook, LUA_MASKCOUNT, 100000);
    open_lib(L, "", luaopen_base);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, LUA_DBLIBNAME, luaopen_debug);
    open_lib(L, "cjson", luaopen_cjson);
    open_lib(L, "bit", luaopen_bit);
    open_lib(L, "struct", luaopen_struct);
    /* what Redis removes from the base library */
    static const char *const removed[] = {"dofile", "loadfile", "print", NULL};
    for (int i = 0; removed[i] != NULL; i++) {
        lua_pushnil(L);
        lua_setglobal(L, removed[i]);
    }
    lua_newtable(L);
    static const luaL_Reg api[] = {{"call", l_call},
                                   {"pcall", l_pcall},
                                   {"error_reply", l_error_reply},
                                   {"status_reply", l_status_reply},
                                   {"sha1hex", l_sha1hex},
                                   {"setresp", l_setresp},
                                   {"replicate_commands", l_true},
                                   {"set_repl", l_nothing},
                                   {"breakpoint", l_nothing},
                                   {"debug", l_nothing},
                                   {NULL, NULL}};
    for (const luaL_Reg *r = api; r->name != NULL; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, -2, r->name);
    }
    static const struct {
        const char *name;
        int v;
    } repl[] = {{"REPL_NONE", 0},    {"REPL_AOF", 1}, {"REPL_SLAVE", 2},
                {"REPL_REPLICA", 2}, {"REPL_ALL", 3}, {NULL, 0}};
    for (int i = 0; repl[i].name != NULL; i++) {
        lua_pushnumber(L, repl[i].v);
        lua_setfield(L, -2, repl[i].name);
    }
    set_log_and_version(L);
    lua_setglobal(L, "redis");
    if (luaL_loadbuffer(L, GUARD, sizeof(GUARD) - 1, "=guard") != 0) {
        log_msg(LL_WARNING, "Lua guard: %s", lua_tostring(L, -1));
        abort();
    }
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    if (register_fn != NULL) { /* the load API: {redis = {register_function, log, ...}} */
        lua_newtable(L);
        lua_newtable(L);
        lua_pushcfunction(L, register_fn);
        lua_setfield(L, -2, "register_function");
        set_log_and_version(L);
        lua_setfield(L, -2, "redis");
    } else {
        lua_pushnil(L);
    }
    lua_call(L, 2, 2);
    if (mode_ref != NULL) {
        *mode_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    } else {
        lua_pop(L, 1);
    }
    *env_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return L;
}

static void state_open(void)
{
    S.L = script_vm_create(&S.env_ref, NULL, NULL);
    lua_newtable(S.L);
    S.scripts_ref = luaL_ref(S.L, LUA_REGISTRYINDEX);
}

static lua_State *state(void)
{
    if (S.L == NULL) {
        state_open();
    }
    return S.L;
}

int script_vm_load(lua_State *L, int mode_ref, char *err, size_t errlen)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, mode_ref);
    lua_pushboolean(L, 1);
    lua_call(L, 1, 0);
    S.loading = true;
    S.t0_ns = cudis_mono_ns();
    int rc = lua_pcall(L, 0, 0, 0);
    S.loading = false;
    if (rc != 0) {
        size_t n = 0;
        const char *msg = lua_type(L, -1) == LUA_TTABLE ? str_field(L, -1, "err", &n) : NULL;
        if (msg != NULL) {
            snprintf(err, errlen, "ERR Error registering functions: %.*s", (int)n, msg);
        } else {
            msg = lua_tostring(L, -1);
            snprintf(err, errlen, "ERR Error registering functions: ERR %s",
                     msg != NULL ? msg : "(error object is not a string)");
        }
        lua_pop(L, 1);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, mode_ref);
    lua_pushboolean(L, 0);
    lua_call(L, 1, 0);
    return rc == 0 ? 0 : -1;
}

void script_shutdown(void)
{
    if (S.L != NULL) {
        lua_close(S.L);
        S.L = NULL;
    }
}

/* Push the compiled script sha (lower case) or nil. */
static void push_script(lua_State *L, const char *sha)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, S.scripts_ref);
    lua_getfield(L, -1, sha);
    lua_remove(L, -2);
}

/* Compile body as the script `sha` (kept for EVALSHA). Returns 0, or -1
 * with Redis's message in err. */
static int compile(const char *body, size_t n, char sha[41], char *err, size_t errlen)
{
    lua_State *L = state();
    sha1_hex(body, n, sha);
    push_script(L, sha);
    bool have = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (have) {
        return 0;
    }
    if (luaL_loadbuffer(L, body, n, "@user_script") != 0) {
        snprintf(err, errlen, "ERR Error compiling script (new function): %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, S.env_ref);
    lua_setfenv(L, -2);
    lua_rawgeti(L, LUA_REGISTRYINDEX, S.scripts_ref);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, sha);
    lua_pop(L, 2);
    return 0;
}

/* The error handler of a script's pcall: {err=..., string=bool, line=n},
 * the line of the script the error came from. */
static int err_handler(lua_State *L)
{
    int line = 0;
    lua_Debug ar;
    for (int lv = 0; lua_getstack(L, lv, &ar); lv++) {
        if (lua_getinfo(L, "Sl", &ar) &&
            (strcmp(ar.source, "@user_script") == 0 || strcmp(ar.source, "@user_function") == 0)) {
            line = ar.currentline;
            break;
        }
    }
    lua_newtable(L);
    if (lua_type(L, 1) == LUA_TTABLE) {
        lua_getfield(L, 1, "err");
        lua_setfield(L, -2, "err");
    } else {
        const char *s = lua_tostring(L, 1);
        lua_pushstring(L, s != NULL ? s : "(error object is not a string)");
        lua_setfield(L, -2, "err");
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "string");
    }
    lua_pushnumber(L, line);
    lua_setfield(L, -2, "line");
    return 1;
}

/* A table of n strings on the stack. */
static void push_array(lua_State *L, char **v, uint32_t *lens, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, v[i], lens[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

void script_run(conn *c, lua_State *L, const script_call *call, int argc, char **argv,
                uint32_t *lens)
{
    conn fake;
    memset(&fake, 0, sizeof(fake));
    fake.lp = c->lp;
    fake.db = c->db;
    fake.proto = 2;
    fake.authed = true;
    fake.user = c->user; /* the caller's rights (c holds the reference) */
    fake.caller = c;
    fake.flags = CONN_FAKE;
    fake.multi_len = -1;
    fake.id = c->id;
    fake.trk = c->trk; /* its reads are remembered for the caller (tracking) */
    memcpy(fake.addr, c->addr, sizeof(fake.addr));
    S.fake = &fake;
    S.name = call->name;
    __atomic_store_n(&S.fn, call->fn, __ATOMIC_RELAXED); /* other loops read it */
    S.ro = call->ro;
    /* cluster mode: the slot of the declared keys (dispatch checked they
     * share one), which the keys a function touches must keep, as Redis
     * (an EVAL script may touch local keys of any slot: -2) */
    S.slot = !call->one_slot                  ? -2
             : call->numkeys > 0 && argc > 3 ? (int)cluster_keyslot(argv[3], lens[3])
                                             : -1;
    S.t0_ns = cudis_mono_ns();
    atomic_store(&kill_req, false);
    atomic_store(&wrote, false);
    atomic_store(&running, true);
    lua_pushcfunction(L, err_handler);
    lua_insert(L, -2); /* below the function */
    int eh = lua_gettop(L) - 1;
    int nk = call->numkeys;
    push_array(L, argv + 3, lens + 3, nk);
    push_array(L, argv + 3 + nk, lens + 3 + nk, argc - 3 - nk);
    if (!call->fn) { /* a script reads them as globals */
        lua_setfield(L, LUA_GLOBALSINDEX, "ARGV");
        lua_setfield(L, LUA_GLOBALSINDEX, "KEYS");
    }
    int rc = lua_pcall(L, call->fn ? 2 : 0, 1, eh);
    if (rc == 0) {
        lua_to_resp(L, -1, &c->out, c->proto, 0);
    } else if (lua_type(L, -1) == LUA_TTABLE) {
        size_t n = 0;
        const char *msg = str_field(L, -1, "err", &n);
        lua_getfield(L, -1, "string");
        bool plain = lua_toboolean(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, -1, "line");
        int line = (int)lua_tonumber(L, -1);
        lua_pop(L, 1);
        conn_errorf(c, "%s%.*s script: %s, on @%s:%d.", plain ? "ERR " : "",
                    (int)(n < 900 ? n : 900), msg != NULL ? msg : "", call->name,
                    call->fn ? "user_function" : "user_script", line);
    } else {
        conn_errorf(c, "ERR %s", lua_tostring(L, -1));
    }
    lua_settop(L, eh - 1);
    atomic_store(&running, false);
    atomic_store(&busy, false);
    atomic_store(&kill_req, false);
    S.fake = NULL;
    S.ro = false;
    __atomic_store_n(&S.fn, false, __ATOMIC_RELAXED);
    sbuf_free(&fake.out);
    lua_gc(L, LUA_GCSTEP, 1);
}

/* EVAL / EVALSHA / their _RO forms. */
static void eval_generic(conn *c, int argc, char **argv, uint32_t *lens, bool by_sha, bool ro)
{
    long long numkeys;
    if (!util_str2ll(argv[2], lens[2], &numkeys)) {
        conn_error(c, "ERR value is not an integer or out of range");
        return;
    }
    if (numkeys > argc - 3) {
        conn_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        conn_error(c, "ERR Number of keys can't be negative");
        return;
    }
    loop *lp = c->lp;
    bool locked = excl_begin(lp);
    char sha[41];
    bool ok = true;
    if (by_sha) {
        size_t n = lens[1] == 40 ? 40 : 0;
        for (size_t i = 0; i < n; i++) {
            char ch = argv[1][i];
            sha[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        sha[n] = '\0';
        lua_State *L = state();
        push_script(L, sha);
        ok = n == 40 && !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (!ok) {
            conn_error(c, "NOSCRIPT No matching script. Please use EVAL.");
        }
    } else {
        char err[512];
        if (compile(argv[1], lens[1], sha, err, sizeof(err)) != 0) {
            conn_error(c, err);
            ok = false;
        }
    }
    if (ok) {
        lua_State *L = state();
        push_script(L, sha);
        script_call call = {.name = sha, .numkeys = (int)numkeys, .ro = ro};
        script_run(c, L, &call, argc, argv, lens);
    }
    excl_end(lp, locked);
}

void cmd_eval(conn *c, int argc, char **argv, uint32_t *lens)
{
    eval_generic(c, argc, argv, lens, false, false);
}

void cmd_evalsha(conn *c, int argc, char **argv, uint32_t *lens)
{
    eval_generic(c, argc, argv, lens, true, false);
}

void cmd_eval_ro(conn *c, int argc, char **argv, uint32_t *lens)
{
    eval_generic(c, argc, argv, lens, false, true);
}

void cmd_evalsha_ro(conn *c, int argc, char **argv, uint32_t *lens)
{
    eval_generic(c, argc, argv, lens, true, true);
}

/* ------------------------------------------------------------------------
 * SCRIPT
 * ---------------------------------------------------------------------- */

void cmd_script_load(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    char sha[41], err[512];
    if (compile(argv[2], lens[2], sha, err, sizeof(err)) != 0) {
        conn_error(c, err);
        return;
    }
    resp_bulk(&c->out, sha, 40);
}

void cmd_script_exists(conn *c, int argc, char **argv, uint32_t *lens)
{
    lua_State *L = state();
    resp_array(&c->out, argc - 2);
    for (int i = 2; i < argc; i++) {
        char sha[41];
        size_t n = lens[i] == 40 ? 40 : 0;
        for (size_t k = 0; k < n; k++) {
            char ch = argv[i][k];
            sha[k] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        sha[n] = '\0';
        push_script(L, sha);
        resp_int(&c->out, n == 40 && !lua_isnil(L, -1) ? 1 : 0);
        lua_pop(L, 1);
    }
}

void cmd_script_flush(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (argc > 3 ||
        (argc == 3 && !util_eq(argv[2], lens[2], "sync") && !util_eq(argv[2], lens[2], "async"))) {
        conn_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    script_shutdown(); /* a fresh state on next use */
    reply_ok(c);
}

void script_kill(conn *c, bool fn)
{
    if (!atomic_load(&running)) {
        conn_error(c, "NOTBUSY No scripts in execution right now.");
    } else if (atomic_load(&wrote)) {
        conn_error(c, "UNKILLABLE Sorry the script already executed write commands against the "
                      "dataset. You can either wait the script termination or kill the server "
                      "in a hard way using the SHUTDOWN NOSAVE command.");
    } else if (fn !=
               __atomic_load_n(
                   &S.fn,
                   __ATOMIC_RELAXED)) { /* SCRIPT KILL kills no function, FUNCTION KILL no script */
        conn_errorf(c, "BUSY %s", script_busy_msg());
    } else {
        atomic_store(&kill_req, true);
        reply_ok(c);
    }
}

void cmd_script_kill(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    script_kill(c, false);
}
