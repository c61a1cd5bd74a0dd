/*
 * cluster_bus.c - the cluster bus: Redis Cluster's own binary protocol on
 * cluster-port (port + 10000 by default), so cudis nodes learn each other,
 * agree on who serves which slot and detect failures as Redis nodes do,
 * and speak the format a Redis 7 node reads.
 *
 * Wire format (Redis 7's clusterMsg; every integer big-endian): a 2,256
 * byte header - "RCmb", total length, version 1, the sender's client port,
 * message type, count, currentEpoch, configEpoch, replication offset, the
 * sender's name, its 16,384-bit slot bitmap, its master's name (zeros),
 * its announced ip, extension count, 30 reserved bytes, plaintext port,
 * bus port, node flags, cluster state, message flags - then the body:
 * PING, PONG and MEET carry `count` 104-byte gossip entries about other
 * nodes (name, ping sent and pong received in seconds, ip, port, bus
 * port, flags); FAIL names the failed node; UPDATE carries a node's config
 * epoch, name and slot bitmap. Extensions (hostname, forgotten node, shard
 * id) are read when the sender flags them; cudis sends its hostname
 * (cluster-announce-hostname) as Redis 7.0 does, when it has one.
 *
 * The algorithm is Redis's: MEET starts a handshake (the met node learns
 * us, the PONG tells our name for it); every 100 ms the cron pings nodes
 * that have not answered for node-timeout/2 and, every second, the one of
 * five random nodes heard from least recently; a node silent for more
 * than node-timeout is PFAIL, and FAIL once a majority of the masters
 * report it so (gossip carries the reports; FAIL is broadcast). Slot
 * owners follow the highest configEpoch (a node claiming slots with an
 * older epoch is told with UPDATE); equal epochs of two masters are made
 * distinct by the node with the greater name.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster.h"
#include "cudis_time.h"
#include "server_internal.h"

enum {
    MSG_PING = 0,
    MSG_PONG = 1,
    MSG_MEET = 2,
    MSG_FAIL = 3,
    MSG_PUBLISH = 4,
    MSG_UPDATE = 7,
    MSG_TYPES = 11
};

#define HDR_LEN 2256
#define GOSSIP_LEN 104
#define MSG_MAX (64u << 20) /* a longer message is a broken peer */
#define FLAG0_EXT_DATA 4
#define REPORT_VALIDITY_MULT 2
#define FAIL_UNDO_MULT 2
#define FORGET_TTL_MAX_S 3600 /* Redis sends the 60 s of CLUSTER FORGET's blacklist, less elapsed */

/* header offsets */
enum {
    O_SIG = 0,
    O_TOTLEN = 4,
    O_VER = 8,
    O_PORT = 10,
    O_TYPE = 12,
    O_COUNT = 14,
    O_CUREPOCH = 16,
    O_CFGEPOCH = 24,
    O_OFFSET = 32,
    O_SENDER = 40,
    O_SLOTS = 80,
    O_SLAVEOF = 2128,
    O_MYIP = 2168,
    O_EXTS = 2214,
    O_PPORT = 2246,
    O_CPORT = 2248,
    O_FLAGS = 2250,
    O_STATE = 2252,
    O_MFLAGS = 2253
};

struct cl_link {
    struct bufferevent *bev;
    cl_node *node; /* NULL: an inbound link whose sender is not known */
    bool inbound;
    bool busy, dead; /* its read callback runs; freed when it returns */
    int64_t ctime;
    cl_link *next; /* every link (the bus owns them) */
};

static cl_link *links;
static struct evconnlistener *bus_listeners[16];
static int nbus_listeners;
static struct event *cron_ev;
static uint64_t cron_iter;

/* ------------------------------------------------------------------------
 * Bytes
 * ---------------------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)get16(p) << 16) | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
    return ((uint64_t)get32(p) << 32) | get32(p + 4);
}

/* ------------------------------------------------------------------------
 * Links
 * ---------------------------------------------------------------------- */

static void link_unhook(cl_link *l)
{
    for (cl_link **pp = &links; *pp; pp = &(*pp)->next) {
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    }
    if (l->node != NULL) {
        if (l->node->link == l) {
            l->node->link = NULL;
        }
        if (l->node->inlink == l) {
            l->node->inlink = NULL;
        }
        l->node = NULL;
    }
}

void cl_bus_link_free(cl_link *l)
{
    link_unhook(l);
    if (l->busy) {
        l->dead = true; /* its read callback frees it */
        return;
    }
    if (l->bev != NULL) {
        bufferevent_free(l->bev);
    }
    free(l);
}

long cl_bus_links(void)
{
    long n = 0;
    for (int i = 0; i < cl.nnodes; i++) {
        n += (cl.nodes[i]->link != NULL) + (cl.nodes[i]->inlink != NULL);
    }
    return n;
}

static void link_send(cl_link *l, const uint8_t *m, size_t len)
{
    if (l == NULL || l->dead || l->bev == NULL) {
        return;
    }
    bufferevent_write(l->bev, m, len);
    uint16_t type = get16(m + O_TYPE);
    if (type < MSG_TYPES) {
        cl.sent[type]++;
    }
}

