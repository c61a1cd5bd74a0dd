#!/usr/bin/python3
"""test_blocking.py - the blocking list commands (BLPOP BRPOP BLMPOP BLMOVE
BRPOPLPUSH) and sorted set pops (BZPOPMIN BZPOPMAX BZMPOP) as Redis 7.0
answers them: served at once when a key holds
elements (first non-empty key, WRONGTYPE), the argument errors, timeouts
(the null-array answer, RESP3's null), woken by a push from another
client, served in the order they blocked (also across io-threads), a
pipelined read after the push seeing the element gone, BLMOVE's push
waking the next waiter, a key of another type leaving the waiter blocked,
MULTI and Lua answering at once, CLIENT UNBLOCK, a waiter that hangs up
taking nothing, SWAPDB, INFO blocked_clients and CLIENT LIST's flag, and
the keyspace events in Redis's order. Run by ctest (label e2e):
  /usr/bin/python3 test_blocking.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_raw  # noqa: E402
import e2e_server  # noqa: E402
from e2e_raw import WRONGTYPE, Base  # noqa: E402
from test_tracking import Conn, Err  # noqa: E402

BIN = None


class Blocking(Base):
    def setUp(self):
        super().setUp()
        self.others = []

    def tearDown(self):
        for o in self.others:
            o.close()
        super().tearDown()

    def conn(self, proto=2):
        o = Conn(self.srv.port, proto)
        self.others.append(o)
        return o

    def blocked(self):
        info = self.c.call("INFO", "clients").decode()
        for line in info.split("\r\n"):
            if line.startswith("blocked_clients:"):
                return int(line.split(":")[1])
        self.fail("no blocked_clients in INFO")

    def wait_blocked(self, n):
        deadline = time.time() + 5
        while self.blocked() != n:
            self.assertLess(time.time(), deadline, "never %d blocked clients" % n)
            time.sleep(0.01)

    def block(self, *cmd, proto=2):
        """A new connection that sent cmd and is blocked in it."""
        o = self.conn(proto)
        before = self.blocked()
        o.send(*cmd)
        self.wait_blocked(before + 1)
        return o

    def test_served_at_once(self):
        c = self.c
        c.call("RPUSH", "b", "1", "2", "3")
        self.assertEqual(c.call("BLPOP", "a", "b", "0"), [b"b", b"1"])
        self.assertEqual(c.call("BRPOP", "a", "b", "0"), [b"b", b"3"])
        c.call("RPUSH", "a", "x")
        self.assertEqual(c.call("BLPOP", "a", "b", "1"), [b"a", b"x"], "the first non-empty key")
        self.assertEqual(c.call("EXISTS", "a"), 0, "the last element removed the key")
        c.call("RPUSH", "b", "4", "5", "6")
        self.assertEqual(c.call("BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "2"),
                         [b"b", [b"2", b"4"]])
        self.assertEqual(c.call("BLMPOP", "0", "2", "a", "b", "RIGHT"), [b"b", [b"6"]])
        self.assertEqual(c.call("BLMOVE", "b", "d", "LEFT", "RIGHT", "0"), b"5")
        self.assertEqual(c.call("BRPOPLPUSH", "d", "e", "0"), b"5")
        self.assertEqual(c.call("LRANGE", "e", "0", "-1"), [b"5"])
        self.assertEqual(c.call("EXISTS", "b", "d"), 0)
        c.call("RPUSH", "l", "a")
        self.assertEqual(c.call("BLMOVE", "l", "l", "LEFT", "RIGHT", "0"), b"a", "onto itself")

    def test_errors(self):
        c = self.c
        for t in ("abc", "1s", ""):
            self.assertEqual(c.call("BLPOP", "k", t), Err("ERR timeout is not a float or out of range"))
        for t in ("-1", "-0.5", "inf", "-inf", "1e20"):
            self.assertEqual(c.call("BLPOP", "k", t), Err("ERR timeout is negative"), t)
        self.assertEqual(c.call("BLPOP", "k"),
                         Err("ERR wrong number of arguments for 'blpop' command"))
        self.assertEqual(c.call("BLMOVE", "a", "b", "UP", "LEFT", "0"), Err("ERR syntax error"))
        self.assertEqual(c.call("BLMOVE", "a", "b", "LEFT", "LEFT", "x"),
                         Err("ERR timeout is not a float or out of range"))
        self.assertEqual(c.call("BLMPOP", "0", "0", "a", "LEFT"),
                         Err("ERR numkeys should be greater than 0"))
        self.assertEqual(c.call("BLMPOP", "0", "3", "a", "LEFT"), Err("ERR syntax error"))
        self.assertEqual(c.call("BLMPOP", "0", "1", "a", "UP"), Err("ERR syntax error"))
        self.assertEqual(c.call("BLMPOP", "0", "1", "a", "LEFT", "COUNT", "0"),
                         Err("ERR count should be greater than 0"))
        self.assertEqual(c.call("BLMPOP", "0", "1", "a", "LEFT", "COUNT", "1", "COUNT", "2"),
                         Err("ERR syntax error"))
        self.assertEqual(c.call("BLMPOP", "x", "1", "a", "LEFT"),
                         Err("ERR timeout is not a float or out of range"))
        c.call("SET", "s", "v")
        c.call("RPUSH", "l", "a")
        self.assertEqual(c.call("BLPOP", "s", "l", "0"), WRONGTYPE)
        self.assertEqual(c.call("BLPOP", "l", "s", "0"), [b"l", b"a"], "s is not reached")
        self.assertEqual(c.call("BLMPOP", "0", "1", "s", "LEFT"), WRONGTYPE)
        c.call("RPUSH", "l", "a")
        self.assertEqual(c.call("BLMOVE", "l", "s", "LEFT", "LEFT", "0"), WRONGTYPE)
        self.assertEqual(c.call("LRANGE", "l", "0", "-1"), [b"a"], "nothing moved")
        self.assertEqual(c.call("BLMOVE", "s", "l", "LEFT", "LEFT", "0"), WRONGTYPE)
        self.assertEqual(c.call("BRPOPLPUSH", "s", "l", "0"), WRONGTYPE)

    def test_timeouts(self):
        c = self.c
        for cmd in (["BLPOP", "a", "b", "0.2"], ["BRPOP", "a", "0.2"],
                    ["BLMPOP", "0.2", "1", "a", "LEFT"], ["BLMOVE", "a", "b", "LEFT", "LEFT", "0.2"],
                    ["BRPOPLPUSH", "a", "b", "0.2"]):
            t0 = time.time()
            c.send(*cmd)
            self.assertEqual(c._line(), b"*-1", cmd)  # Redis 7.0: a null array for each
            took = time.time() - t0
            self.assertGreaterEqual(took, 0.19, cmd)
            self.assertLess(took, 3, cmd)
        self.assertEqual(self.blocked(), 0)
        t0 = time.time()
        self.assertIsNone(c.call("BLPOP", "a", "0.0001"), "a fraction of a millisecond is one")
        self.assertLess(time.time() - t0, 3)
        r3 = self.conn(proto=3)
        r3.send("BLPOP", "a", "0.05")
        self.assertEqual(r3._line(), b"_")
        self.assertEqual(c.call("PING"), "PONG")

    def test_woken_by_a_push(self):
        a = self.block("BLPOP", "k", "0")
        self.assertEqual(self.c.call("RPUSH", "k", "x"), 1, "the push counts the element")
        self.assertEqual(a.read(), [b"k", b"x"])
        self.assertEqual(self.c.call("EXISTS", "k"), 0)
        self.assertEqual(self.blocked(), 0)
        b = self.block("BRPOP", "k1", "k2", "0")
        self.c.call("RPUSH", "k2", "1", "2")
        self.assertEqual(b.read(), [b"k2", b"2"])
        self.assertEqual(self.c.call("LRANGE", "k2", "0", "-1"), [b"1"])
        m = self.block("BLMPOP", "0", "2", "m1", "m2", "LEFT", "COUNT", "2")
        self.c.call("RPUSH", "m2", "1", "2", "3")
        self.assertEqual(m.read(), [b"m2", [b"1", b"2"]])
        self.assertEqual(a.call("PING"), "PONG", "a served client reads again")

    def test_served_in_order(self):
        w = [self.block("BLPOP", "k", "0") for _ in range(3)]
        self.assertEqual(self.c.call("RPUSH", "k", "1", "2"), 2)
        self.assertEqual(w[0].read(), [b"k", b"1"])
        self.assertEqual(w[1].read(), [b"k", b"2"])
        self.assertEqual(self.blocked(), 1, "the third still waits")
        self.c.call("LPUSH", "k", "3")
        self.assertEqual(w[2].read(), [b"k", b"3"])

    def test_pipelined_read_after_the_push(self):
        a = self.block("BLPOP", "k", "0")
        self.c.send("RPUSH", "k", "x")
        self.c.send("LLEN", "k")
        self.assertEqual(self.c.read(), 1)
        self.assertEqual(self.c.read(), 0, "the waiter took it before LLEN ran")
        self.assertEqual(a.read(), [b"k", b"x"])

    def test_pipeline_behind_a_block(self):
        a = self.conn()
        a.send("BLPOP", "k", "0")
        a.send("PING")
        self.wait_blocked(1)
        self.c.call("RPUSH", "k", "x")
        self.assertEqual(a.read(), [b"k", b"x"])
        self.assertEqual(a.read(), "PONG", "what followed the block runs after it")

    def test_blmove_chain(self):
        a = self.block("BLMOVE", "src", "mid", "RIGHT", "LEFT", "0")
        b = self.block("BLPOP", "mid", "0")
        self.c.call("RPUSH", "src", "v")
        self.assertEqual(a.read(), b"v")
        self.assertEqual(b.read(), [b"mid", b"v"], "BLMOVE's push woke the next")
        self.assertEqual(self.c.call("EXISTS", "src", "mid"), 0)
        r = self.block("BRPOPLPUSH", "s2", "d2", "0")
        self.c.call("RPUSH", "s2", "1", "2")
        self.assertEqual(r.read(), b"2")
        self.assertEqual(self.c.call("LRANGE", "d2", "0", "-1"), [b"2"])
        self.assertEqual(self.c.call("LRANGE", "s2", "0", "-1"), [b"1"])

    def test_blmove_to_a_wrong_type(self):
        self.c.call("SET", "dst", "str")
        a = self.block("BLMOVE", "src", "dst", "LEFT", "LEFT", "0")
        self.c.call("RPUSH", "src", "v")
        self.assertEqual(a.read(), WRONGTYPE)
        self.assertEqual(self.c.call("LRANGE", "src", "0", "-1"), [b"v"], "nothing moved")

    def test_another_type_keeps_it_waiting(self):
        a = self.block("BLPOP", "k", "0")
        self.c.call("SET", "k", "str")
        self.c.call("PING")
        self.assertEqual(self.blocked(), 1)
        self.c.call("DEL", "k")
        self.c.call("RPUSH", "k", "x")
        self.assertEqual(a.read(), [b"k", b"x"])

    def test_multi_and_lua_answer_at_once(self):
        c = self.c
        c.call("MULTI")
        c.call("BLPOP", "k", "0")
        c.call("BLMOVE", "k", "d", "LEFT", "LEFT", "0")
        c.call("RPUSH", "k", "x")
        c.call("BLPOP", "k", "0")
        self.assertEqual(c.call("EXEC"), [None, None, 1, [b"k", b"x"]])
        lua = "return redis.call('blmpop', 0, 1, KEYS[1], 'right')"
        self.assertIsNone(c.call("EVAL", lua, "1", "k"), "BLMPOP is the one scripts may call")
        c.call("RPUSH", "k", "y")
        self.assertEqual(c.call("EVAL", lua, "1", "k"), [b"k", [b"y"]])
        err = c.call("EVAL", "return redis.call('blpop', KEYS[1], 0)", "1", "k")
        self.assertTrue(str(err).startswith("ERR This Redis command is not allowed from script"), err)
        self.assertEqual(self.blocked(), 0)

    def test_client_unblock(self):
        a = self.conn()
        aid = a.call("CLIENT", "ID")
        a.send("BLPOP", "k", "0")
        self.wait_blocked(1)
        self.assertIn("flags=b", self.c.call("CLIENT", "LIST", "ID", str(aid)).decode())
        self.assertEqual(self.c.call("CLIENT", "UNBLOCK", str(aid)), 1)
        a.send("PING")  # the reply to BLPOP comes first
        self.assertEqual(a._line(), b"*-1")
        self.assertEqual(a.read(), "PONG")
        self.assertEqual(self.c.call("CLIENT", "UNBLOCK", str(aid)), 0, "not blocked now")
        a.send("BLMOVE", "k", "d", "LEFT", "LEFT", "0")
        self.wait_blocked(1)
        self.assertEqual(self.c.call("CLIENT", "UNBLOCK", str(aid), "ERROR"), 1)
        self.assertEqual(a.read(), Err("UNBLOCKED client unblocked via CLIENT UNBLOCK"))
        self.c.call("RPUSH", "k", "x")
        self.assertEqual(self.c.call("LLEN", "k"), 1, "an unblocked client takes nothing")

    def test_hang_up_takes_nothing(self):
        a = self.block("BLPOP", "k", "0")
        b = self.block("BLPOP", "k", "0")
        a.close()
        self.others.remove(a)
        self.wait_blocked(1)
        self.c.call("RPUSH", "k", "x", "y")
        self.assertEqual(b.read(), [b"k", b"x"])
        self.assertEqual(self.c.call("LRANGE", "k", "0", "-1"), [b"y"])
        self.assertEqual(self.blocked(), 0)
        # and one that hangs up while its key is written
        self.c.call("DEL", "k")
        a2 = self.block("BLPOP", "k", "0")
        a2.s.shutdown(2)
        self.c.call("RPUSH", "k", "z")
        self.wait_blocked(0)
        self.assertIn(self.c.call("LLEN", "k"), (0, 1))  # served before the hang-up was seen, or not
        self.assertEqual(self.c.call("PING"), "PONG")

    def test_swapdb(self):
        a = self.block("BLPOP", "k", "0")
        self.c.call("SELECT", "1")
        self.c.call("RPUSH", "k", "from1")
        self.assertEqual(self.c.call("SWAPDB", "0", "1"), "OK")
        self.assertEqual(a.read(), [b"k", b"from1"], "the waiter follows database 0")
        self.assertEqual(self.c.call("EXISTS", "k"), 0)

    def test_keyspace_events(self):
        c = self.c
        c.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
        sub = self.conn()
        sub.call("SUBSCRIBE", "__keyspace@0__:k", "__keyspace@0__:d")
        sub.read()  # the second subscription's answer
        a = self.block("BLMOVE", "k", "d", "LEFT", "RIGHT", "0")
        c.call("LPUSH", "k", "x")
        self.assertEqual(a.read(), b"x")
        got = [sub.read()[2] for _ in range(4)]
        self.assertEqual(got, [b"lpush", b"rpush", b"lpop", b"del"])

    def test_many_waiters_many_keys(self):
        ws = []
        for i in range(20):
            ws.append(self.block("BLPOP", "q%d" % (i % 4), "common", "0"))
        for i in range(20):
            self.c.call("RPUSH", "common", "c%d" % i)
        for i, w in enumerate(ws):
            self.assertEqual(w.read(), [b"common", b"c%d" % i])
        self.assertEqual(self.blocked(), 0)


    def test_sorted_set_pops(self):
        a = self.block("BZPOPMIN", "z1", "z2", "0")
        self.c.call("ZADD", "z2", "2", "b", "1", "a")
        self.assertEqual(a.read(), [b"z2", b"a", b"1"])
        self.assertEqual(self.conn().call("BZMPOP", "0", "1", "z2", "MAX", "COUNT", "5"),
                         [b"z2", [[b"b", b"2"]]], "served at once")
        self.assertEqual(self.blocked(), 0)
        m = self.block("BZPOPMAX", "z3", "0")
        self.c.call("RPUSH", "z3", "x")  # a list there: it waits on
        self.c.call("PING")
        self.assertEqual(self.blocked(), 1)
        self.c.call("DEL", "z3")
        self.c.call("ZADD", "z3", "5", "e", "7", "f")
        self.assertEqual(m.read(), [b"z3", b"f", b"7"])
        self.assertEqual(self.c.call("ZRANGE", "z3", "0", "-1"), [b"e"])
        r3 = self.block("BZPOPMIN", "z4", "0", proto=3)
        self.c.call("ZADD", "z4", "1.5", "x")
        self.assertEqual(r3.read(), [b"z4", b"x", 1.5])
        t = self.conn()
        t.send("BZPOPMIN", "z9", "0.1")
        self.assertEqual(t._line(), b"*-1")

    def test_producers_and_consumers(self):
        """Every element pushed is popped once, by some waiter (threads)."""
        import threading
        got, lock, stop = [], threading.Lock(), threading.Event()

        def consume(conn):
            while not stop.is_set():
                r = conn.call("BLPOP", "q1", "q2", "0.05")
                if r is not None:
                    with lock:
                        got.append(r[1])

        def produce(conn, p):
            for i in range(300):
                conn.call("RPUSH", "q%d" % (1 + i % 2), "p%d-%d" % (p, i))

        cs = [threading.Thread(target=consume, args=(self.conn(),)) for _ in range(6)]
        ps = [threading.Thread(target=produce, args=(self.conn(), p)) for p in range(3)]
        for t in cs + ps:
            t.start()
        for t in ps:
            t.join()
        deadline = time.time() + 20
        while time.time() < deadline:
            with lock:
                if len(got) >= 900:
                    break
            time.sleep(0.02)
        stop.set()
        for t in cs:
            t.join()
        want = sorted(b"p%d-%d" % (p, i) for p in range(3) for i in range(300))
        self.assertEqual(sorted(got), want)
        self.assertEqual(self.c.call("EXISTS", "q1", "q2"), 0)


class BlockingThreads(Blocking):
    """The same with io-threads: waiters on several loops, one queue."""
    extra = ("--io-threads", "4")


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__], e2e_raw)
