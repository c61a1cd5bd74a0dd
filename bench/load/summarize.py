#!/usr/bin/env python3
"""bench/load/summarize.py - turns cudis-bench CSV rows (compare.sh,
batch-sweep.sh) into markdown tables and gnuplot PNGs.

usage: summarize.py compare.csv [--machine TEXT] [--mem MB] [--plots DIR]
       summarize.py sweep.csv --sweep [--plots DIR]
"""
import argparse
import csv
import glob
import os
import shutil
import subprocess
import sys
from collections import OrderedDict

ORDER = ["cudis", "redis", "memcached"]


def fnum(x, nd=0):
    return f"{float(x):,.{nd}f}"


def servers_of(rows):
    seen = []
    for r in rows:
        if r["server"] not in seen:
            seen.append(r["server"])
    return sorted(seen, key=lambda s: ORDER.index(s) if s in ORDER else 99)


def compare_tables(rows, mem):
    out = []
    srv = servers_of(rows)
    points = OrderedDict()
    for r in rows:
        points.setdefault((r["workload"], int(r["conns"]), int(r["pipeline"])), {})[r["server"]] = r
    out.append("### Throughput (requests/s; MGET of 100 counts once) and ratios\n")
    hdr = "| workload | conns | pipeline | " + " | ".join(f"{s} req/s" for s in srv)
    ratios = []
    if "cudis" in srv:
        ratios = [s for s in srv if s != "cudis"]
        hdr += " | " + " | ".join(f"cudis/{s}" for s in ratios)
    out.append(hdr + " |")
    out.append("|" + "---|" * (3 + len(srv) + len(ratios)))
    for (wl, c, d), by in points.items():
        cells = [wl, str(c), str(d)]
        for s in srv:
            cells.append(fnum(by[s]["rps"]) if s in by else "-")
        for s in ratios:
            if "cudis" in by and s in by and float(by[s]["rps"]) > 0:
                cells.append(f"{float(by['cudis']['rps']) / float(by[s]['rps']):.2f}")
            else:
                cells.append("-")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append("### Latency (microseconds) and hit ratio per point\n")
    out.append("| workload | conns | pipeline | server | req/s | keys/s | hit % | p50 | p90 | p99 | p99.9 | max | errors | items |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (wl, c, d), by in points.items():
        for s in srv:
            if s not in by:
                continue
            r = by[s]
            out.append("| " + " | ".join([
                wl, str(c), str(d), s, fnum(r["rps"]), fnum(r["keys_per_s"]),
                f"{100 * float(r['hit_ratio']):.2f}", fnum(r["p50_us"], 1), fnum(r["p90_us"], 1),
                fnum(r["p99_us"], 1), fnum(r["p999_us"], 1), fnum(r["max_us"], 1), r["errors"],
                r["items"]]) + " |")
    out.append("")
    pr = [r for r in rows if r["workload"] == "pressure"]
    if pr:
        keys = int(pr[0]["keys"])
        out.append(f"### Memory pressure: hit ratio at {mem} MB per server, key range {keys:,} "
                   f"(4x the limit in raw key+value bytes), Zipf {pr[0]['zipf']}\n")
        out.append("| server | hit % | items held | items / key range | req/s | p99 us |")
        out.append("|---|---|---|---|---|---|")
        for r in sorted(pr, key=lambda r: ORDER.index(r["server"]) if r["server"] in ORDER else 99):
            it = int(r["items"])
            out.append(f"| {r['server']} | {100 * float(r['hit_ratio']):.2f} | {it:,} | "
                       f"{it / keys:.3f} | {fnum(r['rps'])} | {fnum(r['p99_us'], 1)} |")
        out.append("")
    return "\n".join(out)


def gnuplot(script, cwd):
    if not shutil.which("gnuplot"):
        print("(gnuplot not found: no plots)", file=sys.stderr)
        return
    subprocess.run(["gnuplot"], input=script.encode(), cwd=cwd, check=False)


def compare_plots(rows, d):
    srv = servers_of(rows)
    for name, sel, xcol, xlabel in [
        ("throughput_vs_conns", lambda r: r["workload"] == "zipf90" and r["pipeline"] == "1",
         "conns", "connections (pipeline 1)"),
        ("throughput_vs_pipeline",
         lambda r: r["workload"] == "zipf90" and r["conns"] == "16", "pipeline",
         "pipeline depth (16 connections)"),
    ]:
        plots = []
        for s in srv:
            pts = sorted((int(r[xcol]), float(r["rps"])) for r in rows if r["server"] == s and sel(r))
            if not pts:
                continue
            fn = f"{name}_{s}.dat"
            with open(os.path.join(d, fn), "w") as f:
                for x, y in pts:
                    f.write(f"{x} {y}\n")
            plots.append(f"'{fn}' using 1:2 with linespoints lw 2 title '{s}'")
        if plots:
            gnuplot(f"""set terminal png size 900,560
set output '{name}.png'
set title 'zipf90: 90/10 get/set, Zipf 0.99, 32 B values'
set xlabel '{xlabel}'
set ylabel 'requests/s'
set logscale x 2
set yrange [0:*]
set grid
set key top left
plot {', '.join(plots)}
""", d)
            for s in srv:
                p = os.path.join(d, f"{name}_{s}.dat")
                if os.path.exists(p):
                    os.remove(p)
    # latency spectra: lat_<tag>_<server>.csv
    tags = sorted({os.path.basename(p)[4:].rsplit("_", 1)[0] for p in glob.glob(os.path.join(d, "lat_*.csv"))})
    for tag in tags:
        plots = []
        for s in srv:
            fn = f"lat_{tag}_{s}.csv"
            if os.path.exists(os.path.join(d, fn)):
                plots.append(f"'{fn}' using (1.0/(1.0-($2<100?$2/100.0:0.999999))):1 with lines lw 2 title '{s}'")
        if plots:
            gnuplot(f"""set terminal png size 900,560
set output 'latency_{tag}.png'
set datafile separator ','
set title 'latency distribution: {tag}'
set xlabel 'percentile'
set ylabel 'latency (us)'
set logscale x 10
set logscale y 10
set xtics ('50' 2, '90' 10, '99' 100, '99.9' 1000, '99.99' 10000, '99.999' 100000)
set xrange [1:100000]
set grid
set key top left
plot {', '.join(plots)}
""", d)
    pr = [r for r in rows if r["workload"] == "pressure"]
    if pr:
        with open(os.path.join(d, "pressure.dat"), "w") as f:
            for r in pr:
                f.write(f"{r['server']} {100 * float(r['hit_ratio']):.3f}\n")
        gnuplot("""set terminal png size 700,480
set output 'hit_ratio_pressure.png'
set title 'memory pressure: hit ratio (key range 4x the memory limit)'
set style data histograms
set style fill solid 0.7
set ylabel 'hit ratio (%)'
set yrange [0:100]
set grid ytics
plot 'pressure.dat' using 2:xtic(1) notitle, '' using 0:2:(sprintf('%.2f',$2)) with labels offset 0,1 notitle
""", d)
        os.remove(os.path.join(d, "pressure.dat"))


def sweep_table(rows):
    out = ["| batch-max-ops | batch-max-wait-us | conns | pipeline | req/s | p50 us | p99 us | p99.9 us |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['batch_max_ops']} | {r['batch_max_wait_us']} | {r['conns']} | {r['pipeline']} | "
                   f"{fnum(r['rps'])} | {fnum(r['p50_us'], 1)} | {fnum(r['p99_us'], 1)} | {fnum(r['p999_us'], 1)} |")
    return "\n".join(out)


def sweep_choice(rows):
    """Pivot by load and pick defaults: the highest heavy-load throughput
    among configurations whose light-load p50 is within 10% (+20 us of
    slack for noise) of the best light-load p50 (p50, not p99: the median
    shows the wait a batch adds to a lone request, while p99 on a shared
    machine mostly shows other processes)."""
    loads = sorted({(int(r["conns"]), int(r["pipeline"])) for r in rows},
                   key=lambda cp: cp[0] * cp[1])
    if len(loads) < 2:
        return ""
    light, heavy = loads[0], loads[-1]
    cfg = {}
    for r in rows:
        k = (int(r["batch_max_ops"]), int(r["batch_max_wait_us"]))
        lp = (int(r["conns"]), int(r["pipeline"]))
        cfg.setdefault(k, {})[lp] = r
    ok = {k: v for k, v in cfg.items() if light in v and heavy in v}
    if not ok:
        return ""
    best_p50 = min(float(v[light]["p50_us"]) for v in ok.values())
    limit = best_p50 * 1.10 + 20.0
    cands = [k for k, v in ok.items() if float(v[light]["p50_us"]) <= limit]
    pick = max(cands, key=lambda k: (float(ok[k][heavy]["rps"]), -k[1]))
    top = max(ok, key=lambda k: float(ok[k][heavy]["rps"]))
    out = [f"\nLight load = {light[0]} conns x pipeline {light[1]}; heavy load = {heavy[0]} conns x pipeline {heavy[1]}.\n",
           "| batch-max-ops | batch-max-wait-us | heavy req/s | heavy p50 us | heavy p99 us | light req/s | light p50 us | light p99 us |",
           "|---|---|---|---|---|---|---|---|"]
    for k in sorted(ok):
        v = ok[k]
        mark = " **chosen**" if k == pick else ""
        out.append(f"| {k[0]}{mark} | {k[1]} | {fnum(v[heavy]['rps'])} | {fnum(v[heavy]['p50_us'], 1)} | "
                   f"{fnum(v[heavy]['p99_us'], 1)} | {fnum(v[light]['rps'])} | {fnum(v[light]['p50_us'], 1)} | "
                   f"{fnum(v[light]['p99_us'], 1)} |")
    out.append(f"\nRule: the highest heavy-load throughput among settings whose light-load p50 is within "
               f"10% + 20 us of the best light-load p50 ({fnum(best_p50, 1)} us, limit {fnum(limit, 1)} us).")
    out.append(f"Chosen: batch-max-ops {pick[0]}, batch-max-wait-us {pick[1]} "
               f"({fnum(ok[pick][heavy]['rps'])} req/s heavy, light p50 {fnum(ok[pick][light]['p50_us'], 1)} us); "
               f"highest heavy throughput overall: ops {top[0]}, wait {top[1]} ({fnum(ok[top][heavy]['rps'])} req/s, "
               f"light p50 {fnum(ok[top][light]['p50_us'], 1)} us).")
    return "\n".join(out)


def sweep_plots(rows, d):
    loads = sorted({(int(r["conns"]), int(r["pipeline"])) for r in rows})
    for c, p in loads:
        sel = [r for r in rows if int(r["conns"]) == c and int(r["pipeline"]) == p]
        waits = sorted({int(r["batch_max_wait_us"]) for r in sel})
        plots = []
        for i, w in enumerate(waits):
            pts = sorted((int(r["batch_max_ops"]), float(r["rps"]), float(r["p99_us"]))
                         for r in sel if int(r["batch_max_wait_us"]) == w)
            fn = f"sweep_{c}_{p}_{w}.dat"
            with open(os.path.join(d, fn), "w") as f:
                for x, y, z in pts:
                    f.write(f"{x} {y} {z}\n")
            plots.append(f"'{fn}' using 1:2 axes x1y1 with linespoints lw 2 lc {i + 1} title 'req/s, wait {w} us'")
            plots.append(f"'{fn}' using 1:3 axes x1y2 with linespoints dt 2 lc {i + 1} title 'p99, wait {w} us'")
        gnuplot(f"""set terminal png size 1000,600
set output 'batch_sweep_c{c}_p{p}.png'
set title 'cudis batch-max-ops x batch-max-wait-us ({c} connections, pipeline {p})'
set xlabel 'batch-max-ops'
set ylabel 'requests/s'
set y2label 'p99 latency (us)'
set logscale x 2
set yrange [0:*]
set y2range [0:*]
set ytics nomirror
set y2tics
set grid
set key outside right
plot {', '.join(plots)}
""", d)
        for w in waits:
            os.remove(os.path.join(d, f"sweep_{c}_{p}_{w}.dat"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--machine", default="")
    ap.add_argument("--mem", default="?")
    ap.add_argument("--plots")
    ap.add_argument("--sweep", action="store_true")
    a = ap.parse_args()
    with open(a.csv) as f:
        rows = list(csv.DictReader(f))
    if a.machine:
        print(f"Machine: {a.machine}\n")
    if a.sweep:
        print(sweep_table(rows))
        print(sweep_choice(rows))
        if a.plots:
            sweep_plots(rows, a.plots)
        return
    print(compare_tables(rows, a.mem))
    if a.plots:
        compare_plots(rows, a.plots)


if __name__ == "__main__":
    main()
