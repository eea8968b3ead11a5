package aep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	mt "github.com/acptap/acptap/sdk/mappertest"
)

// synthetic generates a long ACP session on one connection, turn by turn.
// A v2 turn is a prompt and its answer, run start and end by state_update,
// thought and message chunks, two tool calls (one completed, one failed)
// with content chunks, a late update of the previous turn's tool, a
// permission request and its answer, an fs/read_text_file round trip, a
// plan and usage; every tenth turn a form elicitation and its answer, every
// hundredth a URL elicitation left unanswered until after the session's
// close. A v1
// turn has the same traffic in v1 shapes, the response's stopReason ending
// the run. Every turn has its own ids. Responses carry ReplyTo as the
// host's router would set it.
type synthetic struct {
	v2      bool
	seq     uint64
	at      time.Time
	updates int
	turn    int
	client  int // next client → agent request id
	agent   int // next agent → client request id
	frames  []sdk.Frame
	// unanswered are requests answered only after the session's close.
	unanswered []func(result string)
}

func newSynthetic(v2 bool) *synthetic {
	g := &synthetic{v2: v2, at: base, client: 2}
	g.line(sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`, 0, "")
	g.line(sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`, 1, "initialize")
	g.session()
	g.line(sdk.C2A, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/tester/proj","mcpServers":[]}}`, 0, "")
	g.line(sdk.A2C, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`, g.seq, "session/new")
	return g
}

func (g *synthetic) session() {
	g.seq++
	g.frames = append(g.frames, sdk.Frame{Kind: sdk.KindSession, Seq: g.seq, Dir: sdk.C2A, At: g.at, Session: &sdk.SessionInfo{ID: "s1"}})
}

func (g *synthetic) line(dir sdk.Direction, data string, replyTo uint64, method string) uint64 {
	g.seq++
	g.at = g.at.Add(time.Millisecond)
	g.frames = append(g.frames, sdk.Frame{Kind: sdk.KindLine, Seq: g.seq, Dir: dir, At: g.at, Data: []byte(data), ReplyTo: replyTo, ReplyToMethod: method})
	return g.seq
}

func (g *synthetic) update(u string) {
	g.updates++
	g.line(sdk.A2C, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`+u+`}}`, 0, "")
}

// request sends a request and returns a function that sends its result.
func (g *synthetic) request(dir sdk.Direction, method, params string) func(result string) {
	var id int
	if dir == sdk.C2A {
		id, g.client = g.client, g.client+1
	} else {
		id, g.agent = g.agent, g.agent+1
	}
	ids := strconv.Itoa(id)
	seq := g.line(dir, `{"jsonrpc":"2.0","id":`+ids+`,"method":"`+method+`","params":`+params+`}`, 0, "")
	other := sdk.A2C
	if dir == sdk.A2C {
		other = sdk.C2A
	}
	return func(result string) {
		g.line(other, `{"jsonrpc":"2.0","id":`+ids+`,"result":`+result+`}`, seq, method)
	}
}

func (g *synthetic) tool(call, status, extra string) {
	kind := "tool_call_update"
	if !g.v2 && status == "pending" {
		kind = "tool_call"
	}
	g.update(`{"sessionUpdate":"` + kind + `","toolCallId":"` + call + `","status":"` + status + `"` + extra + `}`)
}

// next replaces g.frames with the frames of the next turn.
func (g *synthetic) next() []sdk.Frame {
	g.frames = g.frames[:0]
	g.turn++
	n := strconv.Itoa(g.turn)
	answer := g.request(sdk.C2A, "session/prompt", `{"sessionId":"s1","prompt":[{"type":"text","text":"turn `+n+`: please fix the greeting in /home/tester/proj"}]}`)
	if g.v2 {
		g.update(`{"sessionUpdate":"user_message_chunk","messageId":"u-` + n + `","content":{"type":"text","text":"turn ` + n + `: please fix the greeting"}}`)
		answer(`{"messageId":"u-` + n + `"}`)
		g.update(`{"sessionUpdate":"state_update","state":"running"}`)
	}
	for i := 0; i < 3; i++ {
		g.update(`{"sessionUpdate":"agent_thought_chunk","messageId":"t-` + n + `","content":{"type":"text","text":"thinking about it, step ` + strconv.Itoa(i) + `. "}}`)
	}
	if g.turn > 1 { // a late update of the previous turn's completed tool
		g.tool("c-"+strconv.Itoa(g.turn-1)+"-a", "completed", "")
	}
	a, b := "c-"+n+"-a", "c-"+n+"-b"
	g.tool(a, "pending", `,"name":"edit_file","title":"Edit src/hello.go","kind":"edit","rawInput":{"path":"/home/tester/proj/src/hello.go","token":"abc"}`)
	perm := g.request(sdk.A2C, "session/request_permission", `{"sessionId":"s1","toolCall":{"toolCallId":"`+a+`","title":"Edit src/hello.go"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}`)
	perm(`{"outcome":{"outcome":"selected","optionId":"allow"}}`)
	g.tool(a, "in_progress", "")
	read := g.request(sdk.A2C, "fs/read_text_file", `{"sessionId":"s1","path":"/home/tester/proj/src/hello.go"}`)
	read(`{"content":"package main\n\nfunc main() { println(\"helo\") }\n"}`)
	if g.v2 {
		g.update(`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"` + a + `","content":{"type":"content","content":{"type":"text","text":"Applying the edit"}}}`)
	}
	g.tool(a, "completed", `,"rawOutput":{"linesChanged":1}`)
	g.tool(b, "pending", `,"title":"Run tests","kind":"execute","rawInput":{"command":"go test ./..."}`)
	g.tool(b, "failed", `,"rawOutput":"exit status 1"`)
	if g.turn%10 == 0 {
		el := g.request(sdk.A2C, "elicitation/create", `{"sessionId":"s1","mode":"form","message":"Pick a branch","requestedSchema":{"type":"object","properties":{"branch":{"type":"string","enum":["main","dev"]},"note":{"type":"string","title":"Note"}},"required":["branch"]}}`)
		el(`{"action":"accept","content":{"branch":"dev","note":"ok"}}`)
	}
	if g.turn%100 == 0 { // never answered: dismissed when the session closes
		g.unanswered = append(g.unanswered, g.request(sdk.A2C, "elicitation/create", `{"sessionId":"s1","mode":"url","elicitationId":"e-`+n+`","url":"https://example.com/auth","message":"Sign in"}`))
	}
	for i := 0; i < 5; i++ {
		g.update(`{"sessionUpdate":"agent_message_chunk","messageId":"m-` + n + `","content":{"type":"text","text":"Here is part ` + strconv.Itoa(i) + ` of the answer. "}}`)
	}
	if g.v2 {
		g.update(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p-` + n + `","entries":[{"content":"Edit","priority":"high","status":"completed"},{"content":"Test","priority":"medium","status":"pending"}]}}`)
		g.update(`{"sessionUpdate":"usage_update","used":` + strconv.Itoa(1000+g.turn%5000) + `,"size":200000}`)
		g.update(`{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}`)
	} else {
		g.update(`{"sessionUpdate":"plan","entries":[{"content":"Edit","priority":"high","status":"completed"},{"content":"Test","priority":"medium","status":"pending"}]}`)
		g.update(`{"sessionUpdate":"usage_update","usedTokens":` + strconv.Itoa(1000+g.turn%5000) + `,"outputTokens":20}`)
		answer(`{"stopReason":"end_turn"}`)
	}
	return g.frames
}

// close ends the session: session/close and its answer, then the late
// answers of the requests the close dismissed.
func (g *synthetic) close() []sdk.Frame {
	g.frames = g.frames[:0]
	g.request(sdk.C2A, "session/close", `{"sessionId":"s1"}`)(`{}`)
	for _, answer := range g.unanswered {
		answer(`{"action":"cancel"}`)
	}
	g.unanswered = nil
	return g.frames
}

func syntheticConn(tb testing.TB, v2, deltas bool) *conn {
	tb.Helper()
	cfg := defaultCfg()
	cfg.Deltas = ptr(deltas)
	raw, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	input := "acp/1"
	if v2 {
		input = "acp/2@2.0.0-alpha.9"
	}
	s, err := New().Start(context.Background(), sdk.StartRequest{Config: raw, Connection: "c-mem", Input: input, Mode: sdk.ModeRecord})
	if err != nil {
		tb.Fatal(err)
	}
	return s.(*conn)
}

// heapAfterGC is the heap in use (spans with objects) after a full
// collection, in bytes, and of it the live objects (HeapAlloc).
func heapAfterGC() (inuse, live uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.HeapAlloc
}

// mapTurns maps turns more turns of g through c; sum, when not nil, takes
// every output.
func mapTurns(tb testing.TB, c *conn, g *synthetic, turns int, sum func([]sdk.Output)) {
	tb.Helper()
	ctx := context.Background()
	for i := 0; i < turns; i++ {
		outs, err := c.Map(ctx, g.next())
		if err != nil {
			tb.Fatal(err)
		}
		if sum != nil {
			sum(outs)
		}
	}
}

// BenchmarkMemory1MUpdates maps a session of 1,000,000 session/update
// notifications (about 50,000 turns) in process and reports the heap in use
// after GC, above what it was before the connection started, at 25, 50, 75
// and 100 % of the session, and the bytes each turn leaves behind (growth
// from 25 % to 100 % over the turns in between).
//
//	go test ./plugins/aep/ -run '^$' -bench Memory1M -benchtime 1x
func BenchmarkMemory1MUpdates(b *testing.B) {
	for _, v2 := range []bool{false, true} {
		b.Run(fmt.Sprintf("v2=%v", v2), func(b *testing.B) {
			for b.Loop() {
				mapSynthetic(b, v2, 1_000_000)
			}
		})
	}
}

func mapSynthetic(b *testing.B, v2 bool, limit int) {
	ctx := context.Background()
	before, _ := heapAfterGC()
	c := syntheticConn(b, v2, false)
	g := newSynthetic(v2)
	if _, err := c.Map(ctx, g.frames); err != nil {
		b.Fatal(err)
	}
	var heap []float64
	var turns []int
	for q := 1; q <= 4; q++ {
		for g.updates < limit*q/4 {
			mapTurns(b, c, g, 1, nil)
		}
		b.StopTimer()
		inuse, _ := heapAfterGC()
		h := float64(inuse) - float64(before)
		heap, turns = append(heap, h), append(turns, g.turn)
		b.ReportMetric(h/(1<<20), fmt.Sprintf("MiB-heap@%d%%", 25*q))
		b.StartTimer()
	}
	b.ReportMetric(float64(g.updates)/b.Elapsed().Seconds(), "updates/s")
	b.ReportMetric((heap[3]-heap[0])/float64(turns[3]-turns[0]), "B/turn")
	runtime.KeepAlive(c)
}

// syntheticDigest maps turns of the synthetic session, then closes it and
// finishes the connection, and returns the SHA-256 of every output.
func syntheticDigest(tb testing.TB, v2, deltas bool, turns int) string {
	c := syntheticConn(tb, v2, deltas)
	g := newSynthetic(v2)
	h := sha256.New()
	sum := func(outs []sdk.Output) {
		for _, o := range outs {
			fmt.Fprintf(h, "%d %s %v %s %s %s\n", o.Kind, o.Session, o.FrameSeqs, o.JSON, o.Summary, o.Detail)
		}
	}
	ctx := context.Background()
	outs, _ := c.Map(ctx, g.frames)
	sum(outs)
	mapTurns(tb, c, g, turns, sum)
	outs, _ = c.Map(ctx, g.close())
	sum(outs)
	outs, _ = c.Finish(ctx, "eof")
	sum(outs)
	return hex.EncodeToString(h.Sum(nil))
}

// TestSyntheticOutputsUnchanged pins the outputs of 1,000 synthetic turns
// (digests recorded before per-session state was released after use): what
// the mapper forgets must change no event.
func TestSyntheticOutputsUnchanged(t *testing.T) {
	want := map[[2]bool]string{
		{false, false}: "a7cbe4e1d330a275764220854c7ed74bff6c82bae370a28758955585223ac779",
		{false, true}:  "235955f627150e67238d10c1c5347535f48f58fd73098d753e55c292cdb51075",
		{true, false}:  "1aa449bcfb243d6b864f3213f549ce6fe4fc952f4ace9acb90d24ddb3ab2c528",
		{true, true}:   "ac60213989f84d4fbb136e7e1ae4879d5f74e1a13a824dbd990b9fc7eba5a731",
	}
	for k, digest := range want {
		if got := syntheticDigest(t, k[0], k[1], 1000); got != digest {
			t.Errorf("v2=%v deltas=%v: outputs digest %s, want %s", k[0], k[1], got, digest)
		}
	}
}

// TestMemoryBoundedByOpenState: over many turns the mapper holds what is
// open (runs, tool calls, attention requests, requests awaiting their
// response) and, of what is finished, only the ids of finished tool calls;
// the live heap grows by those ids, not by the turns' traffic (by about
// 1,400 B a turn before finished state was released).
func TestMemoryBoundedByOpenState(t *testing.T) {
	if testing.Short() {
		t.Skip("maps 10,000 turns")
	}
	for _, v2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("v2=%v", v2), func(t *testing.T) {
			_, before := heapAfterGC()
			c := syntheticConn(t, v2, false)
			g := newSynthetic(v2)
			if _, err := c.Map(context.Background(), g.frames); err != nil {
				t.Fatal(err)
			}
			check := func() uint64 {
				t.Helper()
				st := c.sessions["s1"]
				open := len(g.unanswered) // URL elicitations awaiting an answer
				if len(st.attention) != open || len(st.attOrder) != open || len(c.pending) != open || len(c.elicit) != open {
					t.Errorf("turn %d: %d attention, %d in attOrder, %d pending, %d elicitations, want %d of each",
						g.turn, len(st.attention), len(st.attOrder), len(c.pending), len(c.elicit), open)
				}
				if len(st.ids) != open || len(st.runs) != 0 || len(st.unbound) != 0 || len(st.tools) != 0 {
					t.Errorf("turn %d: %d ids (want %d), %d runs, %d unbound prompts, %d tools held in full, want none",
						g.turn, len(st.ids), open, len(st.runs), len(st.unbound), len(st.tools))
				}
				if len(c.order) > 2*len(c.pending)+64 {
					t.Errorf("turn %d: %d keys in the pending order for %d pending", g.turn, len(c.order), len(c.pending))
				}
				if len(st.toolsDone) != 2*g.turn {
					t.Errorf("turn %d: %d finished tool calls known, want %d", g.turn, len(st.toolsDone), 2*g.turn)
				}
				_, live := heapAfterGC()
				return live - before
			}
			mapTurns(t, c, g, 1000, nil)
			h1 := check()
			mapTurns(t, c, g, 9000, nil)
			h10 := check()
			perTurn := (float64(h10) - float64(h1)) / 9000
			t.Logf("live heap %.2f MiB after 1,000 turns, %.2f MiB after 10,000: %.0f B/turn", float64(h1)/(1<<20), float64(h10)/(1<<20), perTurn)
			// Two finished tool ids a turn, with the map holding them, are
			// ~120 B (HeapAlloc is exact where HeapInuse varies with spans).
			if perTurn > 256 {
				t.Errorf("live heap grows by %.0f B a turn, want at most 256", perTurn)
			}
			runtime.KeepAlive(c)
		})
	}
}

