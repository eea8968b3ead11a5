package otlp

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/host/otlp/spool"
	"github.com/acptap/acptap/internal/otlpcollector"
	"github.com/acptap/acptap/sdk/aep"
)

func spanOf(t *testing.T, spans []otlpcollector.Span, op, key, val string) otlpcollector.Span {
	t.Helper()
	for _, s := range spans {
		if s.Attrs["gen_ai.operation.name"] == op && s.Attrs[key] == val {
			return s
		}
	}
	t.Fatalf("no %s span with %s=%s among %d", op, key, val, len(spans))
	return otlpcollector.Span{}
}

// TestGenAISpansOfTheGoldenSession: the golden fixture's session s_8f2c
// arrives as one invoke_agent span per run, with the agent's name and
// version, model, finish reason, token usage and the permission wait as a
// span event; its tool calls as execute_tool spans, children of their
// run's span in its trace; a failed run and a failed tool carry an error
// status and error.type.
func TestGenAISpansOfTheGoldenSession(t *testing.T) {
	c := otlpcollector.Start(t)
	info := func(s string) Agent { return Agent{Name: "claude-code", Version: "2.1.0", Model: "claude-sonnet-5"} }
	sendGolden(t, targets(t, c, ProtocolGRPC), aep.Metadata, info)
	c.Wait(t, 30*time.Second, "spans", func(_ []otlpcollector.Log, s []otlpcollector.Span) bool { return len(s) >= 5 })
	spans := c.Spans()

	r42 := spanOf(t, spans, "invoke_agent", "aep.run_id", "r_0042")
	if r42.Name != "invoke_agent claude-code" || r42.Kind != "Client" || r42.ParentSpanID != "" ||
		r42.Attrs["gen_ai.conversation.id"] != "s_8f2c" || r42.Attrs["session.id"] != "s_8f2c" ||
		r42.Attrs["gen_ai.agent.name"] != "claude-code" || r42.Attrs["gen_ai.agent.version"] != "2.1.0" ||
		r42.Attrs["gen_ai.request.model"] != "claude-sonnet-5" ||
		r42.Attrs["gen_ai.usage.input_tokens"] != int64(9214) || r42.Attrs["gen_ai.usage.output_tokens"] != int64(3480) {
		t.Errorf("r_0042 span %+v", r42)
	}
	if !r42.Start.Equal(time.Date(2026, 7, 3, 10, 14, 1, 0, time.UTC)) || !r42.End.Equal(time.Date(2026, 7, 3, 10, 15, 10, 0, time.UTC)) {
		t.Errorf("r_0042 %s – %s", r42.Start, r42.End)
	}
	if len(r42.Events) != 1 || r42.Events[0].Name != "acptap.permission" || r42.Events[0].Attrs["acptap.wait.outcome"] != "answered" ||
		r42.Events[0].Attrs["acptap.wait.option"] != "allow" || r42.Events[0].Attrs["acptap.wait.duration_ms"] != int64(4250) {
		t.Errorf("r_0042 events %+v", r42.Events)
	}
	bash := spanOf(t, spans, "execute_tool", "gen_ai.tool.call.id", "t_91")
	if bash.Name != "execute_tool Bash" || bash.Kind != "Internal" || bash.TraceID != r42.TraceID || bash.ParentSpanID != r42.SpanID ||
		bash.Attrs["gen_ai.tool.name"] != "Bash" || bash.Attrs["gen_ai.conversation.id"] != "s_8f2c" || bash.StatusCode != "Unset" ||
		bash.Attrs["gen_ai.usage.input_tokens"] != int64(142) || bash.Attrs["gen_ai.usage.output_tokens"] != int64(87) {
		t.Errorf("t_91 span %+v (run span %s/%s)", bash, r42.TraceID, r42.SpanID)
	}
	if _, ok := bash.Attrs["gen_ai.tool.call.arguments"]; ok {
		t.Errorf("tool arguments exported at metadata: %v", bash.Attrs)
	}

	r43 := spanOf(t, spans, "invoke_agent", "aep.run_id", "r_0043")
	if r43.StatusCode != "Error" || r43.Attrs["error.type"] != "io_error" || !slices.Equal(asStrings(r43.Attrs["gen_ai.response.finish_reasons"]), []string{"tool_error"}) {
		t.Errorf("r_0043 span %+v", r43)
	}
	write := spanOf(t, spans, "execute_tool", "gen_ai.tool.call.id", "t_93")
	if write.StatusCode != "Error" || write.ParentSpanID != r43.SpanID || write.TraceID != r43.TraceID {
		t.Errorf("t_93 span %+v", write)
	}
	r44 := spanOf(t, spans, "invoke_agent", "aep.run_id", "r_0044")
	if !slices.Equal(asStrings(r44.Attrs["gen_ai.response.finish_reasons"]), []string{"cancelled"}) || len(r44.Events) != 1 ||
		r44.Events[0].Attrs["acptap.wait.outcome"] != "timeout" {
		t.Errorf("r_0044 span %+v", r44)
	}
	// A run whose terminal is in a later epoch is one span.
	e1 := spanOf(t, spans, "invoke_agent", "aep.run_id", "r_e1")
	if e1.Attrs["acptap.unfinished"] != nil {
		t.Errorf("r_e1 %+v", e1)
	}
	// The log records of a run carry its span context.
	for _, l := range c.Logs() {
		if l.Attrs["aep.run_id"] == "r_0042" && l.EventName == "dev.aep.run.started" && (l.TraceID != r42.TraceID || l.SpanID != r42.SpanID) {
			t.Errorf("run.started log record in %s/%s, span %s/%s", l.TraceID, l.SpanID, r42.TraceID, r42.SpanID)
		}
	}
	// Distinct ids everywhere.
	seen := map[string]bool{}
	for _, s := range spans {
		if seen[s.SpanID] {
			t.Errorf("span id %s twice", s.SpanID)
		}
		seen[s.SpanID] = true
	}
}

