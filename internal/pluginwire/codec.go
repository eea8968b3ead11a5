package pluginwire

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
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
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("failed to unmarshal, message is %T, want proto.Message", v)
	}
	buf := data.MaterializeToBuffer(sharedPool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

// codecServerOption and codecCallOption put protoCodec on a plugin
// connection's server and client.
var (
	codecServerOption = grpc.ForceServerCodecV2(protoCodec{})
	codecCallOption   = grpc.ForceCodecV2(protoCodec{})
)
