package acpv1

import (
	"encoding/json"
	"slices"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// downlevel translates the ACP v2 replay's updates into ACP v1 (the
// reverse of translate.go's direction):
//
//	user_message, agent_message, agent_thought  one *_chunk per content block, with the messageId
//	tool_call_update (the whole call)           tool_call: status mapped to v1, v1 diffs from the full texts
//	plan_update (type items)                    plan {entries}
//	compaction_update, session_info_update,
//	usage_update                                the same
//	terminal_update, state_update               not sent (v1 has neither)
//
// Every update is checked against the ACP v1 schema before it is sent.
type downlevel struct {
	emit    func(sdk.Output) error
	check   *acpschema.Checker
	session string
	tally   replay.Tally
	sent    int
	err     error
}

// frame takes one output of the v2 replay.
func (d *downlevel) frame(o sdk.Output) error {
	if d.err != nil {
		return d.err
	}
	if o.Kind != sdk.ACPFrame {
		return d.emit(o)
	}
	var n struct {
		Params struct {
			SessionID string `json:"sessionId"`
			Update    obj    `json:"update"`
		} `json:"params"`
	}
	if err := json.Unmarshal(o.JSON, &n); err != nil || n.Params.Update == nil {
		d.tally.Omit(recordOf(o.FrameSeqs), asr.LossV1Invalid, "a v2 update that does not decode")
		return nil
	}
	d.session = n.Params.SessionID
	u, seqs := n.Params.Update, o.FrameSeqs
	kind, _ := u.str("sessionUpdate")
	switch kind {
	case "user_message", "agent_message", "agent_thought":
		d.message(kind, u, seqs)
	case "tool_call_update":
		d.tool(u, seqs)
	case "plan_update":
		d.plan(u, seqs)
	case "compaction_update", "session_info_update", "usage_update":
		d.send(u, seqs)
	case "terminal_update":
		d.tally.Omit(recordOf(seqs), asr.LossV1Terminals, "a terminal: v1 terminals are created by the client")
	case "state_update":
		state, _ := u.str("state")
		d.tally.Add(asr.LossV1TurnState, 1, "the current state ("+state+")")
	default:
		d.tally.Omit(recordOf(seqs), asr.LossV1Invalid, "a v2 update v1 does not have: "+kind)
	}
	return d.err
}

// recordOf names the record an update was made from (its first).
func recordOf(seqs []uint64) string {
	if len(seqs) == 0 {
		return ""
	}
	return asr.RecordID(seqs[0])
}

// send checks a v1 update against the schema and emits it.
func (d *downlevel) send(update any, seqs []uint64) {
	if d.err != nil {
		return
	}
	u, err := asr.Marshal(update)
	if err != nil {
		d.tally.Omit(recordOf(seqs), asr.LossV1Invalid, "an update that does not encode: "+err.Error())
		return
	}
	line := obj{"jsonrpc": rawString("2.0"), "method": rawString("session/update"),
		"params": obj{"sessionId": rawString(d.session), "update": u}.encode()}.encode()
	if err := d.check.Check(acpschema.Agent, line); err != nil {
		d.tally.Omit(recordOf(seqs), asr.LossV1Invalid, "not valid ACP v1: "+err.Error())
		return
	}
	d.sent++
	d.err = d.emit(sdk.Output{Kind: sdk.ACPFrame, Session: d.session, JSON: line, FrameSeqs: seqs})
}

// message sends a message as chunks, one per content block, each with the
// message's id (v1's ContentChunk.messageId); the message's _meta goes on
// the first.
func (d *downlevel) message(kind string, u obj, seqs []uint64) {
	id, _ := u.str("messageId")
	blocks, _ := u.array("content")
	sent, text := 0, false
	for _, b := range blocks {
		if !d.block(b, seqs) {
			continue
		}
		isText := blockType(b) == "text"
		if isText && text {
			d.tally.Add(asr.LossV1Chunks, 1, "text blocks in a row are read back as one text")
		}
		text = isText
		c := obj{"sessionUpdate": rawString(kind + "_chunk"), "content": b, "messageId": rawString(id)}
		if m, ok := u["_meta"]; ok && sent == 0 {
			c["_meta"] = m
		}
		d.send(c, seqs)
		sent++
	}
	if sent == 0 {
		d.tally.Omit(recordOf(seqs), asr.LossV1Content, "a message without a content block v1 can carry (v1 sends messages as chunks)")
	}
}

// block reports whether a content block is of a type v1 has; one that is
// not is counted.
func (d *downlevel) block(b json.RawMessage, seqs []uint64) bool {
	o, ok := parseObj(b)
	typ, _ := o.str("type")
	if ok && slices.Contains(replay.V1ContentBlocks, typ) {
		return true
	}
	d.tally.Omit(recordOf(seqs), asr.LossV1Content, "a content block of type "+quoteOr(typ, "none")+" (not in ACP v1)")
	return false
}

func blockType(b json.RawMessage) string {
	o, _ := parseObj(b)
	typ, _ := o.str("type")
	return typ
}

func quoteOr(s, empty string) string {
	if s == "" {
		return empty
	}
	return `"` + s + `"`
}

// tool sends the whole call as one v1 tool_call.
func (d *downlevel) tool(u obj, seqs []uint64) {
	rec := recordOf(seqs)
	c := obj{"sessionUpdate": rawString("tool_call")}
	for _, k := range []string{"toolCallId", "name", "locations", "rawInput", "rawOutput", "_meta"} {
		if v, ok := u[k]; ok {
			c[k] = v
		}
	}
	c["title"] = rawString("")
	if v, ok := u["title"]; ok {
		c["title"] = v
	}
	if kind, ok := u.str("kind"); ok {
		if !slices.Contains(replay.V1ToolKinds, kind) {
			d.tally.Add(asr.LossV1ToolKind, 1, "kind "+quoteOr(kind, "")+" sent as \"other\"")
			kind = "other"
		}
		c["kind"] = rawString(kind)
	}
	switch status, _ := u.str("status"); status {
	case "":
	case "completed", "failed", "pending", "in_progress":
		c["status"] = rawString(status)
	case "cancelled":
		d.tally.Add(asr.LossV1ToolStatus, 1, "cancelled sent as failed")
		c["status"] = rawString("failed")
	default:
		d.tally.Add(asr.LossV1ToolStatus, 1, "status "+quoteOr(status, "")+" not sent")
	}
	items, _ := u.array("content")
	var content []json.RawMessage
	for _, it := range items {
		o, _ := parseObj(it)
		switch typ, _ := o.str("type"); typ {
		case "content":
			if d.block(o["content"], seqs) {
				content = append(content, it)
			}
		case "diff":
			content = append(content, d.diffs(o, rec)...)
		case "terminal":
			d.tally.Omit(rec, asr.LossV1Terminals, "a tool call's terminal item: v1 terminals are created by the client")
		default:
			d.tally.Omit(rec, asr.LossV1Invalid, "a tool call content item of type "+quoteOr(typ, "none"))
		}
	}
	if len(content) > 0 {
		c["content"] = array(content)
	}
	d.send(c, seqs)
}

// diffs turns a v2 diff item into v1 diffs, one per change that has the
// file's full new text.
func (d *downlevel) diffs(item obj, rec string) []json.RawMessage {
	changes, _ := item.array("changes")
	if item.has("patch") {
		d.tally.Add(asr.LossV1Diffs, 1, "patches (v1 diffs are full texts)")
	}
	var out []json.RawMessage
	for _, ch := range changes {
		c, _ := parseObj(ch)
		meta, _ := c.object("_meta")
		newText, ok := meta.str(MetaNewText)
		path, _ := c.str("path")
		if !ok || path == "" {
			d.tally.Omit(rec, asr.LossV1Diffs, "a change without the file's full new text (a patch only, or a deletion)")
			continue
		}
		v1 := obj{"type": rawString("diff"), "path": rawString(path), "newText": rawString(newText)}
		inferred := "add"
		if old, ok := meta.str(MetaOldText); ok {
			v1["oldText"] = rawString(old)
			inferred = "modify"
		}
		if op, _ := c.str("operation"); op != inferred {
			d.tally.Add(asr.LossV1Diffs, 1, "operation "+quoteOr(op, "none")+" sent as a diff read as "+inferred)
		}
		if c.has("fileType") || c.has("mimeType") || c.has("oldPath") {
			d.tally.Add(asr.LossV1Diffs, 1, "file types, mime types and old paths")
		}
		rest := obj{}
		for k, v := range meta {
			if k != MetaOldText && k != MetaNewText {
				rest[k] = v
			}
		}
		if len(rest) > 0 {
			v1["_meta"] = rest.encode()
		}
		out = append(out, v1.encode())
	}
	return out
}

// plan sends an items plan as v1's plan, which replaces the session's one
// plan.
func (d *downlevel) plan(u obj, seqs []uint64) {
	rec := recordOf(seqs)
	p, _ := u.object("plan")
	typ, _ := p.str("type")
	if typ != "items" {
		d.tally.Omit(rec, asr.LossV1Plans, "a plan of type "+quoteOr(typ, "none")+" (v1 plans are lists of entries)")
		return
	}
	if id, _ := p.str("planId"); id != planID {
		d.tally.Add(asr.LossV1Plans, 1, "plan IDs (v1 has one plan per session)")
	}
	entries, _ := p.array("entries")
	out := make([]json.RawMessage, 0, len(entries))
	for _, e := range entries {
		o, ok := parseObj(e)
		if !ok {
			d.tally.Omit(rec, asr.LossV1Plans, "a plan entry that is not an object")
			continue
		}
		for _, f := range []struct {
			key, def string
			enum     []string
		}{{"status", "pending", replay.V1PlanStatuses}, {"priority", "medium", replay.V1PlanPriorities}} {
			if v, _ := o.str(f.key); !slices.Contains(f.enum, v) {
				d.tally.Add(asr.LossV1Plans, 1, "entry "+f.key+" "+quoteOr(v, "none")+" sent as "+f.def)
				o[f.key] = rawString(f.def)
			}
		}
		out = append(out, o.encode())
	}
	c := obj{"sessionUpdate": rawString("plan"), "entries": array(out)}
	if m, ok := u["_meta"]; ok {
		c["_meta"] = m
	}
	d.send(c, seqs)
}

// report is the v2 replay's report with the v1 translation's categories
// and omissions added, the target and the number of v1 updates sent.
func (d *downlevel) report(rep replay.LossReport, target string) replay.LossReport {
	rep.Target, rep.Updates = target, d.sent
	own := d.tally.Report()
	for _, c := range own.Categories {
		rep.AddCategory(c.Category, c.Records, c.Detail)
	}
	for _, o := range own.Omitted {
		if len(rep.Omitted) < replay.MaxOmitted {
			rep.Omitted = append(rep.Omitted, o)
		}
	}
	return rep
}
