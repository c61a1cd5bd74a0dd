#!/usr/bin/python3
"""test_cluster.py - Redis Cluster mode, as Redis 7.0.15 answers it. Each
test starts its own cluster nodes (--cluster-enabled yes, a nodes-PORT.conf
in a fresh folder that is also the process's working directory,
--cluster-node-timeout 2000) on ports P where P and its bus port P+10000
are both free, and stops every one of them at the end (SIGTERM, exit 0
expected; SIGKILL for whatever is left).

  SingleNode: CLUSTER MYID, CLUSTER INFO of a node without slots, the
    CLUSTERDOWN reply for an unserved slot, CLUSTER KEYSLOT against a CRC16
    (XMODEM) computed here (hash tags: {user1000}, foo{}{bar}, foo{{bar}}zap,
    the empty key), ADDSLOTS/ADDSLOTSRANGE/DELSLOTS/DELSLOTSRANGE and their
    errors, the state turning ok once all 16384 slots are assigned, the
    CLUSTER NODES line of myself, CLUSTER SLOTS and CLUSTER SHARDS shapes,
    COUNTKEYSINSLOT/GETKEYSINSLOT, CROSSSLOT on one node (MSET, DEL, EVAL,
    and EXEC of a transaction spanning two slots), SELECT refused, READONLY,
    READWRITE and ASKING, CLUSTER RESET refused with keys (then soft keeps
    the id, hard makes a new one), an ADDSLOTS in nodes.conf within a
    second and the last change before SIGTERM in it after, and a restart
    that reloads nodes.conf
    (same id, slots and epoch; its last line is "vars currentEpoch ...").
  ThreeNodes: `redis-cli --cluster create` and `--cluster check`; three
    nodes joined by hand (ADDSLOTSRANGE, SET-CONFIG-EPOCH, MEET) that agree
    in CLUSTER NODES/SLOTS/SHARDS; MOVED to the owner, CROSSSLOT (MSET, MGET,
    DEL, EVAL), MULTI with a key of another node (MOVED when queued, then
    EXECABORT), EVAL of a remote key and a script touching a non-local key;
    redis-py's RedisCluster (1,000 keys, mget_nonatomic, ZUNIONSTORE, LMPOP
    and SINTERCARD, which it places by COMMAND GETKEYS, PUBLISH by the
    pubsub flag) and `redis-cli -c`
    following redirections; COUNTKEYSINSLOT/GETKEYSINSLOT/DBSIZE on owners.
  AskRedirection: a slot moved by hand with SETSLOT IMPORTING/MIGRATING:
    ASK for missing keys, TRYAGAIN for a multi-key command half there, MOVED
    on the importing node without ASKING, served after ASKING, the
    [S->-id] and [S-<-id] notation in CLUSTER NODES, "can't assign" while
    the source still holds keys, then SETSLOT NODE and MOVED to the new owner.
  Failure: a node SIGKILLed: the others mark it fail, the cluster state
    turns fail and keys get CLUSTERDOWN; with cluster-require-full-coverage
    no (CONFIG SET) the live nodes serve their slots again, still answer
    MOVED to the dead node for its slots, and "Hash slot not served" once
    those slots are deleted.
Run by ctest (label e2e):
  /usr/bin/python3 test_cluster.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import atexit
import hashlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402
from test_tracking import Conn, Err  # noqa: E402

BIN = None
REDIS_CLI = shutil.which("redis-cli")
NSLOTS = 16384
NODE_TIMEOUT_MS = 2000

NOT_SERVED = Err("CLUSTERDOWN Hash slot not served")
DOWN = Err("CLUSTERDOWN The cluster is down")
CROSSSLOT = Err("CROSSSLOT Keys in request don't hash to the same slot")
EXECABORT = Err("EXECABORT Transaction discarded because of previous errors.")
TRYAGAIN = Err("TRYAGAIN Multiple keys request during rehashing of slot")


# ---- hash slots, computed here -------------------------------------------

def crc16(data):
    """CRC16-CCITT (XMODEM): poly 0x1021, init 0, as Redis Cluster uses it."""
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def key_slot(key):
    """The hash slot of a key: only the part between the first { and the
    next } when that is not empty."""
    if isinstance(key, str):
        key = key.encode()
    s = key.find(b"{")
    if s >= 0:
        e = key.find(b"}", s + 1)
        if e > s + 1:
            key = key[s + 1:e]
    return crc16(key) % NSLOTS


def key_where(pred, prefix="k", start=0):
    """The first key prefix<N> (N >= start) whose slot satisfies pred."""
    i = start
    while True:
        k = "%s%d" % (prefix, i)
        if pred(key_slot(k)):
            return k
        i += 1


def split_slots(n):
    """The ranges redis-cli --cluster create gives n masters."""
    per = NSLOTS / n
    out, first, cursor = [], 0, 0.0
    for i in range(n):
        last = int(round(cursor + per - 1))
        if last > NSLOTS - 1 or i == n - 1:
            last = NSLOTS - 1
        out.append((first, last))
        first = last + 1
        cursor += per
    return out


def slot_set(tokens):
    """Slots named by CLUSTER NODES range tokens ("0-5460", "449")."""
    out = set()
    for t in tokens:
        lo, _, hi = t.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def parse_nodes(text):
    """CLUSTER NODES -> list of dicts (slots as a set, open [..] entries apart)."""
    if isinstance(text, bytes):
        text = text.decode()
    if not text.endswith("\n"):
        raise AssertionError("CLUSTER NODES without a final newline: %r" % text)
    out = []
    for line in text.split("\n")[:-1]:
        f = line.split(" ")
        if len(f) < 8:
            raise AssertionError("CLUSTER NODES line with %d fields: %r" % (len(f), line))
        out.append({"id": f[0], "addr": f[1], "flags": f[2].split(","), "master": f[3],
                    "ping": f[4], "pong": f[5], "epoch": f[6], "link": f[7],
                    "ranges": [t for t in f[8:] if not t.startswith("[")],
                    "open": [t for t in f[8:] if t.startswith("[")],
                    "slots": slot_set(t for t in f[8:] if not t.startswith("[")),
                    "line": line})
    return out


def info_dict(reply):
    if isinstance(reply, bytes):
        reply = reply.decode()
    out = {}
    for line in reply.split("\r\n"):
        if ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


def pairs(flat):
    """[k1, v1, k2, v2] -> dict with str keys."""
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in zip(flat[::2], flat[1::2])}


# ---- nodes ------------------------------------------------------------------

_LIVE = set()  # every process started here, killed at exit whatever happens


@atexit.register
def _kill_leftovers():
    for p in list(_LIVE):
        if p.poll() is None:
            p.kill()
            p.wait()


def _bindable(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


_TAKEN = set()


def pick_port():
    """A port P in 20000..40000 with P and its bus port P+10000 both free
    (below the kernel's ephemeral range when possible)."""
    for hi in (22767, 40000):
        for _ in range(200):
            p = random.randint(20000, hi)
            if p in _TAKEN or p + 10000 in _TAKEN or p - 10000 in _TAKEN:
                continue
            if _bindable(p) and _bindable(p + 10000):
                _TAKEN.add(p)
                return p
    raise RuntimeError("no free port pair")


class Node:
    """A cluster node: .port, .conf (its nodes.conf), .call(*cmd) on a raw
    RESP connection. start()/stop()/kill(); the same port and config file
    are used again by start() after stop()."""

    def __init__(self, tmpdir, extra=(), binary=None):
        self.dir = tmpdir
        self.extra = tuple(extra)
        self.bin = binary or BIN
        self.proc = None
        self.c = None
        self.killed = False
        self.is_redis = "redis-server" in os.path.basename(self.bin)
        for attempt in range(3):
            self.port = pick_port()
            self.conf = os.path.join(tmpdir, "nodes-%d.conf" % self.port)
            self.log = os.path.join(tmpdir, "node-%d.log" % self.port)
            if self.start(must=attempt == 2):
                return

    def args(self):
        a = [self.bin]
        if self.is_redis:
            a += ["--save", "", "--appendonly", "no"]
        else:
            a += ["--engine", os.environ.get("CUDIS_E2E_ENGINE") or "cpu"]
        a += ["--port", str(self.port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
              "--cluster-config-file", self.conf,
              "--cluster-node-timeout", str(NODE_TIMEOUT_MS)]
        return a + list(self.extra)

    def start(self, must=True):
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.args(), stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL, cwd=self.dir)
        _LIVE.add(self.proc)
        self.killed = False
        end = time.time() + 20
        while time.time() < end and self.proc.poll() is None:
            if e2e_server.ping(self.port):
                self.c = Conn(self.port)
                return True
            time.sleep(0.02)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if must:
            sys.stderr.write(self.log_tail())
            raise RuntimeError("cluster node %s on port %d did not start" % (self.bin, self.port))
        return False

    def call(self, *args):
        return self.c.call(*args)

    def info(self):
        return info_dict(self.call("CLUSTER", "INFO"))

    def nodes(self):
        return parse_nodes(self.call("CLUSTER", "NODES"))

    def myself(self):
        return [n for n in self.nodes() if "myself" in n["flags"]][0]

    @property
    def addr(self):
        return "127.0.0.1:%d" % self.port

    def log_tail(self):
        try:
            with open(self.log, "rb") as f:
                return f.read()[-4000:].decode("utf-8", "replace")
        except OSError:
            return ""

    def close(self):
        if self.c is not None:
            try:
                self.c.close()
            except OSError:
                pass
            self.c = None

    def stop(self):
        """SIGTERM; the exit status (None when it was not running)."""
        self.close()
        if self.proc is None:
            return None
        if self.proc.poll() is not None:
            return self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = -9
        return rc

    def kill(self):
        self.close()
        self.killed = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def run(args, timeout=120):
    p = subprocess.run(args, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")


class ClusterCase(unittest.TestCase):
    """self.node() starts a node in this test's folder; every node is
    stopped at the end (SIGTERM must give 0 unless the test killed it)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cudis-e2e-cluster-")
        self.all_nodes = []
        self.addCleanup(self._stop_all)

    def _stop_all(self):
        bad = []
        for n in self.all_nodes:
            was_killed = n.killed
            rc = n.stop()
            if not was_killed and rc not in (0, None):
                bad.append((n.port, rc, n.log_tail()))
        for p in [n.proc for n in self.all_nodes if n.proc is not None]:
            _LIVE.discard(p)
        shutil.rmtree(self.tmp, ignore_errors=True)
        for port, rc, tail in bad:
            sys.stderr.write("node %d exited %s:\n%s\n" % (port, rc, tail))
        self.assertEqual(bad, [], "nodes did not exit 0 on SIGTERM")

    def node(self, extra=(), binary=None):
        n = Node(self.tmp, extra, binary)
        self.all_nodes.append(n)
        return n

    def wait_for(self, what, fn, timeout=15.0, step=0.05):
        """Poll fn() until it returns a true value; fail with `what` and the
        last value at the deadline."""
        end = time.time() + timeout
        last = None
        while True:
            last = fn()
            if last:
                return last
            if time.time() > end:
                self.fail("%s: not after %.0f s (last: %r)" % (what, timeout, last))
            time.sleep(step)

    def wait_state(self, nodes, state, timeout=15.0):
        self.wait_for("cluster_state:%s on %s" % (state, [n.port for n in nodes]),
                      lambda: all(n.info().get("cluster_state") == state for n in nodes),
                      timeout)

    def slots_view(self, n):
        """CLUSTER SLOTS as sorted (start, end, ip, port, id) tuples."""
        out = []
        for entry in n.call("CLUSTER", "SLOTS"):
            self.assertEqual(len(entry), 3, entry)  # no replicas here
            start, end, master = entry
            self.assertEqual(len(master), 4, master)
            self.assertEqual(master[3], [], "no networking metadata: %r" % master)
            out.append((start, end, master[0], master[1], master[2].decode()))
        return sorted(out)

    def wait_joined(self, nodes, timeout=15.0):
        """Every node: state ok, knows every node, CLUSTER SLOTS the same on
        all, every peer connected."""
        def ok():
            views = []
            for n in nodes:
                i = n.info()
                if i.get("cluster_state") != "ok" or i.get("cluster_known_nodes") != str(len(nodes)):
                    return False
                if any(p["link"] != "connected" for p in n.nodes()):
                    return False
                views.append(self.slots_view(n))
            return all(v == views[0] for v in views)
        self.wait_for("cluster of %d joined" % len(nodes), ok, timeout)

    def form(self, count=3, extra=(), binaries=None):
        """count nodes joined by hand: ADDSLOTSRANGE as redis-cli splits
        them, SET-CONFIG-EPOCH 1..count, MEET the first; wait until joined.
        binaries: each node's server (default: the one under test)."""
        nodes = [self.node(extra, binaries[i] if binaries else None) for i in range(count)]
        for i, (n, (lo, hi)) in enumerate(zip(nodes, split_slots(count))):
            self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", lo, hi), "OK")
            self.assertEqual(n.call("CLUSTER", "SET-CONFIG-EPOCH", i + 1), "OK")
        for n in nodes[1:]:
            self.assertEqual(n.call("CLUSTER", "MEET", "127.0.0.1", nodes[0].port), "OK")
        self.wait_joined(nodes)
        for n in nodes:
            n.id = n.call("CLUSTER", "MYID").decode()
            n.slots = n.myself()["slots"]
        return nodes

    @staticmethod
    def owner(nodes, slot):
        return [n for n in nodes if slot in n.slots][0]


# ---- one node ---------------------------------------------------------------

class SingleNode(ClusterCase):
    def test_fresh_node(self):
        n = self.node()
        myid = n.call("CLUSTER", "MYID")
        self.assertRegex(myid.decode(), r"^[0-9a-f]{40}$")
        info = n.info()
        self.assertEqual(info["cluster_state"], "fail")
        self.assertEqual(info["cluster_slots_assigned"], "0")
        self.assertEqual(info["cluster_slots_ok"], "0")
        self.assertEqual(info["cluster_slots_pfail"], "0")
        self.assertEqual(info["cluster_slots_fail"], "0")
        self.assertEqual(info["cluster_known_nodes"], "1")
        self.assertEqual(int(info["cluster_current_epoch"]), 0)
        self.assertEqual(int(info["cluster_my_epoch"]), 0)
        # Redis starts with cluster_size 1 and counts (0 masters with
        # slots) a little later, after its first state update.
        self.wait_for("cluster_size:0", lambda: n.info()["cluster_size"] == "0", 10)
        self.assertEqual(n.call("GET", "k"), NOT_SERVED)
        self.assertEqual(n.call("SET", "k", "v"), NOT_SERVED)
        self.assertEqual(n.call("MGET", "{a}1", "{a}2"), NOT_SERVED)
        self.assertEqual(n.call("PING"), "PONG")
        self.assertEqual(n.call("DBSIZE"), 0)
        # one node alone: MYID is stable, CLUSTER NODES has one line
        self.assertEqual(n.call("CLUSTER", "MYID"), myid)
        (me,) = n.nodes()
        self.assertEqual(me["id"], myid.decode())
        self.assertEqual(me["flags"], ["myself", "master"])
        self.assertEqual(me["slots"], set())

    def test_keyslot(self):
        n = self.node()
        known = {"foo": 12182, "{user1000}.following": key_slot("user1000"),
                 "{user1000}.followers": key_slot("user1000"),
                 "foo{}{bar}": crc16(b"foo{}{bar}") % NSLOTS,
                 "foo{{bar}}zap": crc16(b"{bar") % NSLOTS,
                 "foo{bar}{zap}": key_slot("bar"), "{}": crc16(b"{}") % NSLOTS,
                 "a{b": crc16(b"a{b") % NSLOTS, "": 0}
        for k, want in known.items():
            self.assertEqual(n.call("CLUSTER", "KEYSLOT", k), want, k)
            self.assertEqual(key_slot(k), want, "the test's own CRC16: %r" % k)
        self.assertEqual(n.call("CLUSTER", "KEYSLOT", "{user1000}.following"),
                         n.call("CLUSTER", "KEYSLOT", "{user1000}.followers"))
        rnd = random.Random(7)
        for _ in range(300):
            k = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 24)))
            self.assertEqual(n.call("CLUSTER", "KEYSLOT", k), key_slot(k), k)
        self.assertEqual(n.call("CLUSTER", "KEYSLOT"),
                         Err("ERR wrong number of arguments for 'cluster|keyslot' command"))
        self.assertEqual(n.call("CLUSTER", "KEYSLOT", "a", "b"),
                         Err("ERR wrong number of arguments for 'cluster|keyslot' command"))

    def test_slots_commands(self):
        n = self.node()
        myid = n.call("CLUSTER", "MYID").decode()
        bad_slot = Err("ERR Invalid or out of range slot")
        self.assertEqual(n.call("CLUSTER", "ADDSLOTS", 0, 1, 2), "OK")
        self.assertEqual(n.call("CLUSTER", "ADDSLOTS", 0, 1, 2), Err("ERR Slot 0 is already busy"))
        self.assertEqual(n.call("CLUSTER", "ADDSLOTS", 16384), bad_slot)
        self.assertEqual(n.call("CLUSTER", "ADDSLOTS", -1), bad_slot)
        self.assertEqual(n.call("CLUSTER", "ADDSLOTS", "abc"), bad_slot)
        self.assertEqual(n.call("CLUSTER", "ADDSLOTS", 10, 10), Err("ERR Slot 10 specified multiple times"))
        self.assertEqual(n.call("CLUSTER", "ADDSLOTS"),
                         Err("ERR wrong number of arguments for 'cluster|addslots' command"))
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 3, 5), "OK")
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 3, 5), Err("ERR Slot 3 is already busy"))
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 7, 6),
                         Err("ERR start slot number 7 is greater than end slot number 6"))
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 7, 16384), bad_slot)
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 1),
                         Err("ERR wrong number of arguments for 'cluster|addslotsrange' command"))
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 7, 8, 9),
                         Err("ERR wrong number of arguments for 'cluster|addslotsrange' command"))
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 100, 200, 300, 300), "OK")
        self.assertEqual(n.myself()["ranges"], ["0-5", "100-200", "300"])
        self.assertEqual(n.info()["cluster_slots_assigned"], str(6 + 101 + 1))
        self.assertEqual(n.call("CLUSTER", "DELSLOTS", 0), "OK")
        self.assertEqual(n.call("CLUSTER", "DELSLOTS", 0), Err("ERR Slot 0 is already unassigned"))
        self.assertEqual(n.call("CLUSTER", "DELSLOTS", 16384), bad_slot)
        self.assertEqual(n.call("CLUSTER", "DELSLOTSRANGE", 1, 2), "OK")
        self.assertEqual(n.call("CLUSTER", "DELSLOTSRANGE", 1, 2), Err("ERR Slot 1 is already unassigned"))
        self.assertEqual(n.call("CLUSTER", "DELSLOTSRANGE", 150, 160, 300, 300), "OK")
        self.assertEqual(n.myself()["ranges"], ["3-5", "100-149", "161-200"])
        self.assertEqual(n.call("GET", key_where(lambda s: s == 0 or 6 <= s < 100)), NOT_SERVED)
        # the other slots too: all of them is ok (after a moment)
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 0, 16383), Err("ERR Slot 3 is already busy"))
        self.assertEqual(n.call("CLUSTER", "DELSLOTSRANGE", 3, 5, 100, 149, 161, 200), "OK")
        self.assertEqual(n.info()["cluster_slots_assigned"], "0")
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 0, 16383), "OK")
        self.wait_state([n], "ok", 10)
        info = n.info()
        self.assertEqual(info["cluster_slots_assigned"], "16384")
        self.assertEqual(info["cluster_slots_ok"], "16384")
        self.assertEqual(info["cluster_known_nodes"], "1")
        self.assertEqual(info["cluster_size"], "1")
        self.assertEqual(n.call("SET", "foo", "bar"), "OK")
        self.assertEqual(n.call("GET", "foo"), b"bar")
        # CLUSTER NODES: id ip:port@cport flags master ping pong epoch link slots
        (me,) = n.nodes()
        self.assertEqual(me["id"], myid)
        # Redis leaves the ip empty until a peer tells a node its address
        self.assertRegex(me["addr"], r"^(127\.0\.0\.1)?:%d@%d$" % (n.port, n.port + 10000))
        self.assertEqual(me["flags"], ["myself", "master"])
        self.assertEqual((me["master"], me["ping"], me["pong"]), ("-", "0", "0"))
        self.assertEqual(me["epoch"], info["cluster_my_epoch"])
        self.assertEqual(me["link"], "connected")
        self.assertEqual(me["ranges"], ["0-16383"])
        self.assertEqual(me["open"], [])
        # CLUSTER SLOTS: [[start, end, [ip, port, id, []]]]
        (entry,) = n.call("CLUSTER", "SLOTS")
        self.assertEqual(entry[:2], [0, 16383])
        self.assertIn(entry[2][0], (b"", b"127.0.0.1"))
        self.assertEqual(entry[2][1:], [n.port, myid.encode(), []])
        self.assertEqual(len(entry), 3)
        # CLUSTER SHARDS: [["slots", [0, 16383], "nodes", [[id .. health]]]]
        (shard,) = n.call("CLUSTER", "SHARDS")
        shard = pairs(shard)
        self.assertEqual(sorted(shard), ["nodes", "slots"])
        self.assertEqual(shard["slots"], [0, 16383])
        (node,) = shard["nodes"]
        node = pairs(node)
        self.assertEqual(sorted(node), sorted(["id", "port", "ip", "endpoint", "role",
                                               "replication-offset", "health"]))
        self.assertEqual(node["id"], myid.encode())
        self.assertEqual(node["port"], n.port)
        self.assertIn(node["ip"], (b"", b"127.0.0.1"))
        self.assertEqual(node["endpoint"], node["ip"])
        self.assertEqual(node["role"], b"master")
        self.assertIsInstance(node["replication-offset"], int)
        self.assertEqual(node["health"], b"online")

    def test_keys_in_slots_and_crossslot(self):
        n = self.node()
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 0, 16383), "OK")
        self.wait_state([n], "ok", 10)
        s = key_slot("{t}1")
        for i in range(1, 6):
            self.assertEqual(n.call("SET", "{t}%d" % i, i), "OK")
        self.assertEqual(n.call("SET", "other", "x"), "OK")
        self.assertEqual(n.call("CLUSTER", "COUNTKEYSINSLOT", s), 5)
        self.assertEqual(n.call("CLUSTER", "COUNTKEYSINSLOT", key_slot("other")), 1)
        self.assertEqual(n.call("CLUSTER", "COUNTKEYSINSLOT", (s + 1) % NSLOTS), 0)
        got = n.call("CLUSTER", "GETKEYSINSLOT", s, 10)
        self.assertEqual(sorted(got), [b"{t}%d" % i for i in range(1, 6)])
        got = n.call("CLUSTER", "GETKEYSINSLOT", s, 2)
        self.assertEqual(len(got), 2)
        self.assertTrue(set(got) <= {b"{t}%d" % i for i in range(1, 6)}, got)
        self.assertEqual(n.call("CLUSTER", "GETKEYSINSLOT", s, 0), [])
        self.assertEqual(n.call("CLUSTER", "COUNTKEYSINSLOT", 16384), Err("ERR Invalid slot"))
        self.assertEqual(n.call("CLUSTER", "COUNTKEYSINSLOT", -1), Err("ERR Invalid slot"))
        self.assertEqual(n.call("CLUSTER", "COUNTKEYSINSLOT", "x"),
                         Err("ERR value is not an integer or out of range"))
        self.assertEqual(n.call("CLUSTER", "GETKEYSINSLOT", s, -1),
                         Err("ERR Invalid slot or number of keys"))
        self.assertEqual(n.call("CLUSTER", "GETKEYSINSLOT", 16384, 1),
                         Err("ERR Invalid slot or number of keys"))
        self.assertEqual(n.call("CLUSTER", "GETKEYSINSLOT", s, "x"),
                         Err("ERR value is not an integer or out of range"))
        # keys of different slots in one command: refused, even on one node
        a, c = "a", "c"
        self.assertNotEqual(key_slot(a), key_slot(c))
        self.assertEqual(n.call("MSET", a, "1", c, "2"), CROSSSLOT)
        self.assertEqual(n.call("MGET", a, c), CROSSSLOT)
        self.assertEqual(n.call("DEL", a, c), CROSSSLOT)
        self.assertEqual(n.call("EVAL", "return 1", 2, a, c), CROSSSLOT)
        self.assertEqual(n.call("EVAL", "return 1", 0), 1)
        self.assertEqual(n.call("MSET", "{x}a", "1", "{x}b", "2"), "OK")
        self.assertEqual(n.call("MGET", "{x}a", "{x}b"), [b"1", b"2"])
        self.assertEqual(n.call("EXISTS", a, c), CROSSSLOT)
        # a transaction whose commands span two slots is refused at EXEC
        self.assertEqual(n.call("MULTI"), "OK")
        self.assertEqual(n.call("SET", a, "1"), "QUEUED")
        self.assertEqual(n.call("SET", c, "1"), "QUEUED")
        self.assertEqual(n.call("EXEC"), CROSSSLOT)
        self.assertEqual(n.call("EXISTS", a), 0)
        self.assertEqual(n.call("MULTI"), "OK")
        self.assertEqual(n.call("SET", a, "1"), "QUEUED")
        self.assertEqual(n.call("GET", a), "QUEUED")
        self.assertEqual(n.call("EXEC"), ["OK", b"1"])
        # one database only; connection-level cluster commands
        self.assertEqual(n.call("SELECT", 1), Err("ERR SELECT is not allowed in cluster mode"))
        self.assertEqual(n.call("SELECT", 0), "OK")
        self.assertEqual(n.call("READONLY"), "OK")
        self.assertEqual(n.call("GET", "{t}1"), b"1")
        self.assertEqual(n.call("READWRITE"), "OK")
        self.assertEqual(n.call("ASKING"), "OK")
        self.assertEqual(n.call("GET", "{t}1"), b"1")
        self.assertEqual(n.call("CLUSTER", "NOSUCH"),
                         Err("ERR unknown subcommand 'NOSUCH'. Try CLUSTER HELP."))

    def test_reset(self):
        n = self.node()
        myid = n.call("CLUSTER", "MYID")
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 0, 16383), "OK")
        self.wait_state([n], "ok", 10)
        self.assertEqual(n.call("SET", "k", "v"), "OK")
        refused = Err("ERR CLUSTER RESET can't be called with master nodes containing keys")
        self.assertEqual(n.call("CLUSTER", "RESET"), refused)
        self.assertEqual(n.call("CLUSTER", "RESET", "HARD"), refused)
        self.assertEqual(n.call("CLUSTER", "RESET", "SOFT"), refused)
        self.assertEqual(n.call("CLUSTER", "RESET", "bad"), Err("ERR syntax error"))
        self.assertEqual(n.info()["cluster_slots_assigned"], "16384")
        self.assertEqual(n.call("GET", "k"), b"v")
        self.assertEqual(n.call("CLUSTER", "BUMPEPOCH"), "BUMPED 1")
        self.assertEqual(n.call("FLUSHALL"), "OK")
        # soft: slots forgotten, same id, epochs kept
        self.assertEqual(n.call("CLUSTER", "RESET"), "OK")
        self.assertEqual(n.call("CLUSTER", "MYID"), myid)
        info = n.info()
        self.assertEqual(info["cluster_slots_assigned"], "0")
        self.assertEqual(info["cluster_current_epoch"], "1")
        self.assertEqual(n.call("GET", "k"), NOT_SERVED)
        # hard: a new id, epochs back to 0
        self.assertEqual(n.call("CLUSTER", "RESET", "HARD"), "OK")
        newid = n.call("CLUSTER", "MYID")
        self.assertRegex(newid.decode(), r"^[0-9a-f]{40}$")
        self.assertNotEqual(newid, myid)
        info = n.info()
        self.assertEqual((info["cluster_current_epoch"], info["cluster_my_epoch"]), ("0", "0"))
        (me,) = n.nodes()
        self.assertEqual(me["id"], newid.decode())

    def test_config_file_serves_one_node(self):
        """A second node started with the same cluster-config-file refuses to
        run (exit 1, Redis's message), also after the first saved it; once
        the first stops, a node started on the file is that node again."""
        a = self.node()
        self.assertEqual(a.call("CLUSTER", "ADDSLOTS", 1), "OK")  # a save: a new file
        myid = a.call("CLUSTER", "MYID")
        args = Node.args(a)
        args[args.index("--port") + 1] = str(pick_port())
        p = subprocess.run(args, capture_output=True, timeout=20, cwd=a.dir)
        self.assertEqual(p.returncode, 1)
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        if not out.strip():  # (a logfile would hold it)
            out = a.log_tail()
        self.assertIn("Sorry, the cluster configuration file %s is already used by a different "
                      "Redis Cluster node." % a.conf, out)
        self.assertEqual(a.stop(), 0)
        a.start()
        self.assertEqual(a.call("CLUSTER", "MYID"), myid)

    def test_script_keeps_its_declared_slot(self):
        """A function may touch undeclared keys only in the slot of its
        declared keys (unless allow-cross-slot-keys); an EVAL script may
        touch local keys of any slot (Redis's rule for scripts without a
        shebang). All slots are this node's here."""
        n = self.node()
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 0, NSLOTS - 1), "OK")
        self.wait_for("state ok", lambda: n.info().get("cluster_state") == "ok")
        a, other = "{s1}a", "{s2}b"
        self.assertNotEqual(key_slot(a), key_slot(other))
        script = "redis.call('set', KEYS[1], 1); return redis.call('get', '%s')" % other
        self.assertEqual(n.call("EVAL", script, 1, a), None)
        lib = ("#!lua name=slots\n"
               "redis.register_function('cross', function(keys, args)\n"
               "  redis.call('set', keys[1], 1)\n"
               "  return redis.call('get', '%s')\n"
               "end)\n"
               "redis.register_function{function_name='crossok', callback=function(keys, args)\n"
               "  redis.call('set', keys[1], 1)\n"
               "  return redis.call('get', '%s')\n"
               "end, flags={'allow-cross-slot-keys'}}\n") % (other, other)
        self.assertEqual(n.call("FUNCTION", "LOAD", lib), b"slots")
        got = n.call("FCALL", "cross", 1, a)
        self.assertIsInstance(got, Err)
        self.assertTrue(got.startswith("ERR Script attempted to access keys that do not hash to "
                                       "the same slot"), got)
        self.assertEqual(n.call("FCALL", "crossok", 1, a), None)
        self.assertEqual(n.call("FCALL", "cross", 1, "{s2}z"), None)

    def test_slot_index_follows_evictions(self):
        """cudis keeps the key names of each slot for GETKEYSINSLOT; keys the
        store evicts leave it (INFO cluster_slot_index_keys, cudis's, equals
        DBSIZE), and the counts stay exact. On redis-server only the counts
        are checked."""
        n = self.node(["--maxmemory", "32mb", "--maxmemory-policy", "allkeys-lru"])
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 0, NSLOTS - 1), "OK")
        self.wait_for("state ok", lambda: n.info().get("cluster_state") == "ok")
        val = b"v" * 200
        for base in range(0, 300000, 10000):
            cmds = b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$200\r\n%s\r\n"
                            % (len(k), k, val)
                            for k in (b"ev:%d" % i for i in range(base, base + 10000)))
            n.c.s.sendall(cmds)
            for _ in range(10000):
                self.assertEqual(n.c.read(), "OK")
        size = n.call("DBSIZE")
        self.assertLess(size, 300000, "the store must have evicted")
        slot = key_slot("ev:7")
        count = n.call("CLUSTER", "COUNTKEYSINSLOT", slot)
        got = n.call("CLUSTER", "GETKEYSINSLOT", slot, 1000000)
        self.assertEqual(len(got), count)
        self.assertTrue(all(n.call("EXISTS", k) == 1 for k in got[:200]))
        if not n.is_redis:
            names = int(info_dict(n.call("INFO", "cluster"))["cluster_slot_index_keys"])
            self.assertEqual(names, size, "every key evicted left the index")

    def test_changes_reach_nodes_conf(self):
        """A change Redis writes unsynced (ADDSLOTS) is in nodes.conf within
        a second; the last one before SIGTERM is there after it."""
        n = self.node()
        myid = n.call("CLUSTER", "MYID").decode()

        def my_line():
            with open(n.conf) as f:
                return [ln for ln in f.read().splitlines() if ln.startswith(myid + " ")][0]

        self.assertEqual(n.call("CLUSTER", "ADDSLOTS", 5), "OK")
        end = time.time() + 1
        while not my_line().endswith(" connected 5") and time.time() < end:
            time.sleep(0.01)
        self.assertTrue(my_line().endswith(" connected 5"), my_line())
        self.assertEqual(n.call("CLUSTER", "ADDSLOTS", 6), "OK")
        self.assertEqual(n.call("CLUSTER", "SETSLOT", 6, "NODE", myid), "OK")
        self.assertEqual(n.stop(), 0)
        self.assertTrue(my_line().endswith(" connected 5-6"), my_line())

    def test_restart_reloads_nodes_conf(self):
        n = self.node()
        myid = n.call("CLUSTER", "MYID")
        self.assertEqual(n.call("CLUSTER", "ADDSLOTSRANGE", 0, 999, 1001, 16383), "OK")
        self.assertEqual(n.call("CLUSTER", "BUMPEPOCH"), "BUMPED 1")
        before = n.myself()
        self.assertEqual(before["ranges"], ["0-999", "1001-16383"])
        self.assertEqual(n.stop(), 0)
        self.assertTrue(os.path.exists(n.conf), n.conf)
        with open(n.conf) as f:
            lines = f.read().splitlines()
        self.assertTrue(lines[-1].startswith("vars currentEpoch "), lines)
        self.assertRegex(lines[-1], r"^vars currentEpoch 1 lastVoteEpoch 0$")
        (line,) = [ln for ln in lines if ln.startswith(myid.decode() + " ")]
        self.assertIn(" myself,master ", line)
        self.assertTrue(line.endswith(" connected 0-999 1001-16383"), line)
        self.assertTrue(n.start())
        self.assertEqual(n.call("CLUSTER", "MYID"), myid)
        after = n.myself()
        self.assertEqual(after["ranges"], before["ranges"])
        self.assertEqual(after["epoch"], before["epoch"])
        info = n.info()
        self.assertEqual(info["cluster_current_epoch"], "1")
        self.assertEqual(info["cluster_slots_assigned"], "16383")
        self.assertEqual(info["cluster_known_nodes"], "1")
        self.assertEqual(n.call("CLUSTER", "ADDSLOTS", 1000), "OK")
        self.wait_state([n], "ok", 10)
        self.assertEqual(n.call("SET", "k", "v"), "OK")
        self.assertEqual(n.call("GET", "k"), b"v")


