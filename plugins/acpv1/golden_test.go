package acpv1

import (
	"testing"

	"github.com/acptap/acptap/sdk"
)

// TestGoldenV1UpdateKinds maps each update-kind fixture (fixtures_test.go)
// and compares every output (headers, records, diagnostics, frame seqs)
// with testdata/<name>.golden.jsonl; every stream passes asrcheck.Validate.
func TestGoldenV1UpdateKinds(t *testing.T) {
	for _, name := range sortedNames(kindFixtures) {
		t.Run(name, func(t *testing.T) {
			golden(t, name, mapAll(t, live, parseFrames(t, kindFixtures[name])))
		})
	}
}

// TestGoldenV1Losses maps each loss fixture: where each ACP v1 loss
// category starts to apply.
func TestGoldenV1Losses(t *testing.T) {
	for _, name := range sortedNames(lossFixtures) {
		t.Run(name, func(t *testing.T) {
			golden(t, name, mapAll(t, live, parseFrames(t, lossFixtures[name])))
		})
	}
}

// TestPartialSnapshotsV1: the engine's partialEvery works behind the v1
// translator too (ASR-705's MAY): every fixture maps to valid streams with
// it, and where entities take several updates before they are final, the
// stream holds snapshots besides the records written without them.
func TestPartialSnapshotsV1(t *testing.T) {
	snapshots := 0
	for _, name := range sortedNames(kindFixtures) {
		frames := parseFrames(t, kindFixtures[name])
		plain := mapAll(t, live, frames)
		snap := mapAll(t, startReq(sdk.ModeRecord, `{"partialEvery":1}`), frames)
		checkStreams(t, snap)
		_, sessions := streams(plain)
		for _, id := range sessions {
			a, b := records(t, plain, id), records(t, snap, id)
			if len(b) < len(a) {
				t.Errorf("%s/%s: %d records with snapshots, %d without", name, id, len(b), len(a))
			}
			snapshots += len(b) - len(a)
		}
	}
	if snapshots == 0 {
		t.Error("partialEvery 1 wrote no snapshot in any v1 fixture")
	}
}
