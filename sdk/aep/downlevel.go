package aep

// Prune removes from data, in place, every field whose x-aep-capture
// minimum is above level, nested fields and array items included (the
// emitter's rule, AEP-0001 §8.2). Fields the schema does not name count as
// metadata. It returns false when the type has no schema: then nothing can
// be proven about data, and the caller must drop it below the level it was
// written at.
func Prune(typ string, data map[string]any, level Level) bool {
	n := annotations(typ)
	if n == nil {
		return false
	}
	pruneObject(data, n, level)
	return true
}

func pruneObject(obj map[string]any, n *captureNode, level Level) {
	for k, v := range obj {
		p, ok := n.props[k]
		if !ok {
			continue
		}
		if p.level > level {
			delete(obj, k)
			continue
		}
		pruneValue(v, p, level)
	}
}

func pruneValue(v any, n *captureNode, level Level) {
	switch x := v.(type) {
	case map[string]any:
		if n.props != nil {
			pruneObject(x, n, level)
		}
	case []any:
		if n.items == nil {
			return
		}
		for _, e := range x {
			pruneValue(e, n.items, level)
		}
	}
}

// Downlevel rewrites a decoded event for a consumer whose ceiling is
// ceiling (the hop rule, AEP-0001 §8.2): a ceiling not below the event's
// capture leaves it unchanged; otherwise fields above the new level are
// dropped, the [metadata*] fields degrade structurally below redacted
// (prompt synthesized, labels become ids, answer values keep only numbers
// and booleans), and capture is rewritten. A full event under a redacted
// ceiling lands on metadata: a mechanical hop never mints the redacted
// provenance claim. A type without a schema loses its data. ev is changed
// in place and returned.
func Downlevel(ev map[string]any, ceiling Level) map[string]any {
	cur := Metadata
	if s, ok := ev["capture"].(string); ok {
		if l, err := ParseLevel(s); err == nil {
			cur = l
		}
	}
	if ceiling >= cur {
		return ev
	}
	level := ceiling
	if cur == Full && level == Redacted {
		level = Metadata
	}
	ev["capture"] = level.String()
	typ, _ := ev["type"].(string)
	data, isObj := ev["data"].(map[string]any)
	if level == None || !isObj {
		if level == None {
			delete(ev, "data")
		}
		return ev
	}
	if !Prune(typ, data, level) {
		delete(ev, "data")
		return ev
	}
	if level < Redacted {
		agent, _ := ev["agent"].(string)
		subject, _ := ev["subject"].(string)
		degradeMetadataStar(typ, agent, subject, data)
	}
	return ev
}

// degradeMetadataStar applies the AEP-0002 §5.3 exception fields' rule
// below redacted: a hop has no source context, so it synthesizes the
// prompt, turns labels into ids, and keeps only structural answer values.
func degradeMetadataStar(typ, agent, subject string, data map[string]any) {
	switch typ {
	case "attention.requested":
		if _, ok := data["prompt"]; ok {
			kind, _ := data["kind"].(string)
			data["prompt"] = SynthesizedPrompt(agent, kind, subject)
		}
		for _, o := range objects(data["options"]) {
			o["label"] = o["id"]
		}
		for _, f := range objects(data["fields"]) {
			f["label"] = f["id"]
			for _, c := range objects(f["choices"]) {
				c["label"] = c["id"]
			}
		}
	case "attention.answered", "control.attention.respond":
		answer, _ := data["answer"].(map[string]any)
		if values, ok := answer["values"].(map[string]any); ok {
			for k, v := range values {
				if !isStructural(v) {
					delete(values, k)
				}
			}
		}
	}
}

// SynthesizedPrompt is the metadata-level prompt of an attention request
// (AEP-0003 §9.2): "{agent} requests {kind}: {subject}", without the
// subject part when there is none.
func SynthesizedPrompt(agent, kind, subject string) string {
	if kind == "" {
		kind = "other"
	}
	s := agent + " requests " + kind
	if subject != "" {
		s += ": " + subject
	}
	return s
}

func objects(v any) []map[string]any {
	arr, _ := v.([]any)
	var out []map[string]any
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func isStructural(v any) bool {
	switch v.(type) {
	case bool, float64, int, int64, jsonNumber:
		return true
	}
	return false
}
