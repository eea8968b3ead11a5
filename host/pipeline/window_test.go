package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// recMapper records every Map call's frames as text (all of a frame's
// fields), and answers each line frame with an output naming it.
type recMapper struct {
	name   string
	delay  time.Duration
	failAt []int // fail these Map calls (1-based, counted over instances)
	mu     sync.Mutex
	calls  []string
	n      int
	// firstPassOn, when set, says whether the rebuild's first pass is still
	// reading; early is what it said at the first Map call.
	firstPassOn func() bool
	early       bool
}

func (m *recMapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: m.name, Version: "1", Inputs: []string{"acp/2@x"}, Outputs: []sdk.Format{"asr"}, Capabilities: []sdk.Capability{"record"}}, nil
}

func (m *recMapper) Start(context.Context, sdk.StartRequest) (sdk.Session, error) {
	return &recSession{m: m}, nil
}

type recSession struct{ m *recMapper }

func frameText(f sdk.Frame) string {
	s := fmt.Sprintf("%d/%d/%d/%d/%d/%d/%d/%q/%q", f.Kind, f.Seq, f.Dir, f.At.UnixNano(), f.BatchIndex, f.BatchSize, f.ReplyTo, f.ReplyToMethod, f.Data)
	if f.Kind == sdk.KindGap {
		s += fmt.Sprintf("/gap %+v", f.Gap)
	}
	if f.Session != nil {
		s += fmt.Sprintf("/session %s %d %q", f.Session.ID, f.Session.Connections, f.Session.Prior)
	}
	return s
}

func (s *recSession) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	time.Sleep(s.m.delay)
	s.m.mu.Lock()
	if s.m.n == 0 && s.m.firstPassOn != nil {
		s.m.early = s.m.firstPassOn()
	}
	s.m.n++
	fail := slices.Contains(s.m.failAt, s.m.n)
	s.m.mu.Unlock()
	if fail {
		return nil, errors.New("injected failure")
	}
	var b strings.Builder
	var outs []sdk.Output
	for _, f := range frames {
		b.WriteString(frameText(f))
		b.WriteByte('\n')
		if f.Kind == sdk.KindLine {
			outs = append(outs, sdk.Output{Kind: sdk.ASRRecord, Session: "s", JSON: fmt.Appendf(nil, `{"p":%q,"seq":%d}`, s.m.name, f.Seq)})
		}
	}
	s.m.mu.Lock()
	s.m.calls = append(s.m.calls, b.String())
	s.m.mu.Unlock()
	return outs, nil
}

func (s *recSession) Finish(context.Context, string) ([]sdk.Output, error) {
	return []sdk.Output{{Kind: sdk.ASRRecord, Session: "s", JSON: []byte(`{"final":true}`)}}, nil
}

// fakeSessions answers Observe with counts per session and Prior with
// made-up lines.
type fakeSessions struct{}

// windowSessions is the session store rebuildFailing's pipelines use.
var windowSessions SessionStore = fakeSessions{}

// lockingSessions is fakeSessions that locks sessions (as a recording's
// store does); every lock is free.
type lockingSessions struct{ fakeSessions }

func (lockingSessions) Locking() bool                                        { return true }
func (lockingSessions) AcquireSession(string, <-chan struct{}) (bool, error) { return true, nil }
func (lockingSessions) ForgoSession(string)                                  {}
func (l lockingSessions) State(id string) (wire.Session, error)              { return l.Observe(id) }

func (fakeSessions) Observe(id string) (wire.Session, error) {
	if id == "sess_b" {
		return wire.Session{ID: id, Connections: 1, PriorLines: 2, AEPLines: 1}, nil
	}
	return wire.Session{ID: id}, nil
}

func (fakeSessions) Prior(id, plugin string, n int) ([][]byte, error) {
	var out [][]byte
	for i := range n {
		out = append(out, fmt.Appendf(nil, `{"prior":%d,"of":%q,"plugin":%q}`, i, id, plugin))
	}
	return out, nil
}

