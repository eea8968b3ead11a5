package asr

import (
	"encoding/json"
	"testing"
	"time"
)

func TestMarshalOrderAndEscaping(t *testing.T) {
	m := &Message{
		Envelope:  Envelope{Type: TypeMessage, Seq: 2, ID: RecordID(2), TS: FormatTime(time.Date(2026, 10, 26, 14, 30, 41, 207_900_000, time.FixedZone("x", 3600))), TSSource: TSSourceRecorder},
		MessageID: "m1",
		Role:      "user",
		Content:   []json.RawMessage{json.RawMessage(`{"type":"text", "text":"a<b>&c"}`)},
		Provenance: Provenance{
			Native: &Native{Ref: &NativeRef{Wire: "w.jsonl", Frames: []uint64{1, 2}}},
			Meta:   map[string]json.RawMessage{"z": json.RawMessage(`1`), "a": json.RawMessage(`2`)},
		},
	}
	got, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"message","seq":2,"id":"r2","ts":"2026-10-26T13:30:41.207Z","tsSource":"recorder","messageId":"m1","role":"user","content":[{"type":"text","text":"a<b>&c"}],"native":{"ref":{"wire":"w.jsonl","frames":[1,2]}},"_meta":{"a":2,"z":1}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var r Record = m
	if r.Env().Seq != 2 || r.Prov().Native == nil {
		t.Error("Record accessors do not reach the embedded fields")
	}
}

func TestUsageIncludesChildrenNull(t *testing.T) {
	got, err := Marshal(&UsageSummary{Envelope: Envelope{Type: TypeUsageSummary, Seq: 1, ID: "r1"}, Scope: "session", Cumulative: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"usage_summary","seq":1,"id":"r1","scope":"session","cumulative":true,"includesChildren":null}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
