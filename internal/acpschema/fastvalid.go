package acpschema

import (
	"encoding/json"
	"math/big"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The fast check: a yes/no/unsure validator over the same compiled
// schemas (jsonschema.Schema) that answers without building errors.
//
// A frame that conforms is by far the common case, and jsonschema's
// validator spends most of its time on what it keeps for the error it
// might report (scopes, instance locations, the errors of every anyOf
// branch tried, the annotations unevaluatedProperties would need). fast
// walks the same compiled keywords and only answers "valid" (yes) or
// "invalid" (no) where it evaluates every keyword of the schema exactly as
// jsonschema v6 does; a schema using a keyword it does not model, or a
// value it is not sure about (a number whose exponent it would have to
// expand, a const or enum object or array), makes the answer "unsure". The checker only trusts
// yes: anything else is validated again by jsonschema itself, so the
// verdicts and the messages are the ones jsonschema gives. (no has to be
// exact too, because `not` turns it into yes.)

type tri int8

const (
	unsure tri = iota
	yes
	no
)

func (t tri) not() tri {
	switch t {
	case yes:
		return no
	case no:
		return yes
	}
	return unsure
}

// JSON types as bits, for the type keyword.
const (
	tNull uint8 = 1 << iota
	tBool
	tNumber
	tInteger
	tString
	tArray
	tObject
)

// fnode is one compiled schema as the fast check reads it.
type fnode struct {
	// unsupported: the schema uses a keyword fast does not evaluate.
	unsupported bool
	boolean     tri // a true (yes) or false (no) schema; unsure: not boolean

	types  uint8 // 0: no type keyword
	consts []any // const (one value) or enum values; nil: none
	hasEq  bool  // const or enum present
	format func(any) error

	ref                 *fnode
	not                 *fnode
	allOf, anyOf, oneOf []*fnode
	ifN, thenN, elseN   *fnode

	props    map[string]*fnode
	propList []prop // props, sorted by name
	required []string
	// reqProps counts the distinct required names that are properties
	// (prop.req); reqOther are the required names that are not.
	reqProps  int
	reqOther  []string
	addl      tri // yes: additionalProperties true or absent; no: false; unsure: a schema (addlN)
	addlN     *fnode
	minProps  int
	maxProps  int // -1: none
	minItems  int
	maxItems  int // -1: none
	prefix    []*fnode
	items     *fnode
	minLen    int
	maxLen    int // -1: none
	pattern   jsonschema.Regexp
	minimum   *big.Rat
	maximum   *big.Rat
	exMinimum *big.Rat
	exMaximum *big.Rat
	numeric   bool // any of the four number bounds

	// Shortcuts (fastSchemas.finish): onlyTypes, a node whose only keyword
	// is a type (not integer), so it holds exactly when the value's type
	// bit is in it; alias, the node a node whose only keyword is a $ref
	// stands for (following such refs).
	onlyTypes uint8
	alias     *fnode
}

// bare reports whether n has no keyword but type and $ref.
func (n *fnode) bare() bool {
	return !n.unsupported && n.boolean == unsure && !n.hasEq && n.format == nil && n.not == nil &&
		len(n.allOf) == 0 && len(n.anyOf) == 0 && len(n.oneOf) == 0 && n.ifN == nil &&
		len(n.props) == 0 && len(n.required) == 0 && n.addl == yes && n.minProps == 0 && n.maxProps < 0 &&
		n.minItems == 0 && n.maxItems < 0 && len(n.prefix) == 0 && n.items == nil &&
		n.minLen == 0 && n.maxLen < 0 && n.pattern == nil && !n.numeric
}

func (n *fnode) refOnly() bool { return n.ref != nil && n.types == 0 && n.bare() }

// finish computes the nodes' shortcuts, once all are built.
func (fs fastSchemas) finish() {
	for _, n := range fs {
		if n.ref == nil && n.types != 0 && n.types&tInteger == 0 && n.bare() {
			n.onlyTypes = n.types
		}
	}
	for _, n := range fs {
		t := n
		for i := 0; t.refOnly() && i < 64; i++ {
			t = t.ref
		}
		if t != n && !t.refOnly() {
			n.alias = t
		}
	}
}

type prop struct {
	name string
	node *fnode
	req  bool // name is required
}

// fastSchemas builds the fnodes of compiled schemas, sharing the nodes
// of schemas reachable from several roots.
type fastSchemas map[*jsonschema.Schema]*fnode

func (fs fastSchemas) node(s *jsonschema.Schema) *fnode {
	if n, ok := fs[s]; ok {
		return n
	}
	n := &fnode{maxProps: -1, maxItems: -1, maxLen: -1, addl: yes}
	fs[s] = n // before the children: schemas may be recursive
	if s.Bool != nil {
		n.boolean = no
		if *s.Bool {
			n.boolean = yes
		}
		return n
	}
	if s.DraftVersion < 2020 || s.RecursiveRef != nil || s.DynamicRef != nil ||
		len(s.PatternProperties) > 0 || len(s.Dependencies) > 0 || len(s.DependentRequired) > 0 ||
		len(s.DependentSchemas) > 0 || s.PropertyNames != nil || !isTrue(s.UnevaluatedProperties) ||
		!isTrue(s.UnevaluatedItems) || s.UniqueItems || s.Contains != nil || s.MinContains != nil ||
		s.MaxContains != nil || s.Items != nil || s.AdditionalItems != nil ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		s.MultipleOf != nil || len(s.Extensions) > 0 {
		n.unsupported = true
		return n
	}
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			switch t {
			case "null":
				n.types |= tNull
			case "boolean":
				n.types |= tBool
			case "number":
				n.types |= tNumber
			case "integer":
				n.types |= tInteger
			case "string":
				n.types |= tString
			case "array":
				n.types |= tArray
			case "object":
				n.types |= tObject
			default:
				n.unsupported = true
				return n
			}
		}
	}
	if s.Const != nil && s.Enum != nil {
		// Both: rare enough to leave to jsonschema.
		n.unsupported = true
		return n
	}
	if s.Const != nil {
		n.hasEq, n.consts = true, []any{*s.Const}
	}
	if s.Enum != nil {
		n.hasEq, n.consts = true, s.Enum.Values
	}
	if s.Format != nil {
		n.format = s.Format.Validate
	}
	if s.Ref != nil {
		n.ref = fs.node(s.Ref)
	}
	if s.Not != nil {
		n.not = fs.node(s.Not)
	}
	n.allOf = fs.nodes(s.AllOf)
	n.anyOf = fs.nodes(s.AnyOf)
	n.oneOf = fs.nodes(s.OneOf)
	if s.If != nil {
		n.ifN = fs.node(s.If)
		if s.Then != nil {
			n.thenN = fs.node(s.Then)
		}
		if s.Else != nil {
			n.elseN = fs.node(s.Else)
		}
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*fnode, len(s.Properties))
		for k, p := range s.Properties {
			n.props[k] = fs.node(p)
			n.propList = append(n.propList, prop{name: k, node: n.props[k]})
		}
		sort.Slice(n.propList, func(i, j int) bool { return n.propList[i].name < n.propList[j].name })
	}
	n.required = s.Required
	for _, k := range s.Required {
		i := sort.Search(len(n.propList), func(i int) bool { return n.propList[i].name >= k })
		switch {
		case i < len(n.propList) && n.propList[i].name == k:
			if !n.propList[i].req {
				n.propList[i].req = true
				n.reqProps++
			}
		case !slices.Contains(n.reqOther, k):
			n.reqOther = append(n.reqOther, k)
		}
	}
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		if !a {
			n.addl = no
		}
	case *jsonschema.Schema:
		n.addl, n.addlN = unsure, fs.node(a)
	default:
		n.unsupported = true
		return n
	}
	if s.MinProperties != nil {
		n.minProps = *s.MinProperties
	}
	if s.MaxProperties != nil {
		n.maxProps = *s.MaxProperties
	}
	if s.MinItems != nil {
		n.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		n.maxItems = *s.MaxItems
	}
	n.prefix = fs.nodes(s.PrefixItems)
	if s.Items2020 != nil {
		n.items = fs.node(s.Items2020)
	}
	if s.MinLength != nil {
		n.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		n.maxLen = *s.MaxLength
	}
	n.pattern = s.Pattern
	n.minimum, n.maximum, n.exMinimum, n.exMaximum = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
	n.numeric = n.minimum != nil || n.maximum != nil || n.exMinimum != nil || n.exMaximum != nil
	return n
}

