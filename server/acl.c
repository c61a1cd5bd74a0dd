/*
 * acl.c - users and their permissions, as Redis 7.0 defines them (acl.h):
 * the rules (ACLSetUser's language, errors in Redis's words), the
 * description ACL LIST and GETUSER give (Redis 7.0's: -@all or +@all, the
 * categories that fit best, then single commands), AUTH, the per-command
 * check with selectors, key patterns with read/write permissions and
 * channel patterns, the ACL log, the aclfile, and the ACL command.
 */
#include "acl.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include "cudis_time.h"
#include "server_internal.h"

#define ACL_R 1
#define ACL_W 2
#define ACL_RW 3

#define SEL_ROOT 0x1
#define SEL_ALLKEYS 0x2
#define SEL_ALLCHANNELS 0x4
#define SEL_ALLCOMMANDS 0x8

#define U_ENABLED 0x1
#define U_DISABLED 0x2
#define U_NOPASS 0x4
#define U_SANITIZE_SKIP 0x8
#define U_SANITIZE 0x10

#define HASH_HEX 64
#define LOG_GROUP_MS 60000

enum { PAT_GLOB, PAT_PREFIX, PAT_LITERAL };

typedef struct acl_pat {
    char *s;
    uint32_t len;
    uint8_t perm; /* ACL_R | ACL_W (channels: ACL_RW) */
    uint8_t kind; /* PAT_*: "cache:*" and "name" need no glob matcher */
} acl_pat;

typedef struct acl_sel {
    uint32_t flags;
    bool future;    /* +@all: "commands added later" too (Redis's reserved bit) */
    uint64_t *bits; /* one per command and subcommand (cmd_idx) */
    char ***first;  /* NULL, or per cmd_idx NULL or a NULL-ended list of first args */
    acl_pat *keys;
    int nkeys;
    acl_pat *chans;
    int nchans;
} acl_sel;

struct acl_user {
    char *name;
    uint32_t flags;
    char (*pw)[HASH_HEX + 1];
    int npw;
    acl_sel *sels; /* [0]: the root selector */
    int nsels;
    _Atomic int refs;
    bool deleted;
    _Atomic bool all; /* on the fast path: every command, key and channel */
};

typedef struct acl_log_entry {
    uint64_t count, id;
    int reason, context;
    char *object, *username, *cinfo;
    int64_t ctime_ms;   /* last update */
    int64_t created_ms; /* first event */
} acl_log_entry;

static const char *const cat_names[ACLC_COUNT] = {
    "keyspace", "read",   "write",      "set",     "sortedset", "list",       "hash",
    "string",   "bitmap", "hyperloglog", "geo",    "stream",    "pubsub",     "admin",
    "fast",     "slow",   "blocking",   "dangerous", "connection", "transaction", "scripting"};

static struct {
    acl_user **users; /* sorted by name */
    int nusers, cap;
    acl_user *def;
    _Atomic bool def_open, def_nopass;
    int ncmds, nwords;
    uint32_t *cats;
    const acl_spec **specs;
    bool *complete; /* its key specs find every key (else cmd_keys_of does) */
    char ***conf_users; /* `user` lines waiting for acl_setup: NULL-ended argv */
    int nconf;
    pthread_mutex_t log_mu;
    acl_log_entry **log; /* newest first */
    int nlog;
    uint64_t log_next_id; /* entry-id of the next new entry (Redis 7.2) */
    _Atomic uint64_t changes; /* users changed or denials logged (acl_changes) */
    _Atomic uint64_t denied[5]; /* per ACL_DENIED_* */
} A = {.log_mu = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------------------
 * Locks (acl.h): a check takes its loop's mutex, a change all of them
 * ---------------------------------------------------------------------- */

static void rlock(const conn *c)
{
    if (c != NULL && c->lp != NULL && srv.nloops > 0) {
        pthread_mutex_lock(&c->lp->acl_mu);
    }
}

static void runlock(const conn *c)
{
    if (c != NULL && c->lp != NULL && srv.nloops > 0) {
        pthread_mutex_unlock(&c->lp->acl_mu);
    }
}

static void wlock(void)
{
    for (int i = 0; i < srv.nloops; i++) {
        pthread_mutex_lock(&srv.loops[i].acl_mu);
    }
}

static void wunlock(void)
{
    atomic_fetch_add(&A.changes, 1);
    for (int i = srv.nloops - 1; i >= 0; i--) {
        pthread_mutex_unlock(&srv.loops[i].acl_mu);
    }
}

/* ------------------------------------------------------------------------
 * Commands: categories and key specs per cmd_idx
 * ---------------------------------------------------------------------- */

const char *acl_cat_name(int bit)
{
    return bit >= 0 && bit < ACLC_COUNT ? cat_names[bit] : NULL;
}

static uint32_t cat_by_name(const char *s, size_t n)
{
    for (int i = 0; i < ACLC_COUNT; i++) {
        if (strlen(cat_names[i]) == n && !strncasecmp(cat_names[i], s, n)) {
            return 1u << i;
        }
    }
    return 0;
}

/* A command redis-server does not have: its categories from its group
 * and flags, as Redis's setImplicitACLCategories would make them. */
static uint32_t fallback_cats(const command *cmd)
{
    static const struct {
        const char *group;
        uint32_t cat;
    } groups[] = {{"string", ACLC_STRING},         {"list", ACLC_LIST},
                  {"hash", ACLC_HASH},             {"set", ACLC_SET},
                  {"sorted-set", ACLC_SORTEDSET},  {"generic", ACLC_KEYSPACE},
                  {"connection", ACLC_CONNECTION}, {"bitmap", ACLC_BITMAP},
                  {"pubsub", ACLC_PUBSUB},         {"scripting", ACLC_SCRIPTING},
                  {"transactions", ACLC_TRANSACTION}};
    uint32_t c = 0;
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
        if (cmd->group && !strcmp(cmd->group, groups[i].group)) {
            c |= groups[i].cat;
        }
    }
    if (cmd->flags & CMD_WRITE) {
        c |= ACLC_WRITE;
    }
    if ((cmd->flags & CMD_READONLY) && !(c & ACLC_SCRIPTING)) {
        c |= ACLC_READ;
    }
    if (cmd->flags & CMD_ADMIN) {
        c |= ACLC_ADMIN | ACLC_DANGEROUS;
    }
    if (cmd->flags & CMD_BLOCKING) {
        c |= ACLC_BLOCKING;
    }
    c |= (cmd->flags & CMD_FAST) ? ACLC_FAST : ACLC_SLOW;
    return c;
}

static bool spec_complete(const acl_spec *sp);

static void cmds_setup(void)
{
    A.ncmds = cmd_count();
    A.nwords = (A.ncmds + 63) / 64;
    A.cats = xcalloc((size_t)A.ncmds, sizeof(*A.cats));
    A.specs = xcalloc((size_t)A.ncmds, sizeof(*A.specs));
    A.complete = xcalloc((size_t)A.ncmds, sizeof(*A.complete));
    for (int i = 0; i < A.ncmds; i++) {
        const command *cmd = cmd_by_idx(i);
        const char *full = cmd_fullname(cmd);
        for (int j = 0; j < acl_nspecs; j++) {
            if (!strcmp(acl_specs[j].name, full)) {
                A.specs[i] = &acl_specs[j];
                break;
            }
        }
        A.cats[i] = A.specs[i] ? A.specs[i]->cats : fallback_cats(cmd);
        A.complete[i] = spec_complete(A.specs[i]);
    }
}

uint32_t acl_cmd_cats(const command *cmd)
{
    return A.cats ? A.cats[cmd_idx(cmd)] : fallback_cats(cmd);
}

/* "get", "config|get" (case-insensitive) as a command or subcommand. */
static const command *lookup_name(const char *name, size_t n)
{
    const char *bar = memchr(name, '|', n);
    if (bar == NULL) {
        return cmd_lookup(name, n);
    }
    const command *top = cmd_lookup(name, (size_t)(bar - name));
    const char *sub = bar + 1;
    size_t sn = n - (size_t)(sub - name);
    if (top == NULL || !(top->flags & CMD_CONTAINER) || memchr(sub, '|', sn) != NULL) {
        return NULL;
    }
    return cmd_lookup_sub(top, sub, sn);
}

/* ------------------------------------------------------------------------
 * Selectors
 * ---------------------------------------------------------------------- */

static void sel_init(acl_sel *s, uint32_t flags)
{
    memset(s, 0, sizeof(*s));
    s->flags = flags;
    s->bits = xcalloc((size_t)A.nwords ? (size_t)A.nwords : 1, sizeof(uint64_t));
}

static void pats_free(acl_pat *p, int n)
{
    for (int i = 0; i < n; i++) {
        free(p[i].s);
    }
    free(p);
}

static void first_reset(acl_sel *s, int id)
{
    if (s->first && s->first[id]) {
        for (int i = 0; s->first[id][i]; i++) {
            free(s->first[id][i]);
        }
        free(s->first[id]);
        s->first[id] = NULL;
    }
}

static void first_reset_all(acl_sel *s)
{
    if (s->first == NULL) {
        return;
    }
    for (int i = 0; i < A.ncmds; i++) {
        first_reset(s, i);
    }
    free(s->first);
    s->first = NULL;
}

static void first_add(acl_sel *s, int id, const char *arg, size_t n)
{
    if (s->first == NULL) {
        s->first = xcalloc((size_t)A.ncmds, sizeof(*s->first));
    }
    int k = 0;
    if (s->first[id]) {
        for (; s->first[id][k]; k++) {
            if (strlen(s->first[id][k]) == n && !strncasecmp(s->first[id][k], arg, n)) {
                return;
            }
        }
    }
    s->first[id] = xrealloc(s->first[id], (size_t)(k + 2) * sizeof(char *));
    s->first[id][k] = xstrndup(arg, n);
    s->first[id][k + 1] = NULL;
}

static void sel_free(acl_sel *s)
{
    free(s->bits);
    first_reset_all(s);
    pats_free(s->keys, s->nkeys);
    pats_free(s->chans, s->nchans);
    memset(s, 0, sizeof(*s));
}

static acl_pat *pats_copy(const acl_pat *p, int n)
{
    if (n == 0) {
        return NULL;
    }
    acl_pat *c = xcalloc((size_t)n, sizeof(*c));
    for (int i = 0; i < n; i++) {
        c[i] = p[i];
        c[i].s = xstrndup(p[i].s, p[i].len);
    }
    return c;
}

