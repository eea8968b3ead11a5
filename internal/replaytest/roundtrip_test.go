package replaytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRoundtripCommand: `acptap roundtrip` holds (exit 0) for a real
// recording, for the stream with every record type and for a session the
// SDK's agent drove with every update kind; it prints the differences and
// exits 1 when recording the replay does not give the same context view.
func TestRoundtripCommand(t *testing.T) {
	demo, demoID := demoStore(t)
	cases := map[string][]string{
		"demo":  {"--store", demo, demoID},
		"every": {everyTypeFixture, "-v"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			recorded := filepath.Join(t.TempDir(), "recorded.asr.jsonl")
			r := acptap(t, "", append([]string{"roundtrip", "--recorded", recorded}, args...)...)
			if r.code != 0 || !strings.Contains(r.stdout, "the round trip holds (ASR-732)") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if name == "every" && !strings.Contains(r.stdout, "excused (_org.acptap/redacted_root)") {
				t.Errorf("-v does not list what the report excused:\n%s", r.stdout)
			}
			if v := acptap(t, "", "validate", recorded); v.code != 0 {
				t.Errorf("the recording of the replay is not a valid stream:\n%s%s", v.stdout, v.stderr)
			}
		})
	}
	t.Run("sdk", func(t *testing.T) {
		store, id := sdkStore(t)
		r := acptap(t, "", "roundtrip", "--store", store, id)
		if r.code != 0 || !strings.Contains(r.stdout, "holds") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("partial snapshots", func(t *testing.T) {
		// The SDK session rebuilt with a snapshot at every update (ASR-705's
		// MAY): snapshots are earlier revisions, so the round trip of the
		// stream holds as it does without them.
		store, id := sdkStore(t)
		wires, _ := filepath.Glob(filepath.Join(store, "wire", "*.jsonl"))
		cfg := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(cfg, []byte("[plugins.acpv2.config]\npartialEvery = 1\n"), 0o600)
		fresh := filepath.Join(t.TempDir(), "rebuilt")
		if r := acptap(t, "", append([]string{"rebuild", "--store", fresh, "--config", cfg}, wires...)...); r.code != 0 {
			t.Fatalf("rebuild: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		b, _ := os.ReadFile(streamFile(fresh, id))
		if !strings.Contains(string(b), `"status":"partial"`) {
			t.Fatalf("the rebuilt stream has no partial snapshot:\n%s", b)
		}
		r := acptap(t, "", "roundtrip", streamFile(fresh, id))
		if r.code != 0 || !strings.Contains(r.stdout, "holds") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("a difference fails", func(t *testing.T) {
		// A thought stored under the ID ASR-727 derives for a reasoning part
		// of another message: replaying both sends that ID twice, and the
		// recorder folds them into one message.
		s := filepath.Join(t.TempDir(), "clash.asr.jsonl")
		os.WriteFile(s, []byte(strings.Join([]string{
			`{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"t","lossy":[]}}`,
			`{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"assistant","content":[{"type":"reasoning","text":"a"},{"type":"text","text":"b"}]}`,
			`{"type":"message","seq":2,"id":"r2","messageId":"m1#thought-0","role":"assistant","content":[{"type":"reasoning","text":"c"}]}`,
		}, "\n")+"\n"), 0o600)
		r := acptap(t, "", "roundtrip", s)
		if r.code != 1 || !strings.Contains(r.stdout, "differences:") || !strings.Contains(r.stdout, "message:m1#thought-0") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("usage", func(t *testing.T) {
		if r := acptap(t, "", "roundtrip"); r.code != 2 {
			t.Errorf("no argument: exit %d", r.code)
		}
	})
}
