/*
 * metrics.c - INFO's figures in Prometheus's text format on an HTTP port of
 * their own (`metrics-port`, 0 by default: off), served by loop 0 with
 * libevent's evhttp on the `bind` addresses: GET /metrics. The text is
 * made from INFO itself (info_build), so the two never disagree. Names
 * are redis_exporter's where it has one (a Grafana board built for
 * redis_exporter works), cudis_* otherwise: the engine's figures, and
 * each GPU's (INFO gpu) with a gpu="N" label and a cudis_gpu_info series
 * that carries its name, UUID and PCI bus id.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "server_internal.h"

typedef struct metric_map {
    const char *field; /* INFO's */
    const char *name;  /* Prometheus's */
    const char *type;  /* counter or gauge */
    const char *help;
} metric_map;

static const metric_map MAP[] = {
    {"uptime_in_seconds", "redis_uptime_in_seconds", "gauge", "Seconds since the server started."},
    {"connected_clients", "redis_connected_clients", "gauge", "Clients connected."},
    {"blocked_clients", "redis_blocked_clients", "gauge", "Clients in a blocking command."},
    {"maxclients", "redis_config_maxclients", "gauge", "maxclients."},
    {"used_memory", "redis_memory_used_bytes", "gauge", "Memory the cache uses (index and items)."},
    {"used_memory_rss", "redis_memory_used_rss_bytes", "gauge", "Resident set size of the process."},
    {"maxmemory", "redis_memory_max_bytes", "gauge", "maxmemory."},
    {"total_connections_received", "redis_connections_received_total", "counter",
     "Connections accepted."},
    {"rejected_connections", "redis_rejected_connections_total", "counter",
     "Connections refused (maxclients)."},
    {"total_commands_processed", "redis_commands_processed_total", "counter", "Commands run."},
    {"instantaneous_ops_per_sec", "redis_instantaneous_ops_per_sec", "gauge",
     "Commands per second, lately."},
    {"total_net_input_bytes", "redis_net_input_bytes_total", "counter", "Bytes read from clients."},
    {"total_net_output_bytes", "redis_net_output_bytes_total", "counter", "Bytes sent to clients."},
    {"expired_keys", "redis_expired_keys_total", "counter", "Keys expired."},
    {"evicted_keys", "redis_evicted_keys_total", "counter", "Keys evicted."},
    {"keyspace_hits", "redis_keyspace_hits_total", "counter", "Key lookups that found the key."},
    {"keyspace_misses", "redis_keyspace_misses_total", "counter", "Key lookups that missed."},
    {"pubsub_channels", "redis_pubsub_channels", "gauge", "Channels with subscribers."},
    {"pubsub_patterns", "redis_pubsub_patterns", "gauge", "Patterns with subscribers."},
    {"used_cpu_sys", "redis_cpu_sys_seconds_total", "counter", "System CPU seconds."},
    {"used_cpu_user", "redis_cpu_user_seconds_total", "counter", "User CPU seconds."},
    {"rdb_changes_since_last_save", "redis_rdb_changes_since_last_save", "gauge",
     "Writes since the last save."},
    {"rdb_bgsave_in_progress", "redis_rdb_bgsave_in_progress", "gauge", "A BGSAVE runs."},
    {"rdb_last_save_time", "redis_rdb_last_save_timestamp_seconds", "gauge",
     "Unix time of the last save."},
    {"cluster_enabled", "redis_cluster_enabled", "gauge", "Cluster mode."},
    {"engine_items", "cudis_engine_items", "gauge", "Items the engine stores."},
    {"engine_capacity", "cudis_engine_capacity", "gauge", "Slots of the engine's index."},
    {"engine_load_factor", "cudis_engine_load_factor", "gauge", "Items per index slot."},
    {"engine_bytes_used", "cudis_engine_bytes_used", "gauge", "Engine memory in use."},
    {"engine_bytes_budget", "cudis_engine_bytes_budget", "gauge", "Engine memory budget."},
    {"engine_hits", "cudis_engine_hits_total", "counter", "Engine lookups that hit."},
    {"engine_misses", "cudis_engine_misses_total", "counter", "Engine lookups that missed."},
    {"engine_evicted_bucket", "cudis_engine_evicted_bucket_total", "counter",
     "Items evicted from a full bucket pair."},
    {"engine_evicted_memory", "cudis_engine_evicted_memory_total", "counter",
     "Items evicted for memory."},
    {"batch_count", "cudis_batches_total", "counter", "Batches run."},
    {"batch_ops", "cudis_batch_ops_total", "counter", "Engine ops in those batches."},
    {"gpu_available", "cudis_gpu_available", "gauge", "1 when NVML reports GPUs."},
    {"gpu_count", "cudis_gpu_count", "gauge", "GPUs NVML reports."},
    {NULL, NULL, NULL, NULL}};

