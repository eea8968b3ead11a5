package rebuildtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

// BenchmarkRebuildAll: `acptap rebuild --all` over a store of many
// sessions, each its own connection: copies of one recorded ACP v2
// connection, renamed. "small" copies a two-prompt connection (about
// 26 KB of wire log), "large" a twenty-prompt one. Every output is in
// place before the timed runs, so each run maps, stages and compares
// everything (and swaps nothing). MB/s is wire log bytes per second. Not
// part of make test:
//
//	go test -run '^$' -bench RebuildAll -benchtime 3x ./internal/rebuildtest
func BenchmarkRebuildAll(b *testing.B) {
	needBin(b)
	small := recordV2(b).wires[0]
	large := recordLarge(b, 20)
	for _, tc := range []struct {
		name string
		wire string
		n    int
	}{{"small", small, 200}, {"large", large, 20}} {
		root := manySessions(b, tc.wire, v2Parent, tc.n)
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
		b.Run(fmt.Sprintf("%s-%dsessions-%dKB", tc.name, tc.n, size/int64(tc.n)/1000), func(b *testing.B) {
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				mustRebuild(b, "--store", root, "--all")
			}
			b.ReportMetric(float64(tc.n)*float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
		})
	}
}

// recordLarge records one ACP v2 connection of n "everything" prompts and
// returns its wire log.
func recordLarge(b testing.TB, n int) string {
	sdk := testpeers.NodeSDKDir(b)
	root := filepath.Join(b.TempDir(), "store")
	agent := []string{acptapBin, "record", "--store", root, "--", "node", filepath.Join(sdk, "v2-agent.mjs")}
	var args []string
	for i := 0; i < n; i++ {
		args = append(args, "--prompt", fmt.Sprintf("everything: turn %d", i+1))
	}
	testpeers.RunSDKClient(b, "v2-client.mjs", append(args, "--no-mcp"), agent).RequireOK(b)
	return snapshot(b, root).wires[0]
}
