/*
 * function.c - Redis 7 functions: FUNCTION LOAD, DELETE, LIST, STATS,
 * FLUSH, DUMP, RESTORE, KILL, HELP and FCALL, FCALL_RO, as Redis 7.0 has
 * them. A library is Lua code that starts "#!lua name=<lib>"; its body
 * runs once at load, seeing only redis.register_function, redis.log and
 * the version (script_vm_load), and registers functions with their flags
 * and description. FCALL runs a function through the scripts' run path
 * (script_run): the same conversions, errors, BUSY and kill handling.
 *
 * The libraries live in a Lua state of their own (not the scripts': SCRIPT
 * FLUSH leaves them, FUNCTION FLUSH drops them), made on first use; what
 * LIST and FCALL need to know of them (names, flags, code) is kept in C.
 * Nothing is persisted: FUNCTION DUMP / RESTORE carry them in Redis's
 * payload (one RDB function2 record per library, the RDB version, the
 * CRC-64). Everything but STATS and KILL runs alone (CMD_EXCL, or the
 * exclusive engine as EVAL); STATS and KILL may come from any loop while
 * a function runs.
 */
#include <lauxlib.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_time.h"
#include "script.h"
#include "server_internal.h"

#define RDB_OPCODE_FUNCTION2 245

static const struct {
    const char *name;
    int bit;
} FLAGS[] = {{"no-writes", 1},
             {"allow-oom", 2},
             {"allow-stale", 4},
             {"no-cluster", 8},
             {"allow-cross-slot-keys", 16},
             {NULL, 0}};
#define FN_NO_WRITES 1
#define FN_CROSS_SLOT 16

typedef struct fn_info {
    char *name;
    char *desc; /* NULL: none */
    int flags;
} fn_info;

typedef struct library {
    char *name;
    char *code;
    size_t code_len;
    fn_info *fns;
    int nfns;
} library;

/* A set of libraries and the Lua state their functions live in: the
 * server's (F), or one a RESTORE fills before it is merged. */
typedef struct fn_ctx {
    lua_State *L;
    int env_ref, mode_ref;
    int fns_ref; /* registry: function name -> callback */
    library **libs;
    int nlibs;
} fn_ctx;

static fn_ctx F;

/* What the library being loaded has registered so far. */
static struct {
    fn_info *fns;
    int n;
    int cbs_ref; /* registry: name -> callback */
} P;

/* Read by STATS from any loop. */
static _Atomic int n_libs, n_fns;
static struct {
    pthread_mutex_t mu;
    bool on;
    char *name;
    sbuf cmd; /* the FCALL, as a RESP array */
    uint64_t t0_ns;
} R = {.mu = PTHREAD_MUTEX_INITIALIZER};

static char *dup_n(const char *s, size_t n)
{
    char *d = xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* Letters, digits and underscores, at least one (Redis's functionsVerifyName). */
static bool name_ok(const char *s, size_t n)
{
    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_')) {
            return false;
        }
    }
    return true;
}

static void fns_free(fn_info *fns, int n)
{
    for (int i = 0; i < n; i++) {
        free(fns[i].name);
        free(fns[i].desc);
    }
    free(fns);
}

static void lib_free(library *lib)
{
    fns_free(lib->fns, lib->nfns);
    free(lib->name);
    free(lib->code);
    free(lib);
}

static void counts_update(const fn_ctx *x)
{
    if (x != &F) {
        return;
    }
    int nf = 0;
    for (int i = 0; i < x->nlibs; i++) {
        nf += x->libs[i]->nfns;
    }
    atomic_store(&n_libs, x->nlibs);
    atomic_store(&n_fns, nf);
}

static int lib_find(const fn_ctx *x, const char *name)
{
    for (int i = 0; i < x->nlibs; i++) {
        if (strcmp(x->libs[i]->name, name) == 0) {
            return i;
        }
    }
    return -1;
}

/* The function `name` (and its library), or NULL. */
static const fn_info *fn_find(const fn_ctx *x, const char *name, size_t n, const library **lib)
{
    for (int i = 0; i < x->nlibs; i++) {
        for (int k = 0; k < x->libs[i]->nfns; k++) {
            const fn_info *f = &x->libs[i]->fns[k];
            if (strlen(f->name) == n && memcmp(f->name, name, n) == 0) {
                if (lib != NULL) {
                    *lib = x->libs[i];
                }
                return f;
            }
        }
    }
    return NULL;
}

