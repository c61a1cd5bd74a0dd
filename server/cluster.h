/*
 * cluster.h - Redis Cluster mode (cluster-enabled yes): the node table and
 * its 16,384 hash slots, the redirections dispatch applies to every
 * command with keys (MOVED, ASK, CROSSSLOT, TRYAGAIN, CLUSTERDOWN, worded
 * as Redis words them), the CLUSTER commands, nodes.conf, and the cluster
 * bus (cluster_bus.c: Redis's own binary message format on cluster-port,
 * so nodes learn each other, agree on slot owners and detect failures).
 *
 * Threading: the bus runs on loop 0's event base; commands may run on any
 * loop. The state is guarded by one mutex (cluster.c); the owner of each
 * slot is also readable without it, for dispatch's check of a key the
 * node serves (the common case costs a CRC16 and a load).
 */
#ifndef CLUSTER_H
#define CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commands.h"
#include "util.h"

#define CLUSTER_SLOTS 16384
#define CLUSTER_NAMELEN 40
#define CLUSTER_IPLEN 46

/* Node flags, Redis's values (they travel on the bus). */
#define CLN_MASTER 0x0001
#define CLN_SLAVE 0x0002
#define CLN_PFAIL 0x0004
#define CLN_FAIL 0x0008
#define CLN_MYSELF 0x0010
#define CLN_HANDSHAKE 0x0020
#define CLN_NOADDR 0x0040
#define CLN_MEET 0x0080
#define CLN_MIGRATE_TO 0x0100
#define CLN_NOFAILOVER 0x0200

typedef struct cl_link cl_link;

/* A slot as dispatch sees it (cl_state.mode, kept by the setters). */
#define CLM_ASSIGNED 0x01
#define CLM_MINE 0x02
#define CLM_MIGRATING 0x04
#define CLM_IMPORTING 0x08

typedef struct cl_report {
    struct cl_node *from; /* a master that sees the node failing */
    int64_t when;
} cl_report;

typedef struct cl_node {
    char name[CLUSTER_NAMELEN];
    char shard_id[CLUSTER_NAMELEN];
    char ip[CLUSTER_IPLEN];
    char hostname[256];
    int port, cport, pport;
    uint16_t flags;
    uint64_t config_epoch;
    int64_t ctime, ping_sent, pong_received, data_received, fail_time;
    uint8_t slots[CLUSTER_SLOTS / 8];
    int nslots;
    cl_link *link;   /* ours to it (we ping, it pongs) */
    cl_link *inlink; /* its to us */
    cl_report *reports;
    int nreports;
} cl_node;

/* The cluster as this node sees it. */
typedef struct cl_state {
    cl_node *myself;
    cl_node **nodes;
    int nnodes, cap;
    cl_node *slots[CLUSTER_SLOTS];
    cl_node *migrating[CLUSTER_SLOTS]; /* slots of ours moving to a node */
    cl_node *importing[CLUSTER_SLOTS]; /* slots coming from a node */
    uint8_t mode[CLUSTER_SLOTS];       /* CLM_* of each slot: what dispatch reads, lock-free */
    uint64_t current_epoch;
    uint64_t last_vote_epoch;
    bool ok;      /* cluster_state */
    int size;     /* masters serving a slot */
    int64_t start_ms;
    bool dirty;   /* nodes.conf to be written */
    /* forgotten nodes may not come back through gossip for a minute */
    struct {
        char name[CLUSTER_NAMELEN];
        int64_t until;
    } * forgotten;
    int nforgotten;
    uint64_t sent[11], received[11]; /* bus messages by type (CLUSTER INFO) */
    uint8_t lost[CLUSTER_SLOTS / 8]; /* slots taken from us whose keys are to go */
    bool any_lost;
} cl_state;

extern cl_state cl;

/* cluster.c */
unsigned cluster_keyslot(const char *key, size_t len);
/* At start, with cluster-enabled: nodes.conf loaded (or made), the bus
 * listening. 0, or -1 logged. */
int cluster_setup(void);
void cluster_shutdown(void);
/* Dispatch's check of a command with keys (EXEC: those it queued): false
 * when it was refused, the error (Redis's redirection) written. */
bool cluster_check(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens);
/* A command a script calls: NULL, or Redis's error (a key of another
 * node or, unless *slot is -2 (EVAL: cross-slot allowed), of another slot
 * than the script's declared or earlier ones, *slot). */
const char *cluster_script_check(const command *cmd, int argc, char **argv, uint32_t *lens,
                                 int *slot);
void cluster_info(sbuf *o); /* INFO cluster */
long cluster_links(void);   /* INFO cluster_connections */

/* Under the state's lock (cluster.c), for cluster_bus.c. */
void cl_lock(void);
void cl_unlock(void);
cl_node *cl_node_new(const char *name, uint16_t flags);
void cl_node_add(cl_node *n);
void cl_node_del(cl_node *n); /* and its slots, reports, links */
cl_node *cl_node_find(const char *name);
void cl_node_rename(cl_node *n, const char *name);
bool cl_forgotten(const char *name);
void cl_forget_add(const char *name, int64_t ttl_ms);
void cl_slot_set(int slot, cl_node *n); /* NULL: unassigned */
void cl_set_migrating(int slot, cl_node *to);
void cl_set_importing(int slot, cl_node *from);
bool cl_slot_has(const cl_node *n, int slot);
void cl_update_state(int64_t now);
/* nodes.conf, atomically: 0, or -1 logged; synced when an epoch changed
 * (or fsync_always: SAVECONFIG). */
int cl_save(bool fsync_always);
void cl_random_name(char *out);
bool cl_valid_name(const char *s, size_t len);
/* CLUSTER MEET: a node to greet at ip:port (bus cport); false when the
 * address is not an IP address. One in handshake already is left be. */
bool cl_start_handshake(const char *ip, int port, int cport);

/* slotkeys.c: the keys of each slot (a superset the readers check). */
typedef struct cudis_batch cudis_batch;
typedef struct cudis_evbuf cudis_evbuf;
void slotkeys_batch(const cudis_batch *cb);
void slotkeys_events(const cudis_evbuf *ev);
void slotkeys_clear(void); /* FLUSHALL / FLUSHDB */
/* Up to max existing keys of a slot (max < 0: all), checked with the
 * engine the caller holds; RESP bulks to out (NULL: count only). */
long long slotkeys_get(conn *c, int slot, long long max, sbuf *out);
/* Delete every key of a slot this node no longer serves (Redis's dirty
 * slots), on loop lp with the engine held there; whether the index names
 * any key of the slot (existing or not). */
typedef struct loop loop;
void slotkeys_drop_slot(loop *lp, int slot);
bool slotkeys_any(int slot);
uint64_t slotkeys_names(void); /* names held (INFO cluster_slot_index_keys) */

/* cluster_bus.c: links, messages, the cron (failure detection). */
int cl_bus_listen(void);
void cl_bus_close(void);
void cl_bus_link_free(cl_link *l);
/* The whole cluster is told (a PONG to every node): slots or epoch changed. */
void cl_bus_broadcast_pong(void);
void cl_bus_stats(sbuf *o);
/* Bytes as if they arrived on a link (tests/fuzz/fuzz_cluster.c): an
 * inbound one (from NULL) or ours to node `from`; nothing is sent. */
void cl_bus_feed(const uint8_t *buf, size_t n, cl_node *from);
long cl_bus_links(void);

#endif /* CLUSTER_H */
