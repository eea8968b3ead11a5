package recording

import (
	"os"
	"sync"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/finisher"
	"github.com/acptap/acptap/host/pipeline"
)

// standby is a recording's finisher, started the first time the recording falls behind
// (pipeline.Options.OnBehind), so that an exit while behind forks nothing
// (finisher.SpawnEarly): it waits for acptap's exit; if the connection was handed over it
// maps it, otherwise (the marker is gone) it exits. spool is the memory file it inherited
// for what capture has not written at the exit (finisher.NewSpool).
type standby struct {
	mu      sync.Mutex
	started bool
	spool   *os.File
}

// behind says whether the mapping or capture is behind the tee.
func (rec *recorder) behind() bool {
	return rec.p.Behind() || len(rec.queue) >= pipeline.BacklogReads
}

// foreground: record maps to the end itself (OTLP export, or record.map_before_exit).
func (rec *recorder) foreground() bool {
	return rec.exporter != nil || rec.s.Config != nil && rec.s.Config.Record.MapBeforeExit
}

// startStandby starts the standby finisher if none waits (once, unless it died: then
// again); concurrent calls wait for the first.
func (rec *recorder) startStandby() bool {
	sb := &rec.standby
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.started && rec.marker.EarlyAlive() {
		return true
	}
	if sb.started {
		rec.logger.Warn("the finisher on standby is gone; starting another")
		if sb.spool != nil {
			sb.spool.Close()
		}
		sb.started, sb.spool = false, nil
	}
	func() {
		args := rec.finisherArgs("--after-parent", rec.conn)
		spool, err := finisher.NewSpool()
		if err != nil {
			rec.logger.Debug("no spool; capture writes the queue before exit", "error", err)
			spool = nil
		} else if rec.arena != nil {
			args = rec.finisherArgs("--after-parent", "--spool", "--arena", rec.conn)
		} else {
			args = rec.finisherArgs("--after-parent", "--spool", rec.conn)
		}
		if err := finisher.SpawnEarly(rec.s.Self, args, rec.marker, spool, rec.arena.File()); err != nil {
			rec.logger.Warn("finisher not started early; starting it after capture", "error", err)
			if spool != nil {
				spool.Close()
			}
			return
		}
		sb.started, sb.spool = true, spool
		rec.logger.Info("finisher on standby: the recording is behind", "spool", spool != nil, "pid", rec.marker.EarlyPID())
	}()
	return sb.started
}

// handOverEarly hands the connection to the standby finisher (started now if it is not
// yet) at the agent's exit and gives it what capture has not written: capture stops at
// the next read, and the rest of the tee's queue goes into the spool, so acptap's exit
// costs a copy of the backlog in memory instead of its capture. Without a spool (not
// Linux, or it failed), capture writes the queue to the wire log first, as before.
// spawned: the finisher runs; spooled: the marker's record of the spool.
func (rec *recorder) handOverEarly() (spawned bool, spooled *finisher.Spool) {
	// Capture goes on writing the queue while a finisher not yet started is forked and
	// exec'd; once it runs, capture stops and the rest is spooled. A finisher that could
	// not be started leaves capture to write everything.
	if !rec.startStandby() {
		return false, nil
	}
	spool := rec.standby.spool
	if spool == nil {
		return true, nil
	}
	defer spool.Close()
	h, ok := rec.p.StopCapture()
	if !ok {
		return true, nil
	}
	sp, err := captured.WriteSpool(spool, captured.SpoolHeader{Lines: h.Lines}, rec.queue, rec.arena)
	if err != nil {
		// The rest of the queue is gone with the error: the remainder is declared.
		rec.logger.Error("spool incomplete; its frames are declared as a gap", "error", err)
	}
	rec.logger.Info("capture spooled", "in_place_bytes", sp.InPlace, "copied_bytes", sp.Copied)
	return true, &finisher.Spool{WireBytes: h.WireBytes, Seq: h.Seq, Detect: h.Detect, Remainder: sp.Remainder}
}

func spooledFrames(sp *finisher.Spool) uint64 {
	if sp == nil {
		return 0
	}
	return sp.Remainder[0].Frames + sp.Remainder[1].Frames
}
