package acpv1

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
)

// diffPaths runs two translators over frames side by side, one with the
// fast path (fast.go) and one with the general path only, and fails on the
// first frame where they differ: the translated frames and hints, the
// translator's diagnostics, or the engine's outputs for them. It returns
// how many frames the fast path took.
func diffPaths(t testing.TB, mode sdk.Mode, frames []sdk.Frame) int {
	t.Helper()
	ctx := context.Background()
	newT := func(slow bool) *translator {
		s, err := New().Start(ctx, startReq(mode, ""))
		if err != nil {
			t.Fatal(err)
		}
		tr := s.(*translator)
		tr.slowOnly = slow
		return tr
	}
	fast, slow := newT(false), newT(true)
	took := 0
	for i := range frames {
		run := func(tr *translator) ([]acpasr.Translated, []sdk.Output, []sdk.Output, bool) {
			f := frames[i]
			f.Data = bytes.Clone(f.Data)
			if !f.At.IsZero() && f.At.Before(syntheticBefore) {
				f.At = time.Time{}
			}
			tr.cur = &f
			fastOK := false
			list := tr.safely(func() []acpasr.Translated {
				if l, ok := tr.fastFrame(&f); ok {
					fastOK = true
					return l
				}
				return tr.frame(&f)
			})
			diags := tr.take()
			eo, err := tr.eng.MapChecked(ctx, f, list)
			if err != nil {
				t.Fatal(err)
			}
			tr.cur = nil
			return list, diags, eo, fastOK
		}
		lf, df, ef, ok := run(fast)
		ls, ds, es, _ := run(slow)
		if ok {
			took++
		}
		where := fmt.Sprintf("frame %d (%s %s)", i, frames[i].Dir, frames[i].Data)
		if len(lf) != len(ls) {
			t.Fatalf("%s: fast path %d translated frames, general %d:\n%s\n%s", where, len(lf), len(ls), listText(lf), listText(ls))
		}
		for j := range lf {
			a, b := lf[j], ls[j]
			copiesTaken(t, where, frames[i].Data, a)
			a.Hint.Copied = nil // the fast path's alone: the parse is the same without (jsonscan's TestParseWith)
			if !bytes.Equal(a.Frame.Data, b.Frame.Data) || a.Frame.Dir != b.Frame.Dir || a.Frame.Seq != b.Frame.Seq ||
				a.Frame.Kind != b.Frame.Kind || !a.Frame.At.Equal(b.Frame.At) || a.Frame.ReplyTo != b.Frame.ReplyTo ||
				a.Frame.ReplyToMethod != b.Frame.ReplyToMethod || !reflect.DeepEqual(a.Hint, b.Hint) {
				t.Fatalf("%s: translated frame %d differs:\nfast    %s %+v\ngeneral %s %+v", where, j, a.Frame.Data, a.Hint, b.Frame.Data, b.Hint)
			}
		}
		if !sameOutputs(df, ds) || !sameOutputs(ef, es) {
			t.Fatalf("%s: outputs differ:\nfast    %s%s\ngeneral %s%s", where, outText(df), outText(ef), outText(ds), outText(es))
		}
	}
	ef, err := fast.Finish(ctx, "eof")
	if err != nil {
		t.Fatal(err)
	}
	es, err := slow.Finish(ctx, "eof")
	if err != nil {
		t.Fatal(err)
	}
	if !sameOutputs(ef, es) {
		t.Fatalf("Finish outputs differ:\nfast    %s\ngeneral %s", outText(ef), outText(es))
	}
	return took
}

// copiesTaken fails unless every string value tr's hint says the frame
// copies from wire (Hint.Copied) is taken by the engine's parse of it,
// where the tape is the same as Parse's.
func copiesTaken(t testing.TB, where string, wire []byte, tr acpasr.Translated) {
	t.Helper()
	if len(tr.Hint.Copied) == 0 {
		return
	}
	var src, got, want jsonscan.Tape
	if !src.Parse(wire) {
		t.Fatalf("%s: copies named in a frame the tape does not take", where)
	}
	ok, taken := got.ParseWith(tr.Frame.Data, &src, tr.Hint.Copied)
	if !ok || taken != len(tr.Hint.Copied) || !want.Parse(tr.Frame.Data) ||
		!slices.Equal(got.Ents, want.Ents) || !slices.Equal(got.Conts, want.Conts) {
		t.Fatalf("%s: %d of the %d copies the hint names taken (parse %v) in %s", where, taken, len(tr.Hint.Copied), ok, tr.Frame.Data)
	}
}

