#!/usr/bin/python3
"""test_zsets.py - the sorted set commands as Redis 7.0 answers them: ZADD
with NX/XX/GT/LT/CH/INCR and its errors, ZINCRBY, ZREM, ZCARD, ZSCORE,
ZMSCORE, ZRANK/ZREVRANK, ZCOUNT, ZLEXCOUNT, ZRANGE with BYSCORE/BYLEX/REV/
LIMIT/WITHSCORES and the older range forms, ZRANGESTORE, ZREMRANGEBY*,
ZPOPMIN/ZPOPMAX, ZRANDMEMBER, ZSCAN, scores as Redis formats them (inf,
-inf, 17 digits), RESP3 doubles and pairs, WRONGTYPE both ways, the last
member removing the key, a TTL kept by writes, keyspace events, MULTI and
Lua, TYPE / OBJECT ENCODING / SCAN TYPE, DUMP/RESTORE both ways with
redis-server, and a seeded random stream of sorted set commands whose
every reply must equal Redis's. Run by ctest (label e2e):
  /usr/bin/python3 test_zsets.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_raw  # noqa: E402
import e2e_server  # noqa: E402
from e2e_raw import WRONGTYPE, Base, BesideRedis  # noqa: E402
from test_tracking import Conn, Err  # noqa: E402

BIN = None


class ZSets(Base):
    def test_zadd_and_reads(self):
        c = self.c
        self.assertEqual(c.call("ZADD", "z", "1", "a", "2", "b", "3", "c"), 3)
        self.assertEqual(c.call("ZADD", "z", "1", "a", "5", "d"), 1)
        self.assertEqual(c.call("ZCARD", "z"), 4)
        self.assertEqual(c.call("ZCARD", "nokey"), 0)
        self.assertEqual(c.call("ZSCORE", "z", "b"), b"2")
        self.assertIsNone(c.call("ZSCORE", "z", "x"))
        self.assertIsNone(c.call("ZSCORE", "nokey", "x"))
        self.assertEqual(c.call("ZMSCORE", "z", "a", "x", "d"), [b"1", None, b"5"])
        self.assertEqual(c.call("ZMSCORE", "nokey", "a"), [None])
        self.assertEqual(c.call("ZRANGE", "z", "0", "-1"), [b"a", b"b", b"c", b"d"])
        self.assertEqual(c.call("ZRANGE", "z", "0", "-1", "WITHSCORES"),
                         [b"a", b"1", b"b", b"2", b"c", b"3", b"d", b"5"])
        self.assertEqual(c.call("ZREVRANGE", "z", "0", "1"), [b"d", b"c"])
        self.assertEqual(c.call("ZRANK", "z", "c"), 2)
        self.assertEqual(c.call("ZREVRANK", "z", "c"), 1)
        self.assertIsNone(c.call("ZRANK", "z", "x"))
        self.assertEqual(c.call("ZCOUNT", "z", "2", "(5"), 2)
        self.assertEqual(c.call("ZCOUNT", "z", "-inf", "+inf"), 4)
        self.assertEqual(c.call("ZADD", "z", "1.5", "a"), 0, "an update is not an add")
        self.assertEqual(c.call("ZSCORE", "z", "a"), b"1.5")
        self.assertEqual(c.call("ZADD", "z", "0.1", "f"), 1)
        self.assertEqual(c.call("ZSCORE", "z", "f"), b"0.10000000000000001", "17 digits as 7.0")
        self.assertEqual(c.call("ZADD", "z", "inf", "g", "-inf", "h"), 2)
        self.assertEqual(c.call("ZRANGE", "z", "0", "0", "WITHSCORES"), [b"h", b"-inf"])
        self.assertEqual(c.call("ZRANGE", "z", "-1", "-1", "WITHSCORES"), [b"g", b"inf"])
        self.assertEqual(c.call("ZADD", "t", "1", "b", "1", "a", "1", "c"), 3)
        self.assertEqual(c.call("ZRANGE", "t", "0", "-1"), [b"a", b"b", b"c"], "ties by member")

    def test_zadd_options(self):
        c = self.c
        c.call("ZADD", "z", "10", "a", "20", "b")
        self.assertEqual(c.call("ZADD", "z", "NX", "1", "a", "30", "c"), 1)
        self.assertEqual(c.call("ZSCORE", "z", "a"), b"10")
        self.assertEqual(c.call("ZADD", "z", "XX", "11", "a", "40", "d"), 0)
        self.assertEqual(c.call("ZSCORE", "z", "a"), b"11")
        self.assertIsNone(c.call("ZSCORE", "z", "d"))
        self.assertEqual(c.call("ZADD", "z", "CH", "12", "a", "20", "b", "50", "e"), 2)
        self.assertEqual(c.call("ZADD", "z", "GT", "CH", "5", "a", "25", "b"), 1)
        self.assertEqual(c.call("ZMSCORE", "z", "a", "b"), [b"12", b"25"])
        self.assertEqual(c.call("ZADD", "z", "LT", "CH", "5", "a", "99", "b", "7", "n"), 2)
        self.assertEqual(c.call("ZMSCORE", "z", "a", "b", "n"), [b"5", b"25", b"7"])
        self.assertEqual(c.call("ZADD", "z", "INCR", "2.5", "a"), b"7.5")
        self.assertIsNone(c.call("ZADD", "z", "NX", "INCR", "1", "a"))
        self.assertIsNone(c.call("ZADD", "z", "GT", "INCR", "-1", "a"))
        self.assertEqual(c.call("ZADD", "z", "XX", "INCR", "1", "a"), b"8.5")
        self.assertEqual(c.call("ZINCRBY", "z", "-0.5", "a"), b"8")
        self.assertEqual(c.call("ZINCRBY", "z", "3", "new"), b"3")
        self.assertEqual(c.call("ZINCRBY", "new", "1", "m"), b"1")
        c.call("ZADD", "inf", "inf", "m")
        self.assertEqual(c.call("ZINCRBY", "inf", "-inf", "m"),
                         Err("ERR resulting score is not a number (NaN)"))
        self.assertEqual(c.call("ZADD", "z", "NX", "XX", "1", "a"),
                         Err("ERR XX and NX options at the same time are not compatible"))
        for opts in (["GT", "LT"], ["NX", "GT"], ["NX", "LT"]):
            self.assertEqual(c.call("ZADD", "z", *opts, "1", "a"),
                             Err("ERR GT, LT, and/or NX options at the same time are not compatible"))
        self.assertEqual(c.call("ZADD", "z", "INCR", "1", "a", "2", "b"),
                         Err("ERR INCR option supports a single increment-element pair"))
        self.assertEqual(c.call("ZADD", "z", "1", "a", "2"), Err("ERR syntax error"))
        self.assertEqual(c.call("ZADD", "z", "NX", "1"), Err("ERR syntax error"))
        self.assertEqual(c.call("ZADD", "z", "x", "a"), Err("ERR value is not a valid float"))
        self.assertEqual(c.call("ZADD", "z", "nan", "a"), Err("ERR value is not a valid float"))
        self.assertEqual(c.call("ZINCRBY", "z", "x", "a"), Err("ERR value is not a valid float"))
        self.assertEqual(c.call("ZADD", "z"), Err("ERR wrong number of arguments for 'zadd' command"))

    def test_ranges(self):
        c = self.c
        c.call("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
        self.assertEqual(c.call("ZRANGE", "z", "2", "(4", "BYSCORE"), [b"b", b"c"])
        self.assertEqual(c.call("ZRANGE", "z", "(4", "2", "BYSCORE", "REV"), [b"c", b"b"])
        self.assertEqual(c.call("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2"),
                         [b"b", b"c"])
        self.assertEqual(c.call("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "-1"),
                         [b"b", b"c", b"d", b"e"])
        self.assertEqual(c.call("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2"), [])
        big = "9223372036854775807"
        self.assertEqual(c.call("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "3", big), [b"d", b"e"])
        self.assertEqual(c.call("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", big, big), [])
        self.assertEqual(c.call("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", big, "1"), [])
        self.assertEqual(c.call("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "4", big), [b"a"])
        self.assertEqual(c.call("ZRANGE", "z", "-" + big, big), [b"a", b"b", b"c", b"d", b"e"])
        self.assertEqual(c.call("ZRANGE", "z", "-9223372036854775808", "-9223372036854775808", "REV"), [])
        self.assertEqual(c.call("ZRANGE", "z", "0", "-9223372036854775808", "REV"), [])
        self.assertEqual(c.call("ZRANGEBYSCORE", "z", "2", "3", "WITHSCORES"),
                         [b"b", b"2", b"c", b"3"])
        self.assertEqual(c.call("ZREVRANGEBYSCORE", "z", "+inf", "4", "LIMIT", "0", "1"), [b"e"])
        self.assertEqual(c.call("ZRANGE", "z", "5", "1", "BYSCORE"), [])
        c.call("ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d")
        self.assertEqual(c.call("ZRANGEBYLEX", "l", "-", "+"), [b"a", b"b", b"c", b"d"])
        self.assertEqual(c.call("ZRANGEBYLEX", "l", "[b", "(d"), [b"b", b"c"])
        self.assertEqual(c.call("ZREVRANGEBYLEX", "l", "+", "(b"), [b"d", b"c"])
        self.assertEqual(c.call("ZRANGE", "l", "[a", "[c", "BYLEX", "REV", "LIMIT", "0", "2"), [])
        self.assertEqual(c.call("ZRANGE", "l", "[c", "[a", "BYLEX", "REV", "LIMIT", "0", "2"),
                         [b"c", b"b"])
        self.assertEqual(c.call("ZLEXCOUNT", "l", "(a", "+"), 3)
        self.assertEqual(c.call("ZRANGE", "z", "-2", "-1"), [b"d", b"e"])
        self.assertEqual(c.call("ZRANGE", "z", "3", "100"), [b"d", b"e"])
        self.assertEqual(c.call("ZRANGE", "z", "4", "2"), [])
        self.assertEqual(c.call("ZRANGE", "z", "0", "1", "REV"), [b"e", b"d"])
        self.assertEqual(c.call("ZRANGE", "nokey", "0", "-1"), [])
        # the errors
        self.assertEqual(c.call("ZRANGE", "z", "0", "1", "LIMIT", "0", "1"),
                         Err("ERR syntax error, LIMIT is only supported in combination with either "
                             "BYSCORE or BYLEX"))
        self.assertEqual(c.call("ZRANGE", "l", "-", "+", "BYLEX", "WITHSCORES"),
                         Err("ERR syntax error, WITHSCORES not supported in combination with BYLEX"))
        self.assertEqual(c.call("ZRANGE", "z", "a", "1"),
                         Err("ERR value is not an integer or out of range"))
        self.assertEqual(c.call("ZRANGE", "z", "x", "1", "BYSCORE"),
                         Err("ERR min or max is not a float"))
        self.assertEqual(c.call("ZCOUNT", "z", "1", "x"), Err("ERR min or max is not a float"))
        self.assertEqual(c.call("ZRANGEBYLEX", "l", "a", "+"),
                         Err("ERR min or max not valid string range item"))
        self.assertEqual(c.call("ZLEXCOUNT", "l", "-", "b"),
                         Err("ERR min or max not valid string range item"))
        self.assertEqual(c.call("ZRANGE", "z", "0", "1", "FOO"), Err("ERR syntax error"))
        self.assertEqual(c.call("ZRANGEBYSCORE", "z", "0", "1", "LIMIT", "0"), Err("ERR syntax error"))
        self.assertEqual(c.call("ZREVRANGE", "z", "0", "1", "BYSCORE"), Err("ERR syntax error"))

    def test_removals_and_pops(self):
        c = self.c
        c.call("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
        self.assertEqual(c.call("ZREM", "z", "a", "x"), 1)
        self.assertEqual(c.call("ZREMRANGEBYSCORE", "z", "(2", "3"), 1)
        self.assertEqual(c.call("ZRANGE", "z", "0", "-1"), [b"b", b"d", b"e"])
        self.assertEqual(c.call("ZREMRANGEBYRANK", "z", "-1", "-1"), 1)
        self.assertEqual(c.call("ZPOPMIN", "z"), [b"b", b"2"])
        self.assertEqual(c.call("ZPOPMAX", "z", "5"), [b"d", b"4"])
        self.assertEqual(c.call("EXISTS", "z"), 0, "the last member removed the key")
        self.assertEqual(c.call("ZPOPMIN", "z"), [])
        self.assertEqual(c.call("ZPOPMIN", "z", "0"), [])
        self.assertEqual(c.call("ZPOPMIN", "z", "-1"),
                         Err("ERR value is out of range, must be positive"))
        c.call("ZADD", "l", "0", "a", "0", "b", "0", "c")
        self.assertEqual(c.call("ZREMRANGEBYLEX", "l", "[a", "(c"), 2)
        self.assertEqual(c.call("ZREMRANGEBYLEX", "l", "-", "+"), 1)
        self.assertEqual(c.call("EXISTS", "l"), 0)
        self.assertEqual(c.call("ZREMRANGEBYRANK", "nokey", "0", "-1"), 0)
        c.call("ZADD", "z", "1", "a")
        self.assertEqual(c.call("ZREM", "z", "a"), 1)
        self.assertEqual(c.call("EXISTS", "z"), 0)

    def test_rangestore_randmember_scan(self):
        c = self.c
        c.call("ZADD", "src", "1", "a", "2", "b", "3", "c")
        self.assertEqual(c.call("ZRANGESTORE", "dst", "src", "0", "1"), 2)
        self.assertEqual(c.call("ZRANGE", "dst", "0", "-1", "WITHSCORES"), [b"a", b"1", b"b", b"2"])
        self.assertEqual(c.call("ZRANGESTORE", "dst", "src", "+inf", "2", "BYSCORE", "REV"), 2)
        self.assertEqual(c.call("ZRANGE", "dst", "0", "-1"), [b"b", b"c"])
        c.call("SET", "str", "v")
        self.assertEqual(c.call("ZRANGESTORE", "str", "src", "5", "6"), 0)
        self.assertEqual(c.call("EXISTS", "str"), 0, "an empty result deletes the destination")
        self.assertEqual(c.call("ZRANGESTORE", "dst", "nokey", "0", "-1"), 0)
        self.assertEqual(c.call("EXISTS", "dst"), 0)
        m = c.call("ZRANDMEMBER", "src")
        self.assertIn(m, (b"a", b"b", b"c"))
        self.assertEqual(sorted(c.call("ZRANDMEMBER", "src", "5")), [b"a", b"b", b"c"])
        self.assertEqual(len(c.call("ZRANDMEMBER", "src", "-5")), 5)
        pairs = c.call("ZRANDMEMBER", "src", "2", "WITHSCORES")
        self.assertEqual(len(pairs), 4)
        self.assertIsNone(c.call("ZRANDMEMBER", "nokey"))
        self.assertEqual(c.call("ZRANDMEMBER", "nokey", "3"), [])
        self.assertEqual(c.call("ZRANDMEMBER", "src", "1", "x"), Err("ERR syntax error"))
        cur, items = c.call("ZSCAN", "src", "0")
        self.assertEqual(cur, b"0")
        self.assertEqual(items, [b"a", b"1", b"b", b"2", b"c", b"3"])
        self.assertEqual(c.call("ZSCAN", "src", "0", "MATCH", "b*")[1], [b"b", b"2"])

    def test_resp3(self):
        c3 = Conn(self.srv.port, 3)
        try:
            c3.call("ZADD", "z", "1.5", "a", "2", "b")
            self.assertEqual(c3.call("ZSCORE", "z", "a"), 1.5)
            self.assertEqual(c3.call("ZRANGE", "z", "0", "-1", "WITHSCORES"), [[b"a", 1.5], [b"b", 2.0]])
            self.assertEqual(c3.call("ZMSCORE", "z", "b", "x"), [2.0, None])
            self.assertEqual(c3.call("ZINCRBY", "z", "1", "b"), 3.0)
            self.assertEqual(c3.call("ZPOPMIN", "z"), [b"a", 1.5])
            self.assertEqual(c3.call("ZPOPMAX", "z", "1"), [[b"b", 3.0]])
        finally:
            c3.close()

    def test_types_ttl_events(self):
        c = self.c
        c.call("SET", "s", "v")
        self.assertEqual(c.call("ZADD", "s", "1", "a"), WRONGTYPE)
        self.assertEqual(c.call("ZSCORE", "s", "a"), WRONGTYPE)
        self.assertEqual(c.call("ZRANGE", "s", "0", "1"), WRONGTYPE)
        self.assertEqual(c.call("ZREM", "s", "a"), WRONGTYPE)
        self.assertEqual(c.call("ZCARD", "s"), WRONGTYPE)
        c.call("ZADD", "z", "1", "a")
        self.assertEqual(c.call("GET", "z"), WRONGTYPE)
        self.assertEqual(c.call("HGET", "z", "a"), WRONGTYPE)
        self.assertEqual(c.call("SCARD", "z"), WRONGTYPE)
        self.assertEqual(c.call("LLEN", "z"), WRONGTYPE)
        self.assertEqual(c.call("TYPE", "z"), "zset")
        self.assertEqual(c.call("OBJECT", "ENCODING", "z"), b"listpack")
        c.call("ZADD", "big", "1", "x" * 65)
        self.assertEqual(c.call("OBJECT", "ENCODING", "big"), b"skiplist")
        self.assertEqual(sorted(c.call("SCAN", "0", "TYPE", "zset", "COUNT", "100")[1]),
                         [b"big", b"z"])
        c.call("EXPIRE", "z", "100")
        c.call("ZADD", "z", "2", "b")
        c.call("ZINCRBY", "z", "1", "a")
        c.call("ZREM", "z", "b")
        self.assertGreater(c.call("TTL", "z"), 90, "writes keep the TTL")
        c.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
        sub = Conn(self.srv.port)
        try:
            sub.call("PSUBSCRIBE", "__keyevent@0__:*")
            c.call("ZADD", "e", "1", "a", "2", "b")
            c.call("ZINCRBY", "e", "1", "a")
            c.call("ZREM", "e", "a")
            c.call("ZPOPMIN", "e")
            c.call("ZADD", "e", "1", "a", "2", "b")
            c.call("ZREMRANGEBYSCORE", "e", "-inf", "+inf")
            got = [sub.read()[2] for _ in range(8)]
            self.assertEqual(got, [b"__keyevent@0__:" + e for e in (
                b"zadd", b"zincr", b"zrem", b"zpopmin", b"del", b"zadd", b"zremrangebyscore",
                b"del")])
        finally:
            sub.close()

    def test_multi_lua_dump(self):
        c = self.c
        c.call("MULTI")
        c.call("ZADD", "z", "1", "a", "2", "b")
        c.call("ZRANGE", "z", "0", "-1", "WITHSCORES")
        c.call("ZPOPMAX", "z")
        self.assertEqual(c.call("EXEC"), [2, [b"a", b"1", b"b", b"2"], [b"b", b"2"]])
        self.assertEqual(c.call("EVAL", "redis.call('zadd', KEYS[1], 3, 'c') "
                                "return redis.call('zrange', KEYS[1], 0, -1, 'withscores')",
                                "1", "z"), [b"a", b"1", b"c", b"3"])
        d = c.call("DUMP", "z")
        self.assertEqual(c.call("RESTORE", "z2", "0", d), "OK")
        self.assertEqual(c.call("ZRANGE", "z2", "0", "-1", "WITHSCORES"), [b"a", b"1", b"c", b"3"])
        self.assertEqual(c.call("RENAME", "z2", "z3"), "OK")
        self.assertEqual(c.call("ZSCORE", "z3", "c"), b"3")
        self.assertEqual(c.call("COPY", "z3", "z4"), 1)
        self.assertEqual(c.call("ZCARD", "z4"), 2)


    def test_algebra(self):
        c = self.c
        c.call("ZADD", "a", "1", "x", "2", "y", "3", "z")
        c.call("ZADD", "b", "10", "y", "20", "z", "30", "w")
        c.call("SADD", "s", "x", "w")
        self.assertEqual(c.call("ZUNION", "2", "a", "b", "WITHSCORES"),
                         [b"x", b"1", b"y", b"12", b"z", b"23", b"w", b"30"])
        self.assertEqual(c.call("ZINTER", "2", "a", "b", "WEIGHTS", "2", "1", "AGGREGATE", "MIN",
                                "WITHSCORES"), [b"y", b"4", b"z", b"6"])
        self.assertEqual(c.call("ZINTER", "2", "a", "b", "AGGREGATE", "MAX"), [b"y", b"z"])
        self.assertEqual(c.call("ZDIFF", "2", "a", "b", "WITHSCORES"), [b"x", b"1"])
        self.assertEqual(c.call("ZUNION", "2", "a", "s", "WITHSCORES"),
                         [b"w", b"1", b"x", b"2", b"y", b"2", b"z", b"3"], "a set scores 1")
        self.assertEqual(c.call("ZINTER", "2", "a", "nokey"), [])
        self.assertEqual(c.call("ZINTERCARD", "2", "a", "b"), 2)
        self.assertEqual(c.call("ZINTERCARD", "2", "a", "b", "LIMIT", "1"), 1)
        self.assertEqual(c.call("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "0.5"), 4)
        self.assertEqual(c.call("ZRANGE", "d", "0", "-1", "WITHSCORES"),
                         [b"x", b"1", b"y", b"7", b"z", b"13", b"w", b"15"])
        self.assertEqual(c.call("ZINTERSTORE", "d", "2", "a", "nokey"), 0)
        self.assertEqual(c.call("EXISTS", "d"), 0, "an empty result deletes the destination")
        self.assertEqual(c.call("ZDIFFSTORE", "d", "1", "a"), 3)
        c.call("ZADD", "neg", "-1", "m")
        self.assertEqual(c.call("ZUNION", "1", "neg", "WEIGHTS", "0", "WITHSCORES"), [b"m", b"-0"])
        self.assertEqual(c.call("ZUNIONSTORE", "d", "1", "neg", "WEIGHTS", "0"), 1)
        self.assertEqual(c.call("ZSCORE", "d", "m"), b"0", "stored, -0 is 0")
        self.assertEqual(c.call("ZINCRBY", "d2", "-0", "m"), b"-0")
        self.assertEqual(c.call("ZSCORE", "d2", "m"), b"0")
        c.call("ZADD", "i", "inf", "m")
        self.assertEqual(c.call("ZUNION", "1", "i", "WEIGHTS", "0", "WITHSCORES"), [b"m", b"0"])
        c.call("ZADD", "j", "-inf", "m")
        self.assertEqual(c.call("ZUNION", "2", "i", "j", "WITHSCORES"), [b"m", b"0"])
        c.call("SET", "str", "v")
        self.assertEqual(c.call("ZUNION", "2", "a", "str"), WRONGTYPE)
        self.assertEqual(c.call("ZUNIONSTORE", "d", "1", "str"), WRONGTYPE)
        self.assertEqual(c.call("ZUNION", "0", "a"),
                         Err("ERR at least 1 input key is needed for 'zunion' command"))
        self.assertEqual(c.call("ZINTERSTORE", "d", "0", "a"),
                         Err("ERR at least 1 input key is needed for 'zinterstore' command"))
        self.assertEqual(c.call("ZUNION", "3", "a", "b"), Err("ERR syntax error"))
        self.assertEqual(c.call("ZUNION", "x", "a"), Err("ERR value is not an integer or out of range"))
        self.assertEqual(c.call("ZUNION", "1", "a", "WEIGHTS", "x"), Err("ERR weight value is not a float"))
        self.assertEqual(c.call("ZUNION", "1", "a", "WEIGHTS", "1", "2"), Err("ERR syntax error"))
        self.assertEqual(c.call("ZUNION", "1", "a", "AGGREGATE", "avg"), Err("ERR syntax error"))
        self.assertEqual(c.call("ZDIFF", "1", "a", "WEIGHTS", "1"), Err("ERR syntax error"))
        self.assertEqual(c.call("ZUNIONSTORE", "d", "1", "a", "WITHSCORES"), Err("ERR syntax error"))
        self.assertEqual(c.call("ZINTERCARD", "1", "a", "LIMIT", "-1"), Err("ERR LIMIT can't be negative"))
        self.assertEqual(c.call("ZINTERCARD", "1", "a", "WITHSCORES"), Err("ERR syntax error"))

    def test_zmpop(self):
        c = self.c
        c.call("ZADD", "b", "1", "x", "2", "y", "3", "z")
        self.assertEqual(c.call("ZMPOP", "2", "a", "b", "MIN"), [b"b", [[b"x", b"1"]]])
        self.assertEqual(c.call("ZMPOP", "2", "a", "b", "MAX", "COUNT", "5"),
                         [b"b", [[b"z", b"3"], [b"y", b"2"]]])
        self.assertIsNone(c.call("ZMPOP", "2", "a", "b", "MIN"))
        self.assertEqual(c.call("EXISTS", "b"), 0)
        self.assertEqual(c.call("ZMPOP", "0", "a", "MIN"), Err("ERR numkeys should be greater than 0"))
        self.assertEqual(c.call("ZMPOP", "1", "a", "UP"), Err("ERR syntax error"))
        self.assertEqual(c.call("ZMPOP", "1", "a", "MIN", "COUNT", "0"),
                         Err("ERR count should be greater than 0"))
        c.call("ZADD", "b", "1", "x")
        self.assertEqual(c.call("BZPOPMIN", "a", "b", "0"), [b"b", b"x", b"1"])
        c.call("ZADD", "b", "1", "x", "2", "y")
        self.assertEqual(c.call("BZPOPMAX", "b", "0"), [b"b", b"y", b"2"])
        self.assertEqual(c.call("BZMPOP", "0", "1", "b", "MIN", "COUNT", "3"), [b"b", [[b"x", b"1"]]])
        c.send("BZPOPMIN", "b", "0.1")
        self.assertEqual(c._line(), b"*-1")
        c.call("SET", "s", "v")
        self.assertEqual(c.call("BZPOPMIN", "s", "0"), WRONGTYPE)
        self.assertEqual(c.call("BZPOPMIN", "b", "x"), Err("ERR timeout is not a float or out of range"))
        c.call("MULTI")
        c.call("BZPOPMIN", "b", "0")
        self.assertEqual(c.call("EXEC"), [None])
        self.assertIsNone(c.call("EVAL", "return redis.call('bzmpop', 0, 1, KEYS[1], 'min')", "1", "b"))


class ZSetsBesideRedis(BesideRedis):
    def test_dump_both_ways(self):
        members = [("1", "a"), ("-2.5", "b"), ("inf", "c"), ("3", "dd" * 40), ("0.1", "e")]
        for conn in (self.c, self.rc):
            for s, m in members:
                conn.call("ZADD", "small", s, m)
            for i in range(200):
                conn.call("ZADD", "large", str(i * 1.5), "m%d" % i)
        for src, dst in ((self.rc, self.c), (self.c, self.rc)):
            for k in ("small", "large"):
                d = src.call("DUMP", k)
                self.assertEqual(dst.call("RESTORE", k + ":copy", "0", d), "OK")
        for k in ("small", "large", "small:copy", "large:copy"):
            self.assertEqual(self.c.call("ZRANGE", k, "0", "-1", "WITHSCORES"),
                             self.rc.call("ZRANGE", k, "0", "-1", "WITHSCORES"), k)
            self.assertEqual(self.c.call("OBJECT", "ENCODING", k),
                             self.rc.call("OBJECT", "ENCODING", k), k)

    def test_random_stream(self):
        rng = random.Random(1313)
        keys = ["z1", "z2", "z3"]
        members = ["a", "b", "c", "d", "e", "f", "g"]
        scores = ["0", "1", "-1", "2.5", "1e3", "-inf", "+inf", "(1", "(2.5"]
        lexes = ["-", "+", "[a", "(b", "[c", "(e", "[g"]

        def sc():
            return rng.choice(scores[:7])

        def bound():
            return rng.choice(scores)

        def idx():
            return str(rng.randrange(-6, 7))

        for step in range(2500):
            k = rng.choice(keys)
            m = rng.choice(members)
            r = rng.randrange(21)
            if r < 4:
                opts = rng.choice([[], ["NX"], ["XX"], ["GT"], ["LT"], ["CH"], ["GT", "CH"],
                                   ["XX", "CH"], ["INCR"]])
                n = 1 if "INCR" in opts else rng.randrange(1, 4)
                cmd = ["ZADD", k] + opts
                for _ in range(n):
                    cmd += [sc(), rng.choice(members)]
            elif r == 4:
                cmd = ["ZINCRBY", k, rng.choice(["1", "-2", "0.5"]), m]
            elif r == 5:
                cmd = ["ZREM", k, m, rng.choice(members)]
            elif r == 6:
                cmd = [rng.choice(["ZCARD", "TYPE", "EXISTS"]), k]
            elif r == 7:
                cmd = [rng.choice(["ZSCORE", "ZRANK", "ZREVRANK"]), k, m]
            elif r == 8:
                cmd = ["ZMSCORE", k, m, rng.choice(members)]
            elif r == 9:
                cmd = ["ZRANGE", k, idx(), idx()] + rng.choice([[], ["REV"], ["WITHSCORES"],
                                                                ["REV", "WITHSCORES"]])
            elif r == 10:
                lim = rng.choice([[], ["LIMIT", str(rng.randrange(-1, 4)), str(rng.randrange(-1, 3))]])
                rev = rng.random() < 0.5
                cmd = ["ZRANGE", k, bound(), bound(), "BYSCORE"] + (["REV"] if rev else []) + lim + \
                    rng.choice([[], ["WITHSCORES"]])
            elif r == 11:
                cmd = [rng.choice(["ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZLEXCOUNT"]), k,
                       rng.choice(lexes), rng.choice(lexes)]
            elif r == 12:
                cmd = [rng.choice(["ZCOUNT", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]), k, bound(),
                       bound()]
            elif r == 13:
                cmd = ["ZREMRANGEBYSCORE", k, bound(), bound()]
            elif r == 14:
                cmd = ["ZREMRANGEBYRANK", k, idx(), idx()]
            elif r == 15:
                cmd = ["ZREMRANGEBYLEX", k, rng.choice(lexes), rng.choice(lexes)]
            elif r == 16:
                cmd = [rng.choice(["ZPOPMIN", "ZPOPMAX"]), k] + rng.choice([[], ["2"], ["0"]])
            elif r == 17:
                cmd = ["ZRANGESTORE", rng.choice(keys), k, idx(), idx()]
            elif r == 18:
                cmd = rng.choice([["ZREVRANGE", k, idx(), idx(), "WITHSCORES"],
                                  ["ZMPOP", "2", k, rng.choice(keys), rng.choice(["MIN", "MAX"]),
                                   "COUNT", "2"]])
            elif r == 19:
                op = rng.choice(["ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE",
                                 "ZDIFFSTORE", "ZINTERCARD"])
                ks = rng.sample(keys, rng.randrange(1, 4))
                cmd = [op] + ([rng.choice(keys)] if op.endswith("STORE") else []) + \
                    [str(len(ks))] + ks
                if op in ("ZUNION", "ZINTER", "ZUNIONSTORE", "ZINTERSTORE"):
                    if rng.random() < 0.5:
                        cmd += ["WEIGHTS"] + [rng.choice(["1", "2", "0.5", "-1", "0"]) for _ in ks]
                    if rng.random() < 0.5:
                        cmd += ["AGGREGATE", rng.choice(["SUM", "MIN", "MAX"])]
                if op in ("ZUNION", "ZINTER", "ZDIFF") and rng.random() < 0.7:
                    cmd += ["WITHSCORES"]
            else:
                cmd = rng.choice([["DEL", k], ["SET", k, "v"], ["ZSCAN", k, "0"]])
            got, want = self.c.call(*cmd), self.rc.call(*cmd)
            self.assertEqual(got, want, "step %d: %r" % (step, cmd))


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__], e2e_raw)
