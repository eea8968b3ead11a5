package acpv1

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/mappertest"
)

// replayedV1 is the outcome of a v1 replay.
type replayedV1 struct {
	frames [][]byte
	diags  []sdk.Output
	report replay.LossReport
	raw    []byte
}

// runReplayV1 replays stream to ACP v1 through m (in process or over gRPC).
func runReplayV1(t testing.TB, m sdk.Mapper, stream []byte) replayedV1 {
	t.Helper()
	var rp replayedV1
	rr, ok := m.(sdk.Replayer)
	if !ok {
		t.Fatalf("%T is not a Replayer", m)
	}
	report, err := rr.Replay(context.Background(), nil, replay.TargetV1, bytes.NewReader(stream), func(o sdk.Output) error {
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
func (rp replayedV1) updates(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, f := range rp.frames {
		var n struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Update map[string]any `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(f, &n); err != nil || n.Method != "session/update" || n.ID != nil || n.Params.Update == nil {
			t.Fatalf("not a session/update notification: %s", f)
		}
		out = append(out, n.Params.Update)
	}
	return out
}

// loadFrames wraps replayed updates in the v1 exchange a recorder observes
// when an agent replays history on session/load (replay.LoadExchange).
func loadFrames(h asr.Header, updates [][]byte) []sdk.Frame {
	b := pluginwire.NewFrameBuilder()
	var out []sdk.Frame
	seq := uint64(0)
	add := func(dir sdk.Direction, line []byte) {
		seq++
		out = b.Line(out, seq, dir, base.Add(time.Duration(seq)*time.Millisecond), line)
	}
	before, after := replay.LoadExchange(h)
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

// roundTripV1 replays stream to v1, records the replay with the acpv1
// recorder, and compares the context views (ASR-732 for v1).
func roundTripV1(t *testing.T, stream []byte) (replay.Result, replayedV1, []byte) {
	t.Helper()
	rp := runReplayV1(t, New(), stream)
	src, err := replay.ReadStream(bytes.NewReader(stream))
	if err != nil {
		t.Fatalf("read source: %v", err)
	}
	outs := mappertest.Run(t, New(), live, loadFrames(src.Header, rp.frames), 0)
	recorded := streamOf(outs, src.Header.SessionID)
	rs, err := replay.ReadStream(bytes.NewReader(recorded))
	if err != nil {
		t.Fatalf("read recording of the replay: %v\n%s", err, recorded)
	}
	return replay.CompareV1(src, rs, rp.report), rp, recorded
}

func requireRoundTripV1(t *testing.T, stream []byte) (replay.Result, replayedV1) {
	t.Helper()
	res, rp, recorded := roundTripV1(t, stream)
	if len(res.Differences) > 0 {
		var b strings.Builder
		for _, d := range res.Differences {
			b.WriteString("  " + d.String() + "\n")
		}
		t.Errorf("v1 round trip: %d differences (%d entities):\n%s\nreplay:\n%s\nrecorded:\n%s\nreport:\n%s",
			len(res.Differences), res.Entities, b.String(), bytes.Join(rp.frames, []byte("\n")), recorded, rp.raw)
	}
	return res, rp
}

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

// goldenStreamsIn reads golden files of recorder outputs (the engine's,
// acpv1's) and returns each session's stream, named "<file>/<session>".
func goldenStreamsIn(t *testing.T, pattern string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files %s: %v", pattern, err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var outs []sdk.Output
		var order []string
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
				order = append(order, g.Session)
			case "asr-record":
				outs = append(outs, sdk.Output{Kind: sdk.ASRRecord, Session: g.Session, JSON: g.JSON})
			}
		}
		name := strings.TrimSuffix(filepath.Base(f), ".golden.jsonl")
		for _, s := range order {
			out[name+"/"+s] = streamOf(outs, s)
		}
	}
	return out
}

// everyGoldenStream is every golden stream of the recorders: the engine's
// (plugins/internal/acpasr/testdata), acpv1's own, and acpv2's stream with every record
// type.
func everyGoldenStream(t *testing.T) (map[string][]byte, []string) {
	t.Helper()
	all := goldenStreamsIn(t, filepath.Join("..", "internal", "acpasr", "testdata", "*.golden.jsonl"))
	for k, v := range goldenStreamsIn(t, filepath.Join("testdata", "*.golden.jsonl")) {
		all["acpv1:"+k] = v
	}
	b, err := os.ReadFile(filepath.Join("..", "acpv2", "testdata", "replay_every_type.asr.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	all["replay_every_type"] = b
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	sort.Strings(names)
	return all, names
}
