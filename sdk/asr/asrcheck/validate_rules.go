package asrcheck

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/acptap/acptap/sdk/asr"
)

// acpAlways are the categories that always apply to a stream recorded from
// ACP (ASR-722).
var acpAlways = []string{asr.LossInference, asr.LossMessageAuthor, asr.LossTimestamps, asr.LossUsage}

// snapshotType reports whether records of typ are snapshots that never
// revise an entity (so supersedes is not allowed on them).
func snapshotType(typ string) bool {
	switch typ {
	case asr.TypeState, asr.TypeUsageSummary, asr.TypeSessionInfo, asr.TypeConfigChange, asr.TypeDeclaration:
		return true
	}
	return false
}

// entity is what the validator keeps per entity: its first and latest
// record seqs.
type entity struct {
	typ           string
	first, latest uint64
}

// rules checks the stream invariants. Its memory is a few words per entity
// and one bit per record id.
type rules struct {
	v *validator

	sawHeader  bool
	sessionID  string
	acp        bool // producer.source.format is acp: ASR-722 applies
	roots      map[string]bool
	forkedFrom string
	inheritsOf string
	lossy      map[string]bool
	lossWarned map[string]bool

	next     uint64             // the seq the next record should have
	ids      idSet              // ids used so far
	entities map[string]*entity // keyed entities by type + "\x00" + key
	chains   map[uint64]*entity // keyless revisable records (file_change, subagent, audit, vendor) by seq
	nChains  int
}

func newRules(v *validator) *rules {
	return &rules{v: v, next: 1, roots: map[string]bool{}, lossy: map[string]bool{}, lossWarned: map[string]bool{},
		entities: map[string]*entity{}, chains: map[uint64]*entity{}}
}

func (r *rules) entityCount() int { return len(r.entities) + r.nChains }

// skip accounts for a line that could not be read as a record: the next
// record's seq is not held against it.
func (r *rules) skip(n int) {
	if n > 1 {
		r.next++
	}
}

// header checks line 1.
func (r *rules) header(n int, h map[string]any) {
	r.sawHeader = true
	r.sessionID, _ = h["sessionId"].(string)
	producer, _ := h["producer"].(map[string]any)
	for _, c := range stringList(producer["lossy"]) {
		r.lossy[c] = true
	}
	if src, ok := producer["source"].(map[string]any); ok {
		r.acp = src["format"] == "acp"
	}
	if ws, ok := h["workspace"].(map[string]any); ok {
		roots, _ := ws["roots"].([]any)
		for _, x := range roots {
			root, _ := x.(map[string]any)
			id, ok := root["id"].(string)
			if !ok {
				continue
			}
			if r.roots[id] {
				r.v.errorf(n, "workspace.roots: root id %q is declared twice", id)
			}
			r.roots[id] = true
		}
	}
	if r.acp && producer["method"] == "recorder" {
		var missing []string
		for _, c := range acpAlways {
			if !r.lossy[c] {
				missing = append(missing, strconv.Quote(c))
			}
		}
		if len(missing) > 0 {
			r.v.errorf(n, "producer.lossy lacks %s: these always apply to a stream recorded from ACP (ASR-722)", strings.Join(missing, ", "))
		}
	}
	r.lineage(n, h["lineage"])
}

// lineage checks the header's lineage: inherits comes with forkedFrom and
// names the same session; no link points at the stream's own session.
func (r *rules) lineage(n int, x any) {
	lin, ok := x.(map[string]any)
	if !ok {
		return
	}
	forked, _ := lin["forkedFrom"].(map[string]any)
	inherits, _ := lin["inherits"].(map[string]any)
	spawned, _ := lin["spawnedBy"].(map[string]any)
	r.forkedFrom, _ = forked["session"].(string)
	from, _ := inherits["from"].(string)
	r.inheritsOf = from
	// inherits without forkedFrom is the schema's (dependentRequired).
	if inherits != nil && forked != nil && from != r.forkedFrom {
		r.v.errorf(n, "lineage.inherits.from %q differs from lineage.forkedFrom.session %q (ASR-718)", from, r.forkedFrom)
	}
	if r.forkedFrom != "" && r.forkedFrom == r.sessionID {
		r.v.errorf(n, "lineage.forkedFrom.session is the stream's own sessionId %q", r.sessionID)
	}
	if s, _ := spawned["session"].(string); s != "" && s == r.sessionID {
		r.v.errorf(n, "lineage.spawnedBy.session is the stream's own sessionId %q", r.sessionID)
	}
}

