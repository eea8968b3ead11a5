package clientlib

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/acptap/acptap/internal/jsonrpc"
)

// Name and Version identify the example client in its initialize request.
const (
	Name    = "acptap-example-client"
	Version = "0.1.0"
)

// Recognisable secrets carried by DefaultMCPServers: a recorder must never
// store them.
const (
	SecretEnvValue    = "SECRET-ENV-VALUE-1234"
	SecretHeaderValue = "SECRET-HEADER-VALUE-5678"
	SecretArgValue    = "SECRET-ARG-VALUE-9012"
)

// Secrets lists the recognisable secret values.
var Secrets = []string{SecretEnvValue, SecretHeaderValue, SecretArgValue}

// DefaultPrompts are sent when Options.Prompts is empty.
var DefaultPrompts = []string{
	"Fix the typo in the greeting printed by main.go.",
	"Thanks! What does main.go do now?",
}

// DefaultMCPServers returns a stdio and an http MCP server whose env value,
// argument and header value carry the Secrets.
func DefaultMCPServers() []MCPServer {
	return []MCPServer{
		{
			Type: "stdio", Name: "docs-search", Command: "/usr/local/bin/docs-search-mcp",
			Args: []string{"--api-token", SecretArgValue},
			Env:  []NameValue{{Name: "DOCS_API_KEY", Value: SecretEnvValue}},
		},
		{
			Type: "http", Name: "issue-tracker", URL: "https://mcp.example.invalid/issues",
			Headers: []NameValue{{Name: "Authorization", Value: "Bearer " + SecretHeaderValue}},
		},
	}
}

// Options tune the scripted client. The zero value is the default.
type Options struct {
	// Prompts to send, one session/prompt each; empty means DefaultPrompts.
	Prompts []string
	// Cwd is the session's working directory (absolute); empty means the
	// current directory.
	Cwd string
	// AdditionalDirectories are sent with session/new when not empty.
	AdditionalDirectories []string
	// MCPServers for session/new; nil means DefaultMCPServers(), an empty
	// non-nil slice sends none.
	MCPServers []MCPServer
	// Permission selects the first option of this kind in permission
	// requests (allow_once, allow_always, reject_once, reject_always), or
	// "cancel" answers with the cancelled outcome. Empty means allow_once.
	Permission string
	// Elicitation answers elicitation/create: "accept" (default; form fields
	// are filled from the requested schema), "decline" or "cancel".
	Elicitation string
	// SkipClose leaves the session open (no session/close).
	SkipClose bool
	// OnUpdate, if set, is called with every session/update's sessionId and
	// raw update object, in arrival order, from the reading goroutine.
	OnUpdate func(sessionID string, update json.RawMessage)
	// Env is added to the environment of the command started by Run.
	Env []string
	// Stderr receives the stderr of the command started by Run; nil means os.Stderr.
	Stderr io.Writer
	// ProtocolVersion is the ACP version the client asks for: 0 or 2 for
	// ACP v2, 1 for ACP v1 (v1 shapes; a turn ends at the session/prompt
	// response, which carries its stopReason).
	ProtocolVersion int
	// DrainTimeout bounds how long RunConn waits, after closing its writer,
	// for the agent's output to end; zero means 5s.
	DrainTimeout time.Duration
}

// Summary is what the client saw.
type Summary struct {
	ProtocolVersion  int            `json:"protocolVersion"`
	AgentInfo        Implementation `json:"agentInfo"`
	SessionID        string         `json:"sessionId"`
	PromptMessageIDs []string       `json:"promptMessageIds"`
	// Updates counts session/update notifications by sessionUpdate kind.
	Updates      map[string]int `json:"updates"`
	TotalUpdates int            `json:"totalUpdates"`
	// StopReasons lists the stopReason of each idle state_update, in order.
	StopReasons []string `json:"stopReasons"`
	// Requests counts the agent's requests by method.
	Requests map[string]int `json:"requests"`
	// PermissionAnswers lists the selected optionId, or "cancelled", per request.
	PermissionAnswers []string `json:"permissionAnswers"`
	Closed            bool     `json:"closed"`
}

