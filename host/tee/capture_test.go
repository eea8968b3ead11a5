package tee

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// describe renders items as "line" / "line<NoLF>" / "gap frames/bytes reason".
func describe(items []captured.Item) string {
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

// splitEach passes q's items through a Splitter, as the pipeline does, and calls fn with
// each line and gap item (a line's bytes are a copy), releasing every chunk. It returns when
// q is closed.
func splitEach(q <-chan captured.Item, maxLine int, fn func(captured.Item)) {
	s := captured.NewSplitter(maxLine)
	emit := func(it captured.Item) {
		if it.Line != nil {
			it.Line = bytes.Clone(it.Line)
		}
		fn(it)
	}
	for it := range q {
		s.Split(it, emit)
		it.Release()
	}
	s.End(time.Now(), emit)
}

// splitAll collects what splitEach yields, by direction.
func splitAll(q <-chan captured.Item, maxLine int) map[sdk.Direction][]captured.Item {
	out := map[sdk.Direction][]captured.Item{}
	splitEach(q, maxLine, func(it captured.Item) { out[it.Dir] = append(out[it.Dir], it) })
	return out
}

// pieceReader returns its pieces one Read each (a piece must fit the caller's buffer);
// before piece i it calls before(i), if set.
type pieceReader struct {
	pieces [][]byte
	i      int
	before func(i int)
}

func (r *pieceReader) Read(p []byte) (int, error) {
	for r.i < len(r.pieces) && len(r.pieces[r.i]) == 0 {
		r.i++
	}
	if r.i == len(r.pieces) {
		return 0, io.EOF
	}
	if r.before != nil {
		r.before(r.i)
	}
	n := copy(p, r.pieces[r.i])
	if n < len(r.pieces[r.i]) {
		panic("piece larger than the read buffer")
	}
	r.i++
	return n, nil
}

// pieces cuts b at the given offsets.
func pieces(b []byte, cuts ...int) [][]byte {
	var out [][]byte
	prev := 0
	for _, c := range cuts {
		out = append(out, b[prev:c])
		prev = c
	}
	return append(out, b[prev:])
}

// everyN cuts b into pieces of n bytes.
func everyN(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > n {
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}

// copyThrough runs the real copy loop (copyLines) of one direction over src into dst, then
// ends capture as Run does, and returns the split items. q must be big enough for every
// chunk unless the caller drains it. The buffers come from a queue arena, as in record
// (where memory files exist), and every slot must be free again once the items are
// released: no chunk, slab or held line leaks its slot.
func copyThrough(t *testing.T, src io.Reader, dst io.Writer, q chan captured.Item, queueBytes int, maxLine int) []captured.Item {
	t.Helper()
	arena, _ := captured.NewQueueArena(int64(queueBytes))
	c := newCapture(sdk.C2A, q, captured.NewBound(int64(queueBytes)), arena)
	if err := copyLines(dst, src, c); err != nil {
		t.Fatal(err)
	}
	if l := c.finish(nil); l != nil {
		t.Fatalf("finish could not deliver %+v", *l)
	}
	close(q)
	items := splitAll(q, maxLine)[sdk.C2A]
	if arena != nil && arena.Free() != arena.Slots() {
		t.Errorf("%d of %d arena slots still in use after every item was released", arena.Slots()-arena.Free(), arena.Slots())
	}
	return items
}

// TestCaptureSplitsAtEveryChunkBoundary: the lines are the same however the stream is cut
// into reads — inside multi-byte UTF-8 characters, right before and right after an LF, in
// a CRLF, in invalid UTF-8 — and what is forwarded is the stream, unchanged.
func TestCaptureSplitsAtEveryChunkBoundary(t *testing.T) {
	stream := "a\r\n\n{\"x\":\"é€𝄞\"}\n\xff\xfe\n€last"
	want := "a\r||{\"x\":\"é€𝄞\"}|\xff\xfe|€last<NoLF>|"
	for cut1 := 0; cut1 <= len(stream); cut1++ {
		for cut2 := cut1; cut2 <= len(stream); cut2++ {
			var fwd bytes.Buffer
			src := &pieceReader{pieces: pieces([]byte(stream), cut1, cut2)}
			items := copyThrough(t, src, &fwd, make(chan captured.Item, 16), captured.DefaultQueueBytes, captured.DefaultMaxLine)
			if got := describe(items); got != want {
				t.Fatalf("cuts %d,%d: %q, want %q", cut1, cut2, got, want)
			}
			if fwd.String() != stream {
				t.Fatalf("cuts %d,%d: forwarded %q", cut1, cut2, fwd.String())
			}
		}
	}
	// One byte per read, and the stream ending in an LF (no NoLF line).
	items := copyThrough(t, &pieceReader{pieces: everyN([]byte(stream+"\n"), 1)}, io.Discard, make(chan captured.Item, 64), captured.DefaultQueueBytes, captured.DefaultMaxLine)
	if got, want := describe(items), strings.Replace(want, "<NoLF>", "", 1); got != want {
		t.Errorf("byte by byte: %q, want %q", got, want)
	}
}

// TestCaptureLongLineAcrossChunks: lines of several MiB read in 64 KiB chunks (the buffers
// handed to capture, not copies) come out whole, with the short lines around them, while the
// receiver holds every chunk until the end (so a recycled buffer would show).
func TestCaptureLongLineAcrossChunks(t *testing.T) {
	big := repeatTo([]byte("0123456789abcdef\xc3\xa9"), 5<<20+7, "")
	var stream []byte
	stream = append(stream, "first\n"...)
	stream = append(stream, big...)
	stream = append(stream, "\nshort\n"...)
	stream = append(stream, big[:3<<20]...)
	stream = append(stream, '\n')
	stream = append(stream, big[:1<<20]...) // last, without LF
	for _, n := range []int{bufSize, bufSize - 1, 9000} {
		var fwd bytes.Buffer
		q := make(chan captured.Item, len(stream)/n+16)
		items := copyThrough(t, &pieceReader{pieces: everyN(stream, n)}, &fwd, q, 1<<30, captured.DefaultMaxLine)
		want := []string{"first", string(big), "short", string(big[:3<<20]), string(big[:1<<20])}
		if len(items) != len(want) {
			t.Fatalf("reads of %d: %d items, want %d", n, len(items), len(want))
		}
		for i, it := range items {
			if it.Gap != nil || string(it.Line) != want[i] || it.NoLF != (i == len(want)-1) {
				t.Errorf("reads of %d: item %d: %d bytes (gap %v, nolf %v), want %d bytes", n, i, len(it.Line), it.Gap, it.NoLF, len(want[i]))
			}
		}
		if !bytes.Equal(fwd.Bytes(), stream) {
			t.Errorf("reads of %d: forwarded bytes differ", n)
		}
	}
}

// TestCaptureDroppedChunks: a read that finds the queue full is dropped whole and declared:
// the gap counts every line it touches, including the line in progress before it and the
// rest of the line it ends in (skipped up to its LF), so the next line captured is never
// glued to bytes from before the gap. Nothing is dropped from the forwarded bytes.
func TestCaptureDroppedChunks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		drop   []int // pieces that find the queue full
		want   string
	}{
		{"whole line", []string{"aa\n", "bb\n", "cc\n"}, []int{1}, "aa|gap 1/2 capture queue full|cc|"},
		{"mid-line both edges", []string{"aa\nb", "b\ncc", "c\ndd\n"}, []int{1}, "aa|gap 2/5 capture queue full|dd|"},
		{"starts at line start, ends mid-line", []string{"aa\n", "bb\nc", "c\ndd"}, []int{1}, "aa|gap 2/4 capture queue full|dd<NoLF>|"},
		{"ends right after LF", []string{"a", "a\n", "bb\n"}, []int{1}, "gap 1/2 capture queue full|bb|"},
		{"only an LF", []string{"aa", "\n", "bb\n"}, []int{1}, "gap 1/2 capture queue full|bb|"},
		{"two in a row", []string{"x\na", "aa", "a\nb", "b\n", "y\n"}, []int{1, 2}, "x|gap 2/6 capture queue full|y|"},
		{"a queued read inside a lost line", []string{"x\na", "b", "c", "d\ne", "f\n", "y\n"}, []int{1, 3}, "x|gap 2/6 capture queue full|y|"},
		{"inside UTF-8", []string{"é\n\xe2", "\x82", "\xac€\n", "ok\n"}, []int{1}, "é|gap 1/6 capture queue full|ok|"},
		{"lost line runs to EOF", []string{"ok\nlo", "st", " still"}, []int{1}, "ok|gap 1/10 capture queue full|"},
		{"last read dropped", []string{"ok\n", "tail"}, []int{1}, "ok|gap 1/4 capture queue full|"},
		{"empty lines", []string{"\n", "\n\n", "\n"}, []int{1}, "|gap 2/0 capture queue full||"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := make(chan captured.Item, 1)
			var got []captured.Item
			s := captured.NewSplitter(0)
			collect := func(it captured.Item) {
				if it.Line != nil {
					it.Line = bytes.Clone(it.Line)
				}
				got = append(got, it)
			}
			drain := func() {
				for {
					select {
					case it, ok := <-q:
						if !ok {
							return
						}
						if it.Dir == 0 { // the filler
							continue
						}
						s.Split(it, collect)
						it.Release()
					default:
						return
					}
				}
			}
			var stream []byte
			var ps [][]byte
			for _, p := range tc.pieces {
				stream = append(stream, p...)
				ps = append(ps, []byte(p))
			}
			src := &pieceReader{pieces: ps, before: func(i int) {
				drain()
				for _, d := range tc.drop {
					if d == i {
						q <- captured.Item{} // fill the queue: piece i does not fit
					}
				}
			}}
			var fwd bytes.Buffer
			c := newCapture(sdk.C2A, q, captured.NewBound(captured.DefaultQueueBytes), nil)
			if err := copyLines(&fwd, src, c); err != nil {
				t.Fatal(err)
			}
			drain()
			if l := c.finish(nil); l != nil {
				t.Fatalf("finish could not deliver %+v", *l)
			}
			close(q)
			drain()
			s.End(time.Now(), collect)
			if d := describe(got); d != tc.want {
				t.Errorf("items %q, want %q", d, tc.want)
			}
			if !bytes.Equal(fwd.Bytes(), stream) {
				t.Errorf("forwarded %q, want %q", fwd.Bytes(), stream)
			}
		})
	}
}

