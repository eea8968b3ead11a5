package pluginwire

import (
	"context"
	"errors"
	"fmt"
	"io"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
)

// grpcClient is a Mapper backed by a plugin process. The host uses it
// through the same Mapper interface it would use in process.
type grpcClient struct {
	c pb.MapperClient
}

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
	return infoFromProto(r), nil
}

func (g *grpcClient) Start(ctx context.Context, req sdk.StartRequest) (sdk.Session, error) {
	stream, err := g.c.Map(ctx)
	if err != nil {
		return nil, fmt.Errorf("map: %w", err)
	}
	if err := stream.Send(&pb.MapRequest{Msg: &pb.MapRequest_Start{Start: startToProto(req)}}); err != nil {
		return nil, fmt.Errorf("map start: %w", err)
	}
	return &remoteSession{stream: stream}, nil
}

type remoteSession struct {
	stream pb.Mapper_MapClient
	asm    outputAssembler
	done   bool
}

// maxFramesPerMessage keeps a batch message under the max message size:
// parts are at most PartSize, so 8 of them fit with room to spare.
const maxBytesPerMessage = 8 * PartSize

func (s *remoteSession) Map(ctx context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	if s.done {
		return nil, errors.New("map: session finished")
	}
	parts := toProtoFrames(frames)
	// Send in messages that stay under the size limit. Every message gets
	// its own response sequence.
	var outs []sdk.Output
	for len(parts) > 0 {
		n, size := 0, 0
		for n < len(parts) && (n == 0 || size+len(parts[n].Data) <= maxBytesPerMessage) {
			size += len(parts[n].Data) + 64
			n++
		}
		if err := s.stream.Send(&pb.MapRequest{Msg: &pb.MapRequest_Batch{Batch: &pb.Batch{Frames: parts[:n]}}}); err != nil {
			return outs, fmt.Errorf("map send: %w", err)
		}
		parts = parts[n:]
		var err error
		outs, err = s.recv(outs)
		if err != nil {
			return outs, err
		}
	}
	return outs, nil
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
		if !resp.More {
			return outs, nil
		}
	}
}

func (s *remoteSession) Finish(ctx context.Context, reason string) ([]sdk.Output, error) {
	if s.done {
		return nil, nil
	}
	s.done = true
	if err := s.stream.Send(&pb.MapRequest{Msg: &pb.MapRequest_Finish{Finish: &pb.Finish{Reason: reason}}}); err != nil {
		return nil, fmt.Errorf("finish send: %w", err)
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
