package acpv1

import (
	"bytes"
	"context"
	"errors"
	"go/build"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
	"github.com/google/go-cmp/cmp"
)

// TestInfo: the plugin claims live ACP v1 and stored v1 logs, produces
// ASR, and records and converts.
func TestInfo(t *testing.T) {
	info, err := New().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := sdk.Info{Name: "acpv1", Version: Version, Description: info.Description,
		Inputs: []string{"acp/1", "acp-v1-log"}, Outputs: []sdk.Format{"asr"}, Capabilities: []sdk.Capability{"record", "convert", "replay"}}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Error(diff)
	}
}

// TestProducerMethodByMode: producer.method is "converter" for stored logs
// and "recorder" for live traffic and its rebuild; the source is ACP v1;
// the losses that always apply are in the header.
func TestProducerMethodByMode(t *testing.T) {
	for mode, method := range map[sdk.Mode]string{sdk.ModeRecord: "recorder", sdk.ModeRebuild: "recorder", sdk.ModeConvert: "converter"} {
		h := records(t, mapAll(t, startReq(mode, ""), parseFrames(t, opened())), "s1")[0]
		want := `{"lossy":["_org.acptap/v1_turn_state","inference","message.author","timestamps","usage"],"method":"` + method +
			`","name":"acptap","plugin":{"name":"acpv1","version":"0.1.0"},"source":{"format":"acp","formatVersion":"1"},"version":"0.1.0"}`
		if got := js(h["producer"]); got != want {
			t.Errorf("%s: producer = %s\nwant %s", mode, got, want)
		}
	}
}

// TestASR703_AgentInfo: agentInfo gives agent.name (registry, else the
// fallback) and agent.version; without agentInfo (optional in v1) the
// header has the configured name or no agent.
func TestASR703_AgentInfo(t *testing.T) {
	noInfo := `a2c {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`
	nullInfo := `a2c {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":null}}`
	other := `a2c {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"My Agent","version":"3"}}}`
	tests := []struct {
		name, resp, config, want string
	}{
		{"registry", initResp, "", `{"name":"claude-code-acp","version":"2.1.0"}`},
		{"fallback", other, "", `{"name":"org.agent-session.acp.my-agent","version":"3"}`},
		{"configured name wins", other, `{"agentName":"com.example.a"}`, `{"name":"com.example.a","version":"3"}`},
		{"no agentInfo", noInfo, "", `null`},
		{"null agentInfo", nullInfo, "", `null`},
		{"no agentInfo, configured", noInfo, `{"agentName":"com.example.a"}`, `{"name":"com.example.a"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs := mapAll(t, startReq(sdk.ModeRecord, tt.config), parseFrames(t, wire(initReq, tt.resp, newReq, newResp)))
			if got := js(records(t, outs, "s1")[0]["agent"]); got != tt.want {
				t.Errorf("agent = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []string{`{"agentName":"not reverse dns"}`, `{"agentNmae":"com.x.y"}`, `[1]`} {
		if _, err := New().Start(context.Background(), startReq(sdk.ModeRecord, cfg)); !errors.Is(err, ErrConfig) {
			t.Errorf("config %s: err = %v, want ErrConfig", cfg, err)
		}
	}
}

// TestASR712_NoSecrets: MCP server configuration and terminal env values
// never reach any output.
func TestASR712_NoSecrets(t *testing.T) {
	outs := mapAll(t, live, parseFrames(t, kindFixtures["client_terminals"]))
	for _, o := range outs {
		blob := string(o.JSON) + o.Summary + o.Detail
		for _, secret := range []string{"SECRET", "GH_TOKEN", "TOKEN"} {
			if strings.Contains(blob, secret) {
				t.Errorf("output carries %q: %s", secret, blob)
			}
		}
	}
}

// TestASR717_LoadOnLaterConnection: a session/load on a later connection
// (the store's stream given as a session frame) writes nothing the stream
// has, although the replay reveals the prompts' native ids; and new
// messages' derived ids continue after the stored history.
func TestASR717_LoadOnLaterConnection(t *testing.T) {
	first := mapAll(t, live, parseFrames(t, opened(
		prompt(2, "hello"),
		chunk(thought, "", text("Greet.")),
		chunk(said, "", text("Hi!")),
		answer(2, "end_turn"),
	)))
	stored, _ := streams(first)
	lines := bytes.Split(bytes.TrimSuffix(stored["s1"], []byte("\n")), []byte("\n"))
	second := wire(initReq, initResp,
		`c2a {"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s1","cwd":"/w/proj","mcpServers":[]}}`,
		chunk(user, "user-1", text("hello")),
		chunk(thought, "", text("Greet.")),
		chunk(said, "", text("Hi!")),
		`a2c {"jsonrpc":"2.0","id":1,"result":{}}`,
		prompt(2, "more"),
		chunk(said, "", text("More.")),
		answer(2, "end_turn"),
	)
	for name, run := range map[string]func(t *testing.T) []sdk.Output{
		"session frame": func(t *testing.T) []sdk.Output {
			b := pluginwire.NewFrameBuilder()
			frames := b.Session(nil, 1, sdk.A2C, base, sdk.SessionInfo{ID: "s1", Connections: 1, Prior: lines})
			for _, f := range parseFrames(t, second) {
				f.Seq++
				if f.ReplyTo != 0 {
					f.ReplyTo++
				}
				frames = append(frames, f)
			}
			return mappertest.Run(t, New(), live, frames, 0)
		},
	} {
		t.Run(name, func(t *testing.T) {
			outs := run(t)
			// The stored stream and what this connection appended are
			// one valid stream.
			checkStreams(t, append(append([]sdk.Output(nil), first...), outs...))
			rs := records(t, outs, "s1")
			var got []string
			for _, r := range rs {
				got = append(got, str(r["type"])+" "+str(r["messageId"])+" "+str(r["state"]))
			}
			want := []string{"state  resumed", "message msg:4 ", "message msg:5 ", "state  idle"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("records of the second connection (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConvertSyntheticTimes: a converted log without times (host/logimport
// gives such frames the Unix epoch plus the line number) has records
// without ts and a header without createdAt (ASR-707).
func TestConvertSyntheticTimes(t *testing.T) {
	frames := parseFrames(t, kindFixtures["chunk_message_ids"])
	for i := range frames {
		frames[i].At = time.Unix(0, 0).Add(time.Duration(i+1) * time.Millisecond).UTC()
	}
	outs := mapAll(t, startReq(sdk.ModeConvert, ""), frames)
	for _, o := range outs {
		if bytes.Contains(o.JSON, []byte(`"ts":`)) || bytes.Contains(o.JSON, []byte(`"createdAt":`)) || bytes.Contains(o.JSON, []byte(`"1970-`)) {
			t.Errorf("a synthetic time was recorded: %s", o.JSON)
		}
	}
}

