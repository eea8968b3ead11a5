package cli

import (
	"flag"
	"os"
)

// registerMaxLine adds --max-line, the bound on one input line of the
// commands that read streams and logs (0: the reader's default, e.g.
// asr.DefaultMaxLine). A longer line is reported as file:line and the
// command exits 1 instead of reading it into memory.
func registerMaxLine(fs *flag.FlagSet) *int {
	return fs.Int("max-line", 0, "longest input line read, in bytes (0: the default bound, 512 MiB for streams, 256 MiB for logs); a longer line is an error")
}

// regularFile reports whether f is a regular file: only such a file may be
// read twice (a pipe, a FIFO or a device yields its bytes once, or forever).
func regularFile(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}
