package captured

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/acptap/acptap/sdk"
)

// A spool is what capture had not yet written to the wire log when a recording handed its
// connection to a finisher: the splitter's lines in progress and the tee's queued chunks,
// as they were, for the finisher to capture exactly as the recording would have (same
// lines, same receipt times). It holds unscrubbed bytes, so it lives in memory only (a
// memfd the finisher inherits), never on disk.
//
// Layout: the line spoolMagic, one JSON line (SpoolHeader, without the lines' bytes), the
// bytes of the lines in progress (c2a's, then a2c's; their lengths are in the header), then
// one record per chunk: its fixed part (recordSize bytes) followed by its data, or, for a
// chunk that lies in the recording's Arena (flagArena), where it lies there: the finisher
// inherited the arena's memory file, so those bytes are not copied at all.
const spoolMagic = "acptap-spool 2\n"

// spoolMagic1 is the layout before arena records; it is read the same way.
const spoolMagic1 = "acptap-spool 1\n"

// SpoolHeader opens a spool.
type SpoolHeader struct {
	Lines [2]LineState `json:"lines"` // the splitter's state (Splitter.State)
}

// spoolHead is SpoolHeader as written: a line in progress can be long (up to the line
// limit), so its bytes follow the header raw instead of inside the JSON.
type spoolHead struct {
	Lines     [2]LineState `json:"lines"`
	LineBytes [2]int       `json:"lineBytes"`
}

// A chunk's record is recordSize bytes, little-endian: its direction, flags, the offset of
// its data in its arena slot (2 bytes) and the slot (4 bytes; both 0 without flagArena),
// then the receipt time (Unix nanoseconds), the lost bytes, the lost LFs and the data size.
const recordSize = 40

const (
	flagEOF   = 1 << 0
	flagEndLF = 1 << 1
	flagArena = 1 << 2 // the data is in the arena, not after the record
)

// Remainder counts, per direction, what a spool holds beyond the wire log: the gap the
// next command declares if the spool is lost before a finisher has captured it.
type Remainder [2]Gap

// WriteSpool writes h and every item left on items (until it is closed) to w, and returns
// what they hold as gaps: per direction, the lines the bytes touch (the lines in progress
// in h included) and their bytes without LFs, as the Splitter counts a queue-full loss.
// A chunk that lies in arena (the finisher's inherited memory file; nil: none) is written
// as where it lies and is kept, never released: its slot must hold the bytes until the
// finisher has read them, and the recording exits after the hand-over. Every other chunk
// is copied into w and released.
func WriteSpool(w io.Writer, h SpoolHeader, items <-chan Item, arena *Arena) (Spooled, error) {
	var sp Spooled
	rem := &sp.Remainder
	var cnt spoolCounts
	for i, l := range h.Lines {
		cnt.start[i] = lineCount{counted: l.Open || l.Lost, frames: l.Gap.Frames, bytes: l.Gap.Bytes}
		if l.Open && !l.Lost {
			cnt.start[i].frames++
			cnt.start[i].bytes += uint64(l.N)
		}
	}
	head := spoolHead{Lines: h.Lines}
	for i := range head.Lines {
		head.Lines[i].Line, head.LineBytes[i] = nil, len(h.Lines[i].Line)
	}
	hb, err := json.Marshal(head)
	if err != nil {
		return sp, err
	}
	// Records are gathered into batches of buffers written at once (writev on a file):
	// the chunks' bytes are copied once, by the kernel, into the spool.
	bw := newBatchWriter(w)
	bw.add(append(append([]byte(spoolMagic), hb...), '\n'))
	for _, l := range h.Lines {
		if len(l.Line) > 0 {
			bw.add(l.Line)
		}
	}
	var werr error
	var held []Item
	for it := range items {
		inArena := false
		if werr == nil {
			inArena, werr = writeRecord(bw, it, &cnt, arena)
		}
		if n := int64(len(it.Chunk.Data)); inArena {
			sp.InPlace += n
		} else {
			sp.Copied += n
			held = append(held, it) // its Data is in the batch until flushed
		}
		if bw.full() || werr != nil {
			if werr == nil {
				werr = bw.flush()
			}
			for _, h := range held {
				h.Release()
			}
			held = held[:0]
		}
	}
	if werr == nil {
		werr = bw.flush()
	}
	for _, h := range held {
		h.Release()
	}
	for i, c := range cnt.total() {
		rem[i] = Gap{Frames: c.frames, Bytes: c.bytes, Reason: ReasonSpoolLost}
	}
	if werr != nil {
		return sp, fmt.Errorf("write spool: %w", werr)
	}
	return sp, nil
}

