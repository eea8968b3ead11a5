package asr

import (
	"crypto/sha256"
	"encoding/binary"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/jsonscan"
)

// Prepared is a record encoded once for both its fingerprint and its line.
// A recorder fingerprints a record before it knows whether it writes it
// (a repeat is not written) and before the record has its place (seq, id,
// times, native.ref): FingerprintOf and then Marshal walk and scan the
// record twice. Prepare encodes what is not the record's place once, the
// line's bytes and the canonical form's side by side (most strings and
// text are the same bytes in both); Line then writes the line with the
// place as the record has it by then.
type Prepared struct {
	rec  Record
	plan *recordPlan // nil: Line is Marshal
	fp   Fingerprint
	buf  *prepBuf // nil once Line or Release ended p
}

// prepBuf is what a Prepared holds until its line is written, recycled
// (prepPool): the line's bytes of the members, and where each is.
type prepBuf struct {
	ln   []byte
	segs []lineSeg
}

var prepPool = sync.Pool{New: func() any { return &prepBuf{ln: make([]byte, 0, 4096)} }}

// lineSeg is where a member's value is in prepBuf.ln (end 0: absent).
type lineSeg struct{ start, end int32 }

// Prepare encodes rec for FingerprintOf(rec, omit...) (the same value and
// error) and for Line. Until Line, rec may change only in what the
// fingerprint leaves out of a record's place and links: seq, id, ts,
// tsSource, observedAt, supersedes, copiedFrom, assembly and native.ref
// (a nil native may become one holding only ref), which Line encodes as
// they stand then; its other members are written as Prepare saw them.
// A Prepared is a value (kept in a caller's structures, not allocated a
// record); its methods take its address. Line or Release ends it and any
// copy of it.
func Prepare(rec Record, omit ...string) (Prepared, error) {
	p := Prepared{rec: rec}
	rv := reflect.ValueOf(rec)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		if pl := planFor(rv.Type().Elem()); pl != nil && p.encode(pl, rv.Elem(), omit) {
			return p, nil
		}
	}
	fp, err := FingerprintOf(rec, omit...)
	if err != nil {
		return Prepared{}, err
	}
	p.fp = fp
	return p, nil
}

// Fingerprint is FingerprintOf(rec, omit...) of Prepare's record.
func (p *Prepared) Fingerprint() Fingerprint { return p.fp }

// Record is the record Prepare encoded.
func (p *Prepared) Record() Record { return p.rec }

// Line is Marshal(rec) of the record as it stands (see Prepare). It ends
// p, as Release does.
func (p *Prepared) Line() ([]byte, error) {
	if p.plan == nil {
		return Marshal(p.rec)
	}
	defer p.Release()
	buf := canonPool.Get().(*[]byte)
	if b, ok := p.line((*buf)[:0]); ok {
		out := slices.Clone(b)
		recycle(buf, b)
		return out, nil
	}
	canonPool.Put(buf)
	return Marshal(p.rec)
}

// Release ends p without a line: its buffers go back to the pool (a Line
// after it is Marshal's).
func (p *Prepared) Release() {
	if b := p.buf; b != nil {
		p.buf, p.plan = nil, nil
		if cap(b.ln) <= 1<<20 { // a long session's largest record is not kept
			prepPool.Put(b)
		}
	}
}

// line appends rec's line: its place encoded now, the other members as
// Prepare saved them.
func (p *Prepared) line(dst []byte) ([]byte, bool) {
	pl := p.plan
	v := reflect.ValueOf(p.rec).Elem()
	cur, base := newCursor(v), addr(v)
	ln, segs := p.buf.ln, p.buf.segs
	dst = append(dst, '{')
	first := true
	for i := range pl.fs {
		f := &pl.fs[i]
		switch {
		case f.identity:
			if cur.omitted(f, base) {
				continue
			}
			fv := cur.at(f)
			dst = f.appendHead(dst, first)
			var ok bool
			if dst, ok = f.enc(dst, fv, nil); !ok {
				return nil, false
			}
			first = false
			continue
		case i == pl.native:
			fv := cur.at(f)
			if fv.IsNil() {
				continue
			}
			dst = f.appendHead(dst, first)
			first = false
			dst = append(dst, '{')
			rf := pl.ref.at(fv.Elem())
			ref := !(pl.ref.omitEmpty && isEmpty(rf))
			if ref {
				dst = pl.ref.appendHead(dst, true)
				var ok bool
				if dst, ok = pl.ref.enc(dst, rf, nil); !ok {
					return nil, false
				}
			}
			if s := segs[i]; s.end > 0 && s.end-s.start > 2 { // the rest of native, {…}
				if ref {
					dst = append(dst, ',')
				}
				dst = append(dst, ln[s.start+1:s.end-1]...)
			}
			dst = append(dst, '}')
			continue
		}
		s := segs[i]
		if s.end == 0 {
			continue
		}
		dst = append(f.appendHead(dst, first), ln[s.start:s.end]...)
		first = false
	}
	return append(dst, '}'), true
}

