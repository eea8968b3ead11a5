package finisher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/priority"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/storesink"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// FinishReason is what the plugins are told when a finished connection's
// wire log ends: the same as in the foreground.
const FinishReason = "agent exited"

// Options say how to map a connection.
type Options struct {
	Store  *store.Store
	Logger hclog.Logger
	// Pipeline returns the pipeline options for a connection's wire log:
	// plugins, revisions, limits. Complete sets the rest (wire path,
	// connection, agent, mode, sink, sessions, finish reason).
	Pipeline func(hdr wire.Header) pipeline.Options
	// Relay, when set, starts a forwarder for one connection's AEP events
	// (the relay outbox; the relay drops those the foreground delivered
	// already) and its stop, which Complete calls once the outputs are
	// written and before the connection stops being pending.
	Relay func() (fwd storesink.EventForwarder, stop func())
	// Spool is the memory file of the connection's unwritten capture, when this finisher
	// was handed one (SpawnEarly); a marker that says a spool exists without it gets
	// the spool's frames declared as gaps.
	Spool *os.File
	// Arena is the recording's queue arena as mapped here (captured.MapArenaFile), when
	// the finisher inherited it (ArenaFD): the spool's records of chunks that lie there
	// are read from it in place.
	Arena []byte
}

// Result is what completing one connection wrote.
type Result struct {
	Conn    string
	Stats   pipeline.Stats
	Streams []string
	Counts  map[string]int
	// GaveUp: a plugin gave up before the end of the wire log (declared in
	// its streams, as the foreground would have).
	GaveUp bool
	// Synced: its recording had mapped it; the finisher synced the wire log (Marker.Mapped).
	Synced bool
}

// Complete maps the marker's connection from its wire log and removes the
// marker once every output is written. On error the connection stays
// pending (the lock is released) for the next try.
func Complete(ctx context.Context, o Options, m *Marker) (Result, error) {
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	res := Result{Conn: m.Conn}
	path := o.Store.WirePath(m.Conn)
	if ok, err := syncMapped(m, path, log); ok {
		res.Synced = true
		return res, err
	}
	r, err := wire.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		// The recording died between its marker and its wire log: there is
		// nothing to map.
		log.Warn("pending connection has no wire log; nothing to finish", "connection", m.Conn, "wire", path)
		return res, m.Done()
	}
	if err != nil {
		m.Release()
		return res, fmt.Errorf("finish %s: %w", m.Conn, err)
	}
	hdr := r.Header()
	r.Close()
	if s, _ := readState(m.path); s.Spool != nil {
		if err := captureSpool(ctx, o, m, s, hdr, log); err != nil {
			m.Release()
			return res, fmt.Errorf("finish %s: %w", m.Conn, err)
		}
	}
	// record closed the wire log without waiting for the disk (its exit
	// does not wait on it): it is made durable before it is mapped.
	if err := wire.SyncFile(path); err != nil {
		log.Warn("wire log not synced", "connection", m.Conn, "error", err)
	}
	sink := storesink.New(o.Store, log)
	sink.Truncate = true
	// A finisher writes a session only while no other acptap process does
	// (the session writer locks of record, issue 18.6).
	locks := o.Store.Locks()
	sink.Locks = locks
	stopRelay := func() {}
	if o.Relay != nil {
		sink.Forward, stopRelay = o.Relay()
	}
	po := o.Pipeline(hdr)
	po.WirePath, po.Connection, po.Agent = path, m.Conn, hdr.Agent.Command
	po.Mode, po.FinishReason, po.Sink = sdk.ModeRecord, FinishReason, sink
	po.Sessions = storesink.Sessions{St: o.Store}
	// The whole wire log is there, as for rebuild: batches as large as rebuild's (each one
	// costs the host and every plugin a round of wake-ups whatever its size).
	po.BatchFrames = max(po.BatchFrames, pipeline.OfflineBatchFrames)
	if po.Logger == nil {
		po.Logger = log
	}
	p := pipeline.New(po)
	if err := p.Rebuild(ctx); err != nil {
		sink.Close()
		stopRelay()
		m.Release()
		return res, fmt.Errorf("finish %s: %w", m.Conn, err)
	}
	stats, werr := p.Wait()
	serr := sink.Close()
	stopRelay()
	res.Stats, res.Streams, res.Counts, res.GaveUp = stats, sink.Streams(), sink.Counts(), sink.GaveUp()
	if serr != nil && onlyBusy(serr) && werr == nil && ctx.Err() == nil {
		// Another acptap process holds a session this connection names
		// (two windows on one session): as record does, its outputs for
		// that session are not written; the wire log keeps its frames.
		log.Warn("session not written: another acptap process is writing it; its frames are in this connection's wire log (acptap rebuild maps them)",
			"connection", m.Conn, "error", serr)
		serr = nil
	}
	if err := errors.Join(ctx.Err(), werr, serr); err != nil {
		m.Release()
		return res, fmt.Errorf("finish %s: %w", m.Conn, err)
	}
	log.Info("connection finished", "connection", m.Conn, "frames", stats.Frames, "plugins", stats.Plugins,
		"streams", res.Streams, "gave_up", res.GaveUp)
	return res, m.Done()
}

