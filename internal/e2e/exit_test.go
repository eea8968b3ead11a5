package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/host/finisher"
	"github.com/acptap/acptap/host/priority"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/sdk"
	"golang.org/x/sys/unix"
)

// Helper agents of these tests.
const (
	helperCloseIn = "closein" // closes its stdin at once, then waits for the file $E2E_REPORT
	helperHello   = "hello"   // writes helloLine to stdout and exits with $E2E_EXIT

	helloLine = `{"jsonrpc":"2.0","method":"_e2e/hello","params":{}}` + "\n"
)

// closeInAgent closes its stdin (the editor's writes must now fail, as they
// would without acptap) and stays alive until the test creates the report
// file, so a failing write cannot be the agent's exit.
func closeInAgent() int {
	os.Stdin.Close()
	gate := os.Getenv(reportEnv)
	for {
		if _, err := os.Stat(gate); err == nil {
			return 0
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gatedConfig is a config whose revision runs acpv2, aep and a faulty
// plugin ("gated") that blocks every Map after its first until gate exists.
func gatedConfig(t *testing.T, gate string) string {
	t.Helper()
	dir := pluginDir(t, map[string]string{"gated": faultyBin})
	return writeFile(t, filepath.Join(t.TempDir(), "config.toml"), fmt.Sprintf(`plugin_path = [%q]

[revisions]
%q = ["acpv2", "aep", "gated"]

[plugins.gated.config]
fault = "gate"
marker = %q
`, dir, revision, gate))
}

// holdBehind prompts until the gated plugin is blocked in Map: a plugin
// that attaches late maps what the wire log holds in one batch and blocks
// only on the next.
func holdBehind(t *testing.T, r *recording, agent *acpAgent, gate string) {
	t.Helper()
	n := 1
	poll(t, "the gated plugin to block in Map", func() bool {
		if waiting(gate) >= 1 {
			return true
		}
		n++
		r.converse(agent, promptLine(n, n-1))
		return false
	})
}

// waiting counts the gated plugin instances blocked on the gate.
func waiting(gate string) int {
	m, _ := filepath.Glob(gate + ".waiting-*")
	return len(m)
}

// outputs reads every output file of a store (streams and AEP files), by
// path under the root.
func outputs(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, sub := range []string{"sessions", "aep"} {
		err := filepath.WalkDir(filepath.Join(root, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if filepath.Base(p) == "connections" || filepath.Base(p) == "id" {
				return nil // the store's session bookkeeping, not an output
			}
			out[rel] = readFile(t, p)
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	return out
}

// sameOutputs fails unless the two stores hold the same output files, byte
// for byte.
func sameOutputs(t *testing.T, got, want string) {
	t.Helper()
	g, w := outputs(t, got), outputs(t, want)
	if len(w) == 0 {
		t.Fatal("the rebuilt store holds no output")
	}
	for p, wb := range w {
		gb, ok := g[p]
		switch {
		case !ok:
			t.Errorf("%s: missing from the recording's store", p)
		case !bytes.Equal(gb, wb):
			t.Errorf("%s differs from the rebuilt one%s", p, firstDiff(gb, wb))
		}
	}
	for p := range g {
		if _, ok := w[p]; !ok {
			t.Errorf("%s: in the recording's store only (a backup or a duplicate?)", p)
		}
	}
}

// pendingConns lists the store's pending connections.
func pendingConns(t *testing.T, root string) []string {
	t.Helper()
	st, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := finisher.Pending(st)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// finishers lists the finisher processes working on the store at root.
func finishers(root string) []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	ppids := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(b), "\x00")
		if len(args) < 2 || args[1] != "__finish" || !strings.Contains(string(b), "\x00"+root+"\x00") {
			continue
		}
		if st, err := readStat(pid); err == nil && st.state != 'Z' {
			out = append(out, proc{pid: pid, start: st.start, what: "finisher"})
			ppids[pid] = st.ppid
		}
	}
	// A finisher's child between fork and exec (a plugin starting) still
	// shows the finisher's command line: only the topmost count.
	found := map[int]bool{}
	for _, p := range out {
		found[p.pid] = true
	}
	return slices.DeleteFunc(out, func(p proc) bool { return found[ppids[p.pid]] })
}

// killFinishers SIGKILLs the store's finishers when the test ends.
func killFinishers(t *testing.T, root string) {
	t.Cleanup(func() {
		for _, p := range finishers(root) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	})
}

// TestRecordExitsWhilePluginsBehind (issue 12.1): with a plugin held
// behind the tee (blocked in Map), acptap closes stdout and exits with the
// agent's code while the connection is still pending and a detached
// finisher holds it; once the plugin may go on, the finisher completes the
// connection, and every output file is byte for byte what `acptap rebuild`
// of the wire log writes into a fresh store (no duplicate, no backup).
func TestRecordExitsWhilePluginsBehind(t *testing.T) {
	gate, cfg, root, r, report, agent := startGated(t, 4)
	holdBehind(t, r, agent, gate)
	if code := r.waitExit(); code != 4 {
		t.Fatalf("acptap record exited %d, want the agent's 4; stderr: %s", code, r.stderr.String())
	}
	r.checkTransparent(report)
	conns := pendingConns(t, root)
	if len(conns) != 1 {
		t.Fatalf("pending connections after exit = %v, want the recorded one (the gated plugin is still behind)", conns)
	}
	poll(t, "the finisher's gated plugin to block too", func() bool { return waiting(gate) >= 2 })
	if len(finishers(root)) != 1 {
		t.Fatalf("finishers at work = %v, want one", finishers(root))
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitMapped(t, []string{"--store", root})
	if log := logText(t, root); !strings.Contains(log, "mapping handed to a finisher") || !strings.Contains(log, "connection finished") {
		t.Errorf("the log does not say the mapping was handed over and finished:\n%s", log)
	}
	sameOutputs(t, root, rebuild(t, wireLog(t, root), "--config", cfg))
}

// TestFinisherKilledHalfWay (issue 12.1): the finisher is SIGKILLed while
// it maps (its gated plugin blocked after its first outputs); the
// connection stays pending with nobody holding it, and the next command
// (`acptap rebuild --pending`) completes it: the outputs are byte for byte
// those of a fresh rebuild, nothing written twice.
func TestFinisherKilledHalfWay(t *testing.T) {
	gate, cfg, root, r, _, agent := startGated(t, 0)
	holdBehind(t, r, agent, gate)
	if code := r.waitExit(); code != 0 {
		t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
	}
	poll(t, "the finisher's gated plugin to block", func() bool { return waiting(gate) >= 2 })
	fin := finishers(root)
	if len(fin) != 1 {
		t.Fatalf("finishers = %v, want one", fin)
	}
	if err := syscall.Kill(fin[0].pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(t, "the killed finisher to be gone", func() bool { return !fin[0].alive() })
	st, _ := store.Open(root)
	// The lock goes when the last holder goes: the finisher's plugins die
	// with it (Pdeathsig) a moment later.
	poll(t, "the killed finisher's lock to be released", func() bool { return finisher.Abandoned(st) })
	if conns := pendingConns(t, root); len(conns) != 1 {
		t.Fatalf("after the kill: pending %v; want the connection", conns)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runAcptap(t, "rebuild", "--pending", "--store", root, "--config", cfg)
	if code != 0 || !strings.Contains(out, "finished") {
		t.Fatalf("acptap rebuild --pending exited %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if conns := pendingConns(t, root); len(conns) != 0 {
		t.Fatalf("still pending after rebuild --pending: %v", conns)
	}
	sameOutputs(t, root, rebuild(t, wireLog(t, root), "--config", cfg))
	// Nothing is left to do: a second run finds nothing pending.
	if out, _, code := runAcptap(t, "rebuild", "--pending", "--store", root, "--config", cfg); code != 0 || !strings.Contains(out, "no pending connections") {
		t.Errorf("a second rebuild --pending: exit %d, %q", code, out)
	}
}

// TestRecordSIGTERMExitsWhilePluginsBehind (issue 12.1): SIGTERM to
// record is forwarded to the agent, and record exits with it (128+15)
// while the mapping is behind, as on the agent's own exit; the finisher
// completes the connection.
func TestRecordSIGTERMExitsWhilePluginsBehind(t *testing.T) {
	gate, cfg, root, r, _, agent := startGated(t, 0)
	holdBehind(t, r, agent, gate)
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Stdin stays open until acptap has exited: its EOF would let the agent
	// exit on its own first.
	r.readRest()
	if code := r.waitExit(); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("acptap record exited %d, want %d; stderr: %s", code, 128+int(syscall.SIGTERM), r.stderr.String())
	}
	if conns := pendingConns(t, root); len(conns) != 1 {
		t.Fatalf("pending after SIGTERM = %v, want the connection", conns)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitMapped(t, []string{"--store", root})
	sameOutputs(t, root, rebuild(t, wireLog(t, root), "--config", cfg))
}

// nice reads a task's nice value (field 19 of /proc/<pid>/task/<tid>/stat).
func nice(t *testing.T, pid, tid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	n, err := strconv.Atoi(f[16]) // f[0] is field 3
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// threads lists a process's thread ids.
func threads(pid int) []int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// TestPluginsRunAtLowerPriority (issue 12.2): every thread of each plugin
// process runs at a higher nice value than acptap's main thread (the one
// the tee's goroutines share with the rest of the host; only the thread
// that forked a plugin, parked for the plugin's life as its Pdeathsig
// parent, is lowered with it), and the agent keeps acptap's.
func TestPluginsRunAtLowerPriority(t *testing.T) {
	root := t.TempDir()
	killFinishers(t, root)
	r, _ := startScripted(t, []string{"--store", root}, 0)
	r.converse(&acpAgent{}, initLine, newLine)
	pid := r.cmd.Process.Pid
	// The host's priority is its threads' lowest nice value: the thread that forks a plugin
	// is lowered with it, and when Go ran that goroutine on the main thread, the main
	// thread is the lowered one (Go parks rather than ends a main thread left locked).
	host := nice(t, pid, pid)
	for _, tid := range threads(pid) {
		host = min(host, nice(t, pid, tid))
	}
	for _, name := range []string{"acpv2", "aep"} {
		p := waitChild(t, pid, name+" plugin", builtinPlugin(name))
		for _, tid := range threads(p.pid) {
			if n := nice(t, p.pid, tid); n <= host {
				t.Errorf("%s plugin thread %d: nice %d, want above acptap's %d", name, tid, n, host)
			}
		}
	}
	ag := waitChild(t, pid, "agent", helperAgent(helperACP))
	if n := nice(t, ag.pid, ag.pid); n != host {
		t.Errorf("agent: nice %d, want acptap's %d", n, host)
	}
	// Below the host's priority: the thread that forked each plugin and each
	// plugin's feeder (at the plugins' priority), and capture's (between).
	lowered := 0
	for _, tid := range threads(pid) {
		switch n := nice(t, pid, tid); n {
		case host:
		case priority.Target(host), priority.CaptureTarget(host):
			lowered++
		default:
			t.Errorf("acptap thread %d at nice %d: neither acptap's %d, capture's %d nor the plugins' %d",
				tid, n, host, priority.CaptureTarget(host), priority.Target(host))
		}
	}
	if lowered > 5 {
		t.Errorf("%d acptap threads run below the main thread's priority; want at most two per plugin and capture's (5)", lowered)
	}
	// The copy path's threads (every thread at acptap's priority) have the short
	// scheduler slice, so that a woken copier preempts capture and the plugins at
	// once; the lowered threads, the plugins and the agent keep the default.
	if def, ok := kernelKeepsSlices(t); ok {
		for _, tid := range threads(pid) {
			want := def
			if nice(t, pid, tid) == host {
				want = priority.CopySlice
			}
			if s, err := priority.Slice(tid); err == nil && s != want {
				t.Errorf("acptap thread %d (nice %d): slice %d ns, want %d", tid, nice(t, pid, tid), s, want)
			}
		}
		for _, name := range []string{"acpv2", "aep"} {
			p := waitChild(t, pid, name+" plugin", builtinPlugin(name))
			for _, tid := range threads(p.pid) {
				if s, err := priority.Slice(tid); err == nil && s != def {
					t.Errorf("%s plugin thread %d: slice %d ns, want the default %d", name, tid, s, def)
				}
			}
		}
		if s, err := priority.Slice(ag.pid); err != nil || s != def {
			t.Errorf("agent: slice %d ns (%v), want the default %d", s, err, def)
		}
	}
	r.wait()
}

// kernelKeepsSlices reports the kernel's default scheduler slice and whether it
// keeps one per task (Linux 6.12 and later), probed on a thread of its own.
func kernelKeepsSlices(t *testing.T) (def uint64, ok bool) {
	t.Helper()
	type res struct {
		def uint64
		ok  bool
	}
	c := make(chan res)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		a, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			c <- res{}
			return
		}
		def := a.Runtime
		a.Runtime = priority.CopySlice
		if unix.SchedSetAttr(0, a, 0) != nil {
			c <- res{}
			return
		}
		s, _ := priority.Slice(0)
		c <- res{def, s == priority.CopySlice && def != priority.CopySlice}
	}()
	r := <-c
	if !r.ok {
		t.Log("the kernel keeps no scheduler slice per task: slices not checked")
	}
	return r.def, r.ok
}

// TestRecordExitsWithHungPlugin (issue 18.1): a plugin whose Info never
// returns, one that never completes the handshake, and one that hangs in
// Map, with every deadline far beyond the test's: acptap exits with the
// agent all the same (the exit path never waits on a plugin), the bytes
// pass through, and the connection is handed to a finisher.
func TestRecordExitsWithHungPlugin(t *testing.T) {
	for _, tc := range []struct{ name, hang, fault string }{
		{"info", "info", ""},
		{"handshake", "handshake", ""},
		{"map", "", "stall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := pluginDir(t, map[string]string{"hung": faultyBin})
			cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), fmt.Sprintf(`plugin_path = [%q]

[revisions]
%q = ["acpv2", "hung"]

[plugins.hung.config]
fault = %q

[restart]
max = 0
stall_timeout = "1h"
`, dir, revision, tc.fault))
			root := t.TempDir()
			killFinishers(t, root)
			report := filepath.Join(t.TempDir(), "report")
			r := startRecord(t, []string{"--store", root, "--config", cfg}, helperCmd(),
				helperEnv+"="+helperACP, reportEnv+"="+report, exitEnv+"=3", "FAULTY_HANG="+tc.hang)
			agent := &acpAgent{}
			r.converse(agent, initLine, newLine, promptLine(2, 1), promptLine(3, 2))
			if tc.name == "map" {
				poll(t, "the hung plugin's first outputs", func() bool { return lineCount(streamPath(root, e2eSession, "hung")) >= 2 })
			}
			if code := r.waitExit(); code != 3 {
				t.Fatalf("acptap record exited %d, want the agent's 3; stderr: %s", code, r.stderr.String())
			}
			r.checkTransparent(report)
			if conns := pendingConns(t, root); len(conns) != 1 {
				t.Errorf("pending = %v, want the connection handed to a finisher", conns)
			}
		})
	}
}

// TestRecordExitsWithBlockingLogFile (issue 18.2): the log file is a FIFO
// nobody reads, so opening it blocks forever (as on a hung mount): the
// bytes flow, acptap exits with the agent, and the wire log and the
// streams are written all the same.
func TestRecordExitsWithBlockingLogFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "log.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	killFinishers(t, root)
	r, report := startScripted(t, []string{"--store", root, "--log-file", fifo}, 6)
	r.converse(&acpAgent{}, initLine, newLine, promptLine(2, 1))
	if code := r.wait(); code != 6 {
		t.Fatalf("acptap record exited %d, want the agent's 6; stderr: %s", code, r.stderr.String())
	}
	r.checkTransparent(report)
	wireLog(t, root)
	if !exists(streamPath(root, e2eSession, "")) {
		t.Error("no ASR stream written")
	}
}

// TestEditorWriteFailsWhenAgentClosesStdin (issue 18.3): the agent closes
// its stdin and stays alive; the editor's writes then fail with EPIPE, as
// they would without acptap, instead of blocking until the agent exits.
func TestEditorWriteFailsWhenAgentClosesStdin(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	root := t.TempDir()
	killFinishers(t, root)
	r := startRecord(t, []string{"--store", root}, helperCmd(), helperEnv+"="+helperCloseIn, reportEnv+"="+gate)
	ag := waitChild(t, r.cmd.Process.Pid, "agent", helperAgent(helperCloseIn))
	line := []byte(strings.Repeat("x", 1023) + "\n")
	var werr error
	poll(t, "a write to acptap to fail", func() bool {
		for range 64 {
			if _, werr = r.stdin.Write(line); werr != nil {
				return true
			}
		}
		return false
	})
	if !errors.Is(werr, syscall.EPIPE) {
		t.Errorf("the editor's write failed with %v, want EPIPE", werr)
	}
	if !ag.alive() {
		t.Fatal("the agent exited: the failed write proves nothing")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(); code != 0 {
		t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
	}
}

// TestStdoutGoneAtOnceKeepsWireLog (issue 18.3): the editor has closed its
// end of acptap's stdout before the agent's first line: acptap is not
// killed by SIGPIPE, exits with the agent's code, and the wire log holds
// the line the agent wrote.
func TestStdoutGoneAtOnceKeepsWireLog(t *testing.T) {
	root := t.TempDir()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR.Close() // the editor is gone before acptap writes anything
	ctx, cancel := context.WithTimeout(context.Background(), pollDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, acptapBin, "record", "--store", root, "--", helperCmd()[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+helperHello, exitEnv+"=5")
	cmd.Stdin, cmd.Stdout = nil, outW
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	outW.Close()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("acptap record was killed by %v; stderr: %s", ws.Signal(), stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 5 {
		t.Fatalf("acptap record exited %d, want the agent's 5; stderr: %s", code, stderr.String())
	}
	waitMapped(t, []string{"--store", root})
	b := readFile(t, wireLog(t, root))
	if !bytes.Contains(b, []byte(`_e2e/hello`)) {
		t.Errorf("the wire log does not hold the agent's line:\n%s", b)
	}
}

// TestRecordMapBeforeExit: with [record] map_before_exit, a mapping that is
// behind when the agent exits is not handed to a finisher: record maps it
// to the end and only then exits, leaving nothing pending. (The editor
// sees EOF at the agent's last byte either way.)
func TestRecordMapBeforeExit(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	cfg := gatedConfig(t, gate)
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(mapBeforeExit); err != nil {
		t.Fatal(err)
	}
	f.Close()
	root := t.TempDir()
	killFinishers(t, root)
	r, report := startScripted(t, []string{"--store", root, "--config", cfg}, 4)
	agent := &acpAgent{}
	r.converse(agent, initLine, newLine)
	holdBehind(t, r, agent, gate)
	// The agent ends; record cannot finish while the gated plugin blocks
	// (its stall timeout is 30 s), so it must still run, with no finisher.
	_ = r.stdin.Close()
	r.readRest()
	if st, err := readStat(r.cmd.Process.Pid); err != nil || st.state == 'Z' || st.state == 'X' {
		t.Fatalf("record exited while its mapping was blocked (%v)", err)
	}
	if fs := finishers(root); len(fs) != 0 {
		t.Fatalf("finishers at work = %v, want none", fs)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := r.waitExit(); code != 4 {
		t.Fatalf("acptap record exited %d, want the agent's 4; stderr: %s", code, r.stderr.String())
	}
	r.checkTransparent(report)
	if conns := pendingConns(t, root); len(conns) != 0 {
		t.Errorf("pending connections after exit = %v, want none", conns)
	}
	if log := logText(t, root); strings.Contains(log, "handed to a finisher") || !strings.Contains(log, "recording finished") {
		t.Errorf("the log does not say record finished the mapping itself:\n%s", log)
	}
	sameOutputs(t, root, rebuild(t, wireLog(t, root), "--config", cfg))
}

// TestRecordSpoolsBacklogAtExit (issue 12.1, "for any backlog"): the agent writes a burst
// (a 16 MiB line among thousands) and exits while capture is still behind the tee; record
// exits at once, handing what capture had not written to the finisher in memory (the log's
// spooled_frames), and the finisher writes it: the wire log holds every line of both
// directions in order, no gap (ASR-723), and the secret scrubbed (ASR-712). (TestRecordExitsWhilePluginsBehind
// compares a handed-over connection's outputs with a rebuild's.)
func TestRecordSpoolsBacklogAtExit(t *testing.T) {
	const lines, big = 20_000, 16 << 20
	c2a := genLines("c2a", lines, 0)
	a2c := genLines("a2c", lines, big)
	var spooled int
	var root string
	for attempt := 0; attempt < 3 && spooled == 0; attempt++ {
		root = t.TempDir()
		killFinishers(t, root)
		r := startRecord(t, []string{"--store", root}, helperCmd(),
			helperEnv+"="+helperLines, linesEnv+"="+strconv.Itoa(lines), bigEnv+"="+strconv.Itoa(big))
		go func() {
			_, _ = r.stdin.Write(bytes.Join(c2a, nil))
			r.stdin.Close()
		}()
		got, err := io.ReadAll(r.stdout)
		if err != nil {
			t.Fatal(err)
		}
		if code := r.wait(); code != 0 {
			t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
		}
		if !bytes.Equal(got, bytes.Join(a2c, nil)) {
			t.Fatalf("agent → client: the editor read %d bytes, the agent wrote %d", len(got), len(bytes.Join(a2c, nil)))
		}
		waitMapped(t, []string{"--store", root})
		m := regexp.MustCompile(`"spooled_frames":(\d+)`).FindStringSubmatch(logText(t, root))
		if m == nil {
			t.Logf("attempt %d: capture was not behind at the exit (no hand-over)\n%s", attempt+1, logText(t, root))
			continue
		}
		spooled, _ = strconv.Atoi(m[1])
		t.Logf("attempt %d: %d frames spooled at the exit", attempt+1, spooled)
	}
	if spooled == 0 {
		t.Fatal("in three runs capture never had a backlog at the agent's exit: the spool was not exercised")
	}
	// On Linux the queued reads lie in the queue arena the finisher inherited: the spool
	// names them in place instead of copying them.
	if m := regexp.MustCompile(`"in_place_bytes":(\d+)`).FindStringSubmatch(logText(t, root)); runtime.GOOS == "linux" && (m == nil || m[1] == "0") {
		t.Errorf("no spooled byte lay in the queue arena (%v)", m)
	}
	frames := readWire(t, wireLog(t, root))
	checkFrames(t, "a2c", frames[sdk.A2C], a2c, nil)
	checkFrames(t, "c2a", frames[sdk.C2A], c2a, map[int]bool{3: true})
	if bytes.Contains(readFile(t, wireLog(t, root)), []byte(secretEnv)) {
		t.Error("the wire log holds the MCP secret")
	}
	if log := logText(t, root); !strings.Contains(log, "handed-over capture written") {
		t.Errorf("the finisher's log does not say it wrote the spool:\n%.2000s", log)
	}
}

// TestStandbyFinisherLeaves: a recording that fell behind (its gated plugin blocked in Map)
// starts its finisher on standby; the plugin is let go before the editor closes, so the
// connection is complete at the exit or handed over, and either way the standby does not
// linger: once the store has no pending connection no finisher runs, and none logged an
// error of its own.
func TestStandbyFinisherLeaves(t *testing.T) {
	gate, _, root, r, _, agent := startGated(t, 0)
	untilStandby(t, r, agent, root)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := r.waitExit(); code != 0 {
		t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
	}
	waitMapped(t, []string{"--store", root})
	poll(t, "every finisher to have exited", func() bool { return len(finishers(root)) == 0 })
	// The finisher's own errors (the plugins' diagnostics of this odd traffic are not).
	bad := regexp.MustCompile(`"@level":"error","@message":"(finisher|store|plugins|pending connections not finished)"`)
	if log := logText(t, root); bad.MatchString(log) {
		t.Errorf("the finisher logged an error: %s", bad.FindString(log))
	}
}

// TestStandbyKilledIsReplaced: the finisher on standby is SIGKILLed during the session; at
// the exit (behind) record starts another and hands it the spool, so the connection is
// completed without a lost spool and the outputs are a rebuild's.
func TestStandbyKilledIsReplaced(t *testing.T) {
	gate, cfg, root, r, _, agent := startGated(t, 0)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", logText(t, root))
		}
	})
	untilStandby(t, r, agent, root)
	fin := finishers(root)
	if err := syscall.Kill(fin[0].pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed the standby, pid %d", fin[0].pid)
	poll(t, "the standby to be gone", func() bool { return !fin[0].alive() })
	if code := r.waitExit(); code != 0 {
		t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitMapped(t, []string{"--store", root})
	log := logText(t, root)
	for _, want := range []string{"the finisher on standby is gone; starting another", "mapping handed to a finisher", "connection finished"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q", want)
		}
	}
	if strings.Contains(log, "handed-over capture lost") {
		t.Error("the spool was lost with the killed standby")
	}
	sameOutputs(t, root, rebuild(t, wireLog(t, root), "--config", cfg))
}

// logHas says whether the store's log exists and holds s (a poll may look before record
// has created it).
func logHas(root, s string) bool {
	b, err := os.ReadFile(filepath.Join(root, "logs", "acptap.log"))
	return err == nil && strings.Contains(string(b), s)
}

// untilStandby prompts until the recording has started its finisher on standby (its gated
// plugin holds it behind) and the finisher runs.
func untilStandby(t *testing.T, r *recording, agent *acpAgent, root string) {
	t.Helper()
	n := 1
	poll(t, "the recording to start its finisher on standby", func() bool {
		if logHas(root, "finisher on standby") && len(finishers(root)) == 1 {
			return true
		}
		n++
		r.converse(agent, promptLine(n, n-1))
		return false
	})
}

// startGated records a scripted agent (exiting with code) with the gated plugin (gate) beside
// acpv2 and aep, into a fresh store whose finishers are killed when the test ends, and goes
// through initialize and session/new.
func startGated(t *testing.T, code int) (gate, cfg, root string, r *recording, report string, agent *acpAgent) {
	t.Helper()
	gate = filepath.Join(t.TempDir(), "gate")
	cfg = gatedConfig(t, gate)
	root = t.TempDir()
	killFinishers(t, root)
	r, report = startScripted(t, []string{"--store", root, "--config", cfg}, code)
	agent = &acpAgent{}
	r.converse(agent, initLine, newLine)
	return gate, cfg, root, r, report, agent
}
