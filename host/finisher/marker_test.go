package finisher

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/acptap/acptap/host/store"
)

// TestMarkerLock: a marker another holder has locked cannot be taken;
// released, it can, and it is still pending; done, it is gone. Two opens of
// the file are two holders even within one process (flock belongs to the
// open file description).
func TestMarkerLock(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Create(st, "c-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := TryLock(st, "c-1"); ok || err != nil {
		t.Fatalf("TryLock of a held marker: ok %v, err %v; want refused", ok, err)
	}
	if Abandoned(st) {
		t.Error("a held marker counts as abandoned")
	}
	s, ok := readState(Path(st, "c-1"))
	if !ok || s.State != stateRecording {
		t.Errorf("state = %+v, %v; want recording", s, ok)
	}
	m.Release()
	if !Abandoned(st) {
		t.Error("a released marker does not count as abandoned")
	}
	m2, ok, err := TryLock(st, "c-1")
	if !ok || err != nil {
		t.Fatalf("TryLock of a released marker: ok %v, err %v", ok, err)
	}
	if err := m2.HandOver([]string{"s1"}); err != nil {
		t.Fatal(err)
	}
	if s, _ := readState(Path(st, "c-1")); s.State != stateFinishing || len(s.Sessions) != 1 || s.Sessions[0] != "s1" {
		t.Errorf("state after HandOver = %+v", s)
	}
	if c, _ := Pending(st); len(c) != 1 || c[0] != "c-1" {
		t.Errorf("Pending = %v, want [c-1]", c)
	}
	if err := m2.Done(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(Path(st, "c-1")); !os.IsNotExist(err) {
		t.Errorf("marker still there after Done: %v", err)
	}
	if _, ok, _ := TryLock(st, "c-1"); ok {
		t.Error("TryLock of a removed marker succeeded")
	}
}

// TestMayWrite: a connection still recording does not hold up another
// connection of its session; one being finished does for its own sessions
// only; an abandoned one does for every session (what it names is unknown
// until it is finished).
func TestMayWrite(t *testing.T) {
	st, _ := store.Open(t.TempDir())
	rec, _ := Create(st, "c-rec")
	fin, _ := Create(st, "c-fin")
	if err := fin.HandOver([]string{"s1"}); err != nil {
		t.Fatal(err)
	}
	gone, _ := Create(st, "c-gone")
	gone.Release()
	for _, tc := range []struct {
		conn, session string
		want          bool
	}{
		{"c-rec", "s1", false},
		{"c-fin", "s1", true},
		{"c-fin", "s2", false},
		{"c-gone", "s2", true},
	} {
		if got := mayWrite(st, tc.conn, tc.session); got != tc.want {
			t.Errorf("mayWrite(%s, %s) = %v, want %v", tc.conn, tc.session, got, tc.want)
		}
	}
	rec.Release()
	fin.Release()
}

// TestCompleteAllSkipsLiveRecording: a command that finishes pending
// connections does not wait for one that is still recording.
func TestCompleteAllSkipsLiveRecording(t *testing.T) {
	st, _ := store.Open(t.TempDir())
	live, err := Create(st, "c-live")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := CompleteAll(ctx, Options{Store: st}, true)
	if err != nil || len(res) != 0 {
		t.Fatalf("CompleteAll = %v, %v; want nothing done, at once", res, err)
	}
}

// TestHoldParents: a marker held for a process that exits right after letting go keeps the
// early finishers' pipes open through Release and Done (they close with the process);
// otherwise letting go closes them, and the finisher's read sees the end at once.
func TestHoldParents(t *testing.T) {
	for _, hold := range []bool{false, true} {
		st, _ := store.Open(t.TempDir())
		m, err := Create(st, "c-1")
		if err != nil {
			t.Fatal(err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		m.parents = append(m.parents, w)
		if hold {
			m.HoldParents()
		}
		m.Release()
		r.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		_, err = r.Read(make([]byte, 1))
		if hold && !os.IsTimeout(err) {
			t.Errorf("held: the finisher's pipe after Release: %v, want it still open", err)
		}
		if !hold && err != io.EOF {
			t.Errorf("not held: the finisher's pipe after Release: %v, want EOF", err)
		}
		r.Close()
		w.Close()
	}
}
