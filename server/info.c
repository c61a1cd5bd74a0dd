/*
 * info.c - INFO: Redis's sections and field names (server, clients, memory,
 * persistence, stats, replication, cpu, commandstats, errorstats, keyspace)
 * plus an `engine` section (engine statistics, batch size and wait
 * distributions), and CONFIG RESETSTAT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cudis_time.h"
#include "server_internal.h"

static void human(char *buf, size_t cap, double n)
{
    if (n < 1024) {
        snprintf(buf, cap, "%.0fB", n);
    } else if (n < 1024.0 * 1024) {
        snprintf(buf, cap, "%.2fK", n / 1024);
    } else if (n < 1024.0 * 1024 * 1024) {
        snprintf(buf, cap, "%.2fM", n / (1024.0 * 1024));
    } else {
        snprintf(buf, cap, "%.2fG", n / (1024.0 * 1024 * 1024));
    }
}

long long info_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%lld %lld", &pages, &rss) != 2) {
            rss = 0;
        }
        fclose(f);
    }
    return rss * sysconf(_SC_PAGESIZE);
}

static bool want(const char *sec, int argc, char **argv, uint32_t *lens, bool in_default)
{
    if (argc == 0) {
        return in_default;
    }
    for (int i = 0; i < argc; i++) {
        if (util_eq(argv[i], lens[i], sec) || util_eq(argv[i], lens[i], "everything") ||
            (util_eq(argv[i], lens[i], "all")) ||
            (in_default && util_eq(argv[i], lens[i], "default"))) {
            return true;
        }
    }
    return false;
}

static void sum_stats(loop_stats *t, batch_stats *bs)
{
    memset(t, 0, sizeof(*t));
    memset(bs, 0, sizeof(*bs));
    int nc = cmd_count();
    t->cmds = xcalloc((size_t)nc, sizeof(cmd_stat));
    for (int l = 0; l < srv.nloops; l++) {
        loop *lp = &srv.loops[l];
        t->commands += STAT_GET(lp->st.commands);
        t->net_in += STAT_GET(lp->st.net_in);
        t->net_out += STAT_GET(lp->st.net_out);
        t->conns += STAT_GET(lp->st.conns);
        t->errors += STAT_GET(lp->st.errors);
        for (int i = 0; i < nc; i++) {
            const cmd_stat *s = &lp->st.cmds[i];
            t->cmds[i].calls += STAT_GET(s->calls);
            for (int b = 0; b < CMD_LAT_BUCKETS; b++) {
                t->cmds[i].lat[b] += STAT_GET(s->lat[b]);
            }
            t->cmds[i].usec += STAT_GET(s->usec);
            t->cmds[i].rejected += STAT_GET(s->rejected);
            t->cmds[i].failed += STAT_GET(s->failed);
        }
        int nerr = __atomic_load_n(&lp->st.nerr, __ATOMIC_ACQUIRE);
        for (int e = 0; e < nerr; e++) {
            int k = 0;
            while (k < t->nerr && strcmp(t->err_names[k], lp->st.err_names[e])) {
                k++;
            }
            if (k == t->nerr) {
                if (t->nerr == ERRSTAT_MAX) {
                    continue;
                }
                strcpy(t->err_names[t->nerr++], lp->st.err_names[e]);
            }
            t->err_counts[k] += STAT_GET(lp->st.err_counts[e]);
        }
        /* batch_stats is all uint64_t counters: summed word by word */
        const uint64_t *s = (const uint64_t *)&lp->b.st;
        uint64_t *d = (uint64_t *)bs;
        for (size_t w = 0; w < sizeof(*bs) / sizeof(uint64_t); w++) {
            d[w] += STAT_GET(s[w]);
        }
    }
}