// isTrue reports whether s is absent or the schema true: an
// unevaluatedProperties (or Items) that holds for every value, so it
// never fails, whatever was evaluated.
func isTrue(s *jsonschema.Schema) bool {
	return s == nil || (s.Bool != nil && *s.Bool)
}

func (fs fastSchemas) nodes(ss []*jsonschema.Schema) []*fnode {
	if len(ss) == 0 {
		return nil
	}
	out := make([]*fnode, len(ss))
	for i, s := range ss {
		out[i] = fs.node(s)
	}
	return out
}

// fastCheck evaluates schemas against one instance. Its scratch stack is
// reused; a fastCheck is not safe for concurrent use.
type fastCheck struct {
	// stack holds the schemas applied at the current instance location
	// from base on: jsonschema reports a schema applied twice at one
	// location as a reference cycle (an error), which fast leaves to it.
	stack []*fnode
	base  int
	depth int
}

// maxFastDepth bounds the recursion of one check (schemas and values).
const maxFastDepth = 2000

// valid evaluates n against v, a value decoded as jsonschema.UnmarshalJSON
// decodes (map[string]any, []any, string, json.Number, bool, nil).
func (f *fastCheck) valid(n *fnode, v any) tri {
	f.stack, f.base, f.depth = f.stack[:0], 0, 0
	return f.apply(n, fval{v: v})
}

