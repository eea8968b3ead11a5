package wire

import (
	"bytes"

	"github.com/acptap/acptap/sdk"
)

var mcpServersKey = []byte("mcpServers")

// ScrubLine returns a wire-log entry line (with its LF, if any) as the recorder would
// have written it (ASR-712): a client-to-agent frame the scrubber changes is encoded
// again (EncodeEntry scrubs it); a line that names mcpServers but does not parse is cut
// right after the name. Every other line is returned as it is. rebuild imports a log
// from outside the store with it, and the wire-log scan uses it to tell whether such an
// import may copy the file whole.
func ScrubLine(line []byte) []byte {
	if !bytes.Contains(line, mcpServersKey) {
		return line
	}
	body, hasLF := bytes.CutSuffix(line, []byte("\n"))
	cut := func() []byte {
		i := bytes.Index(line, mcpServersKey) + len(mcpServersKey)
		if hasLF {
			return append(line[:i:i], '\n')
		}
		return line[:i:i]
	}
	e, err := ParseEntry(body)
	if err != nil {
		return cut()
	}
	if e.Type != TypeFrame || e.Dir != sdk.C2A {
		return line
	}
	if _, changed := Scrub(e.Line); !changed {
		return line
	}
	enc, err := EncodeEntry(e)
	if err != nil {
		return cut()
	}
	return enc
}
