package acpv2

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
// prepares each batch while the one before is mapped: pluginwire.Preparer),
// driven with two batches in flight as the offline feeders drive it and
// one at a time, writes exactly the outputs of the mapper called in this
// process, over the fixtures and the malformed corpus.
func TestServedSameAsInProcess(t *testing.T) {
	if _, ok := any(New()).(sdk.Mapper); !ok {
		t.Fatal("not a mapper")
	}
	sess, err := New().Start(context.Background(), startReq(""))
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
		"turn":      loadFrames(t, "turn"),
		"full":      loadFrames(t, "full"),
		"malformed": mappertest.Malformed(base),
	}
	for name, frames := range corpora {
		for _, config := range []string{"", `{"checkSchema":false}`} {
			want := mappertest.Run(t, New(), startReq(config), frames, 0)
			for _, n := range []int{1, 5, 64} {
				for _, pipelined := range []bool{false, true} {
					got := mappertest.MapServed(t, m, startReq(config), frames, n, pipelined)
					if reflect.DeepEqual(mappertest.NormalOutputs(want), got) {
						continue
					}
					t.Fatalf("%s, config %q, batches of %d, pipelined %v: served outputs differ (-in process +served):\n%s",
						name, config, n, pipelined, cmp.Diff(want, got))
				}
			}
		}
	}
}
