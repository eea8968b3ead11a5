package pluginwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
)

// v1Frames is what the plugin assembles from frames sent as wire version
// 1's Frame messages: split into messages as the host splits them, each
// marshalled and unmarshalled, assembled in order. It also returns the
// message count.
func v1Frames(t testing.TB, frames []sdk.Frame) ([]sdk.Frame, int) {
	t.Helper()
	parts := toProtoFrames(frames)
	var out []sdk.Frame
	var asm frameAssembler
	msgs := 0
	for len(parts) > 0 {
		n := messageParts(parts)
		b, err := proto.Marshal(&pb.MapRequest{Msg: &pb.MapRequest_Batch{Batch: &pb.Batch{Frames: parts[:n]}}})
		if err != nil {
			t.Fatal(err)
		}
		var req pb.MapRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		for _, f := range req.GetBatch().Frames {
			out = asm.add(f, out)
		}
		parts = parts[n:]
		msgs++
	}
	return out, msgs
}

// packedSent is the same through the packed encoding (and a protobuf
// round trip of the PackedBatch message).
func packedSent(t testing.TB, frames []sdk.Frame) ([]sdk.Frame, int) {
	t.Helper()
	blocks, _ := packedFrames(nil, frames)
	var out []sdk.Frame
	var asm frameAssembler
	for _, blk := range blocks {
		b, err := proto.Marshal(&pb.MapRequest{Msg: &pb.MapRequest_Packed{Packed: &pb.PackedBatch{Frames: blk}}})
		if err != nil {
			t.Fatal(err)
		}
		var req pb.MapRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		out, err = asm.addPacked(req.GetPacked().GetFrames(), out)
		if err != nil {
			t.Fatalf("decode a block the encoder made: %v", err)
		}
	}
	return out, len(blocks)
}

// bytesEqual compares byte slices whole (cmp would compare them byte by
// byte), nil and empty alike.
var bytesEqual = cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })

var (
	seqsEqual  = cmp.Comparer(func(a, b []uint64) bool { return slices.Equal(a, b) })
	linesEqual = cmp.Comparer(func(a, b [][]byte) bool {
		return len(a) == len(b) && linesSame(a, b)
	})
)

