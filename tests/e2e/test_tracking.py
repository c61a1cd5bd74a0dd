#!/usr/bin/python3
"""test_tracking.py - client-side caching (CLIENT TRACKING) and keyspace
notifications as Redis 7 sends them, over raw RESP2/RESP3 connections (the
push frames are the point): invalidation after another client's write, the
writer's own, NOLOOP, OPTIN/OPTOUT with CLIENT CACHING (one command, or a
whole transaction), BCAST with prefixes, REDIRECT to a RESP3 client and to
a RESP2 client subscribed to __redis__:invalidate, broken redirections,
flushes, TRACKINGINFO/GETREDIR/CLIENT LIST, the option errors, RESET,
tracking-table-max-keys; notify-keyspace-events parsing and the events of
the string and keyspace commands (new, keymiss included). Validated against
redis-server first. Run by ctest (label e2e):
  /usr/bin/python3 test_tracking.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None


class Conn:
    """A raw RESP connection: send commands, read whole frames (pushes too)."""

    def __init__(self, port, proto=2):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        if proto == 3:
            self.call("HELLO", "3")

    def close(self):
        self.s.close()

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)

    def _line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise EOFError("connection closed")
            self.buf += d
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _bytes(self, n):
        while len(self.buf) < n + 2:
            d = self.s.recv(65536)
            if not d:
                raise EOFError("connection closed")
            self.buf += d
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        """One frame: push frames come back as ('push', [...])."""
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+",):
            return rest.decode()
        if t == b"-":
            return Err(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"_":
            return None
        if t == b",":
            return float(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._bytes(n)
        if t == b"=":
            return self._bytes(int(rest))[4:]
        if t in (b"*", b"~", b">"):
            n = int(rest)
            if n < 0:
                return None
            items = [self.read() for _ in range(n)]
            return ("push", items) if t == b">" else items
        if t == b"%":
            n = int(rest)
            d = {}
            for _ in range(n):
                k = self.read()
                d[k] = self.read()
            return d
        raise AssertionError("unexpected frame %r" % line)

    def call(self, *args):
        self.send(*args)
        return self.read()

    def nothing_more(self, wait=0.2):
        """True when nothing else arrives within `wait` seconds."""
        if self.buf:
            return False
        self.s.settimeout(wait)
        try:
            d = self.s.recv(65536)
        except socket.timeout:
            return True
        finally:
            self.s.settimeout(5)
        self.buf += d
        return False


class Err(str):
    """An error reply (compares by its text)."""

    def __repr__(self):
        return "Err(%s)" % str.__repr__(self)


def inval(keys):
    return ("push", [b"invalidate", keys])


def info_field(c, section, field):
    """An integer field of INFO <section>."""
    for line in c.call("INFO", section).decode().split("\r\n"):
        if line.startswith(field + ":"):
            return int(line.split(":")[1])
    raise AssertionError(field)


class Base(unittest.TestCase):
    def server_args(self):
        return ()

    def setUp(self):
        self.srv = e2e_server.Server(BIN, self.server_args())
        self.conns = []

    def conn(self, proto=2):
        c = Conn(self.srv.port, proto)
        self.conns.append(c)
        return c

    def tearDown(self):
        for c in self.conns:
            c.close()
        self.assertEqual(self.srv.stop(), 0, "server did not exit 0 on SIGTERM")


class Tracking(Base):
    def test_invalidation_after_another_clients_write(self):
        a, b = self.conn(3), self.conn()
        self.assertEqual(a.call("CLIENT", "TRACKING", "on"), "OK")
        self.assertIsNone(a.call("GET", "k"))
        self.assertEqual(a.call("MGET", "m1", "m2"), [None, None])
        self.assertEqual(b.call("SET", "k", "v"), "OK")
        self.assertEqual(a.read(), inval([b"k"]))
        self.assertEqual(b.call("SET", "k", "w"), "OK")  # no longer tracked: one message only
        self.assertEqual(b.call("DEL", "m2"), 0)  # nothing deleted: no invalidation
        self.assertEqual(b.call("MSET", "m1", "1", "m2", "2"), "OK")
        self.assertEqual(a.read(), inval([b"m1"]))
        self.assertEqual(a.read(), inval([b"m2"]))
        self.assertTrue(a.nothing_more())
        # a write by the tracking client itself: its reply first, then the push
        self.assertEqual(a.call("GET", "k"), b"w")
        self.assertEqual(a.call("INCR", "k"), Err("ERR value is not an integer or out of range"))
        self.assertEqual(a.call("SET", "k", "1"), "OK")
        self.assertEqual(a.read(), inval([b"k"]))
        self.assertEqual(a.call("GET", "k"), b"1")
        self.assertEqual(a.call("RENAME", "k", "k2"), "OK")
        self.assertEqual(a.read(), inval([b"k"]))
        info = b.call("INFO", "stats").decode()
        self.assertIn("tracking_total_keys:0", info)
        self.assertIn("tracking_clients:1", b.call("INFO", "clients").decode())

    def test_expiry_commands_and_flush_invalidate(self):
        a, b = self.conn(3), self.conn()
        a.call("CLIENT", "TRACKING", "on")
        b.call("SET", "e", "1")
        b.call("SET", "p", "1", "EX", "100")
        a.call("GET", "e")
        a.call("TTL", "p")
        self.assertEqual(b.call("EXPIRE", "e", "100"), 1)
        self.assertEqual(a.read(), inval([b"e"]))
        self.assertEqual(b.call("PERSIST", "p"), 1)
        self.assertEqual(a.read(), inval([b"p"]))
        a.call("GET", "e")
        self.assertEqual(b.call("FLUSHDB"), "OK")
        self.assertEqual(a.read(), inval(None))
        self.assertTrue(a.nothing_more())
        self.assertEqual(b.call("SET", "e", "2"), "OK")  # forgotten by the flush
        self.assertTrue(a.nothing_more())
        self.assertEqual(a.call("FLUSHALL"), "OK")
        self.assertEqual(a.read(), inval(None))

    def test_noloop(self):
        a, b = self.conn(3), self.conn()
        self.assertEqual(a.call("CLIENT", "TRACKING", "on", "NOLOOP"), "OK")
        a.call("GET", "k")
        self.assertEqual(a.call("SET", "k", "1"), "OK")
        self.assertTrue(a.nothing_more())
        a.call("GET", "k")
        b.call("SET", "k", "2")
        self.assertEqual(a.read(), inval([b"k"]))

    def test_optin_optout(self):
        a, b = self.conn(3), self.conn()
        self.assertEqual(a.call("CLIENT", "TRACKING", "on", "OPTIN"), "OK")
        a.call("GET", "x")  # not cached: not opted in
        self.assertEqual(a.call("CLIENT", "CACHING", "yes"), "OK")
        self.assertEqual(a.call("CLIENT", "TRACKINGINFO")[b"flags"],
                         [b"on", b"optin", b"caching-yes"])
        a.call("GET", "y")
        a.call("GET", "z")  # the opt-in lasted one command
        b.call("MSET", "x", "1", "y", "1", "z", "1")
        self.assertEqual(a.read(), inval([b"y"]))
        self.assertTrue(a.nothing_more())
        # in a transaction the opt-in lasts until EXEC
        a.call("CLIENT", "CACHING", "yes")
        self.assertEqual(a.call("MULTI"), "OK")
        self.assertEqual(a.call("GET", "x"), "QUEUED")
        self.assertEqual(a.call("GET", "z"), "QUEUED")
        self.assertEqual(a.call("EXEC"), [b"1", b"1"])
        b.call("MSET", "x", "2", "z", "2")
        self.assertEqual(a.read(), inval([b"x"]))
        self.assertEqual(a.read(), inval([b"z"]))
        self.assertEqual(a.call("CLIENT", "CACHING", "no"),
                         Err("ERR CLIENT CACHING NO is only valid when tracking is enabled "
                                   "in OPTOUT mode."))
        self.assertEqual(a.call("CLIENT", "TRACKING", "on", "OPTOUT"),
                         Err("ERR You can't switch OPTIN/OPTOUT mode before disabling "
                                   "tracking for this client, and then re-enabling it with a "
                                   "different mode."))
        a.call("CLIENT", "TRACKING", "off")
        self.assertEqual(a.call("CLIENT", "TRACKING", "on", "OPTOUT"), "OK")
        a.call("CLIENT", "CACHING", "no")
        a.call("GET", "x")  # opted out
        a.call("GET", "z")
        b.call("MSET", "x", "3", "z", "3")
        self.assertEqual(a.read(), inval([b"z"]))
        self.assertTrue(a.nothing_more())

    def test_bcast_prefixes(self):
        a, b = self.conn(3), self.conn()
        self.assertEqual(a.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a"),
                         Err("ERR Prefix 'ab' overlaps with another provided prefix 'a'. "
                                   "Prefixes for a single client must not overlap."))
        self.assertEqual(a.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "cd",
                                "NOLOOP"), "OK")
        self.assertEqual(a.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "abc"),
                         Err("ERR Prefix 'abc' overlaps with an existing prefix 'ab'. "
                                   "Prefixes for a single client must not overlap."))
        self.assertEqual(a.call("CLIENT", "TRACKINGINFO"),
                         {b"flags": [b"on", b"bcast", b"noloop"], b"redirect": 0,
                          b"prefixes": [b"ab", b"cd"]})
        b.call("MSET", "ab1", "1", "cd1", "2", "ab2", "3", "zz", "4")
        self.assertEqual(a.read(), inval([b"ab1", b"ab2"]))
        self.assertEqual(a.read(), inval([b"cd1"]))
        self.assertEqual(a.call("SET", "ab3", "1"), "OK")  # NOLOOP: its own write
        self.assertTrue(a.nothing_more())
        self.assertIn("tracking_total_prefixes:2", b.call("INFO", "stats").decode())
        line = a.call("CLIENT", "INFO").decode()
        self.assertIn(" flags=tB ", line)
        self.assertIn(" redir=0 ", line)
        # BCAST without a prefix: every key
        c = self.conn(3)
        c.call("CLIENT", "TRACKING", "on", "BCAST")
        b.call("SET", "anything", "1")
        self.assertEqual(c.read(), inval([b"anything"]))

    def test_redirect_resp2_and_resp3(self):
        b = self.conn()
        d = self.conn()
        did = d.call("CLIENT", "ID")
        self.assertEqual(d.call("SUBSCRIBE", "__redis__:invalidate"),
                         [b"subscribe", b"__redis__:invalidate", 1])
        c = self.conn()
        self.assertEqual(c.call("CLIENT", "TRACKING", "on", "REDIRECT", did), "OK")
        self.assertEqual(c.call("CLIENT", "GETREDIR"), did)
        c.call("GET", "q")
        b.call("SET", "q", "1")
        self.assertEqual(d.read(), [b"message", b"__redis__:invalidate", [b"q"]])
        b.call("FLUSHDB")
        self.assertEqual(d.read(), [b"message", b"__redis__:invalidate", None])
        d.close()
        self.conns.remove(d)
        time.sleep(0.2)
        c.call("GET", "q")
        b.call("SET", "q", "2")
        time.sleep(0.1)
        self.assertEqual(c.call("CLIENT", "TRACKINGINFO"),
                         [b"flags", [b"on", b"broken_redirect"], b"redirect", did,
                          b"prefixes", []])
        self.assertIn(" flags=tR ", c.call("CLIENT", "INFO").decode())
        # RESP3: the target gets the push; once it is gone the client is told
        e = self.conn(3)
        eid = e.call("CLIENT", "ID")
        f = self.conn(3)
        self.assertEqual(f.call("CLIENT", "TRACKING", "on", "REDIRECT", eid + 1000),
                         Err("ERR The client ID you want redirect to does not exist"))
        self.assertEqual(f.call("CLIENT", "TRACKING", "on", "REDIRECT", "x"),
                         Err("ERR value is not an integer or out of range"))
        self.assertEqual(f.call("CLIENT", "TRACKING", "on", "REDIRECT", eid), "OK")
        f.call("GET", "w")
        b.call("SET", "w", "1")
        self.assertEqual(e.read(), inval([b"w"]))
        e.close()
        self.conns.remove(e)
        time.sleep(0.2)
        f.call("GET", "w")
        b.call("SET", "w", "2")
        self.assertEqual(f.read(), ("push", [b"tracking-redir-broken", eid]))
        self.assertEqual(f.call("RESET"), "RESET")
        self.assertEqual(f.call("CLIENT", "TRACKINGINFO"),
                         [b"flags", [b"off"], b"redirect", -1, b"prefixes", []])
        self.assertEqual(f.call("CLIENT", "GETREDIR"), -1)

    def test_errors(self):
        a = self.conn(3)
        cases = [
            (("CLIENT", "TRACKING", "on", "PREFIX", "x"),
             "ERR PREFIX option requires BCAST mode to be enabled"),
            (("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"),
             "ERR You can't specify both OPTIN mode and OPTOUT mode"),
            (("CLIENT", "TRACKING", "on", "BCAST", "OPTIN"),
             "ERR OPTIN and OPTOUT are not compatible with BCAST"),
            (("CLIENT", "TRACKING", "on", "foo"), "ERR syntax error"),
            (("CLIENT", "TRACKING", "maybe"), "ERR syntax error"),
            (("CLIENT", "TRACKING", "on", "REDIRECT", "1", "REDIRECT", "2"), None),
            (("CLIENT", "CACHING", "yes"),
             "ERR CLIENT CACHING can be called only when the client is in tracking mode with "
             "OPTIN or OPTOUT mode enabled"),
            (("CLIENT", "TRACKING"), "ERR wrong number of arguments for 'client|tracking' command"),
        ]
        for args, want in cases:
            got = a.call(*args)
            if want is None:
                self.assertIsInstance(got, Err, args)
            else:
                self.assertEqual(str(got), want, args)
        a.call("CLIENT", "TRACKING", "on")
        self.assertEqual(str(a.call("CLIENT", "CACHING", "yes")),
                         "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN "
                         "mode.")
        self.assertEqual(str(a.call("CLIENT", "CACHING", "maybe")), "ERR syntax error")
        self.assertEqual(str(a.call("CLIENT", "TRACKING", "on", "BCAST")),
                         "ERR You can't switch BCAST mode on/off before disabling tracking for "
                         "this client, and then re-enabling it with a different mode.")
        self.assertEqual(a.call("CLIENT", "GETREDIR"), 0)

    def test_table_max_keys(self):
        a, b = self.conn(3), self.conn()
        self.assertEqual(b.call("CONFIG", "SET", "tracking-table-max-keys", "2"), "OK")
        self.assertEqual(b.call("CONFIG", "GET", "tracking-table-max-keys"),
                         [b"tracking-table-max-keys", b"2"])
        a.call("CLIENT", "TRACKING", "on")
        a.call("MGET", "k1", "k2", "k3", "k4")
        time.sleep(0.5)
        seen = set()
        while not a.nothing_more(0.3):
            frame = a.read()
            self.assertEqual(frame[0], "push")
            seen.update(frame[1][1])
        self.assertEqual(len(seen), 2, seen)  # two keys forgotten, and their clients told
        keys = int([l for l in b.call("INFO", "stats").decode().split("\r\n")
                    if l.startswith("tracking_total_keys:")][0].split(":")[1])
        self.assertLessEqual(keys, 2)


def events(c, n, wait=0.3):
    """The next pmessage frames as (channel, payload), until quiet."""
    out = []
    while not c.nothing_more(wait):
        f = c.read()
        out.append((f[2].decode(), f[3].decode()))
    return out


class Notifications(Base):
    def test_flags_parse_and_show_as_redis(self):
        b = self.conn()
        for val, shown in [("KEA", "AKE"), ("", ""), ("Kx", "xK"), ("AK", "AK"),
                           ("KEAm", "AKEm"), ("gE$n", "g$nE"), ("KEAn", "AKE")]:
            self.assertEqual(b.call("CONFIG", "SET", "notify-keyspace-events", val), "OK")
            self.assertEqual(b.call("CONFIG", "GET", "notify-keyspace-events"),
                             [b"notify-keyspace-events", shown.encode()])
        self.assertEqual(str(b.call("CONFIG", "SET", "notify-keyspace-events", "Z")),
                         "ERR CONFIG SET failed (possibly related to argument "
                         "'notify-keyspace-events') - Invalid event class character. Use "
                         "'Ag$lshzxeKEtmdn'.")

    def test_events_of_commands(self):
        a, b = self.conn(), self.conn()
        b.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
        a.call("PSUBSCRIBE", "__key*__:*")

        def ev(*cmd):
            b.call(*cmd)
            return events(a, 0)

        def both(key, event, db=0):
            return [("__keyspace@%d__:%s" % (db, key), event),
                    ("__keyevent@%d__:%s" % (db, event), key)]

        self.assertEqual(ev("SET", "k", "v"), both("k", "set"))
        self.assertEqual(ev("SET", "k", "v", "EX", "100"), both("k", "set") + both("k", "expire"))
        self.assertEqual(ev("SETEX", "k2", "10", "v"), both("k2", "set") + both("k2", "expire"))
        self.assertEqual(ev("GET", "nokey"), [])
        self.assertEqual(ev("INCR", "n"), both("n", "incrby"))
        self.assertEqual(ev("INCRBYFLOAT", "n", "1.5"), both("n", "incrbyfloat"))
        self.assertEqual(ev("APPEND", "n", "x"), both("n", "append"))
        self.assertEqual(ev("SETRANGE", "s", "2", "ab"), both("s", "setrange"))
        self.assertEqual(ev("SETBIT", "bb", "3", "1"), both("bb", "setbit"))
        self.assertEqual(ev("EXPIRE", "k", "50"), both("k", "expire"))
        self.assertEqual(ev("EXPIRE", "k", "50", "LT"), [])  # not applied
        self.assertEqual(ev("PERSIST", "k"), both("k", "persist"))
        self.assertEqual(ev("EXPIRE", "k", "-1"), both("k", "del"))
        self.assertEqual(ev("RENAME", "n", "n2"), both("n", "rename_from") + both("n2", "rename_to"))
        self.assertEqual(ev("COPY", "n2", "n3"), both("n3", "copy_to"))
        self.assertEqual(ev("MOVE", "n3", "1"), both("n3", "move_from") + both("n3", "move_to", 1))
        self.assertEqual(ev("DEL", "n2", "s", "zz"), both("n2", "del") + both("s", "del"))
        self.assertEqual(ev("GETDEL", "bb"), both("bb", "del"))
        self.assertEqual(ev("SET", "g", "1"), both("g", "set"))
        self.assertEqual(ev("GETEX", "g", "EX", "100"), both("g", "expire"))
        self.assertEqual(ev("GETEX", "g", "PERSIST"), both("g", "persist"))
        self.assertEqual(ev("MSET", "m1", "1", "m2", "2"), both("m1", "set") + both("m2", "set"))
        self.assertEqual(ev("GETSET", "m1", "z"), both("m1", "set"))
        self.assertEqual(ev("BITOP", "OR", "d", "m1", "m2"), both("d", "set"))
        self.assertEqual(ev("BITFIELD", "bf", "SET", "u8", "0", "255"), both("bf", "setbit"))
        self.assertEqual(ev("FLUSHDB"), [])
        # SWAPDB: events name the database number, whatever moved into it
        self.assertEqual(ev("SWAPDB", "0", "1"), [])
        self.assertEqual(ev("SET", "after", "1"), both("after", "set"))

    def test_new_and_keymiss(self):
        a, b = self.conn(), self.conn()
        b.call("CONFIG", "SET", "notify-keyspace-events", "KAnm")
        a.call("PSUBSCRIBE", "__keyspace*__:*")

        def ev(*cmd):
            r = b.call(*cmd)
            return r, [(ch.split(":", 1)[1], e) for ch, e in events(a, 0)]

        self.assertEqual(ev("SET", "a", "1")[1], [("a", "new"), ("a", "set")])
        self.assertEqual(ev("SET", "b", "2")[1], [("b", "new"), ("b", "set")])
        self.assertEqual(ev("RENAME", "a", "b")[1],
                         [("b", "new"), ("a", "rename_from"), ("b", "rename_to")])
        self.assertEqual(ev("COPY", "b", "d", "REPLACE")[1], [("d", "new"), ("d", "copy_to")])
        payload = ev("DUMP", "d")[0]
        self.assertEqual(ev("RESTORE", "r", "0", payload)[1], [("r", "new"), ("r", "restore")])
        self.assertEqual(ev("RESTORE", "r", "0", payload, "REPLACE")[1],
                         [("r", "new"), ("r", "restore")])
        self.assertEqual(ev("GET", "nokey")[1], [("nokey", "keymiss")])
        self.assertEqual(ev("MGET", "x1", "d")[1], [("x1", "keymiss")])
        for cmd in (("EXISTS", "nokey"), ("TTL", "nokey"), ("STRLEN", "nokey"),
                    ("GETRANGE", "nokey", "0", "1"), ("GETDEL", "nokey"), ("GETEX", "nokey")):
            self.assertEqual(ev(*cmd)[1], [("nokey", "keymiss")], cmd)
        self.assertEqual(ev("INCRBYFLOAT", "f", "1")[1], [("f", "new"), ("f", "incrbyfloat")])
        self.assertEqual(ev("SETRANGE", "sr", "0", "")[1], [])
        self.assertEqual(ev("APPEND", "ap", "")[1], [("ap", "new"), ("ap", "append")])
        self.assertEqual(ev("SET", "k", "v", "NX")[1], [("k", "new"), ("k", "set")])
        self.assertEqual(ev("SET", "k", "v", "NX")[1], [])
        self.assertEqual(ev("SET", "k2", "1", "GET")[1], [("k2", "keymiss"), ("k2", "new"),
                                                         ("k2", "set")])
        self.assertEqual(ev("INCRBY", "k2", "0")[1], [("k2", "incrby")])
        self.assertEqual(ev("BITOP", "AND", "dd", "nokey")[1], [("nokey", "keymiss")])


class EngineRemovals(Base):
    """Keys the engine removes by itself (eviction, expiry) are signalled."""

    def server_args(self):
        if "redis-server" in BIN:
            return ("--maxmemory", "4mb", "--maxmemory-policy", "allkeys-lru")
        return ("--maxmemory", "4mb")

    def info_int(self, c, field):
        return info_field(c, "stats", field)

    def test_evicted_events_and_invalidations(self):
        a, b, t = self.conn(), self.conn(), self.conn(3)
        b.call("CONFIG", "SET", "notify-keyspace-events", "Ee")
        a.call("SUBSCRIBE", "__keyevent@0__:evicted")
        t.call("CLIENT", "TRACKING", "on")
        val = "v" * 1000
        for i in range(200):
            b.call("SET", "t%d" % i, val)
        for i in range(200):
            t.call("GET", "t%d" % i)
        for i in range(20000):
            b.send("SET", "k%d" % i, val)
        for i in range(20000):
            self.assertEqual(b.read(), "OK")
        evicted = self.info_int(b, "evicted_keys")
        self.assertGreater(evicted, 0)
        got = set()
        while len(got) < evicted:
            f = a.read()
            self.assertEqual(f[:2], [b"message", b"__keyevent@0__:evicted"])
            self.assertNotIn(f[2], got, "a key is evicted once")
            got.add(f[2])
        self.assertTrue(a.nothing_more())
        for k in list(got)[:200]:
            self.assertEqual(b.call("EXISTS", k), 0, k)
        # every tracked key that went was invalidated for the tracking client
        gone = {b"t%d" % i for i in range(200) if b.call("EXISTS", "t%d" % i) == 0}
        if os.environ.get("CUDIS_E2E_ENGINE", "cpu") != "lfu":  # LFU keeps the keys read twice
            self.assertTrue(gone)
        told = set()
        while not t.nothing_more():
            f = t.read()
            self.assertEqual(f[0], "push")
            told.update(f[1][1])
        self.assertEqual(gone, told)

    def test_expired_events_lazy_and_active(self):
        a, b, t = self.conn(), self.conn(), self.conn(3)
        b.call("CONFIG", "SET", "notify-keyspace-events", "Ex")
        a.call("SUBSCRIBE", "__keyevent@0__:expired")
        t.call("CLIENT", "TRACKING", "on")
        b.call("SET", "lazy", "1", "PX", "50")
        t.call("GET", "lazy")
        time.sleep(0.1)
        b.call("GET", "lazy")  # met expired (if the sweep did not take it first)
        self.assertEqual(a.read(), [b"message", b"__keyevent@0__:expired", b"lazy"])
        self.assertEqual(t.read(), inval([b"lazy"]))
        b.call("SET", "active", "1", "PX", "50")
        self.assertEqual(a.read(), [b"message", b"__keyevent@0__:expired", b"active"])
        self.assertTrue(a.nothing_more())


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
