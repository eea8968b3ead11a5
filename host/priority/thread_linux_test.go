package priority

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// threadNice reads a thread's nice value back from /proc (field 19 of
// /proc/self/task/<tid>/stat).
func threadNice(t *testing.T, tid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(f[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLowerThread: the calling goroutine's thread runs delta above the
// process's nice value, stays its thread, and no other thread is lowered —
// not the one the test started on, not one a goroutine started afterwards
// runs on.
func TestLowerThread(t *testing.T) {
	own := threadNice(t, syscall.Gettid())
	procs := runtime.GOMAXPROCS(0)
	type res struct {
		tid, before, after, later, procs int
		err                              error
	}
	done := make(chan res)
	go func() {
		var r res
		var release func()
		release, r.err = LowerThread(func(own int) int { return own + 3 })
		defer release()
		r.procs = runtime.GOMAXPROCS(0)
		r.tid = syscall.Gettid()
		r.before = threadNice(t, r.tid)
		other := make(chan int)
		go func() { other <- threadNice(t, syscall.Gettid()) }()
		r.later = <-other
		for range 100 { // still the same thread after blocking
			ch := make(chan struct{})
			go func() { close(ch) }()
			<-ch
		}
		if syscall.Gettid() != r.tid {
			r.err = os.ErrInvalid
		}
		r.after = threadNice(t, r.tid)
		release()
		done <- r
	}()
	r := <-done
	if r.err != nil {
		t.Fatalf("LowerThread: %v", r.err)
	}
	if want := min(own+3, 19); r.before != want || r.after != want {
		t.Errorf("lowered thread at nice %d then %d, want %d", r.before, r.after, want)
	}
	if r.procs != procs+1 {
		t.Errorf("GOMAXPROCS %d while a thread is lowered, want %d", r.procs, procs+1)
	}
	if n := runtime.GOMAXPROCS(0); n != procs {
		t.Errorf("GOMAXPROCS %d after release, want %d", n, procs)
	}
	if r.later != own {
		t.Errorf("a goroutine started by the lowered one ran at nice %d, want %d", r.later, own)
	}
	if n := threadNice(t, syscall.Gettid()); n != own {
		t.Errorf("the test's thread is at nice %d, was %d", n, own)
	}
}

// TestLowerThreadNotAbove: a target that is not below the thread's own
// priority changes nothing (and does not lock the goroutine).
func TestLowerThreadNotAbove(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	runtime.LockOSThread() // the same thread before and after
	defer runtime.UnlockOSThread()
	before := threadNice(t, syscall.Gettid())
	release, err := LowerThread(func(own int) int { return own })
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOMAXPROCS(0) != procs {
		t.Errorf("GOMAXPROCS changed")
	}
	release()
	if n := threadNice(t, syscall.Gettid()); n != before {
		t.Errorf("thread at nice %d, was %d", n, before)
	}
}

func TestCaptureTarget(t *testing.T) {
	for own, want := range map[int]int{0: 5, 4: 5, 5: 6, 10: 11, 19: 19, -5: 5} {
		if got := CaptureTarget(own); got != want {
			t.Errorf("CaptureTarget(%d) = %d, want %d", own, got, want)
		}
		if CaptureTarget(own) > Target(own) {
			t.Errorf("capture below the plugins at own %d", own)
		}
	}
}
