package logimport

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkReadOnce times the digest pass (readOnce) over the synthetic
// log of ACPTAP_CONVERT_BENCH_MB (default 8) MiB, its frames kept: the
// part of a conversion before the pipeline starts.
func BenchmarkReadOnce(b *testing.B) {
	mib := 8
	if n, err := strconv.Atoi(os.Getenv(BenchEnv)); err == nil && n > 0 {
		mib = n
	}
	in := filepath.Join(b.TempDir(), "v1.jsonl")
	b.SetBytes(writeSyntheticLog(b, in, int64(mib)<<20))
	for b.Loop() {
		if _, err := readOnce(in, "", DefaultMaxLine, retainBytes, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadOncePredecode is BenchmarkReadOnce with the lines decoded
// ahead (predecoder) and not, for comparing the two in one run.
func BenchmarkReadOncePredecode(b *testing.B) {
	mib := 8
	if n, err := strconv.Atoi(os.Getenv(BenchEnv)); err == nil && n > 0 {
		mib = n
	}
	in := filepath.Join(b.TempDir(), "v1.jsonl")
	size := writeSyntheticLog(b, in, int64(mib)<<20)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("predecode=%v", on), func(b *testing.B) {
			defer func(was bool) { predecode = was }(predecode)
			predecode = on
			b.SetBytes(size)
			for b.Loop() {
				if _, err := readOnce(in, "", DefaultMaxLine, retainBytes, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