// Run starts agentArgv (any command: put a recorder in front of the agent to
// record the conversation), runs the script over its stdin/stdout, closes
// its stdin and waits for it to exit.
func Run(ctx context.Context, agentArgv []string, opts Options) (Summary, error) {
	if len(agentArgv) == 0 {
		return Summary{}, errors.New("no agent command")
	}
	cmd := exec.CommandContext(ctx, agentArgv[0], agentArgv[1:]...)
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Stderr = opts.Stderr
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return Summary{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Summary{}, err
	}
	if err := cmd.Start(); err != nil {
		return Summary{}, fmt.Errorf("start agent: %w", err)
	}
	sum, runErr := RunConn(ctx, stdout, stdin, opts)
	waitErr := cmd.Wait()
	if runErr != nil {
		return sum, runErr
	}
	if waitErr != nil {
		return sum, fmt.Errorf("agent command: %w", waitErr)
	}
	return sum, nil
}

// RunConn runs the script against an agent that reads w and writes r. When
// the script is done it closes w (if it is an io.Closer) and waits, up to
// Options.DrainTimeout, for r to end, so the whole conversation has been read.
func RunConn(ctx context.Context, r io.Reader, w io.Writer, opts Options) (Summary, error) {
	cl := &client{
		opts: opts,
		sum: Summary{
			Updates:  map[string]int{},
			Requests: map[string]int{},
		},
	}
	// Inline: notifications are counted in the order they came; the
	// agent's requests are answered from goroutines of their own (handle).
	// A line that is not JSON-RPC is not answered: the client only reads.
	cl.conn = jsonrpc.New(w, jsonrpc.Options{Handler: cl.handle, IgnoreMalformed: true})
	readDone := make(chan error, 1)
	go func() {
		// Not ctx: the agent's output is read to its end, as the drain
		// below waits for.
		readDone <- cl.conn.Serve(context.Background(), r)
	}()

	err := cl.script(ctx)
	cl.waitHandlers(ctx)

	if c, ok := w.(io.Closer); ok {
		_ = c.Close()
		drain := opts.DrainTimeout
		if drain <= 0 {
			drain = 5 * time.Second
		}
		timer := time.NewTimer(drain)
		select {
		case rerr := <-readDone:
			if err == nil && rerr != nil {
				err = rerr
			}
		case <-timer.C:
			if err == nil {
				err = errors.New("agent output did not end after its input was closed")
			}
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
		}
		timer.Stop()
	}
	return cl.summary(), err
}

type client struct {
	opts Options
	conn *jsonrpc.Conn

	mu       sync.Mutex
	handlers []chan struct{} // closed when the answer to an agent request is written
	sum      Summary
	idle     chan string // set while waiting for the end of a turn
	session  string
}

func (cl *client) summary() Summary {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	s := cl.sum
	s.Updates = make(map[string]int, len(cl.sum.Updates))
	for k, v := range cl.sum.Updates {
		s.Updates[k] = v
	}
	s.Requests = make(map[string]int, len(cl.sum.Requests))
	for k, v := range cl.sum.Requests {
		s.Requests[k] = v
	}
	s.PromptMessageIDs = append([]string(nil), cl.sum.PromptMessageIDs...)
	s.StopReasons = append([]string(nil), cl.sum.StopReasons...)
	s.PermissionAnswers = append([]string(nil), cl.sum.PermissionAnswers...)
	return s
}

