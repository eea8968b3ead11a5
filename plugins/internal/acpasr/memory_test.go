package acpasr

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

// synthetic generates a long ACP v2 session, turn by turn: each turn has a
// prompt and its echo, a thought and a message in chunks, a tool call with
// a diff, a plan, a terminal, usage and state updates — 22 session/update
// notifications and 6 entities a turn.
type synthetic struct {
	seq     uint64
	at      time.Time
	updates int
	turn    int
	frames  []sdk.Frame
}

func newSynthetic() *synthetic {
	g := &synthetic{at: base}
	g.line(sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"bench","version":"1"}}}`, 0, "")
	g.line(sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"Bench Agent","version":"1"}}}`, 1, "initialize")
	g.line(sdk.C2A, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w/proj"}}`, 0, "")
	g.line(sdk.A2C, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`, 3, "session/new")
	return g
}

func (g *synthetic) line(dir sdk.Direction, data string, replyTo uint64, method string) {
	g.seq++
	g.at = g.at.Add(time.Millisecond)
	g.frames = append(g.frames, sdk.Frame{Kind: sdk.KindLine, Seq: g.seq, Dir: dir, At: g.at, Data: []byte(data), ReplyTo: replyTo, ReplyToMethod: method})
}

func (g *synthetic) update(u string) {
	g.updates++
	g.line(sdk.A2C, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`+u+`}}`, 0, "")
}

