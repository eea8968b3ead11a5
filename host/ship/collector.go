package ship

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/private"
)

// StateDir is the collector's own directory in a central store: per output
// how much of it is written and durable, and the lock that keeps two
// collectors from writing one file at once.
const StateDir = ".collect"

// Collector materialises a central store: <root>/<origin>/<output path>,
// each output byte-identical to the origin's. Several collectors (processes)
// may share one durable consumer and one root.
type Collector struct {
	Root    string
	Prefix  string
	Durable string
	Conn    *Conn
	Log     hclog.Logger
	// Wait is how long a chunk that arrived before its predecessor is
	// held back before it is delivered again (default 100 ms).
	Wait time.Duration
	// Batch is how many messages a collector asks for at once (default
	// 256); collectors sharing a consumer split the work by batches.
	Batch int
	// AckWait is how long the server waits for an acknowledgement before
	// it delivers a chunk again (default 30 s).
	AckWait time.Duration

	stats CollectStats
	mu    sync.Mutex // one message at a time per collector process
}

// CollectStats counts what a collector did.
type CollectStats struct {
	Messages   atomic.Int64 // messages handled
	Lines      atomic.Int64 // lines appended
	Bytes      atomic.Int64
	Duplicates atomic.Int64 // chunks the output already held (a resend or a redelivery)
	Early      atomic.Int64 // chunks that came before their predecessor and were delivered again
	Busy       atomic.Int64 // chunks of an output another collector was writing, delivered again
	Rotated    atomic.Int64 // outputs moved aside for a new generation
	Stale      atomic.Int64 // chunks of an older generation than the output's
	Rejected   atomic.Int64 // messages that are not acptap chunks or name no output (terminated)
}

// Stats is a snapshot of the counters.
func (c *Collector) Stats() map[string]int64 {
	s := &c.stats
	return map[string]int64{"messages": s.Messages.Load(), "lines": s.Lines.Load(), "bytes": s.Bytes.Load(),
		"duplicates": s.Duplicates.Load(), "early": s.Early.Load(), "busy": s.Busy.Load(),
		"rotated": s.Rotated.Load(), "stale": s.Stale.Load(), "rejected": s.Rejected.Load()}
}

func (c *Collector) log() hclog.Logger {
	if c.Log == nil {
		return hclog.NewNullLogger()
	}
	return c.Log
}

// Consumer creates or opens the durable consumer the collectors share.
func (c *Collector) Consumer(ctx context.Context) (jetstream.Consumer, error) {
	ackWait := c.AckWait
	if ackWait <= 0 {
		ackWait = 30 * time.Second
	}
	return c.Conn.Stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       c.Durable,
		Description:   "acptap collect: writes every origin's outputs into a central store",
		FilterSubject: c.Prefix + ".>",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 4096,
	})
}

// Run consumes until ctx is done. Messages come in batches; each output a
// batch touches is written and synced once, its state saved, and only then
// are its messages acknowledged, so a collector killed at any point loses
// nothing: what was not acknowledged is delivered again and what was
// already written is recognised.
func (c *Collector) Run(ctx context.Context) error {
	if err := private.MkdirAll(c.Root); err != nil {
		return err
	}
	cons, err := c.Consumer(ctx)
	if err != nil {
		return fmt.Errorf("consumer %s: %w", c.Durable, err)
	}
	batch := c.Batch
	if batch <= 0 {
		batch = 256
	}
	for ctx.Err() == nil {
		mb, err := cons.Fetch(batch, jetstream.FetchMaxWait(250*time.Millisecond))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			c.log().Warn("collect: fetch", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		var msgs []jetstream.Msg
		for m := range mb.Messages() {
			msgs = append(msgs, m)
		}
		if err := mb.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
			c.log().Debug("collect: fetch ended", "error", err)
		}
		c.HandleBatch(msgs)
	}
	return nil
}

// HandleBatch writes a batch of messages and acknowledges each, or asks
// for it again. Messages of one subject are taken in their order.
func (c *Collector) HandleBatch(msgs []jetstream.Msg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var order []string
	bySubject := map[string][]jetstream.Msg{}
	for _, m := range msgs {
		c.stats.Messages.Add(1)
		if _, ok := bySubject[m.Subject()]; !ok {
			order = append(order, m.Subject())
		}
		bySubject[m.Subject()] = append(bySubject[m.Subject()], m)
	}
	for _, subj := range order {
		c.handleSubject(subj, bySubject[subj])
	}
}

