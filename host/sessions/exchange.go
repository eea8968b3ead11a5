package sessions

import (
	"time"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// Frame kinds, as a wire view names them.
const (
	KindNotJSONRPC   = "not JSON-RPC"
	KindRequest      = "request"
	KindNotification = "notification"
	KindResponse     = "response"
	KindError        = "error"
)

// Exchange is what a frame is in its connection's JSON-RPC exchange.
type Exchange struct {
	Kind string
	// Request is the method of the request a response or error answers
	// ("" when the request was not seen); Latency is the time since it.
	Request  string
	Latency  time.Duration
	Answered bool // the request was seen
}

// Exchanges pairs a connection's responses with their requests, for the
// wire views (`acptap show` of a wire log, the web viewer): feed it every
// frame in order.
type Exchanges struct {
	reqs map[string]pending // direction + id → the request
}

type pending struct {
	method string
	at     time.Time
}

// Next classifies f (a wire.TypeFrame entry) and remembers a request.
func (x *Exchanges) Next(f Frame) Exchange {
	if x.reqs == nil {
		x.reqs = map[string]pending{}
	}
	switch {
	case f.Type != wire.TypeFrame:
		return Exchange{}
	case !f.JSON:
		return Exchange{Kind: KindNotJSONRPC}
	case f.Method != "" && f.ID != "":
		x.reqs[f.Dir.String()+f.ID] = pending{f.Method, f.At}
		return Exchange{Kind: KindRequest}
	case f.Method != "":
		return Exchange{Kind: KindNotification}
	}
	e := Exchange{Kind: KindResponse}
	if f.IsError {
		e.Kind = KindError
	}
	// a response goes the other way than its request
	other := sdk.C2A
	if f.Dir == sdk.C2A {
		other = sdk.A2C
	}
	if p, ok := x.reqs[other.String()+f.ID]; ok {
		e.Request, e.Latency, e.Answered = p.method, f.At.Sub(p.at), true
	}
	return e
}
