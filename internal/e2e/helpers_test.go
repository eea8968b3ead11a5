package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/host/finisher"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/testpeers"
)

// recording is one `acptap record` subprocess; the test is its editor.
type recording struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr testpeers.SyncBuffer

	lines chan []byte  // stdout lines, when readLine is used
	got   bytes.Buffer // every stdout byte read so far
	sent  bytes.Buffer // every byte send wrote to stdin
	want  bytes.Buffer // what converse expects on stdout
	state *os.ProcessState
}

// startRecord runs `acptap record FLAGS -- AGENT…` with env added to the
// environment.
func startRecord(t *testing.T, flags, agent []string, env ...string) *recording {
	t.Helper()
	args := append(append([]string{"record"}, flags...), "--")
	args = append(args, agent...)
	r := &recording{t: t, cmd: exec.Command(acptapBin, args...)}
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stderr = &r.stderr
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if r.stdout, err = r.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r.state == nil {
			_ = r.cmd.Process.Kill()
			_ = r.cmd.Wait()
		}
	})
	return r
}

// helperCmd is the argv of the test binary as a helper agent; its mode and
// settings travel in the environment (see agents_test.go).
func helperCmd() []string { return []string{selfBin} }

// send writes raw bytes to acptap's stdin.
func (r *recording) send(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.stdin, s); err != nil {
		r.t.Fatalf("write to acptap record: %v (stderr: %s)", err, r.stderr.String())
	}
	r.sent.WriteString(s)
}

// converse sends each line to the scripted agent (helperACP) and reads its
// answer; model is a copy of the agent that computes what it must answer.
func (r *recording) converse(model *acpAgent, lines ...string) {
	r.t.Helper()
	for _, l := range lines {
		r.send(l)
		ans := model.answer([]byte(l))
		r.want.Write(ans)
		r.readLines(bytes.Count(ans, []byte("\n")))
	}
}

// checkTransparent checks, after wait, that the client read exactly what
// the scripted agent wrote and the agent read exactly what the client sent
// (reported in reportFile).
func (r *recording) checkTransparent(reportFile string) {
	r.t.Helper()
	if !bytes.Equal(r.got.Bytes(), r.want.Bytes()) {
		r.t.Errorf("agent → client bytes changed in transit%s", firstDiff(r.got.Bytes(), r.want.Bytes()))
	}
	if got, want := string(readFile(r.t, reportFile)), digestOf(r.sent.Bytes()); got != want {
		r.t.Errorf("client → agent bytes changed in transit: agent read %s, client sent %s", got, want)
	}
}

// readLine returns the next stdout line (with its LF), failing the test if
// none comes before the poll deadline.
func (r *recording) readLine() string {
	r.t.Helper()
	if r.lines == nil {
		r.lines = make(chan []byte, 1024)
		go func() {
			defer close(r.lines)
			br := bufio.NewReader(r.stdout)
			for {
				l, err := br.ReadBytes('\n')
				if len(l) > 0 {
					r.lines <- l
				}
				if err != nil {
					return
				}
			}
		}()
	}
	select {
	case l, ok := <-r.lines:
		if !ok {
			r.t.Fatalf("acptap record's stdout ended early; stderr: %s", r.stderr.String())
		}
		r.got.Write(l)
		return string(l)
	case <-time.After(pollDeadline):
		r.t.Fatalf("no line from acptap record; stderr: %s", r.stderr.String())
	}
	return ""
}

// readLines reads n lines.
func (r *recording) readLines(n int) {
	r.t.Helper()
	for i := 0; i < n; i++ {
		r.readLine()
	}
}

// readRest reads stdout to EOF (after readLine was used).
func (r *recording) readRest() {
	r.t.Helper()
	if r.lines == nil {
		b, err := io.ReadAll(r.stdout)
		if err != nil {
			r.t.Fatal(err)
		}
		r.got.Write(b)
		return
	}
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				return
			}
			r.got.Write(l)
		case <-time.After(pollDeadline):
			r.t.Fatalf("acptap record's stdout did not end; stderr: %s", r.stderr.String())
		}
	}
}