static void ctx_destroy(fn_ctx *x)
{
    for (int i = 0; i < x->nlibs; i++) {
        lib_free(x->libs[i]);
    }
    free(x->libs);
    if (x->L != NULL) {
        lua_close(x->L);
    }
    memset(x, 0, sizeof(*x));
    counts_update(x);
}

/* ------------------------------------------------------------------------
 * Loading a library
 * ---------------------------------------------------------------------- */

static int raise_error(lua_State *L, const char *msg)
{
    lua_newtable(L);
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "err");
    return lua_error(L);
}

/* The flags table at the top of the stack; -1 on an unknown flag. */
static int read_flags(lua_State *L)
{
    int flags = 0;
    for (int j = 1;; j++) {
        lua_rawgeti(L, -1, j);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            return flags;
        }
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        int bit = 0;
        for (int i = 0; s != NULL && FLAGS[i].name != NULL; i++) {
            if (strcasecmp(FLAGS[i].name, s) == 0) {
                bit = FLAGS[i].bit;
            }
        }
        lua_pop(L, 1);
        if (bit == 0) {
            return -1;
        }
        flags |= bit;
    }
}

/* The string (or number) on top of the stack, copied into *dst (which it
 * replaces); false when it is neither. */
static bool take_string(lua_State *L, char **dst)
{
    if (!lua_isstring(L, -1)) {
        return false;
    }
    size_t n;
    const char *s = lua_tolstring(L, -1, &n);
    free(*dst);
    *dst = dup_n(s, n);
    return true;
}

/* redis.register_function(name, fn) / redis.register_function{function_name=,
 * callback=, flags=, description=}, at load only. */
static int l_register(lua_State *L)
{
    int argc = lua_gettop(L);
    fn_info f = {0};
    const char *err = NULL;
    int cb = 0; /* stack index of the callback */
    if (argc == 1) {
        if (!lua_istable(L, 1)) {
            return raise_error(L,
                               "ERR calling redis.register_function with a single argument is only "
                               "applicable to Lua table (representing named arguments).");
        }
        lua_settop(L, 2); /* slot 2: the callback, once found */
        lua_pushnil(L);
        while (err == NULL && lua_next(L, 1)) {
            const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
            if (lua_type(L, -2) != LUA_TSTRING && lua_type(L, -2) != LUA_TNUMBER) {
                err = "ERR named argument key given to redis.register_function is not a string";
            } else if (strcasecmp(k, "function_name") == 0) {
                if (!take_string(L, &f.name)) {
                    err = "ERR function_name argument given to redis.register_function must be a "
                          "string";
                }
            } else if (strcasecmp(k, "description") == 0) {
                if (!take_string(L, &f.desc)) {
                    err = "ERR description argument given to redis.register_function must be a "
                          "string";
                }
            } else if (strcasecmp(k, "callback") == 0) {
                if (!lua_isfunction(L, -1)) {
                    err = "ERR callback argument given to redis.register_function must be a "
                          "function";
                } else {
                    lua_pushvalue(L, -1);
                    lua_replace(L, 2);
                    cb = 2;
                }
            } else if (strcasecmp(k, "flags") == 0) {
                if (!lua_istable(L, -1)) {
                    err = "ERR flags argument to redis.register_function must be a table "
                          "representing function flags";
                } else if ((f.flags = read_flags(L)) < 0) {
                    err = "ERR unknown flag given";
                }
            } else {
                err = "ERR unknown argument given to redis.register_function";
            }
            lua_pop(L, 1);
        }
        if (err == NULL && f.name == NULL) {
            err = "ERR redis.register_function must get a function name argument";
        }
        if (err == NULL && cb == 0) {
            err = "ERR redis.register_function must get a callback argument";
        }
    } else if (argc == 2) {
        if (!lua_isstring(L, 1)) {
            err = "ERR first argument to redis.register_function must be a string";
        } else if (!lua_isfunction(L, 2)) {
            err = "ERR second argument to redis.register_function must be a function";
        } else {
            lua_pushvalue(L, 1);
            take_string(L, &f.name);
            lua_pop(L, 1);
            cb = 2;
        }
    } else {
        err = "ERR wrong number of arguments to redis.register_function";
    }
    if (err == NULL && !name_ok(f.name, strlen(f.name))) {
        err = "ERR Library names can only contain letters, numbers, or underscores(_) and must be "
              "at least one character long"; /* (sic: Redis 7.0's words for a function name) */
    }
    for (int i = 0; err == NULL && i < P.n; i++) {
        if (strcmp(P.fns[i].name, f.name) == 0) {
            err = "ERR Function already exists in the library";
        }
    }
    if (err != NULL) {
        free(f.name);
        free(f.desc);
        return raise_error(L, err);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, P.cbs_ref);
    lua_pushvalue(L, cb);
    lua_setfield(L, -2, f.name);
    lua_pop(L, 1);
    P.fns = xrealloc(P.fns, sizeof(fn_info) * (size_t)(P.n + 1));
    P.fns[P.n++] = f;
    return 0;
}

