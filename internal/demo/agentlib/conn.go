package agentlib

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// JSON-RPC error codes used by the agent.
const (
	codeParseError       = -32700
	codeInvalidRequest   = -32600
	codeMethodNotFound   = -32601
	codeInvalidParams    = -32602
	codeInternalError    = -32603
	codeNotFound         = -32002
	codeRequestCancelled = -32800
)

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// errConnClosed is returned by call when the peer's stream ended first.
var errConnClosed = errors.New("connection closed")

// incoming is one decoded message from the client.
type incoming struct {
	id     json.RawMessage // nil for notifications
	method string
	params json.RawMessage
}

type response struct {
	result json.RawMessage
	err    *rpcError
}

// conn writes newline-delimited JSON-RPC messages and matches the client's
// responses to the agent's own requests. Request ids are the agent's own
// sequence starting at 0; the client numbers its requests independently.
type conn struct {
	wmu sync.Mutex
	w   io.Writer
	err error // first write error; later writes fail fast

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan response
	closed  bool
}

func newConn(w io.Writer) *conn {
	return &conn{w: w, pending: map[string]chan response{}}
}

func (c *conn) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("marshal: %w", err)
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.err != nil {
		return c.err
	}
	if _, err := c.w.Write(b); err != nil {
		c.err = fmt.Errorf("write: %w", err)
		return c.err
	}
	return nil
}

type outRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type outNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type outResult struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type outError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *rpcError       `json:"error"`
}

func (c *conn) notify(method string, params any) error {
	return c.send(outNotification{JSONRPC: "2.0", Method: method, Params: params})
}

func (c *conn) reply(id json.RawMessage, result any) error {
	return c.send(outResult{JSONRPC: "2.0", ID: id, Result: result})
}

func (c *conn) replyError(id json.RawMessage, e *rpcError) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	return c.send(outError{JSONRPC: "2.0", ID: id, Error: e})
}

// call sends a request and waits for its response. When ctx ends first it
// sends $/cancel_request for the request and returns ctx.Err().
func (c *conn) call(ctx context.Context, method string, params any, result any) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errConnClosed
	}
	id := c.nextID
	c.nextID++
	key := strconv.FormatInt(id, 10)
	ch := make(chan response, 1)
	c.pending[key] = ch
	c.mu.Unlock()

	if err := c.send(outRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		c.forget(key)
		return err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return errConnClosed
		}
		if r.err != nil {
			return r.err
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(r.result, result); err != nil {
			return fmt.Errorf("%s result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		c.forget(key)
		_ = c.notify("$/cancel_request", map[string]any{"requestId": id})
		return ctx.Err()
	}
}

func (c *conn) forget(key string) {
	c.mu.Lock()
	delete(c.pending, key)
	c.mu.Unlock()
}

// deliver routes a response from the client to the waiting call.
func (c *conn) deliver(id json.RawMessage, r response) {
	key := string(bytes.TrimSpace(id))
	c.mu.Lock()
	ch, ok := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if ok {
		ch <- r
	}
}

// shutdown fails every pending call: the client's stream has ended.
func (c *conn) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for k, ch := range c.pending {
		close(ch)
		delete(c.pending, k)
	}
}

// decode splits one wire line into messages. A JSON array is a batch (allowed
// by ACP v2 alpha.9); its entries are handled one by one and each request is
// answered on its own line.
func decode(line []byte) ([]map[string]json.RawMessage, error) {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		var batch []map[string]json.RawMessage
		if err := json.Unmarshal(line, &batch); err != nil {
			return nil, err
		}
		if len(batch) == 0 {
			return nil, errors.New("empty batch")
		}
		return batch, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, err
	}
	return []map[string]json.RawMessage{m}, nil
}
