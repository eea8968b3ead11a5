package tee

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// Benchmark knobs (environment):
//
//	TEE_BENCH_MIB   MiB pushed per throughput run and direction (default 256; the documented figure is 1024)
//	TEE_BENCH_LAT_N round trips per latency run (default 2000)
//
//	TEE_BENCH_MIB=1024 go test -run='^$' -bench=. -benchtime=1x ./host/tee/
//
// The end-to-end figures of the acptap binary (wire log, plugins) are in
// package bench; these isolate the tee.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// acpLine is a ~300-byte ACP session/update notification.
func acpLine(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_4f1c9a2b","update":`+
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %08d of the streamed answer: `+
		`the quick brown fox jumps over the lazy dog while the agent explains the refactoring step by step"}}}}`+"\n", i)
}

// acpBlock is about 4 MiB of acpLines, written repeatedly by the throughput benchmark.
func acpBlock() []byte {
	var b strings.Builder
	for i := 0; b.Len() < 4<<20; i++ {
		b.WriteString(acpLine(i))
	}
	return []byte(b.String())
}

// writeAll writes reps copies of block to w, then closes it.
func writeAll(w io.WriteCloser, block []byte, reps int) error {
	defer w.Close()
	for range reps {
		if _, err := w.Write(block); err != nil {
			return err
		}
	}
	return nil
}

// readN reads exactly n bytes from r with large reads.
func readN(r io.Reader, n int64) error {
	buf := make([]byte, 1<<20)
	for n > 0 {
		k, err := r.Read(buf[:min(int64(len(buf)), n)])
		n -= int64(k)
		if err != nil && n > 0 {
			return fmt.Errorf("%d bytes short: %w", n, err)
		}
	}
	return nil
}

// counter drains a capture queue like the pipeline would (splitting the
// chunks into lines), counting lines and dropped lines.
func counter(q <-chan captured.Item) <-chan [2]uint64 {
	done := make(chan [2]uint64, 1)
	go func() {
		var n, d uint64
		count := func(it captured.Item) {
			if it.Gap != nil {
				d += it.Gap.Frames
			} else {
				n++
			}
		}
		s := captured.NewSplitter(0)
		for it := range q {
			s.Split(it, count)
			it.Release()
		}
		s.End(time.Now(), count)
		done <- [2]uint64{n, d}
	}()
	return done
}

// flow is the measured part of one throughput run.
type flow struct {
	d              time.Duration
	items, dropped uint64
}

