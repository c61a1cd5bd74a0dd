#!/usr/bin/env bash
# bench/server/hashes.sh - hashes, cudis-server (cpu engine) beside Debian's
# redis-server 7 in one run (issue 13's targets), both pinned to one core
# (SERVER_CPU), the load to another (LOAD_CPU), equal maxmemory:
#   1. small hashes: HASHES hashes of 10 fields (32-byte values), then
#      redis-benchmark -c 50 -n $N -r $HASHES -P 16 and -P 1 of
#      "HSET h:__rand_int__ f5 <32 bytes>" and "HGET h:__rand_int__ f5",
#      the servers alternating REPEAT times (the median is kept); the same
#      for small sets and lists spread over HASHES keys: "SADD s:__rand_int__
#      m__rand_int__", "SISMEMBER ...", "LPUSH l:__rand_int__ <32 bytes>",
#      "RPOP l:__rand_int__" (each placeholder is its own random number);
#      and on ZSETS sorted sets of 1,000 members (scores 0..999): "ZADD
#      z:__rand_int__ __rand_int__ m__rand_int__" (a new score for one of
#      the first ZSETS members) and "ZRANGEBYSCORE z:__rand_int__
#      __rand_int__ +inf LIMIT 0 10" (placeholders over 0..ZSETS-1);
#   2. the HPS pattern: one hash of FIELDS fields (16-byte names
#      "key:<12 digits>", 256-byte values, loaded by HSETs of 1,000 fields),
#      then cudis-bench (bench/load, C, on LOAD_CPU) sends HMGET of 1,000
#      uniformly random fields over CONNS connections with DEPTH commands in
#      flight each, for SECS seconds: rows/s and rows per server CPU-second;
#      beside it, after a FLUSHALL, MGET of 1,000 of FIELDS string keys of the
#      same names and size (loaded by MSETs) the same way;
#   3. memory: the bytes FIELDS fields (8-byte names) take as one hash and
#      as FIELDS string keys, each load alone after a FLUSHALL: redis-server's
#      used_memory growth; cudis's live items' arena bytes plus an index slot
#      per item at 90% fill (data_bytes below says why).
# Prints tables, writes CSV, and says which targets were met.
#
# Usage: bench/server/hashes.sh      (N=1000000 HASHES=10000 FIELDS=100000)
# Env: N, HASHES, ZSETS (100), FIELDS, SECS (3), CONNS (8), DEPTH (4), PIPES ("16 1"),
#      TESTS (the eight above), REPEAT (3), MAXMEMORY
#      (2gb), CUDIS, REDIS, CUDIS_ARGS, SERVER_CPU, LOAD_CPU, OUT.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
N=${N:-1000000}
HASHES=${HASHES:-10000}
ZSETS=${ZSETS:-100}
FIELDS=${FIELDS:-100000}
SECS=${SECS:-3}
DEPTH=${DEPTH:-4}
CONNS=${CONNS:-8}
LOADGEN=${LOADGEN:-$BUILD/bench/load/cudis-bench}
PIPES=${PIPES:-"16 1"}
TESTS=${TESTS-"hset hget sadd sismember lpush rpop zadd zrangebyscore"} # "": none
REPEAT=${REPEAT:-3}
MAXMEMORY=${MAXMEMORY:-2gb}
CUDIS_ARGS=${CUDIS_ARGS:-}
need_bins "$CUDIS" "$REDIS" "$(command -v redis-benchmark || true)" "$LOADGEN"
CSV=$OUT/hashes-$STAMP.csv
VAL32=$(printf 'v%.0s' $(seq 32))

# helper.py port what...: the loads and the HMGET/MGET loops (raw RESP)
cat >"$TMP/helper.py" <<'PY'
import socket, sys, time

