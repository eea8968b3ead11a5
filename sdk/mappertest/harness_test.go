package mappertest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
)

// echoMapper emits, per frame, an event (not ASR: it writes no stream) holding the frame's whole data, and
// a diagnostic for frames that are not JSON. It exercises parts both ways.
type echoMapper struct{}

func (echoMapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "echo", Version: "0.0.1", Inputs: []string{"_test/*"}, Outputs: []sdk.Format{"aep"}, Capabilities: []sdk.Capability{"record"}}, nil
}

func (echoMapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	return &echoSession{conn: req.Connection}, nil
}

type echoSession struct{ conn string }

func (s *echoSession) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	var outs []sdk.Output
	for _, f := range frames {
		if f.Kind == sdk.KindGap {
			outs = append(outs, sdk.Diag(sdk.SeverityWarning, "", "gap", f.Gap.Reason, f.Seq))
			continue
		}
		if !json.Valid(f.Data) {
			outs = append(outs, sdk.Diag(sdk.SeverityWarning, "", "not JSON", "", f.Seq))
			continue
		}
		rec, _ := json.Marshal(map[string]any{"seq": f.Seq, "dir": f.Dir.String(), "data": string(f.Data), "replyTo": f.ReplyTo, "method": f.ReplyToMethod})
		outs = append(outs, sdk.Output{Kind: sdk.AEPEvent, Session: s.conn, JSON: rec, FrameSeqs: []uint64{f.Seq}})
	}
	return outs, nil
}

func (s *echoSession) Finish(context.Context, string) ([]sdk.Output, error) {
	return []sdk.Output{{Kind: sdk.AEPEvent, Session: s.conn, JSON: []byte(`{"finished":true}`)}}, nil
}

func TestConformanceEcho(t *testing.T) {
	mappertest.Suite{New: func() sdk.Mapper { return echoMapper{} }, Start: sdk.StartRequest{Connection: "c-test"}}.Run(t)
}

// TestLargeFramesTravelInParts sends frames far larger than the part size
// and the gRPC max message size; none may be dropped or altered.
func TestLargeFramesTravelInParts(t *testing.T) {
	big := `"` + strings.Repeat("a", 3*pluginwire.MaxMessageSize/2) + `"`
	mid := `"` + strings.Repeat("b", pluginwire.PartSize+17) + `"`
	frames := mappertest.Frames(time.Unix(0, 0), mappertest.C2A(mid), mappertest.A2C(big), mappertest.C2A(`{"x":1}`))
	outs := mappertest.Run(t, mappertest.OverGRPC(t, echoMapper{}), sdk.StartRequest{Connection: "c"}, frames, 0)
	if len(outs) != 4 {
		t.Fatalf("got %d outputs, want 4", len(outs))
	}
	for i, want := range []string{mid, big, `{"x":1}`} {
		var rec struct{ Data string }
		if err := json.Unmarshal(outs[i].JSON, &rec); err != nil {
			t.Fatalf("output %d: %v", i, err)
		}
		if sha256.Sum256([]byte(rec.Data)) != sha256.Sum256([]byte(want)) {
			t.Fatalf("output %d: data of %d bytes came back as %d bytes", i, len(want), len(rec.Data))
		}
	}
}

// TestResponsesJoinByDirectionAndID: both sides use id 0 at once.
func TestResponsesJoinByDirectionAndID(t *testing.T) {
	frames := mappertest.Frames(time.Unix(0, 0),
		mappertest.C2A(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`),
		mappertest.A2C(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission"}`),
		mappertest.C2A(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{}}}`),
		mappertest.A2C(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`),
		mappertest.A2C(`[{"jsonrpc":"2.0","id":"x","method":"a"},{"jsonrpc":"2.0","method":"b"}]`),
		mappertest.C2A(`{"jsonrpc":"2.0","id":"x","result":null}`),
		mappertest.C2A(`{"jsonrpc":"2.0","id":7,"result":null}`),
	)
	want := []struct {
		seq   uint64
		reply uint64
		meth  string
		batch int
	}{{1, 0, "", 0}, {2, 0, "", 0}, {3, 2, "session/request_permission", 0}, {4, 1, "initialize", 0}, {5, 0, "", 2}, {5, 0, "", 2}, {6, 5, "a", 0}, {7, 0, "", 0}}
	if len(frames) != len(want) {
		t.Fatalf("got %d frames, want %d", len(frames), len(want))
	}
	for i, w := range want {
		f := frames[i]
		if f.Seq != w.seq || f.ReplyTo != w.reply || f.ReplyToMethod != w.meth || f.BatchSize != w.batch {
			t.Errorf("frame %d: seq %d replyTo %d %q batch %d; want %+v", i, f.Seq, f.ReplyTo, f.ReplyToMethod, f.BatchSize, w)
		}
	}
	if !bytes.Equal(frames[5].Data, []byte(`{"jsonrpc":"2.0","method":"b"}`)) {
		t.Errorf("batch element: %s", frames[5].Data)
	}
	_ = fmt.Sprint()
}