// encode fills p from v, a record of plan pl, or reports that it cannot
// (Prepare then falls back on FingerprintOf and Marshal).
func (p *Prepared) encode(pl *recordPlan, v reflect.Value, omit []string) bool {
	pb, cn := prepPool.Get().(*prepBuf), canonPool.Get().(*[]byte)
	b := dualBuf{ln: pb.ln[:0], cn: (*cn)[:0]}
	segs := append(pb.segs[:0], make([]lineSeg, len(pl.fs))...)
	var canon0 [24]lineSeg
	canon := canon0[:0] // the canonical value's place in b.cn (end 0: b.ln's)
	if len(pl.fs) > len(canon0) {
		canon = make([]lineSeg, 0, len(pl.fs))
	}
	canon = canon[:len(pl.fs)]
	ok := true
	cur, base := newCursor(v), addr(v)
	for i := range pl.fs {
		f := &pl.fs[i]
		if f.identity { // encoded by Line
			if f.hasRaw { // else leftOut
				if ok = f.leftOut(cur.at(f)); !ok {
					break
				}
			}
			continue
		}
		if cur.omitted(f, base) {
			continue
		}
		fv := cur.at(f)
		var drop []string
		if i == pl.native {
			drop = nativeRef // written by Line, and not in the canonical form
		}
		ls, cs := len(b.ln), len(b.cn)
		var same bool
		if same, ok = f.dual(&b, fv, drop); !ok {
			break
		}
		segs[i] = lineSeg{int32(ls), int32(len(b.ln))}
		if !same {
			canon[i] = lineSeg{int32(cs), int32(len(b.cn))}
		}
	}
	pb.ln, pb.segs = b.ln, segs
	p.buf = pb
	if !ok || len(b.ln) > 1<<30 {
		p.Release()
		recycle(cn, b.cn)
		return false
	}
	// The canonical form: the members sorted, the record's place and omit
	// left out, and native when nothing but ref was in it.
	start := len(b.cn)
	b.cn = append(b.cn, '{')
	n := 0
	for _, i := range pl.order {
		f := &pl.fs[i]
		s := segs[i]
		if s.end == 0 || f.identity || len(omit) > 0 && slices.Contains(omit, f.name) {
			continue
		}
		val := b.ln[s.start:s.end]
		if c := canon[i]; c.end > 0 {
			val = b.cn[c.start:c.end]
		}
		if i == pl.native && string(val) == "{}" {
			continue
		}
		b.cn = append(f.appendHead(b.cn, n == 0), val...)
		n++
	}
	b.cn = append(b.cn, '}', '\n')
	d := sha256.Sum256(b.cn[start:])
	recycle(cn, b.cn)
	p.plan, p.fp = pl, Fingerprint(binary.BigEndian.Uint64(d[:8]))
	return true
}

// recordPlan is a record type's plan for Prepare: its members in the
// line's order, each with its dual encoder.
type recordPlan struct {
	fs     []field
	order  []int // fs by name: the canonical form's order
	native int   // the index of native in fs (-1: none)
	ref    field // native's ref, its first member
}

var recordPlans sync.Map // reflect.Type → *recordPlan (nil: not modelled)

// planFor is the plan of struct type t, or nil.
func planFor(t reflect.Type) *recordPlan {
	if pl, ok := recordPlans.Load(t); ok {
		return pl.(*recordPlan)
	}
	pl := newRecordPlan(t)
	recordPlans.Store(t, pl)
	return pl
}

func newRecordPlan(t reflect.Type) *recordPlan {
	if t.Kind() != reflect.Struct {
		return nil
	}
	dualMu.Lock()
	fs, ok := dualFields(t)
	dualMu.Unlock()
	if !ok {
		return nil
	}
	pl := &recordPlan{fs: fs, order: byName(fs), native: -1}
	for i := range fs {
		if fs[i].name == "native" {
			nt := t.FieldByIndex(fs[i].index).Type
			if !fs[i].omitEmpty || nt.Kind() != reflect.Pointer || nt.Elem().Kind() != reflect.Struct {
				return nil // Line leaves out a nil native
			}
			nfs, ok := structFields(nt.Elem(), nil, map[string]bool{}, false)
			if !ok || len(nfs) == 0 || nfs[0].name != "ref" {
				return nil
			}
			pl.native, pl.ref = i, nfs[0]
		}
	}
	return pl
}

