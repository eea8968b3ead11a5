package acpschema

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// allVersions are the embedded schemas, each version once (the tests that go over them all).
var allVersions = []Version{V1, V1Unstable, V2, V2Alpha13}

// TestSchemasMatchMetaschema: every embedded schema is a valid JSON Schema
// (its metaschema's check, which compileSchema leaves out at run time,
// passes), and a schema compiled under a name that is checked does get the
// check (an invalid one is refused).
func TestSchemasMatchMetaschema(t *testing.T) {
	for _, v := range allVersions {
		if _, err := compileSchemaAt(v, metaURL(v)); err != nil {
			t.Errorf("v%d against its metaschema: %v", v, err)
		}
	}
	if err := compileDoc("https://acptap.invalid/bad.json", `{"type":"object","title":5}`); err == nil {
		t.Error("a schema whose title is a number compiled under a checked name")
	}
}

// TestCompileSkipsMetaschema: the run-time compile names its schemas so
// that jsonschema does not check them against the metaschema (a schema the
// check refuses compiles under such a name). Fails with schemaURL under
// another host.
func TestCompileSkipsMetaschema(t *testing.T) {
	for _, v := range allVersions {
		u := schemaURL(v)
		name := u[:strings.LastIndexByte(u, '/')+1] + "bad.json"
		if err := compileDoc(name, `{"type":"object","title":5}`); err != nil {
			t.Errorf("v%d: a schema named as %s was checked against the metaschema: %v", v, u, err)
		}
	}
}

func compileDoc(url, doc string) error {
	d, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, d); err != nil {
		return err
	}
	_, err = c.Compile(url)
	return err
}

// TestSchemaNameInNoMessage: the schemas compiled under the run-time names
// and under the names the metaschema check used give the same verdicts and
// the same messages on every fixture and tricky frame, with and without the
// fast path, and bind the same methods and update kinds.
func TestSchemaNameInNoMessage(t *testing.T) {
	frames := corpus(t)
	for _, l := range tricky {
		frames = append(frames, frame{from: -1, line: []byte(l)})
	}
	for _, v := range allVersions {
		run, err := compileSchemaAt(v, schemaURL(v))
		if err != nil {
			t.Fatal(err)
		}
		checked, err := compileSchemaAt(v, metaURL(v))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(slices.Sorted(maps.Keys(run.calls)), slices.Sorted(maps.Keys(checked.calls))) ||
			!slices.Equal(slices.Sorted(maps.Keys(run.updates)), slices.Sorted(maps.Keys(checked.updates))) {
			t.Fatalf("v%d: calls or updates differ", v)
		}
		for _, slow := range []bool{false, true} {
			a, b := checkerOf(run), checkerOf(checked)
			a.slow, b.slow = slow, slow
			bad := 0
			for _, f := range frames {
				for _, from := range f.senders() {
					ea, eb := a.Check(from, f.line), b.Check(from, f.line)
					if fmt.Sprint(ea) != fmt.Sprint(eb) {
						t.Fatalf("v%d slow=%v %s %s:\n%v\n%v", v, slow, from, f.line, ea, eb)
					}
					if ea != nil {
						bad++
						if strings.Contains(ea.Error(), "acptap.invalid") {
							t.Fatalf("v%d: a message names the schema: %v", v, ea)
						}
					}
				}
			}
			if bad == 0 {
				t.Fatalf("v%d: no frame failed its check: the comparison compared nothing", v)
			}
		}
	}
}

func checkerOf(cs *compiledSchema) *Checker {
	return &Checker{schema: cs, pending: [2]map[string]string{{}, {}}, counts: map[countKey]*int{}}
}

// TestReadMetaSameAsUnmarshal: readMeta reads, from the document compiled,
// what the json.Unmarshal of each schema into the structs it replaced read.
func TestReadMetaSameAsUnmarshal(t *testing.T) {
	for _, v := range allVersions {
		raw := SchemaBytes(v)
		var meta struct {
			AnyOf []struct {
				Title string `json:"title"`
			} `json:"anyOf"`
			Defs map[string]struct {
				Method string `json:"x-method"`
				Side   string `json:"x-side"`
			} `json:"$defs"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			t.Fatal(err)
		}
		var upd struct {
			Defs struct {
				SessionUpdate struct {
					AnyOf []struct {
						Properties struct {
							SessionUpdate struct {
								Const *string `json:"const"`
							} `json:"sessionUpdate"`
						} `json:"properties"`
					} `json:"anyOf"`
				} `json:"SessionUpdate"`
				Notification *struct {
					Method string `json:"x-method"`
				} `json:"UpdateSessionNotification"`
			} `json:"$defs"`
		}
		if err := json.Unmarshal(raw, &upd); err != nil {
			t.Fatal(err)
		}
		var want schemaMeta
		for _, a := range meta.AnyOf {
			want.titles = append(want.titles, a.Title)
		}
		for name, d := range meta.Defs {
			if d.Method != "" {
				want.defs = append(want.defs, methodDef{name, d.Method, d.Side})
			}
		}
		slices.SortFunc(want.defs, func(a, b methodDef) int { return strings.Compare(a.name, b.name) })
		if n := upd.Defs.Notification; n != nil && n.Method == "session/update" {
			want.hasUpdates = true
			for _, b := range upd.Defs.SessionUpdate.AnyOf {
				c := ""
				if p := b.Properties.SessionUpdate.Const; p != nil {
					if *p == "" {
						t.Fatalf("v%d: an update kind is the empty string", v)
					}
					c = *p
				}
				want.updates = append(want.updates, c)
			}
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		got := readMeta(doc)
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Errorf("v%d:\nreadMeta  %+v\nUnmarshal %+v", v, got, want)
		}
		if len(want.defs) < 10 || len(want.titles) < 2 {
			t.Errorf("v%d: %d defs, %d titles", v, len(want.defs), len(want.titles))
		}
	}
}

// TestSchemaDocSameAsUnmarshal: compileSchemaAt's one-pass decode of each
// schema takes it (no fallback) and gives what jsonschema.UnmarshalJSON
// gives.
func TestSchemaDocSameAsUnmarshal(t *testing.T) {
	for _, v := range allVersions {
		raw := SchemaBytes(v)
		got, ok := decodeJSON(raw)
		if !ok {
			t.Fatalf("v%d: decodeJSON refused the schema", v)
		}
		want, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("v%d: decoded differently", v)
		}
	}
}
