package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// handoverChunks is a connection's chunks in arrival order, cut inside lines: a session/new
// whose MCP server env the wire log scrubs, session ids, a line longer than a read, bytes
// the tee lost, and a last line without LF.
func handoverChunks() []captured.Item {
	var items []captured.Item
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	add := func(dir sdk.Direction, c *captured.Chunk) {
		at = at.Add(time.Millisecond)
		items = append(items, captured.Item{Dir: dir, At: at, Chunk: c})
	}
	data := func(s string) *captured.Chunk { return &captured.Chunk{Data: []byte(s)} }
	add(sdk.C2A, data(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`+"\n"))
	add(sdk.A2C, data(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`+"\n"))
	add(sdk.C2A, data(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"m","command":"x","args":[],"env":[{"name":"TOKEN","value":"s3cr`))
	add(sdk.C2A, data(`et"}]}]}}`+"\n"))
	add(sdk.A2C, data(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}`+"\n"+`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"he`))
	add(sdk.A2C, data(`llo"}}}}`+"\n"))
	long := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 150<<10) + `"}}}}` + "\n"
	for len(long) > 0 {
		n := min(len(long), 40<<10)
		add(sdk.A2C, data(long[:n]))
		long = long[n:]
	}
	add(sdk.C2A, data(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[]}}`+"\n"+`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/v","mcpServers":[]}}`+"\n"))
	add(sdk.A2C, data(`{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s-2"}}`+"\n"+`{"partial`))
	add(sdk.A2C, &captured.Chunk{Lost: captured.Lost{Bytes: 500, LFs: 3}, Data: []byte(`tail of a lost line"}` + "\n" + `{"after":"loss"}` + "\n")})
	for i := range 5 {
		add(sdk.A2C, data(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-2","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"%d"}}}}`+"\n", i)))
	}
	add(sdk.C2A, &captured.Chunk{Data: []byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-2"}}`), EOF: true})
	add(sdk.A2C, &captured.Chunk{Data: []byte(`{"no":"lf"}`), EOF: true})
	return items
}

func handoverPipeline(path string) *Pipeline {
	return New(Options{WirePath: path, Connection: "c-handover", Mode: sdk.ModeRecord, Sink: &memSink{},
		Now: func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }, StallTimeout: time.Minute})
}

// copyItems gives each run its own chunks (the pipeline releases what it took): on the
// heap, or with an arena as the tee makes them there (read buffers and slab parts by
// turns; a chunk longer than a slot on the heap, as when the arena is used up).
func copyItems(items []captured.Item, a *captured.Arena) []captured.Item {
	out := make([]captured.Item, len(items))
	slab := a.NewSlab()
	defer slab.Drop()
	for i, it := range items {
		d := it.Chunk.Data
		var ch *captured.Chunk
		switch {
		case a == nil || len(d) == 0 || len(d) > captured.BufferSize:
			ch = &captured.Chunk{Data: bytes.Clone(d)}
		case i%2 == 0:
			ch = a.Buffer()
			ch.Share(copy(ch.Buf(), d))
			ch.WriteDone()
		default:
			if slab.Room() < len(d) {
				slab.Drop()
				slab = a.NewSlab()
			}
			ch = slab.Part(d)
		}
		ch.Lost, ch.EOF = it.Chunk.Lost, it.Chunk.EOF
		it.Chunk = ch
		out[i] = it
	}
	return out
}

// TestHandoverContinuesByteForByte: capture stopped after any number of chunks, the rest
// of the queue spooled (captured.WriteSpool) and captured by another pipeline from the
// spool (Continue) writes a wire log byte-identical to one capture of everything — the
// finisher's hand-over at exit loses, repeats and reorders nothing of the native capture
// (ASR-723), and the continued capture scrubs the MCP secret as live capture does (ASR-712).
//
// With the queue in an arena (captured.Arena), the chunks that lie there are spooled as
// where they lie and read back through a second, read-only mapping of its memory file, as
// the finisher maps the one it inherits.
func TestHandoverContinuesByteForByte(t *testing.T) {
	t.Run("heap", func(t *testing.T) { testHandover(t, false) })
	t.Run("arena", func(t *testing.T) { testHandover(t, true) })
}

