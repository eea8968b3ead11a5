// Package bench holds acptap's cross-component performance benchmarks: the
// real `acptap record` binary against `cat` and against a direct pipe, the
// acpv2 mapper in process, over in-process gRPC and out of process, the
// recorder's peak memory over a long session, and its start-up cost. They
// run only with -bench; see docs/benchmarks.md and scripts/bench.sh.
package bench
