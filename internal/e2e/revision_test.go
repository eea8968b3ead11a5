package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/testpeers"
	"github.com/acptap/acptap/sdk"
)

// TestSDK24PeersRecordAlpha13 puts `acptap record` between the official
// SDK 2.4.0 client and agent (testdata/sdk24: the ACP v2 draft
// 2.0.0-alpha.13), which use session/set_title, background work,
// tool_call/cancel, terminal size, terminal/cancel, session/status,
// session/archive and auth/status. No configuration names the revision:
// the initialize exchange shows it, and the plugins that claim it map it.
// The bytes pass through unchanged (shell tees on the agent side), the
// wire log says which revision and why, the stream names the draft, has
// no nonconforming declaration, and `acptap validate` accepts it. In the
// same run the SDK 2.0.2 peers still produce today's alpha.9 stream.
func TestSDK24PeersRecordAlpha13(t *testing.T) {
	dir := testpeers.NodeSDK24Dir(t)
	tmp := t.TempDir()
	store := filepath.Join(tmp, "store")
	inRaw, outRaw := filepath.Join(tmp, "agent-in.raw"), filepath.Join(tmp, "agent-out.raw")
	agent := []string{acptapBin, "record", "--store", store, "--",
		"sh", "-c", `tee "$1" | node "$2" | tee "$3"`, "sh", inRaw, filepath.Join(dir, "agent.mjs"), outRaw}
	res := testpeers.RunSDKClientIn(t, dir, "client.mjs", nil, agent)
	res.RequireOK(t)

	// Byte transparency, both directions.
	var sent, recv bytes.Buffer
	for _, l := range testpeers.ReadTrace(t, res.Trace) {
		if l.Dir == "send" {
			sent.WriteString(l.Line + "\n")
		} else {
			recv.WriteString(l.Line + "\n")
		}
	}
	if got := readFile(t, inRaw); !bytes.Equal(got, sent.Bytes()) {
		t.Fatalf("client → agent: the agent read %d bytes, the client sent %d%s", len(got), sent.Len(), firstDiff(got, sent.Bytes()))
	}
	if got := readFile(t, outRaw); !bytes.Equal(got, recv.Bytes()) {
		t.Fatalf("agent → client: the agent wrote %d bytes, the client received %d%s", len(got), recv.Len(), firstDiff(got, recv.Bytes()))
	}

	// The wire log: every line, and the revision entry with its reason.
	wl := wireLog(t, store)
	frames := readWire(t, wl)
	if len(frames[sdk.C2A])+len(frames[sdk.A2C]) != bytes.Count(sent.Bytes(), []byte("\n"))+bytes.Count(recv.Bytes(), []byte("\n")) {
		t.Errorf("wire log has %d+%d frames for %d+%d lines", len(frames[sdk.C2A]), len(frames[sdk.A2C]),
			bytes.Count(sent.Bytes(), []byte("\n")), bytes.Count(recv.Bytes(), []byte("\n")))
	}
	rev := wireRevision(t, wl)
	if rev.Revision != "acp/2@2.0.0-alpha.13" || !strings.Contains(rev.Reason, "capabilities.session.title") ||
		rev.SelectedBy != "claims" || strings.Join(rev.Plugins, ",") != "acpv2a13,aep" {
		t.Errorf("revision entry = %+v", rev)
	}

	stream := streamPath(store, res.Summary.SessionID, "")
	recs := records(t, stream)
	src, _ := json.Marshal(recs[0]["producer"].(map[string]any)["source"])
	if string(src) != `{"format":"acp","formatVersion":"2.0.0-alpha.13"}` {
		t.Errorf("producer.source = %s", src)
	}
	all := string(readFile(t, stream))
	if strings.Contains(all, "nonconforming") {
		t.Errorf("the stream declares nonconforming frames:\n%s", all)
	}
	has := func(what string, pred func(map[string]any) bool) {
		t.Helper()
		for _, r := range recs {
			if pred(r) {
				return
			}
		}
		t.Errorf("no record for %s", what)
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	typ := func(s string) func(map[string]any) bool { return func(r map[string]any) bool { return r["type"] == s } }
	has("set_title → session_info", func(r map[string]any) bool { return r["type"] == "session_info" && r["title"] == "Fix the parser" })
	has("background work in a state record", func(r map[string]any) bool {
		return r["type"] == "state" && strings.Contains(js(r["native"]), `"background":[{"terminalId":"term-dev","type":"terminal"}`)
	})
	has("tool_call/cancel", typ("org.agent-session.acp/tool_call_cancel"))
	has("its outcome", typ("org.agent-session.acp/tool_call_cancel_response"))
	has("the cancelled call", func(r map[string]any) bool { return r["type"] == "tool_result" && r["status"] == "cancelled" })
	has("terminal size", func(r map[string]any) bool {
		return r["type"] == "terminal" && js(r["_org.acptap/size"]) == `{"cols":100,"rows":30}` && r["signal"] == "SIGTERM"
	})
	has("terminal/cancel", typ("org.agent-session.acp/terminal_cancel_response"))
	has("session/status", typ("org.agent-session.acp/session_status_response"))
	has("session/archive", typ("org.agent-session.acp/session_archive"))
	has("archive ends the session", func(r map[string]any) bool { return r["type"] == "state" && r["state"] == "ended" })
	has("session/unarchive", typ("org.agent-session.acp/session_unarchive_response"))

	if out, errOut, code := runAcptap(t, "validate", stream); code != 0 {
		t.Errorf("acptap validate exited %d: %s%s", code, out, errOut)
	}
	// A rebuild decides the revision again from the wire log: the same
	// stream, byte for byte.
	fresh := rebuild(t, wl)
	if a, b := readFile(t, stream), readFile(t, streamPath(fresh, res.Summary.SessionID, "")); !bytes.Equal(a, b) {
		t.Errorf("the rebuilt stream differs%s", firstDiff(a, b))
	}
	if _, err := os.Stat(filepath.Join(store, "aep", "acp", res.Summary.SessionID+".jsonl")); err != nil {
		t.Errorf("no AEP events: %v", err)
	}
	out, _, _ := runAcptap(t, "plugins", "--store", store, "--json")
	var reports []struct {
		Name             string   `json:"name"`
		Inputs           []string `json:"inputs"`
		ClaimedRevisions []string `json:"claimedRevisions"`
	}
	if err := json.Unmarshal([]byte(out), &reports); err != nil {
		t.Fatalf("acptap plugins --json: %v\n%s", err, out)
	}
	claimed := map[string][]string{}
	for _, r := range reports {
		claimed[r.Name] = r.ClaimedRevisions
	}
	if !equalStrings(claimed["acpv2a13"], []string{"acp/2@2.0.0-alpha.13"}) || !equalStrings(claimed["aep"], []string{"acp/2@2.0.0-alpha.13"}) {
		t.Errorf("acptap plugins claims = %v", claimed)
	}

	t.Run("SDK202StillAlpha9", func(t *testing.T) { checkSDK202Alpha9(t, acptapBin, false) })
}

// checkSDK202Alpha9 records the SDK 2.0.2 v2 peers ("everything" then
// "basic") and compares their stream, without times, frame numbers and
// the wire log's name, with testdata/sdk202_alpha9.golden.jsonl: the
// stream the binary before the alpha.13 plugin wrote. write (the
// E2E_BASE_ACPTAP environment variable names that binary) regenerates it.
func checkSDK202Alpha9(t *testing.T, bin string, write bool) {
	sdkDir := testpeers.NodeSDKDir(t)
	store := filepath.Join(t.TempDir(), "store")
	agent := []string{bin, "record", "--store", store, "--", "node", filepath.Join(sdkDir, "v2-agent.mjs")}
	res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--no-mcp"}, agent)
	res.RequireOK(t)
	// The checkout's path is not part of what is compared.
	got := strings.ReplaceAll(normalizedStream(t, streamPath(store, res.Summary.SessionID, "")), testpeers.ModuleRoot(t), "<module>")
	golden := filepath.Join("testdata", "sdk202_alpha9.golden.jsonl")
	if write {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if rev := wireRevision(t, wireLog(t, store)); rev.Revision != "acp/2@2.0.0-alpha.9" || !strings.Contains(rev.Reason, "default schema_revision") {
		t.Errorf("revision entry = %+v", rev)
	}
	if diff := cmp.Diff(string(readFile(t, golden)), got); diff != "" {
		t.Errorf("the SDK 2.0.2 stream differs from the alpha.9 stream acptap wrote before (-before +now):\n%s", diff)
	}
}

// TestWriteSDK202Golden regenerates testdata/sdk202_alpha9.golden.jsonl
// with the binary E2E_BASE_ACPTAP names (built from the commit before the
// alpha.13 plugin); without it, it skips.
func TestWriteSDK202Golden(t *testing.T) {
	bin := os.Getenv("E2E_BASE_ACPTAP")
	if bin == "" {
		t.Skip("E2E_BASE_ACPTAP is not set")
	}
	checkSDK202Alpha9(t, bin, true)
}

// normalizedStream is a stream with what differs between two recordings
// of the same exchange taken out: times, frame numbers, the wire log's
// name. Records are sorted within runs of the same timeless content only
// by their own order, which the exchange fixes.
func normalizedStream(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range records(t, path) {
		strip(r)
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// strip removes times and native references, recursively.
func strip(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"ts", "observedAt", "createdAt"} {
			if _, ok := x[k]; ok {
				x[k] = "…"
			}
		}
		if n, ok := x["native"].(map[string]any); ok {
			delete(n, "ref")
		}
		for _, e := range x {
			strip(e)
		}
	case []any:
		for _, e := range x {
			strip(e)
		}
	}
}

// wireRevision returns the wire log's revision entry.
func wireRevision(t *testing.T, path string) wire.Revision {
	t.Helper()
	r, err := wire.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	rev, ok := r.Revision()
	if !ok {
		t.Fatalf("%s has no revision entry", path)
	}
	return rev
}

func equalStrings(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return strings.Join(a, ",") == strings.Join(b, ",")
}

var _ = exec.Command

// TestDroppedInPluginIsSelectedByClaim: an external plugin in plugin_path
// that claims the alpha.13 draft (testdata/faultyplugin, no fault) maps an
// alpha.13 connection beside the built-ins that claim it, with no
// revisions entry: the wire log's revision entry lists it, selected by
// claims, and it writes its own stream; `acptap plugins` shows the claim.
func TestDroppedInPluginIsSelectedByClaim(t *testing.T) {
	dir := testpeers.NodeSDK24Dir(t)
	plugins := pluginDir(t, map[string]string{"faulty": faultyBin})
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), "plugin_path = ["+strconvQuote(plugins)+"]\n")
	store := filepath.Join(t.TempDir(), "store")
	agent := []string{acptapBin, "record", "--store", store, "--config", cfg, "--", "node", filepath.Join(dir, "agent.mjs")}
	res := testpeers.RunSDKClientIn(t, dir, "client.mjs", nil, agent)
	res.RequireOK(t)
	rev := wireRevision(t, wireLog(t, store))
	if rev.SelectedBy != "claims" || strings.Join(rev.Plugins, ",") != "acpv2a13,faulty,aep" {
		t.Errorf("revision entry = %+v, want acpv2a13,faulty,aep by claims", rev)
	}
	if recs := records(t, streamPath(store, res.Summary.SessionID, "faulty")); len(recs) != 2 {
		t.Errorf("faulty.asr.jsonl has %d lines, want its header and record", len(recs))
	}
	out, _, _ := runAcptap(t, "plugins", "--config", cfg)
	if !regexpLine(out, `(?m)^faulty\s.*acp/2@2\.0\.0-alpha\.13 \(claimed\)`) {
		t.Errorf("acptap plugins does not show faulty's claim:\n%s", out)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func regexpLine(text, pattern string) bool { return regexp.MustCompile(pattern).MatchString(text) }