/* ------------------------------------------------------------------------
 * Messages out
 * ---------------------------------------------------------------------- */

static void build_hdr(uint8_t *m, int type, uint32_t totlen)
{
    cl_node *me = cl.myself;
    memset(m, 0, HDR_LEN);
    memcpy(m + O_SIG, "RCmb", 4);
    put32(m + O_TOTLEN, totlen);
    put16(m + O_VER, 1);
    put16(m + O_PORT, (uint16_t)me->port);
    put16(m + O_TYPE, (uint16_t)type);
    put64(m + O_CUREPOCH, cl.current_epoch);
    put64(m + O_CFGEPOCH, me->config_epoch);
    memcpy(m + O_SENDER, me->name, CLUSTER_NAMELEN);
    memcpy(m + O_SLOTS, me->slots, sizeof(me->slots));
    if (srv.cfg.cluster_announce_ip && srv.cfg.cluster_announce_ip[0]) {
        snprintf((char *)m + O_MYIP, CLUSTER_IPLEN, "%s", srv.cfg.cluster_announce_ip);
    }
    put16(m + O_PPORT, (uint16_t)me->pport);
    put16(m + O_CPORT, (uint16_t)me->cport);
    put16(m + O_FLAGS, me->flags);
    m[O_STATE] = cl.ok ? 0 : 1;
}

static void put_gossip(uint8_t *g, const cl_node *n)
{
    memset(g, 0, GOSSIP_LEN);
    memcpy(g, n->name, CLUSTER_NAMELEN);
    put32(g + 40, (uint32_t)(n->ping_sent / 1000));
    put32(g + 44, (uint32_t)(n->pong_received / 1000));
    memcpy(g + 48, n->ip, strnlen(n->ip, CLUSTER_IPLEN - 1));
    put16(g + 94, (uint16_t)n->port);
    put16(g + 96, (uint16_t)n->cport);
    put16(g + 98, n->flags);
    put16(g + 100, (uint16_t)n->pport);
}

/* PING, PONG or MEET with gossip about a few random nodes and every node
 * we see failing (Redis's clusterSendPing). */
static void send_ping(cl_link *l, int type)
{
    int fresh = cl.nnodes - 2;
    int wanted = cl.nnodes / 10;
    if (wanted < 3) {
        wanted = 3;
    }
    if (wanted > fresh) {
        wanted = fresh;
    }
    int pfail = 0;
    for (int i = 0; i < cl.nnodes; i++) {
        pfail += (cl.nodes[i]->flags & CLN_PFAIL) != 0;
    }
    int cap = (wanted > 0 ? wanted : 0) + pfail;
    /* our hostname, as Redis 7 sends it: an extension after the gossip
     * (length, type 0, NUL-terminated name padded to 8 bytes) */
    size_t hlen = strlen(cl.myself->hostname);
    size_t ext = hlen > 0 ? 8 + ((hlen + 1 + 7) & ~(size_t)7) : 0;
    uint8_t *m = xcalloc(1, HDR_LEN + (size_t)cap * GOSSIP_LEN + ext);
    cl_node **picked = xcalloc((size_t)cap + 1, sizeof(*picked));
    int count = 0;
    for (int tries = 0; count < wanted && tries < wanted * 3 && cl.nnodes > 0; tries++) {
        cl_node *n = cl.nodes[coll_rand64() % (uint64_t)cl.nnodes];
        if (n == cl.myself || (n->flags & (CLN_PFAIL | CLN_HANDSHAKE | CLN_NOADDR)) ||
            (n->link == NULL && n->nslots == 0)) {
            continue;
        }
        bool dup = false;
        for (int k = 0; k < count; k++) {
            dup = dup || picked[k] == n;
        }
        if (dup) {
            continue;
        }
        picked[count] = n;
        put_gossip(m + HDR_LEN + (size_t)count * GOSSIP_LEN, n);
        count++;
    }
    for (int i = 0; i < cl.nnodes && count < cap; i++) {
        cl_node *n = cl.nodes[i];
        if ((n->flags & CLN_PFAIL) && !(n->flags & (CLN_HANDSHAKE | CLN_NOADDR))) {
            put_gossip(m + HDR_LEN + (size_t)count * GOSSIP_LEN, n);
            count++;
        }
    }
    uint32_t len = HDR_LEN + (uint32_t)count * GOSSIP_LEN;
    if (ext > 0) {
        uint8_t *e = m + len;
        put32(e, (uint32_t)ext);
        put16(e + 4, 0); /* CLUSTERMSG_EXT_TYPE_HOSTNAME */
        memcpy(e + 8, cl.myself->hostname, hlen);
        len += (uint32_t)ext;
    }
    build_hdr(m, type, len);
    put16(m + O_COUNT, (uint16_t)count);
    if (ext > 0) {
        put16(m + O_EXTS, 1);
        m[O_MFLAGS] |= FLAG0_EXT_DATA;
    }
    if (type == MSG_PING && l->node != NULL && l->node->ping_sent == 0) {
        l->node->ping_sent = cudis_now_ms();
    }
    link_send(l, m, len);
    free(picked);
    free(m);
}

