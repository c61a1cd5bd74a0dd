#!/usr/bin/python3
"""test_signals.py - what the process does with signals and its pidfile
(issue 12 findings 2 and 3): SIGHUP leaves the server running and, after
logrotate moved the log away, the next lines go to a new file at the
configured path; a second instance that cannot bind its port leaves the
running one's pidfile alone, and the pidfile goes when its owner exits.
Validated against redis-server first.
  /usr/bin/python3 test_signals.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402
from test_tracking import Conn  # noqa: E402

BIN = None


class Signals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cudis-signals-")
        self.logfile = os.path.join(self.tmp, "server.log")
        self.pidfile = os.path.join(self.tmp, "server.pid")
        self.srv = e2e_server.Server(BIN, ("--logfile", self.logfile, "--pidfile", self.pidfile))

    def tearDown(self):
        self.srv.stop()

    def test_sighup_keeps_running_and_reopens_the_log(self):
        os.rename(self.logfile, self.logfile + ".1")  # what logrotate does
        self.srv.proc.send_signal(signal.SIGHUP)
        time.sleep(0.3)
        self.assertIsNone(self.srv.proc.poll(), "SIGHUP stopped the server")
        c = Conn(self.srv.port)
        self.assertEqual(c.call("PING"), "PONG")
        c.close()
        self.assertEqual(self.srv.stop(), 0)
        with open(self.logfile) as f:  # the lines after the rotation
            self.assertIn("ready to exit", f.read())

    def test_pidfile_belongs_to_the_instance_that_wrote_it(self):
        for _ in range(100):
            if os.path.exists(self.pidfile):
                break
            time.sleep(0.05)
        with open(self.pidfile) as f:
            self.assertEqual(int(f.read()), self.srv.proc.pid)
        args = [BIN, "--port", str(self.srv.port), "--bind", "127.0.0.1", "--pidfile",
                self.pidfile]
        args += ["--save", "", "--appendonly", "no"] if self.srv.is_redis else ["--engine", "cpu"]
        second = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                timeout=30)
        self.assertNotEqual(second.returncode, 0, "a second instance on the same port started")
        with open(self.pidfile) as f:
            self.assertEqual(int(f.read()), self.srv.proc.pid)
        self.assertEqual(self.srv.stop(), 0)
        self.assertFalse(os.path.exists(self.pidfile))


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
