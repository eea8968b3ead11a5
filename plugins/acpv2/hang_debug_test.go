package acpv2

import (
	"bytes"
	"context"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

func TestHangDebug(t *testing.T) {
	seed, _ := os.ReadFile("testdata/turn.frames")
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		data := bytes.Clone(seed)
		for k := 0; k < 1+r.Intn(8); k++ {
			switch r.Intn(3) {
			case 0:
				data[r.Intn(len(data))] = byte(r.Intn(256))
			case 1:
				p := r.Intn(len(data))
				data = append(data[:p], data[min(len(data), p+r.Intn(20)):]...)
			case 2:
				p := r.Intn(len(data))
				q := r.Intn(len(data))
				data = append(data[:p], append(bytes.Clone(data[q:min(len(data), q+r.Intn(40))]), data[p:]...)...)
			}
		}
		done := make(chan bool)
		go func() {
			b := sdk.NewFrameBuilder()
			var frames []sdk.Frame
			for i, line := range bytes.Split(data, []byte("\n")) {
				dir := sdk.C2A
				if word, rest, ok := bytes.Cut(line, []byte(" ")); ok && (string(word) == "a2c" || string(word) == "c2a") {
					dir, _ = sdk.ParseDirection(string(word))
					line = rest
				}
				frames = b.Line(frames, uint64(i+1), dir, base, line)
			}
			sess, _ := New().Start(context.Background(), startReq(""))
			sess.Map(context.Background(), frames)
			sess.Finish(context.Background(), "")
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			os.WriteFile("/tmp/hang.frames", data, 0o644)
			t.Fatalf("hang at %d", i)
		}
	}
}