func asStrings(v any) []string {
	var out []string
	if a, ok := v.([]any); ok {
		for _, e := range a {
			s, _ := e.(string)
			out = append(out, s)
		}
	}
	return out
}

// TestSpansJoinTheACPTraceparent: a run whose prompt carried
// _meta.traceparent (lifted onto run.started) is a child of that span in
// that trace, and so are its tools; the content of a redacted capture
// reaches the spans only when max_capture allows it.
func TestSpansJoinTheACPTraceparent(t *testing.T) {
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	events := []string{
		`{"aep":"0.1","id":"E1","type":"run.started","time":"2026-07-03T10:00:00.000Z","agent":"acp","session":"s1","run":"0-1","seq":0,"epoch":0,"capture":"redacted","traceparent":"` + tp + `","data":{"trigger":"user","prompt":"fix the bug"}}`,
		`{"aep":"0.1","id":"E2","type":"tool.requested","subject":"c1","time":"2026-07-03T10:00:01.000Z","agent":"acp","session":"s1","run":"0-1","seq":1,"epoch":0,"capture":"redacted","data":{"tool":{"name":"read","call_id":"c1"},"kind":"read","args_redacted":{"path":"a.go"}}}`,
		`{"aep":"0.1","id":"E3","type":"attention.requested","subject":"c1","time":"2026-07-03T10:00:01.500Z","agent":"acp","session":"s1","run":"0-1","seq":2,"epoch":0,"severity":"notice","capture":"redacted","data":{"kind":"permission","prompt":"Permission requested: read","options_count":2}}`,
		`{"aep":"0.1","id":"E4","type":"attention.resolved","subject":"E3","time":"2026-07-03T10:00:02.000Z","agent":"acp","session":"s1","run":"0-1","seq":3,"epoch":0,"data":{"resolution":"dismissed"}}`,
		`{"aep":"0.1","id":"E5","type":"tool.completed","subject":"c1","time":"2026-07-03T10:00:03.000Z","agent":"acp","session":"s1","run":"0-1","seq":4,"epoch":0,"data":{"tool":{"name":"read","call_id":"c1"}}}`,
		`{"aep":"0.1","id":"E6","type":"run.finished","time":"2026-07-03T10:00:04.000Z","agent":"acp","session":"s1","run":"0-1","seq":5,"epoch":0,"data":{"stop_reason":"end_turn"}}`,
	}
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(events, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		level   aep.Level
		content bool
	}{{aep.Metadata, false}, {aep.Redacted, true}} {
		c := otlpcollector.Start(t)
		sp, err := spool.Open(filepath.Join(t.TempDir(), "spool"), 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SpoolFile(path, sp, tc.level, "test", nil, 0); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := (&Sender{Spool: sp, Client: targets(t, c, ProtocolHTTP)}).Run(ctx, true); err != nil {
			t.Fatal(err)
		}
		cancel()
		c.Wait(t, 30*time.Second, "2 spans", func(_ []otlpcollector.Log, s []otlpcollector.Span) bool { return len(s) >= 2 })
		spans := c.Spans()
		run := spanOf(t, spans, "invoke_agent", "aep.run_id", "0-1")
		tool := spanOf(t, spans, "execute_tool", "gen_ai.tool.call.id", "c1")
		if run.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || run.ParentSpanID != "00f067aa0ba902b7" ||
			tool.TraceID != run.TraceID || tool.ParentSpanID != run.SpanID {
			t.Errorf("parentage: run %s/%s←%s tool %s/%s←%s", run.TraceID, run.SpanID, run.ParentSpanID, tool.TraceID, tool.SpanID, tool.ParentSpanID)
		}
		if len(tool.Events) != 1 || tool.Events[0].Name != "acptap.permission" || tool.Events[0].Attrs["acptap.wait.outcome"] != "dismissed" {
			t.Errorf("tool events %+v", tool.Events)
		}
		_, hasPrompt := run.Attrs["gen_ai.input.messages"]
		_, hasArgs := tool.Attrs["gen_ai.tool.call.arguments"]
		if hasPrompt != tc.content || hasArgs != tc.content {
			t.Errorf("max_capture %s: prompt exported %v, arguments %v", tc.level, hasPrompt, hasArgs)
		}
		if tc.content && !strings.Contains(run.Attrs["gen_ai.input.messages"].(string), "fix the bug") {
			t.Errorf("input messages %v", run.Attrs["gen_ai.input.messages"])
		}
	}
}

// TestIDsAreTheSameOnEveryProjection: projecting the same events twice
// (a retry, a rebuild, a backfill) yields byte-identical items.
func TestIDsAreTheSameOnEveryProjection(t *testing.T) {
	project := func() [][]byte {
		p := NewProjector(aep.Metadata, "v", nil)
		var out [][]byte
		f, _ := os.Open(goldenPath)
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			its, err := p.Project(sc.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range its {
				out = append(out, it.Data)
			}
		}
		for _, it := range p.Flush() {
			out = append(out, it.Data)
		}
		return out
	}
	a, b := project(), project()
	if len(a) != len(b) || len(a) < 64 {
		t.Fatalf("%d and %d items", len(a), len(b))
	}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			t.Fatalf("item %d differs between projections", i)
		}
	}
}
