#!/usr/bin/python3
"""test_sort.py - SORT and SORT_RO as Redis 7.0 answers them: numeric and
ALPHA order over lists, sets and sorted sets, ASC/DESC, LIMIT's edge
cases, BY a key pattern or a hash field (missing weights, BY nosort in
the native order, reversed by DESC), GET patterns, '#' and hash fields
(missing ones nil), STORE (a list, "" for a missing GET, an empty result
deleting the destination), the errors (syntax, WRONGTYPE, scores that are
no numbers, SORT_RO's STORE), and a seeded random stream of SORT commands
whose every reply must equal redis-server's. Run by ctest (label e2e):
  /usr/bin/python3 test_sort.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_raw  # noqa: E402
import e2e_server  # noqa: E402
from e2e_raw import WRONGTYPE, Base, BesideRedis  # noqa: E402
from test_tracking import Err  # noqa: E402

BIN = None


class Sort(Base):
    def test_orders(self):
        c = self.c
        c.call("RPUSH", "l", "3", "1", "2", "10")
        self.assertEqual(c.call("SORT", "l"), [b"1", b"2", b"3", b"10"])
        self.assertEqual(c.call("SORT", "l", "DESC"), [b"10", b"3", b"2", b"1"])
        self.assertEqual(c.call("SORT", "l", "ALPHA"), [b"1", b"10", b"2", b"3"])
        self.assertEqual(c.call("SORT", "l", "LIMIT", "1", "2"), [b"2", b"3"])
        self.assertEqual(c.call("SORT", "l", "LIMIT", "-5", "2"), [b"1", b"2"])
        self.assertEqual(c.call("SORT", "l", "LIMIT", "2", "-1"), [b"3", b"10"])
        self.assertEqual(c.call("SORT", "l", "LIMIT", "9", "2"), [])
        self.assertEqual(c.call("SORT", "l", "LIMIT", "0", "0"), [])
        self.assertEqual(c.call("SORT_RO", "l", "DESC", "LIMIT", "0", "1"), [b"10"])
        c.call("SADD", "s", "b", "a", "c")
        self.assertEqual(c.call("SORT", "s", "ALPHA"), [b"a", b"b", b"c"])
        self.assertEqual(c.call("SORT", "s"), Err("ERR One or more scores can't be converted into double"))
        c.call("ZADD", "z", "3", "x", "1", "y", "2", "w")
        self.assertEqual(c.call("SORT", "z", "ALPHA", "DESC"), [b"y", b"x", b"w"])
        self.assertEqual(c.call("SORT", "z", "BY", "nosort"), [b"y", b"w", b"x"], "the set's order")
        self.assertEqual(c.call("SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "2"), [b"x", b"w"])
        self.assertEqual(c.call("SORT", "l", "BY", "nosort", "DESC"), [b"10", b"2", b"1", b"3"])
        self.assertEqual(c.call("SORT", "nokey"), [])
        c.call("RPUSH", "eq", "1.0", "1", "01", "-inf", " 2", "")
        self.assertEqual(c.call("SORT", "eq"), [b"-inf", b"", b"01", b"1", b"1.0", b" 2"],
                         "ties by bytes; a leading space and an empty string are numbers")

    def test_by_and_get(self):
        c = self.c
        c.call("RPUSH", "ids", "1", "2", "3", "4")
        c.call("MSET", "w_1", "40", "w_2", "10", "w_3", "30", "name_1", "one", "name_3", "three")
        c.call("HSET", "h_1", "age", "9", "n", "a")
        c.call("HSET", "h_2", "age", "7")
        c.call("HSET", "h_4", "age", "8")
        self.assertEqual(c.call("SORT", "ids", "BY", "w_*"), [b"4", b"2", b"3", b"1"],
                         "a missing weight is 0")
        self.assertEqual(c.call("SORT", "ids", "BY", "w_*", "GET", "#", "GET", "name_*"),
                         [b"4", None, b"2", None, b"3", b"three", b"1", b"one"])
        self.assertEqual(c.call("SORT", "ids", "BY", "h_*->age", "GET", "h_*->n"),
                         [None, None, None, b"a"])
        self.assertEqual(c.call("SORT", "ids", "BY", "h_*->age", "DESC"), [b"1", b"4", b"2", b"3"])
        self.assertEqual(c.call("SORT", "ids", "BY", "name_*", "ALPHA"), [b"2", b"4", b"1", b"3"])
        self.assertEqual(c.call("SORT", "ids", "GET", "nostar"), [None, None, None, None])
        self.assertEqual(c.call("SORT", "ids", "GET", "h_*->"), [None, None, None, None],
                         "'->' with no field is a key name")
        c.call("SET", "bad_1", "x")
        self.assertEqual(c.call("SORT", "ids", "BY", "bad_*"),
                         Err("ERR One or more scores can't be converted into double"))
        self.assertEqual(c.call("SORT", "ids", "BY", "ids"), [b"1", b"2", b"3", b"4"], "nosort")

    def test_store(self):
        c = self.c
        c.call("RPUSH", "l", "3", "1", "2")
        c.call("SET", "dst", "v")
        c.call("EXPIRE", "dst", "100")
        self.assertEqual(c.call("SORT", "l", "STORE", "dst"), 3)
        self.assertEqual(c.call("LRANGE", "dst", "0", "-1"), [b"1", b"2", b"3"])
        self.assertEqual(c.call("TTL", "dst"), -1, "STORE replaces the key")
        self.assertEqual(c.call("SORT", "l", "GET", "#", "GET", "nope_*", "STORE", "dst"), 6)
        self.assertEqual(c.call("LRANGE", "dst", "0", "-1"), [b"1", b"", b"2", b"", b"3", b""])
        self.assertEqual(c.call("SORT", "nokey", "STORE", "dst"), 0)
        self.assertEqual(c.call("EXISTS", "dst"), 0, "an empty result deletes it")
        c.call("SADD", "s", "b", "a")
        self.assertEqual(c.call("SORT", "s", "BY", "nosort", "STORE", "d2"), 2)
        self.assertEqual(c.call("LRANGE", "d2", "0", "-1"), [b"a", b"b"], "STORE sorts a set")
        self.assertEqual(c.call("SORT_RO", "l", "STORE", "dst"), Err("ERR syntax error"))

    def test_errors(self):
        c = self.c
        c.call("RPUSH", "l", "1")
        c.call("SET", "str", "v")
        c.call("HSET", "h", "f", "v")
        self.assertEqual(c.call("SORT", "str"), WRONGTYPE)
        self.assertEqual(c.call("SORT", "h"), WRONGTYPE)
        self.assertEqual(c.call("SORT", "l", "FOO"), Err("ERR syntax error"))
        self.assertEqual(c.call("SORT", "l", "LIMIT", "1"), Err("ERR syntax error"))
        self.assertEqual(c.call("SORT", "l", "LIMIT", "a", "1"),
                         Err("ERR value is not an integer or out of range"))
        self.assertEqual(c.call("SORT", "str", "FOO"), Err("ERR syntax error"), "syntax first")
        self.assertEqual(c.call("SORT", "l", "BY"), Err("ERR syntax error"))
        self.assertEqual(c.call("SORT"), Err("ERR wrong number of arguments for 'sort' command"))


class SortBesideRedis(BesideRedis):
    def test_random_stream(self):
        rng = random.Random(4242)
        vals = ["1", "2", "10", "-3", "2.5", "a", "b", "", "x1"]
        for conn in (self.c, self.rc):
            conn.call("RPUSH", "nums", "5", "3", "9", "1", "7", "3")
            conn.call("RPUSH", "mixed", *vals)
            conn.call("ZADD", "z", "1", "c", "2", "a", "3", "b")
            for i, v in enumerate(["5", "3", "9", "1", "7"]):
                conn.call("SET", "w_" + v, str((i * 7) % 5))
                conn.call("HSET", "h_" + v, "f", str(i % 3), "g", "v" + str(i))
        for step in range(600):
            k = rng.choice(["nums", "mixed", "z", "nokey"])
            cmd = [rng.choice(["SORT", "SORT_RO"]), k]
            alpha = rng.random() < 0.5
            if rng.random() < 0.4:
                if alpha:
                    # ALPHA BY breaks no ties (Redis's order of equal weights is its
                    # hash table's): only distinct weights of distinct elements
                    cmd[1] = k = "nums"
                    cmd += ["BY", rng.choice(["w_*", "h_*->g", "nosort"])]
                else:
                    cmd += ["BY", rng.choice(["w_*", "h_*->f", "nosort", "h_*->g", "none_*"])]
            if alpha:
                cmd += ["ALPHA"]
            if rng.random() < 0.4:
                cmd += [rng.choice(["ASC", "DESC"])]
            if rng.random() < 0.4:
                cmd += ["LIMIT", str(rng.randrange(-2, 8)), str(rng.randrange(-2, 5))]
            for _ in range(rng.randrange(0, 3)):
                cmd += ["GET", rng.choice(["#", "w_*", "h_*->g", "h_*->nope"])]
            if cmd[0] == "SORT" and rng.random() < 0.3:
                cmd += ["STORE", "dst"]
            got, want = self.c.call(*cmd), self.rc.call(*cmd)
            self.assertEqual(got, want, "step %d: %r" % (step, cmd))
            if "STORE" in cmd:
                self.assertEqual(self.c.call("LRANGE", "dst", "0", "-1"),
                                 self.rc.call("LRANGE", "dst", "0", "-1"), "step %d" % step)


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__], e2e_raw)
