package store

import (
	"errors"
	"strings"
	"testing"
)

func TestEscapeIDTable(t *testing.T) {
	cases := []struct{ id, name string }{
		{"sess_abc-123.v2", "sess_abc-123.v2"},
		{"", "%"},
		{"%", "%25"},
		{"../x", "%2E.%2Fx"},
		{"a/b", "a%2Fb"},
		{".", "%2E"},
		{"..", "%2E."},
		{".hidden", "%2Ehidden"},
		{"a b~c", "a%20b%7Ec"},
		{"ünï ✓", "%C3%BCn%C3%AF%20%E2%9C%93"},
		{"nul\x00byte", "nul%00byte"},
		{"bad\xffutf8", "bad%FFutf8"},
		{"C:\\x", "C%3A%5Cx"},
	}
	for _, c := range cases {
		if got := EscapeID(c.id); got != c.name {
			t.Errorf("EscapeID(%q) = %q, want %q", c.id, got, c.name)
		}
		if got, err := UnescapeID(c.name); err != nil || got != c.id {
			t.Errorf("UnescapeID(%q) = %q, %v; want %q", c.name, got, err, c.id)
		}
	}
}

func TestEscapeIDLong(t *testing.T) {
	for _, id := range []string{
		strings.Repeat("a", MaxNameLen),                           // fits exactly
		strings.Repeat("a", MaxNameLen+1),                         // hashed
		strings.Repeat("/", 67),                                   // 201 escaped bytes: hashed
		strings.Repeat("✓", 500),                                  // escapes must not be split
		strings.Repeat("a", 134) + "/" + strings.Repeat("x", 100), // an escape at the cut
	} {
		name := EscapeID(id)
		if len(name) > MaxNameLen {
			t.Errorf("EscapeID(len %d) is %d bytes", len(id), len(name))
		}
		got, err := UnescapeID(name)
		switch {
		case !strings.Contains(name, "~"):
			if err != nil || got != id {
				t.Errorf("short ID did not round-trip: %v", err)
			}
		case !errors.Is(err, ErrHashedName):
			t.Errorf("UnescapeID(%q) error %v, want ErrHashedName", name, err)
		}
		if i := strings.IndexByte(name, '~'); i > 0 && strings.Contains(name[max(0, i-2):i], "%") {
			t.Errorf("hashed name %q splits an escape", name)
		}
	}
	if EscapeID(strings.Repeat("a", 300)) == EscapeID(strings.Repeat("a", 301)) {
		t.Error("two long IDs share a hashed name")
	}
}

func TestUnescapeIDRejectsNonCanonical(t *testing.T) {
	for _, name := range []string{
		"", ".x", "%2e", "%41", "%2", "%zz", "a b", "a/b", "%%", strings.Repeat("a", MaxNameLen+1),
		"x~" + strings.Repeat("0", 63), "x~" + strings.Repeat("A", 64),
	} {
		if _, err := UnescapeID(name); !errors.Is(err, ErrNotEscaped) {
			t.Errorf("UnescapeID(%q) = %v, want ErrNotEscaped", name, err)
		}
	}
}

func checkSafeName(t *testing.T, name string) {
	t.Helper()
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > MaxNameLen {
		t.Fatalf("unsafe file name %q", name)
	}
}

func FuzzEscapeID(f *testing.F) {
	for _, s := range []string{"", "../x", "a/b", "ünï", ".", "%41", strings.Repeat("é", 120)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		name := EscapeID(id)
		checkSafeName(t, name)
		got, err := UnescapeID(name)
		if errors.Is(err, ErrHashedName) {
			return
		}
		if err != nil || got != id {
			t.Fatalf("round trip of %q via %q: %q, %v", id, name, got, err)
		}
	})
}

func FuzzUnescapeID(f *testing.F) {
	for _, s := range []string{"%", "%25", "a%2Fb", "%2E.", "%41", "x~00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		id, err := UnescapeID(name)
		if err != nil {
			return
		}
		if back := EscapeID(id); back != name {
			t.Fatalf("UnescapeID(%q) = %q, which escapes to %q", name, id, back)
		}
	})
}
