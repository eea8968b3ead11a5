package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveLines runs a Conn over the given input and returns what it wrote,
// line by line, and what it dropped.
func serveLines(t *testing.T, opts Options, in string) (out []string, dropped []string) {
	t.Helper()
	var buf bytes.Buffer
	var mu sync.Mutex
	opts.OnDrop = func(why string, _ []byte) {
		mu.Lock()
		dropped = append(dropped, why)
		mu.Unlock()
	}
	c := New(&buf, opts)
	if err := c.Serve(context.Background(), strings.NewReader(in)); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out, dropped
}

func echo(_ context.Context, r *Request) (any, error) {
	switch r.Method {
	case "echo":
		return r.Params, nil
	case "fail":
		return nil, errors.New("it broke")
	case "refuse":
		return nil, &Error{Code: -32002, Message: "Resource not found", Data: map[string]string{"id": "x"}}
	}
	return nil, &Error{Code: CodeMethodNotFound, Message: "Method not found"}
}

// TestMalformedLines: input that is not JSON-RPC gets the spec's errors
// with id null (an invalid request keeps its id), the connection goes on,
// and every such line is reported.
func TestMalformedLines(t *testing.T) {
	in := strings.Join([]string{
		`not json`,
		`[1`,
		`42`,
		`[]`,
		``,
		`{"jsonrpc":"2.0","id":5,"method":7}`,
		`{"jsonrpc":"2.0","foo":1}`,
		`[1,{"jsonrpc":"2.0","id":2,"method":"echo","params":{"a":"<&>"}}]`,
		`{"jsonrpc":"2.0","id":3,"method":"echo","params":[1]}`,
	}, "\n") + "\n"
	out, dropped := serveLines(t, Options{Handler: echo}, in)
	want := []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request"}}`,
		`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}},{"jsonrpc":"2.0","id":2,"result":{"a":"<&>"}}]`,
		`{"jsonrpc":"2.0","id":3,"result":[1]}`,
	}
	if strings.Join(out, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(out, "\n"), strings.Join(want, "\n"))
	}
	if len(dropped) != 7 {
		t.Errorf("dropped %d: %v, want 7 (every malformed message, and the one with neither method nor id)", len(dropped), dropped)
	}

	quiet, dropped := serveLines(t, Options{Handler: echo, IgnoreMalformed: true}, in)
	if len(quiet) != 2 || len(dropped) != 7 {
		t.Errorf("IgnoreMalformed: wrote %v, dropped %v", quiet, dropped)
	}
}

