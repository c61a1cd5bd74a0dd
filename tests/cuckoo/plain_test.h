/*
 * plain_test.h - a minimal stand-in for the few Criterion macros the stress
 * test uses, so it can run under ThreadSanitizer: Criterion 2.4 aborts at
 * start-up under gcc's TSan ("Could not initialize inheritable arena",
 * Snaipe/Criterion#274). Tests register themselves; main() runs them in
 * order; a failed assertion prints file:line and aborts.
 */
#ifndef PLAIN_TEST_H
#define PLAIN_TEST_H

#include <stdio.h>
#include <stdlib.h>

typedef void (*plain_fn)(void);
static struct {
    const char *name;
    plain_fn fn;
} plain_tests[32];
static int plain_n;

static inline void plain_register(const char *name, plain_fn fn)
{
    plain_tests[plain_n].name = name;
    plain_tests[plain_n].fn = fn;
    plain_n++;
}

#define Test(suite, name, ...)                                                                  \
    static void suite##_##name(void);                                                           \
    __attribute__((constructor)) static void plain_reg_##suite##_##name(void)                   \
    {                                                                                           \
        plain_register(#suite "::" #name, suite##_##name);                                      \
    }                                                                                           \
    static void suite##_##name(void)

#define cr_assert(cond, ...)                                                                    \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond);        \
            abort();                                                                            \
        }                                                                                       \
    } while (0)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b))
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b))
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b))
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL)
#define cr_log_info(...)                                                                        \
    do {                                                                                        \
        fprintf(stderr, __VA_ARGS__);                                                           \
        fputc('\n', stderr);                                                                    \
    } while (0)

int main(void)
{
    for (int i = 0; i < plain_n; i++) {
        fprintf(stderr, "[RUN ] %s\n", plain_tests[i].name);
        plain_tests[i].fn();
        fprintf(stderr, "[PASS] %s\n", plain_tests[i].name);
    }
    fprintf(stderr, "%d tests passed\n", plain_n);
    return 0;
}

#endif /* PLAIN_TEST_H */
