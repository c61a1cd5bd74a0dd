#!/usr/bin/python3
"""test_gpumon.py - INFO gpu and the Prometheus metrics. Without an NVML library the server starts and
says gpu_available:0 with the reason; with tests/e2e/fake_nvml.c's stand-in
(two devices, fixed readings, no temperature on device 1, one Xid 79) every
field is there with the values NVML gave, converted to the units named, a
field NVML does not support is left out, and the Xid is counted. On
metrics-port, GET /metrics is well-formed Prometheus text (every sample
after its family's HELP and TYPE, names and labels as the format allows)
with INFO's values, the GPUs' series, and every metric the checked-in
Grafana board (deploy/grafana) queries. cudis
only (redis-server has no GPU section): skipped (77) against redis-server.
  /usr/bin/python3 test_gpumon.py --server PATH --nvml FAKE_LIB
"""
import json
import os
import re
import socket
import sys
import time
import unittest
import urllib.request

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None
NVML = None


class GpuInfo(unittest.TestCase):
    def start(self, lib, extra=()):
        os.environ["CUDIS_NVML_LIBRARY"] = lib
        try:
            s = e2e_server.Server(BIN, list(extra))
        finally:
            del os.environ["CUDIS_NVML_LIBRARY"]
        self.addCleanup(lambda: self.assertEqual(s.stop(), 0))
        return redis.Redis(port=s.port, decode_responses=True)

    def test_no_library(self):
        r = self.start("/nonexistent/libnvidia-ml.so.1")
        info = r.info("gpu")
        self.assertEqual(info["gpu_available"], 0)
        self.assertIn("/nonexistent/libnvidia-ml.so.1", info["gpu_unavailable_reason"])
        self.assertIn("gpu_available", r.info())  # in the default sections
        self.assertEqual(r.ping(), True)

    def test_stand_in_library(self):
        r = self.start(NVML)
        deadline = time.time() + 10
        info = r.info("gpu")
        while info.get("gpu0_xid_errors", 0) == 0 and time.time() < deadline:
            time.sleep(0.1)
            info = r.info("gpu")
        self.assertEqual(info["gpu_available"], 1)
        self.assertEqual(info["gpu_driver_version"], "550.00-fake")
        self.assertEqual(info["gpu_count"], 2)
        self.assertLess(info["gpu_sample_age_ms"], 5000)
        self.assertEqual(info["gpu0_name"], "NVIDIA H200 stand-in 0")
        self.assertEqual(info["gpu1_uuid"], "GPU-00000000-0000-0000-0000-000000000001")
        self.assertEqual(info["gpu1_pci_bus_id"], "00000000:19:00.0")
        self.assertEqual(info["gpu0_memory_total_bytes"], 150351020032)
        self.assertEqual(info["gpu1_memory_used_bytes"], 2 * 1073741824)
        self.assertEqual(info["gpu0_memory_free_bytes"], 150351020032 - 1073741824)
        self.assertEqual(info["gpu0_cache_bytes"], 0)  # the cpu engine holds nothing there
        self.assertEqual(info["gpu1_utilization_sm_percent"], 38)
        self.assertEqual(info["gpu0_utilization_memory_percent"], 12)
        self.assertEqual(info["gpu0_temperature_celsius"], 41)
        self.assertNotIn("gpu1_temperature_celsius", info)  # not supported there
        self.assertEqual(info["gpu0_power_draw_watts"], 123.456)
        self.assertEqual(info["gpu0_power_limit_watts"], 700.0)
        self.assertEqual(info["gpu0_clock_sm_mhz"], 1980)
        self.assertEqual(info["gpu0_clock_memory_mhz"], 2619)
        self.assertEqual(info["gpu0_pcie_tx_bytes_per_sec"], 1000 * 1024)
        self.assertEqual(info["gpu0_pcie_rx_bytes_per_sec"], 2000 * 1024)
        self.assertEqual(info["gpu0_ecc_errors_corrected"], 3)
        self.assertEqual(info["gpu0_ecc_errors_uncorrected"], 0)
        self.assertEqual(info["gpu0_throttle_reasons"], "0x1")
        self.assertEqual(info["gpu0_xid_errors"], 1)
        self.assertEqual(info["gpu0_last_xid"], 79)
        self.assertEqual(info["gpu1_xid_errors"], 0)

    def test_metrics_endpoint(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        mport = s.getsockname()[1]
        s.close()
        r = self.start(NVML, ["--metrics-port", str(mport)])
        r.set("a", "1")
        r.set("b", "2", ex=100)
        r.get("a")
        r.get("nope")
        url = "http://127.0.0.1:%d/metrics" % mport
        deadline = time.time() + 10
        while True:
            with urllib.request.urlopen(url, timeout=5) as resp:
                self.assertEqual(resp.status, 200)
                self.assertTrue(resp.headers["Content-Type"].startswith("text/plain; version=0.0.4"))
                text = resp.read().decode()
            if 'cudis_gpu_xid_errors_total{gpu="0"} 1' in text or time.time() > deadline:
                break
            time.sleep(0.1)
        samples, typed = {}, {}
        family = None
        name_re = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
        for line in text.splitlines():
            m = re.fullmatch(r"# (HELP|TYPE) (%s) (.+)" % name_re, line)
            if m:
                if m.group(1) == "TYPE":
                    self.assertIn(m.group(3), ("gauge", "counter"), line)
                    self.assertNotIn(m.group(2), typed, "family given twice: " + line)
                    typed[m.group(2)] = m.group(3)
                    family = m.group(2)
                continue
            m = re.fullmatch(r"(%s)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\]|\\\\.)*\",?)*\})? "
                             r"(-?[0-9.e+-]+|NaN|[+-]Inf)" % name_re, line)
            self.assertIsNotNone(m, "not a sample line: %r" % line)
            self.assertEqual(m.group(1), family, "sample outside its family: " + line)
            samples[m.group(1) + (m.group(2) or "")] = float(m.group(3))
        info = r.info()
        self.assertEqual(samples["redis_up"], 1)
        self.assertEqual(samples['redis_db_keys{db="db0"}'], 2)
        self.assertEqual(samples['redis_db_keys_expiring{db="db0"}'], 1)
        self.assertGreaterEqual(samples["redis_keyspace_hits_total"], 1)
        self.assertGreaterEqual(samples["redis_keyspace_misses_total"], 1)
        self.assertEqual(samples["redis_memory_max_bytes"], info["maxmemory"])
        self.assertEqual(typed["redis_commands_processed_total"], "counter")
        self.assertEqual(samples["cudis_gpu_available"], 1)
        self.assertEqual(samples['cudis_gpu_temperature_celsius{gpu="0"}'], 41)
        self.assertNotIn('cudis_gpu_temperature_celsius{gpu="1"}', samples)
        self.assertEqual(samples['cudis_gpu_power_draw_watts{gpu="0"}'], 123.456)
        self.assertEqual(samples['cudis_gpu_xid_errors_total{gpu="0"}'], 1)
        self.assertEqual(typed["cudis_gpu_xid_errors_total"], "counter")
        self.assertEqual(samples['cudis_gpu_info{gpu="1",name="NVIDIA H200 stand-in 1",'
                                 'uuid="GPU-00000000-0000-0000-0000-000000000001",'
                                 'pci_bus_id="00000000:19:00.0"}'], 1)
        # the Grafana board asks only for metrics the endpoint has
        board = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy",
                             "grafana", "cudis-dashboard.json")
        with open(board) as f:
            dash = json.load(f)
        names = set(k.split("{")[0] for k in samples)
        used = set()
        for p in dash["panels"]:
            for t in p["targets"]:
                for n in re.findall(r"\b((?:redis|cudis)_[a-z0-9_]+)\b", t["expr"]):
                    used.add(n)
        self.assertGreater(len(used), 10)
        self.assertEqual(sorted(used - names), [])
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen("http://127.0.0.1:%d/other" % mport, timeout=5)
        self.assertEqual(cm.exception.code, 404)


if __name__ == "__main__":
    if "--nvml" in sys.argv:
        i = sys.argv.index("--nvml")
        NVML = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    bin_path = e2e_server.binary(sys.argv)
    if bin_path and "redis-server" in os.path.basename(bin_path):
        print("redis-server has no INFO gpu; skipped")
        sys.exit(77)
    if not NVML or not os.path.exists(NVML):
        print("usage: test_gpumon.py --server PATH --nvml FAKE_LIB (tests/e2e/fake_nvml.c, built)")
        sys.exit(2)
    e2e_server.main(sys.modules[__name__])
