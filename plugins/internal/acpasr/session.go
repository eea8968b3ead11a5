package acpasr

import (
	"context"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// Producer methods (producer.method, ASR-700).
const (
	// MethodRecorder: the frames are live ACP (or a rebuild from its wire log).
	MethodRecorder = "recorder"
	// MethodConverter: the frames come from stored logs of another format.
	MethodConverter = "converter"
)

// FormatVersionV2 is the ACP schema revision of the frames the engine maps
// (ASR-700).
const FormatVersionV2 = "2.0.0-alpha.9"

// AlwaysLossy are the loss categories that always apply to a stream
// recorded from ACP (ASR-722): ACP has no per-call inference boundaries,
// no per-call usage, no authors and no per-entry times.
var AlwaysLossy = []string{asr.LossInference, asr.LossMessageAuthor, asr.LossTimestamps, asr.LossUsage}

// Options configure the engine for the plugin that runs it: what each
// stream's header says about its producer, and the recording configuration.
type Options struct {
	// Method is producer.method: MethodRecorder or MethodConverter. Empty
	// means MethodRecorder.
	Method string
	// Name and Version are producer.name and producer.version. Empty Name
	// means "acptap".
	Name, Version string
	// Plugin is producer.plugin: the plugin's name and version.
	Plugin asr.Plugin
	// Source is producer.source: the protocol revision the frames follow,
	// e.g. {Format: "acp", FormatVersion: "2.0.0-alpha.9"}.
	Source asr.Source
	// AlwaysLossy are the loss categories written in every header
	// (ASR-722). Categories that start to apply later (tool results,
	// dropped reasoning, capture gaps, a translator's Hint.Lossy) are
	// declared when they do.
	AlwaysLossy []string
	// Config is the recording configuration (see ParseConfig). A nil
	// Registry means the embedded snapshot.
	Config Config
	// ModeUpdates maps the ACP v1 session update current_mode_update to a
	// config_change with its mode. Without it that kind, unknown to ACP v2,
	// is an audit-only record (ASR-710).
	ModeUpdates bool
	// Schema is the ACP schema the per-frame check uses (Map, MapChecked);
	// zero means acpschema.V2 (alpha.9).
	Schema acpschema.Version
	// StateNative lists state_update members the ASR state record has no
	// field for (the newer draft's "background"): when an update has one,
	// its state record keeps the update verbatim in native.record.
	StateNative []string
	// TerminalSize folds terminal_update.size by ACP's patch rule and
	// writes it as the terminal record's _org.acptap/size.
	TerminalSize bool
	// MessageRefs folds session_message.senderMessageId by ACP's patch
	// rule and writes it as from._org.acptap/messageId of the receiving
	// session's message (ASR-735: copied, never invented).
	MessageRefs bool
	// SubagentRoots takes a subagent_update's cwd and
	// additionalDirectories (the newer draft) as the workspace roots of
	// the child's stream (ASR-711), when that stream is opened after it.
	SubagentRoots bool
	// HoldChunks keeps a session_message_chunk that arrives before any
	// upsert of its message (the newer draft's chunks name no session)
	// until an upsert says which side this session is: the receiving
	// side's message gets the chunks, in order, before the upsert's
	// patch; otherwise, and when the connection ends with the message
	// still unnamed, each held chunk is an audit record (ASR-710).
	HoldChunks bool
}

// Session is the engine mapping one connection: ACP v2 (alpha.9) frames in,
// ASR headers, records and diagnostics out. It implements sdk.Session; a
// translator from another protocol feeds it with MapTranslated.
type Session struct{ c *conn }

var _ sdk.Session = (*Session)(nil)

// NewSession starts the engine on one connection (req is the plugin's start
// request: wire log name, prior sessions). It never fails: a plugin parses
// and checks its configuration (ParseConfig) before.
func NewSession(opts Options, req sdk.StartRequest) *Session {
	if opts.Method == "" {
		opts.Method = MethodRecorder
	}
	if opts.Name == "" {
		opts.Name = "acptap"
	}
	if opts.Config.Registry == nil {
		r := loadDefaultRegistry()
		opts.Config.Registry = &r
	}
	return &Session{c: newConn(opts, req)}
}

// Map maps ACP v2 frames in order and returns the outputs they produced.
func (s *Session) Map(ctx context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	return s.c.Map(ctx, frames)
}

// Finish writes every entity still open ("when the recorder stops",
// ASR-705) and ends the session.
func (s *Session) Finish(ctx context.Context, reason string) ([]sdk.Output, error) {
	return s.c.Finish(ctx, reason)
}

// Hint is what a translator knows about a frame it made that ACP v2 cannot
// say.
type Hint struct {
	// DerivedID: the messageId the frame names (a message update's, or a
	// session/prompt response's) was derived by the translator, not sent
	// by the peer: the message records carry idSource "derived".
	DerivedID bool
	// MessageID, when set, is the messageId of the frame's message update
	// (a chunk), in place of the one the frame names or of its absence: as
	// if the translator had written it into the frame, which passes
	// through instead, its tape the check's (not rewritten, not parsed
	// again).
	MessageID string
	// Copied are string values of the source frame (the wire frame
	// MapChecked or MapPrepared is given, as its tape holds them: entries
	// of the tape jsonscan parses it into) that the frame, a rewrite of it,
	// copies as they are, in the order the frame holds them: the engine's
	// parse of the frame takes them from the wire's tape instead of
	// scanning them again (jsonscan.Tape.ParseWith). The parse is the
	// same whatever they are; they save only its time.
	Copied []jsonscan.Ent
	// Session and Lossy: loss categories (ASR-722) that start to apply to
	// that session's stream at this frame; they are declared before the
	// frame is mapped (the stream is opened when it is not yet).
	Session string
	Lossy   []string
	// Audit, when set, makes the frame an audit-only record
	// org.agent-session.acp/<Audit> in Session's stream, with the frame's
	// bytes (one JSON value) verbatim in native.record (ASR-710); the frame
	// is not mapped as ACP.
	Audit string
	// Withdraw names a prompt's messageId in Session that the agent did
	// not take after all: a translator that gave the engine the prompt's
	// response early (ACP v1 answers a prompt only when its turn ends)
	// learned it from an error. The message is forgotten unless it already
	// has a record. The frame is not mapped as ACP.
	Withdraw string
}

// Translated is a frame a translator made for the engine: an ACP v2 frame
// (its Seq, Dir and At those of the source frame it came from, so that
// native references point at the source wire), and its hint.
type Translated struct {
	Frame sdk.Frame
	Hint  Hint
}

// MapTranslated maps translated frames in order, as Map does, with their
// hints.
func (s *Session) MapTranslated(ctx context.Context, frames []Translated) ([]sdk.Output, error) {
	return s.c.mapTranslated(ctx, frames)
}

// MapChecked maps the translated frames in place of wire, a frame of the
// connection: wire is first checked against the schema (Options.Schema)
// as Map checks its frames, and when it does not conform the sessions it
// names declare the loss, as for a frame Map checks. A translator whose
// source frames follow an ACP schema the engine embeds uses it instead of
// MapTranslated.
func (s *Session) MapChecked(ctx context.Context, wire sdk.Frame, frames []Translated) ([]sdk.Output, error) {
	w := s.c.holdWire(wire)
	defer s.c.dropWire()
	return s.c.mapChecked(ctx, w, frames)
}

// Prepared is a batch PrepareFrames prepared, as a translator maps it:
// frame by frame, each source frame through MapPrepared, so that the
// source frames' schema check runs beside the translation and the mapping
// (on the goroutine PrepareFrames' function runs on), as it does for Map.
type Prepared struct {
	p      *preparedBatch
	frames []sdk.Frame
}

// TakePrepared returns the preparation of frames, the batch a translator
// is given (PrepareFrames was called on it); nil when it was not prepared,
// and MapPrepared then checks each frame itself, as MapChecked does. Done
// must be called once the batch is mapped.
func (s *Session) TakePrepared(frames []sdk.Frame) *Prepared {
	if p := s.c.takePrepared(frames); p != nil {
		return &Prepared{p: p, frames: frames}
	}
	return nil
}

// MapPrepared is MapChecked for wire, the translator's copy of frames[i]
// of the batch p was taken for (its time may have been changed): the
// schema check's answer is the one prepared for frames[i].
func (s *Session) MapPrepared(ctx context.Context, p *Prepared, i int, wire sdk.Frame, frames []Translated) ([]sdk.Output, error) {
	if p == nil {
		return s.MapChecked(ctx, wire, frames)
	}
	p.p.wait(i)
	r := &p.p.res[i]
	if r.f != &p.frames[i] || wire.Kind != r.f.Kind || wire.Dir != r.f.Dir || !sameBytes(wire.Data, r.f.Data) {
		panic("acpasr: MapPrepared: wire is not the prepared frame")
	}
	w := s.c.holdWire(wire)
	r.f = w // the frame checkFrame is given (the prepared answer is wire's)
	s.c.pre = r
	defer func() { s.c.pre = nil; s.c.dropWire() }()
	return s.c.mapChecked(ctx, w, frames)
}

// Tape returns the tape frames[i] was parsed into while prepared, and
// Parse's answer (jsonscan.Tape.Parse of its Data), so that a translator
// reads the frame from it instead of parsing the frame again; nil when p is
// nil or frames[i] was not parsed there. The tape is the engine's: it is
// read only, and only until MapPrepared is called for frames[i].
func (p *Prepared) Tape(i int) (*jsonscan.Tape, bool) {
	if p == nil {
		return nil, false
	}
	p.p.wait(i)
	r := &p.p.res[i]
	if r.f != &p.frames[i] || r.f.Kind != sdk.KindLine || r.panicked != nil {
		return nil, false
	}
	return &r.tape, r.parsed
}

// Done ends the batch's preparation (the frames are mapped).
func (p *Prepared) Done() {
	if p != nil {
		p.p.done()
	}
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Open reports whether session has a stream open on this connection.
func (s *Session) Open(session string) bool {
	_, ok := s.c.streams[session]
	return ok
}

// HasPrompt reports whether the stream of session has a prompt (a message
// with origin "prompt") with messageID: recorded on this connection or an
// earlier one (the store's prior stream), or still open. A translator uses
// it to keep derived ids stable across a history replay that reveals ids
// the live traffic did not have.
func (s *Session) HasPrompt(session, messageID string) bool {
	k := entKey{asr.TypeMessage, messageID}
	if st, ok := s.c.streams[session]; ok {
		if e, ok := st.ents[k]; ok {
			m, ok := e.b.(*message)
			return ok && m.origin == "prompt"
		}
		d, ok := st.done[doneKey(k)]
		return ok && d.view().flags&flagPrompt != 0
	}
	if p, ok := s.c.prior[session]; ok {
		d, ok := p.done[doneKey(k)]
		return ok && d.view().flags&flagPrompt != 0
	}
	return false
}
