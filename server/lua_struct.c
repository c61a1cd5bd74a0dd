/*
 * lua_struct.c - the `struct` library Redis gives scripts (Roberto
 * Ierusalimschy's format language): struct.pack(fmt, ...),
 * struct.unpack(fmt, s [, pos]) and struct.size(fmt).
 *
 * Format: '<' little endian, '>' big, '=' native (little here); '!n'
 * alignment n (no number: 8; none until one is given); 'x' a zero byte; 'b'/'B' signed /
 * unsigned char; 'h'/'H' short; 'l'/'L' long (8 bytes); 'T' size_t; 'in'/'In'
 * a signed / unsigned integer of n bytes (default 4); 'f' float; 'd'
 * double; 's' a zero-terminated string; 'cn' n chars ('c0': as many as the
 * number unpacked just before, or the whole string when packing); spaces
 * are ignored. A number no 64-bit integer holds packs as Redis packs it
 * on x86-64 (NaN and below -2^63: 0x8000000000000000; 2^64 and up: 0);
 * 'i0' packs nothing and unpacks 0.
 */
#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>
#include <string.h>

#include "script.h"

#define MAXINTSIZE 32
#define MAXALIGN 8

typedef struct header {
    int little;
    int align;
} header;

static int getnum(const char **fmt, int df)
{
    if (**fmt < '0' || **fmt > '9') {
        return df;
    }
    int a = 0;
    do {
        a = a * 10 + *((*fmt)++) - '0';
    } while (**fmt >= '0' && **fmt <= '9' && a < 100000);
    return a;
}

static size_t optsize(lua_State *L, char opt, const char **fmt)
{
    switch (opt) {
    case 'B':
    case 'b': return 1;
    case 'H':
    case 'h': return 2;
    case 'L':
    case 'l': return 8;
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return (size_t)getnum(fmt, 1);
    case 'i':
    case 'I': {
        int sz = getnum(fmt, 4);
        if (sz > MAXINTSIZE) {
            luaL_error(L, "integral size %d is larger than limit of %d", sz, MAXINTSIZE);
        }
        return (size_t)sz;
    }
    default: return 0; /* other cases do not need alignment */
    }
}

static int gettoalign(size_t len, const header *h, int opt, size_t size)
{
    if (size == 0 || opt == 'c') {
        return 0;
    }
    if (size > (size_t)h->align) {
        size = (size_t)h->align; /* respect max. alignment */
    }
    return (int)((size - (len & (size - 1))) & (size - 1));
}

static void controloptions(lua_State *L, int opt, const char **fmt, header *h)
{
    switch (opt) {
    case ' ': return;
    case '>': h->little = 0; return;
    case '<': h->little = 1; return;
    case '=': h->little = 1; return;
    case '!': {
        int a = getnum(fmt, MAXALIGN);
        if (a <= 0 || (a & (a - 1)) != 0) {
            luaL_error(L, "alignment %d is not a power of 2", a);
        }
        h->align = a;
        return;
    }
    default: luaL_error(L, "invalid format option '%c'", opt);
    }
}

static void putinteger(lua_State *L, luaL_Buffer *b, int arg, int little, int size)
{
    lua_Number n = luaL_checknumber(L, arg);
    uint64_t value;
    /* a number no 64-bit integer holds gives what Redis's casts give on
     * x86-64 (in C the cast is undefined): NaN and values below -2^63
     * 0x8000000000000000, values from 2^64 up 0 */
    if (n != n || n < -9223372036854775808.0) {
        value = (uint64_t)1 << 63;
    } else if (n < 0) {
        value = (uint64_t)(int64_t)n;
    } else {
        value = n >= 18446744073709551616.0 ? 0 : (uint64_t)n;
    }
    char buff[MAXINTSIZE];
    for (int i = 0; i < size; i++) {
        int at = little ? i : size - 1 - i;
        buff[at] = i < 8 ? (char)(value >> (8 * i)) : (char)(n < 0 ? 0xff : 0);
    }
    luaL_addlstring(b, buff, (size_t)size);
}

static void correctbytes(char *b, int size, int little)
{
    if (!little) { /* native is little endian here */
        for (int i = 0, j = size - 1; i < j; i++, j--) {
            char t = b[i];
            b[i] = b[j];
            b[j] = t;
        }
    }
}

