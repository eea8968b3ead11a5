package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/acptap/acptap/host/logthrottle"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/testpeers"
)

// TestLogRateLimited (issue 18, point 8): an agent writing 20 000 lines
// that are not JSON makes the plugins warn once per frame; acptap.log
// keeps a burst of each warning and counts the rest in a "repeated log
// message suppressed" line instead of growing by a line per frame.
func TestLogRateLimited(t *testing.T) {
	const n = 20000
	root := filepath.Join(t.TempDir(), "store")
	in := filepath.Join(t.TempDir(), "lines")
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("not json " + strconv.Itoa(i) + "\n")
	}
	writeFile(t, in, b.String())
	// The throttle is record's: with the mapping handed to a finisher,
	// the finisher's log would hold the warnings of what it maps.
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), mapBeforeExit)
	r := startRecord(t, []string{"--store", root, "--config", cfg}, []string{"/bin/sh", "-c", "cat '" + in + "'"})
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	log := logText(t, root)
	lines := strings.Split(strings.TrimSpace(log), "\n")
	written, suppressed := 0, 0
	for _, l := range lines {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch {
		case m["@message"] == logthrottle.SuppressedMessage && strings.Contains(m["message"].(string), "not valid JSON"):
			suppressed += int(m["suppressed"].(float64))
		case strings.Contains(m["@message"].(string), "not valid JSON"):
			written++
		}
	}
	if len(lines) > 300 {
		t.Errorf("acptap.log has %d lines for %d bad frames", len(lines), n)
	}
	if written+suppressed < n || suppressed == 0 {
		t.Errorf("%d warnings written and %d counted as suppressed, want at least %d in all", written, suppressed, n)
	}
	if st, err := os.Stat(filepath.Join(root, "logs", "acptap.log")); err == nil {
		t.Logf("acptap.log: %d lines, %d bytes; %d warnings written, %d suppressed", len(lines), st.Size(), written, suppressed)
	}
}

// TestArgvSecretsRedacted (issue 18, point 13): the agent's argv carries
// an API key, a token and a URL with a password; the agent gets them as
// they are, while the wire-log header and acptap.log (at debug level)
// hold them redacted.
func TestArgvSecretsRedacted(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	got := filepath.Join(t.TempDir(), "argv")
	args := []string{"--api-key=SECRET-A", "--token", "SECRET-B", "--endpoint", "https://me:SECRET-C@api.example/v1?api_key=SECRET-D"}
	agent := append([]string{"/bin/sh", "-c", `printf '%s\n' "$@" > '` + got + `'; cat > /dev/null`, "agent"}, args...)
	r := startRecord(t, []string{"--store", root, "--log-level", "debug"}, agent)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	if string(readFile(t, got)) != strings.Join(args, "\n")+"\n" {
		t.Errorf("the agent got %q, want %q", readFile(t, got), args)
	}
	header, _, _ := strings.Cut(string(readFile(t, wireLog(t, root))), "\n")
	for name, text := range map[string]string{"wire-log header": header, "acptap.log": logText(t, root)} {
		if strings.Contains(text, "SECRET") {
			t.Errorf("%s holds a secret of the argv:\n%s", name, text)
		}
		if !strings.Contains(text, "api.example") {
			t.Errorf("%s lost the argv:\n%s", name, text)
		}
	}
}

// runLimited runs acptap ARGS under sh with its address space limited to
// 2 GiB (so reading an endless input into memory fails instead of taking
// the machine) and returns its output and exit code.
func runLimited(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := `ulimit -v 2097152 && exec "$0" "$@"`
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, acptapBin}, args...)...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("acptap %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("acptap %v did not end: %s", args, out)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// TestEndlessInputBounded (issue 18, point 5): validate, show, rebuild
// and convert given /dev/zero (one endless line) stop at the line bound
// with an error naming file:line and exit 1, instead of growing memory
// or the spool without end.
func TestEndlessInputBounded(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--max-line", "1048576", "/dev/zero"}, "/dev/zero:1: line longer than 1048576 bytes"},
		{[]string{"show", "--max-line", "1048576", "/dev/zero"}, "/dev/zero: asr: line 1: line too long"},
		{[]string{"rebuild", "--store", store, "/dev/zero"}, "/dev/zero: header: line 1: line too long"},
		{[]string{"convert", "--store", store, "--from", "acp-v1-log", "--max-line", "1048576", "/dev/zero"}, "/dev/zero: spool: line 1: longer than 1048576 bytes"},
	} {
		out, code := runLimited(t, c.args...)
		if code != 1 || !strings.Contains(out, c.want) {
			t.Errorf("acptap %v: exit %d, want 1 and %q in:\n%.2000s", c.args, code, c.want, out)
		}
	}
	if left := spoolsLeft(store); len(left) > 0 {
		t.Errorf("spool files left behind: %v", left)
	}
}