func sameOutputs(a, b []sdk.Output) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind != y.Kind || x.Session != y.Session || !bytes.Equal(x.JSON, y.JSON) || !reflect.DeepEqual(x.FrameSeqs, y.FrameSeqs) {
			return false
		}
	}
	return true
}

func outText(outs []sdk.Output) string {
	var b strings.Builder
	for _, o := range outs {
		fmt.Fprintf(&b, "\n  %v %s %s %v", o.Kind, o.Session, o.JSON, o.FrameSeqs)
	}
	return b.String()
}

func listText(l []acpasr.Translated) string {
	var b strings.Builder
	for _, x := range l {
		fmt.Fprintf(&b, "  %s %+v\n", x.Frame.Data, x.Hint)
	}
	return b.String()
}

// fastPathLines are update lines written the ways the fast path must
// refuse or reproduce: spaces, escapes in names and values, names that are
// not ASCII, duplicates, members of other types, content arrays of every
// kind of item.
var fastPathLines = []string{
	upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"b"}}`),
	upd(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"t"}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m9","content":{"type":"text","text":"n"}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":7,"content":{"type":"text","text":"n"}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":null,"content":{"type":"text","text":"n"}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m\u00e9","content":{"type":"text","text":"n"}}`),
	upd(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"u"}}`),
	upd(`{"sessionUpdate":"user_message_chunk","content":{"type":"text"}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","content":"text"}`),
	upd(`{"sessionUpdate":"agent_message_chunk"}`),
	upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}`),
	upd(`{ "sessionUpdate" : "agent_message_chunk" , "content" : { "type" : "text" , "text" : "spaced" } , "z" : [ 1 , 2 ] }`),
	upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"esc \"q\" \\ \u2028 \ud800 <&>"},"_meta":{"k":"\/"}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","cont\u0065nt":{"type":"text","text":"escaped name"}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"dup"},"content":{"type":"text","text":"dup2"}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"é":1}`),
	upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"\u2028":1}`),
	upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"a\"b":1}`),
	upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"Z":1,"_":2,"~":3,"":4}`),
	upd(`{"sessionUpdate":"agent_m\u0065ssage_chunk","content":{"type":"text","text":"escaped kind"}}`),
	upd(`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit","kind":"edit","status":"pending"}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"diff","path":"/w/proj/a.go","oldText":"a","newText":"b"}]}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[ {"type":"content","content":{"type":"text","text":"c"}} , {"type":"diff","path":"/w/proj/n.go","newText":"n"} , 7 , "s" , null ]}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"diff","path":"/w/pr\u006fj/a.go","oldText":5,"newText":"b\n"},{"type":"d\u0069ff","path":"p","newText":"x","extra":1}]}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"diff","path":"/w/é.go","oldText":"\u00e9","newText":"<b>"}]}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"diff","path":7,"newText":"b"},{"type":"diff","path":"p","newText":null}]}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":{"type":"diff","path":"p","newText":"x"}}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[]}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":null}`),
	upd(`{"sessionUpdate":"tool_call","toolCallId":5,"title":"bad id"}`),
	upd(`{"sessionUpdate":"tool_call_update","title":"no id"}`),
	upd(`{"sessionUpdate":"tool_call","toolCallId":"c\u0032","title":"Edit","content":[{"type":"diff","path":"q","newText":"q"}]}`),
	upd(`{"sessionUpdate":"tool_call","toolCallId":"c3","title":"Edit","content":[{"type":"diff","path":"q","newText":"q","newText":"r"}]}`),
	upd(`{"sessionUpdate":"plan","entries":[]}`),
	upd(`{"sessionUpdate":"plan","entries":[{"content":"a <b> & \u2028","priority":"high","status":"pending"}],"_meta":{"x": 1},"extra":true}`),
	upd(`{"sessionUpdate":"plan","entries":[ {"content":"spaced","priority":"high","status":"pending"} ]}`),
	upd(`{"sessionUpdate":"plan","entries":{"content":"x"}}`),
	upd(`{"sessionUpdate":"plan","_meta":null,"entries":[{"content":"é","priority":"low","status":"completed"}]}`),
	upd(`{"sessionUpdate":"plan"}`),
	upd(`{"sessionUpdate":"current_mode_update","currentModeId":"ask"}`),
	upd(`{"sessionUpdate":"current_mode_update","currentModeId":7}`),
	upd(`{"sessionUpdate":"current_mode_update","currentModeId":"c\u006fde"}`),
	upd(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"web","description":"search"}]}`),
	upd(`{"sessionUpdate":"usage_update","used":1,"size":2}`),
	upd(`{"sessionUpdate":"vendor_thing","x":1}`),
	upd(`{"sessionUpdate":7}`),
	`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
	`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":7,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
	`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\u0031","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
	`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"other session"}}}}`,
	`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":"x"}}`,
	`a2c {"jsonrpc":"2.0","method":"session/update","params":[1]}`,
	`a2c {"jsonrpc":"2.0","id":3,"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"request"}}}}`,
	`c2a {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"wrong way"}}}}`,
	"a2c \t{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s1\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"x\"}}}}\t",
	`a2c {"jsonrpc":"2.0","method":"session\/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
	`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`,
	`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}} x`,
	permReq(40, "c1"),
	clientResult(40, `{"outcome":{"outcome":"selected","optionId":"yes"}}`),
	`a2c {"jsonrpc":"2.0","id":41,"method":"session/request_permission","params":{"sessionId":"s1","subject":{"x":1},"toolCall":{"toolCallId":"c1"},"options":[]}}`,
	`c2a {"jsonrpc":"2.0","id":41,"error":{"code":-32000,"message":"no"}}`,
	`a2c {"jsonrpc":"2.0","id":"p\u0034","method":"session/request_permission","params":{"sessionId":"s1","options":[]}}`,
	`c2a {"jsonrpc":"2.0","id":"p\u0034","result":{"outcome":{"outcome":"cancelled"}}}`,
	`a2c {"jsonrpc":"2.0","id":[1, 2],"method":"session/request_permission","params":{"toolCall":{"toolCallId":"c1"},"é":1}}`,
	`c2a {"jsonrpc":"2.0","id":[1, 2],"result":{"outcome":{"outcome":"cancelled"}}}`,
	`c2a {"jsonrpc":"2.0","id":43,"method":"session/request_permission","params":{"toolCall":{"toolCallId":"c1"}}}`,
	`a2c {"jsonrpc":"2.0","id":43,"result":null}`,
	`a2c {"jsonrpc":"2.0","id":44,"error":"text"}`,
	`a2c {"jsonrpc":"2.0","id":45}`,
	`a2c {"jsonrpc":"2.0","result":{}}`,
	`c2a {"jsonrpc":"2.0","id":"p-1","method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"str id"}]}}`,
	`a2c {"jsonrpc":"2.0","id":"p-1","result":{"stopReason":7}}`,
	`c2a {"jsonrpc":"2.0","id":null,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
	`a2c {"jsonrpc":"2.0","id":null,"result":"done"}`,
	`c2a {"jsonrpc":"2.0","id":[1, 2],"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
	`a2c {"jsonrpc":"2.0","id":[1, 2],"result":{"stopReason":"cancelled"}}`,
	`c2a {"jsonrpc":"2.0","id":47,"method":"session/prompt","params":{"sessionId":"sé","prompt":[]}}`,
	`a2c {"jsonrpc":"2.0","id":47,"result":{"stopReason":"end_turn","_meta":{"a":1}}}`,
	`c2a {"jsonrpc":"2.0","id":48,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
	upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"before the error"}}`),
	`a2c {"jsonrpc":"2.0","id":48,"error":{"code":-32603,"message":"boom"}}`,
	`c2a {"jsonrpc":"2.0","id":49,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
	`a2c {"jsonrpc":"2.0","id":49,"error":{"code":-32000,"message":"Authentication required"}}`,
	`a2c {"jsonrpc":"2.0","id":50,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
	`c2a {"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
	`c2a {"jsonrpc":"2.0","id":51,"method":"session/prompt","params":{"prompt":[]}}`,
	prompt(46, "second"),
	`a2c {"jsonrpc":"2.0","id":46.0,"result":{"stopReason":"end_turn"}}`,
	`a2c {"jsonrpc":"2.0","id":46,"result":{"stopReason":"end_turn"}}`,
	"b64 a2c " + b64(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"bad `+"\xff"+`"}}}}`),
}

