package aep_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/acptap/acptap/sdk/aep"
)

// TestAEP0003_AttrMatchCases runs conformance/fixtures/attr-match/cases.json
// (AEP-0003 §6): each match case as a subtest named after it, and each
// invalid filter, which must be refused (fail closed).
func TestAEP0003_AttrMatchCases(t *testing.T) {
	var fx struct {
		Match []struct {
			Name   string          `json:"name"`
			Filter json.RawMessage `json:"filter"`
			Event  json.RawMessage `json:"event"`
			Match  bool            `json:"match"`
		} `json:"match"`
		Invalid []struct {
			Name   string          `json:"name"`
			Filter json.RawMessage `json:"filter"`
		} `json:"invalid"`
	}
	readFixture(t, "attr-match/cases.json", &fx)
	if len(fx.Match) != 14 || len(fx.Invalid) != 10 {
		t.Fatalf("%d match and %d invalid cases, want 14 and 10", len(fx.Match), len(fx.Invalid))
	}
	for _, c := range fx.Match {
		t.Run("match/"+c.Name, func(t *testing.T) {
			f, err := aep.ParseFilter(c.Filter)
			if err != nil {
				t.Fatalf("filter %s refused: %v", c.Filter, err)
			}
			ev, _ := decodeRaw(t, c.Event).(map[string]any)
			if got := f.Match(ev); got != c.Match {
				t.Fatalf("filter %s on %s: %v, want %v", c.Filter, c.Event, got, c.Match)
			}
		})
	}
	for _, c := range fx.Invalid {
		t.Run("invalid/"+c.Name, func(t *testing.T) {
			if _, err := aep.ParseFilter(c.Filter); !errors.Is(err, aep.ErrInvalidFilter) {
				t.Fatalf("filter %s accepted (err %v)", c.Filter, err)
			}
		})
	}
}

// TestAttrMatchBeyondTheFixture: exact comparison without coercion, type
// patterns inside any-of arrays, lte alone, non-objects refused.
func TestAttrMatchBeyondTheFixture(t *testing.T) {
	ev := map[string]any{"type": "tool.failed", "epoch": json.Number("3"), "session": "7", "acmeon": true}
	for _, c := range []struct {
		filter string
		want   bool
	}{
		{`{"session":7}`, false},
		{`{"session":"7"}`, true},
		{`{"epoch":3}`, true},
		{`{"epoch":"3"}`, false},
		{`{"acmeon":true}`, true},
		{`{"type":["run.*","tool.failed"]}`, true},
		{`{"type":["run.*","tool.f.*"]}`, false},
		{`{"severity":{"lte":"debug"}}`, false},
		{`{"severity":["info","error"]}`, true},
		{`{"capture":"metadata"}`, true},
	} {
		f, err := aep.ParseFilter([]byte(c.filter))
		if err != nil {
			t.Errorf("%s: %v", c.filter, err)
			continue
		}
		if got := f.Match(ev); got != c.want {
			t.Errorf("%s: %v, want %v", c.filter, got, c.want)
		}
	}
	for _, bad := range []string{`[]`, `"x"`, `{"epoch":1.5}`, `{"agent":null}`, `{"severity":"loud"}`, `{"type":".*"}`, `{"agent":{"gte":"info"}}`, `{} {}`, `{"a":1,"a":2}x`} {
		if _, err := aep.ParseFilter([]byte(bad)); !errors.Is(err, aep.ErrInvalidFilter) {
			t.Errorf("%s accepted", bad)
		}
	}
}

// FuzzParseFilter: any input is either refused with ErrInvalidFilter or
// parsed into a filter that matches without panicking, and {} always
// matches.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`{}`, `{"type":["attention.*"]}`, `{"severity":{"gte":"notice","lte":"error"}}`, `{"epoch":0}`, `{"acmeregion":"eu-1"}`, `{"agent":[]}`, `[1]`} {
		f.Add(s)
	}
	ev := map[string]any{"type": "attention.requested", "session": "s1", "epoch": json.Number("2"), "severity": "warning", "acmeregion": "eu-1"}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := aep.ParseFilter([]byte(s))
		if err != nil {
			if !errors.Is(err, aep.ErrInvalidFilter) {
				t.Fatalf("%q: %v does not wrap ErrInvalidFilter", s, err)
			}
			return
		}
		if flt.Match(ev) != flt.Match(ev) {
			t.Fatal("not deterministic")
		}
		if flt.Empty() && !flt.Match(map[string]any{}) {
			t.Fatal("an empty filter refused an event")
		}
	})
}
