package tee

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/hashicorp/go-hclog"
)

// statusCode is the code a shell would report: the exit code, or 128+n after signal n.
func statusCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func isExitError(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

// drainAfterExit waits for the agent → editor copy to reach EOF. A descendant of the agent may
// still hold the agent's stdout open; after timeout the pending read is interrupted (the pipe
// is pollable) so that acptap can exit like the agent did.
func drainAfterExit(outDone <-chan struct{}, agentOut *os.File, timeout time.Duration, log hclog.Logger) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-outDone:
		return
	case <-t.C:
	}
	log.Warn("agent exited but its stdout is still open (held by a descendant?); stop reading it",
		"after", timeout)
	_ = agentOut.SetReadDeadline(time.Now())
	<-outDone
}

func closeQueue(q chan<- captured.Item) {
	if q != nil {
		close(q)
	}
}

// closeEditorIn returns a func that closes the editor's stdin once, if it
// can be closed.
func closeEditorIn(in io.Reader) func() {
	c, ok := in.(io.Closer)
	if !ok {
		return func() {}
	}
	return sync.OnceFunc(func() { _ = c.Close() })
}
