package acpschema

import (
	"bytes"
	"sort"
	"sync"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The compiled validator: the fast check (fastvalid.go) compiled once per
// schema for values on a tape (internal/jsonscan.Tape), so that checking a
// frame does not interpret the schema node by node.
//
// A schema applies at one instance location through its own keywords and
// those of the schemas its $ref and allOf name (recursively): its
// conjuncts. A cnode is one fnode with all its conjuncts flattened: the
// type keywords intersected into one mask, the object keywords merged into
// one member table (so an object is walked once, not once per layer of
// allOf/$ref, and each member is looked up once), the other keywords kept
// as a list per conjunct (residual). The answer is the conjunction of the
// conjuncts' answers with the fast check's three-valued and (no wins, then
// unsure), which does not depend on the order keywords are evaluated in:
// the compiled validator answers yes or no only where the interpreter
// would (or where the interpreter is unsure only because of its early
// return on a keyword it does not evaluate on a tape), and every yes and
// no is jsonschema's verdict (FuzzCompiled, crossCheckTape).
//
// jsonschema reports a schema applied twice at one instance location as a
// reference cycle; the interpreter keeps a stack to notice it at run time.
// Here it is found once, at compile time: a schema that lies on a cycle of
// the schemas applied in place ($ref, allOf, anyOf, oneOf, not, if, then,
// else) compiles to "unsure", so that no check can apply a schema twice at
// one location, and needs no stack. The recursion follows members and
// items, so its depth is the tape's (at most jsonscan.MaxTapeDepth) times
// the longest chain of in-place schemas, which is finite.

// cnode is one compiled schema.
type cnode struct {
	// fixed: the answer for every value, when set (the false schema, a
	// conjunct that is, a conjunct the fast check does not model or a
	// cycle: unsure, nothing but true schemas: yes).
	fixed   tri
	isFixed bool

	// types is the intersection of the conjuncts' type keywords: a value
	// of a type bit in it holds, a number when tNumber is in it, an
	// integer when only tInteger is. typed: some conjunct has a type keyword.
	types uint8
	typed bool

	// o holds the object keywords, merged; nil when no conjunct has one
	// (properties, required, additionalProperties, min/maxProperties).
	o *cobj

	// eqStr: the one residual keyword is a string const (the common
	// discriminator); eqPlain: its text is its JSON body.
	eqStr   string
	isEqStr bool
	eqPlain bool

	res []cres // conjuncts with keywords besides type and object keywords

	// simple: only the type mask applies (no integer-only type), so the
	// node holds exactly when the value's type bit is in types.
	simple bool
}

// cobj is a cnode's object keywords, merged over its conjuncts.
type cobj struct {
	minProps int32
	maxProps int32 // -1: none
	reqN     int32 // props with req set
	addlNo   bool  // some conjunct's additionalProperties is false
	props    []cprop
	addl     []*cnode      // applied to a member no conjunct names, by each conjunct's additionalProperties schema
	lut      [lutSize]int8 // prop index by propHash: -1 none, -2 several (binary search)
	// seed is the multiplier of the object's propHash, chosen when it is
	// compiled so that its names fill distinct slots where some does.
	seed uint32
}

// lutSize is the slots of a cobj's lut.
const lutSize = 64

// cprop is one member name a conjunct names (a property or a required name).
type cprop struct {
	name string
	req  bool     // some conjunct requires it
	no   bool     // some conjunct that does not name it as a property forbids other members
	kids []*cnode // the property schemas, and additionalProperties schemas of conjuncts not naming it
}

// cres is the keywords of one conjunct that are neither type nor object keywords.
type cres struct {
	n                *fnode
	eq, format, str  bool
	num, arr         bool
	not              *cnode
	anyOf, oneOf     []*cnode
	ifN, thenN, elsN *cnode
	prefix           []*cnode
	items            *cnode
}

// compiler builds cnodes from the fnodes of one schema version.
type compiler struct {
	nodes  map[*fnode]*cnode
	cyclic map[*fnode]bool
}

// newCompiler returns the compiler of the fnodes of fs (fs.finish has run).
func newCompiler(fs fastSchemas) *compiler {
	return &compiler{nodes: map[*fnode]*cnode{}, cyclic: inPlaceCycles(fs)}
}

// lazyComp compiles the schemas of one version as checkers first use
// them (each schema with everything it reaches), so that a process holds
// the compiled form of the definitions its traffic meets, not of all.
type lazyComp struct {
	mu   sync.Mutex
	fs   fastSchemas
	c    *compiler // nil until the first use
	done map[*jsonschema.Schema]*cnode
}

// node is the compiled validator of s (nil when the fast check has no node for it).
func (l *lazyComp) node(s *jsonschema.Schema) *cnode {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n, ok := l.done[s]; ok {
		return n
	}
	if l.c == nil {
		l.c, l.done = newCompiler(l.fs), map[*jsonschema.Schema]*cnode{}
	}
	var n *cnode
	if f := l.fs[s]; f != nil {
		n = l.c.node(f) // complete when it returns: published under l.mu
	}
	l.done[s] = n
	return n
}

// inPlace lists the schemas n applies at its own instance location.
func inPlace(n *fnode) []*fnode {
	var out []*fnode
	add := func(m *fnode) {
		if m != nil {
			out = append(out, m)
		}
	}
	add(n.ref)
	add(n.not)
	add(n.ifN)
	add(n.thenN)
	add(n.elseN)
	for _, l := range [][]*fnode{n.allOf, n.anyOf, n.oneOf} {
		for _, m := range l {
			add(m)
		}
	}
	return out
}

// inPlaceCycles finds the fnodes that lie on a cycle of in-place
// applications (Tarjan's strongly connected components).
func inPlaceCycles(fs fastSchemas) map[*fnode]bool {
	index := map[*fnode]int{}
	low := map[*fnode]int{}
	on := map[*fnode]bool{}
	var stack []*fnode
	cyc := map[*fnode]bool{}
	next := 0
	var visit func(n *fnode)
	visit = func(n *fnode) {
		index[n], low[n] = next, next
		next++
		stack = append(stack, n)
		on[n] = true
		for _, m := range inPlace(n) {
			if m == n {
				cyc[n] = true
			}
			if _, seen := index[m]; !seen {
				visit(m)
				low[n] = min(low[n], low[m])
			} else if on[m] {
				low[n] = min(low[n], index[m])
			}
		}
		if low[n] == index[n] {
			var comp []*fnode
			for {
				m := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[m] = false
				comp = append(comp, m)
				if m == n {
					break
				}
			}
			if len(comp) > 1 {
				for _, m := range comp {
					cyc[m] = true
				}
			}
		}
	}
	// In a fixed order, so that compiling is deterministic.
	all := make([]*fnode, 0, len(fs))
	for s, n := range fs {
		_ = s
		all = append(all, n)
	}
	locs := map[*fnode]string{}
	for s, n := range fs {
		locs[n] = s.Location
	}
	sort.Slice(all, func(i, j int) bool { return locs[all[i]] < locs[all[j]] })
	for _, n := range all {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	return cyc
}

// conjuncts lists n and the schemas its $ref and allOf apply, recursively,
// each once; false when one of them is on an in-place cycle.
func (c *compiler) conjuncts(n *fnode, seen map[*fnode]bool, out *[]*fnode) bool {
	if seen[n] {
		return true
	}
	if c.cyclic[n] {
		return false
	}
	seen[n] = true
	*out = append(*out, n)
	if n.ref != nil && !c.conjuncts(n.ref, seen, out) {
		return false
	}
	for _, m := range n.allOf {
		if !c.conjuncts(m, seen, out) {
			return false
		}
	}
	return true
}

func (c *compiler) node(n *fnode) *cnode {
	if cn, ok := c.nodes[n]; ok {
		return cn
	}
	cn := &cnode{}
	c.nodes[n] = cn // before the children: schemas recurse through members
	var cs []*fnode
	if !c.conjuncts(n, map[*fnode]bool{}, &cs) {
		cn.fixed, cn.isFixed = unsure, true
		return cn
	}
	// Boolean and unsupported conjuncts decide alone (no wins over unsure).
	for _, m := range cs {
		if m.boolean == no {
			cn.fixed, cn.isFixed = no, true
			return cn
		}
	}
	for _, m := range cs {
		if m.unsupported {
			cn.fixed, cn.isFixed = unsure, true
			return cn
		}
	}
	var live []*fnode
	for _, m := range cs {
		if m.boolean == unsure {
			live = append(live, m)
		}
	}
	if len(live) == 0 {
		cn.fixed, cn.isFixed = yes, true
		return cn
	}
	cn.types = tNull | tBool | tNumber | tInteger | tString | tArray | tObject
	for _, m := range live {
		if m.types == 0 {
			continue
		}
		cn.typed = true
		t := m.types
		if t&tNumber != 0 {
			t |= tInteger
		}
		cn.types &= t
	}
	// Object keywords, merged.
	o := &cobj{maxProps: -1}
	isObj := false
	names := map[string]bool{}
	for _, m := range live {
		if len(m.propList) > 0 || len(m.required) > 0 || m.addl != yes || m.minProps > 0 || m.maxProps >= 0 {
			isObj = true
		}
		o.minProps = max(o.minProps, int32(m.minProps))
		if m.maxProps >= 0 && (o.maxProps < 0 || int32(m.maxProps) < o.maxProps) {
			o.maxProps = int32(m.maxProps)
		}
		for _, p := range m.propList {
			names[p.name] = true
		}
		for _, k := range m.required {
			names[k] = true
		}
		switch m.addl {
		case no:
			o.addlNo = true
		case unsure:
			o.addl = appendKid(o.addl, c.node(m.addlN))
		}
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		p := cprop{name: k}
		for _, m := range live {
			if in, ok := m.props[k]; ok {
				p.kids = appendKid(p.kids, c.node(in))
			} else {
				switch m.addl {
				case no:
					p.no = true
				case unsure:
					p.kids = appendKid(p.kids, c.node(m.addlN))
				}
			}
			for _, r := range m.required {
				if r == k {
					p.req = true
				}
			}
		}
		if p.req {
			o.reqN++
		}
		// A kid that is the true schema holds for every value.
		kids := p.kids[:0]
		for _, kd := range p.kids {
			if !(kd.isFixed && kd.fixed == yes) {
				kids = append(kids, kd)
			}
		}
		p.kids = kids
		o.props = append(o.props, p)
	}
	addl := o.addl[:0]
	for _, kd := range o.addl {
		if !(kd.isFixed && kd.fixed == yes) {
			addl = append(addl, kd)
		}
	}
	o.addl = addl
	o.fillLut()
	if isObj {
		cn.o = o
	}

	// The other keywords, per conjunct.
	for _, m := range live {
		r := cres{n: m}
		r.eq = m.hasEq
		r.format = m.format != nil
		r.str = m.minLen > 0 || m.maxLen >= 0 || m.pattern != nil
		r.num = m.numeric
		r.arr = m.minItems > 0 || m.maxItems >= 0 || len(m.prefix) > 0 || m.items != nil
		if m.not != nil {
			r.not = c.node(m.not)
		}
		for _, s := range m.anyOf {
			r.anyOf = append(r.anyOf, c.node(s))
		}
		for _, s := range m.oneOf {
			r.oneOf = append(r.oneOf, c.node(s))
		}
		if m.ifN != nil {
			r.ifN = c.node(m.ifN)
			if m.thenN != nil {
				r.thenN = c.node(m.thenN)
			}
			if m.elseN != nil {
				r.elsN = c.node(m.elseN)
			}
		}
		for _, s := range m.prefix {
			r.prefix = append(r.prefix, c.node(s))
		}
		if m.items != nil {
			r.items = c.node(m.items)
		}
		if r.eq || r.format || r.str || r.num || r.arr || r.not != nil || len(r.anyOf) > 0 || len(r.oneOf) > 0 || r.ifN != nil {
			cn.res = append(cn.res, r)
		}
	}
	// A lone string const (a discriminator) is compared on the bytes.
	if len(cn.res) == 1 {
		r := cn.res[0]
		if r.eq && !r.format && !r.str && !r.num && !r.arr && r.not == nil && len(r.anyOf) == 0 && len(r.oneOf) == 0 && r.ifN == nil && len(r.n.consts) == 1 {
			if s, ok := r.n.consts[0].(string); ok {
				cn.eqStr, cn.isEqStr, cn.eqPlain = s, true, plainText(s)
				cn.res = nil
			}
		}
	}
	cn.simple = cn.typed && cn.o == nil && len(cn.res) == 0 && !cn.isEqStr &&
		(cn.types&tNumber != 0 || cn.types&tInteger == 0)
	return cn
}

// plainText reports whether the JSON string body that is s's bytes has s
// as its text (no backslash, quote or control character).
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '"' || c < 0x20 {
			return false
		}
	}
	return true
}

