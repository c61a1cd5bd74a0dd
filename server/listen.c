/*
 * listen.c - the listeners (TCP on every bind address, a unix socket) on
 * loop 0's event base, and the checks at accept: maxclients and protected
 * mode. An accepted fd goes to a loop (loop_hand_fd). A listener's arg is
 * its kind (CONN_KIND_*): plaintext TCP, unix socket or TLS (tls-port).
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cudis_time.h"
#include "server_internal.h"

static const char *DENIED_MSG =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same host "
    "the server is running, however MAKE SURE Redis is not publicly accessible from internet if "
    "you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the "
    "protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    "authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.\r\n";

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int sl,
                      void *arg)
{
    (void)l;
    (void)sl;
    int kind = (int)(intptr_t)arg;
    bool is_unix = kind == CONN_KIND_UNIX;
    /* a TLS client cannot read a plaintext refusal: over maxclients it is
     * closed without one (Redis's write fails the same way before the
     * handshake); protected mode refuses it after its handshake, over TLS
     * (listen_tls_refused) */
    bool tls = kind == CONN_KIND_TLS;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    if (!is_unix) {
        memcpy(&ss, sa, (size_t)sl < sizeof(ss) ? (size_t)sl : sizeof(ss));
    }
    atomic_fetch_add(&srv.total_conns, 1);
    if (atomic_load(&srv.connected) >= srv.cfg.maxclients) {
        static const char msg[] = "-ERR max number of clients reached\r\n";
        ssize_t w = tls ? 0 : write(fd, msg, sizeof(msg) - 1);
        (void)w;
        close(fd);
        atomic_fetch_add(&srv.rejected_conns, 1);
        log_msg(LL_VERBOSE, "Rejected connection: max number of clients reached");
        return;
    }
    if (!is_unix && !tls && srv.cfg.protected_mode && acl_default_nopass() &&
        !conn_addr_is_local(&ss)) {
        ssize_t w = write(fd, DENIED_MSG, strlen(DENIED_MSG));
        (void)w;
        close(fd);
        atomic_fetch_add(&srv.rejected_conns, 1);
        log_msg(LL_WARNING, "Rejected a non-loopback connection: protected mode, no password");
        return;
    }
    atomic_fetch_add(&srv.connected, 1);
    loop_hand_fd(fd, kind);
}

bool listen_tls_refused(conn *c)
{
    if (!srv.cfg.protected_mode || (srv.cfg.requirepass != NULL && srv.cfg.requirepass[0]) ||
        (c->flags & CONN_LOCAL)) {
        return false;
    }
    sbuf_add(&c->out, DENIED_MSG, strlen(DENIED_MSG));
    c->flags |= CONN_CLOSE_AFTER_REPLY;
    conn_want_write(c);
    atomic_fetch_add(&srv.rejected_conns, 1);
    log_msg(LL_WARNING, "Rejected a non-loopback connection: protected mode, no password");
    return true;
}

/* accept() failed for want of file descriptors (or memory): without a
 * pause libevent retries at once, for ever, at 100% CPU. The listeners
 * stop for 100 ms; the log says so at most once a second. */
static struct event *accept_retry_ev;

static void accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    for (int i = 0; i < srv.nlisteners; i++) {
        evconnlistener_enable(srv.listeners[i]);
    }
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
    (void)l;
    (void)arg;
    int err = EVUTIL_SOCKET_ERROR();
    static int64_t last_log;
    static uint64_t unlogged;
    int64_t now = cudis_now_ms();
    if (now - last_log >= 1000) {
        log_msg(LL_WARNING,
                "Accepting client connection: %s (listeners paused 100 ms; %llu more since "
                "the last line)",
                evutil_socket_error_to_string(err), (unsigned long long)unlogged);
        last_log = now;
        unlogged = 0;
    } else {
        unlogged++;
    }
    for (int i = 0; i < srv.nlisteners; i++) {
        evconnlistener_disable(srv.listeners[i]);
    }
    if (accept_retry_ev == NULL) {
        accept_retry_ev = evtimer_new(srv.loops[0].base, accept_retry_cb, NULL);
    }
    struct timeval tv = {0, 100000};
    evtimer_add(accept_retry_ev, &tv);
}

int listen_socket(const char *addr, int port, bool optional, int *fd_out)
{
    *fd_out = -1;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    int rc = getaddrinfo(addr, ps, &hints, &res);
    if (rc != 0) {
        if (optional) {
            return 0;
        }
        log_msg(LL_WARNING, "Could not create server TCP listening socket %s:%d: %s", addr, port,
                gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) {
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (ai->ai_family == AF_INET6) {
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        }
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
            listen(fd, (int)srv.cfg.tcp_backlog) == 0) {
            break;
        }
        int e = errno;
        close(fd);
        fd = -1;
        errno = e;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        if (optional &&
            (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT)) {
            return 0;
        }
        log_msg(LL_WARNING, "Warning: Could not create server TCP listening socket %s:%d: bind: %s",
                addr, port, strerror(errno));
        return -1;
    }
    evutil_make_socket_nonblocking(fd);
    *fd_out = fd;
    return 0;
}

