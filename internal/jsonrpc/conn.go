package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/acptap/acptap/internal/jsonl"
)

// JSON-RPC 2.0's error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object: what a handler returns to refuse a
// request, and what Call returns when the peer refused one (Data is then
// the raw JSON the peer sent, a json.RawMessage).
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if raw, ok := e.Data.(json.RawMessage); ok && len(raw) > 0 {
		return fmt.Sprintf("json-rpc error %d: %s (%s)", e.Code, e.Message, raw)
	}
	return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message)
}

// ErrClosed is what a Call returns when the peer's input ended (or Serve
// returned) before its response came.
var ErrClosed = errors.New("connection closed")

// ErrReplyLater, returned by a Handler for a request, means the handler
// answers it itself, later, with Reply or ReplyError (an ACP agent answers
// session/prompt when the turn is over).
var ErrReplyLater = errors.New("the handler replies later")

// Request is a request (ID set, possibly to null) or a notification (ID nil)
// from the peer.
type Request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
}

// Notification reports whether the message has no id.
func (r *Request) Notification() bool { return r.ID == nil }

// Handler handles the peer's requests and notifications. For a request,
// the Conn answers with result, or with err: an *Error as it is, ErrReplyLater
// not at all, any other error as an internal error (-32603) carrying its
// text. What it returns for a notification is ignored.
type Handler func(ctx context.Context, req *Request) (result any, err error)

// Dispatch says where the Handler runs.
type Dispatch int

const (
	// Inline runs the handler on the reading goroutine, one message at a
	// time: what it writes while it runs comes before its response, and the
	// responses to a batch go out as one batch. The handler must not Call
	// (nothing reads the response while it waits); it may answer from
	// another goroutine (ErrReplyLater).
	Inline Dispatch = iota
	// Ordered runs the handler on one worker goroutine, in the order the
	// messages came; reading never waits for it, so responses to the Conn's
	// own calls are delivered while a handler runs.
	Ordered
)

// Options configure a Conn.
type Options struct {
	Handler  Handler // nil: every request is answered "Method not found"
	Dispatch Dispatch
	// CancelMethod, when set, is the notification sent (params {"requestId":
	// id}) for a Call whose context ends before its response: ACP's
	// "$/cancel_request".
	CancelMethod string
	// IgnoreMalformed drops input that is not JSON-RPC instead of answering
	// it with a JSON-RPC error.
	IgnoreMalformed bool
	// OnDrop, when set, hears of every message (or line) the Conn handled
	// no further: why, and its bytes.
	OnDrop func(why string, msg []byte)
	// HoldWrites (Inline only) buffers what is written while an input line
	// is handled and writes it when the line is done: one write for a
	// replay of thousands of updates. Only for a Conn written to from its
	// handler alone (a write from elsewhere would wait for the line).
	HoldWrites bool
	// MaxLine bounds one input line (0: DefaultMaxLine); a longer line is
	// consumed without being kept, reported to OnDrop, and reading goes on.
	MaxLine int
}

// DefaultMaxLine bounds an input line when Options.MaxLine is 0: 256 MiB,
// the longest line acptap's recorder captures.
const DefaultMaxLine = 256 << 20

// Conn is one JSON-RPC connection. Its methods are safe for concurrent use.
type Conn struct {
	opts Options

	wmu  sync.Mutex
	bw   *bufio.Writer
	hold bool  // Inline: buffer until the input line is handled
	werr error // first write error; later writes fail fast

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan response
	closed  bool

	queue  *queue         // Ordered
	worker sync.WaitGroup // Ordered's
}

type response struct {
	result json.RawMessage
	err    *Error
}

// New returns a Conn writing to w. Serve reads the peer's messages.
func New(w io.Writer, opts Options) *Conn {
	return &Conn{opts: opts, bw: bufio.NewWriterSize(w, 64<<10), pending: map[string]chan response{}}
}

