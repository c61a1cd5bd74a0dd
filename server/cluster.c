/*
 * cluster.c - Redis Cluster mode: the node table and slot map (cluster.h),
 * nodes.conf (Redis's format, written atomically: a temporary file, fsync,
 * rename), the check dispatch applies to commands with keys (Redis's
 * getNodeByQuery: MOVED, ASK, CROSSSLOT, TRYAGAIN, CLUSTERDOWN) and the
 * CLUSTER commands. The bus (cluster_bus.c) changes the same state under
 * the same lock.
 */
#include "cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cudis_slot.h"
#include "cudis_time.h"
#include "server_internal.h"

cl_state cl;
static pthread_mutex_t cl_mu = PTHREAD_MUTEX_INITIALIZER;

void cl_lock(void)
{
    pthread_mutex_lock(&cl_mu);
}

void cl_unlock(void)
{
    pthread_mutex_unlock(&cl_mu);
}

/* ------------------------------------------------------------------------
 * Hash slots
 * ---------------------------------------------------------------------- */

unsigned cluster_keyslot(const char *key, size_t len)
{
    return cudis_keyslot(key, len);
}

/* ------------------------------------------------------------------------
 * Nodes
 * ---------------------------------------------------------------------- */

void cl_random_name(char *out)
{
    uint8_t r[CLUSTER_NAMELEN / 2];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        for (size_t i = 0; i < sizeof(r); i++) {
            r[i] = (uint8_t)coll_rand64();
        }
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof(r); i++) {
        out[2 * i] = hex[r[i] >> 4];
        out[2 * i + 1] = hex[r[i] & 15];
    }
}

bool cl_valid_name(const char *s, size_t len)
{
    if (len != CLUSTER_NAMELEN) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z'))) {
            return false;
        }
    }
    return true;
}

cl_node *cl_node_new(const char *name, uint16_t flags)
{
    cl_node *n = xcalloc(1, sizeof(*n));
    if (name != NULL) {
        memcpy(n->name, name, CLUSTER_NAMELEN);
    } else {
        cl_random_name(n->name);
    }
    cl_random_name(n->shard_id);
    n->flags = flags;
    n->ctime = cudis_now_ms();
    return n;
}

void cl_node_add(cl_node *n)
{
    if (cl.nnodes == cl.cap) {
        cl.cap = cl.cap ? cl.cap * 2 : 16;
        cl.nodes = xrealloc(cl.nodes, sizeof(cl_node *) * (size_t)cl.cap);
    }
    cl.nodes[cl.nnodes++] = n;
    cl.dirty = true;
}

cl_node *cl_node_find(const char *name)
{
    for (int i = 0; i < cl.nnodes; i++) {
        if (memcmp(cl.nodes[i]->name, name, CLUSTER_NAMELEN) == 0) {
            return cl.nodes[i];
        }
    }
    return NULL;
}

static cl_node *node_by_arg(const char *s, uint32_t len)
{
    if (len != CLUSTER_NAMELEN) {
        return NULL;
    }
    return cl_node_find(s);
}

void cl_node_rename(cl_node *n, const char *name)
{
    memcpy(n->name, name, CLUSTER_NAMELEN);
    cl.dirty = true;
}

/* The byte dispatch reads for a slot (cluster.h: CLM_*). */
static void mode_refresh(int s)
{
    uint8_t m = 0;
    if (cl.slots[s] != NULL) {
        m |= CLM_ASSIGNED;
        if (cl.slots[s] == cl.myself) {
            m |= CLM_MINE;
        }
    }
    if (cl.migrating[s] != NULL) {
        m |= CLM_MIGRATING;
    }
    if (cl.importing[s] != NULL) {
        m |= CLM_IMPORTING;
    }
    __atomic_store_n(&cl.mode[s], m, __ATOMIC_RELEASE);
}

void cl_set_migrating(int s, cl_node *n)
{
    cl.migrating[s] = n;
    mode_refresh(s);
}

void cl_set_importing(int s, cl_node *n)
{
    cl.importing[s] = n;
    mode_refresh(s);
}

bool cl_slot_has(const cl_node *n, int slot)
{
    return (n->slots[slot >> 3] >> (slot & 7)) & 1;
}

void cl_slot_set(int slot, cl_node *n)
{
    cl_node *old = cl.slots[slot];
    if (old == n) {
        return;
    }
    if (old != NULL) {
        old->slots[slot >> 3] &= (uint8_t) ~(1u << (slot & 7));
        old->nslots--;
    }
    if (n != NULL) {
        n->slots[slot >> 3] |= (uint8_t)(1u << (slot & 7));
        n->nslots++;
    }
    __atomic_store_n(&cl.slots[slot], n, __ATOMIC_RELEASE);
    mode_refresh(slot);
    cl.dirty = true;
}

void cl_node_del(cl_node *n)
{
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (cl.slots[s] == n) {
            cl_slot_set(s, NULL);
        }
        if (cl.migrating[s] == n) {
            cl_set_migrating(s, NULL);
        }
        if (cl.importing[s] == n) {
            cl_set_importing(s, NULL);
        }
    }
    for (int i = 0; i < cl.nnodes; i++) {
        cl_node *o = cl.nodes[i];
        for (int r = 0; r < o->nreports; r++) {
            if (o->reports[r].from == n) {
                o->reports[r--] = o->reports[--o->nreports];
            }
        }
    }
    if (n->link != NULL) {
        cl_bus_link_free(n->link);
    }
    if (n->inlink != NULL) {
        cl_bus_link_free(n->inlink);
    }
    for (int i = 0; i < cl.nnodes; i++) {
        if (cl.nodes[i] == n) {
            cl.nodes[i] = cl.nodes[--cl.nnodes];
            break;
        }
    }
    free(n->reports);
    free(n);
    cl.dirty = true;
}

bool cl_forgotten(const char *name)
{
    int64_t now = cudis_now_ms();
    for (int i = 0; i < cl.nforgotten; i++) {
        if (cl.forgotten[i].until < now) {
            cl.forgotten[i--] = cl.forgotten[--cl.nforgotten];
        } else if (memcmp(cl.forgotten[i].name, name, CLUSTER_NAMELEN) == 0) {
            return true;
        }
    }
    return false;
}

void cl_forget_add(const char *name, int64_t ttl_ms)
{
    cl_forgotten(name); /* drops the expired ones */
    for (int i = 0; i < cl.nforgotten; i++) {
        if (memcmp(cl.forgotten[i].name, name, CLUSTER_NAMELEN) == 0) {
            cl.forgotten[i].until = cudis_now_ms() + ttl_ms;
            return;
        }
    }
    cl.forgotten = xrealloc(cl.forgotten, sizeof(*cl.forgotten) * (size_t)(cl.nforgotten + 1));
    memcpy(cl.forgotten[cl.nforgotten].name, name, CLUSTER_NAMELEN);
    cl.forgotten[cl.nforgotten++].until = cudis_now_ms() + ttl_ms;
}

/* ------------------------------------------------------------------------
 * State
 * ---------------------------------------------------------------------- */

#define WRITABLE_DELAY_MS 2000 /* a master just started waits for the others' news */

