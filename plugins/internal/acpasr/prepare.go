package acpasr

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
)

// Preparing a batch ahead of its mapping. What the mapping of a frame does
// first does not depend on the mapping's state: parsing the frame into its
// tape, the schema check (which follows only the conversation's requests,
// in its own Checker) and the copy of the frame's bytes the mapped objects
// keep. A plugin server reads the next batch off the connection while the
// current one is mapped (internal/pluginwire's request reader); it calls
// PrepareFrames there, so that this work runs beside the mapping of the
// batch before, and Map takes the answers instead of doing it again.

// maxPreparedEnts is the most tape entries a prepared frame's tape keeps
// room for between batches (a tape that grew larger for a large frame is
// dropped).
const maxPreparedEnts = 128

// maxSlotEnts is the most tape entries a prepared slot keeps room for in
// all (its batch's frames together; the tapes beyond are dropped): with the
// offline feeders' batches of 1,024 frames, ~20 entries a frame here.
const maxSlotEnts = 1 << 15

// preparer holds the two batches that can be prepared at once: the one
// being mapped and the next. PrepareFrames fills them in turn (next) and
// Map takes them in the same order (take); the fields of the two sides are
// distinct, and the server orders the calls (a batch is prepared before it
// is mapped, and at most one batch ahead).
type preparer struct {
	slots [2]preparedBatch
	next  int // the slot PrepareFrames fills next (the preparing goroutine's)
	take  int // the slot Map takes next (the mapping goroutine's)
}

// preparedBatch is one prepared batch: the frames (their first element and
// count, so Map can tell it is given the same batch) and one answer each.
type preparedBatch struct {
	first *sdk.Frame
	n     int
	res   []prepRes
	// copyData: each frame's bytes are set as what the objects built from
	// its tape alias (lent: a copy only in a test binary; PrepareFrames,
	// not PrepareSources).
	copyData bool
	// ready counts the frames prepared; Map waits on c (under mu, with
	// waiting set) for one not yet.
	ready   atomic.Int32
	waiting atomic.Bool
	mu      sync.Mutex
	c       *sync.Cond
	// lent are the preparing goroutine's frameTape.lent (in a test binary).
	lent [][]byte
}

// lend is frameTape.lend for the preparing goroutine: the copies are
// poisoned once the batch is mapped (done).
func (p *preparedBatch) lend(poison bool, data []byte) []byte {
	if !poison {
		return data
	}
	c := bytes.Clone(data)
	p.lent = append(p.lent, c)
	return c
}

// prepRes is a frame's prepared answer (prepareFrame resets its fields by
// name: a field added here is reset there).
type prepRes struct {
	f *sdk.Frame
	// tape is the frame's tape when parsed; Map swaps it into the conn's.
	tape   jsonscan.Tape
	parsed bool
	// data is the bytes the objects built from the tape alias
	// (parseRPCTape: frameTape.lend's), when parsed and valid UTF-8.
	data []byte
	// The schema check: the problem and entries checkFrame returns, whether
	// the frame conforms, the detail of the check's failure to start
	// (initSchema), or the panic of a bug on the way (recovered here, raised
	// again where the check would have raised it).
	msg        string
	entries    []int
	conforming bool
	initErr    string
	panicked   any
}

// PrepareFrames does the mapping's first steps of frames ahead of Map (see
// above) in two parts: PrepareFrames itself marks the batch as being
// prepared, and the function it returns does the work, frame by frame, on a
// goroutine other than Map's, while Map (called once PrepareFrames has
// returned) maps the frames already prepared and waits for the others. It
// is called once for each batch, in the order the batches are mapped, the
// function run to its end before the next batch's PrepareFrames, and for a
// batch only once the batch two before it has been mapped. Once it has
// been called, every batch must be prepared before it is mapped. A batch
// Map is given unprepared is mapped from the start (the in-process host
// does not prepare).
func (s *Session) PrepareFrames(frames []sdk.Frame) (run func()) { return s.c.prepare(frames, true) }

// PrepareSources is PrepareFrames for a translator's batch, whose frames
// the engine does not map themselves (MapPrepared maps translations of
// them): the bytes the mapped objects would alias are not set ahead, as
// only a translation passed through on the frame's bytes could use them
// (parseRPCTape lends those when it maps them).
func (s *Session) PrepareSources(frames []sdk.Frame) (run func()) { return s.c.prepare(frames, false) }

