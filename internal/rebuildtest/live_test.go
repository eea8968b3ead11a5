package rebuildtest

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRebuildMatchesLive: a session recorded over several connections
// (ACP v2: new, resume + fork, resume — three connections, two sessions;
// ACP v1: new, then load on a later connection), rebuilt with unchanged
// plugins and config, gives the live outputs byte for byte however it is
// rebuilt: --all in the live store (twice: idempotent, no backups), all
// wire logs in one call in any argument order into a fresh store, one
// file per call into a fresh store (in connection order, then a later
// connection again), and one later connection alone in the live store.
func TestRebuildMatchesLive(t *testing.T) {
	needBin(t)
	for _, tc := range []struct {
		name   string
		record func(testing.TB) *live
		conns  int
	}{
		{"v2-resume-fork", recordV2, 3},
		{"v1-load", recordV1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lv := tc.record(t)
			if len(lv.wires) != tc.conns {
				t.Fatalf("%d wire logs, want %d", len(lv.wires), tc.conns)
			}

			t.Run("all", func(t *testing.T) {
				root := copyTree(t, lv.root)
				for i := 0; i < 2; i++ {
					out, errOut := mustRebuild(t, "--store", root, "--all")
					if strings.Contains(errOut, "stale") {
						t.Errorf("stale entries reported with unchanged plugins and config:\n%s", errOut)
					}
					if !strings.Contains(out, "0 files changed") {
						t.Errorf("run %d: the summary says files changed:\n%s", i+1, out)
					}
					sameOutputs(t, "rebuild --all", lv.outputs, outputs(t, root))
				}
				if b := backups(t, root); len(b) > 0 {
					t.Errorf("backups of unchanged files: %v", b)
				}
			})

			t.Run("one-call-any-order", func(t *testing.T) {
				files := copyFiles(t, lv.wires)
				reversed := make([]string, len(files))
				for i, f := range files {
					reversed[len(files)-1-i] = f
				}
				root := filepath.Join(t.TempDir(), "fresh")
				mustRebuild(t, append([]string{"--store", root}, reversed...)...)
				sameOutputs(t, "rebuild of all files in one call", lv.outputs, outputs(t, root))
			})

			t.Run("one-file-per-call", func(t *testing.T) {
				files := copyFiles(t, lv.wires)
				root := filepath.Join(t.TempDir(), "fresh")
				for _, f := range files {
					mustRebuild(t, "--store", root, f)
				}
				sameOutputs(t, "rebuild one file per call", lv.outputs, outputs(t, root))
				mustRebuild(t, "--store", root, files[1])
				sameOutputs(t, "rebuild of the second connection again", lv.outputs, outputs(t, root))
			})

			t.Run("later-connection-in-live-store", func(t *testing.T) {
				root := copyTree(t, lv.root)
				mustRebuild(t, "--store", root, filepath.Join(root, "wire", filepath.Base(lv.wires[len(lv.wires)-1])))
				sameOutputs(t, "rebuild of the last connection in the live store", lv.outputs, outputs(t, root))
			})
		})
	}
}
