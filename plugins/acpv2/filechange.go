package acpv2

import (
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// fileChange maps a {type: diff} item of a call's content (ASR-715).
func (s *stream) fileChange(t *toolCall, d obj) *asr.FileChange {
	fc := &asr.FileChange{
		Envelope:  asr.Envelope{Type: asr.TypeFileChange, Status: fileChangeStatus(t.status)},
		Cause:     &asr.Cause{CallID: t.id},
		Changes:   []asr.Change{},
		Precision: "unknown",
	}
	changes, _ := d.array("changes")
	for _, x := range changes {
		c, ok := parseObj(x)
		if !ok {
			continue
		}
		ch := asr.Change{}
		ch.Op, _ = c.str("operation")
		if p, st := c.str("path"); st == valid {
			ref := asr.Ref(s.roots, p)
			ch.Path = &ref
		}
		if p, st := c.str("oldPath"); st == valid {
			ref := asr.Ref(s.roots, p)
			ch.OldPath = &ref
		}
		ch.FileType, _ = c.str("fileType")
		ch.MimeType, _ = c.str("mimeType")
		fc.Changes = append(fc.Changes, ch)
	}
	if p, st := d.object("patch"); st == valid {
		if text, st := p.str("text"); st == valid {
			// ACP's format is copied; it is "git_patch" unless a vendor
			// sent its own (ASR-709).
			format, st := p.str("format")
			if st != valid {
				format = "git_patch"
			}
			fc.Patch = &asr.Patch{Format: format, Text: text}
			fc.Precision = "hunks"
		}
	}
	return fc
}

// fileChangeStatus is the change's status from the call's (ASR-715).
func fileChangeStatus(callStatus string) string {
	switch callStatus {
	case "completed":
		return "applied"
	case "failed":
		return "failed"
	case "cancelled":
		return "unknown"
	}
	return "proposed"
}

// checkDiff reports what fileChange will have to skip.
func (s *stream) checkDiff(d obj) {
	changes, st := d.array("changes")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "diff has no changes array", "file_change with no changes")
	}
	for _, x := range changes {
		c, ok := parseObj(x)
		_, opSt := c.str("operation")
		_, pathSt := c.str("path")
		if !ok || opSt != valid || pathSt != valid {
			s.c.diag(sdk.SeverityWarning, s.id, "diff change without a string operation and path", "kept as far as it goes")
			return
		}
	}
	if _, st := d.member("patch"); st == valid {
		if p, st := d.object("patch"); st != valid {
			s.c.diag(sdk.SeverityWarning, s.id, "diff patch is not an object", "patch dropped")
		} else if _, st := p.str("text"); st != valid {
			s.c.diag(sdk.SeverityWarning, s.id, "diff patch has no text", "patch dropped")
		}
	}
}
