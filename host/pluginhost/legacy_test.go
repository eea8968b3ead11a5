package pluginhost

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// TestOldStylePluginStillWorks: a plugin process served as a plugin built
// with an SDK from before the packed wire feature (testdata/legacyplugin:
// it announces no feature, answers with Output messages and refuses a
// packed batch) maps through this host, over go-plugin, exactly as the same
// mapper served by this SDK (packed both ways), one batch at a time and
// with two in flight.
func TestOldStylePluginStillWorks(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "acptap-plugin-legacy")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/legacyplugin").CombinedOutput(); err != nil {
		t.Fatalf("build the legacy plugin: %v\n%s", err, out)
	}
	frames := legacyFrames()
	var want []string
	for _, newSDK := range []bool{false, true} {
		if newSDK {
			t.Setenv("LEGACYPLUGIN_NEW", "1")
		}
		for _, pipelined := range []bool{false, true} {
			inst, err := Launch(context.Background(), Spec{Name: "legacy", Path: bin}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := mapThrough(t, inst.Mapper, frames, pipelined)
			inst.Kill()
			if want == nil {
				want = got
				if len(want) != len(frames)+1 {
					t.Fatalf("%d outputs for %d frames", len(want), len(frames))
				}
				continue
			}
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("new SDK %v, pipelined %v: output %d differs:\n%.300s\nold-style plugin, one at a time:\n%.300s", newSDK, pipelined, i, got[i], want[i])
					}
				}
				t.Fatalf("new SDK %v, pipelined %v: %d outputs, want %d", newSDK, pipelined, len(got), len(want))
			}
		}
	}
}

// legacyFrames are the frames of a few wire lines as the host builds them:
// a request and its response (joined), notifications, a JSON-RPC batch, a
// line that is not JSON, a 5 MB line, a gap and a session frame.
func legacyFrames() []sdk.Frame {
	fb := pluginwire.NewFrameBuilder()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var out []sdk.Frame
	seq := uint64(0)
	line := func(d sdk.Direction, l string) {
		seq++
		out = fb.Line(out, seq, d, at.Add(time.Duration(seq)*time.Millisecond), []byte(l))
	}
	line(sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`)
	line(sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`)
	for i := range 600 {
		line(sdk.A2C, fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"n":%d,"text":"caf\u00e9 \"%s\""}}}`, i, strings.Repeat("x", i%50)))
	}
	line(sdk.A2C, `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]`)
	line(sdk.C2A, "not json \xff")
	line(sdk.A2C, `{"big":"`+strings.Repeat("b", 5<<20)+`"}`)
	seq++
	out = fb.Gap(out, seq, sdk.A2C, at, sdk.Gap{Frames: 3, Bytes: 100, Reason: "queue full"})
	seq++
	out = fb.Session(out, seq, sdk.C2A, at, sdk.SessionInfo{ID: "s", Connections: 1, Prior: [][]byte{[]byte(`{"h":1}`)}})
	return out
}

// mapThrough maps frames in batches of 64 and finishes; every output as
// text.
func mapThrough(t *testing.T, m sdk.Mapper, frames []sdk.Frame, pipelined bool) []string {
	t.Helper()
	ctx := context.Background()
	sess, err := m.Start(ctx, sdk.StartRequest{Connection: "c-legacy", Input: "acp/2@x", Mode: sdk.ModeRecord})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := sess.(interface {
		Submit(context.Context, []sdk.Frame) error
		Collect(context.Context) ([]sdk.Output, error)
	})
	if pipelined && ps == nil {
		t.Fatalf("%T has no pipelined batches", sess)
	}
	var outs []sdk.Output
	inFlight := 0
	for len(frames) > 0 || inFlight > 0 {
		if pipelined {
			if len(frames) > 0 && inFlight < 2 {
				n := min(64, len(frames))
				if err := ps.Submit(ctx, frames[:n]); err != nil {
					t.Fatal(err)
				}
				frames, inFlight = frames[n:], inFlight+1
				continue
			}
			o, err := ps.Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			outs, inFlight = append(outs, o...), inFlight-1
			continue
		}
		n := min(64, len(frames))
		o, err := sess.Map(ctx, frames[:n])
		if err != nil {
			t.Fatal(err)
		}
		outs, frames = append(outs, o...), frames[n:]
	}
	o, err := sess.Finish(ctx, "eof")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range append(outs, o...) {
		got = append(got, fmt.Sprintf("%d|%s|%v|%d|%s|%s|%d:%x", x.Kind, x.Session, x.FrameSeqs, x.Severity, x.Summary, x.Detail, len(x.JSON), shortHash(x.JSON)))
	}
	return got
}

// shortHash keeps a long output's text short in a failure message.
func shortHash(b []byte) []byte {
	if len(b) <= 200 {
		return b
	}
	var h uint64 = 14695981039346656037
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return append(bytes.Clone(b[:100]), fmt.Sprintf("…%016x", h)...)
}
