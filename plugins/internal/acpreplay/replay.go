package acpreplay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/acptap/acptap/internal/jsonl"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// Target is the ACP revision this engine replays to.
const Target = "acp/2@2.0.0-alpha.9"

// TargetAlpha13 is the newer ACP v2 draft it also replays to (a stream
// recorded by acpv2a13 names it): the same session/update notifications,
// and a terminal's recorded size (_org.acptap/size) as the draft's
// terminal_update.size.
const TargetAlpha13 = "acp/2@2.0.0-alpha.13"

// Replay turns an ASR stream into ACP v2 session/update notifications, as
// an agent replays history on session/resume with replayFrom {type:
// "start"} (ASR-724…731): the active path (a stream's records in seq
// order), the latest revision of each entity at the position of its first
// record, IDs kept, whole-entity upserts only, nothing re-executed; then
// the title, the usage and the current state. It returns the loss report
// (JSON) for target ("" is Target). Problems with single records are
// diagnostics and losses; only an unreadable stream (no header) or a
// failed emit is an error.
//
// Memory: the stream is read twice. The first pass indexes, for each
// entity with more than one record (revisions, a call's result and file
// changes), where its latest records are; the second pass emits each
// entity at its first record. So memory grows with those entities, not
// with the stream. A stream that is not seekable (it arrives over gRPC) is
// spooled, in memory up to SpoolMemLimit and then to a temporary file that
// is removed when the replay ends.
func Replay(ctx context.Context, target string, stream io.Reader, emit func(sdk.Output) error) ([]byte, error) {
	if target == "" {
		target = Target
	}
	src, cleanup, err := seekable(stream)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	r := &replayer{ctx: ctx, src: src, emit: emit, target: target, window: max(Window, 1)}
	if err := r.index(); err != nil {
		return nil, err
	}
	if err := r.play(); err != nil {
		return nil, err
	}
	return r.report(), nil
}

// source is the stream as random-access bytes.
type source struct {
	ra   io.ReaderAt
	size int64
}

// SpoolMemLimit is how much of a non-seekable stream is kept in memory;
// a longer stream is spooled to a temporary file. (A variable so that
// tests can spool small streams.)
var SpoolMemLimit int64 = 8 << 20

// seekable returns the stream as random-access bytes: directly when it
// already is (a file, a bytes.Reader), else spooled.
func seekable(r io.Reader) (source, func(), error) {
	nop := func() {}
	if rs, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	}); ok {
		base, err1 := rs.Seek(0, io.SeekCurrent)
		end, err2 := rs.Seek(0, io.SeekEnd)
		if err1 == nil && err2 == nil {
			return source{ra: io.NewSectionReader(rs, base, end-base), size: end - base}, nop, nil
		}
	}
	head, err := io.ReadAll(io.LimitReader(r, SpoolMemLimit+1))
	if err != nil {
		return source{}, nop, fmt.Errorf("replay: read stream: %w", err)
	}
	if int64(len(head)) <= SpoolMemLimit {
		return source{ra: bytes.NewReader(head), size: int64(len(head))}, nop, nil
	}
	f, err := os.CreateTemp("", "acptap-replay-*.asr.jsonl")
	if err != nil {
		return source{}, nop, fmt.Errorf("replay: spool: %w", err)
	}
	cleanup := func() {
		f.Close()
		os.Remove(f.Name())
	}
	n, err := f.Write(head)
	head = nil
	var m int64
	if err == nil {
		m, err = io.CopyBuffer(f, r, make([]byte, 1<<20))
	}
	if err != nil {
		cleanup()
		return source{}, nop, fmt.Errorf("replay: spool: %w", err)
	}
	return source{ra: f, size: int64(n) + m}, cleanup, nil
}

// lines calls fn for each committed line of src (without its LF) with its
// offset; fn's slice is valid only during the call. It returns the bytes
// after the last LF (an uncommitted tail), if any. A line is bounded as a
// stream's (asr.DefaultMaxLine): a longer one is an error naming it.
func (s source) lines(fn func(off int64, line []byte) error) (tail int64, err error) {
	r := jsonl.NewReader(io.NewSectionReader(s.ra, 0, s.size), asr.DefaultMaxLine)
	for {
		off := r.Offset()
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.TailLen(), nil
		}
		if err != nil {
			return 0, fmt.Errorf("replay: %w", err)
		}
		if err := fn(off, line); err != nil {
			return 0, err
		}
	}
}

// lineAt reads the line at off with length n (without its LF).
func (s source) lineAt(off, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := s.ra.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b, nil
}
