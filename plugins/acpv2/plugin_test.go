package acpv2

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/google/go-cmp/cmp"
)

// TestASR700_Info: the plugin claims alpha.9 and produces ASR records.
func TestASR700_Info(t *testing.T) {
	info, err := New().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := sdk.Info{Name: "acpv2", Version: Version, Description: info.Description,
		Inputs: []string{"acp/2@2.0.0-alpha.9"}, Outputs: []sdk.Format{"asr"}, Capabilities: []sdk.Capability{"record", "replay"}}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Error(diff)
	}
}

// TestASR700_HeaderProducer: producer.method, source, name and plugin.
func TestASR700_HeaderProducer(t *testing.T) {
	outs := mapAll(t, startReq(""), loadFrames(t, "turn"))
	h := records(t, outs, "s1")
	if len(h) == 0 {
		t.Fatalf("no stream for s1")
	}
	want := `{"lossy":["inference","message.author","timestamps","usage"],"method":"recorder","name":"acptap","plugin":{"name":"acpv2","version":"0.1.0"},"source":{"format":"acp","formatVersion":"2.0.0-alpha.9"},"version":"0.1.0"}`
	if got := js(h[0]["producer"]); got != want {
		t.Errorf("producer = %s\nwant %s", got, want)
	}
}

// TestGoldenThroughPlugin: the plugin's outputs for the engine's fixtures
// are the engine's golden files, byte for byte (the engine's tests run it
// with this plugin's options).
func TestGoldenThroughPlugin(t *testing.T) {
	for _, name := range []string{"turn", "full"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(engineTestdata, name+".golden.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			got := render(mapAll(t, startReq(""), loadFrames(t, name)))
			if !bytes.Equal(want, got) {
				t.Errorf("%s: the plugin's outputs differ from the engine's golden file:\n%s", name, cmp.Diff(string(want), string(got)))
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []string{`{"agentName":"not reverse dns"}`, `{"agentNmae":"com.x.y"}`, `[1]`, `{"registry":{"agents":"x"}}`} {
		if _, err := New().Start(context.Background(), startReq(cfg)); !errors.Is(err, ErrConfig) {
			t.Errorf("config %s: err = %v, want ErrConfig", cfg, err)
		}
	}
}
