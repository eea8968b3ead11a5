package acpasr

import (
	"encoding/base64"
	"encoding/json"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// terminal folds terminal_update upserts and terminal_output_chunk appends
// by terminalId (decision 1). ACP has no terminal status: a present
// exitStatus means exited.
type terminal struct {
	id, command, cwd string
	output           []byte
	hasOutput        bool
	chunked          bool // output holds chunks since the last snapshot
	exited           bool
	exitCode, signal json.RawMessage
	size             json.RawMessage // Options.TerminalSize
	meta             meta
}

func (t *terminal) finished() bool { return t.exited }

func (t *terminal) parts(s *stream) []part {
	rec := &asr.Terminal{
		Envelope:   asr.Envelope{Type: asr.TypeTerminal, Status: "running"},
		TerminalID: t.id,
		Command:    t.command,
		ExitCode:   t.exitCode,
		Signal:     t.signal,
		Size:       t.size,
		Provenance: asr.Provenance{Assembly: asr.AssemblyFolded, Meta: t.meta.out()},
	}
	if t.exited {
		rec.Status = "exited"
	}
	if ref, ok := asr.RefOK(s.roots, t.cwd); ok && t.cwd != "" {
		rec.Cwd = &ref
	}
	if t.hasOutput {
		rec.Output = &asr.Output{Blob: asr.Blob{Encoding: "base64", Data: base64.StdEncoding.EncodeToString(t.output)}}
	}
	if t.chunked {
		rec.Assembly = asr.AssemblyChunks
	}
	return []part{{key: asr.TypeTerminal, rec: rec}}
}

// terminalUpdate applies a terminal_update: output is a replacement
// snapshot, exitStatus an object (exited) or null (running again).
func (s *stream) terminalUpdate(f *sdk.Frame, u obj) bool {
	id, st := u.str("terminalId")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "terminal_update: terminalId missing or not a string", "kept as an audit record")
		return false
	}
	const what = "terminal_update"
	e := s.entity(asr.TypeTerminal, id, true, f, func() body { return &terminal{id: id} })
	t := e.b.(*terminal)
	s.patchStr(what, u, "command", &t.command)
	s.patchStr(what, u, "cwd", &t.cwd)
	if t.cwd != "" && !absolutePath(t.cwd) {
		s.c.diag(sdk.SeverityWarning, s.id, what+": cwd is not an absolute path", "cwd left out: ACP paths are absolute (ASR-711)")
		t.cwd = ""
	}
	switch out, st := u.object("output"); st {
	case isNull:
		t.output, t.hasOutput, t.chunked = nil, false, false
	case valid:
		if data, ok := s.base64(what+": output.data", out); ok {
			t.output, t.hasOutput, t.chunked = data, true, false
		}
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, what+": output is not an object", "output unchanged")
	}
	switch ex, st := u.object("exitStatus"); st {
	case isNull:
		t.exited, t.exitCode, t.signal = false, nil, nil
	case valid:
		t.exited = true
		t.exitCode = nil
		if code, st := ex.number("exitCode"); st == valid && isInt(code) {
			t.exitCode = own(code)
		} else if st != missing && st != isNull {
			s.c.diag(sdk.SeverityWarning, s.id, what+": exitStatus.exitCode is not an integer", "exit code left out")
		}
		t.signal = nil
		if _, st := ex.str("signal"); st == valid {
			t.signal = compact(ex.raw("signal"))
		}
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, what+": exitStatus is not an object", "exit status unchanged")
	}
	if s.c.opts.TerminalSize {
		switch _, st := u.object("size"); st {
		case isNull:
			t.size = nil
		case valid:
			t.size = compact(u.raw("size"))
		case invalid:
			s.c.diag(sdk.SeverityWarning, s.id, what+": size is not an object", "size unchanged")
		}
	}
	t.meta.fold(s, u)
	return true
}

// terminalChunk appends a terminal_output_chunk's bytes: each chunk is
// base64 on its own, decoded, then appended.
func (s *stream) terminalChunk(f *sdk.Frame, u obj) bool {
	id, st := u.str("terminalId")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "terminal_output_chunk: terminalId missing or not a string", "kept as an audit record")
		return false
	}
	data, ok := s.base64("terminal_output_chunk: data", u)
	if !ok {
		return false
	}
	e := s.entity(asr.TypeTerminal, id, true, f, func() body { return &terminal{id: id} })
	t := e.b.(*terminal)
	t.output = append(t.output, data...)
	t.hasOutput, t.chunked = true, true
	return true
}

// base64 decodes o's "data" member.
func (s *stream) base64(what string, o obj) ([]byte, bool) {
	text, st := o.str("data")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, what+" missing or not a string", "")
		return nil, false
	}
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		s.c.diag(sdk.SeverityWarning, s.id, what+" is not base64", err.Error())
		return nil, false
	}
	return data, true
}
