package tee

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

const clientLines = 10000

// clientLine is line i of what the test (the editor) sends: JSON, not JSON, invalid UTF-8,
// CRLF, empty lines, one 50 MB line, and a last line without LF.
func clientLine(i int) []byte {
	switch {
	case i == clientLines-1:
		return []byte("last line without LF")
	case i == clientLines/2:
		return repeatTo([]byte(`{"jsonrpc":"2.0","method":"x","params":{"blob":"0123456789`), 50<<20, "\"}}\n")
	case i%7 == 0:
		return []byte("\xff\xfe bad utf8 \xc3\x28 " + strconv.Itoa(i) + "\n")
	case i%7 == 1:
		return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"session/prompt"}` + "\r\n")
	case i%7 == 2:
		return []byte("\n")
	case i%7 == 3:
		return []byte("this is not json " + strconv.Itoa(i) + "\n")
	case i%7 == 4:
		return []byte("\r\n")
	}
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"result":{"stopReason":"end_turn"}}` + "\n")
}

// replay hashes a direction's items back into bytes (line + LF unless NoLF).
type replay struct {
	h           hash.Hash
	lines, noLF int
	afterNoLF   bool // an item came after a NoLF item (must not happen)
	gaps        int
}

func (r *replay) add(it captured.Item) {
	if it.Gap != nil {
		r.gaps++
		return
	}
	if r.noLF > 0 {
		r.afterNoLF = true
	}
	r.lines++
	r.h.Write(it.Line)
	if it.NoLF {
		r.noLF++
	} else {
		r.h.Write([]byte{'\n'})
	}
}

// TestTransparency10k: 10,000 mixed lines each way (with a 50 MB line and a last line without
// LF) pass byte-identical in both directions, and the queue items reproduce them exactly.
func TestTransparency10k(t *testing.T) {
	if testing.Short() {
		t.Skip("pushes 50 MB each way")
	}
	editorIn, toTee := pipe(t)
	fromTee, editorOut := pipe(t)
	var stderr bytes.Buffer
	q := make(chan captured.Item, 2*clientLines+agentLines+16) // room for every item: nothing drops
	got := map[sdk.Direction]*replay{sdk.C2A: {h: sha256.New()}, sdk.A2C: {h: sha256.New()}}
	itemsDone := make(chan struct{})
	go func() {
		defer close(itemsDone)
		splitEach(q, 0, func(it captured.Item) { got[it.Dir].add(it) })
	}()
	argv, env := helperAgent("echogen")
	// The bound in bytes is lifted: this test is about what capture sees, not its bounds.
	wait := runAsync(Config{Agent: argv, Env: env, Stdin: editorIn, Stdout: editorOut, Stderr: &stderr, Queue: q, QueueBytes: 1 << 30})

	sent := sha256.New()
	sentDone := make(chan struct{})
	go func() {
		defer close(sentDone)
		for i := range clientLines {
			line := clientLine(i)
			sent.Write(line)
			if _, err := toTee.Write(line); err != nil {
				t.Errorf("writing line %d: %v", i, err)
				break
			}
		}
		toTee.Close()
	}()
	recv := sha256.New()
	var recvLF, recvTail int // LFs received, bytes after the last LF
	recvDone := make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := fromTee.Read(buf)
			recv.Write(buf[:n])
			for _, c := range buf[:n] {
				recvTail++
				if c == '\n' {
					recvLF, recvTail = recvLF+1, 0
				}
			}
			if err != nil {
				recvDone <- err
				return
			}
		}
	}()

	code, err := wait()
	editorOut.Close()
	if rerr := <-recvDone; rerr != io.EOF {
		t.Fatalf("reading from the tee: %v", rerr)
	}
	<-itemsDone
	<-sentDone
	if code != 0 || err != nil {
		t.Fatalf("Run = %d, %v; stderr %q", code, err, stderr.String())
	}
	var agentIn, agentOut string
	if _, err := fmt.Sscanf(stderr.String(), "in=%s out=%s", &agentIn, &agentOut); err != nil {
		t.Fatalf("agent report %q: %v", stderr.String(), err)
	}
	if s := fmt.Sprintf("%x", sent.Sum(nil)); s != agentIn {
		t.Errorf("client → agent: sent sha256 %s, agent got %s", s, agentIn)
	}
	if s := fmt.Sprintf("%x", recv.Sum(nil)); s != agentOut {
		t.Errorf("agent → client: agent wrote sha256 %s, client got %s", agentOut, s)
	}

	c2a, a2c := got[sdk.C2A], got[sdk.A2C]
	if s, c := fmt.Sprintf("%x", sent.Sum(nil)), fmt.Sprintf("%x", c2a.h.Sum(nil)); s != c {
		t.Errorf("c2a items replay to sha256 %s, want %s", c, s)
	}
	if s, c := fmt.Sprintf("%x", recv.Sum(nil)), fmt.Sprintf("%x", a2c.h.Sum(nil)); s != c {
		t.Errorf("a2c items replay to sha256 %s, want %s", c, s)
	}
	if c2a.lines != clientLines || c2a.noLF != 1 || c2a.afterNoLF || c2a.gaps != 0 {
		t.Errorf("c2a items: %d lines (want %d), %d NoLF (want 1, last), %d gaps", c2a.lines, clientLines, c2a.noLF, c2a.gaps)
	}
	if want := recvLF + 1; a2c.lines != want || a2c.noLF != 1 || a2c.afterNoLF || a2c.gaps != 0 || recvTail == 0 {
		t.Errorf("a2c items: %d lines (want %d), %d NoLF (want 1, last), %d gaps", a2c.lines, want, a2c.noLF, a2c.gaps)
	}
}

// TestPartialLineForwardedBeforeLF: bytes without an LF reach the agent (and come back)
// before the line ends; the test would hang if the tee waited for line ends.
func TestPartialLineForwardedBeforeLF(t *testing.T) {
	editorIn, toTee := pipe(t)
	fromTee, editorOut := pipe(t)
	q := make(chan captured.Item, 16)
	argv, env := helperAgent("echo")
	wait := runAsync(Config{Agent: argv, Env: env, Stdin: editorIn, Stdout: editorOut, Stderr: io.Discard, Queue: q})

	for _, part := range []string{`{"jsonrpc":"2.0",`, `"method":"x"`, `}`} {
		toTee.WriteString(part)
		buf := make([]byte, len(part))
		if _, err := io.ReadFull(fromTee, buf); err != nil || string(buf) != part {
			t.Fatalf("echo of partial %q: %q, %v", part, buf, err)
		}
	}
	toTee.WriteString("\n")
	if s := readLine(t, bufio.NewReader(fromTee)); s != "\n" {
		t.Fatalf("echo of the LF: %q", s)
	}
	toTee.Close()
	if code, err := wait(); code != 0 || err != nil {
		t.Fatalf("Run = %d, %v", code, err)
	}
	var lines []string
	splitEach(q, 0, func(it captured.Item) { lines = append(lines, it.Dir.String()+" "+string(it.Line)) })
	want := []string{`c2a {"jsonrpc":"2.0","method":"x"}`, `a2c {"jsonrpc":"2.0","method":"x"}`}
	if strings.Join(lines, "|") != strings.Join(want, "|") && strings.Join(lines, "|") != strings.Join([]string{want[1], want[0]}, "|") {
		t.Errorf("items = %q, want %q", lines, want)
	}
}
