/*
 * config.c - the option table and everything that reads it: defaults,
 * config file and command-line parsing, CONFIG GET/SET values, --help and
 * the generated conf/cudis.conf.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <strings.h>

#include "acl.h"

#define OFF(f) offsetof(srv_config, f)
#define GB (1024LL * 1024 * 1024)
#define MB (1024LL * 1024)

/* clang-format off */
const config_option config_table[] = {
    {"bind", OPT_STR, "127.0.0.1 -::1", 0, 0, NULL, false, OFF(bind),
     "Addresses to listen on, space separated; a leading '-' marks an address that may be unavailable."},
    {"port", OPT_INT, "6379", 0, 65535, NULL, false, OFF(port),
     "TCP port to accept plaintext connections on (0: none; tls-port may still listen)."},
    {"tcp-backlog", OPT_INT, "511", 1, INT_MAX, NULL, false, OFF(tcp_backlog),
     "Backlog of the listen() calls."},
    {"unixsocket", OPT_STR, "", 0, 0, NULL, false, OFF(unixsocket),
     "Path of a unix socket to listen on as well (empty: none)."},
    {"unixsocketperm", OPT_OCTAL, "0", 0, 0777, NULL, false, OFF(unixsocketperm),
     "Permission bits of the unix socket, in octal (0 leaves the umask's)."},
    {"protected-mode", OPT_BOOL, "yes", 0, 0, NULL, true, OFF(protected_mode),
     "When yes and no password is set, only loopback and unix socket clients may run commands."},
    {"requirepass", OPT_STR, "", 0, 0, NULL, true, OFF(requirepass),
     "Password clients must give with AUTH or HELLO before other commands (empty: none)."},
    {"aclfile", OPT_STR, "", 0, 0, NULL, false, OFF(aclfile),
     "File of ACL users (lines \"user <name> <rules...>\", as ACL LIST shows them), loaded at start and by ACL LOAD, written by ACL SAVE; empty: none (users may then come from `user` lines in this file, not both)."},
    {"acl-pubsub-default", OPT_ENUM, "resetchannels", 0, 0, "resetchannels|allchannels", true, OFF(acl_pubsub_default),
     "The channels a new ACL user (or selector, or a user after `reset`) may use: none (resetchannels, Redis 7's default) or all (allchannels, Redis 6's)."},
    {"acllog-max-len", OPT_INT, "128", 0, LONG_MAX, NULL, true, OFF(acllog_max_len),
     "Most entries ACL LOG keeps (denied commands, keys, channels and failed AUTHs)."},
    {"maxclients", OPT_INT, "10000", 1, 1000000, NULL, true, OFF(maxclients),
     "Most clients connected at once; more are refused with an error."},
    {"timeout", OPT_INT, "0", 0, INT_MAX, NULL, true, OFF(timeout),
     "Close a client idle for this many seconds (0: never)."},
    {"tcp-keepalive", OPT_INT, "300", 0, INT_MAX, NULL, true, OFF(tcp_keepalive),
     "TCP keepalive interval in seconds for client sockets (0: off)."},
    {"tls-port", OPT_INT, "0", 0, 65535, NULL, false, OFF(tls_port),
     "TCP port to accept TLS connections on, at the bind addresses, beside port or instead of it (port 0); 0: no TLS. A client that has not finished its handshake within 10 seconds is closed."},
    {"tls-cert-file", OPT_STR, "", 0, 0, NULL, true, OFF(tls_cert_file),
     "The server's X.509 certificate (PEM; a chain may follow it) for TLS connections."},
    {"tls-key-file", OPT_STR, "", 0, 0, NULL, true, OFF(tls_key_file),
     "The private key of tls-cert-file (PEM)."},
    {"tls-key-file-pass", OPT_STR, "", 0, 0, NULL, true, OFF(tls_key_file_pass),
     "Passphrase of tls-key-file when it is encrypted (empty: none)."},
    {"tls-client-cert-file", OPT_STR, "", 0, 0, NULL, true, OFF(tls_client_cert_file),
     "Certificate the server presents on connections it opens (the cluster bus with tls-cluster; empty: tls-cert-file)."},
    {"tls-client-key-file", OPT_STR, "", 0, 0, NULL, true, OFF(tls_client_key_file),
     "The private key of tls-client-cert-file."},
    {"tls-client-key-file-pass", OPT_STR, "", 0, 0, NULL, true, OFF(tls_client_key_file_pass),
     "Passphrase of tls-client-key-file when it is encrypted (empty: none)."},
    {"tls-dh-params-file", OPT_STR, "", 0, 0, NULL, true, OFF(tls_dh_params_file),
     "DH parameters (PEM) for DHE ciphers (empty: OpenSSL's built-in ones)."},
    {"tls-ca-cert-file", OPT_STR, "", 0, 0, NULL, true, OFF(tls_ca_cert_file),
     "CA certificate(s) bundle (PEM) that client certificates are verified against."},
    {"tls-ca-cert-dir", OPT_STR, "", 0, 0, NULL, true, OFF(tls_ca_cert_dir),
     "Directory of CA certificates (hashed names, as c_rehash makes) to verify client certificates against."},
    {"tls-auth-clients", OPT_ENUM, "yes", 0, 0, "yes|no|optional", true, OFF(tls_auth_clients),
     "Whether a TLS client must present a certificate the CA signed (yes), may (optional: one presented is verified) or is not asked (no); applies to new connections."},
    {"tls-replication", OPT_BOOL, "no", 0, 0, NULL, true, OFF(tls_replication),
     "Replication links over TLS: accepted and stored for Redis's configuration files; cudis has no replication."},
    {"tls-cluster", OPT_BOOL, "no", 0, 0, NULL, false, OFF(tls_cluster),
     "The cluster bus over TLS, both ways, each side's certificate verified against the CA; the node announces tls-port as its port (the bus listens at it + 10000 unless cluster-port) and port as its plaintext one, as Redis. Set at start."},
    {"tls-protocols", OPT_STR, "", 0, 0, NULL, true, OFF(tls_protocols),
     "TLS versions admitted, space separated among TLSv1, TLSv1.1, TLSv1.2 and TLSv1.3 (empty: \"TLSv1.2 TLSv1.3\")."},
    {"tls-ciphers", OPT_STR, "", 0, 0, NULL, true, OFF(tls_ciphers),
     "Cipher list for TLSv1.2 and older, in OpenSSL's syntax (empty: OpenSSL's default)."},
    {"tls-ciphersuites", OPT_STR, "", 0, 0, NULL, true, OFF(tls_ciphersuites),
     "TLSv1.3 cipher suites, colon separated (empty: OpenSSL's default)."},
    {"tls-prefer-server-ciphers", OPT_BOOL, "no", 0, 0, NULL, true, OFF(tls_prefer_server_ciphers),
     "Choose the cipher by the server's order of preference instead of the client's."},
    {"tls-session-caching", OPT_BOOL, "yes", 0, 0, NULL, true, OFF(tls_session_caching),
     "Let TLS clients resume sessions (server-side cache and tickets) to skip the full handshake."},
    {"tls-session-cache-size", OPT_INT, "20480", 0, INT_MAX, NULL, true, OFF(tls_session_cache_size),
     "Most TLS sessions the server caches (0: no limit)."},
    {"tls-session-cache-timeout", OPT_INT, "300", 0, INT_MAX, NULL, true, OFF(tls_session_cache_timeout),
     "Seconds a cached TLS session may be resumed for."},
    {"maxmemory", OPT_MEM, "1gb", 1 * MB, LLONG_MAX, NULL, true, OFF(maxmemory),
     "Memory budget of the engine (index, keys, values); the cache evicts to stay within it. At runtime the cpu engine shrinks to a lower value at once (evicting over the next seconds) and grows back up to the budget it started with; more, and the gpu engine's budget, apply when the server next starts (INFO engine_bytes_budget shows the budget in force)."},
    {"maxmemory-policy", OPT_ENUM, "allkeys-lru", 0, 0, "volatile-lru|volatile-lfu|volatile-random|volatile-ttl|allkeys-lru|allkeys-lfu|allkeys-random|noeviction|allkeys-cudis|allkeys-rrip", true, OFF(maxmemory_policy),
     "What a full store evicts to make room, as Redis's policies (expired keys always go first; noeviction: writes of new keys get -OOM, reads go on). The default is allkeys-lru (Redis: noeviction): cudis is a cache. allkeys-cudis is cudis's own (not Redis's): recency inside the CCHT's bucket pair with quick demotion of keys not read since they came, a ghost of such keys and two-bit reuse counters (S3-FIFO's ideas, no extra memory); it misses less than allkeys-lru on most traces but not all (bench/sim/README.md, Beyond LRU). allkeys-rrip, also cudis's own, is the other design measured beside it: a 2-bit re-reference prediction per slot (SRRIP with hit promotion, the pair as the set). The lru, fifo, lfu, sieve and s3fifo engines evict by their own exact order or, with noeviction, not at all."},
    {"lfu-log-factor", OPT_INT, "10", 0, INT_MAX, NULL, true, OFF(lfu_log_factor),
     "The LFU policies' counter: the higher, the more accesses it takes to grow (Redis's logarithmic counter, 0..255)."},
    {"lfu-decay-time", OPT_INT, "1", 0, INT_MAX, NULL, true, OFF(lfu_decay_time),
     "Minutes without access after which an LFU counter drops by one (0: never)."},
    {"engine", OPT_ENUM, "auto", 0, 0, "auto|cpu|gpu|lru|fifo|lfu|sieve|s3fifo|null", false, OFF(engine),
     "Store behind the server: auto picks gpu when a usable CUDA device exists, else cpu."},
    {"engine-threads", OPT_INT, "1", 1, 256, NULL, false, OFF(engine_threads),
     "Worker threads the cpu engine uses to split one batch."},
    {"engine-shards", OPT_INT, "1", 1, 16, NULL, false, OFF(engine_shards),
     "Engine shards (stores) in this node, each owning an equal range of the 16384 cluster hash slots (CRC16 of the key or its {hash tag}) and 1/N of maxmemory; a batch is split by shard and the shards run concurrently, one thread each. With the gpu engine one shard per device (engine-devices); with the host engines N independent tables. INFO engine lists each shard."},
    {"engine-devices", OPT_STR, "", 0, 0, NULL, false, OFF(engine_devices),
     "The CUDA devices of the gpu engine's shards, comma separated (\"0,1,2,3\"; shard k takes the k-th, cycling); empty: shard k uses device k."},
    {"engine-ways", OPT_INT, "8", 4, 16, NULL, false, OFF(engine_ways),
     "Slots per bucket of the cuckoo cache table: 4, 8 or 16."},
    {"engine-item-bytes", OPT_INT, "64", 8, 16777216, NULL, false, OFF(engine_item_bytes),
     "Expected key plus value size in bytes: the size the cuckoo index starts at against the value memory (with engine-index-resize it then follows what is stored)."},
    {"engine-index-resize", OPT_BOOL, "yes", 0, 0, NULL, false, OFF(engine_index_resize),
     "Let the cpu engine resize its cuckoo index online (twice or half as big, a slice each expiry tick) so that its split of maxmemory follows the average item size stored."},
    {"io-threads", OPT_INT, "1", 1, 64, NULL, false, OFF(io_threads),
     "Event loops (threads) serving client connections."},
    {"engine-pipeline", OPT_ENUM, "auto", 0, 0, "auto|yes|no", false, OFF(engine_pipeline),
     "Run each batch asynchronously: an event loop parses the next batch while the engine runs this one (on the gpu, the next batch's copy overlaps this one's kernel). auto: yes for the gpu engine; the host engines gain only with a spare core, so there it is no."},
    {"batch-max-ops", OPT_INT, "256", 1, 1048576, NULL, true, OFF(batch_max_ops),
     "Most operations in one engine batch; a full batch is executed at once."},
    {"batch-max-wait-us", OPT_INT, "50", 0, 1000000, NULL, true, OFF(batch_max_wait_us),
     "Longest time a request may wait for its batch to fill while more input keeps arriving."},
    {"proto-max-bulk-len", OPT_MEM, "512mb", 1 * MB, 4 * GB - 1, NULL, true, OFF(proto_max_bulk_len),
     "Longest bulk string (key or value) a request may carry."},
    {"client-query-buffer-limit", OPT_MEM, "1gb", 1 * MB, LLONG_MAX, NULL, true,
     OFF(client_query_buffer_limit),
     "Most unparsed input buffered for one client; a client over it is disconnected."},
    {"client-output-buffer-limit", OPT_COBL, "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60",
     0, 0, NULL, true, OFF(client_output_buffer_limit),
     "Per class: hard limit, soft limit, soft seconds of pending replies; a client over them is disconnected (0: none)."},
    {"logfile", OPT_STR, "", 0, 0, NULL, false, OFF(logfile),
     "Log file path (empty: standard output, or /dev/null when daemonized)."},
    {"loglevel", OPT_ENUM, "notice", 0, 0, "debug|verbose|notice|warning|nothing", true, OFF(loglevel),
     "Least severe log level written."},
    {"daemonize", OPT_BOOL, "no", 0, 0, NULL, false, OFF(daemonize),
     "Run in the background, detached from the terminal."},
    {"metrics-port", OPT_INT, "0", 0, 65535, NULL, false, OFF(metrics_port),
     "HTTP port of the Prometheus metrics (GET /metrics on the bind addresses: INFO's figures under redis_exporter's names, cudis_* for the engine and each GPU); 0: off."},
    {"supervised", OPT_ENUM, "no", 0, 0, "no|upstart|systemd|auto", false, OFF(supervised),
     "Tell a supervisor when the server is ready: systemd (READY=1 on $NOTIFY_SOCKET, for Type=notify units; STOPPING=1 at shutdown), upstart (SIGSTOP), auto (systemd when NOTIFY_SOCKET is set), no."},
    {"pidfile", OPT_STR, "", 0, 0, NULL, false, OFF(pidfile),
     "File to write the process id to at start and remove at exit (empty: none)."},
    {"hz", OPT_INT, "10", 1, 500, NULL, true, OFF(hz),
     "Background tasks per second: idle timeouts, output limits, expired key sweeps."},
    {"slowlog-log-slower-than", OPT_INT, "10000", -1, LLONG_MAX, NULL, true, OFF(slowlog_log_slower_than),
     "Log commands that take at least this many microseconds in the slow log (SLOWLOG GET); 0 logs every command, -1 none."},
    {"slowlog-max-len", OPT_INT, "128", 0, LONG_MAX, NULL, true, OFF(slowlog_max_len),
     "Entries the slow log keeps (the oldest go first)."},
    {"latency-monitor-threshold", OPT_INT, "0", 0, LLONG_MAX, NULL, true, OFF(latency_monitor_threshold),
     "Record latency events (LATENCY LATEST) of at least this many milliseconds; 0 turns the monitor off."},
    {"latency-tracking", OPT_BOOL, "yes", 0, 0, NULL, true, OFF(latency_tracking),
     "Keep a latency histogram per command (LATENCY HISTOGRAM, INFO latencystats)."},
    {"latency-tracking-info-percentiles", OPT_STR, "50 99 99.9", 0, 0, NULL, true, OFF(latency_tracking_info_percentiles),
     "The percentiles INFO latencystats reports, space separated."},
    {"notify-keyspace-events", OPT_KEVENTS, "", 0, 0, NULL, true, OFF(notify_keyspace_events),
     "Keyspace notifications to publish, as Redis's classes: K (__keyspace@N__), E (__keyevent@N__), g generic, $ string, x expired, e evicted, n new keys, m key misses, A for g$lshzxetd (empty: none)."},
    {"tracking-table-max-keys", OPT_INT, "1000000", 0, LLONG_MAX, NULL, true, OFF(tracking_table_max_keys),
     "Most keys the client-side caching table remembers; past it the oldest-looked-at keys are invalidated and forgotten (0: no limit)."},
    {"busy-reply-threshold", OPT_INT, "5000", 0, LLONG_MAX, NULL, true, OFF(busy_reply_threshold),
     "Milliseconds a script may run before other clients get BUSY errors and SCRIPT KILL is served (from inside the script, between its instructions)."},
    {"cluster-enabled", OPT_BOOL, "no", 0, 0, NULL, false, OFF(cluster_enabled),
     "Run as a Redis Cluster node: 16384 hash slots, MOVED/ASK redirections, CLUSTER commands, the cluster bus on cluster-port; only database 0."},
    {"cluster-config-file", OPT_STR, "nodes.conf", 0, 0, NULL, false, OFF(cluster_config_file),
     "The node's cluster state (its id, the nodes it knows, their slots, epochs): written by the node, atomically, on every change; read at start. Relative to the working directory."},
    {"cluster-node-timeout", OPT_INT, "15000", 1, LLONG_MAX, NULL, true, OFF(cluster_node_timeout),
     "Milliseconds a node may not answer before it is suspected failing (PFAIL), and failed (FAIL) once a majority of the masters agree."},
    {"cluster-port", OPT_INT, "0", 0, 65535, NULL, false, OFF(cluster_port),
     "TCP port of the cluster bus (0: port + 10000)."},
    {"cluster-require-full-coverage", OPT_BOOL, "yes", 0, 0, NULL, true, OFF(cluster_require_full_coverage),
     "yes: the whole cluster stops serving (CLUSTERDOWN) while any slot has no live owner; no: the live nodes keep serving their slots."},
    {"cluster-allow-reads-when-down", OPT_BOOL, "no", 0, 0, NULL, true, OFF(cluster_allow_reads_when_down),
     "Serve reads of the node's own slots while the cluster is down (writes still get CLUSTERDOWN)."},
    {"cluster-allow-pubsubshard-when-down", OPT_BOOL, "yes", 0, 0, NULL, true, OFF(cluster_allow_pubsubshard_when_down),
     "Serve shard channels (SPUBLISH, SSUBSCRIBE) of the node's own slots while the cluster is down."},
    {"cluster-announce-ip", OPT_STR, "", 0, 0, NULL, false, OFF(cluster_announce_ip),
     "The IP address other nodes and clients are told for this node (empty: the address the bus sees; for NAT and containers)."},
    {"cluster-announce-port", OPT_INT, "0", 0, 65535, NULL, false, OFF(cluster_announce_port),
     "The client port announced to the cluster (0: port)."},
    {"cluster-announce-bus-port", OPT_INT, "0", 0, 65535, NULL, false, OFF(cluster_announce_bus_port),
     "The cluster bus port announced to the cluster (0: the bus port)."},
    {"cluster-announce-hostname", OPT_STR, "", 0, 0, NULL, false, OFF(cluster_announce_hostname),
     "A hostname shown for this node in CLUSTER NODES, SLOTS and SHARDS (empty: none)."},
    {"databases", OPT_INT, "16", 1, 128, NULL, false, OFF(databases),
     "Number of databases (SELECT 0 .. databases-1); every engine keeps them apart. At most 128: the engine's databases 128 and up hold the chunks of big hashes."},
    {"hash-max-listpack-entries", OPT_INT, "128", 0, LLONG_MAX, NULL, true, OFF(hash_max_listpack_entries),
     "OBJECT ENCODING calls a hash of at most this many fields, none longer than hash-max-listpack-value, \"listpack\" (else \"hashtable\"), as Redis would encode it."},
    {"hash-max-item-size", OPT_INT, "65536", 0, 0x7fffffffLL, NULL, true, OFF(hash_max_item_size),
     "A hash whose encoding grows past this many bytes is kept in chunks of 8 to 16 fields (so a field's HGET, HSET, HDEL costs the same in a hash of millions), found from a head item under the key (0: never; a hash stays one item)."},
    {"hash-max-listpack-value", OPT_INT, "64", 0, LLONG_MAX, NULL, true, OFF(hash_max_listpack_value),
     "See hash-max-listpack-entries: the longest field or value of a hash OBJECT ENCODING calls \"listpack\"."},
    {"hash-max-ziplist-entries", OPT_INT, "128", 0, LLONG_MAX, NULL, true, OFF(hash_max_listpack_entries),
     "Alias of hash-max-listpack-entries (Redis's older name)."},
    {"hash-max-ziplist-value", OPT_INT, "64", 0, LLONG_MAX, NULL, true, OFF(hash_max_listpack_value),
     "Alias of hash-max-listpack-value (Redis's older name)."},
    {"set-max-intset-entries", OPT_INT, "512", 0, LLONG_MAX, NULL, true, OFF(set_max_intset_entries),
     "OBJECT ENCODING calls a set of at most this many members, all integers, \"intset\" (else \"hashtable\"), as Redis 7.0 would encode it; SMEMBERS lists such a set in ascending order, as Redis does."},
    {"zset-max-listpack-entries", OPT_INT, "128", 0, LLONG_MAX, NULL, true, OFF(zset_max_listpack_entries),
     "OBJECT ENCODING calls a sorted set of at most this many members, none longer than zset-max-listpack-value, \"listpack\" (else \"skiplist\"), as Redis would encode it; cudis keeps every sorted set one way."},
    {"zset-max-listpack-value", OPT_INT, "64", 0, LLONG_MAX, NULL, true, OFF(zset_max_listpack_value),
     "See zset-max-listpack-entries: the longest member of a sorted set OBJECT ENCODING calls \"listpack\"."},
    {"zset-max-ziplist-entries", OPT_INT, "128", 0, LLONG_MAX, NULL, true, OFF(zset_max_listpack_entries),
     "Alias of zset-max-listpack-entries (Redis's older name)."},
    {"zset-max-ziplist-value", OPT_INT, "64", 0, LLONG_MAX, NULL, true, OFF(zset_max_listpack_value),
     "Alias of zset-max-listpack-value (Redis's older name)."},
    {"save", OPT_STR, "", 0, 0, NULL, true, OFF(save),
     "Save points \"seconds changes [seconds changes ...]\": a BGSAVE starts when at least that many writes happened and that many seconds passed since the last save (Redis's \"3600 1 300 100 60 10000\"); empty (the default: cudis is a cache): none, and SHUTDOWN saves only when told SAVE."},
    {"dir", OPT_STR, "./", 0, 0, NULL, false, OFF(dir),
     "Directory of the RDB file (dbfilename) and its temp files; fixed at start, as dbfilename (Redis 7's protected configs: CONFIG SET cannot point file writes elsewhere)."},
    {"dbfilename", OPT_STR, "dump.rdb", 0, 0, NULL, false, OFF(dbfilename),
     "Name of the RDB file in dir: SAVE, BGSAVE and SHUTDOWN SAVE write it (Redis's RDB version 10), the server loads it at start when it exists."},
    {"rdbcompression", OPT_BOOL, "yes", 0, 0, NULL, true, OFF(rdb_compression),
     "Compress the strings of dump.rdb files and DUMP/MIGRATE payloads with LZF (those over 20 bytes that shrink by 4 or more), as Redis does; no: raw (faster saves, bigger files)."},
    {"rdbchecksum", OPT_BOOL, "yes", 0, 0, NULL, false, OFF(rdb_checksum),
     "End dump.rdb files with their CRC-64, checked at load; no: the CRC is written as 0 and not checked (as Redis: a file whose CRC is 0 loads unchecked either way); fixed at start."},
    {"server_cpulist", OPT_STR, "", 0, 0, NULL, false, OFF(server_cpulist),
     "CPUs the event loops (io-threads) and the engine's threads run on, as Redis's: \"0-3\", \"0,2\", \"0-7:2\" (empty: any); fixed at start."},
    {"bgsave_cpulist", OPT_STR, "", 0, 0, NULL, false, OFF(bgsave_cpulist),
     "CPUs BGSAVE's walk and file writer run on (Redis: its forked child), in server_cpulist's form (empty: any); fixed at start. A walk on CPUs of its own takes nothing from the clients' loops."},
    {"appendonly", OPT_ENUM, "no", 0, 0, "no", false, OFF(appendonly),
     "Accepted for compatibility; always no (no append-only file: persistence is RDB snapshots, see save)."},
};
/* clang-format on */

