package pipeline

import (
	"fmt"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

// TestKernelNapEndsAtWake: a kernel nap in progress ends when wake is called (as Hurry and
// StopCapture end a timer nap), and every nap after it returns at once. Without the wake
// the hour-long naps would hold the test until its timeout.
func TestKernelNapEndsAtWake(t *testing.T) {
	k := newKernelNap()
	if k == nil {
		t.Fatal("no pipe")
	}
	defer k.close()
	done := make(chan struct{})
	started := make(chan struct{})
	go func() {
		close(started)
		k.sleep(time.Hour)
		close(done)
	}()
	<-started
	k.wake()
	<-done
	k.sleep(time.Hour) // after a wake: at once
	k.wake()           // twice: a no-op
}

// TestCaptureNapsInTheKernel (ASR-723: every frame in the wire log, in order): on its lowered
// thread capture naps through steady lines in the kernel (kernelNap) and parks on its timer
// only once every parkEvery; with parkEvery 0 it parks every time. A line arrives whenever
// capture starts a wait, as in TestCaptureNapsThroughSteadyLines; the wire log and the plugin
// get every line, in order, either way.
func TestCaptureNapsInTheKernel(t *testing.T) {
	for _, tc := range []struct {
		every  time.Duration
		kernel bool
	}{{time.Hour, true}, {0, false}} {
		t.Run(fmt.Sprint(tc.every), func(t *testing.T) {
			defer func(e time.Duration) { parkEvery = e }(parkEvery)
			parkEvery = tc.every
			r := startGatherRun(t, 2*time.Millisecond, 0, 256)
			const lines = 40
			line := func(i int) string { return fmt.Sprintf(`{"i":%d}`, i) }
			sent := 1
			arrive := func() {
				if sent < lines {
					r.send(sdk.A2C, []byte(line(sent)+"\n"))
					sent++
				}
			}
			onCaptureWait.Store(&arrive)
			defer onCaptureWait.Store(nil)
			before := kernelNaps.Load()
			r.send(sdk.A2C, []byte(line(0)+"\n"))
			waitFor(t, line(lines-1)+" in the wire log", func() bool { return r.inWire(line(lines - 1)) })
			naps := kernelNaps.Load() - before
			onCaptureWait.Store(nil)
			r.close()
			if tc.kernel && naps < lines/4 {
				t.Errorf("capture napped %d times in the kernel for %d steady lines, want at least %d", naps, lines, lines/4)
			}
			if !tc.kernel && naps != 0 {
				t.Errorf("capture napped %d times in the kernel with parkEvery 0", naps)
			}
			r.sawInitializeThen(lines, line)
		})
	}
}