def conn(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s

def cmd(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)

class Reader:
    def __init__(self, s):
        self.s, self.buf, self.pos = s, b"", 0
    def _need(self, n):
        while len(self.buf) - self.pos < n:
            d = self.s.recv(1 << 20)
            if not d:
                raise EOFError
            self.buf = self.buf[self.pos:] + d
            self.pos = 0
    def line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                l = self.buf[self.pos:i]
                self.pos = i + 2
                return l
            self._need(len(self.buf) - self.pos + 1)
    def reply(self):
        """Skips one reply; returns (bulks, nils) it held, or raises on an error."""
        l = self.line()
        t = l[:1]
        if t == b"-":
            raise RuntimeError(l.decode())
        if t == b"*":
            n = int(l[1:])
            got = nil = 0
            for _ in range(max(n, 0)):
                g, z = self.reply()
                got += g
                nil += z
            return got, nil
        if t == b"$":
            n = int(l[1:])
            if n < 0:
                return 0, 1
            self._need(n + 2)
            self.pos += n + 2
            return 1, 0
        return 0, 0

def send_all(port, cmds):
    s = conn(port)
    r = Reader(s)
    for i in range(0, len(cmds), 64):
        s.sendall(b"".join(cmds[i:i + 64]))
        for _ in cmds[i:i + 64]:
            r.reply()
    s.close()

def info(port):
    s = conn(port)
    s.sendall(cmd("INFO"))
    r = Reader(s)
    l = r.line()
    n = int(l[1:])
    r._need(n + 2)
    txt = r.buf[r.pos:r.pos + n].decode()
    s.close()
    return dict(line.split(":", 1) for line in txt.split("\r\n") if ":" in line)

def used_memory(port):
    return int(info(port)["used_memory"])

def data_bytes(port, before):
    """The bytes the data loaded takes. redis-server: used_memory's growth.
    cudis: its index follows what is stored (engine-index-resize) and is
    sized for the whole budget's worth of items of today's size, so
    used_memory's growth can even be negative (the index shrinking under
    big items) or count slots no item uses; instead, once no resize runs:
    the live items' arena bytes (used_memory less the index and its
    metadata) plus the index slots the items need at the 90% fill the
    resize aims for (16 bytes a slot: slot word and stamp)."""
    d = info(port)
    if "ccht_buckets" not in d:
        return int(d["used_memory"]) - before
    seen, calm = None, 0
    for _ in range(300):  # until no resize ran for a second (or 30 s)
        now = (d.get("ccht_index_resizing"), d.get("ccht_index_resizes"))
        calm = calm + 1 if now == seen and now[0] == "0" else 0
        if calm >= 10:
            break
        seen = now
        time.sleep(0.1)
        d = info(port)
    arena = int(d["used_memory"]) - int(d["engine_index_bytes"])
    return arena + int(int(d["engine_items"]) * 16 / 0.9)

what, port = sys.argv[1], int(sys.argv[2])
if what == "small":  # HASHES hashes of 10 fields
    hashes, val = int(sys.argv[3]), sys.argv[4]
    send_all(port, [cmd("HSET", "h:%012d" % i, *[x for j in range(10) for x in ("f%d" % j, val)])
                    for i in range(hashes)])
elif what == "zsets":  # ZSETS sorted sets of 1,000 members, scores 0..999
    zsets = int(sys.argv[3])
    send_all(port, [cmd("ZADD", "z:%012d" % i, *[x for j in range(1000)
                                                for x in (str(j), "m%012d" % j)])
                    for i in range(zsets)])
elif what == "flush":  # a clean slate for the memory figures
    send_all(port, [cmd("FLUSHALL")])
elif what in ("hps", "keys"):  # the read phase's data: hash "hps" / string keys; load seconds
    fields = int(sys.argv[3])
    val = b"x" * 256
    head = ["HSET", "hps"] if what == "hps" else ["MSET"]
    cmds = [cmd(*head, *[x for i in range(b, min(b + 1000, fields))
                         for x in (b"key:%012d" % i, val)]) for b in range(0, fields, 1000)]
    t = time.time()
    send_all(port, cmds)
    print("%.2f" % (time.time() - t))
elif what in ("hash", "strings"):  # FIELDS fields as one hash / as string keys; bytes used
    fields = int(sys.argv[3])
    val = b"x" * 256
    before = used_memory(port)
    if what == "hash":
        cmds = [cmd("HSET", "hps", *[x for i in range(b, min(b + 1000, fields))
                                     for x in (b"f%07d" % i, val)]) for b in range(0, fields, 1000)]
    else:
        cmds = [cmd("MSET", *[x for i in range(b, min(b + 1000, fields))
                              for x in (b"f%07d" % i, val)]) for b in range(0, fields, 1000)]
    t = time.time()
    send_all(port, cmds)
    secs = time.time() - t
    print(data_bytes(port, before), "%.2f" % secs)
PY

# bench name pipe "command..." -> "rps p50 p99 cpu_s"
bench() {
  local name=$1 pipe=$2 t0 t1 line
  shift 2
  t0=$(cpu_ticks "${PID[$name]}")
  line=$(taskset -c "$LOAD_CPU" redis-benchmark -h 127.0.0.1 -p "${PORT[$name]}" -c 50 -n "$N" \
           -r "${BRANGE:-$HASHES}" -P "$pipe" --csv "$@" 2>"$TMP/err" | tail -1)
  t1=$(cpu_ticks "${PID[$name]}")
  if [[ -z $line ]] || grep -q "ERR\|rror" "$TMP/err"; then
    echo "hashes.sh: redis-benchmark against $name failed:" >&2
    cat "$TMP/err" >&2
    exit 1
  fi
  echo "$line" | tr -d '"' | awk -F, -v cpu="$(( t1 - t0 ))" -v hz="$CLK_TCK" \
    '{ printf "%s %s %s %.3f\n", $2, $5, $7, cpu / hz }'
}

py() { taskset -c "$LOAD_CPU" /usr/bin/python3 "$TMP/helper.py" "$@"; }

machine_line
echo "servers on cpu $SERVER_CPU, load on cpu $LOAD_CPU, maxmemory $MAXMEMORY; N=$N HASHES=$HASHES FIELDS=$FIELDS"
# shellcheck disable=SC2086
start_server cudis --maxmemory "$MAXMEMORY" $CUDIS_ARGS
start_server redis --maxmemory "$MAXMEMORY" --maxmemory-policy allkeys-lru
echo "cudis: $CUDIS --engine $CUDIS_ENGINE $CUDIS_ARGS; redis: $($REDIS --version | cut -d' ' -f1-3)"
echo "kind,pipeline,test,server,value,p50_ms,p99_ms,server_cpu_s" >"$CSV"
declare -A R
fail=0

for name in cudis redis; do
  py small "${PORT[$name]}" "$HASHES" "$VAL32"
  py zsets "${PORT[$name]}" "$ZSETS"
done
printf '\n| -P | test | cudis rps | redis rps | cudis/redis | rps per CPU-s cudis/redis | target | met |\n'
printf '|---:|------|---:|---:|---:|---:|---|---|\n'
for pipe in $PIPES; do
  for test in $TESTS; do
    case $test in
      hset) args=(hset h:__rand_int__ f5 "$VAL32") ;;
      hget) args=(hget h:__rand_int__ f5) ;;
      sadd) args=(sadd s:__rand_int__ m__rand_int__) ;;
      sismember) args=(sismember s:__rand_int__ m__rand_int__) ;;
      lpush) args=(lpush l:__rand_int__ "$VAL32") ;;
      rpop) args=(rpop l:__rand_int__) ;;
      zadd) args=(zadd z:__rand_int__ __rand_int__ m__rand_int__) ;;
      zrangebyscore) args=(zrangebyscore z:__rand_int__ __rand_int__ +inf limit 0 10) ;;
      *) echo "hashes.sh: unknown test $test" >&2; exit 1 ;;
    esac
    : >"$TMP/rows.cudis"
    : >"$TMP/rows.redis"
    BRANGE=$HASHES
    [[ $test == z* ]] && BRANGE=$ZSETS
    for _ in $(seq "$REPEAT"); do # alternate the servers: noise hits both
      for name in cudis redis; do
        bench "$name" "$pipe" "${args[@]}" >>"$TMP/rows.$name"
      done
    done
    for name in cudis redis; do
      rps=$(awk '{ print $1 }' "$TMP/rows.$name" | median)
      p50=$(awk '{ print $2 }' "$TMP/rows.$name" | median)
      p99=$(awk '{ print $3 }' "$TMP/rows.$name" | median)
      cpu=$(awk '{ print $4 }' "$TMP/rows.$name" | median)
      R[$name]="$rps $cpu"
      echo "small,$pipe,$test,$name,$rps,$p50,$p99,$cpu" >>"$CSV"
    done
    read -r rc cc <<<"${R[cudis]}"
    read -r rr cr <<<"${R[redis]}"
    line=$(awk -v rc="$rc" -v rr="$rr" -v cc="$cc" -v cr="$cr" -v pipe="$pipe" 'BEGIN {
      t = rc / rr; e = (cc > 0 && cr > 0) ? (rc / cc) / (rr / cr) : 0
      want = (pipe == 1) ? 0.9 : 1.0
      printf "%.2f %.2f >=%.1fx %s", t, e, want, (t >= want) ? "yes" : "NO" }')
    read -r t e target met <<<"$line"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$pipe" "${test^^}" "$rc" "$rr" "$t" "$e" "$target" "$met"
    [[ $met == yes ]] || fail=1
  done