static void ctx_open(fn_ctx *x)
{
    if (x->L != NULL) {
        return;
    }
    x->L = script_vm_create(&x->env_ref, &x->mode_ref, l_register);
    lua_newtable(x->L);
    x->fns_ref = luaL_ref(x->L, LUA_REGISTRYINDEX);
}

/* The shebang's library name and engine; 0, or -1 with Redis's error. */
static int parse_meta(const char *code, size_t len, char *name, size_t namecap, size_t *body,
                      char *err, size_t errlen)
{
    if (len < 2 || memcmp(code, "#!", 2) != 0) {
        snprintf(err, errlen, "ERR Missing library metadata");
        return -1;
    }
    const char *nl = memchr(code, '\n', len);
    if (nl == NULL) {
        snprintf(err, errlen, "ERR Invalid library metadata");
        return -1;
    }
    *body = (size_t)(nl - code);
    char *line = dup_n(code, *body);
    char *argv[64];
    uint32_t lens[64];
    int total = 0;
    int n = util_split_inline(line, *body, argv, lens, 64, &total);
    int rc = -1;
    bool have_name = false;
    if (n <= 0 || total > n) {
        snprintf(err, errlen, "ERR Invalid library metadata");
        goto out;
    }
    for (int i = 1; i < n; i++) {
        if (lens[i] >= 5 && strncasecmp(argv[i], "name=", 5) == 0) {
            if (have_name) {
                snprintf(err, errlen,
                         "ERR Invalid metadata value, name argument was given multiple times");
                goto out;
            }
            have_name = true;
            snprintf(name, namecap, "%.*s", (int)(lens[i] - 5), argv[i] + 5);
            if (lens[i] - 5 >= namecap || !name_ok(argv[i] + 5, lens[i] - 5)) {
                name[0] = '\0'; /* refused below */
            }
            continue;
        }
        snprintf(err, errlen, "ERR Invalid metadata value given: %.*s", (int)lens[i], argv[i]);
        goto out;
    }
    if (!have_name) {
        snprintf(err, errlen, "ERR Library name was not given");
        goto out;
    }
    if (name[0] == '\0') {
        snprintf(err, errlen,
                 "ERR Library names can only contain letters, numbers, or "
                 "underscores(_) and must be at least one character long");
        goto out;
    }
    if (!util_eq(argv[0] + 2, lens[0] - 2, "lua")) {
        snprintf(err, errlen, "ERR Engine '%.*s' not found", (int)lens[0] - 2, argv[0] + 2);
        goto out;
    }
    rc = 0;
out:
    free(line);
    return rc;
}

/* Load code into x (FUNCTION LOAD; replace: over a library of its name).
 * Returns the library, or NULL with Redis's error in err; on error x is as
 * it was. */