// dualFields is structFields of t (line encoders) with their dual
// encoders, under dualMu; false when a member's type has none.
func dualFields(t reflect.Type) ([]field, bool) {
	fs, ok := structFields(t, nil, map[string]bool{}, false)
	if !ok {
		return nil, false
	}
	for i := range fs {
		if fs[i].dual = planDual(t.FieldByIndex(fs[i].index).Type); fs[i].dual == nil {
			return nil, false
		}
		fs[i].setEmptyPlan(t)
	}
	return fs, true
}

// byName is the indices of fs sorted by name: the canonical form's order.
func byName(fs []field) []int {
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(fs[a].name, fs[b].name) })
	return order
}

// appendHead appends the member's name and colon, with the comma unless
// it is the first.
func (f *field) appendHead(dst []byte, first bool) []byte {
	if first {
		return append(dst, f.head[1:]...)
	}
	return append(dst, f.head...)
}

// The dual encoders: a value's line (what encode writes) and its canonical
// form (what encodeAs writes with canon) in one walk.

// dualBuf holds the line's bytes and the canonical form's being written.
type dualBuf struct{ ln, cn []byte }

// null appends null, which is its own canonical form.
func (b *dualBuf) null() (same, ok bool) {
	b.ln = append(b.ln, "null"...)
	return true, true
}

// dualFn appends v's JSON to b.ln and its canonical form to b.cn; same:
// the canonical form is the bytes appended to b.ln (b.cn is then as it
// was). drop is encFn's, for both.
type dualFn func(b *dualBuf, v reflect.Value, drop []string) (same, ok bool)

// The dual encoders planned, and the types being planned, under dualMu
// (planned once a record type: recordPlans is the one read per record).
var (
	dualMu   sync.Mutex
	duals    = map[reflect.Type]dualFn{} // nil: not modelled
	dualBusy = map[reflect.Type]bool{}
)

// planDual is t's dual encoder, or nil: for a type encode does not model,
// and for a recursive one (Prepare falls back on two encodes). Called
// under dualMu.
func planDual(t reflect.Type) dualFn {
	if fn, ok := duals[t]; ok {
		return fn
	}
	if dualBusy[t] {
		return nil
	}
	dualBusy[t] = true
	fn := newDual(t)
	delete(dualBusy, t)
	duals[t] = fn
	return fn
}

func newDual(t reflect.Type) dualFn {
	if t == rawType {
		return dualRaw
	}
	line := encoderFor(t, false)
	if line == nil {
		return nil
	}
	var elem dualFn // a pointer's, a slice's or a map's element
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if elem = planDual(t.Elem()); elem == nil {
			return nil
		}
	}
	switch t.Kind() {
	case reflect.String:
		return func(b *dualBuf, v reflect.Value, _ []string) (bool, bool) {
			var valid bool
			if b.ln, valid = appendString(b.ln, v.String()); !valid {
				b.cn = canonText(b.cn, v.String())
			}
			return valid, true
		}
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(b *dualBuf, v reflect.Value, _ []string) (bool, bool) {
			b.ln, _ = line(b.ln, v, nil)
			return true, true
		}
	case reflect.Pointer:
		return func(b *dualBuf, v reflect.Value, drop []string) (bool, bool) {
			if v.IsNil() {
				return b.null()
			}
			return elem(b, v.Elem(), drop)
		}
	case reflect.Slice:
		return func(b *dualBuf, v reflect.Value, _ []string) (bool, bool) {
			if v.IsNil() {
				return b.null()
			}
			z := lazyCanon{start: len(b.ln)}
			b.ln = append(b.ln, '[')
			for i := range v.Len() {
				at := len(b.ln)
				if i > 0 {
					b.ln = append(b.ln, ',')
				}
				if !z.elem(b, at, elem, v.Index(i)) {
					return false, false
				}
			}
			return z.end(b, ']'), true
		}
	case reflect.Map:
		return func(b *dualBuf, v reflect.Value, _ []string) (bool, bool) {
			if v.IsNil() {
				return b.null()
			}
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
			z := lazyCanon{start: len(b.ln)}
			b.ln = append(b.ln, '{')
			for i, k := range keys {
				if !utf8.ValidString(k.String()) {
					return false, false // canonical keys are decoded ones: two may become one
				}
				at := len(b.ln)
				if i > 0 {
					b.ln = append(b.ln, ',')
				}
				b.ln = append(encodeString(b.ln, k.String()), ':')
				if !z.elem(b, at, elem, v.MapIndex(k)) {
					return false, false
				}
			}
			return z.end(b, '}'), true
		}
	case reflect.Struct:
		return dualStruct(t)
	}
	return nil
}

