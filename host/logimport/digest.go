package logimport

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
)

// retainBytes bounds the line bytes the digest pass keeps of an input's
// frames for the conversion (readOnce): an input within it is read once;
// a larger one is read again by feed. 0 keeps none (tests compare).
var retainBytes = 32 << 20

// onceRead is one pass over the input: its SHA-256 (of every byte read,
// as prepare's), the frames digest and, when the frames' lines fit
// within the bound, the frames themselves with what the scanner counted
// and skipped, which feed sends instead of reading the input again.
type onceRead struct {
	sum    []byte
	frames string
	// kept is nil when the frames were not kept (over the bound): nkept
	// frames in chunks of keptChunk (appending to one slice copied it at
	// each growth, ~10 % of the pass).
	kept         [][]Frame
	nkept        int
	skips        []Skip
	lines, blank int
}

// readOnce reads the input at path once: hash, frames digest, and the
// frames while their lines total at most retain bytes. A plain input of at
// most retain and maxLine bytes is read whole (readWhole), its frames
// sub-slices of its bytes, not copies; whole, when set, holds those bytes
// read and hashed already (prepare), which are not read again.
func readOnce(path string, format Format, maxLine, retain int, whole *wholeInput) (*onceRead, error) {
	if whole != nil {
		out, err := digestFrames(newPassScanner(whole.data, format, maxLine), retain)
		if err != nil {
			return nil, err
		}
		out.sum = whole.sum
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readWhole(f, min(retain, maxLine))
	if err != nil {
		return nil, err
	}
	if data != nil {
		// One read and no copy; the bytes are hashed beside the parse.
		sum := make(chan []byte, 1)
		go func() {
			d := sha256.Sum256(data)
			sum <- d[:]
		}()
		out, err := digestFrames(newPassScanner(data, format, maxLine), retain)
		if err != nil {
			return nil, err
		}
		out.sum = <-sum
		return out, nil
	}
	sum := newHashBehind()
	defer sum.stop()
	raw := io.TeeReader(f, sum)
	r, _, err := decompress(raw)
	if err != nil {
		return nil, err
	}
	out, err := digestFrames(NewScanner(r, format, maxLine), retain)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, raw); err != nil {
		return nil, err
	}
	out.sum = sum.sum()
	return out, nil
}

// newPassScanner is newMemScanner for the digest pass: its lines decoded
// ahead on a goroutine of their own (predecoder; not for a wire log, whose
// lines are not decoded that way). digestFrames stops the predecoder.
func newPassScanner(data []byte, format Format, maxLine int) *Scanner {
	s := newMemScanner(data, format, maxLine)
	if predecode && format != FormatWire {
		s.pre = startPredecoder(data, maxLine)
	}
	return s
}

// wholeInput is an input read whole, and its SHA-256.
type wholeInput struct {
	data, sum []byte
}

// hashWhole reads the file at path whole, as readOnce would (readWhole),
// and hashes it; nil when readWhole does not read it whole.
func hashWhole(path string, bound int) (*wholeInput, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readWhole(f, bound)
	if data == nil || err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &wholeInput{data: data, sum: sum[:]}, nil
}

// readWhole reads f whole when it is a plain (not gzip) file of at most
// bound bytes, else returns nil with f at its start again.
func readWhole(f *os.File, bound int) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > int64(bound) || fi.Size() == 0 {
		return nil, err
	}
	data := make([]byte, fi.Size()+1) // one more: a file that grew is not read whole
	n, err := io.ReadFull(f, data)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
	case err != nil:
		return nil, err
	}
	if n == len(data) || n < 2 || bytes.Equal(data[:2], gzipMagic) {
		_, err := f.Seek(0, io.SeekStart)
		return nil, err
	}
	return data[:n:n], nil
}

