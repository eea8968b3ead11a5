package aepe2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

// TestV2SessionThroughTheTee_ASRAndAEPSideBySide: an ACP v2 session
// between the official SDK client and agent, through `acptap record`,
// yields both the ASR stream and the AEP log; every AEP event validates
// and (epoch, seq) strictly increases.
func TestV2SessionThroughTheTee_ASRAndAEPSideBySide(t *testing.T) {
	store := t.TempDir()
	res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store}, record(t, store, "v2-agent.mjs"))
	res.RequireOK(t)
	sid := res.Summary.SessionID
	if lines := readLines(t, filepath.Join(store, "sessions", sid, "stream.asr.jsonl")); len(lines) < 10 {
		t.Errorf("ASR stream has %d lines", len(lines))
	}
	evs := checkAEPLog(t, filepath.Join(store, "aep", "acp", sid+".jsonl"))
	want := map[string]int{
		"session.started": 1, "run.started": 2, "run.finished": 2, "tool.requested": 2, "tool.completed": 2,
		"attention.requested": 2, "attention.answered": 2, "attention.resolved": 2, "session.compacted": 1, "session.ended": 1,
	}
	got := countTypes(evs)
	for typ, n := range want {
		if got[typ] != n {
			t.Errorf("%d %s, want %d (all: %v)", got[typ], typ, n, got)
		}
	}
	for _, e := range evs {
		if e.Epoch != 0 || e.Session != sid {
			t.Errorf("epoch %d session %q: %+v", e.Epoch, e.Session, e)
		}
	}
}

// TestV1SessionThroughTheTee_ValidAEP: the same for ACP v1, mapped exactly
// as AEP's Annex A.13 pins it.
func TestV1SessionThroughTheTee_ValidAEP(t *testing.T) {
	store := t.TempDir()
	res := testpeers.RunSDKClient(t, "v1-client.mjs", []string{"--cwd", store}, record(t, store, "v1-agent.mjs"))
	res.RequireOK(t)
	evs := checkAEPLog(t, filepath.Join(store, "aep", "acp", res.Summary.SessionID+".jsonl"))
	got := countTypes(evs)
	for typ, n := range map[string]int{"session.started": 1, "run.started": 2, "run.finished": 2, "tool.requested": 2,
		"tool.completed": 2, "attention.requested": 2, "session.ended": 1} {
		if got[typ] != n {
			t.Errorf("%d %s, want %d (all: %v)", got[typ], typ, n, got)
		}
	}
	for _, e := range ofRun(evs, "0-2") {
		if e.Epoch != 0 {
			t.Errorf("epoch %d", e.Epoch)
		}
	}
}

// TestSecondConnectionRaisesTheEpoch: the tee restarted on the same session
// (a second connection; the first also resumes the session with a replay)
// writes epoch 1 after epoch 0 in the same log, so (epoch, seq) never
// regresses; replayed history adds nothing; run ids carry the epoch.
func TestSecondConnectionRaisesTheEpoch(t *testing.T) {
	store := t.TempDir()
	first := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store, "--resume"}, record(t, store, "v2-agent.mjs"))
	first.RequireOK(t)
	second := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store}, record(t, store, "v2-agent.mjs"))
	second.RequireOK(t)
	if first.Summary.SessionID != second.Summary.SessionID {
		t.Fatalf("sessions %s and %s: the agent no longer reuses its session ids", first.Summary.SessionID, second.Summary.SessionID)
	}
	evs := checkAEPLog(t, filepath.Join(store, "aep", "acp", first.Summary.SessionID+".jsonl"))
	epochs := map[int64]map[string]int{0: {}, 1: {}}
	for _, e := range evs {
		if epochs[e.Epoch] == nil {
			t.Fatalf("epoch %d", e.Epoch)
		}
		epochs[e.Epoch][e.Type]++
		if e.Run != "" && !strings.HasPrefix(e.Run, map[int64]string{0: "0-", 1: "1-"}[e.Epoch]) {
			t.Errorf("run %q in epoch %d", e.Run, e.Epoch)
		}
	}
	if epochs[0]["tool.requested"] != 2 || epochs[1]["tool.requested"] != 2 || epochs[0]["session.started"] != 2 {
		t.Errorf("per epoch: %v", epochs)
	}
	if n := epochs[0]["session.ended"] + epochs[1]["session.ended"]; n != 1 {
		t.Errorf("%d session.ended across epochs, want 1", n)
	}
	if _, err := os.Stat(filepath.Join(store, "sessions", first.Summary.SessionID, "stream.asr.jsonl")); err != nil {
		t.Error(err)
	}
}

func ofRun(evs []event, run string) []event {
	var out []event
	for _, e := range evs {
		if e.Run == run {
			out = append(out, e)
		}
	}
	return out
}