# ---- three nodes ------------------------------------------------------------

class ThreeNodes(ClusterCase):
    @unittest.skipIf(REDIS_CLI is None, "redis-cli not installed")
    def test_redis_cli_create_and_check(self):
        nodes = [self.node() for _ in range(3)]
        rc, out = run([REDIS_CLI, "--cluster", "create"] + [n.addr for n in nodes] + ["--cluster-yes"])
        self.assertEqual(rc, 0, out)
        self.assertIn("[OK] All 16384 slots covered.", out)
        self.wait_joined(nodes)
        rc, out = run([REDIS_CLI, "--cluster", "check", nodes[0].addr])
        self.assertEqual(rc, 0, out)
        self.assertIn("[OK] All nodes agree about slots configuration.", out)
        self.assertIn("[OK] All 16384 slots covered.", out)
        self.assertIn("[OK] 0 keys in 3 masters.", out)
        ids = [n.call("CLUSTER", "MYID").decode() for n in nodes]
        for n, (lo, hi), myid in zip(nodes, split_slots(3), ids):
            self.assertEqual(n.myself()["ranges"], ["%d-%d" % (lo, hi)])
            self.assertIn("M: %s %s\n   slots:[%d-%d] (%d slots) master" % (myid, n.addr, lo, hi, hi - lo + 1),
                          out)
        epochs = sorted(n.info()["cluster_my_epoch"] for n in nodes)
        self.assertEqual(epochs, ["1", "2", "3"])
        self.check_views(nodes, ids)
        rc, out = run([REDIS_CLI, "-c", "-p", str(nodes[0].port), "set", "foo", "bar"])
        self.assertEqual((rc, out.strip()), (0, "OK"))
        rc, out = run([REDIS_CLI, "--cluster", "check", nodes[1].addr])
        self.assertEqual(rc, 0, out)
        self.assertIn("[OK] 1 keys in 3 masters.", out)

    def check_views(self, nodes, ids):
        """CLUSTER NODES/SLOTS/SHARDS the same on every node: three connected
        masters covering 0-16383 together."""
        views = []
        for n, myid in zip(nodes, ids):
            lines = n.nodes()
            self.assertEqual(len(lines), 3, lines)
            self.assertEqual(sorted(p["id"] for p in lines), sorted(ids))
            mine = [p for p in lines if "myself" in p["flags"]]
            self.assertEqual([p["id"] for p in mine], [myid])
            covered = set()
            for p in lines:
                self.assertEqual(sorted(p["flags"]), sorted(["master"] + (["myself"] if p in mine else [])),
                                 p["line"])
                self.assertEqual(p["master"], "-")
                self.assertEqual(p["link"], "connected")
                self.assertEqual(p["open"], [])
                self.assertTrue(covered.isdisjoint(p["slots"]), p["line"])
                covered |= p["slots"]
                port = [x.port for x, i in zip(nodes, ids) if i == p["id"]][0]
                self.assertEqual(p["addr"], "127.0.0.1:%d@%d" % (port, port + 10000))
                self.assertGreaterEqual(int(p["ping"]), 0)  # when a ping is pending
                if p not in mine:
                    self.assertGreater(int(p["pong"]), 0)  # ms of the last PONG
            self.assertEqual(covered, set(range(NSLOTS)))
            views.append(sorted((p["id"], p["addr"], p["epoch"], tuple(p["ranges"])) for p in lines))
        self.assertEqual(views[1], views[0])
        self.assertEqual(views[2], views[0])
        slots = [self.slots_view(n) for n in nodes]
        self.assertEqual(slots[1], slots[0])
        self.assertEqual(slots[2], slots[0])
        self.assertEqual(sum(e - s + 1 for s, e, _, _, _ in slots[0]), NSLOTS)
        for s, e, ip, port, myid in slots[0]:
            self.assertEqual(ip, b"127.0.0.1")
            owner = [n for n, i in zip(nodes, ids) if i == myid][0]
            self.assertEqual(port, owner.port)
            self.assertTrue(set(range(s, e + 1)) <= owner.myself()["slots"])
        shards = nodes[0].call("CLUSTER", "SHARDS")
        self.assertEqual(len(shards), 3)
        seen = set()
        for sh in shards:
            sh = pairs(sh)
            self.assertEqual(sorted(sh), ["nodes", "slots"])
            (nd,) = sh["nodes"]
            nd = pairs(nd)
            self.assertEqual(sorted(nd), sorted(["id", "port", "ip", "endpoint", "role",
                                                 "replication-offset", "health"]))
            self.assertEqual((nd["ip"], nd["endpoint"], nd["role"], nd["health"]),
                             (b"127.0.0.1", b"127.0.0.1", b"master", b"online"))
            owner = [n for n, i in zip(nodes, ids) if i == nd["id"].decode()][0]
            self.assertEqual(nd["port"], owner.port)
            rng = sh["slots"]
            self.assertEqual(len(rng) % 2, 0)
            got = set()
            for lo, hi in zip(rng[::2], rng[1::2]):
                got.update(range(lo, hi + 1))
            self.assertEqual(got, owner.myself()["slots"])
            seen.add(nd["id"])
        self.assertEqual(len(seen), 3)

    def test_joined_by_hand_views_agree(self):
        nodes = self.form(3)
        self.check_views(nodes, [n.id for n in nodes])
        for n, (lo, hi) in zip(nodes, split_slots(3)):
            self.assertEqual(n.slots, set(range(lo, hi + 1)))

    def test_moved_crossslot_multi_eval(self):
        a, b, c = self.form(3)
        nodes = [a, b, c]
        # a key sent to a node that does not own its slot: MOVED to the owner
        for k in ["foo", "bar", "{user1000}.following", "", "k2", "x" * 300]:
            s = key_slot(k)
            owner = self.owner(nodes, s)
            moved = Err("MOVED %d 127.0.0.1:%d" % (s, owner.port))
            for n in nodes:
                if n is owner:
                    self.assertEqual(n.call("SET", k, "v-" + k), "OK")
                    self.assertEqual(n.call("GET", k), ("v-" + k).encode())
                else:
                    self.assertEqual(n.call("GET", k), moved, (k, n.port))
                    self.assertEqual(n.call("SET", k, "x"), moved, (k, n.port))
                    self.assertEqual(n.call("EXISTS", k), moved, (k, n.port))
        self.assertEqual(a.call("GET", "foo"), Err("MOVED 12182 127.0.0.1:%d" % c.port))
        # keys of different slots: CROSSSLOT, wherever they live
        self.assertEqual(a.call("MSET", "a", "b", "c", "d"), CROSSSLOT)
        for n in nodes:
            self.assertEqual(n.call("MGET", "a", "foo"), CROSSSLOT)
            self.assertEqual(n.call("DEL", "a", "c"), CROSSSLOT)
        x_owner = self.owner(nodes, key_slot("{x}a"))
        for n in nodes:
            if n is x_owner:
                self.assertEqual(n.call("MSET", "{x}a", "1", "{x}b", "2"), "OK")
                self.assertEqual(n.call("MGET", "{x}a", "{x}b"), [b"1", b"2"])
            else:
                self.assertEqual(n.call("MSET", "{x}a", "1", "{x}b", "2"),
                                 Err("MOVED %d 127.0.0.1:%d" % (key_slot("{x}a"), x_owner.port)))
        # MULTI: a key of another node is refused when queued, EXEC aborts
        k_a = key_where(lambda s: s in a.slots, prefix="multi")
        k_a2 = key_where(lambda s: s in a.slots and s != key_slot(k_a), prefix="multi")
        k_b = key_where(lambda s: s in b.slots, prefix="multi")
        moved_b = Err("MOVED %d 127.0.0.1:%d" % (key_slot(k_b), b.port))
        self.assertEqual(a.call("MULTI"), "OK")
        self.assertEqual(a.call("SET", k_a, "1"), "QUEUED")
        self.assertEqual(a.call("SET", k_b, "2"), moved_b)
        self.assertEqual(a.call("EXEC"), EXECABORT)
        self.assertEqual(a.call("EXISTS", k_a), 0)
        self.assertEqual(a.call("MULTI"), "OK")
        self.assertEqual(a.call("SET", k_b, "2"), moved_b)
        self.assertEqual(a.call("SET", k_a, "1"), "QUEUED")
        self.assertEqual(a.call("EXEC"), EXECABORT)
        # two local slots: queued, refused at EXEC
        self.assertEqual(a.call("MULTI"), "OK")
        self.assertEqual(a.call("SET", k_a, "1"), "QUEUED")
        self.assertEqual(a.call("SET", k_a2, "2"), "QUEUED")
        self.assertEqual(a.call("EXEC"), CROSSSLOT)
        self.assertEqual(a.call("EXISTS", k_a), 0)
        self.assertEqual(a.call("MULTI"), "OK")
        self.assertEqual(a.call("SET", k_a, "1"), "QUEUED")
        self.assertEqual(a.call("INCR", k_a), "QUEUED")
        self.assertEqual(a.call("EXEC"), ["OK", 2])
        # EVAL: KEYS in two slots, KEYS elsewhere, a script reaching a remote key
        self.assertEqual(a.call("EVAL", "return 1", 2, k_a, k_b), CROSSSLOT)
        self.assertEqual(a.call("EVAL", "return 1", 2, k_a, k_a2), CROSSSLOT)
        self.assertEqual(a.call("EVAL", "return redis.call('get', KEYS[1])", 1, k_b), moved_b)
        self.assertEqual(a.call("EVAL", "return redis.call('get', KEYS[1])", 1, k_a), b"2")
        script = "return redis.call('get', '%s')" % k_b
        sha = hashlib.sha1(script.encode()).hexdigest()
        self.assertEqual(a.call("EVAL", script, 0),
                         Err("ERR Script attempted to access a non local key in a cluster node "
                             "script: %s, on @user_script:1." % sha))

    @unittest.skipIf(REDIS_CLI is None, "redis-cli not installed")
    def test_clients_follow_redirections(self):
        from redis.cluster import RedisCluster
        nodes = self.form(3)
        a = nodes[0]
        rc = RedisCluster(host="127.0.0.1", port=a.port)
        try:
            keys = ["key:%d" % i for i in range(1000)]
            for i, k in enumerate(keys):
                self.assertTrue(rc.set(k, "v%d" % i))
            for i, k in enumerate(keys):
                self.assertEqual(rc.get(k), b"v%d" % i)
            self.assertEqual(rc.mget_nonatomic(keys + ["missing"]),
                             [b"v%d" % i for i in range(1000)] + [None])
        finally:
            rc.close()
        per_slot = {}
        for k in keys:
            per_slot.setdefault(key_slot(k), []).append(k)
        dbsizes = [n.call("DBSIZE") for n in nodes]
        self.assertEqual(sum(dbsizes), 1000)
        for n in nodes:
            want = sum(len(v) for s, v in per_slot.items() if s in n.slots)
            self.assertEqual(n.call("DBSIZE"), want)
        for s, ks in per_slot.items():
            owner = self.owner(nodes, s)
            self.assertEqual(owner.call("CLUSTER", "COUNTKEYSINSLOT", s), len(ks), s)
        s, ks = max(per_slot.items(), key=lambda kv: len(kv[1]))
        owner = self.owner(nodes, s)
        self.assertEqual(sorted(owner.call("CLUSTER", "GETKEYSINSLOT", s, 100)),
                         sorted(k.encode() for k in ks))
        for n in nodes:
            if n is not owner:
                self.assertEqual(n.call("CLUSTER", "COUNTKEYSINSLOT", s), 0)
        rc = RedisCluster(host="127.0.0.1", port=a.port)
        try:
            # commands whose keys first/last/step cannot place (movablekeys):
            # redis-py asks COMMAND GETKEYS for them
            for t in ("{m1}", "{m2}", "{m3}", "{m4}"):
                rc.zadd(t + "za", {"x": 1})
                rc.zadd(t + "zb", {"x": 2, "y": 3})
                self.assertEqual(rc.zunionstore(t + "zd", [t + "za", t + "zb"]), 2)
                self.assertEqual(rc.zscore(t + "zd", "x"), 3.0)
                rc.rpush(t + "l2", "a", "b")
                self.assertEqual(rc.lmpop(2, t + "l1", t + "l2", direction="LEFT"),
                                 [(t + "l2").encode(), [b"a"]])
                rc.sadd(t + "s1", "a", "b")
                rc.sadd(t + "s2", "b", "c")
                self.assertEqual(rc.sintercard(2, [t + "s1", t + "s2"], limit=5), 1)
            # PUBLISH goes by its channel's slot (the pubsub flag says so)
            self.assertEqual(rc.publish("news", "hello"), 0)
        finally:
            rc.close()
        # redis-cli -c follows MOVED from any node
        k_far = key_where(lambda sl: sl not in a.slots, prefix="cli")
        far = self.owner(nodes, key_slot(k_far))
        r, out = run([REDIS_CLI, "-c", "-p", str(a.port), "set", k_far, "hello"])
        self.assertEqual((r, out.strip()), (0, "OK"))
        self.assertEqual(far.call("GET", k_far), b"hello")
        for n in nodes:
            r, out = run([REDIS_CLI, "-c", "-p", str(n.port), "get", k_far])
            self.assertEqual((r, out.strip()), (0, "hello"))
        r, out = run([REDIS_CLI, "-p", str(a.port), "get", k_far])
        self.assertEqual(out.strip(), "MOVED %d 127.0.0.1:%d" % (key_slot(k_far), far.port))


