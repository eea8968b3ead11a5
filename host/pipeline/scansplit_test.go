package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// TestScanSplitSameScan: a log scanned in two halves at once gives, when
// the halves are merged, exactly the scan of one pass — split at every
// line of logs with sessions named in both halves (by session entries and
// frames, several a frame, JSON-RPC batches), revision entries, gaps, an
// MCP server the import would scrub; and a log with bad lines, a seq gap
// and a seq repeated (windowTestLog) is either merged the same or scanned
// in one pass.
func TestScanSplitSameScan(t *testing.T) {
	for _, path := range []string{splitTestLog(t), windowTestLog(t, 200)} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		one, _, _, err := scanRange(path, fi, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		merged := 0
		for near := int64(1); near < fi.Size(); near += fi.Size()/150 + 1 {
			s, ok := scanSplit(path, fi, near)
			if !ok {
				continue
			}
			merged++
			if !reflect.DeepEqual(s, one) {
				t.Fatalf("%s split near %d: merged scan differs:\n%+v\none pass:\n%+v", filepath.Base(path), near, s, one)
			}
		}
		if len(one.Sessions) == 0 {
			t.Fatalf("%s: no sessions", path)
		}
		if path == splitTestLogPath && merged < 50 {
			t.Errorf("%s: only %d splits merged", path, merged)
		}
	}
	// ScanWire splits a log over splitMin, and gives the one pass's scan.
	defer func(m int64) { splitMin = m }(splitMin)
	splitMin = 0
	path := splitTestLog(t)
	got, err := ScanWire(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	want, _, _, _ := scanRange(path, fi, 0, 0)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("ScanWire split: not the one pass's scan")
	}
	if _, err := ScanWire(path + "-none"); err == nil {
		t.Fatal("no error for a missing log")
	}
}

var splitTestLogPath string

// splitTestLog writes a clean log whose sessions are named all along it.
func splitTestLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "split.jsonl")
	splitTestLogPath = path
	w, app, line := testLogWriter(t, path, "c-split")
	line(sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`)
	line(sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`)
	for i := range 300 {
		sess := fmt.Sprintf("sess_%d", i%7)
		switch {
		case i%50 == 10:
			if err := w.AppendRevision(wire.Revision{Revision: fmt.Sprintf("acp/2@x%d", i), Reason: "test", Plugins: []string{"a"}, SelectedBy: "revisions"}); err != nil {
				t.Fatal(err)
			}
		case i%41 == 3:
			app(wire.Entry{Type: wire.TypeSession, Dir: sdk.A2C, Session: wire.Session{ID: fmt.Sprintf("sess_e%d", i), Connections: 2}})
		case i%37 == 5:
			app(wire.Entry{Type: wire.TypeGap, Dir: sdk.A2C, Gap: sdk.Gap{Frames: 3, Bytes: 100, Reason: "queue full"}})
		case i%29 == 7:
			line(sdk.C2A, fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"method":"session/load","params":{"sessionId":"sess_b%d"}},{"jsonrpc":"2.0","method":"n","params":{"sessionId":"sess_c%d"}}]`, i, i, i%3))
		case i%31 == 9:
			line(sdk.C2A, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[{"name":"gh","command":"x","args":[],"env":[{"name":"T","value":"s3cret"}]}]}}`)
		case i%23 == 1:
			line(sdk.A2C, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"sessionId":"sess_r%d"}}`, i, i))
		default:
			line(sdk.A2C, fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d \"q\""}}}}`, sess, i))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// BenchmarkScanSplit times ScanWire over ACPTAP_BENCH_WIRE (a recorded
// wire log; skipped without one) in one pass and in two halves at once,
// alternately: wall and CPU time of the process per scan.
//
//	ACPTAP_BENCH_WIRE=/path/to/wire.jsonl go test -run '^$' -bench ScanSplit -benchtime 10x ./host/pipeline/
func BenchmarkScanSplit(b *testing.B) {
	path := os.Getenv("ACPTAP_BENCH_WIRE")
	if path == "" {
		b.Skip("ACPTAP_BENCH_WIRE names no wire log")
	}
	defer func(on bool, m int64) { splitScan, splitMin = on, m }(splitScan, splitMin)
	splitMin = 0
	var wall, cpu [2]time.Duration
	var n [2]int
	for i := 0; b.Loop(); i++ {
		k := i % 2
		splitScan = k == 1
		c0, t0 := processCPU(), time.Now()
		if _, err := ScanWire(path); err != nil {
			b.Fatal(err)
		}
		wall[k] += time.Since(t0)
		cpu[k] += processCPU() - c0
		n[k]++
	}
	for k, name := range []string{"one-pass", "halves"} {
		if n[k] > 0 {
			b.ReportMetric(float64(wall[k].Microseconds())/1e3/float64(n[k]), name+"-wall-ms")
			b.ReportMetric(float64(cpu[k].Microseconds())/1e3/float64(n[k]), name+"-cpu-ms")
		}
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
