package pluginwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
)

// FeaturePacked is the transport feature of packed batches and answers: a
// batch's frames in one PackedBatch block instead of one Frame message
// each, and an answer's outputs in one MapResponse.packed_outputs block.
// A plugin built with this SDK lists it in InfoResponse.wire_features; the
// host sends packed batches only to a plugin that listed it, and lists it in
// Start.wire_features, without which the plugin answers with Output
// messages. An older plugin or host lists nothing and sees wire version 1's
// messages only (docs/plugin-protocol.md).
const FeaturePacked = "packed/1"

// The packed encoding carries exactly what the Frame and Output messages
// carry, part for part and in the same order, so that both ends assemble
// the same frames and outputs whichever they were sent as (the
// differential tests compare the two). All integers are unsigned varints
// unless said; a string or byte run is a varint length and the bytes.
//
// A frame part:
//
//	kind    byte (sdk.FrameKind)
//	dir     byte (sdk.Direction)
//	flags   byte: 1 more (parts follow), 2 extra fields follow the data,
//	        every other bit zero
//	seq
//	at      zig-zag varint: at_unix_nano minus the previous part's in the
//	        block (the first: minus 0)
//	data    byte run
//	extra   (flag 2) a mask, then for each bit set, in this order:
//	        1 part; 2 batch_index, batch_size; 4 reply_to_seq and
//	        reply_to_method (string); 8 gap_frames, gap_bytes, gap_reason
//	        (string); 16 session_id (string), session_connections
//
// An output part:
//
//	kind    byte (sdk.OutputKind)
//	flags   byte: 1 json_more, 2 diagnostic fields follow, every other
//	        bit zero
//	session string
//	json    byte run
//	seqs    a count, then each frame seq as a zig-zag varint of its
//	        difference to the one before (the first: to 0)
//	diag    (flag 2) severity byte, summary (string), detail (string)
const (
	pkMore  = 1
	pkExtra = 2

	pxPart    = 1
	pxBatch   = 2
	pxReply   = 4
	pxGap     = 8
	pxSession = 16
	pxAll     = pxPart | pxBatch | pxReply | pxGap | pxSession

	poMore = 1
	poDiag = 2
)

// keepBuffer is the largest encode buffer a session keeps for its next
// batch or answer (a larger one, made for huge lines or values, is dropped).
const keepBuffer = 4 << 20

// errPacked is the error of a malformed packed block.
var errPacked = errors.New("malformed packed block")

// packedFramesRoom encodes frames as packed batch messages: each message
// one block, split where toProtoFrames' parts would be split into messages
// (messageParts). The blocks are appended to buf and alias it, each after
// room bytes, where the request message's head is written
// (encodeRequests): each of blocks is the room and then the block.
func packedFramesRoom(buf []byte, frames []sdk.Frame, room int) (blocks [][]byte, _ []byte) {
	buf = append(buf[:0], make([]byte, room)...)
	start, size, prevAt := room, 0, int64(0)
	for i := range frames {
		f := &frames[i]
		data := f.Data
		var sessionID string
		var sessionConns uint32
		if f.Session != nil {
			sessionID, sessionConns = f.Session.ID, uint32(f.Session.Connections)
			data = joinLines(f.Session.Prior)
		}
		var at int64
		if !f.At.IsZero() {
			at = f.At.UnixNano()
		}
		part := uint32(0)
		for {
			n := min(len(data), PartSize)
			// The same rule as messageParts: a message holds at least one
			// part, and parts while their sizes stay within the budget.
			if len(buf) > start && size+n > maxBytesPerMessage {
				blocks = append(blocks, buf[start-room:len(buf):len(buf)])
				buf = append(buf, make([]byte, room)...)
				start, size, prevAt = len(buf), 0, 0
			}
			size += n + 64
			more := n < len(data)
			var mask uint64
			if part != 0 {
				mask |= pxPart
			}
			if f.BatchIndex != 0 || f.BatchSize != 0 {
				mask |= pxBatch
			}
			if f.ReplyTo != 0 || f.ReplyToMethod != "" {
				mask |= pxReply
			}
			if f.Gap.Frames != 0 || f.Gap.Bytes != 0 || f.Gap.Reason != "" {
				mask |= pxGap
			}
			if sessionID != "" || sessionConns != 0 {
				mask |= pxSession
			}
			flags := byte(0)
			if more {
				flags |= pkMore
			}
			if mask != 0 {
				flags |= pkExtra
			}
			buf = append(buf, byte(f.Kind), byte(f.Dir), flags)
			buf = binary.AppendUvarint(buf, f.Seq)
			buf = binary.AppendVarint(buf, at-prevAt)
			prevAt = at
			buf = binary.AppendUvarint(buf, uint64(n))
			buf = append(buf, data[:n]...)
			if mask != 0 {
				buf = binary.AppendUvarint(buf, mask)
				if mask&pxPart != 0 {
					buf = binary.AppendUvarint(buf, uint64(part))
				}
				if mask&pxBatch != 0 {
					buf = binary.AppendUvarint(buf, uint64(uint32(f.BatchIndex)))
					buf = binary.AppendUvarint(buf, uint64(uint32(f.BatchSize)))
				}
				if mask&pxReply != 0 {
					buf = binary.AppendUvarint(buf, f.ReplyTo)
					buf = appendString(buf, f.ReplyToMethod)
				}
				if mask&pxGap != 0 {
					buf = binary.AppendUvarint(buf, f.Gap.Frames)
					buf = binary.AppendUvarint(buf, f.Gap.Bytes)
					buf = appendString(buf, f.Gap.Reason)
				}
				if mask&pxSession != 0 {
					buf = appendString(buf, sessionID)
					buf = binary.AppendUvarint(buf, uint64(sessionConns))
				}
			}
			data = data[n:]
			if !more {
				break
			}
			part++
		}
	}
	if len(buf) > start || len(blocks) == 0 {
		blocks = append(blocks, buf[start-room:len(buf):len(buf)])
	}
	return blocks, buf
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// packedReader reads a packed block; the first error sticks.
type packedReader struct {
	b   []byte
	err error
}

func (r *packedReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at %d bytes before its end", errPacked, what, len(r.b))
	}
	r.b = nil
}

