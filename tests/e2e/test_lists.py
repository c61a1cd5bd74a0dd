#!/usr/bin/python3
"""test_lists.py - the list commands (not the blocking ones) as Redis 7.0
answers them: pushes and pops at both ends with counts, ranges and
indexes, LPOS's options, LSET/LINSERT/LREM/LTRIM, LMOVE/RPOPLPUSH/LMPOP,
the errors (WRONGTYPE both ways, arity, ranges), the last element removing
the key, a TTL kept by every write, keyspace events, MULTI and Lua, the
generic commands (TYPE, OBJECT ENCODING, SCAN TYPE, DUMP/RESTORE), and,
beside Debian's redis-server: DUMP payloads both ways and a seeded random
stream of list commands whose every reply must equal Redis's. Run by ctest
(label e2e):
  /usr/bin/python3 test_lists.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import random
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_raw  # noqa: E402
import e2e_server  # noqa: E402
from e2e_raw import WRONGTYPE, Base, BesideRedis  # noqa: E402,F401
from test_tracking import Conn, Err  # noqa: E402

BIN = None


class Lists(Base):
    def test_push_pop_range(self):
        c = self.c
        self.assertEqual(c.call("RPUSH", "l", "a", "b", "c"), 3)
        self.assertEqual(c.call("LPUSH", "l", "y", "z"), 5)
        self.assertEqual(c.call("LRANGE", "l", "0", "-1"), [b"z", b"y", b"a", b"b", b"c"])
        self.assertEqual(c.call("LRANGE", "l", "-2", "100"), [b"b", b"c"])
        self.assertEqual(c.call("LRANGE", "l", "3", "1"), [])
        self.assertEqual(c.call("LRANGE", "l", "-100", "0"), [b"z"])
        self.assertEqual(c.call("LRANGE", "nokey", "0", "-1"), [])
        self.assertEqual(c.call("LLEN", "l"), 5)
        self.assertEqual(c.call("LLEN", "nokey"), 0)
        self.assertEqual(c.call("LINDEX", "l", "1"), b"y")
        self.assertEqual(c.call("LINDEX", "l", "-1"), b"c")
        self.assertIsNone(c.call("LINDEX", "l", "5"))
        self.assertEqual(c.call("LPOP", "l"), b"z")
        self.assertEqual(c.call("RPOP", "l"), b"c")
        self.assertEqual(c.call("LPOP", "l", "2"), [b"y", b"a"])
        self.assertEqual(c.call("RPUSH", "l", "d", "e"), 3)
        self.assertEqual(c.call("RPOP", "l", "2"), [b"e", b"d"])
        self.assertEqual(c.call("LPOP", "l", "0"), [])
        self.assertEqual(c.call("RPOP", "l", "10"), [b"b"])
        self.assertEqual(c.call("EXISTS", "l"), 0, "the last element removed the key")
        self.assertIsNone(c.call("LPOP", "l"))
        self.assertIsNone(c.call("LPOP", "l", "2"))
        self.assertIsNone(c.call("LPOP", "l", "0"))
        self.assertEqual(c.call("LPUSHX", "l", "a"), 0)
        self.assertEqual(c.call("RPUSHX", "l", "a"), 0)
        self.assertEqual(c.call("EXISTS", "l"), 0)
        c.call("RPUSH", "l", "m")
        self.assertEqual(c.call("LPUSHX", "l", "a", "b"), 3)
        self.assertEqual(c.call("RPUSHX", "l", "z"), 4)
        self.assertEqual(c.call("LRANGE", "l", "0", "-1"), [b"b", b"a", b"m", b"z"])
        self.assertEqual(c.call("RPUSH", "bin", b"\x00\r\n", ""), 2)
        self.assertEqual(c.call("LRANGE", "bin", "0", "-1"), [b"\x00\r\n", b""])

    def test_edits(self):
        c = self.c
        c.call("RPUSH", "l", "a", "b", "a", "c", "a")
        self.assertEqual(c.call("LSET", "l", "1", "B"), "OK")
        self.assertEqual(c.call("LSET", "l", "-1", "A"), "OK")
        self.assertEqual(c.call("LSET", "l", "9", "x"), Err("ERR index out of range"))
        self.assertEqual(c.call("LSET", "nokey", "0", "x"), Err("ERR no such key"))
        self.assertEqual(c.call("LINSERT", "l", "BEFORE", "c", "X"), 6)
        self.assertEqual(c.call("LINSERT", "l", "after", "A", "Y"), 7)
        self.assertEqual(c.call("LINSERT", "l", "after", "zz", "Y"), -1)
        self.assertEqual(c.call("LINSERT", "nokey", "after", "a", "Y"), 0)
        self.assertEqual(c.call("LINSERT", "l", "middle", "a", "Y"), Err("ERR syntax error"))
        self.assertEqual(c.call("LRANGE", "l", "0", "-1"),
                         [b"a", b"B", b"a", b"X", b"c", b"A", b"Y"])
        c.call("RPUSH", "r", "x", "1", "x", "2", "x", "3", "x")
        self.assertEqual(c.call("LREM", "r", "2", "x"), 2)
        self.assertEqual(c.call("LRANGE", "r", "0", "-1"), [b"1", b"2", b"x", b"3", b"x"])
        self.assertEqual(c.call("LREM", "r", "-1", "x"), 1)
        self.assertEqual(c.call("LRANGE", "r", "0", "-1"), [b"1", b"2", b"x", b"3"])
        self.assertEqual(c.call("LREM", "r", "0", "zz"), 0)
        self.assertEqual(c.call("LREM", "nokey", "0", "zz"), 0)
        self.assertEqual(c.call("LTRIM", "r", "1", "-2"), "OK")
        self.assertEqual(c.call("LRANGE", "r", "0", "-1"), [b"2", b"x"])
        self.assertEqual(c.call("LTRIM", "r", "5", "10"), "OK")
        self.assertEqual(c.call("EXISTS", "r"), 0, "an empty trim removes the key")
        self.assertEqual(c.call("LTRIM", "nokey", "0", "1"), "OK")
        c.call("RPUSH", "p", "a", "b", "c", "b", "b", "d")
        self.assertEqual(c.call("LPOS", "p", "b"), 1)
        self.assertEqual(c.call("LPOS", "p", "b", "RANK", "2"), 3)
        self.assertEqual(c.call("LPOS", "p", "b", "RANK", "-1"), 4)
        self.assertEqual(c.call("LPOS", "p", "b", "COUNT", "0"), [1, 3, 4])
        self.assertEqual(c.call("LPOS", "p", "b", "COUNT", "2", "RANK", "-1"), [4, 3])
        self.assertEqual(c.call("LPOS", "p", "b", "COUNT", "0", "MAXLEN", "4"), [1, 3])
        self.assertIsNone(c.call("LPOS", "p", "zz"))
        self.assertEqual(c.call("LPOS", "p", "zz", "COUNT", "1"), [])
        self.assertIsNone(c.call("LPOS", "nokey", "a"))
        self.assertEqual(c.call("LPOS", "p", "b", "RANK", "0"),
                         Err("ERR RANK can't be zero: use 1 to start from the first match, 2 from "
                             "the second ... or use negative to start from the end of the list"))
        self.assertEqual(c.call("LPOS", "p", "b", "COUNT", "-1"), Err("ERR COUNT can't be negative"))
        self.assertEqual(c.call("LPOS", "p", "b", "MAXLEN", "-1"),
                         Err("ERR MAXLEN can't be negative"))
        self.assertEqual(c.call("LPOS", "p", "b", "FOO", "1"), Err("ERR syntax error"))

    def test_moves(self):
        c = self.c
        c.call("RPUSH", "a", "1", "2", "3")
        self.assertEqual(c.call("LMOVE", "a", "b", "LEFT", "RIGHT"), b"1")
        self.assertEqual(c.call("LMOVE", "a", "b", "RIGHT", "LEFT"), b"3")
        self.assertEqual(c.call("RPOPLPUSH", "a", "a"), b"2")
        self.assertEqual(c.call("RPOPLPUSH", "a", "b"), b"2")
        self.assertEqual(c.call("EXISTS", "a"), 0)
        self.assertIsNone(c.call("RPOPLPUSH", "a", "b"))
        self.assertEqual(c.call("LRANGE", "b", "0", "-1"), [b"2", b"3", b"1"])
        self.assertEqual(c.call("LMOVE", "b", "b", "LEFT", "RIGHT"), b"2")
        self.assertEqual(c.call("LRANGE", "b", "0", "-1"), [b"3", b"1", b"2"])
        self.assertEqual(c.call("LMOVE", "b", "c", "UP", "LEFT"), Err("ERR syntax error"))
        self.assertEqual(c.call("LMPOP", "2", "nokey", "b", "LEFT", "COUNT", "2"),
                         [b"b", [b"3", b"1"]])
        self.assertEqual(c.call("LMPOP", "1", "b", "RIGHT"), [b"b", [b"2"]])
        self.assertIsNone(c.call("LMPOP", "2", "b", "nokey", "LEFT"))
        self.assertEqual(c.call("LMPOP", "0", "b", "LEFT"),
                         Err("ERR numkeys should be greater than 0"))
        self.assertEqual(c.call("LMPOP", "1", "b", "LEFT", "COUNT", "0"),
                         Err("ERR count should be greater than 0"))
        self.assertEqual(c.call("LMPOP", "1", "b", "SIDE"), Err("ERR syntax error"))
        self.assertEqual(c.call("LMPOP", "3", "b", "LEFT"), Err("ERR syntax error"))
        c.call("SET", "s", "v")
        c.call("RPUSH", "l", "x")
        self.assertEqual(c.call("LMOVE", "l", "s", "LEFT", "LEFT"), WRONGTYPE)
        self.assertEqual(c.call("LMOVE", "s", "l", "LEFT", "LEFT"), WRONGTYPE)
        self.assertIsNone(c.call("LMOVE", "nokey", "s", "LEFT", "LEFT"), "a missing source first")
        self.assertEqual(c.call("LMPOP", "2", "s", "l", "LEFT"), WRONGTYPE)
        self.assertEqual(c.call("LLEN", "l"), 1, "the failed moves moved nothing")

    def test_errors_ttl_events(self):
        c = self.c
        for cmd in (("LPUSH", "l"), ("RPUSH", "l"), ("LLEN",), ("LRANGE", "l", "0"),
                    ("LINDEX", "l"), ("LSET", "l", "0"), ("LREM", "l", "0"), ("LMOVE", "a", "b"),
                    ("LPOP", "l", "1", "2")):
            self.assertEqual(c.call(*cmd),
                             Err("ERR wrong number of arguments for '%s' command" % cmd[0].lower()),
                             cmd)
        self.assertEqual(c.call("LPOP", "l", "-1"), Err("ERR value is out of range, must be positive"))
        self.assertEqual(c.call("LPOP", "l", "x"), Err("ERR value is out of range, must be positive"))
        self.assertEqual(c.call("LRANGE", "l", "a", "1"),
                         Err("ERR value is not an integer or out of range"))
        c.call("SET", "s", "v")
        for cmd in (("LPUSH", "s", "a"), ("RPOP", "s"), ("LLEN", "s"), ("LRANGE", "s", "0", "1"),
                    ("LINDEX", "s", "0"), ("LSET", "s", "0", "a"), ("LREM", "s", "0", "a"),
                    ("LTRIM", "s", "0", "1"), ("LPOS", "s", "a"), ("LINSERT", "s", "after", "a",
                                                                   "b"), ("LPUSHX", "s", "a")):
            self.assertEqual(c.call(*cmd), WRONGTYPE, cmd)
        c.call("RPUSH", "l", "a")
        for cmd in (("GET", "l"), ("HGET", "l", "a"), ("SCARD", "l"), ("APPEND", "l", "x")):
            self.assertEqual(c.call(*cmd), WRONGTYPE, cmd)
        c.call("PEXPIRE", "l", "100")
        c.call("RPUSH", "l", "b")
        c.call("LSET", "l", "0", "A")
        c.call("LINSERT", "l", "after", "A", "x")
        self.assertGreater(c.call("PTTL", "l"), 0, "writes keep the TTL")
        time.sleep(0.25)
        self.assertEqual(c.call("LLEN", "l"), 0)
        c.call("CONFIG", "SET", "notify-keyspace-events", "KElg")
        sub = Conn(self.srv.port)
        sub.call("PSUBSCRIBE", "__keyspace@0__:*")
        c.call("RPUSH", "e", "a", "b", "c")
        c.call("LPUSH", "e", "z")
        c.call("LPOP", "e")
        c.call("RPOP", "e", "1")
        c.call("LSET", "e", "0", "q")
        c.call("LINSERT", "e", "after", "q", "w")
        c.call("LREM", "e", "0", "w")
        c.call("LMOVE", "e", "f", "LEFT", "RIGHT")
        c.call("LTRIM", "e", "0", "-1")
        c.call("RPUSH", "g", "1")
        c.call("LTRIM", "g", "1", "0")
        got = []
        while not sub.nothing_more(0.3):
            f = sub.read()
            got.append((f[2].decode().split(":", 1)[1], f[3].decode()))
        sub.close()
        self.assertEqual(got, [("e", "rpush"), ("e", "lpush"), ("e", "lpop"), ("e", "rpop"),
                               ("e", "lset"), ("e", "linsert"), ("e", "lrem"), ("f", "rpush"),
                               ("e", "lpop"), ("e", "ltrim"), ("g", "rpush"), ("g", "ltrim"),
                               ("g", "del")])

    def test_generic_multi_lua(self):
        c = self.c
        c.call("RPUSH", "l", "a", "b", "a")
        self.assertEqual(c.call("TYPE", "l"), "list")
        self.assertEqual(c.call("OBJECT", "ENCODING", "l"), b"quicklist")
        self.assertEqual(c.call("SCAN", "0", "TYPE", "list")[1], [b"l"])
        payload = c.call("DUMP", "l")
        self.assertEqual(c.call("RESTORE", "l2", "0", payload), "OK")
        self.assertEqual(c.call("LRANGE", "l2", "0", "-1"), [b"a", b"b", b"a"])
        self.assertEqual(c.call("RENAME", "l2", "l3"), "OK")
        self.assertEqual(c.call("LLEN", "l3"), 3)
        c.call("MULTI")
        for cmd in (("RPUSH", "q", "1", "2"), ("LPOP", "q"), ("LMOVE", "q", "q2", "LEFT", "LEFT"),
                    ("LLEN", "q2")):
            self.assertEqual(c.call(*cmd), "QUEUED")
        self.assertEqual(c.call("EXEC"), [2, b"1", b"2", 1])
        got = c.call("EVAL", "redis.call('RPUSH', KEYS[1], 'x', 'y'); "
                     "return redis.call('LRANGE', KEYS[1], 0, -1)", "1", "z")
        self.assertEqual(got, [b"x", b"y"])


class VsRedis(BesideRedis):

    def test_dump_both_ways(self):
        shapes = {"short": ["a", "1", "a", "-70000", str(2**40)],
                  "long": ["x" * 100, "y" * 5000, "z"],
                  "many": [str(i % 50) for i in range(3000)]}
        for name, elems in shapes.items():
            for src, dst in ((self.rc, self.c), (self.c, self.rc)):
                src.call("DEL", name)
                src.call("RPUSH", name, *elems)
                payload = src.call("DUMP", name)
                self.assertEqual(dst.call("RESTORE", name + ":r", "0", payload, "REPLACE"), "OK",
                                 name)
                self.assertEqual(dst.call("LRANGE", name + ":r", "0", "-1"),
                                 [e.encode() for e in elems], name)

    def test_random_stream_equals_redis(self):
        rng = random.Random(5)
        keys = ["l0", "l1", "l2", "s0"]
        vals = ["a", "b", "c", "1", "22", ""]
        for conn in (self.c, self.rc):
            conn.call("SET", "s0", "v")
        for step in range(4000):
            k, v = rng.choice(keys), rng.choice(vals)
            r = rng.randrange(16)
            i = str(rng.randrange(-5, 6))
            if r < 3:
                cmd = [rng.choice(["LPUSH", "RPUSH", "LPUSHX", "RPUSHX"]), k] + \
                      [rng.choice(vals) for _ in range(rng.randrange(1, 4))]
            elif r < 5:
                cmd = [rng.choice(["LPOP", "RPOP"]), k] + \
                      ([str(rng.randrange(0, 4))] if rng.random() < 0.5 else [])
            elif r == 5:
                cmd = ["LRANGE", k, i, str(rng.randrange(-5, 6))]
            elif r == 6:
                cmd = [rng.choice(["LLEN", "TYPE", "EXISTS"]), k]
            elif r == 7:
                cmd = ["LINDEX", k, i]
            elif r == 8:
                cmd = ["LSET", k, i, v]
            elif r == 9:
                cmd = ["LINSERT", k, rng.choice(["BEFORE", "AFTER"]), rng.choice(vals), v]
            elif r == 10:
                cmd = ["LREM", k, i, v]
            elif r == 11:
                cmd = ["LTRIM", k, i, str(rng.randrange(-5, 6))]
            elif r == 12:
                cmd = ["LPOS", k, v] + rng.choice([[], ["RANK", "-1"], ["COUNT", "0"],
                                                   ["RANK", "2", "COUNT", "2", "MAXLEN", "5"]])
            elif r == 13:
                cmd = ["LMOVE", k, rng.choice(keys), rng.choice(["LEFT", "RIGHT"]),
                       rng.choice(["LEFT", "RIGHT"])]
            elif r == 14:
                cmd = ["LMPOP", "2"] + rng.sample(keys, 2) + [rng.choice(["LEFT", "RIGHT"]),
                                                              "COUNT", "2"]
            else:
                cmd = rng.choice([["DEL", k], ["SET", k, "v"], ["RPOPLPUSH", k, rng.choice(keys)]])
            got, want = self.c.call(*cmd), self.rc.call(*cmd)
            self.assertEqual(got, want, "step %d: %r" % (step, cmd))


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__], e2e_raw)
