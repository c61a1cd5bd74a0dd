/*
 * acl.h - users and what they may run (Redis 7's ACL): the user table,
 * the rules of ACL SETUSER and the conf's `user` lines, AUTH, the check
 * dispatch makes before every command (its command bit, the keys it
 * names, the channels it publishes or subscribes to), the ACL log, and
 * the commands' ACL categories and key specs (acl_spec.c, generated from
 * Redis's own COMMAND reply by scripts/gen_acl_spec.py).
 *
 * Threads: the users are shared by every loop. A check takes its own
 * loop's acl_mu; a change (SETUSER, DELUSER, LOAD, requirepass) takes
 * every loop's, so checks cost one uncontended lock and see a user
 * either before or after a change. A connection holds a reference to
 * its user: a deleted user stays allocated until its last connection
 * (killed by the deletion) is freed.
 */
#ifndef ACL_H
#define ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct conn conn;
typedef struct command command;
typedef struct sbuf sbuf;
typedef struct acl_user acl_user;

/* The categories, in Redis's order (ACL CAT lists them so). */
#define ACLC_KEYSPACE (1u << 0)
#define ACLC_READ (1u << 1)
#define ACLC_WRITE (1u << 2)
#define ACLC_SET (1u << 3)
#define ACLC_SORTEDSET (1u << 4)
#define ACLC_LIST (1u << 5)
#define ACLC_HASH (1u << 6)
#define ACLC_STRING (1u << 7)
#define ACLC_BITMAP (1u << 8)
#define ACLC_HYPERLOGLOG (1u << 9)
#define ACLC_GEO (1u << 10)
#define ACLC_STREAM (1u << 11)
#define ACLC_PUBSUB (1u << 12)
#define ACLC_ADMIN (1u << 13)
#define ACLC_FAST (1u << 14)
#define ACLC_SLOW (1u << 15)
#define ACLC_BLOCKING (1u << 16)
#define ACLC_DANGEROUS (1u << 17)
#define ACLC_CONNECTION (1u << 18)
#define ACLC_TRANSACTION (1u << 19)
#define ACLC_SCRIPTING (1u << 20)
#define ACLC_COUNT 21

/* Key spec flags (Redis's CMD_KEY_*). */
#define KS_RO 0x0001
#define KS_RW 0x0002
#define KS_OW 0x0004
#define KS_RM 0x0008
#define KS_ACCESS 0x0010
#define KS_UPDATE 0x0020
#define KS_INSERT 0x0040
#define KS_DELETE 0x0080
#define KS_NOT_KEY 0x0100
#define KS_INCOMPLETE 0x0200
#define KS_VARIABLE_FLAGS 0x0400

enum { KS_BS_UNKNOWN, KS_BS_INDEX, KS_BS_KEYWORD };
enum { KS_FK_UNKNOWN, KS_FK_RANGE, KS_FK_KEYNUM };

typedef struct acl_keyspec {
    uint16_t flags;
    uint8_t bs;          /* KS_BS_*: where the search begins */
    int16_t index;       /* KS_BS_INDEX */
    const char *keyword; /* KS_BS_KEYWORD, searched from startfrom (< 0: from the end) */
    int16_t startfrom;
    uint8_t fk;          /* KS_FK_*: range (lastkey, step, limit) or keynum (idx, first, step) */
    int16_t a, b, c;
} acl_keyspec;

#define ACL_MAX_SPECS 4

typedef struct acl_spec {
    const char *name; /* full name: "get", "config|get" */
    uint32_t cats;
    int nspecs;
    acl_keyspec ks[ACL_MAX_SPECS];
} acl_spec;

extern const acl_spec acl_specs[];
extern const int acl_nspecs;

/* Check results (Redis's order: the most specific denial is reported). */
enum { ACL_OK, ACL_DENIED_CMD, ACL_DENIED_KEY, ACL_DENIED_AUTH, ACL_DENIED_CHANNEL };
/* Where a denial happened (ACL LOG's context). */
enum { ACL_CTX_TOPLEVEL, ACL_CTX_MULTI, ACL_CTX_LUA };

