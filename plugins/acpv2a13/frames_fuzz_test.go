package acpv2a13

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
)

// FuzzAlpha13Frames feeds the plugin's frame handling arbitrary lines after
// an alpha.13 opening: each input line is one wire line, its direction
// chosen by its first byte ('>' client → agent, anything else agent →
// client), the rest verbatim. The seeds are every fixture's lines, so the
// fuzzer mutates the draft's real shapes (set_title, cancels, archive,
// status, background, sizes, message ids). The plugin must never fail or
// report an internal error, and every stream must pass asrcheck.Validate.
func FuzzAlpha13Frames(f *testing.F) {
	for _, name := range sortedNames(fixtures) {
		var b strings.Builder
		for _, l := range strings.Split(strings.TrimPrefix(fixtures[name], opening), "\n") {
			dir, rest, ok := strings.Cut(l, " ")
			if !ok {
				continue
			}
			if dir == "c2a" {
				b.WriteByte('>')
			} else {
				b.WriteByte('<')
			}
			b.WriteString(rest + "\n")
		}
		f.Add([]byte(b.String()))
	}
	f.Add([]byte(">{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/archive\",\"params\":{\"sessionId\":7}}\n<{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		frames := mappertest.ParseFixture(t, base, opening)
		b := pluginwire.NewFrameBuilder()
		// Re-join the opening so that responses find their requests.
		var all []sdk.Frame
		for _, fr := range frames {
			all = b.Line(all, fr.Seq, fr.Dir, fr.At, fr.Data)
		}
		seq := uint64(len(frames))
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			seq++
			dir := sdk.A2C
			if line[0] == '>' {
				dir = sdk.C2A
			}
			all = b.Line(all, seq, dir, base, append([]byte(nil), line[1:]...))
		}
		outs, err := mappertest.RunErr(t.Context(), New(), live, all, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkStreams(t, outs)
	})
}
