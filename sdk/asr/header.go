package asr

import "encoding/json"

// FormatVersion is the ASR format version written in every header's "asr"
// field. ASR core is defined by this project (see DESIGN.md, "ASR core").
const FormatVersion = "0.1"

// Header is line 1 of a stream ("type":"header"). Declarations appended
// later are folded into it by EffectiveHeader.
type Header struct {
	Type      string                     `json:"type"`
	ASR       string                     `json:"asr"`
	SessionID string                     `json:"sessionId"`
	CreatedAt string                     `json:"createdAt,omitempty"`
	Agent     *Agent                     `json:"agent,omitempty"`
	Producer  Producer                   `json:"producer"`
	Workspace *Workspace                 `json:"workspace,omitempty"`
	Lineage   *Lineage                   `json:"lineage,omitempty"`
	Meta      map[string]json.RawMessage `json:"_meta,omitempty"`
}

// Agent names the agent that produced the session (ASR-703).
type Agent struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Producer says how the stream was made (ASR-700) and what it lost (ASR-722).
type Producer struct {
	Method  string   `json:"method"`
	Name    string   `json:"name"`
	Version string   `json:"version,omitempty"`
	Plugin  *Plugin  `json:"plugin,omitempty"`
	Source  *Source  `json:"source,omitempty"`
	Lossy   []string `json:"lossy"`
}

// Plugin names the mapper plugin that wrote the stream.
type Plugin struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Source names the protocol revision the stream was mapped from.
type Source struct {
	Format        string `json:"format"`
	FormatVersion string `json:"formatVersion"`
}

// Workspace lists the roots PathRefs are relative to (ASR-711).
type Workspace struct {
	Roots []Root `json:"roots"`
}

// Root is one workspace root; Path is null when redacted.
type Root struct {
	ID   string  `json:"id"`
	Path *string `json:"path"`
}

// Lineage links a stream to the session it came from (ASR-718, ASR-721).
type Lineage struct {
	ForkedFrom *SessionLink `json:"forkedFrom,omitempty"`
	Inherits   *Inherits    `json:"inherits,omitempty"`
	SpawnedBy  *SessionLink `json:"spawnedBy,omitempty"`
}

// SessionLink points at another session, with the evidence for the link.
type SessionLink struct {
	Session  string `json:"session"`
	Evidence string `json:"evidence"`
}

// Inherits says how a fork's history relates to its parent's.
type Inherits struct {
	Mode     string `json:"mode"`
	From     string `json:"from"`
	Evidence string `json:"evidence"`
}

// EffectiveHeader folds declarations into a copy of h: loss categories are
// added (sorted, without duplicates).
func EffectiveHeader(h Header, decls []Declaration) Header {
	set := map[string]bool{}
	for _, c := range h.Producer.Lossy {
		set[c] = true
	}
	for _, d := range decls {
		for _, c := range d.Lossy {
			set[c] = true
		}
	}
	h.Producer.Lossy = SortedKeys(set)
	return h
}
