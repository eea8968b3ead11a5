package acpschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// Sender is the side of an ACP connection that wrote a message.
type Sender int

const (
	// Client marks messages the client sent to the agent.
	Client Sender = iota
	// Agent marks messages the agent sent to the client.
	Agent
)

func (s Sender) String() string {
	if s == Agent {
		return "agent"
	}
	return "client"
}

// defName is the schema's top-level definition for messages this side sends.
// In the official schemas "Client" is what a client sends (its requests are
// the methods the agent handles).
func (s Sender) defName() string {
	if s == Agent {
		return "Agent"
	}
	return "Client"
}

// receiver is the `x-side` value of the definitions this side sends.
func (s Sender) receiver() string {
	if s == Agent {
		return "client"
	}
	return "agent"
}

func (s Sender) other() Sender { return 1 - s }

// Checker validates the messages of one ACP conversation, in order, against
// the official schema: the JSON-RPC envelope against the sender's top-level
// definition, params against the definition the schema binds to the method
// (`x-method`, `x-side`), and each result against the response definition of
// the request it answers (request ids are tracked per direction, since both
// sides number their requests independently). `_`-prefixed extension methods
// only get the envelope check. A Checker is safe for concurrent use, but the
// caller must check a request before its peer can answer it.
type Checker struct {
	schema   *compiledSchema
	tolerant bool

	mu       sync.Mutex
	fast     fastCheck
	slow     bool                 // tests: no fast decoding or fast check
	pending  [2]map[string]string // by sender of the request: id → method
	messages int
	counts   map[countKey]*int
	tape     jsonscan.Tape // the message checked (c.mu)
	calls    map[callKey]*jsonschema.Schema
	comp     map[*jsonschema.Schema]*cnode // the compiled validators used (compiled)
	// lastComp and lastNode are the last schema compiled looked up and its node.
	lastComp *jsonschema.Schema
	lastNode *cnode
	// The last count, payload definition and update branch looked up
	// (a conversation is mostly one method, session/update, of a few kinds).
	lastCount  countKey
	lastN      *int
	lastCall   callKey
	lastSch    *jsonschema.Schema
	lastKind   string
	lastUpdate *jsonschema.Schema
	// lastMethodPlain, lastKindPlain: lastCall.method and lastKind are
	// plain (plainKey), so isPlain compares a frame's bytes with them.
	lastMethodPlain, lastKindPlain bool
}

// countKey counts messages by "<sender> <method> <kind>" (Counts).
type countKey struct {
	from         Sender
	method, kind string
}

// NewChecker returns a Checker for ACP version v (V1, V1Unstable, V2 or V2Alpha13).
func NewChecker(v Version) (*Checker, error) {
	cs, err := loadSchema(v)
	if err != nil {
		return nil, err
	}
	return &Checker{
		schema:  cs,
		pending: [2]map[string]string{{}, {}},
		counts:  map[countKey]*int{},
	}, nil
}

// Version returns the ACP schema version c checks against.
func (c *Checker) Version() Version { return c.schema.version }

// SetTolerant makes protocol-state problems that are not the schema's
// business no errors: a response to a request the checker never saw (the
// capture started late, or lost frames) gets only the envelope check, and
// a request id reused while pending replaces the pending request. A recorder
// that watches a conversation from the middle wants this; a test peer does not.
func (c *Checker) SetTolerant(on bool) {
	c.mu.Lock()
	c.tolerant = on
	c.mu.Unlock()
}

// lightEnvelope reports whether obj is a well-formed JSON-RPC message whose
// payload checkPayload validates in full against its method's definition:
// then the schema's top-level union (which validates the payload again,
// most of the cost of a check) can be skipped. Extension methods, errors
// and responses to unknown requests get the full envelope check.
func (c *Checker) lightEnvelope(env *envelope, m method) bool {
	if !env.has(envJSONRPC) || !env.jsonrpc.isPlain("2.0") {
		return false
	}
	if env.other {
		return false
	}
	id, hasID := env.id, env.has(envID)
	if hasID {
		switch id.typ() {
		case tString, tNumber, tNull:
		default:
			return false
		}
	}
	isResult := env.has(envResult)
	if m.present {
		if !m.isString {
			return false
		}
		if strings.HasPrefix(m.name, "_") || strings.HasPrefix(m.name, "$/") {
			return false
		}
		return !isResult
	}
	return isResult && hasID && !id.isNull()
}

