package acpasr

import (
	"encoding/json"
	"flag"
	"sync"
	"testing"
)

// poisoning says dead members and lent frame copies are poisoned (newSlab,
// frameTape.lend): in a test binary, unless it runs benchmarks, which
// measure the engine as it runs outside tests.
var poisoning = sync.OnceValue(func() bool {
	if !testing.Testing() {
		return false
	}
	f := flag.Lookup("test.bench")
	return f == nil || f.Value.String() == ""
})

// Poisoning says whether a translator poisons what it lends the engine
// (acpv1's rewritten frame once it is mapped), as the engine poisons what
// it lends its objects: the same switch, so that a benchmark measures
// neither.
func Poisoning() bool { return poisoning() }

// The engine keeps nothing of a frame's bytes once the call that maps it
// has returned (Session.CopiesFrames): the values read from a frame alias
// its bytes (frameTape.lend), so what a body or a pending request keeps
// past the frame is copied where it is kept (own, ownAll, keep) or decoded.

// own is a copy of v that outlives v's frame (nil stays nil).
func own(v json.RawMessage) json.RawMessage {
	if v == nil {
		return nil
	}
	return append(make(json.RawMessage, 0, len(v)), v...)
}

// ownAll is own of every item, in one allocation for their bytes.
func ownAll(items []json.RawMessage) []json.RawMessage {
	if items == nil {
		return nil
	}
	n := 0
	for _, x := range items {
		n += len(x)
	}
	buf := make([]byte, 0, n)
	out := make([]json.RawMessage, len(items))
	for i, x := range items {
		if x == nil {
			continue
		}
		l := len(buf)
		buf = append(buf, x...)
		out[i] = buf[l:len(buf):len(buf)]
	}
	return out
}
