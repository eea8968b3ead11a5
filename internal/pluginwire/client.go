package pluginwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
)

// grpcClient is a Mapper backed by a plugin process. The host uses it
// through the same Mapper interface it would use in process.
type grpcClient struct {
	c pb.MapperClient

	mu       sync.Mutex
	infoDone bool     // an Info answer was read
	features []string // its wire features
}

// packedEnabled off: the host never uses FeaturePacked (tests compare).
var packedEnabled = true

var (
	_ sdk.Mapper   = (*grpcClient)(nil)
	_ sdk.Replayer = (*grpcClient)(nil)
	_ sdk.Session  = (*remoteSession)(nil)
)

func (g *grpcClient) Info(ctx context.Context) (sdk.Info, error) {
	r, err := g.c.Info(ctx, &pb.InfoRequest{})
	if err != nil {
		return sdk.Info{}, fmt.Errorf("info: %w", err)
	}
	g.mu.Lock()
	g.infoDone, g.features = true, r.WireFeatures
	g.mu.Unlock()
	return infoFromProto(r), nil
}

// speaks says whether the plugin announced the wire feature f. The host
// (pluginhost.Launch) always asks Info before it starts a session; a
// client that did not (tests serving in process) asks here, once, under a
// deadline, and takes a failed answer for no feature.
func (g *grpcClient) speaks(ctx context.Context, f string) bool {
	g.mu.Lock()
	done, features := g.infoDone, g.features
	g.mu.Unlock()
	if !done {
		ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := g.Info(ictx)
		cancel()
		if err != nil {
			return false
		}
		g.mu.Lock()
		features = g.features
		g.mu.Unlock()
	}
	return hasFeature(features, f)
}

func (g *grpcClient) Start(ctx context.Context, req sdk.StartRequest) (sdk.Session, error) {
	stream, err := g.c.Map(ctx)
	if err != nil {
		return nil, fmt.Errorf("map: %w", err)
	}
	start := startToProto(req)
	packed := false
	if packedEnabled {
		start.WireFeatures = []string{FeaturePacked} // answers may come packed
		packed = g.speaks(ctx, FeaturePacked)
	}
	if err := stream.Send(&pb.MapRequest{Msg: &pb.MapRequest_Start{Start: start}}); err != nil {
		return nil, fmt.Errorf("map start: %w", err)
	}
	return &remoteSession{stream: stream, packed: packed}, nil
}

type remoteSession struct {
	stream pb.Mapper_MapClient
	asm    outputAssembler
	done   bool

	// packed: batches go as PackedBatch blocks (the plugin announced
	// FeaturePacked), encoded as request messages (encodeRequests).
	packed bool

	// Pipelined use (Submit/Collect): responses are read by a goroutine of
	// their own, so that a batch can be sent while the plugin answers the
	// one before, whatever the sizes (a send that waits on flow control
	// never waits on a response nobody reads).
	rq      *recvQueue
	pending []int // per submitted batch not yet collected: its messages
}

// maxFramesPerMessage keeps a batch message under the max message size:
// parts are at most PartSize, so 8 of them fit with room to spare.
const maxBytesPerMessage = 8 * PartSize

func (s *remoteSession) Map(ctx context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	if s.done {
		return nil, errors.New("map: session finished")
	}
	if s.rq != nil {
		if err := s.Submit(ctx, frames); err != nil {
			return nil, err
		}
		return s.Collect(ctx)
	}
	// Send in messages that stay under the size limit. Every message gets
	// its own response sequence.
	var outs []sdk.Output
	err := s.sendBatch(frames, func() error {
		var err error
		outs, err = s.recv(outs)
		return err
	})
	return outs, err
}

