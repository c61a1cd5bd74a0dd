/* test_config.c - the option table: defaults, parsing, CONFIG SET errors,
 * and that conf/cudis.conf is exactly what the table generates. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return b;
}

Test(config, conf_file_matches_table)
{
    char *gen = NULL;
    size_t glen = 0;
    FILE *m = open_memstream(&gen, &glen);
    config_write_conf(m);
    fclose(m);
    size_t flen;
    char *file = slurp(CUDIS_SOURCE_DIR "/conf/cudis.conf", &flen);
    cr_assert(flen == glen && memcmp(file, gen, glen) == 0,
              "conf/cudis.conf differs from the option table: regenerate it with "
              "cudis-server --print-conf > conf/cudis.conf");
    /* and loading it gives every default */
    srv_config a, b;
    config_defaults(&a);
    config_defaults(&b);
    char err[512];
    cr_assert_eq(config_load_text(&b, file, err, sizeof(err)), 0, "%s", err);
    for (size_t i = 0; i < config_table_len; i++) {
        sbuf va = {0}, vb = {0};
        config_get(&a, &config_table[i], &va);
        config_get(&b, &config_table[i], &vb);
        cr_assert(va.len == vb.len && (va.len == 0 || memcmp(va.p, vb.p, va.len) == 0),
                  "option %s", config_table[i].name);
        cr_assert(strstr(file, config_table[i].desc) != NULL, "no description of %s",
                  config_table[i].name);
        sbuf_free(&va);
        sbuf_free(&vb);
    }
    config_free(&a);
    config_free(&b);
    free(file);
    free(gen);
}

Test(config, parse_and_errors)
{
    srv_config c;
    config_defaults(&c);
    char err[512];
    cr_assert_eq(c.port, 6379);
    cr_assert_eq(c.maxmemory, 1024LL * 1024 * 1024);
    cr_assert_eq(config_load_text(&c, "# comment\nport 7000\nmaxmemory 1gb\nbind 127.0.0.1 ::1\n"
                                      "protected-mode no\nrequirepass \"a b\"\n"
                                      "client-output-buffer-limit normal 1mb 512kb 10\n",
                                  err, sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(c.port, 7000);
    cr_assert_eq(c.maxmemory, 1073741824LL);
    cr_assert_str_eq(c.bind, "127.0.0.1 ::1");
    cr_assert(!c.protected_mode);
    cr_assert_str_eq(c.requirepass, "a b");
    cr_assert_eq(c.obuf_hard, 1024 * 1024);
    cr_assert_eq(c.obuf_soft, 512 * 1024);
    cr_assert_eq(c.obuf_soft_secs, 10);
    cr_assert_neq(config_load_text(&c, "nosuch 1\n", err, sizeof(err)), 0);
    cr_assert(strstr(err, "Bad directive or wrong number of arguments"), "%s", err);
    cr_assert_neq(config_load_text(&c, "port 99999\n", err, sizeof(err)), 0);
    cr_assert(strstr(err, "argument must be between 0 and 65535 inclusive"), "%s", err);

    const config_option *o = config_find("PORT");
    cr_assert(o != NULL);
    cr_assert_neq(config_set(&c, o, "7001", true, err, sizeof(err)), 0);
    cr_assert_str_eq(err, "can't set immutable config");
    o = config_find("protected-mode");
    cr_assert_neq(config_set(&c, o, "maybe", true, err, sizeof(err)), 0);
    cr_assert_str_eq(err, "argument must be 'yes' or 'no'");
    o = config_find("engine");
    cr_assert_neq(config_set(&c, o, "redis", false, err, sizeof(err)), 0);
    cr_assert(strstr(err, "argument(s) must be one of the following: auto, cpu"), "%s", err);
    cr_assert_eq(config_set(&c, o, "LRU", false, err, sizeof(err)), 0);
    cr_assert_str_eq(c.engine, "lru");
    o = config_find("maxclients");
    cr_assert_neq(config_set(&c, o, "abc", true, err, sizeof(err)), 0);
    cr_assert_str_eq(err, "argument couldn't be parsed into an integer");
    o = config_find("client-output-buffer-limit");
    cr_assert_neq(config_set(&c, o, "bogus 1 2 3", true, err, sizeof(err)), 0);
    sbuf v = {0};
    config_get(&c, o, &v);
    sbuf_add(&v, "", 1);
    cr_assert_str_eq(v.p, "normal 1048576 524288 10 slave 268435456 67108864 60 pubsub "
                          "33554432 8388608 60");
    sbuf_free(&v);
    /* Redis's CPU lists: CPUs, ranges, ranges with a step; anything else refused */
    o = config_find("bgsave_cpulist");
    cr_assert(o != NULL);
    const char *good[] = {"", "0", "0,2", "0-3", "0-7:2", "1,4-5,8-15:3", "0-1023"};
    for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
        cr_assert_eq(config_set(&c, o, good[i], false, err, sizeof(err)), 0, "%s: %s", good[i],
                     err);
        cr_assert_str_eq(c.bgsave_cpulist, good[i]);
    }
    const char *bad[] = {"x",    "1-",  "3-1", "0,",   ",0",    "0-4:0",
                         "0-4:", "1 2", "-1",  "1024", "0-1024"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        cr_assert_neq(config_set(&c, o, bad[i], false, err, sizeof(err)), 0, "%s", bad[i]);
        cr_assert_str_eq(err, "Invalid CPU list");
    }
    cr_assert(util_cpulist_valid("0-3:2"));
    cr_assert(!util_cpulist_valid("0-3:2,"));
    cr_assert_eq(util_cpulist_pin(""), 0);
    cr_assert_neq(util_cpulist_pin("1-0"), 0);
    config_free(&c);
}
