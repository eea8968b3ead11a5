package aep_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk/aep"
)

// TestAEP0003_DigestsReproduceTheACPPins: the three digests pinned in
// mappings/acp.json, over the parsed ACP values.
func TestAEP0003_DigestsReproduceTheACPPins(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`[{"type":"text","text":"fix the failing build"}]`, "fbc514e9fc7d86fd1ebd3442af65801d"},
		{`{"command":"npm test"}`, "9178ac939ad908d8fd89e97596cdc0e5"},
		{`{"output":"ok 42 tests"}`, "7811f89e5155f3d9b75fba7dc9ca3048"},
	} {
		v, err := aep.Decode([]byte(c.raw))
		if err != nil {
			t.Fatal(err)
		}
		got, err := aep.Digest(v)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Digest(%s) = %s, want %s", c.raw, got, c.want)
		}
	}
}

// TestCanonicalMatchesJavaScript: key order by UTF-16 code units, no HTML
// escaping, raw U+2028, JavaScript number forms.
func TestCanonicalMatchesJavaScript(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"b":1,"a":[true,null,"x"]}`, `{"a":[true,null,"x"],"b":1}`},
		{`"<&>\u2028"`, "\"<&>\u2028\""},
		{`[1.0, 1e2, 1.50, -0.0, 1e21, 1e-7, 123456789012]`, `[1,100,1.5,0,1e+21,1e-7,123456789012]`},
		{`{"\ud83d\ude00":1,"\uffff":2}`, "{\"\U0001F600\":1,\"\uffff\":2}"},
	} {
		got, err := aep.CanonicalRaw([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("Canonical(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestULIDEncoding: the reference ULID layout (48-bit ms, 80 bits), and
// DerivedULID is a pure function of its inputs.
func TestULIDEncoding(t *testing.T) {
	if got := aep.ULID(0, [10]byte{}); got != "00000000000000000000000000" {
		t.Fatalf("zero ULID = %s", got)
	}
	var ff [10]byte
	for i := range ff {
		ff[i] = 0xff
	}
	if got := aep.ULID(1<<48-1, ff); got != "7ZZZZZZZZZZZZZZZZZZZZZZZZZ" {
		t.Fatalf("max ULID = %s", got)
	}
	if got := aep.ULID(1469918176385, [10]byte{}); !strings.HasPrefix(got, "01ARYZ6S41") {
		t.Fatalf("time part of %s, want 01ARYZ6S41", got)
	}
	at := time.Date(2026, 10, 26, 14, 30, 41, 207_000_000, time.UTC)
	a, b := aep.DerivedULID(at, "c", "1", "run.started"), aep.DerivedULID(at, "c", "1", "run.started")
	if a != b || a == aep.DerivedULID(at, "c", "1", "run.finished") || len(a) != 26 {
		t.Fatalf("derived ids %s %s", a, b)
	}
}

// TestAEP0001_EnvelopeEncoding: attribute order, omitted absent
// attributes, UTC milliseconds.
func TestAEP0001_EnvelopeEncoding(t *testing.T) {
	e := aep.Event{ID: "01X", Type: "run.started", Time: time.Date(2026, 7, 3, 12, 15, 4, 221_500_000, time.FixedZone("x", 2*3600)),
		Source: aep.Source("h", "acp", "s/1"), Agent: "acp", Session: "s/1", Seq: aep.Int(0), Epoch: aep.Int(2),
		Severity: "info", Capture: aep.Metadata, Data: map[string]any{"trigger": "user"}}
	b, err := json.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"aep":"0.1","id":"01X","type":"run.started","time":"2026-07-03T10:15:04.221Z","source":"aep://h/agent/acp/session/s%2F1","agent":"acp","session":"s/1","seq":0,"epoch":2,"severity":"info","capture":"metadata","data":{"trigger":"user"}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

// TestFileNameSanitizer: AEP-0003 §3.1 keeps plain names, percent-encodes
// the rest.
func TestFileNameSanitizer(t *testing.T) {
	for in, want := range map[string]string{"sess_1": "sess_1", "a/b": "a%2Fb", "_x": "%5Fx", ".": "%2E", "é": "%C3%A9"} {
		if got := aep.FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
}
