package pluginwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// grpcServer adapts a Mapper to the generated gRPC service.
type grpcServer struct {
	pb.UnimplementedMapperServer
	impl sdk.Mapper
	// legacy serves as a plugin built before the packed feature did: it
	// announces no wire feature, answers with Output messages whatever the
	// Start lists, and refuses a packed batch (an unexpected message). For
	// the tests that an older plugin still works with this host.
	legacy bool
}

func (s *grpcServer) Info(ctx context.Context, _ *pb.InfoRequest) (*pb.InfoResponse, error) {
	info, err := s.impl.Info(ctx)
	if err != nil {
		return nil, err
	}
	r := infoToProto(info)
	if !s.legacy {
		r.WireFeatures = []string{FeaturePacked}
	}
	return r, nil
}

func (s *grpcServer) Map(stream pb.Mapper_MapServer) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return status.Error(codes.InvalidArgument, "map: first message must be start")
	}
	if m := sdk.Mode(start.Mode); m == sdk.ModeRebuild || m == sdk.ModeConvert {
		offlineGC()
	}
	sess, err := s.impl.Start(ctx, startFromProto(start))
	if err != nil {
		return status.Errorf(codes.FailedPrecondition, "map: start: %v", err)
	}
	out := outputSender{stream: stream, packed: !s.legacy && hasFeature(start.WireFeatures, FeaturePacked)}
	rd := newRequestReader(stream, s.legacy)
	if os.Getenv(NoPrepareEnv) == "" {
		rd.prep, _ = sess.(Preparer)
	}
	if _, ok := sess.(FrameCopier); ok && os.Getenv(NoInPlaceEnv) == "" {
		rd.inPlace = true
	}
	go rd.run()
	defer rd.stop()
	for {
		req := rd.next()
		switch {
		case errors.Is(req.err, io.EOF):
			return nil
		case req.err != nil:
			return req.err
		case req.finish != nil:
			outs, err := callFinish(ctx, sess, req.finish.Reason)
			if err != nil {
				return status.Errorf(codes.Internal, "finish: %v", err)
			}
			return out.send(outs)
		}
		outs, err := callMap(ctx, sess, req.frames)
		rd.release(req.frames)
		if err != nil {
			return status.Errorf(codes.Internal, "map: %v", err)
		}
		err = out.send(outs)
		req.held.free() // the batch is mapped (and prepared: Map waits for that) and answered
		if err != nil {
			return err
		}
	}
}

// requestReader receives and decodes a Map stream's requests on a
// goroutine of its own, one ahead of the mapping: while the mapper maps a
// batch, the next one (which a pipelining host has sent already) is read
// off the connection and assembled into frames. Two frame slices take
// turns, so a batch's frames are never touched while it is being mapped.
type requestReader struct {
	stream pb.Mapper_MapServer
	legacy bool
	prep   Preparer // the session, when it prepares batches (set before run starts)
	// inPlace: the session is a FrameCopier, so a packed batch's frames
	// alias the received buffer (inPlaceRequest; set before run starts).
	inPlace bool
	ready   chan request
	free    chan []sdk.Frame
	done    chan struct{}
}

// request is one decoded request: a batch's frames, the finish, or the
// stream's end (io.EOF) or failure.
type request struct {
	frames  []sdk.Frame
	prepare func() // the batch's preparation (Preparer), run beside its Map
	finish  *pb.Finish
	err     error
	// held is the received message the frames alias, freed once the batch
	// is answered (nil unless in place).
	held *inPlaceRequest
}

func newRequestReader(stream pb.Mapper_MapServer, legacy bool) *requestReader {
	r := &requestReader{stream: stream, legacy: legacy, ready: make(chan request, 1),
		free: make(chan []sdk.Frame, 2), done: make(chan struct{})}
	r.free <- make([]sdk.Frame, 0, 256)
	r.free <- make([]sdk.Frame, 0, 256)
	return r
}

// NoPrepareEnv, set to anything in a plugin's environment, switches the
// preparation of batches (Preparer) off: the session maps each batch from
// the start, as before it, for measuring the two in one run.
const NoPrepareEnv = "ACPTAP_PLUGIN_NO_PREPARE"

