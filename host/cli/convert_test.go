package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/host/builtin"
	"github.com/acptap/acptap/host/logimport"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/testpeers"
	"github.com/acptap/acptap/sdk/aep"
	"github.com/acptap/acptap/sdk/aep/aepcheck"
)

var (
	convertBinOnce sync.Once
	convertBinDir  string
	convertBin     string
	convertBinErr  error
)

// TestMain removes the acptap binary the convert tests build (once, on
// first use, so the other tests of this package do not wait for it).
func TestMain(m *testing.M) {
	code := m.Run()
	if convertBinDir != "" {
		os.RemoveAll(convertBinDir)
	}
	os.Exit(code)
}

// acptapBinary builds ./cmd/acptap once per test binary.
func acptapBinary(t *testing.T) string {
	t.Helper()
	convertBinOnce.Do(func() {
		convertBinDir, convertBinErr = os.MkdirTemp("", "acptap-convert-test-")
		if convertBinErr != nil {
			return
		}
		convertBin, convertBinErr = testpeers.Build(convertBinDir)
	})
	if convertBinErr != nil {
		t.Fatal(convertBinErr)
	}
	return convertBin
}

// runBinary runs the built acptap with a clean configuration.
func runBinary(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(acptapBinary(t), args...)
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "PATH=" + os.Getenv("PATH")}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &exitErr):
		return exitErr.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("run acptap: %v", err)
	return 0, "", ""
}

func TestConvertUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"convert", "x.jsonl"}, "acptap convert: --from is required (supported: acp-v1-log)\n"},
		{[]string{"convert", "--from", "acp-v2-log", "x.jsonl"}, "acptap convert: --from \"acp-v2-log\" is not supported (supported: acp-v1-log)\n"},
		{[]string{"convert", "--from", "acp-v1-log"}, "acptap convert: no LOG given\n"},
		{[]string{"convert", "--from", "acp-v1-log", "-", "a", "-"}, "acptap convert: - (standard input) may be given once\n"},
	} {
		code, out, errOut := runCLI(t, "", c.args...)
		if code != ExitUsage || out != "" || errOut != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errOut)
		}
	}
}

func TestConvertProgressLine(t *testing.T) {
	var p logimport.Progress
	if progressLine(&p, time.Now()) != "" {
		t.Error("a line before any input")
	}
	p.Reset("/logs/day1.jsonl.gz", 4<<30)
	start := time.Unix(0, p.Started.Load())
	p.Read.Store(1 << 30)
	p.Frames.Store(2_000_000)
	p.Outputs.Store(12_345)
	want := "day1.jsonl.gz:  25% 1.00 GiB/4.00 GiB · 102.4 MiB/s · 2.0M records (200k/s) · 12k outputs"
	if got := progressLine(&p, start.Add(10*time.Second)); got != want {
		t.Errorf("progress\n got %q\nwant %q", got, want)
	}
	p.Mapping.Store(true)
	p.Mapped.Store(500_000)
	if got := progressLine(&p, start.Add(11*time.Second)); got != "day1.jsonl.gz: read; the plugins are mapping about 25% of 2.0M records · 12k outputs" {
		t.Errorf("mapping: %q", got)
	}
}

// sdkV1Trace runs the official npm SDK's v1 client against its v1 agent
// (directly connected) and returns the client's wire trace.
func sdkV1Trace(t *testing.T) string {
	t.Helper()
	res := testpeers.RunSDKClient(t, "v1-client.mjs", []string{"--cwd", t.TempDir()}, testpeers.NodeArgv(t, "v1-agent.mjs"))
	res.RequireOK(t)
	return res.Trace
}

// framesOf strips a trace to its lines: JSONL of v1 frames without
// directions.
func framesOf(t *testing.T, trace string) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, l := range testpeers.ReadTrace(t, trace) {
		out.WriteString(l.Line + "\n")
	}
	return out.Bytes()
}

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// validAEP checks every event of an AEP log against the AEP schemas and
// stream rules and returns the counts by type.
func validAEP(t *testing.T, path string) map[string]int {
	t.Helper()
	v, err := aepcheck.DefaultValidator()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s aep.Stream
	types := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		h, err := v.Validate(sc.Bytes())
		if err != nil {
			t.Errorf("%s:%d: not a valid AEP event: %v", path, n, err)
			continue
		}
		canon, _ := aep.CanonicalRaw(sc.Bytes())
		if err := s.Admit(h, canon); err != nil {
			t.Errorf("%s:%d: %v", path, n, err)
		}
		var e struct{ Type string }
		json.Unmarshal(sc.Bytes(), &e)
		types[e.Type]++
	}
	return types
}

