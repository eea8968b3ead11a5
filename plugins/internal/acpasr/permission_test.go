package acpasr

import (
	"fmt"
	"testing"
)

const permOptions = `[{"optionId":"yes","name":"Allow","kind":"allow_once"},{"optionId":"always","name":"Always","kind":"allow_always"},{"optionId":"no","name":"Reject","kind":"reject_once"},{"optionId":"v","name":"Vendor","kind":"_acme_ask_later"}]`

func permReq(id, subject string) string {
	return `a2c {"jsonrpc":"2.0","id":` + id + `,"method":"session/request_permission","params":{"sessionId":"s1","title":"Edit main.go?","description":"The agent wants to write","subject":` + subject + `,"options":` + permOptions + `}}`
}

// TestASR716_Permission: requestId "<n>:<id>" derived; title, description
// and options copied; subject mapped; the answer resolves it.
func TestASR716_Permission(t *testing.T) {
	toolSubject := `{"type":"tool_call","toolCall":{"toolCallId":"call_7","title":"Edit"}}`
	tests := []struct {
		name, id, subject, answer string
		prior                     int
		want                      string // the last permission record, stripped
	}{
		{"tool call, selected", "0", toolSubject, `{"outcome":{"outcome":"selected","optionId":"always"}}`, 0,
			`{"decision":"allow_always","description":"The agent wants to write","idSource":"derived","options":` + permOptions + `,"requestId":"0:0","selectedOptionId":"always","status":"resolved","subject":{"callId":"call_7"},"supersedes":"r1","title":"Edit main.go?","type":"permission"}`},
		{"command, cancelled, third connection", `"req-9"`, `{"type":"command","command":"rm -rf build","cwd":"/w/proj"}`, `{"outcome":{"outcome":"cancelled"}}`, 3,
			`{"decision":"cancelled","description":"The agent wants to write","idSource":"derived","options":` + permOptions + `,"requestId":"3:req-9","status":"resolved","subject":{"command":"rm -rf build"},"supersedes":"r1","title":"Edit main.go?","type":"permission"}`},
		{"vendor subject and option kind", "5", `{"type":"_acme_network","host":"example.com"}`, `{"outcome":{"outcome":"selected","optionId":"v"}}`, 0,
			`{"decision":"_acme_ask_later","description":"The agent wants to write","idSource":"derived","options":` + permOptions + `,"requestId":"0:5","selectedOptionId":"v","status":"resolved","subject":{"type":"_acme_network","host":"example.com"},"supersedes":"r1","title":"Edit main.go?","type":"permission"}`},
		{"vendor outcome", "6", toolSubject, `{"outcome":{"outcome":"_acme_deferred"}}`, 0,
			`{"decision":"_acme_deferred","description":"The agent wants to write","idSource":"derived","options":` + permOptions + `,"requestId":"0:6","status":"resolved","subject":{"callId":"call_7"},"supersedes":"r1","title":"Edit main.go?","type":"permission"}`},
		{"no answer: pending", "7", toolSubject, "", 0,
			`{"description":"The agent wants to write","idSource":"derived","options":` + permOptions + `,"requestId":"0:7","status":"pending","subject":{"callId":"call_7"},"title":"Edit main.go?","type":"permission"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := []string{permReq(tt.id, tt.subject)}
			if tt.answer != "" {
				lines = append(lines, `c2a {"jsonrpc":"2.0","id":`+tt.id+`,"result":`+tt.answer+`}`)
			}
			fixture := opened(lines...)
			if tt.prior > 0 {
				// What the store knows of s1: earlier connections, no stream.
				fixture = wire(fmt.Sprintf(`session {"id":"s1","connections":%d,"prior":[]}`, tt.prior), fixture)
			}
			perms := ofType(records(t, mapAll(t, startReq(""), parseFrames(t, fixture)), "s1"), "permission")
			if got := js(strip(perms[len(perms)-1])); got != js(decode(tt.want)) {
				t.Errorf("permission = %s\nwant         %s", got, js(decode(tt.want)))
			}
			if perms[0]["status"] != "pending" {
				t.Errorf("first record = %s, want the pending request", js(perms[0]))
			}
		})
	}
}

// TestASR716_RequestIDsPerDirection: the agent's id 0 is not confused with
// the client's id 0 (ids are per direction).
func TestASR716_RequestIDsPerDirection(t *testing.T) {
	outs := mapAll(t, startReq(""), parseFrames(t, opened(
		permReq("1", `{"type":"command","command":"ls","cwd":"/"}`),
		`c2a {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
		`c2a {"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"no"}}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{"messageId":"u"}}`,
	)))
	perms := ofType(records(t, outs, "s1"), "permission")
	if last := perms[len(perms)-1]; last["decision"] != "reject_once" {
		t.Errorf("permission = %s", js(last))
	}
}
