package ship

import (
	"context"
	"os"
	"time"
)

// FollowOptions steer Follow.
type FollowOptions struct {
	// Interval between passes.
	Interval time.Duration
	// Parent is the recording process, this process's parent: while it
	// lives, passes go on; once it is gone (this process is reparented),
	// Follow stops after a pass that found nothing to ship
	// (the recording's last lines, and a finisher's, are out).
	Parent int
	// Linger bounds how long Follow keeps trying after the parent is gone
	// (the server may be down); what is left is shipped by the next
	// `acptap ship` or recording.
	Linger time.Duration
	// Busy, when set, reports whether outputs are still being written
	// after the parent is gone (a finisher maps a connection record handed
	// over); Follow goes on while it does, within Linger.
	Busy func() bool
	// Connect dials the server (again after a failure).
	Connect func(context.Context) (*Shipper, error)
	// Report gets each pass's outcome.
	Report func(Stats, error)
}

// Follow ships pass after pass until the parent is gone and nothing is
// left, or ctx is done.
func Follow(ctx context.Context, o FollowOptions) {
	var sh *Shipper
	var goneAt time.Time
	for {
		if goneAt.IsZero() && !alive(o.Parent) {
			goneAt = time.Now()
		}
		var st Stats
		var err error
		if sh == nil {
			sh, err = o.Connect(ctx)
		}
		if sh != nil {
			st, err = sh.Pass(ctx)
			if err != nil {
				sh.Conn.Close()
				sh = nil
			}
		}
		if o.Report != nil {
			o.Report(st, err)
		}
		idle := err == nil && st.Lines == 0 && (o.Busy == nil || !o.Busy())
		if !goneAt.IsZero() && (idle || time.Since(goneAt) > o.Linger) {
			if sh != nil {
				sh.Conn.Close()
			}
			return
		}
		select {
		case <-ctx.Done():
			if sh != nil {
				sh.Conn.Close()
			}
			return
		case <-time.After(o.Interval):
		}
	}
}

// alive reports whether pid is still this process's parent: a parent that
// exited (even one not reaped yet) has handed its children to another.
func alive(pid int) bool { return pid > 0 && os.Getppid() == pid }
