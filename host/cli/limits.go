package cli

import (
	"flag"
	"os"
	"runtime/debug"

	"github.com/acptap/acptap/host/captured"
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

// MemoryCeiling is the soft memory limit acptap sets for itself and its
// built-in plugins (the same binary) unless GOMEMLIMIT is set: four times
// the longest line the recorder captures (captured.DefaultMaxLine). Ordinary
// traffic never comes near it; a frame of hundreds of MiB, which the host
// holds a few times over (the line, one encoded copy per plugin, the
// records that come back), makes the garbage collector work harder instead
// of letting the heap double (docs/benchmarks.md, "Memory per frame").
const MemoryCeiling = 4 * captured.DefaultMaxLine

// SetMemoryCeiling applies MemoryCeiling when GOMEMLIMIT is not set.
func SetMemoryCeiling() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryCeiling)
	}
}
