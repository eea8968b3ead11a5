package sdk

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/acptap/acptap/sdk/asr"
)

// Streams writes the ASR streams of one connection, one per ACP session
// (ASR-701). It does the bookkeeping every ASR-writing plugin needs: it
// takes up a stream an earlier connection wrote (the host's KindSession
// frame), writes the header before a new stream's first record, fills each
// record's envelope (seq, id, ts, tsSource, observedAt, native.ref), declares
// a loss once per stream, and collects the outputs in order.
//
// A plugin makes one Streams in Start and hands Take's outputs back from Map
// and Finish; its diagnostics go through Diag so that they keep their place
// among the records.
type Streams struct {
	wire     string
	producer asr.Producer
	prior    map[string]*priorStream // taken up, not opened yet
	open     map[string]*Stream
	order    []*Stream // opening order, for deterministic iteration
	out      []Output
}

// Stream is the ASR stream of one ACP session on this connection.
type Stream struct {
	w         *Streams
	id        string
	next      uint64          // seq of the next record
	lossy     map[string]bool // categories in the header or declared since
	continued bool
}

// When is a record's time (ASR-707). For an update received live, At is
// the receipt time of the entity's first update: ts with tsSource
// "recorder". For history the agent replays (Replayed), ts is never taken
// from receipt time: At becomes observedAt, and Source, a time the replayed
// update itself carried (RFC 3339), becomes ts with tsSource "source".
type When struct {
	At       time.Time
	Replayed bool
	Source   string
}

// priorStream is what the store already has of a session's stream.
type priorStream struct {
	header *asr.Header
	next   uint64
	lossy  map[string]bool
}

// SummaryInternal is the summary of a diagnostic that reports a plugin bug
// (a record that could not be encoded, a recovered panic): what it concerns
// is not written, the stream goes on. sdk/mappertest fails on it.
const SummaryInternal = "internal error while mapping"

// NewStreams returns the streams of the connection req starts. producer is
// every new header's producer; its Lossy lists the categories every stream
// declares from its header on (ASR-722).
func NewStreams(req StartRequest, producer asr.Producer) *Streams {
	w := &Streams{wire: req.WireLog, producer: producer, prior: map[string]*priorStream{}, open: map[string]*Stream{}}
	return w
}

// TakeUp takes up what a KindSession frame says of a session: the plugin's
// stream so far (Prior, header first). The session's stream, when opened,
// continues it — no second header, the next seq after the last record, and
// the losses its header and declarations name already declared. TakeUp
// returns false (and takes nothing) for a frame that names no session or a
// session whose stream is already open on this connection: that stream
// keeps its seqs. A prior stream whose header cannot be read is still
// continued, with a diagnostic.
func (w *Streams) TakeUp(f *Frame) bool {
	if f.Session == nil || f.Session.ID == "" {
		return false
	}
	if _, open := w.open[f.Session.ID]; open {
		return false
	}
	w.takeUp(f.Session.ID, f.Session.Prior, []uint64{f.Seq})
	return true
}

func (w *Streams) takeUp(id string, lines [][]byte, seqs []uint64) {
	if len(lines) == 0 {
		delete(w.prior, id)
		return
	}
	p := &priorStream{next: 1, lossy: map[string]bool{}}
	h, err := asr.ReadHeader(lines[0])
	if err != nil {
		w.out = append(w.out, Diag(SeverityWarning, id, "prior stream has no readable header", err.Error(), seqs...))
	}
	p.header = &h
	for _, l := range h.Producer.Lossy {
		p.lossy[l] = true
	}
	for _, line := range lines[1:] {
		var r struct {
			Type  string   `json:"type"`
			Seq   uint64   `json:"seq"`
			Lossy []string `json:"lossy"`
		}
		if json.Unmarshal(line, &r) != nil || r.Type == "" {
			continue
		}
		p.next = max(p.next, r.Seq+1)
		if r.Type == asr.TypeDeclaration {
			for _, l := range r.Lossy {
				p.lossy[l] = true
			}
		}
	}
	w.prior[id] = p
}

// Prior returns the header of the stream the store has for session id, as
// taken up and not opened yet; false when there is none.
func (w *Streams) Prior(id string) (*asr.Header, bool) {
	p, ok := w.prior[id]
	if !ok {
		return nil, false
	}
	return p.header, true
}

// Stream returns session id's open stream, or nil.
func (w *Streams) Stream(id string) *Stream { return w.open[id] }

// Open returns session id's stream, opening it if needed: a stream taken
// up is continued; a new one starts with a header (createdAt is f's receipt
// time, producer as given to NewStreams), derived from f.
func (w *Streams) Open(id string, f *Frame) *Stream {
	if st := w.open[id]; st != nil {
		return st
	}
	h := asr.Header{Producer: w.producer}
	if !f.At.IsZero() {
		h.CreatedAt = asr.FormatTime(f.At)
	}
	return w.OpenHeader(id, &h, []uint64{f.Seq})
}

// OpenHeader is Open with the header given: a new stream's header is h
// with type, asr version and sessionId filled in, producer.lossy sorted (it
// is the stream's first set of declared losses), derived from the frames
// seqs (nil h: a header with the producer only). A stream taken up is
// continued and h is not used.
func (w *Streams) OpenHeader(id string, h *asr.Header, seqs []uint64) *Stream {
	if st := w.open[id]; st != nil {
		return st
	}
	if h == nil {
		h = &asr.Header{Producer: w.producer}
	}
	st := &Stream{w: w, id: id, next: 1, lossy: map[string]bool{}}
	w.open[id] = st
	w.order = append(w.order, st)
	if p, ok := w.prior[id]; ok {
		delete(w.prior, id)
		st.next, st.lossy, st.continued = p.next, p.lossy, true
		return st
	}
	hh := *h
	hh.Type, hh.ASR, hh.SessionID = "header", asr.FormatVersion, id
	for _, l := range h.Producer.Lossy {
		st.lossy[l] = true
	}
	hh.Producer.Lossy = asr.SortedKeys(st.lossy)
	line, err := asr.Marshal(hh)
	if err != nil {
		w.Diag(SeverityError, id, SummaryInternal, err.Error(), seqs...)
		return st
	}
	w.Emit(Output{Kind: ASRHeader, Session: id, JSON: line, FrameSeqs: outSeqs(normSeqs(seqs))})
	return st
}

