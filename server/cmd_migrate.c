/*
 * cmd_migrate.c - MIGRATE host port key|"" db timeout [COPY] [REPLACE]
 * [AUTH pw] [AUTH2 user pw] [KEYS key...]: the keys' DUMP payloads sent
 * to another server as RESTORE (RESTORE-ASKING in cluster mode, so the
 * importing node takes them before it owns the slot), pipelined, then
 * deleted here unless COPY. Runs alone (CMD_EXCL) and blocks its loop for
 * at most `timeout` ms per step, as Redis's does. Connections are kept
 * for the next MIGRATE to the same address, up to 10 s idle (Redis's
 * migrate cache: resharding sends one MIGRATE per few keys).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cudis_time.h"
#include "server_internal.h"

/* A connected socket to host:port within timeout_ms, or -1. */
static int dial(const char *host, const char *port, long long timeout_ms)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0) {
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            int err = 0;
            socklen_t el = sizeof(err);
            if (errno != EINPROGRESS || poll(&pf, 1, (int)timeout_ms) != 1 ||
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
                close(fd);
                fd = -1;
            }
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) { /* blocking from now on, each read and write bounded */
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        struct timeval tv = {.tv_sec = (time_t)(timeout_ms / 1000),
                             .tv_usec = (suseconds_t)((timeout_ms % 1000) * 1000)};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
    return fd;
}

/* The connection cache. MIGRATE runs with the engine held exclusively
 * (CMD_EXCL), so one runs at a time. */
#define MIGRATE_CACHE 16
#define MIGRATE_IDLE_MS 10000
static struct {
    char addr[280]; /* "host:port" */
    int fd;
    int64_t last;
} mcache[MIGRATE_CACHE];
static int mcache_n;

static void cache_drop(int i)
{
    close(mcache[i].fd);
    mcache[i] = mcache[--mcache_n];
}

/* A connection to host:port: cached (*cached set) or new (then cached). */
static int cache_get(const char *host, const char *port, long long timeout_ms, bool *cached)
{
    int64_t now = cudis_now_ms();
    char addr[280];
    snprintf(addr, sizeof(addr), "%s:%s", host, port);
    for (int i = 0; i < mcache_n; i++) {
        if (now - mcache[i].last > MIGRATE_IDLE_MS) {
            cache_drop(i--);
        }
    }
    for (int i = 0; i < mcache_n; i++) {
        if (strcmp(mcache[i].addr, addr) == 0) {
            mcache[i].last = now;
            *cached = true;
            return mcache[i].fd;
        }
    }
    *cached = false;
    int fd = dial(host, port, timeout_ms);
    if (fd < 0) {
        return -1;
    }
    if (mcache_n == MIGRATE_CACHE) {
        cache_drop(0);
    }
    snprintf(mcache[mcache_n].addr, sizeof(mcache[mcache_n].addr), "%s", addr);
    mcache[mcache_n].fd = fd;
    mcache[mcache_n].last = now;
    mcache_n++;
    return fd;
}

/* A cached connection that failed goes. */
static void cache_forget(int fd)
{
    for (int i = 0; i < mcache_n; i++) {
        if (mcache[i].fd == fd) {
            cache_drop(i);
            return;
        }
    }
    close(fd);
}

