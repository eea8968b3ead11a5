package clientlib

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

// RPCError is a JSON-RPC error returned by the agent.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("agent error %d: %s (%s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("agent error %d: %s", e.Code, e.Message)
}

// ErrConnClosed is returned when the agent's output ends while a request is pending.
var ErrConnClosed = errors.New("agent connection closed")

type response struct {
	result json.RawMessage
	err    *RPCError
}

// conn writes newline-delimited JSON-RPC and matches the agent's responses
// to the client's requests (ids from 0, independent of the agent's own).
type conn struct {
	wmu sync.Mutex
	w   io.Writer
	err error

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan response
	closed  bool
}

func newConn(w io.Writer) *conn { return &conn{w: w, pending: map[string]chan response{}} }

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
		c.err = fmt.Errorf("write to agent: %w", err)
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

type outResult struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type outError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   RPCError        `json:"error"`
}

func (c *conn) reply(id json.RawMessage, result any) error {
	return c.send(outResult{JSONRPC: "2.0", ID: id, Result: result})
}

func (c *conn) replyError(id json.RawMessage, e RPCError) error {
	return c.send(outError{JSONRPC: "2.0", ID: id, Error: e})
}

// call sends a request and decodes its result into result (if non-nil).
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrConnClosed
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
			return fmt.Errorf("%s: %w", method, ErrConnClosed)
		}
		if r.err != nil {
			return fmt.Errorf("%s: %w", method, r.err)
		}
		if result != nil {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("%s result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.forget(key)
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (c *conn) forget(key string) {
	c.mu.Lock()
	delete(c.pending, key)
	c.mu.Unlock()
}

func (c *conn) deliver(id json.RawMessage, r response) bool {
	key := string(bytes.TrimSpace(id))
	c.mu.Lock()
	ch, ok := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if ok {
		ch <- r
	}
	return ok
}

func (c *conn) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for k, ch := range c.pending {
		close(ch)
		delete(c.pending, k)
	}
}
