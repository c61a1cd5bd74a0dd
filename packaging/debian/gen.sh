#!/bin/sh
# gen.sh SERVER OUTDIR: the packaged cudis.conf (the table's defaults, with
# dir, logfile and pidfile where the unit's directories are) and the man
# page, both from the built server's option table.
set -e
"$1" --print-conf | sed \
  -e 's|^dir \./$|dir /var/lib/cudis|' \
  -e 's|^logfile ""$|logfile /var/log/cudis/cudis-server.log|' \
  -e 's|^pidfile ""$|pidfile /run/cudis/cudis-server.pid|' >"$2/cudis.conf"
for want in 'dir /var/lib/cudis' 'logfile /var/log/cudis/cudis-server.log' 'pidfile /run/cudis/cudis-server.pid'; do
  grep -qx "$want" "$2/cudis.conf" || { echo "gen.sh: '$want' not set in cudis.conf" >&2; exit 1; }
done
"$1" --print-man | gzip -9n >"$2/cudis-server.1.gz"
