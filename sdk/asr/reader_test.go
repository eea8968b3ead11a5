package asr

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReaderCommittedLinesAndTail(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		lines []string
		tail  string
	}{
		{"empty", "", nil, ""},
		{"all committed", "a\nb\n", []string{"a", "b"}, ""},
		{"uncommitted tail", "a\n{\"type\":\"mes", []string{"a"}, `{"type":"mes`},
		{"only a tail", "xyz", nil, "xyz"},
		{"empty line is a line", "\n\n", []string{"", ""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in))
			var got []string
			for {
				b, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(b))
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
		})
	}
}

func TestReadHeaderAndRecord(t *testing.T) {
	h, err := ReadHeader([]byte(`{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"acptap","lossy":["b"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if h.SessionID != "s1" || h.Producer.Method != "recorder" {
		t.Errorf("header = %+v", h)
	}
	if _, err := ReadHeader([]byte(`{"type":"message"}`)); !errors.Is(err, ErrNotHeader) {
		t.Errorf("non-header: err = %v, want ErrNotHeader", err)
	}
	eff := EffectiveHeader(h, []Declaration{{Lossy: []string{"a", "b"}}})
	if diff := cmp.Diff([]string{"a", "b"}, eff.Producer.Lossy); diff != "" {
		t.Errorf("effective lossy (-want +got):\n%s", diff)
	}
	g, err := ReadRecord([]byte(`{"type":"state","seq":3,"id":"r3","supersedes":"r1","native":{"ref":{"wire":"w","frames":[4]}},"state":"idle"}`))
	if err != nil {
		t.Fatal(err)
	}
	if g.Seq != 3 || g.ID != "r3" || g.Supersedes != "r1" || g.Native.Ref.Frames[0] != 4 {
		t.Errorf("record = %+v", g)
	}
	for _, bad := range []string{`{"type":"header"}`, `{}`, `[`} {
		if _, err := ReadRecord([]byte(bad)); err == nil {
			t.Errorf("ReadRecord(%s): no error", bad)
		}
	}
}
