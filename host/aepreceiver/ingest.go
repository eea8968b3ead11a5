package aepreceiver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"time"

	"github.com/acptap/acptap/sdk/aep"
)

type lineReport struct {
	Line   int    `json:"line"`
	ID     string `json:"id,omitempty"`
	Detail string `json:"detail"`
}

// errStore is a line that could not be stored: the event stays unseen,
// and the answer is 503 so the sender retries it.
type errStore struct{ err error }

func (e errStore) Error() string { return "store: " + e.err.Error() }

// ingest is POST /events: one event (application/json) or an NDJSON batch
// (application/x-ndjson). Valid lines are kept even when others are
// refused; the answer reports each refused line (400), a line that could
// not be stored (503, retry), or accepts (202).
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
	if r.ContentLength > s.opts.MaxBody {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "payload-too-large", "limit": s.opts.MaxBody})
		return
	}
	body, code, err := s.readBody(w, r)
	if err != nil {
		if code == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		writeJSON(w, code, map[string]any{"error": bodyErrors[code], "detail": err.Error(), "limit": s.opts.MaxBody})
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
	accepted, dups, refused, storeErr := s.admit(lines)
	switch {
	case storeErr != nil:
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "store-failed",
			"detail": storeErr.Error(), "accepted": accepted, "duplicates": dups, "rejected": refused})
	case len(refused) > 0:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid-event",
			"detail":   fmt.Sprintf("line %d: %s", refused[0].Line, refused[0].Detail),
			"accepted": accepted, "duplicates": dups, "rejected": refused})
	default:
		writeJSON(w, http.StatusAccepted, map[string]any{"accepted": accepted, "duplicates": dups})
	}
}

// bodyErrors name readBody's refusals.
var bodyErrors = map[int]string{http.StatusRequestEntityTooLarge: "payload-too-large",
	http.StatusServiceUnavailable: "busy", http.StatusRequestTimeout: "body-timeout", http.StatusBadRequest: "unreadable-body"}

// readBody reads the body once a turn among MaxBodies is free (so
// parallel posts cost at most MaxBodies bodies of memory), within
// BodyTimeout for the wait and for the read (so a slow client cannot hold
// a turn). The buffer is sized from Content-Length, read once, never
// copied.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	wait := time.NewTimer(s.opts.BodyTimeout)
	defer wait.Stop()
	select {
	case s.bodies <- struct{}{}:
	case <-wait.C:
		return nil, http.StatusServiceUnavailable, errors.New("too many request bodies in flight; retry")
	case <-r.Context().Done():
		return nil, http.StatusServiceUnavailable, r.Context().Err()
	}
	s.mu.Lock()
	s.inBody++
	s.counts.PeakBodies = max(s.counts.PeakBodies, s.inBody)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inBody--
		s.mu.Unlock()
		<-s.bodies
	}()
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opts.BodyTimeout))
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + 1)
	}
	_, err := buf.ReadFrom(io.LimitReader(r.Body, s.opts.MaxBody+1))
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout, fmt.Errorf("the body did not arrive within %s", s.opts.BodyTimeout)
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("unreadable body: %w", err)
	case int64(buf.Len()) > s.opts.MaxBody:
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the body is over %d bytes", s.opts.MaxBody)
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return buf.Bytes(), 0, nil
}

// admit validates, dedupes, orders, stores and publishes lines, in order.
// An event is marked seen only once its line is written; a write that
// fails stops the batch (what follows is neither stored nor refused: the
// retry brings it). The written files are synced before the answer.
func (s *Server) admit(lines [][]byte) (accepted, dups int, refused []lineReport, storeErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, 0, nil, errors.New("the relay is shutting down")
	}
	for i, line := range lines {
		h, err := s.validator.Validate(line)
		var commit func()
		if err == nil {
			var canon []byte
			if canon, err = aep.CanonicalRaw(line); err == nil {
				commit, err = s.stream.Check(h, canon)
			}
		}
		switch {
		case errors.Is(err, aep.Duplicate):
			dups++
			s.counts.Duplicates++
			s.publish(h, line) // fan-out forwards redeliveries (AEP-0003 §5)
			continue
		case err == nil:
			if err = s.store.append(h, line); err == nil {
				commit()
				accepted++
				s.counts.Accepted++
				s.publish(h, line)
				continue
			}
			s.counts.StoreFailures++
			s.log.Error("relay store append failed; the event stays unseen", "error", err, "id", h.ID)
			return accepted, dups, refused, errStore{err}
		}
		rep := lineReport{Line: i + 1, Detail: err.Error()}
		if h != nil {
			rep.ID = h.ID
		}
		refused = append(refused, rep)
		s.counts.Rejected++
	}
	if err := s.store.sync(); err != nil {
		s.counts.StoreFailures++
		s.log.Error("relay store sync failed", "error", err)
		return accepted, dups, refused, errStore{err}
	}
	return accepted, dups, refused, nil
}

// splitLines splits an NDJSON body into its non-blank lines, in place.
func splitLines(body []byte) [][]byte {
	var out [][]byte
	for len(body) > 0 {
		l := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			l, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}
