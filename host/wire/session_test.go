package wire

import (
	"os"
	"path/filepath"
	"strings"
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
	// Plugin streams beside the primary: their line counts, keys sorted.
	want2 := Session{ID: "s2", Connections: 1, PriorLines: 3, PluginLines: map[string]int{"zeta": 2, "acme": 5}, AEPLines: 9}
	if _, err := w.Append(Entry{Type: TypeSession, At: at, Dir: sdk.A2C, Session: want2}); err != nil {
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
	if e.Type != TypeSession || !e.Session.Equal(want) || !e.At.Equal(at) || e.Dir != sdk.A2C || e.Seq != 1 {
		t.Fatalf("got %+v, want session %+v at %v", e, want, at)
	}
	e, err = r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !e.Session.Equal(want2) || e.Seq != 2 {
		t.Fatalf("got %+v, want session %+v", e, want2)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"priorLines":3,"pluginLines":{"acme":5,"zeta":2},"aepLines":9}`) {
		t.Errorf("session entry with plugin streams:\n%s", b)
	}
}
