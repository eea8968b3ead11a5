package sdk_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/asr/asrcheck"
)

var at = time.Date(2026, 10, 26, 14, 30, 41, 207_000_000, time.UTC)

var producer = asr.Producer{Method: "recorder", Name: "t", Version: "1", Plugin: &asr.Plugin{Name: "t", Version: "1"},
	Lossy: []string{"timestamps"}}

type note struct {
	asr.Envelope
	Text string `json:"text"`
	asr.Provenance
}

func newNote(text string) *note { return &note{Envelope: asr.Envelope{Type: "_t/note"}, Text: text} }

func line(seq uint64, ms int) *sdk.Frame {
	return &sdk.Frame{Kind: sdk.KindLine, Seq: seq, Dir: sdk.A2C, At: at.Add(time.Duration(ms) * time.Millisecond)}
}

// got renders outputs as "<session> <kind> <frames> <json>".
func got(outs []sdk.Output) []string {
	var s []string
	for _, o := range outs {
		if o.Kind == sdk.Diagnostic {
			s = append(s, o.Session+" diagnostic "+o.Summary)
			continue
		}
		s = append(s, o.Session+" "+o.Kind.String()+" "+string(o.JSON))
	}
	return s
}

// TestStreamsNewStream: a new stream's header comes before its first record
// (ASR-701: one stream per session, sessionId verbatim; ASR-722: the
// producer's lossy in the header); records get dense seqs, r<seq> ids, the
// receipt time as ts with tsSource recorder (ASR-707) and native.ref to the
// wire log and the sorted, deduplicated frames (ASR-723).
func TestStreamsNewStream(t *testing.T) {
	w := sdk.NewStreams(sdk.StartRequest{WireLog: "c-1.jsonl"}, producer)
	f := line(4, 0)
	st := w.Open("s1", f)
	if w.Open("s1", line(9, 9)) != st || w.Stream("s1") != st {
		t.Fatal("a second Open made a second stream")
	}
	id, _ := st.Write(newNote("a"), sdk.When{At: f.At}, 4)
	rec := newNote("b")
	rec.TS, rec.Seq = "stale", 99 // the writer owns the envelope
	rec.Native = &asr.Native{Record: []byte(`{"x":1}`)}
	st.Write(rec, sdk.When{At: at.Add(5 * time.Millisecond)}, 7, 5, 7)
	w.Open("s 2", line(8, 8)).Write(newNote("c"), sdk.When{}, 8)
	want := []string{
		`s1 asr-header {"type":"header","asr":"0.1","sessionId":"s1","createdAt":"2026-10-26T14:30:41.207Z","producer":{"method":"recorder","name":"t","version":"1","plugin":{"name":"t","version":"1"},"lossy":["timestamps"]}}`,
		`s1 asr-record {"type":"_t/note","seq":1,"id":"r1","ts":"2026-10-26T14:30:41.207Z","tsSource":"recorder","text":"a","native":{"ref":{"wire":"c-1.jsonl","frames":[4]}}}`,
		`s1 asr-record {"type":"_t/note","seq":2,"id":"r2","ts":"2026-10-26T14:30:41.212Z","tsSource":"recorder","text":"b","native":{"ref":{"wire":"c-1.jsonl","frames":[5,7]},"record":{"x":1}}}`,
		`s 2 asr-header {"type":"header","asr":"0.1","sessionId":"s 2","createdAt":"2026-10-26T14:30:41.215Z","producer":{"method":"recorder","name":"t","version":"1","plugin":{"name":"t","version":"1"},"lossy":["timestamps"]}}`,
		`s 2 asr-record {"type":"_t/note","seq":1,"id":"r1","text":"c","native":{"ref":{"wire":"c-1.jsonl","frames":[8]}}}`,
	}
	outs := w.Take()
	if d := cmp.Diff(want, got(outs)); d != "" {
		t.Fatalf("outputs (-want +got):\n%s", d)
	}
	if id != "r1" || st.Next() != 3 || st.Continued() {
		t.Errorf("id %q, next %d, continued %v", id, st.Next(), st.Continued())
	}
	if s := outs[2].FrameSeqs; len(s) != 2 || s[0] != 5 || s[1] != 7 {
		t.Errorf("frame seqs %v, want [5 7]", s)
	}
	if len(w.Take()) != 0 {
		t.Error("Take returned outputs twice")
	}
}

