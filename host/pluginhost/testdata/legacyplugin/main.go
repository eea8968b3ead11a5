// Command legacyplugin is a plugin for host/pluginhost's tests: an echo
// mapper served as a plugin built before the packed wire feature
// (pluginwire.ServeLegacy), or, with LEGACYPLUGIN_NEW=1, as this SDK serves
// it (pluginwire.Serve), so that the two can be compared through real
// processes.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

type echo struct{}

func (echo) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "legacy", Version: "1", Inputs: []string{"acp/2@x"}, Outputs: []sdk.Format{sdk.FormatASR},
		Capabilities: []sdk.Capability{sdk.CapabilityRecord}}, nil
}

func (echo) Start(context.Context, sdk.StartRequest) (sdk.Session, error) { return &session{}, nil }

type session struct{ n int }

func (s *session) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	var outs []sdk.Output
	for _, f := range frames {
		s.n++
		if f.Kind != sdk.KindLine {
			outs = append(outs, sdk.Diag(sdk.SeverityInfo, "", fmt.Sprintf("kind %d", f.Kind), f.Gap.Reason, f.Seq))
			continue
		}
		outs = append(outs, sdk.Output{Kind: sdk.ASRRecord, Session: "s",
			JSON:      fmt.Appendf(nil, `{"n":%d,"seq":%d,"reply":%d,"method":%q,"len":%d,"data":%q}`, s.n, f.Seq, f.ReplyTo, f.ReplyToMethod, len(f.Data), f.Data),
			FrameSeqs: []uint64{f.Seq}})
	}
	return outs, nil
}

func (s *session) Finish(context.Context, string) ([]sdk.Output, error) {
	return []sdk.Output{{Kind: sdk.ASRRecord, JSON: append([]byte(`{"final":"`), append(bytes.Repeat([]byte("z"), 5<<20), `"}`...)...)}}, nil
}

func main() {
	if os.Getenv("LEGACYPLUGIN_NEW") == "1" {
		pluginwire.Serve(echo{})
		return
	}
	pluginwire.ServeLegacy(echo{})
}
