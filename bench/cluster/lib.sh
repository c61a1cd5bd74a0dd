# bench/cluster/lib.sh - what the cluster benchmarks share (throughput.sh,
# reshard.sh), on top of bench/server/lib.sh: a port whose bus port (+10000)
# is free too, waiting until every node says cluster_state:ok. Sourced.
source "$(dirname "${BASH_SOURCE[0]}")/../server/lib.sh"
OUT=${OUT_CLUSTER:-$ROOT/bench/results/cluster}
mkdir -p "$OUT"

port_pair() { # a port P with P and P+10000 free
  /usr/bin/python3 - <<'PY'
import random, socket
while True:
    p = random.randint(20000, 40000)
    try:
        for q in (p, p + 10000):
            s = socket.socket(); s.bind(("127.0.0.1", q)); s.close()
        print(p); break
    except OSError:
        pass
PY
}

wait_ok() { # wait_ok PORT...: every node says cluster_state:ok and knows them all
  for _ in $(seq 600); do
    local ok=1 p info
    for p in "$@"; do
      info=$(redis-cli -p "$p" cluster info)
      grep -q "cluster_state:ok" <<<"$info" || ok=0
      grep -q "cluster_known_nodes:$#" <<<"$info" || ok=0
    done
    [[ $ok == 1 ]] && return 0
    sleep 0.1
  done
  echo "cluster did not form" >&2
  exit 1
}
