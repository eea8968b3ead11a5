package otlp

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/internal/otlpcollector"
	"github.com/acptap/acptap/sdk/aep"
)

// registrySeverity is the AEP registry's OTLP severity table.
func registrySeverity(t *testing.T) map[string]struct {
	Text string `json:"severity_text"`
	Num  int32  `json:"severity_number"`
} {
	b, err := os.ReadFile("../../sdk/aep/schemas/registry/severity.json")
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		OTLP map[string]struct {
			Text string `json:"severity_text"`
			Num  int32  `json:"severity_number"`
		} `json:"otlp"`
	}
	if err := json.Unmarshal(b, &reg); err != nil {
		t.Fatal(err)
	}
	if len(reg.OTLP) != 6 {
		t.Fatalf("registry otlp table %v", reg.OTLP)
	}
	return reg.OTLP
}

// TestAEP0005_GoldenEventsArriveAsLogRecords: every event of the AEP golden
// fixture, sent over OTLP/gRPC and OTLP/HTTP to the real collector
// receiver, arrives as the LogRecord AEP-0005 defines: event_name
// "dev.aep."+type, the registry's severity, service.name = agent, the
// envelope as aep.* attributes, gen_ai.* data members hoisted, the rest of
// data (down-levelled to metadata) as the body, in the fixture's order.
func TestAEP0005_GoldenEventsArriveAsLogRecords(t *testing.T) {
	sev := registrySeverity(t)
	lines := goldenLines(t)
	for _, protocol := range []string{ProtocolGRPC, ProtocolHTTP} {
		t.Run(strings.ReplaceAll(protocol, "/", "-"), func(t *testing.T) {
			c := otlpcollector.Start(t)
			res := sendGolden(t, targets(t, c, protocol), aep.Metadata)
			if len(res.Skipped) > 0 || res.Logs != len(lines) {
				t.Fatalf("projected %+v", res)
			}
			c.Wait(t, 30*time.Second, "every golden event", func(l []otlpcollector.Log, _ []otlpcollector.Span) bool { return len(l) >= len(lines) })
			got := c.Logs()
			if len(got) != len(lines) {
				t.Fatalf("%d log records, want %d", len(got), len(lines))
			}
			for i, line := range lines {
				var ev map[string]any
				if err := json.Unmarshal(line, &ev); err != nil {
					t.Fatal(err)
				}
				aep.Downlevel(ev, aep.Metadata)
				lr := got[i]
				name := fmt.Sprintf("line %d (%s)", i+1, ev["id"])
				s, _ := ev["severity"].(string)
				if s == "" {
					s = "info"
				}
				if lr.EventName != "dev.aep."+ev["type"].(string) || lr.SeverityText != sev[s].Text || lr.SeverityNumber != sev[s].Num || lr.Service != ev["agent"] {
					t.Errorf("%s: event_name %q severity %s/%d service %q", name, lr.EventName, lr.SeverityText, lr.SeverityNumber, lr.Service)
				}
				want := map[string]any{}
				for env, attr := range map[string]string{"agent": "aep.agent_id", "session": "aep.session_id", "run": "aep.run_id",
					"step": "aep.step", "id": "aep.event_id", "seq": "aep.sequence", "epoch": "aep.epoch", "cause": "aep.causation_id",
					"capture": "aep.capture", "subject": "aep.subject", "source": "aep.source"} {
					if v, ok := ev[env]; ok {
						want[attr] = v
					}
				}
				if _, ok := want["aep.capture"]; !ok {
					want["aep.capture"] = "metadata"
				}
				body := map[string]any{}
				data, _ := ev["data"].(map[string]any)
				for k, v := range data {
					if strings.HasPrefix(k, "gen_ai.") {
						want[k] = v
					} else {
						body[k] = v
					}
				}
				if d := cmp.Diff(generic(t, want), generic(t, lr.Attrs)); d != "" {
					t.Errorf("%s attributes (-want +got):\n%s", name, d)
				}
				var wantBody any
				if len(body) > 0 {
					wantBody = generic(t, body)
				}
				if d := cmp.Diff(wantBody, generic(t, lr.Body)); d != "" {
					t.Errorf("%s body (-want +got):\n%s", name, d)
				}
				if tm, _ := time.Parse(time.RFC3339Nano, ev["time"].(string)); !lr.Time.Equal(tm) {
					t.Errorf("%s time %s, want %s", name, lr.Time, tm)
				}
				if tp, _ := ev["traceparent"].(string); tp != "" && (lr.TraceID != tp[3:35] || lr.SpanID != tp[36:52]) {
					t.Errorf("%s trace %s span %s, want the event's traceparent %s", name, lr.TraceID, lr.SpanID, tp)
				}
			}
		})
	}
}

// TestAEP0005_MaxCaptureDownlevelsBeforeExport: at the default ceiling
// (metadata) no free text of the fixture reaches the collector — the
// permission prompt arrives synthesized, the form's labels as ids; with
// max_capture = redacted the redacted text is exported as written.
func TestAEP0005_MaxCaptureDownlevelsBeforeExport(t *testing.T) {
	secret := "rm -rf build/" // in the redacted permission prompt of golden line 5
	for _, tc := range []struct {
		level aep.Level
		want  bool
	}{{aep.Metadata, false}, {aep.Redacted, true}} {
		c := otlpcollector.Start(t)
		sendGolden(t, targets(t, c, ProtocolHTTP), tc.level)
		c.Wait(t, 30*time.Second, "the golden events", func(l []otlpcollector.Log, _ []otlpcollector.Span) bool { return len(l) >= 60 })
		b, _ := json.Marshal(c.Logs())
		if strings.Contains(string(b), secret) != tc.want {
			t.Errorf("max_capture %s: %q exported = %v, want %v", tc.level, secret, !tc.want, tc.want)
		}
		var capture []string
		for _, l := range c.Logs() {
			capture = append(capture, l.Attrs["aep.capture"].(string))
		}
		for _, cp := range capture {
			if l, _ := aep.ParseLevel(cp); l > tc.level {
				t.Errorf("max_capture %s: a record at capture %s", tc.level, cp)
			}
		}
	}
}
