package replaytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestASR733_ByteLevelReplayFromCapture: with the wire log the recorder
// kept, --from-capture resends the agent's session/update frames for the
// session byte for byte, in order.
func TestASR733_ByteLevelReplayFromCapture(t *testing.T) {
	store, id := demoStore(t)
	wires, _ := filepath.Glob(filepath.Join(store, "wire", "*.jsonl"))
	if len(wires) != 1 {
		t.Fatalf("wire logs: %v", wires)
	}
	var want []string
	for _, f := range wireFrames(t, wires[0]) {
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
			} `json:"params"`
		}
		if f.Dir == "a2c" && json.Unmarshal([]byte(f.Line), &m) == nil && m.Method == "session/update" && m.Params.SessionID == id {
			want = append(want, f.Line)
		}
	}
	if len(want) == 0 {
		t.Fatal("the demo's wire log has no session/update frames")
	}
	// By path, without --store: the wire log is found beside the stream's store.
	r := acptap(t, "", "replay", "--from-capture", streamFile(store, id))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if diff := cmp.Diff(want, lines(r.stdout)); diff != "" {
		t.Errorf("not the captured bytes (-want +got):\n%s", diff)
	}
	rep := parseReport(t, r.stderr)
	if rep.Complete || rep.Mode != "capture" || rep.Capture == nil || rep.Capture.Frames != len(want) || len(rep.Capture.WireLogs) != 1 {
		t.Errorf("report = %+v %+v", rep, rep.Capture)
	}
	if !rep.Names()["_org.acptap/agent_requests"] {
		t.Errorf("the permission request that is not resent is not reported: %v", rep.Categories)
	}

	t.Run("two connections, a resume replay, batches, a gap", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "sessions", "s1"), 0o700)
		os.MkdirAll(filepath.Join(dir, "wire"), 0o700)
		os.WriteFile(filepath.Join(dir, "sessions", "s1", "stream.asr.jsonl"), []byte(strings.Join([]string{
			`{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"t","lossy":[]}}`,
			`{"type":"state","seq":1,"id":"r1","state":"resumed","native":{"ref":{"wire":"c-2.jsonl","frames":[1,3]}}}`,
			`{"type":"message","seq":2,"id":"r2","messageId":"m","role":"assistant","content":[],"native":{"ref":{"wire":"c-1.jsonl","frames":[2]}}}`,
		}, "\n")+"\n"), 0o600)
		upd := func(sid, text string) string {
			return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"` + text + `"}}}}`
		}
		frame := func(seq int, dir, line string) string {
			b, _ := json.Marshal(map[string]any{"type": "frame", "seq": seq, "at": "2026-10-26T10:00:00Z", "dir": dir, "line": line})
			return string(b)
		}
		spaced := `{"jsonrpc": "2.0",  "method":"session/update", "params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"spaced"}}}}`
		batchMixed := "[" + upd("s1", "B") + ", " + upd("s2", "C") + "]"
		batchOwn := "[" + upd("s1", "D") + "," + upd("s1", "E") + "]"
		c1 := []string{
			`{"type":"header","format":"acptap-wire","version":1,"connection":"c-1","startedAt":"2026-10-26T10:00:00Z","agent":{"command":["agent"]}}`,
			frame(1, "c2a", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}`),
			frame(2, "a2c", upd("s1", "A")),
			frame(3, "a2c", upd("s2", "other session")),
			frame(4, "a2c", batchMixed),
			frame(5, "a2c", `{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","title":"ok?","options":[]}}`),
			`{"type":"gap","seq":6,"dir":"a2c","frames":3,"bytes":300,"reason":"capture queue full"}`,
			frame(7, "a2c", batchOwn),
			frame(8, "a2c", spaced),
		}
		c2 := []string{
			`{"type":"header","format":"acptap-wire","version":1,"connection":"c-2","startedAt":"2026-10-26T11:00:00Z","agent":{"command":["agent"]}}`,
			frame(1, "c2a", `{"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"s1","cwd":"/w","replayFrom":{"type":"start"}}}`),
			frame(2, "a2c", upd("s1", "A")),
			frame(3, "a2c", `{"jsonrpc":"2.0","id":1,"result":{}}`),
			frame(4, "a2c", upd("s1", "F")),
		}
		os.WriteFile(filepath.Join(dir, "wire", "c-1.jsonl"), []byte(strings.Join(c1, "\n")+"\n"), 0o600)
		os.WriteFile(filepath.Join(dir, "wire", "c-2.jsonl"), []byte(strings.Join(c2, "\n")+"\n"), 0o600)
		r := acptap(t, "", "replay", "--from-capture", "--store", dir, "s1")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		want := []string{upd("s1", "A"), upd("s1", "B"), batchOwn, spaced, upd("s1", "F")}
		if diff := cmp.Diff(want, lines(r.stdout)); diff != "" {
			t.Errorf("frames (-want +got):\n%s", diff)
		}
		rep := parseReport(t, r.stderr)
		c := rep.Capture
		if c == nil || c.Frames != 6 || c.Skipped != 1 || c.Gaps != 1 || !cmp.Equal(c.WireLogs, []string{"c-1.jsonl", "c-2.jsonl"}) {
			t.Errorf("capture = %+v", c)
		}
		if n := rep.Names(); !n["_org.acptap/capture_gap"] || !n["_org.acptap/agent_requests"] {
			t.Errorf("categories = %v", rep.Categories)
		}
	})

	t.Run("no capture", func(t *testing.T) {
		r := acptap(t, "", "replay", "--from-capture", "--store", store, "sess-every")
		if r.code != 1 || !strings.Contains(r.stderr, "ASR-733") || r.stdout != "" {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}
