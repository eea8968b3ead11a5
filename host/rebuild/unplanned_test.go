package rebuild

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/host/store"
)

// TestUnplannedSameStore: a single log imported from outside the store is
// mapped before it is planned (mapUnplanned), and the store it leaves is
// byte for byte the one of a rebuild that planned it first, with the same
// report — when that mapping is kept (a store with no other connection of
// its session), and when it is not: the store holds earlier connections of
// its session (the plan is larger), a line of it would change in the
// import (a secret to scrub), it has lines that cannot be read, or it
// names no session. Nothing is left in tmp.
func TestUnplannedSameStore(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	src := t.TempDir()
	resumed := writeConn(t, src, "c-3", t0.Add(2*time.Minute), true)
	mcp := writeConnMCP(t, src, "c-4", t0.Add(3*time.Minute))
	bad := filepath.Join(src, "c-5.jsonl")
	b, err := os.ReadFile(writeConn(t, t.TempDir(), "c-5", t0.Add(4*time.Minute), false))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bad, append(append(b, "{not an entry\n"...), `{"seq":99,"dir`...), 0o600)
	none := filepath.Join(src, "c-6.jsonl")
	lines := strings.SplitAfter(string(b), "\n")
	os.WriteFile(none, []byte(strings.ReplaceAll(lines[0], "c-5", "c-6")+lines[1]+lines[2]), 0o600) // the header and initialize

	for _, tc := range []struct {
		name  string
		file  string
		store bool // the store holds c-1, c-2 (the same session) first
		kept  bool
	}{
		{"a new store", resumed, false, true},
		{"a store with the session's earlier connections", resumed, true, false},
		{"a secret to scrub", mcp, false, false},
		{"unreadable lines", bad, false, false},
		{"no session", none, false, false},
	} {
		run := func(on bool) (string, string) {
			defer func(v bool) { mapUnplannedOn = v }(mapUnplannedOn)
			mapUnplannedOn = on
			root := t.TempDir()
			st, err := store.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			if tc.store {
				writeConn(t, filepath.Join(root, "wire"), "c-1", t0, false)
				writeConn(t, filepath.Join(root, "wire"), "c-2", t0.Add(time.Minute), true)
			}
			var out bytes.Buffer
			before := unplannedUsed.Load()
			if _, err := Run(context.Background(), options(st, "", &out, nil), Request{Files: []string{tc.file}}); err != nil {
				t.Fatalf("%s (unplanned %v): %v\n%s", tc.name, on, err, out.String())
			}
			if kept := unplannedUsed.Load() != before; kept != (on && tc.kept) {
				t.Errorf("%s (unplanned %v): the mapping before the plan kept: %v", tc.name, on, kept)
			}
			if left, _ := filepath.Glob(filepath.Join(root, "tmp", "*")); len(left) > 1 { // the lock file
				t.Errorf("%s (unplanned %v): left in tmp: %v", tc.name, on, left)
			}
			var report []string
			for _, l := range strings.SplitAfter(out.String(), "\n") {
				if !strings.HasPrefix(l, "rebuilt ") { // the summary's time
					report = append(report, strings.ReplaceAll(l, root, "<store>"))
				}
			}
			return root, strings.Join(report, "")
		}
		planned, plannedOut := run(false)
		unpl, unplOut := run(true)
		sameStore(t, tc.name, storeFiles(t, planned), storeFiles(t, unpl))
		if plannedOut != unplOut {
			t.Errorf("%s: report\n%s\nwant (planned first)\n%s", tc.name, unplOut, plannedOut)
		}
		if n := len(storeFiles(t, planned)); (n == 0) != (tc.file == none) {
			t.Errorf("%s: %d files", tc.name, n)
		}
	}
}

// TestImportChangesAsImport (ASR-712): importChanges, the unplanned
// mapping's check, says a line would change exactly when importing the log
// line by line (importWireChanged, the recorder's scrubbing of
// client-to-agent frames) changes one: no mcpServers, an empty list, a
// secret, the name only in the header or in an agent's frame, an
// unreadable line naming it, a secret at the end of a line longer than the
// check's buffer, a torn tail holding a secret, and a secret after the
// name's tail ("Servers", which the check looks for) on its own.
func TestImportChangesAsImport(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	src := t.TempDir()
	plain, err := os.ReadFile(writeConn(t, t.TempDir(), "c-1", t0, false)) // names mcpServers: []
	if err != nil {
		t.Fatal(err)
	}
	secret, err := os.ReadFile(writeConnMCP(t, t.TempDir(), "c-2", t0))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(plain), "\n")
	secretLine := ""
	for _, l := range strings.SplitAfter(string(secret), "\n") {
		if strings.Contains(l, "s3cret") {
			secretLine = l
		}
	}
	if secretLine == "" {
		t.Fatal("no secret line")
	}
	long := strings.Replace(secretLine, `"cwd":"/tmp"`, `"cwd":"/`+strings.Repeat("x", 5<<20)+`"`, 1)
	agentLine := strings.Replace(lines[len(lines)-2], `"stopReason":"end_turn"`, `"stopReason":"end_turn","mcpServers":[{"env":[{"name":"T","value":"v"}]}]`, 1)
	header := strings.Replace(lines[0], `"agent"`, `"agent","--mcpServers"`, 1)
	for _, tc := range []struct {
		name, text string
		changes    bool
	}{
		{"an empty list", string(plain), false},
		{"a secret", string(secret), true},
		{"the name in the header", header + strings.Join(lines[1:], ""), false},
		{"the name in an agent's frame", strings.Join(lines[:len(lines)-2], "") + agentLine, false},
		{"an unreadable line naming it", string(plain) + "{\"mcpServers\": oops\n", true},
		{"a secret at the end of a long line", string(plain) + long, true},
		{"a torn tail with a secret", string(plain) + strings.TrimSuffix(secretLine, "\n"), true},
		{"a secret after the name's tail alone", string(plain) + strings.Replace(secretLine, `/tmp`, `/tmp/Servers`, 1), true},
	} {
		path := filepath.Join(src, strings.ReplaceAll(tc.name, " ", "-")+".jsonl")
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		imported, err := importWireChanged(path, filepath.Join(t.TempDir(), "copy.jsonl"))
		if err != nil {
			t.Fatalf("%s: import: %v", tc.name, err)
		}
		if imported != tc.changes {
			t.Fatalf("%s: the import changed a line: %v (the case is not what it says)", tc.name, imported)
		}
		if got := importChanges(path); got != imported {
			t.Errorf("%s: importChanges %v, the import changed a line: %v", tc.name, got, imported)
		}
	}
}
