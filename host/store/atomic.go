package store

import "os"

// WriteFileAtomic replaces path with data (mode 0600) through a temporary
// file in the same directory, synced, and a rename: a reader sees the old
// bytes or the new, never a part.
func WriteFileAtomic(path string, data []byte) error { return writeFileAtomic(path, data) }

// CommittedLines reads f from its offset to the end and counts its
// complete lines: how many, and the offset just after the last LF (what
// the torn-tail rule keeps).
func CommittedLines(f *os.File) (lines int, committed int64, err error) {
	lines, committed, _, err = scanLines(f)
	return lines, committed, err
}
