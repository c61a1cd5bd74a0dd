#!/usr/bin/env bash
# seeds.sh - how much the CCHT's distance to exact LRU depends on the hash
# seed: replays TRACES with cudis-sim under seeds 1..N and prints, per
# (trace, capacity, engine), the mean, min and max of (hit - LRU hit) in
# points. Usage: bench/sim/seeds.sh [N] [TRACE...]
# Env: SIM (the cudis-sim binary, default build/bench/sim/cudis-sim),
#      ENGINES (default lru,cpu8,cpu16,model8,model8e,model16), FRACTIONS.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-10}
shift || true
TRACES=("$@")
[ ${#TRACES[@]} -eq 0 ] && TRACES=(cloudphysics lirs-sprite)
SIM=${SIM:-build/bench/sim/cudis-sim}
ENGINES=${ENGINES:-lru,cpu8,cpu16,model8,model8e,model16}
FRACTIONS=${FRACTIONS:-0.05,0.1,0.25}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in $(seq 1 "$N"); do
  "$SIM" -e "$ENGINES" -f "$FRACTIONS" -T 0 --no-plot -q --seed "$s" -o "$tmp" -n "s$s" \
    "${TRACES[@]}" >/dev/null
done
python3 - "$tmp" <<'PY'
import csv, glob, collections, statistics, sys
d = collections.defaultdict(list)
for f in glob.glob(sys.argv[1] + "/s*.csv"):
    for r in csv.DictReader(open(f)):
        if r["label"] != "lru" and r["delta_lru_pt"]:
            d[(r["trace"], int(r["capacity"]), r["label"])].append(float(r["delta_lru_pt"]))
print("%-14s %8s %-8s %6s %8s %8s %8s" % ("trace", "capacity", "engine", "seeds", "mean", "min", "max"))
for k in sorted(d):
    v = d[k]
    print("%-14s %8d %-8s %6d %+8.3f %+8.3f %+8.3f" % (k + (len(v), statistics.mean(v), min(v), max(v))))
PY
