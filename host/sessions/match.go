package sessions

// Match reports whether f selects s (for listings built elsewhere, such as
// the web viewer's).
func (f Filter) Match(s Session) bool { return f.match(s) }
