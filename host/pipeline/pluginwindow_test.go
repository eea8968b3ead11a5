package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// batchMapper records the batches it is given, line by line.
type batchMapper struct {
	mu      sync.Mutex
	batches [][]string
}

func (m *batchMapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "lines", Version: "1", Inputs: []string{"acp/2@x"}, Outputs: []sdk.Format{"asr"}, Capabilities: []sdk.Capability{"record"}}, nil
}

func (m *batchMapper) Start(context.Context, sdk.StartRequest) (sdk.Session, error) { return m, nil }

func (m *batchMapper) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	var b []string
	for _, f := range frames {
		if f.Kind == sdk.KindLine {
			b = append(b, string(f.Data))
		}
	}
	m.mu.Lock()
	m.batches = append(m.batches, b)
	m.mu.Unlock()
	return nil, nil
}

func (m *batchMapper) Finish(context.Context, string) ([]sdk.Output, error) { return nil, nil }

// seen returns the batches so far, and how many lines they hold.
func (m *batchMapper) seen() ([][]string, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, b := range m.batches {
		n += len(b)
	}
	return append([][]string(nil), m.batches...), n
}

// initResult is the agent's answer to initialize in these runs.
const initResult = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`

// gatherRun is a recording's pipeline with a plugin window, fed chunk by chunk by the
// test as the tee would (queue, then ring).
type gatherRun struct {
	t    *testing.T
	p    *Pipeline
	m    *batchMapper
	raw  chan captured.Item
	bell chan struct{}
	path string
}

func startGatherRun(t *testing.T, coalesce, pluginWindow time.Duration, batchFrames int) *gatherRun {
	t.Helper()
	r := &gatherRun{t: t, m: &batchMapper{}, raw: make(chan captured.Item, 64), bell: make(chan struct{}, 1),
		path: filepath.Join(t.TempDir(), "w.jsonl")}
	launch := func(context.Context, string) (*Plugin, error) {
		// The plugin starts once capture has flushed the initialize exchange, while the
		// feeder is still behind: the exchange is then never gathered (nothing is for a
		// feeder that is behind), and the feeder catches it up from the wire log.
		waitFor(t, "the initialize exchange in the wire log", func() bool { return r.inWire(initResult) })
		r.p.mu.Lock() // capture flushes and decides under it
		r.p.mu.Unlock()
		return &Plugin{Name: "lines", Mapper: r.m}, nil
	}
	r.p = New(Options{
		WirePath: r.path, Connection: "c-test", Mode: sdk.ModeRecord,
		Revisions: map[string][]string{"acp/2@x": {"lines"}}, SchemaRevision: "x", DefaultRevision: "acp/2@x",
		Launch: launch, Sink: &memSink{}, BatchFrames: batchFrames, StallTimeout: time.Minute,
		Coalesce: coalesce, PluginWindow: pluginWindow, Doorbell: r.bell,
	})
	if err := r.p.Start(context.Background(), r.raw); err != nil {
		t.Fatal(err)
	}
	r.send(sdk.C2A, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`+"\n"))
	r.send(sdk.A2C, []byte(initResult+"\n"))
	// A recording's feeder attaches behind and catches up from the wire log (which
	// holds the initialize exchange however capture batches it): the test goes on once
	// it is live, so that what follows reaches it only from capture.
	waitFor(t, "the plugin live", func() bool {
		r.p.mu.Lock()
		defer r.p.mu.Unlock()
		return len(r.p.feeders) == 1 && !r.p.feeders[0].behind.Load()
	})
	if _, n := r.m.seen(); n != 2 {
		t.Fatalf("the plugin caught up with %d lines, want the initialize exchange's 2", n)
	}
	return r
}

func (r *gatherRun) send(dir sdk.Direction, data []byte) {
	r.raw <- captured.Item{Dir: dir, At: time.Now(), Chunk: &captured.Chunk{Data: data}}
	select {
	case r.bell <- struct{}{}:
	default:
	}
}

func (r *gatherRun) close() Stats {
	r.t.Helper()
	close(r.raw)
	select {
	case r.bell <- struct{}{}:
	default:
	}
	stats, err := r.p.Wait()
	if err != nil {
		r.t.Fatal(err)
	}
	return stats
}

// waitFor polls cond (for up to a minute: the test asserts on what happens, not when).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("still waiting for %s after a minute", what)
		}
	}
}

// inWire says whether the wire log on disk holds line (flushed), as a frame's JSON string.
func (r *gatherRun) inWire(line string) bool {
	b, _ := os.ReadFile(r.path)
	q, _ := json.Marshal(line)
	return bytes.Contains(b, q)
}