static void hist_line(sbuf *o, const char *name, const uint64_t *h)
{
    sbuf_printf(o, "%s:", name);
    bool first = true;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        if (h[i]) {
            sbuf_printf(o, "%s%llu=%llu", first ? "" : ",", i == 0 ? 1ULL : 1ULL << i,
                        (unsigned long long)h[i]);
            first = false;
        }
    }
    sbuf_adds(o, "\r\n");
}

void info_build(sbuf *o, int argc, char **argv, uint32_t *lens)
{
    loop_stats t;
    batch_stats bs;
    sum_stats(&t, &bs);
    cudis_stats es;
    engine_stats(srv.eng, &es);
    int64_t now = cudis_now_ms();
    char h1[32], h2[32], h3[32];
    bool first = true;
#define SECTION(title)                                                                             \
    do {                                                                                           \
        sbuf_printf(o, "%s# %s\r\n", first ? "" : "\r\n", title);                                  \
        first = false;                                                                             \
    } while (0)

    if (want("server", argc, argv, lens, true)) {
        struct utsname u;
        uname(&u);
        SECTION("Server");
        sbuf_printf(o,
                    "redis_version:%s\r\ncudis_version:%s\r\nredis_git_sha1:00000000\r\n"
                    "redis_git_dirty:0\r\nredis_build_id:0\r\nredis_mode:standalone\r\n"
                    "os:%s %s %s\r\narch_bits:64\r\nmonotonic_clock:POSIX clock_gettime\r\n"
                    "multiplexing_api:%s\r\ngcc_version:%d.%d.%d\r\nprocess_id:%d\r\n"
                    "process_supervised:no\r\nrun_id:%016llx%016llx00000000\r\ntcp_port:%lld\r\n"
                    "server_time_usec:%lld\r\nuptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\n"
                    "hz:%lld\r\nconfigured_hz:%lld\r\nlru_clock:%lld\r\nexecutable:%s\r\n"
                    "config_file:%s\r\nio_threads_active:%d\r\n",
                    REDIS_COMPAT_VERSION, CUDIS_VERSION, u.sysname, u.release, u.machine,
                    event_base_get_method(srv.loops[0].base), __GNUC__, __GNUC_MINOR__,
                    __GNUC_PATCHLEVEL__, (int)getpid(), (unsigned long long)srv.start_ns,
                    (unsigned long long)srv.start_ms, srv.cfg.port, (long long)cudis_now_us(),
                    (long long)(now - srv.start_ms) / 1000,
                    (long long)(now - srv.start_ms) / 86400000, srv.cfg.hz, srv.cfg.hz,
                    (long long)((now / 1000) & ((1 << 24) - 1)), srv.executable,
                    srv.config_file ? srv.config_file : "", srv.nloops > 1);
    }
    uint64_t peak_in = 0, peak_out = 0;
    for (int l = 0; l < srv.nloops; l++) {
        for (int k = 0; k < PEAK_SLOTS; k++) {
            uint64_t pi = STAT_GET(srv.loops[l].peak_in[k]),
                     po = STAT_GET(srv.loops[l].peak_out[k]);
            peak_in = pi > peak_in ? pi : peak_in;
            peak_out = po > peak_out ? po : peak_out;
        }
    }
    if (want("clients", argc, argv, lens, true)) {
        SECTION("Clients");
        sbuf_printf(
            o,
            "connected_clients:%ld\r\ncluster_connections:%ld\r\nmaxclients:%lld\r\n"
            "client_recent_max_input_buffer:%llu\r\nclient_recent_max_output_buffer:%llu\r\n"
            "blocked_clients:%ld\r\ntracking_clients:%ld\r\nclients_in_timeout_table:%ld\r\n",
            atomic_load(&srv.connected), cluster_links(), srv.cfg.maxclients,
            (unsigned long long)peak_in, (unsigned long long)peak_out, clients_blocked(false),
            tracking_clients(), clients_blocked(true));
    }
    if (want("memory", argc, argv, lens, true)) {
        long long rss = info_rss_bytes();
        human(h1, sizeof(h1), (double)es.bytes_used);
        human(h2, sizeof(h2), (double)rss);
        human(h3, sizeof(h3), (double)srv.cfg.maxmemory);
        SECTION("Memory");
        sbuf_printf(
            o,
            "used_memory:%llu\r\nused_memory_human:%s\r\nused_memory_rss:%lld\r\n"
            "used_memory_rss_human:%s\r\nused_memory_peak:%llu\r\n"
            "used_memory_peak_human:%s\r\nused_memory_dataset:%llu\r\n"
            "total_system_memory:%lld\r\nnumber_of_functions:%d\r\n"
            "number_of_libraries:%d\r\nused_memory_vm_functions:%llu\r\n"
            "used_memory_functions:%llu\r\nmaxmemory:%lld\r\nmaxmemory_human:%s\r\n"
            "maxmemory_policy:%s\r\nmem_fragmentation_ratio:%.2f\r\n"
            "mem_allocator:libc\r\n",
            (unsigned long long)es.bytes_used, h1, rss, h2, (unsigned long long)es.bytes_used, h1,
            (unsigned long long)(es.key_bytes + es.value_bytes),
            (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE), function_count(),
            library_count(), (unsigned long long)function_memory(),
            (unsigned long long)function_overhead(), srv.cfg.maxmemory, h3, server_policy_shown(),
            es.bytes_used ? (double)rss / (double)es.bytes_used : 0.0);
    }
    if (want("persistence", argc, argv, lens, true)) {
        SECTION("Persistence");
        rdb_info(o);
    }
    double ops_per_sec;
    __atomic_load(&srv.ops_per_sec, &ops_per_sec, __ATOMIC_RELAXED);
    if (want("stats", argc, argv, lens, true)) {
        SECTION("Stats");
        sbuf_printf(
            o,
            "total_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n"
            "instantaneous_ops_per_sec:%.0f\r\ntotal_net_input_bytes:%llu\r\n"
            "total_net_output_bytes:%llu\r\nrejected_connections:%llu\r\n"
            "expired_keys:%llu\r\nevicted_keys:%llu\r\nkeyspace_hits:%llu\r\n"
            "keyspace_misses:%llu\r\npubsub_channels:0\r\npubsub_patterns:0\r\n"
            "total_error_replies:%llu\r\ntotal_reads_processed:0\r\n"
            "total_writes_processed:0\r\n",
            (unsigned long long)atomic_load(&srv.total_conns), (unsigned long long)t.commands,
            ops_per_sec, (unsigned long long)t.net_in, (unsigned long long)t.net_out,
            (unsigned long long)atomic_load(&srv.rejected_conns),
            (unsigned long long)es.evict_expired,
            (unsigned long long)(es.evict_bucket + es.evict_memory + atomic_load(&srv.bh_evicted)),
            (unsigned long long)es.hits,
            (unsigned long long)es.misses, (unsigned long long)t.errors);
        tracking_info(o);
        /* Redis 7.2's names */
        sbuf_printf(o,
                    "acl_access_denied_auth:%llu\r\nacl_access_denied_cmd:%llu\r\n"
                    "acl_access_denied_key:%llu\r\nacl_access_denied_channel:%llu\r\n",
                    (unsigned long long)acl_denied(ACL_DENIED_AUTH),
                    (unsigned long long)acl_denied(ACL_DENIED_CMD),
                    (unsigned long long)acl_denied(ACL_DENIED_KEY),
                    (unsigned long long)acl_denied(ACL_DENIED_CHANNEL));
    }
    if (want("replication", argc, argv, lens, true)) {
        SECTION("Replication");
        sbuf_printf(o, "role:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\n"
                       "master_replid:0000000000000000000000000000000000000000\r\n"
                       "master_repl_offset:0\r\nrepl_backlog_active:0\r\n");
    }
    if (want("cpu", argc, argv, lens, true)) {
        struct rusage self, ch;
        getrusage(RUSAGE_SELF, &self);
        getrusage(RUSAGE_CHILDREN, &ch);
        SECTION("CPU");
        sbuf_printf(o,
                    "used_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\n"
                    "used_cpu_sys_children:%ld.%06ld\r\nused_cpu_user_children:%ld.%06ld\r\n",
                    (long)self.ru_stime.tv_sec, (long)self.ru_stime.tv_usec,
                    (long)self.ru_utime.tv_sec, (long)self.ru_utime.tv_usec,
                    (long)ch.ru_stime.tv_sec, (long)ch.ru_stime.tv_usec, (long)ch.ru_utime.tv_sec,
                    (long)ch.ru_utime.tv_usec);
    }
    if (want("commandstats", argc, argv, lens, false)) {
        SECTION("Commandstats");
        for (int i = 0; i < cmd_count(); i++) {
            const cmd_stat *s = &t.cmds[i];
            if (s->calls == 0 && s->rejected == 0 && s->failed == 0) {
                continue;
            }
            sbuf_printf(o,
                        "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,"
                        "failed_calls=%llu\r\n",
                        cmd_fullname(cmd_by_idx(i)), (unsigned long long)s->calls,
                        (unsigned long long)s->usec,
                        s->calls ? (double)s->usec / (double)s->calls : 0.0,
                        (unsigned long long)s->rejected, (unsigned long long)s->failed);
        }
    }
    if (want("latencystats", argc, argv, lens, false)) {
        SECTION("Latencystats");
        observe_info_latencystats(o);
    }
    if (want("errorstats", argc, argv, lens, true)) {
        SECTION("Errorstats");
        for (int i = 0; i < t.nerr; i++) {
            sbuf_printf(o, "errorstat_%s:count=%llu\r\n", t.err_names[i],
                        (unsigned long long)t.err_counts[i]);
        }
    }
    if (want("cluster", argc, argv, lens, true)) {
        SECTION("Cluster");
        cluster_info(o);
    }
    if (want("keyspace", argc, argv, lens, true)) {
        SECTION("Keyspace");
        if (es.items > 0) {
            /* per engine database, listed by the SELECT index behind it */
            cudis_expires ex; /* 4 KiB */
            engine_expires(srv.eng, cudis_now_ms(), &ex);
            for (int i = 0; i < srv.cfg.databases; i++) {
                uint8_t d = db_phys(i);
                uint64_t items = engine_db_size(srv.eng, d);
                if (items > 0) {
                    sbuf_printf(o, "db%d:keys=%llu,expires=%llu,avg_ttl=%llu\r\n", i,
                                (unsigned long long)items,
                                (unsigned long long)(ex.keys[d] < items ? ex.keys[d] : items),
                                (unsigned long long)ex.ttl_ms[d]);
                }
            }
        }
    }
    if (want("gpu", argc, argv, lens, true)) {
        SECTION("GPU");
        gpumon_info(o);
    }
    if (want("engine", argc, argv, lens, true)) {
        SECTION("Engine");
        double nb = bs.batches ? (double)bs.batches : 1.0;
        sbuf_printf(o,
                    "engine:%s\r\nengine_requested:%s\r\nengine_why:%s\r\nengine_threads:%lld\r\n"
                    "engine_items:%llu\r\nengine_capacity:%llu\r\nengine_load_factor:%.4f\r\n"
                    "engine_bytes_used:%llu\r\nengine_bytes_budget:%llu\r\n"
                    "engine_index_bytes:%llu\r\nengine_key_bytes:%llu\r\n"
                    "engine_value_bytes:%llu\r\nengine_hits:%llu\r\nengine_misses:%llu\r\n"
                    "engine_evicted_bucket:%llu\r\nengine_evicted_memory:%llu\r\n"
                    "engine_evicted_expired:%llu\r\n",
                    engine_name(srv.eng), srv.engine_req, srv.engine_why, srv.cfg.engine_threads,
                    (unsigned long long)es.items, (unsigned long long)es.capacity, es.load_factor,
                    (unsigned long long)es.bytes_used, (unsigned long long)es.bytes_budget,
                    (unsigned long long)es.index_bytes, (unsigned long long)es.key_bytes,
                    (unsigned long long)es.value_bytes, (unsigned long long)es.hits,
                    (unsigned long long)es.misses, (unsigned long long)es.evict_bucket,
                    (unsigned long long)es.evict_memory, (unsigned long long)es.evict_expired);
        sbuf_printf(o,
                    "batch_count:%llu\r\nbatch_ops:%llu\r\nbatch_commands:%llu\r\n"
                    "batch_size_avg:%.2f\r\nbatch_size_p50:%llu\r\nbatch_size_p99:%llu\r\n"
                    "batch_wait_us_avg:%.2f\r\nbatch_wait_us_p50:%llu\r\nbatch_wait_us_p99:%llu\r\n"
                    "batch_exec_us_avg:%.2f\r\nbatch_sealed_conflict:%llu\r\n"
                    "batch_sealed_full:%llu\r\nbatch_sealed_deadline:%llu\r\n"
                    "batch_sealed_drain:%llu\r\nbatch_outbuf_reruns:%llu\r\n"
                    "batch_failed:%llu\r\nbatch_max_ops:%lld\r\nbatch_max_wait_us:%lld\r\n"
                    "engine_pipeline:%d\r\n",
                    (unsigned long long)bs.batches, (unsigned long long)bs.ops,
                    (unsigned long long)bs.cmds, (double)bs.ops / nb,
                    (unsigned long long)hist_quantile(bs.size_hist, 0.5),
                    (unsigned long long)hist_quantile(bs.size_hist, 0.99),
                    (double)bs.wait_us_sum / nb,
                    (unsigned long long)hist_quantile(bs.wait_hist, 0.5),
                    (unsigned long long)hist_quantile(bs.wait_hist, 0.99),
                    (double)bs.exec_ns / 1000.0 / nb, (unsigned long long)bs.sealed_conflict,
                    (unsigned long long)bs.sealed_full, (unsigned long long)bs.sealed_deadline,
                    (unsigned long long)bs.sealed_drain, (unsigned long long)bs.outbuf_reruns,
                    (unsigned long long)bs.failed, srv.cfg.batch_max_ops,
                    srv.cfg.batch_max_wait_us, server_pipelined() ? 1 : 0);
        hist_line(o, "batch_size_hist", bs.size_hist);
        hist_line(o, "batch_wait_us_hist", bs.wait_hist);
        char buf[4096];
        size_t n = engine_info(srv.eng, buf, sizeof(buf));
        if (n > 0) {
            sbuf_add(o, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
        }
    }
#undef SECTION
    free(t.cmds);
}

static void zero_words(void *p, size_t bytes)
{
    uint64_t *w = p;
    for (size_t i = 0; i < bytes / sizeof(uint64_t); i++) {
        STAT_SET(w[i], 0);
    }
}

void stats_reset_all(void)
{
    for (int l = 0; l < srv.nloops; l++) {
        loop *lp = &srv.loops[l];
        /* the loops keep counting meanwhile: word by word, atomically */
        zero_words(lp->st.cmds, (size_t)cmd_count() * sizeof(cmd_stat));
        zero_words(&lp->b.st, sizeof(lp->b.st));
        STAT_SET(lp->st.commands, 0);
        STAT_SET(lp->st.net_in, 0);
        STAT_SET(lp->st.net_out, 0);
        STAT_SET(lp->st.conns, 0);
        STAT_SET(lp->st.errors, 0);
        __atomic_store_n(&lp->st.nerr, 0, __ATOMIC_RELEASE);
    }
    atomic_store(&srv.total_conns, 0);
    atomic_store(&srv.rejected_conns, 0);
    atomic_store(&srv.bh_evicted, 0);
    acl_denied_reset();
    engine_reset_stats(srv.eng);
}