// BenchmarkTeeThroughput pushes TEE_BENCH_MIB of ACP lines in one direction
// through cat and, alternately in the same run, through the tee, each in the
// same position and over the same pipes:
//
//	dir=c2a  writer → [cat | tee] → `cat >/dev/null` agent   (until the agent exits)
//	dir=a2c  `cat FILE…` agent → [cat | tee] → reader        (until the last byte is read)
//
// The tee's capture queue (64 Ki items, acptap's default) is drained by a
// goroutine that counts. It reports both rates, tee/cat, the lines captured
// and the lines dropped (gaps: capture could not keep up), and for
// attribution the rate of the tee with capture off (Queue nil: forwarding
// only). Rates are totals over all ops; ratios are the median of the ops'
// ratios (run several ops, -benchtime=3x, on a noisy machine).
func BenchmarkTeeThroughput(b *testing.B) {
	if _, err := exec.LookPath("cat"); err != nil {
		b.Skip("no cat:", err)
	}
	block := acpBlock()
	reps := int((int64(envInt("TEE_BENCH_MIB", 256))<<20 + int64(len(block)) - 1) / int64(len(block)))
	total := int64(reps) * int64(len(block))
	sink := []string{"sh", "-c", "exec cat >/dev/null"}

	b.Run("dir=c2a", func(b *testing.B) {
		benchTee(b, total, func() flow { // cat
			inR, inW := pipe(b)
			agR, agW := pipe(b)
			c := exec.Command("cat")
			c.Stdin, c.Stdout = inR, agW
			a := exec.Command(sink[0], sink[1:]...)
			a.Stdin = agR
			startAll(b, c, a)
			inR.Close()
			agW.Close()
			agR.Close()
			t0 := time.Now()
			werr := make(chan error, 1)
			go func() { werr <- writeAll(inW, block, reps) }()
			waitAll(b, c, a)
			d := time.Since(t0)
			if err := <-werr; err != nil {
				b.Fatal(err)
			}
			return flow{d: d}
		}, func(capture bool) flow { // tee
			inR, inW := pipe(b)
			_, outW := pipe(b)
			q, counted := queue(capture)
			t0 := time.Now()
			wait := runAsync(Config{Agent: sink, Stdin: inR, Stdout: outW, Stderr: os.Stderr, Queue: q})
			werr := make(chan error, 1)
			go func() { werr <- writeAll(inW, block, reps) }()
			if code, err := wait(); code != 0 || err != nil {
				b.Fatalf("Run = %d, %v", code, err)
			}
			d := time.Since(t0)
			if err := <-werr; err != nil {
				b.Fatal(err)
			}
			c := <-counted
			return flow{d: d, items: c[0], dropped: c[1]}
		})
	})

	b.Run("dir=a2c", func(b *testing.B) {
		// The agent is cat over a 16 MiB file of ACP lines, named as often as needed.
		file := filepath.Join(b.TempDir(), "lines")
		var chunk []byte
		for len(chunk) < 16<<20 {
			chunk = append(chunk, block...)
		}
		if err := os.WriteFile(file, chunk, 0o600); err != nil {
			b.Fatal(err)
		}
		n := int((total + int64(len(chunk)) - 1) / int64(len(chunk)))
		total := int64(n) * int64(len(chunk))
		source := append([]string{"cat"}, slices.Repeat([]string{file}, n)...)
		benchTee(b, total, func() flow { // cat
			agR, agW := pipe(b)
			outR, outW := pipe(b)
			a := exec.Command(source[0], source[1:]...)
			a.Stdout = agW
			c := exec.Command("cat")
			c.Stdin, c.Stdout = agR, outW
			t0 := time.Now()
			startAll(b, a, c)
			agW.Close()
			agR.Close()
			outW.Close()
			if err := readN(outR, total); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			waitAll(b, a, c)
			return flow{d: d}
		}, func(capture bool) flow { // tee
			inR, inW := pipe(b)
			outR, outW := pipe(b)
			q, counted := queue(capture)
			t0 := time.Now()
			wait := runAsync(Config{Agent: source, Stdin: inR, Stdout: outW, Stderr: os.Stderr, Queue: q})
			if err := readN(outR, total); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			inW.Close()
			if code, err := wait(); code != 0 || err != nil {
				b.Fatalf("Run = %d, %v", code, err)
			}
			c := <-counted
			return flow{d: d, items: c[0], dropped: c[1]}
		})
	})
}

// queue is a capture queue of acptap's default size and its counter, or
// nothing (capture off).
func queue(capture bool) (chan captured.Item, <-chan [2]uint64) {
	if !capture {
		done := make(chan [2]uint64, 1)
		done <- [2]uint64{}
		return nil, done
	}
	q := make(chan captured.Item, 65536)
	return q, counter(q)
}

// benchTee alternates the cat, tee and tee-without-capture runs and reports
// rates and counts.
func benchTee(b *testing.B, total int64, cat func() flow, tee func(capture bool) flow) {
	var c, t, n flow
	var ratios, bareRatios []float64
	for b.Loop() {
		rc := cat()
		c.d += rc.d
		rt := tee(true)
		t.d, t.items, t.dropped = t.d+rt.d, t.items+rt.items, t.dropped+rt.dropped
		rn := tee(false)
		n.d += rn.d
		ratios = append(ratios, float64(rc.d)/float64(rt.d))
		bareRatios = append(bareRatios, float64(rc.d)/float64(rn.d))
	}
	mb := float64(total) * float64(b.N) / 1e6
	catRate, teeRate, bareRate := mb/c.d.Seconds(), mb/t.d.Seconds(), mb/n.d.Seconds()
	b.ReportMetric(catRate, "cat-MB/s")
	b.ReportMetric(teeRate, "tee-MB/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(bareRate, "nocapture-MB/s")
	b.ReportMetric(median(bareRatios), "nocapture-ratio")
	b.ReportMetric(float64(t.items)/float64(b.N), "captured-frames/op")
	b.ReportMetric(float64(t.dropped)/float64(b.N), "dropped-frames/op")
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

func startAll(b *testing.B, cmds ...*exec.Cmd) {
	for _, c := range cmds {
		if c.Stderr == nil {
			c.Stderr = os.Stderr
		}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
	}
}

func waitAll(b *testing.B, cmds ...*exec.Cmd) {
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			b.Fatalf("%s: %v", c.Path, err)
		}
	}
}