func linesSame(a, b [][]byte) bool {
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

var frameCmp = []cmp.Option{cmpopts.IgnoreUnexported(sdk.Frame{}), bytesEqual, linesEqual}

// edgeFrames are frames of every kind and field, sizes around the part
// size and the message budget, and values at the edges of their types.
func edgeFrames() []sdk.Frame {
	at := time.Date(2026, 11, 1, 9, 0, 0, 123, time.UTC)
	var in []sdk.Frame
	seq := uint64(0)
	next := func() uint64 { seq++; return seq }
	for i, n := range []int{0, 1, 100, PartSize - 1, PartSize, PartSize + 1, 3*PartSize + 7} {
		in = append(in, sdk.Frame{Kind: sdk.KindLine, Seq: next(), Dir: sdk.A2C, At: at.Add(time.Duration(i) * time.Second),
			Data: bytes.Repeat([]byte{'a' + byte(i)}, n), BatchIndex: i % 2, BatchSize: 2 * (i % 2), ReplyTo: 3, ReplyToMethod: "m"})
	}
	in = append(in,
		sdk.Frame{Kind: sdk.KindLine, Seq: next(), Dir: sdk.C2A, Data: []byte("\xff\xfe not utf-8 \x00")}, // zero time
		sdk.Frame{Kind: sdk.KindLine, Seq: next(), Dir: sdk.C2A, At: time.Unix(0, 1).UTC(), Data: []byte(`{}`)},
		sdk.Frame{Kind: sdk.KindLine, Seq: next(), Dir: sdk.A2C, At: at.Add(-time.Hour), Data: []byte(`[1]`), BatchIndex: 0, BatchSize: 1},
		sdk.Frame{Kind: sdk.KindLine, Seq: 1<<64 - 1, Dir: 3, At: time.Unix(1<<40, 0).UTC(), ReplyTo: 1<<64 - 1, ReplyToMethod: "é/\x00"},
		sdk.Frame{Kind: sdk.KindGap, Seq: next(), Dir: sdk.C2A, At: at, Gap: sdk.Gap{Frames: 2, Bytes: 9, Reason: "queue full"}},
		sdk.Frame{Kind: sdk.KindGap, Seq: next(), Dir: sdk.A2C, Gap: sdk.Gap{Frames: 1<<64 - 1}},
		sdk.Frame{Kind: sdk.KindSession, Seq: next(), Dir: sdk.C2A, At: at, Session: &sdk.SessionInfo{ID: "s", Connections: 2,
			Prior: [][]byte{[]byte(`{"a":1}`), bytes.Repeat([]byte("p"), PartSize+3)}}},
		sdk.Frame{Kind: sdk.KindSession, Seq: next(), Dir: sdk.A2C, At: at, Session: &sdk.SessionInfo{ID: "new"}},
		sdk.Frame{Kind: sdk.KindSession, Seq: next(), Dir: sdk.A2C, Session: &sdk.SessionInfo{}},
		sdk.Frame{Kind: 200, Seq: next(), Dir: 250, Data: []byte("unknown kind")},
	)
	// Enough middle-sized lines to need more than one message.
	for range 10 {
		in = append(in, sdk.Frame{Kind: sdk.KindLine, Seq: next(), Dir: sdk.A2C, At: at, Data: bytes.Repeat([]byte("x"), PartSize)})
	}
	return in
}

// randomFrames are n small frames of random fields, as the fuzzers and the
// random differential test make them.
func randomFrames(r *rand.Rand, n int) []sdk.Frame {
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	out := make([]sdk.Frame, 0, n)
	for i := range n {
		f := sdk.Frame{Kind: sdk.FrameKind(1 + r.IntN(3)), Seq: uint64(i + 1), Dir: sdk.Direction(r.IntN(3))}
		if r.IntN(8) != 0 {
			f.At = at.Add(time.Duration(r.Int64N(int64(time.Hour))) - 30*time.Minute)
		}
		switch f.Kind {
		case sdk.KindLine:
			f.Data = make([]byte, r.IntN(400))
			for j := range f.Data {
				f.Data[j] = byte(r.IntN(256))
			}
			if r.IntN(4) == 0 {
				f.BatchSize = 1 + r.IntN(5)
				f.BatchIndex = r.IntN(f.BatchSize)
			}
			if r.IntN(4) == 0 {
				f.ReplyTo, f.ReplyToMethod = uint64(r.IntN(i+1)), []string{"", "session/prompt", "x"}[r.IntN(3)]
			}
		case sdk.KindGap:
			f.Gap = sdk.Gap{Frames: r.Uint64N(100), Bytes: r.Uint64(), Reason: []string{"", "queue full"}[r.IntN(2)]}
		case sdk.KindSession:
			s := &sdk.SessionInfo{ID: []string{"", "sess_1"}[r.IntN(2)], Connections: r.IntN(4)}
			for range r.IntN(3) {
				s.Prior = append(s.Prior, []byte(strings.Repeat("r", 1+r.IntN(50))))
			}
			f.Session = s
		}
		out = append(out, f)
	}
	return out
}

// TestPackedFramesSameAsV1 is the differential test of the packed batch
// encoding: the plugin assembles the same frames, split into as many
// messages, as from wire version 1's Frame messages.
func TestPackedFramesSameAsV1(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := map[string][]sdk.Frame{"edges": edgeFrames(), "empty": nil}
	for i := range 20 {
		cases["random"+string(rune('a'+i))] = randomFrames(r, 1+r.IntN(600))
	}
	for name, in := range cases {
		want, wantMsgs := v1Frames(t, in)
		got, gotMsgs := packedSent(t, in)
		if d := cmp.Diff(want, got, frameCmp...); d != "" {
			t.Errorf("%s: packed frames differ from v1 (-v1 +packed):\n%.2000s", name, d)
		}
		if gotMsgs != wantMsgs && len(in) > 0 {
			t.Errorf("%s: %d packed messages, %d v1", name, gotMsgs, wantMsgs)
		}
	}
}

// v1Outputs and packedOutputsSent are what the host assembles from an
// answer sent either way, and how many MapResponse messages it took.
func v1Outputs(t testing.TB, outs []sdk.Output) ([]sdk.Output, int) {
	t.Helper()
	var got []sdk.Output
	var asm outputAssembler
	groups := toProtoOutputs(outs)
	for i, g := range groups {
		b, err := proto.Marshal(&pb.MapResponse{Outputs: g, More: i < len(groups)-1})
		if err != nil {
			t.Fatal(err)
		}
		var resp pb.MapResponse
		if err := proto.Unmarshal(b, &resp); err != nil {
			t.Fatal(err)
		}
		for _, o := range resp.Outputs {
			got = asm.add(o, got)
		}
	}
	return got, len(groups)
}

func packedOutputsSent(t testing.TB, outs []sdk.Output) ([]sdk.Output, int) {
	t.Helper()
	var got []sdk.Output
	var asm outputAssembler
	blocks, _ := packedOutputs(nil, outs)
	for i, blk := range blocks {
		b, err := proto.Marshal(&pb.MapResponse{PackedOutputs: blk, More: i < len(blocks)-1})
		if err != nil {
			t.Fatal(err)
		}
		var resp pb.MapResponse
		if err := proto.Unmarshal(b, &resp); err != nil {
			t.Fatal(err)
		}
		got, err = asm.addPacked(resp.PackedOutputs, got)
		if err != nil {
			t.Fatalf("decode a block the encoder made: %v", err)
		}
	}
	return got, len(blocks)
}

func edgeOutputs() []sdk.Output {
	var outs []sdk.Output
	for i, n := range []int{0, 1, 300, PartSize - 1, PartSize, PartSize + 1, 2*PartSize + 5} {
		outs = append(outs, sdk.Output{Kind: sdk.ASRRecord, Session: "sess_" + string(rune('a'+i%2)),
			JSON: bytes.Repeat([]byte{'a' + byte(i)}, n), FrameSeqs: []uint64{uint64(i + 1), uint64(i + 3), 2}})
	}
	outs = append(outs,
		sdk.Output{Kind: sdk.ASRHeader, JSON: []byte(`{"h":1}`)},
		sdk.Output{Kind: sdk.Diagnostic, Session: "s", Severity: sdk.SeverityWarning, Summary: "sum", Detail: "dé\x00tail", FrameSeqs: []uint64{1<<64 - 1, 0}},
		sdk.Output{Kind: sdk.Diagnostic, Severity: sdk.SeverityError},
		sdk.Output{Kind: sdk.AEPEvent, Session: "", JSON: []byte(`{}`), FrameSeqs: []uint64{}},
		sdk.Output{Kind: 99, JSON: []byte("?"), Summary: "on a record"},
	)
	// Enough to need more than one response.
	for range 6 {
		outs = append(outs, sdk.Output{Kind: sdk.ASRRecord, Session: "s", JSON: bytes.Repeat([]byte("y"), PartSize)})
	}
	return outs
}

func randomOutputs(r *rand.Rand, n int) []sdk.Output {
	out := make([]sdk.Output, 0, n)
	for range n {
		o := sdk.Output{Kind: sdk.OutputKind(1 + r.IntN(5)), Session: []string{"", "sess_1", "sess_2"}[r.IntN(3)]}
		o.JSON = make([]byte, r.IntN(500))
		for j := range o.JSON {
			o.JSON[j] = byte(r.IntN(256))
		}
		for range r.IntN(6) {
			o.FrameSeqs = append(o.FrameSeqs, r.Uint64N(1<<40))
		}
		if o.Kind == sdk.Diagnostic {
			o.Severity, o.Summary, o.Detail = sdk.Severity(1+r.IntN(3)), "summary", strings.Repeat("d", r.IntN(30))
		}
		out = append(out, o)
	}
	return out
}

var outputCmp = []cmp.Option{bytesEqual, seqsEqual}

// TestPackedOutputsSameAsV1 is the differential test of packed answers:
// the host assembles the same outputs, from as many responses, as from
// Output messages.
func TestPackedOutputsSameAsV1(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := map[string][]sdk.Output{"edges": edgeOutputs(), "empty": nil}
	for i := range 20 {
		cases["random"+string(rune('a'+i))] = randomOutputs(r, r.IntN(300))
	}
	for name, in := range cases {
		want, wantMsgs := v1Outputs(t, in)
		got, gotMsgs := packedOutputsSent(t, in)
		if d := cmp.Diff(want, got, outputCmp...); d != "" {
			t.Errorf("%s: packed outputs differ from v1 (-v1 +packed):\n%.2000s", name, d)
		}
		if gotMsgs != wantMsgs {
			t.Errorf("%s: %d packed responses, %d v1", name, gotMsgs, wantMsgs)
		}
	}
}

// FuzzPackedFrames: whatever a packed batch block holds, the plugin's
// decoder returns frames or an error, never panics, and frames it returns
// lie within the block; and frames made from the fuzzer's bytes go through
// the packed encoding as through the v1 messages.
func FuzzPackedFrames(f *testing.F) {
	blocks, _ := packedFrames(nil, randomFrames(rand.New(rand.NewPCG(5, 6)), 20))
	for _, b := range blocks {
		f.Add(b, uint64(1))
	}
	var small []sdk.Frame // the edge frames, small
	for _, fr := range edgeFrames() {
		if len(fr.Data) < 1000 && (fr.Session == nil || len(fr.Session.Prior) == 0) {
			small = append(small, fr)
		}
	}
	edge, _ := packedFrames(nil, small)
	f.Add(edge[0], uint64(2))
	f.Add([]byte{1, 2, 0, 1, 0, 3, 'a', 'b', 'c'}, uint64(3))
	f.Add([]byte{1, 2, 1, 1, 0, 1, 'a', 3, 2, 0, 5, 'b'}, uint64(4)) // a part, then the next
	f.Fuzz(func(t *testing.T, block []byte, seed uint64) {
		var asm frameAssembler
		out, err := asm.addPacked(block, nil)
		if err != nil {
			if len(out) != 0 {
				t.Fatalf("error %v with %d frames", err, len(out))
			}
		} else {
			n := 0
			for _, fr := range out {
				n += len(fr.Data)
			}
			if n > len(block) {
				t.Fatalf("%d data bytes out of a %d-byte block", n, len(block))
			}
		}
		// Differential: frames made from the bytes.
		r := rand.New(rand.NewPCG(seed, uint64(len(block))))
		in := randomFrames(r, r.IntN(40))
		for i := range in {
			if len(block) > 0 && in[i].Kind == sdk.KindLine {
				in[i].Data = block[:r.IntN(len(block)+1)]
			}
		}
		want, _ := v1Frames(t, in)
		got, _ := packedSent(t, in)
		if d := cmp.Diff(want, got, frameCmp...); d != "" {
			t.Fatalf("packed frames differ from v1:\n%.2000s", d)
		}
	})
}

// FuzzPackedOutputs is FuzzPackedFrames for the host's decoder of packed
// answers.
func FuzzPackedOutputs(f *testing.F) {
	blocks, _ := packedOutputs(nil, randomOutputs(rand.New(rand.NewPCG(7, 8)), 20))
	for _, b := range blocks {
		f.Add(b, uint64(1))
	}
	f.Add([]byte{2, 2, 1, 's', 2, '{', '}', 2, 4, 2, 3, 1, 'a', 0}, uint64(2))
	f.Add([]byte{2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}, uint64(3))
	f.Fuzz(func(t *testing.T, block []byte, seed uint64) {
		var asm outputAssembler
		out, err := asm.addPacked(block, nil)
		if err != nil && len(out) != 0 {
			t.Fatalf("error %v with %d outputs", err, len(out))
		}
		if err == nil {
			seqs := 0
			for _, o := range out {
				seqs += len(o.FrameSeqs)
			}
			if seqs > len(block) {
				t.Fatalf("%d frame seqs out of a %d-byte block", seqs, len(block))
			}
		}
		r := rand.New(rand.NewPCG(seed, uint64(len(block))))
		in := randomOutputs(r, r.IntN(40))
		for i := range in {
			if len(block) > 0 {
				in[i].JSON = block[:r.IntN(len(block)+1)]
			}
		}
		want, _ := v1Outputs(t, in)
		got, _ := packedOutputsSent(t, in)
		if d := cmp.Diff(want, got, outputCmp...); d != "" {
			t.Fatalf("packed outputs differ from v1:\n%.2000s", d)
		}
	})
}

// TestPackedDecoderRejects: malformed blocks are errors, each named.
func TestPackedDecoderRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"truncated header":  {1, 2},
		"unknown flags":     {1, 2, 0x80, 1, 0, 0},
		"data past the end": {1, 2, 0, 1, 0, 9, 'a'},
		"bad varint":        {1, 2, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"unknown field":     {1, 2, 2, 1, 0, 0, 64},
		"part out of range": append([]byte{1, 2, 2, 1, 0, 0, 1}, binary.AppendUvarint(nil, 1<<33)...),
		"missing extras":    {1, 2, 2, 1, 0, 0, 2, 1},
	} {
		var asm frameAssembler
		if out, err := asm.addPacked(b, nil); err == nil {
			t.Errorf("%s: decoded as %+v", name, out)
		}
	}
	for name, b := range map[string][]byte{
		"truncated":        {2},
		"unknown flags":    {2, 4, 0, 0, 0},
		"json past end":    {2, 0, 0, 5, 'a'},
		"too many seqs":    {2, 0, 0, 0, 100, 1},
		"missing severity": {4, 2, 0, 0, 0},
	} {
		var asm outputAssembler
		if out, err := asm.addPacked(b, nil); err == nil {
			t.Errorf("outputs, %s: decoded as %+v", name, out)
		}
	}
}