// record checks one record line.
func (r *rules) record(n int, typ string, rec map[string]any) {
	seq, seqOK := uint64Of(rec["seq"])
	if seqOK {
		if seq != r.next {
			r.v.errorf(n, "seq %d, expected %d: seq is dense from 1 in line order (the header is 0)", seq, r.next)
		}
		r.next = seq + 1
	} else {
		seq = r.next // the schema reported it; go on as if it were right
		r.next++
	}
	self := asr.RecordID(seq)
	if id, ok := rec["id"].(string); ok {
		if seqOK && id != self {
			r.v.errorf(n, "id %q does not match seq %d: a record's id is \"r<seq>\" (%s)", id, seq, self)
		}
		if k, ok := parseRecordID(id); ok {
			if !r.ids.add(k) {
				r.v.errorf(n, "id %q is already used by an earlier record", id)
			}
		}
	}
	sup, _ := rec["supersedes"].(string)
	r.identity(n, typ, seq, sup, rec)
	r.losses(n, typ, self, rec)
	r.references(n, typ, seq, rec)
	r.pathRefs(n, typ, rec)
}

// identity tracks entities and checks supersedes (ASR-706).
func (r *rules) identity(n int, typ string, seq uint64, sup string, rec map[string]any) {
	target, supOK := parseRecordID(sup)
	if sup != "" && supOK && target >= seq {
		r.v.errorf(n, "supersedes %s, which is not an earlier record (this is %s)", sup, asr.RecordID(seq))
		supOK = false
	}
	if field := asr.EntityKeyField(typ); field != "" {
		key, ok := rec[field].(string)
		if !ok {
			return // the schema reported it
		}
		name := typ + " " + strconv.Quote(key)
		id := typ + "\x00" + key
		e := r.entities[id]
		switch {
		case e == nil && sup != "" && supOK:
			r.v.errorf(n, "supersedes %s, but there is no earlier record of %s to revise", sup, name)
		case e != nil && sup == "":
			r.v.errorf(n, "%s already has record %s: a later record of the same entity must carry supersedes (ASR-706)", name, asr.RecordID(e.latest))
		case e != nil && supOK && target != e.latest:
			r.v.errorf(n, "supersedes %s, but the latest record of %s is %s (first %s)", sup, name, asr.RecordID(e.latest), asr.RecordID(e.first))
		}
		if e == nil {
			e = &entity{typ: typ, first: seq}
			r.entities[id] = e
			if typ == asr.TypeToolResult && r.entities[asr.TypeToolCall+"\x00"+key] == nil {
				r.v.warnf(n, "tool_result for call %q has no earlier tool_call", key)
			}
		}
		e.latest = seq
		return
	}
	if snapshotType(typ) {
		if sup != "" {
			r.v.errorf(n, "supersedes on a %s record: %s records are snapshots, not revisions of an entity", typ, typ)
		}
		return
	}
	// Keyless revisable records: a record and the records superseding it
	// are one entity of one type.
	if sup == "" || !supOK {
		r.chains[seq] = &entity{typ: typ, first: seq, latest: seq}
		r.nChains++
		return
	}
	e := r.chains[target]
	switch {
	case e == nil:
		r.v.errorf(n, "supersedes %s, which is not an earlier %s record", sup, typ)
		r.chains[seq] = &entity{typ: typ, first: seq, latest: seq}
		r.nChains++
		return
	case e.typ != typ:
		r.v.errorf(n, "supersedes %s, a %s record: a revision has the type of the record it revises (%s)", sup, e.typ, typ)
	case e.latest != target:
		r.v.errorf(n, "supersedes %s, but the latest record of that %s is %s", sup, typ, asr.RecordID(e.latest))
	}
	e.latest = seq
	r.chains[seq] = e
}

// losses folds declarations and checks that the categories a record needs
// were declared before it (ASR-722).
func (r *rules) losses(n int, typ, self string, rec map[string]any) {
	if typ == asr.TypeDeclaration {
		for _, c := range stringList(rec["lossy"]) {
			r.lossy[c] = true
		}
		return
	}
	if !r.acp {
		return
	}
	need := ""
	switch typ {
	case asr.TypeToolCall:
		need = asr.LossToolStatus
	case asr.TypeToolResult:
		need = asr.LossToolResultContent
	}
	if need == "" || r.lossy[need] || r.lossWarned[need] {
		return
	}
	r.lossWarned[need] = true
	r.v.errorf(n, "%s %s needs the loss category %q declared before it, in producer.lossy or an earlier declaration (ASR-722)", typ, self, need)
}

