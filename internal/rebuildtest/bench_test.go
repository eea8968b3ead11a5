package rebuildtest

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRebuildAll: `acptap rebuild --all` over a store of many
// sessions (copies of a recorded ACP v2 connection, each its own
// connection and session, every output already in place so each run maps
// and compares everything). MB/s is wire log bytes per second. Not part of
// make test: go test -run '^$' -bench RebuildAll ./internal/rebuildtest
func BenchmarkRebuildAll(b *testing.B) {
	needBin(b)
	lv := recordV2(b)
	for _, n := range []int{100} {
		root := manySessions(b, lv.wires[0], v2Parent, n)
		mustRebuild(b, "--store", root, "--all")
		var size int64
		wires, _ := filepath.Glob(filepath.Join(root, "wire", "*.jsonl"))
		for _, w := range wires {
			fi, err := os.Stat(w)
			if err != nil {
				b.Fatal(err)
			}
			size += fi.Size()
		}
		b.Run(filepath.Base(root)+"-"+itoa(n), func(b *testing.B) {
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				mustRebuild(b, "--store", root, "--all")
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
