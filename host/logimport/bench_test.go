package logimport

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/testpeers"
)

// BenchEnv sets the size of the synthetic log BenchmarkConvertV1Log
// converts, in MiB (default 8). The figure is for 1 GiB:
//
//	ACPTAP_CONVERT_BENCH_MB=1024 go test ./host/logimport -run '^$' -bench ConvertV1Log -benchtime 1x
const BenchEnv = "ACPTAP_CONVERT_BENCH_MB"

// BenchmarkConvertV1Log converts a synthetic ACP v1 log of JSON-RPC frames
// (8 sessions interleaved; prompts, thoughts, message chunks, tool calls
// with permission requests and v1 diffs, plans) with the real acptap
// binary, as a subprocess, into a fresh store. It reports the input rate
// (MB/s, from the wall time of the whole command: hashing, detection,
// conversion and the plugins finishing) and the peak resident set sizes:
// host-MiB is acptap's own VmHWM (read from /proc while it runs), max-MiB
// the largest of acptap and its plugin processes (the kernel's ru_maxrss
// of the waited-for process tree).
func BenchmarkConvertV1Log(b *testing.B) {
	mib := 8
	if v := os.Getenv(BenchEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: want a positive number of MiB", BenchEnv, v)
		}
		mib = n
	}
	dir := b.TempDir()
	bin := buildAcptap(b, dir)
	input := filepath.Join(dir, "v1.jsonl")
	size := writeSyntheticLog(b, input, int64(mib)<<20)
	b.SetBytes(size)
	b.ResetTimer()
	// The baseline (issue 12): one Python json.loads pass over the same log, alternating
	// with the conversions; ratio is its time over convert's (≥ 1: convert at least as fast).
	py, _ := exec.LookPath("python3")
	var host, all int64
	var pyT, convT time.Duration
	for i := 0; b.Loop(); i++ {
		if py != "" {
			b.StopTimer()
			t0 := time.Now()
			pc := exec.Command(py, "-c", "import json,sys\nfor l in open(sys.argv[1],'rb'): json.loads(l)", input)
			if out, err := pc.CombinedOutput(); err != nil {
				b.Fatalf("python: %v\n%s", err, out)
			}
			pyT += time.Since(t0)
			b.StartTimer()
		}
		st := filepath.Join(dir, fmt.Sprintf("store-%d", i))
		t0 := time.Now()
		h, a := runMeasured(b, bin, "convert", "--from", "acp-v1-log", "--store", st, input)
		convT += time.Since(t0)
		host, all = max(host, h), max(all, a)
		b.StopTimer()
		os.RemoveAll(st)
		b.StartTimer()
	}
	b.ReportMetric(float64(host)/(1<<20), "host-MiB")
	b.ReportMetric(float64(all)/(1<<20), "max-MiB")
	if py != "" {
		b.ReportMetric(pyT.Seconds()/convT.Seconds(), "python-ratio")
		b.ReportMetric(convT.Seconds()/float64(b.N), "convert-s")
		b.ReportMetric(pyT.Seconds()/float64(b.N), "python-s")
	}
}

func buildAcptap(b *testing.B, dir string) string {
	b.Helper()
	bin, err := testpeers.Build(dir)
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

// runMeasured runs the command and returns its peak RSS (VmHWM, polled)
// and the peak RSS of the largest process of its tree (ru_maxrss), bytes.
func runMeasured(b *testing.B, bin string, args ...string) (host, tree int64) {
	b.Helper()
	home := b.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "PATH=" + os.Getenv("PATH")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := vmHWM(cmd.Process.Pid); kb > 0 {
				mu.Lock()
				host = max(host, kb<<10)
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	if err != nil {
		b.Fatalf("%s %s: %v\n%s%s", bin, strings.Join(args, " "), err, out.String(), errb.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		tree = ru.Maxrss << 10 // KiB on Linux
	}
	mu.Lock()
	defer mu.Unlock()
	return host, max(tree, host)
}

// vmHWM reads a process's peak resident set size in KiB (0 if unknown).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// writeSyntheticLog writes JSONL of ACP v1 frames, at least size bytes, and
// returns its size.
func writeSyntheticLog(tb testing.TB, path string, size int64) int64 {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	cw := &countWriter{w: w}
	genV1(cw, size)
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return cw.n
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// genV1 writes a deterministic ACP v1 conversation of 8 interleaved
// sessions until at least size bytes are written.
func genV1(w *countWriter, size int64) {
	const sessions = 8
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 4)
	code := strings.Repeat("func main() {\n\tfmt.Println(\"hello, world\")\n}\n", 24)
	codeJS := strconv.Quote(code)
	line := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	line(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"bench-client","version":"1"}}}`)
	line(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"bench-agent","version":"1"},"agentCapabilities":{"loadSession":true}}}`)
	clientID, agentID := 1, 0
	for s := 1; s <= sessions; s++ {
		line(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/work/p%d","mcpServers":[]}}`, clientID, s)
		line(`{"jsonrpc":"2.0","id":%d,"result":{"sessionId":"bench-%d","modes":{"currentModeId":"code","availableModes":[{"id":"code","name":"Code"}]}}}`, clientID, s)
		clientID++
	}
	for turn := 0; w.n < size; turn++ {
		s := turn%sessions + 1
		sid := fmt.Sprintf("bench-%d", s)
		upd := func(u string, args ...any) {
			line(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s","update":`+u+`}}`, append([]any{sid}, args...)...)
		}
		prompt := clientID
		clientID++
		line(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"%s","prompt":[{"type":"text","text":"turn %d: %s"}]}}`, prompt, sid, turn, text)
		for i := 0; i < 3; i++ {
			upd(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"thinking %d: %s"}}`, i, text)
		}
		upd(`{"sessionUpdate":"plan","entries":[{"content":"edit main.go","priority":"high","status":"in_progress"},{"content":"run tests","priority":"medium","status":"pending"}]}`)
		call := fmt.Sprintf("call-%d", turn)
		upd(`{"sessionUpdate":"tool_call","toolCallId":"%s","title":"Edit main.go","kind":"edit","status":"pending","locations":[{"path":"/work/main.go"}]}`, call)
		line(`{"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":{"sessionId":"%s","toolCall":{"toolCallId":"%s"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}`, agentID, sid, call)
		line(`{"jsonrpc":"2.0","id":%d,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`, agentID)
		agentID++
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"%s","status":"in_progress"}`, call)
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"%s","status":"completed","content":[{"type":"diff","path":"/work/main.go","oldText":%s,"newText":%s}]}`, call, codeJS, codeJS)
		for i := 0; i < 10; i++ {
			upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d %s"}}`, i, text)
		}
		line(`{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`, prompt)
	}
}

// TestSyntheticLogConverts: the benchmark's log is a valid input: every
// line converts, none is skipped, and its sessions are all seen.
func TestSyntheticLogConverts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.jsonl")
	writeSyntheticLog(t, path, 256<<10)
	opts := testOptions(t, t.TempDir())
	res := convert(t, path, opts)
	if res.SkippedLines != 0 || res.Frames() != res.Lines || len(res.Sessions) != 8 || res.AEPTypes["run.finished"] < 8 {
		t.Errorf("skipped %d, frames %d of %d lines, sessions %v, AEP %v", res.SkippedLines, res.Frames(), res.Lines, res.Sessions, res.AEPTypes)
	}
}
