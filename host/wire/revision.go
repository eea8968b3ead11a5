package wire

import (
	"encoding/json"
	"fmt"
	"time"
)

// TypeRevision is the entry that says which protocol revision the router
// chose for the connection, why, and which plugins map it. It carries no
// seq: it annotates the log and is not a frame, so writing it changes no
// frame's seq (and no record's native reference). Reader.Next skips it;
// Reader.Revision returns the last one read.
const TypeRevision = "revision"

// Revision is a TypeRevision entry.
type Revision struct {
	At time.Time `json:"-"`
	// Revision is the input revision, e.g. "acp/2@2.0.0-alpha.13".
	Revision string `json:"revision"`
	// Reason is the evidence: which frame or configuration decided it.
	Reason string `json:"reason"`
	// Plugins are the plugins attached, the primary first.
	Plugins []string `json:"plugins"`
	// SelectedBy says where the plugins came from: "revisions" (the
	// configuration's table) or "claims" (the plugins that claim the
	// revision in their Info, the table being silent).
	SelectedBy string `json:"selectedBy"`
}

type revisionJSON struct {
	Type string `json:"type"`
	At   string `json:"at,omitempty"`
	Revision
}

// AppendRevision writes a revision entry (no seq).
func (w *Writer) AppendRevision(r Revision) error {
	j := revisionJSON{Type: TypeRevision, Revision: r}
	if j.Plugins == nil {
		j.Plugins = []string{}
	}
	if !r.At.IsZero() {
		j.At = r.At.UTC().Format(time.RFC3339Nano)
	}
	line, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("append revision: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if _, err := w.bw.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("append revision: %w", err)
	}
	return nil
}

// parseRevision decodes a revision entry line.
func parseRevision(line []byte) (Revision, error) {
	var j revisionJSON
	if err := json.Unmarshal(line, &j); err != nil {
		return Revision{}, err
	}
	r := j.Revision
	if j.At != "" {
		t, err := time.Parse(time.RFC3339Nano, j.At)
		if err != nil {
			return Revision{}, fmt.Errorf("at: %w", err)
		}
		r.At = t
	}
	return r, nil
}

// isRevision reports whether an entry line is a revision entry.
func isRevision(line []byte) bool {
	var t struct {
		Type string `json:"type"`
	}
	return len(line) > 0 && json.Unmarshal(line, &t) == nil && t.Type == TypeRevision
}
