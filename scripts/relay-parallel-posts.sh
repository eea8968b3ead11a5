#!/bin/sh
# relay-parallel-posts.sh [ACPTAP] [N] — the relay's peak memory (VmHWM)
# under N parallel POSTs of a 16 MiB body each (default 40), the case of
# issue 18 point 16. Each body is one valid event padded with blanks to
# just under the 16 MiB limit. RELAY_FLAGS (default --no-auth) are passed
# to the relay: empty for a binary older than --no-auth. Needs curl and
# python3.
set -eu
bin=${1:-acptap}
n=${2:-40}
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
python3 - "$dir" "$n" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    ev = ('{"aep":"0.1","id":"P%d","type":"x.test.run.step","time":"2026-07-03T10:00:00Z",'
          '"source":"aep://h/agent/t","agent":"t","session":"p%d","seq":0}' % (i, i))
    open("%s/body%d" % (d, i), "w").write(" " * (16 * 1024 * 1024 - len(ev) - 2) + "\n" + ev)
PY
# shellcheck disable=SC2086
"$bin" relay --addr 127.0.0.1:0 ${RELAY_FLAGS---no-auth} --store "$dir/store" 2>"$dir/err" &
pid=$!
while ! grep -q listening "$dir/err" 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || { cat "$dir/err" >&2; exit 1; }
  sleep 0.1
done
addr=$(sed -n 's/.*listening on http:\/\/\([^,]*\),.*/\1/p' "$dir/err")
i=0
curls=""
while [ "$i" -lt "$n" ]; do
  curl -s -o /dev/null -w '%{http_code}\n' -H 'AEP-Version: 0.1' -H 'Content-Type: application/x-ndjson' \
    --data-binary @"$dir/body$i" "http://$addr/events" >>"$dir/codes" &
  curls="$curls $!"
  i=$((i + 1))
done
for c in $curls; do wait "$c" || true; done
echo "answers: $(sort "$dir/codes" | uniq -c | tr '\n' ' ')"
grep -E 'VmHWM|VmRSS' "/proc/$pid/status"
