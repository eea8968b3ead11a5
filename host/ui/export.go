package ui

import (
	"net/http"
	"os"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/transcript"
	"github.com/acptap/acptap/sdk/aep"
)

// export answers /export?id=&format=html|markdown&capture=LEVEL with the
// session as a download.
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := q.Get("id")
	path, err := s.streamPath(id, "")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	format := q.Get("format")
	if format == "" {
		format = transcript.FormatHTML
	}
	level := aep.Full
	if c := q.Get("capture"); c != "" {
		if level, err = aep.ParseLevel(c); err != nil {
			http.Error(w, "capture: none, metadata, redacted or full", http.StatusBadRequest)
			return
		}
	}
	f, err := os.Open(path)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	ext, ctype := ".html", "text/html; charset=utf-8"
	if format == transcript.FormatMarkdown {
		ext, ctype = ".md", "text/markdown; charset=utf-8"
	} else if format != transcript.FormatHTML {
		http.Error(w, "format: html or markdown", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="`+store.EscapeID(id)+ext+`"`)
	if err := transcript.Export(w, f, format, level); err != nil {
		s.log.Error("export", "session", id, "error", err)
	}
}