// appendKid appends k unless l holds it (applying a schema twice to one
// value answers what applying it once does).
func appendKid(l []*cnode, k *cnode) []*cnode {
	for _, x := range l {
		if x == k {
			return l
		}
	}
	return append(l, k)
}

// propSeeds are the multipliers fillLut tries, in order (odd, well mixed).
var propSeeds = [...]uint32{0x9e3779b1, 0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f, 0x165667b1, 0xd3a2646d,
	0xfd7046c5, 0xb55a4f09, 0x2f0e1d37, 0x6c8e9cf5, 0x4cf5ad43, 0x8f1bbcdd, 0x5bd1e995, 0x7feb352d,
	0x846ca68b, 0xa54ff53b}

// fillLut fills the lut with the first seed whose slots hold one name
// each (or, when none does, the one with the fewest shared slots): most
// look-ups are then one slot and one comparison, not a binary search.
func (o *cobj) fillLut() {
	best, bestShared := propSeeds[0], -1
	for _, seed := range propSeeds {
		var used [lutSize]uint8
		shared := 0
		for _, p := range o.props {
			h := propHash(p.name, seed)
			if used[h]++; used[h] == 2 {
				shared++
			}
		}
		if bestShared < 0 || shared < bestShared {
			best, bestShared = seed, shared
		}
		if shared == 0 {
			break
		}
	}
	o.seed = best
	for i := range o.lut {
		o.lut[i] = -1
	}
	for i, p := range o.props {
		h := propHash(p.name, best)
		switch {
		case o.lut[h] == -1 && i < 127:
			o.lut[h] = int8(i)
		default:
			o.lut[h] = -2
		}
	}
}