static void sel_copy(acl_sel *d, const acl_sel *s)
{
    sel_init(d, s->flags);
    d->future = s->future;
    memcpy(d->bits, s->bits, (size_t)A.nwords * sizeof(uint64_t));
    if (s->first) {
        for (int i = 0; i < A.ncmds; i++) {
            for (int k = 0; s->first[i] && s->first[i][k]; k++) {
                first_add(d, i, s->first[i][k], strlen(s->first[i][k]));
            }
        }
    }
    d->keys = pats_copy(s->keys, s->nkeys);
    d->nkeys = s->nkeys;
    d->chans = pats_copy(s->chans, s->nchans);
    d->nchans = s->nchans;
}

static bool bit_get(const acl_sel *s, int id)
{
    return (s->bits[id / 64] >> (id % 64)) & 1;
}

static void bit_set(acl_sel *s, int id, bool on)
{
    if (on) {
        s->bits[id / 64] |= 1ull << (id % 64);
    } else {
        s->bits[id / 64] &= ~(1ull << (id % 64));
        s->flags &= ~SEL_ALLCOMMANDS;
    }
}

/* Allow or deny a command; a container's subcommands with it. */
static void change_perm(acl_sel *s, const command *cmd, bool allow)
{
    int id = cmd_idx(cmd);
    bit_set(s, id, allow);
    first_reset(s, id);
    if (cmd->flags & CMD_CONTAINER) {
        CMD_FOR_SUBS(sub, cmd)
        {
            bit_set(s, cmd_idx(sub), allow);
        }
    }
}

static void change_cat(acl_sel *s, uint32_t cat, bool allow)
{
    for (int t = 0; t < cmd_top_count(); t++) {
        const command *cmd = cmd_top(t);
        if (A.cats[cmd_idx(cmd)] & cat) {
            change_perm(s, cmd, allow);
        }
        if (cmd->flags & CMD_CONTAINER) {
            CMD_FOR_SUBS(sub, cmd)
            {
                if (A.cats[cmd_idx(sub)] & cat) {
                    change_perm(s, sub, allow);
                }
            }
        }
    }
}

static bool has_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' ||
            s[i] == '\f' || s[i] == '\0') {
            return true;
        }
    }
    return false;
}

/* Errors of a rule, Redis's ACLSetUserStringError. */
#define E_SYNTAX "Syntax error"
#define E_NOENT "Unknown command or category name in ACL"
#define E_KEYS_AFTER_ALL                                                                           \
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not "     \
    "have any effect. Try 'resetkeys' to start with an empty list of patterns"
#define E_CHANS_AFTER_ALL                                                                          \
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not " \
    "have any effect. Try 'resetchannels' to start with an empty list of channels"
#define E_NOPASS "The password you are trying to remove from the user does not exist"
#define E_HASH                                                                                     \
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "     \
    "characters"
#define E_CHILD "Allowing first-arg of a subcommand is not supported"

static bool ieq(const char *op, size_t n, const char *word)
{
    return strlen(word) == n && !strncasecmp(op, word, n);
}

static uint8_t pat_kind(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\') {
            return s[i] == '*' && i == len - 1 ? PAT_PREFIX : PAT_GLOB;
        }
    }
    return PAT_LITERAL;
}

static bool pat_match(const acl_pat *p, const char *s, uint32_t n)
{
    switch (p->kind) {
    case PAT_PREFIX: /* the first byte first: most patterns differ there */
        return p->len == 1 ||
               (n >= p->len - 1 && s[0] == p->s[0] && memcmp(s, p->s, p->len - 1) == 0);
    case PAT_LITERAL:
        return n == p->len && (n == 0 || (s[0] == p->s[0] && memcmp(s, p->s, n) == 0));
    default:
        return util_glob_match(p->s, p->len, s, n, false);
    }
}

static void pats_add(acl_pat **p, int *n, const char *s, size_t len, uint8_t perm)
{
    for (int i = 0; i < *n; i++) {
        if ((*p)[i].len == len && !memcmp((*p)[i].s, s, len)) {
            (*p)[i].perm |= perm;
            return;
        }
    }
    *p = xrealloc(*p, (size_t)(*n + 1) * sizeof(**p));
    (*p)[*n].s = xstrndup(s, len);
    (*p)[*n].len = (uint32_t)len;
    (*p)[*n].perm = perm;
    (*p)[*n].kind = pat_kind(s, len);
    (*n)++;
}

static void pats_clear(acl_pat **p, int *n)
{
    pats_free(*p, *n);
    *p = NULL;
    *n = 0;
}

/* Redis's ACLSetSelector: NULL, or why the rule is refused. */
static const char *sel_apply(acl_sel *s, const char *op, size_t n)
{
    if (ieq(op, n, "allkeys") || ieq(op, n, "~*")) {
        s->flags |= SEL_ALLKEYS;
        pats_clear(&s->keys, &s->nkeys);
    } else if (ieq(op, n, "resetkeys")) {
        s->flags &= ~SEL_ALLKEYS;
        pats_clear(&s->keys, &s->nkeys);
    } else if (ieq(op, n, "allchannels") || ieq(op, n, "&*")) {
        s->flags |= SEL_ALLCHANNELS;
        pats_clear(&s->chans, &s->nchans);
    } else if (ieq(op, n, "resetchannels")) {
        s->flags &= ~SEL_ALLCHANNELS;
        pats_clear(&s->chans, &s->nchans);
    } else if (ieq(op, n, "allcommands") || ieq(op, n, "+@all")) {
        memset(s->bits, 0xff, (size_t)A.nwords * sizeof(uint64_t));
        s->flags |= SEL_ALLCOMMANDS;
        s->future = true;
        first_reset_all(s);
    } else if (ieq(op, n, "nocommands") || ieq(op, n, "-@all")) {
        memset(s->bits, 0, (size_t)A.nwords * sizeof(uint64_t));
        s->flags &= ~SEL_ALLCOMMANDS;
        s->future = false;
        first_reset_all(s);
    } else if (n > 0 && (op[0] == '~' || op[0] == '%')) {
        if (s->flags & SEL_ALLKEYS) {
            return E_KEYS_AFTER_ALL;
        }
        uint8_t perm = 0;
        size_t off = 1;
        if (op[0] == '%') {
            for (; off < n; off++) {
                char ch = (char)(op[off] & ~0x20);
                if (ch == 'R' && !(perm & ACL_R)) {
                    perm |= ACL_R;
                } else if (ch == 'W' && !(perm & ACL_W)) {
                    perm |= ACL_W;
                } else if (op[off] == '~') {
                    off++;
                    break;
                } else {
                    return E_SYNTAX;
                }
            }
            if (perm == 0) { /* "%~x": no permission named */
                return E_SYNTAX;
            }
        } else {
            perm = ACL_RW;
        }
        if (has_space(op + off, n - off)) {
            return E_SYNTAX;
        }
        pats_add(&s->keys, &s->nkeys, op + off, n - off, perm);
        s->flags &= ~SEL_ALLKEYS;
    } else if (n > 0 && op[0] == '&') {
        if (s->flags & SEL_ALLCHANNELS) {
            return E_CHANS_AFTER_ALL;
        }
        if (has_space(op + 1, n - 1)) {
            return E_SYNTAX;
        }
        pats_add(&s->chans, &s->nchans, op + 1, n - 1, ACL_RW);
        s->flags &= ~SEL_ALLCHANNELS;
    } else if (n > 1 && op[0] == '+' && op[1] != '@') {
        const char *bar = NULL;
        for (size_t i = n; i > 1; i--) { /* the last '|' */
            if (op[i - 1] == '|') {
                bar = op + i - 1;
                break;
            }
        }
        if (bar == NULL) {
            const command *cmd = lookup_name(op + 1, n - 1);
            if (cmd == NULL || (cmd->flags & CMD_SUB)) {
                return E_NOENT;
            }
            change_perm(s, cmd, true);
            return NULL;
        }
        const command *cmd = lookup_name(op + 1, (size_t)(bar - op - 1));
        if (cmd == NULL) {
            return E_NOENT;
        }
        if (cmd->flags & CMD_SUB) {
            return E_CHILD;
        }
        size_t sn = n - (size_t)(bar + 1 - op);
        if (sn == 0) {
            return E_SYNTAX;
        }
        if (cmd->flags & CMD_CONTAINER) {
            const command *sub = cmd_lookup_sub(cmd, bar + 1, sn);
            if (sub == NULL) {
                return E_NOENT;
            }
            change_perm(s, sub, true);
        } else {
            log_msg(LL_WARNING,
                    "Deprecation warning: Allowing a first arg of an otherwise blocked command is "
                    "a misuse of ACL and may get disabled in the future (offender: %.*s)",
                    (int)(n - 1), op + 1);
            first_add(s, cmd_idx(cmd), bar + 1, sn);
        }
    } else if (n > 1 && op[0] == '-' && op[1] != '@') {
        const command *cmd = lookup_name(op + 1, n - 1);
        if (cmd == NULL) {
            return E_NOENT;
        }
        change_perm(s, cmd, false);
    } else if (n > 1 && (op[0] == '+' || op[0] == '-') && op[1] == '@') {
        uint32_t cat = cat_by_name(op + 2, n - 2);
        if (cat == 0) {
            return E_NOENT;
        }
        change_cat(s, cat, op[0] == '+');
    } else {
        return E_SYNTAX;
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Users
 * ---------------------------------------------------------------------- */

/* A new user's or selector's channels (acl-pubsub-default). */
static uint32_t pubsub_default(void)
{
    const char *d = srv.cfg.acl_pubsub_default;
    return d && !strcmp(d, "allchannels") ? SEL_ALLCHANNELS : 0;
}

static acl_user *user_new(const char *name, size_t n)
{
    acl_user *u = xcalloc(1, sizeof(*u));
    u->name = xstrndup(name, n);
    u->flags = U_DISABLED;
    u->sels = xcalloc(1, sizeof(*u->sels));
    u->nsels = 1;
    sel_init(&u->sels[0], SEL_ROOT | pubsub_default());
    atomic_init(&u->refs, 1);
    return u;
}

static void user_clear(acl_user *u)
{
    for (int i = 0; i < u->nsels; i++) {
        sel_free(&u->sels[i]);
    }
    free(u->sels);
    free(u->pw);
    u->sels = NULL;
    u->pw = NULL;
    u->nsels = u->npw = 0;
}

static void user_free(acl_user *u)
{
    user_clear(u);
    free(u->name);
    free(u);
}

/* Whether u may run anything: the check's fast path. */
static bool user_all(const acl_user *u)
{
    for (int i = 0; i < u->nsels; i++) {
        const acl_sel *s = &u->sels[i];
        if ((s->flags & (SEL_ALLCOMMANDS | SEL_ALLKEYS | SEL_ALLCHANNELS)) ==
            (SEL_ALLCOMMANDS | SEL_ALLKEYS | SEL_ALLCHANNELS)) {
            return true;
        }
    }
    return false;
}

/* d gets s's rules (its name stays). */
static void user_copy_rules(acl_user *d, const acl_user *s)
{
    user_clear(d);
    d->flags = s->flags;
    d->npw = s->npw;
    if (s->npw) {
        d->pw = xcalloc((size_t)s->npw, sizeof(*d->pw));
        memcpy(d->pw, s->pw, (size_t)s->npw * sizeof(*d->pw));
    }
    d->nsels = s->nsels;
    d->sels = xcalloc((size_t)s->nsels, sizeof(*d->sels));
    for (int i = 0; i < s->nsels; i++) {
        sel_copy(&d->sels[i], &s->sels[i]);
    }
    atomic_store(&d->all, user_all(d));
}

static void hash_pass(const char *p, size_t n, char out[HASH_HEX + 1])
{
    unsigned char h[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)p, n, h);
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        out[2 * i] = hex[h[i] >> 4];
        out[2 * i + 1] = hex[h[i] & 15];
    }
    out[HASH_HEX] = '\0';
}

