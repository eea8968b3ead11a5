package mappertest

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// ParseFixture turns a text fixture into frames the way the host does
// (batches split, responses joined to requests by (direction, id)): one
// frame per line, seqs from 1, receipt times 1 ms apart from base; "#" lines
// and blank lines are skipped.
//
//	c2a <wire line>                  a client → agent line, verbatim
//	a2c <wire line>                  an agent → client line, verbatim
//	b64 <dir> <base64>               a line given in base64 (invalid UTF-8)
//	gap <dir> <frames> <bytes> <reason…>
//	session {"id":…,"connections":n,"prior":[<stream lines as JSON>]}
func ParseFixture(t testing.TB, base time.Time, text string) []sdk.Frame {
	t.Helper()
	b := pluginwire.NewFrameBuilder()
	var out []sdk.Frame
	seq := uint64(0)
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		seq++
		at := base.Add(time.Duration(seq-1) * time.Millisecond)
		word, rest, _ := strings.Cut(line, " ")
		switch word {
		case "c2a", "a2c":
			dir, _ := sdk.ParseDirection(word)
			out = b.Line(out, seq, dir, at, []byte(rest))
		case "b64":
			d, enc, _ := strings.Cut(rest, " ")
			dir, _ := sdk.ParseDirection(d)
			data, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				t.Fatalf("fixture line %d: %v", seq, err)
			}
			out = b.Line(out, seq, dir, at, data)
		case "gap":
			f := strings.SplitN(rest, " ", 4)
			if len(f) < 4 {
				t.Fatalf("fixture line %d: gap needs dir frames bytes reason", seq)
			}
			dir, _ := sdk.ParseDirection(f[0])
			n, _ := strconv.ParseUint(f[1], 10, 64)
			by, _ := strconv.ParseUint(f[2], 10, 64)
			out = b.Gap(out, seq, dir, at, sdk.Gap{Frames: n, Bytes: by, Reason: f[3]})
		case "session":
			var info struct {
				ID          string            `json:"id"`
				Connections int               `json:"connections"`
				Prior       []json.RawMessage `json:"prior"`
			}
			if err := json.Unmarshal([]byte(rest), &info); err != nil {
				t.Fatalf("fixture line %d: %v", seq, err)
			}
			si := sdk.SessionInfo{ID: info.ID, Connections: info.Connections}
			for _, l := range info.Prior {
				si.Prior = append(si.Prior, []byte(l))
			}
			out = b.Session(out, seq, sdk.A2C, at, si)
		default:
			t.Fatalf("fixture line %d: unknown word %q", seq, word)
		}
	}
	return out
}
