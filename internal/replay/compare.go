package replay

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// Difference is one way the recording of a replay differs from its source
// that the loss report does not excuse.
type Difference struct {
	Entity string `json:"entity"`
	Field  string `json:"field,omitempty"`
	Want   string `json:"want,omitempty"`
	Got    string `json:"got,omitempty"`
	Why    string `json:"why"`
}

func (d Difference) String() string {
	s := d.Entity
	if d.Field != "" {
		s += " " + d.Field
	}
	s += ": " + d.Why
	if d.Want != "" || d.Got != "" {
		s += fmt.Sprintf("\n    want %s\n    got  %s", d.Want, d.Got)
	}
	return s
}

// Result is the outcome of a round trip.
type Result struct {
	// Entities is the number of entities compared.
	Entities int
	// Excused lists what the replay left out under a category the loss
	// report names.
	Excused []Drop
	// Differences is everything else; the round trip holds when it is empty.
	Differences []Difference
}

// Compare checks ASR-732: the context view of recorded (S′, the recording
// of the replay of source) has the same entities as source's, in the same
// order, with the same IDs, roles, content blocks, tool names, inputs,
// mapped statuses, display content and file change operations, except for
// what the loss report's categories cover.
func Compare(source, recorded *Stream, report LossReport) Result {
	want, drops := Normalize(source)
	got, _ := Normalize(recorded)
	return compareViews(want, drops, got, report.Names())
}

// compareViews compares normalized views: want (with what the replay must
// leave out, drops) and got, allowing the drops whose category is named.
func compareViews(want []Entity, drops []Drop, got []Entity, names map[string]bool) Result {
	var res Result
	res.Entities = len(want)
	for _, d := range drops {
		if names[d.Category] {
			res.Excused = append(res.Excused, d)
			continue
		}
		res.Differences = append(res.Differences, Difference{Entity: d.Key,
			Why: fmt.Sprintf("the replay leaves out %s, but the loss report does not name %q", d.What, d.Category)})
	}
	gotAt := map[string]int{}
	for i, e := range got {
		if _, dup := gotAt[e.Key]; dup {
			res.Differences = append(res.Differences, Difference{Entity: e.Key, Why: "appears twice in the recording of the replay"})
			continue
		}
		gotAt[e.Key] = i
	}
	wantKeys := map[string]bool{}
	var order []int // positions in got of the wanted entities, in want order
	for _, w := range want {
		if wantKeys[w.Key] {
			res.Differences = append(res.Differences, Difference{Entity: w.Key,
				Why: "two entities of the source are replayed under this ID (a stored ID equals one ASR-727 derives)"})
			continue
		}
		wantKeys[w.Key] = true
		i, ok := gotAt[w.Key]
		if !ok {
			res.Differences = append(res.Differences, Difference{Entity: w.Key, Why: "missing from the recording of the replay"})
			continue
		}
		order = append(order, i)
		res.Differences = append(res.Differences, compareFields(w, got[i])...)
	}
	for _, g := range got {
		if !wantKeys[g.Key] {
			res.Differences = append(res.Differences, Difference{Entity: g.Key, Why: "in the recording of the replay but not in the source's context view"})
		}
	}
	if !slices.IsSorted(order) {
		for k := 1; k < len(order); k++ {
			if order[k] < order[k-1] {
				res.Differences = append(res.Differences, Difference{Entity: got[order[k]].Key,
					Why: fmt.Sprintf("out of order: recorded before %s, which comes first in the source", got[order[k-1]].Key)})
				break
			}
		}
	}
	return res
}

func compareFields(want, got Entity) []Difference {
	var out []Difference
	keys := map[string]bool{}
	for k := range want.Fields {
		keys[k] = true
	}
	for k := range got.Fields {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		w, g := want.Fields[k], got.Fields[k]
		if !reflect.DeepEqual(normal(w), normal(g)) {
			out = append(out, Difference{Entity: want.Key, Field: k, Want: render(w), Got: render(g), Why: "differs"})
		}
	}
	return out
}

// normal makes empty lists and nil compare equal, recursively.
func normal(v any) any {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, len(x))
		for i := range x {
			out[i] = normal(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normal(e)
		}
		return out
	}
	return v
}

func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
