package cli

import (
	"os"
	"runtime/debug"
)

// OfflineGCPercent is the GOGC of an offline command's process (rebuild)
// and of a built-in plugin once it maps an offline session (rebuild,
// convert; pluginwire.SetOfflineGC), unless GOGC is set: no editor waits on
// them, so they let the heap grow to three times what is live between
// collections instead of twice: about 10 % less CPU in a rebuild, the same
// as 400 gave, for 15 MiB more per process where 400 took 35
// (docs/benchmarks-history.md, "Issue 12, fourth round: rebuild"). The soft memory
// limit (MemoryCeiling) still bounds the heap; a recording and its plugins
// keep the default.
const OfflineGCPercent = 200

// offlineGC applies OfflineGCPercent to this process unless GOGC is set.
func offlineGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(OfflineGCPercent)
	}
}
