package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/demo/clientlib"
	"github.com/acptap/acptap/internal/testpeers"
	"github.com/acptap/acptap/sdk"
)

// exampleAgent is the bundled example agent served by the acptap binary.
func exampleAgent() []string { return []string{acptapBin, "__example-agent"} }

// clientRun is one scripted clientlib session through `acptap record`.
type clientRun struct {
	sum    clientlib.Summary
	code   int
	stderr string
}

// runClient runs `acptap record FLAGS -- acptap __example-agent` and drives
// it with the scripted example client. onStart, if set, gets the pid of the
// record process before the script starts.
func runClient(t *testing.T, flags []string, opts clientlib.Options, onStart func(pid int)) clientRun {
	t.Helper()
	return runClientAgent(t, flags, exampleAgent(), opts, onStart)
}

// runClientAgent is runClient with another agent command.
func runClientAgent(t *testing.T, flags, agent []string, opts clientlib.Options, onStart func(pid int)) clientRun {
	t.Helper()
	args := append(append([]string{"record"}, flags...), "--")
	cmd := exec.Command(acptapBin, append(args, agent...)...)
	var stderr testpeers.SyncBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	if onStart != nil {
		onStart(cmd.Process.Pid)
	}
	if opts.Cwd == "" {
		opts.Cwd = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := clientlib.RunConn(ctx, stdout, stdin, opts)
	if err != nil {
		t.Fatalf("client: %v\nstderr: %s", err, stderr.String())
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case <-waitErr:
	case <-time.After(pollDeadline):
		t.Fatalf("acptap record did not exit after the session; stderr: %s", stderr.String())
	}
	waitMapped(t, cmd.Args[1:])
	return clientRun{sum: sum, code: exitCode(cmd.ProcessState), stderr: stderr.String()}
}

// sameAsSeen blanks what differs between two runs of the same script (the
// agent's random session id).
func sameAsSeen(s clientlib.Summary) clientlib.Summary {
	s.SessionID = ""
	return s
}

// TestRecordPluginCrashRestart: the acpv2 plugin process is SIGKILLed in the
// middle of a session (after the first prompt's stream header is written,
// before the second prompt is sent). The client sees exactly what a
// crash-free run shows it; the host restarts the plugin and re-feeds it from
// the wire log, so the final stream is byte for byte what `acptap rebuild`
// of the same wire log writes into a fresh store; the log says so.
func TestRecordPluginCrashRestart(t *testing.T) {
	calm := runClient(t, []string{"--store", t.TempDir()}, clientlib.Options{}, nil)
	if calm.code != 0 {
		t.Fatalf("crash-free run: exit %d; stderr: %s", calm.code, calm.stderr)
	}

	root := t.TempDir()
	var (
		recordPID int
		once      sync.Once
		hookErr   error
		killed    proc
	)
	opts := clientlib.Options{OnUpdate: func(session string, u json.RawMessage) {
		var h struct {
			SessionUpdate string `json:"sessionUpdate"`
		}
		_ = json.Unmarshal(u, &h)
		// usage_update is the last update of the first turn: the client is
		// blocked here, so the second prompt is not sent until we return.
		if h.SessionUpdate != "usage_update" {
			return
		}
		once.Do(func() {
			stream := streamPath(root, session, "")
			hookErr = pollErr("the first prompt's stream header", func() bool {
				b, _ := os.ReadFile(stream)
				return bytes.Contains(b, []byte("\n"))
			})
			if hookErr != nil {
				return
			}
			var ok bool
			hookErr = pollErr("the acpv2 plugin process", func() bool {
				killed, ok = findChild(recordPID, builtinPlugin("acpv2"))
				return ok
			})
			if hookErr != nil {
				return
			}
			if hookErr = syscall.Kill(killed.pid, syscall.SIGKILL); hookErr != nil {
				return
			}
			hookErr = pollErr("the killed plugin to be gone", func() bool { return !killed.alive() })
		})
	}}
	// Record restarts the plugin only while it maps: with the mapping handed
	// to a finisher, the finisher would map the wire log with a new one.
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), mapBeforeExit)
	crash := runClient(t, []string{"--store", root, "--config", cfg}, opts, func(pid int) { recordPID = pid })
	if hookErr != nil {
		t.Fatal(hookErr)
	}
	if killed.pid == 0 {
		t.Fatal("the session ended before the plugin could be killed")
	}
	if crash.code != 0 {
		t.Fatalf("exit %d; stderr: %s", crash.code, crash.stderr)
	}
	if d := cmp.Diff(sameAsSeen(calm.sum), sameAsSeen(crash.sum)); d != "" {
		t.Errorf("the client saw the crash (-crash-free +crashed):\n%s", d)
	}

	live := streamPath(root, crash.sum.SessionID, "")
	rebuilt := streamPath(rebuild(t, wireLog(t, root)), crash.sum.SessionID, "")
	if a, b := readFile(t, live), readFile(t, rebuilt); !bytes.Equal(a, b) {
		t.Errorf("the stream written across the crash differs from the rebuilt one%s", firstDiff(a, b))
	}
	log := logText(t, root)
	defer func() {
		if t.Failed() {
			t.Logf("log:\n%s", log)
		}
	}()
	for _, want := range []string{"plugin failed; restarting and re-feeding from the wire log", `"restarts":1`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q", want)
		}
	}
}

