package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/jsonrpc"
	ireplay "github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// The agent's name and title in the initialize answer.
const (
	agentName  = "acptap-replay"
	agentTitle = "acptap: recorded sessions (read-only)"
)

// JSON-RPC error codes of the read-only agent.
const (
	codeMethodNotFound = jsonrpc.CodeMethodNotFound
	codeInvalidParams  = jsonrpc.CodeInvalidParams
	codeInternal       = jsonrpc.CodeInternalError
	codeNotFound       = -32002 // ACP: resource not found
	// codeRecording refuses what would change a recording (prompts, new
	// sessions, configuration): a server error of JSON-RPC's
	// implementation-defined range.
	codeRecording = -32099
)

// rpcError is a JSON-RPC error object.
type rpcError = jsonrpc.Error

// Replayer replays the stream at path to target ("acp/2@…", "acp/1")
// through a replay plugin, and returns the loss report.
type Replayer func(ctx context.Context, target, path string, emit func(sdk.Output) error) ([]byte, error)

// ServerOptions configure a Server.
type ServerOptions struct {
	Store   *store.Store
	Logger  hclog.Logger
	Version string // acptap's, in the initialize answer
	// TargetV2 is the ACP v2 revision replayed to v2 clients ("acp/2@…").
	TargetV2 string
	Replay   Replayer
	Out      io.Writer
}

// Server is the read-only agent of one connection.
type Server struct {
	st       *store.Store
	logger   hclog.Logger
	version  string
	targetV2 string
	replayer Replayer
	conn     *jsonrpc.Conn
	// v1 is set when the client's initialize asked for protocolVersion 1;
	// client are the capabilities it sent.
	v1     bool
	client clientCaps
}

// NewServer returns a server writing to o.Out.
func NewServer(o ServerOptions) *Server {
	logger := o.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &Server{st: o.Store, logger: logger, version: o.Version, targetV2: o.TargetV2, replayer: o.Replay}
	// Inline: one request at a time, the replayed updates written before
	// the response that ends them, a batch answered by a batch; the
	// output is written once per input line.
	s.conn = jsonrpc.New(o.Out, jsonrpc.Options{Handler: s.handle, HoldWrites: true,
		OnDrop: func(why string, msg []byte) { logger.Debug("input not handled", "why", why, "bytes", len(msg)) }})
	return s
}

// Run reads JSON-RPC lines from in until it ends, answering each. It fails
// when the output could not be written.
func (s *Server) Run(in io.Reader) error {
	if err := s.conn.Serve(context.Background(), in); err != nil {
		return err
	}
	return s.conn.Err()
}

// handle answers one request; notifications (session/cancel,
// $/cancel_request, …) have nothing to do in a recording.
func (s *Server) handle(_ context.Context, req *jsonrpc.Request) (any, error) {
	if req.Notification() {
		s.logger.Debug("notification", "method", req.Method)
		return nil, nil
	}
	result, rerr := s.call(req.Method, req.Params)
	if rerr != nil {
		s.logger.Info("request refused", "method", req.Method, "code", rerr.Code, "message", rerr.Message)
		return nil, rerr
	}
	return result, nil
}

func (s *Server) call(method string, params json.RawMessage) (any, *rpcError) {
	if s.v1 && method != "initialize" {
		return s.callV1(method, params)
	}
	switch method {
	case "initialize":
		if s.negotiate(params) == 1 {
			return s.initializeV1(), nil
		}
		return map[string]any{
			"protocolVersion": 2,
			"info":            map[string]any{"name": agentName, "title": agentTitle, "version": s.version},
			"capabilities":    map[string]any{"session": map[string]any{}},
			"authMethods":     []any{},
		}, nil
	case "session/list":
		return s.list(params)
	case "session/resume":
		return s.resume(params)
	case "session/close":
		return map[string]any{}, nil
	case "session/prompt":
		return nil, refusePrompt(params)
	case "session/new", "session/fork", "session/set_config_option", "session/delete":
		return nil, refuse(method, "session/resume")
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "Method not found: " + method}
}

// refusePrompt refuses a prompt: a recording is read-only.
func refusePrompt(params json.RawMessage) *rpcError {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(params, &p)
	return &rpcError{Code: codeRecording,
		Message: fmt.Sprintf("session %s is a recording replayed by acptap: it is read-only and cannot take prompts", p.SessionID),
		Data:    map[string]any{"reason": "recording", "sessionId": p.SessionID}}
}

