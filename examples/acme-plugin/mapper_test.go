package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
)

var base = time.Date(2026, 10, 26, 14, 30, 41, 207_000_000, time.UTC)

var start = sdk.StartRequest{Connection: "c-test", WireLog: "c-test.jsonl", Input: "acp/2@2.0.0-alpha.9", Mode: sdk.ModeRecord}

func progress(session, body string) mappertest.Line {
	return mappertest.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + session +
		`","update":{"sessionUpdate":"_acme/progress",` + body + `}}}`)
}

// sampleSession is a realistic connection: standard ACP traffic with two
// _acme/progress updates in one session and one in another.
func sampleSession() []sdk.Frame {
	return mappertest.Frames(base,
		mappertest.C2A(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}`),
		mappertest.A2C(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"acme-agent","version":"1"}}}`),
		mappertest.C2A(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`),
		mappertest.A2C(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`),
		mappertest.C2A(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"index"}]}}`),
		mappertest.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"running"}}}`),
		progress("s1", `"progressId":"p1","percent":40,"message":"indexing"`),
		progress("s2", `"progressId":"q","percent":0.5`),
		progress("s1", `"progressId":"p1","percent":100,"message":"done","_meta":{"acme.dev/eta":0}`),
		mappertest.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}`),
		mappertest.A2C(`{"jsonrpc":"2.0","id":2,"result":{"messageId":"u1"}}`),
	)
}

func TestConformance(t *testing.T) {
	mappertest.Suite{
		New:    New,
		Start:  start,
		Corpus: map[string][]sdk.Frame{"session": sampleSession()},
	}.Run(t)
}

func lines(outs []sdk.Output, kinds ...sdk.OutputKind) map[string][]string {
	got := map[string][]string{}
	for _, o := range outs {
		for _, k := range kinds {
			if o.Kind == k {
				got[o.Session] = append(got[o.Session], string(o.JSON))
			}
		}
	}
	return got
}

func TestProgressRecords(t *testing.T) {
	outs := mappertest.Run(t, mappertest.OverGRPC(t, New()), start, sampleSession(), 2)
	want := map[string][]string{
		"s1": {
			`{"type":"header","asr":"0.1","sessionId":"s1","createdAt":"2026-10-26T14:30:41.213Z","producer":{"method":"recorder","name":"acme","version":"0.1.0","plugin":{"name":"acme","version":"0.1.0"},"lossy":[]}}`,
			`{"type":"_acme/progress","seq":1,"id":"r1","ts":"2026-10-26T14:30:41.213Z","tsSource":"recorder","progressId":"p1","percent":40,"message":"indexing","native":{"ref":{"wire":"c-test.jsonl","frames":[7]}}}`,
			`{"type":"_acme/progress","seq":2,"id":"r2","ts":"2026-10-26T14:30:41.215Z","tsSource":"recorder","progressId":"p1","percent":100,"message":"done","native":{"ref":{"wire":"c-test.jsonl","frames":[9]}},"_meta":{"acme.dev/eta":0}}`,
		},
		"s2": {
			`{"type":"header","asr":"0.1","sessionId":"s2","createdAt":"2026-10-26T14:30:41.214Z","producer":{"method":"recorder","name":"acme","version":"0.1.0","plugin":{"name":"acme","version":"0.1.0"},"lossy":[]}}`,
			`{"type":"_acme/progress","seq":1,"id":"r1","ts":"2026-10-26T14:30:41.214Z","tsSource":"recorder","progressId":"q","percent":0.5,"native":{"ref":{"wire":"c-test.jsonl","frames":[8]}}}`,
		},
	}
	if d := cmp.Diff(want, lines(outs, sdk.ASRHeader, sdk.ASRRecord)); d != "" {
		t.Fatalf("streams (-want +got):\n%s", d)
	}
	for _, o := range outs {
		if o.Kind == sdk.Diagnostic {
			t.Errorf("unexpected diagnostic on well-formed traffic: %s (%s)", o.Summary, o.Detail)
		}
	}
}

func TestMalformedProgressIsDiagnosed(t *testing.T) {
	frames := mappertest.Frames(base,
		progress("s1", `"percent":10`),                                // no progressId: not recorded
		progress("s1", `"progressId":7`),                              // wrong type: not recorded
		progress("s1", `"progressId":"p","percent":"10","message":3`), // bad fields left out
		progress("s1", `"progressId":"p","percent":140`),              // out of range: left out
		mappertest.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":5,"update":{"sessionUpdate":"_acme/progress","progressId":"p"}}}`),
		mappertest.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"_acme/other"}}}`),
		mappertest.A2C(`{"jsonrpc":"2.0","method":"_acme/ping","params":{}}`),
		mappertest.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"_acme/progress"`),
		mappertest.A2C("\xff _acme/ \xfe"),
	)
	frames = append(frames, sdk.Frame{Kind: sdk.KindGap, Seq: 10, Dir: sdk.A2C, At: base.Add(time.Second),
		Gap: sdk.Gap{Frames: 2, Bytes: 10, Reason: "capture queue full"}})
	outs := mappertest.Run(t, New(), start, frames, 0)

	var diags []string
	for _, o := range outs {
		if o.Kind == sdk.Diagnostic {
			diags = append(diags, o.Summary)
		}
	}
	wantDiags := []string{
		"_acme/progress: progressId missing or not a string",
		"_acme/progress: progressId missing or not a string",
		"_acme/progress: percent is not a number",
		"_acme/progress: message is not a string",
		"_acme/progress: percent is not between 0 and 100",
		"_acme/progress: session/update without a sessionId string",
		"_acme session update not mapped",
		"_acme method not mapped",
		"a line mentioning _acme/ is not a JSON-RPC message",
		"a line mentioning _acme/ is not a JSON-RPC message",
		"frames not observed by the host",
	}
	if d := cmp.Diff(wantDiags, diags); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	got := lines(outs, sdk.ASRRecord)["s1"]
	if len(got) != 3 {
		t.Fatalf("s1 records: %d, want 2 progress records and a declaration:\n%s", len(got), strings.Join(got, "\n"))
	}
	for i, l := range got[:2] {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if _, ok := r["percent"]; ok {
			t.Errorf("record %d kept a bad percent: %s", i, l)
		}
		if _, ok := r["message"]; ok {
			t.Errorf("record %d kept a bad message: %s", i, l)
		}
	}
	if want := `{"type":"declaration","seq":3,"id":"r3","ts":"2026-10-26T14:30:42.207Z","tsSource":"recorder","lossy":["_acme/unobserved_frames"],"native":{"ref":{"wire":"c-test.jsonl","frames":[10]}}}`; got[2] != want {
		t.Errorf("declaration:\n got %s\nwant %s", got[2], want)
	}
}

