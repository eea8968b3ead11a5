package logimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
)

// Format is an input's layout.
type Format string

// The layouts an acp-v1-log input may have (see the package doc).
const (
	FormatWire    Format = "wire"
	FormatTrace   Format = "trace"
	FormatFrames  Format = "frames"
	FormatUpdates Format = "updates"
)

// TimeKind says where a frame's time came from.
type TimeKind int

const (
	// TimeReceived is a receipt time the input recorded: a wire log's at,
	// or a trace entry's at/time/timestamp/ts.
	TimeReceived TimeKind = iota
	// TimeSource is a time the message itself carries: _meta.timestamp of
	// its params, its params' update, or its result.
	TimeSource
	// TimeSynthetic means the input gave no time: the frame's at is
	// SyntheticTime(line), an ordering aid and not a time.
	TimeSynthetic
)

func (k TimeKind) String() string {
	switch k {
	case TimeReceived:
		return "received"
	case TimeSource:
		return "source"
	}
	return "synthetic"
}

// SyntheticBefore bounds synthetic times: a frame of a converted wire log
// whose at is before it carries no real time (see SyntheticTime).
var SyntheticBefore = time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC)

// SyntheticTime is the at of a frame from input line n (0 for the frames
// the converter synthesizes) when the input gave it no time: the Unix epoch
// plus n milliseconds. File order stays visible, and no one can take it for
// a receipt time (ASR-707).
func SyntheticTime(n int) time.Time {
	return time.Unix(0, 0).Add(time.Duration(n) * time.Millisecond).UTC()
}

// IsSynthetic reports whether t is a time the converter made up.
func IsSynthetic(t time.Time) bool { return t.Before(SyntheticBefore) }

// Frame is one wire entry the scanner produced.
type Frame struct {
	Item captured.Item
	// Input is the input line the entry came from; 0 for an entry the
	// converter synthesized.
	Input int
	Time  TimeKind
}

// Skip describes an input line that is not converted.
type Skip struct {
	Line   int
	Reason string
}

// ErrNotV1 reports an input whose initialize exchange negotiated another
// protocol version.
var ErrNotV1 = errors.New("not an ACP v1 log")

// maxDetectFrames bounds how far Detect looks for the initialize exchange.
const maxDetectFrames = 64

// Scanner reads one input and returns its wire entries in file order.
type Scanner struct {
	lr     *lineReader
	format Format
	dirs   *directions
	queue  []Frame
	// queueBuf is the queue's array from its start, reused once the
	// queue is empty.
	queueBuf []Frame
	// Borrow, when set, lets a frame of a JSON-RPC line alias the line
	// reader's buffer instead of a copy: it is valid until the next call
	// of Next (readOnce, which hashes each frame at once).
	Borrow bool
	// OnSkip, when set, is told of every skipped line.
	OnSkip func(Skip)
	// slab holds the copies of the last lines (own).
	slab []byte
	// tape is decodeLine's.
	tape jsonscan.Tape
	// pre, when set, decodes the lines ahead (readOnce over a whole input).
	pre *predecoder

	// Counters.
	Lines, Blank, Skipped int
	synthesized           bool
	// WireHeader is the header of a wire-log input.
	WireHeader *wire.Header

	// Protocol version seen in the initialize exchange (0: not yet).
	initID       string
	initReq      int
	initResp     int
	sawInitReply bool
	frames       int
}

// NewScanner reads decompressed input r, lines at most maxLine bytes long.
// With format "" the first ACP line decides the layout; otherwise lines of
// other layouts are skipped.
func NewScanner(r io.Reader, format Format, maxLine int) *Scanner {
	return &Scanner{lr: newLineReader(r, maxLine), format: format, dirs: newDirections(pendingCap)}
}

// newMemScanner reads data, the whole of a decompressed input of at most
// maxLine bytes, as NewScanner reads it from a reader; its frames' lines
// are sub-slices of data whatever Borrow says (valid while data is).
func newMemScanner(data []byte, format Format, maxLine int) *Scanner {
	return &Scanner{lr: newMemLines(data, maxLine), format: format, dirs: newDirections(pendingCap)}
}

// Format returns the input's layout, "" until the first ACP line.
func (s *Scanner) Format() Format { return s.format }

// Version returns the protocol version the initialize exchange negotiated
// (the response's, else the request's), 0 when none was seen.
func (s *Scanner) Version() int {
	if s.initResp > 0 {
		return s.initResp
	}
	return s.initReq
}