static bool valid_hash(const char *p, size_t n)
{
    if (n != HASH_HEX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) {
            return false;
        }
    }
    return true;
}

static int pw_find(const acl_user *u, const char *h)
{
    for (int i = 0; i < u->npw; i++) {
        if (!memcmp(u->pw[i], h, HASH_HEX)) {
            return i;
        }
    }
    return -1;
}

static void user_apply_noerr(acl_user *u, const char *op);

/* Redis's ACLSetUser: NULL, or why the rule is refused. */
static const char *user_apply(acl_user *u, const char *op, size_t n)
{
    if (n == 0) {
        return NULL;
    }
    if (ieq(op, n, "on")) {
        u->flags = (u->flags | U_ENABLED) & ~U_DISABLED;
    } else if (ieq(op, n, "off")) {
        u->flags = (u->flags | U_DISABLED) & ~U_ENABLED;
    } else if (ieq(op, n, "skip-sanitize-payload")) {
        u->flags = (u->flags | U_SANITIZE_SKIP) & ~U_SANITIZE;
    } else if (ieq(op, n, "sanitize-payload")) {
        u->flags = (u->flags | U_SANITIZE) & ~U_SANITIZE_SKIP;
    } else if (ieq(op, n, "nopass") || ieq(op, n, "resetpass")) {
        if (ieq(op, n, "nopass")) {
            u->flags |= U_NOPASS;
        } else {
            u->flags &= ~U_NOPASS;
        }
        free(u->pw);
        u->pw = NULL;
        u->npw = 0;
    } else if (op[0] == '>' || op[0] == '#') {
        char h[HASH_HEX + 1];
        if (op[0] == '>') {
            hash_pass(op + 1, n - 1, h);
        } else {
            if (!valid_hash(op + 1, n - 1)) {
                return E_HASH;
            }
            memcpy(h, op + 1, HASH_HEX);
            h[HASH_HEX] = '\0';
        }
        if (pw_find(u, h) < 0) {
            u->pw = xrealloc(u->pw, (size_t)(u->npw + 1) * sizeof(*u->pw));
            memcpy(u->pw[u->npw++], h, HASH_HEX + 1);
        }
        u->flags &= ~U_NOPASS;
    } else if (op[0] == '<' || op[0] == '!') {
        char h[HASH_HEX + 1];
        if (op[0] == '<') {
            hash_pass(op + 1, n - 1, h);
        } else {
            if (!valid_hash(op + 1, n - 1)) {
                return E_HASH;
            }
            memcpy(h, op + 1, HASH_HEX);
            h[HASH_HEX] = '\0';
        }
        int k = pw_find(u, h);
        if (k < 0) {
            return E_NOPASS;
        }
        memmove(u->pw[k], u->pw[k + 1], (size_t)(u->npw - k - 1) * sizeof(*u->pw));
        u->npw--;
    } else if (op[0] == '(' && op[n - 1] == ')') {
        acl_sel s;
        sel_init(&s, pubsub_default());
        char *inner = xstrndup(op + 1, n >= 2 ? n - 2 : 0);
        const char *why = NULL;
        char *save = NULL;
        for (char *t = strtok_r(inner, " ", &save); t && !why; t = strtok_r(NULL, " ", &save)) {
            why = sel_apply(&s, t, strlen(t));
        }
        free(inner);
        if (why) {
            sel_free(&s);
            return why;
        }
        u->sels = xrealloc(u->sels, (size_t)(u->nsels + 1) * sizeof(*u->sels));
        u->sels[u->nsels++] = s;
    } else if (ieq(op, n, "clearselectors")) {
        for (int i = 1; i < u->nsels; i++) {
            sel_free(&u->sels[i]);
        }
        u->nsels = 1;
    } else if (ieq(op, n, "reset")) {
        user_apply_noerr(u, "resetpass");
        user_apply_noerr(u, "resetkeys");
        user_apply_noerr(u, "resetchannels");
        if (pubsub_default()) {
            user_apply_noerr(u, "allchannels");
        }
        user_apply_noerr(u, "off");
        user_apply_noerr(u, "sanitize-payload");
        user_apply_noerr(u, "clearselectors");
        user_apply_noerr(u, "-@all");
    } else {
        return sel_apply(&u->sels[0], op, n);
    }
    return NULL;
}

static void user_apply_noerr(acl_user *u, const char *op)
{
    (void)user_apply(u, op, strlen(op));
}

/* Redis's ACLMergeSelectorArguments: a selector given over several
 * arguments ("(~x" "+get)") becomes one. NULL when a '(' is not closed
 * (*bad: the argument it opened at). */
static char **merge_selectors(int argc, char **argv, uint32_t *lens, int *outc, int *bad)
{
    char **out = xcalloc((size_t)argc + 1, sizeof(char *));
    int n = 0, open = -1;
    sbuf cur = {0};
    for (int j = 0; j < argc; j++) {
        const char *op = argv[j];
        uint32_t l = lens[j];
        if (open < 0 && l > 0 && op[0] == '(' && op[l - 1] != ')') {
            open = j;
            cur.len = 0;
            sbuf_add(&cur, op, l);
            continue;
        }
        if (open >= 0) {
            sbuf_add(&cur, " ", 1);
            sbuf_add(&cur, op, l);
            if (l > 0 && op[l - 1] == ')') {
                out[n++] = xstrndup(cur.p, cur.len);
                open = -1;
            }
            continue;
        }
        out[n++] = xstrndup(op, l);
    }
    sbuf_free(&cur);
    if (open >= 0) {
        for (int i = 0; i < n; i++) {
            free(out[i]);
        }
        free(out);
        *bad = open;
        return NULL;
    }
    *outc = n;
    return out;
}

static void strv_free(char **v, int n)
{
    for (int i = 0; i < n; i++) {
        free(v[i]);
    }
    free(v);
}

static int user_cmp(const char *a, size_t an, const acl_user *u)
{
    size_t bn = strlen(u->name);
    int c = memcmp(a, u->name, an < bn ? an : bn);
    return c ? c : (an < bn ? -1 : an > bn ? 1 : 0);
}

/* Index of name in A.users, or -(insertion point)-1. */
static int user_pos(const char *name, size_t n)
{
    int lo = 0, hi = A.nusers - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = user_cmp(name, n, A.users[mid]);
        if (c == 0) {
            return mid;
        }
        if (c < 0) {
            hi = mid - 1;
        } else {
            lo = mid + 1;
        }
    }
    return -lo - 1;
}

static acl_user *user_find(const char *name, size_t n)
{
    int p = user_pos(name, n);
    return p >= 0 ? A.users[p] : NULL;
}

static void user_insert(acl_user *u)
{
    int p = user_pos(u->name, strlen(u->name));
    p = -p - 1;
    if (A.nusers == A.cap) {
        A.cap = A.cap ? A.cap * 2 : 8;
        A.users = xrealloc(A.users, (size_t)A.cap * sizeof(*A.users));
    }
    memmove(A.users + p + 1, A.users + p, (size_t)(A.nusers - p) * sizeof(*A.users));
    A.users[p] = u;
    A.nusers++;
}

static void user_remove_at(int p)
{
    memmove(A.users + p, A.users + p + 1, (size_t)(A.nusers - p - 1) * sizeof(*A.users));
    A.nusers--;
}

static void def_changed(void)
{
    atomic_store(&A.def_open, (A.def->flags & U_NOPASS) && !(A.def->flags & U_DISABLED));
    atomic_store(&A.def_nopass, (A.def->flags & U_NOPASS) != 0);
    atomic_store(&A.def->all, user_all(A.def));
}

void acl_ref(acl_user *u)
{
    atomic_fetch_add(&u->refs, 1);
}

void acl_unref(acl_user *u)
{
    if (u != NULL && atomic_fetch_sub(&u->refs, 1) == 1) {
        user_free(u);
    }
}

acl_user *acl_default_user(void)
{
    acl_ref(A.def);
    return A.def;
}

acl_user *acl_find_user(conn *c, const char *name, size_t n)
{
    rlock(c);
    acl_user *u = user_find(name, n);
    if (u) {
        acl_ref(u);
    }
    runlock(c);
    return u;
}

const char *acl_user_name(const acl_user *u)
{
    return u ? u->name : "default";
}

bool acl_default_open(void)
{
    return atomic_load_explicit(&A.def_open, memory_order_relaxed);
}

bool acl_default_nopass(void)
{
    return atomic_load_explicit(&A.def_nopass, memory_order_relaxed);
}

void acl_set_requirepass(const char *pass)
{
    wlock();
    user_apply_noerr(A.def, "resetpass");
    if (pass && pass[0]) {
        char *op = xmalloc(strlen(pass) + 2);
        op[0] = '>';
        strcpy(op + 1, pass);
        user_apply_noerr(A.def, op);
        free(op);
    } else {
        user_apply_noerr(A.def, "nopass");
    }
    def_changed();
    wunlock();
}

/* A user no longer in the table: its connections are closed (Redis
 * frees them), the last one frees it. */
static void user_drop(acl_user *u, conn *self)
{
    u->deleted = true;
    atomic_store(&u->all, false);
    server_client_kill(self, NULL, NULL, 0, false, u);
    acl_unref(u);
}

/* ------------------------------------------------------------------------
 * Setup: the conf's users, the aclfile
 * ---------------------------------------------------------------------- */