func (cl *client) script(ctx context.Context) error {
	v1 := cl.opts.ProtocolVersion == 1
	info := Implementation{Name: Name, Title: "acptap example client", Version: Version}
	var init initializeResponse
	var req any = initializeRequest{ProtocolVersion: ProtocolVersion, Info: info}
	want := ProtocolVersion
	if v1 {
		req, want = v1InitializeRequest{ProtocolVersion: 1, ClientInfo: info}, 1
	}
	if err := cl.conn.Call(ctx, "initialize", req, &init); err != nil {
		return err
	}
	if v1 {
		init.Info = init.AgentInfo
	}
	cl.mu.Lock()
	cl.sum.ProtocolVersion, cl.sum.AgentInfo = init.ProtocolVersion, init.Info
	cl.mu.Unlock()
	if init.ProtocolVersion != want {
		return fmt.Errorf("agent answered protocolVersion %d, want %d", init.ProtocolVersion, want)
	}

	cwd := cl.opts.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return err
	}
	servers := cl.opts.MCPServers
	if servers == nil {
		servers = DefaultMCPServers()
	}
	var ns newSessionResponse
	if err := cl.conn.Call(ctx, "session/new", newSessionRequest{
		Cwd: cwd, AdditionalDirectories: cl.opts.AdditionalDirectories, MCPServers: servers,
	}, &ns); err != nil {
		return err
	}
	cl.mu.Lock()
	cl.sum.SessionID, cl.session = ns.SessionID, ns.SessionID
	cl.mu.Unlock()

	prompts := cl.opts.Prompts
	if len(prompts) == 0 {
		prompts = DefaultPrompts
	}
	for _, p := range prompts {
		// The prompt response only means "inserted"; the turn is over at the
		// next idle state_update with a stopReason. Either may come first.
		if v1 {
			// ACP v1: the response ends the turn and says why.
			var pr v1PromptResponse
			if err := cl.conn.Call(ctx, "session/prompt", promptRequest{
				SessionID: ns.SessionID, Prompt: []textBlock{{Type: "text", Text: p}},
			}, &pr); err != nil {
				return err
			}
			cl.mu.Lock()
			cl.sum.StopReasons = append(cl.sum.StopReasons, pr.StopReason)
			cl.mu.Unlock()
			continue
		}
		idle := make(chan string, 1)
		cl.mu.Lock()
		cl.idle = idle
		cl.mu.Unlock()
		var pr promptResponse
		if err := cl.conn.Call(ctx, "session/prompt", promptRequest{
			SessionID: ns.SessionID, Prompt: []textBlock{{Type: "text", Text: p}},
		}, &pr); err != nil {
			return err
		}
		cl.mu.Lock()
		cl.sum.PromptMessageIDs = append(cl.sum.PromptMessageIDs, pr.MessageID)
		cl.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the end of the turn: %w", ctx.Err())
		}
	}

	if !cl.opts.SkipClose {
		cl.waitHandlers(ctx) // answer everything before closing the session
		if err := cl.conn.Call(ctx, "session/close", sessionRequest{SessionID: ns.SessionID}, nil); err != nil {
			return err
		}
		cl.mu.Lock()
		cl.sum.Closed = true
		cl.mu.Unlock()
	}
	return nil
}

// waitHandlers waits until the answers to the agent's requests are written,
// or ctx ends.
func (cl *client) waitHandlers(ctx context.Context) {
	cl.mu.Lock()
	pending := cl.handlers
	cl.handlers = nil
	cl.mu.Unlock()
	for _, h := range pending {
		select {
		case <-h:
		case <-ctx.Done():
			return
		}
	}
}

// handle runs on the reading goroutine. A request is answered from its
// own goroutine, so reading never waits on a write to an agent that is
// busy writing too; it is registered first, so waitHandlers sees it.
func (cl *client) handle(_ context.Context, req *jsonrpc.Request) (any, error) {
	if req.Notification() {
		cl.handleNotification(req.Method, req.Params)
		return nil, nil
	}
	handled := make(chan struct{})
	cl.mu.Lock()
	cl.sum.Requests[req.Method]++
	cl.handlers = append(cl.handlers, handled)
	cl.mu.Unlock()
	go func() {
		defer close(handled)
		result, rerr := cl.handleRequest(req.Method, req.Params)
		if rerr != nil {
			_ = cl.conn.ReplyError(req.ID, rerr)
		} else {
			_ = cl.conn.Reply(req.ID, result)
		}
	}()
	return nil, jsonrpc.ErrReplyLater
}

