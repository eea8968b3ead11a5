package tee

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
)

// TestExitCodeAndStderrPassThrough: the agent's exit code (0, 3) or signal death (SIGKILL →
// 137) is Run's result, its stderr bytes arrive untouched, and Run returns although the
// editor's stdin is still open.
func TestExitCodeAndStderrPassThrough(t *testing.T) {
	for _, tc := range []struct {
		name, mode, exit string
		want             int
	}{
		{"exit0", "exit", "0", 0},
		{"exit3", "exit", "3", 3},
		{"sigkill", "sigkill", "", 137},
	} {
		t.Run(tc.name, func(t *testing.T) {
			editorIn, _ := pipe(t) // never written, never closed while Run runs
			stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
			if err != nil {
				t.Fatal(err)
			}
			defer stderr.Close()
			q := make(chan captured.Item, 4)
			var pid int
			argv, env := helperAgent(tc.mode, "TEE_EXIT="+tc.exit)
			code, err := Run(context.Background(), Config{
				Agent: argv, Env: env, Stdin: editorIn, Stdout: &bytes.Buffer{}, Stderr: stderr,
				Queue: q, OnStart: func(p int) { pid = p },
			})
			if code != tc.want || err != nil {
				t.Fatalf("Run = %d, %v; want %d, nil", code, err, tc.want)
			}
			if pid <= 0 {
				t.Errorf("OnStart got pid %d", pid)
			}
			got, _ := os.ReadFile(stderr.Name())
			if !bytes.Equal(got, stderrPayload) {
				t.Errorf("stderr = %q, want %q", got, stderrPayload)
			}
			if _, open := <-q; open {
				t.Errorf("queue not closed (or an unexpected item)")
			}
		})
	}
}

// TestStartFailure: an agent that cannot be started gives 127 and a one-line error.
func TestStartFailure(t *testing.T) {
	q := make(chan captured.Item, 1)
	code, err := Run(context.Background(), Config{
		Agent: []string{"acptap-no-such-agent"}, Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{},
		Stderr: &bytes.Buffer{}, Queue: q,
	})
	if code != 127 || err == nil {
		t.Fatalf("Run = %d, %v; want 127 and an error", code, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, `acptap: cannot start agent "acptap-no-such-agent": `) || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming the agent", msg)
	}
	if _, open := <-q; open {
		t.Errorf("queue not closed")
	}
	if code, err := Run(context.Background(), Config{Stdin: strings.NewReader("")}); code != 127 || err == nil {
		t.Errorf("Run without an agent = %d, %v; want 127 and an error", code, err)
	}
}

// TestStdinEOFClosesAgentStdin: when the editor closes stdin, the agent's stdin reaches EOF
// (the helper exits 7 only then).
func TestStdinEOFClosesAgentStdin(t *testing.T) {
	editorIn, toTee := pipe(t)
	fromTee, editorOut := pipe(t)
	argv, env := helperAgent("untileof")
	wait := runAsync(Config{Agent: argv, Env: env, Stdin: editorIn, Stdout: editorOut, Stderr: os.Stderr})
	toTee.WriteString("some input, then EOF\n")
	toTee.Close()
	if s := readLine(t, bufio.NewReader(fromTee)); s != "got eof\n" {
		t.Errorf("agent said %q", s)
	}
	if code, err := wait(); code != 7 || err != nil {
		t.Errorf("Run = %d, %v; want 7", code, err)
	}
}

// TestDrainStopsWhenDescendantHoldsStdout: the agent exits but a child it left behind keeps
// its stdout open; Run still returns, with the agent's code.
func TestDrainStopsWhenDescendantHoldsStdout(t *testing.T) {
	editorIn, _ := pipe(t)
	argv, env := helperAgent("orphan")
	code, err := Run(context.Background(), Config{
		Agent: argv, Env: env, Stdin: editorIn, Stdout: &bytes.Buffer{}, Stderr: os.Stderr,
		DrainTimeout: 50 * time.Millisecond,
	})
	if code != 0 || err != nil {
		t.Errorf("Run = %d, %v; want 0", code, err)
	}
}
