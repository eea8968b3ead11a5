package pipeline

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/acptap/acptap/sdk"
)

// maxDetectLines bounds how long the router waits for initialize before it
// falls back to the default revision.
const maxDetectLines = 64

// revisionDetector learns the protocol revision from the initialize
// exchange: the agent's answer (the negotiated version) wins; an error
// answer falls back to the client's request.
type revisionDetector struct {
	schemaRevision string
	// agent is the schema revision configured for this agent command
	// (config agents.<rule>.schema_revision), for a protocol-2 connection
	// whose initialize exchange shows no evidence of a draft.
	agent, agentRule string
	fallback         string
	reqID            string
	reqVersion       int
	lines            int
	done             bool
	revision         string
	why              string
}

func newRevisionDetector(schemaRevision, fallback string) *revisionDetector {
	return &revisionDetector{schemaRevision: schemaRevision, fallback: fallback}
}

// Revision names a protocol version as a plugin input.
func Revision(protocolVersion int, schemaRevision string) string {
	if protocolVersion >= 2 && schemaRevision != "" {
		return "acp/" + strconv.Itoa(protocolVersion) + "@" + schemaRevision
	}
	return "acp/" + strconv.Itoa(protocolVersion)
}

type initMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params *struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
	} `json:"params"`
	Result *struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	} `json:"result"`
	Error json.RawMessage `json:"error"`
}

// draftEvidence are the members of an ACP v2 initialize response's
// capabilities that only a newer v2 draft defines, and that draft: all
// drafts say protocolVersion 2, so the capabilities are what tells them
// apart. The first present (not null) decides.
var draftEvidence = []struct {
	path     []string
	revision string
}{
	{[]string{"session", "title"}, "2.0.0-alpha.13"},
	{[]string{"session", "archive"}, "2.0.0-alpha.13"},
	{[]string{"session", "status"}, "2.0.0-alpha.13"},
	{[]string{"auth", "status"}, "2.0.0-alpha.13"},
}

// evidence returns the draft the capabilities show, and the member that
// shows it.
func evidence(caps json.RawMessage) (revision, member string) {
	for _, e := range draftEvidence {
		v := caps
		for _, k := range e.path {
			var m map[string]json.RawMessage
			if json.Unmarshal(v, &m) != nil {
				v = nil
				break
			}
			v = m[k]
		}
		if len(v) > 0 && string(v) != "null" {
			return e.revision, "capabilities." + strings.Join(e.path, ".")
		}
	}
	return "", ""
}

// v2Revision is the input revision of a protocol-2 connection: the draft
// the initialize response's capabilities show, else the agent's configured
// draft, else the default schema revision; and why.
func (d *revisionDetector) v2Revision(caps json.RawMessage, from string) (string, string) {
	if rev, member := evidence(caps); rev != "" {
		return Revision(2, rev), from + ": " + member + " is only in ACP v2 draft " + rev
	}
	if d.agent != "" {
		return Revision(2, d.agent), from + " shows no newer draft; agents." + d.agentRule + ".schema_revision"
	}
	return Revision(2, d.schemaRevision), from + " shows no newer draft; the default schema_revision"
}

// observe looks at one line; it reports true once the revision is known.
func (d *revisionDetector) observe(dir sdk.Direction, line []byte) bool {
	if d.done {
		return true
	}
	d.lines++
	if d.lines > maxDetectLines {
		return d.finish(d.fallback, "no initialize exchange in the first lines")
	}
	if dir == sdk.C2A && bytes.Contains(line, []byte(`"initialize"`)) {
		var m initMsg
		if json.Unmarshal(line, &m) == nil && m.Method == "initialize" && m.Params != nil {
			d.reqID = string(m.ID)
			d.reqVersion, _ = strconv.Atoi(string(m.Params.ProtocolVersion))
		}
		return false
	}
	if dir == sdk.A2C && d.reqID != "" && bytes.Contains(line, []byte(`"id"`)) {
		var m initMsg
		if json.Unmarshal(line, &m) != nil || string(m.ID) != d.reqID || m.Method != "" {
			return false
		}
		if m.Result != nil {
			if v, err := strconv.Atoi(string(m.Result.ProtocolVersion)); err == nil && v > 0 {
				if v == 2 {
					return d.finish(d.v2Revision(m.Result.Capabilities, "initialize response"))
				}
				return d.finish(Revision(v, d.schemaRevision), "initialize response")
			}
		}
		if d.reqVersion == 2 {
			return d.finish(d.v2Revision(nil, "initialize request (the response gave no version)"))
		}
		if d.reqVersion > 0 {
			return d.finish(Revision(d.reqVersion, d.schemaRevision), "initialize request (the response gave no version)")
		}
		return d.finish(d.fallback, "initialize exchange gave no protocol version")
	}
	return false
}

func (d *revisionDetector) finish(rev, why string) bool {
	d.done, d.revision, d.why = true, rev, why
	return true
}

// end is called at end of input: whatever was learned decides.
func (d *revisionDetector) end() {
	if d.done {
		return
	}
	if d.reqVersion == 2 {
		d.finish(d.v2Revision(nil, "initialize request (no response seen)"))
		return
	}
	if d.reqVersion > 0 {
		d.finish(Revision(d.reqVersion, d.schemaRevision), "initialize request (no response seen)")
		return
	}
	d.finish(d.fallback, "no initialize exchange seen")
}
