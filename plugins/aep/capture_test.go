package aep

import (
	"errors"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	mt "github.com/acptap/acptap/sdk/mappertest"
)

// TestCapture_CeilingsPerCategory: at metadata the prompt is only a
// digest; at redacted it passes the §9.4 pipeline (home → ~, secrets); at
// full it is verbatim; at none the envelope stays without data. The tool
// input follows the tool ceiling the same way.
func TestCapture_CeilingsPerCategory(t *testing.T) {
	tool := upd(`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","status":"pending","rawInput":{"path":"/home/tester/a","token":"zz"}}`)
	run := func(run, tl string) (ev, ev) {
		cfg := defaultCfg()
		cfg.Capture = map[string]string{"run": run, "tool": tl}
		evs := mapAll(t, cfg, "acp/1", wire(nil, v1Session(mt.C2A(prompt2), tool)...))
		checkValid(t, evs)
		return ofType(evs, "run.started")[0], ofType(evs, "tool.requested")[0]
	}
	r, tr := run("metadata", "metadata")
	if r.Cap != "metadata" || r.Data["prompt"] != nil || tr.Data["args_redacted"] != nil || tr.Data["args_digest"] == nil {
		t.Errorf("metadata: %s %s", r.raw, tr.raw)
	}
	r, tr = run("redacted", "redacted")
	if r.Cap != "redacted" || r.Data["prompt"] != "fix ~/x with [REDACTED:secret]" ||
		canonJSON(t, tr.Data["args_redacted"]) != `{"path":"~/a","token":"[REDACTED:secret]"}` || tr.Data["args"] != nil {
		t.Errorf("redacted: %s %s", r.raw, tr.raw)
	}
	r, tr = run("full", "full")
	if r.Cap != "full" || r.Data["prompt"] != "fix /home/tester/x with token=abc123secret" || tr.Data["args"] == nil {
		t.Errorf("full: %s %s", r.raw, tr.raw)
	}
	r, tr = run("none", "none")
	if r.Cap != "none" || r.Data != nil || tr.Data != nil || tr.Subj != "t" {
		t.Errorf("none: %s %s", r.raw, tr.raw)
	}
}

// TestCapture_AttentionPromptSynthesizedAtMetadata (AEP-0003 §9.2): below
// redacted the prompt is "{agent} requests {kind}: {subject}", and form
// labels and free-text answers give way to ids and structure.
func TestCapture_AttentionPromptSynthesizedAtMetadata(t *testing.T) {
	cfg := defaultCfg()
	cfg.Capture = map[string]string{"attention": "metadata"}
	evs := mapAll(t, cfg, v2, wire(nil, v2Session(
		mt.A2C(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","title":"rm -rf /","subject":{"type":"tool_call","toolCall":{"toolCallId":"tc9"}},"options":[]}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"sessionId":"s1","mode":"form","message":"Pick","requestedSchema":{"type":"object","properties":{"db":{"type":"string","title":"Database","enum":["pg","lite"]},"name":{"type":"string","title":"Name"},"n":{"type":"integer"}}}}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"db":"lite","name":"secret-name","n":3,"extra":1}}}`),
	)...))
	checkValid(t, evs)
	rq := ofType(evs, "attention.requested")
	if rq[0].Data["prompt"] != "acp requests permission: tc9" || rq[0].Cap != "metadata" {
		t.Errorf("permission: %s", rq[0].raw)
	}
	if rq[1].Data["prompt"] != "acp requests form" || strings.Contains(string(rq[1].raw), "Database") || strings.Contains(string(rq[1].raw), "lite") {
		t.Errorf("form: %s", rq[1].raw)
	}
	if an := ofType(evs, "attention.answered"); canonJSON(t, an[0].Data["answer"]) != `{"values":{"db":"2","n":3}}` {
		t.Errorf("answer: %s", an[0].raw)
	}
}

// TestCapture_DeltasOptIn: chunks are suppressed by default; the
// AEP_ACP_DELTAS environment (or "deltas" in the config, which wins) emits
// them as x.acp.<name>.chunk {delta} at redacted, through the pipeline.
func TestCapture_DeltasOptIn(t *testing.T) {
	if (Config{}).resolve(fixedEnv{}).deltas || !(Config{}).resolve(fixedEnv{DeltasEnv: "1"}).deltas ||
		(Config{Deltas: ptr(false)}).resolve(fixedEnv{DeltasEnv: "true"}).deltas {
		t.Fatal("AEP_ACP_DELTAS is not folded in as documented")
	}
	chunk := upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"mail me at a@b.example"}}`)
	if evs := mapAll(t, defaultCfg(), "acp/1", wire(nil, v1Session(chunk)...)); len(evs) != 1 {
		t.Fatalf("default posture emitted %s", types(evs))
	}
	cfg := defaultCfg()
	cfg.Deltas = ptr(true)
	evs := mapAll(t, cfg, "acp/1", wire(nil, v1Session(chunk)...))
	checkValid(t, evs)
	if d := ofType(evs, "x.acp.agent.message.chunk"); len(d) != 1 || d[0].Cap != "redacted" || d[0].Data["delta"] != "mail me at [REDACTED:pii]" {
		t.Fatalf("deltas: %s", types(evs))
	}
}

// TestCapture_RedactNamesFoldEnvironmentSecrets: redact.names lists
// environment variables whose values are secrets (rule b), and object keys
// to drop.
func TestCapture_RedactNamesFoldEnvironmentSecrets(t *testing.T) {
	s := Config{Redact: RedactConfig{Names: []string{"DEPLOY_KEY"}}}.resolve(fixedEnv{"DEPLOY_KEY": "k-123456", "HOME": "/home/op"})
	if got := s.redactor.Text("use k-123456 in /home/op/x"); got != "use [REDACTED:secret] in ~/x" {
		t.Errorf("text: %s", got)
	}
	if got := s.redactor.Value(obj{"deploy_key": "v"}).(obj)["deploy_key"]; got != "[REDACTED:secret]" {
		t.Errorf("key: %v", got)
	}
}

// TestConnectionLane: events outside any session (initialize, $/…) are
// dropped by default, or go to session acp-conn-<connection>.
func TestConnectionLane(t *testing.T) {
	lines := []mt.Line{mt.C2A(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)}
	if evs := mapAll(t, defaultCfg(), "acp/1", wire(nil, lines...)); len(evs) != 0 {
		t.Fatalf("lane off: %s", types(evs))
	}
	cfg := defaultCfg()
	cfg.ConnectionLane = true
	evs := mapAll(t, cfg, "acp/1", wire(nil, lines...))
	checkValid(t, evs)
	if len(evs) != 1 || evs[0].Type != "x.acp.initialize.event" || evs[0].Sess != "acp-conn-c-test" || evs[0].Seq != 0 {
		t.Fatalf("lane on: %+v", evs)
	}
}

// TestConfigErrorsAreStartErrors: unknown members, categories and levels.
func TestConfigErrorsAreStartErrors(t *testing.T) {
	for _, raw := range []string{`{"nope":1}`, `{"capture":{"tools":"full"}}`, `{"capture":{"run":"loud"}}`} {
		_, err := New().Start(t.Context(), sdk.StartRequest{Config: []byte(raw)})
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
