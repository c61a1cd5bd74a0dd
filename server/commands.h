/*
 * commands.h - the command table: one const row per command (designated
 * initializers: name, arity, flags, keys, handler, documentation), the list
 * every handler's prototype comes from, and the lookups dispatch, COMMAND and
 * INFO use. Adding a command is one row in commands.c plus its handler
 * (and its name in CMD_HANDLERS).
 *
 * A container (CONFIG, CLIENT, COMMAND, MEMORY) is followed in the table by
 * its nsubs subcommands (flag CMD_SUB). What is computed at start (each
 * command's index for statistics, "config|get" full names, parents) lives
 * beside the table, not in it; per-command counters live in each loop.
 */
#ifndef COMMANDS_H
#define COMMANDS_H

#include <stddef.h>
#include <stdint.h>

typedef struct conn conn;
typedef struct command command;

#define CMD_WRITE 0x0001
#define CMD_READONLY 0x0002
#define CMD_FAST 0x0004
#define CMD_NOAUTH 0x0008   /* allowed before AUTH (AUTH, HELLO, QUIT) */
#define CMD_EXCL 0x0010     /* drain the batch, then run alone (engine lock exclusive) */
#define CMD_BATCH 0x0020    /* becomes engine ops in the open batch */
#define CMD_ADMIN 0x0040
#define CMD_CONTAINER 0x0080
#define CMD_LOADING 0x0100
#define CMD_STALE 0x0200
#define CMD_NOSCRIPT 0x0400
#define CMD_SUB 0x0800      /* a subcommand: the row follows its container */
#define CMD_NOQUEUE 0x1000  /* runs at once inside MULTI (EXEC, DISCARD, WATCH...) */
#define CMD_DRAIN 0x2000    /* drain the batch first: it changes how replies render */
#define CMD_PUBSUB 0x4000   /* allowed in RESP2 subscribed mode (subscribe family, PING...) */
#define CMD_ALLOW_BUSY 0x8000 /* runs while a script is busy (SCRIPT KILL, SHUTDOWN, MULTI...) */
#define CMD_BLOCKING 0x10000  /* may block the client (BLPOP...) */
#define CMD_NOMULTI 0x20000   /* refused inside MULTI (SAVE, SHUTDOWN: Redis's no-multi) */
/* Redis's flags that COMMAND INFO reports and nothing here acts on yet:
 * denyoom (refused when over maxmemory: cudis refuses the op that finds no
 * room instead), skip_monitor, skip_slowlog, asking, no_async_loading */
#define CMD_DENYOOM 0x40000
#define CMD_SKIP_MONITOR 0x80000
#define CMD_SKIP_SLOWLOG 0x100000
#define CMD_ASKING 0x200000
#define CMD_NO_ASYNC_LOADING 0x400000

typedef void (*cmd_fn)(conn *c, int argc, char **argv, uint32_t *lens);

struct command {
    const char *name;       /* lower case; subcommands: the subcommand alone */
    int arity;              /* > 0 exact, < 0 at least -arity */
    uint32_t flags;
    int first_key, last_key, step;
    cmd_fn fn;              /* NULL: a container without a call of its own */
    const char *group;
    const char *since;
    const char *summary;
    const char *complexity; /* NULL: O(1) */
    int nsubs;              /* containers: the subcommands that follow */
};

