#!/usr/bin/python3
"""test_overflow.py - numeric arguments at the edges of 64 bits (offsets,
lengths, counts, timeouts) get Redis's replies, and the server neither
overflows (the ASan/UBSan run of this suite aborts on a signed overflow)
nor stops: issue 12's "Signed overflow in SETRANGE" and its audit, plus
MEMORY USAGE SAMPLES -1. Validated against redis-server first.
  /usr/bin/python3 test_overflow.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402
from test_tracking import Base, Err  # noqa: E402

BIN = None

MAX = "9223372036854775807"
MIN = "-9223372036854775808"
BIG = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
NOINT = "ERR value is not an integer or out of range"
BITOFF = "ERR bit offset is not an integer or out of range"

CASES = [
    (("SET", "k", "abc"), "OK"),
    (("SETRANGE", "k", MAX, "ab"), Err(BIG)),
    (("SETRANGE", "k", "9223372036854775806", "ab"), Err(BIG)),
    (("SETRANGE", "k", "536870911", "ab"), Err(BIG)),
    (("GETRANGE", "k", MIN, MAX), b"abc"),
    (("GETRANGE", "k", MAX, MIN), b""),
    (("SUBSTR", "k", MIN, "-1"), b"abc"),
    (("BITFIELD", "k", "GET", "u8", "#" + MAX), Err(BITOFF)),
    (("BITFIELD", "k", "SET", "i64", "#1152921504606846975", "1"), Err(BITOFF)),
    (("BITFIELD", "k", "INCRBY", "u8", MAX, "1"), Err(BITOFF)),
    (("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "i64", "0", MAX), [None]),
    (("BITFIELD", "k", "INCRBY", "i64", "0", MAX), [-2206092015806971905]),
    (("BITFIELD", "k", "INCRBY", "i64", "0", MIN), [7017280021047803903]),
    (("SETBIT", "k", MAX, "1"), Err(BITOFF)),
    (("GETBIT", "k", MAX), Err(BITOFF)),
    (("BITCOUNT", "k", MIN, MAX, "BIT"), 49),
    (("BITCOUNT", "k", "0", MIN, "BYTE"), 3),
    (("BITPOS", "k", "1", MIN, MAX, "BIT"), 1),
    (("BITPOS", "k", "0", MAX, MIN), -1),
    (("EXPIRE", "k", MAX), Err("ERR invalid expire time in 'expire' command")),
    (("PEXPIRE", "k", MAX), Err("ERR invalid expire time in 'pexpire' command")),
    (("EXPIREAT", "k", MAX), Err("ERR invalid expire time in 'expireat' command")),
    (("SET", "x", "v", "EX", MAX), Err("ERR invalid expire time in 'set' command")),
    (("SET", "x", "v", "PX", MAX), Err("ERR invalid expire time in 'set' command")),
    (("SET", "x", "v", "EXAT", MAX), Err("ERR invalid expire time in 'set' command")),
    (("GETEX", "k", "EX", MAX), Err("ERR invalid expire time in 'getex' command")),
    (("SETEX", "x", MAX, "v"), Err("ERR invalid expire time in 'setex' command")),
    (("PSETEX", "x", MAX, "v"), Err("ERR invalid expire time in 'psetex' command")),
    (("SET", "n", MAX), "OK"),
    (("INCR", "n"), Err("ERR increment or decrement would overflow")),
    (("INCRBY", "n", MAX), Err("ERR increment or decrement would overflow")),
    (("DECRBY", "n", MIN), Err("ERR decrement would overflow")),
    (("SET", "n", MIN), "OK"),
    (("DECR", "n"), Err("ERR increment or decrement would overflow")),
    (("DECRBY", "n", MAX), Err("ERR increment or decrement would overflow")),
    (("SCAN", "0", "COUNT", MAX), None),  # any answer; the server must stay up
    (("SLOWLOG", "GET", MIN), Err("ERR count should be greater than or equal to -1")),
    (("MEMORY", "USAGE", "k", "SAMPLES", "-1"), Err("ERR syntax error")),
    (("LCS", "k", "k", "MINMATCHLEN", MAX), b"abb\xff\xff\xff\xff\xff"),
    (("CLIENT", "PAUSE", MAX, "WRITE"), "OK"),
    (("CLIENT", "UNPAUSE"), "OK"),
    (("WAIT", "0", MAX), 0),
    (("PING",), "PONG"),
    # MSET keeps the last of a repeated key; MSETNX counts a key once
    (("MSET", "d", "1", "e", "2", "d", "3", "d", "4"), "OK"),
    (("MGET", "d", "e"), [b"4", b"2"]),
    (("MSETNX", "g", "1", "g", "2"), 1),
    (("GET", "g"), b"2"),
    (("MSETNX", "g", "3", "h", "4"), 0),
    (("EXISTS", "h"), 0),
]


class Overflow(Base):
    def test_edges_of_64_bits(self):
        a = self.conn()
        for args, want in CASES:
            got = a.call(*args)
            if want is not None:
                self.assertEqual(got, want, args)


    def test_big_mset_with_repeats(self):
        a = self.conn()
        args = ["MSET"]
        for rnd in range(2):
            for i in range(3000):
                args += ["m%d" % i, "%d-%d" % (rnd, i)]
        self.assertEqual(a.call(*args), "OK")
        got = a.call("MGET", *["m%d" % i for i in range(3000)])
        self.assertEqual(got, [b"1-%d" % i for i in range(3000)])
        self.assertEqual(a.call("DBSIZE"), 3000)


if __name__ == "__main__":
    import test_tracking
    e2e_server.main(sys.modules[__name__], test_tracking)