const size_t config_table_len = sizeof(config_table) / sizeof(config_table[0]);

/* Strings replaced at runtime are kept until config_free: with io-threads
 * > 1 another loop may still be reading the old one (requirepass...). */
static char **retired;
static size_t n_retired, cap_retired;

static void retire(char *p)
{
    if (p == NULL) {
        return;
    }
    if (n_retired == cap_retired) {
        size_t n = cap_retired ? cap_retired * 2 : 16;
        retired = xrealloc(retired, n * sizeof(*retired));
        cap_retired = n;
    }
    retired[n_retired++] = p;
}

static const char *cobl_class_names[3] = {"normal", "slave", "pubsub"};
static long long cobl_vals[3][3]; /* parsed limits, per class: hard, soft, secs */

const config_option *config_find(const char *name)
{
    for (size_t i = 0; i < config_table_len; i++) {
        if (!strcasecmp(config_table[i].name, name)) {
            return &config_table[i];
        }
    }
    return NULL;
}

static void *field(srv_config *c, const config_option *o)
{
    return (char *)c + o->off;
}

static const void *cfield(const srv_config *c, const config_option *o)
{
    return (const char *)c + o->off;
}

void config_defaults(srv_config *c)
{
    memset(c, 0, sizeof(*c));
    char err[256];
    for (size_t i = 0; i < config_table_len; i++) {
        if (config_set(c, &config_table[i], config_table[i].def, false, err, sizeof(err)) != 0) {
            fprintf(stderr, "bad default for %s: %s\n", config_table[i].name, err);
            abort();
        }
    }
}

