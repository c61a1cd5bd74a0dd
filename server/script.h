/*
 * script.h - Lua scripting (EVAL and its kin, SCRIPT): see script.c. The
 * command handlers come from commands.h; here are the libraries the Lua
 * state gets that cudis itself provides.
 */
#ifndef SERVER_SCRIPT_H
#define SERVER_SCRIPT_H

#include <lua.h>

/* The `struct` library (lua_struct.c). */
int luaopen_struct(lua_State *L);

/* Free the Lua state at shutdown (no-op when none was made). */
void script_shutdown(void);

#endif /* SERVER_SCRIPT_H */
