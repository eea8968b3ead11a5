package finisher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/private"
)

// Dir is the store directory of pending markers.
const Dir = "pending"

// ErrMarkerGone means the inherited marker is no longer the connection's: the recording
// completed the connection itself (a standby finisher then has nothing to do).
var ErrMarkerGone = errors.New("not the inherited marker (the connection was completed)")

// ErrUnsupported means markers cannot be locked on this system: record
// then finishes its mapping in the foreground.
var ErrUnsupported = errors.New("pending markers need flock")

// Path is <store>/pending/<escaped connection>.
func Path(st *store.Store, conn string) string {
	return filepath.Join(st.Root(), Dir, store.EscapeID(conn))
}

// Marker is a connection's pending marker, held locked.
type Marker struct {
	Conn    string
	path    string
	f       *os.File
	parents []*os.File // write ends of the pipes early finishers wait on (SpawnEarly)
	hold    bool       // HoldParents: the pipes close with the process, not at Done or Release
	early   []int      // their process ids (EarlyAlive)
}

// Create makes the connection's marker and locks it.
func Create(st *store.Store, conn string) (*Marker, error) {
	path := Path(st, conn)
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("pending marker: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, private.FileMode)
	if err != nil {
		return nil, fmt.Errorf("pending marker: %w", err)
	}
	if ok, err := tryLock(f); err != nil || !ok {
		f.Close()
		if err == nil {
			err = errors.New("locked by another process")
		}
		return nil, fmt.Errorf("pending marker %s: %w", path, err)
	}
	m := &Marker{Conn: conn, path: path, f: f}
	if err := m.write(state{State: stateRecording}); err != nil {
		m.Release()
		return nil, err
	}
	return m, nil
}

// Adopt takes over a marker whose locked file this process inherited.
func Adopt(st *store.Store, conn string, f *os.File) (*Marker, error) {
	m := &Marker{Conn: conn, path: Path(st, conn), f: f}
	if !m.current() {
		f.Close()
		return nil, fmt.Errorf("pending marker %s: %w", m.path, ErrMarkerGone)
	}
	return m, nil
}

// File is the locked marker file, for a child that takes over (Spawn).
func (m *Marker) File() *os.File { return m.f }

// Done removes the marker and releases the lock: the connection is
// complete.
func (m *Marker) Done() error {
	err := os.Remove(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	m.letGo()
	if err != nil {
		return fmt.Errorf("remove pending marker: %w", err)
	}
	return nil
}

// Release gives up the lock and leaves the connection pending.
func (m *Marker) Release() {
	m.f.Close()
	m.letGo()
}

// HoldParents keeps the pipes the early finishers (SpawnEarly) wait on open until this
// process exits, instead of closing them when it lets go of the marker (Done, Release). For a
// process that exits as soon as it has let go (acptap record): its exit tears down the memory
// a large backlog used (the queue arena's pages, 10-20 ms at 128-224 MiB), and a finisher that
// starts then takes a CPU from that teardown, and the LRU lock of the very pages it reads
// (the spool's). Closed by the exit, the pipes wake it after the teardown (exit_mm comes
// before exit_files): 128 MiB exit p50 33-36 -> 25-27 ms, 224 MiB 42 -> 35-38 ms.
func (m *Marker) HoldParents() { m.hold = true }

// letGo tells the finishers SpawnEarly started that this process is done with the
// connection: they go on without waiting for its exit.
func (m *Marker) letGo() {
	if m.hold {
		return // they close with the process (HoldParents)
	}
	for _, w := range m.parents {
		w.Close()
	}
	m.parents = nil
}

// current says whether the path still names the locked file (a marker
// removed and made again between open and lock is another one).
func (m *Marker) current() bool {
	a, err := m.f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(m.path)
	return err == nil && os.SameFile(a, b)
}

// TryLock locks the connection's marker if it exists and nobody holds it.
// ok is false when there is no marker or another process maps the
// connection.
func TryLock(st *store.Store, conn string) (m *Marker, ok bool, err error) {
	path := Path(st, conn)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pending marker: %w", err)
	}
	locked, err := tryLock(f)
	if err != nil || !locked {
		f.Close()
		return nil, false, err
	}
	m = &Marker{Conn: conn, path: path, f: f}
	if !m.current() {
		f.Close()
		return nil, false, nil
	}
	return m, true, nil
}

// Pending lists the connections with a marker, sorted (locked or not).
func Pending(st *store.Store) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(st.Root(), Dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list pending connections: %w", err)
	}
	var conns []string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if id, err := store.UnescapeID(e.Name()); err == nil {
			conns = append(conns, id)
		}
	}
	slices.Sort(conns)
	return conns, nil
}