void config_free(srv_config *c)
{
    for (size_t i = 0; i < config_table_len; i++) {
        const config_option *o = &config_table[i];
        if (o->type == OPT_STR || o->type == OPT_ENUM || o->type == OPT_COBL ||
            o->type == OPT_KEVENTS) {
            char **s = field(c, o);
            free(*s);
            *s = NULL;
        }
    }
    for (size_t i = 0; i < n_retired; i++) {
        free(retired[i]);
    }
    free(retired);
    retired = NULL;
    n_retired = cap_retired = 0;
}

static int parse_cobl(srv_config *c, const char *val, char *err, size_t errlen)
{
    char *copy = xstrdup(val);
    char *tok[64];
    int n = 0;
    for (char *s = strtok(copy, " \t"); s != NULL && n < 64; s = strtok(NULL, " \t")) {
        tok[n++] = s;
    }
    long long vals[3][3];
    memcpy(vals, cobl_vals, sizeof(vals));
    int rc = 0;
    if (n % 4 != 0 || n == 0) {
        snprintf(err, errlen, "Wrong number of arguments in buffer limit configuration.");
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < n; i += 4) {
        int cls = -1;
        if (!strcasecmp(tok[i], "normal")) {
            cls = 0;
        } else if (!strcasecmp(tok[i], "replica") || !strcasecmp(tok[i], "slave")) {
            cls = 1;
        } else if (!strcasecmp(tok[i], "pubsub")) {
            cls = 2;
        }
        if (cls < 0) {
            snprintf(err, errlen, "Invalid client class specified in buffer limit configuration.");
            rc = -1;
            break;
        }
        long long h, s, secs;
        if (!util_parse_memory(tok[i + 1], &h) || !util_parse_memory(tok[i + 2], &s) ||
            !util_str2ll(tok[i + 3], strlen(tok[i + 3]), &secs) || h < 0 || s < 0 || secs < 0) {
            snprintf(err, errlen,
                     "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
            rc = -1;
            break;
        }
        vals[cls][0] = h;
        vals[cls][1] = s;
        vals[cls][2] = secs;
    }
    free(copy);
    if (rc != 0) {
        return rc;
    }
    memcpy(cobl_vals, vals, sizeof(vals));
    sbuf b = {0};
    for (int i = 0; i < 3; i++) {
        sbuf_printf(&b, "%s%s %lld %lld %lld", i ? " " : "", cobl_class_names[i], vals[i][0],
                    vals[i][1], vals[i][2]);
    }
    sbuf_add(&b, "", 1);
    retire(c->client_output_buffer_limit);
    c->client_output_buffer_limit = b.p;
    /* read by every loop (conn_check_obuf) while CONFIG SET runs */
    __atomic_store_n(&c->obuf_hard, vals[0][0], __ATOMIC_RELAXED);
    __atomic_store_n(&c->obuf_soft, vals[0][1], __ATOMIC_RELAXED);
    __atomic_store_n(&c->obuf_soft_secs, vals[0][2], __ATOMIC_RELAXED);
    __atomic_store_n(&c->obuf_ps_hard, vals[2][0], __ATOMIC_RELAXED);
    __atomic_store_n(&c->obuf_ps_soft, vals[2][1], __ATOMIC_RELAXED);
    __atomic_store_n(&c->obuf_ps_soft_secs, vals[2][2], __ATOMIC_RELAXED);
    return 0;
}

/* Redis's keyspaceEventsStringToFlags / keyspaceEventsFlagsToString. */
static int kevents_parse(const char *s)
{
    int f = 0;
    for (; *s; s++) {
        switch (*s) {
        case 'A': f |= NOTIFY_ALL; break;
        case 'g': f |= NOTIFY_GENERIC; break;
        case '$': f |= NOTIFY_STRING; break;
        case 'l': f |= NOTIFY_LIST; break;
        case 's': f |= NOTIFY_SET; break;
        case 'h': f |= NOTIFY_HASH; break;
        case 'z': f |= NOTIFY_ZSET; break;
        case 'x': f |= NOTIFY_EXPIRED; break;
        case 'e': f |= NOTIFY_EVICTED; break;
        case 'K': f |= NOTIFY_KEYSPACE; break;
        case 'E': f |= NOTIFY_KEYEVENT; break;
        case 't': f |= NOTIFY_STREAM; break;
        case 'm': f |= NOTIFY_KEY_MISS; break;
        case 'd': f |= NOTIFY_MODULE; break;
        case 'n': f |= NOTIFY_NEW; break;
        default: return -1;
        }
    }
    return f;
}

static char *kevents_string(int f)
{
    static const struct {
        int bit;
        char ch;
    } cls[] = {{NOTIFY_GENERIC, 'g'}, {NOTIFY_STRING, '$'},  {NOTIFY_LIST, 'l'},
               {NOTIFY_SET, 's'},     {NOTIFY_HASH, 'h'},    {NOTIFY_ZSET, 'z'},
               {NOTIFY_EXPIRED, 'x'}, {NOTIFY_EVICTED, 'e'}, {NOTIFY_STREAM, 't'},
               {NOTIFY_MODULE, 'd'},  {NOTIFY_NEW, 'n'}};
    char buf[32];
    size_t n = 0;
    if ((f & NOTIFY_ALL) == NOTIFY_ALL) {
        buf[n++] = 'A'; /* n, when also set, is not shown (as Redis) */
    } else {
        for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++) {
            if (f & cls[i].bit) {
                buf[n++] = cls[i].ch;
            }
        }
    }
    if (f & NOTIFY_KEYSPACE) {
        buf[n++] = 'K';
    }
    if (f & NOTIFY_KEYEVENT) {
        buf[n++] = 'E';
    }
    if (f & NOTIFY_KEY_MISS) {
        buf[n++] = 'm';
    }
    buf[n] = '\0';
    return xstrdup(buf);
}