// TestDeterminism: the same frames give byte-identical outputs, however
// they are batched, live and converted.
func TestDeterminism(t *testing.T) {
	for _, mode := range []sdk.Mode{sdk.ModeRecord, sdk.ModeConvert} {
		for _, name := range sortedNames(kindFixtures) {
			frames := parseFrames(t, kindFixtures[name])
			ref := render(mappertest.Run(t, New(), startReq(mode, ""), frames, 0))
			for _, bs := range []int{1, 2, 5} {
				if got := render(mappertest.Run(t, New(), startReq(mode, ""), frames, bs)); !bytes.Equal(got, ref) {
					t.Fatalf("%s/%s: batch size %d changed the outputs", mode, name, bs)
				}
			}
		}
	}
}

// TestConformance runs the SDK's conformance suite over the fixtures:
// Info, determinism over batch sizes and real gRPC, its malformed corpus.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gRPC servers")
	}
	corpus := map[string][]sdk.Frame{}
	for name, text := range kindFixtures {
		corpus[name] = parseFrames(t, text)
	}
	for name, text := range lossFixtures {
		corpus[name] = parseFrames(t, text)
	}
	mappertest.Suite{New: New, Start: live, Corpus: corpus}.Run(t)
	checkStreams(t, mappertest.Run(t, New(), live, mappertest.Malformed(base), 0))
}

// TestImportsSDKOnly: a plugin imports only the standard library, sdk/…,
// the engines under plugins/internal and the module-root internal libraries
// sdk and plugins share (never the host, nor another plugin, nor a
// third-party module).
func TestImportsSDKOnly(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") && !pluginMayImport(imp) {
			t.Errorf("acpv1 imports %s", imp)
		}
	}
}

// TestASR717_ReplayWithoutThoughts: a replay that leaves out what the live
// traffic had (thoughts, here) does not fold an agent message into
// another: only a replayed prompt takes the id derived live at its
// position; agent messages keep their own ids, and nothing recorded is
// recorded again.
func TestASR717_ReplayWithoutThoughts(t *testing.T) {
	outs := mapAll(t, live, parseFrames(t, opened(
		prompt(2, "hello"),
		chunk(thought, "", text("Think.")),
		chunk(said, "a-1", text("Hi!")),
		answer(2, "end_turn"),
		`c2a {"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"s1","cwd":"/w/proj","mcpServers":[]}}`,
		chunk(user, "u-1", text("hello")),
		chunk(said, "a-1", text("Hi!")),
		`a2c {"jsonrpc":"2.0","id":3,"result":{}}`,
		prompt(4, "next"),
		answer(4, "end_turn"),
	)))
	var got []string
	for _, r := range records(t, outs, "s1") {
		if r["type"] == "message" || r["type"] == "state" {
			got = append(got, str(r["messageId"])+str(r["state"])+" "+str(r["supersedes"]))
		}
	}
	want := []string{"msg:1 ", "msg:2 ", "a-1 ", "idle ", "resumed ", "msg:4 ", "idle "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages and states (-want +got):\n%s", diff)
	}
}

// pluginMayImport: the module's packages a plugin may import (the rest of
// the rule, with its violation cases, is internal/depcheck's).
func pluginMayImport(imp string) bool {
	for _, p := range []string{"sdk", "plugins/internal/", "internal/acpschema", "internal/jsonscan", "internal/replay", "internal/release"} {
		if q := "github.com/acptap/acptap/" + p; imp == q || strings.HasPrefix(imp, strings.TrimSuffix(q, "/")+"/") {
			return true
		}
	}
	return false
}

// TestWarmCompilesTheCheckedSchema: the plugin process warms what the
// first frame needs (host/cli servePlugin calls Warm): the schema its
// engine checks v1 lines against.
func TestWarmCompilesTheCheckedSchema(t *testing.T) {
	w, ok := New().(interface{ Warm() })
	if !ok {
		t.Fatal("the acpv1 mapper has no Warm")
	}
	w.Warm()
	if got := options(acpasr.Config{}, sdk.ModeConvert).Schema; got != acpschema.V1Unstable {
		t.Errorf("the engine checks against schema %v; Warm compiles %v", got, acpschema.V1Unstable)
	}
}