// echoMapper answers every frame with a record (its data, or a diagnostic
// for a frame that is not a line) and a 5 MB record at Finish: what it
// maps is known without a real engine.
type echoMapper struct {
	copies bool // its sessions are FrameCopiers (they copy what they keep: the data they echo)
}

func (echoMapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "echo", Version: "1", Inputs: []string{"acp/2"}, Outputs: []sdk.Format{sdk.FormatASR},
		Capabilities: []sdk.Capability{sdk.CapabilityRecord}}, nil
}

func (m echoMapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	if m.copies {
		return &copyingEchoSession{}, nil
	}
	return &echoSession{}, nil
}

type echoSession struct{}

// keepingSession keeps its frames' data uncopied and echoes it at Finish,
// claiming to copy it (FrameCopier): what the poisoned buffer catches.
type keepingSession struct {
	copyingEchoSession
	kept [][]byte
}

func (s *keepingSession) Map(ctx context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	for _, f := range frames {
		s.kept = append(s.kept, f.Data)
	}
	return s.echoSession.Map(ctx, frames)
}

func (s *keepingSession) Finish(context.Context, string) ([]sdk.Output, error) {
	return []sdk.Output{{Kind: sdk.ASRRecord, JSON: bytes.Join(s.kept, nil)}}, nil
}