func (s *Scanner) skip(line int, format string, args ...any) {
	s.Skipped++
	if s.OnSkip != nil {
		s.OnSkip(Skip{Line: line, Reason: fmt.Sprintf(format, args...)})
	}
}

// Next returns the next entry, or io.EOF after the last one. Any other
// error is a read error (the input could not be read to its end).
func (s *Scanner) Next() (Frame, error) {
	for {
		if len(s.queue) > 0 {
			f := s.queue[0]
			s.queue[0] = Frame{}
			s.queue = s.queue[1:]
			if len(s.queue) == 0 {
				s.queue = s.queueBuf[:0] // the next line's frames reuse the queue
			}
			if f.Item.Gap == nil {
				s.frames++
				s.observeInit(f.Item.Dir, f.Item.Line)
			}
			return f, nil
		}
		line, n, tooLong, err := s.lr.next()
		if err != nil {
			return Frame{}, err
		}
		s.Lines++
		no := s.lr.line
		if tooLong {
			s.skip(no, "line of %d bytes: longer than the %d-byte limit", n, s.lr.max)
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			s.Blank++
			continue
		}
		s.scanLine(no, line)
	}
}

// Detect reads until it knows the input's layout and, when the input has
// an initialize exchange among its first frames, the protocol version it
// negotiated. It returns ErrNotV1 for another version, and an error when
// the input holds no ACP line at all.
func (s *Scanner) Detect() error {
	for {
		if s.format != "" && (s.sawInitReply || s.frames >= maxDetectFrames || s.format == FormatUpdates) {
			break
		}
		_, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if s.format == "" {
		return fmt.Errorf("no ACP v1 line in %d lines: %w", s.Lines, errNoACP)
	}
	if v := s.Version(); v != 0 && v != 1 {
		return fmt.Errorf("%w: its initialize exchange negotiated protocolVersion %d", ErrNotV1, v)
	}
	return nil
}

var errNoACP = errors.New("nothing to convert")

// probe is one input line decoded just enough to classify it: its
// top-level members, raw (see members). A member of an unexpected JSON type
// counts as absent.
type probe struct {
	line []byte // the whole object
	// JSON-RPC.
	ID     json.RawMessage
	Method *string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	// A trace entry: its direction, line and times (at, time, timestamp,
	// ts).
	Dir, Line *string
	Times     [4]*string
	// Bare session/update params.
	SessionID json.RawMessage
	Update    json.RawMessage

	params *fields
	// stamp: whether a member anywhere in the line is named timestamp,
	// when the parse said (stampKnown; else metaTime searches the line).
	stamp, stampKnown bool
}

var timeKeys = [4]string{"at", "time", "timestamp", "ts"}

// decode parses line into p. ok is false for a line that is not JSON.
func decode(line []byte, p *probe) (ok bool) {
	// jsonscan.Compact is one pass without allocating, and true only for
	// JSON encoding/json accepts: a line with spaces, or not JSON, is
	// checked by json.Valid.
	if !jsonscan.Compact(line) && !json.Valid(line) {
		return false
	}
	p.line = line
	jsonscan.Members(line, func(k, v []byte) bool {
		p.member(k, v)
		return true
	})
	return true
}

// decodeLine is decode(line, p) from one parse of line into s's tape when
// the tape takes it (jsonscan.Tape.Parse accepts only what encoding/json
// does), instead of a validating scan and then a scan of the members:
// the members are the root's entries, as Members yields them (raw names,
// values without the space around them; the tape refuses a name with an
// escape and a duplicate name, which go the way decode goes).
func (s *Scanner) decodeLine(line []byte, p *probe) bool { return decodeOnTape(&s.tape, line, p) }

// decodeOnTape is decodeLine with the tape t.
func decodeOnTape(t *jsonscan.Tape, line []byte, p *probe) bool {
	defer t.Release() // the tape does not keep the line
	if !t.Parse(line) {
		return decode(line, p)
	}
	root := t.Root()
	if root.C < 0 || line[root.V0] != '{' {
		return decode(line, p)
	}
	p.line = line
	for _, e := range t.Entries(root) {
		p.member(t.Key(e), t.Bytes(e))
	}
	// The names on the tape are the line's, unescaped (the tape refuses an
	// escaped one): fewer to look at than the line's bytes.
	p.stampKnown = true
	for _, e := range t.Ents {
		if e.K1-e.K0 == int32(len("timestamp")) && string(t.B[e.K0:e.K1]) == "timestamp" {
			p.stamp = true
			break
		}
	}
	return true
}

// member takes the top-level member k (its raw name) with value v.
func (p *probe) member(k, v []byte) {
	str := func(v []byte) *string {
		if s, ok := jsonscan.String(v); ok {
			return &s
		}
		return nil
	}
	switch string(k) {
	case "id":
		p.ID = v
	case "method":
		p.Method = str(v)
	case "params":
		p.Params = v
	case "result":
		p.Result = v
	case "error":
		p.Error = v
	case "dir":
		p.Dir = str(v)
	case "line":
		p.Line = str(v)
	case "sessionId":
		p.SessionID = v
	case "update":
		p.Update = v
	default:
		for i, tk := range timeKeys {
			if string(k) == tk {
				p.Times[i] = str(v)
			}
		}
	}
}

// paramsFields decodes the params the converter looks into (nil when
// params is not an object).
func (p *probe) paramsFields() *fields {
	if p.params == nil {
		var f fields
		if !decodeFields(p.Params, &f) {
			return nil
		}
		p.params = &f
	}
	return p.params
}

// fields are the members of params, results and updates the converter
// looks at.
type fields struct {
	SessionID       json.RawMessage `json:"sessionId"`
	Update          *fields         `json:"update"`
	SessionUpdate   *string         `json:"sessionUpdate"`
	Meta            *meta           `json:"_meta"`
	RequestID       json.RawMessage `json:"requestId"`
	ProtocolVersion json.RawMessage `json:"protocolVersion"`
	StopReason      json.RawMessage `json:"stopReason"`
	Outcome         json.RawMessage `json:"outcome"`
	TerminalID      json.RawMessage `json:"terminalId"`
	Truncated       json.RawMessage `json:"truncated"`
}

type meta struct {
	Timestamp *string `json:"timestamp"`
}

func (f *fields) has(key string) bool {
	switch key {
	case "stopReason":
		return f.StopReason != nil
	case "protocolVersion":
		return f.ProtocolVersion != nil
	case "sessionId":
		return f.SessionID != nil
	case "outcome":
		return f.Outcome != nil
	case "terminalId":
		return f.TerminalID != nil
	case "truncated":
		return f.Truncated != nil
	}
	return false
}

// metaTime is f's _meta.timestamp, or its update's.
func (f *fields) metaTime() (time.Time, bool) {
	if f == nil {
		return time.Time{}, false
	}
	if f.Meta != nil && f.Meta.Timestamp != nil {
		if t, err := time.Parse(time.RFC3339Nano, *f.Meta.Timestamp); err == nil {
			return t, true
		}
	}
	if f.Update != nil {
		return f.Update.metaTime()
	}
	return time.Time{}, false
}

func isJSONString(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '"'
}

// kindOf names what a probed object is: "frames", "trace", "updates" or "".
func kindOf(p *probe) Format {
	switch {
	case p.Dir != nil && p.Line != nil:
		return FormatTrace
	case p.Method != nil, p.ID != nil && (p.Result != nil || p.Error != nil):
		return FormatFrames
	case isJSONString(p.SessionID) && isJSONString(member(p.Update, "sessionUpdate")):
		return FormatUpdates
	}
	return ""
}

var formatNames = map[Format]string{
	FormatWire:    "wire-log entry",
	FormatTrace:   "trace entry",
	FormatFrames:  "JSON-RPC message",
	FormatUpdates: "bare session/update params object",
}

// scanLine classifies one non-blank line and queues what it yields.
func (s *Scanner) scanLine(no int, line []byte) {
	if no == 1 && (s.format == "" || s.format == FormatWire) && bytes.HasPrefix(line, []byte(`{"type":"header"`)) {
		if h, err := wire.ParseHeader(line); err == nil {
			s.format, s.WireHeader = FormatWire, &h
			return
		}
	}
	if s.format == FormatWire {
		s.wireLine(no, line)
		return
	}
	trim := bytes.TrimSpace(line)
	if trim[0] != '{' {
		switch {
		case !json.Valid(trim):
			s.skip(no, "not JSON")
		case trim[0] == '[':
			s.skip(no, "a JSON array (ACP v1 has no batches)")
		default:
			s.skip(no, "not a JSON object")
		}
		return
	}
	var p probe
	ok, found := false, false
	if s.pre != nil {
		ok, found = s.pre.take(no, &p)
	}
	if !found {
		ok = s.decodeLine(trim, &p)
	}
	if !ok {
		s.skip(no, "not JSON")
		return
	}
	kind := kindOf(&p)
	if kind == "" {
		s.skip(no, "not ACP: neither a JSON-RPC message, a trace entry nor session/update params")
		return
	}
	if s.format == "" {
		s.format = kind
	}
	if kind != s.format {
		s.skip(no, "a %s in a file of %ss (the first ACP line decides the layout)", formatNames[kind], formatNames[s.format])
		return
	}
	if kind == FormatUpdates && !s.synthesized {
		s.synthesized = true
		s.synthesizeInit()
	}
	switch kind {
	case FormatTrace:
		s.traceLine(no, &p)
	case FormatFrames:
		s.frameLine(no, trim, &p)
	case FormatUpdates:
		s.updateLine(no, trim, &p)
	}
}

func (s *Scanner) push(no int, dir sdk.Direction, line []byte, at time.Time, kind TimeKind) {
	if kind == TimeSynthetic {
		at = SyntheticTime(no)
	}
	s.queue = append(s.queue, Frame{Item: captured.Item{Dir: dir, At: at, Line: line}, Input: no, Time: kind})
	s.queueBuf = s.queue[:0]
}

// wireLine converts one entry of an acptap wire log: frames and gaps are
// kept with their times; session entries are not (the conversion observes
// the sessions itself).
func (s *Scanner) wireLine(no int, line []byte) {
	e, err := wire.ParseEntry(line)
	if err != nil {
		s.skip(no, "not a wire-log entry: %v", err)
		return
	}
	switch e.Type {
	case wire.TypeSession, wire.TypeRevision:
		return
	case wire.TypeGap:
		at := e.At
		if at.IsZero() {
			at = SyntheticTime(no)
		}
		g := e.Gap
		s.queue = append(s.queue, Frame{Item: captured.Item{Dir: e.Dir, At: at,
			Gap: &captured.Gap{Frames: g.Frames, Bytes: g.Bytes, Reason: g.Reason}}, Input: no, Time: timeKind(e.At)})
		return
	}
	at, kind := e.At, timeKind(e.At)
	if at.IsZero() {
		at, kind = innerTime(e.Line)
	}
	s.push(no, e.Dir, e.Line, at, kind)
	s.queue[len(s.queue)-1].Item.NoLF = e.NoLF
}

// timeKind is the kind of a wire log's at: a converted log's synthetic
// times stay synthetic.
func timeKind(at time.Time) TimeKind {
	if at.IsZero() || IsSynthetic(at) {
		return TimeSynthetic
	}
	return TimeReceived
}

// innerTime reads a line's _meta timestamp, parsing it only when it
// mentions one.
func innerTime(line []byte) (time.Time, TimeKind) {
	if !bytes.Contains(line, []byte(`"timestamp"`)) {
		return time.Time{}, TimeSynthetic
	}
	var p probe
	if !decode(line, &p) {
		return time.Time{}, TimeSynthetic
	}
	if t, ok := p.metaTime(); ok {
		return t, TimeSource
	}
	return time.Time{}, TimeSynthetic
}

// metaTime is the _meta.timestamp of a JSON-RPC message's params (or its
// update) or result; ownMetaTime that of bare params (the object itself or
// its update). Lines that do not mention "timestamp" are not parsed.
func (p *probe) metaTime() (time.Time, bool) {
	if !p.stamp && (p.stampKnown || !bytes.Contains(p.line, []byte(`"timestamp"`))) {
		return time.Time{}, false
	}
	if t, ok := p.paramsFields().metaTime(); ok {
		return t, true
	}
	var r fields
	if decodeFields(p.Result, &r) {
		return r.metaTime()
	}
	return time.Time{}, false
}

func (p *probe) ownMetaTime() (time.Time, bool) {
	var f fields
	if !bytes.Contains(p.line, []byte(`"timestamp"`)) || !decodeFields(p.line, &f) {
		return time.Time{}, false
	}
	return f.metaTime()
}

func decodeFields(raw json.RawMessage, f *fields) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	err := json.Unmarshal(raw, f)
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}

