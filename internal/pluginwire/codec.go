package pluginwire

import (
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
)

// protoCodec is gRPC's proto codec (google.golang.org/grpc/encoding/proto)
// taking its buffers from sharedPool instead of the process's default pool,
// forced on both ends of a plugin connection (grpc.ForceServerCodecV2, the
// call option grpc.ForceCodecV2): the codec marshals a batch or an answer
// into a pooled buffer and joins a message received in several HTTP/2
// frames into one, and only mem.DefaultBufferPool can be set for it
// otherwise — for the whole process, at init. The bytes on the wire are the
// proto codec's.
type protoCodec struct{}

var _ encoding.CodecV2 = protoCodec{}

func (protoCodec) Name() string { return "proto" }

func (protoCodec) Marshal(v any) (mem.BufferSlice, error) {
	if e, ok := v.(*encodedRequest); ok {
		return e.data(), nil // a packed batch's request, written by encodeRequests
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("proto: failed to marshal, message is %T, want proto.Message", v)
	}
	size := proto.Size(m)
	opts := proto.MarshalOptions{UseCachedSize: true} // the size was just computed
	if mem.IsBelowBufferPoolingThreshold(size) {
		b, err := opts.Marshal(m)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	buf := sharedPool.Get(size)
	if _, err := opts.MarshalAppend((*buf)[:0], m); err != nil {
		sharedPool.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, sharedPool)}, nil
}

func (protoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*inPlaceRequest); ok {
		return r.unmarshal(data)
	}
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("failed to unmarshal, message is %T, want proto.Message", v)
	}
	buf := data.MaterializeToBuffer(sharedPool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

// inPlaceRequest is a MapRequest received for a session that copies what it
// keeps of its frames (FrameCopier). A packed batch, the message of nearly
// every request, is not decoded by proto (which copies the block out of the
// received buffer: ~300 B a frame allocated, a fifth of the plugin's): its
// block aliases the received buffer, held until free, once the batch is
// mapped and answered. Any other message is decoded into req as before.
//
// own: the session may keep its frames' bytes (not a FrameCopier): the
// message is copied out of gRPC's buffers once, into memory of its own that
// the frames alias (no buf), instead of joined into a pooled buffer and
// then its block copied out by proto.
type inPlaceRequest struct {
	own bool
	req pb.MapRequest
	// packed is a packed batch's block (req is empty), aliasing buf (or,
	// own, a copy of the message).
	packed []byte
	buf    mem.Buffer
}

func (r *inPlaceRequest) unmarshal(data mem.BufferSlice) error {
	if r.own {
		b := data.Materialize()
		if block, ok := packedBlock(b); ok {
			r.packed = block
			return nil
		}
		return proto.Unmarshal(b, &r.req)
	}
	buf := data.MaterializeToBuffer(sharedPool)
	if block, ok := packedBlock(buf.ReadOnlyData()); ok {
		r.packed, r.buf = block, buf
		return nil
	}
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), &r.req)
}

// inPlace reports whether the request is a packed batch held in place.
func (r *inPlaceRequest) inPlace() bool { return r.buf != nil }

// isPacked reports whether the request is a packed batch (in packed).
func (r *inPlaceRequest) isPacked() bool { return r.buf != nil || r.own && r.packed != nil }

// free gives the received buffer back (r may be nil); the block is not to
// be read again.
func (r *inPlaceRequest) free() {
	if r != nil && r.buf != nil {
		if testing.Testing() {
			// In a test binary, a session that kept a frame's bytes (claiming
			// FrameCopier wrongly) then reads 0xff, not JSON: the served tests
			// comparing outputs with in-process mapping (acpv2's
			// TestServedSameAsInProcess) catch it. This is the last reference.
			b := r.buf.ReadOnlyData()
			for i := range b {
				b[i] = 0xff
			}
		}
		r.buf.Free()
		r.buf, r.packed = nil, nil
	}
}

// packedBlock returns the frames block of b when b is exactly a MapRequest
// holding a PackedBatch (one field, the frames at most, nothing else), as
// the host encodes it; anything else (other fields, repeated or unknown
// ones) is left to proto. TestPackedBlockSameAsProto compares the two.
func packedBlock(b []byte) ([]byte, bool) {
	msg, ok := onlyBytesField(b, 4) // MapRequest.packed
	if !ok {
		return nil, false
	}
	if len(msg) == 0 {
		return msg[:0:0], true // an empty PackedBatch: no frames
	}
	block, ok := onlyBytesField(msg, 1) // PackedBatch.frames
	return block[:len(block):len(block)], ok
}

// onlyBytesField returns the value of b's one field when b is exactly one
// length-delimited field numbered num.
func onlyBytesField(b []byte, num protowire.Number) ([]byte, bool) {
	n, typ, l := protowire.ConsumeTag(b)
	if l < 0 || n != num || typ != protowire.BytesType {
		return nil, false
	}
	v, m := protowire.ConsumeBytes(b[l:])
	if m < 0 || l+m != len(b) {
		return nil, false
	}
	return v, true
}

// codecServerOption and codecCallOption put protoCodec on a plugin
// connection's server and client.
var (
	codecServerOption = grpc.ForceServerCodecV2(protoCodec{})
	codecCallOption   = grpc.ForceCodecV2(protoCodec{})
)