// TestConvertSpoolHonoursSIGTERM (issue 18, point 5): convert reading an
// endless pipe (a FIFO fed with short lines, so no line bound helps) stops
// on SIGTERM while it spools, removes the spool and exits 130.
func TestConvertSpoolHonoursSIGTERM(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(acptapBin, "convert", "--store", store, "--from", "acp-v1-log", fifo)
	var out testpeers.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		chunk := []byte(strings.Repeat(`{"jsonrpc":"2.0","method":"x"}`+"\n", 2000))
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}()
	// Wait until the spool holds some of it, then ask convert to stop.
	deadline := time.Now().Add(pollDeadline)
	for {
		spools, _ := filepath.Glob(filepath.Join(store, "tmp", "convert-input-*"))
		if len(spools) == 1 {
			if st, err := os.Stat(spools[0]); err == nil && st.Size() > 1<<20 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("convert did not spool: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case <-errc:
	case <-time.After(pollDeadline):
		cmd.Process.Kill()
		<-errc
		t.Fatalf("convert ignored SIGTERM while spooling: %s", out.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130: %s", code, out.String())
	}
	if left := spoolsLeft(store); len(left) > 0 {
		t.Errorf("spool files left behind: %v", left)
	}
	if !strings.Contains(out.String(), "interrupted") {
		t.Errorf("no word of the interruption: %s", out.String())
	}
}

// limitFiles sets a running process's RLIMIT_NOFILE (prlimit(2)), as
// `ulimit -n n` would have before it started.
func limitFiles(t *testing.T, pid int, n uint64) {
	t.Helper()
	lim := syscall.Rlimit{Cur: n, Max: n}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_NOFILE,
		uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
		t.Fatalf("prlimit: %v", e)
	}
}

// TestManySessionsFewDescriptors (issue 18, point 7): with its open files
// limited to 512, one connection recording 600 sessions writes every
// session's stream and AEP file: the sink keeps a bounded set of files
// open and reopens the others as their next line comes.
func TestManySessionsFewDescriptors(t *testing.T) {
	const n = 600
	root := filepath.Join(t.TempDir(), "store")
	r, _ := startScripted(t, []string{"--store", root}, 0)
	limitFiles(t, r.cmd.Process.Pid, 512) // before any session is seen
	agent := &acpAgent{}
	r.converse(agent, initLine)
	for i := 1; i <= n; i++ {
		sid := fmt.Sprintf("sess-%03d", i)
		r.converse(agent,
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/resume","params":{"sessionId":%q,"cwd":"/tmp/e2e","mcpServers":[]}}`+"\n", 2*i, sid),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"p"}]}}`+"\n", 2*i+1, sid))
	}
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	missing := 0
	for i := 1; i <= n; i++ {
		sid := fmt.Sprintf("sess-%03d", i)
		if lineCount(streamPath(root, sid, "")) < 2 || lineCount(filepath.Join(root, "aep", "acp", store.EscapeID(sid)+".jsonl")) == 0 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d sessions lack their stream or AEP file; log:\n%.3000s", missing, n, logText(t, root))
	}
	for _, sid := range []string{"sess-001", "sess-300", "sess-600"} {
		if out, errOut, code := runAcptap(t, "validate", streamPath(root, sid, "")); code != 0 {
			t.Errorf("%s: %s%s", sid, out, errOut)
		}
	}
}

// waitFor polls cond until it holds or the poll deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(pollDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConcurrentRecordsOneSession (issue 18, point 6): two `acptap record`
// processes resume the same session at once (two editor windows). The
// first writes the stream while its connection lasts; the second's outputs
// for the session wait for it and then continue the stream, so it stays
// valid with one header. When the second connection ends first, it writes
// nothing of the session and says so in the log; the stream stays valid.
func TestConcurrentRecordsOneSession(t *testing.T) {
	for _, secondEndsFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("secondEndsFirst=%v", secondEndsFirst), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "store")
			stream := streamPath(root, e2eSession, "")
			a, _ := startScripted(t, []string{"--store", root}, 0)
			a.converse(&acpAgent{}, initLine, resumeLine(1), promptLine(2, 1))
			waitFor(t, "the first connection's stream", func() bool { return lineCount(stream) >= 3 })
			b, _ := startScripted(t, []string{"--store", root}, 0)
			b.converse(&acpAgent{}, initLine, resumeLine(1), promptLine(2, 1), promptLine(3, 2))
			// The second connection's outputs wait for the first's lock: its
			// feeder has met the session before either connection ends.
			waitFor(t, "the second connection to wait for the session's lock", func() bool {
				return strings.Contains(logText(t, root), "another acptap process is writing this session")
			})
			first, second := a, b
			if secondEndsFirst {
				first, second = b, a
			}
			if code := first.wait(); code != 0 {
				t.Fatalf("exit %d: %s", code, first.stderr.String())
			}
			aLines := lineCount(stream)
			if !secondEndsFirst {
				waitFor(t, "the second connection to take the session's lock", func() bool {
					return strings.Contains(logText(t, root), "session lock acquired")
				})
			}
			if code := second.wait(); code != 0 {
				t.Fatalf("exit %d: %s", code, second.stderr.String())
			}
			out, errOut, code := runAcptap(t, "validate", stream)
			if code != 0 {
				t.Errorf("the stream is invalid:\n%s%s\n%s", out, errOut, readFile(t, stream))
			}
			if n := strings.Count(string(readFile(t, stream)), `"type":"header"`); n != 1 {
				t.Errorf("%d headers", n)
			}
			total := lineCount(stream)
			log := logText(t, root)
			if secondEndsFirst {
				// Said by record, or by the finisher it handed the connection to (its
				// feeder was still waiting for the lock at the exit).
				if !strings.Contains(log, "another acptap process was writing it until this connection ended") &&
					!strings.Contains(log, "outputs for a session another acptap process is writing are not written") {
					t.Errorf("the log does not say the second connection's outputs were not written:\n%.3000s", log)
				}
			} else if total <= aLines {
				t.Errorf("the second connection added nothing: %d lines after the first, %d after both", aLines, total)
			}
			t.Logf("%d lines after the first connection ended, %d after both", aLines, total)
		})
	}
}

// spoolsLeft lists what a command left in <store>/tmp, but rebuild's lock
// file (kept on purpose: a flock dies with its holder, the file stays).
func spoolsLeft(store string) []string {
	var out []string
	m, _ := filepath.Glob(filepath.Join(store, "tmp", "*"))
	for _, p := range m {
		if filepath.Base(p) != "rebuild.lock" {
			out = append(out, p)
		}
	}
	return out
}
