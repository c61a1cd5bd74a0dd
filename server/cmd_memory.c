/*
 * cmd_memory.c - MEMORY STATS, DOCTOR, MALLOC-STATS, PURGE and HELP, with
 * Redis's fields and wording, from what cudis accounts: the engine's
 * memory (its index, keys and values), the clients' buffers and the Lua
 * state. The engine reserves its budget up front; the figures are what is
 * in use within it. MEMORY USAGE is in cmd_keys.c.
 */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

typedef struct mem_stats {
    uint64_t peak, total, startup, clients, lua, overhead, dataset, keys;
    uint64_t db_keys[CUDIS_MAX_DBS];
    uint64_t index;
    long long rss;
} mem_stats;

static _Atomic uint64_t peak_allocated;

/* Buffers of every client of every loop. */
static uint64_t clients_bytes(void)
{
    uint64_t n = 0;
    for (int i = 0; i < srv.nloops; i++) {
        loop *lp = &srv.loops[i];
        pthread_mutex_lock(&lp->lock);
        for (conn *c = lp->clients; c != NULL; c = c->next) {
            n += c->qcap + c->out.cap + sizeof(*c);
        }
        pthread_mutex_unlock(&lp->lock);
    }
    return n;
}

static void mem_collect(mem_stats *m)
{
    memset(m, 0, sizeof(*m));
    cudis_stats es;
    engine_stats(srv.eng, &es);
    m->clients = clients_bytes();
    m->lua = script_memory();
    m->index = es.index_bytes;
    m->startup = es.index_bytes; /* what the engine holds before any key */
    m->total = es.bytes_used + m->clients + m->lua;
    m->keys = es.items;
    for (int d = 0; d < srv.cfg.databases; d++) {
        m->db_keys[d] = engine_db_size(srv.eng, db_phys(d));
    }
    m->overhead = m->startup + m->clients + m->lua;
    m->dataset = m->total > m->overhead ? m->total - m->overhead : 0;
    uint64_t p = atomic_load(&peak_allocated);
    while (m->total > p && !atomic_compare_exchange_weak(&peak_allocated, &p, m->total)) {
    }
    m->peak = m->total > p ? m->total : p;
    m->rss = info_rss_bytes();
}

static void kv_int(conn *c, const char *k, long long v)
{
    resp_bulks(&c->out, k);
    resp_int(&c->out, v);
}

static void kv_double(conn *c, const char *k, double v)
{
    resp_bulks(&c->out, k);
    resp_double(&c->out, v, c->proto);
}

void cmd_memory_stats(conn *c, int argc, char **argv, uint32_t *lens)
{
    UNUSED3;
    mem_stats m;
    mem_collect(&m);
    int ndb = 0;
    for (int d = 0; d < srv.cfg.databases; d++) {
        ndb += m.db_keys[d] > 0;
    }
    resp_map(&c->out, 27 + ndb, c->proto);
    kv_int(c, "peak.allocated", (long long)m.peak);
    kv_int(c, "total.allocated", (long long)m.total);
    kv_int(c, "startup.allocated", (long long)m.startup);
    kv_int(c, "replication.backlog", 0);
    kv_int(c, "clients.slaves", 0);
    kv_int(c, "clients.normal", (long long)m.clients);
    kv_int(c, "cluster.links", 0);
    kv_int(c, "aof.buffer", 0);
    kv_int(c, "lua.caches", (long long)m.lua);
    kv_int(c, "functions.caches", (long long)function_memory());
    for (int d = 0; d < srv.cfg.databases; d++) {
        if (m.db_keys[d] == 0) {
            continue;
        }
        char name[16];
        snprintf(name, sizeof(name), "db.%d", d);
        resp_bulks(&c->out, name);
        resp_map(&c->out, 3, c->proto);
        /* the index is shared by every database: each gets its keys' share */
        kv_int(c, "overhead.hashtable.main",
               m.keys ? (long long)(m.index * m.db_keys[d] / m.keys) : 0);
        kv_int(c, "overhead.hashtable.expires", 0); /* expiries live in the items */
        kv_int(c, "overhead.hashtable.slot-to-keys", 0);
    }
    kv_int(c, "overhead.total", (long long)m.overhead);
    kv_int(c, "keys.count", (long long)m.keys);
    uint64_t net = m.total > m.startup ? m.total - m.startup : 0;
    kv_int(c, "keys.bytes-per-key", m.keys ? (long long)(net / m.keys) : 0);
    kv_int(c, "dataset.bytes", (long long)m.dataset);
    kv_double(c, "dataset.percentage", net ? (double)m.dataset * 100.0 / (double)net : 0.0);
    kv_double(c, "peak.percentage", m.peak ? (double)m.total * 100.0 / (double)m.peak : 0.0);
    /* libc malloc keeps no statistics of its own: what cudis allocated */
    kv_int(c, "allocator.allocated", (long long)m.total);
    kv_int(c, "allocator.active", (long long)m.total);
    kv_int(c, "allocator.resident", m.rss);
    kv_double(c, "allocator-fragmentation.ratio", 1.0);
    kv_int(c, "allocator-fragmentation.bytes", 0);
    double rss_ratio = m.total ? (double)m.rss / (double)m.total : 0.0;
    long long rss_extra = m.rss - (long long)m.total;
    kv_double(c, "allocator-rss.ratio", rss_ratio);
    kv_int(c, "allocator-rss.bytes", rss_extra);
    kv_double(c, "rss-overhead.ratio", 1.0);
    kv_int(c, "rss-overhead.bytes", 0);
    kv_double(c, "fragmentation", rss_ratio);
    kv_int(c, "fragmentation.bytes", rss_extra);
}

