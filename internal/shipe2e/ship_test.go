package shipe2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/host/ship"
	"github.com/acptap/acptap/internal/natstest"
	"github.com/acptap/acptap/internal/testpeers"
)

var acptapBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "acptap-shipe2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "shipe2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if acptapBin, err = testpeers.Build(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "shipe2e:", err)
		return 1
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ACPTAP_") {
			os.Unsetenv(k)
		}
	}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		d := filepath.Join(tmp, strings.ToLower(k))
		os.MkdirAll(d, 0o700)
		os.Setenv(k, d)
	}
	return m.Run()
}

// origin is one developer's machine: a store and a config naming it.
type origin struct {
	name, store, config string
}

func newOrigin(t *testing.T, name, url string) origin {
	t.Helper()
	dir := t.TempDir()
	o := origin{name: name, store: filepath.Join(dir, "store"), config: filepath.Join(dir, "config.toml")}
	writeConfig(t, o.config, url, fmt.Sprintf("origin = %q\n", name))
	t.Cleanup(func() { killFollowers(o.store) })
	return o
}

func writeConfig(t *testing.T, path, url, extra string) {
	t.Helper()
	cfg := fmt.Sprintf("[ship.nats]\nurl = %q\ninterval = \"100ms\"\nlinger = \"20s\"\ntimeout = \"2s\"\nack_wait = \"2s\"\n%s", url, extra)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// session runs the SDK client against the SDK agent through record.
func (o origin) session(t *testing.T, prompts int) {
	t.Helper()
	args := []string{"--cwd", o.store}
	for range prompts {
		args = append(args, "--prompt", "everything: please fix the greeting")
	}
	agent := append([]string{acptapBin, "record", "--store", o.store, "--config", o.config, "--"},
		testpeers.NodeArgv(t, "v2-agent.mjs")...)
	testpeers.RunSDKClient(t, "v2-client.mjs", args, agent).RequireOK(t)
}

// shipRest runs `acptap ship` until it succeeds: what the follower left.
func (o origin) shipRest(t *testing.T) string {
	t.Helper()
	var last string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := exec.Command(acptapBin, "ship", "--store", o.store, "--config", o.config).CombinedOutput()
		if err == nil {
			return string(out)
		}
		last = string(out)
	}
	t.Fatalf("acptap ship never succeeded: %s", last)
	return ""
}

// killFollowers ends the recordings' shipper processes of a store (they
// are detached and would outlive the test).
func killFollowers(store string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 3 && args[1] == "ship" && args[2] == "--follow" && strings.Contains(string(b), store) {
			var pid int
			fmt.Sscanf(filepath.Base(filepath.Dir(p)), "%d", &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// collector is a running `acptap collect`.
type collector struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
}

func startCollector(t *testing.T, central, config string, once bool) *collector {
	t.Helper()
	args := []string{"collect", "--store", central, "--config", config}
	if once {
		args = append(args, "--once")
	}
	cmd := exec.Command(acptapBin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &collector{cmd: cmd, stderr: &stderr}
}

func collectOnce(t *testing.T, central, config string) string {
	t.Helper()
	c := startCollector(t, central, config, true)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("acptap collect --once: %v\n%s", err, c.stderr)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("acptap collect --once did not finish\n%s", c.stderr)
	}
	return c.stderr.String()
}

// sameStores checks that every output of the origin's store is in the
// central store under the origin's name, byte for byte, and nothing else.
func sameStores(t *testing.T, o origin, central string) {
	t.Helper()
	outs, err := ship.Outputs(o.store, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) < 2 {
		t.Fatalf("%s recorded only %v", o.name, outs)
	}
	got, _ := ship.Outputs(filepath.Join(central, o.name), false)
	if fmt.Sprint(got) != fmt.Sprint(outs) {
		t.Errorf("%s: central store holds %v, the origin %v", o.name, got, outs)
	}
	for _, rel := range outs {
		a, _ := os.ReadFile(filepath.Join(o.store, rel))
		b, err := os.ReadFile(filepath.Join(central, o.name, rel))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: %s differs (origin %d bytes, central %d, %v)", o.name, rel, len(a), len(b), err)
		}
	}
}

func collectorConfig(t *testing.T, url string) string {
	p := filepath.Join(t.TempDir(), "collect.toml")
	writeConfig(t, p, url, "")
	return p
}

// TestTwoOriginsOneCollector: two machines record sessions at the same
// time through `acptap record`; one collector, killed with SIGKILL while it
// works and started again, ends with both stores byte for byte.
func TestTwoOriginsOneCollector(t *testing.T) {
	srv := natstest.Start(t)
	alice, bob := newOrigin(t, "alice@laptop", srv.URL()), newOrigin(t, "bob@desk", srv.URL())
	central := t.TempDir()
	ccfg := collectorConfig(t, srv.URL())
	col := startCollector(t, central, ccfg, false)
	var wg sync.WaitGroup
	for _, o := range []origin{alice, bob} {
		wg.Add(1)
		go func() { defer wg.Done(); o.session(t, 3) }()
	}
	// Kill the collector once it has written something.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(central, "*", "sessions", "*", "stream.asr.jsonl")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector wrote nothing\n%s", col.stderr)
		}
	}
	col.cmd.Process.Signal(syscall.SIGKILL)
	col.cmd.Wait()
	wg.Wait()
	for _, o := range []origin{alice, bob} {
		t.Logf("%s: %s", o.name, o.shipRest(t))
	}
	t.Logf("collector after the kill: %s", collectOnce(t, central, ccfg))
	sameStores(t, alice, central)
	sameStores(t, bob, central)
}

// TestServerRestartMidSession: the server is stopped while a session is
// recorded and started again; the session is unaffected and, shipped and
// collected, the central store equals the origin's.
func TestServerRestartMidSession(t *testing.T) {
	srv := natstest.Start(t)
	alice := newOrigin(t, "alice", srv.URL())
	central := t.TempDir()
	ccfg := collectorConfig(t, srv.URL())
	done := make(chan struct{})
	go func() { defer close(done); alice.session(t, 4) }()
	// Stop the server once the session has started writing.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(alice.store, "sessions", "*", "stream.asr.jsonl")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session wrote nothing")
		}
	}
	srv.Stop()
	time.Sleep(300 * time.Millisecond)
	srv.Restart()
	<-done
	t.Logf("%s", alice.shipRest(t))
	t.Logf("%s", collectOnce(t, central, ccfg))
	sameStores(t, alice, central)
}

// TestOriginOfflineForTheWholeSession: the server is down for the whole
// recording; the session runs as usual, and `acptap ship` afterwards sends
// everything.
func TestOriginOfflineForTheWholeSession(t *testing.T) {
	srv := natstest.Start(t)
	srv.Stop()
	alice := newOrigin(t, "alice", srv.URL())
	alice.session(t, 2)
	srv.Restart()
	out := alice.shipRest(t)
	if !strings.Contains(out, "lines") {
		t.Errorf("acptap ship said %q", out)
	}
	central := t.TempDir()
	t.Logf("%s", collectOnce(t, central, collectorConfig(t, srv.URL())))
	sameStores(t, alice, central)
}
