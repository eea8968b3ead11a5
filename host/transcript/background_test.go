package transcript

import (
	"encoding/json"
	"testing"

	"github.com/acptap/acptap/sdk/asr"
)

// TestShowBackgroundWork: the transcript (and so show) names the background work a state record
// of the alpha.13 draft keeps in native.record.
func TestShowBackgroundWork(t *testing.T) {
	for rec, want := range map[string]string{
		`{"sessionUpdate":"state_update","state":"idle","background":[{"type":"terminal","terminalId":"t1"},{"type":"tool_call","toolCallId":"c1"},{"type":"subagent","sessionId":"s2"},{"type":"_acme_job"}]}`: "terminal t1, tool_call c1, subagent s2, _acme_job",
		`{"sessionUpdate":"state_update","state":"running","background":[]}`: "none",
		`{"sessionUpdate":"state_update","state":"running"}`:                 "",
	} {
		if got := backgroundWork(&asr.Native{Record: json.RawMessage(rec)}); got != want {
			t.Errorf("%s: %q, want %q", rec, got, want)
		}
	}
	if backgroundWork(nil) != "" {
		t.Error("nil native")
	}
}