void cl_bus_broadcast_pong(void)
{
    for (int i = 0; i < cl.nnodes; i++) {
        cl_node *n = cl.nodes[i];
        if (n->link != NULL && n != cl.myself && !(n->flags & CLN_HANDSHAKE)) {
            send_ping(n->link, MSG_PONG);
        }
    }
}

static void broadcast_fail(const cl_node *failed)
{
    uint8_t m[HDR_LEN + CLUSTER_NAMELEN];
    build_hdr(m, MSG_FAIL, sizeof(m));
    memcpy(m + HDR_LEN, failed->name, CLUSTER_NAMELEN);
    for (int i = 0; i < cl.nnodes; i++) {
        cl_node *n = cl.nodes[i];
        if (n->link != NULL && !(n->flags & CLN_HANDSHAKE)) {
            link_send(n->link, m, sizeof(m));
        }
    }
}

static void send_update(cl_link *l, const cl_node *about)
{
    if (l == NULL) {
        return;
    }
    uint8_t *m = xcalloc(1, HDR_LEN + 8 + CLUSTER_NAMELEN + CLUSTER_SLOTS / 8);
    uint32_t len = HDR_LEN + 8 + CLUSTER_NAMELEN + CLUSTER_SLOTS / 8;
    build_hdr(m, MSG_UPDATE, len);
    put64(m + HDR_LEN, about->config_epoch);
    memcpy(m + HDR_LEN + 8, about->name, CLUSTER_NAMELEN);
    memcpy(m + HDR_LEN + 8 + CLUSTER_NAMELEN, about->slots, CLUSTER_SLOTS / 8);
    link_send(l, m, len);
    free(m);
}

/* ------------------------------------------------------------------------
 * Failure detection
 * ---------------------------------------------------------------------- */

static int valid_reports(cl_node *n, int64_t now)
{
    int64_t max_age = srv.cfg.cluster_node_timeout * REPORT_VALIDITY_MULT;
    int cnt = 0;
    for (int i = 0; i < n->nreports; i++) {
        if (now - n->reports[i].when > max_age) {
            n->reports[i--] = n->reports[--n->nreports];
        } else if (n->reports[i].from->flags & CLN_MASTER) {
            cnt++;
        }
    }
    return cnt;
}

static void report_add(cl_node *n, cl_node *from, int64_t now)
{
    for (int i = 0; i < n->nreports; i++) {
        if (n->reports[i].from == from) {
            n->reports[i].when = now;
            return;
        }
    }
    n->reports = xrealloc(n->reports, sizeof(*n->reports) * (size_t)(n->nreports + 1));
    n->reports[n->nreports].from = from;
    n->reports[n->nreports++].when = now;
}

static void report_del(cl_node *n, cl_node *from)
{
    for (int i = 0; i < n->nreports; i++) {
        if (n->reports[i].from == from) {
            n->reports[i] = n->reports[--n->nreports];
            return;
        }
    }
}

static void mark_failing_if_needed(cl_node *n, int64_t now)
{
    if (!(n->flags & CLN_PFAIL) || (n->flags & CLN_FAIL)) {
        return;
    }
    int failures = valid_reports(n, now) + ((cl.myself->flags & CLN_MASTER) ? 1 : 0);
    if (failures < cl.size / 2 + 1) {
        return;
    }
    log_msg(LL_NOTICE, "Marking node %.40s as failing (quorum reached).", n->name);
    n->flags = (uint16_t)((n->flags & ~CLN_PFAIL) | CLN_FAIL);
    n->fail_time = now;
    broadcast_fail(n);
    cl.dirty = true;
    cl_update_state(now);
}

static void clear_failure_if_needed(cl_node *n, int64_t now)
{
    if (!(n->flags & CLN_FAIL)) {
        return;
    }
    if (n->nslots == 0 ||
        now - n->fail_time > srv.cfg.cluster_node_timeout * FAIL_UNDO_MULT) {
        log_msg(LL_NOTICE, "Clear FAIL state for node %.40s: it is reachable again.", n->name);
        n->flags &= (uint16_t)~CLN_FAIL;
        cl.dirty = true;
    }
}

/* ------------------------------------------------------------------------
 * Messages in
 * ---------------------------------------------------------------------- */

/* Redis's clusterUpdateSlotsConfigWith: the sender's claims win over
 * owners with an older config epoch (and over no owner). */
static void update_slots(cl_node *sender, uint64_t epoch, const uint8_t *slots)
{
    if (sender == cl.myself) {
        return;
    }
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!((slots[s >> 3] >> (s & 7)) & 1) || cl.slots[s] == sender ||
            cl.importing[s] != NULL) {
            continue;
        }
        if (cl.slots[s] == NULL || cl.slots[s]->config_epoch < epoch) {
            if (cl.slots[s] == cl.myself) {
                log_msg(LL_NOTICE, "Slot %d is now served by %.40s (config epoch %" PRIu64 ")", s,
                        sender->name, epoch);
                cl_set_migrating(s, NULL);
                if (slotkeys_any(s)) { /* its keys here go (the cron): Redis's dirty slots */
                    cl.lost[s >> 3] |= (uint8_t)(1u << (s & 7));
                    cl.any_lost = true;
                }
            }
            cl_slot_set(s, sender);
        }
    }
}