/* What Redis checks of these text options. */
static bool str_valid(const config_option *o, const char *val, char *err, size_t errlen)
{
    if (!strcmp(o->name, "dbfilename") && (strchr(val, '/') != NULL || *val == '\0')) {
        snprintf(err, errlen, "dbfilename can't be a path, just a filename");
        return false;
    }
    if (!strcmp(o->name, "dir")) {
        struct stat st;
        if (stat(val, &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "Can't chdir to '%s': %s", val,
                     errno ? strerror(errno) : strerror(ENOTDIR));
            return false;
        }
    }
    if (strstr(o->name, "_cpulist") != NULL && !util_cpulist_valid(val)) {
        snprintf(err, errlen, "Invalid CPU list");
        return false;
    }
    if (!strcmp(o->name, "save")) { /* pairs of non-negative integers, or empty */
        const char *p = val;
        int n = 0;
        for (;;) {
            while (*p == ' ') {
                p++;
            }
            if (*p == '\0') {
                break;
            }
            char *end;
            errno = 0;
            long long x = strtoll(p, &end, 10);
            if (end == p || (*end != ' ' && *end != '\0') || errno != 0 || x < 0) {
                n = -1;
                break;
            }
            p = end;
            n++;
        }
        if (n < 0 || n % 2 != 0) {
            snprintf(err, errlen, "Invalid save parameters");
            return false;
        }
    }
    return true;
}

