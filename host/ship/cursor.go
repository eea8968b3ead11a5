package ship

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/acptap/acptap/internal/private"
)

// cursor is how far one output has been shipped: Lines complete lines
// (Offset bytes) of generation Gen, the last of them in the stream message
// Seq. Ino and Last identify the file, so a file replaced by a rebuild (a
// new inode, a shorter file, another last line) starts a new generation
// instead of being taken for an append.
type cursor struct {
	Gen    uint64 `json:"gen"`
	Lines  int64  `json:"lines"`
	Offset int64  `json:"offset"`
	Seq    uint64 `json:"seq"`
	Ino    uint64 `json:"ino"`
	// PartBytes is how much of line Lines+1 (one too long for a message)
	// has been shipped in parts.
	PartBytes int64 `json:"partBytes,omitempty"`
	// Last is the last shipped line (at most lastKeep bytes of its end).
	Last []byte `json:"last,omitempty"`
}

const lastKeep = 256

// cursors are kept in one file per store and server stream, rewritten
// atomically after every output a pass ships.
type cursors struct {
	path string
	m    map[string]*cursor
}

func loadCursors(path string) (*cursors, error) {
	c := &cursors{path: path, m: map[string]*cursor{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ship cursors: %w", err)
	}
	if err := json.Unmarshal(b, &c.m); err != nil {
		// A damaged cursor file costs a resynchronisation from the
		// server, never a line: start from nothing and say so.
		return c, fmt.Errorf("ship cursors %s: %w (resynchronising from the server)", path, err)
	}
	return c, nil
}

func (c *cursors) save() error {
	b, err := json.Marshal(c.m)
	if err != nil {
		return err
	}
	if err := private.MkdirAll(filepath.Dir(c.path)); err != nil {
		return err
	}
	return private.WriteFileAtomic(c.path, b)
}