static int listen_tcp(const char *addr, int port, bool optional, int kind)
{
    int fd;
    if (listen_socket(addr, port, optional, &fd) != 0) {
        return -1;
    }
    if (fd < 0) {
        return 0; /* an optional address this host lacks */
    }
    struct evconnlistener *l =
        evconnlistener_new(srv.loops[0].base, accept_cb, (void *)(intptr_t)kind,
                           LEV_OPT_CLOSE_ON_FREE, 0, fd);
    if (l == NULL) {
        close(fd);
        return -1;
    }
    evconnlistener_set_error_cb(l, accept_error_cb);
    srv.listener_kind[srv.nlisteners] = (uint8_t)kind;
    srv.listeners[srv.nlisteners++] = l;
    return 0;
}

static int listen_unix(const char *path, int perm)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) {
        return -1;
    }
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        log_msg(LL_WARNING, "unixsocket path too long: %s", path);
        close(fd);
        return -1;
    }
    strcpy(sa.sun_path, path);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fd, (int)srv.cfg.tcp_backlog) != 0) {
        log_msg(LL_WARNING, "Failed opening Unix socket: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (perm) {
        chmod(path, (mode_t)perm);
    }
    evutil_make_socket_nonblocking(fd);
    struct evconnlistener *l =
        evconnlistener_new(srv.loops[0].base, accept_cb, (void *)(intptr_t)CONN_KIND_UNIX,
                           LEV_OPT_CLOSE_ON_FREE, 0, fd);
    if (l == NULL) {
        close(fd);
        return -1;
    }
    evconnlistener_set_error_cb(l, accept_error_cb);
    srv.listener_kind[srv.nlisteners] = CONN_KIND_UNIX;
    srv.listeners[srv.nlisteners++] = l;
    return 0;
}

/* A TCP listener of `kind` on port at every bind address: 0, or 1 logged. */
static int listen_binds(int port, int kind)
{
    char *binds = xstrdup(srv.cfg.bind ? srv.cfg.bind : "");
    int ok = 0;
    for (char *a = strtok(binds, " "); a; a = strtok(NULL, " ")) {
        bool optional = a[0] == '-';
        if (srv.nlisteners >= (int)(sizeof(srv.listeners) / sizeof(srv.listeners[0]))) {
            log_msg(LL_WARNING, "Too many bind addresses");
            free(binds);
            return 1;
        }
        if (listen_tcp(optional ? a + 1 : a, port, optional, kind) != 0) {
            free(binds);
            return 1;
        }
        ok++;
    }
    free(binds);
    if (ok == 0) {
        log_msg(LL_WARNING, "No bind address to listen on");
        return 1;
    }
    return 0;
}

int listeners_open(void)
{
    if (srv.cfg.port > 0 && listen_binds((int)srv.cfg.port, CONN_KIND_TCP) != 0) {
        return 1;
    }
    if (srv.cfg.tls_port > 0 && listen_binds((int)srv.cfg.tls_port, CONN_KIND_TLS) != 0) {
        return 1;
    }
    if (srv.cfg.unixsocket && srv.cfg.unixsocket[0]) {
        if (listen_unix(srv.cfg.unixsocket, (int)srv.cfg.unixsocketperm) != 0) {
            return 1;
        }
    }
    if (srv.nlisteners == 0) {
        log_msg(LL_WARNING, "Configured to not listen anywhere, exiting.");
        return 1;
    }
    return 0;
}

void listeners_close(void)
{
    for (int i = 0; i < srv.nlisteners; i++) {
        evconnlistener_free(srv.listeners[i]);
    }
    srv.nlisteners = 0;
    if (accept_retry_ev != NULL) {
        event_free(accept_retry_ev);
        accept_retry_ev = NULL;
    }
}

void listeners_poll(void)
{
    for (int i = 0; i < srv.nlisteners; i++) {
        evutil_socket_t lfd = evconnlistener_get_fd(srv.listeners[i]);
        for (int n = 0; n < 64; n++) {
            struct sockaddr_storage ss;
            socklen_t sl = sizeof(ss);
            int fd = accept(lfd, (struct sockaddr *)&ss, &sl);
            if (fd < 0) {
                break;
            }
            evutil_make_socket_nonblocking(fd);
            evutil_make_socket_closeonexec(fd);
            accept_cb(srv.listeners[i], fd, (struct sockaddr *)&ss, (int)sl,
                      (void *)(intptr_t)srv.listener_kind[i]);
        }
    }
}