int config_set(srv_config *c, const config_option *o, const char *val, bool at_runtime, char *err,
               size_t errlen)
{
    if (at_runtime && !o->runtime) {
        /* Redis 7 protects these two: a client must not point the server's
         * file writes elsewhere */
        bool prot = !strcmp(o->name, "dir") || !strcmp(o->name, "dbfilename");
        snprintf(err, errlen, prot ? "can't set protected config" : "can't set immutable config");
        return -1;
    }
    switch (o->type) {
    case OPT_BOOL: {
        bool *b = field(c, o);
        if (!strcasecmp(val, "yes")) {
            *b = true;
        } else if (!strcasecmp(val, "no")) {
            *b = false;
        } else {
            snprintf(err, errlen, "argument must be 'yes' or 'no'");
            return -1;
        }
        return 0;
    }
    case OPT_INT:
    case OPT_MEM:
    case OPT_OCTAL: {
        long long v;
        bool ok;
        if (o->type == OPT_MEM) {
            ok = util_parse_memory(val, &v);
        } else if (o->type == OPT_OCTAL) {
            char *end;
            errno = 0;
            v = strtoll(val, &end, 8);
            ok = *val != '\0' && *end == '\0' && errno == 0;
        } else {
            ok = util_str2ll(val, strlen(val), &v);
        }
        if (!ok) {
            snprintf(err, errlen,
                     o->type == OPT_MEM ? "argument must be a memory value"
                                        : "argument couldn't be parsed into an integer");
            return -1;
        }
        if (v < o->min || v > o->max) {
            snprintf(err, errlen, "argument must be between %lld and %lld inclusive", o->min,
                     o->max);
            return -1;
        }
        if (!strcmp(o->name, "engine-ways") && v != 4 && v != 8 && v != 16) {
            snprintf(err, errlen, "argument must be 4, 8 or 16");
            return -1;
        }
        *(long long *)field(c, o) = v;
        return 0;
    }
    case OPT_ENUM: {
        const char *p = o->enum_vals;
        size_t n = strlen(val);
        while (p && *p) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            if (len == n && !strncasecmp(p, val, n)) {
                char **s = field(c, o);
                retire(*s);
                *s = strndup(p, len);
                return 0;
            }
            p = bar ? bar + 1 : NULL;
        }
        sbuf b = {0};
        sbuf_adds(&b, "argument(s) must be one of the following: ");
        for (const char *q = o->enum_vals; *q; q++) {
            if (*q == '|') {
                sbuf_adds(&b, ", ");
            } else {
                sbuf_add(&b, q, 1);
            }
        }
        sbuf_add(&b, "", 1);
        snprintf(err, errlen, "%s", b.p);
        sbuf_free(&b);
        return -1;
    }
    case OPT_STR: {
        if (!str_valid(o, val, err, errlen)) {
            return -1;
        }
        char **s = field(c, o);
        retire(*s);
        char *abs = !strcmp(o->name, "dir") ? realpath(val, NULL) : NULL; /* CONFIG GET: absolute */
        *s = abs != NULL ? abs : xstrdup(val);
        return 0;
    }
    case OPT_COBL:
        return parse_cobl(c, val, err, errlen);
    case OPT_KEVENTS: {
        int f = kevents_parse(val);
        if (f < 0) {
            snprintf(err, errlen, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
            return -1;
        }
        char **s = field(c, o);
        retire(*s);
        *s = kevents_string(f);
        c->notify_flags = f;
        return 0;
    }
    }
    return -1;
}

