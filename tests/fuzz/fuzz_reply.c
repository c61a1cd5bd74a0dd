/*
 * fuzz_reply.c - the client library's reply handling (client/): the
 * exchange loop every call goes through (cudis_conn_xfer), the plain
 * hiredis reader of cudis_command/cudis_pipeline and the vector reader of
 * cudis_vget/cudis_vset, whose callbacks copy rows straight into the
 * caller's buffers. The input plays the server: a connection is made over
 * a unix socket this target listens on, the input after its first two
 * bytes is written as the server's whole answer and the server's side is
 * shut for writing, then one call runs:
 *   byte 0 % 6:  0 cudis_command, 1 cudis_pipeline, 2 cudis_vget,
 *                3 cudis_vset without TTL, 4 with TTL by SET PX,
 *                5 with TTL by MSET + PEXPIRE;
 *   byte 0 / 6:  chunk_rows - 1 (0..7, wraps);
 *   byte 1:      low 4 bits: commands or rows - 1; high 4 bits: row bytes - 1.
 * Checked: the calls keep their contracts (found[] / ok[] against the
 * counters of cudis_vresult, 0 returned only when every row was answered
 * or confirmed, a pipeline's replies a prefix of its commands), no access
 * outside the caller's buffers (each exactly its size), no leak.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cudis.h"

static int listen_fd = -1;
static char sock_dir[80], sock_path[96]; /* within sun_path */

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_reply: %s\n", what);
    abort();
}

static void cleanup(void)
{
    if (listen_fd >= 0) {
        close(listen_fd);
        unlink(sock_path);
        rmdir(sock_dir);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || *tmp == '\0' || strlen(tmp) > 60) {
        tmp = "/tmp";
    }
    snprintf(sock_dir, sizeof(sock_dir), "%s/fuzz-reply-XXXXXX", tmp);
    if (mkdtemp(sock_dir) == NULL) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(sock_path, sizeof(sock_path), "%s/s", sock_dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
    listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(listen_fd, 4) != 0) {
        perror("fuzz_reply: listen");
        exit(1);
    }
    atexit(cleanup);
    return 0;
}

/* The server's side: everything it will ever say, then end of stream. */
static int serve(const uint8_t *p, size_t n)
{
    int fd = accept(listen_fd, NULL, NULL);
    if (fd < 0) {
        fail("accept");
    }
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            fail("write");
        }
        p += w;
        n -= (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    return fd;
}

static void run_command(cudis_conn *c)
{
    redisReply *r = NULL;
    int rc = cudis_command(c, &r, "GET %s", "k");
    if (rc == 0 && r == NULL) {
        fail("cudis_command returned 0 without a reply");
    }
    if (r != NULL) {
        freeReplyObject(r);
    }
}

static void run_pipeline(cudis_conn *c, size_t n)
{
    const char *argv[2] = {"GET", "k"};
    cudis_cmd cmds[16];
    redisReply *replies[16];
    for (size_t i = 0; i < n; i++) {
        cmds[i] = (cudis_cmd){.argc = 2, .argv = argv, .argvlen = NULL};
    }
    int rc = cudis_pipeline(c, n, cmds, replies);
    bool gap = false;
    for (size_t i = 0; i < n; i++) {
        if (replies[i] == NULL) {
            gap = true;
            if (rc == 0) {
                fail("cudis_pipeline returned 0 with a reply missing");
            }
        } else {
            if (gap) {
                fail("a pipeline reply after a missing one");
            }
            freeReplyObject(replies[i]);
        }
    }
}

static void run_vget(cudis_conn *c, const cudis_table *t, size_t n, const uint64_t *ids)
{
    uint8_t *rows = malloc(n * cudis_table_row_bytes(t));
    uint8_t *found = malloc(n);
    cudis_vresult res;
    int rc = cudis_vget(c, t, n, ids, rows, found, &res);
    size_t hits = 0, misses = 0, answered = 0;
    for (size_t i = 0; i < n; i++) {
        if (found[i] == CUDIS_ROW_HIT) {
            hits++;
        } else if (found[i] == CUDIS_ROW_MISS) {
            misses++;
        } else if (found[i] != CUDIS_ROW_FAILED) {
            fail("cudis_vget: a row state out of range");
        }
    }
    answered = hits + misses;
    if (res.hits != hits || res.misses != misses || res.answered != answered ||
        res.failed != n - answered || res.bad_len > res.misses) {
        fprintf(stderr, "found: %zu hits %zu misses; res: %zu %zu %zu answered %zu failed %zu\n",
                hits, misses, res.hits, res.misses, res.bad_len, res.answered, res.failed);
        fail("cudis_vget: its counters disagree with found[]");
    }
    if (rc == 0 && answered != n) {
        fail("cudis_vget returned 0 with rows unanswered");
    }
    free(rows);
    free(found);
}

static void run_vset(cudis_conn *c, const cudis_table *t, size_t n, const uint64_t *ids,
                     int64_t ttl)
{
    uint8_t *rows = calloc(n, cudis_table_row_bytes(t));
    uint8_t *ok = malloc(n);
    cudis_vresult res;
    int rc = cudis_vset(c, t, n, ids, rows, ttl, ok, &res);
    size_t confirmed = 0;
    for (size_t i = 0; i < n; i++) {
        if (ok[i] > 1) {
            fail("cudis_vset: ok[] out of range");
        }
        confirmed += ok[i];
    }
    if (res.answered != confirmed || res.failed != n - confirmed) {
        fail("cudis_vset: its counters disagree with ok[]");
    }
    if (rc == 0 && confirmed != n) {
        fail("cudis_vset returned 0 with rows unconfirmed");
    }
    free(rows);
    free(ok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) {
        return 0;
    }
    int mode = data[0] % 6;
    size_t n = 1 + (data[1] & 15);
    size_t row_bytes = 1 + (data[1] >> 4);
    cudis_options o;
    cudis_options_default(&o);
    o.unix_path = sock_path;
    o.timeout_ms = 5000; /* never waited for: the answer ends with end of stream */
    char err[256];
    cudis_conn *c = cudis_connect(&o, err, sizeof(err));
    if (c == NULL) {
        fprintf(stderr, "fuzz_reply: connect: %s\n", err);
        abort();
    }
    int fd = serve(data + 2, size - 2);
    cudis_table_options to;
    cudis_table_options_default(&to);
    to.chunk_rows = 1 + (size_t)(data[0] / 6 % 8);
    to.ttl_mode = mode == 5 ? CUDIS_TTL_MSET_PEXPIRE : CUDIS_TTL_SET_PX;
    cudis_table *t = cudis_table_create("t", row_bytes, &to);
    uint64_t ids[16];
    for (size_t i = 0; i < n; i++) {
        ids[i] = i;
    }
    switch (mode) {
    case 0: run_command(c); break;
    case 1: run_pipeline(c, n); break;
    case 2: run_vget(c, t, n, ids); break;
    case 3: run_vset(c, t, n, ids, 0); break;
    default: run_vset(c, t, n, ids, 1000); break;
    }
    cudis_table_destroy(t);
    cudis_close(c);
    close(fd);
    return 0;
}
