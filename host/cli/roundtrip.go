package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/acptap/acptap/host/replay"
	"github.com/acptap/acptap/internal/private"
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
	via := fs.String("via", replay.ProtoV2, "the ACP version of the replay: "+replay.ProtoV2+", or "+replay.ProtoV1+" (replayed as v1, recorded again by the v1 recorder)")
	pos, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(env.Stderr, "acptap roundtrip: give one stream file or session ID")
		return ExitUsage
	}
	if !replay.ValidProto(*via) {
		fmt.Fprintf(env.Stderr, "acptap roundtrip: --via %s: give %s or %s\n", *via, replay.ProtoV2, replay.ProtoV1)
		return ExitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(env.Stderr, "acptap roundtrip: %s\n", oneLine(err))
		return ExitFailure
	}
	cfg, err := c.load()
	if err != nil {
		return fail(err)
	}
	path, err := streamPath(env, cfg, pos[0])
	if err != nil {
		return fail(err)
	}
	ps, closer, err := replayPlugins(env, cfg)
	if err != nil {
		return fail(err)
	}
	defer closeQuietly(closer)
	ctx := context.Background()
	p, err := ps.Launch(ctx, *pluginName, *via)
	if err != nil {
		return fail(err)
	}
	defer p.Kill()
	rt, err := replay.RunRoundTrip(ctx, p, path, ps.Logger)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", path, err))
	}
	if *keep != "" {
		if err := os.WriteFile(*keep, rt.Recorded, private.FileMode); err != nil {
			return fail(err)
		}
	}
	if *reportPath != "" {
		if err := os.WriteFile(*reportPath, rt.Report.Marshal(), private.FileMode); err != nil {
			return fail(err)
		}
	}
	rt.Print(env.Stdout, *verbose)
	if !rt.Holds() {
		return ExitFailure
	}
	return ExitOK
}
