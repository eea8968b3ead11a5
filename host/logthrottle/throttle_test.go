package logthrottle

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
)

// TestThrottleCountsSuppressed: 10 000 repeats of one warning write the
// burst and one count line; another message is not held back; after the
// window the message is written again and the count of the first window
// comes before it.
func TestThrottleCountsSuppressed(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	tw := New(&buf)
	tw.Now = func() time.Time { return now }
	log := hclog.New(&hclog.LoggerOptions{Output: tw, JSONFormat: true, Level: hclog.Info, Name: "acptap"})
	for i := 0; i < 10000; i++ {
		log.Named("acpv2").Warn("frame is not JSON", "frames", []uint64{uint64(i)})
	}
	log.Info("other")
	now = now.Add(2 * DefaultWindow)
	log.Named("acpv2").Warn("frame is not JSON", "frames", []uint64{10000})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var counts []int
	plain, other := 0, 0
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		switch m["@message"] {
		case "frame is not JSON":
			plain++
		case "other":
			other++
		case SuppressedMessage:
			if m["message"] != "frame is not JSON" || m["@module"] != "acptap.acpv2" {
				t.Errorf("count line %v", m)
			}
			counts = append(counts, int(m["suppressed"].(float64)))
		}
	}
	if plain != DefaultBurst+1 || other != 1 || len(counts) != 1 || counts[0] != 10000-DefaultBurst {
		t.Errorf("%d lines written, %d other, counts %v; want %d, 1, [%d]", plain, other, counts, DefaultBurst+1, 10000-DefaultBurst)
	}
	if !strings.Contains(lines[len(lines)-2], SuppressedMessage) {
		t.Errorf("the count does not come before the next window's line: %q", lines[len(lines)-2])
	}
}

// TestThrottleManyMessages: distinct messages beyond MaxKeys share a key,
// so memory stays bounded and they are still counted.
func TestThrottleManyMessages(t *testing.T) {
	var buf bytes.Buffer
	tw := New(&buf)
	for i := 0; i < MaxKeys+1000; i++ {
		tw.Write([]byte(`{"@level":"warn","@module":"m","@message":"msg ` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `","n":` + string(rune('0'+i%10)) + "}\n"))
		tw.Write([]byte(`{"@level":"warn","@module":"m","@message":"id ` + time.Duration(i).String() + "\"}\n"))
	}
	if len(tw.keys) > MaxKeys+1 {
		t.Errorf("%d keys tracked", len(tw.keys))
	}
	tw.Close()
	if !strings.Contains(buf.String(), `"message":"(other messages)"`) {
		t.Error("messages beyond MaxKeys are not counted")
	}
}
