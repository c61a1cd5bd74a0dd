#!/usr/bin/python3
"""test_persistence.py - SAVE, BGSAVE, LASTSAVE, SHUTDOWN SAVE, the save
schedule and dump.rdb loaded at start, in Redis's RDB format both ways:
a file the server under test writes loads into Debian's redis-server with
every key, type, value, expiry, database and function library, and a file
redis-server writes (with its listpack, intset, quicklist and skiplist
encodings, a big hash) loads into the server under test. A BGSAVE holds
the keys as they were when it started while clients overwrite, delete and
create keys during it. A corrupt file stops the server from starting.
rdbcompression (LZF strings in files and DUMP, or raw) and rdbchecksum
(a zero CRC written, no check at load) behave as Redis's.
Validated against redis-server first (then both sides are redis-server).
Fails when /usr/bin/redis-server is missing (scripts/deps.sh installs it).
  /usr/bin/python3 test_persistence.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None
REDIS = "/usr/bin/redis-server"
LIB = "#!lua name=plib\nredis.register_function('pf', function(keys, args) return 42 end)"


def value_of(r, k):
    """(type, value) of key k."""
    t = r.type(k).decode()
    if t == "string":
        v = r.get(k)
    elif t == "hash":
        v = r.hgetall(k)
    elif t == "set":
        v = sorted(r.smembers(k))
    elif t == "list":
        v = r.lrange(k, 0, -1)
    elif t == "zset":
        v = r.zrange(k, 0, -1, withscores=True)
    else:
        v = None
    return t, v


def dataset(r, dbs=16):
    """Every key of every database: (db, key) -> (type, value, has_ttl)."""
    out = {}
    for db in range(dbs):
        r.execute_command("SELECT", db)
        for k in r.scan_iter(count=1000):
            out[(db, k)] = value_of(r, k) + (r.pttl(k) > 0,)
    r.execute_command("SELECT", 0)
    return out


def fill(r):
    """Keys of every type cudis keeps, in the encodings Redis picks by size."""
    p = r.pipeline(transaction=False)
    p.set("s:int", 12345)
    p.set("s:neg", -7)
    p.set("s:big", "12345678901234567890")
    p.set("s:raw", "hello world")
    p.set("s:bin", bytes(range(256)) * 40)
    p.set("s:empty", "")
    p.set("s:ttl", "soon", px=600000)
    p.hset("h:small", mapping={"a": "1", "b": "two"})
    p.hset("h:wide", mapping={"f%d" % i: "v" * (i % 70) for i in range(600)})  # hashtable
    p.hset("h:big", mapping={"field:%06d" % i: "value-%d" % i for i in range(6000)})  # > 64 KB
    p.sadd("set:int", *range(50))  # intset
    p.sadd("set:str", *["m%d" % i for i in range(30)])
    p.sadd("set:wide", *["member-%d" % i for i in range(700)])  # hashtable
    p.rpush("l:small", "a", "b", "c", 1, 2)
    p.rpush("l:long", *["e%05d" % i for i in range(5000)])  # several quicklist nodes
    p.zadd("z:small", {"x": 1.5, "y": -2, "z": 0})
    p.zadd("z:wide", {"m%d" % i: i * 0.25 for i in range(300)})  # skiplist
    p.expire("h:small", 900)
    p.execute()
    r.execute_command("SELECT", 5)
    r.set("in:5", "five")
    r.hset("h:in5", "f", "v")
    r.execute_command("SELECT", 0)
    r.execute_command("FUNCTION", "LOAD", LIB)


class Persistence(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cudis-e2e-rdb-")
        os.chmod(self.dir, 0o777)
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def start(self, binary, extra=()):
        s = e2e_server.Server(binary, ["--dir", self.dir] + list(extra))
        self.servers.append(s)
        r = redis.Redis(port=s.port)
        self.wait_loaded(r, 60)
        return s, r

    def wait_loaded(self, r, secs):
        """Until PING answers PONG: the server answers LOADING while it
        reads the file."""
        deadline = time.time() + secs
        while True:
            try:
                r.ping()
                return
            except redis.BusyLoadingError:
                self.assertLess(time.time(), deadline)
                time.sleep(0.02)

    def stop(self, s):
        self.assertEqual(s.stop(), 0)
        self.servers.remove(s)

    def shutdown(self, s, r, **how):
        """SHUTDOWN with redis-py's options; the process gone with status 0."""
        try:
            r.shutdown(**how)
        except redis.ConnectionError:
            pass
        self.assertEqual(s.proc.wait(10), 0)
        self.servers.remove(s)

    def check_loaded(self, want, r):
        got = dataset(r)
        self.assertEqual(sorted(got), sorted(want))
        for k in want:
            self.assertEqual(got[k], want[k], k)
        self.assertEqual(r.execute_command("FCALL", "pf", 0), 42)

    def test_file_written_loads_into_redis_server(self):
        s, r = self.start(BIN)
        fill(r)
        want = dataset(r)
        self.assertEqual(r.save(), True)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "dump.rdb")))
        self.assertEqual([f for f in os.listdir(self.dir) if f.startswith("temp-")], [])
        self.assertEqual(int(r.info("persistence")["rdb_changes_since_last_save"]), 0)
        self.stop(s)
        check = subprocess.run(["/usr/bin/redis-check-rdb", os.path.join(self.dir, "dump.rdb")],
                               capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        self.assertIn("RDB looks OK", check.stdout)
        _, r2 = self.start(REDIS)
        self.check_loaded(want, r2)

    def test_relative_paths_are_inside_dir(self):
        """Redis works inside `dir` (it changes to it as it reads the
        option): a relative cluster-config-file and logfile are written
        there, not where the server was started."""
        here = os.getcwd()
        s, r = self.start(BIN, ["--cluster-enabled", "yes", "--cluster-config-file",
                                "nodes-rel.conf", "--logfile", "rel.log"])
        self.assertEqual(r.config_get("dir")["dir"], os.path.realpath(self.dir))
        for opt in ("bgsave_cpulist", "server_cpulist"):
            self.assertEqual(r.config_get(opt), {opt: ""})
        self.assertEqual(r.save(), True)
        deadline = time.time() + 10
        while not os.path.exists(os.path.join(self.dir, "nodes-rel.conf")):
            self.assertLess(time.time(), deadline, os.listdir(self.dir))
            time.sleep(0.05)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "rel.log")))
        self.assertTrue(os.path.exists(os.path.join(self.dir, "dump.rdb")))
        self.stop(s)
        for name in ("nodes-rel.conf", "rel.log", "dump.rdb"):
            self.assertFalse(os.path.exists(os.path.join(here, name)), name)

    def test_redis_server_file_loads(self):
        s, r = self.start(REDIS)
        fill(r)
        want = dataset(r)
        self.assertTrue(r.save())
        self.stop(s)
        _, r2 = self.start(BIN)
        self.check_loaded(want, r2)
        info = r2.info("persistence")
        self.assertEqual(int(info["rdb_last_load_keys_loaded"]), len(want))
        self.assertEqual(int(info["rdb_changes_since_last_save"]), 0)

    def test_keys_keep_their_idle_time_or_counter(self):
        """Under an LRU policy a file dates each key by its idle seconds
        (an IDLE record), under an LFU one by its counter (FREQ), as
        Redis's rdbSaveKeyValuePair writes them; loading gives them back
        (objectSetLRUOrLFU): from redis-server's file into the server, and
        from the server's into redis-server."""
        for pol, field, ages in (("allkeys-lru", "idletime", (0, 7, 1000, 4000)),
                                 ("allkeys-lfu", "freq", (0, 7, 100, 255))):
            s, r = self.start(REDIS, ["--maxmemory-policy", pol])
            r.flushall()  # (the last pass's file loaded)
            r.set("src", "v")
            p = r.dump("src")
            r.delete("src")
            for i, a in enumerate(ages):
                kw = {"idletime": a} if field == "idletime" else {"frequency": a}
                self.assertTrue(r.restore("k%d" % i, 0, p, **kw))
                r.hset("h%d" % i, "f", "v")
                self.assertTrue(r.restore("h%d" % i, 0, r.dump("h%d" % i), replace=True, **kw))
            t0 = time.time()
            self.assertTrue(r.save())
            self.stop(s)
            for binary in (BIN, REDIS):
                s, r = self.start(binary, ["--maxmemory-policy", pol])
                slack = int(time.time() - t0) + 1
                for i, a in enumerate(ages):
                    for k in ("k%d" % i, "h%d" % i):
                        got = r.object(field, k)
                        if field == "freq":
                            self.assertEqual(got, a, (binary, k))
                        else:
                            self.assertTrue(a <= got <= a + slack, (binary, k, got, a))
                self.assertTrue(r.save())  # the server's file, for redis-server next
                self.stop(s)

    def test_file_bigger_than_the_read_window_loads(self):
        """A file of 19 MB from redis-server (uncompressed): cudis reads it
        through a 4 MB window, so records cross the window's end, a value of
        9 MB outgrows it, and databases change after it; every byte loads."""
        s, r = self.start(REDIS, ["--rdbcompression", "no"])
        rnd = random.Random(7)
        want = {}
        p = r.pipeline(transaction=False)
        for i in range(2500):
            v = rnd.randbytes(1000 + rnd.randrange(6000))
            want[(0, b"k:%d" % i)] = v
            p.set(b"k:%d" % i, v)
        huge = rnd.randbytes(9 << 20)
        p.set("huge", huge)
        want[(0, b"huge")] = huge
        p.execute()
        r.hset("h", mapping={"f%d" % i: rnd.randbytes(100) for i in range(5000)})
        hash_want = r.hgetall("h")
        r.execute_command("SELECT", 3)
        r.set("after", "the window", px=600000)
        self.assertTrue(r.save())
        self.stop(s)
        self.assertGreater(os.path.getsize(os.path.join(self.dir, "dump.rdb")), 18 << 20)
        _, r2 = self.start(BIN)
        self.assertEqual(r2.dbsize(), len(want) + 1)
        keys = [k for _, k in want]
        got = []
        for at in range(0, len(keys), 500):
            got += r2.mget(keys[at:at + 500])
        for k, v in zip(keys, got):
            self.assertEqual(v, want[(0, k)], k)
        self.assertEqual(r2.hgetall("h"), hash_want)
        r2.execute_command("SELECT", 3)
        self.assertEqual(r2.get("after"), b"the window")
        self.assertGreater(r2.pttl("after"), 0)

    loading_data = None  # the file of _loading_file, made once

    def _loading_file(self):
        """A file of 1,000,000 keys from redis-server (37 MB: most of a
        second to load, longer under sanitizers), put in dir; its bytes."""
        cls = type(self)
        if cls.loading_data is None:
            s, r = self.start(REDIS, ["--enable-debug-command", "yes"])
            r.execute_command("DEBUG", "POPULATE", 1000000, "key", 100)
            self.assertTrue(r.save())
            self.stop(s)
            with open(os.path.join(self.dir, "dump.rdb"), "rb") as f:
                cls.loading_data = f.read()
        else:
            with open(os.path.join(self.dir, "dump.rdb"), "wb") as f:
                f.write(cls.loading_data)
        return cls.loading_data

    def _start_loading(self):
        """The server under test started on that file, and a client once
        it answers, while it still loads (its first reply is -LOADING)."""
        s = e2e_server.Server(BIN, ["--dir", self.dir])
        self.servers.append(s)
        r = redis.Redis(port=s.port)
        with self.assertRaises(redis.BusyLoadingError) as e:
            r.ping()
        self.assertEqual(str(e.exception), "Redis is loading the dataset in memory")
        return s, r

    def test_loading_replies_while_the_file_loads(self):
        """While dump.rdb loads, commands get Redis's -LOADING, but INFO
        (loading:1 and the loading_* figures), CONFIG GET and CLIENT run;
        once it is in, everything is served."""
        data = self._loading_file()
        s, r = self._start_loading()
        with self.assertRaises(redis.BusyLoadingError):
            r.get("key:1")
        with self.assertRaises(redis.BusyLoadingError):
            r.set("new", "x")
        info = r.info("persistence")
        self.assertEqual(info["loading"], 1)
        self.assertEqual(info["loading_total_bytes"], len(data))
        self.assertGreaterEqual(info["loading_loaded_bytes"], 0)
        self.assertLessEqual(info["loading_loaded_bytes"], len(data))
        self.assertGreater(info["loading_rdb_used_mem"], 0)
        self.assertIn("loading_loaded_perc", info)
        self.assertIn("loading_eta_seconds", info)
        self.assertGreater(info["loading_start_time"], 0)
        self.assertEqual(r.config_get("databases"), {"databases": "16"})
        self.assertGreater(r.client_id(), 0)
        self.wait_loaded(r, 120)
        self.assertEqual(r.dbsize(), 1000000)
        self.assertEqual(r.get("key:999999")[:13], b"value:999999\0")
        self.assertEqual(r.info("persistence")["loading"], 0)
        self.assertNotIn("loading_total_bytes", r.info("persistence"))

    def test_shutdown_while_the_file_loads(self):
        """SHUTDOWN, and SIGTERM, while dump.rdb loads: the server exits
        with 0 at once and saves nothing (the file is as it was), even
        with save points set or SHUTDOWN SAVE, as Redis does."""
        data = self._loading_file()
        path = os.path.join(self.dir, "dump.rdb")
        for how in ("SHUTDOWN SAVE", "SIGTERM"):
            s, r = self._start_loading()
            r.config_set("save", "1 1")
            if how == "SIGTERM":
                s.proc.send_signal(signal.SIGTERM)
            else:
                try:
                    r.shutdown(save=True)  # (redis-py returns once the connection is closed)
                except redis.ConnectionError:
                    pass
            self.assertEqual(s.proc.wait(10), 0, how)
            self.servers.remove(s)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), data, how)

    def test_shutdown_save_and_restart_warm(self):
        s, r = self.start(BIN)
        fill(r)
        want = dataset(r)
        self.assertEqual(int(r.info("persistence")["rdb_changes_since_last_save"]) > 0, True)
        before = r.lastsave()
        time.sleep(1.1)
        self.shutdown(s, r, save=True)
        s2, r2 = self.start(BIN)
        self.check_loaded(want, r2)
        self.assertGreater(r2.lastsave(), before)
        # SHUTDOWN NOSAVE leaves the file as it was
        r2.set("later", "x")
        self.shutdown(s2, r2, nosave=True)
        _, r3 = self.start(BIN)
        self.assertIsNone(r3.get("later"))
        self.assertEqual(r3.get("s:raw"), b"hello world")

    def test_bgsave_is_a_snapshot_of_its_start(self):
        self.bgsave_under_writes([], 1)

    def test_bgsave_snapshot_with_io_threads(self):
        # several loops write at once: their guards and the walk share the engine
        self.bgsave_under_writes(["--io-threads", "4"], 4)

    def bgsave_under_writes(self, extra, writers):
        s, r = self.start(BIN, extra)
        n = 200000
        p = r.pipeline(transaction=False)
        for i in range(n):
            p.set("k:%d" % i, "old:%d" % i)
            if i % 10000 == 9999:
                p.execute()
        p.execute()
        r.hset("h:big", mapping={"field:%06d" % i: "old" for i in range(6000)})
        # during the save: every key rewritten, some deleted, new ones made,
        # by `writers` clients at once (each its own part of the keys); the
        # first ones in the same pipeline as BGSAVE, so surely during it
        first = 20000

        def change(p, i):
            if i % 7 == 0:
                p.delete("k:%d" % i)
            else:
                p.set("k:%d" % i, "new")
            if i % 5 == 0:
                p.set("new:%d" % i, "x")
        p = r.pipeline(transaction=False)
        p.bgsave()
        for i in range(first):
            change(p, i)
        self.assertEqual(p.execute()[0], True)

        def write(part):
            c = redis.Redis(port=s.port)
            p = c.pipeline(transaction=False)
            for i in range(first + part, n, writers):
                change(p, i)
                if i % 5000 == 4999:
                    p.execute()
            p.execute()
            if part == 0:
                c.hset("h:big", mapping={"field:%06d" % i: "new" for i in range(0, 6000, 3)})
                c.hset("h:big", "added", "1")
            c.close()
        threads = [threading.Thread(target=write, args=(k,)) for k in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        deadline = time.time() + 60
        while int(r.info("persistence")["rdb_bgsave_in_progress"]) and time.time() < deadline:
            time.sleep(0.05)
        info = r.info("persistence")
        self.assertEqual(int(info["rdb_bgsave_in_progress"]), 0)
        self.assertEqual(info["rdb_last_bgsave_status"], "ok")
        self.stop(s)
        _, r2 = self.start(REDIS)
        self.assertEqual(r2.dbsize(), n + 1)
        got = {}
        keys = ["k:%d" % i for i in range(n)]
        for at in range(0, n, 10000):
            for k, v in zip(keys[at:at + 10000], r2.mget(keys[at:at + 10000])):
                got[k] = v
        wrong = [k for k in keys if got[k] != ("old:%s" % k[2:]).encode()]
        self.assertEqual(wrong[:5], [])
        self.assertEqual(r2.hlen("h:big"), 6000)
        self.assertEqual(set(r2.hvals("h:big")), {b"old"})

    def fill(self, r, n, prefix="k:", ttl=None):
        p = r.pipeline(transaction=False)
        for i in range(n):
            p.set("%s%d" % (prefix, i), "v:%d" % i, px=ttl(i) if ttl else None)
            if i % 10000 == 9999:
                p.execute()
        p.execute()

    def wait_bgsave(self, r):
        deadline = time.time() + 60
        while int(r.info("persistence")["rdb_bgsave_in_progress"]) and time.time() < deadline:
            time.sleep(0.02)
        return r.info("persistence")

    def test_bgsave_interrupted(self):
        # FLUSHDB right after BGSAVE: the file still has every key of the
        # start; FLUSHALL stops the save (no file, the last status kept);
        # SHUTDOWN NOSAVE during one exits at once and leaves no temp file
        n = 100000
        s, r = self.start(BIN, ["--save", "", "--bgsave_cpulist", "0", "--server_cpulist", "0-1023"])
        self.fill(r, n)
        p = r.pipeline(transaction=False)
        p.bgsave()
        p.flushdb()
        p.set("after", "1")
        self.assertEqual(p.execute(), [True, True, True])
        info = self.wait_bgsave(r)
        self.assertEqual(int(info["rdb_bgsave_in_progress"]), 0)
        self.assertEqual(info["rdb_last_bgsave_status"], "ok")
        self.assertEqual(r.dbsize(), 1)
        dump = os.path.join(self.dir, "dump.rdb")
        saved = os.path.getmtime(dump)
        self.fill(r, n)
        p = r.pipeline(transaction=False)
        p.bgsave()
        p.flushall()
        self.assertEqual(p.execute(), [True, True])
        info = self.wait_bgsave(r)
        self.assertEqual(int(info["rdb_bgsave_in_progress"]), 0)
        self.assertEqual(info["rdb_last_bgsave_status"], "ok")
        self.assertEqual(os.path.getmtime(dump), saved)
        self.assertEqual(r.dbsize(), 0)
        self.fill(r, n)
        p = r.pipeline(transaction=False)
        p.bgsave()
        p.execute_command("SHUTDOWN", "NOSAVE")
        try:
            p.execute()
        except redis.ConnectionError:
            pass
        self.assertEqual(s.proc.wait(10), 0)
        self.servers.remove(s)
        self.assertEqual(sorted(os.listdir(self.dir)), ["dump.rdb"])
        self.assertEqual(os.path.getmtime(dump), saved)
        _, r2 = self.start(REDIS)
        self.assertEqual(r2.dbsize(), n)
        self.assertEqual(r2.get("k:%d" % (n - 1)), b"v:%d" % (n - 1))
        self.assertIsNone(r2.get("after"))

    def test_keys_expiring_during_bgsave(self):
        # keys whose TTLs end while the walk runs: the expiry cycle runs
        # beside it; each key is in the file with its value, or not at all
        s, r = self.start(BIN, ["--save", "", "--hz", "100"])
        n = 150000
        self.fill(r, n, ttl=lambda i: 1000 + i % 1000)  # (the fill takes about 1 s)
        self.fill(r, 50000, "keep:")
        self.assertTrue(r.bgsave())
        info = self.wait_bgsave(r)
        self.assertEqual(info["rdb_last_bgsave_status"], "ok")
        self.stop(s)
        _, r2 = self.start(REDIS)
        self.assertGreaterEqual(r2.dbsize(), 50000)
        for at in range(0, n, 10000):
            keys = ["k:%d" % i for i in range(at, at + 10000)]
            for k, v in zip(keys, r2.mget(keys)):
                self.assertIn(v, (None, b"v:" + k[2:].encode()), k)
        keys = ["keep:%d" % i for i in range(50000)]
        self.assertEqual(r2.mget(keys), [b"v:%d" % i for i in range(50000)])

    def test_errors_and_options(self):
        s, r = self.start(BIN)
        r.set("a", "1")
        with self.assertRaisesRegex(redis.ResponseError, "^syntax error$"):
            r.execute_command("BGSAVE", "now")
        for opt, val, why in (("dir", "/tmp", "can't set protected config"),
                              ("dbfilename", "x.rdb", "can't set protected config"),
                              ("save", "1", "Invalid save parameters"),
                              ("save", "1 -1", "Invalid save parameters"),
                              ("save", "abc def", "Invalid save parameters"),
                              ("bgsave_cpulist", "0", "can't set immutable config"),
                              ("server_cpulist", "0", "can't set immutable config")):
            with self.assertRaises(redis.ResponseError) as cm:
                r.config_set(opt, val)
            self.assertEqual(str(cm.exception),
                             "CONFIG SET failed (possibly related to argument '%s') - %s"
                             % (opt, why))
        self.assertEqual(r.config_get("dir")["dir"], os.path.realpath(self.dir))
        for opt in ("bgsave_cpulist", "server_cpulist"):
            self.assertEqual(r.config_get(opt), {opt: ""})
        self.assertTrue(r.execute_command("BGSAVE", "SCHEDULE"))
        deadline = time.time() + 20
        while int(r.info("persistence")["rdb_bgsave_in_progress"]) and time.time() < deadline:
            time.sleep(0.05)
        self.assertTrue(r.config_set("save", "1 1 100 2"))
        # inside a transaction: SAVE and SHUTDOWN refused, BGSAVE scheduled
        for cmd in (("SAVE",), ("SHUTDOWN", "NOSAVE")):
            p = r.pipeline(transaction=True)
            p.execute_command(*cmd)
            p.set("after", "1")
            with self.assertRaises(redis.ResponseError) as cm:
                p.execute()
            self.assertIn("Command not allowed inside a transaction", str(cm.exception))
        self.assertIsNone(r.get("after"))
        saves = int(r.info("persistence")["rdb_saves"])
        with socket.create_connection(("127.0.0.1", s.port), timeout=10) as raw:
            raw.sendall(b"MULTI\r\nBGSAVE\r\nEXEC\r\n")
            want = b"+OK\r\n+QUEUED\r\n*1\r\n+Background saving scheduled\r\n"
            got = b""
            while len(got) < len(want):
                got += raw.recv(4096)
            self.assertEqual(got, want)
        while int(r.info("persistence")["rdb_saves"]) == saves and time.time() < deadline + 20:
            time.sleep(0.05)
        self.assertEqual(int(r.info("persistence")["rdb_saves"]), saves + 1)
        self.assertEqual(r.config_get("save")["save"], "1 1 100 2")

    def test_save_schedule(self):
        s, r = self.start(BIN, ["--save", "1 1"])
        saves = int(r.info("persistence")["rdb_saves"])
        r.set("x", "y")
        deadline = time.time() + 15
        while int(r.info("persistence")["rdb_saves"]) == saves and time.time() < deadline:
            time.sleep(0.1)
        self.assertGreater(int(r.info("persistence")["rdb_saves"]), saves)
        while int(r.info("persistence")["rdb_bgsave_in_progress"]) and time.time() < deadline:
            time.sleep(0.05)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "dump.rdb")))
        self.assertTrue(r.config_set("save", ""))

    def test_rdbcompression(self):
        """rdbcompression yes (the default) writes strings over 20 bytes as
        LZF in the file and in DUMP, no writes them raw; either file loads
        into redis-server and passes redis-check-rdb."""
        s, r = self.start(BIN)
        self.assertEqual(r.config_get("rdb*")["rdbcompression"], "yes")
        p = r.pipeline(transaction=False)
        for i in range(2000):
            p.set("compressible:key:name:%06d" % i, "ab%d" % (i % 10) * 300)
        p.set("incompressible", os.urandom(5000))
        p.set("short", "x" * 20)
        p.execute()
        fill(r)
        want = dataset(r)
        self.assertLess(len(r.dump("compressible:key:name:000001")), 100)
        self.assertEqual(len(r.dump("short")), 1 + 1 + 20 + 10)  # type, length, bytes, footer
        dumps = {k: r.dump(k) for k in (b"incompressible", b"s:bin", b"h:big", b"l:long")}
        path = os.path.join(self.dir, "dump.rdb")
        sizes = {}
        for comp in ("yes", "no"):
            self.assertTrue(r.config_set("rdbcompression", comp))
            self.assertTrue(r.save())
            sizes[comp] = os.path.getsize(path)
            check = subprocess.run(["/usr/bin/redis-check-rdb", path], capture_output=True, text=True)
            self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
            shutil.copy(path, path + "." + comp)
        self.assertGreater(len(r.dump("compressible:key:name:000001")), 900)
        for k, d in dumps.items():  # RESTORE reads either form
            self.assertTrue(r.restore(k + b":again", 0, d))
            self.assertEqual(value_of(r, k + b":again"), value_of(r, k))
            r.delete(k + b":again")
        self.assertLess(sizes["yes"] * 5, sizes["no"])
        self.stop(s)
        for comp in ("yes", "no"):
            shutil.copy(path + "." + comp, path)
            for binary in (REDIS, BIN):
                s2, r2 = self.start(binary)
                self.check_loaded(want, r2)
                self.stop(s2)

    def test_rdbchecksum_no(self):
        """rdbchecksum no: the file ends in a zero CRC, loads everywhere; a
        server with rdbchecksum no does not check a file's CRC at load."""
        s, r = self.start(BIN, ["--rdbchecksum", "no", "--rdbcompression", "no"])
        self.assertEqual(r.config_get("rdbchecksum")["rdbchecksum"], "no")
        r.set("a", "A" * 100)
        r.set("b", "2")
        self.assertTrue(r.save())
        self.stop(s)
        path = os.path.join(self.dir, "dump.rdb")
        with open(path, "rb") as f:
            self.assertEqual(f.read()[-8:], bytes(8))
        for binary in (REDIS, BIN):
            s2, r2 = self.start(binary)
            self.assertEqual(r2.mget("a", "b"), [b"A" * 100, b"2"])
            self.stop(s2)
        s, r = self.start(BIN, ["--rdbcompression", "no"])  # rdbchecksum: fixed at start
        with self.assertRaises(redis.ResponseError) as cm:
            r.config_set("rdbchecksum", "no")
        self.assertEqual(str(cm.exception), "CONFIG SET failed (possibly related to argument "
                         "'rdbchecksum') - can't set immutable config")
        self.assertTrue(r.save())
        self.stop(s)
        with open(path, "r+b") as f:  # a CRC again; one byte of a's value changed
            data = bytearray(f.read())
            self.assertNotEqual(data[-8:], bytes(8))
            data[data.index(b"A" * 100) + 50] = ord("B")
            f.seek(0)
            f.write(data)
        with self.assertRaises(RuntimeError):  # checked: the start fails
            self.start(BIN)
        s3, r3 = self.start(BIN, ["--rdbchecksum", "no"])  # unchecked: loads as it is
        self.assertEqual(r3.get("a"), b"A" * 50 + b"B" + b"A" * 49)

    def test_big_file_with_a_wrong_crc_stops_the_start(self):
        """A file of megabytes (cudis sums its CRC as it reads the file,
        window by window) with one byte of a value changed: every key
        parses, and the start still fails on the checksum; unchecked, it
        loads as it is."""
        s, r = self.start(BIN, ["--rdbcompression", "no"])
        for i in range(40):
            r.set("big:%d" % i, os.urandom(50000))
        r.set("mark", "M" * 1000)
        self.assertTrue(r.save())
        self.stop(s)
        path = os.path.join(self.dir, "dump.rdb")
        self.assertGreater(os.path.getsize(path), 1 << 20)
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            data[data.index(b"M" * 1000) + 500] = ord("N")
            f.seek(0)
            f.write(data)
        for binary in (REDIS, BIN):
            with self.assertRaises(RuntimeError):
                self.start(binary)
        s2, r2 = self.start(BIN, ["--rdbchecksum", "no"])
        self.assertEqual(r2.get("mark"), b"M" * 500 + b"N" + b"M" * 499)
        self.assertEqual(r2.dbsize(), 41)

    def test_corrupt_file_stops_the_start(self):
        s, r = self.start(BIN)
        r.set("a", "1" * 100)
        self.assertTrue(r.save())
        self.stop(s)
        path = os.path.join(self.dir, "dump.rdb")
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            data[len(data) // 2] ^= 0xff
            f.seek(0)
            f.write(data)
        with self.assertRaises(RuntimeError):
            self.start(BIN)


if __name__ == "__main__":
    if not os.path.exists(REDIS):  # scripts/deps.sh installs it: its absence is a failure
        print("no /usr/bin/redis-server to compare files with: install it with scripts/deps.sh")
        sys.exit(1)
    e2e_server.main(sys.modules[__name__])