// method is a message's method member.
type method struct {
	present, isString bool
	name              string
}

// Error is a message that does not conform. Msg is short: the JSON
// pointer(s) of the offending value(s) and what is wrong there.
type Error struct {
	// Entries are the indexes of the batch entries that do not conform;
	// nil when the line is not a batch.
	Entries []int
	Msg     string
}

func (e *Error) Error() string { return e.Msg }

// Messages returns how many messages (batch entries counted one by one) were checked.
func (c *Checker) Messages() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.messages
}

// Counts returns how many messages of each "<sender> <method> <kind>" were
// checked, kind being request, notification, response or error.
func (c *Checker) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k.from.String()+" "+k.method+" "+k.kind] += *v
	}
	return out
}

// Check validates one wire line (a JSON-RPC message or, in v2, a batch)
// written by from. It returns nil when the line conforms, else an *Error.
func (c *Checker) Check(from Sender, line []byte) error {
	return asError(c.check(from, line))
}

// CheckParsed is Check for a line the caller has parsed into t
// (t.Parse(line) returned true, t.B is line): the checker reads t instead
// of parsing the line again, so that the caller can map from the same tape.
func (c *Checker) CheckParsed(from Sender, line []byte, t *jsonscan.Tape) error {
	return asError(c.checkTape(from, line, t))
}

func asError(err error) error {
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		return &Error{Msg: err.Error()}
	}
	return nil
}

func (c *Checker) check(from Sender, line []byte) error { return c.checkTape(from, line, nil) }

