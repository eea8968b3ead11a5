package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/testpeers"
	"github.com/acptap/acptap/sdk"
)

// TestOfficialSDKThroughRecordIsByteTransparent puts `acptap record`
// between the official npm SDK's v2 client and agent (every update kind,
// a batch, a permission and an elicitation). Shell tees on the agent side
// capture the raw bytes the agent read and wrote; the client's trace holds
// what it sent and received. Both directions must be identical, the wire
// log must hold every line in order, and a stream must be written.
func TestOfficialSDKThroughRecordIsByteTransparent(t *testing.T) {
	dir := testpeers.NodeSDKDir(t)
	tmp := t.TempDir()
	store := filepath.Join(tmp, "store")
	inRaw, outRaw := filepath.Join(tmp, "agent-in.raw"), filepath.Join(tmp, "agent-out.raw")
	agent := []string{acptapBin, "record", "--store", store, "--",
		"sh", "-c", `tee "$1" | node "$2" | tee "$3"`, "sh", inRaw, filepath.Join(dir, "v2-agent.mjs"), outRaw}
	res := testpeers.RunSDKClient(t, "v2-client.mjs", nil, agent)
	res.RequireOK(t)

	var sent, recv bytes.Buffer
	var sentLines, recvLines [][]byte
	for _, l := range testpeers.ReadTrace(t, res.Trace) {
		switch l.Dir {
		case "send":
			sent.WriteString(l.Line + "\n")
			sentLines = append(sentLines, []byte(l.Line))
		case "recv":
			recv.WriteString(l.Line + "\n")
			recvLines = append(recvLines, []byte(l.Line))
		}
	}
	if got := readFile(t, inRaw); !bytes.Equal(got, sent.Bytes()) {
		t.Fatalf("client → agent: the agent read %d bytes (sha %s), the client sent %d (sha %s)", len(got), sha(got), sent.Len(), sha(sent.Bytes()))
	}
	if got := readFile(t, outRaw); !bytes.Equal(got, recv.Bytes()) {
		t.Fatalf("agent → client: the agent wrote %d bytes (sha %s), the client received %d (sha %s)", len(got), sha(got), recv.Len(), sha(recv.Bytes()))
	}
	if res.Summary.Wire.BatchesReceived == 0 {
		t.Errorf("the SDK agent sent no JSON-RPC batch; the test should cover one")
	}

	// The wire log holds every line, in each direction's order (the c2a
	// session/new is scrubbed, so it is compared by position only).
	r, err := wire.Open(wireLog(t, store))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var c2a, a2c [][]byte
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		if e.Type != wire.TypeFrame {
			continue
		}
		if e.Dir == sdk.C2A {
			c2a = append(c2a, e.Line)
		} else {
			a2c = append(a2c, e.Line)
		}
	}
	if len(c2a) != len(sentLines) || len(a2c) != len(recvLines) {
		t.Fatalf("wire log has %d c2a and %d a2c frames; the client sent %d and received %d lines", len(c2a), len(a2c), len(sentLines), len(recvLines))
	}
	for i := range a2c {
		if !bytes.Equal(a2c[i], recvLines[i]) {
			t.Fatalf("a2c frame %d differs from what the client received", i)
		}
	}
	for i := range c2a {
		if !bytes.Equal(c2a[i], sentLines[i]) && !bytes.Contains(c2a[i], []byte(wire.Scrubbed)) {
			t.Fatalf("c2a frame %d differs from what the client sent and was not scrubbed", i)
		}
	}

	stream := streamPath(store, res.Summary.SessionID, "")
	recs := records(t, stream)
	if len(recs) < 10 {
		t.Fatalf("stream %s has %d lines", stream, len(recs))
	}
	var hdr struct {
		SessionID string `json:"sessionId"`
	}
	b, _ := json.Marshal(recs[0])
	_ = json.Unmarshal(b, &hdr)
	if hdr.SessionID != res.Summary.SessionID {
		t.Fatalf("stream header sessionId %q, client saw %q", hdr.SessionID, res.Summary.SessionID)
	}
	if _, err := os.Stat(inRaw); err != nil {
		t.Fatal(err)
	}
}
