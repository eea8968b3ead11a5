package recording

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/builtin"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/finisher"
	"github.com/acptap/acptap/host/sessions"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/tee"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/testpeers"
)

var (
	acptapBin string
	buildErr  error
)

func TestMain(m *testing.M) {
	os.Exit(testpeers.RunBuilding(m, "TestRecording", &acptapBin, &buildErr))
}

// loadConfig is the config of a store in a temporary directory, with no
// config file and nothing from the environment but file.
func loadConfig(t *testing.T, file string) *config.Config {
	t.Helper()
	home := t.TempDir()
	// The finisher a recording may spawn reads the same (empty) layers.
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("HOME", home)
	cfg, err := config.Load(config.LoadOptions{File: file, Flags: map[string]any{"store": filepath.Join(home, "store")},
		Env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home}, Builtins: builtin.Names()})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestPluginsAssembleOptionsFromConfig: the one assembly of the pipeline's
// options reads the revisions table without disabled plugins, the limits,
// and routes by the agent command; convert's options keep the revision it
// imports and route by the table alone.
func TestPluginsAssembleOptionsFromConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	toml := `
[plugins.aep]
disabled = true
[tee]
batch_frames = 7
[restart]
max = 4
[agents.my-agent]
schema_revision = "2.0.0-alpha.9"
`
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig(t, file)
	p, err := NewPlugins(cfg, "acptap", nil)
	if err != nil {
		t.Fatal(err)
	}
	o := p.Options([]string{"/usr/bin/my-agent", "--acp"})
	for rev, names := range o.Revisions {
		if slices.Contains(names, "aep") {
			t.Errorf("revision %s runs the disabled plugin aep: %v", rev, names)
		}
	}
	if got := o.Revisions["acp-v1-log"]; !slices.Equal(got, []string{"acpv1"}) {
		t.Errorf("acp-v1-log plugins = %v, want [acpv1]", got)
	}
	if o.BatchFrames != 7 || o.MaxRestarts != 4 || o.StallTimeout != cfg.Restart.StallTimeout || o.Launch == nil {
		t.Errorf("limits = batch %d, restarts %d, stall %s, launcher %v; want the config's", o.BatchFrames, o.MaxRestarts, o.StallTimeout, o.Launch != nil)
	}
	if o.Routing.AgentRule != "my-agent" || o.Routing.AgentSchemaRevision != "2.0.0-alpha.9" || o.Routing.Claims == nil {
		t.Errorf("routing = rule %q, schema %q, claims %v; want my-agent's", o.Routing.AgentRule, o.Routing.AgentSchemaRevision, o.Routing.Claims != nil)
	}
	if o.DefaultRevision != "acp/2@"+cfg.SchemaRevision {
		t.Errorf("default revision = %q", o.DefaultRevision)
	}
	imp := p.Import("acp-v1-log")
	if imp.DefaultRevision != "acp-v1-log" || imp.Routing.Claims != nil || imp.BatchFrames != 7 {
		t.Errorf("import options: default %q, claims %v, batch %d", imp.DefaultRevision, imp.Routing.Claims != nil, imp.BatchFrames)
	}
	if tmpl := p.Template(); tmpl.Routing.Claims != nil || tmpl.Connection != "" || tmpl.Sink != nil {
		t.Errorf("the template carries a connection's own fields: %+v", tmpl.Routing)
	}
}

