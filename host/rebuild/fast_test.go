package rebuild

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// TestFastPathsSameStore: a rebuild with the staging files written
// buffered and the store's logs scanned several at once leaves the same
// store, byte for byte, as one with each line written at once and one scan
// at a time — for logs in the store, logs imported (one with an MCP server
// the import scrubs), connections continuing a session, and a second
// rebuild over the first one's store; the fast one copies the imported
// logs while it scans them (startCopy), the slow one after.
func TestFastPathsSameStore(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	src := t.TempDir()
	outside := []string{
		writeConn(t, src, "c-3", t0.Add(2*time.Minute), true),
		writeConnMCP(t, src, "c-4", t0.Add(3*time.Minute)),
	}
	run := func(fast bool) string {
		defer func(b, w int, e bool) { stagingBuffer, scanWorkers, copyEarly = b, w, e }(stagingBuffer, scanWorkers, copyEarly)
		copyEarly = fast
		if fast {
			stagingBuffer, scanWorkers = 300, 3 // small: lines gathered and lines written at once, many flushes
		} else {
			stagingBuffer, scanWorkers = 0, 1
		}
		root := t.TempDir()
		st, err := store.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, "wire")
		if fast {
			// A copy an interrupted rebuild left: removed.
			os.MkdirAll(filepath.Join(root, "tmp"), 0o700)
			os.WriteFile(filepath.Join(root, "tmp", earlyCopyPrefix+"left.jsonl"), []byte("x\n"), 0o600)
		}
		writeConn(t, dir, "c-1", t0, false)
		writeConn(t, dir, "c-2", t0.Add(time.Minute), true)
		var out bytes.Buffer
		for i, req := range []Request{{All: true}, {Files: outside}, {Files: outside[:1]}, {All: true}} {
			res, err := Run(context.Background(), options(st, "", &out, nil), req)
			if err != nil || res.Failed {
				t.Fatalf("fast %v, rebuild %d: %v %+v\n%s", fast, i, err, res, out.String())
			}
		}
		return root
	}
	before := earlyUsed.Load()
	slow := run(false)
	if earlyUsed.Load() != before {
		t.Fatal("the slow run used an early copy")
	}
	fast := run(true)
	if earlyUsed.Load() == before {
		t.Error("the fast run used no early copy")
	}
	a, b := storeFiles(t, slow), storeFiles(t, fast)
	if len(a) == 0 {
		t.Fatal("no files")
	}
	for name, want := range a {
		if got, ok := b[name]; !ok {
			t.Errorf("%s: missing from the fast store", name)
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s differs:\nslow %s\nfast %s", name, want, got)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			t.Errorf("%s: only in the fast store", name)
		}
	}
	if w := a[filepath.Join("wire", "c-4.jsonl")]; len(w) == 0 || bytes.Contains(w, []byte("s3cret")) {
		t.Errorf("the import was not scrubbed:\n%s", w)
	}
	if left, _ := filepath.Glob(filepath.Join(fast, "tmp", "import-*")); len(left) > 0 {
		t.Errorf("copies left: %v", left)
	}
}

// storeFiles is every file of a store but its logs and lock, with the
// backups' time suffixes dropped.
func storeFiles(t *testing.T, root string) map[string][]byte {
	files := map[string][]byte{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if strings.HasPrefix(rel, "logs"+string(filepath.Separator)) || strings.HasPrefix(rel, "tmp"+string(filepath.Separator)) {
			return nil
		}
		if i := strings.Index(rel, ".prev-"); i >= 0 {
			rel = rel[:i] + ".prev"
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[rel] = append(files[rel], b...)
		return nil
	})
	return files
}

// writeConnMCP writes a hand-made wire log of a new session s2 whose
// session/new names an MCP server with a secret, unscrubbed (as the
// recorder would never write it: an import scrubs it).
func writeConnMCP(t *testing.T, dir, conn string, at time.Time) string {
	t.Helper()
	path := filepath.Join(dir, conn+".jsonl")
	w, err := wire.Create(path, wire.Header{Connection: conn, StartedAt: at, Agent: wire.Agent{Command: []string{"agent"}}})
	if err != nil {
		t.Fatal(err)
	}
	open := `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[{"name":"x","command":"x","args":[],"env":[{"name":"TOKEN","value":"s3cret"}]}]}}`
	for i, l := range []struct {
		dir  sdk.Direction
		line string
	}{
		{sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`},
		{sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`},
		{sdk.A2C, open}, // turned into c2a below, unscrubbed
		{sdk.A2C, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s2"}}`},
		{sdk.A2C, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","messageId":"m-` + conn + `","content":{"type":"text","text":"hello"}}}}`},
	} {
		if _, err := w.Append(wire.Entry{Type: wire.TypeFrame, At: at.Add(time.Duration(i) * time.Millisecond), Dir: l.dir, Line: []byte(l.line)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines[3] = bytes.Replace(lines[3], []byte(`"dir":"a2c"`), []byte(`"dir":"c2a"`), 1)
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