// refuse refuses a method that would change a session; open names the
// method that opens a recording.
func refuse(method, open string) *rpcError {
	return &rpcError{Code: codeRecording,
		Message: "acptap replay --serve only opens recorded sessions, read-only: use session/list and " + open + " (" + method + " is refused)",
		Data:    map[string]any{"reason": "recording"}}
}

// list answers session/list with the stored sessions (cwd filter honoured;
// no pagination).
func (s *Server) list(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Cwd *string `json:"cwd"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "Invalid params"}
	}
	ids, err := s.st.Sessions()
	if err != nil {
		return nil, &rpcError{Code: codeInternal, Message: "Internal error: " + err.Error()}
	}
	sessions := []any{}
	for _, id := range ids {
		sum, err := summarize(s.st.StreamPath(id))
		if err != nil {
			s.logger.Warn("session/list: stream skipped", "session", id, "error", err)
			continue
		}
		if p.Cwd != nil && *p.Cwd != sum.cwd {
			continue
		}
		info := map[string]any{"sessionId": id, "cwd": sum.cwd}
		if len(sum.dirs) > 0 {
			info["additionalDirectories"] = sum.dirs
		}
		if sum.title != "" {
			info["title"] = sum.title
		}
		if sum.updatedAt != "" {
			info["updatedAt"] = sum.updatedAt
		}
		info["_meta"] = map[string]any{"org.acptap/recording": true}
		sessions = append(sessions, info)
	}
	return map[string]any{"sessions": sessions}, nil
}

// resume answers session/resume: with replayFrom {type: "start"} it replays
// the stream first; then it sends the current state (always idle: nothing
// runs in a recording) and answers with the recorded configuration.
func (s *Server) resume(params json.RawMessage) (any, *rpcError) {
	var p struct {
		SessionID  string          `json:"sessionId"`
		ReplayFrom json.RawMessage `json:"replayFrom"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		return nil, &rpcError{Code: codeInvalidParams, Message: "Invalid params: session/resume needs a sessionId"}
	}
	path, sum, rerr := s.recorded(p.SessionID)
	if rerr != nil {
		return nil, rerr
	}
	replayed := false
	var report json.RawMessage
	if len(p.ReplayFrom) > 0 && string(p.ReplayFrom) != "null" {
		var rf struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(p.ReplayFrom, &rf) != nil || rf.Type != "start" {
			return nil, &rpcError{Code: codeInvalidParams, Message: `Invalid params: only replayFrom {"type": "start"} is supported`}
		}
		rep, lastIdle, err := s.replaySession(path)
		if err != nil {
			s.logger.Error("replay failed", "session", p.SessionID, "error", err)
			return nil, &rpcError{Code: codeInternal, Message: "Internal error: replay failed: " + err.Error()}
		}
		report, replayed = rep, lastIdle
	}
	if !replayed {
		// The current state: a recording is never running.
		state, _ := asr.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
			"params": map[string]any{"sessionId": p.SessionID, "update": map[string]any{"sessionUpdate": "state_update", "state": "idle"}}})
		if err := s.conn.SendRaw(state); err != nil {
			return nil, &rpcError{Code: codeInternal, Message: "Internal error: " + err.Error()}
		}
	}
	result := map[string]any{}
	m := map[string]any{"recording": true}
	if report != nil {
		m["lossReport"] = report
	}
	result["_meta"] = map[string]any{"org.acptap/replay": m}
	if len(sum.config) > 0 {
		withConfig := map[string]any{"_meta": result["_meta"], "configOptions": sum.config}
		// A recording of ACP v1 keeps v1-shaped options.
		if validResult(acpschema.V2, "session/resume", withConfig) {
			result = withConfig
		} else {
			s.logger.Info("session/resume: the recorded config options are not valid ACP v2; not sent", "session", p.SessionID)
		}
	}
	return result, nil
}

// recorded finds a session's stream in the store and summarizes it, or
// says why it cannot be opened.
func (s *Server) recorded(id string) (string, sessionSummary, *rpcError) {
	path := s.st.StreamPath(id)
	if _, err := os.Stat(path); err != nil {
		return "", sessionSummary{}, &rpcError{Code: codeNotFound, Message: "Resource not found: no recorded session " + id,
			Data: map[string]any{"sessionId": id}}
	}
	sum, err := summarize(path)
	if err != nil {
		return "", sessionSummary{}, &rpcError{Code: codeInternal, Message: "Internal error: " + err.Error()}
	}
	return path, sum, nil
}

