package replaytest

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
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/internal/testpeers"
)

// result is a finished acptap process.
type result struct {
	code           int
	stdout, stderr string
}

// acptap runs the acptap binary with stdin and args.
func acptap(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, acptapBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("run acptap %v: %v", args, err)
	}
	return r
}

// lines splits output into lines (without the final empty one).
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// everyTypeFixture is the hand-written stream with every record type.
const everyTypeFixture = "../../plugins/acpv2/testdata/replay_every_type.asr.jsonl"

var (
	demoOnce sync.Once
	demoDir  string
	demoID   string
	demoErr  string
)

// demoStore is a store written by `acptap demo` (a real recording through
// the tee: wire log and stream), plus the stream with every record type as
// session "sess-every" (which has no wire log). Built once; tests only read
// it.
func demoStore(t testing.TB) (dir, session string) {
	t.Helper()
	demoOnce.Do(func() {
		dir := filepath.Join(tmpRoot, "demo")
		r := acptap(t, "", "demo", "--acp", "2", "--store", dir)
		if r.code != 0 {
			demoErr = "acptap demo: exit " + r.stderr + r.stdout
			return
		}
		ids, _ := filepath.Glob(filepath.Join(dir, "sessions", "*"))
		if len(ids) != 1 {
			demoErr = "demo wrote " + strings.Join(ids, ", ")
			return
		}
		demoID = filepath.Base(ids[0])
		b, err := os.ReadFile(everyTypeFixture)
		if err == nil {
			err = os.MkdirAll(filepath.Join(dir, "sessions", "sess-every"), 0o700)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "sessions", "sess-every", "stream.asr.jsonl"), b, 0o600)
		}
		if err != nil {
			demoErr = err.Error()
			return
		}
		demoDir = dir
	})
	if demoErr != "" {
		t.Fatal(demoErr)
	}
	return demoDir, demoID
}

// streamFile is a session's stream in a store.
func streamFile(store, session string) string {
	return filepath.Join(store, "sessions", session, "stream.asr.jsonl")
}

var (
	sdkOnce    sync.Once
	sdkDir     string
	sdkSession string
	sdkErr     string
)

// sdkStore is a store holding a session the official SDK's v2 agent drove
// in "everything" mode (every alpha.9 update kind, a batch, a permission,
// an elicitation), recorded by `acptap record` between it and the SDK's v2
// client. It skips the test when node or the SDK is missing.
func sdkStore(t *testing.T) (dir, session string) {
	t.Helper()
	agent := testpeers.NodeArgv(t, "v2-agent.mjs")
	sdkOnce.Do(func() {
		dir := filepath.Join(tmpRoot, "sdk")
		work := filepath.Join(tmpRoot, "sdk-work")
		if err := os.MkdirAll(work, 0o700); err != nil {
			sdkErr = err.Error()
			return
		}
		res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", work},
			append([]string{acptapBin, "record", "--store", dir, "--"}, agent...))
		if res.ExitCode != 0 || !res.Summary.OK {
			sdkErr = "the SDK session through acptap record failed: " + res.Stderr
			return
		}
		sdkDir, sdkSession = dir, res.Summary.SessionID
	})
	if sdkErr != "" {
		t.Fatal(sdkErr)
	}
	return sdkDir, sdkSession
}

// notification is a session/update notification.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  struct {
		SessionID string         `json:"sessionId"`
		Update    map[string]any `json:"update"`
	} `json:"params"`
}

func decodeUpdate(t testing.TB, line string) notification {
	t.Helper()
	var n notification
	if err := json.Unmarshal([]byte(line), &n); err != nil {
		t.Fatalf("not JSON: %v: %s", err, line)
	}
	if n.JSONRPC != "2.0" || n.Method != "session/update" || n.Params.Update == nil {
		t.Fatalf("not a session/update notification: %s", line)
	}
	return n
}

// entityID names what an update is about, as v2-replay-client.mjs does.
func entityID(u map[string]any) any {
	for _, k := range []string{"messageId", "toolCallId", "terminalId", "compactionId"} {
		if v, ok := u[k]; ok {
			return v
		}
	}
	if p, ok := u["plan"].(map[string]any); ok {
		return p["planId"]
	}
	if s, ok := u["state"]; ok {
		return s
	}
	return nil
}

func parseReport(t testing.TB, b string) replay.LossReport {
	t.Helper()
	r, err := replay.ParseLossReport([]byte(b))
	if err != nil {
		t.Fatalf("loss report: %v\n%s", err, b)
	}
	return r
}

// wireFrames reads a wire log's frame lines (decoded), in order.
func wireFrames(t testing.TB, path string) []wireFrame {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []wireFrame
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var e wireFrame
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Type == "frame" {
			out = append(out, e)
		}
	}
	return out
}

type wireFrame struct {
	Type string `json:"type"`
	Dir  string `json:"dir"`
	Line string `json:"line"`
}
