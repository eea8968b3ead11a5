package replaytest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/plugins/acpv2"
	"github.com/acptap/acptap/sdk"
)

// writeBenchStream writes a recorder-like stream of n records: turns of a
// prompt (revised at the end of the turn with origin "prompt", as the
// recorder does), a thought, an answer (revised), two tool calls with
// results (a diff, a terminal), a plan every tenth turn, usage and states.
func writeBenchStream(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"type":"header","asr":"0.1","sessionId":"bench","createdAt":"2026-10-26T14:30:41.207Z","agent":{"name":"com.example.agent","version":"1"},"producer":{"method":"recorder","name":"acptap","version":"0.1.0","plugin":{"name":"acpv2","version":"0.1.0"},"source":{"format":"acp","formatVersion":"2.0.0-alpha.9"},"lossy":["inference","message.author","timestamps","usage"]},"workspace":{"roots":[{"id":"root0","path":"/home/dev/src/app"}]}}` + "\n")
	seq := 0
	text := strings.Repeat("lorem ipsum dolor sit amet ", 6)
	rec := func(body string) int {
		if seq >= n {
			return seq
		}
		seq++
		fmt.Fprintf(w, `{"seq":%d,"id":"r%d","ts":"2026-10-26T14:30:41.207Z","tsSource":"recorder",%s,"native":{"ref":{"wire":"c-bench.jsonl","frames":[%d]}}}`+"\n", seq, seq, body, seq)
		return seq
	}
	for turn := 0; seq < n; turn++ {
		k := strconv.Itoa(turn)
		rec(`"type":"state","state":"running"`)
		prompt := rec(`"type":"message","messageId":"u-` + k + `","role":"user","content":[{"type":"text","text":"please ` + text + `"}],"assembly":"chunks"`)
		rec(`"type":"message","messageId":"th-` + k + `","role":"assistant","content":[{"type":"reasoning","text":"` + text + `"}],"assembly":"chunks"`)
		if turn%10 == 0 {
			rec(`"type":"plan","planId":"plan-` + k + `","planType":"items","entries":[{"content":"do it","priority":"high","status":"pending"}]`)
		}
		answer := rec(`"type":"message","messageId":"a-` + k + `","role":"assistant","content":[{"type":"text","text":"` + text + `"}],"assembly":"chunks"`)
		rec(`"type":"tool_call","callId":"c-` + k + `-edit","callIdSource":"native","name":"edit_file","title":"Edit main.go","kind":"edit","input":{"path":"/home/dev/src/app/main.go"},"locations":[{"path":{"root":"root0","path":"main.go"},"line":6}]`)
		rec(`"type":"file_change","status":"applied","cause":{"callId":"c-` + k + `-edit"},"changes":[{"op":"modify","path":{"root":"root0","path":"main.go"},"fileType":"text"}],"patch":{"format":"git_patch","text":"diff --git a/main.go b/main.go\n-a\n+b\n"},"precision":"hunks"`)
		rec(`"type":"tool_result","status":"completed","callId":"c-` + k + `-edit","linkage":"exact","displayContent":[{"type":"text","text":"edited"}],"raw":{"ok":true},"capture":{"content":{"state":"absent"}},"assembly":"folded"`)
		rec(`"type":"tool_call","callId":"c-` + k + `-run","callIdSource":"native","name":"run","title":"go test","kind":"execute","input":{"command":"go test ./..."}`)
		rec(`"type":"tool_result","status":"completed","callId":"c-` + k + `-run","linkage":"exact","raw":{"exitCode":0},"exec":{"terminalId":"t-` + k + `"},"capture":{"content":{"state":"absent"}},"assembly":"folded"`)
		rec(`"type":"terminal","status":"exited","terminalId":"t-` + k + `","command":"go test ./...","cwd":{"root":"root0","path":""},"exitCode":0,"output":{"blob":{"encoding":"base64","data":"b2sgIGFwcCAwLjAxcwo="}},"assembly":"chunks"`)
		rec(`"type":"usage_summary","scope":"session","cumulative":true,"includesChildren":null,"contextWindow":{"used":` + strconv.Itoa(1000+turn) + `,"size":200000}`)
		rec(`"type":"message","supersedes":"r` + strconv.Itoa(answer) + `","messageId":"a-` + k + `","role":"assistant","content":[{"type":"text","text":"` + text + ` done"}],"assembly":"chunks"`)
		rec(`"type":"state","state":"idle","stopReason":"end_turn"`)
		rec(`"type":"message","supersedes":"r` + strconv.Itoa(prompt) + `","messageId":"u-` + k + `","role":"user","origin":"prompt","content":[{"type":"text","text":"please ` + text + `"}],"assembly":"chunks"`)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var benchStreams sync.Map // records → path

func benchStream(b *testing.B, n int) string {
	b.Helper()
	if p, ok := benchStreams.Load(n); ok {
		return p.(string)
	}
	p := filepath.Join(tmpRoot, fmt.Sprintf("bench-%d.asr.jsonl", n))
	if err := writeBenchStream(p, n); err != nil {
		b.Fatal(err)
	}
	benchStreams.Store(n, p)
	return p
}

// BenchmarkReplay replays a recorder-like stream of 1,000,000 records (and
// 100,000, to see whether memory grows with the stream):
//
//   - inproc: the acpv2 replayer called in this process on the file (the
//     baseline: no process, no gRPC);
//   - plugin: `acptap replay STREAM > /dev/null`, the plugin out of
//     process, the stream streamed to it over gRPC and spooled by it;
//   - plugin-v1: the same with --to acp-v1 (the acpv1 plugin: the v2
//     replay translated into v1, each update checked against the v1
//     schema).
//
// It reports records/s, and for the plugin runs the peak RSS (VmHWM) of the
// host and of the plugin process, and the ratio to the in-process rate.
func BenchmarkReplay(b *testing.B) {
	for _, n := range []int{1_000_000, 100_000} {
		path := benchStream(b, n)
		var inproc float64
		b.Run(fmt.Sprintf("inproc/%d", n), func(b *testing.B) {
			rr := acpv2.New().(sdk.Replayer)
			var updates int
			start := time.Now()
			for i := 0; i < b.N; i++ {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				updates = 0
				_, err = rr.Replay(context.Background(), nil, acpv2.Input, f, func(o sdk.Output) error {
					if o.Kind == sdk.ACPFrame {
						updates++
					}
					return nil
				})
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
			inproc = float64(n) * float64(b.N) / time.Since(start).Seconds()
			b.ReportMetric(inproc, "records/s")
			b.ReportMetric(float64(updates), "updates")
		})
		for _, v := range []struct {
			name string
			args []string
		}{{"plugin", nil}, {"plugin-v1", []string{"--to", "acp-v1"}}} {
			b.Run(fmt.Sprintf("%s/%d", v.name, n), func(b *testing.B) {
				var host, plug int64
				start := time.Now()
				for i := 0; i < b.N; i++ {
					h, p := runReplayMeasured(b, path, v.args...)
					host, plug = max(host, h), max(plug, p)
				}
				rate := float64(n) * float64(b.N) / time.Since(start).Seconds()
				b.ReportMetric(rate, "records/s")
				b.ReportMetric(float64(host)/1024, "host-peak-MiB")
				b.ReportMetric(float64(plug)/1024, "plugin-peak-MiB")
				if inproc > 0 {
					b.ReportMetric(rate/inproc, "x-inproc")
				}
			})
		}
	}
}

// runReplayMeasured runs `acptap replay` on path with stdout to /dev/null
// and returns the peak RSS (KiB) of the host and of the plugin process.
func runReplayMeasured(b *testing.B, path string, args ...string) (host, plugin int64) {
	b.Helper()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	dir := b.TempDir()
	cmd := exec.Command(acptapBin, append(append([]string{"replay", "--store", filepath.Join(dir, "store"), "--report", filepath.Join(dir, "report.json")}, args...), path)...)
	cmd.Stdout = devnull
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exe, _ := filepath.EvalSymlinks(acptapBin)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	pid := cmd.Process.Pid
	plugPid := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				b.Fatalf("acptap replay: %v\n%s", err, errb.String())
			}
			return host, plugin
		case <-tick.C:
			if h, ok := vmHWM(pid); ok {
				host = max(host, h)
			}
			if plugPid == 0 {
				plugPid = childRunning(pid, exe)
			}
			if plugPid != 0 {
				if p, ok := vmHWM(plugPid); ok {
					plugin = max(plugin, p)
				}
			}
		}
	}
}

// vmHWM reads the peak RSS (KiB) of pid.
func vmHWM(pid int) (int64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v, true
		}
	}
	return 0, false
}

// childRunning finds a child of parent running exe (the built-in plugin).
func childRunning(parent int, exe string) int {
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
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) < 2 || f[1] != strconv.Itoa(parent) {
			continue
		}
		if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); target == exe {
			return pid
		}
	}
	return 0
}