static void gossip_in(cl_node *sender, const uint8_t *g, int count, int64_t now)
{
    for (int i = 0; i < count; i++, g += GOSSIP_LEN) {
        const char *name = (const char *)g;
        uint16_t flags = get16(g + 98);
        cl_node *n = cl_node_find(name);
        if (n != NULL) {
            if (sender != NULL && (sender->flags & CLN_MASTER) && n != cl.myself) {
                if (flags & (CLN_FAIL | CLN_PFAIL)) {
                    report_add(n, sender, now);
                    mark_failing_if_needed(n, now);
                } else {
                    report_del(n, sender);
                }
            }
            if (n != cl.myself && !(flags & (CLN_FAIL | CLN_PFAIL)) && n->ping_sent == 0 &&
                n->nreports == 0) {
                int64_t pong = (int64_t)get32(g + 44) * 1000;
                if (pong <= now + 500 && pong > n->pong_received) {
                    n->pong_received = pong;
                }
            }
            continue;
        }
        if (sender == NULL || (flags & CLN_NOADDR) || !cl_valid_name(name, CLUSTER_NAMELEN) ||
            cl_forgotten(name)) {
            continue;
        }
        n = cl_node_new(name, (uint16_t)(flags & (CLN_MASTER | CLN_SLAVE | CLN_NOFAILOVER)));
        memcpy(n->ip, g + 48, CLUSTER_IPLEN - 1);
        n->port = get16(g + 94);
        n->cport = get16(g + 96);
        n->pport = get16(g + 100);
        cl_node_add(n);
    }
}

/* Extensions after the gossip: their total length, -1 if malformed. */
static long exts_len(const uint8_t *p, size_t room, int n, cl_node *sender, bool *got_host)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (room - at < 8) {
            return -1;
        }
        uint32_t len = get32(p + at);
        uint16_t type = get16(p + at + 4);
        if (len < 8 || len > room - at) {
            return -1;
        }
        if (sender != NULL && type == 0) { /* hostname */
            snprintf(sender->hostname, sizeof(sender->hostname), "%.*s", (int)(len - 8),
                     (const char *)p + at + 8);
            *got_host = true;
        } else if (sender != NULL && type == 1 && len >= 8 + CLUSTER_NAMELEN + 8) {
            cl_node *gone = cl_node_find((const char *)p + at + 8);
            if (gone != NULL && gone != cl.myself && gone != sender) {
                uint64_t ttl = get64(p + at + 8 + CLUSTER_NAMELEN); /* seconds */
                if (ttl > FORGET_TTL_MAX_S) {
                    ttl = FORGET_TTL_MAX_S; /* a peer's number, bounded before it is scaled */
                }
                cl_forget_add(gone->name, (int64_t)ttl * 1000);
                cl_node_del(gone);
            }
        }
        at += len;
    }
    return (long)at;
}

static void peer_ip(cl_link *l, char *ip, bool local)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    ip[0] = '\0';
    if (l->bev == NULL) {
        return;
    }
    int fd = (int)bufferevent_getfd(l->bev);
    if ((local ? getsockname(fd, (struct sockaddr *)&ss, &sl) : getpeername(fd, (struct sockaddr *)&ss, &sl)) != 0) {
        return;
    }
    if (ss.ss_family == AF_INET) {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, CLUSTER_IPLEN);
    } else if (ss.ss_family == AF_INET6) {
        struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            inet_ntop(AF_INET, &a->s6_addr[12], ip, CLUSTER_IPLEN);
        } else {
            inet_ntop(AF_INET6, a, ip, CLUSTER_IPLEN);
        }
    }
}

