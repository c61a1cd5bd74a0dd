/*
 * script.h - Lua scripting (EVAL and its kin, SCRIPT): see script.c. The
 * command handlers come from commands.h; here are the libraries the Lua
 * state gets that cudis itself provides, and the run path that functions
 * (function.c: FUNCTION, FCALL) share with scripts. All of it runs on the
 * loop of the command, with the engine held exclusively (excl_begin) or
 * under a CMD_EXCL command.
 */
#ifndef SERVER_SCRIPT_H
#define SERVER_SCRIPT_H

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The `struct` library (lua_struct.c). */
int luaopen_struct(lua_State *L);

/* Free the Lua state at shutdown (no-op when none was made). */
void script_shutdown(void);

typedef struct conn conn;

/* A fresh Lua state as scripts get it (libraries, the redis API, the
 * guarded globals, the busy hook); the caller closes it with lua_close.
 * *env_ref: a registry reference to the environment code runs in (set it
 * with lua_setfenv). With register_fn (functions' states), *mode_ref
 * refers to what script_vm_load switches with, and the load API's
 * redis.register_function is register_fn. Never NULL (aborts on OOM). */
lua_State *script_vm_create(int *env_ref, int *mode_ref, lua_CFunction register_fn);

/* Run the compiled chunk on top of L's stack (popped) as a library's body
 * at FUNCTION LOAD: it sees only the load API (redis.register_function,
 * redis.log, the LOG_ constants, REDIS_VERSION) and may run 500 ms.
 * Returns 0, or -1 with Redis's message in err ("ERR Error registering
 * functions: ..."). */
int script_vm_load(lua_State *L, int mode_ref, char *err, size_t errlen);

/* What script_run runs. */
typedef struct script_call {
    const char *name; /* the SHA-1 of a script, the name of a function */
    int numkeys;      /* argv[3 .. 3+numkeys) are keys, the rest args */
    bool fn;          /* a function: gets (keys, args); FUNCTION KILL kills it */
    bool ro;          /* write commands fail (EVAL_RO, FCALL_RO, no-writes) */
    bool one_slot;    /* cluster mode: keys it touches stay in its declared keys' slot
                       * (functions without allow-cross-slot-keys; not EVAL, as Redis) */
} script_call;

/* Run the Lua function on top of L's stack (popped) for c, whose command
 * is argv (EVAL/FCALL name numkeys key... arg...): its reply or Redis's
 * error goes to c->out. Blocks until it ends; past busy-reply-threshold it
 * serves its loop between instructions. */
void script_run(conn *c, lua_State *L, const script_call *call, int argc, char **argv,
                uint32_t *lens);

/* SCRIPT KILL (fn false) / FUNCTION KILL (fn true): replies to c. Any
 * loop. */
void script_kill(conn *c, bool fn);

/* Drop every library at shutdown (function.c). */
void function_shutdown(void);

#endif /* SERVER_SCRIPT_H */
