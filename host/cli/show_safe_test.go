package cli

import (
	"strings"
	"testing"
)

// hostileStream is a stream whose message text carries what a terminal
// acts on: an OSC 52 clipboard write, a screen clear, a CR that overwrites
// the line, a C1 CSI, a bidi override and a lone ESC.
const hostileStream = `{"type":"header","asr":"0.1","sessionId":"s1","createdAt":"2026-10-26T14:30:41.210Z","agent":{"name":"a","version":"1"},"producer":{"method":"recorder","name":"acptap","version":"0.1.0"}}
{"type":"message","seq":1,"id":"r1","ts":"2026-10-26T14:30:41.211Z","tsSource":"recorder","messageId":"u1","role":"user","origin":"prompt","content":[{"text":"hi\u001b]52;c;ZXZpbA==\u0007 \u001b[2J\rfake\u009b31m \u202egnp.exe \u001b","type":"text"}]}
`

// TestShowRendersControlsVisibly (issue 18, point 10): whatever the text
// holds, show writes no ESC, BEL, CR, C1 control or bidi override to the
// terminal, with or without colour; they appear as ^[, ^G, ^M, <U+009B>,
// <U+202E>. With colour the only escapes are the painter's SGR codes.
func TestShowRendersControlsVisibly(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	p := writeFile(t, "hostile.asr.jsonl", hostileStream)
	for _, args := range [][]string{{"show", "--no-color", p}, {"show", p}, {"show", "--color", p}} {
		code, out, errOut := runCLI(t, "", args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		colour := args[1] == "--color"
		for _, bad := range []string{"\a", "\r", "\u009b", "\u202e", "]52;"} {
			if bad == "]52;" {
				if strings.Contains(out, "\x1b]52;") {
					t.Errorf("%v: OSC 52 reaches the terminal: %q", args, out)
				}
				continue
			}
			if strings.Contains(out, bad) {
				t.Errorf("%v: %q reaches the terminal: %q", args, bad, out)
			}
		}
		for _, want := range []string{"hi^[]52;c;ZXZpbA==^G ^[[2J^Mfake<U+009B>31m <U+202E>gnp.exe ^["} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: missing %q in %q", args, want, out)
			}
		}
		esc := strings.Count(out, "\x1b")
		if !colour && esc != 0 {
			t.Errorf("%v: %d ESC bytes without colour: %q", args, esc, out)
		}
		if colour {
			sgr := strings.Count(out, "\x1b[")
			if esc == 0 || esc != sgr {
				t.Errorf("%v: %d ESC, %d of them SGR: %q", args, esc, sgr, out)
			}
		}
	}
}
