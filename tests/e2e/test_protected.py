#!/usr/bin/python3
"""test_protected.py - protected mode from a non-local address, as Redis 7
answers it. The client's socket is bound to 127.0.0.2 (any 127/8 address
is on Linux's loopback device, so no namespace is needed); Redis counts
only 127.0.0.1, ::1 and unix sockets as local. With protected mode on and
no password such a client gets Redis's -DENIED text and the connection is
closed (rejected_connections counts it); from 127.0.0.1 and the unix
socket it is served; once a password is set it is admitted (and must
AUTH; a wrong password counts in INFO's acl_access_denied_auth); with
protected mode off it is served without one. A client that floods
commands before AUTH without reading its replies is closed.
Run by ctest (label e2e):
  /usr/bin/python3 test_protected.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_raw  # noqa: E402
import e2e_server  # noqa: E402
from e2e_raw import Base  # noqa: E402

BIN = None

DENIED = (
    b"-DENIED Redis is running in protected mode because protected mode is enabled and no "
    b"password is set for the default user. In this mode connections are only accepted from "
    b"the loopback interface. If you want to connect from external computers to Redis you may "
    b"adopt one of the following solutions: 1) Just disable protected mode sending the command "
    b"'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from "
    b"the same host the server is running, however MAKE SURE Redis is not publicly accessible "
    b"from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
    b"Alternatively you can just disable the protected mode by editing the Redis configuration "
    b"file, and setting the protected mode option to 'no', and then restarting the server. 3) "
    b"If you started the server manually just for testing, restart it with the "
    b"'--protected-mode no' option. 4) Setup a an authentication password for the default "
    b"user. NOTE: You only need to do one of the above things in order for the server to start "
    b"accepting connections from the outside.\r\n")


def talk(port, payload, src="127.0.0.2", replies=1):
    """Send payload from address src; return what came back until the
    server closed the connection or `replies` lines arrived."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.bind((src, 0))
        s.connect(("127.0.0.1", port))
        if payload:
            s.sendall(payload)
        got = b""
        while got.count(b"\r\n") < replies:
            try:
                d = s.recv(65536)
            except ConnectionResetError:
                break
            if not d:
                break
            got += d
        return got
    finally:
        s.close()


def closed_after(port, src="127.0.0.2"):
    """True when the server closes a connection from src without a word
    more than its first reply."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.bind((src, 0))
        s.connect(("127.0.0.1", port))
        got = b""
        while True:
            try:
                d = s.recv(65536)
            except ConnectionResetError:
                return True
            if not d:
                return True
            got += d
            if got.endswith(b"\r\n"):
                try:
                    s.sendall(b"PING\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    return True
    except socket.timeout:
        return False
    finally:
        s.close()


class Protected(Base):
    def rejected(self):
        info = self.c.call("INFO", "stats").decode()
        return int(info.split("rejected_connections:")[1].split()[0])

    def test_non_local_client_is_denied_without_password(self):
        port = self.srv.port
        self.assertEqual(self.c.call("CONFIG", "GET", "protected-mode"),
                         [b"protected-mode", b"yes"])
        before = self.rejected()
        self.assertEqual(talk(port, b"PING\r\n"), DENIED)
        self.assertTrue(closed_after(port))
        self.assertEqual(self.rejected(), before + 2)
        # the loopback address itself and the unix socket are local
        self.assertEqual(talk(port, b"PING\r\n", src="127.0.0.1"), b"+PONG\r\n")
        self.assertEqual(self.c.call("PING"), "PONG")

    def test_password_admits_then_auth_is_required(self):
        port = self.srv.port
        self.assertEqual(self.c.call("CONFIG", "SET", "requirepass", "s3cret"), "OK")
        got = talk(port, b"PING\r\nAUTH wrong\r\nAUTH s3cret\r\nPING\r\n", replies=4)
        self.assertEqual(got, b"-NOAUTH Authentication required.\r\n"
                              b"-WRONGPASS invalid username-password pair or user is "
                              b"disabled.\r\n+OK\r\n+PONG\r\n")
        self.assertEqual(self.c.call("AUTH", "s3cret"), "OK")
        info = self.c.call("INFO", "stats").decode()
        if not self.srv.is_redis or "acl_access_denied_auth" in info:  # (Redis 7.2's field)
            self.assertEqual(int(info.split("acl_access_denied_auth:")[1].split()[0]), 1)
        self.assertEqual(self.c.call("CONFIG", "SET", "requirepass", ""), "OK")
        self.assertEqual(talk(port, b"PING\r\n"), DENIED, "no password again: denied again")

    def test_protected_mode_off_serves_everyone(self):
        port = self.srv.port
        self.assertEqual(self.c.call("CONFIG", "SET", "protected-mode", "no"), "OK")
        self.assertEqual(talk(port, b"PING\r\n"), b"+PONG\r\n")
        self.assertEqual(self.c.call("CONFIG", "SET", "protected-mode", "yes"), "OK")
        self.assertEqual(talk(port, b"PING\r\n"), DENIED)


class UnauthenticatedFlood(Base):
    """A client that has not authenticated may queue only a small reply
    budget: one that sends thousands of commands (each answered -NOAUTH)
    without reading is closed, as Redis closes it, and the server goes on."""
    extra = ("--requirepass", "s3cret")

    def test_flood_is_closed(self):
        s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
        try:
            s.sendall(b"PING\r\n" * 3000)
            time.sleep(0.5)
            got, closed = b"", False
            while len(got) < 3000 * 34:
                try:
                    d = s.recv(65536)
                except ConnectionResetError:
                    closed = True
                    break
                if not d:
                    closed = True
                    break
                got += d
            self.assertTrue(closed, "3,000 -NOAUTH replies queued: %d bytes read" % len(got))
            self.assertLess(len(got), 3000 * 34)
        finally:
            s.close()
        self.assertEqual(talk(self.srv.port, b"AUTH s3cret\r\nPING\r\n", src="127.0.0.1",
                              replies=2), b"+OK\r\n+PONG\r\n")


class ProtectedOffAtStart(Base):
    extra = ("--protected-mode", "no")

    def test_served(self):
        self.assertEqual(talk(self.srv.port, b"SET k v\r\nGET k\r\n", replies=2),
                         b"+OK\r\n$1\r\nv\r\n")


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__], e2e_raw)
