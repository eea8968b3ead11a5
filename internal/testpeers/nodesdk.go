package testpeers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const modulePath = "github.com/acptap/acptap"

// ModuleRoot returns the directory of this module's go.mod, found by walking
// up from the current directory (go test runs in the package directory).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := moduleRootFromWD()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// NodeSDKDir returns the absolute path of testdata/sdk, the Node test peers
// built on the official @agentclientprotocol/sdk. It skips the test when node
// is not on PATH or the npm dependencies are not installed
// (`cd testdata/sdk && npm ci`).
func NodeSDKDir(t testing.TB) string {
	t.Helper()
	return nodeDir(t, "sdk")
}

// NodeSDK24Dir returns the absolute path of testdata/sdk24, the Node test
// peers on @agentclientprotocol/sdk 2.4.0 (the ACP v2 draft
// 2.0.0-alpha.13), skipping as NodeSDKDir does.
func NodeSDK24Dir(t testing.TB) string {
	t.Helper()
	return nodeDir(t, "sdk24")
}

func nodeDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(ModuleRoot(t), "testdata", name)
	// In CI (CI=true, set by .ci/run) a missing peer is a failure, never a
	// silent skip: `make test` installs it.
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not on PATH: the tests against the official ACP SDK (testdata/sdk) cannot run")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		skip("%s is missing: run `make node-deps` (cd testdata/%s && npm ci) to enable the tests against the official ACP SDK", filepath.Join(dir, "node_modules"), name)
	}
	return dir
}

// NodeArgv returns the argv that runs one of the testdata/sdk scripts
// (e.g. "v2-agent.mjs") with node, for use as an agent command.
func NodeArgv(t testing.TB, script string, args ...string) []string {
	t.Helper()
	return append([]string{"node", filepath.Join(NodeSDKDir(t), script)}, args...)
}

// SDKSummary is the JSON summary written by v1-client.mjs and v2-client.mjs.
type SDKSummary struct {
	Client            string            `json:"client"`
	Protocol          string            `json:"protocol"`
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentInfo         *Implementation   `json:"agentInfo"`
	SessionID         string            `json:"sessionId"`
	PromptMessageIDs  []string          `json:"promptMessageIds"` // v2 only
	Updates           map[string]int    `json:"updates"`          // session/update notifications by sessionUpdate
	TotalUpdates      int               `json:"totalUpdates"`
	StopReasons       []string          `json:"stopReasons"` // v2: idle state_update stopReasons; v1: prompt responses
	Requests          map[string]int    `json:"requests"`    // agent→client requests by method
	PermissionAnswers []json.RawMessage `json:"permissionAnswers"`
	ElicitationAnswer []json.RawMessage `json:"elicitationAnswers"`
	Wire              struct {
		FramesSent         int `json:"framesSent"`
		FramesReceived     int `json:"framesReceived"`
		BatchesSent        int `json:"batchesSent"`
		BatchesReceived    int `json:"batchesReceived"`
		UnparsableReceived int `json:"unparsableReceived"`
	} `json:"wire"`
	ValidationErrors []json.RawMessage `json:"validationErrors"` // what the SDK rejected (it logs and drops them)
	Errors           []json.RawMessage `json:"errors"`
	AgentExit        *struct {
		Code   *int   `json:"code"`
		Signal string `json:"signal"`
		Error  string `json:"error"`
	} `json:"agentExit"`
	OK bool `json:"ok"`
}

// Implementation is ACP's {name, title?, version}.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// SDKResult is the outcome of RunSDKClient.
type SDKResult struct {
	Summary  SDKSummary
	Trace    string // JSONL file: {"dir":"send"|"recv","line":"…"} per wire line, in the client's order
	Stderr   string
	ExitCode int
}

// RunSDKClient runs testdata/sdk/<client> (e.g. "v2-client.mjs") with
// clientArgs, against the agent command agentArgv (any argv: put a recorder
// in front of the agent to test it), and returns its summary and wire trace.
// It fails the test only when the client could not run or wrote no summary;
// check ExitCode and the summary yourself, or call RequireOK.
func RunSDKClient(t testing.TB, client string, clientArgs, agentArgv []string) *SDKResult {
	t.Helper()
	return RunSDKClientIn(t, NodeSDKDir(t), client, clientArgs, agentArgv)
}

// RunSDKClientIn is RunSDKClient for a client in another peer directory
// (NodeSDK24Dir).
func RunSDKClientIn(t testing.TB, dir, client string, clientArgs, agentArgv []string) *SDKResult {
	t.Helper()
	tmp := t.TempDir()
	summary := filepath.Join(tmp, "summary.json")
	trace := filepath.Join(tmp, "trace.jsonl")
	args := []string{filepath.Join(dir, client), "--summary", summary, "--trace", trace}
	args = append(args, clientArgs...)
	args = append(args, "--")
	args = append(args, agentArgv...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	res := &SDKResult{Trace: trace, Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	default:
		t.Fatalf("run node %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatalf("%s wrote no summary (exit %d): %v\nstderr:\n%s", client, res.ExitCode, err, stderr.String())
	}
	if err := json.Unmarshal(b, &res.Summary); err != nil {
		t.Fatalf("parse %s summary: %v\n%s", client, err, b)
	}
	if root := recordStore(agentArgv); root != "" {
		WaitMapped(t, root)
	}
	return res
}

// recordStore is the --store of an `acptap record` in argv, or "".
func recordStore(argv []string) string {
	rec := false
	for i, a := range argv {
		switch {
		case a == "record":
			rec = true
		case a == "--":
			if rec {
				return ""
			}
		case rec && a == "--store" && i+1 < len(argv):
			return argv[i+1]
		}
	}
	return ""
}

// RequireOK fails the test unless the client exited 0 with ok=true and the
// SDK reported no validation errors.
func (r *SDKResult) RequireOK(t testing.TB) {
	t.Helper()
	if r.ExitCode != 0 || !r.Summary.OK || len(r.Summary.Errors) > 0 || len(r.Summary.ValidationErrors) > 0 {
		t.Fatalf("SDK client failed: exit=%d ok=%v errors=%s validationErrors=%s\nstderr:\n%s",
			r.ExitCode, r.Summary.OK, r.Summary.Errors, r.Summary.ValidationErrors, r.Stderr)
	}
}

// TraceLine is one line of a client trace file.
type TraceLine struct {
	Dir  string `json:"dir"` // "send" (client→agent) or "recv" (agent→client)
	Line string `json:"line"`
}

// ReadTrace reads a trace file written with --trace.
func ReadTrace(t testing.TB, path string) []TraceLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open trace: %v", err)
	}
	defer f.Close()
	var out []TraceLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var l TraceLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read trace: %v", err)
	}
	return out
}

// CheckTrace validates every message of a client trace file against the
// official schema of version v and returns the checker (for its counts).
// Each invalid message is reported with t.Errorf.
func CheckTrace(t testing.TB, v Version, path string) *Checker {
	t.Helper()
	c, err := NewChecker(v)
	if err != nil {
		t.Fatalf("load ACP v%d schema: %v", v, err)
	}
	for i, l := range ReadTrace(t, path) {
		from := Client
		if l.Dir == "recv" {
			from = Agent
		}
		if err := c.Check(from, []byte(l.Line)); err != nil {
			t.Errorf("trace line %d (%s): %v\n%s", i+1, from, err, l.Line)
		}
	}
	return c
}