/* Every handler, once: its prototype comes from here. */
#define CMD_HANDLERS(X)                                                                            \
    X(cmd_ping)                                                                                    \
    X(cmd_echo)                                                                                    \
    X(cmd_quit)                                                                                    \
    X(cmd_hello)                                                                                   \
    X(cmd_auth)                                                                                    \
    X(cmd_select)                                                                                  \
    X(cmd_client_id)                                                                               \
    X(cmd_client_getname)                                                                          \
    X(cmd_client_setname)                                                                          \
    X(cmd_client_setinfo)                                                                          \
    X(cmd_client_list)                                                                             \
    X(cmd_client_info)                                                                             \
    X(cmd_client_kill)                                                                             \
    X(cmd_client_help)                                                                             \
    X(cmd_client_tracking)                                                                         \
    X(cmd_client_caching)                                                                          \
    X(cmd_client_getredir)                                                                         \
    X(cmd_client_trackinginfo)                                                                     \
    X(cmd_client_reply)                                                                            \
    X(cmd_client_no_evict)                                                                         \
    X(cmd_client_no_touch)                                                                         \
    X(cmd_client_unblock)                                                                          \
    X(cmd_client_pause)                                                                            \
    X(cmd_client_unpause)                                                                          \
    X(cmd_reset)                                                                                   \
    X(cmd_multi)                                                                                   \
    X(cmd_exec)                                                                                    \
    X(cmd_discard)                                                                                 \
    X(cmd_watch)                                                                                   \
    X(cmd_unwatch)                                                                                 \
    X(cmd_subscribe)                                                                               \
    X(cmd_unsubscribe)                                                                             \
    X(cmd_psubscribe)                                                                              \
    X(cmd_punsubscribe)                                                                            \
    X(cmd_publish)                                                                                 \
    X(cmd_ssubscribe)                                                                              \
    X(cmd_sunsubscribe)                                                                            \
    X(cmd_spublish)                                                                                \
    X(cmd_pubsub_channels)                                                                         \
    X(cmd_pubsub_numsub)                                                                           \
    X(cmd_pubsub_numpat)                                                                           \
    X(cmd_pubsub_shardchannels)                                                                    \
    X(cmd_pubsub_shardnumsub)                                                                      \
    X(cmd_pubsub_help)                                                                             \
    X(cmd_eval)                                                                                    \
    X(cmd_evalsha)                                                                                 \
    X(cmd_eval_ro)                                                                                 \
    X(cmd_evalsha_ro)                                                                              \
    X(cmd_script_load)                                                                             \
    X(cmd_script_exists)                                                                           \
    X(cmd_script_flush)                                                                            \
    X(cmd_script_kill)                                                                             \
    X(cmd_script_help)                                                                             \
    X(cmd_fcall)                                                                                   \
    X(cmd_fcall_ro)                                                                                \
    X(cmd_function_load)                                                                           \
    X(cmd_function_delete)                                                                         \
    X(cmd_function_list)                                                                           \
    X(cmd_function_stats)                                                                          \
    X(cmd_function_flush)                                                                          \
    X(cmd_function_kill)                                                                           \
    X(cmd_function_dump)                                                                           \
    X(cmd_function_restore)                                                                        \
    X(cmd_function_help)                                                                           \
    X(cmd_slowlog_get)                                                                             \
    X(cmd_slowlog_len)                                                                             \
    X(cmd_slowlog_reset)                                                                           \
    X(cmd_slowlog_help)                                                                            \
    X(cmd_latency_latest)                                                                          \
    X(cmd_latency_history)                                                                         \
    X(cmd_latency_reset)                                                                           \
    X(cmd_latency_doctor)                                                                          \
    X(cmd_latency_histogram)                                                                       \
    X(cmd_latency_help)                                                                            \
    X(cmd_monitor)                                                                                 \
    X(cmd_setbit)                                                                                  \
    X(cmd_getbit)                                                                                  \
    X(cmd_bitcount)                                                                                \
    X(cmd_bitpos)                                                                                  \
    X(cmd_bitfield)                                                                                \
    X(cmd_bitfield_ro)                                                                             \
    X(cmd_bitop)                                                                                   \
    X(cmd_lcs)                                                                                     \
    X(cmd_dump)                                                                                    \
    X(cmd_restore)                                                                                 \
    X(cmd_object_encoding)                                                                         \
    X(cmd_object_refcount)                                                                         \
    X(cmd_object_freq)                                                                             \
    X(cmd_object_idletime)                                                                         \
    X(cmd_object_help)                                                                             \
    X(cmd_get)                                                                                     \
    X(cmd_set)                                                                                     \
    X(cmd_setnx)                                                                                   \
    X(cmd_setex)                                                                                   \
    X(cmd_psetex)                                                                                  \
    X(cmd_getset)                                                                                  \
    X(cmd_getdel)                                                                                  \
    X(cmd_getex)                                                                                   \
    X(cmd_mget)                                                                                    \
    X(cmd_mset)                                                                                    \
    X(cmd_msetnx)                                                                                  \
    X(cmd_append)                                                                                  \
    X(cmd_strlen)                                                                                  \
    X(cmd_getrange)                                                                                \
    X(cmd_setrange)                                                                                \
    X(cmd_incr)                                                                                    \
    X(cmd_decr)                                                                                    \
    X(cmd_incrby)                                                                                  \
    X(cmd_decrby)                                                                                  \
    X(cmd_incrbyfloat)                                                                             \
    X(cmd_del)                                                                                     \
    X(cmd_exists)                                                                                  \
    X(cmd_touch)                                                                                   \
    X(cmd_type)                                                                                    \
    X(cmd_hset)                                                                                    \
    X(cmd_hsetnx)                                                                                  \
    X(cmd_hmset)                                                                                   \
    X(cmd_hget)                                                                                    \
    X(cmd_hmget)                                                                                   \
    X(cmd_hdel)                                                                                    \
    X(cmd_hlen)                                                                                    \
    X(cmd_hstrlen)                                                                                 \
    X(cmd_hexists)                                                                                 \
    X(cmd_hkeys)                                                                                   \
    X(cmd_hvals)                                                                                   \
    X(cmd_hgetall)                                                                                 \
    X(cmd_hincrby)                                                                                 \
    X(cmd_hincrbyfloat)                                                                            \
    X(cmd_hrandfield)                                                                              \
    X(cmd_hscan)                                                                                   \
    X(cmd_sadd)                                                                                    \
    X(cmd_srem)                                                                                    \
    X(cmd_scard)                                                                                   \
    X(cmd_sismember)                                                                               \
    X(cmd_smismember)                                                                              \
    X(cmd_smembers)                                                                                \
    X(cmd_srandmember)                                                                             \
    X(cmd_sscan)                                                                                   \
    X(cmd_sinter)                                                                                  \
    X(cmd_sunion)                                                                                  \
    X(cmd_sdiff)                                                                                   \
    X(cmd_sintercard)                                                                              \
    X(cmd_sinterstore)                                                                             \
    X(cmd_sunionstore)                                                                             \
    X(cmd_sdiffstore)                                                                              \
    X(cmd_spop)                                                                                    \
    X(cmd_smove)                                                                                   \
    X(cmd_lpush)                                                                                   \
    X(cmd_rpush)                                                                                   \
    X(cmd_lpushx)                                                                                  \
    X(cmd_rpushx)                                                                                  \
    X(cmd_llen)                                                                                    \
    X(cmd_lpop)                                                                                    \
    X(cmd_rpop)                                                                                    \
    X(cmd_lrange)                                                                                  \
    X(cmd_lindex)                                                                                  \
    X(cmd_lpos)                                                                                    \
    X(cmd_lset)                                                                                    \
    X(cmd_linsert)                                                                                 \
    X(cmd_lrem)                                                                                    \
    X(cmd_ltrim)                                                                                   \
    X(cmd_lmove)                                                                                   \
    X(cmd_rpoplpush)                                                                               \
    X(cmd_lmpop)                                                                                   \
    X(cmd_blpop)                                                                                   \
    X(cmd_brpop)                                                                                   \
    X(cmd_blmpop)                                                                                  \
    X(cmd_blmove)                                                                                  \
    X(cmd_brpoplpush)                                                                              \
    X(cmd_zadd)                                                                                    \
    X(cmd_zincrby)                                                                                 \
    X(cmd_zrem)                                                                                    \
    X(cmd_zcard)                                                                                   \
    X(cmd_zscore)                                                                                  \
    X(cmd_zmscore)                                                                                 \
    X(cmd_zrank)                                                                                   \
    X(cmd_zrevrank)                                                                                \
    X(cmd_zcount)                                                                                  \
    X(cmd_zlexcount)                                                                               \
    X(cmd_zrange)                                                                                  \
    X(cmd_zrevrange)                                                                               \
    X(cmd_zrangebyscore)                                                                           \
    X(cmd_zrevrangebyscore)                                                                        \
    X(cmd_zrangebylex)                                                                             \
    X(cmd_zrevrangebylex)                                                                          \
    X(cmd_zrangestore)                                                                             \
    X(cmd_zremrangebyrank)                                                                         \
    X(cmd_zremrangebyscore)                                                                        \
    X(cmd_zremrangebylex)                                                                          \
    X(cmd_zpopmin)                                                                                 \
    X(cmd_zpopmax)                                                                                 \
    X(cmd_zrandmember)                                                                             \
    X(cmd_zscan)                                                                                   \
    X(cmd_zunion)                                                                                  \
    X(cmd_zinter)                                                                                  \
    X(cmd_zdiff)                                                                                   \
    X(cmd_zintercard)                                                                              \
    X(cmd_zunionstore)                                                                             \
    X(cmd_zinterstore)                                                                             \
    X(cmd_zdiffstore)                                                                              \
    X(cmd_zmpop)                                                                                   \
    X(cmd_bzpopmin)                                                                                \
    X(cmd_bzpopmax)                                                                                \
    X(cmd_bzmpop)                                                                                  \
    X(cmd_sort)                                                                                    \
    X(cmd_sort_ro)                                                                                 \
    X(cmd_expire)                                                                                  \
    X(cmd_pexpire)                                                                                 \
    X(cmd_expireat)                                                                                \
    X(cmd_pexpireat)                                                                               \
    X(cmd_ttl)                                                                                     \
    X(cmd_pttl)                                                                                    \
    X(cmd_expiretime)                                                                              \
    X(cmd_pexpiretime)                                                                             \
    X(cmd_persist)                                                                                 \
    X(cmd_rename)                                                                                  \
    X(cmd_renamenx)                                                                                \
    X(cmd_copy)                                                                                    \
    X(cmd_move)                                                                                    \
    X(cmd_keys)                                                                                    \
    X(cmd_scan)                                                                                    \
    X(cmd_randomkey)                                                                               \
    X(cmd_dbsize)                                                                                  \
    X(cmd_flushall)                                                                                \
    X(cmd_lastsave)                                                                                \
    X(cmd_save)                                                                                    \
    X(cmd_bgsave)                                                                                  \
    X(cmd_role)                                                                                    \
    X(cmd_wait)                                                                                    \
    X(cmd_swapdb)                                                                                  \
    X(cmd_time)                                                                                    \
    X(cmd_info)                                                                                    \
    X(cmd_acl_cat)                                                                                 \
    X(cmd_acl_deluser)                                                                             \
    X(cmd_acl_dryrun)                                                                              \
    X(cmd_acl_genpass)                                                                             \
    X(cmd_acl_getuser)                                                                             \
    X(cmd_acl_help)                                                                                \
    X(cmd_acl_list)                                                                                \
    X(cmd_acl_load)                                                                                \
    X(cmd_acl_log)                                                                                 \
    X(cmd_acl_save)                                                                                \
    X(cmd_acl_setuser)                                                                             \
    X(cmd_acl_users)                                                                               \
    X(cmd_acl_whoami)                                                                              \
    X(cmd_config_get)                                                                              \
    X(cmd_config_set)                                                                              \
    X(cmd_config_resetstat)                                                                        \
    X(cmd_config_rewrite)                                                                          \
    X(cmd_config_help)                                                                             \
    X(cmd_command)                                                                                 \
    X(cmd_command_count)                                                                           \
    X(cmd_command_info)                                                                            \
    X(cmd_command_docs)                                                                            \
    X(cmd_command_list)                                                                            \
    X(cmd_command_getkeys)                                                                         \
    X(cmd_command_getkeysandflags)                                                                 \
    X(cmd_command_help)                                                                            \
    X(cmd_memory_usage)                                                                            \
    X(cmd_memory_help)                                                                             \
    X(cmd_memory_stats)                                                                            \
    X(cmd_memory_doctor)                                                                           \
    X(cmd_memory_malloc_stats)                                                                     \
    X(cmd_memory_purge)                                                                            \
    X(cmd_cluster_info)                                                                            \
    X(cmd_cluster_nodes)                                                                           \
    X(cmd_cluster_slots)                                                                           \
    X(cmd_cluster_shards)                                                                          \
    X(cmd_cluster_myid)                                                                            \
    X(cmd_cluster_myshardid)                                                                       \
    X(cmd_cluster_keyslot)                                                                         \
    X(cmd_cluster_countkeysinslot)                                                                 \
    X(cmd_cluster_getkeysinslot)                                                                   \
    X(cmd_cluster_addslots)                                                                        \
    X(cmd_cluster_addslotsrange)                                                                   \
    X(cmd_cluster_delslots)                                                                        \
    X(cmd_cluster_delslotsrange)                                                                   \
    X(cmd_cluster_flushslots)                                                                      \
    X(cmd_cluster_setslot)                                                                         \
    X(cmd_cluster_meet)                                                                            \
    X(cmd_cluster_forget)                                                                          \
    X(cmd_cluster_reset)                                                                           \
    X(cmd_cluster_saveconfig)                                                                      \
    X(cmd_cluster_set_config_epoch)                                                                \
    X(cmd_cluster_bumpepoch)                                                                       \
    X(cmd_cluster_count_failure_reports)                                                           \
    X(cmd_cluster_replicas)                                                                        \
    X(cmd_cluster_replicate)                                                                       \
    X(cmd_cluster_links)                                                                           \
    X(cmd_cluster_help)                                                                            \
    X(cmd_asking)                                                                                  \
    X(cmd_readonly)                                                                                \
    X(cmd_readwrite)                                                                               \
    X(cmd_migrate)                                                                                 \
    X(cmd_restore_asking)                                                                          \
    X(cmd_shutdown)
