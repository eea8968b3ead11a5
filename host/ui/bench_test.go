package ui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/acptap/acptap/host/store"
)

// bigStream writes a stream of n records: user and assistant messages,
// tool calls and their results, a usage summary now and then.
func bigStream(b testing.TB, path string, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, `{"type":"header","asr":"0.1","sessionId":"big","createdAt":"2026-12-01T00:00:00Z","agent":{"name":"bench","version":"1"},"producer":{"method":"recorder","name":"acptap","lossy":[]}}`)
	for i := 1; i <= n; i++ {
		ref := fmt.Sprintf(`,"native":{"ref":{"wire":"c-big.jsonl","frames":[%d]}}`, i)
		switch i % 5 {
		case 0:
			fmt.Fprintf(w, `{"type":"message","seq":%d,"id":"r%d","messageId":"u%d","role":"user","origin":"prompt","content":[{"type":"text","text":"Please look at file %d and fix what is wrong with it."}]%s}`+"\n", i, i, i, i, ref)
		case 1, 2:
			fmt.Fprintf(w, `{"type":"message","seq":%d,"id":"r%d","messageId":"a%d","role":"assistant","content":[{"type":"text","text":"I read the file and changed the function that parses the header; the tests pass now. Line %d."}]%s}`+"\n", i, i, i, i, ref)
		case 3:
			fmt.Fprintf(w, `{"type":"tool_call","seq":%d,"id":"r%d","callId":"c%d","name":"edit","title":"Edit file %d","kind":"edit","input":{"path":"f%d.go"}%s}`+"\n", i, i, i, i, i, ref)
		case 4:
			fmt.Fprintf(w, `{"type":"tool_result","seq":%d,"id":"r%d","status":"completed","callId":"c%d","displayContent":[{"type":"text","text":"ok"}]%s}`+"\n", i, i, i-1, ref)
		}
	}
	w.Flush()
	f.Close()
}

func benchStore(b *testing.B) (*store.Store, *Server) {
	b.Helper()
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("sess-%04d", i)
	}
	st := newStore(b, ids...)
	os.MkdirAll(st.SessionDir("big"), 0o700)
	bigStream(b, st.StreamPath("big"), 100_000)
	srv := New(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, Options{Store: st})
	return st, srv
}

// readAll is the baseline: read every stream of the store once.
func readAll(b *testing.B, st *store.Store) time.Duration {
	ids, _ := st.Sessions()
	t0 := time.Now()
	for _, id := range ids {
		f, err := os.Open(st.StreamPath(id))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, f)
		f.Close()
	}
	return time.Since(t0)
}

// BenchmarkSessionsPage: the sessions page's first 50 of a store of 1,001
// sessions (1,000 small, one of 100,000 records), cold (nothing cached) and
// warm, against reading every stream's bytes once.
func BenchmarkSessionsPage(b *testing.B) {
	st, _ := benchStore(b)
	var cold, warm, base time.Duration
	var peak uint64
	for i := 0; i < b.N; i++ {
		srv := New(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, Options{Store: st})
		runtime.GC()
		t0 := time.Now()
		l, err := srv.listSessions("", "", "", "", "", false, 0, 50)
		cold += time.Since(t0)
		if err != nil || l.Total != 1001 {
			b.Fatalf("%v %d", err, l.Total)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
		t0 = time.Now()
		srv.listSessions("", "", "", "", "", false, 0, 50)
		warm += time.Since(t0)
		base += readAll(b, st)
	}
	n := float64(b.N)
	b.ReportMetric(cold.Seconds()*1000/n, "cold_ms")
	b.ReportMetric(warm.Seconds()*1000/n, "warm_ms")
	b.ReportMetric(cold.Seconds()/base.Seconds(), "cold_x_read")
	b.ReportMetric(float64(peak)/(1<<20), "heap_MiB")
}

// BenchmarkBigSessionFirstScreen: /api/session of the 100,000-record
// session (its first window of 500 records), cold (the summary not read
// yet: the answer does not wait for it) and warm (with the summary), the
// time until /api/summary has the summary (summary_ms, from the cold
// request on), against one json.Unmarshal of each of those 500 lines.
func BenchmarkBigSessionFirstScreen(b *testing.B) {
	st, _ := benchStore(b)
	var cold, warm, summary, base time.Duration
	var size int
	var peak uint64
	for i := 0; i < b.N; i++ {
		srv := New(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, Options{Store: st, Token: "t"})
		runtime.GC()
		var t1 time.Time
		for k, u := range []string{"/api/session", "/api/summary", "/api/session"} {
			req := httptest.NewRequest("GET", "http://127.0.0.1:1"+u+"?id=big&token=t", nil)
			rec := httptest.NewRecorder()
			t0 := time.Now()
			srv.ServeHTTP(rec, req)
			switch k {
			case 0:
				t1 = t0
				cold += time.Since(t0)
				size = rec.Body.Len()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			case 1:
				summary += time.Since(t1)
			case 2:
				warm += time.Since(t0)
			}
			if rec.Code != 200 {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
		f, _ := os.Open(st.StreamPath("big"))
		sc := bufio.NewScanner(f)
		t0 := time.Now()
		for k := 0; k < DefaultWindow+1 && sc.Scan(); k++ {
			var v any
			json.Unmarshal(sc.Bytes(), &v)
		}
		base += time.Since(t0)
		f.Close()
	}
	n := float64(b.N)
	b.ReportMetric(cold.Seconds()*1000/n, "cold_ms")
	b.ReportMetric(warm.Seconds()*1000/n, "warm_ms")
	b.ReportMetric(warm.Seconds()/base.Seconds(), "warm_x_parse")
	b.ReportMetric(summary.Seconds()*1000/n, "summary_ms")
	b.ReportMetric(float64(size)/1024, "response_KiB")
	b.ReportMetric(float64(peak)/(1<<20), "heap_MiB")
}
