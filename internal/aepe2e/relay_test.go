package aepe2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/testpeers"
)

// relayProc is a running `acptap relay`.
type relayProc struct {
	cmd   *exec.Cmd
	addr  string
	token string // the generated token, when the relay printed one
}

var (
	listening = regexp.MustCompile(`listening on https?://(\S+),`)
	generated = regexp.MustCompile(`generated token .*: ([0-9a-f]+)$`)
)

// startRelay starts `acptap relay` on addr (port 0: any) over store, with
// extra flags, and waits until it says it listens. Without --token-file
// or --no-auth the relay generates a token on its first start, which is
// returned.
func startRelay(t *testing.T, store, addr string, flags ...string) *relayProc {
	t.Helper()
	cmd := exec.Command(acptapBin, append([]string{"relay", "--addr", addr, "--store", store}, flags...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	r := &relayProc{cmd: cmd}
	br := bufio.NewReader(stderr)
	for r.addr == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("relay did not start: %q %v", line, err)
		}
		line = strings.TrimSpace(line)
		if m := generated.FindStringSubmatch(line); m != nil {
			r.token = m[1]
		}
		if m := listening.FindStringSubmatch(line); m != nil {
			r.addr = m[1]
		}
	}
	go func() { _, _ = br.WriteTo(new(bytes.Buffer)) }()
	return r
}

// relayLog is what record logged about the relay at exit.
type relayLog struct {
	Delivered, Lost, Unsent, Rejected, Retries uint64
}

func readRelayLog(t *testing.T, store string) relayLog {
	t.Helper()
	var out relayLog
	found := false
	for _, line := range readLines(t, filepath.Join(store, "logs", "acptap.log")) {
		var l struct {
			Message string `json:"@message"`
			relayLog
		}
		if json.Unmarshal(line, &l) == nil && strings.HasPrefix(l.Message, "aep relay: ") {
			out, found = l.relayLog, true
		}
	}
	if !found {
		t.Fatal("record logged nothing about the relay")
	}
	return out
}

// ids returns the event ids of JSONL lines.
func ids(t *testing.T, lines [][]byte) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, l := range lines {
		var e event
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatal(err)
		}
		out[e.ID] = true
	}
	return out
}

// TestRelayReceivesTheLiveSession: with aep.relay set, record posts every
// event to a real `acptap relay`, which stores exactly the lines of the
// JSONL log.
func TestRelayReceivesTheLiveSession(t *testing.T) {
	store, relayStore := t.TempDir(), t.TempDir()
	r := startRelay(t, relayStore, "127.0.0.1:0")
	res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store},
		record(t, store, "v2-agent.mjs", "ACPTAP_AEP_RELAY=http://"+r.addr, "ACPTAP_AEP_RELAY_TOKEN="+r.token))
	res.RequireOK(t)
	local := readLines(t, filepath.Join(store, "aep", "acp", res.Summary.SessionID+".jsonl"))
	relayed := readLines(t, filepath.Join(relayStore, "relay", "acp", res.Summary.SessionID+".jsonl"))
	if !bytes.Equal(bytes.Join(local, []byte("\n")), bytes.Join(relayed, []byte("\n"))) {
		t.Errorf("the relay stored %d lines, the JSONL log has %d, or they differ", len(relayed), len(local))
	}
	if l := readRelayLog(t, store); l.Delivered != uint64(len(local)) || l.Lost != 0 {
		t.Errorf("record logged %+v for %d events", l, len(local))
	}
}

// TestRelayKilledMidSession: the relay is killed while the session runs
// and comes back on the same address. The session and the JSONL log are
// unaffected; every event is either at the relay or counted as lost in
// record's log, and the relay holds nothing else.
func TestRelayKilledMidSession(t *testing.T) {
	store, relayStore := t.TempDir(), t.TempDir()
	r := startRelay(t, relayStore, "127.0.0.1:0")
	prompts := []string{"--cwd", store}
	for range 4 {
		prompts = append(prompts, "--prompt", "everything: please fix the greeting")
	}
	type result struct{ res *testpeers.SDKResult }
	done := make(chan result, 1)
	ended := make(chan struct{}) // closed when the client returned, or failed the test (Goexit)
	go func() {
		defer close(ended)
		done <- result{testpeers.RunSDKClient(t, "v2-client.mjs", prompts,
			record(t, store, "v2-agent.mjs", "ACPTAP_AEP_RELAY=http://"+r.addr, "ACPTAP_AEP_RELAY_FLUSH=10s", "ACPTAP_AEP_RELAY_TOKEN="+r.token))}
	}()
	// Kill the relay once it has received part of the session.
	relayFile := filepath.Join(relayStore, "relay", "acp", "sdk-v2-session-1.jsonl")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if st, err := os.Stat(relayFile); err == nil && st.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the relay received nothing")
		}
	}
	select {
	case <-ended:
		t.Fatal("the session ended before the relay was killed: nothing was tested")
	default:
	}
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = r.cmd.Wait()
	time.Sleep(300 * time.Millisecond)
	if again := startRelay(t, relayStore, r.addr); again.token != "" {
		t.Errorf("the restarted relay generated another token")
	}
	if <-ended; len(done) == 0 {
		t.Fatal("the SDK client failed (see above)")
	}
	res := (<-done).res
	res.RequireOK(t)

	evs := checkAEPLog(t, filepath.Join(store, "aep", "acp", res.Summary.SessionID+".jsonl"))
	if n := countTypes(evs)["run.finished"]; n != 4 {
		t.Errorf("%d runs finished, want 4", n)
	}
	local := ids(t, readLines(t, filepath.Join(store, "aep", "acp", res.Summary.SessionID+".jsonl")))
	relayed := ids(t, readLines(t, relayFile))
	for id := range relayed {
		if !local[id] {
			t.Errorf("the relay holds %s, which the log does not", id)
		}
	}
	l := readRelayLog(t, store)
	if l.Delivered+l.Lost != uint64(len(local)) {
		t.Errorf("%d events, but record accounted for %d delivered and %d lost", len(local), l.Delivered, l.Lost)
	}
	if missing := uint64(len(local) - len(relayed)); missing > l.Lost {
		t.Errorf("%d events never reached the relay, but only %d are counted as lost", missing, l.Lost)
	}
	t.Logf("%d events; relay holds %d; record logged %+v", len(local), len(relayed), l)
}

// TestRelayGoneForGood_EventsCountedLost: a relay that dies and never
// returns costs the session nothing; what it missed is counted as lost.
func TestRelayGoneForGood_EventsCountedLost(t *testing.T) {
	store, relayStore := t.TempDir(), t.TempDir()
	r := startRelay(t, relayStore, "127.0.0.1:0", "--no-auth")
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = r.cmd.Wait()
	res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store},
		record(t, store, "v2-agent.mjs", "ACPTAP_AEP_RELAY=http://"+r.addr, "ACPTAP_AEP_RELAY_FLUSH=200ms"))
	res.RequireOK(t)
	evs := checkAEPLog(t, filepath.Join(store, "aep", "acp", res.Summary.SessionID+".jsonl"))
	if l := readRelayLog(t, store); l.Delivered != 0 || l.Lost != uint64(len(evs)) || l.Unsent != l.Lost {
		t.Errorf("%d events; record logged %+v", len(evs), l)
	}
}
