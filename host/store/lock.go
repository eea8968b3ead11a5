package store

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acptap/acptap/internal/private"
)

// LockFile is the file, under the store root, whose byte ranges lock
// sessions: one open descriptor serves every session of a process.
const LockFile = "locks/sessions"

// ErrSessionBusy means another process holds the session's lock.
var ErrSessionBusy = errors.New("session is being written by another acptap process")

// SessionLocks serialises the processes that write one session: a process
// writes a session's files (its ASR streams and AEP file) only while it
// holds the session's lock, a POSIX record lock on one byte of LockFile
// (at an offset hashed from the session ID), so two connections recording
// the same session at once (two editor windows resuming it) cannot
// interleave two streams in one file. Locks are held until ReleaseAll
// (the end of the connection) or the process's end, when the kernel drops
// them. Methods are safe for concurrent use.
type SessionLocks struct {
	path string

	mu      sync.Mutex
	f       *os.File
	held    map[string]bool
	forgone map[string]bool
}

// Locks returns the store's session locks for this process. Call it once
// per process (record does, per connection): POSIX record locks belong to
// the process and are all dropped when it closes any descriptor of the
// file.
func (s *Store) Locks() *SessionLocks {
	return &SessionLocks{path: filepath.Join(s.root, LockFile), held: map[string]bool{}}
}

// TryAcquire takes the session's lock if no other process holds it.
func (l *SessionLocks) TryAcquire(id string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[id] {
		return true, nil
	}
	if l.forgone[id] {
		return false, nil
	}
	if l.f == nil {
		if err := private.MkdirAll(filepath.Dir(l.path)); err != nil {
			return false, fmt.Errorf("session lock: %w", err)
		}
		f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, private.FileMode)
		if err != nil {
			return false, fmt.Errorf("session lock: %w", err)
		}
		l.f = f
	}
	ok, err := lockRange(l.f, lockOffset(id))
	if err != nil {
		return false, fmt.Errorf("session lock %s: %w", id, err)
	}
	if ok {
		l.held[id] = true
	}
	return ok, nil
}

// Acquire waits for the session's lock until stop is closed; it reports
// whether it holds the lock.
func (l *SessionLocks) Acquire(id string, stop <-chan struct{}) (bool, error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := l.TryAcquire(id)
		if ok || err != nil {
			return ok, err
		}
		select {
		case <-stop:
			return l.TryAcquire(id) // a last try: the other may just have ended
		case <-t.C:
		}
	}
}

// Forgo makes TryAcquire refuse the session from now on in this process
// (unless it is held already): a connection that stopped waiting for it
// must not write it later from counts that are stale by then.
func (l *SessionLocks) Forgo(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.forgone == nil {
		l.forgone = map[string]bool{}
	}
	l.forgone[id] = true
}

// Held reports whether this process holds the session's lock.
func (l *SessionLocks) Held(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[id]
}

// ReleaseAll drops every lock (closing the descriptor drops them all).
func (l *SessionLocks) ReleaseAll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.held)
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// lockOffset is the byte of LockFile that stands for the session: 62 bits
// of its FNV-1a hash, so two sessions share a byte (and wait for each
// other) only by a collision of those.
func lockOffset(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return int64(h.Sum64() >> 2)
}
