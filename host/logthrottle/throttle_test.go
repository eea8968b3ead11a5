package logthrottle

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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

// headByUnmarshal is head's oracle: the entry decoded whole by encoding/json
// into a map (exact keys, the last of duplicates wins, null is no value).
func headByUnmarshal(p []byte) (h entryHead, plugin string, ok bool) {
	var m map[string]any
	if json.Unmarshal(p, &m) != nil || m == nil {
		return h, "", false
	}
	for k, dst := range map[string]*string{"@level": &h.Level, "@module": &h.Module, "@message": &h.Message} {
		switch v := m[k].(type) {
		case nil:
		case string:
			*dst = v
		default:
			return h, "", false
		}
	}
	plugin, _ = m["plugin"].(string)
	return h, plugin, true
}

// TestHeadMatchesUnmarshal: the one-pass head reads what decoding the whole
// entry reads, for entries hclog writes (every kind of argument, messages
// that need escaping) and for hand-made edge cases.
func TestHeadMatchesUnmarshal(t *testing.T) {
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, Level: hclog.Trace, Name: "acptap"})
	msgs := []string{"plain", "nonconforming frame: it does not conform", `quote " and \ slash`, "tab\tnew\nline", "ünïcødé ✓ \u2028", ""}
	for i, m := range msgs {
		l := log.Named("acpv2")
		switch i % 3 {
		case 0:
			l.Warn(m, "plugin", "acpv2", "frames", []uint64{1, 2}, "detail", m)
		case 1:
			l.Info(m, "plugin", 42, "session", "s")
		default:
			l.Named("finisher").Error(m, "error", errors.New(m))
		}
	}
	lines := bytes.SplitAfter(buf.Bytes(), []byte("\n"))
	lines = append(lines,
		[]byte(`{"@level":"warn","@message":"a","@message":"b","plugin":"x","plugin":7}`),
		[]byte(`{"@level":null,"@message":"m","@module":"mod"}`),
		[]byte(`{"@lev\u0065l":"info","@message":"escaped key"}`),
		[]byte(`{"@level":3,"@message":"m"}`),
		[]byte(`{"@message":"m"} trailing`),
		[]byte(`not json at all`),
		[]byte(`[1,2]`),
		[]byte(`{}`),
	)
	for _, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		h, p, ok := head(l)
		wh, wp, wok := headByUnmarshal(l)
		if ok != wok || (ok && (h != wh || p != wp)) {
			t.Errorf("%s\nhead: %+v %q %v\nwant: %+v %q %v", l, h, p, ok, wh, wp, wok)
		}
	}
}

// FuzzHead: head never panics, and whatever it accepts that encoding/json
// accepts it reads the same.
func FuzzHead(f *testing.F) {
	f.Add([]byte(`{"@level":"warn","@message":"nonconforming frame","@module":"acptap.acpv2","plugin":"acpv2","frames":[3]}`))
	f.Add([]byte(`{"@level":"info","@message":"x\u00e9\"","plugin":{"a":[1,"}"]}}`))
	f.Fuzz(func(t *testing.T, p []byte) {
		h, pl, ok := head(p)
		wh, wp, wok := headByUnmarshal(p)
		if ok && wok && (h != wh || pl != wp) {
			t.Errorf("%q: head %+v %q, want %+v %q", p, h, pl, wh, wp)
		}
		if wok && !ok {
			t.Errorf("%q: encoding/json reads it, head does not", p)
		}
	})
}

// BenchmarkWrite: one diagnostic entry past its burst (what a plugin that
// diagnoses every frame costs the log once the burst is written).
func BenchmarkWrite(b *testing.B) {
	line := []byte(`{"@level":"warn","@message":"nonconforming frame: it does not conform to the official ACP schema","@module":"acptap.recorder","@timestamp":"2026-12-01T18:55:47.180581Z","detail":"mcp/message notification params: at /: missing properties 'serverId', 'requestId', 'method'","frames":[10],"plugin":"acpv2","session":""}` + "\n")
	tw := New(io.Discard)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tw.Write(line); err != nil {
			b.Fatal(err)
		}
	}
}