void config_get(const srv_config *c, const config_option *o, sbuf *out)
{
    switch (o->type) {
    case OPT_BOOL: sbuf_adds(out, *(const bool *)cfield(c, o) ? "yes" : "no"); break;
    case OPT_INT:
    case OPT_MEM: sbuf_printf(out, "%lld", *(const long long *)cfield(c, o)); break;
    case OPT_OCTAL: sbuf_printf(out, "%llo", *(const long long *)cfield(c, o)); break;
    case OPT_STR:
    case OPT_ENUM:
    case OPT_COBL:
    case OPT_KEVENTS: {
        const char *s = *(char *const *)cfield(c, o);
        sbuf_adds(out, s ? s : "");
        break;
    }
    }
}

/* ------------------------------------------------------------------------
 * Config text
 * ---------------------------------------------------------------------- */

int config_load_text(srv_config *c, const char *text, char *err, size_t errlen)
{
    char *copy = xstrdup(text);
    char *save = NULL;
    int lineno = 0, rc = 0;
    char *argv[256];
    uint32_t lens[256];
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        char orig[512];
        snprintf(orig, sizeof(orig), "%s", line);
        size_t ll = strlen(line);
        while (ll > 0 && (line[ll - 1] == '\r' || line[ll - 1] == ' ' || line[ll - 1] == '\t')) {
            line[--ll] = '\0';
        }
        char *p = line;
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (*p == '#' || *p == '\0') {
            continue;
        }
        int total = 0;
        int n = util_split_inline(p, strlen(p), argv, lens, 256, &total);
        const char *why = NULL;
        char reason[256];
        if (n < 0 || total > 256) {
            why = "Unbalanced quotes in configuration line";
        } else if (n >= 1) {
            for (int i = 0; i < n; i++) {
                argv[i][lens[i]] = '\0'; /* in-place split never grows: safe */
            }
            const config_option *o = config_find(argv[0]);
            if (!strcasecmp(argv[0], "user") && n >= 2) {
                if (acl_conf_user(n - 1, argv + 1, reason, sizeof(reason)) != 0) {
                    why = reason;
                }
            } else if (o == NULL || n < 2 ||
                (n > 2 && o->type != OPT_STR && o->type != OPT_COBL) ||
                (n > 2 && o->type == OPT_STR && strcmp(o->name, "bind") && strcmp(o->name, "save") &&
                 strcmp(o->name, "latency-tracking-info-percentiles"))) {
                why = "Bad directive or wrong number of arguments";
            } else {
                sbuf v = {0};
                for (int i = 1; i < n; i++) {
                    sbuf_printf(&v, "%s%s", i > 1 ? " " : "", argv[i]);
                }
                sbuf_add(&v, "", 1);
                if (config_set(c, o, v.p, false, reason, sizeof(reason)) != 0) {
                    why = reason;
                }
                sbuf_free(&v);
            }
        }
        if (why != NULL) {
            snprintf(err, errlen,
                     "\n*** FATAL CONFIG FILE ERROR (cudis) ***\nReading the configuration file, at "
                     "line %d\n>>> '%s'\n%s",
                     lineno, orig, why);
            rc = -1;
            break;
        }
    }
    free(copy);
    return rc;
}