// TestRebuildReproducesLiveStream: `acptap rebuild` of a live session's
// wire log into another store writes the same output files — the ASR
// stream, and the AEP events when a plugin writes them — byte for byte.
func TestRebuildReproducesLiveStream(t *testing.T) {
	root := t.TempDir()
	run := runClient(t, []string{"--store", root}, clientlib.Options{}, nil)
	if run.code != 0 {
		t.Fatalf("exit %d; stderr: %s", run.code, run.stderr)
	}
	fresh := rebuild(t, wireLog(t, root))
	live, again := outputFiles(t, root), outputFiles(t, fresh)
	if !exists(streamPath(root, run.sum.SessionID, "")) {
		t.Fatalf("the live run wrote no stream; outputs: %v", keys(live))
	}
	t.Logf("outputs compared: %v", keys(live))
	if d := cmp.Diff(keys(live), keys(again)); d != "" {
		t.Fatalf("files (-live +rebuilt):\n%s", d)
	}
	for name, b := range live {
		if !bytes.Equal(b, again[name]) {
			t.Errorf("%s: rebuilt file differs%s", name, firstDiff(b, again[name]))
		}
	}
}

// outputFiles maps every output file of a store to its bytes: the ASR
// streams under sessions/ and the AEP files under aep/ (not the store's own
// bookkeeping, such as a session's connections count).
func outputFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, sub := range []string{"sessions", "aep"} {
		dir := filepath.Join(root, sub)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return nil
			}
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[rel], err = os.ReadFile(p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return sortStrings(out)
}

// TestRecordNeverStoresMCPSecrets: MCP server secrets (env values, header
// values, args) sent in session/new never reach any file of the store —
// wire logs (also decoded), streams, logs at trace level — while the agent
// receives them untouched. Two connections share the store: the example
// client and agent, and a scripted one that also sends session/resume,
// session/fork, a batch, a \u-escaped mcpServers key and a truncated line.
func TestRecordNeverStoresMCPSecrets(t *testing.T) {
	root := t.TempDir()
	flags := []string{"--store", root, "--log-level", "trace"}

	run := runClient(t, flags, clientlib.Options{}, nil)
	if run.code != 0 {
		t.Fatalf("example session: exit %d; stderr: %s", run.code, run.stderr)
	}

	secret := func(n int) string {
		return fmt.Sprintf(`[{"type":"stdio","name":"s","command":"/bin/mcp","args":["%s"],"env":[{"name":"K","value":"%s"}]},`+
			`{"type":"http","name":"h","url":"https://mcp.example.invalid","headers":[{"name":"X","value":"%s"}]}]`, secretArg, secretEnv, secretHeader)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"e2e","version":"1"}}}` + "\n",
		sessionNewWithSecrets(1) + "\n",
		`{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":"` + e2eSession + `","cwd":"/tmp/e2e","mcpServers":` + secret(2) + `}}` + "\n",
		`{"jsonrpc":"2.0","id":3,"method":"session/fork","params":{"sessionId":"` + e2eSession + `","cwd":"/tmp/e2e","mcpServers":` + secret(3) + `}}` + "\n",
		`[` + sessionNewWithSecrets(4) + `,{"jsonrpc":"2.0","method":"_e2e/x"}]` + "\n",
		`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/tmp/e2e","mcp\u0053ervers":` + secret(5) + `}}` + "\n",
		`{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"/tmp/e2e","mcpServers":` + secret(6)[:120] + "\n",
	}
	reportFile := filepath.Join(t.TempDir(), "report")
	r := startRecord(t, flags, helperCmd(), helperEnv+"="+helperACP, reportEnv+"="+reportFile)
	var sent strings.Builder
	for _, l := range lines {
		r.send(l)
		sent.WriteString(l)
	}
	if code := r.wait(); code != 0 {
		t.Fatalf("scripted session: exit %d; stderr: %s", code, r.stderr.String())
	}
	if got, want := string(readFile(t, reportFile)), digestOf([]byte(sent.String())); got != want {
		t.Fatalf("the agent did not receive the client's bytes (with the secrets) untouched")
	}

	secrets := append(append([]string{}, clientlib.Secrets...), secretEnv, secretArg, secretHeader)
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s contains the secret %s", p, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Decoded wire frames too (lines that are not UTF-8 are stored base64).
	wires, _ := filepath.Glob(filepath.Join(root, "wire", "*.jsonl"))
	scrubbed := 0
	for _, w := range wires {
		frames := readWire(t, w)
		for _, fr := range append(frames[sdk.C2A], frames[sdk.A2C]...) {
			for _, s := range secrets {
				if bytes.Contains(fr.Line, []byte(s)) {
					t.Errorf("%s frame %d contains the secret %s", w, fr.Seq, s)
				}
			}
			if bytes.Contains(fr.Line, []byte(strings.TrimSuffix(wire.Scrubbed, "]"))) {
				scrubbed++
			}
		}
	}
	// The check is not vacuous: both wire logs hold every scrubbed request
	// (one from the example client, six from the scripted one), and the
	// stream and the log exist.
	t.Logf("%d files checked; %d scrubbed frames in %d wire logs", files, scrubbed, len(wires))
	if len(wires) != 2 || scrubbed != 7 || !exists(streamPath(root, run.sum.SessionID, "")) || !exists(filepath.Join(root, "logs", "acptap.log")) {
		t.Errorf("expected 2 wire logs with 7 scrubbed frames, a stream and a log; found %d wire logs, %d scrubbed frames, %d files", len(wires), scrubbed, files)
	}
}