func propHash(k string, seed uint32) int {
	if len(k) == 0 {
		return 0
	}
	return int((uint32(len(k))*7 ^ uint32(k[0])*3 ^ uint32(k[len(k)-1])*13 ^ uint32(k[len(k)/2])<<5) * seed >> 26)
}

func propHashB(k []byte, seed uint32) int {
	if len(k) == 0 {
		return 0
	}
	return int((uint32(len(k))*7 ^ uint32(k[0])*3 ^ uint32(k[len(k)-1])*13 ^ uint32(k[len(k)/2])<<5) * seed >> 26)
}

// prop is the index in props of the member name k, or -1.
func (c *cobj) prop(k []byte) int {
	switch i := c.lut[propHashB(k, c.seed)]; i {
	case -1:
		return -1
	case -2:
	default:
		if c.props[i].name == string(k) {
			return int(i)
		}
		return -1
	}
	return sortedIndex(c.props, func(p *cprop) string { return p.name }, k)
}

// typeOfByte is the JSON type bit of a value by its first byte.
var typeOfByte = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = tNumber
	}
	t['-'] = tNumber
	t['{'], t['['], t['"'] = tObject, tArray, tString
	t['t'], t['f'], t['n'] = tBool, tBool, tNull
	return t
}()

// check evaluates c against the value e of t.
func (c *cnode) check(t *jsonscan.Tape, e jsonscan.Ent) tri {
	if c.isFixed {
		return c.fixed
	}
	ty := typeOfByte[t.B[e.V0]]
	r := yes
	if c.typed && c.types&ty == 0 {
		if ty != tNumber || c.types&tInteger == 0 {
			return no
		}
		switch isInteger(fval{t: t, e: e}.number()) {
		case no:
			return no
		case unsure:
			r = unsure
		}
	}
	if c.isEqStr {
		if ty != tString {
			return no
		}
		b := t.B[e.V0+1 : e.V1-1]
		if c.eqPlain && string(b) == c.eqStr {
			// the bytes are the text
		} else if c.eqPlain && t.ValidUTF8() && bytes.IndexByte(b, '\\') < 0 {
			return no // the bytes are the text, and not the const
		} else if !(fval{t: t, e: e}).isText(c.eqStr) {
			return no
		}
	}
	if c.o != nil && ty == tObject {
		if r = and(r, c.o.object(t, e)); r == no {
			return no
		}
	}
	for i := range c.res {
		if r = and(r, c.res[i].check(t, e, ty)); r == no {
			return no
		}
	}
	return r
}

