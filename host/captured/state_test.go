package captured

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

// FuzzSplitterState: a splitter's state handed to a fresh one (State, through JSON as the
// spool carries it, then SetState) at any chunk boundary makes the second split the rest
// exactly as the first would have: same lines, gaps and flags, whatever the chunking, the
// line limit, the lost bytes and the EOFs.
func FuzzSplitterState(f *testing.F) {
	f.Add([]byte("a\nbb\nccc"), []byte{3, 1, 4}, uint8(2), uint8(5), uint8(0))
	f.Add([]byte("0123456789\nxy\n\nz"), []byte{7, 2, 2, 9}, uint8(1), uint8(4), uint8(3))
	f.Add(bytes.Repeat([]byte("long line without end "), 10), []byte{50, 50, 50, 70}, uint8(3), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, data, cuts []byte, cutAt, maxLine, lostAt uint8) {
		items := fuzzItems(data, cuts, lostAt)
		limit := int(maxLine) // 0: the default
		want := splitAll(NewSplitter(limit), items, true)
		k := int(cutAt) % (len(items) + 1)
		a := NewSplitter(limit)
		got := splitAll(a, items[:k], false)
		st := a.State()
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var back [2]LineState
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		c := NewSplitter(limit)
		c.SetState(back)
		got = append(got, splitAll(c, items[k:], true)...)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("cut at %d of %d:\n got %v\nwant %v", k, len(items), got, want)
		}
	})
}

// fuzzItems cuts data into chunks of both directions; the chunk at lostAt also carries
// bytes the tee lost; the last chunk of each direction ends it.
func fuzzItems(data, cuts []byte, lostAt uint8) []Item {
	var items []Item
	at := time.Unix(0, 0)
	for i, c := range cuts {
		n := min(int(c), len(data))
		dir := sdk.C2A
		if i%2 == 1 {
			dir = sdk.A2C
		}
		ch := &Chunk{Data: bytes.Clone(data[:n])}
		data = data[n:]
		if i == int(lostAt) {
			ch.Lost = Lost{Bytes: 7, LFs: uint64(i % 3), EndLF: i%2 == 0}
		}
		at = at.Add(time.Millisecond)
		items = append(items, Item{Dir: dir, At: at, Chunk: ch})
	}
	for _, d := range []sdk.Direction{sdk.C2A, sdk.A2C} {
		items = append(items, Item{Dir: d, At: at, Chunk: &Chunk{Data: bytes.Clone(data), EOF: true}})
		data = nil
	}
	return items
}

// splitAll splits items (and ends with End), describing what came out (one string per
// item, then "end").
func splitAll(s *Splitter, items []Item, end bool) []string {
	var out []string
	emit := func(it Item) {
		if it.Gap != nil {
			out = append(out, fmt.Sprintf("%s gap %d/%d %s", it.Dir, it.Gap.Frames, it.Gap.Bytes, it.Gap.Reason))
			return
		}
		out = append(out, fmt.Sprintf("%s %q nolf=%v at=%d", it.Dir, it.Line, it.NoLF, it.At.UnixMilli()))
	}
	for _, it := range items {
		s.Split(it, emit)
	}
	if !end {
		return out
	}
	s.End(time.Unix(0, 0), emit)
	return append(out, "end")
}