// TestHandlerAnswers: a result, a handler's *Error as it is, any other
// error as -32603, a nil result as null, no answer to a notification or
// with ErrReplyLater (the handler answers itself).
func TestHandlerAnswers(t *testing.T) {
	var later json.RawMessage
	var c *Conn
	h := func(ctx context.Context, r *Request) (any, error) {
		switch r.Method {
		case "later":
			later = r.ID
			return nil, ErrReplyLater
		case "nil":
			return nil, nil
		case "note":
			return "ignored", nil
		}
		return echo(ctx, r)
	}
	in := `{"jsonrpc":"2.0","id":"a","method":"fail"}
{"jsonrpc":"2.0","id":1,"method":"refuse"}
{"jsonrpc":"2.0","id":2,"method":"nil"}
{"jsonrpc":"2.0","method":"note","params":{}}
{"jsonrpc":"2.0","id":3,"method":"later"}
{"jsonrpc":"2.0","id":4,"method":"nope"}
`
	var buf bytes.Buffer
	c = New(&buf, Options{Handler: h})
	if err := c.Serve(context.Background(), strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if err := c.Reply(later, map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":"it broke"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":{"id":"x"}}}
{"jsonrpc":"2.0","id":2,"result":null}
{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}
{"jsonrpc":"2.0","id":3,"result":{"n":1}}
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// TestInlineOrderAndBatch: what an inline handler writes comes before its
// response (raw messages byte for byte), and a batch is answered by one
// batch.
func TestInlineOrderAndBatch(t *testing.T) {
	var c *Conn
	raw := `{"jsonrpc":"2.0", "method":"session/update","params":{"x":"<kept as is>"}}`
	h := func(ctx context.Context, r *Request) (any, error) {
		if r.Method == "replay" {
			if err := c.SendRaw([]byte(raw)); err != nil {
				return nil, err
			}
			return map[string]bool{"done": true}, nil
		}
		return echo(ctx, r)
	}
	var buf bytes.Buffer
	c = New(&buf, Options{Handler: h, HoldWrites: true})
	in := `{"jsonrpc":"2.0","id":1,"method":"replay"}
[{"jsonrpc":"2.0","id":2,"method":"echo","params":1},{"jsonrpc":"2.0","method":"echo"},{"jsonrpc":"2.0","id":3,"method":"nope"}]
`
	if err := c.Serve(context.Background(), strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	want := raw + `
{"jsonrpc":"2.0","id":1,"result":{"done":true}}
[{"jsonrpc":"2.0","id":2,"result":1},{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}]
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// peer is the far end of a Conn over pipes: it reads what the Conn writes
// and writes what the Conn reads.
type peer struct {
	t   *testing.T
	rd  *bufio.Reader
	w   *io.PipeWriter
	c   *Conn
	err chan error
}

func newPeer(t *testing.T, opts Options) *peer {
	t.Helper()
	inR, inW := io.Pipe()   // peer → Conn
	outR, outW := io.Pipe() // Conn → peer
	p := &peer{t: t, rd: bufio.NewReader(outR), w: inW, err: make(chan error, 1)}
	p.c = New(outW, opts)
	go func() { p.err <- p.c.Serve(context.Background(), inR) }()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return p
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := p.w.Write([]byte(line + "\n")); err != nil {
		p.t.Fatal(err)
	}
}

func (p *peer) read() map[string]json.RawMessage {
	p.t.Helper()
	ch := make(chan string, 1)
	go func() {
		l, _ := p.rd.ReadString('\n')
		ch <- l
	}()
	select {
	case l := <-ch:
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			p.t.Fatalf("the Conn wrote %q: %v", l, err)
		}
		return m
	case <-time.After(time.Minute):
		p.t.Fatal("nothing written within a minute")
	}
	return nil
}

type callResult struct {
	v   any
	err error
}

func (p *peer) call(ctx context.Context, method string) chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		var v any
		err := p.c.Call(ctx, method, map[string]int{"k": 1}, &v)
		ch <- callResult{v, err}
	}()
	return ch
}

func wait(t *testing.T, ch chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(time.Minute):
		t.Fatal("the call did not return within a minute")
	}
	return callResult{}
}

// TestCallsMatchedByID: two calls in flight, answered in the other order,
// each gets its own result; a peer error comes back as *Error with its data;
// a response to an unknown id is dropped and changes nothing.
func TestCallsMatchedByID(t *testing.T) {
	var dropped []string
	var mu sync.Mutex
	p := newPeer(t, Options{Dispatch: Ordered, OnDrop: func(why string, _ []byte) {
		mu.Lock()
		dropped = append(dropped, why)
		mu.Unlock()
	}})
	a := p.call(context.Background(), "first")
	ra := p.read()
	b := p.call(context.Background(), "second")
	rb := p.read()
	if string(ra["id"]) != "0" || string(rb["id"]) != "1" || string(ra["method"]) != `"first"` || string(ra["params"]) != `{"k":1}` {
		t.Fatalf("requests: %v %v", ra, rb)
	}
	p.send(`{"jsonrpc":"2.0","id":99,"result":"stray"}`)
	p.send(`{"jsonrpc":"2.0","id":1,"result":"two"}`)
	p.send(`{"jsonrpc":"2.0","id":0,"error":{"code":-32002,"message":"gone","data":{"why":"x"}}}`)
	if r := wait(t, b); r.err != nil || r.v != "two" {
		t.Errorf("second: %v %v", r.v, r.err)
	}
	r := wait(t, a)
	var e *Error
	if !errors.As(r.err, &e) || e.Code != -32002 || string(e.Data.(json.RawMessage)) != `{"why":"x"}` || !strings.Contains(r.err.Error(), "first") {
		t.Errorf("first: %v", r.err)
	}
	p.w.Close()
	if err := <-p.err; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if len(dropped) != 1 || dropped[0] != "response to an unknown id" {
		t.Errorf("dropped: %v", dropped)
	}
}

// TestEOFMidRequest: the input ends in the middle of a request (a torn
// last line): it is answered as a parse error, the pending call fails with
// ErrClosed, later calls fail at once, and Serve returns nil.
func TestEOFMidRequest(t *testing.T) {
	p := newPeer(t, Options{Dispatch: Ordered})
	pending := p.call(context.Background(), "waits")
	p.read()
	if _, err := p.w.Write([]byte(`{"jsonrpc":"2.0","id":7,"meth`)); err != nil {
		t.Fatal(err)
	}
	p.w.Close()
	if m := p.read(); !strings.Contains(string(m["error"]), "-32700") || string(m["id"]) != "null" {
		t.Errorf("torn line answered %v", m)
	}
	if r := wait(t, pending); !errors.Is(r.err, ErrClosed) {
		t.Errorf("pending call: %v, want ErrClosed", r.err)
	}
	if err := <-p.err; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if err := p.c.Call(context.Background(), "after", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after EOF: %v", err)
	}
}

// TestCancelledCall: a call whose context ends sends the cancel
// notification for its id and returns the context's error; its late
// response is dropped.
func TestCancelledCall(t *testing.T) {
	p := newPeer(t, Options{Dispatch: Ordered, CancelMethod: "$/cancel_request"})
	ctx, cancel := context.WithCancel(context.Background())
	ch := p.call(ctx, "slow")
	req := p.read()
	cancel()
	m := p.read()
	if string(m["method"]) != `"$/cancel_request"` || string(m["params"]) != `{"requestId":`+string(req["id"])+`}` {
		t.Errorf("cancel notification: %v", m)
	}
	if r := wait(t, ch); !errors.Is(r.err, context.Canceled) {
		t.Errorf("cancelled call: %v", r.err)
	}
}

// TestOrderedReadsWhileHandling: an Ordered handler that calls the peer
// gets the response (reading goes on while it waits), and the messages
// queued behind it are handled after it, in order.
func TestOrderedReadsWhileHandling(t *testing.T) {
	var order []string
	var mu sync.Mutex
	var p *peer
	h := func(ctx context.Context, r *Request) (any, error) {
		mu.Lock()
		order = append(order, r.Method)
		mu.Unlock()
		if r.Method == "ask" {
			var answer string
			if err := p.c.Call(ctx, "question", nil, &answer); err != nil {
				return nil, err
			}
			return answer, nil
		}
		return "ok", nil
	}
	p = newPeer(t, Options{Handler: h, Dispatch: Ordered})
	p.send(`{"jsonrpc":"2.0","id":"x","method":"ask"}`)
	p.send(`{"jsonrpc":"2.0","id":"y","method":"next"}`)
	q := p.read()
	if string(q["method"]) != `"question"` {
		t.Fatalf("want the handler's call, got %v", q)
	}
	p.send(`{"jsonrpc":"2.0","id":` + string(q["id"]) + `,"result":"42"}`)
	if m := p.read(); string(m["id"]) != `"x"` || string(m["result"]) != `"42"` {
		t.Errorf("ask answered %v", m)
	}
	if m := p.read(); string(m["id"]) != `"y"` {
		t.Errorf("next answered %v", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(order, ",") != "ask,next" {
		t.Errorf("order %v", order)
	}
}

// TestAnswersFromGoroutines: an Inline handler that leaves requests to
// goroutines of their own (ErrReplyLater) answers a blocked one after a
// quick one, and reading goes on meanwhile.
func TestAnswersFromGoroutines(t *testing.T) {
	release := make(chan struct{})
	var p *peer
	h := func(ctx context.Context, r *Request) (any, error) {
		go func() {
			if r.Method == "block" {
				<-release
			}
			_ = p.c.Reply(r.ID, r.Method)
		}()
		return nil, ErrReplyLater
	}
	p = newPeer(t, Options{Handler: h})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"block"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"quick"}`)
	if m := p.read(); string(m["id"]) != "2" {
		t.Errorf("first answer %v, want the quick one", m)
	}
	close(release)
	if m := p.read(); string(m["id"]) != "1" {
		t.Errorf("second answer %v", m)
	}
	p.w.Close()
	if err := <-p.err; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestWriteError: the first write error sticks: sends fail, Err says why.
func TestWriteError(t *testing.T) {
	c := New(failWriter{}, Options{})
	if err := c.Notify("a", nil); err == nil {
		t.Error("Notify on a broken writer succeeded")
	}
	if err := c.Reply(json.RawMessage("1"), nil); err == nil || c.Err() == nil {
		t.Errorf("Reply: %v, Err: %v", err, c.Err())
	}
}

// TestLongLineDropped: a line over Options.MaxLine is read past without
// being kept, reported, and the messages after it are answered; a last
// message without LF is a message (a pipe has no torn-tail rule).
func TestLongLineDropped(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"echo","params":"` + strings.Repeat("x", 200) + `"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"echo","params":[3]}`
	out, dropped := serveLines(t, Options{Handler: echo, MaxLine: 64}, in)
	want := []string{`{"jsonrpc":"2.0","id":2,"result":[2]}`, `{"jsonrpc":"2.0","id":3,"result":[3]}`}
	if strings.Join(out, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(out, "\n"), strings.Join(want, "\n"))
	}
	if len(dropped) != 1 || !strings.Contains(dropped[0], "line 1: more than 64 bytes") {
		t.Errorf("dropped %q, want line 1 over the bound", dropped)
	}
}
