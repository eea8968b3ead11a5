package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

const revision = "acp/2@2.0.0-alpha.9"

// Lines of a scripted session with the helperACP agent.
var (
	initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"e2e-client","version":"1"}}}` + "\n"
	newLine  = `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp/e2e","mcpServers":[]}}` + "\n"
)

// resumeLine is a session/resume request for the e2e session.
func resumeLine(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/resume","params":{"sessionId":%q,"cwd":"/tmp/e2e","mcpServers":[]}}`+"\n", id, e2eSession)
}

func promptLine(id, n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"prompt %d"}]}}`+"\n", id, e2eSession, n)
}

// startScripted starts `acptap record FLAGS -- <helperACP agent>`; the agent
// reports what it read to the returned file and exits with exit.
func startScripted(t *testing.T, flags []string, exit int) (*recording, string) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report")
	r := startRecord(t, flags, helperCmd(), helperEnv+"="+helperACP, reportEnv+"="+report, fmt.Sprintf("%s=%d", exitEnv, exit))
	return r, report
}

// lineCount counts a file's LF-terminated lines (0 if it is missing).
func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// TestRecordPluginStallDeclaresGap: an external plugin that writes a header
// and a record and then blocks forever; with restart.max = 0 and
// restart.stall_timeout = "3s" (long enough that acpv2, mapping beside it
// on a loaded machine, is never taken for stalled) the host gives up on it, the session's bytes
// pass through unchanged before and after, acptap exits with the agent's
// code, and the plugin's stream ends with a declaration of the loss
// _org.acptap/unmapped_frames.
func TestRecordPluginStallDeclaresGap(t *testing.T) {
	dir := pluginDir(t, map[string]string{"stall": faultyBin})
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), fmt.Sprintf(`plugin_path = [%q]

[revisions]
%q = ["acpv2", "stall"]

[plugins.stall.config]
fault = "stall"

[restart]
max = 0
stall_timeout = "3s"
`+mapBeforeExit, dir, revision))
	root := t.TempDir()
	r, report := startScripted(t, []string{"--store", root, "--config", cfg}, 5)
	agent := &acpAgent{}
	r.converse(agent, initLine, newLine)
	stall := streamPath(root, e2eSession, "stall")
	poll(t, "the stall plugin's header and first record", func() bool { return lineCount(stall) >= 2 })

	r.converse(agent, promptLine(2, 1)) // the plugin blocks on this batch
	poll(t, "the host to give up on the stalled plugin", func() bool {
		b, _ := os.ReadFile(filepath.Join(root, "logs", "acptap.log"))
		return bytes.Contains(b, []byte("plugin disabled for the rest of this connection"))
	})
	r.converse(agent, promptLine(3, 2), "after the stall, not JSON\n")
	r.send("a last line without LF")
	if code := r.wait(); code != 5 {
		t.Fatalf("acptap record exited %d, want the agent's 5; stderr: %s", code, r.stderr.String())
	}
	r.checkTransparent(report)

	recs := records(t, stall)
	if d := slices.Compare(types(recs), []string{"header", "_e2e/seen", "declaration"}); d != 0 {
		t.Fatalf("stall stream: types %v, want header, _e2e/seen, declaration", types(recs))
	}
	decl := recs[2]
	lossy, _ := decl["lossy"].([]any)
	if !slices.Contains(lossy, any(asr.LossUnmappedFrames)) || decl["seq"] != 2.0 || decl["id"] != "r2" {
		t.Errorf("declaration = %v, want seq 2, id r2, lossy including %s", decl, asr.LossUnmappedFrames)
	}
	if !exists(streamPath(root, e2eSession, "")) {
		t.Error("acpv2 wrote no stream beside the stalled plugin")
	}
}

// TestRecordPluginCrashOnFirstBatch: a plugin that dies in its very first
// Map call (while the host is catching it up from the wire log) is restarted
// and re-fed; the session passes through, acptap exits with the agent's
// code, and the plugin's stream is complete.
func TestRecordPluginCrashOnFirstBatch(t *testing.T) {
	dir := pluginDir(t, map[string]string{"crashy": faultyBin})
	marker := filepath.Join(t.TempDir(), "crashed")
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), fmt.Sprintf(`plugin_path = [%q]