// TestPluginWindowGathersBatches (ASR-723: the frames retained in order): within
// tee.plugin_window, the batches of several coalescing windows reach the plugin as one,
// while each is in the wire log as soon as its window ends; the lines the plugin gets are
// its own (the tee's chunk is reused once capture has flushed it); a full batch goes at
// once; and the end of the queue sends what is left. Nothing is gathered while the plugin is
// behind (the initialize exchange, flushed before it caught up). The plugin sees every frame,
// in order.
func TestPluginWindowGathersBatches(t *testing.T) {
	r := startGatherRun(t, 0, time.Hour, 8)
	var want []string
	for i := range 5 {
		line := fmt.Sprintf(`{"i":%d}`, i)
		data := []byte(line + "\n")
		r.send(sdk.A2C, data)
		// Each read is a coalescing window of its own (coalesce 0): in the wire log,
		// then the chunk's buffer goes back to the tee, which reads into it again.
		waitFor(t, line+" in the wire log", func() bool { return r.inWire(line) })
		r.p.mu.Lock() // capture flushes the wire log and copies the batch's lines under it
		r.p.mu.Unlock()
		copy(data, bytes.Repeat([]byte("X"), len(data)-1))
		want = append(want, line)
	}
	if _, n := r.m.seen(); n != 2 {
		t.Errorf("the plugin saw %d lines within an hour's plugin window, want the 2 it caught up with (the rest gathered)", n)
	}
	// Three more lines fill the batch of 8: it goes at once. (The initialize exchange
	// was not gathered: the plugin was still catching up from the wire log then, and
	// nothing is gathered for a feeder that is behind.)
	for i := 5; i < 8; i++ {
		line := fmt.Sprintf(`{"i":%d}`, i)
		r.send(sdk.A2C, []byte(line+"\n"))
		want = append(want, line)
	}
	waitFor(t, "a full batch", func() bool { _, n := r.m.seen(); return n >= 10 })
	r.send(sdk.A2C, []byte(`{"i":8}`+"\n"))
	want = append(want, `{"i":8}`)
	waitFor(t, `{"i":8} in the wire log`, func() bool { return r.inWire(`{"i":8}`) })
	if _, n := r.m.seen(); n != 10 {
		t.Errorf("the plugin saw %d lines before the end, want 10", n)
	}
	if st := r.close(); st.Frames != 11 {
		t.Errorf("%d frames captured, want 11", st.Frames)
	}
	batches, _ := r.m.seen()
	var got []string
	for _, b := range batches {
		if len(b) > 8 {
			t.Errorf("a batch of %d lines, more than tee.batch_frames (8)", len(b))
		}
		got = append(got, b...)
	}
	if len(got) != 11 || fmt.Sprint(got[2:]) != fmt.Sprint(want) {
		t.Errorf("the plugin saw %q, want the initialize exchange then %q", got, want)
	}
	if len(batches) != 3 {
		t.Errorf("%d batches, want 3 (the catch-up, the full one, the rest at the end): %q", len(batches), batches)
	}
}

// TestPluginWindowIsBounded: what capture gathers for the plugins reaches them once the
// window is over with no more traffic (a quiet session is not held back), and at once
// when the recording hurries (the agent has exited). Without the window every coalescing
// window is a batch of its own (the control).
func TestPluginWindowIsBounded(t *testing.T) {
	t.Run("window over", func(t *testing.T) {
		r := startGatherRun(t, 0, 20*time.Millisecond, 256)
		r.send(sdk.A2C, []byte(`{"i":0}`+"\n"))
		waitFor(t, "the lines after the window", func() bool { _, n := r.m.seen(); return n == 3 })
		r.close()
	})
	t.Run("hurried", func(t *testing.T) {
		r := startGatherRun(t, 0, time.Hour, 256)
		r.send(sdk.A2C, []byte(`{"i":0}`+"\n"))
		waitFor(t, "the line in the wire log", func() bool { return r.inWire(`{"i":0}`) })
		if _, n := r.m.seen(); n != 2 {
			t.Fatalf("the plugin saw %d lines within an hour's window, want the 2 it caught up with", n)
		}
		r.p.Hurry()
		waitFor(t, "the lines once hurried", func() bool { _, n := r.m.seen(); return n == 3 })
		r.send(sdk.A2C, []byte(`{"i":1}`+"\n")) // hurried: no more gathering
		waitFor(t, "a line after the hurry", func() bool { _, n := r.m.seen(); return n == 4 })
		r.close()
	})
	t.Run("off", func(t *testing.T) {
		r := startGatherRun(t, 0, 0, 256)
		waitFor(t, "the initialize exchange", func() bool { _, n := r.m.seen(); return n == 2 })
		for i := range 3 {
			line := fmt.Sprintf(`{"i":%d}`, i)
			r.send(sdk.A2C, []byte(line+"\n"))
			waitFor(t, line, func() bool { _, n := r.m.seen(); return n == 3+i })
		}
		r.close()
		if b, _ := r.m.seen(); len(b) < 4 {
			t.Errorf("%d batches without a plugin window, want a batch a window (at least 4)", len(b))
		}
	})
}

// sawInitializeThen checks that the plugin got the initialize exchange, then line(0) …
// line(lines-1), in order.
func (r *gatherRun) sawInitializeThen(lines int, line func(int) string) {
	r.t.Helper()
	batches, _ := r.m.seen()
	var got, want []string
	for _, b := range batches {
		got = append(got, b...)
	}
	for i := range lines {
		want = append(want, line(i))
	}
	if len(got) != 2+lines || fmt.Sprint(got[2:]) != fmt.Sprint(want) {
		r.t.Errorf("the plugin saw %q, want the initialize exchange then %q", got, want)
	}
}
