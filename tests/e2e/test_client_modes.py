#!/usr/bin/python3
"""test_client_modes.py - the CLIENT subcommands that change how a
connection is served, as Redis 7 has them: PAUSE (ALL holds every
command, WRITE only those that may write, until the timeout or UNPAUSE;
held commands then run in order), REPLY ON/OFF/SKIP, NO-EVICT, NO-TOUCH
(flags in CLIENT LIST), UNBLOCK, and their errors. Validated against
redis-server first (NO-TOUCH is Redis 7.2's: skipped by name there).
Run by ctest (label e2e):
  /usr/bin/python3 test_client_modes.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402
from test_tracking import Base, Err, info_field  # noqa: E402

BIN = None


class Pause(Base):
    def test_errors(self):
        a = self.conn()
        for args, want in [
                (("CLIENT", "PAUSE"), "ERR wrong number of arguments for 'client|pause' command"),
                (("CLIENT", "PAUSE", "x"), "ERR timeout is not an integer or out of range"),
                (("CLIENT", "PAUSE", "-1"), "ERR timeout is negative"),
                (("CLIENT", "PAUSE", "10", "FOO"), "ERR CLIENT PAUSE mode must be WRITE or ALL"),
                (("CLIENT", "UNPAUSE", "x"),
                 "ERR wrong number of arguments for 'client|unpause' command")]:
            self.assertEqual(a.call(*args), Err(want), args)

    def test_all_holds_every_command_until_the_timeout(self):
        a, b = self.conn(), self.conn()
        b.call("SET", "x", "1")
        t0 = time.time()
        self.assertEqual(a.call("CLIENT", "PAUSE", "600", "ALL"), "OK")
        a.send("GET", "x")
        b.send("PING")
        self.assertTrue(a.nothing_more(0.3))
        self.assertTrue(b.nothing_more(0.01))
        self.assertEqual(a.read(), b"1")
        self.assertEqual(b.read(), "PONG")
        self.assertGreaterEqual(time.time() - t0, 0.55)

    def test_all_held_commands_then_run_in_order(self):
        a, b, u = self.conn(), self.conn(), self.conn()
        t0 = time.time()
        self.assertEqual(a.call("CLIENT", "PAUSE", "700", "ALL"), "OK")
        b.send("SET", "k", "1")
        b.send("INCR", "k")
        b.send("GET", "k")
        u.send("CLIENT", "UNPAUSE")  # itself held: an ALL pause ends with its timeout
        a.send("CLIENT", "PAUSE", "0")  # held too
        self.assertTrue(b.nothing_more(0.4))
        self.assertTrue(u.nothing_more(0.01))
        self.assertEqual([b.read(), b.read(), b.read()], ["OK", 2, b"2"])
        self.assertGreaterEqual(time.time() - t0, 0.65)
        self.assertEqual(u.read(), "OK")
        self.assertEqual(a.read(), "OK")

    def test_write_holds_writes_only(self):
        a, b, u = self.conn(), self.conn(), self.conn()
        b.call("SET", "x", "1")
        self.assertEqual(a.call("CLIENT", "PAUSE", "100000", "WRITE"), "OK")
        t0 = time.time()
        self.assertEqual(b.call("GET", "x"), b"1")
        self.assertEqual(b.call("EXISTS", "x"), 1)
        self.assertLess(time.time() - t0, 1.0)
        b.send("SET", "x", "2")
        b.send("GET", "x")  # behind the held write
        u.send("PUBLISH", "ch", "m")
        u.send("EVAL", "return 1", "0")
        self.assertTrue(b.nothing_more(0.3))
        self.assertTrue(u.nothing_more(0.01))
        a.call("CLIENT", "UNPAUSE")
        self.assertEqual(b.read(), "OK")
        self.assertEqual(b.read(), b"2")
        self.assertEqual(u.read(), 0)
        self.assertEqual(u.read(), 1)

    def test_write_pause_holds_a_transaction_with_a_write(self):
        a, b = self.conn(), self.conn()
        self.assertEqual(a.call("CLIENT", "PAUSE", "100000", "WRITE"), "OK")
        self.assertEqual(b.call("MULTI"), "OK")
        self.assertEqual(b.call("GET", "x"), "QUEUED")
        self.assertEqual(b.call("EXEC"), [None])  # reads only: runs
        self.assertEqual(b.call("MULTI"), "OK")
        b.send("SET", "x", "1")
        self.assertTrue(b.nothing_more(0.3))
        a.call("CLIENT", "UNPAUSE")
        self.assertEqual(b.read(), "QUEUED")
        self.assertEqual(b.call("EXEC"), ["OK"])


class Modes(Base):
    def test_reply_off_on_skip(self):
        a = self.conn()
        self.assertEqual(a.call("CLIENT", "REPLY", "FOO"), Err("ERR syntax error"))
        a.send("CLIENT", "REPLY", "OFF")
        a.send("SET", "y", "1")
        a.send("GET", "y")
        a.send("GET", "nokey")
        a.send("NOSUCHCOMMAND")
        self.assertEqual(a.call("CLIENT", "REPLY", "ON"), "OK")
        self.assertEqual(a.call("GET", "y"), b"1")
        a.send("CLIENT", "REPLY", "SKIP")
        a.send("INCR", "y")
        self.assertEqual(a.call("GET", "y"), b"2")
        a.send("CLIENT", "REPLY", "OFF")
        a.send("CLIENT", "REPLY", "SKIP")
        a.send("GET", "y")
        self.assertEqual(a.call("CLIENT", "REPLY", "ON"), "OK")
        # pipelined, with a transaction in the middle
        a.send("CLIENT", "REPLY", "SKIP")
        a.send("MULTI")
        a.send("INCR", "y")
        a.send("EXEC")
        self.assertEqual(a.read(), "QUEUED")
        self.assertEqual(a.read(), [3])
        self.assertTrue(a.nothing_more())

    def test_reply_off_keeps_pushes(self):
        a, b = self.conn(3), self.conn()
        a.call("SUBSCRIBE", "ch")
        a.send("CLIENT", "REPLY", "OFF")
        a.send("PING")
        self.assertTrue(a.nothing_more())
        b.call("PUBLISH", "ch", "m")
        self.assertEqual(a.read(), ("push", [b"message", b"ch", b"m"]))

    def test_no_evict_no_touch_unblock(self):
        a = self.conn()
        self.assertEqual(a.call("CLIENT", "NO-EVICT", "maybe"), Err("ERR syntax error"))
        self.assertEqual(a.call("CLIENT", "NO-EVICT", "on"), "OK")
        self.assertIn(" flags=e ", a.call("CLIENT", "INFO").decode())
        self.assertEqual(a.call("CLIENT", "NO-EVICT", "off"), "OK")
        self.assertIn(" flags=N ", a.call("CLIENT", "INFO").decode())
        self.assertEqual(a.call("CLIENT", "UNBLOCK", "x"),
                         Err("ERR value is not an integer or out of range"))
        self.assertEqual(a.call("CLIENT", "UNBLOCK", "5", "FOO"),
                         Err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"))
        me = a.call("CLIENT", "ID")
        self.assertEqual(a.call("CLIENT", "UNBLOCK", me), 0)
        self.assertEqual(a.call("CLIENT", "UNBLOCK", "5", "ERROR"), 0)
        if "redis-server" in BIN:  # CLIENT NO-TOUCH came with Redis 7.2
            return
        self.assertEqual(a.call("CLIENT", "NO-TOUCH", "x"), Err("ERR syntax error"))
        self.assertEqual(a.call("CLIENT", "NO-TOUCH", "on"), "OK")
        self.assertIn(" flags=T ", a.call("CLIENT", "INFO").decode())
        a.call("SET", "k", "v")
        self.assertEqual(a.call("GET", "k"), b"v")
        self.assertEqual(a.call("CLIENT", "NO-TOUCH", "off"), "OK")

    def test_reset_ends_reply_off_keeps_no_evict(self):
        a = self.conn()
        a.call("CLIENT", "NO-EVICT", "on")
        a.send("CLIENT", "REPLY", "OFF")
        self.assertEqual(a.call("RESET"), "RESET")
        self.assertIn(" flags=e ", a.call("CLIENT", "INFO").decode())
        self.assertEqual(a.call("PING"), "PONG")


class Blocking(Base):
    """WAIT with no replica: 0 at once when none is asked for, else after the
    timeout (or never); CLIENT UNBLOCK answers it early."""

    def info(self, c, field):
        return info_field(c, "clients", field)

    def test_wait_times_out_and_holds_what_follows(self):
        a = self.conn()
        self.assertEqual(a.call("WAIT", "0", "0"), 0)
        t0 = time.time()
        a.send("WAIT", "1", "300")
        a.send("PING")
        self.assertEqual(a.read(), 0)
        self.assertEqual(a.read(), "PONG")
        self.assertGreaterEqual(time.time() - t0, 0.29)
        self.assertEqual(a.call("WAIT", "x", "0"), Err("ERR value is not an integer or out of range"))
        self.assertEqual(a.call("WAIT", "1", "-1"), Err("ERR timeout is negative"))
        self.assertEqual(a.call("MULTI"), "OK")
        self.assertEqual(a.call("WAIT", "1", "0"), "QUEUED")
        self.assertEqual(a.call("EXEC"), [0])  # inside a transaction: at once
        self.assertTrue(a.call("EVAL", "return redis.call('wait', 1, 0)", "0").startswith(
            "ERR This Redis command is not allowed from script"))

    def test_unblock(self):
        a, b = self.conn(), self.conn()
        aid = a.call("CLIENT", "ID")
        a.send("WAIT", "1", "0")
        a.send("PING")
        time.sleep(0.2)
        self.assertEqual(self.info(b, "blocked_clients"), 1)
        self.assertEqual(self.info(b, "clients_in_timeout_table"), 0)
        self.assertIn(" flags=b ", [l for l in b.call("CLIENT", "LIST").decode().split("\n")
                                    if l.startswith("id=%d " % aid)][0])
        self.assertTrue(a.nothing_more(0.2))
        self.assertEqual(b.call("CLIENT", "UNBLOCK", aid), 1)
        self.assertEqual(a.read(), 0)
        self.assertEqual(a.read(), "PONG")
        self.assertEqual(b.call("CLIENT", "UNBLOCK", aid), 0)  # not blocked now
        a.send("WAIT", "1", "5000")
        time.sleep(0.1)
        self.assertEqual(self.info(b, "clients_in_timeout_table"), 1)
        self.assertEqual(b.call("CLIENT", "UNBLOCK", aid, "ERROR"), 1)
        self.assertEqual(a.read(), Err("UNBLOCKED client unblocked via CLIENT UNBLOCK"))
        self.assertEqual(self.info(b, "blocked_clients"), 0)

    def test_a_blocked_client_that_hangs_up_is_freed(self):
        a, b = self.conn(), self.conn()
        a.send("WAIT", "1", "0")
        time.sleep(0.1)
        self.assertEqual(self.info(b, "blocked_clients"), 1)
        a.close()
        self.conns.remove(a)
        time.sleep(0.3)
        self.assertEqual(self.info(b, "blocked_clients"), 0)
        self.assertEqual(self.info(b, "connected_clients"), 1)


class OutputLimits(Base):
    def test_small_replies_pass_a_tiny_limit(self):
        """The limit counts what is queued beyond Redis's 16 KB reply buffer."""
        a, b = self.conn(), self.conn()
        b.call("SET", "big", "x" * 100000)
        self.assertEqual(b.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1 1 1"), "OK")
        self.assertEqual(a.call("PING"), "PONG")
        self.assertEqual(a.call("GET", "k"), None)
        self.assertEqual(a.call("SET", "k", "v" * 1000), "OK")
        self.assertEqual(len(a.call("GET", "k")), 1000)
        a.send("GET", "big")
        with self.assertRaises((EOFError, ConnectionResetError)):
            a.read()
        self.conns.remove(a)
        b.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")

    def test_recent_max_buffers(self):
        a, b = self.conn(), self.conn()
        b.call("SET", "big", "x" * 1000000)
        for _ in range(200):  # ~200 MB of replies, unread
            a.send("GET", "big")
        peak = 0
        for _ in range(30):
            time.sleep(0.1)
            peak = info_field(b, "clients", "client_recent_max_output_buffer")
            if peak > 1000000:
                break
        self.assertGreater(peak, 1000000)
        self.assertGreater(info_field(b, "clients", "client_recent_max_input_buffer"), 0)


class QueryBufferLimit(Base):
    """client-query-buffer-limit counts the bytes not yet parsed into
    arguments, as Redis's query buffer does (issue 12, finding 8): a 5 MB
    MGET of 5,000 keys passes a 1 MB limit (it was refused: the parsed
    arguments counted), a 3 MB argument does not."""

    def test_limit_counts_unparsed_bytes(self):
        a, b = self.conn(), self.conn()
        self.assertEqual(b.call("CONFIG", "SET", "client-query-buffer-limit", "1mb"), "OK")
        keys = ["k%0999d" % i for i in range(5000)]
        self.assertEqual(b.call("SET", keys[7], "seven"), "OK")
        got = a.call("MGET", *keys)
        self.assertEqual(len(got), 5000)
        self.assertEqual(got[7], b"seven")
        with self.assertRaises((EOFError, ConnectionResetError, BrokenPipeError)):
            a.send("SET", "big", "x" * (3 << 20))  # closed while sending, or after
            a.read()
        self.conns.remove(a)
        self.assertEqual(b.call("EXISTS", "big"), 0)
        b.call("CONFIG", "SET", "client-query-buffer-limit", "1gb")


class BigCommandMemory(Base):
    """One EXISTS of 2,000,000 keys: once the client is idle its grown
    buffers go back (issue 12, finding 8: idle RSS stayed 235 MB above the
    start; Redis keeps ~70 MB of it).

    The server runs with a small maxmemory: the 2M lookups probe the whole
    engine index, and where the kernel backs a read of a MADV_HUGEPAGE
    mapping with real huge pages (Linux 6.18 here) the index of a 1 GB
    budget (~200 MB, counted in used_memory and within maxmemory) becomes
    resident. That is the engine's budget, not a client's buffer."""

    def server_args(self):
        return ("--maxmemory", "32mb")

    def rss_mb(self):
        with open("/proc/%d/status" % self.srv.proc.pid) as f:
            return int(f.read().split("VmRSS:")[1].split()[0]) // 1024

    def test_idle_rss_after_a_huge_command(self):
        with open("/proc/%d/maps" % self.srv.proc.pid) as f:
            maps = f.read()
            if "libasan" in maps or "libtsan" in maps:
                self.skipTest("a sanitizer's allocator keeps what is freed: RSS says nothing")
        before = self.rss_mb()
        s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=60)
        n = 2000000
        parts = [b"*%d\r\n$6\r\nEXISTS\r\n" % (n + 1)]
        parts += [b"$%d\r\n%s\r\n" % (len(k), k) for k in (b"key:%d" % i for i in range(n))]
        s.sendall(b"".join(parts))
        got = b""
        while not got.endswith(b"\r\n"):
            got += s.recv(100)
        self.assertEqual(got, b":0\r\n")
        grown = 0
        for _ in range(40):  # the cron gives buffers back after 2 s idle
            time.sleep(0.25)
            grown = self.rss_mb() - before
            if grown < 100:
                break
        self.assertLess(grown, 100, "idle RSS %d MB above the start" % grown)
        a = self.conn()
        self.assertEqual(a.call("PING"), "PONG")
        s.sendall(b"*2\r\n$6\r\nEXISTS\r\n$1\r\nk\r\n")  # the trimmed client works
        self.assertEqual(s.recv(100), b":0\r\n")
        s.close()


