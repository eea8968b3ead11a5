package otlpe2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/otlpcollector"
	"github.com/acptap/acptap/internal/testpeers"
	"github.com/acptap/acptap/sdk/aep"
)

// record returns the agent argv that runs the SDK agent through `acptap
// record` into store, with extra environment.
func record(store string, t *testing.T, env ...string) []string {
	argv := append([]string{"env"}, env...)
	argv = append(argv, acptapBin, "record", "--store", store, "--")
	return append(argv, testpeers.NodeArgv(t, "v2-agent.mjs")...)
}

type event struct {
	ID, Type, Session, Run, Severity string
	Seq                              int64
}

func readEvents(t *testing.T, path string) []event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// agentOf reads the ASR header's agent name.
func agentOf(t *testing.T, store, sid string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(store, "sessions", sid, "stream.asr.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var h struct{ Agent struct{ Name string } }
	line, _ := bufio.NewReader(f).ReadBytes('\n')
	json.Unmarshal(line, &h)
	return h.Agent.Name
}

// checkSession: what arrived is the stored session — one log record per
// AEP event (same event id, dev.aep.<type>), first arrivals in the log's
// order; one invoke_agent span per run, execute_tool spans as children of
// their run's span, with the GenAI attributes.
func checkSession(t *testing.T, c *otlpcollector.Collector, store, sid string) {
	t.Helper()
	evs := readEvents(t, filepath.Join(store, "aep", "acp", sid+".jsonl"))
	runs := map[string]bool{}
	tools := 0
	for _, e := range evs {
		if e.Type == "run.started" {
			runs[e.Run] = true
		}
		if e.Type == "tool.requested" {
			tools++
		}
	}
	c.Wait(t, 60*time.Second, "the session's records", func(l []otlpcollector.Log, s []otlpcollector.Span) bool {
		return len(l) >= len(evs) && len(s) >= len(runs)+tools
	})
	var order []string
	seen := map[string]otlpcollector.Log{}
	for _, l := range c.Logs() {
		id, _ := l.Attrs["aep.event_id"].(string)
		if _, ok := seen[id]; !ok {
			order = append(order, id)
			seen[id] = l
		}
	}
	var want []string
	for _, e := range evs {
		want = append(want, e.ID)
		l, ok := seen[e.ID]
		if !ok {
			t.Errorf("event %s (%s) did not arrive", e.ID, e.Type)
			continue
		}
		if l.EventName != "dev.aep."+e.Type || l.Attrs["aep.session_id"] != sid || l.Service != "acp" || l.Attrs["aep.sequence"] != e.Seq {
			t.Errorf("event %s arrived as %+v", e.ID, l)
		}
	}
	if !slices.Equal(order, want) {
		t.Errorf("arrival order differs from the AEP log:\n got %v\nwant %v", order, want)
	}
	agent := agentOf(t, store, sid)
	byID := map[string]otlpcollector.Span{}
	var turns, execs []otlpcollector.Span
	for _, s := range c.Spans() {
		if _, dup := byID[s.SpanID]; dup {
			continue
		}
		byID[s.SpanID] = s
		switch s.Attrs["gen_ai.operation.name"] {
		case "invoke_agent":
			turns = append(turns, s)
		case "execute_tool":
			execs = append(execs, s)
		}
	}
	if len(turns) != len(runs) || len(execs) != tools {
		t.Fatalf("%d invoke_agent and %d execute_tool spans, want %d and %d", len(turns), len(execs), len(runs), tools)
	}
	for _, s := range turns {
		if s.Name != "invoke_agent "+agent || s.Kind != "Client" || s.Attrs["gen_ai.conversation.id"] != sid || s.Attrs["session.id"] != sid ||
			s.Attrs["gen_ai.agent.name"] != agent || !runs[s.Attrs["aep.run_id"].(string)] || s.End.Before(s.Start) {
			t.Errorf("turn span %+v", s)
		}
		if fr, _ := s.Attrs["gen_ai.response.finish_reasons"].([]any); len(fr) != 1 || fr[0] != "end_turn" {
			t.Errorf("finish reasons %v", s.Attrs["gen_ai.response.finish_reasons"])
		}
		if _, ok := s.Attrs["gen_ai.input.messages"]; ok {
			t.Errorf("message content exported by default: %v", s.Attrs)
		}
	}
	waits := 0
	for _, s := range execs {
		parent, ok := byID[s.ParentSpanID]
		if !ok || parent.Attrs["gen_ai.operation.name"] != "invoke_agent" || parent.TraceID != s.TraceID ||
			s.Attrs["gen_ai.tool.call.id"] == nil || s.Attrs["gen_ai.conversation.id"] != sid || s.Kind != "Internal" {
			t.Errorf("tool span %+v (parent %+v)", s, parent)
		}
		for _, e := range s.Events {
			if e.Name == "acptap.permission" || e.Name == "acptap.elicitation" {
				waits++
			}
		}
	}
	for _, s := range turns {
		for _, e := range s.Events {
			if e.Name == "acptap.permission" || e.Name == "acptap.elicitation" {
				waits++
			}
		}
	}
	nAtt := 0
	for _, e := range evs {
		if e.Type == "attention.requested" {
			nAtt++
		}
	}
	if waits != nAtt {
		t.Errorf("%d wait span events, %d attention requests", waits, nAtt)
	}
}

// TestRecordedSessionArrivesAtTheCollector: an ACP v2 session between the
// official SDK client and agent, through `acptap record` with OTLP export
// on, arrives at the real collector receiver — over gRPC (configured with
// ACPTAP_OTLP_*) and over HTTP (configured with the standard
// OTEL_EXPORTER_OTLP_* variables) — as the session's spans and log
// records.
func TestRecordedSessionArrivesAtTheCollector(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(c *otlpcollector.Collector) []string
	}{
		{"grpc", func(c *otlpcollector.Collector) []string {
			return []string{"ACPTAP_OTLP_ENDPOINT=http://" + c.GRPCAddr, "ACPTAP_OTLP_PROTOCOL=grpc"}
		}},
		{"http-protobuf", func(c *otlpcollector.Collector) []string {
			return []string{"ACPTAP_OTLP_ENABLED=true", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + c.HTTPAddr,
				"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_HEADERS=x-team=acp%20tap"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := otlpcollector.Start(t)
			store := t.TempDir()
			res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store}, record(store, t, tc.env(c)...))
			res.RequireOK(t)
			checkSession(t, c, store, res.Summary.SessionID)
			if left := spoolSegments(t, filepath.Join(store, "otlp", "spool")); left != 0 {
				t.Errorf("%d segments left in the spool", left)
			}
		})
	}
}