// wait closes stdin, reads stdout to its end and returns acptap's exit code
// once the mapping is complete.
func (r *recording) wait() int {
	r.t.Helper()
	code := r.waitExit()
	waitMapped(r.t, r.cmd.Args[1:])
	return code
}

// waitExit is wait without waiting for a finisher.
func (r *recording) waitExit() int {
	r.t.Helper()
	_ = r.stdin.Close()
	r.readRest()
	errc := make(chan error, 1)
	go func() { errc <- r.cmd.Wait() }()
	select {
	case err := <-errc:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			r.t.Fatal(err)
		}
	case <-time.After(pollDeadline):
		r.t.Fatalf("acptap record did not exit; stderr: %s", r.stderr.String())
	}
	r.state = r.cmd.ProcessState
	return r.state.ExitCode()
}

// runAcptap runs an acptap command to completion.
func runAcptap(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, acptapBin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("acptap %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// rebuild runs `acptap rebuild` of wire into a fresh store and returns it.
func rebuild(t *testing.T, wire string, flags ...string) string {
	t.Helper()
	fresh := filepath.Join(t.TempDir(), "rebuilt")
	args := append(append([]string{"rebuild", "--store", fresh}, flags...), wire)
	out, errOut, code := runAcptap(t, args...)
	if code != 0 {
		t.Fatalf("acptap rebuild exited %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	return fresh
}

// wireLog returns the store's only wire log.
func wireLog(t *testing.T, root string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(root, "wire", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("want one wire log under %s, found %v", root, logs)
	}
	return logs[0]
}

// streamPath is a session's stream: the primary plugin's (plugin "") or
// another plugin's.
func streamPath(root, session, plugin string) string {
	name := store.StreamFile
	if plugin != "" {
		name = plugin + ".asr.jsonl"
	}
	return filepath.Join(root, "sessions", store.EscapeID(session), name)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// records decodes a JSONL file's lines.
func records(t *testing.T, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, l := range bytes.Split(bytes.TrimSuffix(readFile(t, path), []byte("\n")), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		out = append(out, m)
	}
	return out
}

// types lists the "type" of each record.
func types(recs []map[string]any) []string {
	var out []string
	for _, r := range recs {
		s, _ := r["type"].(string)
		out = append(out, s)
	}
	return out
}

// logText is the store's log file (host and relayed plugin logs).
func logText(t *testing.T, root string) string {
	t.Helper()
	return string(readFile(t, store.LogPath(root)))
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// pluginDir makes a plugin directory holding copies of the given binaries
// as acptap-plugin-<name>.
func pluginDir(t *testing.T, bins map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range bins {
		b := readFile(t, src)
		if err := os.WriteFile(filepath.Join(dir, "acptap-plugin-"+name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	sum := sha256.Sum256(readFile(t, path))
	return hex.EncodeToString(sum[:])
}

// sha is the hex sha256 of b.
func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// exitCode is what a shell reports for a finished process: the exit code,
// or 128+n after signal n.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func sortStrings(s []string) []string {
	sort.Strings(s)
	return s
}

// waitMapped waits, after `acptap ARGS…` exited, for the finisher it may
// have handed its mapping to (host/finisher): the store it recorded into
// (--store, or the default under XDG_DATA_HOME) has no pending connection.
func waitMapped(t *testing.T, args []string) {
	t.Helper()
	root := ""
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == "--store" && i+1 < len(args) {
			root = args[i+1]
		}
	}
	if root == "" {
		root = filepath.Join(os.Getenv("XDG_DATA_HOME"), "acptap")
	}
	st, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pollDeadline)
	defer cancel()
	if err := finisher.WaitIdle(ctx, st); err != nil {
		t.Fatalf("mapping not finished after record exited: %v", err)
	}
}
