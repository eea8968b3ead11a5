package storesink

import (
	"errors"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
)

// Sessions is the SessionStore over a store. With Locks, a
// connection writes a session only while it holds the session's lock (see
// store.SessionLocks): Observe takes it when it is free, and marks the
// session Concurrent when another process holds it.
type Sessions struct {
	St    *store.Store
	Locks *store.SessionLocks
}

// Observe implements SessionStore.
func (s Sessions) Observe(id string) (wire.Session, error) {
	n, err := s.St.NextConnection(id)
	if err != nil {
		return wire.Session{ID: id}, err
	}
	busy := false
	if s.Locks != nil {
		ok, lerr := s.Locks.TryAcquire(id)
		busy = !ok && lerr == nil
		if lerr != nil {
			err = lerr
		}
	}
	o, serr := s.State(id)
	o.Connections, o.Concurrent = n, busy
	return o, errors.Join(err, serr)
}

// State is what the store holds of the session now (Connections left 0),
// without counting a connection: a connection that waited for another's
// lock reads it again once it holds the lock.
func (s Sessions) State(id string) (wire.Session, error) {
	lines, err := s.St.ExistingRecords(id)
	if err != nil {
		return wire.Session{ID: id}, err
	}
	plugins, err := s.St.PluginStreams(id)
	if err != nil {
		return wire.Session{ID: id, PriorLines: len(lines)}, err
	}
	events, err := s.St.ExistingAEPEvents(id)
	return wire.Session{ID: id, PriorLines: len(lines), PluginLines: plugins, AEPLines: events}, err
}

// AcquireSession waits for the session's lock until stop is closed.
func (s Sessions) AcquireSession(id string, stop <-chan struct{}) (bool, error) {
	if s.Locks == nil {
		return true, nil
	}
	return s.Locks.Acquire(id, stop)
}

// Locking reports whether the sessions are locked (Locks is set).
func (s Sessions) Locking() bool { return s.Locks != nil }

// ForgoSession gives up writing the session in this process: its lock is
// not taken from now on, so nothing mapped from stale counts is written.
func (s Sessions) ForgoSession(id string) {
	if s.Locks != nil {
		s.Locks.Forgo(id)
	}
}

// Prior implements SessionStore.
func (s Sessions) Prior(id, plugin string, n int) ([][]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	var lines [][]byte
	var err error
	if plugin == "" {
		lines, err = s.St.ExistingRecords(id)
	} else {
		lines, err = s.St.ExistingPluginRecords(id, plugin)
	}
	if err != nil {
		return nil, err
	}
	if len(lines) > n {
		lines = lines[:n]
	}
	return lines, nil
}

var (
	_ pipeline.SessionStore  = Sessions{}
	_ pipeline.SessionLocker = Sessions{}
)
