package pluginwire

import (
	"bytes"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
)

// checkInPlace decodes b as protoCodec decodes a request for a
// FrameCopier (inPlaceRequest) and for a session that keeps its frames'
// bytes (own), and as proto does, and fails unless they are the same
// message: a packed batch taken as a block only when proto reads b as
// exactly that batch; an owned block a copy, not gRPC's buffer.
func checkInPlace(t testing.TB, b []byte) {
	t.Helper()
	var want pb.MapRequest
	werr := proto.Unmarshal(b, &want)
	for _, own := range []bool{false, true} {
		ip := &inPlaceRequest{own: own}
		in := bytes.Clone(b)
		err := protoCodec{}.Unmarshal(mem.BufferSlice{mem.SliceBuffer(in)}, ip)
		if (err != nil) != (werr != nil) {
			t.Fatalf("%x, own %v: in place: %v, proto: %v", b, own, err, werr)
		}
		if err != nil {
			continue
		}
		if own {
			for i := range in {
				in[i] = 0xff // gRPC's buffer, reused
			}
		}
		got := &ip.req
		if ip.isPacked() {
			if ip.req.Msg != nil {
				t.Fatalf("%x, own %v: in place, and decoded as %v", b, own, &ip.req)
			}
			got = &pb.MapRequest{Msg: &pb.MapRequest_Packed{Packed: &pb.PackedBatch{Frames: ip.packed}}}
			if len(ip.packed) > 0 && cap(ip.packed) != len(ip.packed) {
				t.Fatalf("%x, own %v: the block's capacity runs past it", b, own)
			}
		}
		if ip.isPacked() && ip.inPlace() == own {
			t.Fatalf("%x, own %v: packed %v, held in gRPC's buffer %v", b, own, ip.isPacked(), ip.inPlace())
		}
		if !proto.Equal(got, &want) {
			t.Fatalf("%x, own %v: decoded as %v, proto: %v", b, own, got, &want)
		}
		ip.free()
	}
}

// TestPackedBlockSameAsProto: a request decoded in place (packedBlock) is
// the message proto decodes, and only a packed batch and nothing else is
// taken in place.
func TestPackedBlockSameAsProto(t *testing.T) {
	enc := func(m *pb.MapRequest) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	packed := func(block []byte) []byte {
		return enc(&pb.MapRequest{Msg: &pb.MapRequest_Packed{Packed: &pb.PackedBatch{Frames: block}}})
	}
	block := bytes.Repeat([]byte{2, 1, 0, 7, 0, 3, 'a', 'b', 'c'}, 100)
	inPlace := map[string][]byte{
		"packed":       packed(block),
		"packed, tiny": packed([]byte{1}),
		"packed, none": packed(nil),
	}
	other := map[string][]byte{
		"start":        enc(&pb.MapRequest{Msg: &pb.MapRequest_Start{Start: &pb.Start{Connection: "c-1", WireFeatures: []string{FeaturePacked}}}}),
		"batch":        enc(&pb.MapRequest{Msg: &pb.MapRequest_Batch{Batch: &pb.Batch{Frames: []*pb.Frame{{Seq: 1, Data: []byte("{}")}}}}}),
		"finish":       enc(&pb.MapRequest{Msg: &pb.MapRequest_Finish{Finish: &pb.Finish{Reason: "eof"}}}),
		"empty":        {},
		"packed twice": append(packed([]byte("ab")), packed([]byte("cd"))...),
		"packed, then finish": append(packed([]byte("ab")),
			enc(&pb.MapRequest{Msg: &pb.MapRequest_Finish{Finish: &pb.Finish{Reason: "eof"}}})...),
		"packed with an unknown field": protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType),
			protowire.AppendVarint(protowire.AppendTag(protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("ab")), 9, protowire.VarintType), 5)),
		"frames twice": protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType),
			protowire.AppendBytes(protowire.AppendTag(protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("ab")), 1, protowire.BytesType), []byte("cd"))),
		"truncated":          packed(block)[:50],
		"packed as a varint": protowire.AppendVarint(protowire.AppendTag(nil, 4, protowire.VarintType), 3),
	}
	for name, b := range inPlace {
		checkInPlace(t, b)
		if _, ok := packedBlock(b); !ok {
			t.Errorf("%s: not taken in place", name)
		}
	}
	for name, b := range other {
		checkInPlace(t, b)
		if _, ok := packedBlock(b); ok {
			t.Errorf("%s: taken in place", name)
		}
	}
}

func FuzzPackedBlock(f *testing.F) {
	f.Add([]byte{0x22, 3, 0x0a, 1, 'x'})
	f.Add([]byte{0x22, 0})
	f.Add([]byte{0x22, 5, 0x0a, 1, 'x', 0x48, 1})
	f.Add([]byte{0x1a, 2, 0x0a, 0})
	f.Fuzz(func(t *testing.T, b []byte) { checkInPlace(t, b) })
}