// BenchmarkCapture is the copy path without processes: 64 KiB chunks of ACP
// lines handed to a capture whose queue a goroutine drains (splitting the
// chunks into lines, as the pipeline does), as copyLines does before each
// forwarded write; the chunk is copied into the read buffer first, as the
// read would. It reports the cost per line and the fraction of lines dropped;
// b.N is the number of chunks (run it with -benchtime=20000x or more, not 1x).
func BenchmarkCapture(b *testing.B) {
	block := acpBlock()
	q := make(chan captured.Item, 65536)
	counted := counter(q)
	c := newCapture(sdk.C2A, q, captured.NewBound(captured.DefaultQueueBytes), nil)
	lines := 0
	off := 0
	ch := captured.Buffer()
	b.SetBytes(bufSize)
	b.ReportAllocs()
	for b.Loop() {
		if off+bufSize > len(block) {
			off = 0
		}
		n := copy(ch.Buf(), block[off:off+bufSize])
		off += bufSize
		lines += bytes.Count(ch.Buf()[:n], []byte("\n"))
		c.mu.Lock()
		handed := c.feed(ch, ch.Buf()[:n], time.Now())
		c.settle()
		c.mu.Unlock()
		if handed {
			ch.WriteDone()
			ch = captured.Buffer()
		}
	}
	b.StopTimer()
	c.finish(nil)
	close(q)
	r := <-counted
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(lines), "ns/line")
	b.ReportMetric(float64(r[1])/float64(lines), "dropped-fraction")
}

// BenchmarkCaptureSplit is the receiving end of capture alone: a Splitter
// turning 64 KiB chunks of ACP lines back into line items (what the
// pipeline's capture goroutine does before it encodes them). It reports the
// cost per line; b.N is the number of chunks.
func BenchmarkCaptureSplit(b *testing.B) {
	block := acpBlock()
	s := captured.NewSplitter(0)
	lines := 0
	count := func(it captured.Item) { lines++ }
	off := 0
	b.SetBytes(bufSize)
	b.ReportAllocs()
	for b.Loop() {
		if off+bufSize > len(block) {
			off = 0
		}
		s.Split(captured.Item{Dir: sdk.A2C, Chunk: &captured.Chunk{Data: block[off : off+bufSize]}}, count)
		off += bufSize
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(lines), "ns/line")
}

// BenchmarkTeeLatency measures line round trips to an echo agent spawned directly and to
// one spawned through the tee, alternating between the two so that both see the same machine
// state, and reports the added p50/p99 in microseconds.
func BenchmarkTeeLatency(b *testing.B) {
	n := envInt("TEE_BENCH_LAT_N", 2000)
	line := acpLine(0)
	var direct, teed []time.Duration
	for b.Loop() {
		// Direct: the echo agent on plain pipes.
		argv, env := helperAgent("echo")
		inR, inW, _ := os.Pipe()
		outR, outW, _ := os.Pipe()
		cmd := exec.Command(argv[0])
		cmd.Env, cmd.Stdin, cmd.Stdout = env, inR, outW
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		inR.Close()
		outW.Close()

		// Through the tee.
		edInR, edInW, _ := os.Pipe()
		edOutR, edOutW, _ := os.Pipe()
		q := make(chan captured.Item, 4096)
		go func() {
			for it := range q {
				it.Release()
			}
		}()
		wait := runAsync(Config{Agent: argv, Env: env, Stdin: edInR, Stdout: edOutW, Stderr: os.Stderr, Queue: q})

		dr, tr := bufio.NewReader(outR), bufio.NewReader(edOutR)
		for i := -100; i < n; i++ { // the first 100 warm up
			d, t := roundTrip(b, inW, dr, line), roundTrip(b, edInW, tr, line)
			if i >= 0 {
				direct, teed = append(direct, d), append(teed, t)
			}
		}
		inW.Close()
		cmd.Wait()
		outR.Close()
		edInW.Close()
		if code, err := wait(); code != 0 || err != nil {
			b.Fatalf("Run = %d, %v", code, err)
		}
		edInR.Close()
		edOutW.Close()
		edOutR.Close()
	}
	dp50, dp99 := percentiles(direct)
	tp50, tp99 := percentiles(teed)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(dp50), "direct-p50-us")
	b.ReportMetric(us(dp99), "direct-p99-us")
	b.ReportMetric(us(tp50), "tee-p50-us")
	b.ReportMetric(us(tp99), "tee-p99-us")
	b.ReportMetric(us(tp50-dp50), "added-p50-us")
	b.ReportMetric(us(tp99-dp99), "added-p99-us")
}

// roundTrip writes line and waits for its echo.
func roundTrip(b *testing.B, w io.Writer, r *bufio.Reader, line string) time.Duration {
	t0 := time.Now()
	if _, err := io.WriteString(w, line); err != nil {
		b.Fatal(err)
	}
	if s, err := r.ReadString('\n'); err != nil || s != line {
		b.Fatalf("echo: %q, %v", s, err)
	}
	return time.Since(t0)
}

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)*50/100], s[len(s)*99/100]
}
