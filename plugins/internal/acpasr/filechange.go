package acpasr

import (
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// fileChange maps a {type: diff} item of a call's content (ASR-715).
func (s *stream) fileChange(t *toolCall, d obj) *asr.FileChange {
	status := fileChangeStatus(t.status)
	if t.snapshot(s) {
		status = "partial" // a snapshot before the call is final (ASR-705)
	}
	fc := &asr.FileChange{
		Envelope:  asr.Envelope{Type: asr.TypeFileChange, Status: status},
		Cause:     &asr.Cause{CallID: t.id},
		Changes:   []asr.Change{},
		Precision: "unknown",
	}
	changes, _ := d.items("changes")
	for _, x := range changes {
		if ch, ok := s.change(x); ok {
			fc.Changes = append(fc.Changes, ch)
		}
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

// change maps one of ACP's DiffChanges: operation → op (unchanged), paths
// converted per ASR-711, fileType, mimeType, and its _meta as sent. A
// change the record cannot hold is dropped (checkDiff reported it): no
// string operation, a missing or relative path, or a move or copy
// without an oldPath.
func (s *stream) change(x kv) (asr.Change, bool) { return s.changeOf(x, true) }

// changeOf is change; without withMeta it leaves Meta out (checkDiff,
// which only asks whether the change can be held: its _meta, a diff's
// texts in a v1 conversion, would be copied for nothing).
func (s *stream) changeOf(x kv, withMeta bool) (asr.Change, bool) {
	c, ok := x.asObj()
	if !ok {
		return asr.Change{}, false
	}
	op, st := c.str("operation")
	if st != valid {
		return asr.Change{}, false
	}
	ch := asr.Change{Op: op}
	if withMeta {
		ch.Meta = changeMeta(c) // a new map: out's copy of it is not needed
	}
	for _, f := range []struct {
		key string
		dst **asr.PathRef
	}{{"path", &ch.Path}, {"oldPath", &ch.OldPath}} {
		if p, st := c.str(f.key); st == valid {
			if ref, ok := asr.RefOK(s.roots, p); ok {
				*f.dst = &ref
			}
		}
	}
	switch op {
	case "add", "delete", "modify":
		if ch.Path == nil {
			return asr.Change{}, false
		}
	case "move", "copy":
		if ch.Path == nil || ch.OldPath == nil {
			return asr.Change{}, false
		}
	}
	ch.FileType, _ = c.str("fileType")
	ch.MimeType, _ = c.str("mimeType")
	return ch, true
}

// changeMeta is metaOf for a change, whose record is written at once and
// dropped: a string member read from a frame's tape (in a v1 conversion a
// diff's old and new texts, the bulk of its bytes) is its own compact form
// and lies in the frame's bytes, unchanged while the frame is mapped (own.go),
// so it is taken as it is instead of scanned and copied (compact).
func changeMeta(c obj) meta {
	m, st := c.object("_meta")
	if st != valid || len(m) == 0 {
		return nil
	}
	out := meta{}
	for _, e := range m {
		if e.t != nil && len(e.v) > 0 && e.v[0] == '"' {
			out[e.k] = e.v
		} else {
			out[e.k] = compact(e.v)
		}
	}
	return out
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
	changes, st := d.items("changes")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "diff has no changes array", "file_change with no changes")
	}
	for _, x := range changes {
		if _, ok := s.changeOf(x, false); !ok {
			s.c.diag(sdk.SeverityWarning, s.id, "diff change without a string operation and the absolute paths it needs",
				"change dropped (add, delete and modify need a path; move and copy a path and an oldPath)")
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
