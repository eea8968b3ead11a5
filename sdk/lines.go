package sdk

import "github.com/acptap/acptap/sdk/asr"

// lineEncoder encodes the lines of the records Stream.Append wrote on
// goroutines of their own, lineBatch records a goroutine, while the mapping
// goes on; Settle (Take) puts them into the records' outputs. At most
// lineGoroutines batches are being encoded at once (the next waits for one
// to end), so the records' buffers held beside the outputs are bounded;
// the batches are reused once settled.
type lineEncoder struct {
	later   bool            // Take leaves the lines to Settle (Streams.SettleLater)
	q       []*lineBatch    // in the order of the records, since the last Settle
	free    []*lineBatch    // settled, to fill again
	done    chan *lineBatch // batches encoded (room for every one running)
	running int
}

// lineBatch is lineBatch records' lines: encoded once done, or while it is
// the last of q, being filled.
type lineBatch struct {
	jobs []lineJob
	done bool
}

// lineJob is one record's line: p placed (asr.Prepared.Place) until Line.
type lineJob struct {
	p    asr.Prepared
	line []byte
}

const (
	lineBatchLen   = 32
	lineGoroutines = 4
)

// add queues p's line, the next record output without JSON.
func (e *lineEncoder) add(p asr.Prepared) {
	var b *lineBatch
	if n := len(e.q); n > 0 && len(e.q[n-1].jobs) < lineBatchLen && !e.q[n-1].done {
		b = e.q[n-1]
	} else {
		b = e.batch()
		e.q = append(e.q, b)
	}
	b.jobs = append(b.jobs, lineJob{p: p})
	if len(b.jobs) < lineBatchLen {
		return
	}
	if e.done == nil {
		e.done = make(chan *lineBatch, lineGoroutines)
	}
	if e.running == lineGoroutines {
		e.wait()
	}
	e.running++
	go encodeLines(b, e.done)
}

// batch returns an empty batch, a settled one when there is one.
func (e *lineEncoder) batch() *lineBatch {
	if n := len(e.free); n > 0 {
		b := e.free[n-1]
		e.free = e.free[:n-1]
		return b
	}
	return &lineBatch{jobs: make([]lineJob, 0, lineBatchLen)}
}

// encodeLines encodes b's lines and sends b back on done.
func encodeLines(b *lineBatch, done chan<- *lineBatch) {
	b.encode()
	done <- b
}

// encode encodes b's lines (placed: Line cannot fail).
func (b *lineBatch) encode() {
	for i := range b.jobs {
		b.jobs[i].line, _ = b.jobs[i].p.Line()
	}
}

// wait waits for one running batch to end.
func (e *lineEncoder) wait() {
	b := <-e.done
	b.done = true
	e.running--
}

// settle puts the lines queued into outs' record outputs without JSON, in
// order; they must be as many (outs: what Take returned since the last
// settle, in order, other outputs between them allowed).
func (e *lineEncoder) settle(outs []Output) {
	if len(e.q) == 0 {
		return
	}
	bi, ji := 0, 0
	for i := range outs {
		o := &outs[i]
		if o.Kind != ASRRecord || o.JSON != nil {
			continue
		}
		if bi == len(e.q) {
			panic("sdk: Settle: more records without a line than Append wrote")
		}
		b := e.q[bi]
		if ji == 0 {
			for !b.done && len(b.jobs) == lineBatchLen {
				e.wait()
			}
			if !b.done { // the last, not full: encoded here
				b.encode()
				b.done = true
			}
		}
		o.JSON = b.jobs[ji].line
		if ji++; ji == len(b.jobs) {
			bi, ji = bi+1, 0
		}
	}
	if bi != len(e.q) {
		panic("sdk: Settle: fewer records without a line than Append wrote")
	}
	for _, b := range e.q {
		clear(b.jobs)
		b.jobs, b.done = b.jobs[:0], false
		e.free = append(e.free, b)
	}
	clear(e.q)
	e.q = e.q[:0]
}
