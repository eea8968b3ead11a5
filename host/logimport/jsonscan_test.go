package logimport

import "testing"

func TestMember(t *testing.T) {
	for obj, want := range map[string]string{
		`{"x":1,"sessionUpdate":"plan"}`:                  `"plan"`,
		`{"sessionUpdate":{"a":[1]},"x":2}`:               `{"a":[1]}`,
		`{"x":{"sessionUpdate":"nested"}}`:                ``,
		`{"x":1,"sessionUpdate":"a","sessionUpdate":"b"}`: `"a"`,
		`not json`: ``,
	} {
		if got := string(member([]byte(obj), "sessionUpdate")); got != want {
			t.Errorf("member(%s) = %q, want %q", obj, got, want)
		}
	}
}