/* One message; false when the link must go. */
static bool process(cl_link *l, const uint8_t *m, uint32_t totlen)
{
    int64_t now = cudis_now_ms();
    uint16_t type = get16(m + O_TYPE);
    uint16_t count = get16(m + O_COUNT);
    if (totlen < HDR_LEN || get16(m + O_VER) != 1) {
        return false;
    }
    size_t explen = HDR_LEN;
    if (type == MSG_PING || type == MSG_PONG || type == MSG_MEET) {
        explen += (size_t)count * GOSSIP_LEN;
    } else if (type == MSG_FAIL) {
        explen += CLUSTER_NAMELEN;
    } else if (type == MSG_UPDATE) {
        explen += 8 + CLUSTER_NAMELEN + CLUSTER_SLOTS / 8;
    } else {
        explen = totlen; /* a type cudis does not use: skipped whole */
    }
    if (explen > totlen) {
        return false;
    }
    if (type < MSG_TYPES) {
        cl.received[type]++;
    }
    const char *sname = (const char *)m + O_SENDER;
    cl_node *sender = cl_node_find(sname);
    if (sender != NULL && (sender->flags & CLN_HANDSHAKE)) {
        sender = NULL;
    }
    bool got_host = false;
    if ((type == MSG_PING || type == MSG_PONG || type == MSG_MEET) &&
        (m[O_MFLAGS] & FLAG0_EXT_DATA)) {
        long x = exts_len(m + explen, totlen - explen, get16(m + O_EXTS), sender, &got_host);
        if (x < 0) {
            return false;
        }
        explen += (size_t)x;
    }
    if (sender != NULL && !got_host && sender->hostname[0] &&
        (type == MSG_PING || type == MSG_PONG || type == MSG_MEET)) {
        sender->hostname[0] = '\0'; /* it announces none (any more), as Redis reads it */
        cl.dirty = true;
    }
    if (explen != totlen) {
        return false;
    }
    uint64_t cur_epoch = get64(m + O_CUREPOCH), cfg_epoch = get64(m + O_CFGEPOCH);
    uint16_t sflags = get16(m + O_FLAGS);
    if (sender != NULL) {
        sender->data_received = now;
        if (cur_epoch > cl.current_epoch) {
            cl.current_epoch = cur_epoch;
            cl.dirty = true;
        }
        if (cfg_epoch > sender->config_epoch) {
            sender->config_epoch = cfg_epoch;
            cl.dirty = true;
        }
        if (l->inbound && sender->inlink != l) {
            if (sender->inlink != NULL) {
                cl_bus_link_free(sender->inlink); /* it reconnected */
            }
            if (l->node != NULL && l->node->inlink == l) {
                l->node->inlink = NULL; /* the link spoke for another node before */
            }
            sender->inlink = l;
            l->node = sender;
        }
    }
    if (type == MSG_PING || type == MSG_MEET) {
        if ((type == MSG_MEET || cl.myself->ip[0] == '\0') &&
            !(srv.cfg.cluster_announce_ip && srv.cfg.cluster_announce_ip[0])) {
            char ip[CLUSTER_IPLEN];
            peer_ip(l, ip, true);
            if (ip[0] && strcmp(ip, cl.myself->ip) != 0) {
                snprintf(cl.myself->ip, sizeof(cl.myself->ip), "%s", ip);
                log_msg(LL_NOTICE, "IP address for this node updated to %s", ip);
                cl.dirty = true;
            }
        }
        if (sender == NULL && type == MSG_MEET) {
            cl_node *n = cl_node_new(NULL, CLN_HANDSHAKE);
            if (m[O_MYIP] != '\0') {
                memcpy(n->ip, m + O_MYIP, CLUSTER_IPLEN - 1);
            } else {
                peer_ip(l, n->ip, false);
            }
            n->port = get16(m + O_PORT);
            n->cport = get16(m + O_CPORT);
            n->pport = get16(m + O_PPORT);
            cl_node_add(n);
        }
        send_ping(l, MSG_PONG);
    }
    if (type == MSG_PING || type == MSG_PONG || type == MSG_MEET) {
        if (!l->inbound && l->node != NULL) {
            cl_node *ln = l->node;
            if (ln->flags & CLN_HANDSHAKE) {
                if (sender != NULL) { /* we knew it by its name already */
                    cl_node_del(ln);
                    return false;
                }
                cl_node *other = cl_node_find(sname);
                if (other != NULL && other != ln) {
                    cl_node_del(other); /* a handshake of its own under that name */
                }
                cl_node_rename(ln, sname);
                ln->flags = (uint16_t)((ln->flags & ~CLN_HANDSHAKE) |
                                       (sflags & (CLN_MASTER | CLN_SLAVE)));
                log_msg(LL_VERBOSE, "Handshake with node %.40s completed.", ln->name);
                sender = ln;
                sender->data_received = now;
                if (cfg_epoch > sender->config_epoch) {
                    sender->config_epoch = cfg_epoch;
                }
            } else if (memcmp(ln->name, sname, CLUSTER_NAMELEN) != 0) {
                log_msg(LL_VERBOSE, "PONG from the address of %.40s by another node %.40s",
                        ln->name, sname);
                ln->flags |= CLN_NOADDR;
                ln->ip[0] = '\0';
                ln->port = ln->cport = 0;
                cl.dirty = true;
                return false;
            }
        }
        if (!l->inbound && type == MSG_PONG && l->node != NULL) {
            cl_node *ln = l->node;
            ln->pong_received = now;
            ln->ping_sent = 0;
            if (ln->flags & CLN_PFAIL) {
                ln->flags &= (uint16_t)~CLN_PFAIL;
                cl.dirty = true;
            } else if (ln->flags & CLN_FAIL) {
                clear_failure_if_needed(ln, now);
            }
        }
        if (sender != NULL) {
            if (sender->port != get16(m + O_PORT) || sender->cport != get16(m + O_CPORT) ||
                sender->pport != get16(m + O_PPORT)) {
                sender->port = get16(m + O_PORT);
                sender->cport = get16(m + O_CPORT);
                sender->pport = get16(m + O_PPORT);
                cl.dirty = true;
            }
            const uint8_t *claimed = m + O_SLOTS;
            if ((sflags & CLN_MASTER) &&
                memcmp(sender->slots, claimed, sizeof(sender->slots)) != 0) {
                update_slots(sender, cfg_epoch, claimed);
            }
            /* a claim older than what we know: tell the sender */
            for (int s = 0; s < CLUSTER_SLOTS; s++) {
                if (!((claimed[s >> 3] >> (s & 7)) & 1)) {
                    continue;
                }
                cl_node *owner = cl.slots[s];
                if (owner == sender || owner == NULL) {
                    continue;
                }
                if (owner->config_epoch > cfg_epoch) {
                    send_update(sender->link, owner);
                    break;
                }
            }
            if ((sflags & CLN_MASTER) && (cl.myself->flags & CLN_MASTER) &&
                sender->config_epoch == cl.myself->config_epoch &&
                memcmp(sender->name, cl.myself->name, CLUSTER_NAMELEN) < 0) {
                cl.current_epoch++;
                cl.myself->config_epoch = cl.current_epoch;
                cl.dirty = true;
                log_msg(LL_VERBOSE,
                        "WARNING: configEpoch collision with node %.40s. configEpoch set to "
                        "%" PRIu64,
                        sender->name, cl.myself->config_epoch);
            }
            gossip_in(sender, m + HDR_LEN, count, now);
        }
    } else if (type == MSG_FAIL && sender != NULL) {
        cl_node *f = cl_node_find((const char *)m + HDR_LEN);
        if (f != NULL && !(f->flags & (CLN_FAIL | CLN_MYSELF))) {
            log_msg(LL_NOTICE, "FAIL message received from %.40s about %.40s", sender->name,
                    f->name);
            f->flags = (uint16_t)((f->flags & ~CLN_PFAIL) | CLN_FAIL);
            f->fail_time = now;
            cl.dirty = true;
        }
    } else if (type == MSG_UPDATE && sender != NULL) {
        uint64_t epoch = get64(m + HDR_LEN);
        cl_node *n = cl_node_find((const char *)m + HDR_LEN + 8);
        if (n != NULL && n->config_epoch < epoch) {
            n->config_epoch = epoch;
            update_slots(n, epoch, m + HDR_LEN + 8 + CLUSTER_NAMELEN);
            cl.dirty = true;
        }
    }
    cl_update_state(now);
    return true;
}

