package asr

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func strp(s string) *string { return &s }

// TestASR711_PathRefSegmentWise: the first root that is a segment-wise prefix
// wins; a path equal to a root is ""; no match keeps the absolute path.
func TestASR711_PathRefSegmentWise(t *testing.T) {
	roots := RootIDs([]string{"/w/proj", "/w/proj/vendor", "/", "C:\\src\\app"})
	roots = append([]Root{{ID: "rx", Path: nil}}, roots...) // redacted root never matches
	tests := []struct {
		name, abs string
		want      PathRef
	}{
		{"inside root0", "/w/proj/src/a.go", PathRef{strp("root0"), "src/a.go"}},
		{"first root wins over a deeper one", "/w/proj/vendor/x.go", PathRef{strp("root0"), "vendor/x.go"}},
		{"equal to root", "/w/proj", PathRef{strp("root0"), ""}},
		{"equal to root with trailing slash", "/w/proj/", PathRef{strp("root0"), ""}},
		{"string prefix is not a segment prefix", "/w/project/a.go", PathRef{strp("root2"), "w/project/a.go"}},
		{"dot-dot never relativised", "/w/proj/../etc/passwd", PathRef{nil, "/w/proj/../etc/passwd"}},
		{"windows root", `C:\src\app\main.go`, PathRef{strp("root3"), `main.go`}},
		{"windows mixed separators", `C:\src\app/sub\x.go`, PathRef{strp("root3"), `sub\x.go`}},
		{"relative path matches nothing", "rel/a.go", PathRef{nil, "rel/a.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Ref(roots, tt.abs)); diff != "" {
				t.Errorf("Ref(%q) (-want +got):\n%s", tt.abs, diff)
			}
		})
	}
}

func TestPathRefNoRoots(t *testing.T) {
	got, err := Marshal(Ref(nil, "/abs/a.go"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"root":null,"path":"/abs/a.go"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestRefOK: a path from the wire becomes a PathRef the validator accepts,
// or none when it is not absolute.
func TestRefOK(t *testing.T) {
	roots := RootIDs([]string{"/w/proj"})
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"/w/proj/a.go", `{"root":"root0","path":"a.go"}`, true},
		{"/w/proj", `{"root":"root0","path":""}`, true},
		{"/elsewhere/x", `{"root":null,"path":"/elsewhere/x"}`, true},
		{`/w/proj/a\..\b`, `{"root":null,"path":"/w/proj/a\\..\\b"}`, true},
		{`C:\w\a`, `{"root":null,"path":"C:\\w\\a"}`, true},
		{"rel/a.go", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		ref, ok := RefOK(roots, tt.in)
		if ok != tt.ok {
			t.Errorf("RefOK(%q) ok = %v", tt.in, ok)
			continue
		}
		if !ok {
			continue
		}
		b, _ := json.Marshal(ref)
		if string(b) != tt.want {
			t.Errorf("RefOK(%q) = %s, want %s", tt.in, b, tt.want)
		}
	}
}