func spoolSegments(t *testing.T, dir string) int {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".seg") {
			n++
		}
	}
	return n
}

func exportCmd(store string, args ...string) *exec.Cmd {
	cmd := exec.Command(acptapBin, append([]string{"export", "--otlp", "--store", store}, args...)...)
	return cmd
}

// TestCollectorDownDuringTheSession_DeliveredByTheNextRun: the collector
// is down for the whole recording; record does not wait for it (its
// records stay in the store's spool); once the collector is back the next
// run (`acptap export --otlp`, delivering what recordings left) sends
// everything, in order. A backfill of the same session to another
// collector then sends the same trace, span and event ids.
func TestCollectorDownDuringTheSession_DeliveredByTheNextRun(t *testing.T) {
	c := otlpcollector.NewStopped(t)
	store := t.TempDir()
	res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store},
		record(store, t, "ACPTAP_OTLP_ENDPOINT=http://"+c.GRPCAddr, "ACPTAP_OTLP_PROTOCOL=grpc", "ACPTAP_OTLP_FLUSH=200ms"))
	res.RequireOK(t)
	sid := res.Summary.SessionID
	if n := spoolSegments(t, filepath.Join(store, "otlp", "spool")); n == 0 {
		t.Fatal("nothing spooled while the collector was down")
	}
	c.Restart(t)
	out, err := exportCmd(store, "--endpoint", "http://"+c.GRPCAddr, "--protocol", "grpc").CombinedOutput()
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "left by recordings: delivered") {
		t.Errorf("export output:\n%s", out)
	}
	checkSession(t, c, store, sid)

	// Backfill to a second collector: the same ids.
	c2 := otlpcollector.Start(t)
	out, err = exportCmd(store, "--endpoint", "http://"+c2.HTTPAddr, "--session", sid).CombinedOutput()
	if err != nil {
		t.Fatalf("export --session: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "session 1/1") || !strings.Contains(string(out), "done") {
		t.Errorf("export output:\n%s", out)
	}
	checkSession(t, c2, store, sid)
	ids := func(c *otlpcollector.Collector) []string {
		var out []string
		for _, s := range c.Spans() {
			out = append(out, s.TraceID+"/"+s.SpanID+"/"+s.ParentSpanID+"/"+s.Name)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	if a, b := ids(c), ids(c2); !slices.Equal(a, b) {
		t.Errorf("live and backfill span ids differ:\n%v\n%v", a, b)
	}

	// Rebuild the outputs from the wire log, then backfill: still the same ids.
	wires, _ := filepath.Glob(filepath.Join(store, "wire", "*.jsonl"))
	if len(wires) != 1 {
		t.Fatalf("wire logs %v", wires)
	}
	if out, err := exec.Command(acptapBin, "rebuild", "--store", store, wires[0]).CombinedOutput(); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	c3 := otlpcollector.Start(t)
	if out, err := exportCmd(store, "--endpoint", "http://"+c3.GRPCAddr, "--protocol", "grpc", "--session", sid).CombinedOutput(); err != nil {
		t.Fatalf("export after rebuild: %v\n%s", err, out)
	}
	checkSession(t, c3, store, sid)
	if a, b := ids(c), ids(c3); !slices.Equal(a, b) {
		t.Errorf("live and rebuilt span ids differ:\n%v\n%v", a, b)
	}
	logIDs := func(c *otlpcollector.Collector) []string {
		var out []string
		for _, l := range c.Logs() {
			out = append(out, l.Attrs["aep.event_id"].(string)+"/"+l.TraceID+"/"+l.SpanID)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	if a, b := logIDs(c), logIDs(c3); !slices.Equal(a, b) {
		t.Errorf("live and rebuilt log record ids differ:\n%v\n%v", a, b)
	}
}

// TestExportKilledMidDeliveryResumes: `acptap export --otlp --session`
// is killed (SIGKILL) while the collector refuses; the next run delivers
// what the first one spooled, and nothing is missing.
func TestExportKilledMidDeliveryResumes(t *testing.T) {
	store := t.TempDir()
	res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store}, record(store, t))
	res.RequireOK(t)
	sid := res.Summary.SessionID
	c := otlpcollector.Start(t)
	c.Refuse(true)
	cmd := exportCmd(store, "--endpoint", "http://"+c.HTTPAddr, "--session", sid)
	var stderr testpeers.SyncBuffer // read while the export runs
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exportSpool := filepath.Join(store, "otlp", "export")
	deadline := time.Now().Add(60 * time.Second)
	for spoolSegments(t, exportSpool) == 0 || !strings.Contains(stderr.String(), "→") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("export spooled nothing:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a few refused attempts
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if len(c.Logs()) != 0 {
		t.Fatalf("the refusing collector took %d records", len(c.Logs()))
	}
	if spoolSegments(t, exportSpool) == 0 {
		t.Fatal("the killed export left nothing to resume")
	}
	c.Refuse(false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, acptapBin, "export", "--otlp", "--store", store, "--endpoint", "http://"+c.HTTPAddr).CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "left from an earlier export: delivered") {
		t.Errorf("resume output:\n%s", out)
	}
	checkSession(t, c, store, sid)
	if n := spoolSegments(t, exportSpool); n != 0 {
		t.Errorf("%d segments left", n)
	}
	_ = aep.Metadata
}

// TestSpansJoinTheEditorsTrace: the editor sends _meta.traceparent with
// its prompts; acptap's turn spans are children of that span, in that
// trace, and the tool spans follow — the agent's traces and acptap's join.
func TestSpansJoinTheEditorsTrace(t *testing.T) {
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	c := otlpcollector.Start(t)
	store := t.TempDir()
	res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store, "--traceparent", tp},
		record(store, t, "ACPTAP_OTLP_ENDPOINT=http://"+c.HTTPAddr))
	res.RequireOK(t)
	checkSession(t, c, store, res.Summary.SessionID)
	for _, s := range c.Spans() {
		if s.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("%s in trace %s", s.Name, s.TraceID)
		}
		if s.Attrs["gen_ai.operation.name"] == "invoke_agent" && s.ParentSpanID != "00f067aa0ba902b7" {
			t.Errorf("%s parent %s", s.Name, s.ParentSpanID)
		}
	}
}