// TestCaptureEOFWhenFull: the end of a stream whose last line has no LF, at a moment the
// queue is full, is delivered by finish; the line is captured whole, with NoLF.
func TestCaptureEOFWhenFull(t *testing.T) {
	q := make(chan captured.Item, 1)
	c := newCapture(sdk.A2C, q, captured.NewBound(captured.DefaultQueueBytes), nil)
	src := &pieceReader{pieces: [][]byte{[]byte("a\nb")}}
	if err := copyLines(io.Discard, src, c); err != nil {
		t.Fatal(err)
	}
	if len(q) != 1 { // the chunk took the only place: the EOF could not be queued
		t.Fatalf("queue holds %d items", len(q))
	}
	var got []captured.Item
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, its := range splitAll(q, 0) {
			got = append(got, its...)
		}
	}()
	if l := c.finish(make(chan struct{})); l != nil {
		t.Fatalf("finish lost %+v", *l)
	}
	close(q)
	<-done
	if d := describe(got); d != "a|b<NoLF>|" {
		t.Errorf("items %q", d)
	}
}

// TestCaptureQueueBytes: the queue's bound in bytes drops a read that would exceed it, even
// with room for items, and counts it; a short read is counted by its length, a long one by
// its whole buffer.
func TestCaptureQueueBytes(t *testing.T) {
	line := []byte(strings.Repeat("x", 99) + "\n")
	var stream []byte
	for range 3 * bufSize / len(line) {
		stream = append(stream, line...)
	}
	q := make(chan captured.Item, 1000)
	// Room for one whole buffer and one short read: the first 64 KiB read fits, the
	// second does not, the third (a short read, ending at a line end) does.
	short := 2*bufSize + (100-(2*bufSize)%100)%100 + 900
	ps := [][]byte{stream[:bufSize], stream[bufSize : 2*bufSize], stream[2*bufSize : short]}
	items := copyThrough(t, &pieceReader{pieces: ps}, io.Discard, q, bufSize+(short-2*bufSize), 0)
	var lines, gapFrames, gapBytes uint64
	for _, it := range items {
		if it.Gap != nil {
			gapFrames += it.Gap.Frames
			gapBytes += it.Gap.Bytes
			continue
		}
		if !bytes.Equal(it.Line, line[:99]) || it.NoLF {
			t.Fatalf("line %d: %q (nolf %v)", lines, it.Line, it.NoLF)
		}
		lines++
	}
	total := uint64(short / 100)
	// bufSize is not a multiple of 100: the dropped read touches the lines on both edges.
	wantGap := uint64((2*bufSize-1)/100 - bufSize/100 + 1)
	if lines+gapFrames != total || gapFrames != wantGap || gapBytes != gapFrames*99 {
		t.Errorf("%d lines + gap of %d frames/%d bytes; want %d lines in all, gap %d frames of 99 bytes", lines, gapFrames, gapBytes, total, wantGap)
	}
}

