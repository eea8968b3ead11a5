package tee

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// spliceStream is lines of many lengths, from empty to several buffers, the last without LF.
func spliceStream(n int) ([]string, []byte) {
	var lines []string
	var stream []byte
	for i := 0; len(stream) < n; i++ {
		l := fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat("é", (i*7919)%(3*bufSize/2)))
		if i%97 == 0 {
			l = ""
		}
		lines = append(lines, l)
		stream = append(append(stream, l...), '\n')
	}
	lines = append(lines, "tail")
	return lines, append(stream, "tail"...)
}

// blockingPipe is a pipe in blocking mode, as the agent's stdout is (readBlockingPipe).
func blockingPipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := readBlockingPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// spliceThrough writes stream into a pipe in large writes, runs the copy loop from it into
// dst (read back by the other end, rd), and returns what was forwarded, the split items,
// and how many chunks were spliced. queueBytes bounds capture; with hold, the items are
// not drained until the copy is over (so a small bound drops).
func spliceThrough(t *testing.T, src, srcW *os.File, dst io.WriteCloser, rd io.Reader, stream []byte, queueBytes int, hold bool) ([]byte, []captured.Item, int) {
	t.Helper()
	arena, err := captured.NewQueueArena(int64(queueBytes))
	if err != nil {
		t.Fatal(err)
	}
	q := make(chan captured.Item, 1<<16)
	c := newCapture(sdk.A2C, q, captured.NewBound(int64(queueBytes)), arena)
	var fwd bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); io.Copy(&fwd, rd) }()
	go func() {
		defer wg.Done()
		for b := stream; len(b) > 0; {
			n := min(len(b), 1<<20)
			if _, err := srcW.Write(b[:n]); err != nil {
				t.Error(err)
				return
			}
			b = b[n:]
		}
		srcW.Close()
	}()
	var items []captured.Item
	drained := make(chan struct{})
	start := make(chan struct{})
	go func() {
		defer close(drained)
		if hold {
			<-start
		}
		items = splitAll(q, 0)[sdk.A2C]
	}()
	if err := copyLines(dst, src, c); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	close(start)
	if l := c.finish(nil); l != nil {
		t.Fatalf("finish could not deliver %+v", *l)
	}
	close(q)
	<-drained
	wg.Wait()
	arena.WaitTrim()
	if arena.Free() != arena.Slots() {
		t.Errorf("%d of %d arena slots still in use after every item was released", arena.Slots()-arena.Free(), arena.Slots())
	}
	return fwd.Bytes(), items, c.spliced
}

func checkLines(t *testing.T, items []captured.Item, lines []string) {
	t.Helper()
	if len(items) != len(lines) {
		t.Fatalf("%d items, want %d lines", len(items), len(lines))
	}
	for i, it := range items {
		if it.Gap != nil || string(it.Line) != lines[i] || it.NoLF != (i == len(lines)-1) {
			t.Fatalf("item %d: %d bytes (gap %v, nolf %v), want line of %d bytes", i, len(it.Line), it.Gap, it.NoLF, len(lines[i]))
		}
	}
}

// TestSplicedBurst: a burst between pipes is teed and spliced (the pipes in blocking mode,
// as the agent's stdout, and in non-blocking mode, as os.Pipe's); what is forwarded is the
// stream, byte for byte, and capture gets every line as sent, in order (ASR-723).
func TestSplicedBurst(t *testing.T) {
	lines, stream := spliceStream(24 << 20)
	for _, mode := range []string{"blocking", "nonblocking"} {
		t.Run(mode, func(t *testing.T) {
			src, srcW := blockingPipe(t)
			rd, dst := blockingPipe(t)
			if mode == "nonblocking" {
				src, srcW = pipe(t)
				rd, dst = pipe(t)
			}
			fwd, items, spliced := spliceThrough(t, src, srcW, dst, rd, stream, captured.DefaultQueueBytes, false)
			if !bytes.Equal(fwd, stream) {
				t.Fatalf("forwarded %d bytes, not the stream's %d", len(fwd), len(stream))
			}
			checkLines(t, items, lines)
			if spliced == 0 {
				t.Error("no chunk was spliced")
			}
			t.Logf("%d chunks spliced", spliced)
		})
	}
}

