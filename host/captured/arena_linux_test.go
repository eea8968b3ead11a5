package captured

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

// resident is how many bytes of the arena's memory file have pages.
func resident(t *testing.T, a *Arena) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(a.File().Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestArenaGivesMemoryBack: a burst that filled the queue leaves no resident backlog once
// its chunks are released; keepWarm slots stay for the steady flow.
func TestArenaGivesMemoryBack(t *testing.T) {
	const n = 200
	a, err := NewArena(n * BufferSize)
	if err != nil {
		t.Fatal(err)
	}
	if r := resident(t, a); r != 0 {
		t.Fatalf("a new arena has %d resident bytes", r)
	}
	var held []*Chunk
	for range n {
		c := a.Buffer()
		if c.arena != a {
			t.Fatal("a free slot was not used")
		}
		for i := range c.Buf() { // every page touched, as a read does
			c.Buf()[i] = 'x'
		}
		c.Share(BufferSize)
		c.WriteDone()
		held = append(held, c)
	}
	if r := resident(t, a); r < n*BufferSize {
		t.Fatalf("full arena: %d resident bytes, want %d", r, n*BufferSize)
	}
	for _, c := range held {
		c.Release()
	}
	if a.Free() != a.Slots() {
		t.Fatalf("%d of %d slots free after every chunk was released", a.Free(), a.Slots())
	}
	if r := resident(t, a); r > keepWarm*BufferSize {
		t.Fatalf("drained arena: %d resident bytes, want at most %d", r, keepWarm*BufferSize)
	}
	// A warm slot is taken first (the last one kept), so a steady flow makes no system
	// call per buffer.
	if c := a.Buffer(); c.slot != held[keepWarm-1].slot {
		t.Fatalf("took slot %d, want the warm slot %d", c.slot, held[keepWarm-1].slot)
	}
}

// TestArenaFallsBackToTheHeap: with every slot in use, buffers and slabs come from the heap
// pool, and the spool copies them (they do not lie in the arena).
func TestArenaFallsBackToTheHeap(t *testing.T) {
	a, err := NewArena(2 * BufferSize)
	if err != nil {
		t.Fatal(err)
	}
	b1, b2, b3 := a.Buffer(), a.Buffer(), a.Buffer()
	if b1.arena != a || b2.arena != a || b3.arena != nil {
		t.Fatalf("arenas %p %p %p, want the first two in %p and the third on the heap", b1.arena, b2.arena, b3.arena, a)
	}
	b3.Share(copy(b3.Buf(), "on the heap\n"))
	if _, _, ok := a.slotOf(b3); ok {
		t.Fatal("a heap chunk is said to lie in the arena")
	}
	s := a.NewSlab()
	if p := s.Part([]byte("x")); s.c.arena != nil || p.owner() != s.c {
		t.Fatal("a slab of a full arena is not a heap buffer holding its parts")
	}
}

// TestSlabPartsHoldTheSlab: a slab's slot is free only once the copier dropped it and every
// part (and a splitter's hold on one) is released.
func TestSlabPartsHoldTheSlab(t *testing.T) {
	a, err := NewArena(4 * BufferSize)
	if err != nil {
		t.Fatal(err)
	}
	s := a.NewSlab()
	p1, p2 := s.Part([]byte("one\n")), s.Part([]byte("two"))
	if slot, off, ok := a.slotOf(p2); !ok || slot != s.c.slot || off != 4 {
		t.Fatalf("slotOf(second part) = %d, %d, %v; want slot %d offset 4", slot, off, ok, s.c.slot)
	}
	p2.hold() // a splitter keeps the line in progress
	s.Drop()
	p1.Release()
	p2.Release()
	if a.Free() != a.Slots()-1 {
		t.Fatal("the slab was freed while a held part still needed it")
	}
	if string(p2.Data) != "two" {
		t.Fatalf("held part reads %q", p2.Data)
	}
	p2.unref()
	if a.Free() != a.Slots() {
		t.Fatal("the slab's slot was not freed after its last part")
	}
}

// TestSpoolOfManyArenaChunks: a spool of more arena records than one writev takes
// (IOV_MAX) is written to a file whole and read back in place, chunk for chunk, in order:
// the native capture (ASR-723) keeps every frame handed over at the exit.
func TestSpoolOfManyArenaChunks(t *testing.T) {
	a, err := NewArena(64 * BufferSize)
	if err != nil {
		t.Fatal(err)
	}
	view, err := MapArenaFile(a.File())
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000
	items := make(chan Item, n+1)
	s := a.NewSlab()
	for i := range n {
		d := []byte(fmt.Sprintf(`{"n":%d}`+"\n", i))
		if s.Room() < len(d) {
			s.Drop()
			s = a.NewSlab()
		}
		items <- Item{Dir: sdk.A2C, At: time.Unix(0, int64(i)), Chunk: s.Part(d)}
	}
	items <- Item{Dir: sdk.C2A, At: time.Unix(0, n), Chunk: &Chunk{Data: []byte("on the heap\n")}}
	close(items)
	f, err := os.CreateTemp(t.TempDir(), "spool")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := WriteSpool(f, SpoolHeader{}, items, a)
	if err != nil {
		t.Fatal(err)
	}
	rem := sp.Remainder
	if want := int64(len("on the heap\n")); sp.Copied != want || sp.InPlace == 0 {
		t.Fatalf("in place %d, copied %d bytes; want the heap chunk's %d copied, the rest in place", sp.InPlace, sp.Copied, want)
	}
	if rem[1].Frames != n || rem[0].Frames != 1 {
		t.Fatalf("remainder %+v, want %d a2c frames and 1 c2a", rem, n)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	_, next, err := ReadSpool(f, view)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		it, err := next()
		if errors.Is(err, io.EOF) {
			if i != n+1 {
				t.Fatalf("read %d chunks, want %d", i, n+1)
			}
			break
		}
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		want := fmt.Sprintf(`{"n":%d}`+"\n", i)
		if i == n {
			want = "on the heap\n"
		}
		if string(it.Chunk.Data) != want || it.At.UnixNano() != int64(i) {
			t.Fatalf("chunk %d: %q at %d, want %q", i, it.Chunk.Data, it.At.UnixNano(), want)
		}
	}
}

// minorFaults is this process's minor page faults so far.
// minorFaults is the calling thread's minor page faults (lock the goroutine to its thread
// around a measurement): the process's count takes in other threads' faults (the GC, other
// tests), which once made TestColdSlotsAreStored count 10 where Store made none.
func minorFaults(t *testing.T) int64 {
	t.Helper()
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}

// TestColdSlotsAreStored: a slot without pages (never used, or punched after a burst) is
// cold; Store gives it the bytes through the memory file, without faulting its pages in
// on the caller's side, and the chunk's buffer reads them back (the wire log retains the
// frames as observed, ASR-723). A slot given back warm is not cold.
func TestColdSlotsAreStored(t *testing.T) {
	a, err := NewArena((keepWarm + 8) * BufferSize)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, BufferSize-100)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	c := a.Buffer()
	if !c.Cold() {
		t.Fatal("a new arena's slot is not cold")
	}
	runtime.LockOSThread()
	f0 := minorFaults(t)
	c.Store(data)
	f := minorFaults(t) - f0
	runtime.UnlockOSThread()
	if f >= BufferSize/4096/2 {
		t.Errorf("Store faulted %d pages in; want the pages made by the file write", f)
	}
	if c.Cold() {
		t.Error("a stored chunk is still cold")
	}
	if r := resident(t, a); r < int64(len(data)) {
		t.Errorf("%d resident bytes after storing %d", r, len(data))
	}
	if string(c.Buf()[:len(data)]) != string(data) {
		t.Fatal("the chunk's buffer does not hold the stored bytes")
	}
	c.Share(len(data))
	c.WriteDone()
	c.Release()
	if c2 := a.Buffer(); c2.slot != c.slot || c2.Cold() {
		t.Errorf("took slot %d (cold %v), want the warm slot %d", c2.slot, c2.Cold(), c.slot)
	} else {
		c2.WriteDone()
	}

	// Past keepWarm, released slots are punched: cold again.
	var held []*Chunk
	for range a.Slots() {
		c := a.Buffer()
		c.Store(data)
		c.Share(len(data))
		c.WriteDone()
		held = append(held, c)
	}
	for _, c := range held {
		c.Release()
	}
	cold := 0
	for range a.Slots() {
		c := a.Buffer()
		if c.Cold() {
			cold++
		}
		held = append(held, c)
	}
	if cold != a.Slots()-keepWarm {
		t.Errorf("%d cold slots after a drained burst, want %d", cold, a.Slots()-keepWarm)
	}
}

