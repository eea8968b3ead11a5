package store

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acptap/acptap/host/wire"
	"github.com/google/go-cmp/cmp"
)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestDefaultRoot(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/acptap"},
		{map[string]string{"XDG_DATA_HOME": "rel", "HOME": "/home/u"}, "/home/u/.local/share/acptap"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/acptap"},
	}
	for _, c := range cases {
		if got, err := DefaultRoot(env(c.env)); err != nil || got != c.want {
			t.Errorf("DefaultRoot(%v) = %q, %v; want %q", c.env, got, err, c.want)
		}
	}
	if _, err := DefaultRoot(env(nil)); err == nil {
		t.Error("DefaultRoot with no HOME: no error")
	}
}

func TestLayoutAndPermissions(t *testing.T) {
	old := setUmask(0o277) // would make 0500 dirs and 0400 files without the chmods
	defer setUmask(old)
	s, err := Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	sw, _, err := s.OpenStream("../sess/1")
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	aw, _, err := s.OpenAEP("../sess/1")
	if err != nil {
		t.Fatal(err)
	}
	defer aw.Close()
	ww, err := s.CreateWire("c-1", wire.Header{})
	if err != nil {
		t.Fatal(err)
	}
	ww.Close()
	if _, err := s.NextConnection("../sess/1"); err != nil {
		t.Fatal(err)
	}
	r := s.Root()
	want := map[string]os.FileMode{
		r:                            0o700,
		filepath.Join(r, "sessions"): 0o700,
		filepath.Join(r, "sessions", "%2E.%2Fsess%2F1"):                  0o700,
		filepath.Join(r, "sessions", "%2E.%2Fsess%2F1", StreamFile):      0o600,
		filepath.Join(r, "sessions", "%2E.%2Fsess%2F1", connectionsFile): 0o600,
		filepath.Join(r, "wire"):                                         0o700,
		filepath.Join(r, "wire", "c-1.jsonl"):                            0o600,
		filepath.Join(r, "aep", "acp"):                                   0o700,
		filepath.Join(r, "aep", "acp", "%2E.%2Fsess%2F1.jsonl"):          0o600,
	}
	for p, m := range want {
		if got := mode(t, p); got != m {
			t.Errorf("%s: mode %o, want %o", p, got, m)
		}
	}
	if got := s.LogPath(); got != filepath.Join(r, "logs", "acptap.log") {
		t.Errorf("LogPath = %s", got)
	}
}

