package wire

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

func TestSessionEntryRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.jsonl")
	w, err := Create(path, Header{Connection: "c-1"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 10, 26, 14, 30, 41, 207_000_001, time.UTC)
	want := Session{ID: "sess \"1\"/é", Connections: 2, PriorLines: 17}
	if _, err := w.Append(Entry{Type: TypeSession, At: at, Dir: sdk.A2C, Session: want}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if e.Type != TypeSession || e.Session != want || !e.At.Equal(at) || e.Dir != sdk.A2C || e.Seq != 1 {
		t.Fatalf("got %+v, want session %+v at %v", e, want, at)
	}
}