func (c *conn) prepare(frames []sdk.Frame, copyData bool) func() {
	if len(frames) == 0 {
		return func() {}
	}
	p := &c.prep.slots[c.prep.next]
	c.prep.next ^= 1
	p.first, p.n, p.copyData = &frames[0], len(frames), copyData
	if cap(p.res) < len(frames) {
		p.res = append(p.res[:cap(p.res)], make([]prepRes, len(frames)-cap(p.res))...)
	}
	p.res = p.res[:len(frames)]
	p.ready.Store(0)
	return func() {
		i := 0
		defer func() { // whatever happens, Map does not wait for ever
			if i < len(frames) {
				for ; i < len(frames); i++ {
					p.res[i] = prepRes{f: &frames[i], panicked: "acpasr: preparing the batch stopped"}
				}
				p.publish(len(frames))
			}
		}()
		for i < len(frames) {
			c.prepareFrame(p, &p.res[i], &frames[i], p.copyData)
			i++
			p.publish(i)
		}
	}
}

// publish says the first n frames are prepared.
func (p *preparedBatch) publish(n int) {
	p.ready.Store(int32(n))
	if p.waiting.Load() {
		p.mu.Lock()
		p.cond().Broadcast()
		p.mu.Unlock()
	}
}

// wait waits until frame i is prepared.
func (p *preparedBatch) wait(i int) {
	if int(p.ready.Load()) > i {
		return
	}
	p.mu.Lock()
	p.waiting.Store(true)
	for int(p.ready.Load()) <= i {
		p.cond().Wait()
	}
	p.waiting.Store(false)
	p.mu.Unlock()
}

// cond is the batch's condition (p.mu is held).
func (p *preparedBatch) cond() *sync.Cond {
	if p.c == nil {
		p.c = sync.NewCond(&p.mu)
	}
	return p.c
}

func (c *conn) prepareFrame(p *preparedBatch, r *prepRes, f *sdk.Frame, copyData bool) {
	// Every field but the tape reset (not a whole-struct copy: the tape is
	// most of its size).
	r.f, r.parsed, r.data = f, false, nil
	r.msg, r.entries, r.conforming, r.initErr, r.panicked = "", nil, false, "", nil
	if f.Kind != sdk.KindLine {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
		}
	}()
	r.parsed = r.tape.Parse(f.Data)
	if copyData && r.parsed && r.tape.ValidUTF8() {
		r.data = p.lend(c.ft.poison, f.Data) // c.ft.poison is set before any batch
	}
	if f.Dir != sdk.C2A && f.Dir != sdk.A2C {
		return
	}
	if r.initErr = c.initSchema(f); r.initErr != "" || c.schema == nil || c.schema.off {
		return
	}
	r.msg, r.entries, r.conforming = c.schema.check(f, &r.tape, r.parsed)
}

// takePrepared returns frames' prepared answers, or nil when the batch was
// not prepared.
func (c *conn) takePrepared(frames []sdk.Frame) *preparedBatch {
	if len(frames) == 0 {
		return nil
	}
	p := &c.prep.slots[c.prep.take]
	if p.first != &frames[0] || p.n != len(frames) {
		return nil
	}
	c.prep.take ^= 1
	return p
}

// done drops what a mapped batch's answers refer to (the frames, their
// bytes), keeping the tapes' room for the next batch.
func (p *preparedBatch) done() {
	p.wait(p.n - 1) // the preparing goroutine is done with the batch
	for _, b := range p.lent {
		for i := range b {
			b[i] = 0xff
		}
	}
	clear(p.lent)
	p.lent = p.lent[:0]
	kept := 0
	for i := range p.res {
		r := &p.res[i]
		r.tape.Release()
		if cap(r.tape.Ents) > maxPreparedEnts || cap(r.tape.Conts) > maxPreparedEnts || kept+cap(r.tape.Ents) > maxSlotEnts {
			r.tape = jsonscan.Tape{}
		}
		kept += cap(r.tape.Ents)
		// What refers to the batch dropped, field by field (prepareFrame
		// resets the rest before the slot's next use).
		r.f, r.data, r.entries, r.panicked, r.msg, r.initErr = nil, nil, nil, nil, "", ""
	}
	p.first, p.n = nil, 0
}

// preparedCheck is checkFrame for the frame r was prepared for: its tape
// becomes the conn's (as frameTape.parse would have left it), and the
// check's answer is the one found then.
func (c *conn) preparedCheck(r *prepRes) (string, []int) {
	f := r.f
	if f.Kind != sdk.KindLine {
		return "", nil
	}
	ft := &c.ft
	ft.t, r.tape = r.tape, ft.t
	ft.gen++
	ft.newSlab()
	ft.f, ft.data, ft.ok = f, nil, r.parsed
	ft.pdata, r.data = r.data, nil
	if r.panicked != nil {
		panic(r.panicked)
	}
	if r.initErr != "" {
		c.cur = f
		c.diag(sdk.SeverityError, "", sdk.SummaryInternal, r.initErr)
		return "", nil
	}
	if r.conforming {
		c.conforming = f
	}
	return r.msg, r.entries
}
