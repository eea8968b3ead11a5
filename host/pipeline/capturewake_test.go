package pipeline

import (
	"fmt"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

// TestCaptureNapsThroughSteadyLines (ASR-723: every frame in the wire log, in order): while
// lines keep coming, capture naps from one coalescing window's flush to the next instead of
// waiting at the doorbell for each window's first line, which woke it twice a window (at
// that line and at the window's end): at a line a millisecond, most of capture's wakes. Here
// a line arrives whenever capture starts a wait, at the doorbell or in a nap, as lines
// paced closer than the window (2 ms) do: waiting at the doorbell after every window, capture
// went there once every two lines; napping from flush to flush, only for the first line and
// once the lines stop. The wire log and the plugin get every line, in order.
func TestCaptureNapsThroughSteadyLines(t *testing.T) {
	r := startGatherRun(t, 2*time.Millisecond, 0, 256)
	const lines = 40
	line := func(i int) string { return fmt.Sprintf(`{"i":%d}`, i) }
	sent := 1 // capture's goroutine only, from the first line on
	arrive := func() {
		if sent < lines {
			r.send(sdk.A2C, []byte(line(sent)+"\n"))
			sent++
		}
	}
	onCaptureWait.Store(&arrive)
	defer onCaptureWait.Store(nil)
	before := doorbellWaits.Load()
	r.send(sdk.A2C, []byte(line(0)+"\n")) // (capture waits at the doorbell already)
	waitFor(t, line(lines-1)+" in the wire log", func() bool { return r.inWire(line(lines - 1)) })
	waits := doorbellWaits.Load() - before
	onCaptureWait.Store(nil)
	r.close()
	// One wait once the lines have stopped, and one more if the close's ring found capture
	// still napping.
	if waits > 2 {
		t.Errorf("capture waited at the doorbell %d times for %d steady lines, want at most 2", waits, lines)
	}
	r.sawInitializeThen(lines, line)
}