// TestStreamsReplayedTimes: replayed history never gets ts from receipt
// time; it carries observedAt, and a source time as ts (ASR-707).
func TestStreamsReplayedTimes(t *testing.T) {
	w := sdk.NewStreams(sdk.StartRequest{WireLog: "w"}, producer)
	st := w.Open("s", line(1, 0))
	st.Write(newNote("replayed"), sdk.When{At: at, Replayed: true}, 1)
	st.Write(newNote("sourced"), sdk.When{At: at, Replayed: true, Source: "2026-01-01T00:00:00.000Z"}, 2)
	outs := got(w.Take())[1:]
	want := []string{
		`s asr-record {"type":"_t/note","seq":1,"id":"r1","observedAt":"2026-10-26T14:30:41.207Z","text":"replayed","native":{"ref":{"wire":"w","frames":[1]}}}`,
		`s asr-record {"type":"_t/note","seq":2,"id":"r2","ts":"2026-01-01T00:00:00.000Z","tsSource":"source","observedAt":"2026-10-26T14:30:41.207Z","text":"sourced","native":{"ref":{"wire":"w","frames":[2]}}}`,
	}
	if d := cmp.Diff(want, outs); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

// TestStreamsDeclareOnce: a loss category is declared once per stream
// (ASR-722): by the header, by an earlier declaration, or by a gap in every
// stream open at the time; streams opened after the gap are not concerned.
func TestStreamsDeclareOnce(t *testing.T) {
	w := sdk.NewStreams(sdk.StartRequest{WireLog: "w"}, producer)
	a := w.Open("a", line(1, 0))
	b := w.Open("b", line(2, 1))
	if a.Declare([]string{"timestamps"}, sdk.When{}, 2) {
		t.Error("declared a category the header has")
	}
	if !a.Declare([]string{"x/two", "x/one", "x/two"}, sdk.When{At: at}, 3) {
		t.Error("new categories not declared")
	}
	gap := &sdk.Frame{Kind: sdk.KindGap, Seq: 4, At: at.Add(time.Second)}
	w.Gap(gap, "x/gap", "x/one")
	w.Gap(gap, "x/gap")
	w.Open("c", line(5, 5))
	var decls []string
	for _, o := range w.Take() {
		if strings.Contains(string(o.JSON), `"declaration"`) {
			decls = append(decls, o.Session+" "+string(o.JSON))
		}
	}
	want := []string{
		`a {"type":"declaration","seq":1,"id":"r1","ts":"2026-10-26T14:30:41.207Z","tsSource":"recorder","lossy":["x/one","x/two"],"native":{"ref":{"wire":"w","frames":[3]}}}`,
		`a {"type":"declaration","seq":2,"id":"r2","ts":"2026-10-26T14:30:42.207Z","tsSource":"recorder","lossy":["x/gap"],"native":{"ref":{"wire":"w","frames":[4]}}}`,
		`b {"type":"declaration","seq":1,"id":"r1","ts":"2026-10-26T14:30:42.207Z","tsSource":"recorder","lossy":["x/gap","x/one"],"native":{"ref":{"wire":"w","frames":[4]}}}`,
	}
	if d := cmp.Diff(want, decls); d != "" {
		t.Fatalf("declarations (-want +got):\n%s", d)
	}
	if !b.Lossy("x/gap") || !b.Lossy("timestamps") || b.Lossy("x/two") {
		t.Error("Lossy does not follow the declarations")
	}
}

// TestStreamsContinue: a stream the store has (a session frame's Prior)
// is continued on this connection: no second header, the next seq after
// the highest one written, and the losses of its header and declarations
// not declared again. A session frame for a stream already open, or one
// naming no session, is refused; an empty Prior starts a new stream.
func TestStreamsContinue(t *testing.T) {
	prior := [][]byte{
		[]byte(`{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"t","lossy":["timestamps"]},"workspace":{"roots":[{"id":"root0","path":"/w"}]}}`),
		[]byte(`{"type":"_t/note","seq":1,"id":"r1","text":"a"}`),
		[]byte(`{"type":"declaration","seq":3,"id":"r3","lossy":["x/gap"]}`),
		[]byte(`{"type":"_t/note","seq":2,"id":"r2"}`),
		[]byte(`not json`),
	}
	w := sdk.NewStreams(sdk.StartRequest{WireLog: "c-2.jsonl"}, producer)
	if w.TakeUp(&sdk.Frame{Kind: sdk.KindSession, Session: &sdk.SessionInfo{}}) {
		t.Error("took up a session frame without a session")
	}
	if !w.TakeUp(&sdk.Frame{Kind: sdk.KindSession, Seq: 1, Session: &sdk.SessionInfo{ID: "s1", Connections: 1, Prior: prior}}) {
		t.Fatal("TakeUp refused a prior stream")
	}
	w.TakeUp(&sdk.Frame{Kind: sdk.KindSession, Seq: 2, Session: &sdk.SessionInfo{ID: "s2"}})
	h, ok := w.Prior("s1")
	if !ok || h.Workspace == nil || h.Workspace.Roots[0].ID != "root0" {
		t.Fatalf("Prior: %+v %v", h, ok)
	}
	if _, ok := w.Prior("s2"); ok {
		t.Error("an empty prior stream is a prior stream")
	}
	st := w.Open("s1", line(3, 3))
	if !st.Continued() || st.Next() != 4 {
		t.Fatalf("continued %v, next %d; want true, 4", st.Continued(), st.Next())
	}
	if _, ok := w.Prior("s1"); ok {
		t.Error("Prior still reports an opened stream")
	}
	if w.TakeUp(&sdk.Frame{Kind: sdk.KindSession, Seq: 4, Session: &sdk.SessionInfo{ID: "s1", Prior: prior[:1]}}) {
		t.Error("a session frame for an open stream was taken up")
	}
	st.Write(newNote("b"), sdk.When{}, 3)
	w.Gap(&sdk.Frame{Kind: sdk.KindGap, Seq: 5}, "x/gap", "timestamps")
	w.Open("s2", line(6, 6))
	want := []string{
		`s1 asr-record {"type":"_t/note","seq":4,"id":"r4","text":"b","native":{"ref":{"wire":"c-2.jsonl","frames":[3]}}}`,
		`s2 asr-header {"type":"header","asr":"0.1","sessionId":"s2","createdAt":"2026-10-26T14:30:41.213Z","producer":{"method":"recorder","name":"t","version":"1","plugin":{"name":"t","version":"1"},"lossy":["timestamps"]}}`,
	}
	if d := cmp.Diff(want, got(w.Take())); d != "" {
		t.Fatalf("outputs (-want +got):\n%s", d)
	}
}

// TestStreamsUnreadablePrior: a prior stream whose header cannot be read is
// still continued (the store has a stream; a second header would make two),
// with a diagnostic.
func TestStreamsUnreadablePrior(t *testing.T) {
	w := sdk.NewStreams(sdk.StartRequest{WireLog: "w"}, producer)
	w.TakeUp(&sdk.Frame{Kind: sdk.KindSession, Seq: 7, Session: &sdk.SessionInfo{ID: "s", Prior: [][]byte{[]byte(`{"type":`), []byte(`{"type":"x","seq":5}`)}}})
	st := w.Open("s", line(8, 0))
	outs := w.Take()
	if d := cmp.Diff([]string{"s diagnostic prior stream has no readable header"}, got(outs)); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	if outs[0].FrameSeqs[0] != 7 || st.Next() != 6 {
		t.Errorf("diagnostic frames %v, next %d", outs[0].FrameSeqs, st.Next())
	}
}

// badRecord cannot be encoded.
type badRecord struct {
	asr.Envelope
	C chan int `json:"c"`
	asr.Provenance
}

// TestStreamsEncodeError: a record that cannot be encoded is a diagnostic,
// not a hole in the seqs.
func TestStreamsEncodeError(t *testing.T) {
	w := sdk.NewStreams(sdk.StartRequest{WireLog: "w"}, producer)
	st := w.Open("s", line(1, 0))
	if id, l := st.Write(&badRecord{Envelope: asr.Envelope{Type: "x"}, C: make(chan int)}, sdk.When{}, 1); id != "" || l != nil {
		t.Fatalf("wrote %q %s", id, l)
	}
	st.Write(newNote("ok"), sdk.When{}, 2)
	outs := got(w.Take())
	if len(outs) != 3 || outs[1] != "s diagnostic internal error while mapping" || !strings.Contains(outs[2], `"seq":1,`) {
		t.Fatalf("outputs: %q", outs)
	}
}

// TestStreamsValidASR: what the writer writes — a new stream and one that
// continues a prior stream, with records, a loss and a gap — is a valid ASR
// stream for the stream validator (header first, dense seqs, r<seq> ids,
// envelopes and declarations by the schema).
func TestStreamsValidASR(t *testing.T) {
	first := sdk.NewStreams(sdk.StartRequest{WireLog: "c-1.jsonl"}, producer)
	st := first.Open("s", line(1, 0))
	st.Write(&asr.State{Envelope: asr.Envelope{Type: asr.TypeState}, State: "running"}, sdk.When{At: at}, 1)
	st.Declare([]string{"reasoning"}, sdk.When{At: at}, 2)
	first.Gap(&sdk.Frame{Kind: sdk.KindGap, Seq: 3, At: at}, "_t/gap")
	var lines [][]byte
	for _, o := range first.Take() {
		lines = append(lines, o.JSON)
	}
	second := sdk.NewStreams(sdk.StartRequest{WireLog: "c-2.jsonl"}, producer)
	second.TakeUp(&sdk.Frame{Kind: sdk.KindSession, Seq: 1, Session: &sdk.SessionInfo{ID: "s", Connections: 1, Prior: lines}})
	st = second.Open("s", line(1, 5))
	st.Write(&asr.State{Envelope: asr.Envelope{Type: asr.TypeState}, State: "idle"}, sdk.When{At: at.Add(time.Second)}, 1)
	second.Gap(&sdk.Frame{Kind: sdk.KindGap, Seq: 2, At: at}, "_t/gap", "_t/other")
	for _, o := range second.Take() {
		lines = append(lines, o.JSON)
	}
	var b strings.Builder
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	var problems []string
	if _, err := asrcheck.Validate(strings.NewReader(b.String()), func(p asrcheck.Problem) { problems = append(problems, p.String()) }); err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 || len(lines) != 6 {
		t.Fatalf("%d lines, problems:\n%s\n%s", len(lines), strings.Join(problems, "\n"), b.String())
	}
}