// TestRunDropsChunksTruthfully drives the real tee (tee.Run, an agent process): the editor's
// stream has a 300 KiB line read in 64 KiB chunks (the buffers themselves are queued), a
// read dropped in the middle of it because the queue is full, and a last line without LF.
// The agent reads exactly what was sent; capture sees the lines before and after, one gap for
// the whole long line (not a line glued from its two ends), and the final line with NoLF.
func TestRunDropsChunksTruthfully(t *testing.T) {
	big := repeatTo([]byte(`{"blob":"€0123456789`), 300<<10, `"}`)
	stream := []byte("first\n")
	stream = append(stream, big...)
	stream = append(stream, "\nafter\nlast, no LF"...)
	ps := [][]byte{stream[:6]}
	ps = append(ps, everyN(stream[6:6+len(big)+1], bufSize)...) // the long line and its LF
	ps = append(ps, stream[6+len(big)+1:])
	const dropped = 3 // the third 64 KiB read of the long line

	q := make(chan captured.Item, 16) // room for everything after the dropped read
	var got []captured.Item
	s := captured.NewSplitter(0)
	collect := func(it captured.Item) {
		if it.Line != nil {
			it.Line = bytes.Clone(it.Line)
		}
		got = append(got, it)
	}
	drain := func(wait bool) {
		for {
			var it captured.Item
			var ok bool
			if wait {
				it, ok = <-q
			} else {
				select {
				case it, ok = <-q:
				default:
					return
				}
			}
			if !ok {
				return
			}
			if it.Dir != 0 { // not the filler
				s.Split(it, collect)
				it.Release()
			}
		}
	}
	// Until the read after the dropped one, only this hook drains the queue (the agent
	// writes nothing before EOF: the queue is the editor's); then a goroutine does.
	drained := make(chan struct{})
	src := &pieceReader{pieces: ps, before: func(i int) {
		if i > dropped+1 {
			return
		}
		drain(false)
		for i == dropped && len(q) < cap(q) {
			q <- captured.Item{} // fillers: the read does not fit
		}
		if i == dropped+1 {
			go func() {
				defer close(drained)
				drain(true)
				s.End(time.Now(), collect)
			}()
		}
	}}
	fromTee, editorOut := pipe(t)
	argv, env := helperAgent("digest")
	wait := runAsync(Config{Agent: argv, Env: env, Stdin: src, Stdout: editorOut, Stderr: os.Stderr, Queue: q})
	digest := readLine(t, bufio.NewReader(fromTee))
	if code, err := wait(); code != 0 || err != nil {
		t.Fatalf("Run = %d, %v", code, err)
	}
	<-drained
	if want := fmt.Sprintf("%x\n", sha256.Sum256(stream)); digest != want {
		t.Errorf("the agent read sha256 %s, sent %s", digest, want)
	}
	want := fmt.Sprintf("first|gap 1/%d capture queue full|after|last, no LF<NoLF>|", len(big))
	var c2a []captured.Item
	for _, it := range got {
		if it.Dir == sdk.C2A {
			c2a = append(c2a, it)
		}
	}
	if d := describe(c2a); d != want {
		t.Errorf("c2a items %.300q, want %q", d, want)
	}
}