void cl_update_state(int64_t now)
{
    if (!cl.ok && now - cl.start_ms < WRITABLE_DELAY_MS) {
        return;
    }
    bool ok = true;
    int size = 0, reachable = 0, served = 0; /* each slot has one owner: counts add up */
    for (int i = 0; i < cl.nnodes; i++) {
        cl_node *n = cl.nodes[i];
        if (!(n->flags & CLN_FAIL)) {
            served += n->nslots;
        }
        if ((n->flags & CLN_MASTER) && n->nslots > 0) {
            size++;
            if (!(n->flags & (CLN_FAIL | CLN_PFAIL))) {
                reachable++;
            }
        }
    }
    cl.size = size;
    if (srv.cfg.cluster_require_full_coverage && served < CLUSTER_SLOTS) {
        ok = false; /* a slot unassigned, or its owner failed */
    }
    if (reachable < size / 2 + 1) {
        ok = false; /* in a minority partition */
    }
    if (ok != cl.ok) {
        log_msg(LL_NOTICE, "Cluster state changed: %s", ok ? "ok" : "fail");
    }
    __atomic_store_n(&cl.ok, ok, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------------
 * nodes.conf
 * ---------------------------------------------------------------------- */

static void flags_text(sbuf *o, uint16_t f)
{
    static const struct {
        uint16_t bit;
        const char *name;
    } names[] = {{CLN_MYSELF, "myself"},       {CLN_MASTER, "master"},  {CLN_SLAVE, "slave"},
                 {CLN_PFAIL, "fail?"},         {CLN_FAIL, "fail"},      {CLN_HANDSHAKE, "handshake"},
                 {CLN_NOADDR, "noaddr"},       {CLN_NOFAILOVER, "nofailover"}};
    size_t before = o->len;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (f & names[i].bit) {
            if (o->len > before) {
                sbuf_add(o, ",", 1);
            }
            sbuf_adds(o, names[i].name);
        }
    }
    if (o->len == before) {
        sbuf_adds(o, "noflags");
    }
}

static void slot_ranges(sbuf *o, const cl_node *n)
{
    if (n->nslots == 0) {
        return;
    }
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if ((s & 7) == 0 && n->slots[s >> 3] == 0) {
            s += 7; /* a byte of slots not its */
            continue;
        }
        if (!cl_slot_has(n, s)) {
            continue;
        }
        int e = s;
        while (e + 1 < CLUSTER_SLOTS && ((e + 1) & 7) == 0 && e + 8 < CLUSTER_SLOTS &&
               n->slots[(e + 1) >> 3] == 0xff) {
            e += 8; /* a byte of slots all its */
        }
        while (e + 1 < CLUSTER_SLOTS && cl_slot_has(n, e + 1)) {
            e++;
            while (((e + 1) & 7) == 0 && e + 8 < CLUSTER_SLOTS && n->slots[(e + 1) >> 3] == 0xff) {
                e += 8;
            }
        }
        if (e == s) {
            sbuf_printf(o, " %d", s);
        } else {
            sbuf_printf(o, " %d-%d", s, e);
        }
        s = e;
    }
}

/* The port client c is told for n. With tls-cluster a node's port is its
 * TLS port and pport its plaintext one: a plaintext client gets pport
 * (Redis 7's use_pport); c NULL (nodes.conf): the port. */
static int client_port(const conn *c, const cl_node *n)
{
    return srv.cfg.tls_cluster && c != NULL && c->ssl == NULL && n->pport ? n->pport : n->port;
}

/* One node's line of CLUSTER NODES (for client c) and nodes.conf (c NULL),
 * in Redis's format. */
static void node_line(sbuf *o, const cl_node *n, bool for_file, const conn *c)
{
    sbuf_add(o, n->name, CLUSTER_NAMELEN);
    sbuf_printf(o, " %s:%d@%d", n->ip, client_port(c, n), n->cport);
    if (n->hostname[0]) {
        sbuf_printf(o, ",%s", n->hostname);
    }
    sbuf_add(o, " ", 1);
    flags_text(o, n->flags);
    sbuf_printf(o, " - %" PRId64 " %" PRId64 " %" PRIu64 " %s",
                for_file ? 0 : n->ping_sent, for_file ? 0 : n->pong_received, n->config_epoch,
                (n->link != NULL || (n->flags & CLN_MYSELF)) ? "connected" : "disconnected");
    slot_ranges(o, n);
    if (n->flags & CLN_MYSELF) {
        for (int s = 0; s < CLUSTER_SLOTS; s++) {
            if (!(cl.mode[s] & (CLM_MIGRATING | CLM_IMPORTING))) {
                continue;
            }
            if (cl.migrating[s] != NULL) {
                sbuf_printf(o, " [%d->-%.40s]", s, cl.migrating[s]->name);
            } else if (cl.importing[s] != NULL) {
                sbuf_printf(o, " [%d-<-%.40s]", s, cl.importing[s]->name);
            }
        }
    }
    sbuf_add(o, "\n", 1);
}

static void nodes_text(sbuf *o, bool for_file, const conn *c)
{
    for (int i = 0; i < cl.nnodes; i++) {
        if (!for_file || !(cl.nodes[i]->flags & CLN_HANDSHAKE)) {
            node_line(o, cl.nodes[i], for_file, c);
        }
    }
}

/* The epochs the last fsync'ed nodes.conf holds: a node must never reuse
 * an epoch after a crash, so a change of them is synced before the command
 * that made it is answered. Other changes (slots, nodes, flags) Redis
 * writes unsynced (a crash may lose the last of them; the cluster tells
 * the node again); here a thread of their own writes them, the newest
 * after CONF_GATHER_MS, renamed over the old file without waiting for the
 * disk. Resharding makes four a slot, and each save is a new file renamed
 * over the old, which on ext4 also starts the file's writeback
 * (auto_da_alloc): saved one by one on the loop, SETSLOT took 2.4x
 * Redis's time (Redis 7.0 writes the file in place, not atomically). */
static uint64_t synced_current = UINT64_MAX, synced_config = UINT64_MAX;

/* The file nodes.conf names now, held with flock so that a second node
 * started with the same file refuses to run (Redis's rule). Each save
 * locks its new file before renaming it into place. Only one save runs
 * at a time (W.writing), so lock_fd is the saver's. */
static int lock_fd = -1;

/* How long an unsynced change may wait for the ones after it (resharding
 * makes four a slot): it is in the file within this, or at shutdown. */
#define CONF_GATHER_MS 50

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, idle;
    sbuf next;     /* the newest text not yet written */
    bool has_next; /* next holds one */
    bool writing;  /* a save runs (its text taken from next) */
    bool stop;
    bool started;
    bool closed; /* after writer_stop: every save is written at once */
    pthread_t tid;
} W = {.mu = PTHREAD_MUTEX_INITIALIZER,
       .wake = PTHREAD_COND_INITIALIZER,
       .idle = PTHREAD_COND_INITIALIZER};

/* Write text to nodes.conf: a temporary file (fsync'ed when sync), locked,
 * renamed into place. 0, or -1 logged. */
static int write_conf(const sbuf *o, bool sync)
{
    const char *path = srv.cfg.cluster_config_file;
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = -1;
    if (fd >= 0) {
        size_t off = 0;
        while (off < o->len) {
            ssize_t w = write(fd, o->p + off, o->len - off);
            if (w <= 0) {
                break;
            }
            off += (size_t)w;
        }
        if (off == o->len && (!sync || fsync(fd) == 0) && flock(fd, LOCK_EX | LOCK_NB) == 0) {
            rc = rename(tmp, path);
        }
        if (rc == 0) {
            if (lock_fd >= 0) {
                close(lock_fd);
            }
            lock_fd = fd; /* the lock moves to the file in place */
        } else {
            close(fd);
        }
    }
    if (rc != 0) {
        log_msg(LL_WARNING, "Could not write the cluster config file %s: %s", path,
                strerror(errno));
        unlink(tmp);
    }
    return rc;
}

