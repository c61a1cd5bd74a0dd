#!/usr/bin/python3
"""test_functions.py - Redis 7 functions against the server under test, in
Redis 7.0's words and shapes (checked against Debian's redis-server 7.0 by
running this file with CUDIS_E2E_SERVER=/usr/bin/redis-server): FUNCTION
LOAD and its errors, FCALL / FCALL_RO with keys and args, flags and the
read-only rules, LIST (RESP2 and RESP3), DELETE, FLUSH, STATS, functions
surviving SCRIPT FLUSH, FUNCTION DUMP from Debian's redis-server RESTOREd
into the server and back, FUNCTION KILL of a busy function (and SCRIPT
KILL refusing it), INFO's counts. Run by ctest (label e2e):
  /usr/bin/python3 test_functions.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402
from test_tracking import Conn, Err  # noqa: E402

import redis  # noqa: E402

BIN = None
REDIS = "/usr/bin/redis-server"

LIB1 = """#!lua name=lib1
redis.register_function{function_name='setk', callback=function(keys, args)
  return redis.call('set', keys[1], args[1]) end,
  description='sets a key', flags={'allow-oom', 'no-cluster'}}
redis.register_function('echo2', function(keys, args) return {keys, args} end)
redis.register_function{function_name='getk', callback=function(keys)
  return redis.call('get', keys[1]) end, flags={'no-writes'}}
redis.register_function{function_name='sneaky', callback=function()
  return redis.call('set', 'x', 'y') end, flags={'no-writes'}}
