package rebuild

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/private"
)

// The staging store is <store>/tmp/rebuild-<unix nanoseconds>; once every
// connection mapped, commitFile in it lists the renames that put its
// outputs in place. A staging directory without it is a rebuild that did
// not finish: the next rebuild removes it. One with it is a swap that was
// interrupted: the next rebuild finishes it first.
const (
	stagingPrefix = "rebuild-"
	commitFile    = "commit.json"
	lockFile      = "rebuild.lock"
)

// move renames From over To, keeping a To with other bytes as
// To+journal.Suffix; From "" moves To aside only (an output the rebuild
// no longer writes, such as the stream of a plugin since removed).
type move struct {
	From string `json:"from,omitempty"`
	To   string `json:"to"`
}

type journal struct {
	// Suffix names what a replaced file is kept as: ".prev-<unix ns>".
	Suffix string `json:"suffix"`
	Moves  []move `json:"moves"`
}

// outputFiles lists the files of session id in st that a rebuild writes:
// sessions/<id>/ (every *.asr.jsonl stream, the connections count, the id
// file) and aep/acp/<id>.jsonl. Backups (.prev-, .torn-) are not outputs.
func outputFiles(st *store.Store, id string) ([]string, error) {
	var out []string
	dir := st.SessionDir(id)
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && (strings.HasSuffix(n, ".asr.jsonl") || n == "connections" || n == "id") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	if _, err := os.Stat(st.AEPPath(id)); err == nil {
		out = append(out, st.AEPPath(id))
	}
	return out, nil
}

// stamp is what tells that a file changed while the rebuild ran.
type stamp struct {
	size int64
	mod  time.Time
}

func stamps(paths []string) map[string]stamp {
	out := map[string]stamp{}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			out[p] = stamp{fi.Size(), fi.ModTime()}
		}
	}
	return out
}

func sameStamps(a, b map[string]stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// commit writes the journal into the staging directory (synced, then
// renamed into place: from here on the swap is decided) and applies it.
func commit(staging string, j journal) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	tmp := filepath.Join(staging, commitFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, private.FileMode)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(staging, commitFile))
	}
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return apply(staging, j)
}

// apply performs the journal's renames; every step can be run again, so a
// swap cut short is finished by applying the same journal.
func apply(staging string, j journal) error {
	for _, m := range j.Moves {
		if m.From != "" {
			if _, err := os.Stat(m.From); errors.Is(err, fs.ErrNotExist) {
				continue // done before the interruption
			}
			if same, _ := sameBytes(m.From, m.To); same {
				if err := os.Remove(m.From); err != nil {
					return fmt.Errorf("swap: %w", err)
				}
				continue
			}
		}
		if _, err := os.Stat(m.To); err == nil {
			if err := os.Rename(m.To, m.To+j.Suffix); err != nil {
				return fmt.Errorf("swap: keep %s: %w", m.To, err)
			}
		}
		if m.From == "" {
			continue
		}
		if err := private.MkdirAll(filepath.Dir(m.To)); err != nil {
			return fmt.Errorf("swap: %w", err)
		}
		if err := os.Rename(m.From, m.To); err != nil {
			return fmt.Errorf("swap: %w", err)
		}
	}
	return os.RemoveAll(staging)
}

// recoverStaging finishes committed swaps left by an interrupted rebuild
// and removes unfinished staging directories (called with the lock held).
func recoverStaging(tmp string) (finished []string, err error) {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), stagingPrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		b, rerr := os.ReadFile(filepath.Join(dir, commitFile))
		if errors.Is(rerr, fs.ErrNotExist) {
			if err := os.RemoveAll(dir); err != nil {
				return finished, fmt.Errorf("remove unfinished rebuild %s: %w", dir, err)
			}
			continue
		}
		var j journal
		if rerr == nil {
			rerr = json.Unmarshal(b, &j)
		}
		if rerr != nil {
			return finished, fmt.Errorf("interrupted swap %s: %w", dir, rerr)
		}
		if err := apply(dir, j); err != nil {
			return finished, fmt.Errorf("finish interrupted swap %s: %w", dir, err)
		}
		finished = append(finished, dir)
	}
	return finished, nil
}

func prevSuffix(now time.Time) string { return ".prev-" + strconv.FormatInt(now.UnixNano(), 10) }

// sameBytes reports whether two files hold the same bytes (false when
// either is missing).
func sameBytes(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	sa, _ := fa.Stat()
	sb, _ := fb.Stat()
	if sa.Size() != sb.Size() {
		return false, nil
	}
	ra, rb := bufio.NewReaderSize(fa, 64<<10), bufio.NewReaderSize(fb, 64<<10)
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(ra, ba)
		nb, eb := io.ReadFull(rb, bb)
		if !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea != nil || eb != nil {
			return errors.Is(ea, io.EOF) || errors.Is(ea, io.ErrUnexpectedEOF), nil
		}
	}
}