type keepingMapper struct{ echoMapper }

func (keepingMapper) Start(context.Context, sdk.StartRequest) (sdk.Session, error) {
	return &keepingSession{}, nil
}

// TestInPlaceBufferPoisoned: a session that keeps its frames' bytes while
// claiming to copy them (FrameCopier) reads garbage once the batch is
// answered, so the served-same-as-in-process tests fail on such a session.
func TestInPlaceBufferPoisoned(t *testing.T) {
	frames := randomFrames(rand.New(rand.NewPCG(3, 4)), 50)
	var want []byte
	for i := range frames {
		frames[i].Seq = uint64(i + 1)
		if frames[i].Kind == sdk.KindLine {
			want = append(want, frames[i].Data...)
		}
	}
	m, c := serveCounted(t, keepingMapper{}, false)
	if _, err := m.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	outs := mapOver(t, m, frames, false)
	got := outs[len(outs)-1].JSON
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inPlace == 0 {
		t.Fatal("no batch mapped in place")
	}
	if len(got) != len(want) || bytes.Equal(got, want) || bytes.Count(got, []byte{0xff}) == 0 {
		t.Fatalf("the kept bytes were not poisoned: %d bytes, %d of 0xff", len(got), bytes.Count(got, []byte{0xff}))
	}
}