static int b_pack(lua_State *L)
{
    luaL_Buffer b;
    const char *fmt = luaL_checkstring(L, 1);
    header h = {1, 1}; /* no alignment until !n */
    int arg = 2;
    size_t totalsize = 0;
    lua_pushnil(L); /* mark to separate arguments from string buffer */
    luaL_buffinit(L, &b);
    while (*fmt != '\0') {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        int toalign = gettoalign(totalsize, &h, opt, size);
        totalsize += (size_t)toalign;
        while (toalign-- > 0) {
            luaL_addchar(&b, '\0');
        }
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I': putinteger(L, &b, arg++, h.little, (int)size); break;
        case 'x': luaL_addchar(&b, '\0'); break;
        case 'f': {
            float f = (float)luaL_checknumber(L, arg++);
            correctbytes((char *)&f, (int)size, h.little);
            luaL_addlstring(&b, (char *)&f, size);
            break;
        }
        case 'd': {
            double d = luaL_checknumber(L, arg++);
            correctbytes((char *)&d, (int)size, h.little);
            luaL_addlstring(&b, (char *)&d, size);
            break;
        }
        case 'c':
        case 's': {
            size_t l;
            const char *s = luaL_checklstring(L, arg++, &l);
            if (size == 0) {
                size = l;
            }
            luaL_argcheck(L, l >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default: controloptions(L, opt, &fmt, &h);
        }
        totalsize += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static lua_Number getinteger(const char *buff, int little, int issigned, int size)
{
    uint64_t l = 0;
    for (int i = 0; i < size; i++) {
        uint8_t byte = (uint8_t)buff[little ? size - 1 - i : i];
        l = (l << 8) | byte;
    }
    if (!issigned) {
        return (lua_Number)l;
    }
    if (size > 0 && size < 8) { /* 'i0' reads no byte: 0 */
        uint64_t mask = (uint64_t)1 << (size * 8 - 1);
        l = (l ^ mask) - mask; /* sign extension */
    }
    return (lua_Number)(int64_t)l;
}

static int b_unpack(lua_State *L)
{
    header h = {1, 1}; /* no alignment until !n */
    const char *fmt = luaL_checkstring(L, 1);
    size_t ld;
    const char *data = luaL_checklstring(L, 2, &ld);
    size_t pos = (size_t)luaL_optinteger(L, 3, 1) - 1;
    int n = 0; /* number of results */
    luaL_argcheck(L, pos <= ld, 3, "offset must be 1 or greater");
    while (*fmt) {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        pos += (size_t)gettoalign(pos, &h, opt, size);
        luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I': {
            int issigned = opt >= 'a' && opt <= 'z';
            lua_pushnumber(L, getinteger(data + pos, h.little, issigned, (int)size));
            n++;
            break;
        }
        case 'x': break;
        case 'f': {
            float f;
            memcpy(&f, data + pos, size);
            correctbytes((char *)&f, sizeof(f), h.little);
            lua_pushnumber(L, f);
            n++;
            break;
        }
        case 'd': {
            double d;
            memcpy(&d, data + pos, size);
            correctbytes((char *)&d, sizeof(d), h.little);
            lua_pushnumber(L, d);
            n++;
            break;
        }
        case 'c': {
            if (size == 0) {
                if (n == 0 || !lua_isnumber(L, -1)) {
                    luaL_error(L, "format 'c0' needs a previous size");
                }
                /* checked before the cast: a negative or huge size is undefined as size_t */
                lua_Number want = lua_tonumber(L, -1);
                luaL_argcheck(L, want >= 0 && want <= (lua_Number)(ld - pos), 2,
                              "data string too short");
                size = (size_t)want;
                lua_pop(L, 1);
                n--;
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        }
        case 's': {
            const char *e = memchr(data + pos, '\0', ld - pos);
            if (e == NULL) {
                luaL_error(L, "unfinished string in data");
            }
            size = (size_t)(e - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default: controloptions(L, opt, &fmt, &h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos + 1); /* next position */
    return n + 1;
}

static int b_size(lua_State *L)
{
    header h = {1, 1}; /* no alignment until !n */
    const char *fmt = luaL_checkstring(L, 1);
    size_t pos = 0;
    while (*fmt) {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        pos += (size_t)gettoalign(pos, &h, opt, size);
        if (opt == 's') {
            luaL_argerror(L, 1, "options 's' has no fixed size");
        } else if (opt == 'c' && size == 0) {
            luaL_argerror(L, 1, "options 'c0' has no fixed size");
        }
        if (!(opt >= 'a' && opt <= 'z') && !(opt >= 'A' && opt <= 'Z')) {
            controloptions(L, opt, &fmt, &h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

static const luaL_Reg struct_lib[] = {
    {"pack", b_pack}, {"unpack", b_unpack}, {"size", b_size}, {NULL, NULL}};

int luaopen_struct(lua_State *L)
{
    luaL_register(L, "struct", struct_lib);
    return 1;
}
