#!/usr/bin/python3
"""test_expiry.py - active expiry and the memory it gives back (issue 12
finding 6): with nothing reading them, a few keys with a short TTL among
many without one stop being counted within about a second of expiring (a
pass used to walk the whole index: on the default 1 GB store 3 keys were
still counted 3 s later), 100k such keys within a few seconds, and
used_memory goes back to what it was before they were written. Validated
against redis-server first.
  /usr/bin/python3 test_expiry.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None


def wait_dbsize(r, want, limit_s):
    """Seconds until DBSIZE == want (polled every 50 ms), or None."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if r.dbsize() == want:
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


class ActiveExpiry(unittest.TestCase):
    def setUp(self):
        # the default budget (1 GB): a big index with few keys in it
        self.srv = e2e_server.Server(BIN, ("--maxmemory", "1gb"))
        self.r = redis.Redis(port=self.srv.port)

    def tearDown(self):
        self.r.close()
        self.srv.stop()

    def fill(self, n, prefix, px=None, batch=5000):
        for s in range(0, n, batch):
            p = self.r.pipeline(transaction=False)
            for i in range(s, min(n, s + batch)):
                p.set("%s:%d" % (prefix, i), "v" * 32, px=px)
            p.execute()

    def test_sparse_keys_expire_within_a_second(self):
        self.fill(10000, "plain")
        for i in range(3):
            self.r.set("ttl:%d" % i, "v", px=300)
        self.assertEqual(self.r.dbsize(), 10003)
        time.sleep(0.3)
        took = wait_dbsize(self.r, 10000, 1.5)
        self.assertIsNotNone(took, "DBSIZE %d, 1.8 s after 3 keys with PX 300 were written"
                             % self.r.dbsize())

    def test_many_keys_expire_and_give_memory_back(self):
        before = self.r.info("memory")["used_memory"]
        self.fill(100000, "ttl", px=3600000)  # a slow (sanitizer) build takes its time
        grown = self.r.info("memory")["used_memory"]
        self.assertGreater(grown - before, 100000 * 32)
        p = self.r.pipeline(transaction=False)
        for i in range(100000):
            p.pexpire("ttl:%d" % i, 300)
        p.execute()
        time.sleep(0.3)
        took = wait_dbsize(self.r, 0, 5.0)
        self.assertIsNotNone(took, "DBSIZE %d, 5.3 s after 100k keys got PEXPIRE 300"
                             % self.r.dbsize())
        after = self.r.info("memory")["used_memory"]
        # at least 90% of what the keys took is given back
        self.assertLess(after - before, (grown - before) / 10,
                        "used_memory %d before, %d with the keys, %d after they expired"
                        % (before, grown, after))


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