int acl_conf_user(int argc, char **argv, char *err, size_t errlen)
{
    if (argc < 1) {
        snprintf(err, errlen, "Bad directive or wrong number of arguments");
        return -1;
    }
    for (int i = 0; i < A.nconf; i++) {
        if (!strcmp(A.conf_users[i][0], argv[0])) {
            snprintf(err, errlen,
                     "Error in user declaration '%s': Duplicate user found. A user can only be "
                     "defined once in config files",
                     argv[0]);
            return -1;
        }
    }
    A.conf_users = xrealloc(A.conf_users, (size_t)(A.nconf + 1) * sizeof(*A.conf_users));
    char **v = xcalloc((size_t)argc + 1, sizeof(char *));
    for (int i = 0; i < argc; i++) {
        v[i] = xstrdup(argv[i]);
    }
    A.conf_users[A.nconf++] = v;
    return 0;
}

static void conf_users_free(void)
{
    for (int i = 0; i < A.nconf; i++) {
        for (int k = 0; A.conf_users[i][k]; k++) {
            free(A.conf_users[i][k]);
        }
        free(A.conf_users[i]);
    }
    free(A.conf_users);
    A.conf_users = NULL;
    A.nconf = 0;
}

/* Rules (merged selectors) onto u: NULL, or the error, in buf. */
static const char *apply_all(acl_user *u, int argc, char **argv, uint32_t *lens, char *buf,
                             size_t cap)
{
    int n = 0, bad = 0;
    char **ops = merge_selectors(argc, argv, lens, &n, &bad);
    if (ops == NULL) {
        snprintf(buf, cap, "Unmatched parenthesis in acl selector starting at '%.*s'.",
                 (int)lens[bad], argv[bad]);
        return buf;
    }
    const char *res = NULL;
    for (int j = 0; j < n && res == NULL; j++) {
        const char *why = user_apply(u, ops[j], strlen(ops[j]));
        if (why) {
            snprintf(buf, cap, "Error in ACL SETUSER modifier '%s': %s", ops[j], why);
            res = buf;
        }
    }
    strv_free(ops, n);
    return res;
}

static char *load_file(const char *path, char *err, size_t errlen);

int acl_setup(char *err, size_t errlen)
{
    cmds_setup();
    A.def = user_new("default", 7);
    user_apply_noerr(A.def, "+@all");
    user_apply_noerr(A.def, "~*");
    user_apply_noerr(A.def, "&*");
    user_apply_noerr(A.def, "on");
    user_apply_noerr(A.def, "nopass");
    user_insert(A.def);
    if (srv.cfg.requirepass && srv.cfg.requirepass[0]) {
        acl_set_requirepass(srv.cfg.requirepass);
    }
    def_changed();
    bool file = srv.cfg.aclfile && srv.cfg.aclfile[0];
    if (file && A.nconf > 0) {
        snprintf(err, errlen,
                 "Configuring Redis with users defined in redis.conf and at the same setting an "
                 "ACL file path is invalid. This setup is very likely to lead to configuration "
                 "errors and security holes, please define either an ACL file or declare users "
                 "directly in your redis.conf, but not both.");
        conf_users_free();
        return -1;
    }
    for (int i = 0; i < A.nconf; i++) {
        char **v = A.conf_users[i];
        int argc = 0;
        while (v[argc]) {
            argc++;
        }
        if (has_space(v[0], strlen(v[0]))) {
            snprintf(err, errlen, "Spaces not allowed in ACL usernames");
            conf_users_free();
            return -1;
        }
        acl_user *u = user_find(v[0], strlen(v[0]));
        if (u == NULL) {
            u = user_new(v[0], strlen(v[0]));
            user_insert(u);
        } else {
            user_apply_noerr(u, "reset"); /* the default user, declared again */
        }
        uint32_t *lens = xcalloc((size_t)argc, sizeof(uint32_t));
        for (int k = 0; k < argc; k++) {
            lens[k] = (uint32_t)strlen(v[k]);
        }
        char buf[512];
        const char *why = apply_all(u, argc - 1, v + 1, lens + 1, buf, sizeof(buf));
        free(lens);
        if (why) {
            snprintf(err, errlen, "Error loading ACL rules for the user named '%s': %s", v[0],
                     why);
            conf_users_free();
            return -1;
        }
        atomic_store(&u->all, user_all(u));
        if (u->flags & U_DISABLED) {
            log_msg(LL_NOTICE,
                    "The user '%s' is disabled (there is no 'on' modifier in the user "
                    "description). Make sure this is not a configuration error.",
                    v[0]);
        }
    }
    conf_users_free();
    def_changed();
    if (file) {
        char *errors = load_file(srv.cfg.aclfile, err, errlen);
        if (errors) {
            snprintf(err, errlen, "Aborting Redis startup because of ACL errors: %s", errors);
            free(errors);
            return -1;
        }
    }
    return 0;
}

void acl_teardown(void)
{
    for (int i = 0; i < A.nusers; i++) {
        acl_unref(A.users[i]);
    }
    free(A.users);
    A.users = NULL;
    A.nusers = A.cap = 0;
    A.def = NULL;
    for (int i = 0; i < A.nlog; i++) {
        free(A.log[i]->object);
        free(A.log[i]->username);
        free(A.log[i]->cinfo);
        free(A.log[i]);
    }
    free(A.log);
    A.log = NULL;
    A.nlog = 0;
    free(A.cats);
    free(A.specs);
    free(A.complete);
    A.cats = NULL;
    A.specs = NULL;
    A.complete = NULL;
    conf_users_free();
}

/* ------------------------------------------------------------------------
 * Describing users (ACL LIST, GETUSER, SAVE): Redis 7.0's way
 * ---------------------------------------------------------------------- */

static void count_cat(const acl_sel *s, uint32_t cat, unsigned long *on, unsigned long *off)
{
    *on = *off = 0;
    for (int i = 0; i < A.ncmds; i++) {
        if (A.cats[i] & cat) {
            if (bit_get(s, i)) {
                (*on)++;
            } else {
                (*off)++;
            }
        }
    }
}

static void describe_singles(const acl_sel *s, acl_sel *fake, const command *cmd, sbuf *out)
{
    int id = cmd_idx(cmd);
    bool ub = bit_get(s, id), fb = bit_get(fake, id);
    if (ub != fb) {
        sbuf_printf(out, "%c%s ", ub ? '+' : '-', cmd_fullname(cmd));
        change_perm(fake, cmd, ub);
    }
    if (cmd->flags & CMD_CONTAINER) {
        CMD_FOR_SUBS(sub, cmd)
        {
            describe_singles(s, fake, sub, out);
        }
    }
    if (!ub && s->first && s->first[id]) {
        for (int k = 0; s->first[id][k]; k++) {
            sbuf_printf(out, "+%s|%s ", cmd_fullname(cmd), s->first[id][k]);
        }
    }
}

static void describe_commands(const acl_sel *s, sbuf *out)
{
    size_t start = out->len;
    acl_sel fake, temp;
    sel_init(&fake, 0);
    sel_init(&temp, 0);
    bool additive = !s->future;
    (void)sel_apply(&fake, additive ? "-@all" : "+@all", 5);
    sbuf_printf(out, "%s ", additive ? "-@all" : "+@all");
    memcpy(temp.bits, s->bits, (size_t)A.nwords * sizeof(uint64_t));
    bool applied[ACLC_COUNT] = {false};
    for (;;) {
        int best = -1;
        unsigned long mindiff = (unsigned long)-1, maxsame = 0;
        for (int j = 0; j < ACLC_COUNT; j++) {
            if (applied[j]) {
                continue;
            }
            unsigned long on, off;
            count_cat(&temp, 1u << j, &on, &off);
            unsigned long diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = j;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0) {
            break;
        }
        change_cat(&fake, 1u << best, additive);
        change_cat(&temp, 1u << best, !additive);
        sbuf_printf(out, "%s%s ", additive ? "+@" : "-@", cat_names[best]);
        applied[best] = true;
    }
    for (int t = 0; t < cmd_top_count(); t++) {
        describe_singles(s, &fake, cmd_top(t), out);
    }
    if (out->len > start) {
        out->len--; /* the last space */
    }
    sel_free(&fake);
    sel_free(&temp);
}

static void pat_describe(const acl_pat *p, sbuf *out)
{
    sbuf_printf(out, "%s", p->perm == ACL_RW ? "~" : p->perm == ACL_R ? "%R~" : "%W~");
    sbuf_add(out, p->s, p->len);
}

static bool sel_keys_all(const acl_sel *s);

static void describe_sel(const acl_sel *s, sbuf *out)
{
    /* a read-write "*" among other patterns is described alone as "~*":
     * Redis 7.0 lists them all, and its ACL LOAD then refuses the
     * patterns after "~*" in the file ACL SAVE wrote */
    if (sel_keys_all(s)) {
        sbuf_printf(out, "~* ");
    } else {
        for (int i = 0; i < s->nkeys; i++) {
            pat_describe(&s->keys[i], out);
            sbuf_add(out, " ", 1);
        }
    }
    if (s->flags & SEL_ALLCHANNELS) {
        sbuf_printf(out, "&* ");
    } else {
        sbuf_printf(out, "resetchannels ");
        for (int i = 0; i < s->nchans; i++) {
            sbuf_add(out, "&", 1);
            sbuf_add(out, s->chans[i].s, s->chans[i].len);
            sbuf_add(out, " ", 1);
        }
    }
    describe_commands(s, out);
}

static const struct {
    const char *name;
    uint32_t flag;
} uflags[] = {{"on", U_ENABLED},
              {"off", U_DISABLED},
              {"nopass", U_NOPASS},
              {"skip-sanitize-payload", U_SANITIZE_SKIP},
              {"sanitize-payload", U_SANITIZE}};

static void describe_user(const acl_user *u, sbuf *out)
{
    for (size_t j = 0; j < sizeof(uflags) / sizeof(uflags[0]); j++) {
        if (u->flags & uflags[j].flag) {
            sbuf_printf(out, "%s ", uflags[j].name);
        }
    }
    for (int i = 0; i < u->npw; i++) {
        sbuf_printf(out, "#%s ", u->pw[i]);
    }
    for (int i = 0; i < u->nsels; i++) {
        if (i > 0) {
            sbuf_add(out, " (", 2);
        }
        describe_sel(&u->sels[i], out);
        if (i > 0) {
            sbuf_add(out, ")", 1);
        }
    }
}

/* ------------------------------------------------------------------------
 * The check
 * ---------------------------------------------------------------------- */