// traceLine converts a trace entry: its dir says the direction ("send" and
// "recv" from the client's side), its line is the frame.
func (s *Scanner) traceLine(no int, p *probe) {
	var dir sdk.Direction
	switch *p.Dir {
	case "send", "c2a":
		dir = sdk.C2A
	case "recv", "a2c":
		dir = sdk.A2C
	default:
		s.skip(no, "trace entry with dir %q (want send, recv, c2a or a2c)", *p.Dir)
		return
	}
	line := []byte(*p.Line)
	for _, v := range p.Times {
		if v == nil {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, *v); err == nil {
			s.push(no, dir, line, t, TimeReceived)
			return
		}
	}
	at, kind := innerTime(line)
	s.push(no, dir, line, at, kind)
}

// frameLine converts a JSON-RPC message, inferring its direction.
func (s *Scanner) frameLine(no int, line []byte, p *probe) {
	dir, why := s.dirs.infer(p)
	if why != "" {
		s.skip(no, "%s", why)
		return
	}
	at, ok := p.metaTime()
	kind := TimeSource
	if !ok {
		kind = TimeSynthetic
	}
	switch {
	case s.lr.mem != nil:
		line = line[:len(line):len(line)] // data's; an append to it copies
	case !s.Borrow:
		line = s.own(line)
	}
	s.push(no, dir, line, at, kind)
}

