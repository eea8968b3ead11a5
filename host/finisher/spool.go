package finisher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/storesink"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// SpoolFD is the descriptor a finisher started by SpawnEarly with a spool finds it on.
const SpoolFD = 5

// ArenaFD is the descriptor a finisher started by SpawnEarly with the recording's queue
// arena (captured.Arena) finds it on.
const ArenaFD = 6

// Spool is the marker's record of a capture handed over unwritten: where the wire log
// stopped (pipeline.Handover, without the splitter's lines, which are in the spool) and
// what the spool holds, declared as gaps if it is lost.
type Spool struct {
	WireBytes int64                `json:"wireBytes"`
	Seq       uint64               `json:"seq"`
	Detect    pipeline.DetectState `json:"detect"`
	Remainder captured.Remainder   `json:"remainder"`
}

// HandOverSpool is HandOver for a connection whose capture's end is spooled: until the
// finisher has written it to the wire log, the connection may name any session (a new
// connection of any session waits for it).
func (m *Marker) HandOverSpool(sessions []string, sp Spool) error {
	return m.write(state{State: stateFinishing, Sessions: sessions, Spool: &sp})
}

// InheritedSpool returns the spool a finisher started with one inherited (SpoolFD).
func InheritedSpool() *os.File {
	syscall.CloseOnExec(SpoolFD)
	return os.NewFile(SpoolFD, "acptap-spool")
}

// InheritedArena maps the queue arena a finisher started with one inherited (ArenaFD).
func InheritedArena() ([]byte, error) {
	syscall.CloseOnExec(ArenaFD)
	f := os.NewFile(ArenaFD, "acptap-queue")
	defer f.Close() // the mapping outlives the descriptor
	return captured.MapArenaFile(f)
}

// captureSpool writes a handed-over capture's end to the wire log before the connection
// is mapped: from the spool when this process has it, else (the finisher that had it died,
// or the machine stopped) as the gaps the marker counts. Then the marker names every
// session of the connection and no longer holds a spool.
func captureSpool(ctx context.Context, o Options, m *Marker, s state, hdr wire.Header, log hclog.Logger) error {
	sp := s.Spool
	h := pipeline.Handover{WireBytes: sp.WireBytes, Seq: sp.Seq, Sessions: s.Sessions, Detect: sp.Detect}
	items := make(chan captured.Item, 64)
	var next func() (captured.Item, error)
	if o.Spool != nil {
		sh, n, err := captured.ReadSpool(io.NewSectionReader(o.Spool, 0, 1<<62), o.Arena)
		if err != nil {
			log.Error("spool unreadable; its frames are declared as a gap", "connection", m.Conn, "error", err)
		} else {
			h.Lines, next = sh.Lines, n
		}
	}
	po := o.Pipeline(hdr)
	po.WirePath, po.Connection, po.Agent = o.Store.WirePath(m.Conn), m.Conn, hdr.Agent.Command
	po.Mode, po.Sessions = sdk.ModeRecord, storesink.Sessions{St: o.Store}
	if po.Logger == nil {
		po.Logger = log
	}
	p := pipeline.New(po)
	if err := p.Continue(ctx, h, items); err != nil {
		return fmt.Errorf("continue capture: %w", err)
	}
	var readErr error
	if next != nil {
		for {
			it, err := next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				readErr = err
				break
			}
			items <- it
		}
	}
	if next == nil || readErr != nil {
		// Without the spool, or past a bad record of it, the exact lines are unknown: the
		// whole remainder is declared (a read error after some chunks counts their lines
		// twice, never none).
		for i, d := range []sdk.Direction{sdk.C2A, sdk.A2C} {
			if g := sp.Remainder[i]; g.Frames > 0 || g.Bytes > 0 {
				items <- captured.Item{Dir: d, At: time.Now(), Gap: &g}
			}
		}
		log.Warn("handed-over capture lost; declared as gaps", "connection", m.Conn,
			"c2a_frames", sp.Remainder[0].Frames, "a2c_frames", sp.Remainder[1].Frames, "error", readErr)
	}
	close(items)
	stats, err := p.Wait()
	if o.Arena != nil {
		// The spool's bytes are in the wire log now: the queue's memory goes back to the
		// system before the mapping, which can take long, begins.
		if uerr := captured.UnmapArena(o.Arena); uerr != nil {
			log.Debug("queue arena not unmapped", "error", uerr)
		}
	}
	if err != nil {
		return fmt.Errorf("continue capture: %w", err)
	}
	sessions := slices.Clone(stats.Sessions)
	if err := m.HandOver(sessions); err != nil {
		return err
	}
	log.Info("handed-over capture written", "connection", m.Conn, "frames", stats.Frames, "gap_frames", stats.GapFrames)
	return nil
}
