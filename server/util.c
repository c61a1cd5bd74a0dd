/*
 * util.c - string helpers with Redis's exact rules: glob matching, inline
 * splitting, integer/size/long double parsing and formatting, CPU lists
 * (Redis's *_cpulist options), and sbuf.
 */
#define _GNU_SOURCE /* CPU_SET, pthread_setaffinity_np */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cudis_op.h"

/* ------------------------------------------------------------------------
 * Glob matching (stringmatchlen semantics, with bounds checks)
 * ---------------------------------------------------------------------- */

static int lower(int c)
{
    return tolower(c & 0xff);
}

static bool glob_impl(const char *pat, size_t plen, const char *str, size_t slen, bool nocase,
                      bool *skip_longer, int nesting)
{
    if (nesting > 1000) {
        return false;
    }
    while (plen > 0 && slen > 0) {
        switch (pat[0]) {
        case '*':
            while (plen > 1 && pat[1] == '*') {
                pat++;
                plen--;
            }
            if (plen == 1) {
                return true;
            }
            while (slen > 0) {
                if (glob_impl(pat + 1, plen - 1, str, slen, nocase, skip_longer, nesting + 1)) {
                    return true;
                }
                if (*skip_longer) {
                    return false;
                }
                str++;
                slen--;
            }
            *skip_longer = true;
            return false;
        case '?':
            str++;
            slen--;
            break;
        case '[': {
            pat++;
            plen--;
            bool neg = plen > 0 && pat[0] == '^';
            if (neg) {
                pat++;
                plen--;
            }
            bool match = false;
            for (;;) {
                if (plen == 0) {
                    pat--;
                    plen++;
                    break;
                } else if (pat[0] == '\\' && plen >= 2) {
                    pat++;
                    plen--;
                    if (pat[0] == str[0]) {
                        match = true;
                    }
                } else if (pat[0] == ']') {
                    break;
                } else if (plen >= 3 && pat[1] == '-') {
                    int start = (unsigned char)pat[0], end = (unsigned char)pat[2];
                    int c = (unsigned char)str[0];
                    if (start > end) {
                        int t = start;
                        start = end;
                        end = t;
                    }
                    if (nocase) {
                        start = lower(start);
                        end = lower(end);
                        c = lower(c);
                    }
                    pat += 2;
                    plen -= 2;
                    if (c >= start && c <= end) {
                        match = true;
                    }
                } else if (!nocase ? pat[0] == str[0] : lower(pat[0]) == lower(str[0])) {
                    match = true;
                }
                pat++;
                plen--;
            }
            if (neg) {
                match = !match;
            }
            if (!match) {
                return false;
            }
            str++;
            slen--;
            break;
        }
        case '\\':
            if (plen >= 2) {
                pat++;
                plen--;
            }
            /* fall through */
        default:
            if (!nocase ? pat[0] != str[0] : lower(pat[0]) != lower(str[0])) {
                return false;
            }
            str++;
            slen--;
            break;
        }
        pat++;
        plen--;
        if (slen == 0) {
            while (plen > 0 && *pat == '*') {
                pat++;
                plen--;
            }
            break;
        }
    }
    return plen == 0 && slen == 0;
}

bool util_glob_match(const char *pat, size_t plen, const char *str, size_t slen, bool nocase)
{
    bool skip = false;
    return glob_impl(pat, plen, str, slen, nocase, &skip, 0);
}

