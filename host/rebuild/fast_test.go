package rebuild

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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
	run := func(fast, fromLog, failCopy bool) string {
		defer func(b, w, o int, e, m, f bool) {
			stagingBuffer, scanWorkers, offlineBatch, copyEarly, mapFromLog, failEarlyCopy = b, w, o, e, m, f
		}(stagingBuffer, scanWorkers, offlineBatch, copyEarly, mapFromLog, failEarlyCopy)
		copyEarly, mapFromLog, failEarlyCopy = fast, fromLog, failCopy
		if fast {
			stagingBuffer, scanWorkers = 300, 3 // small: lines gathered and lines written at once, many flushes
			offlineBatch = 3                    // small too: many batches (the configured ones are 256)
		} else {
			stagingBuffer, scanWorkers, offlineBatch = 0, 1, 0
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
	slow := run(false, false, false)
	if earlyUsed.Load() != before {
		t.Fatal("the slow run used an early copy")
	}
	a := storeFiles(t, slow)
	if len(a) == 0 {
		t.Fatal("no files")
	}
	for _, m := range []struct {
		name              string
		fromLog, failCopy bool
	}{{"the early copy mapped", false, false}, {"mapped from the log while it is copied", true, false}, {"mapped from the log, the early copy failed", true, true}} {
		before := earlyUsed.Load()
		fast := run(true, m.fromLog, m.failCopy)
		if used := earlyUsed.Load() != before; used == m.failCopy {
			t.Errorf("%s: early copy used %v", m.name, used)
		}
		sameStore(t, m.name, a, storeFiles(t, fast))
		if left, _ := filepath.Glob(filepath.Join(fast, "tmp", "import-*")); len(left) > 0 {
			t.Errorf("%s: copies left: %v", m.name, left)
		}
		if links, _ := filepath.Glob(filepath.Join(fast, "wire", "*")); len(links) == 0 {
			t.Errorf("%s: no wire logs", m.name)
		} else {
			for _, l := range links {
				if fi, err := os.Lstat(l); err != nil || !fi.Mode().IsRegular() {
					t.Errorf("%s: %s is not a regular file", m.name, l)
				}
			}
		}
	}
	if w := a[filepath.Join("wire", "c-4.jsonl")]; len(w) == 0 || bytes.Contains(w, []byte("s3cret")) {
		t.Errorf("the import was not scrubbed:\n%s", w)
	}
}

// sameStore fails unless the stores' files (storeFiles) are the same.
func sameStore(t *testing.T, name string, a, b map[string][]byte) {
	t.Helper()
	for f, want := range a {
		if got, ok := b[f]; !ok {
			t.Errorf("%s: %s missing from the fast store", name, f)
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s: %s differs:\nslow %s\nfast %s", name, f, want, got)
		}
	}
	for f := range b {
		if _, ok := a[f]; !ok {
			t.Errorf("%s: %s only in the fast store", name, f)
		}
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

// TestMapFromLogChanged: a log from outside the store mapped from the file
// itself (mapFromLog) that changes before its copy is put in place fails
// the rebuild, and the store is left as it was: no wire log, no session.
func TestMapFromLogChanged(t *testing.T) {
	defer func(m bool, h func()) { mapFromLog, afterMapping = m, h }(mapFromLog, afterMapping)
	mapFromLog = true
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	src := writeConn(t, t.TempDir(), "c-3", t0, false)
	afterMapping = func() {
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(src, later, later); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	st, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Run(context.Background(), options(st, "", &out, nil), Request{Files: []string{src}}); err == nil ||
		!strings.Contains(err.Error(), "changed while it was rebuilt") {
		t.Fatalf("err %v, want the log changed\n%s", err, out.String())
	}
	if files := storeFiles(t, root); len(files) > 0 {
		t.Errorf("the store changed: %v", files)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "tmp", "*")); len(left) > 1 { // the lock
		t.Errorf("left in tmp: %v", left)
	}
}

// TestCopyUntil: the early copy copies a file of several chunks whole, and
// gives up at the next chunk once stopped (a discarded copy).
func TestCopyUntil(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := bytes.Repeat([]byte("0123456789abcdef"), (2*copyChunk+12345)/16)
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "whole"))
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	if n, err := copyUntil(out, src, &stop); err != nil || n != int64(len(data)) {
		t.Fatalf("copied %d of %d: %v", n, len(data), err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "whole")); !bytes.Equal(got, data) {
		t.Fatal("the copy differs")
	}
	out, err = os.Create(filepath.Join(dir, "stopped"))
	if err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	if n, err := copyUntil(out, src, &stop); !errors.Is(err, errCopyStopped) || n != 0 {
		t.Fatalf("stopped copy: %d bytes, %v", n, err)
	}
}
