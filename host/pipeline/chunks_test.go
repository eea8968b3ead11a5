package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// lineMapper records the lines it is given and the largest batch.
type lineMapper struct {
	mu       sync.Mutex
	lines    []string
	maxBatch int
}

func (m *lineMapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "lines", Version: "1", Inputs: []string{"acp/2@x"}, Outputs: []sdk.Format{"asr"}, Capabilities: []sdk.Capability{"record"}}, nil
}

func (m *lineMapper) Start(context.Context, sdk.StartRequest) (sdk.Session, error) { return m, nil }

func (m *lineMapper) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.maxBatch = max(m.maxBatch, len(frames))
	for _, f := range frames {
		switch f.Kind {
		case sdk.KindLine:
			m.lines = append(m.lines, f.Dir.String()+" "+string(f.Data))
		case sdk.KindGap:
			m.lines = append(m.lines, fmt.Sprintf("%s gap %d/%d", f.Dir, f.Gap.Frames, f.Gap.Bytes))
		}
	}
	return nil, nil
}

func (m *lineMapper) Finish(context.Context, string) ([]sdk.Output, error) { return nil, nil }

// TestCaptureSplitsChunks: the pipeline takes the tee's chunks, splits them
// into lines (carried across chunks, per direction), declares lost bytes as a
// gap, ends a line without LF with nolf, and hands the plugin the same lines
// in batches of at most BatchFrames.
func TestCaptureSplitsChunks(t *testing.T) {
	m := &lineMapper{}
	launch := func(context.Context, string) (*Plugin, error) {
		return &Plugin{Name: "lines", Mapper: m}, nil
	}
	path := filepath.Join(t.TempDir(), "w.jsonl")
	p := New(Options{
		WirePath: path, Connection: "c-test", Mode: sdk.ModeRecord,
		Revisions: map[string][]string{"acp/2@x": {"lines"}}, SchemaRevision: "x", DefaultRevision: "acp/2@x",
		Launch: launch, Sink: &memSink{}, BatchFrames: 4, StallTimeout: time.Minute,
	})
	items := make(chan captured.Item, 64)
	if err := p.Start(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	send := func(dir sdk.Direction, c *captured.Chunk) {
		items <- captured.Item{Dir: dir, At: time.Unix(1, 0), Chunk: c}
	}
	// The initialize exchange, cut inside both lines and interleaved by direction.
	send(sdk.C2A, &captured.Chunk{Data: []byte(`{"jsonrpc":"2.0","id":0,"method":"initia`)})
	send(sdk.A2C, &captured.Chunk{Data: []byte(`{"jsonrpc":"2.0","id":0,"res`)})
	send(sdk.C2A, &captured.Chunk{Data: []byte(`lize","params":{"protocolVersion":2}}` + "\n")})
	send(sdk.A2C, &captured.Chunk{Data: []byte(`ult":{"protocolVersion":2}}` + "\n" + `{"i":1}` + "\n" + `{"i":`)})
	var many strings.Builder
	for i := 2; i < 12; i++ {
		fmt.Fprintf(&many, `{"i":%d}`+"\n", i)
	}
	send(sdk.A2C, &captured.Chunk{Data: []byte(many.String()[len(`{"i":`):] + `{"lost`)}) // completes {"i": … 2}
	// Lost: the rest of that line, a whole line, and the start of the next.
	send(sdk.A2C, &captured.Chunk{Lost: captured.Lost{Bytes: 20, LFs: 2}, Data: []byte(`end of the lost line` + "\n" + `{"i":12}` + "\n" + "tail")})
	send(sdk.A2C, &captured.Chunk{EOF: true})
	send(sdk.C2A, &captured.Chunk{Data: []byte("no LF at the end")})
	close(items)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}

	var wireLines []string
	eachWireEntry(t, path, func(e wire.Entry) {
		switch e.Type {
		case wire.TypeFrame:
			s := e.Dir.String() + " " + string(e.Line)
			if e.NoLF {
				s += " <nolf>"
			}
			wireLines = append(wireLines, s)
		case wire.TypeGap:
			wireLines = append(wireLines, fmt.Sprintf("%s gap %d/%d %s", e.Dir, e.Gap.Frames, e.Gap.Bytes, e.Gap.Reason))
		}
	})
	want := []string{
		`c2a {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`,
		`a2c {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`,
		`a2c {"i":1}`,
	}
	for i := 2; i < 12; i++ {
		want = append(want, fmt.Sprintf(`a2c {"i":%d}`, i))
	}
	// {"lost + 20 bytes (2 LFs) + "end of the lost line": the line of {"lost, one more, and
	// the one the lost bytes end in.
	want = append(want, fmt.Sprintf("a2c gap 3/%d capture queue full", len(`{"lost`)+18+len(`end of the lost line`)),
		`a2c {"i":12}`, "a2c tail <nolf>", "c2a no LF at the end <nolf>")
	if strings.Join(wireLines, "\n") != strings.Join(want, "\n") {
		t.Errorf("wire log:\n%s\nwant:\n%s", strings.Join(wireLines, "\n"), strings.Join(want, "\n"))
	}
	var mapped []string
	for _, w := range want {
		mapped = append(mapped, strings.TrimSuffix(strings.TrimSuffix(w, " capture queue full"), " <nolf>"))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if strings.Join(m.lines, "\n") != strings.Join(mapped, "\n") {
		t.Errorf("plugin saw:\n%s\nwant:\n%s", strings.Join(m.lines, "\n"), strings.Join(mapped, "\n"))
	}
	if m.maxBatch > 4 {
		t.Errorf("a batch of %d frames; BatchFrames is 4", m.maxBatch)
	}
}

// TestDispatchOwnsLines: the lines a live feeder gets do not alias capture's
// (the tee recycles its buffers once capture released them).
func TestDispatchOwnsLines(t *testing.T) {
	chunk := []byte("abc\ndef\n")
	batch := []wire.Entry{{Type: wire.TypeFrame, Line: chunk[:3]}, {Type: wire.TypeGap}, {Type: wire.TypeFrame, Line: chunk[4:7]}}
	ownLines(batch, nil)
	copy(chunk, "XXXXXXXX")
	if string(batch[0].Line) != "abc" || batch[1].Line != nil || string(batch[2].Line) != "def" {
		t.Errorf("lines %q %q %q", batch[0].Line, batch[1].Line, batch[2].Line)
	}
	if cap(batch[0].Line) != 3 {
		t.Errorf("a line's capacity reaches its neighbour")
	}
}

// TestCoalesceKeepsFrames (ASR-723: the frames retained in order): with a
// coalescing window the plugins see the same frames, in the same order, as without (only the batching may differ), and
// the last batch is not held back when the tee closes the queue. With the
// tee's doorbell, capture sleeps out the window; once the recording hurries
// it (the agent has exited), a window of an hour holds nothing back either.
func TestCoalesceKeepsFrames(t *testing.T) {
	var results [][]string
	for _, tc := range []struct {
		window time.Duration
		bell   bool
	}{{0, false}, {2 * time.Millisecond, false}, {time.Hour, false}, {2 * time.Millisecond, true}, {time.Hour, true}} {
		window := tc.window
		var bell chan struct{}
		if tc.bell {
			bell = make(chan struct{}, 1)
		}
		m := &lineMapper{}
		launch := func(context.Context, string) (*Plugin, error) {
			return &Plugin{Name: "lines", Mapper: m}, nil
		}
		p := New(Options{
			WirePath: filepath.Join(t.TempDir(), "w.jsonl"), Connection: "c-test", Mode: sdk.ModeRecord,
			Revisions: map[string][]string{"acp/2@x": {"lines"}}, SchemaRevision: "x", DefaultRevision: "acp/2@x",
			Launch: launch, Sink: &memSink{}, BatchFrames: 16, StallTimeout: time.Minute, Coalesce: window,
			Doorbell: bell,
		})
		raw := make(chan captured.Item, 4)
		if err := p.Start(context.Background(), raw); err != nil {
			t.Fatal(err)
		}
		items := make(chan captured.Item)
		go func() { // the tee: queue, then ring
			for it := range items {
				raw <- it
				if bell != nil {
					select {
					case bell <- struct{}{}:
					default:
					}
				}
			}
			if tc.bell && window == time.Hour {
				p.Hurry() // as the recording does once the agent has exited
			}
			close(raw)
			if bell != nil {
				select {
				case bell <- struct{}{}:
				default:
				}
			}
		}()
		items <- captured.Item{Dir: sdk.C2A, Chunk: &captured.Chunk{Data: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}` + "\n")}}
		items <- captured.Item{Dir: sdk.A2C, Chunk: &captured.Chunk{Data: []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}` + "\n")}}
		for i := range 100 {
			if i%10 == 0 {
				runtime.Gosched() // let capture catch up now and then: batches of every size
			}
			items <- captured.Item{Dir: sdk.A2C, Chunk: &captured.Chunk{Data: []byte(fmt.Sprintf(`{"i":%d}`+"\n"+`{"j":`, i))}}
			items <- captured.Item{Dir: sdk.A2C, Chunk: &captured.Chunk{Data: []byte(fmt.Sprintf(`%d}`+"\n", i))}}
		}
		items <- captured.Item{Dir: sdk.C2A, Chunk: &captured.Chunk{Data: []byte("last"), EOF: true}}
		close(items)
		stats, err := p.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if stats.Frames != 203 {
			t.Errorf("window %s (doorbell %v): %d frames captured, want 203", window, tc.bell, stats.Frames)
		}
		m.mu.Lock()
		results = append(results, m.lines)
		m.mu.Unlock()
	}
	for i := 1; i < len(results); i++ {
		if strings.Join(results[i], "\n") != strings.Join(results[0], "\n") {
			t.Errorf("the plugin saw other frames with coalescing (%d vs %d lines)", len(results[i]), len(results[0]))
		}
	}
	if len(results[0]) != 203 {
		t.Errorf("the plugin saw %d lines, want 203", len(results[0]))
	}
}

