package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/bench/internal/acpgen"
)

// BenchmarkRecordLatency measures one-line round trips to an echo agent
// started directly and to one started as `acptap record --store <tmp> --
// agent` (the real binary: wire log written, acpv2 attached), alternating
// line by line so both see the same machine state. For reference it also
// times the agent behind two cats in acptap's place (the cost of the two
// extra process hops alone). The line is a 300-byte $/cancel_request
// notification (acpgen.EchoLine), valid in both directions. It reports p50/p99/p99.9 of each
// and acptap's added p50/p99 over direct, in microseconds, and the CPU time
// acptap and its plugin spent per round trip (two lines: one each way),
// which does not depend on the machine's other load.
//
// pace=0 sends the next line as soon as the echo is back, some 15,000 round
// trips a second: far more than an editor and agent exchange, and every line
// is its own batch for the plugin, so acpv2 falls behind and catches up from
// the wire log, all on the same cores. pace=1ms leaves a millisecond between
// round trips, closer to a busy real session, so the pipeline's work is done
// between lines rather than during them.
func BenchmarkRecordLatency(b *testing.B) {
	b.Run("pace=0", func(b *testing.B) { benchLatency(b, 0) })
	b.Run("pace=1ms", func(b *testing.B) { benchLatency(b, time.Millisecond) })
}

func benchLatency(b *testing.B, pace time.Duration) {
	acptap, agent := binaries(b)
	n := envInt("ACPTAP_BENCH_LAT_N", 2000)
	line := acpgen.EchoLine()
	var direct, catted, tapped []time.Duration
	var cpuDirect, cpuTapped time.Duration
	var switchesDirect, switchesTapped int64
	for b.Loop() {
		dir, err := os.MkdirTemp(tmpRoot, "lat-")
		if err != nil {
			b.Fatal(err)
		}
		d := startProc(b, os.Environ(), agent, "echo")
		t := startProc(b, recordEnv(dir), recordArgv(acptap, filepath.Join(dir, "store"), agent, "echo")...)
		dc := &chain{in: d.stdin, out: newReader(d.stdout), agent: d.stderr}
		tc := &chain{in: t.stdin, out: newReader(t.stdout), agent: t.stderr}
		cc := startChain(b, viaCat, agent, "echo")
		for _, c := range []*chain{dc, cc, tc} {
			c.request(b, acpgen.InitializeRequest)
			c.request(b, acpgen.NewSessionRequest)
		}
		for i := -200; i < n; i++ { // the first 200 warm up (and let acpv2 attach)
			if pace > 0 {
				time.Sleep(pace)
			}
			dd, cd, td := roundTrip(b, dc, line), roundTrip(b, cc, line), roundTrip(b, tc, line)
			if i >= 0 {
				direct, catted, tapped = append(direct, dd), append(catted, cd), append(tapped, td)
			}
		}
		for _, p := range []*proc{d, t} {
			p.stdin.Close()
			if err := p.cmd.Wait(); err != nil {
				b.Fatalf("%s: %v\n%s", p.cmd.Path, err, p.stderr.all())
			}
			p.stdout.Close()
		}
		cpu := func(p *proc) time.Duration { return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime() }
		cpuDirect, cpuTapped = cpuDirect+cpu(d), cpuTapped+cpu(t)
		switchesDirect, switchesTapped = switchesDirect+switches(d), switchesTapped+switches(t)
		cc.in.Close()
		cc.wait(b)
	}
	for _, s := range []struct {
		name string
		d    []time.Duration
	}{{"direct", direct}, {"cat", catted}, {"acptap", tapped}} {
		b.ReportMetric(us(percentile(s.d, 50)), s.name+"-p50-us")
		b.ReportMetric(us(percentile(s.d, 99)), s.name+"-p99-us")
		b.ReportMetric(us(percentileF(s.d, 99.9)), s.name+"-p99.9-us")
	}
	// acptap's CPU includes the agent's and the plugin's (it reaps both).
	b.ReportMetric(us(cpuTapped-cpuDirect)/float64(len(tapped)+200*b.N), "acptap-cpu-us/line")
	// Context switches, voluntary and not, of acptap and the processes it reaped, less the
	// agent's alone: Go's scheduler wakes and parks threads for each line, and on two
	// cores each switch is CPU the editor's lines wait behind.
	b.ReportMetric(float64(switchesTapped-switchesDirect)/float64(len(tapped)+200*b.N), "acptap-switches/line")
	b.ReportMetric(us(percentile(tapped, 50)-percentile(direct, 50)), "added-p50-us")
	b.ReportMetric(us(percentile(tapped, 99)-percentile(direct, 99)), "added-p99-us")
}

// switches is a waited-for process's context switches, its reaped children's included.
func switches(p *proc) int64 {
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Nvcsw + ru.Nivcsw
	}
	return 0
}

// roundTrip writes line and waits for its echo.
func roundTrip(b *testing.B, c *chain, line []byte) time.Duration {
	t0 := time.Now()
	if _, err := c.in.Write(line); err != nil {
		b.Fatal(err)
	}
	got, err := c.out.ReadSlice('\n')
	d := time.Since(t0)
	if err != nil || !bytes.Equal(got, line) {
		b.Fatalf("echo: %q, %v", got, err)
	}
	return d
}