// sendBatch sends frames as batch messages (packed or not), calling after
// (when not nil) after each message; it stops at the first error.
func (s *remoteSession) sendBatch(frames []sdk.Frame, after func() error) error {
	if s.packed {
		enc := encodeRequests(frames)
		defer enc.buf.Free() // (gRPC holds what it has still to write)
		for i := range enc.msgs {
			if err := s.stream.SendMsg(&enc.msgs[i]); err != nil {
				return fmt.Errorf("map send: %w", err)
			}
			if after != nil {
				if err := after(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	parts := toProtoFrames(frames)
	for len(parts) > 0 {
		n := messageParts(parts)
		if err := s.stream.Send(&pb.MapRequest{Msg: &pb.MapRequest_Batch{Batch: &pb.Batch{Frames: parts[:n]}}}); err != nil {
			return fmt.Errorf("map send: %w", err)
		}
		parts = parts[n:]
		if after != nil {
			if err := after(); err != nil {
				return err
			}
		}
	}
	return nil
}

// messageParts is how many of parts the next batch message carries.
func messageParts(parts []*pb.Frame) int {
	n, size := 0, 0
	for n < len(parts) && (n == 0 || size+len(parts[n].Data) <= maxBytesPerMessage) {
		size += len(parts[n].Data) + 64
		n++
	}
	return n
}

// Submit sends a batch without waiting for its outputs (Collect returns
// them, oldest batch first); the frames may be reused once it returns.
// The plugin sees exactly what Map would have sent it: the same messages,
// in the same order.
func (s *remoteSession) Submit(ctx context.Context, frames []sdk.Frame) error {
	if s.done {
		return errors.New("map: session finished")
	}
	s.startRecv()
	msgs := 0
	err := s.sendBatch(frames, func() error { msgs++; return nil })
	if err != nil {
		return err
	}
	s.pending = append(s.pending, msgs)
	return nil
}

// startRecv starts reading responses on a goroutine of their own
// (pipelined use), once.
func (s *remoteSession) startRecv() {
	if s.rq == nil {
		s.rq = newRecvQueue()
		go s.rq.run(s.stream, &s.asm)
	}
}

// Collect returns the outputs of the oldest batch Submit sent and Collect
// has not returned.
func (s *remoteSession) Collect(ctx context.Context) ([]sdk.Output, error) {
	if len(s.pending) == 0 {
		return nil, errors.New("map: nothing submitted")
	}
	msgs := s.pending[0]
	s.pending = s.pending[1:]
	var outs []sdk.Output
	for range msgs {
		o, err := s.rq.next(ctx)
		outs = append(outs, o...)
		if err != nil {
			return outs, err
		}
	}
	return outs, nil
}

// recvQueue reads a Map stream's responses as they come: the outputs of
// each response sequence (one per request message), in order.
type recvQueue struct {
	mu    sync.Mutex
	items [][]sdk.Output
	err   error // the stream's end (io.EOF after Finish)
	ready chan struct{}
}

func newRecvQueue() *recvQueue { return &recvQueue{ready: make(chan struct{}, 1)} }

func (q *recvQueue) run(stream pb.Mapper_MapClient, asm *outputAssembler) {
	for {
		var outs []sdk.Output
		var err error
		for {
			var resp *pb.MapResponse
			if resp, err = stream.Recv(); err != nil {
				break
			}
			for _, o := range resp.Outputs {
				outs = asm.add(o, outs)
			}
			if len(resp.PackedOutputs) > 0 {
				if outs, err = asm.addPacked(resp.PackedOutputs, outs); err != nil {
					break
				}
			}
			if !resp.More {
				break
			}
		}
		q.mu.Lock()
		if err != nil {
			q.err = err
		} else {
			q.items = append(q.items, outs)
		}
		q.mu.Unlock()
		select {
		case q.ready <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// next returns the outputs of the next response sequence.
func (q *recvQueue) next(ctx context.Context) ([]sdk.Output, error) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			o := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			return o, nil
		}
		err := q.err
		q.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("map recv: %w", err)
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// wait waits for the stream's end.
func (q *recvQueue) wait(ctx context.Context) {
	for {
		q.mu.Lock()
		err := q.err
		q.mu.Unlock()
		if err != nil {
			return
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return
		}
	}
}

func (s *remoteSession) recv(outs []sdk.Output) ([]sdk.Output, error) {
	for {
		resp, err := s.stream.Recv()
		if err != nil {
			return outs, fmt.Errorf("map recv: %w", err)
		}
		for _, o := range resp.Outputs {
			outs = s.asm.add(o, outs)
		}
		if len(resp.PackedOutputs) > 0 {
			if outs, err = s.asm.addPacked(resp.PackedOutputs, outs); err != nil {
				return outs, fmt.Errorf("map recv: %w", err)
			}
		}
		if !resp.More {
			return outs, nil
		}
	}
}

func (s *remoteSession) Finish(ctx context.Context, reason string) ([]sdk.Output, error) {
	if s.done {
		return nil, nil
	}
	var early []sdk.Output
	for len(s.pending) > 0 { // outputs submitted and never collected come first, as Map would have
		o, err := s.Collect(ctx)
		early = append(early, o...)
		if err != nil {
			return early, err
		}
	}
	s.done = true
	if err := s.stream.Send(&pb.MapRequest{Msg: &pb.MapRequest_Finish{Finish: &pb.Finish{Reason: reason}}}); err != nil {
		return early, fmt.Errorf("finish send: %w", err)
	}
	if s.rq != nil {
		outs, err := s.rq.next(ctx)
		outs = append(early, outs...)
		if err != nil {
			return outs, err
		}
		_ = s.stream.CloseSend()
		s.rq.wait(ctx) // to io.EOF, so the stream's resources are released
		return outs, nil
	}
	outs, err := s.recv(nil)
	if err != nil {
		return outs, err
	}
	_ = s.stream.CloseSend()
	// Drain to io.EOF so the stream's resources are released.
	for {
		if _, err := s.stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return outs, nil
			}
			return outs, nil
		}
	}
}

func (g *grpcClient) Replay(ctx context.Context, config []byte, target string, stream io.Reader, emit func(sdk.Output) error) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := g.c.Replay(ctx)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if err := st.Send(&pb.ReplayRequest{Msg: &pb.ReplayRequest_Start{Start: &pb.ReplayStart{Config: config, Target: target}}}); err != nil {
		return nil, fmt.Errorf("replay start: %w", err)
	}
	sendErr := make(chan error, 1)
	go func() {
		buf := make([]byte, 1<<20)
		for {
			n, err := stream.Read(buf)
			if n > 0 {
				if e := st.Send(&pb.ReplayRequest{Msg: &pb.ReplayRequest_Chunk{Chunk: append([]byte(nil), buf[:n]...)}}); e != nil {
					sendErr <- e
					return
				}
			}
			if errors.Is(err, io.EOF) {
				sendErr <- st.Send(&pb.ReplayRequest{Msg: &pb.ReplayRequest_End{End: true}})
				return
			}
			if err != nil {
				sendErr <- err
				return
			}
		}
	}()
	var asm outputAssembler
	for {
		resp, err := st.Recv()
		if err != nil {
			return nil, fmt.Errorf("replay recv: %w", err)
		}
		var outs []sdk.Output
		for _, o := range resp.Outputs {
			outs = asm.add(o, outs)
		}
		for _, o := range outs {
			if err := emit(o); err != nil {
				return nil, err
			}
		}
		if resp.LossReport != nil {
			if err := <-sendErr; err != nil {
				return resp.LossReport, fmt.Errorf("replay send: %w", err)
			}
			return resp.LossReport, nil
		}
	}
}