// digestFrames reads s to its end: the frames digest, and the frames while
// their lines total at most retain bytes.
func digestFrames(s *Scanner, retain int) (*onceRead, error) {
	h := newHashBehind()
	defer h.stop()
	if s.pre != nil {
		defer s.pre.stop()
	}
	out := &onceRead{}
	keep := retain > 0
	held := 0
	if keep {
		out.kept = [][]Frame{}
		s.OnSkip = func(sk Skip) { out.skips = append(out.skips, sk) }
	} else {
		s.Borrow = true // each frame is hashed before the next is read
	}
	for {
		fr, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		it := fr.Item
		if keep {
			held += len(it.Line) + 128 // the line and about what a Frame holds besides
			if held > retain {
				keep, out.kept, out.nkept, out.skips, s.OnSkip = false, nil, 0, nil, nil
				s.Borrow = true // frames are no longer kept: hashed before the next is read
			} else {
				out.keep(fr)
			}
		}
		if it.Gap != nil {
			h.Write([]byte("gap\n"))
			continue
		}
		h.Write([]byte(it.Dir.String() + " "))
		h.Write(it.Line)
		h.Write([]byte{'\n'})
	}
	out.frames = hex.EncodeToString(h.sum())
	out.lines, out.blank = s.Lines, s.Blank
	return out, nil
}

// keptChunk is how many frames a chunk of onceRead.kept holds.
const keptChunk = 1024

// keep appends fr to the kept frames.
func (o *onceRead) keep(fr Frame) {
	if n := len(o.kept); n == 0 || len(o.kept[n-1]) == keptChunk {
		o.kept = append(o.kept, make([]Frame, 0, keptChunk))
	}
	last := &o.kept[len(o.kept)-1]
	*last = append(*last, fr)
	o.nkept++
}

// sameFrames finds a converted wire log of st whose input yielded the
// frames with digest sum.
func sameFrames(st *store.Store, sum string) (conn, path string, ok bool) {
	logs, _ := filepath.Glob(filepath.Join(store.WireDir(st.Root()), ConnectionPrefix+"*.jsonl"))
	for _, p := range logs {
		r, err := wire.Open(p)
		if err != nil {
			continue
		}
		h := r.Header()
		r.Close()
		if h.Source != nil && h.Source.FramesSHA256 == sum {
			return strings.TrimSuffix(filepath.Base(p), ".jsonl"), p, true
		}
	}
	return "", "", false
}

// hashBehind is a SHA-256 computed on a goroutine of its own, a block
// behind the writes: readOnce's two digests were ~30 % of its time on one
// core, on the conversion's critical path (the pipeline starts when the
// pass ends), while the other core had nothing to do but the plugins'
// start. sum returns the digest; stop ends the goroutine if sum was not
// called.
type hashBehind struct {
	buf    []byte
	blocks chan []byte
	free   chan []byte
	done   chan []byte
	closed bool
}

// hashBlock is how many bytes a hashBehind gathers before it hands them
// to its goroutine.
const hashBlock = 256 << 10

func newHashBehind() *hashBehind {
	h := &hashBehind{blocks: make(chan []byte, 4), free: make(chan []byte, 6), done: make(chan []byte, 1)}
	go func() {
		d := sha256.New()
		for b := range h.blocks {
			d.Write(b)
			select {
			case h.free <- b[:0]:
			default:
			}
		}
		h.done <- d.Sum(nil)
	}()
	return h
}

// Write copies p into the current block (the caller reuses p).
func (h *hashBehind) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if h.buf == nil {
			select {
			case h.buf = <-h.free:
			default:
				h.buf = make([]byte, 0, hashBlock)
			}
		}
		k := min(len(p), hashBlock-len(h.buf))
		h.buf = append(h.buf, p[:k]...)
		p = p[k:]
		if len(h.buf) == hashBlock {
			h.blocks <- h.buf
			h.buf = nil
		}
	}
	return n, nil
}

// sum is the digest of everything written.
func (h *hashBehind) sum() []byte {
	if len(h.buf) > 0 {
		h.blocks <- h.buf
		h.buf = nil
	}
	h.stop()
	return <-h.done
}

func (h *hashBehind) stop() {
	if !h.closed {
		h.closed = true
		close(h.blocks)
	}
}