// checkTape checks line; t is line's tape, or nil to parse it here.
func (c *Checker) checkTape(from Sender, line []byte, t *jsonscan.Tape) error {
	// A line the caller parsed without a newline in it (the tape looked at
	// every byte of space) has none to find or trim but '\r's.
	if t == nil || t.Newline() {
		line = bytes.TrimRight(line, "\r\n")
		if bytes.IndexByte(line, '\n') >= 0 {
			return errors.New("message contains a newline")
		}
	}
	if !c.slow {
		if ok, err := c.checkOnTape(from, line, t); ok {
			return err
		}
	}
	line = bytes.TrimRight(line, "\r") // for the decoders, as above
	inst, ok := any(nil), false
	if !c.slow {
		inst, ok = decodeJSON(line)
	}
	if !ok {
		var err error
		if inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(line)); err != nil {
			return fmt.Errorf("not JSON: %w", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if arr, ok := inst.([]any); ok {
		b := c.schema.batch[from]
		if b == nil {
			return fmt.Errorf("ACP v%d has no JSON-RPC batches", c.schema.version.Protocol())
		}
		if len(arr) == 0 {
			return errors.New("empty batch")
		}
		var msgs []string
		var bad []int
		for i, m := range arr {
			if err := c.checkOne(from, fval{v: m}); err != nil {
				bad = append(bad, i)
				msgs = append(msgs, fmt.Sprintf("batch entry %d: %v", i, err))
			}
		}
		if len(bad) == 0 {
			return nil
		}
		return &Error{Entries: bad, Msg: strings.Join(msgs, "; ")}
	}
	return c.checkOne(from, fval{v: inst})
}

// checkOnTape checks a message (an object) on its tape: t, or the
// checker's own parsed from line; false when the tape does not take the
// line (a batch, or what Tape.Parse refuses: the caller decodes it).
func (c *Checker) checkOnTape(from Sender, line []byte, t *jsonscan.Tape) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t == nil {
		t = &c.tape
		defer t.Release() // the caller's line is not kept (before the unlock: deferred later)
		if !t.Parse(line) {
			return false, nil
		}
	}
	if t.Root().C < 0 || t.B[t.Root().V0] != '{' {
		return false, nil
	}
	return true, c.checkOne(from, fval{t: t, e: t.Root()})
}

func (c *Checker) checkOne(from Sender, obj fval) error {
	c.messages++
	if obj.typ() != tObject {
		return fmt.Errorf("message is a %T, not an object", obj.v)
	}
	inst := obj
	var env envelope
	obj.envelope(&env)
	var m method
	if env.has(envMethod) {
		m.present = true
		if v := env.method; v.typ() == tString {
			m.isString = true
			if c.lastSch != nil && v.isKey(c.lastCall.method, c.lastMethodPlain) {
				m.name = c.lastCall.method // the method of the last payload checked
			} else {
				m.name = v.text()
			}
		}
	}
	if !c.tolerant || !c.lightEnvelope(&env, m) {
		if err := c.validate(c.schema.envelope[from], inst); err != nil {
			return fmt.Errorf("%s message envelope: %s", from, short(err))
		}
	}
	method, hasMethod := m.name, m.isString
	rawID, hasID := env.id, env.has(envID)
	params := env.params
	switch {
	case hasMethod && hasID:
		id := rawID.idKey()
		c.count(countKey{from, method, "request"})
		if _, dup := c.pending[from][id]; dup && !c.tolerant {
			return fmt.Errorf("%s request id %s reused while still pending", from, id)
		}
		c.pending[from][id] = method
		return c.checkPayload(from.receiver(), method, "request", params, "params")
	case hasMethod:
		c.count(countKey{from, method, "notification"})
		return c.checkPayload(from.receiver(), method, "notification", params, "params")
	case hasID:
		id := rawID.idKey()
		reqMethod, ok := c.pending[from.other()][id]
		if !ok {
			if c.tolerant {
				// The envelope is all that can be checked.
				if err := c.validate(c.schema.envelope[from], inst); err != nil {
					return fmt.Errorf("%s message envelope: %s", from, short(err))
				}
				return nil
			}
			return fmt.Errorf("%s response to unknown %s request id %s", from, from.other(), id)
		}
		delete(c.pending[from.other()], id)
		if env.has(envError) {
			c.count(countKey{from, reqMethod, "error"})
			return nil
		}
		c.count(countKey{from, reqMethod, "response"})
		// The response definition is bound to the side that handled the request.
		return c.checkPayload(from.String(), reqMethod, "response", env.result, "result")
	default:
		return errors.New("message has neither method nor id")
	}
}

// count counts one message of k.
func (c *Checker) count(k countKey) {
	if c.lastN == nil || k != c.lastCount {
		n, ok := c.counts[k]
		if !ok {
			n = new(int)
			c.counts[k] = n
		}
		c.lastCount, c.lastN = k, n
	}
	*c.lastN++
}

// callKey names the definition of a call's payload.
type callKey struct{ side, method, what string }

// maxCalls bounds the definitions a Checker remembers by callKey.
const maxCalls = 1024

// call is the definition of what's payload of method handled by side (nil: none).
func (c *Checker) call(side, method, what string) *jsonschema.Schema {
	k := callKey{side, method, what}
	if c.lastSch != nil && k == c.lastCall {
		return c.lastSch
	}
	if sch, ok := c.calls[k]; ok {
		c.lastCall, c.lastSch, c.lastMethodPlain = k, sch, plainKey(k.method)
		return sch
	}
	sch := c.schema.calls[side+"|"+method+"|"+what]
	if sch == nil {
		if method == "$/cancel_request" {
			sch = c.schema.calls["protocol|"+method+"|"+what]
		}
	}
	if len(c.calls) < maxCalls {
		if c.calls == nil {
			c.calls = map[callKey]*jsonschema.Schema{}
		}
		c.calls[k] = sch
	}
	return sch
}

func (c *Checker) checkPayload(side, method, what string, v fval, field string) error {
	sch := c.call(side, method, what)
	if sch == nil {
		if strings.HasPrefix(method, "_") {
			return nil // extension method: only the envelope is defined
		}
		return fmt.Errorf("%s %q is not an ACP v%d method handled by the %s", what, method, c.schema.version.Protocol(), side)
	}
	if method == "session/update" && what == "notification" {
		if u, ok := v.member("update"); ok && u.typ() == tObject {
			if k, ok := u.member("sessionUpdate"); ok && k.typ() == tString {
				var kind string
				if c.lastUpdate != nil && k.isKey(c.lastKind, c.lastKindPlain) {
					kind = c.lastKind
				} else {
					kind = k.text()
				}
				if c.lastUpdate == nil || kind != c.lastKind {
					if b := c.schema.updates[kind]; b != nil {
						c.lastKind, c.lastUpdate, c.lastKindPlain = kind, b, plainKey(kind)
					}
				}
				if kind == c.lastKind && c.lastUpdate != nil {
					sch = c.lastUpdate
				}
			}
		}
	}
	if err := c.validate(sch, v); err != nil {
		return fmt.Errorf("%s %s %s: %s", method, what, field, short(err))
	}
	return nil
}

// validate validates v against sch: the fast check first, and jsonschema
// itself unless the fast check is sure v is valid (so every error is
// jsonschema's). c.mu is held.
func (c *Checker) validate(sch *jsonschema.Schema, v fval) error {
	if !c.slow && v.t != nil {
		if n := c.compiled(sch); n != nil && n.check(v.t, v.e) == yes {
			return nil
		}
	} else if !c.slow {
		if n := c.schema.fast[sch]; n != nil {
			c.fast.stack, c.fast.base, c.fast.depth = c.fast.stack[:0], 0, 0
			if c.fast.apply(n, v) == yes {
				return nil
			}
		}
	}
	inst, err := v.decoded()
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(inst)
}

// compiled is the compiled validator of sch (c.mu is held): from the
// checker's own map, filled from the schema's (lazyComp) once a schema.
func (c *Checker) compiled(sch *jsonschema.Schema) *cnode {
	if sch == c.lastComp && sch != nil {
		return c.lastNode // most frames check the payload of the one before's definition
	}
	n, ok := c.comp[sch]
	if !ok {
		n = c.schema.comp.node(sch)
		if len(c.comp) < maxCalls {
			if c.comp == nil {
				c.comp = map[*jsonschema.Schema]*cnode{}
			}
			c.comp[sch] = n
		}
	}
	c.lastComp, c.lastNode = sch, n
	return n
}

func idKey(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case json.Number:
		// What json.Marshal writes for a number decoded from JSON.
		if v != "" && json.Valid([]byte(v)) {
			return string(v)
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// short renders a validation error in one line: the deepest failures (by
// JSON pointer into the message's params or result) and what failed there.
// Alternatives (anyOf, oneOf) whose discriminator (a const or enum) does
// not match are left out, so a tagged union reports the variant meant.
func short(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var leaves []*jsonschema.ValidationError
	collectLeaves(ve, &leaves)
	if len(leaves) == 0 {
		return ve.Error()
	}
	// "'not' failed" says nothing a reader can act on when there is more.
	kept := leaves[:0:0]
	for _, l := range leaves {
		if _, not := l.ErrorKind.(*kind.Not); !not {
			kept = append(kept, l)
		}
	}
	if len(kept) > 0 {
		leaves = kept
	}
	depth := 0
	for _, l := range leaves {
		depth = max(depth, len(l.InstanceLocation))
	}
	// By location: jsonschema reaches an object's members in map order,
	// which Go randomizes, so the same frame would list them in any order.
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return slices.Compare(a.InstanceLocation, b.InstanceLocation)
	})
	var parts []string
	seen := map[string]bool{}
	for _, l := range leaves {
		if len(l.InstanceLocation) != depth {
			continue
		}
		p := "/" + strings.Join(l.InstanceLocation, "/")
		msg := fmt.Sprintf("at %s: %s", p, l.ErrorKind.LocalizedString(printer))
		if seen[msg] {
			continue
		}
		seen[msg] = true
		if len(parts) == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, "; ")
}

func collectLeaves(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	if len(e.Causes) == 0 {
		*out = append(*out, e)
		return
	}
	causes := e.Causes
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		var meant []*jsonschema.ValidationError
		for _, c := range causes {
			if !hasDiscriminatorMiss(c) {
				meant = append(meant, c)
			}
		}
		if len(meant) > 0 {
			causes = meant
		}
	}
	for _, c := range causes {
		collectLeaves(c, out)
	}
}

// hasDiscriminatorMiss reports whether an alternative failed a const or an
// enum on a member of the value it was checking (not deeper).
func hasDiscriminatorMiss(e *jsonschema.ValidationError) bool {
	return discriminatorMiss(e, len(e.InstanceLocation)+1)
}

func discriminatorMiss(e *jsonschema.ValidationError, depth int) bool {
	switch e.ErrorKind.(type) {
	case *kind.Const, *kind.Enum:
		if len(e.InstanceLocation) <= depth {
			return true
		}
	case *kind.AnyOf, *kind.OneOf:
		return false // a nested union's misses are its own
	}
	for _, c := range e.Causes {
		if discriminatorMiss(c, depth) {
			return true
		}
	}
	return false
}
