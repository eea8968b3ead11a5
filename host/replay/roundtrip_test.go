package replay

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/pluginhost"
	ireplay "github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/plugins/acpv1"
	"github.com/acptap/acptap/plugins/acpv2"
	"github.com/acptap/acptap/sdk"
)

// inProcess is a replay plugin running in this process (the round trip's
// own code is what is tested; internal/replaytest runs the plugins out of
// process through acptap).
func inProcess(t *testing.T, m sdk.Mapper, target string) *Plugin {
	t.Helper()
	info, err := m.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &Plugin{inst: &pluginhost.Instance{Spec: pluginhost.Spec{Name: info.Name}, Info: info, Mapper: m},
		rep: m.(sdk.Replayer), target: target}
}

var everyType = filepath.Join("..", "..", "plugins", "acpv2", "testdata", "replay_every_type.asr.jsonl")

// TestASR732_RoundTripOverPipeline: the stream with every record type,
// replayed and recorded again through the pipeline (ACP v2 and ACP v1),
// holds; S′ is the session's stream, header first.
func TestASR732_RoundTripOverPipeline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		m      sdk.Mapper
		target string
	}{{"v2", acpv2.New(), acpv2.Input}, {"v1", acpv1.New(), ireplay.TargetV1}} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := RunRoundTrip(context.Background(), inProcess(t, tc.m, tc.target), everyType, nil)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			rt.Print(&out, true)
			if !rt.Holds() || rt.Result.Entities == 0 || rt.Report.Updates == 0 {
				t.Errorf("the round trip does not hold:\n%s", out.String())
			}
			first, _, _ := bytes.Cut(rt.Recorded, []byte("\n"))
			if !bytes.Contains(first, []byte(`"type":"header"`)) || !bytes.Contains(first, []byte(rt.Report.SessionID)) {
				t.Errorf("S′ starts %s", first)
			}
			if !strings.Contains(out.String(), "the round trip holds (ASR-732)") {
				t.Errorf("summary:\n%s", out.String())
			}
		})
	}
}

// failingMapper records nothing: its sessions fail on the first batch.
type failingMapper struct{ sdk.Mapper }

func (f failingMapper) Start(ctx context.Context, req sdk.StartRequest) (sdk.Session, error) {
	s, err := f.Mapper.Start(ctx, req)
	return failingSession{s}, err
}

type failingSession struct{ sdk.Session }

func (failingSession) Map(context.Context, []sdk.Frame) ([]sdk.Output, error) {
	return nil, errors.New("mapper broke")
}

// TestRoundTripRecorderFails: when the recorder gives up, the round trip
// fails saying so, instead of comparing a partial recording.
func TestRoundTripRecorderFails(t *testing.T) {
	m := acpv2.New()
	p := inProcess(t, m, acpv2.Input)
	p.inst.Mapper = failingMapper{m}
	_, err := RunRoundTrip(context.Background(), p, everyType, nil)
	if err == nil || !strings.Contains(err.Error(), "mapper broke") {
		t.Errorf("err = %v, want the recorder's failure", err)
	}
}
