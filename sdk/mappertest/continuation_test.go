package mappertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// bug is how a noteMapper gets continuation wrong.
type bug int

const (
	noBug        bug = iota // continues through sdk.Streams
	secondHeader            // ignores session frames: a new header every connection
	restartSeq              // no second header, but seqs restart at 1
	redeclare               // seqs right, but the gap's loss is declared again
)

// noteMapper writes one "_t/note" record per line frame that names a
// sessionId, and declares "_t/gap" on a gap. With noBug it uses the SDK's
// stream writer; the others are hand-written the ways a mapper goes wrong.
type noteMapper struct{ bug bug }

func (m noteMapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "note", Version: "1", Inputs: []string{"_t/*"}, Outputs: []sdk.Format{"asr"}, Capabilities: []sdk.Capability{"record"}}, nil
}

func (m noteMapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	return &noteSession{bug: m.bug, w: sdk.NewStreams(req, asr.Producer{Method: "recorder", Name: "note", Lossy: []string{}}),
		next: map[string]uint64{}, seen: map[string]bool{}, prior: map[string]bool{}}, nil
}

type noteSession struct {
	bug   bug
	w     *sdk.Streams
	next  map[string]uint64 // the hand-written bookkeeping of the buggy ones
	seen  map[string]bool
	prior map[string]bool
	out   []sdk.Output
}

func (s *noteSession) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	for i := range frames {
		s.frame(&frames[i])
	}
	if s.bug == noBug {
		return s.w.Take(), nil
	}
	out := s.out
	s.out = nil
	return out, nil
}

func (s *noteSession) Finish(context.Context, string) ([]sdk.Output, error) { return nil, nil }

func (s *noteSession) frame(f *sdk.Frame) {
	switch f.Kind {
	case sdk.KindSession:
		if s.bug == noBug {
			s.w.TakeUp(f)
			return
		}
		if s.bug != secondHeader && len(f.Session.Prior) > 0 {
			s.prior[f.Session.ID] = true
			s.next[f.Session.ID] = uint64(len(f.Session.Prior) - 1) // dense seqs: the last record's
		}
		return
	case sdk.KindGap:
		if s.bug == noBug {
			s.w.Gap(f, "_t/gap")
			return
		}
		for id := range s.next {
			if s.seen[id] && (s.bug == redeclare || !s.prior[id]) {
				s.write(id, f, `"type":"declaration","lossy":["_t/gap"]`)
			}
		}
		return
	}
	var m struct {
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(f.Data, &m) != nil || m.Params.SessionID == "" {
		return
	}
	id := m.Params.SessionID
	if s.bug == noBug {
		s.w.Open(id, f).Write(&note{Envelope: asr.Envelope{Type: "_t/note"}}, sdk.When{At: f.At}, f.Seq)
		return
	}
	if !s.seen[id] {
		s.seen[id] = true
		if !s.prior[id] {
			s.out = append(s.out, sdk.Output{Kind: sdk.ASRHeader, Session: id, JSON: []byte(`{"type":"header","sessionId":"` + id + `","producer":{"lossy":[]}}`)})
		}
		if s.bug == restartSeq {
			s.next[id] = 0
		}
	}
	s.write(id, f, `"type":"_t/note"`)
}

func (s *noteSession) write(id string, f *sdk.Frame, body string) {
	s.next[id]++
	s.out = append(s.out, sdk.Output{Kind: sdk.ASRRecord, Session: id,
		JSON: fmt.Appendf(nil, `{%s,"seq":%d,"id":"r%d"}`, body, s.next[id], s.next[id]), FrameSeqs: []uint64{f.Seq}})
}

type note struct {
	asr.Envelope
	asr.Provenance
}

func noteFrames() []sdk.Frame {
	return Frames(time.Date(2026, 10, 26, 14, 30, 41, 0, time.UTC),
		A2C(`{"jsonrpc":"2.0","method":"_t/x","params":{"sessionId":"s1"}}`),
		A2C(`{"jsonrpc":"2.0","method":"_t/x","params":{"sessionId":"s2"}}`),
		A2C(`{"jsonrpc":"2.0","method":"_t/x","params":{"sessionId":"s1"}}`),
	)
}

// TestContinuationCheckCanFail: the suite's continuation check passes a
// mapper that continues through sdk.Streams and fails each way a mapper
// can get continuation wrong: a second header (ASR-701: one stream per
// session, across connections), seqs that restart, a loss declared again
// on the second connection (ASR-722).
func TestContinuationCheckCanFail(t *testing.T) {
	start := sdk.StartRequest{Connection: "c", WireLog: "c.jsonl"}
	if err := continuation(t.Context(), func() sdk.Mapper { return noteMapper{noBug} }, start, noteFrames()); err != nil {
		t.Fatalf("the SDK's stream writer fails the check: %v", err)
	}
	for _, c := range []struct {
		bug  bug
		want string
	}{
		{secondHeader, `a second header for a stream the session frame gave`},
		{restartSeq, `record seq 1 id "r1", want seq 4 id r4`},
		{redeclare, `loss "_t/gap" declared again`},
	} {
		err := continuation(t.Context(), func() sdk.Mapper { return noteMapper{c.bug} }, start, noteFrames())
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "second connection") {
			t.Errorf("bug %d: error %v, want one saying %q on the second connection", c.bug, err, c.want)
		}
	}
}

// TestContinuationFirstConnection: the check also fails seqs that are not
// dense on the first connection.
func TestContinuationFirstConnection(t *testing.T) {
	m := &skipMapper{}
	err := continuation(t.Context(), func() sdk.Mapper { return m }, sdk.StartRequest{}, noteFrames())
	if err == nil || !strings.Contains(err.Error(), "first connection") {
		t.Fatalf("error %v", err)
	}
}

// skipMapper numbers its records 1, 3, 5.
type skipMapper struct{ noteMapper }

func (m *skipMapper) Start(context.Context, sdk.StartRequest) (sdk.Session, error) { return m, nil }
func (m *skipMapper) Finish(context.Context, string) ([]sdk.Output, error)         { return nil, nil }
func (m *skipMapper) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	var b bytes.Buffer
	out := []sdk.Output{{Kind: sdk.ASRHeader, Session: "s", JSON: []byte(`{"type":"header"}`)}}
	for i := range frames {
		b.Reset()
		fmt.Fprintf(&b, `{"type":"x","seq":%d,"id":"r%d"}`, 2*i+1, 2*i+1)
		out = append(out, sdk.Output{Kind: sdk.ASRRecord, Session: "s", JSON: bytes.Clone(b.Bytes())})
	}
	return out, nil
}
