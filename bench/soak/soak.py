"""soak.py - runs the soak workload (soak_load.py) against servers already
started (by soak.sh), samples them every interval, and judges the run.

usage: soak.py --server NAME=PORT,PID [--reference NAME=PORT,PID ...]
               [--duration S] [--interval S] [--csv FILE] [options]

For each server: WORKERS worker processes, one subscriber, one churn and one
config process (soak_load.py says what each does). Every INTERVAL seconds
it reads the server's RSS (VmRSS of /proc/PID/status) and INFO, and the
clients' counters and latency histograms, prints a row and appends it to
the CSV. At the end it prints a summary, writes it beside the CSV (.txt),
plots RSS, p99 and ops/s over time (.png, with gnuplot) and exits 0 only if
every server given with --server passed (the --reference ones are judged
and printed but do not decide): no unexpected error, alive and answering,
no client left connected once all have closed, every message published
received, and flat RSS (see rss_verdict()).
"""
import argparse
import math
import multiprocessing
import os
import queue
import shutil
import statistics
import subprocess
import sys
import time

import redis

import soak_load as L

# ------------------------------------------------------------------ servers


class Ctx:
    """What a client process needs to know (inherited through fork)."""

    def __init__(self, server, port, args, stop, drained, errq, ready):
        self.server = server
        self.port = port
        self.timeout = args.timeout
        self.keys = args.keys
        self.churn = args.churn
        self.config_every = args.config_every
        self.flush_every = args.flush_every
        self.stop = stop
        self.drained = drained
        self.errq = errq
        self.ready = ready


