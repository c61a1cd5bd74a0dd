#!/usr/bin/python3
"""test_command_keys.py - where a command's keys are, as Redis 7.0 reports
them: COMMAND GETKEYS and GETKEYSANDFLAGS (keys found by the key specs,
by the finders of SORT and MIGRATE, none for scripts without keys, the
flags of each key, SET's and BITFIELD's flags by their arguments) and
their errors (unknown command, no key arguments, wrong count, specs that
cannot apply); COMMAND INFO's first key, last key and step, its
movablekeys and pubsub flags, which cluster clients (redis-py's
RedisCluster) use to find a command's slot, its other flags, ACL
categories and key specs, for every command and subcommand both servers
have, against Debian's redis-server (notes aside: cudis keeps none). Run
by ctest (label e2e):
  /usr/bin/python3 test_command_keys.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_raw  # noqa: E402
import e2e_server  # noqa: E402
from e2e_raw import Base, BesideRedis  # noqa: E402
from test_tracking import Err  # noqa: E402

BIN = None


def b(*xs):
    return [x.encode() for x in xs]


class GetKeys(Base):
    def test_keys(self):
        cases = [
            (["GET", "a"], b("a")),
            (["MSET", "a", "1", "b", "2"], b("a", "b")),
            (["BLPOP", "a", "b", "0"], b("a", "b")),
            (["BITOP", "AND", "d", "a", "b"], b("d", "a", "b")),
            (["OBJECT", "ENCODING", "k"], b("k")),
            (["MEMORY", "USAGE", "k"], b("k")),
            (["ZUNIONSTORE", "d", "2", "x", "y", "WEIGHTS", "1", "2"], b("d", "x", "y")),
            (["ZINTERSTORE", "d", "3", "a", "b", "c"], b("d", "a", "b", "c")),
            (["LMPOP", "2", "x", "y", "LEFT"], b("x", "y")),
            (["BLMPOP", "0", "2", "a", "b", "LEFT"], b("a", "b")),
            (["SINTERCARD", "2", "a", "b", "LIMIT", "1"], b("a", "b")),
            (["EVAL", "return 1", "2", "k1", "k2", "a"], b("k1", "k2")),
            (["EVAL", "return 1", "0"], []),
            (["FCALL", "f", "0"], []),
            (["SORT", "l"], b("l")),
            (["SORT", "l", "BY", "w*", "GET", "h*", "STORE", "dst"], b("l", "dst")),
            (["MIGRATE", "h", "1", "key", "0", "5"], b("key")),
            (["MIGRATE", "h", "1", "", "0", "5", "KEYS", "k1", "k2"], b("k1", "k2")),
            (["SET", "k", "v", "GET"], b("k")),
            (["BITFIELD_RO", "k", "GET", "u8", "0"], b("k")),
        ]
        for cmd, want in cases:
            self.assertEqual(self.c.call("COMMAND", "GETKEYS", *cmd), want, cmd)

    def test_keys_and_flags(self):
        def kf(key, *flags):  # the flags are status replies
            return [key.encode(), list(flags)]

        cases = [
            (["SET", "k", "v"], [kf("k", "OW", "update")]),
            (["SET", "k", "v", "GET"], [kf("k", "RW", "access", "update")]),
            (["GET", "k"], [kf("k", "RO", "access")]),
            (["LMOVE", "a", "b", "LEFT", "RIGHT"],
             [kf("a", "RW", "access", "delete"), kf("b", "RW", "insert")]),
            (["SORT", "l", "BY", "w", "STORE", "d"], [kf("l", "RO", "access"), kf("d", "OW", "update")]),
            (["SORT_RO", "l", "BY", "w"], [kf("l", "RO", "access")]),
            (["MIGRATE", "h", "1", "", "0", "5", "KEYS", "k1", "k2"],
             [kf("k1", "RW", "access", "delete"), kf("k2", "RW", "access", "delete")]),
            (["MIGRATE", "h", "1", "k", "0", "5"], [kf("k", "RW", "access", "delete")]),
            (["BITFIELD", "k", "GET", "u8", "0"], [kf("k", "RO", "access")]),
            (["BITFIELD", "k", "SET", "u8", "0", "1"], [kf("k", "RW", "access", "update")]),
            (["ZUNIONSTORE", "d", "1", "a"], [kf("d", "OW", "update"), kf("a", "RO", "access")]),
        ]
        for cmd, want in cases:
            self.assertEqual(self.c.call("COMMAND", "GETKEYSANDFLAGS", *cmd), want, cmd)

    def test_errors(self):
        c = self.c
        for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
            self.assertEqual(c.call("COMMAND", sub, "NOSUCH", "a"), Err("ERR Invalid command specified"))
            self.assertEqual(c.call("COMMAND", sub, "PING", "x"),
                             Err("ERR The command has no key arguments"))
            self.assertEqual(c.call("COMMAND", sub, "OBJECT", "HELP"),
                             Err("ERR The command has no key arguments"))
            self.assertEqual(c.call("COMMAND", sub, "CONFIG", "GET", "x"),
                             Err("ERR The command has no key arguments"))
            self.assertEqual(c.call("COMMAND", sub, "GET", "a", "b"),
                             Err("ERR Invalid number of arguments specified for command"))
            self.assertEqual(c.call("COMMAND", sub, "MSET", "a"),
                             Err("ERR Invalid number of arguments specified for command"))
            # a count the specs cannot apply: no keys, as Redis's finders give
            for cmd in (["LMPOP", "x", "a", "LEFT"], ["LMPOP", "5", "a", "b", "LEFT"],
                        ["LMPOP", "0", "a", "LEFT"], ["ZINTERSTORE", "d", "0", "a"]):
                self.assertEqual(c.call("COMMAND", sub, *cmd),
                                 Err("ERR Invalid arguments specified for command"), cmd)
            # a script needs no key (no_mandatory_keys): an empty list
            self.assertEqual(c.call("COMMAND", sub, "EVAL", "x", "3", "a"), [])
            for argv in ([], ["GET"]):
                self.assertEqual(c.call("COMMAND", sub, *argv),
                                 Err("ERR wrong number of arguments for 'command|%s' command"
                                     % sub.lower()))

    def test_legacy_range(self):
        """What redis-py's cluster client reads: a movable command's keys
        come from COMMAND GETKEYS, the others' from first/last/step."""
        def info(name):
            i = self.c.call("COMMAND", "INFO", name)[0]
            return i[3], i[4], i[5], "movablekeys" in i[2]

        self.assertEqual(info("get"), (1, 1, 1, False))
        self.assertEqual(info("mset"), (1, -1, 2, False))
        self.assertEqual(info("blpop"), (1, -2, 1, False))
        self.assertEqual(info("bitop"), (2, -1, 1, False))
        self.assertEqual(info("zunionstore"), (1, 1, 1, True))
        self.assertEqual(info("lmpop"), (0, 0, 0, True))
        self.assertEqual(info("sintercard"), (0, 0, 0, True))
        self.assertEqual(info("eval"), (0, 0, 0, True))
        self.assertEqual(info("migrate"), (3, 3, 1, True))
        self.assertEqual(info("sort"), (1, 1, 1, True))
        self.assertEqual(info("object|encoding"), (2, 2, 1, False))
        flags = self.c.call("COMMAND", "INFO", "eval")[0][2]
        self.assertIn("no_mandatory_keys", flags)


