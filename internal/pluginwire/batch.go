package pluginwire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/acptap/acptap/sdk"
)

// A packed batch goes to the plugin as the bytes of its request message,
// written once, straight into a buffer of the pool that gRPC writes to the
// connection and then frees (encodedRequest): proto's marshal would copy
// every frame's bytes once more. A Batch sent to several sessions (the
// feeders of a rebuild map the same frames) is encoded once for all.

// requestRoom is the most bytes of a packed request's head: MapRequest's
// packed field and PackedBatch's frames field, each a tag and a length.
const requestRoom = 2 * (1 + binary.MaxVarintLen64)

// encodedRequest is one MapRequest message as its bytes, a view of an
// encoded batch; protoCodec.Marshal hands gRPC a reference of its own.
type encodedRequest struct {
	buf        mem.Buffer
	start, end int
}

// data is a new reference to the message's bytes, for gRPC to free.
func (e *encodedRequest) data() mem.BufferSlice {
	return mem.BufferSlice{e.buf.Slice(e.start, e.end)}
}

// encodedBatch is a batch's request messages, in one buffer of the pool
// (buf, the reference the batch holds).
type encodedBatch struct {
	buf  mem.Buffer
	msgs []encodedRequest
}

// encodeRequests encodes frames as packed batch request messages, the
// bytes proto.Marshal writes for each (TestEncodedRequestSameAsProto).
func encodeRequests(frames []sdk.Frame) encodedBatch {
	p := sharedPool.Get(packedBound(frames))
	blocks, b := packedFramesRoom((*p)[:0], frames, requestRoom)
	if cap(b) != cap(*p) {
		sharedPool.Put(p) // (the bound fell short: b is a larger buffer of its own)
		p = &b
	}
	*p = b
	off := make([][2]int, len(blocks))
	at := 0
	for i, blk := range blocks {
		// The block follows its room; the head is written right before it.
		block := blk[requestRoom:]
		var head [requestRoom]byte
		h := head[:0]
		inner := 0
		if len(block) > 0 { // (proto writes no empty bytes field)
			inner = 1 + protowire.SizeBytes(len(block))
		}
		h = protowire.AppendTag(h, 4, protowire.BytesType) // MapRequest.packed
		h = protowire.AppendVarint(h, uint64(inner))
		if len(block) > 0 {
			h = protowire.AppendTag(h, 1, protowire.BytesType) // PackedBatch.frames
			h = protowire.AppendVarint(h, uint64(len(block)))
		}
		start := at + requestRoom - len(h)
		copy(b[start:], h)
		off[i] = [2]int{start, at + len(blk)}
		at += len(blk)
	}
	e := encodedBatch{buf: mem.NewBuffer(p, sharedPool), msgs: make([]encodedRequest, len(blocks))}
	for i, o := range off {
		e.msgs[i] = encodedRequest{buf: e.buf, start: o[0], end: o[1]}
	}
	return e
}

// packedBound is at least the bytes packedFramesRoom writes for frames
// with requestRoom: each part's data and at most 64 bytes of numbers and
// flags, its strings, and a block's room (a block holds a part at least).
func packedBound(frames []sdk.Frame) int {
	n := requestRoom
	for i := range frames {
		f := &frames[i]
		data := len(f.Data)
		strs := len(f.ReplyToMethod) + len(f.Gap.Reason)
		if f.Session != nil {
			data = 0
			for _, l := range f.Session.Prior {
				data += len(l) + 1
			}
			strs += len(f.Session.ID)
		}
		parts := max(1, (data+PartSize-1)/PartSize)
		n += data + parts*(64+strs+requestRoom)
	}
	return n
}

// Batch is a batch of frames for several sessions: a session that sends
// packed batches sends the request messages encoded once, by the first
// SubmitBatch, and the others the same bytes.
type Batch struct {
	frames []sdk.Frame
	once   sync.Once
	enc    encodedBatch
}

// NewBatch returns the batch of frames; they are not to change while it is
// in use (until Release).
func NewBatch(frames []sdk.Frame) *Batch { return &Batch{frames: frames} }

// Frames are the batch's frames.
func (b *Batch) Frames() []sdk.Frame { return b.frames }

func (b *Batch) encoded() encodedBatch {
	b.once.Do(func() { b.enc = encodeRequests(b.frames) })
	return b.enc
}

// Release gives the encoded messages' buffer back once every session has
// sent them (what gRPC has still to write it holds on its own); the batch
// is not to be submitted again.
func (b *Batch) Release() {
	b.once.Do(func() {}) // (none encoded it: nothing to free)
	if b.enc.buf != nil {
		b.enc.buf.Free()
		b.enc = encodedBatch{}
	}
}

// SubmitBatch is Submit of the batch's frames, sent as the batch's
// encoded messages when the session sends packed batches.
func (s *remoteSession) SubmitBatch(ctx context.Context, b *Batch) error {
	if !s.packed {
		return s.Submit(ctx, b.frames)
	}
	if s.done {
		return errors.New("map: session finished")
	}
	s.startRecv()
	enc := b.encoded()
	for i := range enc.msgs {
		if err := s.stream.SendMsg(&enc.msgs[i]); err != nil {
			return fmt.Errorf("map send: %w", err)
		}
	}
	s.pending = append(s.pending, len(enc.msgs))
	return nil
}
