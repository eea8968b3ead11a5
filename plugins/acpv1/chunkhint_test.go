package acpv1

import (
	"bytes"
	"context"
	"testing"

	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
)

// TestChunkIDHintSameAsRewrite: a message chunk whose messageId the
// translator derives (none sent, another kind's, a replayed prompt's) is
// passed through with the id in its hint (acpasr.Hint.MessageID), its
// bytes the wire frame's, on both paths; and the engine maps it exactly as
// the frame rewritten to name the id (the general path's withUpdate) —
// the translation it replaces.
func TestChunkIDHintSameAsRewrite(t *testing.T) {
	frames := parseFrames(t, opened(
		prompt(2, "hi"),
		upd(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}`),
		upd(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`),
		upd(`{"content":{"type":"text","text":"a"},"sessionUpdate":"agent_message_chunk"}`),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"b"},"_meta":{"x":1}}`),
		upd(`{"sessionUpdate":"agent_message_chunk","messageId":7,"content":{"type":"text","text":"c"}}`),
		`a2c {"jsonrpc":"2.0", "method":"session/update", "params":{"update":{ "sessionUpdate":"agent_message_chunk", "content":{"type":"text","text":"d"} }, "sessionId":"s1"}}`,
		upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m-1","content":{"type":"text","text":"e"}}`),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"f"}}`),
		answer(2, "end_turn"),
		prompt(3, "again"),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"resource_link","uri":"file:///w/a","name":"a"}}`),
		answer(3, "end_turn"),
	))
	for _, slow := range []bool{false, true} {
		ctx := context.Background()
		newT := func() *translator {
			s, err := New().Start(ctx, startReq(sdk.ModeConvert, ""))
			if err != nil {
				t.Fatal(err)
			}
			tr := s.(*translator)
			tr.slowOnly = slow
			return tr
		}
		hinted, rewritten := newT(), newT()
		passed := 0
		for i := range frames {
			translate := func(tr *translator) (sdk.Frame, []acpasr.Translated) {
				f := frames[i]
				f.Data = bytes.Clone(f.Data)
				tr.cur = &f
				list := tr.safely(func() []acpasr.Translated {
					if l, ok := tr.fastFrame(&f); ok {
						return l
					}
					return tr.frame(&f)
				})
				tr.cur = nil
				return f, list
			}
			fh, lh := translate(hinted)
			fr, lr := translate(rewritten)
			for j := range lr {
				id := lr[j].Hint.MessageID
				if id == "" {
					continue
				}
				if !sameBytes(lh[j].Frame.Data, fh.Data) {
					t.Errorf("slow=%v frame %d: a chunk with a derived id was rewritten: %s", slow, i, lh[j].Frame.Data)
				}
				passed++
				root, _ := parseObj(lr[j].Frame.Data)
				params, _ := parseObj(root["params"])
				u, _ := parseObj(params["update"])
				nu := cloneObj(u)
				nu["messageId"] = rawString(id)
				lr[j].Frame = withUpdate(&lr[j].Frame, rpc{params: params}, nu.encode())
				lr[j].Hint.MessageID = ""
			}
			eh, err := hinted.eng.MapChecked(ctx, fh, lh)
			if err != nil {
				t.Fatal(err)
			}
			er, err := rewritten.eng.MapChecked(ctx, fr, lr)
			if err != nil {
				t.Fatal(err)
			}
			if !sameOutputs(append(hinted.take(), eh...), append(rewritten.take(), er...)) {
				t.Fatalf("slow=%v frame %d (%s): hinted and rewritten differ:\nhint    %s\nrewrite %s", slow, i, frames[i].Data, outText(eh), outText(er))
			}
		}
		eh, _ := hinted.Finish(ctx, "eof")
		er, _ := rewritten.Finish(ctx, "eof")
		if !sameOutputs(eh, er) {
			t.Fatalf("slow=%v: Finish outputs differ:\nhint    %s\nrewrite %s", slow, outText(eh), outText(er))
		}
		if passed < 6 {
			t.Errorf("slow=%v: %d chunks passed through with a hint, want at least 6", slow, passed)
		}
	}
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}
