package relay

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/acptap/acptap/sdk/aep"
)

type lineReport struct {
	Line   int    `json:"line"`
	ID     string `json:"id,omitempty"`
	Detail string `json:"detail"`
}

// ingest is POST /events: one event (application/json) or an NDJSON batch
// (application/x-ndjson). Valid lines are kept even when others are
// refused; the answer reports each refused line (400) or accepts (202).
func (s *Server) ingest(w http.ResponseWriter, r *http.Request) {
	v := r.Header.Get("AEP-Version")
	if v == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "missing-version", "detail": "the AEP-Version header is required"})
		return
	}
	if !supportedVersion(v) {
		writeJSON(w, http.StatusUpgradeRequired, map[string]any{"versions": []string{aep.Version}})
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && mt != "application/x-ndjson") {
		writeJSON(w, http.StatusUnsupportedMediaType, map[string]any{"error": "unsupported-media-type",
			"detail": "send application/json (one event) or application/x-ndjson (a batch)"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "payload-too-large", "limit": s.opts.MaxBody})
		return
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unreadable-body", "detail": err.Error()})
		return
	}
	lines := splitLines(body)
	if mt == "application/json" && len(lines) > 1 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid-event", "detail": "application/json carries one event"})
		return
	}
	if len(lines) > s.opts.MaxBatch {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "too-many-events", "limit": s.opts.MaxBatch})
		return
	}
	if len(lines) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid-event", "detail": "no event in the body"})
		return
	}
	accepted, dups, refused := s.admit(lines)
	if len(refused) > 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid-event",
			"detail":   fmt.Sprintf("line %d: %s", refused[0].Line, refused[0].Detail),
			"accepted": accepted, "duplicates": dups, "rejected": refused})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"accepted": accepted, "duplicates": dups})
}

// admit validates, dedupes, orders and stores lines, in order.
func (s *Server) admit(lines [][]byte) (accepted, dups int, refused []lineReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, line := range lines {
		h, err := s.validator.Validate(line)
		if err == nil {
			var canon []byte
			if canon, err = aep.CanonicalRaw(line); err == nil {
				err = s.stream.Admit(h, canon)
			}
		}
		switch {
		case errors.Is(err, aep.Duplicate):
			dups++
			s.counts.Duplicates++
			continue
		case err == nil:
			if err = s.store.append(h, line); err == nil {
				accepted++
				s.counts.Accepted++
				continue
			}
			s.log.Error("relay store append failed", "error", err)
		}
		rep := lineReport{Line: i + 1, Detail: err.Error()}
		if h != nil {
			rep.ID = h.ID
		}
		refused = append(refused, rep)
		s.counts.Rejected++
	}
	return accepted, dups, refused
}

// splitLines splits an NDJSON body, skipping blank lines.
func splitLines(body []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), len(body)+1)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			out = append(out, append([]byte(nil), l...))
		}
	}
	return out
}
