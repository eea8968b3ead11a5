package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/acptap/acptap/host/replayserve"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
)

// runServe is `acptap replay --serve STORE`: the read-only agent of
// host/replayserve on stdin/stdout, with the replay plugins started out of
// process when a session is first opened (one per target: ACP v2 for a v2
// client, --plugin or the one configured for the v2 revision; ACP v1 for a
// v1 client, the one configured for "acp/1").
func runServe(env *Env, c *common, pluginName string) int {
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap replay --serve: %s\n", oneLine(err))
		return ExitFailure
	}
	if fi, err := os.Stat(cfg.Store); err != nil || !fi.IsDir() {
		fmt.Fprintf(env.Stderr, "acptap replay --serve: no store at %s\n", cfg.Store)
		return ExitFailure
	}
	st, err := store.Open(cfg.Store)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap replay --serve: %s\n", oneLine(err))
		return ExitFailure
	}
	logger, closer, err := newCommandLogger(cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap replay --serve: %s\n", oneLine(err))
		return ExitFailure
	}
	defer closeQuietly(closer)
	plugins := map[string]*replayPlugin{}
	defer func() {
		for _, p := range plugins {
			p.inst.Kill()
		}
	}()
	v2 := "acp/2@" + cfg.SchemaRevision
	replayer := func(ctx context.Context, target, path string, emit func(sdk.Output) error) ([]byte, error) {
		rp := plugins[target]
		if rp == nil {
			var err error
			if strings.HasPrefix(target, replay.TargetV1) {
				// --plugin names the v2 replayer; v1's is configured
				// (revisions."acp/1").
				rp, err = launchReplayerFor(ctx, env, cfg, logger, "", replay.TargetV1, "acpv1")
			} else {
				rp, err = launchReplayer(ctx, env, cfg, logger, pluginName)
			}
			if err != nil {
				return nil, err
			}
			plugins[target] = rp
		}
		return rp.replayFile(ctx, path, emit)
	}
	s := replayserve.New(replayserve.Options{Store: st, Logger: logger.Named("serve"), Version: version(),
		TargetV2: v2, Replay: replayer, Out: env.Stdout})
	logger.Info("serving recorded sessions read-only", "store", st.Root())
	if err := s.Run(env.Stdin); err != nil {
		logger.Error("serve", "error", err)
		fmt.Fprintf(env.Stderr, "acptap replay --serve: %s\n", oneLine(err))
		return ExitFailure
	}
	return ExitOK
}
