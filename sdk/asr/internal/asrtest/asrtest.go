package asrtest

import "strings"

// A valid stream recorded from ACP: the validator's tests change every line
// of it once.
const (
	HdrACP = `{"type":"header","asr":"0.1","sessionId":"s1","createdAt":"2026-10-26T14:30:41.210Z","agent":{"name":"gemini","version":"0.9.1"},` +
		`"producer":{"method":"recorder","name":"acptap","version":"0.1.0","plugin":{"name":"acpv2","version":"0.1.0"},"source":{"format":"acp","formatVersion":"2.0.0-alpha.9"},` +
		`"lossy":["inference","message.author","timestamps","usage"]},"workspace":{"roots":[{"id":"root0","path":"/w/proj"}]}}`
	RecState1  = `{"type":"state","seq":1,"id":"r1","ts":"2026-10-26T14:30:41.211Z","tsSource":"recorder","state":"running"}`
	RecPrompt  = `{"type":"message","seq":2,"id":"r2","ts":"2026-10-26T14:30:41.211Z","tsSource":"recorder","messageId":"m1","role":"user","origin":"prompt","content":[{"type":"text","text":"Fix it"}]}`
	RecDecl    = `{"type":"declaration","seq":3,"id":"r3","lossy":["_org.agent-session.acp/tool_status_transitions","tool_result.content"]}`
	RecCall    = `{"type":"tool_call","seq":4,"id":"r4","callId":"c1","callIdSource":"native","name":"read","kind":"read","locations":[{"path":{"root":"root0","path":"a.go"},"line":1}]}`
	RecResult  = `{"type":"tool_result","seq":5,"id":"r5","status":"completed","callId":"c1","linkage":"exact","capture":{"content":{"state":"absent"}}}`
	RecAnswer  = `{"type":"message","seq":6,"id":"r6","messageId":"m2","role":"assistant","content":[{"type":"text","text":"Done"}],"assembly":"chunks"}`
	RecRevised = `{"type":"message","seq":7,"id":"r7","supersedes":"r6","messageId":"m2","role":"assistant","content":[{"type":"text","text":"Done."}]}`
	RecIdle    = `{"type":"state","seq":8,"id":"r8","state":"idle","stopReason":"end_turn"}`
)

// BaseLines are the base stream's lines.
func BaseLines() []string {
	return []string{HdrACP, RecState1, RecPrompt, RecDecl, RecCall, RecResult, RecAnswer, RecRevised, RecIdle}
}

// Edit changes line Line (1-based) of the base stream: S replaces it, or
// (with a leading "+") is inserted after it, or (when "") deletes it.
type Edit struct {
	Line int
	S    string
}

// StreamWith is the base stream with edits applied, LF-terminated. A test
// may spell its edits in a type of its own (type edit asrtest.Edit) so that
// its tables can be unkeyed.
func StreamWith[E ~struct {
	Line int
	S    string
}](edits ...E) string {
	lines := BaseLines()
	// Apply from the last line up so that line numbers stay those of the base.
	for i := len(edits) - 1; i >= 0; i-- {
		e := Edit(edits[i])
		switch {
		case e.S == "":
			lines = append(lines[:e.Line-1], lines[e.Line:]...)
		case strings.HasPrefix(e.S, "+"):
			lines = append(lines[:e.Line], append([]string{e.S[1:]}, lines[e.Line:]...)...)
		default:
			lines[e.Line-1] = e.S
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
