package tee

import (
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// pipeBytes is the capacity the tee asks for on the pipes it copies through: the agent's
// stdin and stdout, which it creates, and the editor's stdin and stdout when they are pipes.
// Linux's default is 64 KiB (16 pages), a single read of the copier (captured.BufferSize): in
// a burst every 64 KiB then costs the writer a block and a wake and the reader a wake. A
// larger pipe only lets a writer run further ahead of its reader; the bytes, their order and
// when a reader can have them are unchanged (a reader gets what is in the pipe at once, and
// the atomic write size, PIPE_BUF, is not a capacity). 256 KiB measured as 1 MiB did
// (docs/benchmarks-history.md, fifteenth round: pipes) and charges the user a quarter of the
// pipe pages (pipe-user-pages-soft) per pipe.
const pipeBytes = 256 << 10

// pipeMaxSize is /proc/sys/fs/pipe-max-size, read once (0 when it cannot be read).
var pipeMaxSize = sync.OnceValue(func() int {
	b, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
})

// raisePipe asks for pipeBytes (at most pipe-max-size) of capacity on the pipe fd is an end
// of, when it has less; it never lowers a pipe's capacity. A failure (EBADF for a descriptor
// that is no pipe, EPERM once the user is past pipe-user-pages-soft, an old kernel) is
// ignored: the pipe keeps the capacity it has.
func raisePipe(fd uintptr) {
	want := pipeBytes
	if max := pipeMaxSize(); max > 0 && want > max {
		want = max
	}
	if cur, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err != nil || cur >= want {
		return
	}
	_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, want)
}

// raiseFilePipe is raisePipe on an *os.File's descriptor.
func raiseFilePipe(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(raisePipe)
	}
}

// raiseEditorPipes raises the editor's stdin (an editorIn or an *os.File) and stdout (an
// *os.File) when they are pipes (raisePipe). Anything else is left as it is.
func raiseEditorPipes(in io.Reader, out io.Writer) {
	switch in := in.(type) {
	case *editorIn:
		raisePipe(uintptr(in.fd)) // before any Read: nothing closes it yet
	case *os.File:
		raiseFilePipe(in)
	}
	if f, ok := out.(*os.File); ok {
		raiseFilePipe(f)
	}
}

// agentStdinPipe is os.Pipe with its capacity raised (raisePipe).
func agentStdinPipe() (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err == nil {
		raiseFilePipe(w)
	}
	return r, w, err
}

// readBlockingPipe is the agent's stdout pipe, its read end in blocking mode: the a2c copier's
// goroutine then waits in read(2) itself and the kernel wakes its thread when the agent
// writes, as cat's, instead of the runtime's poller waking it through the scheduler (about 20
// µs more per line at a line a millisecond, measured with BenchmarkRecordLatency). The write
// end is the agent's; the tee's other pipe (the agent's stdin) stays pollable, since a write
// blocked on it must be interruptible when the tee closes it. Its capacity is raised
// (raisePipe).
func readBlockingPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	raisePipe(uintptr(p[0]))
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}
