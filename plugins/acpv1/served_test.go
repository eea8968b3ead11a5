package acpv1

import (
	"context"
	"reflect"
	"testing"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
	"github.com/google/go-cmp/cmp"
)

// TestServedSameAsInProcess: the plugin served over gRPC (the server
// prepares each batch's v1 lines — tape, v1 schema check — beside its Map:
// pluginwire.Preparer), driven one batch at a time and with two batches in
// flight, writes exactly the outputs of the mapper called in this process
// (which prepares nothing), live and converted, with the schema check on
// and off, over the fixtures, the fast path's lines (malformed, escaped,
// nonconforming), the malformed corpus and the benchmark's log.
func TestServedSameAsInProcess(t *testing.T) {
	sess, err := New().Start(context.Background(), live)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sess.(pluginwire.Preparer); !ok {
		t.Fatalf("%T does not prepare batches", sess)
	}
	m, stop, err := pluginwire.ServeInProcess(New(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	corpora := map[string][]sdk.Frame{
		"malformed": mappertest.Malformed(base),
		"bench":     benchLog(40),
	}
	for _, fx := range []map[string]string{kindFixtures, lossFixtures} {
		for name, text := range fx {
			corpora[name] = parseFrames(t, text)
		}
	}
	lines := []string{initReq, initResp, newReq, newResp, prompt(2, "hi")}
	for _, l := range fastPathLines {
		lines = append(lines, l, upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}`))
	}
	corpora["fastPathLines"] = parseFrames(t, wire(lines...))
	for name, frames := range corpora {
		for _, mode := range []sdk.Mode{sdk.ModeRecord, sdk.ModeConvert} {
			for _, config := range []string{"", `{"checkSchema":false}`} {
				req := startReq(mode, config)
				want := mappertest.NormalOutputs(mappertest.Run(t, New(), req, frames, 0))
				for _, n := range []int{1, 5, 64} {
					for _, pipelined := range []bool{false, true} {
						got := mappertest.MapServed(t, m, req, frames, n, pipelined)
						if !reflect.DeepEqual(want, got) {
							t.Fatalf("%s, %v, config %q, batches of %d, pipelined %v: served outputs differ (-in process +served):\n%s",
								name, mode, config, n, pipelined, cmp.Diff(want, got))
						}
					}
				}
			}
		}
	}
}
