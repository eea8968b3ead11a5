#!/usr/bin/env bash
# Runs acptap's performance benchmarks (docs/benchmarks.md) and prints the
# figures against their goals. Every figure is measured against its baseline
# in the same run (cat, a direct pipe, the in-process mapper), alternating,
# so read the ratios first on a busy machine.
#
# Knobs (environment):
#   BENCH_MIB       MiB per throughput run and direction      (default 1024)
#   BENCH_UPDATES   session/update lines for the plugin and
#                   memory benchmarks                         (default 1000000)
#   BENCH_RATE      updates/s the agent writes in the memory
#                   benchmark (0 = unpaced)                   (default 50000)
#   BENCH_LAT_N     round trips per latency run               (default 5000)
#   BENCH_START_N   start-ups per start-to-exec run           (default 40)
#   BENCH_ROUNDS    alternating rounds of the tee package's
#                   throughput and latency runs (-benchtime)  (default 3)
#   BENCH_E2E_ROUNDS  rounds of the acptap binary's throughput
#                   run (each waits for the plugins to map it all) (default 1)
#   BENCH_EXIT_N    runs of each (cat, acptap) in the exit run  (default 20)
#   BENCH_EXIT_MIB  MiB of updates the plugins have to map when
#                   the agent exits, in the exit run          (default 8)
#   BENCH_EXIT_BIG_MIB  the backlog of the second exit run ("for any backlog")
#                   (run "exitbig")                           (default 128)
#   BENCH_REBUILD_MIB  MiB of updates in the wire log rebuilt
#                   against a Python json.loads pass          (default 64)
#   BENCH_ONLY      run only the runs whose name matches this regexp: tee, capture,
#                   e2e, latency, plugin, memory, startup, exit, exitbig, rebuild, engines, drain
#                   (the table shows "-" for the rest)
#   BENCH_OUT       directory for the raw `go test` output    (default: a new temp dir)
#   BENCH_TABLE_ONLY=1  print the table of an earlier run's BENCH_OUT without running anything
#   ACPTAP_BIN      a prebuilt acptap binary to measure (default: built from the tree)
#   ACPTAP_BENCH_NO_PLUGINS=1  attribution: record without attaching any plugin
#   ACPTAP_BENCH_QUEUE_MIB=N   tee.queue_bytes of the recordings, in MiB (default: acptap's)
#
# Quick run:  BENCH_MIB=128 BENCH_UPDATES=100000 BENCH_LAT_N=1000 scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."

mib=${BENCH_MIB:-1024}
updates=${BENCH_UPDATES:-1000000}
rate=${BENCH_RATE:-50000}
latn=${BENCH_LAT_N:-5000}
startn=${BENCH_START_N:-40}
rounds=${BENCH_ROUNDS:-3}
e2e=${BENCH_E2E_ROUNDS:-1}
only=${BENCH_ONLY:-}
out=${BENCH_OUT:-$(mktemp -d -t acptap-bench.XXXXXX)}
mkdir -p "$out"

[[ "${BENCH_TABLE_ONLY:-}" == 1 ]] && only='^$' # run nothing

export TEE_BENCH_MIB=$mib TEE_BENCH_LAT_N=$latn
export ACPTAP_BENCH_MIB=$mib ACPTAP_BENCH_UPDATES=$updates ACPTAP_BENCH_RATE=$rate
export ACPTAP_BENCH_LAT_N=$latn ACPTAP_BENCH_START_N=$startn
export ACPTAP_BENCH_EXIT_N=${BENCH_EXIT_N:-20} ACPTAP_BENCH_EXIT_MIB=${BENCH_EXIT_MIB:-8}
export ACPTAP_BENCH_REBUILD_MIB=${BENCH_REBUILD_MIB:-64}

# run NAME PKG REGEXP BENCHTIME: one `go test -bench` invocation, its output
# kept in $out/NAME.txt and echoed.
run() {
	local name=$1 pkg=$2 re=$3 bt=$4
	if [[ -n "$only" ]] && ! grep -qE "$only" <<<"$name"; then
		return 0
	fi
	echo "== go test -run '^\$' -bench '$re' -benchtime=$bt $pkg" >&2
	if ! go test -run '^$' -bench "$re" -benchtime="$bt" -timeout 120m "$pkg" 2>&1 | tee "$out/$name.txt" >&2; then
		echo "== $name FAILED (see $out/$name.txt); going on" >&2
	fi
}

