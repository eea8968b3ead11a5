package acpasr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestCompactSameAsEncodingJSON: compact gives what encoding/json's Compact gives (the value
// as it is when it does not compact), for values already compact, with whitespace, and
// invalid, and never hands back its argument's memory. compact is what each _meta value goes
// through before it is folded key by key into the record (metaOf, ASR-708).
func TestCompactSameAsEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"a":1}`, `{"a": 1}`, ` {"a":1}`, `{"a":1} `, `[1,2,{"b":"x y"}]`, `"a b"`, `"\u00e9\n"`,
		`{"k":{"l":[true,false,null,-1.5e3]}}`, "{\n\t\"a\" : [ 1 , 2 ]\n}", `{"a":}`, `{"a":1`, ``, `nul`,
		`{"a":"\"}"}`, `{"a":1}{"b":2}`, `1 2`,
	} {
		var want bytes.Buffer
		wantV := []byte(in)
		if json.Compact(&want, []byte(in)) == nil {
			wantV = want.Bytes()
		}
		src := []byte(in)
		got := compact(src)
		if !bytes.Equal(got, wantV) {
			t.Errorf("compact(%q) = %q, want %q", in, got, wantV)
		}
		if len(src) > 0 && len(got) > 0 && &got[0] == &src[0] && json.Valid(src) {
			t.Errorf("compact(%q) returned its argument's memory", in)
		}
	}
}
