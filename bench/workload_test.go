package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/acptap/acptap/bench/internal/acpgen"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/plugins/acpv2"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
)

// sessionLines is the connection the plugin and memory benchmarks replay:
// the handshake (with the prompt's response) and turns×100 session/update lines,
// each without its LF, with its direction.
func sessionLines(turns int) (dirs []sdk.Direction, lines [][]byte) {
	add := func(d sdk.Direction, l []byte) {
		dirs, lines = append(dirs, d), append(lines, bytes.TrimSuffix(l, []byte("\n")))
	}
	add(sdk.C2A, acpgen.InitializeRequest)
	add(sdk.A2C, acpgen.InitializeResponse)
	add(sdk.C2A, acpgen.NewSessionRequest)
	add(sdk.A2C, acpgen.NewSessionResponse)
	add(sdk.C2A, acpgen.PromptRequest)
	add(sdk.A2C, acpgen.PromptResponse)
	var buf bytes.Buffer
	acpgen.NewStream().WriteTurns(&buf, turns)
	all := buf.Bytes()
	for len(all) > 0 {
		i := bytes.IndexByte(all, '\n')
		dirs, lines = append(dirs, sdk.A2C), append(lines, all[:i])
		all = all[i+1:]
	}
	return dirs, lines
}

// sessionFrames builds the frames of sessionLines as the host does.
func sessionFrames(turns int) []sdk.Frame {
	dirs, lines := sessionLines(turns)
	fb := pluginwire.NewFrameBuilder()
	frames := make([]sdk.Frame, 0, len(lines))
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i, l := range lines {
		frames = fb.Line(frames, uint64(i+1), dirs[i], at.Add(time.Duration(i)*time.Microsecond), l)
	}
	return frames
}

// TestWorkload checks that the generated traffic is what the benchmarks
// claim: valid JSON lines, exact sizes, and a session acpv2 maps without a
// single diagnostic into one stream of bounded records.
func TestWorkload(t *testing.T) {
	const turns = acpgen.BlockTurns + 3 // crosses a block boundary
	s := acpgen.NewStream()
	var buf bytes.Buffer
	n, err := s.WriteTurns(&buf, turns)
	if err != nil || n != int64(buf.Len()) || n != s.Bytes(turns) {
		t.Fatalf("WriteTurns = %d, %v; wrote %d; Bytes = %d", n, err, buf.Len(), s.Bytes(turns))
	}
	if got := s.TurnsFor(s.Bytes(turns)); got != turns {
		t.Errorf("TurnsFor(Bytes(%d)) = %d", turns, got)
	}
	sc := bufio.NewScanner(&buf)
	lines := 0
	for sc.Scan() {
		lines++
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("line %d is not JSON: %s", lines, sc.Bytes())
		}
	}
	if lines != turns*acpgen.UpdatesPerTurn {
		t.Errorf("%d lines, want %d", lines, turns*acpgen.UpdatesPerTurn)
	}
	if avg := float64(n) / float64(lines); avg < 150 || avg > 400 {
		t.Errorf("average update line is %.0f bytes", avg)
	}
	mcp := acpgen.MCPBlock(64 << 10)
	for _, l := range bytes.Split(bytes.TrimSuffix(mcp, []byte("\n")), []byte("\n")) {
		if !json.Valid(l) {
			t.Fatalf("mcp line is not JSON: %s", l)
		}
	}

	// The client → agent bulk and the latency line (both ways) map without a diagnostic
	// too, after the handshake.
	var extra []sdk.Frame
	fb := pluginwire.NewFrameBuilder()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	add := func(d sdk.Direction, l []byte) {
		extra = fb.Line(extra, uint64(len(extra)+1), d, at, bytes.TrimSuffix(l, []byte("\n")))
	}
	for i, l := range [][]byte{acpgen.InitializeRequest, acpgen.InitializeResponse, acpgen.NewSessionRequest, acpgen.NewSessionResponse} {
		d := sdk.C2A
		if i%2 == 1 {
			d = sdk.A2C
		}
		add(d, l)
	}
	for _, l := range bytes.SplitAfter(bytes.TrimSuffix(mcp, []byte("\n")), []byte("\n")) {
		add(sdk.C2A, l)
	}
	echo := acpgen.EchoLine()
	if len(echo) != 300 || !json.Valid(echo) {
		t.Errorf("echo line: %d bytes, valid %v", len(echo), json.Valid(echo))
	}
	add(sdk.C2A, echo)
	add(sdk.A2C, echo)
	for _, o := range mapFinished(t, extra) {
		if o.Kind == sdk.Diagnostic {
			t.Errorf("diagnostic on the bulk or echo line: %s: %s (frames %v)", o.Summary, o.Detail, o.FrameSeqs)
		}
	}

	frames := sessionFrames(turns)
	m := acpv2.New()
	ctx := context.Background()
	sess, err := m.Start(ctx, sdk.StartRequest{Connection: "c-bench", WireLog: "wire/c-bench.jsonl", Input: acpv2.Input, Mode: sdk.ModeRecord})
	if err != nil {
		t.Fatal(err)
	}
	outs := mappertest.MapAll(t, ctx, sess, frames, 256)
	kinds := map[sdk.OutputKind]int{}
	for _, o := range outs {
		kinds[o.Kind]++
		if o.Kind == sdk.Diagnostic {
			t.Errorf("diagnostic: %s: %s (frames %v)", o.Summary, o.Detail, o.FrameSeqs)
		}
		if o.Session != acpgen.SessionID {
			t.Errorf("output for session %q", o.Session)
		}
	}
	if kinds[sdk.ASRHeader] != 1 || kinds[sdk.ASRRecord] < turns*5 {
		t.Errorf("outputs by kind: %v", kinds)
	}
	t.Logf("%d turns: %d bytes, %d outputs %v", turns, n, len(outs), kinds)
}

// mapFinished maps frames with acpv2 in process, finished, and returns every output.
func mapFinished(t *testing.T, frames []sdk.Frame) []sdk.Output {
	t.Helper()
	ctx := context.Background()
	sess, err := acpv2.New().Start(ctx, sdk.StartRequest{Connection: "c-bench", WireLog: "wire/c-bench.jsonl", Input: acpv2.Input, Mode: sdk.ModeRecord})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := sess.Map(ctx, frames)
	if err != nil {
		t.Fatal(err)
	}
	o, err := sess.Finish(ctx, "eof")
	if err != nil {
		t.Fatal(err)
	}
	return append(outs, o...)
}