static void *writer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&W.mu);
    for (;;) {
        while (!W.has_next && !W.stop) {
            pthread_cond_wait(&W.wake, &W.mu);
        }
        if (!W.has_next) {
            break; /* stopped with nothing left to write */
        }
        /* gather what follows for a while: one file for a run of changes */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += CONF_GATHER_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (W.has_next && !W.stop &&
               pthread_cond_timedwait(&W.wake, &W.mu, &until) != ETIMEDOUT) {
        }
        if (!W.has_next) {
            continue; /* a synced save took it */
        }
        sbuf o = W.next;
        W.next = (sbuf){0};
        W.has_next = false;
        W.writing = true;
        pthread_mutex_unlock(&W.mu);
        write_conf(&o, false);
        sbuf_free(&o);
        pthread_mutex_lock(&W.mu);
        W.writing = false;
        pthread_cond_broadcast(&W.idle);
    }
    pthread_mutex_unlock(&W.mu);
    return NULL;
}

static void writer_stop(void)
{
    if (!W.started) {
        return;
    }
    pthread_mutex_lock(&W.mu);
    W.stop = true;
    pthread_cond_signal(&W.wake);
    pthread_mutex_unlock(&W.mu);
    pthread_join(W.tid, NULL);
    W.started = false;
    W.stop = false;
}

/* Writes what is queued and ends the writer: later saves are written at
 * once (cluster_shutdown). */
static void writer_close(void)
{
    writer_stop();
    W.closed = true;
}

int cl_save(bool fsync_always)
{
    sbuf o = {0};
    nodes_text(&o, true, NULL);
    sbuf_printf(&o, "vars currentEpoch %" PRIu64 " lastVoteEpoch %" PRIu64 "\n", cl.current_epoch,
                cl.last_vote_epoch);
    bool sync = fsync_always || cl.current_epoch != synced_current ||
                cl.myself->config_epoch != synced_config;
    pthread_mutex_lock(&W.mu);
    if (!sync && !W.started && !W.closed) {
        W.started = pthread_create(&W.tid, NULL, writer_main, NULL) == 0;
    }
    if (!sync && W.started) { /* the writer takes the newest text */
        sbuf_free(&W.next);
        W.next = o;
        W.has_next = true;
        pthread_cond_signal(&W.wake);
        pthread_mutex_unlock(&W.mu);
        cl.dirty = false;
        return 0;
    }
    /* written here, before the reply: what is queued is older than this */
    while (W.writing) {
        pthread_cond_wait(&W.idle, &W.mu);
    }
    sbuf_free(&W.next);
    W.has_next = false;
    int rc = write_conf(&o, sync);
    pthread_mutex_unlock(&W.mu);
    if (rc == 0) {
        if (sync) {
            synced_current = cl.current_epoch;
            synced_config = cl.myself->config_epoch;
        }
        cl.dirty = false;
    }
    sbuf_free(&o);
    return rc;
}

/* Slots "a-b", "a", "[a->-name]", "[a-<-name]" of a loaded line. */
static bool load_slots(cl_node *n, char **tok, int ntok, char *err, size_t errlen)
{
    for (int i = 0; i < ntok; i++) {
        char *t = tok[i];
        if (t[0] == '[') {
            int s;
            char dir[4], name[CLUSTER_NAMELEN + 1];
            if (sscanf(t, "[%d-%3[<>-]%40[0-9a-z]]", &s, dir, name) != 3 || s < 0 ||
                s >= CLUSTER_SLOTS) {
                snprintf(err, errlen, "bad slot entry '%s'", t);
                return false;
            }
            cl_node *o = cl_node_find(name);
            if (o == NULL) {
                o = cl_node_new(name, 0);
                cl_node_add(o);
            }
            if (strcmp(dir, "->-") == 0) {
                cl_set_migrating(s, o);
            } else {
                cl_set_importing(s, o);
            }
            continue;
        }
        char *dash = strchr(t, '-');
        long a = strtol(t, NULL, 10), b = dash ? strtol(dash + 1, NULL, 10) : a;
        if (a < 0 || b >= CLUSTER_SLOTS || a > b) {
            snprintf(err, errlen, "bad slot range '%s'", t);
            return false;
        }
        for (long s = a; s <= b; s++) {
            cl_slot_set((int)s, n);
        }
    }
    return true;
}

static uint16_t parse_flags(const char *s)
{
    uint16_t f = 0;
    static const struct {
        const char *name;
        uint16_t bit;
    } names[] = {{"myself", CLN_MYSELF},       {"master", CLN_MASTER},       {"slave", CLN_SLAVE},
                 {"fail?", CLN_PFAIL},         {"fail", CLN_FAIL},           {"handshake", CLN_HANDSHAKE},
                 {"noaddr", CLN_NOADDR},       {"nofailover", CLN_NOFAILOVER}};
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            if (strcmp(t, names[i].name) == 0) {
                f |= names[i].bit;
            }
        }
    }
    return f;
}

/* nodes.conf into cl: 1 loaded, 0 no file (or empty), -1 bad (err). */
static int load_config(char *err, size_t errlen)
{
    FILE *f = fopen(srv.cfg.cluster_config_file, "r");
    if (f == NULL) {
        if (errno == ENOENT) {
            return 0;
        }
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, f) > 0) {
        char *tok[CLUSTER_SLOTS + 16];
        int ntok = 0;
        for (char *save, *t = strtok_r(line, " \r\n", &save); t && ntok < (int)(sizeof(tok) / sizeof(tok[0]));
             t = strtok_r(NULL, " \r\n", &save)) {
            tok[ntok++] = t;
        }
        if (ntok == 0) {
            continue;
        }
        if (strcmp(tok[0], "vars") == 0) {
            for (int i = 1; i + 1 < ntok; i += 2) {
                if (strcmp(tok[i], "currentEpoch") == 0) {
                    cl.current_epoch = strtoull(tok[i + 1], NULL, 10);
                } else if (strcmp(tok[i], "lastVoteEpoch") == 0) {
                    cl.last_vote_epoch = strtoull(tok[i + 1], NULL, 10);
                }
            }
            continue;
        }
        if (ntok < 8 || !cl_valid_name(tok[0], strlen(tok[0]))) {
            snprintf(err, errlen, "unrecoverable error: corrupted cluster config file \"%s\"",
                     tok[0]);
            rc = -1;
            break;
        }
        cl_node *n = cl_node_find(tok[0]);
        if (n == NULL) {
            n = cl_node_new(tok[0], 0);
            cl_node_add(n);
        }
        /* ip:port@cport[,hostname] */
        char *addr = tok[1], *comma = strchr(addr, ','), *at = strchr(addr, '@');
        if (comma) {
            *comma = '\0';
            snprintf(n->hostname, sizeof(n->hostname), "%s", comma + 1);
        }
        char *colon = strrchr(addr, ':');
        if (colon == NULL) {
            snprintf(err, errlen, "unrecoverable error: address '%s' in the cluster config file",
                     addr);
            rc = -1;
            break;
        }
        *colon = '\0';
        snprintf(n->ip, sizeof(n->ip), "%s", addr);
        n->port = atoi(colon + 1);
        n->cport = at ? atoi(at + 1) : n->port + 10000;
        n->flags = parse_flags(tok[2]);
        if (n->flags & CLN_MYSELF) {
            cl.myself = n;
        }
        n->flags &= (uint16_t) ~(CLN_PFAIL | CLN_HANDSHAKE);
        n->config_epoch = strtoull(tok[6], NULL, 10);
        if (!load_slots(n, tok + 8, ntok - 8, err, errlen)) {
            rc = -1;
            break;
        }
        rc = 1;
    }
    free(line);
    fclose(f);
    if (rc == 1 && cl.myself == NULL) {
        snprintf(err, errlen, "myself node not found in the cluster config file");
        rc = -1;
    }
    return rc;
}

