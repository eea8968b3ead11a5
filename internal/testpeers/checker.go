package testpeers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

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
// caller must check a request before its peer can answer it (see Tap).
type Checker struct {
	schema *compiledSchema

	mu       sync.Mutex
	pending  [2]map[string]string // by sender of the request: id → method
	messages int
	counts   map[string]int // "<sender> <method> <kind>"
}

// NewChecker returns a Checker for ACP version v (V1 or V2).
func NewChecker(v Version) (*Checker, error) {
	cs, err := loadSchema(v)
	if err != nil {
		return nil, err
	}
	return &Checker{
		schema:  cs,
		pending: [2]map[string]string{{}, {}},
		counts:  map[string]int{},
	}, nil
}

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
		out[k] = v
	}
	return out
}

// Check validates one wire line (a JSON-RPC message or, in v2, a batch).
func (c *Checker) Check(from Sender, line []byte) error {
	line = bytes.TrimRight(line, "\r\n")
	if bytes.IndexByte(line, '\n') >= 0 {
		return errors.New("message contains a newline")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if arr, ok := inst.([]any); ok {
		b := c.schema.batch[from]
		if b == nil {
			return fmt.Errorf("ACP v%d has no JSON-RPC batches", c.schema.version)
		}
		if len(arr) == 0 {
			return errors.New("empty batch")
		}
		var errs []error
		for i, m := range arr {
			if err := c.checkOne(from, m); err != nil {
				errs = append(errs, fmt.Errorf("batch entry %d: %w", i, err))
			}
		}
		return errors.Join(errs...)
	}
	return c.checkOne(from, inst)
}

func (c *Checker) checkOne(from Sender, inst any) error {
	c.messages++
	obj, ok := inst.(map[string]any)
	if !ok {
		return fmt.Errorf("message is a %T, not an object", inst)
	}
	if err := c.schema.envelope[from].Validate(inst); err != nil {
		return fmt.Errorf("%s message envelope: %w", from, err)
	}
	method, hasMethod := obj["method"].(string)
	rawID, hasID := obj["id"]
	id := idKey(rawID)
	switch {
	case hasMethod && hasID:
		c.counts[from.String()+" "+method+" request"]++
		if _, dup := c.pending[from][id]; dup {
			return fmt.Errorf("%s request id %s reused while still pending", from, id)
		}
		c.pending[from][id] = method
		return c.checkPayload(from.receiver(), method, "request", obj["params"], "params")
	case hasMethod:
		c.counts[from.String()+" "+method+" notification"]++
		return c.checkPayload(from.receiver(), method, "notification", obj["params"], "params")
	case hasID:
		reqMethod, ok := c.pending[from.other()][id]
		if !ok {
			return fmt.Errorf("%s response to unknown %s request id %s", from, from.other(), id)
		}
		delete(c.pending[from.other()], id)
		if _, isErr := obj["error"]; isErr {
			c.counts[from.String()+" "+reqMethod+" error"]++
			return nil
		}
		c.counts[from.String()+" "+reqMethod+" response"]++
		// The response definition is bound to the side that handled the request.
		return c.checkPayload(from.String(), reqMethod, "response", obj["result"], "result")
	default:
		return errors.New("message has neither method nor id")
	}
}

func (c *Checker) checkPayload(side, method, kind string, v any, field string) error {
	sch := c.schema.calls[side+"|"+method+"|"+kind]
	if sch == nil {
		if method == "$/cancel_request" {
			sch = c.schema.calls["protocol|"+method+"|"+kind]
		}
	}
	if sch == nil {
		if strings.HasPrefix(method, "_") {
			return nil // extension method: only the envelope is defined
		}
		return fmt.Errorf("%s %q is not an ACP v%d method handled by the %s", kind, method, c.schema.version, side)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("%s %s %s: %w", method, kind, field, err)
	}
	return nil
}

func idKey(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
