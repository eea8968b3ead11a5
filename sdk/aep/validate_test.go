package aep_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/acptap/acptap/sdk/aep"
	"github.com/acptap/acptap/sdk/aep/aepcheck"
)

func validator(t *testing.T) *aepcheck.Validator {
	t.Helper()
	v, err := aepcheck.DefaultValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// admitAll validates and admits events in order; it returns the first
// failure.
func admitAll(t *testing.T, s *aep.Stream, events []json.RawMessage) error {
	t.Helper()
	for _, raw := range events {
		h, err := validator(t).Validate(raw)
		if err != nil {
			return err
		}
		canon, err := aep.CanonicalRaw(raw)
		if err != nil {
			return err
		}
		if err := s.Admit(h, canon); err != nil && !errors.Is(err, aep.Duplicate) {
			return err
		}
	}
	return nil
}

// TestAEP0001_GoldenEventsValidate: every line of golden/golden.jsonl is a
// valid event, and the file as one stream breaks no cross-event rule.
func TestAEP0001_GoldenEventsValidate(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lines []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		lines = append(lines, append(json.RawMessage(nil), sc.Bytes()...))
	}
	if len(lines) != 64 {
		t.Fatalf("golden has %d lines, want 64", len(lines))
	}
	var s aep.Stream
	for i, l := range lines {
		if err := admitAll(t, &s, []json.RawMessage{l}); err != nil {
			t.Errorf("golden line %d: %v", i+1, err)
		}
	}
}

// TestAEP0001_InvalidCasesFail: every case of invalid/cases.json fails,
// single events at validation, streams at validation or admission.
func TestAEP0001_InvalidCasesFail(t *testing.T) {
	var fx struct {
		Cases []struct {
			Name   string            `json:"name"`
			Rule   string            `json:"rule"`
			Event  json.RawMessage   `json:"event"`
			Events []json.RawMessage `json:"events"`
		} `json:"cases"`
	}
	readFixture(t, "invalid/cases.json", &fx)
	if len(fx.Cases) != 35 {
		t.Fatalf("fixture has %d cases, want 35", len(fx.Cases))
	}
	for _, c := range fx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			events := c.Events
			if c.Event != nil {
				events = []json.RawMessage{c.Event}
			}
			var s aep.Stream
			if err := admitAll(t, &s, events); err == nil {
				t.Fatalf("accepted; it breaks %s", c.Rule)
			} else {
				t.Logf("rejected: %v", err)
			}
		})
	}
}

// TestStreamDedupesSameContent: a redelivered event is a Duplicate, not a
// collision.
func TestStreamDedupesSameContent(t *testing.T) {
	raw := json.RawMessage(`{"aep":"0.1","id":"A","type":"run.started","time":"2026-07-03T10:00:00Z","source":"aep://h/agent/a","agent":"a","session":"s","seq":0}`)
	var s aep.Stream
	if err := admitAll(t, &s, []json.RawMessage{raw}); err != nil {
		t.Fatal(err)
	}
	h, _ := aep.ParseHeader(raw)
	canon, _ := aep.CanonicalRaw(raw)
	if err := s.Admit(h, canon); !errors.Is(err, aep.Duplicate) {
		t.Fatalf("second delivery: %v", err)
	}
}
