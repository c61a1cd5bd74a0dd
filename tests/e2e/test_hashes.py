#!/usr/bin/python3
"""test_hashes.py - the hash commands as Redis 7.0 answers them: replies,
errors (WRONGTYPE both ways, arity, HINCRBY/HINCRBYFLOAT), the rule that
removing the last field removes the key, a TTL covering every field, RESP3
maps and pairs, keyspace events, MULTI and Lua, the generic commands on a
hash (TYPE, OBJECT ENCODING, RENAME, COPY, MOVE, SCAN TYPE, DUMP/RESTORE),
eviction removing whole hashes (HLEN and HGETALL always agree with HGET),
and, beside Debian's redis-server: DUMP payloads both ways and a seeded
random stream of hash commands whose every reply must equal Redis's.
Run by ctest (label e2e):
  /usr/bin/python3 test_hashes.py --server PATH   (or CUDIS_E2E_SERVER=...)
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

import redis  # noqa: E402

BIN = None


def pairs(flat):
    return dict(zip(flat[0::2], flat[1::2]))


class Hashes(Base):
    def test_replies(self):
        c = self.c
        self.assertEqual(c.call("HSET", "h", "a", "1", "b", "2"), 2)
        self.assertEqual(c.call("HSET", "h", "a", "9", "c", "3", "c", "4"), 1)
        self.assertEqual(c.call("HGETALL", "h"), [b"a", b"9", b"b", b"2", b"c", b"4"])
        self.assertEqual(c.call("HGET", "h", "a"), b"9")
        self.assertIsNone(c.call("HGET", "h", "zz"))
        self.assertIsNone(c.call("HGET", "nokey", "a"))
        self.assertEqual(c.call("HMGET", "h", "c", "zz", "a"), [b"4", None, b"9"])
        self.assertEqual(c.call("HMGET", "nokey", "a", "b"), [None, None])
        self.assertEqual(c.call("HLEN", "h"), 3)
        self.assertEqual(c.call("HLEN", "nokey"), 0)
        self.assertEqual(c.call("HKEYS", "h"), [b"a", b"b", b"c"])
        self.assertEqual(c.call("HVALS", "h"), [b"9", b"2", b"4"])
        self.assertEqual(c.call("HKEYS", "nokey"), [])
        self.assertEqual(c.call("HGETALL", "nokey"), [])
        self.assertEqual(c.call("HSTRLEN", "h", "a"), 1)
        self.assertEqual(c.call("HSTRLEN", "h", "zz"), 0)
        self.assertEqual(c.call("HEXISTS", "h", "b"), 1)
        self.assertEqual(c.call("HEXISTS", "h", "zz"), 0)
        self.assertEqual(c.call("HSETNX", "h", "a", "x"), 0)
        self.assertEqual(c.call("HSETNX", "h", "d", "x"), 1)
        self.assertEqual(c.call("HGET", "h", "d"), b"x")
        self.assertEqual(c.call("HMSET", "h", "e", "5", "a", "1"), "OK")
        self.assertEqual(c.call("HDEL", "h", "a", "zz", "a", "b"), 2)
        self.assertEqual(c.call("HKEYS", "h"), [b"c", b"d", b"e"])
        self.assertEqual(c.call("HDEL", "nokey", "a"), 0)
        # binary-safe fields and values, empty ones too
        self.assertEqual(c.call("HSET", "bin", b"\x00\xff", b"v\r\n", "", ""), 2)
        self.assertEqual(c.call("HGET", "bin", b"\x00\xff"), b"v\r\n")
        self.assertEqual(c.call("HGET", "bin", ""), b"")
        self.assertEqual(c.call("HSTRLEN", "bin", ""), 0)
        self.assertEqual(c.call("HEXISTS", "bin", ""), 1)

    def test_hincrby_and_hincrbyfloat(self):
        c = self.c
        self.assertEqual(c.call("HINCRBY", "h", "n", "5"), 5)
        self.assertEqual(c.call("HINCRBY", "h", "n", "-7"), -2)
        self.assertEqual(c.call("HSET", "h", "s", "abc", "big", str(2**63 - 1), "sp", " 1"), 3)
        self.assertEqual(c.call("HINCRBY", "h", "s", "1"), Err("ERR hash value is not an integer"))
        self.assertEqual(c.call("HINCRBY", "h", "sp", "1"), Err("ERR hash value is not an integer"))
        self.assertEqual(c.call("HINCRBY", "h", "big", "1"),
                         Err("ERR increment or decrement would overflow"))
        self.assertEqual(c.call("HINCRBY", "h", "n", "x"),
                         Err("ERR value is not an integer or out of range"))
        self.assertEqual(c.call("HGET", "h", "big"), str(2**63 - 1).encode())
        self.assertEqual(c.call("HINCRBYFLOAT", "h", "f", "1.5"), b"1.5")
        self.assertEqual(c.call("HINCRBYFLOAT", "h", "f", "2.25"), b"3.75")
        self.assertEqual(c.call("HINCRBYFLOAT", "h", "n", "0.5"), b"-1.5")
        self.assertEqual(c.call("HINCRBYFLOAT", "h", "s", "1"), Err("ERR hash value is not a float"))
        self.assertEqual(c.call("HINCRBYFLOAT", "h", "f", "x"), Err("ERR value is not a valid float"))
        self.assertEqual(c.call("HINCRBYFLOAT", "h", "f", "inf"),
                         Err("ERR value is NaN or Infinity"))
        c.call("HSET", "h", "huge", "1e4932")
        self.assertEqual(c.call("HINCRBYFLOAT", "h", "huge", "1e4932"),
                         Err("ERR increment would produce NaN or Infinity"))
        self.assertEqual(c.call("HINCRBYFLOAT", "h2", "f", "3e2"), b"300")
        self.assertEqual(c.call("HGET", "h", "f"), b"3.75")

    def test_errors_and_wrongtype(self):
        c = self.c
        for cmd in (("HSET", "h"), ("HSET", "h", "a"), ("HSET", "h", "a", "1", "b"),
                    ("HMSET", "h", "a", "1", "b"), ("HGET", "h"), ("HDEL", "h"), ("HLEN",),
                    ("HSETNX", "h", "a"), ("HINCRBY", "h", "a"), ("HMGET", "h"), ("HSCAN", "h")):
            self.assertEqual(c.call(*cmd),
                             Err("ERR wrong number of arguments for '%s' command" % cmd[0].lower()),
                             cmd)
        c.call("SET", "s", "v")
        for cmd in (("HSET", "s", "a", "1"), ("HGET", "s", "a"), ("HMGET", "s", "a"),
                    ("HDEL", "s", "a"), ("HLEN", "s"), ("HGETALL", "s"), ("HKEYS", "s"),
                    ("HVALS", "s"), ("HEXISTS", "s", "a"), ("HSTRLEN", "s", "a"),
                    ("HINCRBY", "s", "a", "1"), ("HINCRBYFLOAT", "s", "a", "1"),
                    ("HSETNX", "s", "a", "1"), ("HRANDFIELD", "s"), ("HSCAN", "s", "0")):
            self.assertEqual(c.call(*cmd), WRONGTYPE, cmd)
        c.call("HSET", "h", "a", "1")
        for cmd in (("GET", "h"), ("APPEND", "h", "x"), ("INCR", "h"), ("STRLEN", "h"),
                    ("GETRANGE", "h", "0", "1"), ("SETRANGE", "h", "0", "x"), ("GETDEL", "h"),
                    ("GETEX", "h"), ("SETBIT", "h", "1", "1"), ("GETBIT", "h", "1"),
                    ("BITCOUNT", "h"), ("SET", "h", "v", "GET"), ("INCRBYFLOAT", "h", "1")):
            self.assertEqual(c.call(*cmd), WRONGTYPE, cmd)
        self.assertEqual(c.call("MGET", "h", "s"), [None, b"v"])
        self.assertEqual(c.call("HGET", "h", "a"), b"1", "the failed commands changed nothing")
        self.assertEqual(c.call("SET", "h", "str"), "OK")  # SET replaces any type
        self.assertEqual(c.call("TYPE", "h"), "string")
        self.assertEqual(c.call("HGET", "h", "a"), WRONGTYPE)
        self.assertEqual(c.call("HRANDFIELD", "x", "1", "withvalue"), Err("ERR syntax error"))
        self.assertEqual(c.call("HRANDFIELD", "x", "1", "withvalues", "x"), Err("ERR syntax error"))
        self.assertEqual(c.call("HRANDFIELD", "x", "one"),
                         Err("ERR value is not an integer or out of range"))
        self.assertEqual(c.call("HSCAN", "x", "abc"), Err("ERR invalid cursor"))
        self.assertEqual(c.call("HSCAN", "s", "abc"), Err("ERR invalid cursor"))
        # the options are read once the hash is found (a missing key: an empty scan)
        self.assertEqual(c.call("HSCAN", "x", "0", "count", "0"), [b"0", []])
        self.assertEqual(c.call("HSCAN", "s", "0", "count", "0"), WRONGTYPE)
        c.call("HSET", "hh", "a", "1")
        self.assertEqual(c.call("HSCAN", "hh", "0", "count", "0"), Err("ERR syntax error"))
        self.assertEqual(c.call("HSCAN", "hh", "0", "count", "x"),
                         Err("ERR value is not an integer or out of range"))
        self.assertEqual(c.call("HSCAN", "hh", "0", "foo"), Err("ERR syntax error"))

    def test_last_field_removes_the_key(self):
        c = self.c
        c.call("HSET", "h", "a", "1", "b", "2")
        self.assertEqual(c.call("HDEL", "h", "a", "b"), 2)
        self.assertEqual(c.call("EXISTS", "h"), 0)
        self.assertEqual(c.call("TYPE", "h"), "none")
        self.assertEqual(c.call("DBSIZE"), 0)
        self.assertEqual(c.call("HSET", "h", "a", "1"), 1)
        self.assertEqual(c.call("TYPE", "h"), "hash")
        self.assertEqual(c.call("DEL", "h"), 1)
        self.assertEqual(c.call("HLEN", "h"), 0)

    def test_ttl_covers_every_field(self):
        c = self.c
        c.call("HSET", "h", "a", "1", "b", "2")
        self.assertEqual(c.call("PEXPIRE", "h", "300"), 1)
        self.assertEqual(c.call("HSET", "h", "c", "3"), 1)  # a write keeps the TTL
        self.assertEqual(c.call("HINCRBY", "h", "n", "1"), 1)
        self.assertEqual(c.call("HDEL", "h", "a"), 1)
        self.assertGreater(c.call("PTTL", "h"), 0)
        self.assertEqual(c.call("PERSIST", "h"), 1)
        self.assertEqual(c.call("TTL", "h"), -1)
        self.assertEqual(c.call("PEXPIRE", "h", "100"), 1)
        time.sleep(0.25)
        self.assertIsNone(c.call("HGET", "h", "b"))
        self.assertEqual(c.call("HLEN", "h"), 0)
        self.assertEqual(c.call("HGETALL", "h"), [])
        self.assertEqual(c.call("EXISTS", "h"), 0)
        self.assertEqual(c.call("HSET", "h", "z", "1"), 1)  # a new hash, without the TTL
        self.assertEqual(c.call("HGETALL", "h"), [b"z", b"1"])
        self.assertEqual(c.call("TTL", "h"), -1)

    def test_resp3(self):
        c3 = Conn(self.srv.port, proto=3)
        try:
            c3.call("HSET", "h", "a", "1", "b", "2")
            self.assertEqual(c3.call("HGETALL", "h"), {b"a": b"1", b"b": b"2"})
            self.assertEqual(c3.call("HGETALL", "nokey"), {})
            self.assertIsNone(c3.call("HGET", "h", "zz"))
            self.assertIsNone(c3.call("HRANDFIELD", "nokey"))
            got = c3.call("HRANDFIELD", "h", "2", "WITHVALUES")
            self.assertEqual(sorted(map(tuple, got)), [(b"a", b"1"), (b"b", b"2")])
            got = c3.call("HRANDFIELD", "h", "-3", "WITHVALUES")
            self.assertEqual(len(got), 3)
            for p in got:
                self.assertIn(tuple(p), [(b"a", b"1"), (b"b", b"2")])
        finally:
            c3.close()

    def test_hrandfield(self):
        c = self.c
        self.assertIsNone(c.call("HRANDFIELD", "nokey"))
        self.assertEqual(c.call("HRANDFIELD", "nokey", "3"), [])
        fields = {b"f%d" % i: b"v%d" % i for i in range(20)}
        c.call("HSET", "h", *[x for kv in fields.items() for x in kv])
        self.assertIn(c.call("HRANDFIELD", "h"), fields)
        self.assertEqual(c.call("HRANDFIELD", "h", "0"), [])
        got = c.call("HRANDFIELD", "h", "5")
        self.assertEqual(len(set(got)), 5)
        self.assertTrue(set(got) <= set(fields))
        self.assertEqual(sorted(c.call("HRANDFIELD", "h", "50")), sorted(fields))
        got = c.call("HRANDFIELD", "h", "-40")
        self.assertEqual(len(got), 40)
        self.assertTrue(set(got) <= set(fields))
        flat = c.call("HRANDFIELD", "h", "7", "WITHVALUES")
        self.assertEqual(len(flat), 14)
        for f, v in pairs(flat).items():
            self.assertEqual(fields[f], v)
        self.assertEqual(len(c.call("HRANDFIELD", "h", "-9", "WITHVALUES")), 18)
        self.assertEqual(c.call("HRANDFIELD", "h", str(-2**62), "WITHVALUES"),
                         Err("ERR value is out of range"))
        if not self.srv.is_redis:  # cudis bounds a reply it would build in memory
            self.assertEqual(c.call("HRANDFIELD", "h", str(-2**40)),
                             Err("ERR value is out of range"))

    def test_hscan(self):
        c = self.c
        self.assertEqual(c.call("HSCAN", "nokey", "0"), [b"0", []])
        fields = {b"f%d" % i: b"%d" % i for i in range(30)}
        c.call("HSET", "h", *[x for kv in fields.items() for x in kv])
        cur, items = c.call("HSCAN", "h", "0", "COUNT", "5")
        self.assertEqual(cur, b"0")
        self.assertEqual(pairs(items), fields)
        cur, items = c.call("HSCAN", "h", "0", "MATCH", "f1*")
        self.assertEqual(sorted(pairs(items)), sorted(f for f in fields if f.startswith(b"f1")))

    def test_generic_commands(self):
        c = self.c
        c.call("HSET", "h", "a", "1", "b", "2")
        c.call("SET", "s", "v")
        self.assertEqual(c.call("TYPE", "h"), "hash")
        # Redis's documented defaults (Debian's build ships 512 entries)
        self.assertEqual(c.call("CONFIG", "SET", "hash-max-listpack-entries", "128"), "OK")
        self.assertEqual(c.call("CONFIG", "GET", "hash-max-ziplist-entries"),
                         [b"hash-max-ziplist-entries", b"128"])
        self.assertEqual(c.call("CONFIG", "GET", "hash-max-listpack-value"),
                         [b"hash-max-listpack-value", b"64"])
        self.assertEqual(c.call("OBJECT", "ENCODING", "h"), b"listpack")
        self.assertEqual(c.call("HSET", "h", "long", "x" * 65), 1)
        self.assertEqual(c.call("OBJECT", "ENCODING", "h"), b"hashtable")
        c.call("HSET", "many", *[x for i in range(129) for x in ("f%d" % i, "v")])
        self.assertEqual(c.call("OBJECT", "ENCODING", "many"), b"hashtable")
        self.assertEqual(c.call("HLEN", "many"), 129)
        self.assertEqual(sorted(c.call("SCAN", "0", "TYPE", "hash", "COUNT", "100")[1]),
                         [b"h", b"many"])
        self.assertEqual(c.call("SCAN", "0", "TYPE", "string", "COUNT", "100")[1], [b"s"])
        self.assertEqual(c.call("SCAN", "0", "TYPE", "HASH", "MATCH", "m*", "COUNT", "100")[1],
                         [b"many"])
        self.assertEqual(c.call("RENAME", "h", "h2"), "OK")
        self.assertEqual(c.call("HGET", "h2", "b"), b"2")
        self.assertEqual(c.call("TYPE", "h2"), "hash")
        self.assertEqual(c.call("COPY", "h2", "h3"), 1)
        self.assertEqual(c.call("HSET", "h3", "c", "3"), 1)
        self.assertEqual(c.call("HLEN", "h2"), 3)
        self.assertEqual(c.call("HLEN", "h3"), 4)
        self.assertEqual(c.call("MOVE", "h3", "1"), 1)
        self.assertEqual(c.call("EXISTS", "h3"), 0)
        c.call("SELECT", "1")
        self.assertEqual(c.call("HGET", "h3", "c"), b"3")
        c.call("SELECT", "0")
        payload = c.call("DUMP", "h2")
        self.assertEqual(c.call("RESTORE", "h4", "0", payload), "OK")
        self.assertEqual(pairs(c.call("HGETALL", "h4")), pairs(c.call("HGETALL", "h2")))
        self.assertEqual(c.call("TYPE", "h4"), "hash")
        self.assertEqual(c.call("RENAME", "s", "h4"), "OK")  # RENAME replaces any type
        self.assertEqual(c.call("TYPE", "h4"), "string")
        self.assertIsInstance(c.call("MEMORY", "USAGE", "h2"), int)
        self.assertEqual(c.call("DEL", "h2", "many"), 2)

    def test_multi_and_lua(self):
        c = self.c
        self.assertEqual(c.call("MULTI"), "OK")
        for cmd in (("HSET", "h", "a", "1"), ("HINCRBY", "h", "a", "2"), ("HGET", "h", "a"),
                    ("HINCRBYFLOAT", "h", "a", "0.5"), ("HGETALL", "h"), ("GET", "h")):
            self.assertEqual(c.call(*cmd), "QUEUED")
        self.assertEqual(c.call("EXEC"), [1, 3, b"3", b"3.5", [b"a", b"3.5"], WRONGTYPE])
        got = c.call("EVAL", "redis.call('HSET', KEYS[1], 'x', ARGV[1]); "
                     "return {redis.call('HGET', KEYS[1], 'x'), redis.call('HLEN', KEYS[1]), "
                     "redis.pcall('GET', KEYS[1])['err']}", "1", "h", "42")
        self.assertEqual(got, [b"42", 2, WRONGTYPE.encode()])
        c.call("WATCH", "h")
        other = Conn(self.srv.port)
        other.call("HSET", "h", "y", "1")
        other.close()
        c.call("MULTI")
        c.call("HLEN", "h")
        self.assertIsNone(c.call("EXEC"), "a field written by another client breaks WATCH")

    def test_keyspace_events(self):
        c = self.c
        c.call("CONFIG", "SET", "notify-keyspace-events", "KEhgn")
        sub = Conn(self.srv.port)
        sub.call("PSUBSCRIBE", "__key*__:*")
        c.call("HSET", "h", "a", "1")
        c.call("HSETNX", "h", "a", "2")  # no change: no event
        c.call("HINCRBY", "h", "n", "1")
        c.call("HINCRBYFLOAT", "h", "n", "1.5")
        c.call("HDEL", "h", "zz")  # no change: no event
        c.call("HDEL", "h", "a")
        c.call("HDEL", "h", "n")
        got = []
        while not sub.nothing_more(0.3):
            f = sub.read()
            got.append((f[2].decode(), f[3].decode()))
        sub.close()
        names = [p for ch, p in got if ch.startswith("__keyspace@0__:")]
        self.assertEqual(names, ["new", "hset", "hincrby", "hincrbyfloat", "hdel", "hdel", "del"])
        evs = [ch.split(":", 1)[1] for ch, p in got if ch.startswith("__keyevent@0__:")]
        self.assertEqual(evs, names)

    def test_large_hash(self):
        c = self.c
        model = {}
        for base in range(0, 3000, 500):
            args = []
            for i in range(base, base + 500):
                f, v = b"field:%d" % i, b"v" * (i % 300)
                model[f] = v
                args += [f, v]
            self.assertEqual(c.call("HSET", "big", *args), 500)
        self.assertEqual(c.call("HLEN", "big"), 3000)
        for i in range(0, 3000, 97):
            self.assertEqual(c.call("HGET", "big", b"field:%d" % i), model[b"field:%d" % i])
        gone = [b"field:%d" % i for i in range(0, 3000, 2)]
        self.assertEqual(c.call("HDEL", "big", *gone), 1500)
        for f in gone:
            del model[f]
        self.assertEqual(c.call("HLEN", "big"), 1500)
        self.assertEqual(pairs(c.call("HGETALL", "big")), model)
        self.assertEqual(c.call("HMGET", "big", "field:1", "field:2"), [model[b"field:1"], None])


class Eviction(Base):
    """Under memory pressure a hash goes as a whole: every hash left answers
    HLEN, HGETALL and HGET alike."""
    extra = ("--maxmemory", "4mb", "--maxmemory-policy", "allkeys-lru")

    def test_hashes_go_whole(self):
        c = self.c
        n = 3000
        for i in range(n):
            c.send("HSET", "h%d" % i, *[x for j in range(10) for x in ("f%d" % j, "%0100d" % j)])
        for i in range(n):
            self.assertEqual(c.read(), 10)
        kept = 0
        for i in range(n):
            key = "h%d" % i
            hlen = c.call("HLEN", key)
            flat = c.call("HGETALL", key)
            vals = c.call("HMGET", key, *["f%d" % j for j in range(10)])
            self.assertIn(hlen, (0, 10), key)
            self.assertEqual(len(flat), 2 * hlen, key)
            if hlen:
                kept += 1
                self.assertEqual(vals, [b"%0100d" % j for j in range(10)], key)
            else:
                self.assertEqual(vals, [None] * 10, key)
        self.assertGreater(kept, 100)
        self.assertLess(kept, n, "4 MB cannot hold 3000 hashes of 1 KB: some were evicted")


class VsRedis(BesideRedis):

    def test_dump_both_ways(self):
        shapes = {
            "small": ["a", "1", "b", "hello", "n", "-70000", "big", str(2**40)],
            "long": ["a", "x" * 100, "b", "2"],
            "many": [x for i in range(200) for x in ("f%d" % i, str(i * 1000))],
            "ints": [x for i in range(-5, 5) for x in (str(i), str(i * 4097))],
        }
        for name, flat in shapes.items():
            for src, dst in ((self.rc, self.c), (self.c, self.rc)):
                self.assertEqual(src.call("DEL", name) in (0, 1), True)
                src.call("HSET", name, *flat)
                payload = src.call("DUMP", name)
                self.assertEqual(dst.call("RESTORE", name + ":r", "0", payload, "REPLACE"), "OK",
                                 name)
                self.assertEqual(pairs(dst.call("HGETALL", name + ":r")),
                                 pairs([x.encode() for x in flat]), name)
                self.assertEqual(dst.call("TYPE", name + ":r"), "hash")

    def test_hmget_many_fields(self):
        # HMGET finds its fields in one walk: duplicates, missing fields and
        # the order asked must come back as Redis answers them
        rng = random.Random(77)
        for conn in (self.c, self.rc):
            for b in range(0, 3000, 500):
                conn.call("HSET", "wide", *[x for i in range(b, b + 500)
                                            for x in ("f%d" % i, "v%d" % (i * 7))])
        for _ in range(20):
            ask = ["f%d" % rng.randrange(3300) for _ in range(rng.randrange(1, 400))]
            ask += rng.sample(ask, min(len(ask), 5))
            rng.shuffle(ask)
            self.assertEqual(self.c.call("HMGET", "wide", *ask), self.rc.call("HMGET", "wide", *ask))
        self.assertEqual(self.c.call("HMGET", "wide", "f1", "f1", "f1"), [b"v7"] * 3)

    def test_random_stream_equals_redis(self):
        random_stream(self, random.Random(1234), 12, 4000, 3)


def unordered(cmd, reply):
    """A reply whose order is the encoding's (a hash Redis keeps as a
    hashtable, one cudis keeps in chunks), sorted."""
    if not isinstance(reply, list):
        return reply
    if cmd[0] in ("HGETALL",):
        return sorted(zip(reply[0::2], reply[1::2]))
    if cmd[0] == "HSCAN":
        return [reply[0], sorted(zip(reply[1][0::2], reply[1][1::2]))]
    if cmd[0] in ("HKEYS", "HVALS", "HRANDFIELD"):
        return sorted(reply)
    return reply


def random_stream(t, rng, nfields, steps, most):
    """A seeded random stream of hash and generic commands on a few keys,
    sent to cudis (t.c) and redis-server (t.rc): every reply equal (those
    in an encoding's order compared sorted)."""
    if True:
        keys = ["h0", "h1", "h2", "s0"]
        fields = ["f%d" % i for i in range(nfields)]
        both = (t.c, t.rc)
        for conn in both:
            conn.call("SET", "s0", "7")

        def val():
            return rng.choice(["", "0", "12", "-3", "x", "abc", "1.5", "%d" % rng.randrange(99)])

        for step in range(4000):
            k, f = rng.choice(keys), rng.choice(fields)
            r = rng.randrange(16)
            if r < 4:
                n = rng.randrange(1, most + 1)
                cmd = ["HSET", k] + [x for _ in range(n) for x in (rng.choice(fields), val())]
            elif r == 4:
                cmd = ["HSETNX", k, f, val()]
            elif r == 5:
                cmd = ["HDEL", k] + rng.sample(fields, rng.randrange(1, 4))
            elif r == 6:
                cmd = ["HGET", k, f]
            elif r == 7:
                cmd = ["HMGET", k] + rng.sample(fields, 3)
            elif r == 8:
                cmd = ["HINCRBY", k, f, str(rng.randrange(-5, 6))]
            elif r == 9:
                cmd = ["HINCRBYFLOAT", k, f, rng.choice(["1.5", "-0.25", "3"])]
            elif r == 10:
                cmd = [rng.choice(["HLEN", "HKEYS", "HVALS", "HGETALL", "TYPE", "EXISTS"]), k]
            elif r == 11:
                cmd = [rng.choice(["HEXISTS", "HSTRLEN"]), k, f]
            elif r == 12:
                cmd = ["HRANDFIELD", k, str(rng.choice([nfields + 8, 0]))]  # all of it, or none
            elif r == 13:
                cmd = ["HSCAN", k, "0", "MATCH", rng.choice(["*", "f1*", "f?"])]
            elif r == 14:
                cmd = rng.choice([["DEL", k], ["SET", k, val()], ["GET", k], ["INCR", k]])
            else:
                cmd = ["RENAME", k, rng.choice(keys)] if rng.random() < 0.5 else ["COPY", k,
                                                                                rng.choice(keys),
                                                                                "REPLACE"]
            got, want = t.c.call(*cmd), t.rc.call(*cmd)
            t.assertEqual(unordered(cmd, got), unordered(cmd, want), "step %d: %r" % (step, cmd))


class BigVsRedis(BesideRedis):
    """Hashes past hash-max-item-size live in chunks (server/bighash.c):
    with a tiny limit nearly every hash is chunked, converted, split as it
    grows, turned back into one item by RENAME/COPY, reclaimed: every reply
    must still equal Redis's."""
    cudis_extra = ("--hash-max-item-size", "64")

    def test_random_stream_equals_redis(self):
        random_stream(self, random.Random(99), 12, 3000, 3)

    def test_random_stream_many_fields(self):
        # past 16 fields per chunk: chunks split while HSETs land on them
        random_stream(self, random.Random(7), 700, 2500, 40)


class BigHashes(Base):
    """What a chunked hash must keep that Redis's replies do not show: its
    chunks go with it (DEL, overwrite, expiry, FLUSHDB: engine_items tells),
    eviction removes it whole, and it answers as a hash everywhere."""
    cudis_extra = ("--hash-max-item-size", "1024")

    def items(self):
        """The engine's items, chunks included (redis-server: its keys)."""
        info = self.c.call("INFO").decode()
        if self.srv.is_redis:
            return sum(int(x.split("keys=")[1].split(",")[0]) for x in info.split()
                       if x.startswith("db") and "keys=" in x)
        return int(info.split("engine_items:")[1].split()[0])

    def fill(self, key, n, width=20):
        c = self.c
        for b in range(0, n, 100):
            c.call("HSET", key, *[x for i in range(b, min(n, b + 100))
                                  for x in ("f%d" % i, "%0*d" % (width, i))])

    def test_chunks_go_with_their_hash(self):
        c = self.c
        self.fill("h", 2000)
        self.assertEqual(c.call("OBJECT", "ENCODING", "h"), b"hashtable")
        if not self.srv.is_redis:
            self.assertGreater(self.items(), 16, "2000 fields in chunks of 8 to 16")
        self.assertEqual(c.call("DBSIZE"), 1)
        self.assertEqual(c.call("KEYS", "*"), [b"h"])
        self.assertEqual(c.call("SCAN", "0", "TYPE", "hash"), [b"0", [b"h"]])
        self.assertEqual(c.call("TYPE", "h"), "hash")
        self.assertEqual(c.call("DEL", "h"), 1)
        self.assertEqual(self.items(), 0)
        self.fill("h", 2000)
        self.assertEqual(c.call("SET", "h", "x"), "OK")
        c.call("PING")
        self.assertEqual(self.items(), 1)
        self.assertEqual(c.call("HGET", "h", "f1"), WRONGTYPE)
        c.call("DEL", "h")
        self.fill("h", 2000)
        self.assertEqual(c.call("PEXPIRE", "h", "100"), 1)
        self.assertEqual(c.call("HLEN", "h"), 2000)
        time.sleep(0.4)
        self.assertEqual(c.call("HGET", "h", "f1"), None)
        self.assertEqual(self.items(), 0, "the expired hash's chunks were reclaimed")
        self.fill("h", 2000)
        c.call("SELECT", "1")
        self.fill("h", 500)
        self.assertEqual(c.call("FLUSHDB"), "OK")
        c.call("SELECT", "0")
        self.assertEqual(c.call("HLEN", "h"), 2000)
        c.call("FLUSHALL")
        self.assertEqual(self.items(), 0)

    def test_fields_ttl_and_commands(self):
        c = self.c
        self.fill("h", 3000)
        self.assertEqual(c.call("HLEN", "h"), 3000)
        self.assertEqual(c.call("HGET", "h", "f2999"), b"%020d" % 2999)
        self.assertEqual(c.call("HMGET", "h", "f0", "nope", "f0", "f1500"),
                         [b"%020d" % 0, None, b"%020d" % 0, b"%020d" % 1500])
        self.assertEqual(c.call("HSTRLEN", "h", "f7"), 20)
        self.assertEqual(c.call("HEXISTS", "h", "f7"), 1)
        self.assertEqual(c.call("HSETNX", "h", "f7", "x"), 0)
        self.assertEqual(c.call("HSETNX", "h", "new", "x"), 1)
        self.assertEqual(c.call("HINCRBY", "h", "n", "5"), 5)
        self.assertEqual(c.call("HINCRBY", "h", "n", "-1"), 4)
        self.assertEqual(c.call("HINCRBY", "h", "f7", "1"),  # (leading zeros)
                         Err("ERR hash value is not an integer"))
        self.assertEqual(c.call("HINCRBY", "h", "new", "1"),
                         Err("ERR hash value is not an integer"))
        self.assertEqual(c.call("HINCRBYFLOAT", "h", "fl", "2.5"), b"2.5")
        self.assertEqual(c.call("HINCRBYFLOAT", "h", "new", "1"),
                         Err("ERR hash value is not a float"))
        self.assertEqual(c.call("HLEN", "h"), 3003)
        self.assertEqual(c.call("EXPIRE", "h", "100"), 1)
        self.assertEqual(c.call("HSET", "h", "more", "1"), 1)
        self.assertEqual(c.call("TTL", "h"), 100, "a write keeps the hash's TTL")
        flat = c.call("HGETALL", "h")
        self.assertEqual(len(flat), 2 * 3004)
        self.assertEqual(len(set(c.call("HKEYS", "h"))), 3004)
        self.assertEqual(len(c.call("HRANDFIELD", "h", "10")), 10)
        cur, got = b"0", []
        while True:  # (Redis pages a hashtable; cudis answers it whole)
            cur, part = c.call("HSCAN", "h", cur, "MATCH", "f29*")
            got += part
            if cur == b"0":
                break
        self.assertEqual(sorted(set(got[0::2])), sorted(b"f%d" % i for i in range(3000)
                                                   if b"f%d" % i >= b"f29" and b"f%d" % i < b"f2:"))
        self.assertEqual(c.call("HDEL", "h", *["f%d" % i for i in range(3000)]), 3000)
        self.assertEqual(sorted(c.call("HKEYS", "h")), [b"fl", b"more", b"n", b"new"])
        self.assertEqual(c.call("HDEL", "h", "fl", "more", "n", "new"), 4)
        self.assertEqual(c.call("EXISTS", "h"), 0)
        self.assertEqual(self.items(), 0)

    def test_generic_commands_multi_lua_events(self):
        c = self.c
        self.fill("h", 1000)
        self.assertEqual(c.call("RENAME", "h", "h2"), "OK")
        self.assertEqual(c.call("HLEN", "h2"), 1000)
        self.assertEqual(c.call("COPY", "h2", "h3"), 1)
        self.assertEqual(c.call("HGET", "h3", "f999"), b"%020d" % 999)
        self.assertEqual(c.call("MOVE", "h3", "2"), 1)
        payload = c.call("DUMP", "h2")
        self.assertEqual(c.call("RESTORE", "h4", "0", payload), "OK")
        self.assertEqual(c.call("HLEN", "h4"), 1000)
        self.assertEqual(c.call("HSET", "h4", "x", "y"), 1)  # a big one again
        self.assertEqual(c.call("HLEN", "h4"), 1001)
        c.call("RPUSH", "l", "3", "1", "2")
        self.assertEqual(c.call("SORT", "l", "BY", "nosort", "GET", "h*->f1"),
                         [None, None, b"%020d" % 1])  # h3 moved, no h1, h2
        self.assertEqual(c.call("SORT", "l", "BY", "h*->f5", "GET", "#"),
                         [b"1", b"3", b"2"])  # weights 0 0 5
        self.assertEqual(c.call("MULTI"), "OK")
        for cmd in (("HSET", "h4", "a", "1"), ("HGET", "h4", "a"), ("HLEN", "h4"),
                    ("HDEL", "h4", "a")):
            self.assertEqual(c.call(*cmd), "QUEUED")
        self.assertEqual(c.call("EXEC"), [1, b"1", 1002, 1])
        self.assertEqual(c.call("EVAL", "redis.call('hset', KEYS[1], 'z', 'q') "
                                "return {redis.call('hget', KEYS[1], 'z'), "
                                "redis.call('hlen', KEYS[1])}", "1", "h4"), [b"q", 1002])
        sub = Conn(self.srv.port)
        c.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
        sub.call("SUBSCRIBE", "__keyspace@0__:h4")
        c.call("HSET", "h4", "a", "1")
        c.call("HINCRBY", "h4", "n", "1")
        c.call("HDEL", "h4", "a", "nope")
        c.call("HDEL", "h4", "nope")
        c.call("DEL", "h4")
        got = [sub.read()[2] for _ in range(4)]
        self.assertEqual(got, [b"hset", b"hincrby", b"hdel", b"del"])
        sub.close()

    def stats(self):
        info = self.c.call("INFO", "stats").decode().split()
        want = ("keyspace_hits", "keyspace_misses", "expired_keys", "evicted_keys")
        return {k: int(v) for k, v in (x.split(":", 1) for x in info if ":" in x) if k in want}

    def test_info_counts_keys_not_chunks(self):
        """INFO's keyspace figures count a hash as one key, as Redis does:
        a read command one hit, a write none, an expiry one."""
        c = self.c
        self.fill("h", 2000)
        c.call("CONFIG", "RESETSTAT")
        self.assertEqual(len(c.call("HMGET", "h", *["f%d" % i for i in range(100)])), 100)
        self.assertEqual(c.call("HGET", "h", "f5"), b"%020d" % 5)
        self.assertEqual(c.call("HGET", "h", "nope"), None)
        self.assertEqual(c.call("HLEN", "h"), 2000)
        self.assertEqual(c.call("HSET", "h", "f1", "x", "new", "y"), 1)
        self.assertEqual(c.call("HDEL", "h", "new"), 1)
        self.assertEqual(c.call("HGET", "missing", "f1"), None)
        self.assertEqual(self.stats(), {"keyspace_hits": 4, "keyspace_misses": 1,
                                        "expired_keys": 0, "evicted_keys": 0})
        self.assertEqual(c.call("PEXPIRE", "h", "50"), 1)
        time.sleep(0.3)
        self.assertEqual(c.call("EXISTS", "h"), 0)
        c.call("PING")
        self.assertEqual(self.stats()["expired_keys"], 1)

    def test_memory_usage_counts_every_field(self):
        c = self.c
        self.fill("h", 2000)  # 2000 x (2-5 + 20 bytes)
        data = sum(len("f%d" % i) + 20 for i in range(2000))
        n = c.call("MEMORY", "USAGE", "h")
        self.assertGreaterEqual(n, data, "a hash's usage holds its fields")
        self.assertLessEqual(n, 6 * data)
        c.call("CONFIG", "RESETSTAT")
        self.assertEqual(c.call("MEMORY", "USAGE", "h", "SAMPLES", "0"), n)
        self.assertEqual(c.call("MEMORY", "USAGE", "nope"), None)
        c.call("SET", "s", "v")
        self.assertGreater(c.call("MEMORY", "USAGE", "s"), 0)
        stats = self.stats()
        self.assertEqual((stats["keyspace_hits"], stats["keyspace_misses"]), (0, 0),
                         "MEMORY USAGE is no lookup")

    def test_watch_sees_a_write(self):
        c, o = self.c, Conn(self.srv.port)
        self.fill("h", 1000)
        c.call("WATCH", "h")
        self.assertEqual(o.call("HSET", "h", "f1", "changed"), 0)
        c.call("MULTI")
        c.call("HGET", "h", "f1")
        self.assertIsNone(c.call("EXEC"))
        o.close()


class BigEviction(Base):
    """Under memory pressure a chunked hash goes whole: a chunk evicted
    takes its head and the other chunks, so every hash left answers HLEN,
    HGETALL and HMGET alike."""
    extra = ("--maxmemory", "6mb", "--maxmemory-policy", "allkeys-lru")
    cudis_extra = ("--hash-max-item-size", "4096")

    def test_big_hashes_go_whole(self):
        c = self.c
        # 200 hashes of 400 fields of ~106 bytes: 8.5 MB of fields in a
        # 6 MB budget (120 hashes, 5.1 MB, fit once the arena gave the
        # pages of outgrown chunk classes back, and the test met no eviction)
        n, nf = 200, 400
        for i in range(n):
            for b in range(0, nf, 100):
                c.send("HSET", "h%d" % i, *[x for j in range(b, b + 100)
                                            for x in ("f%d" % j, "%0100d" % j)])
        for i in range(n * nf // 100):
            self.assertIsInstance(c.read(), int)
        kept = full = 0
        for i in range(n):
            key = "h%d" % i
            hlen = c.call("HLEN", key)
            flat = c.call("HGETALL", key)
            vals = c.call("HMGET", key, *["f%d" % j for j in range(nf)])
            # a hash evicted between its own HSETs comes back with the
            # later ones' fields (the CCHT's eviction is approximate LRU):
            # whatever is left, every command sees the same fields
            self.assertEqual(len(flat), 2 * hlen, key)
            here = {int(f[1:]) for f in flat[0::2]}
            self.assertEqual(len(here), hlen, key)
            self.assertEqual(vals, [b"%0100d" % j if j in here else None for j in range(nf)], key)
            self.assertEqual(pairs(flat), {b"f%d" % j: b"%0100d" % j for j in here}, key)
            kept += hlen > 0
            full += hlen == nf
        self.assertGreater(full, 5)
        self.assertLess(kept, n, "6 MB cannot hold 200 hashes of 42 KB: some were evicted")
        info = c.call("INFO", "stats").decode()
        evicted = int(info.split("evicted_keys:")[1].split()[0])
        # INFO counts hashes evicted (one per eviction: at most one per
        # HSET of a hash not left whole), not their chunks (hundreds each)
        self.assertGreaterEqual(evicted, n - kept)
        self.assertLessEqual(evicted, (nf // 100) * (n - full))

if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__], e2e_raw)