// TestExportUsageAndSkippedLines: export without --otlp is a usage error;
// an unknown session fails naming it; a line that is not an AEP event is
// reported as file:line, the rest is still delivered, and the exit is 1.
func TestExportUsageAndSkippedLines(t *testing.T) {
	store := t.TempDir()
	run := func(args ...string) (int, string) {
		cmd := exec.Command(acptapBin, append([]string{"export", "--store", store}, args...)...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := run(); code != 2 || !strings.Contains(out, "give one of --otlp, --html or --markdown") {
		t.Errorf("no format: %d %s", code, out)
	}
	if code, out := run("--otlp", "--all", "--session", "x"); code != 2 {
		t.Errorf("--all with --session: %d %s", code, out)
	}
	c := otlpcollector.Start(t)
	if code, out := run("--otlp", "--endpoint", "http://"+c.HTTPAddr, "--session", "nope"); code != 1 || !strings.Contains(out, `session "nope"`) {
		t.Errorf("unknown session: %d %s", code, out)
	}
	dir := filepath.Join(store, "aep", "acp")
	os.MkdirAll(dir, 0o700)
	good := `{"aep":"0.1","id":"E1","type":"session.started","time":"2026-07-03T10:00:00.000Z","agent":"acp","session":"s1","seq":0,"epoch":0,"data":{"client":{"name":"acp"}}}`
	if err := os.WriteFile(filepath.Join(dir, "s1.jsonl"), []byte(good+"\nnot json\n"+strings.Replace(good, "E1", "E2", 1)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := run("--otlp", "--endpoint", "http://"+c.HTTPAddr, "--all")
	if code != 1 || !strings.Contains(out, "s1.jsonl:2: ") {
		t.Errorf("skipped line: %d %s", code, out)
	}
	c.Wait(t, 30*time.Second, "the two good events", func(l []otlpcollector.Log, _ []otlpcollector.Span) bool { return len(l) >= 2 })
}
