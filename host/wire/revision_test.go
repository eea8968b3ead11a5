package wire

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

// TestRevisionEntryHasNoSeq: a revision entry between frames changes no
// frame's seq; the reader passes over it and returns it from Revision, and
// ParseEntry decodes it.
func TestRevisionEntryHasNoSeq(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	w, err := Create(path, Header{Connection: "c", StartedAt: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 2, 1, 2, 3, 0, time.UTC)
	if _, err := w.Append(Entry{Type: TypeFrame, Dir: sdk.C2A, At: at, Line: []byte(`{"a":1}`)}); err != nil {
		t.Fatal(err)
	}
	want := Revision{At: at, Revision: "acp/2@2.0.0-alpha.13", Reason: "initialize response: capabilities.session.title", Plugins: []string{"acpv2a13", "aep"}, SelectedBy: "claims"}
	if err := w.AppendRevision(want); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(Entry{Type: TypeFrame, Dir: sdk.A2C, At: at, Line: []byte(`{"revision":"x"}`)}); err != nil {
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
	var seqs []uint64
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	if len(seqs) != 2 || seqs[0] != 1 || seqs[1] != 2 {
		t.Errorf("frame seqs %v, want [1 2]", seqs)
	}
	got, ok := r.Revision()
	if !ok || got.Revision != want.Revision || got.Reason != want.Reason || !got.At.Equal(at) || len(got.Plugins) != 2 || got.SelectedBy != "claims" {
		t.Errorf("Revision() = %+v, %v", got, ok)
	}
	e, err := ParseEntry([]byte(`{"type":"revision","revision":"acp/1","reason":"r","plugins":[],"selectedBy":"revisions"}`))
	if err != nil || e.Type != TypeRevision || e.Revision.Revision != "acp/1" {
		t.Errorf("ParseEntry: %+v, %v", e, err)
	}
}