// Spooled is what WriteSpool wrote: what the spool holds, as gaps (see Remainder), and the
// bytes of the chunks it names where they lie in the arena and of those it copied.
type Spooled struct {
	Remainder       Remainder
	InPlace, Copied int64
}

// ReasonSpoolLost is the gap declared for a spool no finisher captured (it was killed, or
// the machine stopped, before it had written the spool to the wire log).
const ReasonSpoolLost = "capture handed to a finisher was lost"

func writeRecord(bw *batchWriter, it Item, cnt *spoolCounts, arena *Arena) (inArena bool, err error) {
	var flags uint8
	ch := it.Chunk
	if ch == nil || (it.Dir != sdk.C2A && it.Dir != sdk.A2C) {
		return false, fmt.Errorf("spool: not a chunk of a direction")
	}
	slot, off, inArena := arena.slotOf(ch)
	if inArena {
		flags |= flagArena
	}
	if ch.EOF {
		flags |= flagEOF
	}
	if ch.Lost.EndLF {
		flags |= flagEndLF
	}
	d := dirIndex(it.Dir)
	cnt.add(d, ch.Lost.Bytes, ch.Lost.LFs, ch.Lost.EndLF, nil)
	if n := len(ch.Data); n > 0 {
		if lfs, endLF, ok := ch.Tallied(); ok {
			cnt.add(d, uint64(n), lfs, endLF, nil) // the copier counted them (Chunk.Tally)
		} else {
			var lfs uint64
			var later []byte // a long chunk in the arena: its LFs are counted after the loop, on both cores
			if inArena && n >= countLaterMin {
				later = ch.Data
			} else {
				lfs = uint64(bytes.Count(ch.Data, []byte{'\n'}))
			}
			cnt.add(d, uint64(n), lfs, ch.Data[n-1] == '\n', later)
		}
	}
	var r [recordSize]byte
	r[0], r[1] = uint8(it.Dir), flags
	le := binary.LittleEndian
	le.PutUint16(r[2:], uint16(off))
	le.PutUint32(r[4:], uint32(slot))
	le.PutUint64(r[8:], uint64(it.At.UnixNano()))
	le.PutUint64(r[16:], ch.Lost.Bytes)
	le.PutUint64(r[24:], ch.Lost.LFs)
	le.PutUint64(r[32:], uint64(len(ch.Data)))
	bw.add(bw.scratch(r[:]))
	if len(ch.Data) > 0 && !inArena {
		bw.add(ch.Data)
	}
	return inArena, nil
}

func dirIndex(d sdk.Direction) int {
	if d == sdk.A2C {
		return 1
	}
	return 0
}

// countLaterMin: an arena chunk this long has its LFs counted after the records are
// written, the long ones split between two goroutines. At the exit with a large backlog,
// counting every queued byte's LFs was some 6 ms of acptap's exit for 90 MB on one core
// (docs/benchmarks-history.md, the sixth round).
const countLaterMin = 16 << 10

// spoolCounts collects what each chunk adds to its direction's count, in order, and
// folds them once the LFs of the long arena chunks are counted (total).
type spoolCounts struct {
	start [2]lineCount
	adds  []countAdd
}

// countAdd is n bytes of direction dir holding lfs LFs (of data, when it is set: counted
// in total), the last an LF when endLF.
type countAdd struct {
	dir    int
	n, lfs uint64
	endLF  bool
	data   []byte
}

func (s *spoolCounts) add(dir int, n, lfs uint64, endLF bool, data []byte) {
	if n == 0 {
		return
	}
	s.adds = append(s.adds, countAdd{dir: dir, n: n, lfs: lfs, endLF: endLF, data: data})
}

