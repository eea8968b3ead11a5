package tee

import (
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// eventLog records the copier's writes and yields in order.
type eventLog struct{ ev []string }

func (l *eventLog) Write(p []byte) (int, error) {
	l.ev = append(l.ev, "w")
	return len(p), nil
}

// TestCopierYieldsAfterWrites: a copier that forwards chunks for longer than yieldEvery
// passes through the Go scheduler once (yield), after a write returned and never between a
// read and its write; within yieldEvery it does not. (A copier waits in read(2) and keeps its
// P on one scheduling tick otherwise, which makes the runtime's sysmon retake the P and wake
// every 20 µs for the next ~25 ms: copy.go.)
func TestCopierYieldsAfterWrites(t *testing.T) {
	for _, tc := range []struct {
		every time.Duration
		want  string
	}{
		{0, "w y w y w y w y"},
		{time.Hour, "w w w w"},
	} {
		t.Run(tc.every.String(), func(t *testing.T) {
			log := &eventLog{}
			defer func(e time.Duration, y func()) { yieldEvery, yield = e, y }(yieldEvery, yield)
			yieldEvery = tc.every
			yield = func() { log.ev = append(log.ev, "y") }
			q := make(chan captured.Item, 16)
			c := newCapture(sdk.A2C, q, captured.NewBound(captured.DefaultQueueBytes), nil)
			src := &pieceReader{pieces: [][]byte{[]byte("a\n"), []byte("b\n"), []byte("c\n"), []byte("d\n")}}
			if err := copyLines(log, src, c); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(log.ev, " "); got != tc.want {
				t.Errorf("writes and yields: %q, want %q", got, tc.want)
			}
		})
	}
}
