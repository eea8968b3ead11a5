package storesink

import (
	"bytes"
	"io"
	"os"
	"strings"
)

// PruneBackups removes each backup (<file>.prev-<n>, a file rebuild or
// convert --force moved aside before rewriting it) whose file was
// rewritten with the same bytes: a copy is kept only when something
// changed. It returns the backups kept.
func PruneBackups(backups []string) []string {
	var kept []string
	for _, b := range backups {
		i := strings.LastIndex(b, ".prev-")
		if i > 0 && sameBytes(b[:i], b) && os.Remove(b) == nil {
			continue
		}
		kept = append(kept, b)
	}
	return kept
}

// sameBytes reports whether files a and b hold the same bytes.
func sameBytes(a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	sa, ea := fa.Stat()
	sb, eb := fb.Stat()
	if ea != nil || eb != nil || sa.Size() != sb.Size() {
		return false
	}
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(fa, bufA)
		nb, errB := io.ReadFull(fb, bufB)
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false
		}
		if errA != nil || errB != nil {
			return (errA == io.EOF || errA == io.ErrUnexpectedEOF) && (errB == io.EOF || errB == io.ErrUnexpectedEOF)
		}
	}
}
