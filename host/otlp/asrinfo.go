package otlp

import (
	"encoding/json"
	"io"
	"os"
	"sync"

	"github.com/acptap/acptap/internal/jsonl"
)

// ASRInfo reads what a session's ASR stream says about its agent: the
// header's agent name and version, and the model of the latest
// config_change. It reads each stream incrementally (complete lines only),
// so the live exporter can ask again as the recording grows.
type ASRInfo struct {
	// Path is the session's ASR stream file.
	Path func(session string) string

	mu    sync.Mutex
	state map[string]*asrState
}

type asrState struct {
	off   int64
	agent Agent
}

// Agent implements Tracer.Info.
func (a *ASRInfo) Agent(session string) Agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state == nil {
		a.state = map[string]*asrState{}
	}
	st := a.state[session]
	if st == nil {
		st = &asrState{}
		a.state[session] = st
	}
	f, err := os.Open(a.Path(session))
	if err != nil {
		return st.agent
	}
	defer f.Close()
	if _, err := f.Seek(st.off, io.SeekStart); err != nil {
		return st.agent
	}
	r := jsonl.NewReader(f, jsonl.DefaultMaxLine)
	for {
		line, err := r.Next()
		if err != nil {
			// An incomplete last line is read again next time; past a
			// line over the bound nothing more is learnt.
			break
		}
		st.off += int64(len(line)) + 1
		var rec struct {
			Type  string `json:"type"`
			Agent *struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"agent"`
			Model *struct {
				ID string `json:"id"`
			} `json:"model"`
		}
		if json.Unmarshal(line, &rec) != nil {
			continue
		}
		switch {
		case rec.Type == "header" && rec.Agent != nil:
			st.agent.Name, st.agent.Version = rec.Agent.Name, rec.Agent.Version
		case rec.Type == "config_change" && rec.Model != nil && rec.Model.ID != "":
			st.agent.Model = rec.Model.ID
		}
	}
	return st.agent
}