static library *ctx_load(fn_ctx *x, const char *code, size_t len, bool replace, char *err,
                         size_t errlen)
{
    char name[256];
    size_t body;
    if (parse_meta(code, len, name, sizeof(name), &body, err, errlen) != 0) {
        return NULL;
    }
    int old = lib_find(x, name);
    if (old >= 0 && !replace) {
        snprintf(err, errlen, "ERR Library '%s' already exists", name);
        return NULL;
    }
    ctx_open(x);
    lua_State *L = x->L;
    /* from the shebang's newline on, so that lines count as in the code */
    if (luaL_loadbuffer(L, code + body, len - body, "@user_function") != 0) {
        snprintf(err, errlen, "ERR Error compiling function: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return NULL;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, x->env_ref);
    lua_setfenv(L, -2);
    lua_newtable(L);
    P.cbs_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    P.fns = NULL;
    P.n = 0;
    int rc = script_vm_load(L, x->mode_ref, err, errlen);
    if (rc == 0 && P.n == 0) {
        snprintf(err, errlen, "ERR No functions registered");
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < P.n; i++) {
        const library *in;
        if (fn_find(x, P.fns[i].name, strlen(P.fns[i].name), &in) != NULL &&
            (old < 0 || in != x->libs[old])) {
            snprintf(err, errlen, "ERR Function %s already exists", P.fns[i].name);
            rc = -1;
        }
    }
    library *lib = NULL;
    if (rc == 0) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, x->fns_ref);
        if (old >= 0) {
            library *o = x->libs[old];
            for (int i = 0; i < o->nfns; i++) {
                lua_pushnil(L);
                lua_setfield(L, -2, o->fns[i].name);
            }
            lib_free(o);
            memmove(x->libs + old, x->libs + old + 1,
                    sizeof(library *) * (size_t)(x->nlibs - old - 1));
            x->nlibs--;
        }
        lua_rawgeti(L, LUA_REGISTRYINDEX, P.cbs_ref);
        for (int i = 0; i < P.n; i++) {
            lua_getfield(L, -1, P.fns[i].name);
            lua_setfield(L, -3, P.fns[i].name);
        }
        lua_pop(L, 2);
        lib = xmalloc(sizeof(*lib));
        lib->name = dup_n(name, strlen(name));
        lib->code = dup_n(code, len);
        lib->code_len = len;
        lib->fns = P.fns;
        lib->nfns = P.n;
        x->libs = xrealloc(x->libs, sizeof(library *) * (size_t)(x->nlibs + 1));
        x->libs[x->nlibs++] = lib;
        counts_update(x);
    } else {
        fns_free(P.fns, P.n);
    }
    luaL_unref(L, LUA_REGISTRYINDEX, P.cbs_ref);
    P.fns = NULL;
    P.n = 0;
    lua_gc(L, LUA_GCSTEP, 1);
    return lib;
}

/* ------------------------------------------------------------------------
 * FCALL, FCALL_RO
 * ---------------------------------------------------------------------- */

static void run_info_set(bool on, const char *name, int argc, char **argv, uint32_t *lens)
{
    pthread_mutex_lock(&R.mu);
    R.on = on;
    free(R.name);
    R.name = NULL;
    R.cmd.len = 0;
    if (on) {
        R.name = dup_n(name, strlen(name));
        resp_array(&R.cmd, argc);
        for (int i = 0; i < argc; i++) {
            resp_bulk(&R.cmd, argv[i], lens[i]);
        }
        R.t0_ns = cudis_mono_ns();
    } else {
        sbuf_free(&R.cmd);
    }
    pthread_mutex_unlock(&R.mu);
}

static void fcall_generic(conn *c, int argc, char **argv, uint32_t *lens, bool ro)
{
    loop *lp = c->lp;
    bool locked = excl_begin(lp);
    const fn_info *f = fn_find(&F, argv[1], lens[1], NULL);
    long long numkeys;
    if (f == NULL) {
        conn_error(c, "ERR Function not found");
    } else if (!util_str2ll(argv[2], lens[2], &numkeys)) {
        conn_error(c, "ERR Bad number of keys provided");
    } else if (numkeys > argc - 3) {
        conn_error(c, "ERR Number of keys can't be greater than number of args");
    } else if (numkeys < 0) {
        conn_error(c, "ERR Number of keys can't be negative");
    } else if (ro && !(f->flags & FN_NO_WRITES)) {
        conn_error(c, "ERR Can not execute a script with write flag using *_ro command.");
    } else {
        lua_State *L = F.L;
        lua_rawgeti(L, LUA_REGISTRYINDEX, F.fns_ref);
        lua_getfield(L, -1, f->name);
        lua_remove(L, -2);
        script_call call = {.name = f->name,
                            .numkeys = (int)numkeys,
                            .fn = true,
                            .ro = ro || (f->flags & FN_NO_WRITES),
                            .one_slot = !(f->flags & FN_CROSS_SLOT)};
        run_info_set(true, f->name, argc, argv, lens);
        script_run(c, L, &call, argc, argv, lens);
        run_info_set(false, NULL, 0, NULL, NULL);
    }
    excl_end(lp, locked);
}

