/*
 * pubsub_bench.c - PUBLISH fan-out throughput: S subscriber connections
 * on one channel, P publisher connections each keeping D PUBLISH commands
 * in flight, for a number of seconds; one thread, poll() over every
 * socket. Prints one line (and appends a CSV row with --csv):
 *   messages delivered per second (publishes x subscribers that got them),
 *   publishes per second, the receivers PUBLISH reported.
 * Deliveries are counted from the bytes each subscriber reads: every
 * message frame has the same size (fixed channel and payload).
 *
 * Usage: pubsub-bench -p PORT [-s 100] [-P 4] [-d 32] [-D 5] [-v 32] [--csv FILE]
 *                     [--label NAME]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        perror("connect");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd q = {.fd = fd, .events = POLLOUT};
            poll(&q, 1, 100);
            continue;
        }
        if (w <= 0) {
            perror("write");
            exit(1);
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Read exactly n bytes (blocking). */
static void read_n(int fd, char *buf, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, buf, n);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            fprintf(stderr, "pubsub-bench: server closed a connection\n");
            exit(1);
        }
        buf += r;
        n -= (size_t)r;
    }
}

int main(int argc, char **argv)
{
    int port = 6379, nsub = 100, npub = 4, depth = 32, vsize = 32;
    double dur = 5;
    const char *csv = NULL, *label = "server";
    static const struct option lo[] = {
        {"csv", required_argument, 0, 1}, {"label", required_argument, 0, 2}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "p:s:P:d:D:v:", lo, NULL)) != -1) {
        switch (ch) {
        case 'p': port = atoi(optarg); break;
        case 's': nsub = atoi(optarg); break;
        case 'P': npub = atoi(optarg); break;
        case 'd': depth = atoi(optarg); break;
        case 'D': dur = atof(optarg); break;
        case 'v': vsize = atoi(optarg); break;
        case 1: csv = optarg; break;
        case 2: label = optarg; break;
        default:
            fprintf(stderr, "usage: pubsub-bench -p PORT [-s subs] [-P pubs] [-d depth] [-D secs] "
                            "[-v bytes] [--csv FILE] [--label NAME]\n");
            return 2;
        }
    }
    if (nsub < 1 || npub < 1 || depth < 1 || vsize < 1 || vsize > 4096) {
        fprintf(stderr, "pubsub-bench: bad options\n");
        return 2;
    }
    /* the message frame each subscriber receives */
    char *payload = malloc((size_t)vsize);
    memset(payload, 'x', (size_t)vsize);
    char frame_hdr[64];
    int fh = snprintf(frame_hdr, sizeof(frame_hdr), "*3\r\n$7\r\nmessage\r\n$5\r\nbench\r\n$%d\r\n",
                      vsize);
    size_t frame = (size_t)fh + (size_t)vsize + 2;
    /* a PUBLISH request */
    char req_hdr[64];
    int rh =
        snprintf(req_hdr, sizeof(req_hdr), "*3\r\n$7\r\nPUBLISH\r\n$5\r\nbench\r\n$%d\r\n", vsize);
    size_t req = (size_t)rh + (size_t)vsize + 2;
    char *reqs = malloc(req * (size_t)depth);
    for (int i = 0; i < depth; i++) {
        memcpy(reqs + req * i, req_hdr, (size_t)rh);
        memcpy(reqs + req * i + rh, payload, (size_t)vsize);
        memcpy(reqs + req * i + rh + vsize, "\r\n", 2);
    }
    int *fds = malloc(sizeof(int) * (size_t)(nsub + npub));
    for (int i = 0; i < nsub; i++) {
        fds[i] = dial(port);
        static const char sub[] = "*2\r\n$9\r\nSUBSCRIBE\r\n$5\r\nbench\r\n";
        write_all(fds[i], sub, sizeof(sub) - 1);
        char ack[64];
        read_n(fds[i], ack, strlen("*3\r\n$9\r\nsubscribe\r\n$5\r\nbench\r\n:1\r\n"));
    }
    for (int i = 0; i < npub; i++) {
        fds[nsub + i] = dial(port);
    }
    for (int i = 0; i < nsub + npub; i++) {
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    }
    uint64_t *rx = calloc((size_t)nsub, sizeof(uint64_t));
    uint64_t published = 0, receivers_sum = 0, replies = 0;
    long *inflight = calloc((size_t)npub, sizeof(long));
    /* publisher reply parsing: ":<n>\r\n" lines */
    char(*acc)[64] = calloc((size_t)npub, 64);
    size_t *accn = calloc((size_t)npub, sizeof(size_t));
    struct pollfd *pf = calloc((size_t)(nsub + npub), sizeof(struct pollfd));
    static char buf[1 << 16];
    double t0 = now_s(), end = t0 + dur;
    bool stopping = false;
    for (;;) {
        double t = now_s();
        if (!stopping && t >= end) {
            stopping = true;
        }
        bool busy = false;
        for (int i = 0; i < npub; i++) {
            if (!stopping && inflight[i] == 0) {
                write_all(fds[nsub + i], reqs, req * (size_t)depth);
                inflight[i] = depth;
                published += (uint64_t)depth;
            }
            busy = busy || inflight[i] > 0;
        }
        if (stopping && !busy) {
            break;
        }
        for (int i = 0; i < nsub + npub; i++) {
            pf[i].fd = fds[i];
            pf[i].events = POLLIN;
            pf[i].revents = 0;
        }
        if (poll(pf, (nfds_t)(nsub + npub), 1000) < 0 && errno != EINTR) {
            perror("poll");
            return 1;
        }
        for (int i = 0; i < nsub + npub; i++) {
            if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            ssize_t r = read(fds[i], buf, sizeof(buf));
            if (r == 0) {
                fprintf(stderr, "pubsub-bench: server closed a connection\n");
                return 1;
            }
            if (r < 0) {
                continue;
            }
            if (i < nsub) {
                rx[i] += (uint64_t)r;
                continue;
            }
            int k = i - nsub;
            for (ssize_t j = 0; j < r; j++) {
                if (accn[k] < 63) {
                    acc[k][accn[k]++] = buf[j];
                }
                if (buf[j] == '\n') {
                    acc[k][accn[k]] = '\0';
                    receivers_sum += (uint64_t)strtoull(acc[k] + 1, NULL, 10);
                    accn[k] = 0;
                    inflight[k]--;
                    replies++;
                }
            }
        }
    }
    double elapsed = now_s() - t0;
    /* let the last deliveries arrive */
    double drain_end = now_s() + 2;
    uint64_t want = published * (uint64_t)nsub * frame;
    for (;;) {
        uint64_t got = 0;
        for (int i = 0; i < nsub; i++) {
            got += rx[i];
        }
        if (got >= want || now_s() > drain_end) {
            break;
        }
        for (int i = 0; i < nsub; i++) {
            ssize_t r = read(fds[i], buf, sizeof(buf));
            if (r > 0) {
                rx[i] += (uint64_t)r;
            }
        }
    }
    uint64_t delivered = 0;
    for (int i = 0; i < nsub; i++) {
        delivered += rx[i] / frame;
    }
    double mps = (double)delivered / elapsed, pps = (double)replies / elapsed;
    double avg_rcv = replies ? (double)receivers_sum / (double)replies : 0;
    printf("%-8s subs %d pubs %d depth %d value %dB: %.0f messages/s delivered, %.0f publishes/s, "
           "%.1f receivers per PUBLISH\n",
           label, nsub, npub, depth, vsize, mps, pps, avg_rcv);
    if (csv) {
        FILE *f = fopen(csv, "a");
        if (f) {
            fprintf(f, "%s,%d,%d,%d,%d,%.3f,%llu,%.1f,%.1f,%.2f\n", label, nsub, npub, depth, vsize,
                    elapsed, (unsigned long long)delivered, mps, pps, avg_rcv);
            fclose(f);
        }
    }
    return avg_rcv == (double)nsub ? 0 : 3;
}
