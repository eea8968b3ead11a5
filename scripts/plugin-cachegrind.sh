#!/bin/bash
# plugin-cachegrind.sh: instructions a frame inside the acpv2 plugin process
# (docs/benchmarks-history.md, "Issue 12, sixth round: engine"). BenchmarkPluginFrames
# (two batches in flight) runs twice, at U1 and U2 updates, with the built-in
# plugin under `valgrind --tool=cachegrind` (GOMAXPROCS=1); the difference of
# the two counts over U2-U1 leaves out start-up, the schema's compile and the
# warm-up. GOGC=off counts the same to ~0.1 %; with the GC on a count moves
# by ~±1.5k.
#
#   scripts/plugin-cachegrind.sh [U1 [U2]]      (defaults 20000 60000)
#   ACPTAP_BIN=/path/to/acptap GOGC_PLUGIN=off scripts/plugin-cachegrind.sh
#
# ACPTAP_BIN: the acptap to measure (default: built from this tree);
# BENCH_TEST: the bench package's test binary (default: built from this tree).
set -euo pipefail
U1=${1:-20000}; U2=${2:-60000}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/plugin-cg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bin=${ACPTAP_BIN:-}
if [ -z "$bin" ]; then bin=$tmp/acptap; (cd "$root" && go build -o "$bin" ./cmd/acptap); fi
test=${BENCH_TEST:-}
if [ -z "$test" ]; then test=$tmp/bench.test; (cd "$root" && go test -c -o "$test" ./bench); fi
cat > "$tmp/wrap" <<WRAP
#!/bin/bash
if [ -n "\${ACPTAP_BUILTIN_PLUGIN:-}" ]; then
  exec env GOMAXPROCS=1 GOGC=${GOGC_PLUGIN:-100} valgrind --tool=cachegrind --cache-sim=no \
    --log-file=$tmp/cg.%p.log --cachegrind-out-file=/dev/null "$bin" "\$@"
fi
exec "$bin" "\$@"
WRAP
chmod +x "$tmp/wrap"
count() {
  rm -f "$tmp"/cg.*.log
  (cd "$root/bench" && ACPTAP_BIN=$tmp/wrap ACPTAP_BENCH_UPDATES=$1 ACPTAP_BENCH_PLUGIN_RUNS=pipelined \
    "$test" -test.run '^$' -test.bench PluginFrames -test.benchtime=1x >"$tmp/bench.$1.log" 2>&1) ||
    { cat "$tmp/bench.$1.log" >&2; exit 1; }
  grep -hE 'I +refs' "$tmp"/cg.*.log | awk '{gsub(",", "", $NF); s += $NF} END {printf "%.0f\n", s}'
}
a=$(count "$U1"); b=$(count "$U2")
echo "plugin instructions a frame: $(( (b - a) / (U2 - U1) )) (GOGC=${GOGC_PLUGIN:-100}; $a at $U1, $b at $U2 updates)"