void cmd_fcall(conn *c, int argc, char **argv, uint32_t *lens)
{
    fcall_generic(c, argc, argv, lens, false);
}

void cmd_fcall_ro(conn *c, int argc, char **argv, uint32_t *lens)
{
    fcall_generic(c, argc, argv, lens, true);
}

/* ------------------------------------------------------------------------
 * FUNCTION
 * ---------------------------------------------------------------------- */

static void syntax_error(conn *c, char **argv, uint32_t *lens)
{
    conn_errorf(c,
                "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try FUNCTION "
                "HELP.",
                (int)(lens[1] < 64 ? lens[1] : 64), argv[1]);
}

void cmd_function_load(conn *c, int argc, char **argv, uint32_t *lens)
{
    bool replace = false;
    int i = 2;
    for (; i < argc - 1; i++) {
        if (util_eq(argv[i], lens[i], "replace")) {
            replace = true;
        } else {
            conn_errorf(c, "ERR Unknown option given: %.*s", (int)(lens[i] < 64 ? lens[i] : 64),
                        argv[i]);
            return;
        }
    }
    char err[1024];
    library *lib = ctx_load(&F, argv[i], lens[i], replace, err, sizeof(err));
    if (lib == NULL) {
        conn_error(c, err);
        return;
    }
    resp_bulks(&c->out, lib->name);
}

void cmd_function_delete(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc;
    char name[256];
    snprintf(name, sizeof(name), "%.*s", (int)(lens[2] < 255 ? lens[2] : 255), argv[2]);
    int i = lens[2] < 255 ? lib_find(&F, name) : -1;
    if (i < 0) {
        conn_error(c, "ERR Library not found");
        return;
    }
    library *lib = F.libs[i];
    lua_rawgeti(F.L, LUA_REGISTRYINDEX, F.fns_ref);
    for (int k = 0; k < lib->nfns; k++) {
        lua_pushnil(F.L);
        lua_setfield(F.L, -2, lib->fns[k].name);
    }
    lua_pop(F.L, 1);
    lib_free(lib);
    memmove(F.libs + i, F.libs + i + 1, sizeof(library *) * (size_t)(F.nlibs - i - 1));
    F.nlibs--;
    counts_update(&F);
    lua_gc(F.L, LUA_GCSTEP, 1);
    reply_ok(c);
}

static void reply_library(conn *c, const library *lib, bool with_code)
{
    sbuf *o = &c->out;
    resp_map(o, with_code ? 4 : 3, c->proto);
    resp_bulks(o, "library_name");
    resp_bulks(o, lib->name);
    resp_bulks(o, "engine");
    resp_bulks(o, "LUA");
    resp_bulks(o, "functions");
    resp_array(o, lib->nfns);
    for (int i = 0; i < lib->nfns; i++) {
        const fn_info *f = &lib->fns[i];
        resp_map(o, 3, c->proto);
        resp_bulks(o, "name");
        resp_bulks(o, f->name);
        resp_bulks(o, "description");
        if (f->desc != NULL) {
            resp_bulks(o, f->desc);
        } else {
            resp_null(o, c->proto);
        }
        resp_bulks(o, "flags");
        int n = 0;
        for (int k = 0; FLAGS[k].name != NULL; k++) {
            n += (f->flags & FLAGS[k].bit) != 0;
        }
        resp_set(o, n, c->proto);
        for (int k = 0; FLAGS[k].name != NULL; k++) {
            if (f->flags & FLAGS[k].bit) {
                resp_status(o, FLAGS[k].name);
            }
        }
    }
    if (with_code) {
        resp_bulks(o, "library_code");
        resp_bulk(o, lib->code, lib->code_len);
    }
}