[revisions]
%q = ["acpv2", "crashy"]

[plugins.crashy.config]
fault = "crash-once"
marker = %q
`+mapBeforeExit, dir, revision, marker))
	root := t.TempDir()
	r, report := startScripted(t, []string{"--store", root, "--config", cfg}, 0)
	r.converse(&acpAgent{}, initLine, newLine, promptLine(2, 1))
	if code := r.wait(); code != 0 {
		t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
	}
	r.checkTransparent(report)
	if !exists(marker) {
		t.Fatal("the plugin never crashed")
	}
	if got := types(records(t, streamPath(root, e2eSession, "crashy"))); slices.Compare(got, []string{"header", "_e2e/seen"}) != 0 {
		t.Errorf("crashy stream: types %v, want header, _e2e/seen", got)
	}
	if log := logText(t, root); !strings.Contains(log, "plugin failed; restarting and re-feeding from the wire log") {
		t.Errorf("the log does not say the plugin was restarted:\n%s", log)
	}
}

// mapBeforeExit is the config section that makes record map to the end
// before it exits: the tests of what record itself does about a failing
// plugin (restart, give up, declare) need it, because a mapping that is
// behind when the agent exits (a loaded machine) is otherwise handed to a
// finisher, which maps the wire log afresh.
const mapBeforeExit = `
[record]
map_before_exit = true
`

// vendorConfig attaches acpv2 and the acme plugin (pinned to sum) to ACP v2.
func vendorConfig(t *testing.T, dir, sum string) string {
	t.Helper()
	return writeFile(t, filepath.Join(t.TempDir(), "config.toml"), fmt.Sprintf(`plugin_path = [%q]

[revisions]
%q = ["acpv2", "acme"]

