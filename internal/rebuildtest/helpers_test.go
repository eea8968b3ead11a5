package rebuildtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

var (
	acptapBin   string
	acptapBuild error
	// sharedDir holds the live recordings, made once and read (copied,
	// never changed) by every test.
	sharedDir string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		dir, err := os.MkdirTemp("", "acptap-rebuildtest-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		acptapBin, acptapBuild = testpeers.Build(dir)
		sharedDir = filepath.Join(dir, "recordings")
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// needBin skips under -short and fails when the build failed.
func needBin(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs acptap")
	}
	if acptapBuild != nil {
		t.Fatal(acptapBuild)
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ACPTAP_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	tmp := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(tmp, "data"))
}

// acptap runs the binary and returns stdout, stderr and the exit code.
func acptap(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(acptapBin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &ee):
		return out.String(), errOut.String(), ee.ExitCode()
	}
	t.Fatalf("acptap %v: %v", args, err)
	return "", "", 0
}

// mustRebuild runs `acptap rebuild ARGS…` and fails unless it exits 0.
func mustRebuild(t testing.TB, args ...string) (string, string) {
	t.Helper()
	out, errOut, code := acptap(t, append([]string{"rebuild"}, args...)...)
	if code != 0 {
		t.Fatalf("acptap rebuild %v exited %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
	}
	return out, errOut
}

// live is a store recorded through `acptap record`, with its wire logs in
// connection order and its outputs as the live runs left them.
type live struct {
	root    string
	wires   []string
	outputs map[string][]byte
}

// once runs record the first time a test asks for it and hands every test
// the same recording; tests only read it (copyTree, copyFiles).
type once struct {
	sync.Once
	lv *live
}

var v2Once, v1Once once

func (o *once) get(t testing.TB, name string, record func(testing.TB, string) *live) *live {
	t.Helper()
	o.Do(func() { o.lv = record(t, filepath.Join(sharedDir, name)) })
	if o.lv == nil {
		t.Fatalf("the %s recording failed (in an earlier test)", name)
	}
	return o.lv
}

func recordV2(t testing.TB) *live { return v2Once.get(t, "v2", recordV2Into) }
func recordV1(t testing.TB) *live { return v1Once.get(t, "v1", recordV1Into) }

// recordV2Into records three connections of one ACP v2 session with the SDK
// peers: a new session; a resume (with history replay) that prompts again
// and forks it (the fork is a second session, prompted once); a resume
// that prompts a third time.
func recordV2Into(t testing.TB, dir string) *live {
	t.Helper()
	sdk := testpeers.NodeSDKDir(t)
	root := filepath.Join(dir, "store")
	agent := []string{acptapBin, "record", "--store", root, "--",
		"node", filepath.Join(sdk, "v2-agent.mjs"), "--state", filepath.Join(dir, "state.json")}
	for _, args := range [][]string{
		{"--no-close"},
		{"--resume-session", v2Parent, "--prompt", "everything: once more", "--fork", "--fork-prompt", "basic: in the fork", "--no-close"},
		{"--resume-session", v2Parent, "--prompt", "basic: a third time"},
	} {
		testpeers.RunSDKClient(t, "v2-client.mjs", append(args, "--no-mcp"), agent).RequireOK(t)
	}
	return snapshot(t, root)
}

const (
	v2Parent = "sdk-v2-session-1"
	v2Fork   = "sdk-v2-session-2"
	v1Sess   = "sdk-v1-session-1"
)

// recordV1Into records two connections of one ACP v1 session: a new session,
// then a later connection that loads it (session/load, the agent replays
// its history) and prompts again.
func recordV1Into(t testing.TB, dir string) *live {
	t.Helper()
	sdk := testpeers.NodeSDKDir(t)
	root := filepath.Join(dir, "store")
	agent := []string{acptapBin, "record", "--store", root, "--",
		"node", filepath.Join(sdk, "v1-agent.mjs"), "--state", filepath.Join(dir, "state.json")}
	for _, args := range [][]string{
		{"--no-close"},
		{"--load-session", v1Sess, "--prompt", "basic: after the load"},
	} {
		testpeers.RunSDKClient(t, "v1-client.mjs", args, agent).RequireOK(t)
	}
	return snapshot(t, root)
}

func snapshot(t testing.TB, root string) *live {
	t.Helper()
	wires, err := filepath.Glob(filepath.Join(root, "wire", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(wires) // connection ids begin with their start time
	return &live{root: root, wires: wires, outputs: outputs(t, root)}
}

// outputs reads every output file of a store: sessions/** (streams, the
// connection counts, id files) and aep/**, without backups.
func outputs(t testing.TB, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, sub := range []string{"sessions", "aep"} {
		dir := filepath.Join(root, sub)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return nil
			}
			if err != nil || d.IsDir() || strings.Contains(d.Name(), ".prev-") || strings.Contains(d.Name(), ".torn-") {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[rel], err = os.ReadFile(p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// backups lists the .prev- files under a store's sessions and aep.
func backups(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, sub := range []string{"sessions", "aep"} {
		filepath.WalkDir(filepath.Join(root, sub), func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".prev-") {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// sameOutputs fails unless got holds exactly want's files, byte for byte.
func sameOutputs(t *testing.T, what string, want, got map[string][]byte) {
	t.Helper()
	for name, b := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: %s missing", what, name)
			continue
		}
		if !bytes.Equal(b, g) {
			t.Errorf("%s: %s differs%s", what, name, firstDiff(b, g))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s was not written live", what, name)
		}
	}
}

func firstDiff(a, b []byte) string {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y []byte
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if !bytes.Equal(x, y) {
			return fmt.Sprintf(" at line %d (%d vs %d lines):\n  live:    %.400s\n  rebuilt: %.400s", i+1, len(al), len(bl), x, y)
		}
	}
	return ""
}

// copyTree copies a directory (a store) to a new one.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// copyFiles copies files into a new directory outside any store, keeping
// their names.
func copyFiles(t *testing.T, files []string) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// stripSessions writes a copy of each wire log without its session
// entries (as an older acptap wrote them), seqs renumbered densely, and
// returns the copies and, per copy, the old seq → new seq map.
func stripSessions(t *testing.T, files []string) ([]string, []map[uint64]uint64) {
	t.Helper()
	dir := t.TempDir()
	var out []string
	var maps []map[uint64]uint64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		var buf bytes.Buffer
		buf.Write(lines[0])
		m := map[uint64]uint64{}
		var next uint64
		for _, l := range lines[1:] {
			if len(l) == 0 {
				continue
			}
			var e map[string]any
			if err := json.Unmarshal(l, &e); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if e["type"] == "session" {
				continue
			}
			next++
			m[uint64(e["seq"].(float64))] = next
			e["seq"] = next
			buf.Write(reencode(t, l, e))
		}
		p := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
		maps = append(maps, m)
	}
	return out, maps
}

// reencode rewrites only the seq of an entry line, keeping every other
// byte (field order, escapes) as it was.
func reencode(t *testing.T, line []byte, e map[string]any) []byte {
	t.Helper()
	i := bytes.Index(line, []byte(`"seq":`))
	if i < 0 {
		t.Fatalf("no seq in %s", line)
	}
	j := i + len(`"seq":`)
	k := j
	for k < len(line) && line[k] >= '0' && line[k] <= '9' {
		k++
	}
	return append(append(append([]byte{}, line[:j]...), fmt.Sprint(e["seq"])...), line[k:]...)
}

func writeFile(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func lineCount(b []byte) int { return bytes.Count(b, []byte("\n")) }