// validTape evaluates n against the value e of t, not decoded (rawval.go):
// the answer valid gives for the value jsonschema.UnmarshalJSON decodes
// from it, or unsure.
func (f *fastCheck) validTape(n *fnode, t *jsonscan.Tape, e jsonscan.Ent) tri {
	f.stack, f.base, f.depth = f.stack[:0], 0, 0
	return f.apply(n, fval{t: t, e: e})
}

// at applies n to v, a value at a new instance location (a member or an item).
func (f *fastCheck) at(n *fnode, v fval) tri {
	if n.alias != nil {
		n = n.alias
	}
	if n.onlyTypes != 0 {
		if t := v.typ(); t != 0 {
			if n.onlyTypes&t != 0 {
				return yes
			}
			return no
		}
	}
	saved := f.base
	f.base = len(f.stack)
	r := f.apply(n, v)
	f.stack = f.stack[:f.base]
	f.base = saved
	return r
}

func (f *fastCheck) apply(n *fnode, v fval) tri {
	if n.alias != nil {
		n = n.alias
	}
	if n.boolean != unsure {
		return n.boolean
	}
	if n.unsupported {
		return unsure
	}
	for _, s := range f.stack[f.base:] {
		if s == n {
			return unsure
		}
	}
	if f.depth >= maxFastDepth {
		return unsure
	}
	f.depth++
	f.stack = append(f.stack, n)
	r := f.keywords(n, v)
	f.stack = f.stack[:len(f.stack)-1]
	f.depth--
	return r
}

// and combines the results of keywords that must all hold: no wins, then unsure.
func and(a, b tri) tri {
	if a == no || b == no {
		return no
	}
	if a == unsure || b == unsure {
		return unsure
	}
	return yes
}

