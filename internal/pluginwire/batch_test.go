package pluginwire

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
)

// TestEncodedRequestSameAsProto: a packed batch's request messages as
// encodeRequests writes them (and the codec hands them to gRPC) are the
// bytes proto.Marshal writes for the PackedBatch requests of the same
// blocks, as many, for a batch split into several messages too.
func TestEncodedRequestSameAsProto(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	cases := map[string][]sdk.Frame{"edges": edgeFrames(), "empty": nil,
		"one empty line": {{Kind: sdk.KindLine, Seq: 1}}}
	for i := range 10 {
		cases["random"+string(rune('a'+i))] = randomFrames(r, 1+r.IntN(600))
	}
	for name, frames := range cases {
		blocks, _ := packedFrames(nil, frames)
		enc := encodeRequests(frames)
		if len(enc.msgs) != len(blocks) {
			t.Fatalf("%s: %d messages, %d blocks", name, len(enc.msgs), len(blocks))
		}
		for i, b := range blocks {
			want, err := proto.Marshal(&pb.MapRequest{Msg: &pb.MapRequest_Packed{Packed: &pb.PackedBatch{Frames: b}}})
			if err != nil {
				t.Fatal(err)
			}
			data, err := protoCodec{}.Marshal(&enc.msgs[i])
			if err != nil {
				t.Fatal(err)
			}
			got := data.Materialize()
			data.Free()
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, message %d: %d bytes encoded, proto.Marshal %d", name, i, len(got), len(want))
			}
		}
		enc.buf.Free()
	}
}

// TestPackedBoundHolds: the buffer encodeRequests takes from the pool holds
// the whole encoding (it is the one handed to gRPC, not a larger copy).
func TestPackedBoundHolds(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	cases := [][]sdk.Frame{edgeFrames(), nil}
	for range 20 {
		cases = append(cases, randomFrames(r, 1+r.IntN(300)))
	}
	for i, frames := range cases {
		_, b := packedFramesRoom(nil, frames, requestRoom)
		if bound := packedBound(frames); len(b) > bound {
			t.Fatalf("case %d: %d bytes encoded, bound %d", i, len(b), bound)
		}
	}
}

// TestBatchSameAsSubmit: a Batch submitted to several sessions (packed or
// not, the plugin legacy or not) gives each the outputs Submit of its
// frames gives, and is encoded once for all the packed ones.
func TestBatchSameAsSubmit(t *testing.T) {
	frames := append(randomFrames(rand.New(rand.NewPCG(15, 16)), 300), edgeFrames()...)
	for i := range frames {
		frames[i].Seq = uint64(i + 1)
	}
	ctx := context.Background()
	var want []sdk.Output
	for _, legacy := range []bool{false, true} {
		m, _ := serveCounted(t, echoMapper{copies: true}, legacy)
		if _, err := m.Info(ctx); err != nil {
			t.Fatal(err)
		}
		got := mapOver(t, m, frames, true)
		if want == nil {
			want = got
		} else if d := cmp.Diff(want, got, outputCmp...); d != "" {
			t.Fatalf("legacy %v: Submit's outputs differ:\n%.2000s", legacy, d)
		}
	}
	var sessions []*remoteSession
	var counts []*wireCounts
	for _, legacy := range []bool{false, false, true} {
		m, c := serveCounted(t, echoMapper{copies: !legacy}, legacy)
		if _, err := m.Info(ctx); err != nil {
			t.Fatal(err)
		}
		s, err := m.Start(ctx, sdk.StartRequest{Connection: "c-1", Mode: sdk.ModeRebuild})
		if err != nil {
			t.Fatal(err)
		}
		sessions, counts = append(sessions, s.(*remoteSession)), append(counts, c)
	}
	outs := make([][]sdk.Output, len(sessions))
	encodes := 0
	for rest := frames; len(rest) > 0; {
		n := min(7, len(rest))
		b := NewBatch(rest[:n])
		for _, s := range sessions {
			if err := s.SubmitBatch(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		if b.enc.buf != nil {
			encodes++
		}
		b.Release()
		for i, s := range sessions {
			o, err := s.Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			outs[i] = append(outs[i], o...)
		}
		rest = rest[n:]
	}
	for i, s := range sessions {
		o, err := s.Finish(ctx, "eof")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, append(outs[i], o...), outputCmp...); d != "" {
			t.Errorf("session %d: SubmitBatch's outputs differ from Submit's:\n%.2000s", i, d)
		}
	}
	if batches := (len(frames) + 6) / 7; encodes != batches {
		t.Errorf("%d batches encoded, of %d", encodes, batches)
	}
	for i, c := range counts {
		c.mu.Lock()
		if legacy := i == 2; (c.packed == 0) != legacy || (c.batches == 0) == legacy {
			t.Errorf("session %d: %d packed batches, %d v1 batches", i, c.packed, c.batches)
		}
		c.mu.Unlock()
	}
}
