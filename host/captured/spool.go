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
// Layout: the line spoolMagic, one JSON line (SpoolHeader), then one record per chunk: a
// fixed spoolRecord followed by its data.
const spoolMagic = "acptap-spool 1\n"

// SpoolHeader opens a spool.
type SpoolHeader struct {
	Lines [2]LineState `json:"lines"` // the splitter's state (Splitter.State)
}

// spoolRecord is a chunk's fixed part, little-endian.
type spoolRecord struct {
	Dir      uint8
	Flags    uint8
	_        [6]byte
	At       int64 // receipt time, Unix nanoseconds
	LostB    uint64
	LostLFs  uint64
	DataSize uint64
}

const (
	flagEOF   = 1 << 0
	flagEndLF = 1 << 1
)

// Remainder counts, per direction, what a spool holds beyond the wire log: the gap the
// next command declares if the spool is lost before a finisher has captured it.
type Remainder [2]Gap

// WriteSpool writes h and every item left on items (until it is closed) to w, releasing
// each, and returns what they hold as gaps: per direction, the lines the bytes touch (the
// lines in progress in h included) and their bytes without LFs, as the Splitter counts a
// queue-full loss.
func WriteSpool(w io.Writer, h SpoolHeader, items <-chan Item) (Remainder, error) {
	var rem Remainder
	var cnt [2]lineCount
	for i, l := range h.Lines {
		cnt[i] = lineCount{counted: l.Open || l.Lost, frames: l.Gap.Frames, bytes: l.Gap.Bytes}
		if l.Open && !l.Lost {
			cnt[i].frames++
			cnt[i].bytes += uint64(l.N)
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	hb, err := json.Marshal(h)
	if err != nil {
		return rem, err
	}
	bw.WriteString(spoolMagic)
	bw.Write(hb)
	bw.WriteByte('\n')
	var werr error
	for it := range items {
		if werr == nil {
			werr = writeRecord(bw, it, &cnt)
		}
		it.Release()
	}
	if werr == nil {
		werr = bw.Flush()
	}
	for i := range cnt {
		rem[i] = Gap{Frames: cnt[i].frames, Bytes: cnt[i].bytes, Reason: ReasonSpoolLost}
	}
	if werr != nil {
		return rem, fmt.Errorf("write spool: %w", werr)
	}
	return rem, nil
}

// ReasonSpoolLost is the gap declared for a spool no finisher captured (it was killed, or
// the machine stopped, before it had written the spool to the wire log).
const ReasonSpoolLost = "capture handed to a finisher was lost"

func writeRecord(bw *bufio.Writer, it Item, cnt *[2]lineCount) error {
	ch := it.Chunk
	if ch == nil || (it.Dir != sdk.C2A && it.Dir != sdk.A2C) {
		return fmt.Errorf("spool: not a chunk of a direction")
	}
	r := spoolRecord{Dir: uint8(it.Dir), At: it.At.UnixNano(), LostB: ch.Lost.Bytes, LostLFs: ch.Lost.LFs, DataSize: uint64(len(ch.Data))}
	if ch.EOF {
		r.Flags |= flagEOF
	}
	if ch.Lost.EndLF {
		r.Flags |= flagEndLF
	}
	c := &cnt[dirIndex(it.Dir)]
	c.add(ch.Lost.Bytes, ch.Lost.LFs, ch.Lost.EndLF)
	if n := len(ch.Data); n > 0 {
		c.add(uint64(n), uint64(bytes.Count(ch.Data, []byte{'\n'})), ch.Data[n-1] == '\n')
	}
	if err := binary.Write(bw, binary.LittleEndian, &r); err != nil {
		return err
	}
	_, err := bw.Write(ch.Data)
	return err
}

func dirIndex(d sdk.Direction) int {
	if d == sdk.A2C {
		return 1
	}
	return 0
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
// next returns io.EOF after the last one. The chunks' Data are their own (not pooled).
func ReadSpool(r io.Reader) (h SpoolHeader, next func() (Item, error), err error) {
	br := bufio.NewReaderSize(r, 1<<20)
	magic := make([]byte, len(spoolMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != spoolMagic {
		return h, nil, fmt.Errorf("read spool: not a spool")
	}
	line, err := br.ReadBytes('\n')
	if err != nil {
		return h, nil, fmt.Errorf("read spool: %w", err)
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return h, nil, fmt.Errorf("read spool header: %w", err)
	}
	next = func() (Item, error) {
		var rec spoolRecord
		if err := binary.Read(br, binary.LittleEndian, &rec); err != nil {
			if errors.Is(err, io.EOF) {
				return Item{}, io.EOF
			}
			return Item{}, fmt.Errorf("read spool: %w", err)
		}
		if rec.Dir != uint8(sdk.C2A) && rec.Dir != uint8(sdk.A2C) || rec.DataSize > 1<<40 {
			return Item{}, fmt.Errorf("read spool: bad record")
		}
		ch := &Chunk{EOF: rec.Flags&flagEOF != 0,
			Lost: Lost{Bytes: rec.LostB, LFs: rec.LostLFs, EndLF: rec.Flags&flagEndLF != 0}}
		if rec.DataSize > 0 {
			ch.Data = make([]byte, rec.DataSize)
			if _, err := io.ReadFull(br, ch.Data); err != nil {
				return Item{}, fmt.Errorf("read spool: %w", err)
			}
		}
		return Item{Dir: sdk.Direction(rec.Dir), At: time.Unix(0, rec.At), Chunk: ch}, nil
	}
	return h, next, nil
}
