#!/usr/bin/python3
"""test_faults.py - fault injection (issue 12, deliver 2), against the test
build (cmake -DCUDIS_FAULTS=ON, with ASan: scripts/faults.sh builds it):
for many N, the N-th (and every P-th later) client query-buffer growth,
engine batch or socket write fails for real (common/cudis_fault.h). Under
each, while clients write, read, pipeline and send big arguments, the
server answers an error or closes the affected connection, never crashes,
exits 0 on SIGTERM with no leak (ASan checks at exit), and every write it
acknowledged to any client is there afterwards.
  /usr/bin/python3 test_faults.py --server build-fault/server/cudis-server
A server built without CUDIS_FAULTS makes the test skip itself (exit 77).
"""
import os
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None

# (site, N, period): N-th call fails, then every period-th (0: once)
CASES = [("alloc", n, 0) for n in (1, 2, 3, 5, 8)] + \
        [("alloc", 2, 3)] + \
        [("engine", n, 0) for n in (1, 2, 3, 5, 13, 40)] + \
        [("engine", 7, 11), ("engine", 1, 2)] + \
        [("write", n, 0) for n in (2, 3, 4, 6, 10, 30)] + \
        [("write", 5, 7), ("write", 3, 2)]


def built_with_faults(path):
    try:
        out = subprocess.run(["strings", path], capture_output=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"cudis fault injection" in out


class Client:
    """A raw RESP client that reconnects after the server closed it."""

    def __init__(self, port):
        self.port = port
        self.s = None
        self.buf = b""

    def _conn(self):
        if self.s is None:
            self.s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            self.buf = b""

    def drop(self):
        if self.s is not None:
            self.s.close()
        self.s = None

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self._conn()
        self.s.sendall(out)

    def _line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(1 << 16)
            if not d:
                raise EOFError
            self.buf += d
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                d = self.s.recv(1 << 16)
                if not d:
                    raise EOFError
                self.buf += d
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v
        if t == b"*":
            return [self.read() for _ in range(int(rest))]
        if t == b":":
            return int(rest)
        if t == b"-":
            return Exception(rest.decode())
        return rest.decode()

    def call(self, *args):
        """The reply, or None when the connection went (reconnects next)."""
        try:
            self.send(*args)
            return self.read()
        except (EOFError, ConnectionError, BrokenPipeError, socket.timeout):
            self.drop()
            return None


class Faults(unittest.TestCase):
    def run_case(self, site, n, period):
        os.environ["CUDIS_FAULT"] = "%s=%d" % (site, n) + ("/%d" % period if period else "")
        try:
            srv = e2e_server.Server(BIN)
        finally:
            del os.environ["CUDIS_FAULT"]
        acked = {}
        w, big, r = Client(srv.port), Client(srv.port), Client(srv.port)
        try:
            for i in range(200):
                k = "ack:%d" % i
                if w.call("SET", k, str(i)) == "OK":
                    acked[k] = str(i).encode()
                if i % 20 == 0:  # an argument that grows a query buffer
                    big.call("SET", "big:%d" % i, b"x" * (300000 + i))
                if i % 25 == 0:  # a pipeline of reads and writes
                    try:
                        for j in range(50):
                            big.send("INCR", "ctr")
                            big.send("MGET", "ack:%d" % j, "big:0")
                        for j in range(100):
                            big.read()
                    except (EOFError, ConnectionError, BrokenPipeError, socket.timeout):
                        big.drop()
                self.assertIsNone(srv.proc.poll(), "%s=%d: the server died" % (site, n))
            w.drop()
            big.drop()
            # what was acknowledged is there (read until a read gets through)
            for k, v in acked.items():
                for _ in range(50):
                    got = r.call("GET", k)
                    if got is not None and not isinstance(got, Exception):
                        break
                self.assertEqual(got, v, "%s=%d/%d: acknowledged %s lost" % (site, n, period, k))
            # the server goes on serving (every other call failing: about half)
            self.assertGreater(len(acked), 60, "%s=%d/%d: too few writes went through"
                               % (site, n, period))
            for _ in range(50):
                if r.call("PING") == "PONG":
                    break
            else:
                self.fail("%s=%d/%d: no PONG" % (site, n, period))
        finally:
            for c in (w, big, r):
                c.drop()
            rc = srv.stop()
        self.assertEqual(rc, 0, "%s=%d/%d: exit status %s (a crash or a leak)"
                         % (site, n, period, rc))

    def test_every_case(self):
        if not built_with_faults(BIN):
            self.skipTest("%s is not a CUDIS_FAULTS build" % BIN)
        for site, n, period in CASES:
            with self.subTest(site=site, n=n, period=period):
                self.run_case(site, n, period)


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
