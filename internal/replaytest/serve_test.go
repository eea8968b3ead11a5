package replaytest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/internal/testpeers"
)

// serveConn drives `acptap replay --serve STORE`, every line checked
// against the ACP v2 schema in both directions.
type serveConn struct {
	t   *testing.T
	p   *testpeers.Proc
	out *bufio.Reader
	id  int
}

func startServe(t *testing.T, store string) *serveConn {
	t.Helper()
	p := testpeers.StartChecked(t, testpeers.V2, []string{acptapBin, "replay", "--serve", store})
	return &serveConn{t: t, p: p, out: bufio.NewReaderSize(p.Stdout, 1<<20)}
}

type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// call sends a request and returns the notifications sent before its
// response, and the response.
func (c *serveConn) call(method string, params any) ([]string, reply) {
	c.t.Helper()
	c.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	c.send(string(b))
	var notes []string
	for {
		line := c.read()
		var r reply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			c.t.Fatalf("not JSON: %s", line)
		}
		if r.Method != "" {
			notes = append(notes, line)
			continue
		}
		if string(r.ID) != fmt.Sprint(c.id) {
			c.t.Fatalf("response id %s, want %d", r.ID, c.id)
		}
		return notes, r
	}
}

func (c *serveConn) send(line string) {
	c.t.Helper()
	if _, err := c.p.Stdin.Write([]byte(line + "\n")); err != nil {
		c.t.Fatal(err)
	}
}

func (c *serveConn) read() string {
	c.t.Helper()
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := c.out.ReadString('\n')
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatalf("read: %v", r.err)
		}
		return strings.TrimSuffix(r.s, "\n")
	case <-time.After(time.Minute):
		c.t.Fatal("no answer within a minute")
	}
	return ""
}

