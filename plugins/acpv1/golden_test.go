package acpv1

import "testing"

// TestGoldenV1UpdateKinds maps each update-kind fixture (fixtures_test.go)
// and compares every output (headers, records, diagnostics, frame seqs)
// with testdata/<name>.golden.jsonl; every stream passes asr.Validate.
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
