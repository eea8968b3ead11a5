package aep

import "fmt"

// Level is a capture level (AEP-0001 §8.2), ordered none < metadata <
// redacted < full.
type Level uint8

const (
	// None: envelope only, no data.
	None Level = iota
	// Metadata: names, ids, counts, durations, statuses; no free text. The
	// default of the envelope's capture attribute.
	Metadata
	// Redacted: free text that passed the AEP-0003 §9.4 redaction pipeline
	// (a provenance claim).
	Redacted
	// Full: verbatim content.
	Full
)

var levelNames = [...]string{"none", "metadata", "redacted", "full"}

// String returns the wire spelling.
func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", l)
}

// ParseLevel parses a wire spelling.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("capture level %q is not one of none, metadata, redacted, full", s)
}

// MarshalText implements encoding.TextMarshaler.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Severities in order (AEP-0001 §8.1).
var Severities = []string{"debug", "info", "notice", "warning", "error", "critical"}

// SeverityRank orders severities: debug 0 … critical 5; an unknown or empty
// severity ranks as the default, info.
func SeverityRank(s string) int {
	for i, n := range Severities {
		if n == s {
			return i
		}
	}
	return 1
}
