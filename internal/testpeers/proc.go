package testpeers

import (
	"io"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Proc is an agent command started by StartChecked.
type Proc struct {
	Checker *Checker
	// Stdout is the agent's output; each line is checked as it is read.
	Stdout io.Reader
	// Stdin is the agent's input; each line is checked before it is written.
	// Close it to end the conversation.
	Stdin io.WriteCloser
	Cmd   *exec.Cmd

	mu         sync.Mutex
	transcript []TraceLine
	waitOnce   sync.Once
	waitErr    error
}

// StartChecked starts argv (an agent, or a recorder in front of one) with its
// stderr going to the test log, and checks every line exchanged on its
// stdin/stdout against the ACP schema of version v (t.Errorf per invalid
// line). Drive it with any client, e.g. clientlib.RunConn(ctx, p.Stdout, p.Stdin, …).
// The process is killed at the end of the test if it is still running.
func StartChecked(t testing.TB, v Version, argv []string) *Proc {
	t.Helper()
	c, err := NewChecker(v)
	if err != nil {
		t.Fatalf("load ACP v%d schema: %v", v, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = testWriter{t}
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	p := &Proc{Checker: c, Cmd: cmd}
	p.Stdin = Tap(stdin, p.checker(t, Client))
	p.Stdout = io.TeeReader(stdout, Tap(io.Discard, p.checker(t, Agent)))
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
		_ = p.Wait()
	})
	return p
}

func (p *Proc) checker(t testing.TB, from Sender) func([]byte) {
	dir := "send"
	if from == Agent {
		dir = "recv"
	}
	return func(line []byte) {
		p.mu.Lock()
		p.transcript = append(p.transcript, TraceLine{Dir: dir, Line: string(line)})
		p.mu.Unlock()
		if err := p.Checker.Check(from, line); err != nil {
			t.Errorf("%s sent a message that breaks the ACP v%d schema: %v\n%s", from, p.Checker.Version(), err, line)
		}
	}
}

// Wait waits for the process to exit (once; later calls return the same error).
func (p *Proc) Wait() error {
	p.waitOnce.Do(func() { p.waitErr = p.Cmd.Wait() })
	return p.waitErr
}

// Transcript returns the lines exchanged so far ("send": to the agent,
// "recv": from it).
func (p *Proc) Transcript() []TraceLine {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]TraceLine(nil), p.transcript...)
}

// testWriter logs a process's stderr through t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s", b)
	return len(b), nil
}
