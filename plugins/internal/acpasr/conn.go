package acpasr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// errFinished is returned when Map or Finish is called after Finish.
var errFinished = errors.New("acpasr: session already finished")

// conn maps one connection: it owns the pending requests and the ASR
// streams of the ACP sessions seen on it, and collects outputs in order.
type conn struct {
	opts    Options
	cfg     Config
	wire    string
	prior   map[string]*priorState // sessions the store knows, until opened
	streams map[string]*stream
	// lastStream is the stream streamFor found last (most frames name the
	// session of the frame before).
	lastStream *stream
	list       []*stream // creation order, for deterministic iteration
	pending    map[pendingKey]*pending
	elicit     map[string]*stream // URL-mode elicitationId → stream
	spawned    map[string]string  // subagent session → parent (subagent_update, ASR-721)
	// childRoots are a subagent's workspace roots from its subagent_update
	// (Options.SubagentRoots), until its stream is opened.
	childRoots map[string][]string
	agent      *agentInfo
	gap        bool         // a capture gap was seen on this connection
	schema     *schemaCheck // nil until the first line frame Map checks
	// conforming is the last frame the check passed: it is JSON, so the
	// mapping does not validate it again (parseRPC).
	conforming *sdk.Frame
	prep       preparer  // batches prepared ahead of Map (prepare.go)
	pre        *prepRes  // the prepared answer of the frame being checked
	ft         frameTape // the frame being mapped, parsed (tape.go)
	ord        uint64
	cur        *sdk.Frame
	// src is the source frame whose translations mapChecked maps (the tape
	// is its, from the check, until one is mapped: frameTape.adopt).
	src  *sdk.Frame
	hint Hint      // the current frame's, when a translator made it
	ripe []ripeEnt // entities due a partial snapshot after the frame
	// w writes the streams and collects every output in order.
	w    *sdk.Streams
	done bool
	// srcFrame is the source frame being mapped (MapChecked, MapPrepared): held
	// here, the caller's copy is not one allocation a frame. Its address is
	// the same for every frame: nothing keeps it past the call (checkFrame
	// clears conforming first, and the tape forgets it).
	srcFrame sdk.Frame
}

// holdWire keeps f as the source frame being mapped (dropWire ends it).
func (c *conn) holdWire(f sdk.Frame) *sdk.Frame {
	c.srcFrame = f
	return &c.srcFrame
}

// dropWire lets go of the source frame (its bytes are the caller's).
func (c *conn) dropWire() { c.srcFrame = sdk.Frame{} }

type agentInfo struct {
	name, version string
	seq           uint64
}

// pendingKey joins a response to its request: the request's seq (the host's
// ReplyTo) and its id, since the elements of a batch share a seq.
type pendingKey struct {
	seq uint64
	id  string
}

// pending is a request waiting for its response.
type pending struct {
	method string
	seq    uint64
	at     time.Time
	ord    uint64
	id     json.RawMessage
	s      *stream // the session's stream, when it has one
	roots  []string
	parent string            // session/fork: the source session
	prompt []json.RawMessage // session/prompt: the prompt's blocks
	ent    *entity           // permission and elicitation entities
}

func newConn(opts Options, req sdk.StartRequest) *conn {
	c := &conn{
		opts:    opts,
		cfg:     opts.Config,
		wire:    req.WireLog,
		prior:   map[string]*priorState{},
		streams: map[string]*stream{},
		pending: map[pendingKey]*pending{},
		elicit:  map[string]*stream{},
		spawned: map[string]string{},
	}
	c.ft.poison = poisoning()
	c.w = sdk.NewStreams(req, c.producer())
	return c
}

