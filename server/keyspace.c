/*
 * keyspace.c - what listens to the keyspace: after every batch, each key
 * an op changed (CUDIS_R_DONE) is signalled to WATCH (watch.c), to
 * client-side caching (tracking.c) and as a keyspace notification
 * (notify-keyspace-events: __keyspace@N__:<key> <event> and
 * __keyevent@N__:<event> <key>, Redis's event names). An op's event is
 * derived from its code and flags, or named by the command that added it
 * (batcher.ev: INCRBYFLOAT, RESTORE...), or given explicitly by commands
 * whose events Redis orders differently from their ops (RENAME, MOVE).
 */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

/* The SELECTed database number whose engine database is phys (SWAPDB
 * exchanges them; Redis names the database, not its contents). */
static int logical_db(uint8_t phys)
{
    for (int i = 0; i < srv.cfg.databases; i++) {
        if (db_phys(i) == phys) {
            return i;
        }
    }
    return phys;
}

void keyspace_notify(loop *from, int type, const char *event, uint8_t db, const char *key,
                     uint32_t len)
{
    int flags = srv.cfg.notify_flags;
    if (!(flags & type)) {
        return;
    }
    int n = logical_db(db);
    size_t elen = strlen(event);
    sbuf ch = {0};
    if (flags & NOTIFY_KEYSPACE) {
        sbuf_printf(&ch, "__keyspace@%d__:", n);
        sbuf_add(&ch, key, len);
        pubsub_publish(from, 0, ch.p, (uint32_t)ch.len, event, (uint32_t)elen);
    }
    if (flags & NOTIFY_KEYEVENT) {
        ch.len = 0;
        sbuf_printf(&ch, "__keyevent@%d__:%s", n, event);
        pubsub_publish(from, 0, ch.p, (uint32_t)ch.len, key, len);
    }
    sbuf_free(&ch);
}

static const char *const kev_names[KEV__COUNT] = {
    [KEV_INCRBYFLOAT] = "incrbyfloat", [KEV_RESTORE] = "restore",
    [KEV_SETBIT] = "setbit",           [KEV_SET] = "set",
    [KEV_COPY_TO] = "copy_to",         [KEV_HINCRBYFLOAT] = "hincrbyfloat",
};

/* The notifications of one applied op, as Redis's commands send them. */
static void notify_op(loop *from, const cudis_op *op, const cudis_result *r, uint8_t ev,
                      int64_t now, const char *key)
{
    bool creates = op->code == CUDIS_OP_SET || op->code == CUDIS_OP_INCRBY ||
                   op->code == CUDIS_OP_APPEND || op->code == CUDIS_OP_SETRANGE ||
                   op->code == CUDIS_OP_SETBIT || op->code == CUDIS_OP_HSET ||
                   op->code == CUDIS_OP_HINCRBY || op->code == CUDIS_OP_LPUSH ||
                   op->code == CUDIS_OP_ZADD;
    /* RESTORE ... REPLACE adds the key anew, as Redis's delete-then-add */
    if ((creates && !(r->flags & CUDIS_R_FOUND)) || ev == KEV_RESTORE) {
        keyspace_notify(from, NOTIFY_NEW, "new", op->db, key, op->key_len);
    }
    if (ev != KEV_AUTO) {
        bool str = ev == KEV_INCRBYFLOAT || ev == KEV_SETBIT || ev == KEV_SET;
        int cls = str ? NOTIFY_STRING : ev == KEV_HINCRBYFLOAT ? NOTIFY_HASH : NOTIFY_GENERIC;
        keyspace_notify(from, cls, kev_names[ev], op->db, key, op->key_len);
        return;
    }
    const char *s = NULL, *g = NULL, *h = NULL, *l = NULL; /* string, generic, hash/set, list */
    bool set = op->type == CUDIS_TYPE_SET, zset = op->type == CUDIS_TYPE_ZSET;
    switch (op->code) {
    case CUDIS_OP_GET:
        if (op->flags & CUDIS_F_DEL) {
            g = "del";
        } else if (op->flags & CUDIS_F_PERSIST) {
            g = "persist";
        } else if (op->flags & CUDIS_F_SETEXP) {
            g = op->expire_ms <= now ? "del" : "expire";
        }
        break;
    case CUDIS_OP_SET:
        s = "set";
        if (op->expire_ms != 0 && !(op->flags & CUDIS_F_KEEPTTL)) {
            g = "expire";
        }
        break;
    case CUDIS_OP_DEL: g = "del"; break;
    case CUDIS_OP_INCRBY: s = "incrby"; break;
    case CUDIS_OP_APPEND: s = "append"; break;
    case CUDIS_OP_SETRANGE: s = "setrange"; break;
    case CUDIS_OP_SETBIT: s = "setbit"; break;
    case CUDIS_OP_EXPIRE: g = op->expire_ms <= now ? "del" : "expire"; break;
    case CUDIS_OP_PERSIST: g = "persist"; break;
    case CUDIS_OP_HSET: h = set ? "sadd" : "hset"; break;
    case CUDIS_OP_HINCRBY: h = "hincrby"; break;
    case CUDIS_OP_HDEL:
        h = set ? "srem" : zset ? "zrem" : "hdel";
        if (r->flags & CUDIS_R_GONE) {
            g = "del"; /* the last field went */
        }
        break;
    case CUDIS_OP_ZADD: h = (op->flags & CUDIS_F_INCR) ? "zincr" : "zadd"; break;
    case CUDIS_OP_LPUSH: l = (op->flags & CUDIS_F_RIGHT) ? "rpush" : "lpush"; break;
    case CUDIS_OP_LPOP:
        l = (op->flags & CUDIS_F_RIGHT) ? "rpop" : "lpop";
        if (r->flags & CUDIS_R_GONE) {
            g = "del"; /* the last element went */
        }
        break;
    default: break;
    }
    if (s != NULL) {
        keyspace_notify(from, NOTIFY_STRING, s, op->db, key, op->key_len);
    }
    if (l != NULL) {
        keyspace_notify(from, NOTIFY_LIST, l, op->db, key, op->key_len);
    }
    if (h != NULL) {
        keyspace_notify(from,
                        set    ? NOTIFY_SET
                        : zset ? NOTIFY_ZSET
                               : NOTIFY_HASH,
                        h, op->db, key, op->key_len);
    }
    if (g != NULL) {
        keyspace_notify(from, NOTIFY_GENERIC, g, op->db, key, op->key_len);
    }
}

