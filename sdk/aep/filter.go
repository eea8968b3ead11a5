package aep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidFilter is wrapped by every error ParseFilter returns: the
// AEP-0003 §6.5 invalid-filter refusal.
var ErrInvalidFilter = errors.New("invalid-filter")

// filterable are the core attributes a filter may name (AEP-0003 §6.2
// rule 1); coreNames are all of them, so an extension key never collides.
var (
	filterable = []string{"id", "type", "subject", "source", "agent", "session", "run", "step", "epoch", "cause", "severity", "capture"}
	coreNames  = append([]string{"aep", "time", "seq", "traceparent", "data"}, filterable...)
	extName    = regexp.MustCompile(`^[a-z0-9]{1,20}$`)
)

// Filter is a parsed attr-match filter (AEP-0003 §6): a conjunction of
// predicates on envelope attributes. The zero Filter (and {}) matches
// every event.
type Filter struct {
	preds []predicate
}

type predicate struct {
	key string
	// any-of scalars: string, int64 or bool
	values []any
	// type patterns "p.*", as the prefix "p."
	prefixes []string
	// severity range, inclusive ranks; -1 when unbounded
	gte, lte int
	isRange  bool
}

// ParseFilter parses and checks an attr-match filter. It fails closed: an
// unknown or unfilterable key, a malformed predicate, an empty any-of
// array, a bare "*" or a glob on another key than type is an error
// wrapping ErrInvalidFilter, never a filter that matches more.
func ParseFilter(raw []byte) (*Filter, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return &Filter{}, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: a filter is one JSON object", ErrInvalidFilter)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: a filter is one JSON object", ErrInvalidFilter)
	}
	f := &Filter{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		p, err := parsePredicate(k, m[k])
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %s", ErrInvalidFilter, k, err)
		}
		f.preds = append(f.preds, p)
	}
	return f, nil
}

func parsePredicate(key string, v any) (predicate, error) {
	p := predicate{key: key, gte: -1, lte: -1}
	switch {
	case slices.Contains(filterable, key):
	case slices.Contains(coreNames, key):
		return p, errors.New("not filterable (time, seq, aep, traceparent and data never are)")
	case !extName.MatchString(key):
		return p, errors.New("neither a filterable attribute nor a legal extension attribute name")
	}
	if obj, ok := v.(map[string]any); ok {
		if key != "severity" {
			return p, errors.New("an object predicate is a severity range, on severity only")
		}
		if len(obj) == 0 {
			return p, errors.New("an empty severity range")
		}
		p.isRange = true
		for op, lv := range obj {
			s, ok := lv.(string)
			rank := slices.Index(Severities, s)
			if !ok || rank < 0 {
				return p, fmt.Errorf("%s: %v is not a severity", op, lv)
			}
			switch op {
			case "gte":
				p.gte = rank
			case "lte":
				p.lte = rank
			default:
				return p, fmt.Errorf("%q is not a severity operator (gte, lte)", op)
			}
		}
		return p, nil
	}
	items := []any{v}
	if arr, ok := v.([]any); ok {
		if len(arr) == 0 {
			return p, errors.New("an empty any-of array")
		}
		items = arr
	}
	for _, it := range items {
		val, err := scalar(key, it)
		if err != nil {
			return p, err
		}
		if s, ok := val.(string); ok && key == "type" && strings.HasSuffix(s, ".*") {
			p.prefixes = append(p.prefixes, strings.TrimSuffix(s, "*"))
			continue
		}
		p.values = append(p.values, val)
	}
	return p, nil
}

// scalar checks one equality operand: a string, an integer or a boolean.
func scalar(key string, v any) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s is not an integer", x)
		}
		return n, nil
	case string:
		switch key {
		case "type":
			if x == "" || x == "*" || strings.Contains(strings.TrimSuffix(x, ".*"), "*") || x == ".*" {
				return nil, fmt.Errorf("%q is neither a type nor a type pattern p.*", x)
			}
		case "severity":
			if !slices.Contains(Severities, x) {
				return nil, fmt.Errorf("%q is not a severity", x)
			}
		case "capture":
			if _, err := ParseLevel(x); err != nil {
				return nil, err
			}
		default:
			if strings.HasSuffix(x, "*") {
				return nil, fmt.Errorf("%q: patterns apply to type only", x)
			}
		}
		return x, nil
	}
	return nil, fmt.Errorf("%v is not a string, integer or boolean", v)
}

// Match reports whether an event, decoded with Decode (numbers as
// json.Number), passes every predicate. An absent attribute never
// matches, except severity, capture and epoch, whose defaults (info,
// metadata, 0) apply first.
func (f *Filter) Match(ev map[string]any) bool {
	if f == nil {
		return true
	}
	for _, p := range f.preds {
		if !p.match(ev) {
			return false
		}
	}
	return true
}

// Empty reports whether the filter has no predicate (matches everything).
func (f *Filter) Empty() bool { return f == nil || len(f.preds) == 0 }

func (p predicate) match(ev map[string]any) bool {
	v, ok := ev[p.key]
	if !ok {
		switch p.key {
		case "severity":
			v, ok = "info", true
		case "capture":
			v, ok = "metadata", true
		case "epoch":
			v, ok = json.Number("0"), true
		default:
			return false
		}
	}
	if p.isRange {
		s, _ := v.(string)
		r := slices.Index(Severities, s)
		return r >= 0 && (p.gte < 0 || r >= p.gte) && (p.lte < 0 || r <= p.lte)
	}
	if s, isStr := v.(string); isStr && p.key == "type" {
		for _, pre := range p.prefixes {
			if strings.HasPrefix(s, pre) {
				return true
			}
		}
	}
	for _, want := range p.values {
		if equalScalar(want, v) {
			return true
		}
	}
	return false
}

// equalScalar compares exactly, without coercion: a string only equals a
// string, an integer an integral JSON number, a boolean a boolean.
func equalScalar(want, got any) bool {
	switch w := want.(type) {
	case string:
		g, ok := got.(string)
		return ok && g == w
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case int64:
		switch g := got.(type) {
		case json.Number:
			n, err := strconv.ParseInt(string(g), 10, 64)
			return err == nil && n == w
		case float64:
			return g == float64(w)
		case int64:
			return g == w
		case int:
			return int64(g) == w
		}
	}
	return false
}
