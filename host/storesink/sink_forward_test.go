package storesink

import (
	"testing"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/sdk"
)

type forwarded struct{ sessions, events []string }

func (f *forwarded) Event(session string, event []byte) {
	f.sessions = append(f.sessions, session)
	f.events = append(f.events, string(event))
}

// TestSinkForwardsWrittenAEPEvents: AEP events go to the forwarder
// after their JSONL line is written; ASR records and diagnostics do not.
func TestSinkForwardsWrittenAEPEvents(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var f forwarded
	s := New(st, nil)
	s.Forward = &f
	s.Output("aep", false, sdk.Output{Kind: sdk.AEPEvent, Session: "s1", JSON: []byte(`{"n":1}`)})
	s.Output("acpv2", true, sdk.Output{Kind: sdk.ASRHeader, Session: "s1", JSON: []byte(`{"type":"header"}`)})
	s.Output("aep", false, sdk.Diag(sdk.SeverityInfo, "s1", "d", ""))
	s.Output("aep", false, sdk.Output{Kind: sdk.AEPEvent, Session: "", JSON: []byte(`{"n":2}`)})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(f.events) != 1 || f.events[0] != `{"n":1}` || f.sessions[0] != "s1" {
		t.Fatalf("forwarded %v %v", f.sessions, f.events)
	}
}
