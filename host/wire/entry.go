package wire

import (
	"errors"
	"time"

	"github.com/acptap/acptap/sdk"
)

// Format and Version identify a wire log in its header line.
const (
	Format  = "acptap-wire"
	Version = 1
)

// Entry types after the header.
const (
	TypeFrame = "frame"
	TypeGap   = "gap"
	// TypeSession records what the store knew of a session when this
	// connection first named it (see sdk.SessionInfo).
	TypeSession = "session"
)

var (
	// ErrTornTail reports bytes after the last LF: an entry whose write was
	// interrupted. LF is the commit mark, so callers may ignore it.
	ErrTornTail = errors.New("torn tail: bytes after the last LF")
	// ErrClosed is returned by a Writer used after Close.
	ErrClosed = errors.New("wire log writer is closed")
)

// Header is the first line of a wire log.
type Header struct {
	Connection string
	StartedAt  time.Time
	Agent      Agent
	// Source names the stored log a converted wire log was made from
	// (`acptap convert`); nil for a connection recorded through the tee.
	Source *Source
}

// SourceModeConvert is Source.Mode for a wire log written by acptap convert.
const SourceModeConvert = "convert"

// Source describes the input of a converted wire log. Its frames are that
// input's lines in file order; their times are receipt times only when the
// input recorded them (see docs/convert.md).
type Source struct {
	// Mode is SourceModeConvert.
	Mode string `json:"mode"`
	// From is the converter's input kind (`acptap convert --from`), e.g.
	// "acp-v1-log".
	From string `json:"from"`
	// Format is the layout the converter found in the file: "wire", "frames",
	// "trace" or "updates".
	Format string `json:"format"`
	// Path is the input's absolute path, or "-" for standard input.
	Path string `json:"path"`
	// SHA256 is the hex SHA-256 of the input's bytes as read (compressed,
	// if it was).
	SHA256 string `json:"sha256"`
	// Gzip says the input was gzip-compressed.
	Gzip bool `json:"gzip,omitempty"`
}

// Agent describes the agent process on the far side of the tee.
type Agent struct {
	Command []string `json:"command"`
}

// Entry is one frame or gap after the header.
type Entry struct {
	// Type is TypeFrame or TypeGap.
	Type string
	// Seq is dense from 1 in file order; the Writer assigns it.
	Seq uint64
	// At is the receipt time (informational); zero means not recorded.
	At  time.Time
	Dir sdk.Direction
	// Line is the frame's bytes without LF (frames only). It may be invalid
	// UTF-8; such lines are stored base64-encoded.
	Line []byte
	// NoLF marks a final line that ended without LF (frames only).
	NoLF bool
	// Gap describes a TypeGap entry.
	Gap sdk.Gap
	// Session describes a TypeSession entry.
	Session Session
	// Revision describes a TypeRevision entry (ParseEntry only: a Reader
	// passes over them, see Reader.Revision).
	Revision Revision
}

// Session is a TypeSession entry: the session's ID, how many connections
// had observed it before this one, and how many lines its primary ASR
// stream had then (header included).
type Session struct {
	ID          string
	Connections int
	PriorLines  int
	// PluginLines holds, per plugin other than the primary that already
	// has an ASR stream of its own for the session, that stream's committed
	// lines (header included); nil when there is none.
	PluginLines map[string]int
	// AEPLines is how many events the session's AEP file held.
	AEPLines int
}

// Equal reports whether a and b are the same entry content.
func (a Session) Equal(b Session) bool {
	if a.ID != b.ID || a.Connections != b.Connections || a.PriorLines != b.PriorLines || a.AEPLines != b.AEPLines || len(a.PluginLines) != len(b.PluginLines) {
		return false
	}
	for k, v := range a.PluginLines {
		if w, ok := b.PluginLines[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// headerJSON is the header line's shape; field order is the file's.
type headerJSON struct {
	Type       string  `json:"type"`
	Format     string  `json:"format"`
	Version    int     `json:"version"`
	Connection string  `json:"connection"`
	StartedAt  string  `json:"startedAt,omitempty"`
	Agent      Agent   `json:"agent"`
	Source     *Source `json:"source,omitempty"`
}

// entryJSON is what the reader decodes an entry line into.
type entryJSON struct {
	Type   string  `json:"type"`
	Seq    uint64  `json:"seq"`
	At     string  `json:"at"`
	Dir    string  `json:"dir"`
	Line   *string `json:"line"`
	B64    *[]byte `json:"b64"`
	NoLF   bool    `json:"nolf"`
	Frames uint64  `json:"frames"`
	Bytes  uint64  `json:"bytes"`
	Reason string  `json:"reason"`

	SessionID   string         `json:"sessionId"`
	Connections int            `json:"connections"`
	PriorLines  int            `json:"priorLines"`
	PluginLines map[string]int `json:"pluginLines"`
	AEPLines    int            `json:"aepLines"`
}
