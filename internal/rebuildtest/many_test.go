package rebuildtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// manySessions writes n copies of a one-session wire log into a new store's
// wire/ directory, each its own connection and session (the ids renamed),
// and returns the store root.
func manySessions(t testing.TB, wireLog, session string, n int) string {
	t.Helper()
	b, err := os.ReadFile(wireLog)
	if err != nil {
		t.Fatal(err)
	}
	conn := filepath.Base(wireLog[:len(wireLog)-len(".jsonl")])
	root := filepath.Join(t.TempDir(), "many")
	if err := os.MkdirAll(filepath.Join(root, "wire"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		c := fmt.Sprintf("%s-%03d", conn, i)
		s := fmt.Sprintf("%s-copy-%03d", session, i)
		out := bytes.ReplaceAll(b, []byte(`"`+conn+`"`), []byte(`"`+c+`"`))
		out = bytes.ReplaceAll(out, []byte(`\"`+session+`\"`), []byte(`\"`+s+`\"`))                     // in frames
		out = bytes.ReplaceAll(out, []byte(`"sessionId":"`+session+`"`), []byte(`"sessionId":"`+s+`"`)) // in session entries
		writeFile(t, filepath.Join(root, "wire", c+".jsonl"), string(out))
	}
	return root
}

// TestRebuildKilledHalfway: `rebuild --all` killed (SIGKILL) half-way
// through a store of many sessions, with a config change that rewrites
// every stream, leaves every previous output as it was; the next rebuild
// clears what the killed one left and completes; SIGTERM half-way is an
// orderly stop with the same guarantee.
func TestRebuildKilledHalfway(t *testing.T) {
	needBin(t)
	lv := recordV2(t)
	const n = 16
	root := manySessions(t, lv.wires[0], v2Parent, n)
	mustRebuild(t, "--store", root, "--all")
	before := outputs(t, root)
	if len(before) < 2*n {
		t.Fatalf("%d output files for %d sessions", len(before), n)
	}
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), "[plugins.acpv2.config]\npartialEvery = 1\n")

	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		// What an earlier killed run left is not this run's progress.
		old := map[string]bool{}
		leftovers, _ := filepath.Glob(filepath.Join(root, "tmp", "rebuild-*"))
		for _, d := range leftovers {
			old[d] = true
		}
		cmd := exec.Command(acptapBin, "rebuild", "--store", root, "--config", cfg, "--all")
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Half-way: the staging store holds some sessions' new outputs.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			staged, _ := filepath.Glob(filepath.Join(root, "tmp", "rebuild-*", "sessions", "*", "stream.asr.jsonl"))
			mine := 0
			for _, p := range staged {
				if !old[filepath.Dir(filepath.Dir(filepath.Dir(p)))] {
					mine++
				}
			}
			if mine >= 3 {
				break
			}
			select {
			case err := <-done:
				t.Fatalf("the rebuild ended before it was half-way (%v): %s", err, errOut.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("the rebuild staged nothing in 2 minutes")
			}
			time.Sleep(5 * time.Millisecond)
		}
		cmd.Process.Signal(sig)
		err := <-done
		if ee, ok := err.(*exec.ExitError); !ok || ee.Success() {
			t.Fatalf("%v: the rebuild was not stopped: %v", sig, err)
		} else if sig == syscall.SIGTERM && (ee.ExitCode() != 130 || !bytes.Contains(errOut.Bytes(), []byte("the store is unchanged"))) {
			t.Errorf("SIGTERM: %v, stderr %s; want exit 130 and the store unchanged", err, errOut.String())
		}
		if staged, _ := filepath.Glob(filepath.Join(root, "tmp", "rebuild-*", commitName)); len(staged) > 0 {
			t.Fatalf("%v: the rebuild committed before it was stopped: %v", sig, staged)
		}
		sameOutputs(t, fmt.Sprintf("outputs after %v half-way", sig), before, outputs(t, root))
		if b := backups(t, root); len(b) > 0 {
			t.Errorf("%v: backups made by a rebuild that never swapped: %v", sig, b)
		}
		if sig == syscall.SIGTERM {
			left, _ := filepath.Glob(filepath.Join(root, "tmp", "rebuild-*"))
			if len(left) > 0 {
				t.Errorf("SIGTERM: staging left behind: %v\n%s", left, errOut.String())
			}
		}
	}

	mustRebuild(t, "--store", root, "--config", cfg, "--all")
	if left, _ := filepath.Glob(filepath.Join(root, "tmp", "rebuild-*")); len(left) > 0 {
		t.Errorf("staging left after a complete rebuild: %v", left)
	}
	after := outputs(t, root)
	name := filepath.Join("sessions", v2Parent+"-copy-000", "stream.asr.jsonl")
	if lineCount(after[name]) <= lineCount(before[name]) {
		t.Errorf("%s: the complete rebuild did not swap the new outputs in", name)
	}
}

const commitName = "commit.json"
