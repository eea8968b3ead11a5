package replaytest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/internal/testpeers"
	"github.com/acptap/acptap/sdk/asr"
)

var (
	sdkV1Once    sync.Once
	sdkV1Dir     string
	sdkV1Session string
	sdkV1Err     string
)

// sdkV1Store is a store holding a session the official SDK's v1 agent drove
// in "everything" mode (thoughts, a plan, tool calls with a v1 diff and a
// client terminal, a permission, the mode set, available commands),
// recorded by `acptap record` between it and the SDK's v1 client.
func sdkV1Store(t *testing.T) (dir, session string) {
	t.Helper()
	agent := testpeers.NodeArgv(t, "v1-agent.mjs")
	sdkV1Once.Do(func() {
		dir := filepath.Join(tmpRoot, "sdk-v1")
		work := filepath.Join(tmpRoot, "sdk-v1-work")
		if err := os.MkdirAll(work, 0o700); err != nil {
			sdkV1Err = err.Error()
			return
		}
		res := testpeers.RunSDKClient(t, "v1-client.mjs", []string{"--cwd", work, "--set-mode", "ask"},
			append([]string{acptapBin, "record", "--store", dir, "--"}, agent...))
		if res.ExitCode != 0 || !res.Summary.OK {
			sdkV1Err = "the SDK v1 session through acptap record failed: " + res.Stderr
			return
		}
		sdkV1Dir, sdkV1Session = dir, res.Summary.SessionID
	})
	if sdkV1Err != "" {
		t.Fatal(sdkV1Err)
	}
	return sdkV1Dir, sdkV1Session
}

// mixedStore copies into a fresh store the SDK v1 and v2 recordings, the
// demo session and the stream with every record type.
func mixedStore(t *testing.T) (store string, ids []string) {
	t.Helper()
	v1, v1ID := sdkV1Store(t)
	v2, v2ID := sdkStore(t)
	demo, demoID := demoStore(t)
	store = t.TempDir()
	for _, s := range []struct{ from, id string }{{v1, v1ID}, {v2, v2ID}, {demo, demoID}, {demo, "sess-every"}} {
		b, err := os.ReadFile(streamFile(s.from, s.id))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(streamFile(store, s.id)), 0o700)
		if err := os.WriteFile(streamFile(store, s.id), b, 0o600); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.id)
	}
	return store, ids
}

