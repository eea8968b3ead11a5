package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

const (
	transparencyLines = 10_000
	bigLine           = 50 << 20
)

// TestRecordByteTransparency: acptap record between a client (this test)
// and an agent (a helper) passes every byte through untouched in both
// directions at once — 10,000 lines each way: JSON-RPC, not JSON, invalid
// UTF-8, NUL bytes, CRLF, empty lines, \u escapes, batches, long lines, a
// 50 MB line (not under -short) and a last line without LF — and the wire
// log holds exactly those lines, except that the captured session/new has
// its MCP secrets scrubbed. Exit codes (0, 3, SIGKILL → 137) and the
// agent's stderr pass through; an agent that cannot start gives 127 and one
// line on stderr.
func TestRecordByteTransparency(t *testing.T) {
	t.Run("Lines", testTransparentLines)
	for _, tc := range []struct{ exit, want int }{{0, 0}, {3, 3}, {-9, 137}} {
		t.Run(fmt.Sprintf("ExitCode%d", tc.want), func(t *testing.T) {
			code := strconv.Itoa(tc.exit)
			if tc.exit == -9 {
				code = "SIGKILL"
			}
			root := t.TempDir()
			r := startRecord(t, []string{"--store", root}, helperCmd(), helperEnv+"="+helperExit, exitEnv+"="+code)
			if got := r.wait(); got != tc.want {
				t.Fatalf("acptap record exited %d, want %d; stderr: %s", got, tc.want, r.stderr.String())
			}
			if got := r.stderr.String(); got != stderrMarker {
				t.Errorf("stderr = %q, want exactly the agent's %q", got, stderrMarker)
			}
			if r.got.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", r.got.String())
			}
		})
	}
	t.Run("CannotStart", func(t *testing.T) {
		root := t.TempDir()
		missing := filepath.Join(root, "no-such-agent")
		out, errOut, code := runAcptap(t, "record", "--store", root, "--", missing, "--flag")
		if code != 127 {
			t.Fatalf("exit code %d, want 127; stderr: %s", code, errOut)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasSuffix(errOut, "\n") || !strings.Contains(errOut, missing) {
			t.Errorf("stderr = %q, want one line naming the agent", errOut)
		}
		if out != "" {
			t.Errorf("stdout = %q, want nothing", out)
		}
	})
}

func testTransparentLines(t *testing.T) {
	big := bigLine
	if testing.Short() {
		big = 0
	}
	// The big line travels agent → client (a large tool output, say).
	c2a := genLines("c2a", transparencyLines, 0)
	a2c := genLines("a2c", transparencyLines, big)
	c2aBytes, a2cBytes := bytes.Join(c2a, nil), bytes.Join(a2c, nil)

	root := t.TempDir()
	reportFile := filepath.Join(t.TempDir(), "report")
	r := startRecord(t, []string{"--store", root}, helperCmd(),
		helperEnv+"="+helperLines, linesEnv+"="+strconv.Itoa(transparencyLines),
		bigEnv+"="+strconv.Itoa(big), reportEnv+"="+reportFile)

	writeErr := make(chan error, 1)
	go func() {
		_, err := r.stdin.Write(c2aBytes)
		if cerr := r.stdin.Close(); err == nil {
			err = cerr
		}
		writeErr <- err
	}()
	got, err := io.ReadAll(r.stdout)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-writeErr; err != nil {
		t.Fatalf("writing to acptap record: %v", err)
	}
	if code := r.wait(); code != 0 {
		t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
	}

	// Agent → client: what the client read is what the agent wrote.
	if len(got) != len(a2cBytes) || sha(got) != sha(a2cBytes) {
		t.Errorf("agent → client: client read %d bytes (sha256 %s), agent wrote %d (sha256 %s)%s",
			len(got), sha(got), len(a2cBytes), sha(a2cBytes), firstDiff(got, a2cBytes))
	}
	// Client → agent: what the agent read is what the client wrote.
	if rep := string(readFile(t, reportFile)); rep != digestOf(c2aBytes) {
		t.Errorf("client → agent: agent read %q, client wrote %q", rep, digestOf(c2aBytes))
	}
	if s := r.stderr.String(); s != stderrMarker {
		t.Errorf("stderr = %q, want exactly the agent's %q", s, stderrMarker)
	}

	// The wire log reproduces the lines of both directions, in order.
	frames := readWire(t, wireLog(t, root))
	t.Logf("client → agent: %d lines, %d bytes; agent → client: %d lines, %d bytes; wire log: %d + %d frames",
		len(c2a), len(c2aBytes), len(a2c), len(a2cBytes), len(frames[sdk.C2A]), len(frames[sdk.A2C]))
	checkFrames(t, "a2c", frames[sdk.A2C], a2c, nil)
	checkFrames(t, "c2a", frames[sdk.C2A], c2a, map[int]bool{3: true})
	if t.Failed() {
		return
	}
	scrubbed := frames[sdk.C2A][3].Line
	for _, s := range []string{secretEnv, secretArg, secretHeader} {
		if bytes.Contains(scrubbed, []byte(s)) {
			t.Errorf("the captured session/new still holds %s: %s", s, scrubbed)
		}
	}
	if !bytes.Contains(scrubbed, []byte(`"[scrubbed]"`)) || !bytes.Contains(scrubbed, []byte(`"session/new"`)) {
		t.Errorf("the captured session/new is not the scrubbed request: %s", scrubbed)
	}
}

// readWire returns the wire log's frames by direction; a gap fails the test.
func readWire(t *testing.T, path string) map[sdk.Direction][]wire.Entry {
	t.Helper()
	r, err := wire.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[sdk.Direction][]wire.Entry{}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("wire log: %v", err)
		}
		switch e.Type {
		case wire.TypeFrame:
			out[e.Dir] = append(out[e.Dir], e)
		case wire.TypeGap:
			t.Fatalf("wire log declares a gap: %+v", e)
		}
	}
}

// checkFrames compares one direction's frames with the lines sent (each
// with its terminator); lines in skip are only counted.
func checkFrames(t *testing.T, dir string, frames []wire.Entry, lines [][]byte, skip map[int]bool) {
	t.Helper()
	if len(frames) != len(lines) {
		t.Errorf("%s: wire log has %d frames, %d lines were sent", dir, len(frames), len(lines))
		return
	}
	for i, l := range lines {
		want, noLF := bytes.CutSuffix(l, []byte("\n"))
		noLF = !noLF
		if skip[i] {
			continue
		}
		if f := frames[i]; !bytes.Equal(f.Line, want) || f.NoLF != noLF {
			t.Errorf("%s line %d: wire frame %d is %.120q (nolf %v), sent %.120q (nolf %v)", dir, i, f.Seq, f.Line, f.NoLF, want, noLF)
			return
		}
	}
}

// firstDiff describes where two byte strings first differ.
func firstDiff(a, b []byte) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			lo := max(0, i-40)
			return fmt.Sprintf("; first difference at byte %d: %.80q vs %.80q", i, a[lo:min(len(a), i+40)], b[lo:min(len(b), i+40)])
		}
	}
	return fmt.Sprintf("; one is a prefix of the other (%d vs %d bytes)", len(a), len(b))
}