/* Whole messages of buf[0..n) on link l: the bytes used (the rest waits
 * for more); *keep false when the link must go (a broken peer). */
static size_t feed(cl_link *l, const uint8_t *buf, size_t n, bool *keep)
{
    size_t at = 0;
    *keep = true;
    while (*keep && !l->dead && n - at >= 8) {
        uint32_t totlen = get32(buf + at + 4);
        if (memcmp(buf + at, "RCmb", 4) != 0 || totlen < HDR_LEN || totlen > MSG_MAX) {
            *keep = false;
            break;
        }
        if (n - at < totlen) {
            break;
        }
        *keep = process(l, buf + at, totlen);
        at += totlen;
    }
    return at;
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    cl_link *l = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    cl_lock();
    l->busy = true;
    size_t n = evbuffer_get_length(in);
    bool keep = true;
    if (n >= 8) {
        const uint8_t *buf = evbuffer_pullup(in, (ev_ssize_t)n);
        evbuffer_drain(in, feed(l, buf, n, &keep));
    }
    l->busy = false;
    if (l->dead || !keep) {
        cl_bus_link_free(l);
    }
    if (cl.dirty) {
        cl_save(false);
    }
    cl_unlock();
}

void cl_bus_feed(const uint8_t *buf, size_t n, cl_node *from)
{
    cl_link *l = xcalloc(1, sizeof(*l));
    l->node = from;
    l->inbound = from == NULL;
    l->ctime = cudis_now_ms();
    l->next = links;
    links = l;
    if (from != NULL) {
        from->link = l;
    }
    l->busy = true;
    bool keep;
    feed(l, buf, n, &keep);
    l->busy = false;
    cl_bus_link_free(l);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    cl_link *l = arg;
    cl_lock();
    if (what & BEV_EVENT_CONNECTED) {
        cl_node *n = l->node;
        if (n != NULL) {
            int64_t old = n->ping_sent;
            send_ping(l, (n->flags & CLN_MEET) ? MSG_MEET : MSG_PING);
            if (old) {
                n->ping_sent = old;
            }
            n->flags &= (uint16_t)~CLN_MEET;
        }
    } else if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)) {
        cl_bus_link_free(l);
    }
    cl_unlock();
}

static cl_link *link_new(struct bufferevent *bev, cl_node *n, bool inbound)
{
    cl_link *l = xcalloc(1, sizeof(*l));
    l->bev = bev;
    l->node = n;
    l->inbound = inbound;
    l->ctime = cudis_now_ms();
    l->next = links;
    links = l;
    bufferevent_setcb(bev, read_cb, NULL, event_cb, l);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
    return l;
}