// Bounds of the slabs own copies lines into: a line up to maxSlabLine
// bytes is copied into the current slab of slabSize, a longer one on its
// own.
const (
	slabSize    = 256 << 10
	maxSlabLine = 16 << 10
)

// own returns a copy of line (valid after the next Next). Short lines
// share slabs: one allocation for many lines, where a copy each was
// ~8 % of the digest pass (readOnce keeps every frame of a small input).
// A slab stays alive while any line in it does; the kept frames are sent
// and dropped in order, so at most one slab outlives its lines by much.
func (s *Scanner) own(line []byte) []byte {
	if len(line) > maxSlabLine {
		return bytes.Clone(line)
	}
	if cap(s.slab)-len(s.slab) < len(line) {
		s.slab = make([]byte, 0, slabSize)
	}
	n := len(s.slab)
	s.slab = append(s.slab, line...)
	return s.slab[n:len(s.slab):len(s.slab)] // its own capacity: an append to it copies
}

// updateLine wraps bare session/update params as the agent's notification.
func (s *Scanner) updateLine(no int, line []byte, p *probe) {
	msg := make([]byte, 0, len(line)+64)
	msg = append(msg, `{"jsonrpc":"2.0","method":"session/update","params":`...)
	msg = append(msg, line...)
	msg = append(msg, '}')
	at, ok := p.ownMetaTime()
	kind := TimeSource
	if !ok {
		kind = TimeSynthetic
	}
	s.push(no, sdk.A2C, msg, at, kind)
}