func (cl *client) handleNotification(method string, params json.RawMessage) {
	if method != "session/update" {
		return
	}
	var n sessionNotification
	if json.Unmarshal(params, &n) != nil {
		return
	}
	var h updateHead
	if json.Unmarshal(n.Update, &h) != nil || h.SessionUpdate == "" {
		return
	}
	cl.mu.Lock()
	cl.sum.Updates[h.SessionUpdate]++
	cl.sum.TotalUpdates++
	var state, stop string
	if h.SessionUpdate == "state_update" && json.Unmarshal(h.State, &state) == nil && state == "idle" &&
		json.Unmarshal(h.StopReason, &stop) == nil && stop != "" {
		cl.sum.StopReasons = append(cl.sum.StopReasons, stop)
		if cl.idle != nil && n.SessionID == cl.session {
			cl.idle <- stop
			cl.idle = nil
		}
	}
	cl.mu.Unlock()
	if cl.opts.OnUpdate != nil {
		cl.opts.OnUpdate(n.SessionID, n.Update)
	}
}

func (cl *client) handleRequest(method string, params json.RawMessage) (any, *RPCError) {
	switch method {
	case "session/request_permission":
		var p permissionRequest
		if err := json.Unmarshal(params, &p); err != nil || len(p.Options) == 0 {
			return nil, &RPCError{Code: -32602, Message: "Invalid params"}
		}
		out := permissionOutcome{Outcome: "cancelled"}
		if cl.opts.Permission != "cancel" {
			kind := cl.opts.Permission
			if kind == "" {
				kind = "allow_once"
			}
			out = permissionOutcome{Outcome: "selected", OptionID: p.Options[0].OptionID}
			for _, o := range p.Options {
				if o.Kind == kind {
					out.OptionID = o.OptionID
					break
				}
			}
		}
		answer := out.OptionID
		if out.Outcome == "cancelled" {
			answer = "cancelled"
		}
		cl.mu.Lock()
		cl.sum.PermissionAnswers = append(cl.sum.PermissionAnswers, answer)
		cl.mu.Unlock()
		return permissionResponse{Outcome: out}, nil
	case "elicitation/create":
		var p elicitationRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &RPCError{Code: -32602, Message: "Invalid params"}
		}
		action := cl.opts.Elicitation
		if action == "" {
			action = "accept"
		}
		res := elicitationResponse{Action: action}
		if action == "accept" && p.Mode == "form" && p.RequestedSchema != nil {
			res.Content = formContent(p.RequestedSchema.Properties)
		}
		return res, nil
	default:
		return nil, &RPCError{Code: -32601, Message: "Method not found"}
	}
}

// formContent fills a form: the first choice of enums, a sample text, the
// minimum (or 1) for numbers, true for booleans.
func formContent(props map[string]elicitationProperty) map[string]any {
	out := map[string]any{}
	for name, p := range props {
		switch p.Type {
		case "string":
			switch {
			case len(p.Enum) > 0:
				out[name] = p.Enum[0]
			case len(p.OneOf) > 0:
				out[name] = p.OneOf[0].Const
			default:
				out[name] = "Fix the greeting (acptap example)"
			}
		case "integer", "number":
			if p.Minimum != nil {
				out[name] = *p.Minimum
			} else {
				out[name] = 1
			}
		case "boolean":
			out[name] = true
		case "array":
			if p.Items != nil && len(p.Items.Enum) > 0 {
				out[name] = []string{p.Items.Enum[0]}
			} else if p.Items != nil && len(p.Items.AnyOf) > 0 {
				out[name] = []string{p.Items.AnyOf[0].Const}
			} else {
				out[name] = []string{}
			}
		}
	}
	return out
}
