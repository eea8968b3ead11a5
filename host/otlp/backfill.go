package otlp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/acptap/acptap/host/otlp/spool"
	"github.com/acptap/acptap/internal/jsonl"
	"github.com/acptap/acptap/sdk/aep"
)

// SkippedLine is an event line a backfill could not map.
type SkippedLine struct {
	File string
	Line int
	Err  error
}

func (s SkippedLine) Error() string { return fmt.Sprintf("%s:%d: %v", s.File, s.Line, s.Err) }

// FileResult says what one AEP file yielded.
type FileResult struct {
	File    string
	Events  int
	Logs    int
	Spans   int
	Skipped []SkippedLine
	Dropped [6]uint64
}

// SpoolFile projects one stored AEP event file (aep/acp/<session>.jsonl)
// into the spool, in segments of at most batchMax items, with the same
// projection the live exporter uses: the same records, the same ids.
func SpoolFile(path string, sp *spool.Spool, maxCapture aep.Level, version string, info func(string) Agent, batchMax int) (FileResult, error) {
	res := FileResult{File: path}
	if batchMax <= 0 {
		batchMax = DefaultBatchMax
	}
	f, err := os.Open(path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	proj := NewProjector(maxCapture, version, info)
	var pending []spool.Item
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		d, err := sp.Append(pending)
		addDrops(&res.Dropped, d)
		pending = pending[:0]
		return err
	}
	add := func(its []spool.Item) error {
		for _, it := range its {
			if it.Kind == spool.Logs {
				res.Logs++
			} else {
				res.Spans++
			}
		}
		pending = append(pending, its...)
		if len(pending) >= batchMax {
			return flush()
		}
		return nil
	}
	r := jsonl.NewReader(f, jsonl.DefaultMaxLine)
	r.SkipLong, r.TrimCR = true, true
	for {
		line, err := r.Next()
		var tl *jsonl.LineTooLongError
		switch {
		case errors.As(err, &tl):
			res.Skipped = append(res.Skipped, SkippedLine{path, tl.Line, err})
			continue
		case errors.Is(err, io.EOF):
			if len(bytes.TrimSpace(r.Tail())) > 0 || (r.Tail() == nil && r.TailLen() > 0) {
				// A last line without LF: a writer killed mid-line.
				res.Skipped = append(res.Skipped, SkippedLine{path, r.Line() + 1, fmt.Errorf("incomplete last line")})
			}
		case err != nil:
			return res, err
		}
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		res.Events++
		its, perr := proj.Project(line)
		if perr != nil {
			res.Skipped = append(res.Skipped, SkippedLine{path, r.Line(), perr})
		} else if aerr := add(its); aerr != nil {
			return res, aerr
		}
	}
	if err := add(proj.Flush()); err != nil {
		return res, err
	}
	return res, flush()
}

func addDrops(into *[6]uint64, d [6]uint64) {
	for i, n := range d {
		into[i] += n
	}
}