int config_load_file(srv_config *c, const char *path, char *err, size_t errlen)
{
    sbuf b = {0};
    if (!sbuf_read_file(&b, path)) {
        snprintf(err, errlen, "Fatal error, can't open config file '%s': %s", path,
                 strerror(errno));
        sbuf_free(&b);
        return -1;
    }
    int rc = config_load_text(c, b.p, err, errlen);
    sbuf_free(&b);
    return rc;
}

/* ------------------------------------------------------------------------
 * Help and the config file
 * ---------------------------------------------------------------------- */

void config_print_help(FILE *f)
{
    fprintf(f, "Usage: cudis-server [/path/to/cudis.conf] [--option value ...]\n"
               "       cudis-server --help | --version | --print-conf | --print-man\n\n"
               "Options (file directives and --name value take the same names):\n");
    for (size_t i = 0; i < config_table_len; i++) {
        const config_option *o = &config_table[i];
        fprintf(f, "  --%-28s default \"%s\"%s\n      %s\n", o->name, o->def,
                o->runtime ? " (CONFIG SET)" : "", o->desc);
    }
}

/* Text for a troff line: backslashes doubled, a leading dot or quote
 * escaped, dashes as \- (so man shows and searches them as typed). */
static void man_text(FILE *f, const char *s)
{
    if (*s == '.' || *s == '\'') {
        fputs("\\&", f);
    }
    for (; *s; s++) {
        if (*s == '\\') {
            fputs("\\e", f);
        } else if (*s == '-') {
            fputs("\\-", f);
        } else {
            fputc(*s, f);
        }
    }
}

