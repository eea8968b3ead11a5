package acpreplay

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
)

// TestTopFieldsMatchesEncodingJSON: on objects, the scanner sees the same
// top-level members as encoding/json; on anything else it says no.
func TestTopFieldsMatchesEncodingJSON(t *testing.T) {
	objects := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":"x\"}y","b":[1,{"c":"]"}],"d":{"e":null},"f":true,"g":-1.5e3}`,
		`{"type":"message","content":[{"type":"text","text":"a\\\\"}],"x":"\u00e9"}`,
	}
	for _, o := range objects {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(o), &want); err != nil {
			t.Fatal(err)
		}
		got := map[string]json.RawMessage{}
		if !topFields([]byte(o), func(k, v []byte) { got[string(k)] = bytes.Clone(v) }) {
			t.Errorf("topFields(%s) = false", o)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d members, want %d", o, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Errorf("%s: %s = %s, want %s", o, k, got[k], v)
			}
		}
	}
	for _, bad := range []string{``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1} x`, `{"a":"x}`, `{"a":[1}`, `"x"`, `{a:1}`} {
		if topFields([]byte(bad), func(k, v []byte) {}) {
			t.Errorf("topFields(%q) = true", bad)
		}
	}
}

const testHeader = `{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"test","lossy":[]},"workspace":{"roots":[{"id":"root0","path":"/w/proj"},{"id":"root1","path":"/w/lib"},{"id":"root2","path":null}]}}`

// FuzzReplay: any stream bytes give a report or an error, never a panic;
// every frame is one JSON line.
func FuzzReplay(f *testing.F) {
	f.Add([]byte(testHeader + "\n" + `{"type":"message","seq":1,"id":"r1","messageId":"a","role":"assistant","content":[{"type":"reasoning","text":"x"},{"type":"text","text":"y"}]}` + "\n"))
	f.Add([]byte(testHeader + "\n" + `{"type":"tool_call","seq":1,"id":"r1","callId":"c"}` + "\n" + `{"type":"file_change","seq":2,"id":"r2","cause":{"callId":"c"},"changes":[{"op":"add","path":{"root":"root2","path":"a"}}]}` + "\n"))
	f.Add([]byte(`{"type":"header"}` + "\n{\"type\":\"terminal\",\"terminalId\":1,\"output\":{\"blob\":{\"data\":\"!!\"}}}\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		report, err := Replay(context.Background(), "", bytes.NewReader(stream), func(o sdk.Output) error {
			if o.Kind == sdk.ACPFrame && (!json.Valid(o.JSON) || bytes.IndexByte(o.JSON, '\n') >= 0) {
				t.Errorf("frame is not one JSON line: %q", o.JSON)
			}
			return nil
		})
		if err != nil {
			return
		}
		if _, err := replay.ParseLossReport(report); err != nil {
			t.Errorf("report: %v", err)
		}
	})
}
