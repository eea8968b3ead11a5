package wire

import "github.com/acptap/acptap/sdk"

// EncodeEntry returns e as its wire log line (with LF), its seq as given
// and a client-to-agent line scrubbed as the Writer scrubs it. Copies of a
// wire log (a rebuild importing one into the store) use it to re-encode an
// entry that scrubbing changes.
func EncodeEntry(e Entry) ([]byte, error) {
	if e.Type == TypeFrame && e.Dir == sdk.C2A {
		e.Line, _ = Scrub(e.Line)
	}
	return appendEntry(nil, &e)
}