// Preparer is a session that does the first, stateless steps of mapping a
// batch's frames (parsing, checking) beside Map: the request reader calls
// PrepareFrames on each batch as soon as it is decoded, hands the batch to
// Map and runs the function returned on its own goroutine, while Map maps
// what is prepared (of this batch, or of the batch before when two are in
// flight). The calls come in the order of the batches, each batch's
// function run to its end before the next batch is prepared, and for a
// batch only once the Map of the batch two before it has returned (two
// frame slices take turns); every batch of the stream is prepared.
type Preparer interface {
	PrepareFrames(frames []sdk.Frame) (run func())
}

// FrameCopier is a session that keeps nothing of its frames' bytes once
// Map has returned (it copies what it keeps, as acpasr's sessions do). The
// server then does not copy a packed batch out of the received message:
// the frames' Data alias gRPC's buffer, which is reused once the batch has
// been mapped and answered.
type FrameCopier interface {
	CopiesFrames()
}

// NoInPlaceEnv, set to anything in a plugin's environment, makes the
// server copy every batch out of the received message (FrameCopier
// ignored), for measuring the two in one binary.
const NoInPlaceEnv = "ACPTAP_PLUGIN_NO_IN_PLACE"

func (r *requestReader) run() {
	var asm frameAssembler
	for {
		var frames []sdk.Frame
		select {
		case frames = <-r.free:
		case <-r.done:
			return
		}
		req := r.read(&asm, frames[:0])
		select {
		case r.ready <- req:
		case <-r.done:
			return
		}
		if req.prepare != nil {
			r.runPrepare(req.prepare)
		}
		if req.err != nil || req.finish != nil {
			return
		}
	}
}

func (r *requestReader) read(asm *frameAssembler, frames []sdk.Frame) request {
	if r.inPlace || !r.legacy {
		ip := &inPlaceRequest{own: !r.inPlace}
		if err := r.stream.RecvMsg(ip); err != nil {
			return request{err: err}
		}
		if !ip.isPacked() {
			return r.decoded(asm, frames, &ip.req)
		}
		if r.legacy {
			ip.free()
			return request{err: status.Error(codes.InvalidArgument, "map: unexpected message")}
		}
		frames, err := asm.addPacked(ip.packed, frames)
		if err != nil {
			ip.free()
			return request{err: status.Errorf(codes.InvalidArgument, "map: %v", err)}
		}
		req := r.prepared(frames)
		if ip.inPlace() {
			req.held = ip
		}
		return req
	}
	var m pb.MapRequest
	if err := r.stream.RecvMsg(&m); err != nil {
		return request{err: err}
	}
	return r.decoded(asm, frames, &m)
}

// decoded is the request m, decoded by proto.
func (r *requestReader) decoded(asm *frameAssembler, frames []sdk.Frame, m *pb.MapRequest) request {
	switch msg := m.Msg.(type) {
	case *pb.MapRequest_Batch:
		for _, f := range msg.Batch.Frames {
			frames = asm.add(f, frames)
		}
		return r.prepared(frames)
	case *pb.MapRequest_Packed:
		if r.legacy {
			break
		}
		frames, err := asm.addPacked(msg.Packed.Frames, frames)
		if err != nil {
			// Declared and reported: the host restarts the plugin.
			return request{err: status.Errorf(codes.InvalidArgument, "map: %v", err)}
		}
		return r.prepared(frames)
	case *pb.MapRequest_Finish:
		return request{finish: msg.Finish}
	}
	return request{err: status.Error(codes.InvalidArgument, "map: unexpected message")}
}

// prepared starts preparing a batch's frames when the session does
// (Preparer): the request carries the work, for run to do once the batch
// is handed to Map.
func (r *requestReader) prepared(frames []sdk.Frame) (req request) {
	if r.prep == nil || len(frames) == 0 {
		return request{frames: frames}
	}
	return request{frames: frames, prepare: r.prep.PrepareFrames(frames)}
}

// runPrepare runs a batch's preparation; a panic there (a mapper bug: the
// session's own preparation ends the batch's work in any case) is not the
// reader's end.
func (r *requestReader) runPrepare(fn func()) {
	defer func() { _ = recover() }()
	fn()
}

// next returns the next request (the stream's end once the reader has
// stopped).
func (r *requestReader) next() request { return <-r.ready }

// release gives a mapped batch's frame slice back to the reader.
func (r *requestReader) release(frames []sdk.Frame) {
	clear(frames) // nothing of the batch is kept alive by the slice
	r.free <- frames[:0]
}

