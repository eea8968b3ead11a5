package acpv1

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/plugins/internal/acpreplay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

var _ sdk.Replayer = mapper{}

// Replay turns an ASR stream into ACP v1 session/update notifications
// (target acp/1), as a v1 agent replays history on session/load. It is
// the ACP v2 replay (plugins/internal/acpreplay, acpv2's, ASR-724…731: the active path, each entity
// once at its first record as its latest revision, IDs kept, nothing
// re-executed) translated update by update into v1 (downlevel.go), then
// the session's current mode and available commands, which v1 clients
// keep apart from the history. What v1 cannot carry is counted in the
// loss report under the v1 categories of internal/replay (LossV1…), beside the
// v2 replay's own; an update that does not validate against the ACP v1
// schema is never sent.
func (mapper) Replay(ctx context.Context, config []byte, target string, stream io.Reader, emit func(sdk.Output) error) ([]byte, error) {
	if _, err := acpasr.ParseConfig(config); err != nil {
		return nil, fmt.Errorf("acpv1: %w", err)
	}
	if target != "" && target != replay.TargetV1 && !strings.HasPrefix(target, replay.TargetV1+"@") {
		return nil, fmt.Errorf("acpv1: replay target %q: this plugin replays to %s", target, replay.TargetV1)
	}
	if target == "" {
		target = replay.TargetV1
	}
	chk, err := acpschema.NewChecker(acpschema.V1)
	if err != nil {
		return nil, fmt.Errorf("acpv1: replay: %w", err)
	}
	d := &downlevel{emit: emit, check: chk}
	x := &extras{}
	// The replay engine reads the whole stream before it sends anything (it
	// indexes first, and spools a stream that is not seekable, as this tee
	// is), so by the end x has seen every line.
	raw, err := acpreplay.Replay(ctx, "", io.TeeReader(stream, x), d.frame)
	if err != nil {
		return nil, fmt.Errorf("acpv1: replay: %w", err)
	}
	if d.err != nil {
		return nil, d.err
	}
	if err := d.current(x); err != nil {
		return nil, err
	}
	rep, err := replay.ParseLossReport(raw)
	if err != nil {
		return nil, fmt.Errorf("acpv1: replay: %w", err)
	}
	return d.report(rep, target).Marshal(), nil
}

// extras watches the stream's lines as the v2 replayer reads them, for
// what a v1 replay sends beside the history: the latest mode
// (config_change with mode) and the latest available commands (the
// audit-only record of available_commands_update, the update verbatim).
type extras struct {
	buf      []byte
	lines    int
	session  string // the header's
	mode     string
	modeSeq  uint64
	commands json.RawMessage
	cmdSeq   uint64
}

var (
	markConfig   = []byte(`"` + asr.TypeConfigChange + `"`)
	markCommands = []byte(`"` + asr.AuditPrefix + "available_commands_update" + `"`)
)

func (x *extras) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			x.buf = append(x.buf, p...)
			break
		}
		line := p[:i]
		if len(x.buf) > 0 {
			x.buf = append(x.buf, line...)
			line = x.buf
		}
		x.line(line)
		x.buf = x.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}

// line looks at one committed line; only records of the two types are
// decoded.
func (x *extras) line(line []byte) {
	x.lines++
	if x.lines == 1 {
		if h, err := asr.ReadHeader(line); err == nil {
			x.session = h.SessionID
		}
		return
	}
	if !bytes.Contains(line, markConfig) && !bytes.Contains(line, markCommands) {
		return
	}
	var r struct {
		Type   string      `json:"type"`
		Seq    uint64      `json:"seq"`
		Mode   string      `json:"mode"`
		Native *asr.Native `json:"native"`
	}
	if json.Unmarshal(line, &r) != nil {
		return
	}
	switch {
	case r.Type == asr.TypeConfigChange && r.Mode != "":
		x.mode, x.modeSeq = r.Mode, r.Seq
	case r.Type == asr.AuditPrefix+"available_commands_update" && r.Native != nil && len(r.Native.Record) > 0:
		x.commands, x.cmdSeq = slices.Clone(r.Native.Record), r.Seq
	}
}

// current sends the latest mode and available commands, after the history.
func (d *downlevel) current(x *extras) error {
	if d.session == "" {
		d.session = x.session
	}
	if x.mode != "" {
		d.send(map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": x.mode}, []uint64{x.modeSeq})
	}
	if x.commands != nil {
		var u map[string]json.RawMessage
		if json.Unmarshal(x.commands, &u) == nil && u != nil {
			u["sessionUpdate"] = json.RawMessage(`"available_commands_update"`)
			d.send(u, []uint64{x.cmdSeq})
		}
	}
	return d.err
}