[plugins.acme]
sha256 = %q
`, dir, revision, sum))
}

// TestVendorPluginBesideACPv2: the example external plugin for the vendor
// extension _acme/progress (examples/acme-plugin, built, pinned by sha256,
// found on plugin_path) runs beside the built-in acpv2 on one connection:
// acpv2 keeps the vendor updates as audit-only records in stream.asr.jsonl,
// acme writes its own typed records to acme.asr.jsonl, and a rebuild gives
// both back byte for byte. With a wrong sha256 acme does not start, the
// session still passes through, and the log names the checksum mismatch.
func TestVendorPluginBesideACPv2(t *testing.T) {
	dir := pluginDir(t, map[string]string{"acme": acmeBin})
	sum := fileSHA256(t, filepath.Join(dir, "acptap-plugin-acme"))
	session := []string{initLine, newLine, promptLine(2, 1), promptLine(3, 2)}

	t.Run("BothStreams", func(t *testing.T) {
		cfg := vendorConfig(t, dir, sum)
		root := t.TempDir()
		r, report := startScripted(t, []string{"--store", root, "--config", cfg}, 0)
		r.converse(&acpAgent{}, session...)
		if code := r.wait(); code != 0 {
			t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
		}
		r.checkTransparent(report)

		wirePath := wireLog(t, root)
		frames := readWire(t, wirePath)[sdk.A2C]
		bySeq := map[float64][]byte{}
		for _, f := range frames {
			bySeq[float64(f.Seq)] = f.Line
		}

		// acpv2: the vendor updates are kept, audit-only, verbatim.
		primary := records(t, streamPath(root, e2eSession, ""))
		var audits []map[string]any
		for _, rec := range primary {
			if rec["type"] == "org.agent-session.acp/_acme/progress" {
				audits = append(audits, rec)
			}
		}
		if len(audits) != 4 {
			t.Errorf("stream.asr.jsonl has %d org.agent-session.acp/_acme/progress records, want 4", len(audits))
		}

		// acme: its own stream, header first, then one record per update.
		acme := records(t, streamPath(root, e2eSession, "acme"))
		if len(acme) != 5 {
			t.Fatalf("acme.asr.jsonl has %d lines, want a header and 4 records", len(acme))
		}
		hdr := acme[0]
		prod, _ := hdr["producer"].(map[string]any)
		if hdr["type"] != "header" || hdr["asr"] != "0.1" || hdr["sessionId"] != e2eSession || prod["method"] != "recorder" || prod["name"] != "acme" || prod["version"] == nil {
			t.Errorf("acme header = %v", hdr)
		}
		ts := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
		want := []struct {
			id      string
			percent float64
			message string
		}{{"p1", 40, "indexing"}, {"p1", 100, "done"}, {"p2", 40, "indexing"}, {"p2", 100, "done"}}
		for i, w := range want {
			rec := acme[i+1]
			seq := float64(i + 1)
			if rec["type"] != "_acme/progress" || rec["seq"] != seq || rec["id"] != fmt.Sprintf("r%d", i+1) ||
				rec["progressId"] != w.id || rec["percent"] != w.percent || rec["message"] != w.message {
				t.Errorf("acme record %d = %v, want %+v", i+1, rec, w)
				continue
			}
			if s, _ := rec["ts"].(string); !ts.MatchString(s) {
				t.Errorf("acme record %d: ts %q is not RFC 3339 UTC with milliseconds", i+1, s)
			}
			ref, _ := rec["native"].(map[string]any)["ref"].(map[string]any)
			fr, _ := ref["frames"].([]any)
			if ref["wire"] != filepath.Base(wirePath) || len(fr) != 1 {
				t.Errorf("acme record %d: native.ref = %v", i+1, ref)
				continue
			}
			line := bySeq[fr[0].(float64)]
			if !bytes.Contains(line, []byte(`"sessionUpdate":"_acme/progress","progressId":"`+w.id+`"`)) {
				t.Errorf("acme record %d: native.ref points at %s", i+1, line)
			}
		}

		// A rebuild with the same configuration writes both streams again.
		fresh := rebuild(t, wirePath, "--config", cfg)
		for _, plugin := range []string{"", "acme"} {
			a, b := readFile(t, streamPath(root, e2eSession, plugin)), readFile(t, streamPath(fresh, e2eSession, plugin))
			if !bytes.Equal(a, b) {
				t.Errorf("rebuilt %q stream differs%s", plugin, firstDiff(a, b))
			}
		}
	})

	t.Run("ResumedOnASecondConnection", func(t *testing.T) {
		// The session goes on over a second connection (session/resume):
		// acme continues its own stream — one header, seqs dense across
		// both connections — as acpv2 continues stream.asr.jsonl, and a
		// rebuild of the second connection's wire log in the same store
		// writes both files again byte for byte.
		cfg := vendorConfig(t, dir, sum)
		root := t.TempDir()
		for _, conv := range [][]string{session, {initLine, resumeLine(1), promptLine(2, 3)}} {
			r, report := startScripted(t, []string{"--store", root, "--config", cfg}, 0)
			r.converse(&acpAgent{}, conv...)
			if code := r.wait(); code != 0 {
				t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
			}
			r.checkTransparent(report)
		}
		acmePath := streamPath(root, e2eSession, "acme")
		acme := records(t, acmePath)
		var headers int
		for i, rec := range acme {
			if rec["type"] == "header" {
				headers++
				continue
			}
			if rec["seq"] != float64(i) {
				t.Errorf("acme line %d has seq %v", i, rec["seq"])
			}
		}
		if headers != 1 || len(acme) != 7 {
			t.Errorf("acme.asr.jsonl: %d headers and %d lines, want 1 header and 6 records over two connections", headers, len(acme))
		}
		for _, plugin := range []string{"", "acme"} {
			if out, errOut, code := runAcptap(t, "validate", streamPath(root, e2eSession, plugin)); code != 0 {
				t.Errorf("validate %q stream: exit %d\n%s%s", plugin, code, out, errOut)
			}
		}
		wires, _ := filepath.Glob(filepath.Join(root, "wire", "*.jsonl"))
		sort.Strings(wires)
		if len(wires) != 2 {
			t.Fatalf("wire logs: %v", wires)
		}
		if w := readFile(t, wires[1]); !bytes.Contains(w, []byte(`"pluginLines":{"acme":5}`)) {
			t.Errorf("the second connection's session entry does not give acme's stream:\n%s", w)
		}
		before := map[string][]byte{}
		for _, plugin := range []string{"", "acme"} {
			before[plugin] = readFile(t, streamPath(root, e2eSession, plugin))
		}
		rebuild(t, wires[1], "--config", cfg, "--store", root)
		for _, plugin := range []string{"", "acme"} {
			if got := readFile(t, streamPath(root, e2eSession, plugin)); !bytes.Equal(before[plugin], got) {
				t.Errorf("rebuilt %q stream differs%s", plugin, firstDiff(before[plugin], got))
			}
		}
	})

	t.Run("WrongChecksum", func(t *testing.T) {
		cfg := vendorConfig(t, dir, strings.Repeat("0", 64))
		root := t.TempDir()
		r, report := startScripted(t, []string{"--store", root, "--config", cfg}, 0)
		r.converse(&acpAgent{}, session...)
		if code := r.wait(); code != 0 {
			t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
		}
		r.checkTransparent(report)
		if !exists(streamPath(root, e2eSession, "")) {
			t.Error("acpv2 wrote no stream")
		}
		if exists(streamPath(root, e2eSession, "acme")) {
			t.Error("acme wrote a stream although its checksum is wrong")
		}
		log := logText(t, root)
		if !strings.Contains(log, "plugin checksum mismatch") || !strings.Contains(log, sum) {
			t.Errorf("the log does not name the checksum mismatch (and the real sum):\n%s", log)
		}
	})
}

// TestPluginsCommand: `acptap plugins --json` lists the built-in acpv2 (it
// starts) and the external acme with its sha256, pinned, and the revision
// it is configured for; a wrong pin makes acme fail to start and the
// command exit 1.
func TestPluginsCommand(t *testing.T) {
	dir := pluginDir(t, map[string]string{"acme": acmeBin})
	path := filepath.Join(dir, "acptap-plugin-acme")
	sum := fileSHA256(t, path)
	type report struct {
		Name, Version, Kind, Path, SHA256, Error string
		Pinned, Starts                           bool
		Inputs, Outputs, Capabilities, Revisions []string
	}
	list := func(t *testing.T, pin string, wantCode int) map[string]report {
		t.Helper()
		out, errOut, code := runAcptap(t, "plugins", "--json", "--store", t.TempDir(), "--config", vendorConfig(t, dir, pin))
		if code != wantCode {
			t.Fatalf("acptap plugins exited %d, want %d; stderr: %s", code, wantCode, errOut)
		}
		var reps []report
		if err := json.Unmarshal([]byte(out), &reps); err != nil {
			t.Fatalf("acptap plugins --json: %v\n%s", err, out)
		}
		m := map[string]report{}
		for _, r := range reps {
			m[r.Name] = r
		}
		return m
	}

	got := list(t, sum, 0)
	acpv2, acme := got["acpv2"], got["acme"]
	if acpv2.Kind != "built-in" || !acpv2.Starts || !slices.Contains(acpv2.Inputs, revision) || !slices.Contains(acpv2.Revisions, revision) {
		t.Errorf("acpv2: %+v", acpv2)
	}
	if acme.Kind != "external" || !acme.Starts || acme.SHA256 != sum || !acme.Pinned || acme.Path != path ||
		slices.Compare(acme.Inputs, []string{"_acme/*"}) != 0 || slices.Compare(acme.Outputs, []string{"asr"}) != 0 ||
		slices.Compare(acme.Capabilities, []string{"record"}) != 0 || slices.Compare(acme.Revisions, []string{revision}) != 0 {
		t.Errorf("acme: %+v (want sha256 %s, path %s)", acme, sum, path)
	}

	bad := list(t, strings.Repeat("0", 64), 1)["acme"]
	if bad.Starts || !strings.Contains(bad.Error, "checksum mismatch") || bad.SHA256 != sum {
		t.Errorf("acme with a wrong pin: %+v", bad)
	}

	table, _, code := runAcptap(t, "plugins", "--store", t.TempDir(), "--config", vendorConfig(t, dir, sum))
	if code != 0 || !strings.Contains(table, "acme") || !strings.Contains(table, "acpv2") || !strings.Contains(table, sum[:12]+" (pinned)") {
		t.Errorf("acptap plugins (table) exited %d:\n%s", code, table)
	}
}

// TestPluginClaimChecked: a plugin that claims a capability the host does
// not know does not start (sdk.Info.Check, run on every plugin the host
// starts), and `acptap plugins` says which name and, since the plugin is
// configured for a revision, exits 1.
func TestPluginClaimChecked(t *testing.T) {
	dir := pluginDir(t, map[string]string{"faulty": faultyBin})
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), fmt.Sprintf("plugin_path = [%q]\n\n[revisions]\n%q = [\"acpv2\", \"faulty\"]\n", dir, revision))
	t.Setenv("FAULTY_INFO", "unknown-capability")
	out, errOut, code := runAcptap(t, "plugins", "--json", "--store", t.TempDir(), "--config", cfg)
	if code != 1 {
		t.Fatalf("acptap plugins exited %d, want 1; stderr: %s\n%s", code, errOut, out)
	}
	var reps []struct {
		Name, Error string
		Starts      bool
	}
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("acptap plugins --json: %v\n%s", err, out)
	}
	for _, r := range reps {
		if r.Name == "faulty" {
			if r.Starts || !strings.Contains(r.Error, `unknown capability "stream"`) {
				t.Errorf("faulty: %+v, want it refused for its unknown capability", r)
			}
			return
		}
	}
	t.Fatalf("faulty not listed: %s", out)
}

// TestNoOrphanPlugins: when `acptap record` is SIGKILLed mid-session, the
// plugin processes (built-in and external) and the agent do not outlive it.
func TestNoOrphanPlugins(t *testing.T) {
	dir := pluginDir(t, map[string]string{"acme": acmeBin})
	path := filepath.Join(dir, "acptap-plugin-acme")
	cfg := vendorConfig(t, dir, fileSHA256(t, path))
	r, _ := startScripted(t, []string{"--store", t.TempDir(), "--config", cfg}, 0)
	r.converse(&acpAgent{}, initLine, newLine, promptLine(2, 1))

	pid := r.cmd.Process.Pid
	procs := []proc{
		waitChild(t, pid, "acpv2 plugin", builtinPlugin("acpv2")),
		waitChild(t, pid, "acme plugin", externalPlugin(path)),
		waitChild(t, pid, "agent", helperAgent(helperACP)),
	}
	for _, p := range procs {
		t.Logf("%s: pid %d (%s)", p.what, p.pid, exe(p.pid))
	}
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = r.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		r.state = r.cmd.ProcessState
	case <-time.After(pollDeadline):
		t.Fatal("acptap record did not die (or its stderr stayed open)")
	}
	for _, p := range procs {
		poll(t, fmt.Sprintf("the %s (pid %d) to exit after acptap record was killed", p.what, p.pid), func() bool { return !p.alive() })
	}
}

// TestPluginsCannotReadEditorStdin: go-plugin starts plugins with the
// host's stdin; acptap record moves the editor's pipe away first, so a
// plugin's stdin is /dev/null and it cannot take bytes meant for the agent.
func TestPluginsCannotReadEditorStdin(t *testing.T) {
	dir := pluginDir(t, map[string]string{"probe": faultyBin})
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), fmt.Sprintf(`plugin_path = [%q]

[revisions]
%q = ["acpv2", "probe"]

[plugins.probe.config]
fault = "stdin"
`, dir, revision))
	root := t.TempDir()
	r, report := startScripted(t, []string{"--store", root, "--config", cfg}, 0)
	agent := &acpAgent{}
	r.converse(agent, initLine, newLine)
	probe := streamPath(root, e2eSession, "probe")
	poll(t, "the probe plugin's record", func() bool { return lineCount(probe) >= 2 })
	r.converse(agent, promptLine(2, 1))
	if code := r.wait(); code != 0 {
		t.Fatalf("acptap record exited %d; stderr: %s", code, r.stderr.String())
	}
	r.checkTransparent(report)
	recs := records(t, probe)
	if got := recs[1]["stdin"]; got != os.DevNull {
		t.Fatalf("the plugin's stdin is %v, want %s", got, os.DevNull)
	}
}