static const metric_map *find(const char *field)
{
    for (const metric_map *m = MAP; m->field; m++) {
        if (!strcmp(m->field, field)) {
            return m;
        }
    }
    return NULL;
}

/* A label value: backslash, quote and newline escaped. */
static void label_value(sbuf *o, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"') {
            sbuf_add(o, "\\", 1);
            sbuf_add(o, v, 1);
        } else if (*v == '\n') {
            sbuf_adds(o, "\\n");
        } else {
            sbuf_add(o, v, 1);
        }
    }
}

static bool numeric(const char *v, double *x)
{
    char *end;
    if (!strncmp(v, "0x", 2)) {
        *x = (double)strtoull(v, &end, 16);
    } else {
        *x = strtod(v, &end);
    }
    return end != v && *end == '\0';
}

/* Per-GPU series: families in first-seen order, their samples after. */
typedef struct gpu_family {
    char name[96];
    sbuf samples;
} gpu_family;

static void gpu_series(gpu_family *fam, int *nfam, const char *idx, const char *suffix,
                       const char *value)
{
    double x;
    if (!numeric(value, &x)) {
        return;
    }
    char name[96];
    bool total = strstr(suffix, "errors") != NULL;
    snprintf(name, sizeof(name), "cudis_gpu_%s%s", suffix, total ? "_total" : "");
    int f = 0;
    while (f < *nfam && strcmp(fam[f].name, name) != 0) {
        f++;
    }
    if (f == *nfam) {
        if (*nfam == 64) {
            return;
        }
        snprintf(fam[f].name, sizeof(fam[f].name), "%s", name);
        fam[f].samples = (sbuf){0};
        (*nfam)++;
    }
    sbuf_printf(&fam[f].samples, "%s{gpu=\"%s\"} %.17g\n", name, idx, x);
}