/* A link's bufferevent on fd (-1: to connect): over TLS with tls-cluster
 * (an accepted link must present a certificate the CA signed, as Redis's
 * bus requires; ours presents tls-client-cert-file, else tls-cert-file).
 * The SSL goes with the bufferevent. NULL on failure. */
static struct bufferevent *bus_bev_new(evutil_socket_t fd, bool outbound)
{
    struct event_base *base = srv.loops[0].base;
    if (!srv.cfg.tls_cluster) {
        return bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
    }
    SSL *ssl = tls_bus_ssl(outbound);
    if (ssl == NULL) {
        return NULL;
    }
    struct bufferevent *bev = bufferevent_openssl_socket_new(
        base, fd, ssl, outbound ? BUFFEREVENT_SSL_CONNECTING : BUFFEREVENT_SSL_ACCEPTING,
        BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL) {
        SSL_free(ssl);
        return NULL;
    }
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
}

static void bus_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                          int sl, void *arg)
{
    (void)lis;
    (void)sa;
    (void)sl;
    (void)arg;
    evutil_make_socket_nonblocking(fd);
    struct bufferevent *bev = bus_bev_new(fd, false);
    if (bev == NULL) {
        close(fd);
        return;
    }
    cl_lock();
    link_new(bev, NULL, true);
    cl_unlock();
}

/* An outbound link to n (connecting). */
static void link_connect(cl_node *n)
{
    struct sockaddr_storage ss;
    int sl = sizeof(ss);
    char addr[CLUSTER_IPLEN + 16];
    if (strchr(n->ip, ':') != NULL) {
        snprintf(addr, sizeof(addr), "[%s]:%d", n->ip, n->cport);
    } else {
        snprintf(addr, sizeof(addr), "%s:%d", n->ip, n->cport);
    }
    if (n->ip[0] == '\0' || evutil_parse_sockaddr_port(addr, (struct sockaddr *)&ss, &sl) != 0) {
        return;
    }
    struct bufferevent *bev = bus_bev_new(-1, true);
    if (bev == NULL) {
        return;
    }
    cl_link *l = link_new(bev, n, false);
    n->link = l;
    if (bufferevent_socket_connect(bev, (struct sockaddr *)&ss, sl) != 0) {
        cl_bus_link_free(l);
    }
}

/* ------------------------------------------------------------------------
 * Handshakes and the cron
 * ---------------------------------------------------------------------- */

bool cl_start_handshake(const char *ip, int port, int cport)
{
    char norm[CLUSTER_IPLEN];
    struct in6_addr a6;
    struct in_addr a4;
    if (inet_pton(AF_INET, ip, &a4) == 1) {
        inet_ntop(AF_INET, &a4, norm, sizeof(norm));
    } else if (inet_pton(AF_INET6, ip, &a6) == 1) {
        inet_ntop(AF_INET6, &a6, norm, sizeof(norm));
    } else {
        return false;
    }
    for (int i = 0; i < cl.nnodes; i++) {
        cl_node *n = cl.nodes[i];
        if ((n->flags & CLN_HANDSHAKE) && strcmp(n->ip, norm) == 0 && n->port == port &&
            n->cport == cport) {
            return true; /* one is going on */
        }
    }
    cl_node *n = cl_node_new(NULL, CLN_HANDSHAKE | CLN_MEET);
    snprintf(n->ip, sizeof(n->ip), "%s", norm);
    n->port = port;
    n->cport = cport;
    cl_node_add(n);
    return true;
}

static void cron_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    int64_t now = cudis_now_ms();
    int64_t timeout = srv.cfg.cluster_node_timeout;
    int64_t hs_timeout = timeout < 1000 ? 1000 : timeout;
    cl_lock();
    cron_iter++;
    for (int i = 0; i < cl.nnodes; i++) {
        cl_node *n = cl.nodes[i];
        if (n == cl.myself || (n->flags & CLN_NOADDR)) {
            continue;
        }
        if ((n->flags & CLN_HANDSHAKE) && now - n->ctime > hs_timeout) {
            cl_node_del(n);
            i--;
            continue;
        }
        if (n->link == NULL) {
            link_connect(n);
        }
    }
    if (cron_iter % 10 == 0) { /* once a second: the least recently heard of five */
        cl_node *min = NULL;
        for (int k = 0; k < 5 && cl.nnodes > 1; k++) {
            cl_node *n = cl.nodes[coll_rand64() % (uint64_t)cl.nnodes];
            if (n->link == NULL || n->ping_sent != 0 ||
                (n->flags & (CLN_MYSELF | CLN_HANDSHAKE))) {
                continue;
            }
            if (min == NULL || n->pong_received < min->pong_received) {
                min = n;
            }
        }
        if (min != NULL) {
            send_ping(min->link, MSG_PING);
        }
    }
    for (int i = 0; i < cl.nnodes; i++) {
        cl_node *n = cl.nodes[i];
        if (n->flags & (CLN_MYSELF | CLN_NOADDR | CLN_HANDSHAKE)) {
            continue;
        }
        cl_link *l = n->link;
        /* a link that answers nothing for half the timeout is reconnected */
        if (l != NULL && now - l->ctime > timeout && n->ping_sent &&
            now - n->ping_sent > timeout / 2 && now - n->data_received > timeout / 2) {
            cl_bus_link_free(l);
            l = NULL;
        }
        if (l != NULL && n->ping_sent == 0 && now - n->pong_received > timeout / 2) {
            send_ping(l, MSG_PING);
            continue;
        }
        if (n->ping_sent == 0) {
            continue;
        }
        int64_t delay = now - n->ping_sent, data_delay = now - n->data_received;
        int64_t node_delay = delay < data_delay ? delay : data_delay;
        if (node_delay > timeout && !(n->flags & (CLN_PFAIL | CLN_FAIL))) {
            log_msg(LL_VERBOSE, "*** NODE %.40s possibly failing", n->name);
            n->flags |= CLN_PFAIL;
            cl.dirty = true;
        }
    }
    cl_update_state(now);
    if (cl.dirty) {
        cl_save(false);
    }
    uint8_t lost[CLUSTER_SLOTS / 8];
    bool any_lost = cl.any_lost;
    if (any_lost) {
        memcpy(lost, cl.lost, sizeof(lost));
        memset(cl.lost, 0, sizeof(cl.lost));
        cl.any_lost = false;
    }
    cl_unlock();
    for (int s = 0; any_lost && s < CLUSTER_SLOTS; s++) {
        if ((lost[s >> 3] >> (s & 7)) & 1) {
            log_msg(LL_NOTICE, "Deleting the keys of slot %d, now served by another node", s);
            slotkeys_drop_slot(&srv.loops[0], s);
        }
    }
    struct timeval tv = {0, 100000};
    evtimer_add(cron_ev, &tv);
}

