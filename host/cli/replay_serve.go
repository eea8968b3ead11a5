package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// JSON-RPC error codes of the read-only agent.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeNotFound       = -32002 // ACP: resource not found
	// codeRecording refuses what would change a recording (prompts, new
	// sessions, configuration): a server error of JSON-RPC's
	// implementation-defined range.
	codeRecording = -32099
)

// runServe is `acptap replay --serve STORE`: a read-only ACP v2 agent on
// stdin/stdout. The editor lists the stored sessions and resumes one with
// replayFrom {type: "start"}; acptap replays it through the replay plugin
// (out of process) and then sends the current state. Nothing is executed;
// prompts and anything that would change a session are refused.
func runServe(env *Env, c *common, pluginName string) int {
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap replay --serve: %s\n", oneLine(err))
		return ExitFailure
	}
	if fi, err := os.Stat(cfg.Store); err != nil || !fi.IsDir() {
		fmt.Fprintf(env.Stderr, "acptap replay --serve: no store at %s\n", cfg.Store)
		return ExitFailure
	}
	st, err := store.Open(cfg.Store)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap replay --serve: %s\n", oneLine(err))
		return ExitFailure
	}
	logger, closer, err := newCommandLogger(cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap replay --serve: %s\n", oneLine(err))
		return ExitFailure
	}
	defer closeQuietly(closer)
	s := &server{env: env, cfg: cfg, st: st, logger: logger.Named("serve"), plugin: pluginName,
		out: bufio.NewWriterSize(env.Stdout, 64<<10)}
	defer s.close()
	logger.Info("serving recorded sessions read-only", "store", st.Root())
	if err := s.run(env.Stdin); err != nil {
		logger.Error("serve", "error", err)
		fmt.Fprintf(env.Stderr, "acptap replay --serve: %s\n", oneLine(err))
		return ExitFailure
	}
	return ExitOK
}

type server struct {
	env    *Env
	cfg    *config.Config
	st     *store.Store
	logger hclog.Logger
	plugin string
	rp     *replayPlugin
	out    *bufio.Writer
}

func (s *server) close() {
	if s.rp != nil {
		s.rp.inst.Kill()
	}
}

// run reads JSON-RPC lines until stdin ends.
func (s *server) run(in io.Reader) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if werr := s.line(t); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// line handles one line: a message, or a batch (answered by a batch).
func (s *server) line(b []byte) error {
	if b[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(b, &elems); err != nil || len(elems) == 0 {
			return s.write(rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: codeParse, Message: "Parse error"}})
		}
		var resps []rpcResponse
		for _, e := range elems {
			if r := s.message(e); r != nil {
				resps = append(resps, *r)
			}
		}
		if len(resps) == 0 {
			return s.flush()
		}
		return s.write(resps)
	}
	if r := s.message(b); r != nil {
		return s.write(*r)
	}
	return s.flush()
}

// message handles one JSON-RPC message and returns its response (nil for
// notifications and for responses from the client).
func (s *server) message(b []byte) *rpcResponse {
	var req rpcRequest
	if err := json.Unmarshal(b, &req); err != nil {
		if !json.Valid(b) {
			return &rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: codeParse, Message: "Parse error"}}
		}
		return &rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: codeInvalidRequest, Message: "Invalid Request"}}
	}
	if req.Method == nil {
		return nil // a response to a request we never send, or junk without an id
	}
	method := *req.Method
	if len(req.ID) == 0 {
		s.logger.Debug("notification", "method", method)
		return nil // session/cancel, $/cancel_request, … : nothing to do in a recording
	}
	resp := &rpcResponse{JSONRPC: "2.0", ID: req.ID}
	result, rerr := s.call(method, req.Params)
	if rerr != nil {
		s.logger.Info("request refused", "method", method, "code", rerr.Code, "message", rerr.Message)
		resp.Error = rerr
	} else {
		resp.Result = result
	}
	return resp
}

func (s *server) call(method string, params json.RawMessage) (any, *rpcError) {
	switch method {
	case "initialize":
		return map[string]any{
			"protocolVersion": 2,
			"info":            map[string]any{"name": "acptap-replay", "title": "acptap: recorded sessions (read-only)", "version": version()},
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
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(params, &p)
		return nil, &rpcError{Code: codeRecording,
			Message: fmt.Sprintf("session %s is a recording replayed by acptap: it is read-only and cannot take prompts", p.SessionID),
			Data:    map[string]any{"reason": "recording", "sessionId": p.SessionID}}
	case "session/new", "session/fork", "session/set_config_option", "session/delete":
		return nil, &rpcError{Code: codeRecording,
			Message: "acptap replay --serve only opens recorded sessions, read-only: use session/list and session/resume (" + method + " is refused)",
			Data:    map[string]any{"reason": "recording"}}
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "Method not found: " + method}
}

// list answers session/list with the stored sessions (cwd filter honoured;
// no pagination).
func (s *server) list(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Cwd *string `json:"cwd"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "Invalid params"}
	}
	ids, err := s.st.Sessions()
	if err != nil {
		return nil, &rpcError{Code: -32603, Message: "Internal error: " + err.Error()}
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
func (s *server) resume(params json.RawMessage) (any, *rpcError) {
	var p struct {
		SessionID  string          `json:"sessionId"`
		ReplayFrom json.RawMessage `json:"replayFrom"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		return nil, &rpcError{Code: codeInvalidParams, Message: "Invalid params: session/resume needs a sessionId"}
	}
	path := s.st.StreamPath(p.SessionID)
	if _, err := os.Stat(path); err != nil {
		return nil, &rpcError{Code: codeNotFound, Message: "Resource not found: no recorded session " + p.SessionID,
			Data: map[string]any{"sessionId": p.SessionID}}
	}
	sum, err := summarize(path)
	if err != nil {
		return nil, &rpcError{Code: -32603, Message: "Internal error: " + err.Error()}
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
			return nil, &rpcError{Code: -32603, Message: "Internal error: replay failed: " + err.Error()}
		}
		report, replayed = rep, lastIdle
	}
	if !replayed {
		// The current state: a recording is never running.
		state, _ := asr.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
			"params": map[string]any{"sessionId": p.SessionID, "update": map[string]any{"sessionUpdate": "state_update", "state": "idle"}}})
		if err := s.writeLine(state); err != nil {
			return nil, &rpcError{Code: -32603, Message: "Internal error: " + err.Error()}
		}
	}
	result := map[string]any{}
	if len(sum.config) > 0 {
		result["configOptions"] = sum.config
	}
	m := map[string]any{"recording": true}
	if report != nil {
		m["lossReport"] = report
	}
	result["_meta"] = map[string]any{"org.acptap/replay": m}
	return result, nil
}

// replaySession replays a stream through the plugin onto stdout. lastIdle
// reports whether the last update sent was an idle state_update.
func (s *server) replaySession(path string) (json.RawMessage, bool, error) {
	if s.rp == nil {
		rp, err := launchReplayer(context.Background(), s.env, s.cfg, s.logger, s.plugin)
		if err != nil {
			return nil, false, err
		}
		s.rp = rp
	}
	lastIdle := false
	report, err := s.rp.replayFile(context.Background(), path, func(o sdk.Output) error {
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
			return s.writeLine(o.JSON)
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

func (s *server) write(v any) error {
	b, err := asr.Marshal(v)
	if err != nil {
		return err
	}
	if err := s.writeLine(b); err != nil {
		return err
	}
	return s.flush()
}

func (s *server) writeLine(b []byte) error {
	s.out.Write(b)
	return s.out.WriteByte('\n')
}

func (s *server) flush() error { return s.out.Flush() }

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
