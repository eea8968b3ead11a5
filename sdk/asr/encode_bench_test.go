package asr

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchFileChange is a file_change as acpv1 writes one for a v1 diff: two
// changes, the diff's texts in their _meta as the frame had them, a patch.
func benchFileChange() *FileChange {
	root := "root0"
	text := strings.Repeat("func f() {\n\treturn \"x\"\n}\n", 20)
	meta := map[string]json.RawMessage{"org.acptap/newText": mustJSON(text + "// new\n"), "org.acptap/oldText": mustJSON(text)}
	ch := Change{Op: "modify", Path: &PathRef{Root: &root, Path: "src/main.go"}, FileType: "file", Meta: meta}
	return &FileChange{
		Envelope:   Envelope{Type: TypeFileChange, Seq: 12, ID: "r12", TS: "2026-10-26T14:30:41.207Z", TSSource: TSSourceRecorder, Status: "completed"},
		Cause:      &Cause{CallID: "call_1"},
		Changes:    []Change{ch, ch},
		Patch:      &Patch{Format: "unified", Text: text},
		Provenance: Provenance{Native: &Native{Ref: &NativeRef{Wire: "wire.jsonl", Frames: []uint64{4, 5, 9}}}},
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkEncodeRecord is a record's fingerprint (FingerprintOf), then
// its line (Marshal): the two encodes Prepare makes one.
func BenchmarkEncodeRecord(b *testing.B) {
	rec := benchFileChange()
	line, _ := Marshal(rec)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FingerprintOf(rec); err != nil {
			b.Fatal(err)
		}
		if _, err := Marshal(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeRecordPrepared is BenchmarkEncodeRecord by Prepare: the
// record encoded once for both.
func BenchmarkEncodeRecordPrepared(b *testing.B) {
	rec := benchFileChange()
	line, _ := Marshal(rec)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := Prepare(rec)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Line(); err != nil {
			b.Fatal(err)
		}
	}
}