// TestReplayServe: acptap as a read-only ACP v2 agent: initialize,
// session/list of the stored sessions, session/resume with replayFrom start
// (the replay, then the current state, then the response), prompts and
// changes refused, unknown methods -32601.
func TestReplayServe(t *testing.T) {
	store, id := demoStore(t)
	c := startServe(t, store)
	_, r := c.call("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "test", "version": "1"}})
	var init struct {
		ProtocolVersion int `json:"protocolVersion"`
		Info            struct {
			Name string `json:"name"`
		} `json:"info"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &init) != nil || init.ProtocolVersion != 2 || init.Info.Name != "acptap-replay" {
		t.Fatalf("initialize: %s %+v", r.Result, r.Error)
	}

	_, r = c.call("session/list", map[string]any{})
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
			Title     string `json:"title"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(r.Result, &list); err != nil || len(list.Sessions) != 2 {
		t.Fatalf("session/list: %s", r.Result)
	}
	if s := list.Sessions[0]; s.SessionID != "sess-every" || s.Cwd != "/w/proj" || s.Title != "Fix x.go and docs" {
		t.Errorf("sess-every listed as %+v", s)
	}
	if s := list.Sessions[1]; s.SessionID != id || s.Cwd == "" {
		t.Errorf("the demo session listed as %+v", s)
	}
	_, r = c.call("session/list", map[string]any{"cwd": "/w/proj"})
	if json.Unmarshal(r.Result, &list); len(list.Sessions) != 1 {
		t.Errorf("cwd filter: %s", r.Result)
	}

	for _, sid := range []string{id, "sess-every"} {
		want := lines(acptap(t, "", "replay", "--store", store, sid).stdout)
		notes, r := c.call("session/resume", map[string]any{"sessionId": sid, "cwd": "/w", "replayFrom": map[string]any{"type": "start"}})
		if r.Error != nil {
			t.Fatalf("resume %s: %+v", sid, r.Error)
		}
		last := decodeUpdate(t, want[len(want)-1]).Params.Update
		if last["sessionUpdate"] != "state_update" || last["state"] != "idle" {
			want = append(want, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"`+sid+`","update":{"sessionUpdate":"state_update","state":"idle"}}}`)
		}
		if diff := cmp.Diff(want, notes); diff != "" {
			t.Errorf("resume %s: updates differ from `acptap replay` (-want +got):\n%s", sid, diff)
		}
		var res struct {
			ConfigOptions json.RawMessage `json:"configOptions"`
			Meta          map[string]struct {
				Recording  bool            `json:"recording"`
				LossReport json.RawMessage `json:"lossReport"`
			} `json:"_meta"`
		}
		json.Unmarshal(r.Result, &res)
		m := res.Meta["org.acptap/replay"]
		if !m.Recording || parseReport(t, string(m.LossReport)).SessionID != sid {
			t.Errorf("resume %s result: %s", sid, r.Result)
		}
		if sid == "sess-every" && !strings.Contains(string(res.ConfigOptions), "m-large") {
			t.Errorf("the recorded config is not in configOptions: %s", r.Result)
		}
	}

	notes, r := c.call("session/resume", map[string]any{"sessionId": id, "cwd": "/w"})
	if r.Error != nil || len(notes) != 1 || !strings.Contains(notes[0], `"state":"idle"`) {
		t.Errorf("resume without replay: %v %s %+v", notes, r.Result, r.Error)
	}
	errCases := []struct {
		method string
		params any
		code   int
		msg    string
	}{
		{"session/resume", map[string]any{"sessionId": "nope", "cwd": "/w", "replayFrom": map[string]any{"type": "start"}}, -32002, "no recorded session"},
		{"session/resume", map[string]any{"sessionId": id, "cwd": "/w", "replayFrom": map[string]any{"type": "_acme_cursor"}}, -32602, "replayFrom"},
		{"session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, -32099, "is a recording"},
		{"session/new", map[string]any{"cwd": "/w"}, -32099, "read-only"},
		{"session/set_config_option", map[string]any{"sessionId": id, "configId": "model", "type": "id", "value": "x"}, -32099, "read-only"},
		{"_acme/unknown", map[string]any{}, -32601, "Method not found"},
	}
	for _, ec := range errCases {
		notes, r := c.call(ec.method, ec.params)
		if len(notes) != 0 || r.Error == nil || r.Error.Code != ec.code || !strings.Contains(r.Error.Message, ec.msg) {
			t.Errorf("%s: notes %v, error %+v; want code %d with %q", ec.method, notes, r.Error, ec.code, ec.msg)
		}
	}
	_, r = c.call("session/close", map[string]any{"sessionId": id})
	if r.Error != nil {
		t.Errorf("session/close: %+v", r.Error)
	}
	c.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + id + `"}}`)
	c.send(`[{"jsonrpc":"2.0","id":100,"method":"session/list","params":{}},{"jsonrpc":"2.0","id":101,"method":"_acme/x","params":{}}]`)
	var batch []reply
	if line := c.read(); json.Unmarshal([]byte(line), &batch) != nil || len(batch) != 2 || batch[1].Error == nil || batch[1].Error.Code != -32601 {
		t.Errorf("batch answer: %s", line)
	}
	c.p.Stdin.Close()
	if err := c.p.Wait(); err != nil {
		t.Errorf("acptap replay --serve exit: %v", err)
	}
}

// TestReplayServeMalformed: lines that are not JSON-RPC get JSON-RPC
// errors with id null; the server goes on.
func TestReplayServeMalformed(t *testing.T) {
	store, _ := demoStore(t)
	in := "not json\n[1\n42\n\n" + `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"t","version":"1"}}}` + "\n"
	r := acptap(t, in, "replay", "--serve", store)
	got := lines(r.stdout)
	if r.code != 0 || len(got) != 4 {
		t.Fatalf("exit %d, stdout:\n%s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for i, want := range []string{`"code":-32700`, `"code":-32700`, `"code":-32600`, `"id":7,"result"`} {
		if !strings.Contains(got[i], want) {
			t.Errorf("line %d = %s, want %s", i+1, got[i], want)
		}
	}
	if r := acptap(t, "", "replay", "--serve", store, "extra"); r.code != 2 {
		t.Errorf("--serve with an argument: exit %d", r.code)
	}
	missing := filepath.Join(t.TempDir(), "no-store")
	if r := acptap(t, "", "replay", "--serve", missing); r.code != 1 || !strings.Contains(r.stderr, "no store") {
		t.Errorf("--serve of a missing store: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("--serve created the missing store")
	}
}

// sdkReplaySummary is what v2-replay-client.mjs writes.
type sdkReplaySummary struct {
	ProtocolVersion int `json:"protocolVersion"`
	Sessions        []struct {
		SessionID string `json:"sessionId"`
	} `json:"sessions"`
	Resumed  []string `json:"resumed"`
	Received []struct {
		SessionID     string `json:"sessionId"`
		SessionUpdate string `json:"sessionUpdate"`
		ID            any    `json:"id"`
	} `json:"received"`
	TotalUpdates int `json:"totalUpdates"`
	PromptError  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"promptError"`
	UnknownMethodError *struct {
		Code int `json:"code"`
	} `json:"unknownMethodError"`
	ValidationErrors []json.RawMessage `json:"validationErrors"`
	Errors           []json.RawMessage `json:"errors"`
	OK               bool              `json:"ok"`
}

// TestReplayServeSDKClient: the official SDK's v2 client, connected to
// `acptap replay --serve`, lists the stored sessions, resumes each one with
// replayFrom start and receives every replayed update (the SDK drops, and
// reports, updates that do not validate), sees a prompt refused, and every
// line on the wire validates against the ACP v2 schema. The store holds a
// session the SDK's own v2 agent drove through `acptap record` (every
// update kind), the demo session and the stream with every record type.
func TestReplayServeSDKClient(t *testing.T) {
	sdk, sdkID := sdkStore(t)
	demo, demoID := demoStore(t)
	store := t.TempDir()
	for _, s := range []struct{ from, id string }{{sdk, sdkID}, {demo, demoID}, {demo, "sess-every"}} {
		b, err := os.ReadFile(streamFile(s.from, s.id))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(streamFile(store, s.id)), 0o700)
		if err := os.WriteFile(streamFile(store, s.id), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := testpeers.NodeSDKDir(t)
	tmp := t.TempDir()
	summaryPath, trace := filepath.Join(tmp, "summary.json"), filepath.Join(tmp, "trace.jsonl")
	cmd := exec.Command("node", filepath.Join(dir, "v2-replay-client.mjs"), "--summary", summaryPath, "--trace", trace, "--",
		acptapBin, "replay", "--serve", store)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	b, rerr := os.ReadFile(summaryPath)
	if rerr != nil {
		t.Fatalf("no summary (%v): %v\n%s", err, rerr, out)
	}
	var s sdkReplaySummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if err != nil || !s.OK || len(s.Errors) > 0 || len(s.ValidationErrors) > 0 {
		t.Fatalf("SDK client: %v ok=%v errors=%s validationErrors=%s\n%s", err, s.OK, s.Errors, s.ValidationErrors, out)
	}
	if len(s.Sessions) != 3 || len(s.Resumed) != 3 {
		t.Errorf("listed %d, resumed %d sessions, want 3 and 3", len(s.Sessions), len(s.Resumed))
	}
	kinds := map[string]bool{}
	for _, sid := range s.Resumed {
		var want, got []string
		for _, l := range lines(acptap(t, "", "replay", "--store", store, sid).stdout) {
			u := decodeUpdate(t, l).Params.Update
			want = append(want, fmt.Sprintf("%v %v", u["sessionUpdate"], entityID(u)))
		}
		if want[len(want)-1] != "state_update idle" {
			want = append(want, "state_update idle")
		}
		for _, r := range s.Received {
			if r.SessionID == sid {
				got = append(got, fmt.Sprintf("%v %v", r.SessionUpdate, r.ID))
				kinds[r.SessionUpdate] = true
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("session %s: the SDK did not receive every replayed update (-sent +received):\n%s", sid, diff)
		}
	}
	for _, k := range []string{"user_message", "agent_message", "agent_thought", "tool_call_update", "plan_update",
		"compaction_update", "terminal_update", "session_info_update", "usage_update", "state_update"} {
		if !kinds[k] {
			t.Errorf("no %s was replayed", k)
		}
	}
	if s.PromptError == nil || s.PromptError.Code != -32099 || !strings.Contains(s.PromptError.Message, "recording") {
		t.Errorf("prompt error = %+v", s.PromptError)
	}
	if s.UnknownMethodError == nil || s.UnknownMethodError.Code != -32601 {
		t.Errorf("unknown method error = %+v", s.UnknownMethodError)
	}
	c := testpeers.CheckTrace(t, testpeers.V2, trace)
	if c.Messages() < s.TotalUpdates {
		t.Errorf("the trace checked %d messages for %d updates", c.Messages(), s.TotalUpdates)
	}
}
