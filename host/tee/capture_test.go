package tee

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

// describe renders items as "line" / "line<NoLF>" / "gap frames/bytes reason".
func describe(items []Item) string {
	var b strings.Builder
	for _, it := range items {
		switch {
		case it.Gap != nil:
			b.WriteString(fmt.Sprintf("gap %d/%d %s", it.Gap.Frames, it.Gap.Bytes, it.Gap.Reason))
		case it.NoLF:
			b.WriteString(string(it.Line) + "<NoLF>")
		default:
			b.WriteString(string(it.Line))
		}
		b.WriteString("|")
	}
	return b.String()
}

func drainNow(q chan Item) []Item {
	var out []Item
	for {
		select {
		case it := <-q:
			out = append(out, it)
		default:
			return out
		}
	}
}

// TestCaptureSplitsAtEveryChunkBoundary: lines are the same however the stream is chunked.
func TestCaptureSplitsAtEveryChunkBoundary(t *testing.T) {
	stream := "a\r\n\n{\"x\":1}\n\xff\xfe\nlast"
	want := "a\r||{\"x\":1}|\xff\xfe|last<NoLF>|"
	for cut1 := 0; cut1 <= len(stream); cut1++ {
		for cut2 := cut1; cut2 <= len(stream); cut2++ {
			q := make(chan Item, 16)
			c := newCapture(sdk.C2A, q, DefaultMaxLine)
			now := time.Now()
			for _, chunk := range []string{stream[:cut1], stream[cut1:cut2], stream[cut2:]} {
				c.feed([]byte(chunk), now)
			}
			c.eof(now)
			if got := describe(drainNow(q)); got != want {
				t.Fatalf("cuts %d,%d: %q, want %q", cut1, cut2, got, want)
			}
		}
	}
}

// TestCaptureGapNeverLost: a gap that does not fit keeps accumulating; it is delivered before
// the next line that fits, and the last one at finish.
func TestCaptureGapNeverLost(t *testing.T) {
	q := make(chan Item, 1)
	c := newCapture(sdk.A2C, q, DefaultMaxLine)
	now := time.Now()
	c.feed([]byte("A\nBB\n"), now) // A fits, BB dropped
	c.feed([]byte("CCC\n"), now)   // the gap does not fit: CCC joins it
	got := describe(drainNow(q))
	c.feed([]byte("DDDD\n"), now) // gap{2,5} fits, DDDD does not
	got += describe(drainNow(q))
	done := make(chan struct{})
	go func() { got += describe([]Item{<-q}); close(done) }()
	if g := c.finish(make(chan struct{})); g != nil {
		t.Fatalf("finish lost %+v", *g)
	}
	<-done
	c.feed([]byte("E\n"), now) // after finish: ignored
	want := "A|gap 2/5 capture queue full|gap 1/4 capture queue full|"
	if got != want || len(q) != 0 {
		t.Errorf("items %q, want %q", got, want)
	}
}

// TestCaptureLineLimit: a line over MaxLine is declared as a gap, whole or split; shorter
// lines around it are captured.
func TestCaptureLineLimit(t *testing.T) {
	q := make(chan Item, 16)
	c := newCapture(sdk.C2A, q, 4)
	now := time.Now()
	c.feed([]byte("ok\n123456\nab"), now)
	c.feed([]byte("cdef\nfine"), now)
	c.eof(now)
	want := "ok|gap 1/6 line exceeds capture limit|gap 1/6 line exceeds capture limit|fine<NoLF>|"
	if got := describe(drainNow(q)); got != want {
		t.Errorf("items %q, want %q", got, want)
	}
}
