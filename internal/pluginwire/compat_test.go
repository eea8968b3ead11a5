package pluginwire

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
)

// TestRemovedFieldsAreIgnored: Start.prior (6) and Output.stream (8) left
// the wire (reserved in mapper.proto). A peer built before still sends
// them; they decode as unknown fields and change nothing, so wire version
// 1 still holds between old and new builds.
func TestRemovedFieldsAreIgnored(t *testing.T) {
	var out []byte
	out = protowire.AppendTag(out, 1, protowire.VarintType)
	out = protowire.AppendVarint(out, uint64(pb.OutputKind_OUTPUT_KIND_ASR_RECORD))
	out = protowire.AppendTag(out, 3, protowire.BytesType)
	out = protowire.AppendBytes(out, []byte(`{"type":"_acme/progress"}`))
	out = protowire.AppendTag(out, 8, protowire.BytesType)
	out = protowire.AppendString(out, "_acme/progress")
	var o pb.Output
	if err := proto.Unmarshal(out, &o); err != nil {
		t.Fatalf("an old plugin's output with field 8: %v", err)
	}
	var asm outputAssembler
	if outs := asm.add(&o, nil); len(outs) != 1 || outs[0].Kind != sdk.ASRRecord || string(outs[0].JSON) != `{"type":"_acme/progress"}` {
		t.Errorf("old output decoded as %+v", outs)
	}

	var prior []byte
	prior = protowire.AppendTag(prior, 1, protowire.BytesType)
	prior = protowire.AppendString(prior, "s1")
	var start []byte
	start = protowire.AppendTag(start, 2, protowire.BytesType)
	start = protowire.AppendString(start, "c-1")
	start = protowire.AppendTag(start, 5, protowire.BytesType)
	start = protowire.AppendString(start, "record")
	start = protowire.AppendTag(start, 6, protowire.BytesType)
	start = protowire.AppendBytes(start, prior)
	var s pb.Start
	if err := proto.Unmarshal(start, &s); err != nil {
		t.Fatalf("an old host's start with field 6: %v", err)
	}
	if r := startFromProto(&s); r.Connection != "c-1" || r.Mode != "record" {
		t.Errorf("old start decoded as %+v", r)
	}
}