// Map maps frames in order and returns the outputs they produced.
func (c *conn) Map(ctx context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	p := c.takePrepared(frames) // nil unless PrepareFrames was given frames
	if p != nil {
		defer p.done()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.done {
		return nil, errFinished
	}
	for i := range frames {
		if p != nil {
			p.wait(i)
			c.pre = &p.res[i]
		}
		c.safely(func() { c.checkedFrame(&frames[i]) })
		c.pre = nil
		if len(c.ripe) > 0 { // most frames ripen nothing: no deferred recover for them
			c.safely(c.snapshotRipe)
		}
	}
	c.cur = nil // do not keep the caller's frames alive
	c.ft.release()
	return c.take(), nil
}

// mapTranslated maps a translator's frames in order, each with its hint.
func (c *conn) mapTranslated(ctx context.Context, frames []Translated) ([]sdk.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.done {
		return nil, errFinished
	}
	for i := range frames {
		t := &frames[i]
		c.safely(func() {
			c.hint = t.Hint
			defer func() { c.hint = Hint{} }()
			c.translated(&t.Frame)
		})
		c.safely(c.snapshotRipe)
	}
	c.cur = nil
	c.ft.forget()
	c.ft.poisonLent()
	return c.take(), nil
}

// mapChecked checks wire, then maps frames in its place.
func (c *conn) mapChecked(ctx context.Context, wire *sdk.Frame, frames []Translated) ([]sdk.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.done {
		return nil, errFinished
	}
	c.safely(func() {
		c.checkedAs(wire, func() {
			c.src = wire
			defer func() { c.src = nil }()
			for i := range frames {
				t := &frames[i]
				c.safely(func() {
					c.hint = t.Hint
					defer func() { c.hint = Hint{} }()
					c.translated(&t.Frame)
				})
			}
		})
	})
	c.safely(c.snapshotRipe)
	c.cur = nil
	c.ft.forget()
	c.ft.poisonLent()
	return c.take(), nil
}

// translated maps one translated frame: the losses its hint names are
// declared first; an audit hint makes it an audit-only record.
func (c *conn) translated(f *sdk.Frame) {
	h := c.hint
	if h.Session == "" || (len(h.Lossy) == 0 && h.Audit == "" && h.Withdraw == "") {
		c.frame(f)
		return
	}
	c.cur = f
	s := c.streamFor(h.Session, f)
	if len(h.Lossy) > 0 {
		s.declare(h.Lossy, sdk.When{At: f.At, Replayed: s.replaying}, []uint64{f.Seq})
	}
	switch {
	case h.Withdraw != "":
		c.ord++
		s.withdraw(h.Withdraw)
		return
	case h.Audit == "":
		c.frame(f)
		return
	}
	c.ord++
	if !json.Valid(f.Data) {
		c.diag(sdk.SeverityError, h.Session, sdk.SummaryInternal, "a translated audit frame is not one JSON value")
		return
	}
	s.record(&asr.Audit{
		Envelope:   asr.Envelope{Type: asr.AuditPrefix + h.Audit},
		Provenance: asr.Provenance{Native: &asr.Native{Record: compact(f.Data)}},
	}, f)
}

// Finish writes every entity still open ("when the recorder stops", ASR-705).
func (c *conn) Finish(ctx context.Context, _ string) ([]sdk.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.done {
		return nil, errFinished
	}
	c.done = true
	c.cur = nil
	for _, s := range c.list {
		c.safely(func() {
			s.endReplay(time.Time{}, nil)
			s.releaseHeld()
			s.flush()
		})
	}
	return c.take(), nil
}

func (c *conn) take() []sdk.Output { return c.w.Take() }

// safely turns a panic (a mapper bug) into an error diagnostic, so that one
// bad frame cannot take the plugin down.
func (c *conn) safely(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			c.diag(sdk.SeverityError, "", sdk.SummaryInternal, fmt.Sprint(r))
		}
	}()
	fn()
}

func (c *conn) frame(f *sdk.Frame) {
	c.ord++
	c.cur = f
	switch f.Kind {
	case sdk.KindGap:
		c.gapFrame(f)
		return
	case sdk.KindSession:
		c.sessionFrame(f)
		return
	case sdk.KindLine:
	default:
		c.diag(sdk.SeverityWarning, "", "unknown frame kind", fmt.Sprintf("kind %d", f.Kind))
		return
	}
	data := f.Data
	c.ft.adopt(f, c.src) // a translation passed through: the check's tape is its
	// The tape of the schema check looked at every string's bytes.
	if !(c.ft.holds(f, data) && c.ft.t.ValidUTF8()) && !utf8.Valid(data) {
		c.diag(sdk.SeverityWarning, "", "invalid UTF-8 in frame", "invalid bytes replaced by U+FFFD for mapping; the wire log keeps the original")
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	var m rpcMsg
	var err error
	if !c.ft.holds(f, data) && len(data) == len(f.Data) && (len(data) == 0 || &data[0] == &f.Data[0]) {
		// The schema check is off, or the frame came another way (a
		// translation: what it copies of the wire frame is on the tape).
		c.ft.parseFrom(f, c.src, c.hint.Copied)
	}
	if c.ft.holds(f, data) {
		m, err = parseRPCTape(&c.ft, data)
	} else {
		m, err = parseRPCChecked(f, data, c.conforming == f)
	}
	if err != nil {
		c.diag(sdk.SeverityError, "", "malformed JSON-RPC message", err.Error())
		return
	}
	switch m.kind {
	case rpcRequest, rpcNotification:
		c.call(f, m)
	default:
		c.reply(f, m)
	}
}

// gapFrame declares the loss in every open stream; streams first seen later
// without their opening carry it in the header.
func (c *conn) gapFrame(f *sdk.Frame) {
	c.gap = true
	c.diag(sdk.SeverityWarning, "", "capture gap",
		fmt.Sprintf("%d frames (%d bytes) not observed: %s", f.Gap.Frames, f.Gap.Bytes, f.Gap.Reason))
	c.w.Gap(f, asr.LossCaptureGap)
}

// sessionFrame takes what the store knows of a session this connection
// names next (its connection number and its stream so far).
func (c *conn) sessionFrame(f *sdk.Frame) {
	info := f.Session
	if info == nil || info.ID == "" {
		c.diag(sdk.SeverityWarning, "", "session frame without a session", "ignored")
		return
	}
	if _, open := c.streams[info.ID]; open {
		c.diag(sdk.SeverityWarning, info.ID, "session frame for a session already open", "ignored: the stream keeps its connection number and seqs")
		return
	}
	c.w.TakeUp(f)
	c.prior[info.ID] = c.buildPrior(info.ID, info.Connections, info.Prior)
}

// diag records a mapping problem against the current frame.
func (c *conn) diag(sev sdk.Severity, session, summary, detail string) {
	var seqs []uint64
	if c.cur != nil {
		seqs = []uint64{c.cur.Seq}
	}
	c.w.Diag(sev, session, summary, detail, seqs...)
}
