/*
 * fuzz_dispatch.c - commands over a live in-process server: the input is
 * what one client sends. The server is made once (engine "cpu", 4 MB, one
 * loop, no listener: server_state_setup, server_engine_setup,
 * server_loops_setup); each input gets a fresh connection, one end of a
 * socketpair handed to the loop as an accepted unix-socket client, and
 * goes through the path a connection's reads take (conn_read_once: query
 * buffer, RESP parser, dispatch, batches, replies), written in up to three
 * pieces, then end of stream. The target plays the event loop (the batch
 * flushed, the replies written, after each read) and the client (it reads
 * every reply). Checked: no sanitizer report, no leak, the connection ends
 * and is freed, and everything the server wrote is well-formed RESP2/RESP3
 * (a reply cut short by the connection closing may end it).
 * FUZZ_DISPATCH_PRINT=1 in the environment prints what each input sent
 * (after the filter) and what the server answered.
 *
 * Left out, because they would block, stop or outlive the run (a command
 * is dropped from the input, its bytes and all, before the server sees it):
 *   SHUTDOWN (ends the process), WAIT (blocks the client), CLIENT PAUSE
 *   (holds every client), CONFIG SET of proto-max-bulk-len (values up to
 *   4 GB), loglevel (floods stdout) and maxclients (changes the process's
 *   open-file limit), FUNCTION RESTORE (loads code the script check below
 *   never saw);
 *   scripts (EVAL, EVAL_RO, SCRIPT LOAD, FUNCTION LOAD) that might not end
 *   or grow without bound: any with a loop, a function definition (a
 *   library may have one anonymous callback and no assignment, so it cannot
 *   call itself), load/loadstring, string.rep/format/gsub/find/match,
 *   table.concat, '..' or the debug library.
 * Between runs the state a run may leave is reset: the database map
 * (SWAPDB), and sent ahead of the next input on its connection, when the
 * last run needs them, CONFIG SET of each option that differs from the
 * target's value (requirepass is put back directly, so that connection
 * starts authenticated), the ACL users and log as acl_setup makes them
 * (when a run changed them), FLUSHALL, SCRIPT FLUSH, FUNCTION FLUSH, SLOWLOG RESET
 * and LATENCY RESET.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server_internal.h"

/* Small enough that FLUSHALL between runs is cheap; proto-max-bulk-len
 * bounds every value (SETRANGE, SETBIT offsets) and LCS's table. */
static const char FUZZ_CONF[] = "engine cpu\n"
                                "maxmemory 4mb\n"
                                "io-threads 1\n"
                                "engine-pipeline no\n"
                                "proto-max-bulk-len 1mb\n"
                                "client-query-buffer-limit 1mb\n"
                                "loglevel nothing\n";

static char **saved_cfg;        /* CONFIG GET text of every option after FUZZ_CONF */
static bool dirty_scripts;      /* the last run had a script or a function */
static uint64_t acl_clean;      /* acl_changes() when the users were as acl_setup makes them */
static sbuf replies;            /* what the server wrote this run */
static bool replies_cut;        /* past REPLIES_MAX: the rest was dropped */
#define REPLIES_MAX (64u << 20) /* beyond it, the rest is read and dropped */

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_dispatch: %s\n", what);
    abort();
}

static char dump_dir[] = "/tmp/cudis-fuzz-dispatch-XXXXXX";

