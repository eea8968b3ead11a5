package acpv1

import "testing"

// TestASR732_RoundTripV1GoldenStreams: every golden stream replayed as
// ACP v1, recorded again by the acpv1 recorder, has the same context view
// except what the replay's loss report and the recording's declared losses
// name.
func TestASR732_RoundTripV1GoldenStreams(t *testing.T) {
	all, names := everyGoldenStream(t)
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