// TestFastPathMatchesGeneral: on every fixture, the benchmark's log and
// the lines above (each after a prompt), live and converted, the fast path
// and the general one give the same translated frames, diagnostics and
// records; and the fast path takes the regular updates.
func TestFastPathMatchesGeneral(t *testing.T) {
	var corpora []string
	for _, fx := range []map[string]string{kindFixtures, lossFixtures} {
		for _, name := range sortedNames(fx) {
			corpora = append(corpora, fx[name])
		}
	}
	lines := []string{initReq, initResp, newReq, newResp, prompt(2, "hi")}
	for _, l := range fastPathLines {
		lines = append(lines, l, upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}`))
	}
	corpora = append(corpora, wire(lines...))
	took := 0
	for _, mode := range []sdk.Mode{sdk.ModeRecord, sdk.ModeConvert} {
		for _, c := range corpora {
			took += diffPaths(t, mode, parseFrames(t, c))
		}
		n := diffPaths(t, mode, benchLog(40))
		if n < 40*15 {
			t.Errorf("the fast path took %d frames of the benchmark's log, want at least %d", n, 40*15)
		}
	}
	if took == 0 {
		t.Error("the fast path took no frame of the fixtures")
	}
}

// FuzzFastPath: v1 conversations from the shapes generator, and one line
// of arbitrary bytes among regular ones, map the same with and without the
// fast path.
func FuzzFastPath(f *testing.F) {
	for _, l := range fastPathLines {
		if rest, ok := strings.CutPrefix(l, "a2c "); ok {
			f.Add([]byte(rest))
		}
	}
	f.Add([]byte(strings.Repeat("\x05\x11\x2b\x03", 30)))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &v1Shapes{data: data}
		lines := []string{initReq, g.initResp(), newReq, newResp}
		for i := 0; i < 40 && g.more(); i++ {
			lines = append(lines, g.line())
		}
		frames := parseFrames(t, wire(lines...))
		raw := parseFrames(t, wire(initReq, initResp, newReq, newResp, prompt(2, "hi"),
			"b64 a2c "+b64(string(data)),
			upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}`)))
		for _, mode := range []sdk.Mode{sdk.ModeRecord, sdk.ModeConvert} {
			diffPaths(t, mode, frames)
			diffPaths(t, mode, raw)
		}
	})
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestFastPathMutations: lines of fastPathLines with a few bytes changed,
// removed or inserted (mostly malformed JSON, or JSON of another shape)
// map the same with and without the fast path, and no line crashes
// either: the fuzzer's work, seeded and bounded, in every test run.
func TestFastPathMutations(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	var seeds [][]byte
	for _, l := range fastPathLines {
		if rest, ok := strings.CutPrefix(l, "a2c "); ok {
			seeds = append(seeds, []byte(rest))
		}
	}
	n := 2000
	if testing.Short() {
		n = 200
	}
	for i := 0; i < n; i++ {
		data := bytes.Clone(seeds[r.Intn(len(seeds))])
		for k := r.Intn(4) + 1; k > 0 && len(data) > 0; k-- {
			j := r.Intn(len(data))
			switch r.Intn(3) {
			case 0:
				const alphabet = "{}[]\",:\\ 0a\xff"
				data[j] = alphabet[r.Intn(len(alphabet))]
			case 1:
				data = append(data[:j], data[j+1:]...)
			default:
				data = append(data[:j], append([]byte{"{}[]\",:\\"[r.Intn(8)]}, data[j:]...)...)
			}
		}
		diffPaths(t, sdk.ModeConvert, parseFrames(t, wire(initReq, initResp, newReq, newResp, prompt(2, "hi"),
			"b64 a2c "+b64(string(data)),
			upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}`))))
	}
}

// TestFastPathKeepsNoLargeScratch: a large frame's rewrite does not leave
// its buffers with the translator (memory stays bounded by small frames).
func TestFastPathKeepsNoLargeScratch(t *testing.T) {
	big := strings.Repeat("x", 2*maxKeptBuf)
	frames := parseFrames(t, wire(initReq, initResp, newReq, newResp, prompt(2, "hi"),
		upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+big+`"}}`)))
	s, err := New().Start(context.Background(), startReq(sdk.ModeConvert, ""))
	if err != nil {
		t.Fatal(err)
	}
	tr := s.(*translator)
	if _, err := tr.Map(context.Background(), frames); err != nil {
		t.Fatal(err)
	}
	for _, c := range []int{cap(tr.fast.buf), cap(tr.fast.out)} {
		if c > maxKeptBuf {
			t.Errorf("the fast path keeps a %d-byte buffer after a large frame", c)
		}
	}
	if tr.fast.own.B != nil || tr.fast.tp != nil || tr.wire.Data != nil {
		t.Error("the translator keeps the last frame's bytes after Map")
	}
}

var blockSeeds = []string{
	`{"type":"text","text":"hi"}`, `{"text":"hi","type":"text"}`, `{"type":"text","text":""}`,
	`{"type":"text","text":7}`, `{"type":"text"}`, `{"type":"text","text":null}`, `{"text":"hi"}`,
	`{"type":"text","text":"hi","annotations":{"priority":1}}`, `{"type":"text","text":"hi","annotations":null}`,
	`{"type":"text","text":"hi","annotations":"x"}`, `{"type":"text","text":"hi","annotations":[]}`,
	`{"type":"text","text":"hi","_meta":{"a":1}}`, `{"type":"text","text":"hi","_meta":null}`, `{"type":"text","text":"hi","_meta":1}`,
	`{"type":"t\u0065xt","text":"hi"}`, `{"type":"image","data":"x","mimeType":"image/png"}`, `{"type":"image","text":"hi"}`,
	`{"type":"","text":"hi"}`, `{"type":null,"text":"hi"}`, `{"type":"refusal","text":"no"}`, `{}`,
}

// TestPlainTextBlock: a block the tape check takes is one the engine's check
// finds no problem with (the check only skips ValidBlockProblem).
func TestPlainTextBlock(t *testing.T) {
	took := 0
	for _, b := range blockSeeds {
		if checkPlainTextBlock(t, []byte(b)) {
			took++
		}
	}
	if took < 5 {
		t.Fatalf("the tape check took %d seeds", took)
	}
}

func FuzzPlainTextBlock(f *testing.F) {
	for _, b := range blockSeeds {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkPlainTextBlock(t, b) })
}

func checkPlainTextBlock(t *testing.T, b []byte) bool {
	t.Helper()
	var tp jsonscan.Tape
	if !tp.Parse(b) || !isObject(&tp, tp.Root()) {
		return false
	}
	ok := plainTextBlock(&tp, tp.Root())
	if p := acpasr.ValidBlockProblem(b); ok && p != "" {
		t.Fatalf("plainTextBlock(%s) = true; ValidBlockProblem: %s", b, p)
	}
	return ok
}

// TestSortMembers: sortMembers orders members by name as bytes.Compare
// does, small objects (the insertion sort) and large ones alike, in any
// input order.
func TestSortMembers(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := 0; n <= 40; n++ {
		for trial := 0; trial < 50; trial++ {
			ms := make([]member, n)
			for i := range ms {
				k := make([]byte, r.Intn(4))
				for j := range k {
					k[j] = byte('a' + r.Intn(4))
				}
				ms[i] = member{k: append(k, byte('0'+i%10), byte('0'+i/10)), v: []byte(strconv.Itoa(i))}
			}
			want := slices.Clone(ms)
			slices.SortFunc(want, func(a, b member) int { return bytes.Compare(a.k, b.k) })
			sortMembers(ms)
			if !slices.EqualFunc(ms, want, func(a, b member) bool { return bytes.Equal(a.k, b.k) && bytes.Equal(a.v, b.v) }) {
				t.Fatalf("n=%d: %q, want %q", n, ms, want)
			}
		}
	}
}

// TestDiffFrameCopies: the fast path's translation of a v1 diff names the
// texts it copies (Hint.Copied), every one taken by the engine's parse, so
// that the texts are not scanned a second time.
func TestDiffFrameCopies(t *testing.T) {
	for _, old := range []string{`"oldText":"a\n\"b\"\n",`, ``} {
		line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"x"}},{"type":"diff","path":"/a.go",` + old + `"newText":"c\n\td\n"},{"type":"diff","path":"/b.go","newText":"e\\f"}]}}}`
		tr, err := New().Start(context.Background(), startReq(sdk.ModeConvert, ""))
		if err != nil {
			t.Fatal(err)
		}
		f := sdk.Frame{Seq: 1, Dir: sdk.A2C, Kind: sdk.KindLine, Data: []byte(line)}
		list, ok := tr.(*translator).fastFrame(&f)
		want := 3
		if old == "" {
			want = 2
		}
		if !ok || len(list) != 1 || len(list[0].Hint.Copied) != want {
			t.Fatalf("%s: fast path %v, %d frames, copies %+v; want %d copies", line, ok, len(list), list, want)
		}
		copiesTaken(t, line, f.Data, list[0])
	}
}
