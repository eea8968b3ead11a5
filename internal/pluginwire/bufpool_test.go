package pluginwire

import (
	"bytes"
	"testing"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// TestBufferPool: Get returns the length asked for, in a buffer of the
// tier's capacity (the smallest power of two from 256 B that holds it),
// reused after Put; lengths above the largest tier and foreign buffers are
// not pooled.
func TestBufferPool(t *testing.T) {
	p := new(bufferPool)
	for _, n := range []int{0, 1, 255, 256, 257, 4095, 4096, 4097, 80_000, 1 << 20, 1<<maxPooledShift - 1, 1 << maxPooledShift} {
		b := p.Get(n)
		if len(*b) != n {
			t.Fatalf("Get(%d): len %d", n, len(*b))
		}
		want := 1 << minPooledShift
		for want < n {
			want <<= 1
		}
		if cap(*b) != want {
			t.Fatalf("Get(%d): cap %d, want %d", n, cap(*b), want)
		}
		for i := range *b {
			(*b)[i] = 0xAA
		}
		p.Put(b)
		c := p.Get(n)
		if len(*c) != n || cap(*c) != want {
			t.Fatalf("Get(%d) after Put: len %d cap %d", n, len(*c), cap(*c))
		}
	}
	big := p.Get(1<<maxPooledShift + 1)
	if len(*big) != 1<<maxPooledShift+1 {
		t.Fatalf("large Get: len %d", len(*big))
	}
	p.Put(big) // dropped, not pooled
	odd := make([]byte, 10, 1000)
	p.Put(&odd) // not a tier's capacity: dropped
	if b := p.Get(1000); cap(*b) != 1024 {
		t.Fatalf("Get(1000) after a foreign Put: cap %d", cap(*b))
	}
}

// TestProtoCodecSameAsProto: the plugin connection's codec writes the bytes
// proto.Marshal writes, below and above the pooling threshold, and reads
// them back, from one buffer or from a message split over several (as
// gRPC hands over one received in several HTTP/2 frames).
func TestProtoCodecSameAsProto(t *testing.T) {
	for _, n := range []int{0, 10, 1000, 5000, 200_000} {
		frames := []sdk.Frame{{Kind: sdk.KindLine, Seq: 1, Dir: sdk.A2C, Data: bytes.Repeat([]byte("x"), n)}}
		blocks, _ := packedFrames(nil, frames)
		m := &pb.MapRequest{Msg: &pb.MapRequest_Packed{Packed: &pb.PackedBatch{Frames: blocks[0]}}}
		want, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		data, err := protoCodec{}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got := data.Materialize()
		data.Free()
		if !bytes.Equal(got, want) {
			t.Fatalf("%d bytes of data: the codec wrote %d bytes, proto.Marshal %d", n, len(got), len(want))
		}
		for _, split := range []int{len(want), 7} {
			var in mem.BufferSlice
			for b := want; len(b) > 0; {
				k := min(split, len(b))
				in = append(in, mem.SliceBuffer(b[:k]))
				b = b[k:]
			}
			var back pb.MapRequest
			if err := (protoCodec{}).Unmarshal(in, &back); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(&back, m) {
				t.Fatalf("%d bytes of data, parts of %d: read back differs", n, split)
			}
		}
	}
	if _, err := (protoCodec{}).Marshal("not a message"); err == nil {
		t.Fatal("Marshal of a string: no error")
	}
}