// replaySession replays a stream through the plugin onto stdout. lastIdle
// reports whether the last update sent was an idle state_update.
func (s *Server) replaySession(path string) (json.RawMessage, bool, error) {
	lastIdle := false
	report, err := s.replayer(context.Background(), s.targetV2, path, func(o sdk.Output) error {
		switch o.Kind {
		case sdk.ACPFrame:
			var n struct {
				Params struct {
					Update struct {
						SessionUpdate string `json:"sessionUpdate"`
						State         string `json:"state"`
					} `json:"update"`
				} `json:"params"`
			}
			_ = json.Unmarshal(o.JSON, &n)
			u := n.Params.Update
			lastIdle = u.SessionUpdate == "state_update" && u.State == "idle"
			return s.conn.SendRaw(o.JSON)
		case sdk.Diagnostic:
			s.logger.Warn("replay: "+o.Summary, "detail", o.Detail, "session", o.Session)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	s.logger.Info("replayed", "stream", path, "report", string(bytes.TrimSpace(report)))
	return json.RawMessage(bytes.TrimSpace(report)), lastIdle, nil
}

// sessionSummary is what session/list and session/resume need of a stream.
type sessionSummary struct {
	cwd       string
	dirs      []string
	title     string
	updatedAt string
	config    json.RawMessage
}

// summarize reads a stream's header, its latest title and configuration,
// and the time of its last record.
func summarize(path string) (sessionSummary, error) {
	var sum sessionSummary
	f, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	rd := asr.NewReader(f)
	first, err := rd.Next()
	if err != nil {
		return sum, fmt.Errorf("%s: %w", path, asr.ErrNotHeader)
	}
	h, err := asr.ReadHeader(first)
	if err != nil {
		return sum, err
	}
	sum.cwd = "/"
	if h.Workspace != nil {
		for i, r := range h.Workspace.Roots {
			switch {
			case r.Path == nil:
			case i == 0:
				sum.cwd = *r.Path
			default:
				sum.dirs = append(sum.dirs, *r.Path)
			}
		}
	}
	sum.updatedAt = h.CreatedAt
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sum, err
		}
		var r struct {
			Type       string          `json:"type"`
			TS         string          `json:"ts"`
			ObservedAt string          `json:"observedAt"`
			Title      *string         `json:"title"`
			Options    json.RawMessage `json:"options"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		if t := r.TS; t != "" && t > sum.updatedAt {
			sum.updatedAt = t
		} else if t := r.ObservedAt; t != "" && t > sum.updatedAt {
			sum.updatedAt = t
		}
		switch {
		case r.Type == asr.TypeSessionInfo:
			sum.title = ""
			if r.Title != nil {
				sum.title = *r.Title
			}
		case r.Type == asr.TypeConfigChange && len(r.Options) > 0 && strings.HasPrefix(string(r.Options), "["):
			sum.config = r.Options
		}
	}
	return sum, nil
}

// Serve is `acptap replay --serve`: the read-only agent over the store on
// in and out, with the replay plugins started out of process when a
// session is first opened, one per target: ACP v2 for a v2 client
// (pluginName, or the one configured for the v2 revision), ACP v1 for a v1
// client (the one configured for "acp/1"). They are stopped when in ends.
func (ps *Plugins) Serve(st *store.Store, version, pluginName string, in io.Reader, out io.Writer) error {
	plugins := map[string]*Plugin{}
	defer func() {
		for _, p := range plugins {
			p.Kill()
		}
	}()
	replayer := func(ctx context.Context, target, path string, emit func(sdk.Output) error) ([]byte, error) {
		p := plugins[target]
		if p == nil {
			var err error
			if strings.HasPrefix(target, ireplay.TargetV1) {
				// pluginName names the v2 replayer; v1's is configured.
				p, err = ps.Launch(ctx, "", ProtoV1)
			} else {
				p, err = ps.Launch(ctx, pluginName, ProtoV2)
			}
			if err != nil {
				return nil, err
			}
			plugins[target] = p
		}
		return p.ReplayFile(ctx, path, emit)
	}
	logger := ps.logger()
	s := NewServer(ServerOptions{Store: st, Logger: logger.Named("serve"), Version: version,
		TargetV2: "acp/2@" + ps.SchemaRevision, Replay: replayer, Out: out})
	logger.Info("serving recorded sessions read-only", "store", st.Root())
	return s.Run(in)
}
