package finisher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/storesink"
	"github.com/acptap/acptap/host/wire"
)

// state is a marker's content: whether its connection is still recording
// (its mapping runs beside the tee) or being finished, and the sessions the
// connection names (known once it is handed over).
type state struct {
	State    string   `json:"state"`
	Sessions []string `json:"sessions,omitempty"`
	// Spool: the capture's end is in a finisher's memory, not yet in the wire log.
	Spool *Spool `json:"spool,omitempty"`
	// Boot: the boot a "mapped" marker was written in (BootID).
	Boot string `json:"boot,omitempty"`
}

const (
	stateRecording = "recording"
	stateFinishing = "finishing"
)

// write replaces the marker's content. The file is cut to one byte before the write, not to
// none: emptying it frees its block once writeback has allocated one, and a file system
// mounted with discard then discards the block, synchronously without a journal (this
// project's machine): 1-17 ms of acptap's exit while the wire log was being written back,
// against 0.01-0.02 ms for the cut to one byte. A reader between the two calls sees "{",
// unreadable, as it saw the empty file before.
func (m *Marker) write(s state) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := m.f.Truncate(1); err != nil {
		return fmt.Errorf("pending marker: %w", err)
	}
	if _, err := m.f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("pending marker: %w", err)
	}
	return nil
}

// HandOver records that the connection, naming sessions, goes to a
// finisher: a new connection that names one of them waits for it
// (Sessions).
func (m *Marker) HandOver(sessions []string) error {
	return m.write(state{State: stateFinishing, Sessions: sessions})
}

// readState reads a marker; ok is false when it is gone.
func readState(path string) (s state, ok bool) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return state{}, false
	}
	if err != nil || json.Unmarshal(b, &s) != nil {
		return state{}, true // unreadable or half written: assume the worst
	}
	return s, true
}

// mayWrite says whether another pending connection may still write the
// session's files: it is being finished (or abandoned) and names the
// session, or it is abandoned and nobody knows what it names. A connection
// still recording (locked, "recording") writes its own outputs as it goes:
// two live connections of one session are a matter of the session's writer
// lock, not of finishing.
func mayWrite(st *store.Store, conn, id string) bool {
	s, ok := readState(Path(st, conn))
	if !ok {
		return false
	}
	if s.State == stateMapped && s.Boot != "" && s.Boot == BootID() {
		return false // its outputs are written; what is left is the wire log's sync
	}
	held := true
	if m, locked, _ := TryLock(st, conn); locked {
		m.Release()
		held = false
	}
	switch {
	case !held:
		return true
	case s.State == stateRecording:
		return false
	case s.State == stateFinishing && s.Spool != nil:
		return true // the spooled frames may name any session
	case s.State == stateFinishing:
		return slices.Contains(s.Sessions, id)
	}
	return true
}

// WaitSession waits until no pending connection but except may still write
// session id's files (a finisher at work on it, or one to come for an
// abandoned connection).
func WaitSession(ctx context.Context, st *store.Store, id, except string) error {
	for {
		conns, err := Pending(st)
		if err != nil {
			return err
		}
		var busy []string
		for _, c := range conns {
			if c != except && mayWrite(st, c, id) {
				busy = append(busy, c)
			}
		}
		if len(busy) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("session %s: connections %v still being finished: %w", id, busy, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// SessionWait bounds how long a recording waits for the finisher of an
// earlier connection of a session it resumes.
const SessionWait = 2 * time.Minute

// Sessions is the live pipeline's SessionStore for connection Conn: before
// it tells what the store holds of a session, it waits for the finishers of
// earlier connections of that session, so the counts it records are the
// finished ones and the two never write the same files at once. It runs in
// capture, never on the tee's path; a wait that runs out is logged and the
// session is observed as it is.
type Sessions struct {
	storesink.Sessions
	Conn string
	Log  hclog.Logger
}

// Observe implements pipeline.SessionStore.
func (s Sessions) Observe(id string) (wire.Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), SessionWait)
	defer cancel()
	if err := WaitSession(ctx, s.St, id, s.Conn); err != nil && s.Log != nil {
		s.Log.Warn("observing the session while an earlier connection of it is still being finished", "session", id, "error", err)
	}
	return s.Sessions.Observe(id)
}

// State implements the pipeline's session state after a wait for another
// process's session lock: the other process may have handed its connection
// to a finisher as it exited, so its finisher is waited for first and the
// counts read are the finished ones.
func (s Sessions) State(id string) (wire.Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), SessionWait)
	defer cancel()
	if err := WaitSession(ctx, s.St, id, s.Conn); err != nil && s.Log != nil {
		s.Log.Warn("reading the session while an earlier connection of it is still being finished", "session", id, "error", err)
	}
	return s.Sessions.State(id)
}