func TestIgnoresOtherTraffic(t *testing.T) {
	frames := mappertest.Frames(base,
		mappertest.C2A(`not json`),
		mappertest.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"hi"}}}}`),
		mappertest.A2C(`{"jsonrpc":"2.0","method":"session/update","params":"nope"}`),
		mappertest.A2C(`{"jsonrpc":"2.0","id":3,"result":{"text":"mentions _acme/progress in a response"}}`),
	)
	if outs := mappertest.Run(t, New(), start, frames, 0); len(outs) != 0 {
		t.Fatalf("outputs for traffic that is not acme's: %+v", outs)
	}
}

// TestContinuesItsStream: a session an earlier connection recorded comes
// with this plugin's stream so far (a session frame); the stream goes on
// after its last record — no second header — and a loss it already
// declares is not declared again. A session without prior lines starts
// with a header.
func TestContinuesItsStream(t *testing.T) {
	prior := []string{
		`{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"acme","version":"0.1.0","plugin":{"name":"acme","version":"0.1.0"},"lossy":[]}}`,
		`{"type":"_acme/progress","seq":1,"id":"r1","progressId":"p1","percent":40}`,
		`{"type":"declaration","seq":2,"id":"r2","lossy":["_acme/unobserved_frames"]}`,
	}
	fixture := strings.Join([]string{
		`session {"id":"s1","connections":1,"prior":[` + strings.Join(prior, ",") + `]}`,
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"_acme/progress","progressId":"p1","percent":100}}}`,
		`session {"id":"s2","connections":0,"prior":[]}`,
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"_acme/progress","progressId":"q","percent":1}}}`,
		`gap a2c 3 100 capture queue full`,
	}, "\n")
	outs := mappertest.Run(t, New(), start, mappertest.ParseFixture(t, base, fixture), 0)
	var got []string
	for _, o := range outs {
		if o.Kind != sdk.ASRHeader && o.Kind != sdk.ASRRecord {
			continue
		}
		var r struct {
			Type  string   `json:"type"`
			Seq   uint64   `json:"seq"`
			Lossy []string `json:"lossy"`
		}
		if err := json.Unmarshal(o.JSON, &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %d %v", o.Session, r.Type, r.Seq, r.Lossy))
	}
	want := []string{
		"s1 _acme/progress 3 []",
		"s2 header 0 []",
		"s2 _acme/progress 1 []",
		"s2 declaration 2 [_acme/unobserved_frames]",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("outputs (-want +got):\n%s", d)
	}
}

// TestUndecodableProgressIsDiagnosed: an _acme/progress update with a
// member of the wrong type (here _meta) is not recorded, and says so.
func TestUndecodableProgressIsDiagnosed(t *testing.T) {
	outs := mappertest.Run(t, New(), start, mappertest.Frames(base, progress("s1", `"progressId":"p","_meta":5`)), 0)
	if len(outs) != 1 || outs[0].Kind != sdk.Diagnostic || outs[0].Summary != "_acme/progress: update does not decode" {
		t.Fatalf("outputs: %+v", outs)
	}
}
