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