func (f *fastCheck) keywords(n *fnode, v fval) tri {
	r := yes
	t := v.typ()
	if n.types != 0 {
		switch {
		case t == 0:
			return unsure
		case n.types&t != 0:
		case t == tNumber && n.types&tInteger != 0:
			switch isInteger(v.number()) {
			case no:
				return no
			case unsure:
				r = unsure
			}
		default:
			return no
		}
	}
	if n.hasEq {
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
		if r = and(r, eq); r == no {
			return no
		}
	}
	if n.format != nil {
		s, ok := v.scalar()
		if !ok {
			return unsure
		}
		if n.format(s) != nil {
			return no
		}
	}
	if n.ref != nil {
		if r = and(r, f.apply(n.ref, v)); r == no {
			return no
		}
	}
	switch t {
	case tObject:
		r = and(r, f.object(n, v))
	case tArray:
		r = and(r, f.array(n, v))
	case tString:
		r = and(r, f.string(n, v))
	case tNumber:
		if n.numeric {
			r = and(r, numberBounds(n, v.number()))
		}
	}
	if r == no {
		return no
	}
	if n.not != nil {
		if r = and(r, f.apply(n.not, v).not()); r == no {
			return no
		}
	}
	for _, s := range n.allOf {
		if r = and(r, f.apply(s, v)); r == no {
			return no
		}
	}
	if len(n.anyOf) > 0 {
		some := no
		for _, s := range n.anyOf {
			switch f.apply(s, v) {
			case yes:
				some = yes
			case unsure:
				some = unsure
			}
			if some == yes {
				break
			}
		}
		if r = and(r, some); r == no {
			return no
		}
	}
	if len(n.oneOf) > 0 {
		matched, unsures := 0, 0
		for _, s := range n.oneOf {
			switch f.apply(s, v) {
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
		if r = and(r, one); r == no {
			return no
		}
	}
	if n.ifN != nil {
		switch f.apply(n.ifN, v) {
		case yes:
			if n.thenN != nil {
				r = and(r, f.apply(n.thenN, v))
			}
		case no:
			if n.elseN != nil {
				r = and(r, f.apply(n.elseN, v))
			}
		default:
			r = and(r, unsure)
		}
	}
	return r
}

func (f *fastCheck) object(n *fnode, v fval) tri {
	if v.t != nil {
		return f.tapeObject(n, v.t, v.e)
	}
	obj := v.v.(map[string]any)
	if len(obj) < n.minProps || (n.maxProps >= 0 && len(obj) > n.maxProps) {
		return no
	}
	for _, k := range n.required {
		if _, ok := obj[k]; !ok {
			return no
		}
	}
	r := yes
	if n.addl == yes {
		// Only the members the schema names are checked: look them up
		// (cheaper than walking the map).
		for _, p := range n.propList {
			if v, ok := obj[p.name]; ok {
				if r = and(r, f.at(p.node, fval{v: v})); r == no {
					return no
				}
			}
		}
		return r
	}
	for k, v := range obj {
		if p, ok := n.props[k]; ok {
			r = and(r, f.at(p, fval{v: v}))
		} else {
			switch n.addl {
			case no:
				return no
			case unsure:
				r = and(r, f.at(n.addlN, fval{v: v}))
			}
		}
		if r == no {
			return no
		}
	}
	return r
}

func (f *fastCheck) array(n *fnode, v fval) tri {
	l := v.items()
	if l < n.minItems || (n.maxItems >= 0 && l > n.maxItems) {
		return no
	}
	r := yes
	for i := range l {
		switch {
		case i < len(n.prefix):
			r = and(r, f.at(n.prefix[i], v.item(i)))
		case n.items != nil:
			r = and(r, f.at(n.items, v.item(i)))
		default:
			return r
		}
		if r == no {
			return no
		}
	}
	return r
}

func (f *fastCheck) string(n *fnode, v fval) tri {
	if n.minLen <= 0 && n.maxLen < 0 && n.pattern == nil {
		return yes
	}
	s := v.text()
	if n.minLen > 0 || n.maxLen >= 0 {
		l := utf8.RuneCountInString(s)
		if l < n.minLen || (n.maxLen >= 0 && l > n.maxLen) {
			return no
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		return no
	}
	return yes
}

func typeBit(v any) uint8 {
	switch v.(type) {
	case nil:
		return tNull
	case bool:
		return tBool
	case json.Number:
		return tNumber
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	}
	return 0
}

// isInteger decides as jsonschema does (big.Rat of the number's text is
// an integer). A number in plain integer notation is one; a fraction or an
// exponent goes through big.Rat, unless the exponent is long enough to
// make that expensive (then unsure: jsonschema decides).
func isInteger(n json.Number) tri {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		return yes
	}
	r, ok := rat(s)
	if !ok {
		return unsure
	}
	if r.IsInt() {
		return yes
	}
	return no
}

// rat is big.Rat's reading of a JSON number, as jsonschema reads it; false
// when the exponent has more than 4 digits.
func rat(s string) (*big.Rat, bool) {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e := strings.TrimLeft(s[i+1:], "+-")
		if len(e) > 4 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func numberBounds(n *fnode, v json.Number) tri {
	r, ok := rat(string(v))
	if !ok {
		return unsure
	}
	if (n.minimum != nil && r.Cmp(n.minimum) < 0) ||
		(n.maximum != nil && r.Cmp(n.maximum) > 0) ||
		(n.exMinimum != nil && r.Cmp(n.exMinimum) <= 0) ||
		(n.exMaximum != nil && r.Cmp(n.exMaximum) >= 0) {
		return no
	}
	return yes
}

// equal is jsonschema's equality for const and enum, for the values fast
// compares: strings, booleans, null and numbers (by value, as big.Rat
// reads them: 1, 1.0 and 1e0 are equal); values of different JSON types
// are unequal; two objects or two arrays are unsure.
func equal(v, c any) tri {
	tv, tc := typeBit(v), typeBit(c)
	if tv == 0 || tc == 0 {
		return unsure
	}
	if tv != tc {
		return no
	}
	switch v := v.(type) {
	case nil:
		return yes
	case bool:
		if v == c.(bool) {
			return yes
		}
		return no
	case string:
		if v == c.(string) {
			return yes
		}
		return no
	case json.Number:
		a, ok1 := rat(string(v))
		b, ok2 := rat(string(c.(json.Number)))
		switch {
		case !ok1 || !ok2:
			return unsure
		case a.Cmp(b) == 0:
			return yes
		}
		return no
	}
	return unsure
}
