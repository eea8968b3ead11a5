package aep

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
	"github.com/acptap/acptap/sdk/aep/aepcheck"
)

// moment is one entry of mappings/acp.json.
type moment struct {
	Input struct {
		Kind   string          `json:"kind"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	} `json:"input"`
	Expected       []pinned `json:"expected"`
	DeltasExpected []pinned `json:"deltas_expected"`
}

type pinned struct {
	Type    string          `json:"type"`
	Data    json.RawMessage `json:"data"`
	Subject string          `json:"subject,omitempty"`
}

// loadMoments reads testdata/mappings/acp.json (AEP's Annex A.13 pins;
// see testdata/NOTICE); the fallback entry is the moment "fallback".
func loadMoments(t *testing.T) map[string]moment {
	t.Helper()
	b, err := os.ReadFile("testdata/mappings/acp.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Moments  map[string]moment `json:"moments"`
		Fallback moment            `json:"fallback"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	fx.Moments["fallback"] = fx.Fallback
	return fx.Moments
}

// agentMethods are sent agent → client; everything else client → agent.
func agentSends(method string) bool {
	return method == "session/update" || method == "session/request_permission" ||
		strings.HasPrefix(method, "fs/") || strings.HasPrefix(method, "terminal/") || strings.HasPrefix(method, "elicitation/")
}

// momentFrame builds the wire frame of a moment: requests get id 1, a
// response is joined to a request of its method (as the host's router
// joins it) that the mapper never saw, so no runtime state leaks in.
func momentFrame(t *testing.T, m moment) (sdk.Frame, msg) {
	t.Helper()
	in := m.Input
	env := map[string]any{"jsonrpc": "2.0"}
	dir := sdk.C2A
	if agentSends(in.Method) {
		dir = sdk.A2C
	}
	switch in.Kind {
	case "request":
		env["id"], env["method"], env["params"] = 1, in.Method, in.Params
	case "notification":
		env["method"], env["params"] = in.Method, in.Params
	case "response":
		env["id"], env["result"] = 1, in.Result
		if dir == sdk.A2C {
			dir = sdk.C2A
		} else {
			dir = sdk.A2C
		}
	}
	data, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	f := sdk.Frame{Kind: sdk.KindLine, Seq: 2, Dir: dir, At: time.Date(2026, 7, 3, 10, 0, 0, 0, time.UTC), Data: data}
	if in.Kind == "response" {
		f.ReplyTo, f.ReplyToMethod = 1, in.Method
	}
	m2, err := parseMsg(&f)
	if err != nil {
		t.Fatal(err)
	}
	return f, m2
}

// fixedEnv is an environment with nothing set.
type fixedEnv map[string]string

func (e fixedEnv) Getenv(k string) string    { return e[k] }
func (e fixedEnv) Hostname() (string, error) { return "host", nil }

// mapPure maps one moment with a fresh connection and returns the
// pinned-shape results: type, data as the stamper would write it, subject.
func mapPure(t *testing.T, s settings, m moment) []pinned {
	t.Helper()
	c := newConn(s, sdk.StartRequest{Connection: "c-test", Input: "acp/1"})
	f, msg := momentFrame(t, m)
	var out []pinned
	for _, d := range c.mapMsg(&f, msg) {
		data := d.data
		if data == nil {
			data = obj{}
		}
		aep.Prune(d.typ, data, d.level)
		raw, err := aep.Canonical(data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pinned{Type: d.typ, Data: raw, Subject: d.subject})
	}
	return out
}

func canonPins(t *testing.T, ps []pinned) string {
	t.Helper()
	var parts []string
	for _, p := range ps {
		d, err := aep.CanonicalRaw(p.Data)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p.Type+" "+string(d)+" subject="+p.Subject)
	}
	return strings.Join(parts, "\n")
}

// TestAnnexA13_ACPMoments: every moment of mappings/acp.json (and the
// fallback) at the default posture, and every deltas_expected fork under
// {deltas: true, ceiling: redacted}, by canonical equality; digests
// included.
func TestAnnexA13_ACPMoments(t *testing.T) {
	moments := loadMoments(t)
	if len(moments) != 22 {
		t.Fatalf("fixture has %d moments with the fallback, want 22", len(moments))
	}
	def := Config{}.resolve(fixedEnv{})
	deltas := Config{Deltas: ptr(true), Capture: map[string]string{"default": "redacted"}}.resolve(fixedEnv{})
	forks := 0
	for _, name := range sortedKeys(moments) {
		m := moments[name]
		t.Run(name, func(t *testing.T) {
			if got, want := canonPins(t, mapPure(t, def, m)), canonPins(t, m.Expected); got != want {
				t.Errorf("default posture:\ngot  %s\nwant %s", got, want)
			}
		})
		if m.DeltasExpected != nil {
			forks++
			t.Run(name+"/deltas", func(t *testing.T) {
				if got, want := canonPins(t, mapPure(t, deltas, m)), canonPins(t, m.DeltasExpected); got != want {
					t.Errorf("deltas posture:\ngot  %s\nwant %s", got, want)
				}
			})
		}
	}
	if forks != 2 {
		t.Errorf("%d deltas forks, want 2", forks)
	}
}

func ptr[T any](v T) *T { return &v }

// TestAnnexA13_PinnedDataValidates: every pinned data object validates
// against its type's payload schema (as conformance/run.py checks), inside
// a minimal envelope.
func TestAnnexA13_PinnedDataValidates(t *testing.T) {
	v, err := aepcheck.DefaultValidator()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, m := range loadMoments(t) {
		for _, p := range append(append([]pinned(nil), m.Expected...), m.DeltasExpected...) {
			raw, _ := json.Marshal(map[string]any{"aep": "0.1", "id": "X", "type": p.Type, "time": "2026-07-03T10:00:00Z",
				"source": "aep://h/agent/acp/session/sess_1", "agent": "acp", "session": "sess_1", "seq": 0, "data": p.Data})
			if _, err := v.Validate(raw); err != nil {
				t.Errorf("%s: %s: %v", name, p.Type, err)
			}
			n++
		}
	}
	if n != 22 {
		t.Errorf("validated %d pinned events, want 22", n)
	}
}

// TestAnnexA13_WireFacts: what conformance/run.py asserts beyond equality,
// on everything the SDK sessions produce: no progress.task.* or message.*
// type, every x.acp.* type has at least four segments, the permission gate
// claims no options and no respond_via, answers go via oob.
func TestAnnexA13_WireFacts(t *testing.T) {
	for _, c := range []struct{ trace, input string }{{"v1-everything", "acp/1"}, {"v2-everything", v2}} {
		for _, e := range mapAll(t, defaultCfg(), c.input, wire(nil, traceLines(t, "testdata/"+c.trace+".trace.jsonl")...)) {
			switch {
			case strings.HasPrefix(e.Type, "progress.task.") || strings.HasPrefix(e.Type, "message."):
				t.Errorf("%s: %s is not ours to mint", c.trace, e.Type)
			case strings.HasPrefix(e.Type, "x.") && strings.Count(e.Type, ".") < 3:
				t.Errorf("%s: %s has fewer than 4 segments", c.trace, e.Type)
			case e.Type == "attention.requested" && (e.Data["options"] != nil || e.Data["respond_via"] != nil):
				t.Errorf("%s: the gate is observed read-only: %s", c.trace, e.raw)
			case e.Type == "attention.answered" && e.Data["via"] != "oob":
				t.Errorf("%s: answered not via oob: %s", c.trace, e.raw)
			}
		}
	}
}