void metrics_text(sbuf *o)
{
    sbuf info = {0};
    info_build(&info, 0, NULL, NULL); /* the default sections (gpu among them) */
    sbuf_add(&info, "", 1);
    sbuf_adds(o, "# HELP redis_up 1 while the server answers.\n# TYPE redis_up gauge\nredis_up 1\n");
    sbuf dbk = {0}, dbe = {0}, gpuinfo = {0};
    gpu_family fam[64];
    int nfam = 0;
    char names[16][3][128];
    memset(names, 0, sizeof(names));
    char *save = NULL;
    for (char *line = strtok_r(info.p, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        char *colon = strchr(line, ':');
        if (line[0] == '#' || colon == NULL) {
            continue;
        }
        *colon = '\0';
        const char *field = line, *value = colon + 1;
        const metric_map *m = find(field);
        double x;
        if (m != NULL && numeric(value, &x)) {
            sbuf_printf(o, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", m->name, m->help, m->name,
                        m->type, m->name, x);
            continue;
        }
        unsigned db;
        if (sscanf(field, "db%u", &db) == 1 && strstr(value, "keys=") == value) {
            unsigned long long keys = 0, exp = 0;
            if (sscanf(value, "keys=%llu,expires=%llu", &keys, &exp) == 2) {
                sbuf_printf(&dbk, "redis_db_keys{db=\"db%u\"} %llu\n", db, keys);
                sbuf_printf(&dbe, "redis_db_keys_expiring{db=\"db%u\"} %llu\n", db, exp);
            }
            continue;
        }
        unsigned g;
        int at = 0;
        if (sscanf(field, "gpu%u_%n", &g, &at) == 1 && at > 0 && g < 16) {
            const char *suffix = field + at;
            char idx[8];
            snprintf(idx, sizeof(idx), "%u", g);
            int k = !strcmp(suffix, "name") ? 0 : !strcmp(suffix, "uuid") ? 1 : !strcmp(suffix, "pci_bus_id") ? 2 : -1;
            if (k >= 0) {
                snprintf(names[g][k], sizeof(names[g][k]), "%s", value);
                if (k == 2) { /* name, uuid and pci come in that order */
                    sbuf_printf(&gpuinfo, "cudis_gpu_info{gpu=\"%u\",name=\"", g);
                    label_value(&gpuinfo, names[g][0]);
                    sbuf_adds(&gpuinfo, "\",uuid=\"");
                    label_value(&gpuinfo, names[g][1]);
                    sbuf_adds(&gpuinfo, "\",pci_bus_id=\"");
                    label_value(&gpuinfo, names[g][2]);
                    sbuf_adds(&gpuinfo, "\"} 1\n");
                }
            } else {
                gpu_series(fam, &nfam, idx, suffix, value);
            }
        }
    }
    if (dbk.len) {
        sbuf_adds(o, "# HELP redis_db_keys Keys in the database.\n# TYPE redis_db_keys gauge\n");
        sbuf_add(o, dbk.p, dbk.len);
        sbuf_adds(o, "# HELP redis_db_keys_expiring Keys with an expiry.\n"
                     "# TYPE redis_db_keys_expiring gauge\n");
        sbuf_add(o, dbe.p, dbe.len);
    }
    if (gpuinfo.len) {
        sbuf_adds(o, "# HELP cudis_gpu_info A GPU NVML reports (its name, UUID, PCI bus id).\n"
                     "# TYPE cudis_gpu_info gauge\n");
        sbuf_add(o, gpuinfo.p, gpuinfo.len);
    }
    for (int f = 0; f < nfam; f++) {
        bool total = strstr(fam[f].name, "_total") != NULL;
        sbuf_printf(o, "# HELP %s INFO gpu's field of that name.\n# TYPE %s %s\n", fam[f].name,
                    fam[f].name, total ? "counter" : "gauge");
        sbuf_add(o, fam[f].samples.p, fam[f].samples.len);
        sbuf_free(&fam[f].samples);
    }
    sbuf_free(&dbk);
    sbuf_free(&dbe);
    sbuf_free(&gpuinfo);
    sbuf_free(&info);
}

static struct evhttp *http;

static void on_request(struct evhttp_request *req, void *arg)
{
    (void)arg;
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        evhttp_send_error(req, 405, "Method Not Allowed");
        return;
    }
    sbuf text = {0};
    metrics_text(&text);
    struct evbuffer *body = evbuffer_new();
    evbuffer_add(body, text.p, text.len);
    sbuf_free(&text);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; version=0.0.4; charset=utf-8");
    evhttp_send_reply(req, 200, "OK", body);
    evbuffer_free(body);
}

int metrics_start(struct event_base *base)
{
    if (srv.cfg.metrics_port <= 0) {
        return 0;
    }
    http = evhttp_new(base);
    if (http == NULL) {
        return -1;
    }
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
    evhttp_set_max_headers_size(http, 16384);
    evhttp_set_max_body_size(http, 0);
    evhttp_set_timeout(http, 10);
    evhttp_set_cb(http, "/metrics", on_request, NULL);
    char *addrs = xstrdup(srv.cfg.bind ? srv.cfg.bind : "127.0.0.1");
    int bound = 0;
    char *save = NULL;
    for (char *a = strtok_r(addrs, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
        bool optional = a[0] == '-';
        const char *host = optional ? a + 1 : a;
        if (evhttp_bind_socket(http, host, (ev_uint16_t)srv.cfg.metrics_port) == 0) {
            bound++;
        } else if (!optional) {
            log_msg(LL_WARNING, "Could not bind the metrics port %s:%lld", host,
                    srv.cfg.metrics_port);
            free(addrs);
            return -1;
        }
    }
    free(addrs);
    log_msg(LL_NOTICE, "Prometheus metrics on port %lld (/metrics, %d address%s)",
            srv.cfg.metrics_port, bound, bound == 1 ? "" : "es");
    return 0;
}

void metrics_stop(void)
{
    if (http != NULL) {
        evhttp_free(http);
        http = NULL;
    }
}