// stop ends the reader (it may still be blocked in RecvMsg: that returns
// once the handler has returned and the stream is done).
func (r *requestReader) stop() { close(r.done) }

// outputSender answers a Map stream's requests: with Output messages, or
// packed when the host accepts it (its Start lists FeaturePacked).
type outputSender struct {
	stream pb.Mapper_MapServer
	packed bool
	buf    []byte // reused: Send has serialized the message when it returns
	resp   pb.MapResponse
}

func (o *outputSender) send(outs []sdk.Output) error {
	if !o.packed {
		return sendOutputs(o.stream, outs)
	}
	var blocks [][]byte
	blocks, o.buf = packedOutputs(o.buf, outs)
	for i, b := range blocks {
		o.resp = pb.MapResponse{PackedOutputs: b, More: i < len(blocks)-1}
		if err := o.stream.Send(&o.resp); err != nil {
			return err
		}
	}
	if cap(o.buf) > keepBuffer { // a huge answer: not kept for the session
		o.buf = nil
	}
	return nil
}

// callMap turns a panic inside a mapper into an error for the host: a
// mapper bug must not take the plugin down silently mid-stream.
func callMap(ctx context.Context, s sdk.Session, frames []sdk.Frame) (outs []sdk.Output, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mapper panicked: %v", r)
		}
	}()
	return s.Map(ctx, frames)
}

func callFinish(ctx context.Context, s sdk.Session, reason string) (outs []sdk.Output, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mapper panicked: %v", r)
		}
	}()
	return s.Finish(ctx, reason)
}

func sendOutputs(stream pb.Mapper_MapServer, outs []sdk.Output) error {
	groups := toProtoOutputs(outs)
	for i, g := range groups {
		if err := stream.Send(&pb.MapResponse{Outputs: g, More: i < len(groups)-1}); err != nil {
			return err
		}
	}
	return nil
}

func (s *grpcServer) Replay(stream pb.Mapper_ReplayServer) error {
	r, ok := s.impl.(sdk.Replayer)
	if !ok {
		return status.Error(codes.Unimplemented, "replay: this plugin has no replay capability")
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return status.Error(codes.InvalidArgument, "replay: first message must be start")
	}
	pr, pw := io.Pipe()
	go func() {
		for {
			req, err := stream.Recv()
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			switch m := req.Msg.(type) {
			case *pb.ReplayRequest_Chunk:
				if _, err := pw.Write(m.Chunk); err != nil {
					return
				}
			case *pb.ReplayRequest_End:
				pw.Close()
				return
			}
		}
	}()
	var batch []sdk.Output
	flush := func() error {
		for _, g := range toProtoOutputs(batch) {
			if err := stream.Send(&pb.ReplayResponse{Outputs: g}); err != nil {
				return err
			}
		}
		batch = batch[:0]
		return nil
	}
	report, err := r.Replay(stream.Context(), start.Config, start.Target, pr, func(o sdk.Output) error {
		batch = append(batch, o)
		if len(batch) >= 256 {
			return flush()
		}
		return nil
	})
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return status.Errorf(codes.Internal, "replay: %v", err)
	}
	if err := flush(); err != nil {
		return err
	}
	return stream.Send(&pb.ReplayResponse{LossReport: report})
}

// Offline GC: a plugin process that maps a log (rebuild, convert; no
// editor waits on it, and the host keeps it for the whole run) may let its
// heap grow further between collections, for less of its CPU in the
// collector. Only a process that opted in (SetOfflineGC: acptap's built-in
// plugins) does, once, on its first offline session; the soft memory limit
// (GOMEMLIMIT, or acptap's ceiling) still bounds the heap, GOGC set in the
// environment wins, and a live
// recording's plugins (their own processes) keep the default.
var (
	offlineGCPercent int
	offlineGCOnce    sync.Once
)

// SetOfflineGC makes the process run its collector at GOGC=percent once it
// is given an offline session (0: never change it). Call it before Serve.
func SetOfflineGC(percent int) { offlineGCPercent = percent }

func offlineGC() {
	if offlineGCPercent > 0 && os.Getenv("GOGC") == "" {
		offlineGCOnce.Do(func() { debug.SetGCPercent(offlineGCPercent) })
	}
}
