/*
 * server.c - the server's life: the loops and listeners started, loop 0 run
 * on the calling thread and the others on threads of their own, a graceful
 * shutdown on SIGTERM, SIGINT or SHUTDOWN (every loop answers what its
 * clients already sent), and everything freed.
 */
#include <errno.h>
#include <event2/thread.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cudis_time.h"
#include "server_internal.h"

server srv;

static struct event *shutdown_ev;

int64_t server_now_ms(void)
{
    return cudis_now_ms();
}

bool server_pipelined(void)
{
    const char *p = srv.cfg.engine_pipeline;
    return strcmp(p, "yes") == 0 ||
           (strcmp(p, "auto") == 0 && strcmp(engine_name(srv.eng), "gpu") == 0);
}

static void shutdown_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    log_msg(LL_WARNING, "User requested shutdown...");
    listeners_close();
    for (int i = 1; i < srv.nloops; i++) {
        loop_wake(&srv.loops[i]);
    }
    event_base_loopexit(srv.loops[0].base, NULL);
}

void server_request_shutdown(void)
{
    atomic_store(&srv.shutdown, 1);
    event_active(shutdown_ev, EV_TIMEOUT, 0);
}

static void sig_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    (void)arg;
    if (atomic_exchange(&srv.sig_pending, 0) == 0 && atomic_load(&srv.shutdown)) {
        return; /* already seen by server_poll_signals */
    }
    log_msg(LL_WARNING, "Received %s scheduling shutdown...", sig == SIGINT ? "SIGINT" : "SIGTERM");
    server_request_shutdown();
}

/* SIGHUP: the server goes on; the log file is opened again (logrotate). */
static void hup_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    (void)arg;
    log_reopen();
    log_msg(LL_NOTICE, "Received SIGHUP, log file reopened");
}

/* The pidfile, written once the listeners are bound (a second instance
 * that cannot bind leaves the first one's alone) and removed only by the
 * process that wrote it. */
static bool pid_written;

static void pidfile_write(void)
{
    if (srv.cfg.pidfile == NULL || srv.cfg.pidfile[0] == '\0') {
        return;
    }
    FILE *f = fopen(srv.cfg.pidfile, "w");
    if (f == NULL) {
        log_msg(LL_WARNING, "Failed to write PID file %s: %s", srv.cfg.pidfile, strerror(errno));
        return;
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    pid_written = true;
}

/* A supervisor told of the server's state: systemd's notify protocol (a
 * datagram of "KEY=value" lines to the unix socket in $NOTIFY_SOCKET, for
 * Type=notify units) or upstart's SIGSTOP, as Redis's `supervised`. */
static bool supervised_systemd(void)
{
    const char *m = srv.cfg.supervised ? srv.cfg.supervised : "no";
    return !strcmp(m, "systemd") || (!strcmp(m, "auto") && getenv("NOTIFY_SOCKET") != NULL);
}

static void sd_notify_msg(const char *msg)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (path == NULL || (path[0] != '/' && path[0] != '@') || strlen(path) >= 108) {
        log_msg(LL_WARNING, "systemd supervision requested, but NOTIFY_SOCKET is %s",
                path == NULL ? "not set" : "not a unix socket path");
        return;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    memcpy(sa.sun_path, path, n);
    if (sa.sun_path[0] == '@') {
        sa.sun_path[0] = '\0'; /* an abstract socket */
    }
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
                         (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0) {
        log_msg(LL_WARNING, "Can't send notification to systemd: %s", strerror(errno));
    }
    if (fd >= 0) {
        close(fd);
    }
}

static void supervise_ready(void)
{
    const char *m = srv.cfg.supervised ? srv.cfg.supervised : "no";
    if (supervised_systemd()) {
        log_msg(LL_NOTICE, "supervised by systemd. Please make sure you set appropriate values for "
                           "TimeoutStartSec and TimeoutStopSec in your service unit.");
        char msg[128];
        snprintf(msg, sizeof(msg), "STATUS=Ready to accept connections\nREADY=1\nMAINPID=%d\n",
                 (int)getpid());
        sd_notify_msg(msg);
    } else if (!strcmp(m, "upstart")) {
        if (getenv("UPSTART_JOB") == NULL) {
            log_msg(LL_WARNING, "upstart supervision requested, but UPSTART_JOB not found!");
        } else {
            log_msg(LL_NOTICE, "supervised by upstart, will stop to signal readiness.");
            raise(SIGSTOP);
            unsetenv("UPSTART_JOB");
        }
    }
}

void server_poll_signals(void)
{
    int sig = atomic_exchange(&srv.sig_pending, 0);
    if (sig != 0) {
        log_msg(LL_WARNING, "Received %s scheduling shutdown...",
                sig == SIGINT ? "SIGINT" : "SIGTERM");
        server_request_shutdown();
    }
}

/* libevent's signal handler only wakes the loop; this one also notes the
 * signal for a loop that is inside a busy script, then calls libevent's. */
static struct sigaction prev_sig[2];

static void sig_note(int sig)
{
    atomic_store(&srv.sig_pending, sig);
    const struct sigaction *p = &prev_sig[sig == SIGINT];
    if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
    }
}

