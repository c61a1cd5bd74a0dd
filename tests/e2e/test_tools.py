#!/usr/bin/python3
"""test_tools.py - Debian's redis-tools against the server: redis-cli (ping,
set/get, --scan, info, a piped batch) and redis-benchmark
(-q -n 2000 -t set,get,incr,mset -P 4) must run without errors and report
non-zero rates. Run by ctest (label e2e):
  /usr/bin/python3 test_tools.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None


def run(args, stdin=None, timeout=120):
    p = subprocess.run(args, input=stdin, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


class Tools(unittest.TestCase):
    def setUp(self):
        self.srv = e2e_server.Server(BIN)
        self.cli = ["redis-cli", "-h", "127.0.0.1", "-p", str(self.srv.port)]

    def tearDown(self):
        self.assertEqual(self.srv.stop(), 0, "server did not exit 0 on SIGTERM")

    def cli_ok(self, *args, stdin=None):
        rc, out, err = run(self.cli + list(args), stdin=stdin)
        self.assertEqual(rc, 0, "redis-cli %s: rc %d, %s %s" % (args, rc, out, err))
        return out

    @unittest.skipIf(shutil.which("redis-cli") is None, "redis-cli not installed")
    def test_redis_cli(self):
        self.assertEqual(self.cli_ok("ping").strip(), "PONG")
        self.assertEqual(self.cli_ok("set", "greeting", "hello world").strip(), "OK")
        self.assertEqual(self.cli_ok("get", "greeting").strip(), "hello world")
        self.assertEqual(self.cli_ok("incrby", "n", "5").strip(), "5")
        for i in range(50):
            self.cli_ok("set", "scan:%d" % i, str(i))
        keys = self.cli_ok("--scan", "--pattern", "scan:*").split()
        self.assertEqual(sorted(keys), sorted("scan:%d" % i for i in range(50)))
        self.assertEqual(len(self.cli_ok("--scan").split()), 52)
        info = self.cli_ok("info")
        self.assertIn("# Server", info)
        self.assertIn("redis_version:", info)
        self.assertIn("db0:keys=52", info)
        self.assertIn("connected_clients:", self.cli_ok("info", "clients"))
        # unix socket
        rc, out, err = run(["redis-cli", "-s", self.srv.sock, "get", "greeting"])
        self.assertEqual((rc, out.strip()), (0, "hello world"), err)
        # a batch on stdin (one connection, pipelined)
        batch = "".join("set pipe:%d %d\n" % (i, i) for i in range(500)) + "dbsize\n"
        out = self.cli_ok(stdin=batch.encode())
        lines = out.split()
        self.assertEqual(lines[:500], ["OK"] * 500)
        self.assertEqual(lines[500], "552")
        # an error reply is shown as such, exit status 0 in non-interactive mode
        out = self.cli_ok("incr", "greeting")
        self.assertIn("ERR value is not an integer or out of range", out)

    @unittest.skipIf(shutil.which("redis-benchmark") is None, "redis-benchmark not installed")
    def test_redis_benchmark(self):
        rc, out, err = run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(self.srv.port), "-q", "-n", "2000",
                            "-t", "set,get,incr,mset", "-P", "4"], timeout=240)
        text = out + err
        self.assertEqual(rc, 0, text)
        for bad in ("ERR", "rror", "NOAUTH", "WRONGTYPE"):
            self.assertNotIn(bad, text, text)
        rates = {}
        for line in re.split(r"[\r\n]+", text):
            m = re.match(r"\s*([A-Z]+)(?: \(\d+ keys\))?: ([0-9.]+) requests per second", line)
            if m:
                rates[m.group(1)] = float(m.group(2))
        self.assertEqual(sorted(rates), ["GET", "INCR", "MSET", "SET"], text)
        for name, rate in rates.items():
            self.assertGreater(rate, 0, "%s rate is zero: %s" % (name, text))
        # the keys it wrote are there
        self.assertEqual(self.cli_ok("exists", "key:__rand_int__").strip(), "1")
        self.assertEqual(self.cli_ok("get", "counter:__rand_int__").strip(), "2000")


if __name__ == "__main__":
    BIN = e2e_server.binary(sys.argv)
    if not BIN:
        print("no server under test: build cudis-server or set CUDIS_E2E_SERVER; skipped")
        sys.exit(e2e_server.SKIP)
    argv = e2e_server.strip_server_arg(sys.argv)
    unittest.main(argv=argv, verbosity=2)
