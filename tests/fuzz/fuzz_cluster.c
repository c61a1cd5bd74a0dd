/*
 * fuzz_cluster.c - the cluster bus's message reader (server/cluster_bus.c):
 * the input is what a peer sends on a bus link, framed and processed as
 * the link's read callback does (cl_bus_feed), against a node that knows
 * two others (A and B, masters of a third of the slots each, itself the
 * rest). The first input byte picks the link: inbound (a peer not known
 * yet: MEET, PING) or ours to A (PONGs that complete a handshake or name
 * another node). Checked beyond the sanitizers: the state stays whole
 * after any input (every slot's owner is a known node whose bitmap has the
 * slot, the counts add up, the open slots name known nodes, myself is
 * still a known master, each slot's mode byte agrees with its owner), and
 * nodes.conf can be written from it (every 64th run). Between runs the node is put back as
 * it was.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudis_time.h"
#include "server_internal.h"

static char dir[64];
static const char NAME_A[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char NAME_B[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
static const char NAME_ME[] = "1111111111111111111111111111111111111111";

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_cluster: %s\n", what);
    abort();
}

static cl_node *fixture(const char *name, uint16_t flags, int port, int first, int last)
{
    cl_node *n = cl_node_new(name, flags);
    snprintf(n->ip, sizeof(n->ip), "127.0.0.1");
    n->port = port;
    n->cport = port + 10000;
    n->config_epoch = (uint64_t)port % 7;
    cl_node_add(n);
    if (flags & CLN_MYSELF) {
        cl.myself = n; /* before its slots: their mode bytes say "mine" */
    }
    for (int s = first; s <= last; s++) {
        cl_slot_set(s, n);
    }
    return n;
}

/* The node as every run starts: myself, A and B, no open slot. */
static void reset(void)
{
    while (cl.nnodes > 0) {
        cl_node *n = cl.nodes[cl.nnodes - 1];
        cl.myself = n == cl.myself ? NULL : cl.myself;
        cl_node_del(n);
    }
    free(cl.nodes);
    free(cl.forgotten);
    memset(&cl, 0, sizeof(cl));
    cl.myself = fixture(NAME_ME, CLN_MYSELF | CLN_MASTER, 7000, 0, 5460);
    fixture(NAME_A, CLN_MASTER, 7001, 5461, 10922);
    fixture(NAME_B, CLN_MASTER, 7002, 10923, 16383);
    cl.current_epoch = 6;
    cl.start_ms = 0;
    cl_update_state(cudis_now_ms());
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    server_state_setup();
    char err[512];
    if (config_load_text(&srv.cfg, "loglevel nothing\ncluster-enabled yes\n", err,
                         sizeof(err)) != 0) {
        fail(err);
    }
    log_setup();
    snprintf(dir, sizeof(dir), "/tmp/cudis-fuzz-cluster-%d", (int)getpid());
    if (mkdir(dir, 0700) != 0) {
        fail("mkdir");
    }
    free(srv.cfg.cluster_config_file);
    srv.cfg.cluster_config_file = malloc(strlen(dir) + 16);
    sprintf(srv.cfg.cluster_config_file, "%s/nodes.conf", dir);
    reset();
    return 0;
}

static bool known(const cl_node *n)
{
    for (int i = 0; i < cl.nnodes; i++) {
        if (cl.nodes[i] == n) {
            return true;
        }
    }
    return false;
}

static void check(void)
{
    if (cl.myself == NULL || !known(cl.myself) || !(cl.myself->flags & CLN_MASTER)) {
        fail("myself lost");
    }
    long total = 0;
    for (int i = 0; i < cl.nnodes; i++) {
        total += cl.nodes[i]->nslots;
    }
    long assigned = 0;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        cl_node *o = cl.slots[s];
        if (o != NULL) {
            assigned++;
            if (!known(o) || !cl_slot_has(o, s)) {
                fail("a slot's owner is unknown or does not have it");
            }
        }
        if ((cl.migrating[s] && !known(cl.migrating[s])) ||
            (cl.importing[s] && !known(cl.importing[s]))) {
            fail("an open slot names an unknown node");
        }
        uint8_t m = cl.mode[s];
        if (((m & CLM_ASSIGNED) != 0) != (o != NULL) ||
            ((m & CLM_MINE) != 0) != (o == cl.myself)) {
            fail("a slot's mode byte disagrees with its owner");
        }
    }
    if (total != assigned) {
        fail("the nodes' slot counts do not add up");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    cl_lock();
    cl_node *a = cl_node_find(NAME_A);
    cl_bus_feed(data + 1, size - 1, (data[0] & 1) ? a : NULL);
    check();
    static unsigned runs;
    if (runs++ % 64 == 0 && cl_save(false) != 0) { /* a file a run would cap the speed */
        fail("nodes.conf not written");
    }
    reset();
    cl_unlock();
    return 0;
}