// TestCaptureReusesUntakenBatches (ASR-723: the frames retained in order, also with the
// batch arrays reused): a batch no feeder takes (capture only here; every plugin
// catching up from the wire log in a burst) leaves its array to capture for the next one,
// where a new array a batch was most of what a recording allocated in a burst; a batch a
// feeder took is never written again: capture makes the next one anew.
func TestCaptureReusesUntakenBatches(t *testing.T) {
	const chunks, perChunk = 40, 10
	// paced: each chunk is sent once the plugin has mapped the one before, so that the
	// feeder, caught up, takes the batches live.
	run := func(t *testing.T, revisions map[string][]string, m *lineMapper, paced bool) (made int64, wireLines []string) {
		launch := func(context.Context, string) (*Plugin, error) {
			return &Plugin{Name: "lines", Mapper: m}, nil
		}
		path := filepath.Join(t.TempDir(), "w.jsonl")
		p := New(Options{
			WirePath: path, Connection: "c-test", Mode: sdk.ModeRecord,
			Revisions: revisions, SchemaRevision: "x", DefaultRevision: "acp/2@x", ForceRevision: "acp/2@x",
			Launch: launch, Sink: &memSink{}, BatchFrames: 4, StallTimeout: time.Minute,
		})
		items := make(chan captured.Item, chunks+1)
		before := batchesMade.Load()
		if err := p.Start(context.Background(), items); err != nil {
			t.Fatal(err)
		}
		for i := range chunks {
			var b strings.Builder
			for j := range perChunk {
				fmt.Fprintf(&b, `{"i":%d}`+"\n", i*perChunk+j)
			}
			items <- captured.Item{Dir: sdk.A2C, At: time.Unix(1, 0), Chunk: &captured.Chunk{Data: []byte(b.String())}}
			for deadline := time.Now().Add(10 * time.Second); paced; time.Sleep(time.Millisecond) {
				m.mu.Lock()
				n := len(m.lines)
				m.mu.Unlock()
				if n >= (i+1)*perChunk {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the plugin mapped %d lines of %d", n, (i+1)*perChunk)
				}
			}
		}
		close(items)
		if _, err := p.Wait(); err != nil {
			t.Fatal(err)
		}
		made = batchesMade.Load() - before
		eachWireEntry(t, path, func(e wire.Entry) {
			if e.Type == wire.TypeFrame {
				wireLines = append(wireLines, string(e.Line))
			}
		})
		return made, wireLines
	}
	want := make([]string, 0, chunks*perChunk)
	for i := range chunks * perChunk {
		want = append(want, fmt.Sprintf(`{"i":%d}`, i))
	}
	t.Run("untaken", func(t *testing.T) {
		made, lines := run(t, map[string][]string{}, &lineMapper{}, false)
		if made != 1 {
			t.Errorf("capture made %d batch arrays for %d batches no feeder took, want 1", made, chunks*perChunk/4)
		}
		if !slices.Equal(lines, want) {
			t.Errorf("wire log lines:\n%q\nwant\n%q", lines, want)
		}
	})
	t.Run("taken", func(t *testing.T) {
		m := &lineMapper{}
		made, lines := run(t, map[string][]string{"acp/2@x": {"lines"}}, m, true)
		if !slices.Equal(lines, want) {
			t.Errorf("wire log lines:\n%q\nwant\n%q", lines, want)
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		var mapped []string
		for _, l := range m.lines {
			mapped = append(mapped, strings.TrimPrefix(l, "a2c "))
		}
		if !slices.Equal(mapped, want) {
			t.Errorf("the plugin mapped:\n%q\nwant\n%q", mapped, want)
		}
		// Each chunk after the first is three batches (4, 4, 2 lines) that the feeder, caught
		// up, takes live (one it has no room for is caught up from the wire log instead, and
		// its array reused: how many depends on the scheduling).
		if made < 2 {
			t.Errorf("capture made %d batch arrays with a feeder taking the batches, want one a batch taken", made)
		}
	})
}
