package pluginwire

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
)

// TestFramesRoundTrip: frames of every size around the part size, gaps and
// session frames come out of the host's conversion and the plugin's
// assembler as they went in.
func TestFramesRoundTrip(t *testing.T) {
	var in []sdk.Frame
	for i, n := range []int{0, 1, 100, PartSize - 1, PartSize, PartSize + 1, 3*PartSize + 7} {
		in = append(in, sdk.Frame{Kind: sdk.KindLine, Seq: uint64(i + 1), Dir: sdk.A2C, At: time.Unix(5, int64(i)).UTC(),
			Data: bytes.Repeat([]byte{'a' + byte(i)}, n), BatchIndex: i % 2, BatchSize: 2 * (i % 2), ReplyTo: 3, ReplyToMethod: "m"})
	}
	in = append(in, sdk.Frame{Kind: sdk.KindGap, Seq: 20, Dir: sdk.C2A, Gap: sdk.Gap{Frames: 2, Bytes: 9, Reason: "r"}})
	in = append(in, sdk.Frame{Kind: sdk.KindSession, Seq: 21, Dir: sdk.C2A, Session: &sdk.SessionInfo{ID: "s", Connections: 2,
		Prior: [][]byte{[]byte(`{"a":1}`), bytes.Repeat([]byte("p"), PartSize+3)}}})
	msgs := toProtoFrames(in)
	var out []sdk.Frame
	var asm frameAssembler
	for _, m := range msgs {
		out = asm.add(m, out)
	}
	if len(out) != len(in) {
		t.Fatalf("%d frames, want %d", len(out), len(in))
	}
	for i := range in {
		a, b := in[i], out[i]
		if fmt.Sprint(a.Kind, a.Seq, a.Dir, a.At.UnixNano(), a.BatchIndex, a.BatchSize, a.ReplyTo, a.ReplyToMethod, a.Gap) !=
			fmt.Sprint(b.Kind, b.Seq, b.Dir, b.At.UnixNano(), b.BatchIndex, b.BatchSize, b.ReplyTo, b.ReplyToMethod, b.Gap) ||
			!bytes.Equal(a.Data, b.Data) || (a.Session == nil) != (b.Session == nil) {
			t.Fatalf("frame %d differs", i)
		}
		if a.Session != nil && (a.Session.ID != b.Session.ID || a.Session.Connections != b.Session.Connections ||
			!bytes.Equal(bytes.Join(a.Session.Prior, nil), bytes.Join(b.Session.Prior, nil)) || len(a.Session.Prior) != len(b.Session.Prior)) {
			t.Fatalf("session frame differs")
		}
	}
	var _ *pb.Frame = msgs[0]
}
