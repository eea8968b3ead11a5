package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/bench/internal/acpgen"
	"github.com/acptap/acptap/internal/testpeers"
)

// setup is what sits between the editor (this process) and the agent.
type setup int

const (
	viaCat    setup = iota // one cat per direction, in acptap's place
	viaAcptap              // acptap record --store <tmp> -- agent
	// viaKeep: `benchagent keep` per direction in acptap's place: cat plus one kept
	// copy of every read in a file on tmpfs (/dev/shm), the least a recorder whose
	// capture lags a burst pays (acptap's queue is such a memory file). tee(1) is not
	// that floor: it copies 8 KiB at a time and runs slower than acptap.
	viaKeep
)

// chain is one running editor ↔ [middle] ↔ agent arrangement.
type chain struct {
	in    io.WriteCloser // editor → middle
	out   *bufio.Reader  // middle → editor
	agent *lineReader    // the agent's stderr
	procs []*exec.Cmd    // waited for in order; procs[0] is acptap or the c2a cat
	store string
	close func() // closes the editor's read end, after wait
}

// startChain starts the agent behind cat or acptap. The agent's stderr
// always reaches us directly (acptap passes its own stderr to the agent).
func startChain(b *testing.B, s setup, agent ...string) *chain {
	b.Helper()
	acptap, agentBin := binaries(b)
	errR, errW, _ := os.Pipe()
	edInR, edInW, _ := os.Pipe()   // editor → middle
	edOutR, edOutW, _ := os.Pipe() // middle → editor
	c := &chain{in: edInW, out: bufio.NewReaderSize(edOutR, 1<<20), close: func() { edOutR.Close() }}
	start := func(cmd *exec.Cmd) {
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		c.procs = append(c.procs, cmd)
	}
	switch s {
	case viaCat, viaKeep:
		agInR, agInW, _ := os.Pipe()
		agOutR, agOutW, _ := os.Pipe()
		middle := func(string) *exec.Cmd { return exec.Command("cat") }
		if s == viaKeep {
			shm, err := os.MkdirTemp(shmRoot(), "acptap-bench-keep-")
			if err != nil {
				b.Fatal(err)
			}
			closeOut := c.close
			c.close = func() { closeOut(); os.RemoveAll(shm) }
			middle = func(dir string) *exec.Cmd { return exec.Command(agentBin, "keep", filepath.Join(shm, dir)) }
		}
		catIn := middle("c2a")
		catIn.Stdin, catIn.Stdout, catIn.Stderr = edInR, agInW, os.Stderr
		catOut := middle("a2c")
		catOut.Stdin, catOut.Stdout, catOut.Stderr = agOutR, edOutW, os.Stderr
		ag := exec.Command(agent[0], agent[1:]...)
		ag.Stdin, ag.Stdout, ag.Stderr = agInR, agOutW, errW
		start(catIn)
		start(catOut)
		start(ag)
		for _, f := range []*os.File{agInR, agInW, agOutR, agOutW} {
			f.Close()
		}
	case viaAcptap:
		dir, err := os.MkdirTemp(tmpRoot, "run-")
		if err != nil {
			b.Fatal(err)
		}
		c.store = filepath.Join(dir, "store")
		argv := recordArgv(acptap, c.store, agent...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = recordEnv(dir)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = edInR, edOutW, errW
		start(cmd)
	}
	edInR.Close()
	edOutW.Close()
	errW.Close()
	c.agent = newLineReader(errR)
	return c
}

// shmRoot is where viaKeep keeps its copies: /dev/shm, else the temp dir.
func shmRoot() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// request writes one line and reads the one-line answer.
func (c *chain) request(b *testing.B, line []byte) {
	b.Helper()
	if _, err := c.in.Write(line); err != nil {
		b.Fatal(err)
	}
	if _, err := c.out.ReadSlice('\n'); err != nil {
		b.Fatalf("reading the answer to %.40s: %v; agent stderr:\n%s", line, err, c.agent.all())
	}
}

// wait waits for every process and returns their CPU time (acptap's
// includes the agent's and the plugin's, which it reaps).
func (c *chain) wait(b *testing.B) (cpu time.Duration) {
	b.Helper()
	for _, p := range c.procs {
		if err := p.Wait(); err != nil {
			b.Fatalf("%s: %v; agent stderr:\n%s", p.Path, err, c.agent.all())
		}
		cpu += p.ProcessState.UserTime() + p.ProcessState.SystemTime()
	}
	c.close()
	return cpu
}

// recorded is what acptap's log says about a finished recording; Frames
// and GapFrames are counted in its wire log (wireCounts).
type recorded struct {
	Frames    uint64 `json:"frames"`
	GapFrames uint64 `json:"gap_frames"`
	Restarts  uint64 `json:"restarts"`
	// WireMS: the agent exited → capture had written the wire log to its
	// end (the part of the exit that is not mapping).
	WireMS float64 `json:"wire_after_exit_ms"`
}

func readRecorded(b *testing.B, store string) recorded {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(store, "logs", "acptap.log"))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		var r struct {
			Message string `json:"@message"`
			recorded
		}
		if json.Unmarshal(l, &r) == nil && strings.HasPrefix(r.Message, "recording finished") {
			r.Frames, r.GapFrames = wireCounts(b, store)
			return r.recorded
		}
	}
	b.Fatalf("no \"recording finished\" in the log:\n%s", data)
	return recorded{}
}

