package logimport

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadOnce times the digest pass (readOnce) over the synthetic
// log of ACPTAP_CONVERT_BENCH_MB (default 8) MiB, its frames kept: the
// part of a conversion before the pipeline starts.
func BenchmarkReadOnce(b *testing.B) {
	mib := 8
	if v := os.Getenv(BenchEnv); v != "" {
		mib = atoiOr(v, mib)
	}
	in := filepath.Join(b.TempDir(), "v1.jsonl")
	b.SetBytes(writeSyntheticLog(b, in, int64(mib)<<20))
	for b.Loop() {
		if _, err := readOnce(in, "", DefaultMaxLine, retainBytes); err != nil {
			b.Fatal(err)
		}
	}
}

func atoiOr(s string, d int) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return d
		}
		n = n*10 + int(c-'0')
	}
	return n
}
