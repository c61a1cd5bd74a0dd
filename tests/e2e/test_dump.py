#!/usr/bin/python3
"""test_dump.py - values move between Redis and the server under test with
DUMP and RESTORE (Redis's serialization: an RDB string, its version, its
CRC-64): Debian's redis-server and the server run side by side; every value
DUMPed by one is RESTOREd by the other, both ways, with TTLs, REPLACE,
ABSTTL and the errors; short values DUMP to the same bytes as Redis's; OBJECT
ENCODING / REFCOUNT answer as Redis does. Run by ctest (label e2e):
  /usr/bin/python3 test_dump.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

import redis  # noqa: E402

BIN = None
REDIS = "/usr/bin/redis-server"

VALUES = [b"hello", b"123", b"-5", b"70000", b"-2147483648", b"12345678901", b"007",
          b"x" * 100, b"abc" * 300, bytes(range(256)) * 20, b"", b"3.14", b"\x00\x01\xff"]


@unittest.skipUnless(os.path.exists(REDIS), "redis-server not installed")
class Dump(unittest.TestCase):
    def setUp(self):
        self.srv = e2e_server.Server(BIN)
        self.ref = e2e_server.Server(REDIS)
        self.r = redis.Redis(host="127.0.0.1", port=self.srv.port, socket_timeout=10)
        self.ref_r = redis.Redis(host="127.0.0.1", port=self.ref.port, socket_timeout=10)

    def tearDown(self):
        self.r.close()
        self.ref_r.close()
        self.assertEqual(self.ref.stop(), 0)
        self.assertEqual(self.srv.stop(), 0, "server did not exit 0 on SIGTERM")

    def test_both_ways(self):
        for i, v in enumerate(VALUES):
            for src, dst in ((self.ref_r, self.r), (self.r, self.ref_r)):
                src.set("k%d" % i, v)
                payload = src.dump("k%d" % i)
                self.assertTrue(dst.restore("m%d" % i, 0, payload, replace=True))
                self.assertEqual(dst.get("m%d" % i), v, "value %d" % i)
                self.assertEqual(dst.ttl("m%d" % i), -1)
            if len(v) <= 20:  # longer ones are LZF: any stream that decodes will do
                self.assertEqual(self.r.dump("k%d" % i), self.ref_r.dump("k%d" % i), v)

    def test_ttl_replace_absttl_and_errors(self):
        self.ref_r.set("a", "payload")
        p = self.ref_r.dump("a")
        r = self.r
        self.assertTrue(r.restore("t", 100000, p))
        self.assertGreater(r.pttl("t"), 90000)
        with self.assertRaises(redis.exceptions.ResponseError) as e:
            r.restore("t", 0, p)
        self.assertEqual(str(e.exception), "BUSYKEY Target key name already exists.")
        self.assertTrue(r.restore("t", 0, p, replace=True))
        self.assertEqual(r.ttl("t"), -1)
        at = int(time.time() * 1000) + 50000
        self.assertTrue(r.restore("u", at, p, absttl=True))
        self.assertGreater(r.pttl("u"), 40000)
        self.assertTrue(r.restore("u", 1, p, replace=True, absttl=True))  # in the past: gone
        self.assertEqual(r.exists("u"), 0)
        self.assertTrue(r.restore("v", 0, p, idletime=10))
        self.assertTrue(r.restore("w", 0, p, frequency=5))
        # (redis-py drops the "ERR " of an error's text)
        for args, msg in (((["x", -1, p]), "Invalid TTL value, must be >= 0"),
                          ((["x", 0, b"garbage"]), "DUMP payload version or checksum are wrong"),
                          ((["x", 0, p[:-1] + bytes([p[-1] ^ 1])]),
                           "DUMP payload version or checksum are wrong"),
                          ((["x", 0, p, "IDLETIME", -1]), "Invalid IDLETIME value, must be >= 0"),
                          ((["x", 0, p, "FREQ", 300]), "Invalid FREQ value, must be >= 0 and <= 255"),
                          ((["x", 0, p, "IDLETIME", 1, "FREQ", 1]), "syntax error"),
                          ((["x", 0, p, "NOPE"]), "syntax error")):
            for cli in (r, self.ref_r):
                with self.assertRaises(redis.exceptions.ResponseError) as e:
                    cli.execute_command("RESTORE", *args)
                self.assertEqual(str(e.exception), msg)
        self.ref_r.zadd("z", {"a": 1, "b": 2})
        self.assertTrue(r.restore("z", 0, self.ref_r.dump("z")))
        self.assertEqual(r.zrange("z", 0, -1, withscores=True), [(b"a", 1.0), (b"b", 2.0)])
        if not self.srv.is_redis:  # cudis holds no streams
            self.ref_r.xadd("st", {"f": "v"})
            with self.assertRaises(redis.exceptions.ResponseError) as e:
                r.restore("st", 0, self.ref_r.dump("st"))
            self.assertEqual(str(e.exception), "Bad data format")
        self.assertIsNone(r.dump("nosuch"))

    def test_object(self):
        for cli in (self.r, self.ref_r):
            cli.set("i", "123")
            cli.set("j", "12345")
            cli.set("e", "x" * 44)
            cli.set("w", "x" * 45)
            self.assertEqual([cli.object("encoding", k) for k in ("i", "j", "e", "w")],
                             [b"int", b"int", b"embstr", b"raw"])
            self.assertEqual(cli.object("refcount", "i"), 2147483647)
            self.assertEqual(cli.object("refcount", "j"), 1)
            self.assertIsNone(cli.object("encoding", "nosuch"))
            with self.assertRaises(redis.exceptions.ResponseError) as e:
                cli.object("freq", "i")
            self.assertTrue(str(e.exception).startswith("An LFU maxmemory policy is not selected"))

    def test_object_idletime(self):
        for cli in (self.r, self.ref_r):
            cli.set("old", "v")
            cli.set("new", "v")
        time.sleep(2.2)
        for cli in (self.r, self.ref_r):
            self.assertIn(cli.object("idletime", "old"), (2, 3))
            self.assertIn(cli.object("idletime", "old"), (2, 3), "OBJECT is not an access")
            cli.get("new")
            self.assertEqual(cli.object("idletime", "new"), 0)
            self.assertIsNone(cli.object("idletime", "nosuch"))

    def test_restore_dates_the_key(self):
        """RESTORE's IDLETIME dates the key under the recency policies and
        FREQ sets its counter under the LFU ones (Redis's
        objectSetLRUOrLFU); each is ignored under the other kind; OBJECT
        reads them back and is not an access."""
        self.ref_r.set("src", "v")
        p = self.ref_r.dump("src")
        for cli in (self.r, self.ref_r):
            cli.config_set("maxmemory-policy", "allkeys-lru")
            for k, idle in (("a", 0), ("b", 7), ("c", 1000), ("d", 4000)):
                self.assertTrue(cli.restore(k, 0, p, idletime=idle))
            self.assertTrue(cli.restore("e", 0, p, frequency=200))  # no counter kept
            self.assertTrue(cli.restore("a", 0, p, replace=True, idletime=500))
        for cli in (self.r, self.ref_r):
            for k, idle in (("a", 500), ("b", 7), ("c", 1000), ("d", 4000)):
                self.assertIn(cli.object("idletime", k), (idle, idle + 1), k)
            self.assertLessEqual(cli.object("idletime", "e"), 1)
            cli.restore("old", 0, p, idletime=100000)
            if cli is self.ref_r or self.srv.is_redis:
                self.assertIn(cli.object("idletime", "old"), (100000, 100001))
            else:  # dated by 8192 seconds of samples before the start: the oldest they tell
                got = cli.object("idletime", "old")
                self.assertTrue(8190 <= got < 8192 + 60, got)
            cli.get("c")
            self.assertEqual(cli.object("idletime", "c"), 0, "a read dates it now")
            cli.config_set("maxmemory-policy", "allkeys-lfu")
            self.assertTrue(cli.restore("f", 0, p, frequency=100))
            self.assertTrue(cli.restore("g", 0, p, frequency=0))
            self.assertTrue(cli.restore("h", 0, p, idletime=100))  # the counter a new key's
            self.assertTrue(cli.restore("f2", 0, p, frequency=255))
            self.assertTrue(cli.restore("f2", 0, p, replace=True, frequency=42))
            self.assertEqual([cli.object("freq", k) for k in ("f", "g", "h", "f2")],
                             [100, 0, 5, 42])
            self.assertEqual(cli.object("freq", "f"), 100, "OBJECT is not an access")
            cli.config_set("maxmemory-policy", "allkeys-lru")


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
