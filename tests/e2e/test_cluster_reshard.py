#!/usr/bin/python3
"""test_cluster_reshard.py - moving slots and keys between cluster nodes, as
Redis 7.0.15 does it (nodes as in test_cluster.py: --cluster-enabled yes,
--cluster-node-timeout 2000, every one stopped at the end).

  Reshard.test_reshard_under_load: 10,000 keys written through redis-py's
    RedisCluster into three nodes; `redis-cli --cluster reshard` moves 1,000
    slots from node 1 to node 2 while a thread keeps writing and reading
    keys through its own RedisCluster (following MOVED/ASK); no request
    fails, every read sees the last acknowledged write, every key reads
    back afterwards, `--cluster check` passes and every node's CLUSTER NODES
    has the 1,000 slots on node 2; the DBSIZE sum counts every key once.
  Reshard.test_add_node_rebalance_del_node: `--cluster add-node` of a
    fourth node, `--cluster rebalance --cluster-use-empty-masters` (about
    4,096 slots each), `--cluster del-node` refused while the node holds
    slots, then accepted once they are resharded away (the others forget it,
    it is reset); the keys and their number never change.
  Migrate.test_migrate: MIGRATE ... "" 0 5000 KEYS k1 k2 between two nodes
    of an open slot (IMPORTING/MIGRATING), with COPY, COPY REPLACE and
    REPLACE; BUSYKEY when the target has the key, NOKEY when none exists,
    the single-key form, the TTL travelling with the key, the target's
    errors relayed (MOVED when not importing, SELECT in cluster mode), then
    SETSLOT NODE and the keys served by the new owner.
Run by ctest (label e2e):
  /usr/bin/python3 test_cluster_reshard.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import logging
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402
import redis  # noqa: E402
import test_cluster  # noqa: E402
from test_cluster import (CROSSSLOT, NSLOTS, REDIS_CLI, ClusterCase, key_slot,  # noqa: E402
                          key_where, run)
from test_tracking import Err  # noqa: E402

BIN = None

# redis-py logs every MOVED/ASK it follows with a traceback: keep them quiet
logging.getLogger("redis").addHandler(logging.NullHandler())
logging.getLogger("redis").propagate = False


def cluster_client(port):
    from redis.cluster import RedisCluster
    return RedisCluster(host="127.0.0.1", port=port)


def write_keys(port, keys, value):
    """SET every key to value(key) through a RedisCluster pipeline."""
    rc = cluster_client(port)
    try:
        for i in range(0, len(keys), 1000):
            p = rc.pipeline()
            for k in keys[i:i + 1000]:
                p.set(k, value(k))
            res = p.execute()
            assert res == [True] * len(res), res
    finally:
        rc.close()


def read_keys(port, keys):
    rc = cluster_client(port)
    try:
        return rc.mget_nonatomic(keys)
    finally:
        rc.close()


class Load(threading.Thread):
    """Writes load:<n % span> = w<n> and reads back a key it wrote, through
    its own RedisCluster, until stopped; acked holds the last acknowledged
    value of every key."""

    def __init__(self, port, span=3000):
        super().__init__(daemon=True)
        self.port, self.span = port, span
        self.acked, self.errors, self.mismatches = {}, [], []
        self.writes = self.reads = 0
        self.stopping = threading.Event()

    def run(self):
        rc = cluster_client(self.port)
        try:
            n = 0
            while not self.stopping.is_set():
                key, val = "load:%d" % (n % self.span), ("w%d" % n).encode()
                try:
                    if rc.set(key, val):
                        self.acked[key] = val
                        self.writes += 1
                    else:
                        self.errors.append("SET %s: not acknowledged" % key)
                except Exception as e:  # noqa: BLE001 - every failure is counted
                    self.errors.append("SET %s: %r" % (key, e))
                back = "load:%d" % ((n * 7919) % min(self.span, n + 1))
                if back in self.acked:
                    try:
                        got = rc.get(back)
                        self.reads += 1
                        if got != self.acked[back]:
                            self.mismatches.append((back, self.acked[back], got))
                    except Exception as e:  # noqa: BLE001
                        self.errors.append("GET %s: %r" % (back, e))
                n += 1
        finally:
            rc.close()

    def stop(self):
        self.stopping.set()
        self.join(30)


@unittest.skipIf(REDIS_CLI is None, "redis-cli not installed")
class Reshard(ClusterCase):
    def cli(self, *args, ok=True):
        rc, out = run([REDIS_CLI, "--cluster"] + list(args), timeout=240)
        if ok:
            self.assertEqual(rc, 0, "redis-cli --cluster %s: rc %d\n%s" % (" ".join(args), rc, out[-3000:]))
        return rc, out

    def check(self, node, keys, masters):
        rc, out = self.cli("check", node.addr)
        self.assertIn("[OK] All nodes agree about slots configuration.", out)
        self.assertIn("[OK] All 16384 slots covered.", out)
        self.assertIn("[OK] %d keys in %d masters." % (keys, masters), out)
        self.assertNotIn("[WARNING]", out)
        self.assertNotIn("[ERR]", out)

    def owned(self, viewer, node):
        return [p for p in viewer.nodes() if p["id"] == node.id][0]["slots"]

    def test_reshard_under_load(self):
        a, b, c = nodes = self.form(3)
        keys = ["key:%d" % i for i in range(10000)]
        write_keys(a.port, keys, lambda k: "v-" + k)
        self.assertEqual(sum(n.call("DBSIZE") for n in nodes), 10000)
        load = Load(a.port)
        load.start()
        try:
            self.wait_for("load running", lambda: load.writes >= 200, 10)
            w0 = load.writes
            t0 = time.time()
            self.cli("reshard", a.addr, "--cluster-from", a.id, "--cluster-to", b.id,
                     "--cluster-slots", "1000", "--cluster-yes")
            took = time.time() - t0
            w1 = load.writes
            self.wait_for("load after the reshard", lambda: load.writes >= w1 + 200, 10)
        finally:
            load.stop()
        self.assertFalse(load.is_alive())
        self.assertEqual(load.errors[:10], [])
        self.assertEqual(load.mismatches[:10], [])
        self.assertGreater(w1 - w0, 0, "no write during the reshard (%.1f s)" % took)
        self.assertGreater(load.reads, 0)
        # every key reads back its last acknowledged value
        self.assertEqual(read_keys(b.port, keys), [("v-" + k).encode() for k in keys])
        lk = sorted(load.acked)
        self.assertEqual(read_keys(c.port, lk), [load.acked[k] for k in lk])
        total = 10000 + len(lk)
        self.assertEqual(sum(n.call("DBSIZE") for n in nodes), total)
        self.check(a, total, 3)
        # the slots: 1,000 fewer on A, all of them on B, in every node's view
        moved = a.slots - self.owned(a, a)
        self.assertEqual(len(moved), 1000)
        for viewer in nodes:
            self.assertEqual(self.owned(viewer, a), a.slots - moved)
            self.assertEqual(self.owned(viewer, b), b.slots | moved)
            self.assertEqual(self.owned(viewer, c), c.slots)
            self.assertEqual([p["open"] for p in viewer.nodes()], [[], [], []])
        in_moved = [k for k in keys + lk if key_slot(k) in moved]
        self.assertGreater(len(in_moved), 0)
        self.assertEqual(sum(b.call("CLUSTER", "COUNTKEYSINSLOT", s) for s in moved), len(in_moved))
        self.assertEqual(sum(a.call("CLUSTER", "COUNTKEYSINSLOT", s) for s in moved), 0)
        k = in_moved[0]
        self.assertEqual(a.call("GET", k), Err("MOVED %d 127.0.0.1:%d" % (key_slot(k), b.port)))
        self.wait_joined(nodes)

    def test_add_node_rebalance_del_node(self):
        a, b, c = self.form(3)
        keys = ["rb:%d" % i for i in range(2000)]
        write_keys(a.port, keys, lambda k: k.upper())
        want = [k.upper().encode() for k in keys]
        d = self.node()
        rc, out = self.cli("add-node", d.addr, a.addr)
        self.assertIn("[OK] New node added correctly.", out)
        # the new node must see the cluster ok before it can take keys
        self.wait_joined([a, b, c, d])
        d.id = d.call("CLUSTER", "MYID").decode()
        self.assertEqual(self.owned(a, d), set())
        self.assertEqual(d.myself()["flags"], ["myself", "master"])
        self.check(a, 2000, 4)
        rc, out = self.cli("rebalance", a.addr, "--cluster-use-empty-masters")
        self.assertIn("Rebalancing across 4 nodes", out)
        self.wait_joined([a, b, c, d])
        counts = [len(self.owned(a, n)) for n in (a, b, c, d)]
        self.assertEqual(sum(counts), NSLOTS)
        for cnt in counts:
            self.assertLess(abs(cnt - 4096), 100, counts)
        self.assertEqual(sum(n.call("DBSIZE") for n in (a, b, c, d)), 2000)
        self.assertGreater(d.call("DBSIZE"), 0)
        self.assertEqual(read_keys(c.port, keys), want)
        self.check(b, 2000, 4)
        # del-node of a node with slots is refused
        rc, out = self.cli("del-node", a.addr, d.id, ok=False)
        self.assertEqual(rc, 1, out)
        self.assertIn("[ERR] Node %s is not empty! Reshard data away and try again." % d.addr, out)
        self.assertEqual(len(self.owned(a, d)), counts[3])
        # its slots away, then it goes
        self.cli("reshard", a.addr, "--cluster-from", d.id, "--cluster-to", a.id,
                 "--cluster-slots", str(counts[3]), "--cluster-yes")
        for viewer in (a, b, c):
            self.wait_for("no slot on D in %d's view" % viewer.port,
                          lambda: self.owned(viewer, d) == set(), 10)
        self.assertEqual(len(self.owned(a, a)), counts[0] + counts[3])
        self.assertEqual(sum(n.call("DBSIZE") for n in (a, b, c)), 2000)
        rc, out = self.cli("del-node", a.addr, d.id)
        self.assertNotIn("[ERR]", out)
        for n in (a, b, c):
            self.wait_for("D forgotten by %d" % n.port,
                          lambda: n.info()["cluster_known_nodes"] == "3"
                          and d.id not in [p["id"] for p in n.nodes()], 10)
        self.wait_joined([a, b, c])
        (me,) = d.nodes()
        self.assertEqual(me["id"], d.id)
        self.assertEqual(me["flags"], ["myself", "master"])
        self.assertEqual(me["slots"], set())
        self.assertEqual(d.info()["cluster_known_nodes"], "1")
        self.assertEqual(d.call("DBSIZE"), 0)
        self.assertEqual(sum(n.call("DBSIZE") for n in (a, b, c)), 2000)
        self.assertEqual(read_keys(b.port, keys), want)
        self.check(a, 2000, 3)


class Migrate(ClusterCase):
    def test_migrate(self):
        a, b = self.form(2)
        tag = key_where(lambda s: s in a.slots, prefix="mg")
        s = key_slot(tag)
        k1, k2, k3, k4 = ("{%s}%d" % (tag, i) for i in range(1, 5))
        for k in (k1, k2, k3, k4):
            self.assertEqual(a.call("SET", k, "v" + k), "OK")
        self.assertEqual(a.call("PEXPIRE", k1, 100000), 1)
        M = ("MIGRATE", "127.0.0.1", b.port, "", 0, 5000)
        # B does not import the slot: its MOVED comes back as an error
        self.assertEqual(a.call(*M + ("KEYS", k1, k2)),
                         Err("ERR Target instance replied with error: MOVED %d 127.0.0.1:%d" % (s, a.port)))
        self.assertEqual(a.call("DBSIZE"), 4)
        self.assertEqual(b.call("CLUSTER", "SETSLOT", s, "IMPORTING", a.id), "OK")
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "MIGRATING", b.id), "OK")
        # COPY: on both, with the TTL
        self.assertEqual(a.call(*M + ("COPY", "KEYS", k1, k2)), "OK")
        self.assertEqual(a.call("MGET", k1, k2), [b"v" + k1.encode(), b"v" + k2.encode()])
        self.assertEqual(b.call("ASKING"), "OK")
        self.assertEqual(b.call("MGET", k1, k2), [b"v" + k1.encode(), b"v" + k2.encode()])
        self.assertEqual(b.call("ASKING"), "OK")
        pttl = b.call("PTTL", k1)
        self.assertTrue(90000 < pttl <= 100000, pttl)
        self.assertEqual(b.call("ASKING"), "OK")
        self.assertEqual(b.call("PTTL", k2), -1)
        # again: the target has them
        self.assertEqual(a.call(*M + ("COPY", "KEYS", k1, k2)),
                         Err("ERR Target instance replied with error: BUSYKEY Target key name already exists."))
        self.assertEqual(a.call("SET", k1, "new"), "OK")
        self.assertEqual(a.call(*M + ("COPY", "REPLACE", "KEYS", k1, k2)), "OK")
        self.assertEqual(b.call("ASKING"), "OK")
        self.assertEqual(b.call("GET", k1), b"new")
        self.assertEqual(b.call("ASKING"), "OK")
        self.assertEqual(b.call("PTTL", k1), -1)
        self.assertEqual(a.call("GET", k1), b"new")
        # REPLACE without COPY: gone from A, which now ASKs for them
        self.assertEqual(a.call(*M + ("REPLACE", "KEYS", k1, k2)), "OK")
        self.assertEqual(a.call("GET", k1), Err("ASK %d 127.0.0.1:%d" % (s, b.port)))
        self.assertEqual(a.call("EXISTS", k2), Err("ASK %d 127.0.0.1:%d" % (s, b.port)))
        self.assertEqual(a.call(*M + ("KEYS", k1, k2)), "NOKEY")
        self.assertEqual(a.call(*M + ("COPY", "KEYS", k1, k2)), "NOKEY")
        # the single-key form
        self.assertEqual(a.call("MIGRATE", "127.0.0.1", b.port, k3, 0, 5000), "OK")
        self.assertEqual(a.call("MIGRATE", "127.0.0.1", b.port, k3, 0, 5000), "NOKEY")
        # errors
        self.assertEqual(a.call("MIGRATE", "127.0.0.1", b.port, "", 1, 5000, "KEYS", k4),
                         Err("ERR Target instance replied with error: ERR SELECT is not allowed in cluster mode"))
        self.assertEqual(a.call("MIGRATE", "127.0.0.1", b.port, k4, 0, 5000, "KEYS", k4),
                         Err("ERR When using MIGRATE KEYS option, the key argument must be set to the "
                             "empty string"))
        self.assertEqual(a.call("MIGRATE", "127.0.0.1", b.port, "", 0, 5000, "KEYS", k4, "a"), CROSSSLOT)
        self.assertEqual(a.call("MIGRATE", "127.0.0.1", b.port, "", 0, 5000, "BAD", k4),
                         Err("ERR syntax error"))
        got = a.call("MIGRATE", "127.0.0.1", 1, "", 0, 500, "KEYS", k4)
        self.assertIsInstance(got, Err)
        self.assertTrue(got.startswith("IOERR "), got)
        self.assertEqual(a.call("GET", k4), b"v" + k4.encode())
        # (Redis 7.0 pipelines SELECT 1 and RESTORE-ASKING: the key may
        # already be on B after the SELECT error, hence REPLACE)
        self.assertEqual(a.call(*M + ("REPLACE", "KEYS", k4)), "OK")
        self.assertEqual(a.call("DBSIZE"), 0)
        self.assertEqual(a.call("CLUSTER", "COUNTKEYSINSLOT", s), 0)
        self.assertEqual(b.call("CLUSTER", "COUNTKEYSINSLOT", s), 4)
        # close the slot: B owns it and serves the keys without ASKING
        self.assertEqual(b.call("CLUSTER", "SETSLOT", s, "NODE", b.id), "OK")
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "NODE", b.id), "OK")
        self.assertEqual(b.call("MGET", k1, k2, k3, k4),
                         [b"new", b"v" + k2.encode(), b"v" + k3.encode(), b"v" + k4.encode()])
        self.assertEqual(a.call("GET", k1), Err("MOVED %d 127.0.0.1:%d" % (s, b.port)))
        self.assertEqual(a.call(*M + ("KEYS", k1)), Err("MOVED %d 127.0.0.1:%d" % (s, b.port)))
        self.wait_joined([a, b])
        self.assertIn(s, b.myself()["slots"])


class MigrateStandalone(unittest.TestCase):
    """MIGRATE between two servers outside cluster mode, over the cached
    connection: when the target closed it meanwhile, the next MIGRATE
    connects anew (once) instead of failing."""

    def test_cached_connection_closed_by_target(self):
        a, b = e2e_server.Server(test_cluster.BIN), e2e_server.Server(test_cluster.BIN)
        try:
            ra, rb = redis.Redis(port=a.port), redis.Redis(port=b.port)
            ra.mset({"m1": "one", "m2": "two", "m3": "three"})
            self.assertEqual(ra.execute_command("MIGRATE", "127.0.0.1", b.port, "m1", 0, 5000),
                             b"OK")
            victims = [line for line in rb.execute_command("CLIENT", "LIST").decode().splitlines()
                       if " cmd=restore " in line]
            self.assertEqual(len(victims), 1, victims)
            cid = [f for f in victims[0].split() if f.startswith("id=")][0][3:]
            self.assertEqual(rb.execute_command("CLIENT", "KILL", "ID", cid), 1)
            time.sleep(0.1)
            self.assertEqual(ra.execute_command("MIGRATE", "127.0.0.1", b.port, "", 0, 5000,
                                                "KEYS", "m2", "m3"), b"OK")
            self.assertEqual(rb.mget("m1", "m2", "m3"), [b"one", b"two", b"three"])
            self.assertEqual(ra.dbsize(), 0)
            # DB 3 on the target (SELECT travels with the keys)
            ra.set("m4", "four")
            self.assertEqual(ra.execute_command("MIGRATE", "127.0.0.1", b.port, "m4", 3, 5000),
                             b"OK")
            self.assertEqual(redis.Redis(port=b.port, db=3).get("m4"), b"four")
            ra.close()
            rb.close()
        finally:
            self.assertEqual((a.stop(), b.stop()), (0, 0))


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__], test_cluster)
