package pipeline

import (
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
)

const initReq = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}`

func detect(d *revisionDetector, lines ...string) {
	for i, l := range lines {
		dir := sdk.C2A
		if i%2 == 1 {
			dir = sdk.A2C
		}
		if d.observe(dir, []byte(l)) {
			return
		}
	}
	d.end()
}

// TestRevisionFromInitializeEvidence: protocolVersion 2 alone cannot tell
// the drafts apart; capabilities only alpha.13 defines choose it, and the
// reason names the member; per-agent configuration decides a silent
// connection, and without it the default schema revision does.
func TestRevisionFromInitializeEvidence(t *testing.T) {
	for _, tc := range []struct {
		name, resp, agent, want, why string
	}{
		{"session.title", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"capabilities":{"session":{"title":{}}}}}`, "", "acp/2@2.0.0-alpha.13", "capabilities.session.title"},
		{"session.archive", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"capabilities":{"session":{"archive":{"_meta":{}}}}}}`, "", "acp/2@2.0.0-alpha.13", "capabilities.session.archive"},
		{"session.status", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"capabilities":{"session":{"status":{}}}}}`, "2.0.0-alpha.9", "acp/2@2.0.0-alpha.13", "capabilities.session.status"},
		{"auth.status", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"capabilities":{"auth":{"status":{}}}}}`, "", "acp/2@2.0.0-alpha.13", "capabilities.auth.status"},
		{"null is no evidence", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"capabilities":{"session":{"title":null,"fork":{}}}}}`, "", "acp/2@2.0.0-alpha.9", "the default schema_revision"},
		{"silent, agent configured", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"capabilities":{"session":{}}}}`, "2.0.0-alpha.13", "acp/2@2.0.0-alpha.13", "agents.my-agent.schema_revision"},
		{"silent", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`, "", "acp/2@2.0.0-alpha.9", "the default schema_revision"},
		{"v1 ignores drafts", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`, "2.0.0-alpha.13", "acp/1", "initialize response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newRevisionDetector("2.0.0-alpha.9", "acp/2@2.0.0-alpha.9")
			d.agent, d.agentRule = tc.agent, "my-agent"
			detect(d, initReq, tc.resp)
			if d.revision != tc.want || !strings.Contains(d.why, tc.why) {
				t.Errorf("revision %q (%s), want %q (%s)", d.revision, d.why, tc.want, tc.why)
			}
		})
	}
}