#define CMD_PROTO(fn) void fn(conn *c, int argc, char **argv, uint32_t *lens);
CMD_HANDLERS(CMD_PROTO)
#undef CMD_PROTO

/* Index the table (names, full names, parents). Once, at start. */
void cmd_table_setup(void);

/* Lookup by name, case-insensitive; NULL when unknown. */
const command *cmd_lookup(const char *name, size_t len);
const command *cmd_lookup_sub(const command *parent, const char *name, size_t len);

/* Every command and subcommand: cmd_count() of them, cmd_idx(c) their place
 * (statistics slots). The top-level commands: cmd_top_count(), cmd_top(i). */
int cmd_count(void);
const command *cmd_by_idx(int i);
int cmd_idx(const command *c);
int cmd_top_count(void);
const command *cmd_top(int i);

/* The argument positions of cmd's keys (cluster slots, COMMAND GETKEYS):
 * the table's first/last/step, and the commands whose keys follow a
 * count (EVAL, FCALL, ZUNIONSTORE, LMPOP...), SORT's STORE, MIGRATE's
 * KEYS. Up to max go to pos; returns how many there are. */
int cmd_keys_of(const command *cmd, int argc, char **argv, uint32_t *lens, int *pos, int max);

/* "get", "config|get". */
const char *cmd_fullname(const command *c);
/* The container of a subcommand, NULL for a top-level command. */
const command *cmd_parent(const command *c);

/* The subcommands of a container, in table order. */
#define CMD_FOR_SUBS(s, cmd) for (const command *s = (cmd) + 1; s <= (cmd) + (cmd)->nsubs; s++)

#endif /* COMMANDS_H */
