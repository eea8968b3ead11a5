package otlp

import (
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/otlpcollector"
	"github.com/acptap/acptap/sdk/aep"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for _, p := range kv {
		k, v, _ := strings.Cut(p, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// TestEndpointsHonourTheOTELVariables: the OTLP exporter variables
// (endpoint, per-signal endpoint, protocol, headers, timeout, insecure,
// compression) and their precedence under acptap's settings.
func TestEndpointsHonourTheOTELVariables(t *testing.T) {
	l, tr, err := Endpoints(Settings{}, envOf())
	if err != nil || l.URL != "http://localhost:4318/v1/logs" || tr.URL != "http://localhost:4318/v1/traces" ||
		l.Protocol != ProtocolHTTP || l.Timeout != 10*time.Second {
		t.Fatalf("defaults %+v %+v %v", l, tr, err)
	}
	l, tr, err = Endpoints(Settings{}, envOf("OTEL_EXPORTER_OTLP_ENDPOINT=https://col:4318/",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=https://traces.example/v1/t", "OTEL_EXPORTER_OTLP_HEADERS=a=1,b=x%20y",
		"OTEL_EXPORTER_OTLP_LOGS_HEADERS=a=2", "OTEL_EXPORTER_OTLP_TIMEOUT=2500", "OTEL_EXPORTER_OTLP_COMPRESSION=gzip"))
	if err != nil || l.URL != "https://col:4318/v1/logs" || tr.URL != "https://traces.example/v1/t" ||
		l.Headers["a"] != "2" || tr.Headers["a"] != "1" || tr.Headers["b"] != "x y" || l.Timeout != 2500*time.Millisecond ||
		l.Compression != "gzip" {
		t.Fatalf("env %+v %+v %v", l, tr, err)
	}
	l, _, err = Endpoints(Settings{}, envOf("OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_ENDPOINT=col:4317", "OTEL_EXPORTER_OTLP_INSECURE=true"))
	if err != nil || l.Protocol != ProtocolGRPC || l.URL != "http://col:4317" || !l.Insecure {
		t.Fatalf("grpc %+v %v", l, err)
	}
	// acptap's settings win over the environment.
	l, _, err = Endpoints(Settings{Endpoint: "http://mine:9", Protocol: ProtocolGRPC, Headers: map[string]string{"a": "mine"}, Timeout: time.Second},
		envOf("OTEL_EXPORTER_OTLP_ENDPOINT=http://env:1", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_HEADERS=a=env,b=env"))
	if err != nil || l.URL != "http://mine:9" || l.Protocol != ProtocolGRPC || l.Headers["a"] != "mine" || l.Headers["b"] != "env" || l.Timeout != time.Second {
		t.Fatalf("settings %+v %v", l, err)
	}
	for _, bad := range [][]string{{"OTEL_EXPORTER_OTLP_PROTOCOL=http/json"}, {"OTEL_EXPORTER_OTLP_TIMEOUT=soon"},
		{"OTEL_EXPORTER_OTLP_HEADERS=novalue"}, {"OTEL_EXPORTER_OTLP_ENDPOINT=ftp://x"}, {"OTEL_EXPORTER_OTLP_COMPRESSION=zstd"}} {
		if _, _, err := Endpoints(Settings{}, envOf(bad...)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestGzipAndHeadersReachTheCollector: with compression gzip and headers
// set, both protocols still deliver to the real receiver; the client's
// description never shows a URL's credentials.
func TestGzipAndHeadersReachTheCollector(t *testing.T) {
	for _, protocol := range []string{ProtocolGRPC, ProtocolHTTP} {
		c := otlpcollector.Start(t)
		addr := c.HTTPAddr
		if protocol == ProtocolGRPC {
			addr = c.GRPCAddr
		}
		l, tr, err := Endpoints(Settings{Endpoint: "http://user:secret@" + addr, Protocol: protocol, Compression: "gzip",
			Headers: map[string]string{"X-Team": "acp"}}, envOf())
		if err != nil {
			t.Fatal(err)
		}
		cl, err := NewClient(l, tr)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(cl.Describe(), "secret") {
			t.Errorf("Describe() = %s", cl.Describe())
		}
		sendGolden(t, cl, aep.Metadata)
		cl.Close()
		c.Wait(t, 30*time.Second, protocol+" gzip", func(l []otlpcollector.Log, s []otlpcollector.Span) bool { return len(l) >= 60 && len(s) > 0 })
	}
}