/* The run's dump.rdb and temp files go with it. */
static void dump_dir_remove(void)
{
    DIR *d = opendir(dump_dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') {
            char p[sizeof(dump_dir) + 300];
            snprintf(p, sizeof(p), "%s/%s", dump_dir, e->d_name);
            unlink(p);
        }
    }
    if (d != NULL) {
        closedir(d);
    }
    rmdir(dump_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    signal(SIGPIPE, SIG_IGN);
    server_state_setup();
    char err[1024];
    if (config_load_text(&srv.cfg, FUZZ_CONF, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    /* SAVE, BGSAVE and the save schedule write their files in a directory
     * of this run's own */
    if (mkdtemp(dump_dir) == NULL ||
        config_set(&srv.cfg, config_find("dir"), dump_dir, false, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_dispatch: no directory for dump.rdb\n");
        exit(1);
    }
    atexit(dump_dir_remove);
    log_setup();
    cmd_table_setup();
    if (acl_setup(err, sizeof(err)) != 0 || server_engine_setup() != 0) {
        exit(1);
    }
    acl_clean = acl_changes();
    server_loops_setup();
    saved_cfg = xcalloc(config_table_len, sizeof(char *));
    for (size_t i = 0; i < config_table_len; i++) {
        sbuf v = {0};
        config_get(&srv.cfg, &config_table[i], &v);
        sbuf_add(&v, "", 1);
        saved_cfg[i] = v.p;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * What is left out of the input
 * ---------------------------------------------------------------------- */

static size_t count_of(const char *s, size_t n, const char *word)
{
    size_t w = strlen(word), k = 0;
    for (size_t i = 0; i + w <= n; i++) {
        if (memcmp(s + i, word, w) == 0) {
            k++;
        }
    }
    return k;
}

/* Whether a script (library: FUNCTION LOAD's code) surely ends soon and
 * stays small. Conservative: substrings, not tokens. */
static bool script_bounded(const char *s, uint32_t n, bool library)
{
    static const char *const words[] = {"while",  "repeat", "for",   "goto", "load",
                                        "gsub",   "find",   "match", "..",   "format",
                                        "concat", "debug",  NULL};
    for (int i = 0; words[i] != NULL; i++) {
        if (count_of(s, n, words[i]) > 0) {
            return false;
        }
    }
    /* string.rep, but not error_reply / status_reply / set_repl */
    if (count_of(s, n, "rep") != count_of(s, n, "repl")) {
        return false;
    }
    size_t fns = count_of(s, n, "function") - count_of(s, n, "register_function");
    if (!library) {
        return fns == 0;
    }
    const char *nl = memchr(s, '\n', n); /* after "#!lua name=..." */
    size_t body = nl ? (size_t)(nl - s) : n;
    return fns <= 1 && memchr(s + body, '=', n - body) == NULL;
}

static bool is(char **argv, uint32_t *lens, int argc, int i, const char *name)
{
    return i < argc && util_eq(argv[i], lens[i], name);
}

static bool allowed(int argc, char **argv, uint32_t *lens, bool *scripts)
{
    static const char *const scripting[] = {"eval",  "eval_ro",  "evalsha",  "evalsha_ro", "script",
                                            "fcall", "fcall_ro", "function", NULL};
    for (int i = 0; scripting[i] != NULL; i++) {
        if (is(argv, lens, argc, 0, scripting[i])) {
            *scripts = true;
        }
    }
    if (is(argv, lens, argc, 0, "shutdown") || is(argv, lens, argc, 0, "wait")) {
        return false;
    }
    if (is(argv, lens, argc, 0, "client") && is(argv, lens, argc, 1, "pause")) {
        return false;
    }
    if (is(argv, lens, argc, 0, "config") && is(argv, lens, argc, 1, "set")) {
        for (int i = 2; i < argc; i += 2) {
            if (is(argv, lens, argc, i, "proto-max-bulk-len") ||
                is(argv, lens, argc, i, "loglevel") || is(argv, lens, argc, i, "maxclients")) {
                return false;
            }
        }
    }
    if ((is(argv, lens, argc, 0, "eval") || is(argv, lens, argc, 0, "eval_ro")) && argc > 1) {
        return script_bounded(argv[1], lens[1], false);
    }
    if (is(argv, lens, argc, 0, "script") && is(argv, lens, argc, 1, "load") && argc > 2) {
        return script_bounded(argv[2], lens[2], false);
    }
    if (is(argv, lens, argc, 0, "function") && is(argv, lens, argc, 1, "restore")) {
        return false;
    }
    if (is(argv, lens, argc, 0, "function") && is(argv, lens, argc, 1, "load")) {
        for (int i = 2; i < argc; i++) {
            if (!script_bounded(argv[i], lens[i], true)) {
                return false;
            }
        }
    }
    return true;
}

/* The input less the commands left out: parsed as the connection will
 * parse it (same parser, same limits), each allowed command's bytes kept
 * as they are (inline or multibulk), the unparsed rest (a partial command
 * or a protocol error, where the connection stops) kept too. */
static void filter_input(const uint8_t *data, size_t size, sbuf *out, bool *scripts)
{
    char *copy = xmalloc(size ? size : 1);
    memcpy(copy, data, size);
    resp_parser p;
    resp_parser_init(&p);
    p.max_bulk = srv.cfg.proto_max_bulk_len;
    size_t pos = 0, last = 0;
    while (resp_parse(&p, copy, size, &pos) == RESP_CMD) {
        if (allowed(p.argc, p.argv, p.arg_len, scripts)) {
            sbuf_add(out, data + last, pos - last);
        }
        last = pos;
    }
    sbuf_add(out, data + last, size - last);
    resp_parser_deinit(&p);
    free(copy);
}

/* ------------------------------------------------------------------------
 * RESP2/RESP3 well-formedness of what the server wrote
 * ---------------------------------------------------------------------- */

#define INCOMPLETE SIZE_MAX

static void malformed(const char *p, size_t n, size_t at, const char *why)
{
    size_t from = at > 64 ? at - 64 : 0, to = at + 64 < n ? at + 64 : n;
    fprintf(stderr, "reply at byte %zu of %zu: %s\naround it: ", at, n, why);
    for (size_t i = from; i < to; i++) {
        unsigned char ch = (unsigned char)p[i];
        fprintf(stderr, ch >= 0x20 && ch < 0x7f ? "%c" : "\\x%02x", ch);
    }
    fprintf(stderr, "\n");
    fail("the server wrote malformed RESP");
}

/* Offset of the CR ending the line that starts at `at`; INCOMPLETE. */
static size_t line_end(const char *p, size_t n, size_t at)
{
    for (size_t i = at; i < n; i++) {
        if (p[i] == '\r') {
            if (i + 1 >= n) {
                return INCOMPLETE;
            }
            if (p[i + 1] != '\n') {
                malformed(p, n, i, "a CR inside a line");
            }
            return i;
        }
        if (p[i] == '\n') {
            malformed(p, n, i, "an LF inside a line");
        }
    }
    return INCOMPLETE;
}

static bool number_of(const char *s, size_t len, long long *v)
{
    return util_str2ll(s, len, v);
}

static bool all_of(const char *s, size_t len, const char *chars)
{
    for (size_t i = 0; i < len; i++) {
        if (strchr(chars, s[i]) == NULL) {
            return false;
        }
    }
    return true;
}

/* End of the reply at `at`, or INCOMPLETE; malformed() on a bad one. */
static size_t check_reply(const char *p, size_t n, size_t at, int depth)
{
    if (at >= n) {
        return INCOMPLETE;
    }
    if (depth > 128) {
        malformed(p, n, at, "nested more than 128 deep");
    }
    char type = p[at];
    size_t e = line_end(p, n, at + 1);
    if (e == INCOMPLETE) {
        return INCOMPLETE;
    }
    const char *s = p + at + 1;
    size_t len = e - at - 1, next = e + 2;
    long long v = 0;
    switch (type) {
    case '+':
    case '-': return next;
    case ':':
        if (!number_of(s, len, &v)) {
            malformed(p, n, at, "an integer reply that is not one");
        }
        return next;
    case '(':
        if (len == 0 || !all_of(s + (s[0] == '-'), len - (s[0] == '-'), "0123456789")) {
            malformed(p, n, at, "a big number that is not one");
        }
        return next;
    case ',':
        if (len == 0 ||
            !(all_of(s, len, "0123456789.eE+-") || (len == 3 && !memcmp(s, "inf", 3)) ||
              (len == 4 && !memcmp(s, "-inf", 4)) || (len == 3 && !memcmp(s, "nan", 3)))) {
            malformed(p, n, at, "a double that is not one");
        }
        return next;
    case '#':
        if (len != 1 || (s[0] != 't' && s[0] != 'f')) {
            malformed(p, n, at, "a boolean that is not #t or #f");
        }
        return next;
    case '_':
        if (len != 0) {
            malformed(p, n, at, "a null with text");
        }
        return next;
    case '$':
    case '!':
    case '=':
        if (!number_of(s, len, &v) || v < (type == '$' ? -1 : 0)) {
            malformed(p, n, at, "a bad bulk length");
        }
        if (v == -1) {
            return next;
        }
        if ((unsigned long long)v + 2 > n - next) {
            return INCOMPLETE;
        }
        if (p[next + (size_t)v] != '\r' || p[next + (size_t)v + 1] != '\n') {
            malformed(p, n, next + (size_t)v, "a bulk string not followed by CRLF");
        }
        if (type == '=' && (v < 4 || p[next + 3] != ':')) {
            malformed(p, n, at, "a verbatim string without its format");
        }
        return next + (size_t)v + 2;
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
        if (!number_of(s, len, &v) || v < (type == '*' ? -1 : 0)) {
            malformed(p, n, at, "a bad aggregate length");
        }
        unsigned long long elems = (unsigned long long)(v < 0 ? 0 : v);
        if (type == '%' || type == '|') {
            elems *= 2;
        }
        for (unsigned long long i = 0; i < elems; i++) {
            next = check_reply(p, n, next, depth + 1);
            if (next == INCOMPLETE) {
                return INCOMPLETE;
            }
        }
        /* an attribute is followed by the reply it describes */
        return type == '|' ? check_reply(p, n, next, depth + 1) : next;
    }
    default: malformed(p, n, at, "an unknown type byte");
    }
    return INCOMPLETE;
}

static void check_replies(const sbuf *b)
{
    size_t at = 0;
    while (at < b->len) {
        at = check_reply(b->p, b->len, at, 0);
    }
}

/* ------------------------------------------------------------------------
 * One run
 * ---------------------------------------------------------------------- */

/* The client reads everything the server wrote. */
static void read_replies(int fd)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        if (replies.len + (size_t)n > REPLIES_MAX) {
            replies_cut = true;
        }
        if (!replies_cut) {
            sbuf_add(&replies, buf, (size_t)n);
        }
    }
}

/* The loop's part after a read: the open batch runs, the replies go out
 * (as loop_run and the write callbacks do); the client reads them. */
static void serve_round(loop *lp, int peer)
{
    loop_flush(lp, SEAL_IDLE);
    loop_drain(lp);
    for (int i = 0; i < 1000; i++) {
        read_replies(peer);
        conn *c = lp->clients;
        if (c == NULL || (c->flags & CONN_CLOSING) || c->out_sent == c->out.len) {
            return;
        }
        conn_write(c);
        loop_drain(lp);
    }
}

/* A command as multibulk (binary-safe). */
static void put_cmd(sbuf *b, int argc, const char *const *argv)
{
    sbuf_printf(b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        sbuf_printf(b, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    }
}

static void reset_state(sbuf *prefix)
{
    /* Options back to what they were after FUZZ_CONF: requirepass here,
     * so the next connection starts authenticated; the others by CONFIG
     * SET ahead of the input, so what setting them does beyond the field
     * (the engine's budget and policy) is undone too. */
    for (size_t i = 0; i < config_table_len; i++) {
        const config_option *o = &config_table[i];
        sbuf v = {0};
        config_get(&srv.cfg, o, &v);
        sbuf_add(&v, "", 1);
        char err[256];
        if (strcmp(v.p, saved_cfg[i]) == 0) {
            /* unchanged */
        } else if (strcmp(o->name, "requirepass") == 0) {
            if (config_set(&srv.cfg, o, saved_cfg[i], false, err, sizeof(err)) != 0) {
                fail(err);
            }
        } else {
            const char *argv[4] = {"CONFIG", "SET", o->name, saved_cfg[i]};
            put_cmd(prefix, 4, argv);
        }
        sbuf_free(&v);
    }
    if (acl_changes() != acl_clean) { /* users, passwords, the log */
        char err[256];
        acl_teardown();
        if (acl_setup(err, sizeof(err)) != 0) {
            fail(err);
        }
        acl_clean = acl_changes();
    }
    for (int i = 0; i < CUDIS_MAX_DBS; i++) {
        atomic_store(&srv.db_map[i], (uint8_t)i);
    }
    bool keys = false;
    for (int db = 0; db < srv.cfg.databases && !keys; db++) {
        keys = engine_db_size(srv.eng, (uint8_t)db) > 0;
    }
    if (keys || rdb_bgsave_running()) { /* (FLUSHALL also stops a BGSAVE) */
        sbuf_adds(prefix, "FLUSHALL\r\n");
    }
    if (dirty_scripts) {
        sbuf_adds(prefix, "SCRIPT FLUSH\r\nFUNCTION FLUSH\r\n");
    }
    /* statistics (INFO, CONFIG RESETSTAT) are left to grow: bounded, and
     * resetting them every run was a tenth of the time */
    sbuf_adds(prefix, "SLOWLOG RESET\r\nLATENCY RESET\r\n");
    dirty_scripts = false;
}

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loop *lp = &srv.loops[0];
    sbuf in = {0};
    reset_state(&in);
    filter_input(data, size, &in, &dirty_scripts);

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        fail("socketpair");
    }
    int peer = sv[1];
    fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK);
    atomic_fetch_add(&srv.connected, 1); /* as accept_cb does */
    loop_hand_fd(sv[0], true);
    if (lp->clients == NULL || lp->clients->next != NULL) {
        fail("the connection is not the loop's only client");
    }

    /* up to three pieces, at offsets the input decides */
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ size;
    for (size_t i = 0; i < size && i < 16; i++) {
        seed = (seed ^ data[i]) * 0x100000001b3ull;
    }
    seed |= 1;
    size_t off = 0;
    int pieces = 0, round = 0;
    replies.len = 0;
    replies_cut = false;
    for (; round < 1000 && lp->clients != NULL; round++) {
        if (off < in.len) {
            size_t n = in.len - off;
            if (++pieces < 3) {
                size_t cut = (size_t)(next_rand(&seed) % (in.len + 1));
                n = cut < n ? cut : n;
            }
            while (n > 0) {
                ssize_t w = write(peer, in.p + off, n);
                if (w < 0 && errno == EINTR) {
                    continue;
                }
                if (w < 0 && errno == EAGAIN) {
                    break; /* the server reads the rest in a later round */
                }
                if (w <= 0) {
                    off = in.len; /* the server closed (QUIT, an error): the rest is moot */
                    break;
                }
                off += (size_t)w;
                n -= (size_t)w;
            }
            if (off == in.len) {
                shutdown(peer, SHUT_WR);
            }
        }
        conn *c = lp->clients;
        if (!(c->flags & CONN_CLOSING)) {
            conn_read_once(c);
        }
        serve_round(lp, peer);
    }
    if (lp->clients != NULL) {
        fail("the connection did not end within 1000 rounds");
    }
    read_replies(peer);
    close(peer);
    check_replies(&replies);
    if (getenv("FUZZ_DISPATCH_PRINT") != NULL) { /* to see what a corpus file does */
        fprintf(stderr, "--- sent:\n%.*s\n--- answered:\n%.*s\n", (int)in.len, in.p,
                (int)replies.len, replies.p);
    }
    sbuf_free(&in);
    return 0;
}
