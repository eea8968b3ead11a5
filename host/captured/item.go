package captured

import (
	"time"

	"github.com/acptap/acptap/sdk"
)

// Gap reasons.
const (
	ReasonQueueFull = "capture queue full"
	ReasonTooLong   = "line exceeds capture limit"
)

// DefaultMaxLine bounds one line assembled for capture (by a Splitter); a longer line is
// still forwarded whole by the tee and declared as a gap (ReasonTooLong), so a runaway line
// cannot exhaust memory.
const DefaultMaxLine = 256 << 20

// Item is what capture receives: a line, a gap, or a chunk. The tee queues chunks only (one
// per read, in each direction's order); a Splitter turns them into lines and gaps, which is
// what the rest of the host (and log import, which makes items itself) deals in.
type Item struct {
	Dir  sdk.Direction // sdk.C2A (editor → agent stdin) or sdk.A2C (agent stdout → editor)
	At   time.Time     // receipt time: when the read (completing the line) returned; a gap: when declared
	Line []byte        // the line without its LF (a CR is kept)
	NoLF bool          // a final line that had no LF at EOF
	Gap  *Gap          // non-nil: lines dropped from observation (Line is then nil)
	// Owned: Line was assembled across chunks into a buffer of its own
	// (it aliases no chunk), so the receiver need not copy it to keep it.
	Owned bool

	// Chunk, when non-nil, is one read as forwarded (Line and Gap are then unset); the
	// receiver must release it (Item.Release) once it no longer needs its bytes.
	Chunk *Chunk
}

// Gap counts lines of one direction that were forwarded but not observed. Bytes counts the
// lines' bytes without their LFs, as Item.Line would have held them.
type Gap struct {
	Frames, Bytes uint64
	Reason        string // ReasonQueueFull or ReasonTooLong
}