static int listen_one(const char *addr, int port, bool optional)
{
    int fd;
    if (listen_socket(addr, port, optional, &fd) != 0) {
        return -1;
    }
    if (fd < 0) {
        return 0; /* an optional address this host lacks */
    }
    struct evconnlistener *l = evconnlistener_new(srv.loops[0].base, bus_accept_cb, NULL,
                                                  LEV_OPT_CLOSE_ON_FREE, 0, fd);
    if (l == NULL || nbus_listeners == (int)(sizeof(bus_listeners) / sizeof(bus_listeners[0]))) {
        if (l) {
            evconnlistener_free(l);
        } else {
            close(fd);
        }
        return -1;
    }
    bus_listeners[nbus_listeners++] = l;
    return 0;
}

int cl_bus_listen(void)
{
    int base = srv.cfg.tls_cluster ? (int)srv.cfg.tls_port : (int)srv.cfg.port;
    int port = srv.cfg.cluster_port ? (int)srv.cfg.cluster_port : base + 10000;
    if (port > 65535) {
        log_msg(LL_WARNING, "Redis port number too high. Cluster communication port is 10,000 "
                            "port numbers higher than your Redis port. Your Redis port number "
                            "must be 55535 or less.");
        return -1;
    }
    char *bind = xstrdup(srv.cfg.bind ? srv.cfg.bind : "");
    int rc = 0;
    for (char *save, *t = strtok_r(bind, " ", &save); t && rc == 0;
         t = strtok_r(NULL, " ", &save)) {
        bool optional = t[0] == '-';
        rc = listen_one(optional ? t + 1 : t, port, optional);
    }
    free(bind);
    if (rc == 0 && nbus_listeners == 0) {
        rc = listen_one("0.0.0.0", port, false);
    }
    if (rc != 0) {
        return -1;
    }
    cron_ev = evtimer_new(srv.loops[0].base, cron_cb, NULL);
    struct timeval tv = {0, 100000};
    evtimer_add(cron_ev, &tv);
    return 0;
}

void cl_bus_close(void)
{
    if (cron_ev != NULL) {
        event_free(cron_ev);
        cron_ev = NULL;
    }
    for (int i = 0; i < nbus_listeners; i++) {
        evconnlistener_free(bus_listeners[i]);
    }
    nbus_listeners = 0;
    while (links != NULL) {
        cl_bus_link_free(links);
    }
}

void cl_bus_stats(sbuf *o)
{
    static const char *const names[MSG_TYPES] = {
        "ping", "pong",   "meet",    "fail",   "publish",     "auth-req",
        "auth-ack", "update", "mfstart", "module", "publishshard"};
    uint64_t total = 0;
    for (int t = 0; t < MSG_TYPES; t++) {
        if (cl.sent[t]) {
            sbuf_printf(o, "cluster_stats_messages_%s_sent:%" PRIu64 "\r\n", names[t], cl.sent[t]);
            total += cl.sent[t];
        }
    }
    sbuf_printf(o, "cluster_stats_messages_sent:%" PRIu64 "\r\n", total);
    total = 0;
    for (int t = 0; t < MSG_TYPES; t++) {
        if (cl.received[t]) {
            sbuf_printf(o, "cluster_stats_messages_%s_received:%" PRIu64 "\r\n", names[t],
                        cl.received[t]);
            total += cl.received[t];
        }
    }
    sbuf_printf(o, "cluster_stats_messages_received:%" PRIu64 "\r\n", total);
}
