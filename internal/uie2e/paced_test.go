package uie2e

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/testpeers"
)

// pacedClient replays, line by line, what the SDK client sent in a recorded
// conversation with the SDK agent, through `acptap record` in front of the
// same agent, waiting before each line for as many agent lines as the
// client had received then. It can stop before a given line: the test
// looks at the live recording there, then lets it go on. The agent is
// deterministic, so its requests (and their ids) are the same as in the
// trace.
type pacedClient struct {
	t     *testing.T
	sends []string
	after []int // agent lines received before each send, in the trace
	stdin io.WriteCloser
	got   atomic.Int64
	cmd   *exec.Cmd
	next  int
}

func newPacedClient(t *testing.T, store string, prompts ...string) *pacedClient {
	t.Helper()
	args := []string{"--cwd", store, "--no-close"}
	for _, p := range prompts {
		args = append(args, "--prompt", p)
	}
	res := testpeers.RunSDKClient(t, "v2-client.mjs", args, testpeers.NodeArgv(t, "v2-agent.mjs"))
	res.RequireOK(t)
	pc := &pacedClient{t: t}
	recv := 0
	for _, l := range testpeers.ReadTrace(t, res.Trace) {
		if l.Dir == "send" {
			pc.sends = append(pc.sends, l.Line)
			pc.after = append(pc.after, recv)
		} else {
			recv++
		}
	}
	argv := append([]string{"record", "--store", store, "--"}, testpeers.NodeArgv(t, "v2-agent.mjs")...)
	pc.cmd = exec.Command(acptapBin, argv...)
	pc.cmd.Dir = testpeers.NodeSDKDir(t)
	pc.stdin, _ = pc.cmd.StdinPipe()
	out, _ := pc.cmd.StdoutPipe()
	if err := pc.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.cmd.Process.Kill(); pc.cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			pc.got.Add(1)
		}
	}()
	return pc
}

// index is the position of the n-th (from 1) sent line holding s.
func (pc *pacedClient) index(s string, n int) int {
	for i, l := range pc.sends {
		if strings.Contains(l, s) {
			if n--; n == 0 {
				return i
			}
		}
	}
	pc.t.Fatalf("the trace sent no %d-th %q", n, s)
	return -1
}

// until sends the lines before position stop, and waits for what the
// agent sent before it in the trace (the answers to them).
func (pc *pacedClient) until(stop int) {
	pc.t.Helper()
	for ; pc.next < stop && pc.next < len(pc.sends); pc.next++ {
		pc.await(pc.next)
		if _, err := io.WriteString(pc.stdin, pc.sends[pc.next]+"\n"); err != nil {
			pc.t.Fatal(err)
		}
	}
	if stop < len(pc.sends) {
		pc.await(stop)
	}
}

// await waits until the agent has sent as many lines as the trace had
// received before send i.
func (pc *pacedClient) await(i int) {
	pc.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for pc.got.Load() < int64(pc.after[i]) {
		if time.Now().After(deadline) {
			pc.t.Fatalf("the agent sent %d lines, the trace had %d before line %d", pc.got.Load(), pc.after[i], i)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// finish sends the rest and closes the connection.
func (pc *pacedClient) finish() {
	pc.until(len(pc.sends))
	time.Sleep(200 * time.Millisecond)
	pc.stdin.Close()
	pc.cmd.Wait()
}
