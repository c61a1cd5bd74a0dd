/* test_glob.c - Redis's glob matching (stringmatchlen semantics) and the
 * number helpers INCRBYFLOAT and the config parser use. */
#include <criterion/criterion.h>
#include <string.h>

#include "util.h"

static bool m(const char *p, const char *s)
{
    return util_glob_match(p, strlen(p), s, strlen(s), false);
}

Test(glob, redis_cases)
{
    cr_assert(m("*", "anything"));
    cr_assert(!m("*", "")); /* as Redis: KEYS/SCAN special-case a lone "*" instead */
    cr_assert(m("a*", "a"));
    cr_assert(m("h?llo", "hello"));
    cr_assert(!m("h?llo", "hllo"));
    cr_assert(m("h*llo", "heeeello"));
    cr_assert(m("h*llo", "hllo"));
    cr_assert(m("h[ae]llo", "hallo"));
    cr_assert(!m("h[ae]llo", "hillo"));
    cr_assert(m("h[^e]llo", "hallo"));
    cr_assert(!m("h[^e]llo", "hello"));
    cr_assert(m("h[a-b]llo", "hbllo"));
    cr_assert(m("h[b-a]llo", "hallo"));
    cr_assert(!m("h[a-b]llo", "hcllo"));
    cr_assert(m("a\\*b", "a*b"));
    cr_assert(!m("a\\*b", "axb"));
    cr_assert(m("a[\\]]b", "a]b"));
    cr_assert(m("user:*:name", "user:1000:name"));
    cr_assert(!m("user:*:name", "user:1000:age"));
    cr_assert(!m("abc", "abcd"));
    cr_assert(m("abc*", "abc"));
    cr_assert(!m("*[", "x[")); /* as Redis: an unterminated class matches nothing */
    cr_assert(util_glob_match("HeLLo", 5, "hello", 5, true));
    cr_assert(!util_glob_match("HeLLo", 5, "hello", 5, false));
    char bin[3] = {'a', '\0', 'b'};
    cr_assert(util_glob_match("a?b", 3, bin, 3, false));
}

Test(glob, pathological_pattern_is_fast)
{
    char pat[200], str[200];
    for (int i = 0; i < 100; i++) {
        pat[2 * i] = 'a';
        pat[2 * i + 1] = '*';
    }
    memcpy(pat + 198, "b", 2);
    memset(str, 'a', 199);
    str[199] = '\0';
    cr_assert(!m(pat, str)); /* exponential without the skip-longer rule */
}

Test(glob, numbers)
{
    long long v;
    cr_assert(util_str2ll("-9223372036854775808", 20, &v) && v == INT64_MIN);
    cr_assert(!util_str2ll("9223372036854775808", 19, &v));
    cr_assert(!util_str2ll("01", 2, &v));
    cr_assert(!util_str2ll(" 1", 2, &v));
    cr_assert(util_parse_memory("1gb", &v) && v == 1073741824LL);
    cr_assert(util_parse_memory("512MB", &v) && v == 536870912LL);
    cr_assert(util_parse_memory("1k", &v) && v == 1000);
    cr_assert(util_parse_memory("100", &v) && v == 100);
    cr_assert(!util_parse_memory("12xb", &v));
    cr_assert(!util_parse_memory("", &v));
    long double d;
    cr_assert(util_str2ld("10.5", 4, &d) && d == 10.5L);
    cr_assert(!util_str2ld(" 1", 2, &d));
    cr_assert(!util_str2ld("1\0", 2, &d), "the whole text or nothing: an embedded NUL");
    cr_assert(!util_str2ld("1.5\0x", 5, &d));
    cr_assert(!util_str2ld("nan", 3, &d));
    cr_assert(!util_str2ld("1x", 2, &d));
    char buf[128];
    util_ld2str(buf, sizeof(buf), 10.5L + 0.1L);
    cr_assert_str_eq(buf, "10.6");
    util_ld2str(buf, sizeof(buf), 5.0e3L);
    cr_assert_str_eq(buf, "5000");
    util_ld2str(buf, sizeof(buf), -0.0L);
    cr_assert_str_eq(buf, "0");
}
