#!/usr/bin/python3
"""test_twemproxy.py - cudis behind twemproxy (Debian's nutcracker), for
clients that do not speak Redis Cluster: three standalone servers behind
one proxy configured as examples/twemproxy/nutcracker.yml is (ketama over
murmur, hash tags "{}"; fnv1a_64 put 0 of 300 "user:N" keys on one server). Through the proxy: strings, counters, expiry,
hashes, lists, sets and sorted sets, multi-key MGET/MSET/DEL/EXISTS that
the proxy splits over the servers, hash tags keeping keys together, a
1,000-command pipeline, and keys spread over all three servers with every
acknowledged value read back from the server that holds it. Commands the
proxy does not forward (KEYS, MULTI, SELECT...) close the client's
connection; the proxy and the servers keep serving.
Validated against redis-server 7.0.15 first (CUDIS_E2E_SERVER).
Run by ctest (label e2e):
  /usr/bin/python3 test_twemproxy.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

import redis  # noqa: E402

BIN = None
NUTCRACKER = shutil.which("nutcracker") or ("/usr/sbin/nutcracker"
                                            if os.path.exists("/usr/sbin/nutcracker") else None)
EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "twemproxy", "nutcracker.yml")


def wait_port(port, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class Twemproxy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if NUTCRACKER is None:
            raise RuntimeError("nutcracker is not installed (scripts/deps.sh installs it)")
        cls.servers = [e2e_server.Server(BIN) for _ in range(3)]
        cls.dir = tempfile.mkdtemp(prefix="cudis-e2e-twem-")
        cls.port = e2e_server.free_port()
        cls.stats = e2e_server.free_port()
        # the example, with this test's addresses
        with open(EXAMPLE) as f:
            conf = f.read()
        for i, s in enumerate(cls.servers):
            conf = conf.replace("127.0.0.1:700%d:1" % (i + 1), "127.0.0.1:%d:1" % s.port)
        conf = conf.replace("127.0.0.1:22121", "127.0.0.1:%d" % cls.port)
        path = os.path.join(cls.dir, "nutcracker.yml")
        with open(path, "w") as f:
            f.write(conf)
        check = subprocess.run([NUTCRACKER, "-t", "-c", path], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr + check.stdout
        cls.log = os.path.join(cls.dir, "nutcracker.log")
        cls.proxy = subprocess.Popen([NUTCRACKER, "-c", path, "-o", cls.log, "-s", str(cls.stats)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert wait_port(cls.port), "nutcracker did not listen"

    @classmethod
    def tearDownClass(cls):
        cls.proxy.terminate()
        cls.proxy.wait(10)
        rcs = [s.stop() for s in cls.servers]
        shutil.rmtree(cls.dir, ignore_errors=True)
        assert rcs == [0, 0, 0], rcs

    def setUp(self):
        self.r = redis.Redis(port=self.port, socket_timeout=10)
        self.direct = [redis.Redis(port=s.port) for s in self.servers]
        for d in self.direct:
            d.flushall()

    def tearDown(self):
        self.r.close()
        for d in self.direct:
            d.close()

    def holder(self, key):
        """The server that holds key (exactly one must)."""
        have = [i for i, d in enumerate(self.direct) if d.exists(key)]
        self.assertEqual(len(have), 1, (key, have))
        return self.direct[have[0]]

    def test_keys_spread_and_read_back(self):
        for i in range(300):
            self.assertTrue(self.r.set("user:%d" % i, "v%d" % i))
        sizes = [d.dbsize() for d in self.direct]
        self.assertEqual(sum(sizes), 300)
        self.assertTrue(all(n > 30 for n in sizes), sizes)  # ketama spreads them
        for i in range(300):
            self.assertEqual(self.r.get("user:%d" % i), b"v%d" % i)
            self.assertEqual(self.holder("user:%d" % i).get("user:%d" % i), b"v%d" % i)

    def test_multi_key_commands_are_split(self):
        keys = ["mk:%d" % i for i in range(50)]
        self.assertTrue(self.r.mset({k: k.upper() for k in keys}))
        self.assertEqual(self.r.mget(keys + ["missing"]),
                         [k.upper().encode() for k in keys] + [None])
        # (EXISTS of several keys is not split: the proxy sends it whole to
        # the first key's server, so it is used one key at a time)
        self.assertEqual([self.r.exists(k) for k in keys[:10]], [1] * 10)
        self.assertEqual(self.r.delete(*keys[:20], "missing"), 20)
        self.assertEqual(sum(d.dbsize() for d in self.direct), 30)

    def test_hash_tags_keep_keys_together(self):
        keys = ["{order:7}:%s" % f for f in ("items", "total", "owner", "state", "ts")]
        for k in keys:
            self.r.set(k, 1)
        self.assertEqual(len({id(self.holder(k)) for k in keys}), 1)

    def test_types_through_the_proxy(self):
        r = self.r
        self.assertEqual(r.incrby("ctr", 5), 5)
        self.assertEqual(r.incrbyfloat("ctrf", 1.5), 1.5)
        self.assertTrue(r.set("tmp", "x", ex=100))
        self.assertTrue(0 < r.ttl("tmp") <= 100)
        self.assertEqual(r.hset("h", mapping={"a": "1", "b": "2"}), 2)
        self.assertEqual(r.hgetall("h"), {b"a": b"1", b"b": b"2"})
        self.assertEqual(r.hincrby("h", "a", 10), 11)
        self.assertEqual(r.rpush("l", "a", "b", "c"), 3)
        self.assertEqual(r.lrange("l", 0, -1), [b"a", b"b", b"c"])
        self.assertEqual(r.sadd("s", "x", "y"), 2)
        self.assertEqual(r.smembers("s"), {b"x", b"y"})
        self.assertEqual(r.zadd("z", {"m1": 1, "m2": 2}), 2)
        self.assertEqual(r.zrange("z", 0, -1, withscores=True), [(b"m1", 1.0), (b"m2", 2.0)])
        self.assertEqual(r.type("z"), b"zset")
        self.assertEqual(self.holder("h").hget("h", "b"), b"2")

    def test_pipeline(self):
        p = self.r.pipeline(transaction=False)
        for i in range(1000):
            p.set("p:%d" % i, i)
        for i in range(1000):
            p.get("p:%d" % i)
        out = p.execute()
        self.assertEqual(out[:1000], [True] * 1000)
        self.assertEqual(out[1000:], [str(i).encode() for i in range(1000)])

    def test_unsupported_commands_close_only_that_client(self):
        for cmd in (["KEYS", "*"], ["MULTI"], ["SELECT", "1"], ["FLUSHALL"]):
            c = redis.Redis(port=self.port, socket_timeout=5, retry_on_timeout=False)
            with self.assertRaises(redis.exceptions.ConnectionError, msg=cmd):
                c.execute_command(*cmd)
            c.close()
        self.assertTrue(self.r.set("after", "1"))
        self.assertEqual(self.r.get("after"), b"1")


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
