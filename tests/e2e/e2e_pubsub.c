/*
 * e2e_pubsub.c - publish/subscribe as Redis 7 has it, byte for byte on raw
 * sockets: SUBSCRIBE/UNSUBSCRIBE/PSUBSCRIBE/PUNSUBSCRIBE replies, messages
 * and pattern messages, RESP2's subscribed mode (what it refuses, PING's
 * reply), RESP3 push frames, the sharded namespace (SSUBSCRIBE, SPUBLISH),
 * PUBSUB CHANNELS/NUMSUB/NUMPAT/SHARDCHANNELS/SHARDNUMSUB, RESET, fan-out
 * to many subscribers in order (one loop and four), and a subscriber too
 * slow for client-output-buffer-limit pubsub being dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "e2e.h"

TestSuite(pubsub, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

/* Expect the next reply on fd (already requested) to be `want`. */
static void expect_frame(int fd, const char *want)
{
    size_t n;
    char *r = e2e_raw_reply(fd, &n, 5000);
    cr_assert_not_null(r, "no frame (wanted %s)", want);
    cr_assert(n == strlen(want) && memcmp(r, want, n) == 0, "got %.*s, wanted %s", (int)n, r, want);
    free(r);
}

static void send_str(int fd, const char *s)
{
    cr_assert(e2e_raw_send(fd, s, strlen(s)));
}

