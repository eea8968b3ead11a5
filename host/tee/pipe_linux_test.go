package tee

import (
	"bufio"
	"fmt"
	"os"
	"testing"

	"github.com/acptap/acptap/host/captured"
	"golang.org/x/sys/unix"
)

// pipeSizeHelper is the "pipesz" helper agent: it writes the capacity of its stdin and stdout
// pipes (F_GETPIPE_SZ) as one line and exits.
func pipeSizeHelper(mode string) (int, bool) {
	if mode != "pipesz" {
		return 0, false
	}
	in, ierr := unix.FcntlInt(0, unix.F_GETPIPE_SZ, 0)
	out, oerr := unix.FcntlInt(1, unix.F_GETPIPE_SZ, 0)
	if ierr != nil || oerr != nil {
		fmt.Fprintln(os.Stderr, "pipesz:", ierr, oerr)
		return 1, true
	}
	fmt.Printf("stdin=%d stdout=%d\n", in, out)
	return 0, true
}

func pipeSize(t *testing.T, f *os.File) int {
	t.Helper()
	n, err := unix.FcntlInt(f.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPipesRaised: the agent's stdin and stdout pipes, which the tee creates, have pipeBytes of
// capacity (bounded by pipe-max-size), read back by the agent with F_GETPIPE_SZ; the editor's
// pipes are raised to it too when smaller, and an editor's pipe already larger is not lowered.
func TestPipesRaised(t *testing.T) {
	want := pipeBytes
	if max := pipeMaxSize(); max > 0 && want > max {
		want = max
	}
	if want <= 64<<10 {
		t.Skipf("pipe-max-size %d leaves no room above the default", pipeMaxSize())
	}
	_, probeW := pipe(t)
	if _, err := unix.FcntlInt(probeW.Fd(), unix.F_SETPIPE_SZ, want); err != nil {
		t.Skipf("this user may not raise a pipe now (pipe-user-pages-soft?): %v", err)
	}
	larger := min(2*want, pipeMaxSize())
	for _, tc := range []struct {
		name              string
		inStart, outStart int // the editor's pipes before Run (0: as made, 64 KiB)
		inWant, outWant   int
	}{
		{"default", 0, 0, want, want},
		{"stdin larger", larger, 0, larger, want},
		{"stdout larger", 0, larger, want, larger},
	} {
		t.Run(tc.name, func(t *testing.T) {
			editorInR, editorInW := pipe(t)
			editorOutR, editorOutW := pipe(t)
			for _, p := range []struct {
				f *os.File
				n int
			}{{editorInW, tc.inStart}, {editorOutW, tc.outStart}} {
				if p.n > 0 && larger > want {
					if _, err := unix.FcntlInt(p.f.Fd(), unix.F_SETPIPE_SZ, p.n); err != nil {
						t.Fatal(err)
					}
				} else if p.n > 0 {
					t.Skip("pipe-max-size leaves no room above pipeBytes")
				}
				if got := pipeSize(t, p.f); p.n == 0 && got >= want {
					t.Fatalf("an editor's pipe starts at %d, not below %d", got, want)
				}
			}
			q := make(chan captured.Item, 64)
			go func() {
				for it := range q {
					it.Release()
				}
			}()
			argv, env := helperAgent("pipesz")
			wait := runAsync(Config{Agent: argv, Env: env, Stdin: editorInR, Stdout: editorOutW, Stderr: os.Stderr, Queue: q})
			line := readLine(t, bufio.NewReader(editorOutR))
			if code, err := wait(); code != 0 || err != nil {
				t.Fatalf("Run = %d, %v", code, err)
			}
			if w := fmt.Sprintf("stdin=%d stdout=%d\n", want, want); line != w {
				t.Errorf("the agent's pipes: %q, want %q", line, w)
			}
			if got := pipeSize(t, editorInW); got != tc.inWant {
				t.Errorf("the editor's stdin pipe: %d, want %d", got, tc.inWant)
			}
			if got := pipeSize(t, editorOutW); got != tc.outWant {
				t.Errorf("the editor's stdout pipe: %d, want %d", got, tc.outWant)
			}
		})
	}
}