class Server:
    """One server under load: its client processes, their shared stats and
    the samples taken so far."""

    def __init__(self, spec, reference):
        name, rest = spec.split("=", 1)
        port, pid = rest.split(",")
        self.name, self.port, self.pid = name, int(port), int(pid)
        self.reference = reference
        self.procs = []  # (kind, Process, stats)
        self.seen = None  # the subscriber's last message number per channel
        self.conn = None
        self.samples = []
        self.prev = None  # (time, summed counters, worker histogram) at the last sample
        self.failures = []  # why it failed, beyond the error count

    def spawn(self, mp, args, stop, drained, errq):
        ready = mp.Event()
        ctx = Ctx(self.name, self.port, args, stop, drained, errq, ready)
        self.seen = mp.Array("q", args.workers, lock=False)
        seed = args.seed * 1000

        def start(kind, target, *extra):
            stats = mp.Array("q", L.SLOTS, lock=False)
            p = mp.Process(target=target, args=(ctx, stats) + extra, daemon=True)
            p.start()
            self.procs.append((kind, p, stats))

        start("subscriber", L.run_subscriber, self.seen, seed + 999)
        ready.wait(30)
        for w in range(args.workers):
            start("worker", L.run_worker, w, seed + w)
        start("churn", L.run_churn, seed + 998)
        start("config", L.run_config, seed + 997)

    def stats(self, kinds=None):
        return [s for kind, _, s in self.procs if kinds is None or kind in kinds]

    def counters(self):
        total = [0] * L.NCOUNTERS
        for s in self.stats():
            for i in range(L.NCOUNTERS):
                total[i] += s[i]
        return total

    def worker_hist(self):
        hist = [0] * L.HIST_BUCKETS
        for s in self.stats(("worker",)):
            row = s[L.NCOUNTERS:L.SLOTS]
            for i, n in enumerate(row):
                if n:
                    hist[i] += n
        return hist

    def rss_mb(self):
        """VmRSS in MB, or None once the process is gone (or a zombie)."""
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("State:") and "Z" in line.split()[1]:
                        return None
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024.0
        except OSError:
            pass
        return None

    def info(self):
        """INFO as a dict (db0's keys/expires as db0_keys, db0_expires);
        None when the server does not answer."""
        try:
            if self.conn is None:
                self.conn = redis.Connection(host="127.0.0.1", port=self.port, socket_timeout=10)
            self.conn.send_command("INFO", "all")
            text = self.conn.read_response().decode("utf-8", "replace")
        except (redis.RedisError, OSError):
            if self.conn is not None:
                self.conn.disconnect()
            self.conn = None
            return None
        out = {}
        for line in text.splitlines():
            if ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                out[k] = v
        for part in out.get("db0", "").split(","):
            if "=" in part:
                k, v = part.split("=", 1)
                out["db0_" + k] = v
        return out

    def sample(self, elapsed):
        """One row: RSS, INFO fields and the clients' figures since the last."""
        now = time.monotonic()
        counters, hist = self.counters(), self.worker_hist()
        t0, c0, h0 = self.prev
        self.prev = (now, counters, hist)
        dt = max(now - t0, 1e-9)
        delta = [a - b for a, b in zip(hist, h0)]
        rss = self.rss_mb()
        info = self.info() or {}
        row = {
            "elapsed_s": round(elapsed, 1),
            "server": self.name,
            "rss_mb": None if rss is None else round(rss, 2),
            "used_memory_mb": round(int(info.get("used_memory", 0)) / 1048576, 2),
            "clients": int(info.get("connected_clients", 0)),
            "keys": int(info.get("db0_keys", 0)),
            "expires": int(info.get("db0_expires", 0)),
            "evicted_keys": int(info.get("evicted_keys", 0)),
            "expired_keys": int(info.get("expired_keys", 0)),
            "connections": int(info.get("total_connections_received", 0)),
            "ops_per_s": round((counters[L.OPS] - c0[L.OPS]) / dt),
            "p50_us": round(L.percentile(delta, 0.50), 1),
            "p99_us": round(L.percentile(delta, 0.99), 1),
            "p999_us": round(L.percentile(delta, 0.999), 1),
            "max_us": round(L.hist_max(delta), 1),
            "errors": counters[L.ERRORS] + len(self.failures),
            "oom": counters[L.OOM],
            "expected": counters[L.EXPECTED],
            "verified": counters[L.VERIFIED],
            "resets": counters[L.RESETS],
            "churn_per_s": round((counters[L.CHURN] - c0[L.CHURN]) / dt),
            "published": counters[L.PUBLISHED],
            "policy": info.get("maxmemory_policy", "?"),
            "hz": info.get("hz", "?"),
            "alive": rss is not None and bool(info),
        }
        self.samples.append(row)
        return row

    def stop_clients(self, errq, drained, on_error):
        """Waits for the client processes after stop was set (then sets
        drained for the subscriber); a process that does not finish within
        30 s is a failure (a reply that never came)."""
        for kind, p, _ in self.procs:
            if kind == "subscriber":
                continue
            self.join(p, kind, 30, errq, on_error)
        drained.set()
        for kind, p, _ in self.procs:
            if kind == "subscriber":
                self.join(p, kind, 30, errq, on_error)

    def join(self, p, kind, timeout, errq, on_error):
        end = time.monotonic() + timeout
        while p.is_alive() and time.monotonic() < end:
            drain(errq, on_error)
            p.join(0.1)
        if p.is_alive():
            p.terminate()
            self.failures.append("a %s process did not stop within %d s" % (kind, timeout))

    def final_checks(self):
        """After the load: alive and answering, no client left connected,
        every publish received. Adds to self.failures."""
        if self.rss_mb() is None:
            self.failures.append("the server process is gone")
            return
        try:
            c = redis.Connection(host="127.0.0.1", port=self.port, socket_timeout=10)
            c.send_command("PING")
            pong = c.read_response()
            c.disconnect()
            if pong != b"PONG":
                self.failures.append("PING -> %r" % (pong,))
        except (redis.RedisError, OSError) as e:
            self.failures.append("PING at the end: %s" % e)
            return
        clients = None
        for _ in range(50):
            info = self.info() or {}
            clients = int(info.get("connected_clients", -1))
            if 0 <= clients <= 1:  # the sampler's own connection
                break
            time.sleep(0.1)
        if not (0 <= clients <= 1):
            self.failures.append("%s clients still connected 5 s after every client closed"
                                 % clients)
        workers = self.stats(("worker",))
        for w, s in enumerate(workers):
            if self.seen[w] != s[L.PUBLISHED]:
                self.failures.append("channel %d: %d published, last received %d"
                                     % (w, s[L.PUBLISHED], self.seen[w]))


def drain(errq, on_error):
    while True:
        try:
            on_error(errq.get_nowait())
        except queue.Empty:
            return


# ------------------------------------------------------------------ verdict