static void sig_chain(void)
{
    int sigs[2] = {SIGTERM, SIGINT};
    for (int i = 0; i < 2; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = sig_note;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(sigs[i], &sa, &prev_sig[i]);
    }
}

/* ------------------------------------------------------------------------
 * File descriptors for maxclients (Redis's adjustOpenFilesLimit)
 * ---------------------------------------------------------------------- */

/* Beside the clients: listeners, the engine, the loops' pipes, the log. */
#define RESERVED_FDS 32

/* Raise the soft NOFILE limit to fit `clients` (as far as the hard limit or
 * privileges allow). Returns the clients the limit admits now; *err is the
 * errno of the last refusal (0 if none). */
static long long fd_room(long long clients, rlim_t *cur, int *err)
{
    rlim_t want = (rlim_t)clients + RESERVED_FDS;
    struct rlimit lim;
    *err = 0;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
        *err = errno;
        lim.rlim_cur = 1024;
        lim.rlim_max = 1024;
    } else if (lim.rlim_cur < want) {
        for (rlim_t f = want; f > lim.rlim_cur; f = f > 16 ? f - 16 : 0) {
            struct rlimit nl = {f, f > lim.rlim_max ? f : lim.rlim_max};
            if (setrlimit(RLIMIT_NOFILE, &nl) == 0) {
                lim.rlim_cur = f;
                break;
            }
            *err = errno;
        }
    }
    *cur = lim.rlim_cur;
    long long room = (long long)lim.rlim_cur - RESERVED_FDS;
    return room < clients ? room : clients;
}

int server_adjust_fd_limit(void)
{
    struct rlimit before;
    rlim_t old = getrlimit(RLIMIT_NOFILE, &before) == 0 ? before.rlim_cur : 0;
    rlim_t cur;
    int err;
    long long room = fd_room(srv.cfg.maxclients, &cur, &err);
    if (room >= srv.cfg.maxclients) {
        if (cur != old) {
            log_msg(LL_NOTICE,
                    "Increased maximum number of open files to %llu (it was originally set to "
                    "%llu).",
                    (unsigned long long)cur, (unsigned long long)old);
        }
        return 0;
    }
    log_msg(LL_WARNING,
            "You requested maxclients of %lld requiring at least %llu max file descriptors.",
            srv.cfg.maxclients, (unsigned long long)srv.cfg.maxclients + RESERVED_FDS);
    log_msg(LL_WARNING, "Server can't set maximum open files to %llu because of OS error: %s.",
            (unsigned long long)srv.cfg.maxclients + RESERVED_FDS, strerror(err ? err : EPERM));
    if (room < 1) {
        log_msg(LL_WARNING,
                "Your current 'ulimit -n' of %llu is not enough for the server to start. Please "
                "increase your open file limit to at least %llu. Exiting.",
                (unsigned long long)cur, (unsigned long long)RESERVED_FDS + 1);
        return -1;
    }
    srv.cfg.maxclients = room;
    log_msg(LL_WARNING,
            "Current maximum open files is %llu. maxclients has been reduced to %lld to "
            "compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
            (unsigned long long)cur, room);
    return 0;
}

bool server_fd_room(long long clients, char *err, size_t errlen)
{
    rlim_t cur;
    int e;
    long long room = fd_room(clients, &cur, &e);
    if (room >= clients) {
        return true;
    }
    snprintf(err, errlen,
             "The operating system is not able to handle the specified number of clients, try "
             "with %lld",
             room);
    return false;
}

static bool is_baseline(const char *eng)
{
    return !strcmp(eng, "lru") || !strcmp(eng, "fifo") || !strcmp(eng, "lfu") ||
           !strcmp(eng, "sieve") || !strcmp(eng, "s3fifo");
}

int server_policy(const char *name, const char *eng, uint32_t *code, char *err, size_t errlen)
{
    if (!strcmp(eng, "null")) {
        *code = CUDIS_POL_ALLKEYS_LRU; /* it holds nothing to evict */
        return 0;
    }
    if (is_baseline(eng)) { /* their own exact order, or none */
        bool own =
            !strcmp(name, "allkeys-lru") || (!strcmp(eng, "lfu") && !strcmp(name, "allkeys-lfu"));
        if (own || !strcmp(name, "noeviction")) {
            *code = own ? CUDIS_POL_ALLKEYS_LRU : CUDIS_POL_NOEVICTION;
            return 0;
        }
        snprintf(err, errlen,
                 "the %s engine evicts by its own exact order: %s is not available "
                 "there (noeviction is)",
                 eng, name);
        return -1;
    }
    if (engine_policy_code(name, code) == 0) {
        return 0;
    }
    snprintf(err, errlen, "unknown policy %s", name);
    return -1;
}

