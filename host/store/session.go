package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/acptap/acptap/internal/jsonl"
	"github.com/acptap/acptap/internal/private"
)

// OpenStream opens the session's ASR stream for appending, creating it and
// its directory if needed. If the file ends in a torn tail, the tail is
// saved and cut first, and the returned Repair (nil otherwise) says so; the
// caller logs it and declares it.
func (s *Store) OpenStream(id string) (*StreamWriter, *Repair, error) {
	if _, err := s.sessionDir(id); err != nil {
		return nil, nil, fmt.Errorf("open stream: %w", err)
	}
	return openLines(s.StreamPath(id))
}

// PluginStreamPath is sessions/<escaped id>/<escaped plugin>.asr.jsonl: the
// ASR stream a plugin other than the session's primary mapper writes.
func (s *Store) PluginStreamPath(id, plugin string) string {
	return filepath.Join(s.SessionDir(id), EscapeID(plugin)+".asr.jsonl")
}

// OpenPluginStream opens a non-primary plugin's ASR stream for the session,
// like OpenStream. The plugin name "stream" is refused: its file would be
// the primary stream.
func (s *Store) OpenPluginStream(id, plugin string) (*StreamWriter, *Repair, error) {
	path := s.PluginStreamPath(id, plugin)
	if path == s.StreamPath(id) {
		return nil, nil, fmt.Errorf("open plugin stream: plugin name %q collides with the primary stream", plugin)
	}
	if _, err := s.sessionDir(id); err != nil {
		return nil, nil, fmt.Errorf("open plugin stream: %w", err)
	}
	return openLines(path)
}

// OpenAEP opens the session's AEP event file for appending, one event per
// line, with the same torn-tail repair as OpenStream.
func (s *Store) OpenAEP(id string) (*StreamWriter, *Repair, error) {
	path := s.AEPPath(id)
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, nil, fmt.Errorf("open aep file: %w", err)
	}
	return openLines(path)
}

// ExistingRecords returns the committed lines of the session's stream (the
// header line first), without their LFs, for rebuilding prior state. A torn
// tail is not returned; a missing stream gives no lines and no error.
func (s *Store) ExistingRecords(id string) ([][]byte, error) {
	return committedLines(s.StreamPath(id))
}

// ExistingPluginRecords is ExistingRecords for a non-primary plugin's own
// ASR stream of the session (PluginStreamPath).
func (s *Store) ExistingPluginRecords(id, plugin string) ([][]byte, error) {
	return committedLines(s.PluginStreamPath(id, plugin))
}

// PluginStreams returns, for every non-primary plugin that has an ASR
// stream of its own for the session (sessions/<id>/<plugin>.asr.jsonl,
// not empty), how many committed lines it holds. Files whose name does not
// unescape to a plugin name are not plugin streams and are left out.
func (s *Store) PluginStreams(id string) (map[string]int, error) {
	ents, err := os.ReadDir(s.SessionDir(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list plugin streams: %w", err)
	}
	var out map[string]int
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".asr.jsonl")
		if !ok || e.Name() == StreamFile || !e.Type().IsRegular() {
			continue
		}
		plugin, err := UnescapeID(name)
		if err != nil || s.PluginStreamPath(id, plugin) != filepath.Join(s.SessionDir(id), e.Name()) {
			continue
		}
		n, err := countCommitted(filepath.Join(s.SessionDir(id), e.Name()))
		if err != nil {
			return nil, err
		}
		if n == 0 {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		out[plugin] = n
	}
	return out, nil
}

// ExistingAEPEvents returns how many committed events (lines) the
// session's AEP file holds; a missing file holds none.
func (s *Store) ExistingAEPEvents(id string) (int, error) {
	return countCommitted(s.AEPPath(id))
}

// countCommitted counts a file's LF-terminated lines; a missing file has
// none.
func countCommitted(path string) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("count lines: %w", err)
	}
	defer f.Close()
	n, _, _, err := jsonl.Count(f)
	if err != nil {
		return 0, fmt.Errorf("count lines of %s: %w", path, err)
	}
	return n, nil
}

// committedLines reads a stream's LF-terminated lines, without their LFs;
// the torn tail, if any, is not a line. A line is bounded by
// jsonl.DefaultMaxLine, an ASR stream's bound.
func committedLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read stream: %w", err)
	}
	defer f.Close()
	r := jsonl.NewReader(f, jsonl.DefaultMaxLine)
	r.Owned = true
	var lines [][]byte
	for {
		line, err := r.Next()
		switch {
		case err == nil:
			lines = append(lines, line)
		case errors.Is(err, io.EOF):
			return lines, nil
		default:
			return nil, fmt.Errorf("read stream %s: %w", path, err)
		}
	}
}

// NextConnection returns how many connections observed the session before
// this one and records this one, so the first call for a session returns 0.
// The count lives in sessions/<id>/connections and is replaced atomically
// (temporary file and rename). Calls are serialised within the process;
// two processes recording the same session at once may both read the same
// count.
func (s *Store) NextConnection(id string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, err := s.sessionDir(id)
	if err != nil {
		return 0, fmt.Errorf("count connections: %w", err)
	}
	path := filepath.Join(dir, connectionsFile)
	n := 0
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if n, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil || n < 0 {
			return 0, fmt.Errorf("count connections: %s: bad count %q", path, b)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return 0, fmt.Errorf("count connections: %w", err)
	}
	if err := private.WriteFileAtomic(path, []byte(strconv.Itoa(n+1)+"\n")); err != nil {
		return 0, fmt.Errorf("count connections: %w", err)
	}
	return n, nil
}
