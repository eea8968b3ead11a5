package rebuild

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/private"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInterruptedSwapIsFinished: a swap cut short after some renames (a
// committed journal in the staging directory) is finished by the next
// rebuild's recovery, and an unfinished staging directory (no journal) is
// removed without touching the store.
func TestInterruptedSwapIsFinished(t *testing.T) {
	root := t.TempDir()
	tmp := filepath.Join(root, "tmp")
	staging := filepath.Join(tmp, stagingPrefix+"1")
	a, b, gone := filepath.Join(root, "sessions", "s", "stream.asr.jsonl"), filepath.Join(root, "aep", "acp", "s.jsonl"), filepath.Join(root, "sessions", "s", "old.asr.jsonl")
	write(t, a, "old a\n")
	write(t, b, "old b\n")
	write(t, gone, "a stream no plugin writes now\n")
	sa, sb := filepath.Join(staging, "sessions", "s", "stream.asr.jsonl"), filepath.Join(staging, "aep", "acp", "s.jsonl")
	write(t, sa, "new a\n")
	write(t, sb, "new b\n")
	j := journal{Suffix: ".prev-7", Moves: []move{{From: sa, To: a}, {From: sb, To: b}, {To: gone}}}
	// The first move was done before the interruption: a is new, its old
	// bytes kept.
	if err := os.Rename(a, a+j.Suffix); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(sa, a); err != nil {
		t.Fatal(err)
	}
	if err := commitJournalOnly(staging, j); err != nil {
		t.Fatal(err)
	}
	unfinished := filepath.Join(tmp, stagingPrefix+"2")
	write(t, filepath.Join(unfinished, "sessions", "s", "stream.asr.jsonl"), "half-made\n")

	done, err := recoverStaging(tmp)
	if err != nil || len(done) != 1 || done[0] != staging {
		t.Fatalf("recover = %v, %v", done, err)
	}
	for path, want := range map[string]string{a: "new a\n", a + ".prev-7": "old a\n", b: "new b\n", b + ".prev-7": "old b\n", gone + ".prev-7": "a stream no plugin writes now\n"} {
		if got := read(t, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	for _, d := range []string{staging, unfinished, gone} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still there", d)
		}
	}
	// Applying the same journal again changes nothing.
	if err := apply(staging, j); err != nil {
		t.Fatal(err)
	}
	if got := read(t, a); got != "new a\n" {
		t.Errorf("a = %q after a second apply", got)
	}
}

// commitJournalOnly writes the journal as commit does, without applying it.
func commitJournalOnly(staging string, j journal) error {
	b := []byte(`{"suffix":"` + j.Suffix + `","moves":[`)
	for i, m := range j.Moves {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"from":"`+m.From+`","to":"`+m.To+`"}`...)
	}
	b = append(b, "]}"...)
	return os.WriteFile(filepath.Join(staging, commitFile), b, 0o600)
}

// TestOrderAndClosure: connections sort by startedAt, then id (file names
// and argument order do not count), and the closure takes every connection
// of every session a chosen connection names.
func TestOrderAndClosure(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, at time.Time, sessions ...string) *Conn {
		return &Conn{Path: "z-" + id, Header: wire.Header{Connection: id, StartedAt: at}, Sessions: sessions}
	}
	c3, c1, c2, conv := mk("c3", t0.Add(2*time.Second), "s1"), mk("c1", t0, "s1"), mk("c2", t0.Add(time.Second), "s1", "fork"), mk("b-converted", time.Time{}, "other")
	same := mk("a-same-time", t0, "fork")
	conns := []*Conn{c3, c1, c2, conv, same}
	order(conns)
	var ids []string
	for _, c := range conns {
		ids = append(ids, c.ID())
	}
	if got := filepath.Join(ids...); got != filepath.Join("b-converted", "a-same-time", "c1", "c2", "c3") {
		t.Errorf("order = %v", ids)
	}
	got := closure(conns, map[string]bool{"fork": true})
	ids = nil
	for _, c := range got {
		ids = append(ids, c.ID())
	}
	if filepath.Join(ids...) != filepath.Join("a-same-time", "c1", "c2", "c3") {
		t.Errorf("closure of fork = %v: want every connection of fork and of s1 (which c2 also names)", ids)
	}
}
