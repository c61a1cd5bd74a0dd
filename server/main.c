/*
 * main.c - cudis-server's entry point: arguments as redis-server takes them
 * (an optional config file, then --option value pairs), daemonizing, the
 * pidfile, the engine, and the server run.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudis_time.h"
#include "server.h"
#include "script.h"
#include "server_internal.h"

static void daemonize(void)
{
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid > 0) {
        _exit(0);
    }
    setsid();
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO) {
            close(fd);
        }
    }
}

static int parse_args(int argc, char **argv, char *err, size_t errlen)
{
    int i = 1;
    if (i < argc && strncmp(argv[i], "--", 2) != 0) {
        srv.config_file = argv[i];
        char path[4096];
        if (realpath(argv[i], path)) {
            srv.config_file = xstrdup(path);
        }
        if (config_load_file(&srv.cfg, argv[i], err, errlen) != 0) {
            return -1;
        }
        i++;
    }
    sbuf text = {0};
    for (; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) != 0) {
            snprintf(err, errlen, "Invalid argument '%s': options are written --name value", argv[i]);
            sbuf_free(&text);
            return -1;
        }
        sbuf_adds(&text, argv[i] + 2);
        /* values until the next --option; quoted so spaces survive */
        while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
            i++;
            sbuf_adds(&text, " \"");
            for (const char *p = argv[i]; *p; p++) {
                if (*p == '"' || *p == '\\') {
                    sbuf_add(&text, "\\", 1);
                }
                sbuf_add(&text, p, 1);
            }
            sbuf_adds(&text, "\"");
        }
        sbuf_adds(&text, "\n");
    }
    sbuf_add(&text, "", 1);
    int rc = config_load_text(&srv.cfg, text.p, err, errlen);
    sbuf_free(&text);
    return rc;
}

/* The checked allocator could not allocate: say so in the log (as Redis's
 * zmalloc handler does); the allocator aborts after. */
static void oom_handler(size_t size)
{
    log_msg(LL_WARNING, "Out Of Memory allocating %zu bytes!", size);
}

void server_state_setup(void)
{
    config_defaults(&srv.cfg);
    srv.start_ms = cudis_now_ms();
    srv.start_ns = cudis_mono_ns();
    rdb_setup();
    atomic_store(&srv.next_id, 1);
    for (int i = 0; i < CUDIS_MAX_DBS; i++) {
        atomic_store(&srv.db_map[i], (uint8_t)i);
    }
}

int server_engine_setup(void)
{
    engine_config ec;
    engine_config_default(&ec);
    ec.memory_bytes = (uint64_t)srv.cfg.maxmemory;
    ec.threads = (uint32_t)srv.cfg.engine_threads;
    ec.ways = (uint32_t)srv.cfg.engine_ways;
    ec.expected_item_bytes = (uint32_t)srv.cfg.engine_item_bytes;
    ec.index_resize = srv.cfg.engine_index_resize;
    ec.allow_empty_key = true;
    ec.lfu_log_factor = (uint32_t)srv.cfg.lfu_log_factor;
    ec.lfu_decay_time = (uint32_t)srv.cfg.lfu_decay_time;
    ec.shards = (uint32_t)srv.cfg.engine_shards;
    const char *dv = srv.cfg.engine_devices ? srv.cfg.engine_devices : "";
    while (*dv) { /* "0,1,2" */
        char *end;
        long d = strtol(dv, &end, 10);
        if (end == dv || d < 0 || d > 1023 || (*end != ',' && *end != '\0') ||
            ec.ndevices == CUDIS_MAX_SHARDS) {
            log_msg(LL_WARNING, "engine-devices '%s': a comma-separated list of up to %d CUDA "
                                "device numbers is expected", srv.cfg.engine_devices,
                    CUDIS_MAX_SHARDS);
            return -1;
        }
        ec.devices[ec.ndevices++] = (int)d;
        dv = end + (*end == ',');
    }
    memcpy(srv.devices, ec.devices, sizeof(srv.devices));
    srv.ndevices = (int)ec.ndevices;
    char perr[256];
    if (server_policy(srv.cfg.maxmemory_policy, srv.cfg.engine, &ec.policy, perr, sizeof(perr)) !=
        0) {
        log_msg(LL_WARNING, "maxmemory-policy %s: %s", srv.cfg.maxmemory_policy, perr);
        return -1;
    }
    long long mv = srv.cfg.proto_max_bulk_len; /* the engine says when one cannot fit */
    ec.max_val_len = (uint32_t)(mv > 0xfffffff0LL ? 0xfffffff0LL : mv);
    snprintf(srv.engine_req, sizeof(srv.engine_req), "%s", srv.cfg.engine);
    char why[512] = "";
    srv.eng = engine_create(srv.cfg.engine, &ec, why, sizeof(why));
    if (srv.eng == NULL) {
        log_msg(LL_WARNING, "Could not create engine '%s': %s", srv.cfg.engine, why);
        return -1;
    }
    snprintf(srv.engine_why, sizeof(srv.engine_why), "%s", why);
    for (char *p = srv.engine_why; *p; p++) {
        if (*p == '\r' || *p == '\n') {
            *p = ' ';
        }
    }
    log_msg(LL_NOTICE, "Engine %s (requested %s): %s", engine_name(srv.eng), srv.cfg.engine, why);
    return 0;
}

int server_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            config_print_help(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-v")) {
            printf("cudis-server v=%s (Redis protocol %s compatible)\n", CUDIS_VERSION,
                   REDIS_COMPAT_VERSION);
            return 0;
        }
        if (!strcmp(argv[i], "--print-conf")) {
            config_write_conf(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--print-man")) {
            config_write_man(stdout, CUDIS_VERSION);
            return 0;
        }
    }
    server_state_setup();
    ssize_t n = readlink("/proc/self/exe", srv.executable, sizeof(srv.executable) - 1);
    if (n > 0) {
        srv.executable[n] = '\0';
    }
    char err[1024];
    if (parse_args(argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    /* Redis works inside `dir` (it changes to it as it reads the option):
     * the other options' relative paths (cluster-config-file, aclfile,
     * logfile, pidfile, unixsocket) are taken there. dir is absolute. */
    if (srv.cfg.dir != NULL && srv.cfg.dir[0] != '\0' && chdir(srv.cfg.dir) != 0) {
        fprintf(stderr, "Can't chdir to '%s': %s\n", srv.cfg.dir, strerror(errno));
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    if (srv.cfg.daemonize) {
        daemonize();
    }
    log_setup();
    cudis_set_oom_handler(oom_handler);
    log_msg(LL_NOTICE, "cudis-server %s starting, pid=%d", CUDIS_VERSION, (int)getpid());
    /* before any thread starts: the loops and the engine's threads inherit it */
    int pin = util_cpulist_pin(srv.cfg.server_cpulist);
    if (pin != 0) {
        log_msg(LL_WARNING, "Can't run on server_cpulist %s: %s", srv.cfg.server_cpulist,
                strerror(pin));
    }
    if (server_adjust_fd_limit() != 0) {
        return 1;
    }
    cmd_table_setup();
    if (acl_setup(err, sizeof(err)) != 0) {
        log_msg(LL_WARNING, "%s", err);
        acl_teardown();
        return 1;
    }
    if (server_engine_setup() != 0) {
        acl_teardown();
        return 1;
    }
    int rc = server_start();
    tls_teardown(); /* every connection is freed: the contexts go */
    script_shutdown();
    function_shutdown();
    engine_destroy(srv.eng);
    srv.eng = NULL;
    acl_teardown();
    config_free(&srv.cfg);
    return rc;
}
