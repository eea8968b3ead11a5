package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/host/store"
)

func write(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func testStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, st.StreamPath("old"),
		`{"type":"header","asr":"0.1","sessionId":"old","createdAt":"2026-01-02T10:00:00Z","agent":{"name":"org.agent-session.acp.claude-agent-acp","version":"0.23.1"},"producer":{"method":"recorder","name":"acptap","source":{"format":"acp","formatVersion":"1"},"lossy":["usage"]},"workspace":{"roots":[{"id":"root0","path":"/w/proj"}]}}`,
		`{"type":"message","seq":1,"id":"r1","ts":"2026-01-02T10:00:01Z","role":"user","origin":"prompt","content":[]}`,
		`{"type":"state","seq":2,"id":"r2","ts":"2026-01-02T10:05:00Z","state":"idle","stopReason":"error","error":{"code":-32000,"message":"Authentication required"}}`,
		`{"type":"declaration","seq":3,"id":"r3","lossy":["tool_result.content"]}`)
	write(t, filepath.Join(st.SessionDir("old"), "connections"), "2")
	write(t, st.StreamPath("new"),
		`{"type":"header","asr":"0.1","sessionId":"new","createdAt":"2026-03-04T09:00:00Z","agent":{"name":"org.agent-session.acp.acptap-example-agent"},"producer":{"method":"recorder","name":"acptap","source":{"format":"acp","formatVersion":"2.0.0-alpha.9"},"lossy":[]},"workspace":{"roots":[{"id":"root0","path":"/w/other"}]}}`,
		`{"type":"org.agent-session.acp/session_prompt_error","seq":1,"id":"r1","ts":"2026-03-04T09:00:02Z","native":{"record":{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"no"}}}}`)
	// A connection whose session/new failed: a wire log and no stream.
	write(t, filepath.Join(st.Root(), "wire", "c-1.jsonl"),
		`{"type":"header","format":"acptap-wire","version":1,"connection":"c-1","startedAt":"2026-02-01T08:00:00Z","agent":{"command":["codex-acp"]}}`,
		`{"type":"frame","seq":1,"at":"2026-02-01T08:00:00Z","dir":"c2a","line":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/w\",\"mcpServers\":[]}}"}`,
		`{"type":"frame","seq":2,"at":"2026-02-01T08:00:01Z","dir":"a2c","line":"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"Internal error\"}}"}`)
	return st
}

// TestList: every session, newest activity first, with what the stream
// says; the filters select by agent, date and cwd.
func TestList(t *testing.T) {
	st := testStore(t)
	list, probs, err := List(st, Filter{})
	if err != nil || len(probs) > 0 || len(list) != 2 {
		t.Fatalf("List: %+v %v %v", list, probs, err)
	}
	if list[0].ID != "new" || list[1].ID != "old" {
		t.Errorf("order %s, %s", list[0].ID, list[1].ID)
	}
	o := list[1]
	if o.Revision != "acp 1" || o.AgentVersion != "0.23.1" || o.Turns != 1 || o.Records != 3 || o.Failures != 1 ||
		o.Connections != 2 || o.Cwd != "/w/proj" || strings.Join(o.Losses, ",") != "usage,tool_result.content" ||
		!o.LastActivity.Equal(time.Date(2026, 1, 2, 10, 5, 0, 0, time.UTC)) || o.Size == 0 {
		t.Errorf("old = %+v", o)
	}
	if list[0].Failures != 1 {
		t.Errorf("new: a refused prompt is a failure: %+v", list[0])
	}
	for _, c := range []struct {
		f    Filter
		want string
	}{
		{Filter{Agent: "CLAUDE"}, "old"},
		{Filter{Since: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}, "new"},
		{Filter{Until: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}, "old"},
		{Filter{Cwd: "/w/proj"}, "old"},
		{Filter{Cwd: "/w"}, "new,old"},
		{Filter{Cwd: "/w/pro"}, ""},
	} {
		l, _, _ := List(st, c.f)
		var ids []string
		for _, s := range l {
			ids = append(ids, s.ID)
		}
		if strings.Join(ids, ",") != c.want {
			t.Errorf("%+v: %v, want %s", c.f, ids, c.want)
		}
	}
}

// TestUnstarted: a wire log naming no session with a stream is listed with
// the errors the agent answered, named by the request they answer.
func TestUnstarted(t *testing.T) {
	st := testStore(t)
	cs, probs, err := Unstarted(st, Filter{})
	if err != nil || len(probs) > 0 || len(cs) != 1 {
		t.Fatalf("Unstarted: %+v %v %v", cs, probs, err)
	}
	c := cs[0]
	if c.ID != "c-1" || c.Frames != 2 || len(c.Sessions) != 0 || strings.Join(c.Failures, ";") != "session/new: -32603 Internal error" {
		t.Errorf("connection %+v", c)
	}
	if cs, _, _ := Unstarted(st, Filter{Agent: "claude"}); len(cs) != 0 {
		t.Errorf("agent filter: %+v", cs)
	}
}
