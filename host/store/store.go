package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/private"
)

// Names inside the store root.
const (
	StreamFile      = "stream.asr.jsonl"
	connectionsFile = "connections"
	idFile          = "id"
)

// Store is a store root on disk. Its methods are safe for concurrent use
// within one process.
type Store struct {
	root string
	mu   sync.Mutex // serialises NextConnection's read-modify-write
}

// DefaultRoot is $XDG_DATA_HOME/acptap, or ~/.local/share/acptap when
// XDG_DATA_HOME is unset or not absolute. getenv nil means os.Getenv.
func DefaultRoot(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "acptap"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("default store: neither XDG_DATA_HOME nor HOME is set")
	}
	return filepath.Join(home, ".local", "share", "acptap"), nil
}

// Open returns the store at root, creating root (0700) if it is missing.
func Open(root string) (*Store, error) {
	if root == "" {
		return nil, errors.New("open store: empty root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := private.MkdirAll(abs); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &Store{root: abs}, nil
}

// Root is the store's absolute root directory.
func (s *Store) Root() string { return s.root }

// SessionDir is sessions/<escaped id>.
func (s *Store) SessionDir(id string) string {
	return filepath.Join(s.root, "sessions", EscapeID(id))
}

// StreamPath is sessions/<escaped id>/stream.asr.jsonl.
func (s *Store) StreamPath(id string) string {
	return filepath.Join(s.SessionDir(id), StreamFile)
}

// WirePath is wire/<escaped connection>.jsonl.
func (s *Store) WirePath(conn string) string {
	return filepath.Join(WireDir(s.root), EscapeID(conn)+".jsonl")
}

// AEPPath is aep/acp/<escaped id>.jsonl (the AEP-0003 JSONL layout).
func (s *Store) AEPPath(id string) string {
	return filepath.Join(s.root, "aep", "acp", EscapeID(id)+".jsonl")
}

// LogPath is logs/acptap.log.
func (s *Store) LogPath() string { return LogPath(s.root) }

// LogPath is logs/acptap.log under a store root.
func LogPath(root string) string { return filepath.Join(root, "logs", "acptap.log") }

// CreateWire creates the wire log for a new connection (see wire.Create).
// An empty hdr.Connection is set to conn.
func (s *Store) CreateWire(conn string, hdr wire.Header) (*wire.Writer, error) {
	if hdr.Connection == "" {
		hdr.Connection = conn
	}
	return wire.Create(s.WirePath(conn), hdr)
}

// sessionDir creates the session's directory. For a hashed name it records
// the real ID in the directory's "id" file, which Sessions reads.
func (s *Store) sessionDir(id string) (string, error) {
	dir := s.SessionDir(id)
	if err := private.MkdirAll(dir); err != nil {
		return "", err
	}
	if _, err := UnescapeID(filepath.Base(dir)); errors.Is(err, ErrHashedName) {
		if err := private.WriteFileAtomic(filepath.Join(dir, idFile), []byte(id)); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// Sessions lists the IDs of the sessions in the store, sorted. Directories
// whose names EscapeID would not produce are skipped.
func (s *Store) Sessions() ([]string, error) {
	dir := filepath.Join(s.root, "sessions")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		id, err := UnescapeID(e.Name())
		if errors.Is(err, ErrHashedName) {
			b, rerr := os.ReadFile(filepath.Join(dir, e.Name(), idFile))
			if rerr != nil || EscapeID(string(b)) != e.Name() {
				continue
			}
			id, err = string(b), nil
		}
		if err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}
