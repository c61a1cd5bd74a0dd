#!/usr/bin/python3
"""test_index.py - the index follows what is stored (issue 12, deliver 4):
with 1000-byte values in a 64mb store cudis halves its cuckoo index
online (a slice per expiry tick) while clients read, write and SCAN. A SCAN
that runs across those resizes still returns every key present from its
start to its end (Redis's guarantee; duplicates allowed), and every value
reads back whole after them. On cudis's cpu engine the test also checks,
from INFO, that resizes did happen during the scan (else it proved
nothing). Validated against redis-server first (whose dict rehashes as it
grows).
  /usr/bin/python3 test_index.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None
VAL = 1000


def value(i):
    return (b"%08d" % i) * (VAL // 8)


class IndexFollowsItems(unittest.TestCase):
    def setUp(self):
        self.srv = e2e_server.Server(BIN, ("--maxmemory", "64mb"))
        self.r = redis.Redis(port=self.srv.port)

    def tearDown(self):
        self.r.close()
        self.srv.stop()

    def engine_info(self):
        """INFO engine's ccht fields as ints ({} on redis-server or a baseline engine)."""
        if self.srv.is_redis:
            return {}
        return {k: v for k, v in self.r.info("engine").items() if k.startswith("ccht_index")}

    def fill(self, start, end):
        p = self.r.pipeline(transaction=False)
        for i in range(start, end):
            p.set("k:%d" % i, value(i))
        p.execute()

    def test_scan_across_resizes_returns_every_key(self):
        self.fill(0, 3000)
        before = self.engine_info()
        resizes = set()
        seen = set()
        cursor, nxt, calls = 0, 3000, 0
        while True:
            cursor, keys = self.r.scan(cursor, count=20)
            seen.update(keys)
            calls += 1
            # the store grows between the calls: the index keeps resizing
            if nxt < 20000:
                self.fill(nxt, nxt + 100)
                nxt += 100
            info = self.engine_info()
            if info:
                resizes.add(info["ccht_index_resizes"] + info["ccht_index_resizing"])
            if cursor == 0:
                break
            time.sleep(0.002)
        missing = [i for i in range(3000) if b"k:%d" % i not in seen]
        self.assertEqual(missing, [], "%d keys present throughout were not returned"
                         % len(missing))
        if not self.srv.is_redis and os.environ.get("CUDIS_E2E_ENGINE", "cpu") == "cpu":
            self.assertEqual(before.get("ccht_index_resizable"), 1, "resizable by default")
            self.assertGreater(len(resizes), 1, "no resize ran during the scan (%d calls)" % calls)
        # all of it reads back whole once the resizes are over
        for _ in range(100):
            if self.engine_info().get("ccht_index_resizing", 0) == 0:
                break
            time.sleep(0.1)
        p = self.r.pipeline(transaction=False)
        for i in range(nxt):
            p.get("k:%d" % i)
        got = p.execute()
        bad = [i for i in range(nxt) if got[i] != value(i)]
        self.assertEqual(bad, [], "%d of %d values wrong or missing" % (len(bad), nxt))
        self.assertEqual(self.r.dbsize(), nxt)
        info = self.engine_info()
        if info.get("ccht_index_resizable") == 1:
            self.assertGreater(info["ccht_index_resizes"], before["ccht_index_resizes"])

    def test_cursor_is_valid_after_resizes(self):
        # a cursor taken before resizes still goes on to the end
        self.fill(0, 20000)
        cursor, keys = self.r.scan(0, count=100)
        seen = set(keys)
        time.sleep(1.5)  # the resizes of 20k big items run meanwhile
        while cursor != 0:
            cursor, keys = self.r.scan(cursor, count=1000)
            seen.update(keys)
        self.assertEqual(len(seen), 20000)


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