func (r *packedReader) byte1(what string) byte {
	if len(r.b) == 0 {
		r.fail(what)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *packedReader) uvarint(what string) uint64 {
	if len(r.b) > 0 && r.b[0] < 0x80 { // most are one byte
		v := uint64(r.b[0])
		r.b = r.b[1:]
		return v
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *packedReader) varint(what string) int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *packedReader) uint32(what string) uint32 {
	v := r.uvarint(what)
	if v > 1<<32-1 {
		r.fail(what + " out of range")
		return 0
	}
	return uint32(v)
}

// run returns the next n-byte run (aliasing the block).
func (r *packedReader) run(what string) []byte {
	n := r.uvarint(what)
	if n > uint64(len(r.b)) {
		r.fail(what + " longer than the block")
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *packedReader) str(what string) string {
	if b := r.run(what); len(b) > 0 {
		return string(b)
	}
	return ""
}

// addPacked decodes a packed batch block into frames, appended to out, as
// the Frame messages it stands for would be (add). The frames' data alias
// block. A malformed block is an error (out is returned as it was; the
// assembler is not to be used again: the stream ends).
func (a *frameAssembler) addPacked(block []byte, out []sdk.Frame) ([]sdk.Frame, error) {
	r := packedReader{b: block}
	n0 := len(out)
	var m pb.Frame
	prevAt := int64(0)
	for len(r.b) > 0 && r.err == nil {
		kind, dir, flags := r.byte1("frame kind"), r.byte1("frame direction"), r.byte1("frame flags")
		if flags&^(pkMore|pkExtra) != 0 {
			r.fail("unknown frame flags")
			break
		}
		m.Kind, m.Dir = pb.FrameKind(kind), pb.Direction(dir)
		m.More = flags&pkMore != 0
		m.Seq = r.uvarint("frame seq")
		prevAt += r.varint("frame time")
		m.AtUnixNano = prevAt
		m.Data = r.run("frame data")
		m.Part, m.BatchIndex, m.BatchSize = 0, 0, 0
		m.ReplyToSeq, m.ReplyToMethod = 0, ""
		m.GapFrames, m.GapBytes, m.GapReason = 0, 0, ""
		m.SessionId, m.SessionConnections = "", 0
		if flags&pkExtra != 0 {
			mask := r.uvarint("frame fields")
			if mask&^pxAll != 0 {
				r.fail("unknown frame fields")
				break
			}
			if mask&pxPart != 0 {
				m.Part = r.uint32("frame part")
			}
			if mask&pxBatch != 0 {
				m.BatchIndex, m.BatchSize = r.uint32("batch index"), r.uint32("batch size")
			}
			if mask&pxReply != 0 {
				m.ReplyToSeq = r.uvarint("reply seq")
				m.ReplyToMethod = r.str("reply method")
			}
			if mask&pxGap != 0 {
				m.GapFrames, m.GapBytes = r.uvarint("gap frames"), r.uvarint("gap bytes")
				m.GapReason = r.str("gap reason")
			}
			if mask&pxSession != 0 {
				m.SessionId = r.str("session id")
				m.SessionConnections = r.uint32("session connections")
			}
		}
		if r.err != nil {
			break
		}
		out = a.add(&m, out)
	}
	if r.err != nil {
		clear(out[n0:])
		return out[:n0], r.err
	}
	return out, nil
}

// packedOutputs encodes outputs as packed answer blocks, each holding
// what one MapResponse of toProtoOutputs would (the same parts, grouped
// the same way), appended to buf and aliasing it.
func packedOutputs(buf []byte, outs []sdk.Output) (blocks [][]byte, _ []byte) {
	buf = buf[:0]
	start, size := 0, 0
	for i := range outs {
		o := &outs[i]
		data := o.JSON
		for first := true; first || len(data) > 0; first = false {
			n := min(len(data), PartSize)
			cost := n + len(o.Summary) + len(o.Detail) + 64
			if size+cost > responseBudget && len(buf) > start {
				blocks = append(blocks, buf[start:len(buf):len(buf)])
				start, size = len(buf), 0
			}
			size += cost
			diag := o.Severity != 0 || o.Summary != "" || o.Detail != ""
			flags := byte(0)
			if len(data) > n {
				flags |= poMore
			}
			if diag {
				flags |= poDiag
			}
			buf = append(buf, byte(o.Kind), flags)
			buf = appendString(buf, o.Session)
			buf = binary.AppendUvarint(buf, uint64(n))
			buf = append(buf, data[:n]...)
			buf = binary.AppendUvarint(buf, uint64(len(o.FrameSeqs)))
			prev := uint64(0)
			for _, s := range o.FrameSeqs {
				buf = binary.AppendVarint(buf, int64(s-prev))
				prev = s
			}
			if diag {
				buf = append(buf, byte(o.Severity))
				buf = appendString(buf, o.Summary)
				buf = appendString(buf, o.Detail)
			}
			data = data[n:]
		}
	}
	if len(buf) > start || len(blocks) == 0 {
		blocks = append(blocks, buf[start:len(buf):len(buf)])
	}
	return blocks, buf
}

// addPacked decodes a packed answer block into outputs, appended to out,
// as the Output messages it stands for would be (add). The outputs' JSON
// alias block. A malformed block is an error (out is returned as it was;
// the assembler is not to be used again: the stream ends).
func (a *outputAssembler) addPacked(block []byte, out []sdk.Output) ([]sdk.Output, error) {
	r := packedReader{b: block}
	n0 := len(out)
	var m pb.Output
	var seqs []uint64 // one slab for the block's frame seqs
	var lastSession string
	for len(r.b) > 0 && r.err == nil {
		kind, flags := r.byte1("output kind"), r.byte1("output flags")
		if flags&^(poMore|poDiag) != 0 {
			r.fail("unknown output flags")
			break
		}
		m.Kind, m.JsonMore = pb.OutputKind(kind), flags&poMore != 0
		if s := r.run("output session"); string(s) != lastSession {
			lastSession = string(s)
		}
		m.Session = lastSession
		m.Json = r.run("output json")
		n := r.uvarint("output seq count")
		if n > uint64(len(r.b)) { // every seq takes a byte at least
			r.fail("output seq count larger than the block")
			break
		}
		m.FrameSeqs = nil
		if n > 0 {
			if cap(seqs)-len(seqs) < int(n) {
				seqs = make([]uint64, 0, max(int(n), 2*cap(seqs), 64))
			}
			at := len(seqs)
			prev := uint64(0)
			for range n {
				prev += uint64(r.varint("output seq"))
				seqs = append(seqs, prev)
			}
			m.FrameSeqs = seqs[at:len(seqs):len(seqs)]
		}
		m.Severity, m.Summary, m.Detail = 0, "", ""
		if flags&poDiag != 0 {
			m.Severity = pb.Severity(r.byte1("output severity"))
			m.Summary = r.str("output summary")
			m.Detail = r.str("output detail")
		}
		if r.err != nil {
			break
		}
		out = a.add(&m, out)
	}
	if r.err != nil {
		clear(out[n0:])
		return out[:n0], r.err
	}
	return out, nil
}

// hasFeature says whether features lists f.
func hasFeature(features []string, f string) bool { return slices.Contains(features, f) }

// SetPacked switches the host's use of FeaturePacked on or off (it is on
// unless switched off), for benchmarks that compare the two framings in
// one run; it returns the previous setting. Sessions started before keep
// theirs.
func SetPacked(on bool) (was bool) {
	was, packedEnabled = packedEnabled, on
	return was
}
