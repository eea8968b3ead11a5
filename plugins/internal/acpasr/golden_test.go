package acpasr

import "testing"

// TestGolden maps each fixture and compares every output (headers, records,
// diagnostics, frame seqs) with its golden file.
func TestGolden(t *testing.T) {
	for _, name := range []string{"turn", "full"} {
		t.Run(name, func(t *testing.T) {
			outs := mapAll(t, startReq(""), loadFrames(t, name))
			golden(t, name, outs)
			checkStreams(t, outs)
		})
	}
}
