package replaytest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

// alpha13Store records the SDK 2.4.0 peers (testdata/sdk24: the ACP v2
// draft 2.0.0-alpha.13) through `acptap record`; the stream names that
// draft.
func alpha13Store(t *testing.T) (store, session string) {
	t.Helper()
	dir := testpeers.NodeSDK24Dir(t)
	store = filepath.Join(t.TempDir(), "store")
	res := testpeers.RunSDKClientIn(t, dir, "client.mjs", nil,
		[]string{acptapBin, "record", "--store", store, "--", "node", filepath.Join(dir, "agent.mjs")})
	res.RequireOK(t)
	return store, res.Summary.SessionID
}

// checkAlpha13Lines checks replayed lines against the alpha.13 schema and
// returns the terminal_update that carries the recorded size.
func checkAlpha13Lines(t *testing.T, ls []string) (sized int) {
	t.Helper()
	c, err := testpeers.NewChecker(testpeers.V2Alpha13)
	if err != nil {
		t.Fatal(err)
	}
	c.SetTolerant(true)
	for _, l := range ls {
		if err := c.Check(testpeers.Agent, []byte(l)); err != nil {
			t.Errorf("a replayed line breaks the alpha.13 schema: %v\n%s", err, l)
		}
		if strings.Contains(l, `"sessionUpdate":"terminal_update"`) && strings.Contains(l, `"size":{"cols":100,"rows":30}`) {
			sized++
		}
	}
	return sized
}

// TestReplayAlpha13Stream: a stream of the newer draft replays as that
// draft's frames (acptap replay, and acptap replay --serve to an alpha.13
// client, every line checked against the alpha.13 schema), the terminal's
// recorded size included; the loss report names the draft; the round
// trip holds.
func TestReplayAlpha13Stream(t *testing.T) {
	store, session := alpha13Store(t)
	stream := streamFile(store, session)
	report := filepath.Join(t.TempDir(), "report.json")
	r := acptap(t, "", "replay", "--report", report, stream)
	if r.code != 0 {
		t.Fatalf("acptap replay exited %d: %s", r.code, r.stderr)
	}
	if n := checkAlpha13Lines(t, lines(r.stdout)); n != 1 {
		t.Errorf("%d terminal_updates with the recorded size, want 1:\n%s", n, r.stdout)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if rep := parseReport(t, string(b)); rep.Target != "acp/2@2.0.0-alpha.13" {
		t.Errorf("loss report target %q", rep.Target)
	}
	if rt := acptap(t, "", "roundtrip", stream); rt.code != 0 {
		t.Errorf("acptap roundtrip exited %d:\n%s%s", rt.code, rt.stdout, rt.stderr)
	}

	p := testpeers.StartChecked(t, testpeers.V2Alpha13, []string{acptapBin, "replay", "--serve", store})
	c := &serveConn{t: t, p: p, out: bufio.NewReaderSize(p.Stdout, 1<<20)}
	if _, res := c.call("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "test", "version": "1"}}); res.Error != nil {
		t.Fatalf("initialize: %+v", res.Error)
	}
	notes, res := c.call("session/resume", map[string]any{"sessionId": session, "cwd": "/w", "replayFrom": map[string]any{"type": "start"}})
	if res.Error != nil {
		t.Fatalf("session/resume: %+v", res.Error)
	}
	if n := checkAlpha13Lines(t, notes); n != 1 {
		t.Errorf("--serve: %d terminal_updates with the recorded size, want 1", n)
	}
	var st struct{ Sessions []json.RawMessage }
	if _, res := c.call("session/list", map[string]any{}); res.Error != nil || json.Unmarshal(res.Result, &st) != nil || len(st.Sessions) != 1 {
		t.Errorf("session/list: %s %+v", res.Result, res.Error)
	}
	_ = p.Stdin.Close()
}