{
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "go: $(go version | cut -d' ' -f3-)  commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
	echo "sizes: ${mib} MiB per direction, ${updates} updates (memory run at ${rate}/s), ${latn} round trips, ${startn} start-ups"
} | if [[ "${BENCH_TABLE_ONLY:-}" == 1 ]]; then cat >/dev/null; else tee "$out/machine.txt" >&2; fi

run tee      ./host/tee/ 'BenchmarkTee(Throughput|Latency)$' "${rounds}x"
run capture  ./host/tee/ 'BenchmarkCapture$' 20000x
run e2e      ./bench/    'BenchmarkRecordThroughput$' "${e2e}x"
run latency  ./bench/    'BenchmarkRecordLatency$' 1x
run plugin   ./bench/    'BenchmarkPluginFrames$' 1x
run memory   ./bench/    'BenchmarkRecordMemory$' 1x
run startup  ./bench/    'BenchmarkRecordStartup$' 1x
run exit     ./bench/    'BenchmarkRecordExit$' 1x
ACPTAP_BENCH_EXIT_MIB=${BENCH_EXIT_BIG_MIB:-128} ACPTAP_BENCH_EXIT_N=$(( (${BENCH_EXIT_N:-20} + 1) / 2 )) \
	run exitbig ./bench/ 'BenchmarkRecordExit$' 1x
run rebuild  ./bench/    'BenchmarkRebuild$' 3x
run engines  ./bench/    'BenchmarkEngines$' 1x
run drain    ./bench/    'BenchmarkCaptureDrain$' 10x

# m FILE BENCH UNIT: the value reported with UNIT on BENCH's line in FILE.
m() {
	[[ -f "$out/$1.txt" ]] || { echo "-"; return; }
	awk -v b="$2" -v u="$3" '$1 ~ "^"b"(-[0-9]+)?$" { for (i = 3; i < NF; i++) if ($(i+1) == u) { print $i; exit } }' "$out/$1.txt" | grep . || echo "-"
}
# verdict VALUE OP GOAL: "yes" or "NO" ("-" without a value, "" without a goal).
verdict() {
	[[ -z "$2" ]] && return
	[[ "$1" == "-" ]] && { echo "-"; return; }
	awk -v v="$1" -v op="$2" -v g="$3" 'BEGIN { ok = (op == ">=") ? v >= g : v <= g; print ok ? "yes" : "NO" }'
}
row() { printf '| %-58s | %14s | %-12s | %-4s |\n' "$1" "$2" "$3" "$(verdict "$2" "${4:-}" "${5:-}")"; }
fmt() { [[ "$1" == "-" ]] && echo "-" || printf "%.${2:-2}f" "$1"; }


tp=BenchmarkRecordThroughput
# mem WHO: WHO's VmHWM at 25/50/75/100 % of the session (WHO: host, acpv2, aep).
mem() {
	local v=()
	for p in 25 50 75 100; do v+=("$(fmt "$(m memory BenchmarkRecordMemory "$1-hwm@$p%-MiB")" 0)"); done
	local IFS=/
	echo "${v[*]}"
}

