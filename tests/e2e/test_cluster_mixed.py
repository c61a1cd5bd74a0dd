#!/usr/bin/python3
"""test_cluster_mixed.py - cudis nodes and Debian's redis-server 7.0 nodes
in ONE cluster: cudis speaks Redis's cluster bus (server/cluster_bus.c), so
the two kinds handshake, gossip, agree on slot owners, redirect to each
other, move slots both ways with redis-cli --cluster reshard (MIGRATE of
Redis's DUMP payloads into cudis and of cudis's into Redis), and detect each
other's failure. Two redis-server and two nodes of the server under test;
against redis-server itself (CUDIS_E2E_SERVER) all four are Redis.
Fails when /usr/bin/redis-server is missing (scripts/deps.sh installs it).
  /usr/bin/python3 test_cluster_mixed.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import logging
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402
import test_cluster  # noqa: E402
from test_cluster import REDIS_CLI, ClusterCase, key_slot, run  # noqa: E402

from redis.cluster import RedisCluster  # noqa: E402

REDIS = "/usr/bin/redis-server"
logging.getLogger("redis").addHandler(logging.NullHandler())
logging.getLogger("redis").propagate = False


class Mixed(ClusterCase):
    def form_mixed(self):
        # redis, cudis, redis, cudis: slot ranges alternate between the kinds
        bins = [REDIS, test_cluster.BIN, REDIS, test_cluster.BIN]
        nodes = self.form(4, binaries=bins)
        return nodes

    def test_one_cluster_of_both(self):
        nodes = self.form_mixed()
        r0, c1, r2, c3 = nodes
        # each node knows the others by the ids they gave themselves
        ids = sorted(n.id for n in nodes)
        for n in nodes:
            self.assertEqual(sorted(p["id"] for p in n.nodes()), ids)
        # a client of the cluster spreads keys over both kinds
        rc = RedisCluster(host="127.0.0.1", port=r0.port)
        keys = ["mixed:%d" % i for i in range(2000)]
        for k in keys:
            rc.set(k, k[::-1])
        self.assertEqual([rc.get(k) for k in keys], [k[::-1].encode() for k in keys])
        per = [n.call("DBSIZE") for n in nodes]
        self.assertEqual(sum(per), 2000)
        self.assertTrue(all(x > 300 for x in per), per)
        # redirections from one kind to the other
        k_c = next(k for k in keys if key_slot(k) in c1.slots)
        self.assertEqual(r0.call("GET", k_c),
                         test_cluster.Err("MOVED %d 127.0.0.1:%d" % (key_slot(k_c), c1.port)))
        k_r = next(k for k in keys if key_slot(k) in r2.slots)
        self.assertEqual(c3.call("GET", k_r),
                         test_cluster.Err("MOVED %d 127.0.0.1:%d" % (key_slot(k_r), r2.port)))
        # slots move both ways: redis -> cudis, cudis -> redis
        for src, dst in ((r0, c1), (c3, r2)):
            code, out = run([REDIS_CLI, "--cluster", "reshard", src.addr, "--cluster-from",
                             src.id, "--cluster-to", dst.id, "--cluster-slots", "500",
                             "--cluster-yes"], timeout=240)
            self.assertEqual(code, 0, out[-2000:])
        self.wait_joined(nodes, 30)
        code, out = run([REDIS_CLI, "--cluster", "check", r0.addr], timeout=60)
        self.assertEqual(code, 0, out[-2000:])
        self.assertIn("[OK] All 16384 slots covered.", out)
        rc = RedisCluster(host="127.0.0.1", port=c1.port)
        self.assertEqual([rc.get(k) for k in keys], [k[::-1].encode() for k in keys])
        self.assertEqual(sum(n.call("DBSIZE") for n in nodes), 2000)
        rc.close()

    def test_failures_seen_across_kinds(self):
        nodes = self.form_mixed()
        r0, c1, r2, c3 = nodes
        c1.kill()
        self.wait_state([r0, r2, c3], "fail", 15)
        for n in (r0, r2, c3):
            self.wait_for("%d sees the cudis node failed" % n.port,
                          lambda: "fail" in [p for p in n.nodes() if p["id"] == c1.id][0]["flags"],
                          10)
        c1.start()
        self.wait_joined([r0, c1, r2, c3], 30)
        r2.kill()
        self.wait_state([r0, c1, c3], "fail", 15)
        for n in (c1, c3):
            self.wait_for("%d sees the redis node failed" % n.port,
                          lambda: "fail" in [p for p in n.nodes() if p["id"] == r2.id][0]["flags"],
                          10)

    def test_hostnames_travel_both_ways(self):
        """cluster-announce-hostname reaches the other kind through the
        bus's hostname extension and shows in its CLUSTER NODES."""
        r = self.node(["--cluster-announce-hostname", "redis-a"], REDIS)
        c = self.node(["--cluster-announce-hostname", "cudis-b"], test_cluster.BIN)
        self.assertEqual(r.call("CLUSTER", "ADDSLOTSRANGE", 0, 8191), "OK")
        self.assertEqual(c.call("CLUSTER", "ADDSLOTSRANGE", 8192, 16383), "OK")
        self.assertEqual(r.call("CLUSTER", "SET-CONFIG-EPOCH", 1), "OK")
        self.assertEqual(c.call("CLUSTER", "SET-CONFIG-EPOCH", 2), "OK")
        self.assertEqual(c.call("CLUSTER", "MEET", "127.0.0.1", r.port), "OK")
        # (not wait_joined: CLUSTER SLOTS now carries the hostnames)
        self.wait_for("joined", lambda: all(n.info().get("cluster_known_nodes") == "2" and
                                            n.info().get("cluster_state") == "ok"
                                            for n in (r, c)), 20)

        def peer_addr(n, port):
            return [p["addr"] for p in n.nodes() if p["addr"].startswith("127.0.0.1:%d@" % port)]
        self.wait_for("redis shows cudis's hostname",
                      lambda: peer_addr(r, c.port) == ["127.0.0.1:%d@%d,cudis-b" % (c.port, c.port + 10000)])
        self.wait_for("cudis shows redis's hostname",
                      lambda: peer_addr(c, r.port) == ["127.0.0.1:%d@%d,redis-a" % (r.port, r.port + 10000)])
        # and CLUSTER SLOTS gives it as the node's networking metadata
        for n in (r, c):
            entries = {e[2][1]: e[2][3] for e in n.call("CLUSTER", "SLOTS")}
            self.assertEqual(entries, {r.port: [b"hostname", b"redis-a"],
                                       c.port: [b"hostname", b"cudis-b"]})


if __name__ == "__main__":
    if not os.path.exists(REDIS):  # scripts/deps.sh installs it: its absence is a failure
        print("no %s: install it with scripts/deps.sh" % REDIS)
        sys.exit(1)
    e2e_server.main(sys.modules[__name__], test_cluster)
