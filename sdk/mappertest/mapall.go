package mappertest

import (
	"context"
	"testing"

	"github.com/acptap/acptap/sdk"
)

// MapAll maps frames through sess in batches of batch frames, as a host sends them, then
// finishes the session ("eof"), and returns every output; a failing call fails t.
func MapAll(t testing.TB, ctx context.Context, sess sdk.Session, frames []sdk.Frame, batch int) []sdk.Output {
	t.Helper()
	var outs []sdk.Output
	for len(frames) > 0 {
		k := min(batch, len(frames))
		o, err := sess.Map(ctx, frames[:k])
		if err != nil {
			t.Fatal(err)
		}
		outs, frames = append(outs, o...), frames[k:]
	}
	o, err := sess.Finish(ctx, "eof")
	if err != nil {
		t.Fatal(err)
	}
	return append(outs, o...)
}

// MapServed starts a session of m (a mapper served over gRPC, say) and maps frames in
// batches of batch frames: one at a time (MapAll), or with two batches in flight when
// pipelined, as the offline feeders drive a plugin (the session's Submit, then Collect of
// the oldest; a session without them fails t). It finishes the session and returns every
// output, as NormalOutputs gives them.
func MapServed(t testing.TB, m sdk.Mapper, req sdk.StartRequest, frames []sdk.Frame, batch int, pipelined bool) []sdk.Output {
	t.Helper()
	ctx := context.Background()
	sess, err := m.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !pipelined {
		return NormalOutputs(MapAll(t, ctx, sess, frames, batch))
	}
	ps, ok := sess.(interface {
		Submit(ctx context.Context, frames []sdk.Frame) error
		Collect(ctx context.Context) ([]sdk.Output, error)
	})
	if !ok {
		t.Fatalf("%T has no pipelined batches", sess)
	}
	var outs []sdk.Output
	inFlight := 0
	for len(frames) > 0 || inFlight > 0 {
		if len(frames) > 0 && inFlight < 2 {
			k := min(batch, len(frames))
			if err := ps.Submit(ctx, frames[:k]); err != nil {
				t.Fatal(err)
			}
			frames, inFlight = frames[k:], inFlight+1
			continue
		}
		o, err := ps.Collect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		outs, inFlight = append(outs, o...), inFlight-1
	}
	o, err := sess.Finish(ctx, "eof")
	if err != nil {
		t.Fatal(err)
	}
	return NormalOutputs(append(outs, o...))
}

// NormalOutputs is outs with an empty JSON or seq list as nil: the plugin transport does not
// tell them apart, so outputs compared across it are compared so.
func NormalOutputs(outs []sdk.Output) []sdk.Output {
	out := make([]sdk.Output, len(outs))
	for i, o := range outs {
		if len(o.JSON) == 0 {
			o.JSON = nil
		}
		if len(o.FrameSeqs) == 0 {
			o.FrameSeqs = nil
		}
		out[i] = o
	}
	return out
}