static bool send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) {
            if (w < 0 && errno == EINTR) {
                continue;
            }
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* One reply line (+OK, -ERR ...) into line; false on error or timeout. */
static bool read_line(int fd, char *rbuf, size_t *rlen, char *line, size_t cap)
{
    for (;;) {
        char *nl = memchr(rbuf, '\n', *rlen);
        if (nl != NULL) {
            size_t n = (size_t)(nl - rbuf) + 1;
            size_t keep = n - 1 < cap - 1 ? n - 1 : cap - 1;
            memcpy(line, rbuf, keep);
            if (keep > 0 && line[keep - 1] == '\r') {
                keep--;
            }
            line[keep] = '\0';
            memmove(rbuf, rbuf + n, *rlen - n);
            *rlen -= n;
            return true;
        }
        if (*rlen == 4096) {
            *rlen = 0; /* a line this long: only its end matters */
        }
        ssize_t r = recv(fd, rbuf + *rlen, 4096 - *rlen, 0);
        if (r <= 0) {
            if (r < 0 && errno == EINTR) {
                continue;
            }
            return false;
        }
        *rlen += (size_t)r;
    }
}

static void put_cmd(sbuf *o, int n, const char *const *args, const uint32_t *lens)
{
    sbuf_printf(o, "*%d\r\n", n);
    for (int i = 0; i < n; i++) {
        sbuf_printf(o, "$%u\r\n", lens[i]);
        sbuf_add(o, args[i], lens[i]);
        sbuf_add(o, "\r\n", 2);
    }
}

void cmd_migrate(conn *c, int argc, char **argv, uint32_t *lens)
{
    bool copy = false, replace = false;
    int first = 3, nkeys = 1;
    const char *user = NULL, *pass = NULL;
    uint32_t ulen = 0, plen = 0;
    for (int j = 6; j < argc; j++) {
        bool more = j + 1 < argc;
        if (util_eq(argv[j], lens[j], "copy")) {
            copy = true;
        } else if (util_eq(argv[j], lens[j], "replace")) {
            replace = true;
        } else if (util_eq(argv[j], lens[j], "auth") && more) {
            pass = argv[++j];
            plen = lens[j];
        } else if (util_eq(argv[j], lens[j], "auth2") && j + 2 < argc) {
            user = argv[++j];
            ulen = lens[j];
            pass = argv[++j];
            plen = lens[j];
        } else if (util_eq(argv[j], lens[j], "keys")) {
            if (lens[3] != 0) {
                conn_error(c, "ERR When using MIGRATE KEYS option, the key argument must be set "
                              "to the empty string");
                return;
            }
            first = j + 1;
            nkeys = argc - j - 1;
            break;
        } else {
            conn_error(c, "ERR syntax error");
            return;
        }
    }
    long long timeout, dbid;
    if (!arg_ll(c, argv[5], lens[5], &timeout) || !arg_ll(c, argv[4], lens[4], &dbid)) {
        return;
    }
    if (timeout <= 0) {
        timeout = 1000;
    }
    /* the keys there are, their values and expiries */
    batcher *b = &c->lp->b;
    for (int k = 0; k < nkeys; k++) {
        bighash_unchunk(c, argv[first + k], lens[first + k]);
    }
    for (int k = 0; k < nkeys; k++) {
        uint32_t i = batch_add_op(b, CUDIS_OP_GET, CUDIS_F_NOSTATS, argv[first + k],
                                  lens[first + k], NULL, 0, 0, 0, false);
        b->ops[i].type = CUDIS_TYPE_ANY;
    }
    run_alone(c);
    int64_t now = cudis_now_ms();
    sbuf out = {0};
    int sent = 0;
    bool *moved = xcalloc((size_t)nkeys, sizeof(bool));
    char host[256], port[16], db[24];
    snprintf(host, sizeof(host), "%.*s", (int)(lens[1] < 255 ? lens[1] : 255), argv[1]);
    snprintf(port, sizeof(port), "%.*s", (int)(lens[2] < 15 ? lens[2] : 15), argv[2]);
    snprintf(db, sizeof(db), "%lld", dbid);
    if (pass != NULL) {
        const char *a[3] = {"AUTH", user ? user : pass, pass};
        uint32_t l[3] = {4, user ? ulen : plen, plen};
        put_cmd(&out, user ? 3 : 2, a, l);
    }
    {
        const char *a[2] = {"SELECT", db};
        uint32_t l[2] = {6, (uint32_t)strlen(db)};
        put_cmd(&out, 2, a, l);
    }
    const char *restore = srv.cfg.cluster_enabled ? "RESTORE-ASKING" : "RESTORE";
    for (int k = 0; k < nkeys; k++) {
        const cudis_result *r = &b->res[k];
        if (r->status != CUDIS_OK || !(r->flags & CUDIS_R_VALUE)) {
            continue;
        }
        sbuf payload = {0};
        dump_payload(&payload, r, b->out + r->val_off);
        long long ttl = r->num > 0 ? r->num - now : 0;
        if (r->num > 0 && ttl < 1) {
            ttl = 1;
        }
        char ttls[24];
        snprintf(ttls, sizeof(ttls), "%lld", ttl);
        const char *a[5] = {restore, argv[first + k], ttls, payload.p, "REPLACE"};
        uint32_t l[5] = {(uint32_t)strlen(restore), lens[first + k], (uint32_t)strlen(ttls),
                         (uint32_t)payload.len, 7};
        put_cmd(&out, replace ? 5 : 4, a, l);
        sbuf_free(&payload);
        moved[k] = true;
        sent++;
    }
    batch_reset(b);
    if (sent == 0) {
        free(moved);
        sbuf_free(&out);
        resp_status(&c->out, "NOKEY");
        return;
    }
    /* send, then read the replies; a cached connection the target closed
     * meanwhile is retried once on a new one, when nothing was answered
     * (Redis's may_retry) */
    bool *acked = xcalloc((size_t)nkeys, sizeof(bool));
    char err[512] = "";
    bool io = false;
    for (int attempt = 0; attempt < 2; attempt++) {
        bool cached;
        int fd = cache_get(host, port, timeout, &cached);
        err[0] = '\0';
        if (fd < 0) {
            snprintf(err, sizeof(err), "IOERR error or timeout connecting to the client");
            io = true;
            break;
        }
        struct timeval tv = {.tv_sec = (time_t)(timeout / 1000),
                             .tv_usec = (suseconds_t)((timeout % 1000) * 1000)};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)); /* this call's timeout */
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        io = !send_all(fd, out.p, out.len);
        if (io) {
            snprintf(err, sizeof(err), "IOERR error or timeout writing to target instance");
        }
        char rbuf[4096], line[400];
        size_t rlen = 0;
        int replies = (pass != NULL) + 1 + sent, got = 0;
        for (int i = 0, k = -1; i < replies && !io; i++) {
            if (!read_line(fd, rbuf, &rlen, line, sizeof(line))) {
                snprintf(err, sizeof(err), "IOERR error or timeout reading to target instance");
                io = true;
                break;
            }
            got++;
            bool is_restore = i >= (pass != NULL) + 1;
            if (is_restore) { /* the key this reply is for */
                do {
                    k++;
                } while (k < nkeys && !moved[k]);
            }
            if (line[0] != '-') {
                if (is_restore && k < nkeys) {
                    acked[k] = true;
                }
                continue;
            }
            if (err[0] == '\0') { /* the first error is the reply */
                snprintf(err, sizeof(err), "ERR Target instance replied with error: %s",
                         line + 1);
            }
            if (!is_restore) { /* AUTH or SELECT refused: nothing was restored */
                break;
            }
        }
        if (io) {
            cache_forget(fd); /* the next MIGRATE connects anew */
        }
        if (!(io && cached && got == 0)) {
            break;
        }
    }
    sbuf_free(&out);
    if (!copy) { /* the keys the target took (all or some: an error stops nothing) */
        int dels = 0;
        for (int k = 0; k < nkeys; k++) {
            if (acked[k]) {
                batch_add_op(b, CUDIS_OP_DEL, 0, argv[first + k], lens[first + k], NULL, 0, 0, 0,
                             true);
                dels++;
            }
        }
        if (dels > 0) {
            run_alone(c);
            batch_reset(b);
        }
    }
    free(acked);
    free(moved);
    if (err[0]) {
        conn_error(c, err);
        return;
    }
    reply_ok(c);
}
