package tee

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/acptap/acptap/host/captured"
)

// A splicer is a direction's copy path for a burst, where both ends allow it: when the last
// read filled its whole buffer, the next chunk is not read. tee(2) duplicates what the
// source pipe holds into a capture pipe of the tee's own (no copy: pipe buffers are
// reference-counted pages); capture moves those bytes into its arena slot with splice(2)
// (one copy, in the kernel); then splice(2) moves the source's bytes on to the destination
// (no copy). A read and a write pass every byte through user memory twice. The order is
// feed's: a chunk is queued for capture before it is forwarded. A quiet session's short
// lines keep the plain read and write (tee is only tried after a read or tee of at least
// copyBelow bytes), so the latency path is as before.
type splicer struct {
	src, dst   syscall.RawConn
	capR, capW int    // the capture pipe
	burst      bool   // the last read or tee was long: try tee before reading
	own        []byte // bytes read out of the capture pipe that capture does not keep
	off        bool   // a pipe failed: plain reads and writes from then on
}

// capPipeSize is the capture pipe's capacity: a tee takes at most what fits.
const capPipeSize = 4 * bufSize

// newSplicer returns the splicer of a copy from src to dst, or nil when they do not allow
// it: src must be a pipe, dst a pipe or a socket. A source in non-blocking mode needs a
// destination in it too (then the runtime's poller can wait for it to take more).
func newSplicer(dst io.Writer, src io.Reader) *splicer {
	sf, ok1 := src.(*os.File)
	df, ok2 := dst.(*os.File)
	if !ok1 || !ok2 {
		return nil
	}
	smode, snb, ok1 := fdKind(sf)
	dmode, dnb, ok2 := fdKind(df)
	if !ok1 || !ok2 || smode != unix.S_IFIFO || (dmode != unix.S_IFIFO && dmode != unix.S_IFSOCK) || (snb && !dnb) {
		return nil
	}
	s := &splicer{}
	var err error
	if s.src, err = sf.SyscallConn(); err != nil {
		return nil
	}
	if s.dst, err = df.SyscallConn(); err != nil {
		return nil
	}
	var p [2]int
	if unix.Pipe2(p[:], unix.O_CLOEXEC) != nil {
		return nil
	}
	s.capR, s.capW = p[0], p[1]
	_, _ = unix.FcntlInt(uintptr(s.capW), unix.F_SETPIPE_SZ, capPipeSize) // else 64 KiB: smaller tees
	return s
}

// fdKind is f's file type and whether it is in non-blocking mode.
func fdKind(f *os.File) (mode uint32, nonblock, ok bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false, false
	}
	var st unix.Stat_t
	var serr error
	var fl int
	err = rc.Control(func(fd uintptr) {
		serr = unix.Fstat(int(fd), &st)
		if serr == nil {
			fl, serr = unix.FcntlInt(fd, unix.F_GETFL, 0)
		}
	})
	if err != nil || serr != nil {
		return 0, false, false
	}
	return st.Mode & unix.S_IFMT, fl&unix.O_NONBLOCK != 0, true
}

// ready says whether the next chunk should be teed: a burst is on.
func (s *splicer) ready() bool { return s != nil && s.burst && !s.off }

// read notes the size of a plain read: a long one starts a burst.
func (s *splicer) read(n int) {
	if s != nil {
		s.burst = n >= copyBelow
	}
}

// tee duplicates up to a buffer's worth of what the source holds into the capture pipe,
// waiting for it as a read would (in the thread for a blocking source, in the runtime's
// poller for a non-blocking one). The capture pipe is empty: every teed chunk is moved out
// of it before the next tee, so only the source can make it wait. n is 0 at the source's
// end, or when tee failed; the caller then reads as usual, which sees the end or the error.
func (s *splicer) tee() (n int) {
	err := s.src.Read(func(fd uintptr) bool {
		for {
			m, e := unix.Tee(int(fd), s.capW, bufSize, 0)
			switch e {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false
			case nil:
				n = int(m)
			}
			return true
		}
	})
	if err != nil {
		n = 0
	}
	s.burst = n >= copyBelow
	return n
}

// move moves n teed bytes into ch's buffer. False: the capture pipe failed (see fail).
func (s *splicer) move(ch *captured.Chunk, n int) bool {
	if err := ch.SpliceIn(s.capR, n); err != nil {
		s.fail()
		return false
	}
	return true
}

// fill moves len(b) teed bytes into b.
func (s *splicer) fill(b []byte) bool {
	if err := captured.ReadFull(s.capR, b); err != nil {
		s.fail()
		return false
	}
	return true
}

// take reads n teed bytes out for a chunk capture does not keep (dropped, or capture is
// over); they stay valid until the next take.
func (s *splicer) take(n int) ([]byte, bool) {
	if s.own == nil {
		s.own = make([]byte, bufSize)
	}
	b := s.own[:n]
	return b, s.fill(b)
}

// fail turns the splicer off after a capture pipe error: whatever the pipe still holds is
// dropped with it, and the source's bytes, not yet forwarded, are read as usual.
func (s *splicer) fail() {
	s.off = true
	s.close()
}

// forward moves the n bytes teed last from the source to the destination.
func (s *splicer) forward(n int) error {
	var serr error
	err := s.src.Read(func(sfd uintptr) bool {
		werr := s.dst.Write(func(dfd uintptr) bool {
			for n > 0 {
				m, e := unix.Splice(int(sfd), nil, int(dfd), nil, n, unix.SPLICE_F_MOVE)
				switch {
				case e == unix.EINTR:
					continue
				case e == unix.EAGAIN:
					return false // the destination is full: the poller waits for room
				case e != nil:
					serr = os.NewSyscallError("splice", e)
					return true
				case m == 0:
					serr = io.ErrUnexpectedEOF // the source lost teed bytes: cannot be
					return true
				}
				n -= int(m)
			}
			return true
		})
		if serr == nil {
			serr = werr
		}
		return true
	})
	if serr == nil {
		serr = err
	}
	return serr
}

// close closes the capture pipe.
func (s *splicer) close() {
	if s != nil && s.capR >= 0 {
		unix.Close(s.capR)
		unix.Close(s.capW)
		s.capR, s.capW = -1, -1
	}
}