/* ------------------------------------------------------------------------
 * Inline commands
 * ---------------------------------------------------------------------- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = lower(c);
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

int util_split_inline(char *line, size_t len, char **argv, uint32_t *lens, int max_args,
                      int *total)
{
    char *p = line, *end = line + len;
    int n = 0;
#define AT(q) ((q) < end ? *(q) : '\0')
    for (;;) {
        while (p < end && *p != '\0' && isspace((unsigned char)*p)) {
            p++;
        }
        if (p >= end || *p == '\0') {
            break;
        }
        bool inq = false, insq = false, done = false;
        char *w = p, *start = p;
        while (!done) {
            char ch = AT(p);
            if (inq) {
                if (ch == '\\' && AT(p + 1) == 'x' && hexval(AT(p + 2)) >= 0 &&
                    hexval(AT(p + 3)) >= 0) {
                    *w++ = (char)(hexval(AT(p + 2)) * 16 + hexval(AT(p + 3)));
                    p += 3;
                } else if (ch == '\\' && AT(p + 1) != '\0') {
                    p++;
                    char c;
                    switch (*p) {
                    case 'n': c = '\n'; break;
                    case 'r': c = '\r'; break;
                    case 't': c = '\t'; break;
                    case 'b': c = '\b'; break;
                    case 'a': c = '\a'; break;
                    default: c = *p; break;
                    }
                    *w++ = c;
                } else if (ch == '"') {
                    if (AT(p + 1) != '\0' && !isspace((unsigned char)AT(p + 1))) {
                        return -1;
                    }
                    done = true;
                } else if (ch == '\0') {
                    return -1;
                } else {
                    *w++ = ch;
                }
            } else if (insq) {
                if (ch == '\\' && AT(p + 1) == '\'') {
                    p++;
                    *w++ = '\'';
                } else if (ch == '\'') {
                    if (AT(p + 1) != '\0' && !isspace((unsigned char)AT(p + 1))) {
                        return -1;
                    }
                    done = true;
                } else if (ch == '\0') {
                    return -1;
                } else {
                    *w++ = ch;
                }
            } else {
                switch (ch) {
                case ' ':
                case '\n':
                case '\r':
                case '\t':
                case '\0': done = true; break;
                case '"': inq = true; break;
                case '\'': insq = true; break;
                default: *w++ = ch; break;
                }
            }
            if (p < end) {
                p++;
            }
        }
        if (n < max_args) {
            argv[n] = start;
            lens[n] = (uint32_t)(w - start);
        }
        n++;
    }
#undef AT
    if (total) {
        *total = n;
    }
    return n;
}

/* ------------------------------------------------------------------------
 * Numbers
 * ---------------------------------------------------------------------- */

bool util_str2ll(const char *s, size_t len, long long *out)
{
    if (len == 0 || len > 20) {
        return false;
    }
    int64_t v;
    if (!cudis_str2ll((const uint8_t *)s, (uint32_t)len, &v)) {
        return false;
    }
    *out = v;
    return true;
}

bool util_parse_memory(const char *s, long long *out)
{
    const char *u = s;
    if (*u == '-') {
        u++;
    }
    const char *digits = u;
    while (*u && isdigit((unsigned char)*u)) {
        u++;
    }
    if (u == digits) {
        return false;
    }
    long long mul;
    if (*u == '\0' || !strcasecmp(u, "b")) {
        mul = 1;
    } else if (!strcasecmp(u, "k")) {
        mul = 1000;
    } else if (!strcasecmp(u, "kb")) {
        mul = 1024;
    } else if (!strcasecmp(u, "m")) {
        mul = 1000 * 1000;
    } else if (!strcasecmp(u, "mb")) {
        mul = 1024 * 1024;
    } else if (!strcasecmp(u, "g")) {
        mul = 1000LL * 1000 * 1000;
    } else if (!strcasecmp(u, "gb")) {
        mul = 1024LL * 1024 * 1024;
    } else {
        return false;
    }
    char buf[32];
    size_t n = (size_t)(u - s);
    if (n >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE) {
        return false;
    }
    if (v != 0 && (v > LLONG_MAX / mul || v < LLONG_MIN / mul)) {
        return false;
    }
    *out = v * mul;
    return true;
}

#define LD_CHARS (5 * 1024)