// TestArenaMappingKeepsNoAccessHistory: the arena is mapped with MADV_SEQUENTIAL (the
// "sr" flag in /proc/self/smaps), so unmapping a resident backlog at acptap's exit does not
// mark every page accessed on the page LRU (most of the process's teardown after a large
// burst, docs/benchmarks-history.md).
func TestArenaMappingKeepsNoAccessHistory(t *testing.T) {
	a, err := NewArena(4 * BufferSize)
	if err != nil {
		t.Fatal(err)
	}
	if l := arenaSmaps(t, a, "VmFlags:"); !slices.Contains(strings.Fields(l)[1:], "sr") {
		t.Errorf("the arena's mapping has %q, want the sequential-read flag sr", l)
	}
}

// arenaSmaps is the line of the arena's mapping in /proc/self/smaps that starts with key.
func arenaSmaps(t *testing.T, a *Arena, key string) string {
	t.Helper()
	start := uintptrOf(a.mem)
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	in := false
	for _, l := range strings.Split(string(smaps), "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, _, _ := strings.Cut(f[0], "-")
			v, err := strconv.ParseUint(lo, 16, 64)
			in = err == nil && uintptr(v) == start
			continue
		}
		if in && strings.HasPrefix(l, key) {
			return l
		}
	}
	t.Fatalf("no %s of the arena's mapping at %#x in /proc/self/smaps", key, start)
	return ""
}