void config_write_man(FILE *f, const char *version)
{
    fprintf(f, ".\\\" Generated from cudis-server's option table (cudis-server --print-man).\n"
               ".TH CUDIS-SERVER 1 \"\" \"cudis %s\" \"User Commands\"\n"
               ".SH NAME\ncudis-server \\- a Redis-protocol key-value cache whose data lives in GPU "
               "memory\n"
               ".SH SYNOPSIS\n.B cudis-server\n[\\fI/path/to/cudis.conf\\fR] "
               "[\\fB\\-\\-option\\fR \\fIvalue\\fR ...]\n.br\n.B cudis-server\n"
               "\\-\\-help | \\-\\-version | \\-\\-print\\-conf | \\-\\-print\\-man\n"
               ".SH DESCRIPTION\n"
               "cudis-server speaks the Redis protocol (RESP2 and RESP3) and keeps its data in a "
               "cache cuckoo hash table in GPU memory, or in host memory where no GPU is found "
               "(the \\fBengine\\fR option). Existing Redis clients and tools work with it.\n.PP\n"
               "Options come from the configuration file (one \\fIname value\\fR per line) and "
               "from the command line (\\fB\\-\\-name value\\fR, after the file); the names "
               "and defaults below are those of \\fBCONFIG GET\\fR. Sizes accept Redis's units: "
               "1k = 1000, 1kb = 1024, mb and gb likewise.\n"
               ".SH OPTIONS\n",
            version);
    for (size_t i = 0; i < config_table_len; i++) {
        const config_option *o = &config_table[i];
        fputs(".TP\n.B \\-\\-", f);
        man_text(f, o->name);
        fputs(" \\fIvalue\\fR\n", f);
        man_text(f, o->desc);
        fputs("\n.br\nDefault: \\fB", f);
        man_text(f, o->def[0] ? o->def : "\"\"");
        fputs("\\fR", f);
        if (o->type == OPT_ENUM && strchr(o->enum_vals, '|')) {
            fputs("; one of: ", f);
            man_text(f, o->enum_vals);
        }
        fputs(o->runtime ? "; CONFIG SET may change it.\n" : ".\n", f);
    }
    fputs(".SH SIGNALS\n.B SIGTERM\nand\n.B SIGINT\nshut the server down (saving first when "
          "\\fBsave\\fR points are set);\n.B SIGHUP\nreopens the log file.\n"
          ".SH FILES\n.TP\n.I /etc/cudis/cudis.conf\nthe configuration (Debian package)\n"
          ".TP\n.I /var/lib/cudis/dump.rdb\nthe RDB file of SAVE and BGSAVE (\\fBdir\\fR, "
          "\\fBdbfilename\\fR), loaded at start\n"
          ".SH SEE ALSO\n.BR redis-cli (1),\n.BR redis-server (1)\n",
          f);
}

void config_write_conf(FILE *f)
{
    fprintf(f, "# cudis.conf - every option of cudis-server with its default.\n"
               "# Generated from the server's option table (cudis-server --print-conf);\n"
               "# tests/server checks that this file and the table agree.\n"
               "# Start with: cudis-server conf/cudis.conf [--option value ...]\n"
               "# Sizes accept Redis's units: 1k = 1000, 1kb = 1024, mb, gb likewise.\n");
    for (size_t i = 0; i < config_table_len; i++) {
        const config_option *o = &config_table[i];
        fprintf(f, "\n# %s%s\n", o->desc, o->runtime ? " (CONFIG SET may change it.)" : "");
        if (o->type == OPT_ENUM && strchr(o->enum_vals, '|')) {
            fprintf(f, "# One of: %s\n", o->enum_vals);
        }
        if (o->def[0] == '\0') {
            fprintf(f, "%s \"\"\n", o->name);
        } else {
            fprintf(f, "%s %s\n", o->name, o->def);
        }
    }
}