int cluster_setup(void)
{
    memset(&cl, 0, sizeof(cl));
    W.closed = false;
    cl.start_ms = cudis_now_ms();
    char err[512] = "";
    lock_fd = open(srv.cfg.cluster_config_file, O_RDONLY | O_CLOEXEC);
    if (lock_fd >= 0 && flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        log_msg(LL_WARNING,
                "Sorry, the cluster configuration file %s is already used by a different Redis "
                "Cluster node. Please make sure that different nodes use different cluster "
                "configuration files.",
                srv.cfg.cluster_config_file);
        close(lock_fd);
        lock_fd = -1;
        return -1;
    }
    int rc = load_config(err, sizeof(err));
    if (rc < 0) {
        log_msg(LL_WARNING, "Loading the cluster config file %s: %s",
                srv.cfg.cluster_config_file, err);
        return -1;
    }
    if (rc == 0) {
        cl.myself = cl_node_new(NULL, CLN_MYSELF | CLN_MASTER);
        cl_node_add(cl.myself);
        log_msg(LL_NOTICE, "No cluster configuration found, I'm %.40s", cl.myself->name);
    } else {
        log_msg(LL_NOTICE, "Node configuration loaded, I'm %.40s", cl.myself->name);
    }
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        mode_refresh(s); /* slots loaded before the myself line was read */
    }
    cl_node *me = cl.myself;
    /* Redis's deriveAnnouncedPorts: with tls-cluster the TLS port is the
     * node's port (and the bus's base), the plaintext one its pport */
    int base = srv.cfg.tls_cluster ? (int)srv.cfg.tls_port : (int)srv.cfg.port;
    me->port = base;
    me->pport = srv.cfg.tls_cluster ? (int)srv.cfg.port : 0;
    if (srv.cfg.cluster_announce_port) {
        me->port = (int)srv.cfg.cluster_announce_port;
    }
    me->cport = srv.cfg.cluster_announce_bus_port ? (int)srv.cfg.cluster_announce_bus_port
                : srv.cfg.cluster_port                ? (int)srv.cfg.cluster_port
                                                      : base + 10000;
    if (srv.cfg.cluster_announce_ip && srv.cfg.cluster_announce_ip[0]) {
        snprintf(me->ip, sizeof(me->ip), "%s", srv.cfg.cluster_announce_ip);
    }
    snprintf(me->hostname, sizeof(me->hostname), "%s",
             srv.cfg.cluster_announce_hostname ? srv.cfg.cluster_announce_hostname : "");
    if (cl_save(false) != 0) {
        return -1;
    }
    if (cl_bus_listen() != 0) {
        return -1;
    }
    cl_update_state(cl.start_ms);
    return 0;
}

void cluster_shutdown(void)
{
    cl_lock();
    writer_close();
    if (cl.myself != NULL) {
        cl_save(false); /* no writer now: written before we go */
    }
    cl_bus_close();
    for (int i = 0; i < cl.nnodes; i++) {
        free(cl.nodes[i]->reports);
        free(cl.nodes[i]);
    }
    free(cl.nodes);
    free(cl.forgotten);
    memset(&cl, 0, sizeof(cl));
    if (lock_fd >= 0) {
        close(lock_fd);
        lock_fd = -1;
    }
    cl_unlock();
    slotkeys_clear();
}

/* ------------------------------------------------------------------------
 * Dispatch's check (Redis's getNodeByQuery)
 * ---------------------------------------------------------------------- */

enum { RD_NONE, RD_CROSSSLOT, RD_UNSTABLE, RD_DOWN, RD_DOWN_RO, RD_UNBOUND, RD_MOVED, RD_ASK };

typedef struct query {
    int slot;          /* -1: no key yet */
    bool multiple;     /* keys other than the first */
    bool migrating, importing;
    bool mine; /* the slot is this node's */
    int missing, existing;
    const char *first;
    uint32_t first_len;
} query;

/* Whether the keys of one command stay in one slot; the slot's state. */
static int query_keys(conn *c, query *q, const command *cmd, int argc, char **argv,
                      uint32_t *lens)
{
    int pos[64];
    int n = cmd_keys_of(cmd, argc, argv, lens, pos, 64);
    int *all = pos;
    if (n > 64) {
        all = xmalloc(sizeof(int) * (size_t)n);
        cmd_keys_of(cmd, argc, argv, lens, all, n);
    }
    int rc = RD_NONE;
    bool lookups = false;
    for (int k = 0; k < n; k++) {
        const char *key = argv[all[k]];
        uint32_t len = lens[all[k]];
        int slot = (int)cluster_keyslot(key, len);
        if (q->slot < 0) {
            q->slot = slot;
            q->first = key;
            q->first_len = len;
            uint8_t m = __atomic_load_n(&cl.mode[slot], __ATOMIC_ACQUIRE);
            if (!(m & CLM_ASSIGNED)) {
                rc = RD_UNBOUND;
                break;
            }
            q->mine = (m & CLM_MINE) != 0;
            if (q->mine && (m & CLM_MIGRATING)) {
                q->migrating = true;
            } else if (m & CLM_IMPORTING) {
                q->importing = true;
            }
        } else if (slot != q->slot) {
            rc = RD_CROSSSLOT;
            break;
        } else if (len != q->first_len || memcmp(key, q->first, len) != 0) {
            q->multiple = true;
        }
    }
    /* which keys this node has matters on a migrating slot (ASK for the
     * missing), and on an importing one only for several keys (TRYAGAIN):
     * a RESTORE-ASKING of one key reads nothing before it runs */
    lookups = q->migrating || (q->importing && q->multiple);
    if (rc == RD_NONE && lookups) {
        /* which keys this node has: read now, alone (a slot moving is rare) */
        loop *lp = c->lp;
        bool locked = excl_begin(lp);
        batcher *b = &lp->b;
        uint8_t saved_db = b->db;
        b->db = db_phys(0);
        for (int k = 0; k < n; k++) {
            batch_add_op(b, CUDIS_OP_EXISTS, CUDIS_F_NOSTATS, argv[all[k]], lens[all[k]], NULL, 0,
                         0, 0, false);
        }
        run_alone(c);
        for (int k = 0; k < n; k++) {
            if (b->res[k].flags & CUDIS_R_FOUND) {
                q->existing++;
            } else {
                q->missing++;
            }
        }
        batch_reset(b);
        b->db = saved_db;
        excl_end(lp, locked);
    }
    if (all != pos) {
        free(all);
    }
    return rc;
}

static bool is_write(const command *cmd)
{
    return (cmd->flags & CMD_WRITE) != 0;
}

