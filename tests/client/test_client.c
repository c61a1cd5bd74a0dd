/*
 * test_client.c - libcudis against a real server started per test on a free
 * loopback port and a unix socket: plain commands and pipelines, binary rows,
 * chunked batches, wrong-length rows, TTL in both modes, AUTH, the pool from
 * several threads, and failures (stopped server, killed server mid-batch, a
 * server that answers half a batch or with replies of the wrong shape,
 * nothing listening).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cudis.h"
#include "cudis_time.h"
#include "srv.h"

static srv S;

static void setup(void)
{
    cr_assert_eq(srv_start(&S, NULL, NULL), 0, "server did not start");
}

static void teardown(void)
{
    srv_stop(&S);
}

static cudis_conn *conn_tcp(int timeout_ms)
{
    cudis_options o;
    cudis_options_default(&o);
    o.port = S.port;
    o.timeout_ms = timeout_ms;
    char err[256];
    cudis_conn *c = cudis_connect(&o, err, sizeof(err));
    cr_assert_not_null(c, "connect: %s", err);
    return c;
}

static cudis_conn *conn_unix(void)
{
    cudis_options o;
    cudis_options_default(&o);
    o.unix_path = S.sock;
    o.timeout_ms = 5000;
    char err[256];
    cudis_conn *c = cudis_connect(&o, err, sizeof(err));
    cr_assert_not_null(c, "connect unix: %s", err);
    return c;
}

/* Row i of a test pattern: bytes that depend on id, with zero bytes. */
static void fill_row(uint8_t *row, size_t rb, uint64_t id)
{
    for (size_t j = 0; j < rb; j++) {
        row[j] = (uint8_t)((id * 131 + j * 7) % 251);
    }
    row[0] = 0;
    row[rb - 1] = 0;
}

TestSuite(client, .init = setup, .fini = teardown, .timeout = 30);

