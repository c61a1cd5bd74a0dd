/*
 * fuzz_acl.c - the ACL rule parser (server/acl.c: ACL SETUSER's rules,
 * `user` lines, the aclfile). Each input line is one rule (so a selector
 * "(~x +get)" may hold spaces) applied to a scratch user; a refused rule
 * must give a reason. Then the user's description, as ACL LIST shows it,
 * is applied to a fresh user and must give the same permissions: the
 * description is what ACL SAVE writes and ACL LOAD reads back (Redis 7.0
 * panics when its description does not reproduce the command bitmap).
 * The check is made when the description can be split back: no rule
 * holds a space or a parenthesis except a selector's own (Redis 7.0
 * describes "+select|a b" or "(~a) +get)" in words that split otherwise).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

static bool ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        config_defaults(&srv.cfg);
        cmd_table_setup();
        ready = true;
    }
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    acl_user *u = acl_scratch_user();
    bool splits = true; /* the description splits back into the same rules */
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        size_t n = strlen(line);
        bool sel = n >= 2 && line[0] == '(' && line[n - 1] == ')';
        for (size_t i = 0; i < n; i++) {
            bool paren = line[i] == '(' || line[i] == ')';
            bool space = isspace((unsigned char)line[i]);
            if ((paren && !(sel && (i == 0 || i == n - 1))) || (space && !sel) ||
                (space && sel && line[i] != ' ')) {
                splits = false;
            }
        }
        const char *why = NULL;
        if (!acl_scratch_apply(u, line, strlen(line), &why) && (why == NULL || !why[0])) {
            fprintf(stderr, "fuzz_acl: rule '%s' refused without a reason\n", line);
            abort();
        }
    }
    sbuf d = {0};
    acl_scratch_describe(u, &d);
    sbuf_add(&d, "", 1);
    acl_user *v = acl_scratch_user();
    char err[512];
    if (!acl_scratch_apply_line(v, d.p, err, sizeof(err))) {
        if (splits) {
            fprintf(stderr, "fuzz_acl: description '%s' refused: %s\n", d.p, err);
            abort();
        }
    } else if (splits && !acl_scratch_same(u, v)) {
        fprintf(stderr, "fuzz_acl: description '%s' gives other permissions\n", d.p);
        abort();
    }
    sbuf_free(&d);
    acl_scratch_free(u);
    acl_scratch_free(v);
    free(text);
    return 0;
}
