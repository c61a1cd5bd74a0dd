/*
 * util.h - small string helpers the server shares: Redis's glob matcher
 * (stringmatchlen semantics), in-place splitting of inline commands with
 * Redis's quoting rules, number parsing and formatting with Redis's exact
 * rules (string2ll, memory sizes with k/kb/m/mb/g/gb suffixes, long double
 * text for INCRBYFLOAT) and a growable byte buffer used for replies.
 */
#ifndef SERVER_UTIL_H
#define SERVER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cudis_alloc.h"

/* Glob match of string against pattern (`*`, `?`, `[...]`, `[^...]`,
 * ranges, `\` escapes), as Redis's stringmatchlen. Returns true on match. */
bool util_glob_match(const char *pat, size_t plen, const char *str, size_t slen, bool nocase);

/* Split an inline command line in place (Redis's sdssplitargs rules: "..."
 * with \n \r \t \b \a \\ \" \xHH escapes, '...' with \' only). Pointers and
 * lengths of up to max_args args go to argv/lens; the text is rewritten in
 * place (never grows). Returns the arg count, or -1 on unbalanced quotes
 * (or a closing quote not followed by a space). */
int util_split_inline(char *line, size_t len, char **argv, uint32_t *lens, int max_args,
                      int *total);

/* Redis's string2ll on (s, len). */
bool util_str2ll(const char *s, size_t len, long long *out);

/* Memory size as Redis's memtoll: digits with optional b/k/kb/m/mb/g/gb
 * (case-insensitive; k = 1000, kb = 1024). Returns false when invalid. */
bool util_parse_memory(const char *s, long long *out);

/* Redis's string2ld (strtold, no leading space, no trailing bytes, no NaN). */
bool util_str2ld(const char *s, size_t len, long double *out);

/* INCRBYFLOAT's text of v (Redis's ld2string LD_STR_HUMAN); returns length
 * or 0 when it does not fit. */
int util_ld2str(char *buf, size_t cap, long double v);

/* Case-insensitive equality of (s, len) with the NUL-terminated lit. */
bool util_eq(const char *s, size_t len, const char *lit);

/* Whether s is a CPU list as Redis's server_cpulist and bgsave_cpulist
 * take: comma-separated CPUs or ranges "a-b", a range with a step "a-b:s"
 * ("0-7:2" is 0,2,4,6); "" (none) is valid. */
bool util_cpulist_valid(const char *s);
/* Pin the calling thread to the CPUs of list s ("": left as it is).
 * Returns 0, or an errno value (the list names no CPU this machine has). */
int util_cpulist_pin(const char *s);
/* Name the calling thread (top, ps -L, /proc/PID/task/TID/comm: at most
 * 15 characters). */
void util_thread_name(const char *name);

/* A growable byte buffer. */
typedef struct sbuf {
    char *p;
    size_t len;
    size_t cap;
} sbuf;

/* Make room for n more bytes; returns false on allocation failure. */
void sbuf_reserve(sbuf *b, size_t n); /* aborts when out of memory */
void sbuf_add(sbuf *b, const void *data, size_t n);
void sbuf_adds(sbuf *b, const char *s);
void sbuf_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_free(sbuf *b);
/* A whole file appended to b, and a NUL (counted in b->len): b->p is then
 * a C string. False (errno set) when it cannot be opened or read. */
bool sbuf_read_file(sbuf *b, const char *path);

/* After big buffers were freed: have the allocator return free memory to
 * the system (glibc keeps it in its heaps otherwise; jemalloc, which
 * Redis uses, does so by itself). */
void util_give_back_memory(void);

#endif /* SERVER_UTIL_H */