void cmd_function_list(conn *c, int argc, char **argv, uint32_t *lens)
{
    bool with_code = false;
    const char *pat = NULL;
    size_t plen = 0;
    for (int i = 2; i < argc; i++) {
        if (!with_code && util_eq(argv[i], lens[i], "withcode")) {
            with_code = true;
        } else if (pat == NULL && util_eq(argv[i], lens[i], "libraryname")) {
            if (i >= argc - 1) {
                conn_error(c, "ERR library name argument was not given");
                return;
            }
            pat = argv[++i];
            plen = lens[i];
        } else {
            conn_errorf(c, "ERR Unknown argument %.*s", (int)(lens[i] < 64 ? lens[i] : 64),
                        argv[i]);
            return;
        }
    }
    int n = 0;
    for (int i = 0; i < F.nlibs; i++) {
        const library *lib = F.libs[i];
        n += pat == NULL || util_glob_match(pat, plen, lib->name, strlen(lib->name), true);
    }
    resp_array(&c->out, n);
    for (int i = 0; i < F.nlibs; i++) {
        const library *lib = F.libs[i];
        if (pat == NULL || util_glob_match(pat, plen, lib->name, strlen(lib->name), true)) {
            reply_library(c, lib, with_code);
        }
    }
}

void cmd_function_stats(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    sbuf *o = &c->out;
    pthread_mutex_lock(&R.mu);
    if (script_busy() && !R.on) { /* a script (EVAL) is what runs */
        pthread_mutex_unlock(&R.mu);
        conn_errorf(c, "BUSY %s", script_busy_msg());
        return;
    }
    resp_map(o, 2, c->proto);
    resp_bulks(o, "running_script");
    if (R.on) {
        resp_map(o, 3, c->proto);
        resp_bulks(o, "name");
        resp_bulks(o, R.name);
        resp_bulks(o, "command");
        sbuf_add(o, R.cmd.p, R.cmd.len);
        resp_bulks(o, "duration_ms");
        resp_int(o, (long long)((cudis_mono_ns() - R.t0_ns) / 1000000));
    } else {
        resp_null(o, c->proto);
    }
    pthread_mutex_unlock(&R.mu);
    resp_bulks(o, "engines");
    resp_map(o, 1, c->proto);
    resp_bulks(o, "LUA");
    resp_map(o, 2, c->proto);
    resp_bulks(o, "libraries_count");
    resp_int(o, atomic_load(&n_libs));
    resp_bulks(o, "functions_count");
    resp_int(o, atomic_load(&n_fns));
}