echo
[[ -f "$out/machine.txt" ]] && sed 's/^/    /' "$out/machine.txt"
echo
echo "| figure | measured | goal | met |"
echo "|---|---:|---|---|"
ex=BenchmarkRecordExit
row "exit after the agent's last byte, acptap record, p99 (ms)" "$(fmt "$(m exit $ex acptap-exit-p99-ms)" 1)" "≤ 50 ms" "<=" 50
row "  p50 · p99 acptap (ms), backlog $(m exit $ex backlog-MiB) MiB" "$(fmt "$(m exit $ex acptap-exit-p50-ms)" 1) · $(fmt "$(m exit $ex acptap-exit-p99-ms)" 1)" ""
row "  p50 · p99 cat, same run (ms)" "$(fmt "$(m exit $ex cat-exit-p50-ms)" 1) · $(fmt "$(m exit $ex cat-exit-p99-ms)" 1)" ""
row "  added over cat, p99 (ms)" "$(fmt "$(m exit $ex added-exit-p99-ms)" 1)" ""
row "  of which capture writing the queued wire log, p50 · p99 (ms)" "$(fmt "$(m exit $ex wire-after-exit-p50-ms)" 1) · $(fmt "$(m exit $ex wire-after-exit-p99-ms)" 1)" ""
row "  runs handed to a finisher · runs; mapping done after exit, p50 (ms)" "$(m exit $ex handed-over-runs) · $(m exit $ex runs); $(fmt "$(m exit $ex mapped-after-exit-p50-ms)" 0)" ""
row "same, backlog $(m exitbig $ex backlog-MiB) MiB, p99 (ms)" "$(fmt "$(m exitbig $ex acptap-exit-p99-ms)" 1)" "≤ 50 ms" "<=" 50
row "  p50 · p99 acptap, p99 cat, same run (ms)" "$(fmt "$(m exitbig $ex acptap-exit-p50-ms)" 1) · $(fmt "$(m exitbig $ex acptap-exit-p99-ms)" 1) · $(fmt "$(m exitbig $ex cat-exit-p99-ms)" 1)" ""
row "  exit after the last byte, throughput runs: acptap · cat (s)" "$(fmt "$(m e2e $tp/dir=a2c acptap-exit-s/op)" 3) · $(fmt "$(m e2e $tp/dir=a2c cat-exit-s/op)" 3)" ""
row "acptap rebuild vs one Python json.loads pass (ratio)" "$(fmt "$(m rebuild BenchmarkRebuild ratio)")" "≥ 1×" ">=" 1
row "  rebuild · python (s) over $(fmt "$(m rebuild BenchmarkRebuild wire-MB)" 0) MB" "$(fmt "$(m rebuild BenchmarkRebuild rebuild-s)") · $(fmt "$(m rebuild BenchmarkRebuild python-s)")" ""
row "acpv2 in process / one Go JSON parse of the frames (ratio)" "$(fmt "$(m engines BenchmarkEngines/acpv2 ratio)")" "≥ 1×" ">=" 1
row "  acpv2 · Go parse (frames/s)" "$(fmt "$(m engines BenchmarkEngines/acpv2 frames/s)" 0) · $(fmt "$(m engines BenchmarkEngines/acpv2 goparse-frames/s)" 0)" ""
row "aep in process / one Go JSON parse of the frames (ratio)" "$(fmt "$(m engines BenchmarkEngines/aep ratio)")" "≥ 1×" ">=" 1
row "  aep · Go parse (frames/s)" "$(fmt "$(m engines BenchmarkEngines/aep frames/s)" 0) · $(fmt "$(m engines BenchmarkEngines/aep goparse-frames/s)" 0)" ""
row "capture writing a queued backlog at exit, a2c · c2a (MB/s)" "$(fmt "$(m drain BenchmarkCaptureDrain/dir=a2c MB/s)" 0) · $(fmt "$(m drain BenchmarkCaptureDrain/dir=c2a MB/s)" 0)" ""
row "acptap record throughput / cat, editor→agent (ratio)" "$(fmt "$(m e2e $tp/dir=c2a ratio)")" "≥ 0.9×" ">=" 0.9
row "  acptap MB/s · cat MB/s (c2a)" "$(fmt "$(m e2e $tp/dir=c2a acptap-MB/s)" 0) · $(fmt "$(m e2e $tp/dir=c2a cat-MB/s)" 0)" ""
row "  frames dropped (gaps) of $(m e2e $tp/dir=c2a lines/op) (c2a)" "$(m e2e $tp/dir=c2a dropped-frames/op)" "0" "<=" 0
row "acptap record throughput / cat, agent→editor (ratio)" "$(fmt "$(m e2e $tp/dir=a2c ratio)")" "≥ 0.9×" ">=" 0.9
row "  acptap MB/s · cat MB/s (a2c)" "$(fmt "$(m e2e $tp/dir=a2c acptap-MB/s)" 0) · $(fmt "$(m e2e $tp/dir=a2c cat-MB/s)" 0)" ""
row "  floor, cat with one kept copy / cat: c2a · a2c (ratio)" "$(fmt "$(m e2e $tp/dir=c2a keep-ratio)") · $(fmt "$(m e2e $tp/dir=a2c keep-ratio)")" ""
row "  acptap / that floor: c2a · a2c (ratio)" "$(fmt "$(m e2e $tp/dir=c2a ratio-over-keep)") · $(fmt "$(m e2e $tp/dir=a2c ratio-over-keep)")" ""
row "  frames dropped (gaps) of $(m e2e $tp/dir=a2c lines/op) (a2c)" "$(m e2e $tp/dir=a2c dropped-frames/op)" "0" "<=" 0
row "tee package / cat, c2a (ratio; capture off: $(fmt "$(m tee BenchmarkTeeThroughput/dir=c2a nocapture-ratio)"))" "$(fmt "$(m tee BenchmarkTeeThroughput/dir=c2a ratio)")" "≥ 0.9×" ">=" 0.9
row "tee package / cat, a2c (ratio; capture off: $(fmt "$(m tee BenchmarkTeeThroughput/dir=a2c nocapture-ratio)"))" "$(fmt "$(m tee BenchmarkTeeThroughput/dir=a2c ratio)")" "≥ 0.9×" ">=" 0.9
row "  capture cost per line (ns)" "$(fmt "$(m capture BenchmarkCapture ns/line)" 0)" ""
for pace in 0 1ms; do
	lat=BenchmarkRecordLatency/pace=$pace
	row "added round-trip latency, acptap record, pace=$pace, p50 (µs)" "$(fmt "$(m latency $lat added-p50-us)" 1)" ""
	row "added round-trip latency, acptap record, pace=$pace, p99 (µs)" "$(fmt "$(m latency $lat added-p99-us)" 1)" "≤ +100 µs" "<=" 100
	row "  p99 direct · two cats · acptap (µs)" "$(fmt "$(m latency $lat direct-p99-us)" 0) · $(fmt "$(m latency $lat cat-p99-us)" 0) · $(fmt "$(m latency $lat acptap-p99-us)" 0)" ""
	row "  CPU of acptap + plugin per round trip (µs)" "$(fmt "$(m latency $lat acptap-cpu-us/line)" 0)" ""