// pollEvery is how often CompleteAll looks again at a marker another
// process holds.
const pollEvery = 20 * time.Millisecond

// CompleteAll completes every pending connection nobody maps. With wait, it
// also waits for those a finisher is mapping (and completes them if it died
// first), so that afterwards the store holds every finished connection's
// outputs; a connection still recording is never waited for. Without wait,
// it leaves held connections to their holder. It returns what it completed; it goes on after an error and
// returns them all.
func CompleteAll(ctx context.Context, o Options, wait bool) ([]Result, error) {
	conns, err := Pending(o.Store)
	if err != nil {
		return nil, err
	}
	var out []Result
	var errs []error
	for _, c := range conns {
		m, err := lockPending(ctx, o.Store, c, wait)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if m == nil {
			continue
		}
		res, err := Complete(ctx, o, m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, res)
	}
	return out, errors.Join(errs...)
}

// lockPending locks c's marker; nil when it is gone, or held and !wait.
func lockPending(ctx context.Context, st *store.Store, c string, wait bool) (*Marker, error) {
	for {
		m, ok, err := TryLock(st, c)
		if err != nil || ok {
			return m, err
		}
		if !wait {
			return nil, nil
		}
		// Held and still recording: a live connection, which may run for
		// hours; its outputs are written as it goes, so nothing waits for it.
		s, ok := readState(Path(st, c))
		if !ok || s.State == stateRecording {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

// Abandoned says whether some pending connection is held by nobody.
func Abandoned(st *store.Store) bool {
	conns, _ := Pending(st)
	for _, c := range conns {
		if m, ok, _ := TryLock(st, c); ok {
			m.Release()
			return true
		}
	}
	return false
}

// MarkerFD is the descriptor a finisher started by Spawn with a marker
// finds it on.
const MarkerFD = 3

// Spawn starts `self args…` as a detached finisher: its own session (out of
// the editor's process group and terminal), stdio on /dev/null (it holds
// none of the editor's pipes), and, when m is not nil, m's locked file on
// MarkerFD, so the lock passes to it without a moment free. It waits only
// for the exec, which is why the child starts at the normal priority and
// lowers its own (LowerPriority) as it starts.
func Spawn(self string, args []string, m *Marker) error {
	cmd := exec.Command(self, args...)
	cmd.SysProcAttr = detach()
	if m != nil {
		cmd.ExtraFiles = []*os.File{m.File()}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start finisher: %w", err)
	}
	_ = cmd.Process.Release()
	return nil
}

// LowerPriority is the finisher's first step: it runs below the tees of
// the recordings going on (package priority).
func LowerPriority() error { return priority.LowerSelf() }

// Inherited returns the marker file a finisher started by Spawn inherited,
// made close-on-exec so the plugins it starts do not hold the lock.
func Inherited() *os.File {
	syscall.CloseOnExec(MarkerFD)
	return os.NewFile(MarkerFD, "pending-marker")
}

// WaitIdle waits until no connection of the store is being finished: every
// finisher has finished (a connection still recording, whose process holds
// its marker as "recording", is not waited for). It fails when a marker is
// left that nobody holds (a mapping that died; CompleteAll finishes it) or
// when ctx ends.
func WaitIdle(ctx context.Context, st *store.Store) error {
	for {
		all, err := Pending(st)
		if err != nil {
			return err
		}
		var conns []string
		for _, c := range all {
			if m, ok, _ := TryLock(st, c); ok {
				m.Release()
				return fmt.Errorf("connection %s is pending and nobody maps it", c)
			}
			if s, ok := readState(Path(st, c)); ok && s.State != stateRecording {
				conns = append(conns, c)
			}
		}
		if len(conns) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pending connections %v: %w", conns, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// onlyBusy reports whether every error joined in err is a busy session.
func onlyBusy(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !onlyBusy(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, store.ErrSessionBusy)
}