def rss_verdict(rows, warmup, pct, mb):
    """Flat RSS: after the warm-up (the first `warmup` fraction of the
    samples), the median RSS of the last quarter of the remaining samples may
    exceed that of the first quarter by at most max(pct %, mb MB). Medians,
    so that a 1 MB value in flight at one sample does not decide. Returns
    (ok, text, figures)."""
    rss = [r["rss_mb"] for r in rows if r["rss_mb"] is not None]
    rest = rss[int(math.ceil(len(rss) * warmup)):]
    if len(rest) < 4:
        return False, "too few samples after the warm-up (%d)" % len(rest), {}
    q = len(rest) // 4
    first, last = statistics.median(rest[:q]), statistics.median(rest[-q:])
    limit = max(first * pct / 100.0, mb)
    growth = last - first
    xs = [r["elapsed_s"] for r in rows if r["rss_mb"] is not None][-len(rest):]
    slope = 0.0
    if len(rest) >= 2 and max(xs) > min(xs):
        mx, my = statistics.fmean(xs), statistics.fmean(rest)
        slope = (sum((x - mx) * (y - my) for x, y in zip(xs, rest))
                 / sum((x - mx) ** 2 for x in xs) * 3600)
    figures = {"rss_start": rss[0], "rss_first_q": first, "rss_last_q": last, "rss_max": max(rss),
               "rss_growth": growth, "rss_limit": limit, "rss_slope_mb_h": slope}
    ok = growth <= limit
    text = "RSS %.1f -> %.1f MB (median of first/last quarter after warm-up): %+.1f MB, limit %.1f" % (
        first, last, growth, limit)
    return ok, text, figures


# ------------------------------------------------------------------ output

COLUMNS = ["elapsed_s", "server", "rss_mb", "used_memory_mb", "clients", "keys", "expires",
           "evicted_keys", "expired_keys", "connections", "ops_per_s", "p50_us", "p99_us",
           "p999_us", "max_us", "errors", "oom", "expected", "verified", "resets",
           "churn_per_s", "published", "policy", "hz"]

ROW_HEAD = "%7s %-6s %8s %8s %7s %7s %9s %9s %8s %8s %8s %9s %6s %7s %7s  %s" % (
    "t s", "server", "RSS MB", "used MB", "clients", "keys", "evicted", "expired", "ops/s",
    "p50 ms", "p99 ms", "p99.9 ms", "errors", "oom", "churn/s", "policy")


def row_line(r):
    return "%7.0f %-6s %8s %8.1f %7d %7d %9d %9d %8d %8.3f %8.3f %9.3f %6d %7d %7d  %s" % (
        r["elapsed_s"], r["server"][:6], "-" if r["rss_mb"] is None else "%.1f" % r["rss_mb"],
        r["used_memory_mb"], r["clients"], r["keys"], r["evicted_keys"], r["expired_keys"],
        r["ops_per_s"], r["p50_us"] / 1000, r["p99_us"] / 1000, r["p999_us"] / 1000,
        r["errors"], r["oom"], r["churn_per_s"], r["policy"])


def csv_line(r):
    return ",".join("" if r[c] is None else str(r[c]) for c in COLUMNS)