static bool key_ok(const acl_sel *s, const char *key, uint32_t klen, uint16_t ksflags)
{
    if (s->flags & SEL_ALLKEYS) {
        return true;
    }
    uint8_t need = 0;
    if (ksflags & KS_ACCESS) {
        need |= ACL_R;
    }
    if (ksflags & (KS_INSERT | KS_DELETE | KS_UPDATE)) {
        need |= ACL_W;
    }
    for (int i = 0; i < s->nkeys; i++) {
        if ((s->keys[i].perm & need) == need && pat_match(&s->keys[i], key, klen)) {
            return true;
        }
    }
    return false;
}

static bool chan_ok(const acl_sel *s, const char *ch, uint32_t n, bool literal)
{
    if (s->flags & SEL_ALLCHANNELS) {
        return true;
    }
    for (int i = 0; i < s->nchans; i++) {
        const acl_pat *p = &s->chans[i];
        if (literal ? (p->len == n && !memcmp(p->s, ch, n)) : pat_match(p, ch, n)) {
            return true;
        }
    }
    return false;
}

/* Where a key spec finds its keys in argv (Redis's getKeysUsingKeySpecs):
 * 1 with the range; 0 when its keyword is absent (no keys); -1 when the
 * spec cannot apply (an invalid count, a range out of argv: Redis then
 * gives up on the specs). */
static int spec_range(const acl_keyspec *ks, int argc, char **argv, uint32_t *lens, int *first,
                      int *last, int *step)
{
    int f = 0;
    if (ks->bs == KS_BS_INDEX) {
        f = ks->index;
    } else if (ks->bs == KS_BS_KEYWORD) {
        int start = ks->startfrom > 0 ? ks->startfrom : argc + ks->startfrom;
        int end = ks->startfrom > 0 ? argc - 1 : 1;
        for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
            if (i >= argc || i < 1) {
                break;
            }
            if (strlen(ks->keyword) == lens[i] && !strncasecmp(argv[i], ks->keyword, lens[i])) {
                f = i + 1;
                break;
            }
        }
        if (!f) {
            return 0;
        }
    } else {
        return -1;
    }
    int l = f, st = 1;
    if (ks->fk == KS_FK_RANGE) {
        st = ks->b > 0 ? ks->b : 1;
        if (ks->a >= 0) {
            l = f + ks->a;
        } else if (!ks->c) {
            l = argc + ks->a;
        } else {
            l = f + ((argc - f) / ks->c + ks->a);
        }
    } else if (ks->fk == KS_FK_KEYNUM) {
        st = ks->c > 0 ? ks->c : 1;
        long long nk;
        int ni = f + ks->a;
        if (ni >= argc || !util_str2ll(argv[ni], lens[ni], &nk) || nk < 0 || nk > argc) {
            return -1;
        }
        f += ks->b;
        l = f + ((int)nk - 1) * st;
    } else {
        return -1;
    }
    if (l >= argc || l < f || f >= argc) {
        return -1;
    }
    *first = f;
    *last = l;
    *step = st;
    return 1;
}

static bool spec_complete(const acl_spec *sp)
{
    if (sp == NULL || sp->nspecs == 0) {
        return false;
    }
    for (int j = 0; j < sp->nspecs; j++) {
        const acl_keyspec *ks = &sp->ks[j];
        if ((ks->flags & KS_INCOMPLETE) || ks->bs == KS_BS_UNKNOWN || ks->fk == KS_FK_UNKNOWN) {
            return false;
        }
    }
    return true;
}

static void keys_push(acl_keyref **k, int *n, int *cap, acl_keyref *small, int pos, uint16_t flags)
{
    if (*n == *cap) {
        *cap *= 2;
        if (*k == small) {
            *k = xmalloc((size_t)*cap * sizeof(acl_keyref));
            memcpy(*k, small, (size_t)*n * sizeof(acl_keyref));
        } else {
            *k = xrealloc(*k, (size_t)*cap * sizeof(acl_keyref));
        }
    }
    (*k)[*n].pos = pos;
    (*k)[*n].flags = flags;
    (*n)++;
}

/* The arguments of cmd that are keys, with their key spec flags (Redis's
 * getKeysFromCommandWithSpecs): from the key specs when they are complete
 * (none when one cannot apply, as Redis's key finders then find none);
 * else where cmd_keys_of finds them (SORT, MIGRATE...), each with the
 * flags of the specs that find it there, less incomplete; one no spec
 * finds has those of the writing specs of unknown place (SORT's STORE),
 * else of all the command's specs. */
static int keys_with_flags(const command *cmd, int argc, char **argv, uint32_t *lens,
                           acl_keyref *small, acl_keyref **out)
{
    const acl_spec *sp = A.specs[cmd_idx(cmd)];
    acl_keyref *k = small;
    int n = 0, cap = ACL_KEYS_SMALL;
    if (A.complete[cmd_idx(cmd)]) {
        for (int j = 0; j < sp->nspecs; j++) {
            const acl_keyspec *ks = &sp->ks[j];
            int first, last, step;
            int r = (ks->flags & KS_NOT_KEY)
                        ? 0
                        : spec_range(ks, argc, argv, lens, &first, &last, &step);
            if (r < 0) {
                n = 0; /* as Redis's own key finders then: none (the command's error says why) */
                break;
            }
            for (int i = first; r > 0 && i <= last && i >= 1; i += step) {
                keys_push(&k, &n, &cap, small, i, ks->flags);
            }
        }
    } else {
        int *pos = xmalloc((size_t)(argc > 0 ? argc : 1) * sizeof(int));
        int np = cmd_keys_of(cmd, argc, argv, lens, pos, argc > 0 ? argc : 1);
        np = np < argc ? np : argc;
        uint16_t *found = xcalloc((size_t)(argc > 0 ? argc : 1), sizeof(uint16_t));
        uint16_t any = 0, unknown_w = 0;
        for (int j = 0; sp && j < sp->nspecs; j++) {
            const acl_keyspec *ks = &sp->ks[j];
            int first, last, step;
            any |= ks->flags;
            if ((ks->flags & KS_NOT_KEY) ||
                spec_range(ks, argc, argv, lens, &first, &last, &step) <= 0) {
                if (ks->bs == KS_BS_UNKNOWN && (ks->flags & (KS_OW | KS_RW | KS_RM))) {
                    unknown_w |= ks->flags; /* SORT's STORE: the key no spec finds */
                }
                continue;
            }
            for (int i = first; i <= last && i >= 1; i += step) {
                found[i] |= ks->flags & ~KS_INCOMPLETE;
            }
        }
        if (unknown_w != 0) {
            any = unknown_w;
        } else if (any == 0) {
            any = (cmd->flags & CMD_WRITE) ? (KS_RW | KS_ACCESS | KS_UPDATE) : (KS_RO | KS_ACCESS);
        }
        any &= ~KS_INCOMPLETE;
        for (int i = 0; i < np; i++) {
            if (pos[i] >= 0 && pos[i] < argc) {
                keys_push(&k, &n, &cap, small, pos[i], found[pos[i]] ? found[pos[i]] : any);
            }
        }
        free(found);
        free(pos);
    }
    /* the commands whose flags depend on their arguments (VARIABLE_FLAGS) */
    if (cmd->fn == cmd_set && n > 0) {
        bool get = false;
        for (int i = 3; i < argc; i++) {
            get = get || util_eq(argv[i], lens[i], "get");
        }
        k[0].flags = get ? (KS_RW | KS_ACCESS | KS_UPDATE) : (KS_OW | KS_UPDATE);
    } else if (cmd->fn == cmd_bitfield && n > 0) {
        bool write = false;
        for (int i = 2; i < argc; i++) {
            write = write || util_eq(argv[i], lens[i], "set") || util_eq(argv[i], lens[i], "incrby");
        }
        k[0].flags = write ? (KS_RW | KS_ACCESS | KS_UPDATE) : (KS_RO | KS_ACCESS);
    }
    *out = k;
    return n;
}

int acl_cmd_keys(const command *cmd, int argc, char **argv, uint32_t *lens, acl_keyref *small,
                 acl_keyref **out)
{
    return keys_with_flags(cmd, argc, argv, lens, small, out);
}

const acl_spec *acl_cmd_spec(const command *cmd)
{
    return A.specs ? A.specs[cmd_idx(cmd)] : NULL;
}

static bool has_channels(const command *cmd)
{
    return cmd->fn == cmd_publish || cmd->fn == cmd_spublish || cmd->fn == cmd_subscribe ||
           cmd->fn == cmd_ssubscribe || cmd->fn == cmd_psubscribe;
}

/* Redis's ACLSelectorCheckCmd. */
static int sel_check(const acl_sel *s, const command *cmd, int argc, char **argv, uint32_t *lens,
                     int *pos, acl_keyref *small, acl_keyref **keys, int *nkeys)
{
    int id = cmd_idx(cmd);
    if (!(s->flags & SEL_ALLCOMMANDS) && !(cmd->flags & CMD_NOAUTH) && !bit_get(s, id)) {
        int ai = (cmd->flags & CMD_SUB) ? 2 : 1;
        bool ok = false;
        if (argc > ai && s->first && s->first[id]) {
            for (int k = 0; s->first[id][k] && !ok; k++) {
                ok = strlen(s->first[id][k]) == lens[ai] &&
                     !strncasecmp(s->first[id][k], argv[ai], lens[ai]);
            }
        }
        if (!ok) {
            return ACL_DENIED_CMD;
        }
    }
    if (!(s->flags & SEL_ALLKEYS) && (cmd->first_key > 0 || A.specs[id] != NULL)) {
        if (*nkeys < 0) {
            *nkeys = keys_with_flags(cmd, argc, argv, lens, small, keys);
        }
        for (int j = 0; j < *nkeys; j++) {
            int p = (*keys)[j].pos;
            if (!key_ok(s, argv[p], lens[p], (*keys)[j].flags)) {
                *pos = p;
                return ACL_DENIED_KEY;
            }
        }
    }
    if (!(s->flags & SEL_ALLCHANNELS) && has_channels(cmd)) {
        bool pat = cmd->fn == cmd_psubscribe;
        int last = (cmd->fn == cmd_publish || cmd->fn == cmd_spublish) ? 1 : argc - 1;
        for (int j = 1; j <= last && j < argc; j++) {
            if (!chan_ok(s, argv[j], lens[j], pat)) {
                *pos = j;
                return ACL_DENIED_CHANNEL;
            }
        }
    }
    return ACL_OK;
}

static int user_check(const acl_user *u, const command *cmd, int argc, char **argv,
                      uint32_t *lens, int *pos)
{
    int best = ACL_DENIED_CMD, best_pos = 0;
    acl_keyref small[ACL_KEYS_SMALL];
    acl_keyref *keys = NULL;
    int nkeys = -1;
    bool ok = false;
    for (int i = 0; i < u->nsels && !ok; i++) {
        int p = 0;
        int r = sel_check(&u->sels[i], cmd, argc, argv, lens, &p, small, &keys, &nkeys);
        if (r == ACL_OK) {
            ok = true;
            break;
        }
        if (r > best || (r == best && p > best_pos)) {
            best = r;
            best_pos = p;
        }
    }
    if (keys != small) {
        free(keys);
    }
    if (ok) {
        return ACL_OK;
    }
    *pos = best_pos;
    return best;
}