/* An op that looks its key up as a read command does (a miss is a
 * "keymiss"): the reads of read commands, GETDEL/GETEX, SET ... GET. */
static bool is_lookup(const cudis_op *op, uint8_t ev)
{
    if (op->code == CUDIS_OP_SET) {
        return (op->flags & CUDIS_F_GET) != 0;
    }
    return (ev & KEV_READ) &&
           (op->code == CUDIS_OP_GET || op->code == CUDIS_OP_EXISTS || op->code == CUDIS_OP_TTL ||
            op->code == CUDIS_OP_HGET || op->code == CUDIS_OP_HLEN ||
            op->code == CUDIS_OP_ZRANGE);
}

bool keyspace_wants_events(void)
{
    int nf = srv.cfg.notify_flags;
    return tracking_active() || bighash_any() || srv.cfg.cluster_enabled || /* slotkeys.c */
           ((nf & (NOTIFY_EXPIRED | NOTIFY_EVICTED)) && (nf & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT)));
}

#define EV_RECS0 4096u
#define EV_KEYS0 (256u * 1024)
#define EV_RECS_MAX (1u << 20)
#define EV_KEYS_MAX (64ull << 20)

cudis_evbuf *keyspace_evbuf(cudis_evbuf *ev)
{
    if (ev->recs == NULL) {
        ev->cap = EV_RECS0;
        ev->keys_cap = EV_KEYS0;
        ev->recs = xmalloc(ev->cap * sizeof(*ev->recs));
        ev->keys = xmalloc(ev->keys_cap);
    }
    return ev;
}

/* After the events were read: a sink that lost some grows for next time. */
static void evbuf_done(cudis_evbuf *ev)
{
    if (ev->len > ev->cap && ev->cap < EV_RECS_MAX) {
        ev->cap = ev->len < EV_RECS_MAX ? ev->len : EV_RECS_MAX;
        free(ev->recs);
        ev->recs = xmalloc(ev->cap * sizeof(*ev->recs));
    }
    if (ev->keys_len > ev->keys_cap && ev->keys_cap < EV_KEYS_MAX) {
        ev->keys_cap = ev->keys_len < EV_KEYS_MAX ? ev->keys_len : EV_KEYS_MAX;
        free(ev->keys);
        ev->keys = xmalloc(ev->keys_cap);
    }
    ev->len = 0;
    ev->keys_len = 0;
}

