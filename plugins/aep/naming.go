package aep

import "strings"

// vendorType is the mechanical x.acp.* name of an ACP method or
// sessionUpdate value: lowercased, "/" and "_" become ".", characters the
// type grammar forbids are dropped, and a single remaining token gains the
// ".event" suffix (the envelope needs two segments after the vendor).
func vendorType(name string) string {
	var b strings.Builder
	dot := true // suppress leading and repeated dots
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dot = false
		case r == '/' || r == '_' || r == '.':
			if !dot {
				b.WriteByte('.')
				dot = true
			}
		}
	}
	s := strings.TrimSuffix(b.String(), ".")
	switch {
	case s == "":
		return "x.acp.unknown.event"
	case !strings.Contains(s, "."):
		return "x.acp." + s + ".event"
	}
	return "x.acp." + s
}
