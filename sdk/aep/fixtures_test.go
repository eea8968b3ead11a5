package aep_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/acptap/acptap/sdk/aep"
)

// readFixture decodes testdata/<path> (a copy of AEP's conformance
// fixtures; see testdata/NOTICE) into v.
func readFixture(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// canonEqual compares two decoded values by canonical JSON.
func canonEqual(t *testing.T, a, b any) (string, string, bool) {
	t.Helper()
	ca, err := aep.Canonical(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := aep.Canonical(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ca), string(cb), string(ca) == string(cb)
}

// decodeRaw decodes a raw fixture value with exact numbers.
func decodeRaw(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	v, err := aep.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