func (c *Collector) handleSubject(subj string, msgs []jetstream.Msg) {
	origin, rel, err := ParseSubject(c.Prefix, subj)
	if err != nil {
		c.log().Warn("collect: not an output subject; dropped", "subject", subj, "error", err)
		for _, m := range msgs {
			c.stats.Rejected.Add(1)
			_ = m.Term()
		}
		return
	}
	w, ok, err := c.openOutput(origin, rel)
	if err != nil || !ok {
		if err != nil {
			c.log().Error("collect: cannot open output; will retry", "subject", subj, "error", err)
		} else {
			c.stats.Busy.Add(int64(len(msgs)))
		}
		for _, m := range msgs {
			_ = m.NakWithDelay(c.wait())
		}
		return
	}
	defer w.unlock()
	var acks []jetstream.Msg
	ackAll := func() {
		for _, m := range acks {
			_ = m.Ack()
		}
		acks = acks[:0]
	}
	for k, m := range msgs {
		h, err := chunkHeaders(m.Headers())
		if err != nil {
			c.log().Warn("collect: not an acptap chunk; dropped", "subject", subj, "error", err)
			c.stats.Rejected.Add(1)
			_ = m.Term()
			continue
		}
		v, err := w.take(c, h, m.Data())
		if err == nil && v == done {
			acks = append(acks, m)
			continue
		}
		if err != nil {
			// A write that failed (disk full, …): nothing of this batch
			// after the last durable point is acknowledged; it comes again,
			// and nothing after it is written before it.
			c.log().Error("collect: write failed; will retry", "subject", subj, "error", err)
			w.discard()
			for _, r := range append(acks, msgs[k:]...) {
				_ = r.NakWithDelay(time.Second)
			}
			return
		}
		// retry: the rest of this subject's batch comes after a missing
		// chunk; write what came before and ask for the rest again.
		for _, r := range msgs[k:] {
			c.stats.Early.Add(1)
			_ = r.NakWithDelay(c.wait())
		}
		break
	}
	if err := w.flush(); err != nil {
		c.log().Error("collect: write failed; will retry", "subject", subj, "error", err)
		for _, m := range acks {
			_ = m.NakWithDelay(time.Second)
		}
		return
	}
	ackAll()
}

func (c *Collector) wait() time.Duration {
	if c.Wait > 0 {
		return c.Wait
	}
	return 100 * time.Millisecond
}

type verdict int

const (
	done verdict = iota
	retry
)

// outState is what a collector knows of one output: its generation, the
// complete lines and bytes written and synced, and the bytes of a long
// line received in parts so far.
type outState struct {
	Gen       uint64 `json:"gen"`
	Lines     int64  `json:"lines"`
	Size      int64  `json:"size"`
	PartBytes int64  `json:"partBytes,omitempty"`
}

// output is one output file held (locked) by this collector while it takes
// a batch's chunks: durable is what the state file says, st what it will
// say once buf is written and synced.
type output struct {
	rel, out, statePath string
	durable, st         outState
	buf                 []byte
	unlock              func()
	whole               bool
}

func (c *Collector) openOutput(origin, rel string) (*output, bool, error) {
	w := &output{rel: rel, out: filepath.Join(c.Root, origin, filepath.FromSlash(rel)),
		statePath: filepath.Join(c.Root, StateDir, origin, filepath.FromSlash(rel)+".state"),
		whole:     filepath.Base(rel) == "id"}
	unlock, ok, err := tryLock(w.statePath + ".lock")
	if err != nil || !ok {
		return nil, ok, err
	}
	w.unlock = unlock
	if w.st, err = c.loadState(w.statePath, w.out); err != nil {
		unlock()
		return nil, false, err
	}
	w.durable = w.st
	return w, true, nil
}

// take decides what a chunk adds to the output and queues it.
func (w *output) take(c *Collector, h chunkHead, data []byte) (verdict, error) {
	switch {
	case h.gen < w.st.Gen:
		c.stats.Stale.Add(1)
		return done, nil
	case h.gen > w.st.Gen:
		if h.line != 1 || h.partOffset != 0 {
			return retry, nil
		}
		if err := w.flush(); err != nil {
			return done, err
		}
		if w.st.Size > 0 || w.st.Gen > 0 {
			if err := rotate(w.out, w.st.Gen); err != nil {
				return done, err
			}
			c.stats.Rotated.Add(1)
		}
		w.st = outState{Gen: h.gen}
		w.durable = outState{}
		if err := c.saveState(w.statePath, w.st); err != nil {
			return done, err
		}
		w.durable = w.st
	}
	have := w.st.Lines
	var add []byte
	var lines int64
	switch {
	case h.line > have+1:
		return retry, nil
	case h.lineBytes > 0: // a part of one long line
		if h.line <= have || h.partOffset+int64(len(data)) <= w.st.PartBytes {
			c.stats.Duplicates.Add(1)
			return done, nil
		}
		if h.partOffset > w.st.PartBytes {
			return retry, nil
		}
		add = data[w.st.PartBytes-h.partOffset:]
		if h.partOffset+int64(len(data)) == h.lineBytes {
			lines = 1
		}
	default:
		end := h.line + h.count - 1
		if end <= have {
			c.stats.Duplicates.Add(1)
			return done, nil
		}
		if w.st.PartBytes != 0 {
			return done, fmt.Errorf("%s: whole lines after %d bytes of a long line", w.rel, w.st.PartBytes)
		}
		add = skipLines(data, have-h.line+1)
		lines = end - have
	}
	if w.whole {
		w.buf = append(w.buf[:0], add...)
	} else {
		w.buf = append(w.buf, add...)
	}
	w.st.Size += int64(len(add))
	if h.lineBytes > 0 {
		w.st.PartBytes += int64(len(add))
		if lines == 1 {
			w.st.PartBytes = 0
		}
	}
	w.st.Lines += lines
	c.stats.Lines.Add(lines)
	c.stats.Bytes.Add(int64(len(add)))
	return done, nil
}

