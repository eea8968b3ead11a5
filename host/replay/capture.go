package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/pluginwire"
	ireplay "github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// WireDirs lists where the wire logs a stream names may be, by the store
// layout: the wire directory of the store the stream file sits in, the
// stream's own directory (a stream kept beside its wire logs), and the wire
// directory of the configured store (storeRoot; "" for none).
func WireDirs(streamPath, storeRoot string) []string {
	var dirs []string
	if root, ok := store.RootOf(streamPath); ok {
		dirs = append(dirs, store.WireDir(root))
	}
	if abs, err := filepath.Abs(streamPath); err == nil {
		dirs = append(dirs, filepath.Dir(abs))
	}
	if storeRoot != "" {
		dirs = append(dirs, store.WireDir(storeRoot))
	}
	return dirs
}

// Capture resends, byte for byte, the agent's session/update frames
// for the stream's session from the wire logs its records point to
// (native.ref, ASR-723, ASR-733), in connection order. Updates an agent
// replayed on session/resume are skipped once an earlier wire log has
// already given the session's updates.
func Capture(path string, dirs []string, out io.Writer) (ireplay.LossReport, error) {
	sid, names, err := streamWireLogs(path)
	if err != nil {
		return ireplay.LossReport{}, err
	}
	var tally ireplay.Tally
	rep := ireplay.LossReport{}
	info := &ireplay.CaptureInfo{WireLogs: []string{}}
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
			tally.Add(asr.LossMissingWire, 1, name)
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
	bw := bufio.NewWriterSize(out, 64<<10)
	c := &capture{sid: sid, out: bw, tally: &tally, info: info}
	for _, l := range logs {
		info.WireLogs = append(info.WireLogs, filepath.Base(l.path))
		if err := c.log(l.path); err != nil {
			bw.Flush()
			return rep, err
		}
	}
	if err := bw.Flush(); err != nil {
		return rep, err
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
	tally *ireplay.Tally
	info  *ireplay.CaptureInfo
}

type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID  string          `json:"sessionId"`
		ReplayFrom json.RawMessage `json:"replayFrom"`
	} `json:"params"`
}

// log walks one wire log. Its lines are split into JSON-RPC messages, and
// responses joined to their requests, by the router's own FrameBuilder.
func (c *capture) log(path string) error {
	r, err := wire.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	fb := pluginwire.NewFrameBuilder()
	var frames []sdk.Frame
	resumes := map[uint64]bool{} // seqs of c2a session/resume requests with replayFrom, for this session
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
			c.tally.Add(asr.LossCaptureGap, int(e.Gap.Frames), e.Gap.Reason)
			continue
		case wire.TypeFrame:
		default:
			continue
		}
		frames = fb.Line(frames[:0], e.Seq, e.Dir, e.At, e.Line)
		batch := frames[0].BatchSize > 0
		var keep [][]byte
		for _, f := range frames {
			var h rpcHead
			if json.Unmarshal(f.Data, &h) != nil {
				continue
			}
			hasID := len(bytes.TrimSpace(h.ID)) > 0
			switch {
			case e.Dir == sdk.C2A && h.Method == "session/resume" && h.Params.SessionID == c.sid &&
				len(h.Params.ReplayFrom) > 0 && string(h.Params.ReplayFrom) != "null":
				resumes[e.Seq] = true
			case e.Dir == sdk.A2C && h.Method == "" && f.ReplyTo != 0 && resumes[f.ReplyTo]:
				delete(resumes, f.ReplyTo)
			case e.Dir == sdk.A2C && h.Method == "session/update" && !hasID && h.Params.SessionID == c.sid:
				if len(resumes) > 0 && hadFrames {
					c.info.Skipped++
					continue
				}
				keep = append(keep, f.Data)
			case e.Dir == sdk.A2C && h.Method != "" && hasID && h.Params.SessionID == c.sid:
				c.tally.Add(asr.LossAgentRequests, 1, h.Method)
			}
		}
		if len(keep) == 0 {
			continue
		}
		if !batch || len(keep) == len(frames) {
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