bool cluster_check(conn *c, const command *cmd, int argc, char **argv, uint32_t *lens)
{
    query q = {.slot = -1};
    int rc = RD_NONE;
    bool any_write = false;
    if (cmd->fn == cmd_exec) {
        if (c->multi == NULL) {
            return true;
        }
        for (int i = 0; i < c->multi->n && rc == RD_NONE; i++) {
            multi_cmd *m = &c->multi->cmds[i];
            rc = query_keys(c, &q, m->cmd, m->argc, m->argv, m->lens);
            any_write = any_write || is_write(m->cmd);
        }
    } else {
        rc = query_keys(c, &q, cmd, argc, argv, lens);
        any_write = is_write(cmd);
    }
    cl_node *to = NULL;
    if (rc == RD_NONE && q.slot >= 0) {
        bool shard = cmd->fn == cmd_spublish || cmd->fn == cmd_ssubscribe ||
                     cmd->fn == cmd_sunsubscribe;
        if (!__atomic_load_n(&cl.ok, __ATOMIC_ACQUIRE)) {
            if (shard || !srv.cfg.cluster_allow_reads_when_down) {
                rc = RD_DOWN;
            } else if (any_write) {
                rc = RD_DOWN_RO;
            }
        }
        if (rc == RD_NONE && q.mine && !q.migrating && !q.importing) {
            return true; /* the common case: a slot of ours, stable */
        }
        if (rc == RD_NONE) {
            cl_lock();
            cl_node *owner = cl.slots[q.slot];
            if ((q.migrating || q.importing) && cmd->fn == cmd_migrate) {
                /* MIGRATE works on the local keys of a slot that moves */
            } else if (q.migrating && q.missing > 0) {
                if (q.existing > 0) {
                    rc = RD_UNSTABLE;
                } else {
                    rc = RD_ASK;
                    to = cl.migrating[q.slot];
                }
            } else if (q.importing && (c->asking || cmd->fn == cmd_restore_asking)) {
                if (q.multiple && q.missing > 0) {
                    rc = RD_UNSTABLE;
                }
            } else if (owner != cl.myself) {
                rc = RD_MOVED;
                to = owner;
            }
            char ip[CLUSTER_IPLEN] = "";
            int port = 0;
            if (to != NULL) {
                snprintf(ip, sizeof(ip), "%s", to->ip);
                port = client_port(c, to);
            } else if (rc == RD_MOVED || rc == RD_ASK) {
                rc = RD_UNBOUND;
            }
            cl_unlock();
            if (rc == RD_MOVED || rc == RD_ASK) {
                char msg[128];
                snprintf(msg, sizeof(msg), "%d %s:%d", q.slot, ip, port);
                dispatch_redirect(c, cmd, rc == RD_MOVED ? "MOVED" : "ASK", msg);
                return false;
            }
        }
    }
    switch (rc) {
    case RD_NONE:
        return true;
    case RD_CROSSSLOT:
        dispatch_redirect(c, cmd, "CROSSSLOT", "Keys in request don't hash to the same slot");
        break;
    case RD_UNSTABLE:
        dispatch_redirect(c, cmd, "TRYAGAIN", "Multiple keys request during rehashing of slot");
        break;
    case RD_DOWN:
        dispatch_redirect(c, cmd, "CLUSTERDOWN", "The cluster is down");
        break;
    case RD_DOWN_RO:
        dispatch_redirect(c, cmd, "CLUSTERDOWN",
                        "The cluster is down and only accepts read commands");
        break;
    default:
        dispatch_redirect(c, cmd, "CLUSTERDOWN", "Hash slot not served");
        break;
    }
    return false;
}

const char *cluster_script_check(const command *cmd, int argc, char **argv, uint32_t *lens,
                                 int *slot)
{
    int pos[64];
    int n = cmd_keys_of(cmd, argc, argv, lens, pos, 64);
    if (n == 0) {
        return NULL;
    }
    if (n > 64) {
        n = 64; /* the first 64 tell whether they leave one slot */
    }
    if (!__atomic_load_n(&cl.ok, __ATOMIC_ACQUIRE)) {
        if (!srv.cfg.cluster_allow_reads_when_down) {
            return "ERR Script attempted to execute a command while the cluster is down";
        }
        if (is_write(cmd)) {
            return "ERR Script attempted to execute a write command while the cluster is down "
                   "and readonly";
        }
    }
    int first = (int)cluster_keyslot(argv[pos[0]], lens[pos[0]]);
    for (int k = 0; k < n; k++) {
        int s = (int)cluster_keyslot(argv[pos[k]], lens[pos[k]]);
        if (s != first || __atomic_load_n(&cl.slots[s], __ATOMIC_ACQUIRE) != cl.myself) {
            return "ERR Script attempted to access a non local key in a cluster node";
        }
    }
    if (*slot == -1) {
        *slot = first;
    } else if (*slot >= 0 && *slot != first) {
        return "ERR Script attempted to access keys that do not hash to the same slot";
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * INFO
 * ---------------------------------------------------------------------- */

long cluster_links(void)
{
    if (!srv.cfg.cluster_enabled) {
        return 0;
    }
    cl_lock();
    long n = cl_bus_links();
    cl_unlock();
    return n;
}

static void info_text(sbuf *o)
{
    int assigned = 0, pfail = 0, fail = 0;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        cl_node *n = cl.slots[s];
        if (n == NULL) {
            continue;
        }
        assigned++;
        if (n->flags & CLN_FAIL) {
            fail++;
        } else if (n->flags & CLN_PFAIL) {
            pfail++;
        }
    }
    sbuf_printf(o,
                "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\n"
                "cluster_slots_pfail:%d\r\ncluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\n"
                "cluster_size:%d\r\ncluster_current_epoch:%" PRIu64 "\r\ncluster_my_epoch:%" PRIu64
                "\r\n",
                cl.ok ? "ok" : "fail", assigned, assigned - pfail - fail, pfail, fail, cl.nnodes,
                cl.size, cl.current_epoch, cl.myself->config_epoch);
    cl_bus_stats(o);
    sbuf_adds(o, "total_cluster_links_buffer_limit_exceeded:0\r\n");
}

void cluster_info(sbuf *o)
{
    sbuf_printf(o, "cluster_enabled:%d\r\n", srv.cfg.cluster_enabled ? 1 : 0);
    if (srv.cfg.cluster_enabled) { /* cudis's: key names GETKEYSINSLOT's index holds */
        sbuf_printf(o, "cluster_slot_index_keys:%llu\r\n",
                    (unsigned long long)slotkeys_names());
    }
}

/* ------------------------------------------------------------------------
 * Commands
 * ---------------------------------------------------------------------- */


static bool enabled(conn *c)
{
    if (!srv.cfg.cluster_enabled) {
        conn_error(c, "ERR This instance has cluster support disabled");
        return false;
    }
    return true;
}

/* A cluster command's handler: outside cluster mode it answers Redis's
 * "cluster support disabled" before its body runs. */
#define UNUSED_ARG __attribute__((unused))
#define CH(name)                                                                                   \
    static void name##_body(conn *c, int argc, char **argv, uint32_t *lens);                       \
    void name(conn *c, int argc, char **argv, uint32_t *lens)                                      \
    {                                                                                              \
        if (enabled(c)) {                                                                          \
            name##_body(c, argc, argv, lens);                                                      \
        }                                                                                          \
    }                                                                                              \
    static void name##_body(conn *c UNUSED_ARG, int argc UNUSED_ARG, char **argv UNUSED_ARG,       \
                            uint32_t *lens UNUSED_ARG)

static void reply_err_or_ok(conn *c, const char *err)
{
    if (err != NULL) {
        conn_error(c, err);
    } else {
        reply_ok(c);
    }
}

/* A slot argument: -1 with Redis's error replied. */
static int slot_arg(conn *c, const char *s, uint32_t len)
{
    long long v;
    if (!util_str2ll(s, len, &v) || v < 0 || v >= CLUSTER_SLOTS) {
        conn_error(c, "ERR Invalid or out of range slot");
        return -1;
    }
    return (int)v;
}

CH(cmd_asking)
{
    c->asking = true;
    c->asking_now = true;
    reply_ok(c);
}

CH(cmd_readonly)
{
    c->readonly = true;
    reply_ok(c);
}

CH(cmd_readwrite)
{
    c->readonly = false;
    reply_ok(c);
}

CH(cmd_cluster_info)
{
    sbuf o = {0};
    cl_lock();
    info_text(&o);
    cl_unlock();
    resp_verbatim(&c->out, o.p, o.len, c->proto);
    sbuf_free(&o);
}

