package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateShow = flag.Bool("update-show", false, "rewrite host/cli/testdata/show-*.txt")

// TestShowTranscript compares `acptap show` of each test stream, piped
// (plain), with testdata/show-<name>.txt (-update-show rewrites them).
func TestShowTranscript(t *testing.T) {
	for _, s := range testStreams {
		name := strings.TrimSuffix(filepath.Base(s), ".asr.jsonl")
		t.Run(name, func(t *testing.T) {
			t.Setenv("NO_COLOR", "")
			code, out, errOut := runCLI(t, "", "show", s)
			if code != ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if strings.Contains(out, "\x1b[") {
				t.Error("colour escapes when piped")
			}
			golden := filepath.Join("testdata", "show-"+name+".txt")
			if *updateShow {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-show)", err)
			}
			if out != string(want) {
				t.Errorf("show output differs from %s (run with -update-show to accept):\n%s", golden, out)
			}
		})
	}
}

// TestShowContent spot-checks what the transcript must say.
func TestShowContent(t *testing.T) {
	_, out, _ := runCLI(t, "", "show", testStreams[0])
	for _, want := range []string{
		"Session sess-42\n",
		"  losses     inference, message.author, timestamps, usage\n",
		"declared later: _org.agent-session.acp/tool_status_transitions (r6), tool_result.content (r11)",
		"user: Rename pkg/a.go to pkg/b.go and run the tests\n",
		`tool call call-mv: move_file "Move pkg/a.go" [move]`,
		"permission 0:0 pending: Move pkg/a.go?\n",
		"options: Allow [allow_once], Reject [reject_once]\n",
		"permission 0:0 resolved: allow_once (option ok) — Move pkg/a.go? (revises r3)\n",
		"file change applied by call-mv\n",
		"move pkg/a.go → pkg/b.go\n",
		"tool result call-mv: completed\n",
		"tool result call-test: completed (terminal term-1)\n",
		"question 0:1 (form): Commit message?\n",
		"→ answered {\"msg\":\"Rename a.go\"}\n",
		"[x] Rename (high)\n",
		"terminal term-1: go test ./... in . — exited 0\n",
		"ok  \tapp/pkg\n",
		"usage (session): context 48211 / 1048576 (4.6%) · cost 0.031 USD\n",
		"config: model gemini-2.5-pro · 1 option\n",
		"● idle (end_turn)\n",
		"notice (info) (harness): Context compacted\n",
		"compaction cmp-1 (summary) completed, replaces through r24\n",
		"assistant: Done: renamed and tests pass. (revised) (revises r21)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
}

func TestShowColor(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	_, out, _ := runCLI(t, "", "show", "--color", testStreams[1])
	for _, want := range []string{
		"\x1b[1;36muser\x1b[0m: Fix the bug in main.go",
		"\x1b[1;32massistant\x1b[0m: \x1b[2mthinking: Let me look at main.go.\x1b[0m", // reasoning dimmed
		"\x1b[33mtool call\x1b[0m t1:",
		"\x1b[32mcompleted\x1b[0m",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if _, out, _ := runCLI(t, "", "show", "--color", "--no-color", testStreams[1]); strings.Contains(out, "\x1b[") {
		t.Error("--no-color still colours")
	}
	t.Setenv("NO_COLOR", "1")
	if _, out, _ := runCLI(t, "", "show", "--color", testStreams[1]); strings.Contains(out, "\x1b[") {
		t.Error("NO_COLOR ignored")
	}
}

// TestShowPlainToFile: stdout that is a file, not a terminal, gets no
// colour.
func TestShowPlainToFile(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	f, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var errb bytes.Buffer
	if code := Run(&Env{Stdin: strings.NewReader(""), Stdout: f, Stderr: &errb}, []string{"show", testStreams[1]}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if isTerminal(f) || bytes.Contains(b, []byte("\x1b[")) || !bytes.Contains(b, []byte("user: Fix the bug")) {
		t.Errorf("output:\n%s", b)
	}
}

func TestShowExitCodes(t *testing.T) {
	bad := writeFile(t, "bad.asr.jsonl", badStream+"\n{oops}\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
		stdout string
	}{
		{"no stream", []string{"show"}, ExitUsage, "give exactly one stream", ""},
		{"two streams", []string{"show", testStreams[0], testStreams[1]}, ExitUsage, "give exactly one stream", ""},
		{"missing file", []string{"show", "--store", t.TempDir(), "nope"}, ExitFailure, `no session "nope"`, ""},
		{"a line that is not a record", []string{"show", bad}, ExitFailure, "2 lines could not be shown; `acptap validate " + bad + "` says why",
			"line 6: not a record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.stderr) || !strings.Contains(out, tt.stdout) {
				t.Errorf("exit %d (want %d), stderr %q, stdout:\n%s", code, tt.code, errOut, out)
			}
		})
	}
}

func TestShowStdin(t *testing.T) {
	b, err := os.ReadFile(testStreams[0])
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, string(b), "show", "-")
	// Without a second pass, later declarations show inline only.
	if code != ExitOK || strings.Contains(out, "declared later") || !strings.Contains(out, "declared: loss tool_result.content") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