// sdkV1ReplaySummary is what v1-replay-client.mjs writes.
type sdkV1ReplaySummary struct {
	ProtocolVersion   int `json:"protocolVersion"`
	AgentCapabilities struct {
		LoadSession         bool `json:"loadSession"`
		SessionCapabilities struct {
			List json.RawMessage `json:"list"`
		} `json:"sessionCapabilities"`
	} `json:"agentCapabilities"`
	Sessions []struct {
		SessionID string  `json:"sessionId"`
		Cwd       string  `json:"cwd"`
		Title     *string `json:"title"`
		UpdatedAt *string `json:"updatedAt"`
	} `json:"sessions"`
	Loaded      []string `json:"loaded"`
	LoadResults map[string]struct {
		Meta map[string]struct {
			Recording  bool            `json:"recording"`
			LossReport json.RawMessage `json:"lossReport"`
		} `json:"_meta"`
	} `json:"loadResults"`
	Received []struct {
		SessionID     string `json:"sessionId"`
		SessionUpdate string `json:"sessionUpdate"`
		ID            any    `json:"id"`
		DuringLoad    bool   `json:"duringLoad"`
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

// runV1ReplayClient runs v1-replay-client.mjs against `acptap replay
// --serve store` and returns its summary and wire trace.
func runV1ReplayClient(t *testing.T, store string, args ...string) (sdkV1ReplaySummary, string) {
	t.Helper()
	dir := testpeers.NodeSDKDir(t)
	tmp := t.TempDir()
	summaryPath, trace := filepath.Join(tmp, "summary.json"), filepath.Join(tmp, "trace.jsonl")
	argv := append([]string{filepath.Join(dir, "v1-replay-client.mjs"), "--summary", summaryPath, "--trace", trace}, args...)
	cmd := exec.Command("node", append(argv, "--", acptapBin, "replay", "--serve", store)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	b, rerr := os.ReadFile(summaryPath)
	if rerr != nil {
		t.Fatalf("no summary (%v): %v\n%s", err, rerr, out)
	}
	var s sdkV1ReplaySummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if err != nil || !s.OK || len(s.Errors) > 0 || len(s.ValidationErrors) > 0 {
		t.Fatalf("SDK v1 client: %v ok=%v errors=%s validationErrors=%s\n%s", err, s.OK, s.Errors, s.ValidationErrors, out)
	}
	return s, trace
}

// v1EntityID names what a v1 update is about, as v1-replay-client.mjs does.
func v1EntityID(u map[string]any) any {
	for _, k := range []string{"messageId", "toolCallId", "compactionId", "currentModeId"} {
		if v, ok := u[k]; ok {
			return v
		}
	}
	return nil
}

// TestReplayServeSDKV1Client: the official SDK's v1 client, connected to
// `acptap replay --serve`, is answered in ACP v1 (protocolVersion 1,
// loadSession, the session-list capability), lists the stored sessions with
// title, cwd and updatedAt, loads each one and receives, before the load's
// answer, every update `acptap replay --to acp-v1` sends (the SDK drops,
// and reports, updates that do not validate: none does), sees a prompt
// refused, and every line on the wire validates against the ACP v1 schema.
// The store holds sessions the SDK's v1 and v2 agents drove through
// `acptap record`, the demo session and the stream with every record type.
func TestReplayServeSDKV1Client(t *testing.T) {
	store, ids := mixedStore(t)
	s, trace := runV1ReplayClient(t, store)
	if s.ProtocolVersion != 1 || !s.AgentCapabilities.LoadSession || len(s.AgentCapabilities.SessionCapabilities.List) == 0 {
		t.Errorf("initialize: protocolVersion %d, capabilities %+v", s.ProtocolVersion, s.AgentCapabilities)
	}
	listed := map[string]bool{}
	for _, ls := range s.Sessions {
		listed[ls.SessionID] = true
		if ls.Cwd == "" || ls.UpdatedAt == nil || *ls.UpdatedAt == "" {
			t.Errorf("session %s listed without cwd or updatedAt: %+v", ls.SessionID, ls)
		}
		if ls.SessionID == "sess-every" && (ls.Title == nil || *ls.Title != "Fix x.go and docs" || ls.Cwd != "/w/proj") {
			t.Errorf("sess-every listed as %+v", ls)
		}
	}
	if len(s.Sessions) != len(ids) || len(s.Loaded) != len(ids) {
		t.Fatalf("listed %d, loaded %d sessions, want %d (%v)", len(s.Sessions), len(s.Loaded), len(ids), ids)
	}
	kinds := map[string]bool{}
	for _, sid := range ids {
		if !listed[sid] {
			t.Errorf("session %s not listed", sid)
		}
		var want, got []string
		for _, l := range lines(acptap(t, "", "replay", "--to", "acp-v1", "--store", store, sid).stdout) {
			u := decodeUpdate(t, l).Params.Update
			want = append(want, fmt.Sprintf("%v %v", u["sessionUpdate"], v1EntityID(u)))
		}
		for _, r := range s.Received {
			if r.SessionID != sid {
				continue
			}
			if !r.DuringLoad {
				t.Errorf("session %s: %s %v arrived after the load's answer", sid, r.SessionUpdate, r.ID)
			}
			got = append(got, fmt.Sprintf("%v %v", r.SessionUpdate, r.ID))
			kinds[r.SessionUpdate] = true
		}
		if len(want) == 0 {
			t.Errorf("session %s: the v1 replay sent nothing", sid)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("session %s: the SDK did not receive every replayed update (-sent +received):\n%s", sid, diff)
		}
		m := s.LoadResults[sid].Meta["org.acptap/replay"]
		if rep := parseReport(t, string(m.LossReport)); !m.Recording || rep.SessionID != sid || rep.Target != replay.TargetV1 {
			t.Errorf("load %s result: %+v", sid, m)
		}
	}
	for _, k := range []string{"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "plan",
		"current_mode_update", "available_commands_update", "session_info_update", "usage_update", "compaction_update"} {
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
	c := testpeers.CheckTrace(t, testpeers.V1, trace)
	if c.Messages() < s.TotalUpdates {
		t.Errorf("the trace checked %d messages for %d updates", c.Messages(), s.TotalUpdates)
	}
}

// TestReplayServeV1NoCompaction: a v1 client that does not advertise
// session.compaction gets no compaction update, and the load's loss report
// says they were left out.
func TestReplayServeV1NoCompaction(t *testing.T) {
	demo, _ := demoStore(t)
	s, _ := runV1ReplayClient(t, demo, "--session", "sess-every", "--no-compaction")
	for _, r := range s.Received {
		if strings.HasPrefix(r.SessionUpdate, "compaction") {
			t.Errorf("%s %v sent to a client without session.compaction", r.SessionUpdate, r.ID)
		}
	}
	rep := parseReport(t, string(s.LoadResults["sess-every"].Meta["org.acptap/replay"].LossReport))
	if !rep.Names()[asr.LossV1Compaction] {
		t.Errorf("the report does not name %s: %+v", asr.LossV1Compaction, rep.Categories)
	}
}

// TestReplayServeSDKV2ClientMixedStore: the store with the v1 recording,
// served to the SDK's v2 client, works as for v2 recordings: every session
// listed and resumed, no update dropped.
func TestReplayServeSDKV2ClientMixedStore(t *testing.T) {
	store, ids := mixedStore(t)
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
		t.Fatalf("SDK v2 client: %v ok=%v errors=%s validationErrors=%s\n%s", err, s.OK, s.Errors, s.ValidationErrors, out)
	}
	if s.ProtocolVersion != 2 || len(s.Resumed) != len(ids) {
		t.Errorf("protocolVersion %d, resumed %v, want 2 and %v", s.ProtocolVersion, s.Resumed, ids)
	}
	for _, id := range ids {
		if !slices.Contains(s.Resumed, id) {
			t.Errorf("%s not resumed", id)
		}
	}
	testpeers.CheckTrace(t, testpeers.V2, trace)
}