done

echo
echo "| load $FIELDS fields (256 B) | cudis bytes | redis bytes | cudis s | redis s |"
echo "|---|---:|---:|---:|---:|"
declare -A MEM
for kind in hash strings; do
  for name in cudis redis; do
    py flush "${PORT[$name]}" # each figure counts its own load alone
    read -r bytes secs < <(py "$kind" "${PORT[$name]}" "$FIELDS")
    MEM[$kind,$name]=$bytes
    MEM[$kind,$name,s]=$secs
    echo "memory,,$kind,$name,$bytes,,," >>"$CSV"
  done
  echo "| as $kind | ${MEM[$kind,cudis]} | ${MEM[$kind,redis]} | ${MEM[$kind,cudis,s]} | ${MEM[$kind,redis,s]} |"
done

echo
echo "| read 1,000 of $FIELDS fields | cudis rows/s | redis rows/s | cudis/redis | cudis rows/CPU-s | redis rows/CPU-s | per CPU-s cudis/redis | load s cudis | load s redis |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
declare -A ROWS CPUROWS LOADS
for test in hmget mget; do
  for name in cudis redis; do
    py flush "${PORT[$name]}"
    LOADS[$test,$name]=$(py "$([[ $test == hmget ]] && echo hps || echo keys)" "${PORT[$name]}" "$FIELDS")
    : >"$TMP/reads.$name"
  done
  hashopt=()
  [[ $test == hmget ]] && hashopt=(--hash hps)
  for _ in $(seq "$REPEAT"); do # alternate the servers: noise hits both
    for name in cudis redis; do
      t0=$(cpu_ticks "${PID[$name]}")
      taskset -c "$LOAD_CPU" "$LOADGEN" -p "${PORT[$name]}" "${hashopt[@]}" --no-load -k "$FIELDS" \
        -v 256 -m 1000 -r 1 --dist uniform -c "$CONNS" -d "$DEPTH" -D "$SECS" -q \
        --csv "$TMP/rows.csv" >/dev/null
      t1=$(cpu_ticks "${PID[$name]}")
      # keys_per_s (column 16) and misses (20) of the row just written
      read -r kps misses < <(tail -1 "$TMP/rows.csv" | awk -F, '{ print $16, $20 }')
      if [[ $misses != 0 ]]; then
        echo "hashes.sh: $test on $name missed $misses fields" >&2
        exit 1
      fi
      echo "$kps $(awk -v t="$(( t1 - t0 ))" -v hz="$CLK_TCK" 'BEGIN { printf "%.3f", t / hz }')" >>"$TMP/reads.$name"
    done
  done
  for name in cudis redis; do
    rows=$(awk '{ print $1 }' "$TMP/reads.$name" | median)
    cpu=$(awk '{ print $2 }' "$TMP/reads.$name" | median)
    ROWS[$test,$name]=${rows%.*}
    CPUROWS[$test,$name]=$(awk -v k="$rows" -v s="$SECS" -v c="$cpu" 'BEGIN { printf "%.0f", (c > 0) ? k * s / c : 0 }')
    echo "hps,$DEPTH,$test,$name,${ROWS[$test,$name]},,,$cpu" >>"$CSV"
  done
  echo "| ${test^^} | ${ROWS[$test,cudis]} | ${ROWS[$test,redis]} | $(awk -v a="${ROWS[$test,cudis]}" -v b="${ROWS[$test,redis]}" 'BEGIN { printf "%.2f", a / b }') | ${CPUROWS[$test,cudis]} | ${CPUROWS[$test,redis]} | $(awk -v a="${CPUROWS[$test,cudis]}" -v b="${CPUROWS[$test,redis]}" 'BEGIN { printf "%.2f", a / b }') | ${LOADS[$test,cudis]} | ${LOADS[$test,redis]} |"