// arenaRss is how much of the arena's mapping has pages in this process, in KiB.
func arenaRss(t *testing.T, a *Arena) int {
	t.Helper()
	f := strings.Fields(arenaSmaps(t, a, "Rss:"))
	kib, err := strconv.Atoi(f[1])
	if err != nil || len(f) != 3 || f[2] != "kB" {
		t.Fatalf("smaps line %q", f)
	}
	return kib
}

// TestSpoolRemainderCountsLater: the remainder a spool declares (the gap the next command
// writes to the wire log if the finisher dies before capturing the spool: the frames it
// retains are counted, never lost silently, ASR-723) is the same whether a long arena
// chunk's LFs are counted in order or afterwards on two goroutines (spoolCounts.total):
// chunks in the arena and on the heap, long and short, lost runs, lines across chunks, both
// directions, and an open line in the header, against a count in order.
func TestSpoolRemainderCountsLater(t *testing.T) {
	for seed := range int64(20) {
		a, err := NewArena(96 * BufferSize)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(seed))
		h := SpoolHeader{}
		h.Lines[1] = LineState{Open: true, N: 7}
		want := [2]lineCount{{}, {counted: true, frames: 1, bytes: 7}}
		items := make(chan Item, 256)
		for range 200 {
			dir := sdk.Direction([]sdk.Direction{sdk.C2A, sdk.A2C}[rng.Intn(2)])
			n := 1 + rng.Intn(BufferSize)
			if rng.Intn(3) == 0 {
				n = 1 + rng.Intn(100)
			}
			var ch *Chunk
			if rng.Intn(4) == 0 {
				ch = &Chunk{Data: make([]byte, n)} // on the heap
			} else {
				ch = a.Buffer()
				ch.Share(n)
				ch.WriteDone()
			}
			for i := range ch.Data {
				ch.Data[i] = 'x'
				if rng.Intn(300) == 0 {
					ch.Data[i] = '\n'
				}
			}
			if rng.Intn(10) == 0 {
				ch.Lost = Lost{Bytes: uint64(1 + rng.Intn(5000)), LFs: uint64(rng.Intn(9)), EndLF: rng.Intn(2) == 0}
			}
			c := &want[dirIndex(dir)]
			c.add(ch.Lost.Bytes, ch.Lost.LFs, ch.Lost.EndLF)
			c.add(uint64(n), uint64(bytes.Count(ch.Data, []byte{'\n'})), ch.Data[n-1] == '\n')
			items <- Item{Dir: dir, At: time.Unix(0, 1), Chunk: ch}
		}
		close(items)
		sp, err := WriteSpool(io.Discard, h, items, a)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if g := sp.Remainder[i]; g.Frames != w.frames || g.Bytes != w.bytes {
				t.Fatalf("seed %d, direction %d: remainder %d frames, %d bytes; counted in order %d, %d", seed, i, g.Frames, g.Bytes, w.frames, w.bytes)
			}
		}
	}
}

