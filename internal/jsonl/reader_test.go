package jsonl

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// readAll reads r to its first error, cloning the lines.
func readAll(r *Reader) ([]string, error) {
	var got []string
	for {
		b, err := r.Next()
		if err != nil {
			return got, err
		}
		got = append(got, string(b))
	}
}

func TestReaderTornTailIsNeitherErrorNorRecord(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		lines []string
		tail  string
	}{
		{"empty", "", nil, ""},
		{"all committed", "a\nb\n", []string{"a", "b"}, ""},
		{"torn tail", "a\n{\"type\":\"mes", []string{"a"}, `{"type":"mes`},
		{"only a tail", "xyz", nil, "xyz"},
		{"empty lines are lines", "\n\n", []string{"", ""}, ""},
		{"empty line between", "a\n\nb\n", []string{"a", "", "b"}, ""},
		{"CR is kept without TrimCR", "a\r\nb\r\n", []string{"a\r", "b\r"}, ""},
		{"a tail of one CR", "a\n\r", []string{"a"}, "\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in), 0)
			got, err := readAll(r)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("err = %v, want io.EOF", err)
			}
			if diff := cmp.Diff(tt.lines, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if string(r.Tail()) != tt.tail {
				t.Errorf("tail = %q, want %q", r.Tail(), tt.tail)
			}
			if r.Line() != len(tt.lines) {
				t.Errorf("Line() = %d, want %d", r.Line(), len(tt.lines))
			}
			if want := int64(len(tt.in) - len(tt.tail)); r.Offset() != want {
				t.Errorf("Offset() = %d, want %d", r.Offset(), want)
			}
			if _, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Errorf("after the end: %v, want io.EOF again", err)
			}
		})
	}
}

func TestReaderTrimCR(t *testing.T) {
	r := NewReader(strings.NewReader("a\r\nb\n\r\nc\r"), 1)
	r.TrimCR = true
	got, err := readAll(r)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", ""}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if string(r.Tail()) != "c\r" {
		t.Errorf("tail = %q: a tail is kept as it is", r.Tail())
	}
	// The CR is not part of the bound, but a CR inside the line is.
	r = NewReader(strings.NewReader("a\rb\r\n"), 2)
	r.TrimCR = true
	if _, err := r.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("3-byte line under bound 2: err = %v, want ErrLineTooLong", err)
	}
}

func TestReaderLongLines(t *testing.T) {
	long := strings.Repeat("x", 3*bufSize+17)  // gathered across buffer fills
	huge := strings.Repeat("y", 3*blockSize+5) // and across blocks
	in := long + "\n" + huge + "\nend\n"
	r := NewReader(strings.NewReader(in), 0)
	got, err := readAll(r)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != long || got[1] != huge || got[2] != "end" {
		t.Fatalf("got %d lines of lengths %v", len(got), lens(got))
	}
	// A long torn tail is kept whole too.
	r = NewReader(strings.NewReader("a\n"+huge), 0)
	if _, err := readAll(r); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if string(r.Tail()) != huge {
		t.Errorf("tail of %d bytes, want %d", len(r.Tail()), len(huge))
	}
}

func lens(s []string) []int {
	var n []int
	for _, x := range s {
		n = append(n, len(x))
	}
	return n
}

func TestReaderOverLongLineStops(t *testing.T) {
	for _, in := range []string{
		"ok\n" + strings.Repeat("x", 11) + "\nnext\n",  // within one buffer
		"ok\n" + strings.Repeat("x", 5*bufSize) + "\n", // across fills
		"ok\n" + strings.Repeat("x", 11),               // a torn tail over the bound
	} {
		r := NewReader(strings.NewReader(in), 10)
		got, err := readAll(r)
		var tl *LineTooLongError
		if !errors.As(err, &tl) || !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("err = %v, want a LineTooLongError", err)
		}
		if tl.Line != 2 || tl.Max != 10 || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("error %+v (%v): want line 2, max 10", tl, err)
		}
		if len(got) != 1 || got[0] != "ok" {
			t.Errorf("lines before: %q", got)
		}
		if _, again := r.Next(); again != err {
			t.Errorf("next call: %v, want the same error", again)
		}
	}
	// Exactly the bound is not over it.
	r := NewReader(strings.NewReader("0123456789\n"), 10)
	if b, err := r.Next(); err != nil || string(b) != "0123456789" {
		t.Errorf("a line of the bound: %q, %v", b, err)
	}
}

