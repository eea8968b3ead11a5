package mappertest

import (
	"context"
	"testing"

	"os"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// OverGRPC serves m on an in-process go-plugin gRPC connection and returns
// the client side: a Mapper that crosses real gRPC and protobuf.
func OverGRPC(t testing.TB, m sdk.Mapper) sdk.Mapper {
	t.Helper()
	dir, err := os.MkdirTemp("", "mt")
	if err != nil {
		t.Fatal(err)
	}
	mm, stop, err := pluginwire.ServeInProcess(m, dir)
	if err != nil {
		t.Fatalf("serve in process: %v", err)
	}
	t.Cleanup(func() {
		stop()
		os.RemoveAll(dir)
	})
	return mm
}

// Run starts a session, maps frames in batches of batchSize (0: all at
// once), finishes it, and returns every output in order.
func Run(t testing.TB, m sdk.Mapper, req sdk.StartRequest, frames []sdk.Frame, batchSize int) []sdk.Output {
	t.Helper()
	outs, err := RunErr(context.Background(), m, req, frames, batchSize)
	if err != nil {
		t.Fatalf("mapper returned an error (mapping problems must be diagnostics): %v", err)
	}
	return outs
}

// RunErr is Run without a testing.TB, for benchmarks and fuzzing.
func RunErr(ctx context.Context, m sdk.Mapper, req sdk.StartRequest, frames []sdk.Frame, batchSize int) ([]sdk.Output, error) {
	sess, err := m.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	if batchSize <= 0 {
		batchSize = len(frames)
	}
	var outs []sdk.Output
	for len(frames) > 0 {
		n := min(batchSize, len(frames))
		o, err := sess.Map(ctx, frames[:n])
		if err != nil {
			return outs, err
		}
		outs = append(outs, o...)
		frames = frames[n:]
	}
	o, err := sess.Finish(ctx, "eof")
	return append(outs, o...), err
}
