package agentlib

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/acptap/acptap/internal/jsonrpc"
)

// Name and Version identify the example agent in its initialize response.
const (
	Name    = "acptap-example-agent"
	Version = "0.1.0"
)

// Options tune the example agent. The zero value is the default.
type Options struct {
	// Delay is a pause before each session/update of a turn, so a demo shows
	// the turn unfold. Zero sends the updates back to back.
	Delay time.Duration
	// NewSessionID returns the id of each new session. Nil: "sess_" and 16
	// random hex digits.
	NewSessionID func() string
	// RespondFirst sends the session/prompt response (the prompt was
	// inserted) before the turn's updates. By default it is sent last, after
	// the idle state_update; ACP v2 allows either order.
	RespondFirst bool
	// Log receives diagnostics, one line each. Nil discards them. The
	// protocol stream never carries logs.
	Log io.Writer
}

// Serve runs the example agent on r (the client's messages) and w (the
// agent's messages) until r ends, with default Options. It returns nil at
// EOF. The caller must keep reading w until Serve returns.
func Serve(r io.Reader, w io.Writer) error {
	return ServeContext(context.Background(), r, w, Options{})
}

// ServeContext is Serve with a context and options. When ctx ends, running
// turns are cancelled and ServeContext returns ctx.Err() once they have
// finished (it cannot interrupt a blocked read of r).
func ServeContext(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &agent{opts: opts, sessions: map[string]*session{}}
	// Ordered: responses to the agent's own requests are routed at once,
	// requests and notifications are handled one at a time, in order, so a
	// slow handler never stops the agent from reading its input.
	a.conn = jsonrpc.New(w, jsonrpc.Options{Handler: a.handle, Dispatch: jsonrpc.Ordered, CancelMethod: "$/cancel_request"})
	// Serve returns when the client is gone (or we were stopped) and the
	// messages read have been handled: then end the turns.
	err := a.conn.Serve(ctx, r)
	cancel()
	a.turns.Wait()
	return err
}

type agent struct {
	opts  Options
	conn  *jsonrpc.Conn
	turns sync.WaitGroup

	mu          sync.Mutex
	initialized bool
	v1          bool // the client negotiated ACP v1 (v1.go)
	sessions    map[string]*session
}

type session struct {
	id    string
	cwd   string
	turns int // prompts received

	ctx  context.Context    // ends when the session is closed (or the agent stops)
	stop context.CancelFunc // closes ctx
	// cancelTurn cancels the running turn, if any.
	cancelTurn context.CancelFunc
	// last is closed when the most recently queued turn has finished.
	last   chan struct{}
	closed bool
}

func (a *agent) logf(format string, args ...any) {
	if a.opts.Log != nil {
		fmt.Fprintf(a.opts.Log, "acptap-example-agent: "+format+"\n", args...)
	}
}

// handle runs on the connection's worker, one message at a time.
func (a *agent) handle(ctx context.Context, in *jsonrpc.Request) (any, error) {
	var (
		result any
		rerr   *rpcError
	)
	switch in.Method {
	case "initialize":
		result, rerr = a.initialize(in.Params)
	case "session/new":
		result, rerr = a.newSession(ctx, in.Params)
	case "session/prompt":
		// Answered by the turn itself, when the prompt is inserted or at the end.
		if rerr = a.prompt(in); rerr == nil {
			return nil, jsonrpc.ErrReplyLater
		}
	case "session/close":
		result, rerr = a.closeSession(in.Params)
	case "session/cancel":
		var p sessionRequest
		if json.Unmarshal(in.Params, &p) == nil {
			a.cancelTurn(p.SessionID)
		}
	case "$/cancel_request":
		// Nothing of ours runs long enough on behalf of a client request.
	default:
		rerr = &rpcError{Code: codeMethodNotFound, Message: "Method not found", Data: map[string]string{"method": in.Method}}
	}
	if rerr != nil {
		return nil, rerr
	}
	return result, nil
}

func invalidParams(msg string) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: "Invalid params", Data: map[string]string{"reason": msg}}
}

