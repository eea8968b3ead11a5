package pipeline

import (
	"bytes"
	"encoding/json"
	"strconv"

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
	fallback       string
	reqID          string
	reqVersion     int
	lines          int
	done           bool
	revision       string
	why            string
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
	} `json:"result"`
	Error json.RawMessage `json:"error"`
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
				return d.finish(Revision(v, d.schemaRevision), "initialize response")
			}
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
	if d.reqVersion > 0 {
		d.finish(Revision(d.reqVersion, d.schemaRevision), "initialize request (no response seen)")
		return
	}
	d.finish(d.fallback, "no initialize exchange seen")
}
