#!/usr/bin/python3
"""test_fdlimit.py - a server started with few file descriptors (ulimit -n
64, as an unprivileged user so the limit cannot be raised) lowers
maxclients to what fits and says so, refuses the clients beyond it with
"-ERR max number of clients reached", does not spin or flood its log, and
refuses a CONFIG SET maxclients the limit cannot hold (issue 12 finding
1). Validated against redis-server first.
  /usr/bin/python3 test_fdlimit.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import resource
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402
from test_tracking import Conn, Err  # noqa: E402

BIN = None
NOBODY = 65534


def low_fds():
    if os.getuid() == 0:  # root could raise the limit again
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class FdLimit(unittest.TestCase):
    def setUp(self):
        self.srv = e2e_server.Server(BIN, (), preexec=low_fds)

    def tearDown(self):
        self.assertEqual(self.srv.stop(), 0)

    def test_maxclients_fits_the_limit(self):
        c = Conn(self.srv.port)
        self.assertEqual(c.call("CONFIG", "GET", "maxclients"), [b"maxclients", b"32"])
        self.assertIn("maxclients has been reduced to 32", self.srv.log_tail())
        socks, refused, served = [], 0, 0
        for _ in range(100):
            s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
            s.sendall(b"PING\r\n")
            socks.append(s)
        for s in socks:
            r = s.recv(100)
            if r == b"+PONG\r\n":
                served += 1
            else:
                self.assertEqual(r, b"-ERR max number of clients reached\r\n")
                refused += 1
        self.assertEqual(served + 1, 32)  # with c
        self.assertEqual(refused, 100 - served)
        t0 = cpu_seconds(self.srv.proc.pid)
        time.sleep(1)
        self.assertLess(cpu_seconds(self.srv.proc.pid) - t0, 0.3, "the server spins")
        self.assertLess(os.path.getsize(self.srv.log), 100000, "the log floods")
        for s in socks:
            s.close()
        time.sleep(0.3)
        self.assertEqual(c.call("PING"), "PONG")
        self.assertEqual(c.call("CONFIG", "SET", "maxclients", "1000"),
                         Err("ERR CONFIG SET failed (possibly related to argument 'maxclients') "
                             "- The operating system is not able to handle the specified number "
                             "of clients, try with 32"))
        self.assertEqual(c.call("CONFIG", "GET", "maxclients"), [b"maxclients", b"32"])
        self.assertEqual(c.call("CONFIG", "SET", "maxclients", "20"), "OK")
        c.close()


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
