package acpv2

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/acptap/acptap/plugins/internal/acpreplay"
	"github.com/acptap/acptap/sdk"
)

var _ sdk.Replayer = mapper{}

// ReplayAlpha13 is the newer ACP v2 draft the plugin also replays to (a
// stream recorded by acpv2a13 names it): the same session/update
// notifications, and a terminal's size (_org.acptap/size) as the draft's
// terminal_update.size.
const ReplayAlpha13 = acpreplay.TargetAlpha13

// Replay turns an ASR stream into ACP v2 session/update notifications, as
// an agent replays history on session/resume with replayFrom {type:
// "start"} (ASR-724…731), and returns the loss report: the replay engine
// of plugins/internal/acpreplay, for this plugin's revision.
func (mapper) Replay(ctx context.Context, config []byte, target string, stream io.Reader, emit func(sdk.Output) error) ([]byte, error) {
	if _, err := parseConfig(config); err != nil {
		return nil, err
	}
	if target != "" && target != Input && target != "acp/2" && !strings.HasPrefix(target, "acp/2@") {
		return nil, fmt.Errorf("acpv2: replay target %q: this plugin replays to %s", target, Input)
	}
	if target == "" {
		target = Input
	}
	report, err := acpreplay.Replay(ctx, target, stream, emit)
	if err != nil {
		return nil, fmt.Errorf("acpv2: %w", err)
	}
	return report, nil
}