// Gap declares the loss categories cats in every open stream that has not
// declared them yet, derived from gap frame f (a declaration record at f's
// receipt time). Streams opened later are not concerned.
func (w *Streams) Gap(f *Frame, cats ...string) {
	for _, st := range w.order {
		st.Declare(cats, When{At: f.At}, f.Seq)
	}
}

// Diag appends a diagnostic to the outputs, in its place among the records.
func (w *Streams) Diag(sev Severity, session, summary, detail string, seqs ...uint64) {
	w.out = append(w.out, Diag(sev, session, summary, detail, seqs...))
}

// Emit appends any other output (an AEP event, a diagnostic built
// elsewhere) in its place among the records.
func (w *Streams) Emit(o Output) { w.out = append(w.out, o) }

// Take returns the outputs collected since the last Take.
func (w *Streams) Take() []Output {
	out := w.out
	w.out = nil
	return out
}

// ID is the stream's ACP session id.
func (st *Stream) ID() string { return st.id }

// Continued says whether the stream continues one an earlier connection
// wrote (it has no header on this connection).
func (st *Stream) Continued() bool { return st.continued }

// Next is the seq the next record gets.
func (st *Stream) Next() uint64 { return st.next }

// Lossy says whether the stream declares loss category cat, in its header
// or a declaration, on this connection or an earlier one.
func (st *Stream) Lossy(cat string) bool { return st.lossy[cat] }

// Write appends record rec: it sets the envelope's seq and id (r<seq>), its
// times from w (any ts, tsSource or observedAt rec had are replaced), and
// native.ref to the wire log and the frames seqs (sorted, duplicates
// dropped: the elements of a batch share a seq), keeping a native.record
// rec has. The type, a status and supersedes are the caller's. It returns
// the record's id and line; "" and nil when rec could not be encoded (a
// diagnostic says so and the seq is not used).
func (st *Stream) Write(rec asr.Record, w When, seqs ...uint64) (string, []byte) {
	return st.write(rec, nil, w, seqs)
}

// WritePrepared is Write of p's record (asr.Prepare: the record encoded
// once for its fingerprint and its line), and ends p. The record may have
// changed since Prepare only as asr.Prepare allows (its place and links,
// which Write sets too).
func (st *Stream) WritePrepared(p *asr.Prepared, w When, seqs ...uint64) (string, []byte) {
	return st.write(p.Record(), p, w, seqs)
}

// write is Write, the line encoded from p when there is one.
func (st *Stream) write(rec asr.Record, p *asr.Prepared, w When, seqs []uint64) (string, []byte) {
	env := rec.Env()
	env.Seq, env.ID = st.next, asr.RecordID(st.next)
	env.TS, env.TSSource, env.ObservedAt = "", "", ""
	switch {
	case w.Replayed:
		if w.Source != "" {
			env.TS, env.TSSource = w.Source, asr.TSSourceSource
		}
		if !w.At.IsZero() {
			env.ObservedAt = asr.FormatTime(w.At)
		}
	case !w.At.IsZero():
		env.TS, env.TSSource = asr.FormatTime(w.At), asr.TSSourceRecorder
	}
	seqs = normSeqs(seqs)
	prov := rec.Prov()
	if prov.Native == nil {
		prov.Native = &asr.Native{}
	}
	prov.Native.Ref = &asr.NativeRef{Wire: st.w.wire, Frames: seqs}
	var line []byte
	var err error
	if p != nil {
		line, err = p.Line()
	} else {
		line, err = asr.Marshal(rec)
	}
	if err != nil {
		st.w.Diag(SeverityError, st.id, SummaryInternal, fmt.Sprintf("marshal %s: %v", env.Type, err), seqs...)
		return "", nil
	}
	st.next++
	st.w.Emit(Output{Kind: ASRRecord, Session: st.id, JSON: line, FrameSeqs: outSeqs(seqs)})
	return env.ID, line
}

// Declare declares the loss categories of cats the stream has not declared
// yet, in one declaration record (ASR-722; categories sorted); it writes
// nothing when all are declared. It reports whether it wrote.
func (st *Stream) Declare(cats []string, w When, seqs ...uint64) bool {
	var add []string
	for _, l := range cats {
		if !st.lossy[l] {
			st.lossy[l] = true
			add = append(add, l)
		}
	}
	if len(add) == 0 {
		return false
	}
	slices.Sort(add)
	_, line := st.Write(&asr.Declaration{Envelope: asr.Envelope{Type: asr.TypeDeclaration}, Lossy: add}, w, seqs...)
	return line != nil
}

// normSeqs returns a sorted copy of seqs without duplicates (nil for nil).
func normSeqs(seqs []uint64) []uint64 {
	if seqs == nil {
		return nil
	}
	out := slices.Clone(seqs)
	slices.Sort(out)
	return slices.Compact(out)
}

// outSeqs is an output's FrameSeqs: nil when there are none.
func outSeqs(seqs []uint64) []uint64 {
	if len(seqs) == 0 {
		return nil
	}
	return seqs
}
