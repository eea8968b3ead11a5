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
// still hold the agent's stdout open; after timeout the pending read is abandoned, so that
// acptap can exit like the agent did: interrupted where the pipe is pollable, otherwise (the
// tee reads it blocking, readBlockingPipe) left to end with the process. The copier holds no
// lock while it waits in a read, so capture can be finished meanwhile.
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
	if agentOut.SetReadDeadline(time.Now()) == nil {
		<-outDone
	}
}

func closeQueue(q chan<- captured.Item, bell chan<- struct{}) {
	if q != nil {
		close(q)
		ring(bell)
	}
}

// ring rings a doorbell (Config.Doorbell): a pending ring is enough.
func ring(bell chan<- struct{}) {
	if bell != nil {
		select {
		case bell <- struct{}{}:
		default:
		}
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
