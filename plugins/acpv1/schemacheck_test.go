package acpv1

import (
	"slices"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
)

// TestASR722_NonconformingV1: a v1 line that does not conform to the
// official v1 schema (SDK 2.4.0, unstable) is still mapped, with a warning
// diagnostic saying "nonconforming", and its session declares the loss;
// conforming v1 traffic (including stable v1's null for an optional array,
// and unstable methods) declares nothing; "checkSchema": false checks nothing.
func TestASR722_NonconformingV1(t *testing.T) {
	bad := upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":7}}`)
	good := opened(
		prompt(2, "hi"),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}`),
		answer(2, "end_turn"),
		// stable v1 (SDK 2.4.0) reads null as the default of optional arrays
		`c2a {"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/w","mcpServers":null,"additionalDirectories":null}}`,
		`a2c {"jsonrpc":"2.0","id":3,"result":{"sessionId":"s2"}}`,
		// an unstable v1 method
		`c2a {"jsonrpc":"2.0","id":4,"method":"session/fork","params":{"sessionId":"s1","cwd":"/w"}}`,
		`a2c {"jsonrpc":"2.0","id":4,"result":{"sessionId":"s3"}}`,
	)
	declared := func(outs []sdk.Output) bool {
		for _, r := range ofType(records(t, outs, "s1"), "declaration") {
			if strings.Contains(js(r["lossy"]), "_org.acptap/nonconforming_frames") {
				return true
			}
		}
		return false
	}
	outs := mapAll(t, startReq(sdk.ModeRecord, ""), parseFrames(t, good))
	if declared(outs) || slices.ContainsFunc(summaries(outs), func(s string) bool { return strings.Contains(s, "nonconforming") }) {
		t.Fatalf("conforming v1 traffic declared nonconforming: %q", summaries(outs))
	}
	checkStreams(t, outs)

	frames := parseFrames(t, opened(prompt(2, "hi"), bad, answer(2, "end_turn")))
	outs = mapAll(t, startReq(sdk.ModeRecord, ""), frames)
	if !declared(outs) {
		t.Errorf("nonconforming v1 frame not declared: %s", render(outs))
	}
	if !slices.ContainsFunc(summaries(outs), func(s string) bool { return strings.HasPrefix(s, "nonconforming frame") }) {
		t.Errorf("no nonconforming diagnostic: %q", summaries(outs))
	}
	checkStreams(t, outs)
	if len(ofType(records(t, outs, "s1"), "message")) == 0 {
		t.Error("the nonconforming frame's session lost its messages")
	}

	outs = mapAll(t, startReq(sdk.ModeRecord, `{"checkSchema": false}`), frames)
	if declared(outs) {
		t.Error(`"checkSchema": false still checked`)
	}
}
