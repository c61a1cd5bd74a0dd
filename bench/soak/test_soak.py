"""test_soak.py - the soak's own checks, checked: a wrong value, a counter off
by one, a key back from the dead, growing RSS and a histogram percentile must
each be caught, and their harmless look-alikes must not. Needs no server
(ctest soak_units; run: /usr/bin/python3 bench/soak/test_soak.py)."""
import importlib.util
import os
import queue
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
if importlib.util.find_spec("redis") is None:
    print("no redis module (Debian: python3-redis; scripts/deps.sh installs it)")
    sys.exit(1)
import soak  # noqa: E402
import soak_load as L  # noqa: E402


class FakeCtx:
    server = "test"
    port = 0
    timeout = 1
    keys = 1000

    def __init__(self):
        self.errq = queue.Queue()


def worker():
    return L.Worker(FakeCtx(), 0, [0] * L.SLOTS, 1)


class Values(unittest.TestCase):
    def test_whole_values_pass(self):
        for size in (1, 16, 40, 1000, 70000, 1_000_000):
            v = L.make_value(b"soak:k:7", size, 12345)
            self.assertTrue(L.value_ok(b"soak:k:7", v), size)
            self.assertEqual(len(v), max(size, len(b"soak:k:7|%d|12345|" % size)))

    def test_damaged_values_fail(self):
        v = L.make_value(b"soak:k:7", 500, 99)
        self.assertFalse(L.value_ok(b"soak:k:8", v))  # another key's value
        self.assertFalse(L.value_ok(b"soak:k:7", v[:-1]))  # truncated
        self.assertFalse(L.value_ok(b"soak:k:7", v + b"x"))  # too long
        flipped = v[:300] + bytes([v[300] ^ 1]) + v[301:]
        self.assertFalse(L.value_ok(b"soak:k:7", flipped))
        other = L.make_value(b"soak:k:7", 500, 98)  # same length, other filler
        self.assertFalse(L.value_ok(b"soak:k:7", v[:len(v) - 100] + other[-100:]))
        self.assertFalse(L.value_ok(b"soak:k:7", b"1"))  # an INCR's result


class Histogram(unittest.TestCase):
    def test_percentiles_within_bucket_width(self):
        hist = [0] * L.HIST_BUCKETS
        for us in range(1, 10001):  # 1 .. 10000 us, uniform
            hist[L.hist_index(us)] += 1
        for q, exact in ((0.5, 5000), (0.99, 9900), (0.999, 9990)):
            got = L.percentile(hist, q)
            self.assertLess(abs(got - exact) / exact, 0.025, (q, got))
        self.assertLess(abs(L.hist_max(hist) - 10000) / 10000, 0.025)
        self.assertEqual(L.percentile([0] * L.HIST_BUCKETS, 0.99), 0.0)


class OwnedKeys(unittest.TestCase):
    def test_counter(self):
        w = worker()
        w.counter_reply(3, 1, "INCR")
        w.counter_reply(3, 2, "INCR")
        self.assertEqual(w.stats[L.ERRORS], 0)
        w.counter_reply(3, 1, "INCR")  # evicted, started again
        self.assertEqual((w.stats[L.ERRORS], w.stats[L.RESETS]), (0, 1))
        w.counter_reply(3, 3, "INCR")  # skipped 2
        self.assertEqual(w.stats[L.ERRORS], 1)

    def test_string(self):
        w = worker()
        key = w.own_key(b"s", 5)
        v1, v2 = L.make_value(key, 50, 1), L.make_value(key, 50, 2)
        w.strings[5] = v2
        w.string_read(5, v2, "GET")
        w.string_read(5, None, "GET")  # evicted
        self.assertEqual(w.stats[L.ERRORS], 0)
        w.string_read(5, v2, "GET")  # back from the dead
        self.assertEqual(w.stats[L.ERRORS], 1)
        w.strings[5] = v2
        w.string_read(5, v1, "GET")  # an older write
        self.assertEqual(w.stats[L.ERRORS], 2)
        w.strings[5] = L.UNKNOWN  # after a lost round trip: any whole value
        w.string_read(5, v1, "GET")
        self.assertEqual((w.stats[L.ERRORS], w.strings[5]), (2, v1))

    def test_oom_is_not_an_error(self):
        w = worker()
        oom = L.ResponseError("OOM command not allowed when used memory > 'maxmemory'.")
        self.assertTrue(w.refused(oom, "SET"))
        self.assertEqual((w.stats[L.OOM], w.stats[L.ERRORS]), (1, 0))
        self.assertTrue(w.refused(L.ResponseError("ERR syntax error"), "SET"))
        self.assertEqual(w.stats[L.ERRORS], 1)
        self.assertIn("ERR syntax error", w.ctx.errq.get_nowait())


class RssVerdict(unittest.TestCase):
    def rows(self, rss):
        return [{"elapsed_s": 2.0 * i, "rss_mb": v} for i, v in enumerate(rss)]

    def verdict(self, rss):
        return soak.rss_verdict(self.rows(rss), 0.2, 5.0, 8.0)[0]

    def test_flat_after_warmup_passes(self):
        self.assertTrue(self.verdict([10, 40, 70, 78] + [80] * 56))

    def test_steady_growth_fails(self):
        self.assertFalse(self.verdict([80 + 0.5 * i for i in range(60)]))

    def test_spikes_do_not_decide(self):
        rss = [80.0] * 60
        for i in (20, 40, 55, 58):
            rss[i] = 120.0
        self.assertTrue(self.verdict(rss))

    def test_threshold_is_max_of_pct_and_mb(self):
        # at 400 MB the 5% (20 MB) is the limit, not the 8 MB
        self.assertTrue(self.verdict([400] * 30 + [415] * 30))
        self.assertFalse(self.verdict([400] * 30 + [425] * 30))
        self.assertFalse(self.verdict([80] * 30 + [89] * 30))

    def test_too_few_samples_fail(self):
        self.assertFalse(self.verdict([80, 80, 80]))


if __name__ == "__main__":
    unittest.main()