// copyingEchoSession is echoSession, mapped in the received buffer.
type copyingEchoSession struct{ echoSession }

func (*copyingEchoSession) CopiesFrames() {}

var _ FrameCopier = (*copyingEchoSession)(nil)

func (*echoSession) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	var outs []sdk.Output
	for _, f := range frames {
		switch f.Kind {
		case sdk.KindLine:
			outs = append(outs, sdk.Output{Kind: sdk.ASRRecord, Session: "s", JSON: append([]byte(nil), f.Data...),
				FrameSeqs: []uint64{f.Seq, f.ReplyTo}})
		default:
			var prior []byte
			if f.Session != nil {
				prior = bytes.Join(f.Session.Prior, []byte("|"))
			}
			outs = append(outs, sdk.Diag(sdk.SeverityInfo, f.Gap.Reason, "frame", string(prior), f.Seq))
		}
	}
	return outs, nil
}

func (*echoSession) Finish(context.Context, string) ([]sdk.Output, error) {
	return []sdk.Output{{Kind: sdk.ASRRecord, JSON: bytes.Repeat([]byte("z"), 5<<20)}}, nil
}

// wireCounts counts the Map messages a served plugin received and sent,
// by kind.
type wireCounts struct {
	mu                          sync.Mutex
	batches, packed             int
	inPlace                     int // of the packed batches, those mapped in the received buffer
	outputs, packedOutputs      int
	infoFeatures, startFeatures []string
}