CH(cmd_cluster_nodes)
{
    sbuf o = {0};
    cl_lock();
    nodes_text(&o, false, c);
    cl_unlock();
    resp_verbatim(&c->out, o.p, o.len, c->proto);
    sbuf_free(&o);
}

CH(cmd_cluster_myid)
{
    cl_lock();
    resp_bulk(&c->out, cl.myself->name, CLUSTER_NAMELEN);
    cl_unlock();
}

CH(cmd_cluster_myshardid)
{
    cl_lock();
    resp_bulk(&c->out, cl.myself->shard_id, CLUSTER_NAMELEN);
    cl_unlock();
}

/* A node in CLUSTER SLOTS: ip, port, id, its other endpoints (a map). */
static void slots_node(conn *c, const cl_node *n)
{
    resp_array(&c->out, 4);
    resp_bulks(&c->out, n->ip);
    resp_int(&c->out, client_port(c, n));
    resp_bulk(&c->out, n->name, CLUSTER_NAMELEN);
    if (n->hostname[0]) {
        resp_map(&c->out, 1, c->proto);
        resp_bulks(&c->out, "hostname");
        resp_bulks(&c->out, n->hostname);
    } else {
        resp_map(&c->out, 0, c->proto);
    }
}

CH(cmd_cluster_slots)
{
    cl_lock();
    sbuf body = {0};
    long ranges = 0;
    sbuf saved = c->out;
    c->out = body;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        cl_node *n = cl.slots[s];
        if (n == NULL) {
            continue;
        }
        int e = s;
        while (e + 1 < CLUSTER_SLOTS && cl.slots[e + 1] == n) {
            e++;
        }
        resp_array(&c->out, 3);
        resp_int(&c->out, s);
        resp_int(&c->out, e);
        slots_node(c, n);
        ranges++;
        s = e;
    }
    body = c->out;
    c->out = saved;
    cl_unlock();
    resp_array(&c->out, ranges);
    sbuf_add(&c->out, body.p, body.len);
    sbuf_free(&body);
}

CH(cmd_cluster_shards)
{
    cl_lock();
    int masters = 0;
    for (int i = 0; i < cl.nnodes; i++) {
        masters += (cl.nodes[i]->flags & CLN_MASTER) && !(cl.nodes[i]->flags & CLN_HANDSHAKE);
    }
    resp_array(&c->out, masters);
    for (int i = 0; i < cl.nnodes; i++) {
        cl_node *n = cl.nodes[i];
        if (!(n->flags & CLN_MASTER) || (n->flags & CLN_HANDSHAKE)) {
            continue;
        }
        resp_map(&c->out, 2, c->proto);
        resp_bulks(&c->out, "slots");
        long ranges = 0;
        for (int s = 0; s < CLUSTER_SLOTS; s++) {
            if (cl_slot_has(n, s)) {
                while (s + 1 < CLUSTER_SLOTS && cl_slot_has(n, s + 1)) {
                    s++;
                }
                ranges++;
            }
        }
        resp_array(&c->out, ranges * 2);
        for (int s = 0; s < CLUSTER_SLOTS; s++) {
            if (cl_slot_has(n, s)) {
                int e = s;
                while (e + 1 < CLUSTER_SLOTS && cl_slot_has(n, e + 1)) {
                    e++;
                }
                resp_int(&c->out, s);
                resp_int(&c->out, e);
                s = e;
            }
        }
        resp_bulks(&c->out, "nodes");
        resp_array(&c->out, 1);
        /* as Redis: with tls-cluster the plaintext port (if any) and the
         * TLS port, both */
        int plain = srv.cfg.tls_cluster ? n->pport : n->port;
        int tls = srv.cfg.tls_cluster ? n->port : 0;
        resp_map(&c->out, 6 + (n->hostname[0] != 0) + (plain != 0) + (tls != 0), c->proto);
        resp_bulks(&c->out, "id");
        resp_bulk(&c->out, n->name, CLUSTER_NAMELEN);
        if (plain != 0) {
            resp_bulks(&c->out, "port");
            resp_int(&c->out, plain);
        }
        if (tls != 0) {
            resp_bulks(&c->out, "tls-port");
            resp_int(&c->out, tls);
        }
        resp_bulks(&c->out, "ip");
        resp_bulks(&c->out, n->ip);
        resp_bulks(&c->out, "endpoint");
        resp_bulks(&c->out, n->ip);
        if (n->hostname[0]) {
            resp_bulks(&c->out, "hostname");
            resp_bulks(&c->out, n->hostname);
        }
        resp_bulks(&c->out, "role");
        resp_bulks(&c->out, "master");
        resp_bulks(&c->out, "replication-offset");
        resp_int(&c->out, 0);
        resp_bulks(&c->out, "health");
        resp_bulks(&c->out, (n->flags & CLN_FAIL) ? "fail" : "online");
    }
    cl_unlock();
}

CH(cmd_cluster_keyslot)
{
    resp_int(&c->out, cluster_keyslot(argv[2], lens[2]));
}

CH(cmd_cluster_countkeysinslot)
{
    long long slot;
    if (!util_str2ll(argv[2], lens[2], &slot)) {
        conn_error(c, "ERR value is not an integer or out of range");
        return;
    }
    if (slot < 0 || slot >= CLUSTER_SLOTS) {
        conn_error(c, "ERR Invalid slot");
        return;
    }
    resp_int(&c->out, slotkeys_get(c, (int)slot, -1, NULL));
}

CH(cmd_cluster_getkeysinslot)
{
    long long slot, max;
    if (!util_str2ll(argv[2], lens[2], &slot) || !util_str2ll(argv[3], lens[3], &max)) {
        conn_error(c, "ERR value is not an integer or out of range");
        return;
    }
    if (max < 0 || slot < 0 || slot >= CLUSTER_SLOTS) {
        conn_error(c, "ERR Invalid slot or number of keys");
        return;
    }
    sbuf keys = {0};
    long long n = slotkeys_get(c, (int)slot, max, &keys);
    resp_array(&c->out, n);
    sbuf_add(&c->out, keys.p, keys.len);
    sbuf_free(&keys);
}

/* Slots from argv[2..] (singles, or start end pairs): -1 with the error
 * replied; else the count, marks in want[]. */
static int slots_args(conn *c, int argc, char **argv, uint32_t *lens, bool ranges, uint8_t *want)
{
    if (ranges && argc % 2 == 1) {
        conn_errorf(c, "ERR wrong number of arguments for '%s' command",
                    cmd_fullname(c->cur_cmd));
        return -1;
    }
    for (int i = 2; i < argc; i += ranges ? 2 : 1) {
        int a = slot_arg(c, argv[i], lens[i]);
        if (a < 0) {
            return -1;
        }
        int b = a;
        if (ranges) {
            b = slot_arg(c, argv[i + 1], lens[i + 1]);
            if (b < 0) {
                return -1;
            }
            if (a > b) {
                conn_errorf(c, "ERR start slot number %d is greater than end slot number %d", a,
                            b);
                return -1;
            }
        }
        for (int s = a; s <= b; s++) {
            if (want[s]) {
                conn_errorf(c, "ERR Slot %d specified multiple times", s);
                return -1;
            }
            want[s] = 1;
        }
    }
    return 0;
}

