package mappertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

// Malformed returns frames every mapper must survive: lines that are not
// JSON, invalid UTF-8, empty and whitespace lines, JSON that is not an
// object, wrong types in well-known fields, unknown methods, responses
// without requests, a gap, and a large line.
func Malformed(base time.Time) []sdk.Frame {
	big := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-big","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"` +
		strings.Repeat("x", 5<<20) + `"}}}}`
	lines := []Line{
		C2A(`not json at all`),
		A2C("\xff\xfe\xfd invalid utf-8 \xc3\x28"),
		C2A(``),
		C2A("   \r"),
		A2C(`null`),
		A2C(`[]`),
		A2C(`[1,2,3]`),
		A2C(`42`),
		A2C(`"a string"`),
		A2C(`{"jsonrpc":"2.0"`),
		C2A(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":"not an object"}`),
		A2C(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"two","info":7}}`),
		A2C(`{"jsonrpc":"2.0","id":999,"result":{"sessionId":"orphan"}}`),
		C2A(`{"jsonrpc":"2.0","id":2,"method":"_acme/unknown","params":{}}`),
		C2A(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":5,"mcpServers":"x"}}`),
		A2C(`{"jsonrpc":"2.0","id":3,"result":{"sessionId":null}}`),
		C2A(`{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`),
		A2C(`{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s1"}}`),
		A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":"nope"}}`),
		A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":7}}}`),
		A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":[1,2]}}}`),
		A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":{},"status":5}}}`),
		A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"nobody","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"hi"}}}}`),
		A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"_vendor_thing","x":1}}}`),
		A2C(`[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle"}}},"junk",{}]`),
		A2C(`{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"bad"}}`),
		C2A(`{"jsonrpc":"2.0","id":null,"method":"session/prompt","params":{"sessionId":"s1","prompt":null}}`),
		A2C(big),
		C2A(`{"jsonrpc":"2.0","method":"session/close","params":{"sessionId":"s1"}}`),
	}
	frames := Frames(base, lines...)
	gap := sdk.Frame{Kind: sdk.KindGap, Seq: uint64(len(lines) + 1), Dir: sdk.A2C, At: base.Add(time.Hour),
		Gap: sdk.Gap{Frames: 3, Bytes: 120, Reason: "capture queue full"}}
	return append(frames, gap)
}

// Suite is the conformance suite for one mapper.
type Suite struct {
	// New returns a fresh mapper.
	New func() sdk.Mapper
	// Start is the start request used for every run.
	Start sdk.StartRequest
	// Corpus are well-formed frame sequences the mapper is expected to map.
	Corpus map[string][]sdk.Frame
}

// Run runs the suite: Info, determinism across runs, batch sizes and the
// gRPC transport, continuation of the ASR streams an earlier connection
// wrote (see continuation), and malformed input.
func (s Suite) Run(t *testing.T) {
	t.Run("Info", func(t *testing.T) {
		info, err := OverGRPC(t, s.New()).Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := info.Check(); err != nil {
			t.Fatalf("Info %+v: %v", info, err)
		}
		if _, ok := s.New().(sdk.Replayer); info.Can(sdk.CapabilityReplay) && !ok {
			t.Fatalf("Info claims %q, but the mapper is no sdk.Replayer", sdk.CapabilityReplay)
		}
	})
	base := time.Date(2026, 10, 26, 14, 30, 41, 207_000_000, time.UTC)
	corpus := map[string][]sdk.Frame{"malformed": Malformed(base)}
	for k, v := range s.Corpus {
		corpus[k] = v
	}
	for name, frames := range corpus {
		t.Run("Deterministic/"+name, func(t *testing.T) {
			ref := Run(t, s.New(), s.Start, frames, 0)
			for _, bs := range []int{1, 7} {
				got := Run(t, s.New(), s.Start, frames, bs)
				if d := diffOutputs(ref, got); d != "" {
					t.Fatalf("batch size %d changed the outputs: %s", bs, d)
				}
			}
			remote := Run(t, OverGRPC(t, s.New()), s.Start, frames, 5)
			if d := diffOutputs(ref, remote); d != "" {
				t.Fatalf("over gRPC the outputs differ: %s", d)
			}
			checkOutputs(t, ref)
		})
		t.Run("Continuation/"+name, func(t *testing.T) {
			if err := continuation(t.Context(), s.New, s.Start, frames); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("MalformedIsDiagnosed", func(t *testing.T) {
		outs := Run(t, OverGRPC(t, s.New()), s.Start, Malformed(base), 3)
		diags := 0
		for _, o := range outs {
			if o.Kind == sdk.Diagnostic {
				diags++
				if o.Summary == "" {
					t.Errorf("diagnostic without a summary: %+v", o)
				}
			}
		}
		if diags == 0 {
			t.Fatal("malformed frames produced no diagnostics")
		}
	})
}

// checkOutputs verifies every data output is one valid JSON value without LF.
func checkOutputs(t *testing.T, outs []sdk.Output) {
	t.Helper()
	for i, o := range outs {
		switch o.Kind {
		case sdk.ASRHeader, sdk.ASRRecord, sdk.AEPEvent, sdk.ACPFrame:
			if !json.Valid(o.JSON) || bytes.IndexByte(o.JSON, '\n') >= 0 {
				t.Fatalf("output %d (%s) is not one JSON line: %.200q", i, o.Kind, o.JSON)
			}
		case sdk.Diagnostic:
		default:
			t.Fatalf("output %d has unknown kind %d", i, o.Kind)
		}
	}
}

func diffOutputs(a, b []sdk.Output) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d outputs, then %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind != y.Kind || x.Session != y.Session || !bytes.Equal(x.JSON, y.JSON) ||
			x.Summary != y.Summary || x.Severity != y.Severity || fmt.Sprint(x.FrameSeqs) != fmt.Sprint(y.FrameSeqs) {
			return fmt.Sprintf("output %d: %s %.300q ≠ %s %.300q", i, x.Kind, x.JSON, y.Kind, y.JSON)
		}
	}
	return ""
}