done

echo
echo "| target | value | met |"
echo "|---|---:|---|"
check() { # check "what" value op limit
  local ok
  ok=$(awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN { print ((op == ">=") ? (v >= l) : (v <= l)) ? "yes" : "NO" }')
  echo "| $1 $3 $4 | $2 | $ok |"
  [[ $ok == yes ]] || fail=1
}
check "HMGET rows/s cudis/redis" "$(awk -v a="${ROWS[hmget,cudis]}" -v b="${ROWS[hmget,redis]}" 'BEGIN { printf "%.2f", a / b }')" ">=" 1.5
check "cudis HMGET/MGET rows/s" "$(awk -v a="${ROWS[hmget,cudis]}" -v b="${ROWS[mget,cudis]}" 'BEGIN { printf "%.2f", a / b }')" ">=" 0.8
# a memory figure below the bytes the fields themselves hold (8-byte name,
# 256-byte value) is a miscount, not a saving: it meets nothing
RAW=$(( FIELDS * 264 ))
for name in cudis redis; do
  for what in hash strings; do
    if (( MEM[$what,$name] < RAW )); then
      echo "| $name's used_memory for the $what (${MEM[$what,$name]}) >= the data's $RAW bytes | ${MEM[$what,$name]} | NO |"
      fail=1
    fi
  done
done
check "cudis hash/strings bytes" "$(awk -v a="${MEM[hash,cudis]}" -v b="${MEM[strings,cudis]}" 'BEGIN { printf "%.2f", a / b }')" "<=" 1.2
check "hash bytes cudis/redis" "$(awk -v a="${MEM[hash,cudis]}" -v b="${MEM[hash,redis]}" 'BEGIN { printf "%.2f", a / b }')" "<=" 1.0
echo
echo "CSV: $CSV"
if [[ $fail == 1 ]]; then
  echo "targets: NOT all met"
else
  echo "targets: all met"
fi