// flush writes what take queued, syncs it, and saves the state.
func (w *output) flush() error {
	if len(w.buf) == 0 && w.st == w.durable {
		return nil
	}
	var err error
	if w.whole {
		if err = private.MkdirAll(filepath.Dir(w.out)); err == nil {
			err = private.WriteFileAtomic(w.out, w.buf)
		}
	} else {
		err = appendSynced(w.out, w.durable.Size, w.buf)
	}
	if err == nil {
		err = saveState(w.statePath, w.st)
	}
	if err != nil {
		w.discard()
		return err
	}
	w.buf = w.buf[:0]
	w.durable = w.st
	return nil
}

// discard forgets what was queued but not made durable.
func (w *output) discard() {
	w.buf = w.buf[:0]
	w.st = w.durable
}

// loadState reads an output's state and makes the file agree with it: bytes
// past the state's size were written but never acknowledged (the collector
// died before it could), so they are cut and come again. Without a state
// (a first chunk, or a lost state directory) the file's complete lines are
// counted and a torn tail is cut.
func (c *Collector) loadState(statePath, out string) (outState, error) {
	var st outState
	b, err := os.ReadFile(statePath)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &st); err != nil {
			return st, fmt.Errorf("%s: %w", statePath, err)
		}
		fi, err := os.Stat(out)
		if errors.Is(err, fs.ErrNotExist) {
			if st.Size == 0 {
				return st, nil
			}
			return st, fmt.Errorf("%s: gone, though %d bytes of it were written", out, st.Size)
		}
		if err != nil {
			return st, err
		}
		if fi.Size() > st.Size {
			if err := os.Truncate(out, st.Size); err != nil {
				return st, err
			}
		} else if fi.Size() < st.Size {
			return st, fmt.Errorf("%s: %d bytes, shorter than the %d written and synced", out, fi.Size(), st.Size)
		}
		return st, nil
	case !errors.Is(err, fs.ErrNotExist):
		return st, err
	}
	f, err := os.Open(out)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	defer f.Close()
	lines, committed, err := store.CommittedLines(f)
	if err != nil {
		return st, err
	}
	if err := os.Truncate(out, committed); err != nil {
		return st, err
	}
	// The generation is unknown: 1 takes the file as the origin's first;
	// a newer one is rotated in when its first line comes.
	return outState{Gen: 1, Lines: int64(lines), Size: committed}, nil
}

func (c *Collector) saveState(path string, st outState) error { return saveState(path, st) }

func saveState(path string, st outState) error {
	b, _ := json.Marshal(st)
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	return private.WriteFileAtomic(path, b)
}

// appendSynced writes b at offset size of path (creating it and its
// directories private) and syncs it.
func appendSynced(path string, size int64, b []byte) error {
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, private.FileMode)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b, size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rotate moves an output of an older generation aside (<file>.prev-g<gen>),
// the way a local rebuild keeps what it replaced.
func rotate(out string, gen uint64) error {
	err := os.Rename(out, fmt.Sprintf("%s.prev-g%d", out, gen))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// skipLines drops the first n lines of b.
func skipLines(b []byte, n int64) []byte {
	for ; n > 0 && len(b) > 0; n-- {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	return b
}

// RunUntilCaughtUp consumes until the consumer has nothing pending and
// nothing unacknowledged (every collector sharing it is done), or ctx ends.
func (c *Collector) RunUntilCaughtUp(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	for {
		select {
		case err := <-errc:
			return err
		case <-time.After(100 * time.Millisecond):
		}
		cons, err := c.Conn.Stream.Consumer(ctx, c.Durable)
		if err != nil {
			continue
		}
		info, err := cons.Info(ctx)
		if err != nil {
			continue
		}
		if info.NumPending == 0 && info.NumAckPending == 0 && info.NumRedelivered == 0 {
			cancel()
			return <-errc
		}
	}
}
