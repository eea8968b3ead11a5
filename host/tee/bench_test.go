package tee

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Benchmark knobs (environment):
//
//	TEE_BENCH_MIB   MiB pushed per throughput run (default 256; the documented figure is 1024)
//	TEE_BENCH_LAT_N round trips per latency run (default 2000)
//
//	TEE_BENCH_MIB=1024 go test -run='^$' -bench=. -benchtime=1x ./host/tee/
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

// pump writes total bytes of block to w (then closes it) and reads total bytes from r.
func pump(w io.WriteCloser, r io.Reader, block []byte, total int64) error {
	werr := make(chan error, 1)
	go func() {
		defer w.Close()
		for left := total; left > 0; {
			n := min(left, int64(len(block)))
			if _, err := w.Write(block[:n]); err != nil {
				werr <- err
				return
			}
			left -= n
		}
		werr <- nil
	}()
	if _, err := io.CopyN(io.Discard, r, total); err != nil {
		return fmt.Errorf("reading: %w", err)
	}
	return <-werr
}

// BenchmarkTeeThroughput pushes TEE_BENCH_MIB of ACP lines through cat alone and through the
// tee around cat (with a concurrent capture consumer), and reports both rates and tee/cat.
func BenchmarkTeeThroughput(b *testing.B) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		b.Skip("no cat:", err)
	}
	total := int64(envInt("TEE_BENCH_MIB", 256)) << 20
	block := acpBlock()
	var catTime, teeTime time.Duration
	var items, dropped uint64
	for b.Loop() {
		// Baseline: editor → cat → editor over two pipes.
		inR, inW, _ := os.Pipe()
		outR, outW, _ := os.Pipe()
		cmd := exec.Command(cat)
		cmd.Stdin, cmd.Stdout = inR, outW
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		inR.Close()
		outW.Close()
		t0 := time.Now()
		if err := pump(inW, outR, block, total); err != nil {
			b.Fatal(err)
		}
		catTime += time.Since(t0)
		cmd.Wait()
		outR.Close()

		// Tee: editor → tee → cat → tee → editor, capture draining the queue.
		edInR, edInW, _ := os.Pipe()
		edOutR, edOutW, _ := os.Pipe()
		q := make(chan Item, 4096)
		counted := make(chan [2]uint64, 1)
		go func() {
			var n, d uint64
			for it := range q {
				if it.Gap != nil {
					d += it.Gap.Frames
				} else {
					n++
				}
			}
			counted <- [2]uint64{n, d}
		}()
		t0 = time.Now()
		wait := runAsync(Config{Agent: []string{cat}, Stdin: edInR, Stdout: edOutW, Stderr: os.Stderr, Queue: q})
		if err := pump(edInW, edOutR, block, total); err != nil {
			b.Fatal(err)
		}
		teeTime += time.Since(t0)
		if code, err := wait(); code != 0 || err != nil {
			b.Fatalf("Run = %d, %v", code, err)
		}
		c := <-counted
		items, dropped = items+c[0], dropped+c[1]
		edInR.Close()
		edOutW.Close()
		edOutR.Close()
	}
	mb := float64(total) * float64(b.N) / 1e6
	catRate, teeRate := mb/catTime.Seconds(), mb/teeTime.Seconds()
	b.ReportMetric(catRate, "cat-MB/s")
	b.ReportMetric(teeRate, "tee-MB/s")
	b.ReportMetric(teeRate/catRate, "ratio")
	b.ReportMetric(float64(items)/float64(b.N), "items/op")
	b.ReportMetric(float64(dropped)/float64(b.N), "dropped-frames/op")
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
		q := make(chan Item, 4096)
		go func() {
			for range q {
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