// lazyCanon writes a container's canonical form only from its first
// element whose canonical form is not its line's bytes: until then the
// line's bytes are the canonical form.
type lazyCanon struct {
	start int // the container's first byte in b.ln
	on    bool
}

// elem encodes the element v, whose line (with the separator and key
// before it) begins at b.ln[at].
func (z *lazyCanon) elem(b *dualBuf, at int, enc dualFn, v reflect.Value) bool {
	vs, cs := len(b.ln), len(b.cn)
	same, ok := enc(b, v, nil)
	switch {
	case !ok:
	case same && z.on:
		b.cn = append(b.cn, b.ln[at:]...)
	case !same && !z.on:
		b.cn = slices.Insert(b.cn, cs, b.ln[z.start:vs]...)
		z.on = true
	case !same:
		b.cn = slices.Insert(b.cn, cs, b.ln[at:vs]...)
	}
	return ok
}

// end closes the container with c and reports whether its canonical form
// is its line's bytes.
func (z *lazyCanon) end(b *dualBuf, c byte) bool {
	b.ln = append(b.ln, c)
	if z.on {
		b.cn = append(b.cn, c)
	}
	return !z.on
}

// dualRaw is encodeRaw and canonRaw of a json.RawMessage: the one scan
// that shows a string is as Marshal escapes it shows it compact too.
func dualRaw(b *dualBuf, v reflect.Value, _ []string) (bool, bool) {
	if v.IsNil() {
		return b.null()
	}
	raw := v.Bytes()
	if knownBlocks.has(raw) {
		b.ln = append(b.ln, raw...)
		b.cn = canonTextBlock(b.cn, raw)
		return false, true
	}
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && canonEscaped(raw[1:n-1]) {
		b.ln = append(b.ln, raw...)
		return true, true
	}
	if !jsonscan.Compact(raw) {
		return false, false
	}
	b.ln = append(b.ln, raw...)
	b.cn = canonValue(b.cn, raw)
	return false, true
}

// dualStruct is a struct's dual encoder: the line's members in order, the
// canonical form's sorted (written once all are encoded, from where each
// value's canonical form is).
func dualStruct(t reflect.Type) dualFn {
	fs, ok := dualFields(t)
	if !ok {
		return nil
	}
	order := byName(fs)
	type place struct {
		ls, le, cs, ce int // the value in b.ln, and in b.cn (ce < 0: b.ln's)
	}
	return func(b *dualBuf, v reflect.Value, drop []string) (bool, bool) {
		var buf [8]place
		ps := buf[:0]
		if len(fs) > len(buf) {
			ps = make([]place, 0, len(fs))
		}
		cn0 := len(b.cn)
		b.ln = append(b.ln, '{')
		first := true
		cur, base := newCursor(v), addr(v)
		for i := range fs {
			f := &fs[i]
			ps = append(ps, place{ce: -2}) // -2: absent
			if drop != nil && f.drops(drop) {
				if !f.leftOut(cur.at(f)) {
					return false, false
				}
				continue
			}
			if cur.omitted(f, base) {
				continue
			}
			fv := cur.at(f)
			b.ln = f.appendHead(b.ln, first)
			first = false
			p := place{ls: len(b.ln), cs: len(b.cn), ce: -1}
			same, ok := f.dual(b, fv, nil)
			if !ok {
				return false, false
			}
			p.le = len(b.ln)
			if !same {
				p.ce = len(b.cn)
			}
			ps[i] = p
		}
		b.ln = append(b.ln, '}')
		// The canonical form after the values', then moved down over them.
		at := len(b.cn)
		b.cn = append(b.cn, '{')
		n := 0
		for _, i := range order {
			p := ps[i]
			if p.ce == -2 {
				continue
			}
			b.cn = fs[i].appendHead(b.cn, n == 0)
			if p.ce < 0 {
				b.cn = append(b.cn, b.ln[p.ls:p.le]...)
			} else {
				b.cn = append(b.cn, b.cn[p.cs:p.ce]...)
			}
			n++
		}
		b.cn = append(b.cn, '}')
		b.cn = b.cn[:cn0+copy(b.cn[cn0:], b.cn[at:])]
		return false, true
	}
}