// serveCounted is ServeInProcess with the server counting what crossed it;
// legacy serves as a plugin built before FeaturePacked.
func serveCounted(t *testing.T, m sdk.Mapper, legacy bool) (sdk.Mapper, *wireCounts) {
	t.Helper()
	c := &wireCounts{}
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "m.sock"))
	if err != nil {
		t.Fatal(err)
	}
	srv := newGRPCServer([]grpc.ServerOption{grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		return h(srv, &countingStream{ServerStream: ss, c: c})
	}), grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if r, ok := resp.(*pb.InfoResponse); ok {
			c.mu.Lock()
			c.infoFeatures = r.WireFeatures
			c.mu.Unlock()
		}
		return resp, err
	})})
	pb.RegisterMapperServer(srv, &grpcServer{impl: m, legacy: legacy})
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("unix://"+lis.Addr().String(), append(GRPCDialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); srv.Stop() })
	return &grpcClient{c: pb.NewMapperClient(conn)}, c
}

type countingStream struct {
	grpc.ServerStream
	c *wireCounts
}

func (s *countingStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if r, ok := m.(*inPlaceRequest); ok && err == nil {
		if r.isPacked() {
			s.c.mu.Lock()
			s.c.packed++
			if r.inPlace() {
				s.c.inPlace++
			}
			s.c.mu.Unlock()
			return nil
		}
		m = &r.req
	}
	if r, ok := m.(*pb.MapRequest); ok && err == nil {
		s.c.mu.Lock()
		switch {
		case r.GetBatch() != nil:
			s.c.batches++
		case r.GetPacked() != nil:
			s.c.packed++
		case r.GetStart() != nil:
			s.c.startFeatures = r.GetStart().WireFeatures
		}
		s.c.mu.Unlock()
	}
	return err
}

func (s *countingStream) SendMsg(m any) error {
	if r, ok := m.(*pb.MapResponse); ok {
		s.c.mu.Lock()
		s.c.outputs += len(r.Outputs)
		if len(r.PackedOutputs) > 0 {
			s.c.packedOutputs++
		}
		s.c.mu.Unlock()
	}
	return s.ServerStream.SendMsg(m)
}

// mapOver maps frames in batches of 7 over m, synchronously or pipelined.
func mapOver(t *testing.T, m sdk.Mapper, frames []sdk.Frame, pipelined bool) []sdk.Output {
	t.Helper()
	ctx := context.Background()
	sess, err := m.Start(ctx, sdk.StartRequest{Connection: "c-1", Mode: sdk.ModeRecord})
	if err != nil {
		t.Fatal(err)
	}
	var outs []sdk.Output
	ps := sess.(*remoteSession)
	inFlight := 0
	for len(frames) > 0 {
		n := min(7, len(frames))
		if pipelined {
			if err := ps.Submit(ctx, frames[:n]); err != nil {
				t.Fatal(err)
			}
			if inFlight++; inFlight == 2 {
				o, err := ps.Collect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				outs, inFlight = append(outs, o...), inFlight-1
			}
		} else {
			o, err := sess.Map(ctx, frames[:n])
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, o...)
		}
		frames = frames[n:]
	}
	o, err := sess.Finish(ctx, "eof")
	if err != nil {
		t.Fatal(err)
	}
	return append(outs, o...)
}

