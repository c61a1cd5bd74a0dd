/*
 * server_internal.h - the server's private structures: the global server,
 * one event loop per I/O thread, connections, the batcher, the command
 * table. Shared by the server's .c files only; the public face is server.h.
 *
 * Threading: each connection belongs to one loop and is touched only by that
 * loop's thread. Each loop batches the requests of its own connections and
 * runs its batches inline (one engine_execute per batch) under the engine
 * lock taken shared; a batch holding a multi-key command, and every command
 * that must run between batches (FLUSHALL, DBSIZE, SCAN, RENAME, INFO...),
 * takes it exclusive. With io-threads 1 (the default) the lock is never
 * contended.
 */
#ifndef SERVER_INTERNAL_H
#define SERVER_INTERNAL_H

#include <event2/event.h>
#include <event2/listener.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "acl.h"
#include "batch.h"
#include "bighash.h"
#include "cluster.h"
#include "commands.h"
#include "config.h"
#include "cudis_op.h"
#include "engine.h"
#include "resp.h"
#include "util.h"

#define CUDIS_VERSION "0.1.0"
#define REDIS_COMPAT_VERSION "7.0.15"

typedef struct loop loop;
#define PEAK_SLOTS 8
typedef struct pend pend;

/* ------------------------------------------------------------------------
 * Connections
 * ---------------------------------------------------------------------- */

#define CONN_CLOSE_AFTER_REPLY 0x01
#define CONN_CLOSING 0x02     /* socket gone; freed once no op is pending */
#define CONN_IN_WLIST 0x04
#define CONN_WRITE_WAIT 0x08  /* EV_WRITE armed */
#define CONN_KILL 0x10        /* CLIENT KILL from another thread */
#define CONN_UNIX 0x20
#define CONN_LOCAL 0x40
#define CONN_FAKE 0x80 /* a script's client: no socket, replies read back */
#define CONN_MONITOR 0x100 /* MONITOR: gets every command as it runs */
#define CONN_PAUSED 0x200  /* CLIENT PAUSE holds its parsed command (and its reads) */
#define CONN_BLOCKED                                                                               \
    0x400 /* WAIT: no reply, input kept unrun, until its timeout or CLIENT UNBLOCK */
#define CONN_UNBLOCK 0x800 /* CLIENT UNBLOCK from another loop (CONN_UNBLOCK_ERR: ERROR) */
#define CONN_UNBLOCK_ERR 0x1000
#define CONN_RESUME 0x2000 /* served while blocked on keys: reads again at the round's end */
#define CONN_TLS_HS 0x4000 /* TLS handshake not done yet (tls.c) */
#define CONN_TLS_READ_WANTS_WRITE 0x8000  /* SSL_read waits for the socket to be writable */
#define CONN_TLS_WRITE_WANTS_READ 0x10000 /* SSL_write waits for it to be readable */

#define CONN_ACL_CHECK 0x20000 /* its user's channels were narrowed: its loop checks its subscriptions */

/* What a listener accepts (conn_create, loop_hand_fd). */
enum { CONN_KIND_TCP = 0, CONN_KIND_UNIX = 1, CONN_KIND_TLS = 2 };

/* A transaction being queued (MULTI ... EXEC). */
typedef struct multi_cmd {
    const command *cmd;
    int argc;
    char **argv; /* one allocation: argv, lens and the bytes */
    uint32_t *lens;
} multi_cmd;

typedef struct multi_state {
    multi_cmd *cmds;
    int n, cap;
    bool dirty; /* a command was rejected while queued: EXEC aborts */
} multi_state;

/* A key this connection WATCHes: its registry node, and whether it was
 * live then (so expiry, eviction and flushes show at EXEC). */
typedef struct watch_node watch_node;
typedef struct ps_chan ps_chan; /* pubsub.c */
typedef struct ps_pat ps_pat;
typedef struct ps_msg ps_msg;
typedef struct trk_client trk_client; /* tracking.c */
typedef struct blk_state blk_state;   /* blocking.c */
typedef struct watched_key {
    watch_node *node;
    bool found;
} watched_key;

struct ssl_st;