// TestSplicedToSocket: the editor's end may be a socket (Node's child_process stdio is a
// socket pair): a burst is spliced into it.
func TestSplicedToSocket(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	dst, rd := os.NewFile(uintptr(fds[0]), "sock0"), os.NewFile(uintptr(fds[1]), "sock1")
	defer rd.Close()
	lines, stream := spliceStream(8 << 20)
	src, srcW := blockingPipe(t)
	fwd, items, spliced := spliceThrough(t, src, srcW, dst, rd, stream, captured.DefaultQueueBytes, false)
	if !bytes.Equal(fwd, stream) {
		t.Fatalf("forwarded %d bytes, not the stream's %d", len(fwd), len(stream))
	}
	checkLines(t, items, lines)
	if spliced == 0 {
		t.Error("no chunk was spliced")
	}
}

// TestSplicedBurstOverflows: with a small queue that capture does not drain, spliced chunks
// are dropped and declared: every line is either captured or counted in a gap, bytes and
// lines exact, and the forwarded stream is whole.
func TestSplicedBurstOverflows(t *testing.T) {
	lines, stream := spliceStream(8 << 20)
	src, srcW := blockingPipe(t)
	rd, dst := blockingPipe(t)
	fwd, items, spliced := spliceThrough(t, src, srcW, dst, rd, stream, 1<<20, true)
	if !bytes.Equal(fwd, stream) {
		t.Fatalf("forwarded %d bytes, not the stream's %d", len(fwd), len(stream))
	}
	if spliced == 0 {
		t.Error("no chunk was spliced")
	}
	next, gaps := 0, 0
	for _, it := range items {
		if it.Gap != nil {
			var b uint64
			for range it.Gap.Frames {
				b += uint64(len(lines[next]))
				next++
			}
			if it.Gap.Bytes != b {
				t.Fatalf("gap of %d frames before line %d: %d bytes, want %d", it.Gap.Frames, next, it.Gap.Bytes, b)
			}
			gaps++
			continue
		}
		if next >= len(lines) || string(it.Line) != lines[next] {
			t.Fatalf("item of %d bytes, want line %d (a gap missing before it?)", len(it.Line), next)
		}
		next++
	}
	if next != len(lines) || gaps == 0 {
		t.Errorf("%d lines accounted for, want %d; %d gaps (want some)", next, len(lines), gaps)
	}
}

// TestSplicedCapturePipeFails: when the capture pipe fails in a burst (here: it is made to
// read as empty), the copier goes back to plain reads for the same bytes: nothing is lost
// from either the forwarded stream or capture.
func TestSplicedCapturePipeFails(t *testing.T) {
	devnull, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(devnull)
	teed := 0
	testHookTeed = func(s *splicer) {
		if teed++; teed == 5 {
			unix.Dup3(devnull, s.capR, unix.O_CLOEXEC)
		}
	}
	defer func() { testHookTeed = nil }()
	lines, stream := spliceStream(8 << 20)
	src, srcW := blockingPipe(t)
	rd, dst := blockingPipe(t)
	fwd, items, spliced := spliceThrough(t, src, srcW, dst, rd, stream, captured.DefaultQueueBytes, false)
	if !bytes.Equal(fwd, stream) {
		t.Fatalf("forwarded %d bytes, not the stream's %d", len(fwd), len(stream))
	}
	checkLines(t, items, lines)
	if teed < 5 || spliced != 4 {
		t.Errorf("%d tees, %d spliced; want the fifth to fail and none after", teed, spliced)
	}
}

// TestSplicerOnlyWhereItCan: a regular file, a reader that is not a file, or a non-blocking
// source with a blocking destination (which the poller could not wait on) get plain reads.
func TestSplicerOnlyWhereItCan(t *testing.T) {
	r, w := blockingPipe(t)
	nr, nw := pipe(t)
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		name string
		dst  io.Writer
		src  io.Reader
		want bool
	}{
		{"pipe to pipe", w, r, true},
		{"non-blocking to non-blocking", nw, nr, true},
		{"blocking to non-blocking", nw, r, true},
		{"non-blocking to blocking", w, nr, false},
		{"to a file", f, r, false},
		{"from a file", w, f, false},
		{"not a file", w, strings.NewReader("x"), false},
	} {
		sp := newSplicer(tc.dst, tc.src)
		if (sp != nil) != tc.want {
			t.Errorf("%s: splicer %v, want %v", tc.name, sp != nil, tc.want)
		}
		sp.close()
	}
}
