#!/usr/bin/python3
"""test_acl.py - ACL users as Redis 7.0 defines them, checked reply for
reply (every test was run against Debian's redis-server 7.0.15 first):
ACL SETUSER's rules and errors, GETUSER and LIST's description, AUTH and
HELLO AUTH by user, requirepass as the default user's password, command,
category, first-arg, key (~, %R~, %W~) and channel (&) permissions,
selectors, the checks inside MULTI (when queued and again at EXEC) and
scripts, ACL LOG, DRYRUN, CAT, GENPASS, DELUSER and CLIENT KILL USER
closing connections, the aclfile (LOAD/SAVE) and `user` lines at start,
redis-cli --user and redis-py's username.
Run by ctest (label e2e):
  /usr/bin/python3 test_acl.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_raw  # noqa: E402
import e2e_server  # noqa: E402
import redis  # noqa: E402
from e2e_raw import Base  # noqa: E402
from test_tracking import Conn, Err  # noqa: E402

WRONGPASS = Err("WRONGPASS invalid username-password pair or user is disabled.")
NOKEY = Err("NOPERM this user has no permissions to access one of the keys used as arguments")
NOCHAN = Err("NOPERM this user has no permissions to access one of the channels used as "
             "arguments")


def nocmd(name):
    return Err("NOPERM this user has no permissions to run the '%s' command" % name)


def pairs(reply):
    """A flat [k, v, k, v...] reply as a dict with str keys."""
    return {reply[i].decode() if isinstance(reply[i], bytes) else reply[i]: reply[i + 1]
            for i in range(0, len(reply), 2)}


class AclBase(Base):
    def login(self, user, pw, proto=2):
        c = Conn(self.srv.port)
        self.conns.append(c)
        self.assertEqual(c.call("AUTH", user, pw), "OK")
        if proto == 3:
            c.call("HELLO", "3")
        return c

    def setUp(self):
        super().setUp()
        self.conns = []

    def tearDown(self):
        for c in self.conns:
            c.close()
        super().tearDown()

    def fresh(self):
        """A new connection, closed at tearDown."""
        c = Conn(self.srv.port)
        self.conns.append(c)
        return c

    def setuser(self, name, *rules):
        self.assertEqual(self.c.call("ACL", "SETUSER", name, *rules), "OK")


class Rules(AclBase):
    def test_getuser_and_list_describe_rules(self):
        self.setuser("alice", "on", ">p1", "~cache:*", "%R~ro:*", "&chan*", "+get", "+set",
                     "(~x* +mget)")
        u = pairs(self.c.call("ACL", "GETUSER", "alice"))
        self.assertEqual(u["flags"], [b"on"])
        self.assertEqual(u["passwords"],
                         [b"f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a"])
        self.assertEqual(sorted(u["commands"].split()), sorted(b"-@all +get +set".split()))
        self.assertEqual(u["keys"], b"~cache:* %R~ro:*")
        self.assertEqual(u["channels"], b"&chan*")
        self.assertEqual(len(u["selectors"]), 1)
        sel = pairs(u["selectors"][0])
        self.assertEqual(sel["commands"], b"-@all +mget")
        self.assertEqual(sel["keys"], b"~x*")
        self.assertEqual(sel["channels"], b"")
        lst = self.c.call("ACL", "LIST")
        self.assertEqual(lst[1], b"user default on nopass ~* &* +@all")
        self.assertTrue(lst[0].startswith(
            b"user alice on #f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a "
            b"~cache:* %R~ro:* resetchannels &chan* -@all "), lst[0])
        self.assertTrue(lst[0].endswith(b" (~x* resetchannels -@all +mget)"), lst[0])
        self.assertEqual(self.c.call("ACL", "USERS"), [b"alice", b"default"])

    def test_categories_fit_the_description(self):
        self.setuser("r", "+@read")
        self.assertEqual(pairs(self.c.call("ACL", "GETUSER", "r"))["commands"], b"-@all +@read")
        self.setuser("w", "allcommands", "-@write")
        self.assertEqual(pairs(self.c.call("ACL", "GETUSER", "w"))["commands"], b"+@all -@write")
        self.setuser("n", "+@all", "nocommands")
        self.assertEqual(pairs(self.c.call("ACL", "GETUSER", "n"))["commands"], b"-@all")

    def test_new_user_and_reset(self):
        self.setuser("bob")
        u = pairs(self.c.call("ACL", "GETUSER", "bob"))
        self.assertEqual(u["flags"], [b"off"])
        self.assertEqual(u["commands"], b"-@all")
        self.assertEqual(u["keys"], b"")
        self.setuser("bob", "on", "nopass", "~*", "+@all", "reset")
        u = pairs(self.c.call("ACL", "GETUSER", "bob"))
        self.assertEqual(u["flags"], [b"off", b"sanitize-payload"])
        self.assertEqual(u["passwords"], [])
        self.assertEqual(u["commands"], b"-@all")
        self.assertEqual(self.c.call("ACL", "GETUSER", "nobody"), None)

    def test_rule_errors_change_nothing(self):
        self.setuser("bob", "on", "+get")
        e = "ERR Error in ACL SETUSER modifier '%s': %s"
        cases = [
            ("foo", "Syntax error"),
            ("+nosuch", "Unknown command or category name in ACL"),
            ("+@nosuch", "Unknown command or category name in ACL"),
            ("-select|0", "Unknown command or category name in ACL"),
            ("~a b", "Syntax error"),
            ("%X~a", "Syntax error"),
            ("%~a", "Syntax error"),
            ("%", "Syntax error"),
            ("#abc", "The password hash must be exactly 64 characters and contain only lowercase "
                     "hexadecimal characters"),
            ("<never", "The password you are trying to remove from the user does not exist"),
            ("+config|get|x", "Allowing first-arg of a subcommand is not supported"),
        ]
        for rule, why in cases:
            self.assertEqual(self.c.call("ACL", "SETUSER", "bob", "+set", rule),
                             Err(e % (rule, why)), rule)
        self.assertEqual(pairs(self.c.call("ACL", "GETUSER", "bob"))["commands"], b"-@all +get")
        self.setuser("bob", "allkeys")
        self.assertEqual(
            self.c.call("ACL", "SETUSER", "bob", "~x"),
            Err(e % ("~x", "Adding a pattern after the * pattern (or the 'allkeys' flag) is not "
                           "valid and does not have any effect. Try 'resetkeys' to start with an "
                           "empty list of patterns")))
        self.assertEqual(self.c.call("ACL", "SETUSER", "bob", "(~x", "+get"),
                         Err("ERR Unmatched parenthesis in acl selector starting at '(~x'."))
        self.assertEqual(self.c.call("ACL", "SETUSER", "a b"),
                         Err("ERR Usernames can't contain spaces or null characters"))
        self.assertEqual(self.c.call("ACL", "USERS"), [b"bob", b"default"])

    def test_passwords_and_hashes(self):
        h = "f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a"  # p1
        self.setuser("u", "on", "#" + h, ">p2", "+@all", "~*")
        self.login("u", "p1")
        self.login("u", "p2")
        self.setuser("u", "<p2")
        self.assertEqual(self.fresh().call("AUTH", "u", "p2"), WRONGPASS)
        self.setuser("u", "!" + h, "nopass")
        self.login("u", "anything")
        self.setuser("u", "resetpass")
        self.assertEqual(self.fresh().call("AUTH", "u", "anything"), WRONGPASS)


class Auth(AclBase):
    def test_auth_forms(self):
        self.assertEqual(self.c.call("AUTH", "x"),
                         Err("ERR AUTH <password> called without any password configured for the "
                             "default user. Are you sure your configuration is correct?"))
        self.assertEqual(self.c.call("AUTH", "default", "anything"), "OK")
        self.assertEqual(self.c.call("AUTH", "a", "b", "c"), Err("ERR syntax error"))
        self.setuser("u", "on", ">pw", "+acl|whoami")
        self.assertEqual(self.c.call("AUTH", "u", "bad"), WRONGPASS)
        self.assertEqual(self.c.call("AUTH", "nouser", "pw"), WRONGPASS)
        self.setuser("u", "off")
        self.assertEqual(self.c.call("AUTH", "u", "pw"), WRONGPASS, "a disabled user")
        self.setuser("u", "on")
        u = self.login("u", "pw")
        self.assertEqual(u.call("ACL", "WHOAMI"), b"u")
        self.assertEqual(u.call("PING"), nocmd("ping"))
        self.assertEqual(self.c.call("ACL", "WHOAMI"), b"default")

    def test_hello_auth(self):
        self.setuser("u", "on", ">pw", "+@all", "~*")
        c = Conn(self.srv.port)
        self.conns.append(c)
        self.assertEqual(c.call("HELLO", "3", "AUTH", "u", "bad"), WRONGPASS)
        hello = c.call("HELLO", "3", "AUTH", "u", "pw")
        self.assertEqual(hello[b"proto"] if isinstance(hello, dict) else pairs(hello)["proto"], 3)
        self.assertEqual(c.call("ACL", "WHOAMI"), b"u")

    def test_requirepass_is_the_default_users_password(self):
        self.assertEqual(self.c.call("CONFIG", "SET", "requirepass", "s3cret"), "OK")
        u = pairs(self.c.call("ACL", "GETUSER", "default"))
        self.assertEqual(u["flags"], [b"on"])
        self.assertEqual(len(u["passwords"]), 1)
        n = Conn(self.srv.port)
        self.conns.append(n)
        self.assertEqual(n.call("PING"), Err("NOAUTH Authentication required."))
        self.assertEqual(n.call("AUTH", "s3cret"), "OK")
        self.assertEqual(n.call("PING"), "PONG")
        # the default user's rules can also set it
        self.assertEqual(self.c.call("ACL", "SETUSER", "default", "nopass"), "OK")
        m = Conn(self.srv.port)
        self.conns.append(m)
        self.assertEqual(m.call("PING"), "PONG")
        self.assertEqual(self.c.call("ACL", "SETUSER", "default", "resetpass", ">other"), "OK")
        self.assertEqual(self.fresh().call("PING"), Err("NOAUTH Authentication required."))
        self.assertEqual(self.fresh().call("AUTH", "default", "other"), "OK")

    def test_reset_returns_to_default_user(self):
        self.setuser("u", "on", ">pw", "+@all", "~*")
        u = self.login("u", "pw")
        self.assertEqual(u.call("RESET"), "RESET")
        self.assertEqual(u.call("ACL", "WHOAMI"), b"default")

    def test_redis_cli_and_redis_py_users(self):
        self.setuser("app", "on", ">apppw", "~app:*", "+@read", "+@write", "+@connection")
        out = subprocess.run(["redis-cli", "-p", str(self.srv.port), "--user", "app", "--pass",
                              "apppw", "--no-auth-warning", "SET", "app:1", "v"],
                             capture_output=True, text=True, timeout=10)
        self.assertEqual(out.stdout.strip(), "OK")
        out = subprocess.run(["redis-cli", "-p", str(self.srv.port), "--user", "app", "--pass",
                              "apppw", "--no-auth-warning", "SET", "other", "v"],
                             capture_output=True, text=True, timeout=10)
        self.assertIn("NOPERM", out.stdout + out.stderr)
        r = redis.Redis(host="127.0.0.1", port=self.srv.port, username="app", password="apppw",
                        socket_timeout=10)
        try:
            self.assertEqual(r.get("app:1"), b"v")
            with self.assertRaises(redis.exceptions.NoPermissionError):
                r.get("other")
            bad = redis.Redis(host="127.0.0.1", port=self.srv.port, username="app",
                              password="bad", socket_timeout=10)
            with self.assertRaises(redis.exceptions.ResponseError) as cm:
                bad.ping()
            self.assertIn("WRONGPASS", str(cm.exception))
            bad.close()
        finally:
            r.close()


class Permissions(AclBase):
    def test_commands_categories_and_subcommands(self):
        self.setuser("u", "on", ">pw", "~*", "+@read", "-@dangerous", "+config|get",
                     "+select|0", "+acl|log")
        u = self.login("u", "pw")
        self.assertEqual(u.call("GET", "k"), None)
        self.assertEqual(u.call("SET", "k", "v"), nocmd("set"))
        self.assertEqual(u.call("KEYS", "*"), nocmd("keys"))
        self.assertEqual(u.call("CONFIG", "GET", "maxclients")[0], b"maxclients")
        self.assertEqual(u.call("CONFIG", "SET", "maxclients", "10"), nocmd("config|set"))
        self.assertEqual(u.call("SELECT", "0"), "OK")
        self.assertEqual(u.call("SELECT", "1"), nocmd("select"))
        self.assertEqual(u.call("AUTH", "u", "pw"), "OK", "AUTH needs no permission")

    def test_key_patterns_read_and_write(self):
        self.assertEqual(self.c.call("SET", "ro:1", "r"), "OK")
        self.assertEqual(self.c.call("SET", "wo:1", "w"), "OK")
        self.setuser("u", "on", ">pw", "+@all", "~cache:*", "%R~ro:*", "%W~wo:*")
        u = self.login("u", "pw")
        self.assertEqual(u.call("SET", "cache:1", "v"), "OK")
        self.assertEqual(u.call("GET", "cache:1"), b"v")
        self.assertEqual(u.call("GET", "other"), NOKEY)
        self.assertEqual(u.call("MGET", "cache:1", "other"), NOKEY)
        self.assertEqual(u.call("GET", "ro:1"), b"r")
        self.assertEqual(u.call("SET", "ro:1", "x"), NOKEY)
        self.assertEqual(u.call("APPEND", "ro:1", "x"), NOKEY)
        self.assertEqual(u.call("SET", "wo:2", "x"), "OK")
        self.assertEqual(u.call("GET", "wo:1"), NOKEY)
        self.assertEqual(u.call("SET", "wo:1", "x", "GET"), NOKEY, "GET reads the old value")
        self.assertEqual(u.call("DEL", "wo:2"), 1)
        self.assertEqual(u.call("DEL", "ro:1"), NOKEY)
        self.assertEqual(u.call("EXISTS", "ro:1", "wo:1"), 2, "EXISTS does not read values")
        self.assertEqual(u.call("COPY", "ro:1", "wo:3"), 1)
        self.assertEqual(u.call("COPY", "wo:1", "ro:3"), NOKEY)
        self.assertEqual(u.call("EVAL", "return 1", "1", "other"), NOKEY)
        self.assertEqual(u.call("EVAL", "return 1", "1", "cache:1"), 1)
        self.assertEqual(u.call("LMPOP", "2", "cache:l", "other", "LEFT"), NOKEY)

    def test_channels(self):
        self.setuser("u", "on", ">pw", "+@all", "~*", "resetchannels", "&news.*")
        u = self.login("u", "pw")
        self.assertEqual(u.call("PUBLISH", "news.1", "m"), 0)
        self.assertEqual(u.call("PUBLISH", "sport", "m"), NOCHAN)
        self.assertEqual(u.call("SUBSCRIBE", "sport"), NOCHAN)
        self.assertEqual(u.call("PSUBSCRIBE", "news.1"), NOCHAN, "a pattern must match literally")
        self.assertEqual(u.call("PSUBSCRIBE", "news.*"), [b"psubscribe", b"news.*", 1])

    def test_narrowed_channels_close_subscribers(self):
        self.setuser("u", "on", ">pw", "+@all", "~*", "resetchannels", "&a", "&b*")
        sa = self.login("u", "pw")
        sb = self.login("u", "pw")
        sp = self.login("u", "pw")
        self.assertEqual(sa.call("SUBSCRIBE", "a"), [b"subscribe", b"a", 1])
        self.assertEqual(sb.call("SUBSCRIBE", "b1"), [b"subscribe", b"b1", 1])
        self.assertEqual(sp.call("PSUBSCRIBE", "b*"), [b"psubscribe", b"b*", 1])
        self.setuser("u", "resetchannels", "&a")
        for c in (sb, sp):
            with self.assertRaises((EOFError, ConnectionResetError)):
                c.call("PING")
        self.assertEqual(sa.call("PING"), [b"pong", b""])
        self.assertEqual(self.c.call("PUBLISH", "a", "m"), 1)

    def test_pubsub_default(self):
        self.assertEqual(self.c.call("CONFIG", "GET", "acl-pubsub-default"),
                         [b"acl-pubsub-default", b"resetchannels"])
        self.assertEqual(self.c.call("CONFIG", "SET", "acl-pubsub-default", "allchannels"), "OK")
        self.setuser("n")
        self.assertEqual(pairs(self.c.call("ACL", "GETUSER", "n"))["channels"], b"&*")
        self.setuser("n", "resetchannels", "reset")
        self.assertIn(b"user n off sanitize-payload &* -@all", self.c.call("ACL", "LIST"))

    def test_selectors(self):
        self.setuser("u", "on", ">pw", "~a*", "+get", "(~b* +set)")
        u = self.login("u", "pw")
        self.assertEqual(u.call("GET", "a1"), None)
        self.assertEqual(u.call("SET", "b1", "v"), "OK")
        self.assertEqual(u.call("GET", "b1"), NOKEY, "the key error is the more specific one")
        self.assertEqual(u.call("SET", "a1", "v"), NOKEY)
        self.assertEqual(u.call("DEL", "a1"), nocmd("del"))
        self.setuser("u", "clearselectors")
        self.assertEqual(u.call("SET", "b1", "v"), nocmd("set"))

    def test_changes_apply_to_connected_clients(self):
        self.setuser("u", "on", ">pw", "+@all", "~*")
        u = self.login("u", "pw")
        self.assertEqual(u.call("SET", "k", "v"), "OK")
        self.setuser("u", "-set")
        self.assertEqual(u.call("SET", "k", "v"), nocmd("set"))

    def test_dryrun(self):
        self.setuser("u", "on", ">pw", "~k*", "&ch", "+get", "+publish")
        self.assertEqual(self.c.call("ACL", "DRYRUN", "u", "get", "k1"), "OK")
        self.assertEqual(self.c.call("ACL", "DRYRUN", "u", "get", "zz"),
                         b"This user has no permissions to access the 'zz' key")
        self.assertEqual(self.c.call("ACL", "DRYRUN", "u", "del", "k"),
                         b"This user has no permissions to run the 'del' command")
        self.assertEqual(self.c.call("ACL", "DRYRUN", "u", "publish", "x", "m"),
                         b"This user has no permissions to access the 'x' channel")
        self.assertEqual(self.c.call("ACL", "DRYRUN", "nouser", "get", "k"),
                         Err("ERR User 'nouser' not found"))
        self.assertEqual(self.c.call("ACL", "DRYRUN", "u", "nocmd"),
                         Err("ERR Command 'nocmd' not found"))


class Transactions(AclBase):
    def test_denied_when_queued(self):
        self.setuser("u", "on", ">pw", "~*", "+multi", "+exec", "+get")
        u = self.login("u", "pw")
        self.assertEqual(u.call("MULTI"), "OK")
        self.assertEqual(u.call("SET", "k", "v"), nocmd("set"))
        self.assertEqual(u.call("EXEC"),
                         Err("EXECABORT Transaction discarded because of previous errors."))
        log = pairs(self.c.call("ACL", "LOG", "1")[0])
        self.assertEqual(log["context"], b"multi")
        self.assertEqual(log["object"], b"set")

    def test_rules_changed_before_exec(self):
        self.setuser("u", "on", ">pw", "~*", "+multi", "+exec", "+get", "+set")
        u = self.login("u", "pw")
        self.assertEqual(u.call("MULTI"), "OK")
        self.assertEqual(u.call("SET", "k", "v"), "QUEUED")
        self.assertEqual(u.call("GET", "k"), "QUEUED")
        self.setuser("u", "-set")
        got = u.call("EXEC")
        self.assertEqual(got[0], Err(
            "NOPERM ACLs rules changed between the moment the transaction was accumulated and "
            "the EXEC call. This command is no longer allowed for the following reason: no "
            "permission to execute the command or subcommand"))
        self.assertEqual(got[1], None)
        self.assertEqual(self.c.call("GET", "k"), None)


class Scripts(AclBase):
    def test_script_calls_are_checked(self):
        self.setuser("u", "on", ">pw", "~k*", "+eval", "+get")
        u = self.login("u", "pw")
        self.assertEqual(u.call("EVAL", "return redis.call('get', 'k1')", "0"), None)
        got = u.call("EVAL", "return redis.call('get', 'zz')", "0")
        self.assertTrue(str(got).startswith(
            "ERR The user executing the script can't access at least one of the keys mentioned "
            "in the command arguments script:"), got)
        got = u.call("EVAL", "return redis.call('set', 'k1', 'v')", "0")
        self.assertTrue(str(got).startswith(
            "ERR The user executing the script can't run this command or subcommand script:"),
            got)
        log = pairs(self.c.call("ACL", "LOG", "1")[0])
        self.assertEqual((log["reason"], log["context"], log["object"]),
                         (b"command", b"lua", b"set"))
        self.assertIn(b"cmd=eval user=u", log["client-info"])


class Log(AclBase):
    def test_log_entries_group_and_reset(self):
        self.setuser("u", "on", ">pw", "~k*", "+get")
        u = self.login("u", "pw")
        for _ in range(3):
            self.assertEqual(u.call("GET", "zz"), NOKEY)
        self.assertEqual(u.call("SET", "k", "v"), nocmd("set"))
        self.assertEqual(self.fresh().call("AUTH", "u", "bad"), WRONGPASS)
        log = [pairs(e) for e in self.c.call("ACL", "LOG")]
        self.assertEqual(len(log), 3)
        self.assertEqual([(e["reason"], e["object"], e["username"], e["count"]) for e in log],
                         [(b"auth", b"AUTH", b"u", 1), (b"command", b"set", b"u", 1),
                          (b"key", b"zz", b"u", 3)])
        for e in log:
            self.assertEqual(e["context"], b"toplevel")
            self.assertLess(float(e["age-seconds"]), 60)
            self.assertTrue(e["client-info"].startswith(b"id="), e["client-info"])
        if "entry-id" not in log[0]:
            self.assertTrue(self.srv.is_redis, "cudis shows Redis 7.2's entry-id and timestamps")
        else:  # Redis 7.2's fields: an id per entry, created and last updated (unix ms)
            self.assertEqual([e["entry-id"] for e in log], [2, 1, 0])
            now = time.time() * 1000
            for e in log:
                self.assertLessEqual(e["timestamp-created"], e["timestamp-last-updated"])
                self.assertLess(abs(now - e["timestamp-last-updated"]), 60000)
        self.assertEqual(len(self.c.call("ACL", "LOG", "1")), 1)
        self.assertEqual(self.c.call("ACL", "LOG", "RESET"), "OK")
        self.assertEqual(self.c.call("ACL", "LOG"), [])

    def test_max_len(self):
        self.assertEqual(self.c.call("CONFIG", "SET", "acllog-max-len", "2"), "OK")
        self.setuser("u", "on", ">pw", "+get")
        u = self.login("u", "pw")
        for k in ("a", "b", "c", "d"):
            self.assertEqual(u.call("GET", k), NOKEY)
        log = [pairs(e)["object"] for e in self.c.call("ACL", "LOG")]
        self.assertEqual(log, [b"d", b"c"])

    def test_info_counts_denials(self):
        self.setuser("u", "on", ">pw", "~k*", "&c", "+get", "+publish")
        u = self.login("u", "pw")
        self.assertEqual(u.call("GET", "zz"), NOKEY)
        self.assertEqual(u.call("SET", "k", "v"), nocmd("set"))
        self.assertEqual(u.call("PUBLISH", "x", "m"), NOCHAN)
        info = self.c.call("INFO", "stats").decode()
        if "acl_access_denied_cmd" not in info:
            self.assertTrue(self.srv.is_redis, "cudis shows Redis 7.2's fields")
            return  # Debian's redis-server is 7.0: the fields came in 7.2
        got = {k: int(re.search(k + r":(\d+)", info).group(1))
               for k in ("acl_access_denied_cmd", "acl_access_denied_key",
                         "acl_access_denied_channel")}
        self.assertEqual(got, {"acl_access_denied_cmd": 1, "acl_access_denied_key": 1,
                               "acl_access_denied_channel": 1})


class Admin(AclBase):
    def test_cat(self):
        cats = self.c.call("ACL", "CAT")
        self.assertEqual(cats[:4], [b"keyspace", b"read", b"write", b"set"])
        self.assertEqual(len(cats), 21)
        read = self.c.call("ACL", "CAT", "read")
        self.assertIn(b"get", read)
        self.assertNotIn(b"set", read)
        self.assertIn(b"config|set", self.c.call("ACL", "CAT", "dangerous"))
        self.assertEqual(self.c.call("ACL", "CAT", "nope"), Err("ERR Unknown category 'nope'"))
        info = self.c.call("COMMAND", "INFO", "get", "set")
        self.assertEqual(sorted(info[0][6]), sorted(["@read", "@string", "@fast"]))
        self.assertEqual(sorted(info[1][6]), sorted(["@write", "@string", "@slow"]))

    def test_genpass(self):
        p = self.c.call("ACL", "GENPASS")
        self.assertTrue(re.fullmatch(rb"[0-9a-f]{64}", p), p)
        self.assertNotEqual(p, self.c.call("ACL", "GENPASS"))
        self.assertEqual(len(self.c.call("ACL", "GENPASS", "5")), 2)
        err = Err("ERR ACL GENPASS argument must be the number of bits for the output password, "
                  "a positive number up to 4096")
        self.assertEqual(self.c.call("ACL", "GENPASS", "0"), err)
        self.assertEqual(self.c.call("ACL", "GENPASS", "4097"), err)

    def test_deluser_closes_its_connections(self):
        self.setuser("u", "on", ">pw", "+@all", "~*")
        u = self.login("u", "pw")
        self.assertEqual(self.c.call("ACL", "DELUSER", "default"),
                         Err("ERR The 'default' user cannot be removed"))
        self.assertEqual(self.c.call("ACL", "DELUSER", "u", "nobody"), 1)
        with self.assertRaises((EOFError, ConnectionResetError)):
            u.call("PING")
        self.assertEqual(self.c.call("ACL", "USERS"), [b"default"])

    def test_client_kill_user_and_list(self):
        self.setuser("u", "on", ">pw", "+@all", "~*")
        u1 = self.login("u", "pw")
        u2 = self.login("u", "pw")
        lines = self.c.call("CLIENT", "LIST").decode().splitlines()
        self.assertEqual(sum(" user=u " in ln for ln in lines), 2)
        self.assertEqual(self.c.call("CLIENT", "KILL", "USER", "nobody"),
                         Err("ERR No such user 'nobody'"))
        self.assertEqual(self.c.call("CLIENT", "KILL", "USER", "u"), 2)
        for c in (u1, u2):
            with self.assertRaises((EOFError, ConnectionResetError)):
                c.call("PING")
        self.assertEqual(self.c.call("PING"), "PONG")

    def test_no_aclfile(self):
        msg = Err("ERR This Redis instance is not configured to use an ACL file. You may want to "
                  "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
                  "(assuming you have a Redis configuration file set) in order to store users in "
                  "the Redis configuration.")
        self.assertEqual(self.c.call("ACL", "SAVE"), msg)
        self.assertEqual(self.c.call("ACL", "LOAD"), msg)


ACLFILE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "cudis-e2e-acl-%d.acl" % os.getpid())


class AclFile(AclBase):
    extra = ("--aclfile", ACLFILE)

    @classmethod
    def setUpClass(cls):
        with open(ACLFILE, "w") as f:
            f.write("user default on nopass ~* &* +@all\n"
                    "user ops on >opspw ~* &* +@all -@dangerous\n")

    @classmethod
    def tearDownClass(cls):
        os.unlink(ACLFILE)

    def test_load_save(self):
        self.assertEqual(self.c.call("ACL", "USERS"), [b"default", b"ops"])
        self.login("ops", "opspw")
        self.setuser("app", "on", ">apppw", "~app:*", "+get")
        self.assertEqual(self.c.call("ACL", "SAVE"), "OK")
        with open(ACLFILE) as f:
            lines = f.read().splitlines()
        self.assertEqual([ln.split()[1] for ln in lines], ["app", "default", "ops"])
        self.assertTrue(lines[0].startswith("user app on #"), lines[0])
        # edited by hand, then loaded: the users are the file's
        with open(ACLFILE, "w") as f:
            f.write("user default on nopass ~* &* +@all\nuser viewer on >v ~* +@read\n")
        self.assertEqual(self.c.call("ACL", "LOAD"), "OK")
        self.assertEqual(self.c.call("ACL", "USERS"), [b"default", b"viewer"])
        self.login("viewer", "v")
        # a wrong line: nothing changes
        with open(ACLFILE, "w") as f:
            f.write("user default on nopass ~* &* +@all\nuser x on +nosuch\n")
        got = self.c.call("ACL", "LOAD")
        self.assertIsInstance(got, Err)
        self.assertIn(":2: Error in applying operation '+nosuch': Unknown command or category "
                      "name in ACL. ", got)
        self.assertTrue(got.endswith("WARNING: ACL errors detected, no change to the previously "
                                     "active ACL rules was performed"), got)
        self.assertEqual(self.c.call("ACL", "USERS"), [b"default", b"viewer"])


class ConfUsers(AclBase):
    extra = ("--user", "alice", "on", ">apw", "~a:*", "+@all")

    def test_user_line(self):
        self.assertEqual(self.c.call("ACL", "USERS"), [b"alice", b"default"])
        a = self.login("alice", "apw")
        self.assertEqual(a.call("SET", "a:1", "v"), "OK")
        self.assertEqual(a.call("SET", "b:1", "v"), NOKEY)


class BadConf(unittest.TestCase):
    def start_fails(self, *extra):
        port = e2e_server.free_port()
        args = [e2e_raw.BIN, "--port", str(port), "--bind", "127.0.0.1"] + list(extra)
        if "redis-server" in os.path.basename(e2e_raw.BIN):
            args += ["--save", ""]
        else:
            args += ["--engine", "cpu"]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            out, _ = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            self.fail("server started with %s" % (extra,))
        self.assertNotEqual(p.returncode, 0)
        return out.decode("utf-8", "replace")

    def test_users_and_aclfile_together(self):
        path = ACLFILE + ".both"
        with open(path, "w") as f:
            f.write("user default on nopass ~* &* +@all\n")
        try:
            out = self.start_fails("--aclfile", path, "--user", "bob", "on")
            self.assertIn("define either an ACL file or declare users", out)
        finally:
            os.unlink(path)

    def test_bad_aclfile(self):
        path = ACLFILE + ".bad"
        with open(path, "w") as f:
            f.write("user x on +nosuch\n")
        try:
            out = self.start_fails("--aclfile", path)
            self.assertIn("Unknown command or category name in ACL", out)
        finally:
            os.unlink(path)


class Concurrent(AclBase):
    """Rules change while clients of the same user run on other loops
    (io-threads 4): each command sees the rules before or after a change,
    never a torn user; a deleted user's connections close. Under TSan too
    (label stress)."""
    extra = ("--io-threads", "4")

    def test_rules_change_under_load(self):
        import threading
        self.setuser("app", "on", ">pw", "~app:*", "+@all")
        stop = threading.Event()
        errors = []
        counts = [0, 0]

        def worker(n):
            r = redis.Redis(host="127.0.0.1", port=self.srv.port, username="app", password="pw",
                            socket_timeout=10)
            try:
                i = 0
                while not stop.is_set():
                    i += 1
                    try:
                        p = r.pipeline(transaction=False)
                        for k in range(16):
                            p.set("app:%d:%d" % (n, k), i)
                            p.get("app:%d:%d" % (n, k))
                        p.execute()
                        counts[0] += 1
                    except redis.exceptions.NoPermissionError:
                        counts[1] += 1
                    except redis.exceptions.ResponseError as e:
                        if "NOPERM" not in str(e):
                            errors.append(str(e))
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(repr(e))
            finally:
                r.close()

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        try:
            for i in range(200):
                self.setuser("app", "-set" if i % 2 else "+set", "%%R~other%d:*" % i)
                self.setuser("tmp%d" % i, "on", ">x", "+@all", "~*")
                t = self.login("tmp%d" % i, "x")
                self.assertEqual(self.c.call("ACL", "DELUSER", "tmp%d" % i), 1)
                with self.assertRaises((EOFError, ConnectionResetError)):
                    t.call("PING")
                self.assertIsInstance(self.c.call("ACL", "LIST"), list)
                self.assertIsInstance(self.c.call("ACL", "LOG", "5"), list)
                # other loops' clients as they published themselves (TSan: no race)
                self.assertIn(b" user=app ", self.c.call("CLIENT", "LIST"))
        finally:
            stop.set()
            for t in threads:
                t.join(30)
        self.assertEqual(errors, [])
        self.assertGreater(counts[0], 0)
        self.assertEqual(self.c.call("PING"), "PONG")


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__], e2e_raw)
