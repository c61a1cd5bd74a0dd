/*
 * cudis_alloc.h - the checked allocator: one out-of-memory policy for every
 * long-running part of cudis (the server first), as Redis's zmalloc. The
 * x* functions never return NULL: when the C library cannot allocate, the
 * out-of-memory handler runs (by default it writes one line to stderr) and
 * the process aborts. A request or a reply is therefore never silently
 * dropped or cut short because a buffer could not grow; the process stops
 * loudly instead, where a supervisor restarts it.
 *
 * Code that can report an allocation failure to its caller (an engine
 * creating its table, a store refusing an item) keeps using malloc and
 * returns CUDIS_E_NOMEM; these functions are for the places that cannot.
 */
#ifndef CUDIS_ALLOC_H
#define CUDIS_ALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* n bytes of s and a terminating NUL */
char *xstrndup(const char *s, size_t n);

/* Called with the size that could not be allocated, before abort(); it
 * must not allocate. NULL restores the default (a line on stderr). */
void cudis_set_oom_handler(void (*handler)(size_t size));

#endif /* CUDIS_ALLOC_H */
