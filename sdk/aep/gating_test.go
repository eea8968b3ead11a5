package aep_test

import (
	"encoding/json"
	"testing"

	"github.com/acptap/acptap/sdk/aep"
)

// TestAEP0006_CaptureGatingCases runs conformance/fixtures/capture-gating:
// form answer values gated per field type for a ceiling.
func TestAEP0006_CaptureGatingCases(t *testing.T) {
	var fx struct {
		Cases []struct {
			Name    string          `json:"name"`
			Fields  []aep.FieldSpec `json:"fields"`
			Values  json.RawMessage `json:"values"`
			Ceiling string          `json:"ceiling"`
			Expect  json.RawMessage `json:"expect"`
		} `json:"cases"`
	}
	readFixture(t, "capture-gating/cases.json", &fx)
	if len(fx.Cases) != 6 {
		t.Fatalf("fixture has %d cases, want 6", len(fx.Cases))
	}
	for _, c := range fx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			lvl, err := aep.ParseLevel(c.Ceiling)
			if err != nil {
				t.Fatal(err)
			}
			got := aep.GateFormValues(c.Fields, decodeRaw(t, c.Values).(map[string]any), lvl)
			if g, w, ok := canonEqual(t, got, decodeRaw(t, c.Expect)); !ok {
				t.Errorf("got %s, want %s", g, w)
			}
		})
	}
}

// TestAEP0001_DownlevelCases runs conformance/fixtures/downlevel: the hop
// rule, [metadata*] degradation, and the redacted provenance claim.
func TestAEP0001_DownlevelCases(t *testing.T) {
	var fx struct {
		Cases []struct {
			Name          string          `json:"name"`
			Ceiling       string          `json:"ceiling"`
			Event         json.RawMessage `json:"event"`
			ExpectCapture string          `json:"expect_capture"`
			ExpectData    json.RawMessage `json:"expect_data"`
		} `json:"cases"`
	}
	readFixture(t, "downlevel/cases.json", &fx)
	if len(fx.Cases) != 18 {
		t.Fatalf("fixture has %d cases, want 18", len(fx.Cases))
	}
	for _, c := range fx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			lvl, err := aep.ParseLevel(c.Ceiling)
			if err != nil {
				t.Fatal(err)
			}
			ev := aep.Downlevel(decodeRaw(t, c.Event).(map[string]any), lvl)
			if ev["capture"] != c.ExpectCapture {
				t.Errorf("capture %v, want %s", ev["capture"], c.ExpectCapture)
			}
			data, present := ev["data"]
			if string(c.ExpectData) == "null" {
				if present {
					t.Errorf("data kept: %v", data)
				}
				return
			}
			if g, w, ok := canonEqual(t, data, decodeRaw(t, c.ExpectData)); !ok {
				t.Errorf("data %s, want %s", g, w)
			}
		})
	}
}

// TestPruneDropsFieldsAboveTheLevel is the emitter rule on a nested field.
func TestPruneDropsFieldsAboveTheLevel(t *testing.T) {
	data := map[string]any{"tool": map[string]any{"name": "x"}, "error": map[string]any{"type": "E", "message": "m"}}
	if !aep.Prune("tool.failed", data, aep.Metadata) {
		t.Fatal("tool.failed has a schema")
	}
	if _, ok := data["error"].(map[string]any)["message"]; ok {
		t.Fatalf("error.message kept at metadata: %v", data)
	}
	if aep.Prune("x.acp.plan.updated", map[string]any{}, aep.Metadata) {
		t.Fatal("x.* types have no schema")
	}
}
