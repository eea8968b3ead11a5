package asr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/gofiles"
)

// lossConsts reads losses.go: every loss constant's name and value.
func lossConsts(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "losses.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s is not a string literal", n.Name)
				}
				v, _ := strconv.Unquote(lit.Value)
				out[n.Name] = v
			}
		}
	}
	return out
}

// distinctive are the loss values a grep can tell apart from other words:
// namespaced ones (a '/' or '.') and those with an underscore that are not
// also a record type's name ("workspace_state", "input_request" are).
func distinctive(consts map[string]string) map[string]string {
	types := map[string]bool{}
	for _, typ := range append(slices.Clone(OtherTypes), TypeMessage, TypeToolCall, TypeToolResult, TypeFileChange,
		TypePlan, TypeTerminal, TypeState, TypeCompaction, TypeUsageSummary, TypeSessionInfo, TypeConfigChange, TypeSubagent,
		TypeDeclaration, TypeInputRequest, TypePermission) {
		types[typ] = true
	}
	out := map[string]string{}
	for name, v := range consts {
		if strings.ContainsAny(v, "/.") || (strings.Contains(v, "_") && !types[v]) {
			out[v] = name
		}
	}
	return out
}

// TestLossLiteralsDefinedOnce fails when a loss category this package
// defines is written out as a string anywhere else in the module's code
// (tests excepted: they may spell what a stream must hold), so a second
// definition, or a typo of one, cannot come back. A vendor's own
// categories are not in losses.go and not checked.
func TestLossLiteralsDefinedOnce(t *testing.T) {
	consts := lossConsts(t)
	if len(consts) < 40 {
		t.Fatalf("read only %d loss constants from losses.go", len(consts))
	}
	seen := map[string]bool{}
	for _, v := range consts {
		if seen[v] {
			t.Errorf("losses.go defines %q twice", v)
		}
		seen[v] = true
	}
	want := distinctive(consts)
	checked, err := gofiles.Walk(filepath.Join("..", ".."), func(rel string, dir bool) bool { return rel == "sdk/asr/losses.go" },
		func(rel string, src []byte) error {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if v, err := strconv.Unquote(lit.Value); err == nil {
					if name, ok := want[v]; ok {
						t.Errorf("%s:%d: %q: use asr.%s", rel, fset.Position(lit.Pos()).Line, v, name)
					}
				}
				return true
			})
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files; the walk proves nothing", checked)
	}
}

// TestDistinctiveLosses: the check covers the categories a grep can find
// and leaves out the words that are also record types or plain words.
func TestDistinctiveLosses(t *testing.T) {
	d := distinctive(lossConsts(t))
	for _, v := range []string{LossToolStatus, LossCaptureGap, LossToolResultContent, LossMessageAuthor, LossRevisionHistory, LossTurnTriggers, LossV1TurnState} {
		if _, ok := d[v]; !ok {
			t.Errorf("%q is not checked", v)
		}
	}
	for _, v := range []string{LossInference, LossUsage, LossReasoning, LossWorkspace, LossInputRequest, LossGap, LossStateHistory} {
		if _, ok := d[v]; ok {
			t.Errorf("%q is checked, but is also a type or a plain word", v)
		}
	}
	if _, err := os.Stat("losses.go"); err != nil {
		t.Fatal(err)
	}
}
