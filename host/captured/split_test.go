package captured

import (
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

// TestSplitterLineLimit: a line over the limit is declared as a gap, whole or split; shorter
// lines around it are captured; an item without a chunk passes through as is.
func TestSplitterLineLimit(t *testing.T) {
	s := NewSplitter(4)
	var got []Item
	emit := func(it Item) { got = append(got, it) }
	now := time.Now()
	for _, p := range []string{"ok\n123456\nab", "cdef\nfine"} {
		s.Split(Item{Dir: sdk.C2A, At: now, Chunk: &Chunk{Data: []byte(p)}}, emit)
	}
	s.Split(Item{Dir: sdk.C2A, At: now, Chunk: &Chunk{EOF: true}}, emit)
	s.Split(Item{Dir: sdk.A2C, At: now, Line: []byte("as is")}, emit)
	tooLong := Gap{Frames: 1, Bytes: 6, Reason: ReasonTooLong}
	want := []Item{{Line: []byte("ok")}, {Gap: &tooLong}, {Gap: &tooLong}, {Line: []byte("fine"), NoLF: true}, {Line: []byte("as is")}}
	if len(got) != len(want) {
		t.Fatalf("%d items, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if string(g.Line) != string(w.Line) || g.NoLF != w.NoLF || (g.Gap == nil) != (w.Gap == nil) || (g.Gap != nil && *g.Gap != *w.Gap) {
			t.Errorf("item %d = %+v (gap %v), want %+v (gap %v)", i, g, g.Gap, w, w.Gap)
		}
	}
}

// TestChunkBufferLifecycle: a shared read buffer is recycled only when both the copier
// (WriteDone) and the receiver (Release) are done, and its bytes leave the bound on Release.
func TestChunkBufferLifecycle(t *testing.T) {
	b := NewBound(2 * BufferSize)
	ch := Buffer()
	copy(ch.Buf(), "line\n")
	if !b.Take(BufferSize) {
		t.Fatal("an empty bound refused a buffer")
	}
	ch.Share(5)
	ch.Charge(b, BufferSize)
	ch.WriteDone() // the copier's write returned: the receiver still holds Data
	if string(ch.Data) != "line\n" {
		t.Fatalf("Data = %q after the copier was done, want the read", ch.Data)
	}
	if b.Take(2 * BufferSize) {
		t.Fatal("the bound took two buffers while one was charged")
	}
	ch.Release()
	if ch.Data != nil {
		t.Fatalf("Data = %q after both were done, want the buffer recycled", ch.Data)
	}
	if !b.Take(2 * BufferSize) {
		t.Fatal("Release did not give the chunk's bytes back to the bound")
	}

	// A chunk the queue refused goes back to the copier alone.
	ch = Buffer()
	ch.Share(1)
	ch.Charge(b, 1)
	ch.Uncharge()
	ch.Unshare()
	if ch.Data != nil || ch.bound != nil || ch.refs.Load() != 1 {
		t.Fatalf("after Unshare: data %q, bound %v, refs %d; want the copier's buffer alone", ch.Data, ch.bound, ch.refs.Load())
	}
	ch.WriteDone()
}
