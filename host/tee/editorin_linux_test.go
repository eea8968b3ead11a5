package tee

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// polledPipes lists the read ends of pipes (as "pipe:[inode]") registered in this process's
// epoll sets (the Go runtime's poller), from /proc/self/fdinfo.
func polledPipes(t *testing.T) map[string]bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	got := map[string]bool{}
	for _, d := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", d.Name()))
		if err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", d.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			var tfd int
			if _, err := fmt.Sscanf(line, "tfd: %d", &tfd); err == nil {
				if l, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", tfd)); err == nil && strings.HasPrefix(l, "pipe:") && readEnd(tfd) {
					got[l] = true
				}
			}
		}
	}
	return got
}

// readEnd says whether descriptor fd is open for reading only.
func readEnd(fd int) bool {
	info, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(info), "\n") {
		var fl int
		if _, err := fmt.Sscanf(line, "flags: %o", &fl); err == nil {
			return fl&syscall.O_ACCMODE == syscall.O_RDONLY
		}
	}
	return false
}

// pipeName is the "pipe:[inode]" of a pipe end.
func pipeName(t *testing.T, f *os.File) string {
	t.Helper()
	l, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestEditorStdinReadOffThePoller: the editor's stdin, a pollable pipe (as cli's
// isolateStdin hands it over), is not read through the runtime's poller, whose thread
// would otherwise be woken by each line the editor writes and then schedule the copier:
// its pipe leaves the epoll set, and the bytes still come through, in order, to EOF.
func TestEditorStdinReadOffThePoller(t *testing.T) {
	r, w, err := os.Pipe() // r is non-blocking and in the poller, as isolateStdin's file
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	name := pipeName(t, w)
	if !polledPipes(t)[name] {
		t.Skip("the pipe is not in an epoll set to begin with")
	}
	in := takeEditorIn(r)
	defer in.(io.Closer).Close()
	if polledPipes(t)[name] {
		t.Fatal("the editor's stdin is still in the runtime's epoll set")
	}
	go func() {
		for i := range 3 {
			time.Sleep(time.Millisecond) // the reader waits each time (poll, not a ready read)
			fmt.Fprintf(w, "line %d\n", i)
		}
		w.Close()
	}()
	got, err := io.ReadAll(in)
	if err != nil || string(got) != "line 0\nline 1\nline 2\n" {
		t.Fatalf("read %q, %v", got, err)
	}
}

// TestEditorStdinCloseEndsRead: closing the editor's stdin while the copier waits on it
// ends the wait and releases the pipe, so the editor's next write fails with EPIPE (as when
// the tee closed a polled file); closing it with no read in progress releases it at once.
func TestEditorStdinCloseEndsRead(t *testing.T) {
	for _, waiting := range []bool{true, false} {
		t.Run(fmt.Sprintf("waiting=%v", waiting), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			in := takeEditorIn(r)
			if _, ok := in.(*editorIn); !ok {
				t.Fatalf("takeEditorIn returned %T", in)
			}
			done := make(chan error, 1)
			if waiting {
				go func() {
					_, err := in.Read(make([]byte, 16))
					done <- err
				}()
				for { // until the reader is in its wait
					e := in.(*editorIn)
					e.mu.Lock()
					r := e.reading
					e.mu.Unlock()
					if r {
						break
					}
					time.Sleep(time.Millisecond)
				}
			}
			if err := in.(io.Closer).Close(); err != nil {
				t.Fatal(err)
			}
			if waiting {
				if err := <-done; !errors.Is(err, os.ErrClosed) {
					t.Fatalf("the waiting read returned %v", err)
				}
			}
			for { // the reader releases the pipe as it leaves
				_, err := w.Write([]byte("x\n"))
				if errors.Is(err, syscall.EPIPE) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Millisecond)
			}
			if _, err := in.Read(make([]byte, 16)); !errors.Is(err, os.ErrClosed) {
				t.Fatalf("a read after Close returned %v", err)
			}
		})
	}
}
