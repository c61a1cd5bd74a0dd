#!/usr/bin/python3
"""test_bigvalues.py - values up to proto-max-bulk-len that fit the budget
(issue 12 finding 5): before, a value over maxmemory/2 was refused with
the proto-max-bulk-len error (and earlier still, one over maxmemory/128
with -OOM on an empty store). Values of many megabytes are stored and read
back byte for byte, beside small keys, also one of more than half of a
small maxmemory (which Redis refuses: it counts the query buffer); one
bigger than maxmemory is refused with an -OOM error that names maxmemory,
never with the proto-max-bulk-len one, and loses nothing else. Validated
against redis-server first.
  /usr/bin/python3 test_bigvalues.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None
MB = 1 << 20


def pattern(n, seed):
    block = bytes((i * 31 + seed) & 0xFF for i in range(4096))
    return (block * (n // 4096 + 1))[:n]


class BigValues(unittest.TestCase):
    def start(self, maxmemory):
        self.srv = e2e_server.Server(BIN, ("--maxmemory", maxmemory))
        self.r = redis.Redis(port=self.srv.port, socket_timeout=60)

    def tearDown(self):
        self.r.close()
        self.srv.stop()

    def roundtrip(self, key, n, seed):
        v = pattern(n, seed)
        self.assertTrue(self.r.set(key, v), "SET of %d bytes" % n)
        self.assertEqual(self.r.strlen(key), n)
        self.assertEqual(self.r.getrange(key, n - 5, n - 1), v[-5:])
        self.assertTrue(self.r.get(key) == v, "%d bytes differ" % n)

    def test_values_of_many_megabytes_at_1gb(self):
        self.start("1gb")
        self.r.set("small", "s")
        for n in (9 * MB, 64 * MB, 200 * MB, 9 * MB):
            self.roundtrip("big", n, n // MB)
        self.roundtrip("other", 64 * MB, 7)
        self.assertEqual(self.r.get("small"), b"s")
        self.assertEqual(self.r.append("other", "tail"), 64 * MB + 4)

    def test_most_of_a_small_budget(self):
        self.start("64mb")
        if self.srv.is_redis:
            # Redis counts the 40 MB query buffer against maxmemory and
            # refuses any value over about half of it; cudis's budget is
            # the store's alone, so the value must be stored there
            with self.assertRaisesRegex(redis.exceptions.ResponseError, "^OOM .*maxmemory"):
                self.r.set("big", b"x" * (40 * MB))
            return
        self.roundtrip("big", 40 * MB, 1)  # more than half of maxmemory

    def test_bigger_than_maxmemory_names_the_reason(self):
        self.start("64mb")
        self.r.set("small", "s")
        try:
            self.r.set("huge", b"x" * (100 * MB))
        except redis.exceptions.ResponseError as e:
            msg = str(e)
            self.assertTrue(msg.startswith("OOM") or "maxmemory" in msg, msg)
            self.assertIn("maxmemory", msg)
            self.assertNotIn("proto-max-bulk-len", msg)
            self.assertEqual(self.r.exists("huge"), 0)
            self.assertEqual(self.r.get("small"), b"s")  # nothing else was lost


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
