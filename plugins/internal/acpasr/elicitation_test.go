package acpasr

import (
	"testing"
)

const formSchema = `{"type":"object","properties":{"branch":{"type":"string","enum":["main","release/2.4"]}},"required":["branch"]}`

// TestASR734_Elicitation: an elicitation/create for a session becomes an
// input_request, written when the answer arrives.
func TestASR734_Elicitation(t *testing.T) {
	form := `a2c {"jsonrpc":"2.0","id":12,"method":"elicitation/create","params":{"sessionId":"s1","toolCallId":"call_7","mode":"form","message":"Which branch should the release be cut from?","requestedSchema":` + formSchema + `}}`
	url := `a2c {"jsonrpc":"2.0","id":13,"method":"elicitation/create","params":{"sessionId":"s1","mode":"url","elicitationId":"el-1","url":"https://example.com/auth","message":"Sign in"}}`
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"form accepted (the seed's example)", []string{form, `c2a {"jsonrpc":"2.0","id":12,"result":{"action":"accept","content":{"branch":"release/2.4"}}}`},
			`{"callId":"call_7","idSource":"derived","message":"Which branch should the release be cut from?","mode":"form","requestId":"0:12","requestedSchema":` + formSchema + `,"response":{"branch":"release/2.4"},"status":"answered","type":"input_request"}`},
		{"form declined", []string{form, `c2a {"jsonrpc":"2.0","id":12,"result":{"action":"decline"}}`},
			`{"callId":"call_7","idSource":"derived","message":"Which branch should the release be cut from?","mode":"form","requestId":"0:12","requestedSchema":` + formSchema + `,"status":"declined","type":"input_request"}`},
		{"url accepted: elicitationId, no content", []string{url, `c2a {"jsonrpc":"2.0","id":13,"result":{"action":"accept","content":{"x":1}}}`},
			`{"message":"Sign in","mode":"url","requestId":"el-1","status":"answered","type":"input_request","url":"https://example.com/auth"}`},
		{"cancelled", []string{url, `c2a {"jsonrpc":"2.0","id":13,"result":{"action":"cancel"}}`},
			`{"message":"Sign in","mode":"url","requestId":"el-1","status":"cancelled","type":"input_request","url":"https://example.com/auth"}`},
		{"no answer: pending at Finish", []string{url},
			`{"message":"Sign in","mode":"url","requestId":"el-1","status":"pending","type":"input_request","url":"https://example.com/auth"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := ofType(records(t, mapAll(t, startReq(""), parseFrames(t, opened(tt.lines...))), "s1"), "input_request")
			if len(reqs) != 1 {
				t.Fatalf("input_requests = %s, want one", js(reqs))
			}
			if got := js(strip(reqs[0])); got != js(decode(tt.want)) {
				t.Errorf("input_request = %s\nwant            %s", got, js(decode(tt.want)))
			}
		})
	}
}

// TestASR734_RequestScopedNotRecorded: an elicitation before any session
// belongs to no observed session.
func TestASR734_RequestScopedNotRecorded(t *testing.T) {
	outs := mapAll(t, startReq(""), parseFrames(t, wire(initReq,
		`a2c {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"requestId":0,"mode":"form","message":"API key?","requestedSchema":{"type":"object"}}}`,
		`c2a {"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"key":"sk-SECRET"}}}`,
		initResp)))
	for _, o := range outs {
		if len(o.JSON) > 0 {
			t.Errorf("output %s", o.JSON)
		}
	}
}

// TestElicitationComplete: elicitation/complete is an audit record in the
// stream of the URL-mode elicitation with its id (decision 4).
func TestElicitationComplete(t *testing.T) {
	outs := mapAll(t, startReq(""), parseFrames(t, opened(
		`a2c {"jsonrpc":"2.0","id":13,"method":"elicitation/create","params":{"sessionId":"s1","mode":"url","elicitationId":"el-1","url":"https://e.x","message":"m"}}`,
		`c2a {"jsonrpc":"2.0","id":13,"result":{"action":"accept"}}`,
		`a2c {"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"el-1"}}`,
		`a2c {"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"unknown"}}`,
	)))
	rs := records(t, outs, "s1")
	last := rs[len(rs)-1]
	if last["type"] != "org.agent-session.acp/elicitation_complete" ||
		js(last["native"].(map[string]any)["record"]) != `{"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"el-1"}}` {
		t.Errorf("last record = %s", js(last))
	}
	if got := summaries(outs); len(got) != 1 || got[0] != "elicitation/complete for an elicitation not recorded" {
		t.Errorf("diagnostics = %q", got)
	}
}