// TestRunCausalOrder: lines go to an echo agent one at a time; in the capture queue every
// editor line comes before its echo (it is queued before it is forwarded), although the two
// directions are copied by different goroutines.
//
// The wire log is the native capture of the frames in order (ASR-723).
//
// With a doorbell (Config.Doorbell), a receiver that waits only on the bell gets every
// chunk while the tee runs (each line's chunks are seen before the next line is sent), and
// the queue's close.
func TestRunCausalOrder(t *testing.T) {
	t.Run("queue", func(t *testing.T) { testCausalOrder(t, false) })
	t.Run("doorbell", func(t *testing.T) { testCausalOrder(t, true) })
}

func testCausalOrder(t *testing.T, doorbell bool) {
	const n = 300
	editorIn, toTee := pipe(t)
	fromTee, editorOut := pipe(t)
	q := make(chan captured.Item, 4096)
	var order []string
	done := make(chan struct{})
	add := func(it captured.Item) { order = append(order, it.Dir.String()+" "+string(it.Line)) }
	var bell chan struct{}
	var received atomic.Int64
	if doorbell {
		bell = make(chan struct{}, 1)
		go func() {
			defer close(done)
			ch := make(chan captured.Item) // what the bell let through, for splitEach
			go func() {
				defer close(ch)
				for {
					select {
					case it, ok := <-q:
						if !ok {
							return
						}
						received.Add(1)
						ch <- it
						continue
					default:
					}
					<-bell
				}
			}()
			splitEach(ch, 0, add)
		}()
	} else {
		go func() {
			defer close(done)
			splitEach(q, 0, add)
		}()
	}
	argv, env := helperAgent("echo")
	wait := runAsync(Config{Agent: argv, Env: env, Stdin: editorIn, Stdout: editorOut, Stderr: os.Stderr, Queue: q, Doorbell: bell})
	r := bufio.NewReader(fromTee)
	for i := range n {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"x"}`+"\n", i)
		// Half the lines arrive in two writes, split inside the line.
		if i%2 == 1 {
			toTee.WriteString(line[:7])
			if _, err := io.ReadFull(r, make([]byte, 7)); err != nil {
				t.Fatal(err)
			}
			toTee.WriteString(line[7:])
			if s := readLine(t, r); s != line[7:] {
				t.Fatalf("echo %q", s)
			}
			continue
		}
		toTee.WriteString(line)
		if s := readLine(t, r); s != line {
			t.Fatalf("echo %q", s)
		}
		if doorbell { // the line and its echo reach the receiver before the next line
			for deadline := time.Now().Add(30 * time.Second); received.Load() < int64(3*i/2+2); {
				if time.Now().After(deadline) {
					t.Fatalf("line %d: the receiver got %d chunks: a ring was missed", i, received.Load())
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
	}
	toTee.Close()
	if code, err := wait(); code != 0 || err != nil {
		t.Fatalf("Run = %d, %v", code, err)
	}
	<-done
	seen := map[string]bool{}
	for _, o := range order {
		dir, line, _ := strings.Cut(o, " ")
		if dir == "a2c" && !seen[line] {
			t.Fatalf("the echo of %s was captured before the line itself", line)
		}
		seen[line] = true
	}
	if len(order) != 2*n {
		t.Errorf("%d items, want %d", len(order), 2*n)
	}
}

// TestCopierTalliesStoredChunks: a chunk the copier stores through the arena's file (a cold
// slot) carries its LFs and last byte, counted after the write (Chunk.Tally), so that the
// exit's spool can declare the queued frames without faulting the chunk's pages in; the
// tally is exact for every such chunk: reads cut anywhere, lines longer than a read, a read
// ending with and without an LF.
func TestCopierTalliesStoredChunks(t *testing.T) {
	var in bytes.Buffer
	rng := rand.New(rand.NewSource(1))
	for in.Len() < 40*captured.BufferSize {
		in.WriteString(strings.Repeat("x", 8<<10+rng.Intn(3*captured.BufferSize/2)))
		in.WriteByte('\n')
	}
	const queueBytes = 64 * captured.BufferSize
	arena, err := captured.NewQueueArena(queueBytes)
	if arena == nil {
		t.Skipf("no queue arena here: %v", err)
	}
	q := make(chan captured.Item, 1024)
	c := newCapture(sdk.C2A, q, captured.NewBound(queueBytes), arena)
	// Reads of 1..64 KiB, as a pipe gives them.
	src := &cutReader{b: in.Bytes(), rng: rng}
	var out bytes.Buffer
	if err := copyLines(&out, src, c); err != nil {
		t.Fatal(err)
	}
	c.finish(nil)
	close(q)
	tallied := 0
	for it := range q {
		ch := it.Chunk
		if ch == nil {
			continue
		}
		if lfs, endLF, ok := ch.Tallied(); ok {
			tallied++
			if want := uint64(bytes.Count(ch.Data, []byte{'\n'})); lfs != want || endLF != (ch.Data[len(ch.Data)-1] == '\n') {
				t.Errorf("chunk of %d bytes tallied %d LFs (ends with one: %v), holds %d", len(ch.Data), lfs, endLF, want)
			}
		}
		ch.Release()
	}
	if tallied == 0 {
		t.Fatal("no chunk was tallied: a new arena's slots are cold, its chunks are stored")
	}
	if !bytes.Equal(out.Bytes(), in.Bytes()) {
		t.Fatal("the copy is not the input")
	}
}

// cutReader reads b in pieces of 1..BufferSize bytes, half of those that hold an LF cut
// right after it.
type cutReader struct {
	b   []byte
	rng *rand.Rand
}

func (r *cutReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), 1+r.rng.Intn(captured.BufferSize))
	if i := bytes.IndexByte(r.b[:min(k, len(r.b))], '\n'); i >= 0 && r.rng.Intn(2) == 0 {
		k = i + 1 // a read ending with an LF
	}
	n := copy(p[:k], r.b)
	r.b = r.b[n:]
	return n, nil
}
