package replay

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/acptap/acptap/sdk/asr"
)

// The rules of the replay mapping that a replayer and the round-trip check
// must apply the same way.

// ToolStatus maps an ASR tool_result status to an ACP tool call status
// (ASR-728): completed → completed; failed, denied → failed; cancelled,
// interrupted → cancelled; unknown → other; a "_" vendor value unchanged.
// Any other value is not an ACP status either and becomes other. ok is
// false for "partial" (a snapshot, not a result) and "".
func ToolStatus(s string) (acp string, ok bool) {
	switch s {
	case "completed":
		return "completed", true
	case "failed", "denied":
		return "failed", true
	case "cancelled", "interrupted":
		return "cancelled", true
	case "", "partial":
		return "", false
	}
	if strings.HasPrefix(s, "_") {
		return s, true
	}
	return "other", true
}

// FinalToolStatus reports whether an ACP tool call status ends the call.
func FinalToolStatus(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

// AbsPath rebuilds an absolute path from a PathRef and the stream's roots
// (ASR-729, ASR-711). ok is false when the root is unknown or its path is
// null (redacted).
func AbsPath(roots []asr.Root, ref asr.PathRef) (string, bool) {
	if ref.Root == nil {
		return ref.Path, true
	}
	for _, r := range roots {
		if r.ID != *ref.Root {
			continue
		}
		if r.Path == nil {
			return "", false
		}
		return joinRoot(*r.Path, ref.Path), true
	}
	return "", false
}

// joinRoot appends a root-relative path to its root with the root's own
// separator ("\" for a Windows root, "/" otherwise).
func joinRoot(root, rel string) string {
	if rel == "" {
		return root
	}
	sep := "/"
	if strings.Contains(root, `\`) && !strings.Contains(root, "/") {
		sep = `\`
	}
	return strings.TrimRight(root, `/\`) + sep + rel
}

// ReasoningText is the text a reasoning part is replayed with: its text,
// or its summary segments joined by "\n\n" when it has only a summary.
// Opaque reasoning and signatures are never sent; ok is false when the
// part has neither text nor summary.
func ReasoningText(part map[string]json.RawMessage) (string, bool) {
	var text string
	if raw, has := part["text"]; has && json.Unmarshal(raw, &text) == nil {
		return text, true
	}
	raw, has := part["summary"]
	if !has {
		return "", false
	}
	var segs []json.RawMessage
	if json.Unmarshal(raw, &segs) != nil {
		var one string
		if json.Unmarshal(raw, &one) == nil {
			return one, true
		}
		return "", false
	}
	var out []string
	for _, s := range segs {
		var str string
		if json.Unmarshal(s, &str) == nil {
			out = append(out, str)
			continue
		}
		var obj struct {
			Text *string `json:"text"`
		}
		if json.Unmarshal(s, &obj) == nil && obj.Text != nil {
			out = append(out, *obj.Text)
		}
	}
	if len(out) == 0 {
		return "", false
	}
	return strings.Join(out, "\n\n"), true
}

// ThoughtID is the derived message ID of the n-th (0-based) reasoning part
// of an assistant message that also has other parts (ASR-727).
func ThoughtID(messageID string, n int) string {
	return messageID + "#thought-" + strconv.Itoa(n)
}

// PartType returns a content part's "type".
func PartType(part json.RawMessage) (string, map[string]json.RawMessage) {
	var o map[string]json.RawMessage
	if json.Unmarshal(part, &o) != nil {
		return "", nil
	}
	var t string
	_ = json.Unmarshal(o["type"], &t)
	return t, o
}

// TextBlock builds {"type":"text","text":text}.
func TextBlock(text string) json.RawMessage {
	b, _ := asr.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", text})
	return b
}
