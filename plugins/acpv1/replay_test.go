package acpv1

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/mappertest"
)

// TestASR732_RoundTripV1GoldenStreams: every golden stream (the engine's,
// acpv1's, the stream with every record type, and the v1 replay fixtures)
// replayed as ACP v1, recorded again by the acpv1 recorder, has the same context view
// except what the replay's loss report and the recording's declared losses
// name.
func TestASR732_RoundTripV1GoldenStreams(t *testing.T) {
	all, names := everyGoldenStream(t)
	for name, recs := range v1ReplayFixtures {
		all["fixture:"+name] = mkStream(t, v1FixtureHeader, recs...)
		names = append(names, "fixture:"+name)
	}
	slices.Sort(names)
	total := 0
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			res, _ := requireRoundTripV1(t, all[name])
			total += res.Entities
		})
	}
	if total == 0 {
		t.Fatal("the round trips compared no entities")
	}
}

// mkStream builds a stream from a header and records given without seq and
// id (numbered from 1).
func mkStream(t testing.TB, header string, records ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(header + "\n")
	for i, r := range records {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			t.Fatalf("record %d: %v: %s", i+1, err, r)
		}
		m["seq"] = json.RawMessage(strconv.Itoa(i + 1))
		m["id"] = json.RawMessage(`"r` + strconv.Itoa(i+1) + `"`)
		line, _ := json.Marshal(m)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// checkV1 checks every frame against the official ACP v1 schema, on its
// own (the replay checks too, before it sends).
func checkV1(t *testing.T, frames [][]byte) {
	t.Helper()
	c, err := acpschema.NewChecker(acpschema.V1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := c.Check(acpschema.Agent, f); err != nil {
			t.Errorf("not valid ACP v1: %v\n%s", err, f)
		}
	}
}

// TestReplayV1Golden: each record type's fixture (replay_fixtures_test.go)
// replayed to ACP v1; the updates and the loss report are compared with
// testdata/replay_v1/<name>.golden (-update rewrites them); every update
// is valid ACP v1. The stream with every record type is one more.
func TestReplayV1Golden(t *testing.T) {
	streams := map[string][]byte{}
	for name, recs := range v1ReplayFixtures {
		streams[name] = mkStream(t, v1FixtureHeader, recs...)
	}
	b, err := os.ReadFile(filepath.Join("..", "acpv2", "testdata", "replay_every_type.asr.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	streams["every_type"] = b
	for _, name := range slices.Sorted(maps.Keys(streams)) {
		t.Run(name, func(t *testing.T) {
			rp := runReplayV1(t, New(), streams[name])
			checkV1(t, rp.frames)
			rp.updates(t) // ASR-726: notifications only, no request
			if rp.report.Complete {
				t.Error("the report says the replay is complete (ASR-731)")
			}
			var got bytes.Buffer
			for _, f := range rp.frames {
				got.Write(f)
				got.WriteByte('\n')
			}
			got.WriteString("# loss report\n")
			got.Write(rp.raw)
			path := filepath.Join("testdata", "replay_v1", name+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
		})
	}
}

// TestASR732_RoundTripV1DetectsDifferences: the v1 round trip is not
// vacuous: a replay that loses a tool call, or changes a message's text,
// is caught.
func TestASR732_RoundTripV1DetectsDifferences(t *testing.T) {
	stream := mkStream(t, v1FixtureHeader, append(append([]string{}, v1ReplayFixtures["message_agent"]...), v1ReplayFixtures["tool_call_completed"]...)...)
	rp := runReplayV1(t, New(), stream)
	src, err := replay.ReadStream(bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	var frames [][]byte
	for _, f := range rp.frames {
		switch {
		case bytes.Contains(f, []byte(`"sessionUpdate":"tool_call"`)):
			continue // lost
		case bytes.Contains(f, []byte(`"Done."`)):
			f = bytes.Replace(f, []byte(`"Done."`), []byte(`"Not done."`), 1)
		}
		frames = append(frames, f)
	}
	outs := mappertest.Run(t, New(), live, loadFrames(src.Header, frames), 0)
	rec, err := replay.ReadStream(bytes.NewReader(streamOf(outs, "s1")))
	if err != nil {
		t.Fatal(err)
	}
	res := replay.CompareV1(src, rec, rp.report)
	found := map[string]bool{}
	for _, d := range res.Differences {
		found[d.Entity] = true
	}
	if !found["tool:c1"] || !found["message:m1"] || len(res.Differences) != 2 {
		t.Errorf("differences: %v", res.Differences)
	}
}

// TestASR731_ReplayV1LossReport: the plugin replays to acp/1 only; its
// report (never complete) names that target and the v1 categories next to
// the v2 replay's.
func TestASR731_ReplayV1LossReport(t *testing.T) {
	rr := New().(sdk.Replayer)
	stream := mkStream(t, v1FixtureHeader, v1ReplayFixtures["state"]...)
	if _, err := rr.Replay(context.Background(), nil, "acp/2@2.0.0-alpha.9", bytes.NewReader(stream), func(sdk.Output) error { return nil }); err == nil {
		t.Error("a replay to acp/2 was accepted")
	}
	rp := runReplayV1(t, New(), stream)
	if rp.report.Target != replay.TargetV1 || !rp.report.Names()[asr.LossV1TurnState] || !rp.report.Names()[asr.LossStateHistory] || len(rp.frames) != 0 {
		t.Errorf("report %s, frames %q", rp.raw, rp.frames)
	}
	if _, err := rr.Replay(context.Background(), nil, "", bytes.NewReader([]byte("not a stream\n")), func(sdk.Output) error { return nil }); err == nil {
		t.Error("a stream without a header replayed")
	}
}

// FuzzReplayV1: any stream bytes give a report or an error, never a
// panic; every update sent is one line of valid ACP v1.
func FuzzReplayV1(f *testing.F) {
	for _, name := range slices.Sorted(maps.Keys(v1ReplayFixtures)) {
		f.Add(mkStream(f, v1FixtureHeader, v1ReplayFixtures[name]...))
	}
	f.Add([]byte(v1FixtureHeader + "\n" + `{"type":"config_change","seq":1,"id":"r1","mode":7}` + "\n" + `{"type":"org.agent-session.acp/available_commands_update","seq":2,"native":{"record":[1]}}` + "\n"))
	c, err := acpschema.NewChecker(acpschema.V1)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		rr := New().(sdk.Replayer)
		report, err := rr.Replay(context.Background(), nil, replay.TargetV1, bytes.NewReader(stream), func(o sdk.Output) error {
			if o.Kind != sdk.ACPFrame {
				return nil
			}
			if bytes.IndexByte(o.JSON, '\n') >= 0 {
				t.Errorf("frame is not one line: %q", o.JSON)
			}
			if err := c.Check(acpschema.Agent, o.JSON); err != nil {
				t.Errorf("not valid ACP v1: %v\n%s", err, o.JSON)
			}
			return nil
		})
		if err != nil {
			return
		}
		if _, err := replay.ParseLossReport(report); err != nil {
			t.Errorf("report: %v", err)
		}
	})
}
