package acpasr

import (
	"encoding/json"
	"strconv"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// toolCall folds tool_call_update upserts and tool_call_content_chunk
// appends by toolCallId (ASR-702, ASR-704).
type toolCall struct {
	id                        string
	name, title, kind, status string
	items                     []toolItem // ToolCallContent, in order
	chunked                   bool       // items hold chunks since the last whole content
	locations                 []location
	input, output             json.RawMessage // rawInput, rawOutput
	meta                      meta
}

type toolItem struct {
	typ string
	o   obj
	// text and plain are a content item's block's plainTextOf (the text
	// kept with o), so that result joins it without parsing the block.
	text         json.RawMessage
	chunk, plain bool
	// live is the item as the frame's tape built it (o is its copy),
	// while toolUpdate maps that frame: the record a call final in the
	// frame that brings its diff writes (emitFinal) is read from the tape
	// (fileChange) instead of from the copy, whose texts would be scanned
	// again. nil outside toolUpdate, so that no frame's bytes are kept.
	live obj
}

// current is the item as fileChange reads it: live while its frame is
// mapped, else the copy.
func (it *toolItem) current() obj {
	if it.live != nil {
		return it.live
	}
	return it.o
}

type location struct {
	path string
	line json.RawMessage
}

func (t *toolCall) finished() bool { return finalStatus(t.status) }

// finalStatus is a status that makes a tool call (or compaction) final.
func finalStatus(st string) bool { return st == "completed" || st == "failed" || st == "cancelled" }

// toolUpdate applies a tool_call_update by ACP's patch rule; the call is
// written as soon as its status becomes final (ASR-705).
func (s *stream) toolUpdate(f *sdk.Frame, u obj) bool {
	id, st := u.str("toolCallId")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "tool_call_update: toolCallId missing or not a string", "kept as an audit record")
		return false
	}
	const what = "tool_call_update"
	e := s.entity(asr.TypeToolCall, id, true, f, func() body { return &toolCall{id: id} })
	t := e.b.(*toolCall)
	prev := t.status
	s.patchStr(what, u, "name", &t.name)
	s.patchStr(what, u, "title", &t.title)
	s.patchStr(what, u, "kind", &t.kind)
	s.patchStr(what, u, "status", &t.status)
	switch items, st := u.items("content"); st {
	case isNull, valid: // a whole content; null and [] clear
		t.items, t.chunked = nil, false
		for _, x := range items {
			if it, ok := s.toolItem(x, false); ok {
				t.items = append(t.items, it)
			}
		}
		defer t.dropLive()
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, what+": content is not an array", "content unchanged")
	}
	switch locs, st := u.items("locations"); st {
	case isNull, valid:
		t.locations = s.locations(locs)
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, what+": locations is not an array", "locations unchanged")
	}
	patchRaw(u, "rawInput", &t.input)
	patchRaw(u, "rawOutput", &t.output)
	t.meta.fold(s, u)
	if finalStatus(t.status) && t.status != prev {
		s.emitFinal(e)
	}
	return true
}

// toolChunk appends one tool_call_content_chunk item.
func (s *stream) toolChunk(f *sdk.Frame, u obj) bool {
	id, st := u.str("toolCallId")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "tool_call_content_chunk: toolCallId missing or not a string", "kept as an audit record")
		return false
	}
	co, st := u.object("content") // the frame's object, as parseObj reads it
	it, ok := s.toolItemOf(co, st == valid, true)
	if !ok {
		return false
	}
	it.live = nil // written later, from the copy
	e := s.entity(asr.TypeToolCall, id, true, f, func() body { return &toolCall{id: id} })
	t := e.b.(*toolCall)
	t.items = append(t.items, it)
	t.chunked = true
	return true
}

// toolItem checks one ToolCallContent item.
func (s *stream) toolItem(x kv, chunk bool) (toolItem, bool) {
	o, ok := x.asObj()
	return s.toolItemOf(o, ok, chunk)
}

// toolItemOf is toolItem of an item parsed as o (ok: it is an object).
func (s *stream) toolItemOf(o obj, ok, chunk bool) (toolItem, bool) {
	typ, st := o.str("type")
	if !ok || st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "tool call content item is not an object with a type", "item dropped")
		return toolItem{}, false
	}
	var text json.RawMessage
	var plain bool
	switch typ {
	case "content":
		bo, st := o.object("content")
		if st != valid {
			s.c.diag(sdk.SeverityWarning, s.id, "tool call content item has no content block", "item dropped")
			return toolItem{}, false
		}
		if text, plain = plainTextOf(bo); plain {
			break // a plain text block has no problem
		}
		if p := blockProblemOf(bo); p != "" {
			s.c.diag(sdk.SeverityWarning, s.id, "tool call content item has no content block", "item dropped: "+p)
			return toolItem{}, false
		}
	case "diff":
		s.checkDiff(o)
	case "terminal":
		if _, st := o.str("terminalId"); st != valid {
			s.c.diag(sdk.SeverityWarning, s.id, "terminal content item has no terminalId", "")
		}
	default:
		s.c.diag(sdk.SeverityInfo, s.id, "tool call content item of type "+strconv.Quote(typ)+" not mapped", "kept in the wire log only")
	}
	ko, kt := keepWith(o, text)
	return toolItem{typ: typ, o: ko, chunk: chunk, text: kt, plain: plain, live: o}, true
}

