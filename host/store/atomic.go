package store

import "os"

// CommittedLines reads f from its offset to the end and counts its
// complete lines: how many, and the offset just after the last LF (what
// the torn-tail rule keeps).
func CommittedLines(f *os.File) (lines int, committed int64, err error) {
	lines, committed, _, err = scanLines(f)
	return lines, committed, err
}
