package ship

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultChunkBytes is the most line bytes one message carries (a single
// longer line travels alone, up to the server's max_payload).
const DefaultChunkBytes = 256 << 10

// headroom is left under max_payload for the headers.
const headroom = 4 << 10

// Shipper publishes the store's outputs. One Pass ships every complete
// line not shipped yet; passes of several processes on one store are
// serialised by a lock file.
type Shipper struct {
	Root   string // the store root
	Origin string
	Prefix string // subject prefix
	// Wire ships wire logs too.
	Wire bool
	// ChunkBytes bounds a message's lines (DefaultChunkBytes when 0).
	ChunkBytes int
	Log        hclog.Logger
	Conn       *Conn
}

// Stats counts what passes did.
type Stats struct {
	Files      int   // outputs looked at
	Lines      int64 // lines published
	Bytes      int64
	Messages   int64
	Resyncs    int64 // cursors taken from the server (a lost ack, a lost cursor file)
	Duplicates int64 // publishes the server already had (Nats-Msg-Id)
	NewGens    int64 // outputs rewritten in place (a rebuild): shipped again as a new generation
	// Stuck lists outputs whose next line cannot be shipped (longer than
	// the server's max_payload), "path:line: reason".
	Stuck []string
}

func (s *Stats) add(o Stats) {
	s.Files += o.Files
	s.Lines += o.Lines
	s.Bytes += o.Bytes
	s.Messages += o.Messages
	s.Resyncs += o.Resyncs
	s.Duplicates += o.Duplicates
	s.NewGens += o.NewGens
	s.Stuck = append(s.Stuck, o.Stuck...)
}

func (sh *Shipper) dir() string { return filepath.Join(sh.Root, "ship", "nats") }

// CursorPath is the file that holds how far each output was shipped.
func (sh *Shipper) CursorPath() string {
	return filepath.Join(sh.dir(), Token(sh.Conn.cfg.Stream)+".cursor.json")
}

// Pass ships every complete line of every output that is not shipped yet,
// in file order per output. It returns the first transport error (what is
// left is shipped by a later pass); a line that can never be shipped is
// listed in Stats.Stuck.
func (sh *Shipper) Pass(ctx context.Context) (Stats, error) {
	var st Stats
	unlock, err := lockFile(ctx, filepath.Join(sh.dir(), "lock"))
	if err != nil {
		return st, err
	}
	defer unlock()
	cur, err := loadCursors(sh.CursorPath())
	if err != nil {
		sh.log().Warn("ship: cursor file unreadable", "error", err)
	}
	outs, err := Outputs(sh.Root, sh.Wire)
	if err != nil {
		return st, err
	}
	for _, rel := range outs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		fst, err := sh.shipFile(ctx, cur, rel)
		st.add(fst)
		st.Files++
		if serr := cur.save(); serr != nil && err == nil {
			err = fmt.Errorf("save ship cursors: %w", serr)
		}
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// Outputs lists the shippable files under root, as slash paths relative to
// it, sorted.
func Outputs(root string, wire bool) ([]string, error) {
	var out []string
	add := func(pattern string) error {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return err
		}
		for _, p := range m {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && OutputPath(rel) {
				out = append(out, rel)
			}
		}
		return nil
	}
	patterns := []string{"sessions/*/id", "sessions/*/*.asr.jsonl", "aep/acp/*.jsonl"}
	if wire {
		patterns = append(patterns, "wire/*.jsonl")
	}
	for _, p := range patterns {
		if err := add(p); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

func (sh *Shipper) log() hclog.Logger {
	if sh.Log == nil {
		return hclog.NewNullLogger()
	}
	return sh.Log
}

func (sh *Shipper) chunkBytes() int {
	n := sh.ChunkBytes
	if n <= 0 {
		n = DefaultChunkBytes
	}
	if mp := int(sh.Conn.NC.MaxPayload()) - headroom; mp > 0 && n > mp {
		n = mp
	}
	return n
}

func (sh *Shipper) shipFile(ctx context.Context, cur *cursors, rel string) (Stats, error) {
	var st Stats
	subj := Subject(sh.Prefix, sh.Origin, rel)
	f, err := os.Open(filepath.Join(sh.Root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil // replaced or removed between the listing and now
	}
	if err != nil {
		return st, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return st, err
	}
	ino := inode(fi)
	whole := filepath.Base(rel) == "id" // a one-value file without a newline
	c := cur.m[rel]
	if c != nil && !sh.still(f, fi, ino, c) {
		c = &cursor{Gen: c.Gen + 1, Seq: c.Seq}
		st.NewGens++
	}
	if c == nil {
		if c, err = sh.resync(ctx, f, subj, whole); err != nil {
			return st, err
		}
		st.Resyncs++
	}
	c.Ino = ino
	cur.m[rel] = c
	limit := sh.chunkBytes()
	for retries := 0; ; {
		if whole && c.Lines > 0 {
			return st, nil
		}
		ch, err := nextChunk(f, c, limit, whole)
		if err != nil {
			return st, fmt.Errorf("%s: %w", rel, err)
		}
		if len(ch.data) == 0 {
			return st, nil
		}
		ack, err := sh.publish(ctx, subj, rel, c, ch)
		if isWrongLast(err) && retries < 3 {
			// Someone (this shipper before a lost ack, or a lost cursor)
			// already published past the cursor: take the server's word.
			retries++
			if c, err = sh.resync(ctx, f, subj, whole); err != nil {
				return st, err
			}
			c.Ino = ino
			cur.m[rel] = c
			st.Resyncs++
			continue
		}
		if err != nil {
			return st, fmt.Errorf("publish %s: %w", subj, err)
		}
		retries = 0
		if ack.Duplicate {
			st.Duplicates++
		}
		c.Seq = ack.Sequence
		c.advance(ch)
		st.Lines += int64(ch.lines)
		st.Bytes += int64(len(ch.data))
		st.Messages++
	}
}

func (sh *Shipper) publish(ctx context.Context, subj, rel string, c *cursor, ch chunk) (*jetstream.PubAck, error) {
	m := nats.NewMsg(subj)
	m.Data = ch.data
	line := c.Lines + 1
	m.Header.Set(HeaderGen, strconv.FormatUint(c.Gen, 10))
	m.Header.Set(HeaderLine, strconv.FormatInt(line, 10))
	m.Header.Set(HeaderCount, "1")
	// The id names the origin, the output, the generation and the first
	// line (and, for a part of a long line, where the part starts): a
	// resend of the same chunk is a no-op on the server.
	id := fmt.Sprintf("%s/%s#%d:%d", sh.Origin, rel, c.Gen, line)
	if ch.lineBytes > 0 {
		m.Header.Set(HeaderPartOffset, strconv.FormatInt(c.PartBytes, 10))
		m.Header.Set(HeaderLineBytes, strconv.FormatInt(ch.lineBytes, 10))
		id += "+" + strconv.FormatInt(c.PartBytes, 10)
	} else {
		m.Header.Set(HeaderCount, strconv.Itoa(ch.lines))
	}
	ctx, cancel := context.WithTimeout(ctx, sh.Conn.cfg.Timeout)
	defer cancel()
	return sh.Conn.JS.PublishMsg(ctx, m, jetstream.WithMsgID(id), jetstream.WithExpectLastSequencePerSubject(c.Seq))
}

// still reports whether the file is the one the cursor describes, grown or
// not: same inode, not shorter, and the last shipped line where it was.
func (sh *Shipper) still(f *os.File, fi os.FileInfo, ino uint64, c *cursor) bool {
	end := c.Offset + c.PartBytes
	if c.Ino != 0 && c.Ino != ino || fi.Size() < end {
		return false
	}
	if len(c.Last) == 0 {
		return true
	}
	buf := make([]byte, len(c.Last))
	if _, err := f.ReadAt(buf, end-int64(len(buf))); err != nil {
		return false
	}
	return bytes.Equal(buf, c.Last)
}

// resync builds the cursor from the last message on the subject: when the
// file still holds that message's lines at that place, shipping continues
// after them; otherwise the file was rewritten and ships as the next
// generation.
func (sh *Shipper) resync(ctx context.Context, f *os.File, subj string, whole bool) (*cursor, error) {
	rctx, cancel := context.WithTimeout(ctx, sh.Conn.cfg.Timeout)
	defer cancel()
	msg, err := sh.Conn.Stream.GetLastMsgForSubject(rctx, subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return &cursor{Gen: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("last message of %s: %w", subj, err)
	}
	h, err := chunkHeaders(msg.Header)
	if err != nil {
		return nil, fmt.Errorf("last message of %s: %w", subj, err)
	}
	end := h.line + h.count - 1
	start, stop, err := lineSpan(f, h.line, end, whole)
	if err == nil {
		at := start + h.partOffset
		got := make([]byte, len(msg.Data))
		if h.lineBytes > 0 && stop-start != h.lineBytes {
			err = errors.New("line length differs")
		} else if h.lineBytes == 0 && stop-start != int64(len(msg.Data)) {
			err = errors.New("chunk length differs")
		} else if _, err = f.ReadAt(got, at); err == nil && bytes.Equal(got, msg.Data) {
			c := &cursor{Gen: h.gen, Lines: end, Offset: stop, Seq: msg.Sequence, Last: tail(got)}
			if h.lineBytes > 0 && h.partOffset+int64(len(got)) < h.lineBytes {
				c.Lines, c.Offset, c.PartBytes = h.line-1, start, h.partOffset+int64(len(got))
			}
			return c, nil
		}
	}
	return &cursor{Gen: h.gen + 1, Seq: msg.Sequence}, nil
}

// chunkHead is what a message's headers say of its chunk.
type chunkHead struct {
	gen         uint64
	line, count int64
	// For a part of a line too long for one message: where the part
	// starts in the line, and the line's length (0 for whole lines).
	partOffset, lineBytes int64
}

func chunkHeaders(h nats.Header) (chunkHead, error) {
	var c chunkHead
	var errs [5]error
	c.gen, errs[0] = strconv.ParseUint(h.Get(HeaderGen), 10, 64)
	c.line, errs[1] = strconv.ParseInt(h.Get(HeaderLine), 10, 64)
	c.count, errs[2] = strconv.ParseInt(h.Get(HeaderCount), 10, 64)
	if v := h.Get(HeaderLineBytes); v != "" {
		c.lineBytes, errs[3] = strconv.ParseInt(v, 10, 64)
		c.partOffset, errs[4] = strconv.ParseInt(h.Get(HeaderPartOffset), 10, 64)
	}
	if err := errors.Join(errs[:]...); err != nil || c.gen < 1 || c.line < 1 || c.count < 1 ||
		c.lineBytes < 0 || c.partOffset < 0 || (c.lineBytes > 0 && (c.count != 1 || c.partOffset >= c.lineBytes)) {
		return c, fmt.Errorf("not a chunk of acptap (headers %s=%q %s=%q %s=%q)",
			HeaderGen, h.Get(HeaderGen), HeaderLine, h.Get(HeaderLine), HeaderCount, h.Get(HeaderCount))
	}
	return c, nil
}

// lineSpan finds the byte span of lines first..last (from 1) in f.
func lineSpan(f *os.File, first, last int64, whole bool) (start, stop int64, err error) {
	if whole {
		fi, err := f.Stat()
		if err != nil {
			return 0, 0, err
		}
		return 0, fi.Size(), nil
	}
	r := io.NewSectionReader(f, 0, 1<<62)
	buf := make([]byte, 64<<10)
	var off, line int64 = 0, 1
	start = -1
	if first == 1 {
		start = 0
	}
	for {
		n, rerr := r.Read(buf)
		for i := 0; i < n; i++ {
			if buf[i] != '\n' {
				continue
			}
			if line == last {
				return start, off + int64(i) + 1, nil
			}
			line++
			if line == first {
				start = off + int64(i) + 1
			}
		}
		off += int64(n)
		if rerr == io.EOF {
			return 0, 0, fmt.Errorf("file has %d lines, not %d", line-1, last)
		}
		if rerr != nil {
			return 0, 0, rerr
		}
	}
}

// chunk is the next message's payload: whole lines, or a part of one line
// longer than a message may be (lineBytes > 0).
type chunk struct {
	data      []byte
	lines     int // complete lines data ends (0 for a part that is not the line's last)
	lineBytes int64
}

// advance moves the cursor past ch once it is published.
func (c *cursor) advance(ch chunk) {
	c.Last = tail(ch.data)
	if ch.lineBytes == 0 {
		c.Lines += int64(ch.lines)
		c.Offset += int64(len(ch.data))
		return
	}
	c.PartBytes += int64(len(ch.data))
	if c.PartBytes == ch.lineBytes {
		c.Lines++
		c.Offset += ch.lineBytes
		c.PartBytes = 0
	}
}

// nextChunk reads what to publish after the cursor: the complete lines that
// fit in limit bytes, or, when the next line alone is longer, its next part.
// Nothing is returned while the next line is incomplete. For a whole-value
// file (an "id"), the whole content is one line.
func nextChunk(f *os.File, c *cursor, limit int, whole bool) (chunk, error) {
	buf := make([]byte, limit+1)
	n, err := f.ReadAt(buf, c.Offset+c.PartBytes)
	if err != nil && err != io.EOF {
		return chunk{}, err
	}
	buf = buf[:n]
	if whole {
		if n == 0 || n > limit {
			return chunk{}, nil
		}
		return chunk{data: buf, lines: 1}, nil
	}
	if c.PartBytes == 0 {
		if end := bytes.LastIndexByte(buf[:min(n, limit)], '\n'); end >= 0 {
			data := buf[:end+1]
			return chunk{data: data, lines: bytes.Count(data, []byte{'\n'})}, nil
		}
		if n <= limit {
			return chunk{}, nil // the next line is not complete yet
		}
	}
	// A line longer than limit: ship it in parts once it is complete.
	total, err := lineLength(f, c.Offset)
	if err != nil || total == 0 {
		return chunk{}, err
	}
	rest := total - c.PartBytes
	data := buf[:min(int64(len(buf)), rest, int64(limit))]
	ch := chunk{data: data, lineBytes: total}
	if c.PartBytes+int64(len(data)) == total {
		ch.lines = 1
	}
	return ch, nil
}

// lineLength is the length (with its newline) of the line starting at off,
// or 0 when it has no newline yet.
func lineLength(f *os.File, off int64) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		k, err := f.ReadAt(buf, off+n)
		if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
			return n + int64(i) + 1, nil
		}
		n += int64(k)
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

func tail(b []byte) []byte {
	if len(b) > lastKeep {
		b = b[len(b)-lastKeep:]
	}
	return slices.Clone(b)
}

func isWrongLast(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