Test(pubsub, subscribe_publish_unsubscribe)
{
    int sub = e2e_raw_open(e2e_srv.port), pub = e2e_raw_open(e2e_srv.port);
    send_str(sub, "SUBSCRIBE a b\r\n");
    expect_frame(sub, "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n");
    expect_frame(sub, "*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n");
    RAW_EXPECT(pub, "PUBLISH a hello\r\n", ":1\r\n");
    expect_frame(sub, "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$5\r\nhello\r\n");
    RAW_EXPECT(pub, "PUBLISH nochan x\r\n", ":0\r\n");
    /* subscribed mode */
    RAW_EXPECT(sub, "GET x\r\n",
               "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
               "RESET are allowed in this context\r\n");
    RAW_EXPECT(sub, "PING\r\n", "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    RAW_EXPECT(sub, "PING hi\r\n", "*2\r\n$4\r\npong\r\n$2\r\nhi\r\n");
    RAW_EXPECT(sub, "SUBSCRIBE a\r\n", "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:2\r\n");
    RAW_EXPECT(sub, "UNSUBSCRIBE a\r\n", "*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n");
    RAW_EXPECT(pub, "PUBLISH a gone\r\n", ":0\r\n");
    RAW_EXPECT(sub, "UNSUBSCRIBE\r\n", "*3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:0\r\n");
    RAW_EXPECT(sub, "UNSUBSCRIBE\r\n", "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n");
    RAW_EXPECT(sub, "UNSUBSCRIBE zz\r\n", "*3\r\n$11\r\nunsubscribe\r\n$2\r\nzz\r\n:0\r\n");
    /* out of subscribed mode */
    RAW_EXPECT(sub, "GET x\r\n", "$-1\r\n");
    RAW_EXPECT(sub, "PING\r\n", "+PONG\r\n");
    RAW_EXPECT(sub, "SUBSCRIBE\r\n", "-ERR wrong number of arguments for 'subscribe' command\r\n");
    close(sub);
    close(pub);
}

Test(pubsub, patterns)
{
    int sub = e2e_raw_open(e2e_srv.port), pub = e2e_raw_open(e2e_srv.port);
    send_str(sub, "PSUBSCRIBE news.* x?\r\n");
    expect_frame(sub, "*3\r\n$10\r\npsubscribe\r\n$6\r\nnews.*\r\n:1\r\n");
    expect_frame(sub, "*3\r\n$10\r\npsubscribe\r\n$2\r\nx?\r\n:2\r\n");
    RAW_EXPECT(sub, "SUBSCRIBE news.tech\r\n",
               "*3\r\n$9\r\nsubscribe\r\n$9\r\nnews.tech\r\n:3\r\n");
    RAW_EXPECT(pub, "PUBLISH news.tech m1\r\n", ":2\r\n");
    expect_frame(sub, "*3\r\n$7\r\nmessage\r\n$9\r\nnews.tech\r\n$2\r\nm1\r\n");
    expect_frame(sub, "*4\r\n$8\r\npmessage\r\n$6\r\nnews.*\r\n$9\r\nnews.tech\r\n$2\r\nm1\r\n");
    RAW_EXPECT(pub, "PUBLISH xy m2\r\n", ":1\r\n");
    expect_frame(sub, "*4\r\n$8\r\npmessage\r\n$2\r\nx?\r\n$2\r\nxy\r\n$2\r\nm2\r\n");
    RAW_EXPECT(pub, "PUBLISH xyz m3\r\n", ":0\r\n");
    RAW_EXPECT(pub, "PUBSUB NUMPAT\r\n", ":2\r\n");
    RAW_EXPECT(sub, "PUNSUBSCRIBE x?\r\n", "*3\r\n$12\r\npunsubscribe\r\n$2\r\nx?\r\n:2\r\n");
    send_str(sub, "PUNSUBSCRIBE\r\n");
    expect_frame(sub, "*3\r\n$12\r\npunsubscribe\r\n$6\r\nnews.*\r\n:1\r\n");
    RAW_EXPECT(sub, "PUNSUBSCRIBE\r\n", "*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:1\r\n");
    RAW_EXPECT(pub, "PUBSUB NUMPAT\r\n", ":0\r\n");
    close(sub);
    close(pub);
}

Test(pubsub, resp3_push)
{
    int sub = e2e_raw_open(e2e_srv.port), pub = e2e_raw_open(e2e_srv.port);
    size_t n;
    send_str(sub, "HELLO 3\r\n");
    free(e2e_raw_reply(sub, &n, 5000));
    RAW_EXPECT(sub, "SUBSCRIBE a\r\n", ">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n");
    RAW_EXPECT(sub, "GET nosuch\r\n", "_\r\n"); /* RESP3 has no subscribed mode */
    RAW_EXPECT(sub, "PING\r\n", "+PONG\r\n");
    RAW_EXPECT(pub, "PUBLISH a hi\r\n", ":1\r\n");
    expect_frame(sub, ">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nhi\r\n");
    RAW_EXPECT(sub, "UNSUBSCRIBE\r\n", ">3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:0\r\n");
    RAW_EXPECT(sub, "UNSUBSCRIBE\r\n", ">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n");
    RAW_EXPECT(pub, "PUBSUB NUMSUB a b\r\n", "*4\r\n$1\r\na\r\n:0\r\n$1\r\nb\r\n:0\r\n");
    send_str(pub, "HELLO 3\r\n");
    free(e2e_raw_reply(pub, &n, 5000));
    RAW_EXPECT(pub, "PUBSUB NUMSUB a\r\n", "*2\r\n$1\r\na\r\n:0\r\n"); /* flat, as 7.0 */
    close(sub);
    close(pub);
}

Test(pubsub, shard_channels)
{
    int sub = e2e_raw_open(e2e_srv.port), pub = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(sub, "SSUBSCRIBE s1\r\n", "*3\r\n$10\r\nssubscribe\r\n$2\r\ns1\r\n:1\r\n");
    RAW_EXPECT(pub, "PUBLISH s1 m\r\n", ":0\r\n"); /* another namespace */
    RAW_EXPECT(pub, "SPUBLISH s1 m\r\n", ":1\r\n");
    expect_frame(sub, "*3\r\n$8\r\nsmessage\r\n$2\r\ns1\r\n$1\r\nm\r\n");
    RAW_EXPECT(pub, "PUBSUB SHARDCHANNELS\r\n", "*1\r\n$2\r\ns1\r\n");
    RAW_EXPECT(pub, "PUBSUB SHARDNUMSUB s1\r\n", "*2\r\n$2\r\ns1\r\n:1\r\n");
    RAW_EXPECT(pub, "PUBSUB CHANNELS\r\n", "*0\r\n");
    RAW_EXPECT(sub, "SUNSUBSCRIBE\r\n", "*3\r\n$12\r\nsunsubscribe\r\n$2\r\ns1\r\n:0\r\n");
    RAW_EXPECT(sub, "GET x\r\n", "$-1\r\n");
    close(sub);
    close(pub);
}

Test(pubsub, pubsub_introspection_and_reset)
{
    int s1 = e2e_raw_open(e2e_srv.port), s2 = e2e_raw_open(e2e_srv.port);
    redisContext *c = e2e_connect();
    send_str(s1, "SUBSCRIBE news.a news.b other\r\n");
    for (int i = 0; i < 3; i++) {
        free(e2e_raw_reply(s1, &(size_t){0}, 5000));
    }
    RAW_EXPECT(s2, "SUBSCRIBE news.a\r\n", "*3\r\n$9\r\nsubscribe\r\n$6\r\nnews.a\r\n:1\r\n");
    redisReply *r = e2e_cmd(c, "PUBSUB CHANNELS");
    cr_assert_eq(r->elements, 3);
    freeReplyObject(r);
    r = e2e_cmd(c, "PUBSUB CHANNELS news.*");
    cr_assert_eq(r->elements, 2);
    freeReplyObject(r);
    r = e2e_cmd(c, "PUBSUB NUMSUB news.a other nosuch");
    cr_assert_eq(r->elements, 6);
    cr_assert_eq(r->element[1]->integer, 2);
    cr_assert_eq(r->element[3]->integer, 1);
    cr_assert_eq(r->element[5]->integer, 0);
    freeReplyObject(r);
    CHECK_INT(c, 0, "PUBSUB NUMPAT");
    CHECK_ERR_PREFIX(c, "ERR unknown subcommand 'NOSUCH'", "PUBSUB NOSUCH");
    RAW_EXPECT(s1, "RESET\r\n", "+RESET\r\n");
    RAW_EXPECT(s1, "GET x\r\n", "$-1\r\n");
    CHECK_INT(c, 1, "PUBLISH news.a x");
    close(s2);
    /* a subscriber that goes away leaves no subscription behind */
    bool gone = false;
    for (int i = 0; i < 200 && !gone; i++) {
        r = e2e_cmd(c, "PUBSUB NUMSUB news.a");
        gone = r->element[1]->integer == 0;
        freeReplyObject(r);
        if (!gone) {
            e2e_sleep_ms(10);
        }
    }
    cr_assert(gone);
    close(s1);
    redisFree(c);
}

/* Fan-out: every subscriber gets every message, in publish order. */
enum { FAN_SUBS = 40, FAN_MSGS = 500 };

static void fan_out(void)
{
    int subs[FAN_SUBS];
    for (int i = 0; i < FAN_SUBS; i++) {
        subs[i] = e2e_raw_open(e2e_srv.port);
        RAW_EXPECT(subs[i], "SUBSCRIBE fan\r\n", "*3\r\n$9\r\nsubscribe\r\n$3\r\nfan\r\n:1\r\n");
    }
    redisContext *p = e2e_connect();
    for (int m = 0; m < FAN_MSGS; m++) {
        redisAppendCommand(p, "PUBLISH fan msg-%d", m);
    }
    for (int m = 0; m < FAN_MSGS; m++) {
        redisReply *r;
        cr_assert_eq(redisGetReply(p, (void **)&r), REDIS_OK);
        cr_assert_eq(r->integer, FAN_SUBS, "message %d reached %lld", m, r->integer);
        freeReplyObject(r);
    }
    for (int i = 0; i < FAN_SUBS; i++) {
        for (int m = 0; m < FAN_MSGS; m++) {
            char want[64], body[16];
            int bl = snprintf(body, sizeof(body), "msg-%d", m);
            snprintf(want, sizeof(want), "*3\r\n$7\r\nmessage\r\n$3\r\nfan\r\n$%d\r\n%s\r\n", bl,
                     body);
            expect_frame(subs[i], want);
        }
        close(subs[i]);
    }
    redisFree(p);
}

Test(pubsub, fan_out_in_order)
{
    fan_out();
}

Test(pubsub, fan_out_in_order_io_threads)
{
    e2e_stop(&e2e_srv);
    const char *o[] = {"--io-threads", "4", NULL};
    cr_assert(e2e_start(&e2e_srv, o) == 0);
    fan_out();
}

/* A subscriber that does not read is dropped at the pubsub class's hard
 * limit; the server and the other clients carry on. */
Test(pubsub, slow_subscriber_dropped)
{
    redisContext *c = e2e_connect();
    CHECK_OK(c, "CONFIG SET client-output-buffer-limit %s", "pubsub 256kb 0 0");
    int sub = e2e_raw_open(e2e_srv.port);
    RAW_EXPECT(sub, "SUBSCRIBE big\r\n", "*3\r\n$9\r\nsubscribe\r\n$3\r\nbig\r\n:1\r\n");
    static char payload[64 * 1024];
    memset(payload, 'p', sizeof(payload));
    bool dropped = false;
    for (int i = 0; i < 400 && !dropped; i++) {
        redisReply *r = e2e_cmd(c, "PUBLISH big %b", payload, sizeof(payload));
        dropped = r->integer == 0;
        freeReplyObject(r);
    }
    cr_assert(dropped, "the slow subscriber was never dropped");
    CHECK_STATUS(c, "PONG", "PING");
    close(sub);
    redisFree(c);
}
