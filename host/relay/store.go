package relay

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/acptap/acptap/sdk/aep"
)

// AgentFile is the file of an agent's events that have no session.
const AgentFile = "_agent.jsonl"

// store appends events to <root>/<agent>/<session>.jsonl (AEP-0003 §3.1
// layout; names sanitized), one write per line.
type store struct {
	root  string
	files map[string]*os.File
}

// Path is the file an event of agent and session is appended to.
func Path(root, agent, session string) string {
	name := AgentFile
	if session != "" {
		name = aep.FileName(session) + ".jsonl"
	}
	return filepath.Join(root, aep.FileName(agent), name)
}

func (s *store) append(h *aep.Header, line []byte) error {
	path := Path(s.root, h.Agent, h.Session)
	f, ok := s.files[path]
	if !ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		var err error
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		s.files[path] = f
	}
	_, err := f.Write(append(append([]byte(nil), line...), '\n'))
	return err
}

func (s *store) close() error {
	var errs []error
	for k, f := range s.files {
		errs = append(errs, f.Close())
		delete(s.files, k)
	}
	return errors.Join(errs...)
}

// load replays the committed lines of every file into the stream state,
// so dedupe and ordering survive a restart of the relay. It returns how
// many events it read.
func (s *store) load(st *aep.Stream) (int, error) {
	n := 0
	err := filepath.WalkDir(s.root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() || filepath.Ext(path) != ".jsonl" {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			h, err := aep.ParseHeader(sc.Bytes())
			if err != nil {
				continue
			}
			canon, err := aep.CanonicalRaw(sc.Bytes())
			if err != nil {
				continue
			}
			_ = st.Admit(h, canon)
			n++
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
	return n, err
}