// dropLive ends the items' live objects (their frame is mapped).
func (t *toolCall) dropLive() {
	for i := range t.items {
		t.items[i].live = nil
	}
}

func (s *stream) locations(items []kv) []location {
	var out []location
	for _, x := range items {
		o, _ := x.asObj()
		p, st := o.str("path")
		if st != valid {
			s.c.diag(sdk.SeverityWarning, s.id, "tool call location has no path", "location dropped")
			continue
		}
		if !absolutePath(p) {
			s.c.diag(sdk.SeverityWarning, s.id, "tool call location path is not absolute", "location dropped: ACP paths are absolute (ASR-711)")
			continue
		}
		line, st := o.number("line")
		if st == valid && !isUint(line) {
			s.c.diag(sdk.SeverityWarning, s.id, "tool call location line is not a non-negative integer", "line left out")
			line = nil
		}
		out = append(out, location{path: p, line: own(line)})
	}
	return out
}

func (t *toolCall) parts(s *stream) []part {
	call := &asr.ToolCall{
		Envelope:     asr.Envelope{Type: asr.TypeToolCall},
		CallID:       t.id,
		CallIDSource: "native",
		Name:         t.name,
		Title:        t.title,
		Kind:         t.kind,
		Input:        t.input,
		Provenance:   asr.Provenance{Meta: t.meta.out()},
	}
	for _, l := range t.locations {
		if ref, ok := asr.RefOK(s.roots, l.path); ok {
			call.Locations = append(call.Locations, asr.Location{Path: ref, Line: l.line})
		}
	}
	if t.name == "" {
		call.Capture = map[string]asr.CaptureState{"name": {State: "absent"}}
	}
	ps := []part{{key: asr.TypeToolCall, rec: call, lossy: []string{asr.LossToolStatus}}}
	n := 0
	for _, it := range t.items {
		if it.typ == "diff" {
			ps = append(ps, part{key: "file_change#" + strconv.Itoa(n), rec: s.fileChange(t, it.current())})
			n++
		}
	}
	if st, ok := t.resultStatus(s.partial); ok {
		ps = append(ps, part{key: asr.TypeToolResult, rec: t.result(st), lossy: []string{asr.LossToolResultContent}})
	}
	return ps
}

// snapshot says whether the call's records are a partial snapshot: the
// stream is writing one and the call has no final status yet.
func (t *toolCall) snapshot(s *stream) bool { return s.partial && !finalStatus(t.status) }

// resultStatus says whether the call has a result yet, and its status
// (ASR-714, decision 2): a final status as is; a "_" vendor status as is and
// any other status as "unknown", when the call has content or rawOutput.
//
// In a partial snapshot (ASR-705's MAY) a call that is not final has a
// result with status "partial" when it has content or rawOutput so far.
func (t *toolCall) resultStatus(partial bool) (string, bool) {
	switch {
	case finalStatus(t.status):
		return t.status, true
	case partial && t.hasResult():
		return "partial", true
	case len(t.items) == 0 && t.output == nil:
		return "", false
	case t.status == "" || t.status == "pending" || t.status == "in_progress":
		return "", false
	case vendorValue(t.status):
		return t.status, true
	}
	return "unknown", true
}

// hasResult says whether the call has something of a result so far: raw
// output, display content or the terminal it runs in (a diff alone is a
// file change, not a result).
func (t *toolCall) hasResult() bool {
	if t.output != nil {
		return true
	}
	for _, it := range t.items {
		if it.typ == "content" || it.typ == "terminal" {
			return true
		}
	}
	return false
}

// result is the tool_result: display content, raw output, the terminal it
// ran in; never model-facing content (ASR-714).
func (t *toolCall) result(status string) *asr.ToolResult {
	var display blocks
	var exec *asr.Exec
	for _, it := range t.items {
		switch it.typ {
		case "content":
			if it.chunk {
				display.chunkText(it.o.raw("content"), it.text, it.plain)
			} else {
				display.pushText(it.o.raw("content"), it.text, it.plain)
			}
		case "terminal":
			if id, st := it.o.str("terminalId"); st == valid && exec == nil {
				exec = &asr.Exec{TerminalID: id}
			}
		}
	}
	r := &asr.ToolResult{
		Envelope: asr.Envelope{Type: asr.TypeToolResult, Status: status},
		CallID:   t.id,
		Linkage:  "exact",
		Raw:      t.output,
		Exec:     exec,
		Provenance: asr.Provenance{
			Capture:  map[string]asr.CaptureState{"content": {State: "absent"}},
			Assembly: asr.AssemblyFolded,
		},
	}
	if !display.empty() {
		r.DisplayContent = display.list()
	}
	if t.chunked {
		r.Assembly = asr.AssemblyChunks
	}
	return r
}

// patchStr applies one string field of an upsert: absent leaves it, null
// clears it, a string replaces it; another type is reported and ignored.
func (s *stream) patchStr(what string, u obj, k string, dst *string) {
	switch v, st := u.str(k); st {
	case isNull:
		*dst = ""
	case valid:
		*dst = v
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, what+": "+k+" is not a string", k+" unchanged")
	}
}

// patchRaw applies one any-JSON field of an upsert.
func patchRaw(u obj, k string, dst *json.RawMessage) {
	switch v, st := u.member(k); st {
	case isNull:
		*dst = nil
	case valid:
		*dst = compact(v)
	}
}
