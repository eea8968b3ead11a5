package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/testpeers"
)

// Streams shared with sdk/asr's tests: two acpv2 golden streams and a
// recorded demo session.
var testStreams = []string{
	"../../sdk/asr/testdata/acpv2-full.asr.jsonl",
	"../../sdk/asr/testdata/acpv2-turn.asr.jsonl",
	"../../sdk/asr/testdata/demo.asr.jsonl",
}

// badStream has one problem per line after the header, and a tail.
const badStream = `{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"x","lossy":[]}}
{"type":"state","seq":2,"id":"r2","state":"running"}
{"type":"message","seq":3,"id":"r3","messageId":"m","role":"robot","content":[]}
{"type":"state","seq":4,"id":"r4","state":"idle"}
{"type":"state","seq":5`

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Self: "acptap"}
	code := Run(env, args)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateCommandValid(t *testing.T) {
	code, out, errOut := runCLI(t, "", append([]string{"validate"}, testStreams...)...)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	want := "../../sdk/asr/testdata/acpv2-full.asr.jsonl: valid (session sess-42, 27 records, 14 entities)\n" +
		"../../sdk/asr/testdata/acpv2-turn.asr.jsonl: valid (session s1, 12 records, 8 entities)\n"
	if !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 3 {
		t.Errorf("stdout:\n%s\nwant to start with:\n%s", out, want)
	}
}

func TestValidateCommandInvalid(t *testing.T) {
	bad := writeFile(t, "bad.asr.jsonl", badStream)
	code, out, _ := runCLI(t, "", "validate", testStreams[0], bad)
	if code != ExitFailure {
		t.Fatalf("exit %d, want 1", code)
	}
	want := strings.Join([]string{
		testStreams[0] + ": valid (session sess-42, 27 records, 14 entities)",
		bad + ":2: seq 2, expected 1: seq is dense from 1 in line order (the header is 0)",
		bad + `:3: message record: role: "robot" is not one of "user", "assistant"`,
		bad + ":5: warning: uncommitted tail: 23 bytes after the last LF are not a record (an interrupted write: readers skip it, the writer truncates it on reopen)",
		bad + ": invalid: 2 errors, 1 warning (session s1, 3 records, 1 entity)",
	}, "\n") + "\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
}

func TestValidateCommandJSON(t *testing.T) {
	bad := writeFile(t, "bad.asr.jsonl", badStream)
	code, out, _ := runCLI(t, "", "validate", "--json", testStreams[1], bad, filepath.Join(t.TempDir(), "missing.jsonl"))
	if code != ExitFailure {
		t.Fatalf("exit %d, want 1", code)
	}
	var doc struct {
		Valid bool `json:"valid"`
		Files []struct {
			File    string `json:"file"`
			Valid   bool   `json:"valid"`
			Error   string `json:"error"`
			Summary *struct {
				SessionID string         `json:"sessionId"`
				Records   int            `json:"records"`
				Errors    int            `json:"errors"`
				Warnings  int            `json:"warnings"`
				Types     map[string]int `json:"types"`
				Lossy     []string       `json:"lossy"`
			} `json:"summary"`
			Problems []struct {
				Line     int    `json:"line"`
				Severity string `json:"severity"`
				Message  string `json:"message"`
			} `json:"problems"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Valid || len(doc.Files) != 3 {
		t.Fatalf("doc: %+v", doc)
	}
	ok, b, missing := doc.Files[0], doc.Files[1], doc.Files[2]
	if !ok.Valid || ok.Summary.SessionID != "s1" || ok.Summary.Records != 12 || len(ok.Problems) != 0 || ok.Summary.Types["tool_call"] != 1 {
		t.Errorf("valid file: %+v", ok)
	}
	if b.Valid || b.Summary.Errors != 2 || b.Summary.Warnings != 1 || len(b.Problems) != 3 ||
		b.Problems[1].Line != 3 || b.Problems[2].Severity != "warning" {
		t.Errorf("invalid file: %+v", b)
	}
	if missing.Valid || !strings.Contains(missing.Error, "no such file") || missing.Summary != nil {
		t.Errorf("missing file: %+v", missing)
	}
}

func TestValidateCommandSessionID(t *testing.T) {
	root := t.TempDir()
	st, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(testStreams[0])
	if err != nil {
		t.Fatal(err)
	}
	path := st.StreamPath("sess/42")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "validate", "--store", root, "sess/42")
	if code != ExitOK || out != path+": valid (session sess-42, 27 records, 14 entities)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "", "validate", "--store", root, "nope")
	if code != ExitFailure || !strings.Contains(errOut, `no session "nope" in the store`) {
		t.Errorf("unknown session: exit %d, stderr %q", code, errOut)
	}
}

func TestValidateCommandStdinAndUsage(t *testing.T) {
	b, err := os.ReadFile(testStreams[1])
	if err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, string(b), "validate", "-"); code != ExitOK || !strings.HasPrefix(out, "<stdin>: valid") {
		t.Errorf("stdin: exit %d, %q", code, out)
	}
	if code, _, errOut := runCLI(t, "", "validate"); code != ExitUsage || !strings.Contains(errOut, "no stream given") {
		t.Errorf("no args: exit %d, %q", code, errOut)
	}
	if code, _, _ := runCLI(t, "", "validate", "--bogus", "x"); code != ExitUsage {
		t.Errorf("bad flag: exit %d", code)
	}
	if code, _, errOut := runCLI(t, "", "validate", t.TempDir()); code != ExitFailure || !strings.Contains(errOut, "is a directory") {
		t.Errorf("directory: exit %d, %q", code, errOut)
	}
	_, _, usage := runCLI(t, "")
	if !strings.Contains(usage, "  validate ") || !strings.Contains(usage, "  show ") {
		t.Errorf("usage does not list validate and show:\n%s", usage)
	}
}

// TestValidateDemoStreams builds acptap, records the demo session into a
// fresh store through real processes, and validates every stream written
// with the built binary.
func TestValidateDemoStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the demo")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the demo needs a POSIX system")
	}
	bin, err := testpeers.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "store")
	home := t.TempDir()
	cmdEnv := append(os.Environ(), "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home)
	demo := exec.Command(bin, "demo", "--store", dir)
	demo.Env = cmdEnv
	if out, err := demo.CombinedOutput(); err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	streams, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*.asr.jsonl"))
	if len(streams) == 0 {
		t.Fatal("the demo wrote no stream")
	}
	val := exec.Command(bin, append([]string{"validate"}, streams...)...)
	val.Env = cmdEnv
	out, err := val.CombinedOutput()
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), ": valid ("); n != len(streams) || strings.Contains(string(out), "warning") {
		t.Errorf("validate output:\n%s", out)
	}
	// show, piped: plain text.
	show := exec.Command(bin, "show", streams[0])
	show.Env = cmdEnv
	out, err = show.Output()
	if err != nil || bytes.Contains(out, []byte("\x1b[")) || !bytes.Contains(out, []byte("user: ")) {
		t.Errorf("show: %v\n%s", err, out)
	}
}