# ---- ASK, by hand -------------------------------------------------------------

class AskRedirection(ClusterCase):
    def test_ask_by_hand(self):
        a, b, c = self.form(3)
        s = key_slot("{mig}")
        if s not in a.slots:  # pick a tag in A's slots
            tag = key_where(lambda sl: sl in a.slots, prefix="mig")
        else:
            tag = "mig"
        s = key_slot(tag)
        here, gone = "{%s}here" % tag, "{%s}gone" % tag
        self.assertEqual(a.call("SET", here, "on-a"), "OK")
        moved_a = Err("MOVED %d 127.0.0.1:%d" % (s, a.port))
        ask_b = Err("ASK %d 127.0.0.1:%d" % (s, b.port))
        # errors first
        self.assertEqual(b.call("CLUSTER", "SETSLOT", s, "MIGRATING", a.id),
                         Err("ERR I'm not the owner of hash slot %d" % s))
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "IMPORTING", b.id),
                         Err("ERR I'm already the owner of hash slot %d" % s))
        self.assertEqual(b.call("CLUSTER", "SETSLOT", s, "IMPORTING", "0" * 40),
                         Err("ERR I don't know about node %s" % ("0" * 40)))
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "MIGRATING", "0" * 40),
                         Err("ERR I don't know about node %s" % ("0" * 40)))
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "NODE", "0" * 40),
                         Err("ERR Unknown node %s" % ("0" * 40)))
        self.assertEqual(a.call("CLUSTER", "SETSLOT", 16384, "STABLE"),
                         Err("ERR Invalid or out of range slot"))
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "BAD"),
                         Err("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"))
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "NODE"),
                         Err("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"))
        # open the slot
        self.assertEqual(b.call("CLUSTER", "SETSLOT", s, "IMPORTING", a.id), "OK")
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "MIGRATING", b.id), "OK")
        me_a = a.myself()
        self.assertEqual(me_a["open"], ["[%d->-%s]" % (s, b.id)])
        self.assertIn(s, me_a["slots"])
        self.assertTrue(me_a["line"].endswith(" [%d->-%s]" % (s, b.id)), me_a["line"])
        me_b = b.myself()
        self.assertEqual(me_b["open"], ["[%d-<-%s]" % (s, a.id)])
        self.assertNotIn(s, me_b["slots"])
        # the other nodes' lines carry no open slot
        self.assertEqual([p["open"] for p in a.nodes() if p["id"] != a.id], [[], []])
        self.assertEqual([p["open"] for p in c.nodes()], [[], [], []])
        # on A: keys still there are served, missing ones are ASKed to B
        self.assertEqual(a.call("GET", here), b"on-a")
        self.assertEqual(a.call("SET", here, "on-a2"), "OK")
        self.assertEqual(a.call("GET", gone), ask_b)
        self.assertEqual(a.call("SET", gone, "x"), ask_b)
        self.assertEqual(a.call("EXISTS", gone), ask_b)
        self.assertEqual(a.call("MGET", here, gone), TRYAGAIN)
        self.assertEqual(a.call("READONLY"), "OK")
        self.assertEqual(a.call("GET", gone), ask_b)
        self.assertEqual(a.call("READWRITE"), "OK")
        # on B: MOVED to A without ASKING, served once after ASKING
        self.assertEqual(b.call("GET", gone), moved_a)
        self.assertEqual(b.call("ASKING"), "OK")
        self.assertEqual(b.call("GET", gone), None)
        self.assertEqual(b.call("GET", gone), moved_a, "ASKING lasts one command")
        self.assertEqual(b.call("ASKING"), "OK")
        self.assertEqual(b.call("SET", gone, "on-b"), "OK")
        self.assertEqual(b.call("ASKING"), "OK")
        self.assertEqual(b.call("GET", gone), b"on-b")
        self.assertEqual(b.call("ASKING"), "OK")
        self.assertEqual(b.call("MGET", here, gone), TRYAGAIN)
        self.assertEqual(b.call("CLUSTER", "COUNTKEYSINSLOT", s), 1)
        self.assertEqual(a.call("CLUSTER", "COUNTKEYSINSLOT", s), 1)
        # C knows nothing of it: MOVED to A
        self.assertEqual(c.call("GET", gone), moved_a)
        # A may not give the slot away while it holds keys in it
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "NODE", b.id),
                         Err("ERR Can't assign hashslot %d to a different node while I still hold "
                             "keys for this hash slot." % s))
        self.assertEqual(a.call("DEL", here), 1)
        self.assertEqual(a.call("GET", here), ask_b)
        # close it: the new owner first, then the old one and the rest
        self.assertEqual(b.call("CLUSTER", "SETSLOT", s, "NODE", b.id), "OK")
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "NODE", b.id), "OK")
        self.assertEqual(c.call("CLUSTER", "SETSLOT", s, "NODE", b.id), "OK")
        moved_b = Err("MOVED %d 127.0.0.1:%d" % (s, b.port))
        self.assertEqual(a.call("GET", gone), moved_b)
        self.assertEqual(c.call("GET", gone), moved_b)
        self.assertEqual(b.call("GET", gone), b"on-b")
        me_a, me_b = a.myself(), b.myself()
        self.assertEqual((me_a["open"], me_b["open"]), ([], []))
        self.assertNotIn(s, me_a["slots"])
        self.assertIn(s, me_b["slots"])
        self.assertGreater(int(me_b["epoch"]), 3, "the new owner bumps its config epoch")
        # and every node ends up agreeing
        self.wait_for("slot %d on B everywhere" % s,
                      lambda: all(s in [p for p in n.nodes() if p["id"] == b.id][0]["slots"]
                                  for n in (a, b, c)))
        self.wait_joined([a, b, c])


    def test_keys_of_a_slot_taken_away_are_deleted(self):
        """A node that learns (from the bus) that another node serves one of
        its slots with a newer config epoch drops its keys in that slot,
        as Redis's dirty slots: no stale value can come back later."""
        a, b, c = self.form(3)
        tag = key_where(lambda sl: sl in a.slots, prefix="lost")
        s = key_slot(tag)
        keys = ["{%s}%d" % (tag, i) for i in range(5)]
        for k in keys:
            self.assertEqual(a.call("SET", k, "old"), "OK")
        other = key_where(lambda sl: sl in a.slots and sl != s, prefix="stay")
        self.assertEqual(a.call("SET", other, "kept"), "OK")
        # B takes the slot by hand with a config epoch above everyone's
        self.assertEqual(b.call("CLUSTER", "BUMPEPOCH")[:6], "BUMPED")
        self.assertEqual(b.call("CLUSTER", "SETSLOT", s, "NODE", b.id), "OK")
        self.wait_for("A sees B serving slot %d" % s,
                      lambda: a.call("GET", keys[0]) == Err("MOVED %d 127.0.0.1:%d" % (s, b.port)))
        self.wait_for("A dropped its keys of slot %d" % s,
                      lambda: a.call("CLUSTER", "COUNTKEYSINSLOT", s) == 0)
        self.assertEqual(a.call("DBSIZE"), 1)
        self.assertEqual(a.call("GET", other), b"kept")
        # given back, the slot does not bring the old values with it
        self.assertEqual(a.call("CLUSTER", "BUMPEPOCH")[:6], "BUMPED")
        self.assertEqual(a.call("CLUSTER", "SETSLOT", s, "NODE", a.id), "OK")
        self.assertEqual(a.call("GET", keys[0]), None)