func testHandover(t *testing.T, withArena bool) {
	var arena *captured.Arena
	var view []byte
	if withArena {
		a, err := captured.NewArena(64 * captured.BufferSize)
		if err != nil {
			t.Skip("no arena here:", err)
		}
		arena = a
		if view, err = captured.MapArenaFile(a.File()); err != nil {
			t.Fatal(err)
		}
	}
	all := handoverChunks()
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.jsonl")
	p := handoverPipeline(ref)
	q := make(chan captured.Item, len(all))
	for _, it := range copyItems(all, arena) {
		q <- it
	}
	close(q)
	if err := p.Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	handedOver, inPlace := 0, 0
	for cut := 0; cut <= len(all); cut++ {
		path := filepath.Join(dir, fmt.Sprintf("cut%d.jsonl", cut))
		items := copyItems(all, arena)
		p := handoverPipeline(path)
		q := make(chan captured.Item, len(all))
		if err := p.Start(context.Background(), q); err != nil {
			t.Fatal(err)
		}
		for _, it := range items[:cut] {
			q <- it
		}
		// Let capture take what it can of the first part; the stop comes wherever.
		for range 100 {
			if len(q) == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		h, ok := p.StopCapture()
		if !ok {
			t.Fatalf("cut %d: capture had ended", cut)
		}
		for _, it := range items[cut:] {
			q <- it
		}
		close(q)
		if err := p.CloseWireNoSync(); err != nil {
			t.Fatal(err)
		}
		var spool bytes.Buffer
		if _, err := captured.WriteSpool(&spool, captured.SpoolHeader{Lines: h.Lines}, q, arena); err != nil {
			t.Fatal(err)
		}
		hdr, next, err := captured.ReadSpool(&spool, view)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(hdr.Lines) != fmt.Sprint(h.Lines) {
			t.Fatalf("cut %d: spool header %+v, want %+v", cut, hdr.Lines, h.Lines)
		}
		rest := make(chan captured.Item)
		go func() {
			defer close(rest)
			for {
				it, err := next()
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				if d := it.Chunk.Data; len(d) > 0 && len(view) > 0 &&
					uintptr(unsafe.Pointer(&d[0])) >= uintptr(unsafe.Pointer(&view[0])) &&
					uintptr(unsafe.Pointer(&d[0])) < uintptr(unsafe.Pointer(&view[0]))+uintptr(len(view)) {
					inPlace++
				}
				rest <- it
			}
		}()
		c := handoverPipeline(path)
		if err := c.Continue(context.Background(), h, rest); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Wait(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("cut %d (seq %d): continued wire log differs at %s", cut, h.Seq, firstDiff(got, want))
		}
		if h.Lines[1].Open || h.Lines[0].Open {
			handedOver++
		}
	}
	if handedOver == 0 {
		t.Fatal("no cut fell inside a line: the splitter's state was never handed over")
	}
	if withArena && inPlace == 0 {
		t.Error("no spooled chunk was read in place from the arena's mapping")
	}
	if bytes.Contains(want, []byte("s3cret")) {
		t.Fatal("the secret reached the wire log")
	}
}

func clip(b []byte) string {
	s := string(b)
	if len(s) > 600 {
		s = s[:300] + " … " + s[len(s)-300:]
	}
	return s
}

func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range max(len(la), len(lb)) {
		var x, y []byte
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if !bytes.Equal(x, y) {
			return fmt.Sprintf("line %d:\n got: %.400s\nwant: %.400s", i+1, x, y)
		}
	}
	return ""
}

// gateMapper blocks every Map until gate is closed.
type gateMapper struct {
	lineMapper
	gate chan struct{}
}

func (m *gateMapper) Start(context.Context, sdk.StartRequest) (sdk.Session, error) { return m, nil }

func (m *gateMapper) Map(ctx context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	<-m.gate
	return m.lineMapper.Map(ctx, frames)
}

func (m *gateMapper) mapped() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.lines)
}

// TestOnBehind: Options.OnBehind is called once when a plugin cannot keep up with the
// tee, and not for a connection whose plugin keeps up.
func TestOnBehind(t *testing.T) {
	for _, slow := range []bool{true, false} {
		t.Run(fmt.Sprintf("slow=%v", slow), func(t *testing.T) {
			m := &gateMapper{gate: make(chan struct{})}
			if !slow {
				close(m.gate)
			}
			var calls atomic.Int32
			called := make(chan struct{}, 8)
			p := New(Options{
				WirePath: filepath.Join(t.TempDir(), "w.jsonl"), Connection: "c-behind", Mode: sdk.ModeRecord,
				Revisions: map[string][]string{"acp/2@x": {"lines"}}, SchemaRevision: "x", DefaultRevision: "acp/2@x",
				ForceRevision: "acp/2@x", Sink: &memSink{}, BatchFrames: 1, FeederDepth: 1, StallTimeout: time.Minute,
				Launch:   func(context.Context, string) (*Plugin, error) { return &Plugin{Name: "lines", Mapper: m}, nil },
				OnBehind: func() { calls.Add(1); called <- struct{}{} },
			})
			items := make(chan captured.Item, 64)
			if err := p.Start(context.Background(), items); err != nil {
				t.Fatal(err)
			}
			for i := range 40 {
				items <- captured.Item{Dir: sdk.A2C, At: time.Unix(int64(i), 0), Chunk: &captured.Chunk{Data: []byte(fmt.Sprintf(`{"n":%d}`+"\n", i))}}
				for !slow && m.mapped() <= i { // one line at a time, each mapped before the next
					time.Sleep(time.Millisecond)
				}
			}
			if slow {
				select {
				case <-called:
				case <-time.After(30 * time.Second):
					t.Fatal("OnBehind not called while the plugin was blocked")
				}
				close(m.gate)
			}
			close(items)
			if _, err := p.Wait(); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int32{true: 1, false: 0}[slow]; calls.Load() != want {
				t.Errorf("OnBehind called %d times, want %d", calls.Load(), want)
			}
		})
	}
}