static void add_del_slots(conn *c, int argc, char **argv, uint32_t *lens, bool ranges, bool add)
{
    uint8_t *want = xcalloc(CLUSTER_SLOTS, 1);
    if (slots_args(c, argc, argv, lens, ranges, want) < 0) {
        free(want);
        return;
    }
    cl_lock();
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!want[s]) {
            continue;
        }
        if (add && cl.slots[s] != NULL) {
            cl_unlock();
            conn_errorf(c, "ERR Slot %d is already busy", s);
            free(want);
            return;
        }
        if (!add && cl.slots[s] == NULL) {
            cl_unlock();
            conn_errorf(c, "ERR Slot %d is already unassigned", s);
            free(want);
            return;
        }
    }
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (want[s]) {
            if (add && cl.importing[s] != NULL) {
                cl_set_importing(s, NULL); /* Redis: an added slot is not importing any more */
            }
            cl_slot_set(s, add ? cl.myself : NULL);
        }
    }
    cl_update_state(cudis_now_ms());
    cl_save(false);
    cl_unlock();
    free(want);
    reply_ok(c);
}

CH(cmd_cluster_addslots)
{
    add_del_slots(c, argc, argv, lens, false, true);
}

CH(cmd_cluster_addslotsrange)
{
    add_del_slots(c, argc, argv, lens, true, true);
}

CH(cmd_cluster_delslots)
{
    add_del_slots(c, argc, argv, lens, false, false);
}

CH(cmd_cluster_delslotsrange)
{
    add_del_slots(c, argc, argv, lens, true, false);
}

CH(cmd_cluster_flushslots)
{
    if (engine_db_size(srv.eng, db_phys(0)) != 0) {
        conn_error(c, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
        return;
    }
    cl_lock();
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (cl.slots[s] == cl.myself) {
            cl_slot_set(s, NULL);
        }
    }
    cl_update_state(cudis_now_ms());
    cl_save(false);
    cl_unlock();
    reply_ok(c);
}

/* Redis's clusterBumpConfigEpochWithoutConsensus: a new epoch of our own
 * unless ours is already the highest and unique. */
static bool bump_epoch(void)
{
    uint64_t max = 0;
    for (int i = 0; i < cl.nnodes; i++) {
        if (cl.nodes[i]->config_epoch > max) {
            max = cl.nodes[i]->config_epoch;
        }
    }
    if (cl.myself->config_epoch == 0 || cl.myself->config_epoch != max) {
        cl.current_epoch++;
        cl.myself->config_epoch = cl.current_epoch;
        cl.dirty = true;
        log_msg(LL_NOTICE, "New configEpoch set to %" PRIu64, cl.myself->config_epoch);
        return true;
    }
    return false;
}

CH(cmd_cluster_setslot)
{
    int slot = slot_arg(c, argv[2], lens[2]);
    if (slot < 0) {
        return;
    }
    const char *act = argv[3];
    uint32_t alen = lens[3];
    cl_lock();
    cl_node *n = argc >= 5 ? node_by_arg(argv[4], lens[4]) : NULL;
    char err[256] = "";
    bool broadcast = false;
    if (util_eq(act, alen, "migrating") && argc == 5) {
        if (cl.slots[slot] != cl.myself) {
            snprintf(err, sizeof(err), "ERR I'm not the owner of hash slot %d", slot);
        } else if (n == NULL) {
            snprintf(err, sizeof(err), "ERR I don't know about node %.*s",
                     (int)(lens[4] < 64 ? lens[4] : 64), argv[4]);
        } else {
            cl_set_migrating(slot, n);
        }
    } else if (util_eq(act, alen, "importing") && argc == 5) {
        if (cl.slots[slot] == cl.myself) {
            snprintf(err, sizeof(err), "ERR I'm already the owner of hash slot %d", slot);
        } else if (n == NULL) {
            snprintf(err, sizeof(err), "ERR I don't know about node %.*s",
                     (int)(lens[4] < 64 ? lens[4] : 64), argv[4]);
        } else {
            cl_set_importing(slot, n);
        }
    } else if (util_eq(act, alen, "stable") && argc == 4) {
        cl_set_importing(slot, NULL);
        cl_set_migrating(slot, NULL);
    } else if (util_eq(act, alen, "node") && argc == 5) {
        if (n == NULL) {
            snprintf(err, sizeof(err), "ERR Unknown node %.*s",
                     (int)(lens[4] < 64 ? lens[4] : 64), argv[4]);
        } else if (n->flags & CLN_SLAVE) {
            snprintf(err, sizeof(err), "ERR Can't assign hashslot %d to a replica node.", slot);
        } else if (cl.slots[slot] == cl.myself && n != cl.myself && slotkeys_get(c, slot, 1, NULL) != 0) {
            snprintf(err, sizeof(err),
                     "ERR Can't assign hashslot %d to a different node while I still hold keys "
                     "for this hash slot.",
                     slot);
        } else {
            if (cl.migrating[slot] != NULL && n != cl.myself && slotkeys_get(c, slot, 1, NULL) == 0) {
                cl_set_migrating(slot, NULL);
            }
            if (n == cl.myself && cl.importing[slot] != NULL) {
                /* the import is done: claim the slot with an epoch of our own,
                 * which the others then take (no consensus: Redis's way) */
                if (bump_epoch()) {
                    log_msg(LL_NOTICE, "configEpoch updated after importing slot %d", slot);
                }
                cl_set_importing(slot, NULL);
                broadcast = true;
            }
            cl_slot_set(slot, n);
        }
    } else {
        snprintf(err, sizeof(err),
                 "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
    }
    if (err[0] == '\0') {
        cl.dirty = true;
        cl_update_state(cudis_now_ms());
        cl_save(false);
        if (broadcast) {
            cl_bus_broadcast_pong();
        }
    }
    cl_unlock();
    reply_err_or_ok(c, err[0] ? err : NULL);
}

CH(cmd_cluster_meet)
{
    if (argc > 5) {
        conn_errorf(c, "ERR wrong number of arguments for '%s' command",
                    cmd_fullname(c->cur_cmd));
        return;
    }
    long long port, cport;
    if (!util_str2ll(argv[3], lens[3], &port) || port <= 0 || port > 65535) {
        conn_errorf(c, "ERR Invalid TCP base port specified: %.*s", (int)(lens[3] < 64 ? lens[3] : 64),
                    argv[3]);
        return;
    }
    cport = port + 10000;
    if (argc == 5 &&
        (!util_str2ll(argv[4], lens[4], &cport) || cport <= 0 || cport > 65535)) {
        conn_errorf(c, "ERR Invalid TCP bus port specified: %.*s", (int)(lens[4] < 64 ? lens[4] : 64),
                    argv[4]);
        return;
    }
    char ip[CLUSTER_IPLEN];
    snprintf(ip, sizeof(ip), "%.*s", (int)(lens[2] < CLUSTER_IPLEN - 1 ? lens[2] : CLUSTER_IPLEN - 1),
             argv[2]);
    cl_lock();
    bool ok = lens[2] < CLUSTER_IPLEN && cl_start_handshake(ip, (int)port, (int)cport);
    cl_unlock();
    if (!ok) {
        conn_errorf(c, "ERR Invalid node address specified: %.*s:%.*s",
                    (int)(lens[2] < 64 ? lens[2] : 64), argv[2], (int)(lens[3] < 16 ? lens[3] : 16),
                    argv[3]);
        return;
    }
    reply_ok(c);
}

#define FORGET_TTL_MS 60000

CH(cmd_cluster_forget)
{
    cl_lock();
    cl_node *n = node_by_arg(argv[2], lens[2]);
    const char *err = NULL;
    if (n == NULL) {
        cl_unlock();
        conn_errorf(c, "ERR Unknown node %.*s", (int)(lens[2] < 64 ? lens[2] : 64), argv[2]);
        return;
    }
    if (n == cl.myself) {
        err = "ERR I tried hard but I can't forget myself...";
    } else {
        cl_forget_add(n->name, FORGET_TTL_MS);
        cl_node_del(n);
        cl_update_state(cudis_now_ms());
        cl_save(false);
    }
    cl_unlock();
    reply_err_or_ok(c, err);
}

CH(cmd_cluster_reset)
{
    bool hard = false;
    if (argc == 3) {
        if (util_eq(argv[2], lens[2], "hard")) {
            hard = true;
        } else if (!util_eq(argv[2], lens[2], "soft")) {
            conn_error(c, "ERR syntax error");
            return;
        }
    } else if (argc > 3) {
        conn_error(c, "ERR syntax error");
        return;
    }
    if (engine_db_size(srv.eng, db_phys(0)) != 0) {
        conn_error(c, "ERR CLUSTER RESET can't be called with master nodes containing keys");
        return;
    }
    cl_lock();
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        cl_set_migrating(s, NULL);
        cl_set_importing(s, NULL);
        cl_slot_set(s, NULL);
    }
    for (int i = cl.nnodes - 1; i >= 0; i--) {
        if (cl.nodes[i] != cl.myself) {
            cl_node_del(cl.nodes[i]);
        }
    }
    if (hard) {
        cl.current_epoch = 0;
        cl.last_vote_epoch = 0;
        cl.myself->config_epoch = 0;
        cl_random_name(cl.myself->name);
        log_msg(LL_NOTICE, "Node hard reset, now I'm %.40s", cl.myself->name);
    }
    cl_update_state(cudis_now_ms());
    cl_save(false);
    cl_unlock();
    reply_ok(c);
}

