package otlp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/host/otlp/spool"
	"github.com/acptap/acptap/internal/otlpcollector"
	"github.com/acptap/acptap/sdk/aep"
)

const goldenPath = "../../sdk/aep/testdata/golden/golden.jsonl"

// goldenLines reads the AEP golden fixture's events.
func goldenLines(t testing.TB) [][]byte {
	t.Helper()
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			out = append(out, append([]byte(nil), sc.Bytes()...))
		}
	}
	return out
}

// generic decodes JSON into plain values (numbers float64), so that what
// the collector received and what the fixture says compare by value.
func generic(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// targets returns logs and traces targets for the collector and protocol.
func targets(t *testing.T, c *otlpcollector.Collector, protocol string) *Client {
	t.Helper()
	s := Settings{Protocol: protocol, Endpoint: "http://" + c.HTTPAddr}
	if protocol == ProtocolGRPC {
		s.Endpoint = "http://" + c.GRPCAddr
	}
	l, tr, err := Endpoints(s, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewClient(l, tr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// sendGolden projects the golden fixture through a spool and delivers it.
func sendGolden(t *testing.T, cl *Client, level aep.Level, info ...func(string) Agent) FileResult {
	t.Helper()
	sp, err := spool.Open(filepath.Join(t.TempDir(), "spool"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var in func(string) Agent
	if len(info) > 0 {
		in = info[0]
	}
	res, err := SpoolFile(goldenPath, sp, level, "test", in, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	snd := &Sender{Spool: sp, Client: cl}
	if err := snd.Run(ctx, true); err != nil {
		t.Fatal(err)
	}
	if !sp.Empty() {
		t.Fatal("spool not empty after delivery")
	}
	return res
}
