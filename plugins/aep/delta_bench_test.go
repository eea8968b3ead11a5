package aep

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
)

// BenchmarkDeltaRedaction maps agent_message_chunk updates of 4 KiB and
// 1 MiB of text under the deltas opt-in (each chunk is an
// x.acp.agent.message.chunk whose text passes the redaction pipeline) and
// reports MB/s of chunk text.
//
//	go test ./plugins/aep/ -run '^$' -bench DeltaRedaction
func BenchmarkDeltaRedaction(b *testing.B) {
	piece := "Let me look at /home/tester/proj/main.go: the token parser fails on line 42 (see PR #1234). "
	for _, size := range []int{4 << 10, 1 << 20} {
		text := strings.Repeat(piece, size/len(piece)+1)[:size]
		js, _ := json.Marshal(text)
		line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":` + string(js) + `}}}}`)
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			c := syntheticConn(b, false, true)
			g := newSynthetic(false)
			ctx := context.Background()
			if _, err := c.Map(ctx, g.frames); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			for b.Loop() {
				g.seq++
				f := []sdk.Frame{{Kind: sdk.KindLine, Seq: g.seq, Dir: sdk.A2C, At: g.at, Data: line}}
				outs, err := c.Map(ctx, f)
				if err != nil || len(outs) != 1 || outs[0].Kind != sdk.AEPEvent {
					b.Fatalf("%v %v", outs, err)
				}
			}
		})
	}
}