CH(cmd_cluster_saveconfig)
{
    cl_lock();
    int rc = cl_save(true);
    int e = errno;
    cl_unlock();
    if (rc != 0) {
        conn_errorf(c, "ERR error saving the cluster node config: %s", strerror(e));
        return;
    }
    reply_ok(c);
}

CH(cmd_cluster_set_config_epoch)
{
    long long epoch;
    if (!util_str2ll(argv[2], lens[2], &epoch)) {
        conn_error(c, "ERR value is not an integer or out of range");
        return;
    }
    if (epoch < 0) {
        conn_errorf(c, "ERR Invalid config epoch specified: %lld", epoch);
        return;
    }
    cl_lock();
    const char *err = NULL;
    if (cl.nnodes > 1) {
        err = "ERR The user can assign a config epoch only when the node does not know any other "
              "node.";
    } else if (cl.myself->config_epoch != 0) {
        err = "ERR Node config epoch is already non-zero";
    } else {
        cl.myself->config_epoch = (uint64_t)epoch;
        if (cl.current_epoch < (uint64_t)epoch) {
            cl.current_epoch = (uint64_t)epoch;
        }
        cl_save(false);
    }
    cl_unlock();
    reply_err_or_ok(c, err);
}

CH(cmd_cluster_bumpepoch)
{
    cl_lock();
    bool bumped = bump_epoch();
    uint64_t e = cl.myself->config_epoch;
    if (bumped) {
        cl_save(false);
    }
    cl_unlock();
    char msg[64];
    snprintf(msg, sizeof(msg), "%s %" PRIu64, bumped ? "BUMPED" : "STILL", e);
    resp_status(&c->out, msg);
}

CH(cmd_cluster_count_failure_reports)
{
    cl_lock();
    cl_node *n = node_by_arg(argv[2], lens[2]);
    long long cnt = n ? n->nreports : -1;
    cl_unlock();
    if (cnt < 0) {
        conn_errorf(c, "ERR Unknown node %.*s", (int)(lens[2] < 64 ? lens[2] : 64), argv[2]);
        return;
    }
    resp_int(&c->out, cnt);
}

CH(cmd_cluster_replicas)
{
    cl_lock();
    cl_node *n = node_by_arg(argv[2], lens[2]);
    bool slave = n && (n->flags & CLN_SLAVE);
    cl_unlock();
    if (n == NULL) {
        conn_errorf(c, "ERR Unknown node %.*s", (int)(lens[2] < 64 ? lens[2] : 64), argv[2]);
    } else if (slave) {
        conn_error(c, "ERR The specified node is not a master");
    } else {
        resp_array(&c->out, 0); /* cudis has no replicas */
    }
}

CH(cmd_cluster_replicate)
{
    conn_error(c, "ERR cudis does not support replicas: every node is a master (a cache "
                  "refills; see the README's cluster section)");
}

CH(cmd_cluster_links)
{
    cl_lock();
    long n = cl_bus_links();
    resp_array(&c->out, n);
    for (int i = 0; i < cl.nnodes; i++) {
        cl_node *nd = cl.nodes[i];
        for (int dir = 0; dir < 2; dir++) {
            if ((dir == 0 ? nd->link : nd->inlink) == NULL) {
                continue;
            }
            resp_map(&c->out, 6, c->proto);
            resp_bulks(&c->out, "direction");
            resp_bulks(&c->out, dir == 0 ? "to" : "from");
            resp_bulks(&c->out, "node");
            resp_bulk(&c->out, nd->name, CLUSTER_NAMELEN);
            resp_bulks(&c->out, "create-time");
            resp_int(&c->out, nd->ctime);
            resp_bulks(&c->out, "events");
            resp_bulks(&c->out, "r");
            resp_bulks(&c->out, "send-buffer-allocated");
            resp_int(&c->out, 0);
            resp_bulks(&c->out, "send-buffer-used");
            resp_int(&c->out, 0);
        }
    }
    cl_unlock();
}

CH(cmd_cluster_help)
{
    static const char *const lines[] = {
        "ADDSLOTS <slot> [<slot> ...]",
        "    Assign slots to current node.",
        "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Assign slots which are between <start-slot> and <end-slot> to current node.",
        "BUMPEPOCH",
        "    Advance the cluster config epoch.",
        "COUNT-FAILURE-REPORTS <node-id>",
        "    Return number of failure reports for <node-id>.",
        "COUNTKEYSINSLOT <slot>",
        "    Return the number of keys in <slot>.",
        "DELSLOTS <slot> [<slot> ...]",
        "    Delete slots information from current node.",
        "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Delete slots information which are between <start-slot> and <end-slot>.",
        "FLUSHSLOTS",
        "    Delete current node own slots information.",
        "FORGET <node-id>",
        "    Remove a node from the cluster.",
        "GETKEYSINSLOT <slot> <count>",
        "    Return key names stored by current node in a slot.",
        "INFO",
        "    Return information about the cluster.",
        "KEYSLOT <key>",
        "    Return the hash slot for <key>.",
        "LINKS",
        "    Return information about all network links between this node and its peers.",
        "MEET <ip> <port> [<bus-port>]",
        "    Connect nodes into a working cluster.",
        "MYID",
        "    Return the node id.",
        "MYSHARDID",
        "    Return the node's shard id.",
        "NODES",
        "    Return cluster configuration seen by node. Output format:",
        "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> <link> "
        "<slot> ...",
        "REPLICAS <node-id>",
        "    Return <node-id> replicas (cudis has none).",
        "RESET [HARD|SOFT]",
        "    Reset current node (default: soft).",
        "SET-CONFIG-EPOCH <epoch>",
        "    Set config epoch of current node.",
        "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
        "    Set slot state.",
        "SAVECONFIG",
        "    Force saving cluster configuration on disk.",
        "SHARDS",
        "    Return information about slot range mappings and the nodes associated with them.",
        "SLOTS",
        "    Return information about slots range mappings. Each range is made of:",
        "    start, end, master and replicas IP addresses, ports and ids",
        NULL};
    help_reply(c, "CLUSTER", lines);
}