Test(client, plain_command_and_pipeline)
{
    cudis_conn *c = conn_tcp(5000);
    redisReply *r;
    cr_assert_eq(cudis_command(c, &r, "SET %s %b", "k1", "a\0b", (size_t)3), 0);
    cr_assert_eq(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    cr_assert_eq(cudis_command(c, &r, "GET k1"), 0);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_eq(r->len, 3);
    cr_assert(memcmp(r->str, "a\0b", 3) == 0);
    freeReplyObject(r);

    const char *a1[] = {"SET", "p", "1"}, *a2[] = {"GET", "p"}, *a3[] = {"NOSUCHCMD"};
    cudis_cmd cmds[3] = {{3, a1, NULL}, {2, a2, NULL}, {1, a3, NULL}};
    redisReply *rs[3];
    cr_assert_eq(cudis_pipeline(c, 3, cmds, rs), 0, "%s", cudis_conn_errstr(c));
    cr_assert_eq(rs[1]->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(rs[1]->str, "1");
    cr_assert_eq(rs[2]->type, REDIS_REPLY_ERROR);
    for (int i = 0; i < 3; i++) {
        freeReplyObject(rs[i]);
    }
    cudis_close(c);
}

static void roundtrip_binary(cudis_conn *c)
{
    /* 16 floats per row: NaN patterns, infinities, -0, denormals, zeros */
    const uint32_t pats[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xffffffffu, 0x7f800000u,
                             0x80000000u, 0x00000001u, 0x00000000u, 0x0d0a0d0au, 0x2a000000u};
    const size_t n = 50, rb = 16 * sizeof(uint32_t);
    cudis_table *t = cudis_table_create("bin", rb, NULL);
    uint32_t *rows = malloc(n * rb), *out = calloc(n, rb);
    uint64_t ids[50];
    for (size_t i = 0; i < n; i++) {
        ids[i] =
            i == 0 ? 0 : (i == 1 ? UINT64_MAX : i * 0x0100000001ull); /* ids with 0x00/0x0a bytes */
        for (size_t j = 0; j < 16; j++) {
            rows[i * 16 + j] = pats[(i + j) % 10];
        }
    }
    uint8_t ok[50], found[50];
    cudis_vresult vr;
    cr_assert_eq(cudis_vset(c, t, n, ids, rows, 0, ok, &vr), 0, "%s", cudis_conn_errstr(c));
    cr_assert_eq(vr.answered, n);
    cr_assert_eq(cudis_vget(c, t, n, ids, out, found, &vr), 0, "%s", cudis_conn_errstr(c));
    cr_assert_eq(vr.hits, n);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(found[i], CUDIS_ROW_HIT);
        cr_assert_eq(ok[i], 1);
    }
    cr_assert(memcmp(rows, out, n * rb) == 0, "rows differ after round trip");
    free(rows);
    free(out);
    cudis_table_destroy(t);
}

Test(client, binary_rows_tcp)
{
    cudis_conn *c = conn_tcp(5000);
    roundtrip_binary(c);
    cudis_close(c);
}

Test(client, binary_rows_unix_socket)
{
    cudis_conn *c = conn_unix();
    roundtrip_binary(c);
    cudis_close(c);
}

Test(client, key_scheme)
{
    cudis_table *t = cudis_table_create("emb", 4, NULL);
    uint8_t k[32];
    cr_assert_eq(cudis_table_key(t, 258, k, sizeof(k)), 12);
    const uint8_t want[12] = {'e', 'm', 'b', ':', 0, 0, 0, 0, 0, 0, 1, 2};
    cr_assert(memcmp(k, want, 12) == 0);
    cr_assert_eq(cudis_table_key(t, 258, k, 11), 0);
    /* the server sees exactly that key */
    cudis_conn *c = conn_tcp(5000);
    uint64_t id = 258;
    cr_assert_eq(cudis_vset(c, t, 1, &id, "abcd", 0, NULL, NULL), 0);
    redisReply *r;
    cr_assert_eq(cudis_command(c, &r, "GET %b", k, (size_t)12), 0);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert(r->len == 4 && memcmp(r->str, "abcd", 4) == 0);
    freeReplyObject(r);
    /* empty batches are no-ops */
    cudis_vresult vr;
    cr_assert_eq(cudis_vget(c, t, 0, NULL, NULL, NULL, &vr), 0);
    cr_assert_eq(vr.answered + vr.failed, 0);
    cr_assert_eq(cudis_vset(c, t, 0, NULL, NULL, 0, NULL, &vr), 0);
    cudis_close(c);
    cudis_table_destroy(t);
}

Test(client, batches_larger_than_chunk_and_bad_length)
{
    cudis_conn *c = conn_tcp(5000);
    cudis_table_options to;
    cudis_table_options_default(&to);
    to.chunk_rows = 64;
    const size_t n = 5003, rb = 100;
    cudis_table *t = cudis_table_create("big", rb, &to);
    uint8_t *rows = malloc(n * rb), *out = malloc(n * rb), *found = malloc(n);
    uint64_t *ids = malloc(n * sizeof(*ids)), *even = malloc(n * sizeof(*ids));
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
        ids[i] = i * 3 + 1;
        fill_row(rows + i * rb, rb, ids[i]);
    }
    /* store even positions only */
    uint8_t *erows = malloc(n * rb);
    for (size_t i = 0; i < n; i += 2) {
        even[ne] = ids[i];
        memcpy(erows + ne * rb, rows + i * rb, rb);
        ne++;
    }
    cr_assert_eq(cudis_vset(c, t, ne, even, erows, 0, NULL, NULL), 0, "%s", cudis_conn_errstr(c));
    /* one key with a wrong length: a miss, counted */
    uint8_t key[64];
    size_t kl = cudis_table_key(t, ids[2], key, sizeof(key));
    redisReply *r;
    cr_assert_eq(cudis_command(c, &r, "SET %b %b", key, kl, "short", (size_t)5), 0);
    freeReplyObject(r);

    cudis_vresult vr;
    cr_assert_eq(cudis_vget(c, t, n, ids, out, found, &vr), 0, "%s", cudis_conn_errstr(c));
    cr_assert_eq(vr.answered, n);
    cr_assert_eq(vr.hits, ne - 1);
    cr_assert_eq(vr.misses, n - ne + 1);
    cr_assert_eq(vr.bad_len, 1);
    cr_assert_eq(vr.failed, 0);
    for (size_t i = 0; i < n; i++) {
        if (i % 2 == 0 && i != 2) {
            cr_assert_eq(found[i], CUDIS_ROW_HIT, "row %zu", i);
            cr_assert(memcmp(out + i * rb, rows + i * rb, rb) == 0, "row %zu differs", i);
        } else {
            cr_assert_eq(found[i], CUDIS_ROW_MISS, "row %zu", i);
        }
    }
    free(rows);
    free(out);
    free(found);
    free(ids);
    free(even);
    free(erows);
    cudis_table_destroy(t);
    cudis_close(c);
}

