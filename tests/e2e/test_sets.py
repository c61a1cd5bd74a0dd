#!/usr/bin/python3
"""test_sets.py - the set commands as Redis 7.0 answers them: replies,
errors (WRONGTYPE both ways, arity, SINTERCARD's and SPOP's), the last
member removing the key, a TTL covering every member, RESP3 sets,
keyspace events, MULTI and Lua, the generic commands on a set (TYPE,
OBJECT ENCODING, SCAN TYPE, RENAME, DUMP/RESTORE), and, beside Debian's
redis-server: DUMP payloads both ways (intsets, hashtables) and a seeded
random stream of set commands whose every reply must equal Redis's (as
sets where Redis's order is its hash table's). Run by ctest (label e2e):
  /usr/bin/python3 test_sets.py --server PATH   (or CUDIS_E2E_SERVER=...)
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


def sscan_all(c, key, *opts):
    """A full SSCAN iteration: the members it returned, sorted (Redis pages a
    hashtable-encoded set; cudis answers a whole set at once, cursor 0)."""
    cur, seen = b"0", []
    for _ in range(1000):
        got = c.call("SSCAN", key, cur, *opts)
        if isinstance(got, Err):
            return got
        cur, items = got
        seen += items
        if cur == b"0":
            return sorted(set(seen))
    raise AssertionError("SSCAN did not end")


class Sets(Base):
    def test_replies(self):
        c = self.c
        self.assertEqual(c.call("SADD", "s", "a", "b", "a", "c"), 3)
        self.assertEqual(c.call("SADD", "s", "a", "d"), 1)
        self.assertEqual(c.call("SCARD", "s"), 4)
        self.assertEqual(c.call("SCARD", "nokey"), 0)
        self.assertEqual(sorted(c.call("SMEMBERS", "s")), [b"a", b"b", b"c", b"d"])
        self.assertEqual(c.call("SMEMBERS", "nokey"), [])
        self.assertEqual(c.call("SISMEMBER", "s", "b"), 1)
        self.assertEqual(c.call("SISMEMBER", "s", "z"), 0)
        self.assertEqual(c.call("SISMEMBER", "nokey", "z"), 0)
        self.assertEqual(c.call("SMISMEMBER", "s", "a", "z", "d"), [1, 0, 1])
        self.assertEqual(c.call("SMISMEMBER", "nokey", "a"), [0])
        self.assertEqual(c.call("SREM", "s", "a", "z", "a"), 1)
        self.assertEqual(c.call("SREM", "nokey", "a"), 0)
        # an integer set lists in ascending order (Redis's intset)
        c.call("SADD", "n", "10", "-3", "7", "100", "0")
        self.assertEqual(c.call("SMEMBERS", "n"), [b"-3", b"0", b"7", b"10", b"100"])
        self.assertEqual(c.call("SADD", "e", ""), 1)
        self.assertEqual(c.call("SISMEMBER", "e", ""), 1)

    def test_algebra(self):
        c = self.c
        c.call("SADD", "a", "1", "2", "3", "x")
        c.call("SADD", "b", "2", "3", "4")
        c.call("SADD", "c", "3", "x", "9")
        self.assertEqual(sorted(c.call("SINTER", "a", "b")), [b"2", b"3"])
        self.assertEqual(sorted(c.call("SINTER", "a", "b", "c")), [b"3"])
        self.assertEqual(c.call("SINTER", "a", "nokey"), [])
        self.assertEqual(sorted(c.call("SUNION", "a", "b", "nokey")),
                         [b"1", b"2", b"3", b"4", b"x"])
        self.assertEqual(sorted(c.call("SDIFF", "a", "b")), [b"1", b"x"])
        self.assertEqual(sorted(c.call("SDIFF", "a", "b", "c")), [b"1"])
        self.assertEqual(c.call("SDIFF", "nokey", "a"), [])
        self.assertEqual(c.call("SINTERCARD", "2", "a", "b"), 2)
        self.assertEqual(c.call("SINTERCARD", "2", "a", "b", "LIMIT", "1"), 1)
        self.assertEqual(c.call("SINTERCARD", "2", "a", "b", "LIMIT", "0"), 2)
        self.assertEqual(c.call("SINTERCARD", "1", "nokey"), 0)
        self.assertEqual(c.call("SINTERSTORE", "d", "a", "b"), 2)
        self.assertEqual(sorted(c.call("SMEMBERS", "d")), [b"2", b"3"])
        self.assertEqual(c.call("SUNIONSTORE", "d", "a", "b"), 5)
        self.assertEqual(c.call("SCARD", "d"), 5)
        self.assertEqual(c.call("SDIFFSTORE", "d", "a", "a"), 0)
        self.assertEqual(c.call("EXISTS", "d"), 0, "an empty result deletes the destination")
        c.call("SET", "str", "v")
        self.assertEqual(c.call("SINTERSTORE", "str", "a", "b"), 2, "STORE replaces any type")
        self.assertEqual(c.call("TYPE", "str"), "set")
        self.assertEqual(c.call("SINTERSTORE", "a2", "a"), 4)
        c.call("SET", "str", "v")
        for cmd in (("SINTER", "a", "str"), ("SINTER", "nokey", "str"), ("SUNION", "str", "a"),
                    ("SDIFF", "a", "str"), ("SINTERCARD", "2", "a", "str"),
                    ("SINTERSTORE", "d", "a", "str"), ("SUNIONSTORE", "d", "str")):
            self.assertEqual(c.call(*cmd), WRONGTYPE, cmd)
        self.assertEqual(c.call("SINTERCARD", "0", "a"), Err("ERR numkeys should be greater than 0"))
        self.assertEqual(c.call("SINTERCARD", "x", "a"), Err("ERR numkeys should be greater than 0"))
        self.assertEqual(c.call("SINTERCARD", "3", "a", "b"),
                         Err("ERR Number of keys can't be greater than number of args"))
        self.assertEqual(c.call("SINTERCARD", "1", "a", "LIMIT", "-1"),
                         Err("ERR LIMIT can't be negative"))
        self.assertEqual(c.call("SINTERCARD", "1", "a", "FOO"), Err("ERR syntax error"))

    def test_pop_move_random(self):
        c = self.c
        members = {b"m%d" % i for i in range(20)}
        c.call("SADD", "s", *members)
        got = c.call("SPOP", "s")
        self.assertIn(got, members)
        self.assertEqual(c.call("SISMEMBER", "s", got), 0)
        three = c.call("SPOP", "s", "3")
        self.assertEqual(len(set(three)), 3)
        self.assertEqual(c.call("SCARD", "s"), 16)
        self.assertEqual(c.call("SPOP", "s", "0"), [])
        self.assertEqual(c.call("SPOP", "s", "-1"),
                         Err("ERR value is out of range, must be positive"))
        rest = c.call("SPOP", "s", "100")
        self.assertEqual(len(rest), 16)
        self.assertEqual(set(rest) | set(three) | {got}, members)
        self.assertEqual(c.call("EXISTS", "s"), 0)
        self.assertIsNone(c.call("SPOP", "s"))
        self.assertEqual(c.call("SPOP", "s", "2"), [])
        c.call("SADD", "a", "x", "y")
        self.assertEqual(c.call("SMOVE", "a", "b", "x"), 1)
        self.assertEqual(c.call("SMOVE", "a", "b", "zz"), 0)
        self.assertEqual(c.call("SMOVE", "nokey", "b", "x"), 0)
        self.assertEqual(c.call("SMOVE", "a", "a", "y"), 1)
        self.assertEqual(c.call("SMOVE", "a", "b", "y"), 1)
        self.assertEqual(c.call("EXISTS", "a"), 0)
        self.assertEqual(sorted(c.call("SMEMBERS", "b")), [b"x", b"y"])
        c.call("SET", "str", "v")
        self.assertEqual(c.call("SMOVE", "b", "str", "x"), WRONGTYPE)
        self.assertEqual(c.call("SMOVE", "str", "b", "x"), WRONGTYPE)
        self.assertEqual(c.call("SMOVE", "nokey", "str", "x"), 0, "a missing source first")
        self.assertEqual(c.call("SCARD", "b"), 2, "a failed SMOVE moves nothing")
        self.assertIsNone(c.call("SRANDMEMBER", "nokey"))
        self.assertEqual(c.call("SRANDMEMBER", "nokey", "3"), [])
        self.assertIn(c.call("SRANDMEMBER", "b"), [b"x", b"y"])
        self.assertEqual(sorted(c.call("SRANDMEMBER", "b", "5")), [b"x", b"y"])
        self.assertEqual(len(c.call("SRANDMEMBER", "b", "-5")), 5)
        self.assertEqual(c.call("SRANDMEMBER", "b", "0"), [])
        self.assertEqual(c.call("SRANDMEMBER", "b", "1", "x"), Err("ERR syntax error"))
        if not self.srv.is_redis:  # cudis bounds a reply it would build in memory
            self.assertEqual(c.call("SRANDMEMBER", "b", str(-2**40)),
                             Err("ERR value is out of range"))
        self.assertEqual(c.call("SCARD", "b"), 2)

    def test_errors_wrongtype_and_empty_key(self):
        c = self.c
        for cmd in (("SADD", "s"), ("SREM", "s"), ("SCARD",), ("SISMEMBER", "s"),
                    ("SMISMEMBER", "s"), ("SMOVE", "a", "b"), ("SINTER",), ("SINTERSTORE", "d"),
                    ("SINTERCARD", "1")):
            self.assertEqual(c.call(*cmd),
                             Err("ERR wrong number of arguments for '%s' command" % cmd[0].lower()),
                             cmd)
        c.call("SET", "str", "v")
        c.call("HSET", "h", "a", "1")
        for key in ("str", "h"):
            for cmd in (("SADD", key, "a"), ("SREM", key, "a"), ("SCARD", key),
                        ("SISMEMBER", key, "a"), ("SMISMEMBER", key, "a"), ("SMEMBERS", key),
                        ("SRANDMEMBER", key), ("SPOP", key), ("SSCAN", key, "0")):
                self.assertEqual(c.call(*cmd), WRONGTYPE, cmd)
        c.call("SADD", "s", "a")
        for cmd in (("GET", "s"), ("HGET", "s", "a"), ("HLEN", "s"), ("INCR", "s"),
                    ("HSET", "s", "a", "1")):
            self.assertEqual(c.call(*cmd), WRONGTYPE, cmd)
        self.assertEqual(c.call("SREM", "s", "a"), 1)
        self.assertEqual(c.call("EXISTS", "s"), 0)
        self.assertEqual(c.call("SSCAN", "s", "0", "COUNT", "0"), [b"0", []])
        c.call("SADD", "s", "a", "b", "ab")
        self.assertEqual(sscan_all(c, "s", "MATCH", "a*", "COUNT", "2"), [b"a", b"ab"])
        self.assertEqual(c.call("SSCAN", "s", "0", "COUNT", "0"), Err("ERR syntax error"))
        self.assertEqual(c.call("SSCAN", "s", "x"), Err("ERR invalid cursor"))

    def test_ttl_resp3_events(self):
        c = self.c
        c.call("SADD", "s", "a", "b")
        c.call("PEXPIRE", "s", "100")
        self.assertEqual(c.call("SADD", "s", "c"), 1)
        self.assertGreater(c.call("PTTL", "s"), 0)
        time.sleep(0.25)
        self.assertEqual(c.call("SCARD", "s"), 0)
        self.assertEqual(c.call("SISMEMBER", "s", "a"), 0)
        c3 = Conn(self.srv.port, proto=3)
        try:
            c3.call("SADD", "r", "x")
            self.assertEqual(c3.call("SMEMBERS", "r"), [b"x"])  # a RESP3 set (~)
            c3.send("SMEMBERS", "r")
            self.assertEqual(c3._line(), b"~1")
            c3.read()
        finally:
            c3.close()
        c.call("CONFIG", "SET", "notify-keyspace-events", "KEsg")
        sub = Conn(self.srv.port)
        sub.call("PSUBSCRIBE", "__keyspace@0__:*")
        c.call("SADD", "e", "a", "b")
        c.call("SADD", "e", "a")  # nothing added: no event
        c.call("SREM", "e", "zz")  # nothing removed: no event
        c.call("SREM", "e", "a")
        c.call("SMOVE", "e", "f", "b")
        c.call("SADD", "g", "1")
        c.call("SINTERSTORE", "h", "g")
        c.call("SPOP", "g")
        got = []
        while not sub.nothing_more(0.3):
            f = sub.read()
            got.append((f[2].decode().split(":", 1)[1], f[3].decode()))
        sub.close()
        self.assertEqual(got, [("e", "sadd"), ("e", "srem"), ("e", "srem"), ("e", "del"),
                               ("f", "sadd"), ("g", "sadd"), ("h", "sinterstore"),
                               ("g", "spop"), ("g", "del")])

    def test_generic_multi_lua(self):
        c = self.c
        c.call("SADD", "i", "1", "2", "3")
        c.call("SADD", "t", "a", "1")
        self.assertEqual(c.call("TYPE", "i"), "set")
        self.assertEqual(c.call("OBJECT", "ENCODING", "i"), b"intset")
        self.assertEqual(c.call("OBJECT", "ENCODING", "t"), b"hashtable")
        c.call("SADD", "big", *[str(i) for i in range(600)])
        self.assertEqual(c.call("OBJECT", "ENCODING", "big"), b"hashtable")
        self.assertEqual(sorted(c.call("SCAN", "0", "TYPE", "set", "COUNT", "100")[1]),
                         [b"big", b"i", b"t"])
        self.assertEqual(c.call("RENAME", "t", "t2"), "OK")
        self.assertEqual(sorted(c.call("SMEMBERS", "t2")), [b"1", b"a"])
        payload = c.call("DUMP", "t2")
        self.assertEqual(c.call("RESTORE", "t3", "0", payload), "OK")
        self.assertEqual(sorted(c.call("SMEMBERS", "t3")), [b"1", b"a"])
        self.assertEqual(c.call("COPY", "i", "i2"), 1)
        self.assertEqual(c.call("SMEMBERS", "i2"), [b"1", b"2", b"3"])
        c.call("MULTI")
        for cmd in (("SADD", "m", "x"), ("SPOP", "m"), ("SADD", "m", "y", "z"),
                    ("SMOVE", "m", "m2", "y"), ("SCARD", "m")):
            self.assertEqual(c.call(*cmd), "QUEUED")
        self.assertEqual(c.call("EXEC"), [1, b"x", 2, 1, 1])
        got = c.call("EVAL", "redis.call('SADD', KEYS[1], 'p', 'q'); "
                     "return {redis.call('SCARD', KEYS[1]), redis.call('SISMEMBER', KEYS[1], 'q')}",
                     "1", "l")
        self.assertEqual(got, [2, 1])


class VsRedis(BesideRedis):

    def test_dump_both_ways(self):
        shapes = {
            "ints": ["1", "-5", "70000", str(2**40), str(-2**62)],
            "strs": ["a", "hello", "x" * 100, "12ab"],
            "many": [str(i) for i in range(700)],
        }
        for name, members in shapes.items():
            for src, dst in ((self.rc, self.c), (self.c, self.rc)):
                src.call("DEL", name)
                src.call("SADD", name, *members)
                payload = src.call("DUMP", name)
                self.assertEqual(dst.call("RESTORE", name + ":r", "0", payload, "REPLACE"), "OK",
                                 name)
                self.assertEqual(sorted(dst.call("SMEMBERS", name + ":r")),
                                 sorted(m.encode() for m in members), name)
                self.assertEqual(dst.call("TYPE", name + ":r"), "set")

    def test_random_stream_equals_redis(self):
        rng = random.Random(99)
        keys = ["s0", "s1", "s2", "h0"]
        members = ["%d" % i for i in range(8)] + ["m%d" % i for i in range(6)]
        for conn in (self.c, self.rc):
            conn.call("HSET", "h0", "f", "v")
        as_set = {"SMEMBERS", "SINTER", "SUNION", "SDIFF"}
        for step in range(4000):
            k, m = rng.choice(keys), rng.choice(members)
            r = rng.randrange(14)
            if r < 4:
                cmd = ["SADD", k] + rng.sample(members, rng.randrange(1, 4))
            elif r < 6:
                cmd = ["SREM", k] + rng.sample(members, rng.randrange(1, 3))
            elif r == 6:
                cmd = [rng.choice(["SCARD", "SMEMBERS", "TYPE", "EXISTS"]), k]
            elif r == 7:
                cmd = ["SISMEMBER", k, m]
            elif r == 8:
                cmd = ["SMISMEMBER", k] + rng.sample(members, 3)
            elif r == 9:
                cmd = [rng.choice(["SINTER", "SUNION", "SDIFF"])] + rng.sample(keys, 2)
            elif r == 10:
                cmd = [rng.choice(["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]),
                       rng.choice(keys)] + rng.sample(keys, 2)
            elif r == 11:
                cmd = ["SMOVE", k, rng.choice(keys), m]
            elif r == 12:
                cmd = ["SINTERCARD", "2"] + rng.sample(keys, 2)
            else:
                cmd = rng.choice([["DEL", k], ["SET", k, "v"], ["SRANDMEMBER", k, "100"],
                                  ["SSCAN", k, "0"]])
            if cmd[0] == "SSCAN":
                self.assertEqual(sscan_all(self.c, k), sscan_all(self.rc, k), "step %d" % step)
                continue
            got, want = self.c.call(*cmd), self.rc.call(*cmd)
            if isinstance(want, list) and (cmd[0] in as_set or cmd[0] == "SRANDMEMBER"):
                got, want = sorted(got), sorted(want)
            self.assertEqual(got, want, "step %d: %r" % (step, cmd))


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__], e2e_raw)
