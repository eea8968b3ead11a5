package acpasr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
	"github.com/google/go-cmp/cmp"
)

// mapPrepared maps frames through a new session as the plugin server does
// when the session prepares batches (mappertest.MapPrepared).
func mapPrepared(t testing.TB, req sdk.StartRequest, frames []sdk.Frame, n int) []sdk.Output {
	t.Helper()
	sess, err := newMapper().Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return mappertest.MapPrepared(t, sess.(*Session), frames, n)
}

// TestPreparedSameAsMap: a session whose batches are prepared ahead
// (PrepareFrames) writes exactly the outputs of one that maps them from
// the start, with the schema check on and off, at several batch sizes,
// over the fixtures, the malformed corpus (not JSON, invalid UTF-8, bad
// shapes), nonconforming frames and batches, and generated sessions.
func TestPreparedSameAsMap(t *testing.T) {
	corpora := map[string][]sdk.Frame{
		"turn":      loadFrames(t, "turn"),
		"full":      loadFrames(t, "full"),
		"malformed": mappertest.Malformed(base),
		"nonconforming": parseFrames(t, wire(initReq, initResp, newReq, newResp,
			upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":5}`),
			upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":"ok"}}`),
			upd(`{"sessionUpdate":"tool_call_update","status":"completed"}`),
			`c2a {"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w/two"}}`,
			`a2c {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s2"}}`,
			`a2c [{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"running"}}},`+
				`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"state_update","state":7}}}]`,
			"b64 a2c /w==",
			`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m3","content":{"type":"text","text":"\ud800 x"}}}}`,
			`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m3","content":{"type":"text","te\u0078t":"escaped name"}}}}`,
			`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","sessionId":"s2","update":{"sessionUpdate":"state_update","state":"idle"}}}`,
			idle)),
	}
	rng := rand.New(rand.NewPCG(12, 7))
	for i := range 4 {
		data := make([]byte, 200+100*i)
		for j := range data {
			data[j] = byte(rng.IntN(256))
		}
		corpora[fmt.Sprintf("shapes%d", i)] = shapesFrames(t, data)
	}
	for name, frames := range corpora {
		for _, config := range []string{"", `{"checkSchema":false}`, `{"partialEvery":2}`} {
			want := mapAll(t, startReq(config), frames)
			for _, n := range []int{1, 3, 7, 256} {
				got := mapPrepared(t, startReq(config), frames, n)
				if reflect.DeepEqual(want, got) {
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("%s, config %q, batches of %d: prepared outputs differ (-map +prepared):\n%s", name, config, n, diff)
				}
			}
		}
	}
}

// shapesFrames is the session FuzzUpdateShapes draws from data.
func shapesFrames(t testing.TB, data []byte) []sdk.Frame {
	g := &shapes{data: data}
	lines := []string{initReq, initResp, newReq, newResp}
	for i := 0; i < 60 && g.more(); i++ {
		lines = append(lines, g.line())
	}
	return parseFrames(t, wire(lines...))
}

// FuzzPrepared: the sessions of FuzzUpdateShapes, prepared ahead in
// batches of 1–8 frames, write exactly what they write mapped from the
// start.
func FuzzPrepared(f *testing.F) {
	for _, seed := range []string{"", "\x00\x01\x02\x03", "abcdefghijklmnopqrstuvwxyz", strings.Repeat("\x07\x13\x2a", 40)} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		frames := shapesFrames(t, data)
		want := mapAll(t, startReq(""), frames)
		got := mapPrepared(t, startReq(""), frames, 1+len(data)%8)
		if reflect.DeepEqual(want, got) {
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("prepared outputs differ (-map +prepared):\n%s", diff)
		}
	})
}
