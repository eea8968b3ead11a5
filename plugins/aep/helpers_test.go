package aep

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
	"github.com/acptap/acptap/sdk/aep/aepcheck"
	"github.com/acptap/acptap/sdk/mappertest"
)

var base = time.Date(2026, 10, 26, 14, 30, 41, 207_000_000, time.UTC)

// wire builds frames from lines the way the host does, inserting a session
// frame (with conns earlier connections) before the first line naming each
// session, as the host's session tracker does.
func wire(conns map[string]int, lines ...mappertest.Line) []sdk.Frame {
	b := pluginwire.NewFrameBuilder()
	known := map[string]bool{}
	var out []sdk.Frame
	seq := uint64(0)
	for i, l := range lines {
		at := base.Add(time.Duration(i) * 10 * time.Millisecond)
		for _, id := range namedSessions(l.Data) {
			if !known[id] {
				known[id] = true
				seq++
				out = b.Session(out, seq, l.Dir, at, sdk.SessionInfo{ID: id, Connections: conns[id]})
			}
		}
		seq++
		out = b.Line(out, seq, l.Dir, at, []byte(l.Data))
	}
	return out
}

// namedSessions is the host tracker's rule: params.sessionId and
// result.sessionId.
func namedSessions(line string) []string {
	var m struct {
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(line), &m) != nil {
		return nil
	}
	var out []string
	for _, s := range []string{m.Params.SessionID, m.Result.SessionID} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// traceLines reads a node SDK client trace (testdata/*.trace.jsonl).
func traceLines(t *testing.T, path string) []mappertest.Line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mappertest.Line
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l struct{ Dir, Line string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Dir == "send" {
			out = append(out, mappertest.C2A(l.Line))
		} else {
			out = append(out, mappertest.A2C(l.Line))
		}
	}
	return out
}

// ev is a decoded output event.
type ev struct {
	raw  []byte
	Type string         `json:"type"`
	ID   string         `json:"id"`
	Subj string         `json:"subject"`
	Sess string         `json:"session"`
	Run  string         `json:"run"`
	Seq  int64          `json:"seq"`
	Ep   int64          `json:"epoch"`
	Caus string         `json:"cause"`
	Sev  string         `json:"severity"`
	Cap  string         `json:"capture"`
	TP   string         `json:"traceparent"`
	Src  string         `json:"source"`
	Time string         `json:"time"`
	Data map[string]any `json:"data"`
}

// mapAll runs a mapper over frames (in process) and returns its events,
// failing on errors.
func mapAll(t *testing.T, cfg Config, input string, frames []sdk.Frame) []ev {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outs := mappertest.Run(t, New(), sdk.StartRequest{Config: raw, Connection: "c-test", Input: input, Mode: sdk.ModeRecord}, frames, 0)
	return events(t, outs)
}

func events(t *testing.T, outs []sdk.Output) []ev {
	t.Helper()
	var evs []ev
	for _, o := range outs {
		if o.Kind != sdk.AEPEvent {
			continue
		}
		var e ev
		if err := json.Unmarshal(o.JSON, &e); err != nil {
			t.Fatal(err)
		}
		if o.Session != e.Sess {
			t.Fatalf("output session %q, event session %q", o.Session, e.Sess)
		}
		e.raw = o.JSON
		evs = append(evs, e)
	}
	return evs
}

// checkValid validates every event against the AEP schemas and the
// stream rules, in order.
func checkValid(t *testing.T, evs []ev) {
	t.Helper()
	v, err := aepcheck.DefaultValidator()
	if err != nil {
		t.Fatal(err)
	}
	var s aep.Stream
	for i, e := range evs {
		h, err := v.Validate(e.raw)
		if err != nil {
			t.Errorf("event %d invalid: %v\n%s", i, err, e.raw)
			continue
		}
		canon, _ := aep.CanonicalRaw(e.raw)
		if err := s.Admit(h, canon); err != nil && !errors.Is(err, aep.Duplicate) {
			t.Errorf("event %d breaks a stream rule: %v\n%s", i, err, e.raw)
		}
	}
}

// ofType filters events by type.
func ofType(evs []ev, typ string) []ev {
	var out []ev
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func types(evs []ev) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Type)
	}
	return strings.Join(s, " ")
}

// defaultCfg pins what Start would otherwise read from the environment.
func defaultCfg() Config {
	return Config{Host: "host", Redact: RedactConfig{Home: "/home/tester"}, Deltas: ptr(false)}
}

var _ = context.Background

func canonJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := aep.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