static _Atomic uint64_t events_lost; /* sinks that overflowed */

/* What the engine removed by itself, as Redis signals it: each key is
 * invalidated for tracking and notified "expired" / "evicted". A sink
 * that lost events invalidates every tracked key instead (a flush
 * message), as nothing tells which keys went. */
static void engine_events(loop *from, cudis_evbuf *ev)
{
    bool lost = cudis_ev_lost(ev);
    uint32_t n = ev->len < ev->cap ? ev->len : ev->cap;
    bool trk = tracking_active();
    for (uint32_t i = 0; i < n; i++) {
        const cudis_event *e = &ev->recs[i];
        if (e->kind == 0) {
            lost = true;
            continue;
        }
        const char *key = (const char *)ev->keys + e->key_off;
        bighash_note_event(e->db, key, e->key_len);
        if (e->db & BH_HIDDEN) {
            continue; /* a big hash's chunk: bighash.c tells of its hash */
        }
        if (trk) {
            tracking_invalidate(from, key, e->key_len, 0);
        }
        if (e->kind == CUDIS_EV_EXPIRED) {
            keyspace_notify(from, NOTIFY_EXPIRED, "expired", e->db, key, e->key_len);
        } else {
            keyspace_notify(from, NOTIFY_EVICTED, "evicted", e->db, key, e->key_len);
        }
    }
    if (lost) {
        bighash_note_lost();
        if (atomic_fetch_add(&events_lost, 1) == 0) {
            log_msg(LL_WARNING, "More keys left the engine in one batch than its event buffer "
                                "holds: tracking clients were told to drop everything; the "
                                "buffer grows (shown once)");
        }
        if (trk) {
            tracking_flush_all(from);
        }
    }
    evbuf_done(ev);
}

void keyspace_engine_events(loop *from, cudis_evbuf *ev)
{
    if (srv.cfg.cluster_enabled) {
        slotkeys_events(ev);
    }
    engine_events(from, ev);
    if (tracking_active()) {
        tracking_flush_bcast(from);
    }
}

void keyspace_batch_done(batcher *b, const cudis_batch *cb)
{
    if (srv.cfg.cluster_enabled) {
        slotkeys_batch(cb); /* GETKEYSINSLOT's index */
    }
    if (watch_active()) {
        watch_touch_batch(cb);
    }
    loop *from = b->owner;
    if (blocking_active()) {
        blocking_touch_batch(from, cb);
    }
    if (cb->ev != NULL && cb->ev->len > 0) {
        engine_events(from, cb->ev); /* before the ops': Redis expires and evicts first */
    }
    bool trk = tracking_active();
    int nf = srv.cfg.notify_flags;
    bool big = bighash_any();
    if (!trk && nf == 0 && !big && srv.cfg.hash_max_item_size <= 0) {
        return;
    }
    for (uint32_t i = 0; i < cb->n_ops; i++) {
        const cudis_result *r = &cb->res[i];
        const cudis_op *op = &cb->ops[i];
        uint8_t ev = b->meta[i].ev & ~KEV_READ;
        if (r->status != CUDIS_OK || (op->db & BH_HIDDEN)) {
            continue; /* (chunks of big hashes are not keys) */
        }
        const char *key = (const char *)cb->in + op->key_off;
        if (r->flags & CUDIS_R_BIG) {
            bighash_note_big(op->db, key, op->key_len);
        }
        if (big && (r->flags & CUDIS_R_DONE) && ev != KEV_BIGHASH) {
            bighash_note_write(op->db, key, op->key_len); /* it may have replaced a head */
        }
        if (!trk && nf == 0) {
            continue;
        }
        if ((nf & NOTIFY_KEY_MISS) && !(r->flags & CUDIS_R_FOUND) && is_lookup(op, b->meta[i].ev)) {
            /* before the op's own events: Redis looks the key up first */
            keyspace_notify(from, NOTIFY_KEY_MISS, "keymiss", op->db, key, op->key_len);
        }
        if (r->flags & CUDIS_R_DONE) {
            if (trk) {
                tracking_invalidate(from, key, op->key_len, b->meta[i].who);
            }
            if (nf != 0 && ev != KEV_QUIET && ev != KEV_BIGHASH) {
                notify_op(from, op, r, ev, cb->now_ms, key);
            }
        }
    }
    if (trk) {
        tracking_flush_bcast(from);
    }
}
