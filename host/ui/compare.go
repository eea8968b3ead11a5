package ui

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"

	"github.com/acptap/acptap/sdk/asr"
)

// CompareRow is one position of two streams side by side.
type CompareRow struct {
	N      int    `json:"n"` // record position, from 1
	Status string `json:"status"`
	A      string `json:"a,omitempty"` // the record lines
	B      string `json:"b,omitempty"`
	TypeA  string `json:"typeA,omitempty"`
	TypeB  string `json:"typeB,omitempty"`
}

// Comparison is what /api/compare answers: rows that differ (all rows with
// all=1), and the counts.
type Comparison struct {
	Rows   []CompareRow   `json:"rows"`
	Counts map[string]int `json:"counts"` // same, differs, onlyA, onlyB
	Cut    bool           `json:"cut,omitempty"`
}

// Compare statuses. Records are compared without their identity fields
// (seq, id, ts, supersedes, …: asr.RecordFingerprint), so two rebuilds
// that differ only in when they ran compare equal.
const (
	Same    = "same"
	Differs = "differs"
	OnlyA   = "onlyA"
	OnlyB   = "onlyB"
)

const maxCompareRows = 2000

func (s *Server) apiCompare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pa, err1 := s.streamPath(q.Get("a"), q.Get("aalt"))
	pb, err2 := s.streamPath(q.Get("b"), q.Get("balt"))
	if err1 != nil || err2 != nil {
		http.NotFound(w, r)
		return
	}
	c, err := compareFiles(pa, pb, q.Get("all") == "1")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, c)
}

// compareFiles walks both streams in step, one record at a time.
func compareFiles(pa, pb string, all bool) (*Comparison, error) {
	fa, err := os.Open(pa)
	if err != nil {
		return nil, err
	}
	defer fa.Close()
	fb, err := os.Open(pb)
	if err != nil {
		return nil, err
	}
	defer fb.Close()
	ra, rb := asr.NewReader(fa), asr.NewReader(fb)
	// Headers are not records: skip them.
	next := func(r *asr.Reader) ([]byte, error) {
		for {
			l, err := r.Next()
			if err != nil || r.Line() > 1 || !bytes.Contains(l, []byte(`"header"`)) {
				return l, err
			}
		}
	}
	c := &Comparison{Rows: []CompareRow{}, Counts: map[string]int{}}
	for n := 1; ; n++ {
		la, ea := next(ra)
		lb, eb := next(rb)
		if ea != nil && !errors.Is(ea, io.EOF) {
			return nil, ea
		}
		if eb != nil && !errors.Is(eb, io.EOF) {
			return nil, eb
		}
		if ea != nil && eb != nil {
			return c, nil
		}
		row := CompareRow{N: n, A: string(la), B: string(lb)}
		row.TypeA, row.TypeB = recType(la), recType(lb)
		switch {
		case ea != nil:
			row.Status = OnlyB
		case eb != nil:
			row.Status = OnlyA
		default:
			fa, erra := asr.RecordFingerprint(la)
			fb, errb := asr.RecordFingerprint(lb)
			if erra == nil && errb == nil && fa == fb {
				row.Status = Same
			} else {
				row.Status = Differs
			}
		}
		c.Counts[row.Status]++
		if row.Status == Same && !all {
			continue
		}
		if len(c.Rows) >= maxCompareRows {
			c.Cut = true
			continue
		}
		c.Rows = append(c.Rows, row)
	}
}

func recType(line []byte) string {
	if len(line) == 0 {
		return ""
	}
	g, err := asr.ReadRecord(line)
	if err != nil {
		return "?"
	}
	return g.Type
}