func TestOpenStreamRepairsTornTail(t *testing.T) {
	s, _ := Open(t.TempDir())
	sw, rep, err := s.OpenStream("s1")
	if err != nil || rep != nil {
		t.Fatalf("first open: %v, repair %v", err, rep)
	}
	for _, l := range []string{`{"type":"header"}`, `{"type":"message","seq":1}`} {
		if err := sw.WriteLine([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	sw.Close()
	f, _ := os.OpenFile(s.StreamPath("s1"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"mess`)
	f.Close()

	sw, rep, err = s.OpenStream("s1")
	if err != nil {
		t.Fatal(err)
	}
	if rep == nil || rep.Bytes != 13 || rep.Path != s.StreamPath("s1") ||
		!strings.HasPrefix(rep.Backup, s.StreamPath("s1")+".torn-") {
		t.Fatalf("repair = %+v", rep)
	}
	if b, _ := os.ReadFile(rep.Backup); string(b) != `{"type":"mess` {
		t.Errorf("backup holds %q", b)
	}
	if m := mode(t, rep.Backup); m != 0o600 {
		t.Errorf("backup mode %o", m)
	}
	if sw.Lines() != 2 {
		t.Errorf("Lines() = %d after repair, want 2", sw.Lines())
	}
	sw.WriteLine([]byte(`{"type":"message","seq":2}`))
	sw.Close()
	got, err := s.ExistingRecords("s1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"type":"header"}`, `{"type":"message","seq":1}`, `{"type":"message","seq":2}`}
	if diff := cmp.Diff(want, strs(got)); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestOpenAEPRepairsFileWithoutAnyLF(t *testing.T) {
	s, _ := Open(t.TempDir())
	os.MkdirAll(filepath.Dir(s.AEPPath("x")), 0o700)
	os.WriteFile(s.AEPPath("x"), []byte("partial"), 0o600)
	w, rep, err := s.OpenAEP("x")
	if err != nil || rep == nil || rep.Bytes != 7 {
		t.Fatalf("OpenAEP: %v, repair %+v", err, rep)
	}
	defer w.Close()
	if fi, _ := os.Stat(s.AEPPath("x")); fi.Size() != 0 {
		t.Errorf("size after repair %d", fi.Size())
	}
}

func strs(b [][]byte) []string {
	var out []string
	for _, l := range b {
		out = append(out, string(l))
	}
	return out
}

func TestWriteLineRules(t *testing.T) {
	s, _ := Open(t.TempDir())
	w, _, _ := s.OpenStream("s")
	for _, bad := range []string{"", "a\nb", "tail\n"} {
		if err := w.WriteLine([]byte(bad)); err == nil {
			t.Errorf("WriteLine(%q): no error", bad)
		}
	}
	w.Close()
	if err := w.WriteLine([]byte("x")); err == nil {
		t.Error("WriteLine after Close: no error")
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestExistingRecords(t *testing.T) {
	s, _ := Open(t.TempDir())
	if got, err := s.ExistingRecords("none"); got != nil || err != nil {
		t.Errorf("missing stream: %v, %v", got, err)
	}
	long := bytes.Repeat([]byte("x"), 300<<10) // longer than the read buffer
	w, _, _ := s.OpenStream("s")
	w.WriteLine([]byte("h"))
	w.WriteLine(long)
	w.Close()
	f, _ := os.OpenFile(s.StreamPath("s"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("torn")
	f.Close()
	got, err := s.ExistingRecords("s")
	if err != nil || len(got) != 2 || string(got[0]) != "h" || !bytes.Equal(got[1], long) {
		t.Errorf("got %d lines, err %v", len(got), err)
	}
}

func TestNextConnection(t *testing.T) {
	s, _ := Open(t.TempDir())
	for want := range 3 {
		if n, err := s.NextConnection("s"); err != nil || n != want {
			t.Fatalf("NextConnection = %d, %v; want %d", n, err, want)
		}
	}
	var wg sync.WaitGroup
	seen := make(chan int, 20)
	for range 20 {
		wg.Go(func() {
			n, err := s.NextConnection("s")
			if err != nil {
				t.Error(err)
			}
			seen <- n
		})
	}
	wg.Wait()
	close(seen)
	got := map[int]bool{}
	for n := range seen {
		got[n] = true
	}
	if len(got) != 20 {
		t.Errorf("concurrent calls returned %d distinct counts, want 20", len(got))
	}
	entries, _ := os.ReadDir(s.SessionDir("s"))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	os.MkdirAll(s.SessionDir("bad"), 0o700)
	os.WriteFile(filepath.Join(s.SessionDir("bad"), connectionsFile), []byte("many"), 0o600)
	if _, err := s.NextConnection("bad"); err == nil {
		t.Error("corrupt count: no error")
	}
}

func TestSessions(t *testing.T) {
	s, _ := Open(t.TempDir())
	if ids, err := s.Sessions(); ids != nil || err != nil {
		t.Errorf("empty store: %v, %v", ids, err)
	}
	long := strings.Repeat("L", 400)
	ids := []string{"a/b", "", "sess-1", long, "ü"}
	for _, id := range ids {
		w, _, err := s.OpenStream(id)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	os.MkdirAll(filepath.Join(s.Root(), "sessions", "not canonical"), 0o700)
	got, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", long, "a/b", "sess-1", "ü"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sessions (-want +got):\n%s", diff)
	}
	if name := filepath.Base(s.SessionDir(long)); len(name) > MaxNameLen {
		t.Errorf("session dir name is %d bytes", len(name))
	}
}

func ExampleEscapeID() {
	fmt.Println(EscapeID("../a b"), EscapeID(""), EscapeID("sess_1.2"))
	// Output: %2E.%2Fa%20b % sess_1.2
}

func TestOpenPluginStream(t *testing.T) {
	s, _ := Open(t.TempDir())
	w, rep, err := s.OpenPluginStream("s/1", "vendor")
	if err != nil || rep != nil {
		t.Fatalf("OpenPluginStream: %v, %v", err, rep)
	}
	w.WriteLine([]byte("{}"))
	w.Close()
	want := filepath.Join(s.Root(), "sessions", "s%2F1", "vendor.asr.jsonl")
	if got := s.PluginStreamPath("s/1", "vendor"); got != want || mode(t, want) != 0o600 {
		t.Errorf("PluginStreamPath = %s (mode %o), want %s", got, mode(t, want), want)
	}
	if _, _, err := s.OpenPluginStream("s/1", "stream"); err == nil {
		t.Error(`plugin "stream": no error`)
	}
}

// TestPluginStreams: the other plugins' own streams of a session and their
// committed lines (a torn tail is not a line); the primary stream, empty
// files and names that are not escaped plugin names are left out.
func TestPluginStreams(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.PluginStreams("none"); err != nil || got != nil {
		t.Fatalf("unknown session: %v, %v", got, err)
	}
	w, _, err := s.OpenStream("s/1")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	dir := s.SessionDir("s/1")
	os.WriteFile(s.StreamPath("s/1"), []byte("{}\n{}\n"), 0o600)
	os.WriteFile(s.PluginStreamPath("s/1", "acme"), []byte("{\"h\":1}\n{\"r\":1}\n{\"torn"), 0o600)
	os.WriteFile(s.PluginStreamPath("s/1", "vendor x"), []byte("{}\n"), 0o600)
	os.WriteFile(s.PluginStreamPath("s/1", "empty"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "%zz.asr.jsonl"), []byte("{}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("{}\n"), 0o600)
	got, err := s.PluginStreams("s/1")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"acme": 2, "vendor x": 1}; !maps.Equal(got, want) {
		t.Errorf("PluginStreams = %v, want %v", got, want)
	}
	lines, err := s.ExistingPluginRecords("s/1", "acme")
	if err != nil || len(lines) != 2 || string(lines[1]) != `{"r":1}` {
		t.Errorf("ExistingPluginRecords = %q, %v", lines, err)
	}
}
