package spool

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acptap/acptap/internal/private"
)

// Kind is the OTLP signal of an item.
type Kind uint8

const (
	// Logs items are encoded ResourceLogs.
	Logs Kind = 1
	// Spans items are encoded ResourceSpans.
	Spans Kind = 2
)

// LowRank is the highest severity rank (AEP-0001 §8.1: debug 0, info 1)
// that may be dropped first when the spool is full.
const LowRank = 1

// DefaultMaxBytes bounds a spool when Options.MaxBytes is not set.
const DefaultMaxBytes = 64 << 20

// Item is one encoded OTLP item.
type Item struct {
	Kind Kind
	// Rank is the AEP severity rank (debug 0 … critical 5) eviction goes by.
	Rank    uint8
	Session string
	Data    []byte
}

// Segment is one appended batch, oldest first by Name.
type Segment struct {
	Name  string
	Items []Item
}

// Spool is one spool directory. Its methods are safe for concurrent use;
// several processes may append to one directory, and Claim elects the one
// that sends.
type Spool struct {
	dir string
	max int64

	mu       sync.Mutex
	size     int64
	last     int64
	n        int
	inflight string
	dropped  [6]uint64
	bad      int
}

const (
	segExt = ".seg"
	magic  = "acptap-otlp-spool 1\n"
)

// Open opens (creating) the spool in dir, bounded by maxBytes (<= 0:
// DefaultMaxBytes), and removes temporary files a killed process left.
func Open(dir string, maxBytes int64) (*Spool, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if err := private.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("otlp spool: %w", err)
	}
	s := &Spool{dir: dir, max: maxBytes}
	if _, err := s.list(); err != nil {
		return nil, err
	}
	s.size = s.diskSizeLocked()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		// A temporary file older than a minute belongs to no live writer
		// (private.WriteFileAtomic's .<name>.tmp-<n>, or the <name>.<pid>.tmp
		// of earlier versions).
		if strings.HasSuffix(e.Name(), ".tmp") || (strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-")) {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Minute {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	return s, nil
}

// Dir is the spool's directory.
func (s *Spool) Dir() string { return s.dir }

func (s *Spool) list() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("otlp spool: %w", err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), segExt) {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

func (s *Spool) diskSizeLocked() int64 {
	names, err := s.list()
	if err != nil {
		return s.size
	}
	var n int64
	for _, name := range names {
		if st, err := os.Stat(filepath.Join(s.dir, name)); err == nil {
			n += st.Size()
		}
	}
	return n
}

// Dropped returns the items dropped so far by this process, by rank.
func (s *Spool) Dropped() [6]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Size is the bytes the spool's segments hold (as this process knows it).
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// Append writes items as one segment, evicting to stay in bound first. It
// returns how many items it dropped, by rank (the new items' low ranks
// included when nothing older can make room).
func (s *Spool) Append(items []Item) (dropped [6]uint64, err error) {
	if len(items) == 0 {
		return dropped, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := encode(items)
	if s.size+int64(len(buf)) > s.max {
		s.size = s.diskSizeLocked() // other processes append and acknowledge too
	}
	for s.size+int64(len(buf)) > s.max {
		d, ok := s.evictLocked()
		addDrops(&dropped, d)
		if !ok {
			// Nothing older to evict: the batch itself sheds its low items.
			var keep []Item
			for _, it := range items {
				if it.Rank <= LowRank {
					dropped[min(int(it.Rank), 5)]++
					continue
				}
				keep = append(keep, it)
			}
			items = keep
			if len(items) == 0 {
				addDrops(&s.dropped, dropped)
				return dropped, nil
			}
			buf = encode(items)
			break // what is left is notice and above: written even over the bound
		}
	}
	addDrops(&s.dropped, dropped)
	now := time.Now().UnixNano()
	if now <= s.last {
		now = s.last + 1
	}
	s.last = now
	s.n++
	name := fmt.Sprintf("%016x-%08x-%06d%s", now, os.Getpid(), s.n, segExt)
	if err := writeFile(filepath.Join(s.dir, name), buf); err != nil {
		return dropped, err
	}
	s.size += int64(len(buf))
	return dropped, nil
}

func addDrops(into *[6]uint64, d [6]uint64) {
	for i, n := range d {
		into[i] += n
	}
}

// evictLocked makes room: the oldest segment holding debug or info items
// loses them (the segment being sent is skipped); when no segment has any,
// the oldest segment goes whole. It reports false when there is nothing to
// evict.
func (s *Spool) evictLocked() (dropped [6]uint64, ok bool) {
	names, err := s.list()
	if err != nil {
		return dropped, false
	}
	for _, n := range names {
		if n == s.inflight {
			continue
		}
		seg, size, err := s.read(n)
		if err != nil {
			continue
		}
		var keep []Item
		for _, it := range seg.Items {
			if it.Rank <= LowRank {
				dropped[it.Rank]++
				continue
			}
			keep = append(keep, it)
		}
		if len(keep) == len(seg.Items) {
			continue
		}
		path := filepath.Join(s.dir, n)
		if len(keep) == 0 {
			os.Remove(path)
			s.size -= size
			return dropped, true
		}
		buf := encode(keep)
		if err := writeFile(path, buf); err != nil {
			continue
		}
		s.size += int64(len(buf)) - size
		return dropped, true
	}
	for _, n := range names {
		if n == s.inflight {
			continue
		}
		seg, size, err := s.read(n)
		if err == nil {
			for _, it := range seg.Items {
				dropped[min(int(it.Rank), 5)]++
			}
		}
		os.Remove(filepath.Join(s.dir, n))
		s.size -= size
		return dropped, true
	}
	return dropped, false
}

// Peek returns the oldest segment, or nil when the spool is empty. A
// segment that cannot be decoded is moved aside (to <name>.bad) and
// counted; Bad says how many.
func (s *Spool) Peek() (*Segment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		names, err := s.list()
		if err != nil || len(names) == 0 {
			return nil, err
		}
		seg, _, err := s.read(names[0])
		if errors.Is(err, os.ErrNotExist) {
			continue // another process acknowledged it meanwhile
		}
		if err != nil {
			s.bad++
			os.Rename(filepath.Join(s.dir, names[0]), filepath.Join(s.dir, names[0]+".bad"))
			continue
		}
		s.inflight = seg.Name
		return seg, nil
	}
}

// Bad is how many undecodable segments Peek moved aside.
func (s *Spool) Bad() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bad
}