// TestConvertSDKV1LogsEndToEnd: logs of a session between the official npm
// SDK's v1 client and agent — the client's trace, the same frames without
// directions gzipped, and those frames on standard input — convert through
// the acptap binary into valid AEP events (the same for each form), and
// into an ASR stream that passes `acptap validate` when the acpv1 plugin is
// built in. Converting again skips; a missing LOG fails the run, not the
// others; stderr stays quiet when it is not a terminal.
func TestConvertSDKV1LogsEndToEnd(t *testing.T) {
	trace := sdkV1Trace(t)
	dir := t.TempDir()
	frames := framesOf(t, trace)
	framesGz := filepath.Join(dir, "frames.jsonl.gz")
	if err := os.WriteFile(framesGz, gzipBytes(t, frames), 0o600); err != nil {
		t.Fatal(err)
	}
	const sid = "sdk-v1-session-1"
	wantAEP := map[string]int{"session.started": 1, "run.started": 2, "run.finished": 2, "tool.requested": 2,
		"tool.completed": 2, "attention.requested": 2, "session.ended": 1}
	withACPv1 := slices.Contains(builtin.Names(), "acpv1")

	var first map[string]int
	for _, c := range []struct {
		name   string
		args   []string
		stdin  []byte
		format string
	}{
		{"trace", []string{trace}, nil, "trace"},
		{"frames.gz", []string{framesGz}, nil, "frames, gzip"},
		{"stdin", []string{"-"}, frames, "frames"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := t.TempDir()
			args := append([]string{"convert", "--from", "acp-v1-log", "--store", st}, c.args...)
			code, out, errOut := runBinary(t, c.stdin, args...)
			if code != ExitOK || errOut != "" {
				t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, errOut, out)
			}
			for _, want := range []string{": " + c.format + " → wire/v1-", "  50 lines → 50 frames (13 c2a, 37 a2c)\n",
				"  sessions: 1 (" + sid + ")\n", "  AEP: 34 events: ", "  wrote aep/acp/" + sid + ".jsonl\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			wires, _ := filepath.Glob(filepath.Join(st, "wire", "v1-*.jsonl"))
			if len(wires) != 1 {
				t.Fatalf("wire logs %v", wires)
			}
			r, err := wire.Open(wires[0])
			if err != nil {
				t.Fatal(err)
			}
			if src := r.Header().Source; src == nil || src.Mode != "convert" || src.From != "acp-v1-log" || len(src.SHA256) != 64 {
				t.Errorf("header source %+v", src)
			}
			r.Close()
			types := validAEP(t, filepath.Join(st, "aep", "acp", sid+".jsonl"))
			for typ, n := range wantAEP {
				if types[typ] != n {
					t.Errorf("%d %s, want %d (all: %v)", types[typ], typ, n, types)
				}
			}
			if first == nil {
				first = types
			} else if fmt.Sprint(first) != fmt.Sprint(types) {
				t.Errorf("AEP types differ from the trace's:\n%v\n%v", first, types)
			}

			stream := filepath.Join(st, "sessions", sid, "stream.asr.jsonl")
			_, err = os.Stat(stream)
			if withACPv1 {
				if err != nil {
					t.Fatalf("the acpv1 plugin is built in, but no ASR stream: %v", err)
				}
				if code, out, errOut := runBinary(t, nil, "validate", stream); code != ExitOK {
					t.Errorf("acptap validate: exit %d\n%s%s", code, out, errOut)
				}
			} else {
				if err == nil {
					t.Errorf("an ASR stream without the acpv1 plugin")
				}
				if !strings.Contains(out, "  ASR: no streams (the acpv1 plugin is not attached") {
					t.Errorf("stdout does not say why there is no ASR stream:\n%s", out)
				}
			}

			code, out, errOut = runBinary(t, c.stdin, args...)
			if code != ExitOK || errOut != "" || !strings.Contains(out, ": already converted (wire/v1-") {
				t.Errorf("again: exit %d\nstderr: %s\nstdout: %s", code, errOut, out)
			}
		})
	}

	t.Run("missing LOG", func(t *testing.T) {
		st := t.TempDir()
		code, out, errOut := runBinary(t, nil, "convert", "--from", "acp-v1-log", "--store", st, filepath.Join(dir, "nope.jsonl"), trace)
		if code != ExitFailure || !strings.HasSuffix(errOut, "nope.jsonl: no such file or directory\n") || !strings.Contains(out, "  AEP: 34 events") ||
			!strings.Contains(out, "total: 1 converted, 0 already converted, 1 failed;") {
			t.Errorf("exit %d\nstderr: %s\nstdout: %s", code, errOut, out)
		}
	})
}

// TestConvertSkippedLinesAreReported: junk lines are counted and named by
// file:line in the summary, and are not a failure.
func TestConvertSkippedLinesAreReported(t *testing.T) {
	st := t.TempDir()
	in := "junk\n" + `{"sessionId":"u","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}}` + "\n[1]\n"
	code, out, errOut := runBinary(t, []byte(in), "convert", "--from", "acp-v1-log", "--store", st, "-")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{
		"(stdin): updates → wire/v1-",
		"  3 lines → 3 frames (1 c2a, 2 a2c), 2 synthesized (initialize exchange)\n",
		"  skipped lines: 2 (not failures): a JSON array (ACP v1 has no batches) 1, not JSON 1\n",
		"    (stdin):1: not JSON\n",
		"    (stdin):3: a JSON array (ACP v1 has no batches)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}