// total counts the deferred LFs, half on another goroutine, and folds every add in order.
func (s *spoolCounts) total() [2]lineCount {
	var later []int
	var bytesLater int
	for i, a := range s.adds {
		if a.data != nil {
			later = append(later, i)
			bytesLater += len(a.data)
		}
	}
	count := func(idx []int) {
		for _, i := range idx {
			s.adds[i].lfs = uint64(bytes.Count(s.adds[i].data, []byte{'\n'}))
			s.adds[i].data = nil
		}
	}
	if bytesLater >= 2*countLaterMin && len(later) > 1 {
		// Split by bytes, not by chunks: the halves take about as long.
		half, acc, cut := bytesLater/2, 0, len(later)
		for k, i := range later {
			if acc += len(s.adds[i].data); acc >= half {
				cut = k + 1
				break
			}
		}
		done := make(chan struct{})
		go func() { count(later[cut:]); close(done) }()
		count(later[:cut])
		<-done
	} else {
		count(later)
	}
	c := s.start
	for _, a := range s.adds {
		c[a.dir].add(a.n, a.lfs, a.endLF)
	}
	return c
}

// lineCount counts the lines a stream of bytes touches and their bytes without LFs.
type lineCount struct {
	counted       bool // the line in progress is counted already
	frames, bytes uint64
}

// add counts n bytes holding lfs LFs, the last of them an LF when endLF.
func (c *lineCount) add(n, lfs uint64, endLF bool) {
	if n == 0 {
		return
	}
	c.bytes += n - lfs
	lines := lfs // every LF ends a line
	if !endLF {
		lines++ // and the bytes after the last one start (or continue) one
	}
	if c.counted {
		lines--
	}
	c.frames += lines
	c.counted = !endLF
}

// ReadSpool reads a spool's header and returns it with a reader of its chunks, in order:
// next returns io.EOF after the last one. arena is the recording's arena as mapped here
// (MapArenaFile; nil: none inherited): a chunk that lies there is a view of it, which
// stays valid as long as the mapping. The other chunks' Data are their own (not pooled).
func ReadSpool(r io.Reader, arena []byte) (h SpoolHeader, next func() (Item, error), err error) {
	br := bufio.NewReaderSize(r, 1<<20)
	magic := make([]byte, len(spoolMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != spoolMagic && string(magic) != spoolMagic1 {
		return h, nil, fmt.Errorf("read spool: not a spool")
	}
	line, err := br.ReadBytes('\n')
	if err != nil {
		return h, nil, fmt.Errorf("read spool: %w", err)
	}
	var head spoolHead
	if err := json.Unmarshal(line, &head); err != nil {
		return h, nil, fmt.Errorf("read spool header: %w", err)
	}
	h.Lines = head.Lines
	for i, n := range head.LineBytes {
		if n < 0 || n > 1<<40 {
			return h, nil, fmt.Errorf("read spool header: bad line size")
		}
		if n > 0 {
			h.Lines[i].Line = make([]byte, n)
			if _, err := io.ReadFull(br, h.Lines[i].Line); err != nil {
				return h, nil, fmt.Errorf("read spool: %w", err)
			}
		}
	}
	next = func() (Item, error) {
		var b [recordSize]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return Item{}, io.EOF
			}
			return Item{}, fmt.Errorf("read spool: %w", err)
		}
		le := binary.LittleEndian
		dir, flags, size := b[0], b[1], le.Uint64(b[32:])
		if dir != uint8(sdk.C2A) && dir != uint8(sdk.A2C) || size > 1<<40 {
			return Item{}, fmt.Errorf("read spool: bad record")
		}
		ch := &Chunk{EOF: flags&flagEOF != 0,
			Lost: Lost{Bytes: le.Uint64(b[16:]), LFs: le.Uint64(b[24:]), EndLF: flags&flagEndLF != 0}}
		if flags&flagArena != 0 {
			off := int(le.Uint32(b[4:]))*BufferSize + int(le.Uint16(b[2:]))
			if size == 0 || int(le.Uint16(b[2:]))+int(size) > BufferSize || off+int(size) > len(arena) {
				return Item{}, fmt.Errorf("read spool: a record names bytes outside the queue's arena (%d inherited)", len(arena))
			}
			ch.Data = arena[off : off+int(size) : off+int(size)]
		} else if size > 0 {
			ch.Data = make([]byte, size)
			if _, err := io.ReadFull(br, ch.Data); err != nil {
				return Item{}, fmt.Errorf("read spool: %w", err)
			}
		}
		return Item{Dir: sdk.Direction(dir), At: time.Unix(0, int64(le.Uint64(b[8:]))), Chunk: ch}, nil
	}
	return h, next, nil
}