// Ack removes a delivered segment.
func (s *Spool) Ack(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight == name {
		s.inflight = ""
	}
	path := filepath.Join(s.dir, name)
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("otlp spool: %w", err)
	}
	if st != nil {
		s.size -= st.Size()
	}
	return nil
}

// Release says the sender no longer holds the segment (a failed attempt).
func (s *Spool) Release(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight == name {
		s.inflight = ""
	}
}

// Empty says whether no segment is waiting.
func (s *Spool) Empty() bool {
	names, err := s.list()
	return err == nil && len(names) == 0
}

// Len is the number of segments waiting.
func (s *Spool) Len() int {
	names, _ := s.list()
	return len(names)
}

func (s *Spool) read(name string) (*Segment, int64, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		return nil, 0, err
	}
	items, err := decode(b)
	if err != nil {
		return nil, 0, fmt.Errorf("otlp spool segment %s: %w", name, err)
	}
	return &Segment{Name: name, Items: items}, int64(len(b)), nil
}

// writeFile writes a segment whole or not at all (private.WriteFileAtomic:
// a synced temporary file, renamed).
func writeFile(path string, b []byte) error {
	if err := private.WriteFileAtomic(path, b); err != nil {
		return fmt.Errorf("otlp spool: %w", err)
	}
	return nil
}

func encode(items []Item) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(n uint64) { b.Write(tmp[:binary.PutUvarint(tmp[:], n)]) }
	for _, it := range items {
		uv(uint64(it.Kind))
		uv(uint64(it.Rank))
		uv(uint64(len(it.Session)))
		b.WriteString(it.Session)
		uv(uint64(len(it.Data)))
		b.Write(it.Data)
	}
	return b.Bytes()
}

func decode(b []byte) ([]Item, error) {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil, errors.New("not a spool segment")
	}
	r := bufio.NewReader(bytes.NewReader(b[len(magic):]))
	var out []Item
	for {
		kind, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		rank, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		sess, err := readBytes(r)
		if err != nil {
			return nil, err
		}
		data, err := readBytes(r)
		if err != nil {
			return nil, err
		}
		if (Kind(kind) != Logs && Kind(kind) != Spans) || rank > 5 {
			return nil, fmt.Errorf("item kind %d rank %d", kind, rank)
		}
		out = append(out, Item{Kind: Kind(kind), Rank: uint8(rank), Session: string(sess), Data: data})
	}
}

func readBytes(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("item of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("truncated item: %w", err)
	}
	return b, nil
}
