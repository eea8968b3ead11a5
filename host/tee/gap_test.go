package tee

import (
	"bufio"
	"fmt"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// gapLine is the i-th line of the queue-full test, without LF; its length varies with i.
func gapLine(i int) string {
	return fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat("x", i%37))
}

// TestQueueFullDeclaresGaps: capture does not drain while 1000 lines go through each way in
// lock-step (echo), so nearly all are dropped. The bytes are still forwarded whole; each
// direction's items are, in order, lines and gaps whose Frames/Bytes account exactly for the
// missing lines (sent = captured + gap frames), with every gap declared before the next line.
func TestQueueFullDeclaresGaps(t *testing.T) {
	const n = 1000
	editorIn, toTee := pipe(t)
	fromTee, editorOut := pipe(t)
	q := make(chan captured.Item, 8)
	gate := make(chan struct{})
	items := make(chan []captured.Item, 1)
	go func() {
		<-gate // capture is stuck until every line went both ways
		var all []captured.Item
		splitEach(q, 0, func(it captured.Item) { all = append(all, it) })
		items <- all
	}()
	argv, env := helperAgent("echo")
	wait := runAsync(Config{Agent: argv, Env: env, Stdin: editorIn, Stdout: editorOut, Stderr: nil, Queue: q})

	r := bufio.NewReader(fromTee)
	for i := range n {
		line := gapLine(i) + "\n"
		toTee.WriteString(line)
		if got := readLine(t, r); got != line {
			t.Fatalf("echo of line %d = %q, want %q", i, got, line)
		}
	}
	close(gate)
	toTee.Close()
	if code, err := wait(); code != 0 || err != nil {
		t.Fatalf("Run = %d, %v", code, err)
	}

	all := <-items
	for _, dir := range []sdk.Direction{sdk.C2A, sdk.A2C} {
		next, seen, gaps, gapFrames := 0, 0, 0, uint64(0)
		for _, it := range all {
			if it.Dir != dir {
				continue
			}
			if it.Gap != nil {
				if it.Gap.Reason != captured.ReasonQueueFull || it.Gap.Frames == 0 {
					t.Fatalf("%s: gap %+v", dir, *it.Gap)
				}
				var bytes uint64
				for range it.Gap.Frames {
					bytes += uint64(len(gapLine(next)))
					next++
				}
				if it.Gap.Bytes != bytes {
					t.Errorf("%s: gap of %d frames ending before line %d: %d bytes, want %d", dir, it.Gap.Frames, next, it.Gap.Bytes, bytes)
				}
				gaps++
				gapFrames += it.Gap.Frames
				continue
			}
			if want := gapLine(next); string(it.Line) != want {
				t.Fatalf("%s: item %q, want line %d %q (a gap missing before it?)", dir, it.Line, next, want)
			}
			next++
			seen++
		}
		if next != n || gaps == 0 {
			t.Errorf("%s: %d captured + %d gap frames = %d, want %d (with at least one gap; got %d)", dir, seen, gapFrames, next, n, gaps)
		}
	}
}
