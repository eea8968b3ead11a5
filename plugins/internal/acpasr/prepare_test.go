package acpasr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

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

// halves are frames in two batches (copies: a batch's slice is the
// session's until mapped).
func halves(frames []sdk.Frame) (b1, b2 []sdk.Frame) {
	half := len(frames) / 2
	return append([]sdk.Frame(nil), frames[:half]...), append([]sdk.Frame(nil), frames[half:]...)
}

// mapThen maps the batches in order through s, then finishes it.
func mapThen(t *testing.T, s *Session, got []sdk.Output, batches ...[]sdk.Frame) []sdk.Output {
	t.Helper()
	for _, b := range batches {
		o, err := s.Map(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o...)
	}
	o, err := s.Finish(context.Background(), "eof")
	if err != nil {
		t.Fatal(err)
	}
	return append(got, o...)
}

// TestMapTakesOverPreparation: Map does not wait for a preparation that
// has not begun (its function not run yet, as when the preparing
// goroutine gets no core): it prepares the frames itself, and the function
// run after finds nothing left to do. The outputs are those of a session
// that maps the batches from the start. Without the takeover, Map waits
// for ever (the test's deadline).
func TestMapTakesOverPreparation(t *testing.T) {
	frames := loadFrames(t, "full")
	want := mapAll(t, startReq(""), frames)
	sess, err := newMapper().Start(context.Background(), startReq(""))
	if err != nil {
		t.Fatal(err)
	}
	s := sess.(*Session)
	b1, b2 := halves(frames)
	run1 := s.PrepareFrames(b1)
	var got []sdk.Output
	mapped := make(chan error, 1)
	go func() {
		o, err := s.Map(context.Background(), b1)
		got = o
		mapped <- err
	}()
	select {
	case err := <-mapped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Map waited for a preparation that had not begun")
	}
	run1() // Map prepared the batch: nothing left
	run2 := s.PrepareFrames(b2)
	run2()
	got = mapThen(t, s, got, b2)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("outputs differ (-map +taken over):\n%s", diff)
	}
}

// TestPreparationWaitsForTakenOver: a batch prepared while the batch
// before is not all prepared (its mapping took its preparation over)
// waits for the mapping to prepare that batch's rest: the schema check
// follows the frames in order, so none of the second batch's frames is
// checked before the first's. Without the wait the second batch is
// prepared at once (its function returns before the first batch is
// mapped).
func TestPreparationWaitsForTakenOver(t *testing.T) {
	frames := loadFrames(t, "full")
	want := mapAll(t, startReq(""), frames)
	sess, err := newMapper().Start(context.Background(), startReq(""))
	if err != nil {
		t.Fatal(err)
	}
	s := sess.(*Session)
	b1, b2 := halves(frames)
	run1 := s.PrepareFrames(b1)
	p1 := &s.c.prep.slots[s.c.prep.next^1]
	p1.claim.Store(stopBit) // taken over before a frame began, as Map does
	run1()
	run2 := s.PrepareFrames(b2)
	p2 := &s.c.prep.slots[s.c.prep.next^1]
	done2 := make(chan struct{})
	go func() {
		run2()
		close(done2)
	}()
	for !p1.waitingAll.Load() {
		select {
		case <-done2:
			t.Fatalf("the second batch's preparation ended (%d frames prepared) before the first batch was", p2.ready.Load())
		default:
			runtime.Gosched()
		}
	}
	if n := p2.ready.Load(); n != 0 {
		t.Fatalf("%d frames of the second batch prepared before the first batch's", n)
	}
	got := mapThen(t, s, nil, b1, b2)
	<-done2
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("outputs differ (-map +taken over):\n%s", diff)
	}
}
