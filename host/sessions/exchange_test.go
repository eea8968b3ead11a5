package sessions

import (
	"testing"
	"time"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// TestExchanges: a response and an error are paired with the request that
// went the other way with their id (not one of the same direction), with
// the time since it.
func TestExchanges(t *testing.T) {
	t0 := time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)
	fr := func(dir sdk.Direction, ms int, method, id string, isErr bool) Frame {
		return Frame{Type: wire.TypeFrame, JSON: true, Dir: dir, At: t0.Add(time.Duration(ms) * time.Millisecond), Method: method, ID: id, IsError: isErr}
	}
	var x Exchanges
	for i, c := range []struct {
		f    Frame
		want Exchange
	}{
		{fr(sdk.C2A, 0, "session/prompt", "1", false), Exchange{Kind: KindRequest}},
		{fr(sdk.A2C, 5, "session/request_permission", "1", false), Exchange{Kind: KindRequest}},
		{fr(sdk.A2C, 7, "session/update", "", false), Exchange{Kind: KindNotification}},
		{fr(sdk.C2A, 9, "", "1", false), Exchange{Kind: KindResponse, Request: "session/request_permission", Latency: 4 * time.Millisecond, Answered: true}},
		{fr(sdk.A2C, 20, "", "1", true), Exchange{Kind: KindError, Request: "session/prompt", Latency: 20 * time.Millisecond, Answered: true}},
		{fr(sdk.A2C, 21, "", "9", false), Exchange{Kind: KindResponse}},
		{Frame{Type: wire.TypeFrame, Dir: sdk.A2C}, Exchange{Kind: KindNotJSONRPC}},
		{Frame{Type: wire.TypeGap}, Exchange{}},
	} {
		if got := x.Next(c.f); got != c.want {
			t.Errorf("%d: %+v, want %+v", i, got, c.want)
		}
	}
}
