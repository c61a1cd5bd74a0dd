#!/usr/bin/env bash
# scripts/package-test.sh [BUILD_DIR] - the Debian package, end to end, as
# root on Debian 12: build it (cpack -G DEB in BUILD_DIR, default build),
# install it with apt, check what it put where (the binary, the conffile,
# the unit, logrotate, the man page, the `cudis` user and its
# directories), run `systemd-analyze verify` on the unit where that tool
# exists, start the server from the installed files as the unit would
# (user cudis, /etc/cudis/cudis.conf, --supervised systemd with a
# NOTIFY_SOCKET this script listens on: READY=1 must come) when systemd is
# not running (CI), else through systemctl; PING it, SAVE into its state
# directory, stop it, then purge the package and check it is all gone.
set -euo pipefail
if [[ $(id -u) != 0 ]]; then # it installs a package: as deps.sh, through sudo
  exec sudo -E "$0" "$@"
fi
cd "$(dirname "$0")/.."
BUILD=${1:-build}

echo "== package =="
(cd "$BUILD" && rm -f cudis-server_*.deb && cpack -G DEB >/dev/null)
deb=$(ls "$BUILD"/cudis-server_*.deb)
dpkg-deb --info "$deb" | sed -n 's/^ *\(Package\|Version\|Depends\|Architecture\):/  &/p'
dpkg-deb --contents "$deb" | awk '{print "  " $6}' | grep -v '/$'

fail() { echo "package-test.sh: $*" >&2; exit 1; }
if dpkg -s cudis-server >/dev/null 2>&1; then
  apt-get purge -y cudis-server >/dev/null
fi
apt-get install -y "./$deb" >/dev/null
for f in /usr/bin/cudis-server /etc/cudis/cudis.conf /lib/systemd/system/cudis-server.service \
         /etc/logrotate.d/cudis-server /usr/share/man/man1/cudis-server.1.gz; do
  [[ -e $f ]] || fail "$f is not installed"
done
dpkg-query -W -f='${Conffiles}\n' cudis-server | grep -q /etc/cudis/cudis.conf || fail "cudis.conf is no conffile"
getent passwd cudis >/dev/null || fail "no cudis user"
[[ $(stat -c %U /var/lib/cudis) == cudis ]] || fail "/var/lib/cudis is not cudis's"
grep -qx 'dir /var/lib/cudis' /etc/cudis/cudis.conf || fail "the conf's dir is not /var/lib/cudis"
man -w cudis-server >/dev/null 2>&1 || [[ ! -x /usr/bin/man ]] || fail "man cudis-server finds nothing"
logrotate -d /etc/logrotate.d/cudis-server >/dev/null 2>&1 || fail "logrotate rejects its file"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify /lib/systemd/system/cudis-server.service
  echo "systemd-analyze verify: ok"
else
  echo "systemd-analyze: not installed here, unit not verified"
fi

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if [[ -d /run/systemd/system ]]; then
  echo "== systemctl start cudis-server (port 6379) =="
  systemctl restart cudis-server
  port=6379
  systemctl is-active cudis-server
else
  echo "== started as the unit would (no systemd running here), port $port =="
  # the unit's directories, made by systemd (RuntimeDirectory, LogsDirectory)
  install -d -o cudis -g cudis -m 0755 /run/cudis
  install -d -o cudis -g cudis -m 0750 /var/log/cudis
  sock=$(mktemp -u /tmp/cudis-notify-XXXXXX)
  /usr/bin/python3 - "$sock" >"$sock.out" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
while True:
    msg = s.recv(4096).decode()
    print(msg.replace("\n", " "), flush=True)
    if "READY=1" in msg:
        break
PY
  listener=$!
  for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.05; done
  chmod 666 "$sock"
  (cd /var/lib/cudis && exec setpriv --reuid=cudis --regid=cudis --init-groups \
     env NOTIFY_SOCKET="$sock" /usr/bin/cudis-server /etc/cudis/cudis.conf \
     --supervised systemd --daemonize no --port "$port") &
  server=$!
  wait "$listener" || fail "no READY=1 from the server (supervised systemd)"
  grep -q "READY=1" "$sock.out" || fail "no READY=1 from the server"
  echo "notify: $(cat "$sock.out")"
  rm -f "$sock" "$sock.out"
fi
[[ $(redis-cli -p "$port" ping) == PONG ]] || fail "no PONG"
redis-cli -p "$port" set package-test ok >/dev/null
[[ $(redis-cli -p "$port" save) == OK ]] || fail "SAVE failed"
[[ -s /var/lib/cudis/dump.rdb ]] || fail "no /var/lib/cudis/dump.rdb"
[[ $(redis-cli -p "$port" config get dir | tail -1) == /var/lib/cudis ]] || fail "dir is not /var/lib/cudis"
[[ -s /run/cudis/cudis-server.pid ]] || fail "no pidfile"
grep -q "Ready to accept connections" /var/log/cudis/cudis-server.log || fail "nothing in the log file"
if [[ -d /run/systemd/system ]]; then
  systemctl stop cudis-server
else
  kill -TERM "$server"
  wait "$server" || fail "the server did not exit cleanly"
fi
echo "PING, SET, SAVE, SIGTERM: ok"

apt-get purge -y cudis-server >/dev/null
for f in /usr/bin/cudis-server /etc/cudis /lib/systemd/system/cudis-server.service /var/lib/cudis; do
  [[ ! -e $f ]] || fail "$f is left after purge"
done
rm -rf /run/cudis /var/log/cudis
echo "purged: ok"
