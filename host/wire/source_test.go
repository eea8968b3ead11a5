package wire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/google/go-cmp/cmp"
)

// TestHeaderSourceRoundTrip: a converted wire log's header names its source;
// the field is written after agent, read back as written, and absent from
// recorded logs (whose header line is unchanged).
func TestHeaderSourceRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := &Source{Mode: SourceModeConvert, From: "acp-v1-log", Format: "trace", Path: "/logs/day1.jsonl.gz",
		SHA256: strings.Repeat("ab", 32), Gzip: true}
	hdr := Header{Connection: "v1-abababababab", Source: src}
	path := filepath.Join(dir, "v1.jsonl")
	w, err := Create(path, hdr)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(0, int64(3*time.Millisecond)).UTC()
	if _, err := w.Append(Entry{Type: TypeFrame, At: at, Dir: sdk.A2C, Line: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, entries, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	hdr.Agent.Command = []string{}
	if diff := cmp.Diff(hdr, got); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if len(entries) != 1 || !entries[0].At.Equal(at) {
		t.Errorf("entries %+v", entries)
	}
	raw, _ := os.ReadFile(path)
	first, _, _ := strings.Cut(string(raw), "\n")
	want := `{"type":"header","format":"acptap-wire","version":1,"connection":"v1-abababababab","agent":{"command":[]},` +
		`"source":{"mode":"convert","from":"acp-v1-log","format":"trace","path":"/logs/day1.jsonl.gz","sha256":"` + strings.Repeat("ab", 32) + `","gzip":true}}`
	if first != want {
		t.Errorf("header line\n got %s\nwant %s", first, want)
	}
	if h, err := ParseHeader([]byte(first)); err != nil || h.Source == nil || *h.Source != *src {
		t.Errorf("ParseHeader: %+v, %v", h, err)
	}

	// A recorded log has no source.
	path = filepath.Join(dir, "c.jsonl")
	w, err = Create(path, Header{Connection: "c"})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	raw, _ = os.ReadFile(path)
	if strings.Contains(string(raw), "source") {
		t.Errorf("recorded header mentions a source: %s", raw)
	}
	if got, _, _ := readAll(t, path); got.Source != nil {
		t.Errorf("Source = %+v, want nil", got.Source)
	}
}

// TestParseEntryIgnoresPlace: ParseEntry decodes an entry wherever it sits.
func TestParseEntryIgnoresPlace(t *testing.T) {
	e, err := ParseEntry([]byte(`{"type":"frame","seq":7,"at":"2026-10-26T14:30:41Z","dir":"c2a","line":"x","nolf":true}`))
	if err != nil || e.Seq != 7 || e.Dir != sdk.C2A || string(e.Line) != "x" || !e.NoLF {
		t.Errorf("ParseEntry: %+v, %v", e, err)
	}
	if _, err := ParseEntry([]byte(`{"type":"frame","seq":1,"dir":"sideways","line":"x"}`)); err == nil {
		t.Error("bad dir accepted")
	}
}
