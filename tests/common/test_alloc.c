/*
 * test_alloc.c - the checked allocator: what it returns, and that a failed
 * allocation runs the out-of-memory handler with the size asked for and
 * then aborts (never returns NULL).
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cudis_alloc.h"

Test(alloc, returns_usable_memory)
{
    char *p = xmalloc(100);
    memset(p, 'a', 100);
    p = xrealloc(p, 1 << 20);
    cr_assert_eq(p[99], 'a', "xrealloc keeps the contents");
    free(p);
    uint64_t *z = xcalloc(1000, sizeof(uint64_t));
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(z[i], 0);
    }
    free(z);
    free(xmalloc(0)); /* a pointer, not NULL, for size 0 */
    char *s = xstrdup("hello");
    cr_assert_str_eq(s, "hello");
    free(s);
    s = xstrndup("hello world", 5);
    cr_assert_str_eq(s, "hello");
    free(s);
    s = xstrndup("hi", 10);
    cr_assert_str_eq(s, "hi");
    free(s);
}

static void exit_with_size(size_t size)
{
    _exit(size == SIZE_MAX ? 42 : size == (SIZE_MAX >> 1) ? 43 : 44);
}

/* count * size overflows: the handler gets SIZE_MAX */
Test(alloc, calloc_overflow_runs_handler, .exit_code = 42)
{
    cudis_set_oom_handler(exit_with_size);
    void *p = xcalloc(SIZE_MAX / 2, 4);
    cr_assert_fail("xcalloc returned %p", p);
}

/* an allocation the C library refuses: the handler gets the size asked for
 * (ASan is told to return NULL too: tests/common/CMakeLists.txt) */
Test(alloc, refused_size_runs_handler, .exit_code = 43)
{
    cudis_set_oom_handler(exit_with_size);
    void *p = xmalloc(SIZE_MAX >> 1);
    cr_assert_fail("xmalloc returned %p", p);
}

/* the default handler writes a line and the process aborts */
Test(alloc, default_aborts, .signal = SIGABRT)
{
    cudis_set_oom_handler(NULL);
    void *p = xrealloc(NULL, SIZE_MAX >> 1);
    cr_assert_fail("xrealloc returned %p", p);
}
