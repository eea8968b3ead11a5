package sdk_test

import (
	"testing"

	"github.com/acptap/acptap/sdk"
)

func TestFrameRPC(t *testing.T) {
	for _, c := range []struct {
		line                          string
		kind                          sdk.RPCKind
		method, id, params, result, e string
		session                       string
		err                           error
	}{
		{line: `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
			kind: sdk.Request, method: "session/prompt", id: "3", params: `{"sessionId":"s1","prompt":[]}`, session: "s1"},
		{line: ` {"method":"session/update","jsonrpc":"2.0","params":{"update":{"sessionId":"no"},"sessionId":"s\u0032"}} `,
			kind: sdk.Notification, method: "session/update", params: `{"update":{"sessionId":"no"},"sessionId":"s\u0032"}`, session: "s2"},
		{line: `{"jsonrpc":"2.0","id":"a b","result":{"sessionId":"new"}}`, kind: sdk.Response, id: `"a b"`, result: `{"sessionId":"new"}`, session: "new"},
		{line: `{"jsonrpc":"2.0","id":null,"method":"x","params":"p"}`, kind: sdk.Request, method: "x", id: "null", params: `"p"`},
		{line: `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}`, kind: sdk.ErrorResponse, id: "1", e: `{"code":-1,"message":"m"}`},
		{line: `{"jsonrpc":"2.0","id":1,"error":"no","result":null}`, kind: sdk.Response, id: "1", e: `"no"`, result: "null"},
		{line: `{"\u006dethod":"_acme/x","params":{"sessionId":7}}`, kind: sdk.Notification, method: "_acme/x", params: `{"sessionId":7}`},
		{line: `{"jsonrpc":"2.0","id":1}`, id: "1", err: sdk.ErrNotRPC},
		{line: `{"jsonrpc":"2.0","method":5}`, err: sdk.ErrMethod},
		{line: `[1]`, err: sdk.ErrNotObject},
		{line: `{"jsonrpc":"2.0","\x":1,"method":"m"}`, err: sdk.ErrNotObject},
		{line: `{"jsonrpc":"2.0"`, err: sdk.ErrNotObject},
		{line: "\xff", err: sdk.ErrNotObject},
		{line: ``, err: sdk.ErrNotObject},
	} {
		f := sdk.Frame{Kind: sdk.KindLine, Data: []byte(c.line)}
		r := f.RPC()
		if r.Kind != c.kind || r.Method != c.method || string(r.ID) != c.id || string(r.Params) != c.params ||
			string(r.Result) != c.result || string(r.Error) != c.e || r.SessionID != c.session || r.Err != c.err {
			t.Errorf("%s:\n got %+v", c.line, *r)
		}
	}
}

// TestFrameRPCCache: the head is read once per frame data; a copy of the
// frame shares it, a frame whose data is replaced is read again, and gap
// and session frames have none.
func TestFrameRPCCache(t *testing.T) {
	f := sdk.Frame{Kind: sdk.KindLine, Data: []byte(`{"jsonrpc":"2.0","method":"a"}`)}
	r := f.RPC()
	g := f
	if g.RPC() != r || f.RPC() != r {
		t.Error("the head was read again for the same data")
	}
	g.Data = []byte(`{"jsonrpc":"2.0","method":"b"}`)
	if g.RPC().Method != "b" || f.RPC().Method != "a" {
		t.Errorf("replaced data kept the old head: %q", g.RPC().Method)
	}
	for _, k := range []sdk.FrameKind{sdk.KindGap, sdk.KindSession} {
		h := sdk.Frame{Kind: k, Data: f.Data}
		if r := h.RPC(); r.Kind != sdk.NotRPC || r.Err != nil {
			t.Errorf("kind %d: %+v", k, *r)
		}
	}
}