// wireCounts counts the frames and the gaps' frames in the store's wire
// logs once the connection is complete. Record's own log line does not
// say it all: what the tee had queued when the agent exited is spooled to
// the finisher, which writes those frames, and the gaps among them, itself.
func wireCounts(b *testing.B, store string) (frames, gapFrames uint64) {
	b.Helper()
	testpeers.WaitMapped(b, store)
	logs, err := filepath.Glob(filepath.Join(store, "wire", "*.jsonl"))
	if err != nil || len(logs) == 0 {
		b.Fatalf("no wire log in %s (%v)", store, err)
	}
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			switch {
			case bytes.HasPrefix(l, []byte(`{"type":"frame"`)):
				frames++
			case bytes.HasPrefix(l, []byte(`{"type":"gap"`)):
				var g struct {
					Frames uint64 `json:"frames"`
				}
				if err := json.Unmarshal(l, &g); err != nil {
					b.Fatalf("%s: %v", path, err)
				}
				gapFrames += g.Frames
			}
		}
	}
	return frames, gapFrames
}

// flowResult is one run of one direction.
type flowResult struct {
	bytes int64
	flow  time.Duration // first bulk byte written → last bulk byte consumed
	exit  time.Duration // last bulk byte consumed → every process exited
	// mapped: every process exited → the mapping complete (a finisher
	// that record handed it to has finished; 0 for cat)
	mapped time.Duration
	cpu    time.Duration
	rec    recorded
}

// runC2A: editor writes size bytes of mcp/message lines; the sink agent
// reports when it has read them all.
func runC2A(b *testing.B, s setup, block []byte, reps int) flowResult {
	_, agent := binaries(b)
	c := startChain(b, s, agent, "sink")
	c.request(b, acpgen.InitializeRequest)
	c.request(b, acpgen.NewSessionRequest)
	go io.Copy(io.Discard, c.out) // nothing more comes back, but keep the pipe drained
	t0 := time.Now()
	for range reps {
		if _, err := c.in.Write(block); err != nil {
			b.Fatal(err)
		}
	}
	c.in.Close()
	n, t1 := stampOf(b, c.agent, "eof")
	if want := int64(reps) * int64(len(block)); n != want {
		b.Fatalf("sink read %d bytes, want %d", n, want)
	}
	r := flowResult{bytes: n, flow: t1.Sub(t0)}
	r.cpu = c.wait(b)
	r.exit = time.Since(t1)
	if s == viaAcptap {
		r.mapped = waitMapped(b, c.store)
		r.rec = readRecorded(b, c.store)
	}
	return r
}

// runA2C: the source agent writes turns of session/update lines; the
// editor reads them all.
func runA2C(b *testing.B, s setup, turns int) flowResult { return runA2CIdle(b, s, turns, 0) }

// runA2CIdle is runA2C with the editor idle for idle after the last byte before it closes
// the agent's stdin; the exit is timed from the close.
func runA2CIdle(b *testing.B, s setup, turns int, idle time.Duration) flowResult {
	_, agent := binaries(b)
	c := startChain(b, s, agent, "source", strconv.Itoa(turns))
	c.request(b, acpgen.InitializeRequest)
	c.request(b, acpgen.NewSessionRequest)
	c.request(b, acpgen.PromptRequest)
	want := acpgen.NewStream().Bytes(turns)
	buf := make([]byte, 1<<20)
	t0 := time.Now()
	var n int64
	for n < want {
		k, err := c.out.Read(buf[:min(int64(len(buf)), want-n)])
		n += int64(k)
		if err != nil {
			b.Fatalf("read %d of %d bytes: %v", n, want, err)
		}
	}
	t1 := time.Now()
	r := flowResult{bytes: n, flow: t1.Sub(t0)}
	if idle > 0 {
		time.Sleep(idle)
		t1 = time.Now()
	}
	c.in.Close()
	r.cpu = c.wait(b)
	r.exit = time.Since(t1)
	if s == viaAcptap {
		r.mapped = waitMapped(b, c.store)
		r.rec = readRecorded(b, c.store)
	}
	return r
}