def summarize(servers, args, elapsed):
    """The summary table and the verdict lines; returns (text, passed)."""
    lines = []
    results = {}
    for s in servers:
        counters, hist = s.counters(), s.worker_hist()
        ok_rss, rss_text, fig = rss_verdict(s.samples, args.warmup, args.rss_pct, args.rss_mb)
        last = s.samples[-1] if s.samples else {}
        res = {
            "ops_per_s": counters[L.OPS] / max(elapsed, 1e-9),
            "p50": L.percentile(hist, 0.5) / 1000, "p99": L.percentile(hist, 0.99) / 1000,
            "p999": L.percentile(hist, 0.999) / 1000, "max": L.hist_max(hist) / 1000,
            "worst_p99": max((r["p99_us"] for r in s.samples), default=0) / 1000,
            "errors": counters[L.ERRORS], "oom": counters[L.OOM],
            "expected": counters[L.EXPECTED], "verified": counters[L.VERIFIED],
            "resets": counters[L.RESETS], "churn": counters[L.CHURN],
            "published": counters[L.PUBLISHED], "received": counters[L.RECEIVED],
            "configs": counters[L.CONFIGS], "flushes": counters[L.FLUSHES],
            "evicted": last.get("evicted_keys", 0), "expired": last.get("expired_keys", 0),
            "ops": counters[L.OPS],
        }
        res.update(fig)
        why = list(s.failures)
        if res["errors"]:
            why.append("%d unexpected errors" % res["errors"])
        if not ok_rss:
            why.append("RSS not flat: " + rss_text)
        res["rss_text"], res["why"], res["passed"] = rss_text, why, not why
        results[s.name] = res

    names = [s.name for s in servers]
    lines.append(args.title)
    lines.append("summary: %.0f s, %d workers + subscriber + churn (%g/s) + config per server" % (
        elapsed, args.workers, args.churn))
    rows = [
        ("commands", "%d", "ops"), ("commands/s", "%.0f", "ops_per_s"),
        ("p50 ms (round trip)", "%.3f", "p50"), ("p99 ms", "%.3f", "p99"),
        ("p99.9 ms", "%.3f", "p999"), ("max ms", "%.1f", "max"),
        ("worst interval p99 ms", "%.3f", "worst_p99"),
        ("unexpected errors", "%d", "errors"), ("oom (noeviction)", "%d", "oom"),
        ("provoked errors", "%d", "expected"), ("values verified", "%d", "verified"),
        ("owned keys lost (evicted/flushed)", "%d", "resets"),
        ("churn connections", "%d", "churn"), ("published", "%d", "published"),
        ("received", "%d", "received"), ("CONFIG SETs", "%d", "configs"),
        ("FLUSHDBs", "%d", "flushes"), ("evicted_keys", "%d", "evicted"),
        ("expired_keys", "%d", "expired"), ("RSS first sample MB", "%.1f", "rss_start"),
        ("RSS after warm-up MB", "%.1f", "rss_first_q"), ("RSS last quarter MB", "%.1f", "rss_last_q"),
        ("RSS max MB", "%.1f", "rss_max"), ("RSS growth MB", "%+.1f", "rss_growth"),
        ("RSS limit MB", "%.1f", "rss_limit"), ("RSS slope MB/h", "%+.1f", "rss_slope_mb_h"),
    ]
    head = "| %-34s |" % "" + "".join(" %14s |" % n for n in names)
    refs = [s for s in servers if s.reference]
    tested = [s for s in servers if not s.reference]
    if refs and tested:
        ratio_names = ["%s/%s" % (t.name, r.name) for t in tested for r in refs]
        head += "".join(" %14s |" % n for n in ratio_names)
    lines.append(head)
    lines.append("|" + "-" * 36 + "|" + "----------------|" * (head.count("|") - 2))
    for label, fmt, key in rows:
        cells = []
        for n in names:
            v = results[n].get(key)
            cells.append("-" if v is None else fmt % v)
        line = "| %-34s |" % label + "".join(" %14s |" % c for c in cells)
        if refs and tested:
            for t in tested:
                for r in refs:
                    a, b = results[t.name].get(key), results[r.name].get(key)
                    ok = key in ("ops_per_s", "p50", "p99", "p999", "rss_last_q", "rss_max")
                    line += " %14s |" % ("%.2fx" % (a / b) if ok and a and b else "")
        lines.append(line)
    passed = True
    for s in servers:
        res = results[s.name]
        role = "reference" if s.reference else "under test"
        verdict = "PASS" if res["passed"] else "FAIL"
        lines.append("%s (%s): %s; %s" % (s.name, role, verdict, res["rss_text"]))
        for w in res["why"]:
            lines.append("  why: %s" % w)
        if not s.reference and not res["passed"]:
            passed = False
    return "\n".join(lines), passed, results


def plot(servers, csv_path, title):
    """RSS, p99 and ops/s over time into <csv stem>.png (needs gnuplot);
    servers: objects with .name and .samples (rows as in the CSV)."""
    if not shutil.which("gnuplot"):
        print("(gnuplot not found: no plot)")
        return
    png = os.path.splitext(csv_path)[0] + ".png"
    blocks = []
    for s in servers:
        data = "\n".join("%g %s %g %g %g" % (r["elapsed_s"] / 60,
                                             "NaN" if r["rss_mb"] is None else r["rss_mb"],
                                             r["used_memory_mb"], r["p99_us"] / 1000,
                                             r["ops_per_s"]) for r in s.samples)
        blocks.append("$%s << EOD\n%s\nEOD\n" % (s.name, data))

    colors = ["#8b1a89", "#00796b", "#e65100", "#1565c0"]

    def curves(col, extra="", width=2):
        return ", ".join("$%s using 1:%d with lines lw %d lc rgb '%s' title '%s%s'"
                         % (s.name, col, width, colors[i % len(colors)], s.name, extra)
                         for i, s in enumerate(servers))

    script = "".join(blocks) + f"""set terminal png size 1000,900 noenhanced
set output '{png}'
set multiplot layout 3,1 title '{title}'
set grid
set xlabel 'minutes'
set ylabel 'MB'
set yrange [0:*]
set key bottom right
plot {curves(2, ' RSS')}, {curves(3, ' used_memory', 1)}
set key top left
set ylabel 'p99 ms (round trip, per interval)'
set logscale y
set yrange [*:*]
plot {curves(4)}
unset logscale y
set yrange [0:*]
set ylabel 'commands/s'
plot {curves(5)}
unset multiplot
"""
    subprocess.run(["gnuplot"], input=script.encode(), check=False)
    print("plot: %s" % png)