static void ttl_case(int mode)
{
    cudis_conn *c = conn_tcp(5000);
    cudis_table_options to;
    cudis_table_options_default(&to);
    to.chunk_rows = 7;
    to.ttl_mode = mode;
    const size_t n = 40, rb = 8;
    cudis_table *t = cudis_table_create("ttl", rb, &to);
    uint64_t ids[40];
    uint8_t rows[40 * 8], out[40 * 8], found[40], ok[40];
    for (size_t i = 0; i < n; i++) {
        ids[i] = i;
        fill_row(rows + i * rb, rb, i);
    }
    uint64_t t0 = cudis_mono_ns();
    cr_assert_eq(cudis_vset(c, t, n, ids, rows, 3000, ok, NULL), 0, "%s", cudis_conn_errstr(c));
    cudis_vresult vr;
    cr_assert_eq(cudis_vget(c, t, n, ids, out, found, &vr), 0);
    double ms = (double)(cudis_mono_ns() - t0) / 1e6;
    cr_assert_eq(vr.hits, n, "%zu of %zu rows found %.0f ms after a 3 s TTL", vr.hits, n, ms);
    redisReply *r;
    uint8_t key[32];
    size_t kl = cudis_table_key(t, 5, key, sizeof(key));
    cr_assert_eq(cudis_command(c, &r, "PTTL %b", key, kl), 0);
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
    cr_assert(r->integer > 0 && r->integer <= 3000, "pttl %lld", r->integer);
    freeReplyObject(r);
    usleep(3300 * 1000);
    cr_assert_eq(cudis_vget(c, t, n, ids, out, found, &vr), 0);
    cr_assert_eq(vr.hits, 0, "rows outlived their TTL");
    cr_assert_eq(vr.misses, n);
    cudis_table_destroy(t);
    cudis_close(c);
}

Test(client, ttl_set_px)
{
    ttl_case(CUDIS_TTL_SET_PX);
}

Test(client, ttl_mset_pexpire)
{
    ttl_case(CUDIS_TTL_MSET_PEXPIRE);
}

/* ---------------------------------------------------------------------- */
/* Pool from several threads                                              */
/* ---------------------------------------------------------------------- */

struct pool_arg {
    cudis_pool *p;
    cudis_table *t;
    int tid;
    int errors;
};

static void *pool_worker(void *arg)
{
    struct pool_arg *a = arg;
    const size_t n = 64, rb = 32;
    uint64_t ids[64];
    uint8_t rows[64 * 32], out[64 * 32], found[64];
    for (int it = 0; it < 100; it++) {
        for (size_t i = 0; i < n; i++) {
            ids[i] = (uint64_t)a->tid << 32 | (uint64_t)(it * 64 + (int)i);
            fill_row(rows + i * rb, rb, ids[i] + (uint64_t)it);
        }
        cudis_conn *c;
        if (cudis_pool_acquire(a->p, 5000, &c) != 0) {
            a->errors++;
            continue;
        }
        if (cudis_vset(c, a->t, n, ids, rows, 0, NULL, NULL) != 0 ||
            cudis_vget(c, a->t, n, ids, out, found, NULL) != 0 ||
            memcmp(rows, out, sizeof(rows)) != 0) {
            a->errors++;
        }
        cudis_pool_release(a->p, c);
    }
    return NULL;
}

