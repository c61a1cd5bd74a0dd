/*
 * config.h - the server's options: ONE declarative table (name, type,
 * default, bounds, whether CONFIG SET may change it, one-line description)
 * drives the config file parser, command-line --option value pairs,
 * --help, CONFIG GET/SET and the generated conf/cudis.conf.
 */
#ifndef SERVER_CONFIG_H
#define SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util.h"

typedef enum {
    OPT_BOOL,   /* yes|no -> bool */
    OPT_INT,    /* decimal -> long long, within [min, max] */
    OPT_MEM,    /* memory size with b/k/kb/m/mb/g/gb -> long long bytes */
    OPT_OCTAL,  /* octal permission bits -> long long */
    OPT_STR,    /* free text -> char * (owned) */
    OPT_ENUM,   /* one of enum_vals ("a|b|c") -> char * */
    OPT_COBL,   /* client-output-buffer-limit classes -> char *, parsed to limits */
    OPT_KEVENTS /* notify-keyspace-events classes -> char * (Redis's spelling), notify_flags */
} opt_type;

typedef struct srv_config {
    char *bind;
    long long port;
    char *unixsocket;
    long long unixsocketperm;
    bool protected_mode;
    char *requirepass;
    char *aclfile;
    long long acllog_max_len;
    char *acl_pubsub_default;
    long long maxclients;
    long long timeout;
    long long tcp_keepalive;
    long long tcp_backlog;
    long long tls_port;
    char *tls_cert_file, *tls_key_file, *tls_key_file_pass;
    char *tls_client_cert_file, *tls_client_key_file, *tls_client_key_file_pass;
    char *tls_dh_params_file, *tls_ca_cert_file, *tls_ca_cert_dir;
    char *tls_auth_clients;
    bool tls_replication, tls_cluster;
    char *tls_protocols, *tls_ciphers, *tls_ciphersuites;
    bool tls_prefer_server_ciphers, tls_session_caching;
    long long tls_session_cache_size, tls_session_cache_timeout;
    long long maxmemory;
    char *maxmemory_policy;
    long long lfu_log_factor;
    long long hash_max_listpack_entries, hash_max_listpack_value; /* OBJECT ENCODING of a hash */
    long long hash_max_item_size; /* a hash longer than this goes to chunks (bighash.c) */
    long long set_max_intset_entries;                             /* and of a set */
    long long zset_max_listpack_entries, zset_max_listpack_value; /* and of a zset */
    long long lfu_decay_time;
    char *engine;
    long long engine_threads;
    long long engine_item_bytes;
    long long engine_shards;
    char *engine_devices;
    bool engine_index_resize;
    long long engine_ways;
    long long io_threads;
    char *engine_pipeline;
    long long batch_max_ops;
    long long batch_max_wait_us;
    long long proto_max_bulk_len;
    long long client_query_buffer_limit;
    char *client_output_buffer_limit;
    char *logfile;
    char *loglevel;
    bool daemonize;
    char *pidfile;
    char *supervised;
    long long metrics_port;
    long long hz;
    long long databases;
    char *save;
    char *dir;
    char *dbfilename;
    char *server_cpulist, *bgsave_cpulist; /* Redis's CPU lists ("": any) */
    bool rdb_compression, rdb_checksum;
    char *appendonly;
    long long slowlog_log_slower_than;
    long long slowlog_max_len;
    long long latency_monitor_threshold;
    bool latency_tracking;
    char *latency_tracking_info_percentiles;
    char *notify_keyspace_events;
    int notify_flags; /* NOTIFY_*, derived from notify_keyspace_events */
    long long tracking_table_max_keys;
    long long busy_reply_threshold;
    bool cluster_enabled;
    char *cluster_config_file;
    long long cluster_node_timeout;
    long long cluster_port;
    bool cluster_require_full_coverage;
    bool cluster_allow_reads_when_down;
    bool cluster_allow_pubsubshard_when_down;
    char *cluster_announce_ip;
    long long cluster_announce_port;
    long long cluster_announce_bus_port;
    char *cluster_announce_hostname;
    /* derived from client_output_buffer_limit, class normal */
    long long obuf_hard, obuf_soft, obuf_soft_secs;          /* class normal */
    long long obuf_ps_hard, obuf_ps_soft, obuf_ps_soft_secs; /* class pubsub */
} srv_config;

/* Keyspace notification classes (notify-keyspace-events), as Redis's. */
#define NOTIFY_KEYSPACE (1 << 0)  /* K */
#define NOTIFY_KEYEVENT (1 << 1)  /* E */
#define NOTIFY_GENERIC (1 << 2)   /* g */
#define NOTIFY_STRING (1 << 3)    /* $ */
#define NOTIFY_LIST (1 << 4)      /* l */
#define NOTIFY_SET (1 << 5)       /* s */
#define NOTIFY_HASH (1 << 6)      /* h */
#define NOTIFY_ZSET (1 << 7)      /* z */
#define NOTIFY_EXPIRED (1 << 8)   /* x */
#define NOTIFY_EVICTED (1 << 9)   /* e */
#define NOTIFY_STREAM (1 << 10)   /* t */
#define NOTIFY_KEY_MISS (1 << 11) /* m (not in A) */
#define NOTIFY_LOADED (1 << 12)   /* module only */
#define NOTIFY_MODULE (1 << 13)   /* d */
#define NOTIFY_NEW (1 << 14)      /* n (not in A) */
#define NOTIFY_ALL                                                                                 \
    (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET |       \
     NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE) /* A */

typedef struct config_option {
    const char *name;
    opt_type type;
    const char *def;       /* default, as written in the config file */
    long long min, max;    /* OPT_INT / OPT_MEM bounds */
    const char *enum_vals; /* OPT_ENUM: "a|b|c" */
    bool runtime;          /* CONFIG SET allowed */
    size_t off;            /* field offset in srv_config */
    const char *desc;      /* one sentence */
} config_option;

/* The table, and its length. */
extern const config_option config_table[];
extern const size_t config_table_len;

/* Option by name (case-insensitive) or NULL. */
const config_option *config_find(const char *name);

/* Fill every option with its default. */
void config_defaults(srv_config *c);
void config_free(srv_config *c);

/* Set one option from text; at_runtime refuses options that are not
 * runtime-settable. Returns 0, or -1 with the reason (Redis's wording,
 * without the CONFIG SET prefix) in err. */
int config_set(srv_config *c, const config_option *o, const char *val, bool at_runtime, char *err,
               size_t errlen);

/* Parse config text (Redis's format: "name args...", # comments, quoting).
 * Returns 0, or -1 with a Redis-style fatal message in err. */
int config_load_text(srv_config *c, const char *text, char *err, size_t errlen);

/* Read and parse a file. */
int config_load_file(srv_config *c, const char *path, char *err, size_t errlen);

/* The current value as CONFIG GET shows it. */
void config_get(const srv_config *c, const config_option *o, sbuf *out);

/* --help text and the commented config file generated from the table. */
void config_print_help(FILE *f);
/* The man page (troff) of cudis-server: its options from the table. */
void config_write_man(FILE *f, const char *version);
void config_write_conf(FILE *f);

#endif /* SERVER_CONFIG_H */
