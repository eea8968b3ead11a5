// Command faultyplugin is a misbehaving plugin for the end-to-end tests,
// installed as acptap-plugin-<name>. For the first session it sees created
// (a response to session/new) it writes a stream header and one record;
// its config (plugins.<name>.config) picks the fault:
//
//   - {"fault":"stall"}: every later Map call, and Finish, blocks until the
//     host kills the process, so the host's stall watchdog must act;
//   - {"fault":"crash-once","marker":FILE}: if FILE does not exist, the
//     process creates it and exits in the middle of its first Map call, so
//     the host must restart it and re-feed it from the wire log;
//   - {"fault":"stdin"}: no fault; its record says what the plugin's
//     standard input is ("stdin": the target of /proc/self/fd/0), so a test
//     can prove the editor's stdin never reaches a plugin;
//   - {"fault":"gate","marker":FILE}: every later Map call, and Finish,
//     first creates FILE.waiting-<pid> and then blocks until FILE exists, so
//     a test holds the mapping behind the tee for as long as it likes.
//
// FAULTY_HANG in the environment hangs the plugin before any config is
// seen: "handshake" never completes go-plugin's handshake, "info" never
// answers Info. FAULTY_INFO=unknown-capability makes Info claim a
// capability no host knows ("stream"), which the host must refuse.
//
// Besides alpha.9 it claims the ACP v2 draft 2.0.0-alpha.13, which the
// default revisions table does not name: dropped into plugin_path, it is
// attached to such a connection by its claim alone.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/plugin"
)

type config struct {
	Fault  string `json:"fault"`
	Marker string `json:"marker"`
}

type mapper struct{}

func (mapper) Info(context.Context) (sdk.Info, error) {
	if os.Getenv("FAULTY_HANG") == "info" {
		time.Sleep(24 * time.Hour)
	}
	info := sdk.Info{Name: "faulty", Version: "0.0.1", Inputs: []string{"acp/2@2.0.0-alpha.9", "acp/2@2.0.0-alpha.13"},
		Outputs: []sdk.Format{sdk.FormatASR}, Capabilities: []sdk.Capability{sdk.CapabilityRecord}}
	if os.Getenv("FAULTY_INFO") == "unknown-capability" {
		info.Capabilities = append(info.Capabilities, "stream")
	}
	return info, nil
}

func (mapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	var c config
	if len(req.Config) > 0 {
		if err := json.Unmarshal(req.Config, &c); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	return &session{cfg: c, wire: req.WireLog}, nil
}

type session struct {
	cfg     config
	wire    string
	emitted bool // the header and the record went out in an earlier call
}

func (s *session) Map(ctx context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	if s.cfg.Fault == "crash-once" && s.cfg.Marker != "" {
		if _, err := os.Stat(s.cfg.Marker); err != nil {
			_ = os.WriteFile(s.cfg.Marker, []byte("crashed\n"), 0o600)
			os.Exit(7)
		}
	}
	if s.emitted && s.cfg.Fault == "stall" {
		<-ctx.Done() // only the host killing us ends this call
		return nil, ctx.Err()
	}
	if err := s.gate(ctx); err != nil {
		return nil, err
	}
	var outs []sdk.Output
	for _, f := range frames {
		if s.emitted || f.ReplyToMethod != "session/new" {
			continue
		}
		var r struct {
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		if json.Unmarshal(f.Data, &r) != nil || r.Result.SessionID == "" {
			continue
		}
		id := r.Result.SessionID
		hdr := fmt.Sprintf(`{"type":"header","asr":"0.1","sessionId":%q,"producer":{"method":"recorder","name":"faulty","version":"0.0.1","lossy":[]}}`, id)
		extra := ""
		if s.cfg.Fault == "stdin" {
			target, _ := os.Readlink("/proc/self/fd/0")
			extra = fmt.Sprintf(`,"stdin":%q`, target)
		}
		rec := fmt.Sprintf(`{"type":"_e2e/seen","seq":1,"id":"r1"%s,"native":{"ref":{"wire":%q,"frames":[%d]}}}`, extra, s.wire, f.Seq)
		outs = append(outs,
			sdk.Output{Kind: sdk.ASRHeader, Session: id, JSON: []byte(hdr), FrameSeqs: []uint64{f.Seq}},
			sdk.Output{Kind: sdk.ASRRecord, Session: id, JSON: []byte(rec), FrameSeqs: []uint64{f.Seq}})
		s.emitted = true
	}
	return outs, nil
}

// gate blocks, after the first outputs, until the gate file exists.
func (s *session) gate(ctx context.Context) error {
	if !s.emitted || s.cfg.Fault != "gate" {
		return nil
	}
	_ = os.WriteFile(fmt.Sprintf("%s.waiting-%d", s.cfg.Marker, os.Getpid()), nil, 0o600)
	for {
		if _, err := os.Stat(s.cfg.Marker); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (s *session) Finish(ctx context.Context, _ string) ([]sdk.Output, error) {
	if err := s.gate(ctx); err != nil {
		return nil, err
	}
	if s.emitted && s.cfg.Fault == "stall" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, nil
}

func main() {
	if os.Getenv("FAULTY_HANG") == "handshake" {
		time.Sleep(24 * time.Hour) // go-plugin waits for a handshake line that never comes
	}
	plugin.Serve(mapper{})
}