// TestSpoolOfTalliedChunksMapsNothing: the chunks the copier stored through the arena's
// file (cold slots) and tallied (Chunk.Tally) are spooled without this process mapping
// their pages (its Rss in /proc/self/smaps) — at the exit with a large backlog, faulting them in to count their LFs was
// most of the spool's time — and the remainder it declares (ASR-723: the frames a lost spool
// held are counted) is the tallies'. The control: the same chunks untallied are mapped.
func TestSpoolOfTalliedChunksMapsNothing(t *testing.T) {
	const n = 256
	data := bytes.Repeat([]byte("0123456789abcde\n"), BufferSize/16) // BufferSize/16 LFs, the last byte one
	for _, tally := range []bool{true, false} {
		a, err := NewArena(n * BufferSize)
		if err != nil {
			t.Fatal(err)
		}
		items := make(chan Item, n)
		for range n {
			c := a.Buffer()
			if !c.Cold() {
				t.Fatal("a new arena's slot is not cold")
			}
			c.Store(data)
			c.Share(len(data))
			if tally {
				c.Tally(BufferSize/16, true)
			}
			c.WriteDone()
			items <- Item{Dir: sdk.A2C, At: time.Unix(0, 1), Chunk: c}
		}
		close(items)
		if r := arenaRss(t, a); r != 0 {
			t.Fatalf("%d KiB of the arena mapped here after stores through its file; want none", r)
		}
		sp, err := WriteSpool(io.Discard, SpoolHeader{}, items, a)
		if err != nil {
			t.Fatal(err)
		}
		// A gap's bytes are those of its lines without their LFs.
		if g := sp.Remainder[1]; g.Frames != n*BufferSize/16 || g.Bytes != n*(BufferSize-BufferSize/16) {
			t.Errorf("tallied %v: remainder %d frames, %d bytes; want %d, %d", tally, g.Frames, g.Bytes, n*BufferSize/16, n*(BufferSize-BufferSize/16))
		}
		r := arenaRss(t, a)
		switch {
		case tally && r != 0:
			t.Errorf("the spool of %d tallied chunks mapped %d KiB of them here; want none", n, r)
		case !tally && r < n*BufferSize/1024/2:
			t.Fatalf("the control: the spool of %d untallied chunks mapped only %d KiB of them here; this test cannot tell", n, r)
		}
		t.Logf("tallied %v: %d KiB of the arena mapped after the spool", tally, r)
	}
}