# ---- failure -----------------------------------------------------------------

class Failure(ClusterCase):
    def start_and_kill(self):
        a, b, c = self.form(3)
        self.k_a = key_where(lambda s: s in a.slots, prefix="fa")
        self.k_b = key_where(lambda s: s in b.slots, prefix="fb")
        self.k_c = key_where(lambda s: s in c.slots, prefix="fc")
        for n, k in ((a, self.k_a), (b, self.k_b), (c, self.k_c)):
            self.assertEqual(n.call("SET", k, "v-" + k), "OK")
        c.kill()
        self.wait_state([a, b], "fail", 12)
        return a, b, c

    def test_node_down_full_coverage(self):
        a, b, c = self.start_and_kill()
        for n in (a, b):
            self.wait_for("C flagged fail on %d" % n.port,
                          lambda: [p for p in n.nodes() if p["id"] == c.id][0]["flags"] == ["master", "fail"],
                          5)
            dead = [p for p in n.nodes() if p["id"] == c.id][0]
            self.assertEqual(dead["link"], "disconnected")
            self.assertEqual(dead["slots"], c.slots, "the dead node keeps its slots")
            self.assertEqual(dead["addr"], "127.0.0.1:%d@%d" % (c.port, c.port + 10000))
            info = n.info()
            self.assertEqual(info["cluster_state"], "fail")
            self.assertEqual(info["cluster_slots_assigned"], "16384")
            self.assertEqual(info["cluster_slots_fail"], str(len(c.slots)))
            self.assertEqual(info["cluster_slots_ok"], str(NSLOTS - len(c.slots)))
            self.assertEqual(info["cluster_known_nodes"], "3")
            for k in (self.k_a, self.k_b, self.k_c):
                self.assertEqual(n.call("GET", k), DOWN, (n.port, k))
                self.assertEqual(n.call("SET", k, "x"), DOWN, (n.port, k))
            self.assertEqual(n.call("PING"), "PONG")
            self.assertEqual(n.call("DBSIZE"), 1)
            health = {}
            for sh in n.call("CLUSTER", "SHARDS"):
                (nd,) = pairs(sh)["nodes"]
                nd = pairs(nd)
                health[nd["id"].decode()] = nd["health"]
            self.assertEqual(health, {a.id: b"online", b.id: b"online", c.id: b"fail"})

    def test_node_down_partial_coverage(self):
        a, b, c = self.start_and_kill()
        for n in (a, b):
            self.assertEqual(n.call("GET", self.k_a), DOWN)
            self.assertEqual(n.call("CONFIG", "SET", "cluster-require-full-coverage", "no"), "OK")
            self.assertEqual(n.call("CONFIG", "GET", "cluster-require-full-coverage"),
                             [b"cluster-require-full-coverage", b"no"])
        self.wait_state([a, b], "ok", 10)
        self.assertEqual(a.call("GET", self.k_a), ("v-" + self.k_a).encode())
        self.assertEqual(b.call("GET", self.k_b), ("v-" + self.k_b).encode())
        self.assertEqual(a.call("SET", self.k_a, "new"), "OK")
        self.assertEqual(b.call("GET", self.k_a), Err("MOVED %d 127.0.0.1:%d" % (key_slot(self.k_a), a.port)))
        # Redis 7.0 still sends the dead node's slots to the dead node
        moved_c = Err("MOVED %d 127.0.0.1:%d" % (key_slot(self.k_c), c.port))
        self.assertEqual(a.call("GET", self.k_c), moved_c)
        self.assertEqual(b.call("GET", self.k_c), moved_c)
        info = a.info()
        self.assertEqual((info["cluster_slots_fail"], info["cluster_slots_assigned"]),
                         (str(len(c.slots)), "16384"))
        # once nobody owns them: not served
        lo, hi = min(c.slots), max(c.slots)
        self.assertEqual(len(c.slots), hi - lo + 1)
        for n in (a, b):
            self.assertEqual(n.call("CLUSTER", "DELSLOTSRANGE", lo, hi), "OK")
        for n in (a, b):
            self.assertEqual(n.call("GET", self.k_c), NOT_SERVED)
            self.assertEqual(n.call("SET", self.k_c, "x"), NOT_SERVED)
            info = n.info()
            self.assertEqual(info["cluster_state"], "ok")
            self.assertEqual(info["cluster_slots_assigned"], str(NSLOTS - len(c.slots)))
            self.assertEqual([p["slots"] for p in n.nodes() if p["id"] == c.id], [set()])
        self.assertEqual(a.call("GET", self.k_a), b"new")
        self.assertEqual(b.call("GET", self.k_b), ("v-" + self.k_b).encode())


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