// next replaces g.frames with the frames of the next turn.
func (g *synthetic) next() []sdk.Frame {
	g.frames = g.frames[:0]
	g.turn++
	n := strconv.Itoa(g.turn)
	id := strconv.Itoa(g.turn + 1)
	g.line(sdk.C2A, `{"jsonrpc":"2.0","id":`+id+`,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"turn `+n+`: please fix the greeting"}]}}`, 0, "")
	prompt := g.seq
	g.update(`{"sessionUpdate":"user_message_chunk","messageId":"u-` + n + `","content":{"type":"text","text":"turn ` + n + `: please fix the greeting"}}`)
	g.line(sdk.A2C, `{"jsonrpc":"2.0","id":`+id+`,"result":{"messageId":"u-`+n+`"}}`, prompt, "session/prompt")
	g.update(`{"sessionUpdate":"state_update","state":"running"}`)
	for i := 0; i < 3; i++ {
		g.update(`{"sessionUpdate":"agent_thought_chunk","messageId":"t-` + n + `","content":{"type":"text","text":"thinking about it, step ` + strconv.Itoa(i) + `. "}}`)
	}
	for i := 0; i < 5; i++ {
		g.update(`{"sessionUpdate":"agent_message_chunk","messageId":"m-` + n + `","content":{"type":"text","text":"Here is part ` + strconv.Itoa(i) + ` of the answer. "}}`)
	}
	call := "c-" + n
	g.update(`{"sessionUpdate":"tool_call_update","toolCallId":"` + call + `","name":"edit_file","title":"Edit src/hello.go","kind":"edit","status":"pending","rawInput":{"path":"/w/proj/src/hello.go"},"locations":[{"path":"/w/proj/src/hello.go","line":5}]}`)
	g.update(`{"sessionUpdate":"tool_call_update","toolCallId":"` + call + `","status":"in_progress"}`)
	g.update(`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"` + call + `","content":{"type":"content","content":{"type":"text","text":"Applying "}}}`)
	g.update(`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"` + call + `","content":{"type":"content","content":{"type":"text","text":"the edit"}}}`)
	g.update(`{"sessionUpdate":"tool_call_update","toolCallId":"` + call + `","status":"completed","content":[{"type":"diff","changes":[{"operation":"modify","path":"/w/proj/src/hello.go"}],"patch":{"format":"git_patch","text":"diff --git a/src/hello.go b/src/hello.go\n@@ -5 +5 @@\n-helo\n+hello\n"}},{"type":"content","content":{"type":"text","text":"Edited 1 line."}}],"rawOutput":{"linesChanged":1}}`)
	g.update(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p-` + n + `","entries":[{"content":"Edit","priority":"high","status":"completed"},{"content":"Test","priority":"medium","status":"pending"}]}}`)
	term := "term-" + n
	g.update(`{"sessionUpdate":"terminal_update","terminalId":"` + term + `","command":"go test ./...","cwd":"/w/proj"}`)
	g.update(`{"sessionUpdate":"terminal_output_chunk","terminalId":"` + term + `","data":"PT09IFJVTiAgIFRlc3RIZWxsbwo="}`)
	g.update(`{"sessionUpdate":"terminal_output_chunk","terminalId":"` + term + `","data":"b2sgIGV4YW1wbGUvaGVsbG8K"}`)
	g.update(`{"sessionUpdate":"terminal_update","terminalId":"` + term + `","exitStatus":{"exitCode":0}}`)
	g.update(`{"sessionUpdate":"usage_update","used":` + strconv.Itoa(1000+g.turn%5000) + `,"size":200000}`)
	g.update(`{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}`)
	return g.frames
}

// heapAfterGC is the live heap, in bytes, after a full collection.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestMemoryGrowsWithOpenEntities: over many turns, the entities held in
// full stay those of the last turns; the others are kept as fingerprints.
func TestMemoryGrowsWithOpenEntities(t *testing.T) {
	cfg, _ := ParseConfig(nil)
	c := NewSession(testOptions(cfg), startReq("")).c
	g := newSynthetic()
	ctx := context.Background()
	if _, err := c.Map(ctx, g.frames); err != nil {
		t.Fatal(err)
	}
	const turns = 300
	for i := 0; i < turns; i++ {
		if _, err := c.Map(ctx, g.next()); err != nil {
			t.Fatal(err)
		}
	}
	s := c.streams["s1"]
	if held := len(s.ents); held > 2*6 {
		t.Errorf("%d entities held in full after %d turns, want at most two turns' worth (12)", held, turns)
	}
	if total := len(s.ents) + len(s.done); total != 6*turns {
		t.Errorf("%d entities known, want %d", total, 6*turns)
	}
	if len(c.pending) != 0 || len(s.dirty) != 0 || len(s.unwritten) != 0 {
		t.Errorf("pending %d, dirty %d, unwritten %d", len(c.pending), len(s.dirty), len(s.unwritten))
	}
}

// BenchmarkMemory1MUpdates maps a 1,000,000-update session in process and
// reports the live heap after GC at 250k, 500k and 1M updates, and the
// bytes each released entity costs. "keep-all" is the baseline in the same
// run: nothing released (only to 250k updates).
//
//	go test ./plugins/internal/acpasr/ -run '^$' -bench Memory1M -benchtime 1x
func BenchmarkMemory1MUpdates(b *testing.B) {
	for _, v := range []struct {
		name    string
		release int
		limit   int
	}{{"release", 2, 1_000_000}, {"keep-all", math.MaxInt / 2, 250_000}} {
		b.Run(v.name, func(b *testing.B) {
			defer func(r int) { releaseAfter = r }(releaseAfter)
			releaseAfter = v.release
			for b.Loop() {
				mapSynthetic(b, v.limit)
			}
		})
	}
}

func mapSynthetic(b *testing.B, limit int) {
	cfg, _ := ParseConfig(nil)
	ctx := context.Background()
	before := heapAfterGC()
	c := NewSession(testOptions(cfg), startReq("")).c
	g := newSynthetic()
	if _, err := c.Map(ctx, g.frames); err != nil {
		b.Fatal(err)
	}
	marks := []int{250_000, 500_000, 1_000_000}
	var heap []float64
	var ents []int
	for g.updates < limit {
		if _, err := c.Map(ctx, g.next()); err != nil {
			b.Fatal(err)
		}
		if len(heap) < len(marks) && g.updates >= marks[len(heap)] {
			b.StopTimer()
			heap = append(heap, float64(heapAfterGC()-before))
			s := c.streams["s1"]
			ents = append(ents, len(s.ents)+len(s.done))
			b.ReportMetric(heap[len(heap)-1]/1e6, fmt.Sprintf("MB-heap@%dk", marks[len(heap)-1]/1000))
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(g.updates)/b.Elapsed().Seconds(), "updates/s")
	if len(heap) == 3 {
		b.ReportMetric((heap[2]-heap[0])/float64(ents[2]-ents[0]), "B/released-entity")
	}
	runtime.KeepAlive(c)
}
