package logimport

import (
	"bytes"

	"github.com/acptap/acptap/internal/jsonscan"
)

// predecode: the digest pass over an input read whole (readOnce) decodes
// its lines on a goroutine of its own, ahead of the scanner (predecoder).
// Off: the scanner decodes every line itself (tests compare).
var predecode = true

// predecodeChunk is how many decoded lines the predecoder hands over at a
// time; predecodeAhead how many chunks it may be ahead of the scanner.
const (
	predecodeChunk = 256
	predecodeAhead = 8
)

// predecoder decodes the object lines of a whole input (decodeLine's
// work, which depends on a line's bytes alone) on a goroutine of its own,
// for the scanner's scanLine to take in order instead of decoding them on
// the pass's goroutine: the pass is the start of a conversion's critical
// path (the pipeline starts when it ends), and the other CPU is idle
// while it runs but for the plugins' start. The lines are those of
// newMemLines over the same bytes, so a decoded line's probe is the one
// the scanner would build (its slices are the input's).
type predecoder struct {
	chunks chan []predecoded
	free   chan []predecoded
	done   chan struct{}
	ended  chan struct{} // closed when run has returned
	cur    []predecoded
	last   []predecoded // the chunk cur is of, given back once used up
	// served counts the lines scanLine took from the predecoder.
	served int
}

// predecoded is the decode of line no.
type predecoded struct {
	no int
	ok bool
	p  probe
}

// startPredecoder starts decoding the lines of data (the whole input, as
// newMemLines reads it); stop ends it.
func startPredecoder(data []byte, max int) *predecoder {
	pd := &predecoder{chunks: make(chan []predecoded, predecodeAhead),
		free: make(chan []predecoded, predecodeAhead+2), done: make(chan struct{}),
		ended: make(chan struct{})}
	go pd.run(newMemLines(data, max))
	return pd
}

func (pd *predecoder) run(lr *lineReader) {
	defer close(pd.ended)
	defer close(pd.chunks)
	var t jsonscan.Tape
	chunk := make([]predecoded, 0, predecodeChunk)
	send := func() bool {
		select {
		case pd.chunks <- chunk:
		case <-pd.done:
			return false
		}
		select {
		case chunk = <-pd.free:
		default:
			chunk = make([]predecoded, 0, predecodeChunk)
		}
		return true
	}
	for {
		line, _, tooLong, err := lr.next()
		if err != nil {
			break
		}
		trim := bytes.TrimSpace(line)
		if tooLong || len(trim) == 0 || trim[0] != '{' {
			continue // scanLine does not decode it
		}
		chunk = append(chunk, predecoded{no: lr.line})
		e := &chunk[len(chunk)-1]
		e.ok = decodeOnTape(&t, trim, &e.p)
		if len(chunk) == cap(chunk) && !send() {
			return
		}
	}
	if len(chunk) > 0 {
		send()
	}
}

// take sets *p to the decode of line no and returns its ok, with found
// true, when the predecoder decoded that line; found is false when it did
// not (the caller decodes it). Lines are taken in increasing order; the
// decodes of lines before no are dropped.
func (pd *predecoder) take(no int, p *probe) (ok, found bool) {
	for {
		if len(pd.cur) == 0 {
			if pd.last != nil {
				clear(pd.last) // nothing of the input is held by a free chunk
				select {
				case pd.free <- pd.last[:0]:
				default:
				}
				pd.last = nil
			}
			c, more := <-pd.chunks
			if !more {
				return false, false
			}
			pd.cur, pd.last = c, c
		}
		e := &pd.cur[0]
		if e.no > no {
			return false, false
		}
		pd.cur = pd.cur[1:]
		if e.no == no {
			*p = e.p
			pd.served++
			return e.ok, true
		}
	}
}

// stop ends the predecoder's goroutine (if it has not ended).
func (pd *predecoder) stop() { close(pd.done) }