const char *server_policy_shown(void)
{
    const char *eng = engine_name(srv.eng);
    const char *p = srv.cfg.maxmemory_policy;
    if (!strcmp(eng, "null")) {
        return "noeviction";
    }
    if (is_baseline(eng) && strcmp(p, "noeviction") != 0) {
        static const char *const shown[][2] = {{"lru", "allkeys-lru"},
                                               {"lfu", "allkeys-lfu"},
                                               {"fifo", "allkeys-fifo"},
                                               {"sieve", "allkeys-sieve"},
                                               {"s3fifo", "allkeys-s3fifo"}};
        for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
            if (!strcmp(eng, shown[i][0])) {
                return shown[i][1];
            }
        }
    }
    return p;
}

int64_t server_aged_arg(long long idle, long long freq, int64_t now_ms)
{
    if (strstr(srv.cfg.maxmemory_policy, "lfu") != NULL) {
        return freq;
    }
    return idle >= 0 ? observe_ticks_since(idle, now_ms) : -1;
}

void server_loops_setup(void)
{
    if (srv.cfg.io_threads > 1) {
        evthread_use_pthreads();
    }
    srv.nloops = (int)srv.cfg.io_threads;
    srv.loops = xcalloc((size_t)srv.nloops, sizeof(loop));
    pthread_rwlock_init(&srv.eng_lock, NULL);
    for (int i = 0; i < srv.nloops; i++) {
        loop_setup(&srv.loops[i], i);
    }
}

void server_loops_teardown(void)
{
    for (int i = 0; i < srv.nloops; i++) {
        loop_teardown(&srv.loops[i]);
    }
    free(srv.loops);
    srv.loops = NULL;
}

int server_start(void)
{
    server_loops_setup();
    shutdown_ev = event_new(srv.loops[0].base, -1, 0, shutdown_cb, NULL);
    event_priority_set(shutdown_ev, 1);
    srv.sig_ev[0] = evsignal_new(srv.loops[0].base, SIGTERM, sig_cb, NULL);
    srv.sig_ev[1] = evsignal_new(srv.loops[0].base, SIGINT, sig_cb, NULL);
    srv.sig_ev[2] = evsignal_new(srv.loops[0].base, SIGHUP, hup_cb, NULL);
    event_add(srv.sig_ev[0], NULL);
    event_add(srv.sig_ev[1], NULL);
    event_add(srv.sig_ev[2], NULL);
    sig_chain();

    if (tls_setup() != 0 || listeners_open() != 0) {
        return 1;
    }
    if (srv.cfg.cluster_enabled && cluster_setup() != 0) {
        listeners_close();
        return 1;
    }
    observe_clock_seed(cudis_now_ms());            /* before any key: idle times can be given */
    int loaded = rdb_load_at_start(&srv.loops[0]); /* (clients meanwhile get -LOADING) */
    if (loaded != 0) {
        listeners_close();
        return loaded == 1 ? 0 : 1;
    }
    gpumon_start();
    if (metrics_start(srv.loops[0].base) != 0) {
        listeners_close();
        gpumon_stop();
        return 1;
    }
    pidfile_write();
    log_msg(LL_NOTICE, "Ready to accept connections tcp port=%lld tls port=%lld io-threads=%d",
            srv.cfg.port, srv.cfg.tls_port, srv.nloops);
    supervise_ready();
    for (int i = 1; i < srv.nloops; i++) {
        pthread_create(&srv.loops[i].tid, NULL, loop_thread, &srv.loops[i]);
    }
    loop_run(&srv.loops[0]);
    loop_final(&srv.loops[0]);
    for (int i = 1; i < srv.nloops; i++) {
        pthread_join(srv.loops[i].tid, NULL);
    }
    if (supervised_systemd()) {
        sd_notify_msg("STOPPING=1\nSTATUS=Shutting down\n");
    }
    rdb_at_exit(&srv.loops[0]); /* the other loops are joined: nothing else runs */
    gpumon_stop();
    metrics_stop();
    if (srv.cfg.cluster_enabled) {
        cluster_shutdown();
    }
    if (srv.cfg.unixsocket && srv.cfg.unixsocket[0]) {
        unlink(srv.cfg.unixsocket);
    }
    event_free(shutdown_ev);
    shutdown_ev = NULL;
    for (int i = 0; i < 3; i++) {
        event_free(srv.sig_ev[i]);
        srv.sig_ev[i] = NULL;
    }
    if (pid_written) {
        unlink(srv.cfg.pidfile);
    }
    server_loops_teardown();
    log_msg(LL_WARNING, "cudis is now ready to exit, bye bye...");
    return 0;
}
