/*
 * cudis_alloc.c - the checked allocator (see cudis_alloc.h).
 */
#include "cudis_alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void default_oom(size_t size)
{
    char line[96];
    int n =
        snprintf(line, sizeof(line), "cudis: Out of memory trying to allocate %zu bytes\n", size);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line));
        (void)w;
    }
}

static _Atomic(void (*)(size_t)) oom_handler = default_oom;

void cudis_set_oom_handler(void (*handler)(size_t size))
{
    atomic_store(&oom_handler, handler != NULL ? handler : default_oom);
}

static void oom(size_t size)
{
    atomic_load (&oom_handler)(size);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        oom(n);
    }
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) {
        oom(SIZE_MAX);
    }
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p == NULL) {
        oom(count * size);
    }
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL) {
        oom(n);
    }
    return q;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}
