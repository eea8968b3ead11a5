package acpv2

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/mappertest"
)

// streamOf joins one session's header and record outputs into stream bytes.
func streamOf(outs []sdk.Output, session string) []byte {
	var b bytes.Buffer
	for _, o := range outs {
		if (o.Kind == sdk.ASRHeader || o.Kind == sdk.ASRRecord) && o.Session == session {
			b.Write(o.JSON)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// sessionsOf lists the sessions with a header, in order.
func sessionsOf(outs []sdk.Output) []string {
	var ids []string
	for _, o := range outs {
		if o.Kind == sdk.ASRHeader {
			ids = append(ids, o.Session)
		}
	}
	return ids
}

// goldenStreams reads the recording engine's golden files
// (plugins/internal/acpasr/testdata/*.golden.jsonl) and returns each session's stream,
// named "<file>/<session>".
func goldenStreams(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(engineTestdata, "*.golden.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var outs []sdk.Output
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			var g struct {
				Kind    string          `json:"kind"`
				Session string          `json:"session"`
				JSON    json.RawMessage `json:"json"`
			}
			if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			switch g.Kind {
			case "asr-header":
				outs = append(outs, sdk.Output{Kind: sdk.ASRHeader, Session: g.Session, JSON: g.JSON})
			case "asr-record":
				outs = append(outs, sdk.Output{Kind: sdk.ASRRecord, Session: g.Session, JSON: g.JSON})
			}
		}
		name := strings.TrimSuffix(filepath.Base(f), ".golden.jsonl")
		for _, s := range sessionsOf(outs) {
			out[name+"/"+s] = streamOf(outs, s)
		}
	}
	return out
}

// replayed is the outcome of a replay.
type replayed struct {
	frames [][]byte
	diags  []sdk.Output
	report replay.LossReport
	raw    []byte
}

// runReplay replays stream through m (the plugin in process, or over gRPC).
func runReplay(t testing.TB, m sdk.Mapper, stream []byte) replayed {
	t.Helper()
	var rp replayed
	rr, ok := m.(sdk.Replayer)
	if !ok {
		t.Fatalf("%T is not a Replayer", m)
	}
	report, err := rr.Replay(context.Background(), nil, Input, bytes.NewReader(stream), func(o sdk.Output) error {
		switch o.Kind {
		case sdk.ACPFrame:
			rp.frames = append(rp.frames, bytes.Clone(o.JSON))
		case sdk.Diagnostic:
			rp.diags = append(rp.diags, o)
		default:
			t.Errorf("replay emitted a %s output", o.Kind)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	rp.raw = report
	if rp.report, err = replay.ParseLossReport(report); err != nil {
		t.Fatalf("%v\n%s", err, report)
	}
	return rp
}

// updates decodes the frames' update objects.
func (rp replayed) updates(t testing.TB) []rec {
	t.Helper()
	var out []rec
	for _, f := range rp.frames {
		var n struct {
			JSONRPC string `json:"jsonrpc"`
			Method  string `json:"method"`
			Params  struct {
				SessionID string `json:"sessionId"`
				Update    rec    `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(f, &n); err != nil {
			t.Fatalf("frame is not JSON: %v: %s", err, f)
		}
		if n.JSONRPC != "2.0" || n.Method != "session/update" || n.Params.SessionID == "" {
			t.Fatalf("frame is not a session/update notification: %s", f)
		}
		out = append(out, n.Params.Update)
	}
	return out
}

// kinds lists the updates' sessionUpdate kinds.
func kinds(us []rec) []string {
	var out []string
	for _, u := range us {
		out = append(out, str(u["sessionUpdate"]))
	}
	return out
}

// resumeFrames wraps replayed updates in the exchange a recorder observes
// when an agent replays history (replay.ResumeExchange).
func resumeFrames(h asr.Header, updates [][]byte) []sdk.Frame {
	b := pluginwire.NewFrameBuilder()
	var out []sdk.Frame
	seq := uint64(0)
	add := func(dir sdk.Direction, line []byte) {
		seq++
		out = b.Line(out, seq, dir, base.Add(time.Duration(seq)*time.Millisecond), line)
	}
	before, after := replay.ResumeExchange(h)
	for _, l := range before {
		add(l.Dir, l.Line)
	}
	for _, u := range updates {
		add(sdk.A2C, u)
	}
	for _, l := range after {
		add(l.Dir, l.Line)
	}
	return out
}

// roundTrip replays stream, records the replay with the recorder, and
// compares the context views (ASR-732).
func roundTrip(t *testing.T, m sdk.Mapper, stream []byte) (replay.Result, replayed, []byte) {
	t.Helper()
	rp := runReplay(t, m, stream)
	src, err := replay.ReadStream(bytes.NewReader(stream))
	if err != nil {
		t.Fatalf("read source: %v", err)
	}
	outs := mappertest.Run(t, m, startReq(""), resumeFrames(src.Header, rp.frames), 0)
	recorded := streamOf(outs, src.Header.SessionID)
	rs, err := replay.ReadStream(bytes.NewReader(recorded))
	if err != nil {
		t.Fatalf("read recording of the replay: %v\n%s", err, recorded)
	}
	return replay.Compare(src, rs, rp.report), rp, recorded
}

func requireRoundTrip(t *testing.T, m sdk.Mapper, stream []byte) (replay.Result, replayed) {
	t.Helper()
	res, rp, recorded := roundTrip(t, m, stream)
	if len(res.Differences) > 0 {
		var b strings.Builder
		for _, d := range res.Differences {
			b.WriteString("  " + d.String() + "\n")
		}
		t.Errorf("round trip: %d differences (%d entities):\n%s\nreplay:\n%s\nrecorded:\n%s\nreport:\n%s",
			len(res.Differences), res.Entities, b.String(), bytes.Join(rp.frames, []byte("\n")), recorded, rp.raw)
	}
	return res, rp
}

const testHeader = `{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"test","lossy":[]},"workspace":{"roots":[{"id":"root0","path":"/w/proj"},{"id":"root1","path":"/w/lib"},{"id":"root2","path":null}]}}`

// mkStream builds a stream from a header and records given without seq and
// id (they are numbered from 1).
func mkStream(t testing.TB, header string, records ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteByte('\n')
	for i, r := range records {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			t.Fatalf("record %d: %v: %s", i+1, err, r)
		}
		m["seq"] = json.RawMessage(strconv.Itoa(i + 1))
		m["id"] = json.RawMessage(`"r` + strconv.Itoa(i+1) + `"`)
		line, _ := json.Marshal(m)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// everyType is the hand-written stream with every record type.
func everyType(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "replay_every_type.asr.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// byID finds the update about an entity id (messageId, toolCallId, …).
func byID(us []rec, id string) rec {
	for _, u := range us {
		for _, k := range []string{"messageId", "toolCallId", "terminalId", "compactionId"} {
			if str(u[k]) == id {
				return u
			}
		}
		if p, ok := u["plan"].(map[string]any); ok && str(p["planId"]) == id {
			return u
		}
	}
	return nil
}