int acl_check(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens, int *pos)
{
    acl_user *u = c->user;
    if (u == NULL || atomic_load_explicit(&u->all, memory_order_relaxed)) {
        return ACL_OK;
    }
    rlock(c);
    int r = u->deleted ? ACL_DENIED_CMD : user_check(u, cmd, argc, argv, lens, pos);
    runlock(c);
    return r;
}

static bool sub_ok(conn *c, const char *name, size_t n, bool pattern)
{
    const acl_user *u = c->user;
    for (int i = 0; u && i < u->nsels; i++) {
        if (chan_ok(&u->sels[i], name, (uint32_t)n, pattern)) {
            return true;
        }
    }
    return u == NULL;
}

bool acl_subscriptions_ok(conn *c)
{
    rlock(c);
    bool ok = c->user == NULL || c->user->deleted || atomic_load(&c->user->all) ||
              pubsub_subscriptions_pass(c, sub_ok);
    runlock(c);
    return ok;
}

/* Whether the channels of `now` may exclude some `before` allowed
 * (Redis's ACLKillPubsubClientsIfNeeded): then the subscribers are checked. */
static bool chans_narrowed(const acl_user *before, const acl_user *now)
{
    for (int i = 0; i < now->nsels; i++) {
        if (now->sels[i].flags & SEL_ALLCHANNELS) {
            return false;
        }
    }
    for (int i = 0; i < before->nsels; i++) {
        const acl_sel *b = &before->sels[i];
        if (b->flags & SEL_ALLCHANNELS) {
            return true;
        }
        for (int k = 0; k < b->nchans; k++) {
            bool found = false;
            for (int j = 0; j < now->nsels && !found; j++) {
                for (int m = 0; m < now->sels[j].nchans && !found; m++) {
                    found = now->sels[j].chans[m].len == b->chans[k].len &&
                            !memcmp(now->sels[j].chans[m].s, b->chans[k].s, b->chans[k].len);
                }
            }
            if (!found) {
                return true;
            }
        }
    }
    return false;
}

/* ------------------------------------------------------------------------
 * The log
 * ---------------------------------------------------------------------- */

static void log_add(conn *c, int reason, int ctx, const char *obj, size_t olen, const char *uname)
{
    conn *real = (c->flags & CONN_FAKE) && c->caller ? c->caller : c;
    sbuf ci = {0};
    server_client_list(&ci, real->lp, real, -1);
    if (ci.len > 0 && ci.p[ci.len - 1] == '\n') {
        ci.len--;
    }
    int64_t now = cudis_now_ms();
    atomic_fetch_add(&A.changes, 1);
    pthread_mutex_lock(&A.log_mu);
    int scan = A.nlog < 10 ? A.nlog : 10;
    for (int i = 0; i < scan; i++) {
        acl_log_entry *e = A.log[i];
        int64_t d = now - e->ctime_ms;
        if (e->reason == reason && e->context == ctx && (d < 0 ? -d : d) <= LOG_GROUP_MS &&
            strlen(e->object) == olen && !memcmp(e->object, obj, olen) &&
            !strcmp(e->username, uname)) {
            free(e->cinfo);
            e->cinfo = xstrndup(ci.p ? ci.p : "", ci.len);
            e->ctime_ms = now;
            e->count++;
            memmove(A.log + 1, A.log, (size_t)i * sizeof(*A.log));
            A.log[0] = e;
            pthread_mutex_unlock(&A.log_mu);
            sbuf_free(&ci);
            return;
        }
    }
    acl_log_entry *e = xcalloc(1, sizeof(*e));
    e->count = 1;
    e->reason = reason;
    e->context = ctx;
    e->object = xstrndup(obj, olen);
    e->username = xstrdup(uname);
    e->cinfo = xstrndup(ci.p ? ci.p : "", ci.len);
    e->ctime_ms = e->created_ms = now;
    e->id = A.log_next_id++;
    A.log = xrealloc(A.log, (size_t)(A.nlog + 1) * sizeof(*A.log));
    memmove(A.log + 1, A.log, (size_t)A.nlog * sizeof(*A.log));
    A.log[0] = e;
    A.nlog++;
    while (A.nlog > 0 && A.nlog > srv.cfg.acllog_max_len) {
        acl_log_entry *old = A.log[--A.nlog];
        free(old->object);
        free(old->username);
        free(old->cinfo);
        free(old);
    }
    pthread_mutex_unlock(&A.log_mu);
    sbuf_free(&ci);
}

uint64_t acl_changes(void)
{
    return atomic_load(&A.changes);
}

uint64_t acl_denied(int reason)
{
    return atomic_load(&A.denied[reason]);
}

void acl_denied_reset(void)
{
    for (int i = 0; i < 5; i++) {
        atomic_store(&A.denied[i], 0);
    }
}

void acl_deny(conn *c, const command *cmd, int res, int pos, int ctx, char **argv,
              uint32_t *lens, char *msg, size_t cap)
{
    atomic_fetch_add(&A.denied[res], 1);
    const char *obj = res == ACL_DENIED_CMD ? cmd_fullname(cmd) : argv[pos];
    size_t olen = res == ACL_DENIED_CMD ? strlen(obj) : lens[pos];
    log_add(c, res, ctx, obj, olen, acl_user_name(c->user));
    if (ctx == ACL_CTX_LUA) {
        snprintf(msg, cap, "%s",
                 res == ACL_DENIED_CMD ? "The user executing the script can't run this command "
                                         "or subcommand"
                 : res == ACL_DENIED_KEY ? "The user executing the script can't access at least "
                                           "one of the keys mentioned in the command arguments"
                                         : "The user executing the script can't publish to the "
                                           "channel mentioned in the command");
        return;
    }
    if (res == ACL_DENIED_CMD) {
        snprintf(msg, cap, "this user has no permissions to run the '%s' command",
                 cmd_fullname(cmd));
    } else if (res == ACL_DENIED_KEY) {
        snprintf(msg, cap,
                 "this user has no permissions to access one of the keys used as arguments");
    } else {
        snprintf(msg, cap,
                 "this user has no permissions to access one of the channels used as arguments");
    }
}

/* ------------------------------------------------------------------------
 * AUTH
 * ---------------------------------------------------------------------- */

static bool hash_eq(const char *a, const char *b)
{
    unsigned diff = 0;
    for (int i = 0; i < HASH_HEX; i++) {
        diff |= (unsigned)(a[i] ^ b[i]);
    }
    return diff == 0;
}

bool acl_authenticate(conn *c, const char *user, uint32_t ulen, const char *pass, uint32_t plen,
                      const char *cmdname, uint32_t cmdlen)
{
    char h[HASH_HEX + 1];
    hash_pass(pass, plen, h);
    rlock(c);
    acl_user *u = user_find(user, ulen);
    bool ok = u != NULL && !(u->flags & U_DISABLED);
    if (ok && !(u->flags & U_NOPASS)) {
        ok = false;
        for (int i = 0; i < u->npw; i++) {
            ok |= hash_eq(u->pw[i], h);
        }
    }
    if (ok) {
        acl_ref(u);
    }
    runlock(c);
    if (!ok) {
        atomic_fetch_add(&A.denied[ACL_DENIED_AUTH], 1);
        char *name = xstrndup(user, ulen);
        log_add(c, ACL_DENIED_AUTH, c->multi ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, cmdname, cmdlen,
                name);
        free(name);
        log_msg(LL_VERBOSE, "Failed AUTH from client id=%llu addr=%s", (unsigned long long)c->id,
                c->addr);
        return false;
    }
    acl_user *old = c->user;
    pthread_mutex_lock(&c->lp->lock); /* CLIENT LIST reads c->user */
    c->user = u;
    pthread_mutex_unlock(&c->lp->lock);
    acl_unref(old);
    c->authed = true;
    return true;
}

/* ------------------------------------------------------------------------
 * The aclfile
 * ---------------------------------------------------------------------- */

/* Users of the aclfile replace the table: NULL, or the errors (Redis's
 * ACLLoadFromFile: nothing changes when any line is wrong). */
static char *load_file(const char *path, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    sbuf errs = {0}, text = {0};
    if (!sbuf_read_file(&text, path)) {
        sbuf_printf(&errs, "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
        sbuf_add(&errs, "", 1);
        sbuf_free(&text);
        return errs.p;
    }
    acl_user **nu = NULL;
    int nn = 0;
    int lineno = 0;
    char *save = NULL;
    for (char *line = strtok_r(text.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        size_t ll = strlen(line);
        while (ll > 0 && strchr(" \t\r", line[ll - 1])) {
            line[--ll] = '\0';
        }
        while (*line == ' ' || *line == '\t') {
            line++;
        }
        if (*line == '\0') {
            continue;
        }
        char *argv[1024];
        uint32_t lens[1024];
        int argc = 0;
        char *s2 = NULL;
        for (char *t = strtok_r(line, " ", &s2); t && argc < 1024; t = strtok_r(NULL, " ", &s2)) {
            argv[argc] = t;
            lens[argc++] = (uint32_t)strlen(t);
        }
        if (argc < 2 || strcmp(argv[0], "user")) {
            sbuf_printf(&errs, "%s:%d should start with user keyword followed by the username. ",
                        path, lineno);
            continue;
        }
        bool dup = false;
        for (int i = 0; i < nn; i++) {
            dup = dup || !strcmp(nu[i]->name, argv[1]);
        }
        if (dup) {
            sbuf_printf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], lineno);
            continue;
        }
        acl_user *u = user_new(argv[1], lens[1]);
        nu = xrealloc(nu, (size_t)(nn + 1) * sizeof(*nu));
        nu[nn++] = u;
        int mc = 0, bad = 0;
        char **ops = merge_selectors(argc - 2, argv + 2, lens + 2, &mc, &bad);
        if (ops == NULL) {
            sbuf_printf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", path,
                        lineno);
            continue;
        }
        for (int j = 0; j < mc; j++) {
            const char *why = user_apply(u, ops[j], strlen(ops[j]));
            if (why) {
                sbuf_printf(&errs, "%s:%d: Error in applying operation '%s': %s. ", path, lineno,
                            ops[j], why);
            }
        }
        strv_free(ops, mc);
    }
    sbuf_free(&text);
    if (errs.len > 0) {
        for (int i = 0; i < nn; i++) {
            user_free(nu[i]);
        }
        free(nu);
        sbuf_printf(&errs, "WARNING: ACL errors detected, no change to the previously active ACL "
                           "rules was performed");
        sbuf_add(&errs, "", 1);
        return errs.p;
    }
    /* the default user object stays (connections hold it): it takes the
     * file's rules, or the defaults when the file has none */
    wlock();
    acl_user *fdef = NULL;
    for (int i = 0; i < nn; i++) {
        if (!strcmp(nu[i]->name, "default")) {
            fdef = nu[i];
        }
    }
    acl_user *old[A.nusers > 0 ? A.nusers : 1];
    int nold = 0;
    for (int i = 0; i < A.nusers; i++) {
        if (A.users[i] != A.def) {
            old[nold++] = A.users[i];
        }
    }
    A.nusers = 0;
    user_insert(A.def);
    if (fdef) {
        user_copy_rules(A.def, fdef);
    } else {
        acl_user *d = user_new("default", 7);
        user_apply_noerr(d, "+@all");
        user_apply_noerr(d, "~*");
        user_apply_noerr(d, "&*");
        user_apply_noerr(d, "on");
        user_apply_noerr(d, "nopass");
        user_copy_rules(A.def, d);
        user_free(d);
    }
    def_changed();
    for (int i = 0; i < nn; i++) {
        if (nu[i] != fdef) {
            atomic_store(&nu[i]->all, user_all(nu[i]));
            user_insert(nu[i]);
        }
    }
    wunlock();
    if (fdef) {
        user_free(fdef);
    }
    free(nu);
    for (int i = 0; i < nold; i++) {
        user_drop(old[i], NULL);
    }
    return NULL;
}

