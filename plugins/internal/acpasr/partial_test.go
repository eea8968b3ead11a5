package acpasr

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/mappertest"
	"github.com/google/go-cmp/cmp"
)

// partialFixture is a session whose entities stay open over many updates:
// a message streamed in chunks, a tool call with a diff and streamed
// output that completes, one that is still running when the turn ends, a
// compaction with a streamed summary, a terminal, and a plan.
var partialFixture = opened(
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"a"}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"b"}}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","name":"edit","kind":"edit","status":"pending","content":[{"type":"diff","changes":[{"operation":"modify","path":"/w/proj/a.go"}],"patch":{"format":"unified","text":"--- a\n+++ b\n"}}]}`),
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"c"}}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"in_progress"}`),
	upd(`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"t","content":{"type":"content","content":{"type":"text","text":"x"}}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"d"}}`),
	upd(`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"t","content":{"type":"content","content":{"type":"text","text":"y"}}}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed","rawOutput":{"ok":true}}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"r","name":"sh","kind":"execute","status":"in_progress","rawOutput":"1"}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"r","rawOutput":"12"}`),
	upd(`{"sessionUpdate":"terminal_output_chunk","terminalId":"term","data":"b2s="}`),
	upd(`{"sessionUpdate":"terminal_output_chunk","terminalId":"term","data":"IQ=="}`),
	upd(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[{"content":"one","priority":"high","status":"pending"}]}}`),
	upd(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[{"content":"one","priority":"high","status":"completed"}]}}`),
	upd(`{"sessionUpdate":"compaction_summary_chunk","compactionId":"k","content":{"type":"text","text":"sum"}}`),
	upd(`{"sessionUpdate":"compaction_summary_chunk","compactionId":"k","content":{"type":"text","text":"mary"}}`),
	upd(`{"sessionUpdate":"compaction_update","compactionId":"k","status":"completed"}`),
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"e"}}`),
	idle,
)

// TestASR705_PartialSnapshots: with partialEvery, an entity that has
// folded that many updates since its last record and is not final gets a
// snapshot, with status "partial" where the type has one; the final record
// supersedes it where it differs (ASR-705's MAY, ASR-706).
func TestASR705_PartialSnapshots(t *testing.T) {
	outs := mapAll(t, startReq(`{"partialEvery":2}`), parseFrames(t, partialFixture))
	checkStreams(t, outs)
	rs := records(t, outs, "s1")
	var got []string
	for _, r := range rs[1:] {
		if r["type"] == "declaration" {
			continue
		}
		key := str(r["messageId"]) + str(r["callId"]) + str(r["planId"]) + str(r["compactionId"]) + str(r["terminalId"])
		if r["type"] == "file_change" {
			key = r["cause"].(map[string]any)["callId"].(string)
		}
		got = append(got, fmt.Sprintf("%s:%s:%s>%s", r["type"], key, str(r["status"]), str(r["supersedes"])))
	}
	want := []string{
		// m reaches 2 updates: a snapshot of "ab".
		"message:m:>",
		// t reaches 2 (pending, in_progress): tool_call, file_change partial.
		"tool_call:t:>",
		"file_change:t:partial>",
		// m again at "abcd" (c, d).
		"message:m:>r1",
		// t again after two output chunks: a partial result "xy".
		"tool_result:t:partial>",
		// t completes: the file change is applied, the result final.
		"file_change:t:applied>r4",
		"tool_result:t:completed>r7",
		// r reaches 2 with output: a partial result.
		"tool_call:r:>",
		"tool_result:r:partial>",
		// term reaches 2 chunks: terminals have running/exited, no partial.
		"terminal:term:running>",
		// p reaches 2 upserts: the plan so far.
		"plan:p:>",
		// k reaches 2 chunks: a partial compaction, then its final record.
		"compaction:k:partial>",
		"compaction:k:completed>r14",
		// The turn ends: m is final ("abcde"); r stays running, its
		// partial result stands until a final status; term and p have not
		// changed since their snapshots, so nothing repeats them.
		"message:m:>r5",
		"state::>",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s\nstream:\n%s", diff, render(outs))
	}
	for _, r := range ofType(rs, "message") {
		if r["supersedes"] == "r5" && js(r["content"]) != `[{"text":"abcde","type":"text"}]` {
			t.Errorf("final message content = %s", js(r["content"]))
		}
	}
}

// TestASR705_PartialOffByDefault: without partialEvery the same session
// writes no partial record, and fewer records: none before an entity is
// final but the ones the order of first sight needs (a call completing
// mid-turn writes the open message before it, TestASR705_OrderOfFirstSight).
func TestASR705_PartialOffByDefault(t *testing.T) {
	frames := parseFrames(t, partialFixture)
	outs := mapAll(t, startReq(""), frames)
	checkStreams(t, outs)
	rs := records(t, outs, "s1")
	for _, r := range rs[1:] {
		if r["status"] == "partial" {
			t.Errorf("partial record with partial snapshots off: %s", js(r))
		}
	}
	if n, m := len(rs), len(records(t, mapAll(t, startReq(`{"partialEvery":2}`), frames), "s1")); n >= m {
		t.Errorf("%d records without snapshots, %d with", n, m)
	}
}

// TestASR705_PartialSameContextView: partial snapshots change the path,
// never where it ends: for every value of partialEvery, the context view at
// the head equals the one written without snapshots, except that a call
// still running at the end keeps its partial result.
func TestASR705_PartialSameContextView(t *testing.T) {
	want := contextView(t, mapAll(t, startReq(""), parseFrames(t, partialFixture)))
	for _, n := range []int{1, 2, 3, 5, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			outs := mapAll(t, startReq(fmt.Sprintf(`{"partialEvery":%d}`, n)), parseFrames(t, partialFixture))
			checkStreams(t, outs)
			got := contextView(t, outs)
			var partial []string
			got = slicesDeleteFunc(got, func(s string) bool {
				if strings.HasPrefix(s, "tool_result:r ") && strings.Contains(s, `"status":"partial"`) {
					partial = append(partial, s)
					return true
				}
				return false
			})
			if n <= 2 && len(partial) != 1 {
				t.Errorf("the running call r has no partial result in the view: %v", partial)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("context view (-without snapshots +with):\n%s", diff)
			}
		})
	}
}

// TestASR705_PartialNotInReplay: a history replay writes no snapshots: a
// replayed entity is compared with what was recorded once its replayed
// turn is over (ASR-717). The resumed connection of TestASR717_ResumeReplay
// (a replay, then a permission written at once) writes exactly the same
// with a snapshot every update as without.
func TestASR705_PartialNotInReplay(t *testing.T) {
	first := mapAll(t, startReq(""), parseFrames(t, wire(firstConnection...)))
	lines := []string{initReq, initResp, sessionLine("s1", 1, streamLines(first, "s1")), resumeReq}
	lines = append(lines, replayedHistory...)
	lines = append(lines,
		upd(`{"sessionUpdate":"state_update","state":"idle"}`),
		`a2c {"jsonrpc":"2.0","id":1,"result":{}}`,
		permReq("0", `{"type":"tool_call","toolCall":{"toolCallId":"c2"}}`),
		`c2a {"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"no"}}}`,
		idle,
	)
	frames := parseFrames(t, wire(lines...))
	without := render(mapAll(t, startReq(""), frames))
	with := render(mapAll(t, startReq(`{"partialEvery":1}`), frames))
	if !bytes.Equal(with, without) {
		t.Errorf("partialEvery 1 changed the resumed connection:\n%s\nwithout:\n%s", with, without)
	}
	if !bytes.Contains(without, []byte(`"observedAt"`)) {
		t.Fatal("the fixture replays no history")
	}
}

