package finisher

import (
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/acptap/acptap/host/store"
)

// TestMarkerRewriteKeepsItsBlock: rewriting a marker whose block is on disk leaves the block
// where it is. Emptying the file first freed it, and on a file system that discards on free
// (this project's machine: ext4, discard, no journal) the discard was a synchronous device
// command on acptap's exit path, 1-17 ms behind the wire log's writeback. The block is read
// with FIEMAP; a file system without it skips.
func TestMarkerRewriteKeepsItsBlock(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Create(st, "c-1")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	if err := m.f.Sync(); err != nil { // writeback allocates the block
		t.Fatal(err)
	}
	before, ok := firstBlock(t, m.f)
	if !ok {
		t.Skip("the file system does not map the marker's block (FIEMAP)")
	}
	for i := 0; i < 3; i++ {
		if err := m.HandOver([]string{"s1", "s2"}[:1+i%2]); err != nil {
			t.Fatal(err)
		}
		if after, ok := firstBlock(t, m.f); !ok || after != before {
			t.Fatalf("rewrite %d: the marker's block is %d (mapped %v), was %d: it was freed and allocated again", i, after, ok, before)
		}
	}
	if s, _ := readState(m.path); s.State != stateFinishing || len(s.Sessions) != 1 {
		t.Errorf("state = %+v, want finishing with one session", s)
	}
}

// firstBlock is the physical byte offset of f's first extent, without syncing; ok is false
// when the file system has no FIEMAP or the extent is not on disk (delayed allocation).
func firstBlock(t *testing.T, f *os.File) (phys uint64, ok bool) {
	t.Helper()
	const fsIocFiemap = 0xC020660B // _IOWR('f', 11, struct fiemap)
	const extentUnknown, extentDelalloc = 0x2, 0x4
	var buf struct {
		start, length                            uint64
		flags, mapped, count, reserved           uint32
		logical, physical, extLength, res1, res2 uint64
		extFlags, r1, r2, r3                     uint32
	}
	buf.length, buf.count = ^uint64(0), 1
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&buf))); errno != 0 {
		return 0, false
	}
	if buf.mapped == 0 || buf.extFlags&(extentUnknown|extentDelalloc) != 0 {
		return 0, false
	}
	return buf.physical, true
}