bool util_str2ld(const char *s, size_t len, long double *out)
{
    char buf[LD_CHARS];
    if (len == 0 || len >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *eptr;
    errno = 0;
    long double v = strtold(buf, &eptr);
    /* the whole text, to its last byte: "1\0" is not a number (Redis's string2ld) */
    if (isspace((unsigned char)buf[0]) || eptr != buf + len ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) ||
        errno == EINVAL || isnan(v)) {
        return false;
    }
    *out = v;
    return true;
}

int util_ld2str(char *buf, size_t cap, long double v)
{
    if (isinf(v)) {
        if (cap < 5) {
            return 0;
        }
        if (v > 0) {
            memcpy(buf, "inf", 4);
            return 3;
        }
        memcpy(buf, "-inf", 5);
        return 4;
    }
    int l = snprintf(buf, cap, "%.17Lf", v);
    if (l < 0 || (size_t)l + 1 > cap) {
        return 0;
    }
    if (strchr(buf, '.') != NULL) {
        char *p = buf + l - 1;
        while (*p == '0') {
            p--;
            l--;
        }
        if (*p == '.') {
            l--;
        }
    }
    if (l == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        l = 1;
    }
    buf[l] = '\0';
    return l;
}

bool util_eq(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    return n == len && strncasecmp(s, lit, len) == 0;
}

/* ------------------------------------------------------------------------
 * sbuf
 * ---------------------------------------------------------------------- */

void sbuf_reserve(sbuf *b, size_t n)
{
    if (b->cap - b->len >= n) {
        return;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        cap *= 2;
    }
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
}

void sbuf_add(sbuf *b, const void *data, size_t n)
{
    if (n == 0) {
        return;
    }
    sbuf_reserve(b, n);
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

void sbuf_adds(sbuf *b, const char *s)
{
    sbuf_add(b, s, strlen(s));
}

void sbuf_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t)n < sizeof(tmp)) {
        sbuf_add(b, tmp, (size_t)n);
        return;
    }
    sbuf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

bool sbuf_read_file(sbuf *b, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return false;
    }
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
        sbuf_add(b, tmp, n);
    }
    bool ok = !ferror(f);
    int e = errno;
    fclose(f);
    errno = e;
    sbuf_add(b, "", 1);
    return ok;
}

void sbuf_free(sbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

void util_give_back_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* ------------------------------------------------------------------------
 * CPU lists
 * ---------------------------------------------------------------------- */

static bool cpu_num(const char **p, long *out)
{
    if (!isdigit((unsigned char)**p)) {
        return false;
    }
    char *end;
    errno = 0;
    long x = strtol(*p, &end, 10);
    if (errno != 0 || x >= CPU_SETSIZE) {
        return false;
    }
    *p = end;
    *out = x;
    return true;
}

static bool cpulist_parse(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    const char *p = s;
    while (*p != '\0') {
        long a, b, step = 1;
        if (!cpu_num(&p, &a)) {
            return false;
        }
        b = a;
        if (*p == '-') {
            p++;
            if (!cpu_num(&p, &b) || b < a) {
                return false;
            }
            if (*p == ':') {
                p++;
                if (!cpu_num(&p, &step) || step == 0) {
                    return false;
                }
            }
        }
        for (long i = a; i <= b; i += step) {
            CPU_SET((int)i, set);
        }
        if (*p == ',') {
            p++;
            if (*p == '\0') {
                return false;
            }
        } else if (*p != '\0') {
            return false;
        }
    }
    return true;
}

bool util_cpulist_valid(const char *s)
{
    cpu_set_t set;
    return cpulist_parse(s, &set);
}

int util_cpulist_pin(const char *s)
{
    cpu_set_t set;
    if (s == NULL || *s == '\0') {
        return 0;
    }
    if (!cpulist_parse(s, &set)) {
        return EINVAL;
    }
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void util_thread_name(const char *name)
{
    (void)pthread_setname_np(pthread_self(), name);
}