struct conn {
    uint64_t id;
    int fd;
    struct ssl_st *ssl; /* a tls-port connection's SSL (tls.c); NULL: plaintext */
    loop *lp;
    struct event *rev, *wev;
    char *qbuf;
    size_t qlen, qcap, qpos;
    resp_parser rp;
    sbuf out;
    size_t out_sent;
    int proto;
    int db; /* SELECTed database */
    bool authed;
    acl_user *user; /* a reference (acl.h); written under lp->lock (CLIENT LIST reads it) */
    conn *caller;   /* CONN_FAKE of a script: the client running it */
    _Atomic uint32_t flags;
    uint32_t pending;
    char *name, *lib_name, *lib_ver;
    char addr[64], laddr[64];
    int64_t ctime_ms, last_ms;
    int64_t soft_since_ms;
    const command *last_cmd;
    const command *cur_cmd;
    conn *prev, *next;
    conn *wnext;
    multi_state *multi;    /* non-NULL between MULTI and EXEC/DISCARD */
    _Atomic int multi_len; /* its queued commands, -1 outside (CLIENT LIST) */
    watched_key *watched;
    int nwatched, cap_watched;
    _Atomic bool watch_dirty; /* a watched key was written (by anyone) */
    /* pub/sub: channels per namespace (0 SUBSCRIBE, 1 SSUBSCRIBE), patterns */
    ps_chan **ps_chans[2];
    int ps_n[2], ps_cap[2];
    ps_pat **ps_pats;
    int ps_npat, ps_patcap;
    /* client-side caching (tracking.c): the registry entry, invalidations
     * held until the command running now has replied, whether this
     * command's reads are remembered */
    trk_client *trk;
    sbuf trk_defer;
    bool track_now;
    /* CLIENT REPLY: off, skip this command, skip the next; whether the
     * replies of the command running now are dropped */
    bool reply_off, reply_skip, reply_skip_next, silent;
    bool no_evict, no_touch; /* CLIENT NO-EVICT, CLIENT NO-TOUCH */
    bool in_exec;            /* EXEC runs its commands */
    bool asking;             /* ASKING: the next command (or transaction) may use an importing slot */
    bool asking_now;         /* the command dispatched now is ASKING */
    bool readonly;           /* READONLY (cluster mode) */
    int64_t block_until;     /* CONN_BLOCKED: when it times out (INT64_MAX: never) */
    blk_state *blk;          /* CONN_BLOCKED on keys (BLPOP...); NULL: WAIT */
    /* What CLIENT LIST on another loop shows of it: the fields above are
     * its own loop's alone, so that loop publishes these after each read
     * and write (conn_publish) */
    struct {
        _Atomic size_t qbuf, qfree, qcap, qlen, omem, mem;
        _Atomic int64_t last_ms;
        _Atomic int db, proto, fd;
        _Atomic bool no_evict, no_touch;
        const command *_Atomic last_cmd;
    } pub;
};

/* ------------------------------------------------------------------------
 * Loops and the server
 * ---------------------------------------------------------------------- */

#define ERRSTAT_MAX 32

typedef struct loop_stats {
    uint64_t commands, net_in, net_out, conns, errors;
    cmd_stat *cmds;             /* cmd_count() entries */
    char err_names[ERRSTAT_MAX][32];
    uint64_t err_counts[ERRSTAT_MAX];
    int nerr;
} loop_stats;

struct loop {
    int idx;
    pthread_t tid;
    struct event_base *base;
    struct event *cron_ev, *notify_ev;
    int notify_fd[2];
    bool final;                 /* shutting down: loop_drain frees nothing */
    bool exec_locked;           /* EXEC holds the engine lock exclusively */
    batcher b;                  /* the open batch */
    batch_flusher bf;           /* runs it (and the one in flight) */
    conn *clients;
    int nclients;
    conn *wlist;
    loop_stats st;
    pthread_mutex_t lock;       /* guards the client list for CLIENT LIST/KILL */
    pthread_mutex_t acl_mu;     /* ACL checks of this loop's clients (acl.h) */
    struct event *done_ev;      /* bf's queue fd: a batch finished */
    ps_msg *inbox, *inbox_tail; /* messages for our clients from other loops (lock) */
    conn *running;              /* the client whose (unbatched) command runs now */
    int npaused;                /* clients holding a command for CLIENT PAUSE */
    int nblocked;               /* clients blocked (WAIT, BLPOP...; INFO reads it: STAT_*) */
    int nblocked_timed;         /* those of them with a timeout */
    /* per second of the last PEAK_SLOTS: the biggest output (pending
     * bytes) and input (query buffer) of a client; the cron clears the
     * slot of a new second */
    uint64_t peak_out[8], peak_in[8];
    int64_t peak_sec;
    bool busy;                  /* serving events from inside a busy script */
    uint64_t busy_ns;           /* when it last did */
    cudis_evbuf sweep_ev;       /* what active expiry removed (loop 0) */
    _Atomic bool blk_ready;     /* a key one of our blocked clients heads is ready */
    bool blk_serving;           /* blocking_serve runs */
    int blk_resume;             /* clients flagged CONN_RESUME */
    struct event *blk_ev;       /* the next blocked client's timeout */
    int64_t blk_ev_at;          /* when it is armed for (0: not) */
    int pending_fds[256];       /* accepted fds handed over by the listener */
    int npending_fds;
};

typedef struct server {
    srv_config cfg;
    engine *eng;
    char engine_why[512];
    char engine_req[32];
    int devices[CUDIS_MAX_SHARDS]; /* engine-devices, parsed (ndevices 0: shard k on device k) */
    int ndevices;
    loop *loops;
    int nloops;
    /* batches read-lock it, and so does a BGSAVE's walk (its own thread);
     * what is not concurrent with them (CMD_EXCL, EXEC, scripts, the expiry
     * tick) write-locks it: with one loop too */
    pthread_rwlock_t eng_lock;
    struct evconnlistener *listeners[16];
    uint8_t listener_kind[16]; /* CONN_KIND_* */
    int nlisteners;
    struct event *sig_ev[3];
    _Atomic uint64_t next_id;
    _Atomic long connected;
    _Atomic uint64_t rejected_conns;
    _Atomic uint64_t bh_evicted; /* big hashes evicted whole for a chunk (INFO evicted_keys) */
    _Atomic uint64_t total_conns;
    _Atomic int shutdown;       /* 1 = requested */
    _Atomic int sig_pending;    /* SIGTERM/SIGINT seen by the handler (for a busy script) */
    uint64_t rr;
    int64_t start_ms;
    uint64_t start_ns;
    char *config_file;
    char executable[512];
    /* ops/sec sampling (loop 0's cron) */
    uint64_t ops_sample_prev, ops_sample_ns;
    double ops_per_sec;
    /* SELECTed database -> the engine's database. SWAPDB exchanges two
     * entries (holding the engine exclusively); ops take the entry when
     * dispatched, so a command dispatched before a SWAPDB acts as if it
     * ran before it. */
    _Atomic uint8_t db_map[CUDIS_MAX_DBS];
} server;

