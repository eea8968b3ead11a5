package aep_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk/aep"
)

type redactionCase struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	Opts  struct {
		Home         string   `json:"home"`
		SecretValues []string `json:"secretValues"`
		PII          *bool    `json:"pii"`
	} `json:"opts"`
	MustContain    []string `json:"must_contain"`
	MustNotContain []string `json:"must_not_contain"`
}

// TestAEP0003_RedactionCorpus runs every text and value case of
// conformance/fixtures/redaction/cases.json through the §9.4 pipeline.
func TestAEP0003_RedactionCorpus(t *testing.T) {
	var fx struct {
		TextCases  []redactionCase `json:"text_cases"`
		ValueCases []redactionCase `json:"value_cases"`
	}
	readFixture(t, "redaction/cases.json", &fx)
	if len(fx.TextCases) != 28 || len(fx.ValueCases) != 5 {
		t.Fatalf("fixture has %d text and %d value cases, want 28 and 5", len(fx.TextCases), len(fx.ValueCases))
	}
	run := func(kind string, cases []redactionCase, redact func(aep.Redactor, json.RawMessage) string) {
		for _, c := range cases {
			t.Run(kind+"/"+c.Name, func(t *testing.T) {
				r := aep.Redactor{Home: c.Opts.Home, Secrets: c.Opts.SecretValues}
				if c.Opts.PII != nil {
					r.NoPII = !*c.Opts.PII
				}
				out := redact(r, c.Input)
				for _, s := range c.MustContain {
					if !strings.Contains(out, s) {
						t.Errorf("output lacks %q: %s", s, out)
					}
				}
				for _, s := range c.MustNotContain {
					if strings.Contains(out, s) {
						t.Errorf("output keeps %q: %s", s, out)
					}
				}
			})
		}
	}
	run("text", fx.TextCases, func(r aep.Redactor, in json.RawMessage) string {
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			t.Fatal(err)
		}
		return r.Text(s)
	})
	run("value", fx.ValueCases, func(r aep.Redactor, in json.RawMessage) string {
		v, err := aep.Decode(in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := aep.Canonical(r.Value(v))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	})
}

// TestRedactorSecretKeysAreConfigurable: operator-named keys drop their
// values like the built-in credential names.
func TestRedactorSecretKeysAreConfigurable(t *testing.T) {
	r := aep.Redactor{SecretKeys: []string{"X-Deploy-Key"}}
	out := r.Value(map[string]any{"x-deploy-key": "abc", "region": "eu"}).(map[string]any)
	if out["x-deploy-key"] != aep.RedactedSecret || out["region"] != "eu" {
		t.Fatalf("got %v", out)
	}
}