/* Redis's getMemoryDoctorReport, on the figures cudis has. */
void cmd_memory_doctor(conn *c, int argc, char **argv, uint32_t *lens)
{
    UNUSED3;
    mem_stats m;
    mem_collect(&m);
    sbuf s = {0};
    /* "very little": the engine's index, reserved at start, aside */
    if (m.total - m.startup < 5u * 1024 * 1024) {
        sbuf_adds(&s, "Hi Sam, this instance is empty or is using very little memory, my issues "
                      "detector can't be used in these conditions. Please, leave for your "
                      "mission on Earth and fill it with some data. The new Sam and I will be "
                      "back to our programming as soon as I finished rebooting.\n");
    } else {
        bool high_peak = m.peak > m.total && (double)m.peak / (double)m.total > 1.5;
        long nclients = atomic_load(&srv.connected);
        bool big_clients = nclients > 0 && m.clients / (uint64_t)nclients > 200u * 1024;
        if (!high_peak && !big_clients) {
            sbuf_adds(&s, "Hi Sam, I can't find any memory issue in your instance. I can only "
                          "account for what occurs on this base.\n");
        } else {
            sbuf_adds(&s, "Sam, I detected a few issues in this Redis instance memory "
                          "implants:\n\n");
            if (high_peak) {
                sbuf_adds(&s, " * Peak memory: In the past this instance used more than 150% "
                              "the memory that is currently using. The allocator is normally "
                              "not able to release memory after a peak, so you can expect to "
                              "see a big fragmentation ratio, however this is actually "
                              "harmless and is only due to the memory peak, and if the Redis "
                              "instance Resident Set Size (RSS) is currently bigger than "
                              "expected, the memory will be used as soon as you fill the Redis "
                              "instance with more data. If the memory peak was only occasional "
                              "and you want to try to reclaim memory, please try the MEMORY "
                              "PURGE command, otherwise the only other option is to shutdown "
                              "and restart the instance.\n\n");
            }
            if (big_clients) {
                sbuf_adds(&s, " * Big client buffers: The clients output buffers are in "
                              "general too big, and their total output buffers size is too "
                              "big compared to the total memory used by Redis. This may be "
                              "due to clients with slow network or applications not reading "
                              "replies fast enough. You can use CLIENT LIST to spot the "
                              "clients with big buffers.\n\n");
            }
            sbuf_adds(&s, "I'm here to keep you safe, Sam. I want to help you.\n");
        }
    }
    resp_verbatim(&c->out, s.p, s.len, c->proto);
    sbuf_free(&s);
}

void cmd_memory_malloc_stats(conn *c, int argc, char **argv, uint32_t *lens)
{
    UNUSED3;
    static const char msg[] = "Stats not supported for the current allocator";
    resp_verbatim(&c->out, msg, sizeof(msg) - 1, c->proto);
}

void cmd_memory_purge(conn *c, int argc, char **argv, uint32_t *lens)
{
    UNUSED3;
    reply_ok(c); /* libc malloc: nothing to purge (as Redis without jemalloc) */
}

void cmd_memory_help(conn *c, int argc, char **argv, uint32_t *lens)
{
    UNUSED3;
    static const char *const lines[] = {
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        "HELP",
        "    Prints this help.",
        NULL};
    help_reply(c, "MEMORY", lines);
}