extern server srv;

/* The engine's database behind a SELECTed one. */
static inline uint8_t db_phys(int db)
{
    return atomic_load_explicit(&srv.db_map[db], memory_order_relaxed);
}

/* main.c: what server_main starts from before reading any option (the
 * defaults, the clocks, client ids from 1, the identity database map), and
 * the engine srv.cfg asks for in srv.eng (0, or -1 logged). With
 * server_loops_setup and cmd_table_setup they make a server that serves
 * connections handed to it (loop_hand_fd) without listening: the fuzz
 * target tests/fuzz/fuzz_dispatch.c runs one so. */
void server_state_setup(void);
int server_engine_setup(void);

/* server.c */
int server_start(void);          /* listeners + loops; blocks until shutdown; returns exit code */
/* The srv.cfg.io_threads loops (loop_setup each) and the engine lock;
 * server_loops_teardown frees them once every loop has run loop_final. */
void server_loops_setup(void);
void server_loops_teardown(void);
void server_request_shutdown(void);
/* At start: raise the NOFILE limit for maxclients, or lower maxclients to
 * what it admits (logged as Redis does); -1 when not even one fits. */
int server_adjust_fd_limit(void);
/* CONFIG SET maxclients: whether the limit admits `clients` (raised if
 * need be); else Redis's error in err. */
bool server_fd_room(long long clients, char *err, size_t errlen);
/* maxmemory-policy `name` for engine `eng` (a registry name) as the
 * engine's enum cudis_policy: 0 with *code, or -1 with why in err. */
int server_policy(const char *name, const char *eng, uint32_t *code, char *err, size_t errlen);
/* The policy in force, as INFO's maxmemory_policy shows it. */
const char *server_policy_shown(void);
/* A key's age as RESTORE (IDLETIME, FREQ) or dump.rdb gives it (-1: not
 * given), as CUDIS_F_AGED's arg under the policy in force: the counter
 * under an LFU policy, the ticks since idle seconds ago under the others
 * (Redis's objectSetLRUOrLFU); -1 when the policy takes neither one given. */
int64_t server_aged_arg(long long idle, long long freq, int64_t now_ms);
/* A SIGTERM/SIGINT the loop could not see yet (a busy script): shut down. */
void server_poll_signals(void);
int64_t server_now_ms(void);
/* Whether batches run asynchronously (engine-pipeline, "auto" resolved). */
bool server_pipelined(void);

/* listen.c: the listeners on loop 0's base (0, or -1 logged) */
/* A non-blocking TCP socket listening on addr:port (*fd, 0 returned); an
 * optional address the host lacks gives 0 with *fd -1; -1 logged. */
int listen_socket(const char *addr, int port, bool optional, int *fd);
int listeners_open(void);
void listeners_close(void);
/* Accept what is waiting, outside the event loop (a busy script on loop 0). */
void listeners_poll(void);
/* Protected mode for a TLS client whose handshake just ended (Redis checks
 * it then, and answers over TLS): true when c is refused (DENIED queued,
 * closed once written). */
bool listen_tls_refused(conn *c);

/* loop.c */
void loop_setup(loop *lp, int idx);
void loop_run(loop *lp);      /* until the loop is told to exit */
void *loop_thread(void *arg); /* loop_run then loop_final, for pthread_create */
void loop_final(loop *lp);    /* answer what clients sent, close them all */
void loop_teardown(loop *lp); /* free what loop_setup made */
/* Run the loop's open batch (batch_flush with the loop's flusher). */
void loop_flush(loop *lp, int reason);
/* Wait for the loop's batch in flight, if any, and answer it. */
void loop_complete(loop *lp);
/* Write (or free, once closed and answered) every connection that asked. */
void loop_drain(loop *lp);
/* Wake the loop's thread: fds handed over, CLIENT KILL flags, shutdown. */
void loop_wake(loop *lp);
/* An accepted fd (kind: CONN_KIND_*) to a loop (round robin); called on
 * loop 0's thread. */
void loop_hand_fd(int fd, int kind);

/* conn.c */
void conn_create(loop *lp, int fd, int kind); /* kind: CONN_KIND_* */
void conn_close(conn *c, const char *why); /* the socket now; the conn in loop_drain */
void conn_free(conn *c);
/* Read once and run what arrived; false when nothing came or it closed. */
bool conn_read_once(conn *c);
void conn_write(conn *c);
/* Publish what CLIENT LIST shows of c to other loops (c->pub). */
void conn_publish(conn *c);
/* One write of c's socket (through TLS on a tls-port connection): as write(2). */
ssize_t conn_sock_write(conn *c, const char *p, size_t n);
/* c has something to write (or to free): on the loop's write list. */
void conn_want_write(conn *c);
/* False (and c closed) when c is over an output-buffer limit. */
bool conn_check_obuf(conn *c);
void conn_cron(conn *c, int64_t now);
/* A client that held its command for CLIENT PAUSE runs it and the rest. */
void conn_resume(conn *c);
/* A client WAIT blocked was answered: it reads and runs its input again. */
void conn_unblocked(conn *c);
bool conn_addr_is_local(const struct sockaddr_storage *ss);
void conn_error(conn *c, const char *msg);  /* error reply with stats */
/* Whether c must AUTH first (Redis's authRequired: the default user has a
 * password, or is off, and c has not authenticated). */
