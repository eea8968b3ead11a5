package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/bench/internal/acpgen"
)

// BenchmarkBigFrame measures what one big frame costs in memory (issue
// 18, point 9): `acptap record` over an agent that answers initialize and
// session/new and then writes one session/update line of
// ACPTAP_BENCH_FRAME_MIB MiB (default 200) of message text, and, with
// ACPTAP_BENCH_FRAME_CTRL=1, text that is all control characters (which
// JSON escapes to six times its size). It samples VmHWM of the host and
// of each plugin every 20 ms until acptap exits and reports the peaks, in
// MiB and as multiples of the frame (docs/benchmarks.md, "Memory per
// frame").
func BenchmarkBigFrame(b *testing.B) {
	acptap, _ := binaries(b)
	mib := 200
	if v, err := strconv.Atoi(os.Getenv("ACPTAP_BENCH_FRAME_MIB")); err == nil && v > 0 {
		mib = v
	}
	fill := "x"
	if os.Getenv("ACPTAP_BENCH_FRAME_CTRL") == "1" {
		fill = `\u0001`
	}
	dir, err := os.MkdirTemp(tmpRoot, "bigframe-")
	if err != nil {
		b.Fatal(err)
	}
	big := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(big)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(f, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"`, acpgen.SessionID)
	chunk := strings.Repeat(fill, 1<<20)
	for i := 0; i < mib; i++ {
		f.WriteString(chunk)
	}
	f.WriteString(`"}}}}` + "\n")
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	initResp := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"bench-agent","version":"1"},"capabilities":{}}}`
	script := `IFS= read -r a; printf '%s\n' '` + initResp + `'; IFS= read -r b; printf '%s' '` +
		strings.TrimSuffix(string(acpgen.NewSessionResponse), "\n") + `'; printf '\n'; cat '` + big + `'; exec cat >/dev/null`
	var host, peak map[string]int64
	for b.Loop() {
		run := filepath.Join(dir, fmt.Sprintf("run-%d", time.Now().UnixNano()))
		store := filepath.Join(run, "store")
		p := startProc(b, recordEnv(run), recordArgv(acptap, store, "/bin/sh", "-c", script)...)
		c := &chain{in: p.stdin, out: newReader(p.stdout), agent: p.stderr}
		pid := p.cmd.Process.Pid
		var mu sync.Mutex
		peak = map[string]int64{}
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			pids := map[string]int{}
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				m, ok := statusKiB(pid)
				if !ok {
					return
				}
				mu.Lock()
				peak["host"] = max(peak["host"], m.hwm)
				for n, pp := range pluginPids(pid) {
					pids[n] = pp
				}
				for n, pp := range pids {
					if m, ok := statusKiB(pp); ok {
						peak[n] = max(peak[n], m.hwm)
					}
				}
				mu.Unlock()
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		c.request(b, acpgen.InitializeRequest)
		c.request(b, acpgen.NewSessionRequest)
		var n int64
		for {
			s, err := c.out.ReadSlice('\n')
			n += int64(len(s))
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil {
				b.Fatalf("read %d bytes of the big frame: %v", n, err)
			}
			break
		}
		if n < int64(mib)<<20 {
			b.Fatalf("read %d bytes of the big frame: %v", n, err)
		}
		p.stdin.Close()
		if err := p.cmd.Wait(); err != nil {
			b.Fatalf("acptap: %v\n%s", err, p.stderr.all())
		}
		close(stop)
		<-sampled
		st, err := os.Stat(filepath.Join(store, "sessions", acpgen.SessionID, "stream.asr.jsonl"))
		if err != nil || st.Size() < int64(mib)<<20 {
			b.Fatalf("the big frame was not mapped into the stream: %v (%v bytes)", err, st)
		}
		host = peak
		os.RemoveAll(run)
	}
	for n, kib := range host {
		b.ReportMetric(float64(kib)/1024, n+"-peak-MiB")
		b.ReportMetric(float64(kib)/1024/float64(mib), n+"-peak-per-frame-MiB")
	}
	b.ReportMetric(float64(mib), "frame-MiB")
}