Test(client, pool_threads)
{
    cudis_options o;
    cudis_options_default(&o);
    o.port = S.port;
    o.timeout_ms = 5000;
    char err[128];
    cudis_pool *p = cudis_pool_create(&o, 2, err, sizeof(err));
    cr_assert_not_null(p, "%s", err);
    cudis_table *t = cudis_table_create("pool", 32, NULL);
    pthread_t th[4];
    struct pool_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (struct pool_arg){.p = p, .t = t, .tid = i};
        pthread_create(&th[i], NULL, pool_worker, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(a[i].errors, 0, "thread %d had %d errors", i, a[i].errors);
    }
    /* all connections are busy: a zero wait times out */
    cudis_conn *c1, *c2, *c3;
    cr_assert_eq(cudis_pool_acquire(p, 1000, &c1), 0);
    cr_assert_eq(cudis_pool_acquire(p, 1000, &c2), 0);
    cr_assert_eq(cudis_pool_acquire(p, 50, &c3), CUDIS_E_TIMEOUT);
    cr_assert_null(c3);
    cudis_pool_release(p, c1);
    cudis_pool_release(p, c2);
    cudis_table_destroy(t);
    cudis_pool_destroy(p);
}

/* ---------------------------------------------------------------------- */
/* Failures                                                               */
/* ---------------------------------------------------------------------- */

Test(client, stopped_server_times_out_then_recovers)
{
    cudis_conn *c = conn_tcp(5000);
    cudis_table *t = cudis_table_create("stop", 16, NULL);
    uint64_t ids[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    uint8_t rows[160] = {0}, found[10];
    cr_assert_eq(cudis_vset(c, t, 10, ids, rows, 0, NULL, NULL), 0, "%s", cudis_conn_errstr(c));
    cr_assert_eq(cudis_conn_set_timeout(c, 300), 0);
    kill(S.pid, SIGSTOP);
    uint64_t t0 = cudis_mono_ns();
    cudis_vresult vr;
    int rc = cudis_vget(c, t, 10, ids, rows, found, &vr);
    double ms = (double)(cudis_mono_ns() - t0) / 1e6;
    cr_assert_eq(rc, CUDIS_E_TIMEOUT, "rc %d (%s)", rc, cudis_conn_errstr(c));
    cr_assert(ms >= 250 && ms < 1500, "took %.0f ms for a 300 ms timeout", ms);
    cr_assert_eq(vr.failed, 10);
    cr_assert_eq(found[0], CUDIS_ROW_FAILED);
    cr_assert(cudis_conn_broken(c));
    kill(S.pid, SIGCONT);
    cudis_conn_set_timeout(c, 5000);
    /* the next call reconnects */
    cr_assert_eq(cudis_vget(c, t, 10, ids, rows, found, &vr), 0, "%s", cudis_conn_errstr(c));
    cr_assert_eq(vr.hits, 10);
    cudis_table_destroy(t);
    cudis_close(c);
}

struct kill_arg {
    pid_t pid;
};

static void *killer(void *arg)
{
    struct kill_arg *k = arg;
    usleep(100 * 1000);
    kill(k->pid, SIGKILL);
    return NULL;
}

Test(client, killed_mid_batch_reports_error_fast)
{
    cudis_conn *c = conn_tcp(5000);
    cudis_table_options to;
    cudis_table_options_default(&to);
    to.chunk_rows = 100;
    const size_t n = 20000, rb = 64;
    cudis_table *t = cudis_table_create("kill", rb, &to);
    uint64_t *ids = malloc(n * sizeof(*ids));
    uint8_t *rows = calloc(n, rb), *found = malloc(n);
    for (size_t i = 0; i < n; i++) {
        ids[i] = i;
    }
    cr_assert_eq(cudis_vset(c, t, n, ids, rows, 0, NULL, NULL), 0);
    /* stop the server so the batch is surely in flight, then kill it */
    kill(S.pid, SIGSTOP);
    pthread_t th;
    struct kill_arg k = {S.pid};
    pthread_create(&th, NULL, killer, &k);
    uint64_t t0 = cudis_mono_ns();
    cudis_vresult vr;
    int rc = cudis_vget(c, t, n, ids, rows, found, &vr);
    double ms = (double)(cudis_mono_ns() - t0) / 1e6;
    pthread_join(th, NULL);
    cr_assert_eq(rc, CUDIS_E_IO, "rc %d (%s)", rc, cudis_conn_errstr(c));
    cr_assert(ms < 2000, "took %.0f ms", ms);
    cr_assert_eq(vr.answered + vr.failed, n);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        failed += found[i] == CUDIS_ROW_FAILED;
    }
    cr_assert_eq(failed, vr.failed);
    cr_assert(failed > 0);
    /* the server is gone: a new call fails at once, no hang */
    t0 = cudis_mono_ns();
    rc = cudis_vget(c, t, 10, ids, rows, found, NULL);
    cr_assert(rc == CUDIS_E_IO || rc == CUDIS_E_TIMEOUT, "rc %d", rc);
    cr_assert((cudis_mono_ns() - t0) / 1000000 < 2000);
    free(ids);
    free(rows);
    free(found);
    cudis_table_destroy(t);
    cudis_close(c);
}

