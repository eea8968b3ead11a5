package sdk

import "github.com/acptap/acptap/sdk/asr"

// lineEncoder encodes the lines of the records Stream.Append wrote on
// goroutines of their own, a batch of lineBatch records each, while the
// mapping goes on; Take waits for them. At most lineBatches batches are out
// at once (a full one waits for the oldest to come back), so the records'
// buffers held are bounded, and the batches are reused.
type lineEncoder struct {
	cur  []lineJob      // being filled
	free [][]lineJob    // back, to fill again
	done chan []lineJob // batches encoded (room for every batch out)
	out  int            // batches out
}

// lineJob is one record's line to encode: out is its output's index.
type lineJob struct {
	out  int
	p    asr.Prepared // placed (asr.Prepared.Place)
	line []byte
}

const (
	lineBatch   = 32
	lineBatches = 4
)

// add queues p's line for outs[i] (outs: Streams.out, which is only
// written back to, never by the encoding goroutines).
func (e *lineEncoder) add(outs []Output, i int, p asr.Prepared) {
	if e.cur == nil {
		e.cur = e.batch(outs)
	}
	e.cur = append(e.cur, lineJob{out: i, p: p})
	if len(e.cur) < lineBatch {
		return
	}
	if e.done == nil {
		e.done = make(chan []lineJob, lineBatches)
	}
	b := e.cur
	e.cur = nil
	e.out++
	go encodeLines(b, e.done)
}

// batch returns an empty batch: a reused one, a new one while fewer than
// lineBatches are out, else the oldest out once it is back.
func (e *lineEncoder) batch(outs []Output) []lineJob {
	if len(e.free) == 0 && e.out >= lineBatches {
		e.settle(outs, <-e.done)
		e.out--
	}
	if n := len(e.free); n > 0 {
		b := e.free[n-1]
		e.free = e.free[:n-1]
		return b
	}
	return make([]lineJob, 0, lineBatch)
}

// encodeLines encodes b's lines (placed: Line cannot fail) and sends b
// back on done.
func encodeLines(b []lineJob, done chan<- []lineJob) {
	lines(b)
	done <- b
}

func lines(b []lineJob) {
	for i := range b {
		b[i].line, _ = b[i].p.Line()
	}
}

// settle puts a batch's lines into their outputs and keeps the batch.
func (e *lineEncoder) settle(outs []Output, b []lineJob) {
	for i := range b {
		outs[b[i].out].JSON = b[i].line
	}
	clear(b)
	e.free = append(e.free, b[:0])
}

// finish puts every line queued into outs: the batch being filled is
// encoded here, beside the batches out, which are then waited for.
func (e *lineEncoder) finish(outs []Output) {
	if b := e.cur; b != nil {
		e.cur = nil
		lines(b)
		e.settle(outs, b)
	}
	for ; e.out > 0; e.out-- {
		e.settle(outs, <-e.done)
	}
}