func TestReaderSkipLong(t *testing.T) {
	in := "a\n" + strings.Repeat("x", 2*bufSize) + "\r\nb\n" + strings.Repeat("z", 20) + "\nc\n"
	r := NewReader(strings.NewReader(in), 10)
	r.SkipLong = true
	var got []string
	var skipped []LineTooLongError
	for {
		b, err := r.Next()
		var tl *LineTooLongError
		if errors.As(err, &tl) {
			skipped = append(skipped, *tl)
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	want := []LineTooLongError{{Line: 2, Max: 10, Len: 2*bufSize + 1}, {Line: 4, Max: 10, Len: 20}}
	if diff := cmp.Diff(want, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if r.Offset() != int64(len(in)) || r.Line() != 5 {
		t.Errorf("Offset %d Line %d, want %d 5", r.Offset(), r.Line(), len(in))
	}
}

// A reader failing mid-line: the part read is neither a line nor a tail,
// and the error names the line it cut.
func TestReaderFailingMidLine(t *testing.T) {
	boom := errors.New("disk gone")
	src := io.MultiReader(strings.NewReader("one\ntw"), iotest.ErrReader(boom))
	r := NewReader(src, 0)
	got, err := readAll(r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
	if !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err %q does not name line 2", err)
	}
	if len(got) != 1 || got[0] != "one" || r.Tail() != nil {
		t.Errorf("lines %q tail %q", got, r.Tail())
	}
	if _, again := r.Next(); !errors.Is(again, boom) {
		t.Errorf("next call: %v, want the read error again", again)
	}
	// One byte at a time reads the same lines.
	r = NewReader(iotest.OneByteReader(strings.NewReader("a\nbc\nd")), 0)
	got, err = readAll(r)
	if !errors.Is(err, io.EOF) || strings.Join(got, ",") != "a,bc" || string(r.Tail()) != "d" {
		t.Errorf("one byte reader: %q %v tail %q", got, err, r.Tail())
	}
}

// The slice Next returns may be reused: a caller keeping lines clones them.
func TestReaderSliceValidUntilNextCall(t *testing.T) {
	r := NewReader(strings.NewReader("first\nsecond\n"), 0)
	a, _ := r.Next()
	keep := bytes.Clone(a)
	b, _ := r.Next()
	if string(keep) != "first" || string(b) != "second" {
		t.Errorf("%q %q", keep, b)
	}
}

func TestCountAndPrefix(t *testing.T) {
	in := "a\nbb\n\nccc"
	lines, committed, size, err := Count(strings.NewReader(in))
	if err != nil || lines != 3 || committed != 6 || size != int64(len(in)) {
		t.Errorf("Count = %d %d %d %v, want 3 6 %d", lines, committed, size, err, len(in))
	}
	for _, tt := range []struct {
		n, lines int
		off      int64
	}{{0, 0, 0}, {1, 1, 2}, {2, 2, 5}, {3, 3, 6}, {4, 3, 6}} {
		off, lines, err := Prefix(iotest.HalfReader(strings.NewReader(in)), tt.n)
		if err != nil || off != tt.off || lines != tt.lines {
			t.Errorf("Prefix(%d) = %d %d %v, want %d %d", tt.n, off, lines, err, tt.off, tt.lines)
		}
	}
	boom := errors.New("boom")
	if _, _, _, err := Count(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(boom))); !errors.Is(err, boom) {
		t.Errorf("Count on a failing reader: %v", err)
	}
}

func TestReaderOwned(t *testing.T) {
	long := strings.Repeat("l", 2*bufSize)
	r := NewReader(strings.NewReader("short\n"+long+"\n"+long+"x\nend\n"), 0)
	r.Owned = true
	got, err := readAll(r)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	var kept [][]byte
	r = NewReader(strings.NewReader("short\n"+long+"\n"+long+"x\nend\n"), 0)
	r.Owned = true
	for {
		b, err := r.Next()
		if err != nil {
			break
		}
		kept = append(kept, b) // not cloned: must stay intact
	}
	for i := range got {
		if string(kept[i]) != got[i] {
			t.Errorf("line %d changed after later reads", i+1)
		}
	}
}

func TestReaderSkipLongTail(t *testing.T) {
	r := NewReader(strings.NewReader("a\n"+strings.Repeat("t", 30)), 10)
	r.SkipLong = true
	got, err := readAll(r)
	if !errors.Is(err, io.EOF) || len(got) != 1 {
		t.Fatalf("%q %v", got, err)
	}
	if r.Tail() != nil || r.TailLen() != 30 {
		t.Errorf("tail %q of %d bytes, want none kept of 30", r.Tail(), r.TailLen())
	}
}
