package replay

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The loss categories a replay reports (ASR-731) are the model's:
// asr.Loss… (sdk/asr/losses.go), defined once for plugins and host alike.

// Note is the sentence every loss report carries: a replay is never a
// complete representation of its stream (ASR-731, ASR-617).
const Note = "A replay is not a complete representation of the stream: it carries the context view as ACP updates, " +
	"and the categories listed were in the stream and are not replayed (ASR-731). The list is what this replayer " +
	"detected; it is not a proof that nothing else was lost."

// LossReport is the report a replay returns (ASR-731). Complete is always
// false: a replay is never presented as the whole stream.
type LossReport struct {
	Complete bool   `json:"complete"`
	Note     string `json:"note"`
	// SessionID is the replayed stream's session; Target the ACP revision.
	SessionID string `json:"sessionId,omitempty"`
	Target    string `json:"target,omitempty"`
	// Mode is "semantic" (rebuilt from the records) or "capture" (resent
	// from the wire log, ASR-733).
	Mode string `json:"mode"`
	// Records is the number of records read (header excluded); Updates the
	// number of ACP messages sent.
	Records int `json:"records"`
	Updates int `json:"updates"`
	// Categories lists each loss category the stream contained, sorted.
	Categories []Category `json:"categories"`
	// SourceLossy is what the stream itself declared lost when it was
	// recorded (its effective header's producer.lossy): a replay cannot
	// restore it.
	SourceLossy []string `json:"sourceLossy,omitempty"`
	// Omitted names some records left out for a reason the caller may
	// want to see (at most MaxOmitted).
	Omitted []Omission `json:"omitted,omitempty"`
	// Capture describes a byte-level replay (Mode "capture").
	Capture *CaptureInfo `json:"capture,omitempty"`
}

// Category is one loss category and how many records it concerned.
type Category struct {
	Category string `json:"category"`
	Records  int    `json:"records"`
	Detail   string `json:"detail,omitempty"`
}

// Omission is one record, or part of one, that was not replayed.
type Omission struct {
	Record   string `json:"record,omitempty"` // record id (r<seq>), when known
	Category string `json:"category"`
	Reason   string `json:"reason"`
}

// CaptureInfo describes a replay from the wire log (ASR-733).
type CaptureInfo struct {
	WireLogs []string `json:"wireLogs"`
	Missing  []string `json:"missing,omitempty"`
	Frames   int      `json:"frames"`
	Gaps     int      `json:"gaps,omitempty"`
	// Skipped counts updates the agent replayed on session/resume, which
	// repeat frames already sent from an earlier wire log.
	Skipped int `json:"skipped,omitempty"`
}

// MaxOmitted bounds LossReport.Omitted.
const MaxOmitted = 100

// Tally accumulates a loss report.
type Tally struct {
	counts  map[string]int
	details map[string]map[string]bool
	omitted []Omission
	more    int
}

// Add counts n records in category, with an optional detail phrase (each
// distinct phrase is listed once).
func (t *Tally) Add(category string, n int, detail string) {
	if n <= 0 {
		return
	}
	if t.counts == nil {
		t.counts = map[string]int{}
		t.details = map[string]map[string]bool{}
	}
	t.counts[category] += n
	if detail != "" {
		if t.details[category] == nil {
			t.details[category] = map[string]bool{}
		}
		t.details[category][detail] = true
	}
}

// Omit counts one record in category and lists it.
func (t *Tally) Omit(record, category, reason string) {
	t.Add(category, 1, "")
	if len(t.omitted) < MaxOmitted {
		t.omitted = append(t.omitted, Omission{Record: record, Category: category, Reason: reason})
	} else {
		t.more++
	}
}

// Has reports whether category was counted.
func (t *Tally) Has(category string) bool { return t.counts[category] > 0 }

// Report builds the report (Complete false, Note set).
func (t *Tally) Report() LossReport {
	r := LossReport{Note: Note, Mode: "semantic", Categories: []Category{}}
	for _, c := range sortedKeys(t.counts) {
		cat := Category{Category: c, Records: t.counts[c]}
		if d := t.details[c]; len(d) > 0 {
			cat.Detail = strings.Join(sortedKeys(d), "; ")
		}
		r.Categories = append(r.Categories, cat)
	}
	r.Omitted = slices.Clone(t.omitted)
	if t.more > 0 {
		r.Omitted = append(r.Omitted, Omission{Category: "", Reason: fmt.Sprintf("%d more not listed", t.more)})
	}
	return r
}

// Names returns the report's category names.
func (r LossReport) Names() map[string]bool {
	out := map[string]bool{}
	for _, c := range r.Categories {
		out[c.Category] = true
	}
	return out
}

// Marshal renders the report as indented JSON with a final LF.
func (r LossReport) Marshal() []byte {
	r.Complete = false
	if r.Note == "" {
		r.Note = Note
	}
	if r.Categories == nil {
		r.Categories = []Category{}
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	return append(b, '\n')
}

// ParseLossReport decodes a report. A report that claims to be complete is
// an error: no replay is complete (ASR-731).
func ParseLossReport(b []byte) (LossReport, error) {
	var r LossReport
	if err := json.Unmarshal(b, &r); err != nil {
		return LossReport{}, fmt.Errorf("loss report: %w", err)
	}
	if r.Complete {
		return LossReport{}, fmt.Errorf("loss report: claims the replay is complete, which no replay is (ASR-731)")
	}
	return r, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
