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

// MapPrepared maps frames through sess, a session that prepares its batches
// (PrepareFrames, internal/pluginwire's Preparer), as the plugin server does: batches of
// batch frames copied into two frame slices that take turns (so frames of later batches lie
// at the addresses of earlier ones), each prepared on another goroutine, one batch after
// the other, while Map maps it and the batch before. It finishes the session and returns
// every output.
func MapPrepared(t testing.TB, sess interface {
	sdk.Session
	PrepareFrames(frames []sdk.Frame) (run func())
}, frames []sdk.Frame, batch int) []sdk.Output {
	t.Helper()
	ctx := context.Background()
	var batches [][]sdk.Frame
	for len(frames) > 0 {
		k := min(batch, len(frames))
		batches, frames = append(batches, frames[:k]), frames[k:]
	}
	free := make(chan []sdk.Frame, 2)
	free <- make([]sdk.Frame, 0, batch)
	free <- make([]sdk.Frame, 0, batch)
	ready := make(chan []sdk.Frame, 1)
	go func() { // the request reader
		for _, b := range batches {
			f := append((<-free)[:0], b...)
			run := sess.PrepareFrames(f)
			ready <- f
			run()
		}
	}()
	var outs []sdk.Output
	for range batches {
		cur := <-ready
		o, err := sess.Map(ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o...)
		clear(cur)
		free <- cur
	}
	o, err := sess.Finish(ctx, "eof")
	if err != nil {
		t.Fatal(err)
	}
	return append(outs, o...)
}
