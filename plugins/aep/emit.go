package aep

import (
	"strconv"
	"strings"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

// draft is one event before the envelope is stamped.
type draft struct {
	typ      string
	session  string
	subject  string
	run      string
	severity string
	level    aep.Level
	data     obj
	tp       string // traceparent
	// subjectKey and causeKey name earlier events (by the key they were
	// remembered under) whose ids become subject and cause; setKey
	// remembers this event's id.
	subjectKey, causeKey, setKey string
	// causeAlt is the cause when causeKey names no event.
	causeAlt string
	// release are keys of ids no later event names: forgotten once this
	// event is stamped.
	release []string
}

// frameRef identifies what the events being stamped came from.
type frameRef struct {
	seq   uint64
	batch int
	at    time.Time
	tag   string // "" for a wire frame; "finish" at the end
	n     int    // events stamped for this frame so far
}

// level returns the capture level an event of typ is written at: its
// category's ceiling; content-free x.acp.* events never claim more than
// metadata.
func (c *conn) level(typ string) aep.Level {
	cat, _, _ := strings.Cut(typ, ".")
	l := c.s.ceiling(cat)
	if cat == "x" && l > aep.Metadata {
		l = aep.Metadata
	}
	return l
}

// newDraft starts an event of typ in session st, inside its open run.
func (c *conn) newDraft(st *sess, typ, severity string) *draft {
	return &draft{typ: typ, session: st.id, run: st.openRun, severity: severity, level: c.level(typ)}
}

// stamp turns drafts into AEP event outputs: seq and epoch of the
// session, a derived ULID, the frame's time, source, capture and data
// pruned to the level.
func (c *conn) stamp(ref *frameRef, drafts []*draft) {
	for _, d := range drafts {
		st := c.sessions[d.session]
		if d.session == "" || st == nil {
			continue // no session and no connection lane: dropped
		}
		idx := ref.n
		ref.n++
		seqTag := strconv.FormatUint(ref.seq, 10)
		if ref.tag != "" {
			seqTag = ref.tag
		}
		ev := aep.Event{
			ID:   aep.DerivedULID(ref.at, c.conn, seqTag, strconv.Itoa(ref.batch), strconv.Itoa(idx), d.typ),
			Type: d.typ, Time: ref.at, Source: st.sourceOf(c.s.host), Agent: Agent,
			Session: st.id, Run: d.run, Seq: aep.Int(st.seq), Epoch: aep.Int(st.epoch),
			Traceparent: d.tp, Severity: d.severity, Capture: d.level, Subject: d.subject,
		}
		st.seq++
		if d.subjectKey != "" {
			ev.Subject = st.ids[d.subjectKey]
		}
		if d.causeKey != "" {
			ev.Cause = st.ids[d.causeKey]
		}
		if ev.Cause == "" && d.causeAlt != "" {
			ev.Cause = st.ids[d.causeAlt]
		}
		if d.level > aep.None {
			data := d.data
			if data == nil {
				data = obj{}
			}
			aep.Prune(d.typ, data, d.level)
			ev.Data = data
		}
		b, err := encodeEvent(&ev)
		if err == nil && d.setKey != "" {
			st.ids[d.setKey] = ev.ID
		}
		for _, k := range d.release {
			delete(st.ids, k)
		}
		if err != nil {
			c.diag(sdk.SeverityError, st.id, "event not encoded", err.Error(), ref.seq)
			continue
		}
		out := sdk.Output{Kind: sdk.AEPEvent, Session: st.id, JSON: b}
		if ref.tag == "" {
			out.FrameSeqs = []uint64{ref.seq}
		}
		c.outs = append(c.outs, out)
	}
}

// diag records a diagnostic output.
func (c *conn) diag(sev sdk.Severity, session, summary, detail string, seqs ...uint64) {
	c.outs = append(c.outs, sdk.Diag(sev, session, summary, detail, seqs...))
}

// sourceOf is the events' source, aep.Source of the session, made once.
func (st *sess) sourceOf(host string) string {
	if st.source == "" {
		st.source = aep.Source(host, Agent, st.id)
	}
	return st.source
}
