package ui

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/acptap/acptap/host/eventstream"
	"github.com/acptap/acptap/internal/jsonl"
	"github.com/acptap/acptap/sdk/asr"
)

// apiLive streams server-sent events while a session's stream grows: an
// "append" event with the last record's seq each time records were added,
// and a comment every 15 s so proxies keep the connection.
func (s *Server) apiLive(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	path, err := s.streamPath(id, "")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	sse, err := eventstream.NewSSE(w, 0)
	if err != nil {
		return
	}
	t := &tail{path: path}
	t.read() // where the stream stands now
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			if sse.Comment("ping") != nil || sse.Flush() != nil {
				return
			}
		case <-tick.C:
			seq, grew := t.read()
			if !grew {
				continue
			}
			b, _ := json.Marshal(map[string]uint64{"last": seq})
			if sse.Send(eventstream.Message{Event: "append", Data: b}) != nil || sse.Flush() != nil {
				return
			}
		}
	}
}

// tail follows a stream file's complete lines from where it last read.
type tail struct {
	path string
	off  int64
	seq  uint64
}

// read consumes the complete lines added since the last read and returns
// the last record's seq and whether any was added.
func (t *tail) read() (uint64, bool) {
	f, err := os.Open(t.path)
	if err != nil {
		return t.seq, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() <= t.off {
		if err == nil && fi.Size() < t.off {
			t.off = 0 // replaced (a rebuild): read it again
		} else {
			return t.seq, false
		}
	}
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return t.seq, false
	}
	r := jsonl.NewReader(f, asr.DefaultMaxLine)
	r.SkipLong = true // a line over the bound is passed, not read again
	grew := false
	for {
		line, err := r.Next()
		if err == nil {
			var g struct {
				Seq uint64 `json:"seq"`
			}
			if json.Unmarshal(line, &g) == nil && g.Seq > 0 {
				t.seq, grew = g.Seq, true
			}
		} else if !errors.Is(err, jsonl.ErrLineTooLong) {
			t.off += r.Offset()
			return t.seq, grew // an incomplete last line waits
		}
	}
}