// TestRecording records a real agent process: every
// byte passes through unchanged, Wait returns the agent's exit code, the
// wire log holds both directions, and a second Shutdown is a no-op.
func TestRecording(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	cfg := loadConfig(t, "")
	in := "hello\nworld\n"
	var out, errOut bytes.Buffer
	rec := New(Settings{Config: cfg, Agent: []string{"/bin/sh", "-c", "cat; exit 3"}, Self: acptapBin,
		Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errOut, Finisher: []string{"__finish"}, Version: "test"})
	if err := rec.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, err := rec.Wait()
	if err != nil || code != 3 {
		t.Fatalf("Wait = %d, %v; want the agent's 3", code, err)
	}
	if out.String() != in {
		t.Errorf("editor got %q, want %q", out.String(), in)
	}
	if err := rec.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rec.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	testpeers.WaitMapped(t, cfg.Store)
	if errOut.Len() > 0 {
		t.Errorf("stderr: %s", errOut.String())
	}
	logs, _ := filepath.Glob(filepath.Join(cfg.Store, "wire", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("wire logs %v, want one", logs)
	}
	var lines []string
	if _, err := sessions.Frames(logs[0], func(_ wire.Header, f sessions.Frame) error {
		if f.Type == wire.TypeFrame {
			lines = append(lines, f.Dir.String()+" "+string(f.Line))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	if want := []string{"a2c hello", "a2c world", "c2a hello", "c2a world"}; !slices.Equal(lines, want) {
		t.Errorf("wire frames %q, want %q", lines, want)
	}
}

// TestRecordingWithoutFinisher: with no finisher to hand over to, Shutdown
// maps the connection to the end itself: nothing is pending once it
// returns, and the log says the recording finished here.
func TestRecordingWithoutFinisher(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	cfg := loadConfig(t, "")
	var out, errOut bytes.Buffer
	rec := New(Settings{Config: cfg, Agent: []string{"/bin/sh", "-c", "cat"}, Self: acptapBin,
		Stdin:  strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}` + "\n"),
		Stdout: &out, Stderr: &errOut})
	if err := rec.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, err := rec.Wait(); code != 0 || err != nil {
		t.Fatalf("Wait = %d, %v", code, err)
	}
	if err := rec.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	if pending, err := finisher.Pending(st); err != nil || len(pending) > 0 {
		t.Errorf("pending after Shutdown: %v, %v; want none", pending, err)
	}
	log, err := os.ReadFile(cfg.Log.File)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(log, []byte(`"recording finished"`)) || bytes.Contains(log, []byte("handed to a finisher")) {
		t.Errorf("the log does not say the recording finished in place:\n%s", log)
	}
	if errOut.Len() > 0 {
		t.Errorf("stderr: %s", errOut.String())
	}
}

// TestRecordingAgentNotStarted: an agent that cannot be started gets the
// shell's exit code and nothing is set up: no wire log, no store.
func TestRecordingAgentNotStarted(t *testing.T) {
	cfg := loadConfig(t, "")
	var out, errOut bytes.Buffer
	rec := New(Settings{Config: cfg, Agent: []string{filepath.Join(t.TempDir(), "no-such-agent")}, Self: "acptap",
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut})
	if err := rec.Start(context.Background()); err == nil {
		t.Fatal("Start of a missing agent succeeded")
	}
	if rec.ExitCode() != tee.ExitCannotStart {
		t.Errorf("exit code %d, want %d", rec.ExitCode(), tee.ExitCannotStart)
	}
	if err := rec.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.Store); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the store was set up for an agent that never ran: %v", err)
	}
}

// step is a component that notes its start and shutdowns.
type step struct {
	name     string
	log      *[]string
	startErr error
}

func (s step) Start(context.Context) error {
	*s.log = append(*s.log, "start "+s.name)
	return s.startErr
}

func (s step) Shutdown(context.Context) error {
	*s.log = append(*s.log, "stop "+s.name)
	return nil
}

// TestComponentsStartInOrderStopInReverse: what receives from another
// starts first and stops last; a failed start stops what had started.
func TestComponentsStartInOrderStopInReverse(t *testing.T) {
	var log []string
	cs := components{step{"a", &log, nil}, step{"b", &log, nil}}
	if err := cs.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = cs.shutdown(context.Background())
	if want := []string{"start a", "start b", "stop b", "stop a"}; !slices.Equal(log, want) {
		t.Errorf("order %v, want %v", log, want)
	}
	log = nil
	boom := errors.New("boom")
	cs = components{step{"a", &log, nil}, step{"b", &log, boom}, step{"c", &log, nil}}
	if err := cs.start(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("start = %v, want boom", err)
	}
	if want := []string{"start a", "start b", "stop a"}; !slices.Equal(log, want) {
		t.Errorf("after a failed start: %v, want %v", log, want)
	}
}

// TestEmptyRevisionAttachesNothing: a revision listed with no plugins (or only disabled
// ones) stays in the table, so the routing attaches nothing instead of falling back to
// the plugins that claim the revision (docs/config.md).
func TestEmptyRevisionAttachesNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	toml := `[revisions]
"acp/2@2.0.0-alpha.9" = []
"acp/1" = ["acpv1"]

[plugins.acpv1]
disabled = true
`
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	revs := Revisions(loadConfig(t, file))
	for _, rev := range []string{"acp/2@2.0.0-alpha.9", "acp/1"} {
		names, ok := revs[rev]
		if !ok || len(names) != 0 {
			t.Errorf("revision %s: %v (listed %v), want listed with no plugins", rev, names, ok)
		}
	}
}
