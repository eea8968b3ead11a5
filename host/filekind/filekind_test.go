package filekind

import (
	"strings"
	"testing"
)

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Kind
	}{
		{"", Empty},
		{"\x1f\x8b\x08\x00", Gzip},
		{`{"type":"header","format":"acptap-wire","version":1,"connection":"c"}` + "\n{}", Wire},
		{`{"type":"header","asr":"0.1","sessionId":"s"}`, ASR},
		{`{"aep":"0.1","id":"x","type":"session.started"}`, AEP},
		{`{"jsonrpc":"2.0","id":0,"method":"initialize"}`, ACPLog},
		{`[{"jsonrpc":"2.0","id":0,"method":"initialize"}]`, ACPLog},
		{`{"dir":"send","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}"}`, ACPLog},
		{`{"@level":"info","@message":"recording"}`, HostLog},
		{"hello world\n", Unknown},
		{`{"a":1}`, Unknown},
	} {
		if got := Sniff(strings.NewReader(c.in)); got != c.want {
			t.Errorf("Sniff(%.40q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestWrong(t *testing.T) {
	got := Wrong("w.jsonl", Wire, ASR).Error()
	want := "w.jsonl is a wire log, not an ASR stream; try `acptap show w.jsonl` (its frames) or `acptap rebuild w.jsonl`"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
