package filekind

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Kind is what a file holds.
type Kind int

const (
	// Unknown: none of the kinds below (not JSON Lines, or JSON of another shape).
	Unknown Kind = iota
	// Empty: no bytes at all.
	Empty
	// Wire: an acptap wire log (header format "acptap-wire").
	Wire
	// ASR: an ASR stream (header type "header" with "asr").
	ASR
	// AEP: AEP events (members "aep" and "type").
	AEP
	// ACPLog: a log of ACP JSON-RPC frames (member "jsonrpc"), or of a
	// trace that wraps them; `acptap convert --from acp-v1-log` reads it.
	ACPLog
	// HostLog: acptap's own log (hclog JSON: "@level").
	HostLog
	// Gzip: gzip-compressed bytes (convert reads them).
	Gzip
)

// String names the kind as a sentence does: "a wire log".
func (k Kind) String() string {
	switch k {
	case Empty:
		return "an empty file"
	case Wire:
		return "a wire log"
	case ASR:
		return "an ASR stream"
	case AEP:
		return "a file of AEP events"
	case ACPLog:
		return "a log of ACP JSON-RPC frames"
	case HostLog:
		return "acptap's own log"
	case Gzip:
		return "gzip-compressed"
	}
	return "not a file acptap knows"
}

// maxSniff bounds the bytes read to tell the kind: a first line longer than
// this is judged by its start.
const maxSniff = 1 << 20

// Sniff tells the kind of what r holds from its first line.
func Sniff(r io.Reader) Kind {
	br := bufio.NewReaderSize(io.LimitReader(r, maxSniff), 64<<10)
	head, _ := br.Peek(2)
	if len(head) == 0 {
		return Empty
	}
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		return Gzip
	}
	line, _ := br.ReadBytes('\n')
	return sniffLine(bytes.TrimSpace(line))
}

func sniffLine(line []byte) Kind {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		var arr []json.RawMessage
		if json.Unmarshal(line, &arr) == nil && len(arr) > 0 && sniffLine(arr[0]) == ACPLog {
			return ACPLog // a JSON-RPC batch
		}
		return Unknown
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(m[k], &s)
		return s
	}
	switch {
	case str("format") == "acptap-wire":
		return Wire
	case str("type") == "header" && m["asr"] != nil:
		return ASR
	case m["aep"] != nil && m["type"] != nil:
		return AEP
	case m["jsonrpc"] != nil:
		return ACPLog
	case m["@level"] != nil:
		return HostLog
	}
	// A trace that wraps frames: {"dir"…, "line"|"message"|"frame": …}.
	for _, k := range []string{"line", "message", "frame", "msg", "data"} {
		if raw, ok := m[k]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				raw = []byte(s)
			}
			if sniffLine(bytes.TrimSpace(raw)) == ACPLog {
				return ACPLog
			}
		}
	}
	return Unknown
}

// SniffFile tells the kind of the file at path.
func SniffFile(path string) (Kind, error) {
	f, err := os.Open(path)
	if err != nil {
		return Unknown, err
	}
	defer f.Close()
	return Sniff(f), nil
}

// Readers says which commands read a kind, for the hint of Wrong.
func Readers(k Kind, path string) string {
	q := shellQuote(path)
	switch k {
	case Wire:
		return "try `acptap show " + q + "` (its frames) or `acptap rebuild " + q + "`"
	case ASR:
		return "try `acptap show " + q + "`, `acptap validate " + q + "` or `acptap replay " + q + "`"
	case AEP:
		return "AEP events are JSON Lines to read as they are; `acptap sessions` lists the recorded sessions"
	case ACPLog, Gzip:
		return "try `acptap convert --from acp-v1-log " + q + "`"
	case HostLog:
		return "it is JSON Lines to read as it is"
	}
	return "acptap reads wire logs, ASR streams and logs of ACP frames"
}

// Wrong is the one-line error for path of kind k given where want was
// expected: "x.jsonl is a wire log, not an ASR stream; try …".
func Wrong(path string, k Kind, want Kind) error {
	return fmt.Errorf("%s is %s, not %s; %s", path, k, want, Readers(k, path))
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