# ------------------------------------------------------------------ main


def replot(csv_path, title):
    """The plot again from a CSV this script wrote (soak.py --plot FILE)."""
    servers = {}
    with open(csv_path) as f:
        head = f.readline().strip().split(",")
        for line in f:
            row = dict(zip(head, line.strip().split(",")))
            for k in ("elapsed_s", "rss_mb", "used_memory_mb", "p99_us", "ops_per_s"):
                row[k] = float(row[k]) if row[k] else None
            servers.setdefault(row["server"], []).append(row)
    plot([argparse.Namespace(name=n, samples=rows) for n, rows in servers.items()], csv_path, title)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", action="append", default=[], help="NAME=PORT,PID under test")
    p.add_argument("--reference", action="append", default=[], help="NAME=PORT,PID to compare with")
    p.add_argument("--duration", type=float, default=3600)
    p.add_argument("--interval", type=float, default=5)
    p.add_argument("--workers", type=int, default=4, help="worker processes per server")
    p.add_argument("--churn", type=float, default=200, help="short connections per second")
    p.add_argument("--keys", type=int, default=300000, help="shared key space")
    p.add_argument("--config-every", type=float, default=15, help="seconds between CONFIG SETs")
    p.add_argument("--flush-every", type=float, default=120, help="least seconds between FLUSHDBs")
    p.add_argument("--timeout", type=float, default=30, help="socket timeout: a reply this late is an error")
    p.add_argument("--warmup", type=float, default=0.2, help="fraction of samples before RSS is judged")
    p.add_argument("--rss-pct", type=float, default=5.0)
    p.add_argument("--rss-mb", type=float, default=8.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--csv", default=None)
    p.add_argument("--title", default="cudis soak")
    p.add_argument("--plot", metavar="CSV", help="only redraw the PNG of a CSV this wrote")
    args = p.parse_args(argv)
    if not args.server and not args.plot:
        p.error("need at least one --server")
    return args


def main(argv):
    args = parse_args(argv)
    if args.plot:
        replot(args.plot, args.title)
        return 0
    mp = multiprocessing.get_context("fork")
    stop, drained, errq = mp.Event(), mp.Event(), mp.Queue()
    servers = [Server(x, False) for x in args.server] + [Server(x, True) for x in args.reference]
    csv = open(args.csv, "w") if args.csv else None
    if csv:
        csv.write(",".join(COLUMNS) + "\n")
    for s in servers:
        s.spawn(mp, args, stop, drained, errq)

    def on_error(line):
        print("  ! " + line, flush=True)

    print(ROW_HEAD, flush=True)
    start = time.monotonic()
    for s in servers:
        s.prev = (start, [0] * L.NCOUNTERS, [0] * L.HIST_BUCKETS)
    k = 0
    dead = False
    while not dead:
        k += 1
        wake = start + k * args.interval
        while time.monotonic() < wake:
            drain(errq, on_error)
            time.sleep(min(0.2, max(wake - time.monotonic(), 0)))
        elapsed = time.monotonic() - start
        for s in servers:
            r = s.sample(elapsed)
            print(row_line(r), flush=True)
            if csv:
                csv.write(csv_line(r) + "\n")
                csv.flush()
            if not r["alive"]:
                s.failures.append("stopped answering at %.0f s" % elapsed)
                dead = True
        if elapsed >= args.duration - 1e-6:
            break
    elapsed = time.monotonic() - start
    stop.set()
    for s in servers:
        s.stop_clients(errq, drained, on_error)
    drain(errq, on_error)
    for s in servers:
        s.final_checks()
    text, passed, _ = summarize(servers, args, elapsed)
    print(text)
    if csv:
        csv.close()
        with open(os.path.splitext(args.csv)[0] + ".txt", "w") as f:
            f.write(text + "\n")
        plot(servers, args.csv, args.title)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
