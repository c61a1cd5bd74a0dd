#!/usr/bin/python3
"""test_tools.py - Debian's redis-tools against the server: redis-cli (ping,
set/get, --scan, info, a piped batch) and redis-benchmark
(-q -n 2000 -t set,get,incr,mset -P 4) must run without errors and report
non-zero rates; Debian's prometheus-redis-exporter scrapes it with no
error in its log. Run by ctest (label e2e):
  /usr/bin/python3 test_tools.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import unittest
import urllib.request

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

    @unittest.skipIf(shutil.which("prometheus-redis-exporter") is None,
                     "prometheus-redis-exporter not installed")
    def test_prometheus_exporter(self):
        self.cli_ok("set", "k", "v")
        self.cli_ok("select", "0")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        log_path = os.path.join(self.srv.dir, "exporter.log")
        with open(log_path, "wb") as log:
            exp = subprocess.Popen(["prometheus-redis-exporter", "-redis.addr",
                                    "redis://127.0.0.1:%d" % self.srv.port, "-web.listen-address",
                                    "127.0.0.1:%d" % port], stdout=log, stderr=log)
        try:
            body = ""
            for _ in range(100):
                try:
                    body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                                  timeout=10).read().decode()
                    break
                except OSError:
                    time.sleep(0.1)
            body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                          timeout=10).read().decode()  # a second scrape
        finally:
            exp.terminate()
            exp.wait(timeout=10)
        with open(log_path) as f:
            log_text = f.read()
        for metric in ("redis_up 1", 'redis_exporter_last_scrape_error{err=""} 0',
                       "redis_commands_processed_total", "redis_slowlog_length",
                       'redis_db_keys{db="db0"} 1', "redis_connected_clients"):
            self.assertTrue(metric in body, "%s: not in the metrics" % metric)
        self.assertNotIn("level=error", log_text, log_text)
        self.assertNotIn("level=warning", log_text, log_text)


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