// Serve reads newline-delimited messages from r until it ends (nil), a read
// fails, or ctx ends (ctx.Err(); a blocked read is left behind and what it
// reads later is dropped). Then pending calls fail with ErrClosed, the
// messages already read are still handled, and Serve returns once every
// handler has returned. Handlers get ctx. Serve is called once.
func (c *Conn) Serve(ctx context.Context, r io.Reader) error {
	if c.opts.Dispatch == Ordered {
		c.queue = newQueue()
		c.worker.Add(1)
		go func() {
			defer c.worker.Done()
			for {
				req, ok := c.queue.pop()
				if !ok {
					return
				}
				c.handle(ctx, req)
			}
		}()
	}
	done := make(chan error, 1)
	go func() { done <- c.read(ctx, r) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.close()
	if c.queue != nil {
		c.queue.close()
	}
	c.worker.Wait()
	return err
}

func (c *Conn) read(ctx context.Context, r io.Reader) error {
	max := c.opts.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	lr := jsonl.NewReader(r, max)
	lr.SkipLong = true
	lr.Owned = true // a handler may keep the message past the next read
	for {
		line, err := lr.Next()
		var tl *jsonl.LineTooLongError
		switch {
		case errors.As(err, &tl):
			c.drop(fmt.Sprintf("line %d: more than %d bytes", tl.Line, max), nil)
			continue
		case errors.Is(err, io.EOF):
			// A peer's last message need not end in LF: a pipe is not
			// the store, and its tail is a whole message, not a torn
			// write.
			line = lr.Tail()
		case err != nil:
			return fmt.Errorf("read: %w", err)
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if c.isClosed() {
				c.drop("input after the connection closed", t)
			} else {
				c.line(ctx, t)
			}
		}
		if err != nil {
			return nil
		}
	}
}

// wireMsg is any JSON-RPC message; absent members stay nil (a null one is
// the bytes "null").
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method json.RawMessage `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// outMsg is a message the Conn writes.
type outMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

var null = json.RawMessage("null")

// line handles one input line: a message or a batch.
func (c *Conn) line(ctx context.Context, b []byte) {
	inline := c.opts.Dispatch == Inline
	if inline && c.opts.HoldWrites {
		c.holdWrites(true)
		defer c.holdWrites(false)
	}
	if b[0] != '[' {
		if r := c.message(ctx, b); r != nil {
			_ = c.write(r)
		}
		return
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(b, &elems); err != nil {
		c.malformed(nil, CodeParseError, "Parse error", b)
		return
	}
	if len(elems) == 0 {
		c.malformed(nil, CodeInvalidRequest, "Invalid Request", b)
		return
	}
	var answers []*outMsg // Inline: the batch's responses, written as one batch
	for _, e := range elems {
		if r := c.message(ctx, e); r != nil {
			if inline {
				answers = append(answers, r)
			} else {
				_ = c.write(r)
			}
		}
	}
	if len(answers) > 0 {
		_ = c.write(answers)
	}
}

// message handles one message and returns the response to write, if any
// is due at once.
func (c *Conn) message(ctx context.Context, b []byte) *outMsg {
	var m wireMsg
	if err := json.Unmarshal(b, &m); err != nil {
		if !json.Valid(b) {
			return c.refuse(nil, CodeParseError, "Parse error", b)
		}
		return c.refuse(nil, CodeInvalidRequest, "Invalid Request", b)
	}
	if m.Method == nil {
		if m.ID == nil {
			c.drop("neither a method nor an id", b)
			return nil
		}
		c.deliver(m, b)
		return nil
	}
	var method string
	if json.Unmarshal(m.Method, &method) != nil {
		return c.refuse(m.ID, CodeInvalidRequest, "Invalid Request", b)
	}
	req := &Request{ID: m.ID, Method: method, Params: m.Params}
	switch c.opts.Dispatch {
	case Inline:
		return c.answer(ctx, req)
	case Ordered:
		c.queue.push(req)
	}
	return nil
}

// refuse answers malformed input with a JSON-RPC error (id null unless the
// message had one), or drops it.
func (c *Conn) refuse(id json.RawMessage, code int, msg string, b []byte) *outMsg {
	c.drop(msg, b)
	if c.opts.IgnoreMalformed {
		return nil
	}
	if id == nil {
		id = null
	}
	return &outMsg{JSONRPC: "2.0", ID: id, Error: &Error{Code: code, Message: msg}}
}

// malformed answers a whole malformed line.
func (c *Conn) malformed(id json.RawMessage, code int, msg string, b []byte) {
	if r := c.refuse(id, code, msg, b); r != nil {
		_ = c.write(r)
	}
}

// handle runs the handler and writes its answer.
func (c *Conn) handle(ctx context.Context, req *Request) {
	if r := c.answer(ctx, req); r != nil {
		_ = c.write(r)
	}
}

// answer runs the handler and returns the response due, if any.
func (c *Conn) answer(ctx context.Context, req *Request) *outMsg {
	var (
		result any
		err    error
	)
	if c.opts.Handler != nil {
		result, err = c.opts.Handler(ctx, req)
	} else {
		err = &Error{Code: CodeMethodNotFound, Message: "Method not found"}
	}
	if req.Notification() || errors.Is(err, ErrReplyLater) {
		return nil
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: CodeInternalError, Message: err.Error()}
		}
		return &outMsg{JSONRPC: "2.0", ID: req.ID, Error: e}
	}
	return &outMsg{JSONRPC: "2.0", ID: req.ID, Result: resultOf(result)}
}

// resultOf makes a nil result JSON null (a response has result or error).
func resultOf(v any) any {
	if v == nil {
		return null
	}
	return v
}

// deliver routes a response to the Call waiting for its id.
func (c *Conn) deliver(m wireMsg, b []byte) {
	var r response
	if m.Error != nil && string(m.Error) != "null" {
		var e struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if json.Unmarshal(m.Error, &e) != nil {
			r.err = &Error{Code: CodeInternalError, Message: "malformed error response"}
		} else {
			r.err = &Error{Code: e.Code, Message: e.Message}
			if len(e.Data) > 0 {
				r.err.Data = e.Data
			}
		}
	} else {
		r.result = m.Result
	}
	key := string(bytes.TrimSpace(m.ID))
	c.mu.Lock()
	ch, ok := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if !ok {
		c.drop("response to an unknown id", b)
		return
	}
	ch <- r
}

func (c *Conn) drop(why string, b []byte) {
	if c.opts.OnDrop != nil {
		c.opts.OnDrop(why, b)
	}
}

// Call sends a request and waits for its response, decoding the result into
// result (when non-nil). The peer's error comes back as an *Error; a closed
// connection as ErrClosed; when ctx ends first, Options.CancelMethod (if
// set) is sent and ctx.Err() returned. Errors name the method.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ErrClosed)
	}
	id := c.nextID
	c.nextID++
	key := strconv.FormatInt(id, 10)
	ch := make(chan response, 1)
	c.pending[key] = ch
	c.mu.Unlock()

	if err := c.write(&outMsg{JSONRPC: "2.0", ID: json.RawMessage(key), Method: method, Params: paramsOf(params)}); err != nil {
		c.forget(key)
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: %w", method, ErrClosed)
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
		if c.opts.CancelMethod != "" {
			_ = c.Notify(c.opts.CancelMethod, map[string]any{"requestId": id})
		}
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// paramsOf keeps explicit params: a request or notification always carries
// them, null when nil, as the peers always did.
func paramsOf(v any) any {
	if v == nil {
		return null
	}
	return v
}

func (c *Conn) forget(key string) {
	c.mu.Lock()
	delete(c.pending, key)
	c.mu.Unlock()
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	return c.write(&outMsg{JSONRPC: "2.0", Method: method, Params: paramsOf(params)})
}

// Reply answers a request with result.
func (c *Conn) Reply(id json.RawMessage, result any) error {
	return c.write(&outMsg{JSONRPC: "2.0", ID: idOf(id), Result: resultOf(result)})
}

// ReplyError answers a request with an error (a nil id is written null).
func (c *Conn) ReplyError(id json.RawMessage, e *Error) error {
	return c.write(&outMsg{JSONRPC: "2.0", ID: idOf(id), Error: e})
}

func idOf(id json.RawMessage) json.RawMessage {
	if id == nil {
		return null
	}
	return id
}

// SendRaw writes one message that is already JSON, as it is (a replayed
// frame keeps its bytes).
func (c *Conn) SendRaw(msg []byte) error { return c.writeLine(msg) }

// Err is the first write error, if any: after it every send fails.
func (c *Conn) Err() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.werr
}

// write encodes v without HTML escaping (the bytes a peer wrote stay as
// they were when a message is passed on).
func (c *Conn) write(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("marshal: %w", err)
	}
	return c.writeLine(bytes.TrimSuffix(b.Bytes(), []byte{'\n'}))
}

func (c *Conn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return c.werr
	}
	c.bw.Write(b)
	c.bw.WriteByte('\n')
	if !c.hold {
		c.flushLocked()
	}
	return c.werr
}

func (c *Conn) flushLocked() {
	if err := c.bw.Flush(); err != nil && c.werr == nil {
		c.werr = fmt.Errorf("write: %w", err)
	}
}

// holdWrites buffers writes while an input line is handled inline, and
// flushes them when it is done.
func (c *Conn) holdWrites(on bool) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.hold = on
	if !on && c.werr == nil {
		c.flushLocked()
	}
}

// close fails every pending call: the peer's input has ended.
func (c *Conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for k, ch := range c.pending {
		close(ch)
		delete(c.pending, k)
	}
}

func (c *Conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// queue is an unbounded FIFO between the reader and Ordered's worker, so
// reading never waits for a handler.
type queue struct {
	mu     sync.Mutex
	items  []*Request
	closed bool
	signal chan struct{}
}

func newQueue() *queue { return &queue{signal: make(chan struct{}, 1)} }

func (q *queue) push(r *Request) {
	q.mu.Lock()
	q.items = append(q.items, r)
	q.mu.Unlock()
	q.wake()
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wake()
}

func (q *queue) wake() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop returns the next message, or false once the queue is closed and
// drained.
func (q *queue) pop() (*Request, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			r := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return r, true
		}
		if q.closed {
			q.mu.Unlock()
			return nil, false
		}
		q.mu.Unlock()
		<-q.signal
	}
}
