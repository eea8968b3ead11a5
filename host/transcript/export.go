package transcript

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/acptap/acptap/sdk/aep"
	"github.com/acptap/acptap/sdk/asr"
)

// Export formats.
const (
	FormatHTML     = "html"
	FormatMarkdown = "markdown"
)

// Export reads a whole stream from r and writes it in format at capture
// level l. What the store never held (MCP secrets) cannot appear; l decides
// how much of prompts, replies and file contents does.
func Export(w io.Writer, r io.Reader, format string, l aep.Level) error {
	v, err := Build(r, Options{})
	if err != nil {
		return err
	}
	p := Page{Title: "Session", Capture: l.String(), View: v}
	if len(v.Header) > 0 {
		var h asr.Header
		if json.Unmarshal(v.Header, &h) == nil {
			p.Title = "Session " + h.SessionID
			p.Started = h.CreatedAt
			if h.Agent != nil {
				p.Agent = h.Agent.Name + " " + h.Agent.Version
			}
		}
	}
	home, _ := os.UserHomeDir()
	Downlevel(v, l, aep.Redactor{Home: home})
	switch format {
	case FormatHTML:
		return RenderHTML(w, p)
	case FormatMarkdown:
		return RenderMarkdown(w, p)
	}
	return fmt.Errorf("export: format %q is not %s or %s", format, FormatHTML, FormatMarkdown)
}
