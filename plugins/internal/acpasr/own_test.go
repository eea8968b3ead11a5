package acpasr

import (
	"testing"

	"github.com/acptap/acptap/sdk/mappertest"
	"github.com/google/go-cmp/cmp"
)

// TestReplayFrameByFrame: a resumed session's replay mapped one frame a
// call is mapped as in one batch. What the replay defers until its end
// (latest-wins records: usage, state) outlives the call of its frame, so
// in a test binary, where a frame's bytes are poisoned when the call
// returns (frameTape.lend), a value deferred without a copy (own) reads
// garbage here.
func TestReplayFrameByFrame(t *testing.T) {
	first := mapAll(t, startReq(""), parseFrames(t, wire(firstConnection...)))
	prior := streamLines(first, "s1")
	lines := []string{initReq, initResp, sessionLine("s1", 1, prior), resumeReq}
	lines = append(lines, replayedHistory...)
	lines = append(lines,
		upd(`{"sessionUpdate":"usage_update","used":11,"size":100,"cost":{"amount":0.25,"currency":"USD"}}`), // differs: written at the replay's end
		upd(`{"sessionUpdate":"state_update","state":"idle"}`),
		`a2c {"jsonrpc":"2.0","id":1,"result":{}}`,
		idle,
	)
	frames := parseFrames(t, wire(lines...))
	whole := mappertest.Run(t, newMapper(), startReq(""), frames, 0)
	each := mappertest.Run(t, newMapper(), startReq(""), frames, 1)
	if d := cmp.Diff(whole, each); d != "" {
		t.Fatalf("frame by frame differs from one batch (-batch +each):\n%s", d)
	}
}
