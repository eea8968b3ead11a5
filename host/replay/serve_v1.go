package replay

import (
	"context"
	"encoding/json"

	"github.com/acptap/acptap/internal/acpschema"
	ireplay "github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// clientCaps is what the server needs of a v1 client's capabilities.
type clientCaps struct {
	Session *struct {
		Compaction json.RawMessage `json:"compaction"`
	} `json:"session"`
}

// compaction reports whether the client advertised session.compaction.
func (c clientCaps) compaction() bool {
	return c.Session != nil && len(c.Session.Compaction) > 0 && string(c.Session.Compaction) != "null"
}

// negotiate reads the client's initialize: protocolVersion 1 is answered
// in ACP v1; any other version (2, a later one, none) in ACP v2, the
// latest the server speaks, as ACP's version negotiation says.
func (s *Server) negotiate(params json.RawMessage) int {
	var p struct {
		ProtocolVersion    json.Number `json:"protocolVersion"`
		ClientCapabilities clientCaps  `json:"clientCapabilities"`
	}
	_ = json.Unmarshal(params, &p)
	s.v1 = p.ProtocolVersion == "1"
	if !s.v1 {
		return 2
	}
	s.client = p.ClientCapabilities
	return 1
}

// initializeV1 is the v1 initialize result: loadSession and session/list
// advertised, no authentication.
func (s *Server) initializeV1() any {
	return map[string]any{
		"protocolVersion": 1,
		"agentInfo":       map[string]any{"name": agentName, "title": agentTitle, "version": s.version},
		"agentCapabilities": map[string]any{
			"loadSession":         true,
			"sessionCapabilities": map[string]any{"list": map[string]any{}},
			"promptCapabilities":  map[string]any{"image": false, "audio": false, "embeddedContext": false},
		},
		"authMethods": []any{},
		"_meta":       map[string]any{"org.acptap/replay": map[string]any{"recording": true}},
	}
}

// callV1 answers a v1 client.
func (s *Server) callV1(method string, params json.RawMessage) (any, *rpcError) {
	switch method {
	case "session/list":
		return s.list(params)
	case "session/load":
		return s.loadV1(params)
	case "session/close":
		return map[string]any{}, nil
	case "session/prompt":
		return nil, refusePrompt(params)
	case "session/new", "session/fork", "session/resume", "session/set_mode", "session/set_config_option", "session/delete":
		return nil, refuse(method, "session/load")
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "Method not found: " + method}
}

// loadV1 answers session/load: the session's history as ACP v1 updates
// (the v1 replay, through the replay plugin), before the response, as v1
// specifies; then the recorded configuration and the loss report.
func (s *Server) loadV1(params json.RawMessage) (any, *rpcError) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		return nil, &rpcError{Code: codeInvalidParams, Message: "Invalid params: session/load needs a sessionId"}
	}
	path, sum, rerr := s.recorded(p.SessionID)
	if rerr != nil {
		return nil, rerr
	}
	compactions := 0
	raw, err := s.replayer(context.Background(), ireplay.TargetV1, path, func(o sdk.Output) error {
		switch o.Kind {
		case sdk.ACPFrame:
			if !s.client.compaction() && isCompaction(o.JSON) {
				compactions++
				return nil
			}
			return s.conn.SendRaw(o.JSON)
		case sdk.Diagnostic:
			s.logger.Warn("replay: "+o.Summary, "detail", o.Detail, "session", o.Session)
		}
		return nil
	})
	if err != nil {
		s.logger.Error("replay failed", "session", p.SessionID, "error", err)
		return nil, &rpcError{Code: codeInternal, Message: "Internal error: replay failed: " + err.Error()}
	}
	rep, err := ireplay.ParseLossReport(raw)
	if err != nil {
		return nil, &rpcError{Code: codeInternal, Message: "Internal error: " + err.Error()}
	}
	rep.AddCategory(asr.LossV1Compaction, compactions, "the client did not advertise session.compaction")
	rep.Updates -= compactions
	s.logger.Info("replayed", "stream", path, "target", ireplay.TargetV1, "updates", rep.Updates)
	result := map[string]any{"_meta": map[string]any{"org.acptap/replay": map[string]any{"recording": true, "lossReport": rep}}}
	if len(sum.config) > 0 {
		withConfig := map[string]any{"_meta": result["_meta"], "configOptions": sum.config}
		if validResult(acpschema.V1, "session/load", withConfig) {
			result = withConfig
		} else {
			s.logger.Info("session/load: the recorded config options are not valid ACP v1; not sent", "session", p.SessionID)
		}
	}
	return result, nil
}

// isCompaction reports whether a v1 notification is a compaction update.
func isCompaction(line []byte) bool {
	var n struct {
		Params struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
		} `json:"params"`
	}
	_ = json.Unmarshal(line, &n)
	k := n.Params.Update.SessionUpdate
	return k == "compaction_update" || k == "compaction_summary_chunk"
}

// validResult reports whether result is a valid answer to method in ACP
// version v (the recorded configuration may be in the other version's
// shape).
func validResult(v acpschema.Version, method string, result any) bool {
	c, err := acpschema.NewChecker(v)
	if err != nil {
		return false
	}
	params := map[string]any{"sessionId": "s", "cwd": "/"}
	if v == acpschema.V1 {
		params["mcpServers"] = []any{}
	}
	req, _ := asr.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := asr.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": result})
	if err != nil || c.Check(acpschema.Client, req) != nil {
		return false
	}
	return c.Check(acpschema.Agent, resp) == nil
}