done
row "added round-trip latency, tee package, p99 (µs)" "$(fmt "$(m tee BenchmarkTeeLatency added-p99-us)" 1)" "≤ +100 µs" "<=" 100
row "acpv2 out of process, two batches in flight as the host sends them (frames/s)" "$(fmt "$(m plugin BenchmarkPluginFrames pipelined-frames/s)" 0)" "≥ 200,000/s" ">=" 200000
row "  out of process / in process (ratio)" "$(fmt "$(m plugin BenchmarkPluginFrames pipelined-ratio)")" "≥ 0.5×" ">=" 0.5
row "  one batch at a time (frames/s · ratio)" "$(fmt "$(m plugin BenchmarkPluginFrames process-frames/s)" 0) · $(fmt "$(m plugin BenchmarkPluginFrames ratio)")" ""
row "  CPU per frame, host · plugin, two in flight (ns)" "$(fmt "$(m plugin BenchmarkPluginFrames pipelined-host-cpu-ns/frame)" 0) · $(fmt "$(m plugin BenchmarkPluginFrames pipelined-plugin-cpu-ns/frame)" 0)" ""
row "  in process · in-process gRPC (frames/s)" "$(fmt "$(m plugin BenchmarkPluginFrames inproc-frames/s)" 0) · $(fmt "$(m plugin BenchmarkPluginFrames grpc-frames/s)" 0)" ""
row "  host router, sdk.FrameBuilder (frames/s)" "$(fmt "$(m plugin BenchmarkPluginFrames framebuilder-frames/s)" 0)" ""
for who in host acpv2 aep; do
	row "peak RSS, $who (MiB)" "$(fmt "$(m memory BenchmarkRecordMemory $who-peak-MiB)" 1)" "≤ 64 MiB" "<=" 64
	row "  $who VmHWM at 25/50/75/100 % of the session (MiB)" "$(mem $who)" "flat"
done
row "  frames dropped in the memory run" "$(m memory BenchmarkRecordMemory dropped-frames/op)" "0" "<=" 0
row "start → agent exec added by acptap record, p50 (ms)" "$(fmt "$(m startup BenchmarkRecordStartup added-p50-ms)")" "≤ 20 ms" "<=" 20
row "  p90 (ms)" "$(fmt "$(m startup BenchmarkRecordStartup added-p90-ms)")" "≤ 20 ms" "<=" 20
echo
echo "raw output: $out"
