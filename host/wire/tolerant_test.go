package wire

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
)

const tolerantHeader = `{"type":"header","format":"acptap-wire","version":1,"connection":"c1","agent":{"command":["a"]}}` + "\n"

func frameLine(seq int, dir string) string {
	return `{"type":"frame","seq":` + itoa(seq) + `,"dir":"` + dir + `","line":"{}"}` + "\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestTolerantReadsPastBadLines: each bad line is reported with its line
// number; a seq gap is filled with gap entries (so seq stays dense and a
// mapper declares the loss); unknown types and bad JSON are skipped; a bad
// line at the end stands for one entry; a torn tail is reported.
func TestTolerantReadsPastBadLines(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		types    string // entry types read, one letter each: f(rame) g(ap)
		problems []string
		lost     uint64
	}{
		{"clean", frameLine(1, "c2a") + frameLine(2, "a2c"), "ff", nil, 0},
		{"bad-json", frameLine(1, "c2a") + `{"type":"frame","seq":2,"dir":"a2c",` + "\n" + frameLine(3, "c2a"), "fgf",
			[]string{"3 skipped", "4 missing 1"}, 1},
		{"unknown-type", frameLine(1, "c2a") + `{"type":"odd","seq":2,"dir":"a2c"}` + "\n" + frameLine(3, "c2a"), "fgf",
			[]string{"3 skipped", "4 missing 1"}, 1},
		{"seq-gap", frameLine(1, "c2a") + frameLine(4, "c2a"), "fggf", []string{"3 missing 2"}, 2},
		{"seq-repeat", frameLine(1, "c2a") + frameLine(1, "c2a") + frameLine(2, "c2a"), "ff", []string{"3 skipped"}, 0},
		{"bad-at-end", frameLine(1, "c2a") + "garbage\n", "fg", []string{"3 skipped", "3 missing 1"}, 1},
		{"torn-tail", frameLine(1, "c2a") + `{"type":"fr`, "f", []string{"3 torn"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "w.jsonl")
			if err := os.WriteFile(path, []byte(tolerantHeader+tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			tr := NewTolerant(r, func(p Problem) {
				s := itoa(p.Line)
				switch {
				case p.Torn:
					s += " torn"
				case p.Skipped:
					s += " skipped"
				default:
					s += " missing " + itoa(int(p.Missing))
				}
				got = append(got, s)
			})
			defer tr.Close()
			var types string
			var seq uint64
			for {
				e, err := tr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if e.Seq != seq+1 {
					t.Fatalf("seq %d after %d: not dense", e.Seq, seq)
				}
				seq = e.Seq
				types += e.Type[:1]
				if e.Type == TypeGap && (e.Gap.Frames != 1 || e.Gap.Reason != ReasonUnreadable || (e.Dir != sdk.C2A && e.Dir != sdk.A2C)) {
					t.Errorf("stand-in gap %+v", e)
				}
			}
			if types != tc.types {
				t.Errorf("entries %q, want %q", types, tc.types)
			}
			if strings.Join(got, ",") != strings.Join(tc.problems, ",") {
				t.Errorf("problems %q, want %q", got, tc.problems)
			}
			if tr.Lost() != tc.lost {
				t.Errorf("lost %d, want %d", tr.Lost(), tc.lost)
			}
		})
	}
}

// TestTolerantAllocatesNoMore: a Tolerant reader reading good entries
// allocates what its Reader does, nothing an entry of its own.
func TestTolerantAllocatesNoMore(t *testing.T) {
	const n = 1000
	var b strings.Builder
	b.WriteString(tolerantHeader)
	for i := 1; i <= n; i++ {
		b.WriteString(frameLine(i, "a2c"))
	}
	path := filepath.Join(t.TempDir(), "w.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(tolerant bool) float64 {
		return testing.AllocsPerRun(5, func() {
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			r.ReuseLines()
			var next func() (Entry, error) = r.Next
			if tolerant {
				next = NewTolerant(r, nil).Next
			}
			for k := 0; ; k++ {
				if _, err := next(); err != nil {
					if k != n {
						t.Fatalf("%d entries, %v", k, err)
					}
					break
				}
			}
			r.Close()
		})
	}
	if plain, tol := read(false), read(true); tol > plain+10 {
		t.Fatalf("%.0f allocations reading %d entries through Tolerant, %.0f through the Reader", tol, n, plain)
	}
}