// SynthesizedReason is what the synthesized initialize exchange of an
// updates input says of itself in its _meta.
const SynthesizedReason = "acptap convert: the input holds bare session/update params, without the initialize exchange"

// synthesizedInit is the initialize exchange put before the first update
// of an updates input: protocolVersion 1 and nothing else is known.
var synthesizedInit = [2]string{
	`{"jsonrpc":"2.0","id":"acptap-convert-initialize","method":"initialize","params":{"protocolVersion":1,"_meta":{"org.acptap/synthesized":"` + SynthesizedReason + `"}}}`,
	`{"jsonrpc":"2.0","id":"acptap-convert-initialize","result":{"protocolVersion":1,"_meta":{"org.acptap/synthesized":"` + SynthesizedReason + `"}}}`,
}

func (s *Scanner) synthesizeInit() {
	s.push(0, sdk.C2A, []byte(synthesizedInit[0]), time.Time{}, TimeSynthetic)
	s.push(0, sdk.A2C, []byte(synthesizedInit[1]), time.Time{}, TimeSynthetic)
}

// observeInit follows the initialize exchange among the first frames.
func (s *Scanner) observeInit(dir sdk.Direction, line []byte) {
	if s.sawInitReply || s.frames > maxDetectFrames {
		return
	}
	switch {
	case dir == sdk.C2A && bytes.Contains(line, []byte(`"initialize"`)):
		var p probe
		if decode(line, &p) && p.Method != nil && *p.Method == "initialize" && p.paramsFields() != nil {
			s.initID = string(p.ID)
			s.initReq, _ = strconv.Atoi(string(p.paramsFields().ProtocolVersion))
		}
	case dir == sdk.A2C && s.initID != "" && bytes.Contains(line, []byte(`"protocolVersion"`)):
		var p probe
		if !decode(line, &p) || p.Method != nil || string(p.ID) != s.initID {
			return
		}
		var r fields
		if decodeFields(p.Result, &r) {
			s.initResp, _ = strconv.Atoi(string(r.ProtocolVersion))
		}
		s.sawInitReply = true
	}
}