// TestPartialDeterministic: snapshots are triggered by update counts, so
// outputs do not depend on how frames are batched or on the transport.
func TestPartialDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gRPC servers")
	}
	mappertest.Suite{New: newMapper, Start: startReq(`{"partialEvery":2}`), Corpus: map[string][]sdk.Frame{
		"partial": parseFrames(t, partialFixture),
		"full":    loadFrames(t, "full"),
	}}.Run(t)
}

// TestPartialEveryConfig: a negative count is a configuration error.
func TestPartialEveryConfig(t *testing.T) {
	if _, err := ParseConfig([]byte(`{"partialEvery":-1}`)); !errors.Is(err, ErrConfig) {
		t.Errorf("partialEvery -1: err = %v, want ErrConfig", err)
	}
	if c, err := ParseConfig([]byte(`{"partialEvery":25}`)); err != nil || c.PartialEvery != 25 {
		t.Errorf("partialEvery 25: %+v, %v", c.PartialEvery, err)
	}
}

// contextView renders s1's context view at the head: each entity's type,
// key and latest revision without the fields that depend on the path
// (record ids and seqs, times, supersedes, native); a compaction's
// replaces.throughId is resolved to the entity it names.
func contextView(t *testing.T, outs []sdk.Output) []string {
	t.Helper()
	var buf bytes.Buffer
	byID := map[string]string{}
	for _, o := range outs {
		if (o.Kind == sdk.ASRHeader || o.Kind == sdk.ASRRecord) && o.Session == "s1" {
			buf.Write(o.JSON)
			buf.WriteByte('\n')
			r := decode(string(o.JSON))
			byID[str(r["id"])] = str(r["type"]) + ":" + str(r["messageId"]) + str(r["callId"]) + str(r["planId"]) + str(r["compactionId"]) + str(r["terminalId"])
		}
	}
	view, err := asr.ContextView(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range view {
		r := strip(decode(string(e.Latest.Line)))
		delete(r, "supersedes")
		if rp, ok := r["replaces"].(map[string]any); ok {
			rp["throughId"] = byID[str(rp["throughId"])]
		}
		key := e.Key
		if e.Type == asr.TypeFileChange {
			key = "(file change)"
		}
		out = append(out, e.Type+":"+key+" "+js(r))
	}
	return out
}

func slicesDeleteFunc(s []string, del func(string) bool) []string {
	out := s[:0]
	for _, x := range s {
		if !del(x) {
			out = append(out, x)
		}
	}
	return out
}

// TestASR705_PartialWaitsForPrompt: the prompt's message is known only
// from the session/prompt response and goes first in its turn, so while a
// prompt is unanswered snapshots wait; answered at once (as ACP v2 agents
// do), the turn's snapshots follow it.
func TestASR705_PartialWaitsForPrompt(t *testing.T) {
	const (
		prompt = `c2a {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`
		answer = `a2c {"jsonrpc":"2.0","id":2,"result":{"messageId":"u"}}`
	)
	chunk := func(text string) string {
		return upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"` + text + `"}}`)
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		// The idle flush writes m before u is known (as it does without
		// snapshots); the waiting snapshots are then no longer needed.
		{"answered after the turn", []string{prompt, chunk("a"), chunk("b"), idle, answer},
			[]string{"message:m>", "state:>", "message:u>"}},
		{"answered at once", []string{prompt, answer, chunk("a"), chunk("b"), idle},
			[]string{"message:u>", "message:m>", "message:m>r2", "state:>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs := mapAll(t, startReq(`{"partialEvery":1}`), parseFrames(t, opened(tt.lines...)))
			checkStreams(t, outs)
			var got []string
			for _, r := range records(t, outs, "s1")[1:] {
				got = append(got, str(r["type"])+":"+str(r["messageId"])+">"+str(r["supersedes"]))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s\n%s", diff, render(outs))
			}
			plain := render(mapAll(t, startReq(""), parseFrames(t, opened(tt.lines...))))
			if same := bytes.Equal(render(outs), plain); same != (tt.lines[1] != answer) {
				t.Errorf("same output as without snapshots: %v", same)
			}
		})
	}
}