// TestRebuildReproducesPartialSnapshots: with partial snapshots on
// (plugins.acpv2.config.partialEvery, ASR-705's MAY) the live stream holds
// snapshots superseded by final records, the stream validates, and a
// rebuild of the wire log with the same configuration writes it byte for
// byte: the trigger counts updates, never time.
func TestRebuildReproducesPartialSnapshots(t *testing.T) {
	root := t.TempDir()
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), "[plugins.acpv2.config]\npartialEvery = 1\n")
	// The agent answers each prompt when it takes it, as ACP v2 agents do:
	// snapshots wait for that answer (the prompt goes first in its turn).
	agent := append(exampleAgent(), "--respond-first")
	run := runClientAgent(t, []string{"--store", root, "--config", cfg}, agent, clientlib.Options{}, nil)
	if run.code != 0 {
		t.Fatalf("exit %d; stderr: %s", run.code, run.stderr)
	}
	stream := streamPath(root, run.sum.SessionID, "")
	live, err := os.ReadFile(stream)
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runAcptap(t, "validate", stream); code != 0 {
		t.Fatalf("validate exited %d: %s%s", code, out, errOut)
	}
	again, err := os.ReadFile(streamPath(rebuild(t, wireLog(t, root), "--config", cfg), run.sum.SessionID, ""))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(live, again) {
		t.Errorf("rebuilt stream differs%s", firstDiff(live, again))
	}
	plain, err := os.ReadFile(streamPath(rebuild(t, wireLog(t, root)), run.sum.SessionID, ""))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(plain, []byte("\n")) >= bytes.Count(live, []byte("\n")) {
		t.Errorf("without partialEvery the rebuild has %d lines, with it %d: the snapshots are missing",
			bytes.Count(plain, []byte("\n")), bytes.Count(live, []byte("\n")))
	}
}

// TestRebuildLaterConnectionKeepsEarlierOutputs: a session recorded over
// two connections (session/new, then session/resume) with the default
// plugins, acpv2 and aep. Rebuilding the second connection's wire log in
// the same store keeps what the first wrote — the stream's first lines
// and the AEP file's first events, as the session entry counted them —
// and writes the rest again, so every output file is byte for byte what
// the live runs left.
func TestRebuildLaterConnectionKeepsEarlierOutputs(t *testing.T) {
	root := t.TempDir()
	for _, conv := range [][]string{
		{initLine, newLine, promptLine(2, 1)},
		{initLine, resumeLine(1), promptLine(2, 2)},
	} {
		r, report := startScripted(t, []string{"--store", root}, 0)
		r.converse(&acpAgent{}, conv...)
		if code := r.wait(); code != 0 {
			t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
		}
		r.checkTransparent(report)
	}
	wires, _ := filepath.Glob(filepath.Join(root, "wire", "*.jsonl"))
	wires = sortStrings(wires)
	if len(wires) != 2 {
		t.Fatalf("wire logs: %v", wires)
	}
	first := readWireSession(t, wires[1])
	if first.PriorLines == 0 || first.AEPLines == 0 {
		t.Fatalf("the second connection's session entry = %+v: want the stream's lines and the AEP file's events", first)
	}
	live := outputFiles(t, root)
	aep := live[filepath.Join("aep", "acp", e2eSession+".jsonl")]
	if n := bytes.Count(aep, []byte("\n")); n <= first.AEPLines {
		t.Fatalf("the AEP file has %d events, the first connection %d: the second wrote none", n, first.AEPLines)
	}
	rebuild(t, wires[1], "--store", root)
	again := outputFiles(t, root)
	if d := cmp.Diff(keys(live), keys(again)); d != "" {
		t.Fatalf("files (-live +rebuilt):\n%s", d)
	}
	for name, b := range live {
		if !bytes.Equal(b, again[name]) {
			t.Errorf("%s: rebuilt file differs%s", name, firstDiff(b, again[name]))
		}
	}
}

// readWireSession returns the wire log's first session entry.
func readWireSession(t *testing.T, path string) wire.Session {
	t.Helper()
	r, err := wire.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("no session entry in %s: %v", path, err)
		}
		if e.Type == wire.TypeSession {
			return e.Session
		}
	}
}