/* After the command table and the config: the default user (requirepass),
 * the conf's `user` lines, the aclfile. 0, or -1 with why in err (the
 * server does not start, as Redis). */
int acl_setup(char *err, size_t errlen);
void acl_teardown(void);
/* A conf `user <name> rules...` line, kept for acl_setup (the rules are
 * checked now: -1 with Redis's error in err). */
int acl_conf_user(int argc, char **argv, char *err, size_t errlen);

/* A new reference to the default user; one more / one less reference. */
acl_user *acl_default_user(void);
void acl_ref(acl_user *u);
void acl_unref(acl_user *u);
const char *acl_user_name(const acl_user *u);
/* A reference to the user of that name, or NULL. */
acl_user *acl_find_user(conn *c, const char *name, size_t n);
/* INFO's acl_access_denied_* (per ACL_DENIED_*), CONFIG RESETSTAT. */
uint64_t acl_denied(int reason);
void acl_denied_reset(void);
/* Grows with every change of the users and every ACL LOG entry (the fuzz
 * target starts each input from acl_setup's state when it moved). */
uint64_t acl_changes(void);
/* Whether the default user is on with nopass: connections start
 * authenticated, and protected mode applies. */
bool acl_default_open(void);
bool acl_default_nopass(void); /* protected mode's test, as Redis's */
/* requirepass changed: the default user's password (empty: nopass). */
void acl_set_requirepass(const char *pass);

/* AUTH / HELLO AUTH: true and c->user replaced when the pair is valid;
 * else logged (ACL LOG "auth", INFO acl_access_denied_auth). */
bool acl_authenticate(conn *c, const char *user, uint32_t ulen, const char *pass, uint32_t plen,
                      const char *cmdname, uint32_t cmdlen);

/* May c's user run cmd with these arguments? ACL_OK, or the denial with
 * *pos the argument denied (a key or channel). */
int acl_check(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens, int *pos);
/* A denial: into ACL LOG (by ctx) and INFO, and its text: the NOPERM
 * message (without the code) for the client, or the script's wording. */
void acl_deny(conn *c, const command *cmd, int res, int pos, int ctx, char **argv,
              uint32_t *lens, char *msg, size_t cap);

/* Whether c's user still may use every channel c subscribes to (its
 * loop asks after CONN_ACL_CHECK: else c is closed, as Redis does). */
bool acl_subscriptions_ok(conn *c);

/* A key among a command's arguments: its index in argv, its key spec flags
 * (KS_*). */
typedef struct acl_keyref {
    int pos;
    uint16_t flags;
} acl_keyref;
#define ACL_KEYS_SMALL 16 /* commands of up to this many arguments allocate nothing */

/* The keys among argv (argv[0] the command's name), as Redis's
 * getKeysFromCommandWithSpecs finds them (COMMAND GETKEYS, the ACL's key
 * checks): their count, in *out, which is small (ACL_KEYS_SMALL entries)
 * or else allocated (the caller frees it when it is not small). */
int acl_cmd_keys(const command *cmd, int argc, char **argv, uint32_t *lens, acl_keyref *small,
                 acl_keyref **out);
/* The command's key specs (Redis 7.0.15's, acl_spec.c), or NULL for a
 * command Redis does not have. */
const acl_spec *acl_cmd_spec(const command *cmd);

/* The ACL categories of a command ("@read"... as COMMAND INFO lists them). */
uint32_t acl_cmd_cats(const command *cmd);
const char *acl_cat_name(int bit);

/* Rule parsing for the fuzz target: apply rules to a scratch user and
 * describe it as ACL LIST would; false with Redis's reason on error. */
acl_user *acl_scratch_user(void);
bool acl_scratch_apply(acl_user *u, const char *op, size_t len, const char **why);
/* A line of rules split at spaces, selectors merged, as ACL SETUSER takes
 * them: false with the error in err. */
bool acl_scratch_apply_line(acl_user *u, const char *line, char *err, size_t cap);
void acl_scratch_describe(acl_user *u, sbuf *out);
bool acl_scratch_same(const acl_user *a, const acl_user *b); /* equal permissions */
void acl_scratch_free(acl_user *u);

#endif /* ACL_H */