// waitMapped waits for the finisher record may have handed the mapping to
// (host/finisher), so that no run's mapping competes with the next run, and
// returns how long that took.
func waitMapped(b *testing.B, store string) time.Duration {
	b.Helper()
	t0 := time.Now()
	testpeers.WaitMapped(b, store)
	return time.Since(t0)
}

// BenchmarkRecordThroughput pushes ACPTAP_BENCH_MIB MiB of ACP lines in one
// direction through the real `acptap record` binary (wire log written,
// acpv2 mapping) and, alternately in the same run, through cat in acptap's
// place, over the same number of pipes. It reports both rates, their ratio,
// the frames acptap captured and dropped, how long acptap took to exit
// after the stream ended (mapping what was left), and CPU seconds. Rates
// are totals over all ops; the ratio is the median of the ops' ratios
// (run several ops, -benchtime=3x, on a noisy machine).
func BenchmarkRecordThroughput(b *testing.B) {
	size := int64(envInt("ACPTAP_BENCH_MIB", 256)) << 20
	b.Run("dir=c2a", func(b *testing.B) {
		block := acpgen.MCPBlock(4 << 20)
		reps := int((size + int64(len(block)) - 1) / int64(len(block)))
		lines := bytes.Count(block, []byte("\n")) * reps
		benchFlow(b, lines, func(s setup) flowResult { return runC2A(b, s, block, reps) })
	})
	b.Run("dir=a2c", func(b *testing.B) {
		turns := acpgen.NewStream().TurnsFor(size)
		benchFlow(b, turns*acpgen.UpdatesPerTurn, func(s setup) flowResult { return runA2C(b, s, turns) })
	})
}

func benchFlow(b *testing.B, bulkLines int, run func(setup) flowResult) {
	binaries(b)
	var cat, tap, keep flowResult
	var ratios, keepRatios, overKeep []float64
	rate := func(r flowResult) float64 { return float64(r.bytes) / r.flow.Seconds() }
	for b.Loop() {
		c := run(viaCat)
		t := run(viaAcptap)
		k := run(viaKeep)
		ratios = append(ratios, rate(t)/rate(c))
		keepRatios, overKeep = append(keepRatios, rate(k)/rate(c)), append(overKeep, rate(t)/rate(k))
		keep.bytes, keep.flow = keep.bytes+k.bytes, keep.flow+k.flow
		cat.bytes, cat.flow, cat.cpu = cat.bytes+c.bytes, cat.flow+c.flow, cat.cpu+c.cpu
		tap.bytes, tap.flow, tap.cpu, tap.exit = tap.bytes+t.bytes, tap.flow+t.flow, tap.cpu+t.cpu, tap.exit+t.exit
		tap.mapped, cat.exit = tap.mapped+t.mapped, cat.exit+c.exit
		tap.rec.Frames += t.rec.Frames
		tap.rec.GapFrames += t.rec.GapFrames
		tap.rec.Restarts += t.rec.Restarts
	}
	n := float64(b.N)
	catRate := float64(cat.bytes) / 1e6 / cat.flow.Seconds()
	tapRate := float64(tap.bytes) / 1e6 / tap.flow.Seconds()
	b.ReportMetric(catRate, "cat-MB/s")
	b.ReportMetric(tapRate, "acptap-MB/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(float64(keep.bytes)/1e6/keep.flow.Seconds(), "keep-MB/s")
	b.ReportMetric(median(keepRatios), "keep-ratio")
	b.ReportMetric(median(overKeep), "ratio-over-keep")
	b.ReportMetric(float64(bulkLines), "lines/op")
	b.ReportMetric(float64(tap.rec.Frames)/n, "captured-frames/op")
	b.ReportMetric(float64(tap.rec.GapFrames)/n, "dropped-frames/op")
	b.ReportMetric(float64(tap.rec.Restarts)/n, "plugin-restarts/op")
	b.ReportMetric(tap.exit.Seconds()/n, "acptap-exit-s/op")
	b.ReportMetric(cat.exit.Seconds()/n, "cat-exit-s/op")
	b.ReportMetric(tap.mapped.Seconds()/n, "mapped-after-exit-s/op")
	b.ReportMetric(cat.cpu.Seconds()/n, "cat-cpu-s/op")
	b.ReportMetric(tap.cpu.Seconds()/n, "acptap-cpu-s/op")
}
