package logimport

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// wholeCases are inputs for the reading of an input whole: line ends of
// every kind, blank lines, a final line with and without LF, skipped lines
// and a wire log.
var wholeCases = []string{
	"", "\n", "\r", "\r\n", "\n\n\r\n", "x", "x\r", "x\r\r\n", "a\nb", "a\r\nb\r\n",
	strings.Join(scanSeeds, "\n"),
	strings.Join(scanSeeds, "\r\n") + "\r\n",
	strings.Join(scanSeeds, "\n\n") + "\n \n\t\n",
	"{\"type\":\"header\",\"format\":\"acptap-wire\",\"version\":1,\"connection\":\"c\",\"agent\":{\"command\":[]}}\n" +
		`{"type":"frame","seq":1,"at":"2026-10-26T14:30:41Z","dir":"c2a","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}"}` + "\n" +
		`{"type":"gap","seq":2,"dir":"a2c","frames":3,"bytes":40,"reason":"x"}` + "\n",
}

// TestMemLinesSameAsReader: the lines of an input read whole are the line
// reader's, numbered alike, by jsonl's rules for a foreign file (a CR
// before the LF dropped, a final line without LF a line).
func TestMemLinesSameAsReader(t *testing.T) {
	type line struct {
		b    string
		no   int
		long bool
	}
	read := func(l *lineReader) (out []line) {
		for {
			b, _, long, err := l.next()
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, line{string(b), l.line, long})
		}
	}
	for _, in := range wholeCases {
		want := read(newLineReader(strings.NewReader(in), 4096))
		if got := read(newMemLines([]byte(in), 4096)); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: lines %#v, the reader's %#v", in, got, want)
		}
	}
}

// TestDigestWholeSameAsStream: the digest pass over an input read whole
// gives what it gives reading the input: the same frames kept (their lines
// sub-slices of the input, capped so that an append copies), skips,
// counts and frames digest, also when the frames overflow the bound.
func TestDigestWholeSameAsStream(t *testing.T) {
	synth := filepath.Join(t.TempDir(), "v1.jsonl")
	writeSyntheticLog(t, synth, 64<<10)
	raw, err := os.ReadFile(synth)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range append(wholeCases, string(raw)) {
		for _, retain := range []int{32 << 20, 4 << 10} {
			want, err := digestFrames(NewScanner(strings.NewReader(in), "", 4096), retain)
			if err != nil {
				t.Fatal(err)
			}
			data := []byte(in)
			got, err := digestFrames(newMemScanner(data, "", 4096), retain)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%.60q, retain %d: %+v, reading %+v", in, retain, got, want)
			}
			for _, chunk := range got.kept {
				for _, fr := range chunk {
					if l := fr.Item.Line; cap(l) != len(l) {
						t.Fatalf("%.60q: a kept line of %d bytes has room for %d", in, len(l), cap(l))
					}
				}
			}
		}
	}
}

// TestReadWhole: a plain file within the bound is read whole; a gzip one,
// a longer one and an empty one are not, and are then read from their
// start; readOnce's hash of one read whole is the file's.
func TestReadWhole(t *testing.T) {
	dir := t.TempDir()
	in, gz, raw := syntheticPair(t, dir, 16<<10)
	empty := writeFile(t, dir, "empty", nil)
	for _, c := range []struct {
		path  string
		bound int
		whole bool
	}{{in, len(raw), true}, {in, len(raw) - 1, false}, {gz, 1 << 20, false}, {empty, 1 << 20, false}} {
		f, err := os.Open(c.path)
		if err != nil {
			t.Fatal(err)
		}
		data, err := readWhole(f, c.bound)
		if err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(f)
		f.Close()
		file, _ := os.ReadFile(c.path)
		switch {
		case c.whole && (!bytes.Equal(data, file) || len(rest) != 0):
			t.Errorf("%s, bound %d: read %d of %d bytes whole", c.path, c.bound, len(data), len(file))
		case !c.whole && (data != nil || !bytes.Equal(rest, file)):
			t.Errorf("%s, bound %d: read whole (%d bytes), or not from its start (%d left)", c.path, c.bound, len(data), len(rest))
		}
	}
	want := sha256.Sum256(raw)
	for _, whole := range []*wholeInput{nil, {data: raw, sum: want[:]}} {
		o, err := readOnce(in, "", DefaultMaxLine, 32<<20, whole)
		if err != nil || !bytes.Equal(o.sum, want[:]) || o.kept == nil {
			t.Fatalf("given %v: sum %x, kept %v: %v", whole != nil, o.sum, o.kept != nil, err)
		}
	}
}
