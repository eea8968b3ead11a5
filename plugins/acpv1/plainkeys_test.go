package acpv1

import (
	"strconv"
	"testing"

	"github.com/acptap/acptap/internal/jsonscan"
)

// TestPlainKeys: plainKeys takes an object's names as rawString writes
// them only when each is printable ASCII without a quote or backslash, for
// every name a tape holds; names with an escape or a control character are
// refused by the tape already.
func TestPlainKeys(t *testing.T) {
	names := []string{`a`, `sessionUpdate`, `_meta`, `org.acptap/x`, ` sp `, `~`, "\x7f", "é", "a\x7fb", "\xff",
		`a\"b`, `a\\b`, `\u0041`, "tab\there", "nl\x01", "😀", "x\u2028"}
	for _, name := range names {
		for _, text := range []string{`{"` + name + `":1}`, `{"k":{"` + name + `":[]},"z":2}`, `{"` + name + `":{"k":1}}`} {
			var tp jsonscan.Tape
			if !tp.Parse([]byte(text)) {
				continue // refused: the fast path is not taken
			}
			root := tp.Root()
			objs := []jsonscan.Ent{root}
			for _, m := range tp.Entries(root) {
				if tp.B[m.V0] == '{' {
					objs = append(objs, m)
				}
			}
			want := true
			for _, o := range objs {
				for _, m := range tp.Entries(o) {
					k := string(tp.Key(m))
					if strconv.Quote(k) != `"`+k+`"` || k != strconv.QuoteToASCII(k)[1:len(k)+1] {
						want = false
					}
				}
			}
			if got := plainKeys(&tp, objs...); got != want {
				t.Errorf("plainKeys of %q = %v, want %v", text, got, want)
			}
		}
	}
}