Test(client, auth)
{
    srv_stop(&S);
    cr_assert_eq(srv_start(&S, "s3cret", NULL), 0);
    cudis_options o;
    cudis_options_default(&o);
    o.port = S.port;
    o.password = "wrong";
    char err[256];
    cudis_conn *c = cudis_connect(&o, err, sizeof(err));
    cr_assert_null(c, "wrong password accepted");
    cr_assert(strstr(err, "AUTH") != NULL, "err: %s", err);
    o.password = NULL;
    c = cudis_connect(&o, err, sizeof(err));
    cr_assert_not_null(c);
    cudis_table *t = cudis_table_create("auth", 4, NULL);
    uint64_t id = 1;
    uint8_t row[4], found;
    cr_assert_eq(cudis_vget(c, t, 1, &id, row, &found, NULL), CUDIS_E_SERVER);
    cr_assert(strstr(cudis_conn_errstr(c), "NOAUTH") != NULL, "%s", cudis_conn_errstr(c));
    cr_assert_eq(found, CUDIS_ROW_FAILED);
    cudis_close(c);
    o.password = "s3cret";
    o.unix_path = S.sock;
    c = cudis_connect(&o, err, sizeof(err));
    cr_assert_not_null(c, "%s", err);
    cr_assert_eq(cudis_vset(c, t, 1, &id, "abcd", 0, NULL, NULL), 0);
    cr_assert_eq(cudis_vget(c, t, 1, &id, row, &found, NULL), 0);
    cr_assert_eq(found, CUDIS_ROW_HIT);
    cudis_close(c);
    cudis_table_destroy(t);
}

Test(client, nothing_listening)
{
    cudis_options o;
    cudis_options_default(&o);
    o.port = srv_free_port();
    char err[256];
    uint64_t t0 = cudis_mono_ns();
    cudis_conn *c = cudis_connect(&o, err, sizeof(err));
    cr_assert_null(c);
    cr_assert((cudis_mono_ns() - t0) / 1000000 < 1500);
    cr_assert(strlen(err) > 0);
    o.unix_path = "/tmp/cudis-no-such.sock";
    c = cudis_connect(&o, err, sizeof(err));
    cr_assert_null(c);
}

/* A fake server that answers only the first MGET of a pipeline, then
 * closes: the client must report that chunk's rows as valid and the rest
 * as failed. With `answer` set it writes those bytes instead. */
struct fake {
    int lfd;
    int port;
    size_t rows;
    const char *answer;
};

static void *fake_server(void *arg)
{
    struct fake *f = arg;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd < 0) {
        return NULL;
    }
    char buf[4096];
    if (read(fd, buf, sizeof(buf)) <= 0) { /* at least the first command */
        close(fd);
        return NULL;
    }
    char out[8192];
    int len = snprintf(out, sizeof(out), "%s", f->answer ? f->answer : "");
    if (f->answer == NULL) {
        len = snprintf(out, sizeof(out), "*%zu\r\n", f->rows);
    }
    for (size_t i = 0; f->answer == NULL && i < f->rows; i++) {
        len += (i % 2) ? snprintf(out + len, sizeof(out) - (size_t)len, "$-1\r\n")
                       : snprintf(out + len, sizeof(out) - (size_t)len, "$4\r\nrow%zu\r\n", i % 10);
    }
    if (write(fd, out, (size_t)len) != len) {
        close(fd);
        return NULL;
    }
    usleep(50 * 1000);
    close(fd);
    return NULL;
}

/* cudis_vget of rows 0..n-1 (row_bytes each, chunk_rows chunk) from a
 * fake server listening on a free loopback port; returns the call's rc. */
