package thirdparty

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Secrets the editor gives the MCP servers of session/new: none may reach
// the store (ASR-712; the wire log scrubs them).
var claudeSecrets = []string{"SECRET-ARG-3f9a", "SECRET-ENV-77c1", "SECRET-HDR-b02e"}

// claudeEnv makes claude-agent-acp fail fast and offline: no credentials,
// a fresh HOME, every HTTP(S) request sent to a closed loopback port, no
// telemetry or update checks; IS_SANDBOX lets Claude Code run as root in
// a container.
func claudeEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "CLAUDE_") || strings.HasSuffix(strings.ToLower(k), "_proxy") || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	dead := "http://127.0.0.1:9"
	return append(env, "HOME="+home, "IS_SANDBOX=1",
		"HTTPS_PROXY="+dead, "HTTP_PROXY="+dead, "https_proxy="+dead, "http_proxy="+dead, "ALL_PROXY="+dead, "NO_PROXY=", "no_proxy=",
		"ANTHROPIC_BASE_URL="+dead, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1")
}

// TestClaudeAgentACPBehindRecord: Zed's Claude Code agent
// (@zed-industries/claude-agent-acp 0.23.1, ACP v1 on SDK 0.17) runs behind
// acptap record; the test is the editor: initialize, session/new with MCP
// servers carrying secrets, a prompt, which fails without credentials
// (-32000 Authentication required) and without any network call. Every
// byte crossed unchanged both ways; acptap exits with the agent's own exit
// code; the failure is in the stream and in show and sessions; no secret
// is in the store; the streams are valid.
func TestClaudeAgentACPBehindRecord(t *testing.T) {
	dir := peersDir(t, filepath.Join("@zed-industries", "claude-agent-acp"))
	store, home, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	codeFile := filepath.Join(t.TempDir(), "agent-exit-code")
	// The shell reports the agent's own exit code, so that acptap's can be
	// compared with it.
	// (trap: the shell outlives a SIGTERM to the agent's group to report it.)
	agent := fmt.Sprintf(`trap : TERM; node %s; c=$?; echo $c > %s; exit $c`,
		filepath.Join(dir, "node_modules", "@zed-industries", "claude-agent-acp", "dist", "index.js"), codeFile)
	cmd := exec.Command(acptapBin, "record", "--store", store, "--", "sh", "-c", agent)
	cmd.Env = claudeEnv(home)
	cmd.Dir = cwd
	var stderr bytes.Buffer
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
	defer func() { _ = cmd.Process.Kill() }()

	var sent, got bytes.Buffer
	lines := make(chan []byte, 64)
	go func() {
		br := bufio.NewReader(io.TeeReader(stdout, &got))
		for {
			l, err := br.ReadBytes('\n')
			if len(l) > 0 {
				lines <- l
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	send := func(s string) {
		t.Helper()
		sent.WriteString(s + "\n")
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("write: %v\nstderr:\n%s", err, stderr.String())
		}
	}
	// await returns the response to request id (updates in between are kept).
	await := func(id int) map[string]any {
		t.Helper()
		deadline := time.After(3 * time.Minute)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the agent closed its stdout before answering #%d\nstderr:\n%s", id, stderr.String())
				}
				var m map[string]any
				if json.Unmarshal(l, &m) != nil {
					continue
				}
				if _, isCall := m["method"]; !isCall && m["id"] == float64(id) {
					return m
				}
			case <-deadline:
				t.Fatalf("no answer to #%d\nstderr:\n%s", id, stderr.String())
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"acptap-test-editor","version":"1"}}}`)
	if r := await(0); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[`+
		`{"name":"gh","command":"/bin/cat","args":["--token","%s"],"env":[{"name":"GH_TOKEN","value":"%s"}]},`+
		`{"type":"http","name":"docs","url":"http://127.0.0.1:9/mcp","headers":[{"name":"Authorization","value":"Bearer %s"}]}]}}`,
		cwd, claudeSecrets[0], claudeSecrets[1], claudeSecrets[2]))
	r := await(1)
	res, _ := r["result"].(map[string]any)
	sid, _ := res["sessionId"].(string)
	if sid == "" {
		t.Fatalf("session/new: %v\nstderr:\n%s", r, stderr.String())
	}
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"Say hello."}]}}`, sid))
	r = await(2)
	e, _ := r["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32000) {
		t.Fatalf("session/prompt was answered %v; want the -32000 authentication error", r)
	}
	// Like an editor: close the agent's stdin; claude-agent-acp keeps
	// running with a live session, so after a grace period, SIGTERM.
	stdin.Close()
	exited := make(chan error, 1)
	go func() {
		for range lines {
		}
		exited <- cmd.Wait()
	}()
	select {
	case err = <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-exited:
		case <-time.After(2 * time.Minute):
			t.Fatalf("acptap record did not exit after SIGTERM\nstderr:\n%s", stderr.String())
		}
	}
	code := cmd.ProcessState.ExitCode()
	b, rerr := os.ReadFile(codeFile)
	if rerr != nil {
		t.Fatalf("the agent wrote no exit code: %v (acptap: %v)\nstderr:\n%s", rerr, err, stderr.String())
	}
	if want, _ := strconv.Atoi(strings.TrimSpace(string(b))); code != want {
		t.Errorf("acptap exited %d; the agent exited %d", code, want)
	}

	_, c2a, a2c, _ := wireOf(t, store)
	if !bytes.Equal(a2c, got.Bytes()) {
		t.Errorf("the editor got other bytes than the agent wrote (%d vs %d bytes)", got.Len(), len(a2c))
	}
	// The wire log scrubs MCP secrets from what it keeps: compare the
	// editor's bytes with the agent's input less those.
	if bytes.Contains(c2a, []byte(claudeSecrets[0])) || len(c2a) == 0 {
		t.Errorf("the wire log kept an MCP secret, or no editor bytes")
	}
	if !bytes.Equal(scrubbedLines(sent.Bytes(), 1), scrubbedLines(c2a, 1)) {
		t.Errorf("the editor's frames other than session/new differ from the wire log's")
	}
	noSecrets(t, store, claudeSecrets...)
	validStreams(t, store)

	ss := listSessions(t, store)
	if len(ss.Sessions) != 1 || ss.Sessions[0].ID != sid {
		t.Fatalf("sessions %+v, want %s", ss, sid)
	}
	s := ss.Sessions[0]
	if !strings.Contains(s.Agent, "claude") || s.Revision != "acp 1" || s.Failures != 1 {
		t.Errorf("session %+v: want Claude's agent, ACP v1, one failure", s)
	}
	show, errs, code := run(t, "show", "--store", store, sid)
	if code != 0 || !strings.Contains(show, "Authentication required") {
		t.Errorf("acptap show does not show the failed prompt: exit %d\n%s%s", code, show, errs)
	}
	list, _, _ := run(t, "sessions", "--store", store)
	t.Logf("acptap sessions:\n%s", list)
	t.Logf("acptap show %s:\n%s", sid, show)
}

// scrubbedLines drops line n (0-based) of b: the session/new frame, whose
// MCP secrets the wire log replaced.
func scrubbedLines(b []byte, n int) []byte {
	ls := bytes.SplitAfter(b, []byte("\n"))
	if n < len(ls) {
		ls = append(ls[:n:n], ls[n+1:]...)
	}
	return bytes.Join(ls, nil)
}
