package pipeline

import (
	"bytes"
	"reflect"
	"testing"
)

func TestSessionTrackerFindsObservedSessions(t *testing.T) {
	tr := newSessionTracker()
	steps := []struct {
		line string
		want []string
	}{
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`, nil},
		{`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`, []string{"s1"}},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}`, nil},
		{`{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":"s0"}}`, []string{"s0"}},
		{`{"jsonrpc":"2.0","id":3,"result":{"sessions":[{"sessionId":"listed"}]}}`, nil},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"child","update":{"sessionId":"s1"}}}`, []string{"child"}},
		{`[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"b1"}},{"jsonrpc":"2.0","method":"x","params":{"sessionId":"b2"}}]`, []string{"b1", "b2"}},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\u0031x"}}`, []string{"s1x"}},
		{`not json "sessionId":"zzz"`, nil},
		{`{"params":{"sessionId":7}}`, nil},
	}
	for i, s := range steps {
		if got := tr.scan([]byte(s.line)); !reflect.DeepEqual(got, s.want) {
			t.Errorf("step %d %s: got %v, want %v", i, s.line, got, s.want)
		}
	}
}

// indexSessionKey finds what bytes.Index finds, from every start.
func TestIndexSessionKey(t *testing.T) {
	lines := []string{
		``, `"sessionId"`, `x"sessionId"`, `{"a":"Id\"","sessionId":"s"}`, `Id"Id""sessionId"`,
		`{"sessionId":"a","params":{"sessionId":"b"}}`, `"sessionI"sessionId"d"`, `"session"Id"`,
		`{"text":"\"sessionId\" Id\" I"}`, `sessionId"`, `"sessionId`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"messageId":"m","toolCallId":"t","content":{"text":"I'll read it, I said: Id\" and \"sessionId\""}}}}`,
		`IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII"sessionId"II`, `"sessionIdI`, `"sessionI"`,
	}
	for _, l := range lines {
		for from := 0; from <= len(l); from++ {
			want := bytes.Index([]byte(l[from:]), sessionKey)
			if want >= 0 {
				want += from
			}
			if got := indexSessionKey([]byte(l), from); got != want {
				t.Errorf("indexSessionKey(%q, %d) = %d, want %d", l, from, got, want)
			}
		}
	}
}

// trimBlanks trims what bytes.TrimLeft(b, " \t") trims, and quickID reads a known session's
// id after blanks (the fast path) as the tracker's full parse would.
func TestTrimBlanks(t *testing.T) {
	for _, s := range []string{"", " ", "\t", " \t x", "x ", "\t\t:", "\n x", "\r\"", "  \"a\"", "\u00a0x"} {
		if got, want := trimBlanks([]byte(s)), bytes.TrimLeft([]byte(s), " \t"); !bytes.Equal(got, want) || len(got) != len(want) {
			t.Errorf("trimBlanks(%q) = %q, want %q", s, got, want)
		}
	}
	for _, l := range []string{`"sessionId" : "s1"}`, "\"sessionId\"\t:\t\"s1\"", `"sessionId":"s1"`} {
		if id, ok := quickID([]byte(l)); !ok || string(id) != "s1" {
			t.Errorf("quickID(%q) = %q, %v, want s1", l, id, ok)
		}
	}
	if _, ok := quickID([]byte("\"sessionId\"\n:\"s1\"")); ok {
		t.Errorf("quickID read past an LF, which the tracker's full parse takes")
	}
}
