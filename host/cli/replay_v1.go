package cli

import (
	"context"
	"fmt"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/internal/replay"
)

// The ACP versions `replay --to` and `roundtrip --via` take.
const (
	protoV2 = "acp-v2"
	protoV1 = "acp-v1"
)

func validProto(p string) bool { return p == protoV2 || p == protoV1 }

// launchReplayerTo starts the replay plugin for an ACP version: v2's
// (launchReplayer), or the first plugin configured for "acp/1" that can
// replay (acpv1 by default).
func launchReplayerTo(ctx context.Context, env *Env, cfg *config.Config, logger hclog.Logger, name, proto string) (*replayPlugin, error) {
	switch proto {
	case protoV2:
		return launchReplayer(ctx, env, cfg, logger, name)
	case protoV1:
		return launchReplayerFor(ctx, env, cfg, logger, name, replay.TargetV1, "acpv1")
	}
	return nil, fmt.Errorf("unknown ACP version %q", proto)
}
