/*
 * fuzz_config.c - the config-file parser (config_load_text: Redis's line
 * format, quoting, every option type of the table) over a fresh srv_config
 * each run, never the server's. After a load, whatever its outcome, every
 * option must round-trip: the text CONFIG GET shows is accepted by
 * config_set and shows the same again (what CONFIG GET prints, CONFIG SET
 * and the config file take back). A failed load must leave a message.
 * config_free releases everything, so a leak is an error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static void fail(const config_option *o, const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_config: %s%s%s: %s\n", o ? "option " : "", o ? o->name : "", what,
            detail ? detail : "");
    abort();
}

static void check_round_trip(srv_config *c)
{
    for (size_t i = 0; i < config_table_len; i++) {
        const config_option *o = &config_table[i];
        sbuf before = {0}, after = {0};
        config_get(c, o, &before);
        sbuf_add(&before, "", 1);
        char err[256] = "";
        if (config_set(c, o, before.p, false, err, sizeof(err)) != 0) {
            fprintf(stderr, "value: '%s'\n", before.p);
            fail(o, ": the value CONFIG GET shows is refused", err);
        }
        config_get(c, o, &after);
        sbuf_add(&after, "", 1);
        if (strcmp(before.p, after.p) != 0) {
            fprintf(stderr, "before: '%s'\nafter:  '%s'\n", before.p, after.p);
            fail(o, ": setting the value CONFIG GET shows changes it", NULL);
        }
        sbuf_free(&before);
        sbuf_free(&after);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    srv_config c;
    config_defaults(&c);
    char err[1024];
    memset(err, 0x55, sizeof(err));
    if (config_load_text(&c, text, err, sizeof(err)) != 0) {
        if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0') {
            fail(NULL, "a failed load left no message", NULL);
        }
    }
    check_round_trip(&c);
    config_free(&c);
    free(text);
    return 0;
}