func (a *agent) initialize(params json.RawMessage) (any, *rpcError) {
	var p initializeRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.initialized {
		return nil, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request", Data: map[string]string{"reason": "already initialized"}}
	}
	if negotiate(p.ProtocolVersion) == 1 {
		r, rerr := a.initializeV1(params)
		if rerr == nil {
			a.initialized, a.v1 = true, true
		}
		return r, rerr
	}
	if p.Info == nil || p.Info.Name == "" || p.Info.Version == "" {
		return nil, invalidParams("info.name and info.version are required")
	}
	a.initialized = true
	a.logf("initialize from %s %s (protocolVersion %d)", p.Info.Name, p.Info.Version, p.ProtocolVersion)
	return initializeResponse{
		ProtocolVersion: ProtocolVersion,
		Info:            implementation{Name: Name, Title: "acptap example agent", Version: Version},
		Capabilities: agentCapabilities{Session: sessionCapabilities{
			Prompt:                promptCapabilities{EmbeddedContext: &empty{}},
			MCP:                   mcpCapabilities{Stdio: &empty{}, HTTP: &empty{}},
			AdditionalDirectories: &empty{},
		}},
		AuthMethods: []any{},
	}, nil
}

func (a *agent) newSession(ctx context.Context, params json.RawMessage) (any, *rpcError) {
	var p newSessionRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	if !filepath.IsAbs(p.Cwd) {
		return nil, invalidParams("cwd must be an absolute path")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.initialized {
		return nil, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request", Data: map[string]string{"reason": "not initialized"}}
	}
	id := a.sessionID()
	sctx, stop := context.WithCancel(ctx)
	a.sessions[id] = &session{id: id, cwd: p.Cwd, ctx: sctx, stop: stop}
	a.logf("session %s in %s (%d MCP servers)", id, p.Cwd, len(p.MCPServers))
	return newSessionResponse{SessionID: id}, nil
}

func (a *agent) sessionID() string {
	if a.opts.NewSessionID != nil {
		return a.opts.NewSessionID()
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "sess_" + hex.EncodeToString(b[:])
}

func (a *agent) lookup(id string) (*session, *rpcError) {
	s, ok := a.sessions[id]
	if !ok || s.closed {
		return nil, &rpcError{Code: codeNotFound, Message: "Resource not found", Data: map[string]string{"sessionId": id}}
	}
	return s, nil
}

// prompt queues a turn for the prompt; turns of a session run one at a time.
// The turn answers the request itself.
func (a *agent) prompt(in *jsonrpc.Request) *rpcError {
	var p promptRequest
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return invalidParams(err.Error())
	}
	a.mu.Lock()
	s, rerr := a.lookup(p.SessionID)
	if rerr != nil {
		a.mu.Unlock()
		return rerr
	}
	s.turns++
	t := &turn{a: a, s: s, n: s.turns, reqID: in.ID, prompt: p.Prompt, v1: a.v1, announced: map[string]bool{}}
	prev, done := s.last, make(chan struct{})
	s.last = done
	a.turns.Add(1)
	a.mu.Unlock()

	go func() {
		defer a.turns.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		tctx, cancel := context.WithCancel(s.ctx)
		defer cancel()
		a.mu.Lock()
		if s.ctx.Err() != nil {
			// Closed before the prompt was inserted.
			a.mu.Unlock()
			_ = a.conn.ReplyError(in.ID, &rpcError{Code: codeRequestCancelled, Message: "Request cancelled"})
			return
		}
		s.cancelTurn = cancel
		a.mu.Unlock()
		t.run(tctx)
		a.mu.Lock()
		s.cancelTurn = nil
		a.mu.Unlock()
	}()
	return nil
}

// cancelTurn cancels the session's running turn (session/cancel).
func (a *agent) cancelTurn(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok && s.cancelTurn != nil {
		s.cancelTurn()
	}
}

// closeSession cancels the running turn and the queued ones, waits until the
// running turn has sent its final idle update and prompt response, and then
// answers.
func (a *agent) closeSession(params json.RawMessage) (any, *rpcError) {
	var p sessionRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	a.mu.Lock()
	s, rerr := a.lookup(p.SessionID)
	if rerr != nil {
		a.mu.Unlock()
		return nil, rerr
	}
	s.closed = true
	s.stop()
	last := s.last
	a.mu.Unlock()
	if last != nil {
		<-last
	}
	a.logf("session %s closed", p.SessionID)
	return struct{}{}, nil
}
