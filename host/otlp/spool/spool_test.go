package spool

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func items(ranks ...uint8) []Item {
	var out []Item
	for i, r := range ranks {
		out = append(out, Item{Kind: Logs, Rank: r, Session: "s", Data: bytes.Repeat([]byte{byte('a' + i)}, 1000)})
	}
	return out
}

func all(t *testing.T, s *Spool) []Item {
	t.Helper()
	var out []Item
	names, _ := s.list()
	for _, n := range names {
		seg, _, err := s.read(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, seg.Items...)
	}
	return out
}

// TestAEP8_1_FullSpoolDropsDebugAndInfoFirst: over its bound the spool
// drops the oldest debug and info items first; notice and above go only
// when nothing lower is left, oldest first, and every drop is counted.
func TestAEP8_1_FullSpoolDropsDebugAndInfoFirst(t *testing.T) {
	s, err := Open(t.TempDir(), 5200) // five 1000-byte items and the framing
	if err != nil {
		t.Fatal(err)
	}
	for _, seg := range [][]Item{items(1, 2), items(0, 3), items(2)} { // info notice | debug warning | notice
		if _, err := s.Append(seg); err != nil {
			t.Fatal(err)
		}
	}
	d, err := s.Append(items(4)) // error: evicts the oldest info
	if err != nil {
		t.Fatal(err)
	}
	if d != [6]uint64{0, 1, 0, 0, 0, 0} {
		t.Fatalf("first eviction dropped %v", d)
	}
	d, _ = s.Append(items(1)) // info: evicts the debug
	if d != [6]uint64{1, 0, 0, 0, 0, 0} {
		t.Fatalf("second eviction dropped %v", d)
	}
	var ranks []uint8
	for _, it := range all(t, s) {
		ranks = append(ranks, it.Rank)
	}
	if fmt.Sprint(ranks) != "[2 3 2 4 1]" {
		t.Fatalf("left %v", ranks)
	}
	d, _ = s.Append(items(5)) // critical: the info goes
	if d[1] != 1 {
		t.Fatalf("third eviction %v", d)
	}
	d, _ = s.Append(items(3)) // only notice and above left: the oldest segment goes, counted
	if d[2] != 1 {
		t.Fatalf("fourth eviction %v", d)
	}
	if got := s.Dropped(); got != [6]uint64{1, 2, 1, 0, 0, 0} {
		t.Fatalf("dropped %v", got)
	}
	if s.Size() > 5200+1100 {
		t.Fatalf("size %d over the bound", s.Size())
	}
}

// TestSegmentsSurviveAndResume: segments are whole files that a new Open
// (the next process) reads in order; Ack removes one, a failed attempt
// leaves it; a killed writer's temporary file is not a segment.
func TestSegmentsSurviveAndResume(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 0)
	s.Append(items(1, 2))
	s.Append(items(3))
	os.WriteFile(filepath.Join(dir, "x.seg.99.tmp"), []byte("half"), 0o600)
	os.WriteFile(filepath.Join(dir, ".x.seg.tmp-12345"), []byte("half"), 0o600) // private.WriteFileAtomic's
	s2, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := s2.Peek()
	if err != nil || seg == nil || len(seg.Items) != 2 || seg.Items[1].Rank != 2 {
		t.Fatalf("peek %+v %v", seg, err)
	}
	s2.Release(seg.Name)
	again, _ := s2.Peek()
	if again.Name != seg.Name {
		t.Fatalf("a released segment is sent again first: %s, %s", again.Name, seg.Name)
	}
	s2.Ack(seg.Name)
	next, _ := s2.Peek()
	if next == nil || len(next.Items) != 1 || next.Items[0].Rank != 3 {
		t.Fatalf("next %+v", next)
	}
	s2.Ack(next.Name)
	if !s2.Empty() {
		t.Fatal("not empty")
	}
}

// TestCorruptSegmentMovedAsideAndCounted: a segment that does not decode
// is not sent forever: it is moved aside and counted.
func TestCorruptSegmentMovedAsideAndCounted(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 0)
	os.WriteFile(filepath.Join(dir, "0000000000000000-00000000-000000.seg"), []byte("garbage"), 0o600)
	s.Append(items(2))
	seg, err := s.Peek()
	if err != nil || seg == nil || seg.Items[0].Rank != 2 || s.Bad() != 1 {
		t.Fatalf("peek %+v %v bad %d", seg, err, s.Bad())
	}
	ents, _ := os.ReadDir(dir)
	var bad bool
	for _, e := range ents {
		bad = bad || strings.HasSuffix(e.Name(), ".bad")
	}
	if !bad {
		t.Fatal("no .bad file")
	}
}

// TestClaimIsExclusive: one sender per spool at a time.
func TestClaimIsExclusive(t *testing.T) {
	s, _ := Open(t.TempDir(), 0)
	rel, ok, err := s.Claim()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, ok2, _ := s.Claim(); ok2 {
		t.Fatal("claimed twice")
	}
	rel()
	if rel2, ok3, _ := s.Claim(); !ok3 {
		t.Fatal("not claimable after release")
	} else {
		rel2()
	}
}
