package aep

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk/aep"
)

// TestEncodeEventMatchesMarshal: encodeEvent writes what json.Marshal
// writes, bytes and errors, for events whose strings hold what the HTML
// escaping, the canonical writer and the encoder treat specially.
func TestEncodeEventMatchesMarshal(t *testing.T) {
	parts := []string{"a", " ", "\"", "\\", "\n", "\x00", "<", ">", "&", "é", "…", "\u2028", "\u2029", `\u2028`, "\xff", "🙂", "token"}
	r := rand.New(rand.NewPCG(5, 6))
	text := func() string {
		var sb strings.Builder
		for range r.IntN(6) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		return sb.String()
	}
	for i := range 5000 {
		ev := aep.Event{ID: "01J" + text(), Type: "x.acp.agent.message.chunk", Time: base, Source: "aep://h/" + text(),
			Agent: Agent, Session: text(), Run: text(), Seq: aep.Int(int64(i)), Epoch: aep.Int(1), Severity: "debug",
			Capture: aep.Redacted, Subject: text(), Traceparent: text()}
		switch i % 4 {
		case 0:
			ev.Data = obj{"delta": text(), text(): []any{text(), jsonNumber("1.5"), nil, true}}
		case 1:
			ev.Data = obj{"n": jsonNumber("x")} // an error
		case 2:
			ev.Data = obj{}
		}
		want, werr := json.Marshal(&ev)
		got, gerr := encodeEvent(&ev)
		if !bytes.Equal(got, want) || (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("encodeEvent = %s, %v; json.Marshal = %s, %v", got, gerr, want, werr)
		}
	}
}

// TestIDOfMatchesDecode: idOf gives idText of the decoded id.
func TestIDOfMatchesDecode(t *testing.T) {
	ids := []string{`0`, `7`, `00`, `01`, `-1`, `-0`, `1.0`, `1e2`, `123456789012345`, `1234567890123456`, `99999999999999999999`,
		`""`, `"a"`, `"a b~"`, `"a\"b"`, `"a\\b"`, `"\u0041"`, `"é"`, "\"\x7f\"", `"<&>"`, `null`, `true`, `[1]`, `{"a":1}`, `"x"`, ` 7`, `7 `}
	r := rand.New(rand.NewPCG(8, 9))
	for range 2000 {
		b := make([]byte, 1+r.IntN(17))
		for i := range b {
			b[i] = "0123456789"[r.IntN(10)]
		}
		ids = append(ids, string(b), `"`+string(b)+`"`)
	}
	for _, id := range ids {
		if !json.Valid([]byte(id)) {
			continue
		}
		v, _ := aep.Decode([]byte(id))
		if got, want := idOf([]byte(id)), idText(v); got != want {
			t.Errorf("idOf(%s) = %s, want %s", id, got, want)
		}
	}
}