static int save_file(const char *path)
{
    sbuf b = {0};
    for (int i = 0; i < A.nusers; i++) {
        sbuf_printf(&b, "user %s ", A.users[i]->name);
        describe_user(A.users[i], &b);
        sbuf_add(&b, "\n", 1);
    }
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d-%lld", path, (int)getpid(),
             (long long)cudis_now_ms());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = -1;
    if (fd < 0) {
        log_msg(LL_WARNING, "Opening temp ACL file for ACL SAVE: %s", strerror(errno));
    } else if (write(fd, b.p ? b.p : "", b.len) != (ssize_t)b.len) {
        log_msg(LL_WARNING, "Writing ACL file for ACL SAVE: %s", strerror(errno));
    } else if (fsync(fd) != 0 || close(fd) != 0) {
        fd = -1;
        log_msg(LL_WARNING, "Writing ACL file for ACL SAVE: %s", strerror(errno));
    } else {
        fd = -1;
        if (rename(tmp, path) != 0) {
            log_msg(LL_WARNING, "Renaming ACL file for ACL SAVE: %s", strerror(errno));
        } else {
            rc = 0;
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    if (rc != 0) {
        unlink(tmp);
    }
    sbuf_free(&b);
    return rc;
}

/* ------------------------------------------------------------------------
 * The fuzz target's entry points
 * ---------------------------------------------------------------------- */

acl_user *acl_scratch_user(void)
{
    if (A.cats == NULL) {
        cmds_setup();
    }
    return user_new("scratch", 7);
}

bool acl_scratch_apply(acl_user *u, const char *op, size_t len, const char **why)
{
    *why = user_apply(u, op, len);
    return *why == NULL;
}

bool acl_scratch_apply_line(acl_user *u, const char *line, char *err, size_t cap)
{
    char *copy = xstrdup(line);
    int argc = 0, cap_args = 16;
    char **argv = xmalloc((size_t)cap_args * sizeof(char *));
    uint32_t *lens = xmalloc((size_t)cap_args * sizeof(uint32_t));
    char *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (argc == cap_args) {
            cap_args *= 2;
            argv = xrealloc(argv, (size_t)cap_args * sizeof(char *));
            lens = xrealloc(lens, (size_t)cap_args * sizeof(uint32_t));
        }
        argv[argc] = t;
        lens[argc++] = (uint32_t)strlen(t);
    }
    const char *why = apply_all(u, argc, argv, lens, err, cap);
    free(argv);
    free(lens);
    free(copy);
    return why == NULL;
}

void acl_scratch_describe(acl_user *u, sbuf *out)
{
    describe_user(u, out);
}

static bool sel_keys_all(const acl_sel *s)
{
    if (s->flags & SEL_ALLKEYS) {
        return true;
    }
    for (int i = 0; i < s->nkeys; i++) {
        if (s->keys[i].len == 1 && s->keys[i].s[0] == '*' && s->keys[i].perm == ACL_RW) {
            return true;
        }
    }
    return false;
}

bool acl_scratch_same(const acl_user *a, const acl_user *b)
{
    if (a->flags != b->flags || a->npw != b->npw || a->nsels != b->nsels ||
        (a->npw && memcmp(a->pw, b->pw, (size_t)a->npw * sizeof(*a->pw)) != 0)) {
        return false;
    }
    for (int i = 0; i < a->nsels; i++) {
        const acl_sel *x = &a->sels[i], *y = &b->sels[i];
        /* ALLCOMMANDS is only a shortcut: "+@all -get +get" has every bit
         * without it; "%RW~*" is a pattern that any key matches, described
         * (as by Redis) as "~*", which reads back as allkeys */
        uint32_t mask = ~(uint32_t)(SEL_ALLCOMMANDS | SEL_ALLKEYS);
        bool xall = sel_keys_all(x), yall = sel_keys_all(y);
        if ((x->flags & mask) != (y->flags & mask) || xall != yall || x->future != y->future ||
            (!xall && x->nkeys != y->nkeys) ||
            x->nchans != y->nchans ||
            memcmp(x->bits, y->bits, (size_t)A.nwords * sizeof(uint64_t)) != 0) {
            return false;
        }
        for (int k = 0; !xall && k < x->nkeys; k++) {
            if (x->keys[k].len != y->keys[k].len || x->keys[k].perm != y->keys[k].perm ||
                memcmp(x->keys[k].s, y->keys[k].s, x->keys[k].len) != 0) {
                return false;
            }
        }
        for (int k = 0; k < x->nchans; k++) {
            if (x->chans[k].len != y->chans[k].len ||
                memcmp(x->chans[k].s, y->chans[k].s, x->chans[k].len) != 0) {
                return false;
            }
        }
        for (int id = 0; id < A.ncmds; id++) {
            if (bit_get(x, id)) {
                continue; /* first args of an allowed command change nothing */
            }
            char **fx = x->first ? x->first[id] : NULL, **fy = y->first ? y->first[id] : NULL;
            int k = 0;
            for (; fx && fx[k] && fy && fy[k]; k++) {
                if (strcmp(fx[k], fy[k]) != 0) {
                    return false;
                }
            }
            if ((fx && fx[k]) || (fy && fy[k])) {
                return false;
            }
        }
    }
    return true;
}

void acl_scratch_free(acl_user *u)
{
    user_free(u);
}

/* ------------------------------------------------------------------------
 * ACL subcommands
 * ---------------------------------------------------------------------- */

#define H(name) void name(conn *c, int argc, char **argv, uint32_t *lens)

H(cmd_acl_setuser)
{
    if (has_space(argv[2], lens[2])) {
        conn_error(c, "ERR Usernames can't contain spaces or null characters");
        return;
    }
    /* staged on a copy: all the rules or none */
    rlock(c);
    acl_user *tmp = user_new(argv[2], lens[2]);
    acl_user *u = user_find(argv[2], lens[2]);
    if (u) {
        user_copy_rules(tmp, u);
    }
    runlock(c);
    char buf[1024];
    const char *why = apply_all(tmp, argc - 3, argv + 3, lens + 3, buf, sizeof(buf));
    if (why) {
        conn_errorf(c, "ERR %s", why);
        user_free(tmp);
        return;
    }
    wlock();
    u = user_find(argv[2], lens[2]); /* again: another loop may have changed the table */
    bool narrowed = u != NULL && chans_narrowed(u, tmp);
    if (u == NULL) {
        u = user_new(argv[2], lens[2]);
        user_insert(u);
    }
    user_copy_rules(u, tmp);
    if (u == A.def) {
        def_changed();
    }
    wunlock();
    user_free(tmp);
    if (narrowed) { /* its subscribers' loops close those no longer allowed */
        server_clients_flag_user(u, CONN_ACL_CHECK);
    }
    reply_ok(c);
}

H(cmd_acl_deluser)
{
    for (int j = 2; j < argc; j++) {
        if (lens[j] == 7 && !memcmp(argv[j], "default", 7)) {
            conn_error(c, "ERR The 'default' user cannot be removed");
            return;
        }
    }
    int deleted = 0;
    acl_user **gone = xcalloc((size_t)argc, sizeof(*gone));
    wlock();
    for (int j = 2; j < argc; j++) {
        int p = user_pos(argv[j], lens[j]);
        if (p >= 0) {
            gone[deleted++] = A.users[p];
            user_remove_at(p);
        }
    }
    wunlock();
    for (int i = 0; i < deleted; i++) {
        user_drop(gone[i], c);
    }
    free(gone);
    resp_int(&c->out, deleted);
}

static void selector_reply(conn *c, const acl_sel *s)
{
    sbuf d = {0};
    resp_bulk(&c->out, "commands", 8);
    describe_commands(s, &d);
    resp_bulk(&c->out, d.p ? d.p : "", d.len);
    d.len = 0;
    resp_bulk(&c->out, "keys", 4);
    if (s->flags & SEL_ALLKEYS) {
        resp_bulk(&c->out, "~*", 2);
    } else {
        for (int i = 0; i < s->nkeys; i++) {
            if (i) {
                sbuf_add(&d, " ", 1);
            }
            pat_describe(&s->keys[i], &d);
        }
        resp_bulk(&c->out, d.p ? d.p : "", d.len);
    }
    d.len = 0;
    resp_bulk(&c->out, "channels", 8);
    if (s->flags & SEL_ALLCHANNELS) {
        resp_bulk(&c->out, "&*", 2);
    } else {
        for (int i = 0; i < s->nchans; i++) {
            sbuf_printf(&d, "%s&", i ? " " : "");
            sbuf_add(&d, s->chans[i].s, s->chans[i].len);
        }
        resp_bulk(&c->out, d.p ? d.p : "", d.len);
    }
    sbuf_free(&d);
}