static int fake_vget(struct fake *f, size_t chunk, size_t row_bytes, size_t n, uint8_t *rows,
                     uint8_t *found, cudis_vresult *vr)
{
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    cr_assert_eq(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(f->lfd, 4), 0);
    getsockname(f->lfd, (struct sockaddr *)&a, &al);
    f->port = ntohs(a.sin_port);
    pthread_t th;
    pthread_create(&th, NULL, fake_server, f);
    cudis_options o;
    cudis_options_default(&o);
    o.port = f->port;
    cudis_conn *c = cudis_connect(&o, NULL, 0);
    cr_assert_not_null(c);
    cudis_table_options to;
    cudis_table_options_default(&to);
    to.chunk_rows = chunk;
    cudis_table *t = cudis_table_create("fake", row_bytes, &to);
    uint64_t ids[64];
    cr_assert(n <= 64);
    for (size_t i = 0; i < n; i++) {
        ids[i] = (uint64_t)i;
    }
    int rc = cudis_vget(c, t, n, ids, rows, found, vr);
    pthread_join(th, NULL);
    close(f->lfd);
    cudis_table_destroy(t);
    cudis_close(c);
    return rc;
}

Test(client, half_completed_batch)
{
    struct fake f = {.rows = 8};
    uint8_t rows[80] = {0}, found[20];
    cudis_vresult vr;
    int rc = fake_vget(&f, 8, 4, 20, rows, found, &vr);
    cr_assert_eq(rc, CUDIS_E_IO, "rc %d", rc);
    cr_assert_eq(vr.answered, 8);
    cr_assert_eq(vr.hits, 4);
    cr_assert_eq(vr.failed, 12);
    for (int i = 0; i < 20; i++) {
        int want = i >= 8 ? CUDIS_ROW_FAILED : (i % 2 ? CUDIS_ROW_MISS : CUDIS_ROW_HIT);
        cr_assert_eq(found[i], want, "row %d: %d", i, found[i]);
    }
    cr_assert(memcmp(rows, "row0", 4) == 0 && memcmp(rows + 8, "row2", 4) == 0);
}

/* Found by fuzz_reply (tests/fuzz/corpus/reply/vget_nested_bad_len): an
 * MGET reply of the wrong shape (a nested array) whose other element had
 * the wrong length counted that row in bad_len although the row ends up
 * failed, so bad_len exceeded misses. */
Test(client, malformed_reply_keeps_bad_len_within_misses)
{
    struct fake f = {.answer = "*2\r\n*1\r\n$2\r\nab\r\n$3\r\ncde\r\n"
                               "*2\r\n$-1\r\n$2\r\nef\r\n"};
    uint8_t rows[8], found[4];
    cudis_vresult vr;
    int rc = fake_vget(&f, 2, 2, 4, rows, found, &vr);
    cr_assert_eq(rc, CUDIS_E_PROTO, "rc %d", rc);
    cr_assert_eq(found[0], CUDIS_ROW_FAILED);
    cr_assert_eq(found[1], CUDIS_ROW_FAILED);
    cr_assert_eq(found[2], CUDIS_ROW_MISS);
    cr_assert_eq(found[3], CUDIS_ROW_HIT);
    cr_assert_eq(vr.answered, 2);
    cr_assert_eq(vr.hits, 1);
    cr_assert_eq(vr.misses, 1);
    cr_assert_eq(vr.bad_len, 0, "bad_len %zu", vr.bad_len);
    cr_assert_eq(vr.failed, 2);
}

/* A reply of the wrong shape that the connection cuts short (the server
 * closed inside it) is as untrustworthy as a complete one: the row it
 * already delivered is failed, not a hit. */
Test(client, malformed_reply_cut_short_delivers_no_row)
{
    struct fake f = {.answer = "*2\r\n$2\r\nab\r\n*1\r\n"};
    uint8_t rows[4], found[2];
    cudis_vresult vr;
    int rc = fake_vget(&f, 2, 2, 2, rows, found, &vr);
    cr_assert_eq(rc, CUDIS_E_IO, "rc %d", rc);
    cr_assert_eq(found[0], CUDIS_ROW_FAILED, "row 0: %d", found[0]);
    cr_assert_eq(found[1], CUDIS_ROW_FAILED);
    cr_assert_eq(vr.answered, 0);
    cr_assert_eq(vr.hits, 0);
    cr_assert_eq(vr.failed, 2);
}
