package acpv2

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
)

// writeReplayBench writes a recorder-like stream of n records (turns of a
// prompt revised at the end of the turn, a thought, an answer revised, two
// tool calls with results, a diff, a terminal, usage and states).
func writeReplayBench(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"type":"header","asr":"0.1","sessionId":"bench","producer":{"method":"recorder","name":"acptap","lossy":[]},"workspace":{"roots":[{"id":"root0","path":"/home/dev/src/app"}]}}` + "\n")
	seq := 0
	text := strings.Repeat("lorem ipsum dolor sit amet ", 6)
	rec := func(body string) int {
		if seq >= n {
			return seq
		}
		seq++
		fmt.Fprintf(w, `{"seq":%d,"id":"r%d","ts":"2026-10-26T14:30:41.207Z","tsSource":"recorder",%s}`+"\n", seq, seq, body)
		return seq
	}
	for turn := 0; seq < n; turn++ {
		k := strconv.Itoa(turn)
		prompt := rec(`"type":"message","messageId":"u-` + k + `","role":"user","content":[{"type":"text","text":"` + text + `"}]`)
		answer := rec(`"type":"message","messageId":"a-` + k + `","role":"assistant","content":[{"type":"reasoning","text":"hm"},{"type":"text","text":"` + text + `"}]`)
		rec(`"type":"tool_call","callId":"c-` + k + `","name":"edit","input":{"path":"/home/dev/src/app/main.go"},"locations":[{"path":{"root":"root0","path":"main.go"}}]`)
		rec(`"type":"file_change","cause":{"callId":"c-` + k + `"},"changes":[{"op":"modify","path":{"root":"root0","path":"main.go"}}]`)
		rec(`"type":"tool_result","status":"completed","callId":"c-` + k + `","displayContent":[{"type":"text","text":"ok"}],"exec":{"terminalId":"t-` + k + `"}`)
		rec(`"type":"terminal","status":"exited","terminalId":"t-` + k + `","command":"go test","exitCode":0,"output":{"blob":{"encoding":"base64","data":"b2sK"}}`)
		rec(`"type":"usage_summary","scope":"session","cumulative":true,"contextWindow":{"used":1,"size":2}`)
		rec(`"type":"message","supersedes":"r` + strconv.Itoa(answer) + `","messageId":"a-` + k + `","role":"assistant","content":[{"type":"text","text":"` + text + `!"}]`)
		rec(`"type":"state","state":"idle","stopReason":"end_turn"`)
		rec(`"type":"message","supersedes":"r` + strconv.Itoa(prompt) + `","messageId":"u-` + k + `","role":"user","origin":"prompt","content":[{"type":"text","text":"` + text + `"}]`)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// BenchmarkReplayInProcess: records/s of the replayer on a stream file, in
// this process (see internal/replaytest for the out-of-process figures
// and peak RSS). ACPTAP_REPLAY_BENCH_STREAM replays that file instead.
func BenchmarkReplayInProcess(b *testing.B) {
	for _, n := range []int{100_000} {
		path := filepath.Join(b.TempDir(), "s.asr.jsonl")
		if p := os.Getenv("ACPTAP_REPLAY_BENCH_STREAM"); p != "" {
			path = p
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			n = bytes.Count(data, []byte("\n")) - 1
		} else if err := writeReplayBench(path, n); err != nil {
			b.Fatal(err)
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			rr := New().(sdk.Replayer)
			for i := 0; i < b.N; i++ {
				f, _ := os.Open(path)
				if _, err := rr.Replay(context.Background(), nil, Input, f, func(sdk.Output) error { return nil }); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