H(cmd_acl_getuser)
{
    (void)argc;
    rlock(c);
    acl_user *u = user_find(argv[2], lens[2]);
    if (u == NULL) {
        runlock(c);
        resp_null(&c->out, c->proto);
        return;
    }
    resp_map(&c->out, 6, c->proto);
    resp_bulk(&c->out, "flags", 5);
    int nf = 0;
    for (size_t j = 0; j < sizeof(uflags) / sizeof(uflags[0]); j++) {
        nf += (u->flags & uflags[j].flag) != 0;
    }
    resp_set(&c->out, nf, c->proto);
    for (size_t j = 0; j < sizeof(uflags) / sizeof(uflags[0]); j++) {
        if (u->flags & uflags[j].flag) {
            resp_bulk(&c->out, uflags[j].name, strlen(uflags[j].name));
        }
    }
    resp_bulk(&c->out, "passwords", 9);
    resp_array(&c->out, u->npw);
    for (int i = 0; i < u->npw; i++) {
        resp_bulk(&c->out, u->pw[i], HASH_HEX);
    }
    selector_reply(c, &u->sels[0]);
    resp_bulk(&c->out, "selectors", 9);
    resp_array(&c->out, u->nsels - 1);
    for (int i = 1; i < u->nsels; i++) {
        resp_map(&c->out, 3, c->proto);
        selector_reply(c, &u->sels[i]);
    }
    runlock(c);
}

static void list_users(conn *c, bool names)
{
    rlock(c);
    resp_array(&c->out, A.nusers);
    sbuf d = {0};
    for (int i = 0; i < A.nusers; i++) {
        if (names) {
            resp_bulk(&c->out, A.users[i]->name, strlen(A.users[i]->name));
            continue;
        }
        d.len = 0;
        sbuf_printf(&d, "user %s ", A.users[i]->name);
        describe_user(A.users[i], &d);
        resp_bulk(&c->out, d.p, d.len);
    }
    runlock(c);
    sbuf_free(&d);
}

H(cmd_acl_list)
{
    (void)argc, (void)argv, (void)lens;
    list_users(c, false);
}

H(cmd_acl_users)
{
    (void)argc, (void)argv, (void)lens;
    list_users(c, true);
}

H(cmd_acl_whoami)
{
    (void)argc, (void)argv, (void)lens;
    const char *n = acl_user_name(c->user);
    resp_bulk(&c->out, n, strlen(n));
}

static bool have_file(conn *c)
{
    if (srv.cfg.aclfile && srv.cfg.aclfile[0]) {
        return true;
    }
    conn_error(c, "ERR This Redis instance is not configured to use an ACL file. You may want to "
                  "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
                  "(assuming you have a Redis configuration file set) in order to store users "
                  "in the Redis configuration.");
    return false;
}

H(cmd_acl_load)
{
    (void)argc, (void)argv, (void)lens;
    if (!have_file(c)) {
        return;
    }
    char err[16];
    char *errors = load_file(srv.cfg.aclfile, err, sizeof(err));
    if (errors) {
        conn_errorf(c, "ERR %s", errors);
        free(errors);
        return;
    }
    reply_ok(c);
}

H(cmd_acl_save)
{
    (void)argc, (void)argv, (void)lens;
    if (!have_file(c)) {
        return;
    }
    rlock(c);
    int rc = save_file(srv.cfg.aclfile);
    runlock(c);
    if (rc != 0) {
        conn_error(c, "ERR There was an error trying to save the ACLs. Please check the server "
                      "logs for more information");
        return;
    }
    reply_ok(c);
}

H(cmd_acl_cat)
{
    if (argc == 2) {
        resp_array(&c->out, ACLC_COUNT);
        for (int i = 0; i < ACLC_COUNT; i++) {
            resp_bulk(&c->out, cat_names[i], strlen(cat_names[i]));
        }
        return;
    }
    if (argc > 3) {
        conn_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL "
                       "HELP.", (int)lens[1], argv[1]);
        return;
    }
    uint32_t cat = cat_by_name(argv[2], lens[2]);
    if (cat == 0) {
        conn_errorf(c, "ERR Unknown category '%.*s'", (int)(lens[2] < 128 ? lens[2] : 128),
                    argv[2]);
        return;
    }
    int n = 0;
    for (int i = 0; i < A.ncmds; i++) {
        n += (A.cats[i] & cat) != 0;
    }
    resp_array(&c->out, n);
    for (int t = 0; t < cmd_top_count(); t++) {
        const command *cmd = cmd_top(t);
        if (A.cats[cmd_idx(cmd)] & cat) {
            resp_bulk(&c->out, cmd_fullname(cmd), strlen(cmd_fullname(cmd)));
        }
        if (cmd->flags & CMD_CONTAINER) {
            CMD_FOR_SUBS(sub, cmd)
            {
                if (A.cats[cmd_idx(sub)] & cat) {
                    resp_bulk(&c->out, cmd_fullname(sub), strlen(cmd_fullname(sub)));
                }
            }
        }
    }
}

H(cmd_acl_genpass)
{
    long long bits = 256;
    if (argc == 3 && !util_str2ll(argv[2], lens[2], &bits)) {
        conn_error(c, "ERR value is not an integer or out of range");
        return;
    }
    if (argc > 3) {
        conn_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL "
                       "HELP.", (int)lens[1], argv[1]);
        return;
    }
    if (bits <= 0 || bits > 4096) {
        conn_error(c, "ERR ACL GENPASS argument must be the number of bits for the output "
                      "password, a positive number up to 4096");
        return;
    }
    unsigned char raw[512];
    size_t nb = (size_t)(bits + 7) / 8, got = 0;
    while (got < nb) {
        ssize_t r = getrandom(raw + got, nb - got, 0);
        if (r <= 0) {
            if (r < 0 && errno == EINTR) {
                continue;
            }
            conn_error(c, "ERR can't read random bytes");
            return;
        }
        got += (size_t)r;
    }
    static const char hex[] = "0123456789abcdef";
    char out[1024];
    size_t chars = (size_t)(bits + 3) / 4;
    for (size_t i = 0; i < chars; i++) {
        unsigned char b = raw[i / 2];
        out[i] = hex[(i % 2) ? (b & 15) : (b >> 4)];
    }
    resp_bulk(&c->out, out, chars);
}

H(cmd_acl_log)
{
    long long count = 10;
    if (argc > 3) {
        conn_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL "
                       "HELP.", (int)lens[1], argv[1]);
        return;
    }
    if (argc == 3) {
        if (util_eq(argv[2], lens[2], "reset")) {
            pthread_mutex_lock(&A.log_mu);
            for (int i = 0; i < A.nlog; i++) {
                free(A.log[i]->object);
                free(A.log[i]->username);
                free(A.log[i]->cinfo);
                free(A.log[i]);
            }
            A.nlog = 0;
            pthread_mutex_unlock(&A.log_mu);
            reply_ok(c);
            return;
        }
        if (!util_str2ll(argv[2], lens[2], &count)) {
            conn_error(c, "ERR value is not an integer or out of range");
            return;
        }
        if (count < 0) {
            count = 0;
        }
    }
    static const char *const reasons[] = {"unknown", "command", "key", "auth", "channel"};
    static const char *const ctxs[] = {"toplevel", "multi", "lua"};
    int64_t now = cudis_now_ms();
    pthread_mutex_lock(&A.log_mu);
    if (count > A.nlog) {
        count = A.nlog;
    }
    resp_array(&c->out, (long long)count);
    for (int i = 0; i < count; i++) {
        acl_log_entry *e = A.log[i];
        resp_map(&c->out, 10, c->proto);
        resp_bulk(&c->out, "count", 5);
        resp_int(&c->out, (long long)e->count);
        resp_bulk(&c->out, "reason", 6);
        resp_bulk(&c->out, reasons[e->reason], strlen(reasons[e->reason]));
        resp_bulk(&c->out, "context", 7);
        resp_bulk(&c->out, ctxs[e->context], strlen(ctxs[e->context]));
        resp_bulk(&c->out, "object", 6);
        resp_bulk(&c->out, e->object, strlen(e->object));
        resp_bulk(&c->out, "username", 8);
        resp_bulk(&c->out, e->username, strlen(e->username));
        resp_bulk(&c->out, "age-seconds", 11);
        resp_double(&c->out, (double)(now - e->ctime_ms) / 1000.0, c->proto);
        resp_bulk(&c->out, "client-info", 11);
        resp_bulk(&c->out, e->cinfo, strlen(e->cinfo));
        resp_bulk(&c->out, "entry-id", 8); /* Redis 7.2's three */
        resp_int(&c->out, (long long)e->id);
        resp_bulk(&c->out, "timestamp-created", 17);
        resp_int(&c->out, (long long)e->created_ms);
        resp_bulk(&c->out, "timestamp-last-updated", 22);
        resp_int(&c->out, (long long)e->ctime_ms);
    }
    pthread_mutex_unlock(&A.log_mu);
}

H(cmd_acl_dryrun)
{
    rlock(c);
    acl_user *u = user_find(argv[2], lens[2]);
    if (u == NULL) {
        runlock(c);
        conn_errorf(c, "ERR User '%.*s' not found", (int)lens[2], argv[2]);
        return;
    }
    const command *cmd = cmd_lookup(argv[3], lens[3]);
    if (cmd && (cmd->flags & CMD_CONTAINER)) {
        cmd = argc >= 5 ? cmd_lookup_sub(cmd, argv[4], lens[4]) : NULL;
    }
    if (cmd == NULL) {
        runlock(c);
        conn_errorf(c, "ERR Command '%.*s' not found", (int)lens[3], argv[3]);
        return;
    }
    int n = argc - 3;
    if ((cmd->arity > 0 && cmd->arity != n) || n < -cmd->arity) {
        runlock(c);
        conn_errorf(c, "ERR wrong number of arguments for '%s' command", cmd_fullname(cmd));
        return;
    }
    int pos = 0;
    int r = user_check(u, cmd, n, argv + 3, lens + 3, &pos);
    runlock(c);
    char msg[512];
    if (r == ACL_OK) {
        reply_ok(c);
        return;
    }
    if (r == ACL_DENIED_CMD) {
        snprintf(msg, sizeof(msg), "This user has no permissions to run the '%s' command",
                 cmd_fullname(cmd));
    } else {
        snprintf(msg, sizeof(msg), "This user has no permissions to access the '%.*s' %s",
                 (int)(lens[pos + 3] < 256 ? lens[pos + 3] : 256), argv[pos + 3],
                 r == ACL_DENIED_KEY ? "key" : "channel");
    }
    resp_bulk(&c->out, msg, strlen(msg));
}

H(cmd_acl_help)
{
    (void)argc, (void)argv, (void)lens;
    static const char *const lines[] = {
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the "
        "command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Print this help.",
        NULL};
    help_reply(c, "ACL", lines);
}
