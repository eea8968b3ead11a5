package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/wire"
	ireplay "github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
)

// RoundTrip is a round trip's outcome (ASR-732).
type RoundTrip struct {
	Path     string // the stream S
	Result   ireplay.Result
	Report   ireplay.LossReport
	Recorded []byte // S′, the recording of the replay
}

// Holds says whether the round trip holds: no differences.
func (rt *RoundTrip) Holds() bool { return len(rt.Result.Differences) == 0 }

// Print writes the summary line, with verbose what the loss report
// excused, and the differences or that the round trip holds.
func (rt *RoundTrip) Print(w io.Writer, verbose bool) {
	res := rt.Result
	cats := map[string]bool{}
	for _, d := range res.Excused {
		cats[d.Category] = true
	}
	fmt.Fprintf(w, "round trip of %s (session %s): %d entities compared, %d updates replayed, %d left out under reported loss categories %v\n",
		rt.Path, rt.Report.SessionID, res.Entities, rt.Report.Updates, len(res.Excused), slices.Sorted(maps.Keys(cats)))
	if verbose {
		for _, d := range res.Excused {
			fmt.Fprintf(w, "  excused (%s): %s: %s\n", d.Category, d.Key, d.What)
		}
	}
	if !rt.Holds() {
		fmt.Fprintf(w, "%d differences:\n", len(res.Differences))
		for _, d := range res.Differences {
			fmt.Fprintf(w, "  %s\n", d)
		}
		return
	}
	fmt.Fprintln(w, "the round trip holds (ASR-732)")
}

// roundTripConnection names the connection (and its wire log) the replay
// is recorded as.
const roundTripConnection = "roundtrip"

// RunRoundTrip replays the stream at path through the plugin, records the
// replay as a recorder sees an agent replay history — the updates inside
// an initialize and session/resume exchange (session/load for ACP v1),
// written to a wire log and mapped by the pipeline (host/pipeline, as
// `acptap rebuild` maps a recorded connection) with the same plugin as the
// revision's recorder — and compares the context views of S and of the
// recording. The wire log lives in a temporary directory, removed after.
func RunRoundTrip(ctx context.Context, p *Plugin, path string, logger hclog.Logger) (*RoundTrip, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	src, err := ireplay.ReadStream(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "acptap-roundtrip-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// Named without .jsonl: records point to it (native.ref.wire) as
	// "roundtrip", as they always have.
	wirePath := filepath.Join(dir, roundTripConnection)

	before, after := ireplay.ResumeExchange(src.Header)
	compare := ireplay.Compare
	if p.target == ireplay.TargetV1 {
		before, after = ireplay.LoadExchange(src.Header)
		compare = ireplay.CompareV1
	}
	raw, err := writeReplayLog(ctx, p, path, wirePath, before, after)
	if err != nil {
		return nil, err
	}
	report, err := ireplay.ParseLossReport(raw)
	if err != nil {
		return nil, err
	}
	recorded, err := record(ctx, p, wirePath, src.Header.SessionID, logger)
	if err != nil {
		return nil, fmt.Errorf("record the replay: %w", err)
	}
	rec, err := ireplay.ReadStream(bytes.NewReader(recorded))
	if err != nil {
		return nil, fmt.Errorf("the recording of the replay: %w", err)
	}
	return &RoundTrip{Path: path, Result: compare(src, rec, report), Report: report, Recorded: recorded}, nil
}

// writeReplayLog writes the wire log of the replayed connection: before,
// the replay's frames from the agent, after; it returns the loss report.
func writeReplayLog(ctx context.Context, p *Plugin, path, wirePath string, before, after []ireplay.WireLine) ([]byte, error) {
	w, err := wire.Create(wirePath, wire.Header{Connection: roundTripConnection})
	if err != nil {
		return nil, err
	}
	add := func(dir sdk.Direction, line []byte) error {
		_, err := w.Append(wire.Entry{Type: wire.TypeFrame, Dir: dir, Line: line})
		return err
	}
	for _, l := range before {
		if err := add(l.Dir, l.Line); err != nil {
			w.Close()
			return nil, err
		}
	}
	raw, err := p.ReplayFile(ctx, path, func(o sdk.Output) error {
		if o.Kind != sdk.ACPFrame {
			return nil
		}
		return add(sdk.A2C, o.JSON)
	})
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("replay: %w", err)
	}
	for _, l := range after {
		if err := add(l.Dir, l.Line); err != nil {
			w.Close()
			return nil, err
		}
	}
	return raw, w.Close()
}

// record maps the wire log through the pipeline with the plugin as the
// revision's only (so primary) plugin, and returns the ASR stream it wrote
// for the session.
func record(ctx context.Context, p *Plugin, wirePath, session string, logger hclog.Logger) ([]byte, error) {
	name := p.inst.Spec.Name
	launched := false
	launch := func(ctx context.Context, n string) (*pipeline.Plugin, error) {
		if n != name || launched {
			// No restarts (MaxRestarts 0): the replay plugin is the one
			// instance, and its caller stops it.
			return nil, fmt.Errorf("plugin %s: only the replay's own instance records the replay", n)
		}
		launched = true
		return &pipeline.Plugin{Name: name, Info: p.inst.Info, Mapper: p.inst.Mapper, Kill: p.inst.Kill, Release: func() {}}, nil
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	sink := &streamSink{session: session}
	pl := pipeline.New(pipeline.Options{
		WirePath: wirePath, Connection: roundTripConnection, Mode: sdk.ModeRebuild,
		ForceRevision: p.target, Revisions: map[string][]string{p.target: {name}},
		Configs: map[string][]byte{name: p.config}, Launch: launch, Sink: sink,
		Logger: logger.Named("roundtrip"), FinishReason: roundTripConnection,
		OnReadProblem: func(pr wire.Problem) { sink.gap(fmt.Sprintf("wire log line %d: %s", pr.Line, pr.Reason)) },
	})
	if err := pl.Rebuild(ctx); err != nil {
		return nil, err
	}
	if _, err := pl.Wait(); err != nil {
		return nil, err
	}
	return sink.stream()
}

// streamSink keeps the primary plugin's ASR header and records for one
// session; a gap (the plugin gave up) fails the round trip.
type streamSink struct {
	session string
	mu      sync.Mutex
	buf     bytes.Buffer
	errs    []error
}

func (s *streamSink) Output(_ string, primary bool, o sdk.Output) {
	if !primary || (o.Kind != sdk.ASRHeader && o.Kind != sdk.ASRRecord) || o.Session != s.session {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(o.JSON)
	s.buf.WriteByte('\n')
}

func (s *streamSink) Gap(plugin string, _ bool, through uint64, reason string) {
	s.gap(fmt.Sprintf("plugin %s mapped nothing after wire seq %d: %s", plugin, through, reason))
}

func (s *streamSink) gap(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, errors.New(why))
}

func (s *streamSink) stream() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := errors.Join(s.errs...); err != nil {
		return nil, err
	}
	return s.buf.Bytes(), nil
}