void cmd_function_flush(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (argc > 3) {
        syntax_error(c, argv, lens);
        return;
    }
    if (argc == 3 && !util_eq(argv[2], lens[2], "sync") && !util_eq(argv[2], lens[2], "async")) {
        conn_error(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    ctx_destroy(&F);
    reply_ok(c);
}

void cmd_function_kill(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    script_kill(c, true);
}

void function_rdb_put(sbuf *d)
{
    for (int i = 0; i < F.nlibs; i++) {
        uint8_t op = RDB_OPCODE_FUNCTION2;
        sbuf_add(d, &op, 1);
        rdb_put_string(d, F.libs[i]->code, F.libs[i]->code_len);
    }
}

int function_rdb_load(const uint8_t *code, uint32_t n, char *err, size_t errlen)
{
    return ctx_load(&F, (const char *)code, n, false, err, errlen) == NULL ? -1 : 0;
}

void cmd_function_dump(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    sbuf d = {0};
    function_rdb_put(&d);
    rdb_put_footer(&d);
    resp_bulk(&c->out, d.p, d.len);
    sbuf_free(&d);
}

/* Merge what a RESTORE loaded (from) into F: APPEND fails on any library
 * or function F has, REPLACE replaces libraries of the same name. */
static int merge(fn_ctx *from, bool replace, char *err, size_t errlen)
{
    for (int i = 0; i < from->nlibs; i++) {
        const library *lib = from->libs[i];
        int same = lib_find(&F, lib->name);
        if (same >= 0 && !replace) {
            snprintf(err, errlen, "ERR Library %s already exists", lib->name);
            return -1;
        }
        for (int k = 0; k < lib->nfns; k++) {
            const library *in;
            const char *fname = lib->fns[k].name;
            if (fn_find(&F, fname, strlen(fname), &in) != NULL &&
                (same < 0 || in != F.libs[same])) {
                snprintf(err, errlen, "ERR Function %s already exists", fname);
                return -1;
            }
        }
    }
    for (int i = 0; i < from->nlibs; i++) {
        if (ctx_load(&F, from->libs[i]->code, from->libs[i]->code_len, true, err, errlen) == NULL) {
            return -1; /* (only a load timeout: it loaded once already) */
        }
    }
    return 0;
}

void cmd_function_restore(conn *c, int argc, char **argv, uint32_t *lens)
{
    if (argc > 4) {
        syntax_error(c, argv, lens);
        return;
    }
    enum { APPEND, REPLACE, FLUSH } policy = APPEND;
    if (argc == 4) {
        if (util_eq(argv[3], lens[3], "append")) {
            policy = APPEND;
        } else if (util_eq(argv[3], lens[3], "replace")) {
            policy = REPLACE;
        } else if (util_eq(argv[3], lens[3], "flush")) {
            policy = FLUSH;
        } else {
            conn_error(c, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or "
                          "REPLACE.");
            return;
        }
    }
    const uint8_t *pl = (const uint8_t *)argv[2];
    if (!rdb_footer_ok(pl, lens[2])) {
        conn_error(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    rdb_reader r = {pl, pl + lens[2] - 10};
    fn_ctx fresh = {0};
    char err[1024] = "";
    int rc = 0;
    while (rc == 0 && r.p < r.end) {
        if (*r.p++ != RDB_OPCODE_FUNCTION2) {
            snprintf(err, sizeof(err), "ERR given type is not a function");
            rc = -1;
            break;
        }
        uint32_t n;
        uint8_t *code = rdb_get_string(&r, &n);
        if (code == NULL) {
            snprintf(err, sizeof(err), "ERR failed loading the given functions payload");
            rc = -1;
            break;
        }
        if (ctx_load(&fresh, (const char *)code, n, false, err, sizeof(err)) == NULL) {
            rc = -1;
        }
        free(code);
    }
    if (rc == 0 && policy == FLUSH) {
        ctx_destroy(&F);
        F = fresh;
        memset(&fresh, 0, sizeof(fresh));
        counts_update(&F);
    } else if (rc == 0) {
        rc = merge(&fresh, policy == REPLACE, err, sizeof(err));
    }
    ctx_destroy(&fresh);
    if (rc != 0) {
        conn_error(c, err);
        return;
    }
    reply_ok(c);
}

void cmd_function_help(conn *c, int argc, char **argv, uint32_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    static const char *const lines[] = {
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME "
        "argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored "
        "using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a "
        "restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
        "abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
        "replace the old",
        "      libraries with the new libraries (notice that even on this option there is a "
        "chance of failure",
        "      in case of functions name collision with another library).",
        "HELP",
        "    Prints this help.",
        NULL};
    help_reply(c, "FUNCTION", lines);
}

/* ------------------------------------------------------------------------
 * INFO, MEMORY, shutdown
 * ---------------------------------------------------------------------- */

uint64_t function_memory(void)
{
    if (F.L == NULL) {
        return 0;
    }
    return (uint64_t)lua_gc(F.L, LUA_GCCOUNT, 0) * 1024 + (uint64_t)lua_gc(F.L, LUA_GCCOUNTB, 0);
}

uint64_t function_overhead(void)
{
    uint64_t n = 0;
    for (int i = 0; i < F.nlibs; i++) {
        const library *lib = F.libs[i];
        n += sizeof(*lib) + strlen(lib->name) + lib->code_len + sizeof(fn_info) * (size_t)lib->nfns;
        for (int k = 0; k < lib->nfns; k++) {
            n += strlen(lib->fns[k].name) + (lib->fns[k].desc ? strlen(lib->fns[k].desc) : 0);
        }
    }
    return n;
}

int function_count(void)
{
    return atomic_load(&n_fns);
}

int library_count(void)
{
    return atomic_load(&n_libs);
}

void function_shutdown(void)
{
    ctx_destroy(&F);
    run_info_set(false, NULL, 0, NULL, NULL);
}
