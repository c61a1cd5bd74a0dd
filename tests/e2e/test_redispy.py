#!/usr/bin/python3
"""test_redispy.py - a client library's normal use against the server:
redis-py 4.3 (Debian's python3-redis, run with Debian's /usr/bin/python3):
connection pool shared by threads, pipeline(transaction=False), the
default transactional pipeline and WATCH with retries, numbered
databases (db=1, SWAPDB, MOVE, INFO keyspace), pubsub() with
get_message and run_in_thread, scripts (register_script) and Lock,
expiry,
scan_iter, mget/mset, incr family, binary values, unix socket, INFO and
CONFIG parsing, errors mapped to exceptions. Run by ctest (label e2e):
  /usr/bin/python3 test_redispy.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

import redis  # noqa: E402

BIN = None


class RedisPy(unittest.TestCase):
    def setUp(self):
        self.srv = e2e_server.Server(BIN)
        self.pool = redis.ConnectionPool(host="127.0.0.1", port=self.srv.port, max_connections=16,
                                         socket_timeout=10)
        self.r = redis.Redis(connection_pool=self.pool)

    def tearDown(self):
        self.pool.disconnect()
        self.assertEqual(self.srv.stop(), 0, "server did not exit 0 on SIGTERM")

    def test_basic(self):
        r = self.r
        self.assertTrue(r.ping())
        self.assertIsNone(r.get("nope"))
        self.assertTrue(r.set("k", "v"))
        self.assertEqual(r.get("k"), b"v")
        self.assertIsNone(r.set("k", "w", nx=True))
        self.assertTrue(r.set("k", "w", xx=True))
        self.assertEqual(r.set("k", "x", get=True), b"w")
        self.assertEqual(r.getset("k", "y"), b"x")
        self.assertEqual(r.getdel("k"), b"y")
        self.assertEqual(r.exists("k"), 0)
        self.assertEqual(r.append("a", "12"), 2)
        self.assertEqual(r.strlen("a"), 2)
        self.assertEqual(r.getrange("a", 0, 0), b"1")
        self.assertEqual(r.setrange("a", 1, "xyz"), 4)
        self.assertEqual(r.type("a"), b"string")
        self.assertTrue(r.rename("a", "b"))
        self.assertEqual(r.delete("b", "nope"), 1)
        self.assertEqual(r.echo("hi"), b"hi")
        self.assertEqual(r.dbsize(), 0)
        self.assertIsInstance(r.time()[0], int)

    def test_mget_mset(self):
        r = self.r
        data = {"m:%d" % i: "v%d" % i for i in range(100)}
        self.assertTrue(r.mset(data))
        self.assertEqual(r.mget(list(data) + ["nope"]), [v.encode() for v in data.values()] + [None])
        self.assertFalse(r.msetnx({"m:1": "x", "new": "y"}))
        self.assertTrue(r.msetnx({"new1": "x", "new2": "y"}))
        self.assertEqual(r.dbsize(), 102)

    def test_incr(self):
        r = self.r
        self.assertEqual(r.incr("n"), 1)
        self.assertEqual(r.incrby("n", 10), 11)
        self.assertEqual(r.decr("n"), 10)
        self.assertEqual(r.decrby("n", 20), -10)
        self.assertAlmostEqual(r.incrbyfloat("f", 1.25), 1.25)
        self.assertAlmostEqual(r.incrbyfloat("f", -0.5), 0.75)
        r.set("s", "abc")
        with self.assertRaises(redis.exceptions.ResponseError) as cm:
            r.incr("s")
        self.assertIn("not an integer", str(cm.exception))

    def test_binary(self):
        r = self.r
        key = b"bin\x00key\r\n"
        val = bytes(range(256)) * 40 + b"\r\n\x00"
        self.assertTrue(r.set(key, val))
        self.assertEqual(r.get(key), val)
        self.assertEqual(r.strlen(key), len(val))
        self.assertEqual(r.mget([key, b"x"]), [val, None])
        self.assertIn(key, r.keys("bin*"))
        big = os.urandom(300000)
        self.assertTrue(r.set("big", big))
        self.assertEqual(r.get("big"), big)

    def test_expiry(self):
        r = self.r
        self.assertTrue(r.set("e", "v", ex=100))
        self.assertIn(r.ttl("e"), (99, 100))
        self.assertTrue(r.set("e", "v", px=50000))
        self.assertTrue(45000 < r.pttl("e") <= 50000)
        self.assertTrue(r.expire("e", 200))
        self.assertTrue(r.persist("e"))
        self.assertEqual(r.ttl("e"), -1)
        self.assertEqual(r.ttl("nope"), -2)
        self.assertTrue(r.setex("x", 100, "v"))
        self.assertTrue(r.psetex("y", 40, "v"))
        self.assertTrue(r.set("z", "v", px=40))
        r.set("w", "v")
        self.assertTrue(r.pexpire("w", 40))
        self.assertEqual(r.getex("x", px=60000), b"v")
        self.assertTrue(r.pexpireat("u", int(time.time() * 1000) + 100000) is False)
        time.sleep(0.15)
        self.assertIsNone(r.get("y"))
        self.assertIsNone(r.get("z"))
        self.assertEqual(r.exists("w"), 0)
        self.assertEqual(r.get("x"), b"v")

    def test_pipeline(self):
        r = self.r
        p = r.pipeline(transaction=False)
        for i in range(2000):
            p.set("p:%d" % i, i)
            p.incr("pc")
            p.get("p:%d" % i)
        res = p.execute()
        self.assertEqual(len(res), 6000)
        for i in range(2000):
            self.assertIs(res[3 * i], True)
            self.assertEqual(res[3 * i + 1], i + 1)
            self.assertEqual(res[3 * i + 2], str(i).encode())
        # errors come back in place, the rest still runs
        p = r.pipeline(transaction=False)
        p.set("s", "abc")
        p.incr("s")
        p.get("s")
        res = p.execute(raise_on_error=False)
        self.assertIs(res[0], True)
        self.assertIsInstance(res[1], redis.exceptions.ResponseError)
        self.assertEqual(res[2], b"abc")

    def test_transaction(self):
        r = self.r
        # the default pipeline is MULTI ... EXEC
        p = r.pipeline()
        p.set("t:a", 1)
        p.incr("t:a")
        p.get("t:a")
        self.assertEqual(p.execute(), [True, 2, b"2"])
        # a runtime error inside: raised, the rest applied
        p = r.pipeline()
        p.set("t:s", "abc")
        p.incr("t:s")
        p.set("t:after", 1)
        with self.assertRaises(redis.exceptions.ResponseError):
            p.execute()
        self.assertEqual(r.get("t:after"), b"1")
        res = r.pipeline().set("t:s", "x").incr("t:s").execute(raise_on_error=False)
        self.assertIs(res[0], True)
        self.assertIsInstance(res[1], redis.exceptions.ResponseError)

        # optimistic locking: WATCH, read, MULTI, write; retried on conflict
        r.set("t:n", 0)

        def bump():
            with r.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch("t:n")
                        v = int(pipe.get("t:n"))
                        pipe.multi()
                        pipe.set("t:n", v + 1)
                        pipe.execute()
                        return
                    except redis.WatchError:
                        continue

        threads = [threading.Thread(target=lambda: [bump() for _ in range(50)]) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(int(r.get("t:n")), 300)
        # a write between WATCH and EXEC raises WatchError
        with r.pipeline() as pipe:
            pipe.watch("t:n")
            r.set("t:n", 7)
            pipe.multi()
            pipe.set("t:n", 8)
            with self.assertRaises(redis.WatchError):
                pipe.execute()
        self.assertEqual(r.get("t:n"), b"7")
        # r.transaction(): the helper that retries
        r.transaction(lambda pipe: pipe.multi() or pipe.incr("t:n"), "t:n")
        self.assertEqual(r.get("t:n"), b"8")

    def test_databases(self):
        r0 = self.r
        r1 = redis.Redis(host="127.0.0.1", port=self.srv.port, db=1, socket_timeout=10)
        self.assertTrue(r1.set("k", "one"))
        self.assertIsNone(r0.get("k"))
        self.assertTrue(r0.set("k", "zero"))
        self.assertEqual(r1.get("k"), b"one")
        self.assertEqual(r1.dbsize(), 1)
        self.assertTrue(r0.swapdb(0, 1))
        self.assertEqual(r0.get("k"), b"one")
        self.assertTrue(r0.move("k", 2))
        r2 = redis.Redis(host="127.0.0.1", port=self.srv.port, db=2, socket_timeout=10)
        self.assertEqual(r2.get("k"), b"one")
        self.assertEqual(r0.info("keyspace"), {"db1": {"keys": 1, "expires": 0, "avg_ttl": 0},
                                               "db2": {"keys": 1, "expires": 0, "avg_ttl": 0}})
        with self.assertRaises(redis.exceptions.ResponseError):
            redis.Redis(host="127.0.0.1", port=self.srv.port, db=16).ping()
        r1.close()
        r2.close()

    def test_keyspace_counts_every_key_with_an_expiry(self):
        """INFO keyspace's expires= is exact beyond any sample size (Redis
        counts its expires dictionary), and follows each change of a key's
        expiry; avg_ttl= is a mean of the keys' TTLs."""
        r = self.r
        p = r.pipeline(transaction=False)
        for i in range(30000):
            p.set("v%d" % i, "x", ex=1000)
        for i in range(5000):
            p.set("p%d" % i, "x")
        p.execute()
        r3 = redis.Redis(host="127.0.0.1", port=self.srv.port, db=3, socket_timeout=10)
        for i in range(100):
            r3.set("t%d" % i, "x", px=500000)
        ks = r.info("keyspace")
        self.assertEqual((ks["db0"]["keys"], ks["db0"]["expires"]), (35000, 30000))
        self.assertEqual((ks["db3"]["keys"], ks["db3"]["expires"]), (100, 100))
        p = r.pipeline(transaction=False)
        for i in range(10):
            p.persist("v%d" % i)              # -10
            p.set("v%d" % (10 + i), "y")      # -10: a SET drops the TTL
            p.set("v%d" % (20 + i), "y", keepttl=True)  # kept
            p.delete("v%d" % (30 + i))        # -10
            p.expire("p%d" % i, 100)          # +10
            p.set("p%d" % (10 + i), "y", px=200000)  # +10
            p.getex("v%d" % (40 + i), persist=True)  # -10
        p.execute()
        self.assertTrue(r.move("v100", 3))
        ks = r.info("keyspace")
        self.assertEqual((ks["db0"]["keys"], ks["db0"]["expires"]), (34989, 29979))
        self.assertEqual((ks["db3"]["keys"], ks["db3"]["expires"]), (101, 101))
        self.assertTrue(r.swapdb(0, 3))
        ks = r.info("keyspace")
        self.assertEqual((ks["db3"]["keys"], ks["db3"]["expires"]), (34989, 29979))
        self.assertEqual((ks["db0"]["keys"], ks["db0"]["expires"]), (101, 101))
        # Redis's avg_ttl comes from its expiry cycle's samples: wait for one
        deadline = time.time() + 5
        while r.info("keyspace")["db3"]["avg_ttl"] == 0 and time.time() < deadline:
            time.sleep(0.1)
        self.assertTrue(900000 < r.info("keyspace")["db3"]["avg_ttl"] <= 1000000,
                        r.info("keyspace"))
        self.assertEqual(r3.flushdb(), True)
        self.assertNotIn("db3", r.info("keyspace"))
        r3.close()

    def test_pubsub(self):
        r = self.r
        p = r.pubsub()
        p.subscribe("ch1")
        p.psubscribe("pat.*")
        self.assertEqual(p.get_message(timeout=5)["type"], "subscribe")
        self.assertEqual(p.get_message(timeout=5)["type"], "psubscribe")
        self.assertEqual(r.publish("ch1", "hello"), 1)
        self.assertEqual(r.publish("pat.x", "world"), 1)
        m = p.get_message(timeout=5)
        self.assertEqual((m["type"], m["channel"], m["data"]), ("message", b"ch1", b"hello"))
        m = p.get_message(timeout=5)
        self.assertEqual((m["type"], m["pattern"], m["channel"], m["data"]),
                         ("pmessage", b"pat.*", b"pat.x", b"world"))
        self.assertEqual(r.pubsub_numsub("ch1"), [(b"ch1", 1)])
        self.assertEqual(r.pubsub_numpat(), 1)
        self.assertEqual(r.pubsub_channels(), [b"ch1"])
        # a handler in a thread of its own
        got = []
        p2 = r.pubsub()
        p2.subscribe(**{"ch2": lambda m: got.append(m["data"])})
        t = p2.run_in_thread(sleep_time=0.01)
        deadline = time.time() + 5
        while r.pubsub_numsub("ch2") != [(b"ch2", 1)] and time.time() < deadline:
            time.sleep(0.01)
        for i in range(100):
            r.publish("ch2", str(i))
        while len(got) < 100 and time.time() < deadline:
            time.sleep(0.01)
        t.stop()
        t.join(timeout=5)  # the worker closes p2 itself
        self.assertEqual(got, [str(i).encode() for i in range(100)])
        p.unsubscribe()
        p.punsubscribe()
        p.close()

    def test_scripts_and_lock(self):
        r = self.r
        # register_script: EVALSHA, falling back to EVAL on NOSCRIPT
        add = r.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
        self.assertEqual(add(keys=["sc"], args=[5]), 5)
        r.script_flush()
        self.assertEqual(add(keys=["sc"], args=[2]), 7)
        self.assertEqual(r.eval("return {KEYS[1], ARGV[1]}", 1, "k", "a"), [b"k", b"a"])
        r.set("nonint", "x")
        with self.assertRaises(redis.exceptions.ResponseError):
            r.eval("return redis.call('incr', 'nonint')", 0)
        # redis-py's Lock: acquire and release are Lua scripts (EVALSHA)
        lock = r.lock("resource", timeout=10)
        self.assertTrue(lock.acquire(blocking=False))
        other = r.lock("resource", timeout=10)
        self.assertFalse(other.acquire(blocking=False))
        self.assertTrue(lock.extend(5))
        lock.release()
        self.assertTrue(other.acquire(blocking=False))
        other.release()
        with self.assertRaises(redis.exceptions.LockError):
            other.release()
        with r.lock("ctx", timeout=5):
            self.assertTrue(r.exists("ctx"))
        self.assertFalse(r.exists("ctx"))

    def test_scan_iter(self):
        r = self.r
        p = r.pipeline(transaction=False)
        for i in range(1000):
            p.set("user:%d" % i, i)
            p.set("item:%d" % i, i)
        p.execute()
        users = set(r.scan_iter(match="user:*", count=50))
        self.assertEqual(users, {("user:%d" % i).encode() for i in range(1000)})
        self.assertEqual(len(set(r.scan_iter(count=100))), 2000)
        self.assertEqual(len(set(r.scan_iter(_type="STRING"))), 2000)
        self.assertEqual(len(r.keys("item:1*")), 111)

    def test_pool_threads(self):
        errors = []

        def work(t):
            try:
                for i in range(300):
                    self.r.set("t%d:%d" % (t, i), i)
                    if self.r.get("t%d:%d" % (t, i)) != str(i).encode():
                        errors.append("bad value")
                    self.r.incr("shared")
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(self.r.get("shared"), b"3600")
        self.assertLessEqual(len(self.pool._available_connections) + len(self.pool._in_use_connections), 16)

    def test_work_queue(self):
        """A broker's pattern (Celery/kombu, RQ): workers BRPOP several
        queues with a timeout while producers LPUSH; BLMOVE for a reliable
        queue. Every job is taken once."""
        r = self.r
        done, lock = [], threading.Lock()

        def worker():
            while True:
                item = r.brpop(["jobs:high", "jobs:low"], timeout=1)
                if item is None:
                    return
                if item[1] == b"stop":
                    return
                with lock:
                    done.append(item)

        ws = [threading.Thread(target=worker) for _ in range(4)]
        for w in ws:
            w.start()
        for i in range(200):
            r.lpush("jobs:high" if i % 3 == 0 else "jobs:low", "job%d" % i)
        for _ in ws:
            r.lpush("jobs:low", "stop")
        for w in ws:
            w.join()
        self.assertEqual(sorted(j for _, j in done), sorted(b"job%d" % i for i in range(200)))
        self.assertIsNone(r.blpop("jobs:high", timeout=0.1))
        r.rpush("tasks", "t1")
        self.assertEqual(r.blmove("tasks", "processing", 1, "LEFT", "RIGHT"), b"t1")
        self.assertEqual(r.lrange("processing", 0, -1), [b"t1"])
        self.assertEqual(r.blmpop(0.1, 2, "nope", "processing", direction="LEFT", count=5),
                         [b"processing", [b"t1"]])

    def test_unix_socket_and_admin(self):
        u = redis.Redis(unix_socket_path=self.srv.sock, socket_timeout=10)
        self.assertTrue(u.ping())
        u.set("k", "v")
        self.assertEqual(self.r.get("k"), b"v")
        self.assertTrue(u.client_setname("py"))
        self.assertEqual(u.client_getname(), "py")  # redis-py decodes it
        self.assertIsInstance(u.client_id(), int)
        names = [c.get("name") for c in u.client_list()]
        self.assertIn("py", names)
        info = self.r.info()
        self.assertIn("redis_version", info)
        self.assertEqual(info["tcp_port"], self.srv.port)
        self.assertGreaterEqual(info["connected_clients"], 2)
        self.assertEqual(info["db0"]["keys"], 1)
        self.assertEqual(self.r.config_get("maxclients"), {"maxclients": "10000"})
        self.assertTrue(self.r.config_set("timeout", 0))
        self.assertIn(b"get", [c if isinstance(c, bytes) else c.encode() for c in self.r.execute_command("COMMAND LIST")])
        self.assertGreater(self.r.memory_usage("k"), 0)
        self.assertTrue(self.r.flushall())
        self.assertEqual(self.r.dbsize(), 0)
        u.close()


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
