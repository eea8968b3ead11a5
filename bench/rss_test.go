package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/bench/internal/acpgen"
	"github.com/acptap/acptap/host/pluginhost"
)

// mem is one process's VmHWM (peak RSS) and VmRSS, in KiB.
type mem struct{ hwm, rss int64 }

// memSample is one look at the recorder's processes.
type memSample struct {
	at          time.Duration
	host        mem
	plugins     map[string]mem // by built-in plugin name; absent before it started
	streamBytes int64          // the session's stream.asr.jsonl so far
	editorLines int64
}

// statusKiB reads VmHWM and VmRSS of pid.
func statusKiB(pid int) (mem, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return mem{}, false
	}
	var m mem
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmHWM:":
			m.hwm, _ = strconv.ParseInt(f[1], 10, 64)
		case "VmRSS:":
			m.rss, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return m, m.hwm > 0
}

// pluginPids finds the children of host that run a built-in plugin (the
// acptap binary with ACPTAP_BUILTIN_PLUGIN=<name>), by name.
func pluginPids(host int) map[string]int {
	found := map[string]int{}
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
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(host) {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		for _, kv := range bytes.Split(env, []byte{0}) {
			if name, ok := bytes.CutPrefix(kv, []byte(pluginhost.PluginModeEnv+"=")); ok {
				found[string(name)] = pid
			}
		}
	}
	return found
}

// BenchmarkRecordMemory runs `acptap record --store <tmp> -- agent` over a
// session of ACPTAP_BENCH_UPDATES session/update notifications (after
// initialize, session/new and session/prompt) with an editor that reads
// everything. The agent writes ACPTAP_BENCH_RATE updates/s (default 50000,
// some 15 MB/s, far above any real agent but within what capture takes
// without gaps on the reference machine; 0 = unpaced, a stress run in which
// capture drops most lines).
//
// It samples VmHWM (peak RSS) of the host and of every built-in plugin it
// started (acpv2, and aep where the revision table names it) every 20 ms
// until acptap exits, and reports them when the session's ASR stream had
// reached 25, 50, 75 and 100 % of its final size (mapping is the slowest
// stage, so this is the session's real progress), and when the editor had
// read the last update (tee done).
func BenchmarkRecordMemory(b *testing.B) {
	acptap, agent := binaries(b)
	turns := updatesTurns()
	rate := 50000
	if v, err := strconv.Atoi(os.Getenv("ACPTAP_BENCH_RATE")); err == nil && v >= 0 {
		rate = v
	}
	var last []memSample
	var teeDone memSample
	var gaps uint64
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
			pids := map[string]int{}
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				s := memSample{at: time.Since(start), plugins: map[string]mem{}}
				var ok bool
				if s.host, ok = statusKiB(host); !ok {
					return
				}
				if len(pids) < 2 { // plugins start once the revision is known
					for n, pid := range pluginPids(host) {
						pids[n] = pid
					}
				}
				mu.Lock()
				for n, pid := range pids {
					if m, ok := statusKiB(pid); ok {
						s.plugins[n] = m
					} else if len(samples) > 0 { // exited: keep its last look
						s.plugins[n] = samples[len(samples)-1].plugins[n]
					}
				}
				if st, err := os.Stat(stream); err == nil {
					s.streamBytes = st.Size()
				}
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
		gaps += readRecorded(b, store).GapFrames
		last = samples
	}
	if len(last) == 0 {
		b.Fatal("no samples")
	}
	final := last[len(last)-1]
	names := slices.Sorted(maps.Keys(final.plugins))
	mib := func(kib int64) float64 { return float64(kib) / 1024 }
	for _, pct := range []int64{25, 50, 75, 100} {
		target := final.streamBytes * pct / 100
		for _, s := range last {
			if s.streamBytes >= target && s.streamBytes > 0 {
				b.ReportMetric(mib(s.host.hwm), fmt.Sprintf("host-hwm@%d%%-MiB", pct))
				for _, n := range names {
					b.ReportMetric(mib(s.plugins[n].hwm), fmt.Sprintf("%s-hwm@%d%%-MiB", n, pct))
				}
				break
			}
		}
	}
	b.ReportMetric(mib(teeDone.host.hwm), "host-hwm@tee-done-MiB")
	b.ReportMetric(mib(final.host.hwm), "host-peak-MiB")
	for _, n := range names {
		b.ReportMetric(mib(final.plugins[n].hwm), n+"-peak-MiB")
	}
	b.ReportMetric(final.at.Seconds(), "session-s")
	b.ReportMetric(teeDone.at.Seconds(), "tee-done-s")
	b.ReportMetric(float64(turns*acpgen.UpdatesPerTurn), "updates/op")
	b.ReportMetric(float64(gaps)/float64(b.N), "dropped-frames/op")
	if os.Getenv("ACPTAP_BENCH_MEM_TRACE") != "" {
		w := bufio.NewWriter(os.Stderr)
		fmt.Fprint(w, "t_s\thost_hwm_MiB\thost_rss_MiB")
		for _, n := range names {
			fmt.Fprintf(w, "\t%s_hwm_MiB\t%s_rss_MiB", n, n)
		}
		fmt.Fprintln(w, "\tstream_bytes\teditor_lines")
		for _, s := range last {
			fmt.Fprintf(w, "%.2f\t%.1f\t%.1f", s.at.Seconds(), mib(s.host.hwm), mib(s.host.rss))
			for _, n := range names {
				fmt.Fprintf(w, "\t%.1f\t%.1f", mib(s.plugins[n].hwm), mib(s.plugins[n].rss))
			}
			fmt.Fprintf(w, "\t%d\t%d\n", s.streamBytes, s.editorLines)
		}
		w.Flush()
	}
}
