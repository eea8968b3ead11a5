package sdk

import (
	"context"
	"io"
)

// Mode says where the frames come from.
type Mode string

const (
	ModeRecord  Mode = "record"  // live, through the tee
	ModeRebuild Mode = "rebuild" // from a wire log
	ModeConvert Mode = "convert" // from stored logs of another format
)

// StartRequest opens a mapping session (one connection).
type StartRequest struct {
	// Config is the plugin's own configuration section (opaque JSON; may be empty).
	Config []byte
	// Connection is the connection ID ("c-…"); WireLog the wire-log file
	// name for native references.
	Connection string
	WireLog    string
	// Input is the revision the router selected.
	Input string
	Mode  Mode
}

// Mapper is what a plugin author implements.
//
// A mapper is deterministic: the same StartRequest and the same frames give
// the same outputs, byte for byte. The host relies on that to rebuild outputs
// from a wire log and to restart a crashed plugin by re-feeding it.
type Mapper interface {
	Info(ctx context.Context) (Info, error)
	Start(ctx context.Context, req StartRequest) (Session, error)
}

// Session maps one connection's frames. Map and Finish return the outputs
// the frames produced; an error means the session cannot go on (a transport
// failure, or a bug), never a mapping problem — those are Diagnostic outputs.
type Session interface {
	Map(ctx context.Context, frames []Frame) ([]Output, error)
	// Finish flushes what is still open (entities final "when the recorder
	// stops") and ends the session.
	Finish(ctx context.Context, reason string) ([]Output, error)
}

// Replayer is implemented by mappers with the "replay" capability.
type Replayer interface {
	// Replay reads an ASR stream and emits ACP frames; it returns the loss
	// report (JSON).
	Replay(ctx context.Context, config []byte, target string, stream io.Reader, emit func(Output) error) (lossReport []byte, err error)
}