redis.register_function('oops', function() error('boom') end)
redis.register_function('noglobal', function() return nope end)
"""

# (code, error) for FUNCTION LOAD, exactly as Redis 7.0 replies
LOAD_ERRORS = [
    ("return 1", "ERR Missing library metadata"),
    ("#!lua name=a", "ERR Invalid library metadata"),
    ("#!lua\nreturn 1", "ERR Library name was not given"),
    ("#!lua name=\"q\nreturn 1", "ERR Invalid library metadata"),
    ("#!lua foo=bar\nreturn 1", "ERR Invalid metadata value given: foo=bar"),
    ("#!lua name=a name=b\nreturn 1",
     "ERR Invalid metadata value, name argument was given multiple times"),
    ("#!lua name=a-b\nreturn 1", "ERR Library names can only contain letters, numbers, or "
     "underscores(_) and must be at least one character long"),
    ("#!py name=a\nreturn 1", "ERR Engine 'py' not found"),
    ("#!lua name=lib1\nreturn 1", "ERR Library 'lib1' already exists"),
    ("#!lua name=e1\nreturn 1", "ERR No functions registered"),
    ("#!lua name=e2\nreturn (", "ERR Error compiling function: user_function:2: unexpected "
     "symbol near '<eof>'"),
    ("#!lua name=e3\nredis.call('ping')", "ERR Error registering functions: ERR "
     "user_function:2: Script attempted to access nonexistent global variable 'call'"),
    ("#!lua name=e4\nlocal s = string.rep('x', 2)", "ERR Error registering functions: ERR "
     "user_function:2: Script attempted to access nonexistent global variable 'string'"),
    ("#!lua name=e5\nfoo = 1", "ERR Error registering functions: ERR user_function:2: "
     "Attempt to modify a readonly table"),
    ("#!lua name=e6\nlocal a = nil + 1", "ERR Error registering functions: ERR "
     "user_function:2: attempt to perform arithmetic on a nil value"),
    ("#!lua name=e7\nlocal i = 0 while true do i = i + 1 end",
     "ERR Error registering functions: ERR FUNCTION LOAD timeout"),
    ("#!lua name=e8\nredis.register_function('setk', function() end)",
     "ERR Function setk already exists"),
    ("#!lua name=e9\nredis.register_function('f', function() end)\n"
     "redis.register_function('f', function() end)",
     "ERR Error registering functions: ERR Function already exists in the library"),
    ("#!lua name=e10\nredis.register_function('f-g', function() end)",
     "ERR Error registering functions: ERR Library names can only contain letters, numbers, or "
     "underscores(_) and must be at least one character long"),
    ("#!lua name=e11\nredis.register_function('f')", "ERR Error registering functions: ERR "
     "calling redis.register_function with a single argument is only applicable to Lua table "
     "(representing named arguments)."),
    ("#!lua name=e12\nredis.register_function('f', 1)", "ERR Error registering functions: ERR "
     "second argument to redis.register_function must be a function"),
    ("#!lua name=e13\nredis.register_function({}, function() end)", "ERR Error registering "
     "functions: ERR first argument to redis.register_function must be a string"),
    ("#!lua name=e14\nredis.register_function()", "ERR Error registering functions: ERR "
     "wrong number of arguments to redis.register_function"),
    ("#!lua name=e15\nredis.register_function{function_name='f', callback=function() end, "
     "flags={'bad'}}", "ERR Error registering functions: ERR unknown flag given"),
    ("#!lua name=e16\nredis.register_function{function_name='f', callback=function() end, "
     "flags='no-writes'}", "ERR Error registering functions: ERR flags argument to "
     "redis.register_function must be a table representing function flags"),
    ("#!lua name=e17\nredis.register_function{function_name='f', callback=function() end, "
     "foo=1}", "ERR Error registering functions: ERR unknown argument given to "
     "redis.register_function"),
    ("#!lua name=e18\nredis.register_function{callback=function() end}", "ERR Error "
     "registering functions: ERR redis.register_function must get a function name argument"),
    ("#!lua name=e19\nredis.register_function{function_name='f'}", "ERR Error registering "
     "functions: ERR redis.register_function must get a callback argument"),
    ("#!lua name=e20\nredis.register_function{function_name='f', callback=1}", "ERR Error "
     "registering functions: ERR callback argument given to redis.register_function must be a "
     "function"),
    ("#!lua name=e21\nredis.register_function{function_name='f', callback=function() end, "
     "description={}}", "ERR Error registering functions: ERR description argument given to "
     "redis.register_function must be a string"),
    ("#!lua name=e22\nredis.register_function('f', function() end)\n"
     "redis.register_function('g', 1)", "ERR Error registering functions: ERR second argument "
     "to redis.register_function must be a function"),
]


def norm_list(libs):
    """FUNCTION LIST as a comparable value: libraries and functions by name
    (their order is Redis's dict order)."""
    out = []
    for lib in libs:
        d = lib if isinstance(lib, dict) else dict(zip(lib[::2], lib[1::2]))
        fns = []
        for f in d[b"functions"]:
            fd = f if isinstance(f, dict) else dict(zip(f[::2], f[1::2]))
            fns.append((fd[b"name"], fd[b"description"], sorted(map(str, fd[b"flags"]))))
        out.append((d[b"library_name"], d[b"engine"], sorted(fns), d.get(b"library_code")))
    return sorted(out)


class Functions(unittest.TestCase):
    def setUp(self):
        self.srv = e2e_server.Server(BIN)
        self.c = Conn(self.srv.port)
        self.assertEqual(self.c.call("FUNCTION", "LOAD", LIB1), b"lib1")

    def tearDown(self):
        self.c.close()
        self.assertEqual(self.srv.stop(), 0, "server did not exit 0 on SIGTERM")

    def err(self, *args):
        r = self.c.call(*args)
        self.assertIsInstance(r, Err, args)
        return str(r)

    def test_load_errors(self):
        for code, msg in LOAD_ERRORS:
            self.assertEqual(self.err("FUNCTION", "LOAD", code), msg, code)
        self.assertEqual(self.err("FUNCTION", "LOAD", "FOO", "#!lua name=x\n"),
                         "ERR Unknown option given: FOO")
        self.assertEqual(self.err("FUNCTION", "LOAD", "REPLACE", "#!lua name=z\n"
                                  "redis.register_function('echo2', function() end)"),
                         "ERR Function echo2 already exists")
        self.assertEqual(self.c.call("FCALL", "echo2", 0), [[], []])  # lib1 unharmed

    def test_fcall(self):
        c = self.c
        self.assertEqual(c.call("FCALL", "setk", 1, "k", "v"), "OK")
        self.assertEqual(c.call("FCALL", "getk", 1, "k"), b"v")
        self.assertEqual(c.call("FCALL_RO", "getk", 1, "k"), b"v")
        self.assertEqual(c.call("FCALL", "echo2", 2, "a", "b", "c"), [[b"a", b"b"], [b"c"]])
        ro = "ERR Can not execute a script with write flag using *_ro command."
        self.assertEqual(self.err("FCALL_RO", "setk", 1, "k", "v"), ro)
        self.assertEqual(self.err("FCALL_RO", "echo2", 0), ro)
        wr = ("ERR Write commands are not allowed from read-only scripts. script: sneaky, "
              "on @user_function:9.")
        self.assertEqual(self.err("FCALL", "sneaky", 0), wr)
        self.assertEqual(self.err("FCALL_RO", "sneaky", 0), wr)
        self.assertEqual(self.err("FCALL", "oops", 0),
                         "ERR user_function:10: boom script: oops, on @user_function:10.")
        self.assertEqual(self.err("FCALL", "noglobal", 0),
                         "ERR user_function:11: Script attempted to access nonexistent global "
                         "variable 'nope' script: noglobal, on @user_function:11.")
        self.assertEqual(self.err("FCALL", "nope", 0), "ERR Function not found")
        self.assertEqual(self.err("FCALL", "nope", "x"), "ERR Function not found")
        self.assertEqual(self.err("FCALL", "setk", "x"), "ERR Bad number of keys provided")
        self.assertEqual(self.err("FCALL", "setk", -1), "ERR Number of keys can't be negative")
        self.assertEqual(self.err("FCALL", "setk", 5, "k"),
                         "ERR Number of keys can't be greater than number of args")
        self.assertEqual(self.err("FCALL", "setk"),
                         "ERR wrong number of arguments for 'fcall' command")
        self.assertTrue(self.err("EVAL", "return redis.call('fcall', 'echo2', '0')", 0).startswith(
            "ERR This Redis command is not allowed from script script: "))
        # functions are not scripts: SCRIPT FLUSH keeps them
        self.assertEqual(c.call("SCRIPT", "FLUSH"), "OK")
        self.assertEqual(c.call("FCALL", "getk", 1, "k"), b"v")
        # REPLACE swaps the library's functions
        self.assertEqual(c.call("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib1\n"
                                "redis.register_function('fresh', function() return 7 end)"),
                         b"lib1")
        self.assertEqual(c.call("FCALL", "fresh", 0), 7)
        self.assertEqual(self.err("FCALL", "setk", 1, "k", "v"), "ERR Function not found")

    def test_list_stats_delete_flush(self):
        c = self.c
        want = [(b"lib1", b"LUA", sorted([
            (b"setk", b"sets a key", ["allow-oom", "no-cluster"]),
            (b"echo2", None, []), (b"getk", None, ["no-writes"]),
            (b"sneaky", None, ["no-writes"]), (b"oops", None, []), (b"noglobal", None, [])]),
            None)]
        self.assertEqual(norm_list(c.call("FUNCTION", "LIST")), want)
        c3 = Conn(self.srv.port, proto=3)
        self.assertEqual(norm_list(c3.call("FUNCTION", "LIST")), want)
        lib = c3.call("FUNCTION", "LIST", "WITHCODE")[0]
        self.assertEqual(sorted(lib), [b"engine", b"functions", b"library_code", b"library_name"])
        self.assertEqual(lib[b"library_code"], LIB1.encode())
        self.assertEqual(c3.call("FUNCTION", "STATS"), {
            b"running_script": None,
            b"engines": {b"LUA": {b"libraries_count": 1, b"functions_count": 6}}})
        c3.close()
        self.assertEqual(c.call("FUNCTION", "STATS"), [
            b"running_script", None,
            b"engines", [b"LUA", [b"libraries_count", 1, b"functions_count", 6]]])
        self.assertEqual(c.call("FUNCTION", "LOAD", "#!lua name=other\n"
                                "redis.register_function('o', function() return 1 end)"),
                         b"other")
        self.assertEqual(len(c.call("FUNCTION", "LIST", "LIBRARYNAME", "LIB*")), 1)
        self.assertEqual(len(c.call("FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "*")), 2)
        self.assertEqual(self.err("FUNCTION", "LIST", "LIBRARYNAME"),
                         "ERR library name argument was not given")
        self.assertEqual(self.err("FUNCTION", "LIST", "WITHCODE", "WITHCODE"),
                         "ERR Unknown argument WITHCODE")
        info = redis.Redis(port=self.srv.port).info("memory")
        self.assertEqual((info["number_of_libraries"], info["number_of_functions"]), (2, 7))
        self.assertEqual(self.err("FUNCTION", "DELETE", "nolib"), "ERR Library not found")
        self.assertEqual(c.call("FUNCTION", "DELETE", "other"), "OK")
        self.assertEqual(self.err("FCALL", "o", 0), "ERR Function not found")
        self.assertEqual(self.err("FUNCTION", "FLUSH", "FOO"),
                         "ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
        self.assertEqual(self.err("FUNCTION", "FLUSH", "ASYNC", "SYNC"),
                         "ERR unknown subcommand or wrong number of arguments for 'FLUSH'. "
                         "Try FUNCTION HELP.")
        self.assertEqual(c.call("FUNCTION", "FLUSH", "SYNC"), "OK")
        self.assertEqual(c.call("FUNCTION", "LIST"), [])
        self.assertEqual(self.err("FCALL", "getk", 1, "k"), "ERR Function not found")
        self.assertEqual(self.err("FUNCTION", "KILL"), "NOTBUSY No scripts in execution right now.")
        help_ = c.call("FUNCTION", "HELP")
        self.assertEqual(help_[0], "FUNCTION <subcommand> [<arg> [value] [opt] ...]. "
                         "Subcommands are:")
        self.assertIn("RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]", help_)
        self.assertEqual(help_[-1], "    Prints this help.")
        self.assertEqual(len(help_), 40)

    def test_kill_busy_function(self):
        c = self.c
        c.call("FUNCTION", "LOAD", "#!lua name=busy\n"
               "redis.register_function('spin', function() local i = 0 "
               "while true do i = i + 1 end end)")
        self.assertEqual(c.call("CONFIG", "SET", "busy-reply-threshold", "100"), "OK")
        c.send("FCALL", "spin", 1, "k")
        time.sleep(0.4)
        other = Conn(self.srv.port)
        self.assertEqual(str(other.call("PING")), "BUSY Redis is busy running a script. You can "
                         "only call FUNCTION KILL or SHUTDOWN NOSAVE.")
        self.assertEqual(str(other.call("SCRIPT", "KILL")), "BUSY Redis is busy running a "
                         "script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.")
        stats = other.call("FUNCTION", "STATS")
        run = dict(zip(stats[1][::2], stats[1][1::2]))
        self.assertEqual(run[b"name"], b"spin")
        self.assertEqual(run[b"command"], [b"FCALL", b"spin", b"1", b"k"])
        self.assertGreaterEqual(run[b"duration_ms"], 100)
        self.assertEqual(other.call("FUNCTION", "KILL"), "OK")
        self.assertEqual(str(c.read()), "ERR Script killed by user with SCRIPT KILL... script: "
                         "spin, on @user_function:2.")
        # and FUNCTION KILL does not kill a script
        c.send("EVAL", "while true do end", 0)
        time.sleep(0.4)
        slow_eval = ("BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                     "SHUTDOWN NOSAVE.")
        self.assertEqual(str(other.call("FUNCTION", "KILL")), slow_eval)
        self.assertEqual(str(other.call("FUNCTION", "STATS")), slow_eval)
        self.assertEqual(other.call("SCRIPT", "KILL"), "OK")
        self.assertTrue(str(c.read()).startswith("ERR Script killed by user with SCRIPT KILL..."))
        self.assertEqual(other.call("PING"), "PONG")
        other.close()


@unittest.skipUnless(os.path.exists(REDIS), "redis-server not installed")
class DumpRestore(unittest.TestCase):
    """FUNCTION DUMP / RESTORE between Debian's redis-server and the server."""

    def setUp(self):
        self.srv = e2e_server.Server(BIN)
        self.ref = e2e_server.Server(REDIS)
        self.c = Conn(self.srv.port)
        self.rc = Conn(self.ref.port)

    def tearDown(self):
        self.c.close()
        self.rc.close()
        self.assertEqual(self.ref.stop(), 0)
        self.assertEqual(self.srv.stop(), 0, "server did not exit 0 on SIGTERM")

    def test_both_ways(self):
        c, rc = self.c, self.rc
        big = "#!lua name=big\n" + "".join(
            "redis.register_function('big%d', function() return %d end)\n" % (i, i)
            for i in range(40))  # long enough for Redis to compress it
        for code in (LIB1, big):
            self.assertIsInstance(rc.call("FUNCTION", "LOAD", code), bytes)
        payload = rc.call("FUNCTION", "DUMP")
        self.assertEqual(c.call("FUNCTION", "RESTORE", payload), "OK")
        self.assertEqual(norm_list(c.call("FUNCTION", "LIST", "WITHCODE")),
                         norm_list(rc.call("FUNCTION", "LIST", "WITHCODE")))
        self.assertEqual(c.call("FCALL", "big39", 0), 39)
        self.assertEqual(c.call("FCALL", "setk", 1, "k", "v"), "OK")
        self.assertEqual(c.call("GET", "k"), b"v")
        # the policies
        self.assertTrue(str(c.call("FUNCTION", "RESTORE", payload)).startswith("ERR Library "))
        self.assertTrue(str(c.call("FUNCTION", "RESTORE", payload, "APPEND")).endswith(
            " already exists"))
        self.assertEqual(c.call("FUNCTION", "RESTORE", payload, "REPLACE"), "OK")
        self.assertEqual(str(c.call("FUNCTION", "RESTORE", payload, "FOO")), "ERR Wrong restore "
                         "policy given, value should be either FLUSH, APPEND or REPLACE.")
        for bad in (b"garbage", payload[:-1] + bytes([payload[-1] ^ 1])):
            for conn in (c, rc):
                self.assertEqual(str(conn.call("FUNCTION", "RESTORE", bad)),
                                 "ERR DUMP payload version or checksum are wrong")
        self.assertEqual(c.call("FUNCTION", "DELETE", "big"), "OK")
        self.assertEqual(c.call("FUNCTION", "LOAD", "#!lua name=mine\n"
                                "redis.register_function('big0', function() return 0 end)"),
                         b"mine")
        self.assertEqual(str(c.call("FUNCTION", "RESTORE", payload, "REPLACE")),
                         "ERR Function big0 already exists")
        self.assertEqual(c.call("FUNCTION", "RESTORE", payload, "FLUSH"), "OK")
        self.assertEqual(self.c.call("FCALL", "getk", 1, "k"), b"v")
        # and back: the server's payload into Redis
        back = c.call("FUNCTION", "DUMP")
        self.assertEqual(rc.call("FUNCTION", "RESTORE", back, "FLUSH"), "OK")
        self.assertEqual(norm_list(rc.call("FUNCTION", "LIST", "WITHCODE")),
                         norm_list(c.call("FUNCTION", "LIST", "WITHCODE")))
        self.assertEqual(rc.call("FCALL", "big7", 0), 7)
        # an empty set of libraries dumps to Redis's bytes
        for conn in (c, rc):
            conn.call("FUNCTION", "FLUSH")
        self.assertEqual(c.call("FUNCTION", "DUMP"), rc.call("FUNCTION", "DUMP"))


if __name__ == "__main__":
    BIN = e2e_server.binary(sys.argv)
    if not BIN:
        print("no server: set CUDIS_E2E_SERVER or pass --server PATH")
        sys.exit(e2e_server.SKIP)
    argv = e2e_server.strip_server_arg(sys.argv)
    unittest.main(argv=argv, verbosity=2)