func (c *cobj) object(t *jsonscan.Tape, e jsonscan.Ent) tri {
	ms := t.Entries(e)
	if len(ms) < int(c.minProps) || (c.maxProps >= 0 && len(ms) > int(c.maxProps)) {
		return no
	}
	r := yes
	found := 0
	for _, m := range ms {
		i := c.prop(t.B[m.K0:m.K1])
		if i < 0 {
			if c.addlNo {
				return no
			}
			for _, k := range c.addl {
				if r = and(r, k.check(t, m)); r == no {
					return no
				}
			}
			continue
		}
		p := &c.props[i]
		if p.req {
			found++
		}
		if p.no {
			return no
		}
		for _, k := range p.kids {
			if k.simple {
				if k.types&typeOfByte[t.B[m.V0]] == 0 {
					return no
				}
				continue
			}
			if r = and(r, k.check(t, m)); r == no {
				return no
			}
		}
	}
	if int32(found) < c.reqN {
		return no
	}
	return r
}

// check evaluates the residual keywords of one conjunct, as
// fastCheck.keywords does.
func (r *cres) check(t *jsonscan.Tape, e jsonscan.Ent, ty uint8) tri {
	n := r.n
	v := fval{t: t, e: e}
	res := yes
	if r.eq {
		eq := no
		for _, c := range n.consts {
			switch v.equal(c) {
			case yes:
				eq = yes
			case unsure:
				if eq == no {
					eq = unsure
				}
			}
			if eq == yes {
				break
			}
		}
		if res = and(res, eq); res == no {
			return no
		}
	}
	if r.format {
		s, ok := v.scalar()
		if !ok {
			res = and(res, unsure)
		} else if n.format(s) != nil {
			return no
		}
	}
	switch ty {
	case tArray:
		if r.arr {
			if res = and(res, r.array(t, e)); res == no {
				return no
			}
		}
	case tString:
		if r.str {
			var f fastCheck
			if res = and(res, f.string(n, v)); res == no {
				return no
			}
		}
	case tNumber:
		if r.num {
			if res = and(res, numberBounds(n, v.number())); res == no {
				return no
			}
		}
	}
	if r.not != nil {
		if res = and(res, r.not.check(t, e).not()); res == no {
			return no
		}
	}
	if len(r.anyOf) > 0 {
		some := no
		for _, s := range r.anyOf {
			switch s.check(t, e) {
			case yes:
				some = yes
			case unsure:
				some = unsure
			}
			if some == yes {
				break
			}
		}
		if res = and(res, some); res == no {
			return no
		}
	}
	if len(r.oneOf) > 0 {
		matched, unsures := 0, 0
		for _, s := range r.oneOf {
			switch s.check(t, e) {
			case yes:
				matched++
			case unsure:
				unsures++
			}
		}
		one := unsure
		switch {
		case matched > 1:
			one = no
		case unsures > 0:
		case matched == 1:
			one = yes
		default:
			one = no
		}
		if res = and(res, one); res == no {
			return no
		}
	}
	if r.ifN != nil {
		switch r.ifN.check(t, e) {
		case yes:
			if r.thenN != nil {
				res = and(res, r.thenN.check(t, e))
			}
		case no:
			if r.elsN != nil {
				res = and(res, r.elsN.check(t, e))
			}
		default:
			res = and(res, unsure)
		}
	}
	return res
}

func (r *cres) array(t *jsonscan.Tape, e jsonscan.Ent) tri {
	n := r.n
	items := t.Entries(e)
	l := len(items)
	if l < n.minItems || (n.maxItems >= 0 && l > n.maxItems) {
		return no
	}
	res := yes
	for i, it := range items {
		switch {
		case i < len(r.prefix):
			res = and(res, r.prefix[i].check(t, it))
		case r.items != nil:
			res = and(res, r.items.check(t, it))
		default:
			return res
		}
		if res == no {
			return no
		}
	}
	return res
}