// TestPackedNegotiation: a plugin of this SDK and this host speak packed
// both ways; a plugin built before the feature (legacy) gets Frame
// messages and answers with Output messages, and a host that does not use
// the feature (an older host) gets Output messages from this SDK's
// plugin. The outputs are the same in every pairing, synchronous or
// pipelined.
func TestPackedNegotiation(t *testing.T) {
	frames := append(randomFrames(rand.New(rand.NewPCG(9, 10)), 300), edgeFrames()...)
	for i := range frames {
		frames[i].Seq = uint64(i + 1)
	}
	var want []sdk.Output
	for _, pipelined := range []bool{false, true} {
		for _, tc := range []struct {
			name                string
			legacy, hostPacked  bool
			packedIn, packedOut bool
			copies              bool // the session is a FrameCopier: packed batches mapped in place
		}{
			{"new plugin, new host", false, true, true, true, false},
			{"old plugin, new host", true, true, false, false, false},
			{"new plugin, old host", false, false, false, false, false},
			{"new plugin copying its frames, new host", false, true, true, true, true},
			{"old plugin copying its frames, new host", true, true, false, false, true},
			{"new plugin copying its frames, old host", false, false, false, false, true},
		} {
			func() {
				defer SetPacked(SetPacked(tc.hostPacked))
				m, c := serveCounted(t, echoMapper{copies: tc.copies}, tc.legacy)
				if _, err := m.Info(context.Background()); err != nil { // as pluginhost.Launch does
					t.Fatal(err)
				}
				got := mapOver(t, m, frames, pipelined)
				if want == nil {
					want = got
				} else if d := cmp.Diff(want, got, outputCmp...); d != "" {
					t.Errorf("%s, pipelined %v: outputs differ:\n%.2000s", tc.name, pipelined, d)
				}
				c.mu.Lock()
				defer c.mu.Unlock()
				if (c.packed > 0) != tc.packedIn || (c.batches > 0) == tc.packedIn {
					t.Errorf("%s: %d packed batches, %d v1 batches", tc.name, c.packed, c.batches)
				}
				if inPlace := tc.copies && tc.packedIn; (inPlace && c.inPlace != c.packed) || (!inPlace && c.inPlace != 0) {
					t.Errorf("%s: %d of %d packed batches mapped in place", tc.name, c.inPlace, c.packed)
				}
				if (c.packedOutputs > 0) != tc.packedOut || (c.outputs > 0) == tc.packedOut {
					t.Errorf("%s: %d packed answers, %d Output messages", tc.name, c.packedOutputs, c.outputs)
				}
				if hasFeature(c.infoFeatures, FeaturePacked) == tc.legacy {
					t.Errorf("%s: plugin announced %q", tc.name, c.infoFeatures)
				}
				if hasFeature(c.startFeatures, FeaturePacked) != tc.hostPacked {
					t.Errorf("%s: host's start listed %q", tc.name, c.startFeatures)
				}
			}()
		}
	}
	if len(want) < len(frames) {
		t.Fatalf("%d outputs for %d frames", len(want), len(frames))
	}
}

// TestPackedMalformedEndsTheStream: a plugin given a malformed packed
// batch ends the Map stream with an error (the host restarts it) and keeps
// serving: the next session maps.
func TestPackedMalformedEndsTheStream(t *testing.T) {
	m, _ := serveCounted(t, echoMapper{}, false)
	ctx := context.Background()
	g := m.(*grpcClient)
	stream, err := g.c.Map(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&pb.MapRequest{Msg: &pb.MapRequest_Start{Start: &pb.Start{Connection: "c"}}}); err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&pb.MapRequest{Msg: &pb.MapRequest_Packed{Packed: &pb.PackedBatch{Frames: []byte{1, 2, 0, 1, 0, 99}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err == nil || !strings.Contains(err.Error(), "malformed packed block") {
		t.Fatalf("malformed batch answered with %v", err)
	}
	if outs := mapOver(t, m, randomFrames(rand.New(rand.NewPCG(1, 1)), 20), false); len(outs) < 20 {
		t.Fatalf("next session: %d outputs", len(outs))
	}
}

// packedFrames is packedFramesRoom without room: the bare blocks, as the
// plugin's side reads them (the tests' encoder).
func packedFrames(buf []byte, frames []sdk.Frame) (blocks [][]byte, _ []byte) {
	return packedFramesRoom(buf, frames, 0)
}
