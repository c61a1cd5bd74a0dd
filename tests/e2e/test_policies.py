#!/usr/bin/python3
"""test_policies.py - maxmemory-policy (issue 12, deliver 3): noeviction
answers -OOM once full and evicts nothing (reads and DEL go on),
volatile-lru, volatile-random and volatile-lfu never evict a key without a
TTL, volatile-ttl keeps the long-lived keys, allkeys-random keeps some of
the oldest keys (LRU would keep the newest), allkeys-lfu keeps the keys
read often, cudis's own allkeys-cudis and allkeys-rrip keep keys read
once through a scan that allkeys-lru lets through (cudis only), OBJECT
FREQ reads the LFU counter (lfu-log-factor 0: one per access), CONFIG SET
switches at runtime and refuses unknown names in Redis's words. Validated
against redis-server first.
  /usr/bin/python3 test_policies.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None
VALUE = b"v" * 1000
OOM = "OOM command not allowed when used memory > 'maxmemory'."


class Policies(unittest.TestCase):
    def start(self, policy, maxmemory="8mb"):
        self.srv = e2e_server.Server(BIN, ("--maxmemory", maxmemory, "--maxmemory-policy", policy))
        self.r = redis.Redis(port=self.srv.port)

    def tearDown(self):
        self.r.close()
        self.srv.stop()

    def fill(self, prefix, n, ex=None):
        """SET prefix:0.. one by one; how many were stored before -OOM."""
        for i in range(n):
            try:
                self.r.set("%s:%d" % (prefix, i), VALUE, ex=ex)
            except redis.exceptions.ResponseError as e:
                self.assertEqual(str(e), OOM)
                return i
        return n

    def present(self, prefix, n):
        p = self.r.pipeline(transaction=False)
        for i in range(n):
            p.exists("%s:%d" % (prefix, i))
        return sum(p.execute())

    def test_noeviction(self):
        self.start("noeviction")
        stored = self.fill("k", 100000)
        self.assertLess(stored, 100000, "8 MB held 100 MB")
        self.assertGreater(stored, 1000)
        self.assertEqual(self.r.info("stats")["evicted_keys"], 0)
        self.assertEqual(self.r.get("k:0"), VALUE)  # reads go on
        self.assertEqual(self.present("k", stored), stored)
        self.assertEqual(self.r.delete(*["k:%d" % i for i in range(100)]), 100)
        self.assertTrue(self.r.set("after", VALUE))  # room again
        self.assertEqual(self.r.info("memory")["maxmemory_policy"], "noeviction")

    def test_runtime_switch_and_errors(self):
        self.start("noeviction")
        stored = self.fill("k", 100000)
        self.assertTrue(self.r.config_set("maxmemory-policy", "allkeys-lru"))
        self.assertEqual(self.r.config_get("maxmemory-policy"),
                         {"maxmemory-policy": "allkeys-lru"})
        self.assertEqual(self.fill("n", 2 * stored), 2 * stored)  # evicts now
        self.assertGreater(self.r.info("stats")["evicted_keys"], 0)
        with self.assertRaises(redis.exceptions.ResponseError) as cm:
            self.r.config_set("maxmemory-policy", "allkeys-fifo")
        self.assertEqual(str(cm.exception),
                         "CONFIG SET failed (possibly related to argument 'maxmemory-policy') - "
                         "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
                         "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
                         "noeviction" + ("" if self.srv.is_redis
                                        else ", allkeys-cudis, allkeys-rrip"))
        self.assertEqual(self.r.config_get("maxmemory-policy"),
                         {"maxmemory-policy": "allkeys-lru"})

    def volatile(self, policy):
        self.start(policy)
        self.assertEqual(self.fill("keep", 2000), 2000)
        self.assertEqual(self.fill("vol", 20000, ex=3600), 20000)  # they make the room
        self.assertEqual(self.present("keep", 2000), 2000, "a key without TTL was evicted")
        self.assertGreater(self.r.info("stats")["evicted_keys"], 0)
        # with only keys without TTL left to take, a write is refused
        self.r.delete(*["vol:%d" % i for i in range(20000)])
        stored = self.fill("more", 100000)
        self.assertLess(stored, 100000)
        self.assertEqual(self.present("keep", 2000), 2000)

    def test_volatile_lru(self):
        self.volatile("volatile-lru")

    def test_volatile_random(self):
        self.volatile("volatile-random")

    def test_volatile_ttl(self):
        self.start("volatile-ttl")
        self.assertEqual(self.fill("long", 2000, ex=86400), 2000)
        self.assertEqual(self.fill("short", 20000, ex=60), 20000)
        self.assertGreaterEqual(self.present("long", 2000), 1900)

    def test_allkeys_random(self):
        self.start("allkeys-random")
        cap = 0  # keys written when the first eviction came
        while self.r.info("stats")["evicted_keys"] == 0:
            self.assertEqual(self.fill("k:%d" % cap, 100), 100)
            cap += 100
        self.assertEqual(self.fill("n", cap), cap)  # as many again
        # random: each of the first `cap` survives `cap` later writes with
        # probability ~1/e; LRU would have evicted them all
        old = sum(self.present("k:%d" % i, 100) for i in range(0, cap, 100))
        self.assertGreater(old, cap * 15 // 100, "%d of the first %d keys survive" % (old, cap))

    def test_allkeys_lfu_keeps_the_frequently_read(self):
        self.start("allkeys-lfu")
        self.assertEqual(self.fill("hot", 1000), 1000)
        for _ in range(20):  # in small pipelines: Redis counts unsent replies as memory
            for s in range(0, 1000, 100):
                p = self.r.pipeline(transaction=False)
                for i in range(s, s + 100):
                    p.get("hot:%d" % i)
                p.execute()
        self.assertEqual(self.fill("cold", 20000), 20000)
        self.assertGreaterEqual(self.present("hot", 1000), 900)
        self.assertGreater(self.r.info("stats")["evicted_keys"], 0)

    def scan_survivors(self, policy):
        """Keys read once, then a scan of 20 MB written once into 8 MB:
        how many of the keys read survive."""
        self.start(policy)
        self.assertEqual(self.fill("hot", 1000), 1000)
        for s in range(0, 1000, 100):
            p = self.r.pipeline(transaction=False)
            for i in range(s, s + 100):
                p.get("hot:%d" % i)
            self.assertEqual(p.execute(), [VALUE] * 100)
        self.assertEqual(self.fill("cold", 20000), 20000)
        self.assertGreater(self.r.info("stats")["evicted_keys"], 10000)
        return self.present("hot", 1000)

    def refused_by_redis(self, policy):
        """cudis's own policies are not Redis's: redis-server refuses the
        name in its words (True: the caller stops there)."""
        if "redis-server" not in os.path.basename(BIN):
            return False
        self.start("allkeys-lru")
        with self.assertRaises(redis.exceptions.ResponseError) as cm:
            self.r.config_set("maxmemory-policy", policy)
        self.assertIn("argument(s) must be one of the following", str(cm.exception))
        return True

    def test_allkeys_cudis_resists_a_scan(self):
        """cudis's own policy (not Redis's): keys read since they came
        outlive a scan that allkeys-lru lets through."""
        if self.refused_by_redis("allkeys-cudis"):
            return
        self.assertLess(self.scan_survivors("allkeys-lru"), 100)
        self.tearDown()
        self.assertGreaterEqual(self.scan_survivors("allkeys-cudis"), 900)
        self.assertEqual(self.r.config_get("maxmemory-policy"),
                         {"maxmemory-policy": "allkeys-cudis"})
        self.r.set("i", "v")
        self.assertLessEqual(self.r.object("idletime", "i"), 1)
        with self.assertRaises(redis.exceptions.ResponseError) as cm:
            self.r.object("freq", "i")
        self.assertTrue(str(cm.exception).startswith("An LFU maxmemory policy is not selected"))
        self.assertTrue(self.r.config_set("maxmemory-policy", "allkeys-lru"))
        self.assertTrue(self.r.config_set("maxmemory-policy", "allkeys-cudis"))

    def test_allkeys_rrip_resists_a_scan(self):
        """cudis's other policy (not Redis's): a 2-bit re-reference
        prediction per slot; keys read since they came outlive the scan."""
        if self.refused_by_redis("allkeys-rrip"):
            return
        self.assertGreaterEqual(self.scan_survivors("allkeys-rrip"), 900)
        self.assertEqual(self.r.config_get("maxmemory-policy"),
                         {"maxmemory-policy": "allkeys-rrip"})
        self.r.set("i", "v")
        self.assertLessEqual(self.r.object("idletime", "i"), 1)

    def test_volatile_lfu(self):
        self.volatile("volatile-lfu")

    def test_object_freq(self):
        self.start("allkeys-lru")
        self.r.set("k", "v")
        with self.assertRaises(redis.exceptions.ResponseError) as cm:
            self.r.object("freq", "k")
        self.assertTrue(str(cm.exception).startswith("An LFU maxmemory policy is not selected"))
        self.assertTrue(self.r.config_set("maxmemory-policy", "allkeys-lfu"))
        self.assertTrue(self.r.config_set("lfu-log-factor", "0"))  # every access counts
        self.assertIsNone(self.r.object("freq", "nokey"))
        self.r.set("f", "v")
        self.assertEqual(self.r.object("freq", "f"), 5)  # a new key's counter
        for _ in range(7):
            self.r.get("f")
        self.assertEqual(self.r.object("freq", "f"), 12)
        self.assertEqual(self.r.object("freq", "f"), 12)  # OBJECT is not an access
        self.assertEqual(self.r.object("encoding", "f"), b"embstr")
        self.assertEqual(self.r.object("freq", "f"), 12)
        with self.assertRaises(redis.exceptions.ResponseError) as cm:
            self.r.object("idletime", "f")
        self.assertTrue(str(cm.exception).startswith("An LFU maxmemory policy is selected"))
        self.assertEqual(self.r.config_get("lfu-log-factor"), {"lfu-log-factor": "0"})
        self.assertEqual(self.r.config_get("lfu-decay-time"), {"lfu-decay-time": "1"})

    def test_maxmemory_at_runtime(self):
        """CONFIG SET maxmemory lower evicts down to it; raised, the store
        holds more again (issue 12, deliver 4)."""
        self.start("allkeys-lru", maxmemory="64mb")
        self.assertEqual(self.fill("a", 40000), 40000)
        held = self.r.dbsize()
        self.assertTrue(self.r.config_set("maxmemory", "16mb"))
        self.assertEqual(self.r.config_get("maxmemory"), {"maxmemory": str(16 << 20)})
        used = None
        for _ in range(100):  # evicting takes a moment
            self.r.set("tick", "x")
            used = self.r.info("memory")["used_memory"]
            if used <= 16 << 20:
                break
            time.sleep(0.05)
        self.assertLessEqual(used, 16 << 20)
        low = self.r.dbsize()
        self.assertLess(low, held * 2 // 3)
        self.assertGreater(self.r.info("stats")["evicted_keys"], 0)
        self.assertEqual(self.fill("b", 20000), 20000)  # writes go on, within it
        self.assertLessEqual(self.r.info("memory")["used_memory"], 17 << 20)
        self.assertTrue(self.r.config_set("maxmemory", "64mb"))
        self.assertEqual(self.fill("c", 40000), 40000)
        self.assertGreater(self.r.dbsize(), low * 2)

    def test_maxmemory_raised_beyond_the_start(self):
        """CONFIG SET maxmemory above what the server started with: the
        store grows into it (the cpu engine up to 4x its first budget)."""
        self.start("allkeys-lru", maxmemory="16mb")
        self.assertEqual(self.fill("a", 40000), 40000)
        held = self.r.dbsize()
        self.assertLess(held, 40000, "16mb holds fewer than all")
        self.assertTrue(self.r.config_set("maxmemory", "48mb"))
        self.assertEqual(self.r.config_get("maxmemory"), {"maxmemory": str(48 << 20)})
        self.assertEqual(self.fill("b", 40000), 40000)
        self.assertGreater(self.r.dbsize(), held * 2)
        used = self.r.info("memory")["used_memory"]
        self.assertGreater(used, 32 << 20)
        self.assertLessEqual(used, 49 << 20)


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
