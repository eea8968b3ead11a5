package cli

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
)

func runRoundtrip(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "roundtrip", "[flags] STREAM | SESSION-ID",
		"Checks ASR-732 for a stream S: replays S through the replay plugin, records the replay\n"+
			"with the same plugin's recorder (the updates wrapped in an initialize and session/resume\n"+
			"exchange, as a recorder sees an agent replay history), and compares the context views of\n"+
			"S and of the recording entity by entity: IDs, order, roles, content blocks, tool names,\n"+
			"inputs, mapped statuses, display content and file change operations. What the replay\n"+
			"leaves out is allowed only when the loss report names its category. Prints the differences\n"+
			"and exits 1 on any; 0 when the round trip holds.\n\n"+
			"--via acp-v1 checks the same for ACP v1: the replay to v1 recorded again by the v1 recorder\n"+
			"(inside session/load), allowing what the replay's report and the recording's own declared\n"+
			"losses name.")
	c.register(fs)
	pluginName := fs.String("plugin", "", "the replay plugin (default: the first plugin configured for the ACP v2 revision that can replay)")
	keep := fs.String("recorded", "", "also write the recording of the replay (S′) to FILE")
	reportPath := fs.String("report", "", "also write the loss report to FILE")
	verbose := fs.Bool("v", false, "also list what the loss report excused")
	via := fs.String("via", protoV2, "the ACP version of the replay: "+protoV2+", or "+protoV1+" (replayed as v1, recorded again by the v1 recorder)")
	pos, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(env.Stderr, "acptap roundtrip: give one stream file or session ID")
		return ExitUsage
	}
	if !validProto(*via) {
		fmt.Fprintf(env.Stderr, "acptap roundtrip: --via %s: give %s or %s\n", *via, protoV2, protoV1)
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap roundtrip: %s\n", oneLine(err))
		return ExitFailure
	}
	path, err := streamPath(env, cfg, pos[0])
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap roundtrip: %s\n", oneLine(err))
		return ExitFailure
	}
	logger, closer, err := newCommandLogger(cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap roundtrip: %s\n", oneLine(err))
		return ExitFailure
	}
	defer closeQuietly(closer)
	ctx := context.Background()
	rp, err := launchReplayerTo(ctx, env, cfg, logger, *pluginName, *via)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap roundtrip: %s\n", oneLine(err))
		return ExitFailure
	}
	defer rp.inst.Kill()
	rt, err := roundTrip(ctx, rp, path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap roundtrip: %s: %s\n", path, oneLine(err))
		return ExitFailure
	}
	if *keep != "" {
		if err := os.WriteFile(*keep, rt.recorded, store.FileMode); err != nil {
			fmt.Fprintf(env.Stderr, "acptap roundtrip: %s\n", oneLine(err))
			return ExitFailure
		}
	}
	if *reportPath != "" {
		if err := os.WriteFile(*reportPath, rt.report.Marshal(), store.FileMode); err != nil {
			fmt.Fprintf(env.Stderr, "acptap roundtrip: %s\n", oneLine(err))
			return ExitFailure
		}
	}
	res := rt.result
	cats := map[string]bool{}
	for _, d := range res.Excused {
		cats[d.Category] = true
	}
	fmt.Fprintf(env.Stdout, "round trip of %s (session %s): %d entities compared, %d updates replayed, %d left out under reported loss categories %v\n",
		path, rt.report.SessionID, res.Entities, rt.report.Updates, len(res.Excused), slices.Sorted(maps.Keys(cats)))
	if *verbose {
		for _, d := range res.Excused {
			fmt.Fprintf(env.Stdout, "  excused (%s): %s: %s\n", d.Category, d.Key, d.What)
		}
	}
	if len(res.Differences) > 0 {
		fmt.Fprintf(env.Stdout, "%d differences:\n", len(res.Differences))
		for _, d := range res.Differences {
			fmt.Fprintf(env.Stdout, "  %s\n", d)
		}
		return ExitFailure
	}
	fmt.Fprintln(env.Stdout, "the round trip holds (ASR-732)")
	return ExitOK
}

// roundTripResult is a round trip's outcome.
type roundTripResult struct {
	result   replay.Result
	report   replay.LossReport
	recorded []byte // S′
}

// roundTrip replays the stream through the plugin, records the replay
// through the same plugin (a Map session fed as it replays), and compares.
func roundTrip(ctx context.Context, rp *replayPlugin, path string) (*roundTripResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	src, err := replay.ReadStream(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	sess, err := rp.inst.Mapper.Start(ctx, sdk.StartRequest{Config: rp.config, Connection: "roundtrip", WireLog: "roundtrip",
		Input: rp.target, Mode: sdk.ModeRebuild})
	if err != nil {
		return nil, fmt.Errorf("start the recorder: %w", err)
	}
	var recorded bytes.Buffer
	collect := func(outs []sdk.Output) {
		for _, o := range outs {
			if (o.Kind == sdk.ASRHeader || o.Kind == sdk.ASRRecord) && o.Session == src.Header.SessionID {
				recorded.Write(o.JSON)
				recorded.WriteByte('\n')
			}
		}
	}
	fb := pluginwire.NewFrameBuilder()
	var batch []sdk.Frame
	seq := uint64(0)
	at := time.Time{}
	add := func(dir sdk.Direction, line []byte) {
		seq++
		batch = fb.Line(batch, seq, dir, at, bytes.Clone(line))
	}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		outs, err := sess.Map(ctx, batch)
		if err != nil {
			return fmt.Errorf("record the replay: %w", err)
		}
		collect(outs)
		batch = batch[:0]
		return nil
	}
	before, after := replay.ResumeExchange(src.Header)
	compare := replay.Compare
	if rp.target == replay.TargetV1 {
		before, after = replay.LoadExchange(src.Header)
		compare = replay.CompareV1
	}
	for _, l := range before {
		add(l.Dir, l.Line)
	}
	raw, err := rp.replayFile(ctx, path, func(o sdk.Output) error {
		if o.Kind != sdk.ACPFrame {
			return nil
		}
		add(sdk.A2C, o.JSON)
		if len(batch) >= 512 {
			return flush()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	for _, l := range after {
		add(l.Dir, l.Line)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	outs, err := sess.Finish(ctx, "roundtrip")
	if err != nil {
		return nil, fmt.Errorf("record the replay: %w", err)
	}
	collect(outs)
	report, err := replay.ParseLossReport(raw)
	if err != nil {
		return nil, err
	}
	rec, err := replay.ReadStream(bytes.NewReader(recorded.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("the recording of the replay: %w", err)
	}
	return &roundTripResult{result: compare(src, rec, report), report: report, recorded: recorded.Bytes()}, nil
}