class BesideRedisInfo(BesideRedis):
    def test_every_command_places_keys_as_redis(self):
        def specs(i):
            out = []
            for s in i[8]:
                d = dict(zip(s[0::2], s[1::2]))
                d.pop(b"notes", None)
                out.append(d)
            return out

        theirs = set(self.rc.call("COMMAND", "LIST"))
        ours = [n for n in self.c.call("COMMAND", "LIST") if n in theirs]
        self.assertGreater(len(ours), 250)
        for n in ours:
            mine = self.c.call("COMMAND", "INFO", n)[0]
            ref = self.rc.call("COMMAND", "INFO", n)[0]
            self.assertEqual(mine[1], ref[1], "%s: arity" % n)
            self.assertEqual(mine[3:6], ref[3:6], "%s: first, last, step" % n)
            # every flag (noscript, allow_busy, loading... change what runs
            # where) and ACL category, in Redis's order
            self.assertEqual(mine[2], ref[2], "%s: flags" % n)
            self.assertEqual(sorted(mine[6]), sorted(ref[6]), "%s: ACL categories" % n)
            self.assertEqual(specs(mine), specs(ref), "%s: key specs" % n)
            subs = {s[0]: s for s in ref[9]}
            for s in mine[9]:
                if s[0] in subs:
                    self.assertEqual(s[2], subs[s[0]][2], "%s: flags" % s[0])
                    self.assertEqual(sorted(s[6]), sorted(subs[s[0]][6]),
                                     "%s: ACL categories" % s[0])


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__], e2e_raw)