static inline bool conn_auth_required(const conn *c)
{
    return !c->authed && !acl_default_open();
}
void conn_errorf(conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* clients.c */
/* Lines of CLIENT LIST: of `only`, else of every client (or id_filter's),
 * written by a thread of loop `mine` (its own clients read directly,
 * others' as they published them). */
void server_client_list(sbuf *out, const loop *mine, conn *only, long id_filter);
/* CLIENT PAUSE until end_ms (all commands, or those that may write; a
 * pause in force is only lengthened or made stricter), CLIENT UNPAUSE. */
void clients_pause(int64_t end_ms, bool all);
void clients_unpause(void);
/* 0: no pause; 1: writes paused; 2: every command. clients_pause_set:
 * a pause was set and not lifted (it may have timed out): cheap. */
int clients_paused(int64_t now_ms);
bool clients_pause_set(void);
/* Run again the clients of lp whose command waited, if the pause let them. */
void clients_resume(loop *lp);
/* WAIT, BLPOP...: c gets no reply and reads nothing until deadline_ms
 * (INT64_MAX: never) or CLIENT UNBLOCK; then it is answered 0 (or its
 * command's timeout reply, or UNBLOCKED). */
void clients_block(conn *c, int64_t deadline_ms);
/* A client blocked on keys was served (or is closing): it is not blocked
 * any more, nothing is answered, and its input is not read yet. */
void clients_unblock_now(conn *c);
/* Blocked clients of lp whose time came, or that CLIENT UNBLOCK asked for. */
void clients_unblock_due(loop *lp, int64_t now_ms);
/* CLIENT UNBLOCK id: 1 when that client was blocked (it is answered). */
int clients_unblock(conn *self, uint64_t id, bool error);
long clients_blocked(bool timed_only); /* INFO blocked_clients, clients_in_timeout_table */
void clients_block_gone(conn *c);      /* a blocked client is freed */
/* Close the clients matching every filter given (addr, laddr, id, user;
 * NULL/0: any); how many. */
int server_client_kill(conn *self, const char *addr, const char *laddr, uint64_t id, bool skipme,
                       const acl_user *user);
/* Set flag on every client of user (any loop) and wake the loops. */
void server_clients_flag_user(const acl_user *user, uint32_t flag);

/* cmd_*.c: Redis-style helpers; a handler that uses none of its arguments */
#define UNUSED3 (void)argc, (void)argv, (void)lens
bool arg_ll(conn *c, const char *s, uint32_t len, long long *out); /* replies error */
void reply_ok(conn *c);
/* A HELP reply: "<NAME> <subcommand> ... Subcommands are:" then lines. */
void help_reply(conn *c, const char *name, const char *const *lines);
void reply_engine_error(conn *c, int status);
/* What MEMORY USAGE counts for one engine item: key + value + its header
 * and index slot, rounded to 16 (cmd_keys.c). */
long long memory_item_bytes(uint32_t klen, uint64_t vlen);
/* cmd_hash.c: what the collection commands (hashes, sets) share. A
 * collection is one engine item in cudis_hash.h's encoding. */
/* Edits of argv[from..argc): field/value pairs, or fields alone (!vals). */
void coll_edits(sbuf *e, int argc, char **argv, uint32_t *lens, int from, bool vals);
/* The whole collection a typed GET returned (p->op0): false (replied) on
 * an error; *h NULL with *n 0 for a missing key. */
bool coll_whole(conn *c, pend *p, const cudis_batch *b, const uint8_t **h, uint32_t *n);
/* Bytes kept for a reply function in p->aux (freed once answered). */
void coll_aux_bytes(pend *p, const void *data, uint32_t len);
const uint8_t *coll_aux_get(const pend *p, uint32_t *len);
uint64_t coll_rand64(void); /* per-thread generator */
/* Reply function: the op's res.num as an integer, or its error. */
void coll_rp_num(conn *c, pend *p, const cudis_batch *b);
/* The most picks a negative HRANDFIELD/SRANDMEMBER count may ask for: the
 * reply is built in memory (Redis's would grow until the process died),
 * so a larger one is "ERR value is out of range". */
#define COLL_MAX_REPEAT (1LL << 24)
/* HSCAN / SSCAN key cursor [MATCH p] [COUNT n] of a collection of `type`:
 * the whole collection in one reply, cursor 0; the options' errors once
 * the key is found, as Redis. */
void coll_scan_cmd(conn *c, int argc, char **argv, uint32_t *lens, uint8_t type);
/* Its parsing and read, answered by fn (p->b: the options' error, p->aux:
 * the MATCH pattern), for ZSCAN's scores. */
void coll_scan_prepare(conn *c, int argc, char **argv, uint32_t *lens, uint8_t type, reply_fn fn);
/* Iterate the entries of an encoded collection (h may be NULL). */
#define COLL_FOREACH(h, n, at, e)                                                                  \
    for (uint32_t at = CUDIS_HASH_HDR;                                                             \
         (h) != NULL && at < (n) && cudis_hentry_at((h) + at, (n)-at, true, &(e)); at += (e).size)
/* cmd_set.c: whether Redis 7.0 would keep this set as an intset (all
 * members integers, at most set-max-intset-entries: OBJECT ENCODING). */
bool set_is_intset(const uint8_t *h, uint32_t n);
/* cmd_zset.c: whether Redis would keep this sorted set as a listpack
 * (zset-max-listpack-entries, -value: OBJECT ENCODING). */
bool zset_is_listpack(const uint8_t *h, uint32_t n);
/* An encoded sorted set whose entries may be in any order, put in order. */
void zset_normalize(sbuf *h);
/* cmd_hash.c: whether Redis would keep this hash (cudis_hash.h) as a
 * listpack (hash-max-listpack-entries, -value: OBJECT ENCODING). */
bool hash_is_small(const uint8_t *h, uint32_t n);
/* TYPE's name of an enum cudis_type ("string", "hash"...). */
const char *type_name(uint32_t type);
void cmd_dispatch(conn *c, int argc, char **argv, uint32_t *lens);
/* Whether the command must wait for the CLIENT PAUSE in force (mode as
 * clients_paused). */
bool dispatch_postponed(conn *c, int mode, int argc, char **argv, uint32_t *lens);
/* Refuse cmd with a cluster redirection "code msg" (counted; a
 * transaction being queued aborts at EXEC; an EXEC refused is discarded
 * and answered the redirection itself, as Redis's). */
void dispatch_redirect(conn *c, const command *cmd, const char *code, const char *msg);
/* Run a looked-up, checked command (dispatch, and EXEC for each queued one). */
void dispatch_run(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens);
/* Run alone (EXEC, EVAL): this loop's batches answered and the engine held
 * exclusively, from the other loops and a BGSAVE's walk (batches flushed
 * meanwhile run inline under it), until excl_end. Returns whether it took
 * the lock. */
bool excl_begin(loop *lp);
void excl_end(loop *lp, bool locked);
/* What c wrote to c->out from `before` on goes behind its pending replies
 * (if any) in the open batch. */
void reply_in_order(conn *c, size_t before);
/* Whether argument i is a secret MONITOR and SLOWLOG show as "(redacted)"
 * (AUTH's, HELLO's AUTH username and password). */
bool arg_redacted(const command *cmd, int i, int argc, char **argv, uint32_t *lens);

/* multi.c: transactions */
void multi_queue(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens);
void multi_reject(conn *c); /* a command was refused while queued */
void multi_discard(conn *c);

/* pubsub.c */
/* Deliver a message; returns the receivers (PUBLISH's reply). ns 1: shard. */
long pubsub_publish(loop *from, int ns, const char *ch, uint32_t clen, const char *msg,
                    uint32_t mlen);
void pubsub_drain_inbox(loop *lp);     /* messages other loops queued for ours */
void pubsub_unsubscribe_all(conn *c);  /* RESET */
void pubsub_conn_gone(conn *c);        /* conn_free: and its queued messages */
bool pubsub_subscribed(const conn *c); /* any channel, pattern or shard channel */
/* Whether ok() passes each channel, shard channel and pattern (pattern
 * true) c subscribes to; under the pub/sub lock (c's loop calls it). */
bool pubsub_subscriptions_pass(conn *c, bool (*ok)(conn *c, const char *s, size_t n, bool pattern));
/* MONITOR: the command c runs now, to every monitoring client. */
void pubsub_monitor_feed(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens);
void pubsub_monitor_stop(conn *c); /* RESET */

/* pubsub.c, for tracking: deliver to c, which the caller keeps alive
 * (tracking's registry); whether c is subscribed to anything. */
void pubsub_deliver(loop *from, conn *c, const char *bytes, size_t n);
bool pubsub_subscribed_any(conn *c);

/* keyspace.c: after a batch, each key an op changed goes to WATCH, to
 * tracking and to keyspace notifications; a notification of its own. */
void keyspace_batch_done(batcher *b, const cudis_batch *cb);
/* Whether anyone listens for the keys the engine removes on its own
 * (expired, evicted): then batches and sweeps carry an event sink. */
bool keyspace_wants_events(void);
/* ev with room (made, or grown after it lost events); len kept. */
cudis_evbuf *keyspace_evbuf(cudis_evbuf *ev);
/* The events of a sweep (active expiry), as those of a batch. */
void keyspace_engine_events(loop *from, cudis_evbuf *ev);
void keyspace_notify(loop *from, int type, const char *event, uint8_t db, const char *key,
                     uint32_t len);

/* tracking.c: client-side caching (CLIENT TRACKING) */
#define TRK_ON 0x01
#define TRK_BCAST 0x02
#define TRK_OPTIN 0x04
#define TRK_OPTOUT 0x08
#define TRK_NOLOOP 0x10
#define TRK_CACHING 0x20    /* CLIENT CACHING yes (OPTIN) / no (OPTOUT), for the next command */
#define TRK_BROKEN 0x40     /* the redirection's client is gone */
bool tracking_active(void); /* some client tracks */
long tracking_clients(void);
void tracking_conn_new(conn *c);
void tracking_conn_gone(conn *c);
void tracking_disable(conn *c); /* RESET */
/* Whether the reads of cmd, which c runs now, are remembered for c. */
bool tracking_wants(conn *c, const command *cmd);
void tracking_remember_ops(conn *c, const cudis_batch *b, uint32_t op0, uint32_t nops);
void tracking_remember_argv(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens);
/* After a command from the client (not those EXEC runs): CLIENT CACHING
 * lasts one command, or one transaction. */
void tracking_command_done(conn *c, const command *cmd);
/* Invalidations held for c while its command ran go out behind its reply. */
void tracking_after_command(conn *c);
/* Key modified by client `who` (0: by the engine). */
void tracking_invalidate(loop *from, const char *key, uint32_t len, uint64_t who);
void tracking_flush_bcast(loop *from); /* BCAST keys gathered so far */
void tracking_flush_all(loop *from);   /* FLUSHDB / FLUSHALL: everything is invalid */
void tracking_deliver(loop *from, conn *c, const char *bytes, size_t n);
long long tracking_redirect_of(conn *c); /* CLIENT LIST redir= */
uint32_t tracking_flags_of(conn *c);
void tracking_info(sbuf *o); /* INFO stats lines */

/* script.c: a script has run past busy-reply-threshold (other commands
 * get BUSY; its loop serves them from inside the script). */
bool script_busy(void);
const char *script_busy_msg(void); /* the BUSY error's text: which KILL applies */
uint64_t script_memory(void); /* bytes the Lua state holds (MEMORY STATS lua.caches) */
/* function.c: bytes the functions' Lua state holds, the libraries' own
 * (INFO used_memory_vm_functions, used_memory_functions), their counts. */
uint64_t function_memory(void);
uint64_t function_overhead(void);
int function_count(void);
int library_count(void);
/* The libraries as RDB's FUNCTION2 records (FUNCTION DUMP, a snapshot);
 * one library's code loaded (a dump.rdb's record): 0, or -1 with err. */
void function_rdb_put(sbuf *o);
int function_rdb_load(const uint8_t *code, uint32_t n, char *err, size_t errlen);

/* rdb.c: persistence in Redis's RDB format (SAVE, BGSAVE, the save
 * schedule, dump.rdb loaded at start). rdb_guard: before a batch runs,
 * a BGSAVE in progress saves the keys it writes as they were (cheap when
 * none runs); rdb_changed: writes applied (the dirty counter). */
void rdb_guard(batcher *b);
void rdb_changed(uint64_t n);
bool rdb_bgsave_running(void);
/* Loop 0's cron: the save schedule; a BGSAVE's walk has its own timer. */
void rdb_cron(loop *lp, int64_t now_ms);
/* FLUSHALL: a BGSAVE in progress stops (as Redis kills its child);
 * FLUSHDB: it finishes first (its keys are still to be written). */
void rdb_before_flush(loop *lp, bool all);
/* After FLUSHALL, with save points set: the empty dataset saved (Redis's). */
void rdb_after_flushall(loop *lp);
void rdb_setup(void); /* at start: LASTSAVE is the start time */
/* At start (listeners open, nothing served yet but -LOADING): load
 * dir/dbfilename when it exists. 0; 1 when a shutdown (SIGTERM, SHUTDOWN)
 * stopped it (the server exits with 0, saving nothing, as Redis does); -1
 * when it cannot be read (logged; the server exits with 1). */
int rdb_load_at_start(loop *lp);
/* Whether the load at start is in progress (commands get -LOADING). */
bool rdb_loading(void);
/* A dump.rdb of n bytes read from fd (at its start) through a window of
 * `window` bytes at first, loaded through lp's batcher: 0, or -1 with the
 * reason in err (keys read before the error stay loaded). at_start: the
 * load before the server serves: FUNCTION2 records load libraries, and
 * clients are answered between batches (-LOADING for most commands); 1
 * when a shutdown asked for meanwhile stopped it. Else (fuzz_rdb) a
 * FUNCTION2 record is refused and nobody is served. */
typedef struct rdb_load_stats {
    uint64_t keys, expired, failed;
} rdb_load_stats;
int rdb_load_fd(loop *lp, int fd, uint64_t n, size_t window, bool at_start, rdb_load_stats *st,
                char *err, size_t errlen);
/* SHUTDOWN: save first when asked (or, without NOSAVE, when save points
 * are set). 0, or -1 when the save failed (the shutdown is refused). */
int rdb_shutdown_save(loop *lp, bool save, bool nosave);
void rdb_info(sbuf *o);
/* The loops are done: a BGSAVE in progress stops; with save points set and
 * no SHUTDOWN having saved (SIGTERM, SIGINT), the data is saved first. */
void rdb_at_exit(loop *lp);

/* gpumon.c: INFO gpu, from NVML loaded at run time and sampled by a
 * thread of its own once a second. */
void gpumon_start(void);
void gpumon_stop(void);
void gpumon_info(sbuf *o);

/* metrics.c: Prometheus's text of INFO's figures (metrics_text), served on
 * metrics-port by loop 0 (0: off). metrics_start: 0, or -1 when a port
 * could not be bound (logged). */
void metrics_text(sbuf *o);
int metrics_start(struct event_base *base);
void metrics_stop(void);

/* cmd_dump.c: Redis's serialization, for DUMP/RESTORE and FUNCTION
 * DUMP/RESTORE. A string is written raw (its length, its bytes); the
 * footer is the RDB version and the CRC-64 of everything before it. */
typedef struct rdb_reader {
    const uint8_t *p, *end;
} rdb_reader;
void rdb_put_string(sbuf *o, const void *s, size_t n);
void rdb_put_footer(sbuf *o);
/* DUMP's payload of a value a GET of type ANY returned (v: its bytes). */
void dump_payload(sbuf *d, const cudis_result *r, const uint8_t *v);
/* Whether p[0..n) ends in a footer of a version cudis reads, its CRC right. */
bool rdb_footer_ok(const uint8_t *p, size_t n);
/* A string (raw, integer or LZF encoded), malloc'd; NULL when malformed. */
uint8_t *rdb_get_string(rdb_reader *r, uint32_t *len);
/* An RDB length; *enc >= 0 instead for a special string encoding. */
bool rdb_get_len(rdb_reader *r, uint64_t *n, int *enc);
void rdb_put_len(sbuf *o, uint64_t n);
/* The RDB type byte and object of a value of cudis type `type` (not a
 * big hash's head), as DUMP writes it; with key not NULL, the key between
 * them (a dump.rdb's record). */
void rdb_put_object(sbuf *o, uint32_t type, const void *key, uint32_t klen, const uint8_t *v,
                    uint32_t n);
/* The object of RDB type `rdbtype` at r: *v (malloc'd, the engine's
 * encoding) of cudis type *type; false on a type cudis does not keep or
 * bad data. */
bool rdb_get_object(rdb_reader *r, uint8_t rdbtype, uint8_t *type, uint8_t **v, uint32_t *vlen);

/* loop.c: one round of the loop's events from inside a busy script:
 * replies to what arrived (BUSY, SCRIPT KILL...), no batch, no cron. */
void loop_busy_round(loop *lp);

/* observe.c: the slow log, the latency monitor, latency percentiles. The
 * duration of a command that ran alone / of a batched one (its ops). */
void observe_call(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens,
                  uint64_t usec);
void observe_batched(conn *c, const command *cmd, const cudis_batch *b, uint32_t op0, uint32_t nops,
                     uint64_t usec);
void observe_event(const char *event, uint64_t usec); /* e.g. "expire-cycle" */
/* OBJECT IDLETIME: loop 0's cron samples the engine's logical clock once a
 * second; a key's recency stamp (EXISTS's res.num) is then dated by the
 * sample before the first one the clock reached it at (Redis's LRU clock
 * has the same one-second grain). Seconds since then (0 when after the
 * last sample; a key older than the samples kept, ~2.3 hours, gets the
 * oldest one's age: a lower bound). */
void observe_clock_sample(int64_t now_ms);
long long observe_idle_seconds(uint32_t stamp, int64_t now_ms);
/* At start, before any key: the history is filled with 2.3 hours before
 * now at a made-up rate, so that a key loaded or restored idle for up to
 * that long is dated as it says (RESTORE IDLETIME, dump.rdb's idle). */
void observe_clock_seed(int64_t now_ms);
/* The clock ticks since idle_s seconds ago, as the samples date them
 * (CUDIS_F_AGED's arg): a stamp that many ticks behind the clock now
 * reads as idle_s seconds idle. */
int64_t observe_ticks_since(long long idle_s, int64_t now_ms);
void observe_info_latencystats(sbuf *o);

/* blocking.c: clients blocked on keys (BLPOP BRPOP BLMPOP BLMOVE
 * BRPOPLPUSH). A blocked command is its argv copied (blocking_state) and
 * its serve function, tried on one key: */
enum {
    BLK_EMPTY = 0, /* nothing to take: it waits on */
    BLK_SERVED,    /* answered (what it took, or an error): it goes on */
    BLK_WRONGTYPE  /* the key holds another type: nothing answered, it waits on */
};
typedef struct bwait bwait;
typedef int (*blk_serve_fn)(conn *c, const blk_state *s, const char *key, uint32_t klen);
struct blk_state {
    blk_serve_fn serve;
    bool null_array;      /* the timeout's answer: a null array, else a null */
    bool right, to_right; /* the end popped from (BLMOVE: and pushed to) */
    bool mpop;            /* BLMPOP: [key, [elements]] */
    long long count;      /* how many a pop takes */
    uint8_t db;           /* the engine database of the keys */
    int argc;
    char **argv; /* copies, in the state's allocation */
    uint32_t *lens;
    int first_key, nkeys; /* the keys waited on: argv[first_key..+nkeys) */
    bwait *w;             /* one queue place per key */
    int proto;            /* the waiter's, for an answer rendered by another loop */
    uint64_t id;
    loop *owner;
    /* under the registry's lock: a loop tries it now; answered by another
     * loop, not yet delivered; its client went during a try; out of its queues */
    bool claimed, served, orphan, left;
};
bool blocking_active(void); /* any client waits on a key */
/* The blocking commands' timeout argument (seconds, a float; 0: none) as
 * a deadline (INT64_MAX: none); false with Redis 7.0's error replied. */
bool blocking_timeout_arg(conn *c, const char *arg, uint32_t len, int64_t *deadline);
/* Try s on each of its keys in order; block when all are empty (never
 * inside EXEC or a script: there the timeout's answer comes at once).
 * Takes s. A wrong type at once is WRONGTYPE. */
void blocking_try(conn *c, blk_state *s, int64_t deadline);
blk_state *blocking_state(int argc, char **argv, uint32_t *lens, int first_key, int nkeys);
/* c waits on s's keys (takes s) until deadline_ms (INT64_MAX: none). */
void blocking_block(conn *c, blk_state *s, int64_t deadline_ms);
void blocking_forget(conn *c); /* c leaves its queues; s is freed */
/* The wait ends on c's side (timeout, CLIENT UNBLOCK, hang-up; freeing: c
 * goes): blocking_forget, unless a loop is trying it or has answered it
 * (false: no answer now; the try's answer comes as a message). */
bool blocking_end(conn *c, bool freeing);
/* The null a blocked command answers on timeout: an array's, or a bulk's. */
void blocking_timeout_reply(conn *c, bool null_array);
/* The keys of ops a batch applied: those waited on become ready. */
void blocking_touch_batch(loop *from, const cudis_batch *cb);
void blocking_swapdb(loop *lp, uint8_t x, uint8_t y);
/* Serve lp's blocked clients whose keys are ready. Called where lp's open
 * batch may be drained and no command runs; does nothing (cheaply) else. */
void blocking_serve(loop *lp);
/* Answers other loops' tries gave lp's waiters: written, they read again. */
void blocking_take_done(loop *lp);
/* The round's end: clients served read their input again (not inside
 * blocking_serve: it may run in the middle of a dispatch). Returns
 * whether any did (their commands may have filled the open batch). */
bool blocking_resume(loop *lp);

/* watch.c: WATCHed keys of every loop */
bool watch_active(void);                      /* any key watched at all */
void watch_touch_batch(const cudis_batch *b); /* the keys of ops applied */
/* WATCH: the keys are read in the open batch, which the caller drained. */
void watch_keys(conn *c, int n, char **keys, uint32_t *lens);
void watch_clear(conn *c); /* UNWATCH */
/* SWAPDB of engine databases x and y (engine held exclusively): watched
 * keys of either that exist in either are touched; they follow. */
void watch_swapdb(conn *c, uint8_t x, uint8_t y);
/* EXEC: whether a watched key changed since WATCH: written by anyone, or
 * (read again in the drained open batch) expired, evicted, flushed. */
bool watch_changed(conn *c);
/* Runs ops already placed in lp->b alone (after a drain), engine lock held. */
int run_alone(conn *c);

/* info.c */
void info_build(sbuf *out, int argc, char **argv, uint32_t *lens);
long long info_rss_bytes(void); /* the process's resident set */
void stats_reset_all(void);

/* tls.c: TLS on tls-port (OpenSSL). tls_setup at start builds the server's
 * context when tls-port (or tls-cluster, tls-replication) asks for it: 0, or
 * -1 logged (the server exits, as Redis). tls_reconfigure after CONFIG SET
 * of tls-* options: the context built again from srv.cfg; on failure
 * (logged) the old one stays in force and err holds Redis's reply text.
 * tls_teardown frees the contexts at exit. */
enum { TLS_AUTH_NO = 0, TLS_AUTH_YES, TLS_AUTH_OPTIONAL };
int tls_setup(void);
int tls_reconfigure(char *err, size_t errlen);
void tls_teardown(void);
bool tls_wanted(void);                /* tls-port, tls-cluster or tls-replication set */
int tls_auth_parse(const char *s);    /* tls-auth-clients text -> TLS_AUTH_* */
void tls_auth_update(void);           /* tls-auth-clients changed: for new connections */
/* An accepted connection's SSL (c->ssl, CONN_TLS_HS set): 0, or -1 logged. */
int tls_conn_init(conn *c);
/* Go on with the handshake: 1 done, 0 waits for the socket (the right
 * event armed), -1 failed (the caller closes). Never blocks. */
int tls_handshake(conn *c);
/* As read(2)/write(2) on c's socket (-1 with EAGAIN when OpenSSL waits for
 * the socket either way; 0 from tls_read: the peer closed). tls_read reads
 * records while OpenSSL holds more and cap allows; tls_has_pending: OpenSSL
 * still holds bytes read from the socket (then the fd's event may not fire). */
ssize_t tls_read(conn *c, char *buf, size_t cap);
bool tls_has_pending(conn *c);
ssize_t tls_write(conn *c, const char *buf, size_t n);
void tls_close(conn *c); /* close_notify (best effort) and the SSL freed */
/* tls-cluster: an SSL for a cluster bus link (outbound: from
 * tls-client-cert-file's context when set), the peer verified against the
 * CA both ways; NULL logged. The caller owns it. */
struct ssl_st *tls_bus_ssl(bool outbound);

/* log.c */
enum { LL_DEBUG = 0, LL_VERBOSE, LL_NOTICE, LL_WARNING, LL_NOTHING };
void log_setup(void);
void log_reopen(void); /* SIGHUP: logrotate moved the file away */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int log_level_from(const char *s);

#endif /* SERVER_INTERNAL_H */
