package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/acptap/acptap/host/store"

	"github.com/acptap/acptap/host/sessions"
	"github.com/acptap/acptap/host/transcript"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// DefaultWindow is how many records a page of a session holds.
const DefaultWindow = 500

// SessionPage is what /api/session answers.
type SessionPage struct {
	// Summary is null until the stream has been read whole once (it is
	// then cached); /api/summary answers it when it is.
	Summary *Summary         `json:"summary"`
	View    *transcript.View `json:"view"`
	Prev    []string         `json:"prev"` // .prev- copies (earlier rebuilds) to compare with
}

func (s *Server) apiSession(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := q.Get("id")
	path, err := s.streamPath(id, q.Get("alt"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	// The first screen does not wait for a long stream's summary: the
	// window is read now, the summary in the background.
	sum, ok, err := s.summaryOf(id, false)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	page := SessionPage{Prev: s.prevCopies(id)}
	if ok {
		page.Summary = &sum
	}
	v, err := buildFile(path, transcript.Options{From: uint64(atoiDefault(q.Get("from"), 0)),
		Limit: max(1, atoiDefault(q.Get("limit"), DefaultWindow)), WithJSON: true})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	page.View = v
	writeJSON(w, page)
}

// apiSummary answers a session's summary, reading its stream if need be.
func (s *Server) apiSummary(w http.ResponseWriter, r *http.Request) {
	sum, err := s.summary(r.URL.Query().Get("id"))
	if errors.Is(err, fs.ErrNotExist) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, sum)
}

func buildFile(path string, o transcript.Options) (*transcript.View, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return transcript.Build(f, o)
}

// WireFrame is one wire-log entry as the wire view shows it.
type WireFrame struct {
	Seq      uint64   `json:"seq"`
	At       string   `json:"at"`
	Dir      string   `json:"dir"`
	Type     string   `json:"type"` // frame, gap, session
	Kind     string   `json:"kind,omitempty"`
	Method   string   `json:"method,omitempty"`
	ID       string   `json:"id,omitempty"`
	Update   string   `json:"update,omitempty"`
	Latency  float64  `json:"latencyMs,omitempty"` // a response: since its request
	Line     string   `json:"line,omitempty"`
	Cut      int      `json:"cut,omitempty"` // bytes of the line not sent
	Problems []string `json:"problems,omitempty"`
	Gap      string   `json:"gap,omitempty"`
	Records  []string `json:"records,omitempty"` // records citing the frame
	Session  string   `json:"session,omitempty"`
}

// WirePage is what /api/wire answers.
type WirePage struct {
	Wire    string      `json:"wire"`
	Header  wire.Header `json:"header"`
	Frames  []WireFrame `json:"frames"`
	Next    uint64      `json:"next"`
	Flagged int         `json:"flagged"` // frames in the page the schema check flagged
}

var wireName = regexp.MustCompile(`^[A-Za-z0-9_~%-][A-Za-z0-9._~%-]*\.jsonl$`)

// maxFrameText is the most of a frame's line the wire view sends.
const maxFrameText = 64 << 10

func (s *Server) apiWire(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, name := q.Get("id"), q.Get("wire")
	sum, err := s.summary(id)
	if err != nil || !wireName.MatchString(name) || !slices.Contains(sum.Wires, name) {
		http.NotFound(w, r)
		return
	}
	page, err := s.wirePage(id, name, uint64(atoiDefault(q.Get("from"), 0)), max(1, atoiDefault(q.Get("limit"), 1000)))
	if errors.Is(err, fs.ErrNotExist) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, page)
}

func (s *Server) wirePage(id, name string, from uint64, limit int) (*WirePage, error) {
	st, sid, _, ok := s.resolve(id)
	if !ok {
		return nil, fs.ErrNotExist
	}
	path := filepath.Join(store.WireDir(st.Root()), name)
	cites, err := citations(st.StreamPath(sid), name)
	if err != nil {
		return nil, err
	}
	page := &WirePage{Wire: name, Frames: []WireFrame{}}
	var checker *acpschema.Checker
	var x sessions.Exchanges
	errStop := errors.New("page full")
	hdr, err := sessions.Frames(path, func(_ wire.Header, f sessions.Frame) error {
		if f.Type == wire.TypeFrame && f.Method == "initialize" && checker == nil {
			checker = newChecker(f.Line)
		}
		wf := WireFrame{Seq: f.Seq, At: f.At.Format(time.RFC3339Nano), Dir: f.Dir.String(), Type: f.Type,
			Method: f.Method, ID: f.ID, Update: f.Update, Session: f.Session}
		if f.Type == wire.TypeFrame {
			e := x.Next(f)
			wf.Kind = e.Kind
			if e.Answered {
				wf.Latency = float64(e.Latency.Microseconds()) / 1000
			}
			if checker != nil {
				if err := checker.Check(sender(f.Dir), f.Line); err != nil {
					wf.Problems = problems(err)
				}
			}
		}
		if f.Type == wire.TypeGap {
			wf.Gap = fmt.Sprintf("%d frames not captured (%s)", f.Gap.Frames, f.Gap.Reason)
		}
		if f.Seq < from {
			return nil
		}
		if len(page.Frames) >= limit {
			page.Next = f.Seq
			return errStop
		}
		text := f.Line
		if len(text) > maxFrameText {
			wf.Cut = len(text) - maxFrameText
			text = text[:maxFrameText]
		}
		wf.Line = string(text)
		wf.Records = cites[f.Seq]
		if len(wf.Problems) > 0 {
			page.Flagged++
		}
		page.Frames = append(page.Frames, wf)
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	page.Header = hdr
	return page, nil
}

func sender(d sdk.Direction) acpschema.Sender {
	if d == sdk.C2A {
		return acpschema.Client
	}
	return acpschema.Agent
}

// newChecker picks the schema from the initialize request's
// protocolVersion (1: v1 with its unstable methods; otherwise v2).
func newChecker(line []byte) *acpschema.Checker {
	var m struct {
		Params struct {
			ProtocolVersion json.RawMessage `json:"protocolVersion"`
		} `json:"params"`
	}
	_ = json.Unmarshal(line, &m)
	v := acpschema.V2
	if n, _ := strconv.Atoi(string(m.Params.ProtocolVersion)); n == 1 {
		v = acpschema.V1Unstable
	}
	c, err := acpschema.NewChecker(v)
	if err != nil {
		return nil
	}
	c.SetTolerant(true)
	return c
}

func problems(err error) []string {
	var out []string
	for _, e := range unwrapAll(err) {
		out = append(out, e.Error())
	}
	return out
}

func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// citations maps each frame of wire log name to the records that cite it.
func citations(stream, name string) (map[uint64][]string, error) {
	f, err := os.Open(stream)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[uint64][]string{}
	rd := asr.NewReader(f)
	for {
		line, err := rd.Next()
		if err != nil {
			return out, nil
		}
		var g struct {
			ID     string `json:"id"`
			Native *struct {
				Ref *asr.NativeRef `json:"ref"`
			} `json:"native"`
		}
		if json.Unmarshal(line, &g) != nil || g.Native == nil || g.Native.Ref == nil || g.Native.Ref.Wire != name {
			continue
		}
		for _, fr := range g.Native.Ref.Frames {
			out[fr] = append(out[fr], g.ID)
		}
	}
}
