package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/store"
	ireplay "github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/plugins/acpv1"
	"github.com/acptap/acptap/plugins/acpv2"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// serve runs a server over the lines in, with the real replay plugins in
// process (acpv2 for v2 clients, acpv1 for v1 clients), on a store holding
// the stream with every record type, and returns the lines it wrote.
func serve(t *testing.T, in ...string) []map[string]any {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "plugins", "acpv2", "testdata", "replay_every_type.asr.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := st.StreamPath("sess-every")
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	replayer := func(ctx context.Context, target, path string, emit func(sdk.Output) error) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		m := acpv2.New()
		if target == ireplay.TargetV1 {
			m = acpv1.New()
		}
		return m.(sdk.Replayer).Replay(ctx, nil, target, f, emit)
	}
	var out bytes.Buffer
	s := NewServer(ServerOptions{Store: st, Version: "test", TargetV2: acpv2.Input, Replay: replayer, Out: &out})
	if err := s.Run(strings.NewReader(strings.Join(in, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func initialize(version string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":` + version + `}}`
}

// TestNegotiation: protocolVersion 1 is answered in ACP v1; 2, a later
// version or none in ACP v2.
func TestNegotiation(t *testing.T) {
	for v, want := range map[string]float64{"1": 1, "2": 2, "3": 2, "null": 2} {
		res := serve(t, initialize(v))[0]["result"].(map[string]any)
		if res["protocolVersion"] != want {
			t.Errorf("protocolVersion %s answered %v", v, res["protocolVersion"])
		}
		if want == 1 {
			caps := res["agentCapabilities"].(map[string]any)
			list := caps["sessionCapabilities"].(map[string]any)["list"]
			if caps["loadSession"] != true || list == nil || res["agentInfo"] == nil {
				t.Errorf("v1 initialize: %v", res)
			}
		} else if res["info"] == nil || res["capabilities"] == nil {
			t.Errorf("v2 initialize: %v", res)
		}
	}
}

// TestV1Methods: a v1 client lists, loads (updates before the answer, no
// compaction without session.compaction), and is refused what would change
// a recording; session/resume is v2's.
func TestV1Methods(t *testing.T) {
	msgs := serve(t, initialize("1"),
		`{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"sess-every","cwd":"/w/proj","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"nope","cwd":"/","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"sess-every","prompt":[]}}`,
		`{"jsonrpc":"2.0","id":5,"method":"session/resume","params":{"sessionId":"sess-every","cwd":"/"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"session/set_mode","params":{"sessionId":"sess-every","modeId":"x"}}`,
	)
	byID := map[float64]map[string]any{}
	updates, afterLoad := 0, false
	for _, m := range msgs {
		if id, ok := m["id"].(float64); ok {
			byID[id] = m
			afterLoad = afterLoad || id == 2
			continue
		}
		if afterLoad {
			t.Errorf("an update after the load's answer: %v", m)
		}
		u := m["params"].(map[string]any)["update"].(map[string]any)
		if k := u["sessionUpdate"].(string); strings.HasPrefix(k, "compaction") || k == "state_update" || k == "tool_call_update" {
			t.Errorf("%s sent to a v1 client without session.compaction", k)
		}
		updates++
	}
	sessions := byID[1]["result"].(map[string]any)["sessions"].([]any)
	if len(sessions) != 1 || sessions[0].(map[string]any)["title"] != "Fix x.go and docs" {
		t.Errorf("session/list: %v", byID[1])
	}
	res := byID[2]["result"].(map[string]any)
	rep := res["_meta"].(map[string]any)["org.acptap/replay"].(map[string]any)["lossReport"].(map[string]any)
	if updates == 0 || rep["target"] != ireplay.TargetV1 || rep["updates"] != float64(updates) || !strings.Contains(jsonOf(rep), asr.LossV1Compaction) {
		t.Errorf("load: %d updates, report %v", updates, jsonOf(rep))
	}
	for id, code := range map[float64]float64{3: codeNotFound, 4: codeRecording, 5: codeRecording, 6: codeRecording} {
		e, _ := byID[id]["error"].(map[string]any)
		if e == nil || e["code"] != code {
			t.Errorf("request %v: %v, want error %v", id, byID[id], code)
		}
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