// references checks ids and sessions a record points at: a declaration's
// localThroughId, a compaction's replaces.throughId, copiedFrom markers and
// a subagent's child session.
func (r *rules) references(n int, typ string, seq uint64, rec map[string]any) {
	earlier := func(field, id string) {
		if k, ok := parseRecordID(id); ok && k >= seq {
			r.v.errorf(n, "%s %s is not an earlier record", field, id)
		}
	}
	switch typ {
	case asr.TypeDeclaration:
		if id, ok := rec["localThroughId"].(string); ok {
			if r.forkedFrom == "" {
				r.v.errorf(n, "localThroughId in a stream without lineage.forkedFrom: only a fork has copied history (ASR-718)")
			}
			earlier("localThroughId", id)
		}
	case asr.TypeCompaction:
		if rep, ok := rec["replaces"].(map[string]any); ok {
			if id, ok := rep["throughId"].(string); ok {
				earlier("replaces.throughId", id)
			}
		}
	case asr.TypeSubagent:
		if c, _ := rec["childSession"].(string); c != "" && c == r.sessionID {
			r.v.errorf(n, "childSession is the stream's own sessionId %q", c)
		}
	}
	if cf, ok := rec["copiedFrom"].(map[string]any); ok {
		switch s, _ := cf["session"].(string); {
		case r.inheritsOf == "":
			r.v.errorf(n, "copiedFrom in a stream without lineage.inherits: only a fork's copied history carries it (ASR-718)")
		case s != "" && s != r.inheritsOf:
			r.v.errorf(n, "copiedFrom.session %q differs from lineage.inherits.from %q", s, r.inheritsOf)
		}
	}
}

// pathRefs checks the PathRefs of a record (ASR-711): a root is a declared
// workspace root and the path is clean and relative to it; without a root
// the path is absolute.
func (r *rules) pathRefs(n int, typ string, rec map[string]any) {
	check := func(where string, x any) {
		ref, ok := x.(map[string]any)
		if !ok {
			return
		}
		path, ok := ref["path"].(string)
		if !ok {
			return
		}
		switch root := ref["root"].(type) {
		case nil:
			if !asr.IsAbsPath(path) {
				r.v.errorf(n, "%s: root is null but path %q is not absolute", where, path)
			}
		case string:
			if r.sawHeader && !r.roots[root] {
				r.v.errorf(n, "%s: root %q is not a workspace root of the header", where, root)
			}
			if !asr.IsCleanRelPath(path) {
				r.v.errorf(n, "%s: path %q is not a clean path relative to its root (no leading separator, no empty, \".\" or \"..\" segments)", where, path)
			}
		}
	}
	switch typ {
	case asr.TypeToolCall:
		locs, _ := rec["locations"].([]any)
		for i, l := range locs {
			if m, ok := l.(map[string]any); ok {
				check("locations["+strconv.Itoa(i)+"].path", m["path"])
			}
		}
	case asr.TypeFileChange:
		changes, _ := rec["changes"].([]any)
		for i, c := range changes {
			if m, ok := c.(map[string]any); ok {
				check("changes["+strconv.Itoa(i)+"].path", m["path"])
				check("changes["+strconv.Itoa(i)+"].oldPath", m["oldPath"])
			}
		}
	case asr.TypeTerminal:
		check("cwd", rec["cwd"])
	}
}

// stringList returns the strings of a JSON array.
func stringList(x any) []string {
	arr, _ := x.([]any)
	out := make([]string, 0, len(arr))
	for _, a := range arr {
		if s, ok := a.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// uint64Of reads a non-negative JSON integer.
func uint64Of(x any) (uint64, bool) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	u, err := strconv.ParseUint(n.String(), 10, 64)
	return u, err == nil
}

// parseRecordID reads "r<n>" (n ≥ 1).
func parseRecordID(id string) (uint64, bool) {
	if len(id) < 2 || id[0] != 'r' || id[1] == '0' {
		return 0, false
	}
	k, err := strconv.ParseUint(id[1:], 10, 64)
	return k, err == nil
}

// idSet is a set of record id numbers: a bitset for the dense ids a valid
// stream has, a map for stray large ones.
type idSet struct {
	bits  []uint64
	stray map[uint64]bool
}

const idBitsetMax = 1 << 32

func (s *idSet) add(k uint64) bool {
	if k >= idBitsetMax || k > uint64(len(s.bits))*64+1<<20 {
		if s.stray == nil {
			s.stray = map[uint64]bool{}
		}
		if s.stray[k] {
			return false
		}
		s.stray[k] = true
		return true
	}
	if s.stray[k] {
		return false
	}
	w := k / 64
	for uint64(len(s.bits)) <= w {
		s.bits = append(s.bits, 0)
	}
	if s.bits[w]&(1<<(k%64)) != 0 {
		return false
	}
	s.bits[w] |= 1 << (k % 64)
	return true
}