// testLogWriter creates a wire log of connection conn at path and returns it with an
// append of entries 1 ms apart from a fixed time, and of frame lines.
func testLogWriter(t *testing.T, path, conn string) (*wire.Writer, func(wire.Entry), func(sdk.Direction, string)) {
	t.Helper()
	w, err := wire.Create(path, wire.Header{Connection: conn, Agent: wire.Agent{Command: []string{"agent"}}, StartedAt: time.Unix(100, 0)})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(200, 5).UTC()
	app := func(e wire.Entry) {
		t.Helper()
		e.At = at
		at = at.Add(time.Millisecond)
		if _, err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	line := func(dir sdk.Direction, s string) { app(wire.Entry{Type: wire.TypeFrame, Dir: dir, Line: []byte(s)}) }
	return w, app, line
}

// windowTestLog writes a wire log with everything a reader must get right:
// a revision entry, several sessions (with and without a session entry,
// one named twice), a gap entry, a b64 frame, JSON-RPC batches and
// request/response pairs, bad lines, a seq gap, a seq repeated, and enough
// frames for many batches.
func windowTestLog(t *testing.T, frames int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.jsonl")
	w, app, line := testLogWriter(t, path, "c-window")
	line(sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`)
	line(sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`)
	if err := w.AppendRevision(wire.Revision{Revision: "acp/2@x", Reason: "test", Plugins: []string{"a", "b"}, SelectedBy: "revisions"}); err != nil {
		t.Fatal(err)
	}
	line(sdk.C2A, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}`)
	app(wire.Entry{Type: wire.TypeSession, Dir: sdk.A2C, Session: wire.Session{ID: "sess_a", Connections: 3, PriorLines: 7}})
	line(sdk.A2C, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess_a"}}`)
	for i := range frames {
		switch {
		case i == frames/3:
			app(wire.Entry{Type: wire.TypeGap, Dir: sdk.A2C, Gap: sdk.Gap{Frames: 4, Bytes: 1000, Reason: "queue full"}})
		case i == frames/2:
			// A session named without a session entry: injected when
			// sessions are resolved.
			line(sdk.C2A, `{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"sess_b","cwd":"/"}}`)
			line(sdk.A2C, `{"jsonrpc":"2.0","id":2,"result":{}}`)
		case i == frames/2+7:
			app(wire.Entry{Type: wire.TypeSession, Dir: sdk.C2A, Session: wire.Session{ID: "sess_a", Connections: 9}})
		case i%97 == 5:
			line(sdk.C2A, `[{"jsonrpc":"2.0","id":"x`+fmt.Sprint(i)+`","method":"m"},{"jsonrpc":"2.0","method":"n"}]`)
		case i%89 == 3:
			line(sdk.A2C, `{"jsonrpc":"2.0","id":"x`+fmt.Sprint(i-2)+`","result":{}}`)
		case i%101 == 7:
			app(wire.Entry{Type: wire.TypeFrame, Dir: sdk.A2C, Line: []byte("not utf-8 \xff\xfe"), NoLF: i == frames-1})
		default:
			sess := "sess_a"
			if i > frames/2 && i%2 == 0 {
				sess = "sess_b"
			}
			line(sdk.A2C, fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d \"quoted\" \\ \u00e9"}}}}`, sess, i))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Damage it: a bad line, a line removed (a seq gap), a line repeated
	// (a seq again), a bad line at the very end.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	lines = lines[:len(lines)-1]
	n := len(lines)
	lines[n/4] = `{"type":"frame","seq":` + "\n"
	lines = slices.Delete(lines, n/3+40, n/3+42)
	lines = slices.Insert(lines, 2*n/3, lines[2*n/3-1])
	lines = append(lines, "{bad\n")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

type windowRun struct {
	events []string            // OnReadProblem and OnSession, in order
	calls  map[string][]string // per plugin: each Map call's frames
	outs   []string            // the sink's outputs, per plugin in order
	gaps   []string
	stats  Stats
	// early: plugin a was first fed while the first pass was still reading.
	early bool
}

// rebuildWith maps path as a rebuild with plugins a and b; shared: through
// the window (else each feeder reads the log, as before it); grpc: the
// plugins over real gRPC (pipelined when shared and pipeline).
func rebuildWith(t *testing.T, path string, shared, grpc bool, delays map[string]time.Duration, bounds [2]int) windowRun {
	return rebuildFailing(t, path, shared, grpc, delays, bounds, nil, 0, nil)
}

func rebuildFailing(t *testing.T, path string, shared, grpc bool, delays map[string]time.Duration, bounds [2]int, failAt map[string][]int, restarts int, scan *WireScan) windowRun {
	t.Helper()
	oldShare, oldPipe, oldBlocks, oldBytes := shareWindow, pipelineBatches, windowMaxBlocks, windowMaxBytes
	shareWindow, pipelineBatches = shared, shared
	if bounds != [2]int{} {
		windowMaxBlocks, windowMaxBytes = bounds[0], bounds[1]
	}
	defer func() {
		shareWindow, pipelineBatches, windowMaxBlocks, windowMaxBytes = oldShare, oldPipe, oldBlocks, oldBytes
	}()
	mappers := map[string]*recMapper{}
	for _, n := range []string{"a", "b"} {
		mappers[n] = &recMapper{name: n, delay: delays[n], failAt: failAt[n]}
	}
	launch := func(_ context.Context, name string) (*Plugin, error) {
		var m sdk.Mapper = mappers[name]
		kill := func() {}
		if grpc {
			c, stop, err := pluginwire.ServeInProcess(m, t.TempDir())
			if err != nil {
				return nil, err
			}
			m, kill = c, stop
			t.Cleanup(stop)
		}
		return &Plugin{Name: name, Mapper: m, Kill: kill}, nil
	}
	sink := &pluginSink{}
	var events []string
	p := New(Options{
		Scan:          scan,
		OnReadProblem: func(pr wire.Problem) { events = append(events, fmt.Sprintf("problem %+v", pr)) },
		OnSession: func(pt SessionPoint) {
			events = append(events, fmt.Sprintf("session %+v %+v %+v", pt.ID, pt.Seq, pt.Resolved))
		},
		WirePath: path, Connection: "c-window", Mode: sdk.ModeRebuild,
		Revisions: map[string][]string{"acp/2@x": {"a", "b"}}, SchemaRevision: "x", DefaultRevision: "acp/2@x",
		Launch: launch, Sink: sink, BatchFrames: 16, Sessions: windowSessions, ResolveSessions: true, MaxRestarts: restarts,
	})
	// The first pass is on while it has not read the log's last entry: wireSeq is the last
	// seq it read (MaxUint64 in the window until it reaches the end). captureDone is not
	// that signal: before the window, attachRebuild starts the feeders and then closes it,
	// so a feeder's first Map could find it open after the pass (a flaky probe).
	last := lastSeq(t, path)
	for _, m := range mappers {
		m.firstPassOn = func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.wireSeq == math.MaxUint64 || p.wireSeq < last
		}
	}
	if err := p.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	stats, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if p.win != nil && bounds != [2]int{} && p.win.peak > bounds[0] {
		t.Errorf("the window held %d blocks, bound %d", p.win.peak, bounds[0])
	}
	r := windowRun{calls: map[string][]string{}, stats: stats, events: events, early: mappers["a"].early}
	for n, m := range mappers {
		r.calls[n] = m.calls
	}
	r.outs, r.gaps = sink.sorted()
	return r
}

// lastSeq is the seq of path's last entry (past bad lines, as the pass reads).
func lastSeq(t *testing.T, path string) (last uint64) {
	t.Helper()
	eachWireEntry(t, path, func(e wire.Entry) { last = e.Seq })
	return last
}

// eachWireEntry calls f with each entry of the wire log at path, in order, past its bad
// lines (wire.Tolerant). e's bytes are the reader's: f copies what it keeps.
func eachWireEntry(t *testing.T, path string, f func(e wire.Entry)) {
	t.Helper()
	r, err := wire.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tr := wire.NewTolerant(r, nil)
	defer tr.Close()
	for {
		e, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		f(e)
	}
}

// pluginSink keeps each plugin's outputs in the order it delivered them.
type pluginSink struct {
	mu   sync.Mutex
	outs map[string][]string
	gaps []string
}

func (s *pluginSink) Output(plugin string, primary bool, o sdk.Output) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outs == nil {
		s.outs = map[string][]string{}
	}
	s.outs[plugin] = append(s.outs[plugin], fmt.Sprintf("%v %s %s", primary, o.Session, o.JSON))
}

func (s *pluginSink) Gap(plugin string, primary bool, through uint64, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gaps = append(s.gaps, fmt.Sprintf("%s %v %d %s", plugin, primary, through, reason))
}

func (s *pluginSink) sorted() ([]string, []string) {
	var out []string
	for _, n := range []string{"a", "b"} {
		for _, o := range s.outs[n] {
			out = append(out, n+": "+o)
		}
	}
	slices.Sort(s.gaps)
	return out, s.gaps
}

func sameRun(t *testing.T, what string, got, want windowRun) {
	t.Helper()
	for _, n := range []string{"a", "b"} {
		g, w := got.calls[n], want.calls[n]
		if len(g) != len(w) {
			t.Errorf("%s: plugin %s got %d batches, want %d", what, n, len(g), len(w))
		}
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Errorf("%s: plugin %s batch %d:\n got %s\nwant %s", what, n, i, g[i], w[i])
				break
			}
		}
	}
	if !slices.Equal(got.outs, want.outs) {
		t.Errorf("%s: outputs differ (%d, want %d)", what, len(got.outs), len(want.outs))
	}
	if !slices.Equal(got.gaps, want.gaps) {
		t.Errorf("%s: gaps %q, want %q", what, got.gaps, want.gaps)
	}
	if !slices.Equal(got.events, want.events) {
		t.Errorf("%s: events\n%q\nwant\n%q", what, got.events, want.events)
	}
	if fmt.Sprint(got.stats) != fmt.Sprint(want.stats) {
		t.Errorf("%s: stats %+v, want %+v", what, got.stats, want.stats)
	}
}

// TestSharedWindowSameFrames: the shared window gives each feeder exactly
// the batches its own reader of the wire log gave it (the old path), in
// process and over gRPC (pipelined), with a slow plugin holding a tight
// window back, over a log with a revision entry, several sessions, a gap,
// bad lines, a seq gap and a seq repeated.
func TestSharedWindowSameFrames(t *testing.T) {
	path := windowTestLog(t, 1200)
	old := rebuildWith(t, path, false, false, nil, [2]int{})
	if len(old.calls["a"]) < 50 || old.stats.Frames < 1000 || old.stats.GapFrames < 4 {
		t.Fatalf("the log is not what the test needs: %d batches, %+v", len(old.calls["a"]), old.stats)
	}
	text := strings.Join(old.calls["a"], "")
	for _, want := range []string{"/session sess_a 0", "/session sess_b 1", "/session sess_a 9", "queue full", wire.ReasonUnreadable, `\xff`} {
		if !strings.Contains(text, want) {
			t.Fatalf("no %q among the frames:\n%s", want, text[:min(len(text), 3000)])
		}
	}
	if len(old.events) < 5 {
		t.Fatalf("too few problems and sessions: %q", old.events)
	}
	sameRun(t, "shared", rebuildWith(t, path, true, false, nil, [2]int{}), old)
	firstPassInWindow = false
	sameRun(t, "shared, the first pass to the end before the window", rebuildWith(t, path, true, false, nil, [2]int{}), old)
	firstPassInWindow = true
	scan, err := ScanWire(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(scan.Sessions, []string{"sess_a", "sess_b"}) {
		t.Fatalf("scan names %q", scan.Sessions)
	}
	sameRun(t, "shared, first pass from the scan", rebuildFailing(t, path, true, false, nil, [2]int{}, nil, 0, scan), old)
	cp := filepath.Join(t.TempDir(), "copy.jsonl")
	b, _ := os.ReadFile(path)
	os.WriteFile(cp, b, 0o600)
	if scan.ForCopy(cp) == nil || scan.ForCopy(path+"-none") != nil {
		t.Fatal("ForCopy")
	}
	// A scan of another file is not used.
	other := windowTestLog(t, 100)
	sameRun(t, "a scan of another log", rebuildFailing(t, path, true, false, nil, [2]int{}, nil, 0, func() *WireScan { s, _ := ScanWire(other); return s }()), old)
	sameRun(t, "shared, a slow, window of 2 blocks", rebuildWith(t, path, true, false, map[string]time.Duration{"a": time.Millisecond}, [2]int{2, 1 << 20}), old)
	sameRun(t, "shared, b slow, window of 64 KiB", rebuildWith(t, path, true, false, map[string]time.Duration{"b": time.Millisecond}, [2]int{64, 1 << 10}), old)

	oldRPC := rebuildWith(t, path, false, true, nil, [2]int{})
	sameRun(t, "gRPC, old path, against in process", oldRPC, old)
	sameRun(t, "gRPC, shared and pipelined", rebuildWith(t, path, true, true, nil, [2]int{}), oldRPC)
	sameRun(t, "gRPC, shared and pipelined, a slow, window of 3 blocks", rebuildWith(t, path, true, true, map[string]time.Duration{"a": time.Millisecond}, [2]int{3, 1 << 20}), oldRPC)
}

// TestFirstPassInWindow: a rebuild without a scan feeds its plugins while
// its first pass is still reading the log (in the window's reader,
// firstpass.go) — the window holds 2 blocks of the log's ~75, so the pass
// cannot have reached the end at the first Map — and the run is the same,
// batch for batch, problem for problem, as one whose first pass read the
// log to the end before the feeders started; with a scan, or with the pass
// before the window, the first Map comes after the pass.
func TestFirstPassInWindow(t *testing.T) {
	path := windowTestLog(t, 1200)
	defer func(on bool) { firstPassInWindow = on }(firstPassInWindow)
	firstPassInWindow = false
	before := rebuildWith(t, path, true, false, nil, [2]int{2, 1 << 20})
	if before.early {
		t.Fatal("the first pass before the window: a plugin was fed before it ended")
	}
	firstPassInWindow = true
	for _, grpc := range []bool{false, true} {
		r := rebuildWith(t, path, true, grpc, map[string]time.Duration{"b": time.Millisecond}, [2]int{2, 1 << 20})
		if !r.early {
			t.Errorf("grpc %v: the plugins were fed only after the first pass", grpc)
		}
		sameRun(t, fmt.Sprintf("grpc %v, first pass in the window", grpc), r, before)
	}
	// A store that locks sessions: a lock waits until capture is done, so the
	// pass is made before the window.
	windowSessions = lockingSessions{}
	locked := rebuildWith(t, path, true, false, nil, [2]int{2, 1 << 20})
	windowSessions = fakeSessions{}
	if locked.early {
		t.Error("sessions locked: a plugin was fed before the first pass ended")
	}
	scan, err := ScanWire(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := rebuildFailing(t, path, true, false, nil, [2]int{2, 1 << 20}, nil, 0, scan); r.early {
		t.Error("with a scan: a plugin was fed before the first pass (the scan's replay) ended")
	}
}

// TestSharedWindowRestartAndGiveUp: a plugin that fails mid-way is
// restarted and re-fed from seq 1 (by a reader of its own): the outputs
// are those of a run without the failure; a plugin that gives up leaves
// the window, and the other maps to the end past it (a tight window).
func TestSharedWindowRestartAndGiveUp(t *testing.T) {
	path := windowTestLog(t, 600)
	old := rebuildWith(t, path, false, false, nil, [2]int{})
	for _, grpc := range []bool{false, true} {
		r := rebuildFailing(t, path, true, grpc, nil, [2]int{2, 1 << 20}, map[string][]int{"a": {5}}, 1, nil)
		if !slices.Equal(r.outs, old.outs) || len(r.gaps) != 0 || r.stats.Restarts != 1 {
			t.Errorf("grpc %v: restarted: %d outputs (want %d), gaps %q, restarts %d", grpc, len(r.outs), len(old.outs), r.gaps, r.stats.Restarts)
		}
		r = rebuildFailing(t, path, true, grpc, nil, [2]int{2, 1 << 20}, map[string][]int{"b": {3}}, 0, nil)
		var bOuts, wantA []string
		for _, o := range r.outs {
			if strings.HasPrefix(o, "b: ") {
				bOuts = append(bOuts, o)
			}
		}
		for _, o := range old.outs {
			if strings.HasPrefix(o, "a: ") {
				wantA = append(wantA, o)
			}
		}
		if len(r.gaps) != 1 || !strings.HasPrefix(r.gaps[0], "b false 32 ") {
			t.Errorf("grpc %v: gave up: gaps %q", grpc, r.gaps)
		}
		if got := r.outs[:len(r.outs)-len(bOuts)]; !slices.Equal(got, wantA) {
			t.Errorf("grpc %v: a's outputs after b gave up: %d, want %d", grpc, len(got), len(wantA))
		}
	}
}

// TestScanDetectsAsReading: the revision a rebuild detects from the scan is
// the one it detects reading the log, wherever the initialize exchange is
// (or is not) among the first frames.
func TestScanDetectsAsReading(t *testing.T) {
	req := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`
	resp := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"capabilities":{"session":{"title":{}}}}}`
	upd := `{"jsonrpc":"2.0","method":"x","params":{}}`
	for _, tc := range []struct{ req, resp, total int }{{1, 2, 10}, {0, 0, 100}, {0, 0, 3}, {60, 64, 80}, {60, 66, 80}, {64, 65, 70}, {65, 66, 70}, {3, 0, 5}} {
		path := filepath.Join(t.TempDir(), "w.jsonl")
		w, err := wire.Create(path, wire.Header{Connection: "c-det"})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= tc.total; i++ {
			e := wire.Entry{Type: wire.TypeFrame, Dir: sdk.A2C, Line: []byte(upd)}
			switch i {
			case tc.req:
				e.Dir, e.Line = sdk.C2A, []byte(req)
			case tc.resp:
				e.Line = []byte(resp)
			}
			if _, err := w.Append(e); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		scan, err := ScanWire(path)
		if err != nil {
			t.Fatal(err)
		}
		var got [2]string
		for i, s := range []*WireScan{nil, scan} {
			p := New(Options{WirePath: path, Mode: sdk.ModeRebuild, SchemaRevision: "x", DefaultRevision: "acp/1", Scan: s,
				Sink: &pluginSink{}, Revisions: map[string][]string{}})
			if err := p.Rebuild(context.Background()); err != nil {
				t.Fatal(err)
			}
			p.Wait()
			got[i] = p.det.revision + " / " + p.det.why
		}
		if got[0] != got[1] {
			t.Errorf("%+v: from the scan %q, reading %q", tc, got[1], got[0])
		}
	}
}

// TestSharedFramesThenOwn: a feeder that mapped the window's frames (built
// by the window's FrameBuilder) and leaves it mid-way builds the rest
// itself as if its own builder had seen every line before: a response
// after the leave is joined to its request before it. The frames are those
// of feeders that each build their own, in process and over gRPC.
func TestSharedFramesThenOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.jsonl")
	w, _, line := testLogWriter(t, path, "c-window")
	line(sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`)
	line(sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`)
	for i := range 300 {
		switch {
		case i%10 == 0:
			line(sdk.C2A, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m%d"}`, i, i))
		case i%10 == 3 && i > 20:
			line(sdk.A2C, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i-23))
		default:
			line(sdk.A2C, fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d}}`, i))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	old := rebuildWith(t, path, false, false, nil, [2]int{})
	if !strings.Contains(strings.Join(old.calls["a"], ""), `/"m270"/`) {
		t.Fatal("no response joined to its request")
	}
	defer func(n int) { leaveWindowAfter = n }(leaveWindowAfter)
	for _, grpc := range []bool{false, true} {
		want := old
		if grpc {
			want = rebuildWith(t, path, false, true, nil, [2]int{})
		}
		for _, n := range []int{0, 1, 5, 11} {
			leaveWindowAfter = n
			sameRun(t, fmt.Sprintf("grpc %v, leaving after %d blocks", grpc, n), rebuildWith(t, path, true, grpc, nil, [2]int{}), want)
		}
	}
}