// TestLateEventsAfterRelease: what is released is what no later event
// needs. A tool call updated after its terminal (turns later) is still
// x.acp.tool_call.update, in v1 and v2; a permission request dismissed by
// the session's close and answered afterwards still has its answer name
// the request; and once answered, nothing of the request is left.
func TestLateEventsAfterRelease(t *testing.T) {
	for _, input := range []string{"acp/1", "acp/2@2.0.0-alpha.9"} {
		t.Run(input, func(t *testing.T) {
			kind := "tool_call"
			if input != "acp/1" {
				kind = "tool_call_update"
			}
			evs := mapAll(t, defaultCfg(), input, wire(nil, v1Session(
				upd(`{"sessionUpdate":"`+kind+`","toolCallId":"t1","title":"Edit","status":"pending"}`),
				upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`),
				upd(`{"sessionUpdate":"`+kind+`","toolCallId":"t2","title":"Run","status":"pending"}`),
				upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"failed"}`),
				upd(`{"sessionUpdate":"`+kind+`","toolCallId":"t1","status":"completed"}`),
				mt.A2C(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":[]}}`),
				mt.C2A(`{"jsonrpc":"2.0","id":5,"method":"session/close","params":{"sessionId":"s1"}}`),
				mt.A2C(`{"jsonrpc":"2.0","id":5,"result":{}}`),
				mt.C2A(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`),
			)...))
			want := "session.started tool.requested tool.completed tool.requested tool.failed x.acp.tool_call.update " +
				"attention.requested attention.resolved session.ended attention.answered"
			if got := types(evs); got != want {
				t.Fatalf("types: %s\nwant:  %s", got, want)
			}
			req, late := ofType(evs, "attention.requested")[0], ofType(evs, "attention.answered")[0]
			if late.Subj != req.ID || late.Caus != req.ID {
				t.Errorf("late answer: subject %q, cause %q, want the request %q", late.Subj, late.Caus, req.ID)
			}
		})
	}
	c := syntheticConn(t, true, false)
	outs, err := c.Map(context.Background(), wire(nil, v1Session(
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","title":"Edit","status":"completed"}`),
		mt.A2C(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":[]}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}`),
	)...))
	if err != nil || len(outs) != 5 {
		t.Fatalf("%d outputs, %v", len(outs), err)
	}
	st := c.sessions["s1"]
	if len(st.ids) != 0 || len(st.tools) != 0 || len(st.attention) != 0 || len(st.attOrder) != 0 || len(c.pending) != 0 {
		t.Errorf("left: ids %v, %d tools, %d attention, %d in attOrder, %d pending", st.ids, len(st.tools), len(st.attention), len(st.attOrder), len(c.pending))
	}
	if _, ok := st.toolsDone["t1"]; !ok || len(st.toolsDone) != 1 {
		t.Errorf("finished tools %v, want t1", st.toolsDone)
	}
}