class ScanWork(Base):
    """SCAN's COUNT bounds the keys a call visits, whether MATCH keeps them
    or not (issue 12, finding 8: SCAN 0 MATCH [ COUNT 1 walked the whole
    index and answered cursor 0; Redis answers after one bucket)."""

    def test_count_bounds_a_call_with_a_pattern(self):
        a = self.conn()
        for i in range(0, 1000, 100):
            a.call("MSET", *[x for j in range(i, i + 100) for x in ("k:%d" % j, "v")])
        cur, keys = a.call("SCAN", "0", "MATCH", "[", "COUNT", "1")
        self.assertNotEqual(cur, b"0", "one call walked everything")
        self.assertEqual(keys, [])
        want = {b"k:7", b"k:70"} | {b"k:7%d" % j for j in range(10)} | \
            {b"k:7%02d" % j for j in range(100)}
        got, calls, cur = set(), 0, b"0"
        while True:
            cur, keys = a.call("SCAN", cur, "MATCH", "k:7*", "COUNT", "10")
            got.update(keys)
            calls += 1
            if cur == b"0":
                break
        self.assertEqual(got, want)
        self.assertGreater(calls, 10)


class UnauthenticatedFlood(Base):
    """A client that has not authenticated may not queue replies: 200,000
    pipelined wrong AUTHs get the connection closed (issue 12, finding 8)."""

    def server_args(self):
        return ("--requirepass", "secret")

    def test_wrong_auth_flood_is_cut_off(self):
        s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
        got = 0
        try:
            s.sendall(b"*2\r\n$4\r\nAUTH\r\n$5\r\nwrong\r\n" * 200000)
            while True:
                d = s.recv(1 << 20)
                if not d:
                    break
                got += len(d)
        except (ConnectionResetError, BrokenPipeError):
            pass
        s.close()
        one = len(b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
        self.assertLess(got // one, 200000, "every wrong AUTH was answered")
        a = self.conn()
        self.assertEqual(a.call("AUTH", "secret"), "OK")
        self.assertEqual(a.call("PING"), "PONG")
        self.assertEqual(a.call("GET", "nokey"), None)


class BusyScript(Base):
    """A script past busy-reply-threshold: others get BUSY, SCRIPT KILL ends it."""

    SPIN = "local i = 0 while true do i = i + 1 end"

    def test_busy_then_script_kill(self):
        a, b = self.conn(), self.conn()
        self.assertEqual(b.call("CONFIG", "SET", "busy-reply-threshold", "100"), "OK")
        self.assertEqual(b.call("SCRIPT", "KILL"), Err("NOTBUSY No scripts in execution right now."))
        a.send("EVAL", self.SPIN, "0")
        time.sleep(0.3)
        busy = Err("BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                   "SHUTDOWN NOSAVE.")
        self.assertEqual(b.call("GET", "x"), busy)
        self.assertEqual(b.call("PING"), busy)
        self.assertEqual(b.call("MULTI"), "OK")
        self.assertEqual(b.call("DISCARD"), "OK")
        self.assertEqual(b.call("WATCH", "x"), "OK")  # allow_busy, as in Redis 7
        self.assertEqual(b.call("RESET"), "RESET")
        c = self.conn()  # a client that connects meanwhile is answered too
        self.assertEqual(c.call("SET", "x", "1"), busy)
        self.assertEqual(b.call("SCRIPT", "KILL"), "OK")
        err = a.read()
        self.assertIsInstance(err, Err)
        self.assertTrue(err.startswith("ERR Script killed by user with SCRIPT KILL... script: "), err)
        self.assertTrue(err.endswith(", on @user_script:1."), err)
        self.assertEqual(b.call("SCRIPT", "KILL"), Err("NOTBUSY No scripts in execution right now."))
        self.assertEqual(a.call("SET", "x", "2"), "OK")
        self.assertEqual(b.call("GET", "x"), b"2")

    def test_shutdown_nosave_stops_a_busy_script(self):
        a, b = self.conn(), self.conn()
        b.call("CONFIG", "SET", "busy-reply-threshold", "100")
        a.send("EVAL", self.SPIN, "0")
        time.sleep(0.3)
        b.send("SHUTDOWN", "NOSAVE")
        self.assertEqual(self.srv.proc.wait(5), 0)

    def test_sigterm_stops_a_busy_script(self):
        if "redis-server" in BIN:  # Redis 7.0 waits for SCRIPT KILL or SHUTDOWN NOSAVE
            return
        a, b = self.conn(), self.conn()
        b.call("CONFIG", "SET", "busy-reply-threshold", "100")
        a.send("EVAL", self.SPIN, "0")
        time.sleep(0.3)
        t0 = time.time()
        self.assertEqual(self.srv.stop(), 0)
        self.assertLess(time.time() - t0, 5)

    def test_a_script_that_wrote_cannot_be_killed(self):
        a, b = self.conn(), self.conn()
        b.call("CONFIG", "SET", "busy-reply-threshold", "100")
        # runs for ~0.6 s after its write, then returns
        a.send("EVAL", "redis.call('set', KEYS[1], 'v') local t = redis.call('time') "
                       "local s = t[1] * 1000000 + t[2] local n = 0 "
                       "repeat n = n + 1 until n % 1000 == 0 and "
                       "(function() local u = redis.call('time') "
                       "return u[1] * 1000000 + u[2] - s end)() > 600000 return 7", "1", "w")
        time.sleep(0.3)
        self.assertEqual(b.call("SCRIPT", "KILL"),
                         Err("UNKILLABLE Sorry the script already executed write commands against "
                             "the dataset. You can either wait the script termination or kill the "
                             "server in a hard way using the SHUTDOWN NOSAVE command."))
        self.assertEqual(a.read(), 7)
        self.assertEqual(b.call("GET", "w"), b"v")


class Memory(Base):
    FIELDS = ["peak.allocated", "total.allocated", "startup.allocated", "replication.backlog",
              "clients.slaves", "clients.normal", "cluster.links", "aof.buffer", "lua.caches",
              "functions.caches", "db.0", "overhead.total", "keys.count", "keys.bytes-per-key",
              "dataset.bytes", "dataset.percentage", "peak.percentage", "allocator.allocated",
              "allocator.active", "allocator.resident", "allocator-fragmentation.ratio",
              "allocator-fragmentation.bytes", "allocator-rss.ratio", "allocator-rss.bytes",
              "rss-overhead.ratio", "rss-overhead.bytes", "fragmentation", "fragmentation.bytes"]

    def test_stats_doctor_and_the_rest(self):
        a, b = self.conn(), self.conn(3)
        a.call("SET", "k", "v" * 100)
        a.call("EVAL", "return 1", "0")
        flat = a.call("MEMORY", "STATS")
        names = [flat[i].decode() for i in range(0, len(flat), 2)]
        self.assertEqual(names, self.FIELDS)
        st = dict(zip(names, flat[1::2]))
        self.assertEqual(st["keys.count"], 1)
        self.assertEqual(st["db.0"], [b"overhead.hashtable.main", st["db.0"][1],
                                      b"overhead.hashtable.expires", 0,
                                      b"overhead.hashtable.slot-to-keys", 0])
        self.assertGreater(st["total.allocated"], st["startup.allocated"])
        self.assertGreaterEqual(st["peak.allocated"], st["total.allocated"])
        self.assertGreaterEqual(st["clients.normal"], 0)
        m = b.call("MEMORY", "STATS")  # RESP3: a map, doubles
        self.assertIsInstance(m, dict)
        self.assertEqual(list(m.keys()), [f.encode() for f in self.FIELDS])
        self.assertEqual(a.call("MEMORY", "PURGE"), "OK")
        self.assertIsInstance(a.call("MEMORY", "MALLOC-STATS"), bytes)
        self.assertEqual(len(a.call("MEMORY", "HELP")), 14)
        self.assertEqual(a.call("MEMORY", "NOPE"),
                         Err("ERR unknown subcommand 'NOPE'. Try MEMORY HELP."))

    def test_doctor_on_an_empty_instance(self):
        a = self.conn()
        self.assertEqual(a.call("MEMORY", "DOCTOR"),
                         b"Hi Sam, this instance is empty or is using very little memory, my "
                         b"issues detector can't be used in these conditions. Please, leave for "
                         b"your mission on Earth and fill it with some data. The new Sam and I "
                         b"will be back to our programming as soon as I finished rebooting.\n")


if __name__ == "__main__":
    import test_tracking
    e2e_server.main(sys.modules[__name__], test_tracking)
