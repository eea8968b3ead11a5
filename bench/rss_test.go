package bench

import (
	"bufio"
	"bytes"
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

// memSample is one look at the recorder's processes.
type memSample struct {
	at               time.Duration
	hostHWM, hostRSS int64 // KiB
	plugHWM, plugRSS int64 // KiB; 0 before the plugin started
	streamBytes      int64 // the session's stream.asr.jsonl so far
	editorLines      int64
}

// statusKiB reads VmHWM and VmRSS of pid.
func statusKiB(pid int) (hwm, rss int64, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmHWM:":
			hwm, _ = strconv.ParseInt(f[1], 10, 64)
		case "VmRSS:":
			rss, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return hwm, rss, hwm > 0
}

// pluginPid finds the child of host that runs the acptap binary (the
// built-in plugin; the agent is another binary).
func pluginPid(host int, exe string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so split after ')'.
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) < 2 || f[1] != strconv.Itoa(host) {
			continue
		}
		if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); target == exe {
			return pid
		}
	}
	return 0
}

// BenchmarkRecordMemory runs `acptap record --store <tmp> -- agent` over a
// session of ACPTAP_BENCH_UPDATES session/update notifications (after
// initialize, session/new and session/prompt) with an editor that reads
// everything. The agent writes ACPTAP_BENCH_RATE updates/s (default 50000,
// some 15 MB/s, far above any real agent but within what capture takes
// without gaps on the reference machine; 0 = unpaced, a stress run in which
// capture drops most lines). It samples VmHWM (peak RSS) of the host and of the
// acpv2 plugin every 20 ms until acptap exits and reports them when the
// session's ASR stream had reached 25, 50, 75 and 100 % of its final size
// (mapping is the slowest stage, so this is the session's real progress),
// and when the editor had read the last update (tee done).
func BenchmarkRecordMemory(b *testing.B) {
	acptap, agent := binaries(b)
	turns := updatesTurns()
	rate := 50000
	if v, err := strconv.Atoi(os.Getenv("ACPTAP_BENCH_RATE")); err == nil && v >= 0 {
		rate = v
	}
	var last []memSample
	var gaps uint64
	var teeDone memSample
	for b.Loop() {
		dir, err := os.MkdirTemp(tmpRoot, "rss-")
		if err != nil {
			b.Fatal(err)
		}
		store := filepath.Join(dir, "store")
		p := startProc(b, recordEnv(dir), recordArgv(acptap, store, agent, "source", strconv.Itoa(turns),
			strconv.Itoa(rate))...)
		c := &chain{in: p.stdin, out: newReader(p.stdout), agent: p.stderr}
		host := p.cmd.Process.Pid
		stream := filepath.Join(store, "sessions", acpgen.SessionID, "stream.asr.jsonl")

		var mu sync.Mutex
		var samples []memSample
		var lines int64
		start := time.Now()
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			plug := 0
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				s := memSample{at: time.Since(start)}
				var ok bool
				if s.hostHWM, s.hostRSS, ok = statusKiB(host); !ok {
					return
				}
				if plug == 0 {
					plug = pluginPid(host, acptap)
				}
				if plug != 0 {
					if hwm, rss, ok := statusKiB(plug); ok {
						s.plugHWM, s.plugRSS = hwm, rss
					} else if len(samples) > 0 { // exited: keep its last look
						prev := samples[len(samples)-1]
						s.plugHWM, s.plugRSS = prev.plugHWM, prev.plugRSS
					}
				}
				if st, err := os.Stat(stream); err == nil {
					s.streamBytes = st.Size()
				}
				mu.Lock()
				s.editorLines = lines
				samples = append(samples, s)
				mu.Unlock()
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()

		c.request(b, acpgen.InitializeRequest)
		c.request(b, acpgen.NewSessionRequest)
		c.request(b, acpgen.PromptRequest)
		want := int64(turns) * acpgen.UpdatesPerTurn
		buf := make([]byte, 1<<20)
		var n int64
		for n < want {
			k, err := c.out.Read(buf)
			n += int64(bytes.Count(buf[:k], []byte("\n")))
			mu.Lock()
			lines = n
			mu.Unlock()
			if err != nil {
				b.Fatalf("read %d of %d updates: %v", n, want, err)
			}
		}
		mu.Lock()
		if len(samples) > 0 {
			teeDone = samples[len(samples)-1]
		}
		mu.Unlock()
		p.stdin.Close()
		if err := p.cmd.Wait(); err != nil {
			b.Fatalf("acptap: %v\n%s", err, p.stderr.all())
		}
		p.stdout.Close()
		close(stop)
		<-sampled
		rec := readRecorded(b, store)
		gaps += rec.GapFrames
		last = samples
	}
	if len(last) == 0 {
		b.Fatal("no samples")
	}
	final := last[len(last)-1]
	mib := func(kib int64) float64 { return float64(kib) / 1024 }
	for _, pct := range []int64{25, 50, 75, 100} {
		target := final.streamBytes * pct / 100
		for _, s := range last {
			if s.streamBytes >= target && s.streamBytes > 0 {
				b.ReportMetric(mib(s.hostHWM), fmt.Sprintf("host-hwm@%d%%-MiB", pct))
				b.ReportMetric(mib(s.plugHWM), fmt.Sprintf("plugin-hwm@%d%%-MiB", pct))
				break
			}
		}
	}
	b.ReportMetric(mib(teeDone.hostHWM), "host-hwm@tee-done-MiB")
	b.ReportMetric(mib(final.hostHWM), "host-peak-MiB")
	b.ReportMetric(mib(final.plugHWM), "plugin-peak-MiB")
	b.ReportMetric(final.at.Seconds(), "session-s")
	b.ReportMetric(teeDone.at.Seconds(), "tee-done-s")
	b.ReportMetric(float64(turns*acpgen.UpdatesPerTurn), "updates/op")
	b.ReportMetric(float64(gaps)/float64(b.N), "dropped-frames/op")
	if os.Getenv("ACPTAP_BENCH_MEM_TRACE") != "" {
		w := bufio.NewWriter(os.Stderr)
		fmt.Fprintln(w, "t_s\thost_hwm_MiB\thost_rss_MiB\tplugin_hwm_MiB\tplugin_rss_MiB\tstream_bytes\teditor_lines")
		for _, s := range last {
			fmt.Fprintf(w, "%.2f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\n", s.at.Seconds(), mib(s.hostHWM), mib(s.hostRSS),
				mib(s.plugHWM), mib(s.plugRSS), s.streamBytes, s.editorLines)
		}
		w.Flush()
	}
}
