package mappertest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/acptap/acptap/sdk"
)

// continuation checks that a mapper continues the ASR streams an earlier
// connection wrote, as the host asks it to with session frames (a session
// resumed on a second connection, or a rebuild of the second of two wire
// logs). It maps frames, followed by a gap, on a first connection; then the
// same frames and gap on a second one, each session's stream so far given
// in a session frame before the first frame. On the second connection a
// continued stream has no header, its records go on with the seq after its
// last one (dense, id r<seq>), and no declaration names a loss category its
// header or declarations already declare. Streams of the first connection
// must be dense from seq 1 too. A mapper that writes no ASR passes.
func continuation(ctx context.Context, newMapper func() sdk.Mapper, req sdk.StartRequest, frames []sdk.Frame) error {
	if len(frames) == 0 {
		return nil
	}
	last := frames[len(frames)-1]
	gap := sdk.Frame{Kind: sdk.KindGap, Seq: last.Seq + 1, Dir: sdk.A2C, At: last.At.Add(time.Second),
		Gap: sdk.Gap{Frames: 1, Bytes: 10, Reason: "conformance: continuation"}}
	first := append(slices.Clone(frames), gap)
	outs, err := RunErr(ctx, newMapper(), req, first, 0)
	if err != nil {
		return fmt.Errorf("first connection: %w", err)
	}
	prior, order, err := streamsOf(outs, nil)
	if err != nil {
		return fmt.Errorf("first connection: %w", err)
	}
	if len(order) == 0 {
		return nil
	}
	var second []sdk.Frame
	for _, id := range order {
		info := sdk.SessionInfo{ID: id, Connections: 1, Prior: prior[id].lines}
		second = append(second, sdk.Frame{Kind: sdk.KindSession, Seq: frames[0].Seq, Dir: frames[0].Dir, At: frames[0].At, Session: &info})
	}
	second = append(second, first...)
	outs, err = RunErr(ctx, newMapper(), req, second, 0)
	if err != nil {
		return fmt.Errorf("second connection: %w", err)
	}
	if _, _, err := streamsOf(outs, prior); err != nil {
		return fmt.Errorf("second connection, continuing the first's streams: %w", err)
	}
	return nil
}

// stream is what the check knows of one session's ASR stream.
type stream struct {
	lines [][]byte
	next  uint64
	lossy map[string]bool
}

// streamsOf follows the ASR outputs of one connection per session, checking
// them against the prior streams (nil: none), and returns the streams as
// written so far (prior lines included) and the sessions in order.
func streamsOf(outs []sdk.Output, prior map[string]*stream) (map[string]*stream, []string, error) {
	streams := map[string]*stream{}
	var order []string
	for id, p := range prior {
		streams[id] = &stream{lines: slices.Clone(p.lines), next: p.next, lossy: maps.Clone(p.lossy)}
	}
	for i, o := range outs {
		if o.Kind != sdk.ASRHeader && o.Kind != sdk.ASRRecord {
			continue
		}
		var r struct {
			Type     string   `json:"type"`
			Seq      uint64   `json:"seq"`
			ID       string   `json:"id"`
			Lossy    []string `json:"lossy"`
			Producer struct {
				Lossy []string `json:"lossy"`
			} `json:"producer"`
		}
		if err := json.Unmarshal(o.JSON, &r); err != nil {
			return nil, nil, fmt.Errorf("output %d (%s) is not JSON: %w", i, o.Kind, err)
		}
		st := streams[o.Session]
		if o.Kind == sdk.ASRHeader {
			if st != nil {
				if prior[o.Session] != nil {
					return nil, nil, fmt.Errorf("session %q: a second header for a stream the session frame gave: %s", o.Session, o.JSON)
				}
				return nil, nil, fmt.Errorf("session %q: a second header: %s", o.Session, o.JSON)
			}
			st = &stream{next: 1, lossy: map[string]bool{}}
			for _, l := range r.Producer.Lossy {
				st.lossy[l] = true
			}
			streams[o.Session] = st
			order = append(order, o.Session)
			st.lines = append(st.lines, o.JSON)
			continue
		}
		if st == nil {
			return nil, nil, fmt.Errorf("session %q: a record before its header: %s", o.Session, o.JSON)
		}
		if r.Seq != st.next || r.ID != fmt.Sprintf("r%d", st.next) {
			return nil, nil, fmt.Errorf("session %q: record seq %d id %q, want seq %d id r%d (seqs are dense and continue the prior stream): %s",
				o.Session, r.Seq, r.ID, st.next, st.next, o.JSON)
		}
		st.next++
		if r.Type == "declaration" {
			for _, l := range r.Lossy {
				if st.lossy[l] {
					return nil, nil, fmt.Errorf("session %q: loss %q declared again: %s", o.Session, l, o.JSON)
				}
				st.lossy[l] = true
			}
		}
		st.lines = append(st.lines, o.JSON)
	}
	return streams, order, nil
}
