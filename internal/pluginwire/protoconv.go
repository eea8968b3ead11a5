package pluginwire

import (
	"bytes"
	"time"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
)

// toProtoFrames converts frames to wire messages, splitting any line larger
// than PartSize into parts that share the seq.
func toProtoFrames(frames []sdk.Frame) []*pb.Frame {
	out := make([]*pb.Frame, 0, len(frames))
	for i := range frames {
		f := &frames[i]
		base := pb.Frame{
			Kind:          pb.FrameKind(f.Kind),
			Seq:           f.Seq,
			Dir:           pb.Direction(f.Dir),
			BatchIndex:    uint32(f.BatchIndex),
			BatchSize:     uint32(f.BatchSize),
			ReplyToSeq:    f.ReplyTo,
			ReplyToMethod: f.ReplyToMethod,
			GapFrames:     f.Gap.Frames,
			GapBytes:      f.Gap.Bytes,
			GapReason:     f.Gap.Reason,
		}
		if !f.At.IsZero() {
			base.AtUnixNano = f.At.UnixNano()
		}
		data := f.Data
		if f.Session != nil {
			base.SessionId, base.SessionConnections = f.Session.ID, uint32(f.Session.Connections)
			data = joinLines(f.Session.Prior)
		}
		part := uint32(0)
		for {
			n := len(data)
			if n > PartSize {
				n = PartSize
			}
			m := &pb.Frame{}
			copyFrame(m, &base)
			m.Data = data[:n]
			m.Part = part
			data = data[n:]
			m.More = len(data) > 0
			out = append(out, m)
			if !m.More {
				break
			}
			part++
		}
	}
	return out
}

func copyFrame(dst, src *pb.Frame) {
	dst.Kind, dst.Seq, dst.Dir, dst.AtUnixNano = src.Kind, src.Seq, src.Dir, src.AtUnixNano
	dst.BatchIndex, dst.BatchSize = src.BatchIndex, src.BatchSize
	dst.ReplyToSeq, dst.ReplyToMethod = src.ReplyToSeq, src.ReplyToMethod
	dst.GapFrames, dst.GapBytes, dst.GapReason = src.GapFrames, src.GapBytes, src.GapReason
	dst.SessionId, dst.SessionConnections = src.SessionId, src.SessionConnections
}

func joinLines(lines [][]byte) []byte {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	out := make([]byte, 0, n)
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, data)
			break
		}
		out = append(out, data[:i])
		data = data[i+1:]
	}
	return out
}

// frameAssembler joins frame parts back into whole frames. Parts of one
// frame may span batches.
type frameAssembler struct {
	pending *sdk.Frame
	// A session frame's id and connection count travel in its parts.
	sessionID    string
	sessionConns int
}

// wholeFrame completes a frame whose parts are all in: a session frame's
// data back into its info.
func wholeFrame(f sdk.Frame, sessionID string, sessionConns int) sdk.Frame {
	if f.Kind == sdk.KindSession {
		// A copy: the lines outlive the batch, whose bytes may be reused (FrameCopier).
		f.Session = &sdk.SessionInfo{ID: sessionID, Connections: sessionConns, Prior: splitLines(bytes.Clone(f.Data))}
		f.Data = nil
	}
	return f
}

func (a *frameAssembler) add(m *pb.Frame, out []sdk.Frame) []sdk.Frame {
	if a.pending != nil {
		a.pending.Data = append(a.pending.Data, m.Data...)
		if m.More {
			return out
		}
		out = append(out, wholeFrame(*a.pending, a.sessionID, a.sessionConns))
		a.pending = nil
		return out
	}
	f := sdk.Frame{
		Kind:          sdk.FrameKind(m.Kind),
		Seq:           m.Seq,
		Dir:           sdk.Direction(m.Dir),
		Data:          m.Data,
		BatchIndex:    int(m.BatchIndex),
		BatchSize:     int(m.BatchSize),
		ReplyTo:       m.ReplyToSeq,
		ReplyToMethod: m.ReplyToMethod,
		Gap:           sdk.Gap{Frames: m.GapFrames, Bytes: m.GapBytes, Reason: m.GapReason},
	}
	if m.AtUnixNano != 0 {
		f.At = time.Unix(0, m.AtUnixNano).UTC()
	}
	if m.More {
		p := f // only a frame in parts is kept: f itself stays on the stack
		p.Data = append([]byte(nil), m.Data...)
		a.pending, a.sessionID, a.sessionConns = &p, m.SessionId, int(m.SessionConnections)
		return out
	}
	return append(out, wholeFrame(f, m.SessionId, int(m.SessionConnections)))
}

