//go:build linux

package finisher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// spoolItems: two directions cut inside lines, one chunk with bytes the tee lost.
func spoolItems() []captured.Item {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var out []captured.Item
	add := func(d sdk.Direction, s string, lost captured.Lost, eof bool) {
		at = at.Add(time.Millisecond)
		out = append(out, captured.Item{Dir: d, At: at, Chunk: &captured.Chunk{Data: []byte(s), Lost: lost, EOF: eof}})
	}
	add(sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`+"\n", captured.Lost{}, false)
	add(sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`+"\n"+`{"a":`, captured.Lost{}, false)
	add(sdk.A2C, `1}`+"\n"+`{"b":2}`+"\n"+`{"c"`, captured.Lost{}, false) // cut here: a2c has a line open
	add(sdk.A2C, `:3}`+"\n"+`{"d":4}`+"\n", captured.Lost{}, false)
	add(sdk.C2A, `{"e":5}`+"\n"+`{"f"`, captured.Lost{Bytes: 40, LFs: 2}, false)
	add(sdk.A2C, `{"g":6}`, captured.Lost{}, true)
	add(sdk.C2A, `:7}`+"\n", captured.Lost{}, true)
	return out
}

// splitterGaps is the oracle: what a Splitter declares when everything after the cut is
// lost the way the tee loses bytes (Chunk.Lost), per direction.
func splitterGaps(lines [2]captured.LineState, rest []captured.Item) captured.Remainder {
	s := captured.NewSplitter(0)
	s.SetState(lines)
	var rem captured.Remainder
	emit := func(it captured.Item) {
		if it.Gap != nil {
			i := 0
			if it.Dir == sdk.A2C {
				i = 1
			}
			rem[i].Frames += it.Gap.Frames
			rem[i].Bytes += it.Gap.Bytes
		}
	}
	for _, it := range rest {
		c := it.Chunk
		l := c.Lost
		if n := len(c.Data); n > 0 {
			l.Bytes += uint64(n)
			l.LFs += uint64(bytes.Count(c.Data, []byte{'\n'}))
			l.EndLF = c.Data[n-1] == '\n'
		}
		s.Split(captured.Item{Dir: it.Dir, At: it.At, Chunk: &captured.Chunk{Lost: l, EOF: c.EOF}}, emit)
	}
	s.End(time.Now(), emit)
	return rem
}

// TestSpoolLostDeclaresGaps (ASR-723: what the native capture could not keep is declared,
// not dropped): a connection handed over with a spool whose finisher died
// (half-way through writing it) is completed by the next command: the wire log is cut back
// to what the recording wrote, the spool's frames are declared as gaps counted as the
// splitter counts lost bytes, and the marker is gone. With the spool at hand the same
// completion writes the frames instead, as one capture would have.
func TestSpoolLostDeclaresGaps(t *testing.T) {
	items := spoolItems()
	for cut := 1; cut < len(items); cut++ {
		for _, lost := range []bool{true, false} {
			t.Run(fmt.Sprintf("cut%d/lost=%v", cut, lost), func(t *testing.T) { spoolCase(t, items, cut, lost) })
		}
	}
}

func spoolCase(t *testing.T, all []captured.Item, cut int, lost bool) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const conn = "c-spool"
	m, err := Create(st, conn)
	if err != nil {
		t.Fatal(err)
	}
	items := make([]captured.Item, len(all))
	for i, it := range all {
		items[i] = captured.Item{Dir: it.Dir, At: it.At, Chunk: &captured.Chunk{Data: bytes.Clone(it.Chunk.Data), Lost: it.Chunk.Lost, EOF: it.Chunk.EOF}}
	}
	opts := func(wire.Header) pipeline.Options { return pipeline.Options{StallTimeout: time.Minute} }
	po := opts(wire.Header{})
	po.WirePath, po.Connection, po.Mode, po.Sink = st.WirePath(conn), conn, sdk.ModeRecord, nopSink{}
	p := pipeline.New(po)
	q := make(chan captured.Item, len(items))
	for _, it := range items[:cut] {
		q <- it
	}
	if err := p.Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	for len(q) > 0 {
		time.Sleep(time.Millisecond)
	}
	h, ok := p.StopCapture()
	if !ok {
		t.Fatal("capture had ended")
	}
	if err := p.CloseWireNoSync(); err != nil {
		t.Fatal(err)
	}
	rest := items[cut:]
	want := splitterGaps(h.Lines, rest)
	for _, it := range rest {
		q <- it
	}
	close(q)
	spool, err := NewSpool()
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	sp, err := captured.WriteSpool(spool, captured.SpoolHeader{Lines: h.Lines}, q, nil)
	rem := sp.Remainder
	if err != nil {
		t.Fatal(err)
	}
	for i := range rem {
		if rem[i].Frames != want[i].Frames || rem[i].Bytes != want[i].Bytes {
			t.Errorf("remainder %d = %+v, the splitter declares %+v", i, rem[i], want[i])
		}
	}
	if err := m.HandOverSpool(h.Sessions, Spool{WireBytes: h.WireBytes, Seq: h.Seq, Detect: h.Detect, Remainder: rem}); err != nil {
		t.Fatal(err)
	}
	m.Release()
	// A finisher that died half-way through the spool left part of an entry behind.
	f, err := os.OpenFile(st.WirePath(conn), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"frame","seq":99,"at":"2026-12-01T10:00:00Z","dir":"a2c","line":"half`)
	f.Close()
	m, ok, err = TryLock(st, conn)
	if !ok || err != nil {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	o := Options{Store: st, Pipeline: opts}
	if !lost {
		o.Spool = spool
	}
	if _, err := Complete(context.Background(), o, m); err != nil {
		t.Fatal(err)
	}
	if c, _ := Pending(st); len(c) != 0 {
		t.Fatalf("still pending: %v", c)
	}
	r, err := wire.Open(st.WirePath(conn))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var gaps captured.Remainder
	var seq uint64
	frames := map[sdk.Direction][]string{}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("wire log after completion: %v", err)
		}
		if e.Seq != 0 {
			if e.Seq != seq+1 {
				t.Fatalf("seq %d after %d", e.Seq, seq)
			}
			seq = e.Seq
		}
		switch e.Type {
		case wire.TypeGap:
			if lost && e.Gap.Reason == captured.ReasonSpoolLost {
				i := 0
				if e.Dir == sdk.A2C {
					i = 1
				}
				gaps[i].Frames += e.Gap.Frames
				gaps[i].Bytes += e.Gap.Bytes
			}
		case wire.TypeFrame:
			frames[e.Dir] = append(frames[e.Dir], string(e.Line))
		}
	}
	if lost {
		for i := range gaps {
			if gaps[i].Frames != rem[i].Frames || gaps[i].Bytes != rem[i].Bytes {
				t.Errorf("direction %d: declared %+v, the spool held %+v", i, gaps[i], rem[i])
			}
		}
		return
	}
	if got := frames[sdk.A2C]; len(got) < 6 || got[len(got)-1] != `{"g":6}` {
		t.Errorf("a2c frames with the spool: %q", got)
	}
}

type nopSink struct{}

func (nopSink) Output(string, bool, sdk.Output)  {}
func (nopSink) Gap(string, bool, uint64, string) {}
