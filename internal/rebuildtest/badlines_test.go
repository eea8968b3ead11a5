package rebuildtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRebuildBadLines (issue 18.4): a wire log with one bad line in the
// middle — bad JSON, a seq gap (a line removed), an unknown entry type —
// is rebuilt past it: stderr names file:line and how many entries were
// lost, the frames after the bad line are mapped (the stream goes on to
// the end of the log), the stream declares the gap and still validates,
// and the command exits 1. A torn tail is reported and the rest rebuilt
// as from the intact log, exit 0.
func TestRebuildBadLines(t *testing.T) {
	needBin(t)
	lv := recordV2(t)
	intactFile := copyFiles(t, lv.wires[:1])[0]
	intact := filepath.Join(t.TempDir(), "intact")
	mustRebuild(t, "--store", intact, intactFile)
	stream := filepath.Join("sessions", v2Parent, "stream.asr.jsonl")
	want := outputs(t, intact)
	lastSeq := maxFrameRef(want[stream])

	b, err := os.ReadFile(lv.wires[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty string after the last LF
	mid := len(lines) / 2
	for !bytes.Contains(lines[mid], []byte(`"type":"frame"`)) {
		mid++
	}
	line := mid + 1 // 1-based
	for _, tc := range []struct {
		name   string
		edit   func([][]byte) [][]byte
		report string // on stderr, after "<file>:"
	}{
		{"bad-json", func(l [][]byte) [][]byte {
			l[mid] = []byte(`{"type":"frame","seq":` + "\n")
			return l
		}, fmt.Sprintf(`%d: line skipped: unexpected end of JSON input`, line)},
		{"seq-gap", func(l [][]byte) [][]byte {
			return append(l[:mid:mid], l[mid+1:]...)
		}, fmt.Sprintf(`%d: seq %d follows seq %d: 1 entry missing; mapped as a gap`, line, line, line-2)},
		{"unknown-type", func(l [][]byte) [][]byte {
			l[mid] = bytes.Replace(l[mid], []byte(`"type":"frame"`), []byte(`"type":"mystery"`), 1)
			return l
		}, fmt.Sprintf(`%d: line skipped: unknown entry type "mystery"`, line)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := tc.edit(append([][]byte(nil), lines...))
			path := filepath.Join(t.TempDir(), filepath.Base(lv.wires[0]))
			writeFile(t, path, string(bytes.Join(ls, nil)))
			root := filepath.Join(t.TempDir(), "store")
			out, errOut, code := acptap(t, "rebuild", "--store", root, path)
			if code != 1 {
				t.Errorf("exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if !strings.Contains(errOut, path+":"+tc.report) {
				t.Errorf("stderr does not say %q:\n%s", path+":"+tc.report, errOut)
			}
			if !strings.Contains(out, "1 entry lost") {
				t.Errorf("the summary does not count the lost entry:\n%s", out)
			}
			got := outputs(t, root)
			if m := maxFrameRef(got[stream]); m != lastSeq {
				t.Errorf("the stream's last frame reference is seq %d, the intact rebuild's %d: mapping stopped", m, lastSeq)
			}
			if !bytes.Contains(got[stream], []byte(`"_org.acptap/capture_gap"`)) {
				t.Errorf("the stream does not declare the lost entry")
			}
			if o, e, code := acptap(t, "validate", filepath.Join(root, stream)); code != 0 {
				t.Errorf("validate: exit %d\n%s%s", code, o, e)
			}
		})
	}

	t.Run("torn-tail", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), filepath.Base(lv.wires[0]))
		writeFile(t, path, string(b)+`{"type":"frame","seq":9999,"dir":"a2c","line":"{\"jsonrpc\"`)
		root := filepath.Join(t.TempDir(), "store")
		out, errOut, code := acptap(t, "rebuild", "--store", root, path)
		if code != 0 {
			t.Errorf("exit %d, want 0\nstdout: %s\nstderr: %s", code, out, errOut)
		}
		wantMsg := fmt.Sprintf("%s:%d: torn tail, not mapped", path, len(lines)+1)
		if !strings.Contains(errOut, wantMsg) {
			t.Errorf("stderr does not say %q:\n%s", wantMsg, errOut)
		}
		sameOutputs(t, "rebuild of a log with a torn tail", want, outputs(t, root))
	})
}

var framesRef = regexp.MustCompile(`"frames":\[([0-9,]+)\]`)

// maxFrameRef is the highest wire seq a stream's records point at.
func maxFrameRef(stream []byte) int {
	m := 0
	for _, g := range framesRef.FindAllSubmatch(stream, -1) {
		for _, s := range strings.Split(string(g[1]), ",") {
			if n, _ := strconv.Atoi(s); n > m {
				m = n
			}
		}
	}
	return m
}
