package finisher

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

// ParentFD is the descriptor a finisher started by SpawnEarly reads to its
// end before it maps: the read end of a pipe whose write end only the
// recording holds, so the end of file comes when the recording is over
// (it let go of the marker: Done or Release; or the process exited or died),
// with every byte of the wire log written and every session lock released.
const ParentFD = 4

// SpawnEarly is Spawn for a finisher started while the caller is still
// writing the wire log: its fork and exec, and its own start-up, overlap
// with what the caller has left to do, and the caller's exit does not wait
// for them. The finisher waits (WaitParent) until this process let go of the
// connection (its marker) or exited,
// then maps. The caller must still record the hand-over (HandOver) before
// it exits; a caller that dies first leaves the marker "recording", and the
// finisher maps what the wire log holds, as the next command would.
//
// A spool (NewSpool), when not nil, is passed on SpoolFD.
func SpawnEarly(self string, args []string, m *Marker, spool, arena *os.File) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start finisher: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(self, args...)
	cmd.SysProcAttr = detach()
	cmd.ExtraFiles = []*os.File{m.File(), r} // MarkerFD, ParentFD
	if spool != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, spool) // SpoolFD
		if arena != nil {
			cmd.ExtraFiles = append(cmd.ExtraFiles, arena) // ArenaFD
		}
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start finisher: %w", err)
	}
	m.parents = append(m.parents, w) // closed with the marker (Done, Release) or at exit
	m.early = append(m.early, cmd.Process.Pid)
	return nil
}

// EarlyPID is the process id of the last finisher SpawnEarly started for m (0: none).
func (m *Marker) EarlyPID() int {
	if len(m.early) == 0 {
		return 0
	}
	return m.early[len(m.early)-1]
}

// WaitParent is the first step of a finisher started by SpawnEarly: it
// returns once the recording that started it let go of the connection (or
// its process exited or died).
func WaitParent() error {
	f := os.NewFile(ParentFD, "parent")
	defer f.Close()
	if _, err := io.Copy(io.Discard, f); err != nil {
		return fmt.Errorf("wait for the recording to exit: %w", err)
	}
	return nil
}
