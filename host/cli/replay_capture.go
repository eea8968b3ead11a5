package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// Loss categories of a byte-level replay, beyond the seed's.
const (
	lossCaptureGap    = "_org.acptap/capture_gap"    // frames the recorder did not observe
	lossAgentRequests = "_org.acptap/agent_requests" // permission and elicitation requests are not sent again
	lossMissingWire   = "_org.acptap/missing_wire_log"
)

// wireDirs lists where the wire logs a stream names may be: the store's
// wire directory, and the one of the store the stream file sits in
// (<store>/sessions/<id>/stream.asr.jsonl).
func wireDirs(cfg *config.Config, streamPath string) []string {
	var dirs []string
	if abs, err := filepath.Abs(streamPath); err == nil {
		root := filepath.Dir(filepath.Dir(filepath.Dir(abs)))
		dirs = append(dirs, filepath.Join(root, "wire"), root, filepath.Dir(abs))
	}
	if cfg != nil && cfg.Store != "" {
		dirs = append(dirs, filepath.Join(cfg.Store, "wire"), cfg.Store)
	}
	return dirs
}

// captureReplay resends, byte for byte, the agent's session/update frames
// for the stream's session from the wire logs its records point to
// (native.ref, ASR-723, ASR-733), in connection order. Updates an agent
// replayed on session/resume are skipped once an earlier wire log has
// already given the session's updates.
func captureReplay(path string, dirs []string, out io.Writer) (replay.LossReport, error) {
	sid, names, err := streamWireLogs(path)
	if err != nil {
		return replay.LossReport{}, err
	}
	var tally replay.Tally
	rep := replay.LossReport{}
	info := &replay.CaptureInfo{WireLogs: []string{}}
	type found struct {
		path    string
		started int64
		order   int
	}
	var logs []found
	for i, name := range names {
		p, ok := findWire(dirs, name)
		if !ok {
			info.Missing = append(info.Missing, name)
			tally.Add(lossMissingWire, 1, name)
			continue
		}
		r, err := wire.Open(p)
		if err != nil {
			return rep, err
		}
		logs = append(logs, found{p, r.Header().StartedAt.UnixNano(), i})
		r.Close()
	}
	if len(logs) == 0 {
		if len(names) == 0 {
			return rep, fmt.Errorf("%s: no record points to a wire log: the recorder did not keep the wire messages, so a byte-level replay is not possible (ASR-733)", path)
		}
		return rep, fmt.Errorf("%s: none of its wire logs was found (%v, looked in %v): a byte-level replay is not possible (ASR-733)", path, names, dirs)
	}
	sort.SliceStable(logs, func(a, b int) bool {
		if logs[a].started != logs[b].started {
			return logs[a].started < logs[b].started
		}
		return logs[a].order < logs[b].order
	})
	c := &capture{sid: sid, out: out, tally: &tally, info: info}
	for _, l := range logs {
		info.WireLogs = append(info.WireLogs, filepath.Base(l.path))
		if err := c.log(l.path); err != nil {
			return rep, err
		}
	}
	rep = tally.Report()
	rep.Mode = "capture"
	rep.SessionID = sid
	rep.Target = "acp/2"
	rep.Updates = info.Frames
	rep.Capture = info
	return rep, nil
}

// streamWireLogs reads the stream's session ID and the wire logs its
// records name, in order of first mention.
func streamWireLogs(path string) (string, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	rd := asr.NewReader(f)
	first, err := rd.Next()
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, asr.ErrNotHeader)
	}
	h, err := asr.ReadHeader(first)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	var names []string
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, err
		}
		g, err := asr.ReadRecord(line)
		if err != nil || g.Native == nil || g.Native.Ref == nil || g.Native.Ref.Wire == "" {
			continue
		}
		if w := g.Native.Ref.Wire; !seen[w] {
			seen[w] = true
			names = append(names, w)
		}
	}
	return h.SessionID, names, nil
}

func findWire(dirs []string, name string) (string, bool) {
	if filepath.IsAbs(name) {
		_, err := os.Stat(name)
		return name, err == nil
	}
	for _, d := range dirs {
		for _, p := range []string{filepath.Join(d, name), filepath.Join(d, filepath.Base(name))} {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, true
			}
		}
	}
	return "", false
}

// capture walks wire logs for one session.
type capture struct {
	sid   string
	out   io.Writer
	tally *replay.Tally
	info  *replay.CaptureInfo
}

type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID  string          `json:"sessionId"`
		ReplayFrom json.RawMessage `json:"replayFrom"`
	} `json:"params"`
}

func (c *capture) log(path string) error {
	r, err := wire.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	resumes := map[string]bool{} // c2a session/resume ids with replayFrom, for this session
	replaying := 0
	hadFrames := c.info.Frames > 0
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, wire.ErrTornTail) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		switch e.Type {
		case wire.TypeGap:
			c.info.Gaps++
			c.tally.Add(lossCaptureGap, int(e.Gap.Frames), e.Gap.Reason)
			continue
		case wire.TypeFrame:
		default:
			continue
		}
		elems, batch := splitBatch(e.Line)
		var keep [][]byte
		for _, el := range elems {
			var h rpcHead
			if json.Unmarshal(el, &h) != nil {
				continue
			}
			id := string(bytes.TrimSpace(h.ID))
			switch {
			case e.Dir == sdk.C2A && h.Method == "session/resume" && h.Params.SessionID == c.sid &&
				len(h.Params.ReplayFrom) > 0 && string(h.Params.ReplayFrom) != "null":
				resumes[id] = true
				replaying++
			case e.Dir == sdk.A2C && h.Method == "" && id != "" && resumes[id]:
				delete(resumes, id)
				replaying--
			case e.Dir == sdk.A2C && h.Method == "session/update" && id == "" && h.Params.SessionID == c.sid:
				if replaying > 0 && hadFrames {
					c.info.Skipped++
					continue
				}
				keep = append(keep, el)
			case e.Dir == sdk.A2C && h.Method != "" && id != "" && h.Params.SessionID == c.sid:
				c.tally.Add(lossAgentRequests, 1, h.Method)
			}
		}
		if len(keep) == 0 {
			continue
		}
		if batch && len(keep) == len(elems) || !batch {
			// The whole line, byte for byte.
			if err := c.write(e.Line); err != nil {
				return err
			}
			c.info.Frames += len(keep)
			continue
		}
		for _, el := range keep {
			if err := c.write(el); err != nil {
				return err
			}
			c.info.Frames++
		}
	}
}

func (c *capture) write(b []byte) error {
	if _, err := c.out.Write(b); err != nil {
		return err
	}
	_, err := c.out.Write([]byte{'\n'})
	return err
}

// splitBatch returns a line's JSON-RPC messages: the elements of a batch
// (exactly as they are written in the line), or the line itself.
func splitBatch(line []byte) ([][]byte, bool) {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && t[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(t, &arr) == nil && len(arr) > 0 {
			out := make([][]byte, len(arr))
			for i, a := range arr {
				out[i] = a
			}
			return out, true
		}
	}
	return [][]byte{line}, false
}
