/*
 * test_load_e2e.c - a short cudis-bench run (load_run) against Debian's
 * redis-server and memcached on free loopback ports: keys load, every
 * read hits, latencies are recorded, the item count matches. Skipped when
 * the server binary is not installed.
 */
#include "load_bench.h"

#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof(a);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static bool port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((uint16_t)port)};
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

static pid_t start_server(char *const argv[], int port)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        freopen("/dev/null", "w", stdout);
        execv(argv[0], argv);
        _exit(127);
    }
    for (int i = 0; i < 200 && !port_open(port); i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    cr_assert(port_open(port), "%s did not start on port %d", argv[0], port);
    return pid;
}

static void stop_server(pid_t pid)
{
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

static void short_run(int port, enum load_protocol proto, int mget)
{
    struct load_opts o;
    load_opts_default(&o);
    o.port = port;
    o.proto = proto;
    o.conns = 4;
    o.pipeline = 4;
    o.keys = 2000;
    o.requests = 4000;
    o.mget = mget;
    o.warmup_requests = mget ? 0 : 1000; /* warm-up by count: not in the results */
    o.quiet = true;
    o.timeout_s = 5.0;
    struct load_result *r = calloc(1, sizeof(*r));
    cr_assert_eq(load_run(&o, r), 0);
    cr_assert_eq(r->loaded, 2000);
    cr_assert_eq(r->requests, 4000, "measured %llu requests, asked for 4000",
                 (unsigned long long)r->requests);
    cr_assert_eq(r->errors, 0);
    cr_assert_gt(r->gets, 0);
    cr_assert_gt(r->sets, 0);
    cr_assert_eq(r->misses, 0, "every key was loaded, yet %llu misses", (unsigned long long)r->misses);
    cr_assert_eq(r->hits, r->key_reads);
    if (mget) {
        cr_assert_eq(r->key_reads, r->gets * (uint64_t)mget);
    }
    cr_assert_eq(r->hist.count, r->requests);
    cr_assert_gt(r->hist.max, 0);
    cr_assert_gt(r->elapsed_s, 0.0);
    cr_assert_eq(load_query_items(&o), 2000);
    free(r);
}

Test(load_e2e, redis_server)
{
    if (access("/usr/bin/redis-server", X_OK) != 0) {
        cr_skip_test("redis-server not installed");
    }
    int port = free_port();
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    char dir[] = "/tmp/cudis-load-e2e-XXXXXX"; /* empty: never load a stray dump.rdb */
    cr_assert_not_null(mkdtemp(dir));
    char *argv[] = {"/usr/bin/redis-server", "--port", ps, "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no", "--dir", dir, NULL};
    pid_t pid = start_server(argv, port);
    short_run(port, LOAD_PROTO_RESP, 0);
    short_run(port, LOAD_PROTO_RESP, 10);
    stop_server(pid);
    rmdir(dir);
}

Test(load_e2e, memcached)
{
    if (access("/usr/bin/memcached", X_OK) != 0) {
        cr_skip_test("memcached not installed");
    }
    int port = free_port();
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    char *argv[] = {"/usr/bin/memcached", "-u", "root", "-l", "127.0.0.1", "-p", ps, "-m", "16",
                    "-t", "1", NULL};
    pid_t pid = start_server(argv, port);
    short_run(port, LOAD_PROTO_MEMCACHE, 0);
    short_run(port, LOAD_PROTO_MEMCACHE, 10);
    stop_server(pid);
}