// toProtoOutputs splits outputs into responses of at most responseBudget
// bytes, and JSON values larger than PartSize into parts.
func toProtoOutputs(outs []sdk.Output) [][]*pb.Output {
	var groups [][]*pb.Output
	var cur []*pb.Output
	size := 0
	flush := func() {
		groups = append(groups, cur)
		cur, size = nil, 0
	}
	for i := range outs {
		o := &outs[i]
		data := o.JSON
		for first := true; first || len(data) > 0; first = false {
			n := len(data)
			if n > PartSize {
				n = PartSize
			}
			m := &pb.Output{
				Kind:      pb.OutputKind(o.Kind),
				Session:   o.Session,
				Json:      data[:n],
				JsonMore:  len(data) > n,
				FrameSeqs: o.FrameSeqs,
				Severity:  pb.Severity(o.Severity),
				Summary:   o.Summary,
				Detail:    o.Detail,
			}
			data = data[n:]
			if size+n+len(o.Summary)+len(o.Detail)+64 > responseBudget && len(cur) > 0 {
				flush()
			}
			cur = append(cur, m)
			size += n + len(o.Summary) + len(o.Detail) + 64
		}
	}
	if len(cur) > 0 || len(groups) == 0 {
		flush()
	}
	return groups
}

// outputAssembler joins output parts.
type outputAssembler struct {
	pending *sdk.Output
}

func (a *outputAssembler) add(m *pb.Output, out []sdk.Output) []sdk.Output {
	if a.pending != nil {
		a.pending.JSON = append(a.pending.JSON, m.Json...)
		if m.JsonMore {
			return out
		}
		out = append(out, *a.pending)
		a.pending = nil
		return out
	}
	o := sdk.Output{
		Kind:      sdk.OutputKind(m.Kind),
		Session:   m.Session,
		JSON:      m.Json,
		FrameSeqs: m.FrameSeqs,
		Severity:  sdk.Severity(m.Severity),
		Summary:   m.Summary,
		Detail:    m.Detail,
	}
	if m.JsonMore {
		p := o // only an output in parts is kept: o itself stays on the stack
		p.JSON = append([]byte(nil), m.Json...)
		a.pending = &p
		return out
	}
	return append(out, o)
}

func infoToProto(i sdk.Info) *pb.InfoResponse {
	return &pb.InfoResponse{Name: i.Name, Version: i.Version, Description: i.Description,
		Inputs: i.Inputs, Outputs: names(i.Outputs), Capabilities: names(i.Capabilities)}
}

func infoFromProto(p *pb.InfoResponse) sdk.Info {
	return sdk.Info{Name: p.Name, Version: p.Version, Description: p.Description,
		Inputs: p.Inputs, Outputs: typed[sdk.Format](p.Outputs), Capabilities: typed[sdk.Capability](p.Capabilities)}
}

func startToProto(r sdk.StartRequest) *pb.Start {
	return &pb.Start{Config: r.Config, Connection: r.Connection, WireLog: r.WireLog, Input: r.Input, Mode: string(r.Mode)}
}

func startFromProto(s *pb.Start) sdk.StartRequest {
	return sdk.StartRequest{Config: s.Config, Connection: s.Connection, WireLog: s.WireLog, Input: s.Input, Mode: sdk.Mode(s.Mode)}
}

// names and typed convert between the sdk's typed names (formats,
// capabilities) and the strings of the wire; Info.Check judges them.
func names[T ~string](xs []T) []string {
	if len(xs) == 0 {
		return nil
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

func typed[T ~string](xs []string) []T {
	if len(xs) == 0 {
		return nil
	}
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = T(x)
	}
	return out
}
