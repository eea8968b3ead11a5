package aep

import (
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

func asObj(v any) obj {
	o, _ := v.(obj)
	return o
}

func isToolTerminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// toolName is a tool's AEP name: the programmatic name (v2), else the
// title, else the kind.
func toolName(u obj, fallback string) string {
	for _, k := range []string{"name", "title", "kind"} {
		if s, ok := str(u, k); ok && s != "" {
			return s
		}
	}
	if fallback != "" {
		return fallback
	}
	return "unknown"
}

// toolUpdate maps tool_call (v1) and tool_call_update. The first sighting
// of a toolCallId is tool.requested (v1: the tool_call update; v2: any
// update, ACP v2 being upsert-only), followed at once by its terminal when
// it arrives already finished. completed → tool.completed, failed →
// tool.failed, cancelled → tool.failed{cancelled}; anything else, and
// anything after the terminal, is x.acp.tool_call.update at debug.
func (c *conn) toolUpdate(f *sdk.Frame, st *sess, kind string, u obj) []*draft {
	id, _ := str(u, "toolCallId")
	if id == "" {
		c.diag(sdk.SeverityWarning, st.id, kind+" without a toolCallId string", "", f.Seq)
		return nil
	}
	status, _ := str(u, "status")
	_, done := st.toolsDone[id]
	t := st.tools[id]
	firstSight := t == nil && !done && (kind == "tool_call" || c.v2)
	if t == nil && !done {
		t = &tool{name: toolName(u, ""), at: f.At}
		st.tools[id] = t
	}
	var ds []*draft
	if firstSight {
		ds = append(ds, c.toolRequested(st, id, t, u))
		if !isToolTerminal(status) {
			return ds
		}
	}
	if done || !isToolTerminal(status) {
		d := c.newDraft(st, "x.acp.tool_call.update", "debug")
		d.subject, d.data = id, obj{}
		if status != "" {
			d.data["status"] = status
		}
		return append(ds, d)
	}
	st.finishTool(id)
	typ, sev := "tool.completed", "info"
	if status != "completed" {
		typ, sev = "tool.failed", "error"
	}
	d := c.newDraft(st, typ, sev)
	d.subject, d.causeKey = id, "tool:"+id
	d.release = []string{"tool:" + id} // one terminal per tool call
	d.data = obj{"tool": toolRef(t.name, id)}
	if _, known := st.ids["tool:"+id]; known || firstSight {
		if ms := f.At.Sub(t.at).Milliseconds(); ms >= 0 {
			d.data["duration_ms"] = ms
		}
	}
	switch status {
	case "completed":
		c.toolContent(d, u, "rawOutput", "result_digest", "result_redacted", "result", true)
	case "failed":
		d.data["error"] = c.toolError(d.level, "tool_error", u["rawOutput"])
	case "cancelled":
		d.data["error"] = obj{"type": "cancelled"}
	}
	return append(ds, d)
}

func toolRef(name, id string) obj {
	ref := obj{"name": name}
	if id != "" {
		ref["call_id"] = id
	}
	return ref
}

// toolRequested is tool.requested: name and call id, kind, the digest of
// rawInput, and the input itself from redacted up when it is an object.
func (c *conn) toolRequested(st *sess, id string, t *tool, u obj) *draft {
	d := c.newDraft(st, "tool.requested", "info")
	d.subject, d.setKey = id, "tool:"+id
	d.data = obj{"tool": toolRef(t.name, id)}
	if k, ok := str(u, "kind"); ok && k != "" {
		d.data["kind"] = k
	}
	c.toolContent(d, u, "rawInput", "args_digest", "args_redacted", "args", false)
	return d
}

// toolContent adds a raw value's digest (of the original, before
// redaction), its redacted form and its verbatim form as the level allows.
// args must be objects; results may be objects or strings.
func (c *conn) toolContent(d *draft, u obj, from, digest, redacted, full string, strOK bool) {
	v, ok := u[from]
	if !ok || v == nil {
		return
	}
	if dg, err := aep.Digest(v); err == nil {
		d.data[digest] = dg
	}
	_, isObj := v.(obj)
	_, isStr := v.(string)
	if !isObj && !(strOK && isStr) {
		return
	}
	switch d.level {
	case aep.Redacted:
		d.data[redacted] = c.s.redactor.Value(v)
	case aep.Full:
		d.data[full] = v
	}
}

// toolError is a failed tool's error: the type, and from redacted up the
// message when rawOutput is text.
func (c *conn) toolError(level aep.Level, typ string, raw any) obj {
	e := obj{"type": typ}
	if s, ok := raw.(string); ok && s != "" {
		switch level {
		case aep.Redacted:
			e["message"] = c.s.redactor.Text(s)
		case aep.Full:
			e["message"] = s
		}
	}
	return e
}
