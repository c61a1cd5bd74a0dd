#!/usr/bin/python3
"""test_shards.py - a node whose engine is several shards (engine-shards 4:
four stores, each owning a quarter of the 16,384 hash slots): what clients
see must not change. Strings, MSET/MGET and DEL over keys of every shard
(one batch split four ways, values packed back in order), a pipeline of
mixed commands, a big hash whose chunks land on every shard (HGETALL,
HLEN and HMGET agree), TTLs, SCAN visiting every key once, DBSIZE,
RANDOMKEY, FLUSHALL, and a full store evicting. On cudis INFO engine lists
each shard with its slot range, and every shard holds keys. The same tests
run against redis-server (without the option), which they were validated
against first.
  /usr/bin/python3 test_shards.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None
SHARDS = 4


class Shards(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        is_redis = "redis-server" in os.path.basename(BIN)
        extra = ["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"]
        if not is_redis:
            extra += ["--engine-shards", str(SHARDS)]
        cls.srv = e2e_server.Server(BIN, extra)
        cls.is_redis = is_redis

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0

    def setUp(self):
        self.r = redis.Redis(port=self.srv.port)
        self.r.flushall()

    def tearDown(self):
        self.r.close()

    def shard_lines(self):
        info = self.r.execute_command("INFO", "engine")  # redis-py parses it
        return ["%s:%s" % (k, ",".join("%s=%s" % kv for kv in v.items()) if isinstance(v, dict) else v)
                for k, v in info.items() if k.startswith("shard") and "_" not in k]

    def test_multi_key_batches_split_and_packed(self):
        r = self.r
        keys = ["k:%d" % i for i in range(1000)]
        vals = {k: ("v%d-" % i) * (1 + i % 13) for i, k in enumerate(keys)}
        self.assertTrue(r.mset(vals))
        self.assertEqual(r.mget(keys), [vals[k].encode() for k in keys])
        self.assertEqual(r.dbsize(), 1000)
        self.assertEqual(r.delete(*keys[:500], "nope"), 500)
        self.assertEqual(r.exists(*keys), 500)
        p = r.pipeline(transaction=False)
        for i, k in enumerate(keys[500:]):
            p.append(k, "+")
            p.incr("n:%d" % (i % 50))
            p.get(k)
        out = p.execute()
        for j, k in enumerate(keys[500:]):
            self.assertEqual(out[3 * j + 2], vals[k].encode() + b"+")
        self.assertEqual(sum(int(r.get("n:%d" % i)) for i in range(50)), 500)
        if not self.is_redis:
            lines = self.shard_lines()
            self.assertEqual(len(lines), SHARDS, lines)
            self.assertTrue(lines[0].startswith("shard0:slots=0-4095,"), lines[0])
            self.assertTrue(lines[3].startswith("shard3:slots=12288-16383,"), lines[3])
            items = [int(f.split("=")[1]) for line in lines for f in line.split(",")
                     if f.startswith("items=")]
            self.assertEqual(sum(items), r.dbsize())
            self.assertTrue(all(n > 50 for n in items), items)

    def test_big_hash_over_every_shard(self):
        r = self.r
        fields = {"f%05d" % i: "x" * (i % 300) for i in range(20000)}
        items = list(fields.items())
        for i in range(0, len(items), 1000):
            r.hset("hps", mapping=dict(items[i:i + 1000]))
        self.assertEqual(r.hlen("hps"), 20000)
        got = r.hgetall("hps")
        self.assertEqual(len(got), 20000)
        self.assertEqual(got[b"f01234"], fields["f01234"].encode())
        pick = ["f%05d" % i for i in range(0, 20000, 97)]
        self.assertEqual(r.hmget("hps", pick), [fields[f].encode() for f in pick])
        self.assertEqual(r.dbsize(), 1)

    def test_scan_randomkey_ttl_flush(self):
        r = self.r
        for i in range(3000):
            r.set("s:%d" % i, i, px=600000 if i % 2 else None)
        seen = set()
        cur = 0
        while True:
            cur, ks = r.scan(cur, count=500)
            seen.update(ks)
            if cur == 0:
                break
        self.assertEqual(seen, {b"s:%d" % i for i in range(3000)})
        self.assertIn(r.randomkey(), seen)
        self.assertTrue(590000 < r.pttl("s:1") <= 600000)
        self.assertEqual(r.pttl("s:2"), -1)
        self.assertTrue(r.flushall())
        self.assertEqual(r.dbsize(), 0)
        self.assertIsNone(r.randomkey())

    def test_full_store_evicts(self):
        r = self.r
        val = "z" * 4000
        p = r.pipeline(transaction=False)
        for i in range(40000):  # 160 MB into 64 MB
            p.set("e:%d" % i, val)
            if i % 1000 == 999:
                self.assertTrue(all(p.execute()))
        p.execute()
        self.assertGreater(int(r.info("stats")["evicted_keys"]), 0)
        n = r.dbsize()
        self.assertTrue(1000 < n < 40000, n)
        self.assertEqual(r.get("e:39999"), val.encode())


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
